// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Worked cases of the policy engine, each one a row of docs/policy.md:
 * entitlements (in GiB, with 1 GiB chunks unless the case says otherwise)
 * and admission decisions with their codes. If a number changes here, it
 * changes in the document too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "policy/policy.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)
#define MAXV	4

/* One VM of a case, in GiB; max 0 means max = quota. */
struct cvm {
	uint64_t quota, min, low, max, demand;
	uint32_t weight, prio;
	uint64_t want;		/* expected entitlement, GiB */
};

struct ecase {
	const char *name;
	uint64_t vram;		/* GiB */
	int hold_spare;
	uint32_t flags;		/* expected status flags */
	int n;
	struct cvm vm[MAXV];
};

#define VM(q, mn, lo, mx, d, w, p, e) { q, mn, lo, mx, d, w, p, e }

static const struct ecase cases[] = {
	{ "1 equal split", 16, 0, VGP_F_CONTENDED, 4, {
		VM(16, 0, 0, 0, 8, 100, 0, 4), VM(16, 0, 0, 0, 8, 100, 0, 4),
		VM(16, 0, 0, 0, 8, 100, 0, 4), VM(16, 0, 0, 0, 8, 100, 0, 4) } },
	{ "2 unused share flows on", 16, 0, VGP_F_CONTENDED, 3, {
		VM(16, 0, 0, 0, 2, 100, 0, 2), VM(16, 0, 0, 0, 8, 100, 0, 7),
		VM(16, 0, 0, 0, 10, 100, 0, 7) } },
	{ "3 weights", 16, 0, VGP_F_CONTENDED, 3, {
		VM(16, 0, 0, 0, 16, 100, 0, 4), VM(16, 0, 0, 0, 16, 200, 0, 8),
		VM(16, 0, 0, 0, 16, 100, 0, 4) } },
	{ "4 remainder to the lowest index", 10, 0, VGP_F_CONTENDED, 3, {
		VM(10, 0, 0, 0, 10, 100, 0, 4), VM(10, 0, 0, 0, 10, 100, 0, 3),
		VM(10, 0, 0, 0, 10, 100, 0, 3) } },
	{ "5 min is a floor, reserved while unused", 16, 0, VGP_F_CONTENDED, 3, {
		VM(16, 6, 6, 0, 4, 100, 0, 6), VM(16, 0, 0, 0, 16, 100, 0, 5),
		VM(16, 0, 0, 0, 16, 100, 0, 5) } },
	{ "6 low protects use", 16, 0, VGP_F_CONTENDED, 2, {
		VM(16, 0, 8, 0, 8, 100, 0, 8), VM(16, 0, 0, 0, 16, 300, 0, 8) } },
	{ "7 without low the same pair splits by weight", 16, 0, VGP_F_CONTENDED, 2, {
		VM(16, 0, 0, 0, 8, 100, 0, 4), VM(16, 0, 0, 0, 16, 300, 0, 12) } },
	{ "8 low overcommitted: proportional to use below low", 16, 0,
	  VGP_F_LOW_OVERCOMMIT | VGP_F_CONTENDED, 2, {
		VM(16, 0, 12, 0, 12, 100, 0, 10), VM(16, 0, 12, 0, 8, 100, 0, 6) } },
	{ "9 max caps", 16, 0, VGP_F_CONTENDED, 2, {
		VM(16, 0, 0, 4, 16, 100, 0, 4), VM(16, 0, 0, 0, 16, 100, 0, 12) } },
	{ "10 priority classes in order", 16, 0, VGP_F_CONTENDED, 3, {
		VM(16, 0, 0, 0, 12, 100, 3, 12), VM(16, 0, 0, 0, 12, 100, 0, 2),
		VM(16, 0, 0, 0, 12, 100, 0, 2) } },
	{ "11 guarantees come before priority", 16, 0, VGP_F_CONTENDED, 2, {
		VM(16, 0, 0, 0, 16, 100, 3, 12), VM(16, 4, 4, 0, 12, 100, 0, 4) } },
	{ "12 spare VRAM becomes headroom", 16, 0, 0, 2, {
		VM(16, 0, 0, 0, 2, 100, 0, 8), VM(16, 0, 0, 0, 4, 100, 0, 8) } },
	{ "13 headroom stops at max", 16, 0, 0, 2, {
		VM(16, 0, 0, 4, 2, 100, 0, 4), VM(16, 0, 0, 0, 4, 100, 0, 12) } },
	{ "14 hold_spare: demand only", 16, 1, 0, 2, {
		VM(16, 0, 0, 0, 2, 100, 0, 2), VM(16, 0, 0, 0, 4, 100, 0, 4) } },
	{ "15 mins overcommitted, use fits", 8, 0, VGP_F_MIN_OVERCOMMIT, 2, {
		VM(8, 6, 6, 0, 6, 100, 0, 6), VM(8, 6, 6, 0, 2, 100, 0, 2) } },
	{ "16 mins overcommitted, use does not fit", 8, 0,
	  VGP_F_MIN_OVERCOMMIT | VGP_F_LOW_OVERCOMMIT | VGP_F_CONTENDED, 2, {
		VM(8, 6, 6, 0, 6, 100, 0, 4), VM(8, 6, 6, 0, 6, 100, 0, 4) } },
};

static uint8_t scratch[64 << 10] __attribute__((aligned(16)));

static void run_case(const struct ecase *c)
{
	struct vgp_gpu g = { .vram = c->vram * GiB, .chunk = GiB,
			     .oversub_pct = 100000, .host_budget = UINT64_MAX,
			     .hold_spare = c->hold_spare };
	struct vgp_vm v[MAXV];
	struct vgp_ent out[MAXV];
	struct vgp_status st;
	uint64_t sum = 0;
	int i, err;

	for (i = 0; i < c->n; i++) {
		const struct cvm *s = &c->vm[i];

		vgp_vm_init(&v[i], s->quota * GiB);
		v[i].min = s->min * GiB;
		v[i].low = s->low * GiB;
		v[i].max = (s->max ? s->max : s->quota) * GiB;
		v[i].demand = s->demand * GiB;
		v[i].weight = s->weight;
		v[i].prio = s->prio;
	}
	err = vgp_compute(&g, v, (size_t)c->n, out, scratch, sizeof(scratch), &st);
	if (err)
		fail_msg("%s: %d %s", c->name, err, st.reason);
	for (i = 0; i < c->n; i++) {
		if (out[i].bytes != c->vm[i].want * GiB)
			fail_msg("case %s: vm %d got %llu GiB, want %llu", c->name, i,
				 (unsigned long long)(out[i].bytes / GiB),
				 (unsigned long long)c->vm[i].want);
		sum += out[i].bytes;
	}
	if (st.flags != c->flags)
		fail_msg("case %s: flags %#x, want %#x", c->name, st.flags, c->flags);
	assert_int_equal(st.entitled, sum);
	assert_int_equal(st.spare, c->vram * GiB - sum);
}

static void test_worked_cases(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

/* What the guaranteed column reports: min reserved, use below low. */
static void test_guaranteed_column(void **state)
{
	struct vgp_gpu g = { .vram = 16 * GiB, .chunk = GiB, .oversub_pct = 100 };
	struct vgp_vm v[3];
	struct vgp_ent out[3];
	struct vgp_status st;

	(void)state;
	/* case 5: min 6 reserved while 4 in use; case 6: low 8 in use. */
	vgp_vm_init(&v[0], 16 * GiB);
	v[0].min = v[0].low = 6 * GiB;
	v[0].demand = 4 * GiB;
	vgp_vm_init(&v[1], 16 * GiB);
	v[1].low = 8 * GiB;
	v[1].demand = 3 * GiB;
	vgp_vm_init(&v[2], 16 * GiB);
	v[2].demand = 16 * GiB;
	assert_int_equal(vgp_compute(&g, v, 3, out, scratch, sizeof(scratch), &st), 0);
	assert_int_equal(out[0].guaranteed, 6 * GiB);	/* min, not use */
	assert_int_equal(out[1].guaranteed, 3 * GiB);	/* use below low */
	assert_int_equal(out[2].guaranteed, 0);
	/* level L: v1 max(3, min(L, 3)) = 3, v2 = L; 6 + 3 + L = 16. */
	assert_int_equal(out[0].bytes, 6 * GiB);
	assert_int_equal(out[1].bytes, 3 * GiB);
	assert_int_equal(out[2].bytes, 7 * GiB);
}

/* 2 MiB chunks: VRAM rounds down to chunks, demand up. */
static void test_chunk_rounding(void **state)
{
	struct vgp_gpu g = { .vram = GiB + MiB, .chunk = 2 * MiB,
			     .oversub_pct = 1000 };
	struct vgp_vm v[3];
	struct vgp_ent out[3];
	struct vgp_status st;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		vgp_vm_init(&v[i], 2 * GiB);
		v[i].demand = 2 * GiB;
	}
	assert_int_equal(vgp_compute(&g, v, 3, out, scratch, sizeof(scratch), &st), 0);
	/* 512 chunks / 3 = 170.67: 171, 171, 170. */
	assert_int_equal(out[0].bytes, 171 * 2 * MiB);
	assert_int_equal(out[1].bytes, 171 * 2 * MiB);
	assert_int_equal(out[2].bytes, 170 * 2 * MiB);
	assert_int_equal(st.entitled, GiB);
	assert_int_equal(st.spare, 0);

	/* One byte of demand holds a whole chunk; hold_spare shows it. */
	g.hold_spare = true;
	v[0].demand = 1;
	v[1].demand = 0;
	v[2].demand = 3 * MiB;
	assert_int_equal(vgp_compute(&g, v, 3, out, scratch, sizeof(scratch), &st), 0);
	assert_int_equal(out[0].bytes, 2 * MiB);
	assert_int_equal(out[1].bytes, 0);
	assert_int_equal(out[2].bytes, 4 * MiB);
	assert_int_equal(st.demand, 6 * MiB);
	assert_int_equal(st.spare, GiB - 6 * MiB);

	/* max not a multiple of the chunk rounds down; min and low round up. */
	g.hold_spare = false;
	v[0].max = 5 * MiB;
	v[0].min = v[0].low = 3 * MiB;
	assert_int_equal(vgp_compute(&g, v, 3, out, scratch, sizeof(scratch), &st), 0);
	assert_int_equal(out[0].bytes, 4 * MiB);
	assert_int_equal(out[0].guaranteed, 4 * MiB);
}

/* ---- admission ------------------------------------------------------------- */

struct acase {
	const char *name;
	uint64_t budget;	/* GiB */
	struct { uint64_t quota, min, max; } vm[3];	/* the third is the candidate */
	int err;
	enum vgp_code code;
	uint64_t need;		/* GiB, when admitted */
};

/* VRAM 16 GiB, oversubscription 150 %: quotas may sum to 24 GiB. */
static const struct acase acases[] = {
	{ "A1 fills the limit exactly", 8, { { 8, 0, 8 }, { 8, 0, 8 }, { 8, 0, 8 } },
	  0, VGP_OK, 8 },
	{ "A2 one GiB over the limit", 8, { { 8, 0, 8 }, { 8, 0, 8 }, { 9, 0, 9 } },
	  -ENOSPC, VGP_E_QUOTA_LIMIT, 0 },
	{ "A3 host budget short", 7, { { 8, 0, 8 }, { 8, 0, 8 }, { 8, 0, 8 } },
	  -ENOSPC, VGP_E_HOST_BUDGET, 0 },
	{ "A4 caps push memory to host RAM", 8, { { 8, 0, 4 }, { 8, 0, 4 }, { 8, 0, 4 } },
	  -ENOSPC, VGP_E_HOST_BUDGET, 0 },
	{ "A5 caps within the budget", 12, { { 8, 0, 4 }, { 8, 0, 4 }, { 8, 0, 4 } },
	  0, VGP_OK, 12 },
	{ "A6 mins exceed VRAM", 8, { { 8, 8, 8 }, { 8, 7, 8 }, { 8, 2, 8 } },
	  -ENOSPC, VGP_E_MIN_VRAM, 0 },
	{ "A7 mins fill VRAM exactly", 8, { { 8, 8, 8 }, { 8, 6, 8 }, { 8, 2, 8 } },
	  0, VGP_OK, 8 },
	{ "A8 no oversubscription needs no host RAM", 0, { { 4, 0, 4 }, { 4, 0, 4 }, { 8, 0, 8 } },
	  0, VGP_OK, 0 },
};

static void test_admission_cases(void **state)
{
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(acases) / sizeof(acases[0]); i++) {
		const struct acase *a = &acases[i];
		struct vgp_gpu g = { .vram = 16 * GiB, .chunk = 2 * MiB,
				     .oversub_pct = 150, .host_budget = a->budget * GiB };
		struct vgp_vm v[3];
		struct vgp_status st;
		int err;

		for (k = 0; k < 3; k++) {
			vgp_vm_init(&v[k], a->vm[k].quota * GiB);
			v[k].min = v[k].low = a->vm[k].min * GiB;
			v[k].max = a->vm[k].max * GiB;
		}
		err = vgp_admit(&g, v, 2, &v[2], &st);
		if (err != a->err || st.code != a->code)
			fail_msg("%s: %d %s (%s)", a->name, err,
				 vgp_code_name(st.code), st.reason);
		if (!err)
			assert_int_equal(st.host_need, a->need * GiB);
		else
			assert_int_equal(st.vm, 2);	/* the candidate is blamed */
		assert_true(strlen(st.reason) > 0);
		printf("  %-42s %-18s %s\n", a->name, vgp_code_name(st.code), st.reason);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_cases),
		cmocka_unit_test(test_guaranteed_column),
		cmocka_unit_test(test_chunk_rounding),
		cmocka_unit_test(test_admission_cases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
