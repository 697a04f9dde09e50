// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The reducer: which VM gives up VRAM (the one most above its entitlement,
 * the requester included when its new BO makes it so, ties to the oldest
 * VM) and which of its chunks (RANDOM, LRA, COLD), new-BO chunks going to
 * host RAM without a copy, fairness between leaking VMs, explicit
 * entitlements, and the max-heap's greedy invariant at 1000 VMs. COLD
 * chooses across VMs: the coldest chunk of any VM above its entitlement.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CH	(64 * KiB)
#define VRAM	(16 * CH)

static void test_victim_most_above(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1, *v2;
	int p;

	(void)state;
	for (p = 0; p < VG_POLICY_NR; p++) {
		cfx_init(&f, VRAM, CH, p);
		v0 = cfx_vm(&f, "v0");
		v1 = cfx_vm(&f, "v1");
		v2 = cfx_vm(&f, "v2");
		cfx_alloc(v0, 10 * CH);
		cfx_alloc(v1, 4 * CH);
		cfx_alloc(v2, 2 * CH);
		/* Shares are 16/3 chunks: v0 is 4.7 above, v2 would be 2.3 below. */
		cfx_alloc(v2, CH);
		assert_int_equal(cfx_stats(v0).resident, 9 * CH);
		assert_int_equal(cfx_stats(v0).relocated, CH);
		assert_int_equal(cfx_stats(v1).resident, 4 * CH);
		assert_int_equal(cfx_stats(v2).resident, 3 * CH);
		/* Two chunks at once: still v0 (4.7 - 1 > -0.3). */
		cfx_alloc(v1, 2 * CH);
		assert_int_equal(cfx_stats(v0).resident, 7 * CH);
		assert_int_equal(cfx_stats(v1).resident, 6 * CH);
		assert_int_equal(vg_gpu_check(f.gpu), 0);
		cfx_fini(&f);
	}
}

static void test_tie_goes_to_oldest(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1, *v2;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	v2 = cfx_vm(&f, "v2");
	cfx_alloc(v1, 8 * CH);
	cfx_alloc(v0, 8 * CH);
	cfx_alloc(v2, CH);
	assert_int_equal(cfx_stats(v0).resident, 7 * CH);
	assert_int_equal(cfx_stats(v1).resident, 8 * CH);
	/* Now v1 is above v0: it goes next, then they alternate. */
	cfx_alloc(v2, CH);
	assert_int_equal(cfx_stats(v1).resident, 7 * CH);
	cfx_alloc(v2, CH);
	assert_int_equal(cfx_stats(v0).resident, 6 * CH);
	assert_int_equal(cfx_stats(v1).resident, 7 * CH);
	cfx_fini(&f);
}

static void set_heat(struct vg_vm *vm, u64 va, u64 access)
{
	struct vg_bo *bo = cfx_bo(vm, va);
	u32 i;

	assert_non_null(bo);
	for (i = 0; i < bo->nr_chunks; i++)
		if (bo->chunks[i].loc == VG_LOC_VRAM)
			fake_set_access(bo->chunks[i].mem, access);
}

/*
 * v1's new BO pushes it above its share while v0 is exactly at its own:
 * v1 gives up its own memory. It has nothing resident, so the new BO's
 * chunks go to host RAM directly, and nothing is copied. (COLD takes a
 * requester's resident chunks before its new BO's, which it is about to
 * use and no sample has seen; an earlier version of this test had v1's
 * resident chunks hot and expected the new ones to go first.)
 */
static void test_requester_victim_new_chunks_no_copy(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1;
	u64 va0, vn;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	assert_int_equal(vg_vm_set_entitlement(v0, 12 * CH), 0);
	va0 = cfx_alloc(v0, 12 * CH);
	set_heat(v0, va0, 0);
	fake_reset_counts(f.fb);
	/* v1's share is 4 chunks, 4 are free: 4 chunks and a page go. */
	vn = cfx_alloc(v1, 8 * CH + 4096);
	assert_int_equal(cfx_nloc(v1, vn, VG_LOC_HOST), 5);
	assert_int_equal(cfx_nloc(v0, va0, VG_LOC_VRAM), 12);
	assert_int_equal(fake_count(f.fb, FAKE_OP_COPY_SUBMIT), 0);
	assert_int_equal(fake_bytes_copied(f.fb), 0);
	assert_int_equal(fake_count(f.fb, FAKE_OP_MEM_ALLOC_HOST), 5);
	assert_int_equal(cfx_stats(v1).relocated, 4 * CH + 4096);
	assert_int_equal(cfx_stats(v1).reloc_out_chunks, 0);
	assert_int_equal(vg_gpu_check(f.gpu), 0);

	/* The BO works from host RAM: every page is reachable. */
	{
		u64 off, w, r;

		for (off = 0; off < 8 * CH + 4096; off += 4096) {
			w = off ^ 0x5555;
			assert_int_equal(fake_va_rw(f.fb, v1->as, vn + off, &w,
						    8, true), 0);
			assert_int_equal(fake_va_rw(f.fb, v1->as, vn + off, &r,
						    8, false), 0);
			assert_int_equal(r, w);
		}
	}
	cfx_fini(&f);
}

/* LRA on the requester: its oldest chunks go (copied), v0 is untouched. */
static void test_requester_victim_lra(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1;
	u64 va0, va1, vn;
	enum vg_loc locs[8];
	u32 n, i;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	va0 = cfx_alloc(v0, 8 * CH);
	va1 = cfx_alloc(v1, 8 * CH);
	vn = cfx_alloc(v1, 3 * CH);
	assert_int_equal(cfx_nloc(v0, va0, VG_LOC_VRAM), 8);
	assert_int_equal(vg_bo_query(v1, va1, locs, 8, &n), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(locs[i], i < 3 ? VG_LOC_HOST : VG_LOC_VRAM);
	assert_int_equal(cfx_nloc(v1, vn, VG_LOC_VRAM), 3);
	assert_int_equal(fake_bytes_copied(f.fb), 3 * CH);
	assert_int_equal(cfx_stats(v1).reloc_out_chunks, 3);
	cfx_fini(&f);
}

static void test_lra_oldest(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1;
	u64 a, b, c;
	enum vg_loc locs[8];
	u32 n;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	a = cfx_alloc(v0, 4 * CH);
	cfx_alloc(v1, 8 * CH);
	b = cfx_alloc(v0, 4 * CH);
	/* v0 at 8 + 2 new: above v1; its two oldest chunks are a's first. */
	c = cfx_alloc(v0, 2 * CH);
	assert_int_equal(vg_bo_query(v0, a, locs, 8, &n), 0);
	assert_int_equal(locs[0], VG_LOC_HOST);
	assert_int_equal(locs[1], VG_LOC_HOST);
	assert_int_equal(locs[2], VG_LOC_VRAM);
	assert_int_equal(cfx_nloc(v0, b, VG_LOC_VRAM), 4);
	assert_int_equal(cfx_nloc(v0, c, VG_LOC_VRAM), 2);
	/* Next time the oldest resident ones are a[2], a[3]. */
	c = cfx_alloc(v0, 2 * CH);
	assert_int_equal(cfx_nloc(v0, a, VG_LOC_HOST), 4);
	assert_int_equal(cfx_nloc(v0, b, VG_LOC_VRAM), 4);
	cfx_fini(&f);
}

static void test_cold_lowest(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1, *v2;
	struct vg_bo *bo;
	u64 a, b;
	enum vg_loc locs[10];
	u32 n, i;
	static const u64 access[10] = { 9, 3, 7, 1, 8, 2, 6, 5, 10, 11 };

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	v2 = cfx_vm(&f, "v2");
	a = cfx_alloc(v0, 10 * CH);
	b = cfx_alloc(v1, 6 * CH);
	bo = cfx_bo(v0, a);
	for (i = 0; i < 10; i++)
		fake_set_access(bo->chunks[i].mem, access[i]);
	/*
	 * v1 is above its share too (6 > 16/3), but hotter than anything of
	 * v0 in every sample below (100, then 25): only v0's chunks go.
	 */
	set_heat(v1, b, 100);
	/* v0's coldest, 3 (1) and 5 (2), go for v2's BO. */
	cfx_alloc(v2, 2 * CH);
	assert_int_equal(vg_bo_query(v0, a, locs, 10, &n), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(locs[i], (i == 3 || i == 5) ? VG_LOC_HOST :
				 VG_LOC_VRAM);
	assert_int_equal(cfx_nloc(v1, b, VG_LOC_VRAM), 6);
	/*
	 * The reducer adds what it samples but does not age heat (only the
	 * return worker's rounds do, vg_sample_heat()), and nothing touched
	 * a since: 9 3 7 - 8 - 6 5 10 11 stay; chunk 1 goes. (An earlier
	 * reducer aged heat on every call, so heat decayed with the rate of
	 * allocations; this test then expected the halved values.)
	 */
	cfx_alloc(v2, CH);
	assert_int_equal(vg_bo_query(v0, a, locs, 10, &n), 0);
	assert_int_equal(locs[1], VG_LOC_HOST);
	assert_int_equal(cfx_nloc(v0, a, VG_LOC_HOST), 3);
	/*
	 * Two ageing rounds: 2 - 1 - 2 - 1 1 2 2 for 0 2 4 6 7 8 9 (v1's
	 * 100 become 25). None was touched since the first sample, so the
	 * three at 1 tie; placement order breaks it: 2 and 6 go, 7 stays.
	 */
	mutex_lock(&f.gpu->lock);
	vg_sample_heat(f.gpu);
	vg_sample_heat(f.gpu);
	mutex_unlock(&f.gpu->lock);
	cfx_alloc(v2, 2 * CH);
	assert_int_equal(vg_bo_query(v0, a, locs, 10, &n), 0);
	assert_int_equal(locs[2], VG_LOC_HOST);
	assert_int_equal(locs[6], VG_LOC_HOST);
	assert_int_equal(locs[7], VG_LOC_VRAM);
	assert_int_equal(cfx_nloc(v0, a, VG_LOC_HOST), 5);
	cfx_fini(&f);
}

/*
 * COLD across VMs: the coldest chunk of any VM above its entitlement goes
 * first, however little above it is; once at its entitlement it is no
 * victim while another VM is above, and a VM below is never one, however
 * cold its chunks. (GPUswap's rule would take both chunks from v0, the
 * VM most above.)
 */
static void test_cold_global(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1, *v2, *v3;
	u64 a;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	v2 = cfx_vm(&f, "v2");
	v3 = cfx_vm(&f, "v3");
	/* Shares are 4 chunks: v0 4 above (hot), v1 1 above, v2 2 below. */
	a = cfx_alloc(v0, 8 * CH);
	set_heat(v0, a, 50);
	cfx_alloc(v1, 5 * CH);
	cfx_alloc(v2, 2 * CH);
	/* One chunk free; v3 needs 3: v1's cold one, then v0's. */
	cfx_alloc(v3, 3 * CH);
	assert_int_equal(cfx_stats(v0).relocated, CH);
	assert_int_equal(cfx_stats(v1).relocated, CH);
	assert_int_equal(cfx_stats(v2).relocated, 0);
	assert_int_equal(cfx_stats(v2).resident, 2 * CH);
	assert_int_equal(cfx_stats(v3).resident, 3 * CH);
	/* v1 is at its share now: the next chunks are v0's, hot as they are. */
	cfx_alloc(v3, CH);
	assert_int_equal(cfx_stats(v0).relocated, 2 * CH);
	assert_int_equal(cfx_stats(v1).relocated, CH);
	assert_int_equal(cfx_stats(v2).relocated, 0);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

/*
 * COLD: a VM past its profile (vg_vm_past_profile(): it holds more than
 * it was sold) gives first, however hot its memory, and only while it is
 * above its entitlement. Shares are 16/3 chunks: v0 was sold 4 and holds
 * 7 it reads (heat 100), v1 holds 7 nobody reads, within no profile. v2's
 * 4 chunks need 2 of theirs: v0's go (before: v1's, the coldest). v0,
 * still past its profile, is at 5 below its share then: v2's next chunk
 * comes from v1 or v2, never from v0.
 */
static void test_cold_past_profile_first(void **state)
{
	struct vg_vm_config c0 = { .name = "v0", .profile = 4 * CH };
	struct cfx f;
	struct vg_vm *v0, *v1, *v2;
	u64 a;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	v0 = cfx_vm_cfg(&f, &c0);
	v1 = cfx_vm(&f, "v1");
	v2 = cfx_vm(&f, "v2");
	a = cfx_alloc(v0, 7 * CH);
	set_heat(v0, a, 100);
	cfx_alloc(v1, 7 * CH);
	cfx_alloc(v2, 4 * CH);
	assert_int_equal(cfx_stats(v0).relocated, 2 * CH);
	assert_int_equal(cfx_stats(v1).relocated, 0);
	assert_int_equal(cfx_stats(v2).resident, 4 * CH);
	cfx_alloc(v2, CH);
	assert_int_equal(cfx_stats(v0).relocated, 2 * CH);
	assert_int_equal(cfx_stats(v0).resident, 5 * CH);
	assert_int_equal(cfx_stats(v1).relocated + cfx_stats(v2).relocated, CH);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

/* White box: c last seen in round touched, and with what period. */
static void set_seen(struct vg_chunk *c, u32 touched, u16 period)
{
	c->touched = touched;
	c->period = period;
	c->period_whole = period != 0;
}

/*
 * COLD: a chunk expected back whole after its idle spell (a checkpoint
 * between two writes: vg_chunk_expected()) goes after the idle memory
 * nobody is expected to use, although it has been idle longer, and
 * before memory used in the last two rounds; among expected chunks the
 * one due last goes first. One used in this round is not taken for
 * expected, whatever its period says (an inference server's model in a
 * burst: used again next round). Round 10; v0's chunks: 0 expected,
 * due at 12; 1 expected, due at 14; 2 idle since 7; 3 used now, period
 * 5; 4-9 used now, less than 3. v1 (above its share by a little) reads
 * all of its memory. Four allocations of v2 take 2, 1, 0 and 4. (Before,
 * 0, 1 and 2 went in the order they were last used, and the checkpoint
 * due next went first.)
 */
static void test_cold_expected_after_idle(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1, *v2;
	struct vg_bo *bo;
	enum vg_loc locs[10];
	u64 a, b;
	u32 n, i;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	v2 = cfx_vm(&f, "v2");
	a = cfx_alloc(v0, 10 * CH);
	b = cfx_alloc(v1, 6 * CH);
	bo = cfx_bo(v0, a);
	mutex_lock(&f.gpu->lock);
	f.gpu->heat_clock = 10;
	set_seen(&bo->chunks[0], 4, 8);
	set_seen(&bo->chunks[1], 6, 8);
	set_seen(&bo->chunks[2], 7, 0);
	set_seen(&bo->chunks[3], 10, 5);
	for (i = 4; i < 10; i++)
		set_seen(&bo->chunks[i], 10, 0);
	for (i = 0; i < cfx_bo(v1, b)->nr_chunks; i++)
		set_seen(&cfx_bo(v1, b)->chunks[i], 10, 0);
	fake_set_access(bo->chunks[3].mem, 100);
	for (i = 4; i < 10; i++)
		fake_set_access(bo->chunks[i].mem, 50);
	mutex_unlock(&f.gpu->lock);
	set_heat(v1, b, 100);
	for (i = 0; i < 4; i++) {
		static const u32 order[4] = { 2, 1, 0, 4 };
		u32 k;

		cfx_alloc(v2, CH);
		assert_int_equal(vg_bo_query(v0, a, locs, 10, &n), 0);
		for (k = 0; k <= i; k++)
			assert_int_equal(locs[order[k]], VG_LOC_HOST);
		assert_int_equal(cfx_nloc(v0, a, VG_LOC_HOST), i + 1);
	}
	assert_int_equal(cfx_nloc(v1, b, VG_LOC_VRAM), 6);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

/* Heat 0 everywhere (no sampling): COLD is LRA with new-BO chunks last. */
static void test_cold_without_sampling(void **state)
{
	struct vg_gpu_ops ops = fake_ops_without_sampling();
	struct cfx_opts o = { .vram = VRAM, .chunk = CH,
			      .policy = VG_POLICY_COLD, .seed = 1,
			      .ops = &ops };
	struct cfx f;
	struct vg_vm *v0, *v1;
	u64 a, c;
	enum vg_loc locs[8];
	u32 n;

	(void)state;
	cfx_init_opts(&f, &o);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	a = cfx_alloc(v0, 8 * CH);
	cfx_alloc(v1, 8 * CH);
	c = cfx_alloc(v0, 2 * CH);
	assert_int_equal(vg_bo_query(v0, a, locs, 8, &n), 0);
	assert_int_equal(locs[0], VG_LOC_HOST);
	assert_int_equal(locs[1], VG_LOC_HOST);
	assert_int_equal(cfx_nloc(v0, a, VG_LOC_HOST), 2);
	assert_int_equal(cfx_nloc(v0, c, VG_LOC_VRAM), 2);
	assert_int_equal(fake_count(f.fb, FAKE_OP_SAMPLE_ACCESS), 0);
	cfx_fini(&f);
}

static void test_sample_heat_decay(void **state)
{
	struct cfx f;
	struct vg_vm *v0;
	struct vg_bo *bo;
	u64 a;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	v0 = cfx_vm(&f, "v0");
	a = cfx_alloc(v0, 2 * CH);
	bo = cfx_bo(v0, a);
	fake_set_access(bo->chunks[0].mem, 8);
	mutex_lock(&f.gpu->lock);
	vg_sample_heat(f.gpu);
	assert_int_equal(bo->chunks[0].heat, 8);
	assert_int_equal(bo->chunks[1].heat, 0);
	vg_sample_heat(f.gpu);
	assert_int_equal(bo->chunks[0].heat, 4);
	fake_set_access(bo->chunks[0].mem, 2);
	fake_set_access(bo->chunks[1].mem, 3);
	vg_sample_heat(f.gpu);
	assert_int_equal(bo->chunks[0].heat, 4);
	assert_int_equal(bo->chunks[1].heat, 3);
	mutex_unlock(&f.gpu->lock);
	cfx_fini(&f);
}

/* Locations of every chunk of every BO of the VMs, as one string. */
static void locmap(struct cfx *f, char *out, size_t len)
{
	struct vg_bo *bo;
	size_t k = 0;
	u32 v, i;

	for (v = 0; v < f->nvm; v++)
		list_for_each_entry(bo, &f->vm[v]->bos, node)
			for (i = 0; i < bo->nr_chunks && k + 1 < len; i++)
				out[k++] = bo->chunks[i].loc == VG_LOC_VRAM ?
					   'v' : 'h';
	out[k] = 0;
}

static void random_run(u64 seed, char *out, size_t len)
{
	struct cfx_opts o = { .vram = VRAM, .chunk = CH,
			      .policy = VG_POLICY_RANDOM, .seed = seed };
	struct cfx f;
	struct vg_vm *v0, *v1, *v2;
	u64 a, b, c;

	cfx_init_opts(&f, &o);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	v2 = cfx_vm(&f, "v2");
	a = cfx_alloc(v0, 6 * CH);
	b = cfx_alloc(v1, 10 * CH);
	/* v1 is the only one above its share long enough: 4 chunks. */
	c = cfx_alloc(v2, 4 * CH);
	assert_int_equal(cfx_nloc(v0, a, VG_LOC_VRAM), 6);
	assert_int_equal(cfx_nloc(v1, b, VG_LOC_HOST), 4);
	assert_int_equal(cfx_nloc(v2, c, VG_LOC_VRAM), 4);
	locmap(&f, out, len);
	cfx_fini(&f);
}

static void test_random_victim_only_and_deterministic(void **state)
{
	char m1[64], m2[64], m[64];
	bool varied = false;
	u64 seed;

	(void)state;
	random_run(42, m1, sizeof(m1));
	random_run(42, m2, sizeof(m2));
	assert_string_equal(m1, m2);
	/* A different seed picks other chunks (for some of these seeds). */
	for (seed = 1; seed <= 8; seed++) {
		random_run(seed, m, sizeof(m));
		varied |= strcmp(m, m1) != 0;
	}
	assert_true(varied);
}

/*
 * Random over the requester: new-BO chunks compete with its resident ones
 * in proportion; only the requester loses memory.
 */
static void test_random_requester(void **state)
{
	struct cfx_opts o = { .vram = VRAM, .chunk = CH,
			      .policy = VG_POLICY_RANDOM, .seed = 7 };
	struct cfx f;
	struct vg_vm *v0, *v1;
	u64 a, b, c;

	(void)state;
	cfx_init_opts(&f, &o);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	a = cfx_alloc(v0, 8 * CH);
	b = cfx_alloc(v1, 8 * CH);
	c = cfx_alloc(v1, 6 * CH);
	assert_int_equal(cfx_nloc(v0, a, VG_LOC_VRAM), 8);
	assert_int_equal(cfx_nloc(v1, b, VG_LOC_HOST) +
			 cfx_nloc(v1, c, VG_LOC_HOST), 6);
	/* Copies only for the old chunks it picked. */
	assert_int_equal(fake_bytes_copied(f.fb),
			 cfx_nloc(v1, b, VG_LOC_HOST) * CH);
	cfx_fini(&f);
}

/* Two VMs leak one chunk at a time; the second starts when VRAM is full. */
static void leakers(enum vg_chunk_policy p, u64 e0, u64 e1, u64 want0,
		    u64 want1)
{
	struct cfx f;
	struct vg_vm *v0, *v1;
	s64 d0, d1;
	u32 i;

	cfx_init(&f, VRAM, CH, p);
	v0 = cfx_vm(&f, "v0");
	v1 = cfx_vm(&f, "v1");
	if (e0)
		assert_int_equal(vg_vm_set_entitlement(v0, e0), 0);
	if (e1)
		assert_int_equal(vg_vm_set_entitlement(v1, e1), 0);
	for (i = 0; i < 20; i++)
		cfx_alloc(v0, CH);
	for (i = 0; i < 40; i++) {
		cfx_alloc(v1, CH);
		cfx_alloc(v0, CH);
		assert_int_equal(vg_gpu_check(f.gpu), 0);
	}
	d0 = (s64)cfx_stats(v0).resident - (s64)want0;
	d1 = (s64)cfx_stats(v1).resident - (s64)want1;
	print_message("policy %s: v0 %lld v1 %lld chunks\n", vg_policy_name(p),
		      (long long)(cfx_stats(v0).resident / CH),
		      (long long)(cfx_stats(v1).resident / CH));
	assert_true(d0 <= (s64)CH && d0 >= -(s64)CH);
	assert_true(d1 <= (s64)CH && d1 >= -(s64)CH);
	assert_int_equal(cfx_stats(v0).resident + cfx_stats(v1).resident,
			 VRAM);
	cfx_fini(&f);
}

static void test_fair_equal(void **state)
{
	int p;

	(void)state;
	for (p = 0; p < VG_POLICY_NR; p++)
		leakers(p, 0, 0, VRAM / 2, VRAM / 2);
}

static void test_fair_explicit(void **state)
{
	int p;

	(void)state;
	for (p = 0; p < VG_POLICY_NR; p++) {
		leakers(p, 12 * CH, 4 * CH, 12 * CH, 4 * CH);
		/* One explicit: the other gets the rest. */
		leakers(p, 0, 5 * CH, 11 * CH, 5 * CH);
	}
}

/* Two VMs under LRA holding 5 and 3 chunks: all of VRAM there is to take. */
static void two_vms(struct cfx *f, struct vg_vm **v0, struct vg_vm **v1)
{
	cfx_init(f, VRAM, CH, VG_POLICY_LRA);
	*v0 = cfx_vm(f, "v0");
	*v1 = cfx_vm(f, "v1");
	cfx_alloc(*v0, 5 * CH);
	cfx_alloc(*v1, 3 * CH);
}

static void test_reduce_not_enough(void **state)
{
	struct vg_plan plan;
	struct cfx f;
	struct vg_vm *v0, *v1;

	(void)state;
	two_vms(&f, &v0, &v1);
	mutex_lock(&f.gpu->lock);
	assert_int_equal(vg_reduce(f.gpu, v0, NULL, 9 * CH, &plan), -ENOMEM);
	assert_true(list_empty(&v0->marked) && list_empty(&v1->marked));
	assert_int_equal(v0->marked_bytes + v1->marked_bytes, 0);
	assert_int_equal(vg_plan_host_bytes(&plan), 0);
	assert_int_equal(vg_reduce(f.gpu, v0, NULL, 0, &plan), 0);
	assert_int_equal(vg_plan_host_bytes(&plan), 0);
	/* Exactly everything is enough. */
	assert_int_equal(vg_reduce(f.gpu, v0, NULL, 8 * CH, &plan), 0);
	assert_int_equal(v0->marked_bytes + v1->marked_bytes, 8 * CH);
	/* The plan says what the marks say. */
	assert_int_equal(plan.move_bytes, 8 * CH);
	assert_int_equal(plan.new_host_bytes, 0);
	assert_null(plan.newbo);
	vg_unmark_all(v0);
	vg_unmark_all(v1);
	mutex_unlock(&f.gpu->lock);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

/*
 * A plan is what the marks are: checked once against the host budget
 * (exactly the budget fits, a byte more does not, nothing changes either
 * way), cancelled without a mark left.
 */
static void test_plan_check_and_cancel(void **state)
{
	struct vg_plan plan;
	struct cfx f;
	struct vg_vm *v0, *v1;

	(void)state;
	two_vms(&f, &v0, &v1);
	mutex_lock(&f.gpu->lock);
	assert_int_equal(vg_reduce(f.gpu, v1, NULL, 3 * CH, &plan), 0);
	assert_int_equal(plan.move_bytes, 3 * CH);
	assert_int_equal(v0->marked_bytes + v1->marked_bytes, 3 * CH);
	assert_int_equal(vg_plan_check(f.gpu, &plan), 0);	/* no budget */
	f.gpu->host_budget = 3 * CH;
	assert_int_equal(vg_plan_check(f.gpu, &plan), 0);
	f.gpu->host_budget = 3 * CH - 1;
	assert_int_equal(vg_plan_check(f.gpu, &plan), -ENOMEM);
	assert_int_equal(v0->marked_bytes + v1->marked_bytes, 3 * CH);
	vg_plan_cancel(f.gpu, &plan);
	assert_false(vg_gpu_has_marks(f.gpu));
	assert_int_equal(v0->marked_bytes + v1->marked_bytes, 0);
	assert_int_equal(vg_plan_host_bytes(&plan), 0);
	/* Nothing to move: running an empty plan moves nothing. */
	assert_int_equal(vg_plan_run(f.gpu, &plan), 0);
	f.gpu->host_budget = 0;
	mutex_unlock(&f.gpu->lock);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

/*
 * 1000 VMs with random usage and entitlements, one reduction: the greedy
 * invariant of a correct max-heap is that every VM that gave a chunk was
 * the maximum when it did, so it ends within one chunk of the largest
 * remaining key, and the last chunk was needed. COLD ranks VMs above
 * their entitlement by their chunks instead: every VM that gave a chunk
 * was above its entitlement when it did, as long as one is left above.
 */
#define MANY	1000

static void test_heap_many_vms(void **state)
{
	struct vg_vm_config cfg = { .name = NULL };
	struct vg_gpu_config gcfg = { .name = "many", .chunk_size = CH,
				      .seed = 5, .no_return_worker = true };
	struct vg_plan plan;
	struct fake_gpu *fb;
	struct vg_gpu *gpu;
	struct vg_vm **vms;
	struct vg_rand r;
	s64 maxleft = -(1ll << 62);
	u64 need = 700 * CH, total = 0, vram = 0;
	u32 i, nchunks[MANY];
	int p;

	(void)state;
	vg_rand_seed(&r, 99);
	for (i = 0; i < MANY; i++) {
		nchunks[i] = 1 + vg_rand_below(&r, 8);
		vram += nchunks[i] * CH;
	}
	for (p = 0; p < VG_POLICY_NR; p++) {
		gcfg.policy = p;
		fb = fake_create(vram);
		assert_int_equal(vg_gpu_create(&gcfg, &fake_ops, fb, &gpu), 0);
		vms = calloc(MANY, sizeof(*vms));
		assert_non_null(vms);
		for (i = 0; i < MANY; i++) {
			assert_int_equal(vg_vm_create(gpu, &cfg, &vms[i]), 0);
			cfx_alloc(vms[i], nchunks[i] * CH);
			if (i % 3 == 0)
				assert_int_equal(vg_vm_set_entitlement(vms[i],
					(1 + vg_rand_below(&r, 6)) * CH), 0);
		}
		mutex_lock(&gpu->lock);
		assert_int_equal(vg_reduce(gpu, vms[0], NULL, need, &plan), 0);
		maxleft = -(1ll << 62);
		total = 0;
		for (i = 0; i < MANY; i++) {
			struct vg_vm *vm = vms[i];
			s64 key = (s64)(vm->resident - vm->marked_bytes) -
				  (s64)vg_vm_entitlement(vm);

			total += vm->marked_bytes;
			if (vm->resident > vm->marked_bytes && key > maxleft)
				maxleft = key;
		}
		assert_true(total >= need && total - CH < need);
		for (i = 0; i < MANY; i++) {
			struct vg_vm *vm = vms[i];
			s64 key = (s64)(vm->resident - vm->marked_bytes) -
				  (s64)vg_vm_entitlement(vm);

			if (vm->marked_bytes && p == VG_POLICY_COLD &&
			    maxleft > 0)
				assert_true(key + (s64)CH > 0);
			else if (vm->marked_bytes)
				assert_true(key + (s64)CH >= maxleft);
			vg_unmark_all(vm);
		}
		mutex_unlock(&gpu->lock);
		assert_int_equal(vg_gpu_check(gpu), 0);
		for (i = 0; i < MANY; i++)
			vg_vm_destroy(vms[i]);
		free(vms);
		vg_gpu_destroy(gpu);
		assert_int_equal(fake_leaks(fb), 0);
		fake_destroy(fb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_victim_most_above),
		cmocka_unit_test(test_tie_goes_to_oldest),
		cmocka_unit_test(test_requester_victim_new_chunks_no_copy),
		cmocka_unit_test(test_requester_victim_lra),
		cmocka_unit_test(test_lra_oldest),
		cmocka_unit_test(test_cold_lowest),
		cmocka_unit_test(test_cold_without_sampling),
		cmocka_unit_test(test_cold_global),
		cmocka_unit_test(test_cold_past_profile_first),
		cmocka_unit_test(test_cold_expected_after_idle),
		cmocka_unit_test(test_sample_heat_decay),
		cmocka_unit_test(test_random_victim_only_and_deterministic),
		cmocka_unit_test(test_random_requester),
		cmocka_unit_test(test_fair_equal),
		cmocka_unit_test(test_fair_explicit),
		cmocka_unit_test(test_reduce_not_enough),
		cmocka_unit_test(test_plan_check_and_cancel),
		cmocka_unit_test(test_heap_many_vms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
