// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Sparse version vectors (core/lrc/vv.c): inline -> ext growth and back,
 * entries always sorted by owner, the cached max right after every set and
 * drop (dropping or lowering the max included), is_newest, bad owners
 * refused, and an allocation failure (os_fail_alloc_after) leaving the
 * vector exactly as it was. A random walk over all 1024 owners is checked
 * against a flat array model after every step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host-module/os/os.h"
#include "host-module/core/lrc/lrc_vv.h"

#define NOWN	VG_LRC_OWNERS_MAX

/* A flat model: ver[o] of every owner, 0 = no entry. */
struct model {
	u32 ver[NOWN];
};

struct snap {
	u32 nr, max;
	size_t ext;
	struct vg_vv_ent e[NOWN];
};

static struct model M;
static struct snap S0, S1;

static u64 rs;
/* Set while shrinks are made to fail: ext may then stay oversized. */
static bool loose_ext;

static u32 rnd(u32 bound)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (u32)(rs % bound);
}

static void take(const struct vg_vv *vv, struct snap *s)
{
	u32 i;

	memset(s, 0, sizeof(*s));
	s->nr = vg_vv_count(vv);
	s->max = vg_vv_max(vv);
	s->ext = vg_vv_ext_bytes(vv);
	for (i = 0; vg_vv_at(vv, i, &s->e[i]); i++)
		;
	assert_int_equal(i, s->nr);
}

static bool same(const struct snap *a, const struct snap *b)
{
	u32 i;

	if (a->nr != b->nr || a->max != b->max || a->ext != b->ext)
		return false;
	for (i = 0; i < a->nr; i++)
		if (a->e[i].owner != b->e[i].owner || a->e[i].ver != b->e[i].ver)
			return false;
	return true;
}

/* Everything the vector reports agrees with the model. */
static void check(const struct vg_vv *vv, const struct model *m)
{
	u32 o, n = 0, mx = 0, i = 0;
	struct vg_vv_ent e;

	for (o = 0; o < NOWN; o++) {
		if (!m->ver[o])
			continue;
		n++;
		mx = m->ver[o] > mx ? m->ver[o] : mx;
		/* iteration yields exactly the model's owners, ascending */
		assert_true(vg_vv_at(vv, i, &e));
		assert_int_equal(e.owner, o);
		assert_int_equal(e.ver, m->ver[o]);
		i++;
	}
	assert_false(vg_vv_at(vv, i, &e));
	assert_int_equal(vg_vv_count(vv), n);
	assert_int_equal(vg_vv_max(vv), mx);
	for (o = 0; o < NOWN; o++) {
		assert_int_equal(vg_vv_get(vv, (u16)o), m->ver[o]);
		assert_int_equal(vg_vv_is_newest(vv, (u16)o),
				 mx && m->ver[o] == mx);
	}
	/* inline while it fits, never more than 4x the entries when ext */
	if (n <= VG_VV_INLINE)
		assert_int_equal(vg_vv_ext_bytes(vv), 0);
	else
		assert_true(vg_vv_ext_bytes(vv) >= n * sizeof(struct vg_vv_ent) &&
			    (loose_ext ||
			     vg_vv_ext_bytes(vv) <= 4 * n * sizeof(struct vg_vv_ent)));
}

static void set_ok(struct vg_vv *vv, struct model *m, u16 o, u32 ver)
{
	assert_int_equal(vg_vv_set(vv, o, ver), 0);
	m->ver[o] = ver;
}

static void test_empty_and_basic(void **state)
{
	struct vg_vv vv;

	(void)state;
	memset(&M, 0, sizeof(M));
	vg_vv_init(&vv);
	check(&vv, &M);
	assert_false(vg_vv_is_newest(&vv, VG_LRC_OWNER_CPU));

	set_ok(&vv, &M, VG_LRC_OWNER_STORAGE, 1);
	check(&vv, &M);
	assert_true(vg_vv_is_newest(&vv, VG_LRC_OWNER_STORAGE));
	assert_false(vg_vv_is_newest(&vv, VG_LRC_OWNER_CPU));
	set_ok(&vv, &M, VG_LRC_OWNER_CPU, 1);
	check(&vv, &M);
	assert_true(vg_vv_is_newest(&vv, VG_LRC_OWNER_CPU));
	/* a GPU releases version 2: only it is newest */
	set_ok(&vv, &M, VG_LRC_OWNER_GPU0 + 5, 2);
	check(&vv, &M);
	assert_false(vg_vv_is_newest(&vv, VG_LRC_OWNER_CPU));
	assert_true(vg_vv_is_newest(&vv, VG_LRC_OWNER_GPU0 + 5));
	/* dropping an owner that has no entry changes nothing */
	take(&vv, &S0);
	assert_int_equal(vg_vv_set(&vv, 77, 0), 0);
	take(&vv, &S1);
	assert_true(same(&S0, &S1));
	vg_vv_fini(&vv);
	assert_int_equal(vg_vv_count(&vv), 0);
	assert_int_equal(vg_vv_ext_bytes(&vv), 0);
}

static void test_grow_shrink_sorted(void **state)
{
	static const u16 order[] = { 900, 3, 512, 0, 1023, 64, 1, 2, 700, 40 };
	struct vg_vv vv;
	u32 i;

	(void)state;
	memset(&M, 0, sizeof(M));
	vg_vv_init(&vv);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		set_ok(&vv, &M, order[i], 10 + i);
		check(&vv, &M);
		if (i < VG_VV_INLINE)
			assert_int_equal(vg_vv_ext_bytes(&vv), 0);
		else
			assert_true(vg_vv_ext_bytes(&vv) > 0);
	}
	/* drop back down: returns inline with the two survivors intact */
	for (i = 0; i + VG_VV_INLINE < ARRAY_SIZE(order); i++) {
		set_ok(&vv, &M, order[i], 0);
		check(&vv, &M);
	}
	assert_int_equal(vg_vv_ext_bytes(&vv), 0);
	assert_int_equal(vg_vv_get(&vv, 700), 18);
	assert_int_equal(vg_vv_get(&vv, 40), 19);
	/* and grows again */
	set_ok(&vv, &M, 5, 3);
	check(&vv, &M);
	assert_true(vg_vv_ext_bytes(&vv) > 0);
	vg_vv_fini(&vv);
}

static void test_max_maintained(void **state)
{
	struct vg_vv vv;
	u16 o;

	(void)state;
	memset(&M, 0, sizeof(M));
	vg_vv_init(&vv);
	for (o = 0; o < 8; o++)
		set_ok(&vv, &M, o * 3, 100 + o);
	check(&vv, &M);
	assert_int_equal(vg_vv_max(&vv), 107);
	/* drop the max: the next largest takes over */
	set_ok(&vv, &M, 21, 0);
	check(&vv, &M);
	assert_int_equal(vg_vv_max(&vv), 106);
	/* lower the max owner's version below others */
	set_ok(&vv, &M, 18, 1);
	check(&vv, &M);
	assert_int_equal(vg_vv_max(&vv), 105);
	/* two owners at the max: both newest; drop one, the other stays */
	set_ok(&vv, &M, 0, 105);
	check(&vv, &M);
	assert_true(vg_vv_is_newest(&vv, 0));
	assert_true(vg_vv_is_newest(&vv, 15));
	set_ok(&vv, &M, 15, 0);
	check(&vv, &M);
	assert_int_equal(vg_vv_max(&vv), 105);
	assert_true(vg_vv_is_newest(&vv, 0));
	/* drop everything: max back to 0, nobody newest */
	for (o = 0; o < 8; o++)
		set_ok(&vv, &M, o * 3, 0);
	check(&vv, &M);
	assert_int_equal(vg_vv_max(&vv), 0);
	vg_vv_fini(&vv);
}

static void test_bad_owner(void **state)
{
	struct vg_vv vv;

	(void)state;
	vg_vv_init(&vv);
	assert_int_equal(vg_vv_set(&vv, 4, 9), 0);
	take(&vv, &S0);
	assert_int_equal(vg_vv_set(&vv, NOWN, 1), -EINVAL);
	assert_int_equal(vg_vv_set(&vv, 0xffff, 1), -EINVAL);
	assert_int_equal(vg_vv_set(&vv, 0xffff, 0), -EINVAL);
	take(&vv, &S1);
	assert_true(same(&S0, &S1));
	assert_int_equal(vg_vv_get(&vv, 0xffff), 0);
	assert_false(vg_vv_is_newest(&vv, 0xffff));
	vg_vv_fini(&vv);
}

/*
 * Growth at every capacity step fails once under fault injection and
 * leaves the vector as it was; the retry succeeds. Drops never fail, even
 * when the shrink's allocation does.
 */
static void test_enomem_changes_nothing(void **state)
{
	struct vg_vv vv;
	u32 o, grows = 0;

	(void)state;
	memset(&M, 0, sizeof(M));
	vg_vv_init(&vv);
	for (o = 0; o < NOWN; o++) {
		size_t ext = vg_vv_ext_bytes(&vv);
		unsigned long f = os_alloc_failures();
		int ret;

		take(&vv, &S0);
		os_fail_alloc_after(0);
		ret = vg_vv_set(&vv, (u16)(NOWN - 1 - o), o + 1);
		os_fail_alloc_after(-1);
		if (ret) {
			/* only a full vector allocates */
			assert_int_equal(ret, -ENOMEM);
			assert_int_equal(os_alloc_failures(), f + 1);
			assert_int_equal(S0.nr * sizeof(struct vg_vv_ent),
					 ext ? ext : VG_VV_INLINE * sizeof(struct vg_vv_ent));
			take(&vv, &S1);
			assert_true(same(&S0, &S1));
			check(&vv, &M);
			grows++;
			set_ok(&vv, &M, (u16)(NOWN - 1 - o), o + 1);
		} else {
			M.ver[NOWN - 1 - o] = o + 1;
		}
		if ((o & 63) == 0 || o == NOWN - 1)
			check(&vv, &M);
	}
	/* inline 2 -> 4 -> 8 ... -> 1024: nine growths */
	assert_int_equal(grows, 9);
	check(&vv, &M);

	/* drop all but a few under failing allocations: drops still work */
	loose_ext = true;
	for (o = 0; o < NOWN - 3; o++) {
		os_fail_alloc_after(0);
		assert_int_equal(vg_vv_set(&vv, (u16)o, 0), 0);
		os_fail_alloc_after(-1);
		M.ver[o] = 0;
		if ((o & 127) == 0)
			check(&vv, &M);
	}
	check(&vv, &M);
	loose_ext = false;
	/* 3 entries: the largest version (owner 0's 1024) was dropped */
	assert_int_equal(vg_vv_max(&vv), 3);
	set_ok(&vv, &M, NOWN - 1, 0);
	check(&vv, &M);
	assert_int_equal(vg_vv_ext_bytes(&vv), 0);
	vg_vv_fini(&vv);
}

/* A random walk over all 1024 owners against the model. */
static void test_random_vs_model(void **state)
{
	struct vg_vv vv;
	u32 step;

	(void)state;
	rs = 0x1234567;
	memset(&M, 0, sizeof(M));
	vg_vv_init(&vv);
	for (step = 0; step < 60000; step++) {
		/* phases: grow towards all owners, then shrink towards few */
		bool growing = (step / 10000) % 2 == 0;
		u16 o = (u16)rnd(NOWN);
		u32 ver;

		if (rnd(100) < (growing ? 80u : 15u))
			ver = 1 + rnd(step + 1);
		else
			ver = 0;
		/* sometimes hit the current max holder */
		if (rnd(10) == 0) {
			u32 k;

			for (k = 0; k < NOWN; k++)
				if (M.ver[k] && M.ver[k] == vg_vv_max(&vv)) {
					o = (u16)k;
					break;
				}
		}
		set_ok(&vv, &M, o, ver);
		if (step % 97 == 0)
			check(&vv, &M);
		else
			assert_int_equal(vg_vv_get(&vv, o), ver);
	}
	check(&vv, &M);
	vg_vv_fini(&vv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_basic),
		cmocka_unit_test(test_grow_shrink_sorted),
		cmocka_unit_test(test_max_maintained),
		cmocka_unit_test(test_bad_owner),
		cmocka_unit_test(test_enomem_changes_nothing),
		cmocka_unit_test(test_random_vs_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
