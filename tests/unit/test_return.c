// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Returning relocated chunks to VRAM (core/return.c) against the fake
 * GPU driver: who gets free VRAM first, which chunk each policy brings back,
 * failures that change nothing, and the worker thread itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CHUNK		VG_CHUNK_MIN
#define PAGE		VGMEM_PAGE_SIZE
#define VRAM_CHUNKS	16u
#define NVMS		3
#define WAIT_STEPS	4000	/* x 5 ms: a bound, not a timing assertion */

struct fx {
	struct cfx c;
	struct cfx_gmem gm;	/* channel rings: reads as zeroes, 64 KiB */
};

static int fx_setup_cfg(void **state, bool worker, u32 interval_ms)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cfx_opts o = {
		.name = "gpu0", .vram = VRAM_CHUNKS * CHUNK, .chunk = CHUNK,
		.seed = 3, .return_worker = worker,
		.return_interval_ms = interval_ms,
	};
	static const char *const names[NVMS] = { "vmA", "vmB", "vmC" };
	int i;

	assert_non_null(f);
	cfx_gmem_zero(&f->gm, 64 * KiB);
	cfx_init_opts(&f->c, &o);
	for (i = 0; i < NVMS; i++) {
		struct vg_vm_config vc = {
			.name = names[i], .gmem = cfx_gmem_of(&f->gm),
		};

		cfx_vm_cfg(&f->c, &vc);
	}
	*state = f;
	return 0;
}

static int fx_setup(void **state)
{
	return fx_setup_cfg(state, false, 0);
}

/* A worker that would not run on its own during the test's setup. */
static int fx_setup_worker(void **state)
{
	return fx_setup_cfg(state, true, 10000);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	cfx_fini(&f->c);
	free(f);
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static u8 pat(u32 seed, u64 i)
{
	u64 x = (i + 1) * 0x9e3779b97f4a7c15ull ^ ((u64)seed << 32);

	x ^= x >> 31;
	return (u8)(x * 0x94d049bb133111ebull >> 56);
}

static void fill(struct fx *f, struct vg_bo *bo, u32 seed)
{
	u8 *buf = malloc(bo->size);
	u64 i;

	for (i = 0; i < bo->size; i++)
		buf[i] = pat(seed, i);
	assert_int_equal(fake_va_rw(f->c.fb, bo->vm->as, bo->va, buf, bo->size,
				    true), 0);
	free(buf);
}

static void check(struct fx *f, struct vg_bo *bo, u32 seed)
{
	u8 *buf = malloc(bo->size);
	u64 i;

	assert_int_equal(fake_va_rw(f->c.fb, bo->vm->as, bo->va, buf, bo->size,
				    false), 0);
	for (i = 0; i < bo->size; i++)
		if (buf[i] != pat(seed, i))
			fail_msg("byte %llu of bo 0x%llx differs",
				 (unsigned long long)i,
				 (unsigned long long)bo->va);
	free(buf);
}

static struct vg_bo *mkbo(struct fx *f, struct vg_vm *vm, u64 size, u32 seed)
{
	struct vg_bo *bo;
	u64 va = 0;

	assert_int_equal(vg_bo_alloc(vm, size, 0, &va), 0);
	mutex_lock(&f->c.gpu->lock);
	bo = vg_bo_find(vm, va);
	mutex_unlock(&f->c.gpu->lock);
	assert_non_null(bo);
	fill(f, bo, seed);
	return bo;
}

/* Move the chunks in mask of bo to host RAM. */
static void evict(struct fx *f, struct vg_bo *bo, u32 mask)
{
	u32 i;

	mutex_lock(&f->c.gpu->lock);
	for (i = 0; i < bo->nr_chunks; i++)
		if (mask & (1u << i))
			vg_chunk_mark(&bo->chunks[i]);
	assert_int_equal(vg_relocate_vm(bo->vm, VG_LOC_HOST), 0);
	mutex_unlock(&f->c.gpu->lock);
}

static u64 resident(struct fx *f, struct vg_vm *vm)
{
	u64 v;

	mutex_lock(&f->c.gpu->lock);
	v = vm->resident;
	mutex_unlock(&f->c.gpu->lock);
	return v;
}

static u64 relocated(struct fx *f, struct vg_vm *vm)
{
	u64 v;

	mutex_lock(&f->c.gpu->lock);
	v = vm->relocated;
	mutex_unlock(&f->c.gpu->lock);
	return v;
}

static enum vg_loc loc_of(struct fx *f, struct vg_chunk *c)
{
	enum vg_loc l;

	mutex_lock(&f->c.gpu->lock);
	l = c->loc;
	/* The books and the page table agree. */
	assert_ptr_equal(fake_va_mem(c->bo->vm->as, vg_chunk_va(c), NULL),
			 c->mem);
	assert_int_equal(fake_mem_loc(c->mem), l);
	mutex_unlock(&f->c.gpu->lock);
	return l;
}

/* ---- who gets VRAM back ------------------------------------------------- */

static void test_nothing_to_return(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 1);

	/* Nothing relocated. */
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	/* Relocated, but VRAM is full. */
	evict(f, a, 0x3);
	mkbo(f, f->c.vm[1], (VRAM_CHUNKS - 2) * CHUNK, 2);
	fake_reset_counts(f->c.fb);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_COPY_SUBMIT), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 0);
	assert_int_equal(relocated(f, f->c.vm[0]), 2 * CHUNK);
	check(f, a, 1);
}

/*
 * A is 3 chunks below its entitlement, B at it, C above: the two free
 * chunks go to A. Once C frees its memory everything comes back, B's
 * chunks too although they take B past its entitlement: idle VRAM helps
 * nobody.
 */
static void test_furthest_below_entitlement_first(void **state)
{
	struct fx *f = *state;
	struct vg_vm *A = f->c.vm[0], *B = f->c.vm[1], *C = f->c.vm[2];
	struct vg_bo *a, *b, *c;
	struct vgmem_vm_stats st;

	assert_int_equal(vg_vm_set_entitlement(A, 5 * CHUNK), 0);
	assert_int_equal(vg_vm_set_entitlement(B, 5 * CHUNK), 0);
	assert_int_equal(vg_vm_set_entitlement(C, 6 * CHUNK), 0);
	a = mkbo(f, A, 5 * CHUNK, 11);
	b = mkbo(f, B, 8 * CHUNK, 12);
	evict(f, a, 0x1c);	/* A: 2 resident, 3 relocated */
	evict(f, b, 0x07);	/* B: 5 resident, 3 relocated */
	c = mkbo(f, C, 7 * CHUNK, 13);	/* 14 of 16 used */

	assert_int_equal(vg_gpu_return_once(f->c.gpu), 2 * CHUNK);
	assert_int_equal(resident(f, A), 4 * CHUNK);
	assert_int_equal(relocated(f, A), CHUNK);
	assert_int_equal(relocated(f, B), 3 * CHUNK);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	check(f, a, 11);
	/* One suspension for A's two chunks, none for the others. */
	vg_vm_get_stats(A, &st);
	assert_int_equal(st.reloc_in_chunks, 2);
	assert_int_equal(st.suspends, 2);	/* the evict, the return */
	vg_vm_get_stats(B, &st);
	assert_int_equal(st.reloc_in_chunks, 0);
	assert_int_equal(st.suspends, 1);

	/* VRAM full now: nothing moves. */
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);

	assert_int_equal(vg_bo_free(C, c->va), 0);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 4 * CHUNK);
	assert_int_equal(relocated(f, A), 0);
	assert_int_equal(relocated(f, B), 0);
	assert_int_equal(resident(f, B), 8 * CHUNK);
	check(f, a, 11);
	check(f, b, 12);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
}

/* Fewer free chunks than claims: the deficits are evened out in turn. */
static void test_fair_split(void **state)
{
	struct fx *f = *state;
	struct vg_vm *A = f->c.vm[0], *B = f->c.vm[1], *C = f->c.vm[2];
	struct vg_bo *a, *b;

	assert_int_equal(vg_vm_set_entitlement(A, 6 * CHUNK), 0);
	assert_int_equal(vg_vm_set_entitlement(B, 6 * CHUNK), 0);
	assert_int_equal(vg_vm_set_entitlement(C, 4 * CHUNK), 0);
	a = mkbo(f, A, 6 * CHUNK, 21);
	b = mkbo(f, B, 6 * CHUNK, 22);
	evict(f, a, 0x3f);	/* A: 0 resident, 6 relocated */
	evict(f, b, 0x0f);	/* B: 2 resident, 4 relocated */
	mkbo(f, C, 11 * CHUNK, 23);	/* 13 used, 3 free */

	/* A (-6) twice to -4, then A and B tie at -4: A comes first. */
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 3 * CHUNK);
	assert_int_equal(resident(f, A), 3 * CHUNK);
	assert_int_equal(resident(f, B), 2 * CHUNK);
	check(f, a, 21);
	check(f, b, 22);
}

/* ---- which chunk comes back --------------------------------------------- */

/* A has four chunks in host RAM and exactly one chunk of VRAM is free. */
static struct vg_bo *one_slot_setup(struct fx *f)
{
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 31);

	evict(f, a, 0xf);
	mkbo(f, f->c.vm[1], (VRAM_CHUNKS - 1) * CHUNK, 32);
	return a;
}

static u32 returned_index(struct fx *f, struct vg_bo *a)
{
	u32 i, found = ~0u;

	for (i = 0; i < a->nr_chunks; i++) {
		if (loc_of(f, &a->chunks[i]) == VG_LOC_VRAM) {
			assert_int_equal(found, ~0u);
			found = i;
		}
	}
	assert_int_not_equal(found, ~0u);
	return found;
}

static void test_lra_most_recently_placed_first(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = one_slot_setup(f);
	static const u64 seq[4] = { 10, 40, 20, 30 };
	u32 i;

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_LRA), 0);
	mutex_lock(&f->c.gpu->lock);
	for (i = 0; i < 4; i++)
		a->chunks[i].placed_seq = seq[i];
	mutex_unlock(&f->c.gpu->lock);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), CHUNK);
	assert_int_equal(returned_index(f, a), 1);
	check(f, a, 31);
}

/*
 * COLD brings back the hottest chunk of those that qualify. One slot is
 * free, no more than the reserve (1 of 16), so a chunk used once may not
 * take it, unless its VM is owed it (A holds nothing, below its share) and
 * that round read about all of it in host RAM (an access per 4 KiB: 16 for
 * a 64 KiB chunk): with 90 accesses, chunk 2 comes back after one round;
 * with 9 at most, nothing does until the second round in a row makes the
 * use sustained. (This test pinned the hottest chunk coming back after one
 * round whatever its accesses; waiting for a second is return.c's rule
 * for the reserve, checked to be right.)
 */
static void cold_hottest_case(struct fx *f, const u64 *access, u32 rounds)
{
	struct vg_bo *a = one_slot_setup(f);
	u32 i, round;

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_COLD), 0);
	for (round = 1; round <= rounds; round++) {
		mutex_lock(&f->c.gpu->lock);
		for (i = 0; i < 4; i++) {
			if (round == 1)
				a->chunks[i].heat = 0;
			/* Accesses over PCIe since the last sample. */
			fake_set_access(a->chunks[i].mem, access[i]);
		}
		mutex_unlock(&f->c.gpu->lock);
		fake_reset_counts(f->c.fb);
		assert_int_equal(vg_gpu_return_once(f->c.gpu),
				 round == rounds ? CHUNK : 0);
		assert_true(fake_count(f->c.fb, FAKE_OP_SAMPLE_ACCESS) >= 4);
	}
	assert_int_equal(returned_index(f, a), 2);
	check(f, a, 31);
}

static void test_cold_hottest_first(void **state)
{
	static const u64 access[4] = { 5, 3, 90, 0 };

	cold_hottest_case(*state, access, 1);
}

static void test_cold_sustained_first(void **state)
{
	static const u64 access[4] = { 5, 3, 9, 0 };

	cold_hottest_case(*state, access, 2);
}

static void test_random_spreads(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = one_slot_setup(f);
	u32 seen = 0, i, k;

	assert_int_equal(f->c.gpu->policy, VG_POLICY_RANDOM);
	for (k = 0; k < 24; k++) {
		assert_int_equal(vg_gpu_return_once(f->c.gpu), CHUNK);
		i = returned_index(f, a);
		seen |= 1u << i;
		evict(f, a, 1u << i);
	}
	/* 24 draws from 4 landing on one chunk: probability 4^-23. */
	assert_int_not_equal(__builtin_popcount(seen), 1);
	check(f, a, 31);
}

/* Free VRAM smaller than a chunk still takes a BO's short tail. */
static void test_tail_fits_small_gap(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], CHUNK + 4 * PAGE, 41);

	assert_int_equal(a->nr_chunks, 2);
	evict(f, a, 0x3);
	mkbo(f, f->c.vm[1], VRAM_CHUNKS * CHUNK - 4 * PAGE, 42);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 4 * PAGE);
	assert_int_equal(loc_of(f, &a->chunks[0]), VG_LOC_HOST);
	assert_int_equal(loc_of(f, &a->chunks[1]), VG_LOC_VRAM);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	check(f, a, 41);
}

/*
 * One VM's return fails: it keeps its chunks (nothing half moved), the
 * other VM still gets its chunks back in the same pass, the failure is
 * counted, and the next pass brings the first one back too.
 */
static void test_failed_vm_skipped(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 51);
	struct vg_bo *b = mkbo(f, f->c.vm[1], 4 * CHUNK, 52);
	static const enum fake_op ops[] = {
		FAKE_OP_MEM_ALLOC_VRAM, FAKE_OP_COPY_SUBMIT, FAKE_OP_COPY_WAIT,
		FAKE_OP_MAP,
	};
	struct vg_chan *ch[2];
	struct vg_gpu_stats gs;
	u64 t0;
	u32 i;

	/* Channels, so that the drain has something to fail on. */
	for (i = 0; i < 2; i++)
		assert_int_equal(vg_chan_create(f->c.vm[i], 0, 64, &ch[i]), 0);
	evict(f, a, 0x6);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		evict(f, b, 0x9);
		/* A comes first (the VM list order) and fails. */
		fake_fail(f->c.fb, ops[i], 1);
		assert_int_equal(vg_gpu_return_once(f->c.gpu), 2 * CHUNK);
		fake_fail_clear(f->c.fb);
		assert_int_equal(relocated(f, f->c.vm[0]), 2 * CHUNK);
		assert_int_equal(relocated(f, f->c.vm[1]), 0);
		assert_int_equal(vg_gpu_check(f->c.gpu), 0);
		check(f, a, 51);
		check(f, b, 52);
	}
	/*
	 * A channel of A does not stop: the same, and A is deferred, so the
	 * next pass does not ask it again (B's is the only stop).
	 */
	evict(f, b, 0x9);
	fake_fail(f->c.fb, FAKE_OP_CHAN_STOP, 1);
	t0 = ktime_get_ns();
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 2 * CHUNK);
	assert_int_equal(relocated(f, f->c.vm[0]), 2 * CHUNK);
	assert_int_equal(relocated(f, f->c.vm[1]), 0);
	/*
	 * The 100 ms back-off could pass before the next pass on a starved
	 * machine: out of reach, the rule is checked, not the speed.
	 */
	mutex_lock(&f->c.gpu->lock);
	assert_true(f->c.vm[0]->drain_retry_ns >= t0 + VG_DRAIN_BACKOFF_MIN_NS);
	f->c.vm[0]->drain_retry_ns = ktime_get_ns() + 3600 * NSEC_PER_SEC;
	mutex_unlock(&f->c.gpu->lock);
	evict(f, b, 0x9);
	fake_reset_counts(f->c.fb);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 2 * CHUNK);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 1);
	assert_int_equal(relocated(f, f->c.vm[0]), 2 * CHUNK);
	check(f, a, 51);
	check(f, b, 52);
	/* Its back-off over (as if the time had passed), A is a candidate again. */
	mutex_lock(&f->c.gpu->lock);
	f->c.vm[0]->drain_retry_ns = ktime_get_ns();
	mutex_unlock(&f->c.gpu->lock);
	vg_gpu_get_stats(f->c.gpu, &gs);
	assert_int_equal(gs.reloc_failures, ARRAY_SIZE(ops) + 1);
	/* Only failures: the pass says so. */
	evict(f, b, 0x9);
	fake_fail(f->c.fb, FAKE_OP_COPY_WAIT, 1);
	fake_fail(f->c.fb, FAKE_OP_MEM_ALLOC_VRAM, 3);
	assert_true(vg_gpu_return_once(f->c.gpu) < 0);
	fake_fail_clear(f->c.fb);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 4 * CHUNK);
	assert_int_equal(relocated(f, f->c.vm[0]), 0);
	assert_int_equal(relocated(f, f->c.vm[1]), 0);
	check(f, a, 51);
	check(f, b, 52);
	vg_chan_destroy(ch[0]);
	vg_chan_destroy(ch[1]);
}

/*
 * COLD: a pass with nothing to do samples nothing: nothing relocated and
 * the reserve (1/16 of VRAM: one chunk of 16) free. Walking every chunk
 * under gpu->lock each tick would block every allocation for nothing.
 * With VRAM full the pass has the reserve to refill: it samples (one
 * ageing round) and moves out chunks idle for two rounds of VMs above
 * their entitlement, coldest first, and a VM at its entitlement gives its
 * idle memory only after every VM above has given its own. (This test
 * once pinned that a pass with VRAM full samples nothing; the reserve
 * changed that.)
 */
static void test_cold_idle_pass_samples_nothing(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 8 * CHUNK, 81);
	struct vg_bo *b, *b2;

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_COLD), 0);
	fake_reset_counts(f->c.fb);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_SAMPLE_ACCESS), 0);
	evict(f, a, 0x3);
	b = mkbo(f, f->c.vm[1], 10 * CHUNK, 82);	/* VRAM full */
	/* Shares of 16/3 chunks: A (6) and B (10) are above theirs. */
	fake_reset_counts(f->c.fb);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_true(fake_count(f->c.fb, FAKE_OP_SAMPLE_ACCESS) > 0);
	/* Nothing has been idle for two rounds yet: nothing moved. */
	assert_int_equal(relocated(f, f->c.vm[0]), 2 * CHUNK);
	assert_int_equal(relocated(f, f->c.vm[1]), 0);
	/*
	 * Second round: every chunk is idle and equally cold; A's are the
	 * oldest and A is above its share: one of A's goes. A's two chunks
	 * in host RAM stay there: nobody reads them.
	 */
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_int_equal(relocated(f, f->c.vm[0]), 3 * CHUNK);
	assert_int_equal(relocated(f, f->c.vm[1]), 0);
	/*
	 * B takes the free chunk. A (5) is now below its share, B (11)
	 * above: B's oldest goes, although A's idle chunks are older.
	 */
	b2 = mkbo(f, f->c.vm[1], CHUNK, 83);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_int_equal(relocated(f, f->c.vm[0]), 3 * CHUNK);
	assert_int_equal(relocated(f, f->c.vm[1]), CHUNK);
	assert_int_equal(relocated(f, f->c.vm[2]), 0);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	check(f, a, 81);
	check(f, b, 82);
	check(f, b2, 83);
}

/* Accesses over PCIe or in VRAM since the last sample, on every chunk. */
static void touch_all(struct fx *f, struct vg_bo *bo, u64 n)
{
	u32 i;

	mutex_lock(&f->c.gpu->lock);
	for (i = 0; i < bo->nr_chunks; i++)
		fake_set_access(bo->chunks[i].mem, n);
	mutex_unlock(&f->c.gpu->lock);
}

/*
 * COLD's reserve takes memory idle for two rounds from a VM at or below
 * an equal share too (no policy set its entitlement), before any VM's
 * memory in use: A holds 4 chunks nobody reads, within its share of 16/3;
 * B and C hold 6 each, above theirs, and read all of it every round. With
 * VRAM full the reserve (1 chunk) comes from A. With an entitlement set
 * for A (a policy's, which may carry a min the core cannot tell apart)
 * A at or below it keeps everything, and nothing of B's or C's is idle:
 * nothing moves.
 */
static void cold_reserve_case(struct fx *f, bool explicit_ent)
{
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 91);
	struct vg_bo *b = mkbo(f, f->c.vm[1], 6 * CHUNK, 92);
	struct vg_bo *c = mkbo(f, f->c.vm[2], 6 * CHUNK, 93);
	u32 round;

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_COLD), 0);
	if (explicit_ent)
		assert_int_equal(vg_vm_set_entitlement(f->c.vm[0], 5 * CHUNK), 0);
	for (round = 0; round < 3; round++) {
		touch_all(f, b, 16);
		touch_all(f, c, 16);
		assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	}
	assert_int_equal(relocated(f, f->c.vm[0]), explicit_ent ? 0 : CHUNK);
	assert_int_equal(relocated(f, f->c.vm[1]), 0);
	assert_int_equal(relocated(f, f->c.vm[2]), 0);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	check(f, a, 91);
	check(f, b, 92);
	check(f, c, 93);
}

static void test_cold_reserve_idle_within_share(void **state)
{
	cold_reserve_case(*state, false);
}

static void test_cold_reserve_spares_explicit(void **state)
{
	cold_reserve_case(*state, true);
}

/*
 * COLD: a VM past its profile (vg_vm_past_profile()) gives the reserve
 * memory in use before anyone's idle memory, and what it uses in host RAM
 * comes back only into room beyond the reserve: as in cold_reserve_case(),
 * A holds 4 idle chunks and B and C 6 each read every round, but B was
 * sold 4 chunks. The reserve's chunk comes from B (before: A's idle one),
 * and though B reads it in host RAM round after round (sustained use),
 * it stays there: the only free VRAM is the reserve's (before: it came
 * back at the third round, taking the reserve's room, and the reserve
 * copied another chunk out for it).
 */
static void test_cold_reserve_past_profile_first(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 95);
	struct vg_bo *b = mkbo(f, f->c.vm[1], 6 * CHUNK, 96);
	struct vg_bo *c = mkbo(f, f->c.vm[2], 6 * CHUNK, 97);
	u32 round;

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_COLD), 0);
	mutex_lock(&f->c.gpu->lock);
	f->c.vm[1]->profile = 4 * CHUNK;
	mutex_unlock(&f->c.gpu->lock);
	for (round = 0; round < 5; round++) {
		touch_all(f, b, 16);
		touch_all(f, c, 16);
		assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
		assert_int_equal(relocated(f, f->c.vm[0]), 0);
		assert_int_equal(relocated(f, f->c.vm[1]), CHUNK);
		assert_int_equal(relocated(f, f->c.vm[2]), 0);
	}
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	check(f, a, 95);
	check(f, b, 96);
	check(f, c, 97);
}

/*
 * COLD: a chunk read once in host RAM comes back when VRAM has room to
 * spare beyond the reserve (GPUswap: idle VRAM helps nobody), without
 * waiting for a second round; one nobody reads stays out.
 */
static void test_cold_one_shot_with_room(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 94);

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_COLD), 0);
	evict(f, a, 0x3);
	mutex_lock(&f->c.gpu->lock);
	fake_set_access(a->chunks[1].mem, 7);
	mutex_unlock(&f->c.gpu->lock);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), CHUNK);
	assert_int_equal(loc_of(f, &a->chunks[0]), VG_LOC_HOST);
	assert_int_equal(loc_of(f, &a->chunks[1]), VG_LOC_VRAM);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	check(f, a, 94);
}

/*
 * COLD's period (vg_chunk_seen()): an access after an idle spell of two
 * rounds or more sets the chunk's period to the spell's length and
 * records whether that access used about all of it (an access per 4 KiB);
 * accesses in consecutive rounds leave it alone. vg_chunk_expected()
 * holds while the period has not run out by more than a round, and only
 * for a whole use; vg_chunk_due() from the round before it runs out.
 */
static void test_cold_period_learned(void **state)
{
	struct vg_chunk c = { .size = CHUNK };
	u64 whole = CHUNK / 4096;

	(void)state;
	vg_chunk_seen(&c, 3, whole);		/* first access: no spell yet */
	assert_int_equal(c.period, 0);
	assert_false(vg_chunk_expected(&c, 4));
	vg_chunk_seen(&c, 4, whole);		/* the next round: no spell */
	assert_int_equal(c.period, 0);
	vg_chunk_seen(&c, 8, whole);		/* idle 5, 6, 7 */
	assert_int_equal(c.period, 4);
	assert_true(c.period_whole);
	assert_true(vg_chunk_expected(&c, 10));
	assert_false(vg_chunk_due(&c, 10));
	assert_true(vg_chunk_due(&c, 11));
	assert_true(vg_chunk_due(&c, 13));
	assert_false(vg_chunk_expected(&c, 14));	/* ran out: dropped */
	vg_chunk_seen(&c, 9, 1);		/* consecutive: kept */
	assert_int_equal(c.period, 4);
	vg_chunk_seen(&c, 20, whole / 2);	/* half of it after 11 rounds */
	assert_int_equal(c.period, 11);
	assert_false(c.period_whole);
	assert_false(vg_chunk_expected(&c, 22));
}

/* White box: c was used whole after an idle spell of period rounds. */
static void set_period(struct fx *f, struct vg_chunk *c, u32 touched,
		       u16 period)
{
	mutex_lock(&f->c.gpu->lock);
	c->touched = touched;
	c->period = period;
	c->period_whole = true;
	mutex_unlock(&f->c.gpu->lock);
}

static u32 clock_now(struct fx *f)
{
	u32 v;

	mutex_lock(&f->c.gpu->lock);
	v = f->c.gpu->heat_clock;
	mutex_unlock(&f->c.gpu->lock);
	return v;
}

/*
 * COLD's reserve leaves memory expected back whole after its idle spell
 * (a checkpoint) and takes memory nobody will read: as in
 * cold_reserve_case(), A's 4 chunks are idle within its share while B
 * and C read theirs every round, but A's first two were last used whole
 * after a spell as long as the test: the reserve's chunk is A's third
 * (before, the first went: equally idle, placed first).
 */
static void test_cold_reserve_spares_expected(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 95);
	struct vg_bo *b = mkbo(f, f->c.vm[1], 6 * CHUNK, 96);
	struct vg_bo *c = mkbo(f, f->c.vm[2], 6 * CHUNK, 97);
	u32 round, now = clock_now(f);

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_COLD), 0);
	set_period(f, &a->chunks[0], now + 1, 8);
	set_period(f, &a->chunks[1], now + 1, 8);
	mutex_lock(&f->c.gpu->lock);
	a->chunks[2].touched = now + 1;
	a->chunks[3].touched = now + 1;
	mutex_unlock(&f->c.gpu->lock);
	for (round = 0; round < 4; round++) {
		touch_all(f, b, 16);
		touch_all(f, c, 16);
		assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	}
	assert_int_equal(relocated(f, f->c.vm[0]), CHUNK);
	assert_int_equal(loc_of(f, &a->chunks[0]), VG_LOC_VRAM);
	assert_int_equal(loc_of(f, &a->chunks[1]), VG_LOC_VRAM);
	assert_int_equal(loc_of(f, &a->chunks[2]), VG_LOC_HOST);
	assert_int_equal(loc_of(f, &a->chunks[3]), VG_LOC_VRAM);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	check(f, a, 95);
	check(f, b, 96);
	check(f, c, 97);
}

/*
 * COLD fetches a chunk in host RAM that nobody reads there the round
 * before its period says it is used whole again, when VRAM has room
 * beyond the reserve; one used only in part (a heartbeat) stays out.
 * Every pass here samples (host RAM in use, VRAM free): one round each.
 */
static void test_cold_due_chunk_fetched(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 98);
	u32 now;

	assert_int_equal(vg_gpu_set_policy(f->c.gpu, VG_POLICY_COLD), 0);
	evict(f, a, 0x3);
	now = clock_now(f);
	set_period(f, &a->chunks[0], now, 4);
	set_period(f, &a->chunks[1], now, 4);
	mutex_lock(&f->c.gpu->lock);
	a->chunks[1].period_whole = false;
	mutex_unlock(&f->c.gpu->lock);
	/* Rounds now + 1 and now + 2: not due yet. */
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_int_equal(loc_of(f, &a->chunks[0]), VG_LOC_HOST);
	/* Round now + 3: due in the next. */
	assert_int_equal(vg_gpu_return_once(f->c.gpu), CHUNK);
	assert_int_equal(loc_of(f, &a->chunks[0]), VG_LOC_VRAM);
	assert_int_equal(loc_of(f, &a->chunks[1]), VG_LOC_HOST);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 0);
	assert_int_equal(loc_of(f, &a->chunks[1]), VG_LOC_HOST);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	check(f, a, 98);
}

/* ---- the worker thread -------------------------------------------------- */

static bool wait_back(struct fx *f, struct vg_vm *vm);

/*
 * An allocation needs room from A and C; C's relocation fails after A's
 * chunks moved out. The allocation fails, A's chunks are whole in host
 * RAM, and the worker (whose interval is far off) is kicked to bring them
 * back into the VRAM that nobody took.
 */
static void test_failed_multi_vm_kicks_worker(void **state)
{
	struct fx *f = *state;
	struct vg_vm *A = f->c.vm[0], *B = f->c.vm[1], *C = f->c.vm[2];
	struct vg_bo *a = mkbo(f, A, 8 * CHUNK, 91);
	struct vg_bo *c = mkbo(f, C, 8 * CHUNK, 92);
	struct vg_gpu_stats gs;
	u64 va = 0;

	fake_fail(f->c.fb, FAKE_OP_COPY_WAIT, 2);
	assert_int_equal(vg_bo_alloc(B, 8 * CHUNK, 0, &va), -ENOMEM);
	vg_gpu_get_stats(f->c.gpu, &gs);
	assert_int_equal(gs.reloc_failures, 1);
	assert_true(wait_back(f, A));
	fake_fail_clear(f->c.fb);
	assert_int_equal(relocated(f, C), 0);
	assert_int_equal(resident(f, A), 8 * CHUNK);
	check(f, a, 91);
	check(f, c, 92);
}

static bool wait_back(struct fx *f, struct vg_vm *vm)
{
	int i;

	for (i = 0; i < WAIT_STEPS; i++) {
		if (!relocated(f, vm))
			return true;
		msleep(5);
	}
	return false;
}

static void test_worker_returns_after_free(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 8 * CHUNK, 61);
	struct vg_bo *c;

	assert_non_null(f->c.gpu->return_task);
	evict(f, a, 0xf0);
	/* VRAM full: even an eager worker finds nothing to do. */
	c = mkbo(f, f->c.vm[2], 12 * CHUNK, 62);
	assert_int_equal(vg_gpu_set_return_interval(f->c.gpu, 2), 0);
	assert_int_equal(relocated(f, f->c.vm[0]), 4 * CHUNK);

	assert_int_equal(vg_bo_free(f->c.vm[2], c->va), 0);
	assert_true(wait_back(f, f->c.vm[0]));
	assert_int_equal(resident(f, f->c.vm[0]), 8 * CHUNK);
	check(f, a, 61);

	/* Again, with the worker already running at its short interval. */
	evict(f, a, 0x0f);
	assert_true(wait_back(f, f->c.vm[0]));
	check(f, a, 61);
}

static void test_worker_start_stop(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4 * CHUNK, 71);
	int i;

	assert_int_equal(vg_return_start(f->c.gpu), -EBUSY);
	for (i = 0; i < 3; i++) {
		vg_return_stop(f->c.gpu);
		assert_null(f->c.gpu->return_task);
		vg_return_stop(f->c.gpu);		/* no worker: nothing to do */
		/* No worker: chunks stay out. */
		evict(f, a, 0x3);
		assert_int_equal(relocated(f, f->c.vm[0]), 2 * CHUNK);
		assert_int_equal(vg_return_start(f->c.gpu), 0);
		assert_int_equal(vg_gpu_set_return_interval(f->c.gpu, 1), 0);
		assert_true(wait_back(f, f->c.vm[0]));
	}
	check(f, a, 71);
	/* fx_teardown's vg_gpu_destroy stops the worker while it runs. */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_to_return, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_furthest_below_entitlement_first, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fair_split, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lra_most_recently_placed_first, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_hottest_first, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_sustained_first, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_random_spreads, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tail_fits_small_gap, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_failed_vm_skipped, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_idle_pass_samples_nothing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_reserve_idle_within_share, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_reserve_spares_explicit, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_reserve_past_profile_first, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_one_shot_with_room, fx_setup, fx_teardown),
		cmocka_unit_test(test_cold_period_learned),
		cmocka_unit_test_setup_teardown(test_cold_reserve_spares_expected, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cold_due_chunk_fetched, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_failed_multi_vm_kicks_worker, fx_setup_worker, fx_teardown),
		cmocka_unit_test_setup_teardown(test_worker_returns_after_free, fx_setup_worker, fx_teardown),
		cmocka_unit_test_setup_teardown(test_worker_start_stop, fx_setup_worker, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
