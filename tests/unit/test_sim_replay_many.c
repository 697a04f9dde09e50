// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable faults of the software GPU, many channels at once: eight
 * channels faulting concurrently, and the chaos test: a thread unmaps and
 * write-protects the pages of a channel's work while it runs, which ends
 * with the same bytes as the same work on a channel left alone.
 * The fixture and its fault handler: sim_replay_fixture.h.
 */
#include "test_sim_util.h"
#include "sim_replay_fixture.h"

/* ---- many channels --------------------------------------------------------- */

#define NCH	8

static void test_many_channels_fault_concurrently(void **state)
{
	struct fx *f = *state;
	struct tchan *t[NCH];
	struct vg_sim_fault_stats st;
	u64 region = MSZ / NCH, sum;
	u8 *want, *zero = calloc(1, 4096);
	int i, round;

	t_range(f, 0, VA0, MSZ, true);
	t_range(f, 1, VA0, MSZ, true);
	for (i = 0; i < NCH; i++) {
		t[i] = t_chan(f->sim, f->as[i & 1], f->g, 8);
		t_bind(t[i]);
	}
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NCH; i++) {
			u64 va = VA0 + region * (u64)(i / 2);

			/* A region of its own (AS i & 1, region i / 2). */
			k_fill(t[i], va + (round ? region / 2 : 0), region / 2,
			       (u32)(i * 10 + round));
			/* Everyone reads one zero page: coalescing. */
			k_checksum(t[i], VA0 + MSZ - 8192, 4096,
				   VA0 + MSZ - 4096 + 8 * (u64)i);
			t_submit(t[i]);
		}
		for (i = 0; i < NCH; i++) {
			t_wait_done(t[i]);
			assert_int_equal(t_userd(t[i], VGMEM_USERD_ERROR), 0);
		}
	}
	want = malloc(region / 2);
	for (i = 0; i < NCH; i++) {
		u64 va = VA0 + region * (u64)(i / 2);
		u8 *got = malloc(region / 2);

		for (round = 0; round < 2; round++) {
			pattern(want, 0, region / 2, (u32)(i * 10 + round));
			assert_int_equal(vg_sim_read_va(f->sim, f->as[i & 1],
							va + (round ? region / 2 : 0),
							got, region / 2), 0);
			assert_memory_equal(got, want, region / 2);
		}
		free(got);
		assert_int_equal(vg_sim_read_va(f->sim, f->as[i & 1],
						VA0 + MSZ - 4096 + 8 * (u64)i,
						&sum, 8), 0);
		assert_int_equal(sum, t_fnv(zero, 4096));
	}
	free(want);
	free(zero);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.raised, st.replayed);
	assert_int_equal(st.handled, st.raised - st.coalesced);
	assert_int_equal((u64)th_calls(f), st.handled);
	for (i = 0; i < NCH; i++) {
		assert_int_equal(t[i]->faults, 0);
		t_chan_free(t[i]);
	}
}

/*
 * Chaos: the same work runs on a fully mapped AS and on one whose pages a
 * thread keeps unmapping and write-protecting while it runs (the handler
 * maps the same backing pages again, or unprotects them). Every kernel and
 * copy, faulting anywhere, budget-split or not, must give the same bytes.
 */
struct chaos {
	struct fx *f;
	int stop;			/* atomic */
	u64 ops;			/* read after the join */
	int errs;			/* failed protects, read after the join */
};

static void *chaos_main(void *arg)
{
	struct chaos *c = arg;
	struct fx *f = c->f;
	struct vg_rand r;
	u64 va;

	vg_rand_seed(&r, 4242);
	while (!TH_LD(c->stop)) {
		/* The pages the work uses: A to E and the results. */
		va = VA0 + (u64)vg_rand_below(&r, 641) * 4096;
		if (va == VA0 + 640 * 4096)
			va = VA0 + 0x3ff000;
		if (vg_rand_below(&r, 2))
			f->ops->unmap(f->sim, f->as[1], va, 4096);
		/* Not asserted here: cmocka fails a test on its own thread. */
		else if (f->ops->protect(f->sim, f->as[1], va, 4096,
					 VG_PROT_RO))
			c->errs++;
		f->ops->tlb_flush(f->sim, f->as[1]);
		c->ops++;
		usleep(5);
	}
	return NULL;
}

/* The work, identical for both channels. */
static void chaos_work(struct tchan *t)
{
	u32 a[VGMEM_CP_NARGS];
	u64 A = VA0, B = VA0 + 0x80000, C = VA0 + 0x100000;
	u64 D = VA0 + 0x180000, E = VA0 + 0x200000, R = VA0 + 0x3ff000;
	u32 n = 0x80000 / 4;

	k_fill(t, A, 0x80000, 11);
	t_submit(t);
	k_fill(t, B, 0x80000 - 3, 12);
	t_submit(t);
	memset(a, 0, sizeof(a));
	t_args64(a, 0, A);
	t_args64(a, 2, B);
	t_args64(a, 4, C);
	a[6] = n;
	t_kernel(t, VGMEM_K_VECADD, a);
	t_submit(t);
	k_checksum(t, C, 0x80000, R);
	memset(a, 0, sizeof(a));
	t_args64(a, 0, C);
	t_args64(a, 2, 0x80000);
	a[4] = 4 * 4099;
	t_args64(a, 5, R + 8);
	t_kernel(t, VGMEM_K_STRIDED, a);
	t_submit(t);
	memset(a, 0, sizeof(a));
	t_args64(a, 0, A);
	t_args64(a, 2, 0x80000);
	t_args64(a, 4, D);
	a[6] = 40000;
	a[7] = 5;
	t_kernel(t, VGMEM_K_GATHER, a);
	t_submit(t);
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_A, (u32)((R + 24) >> 32));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_B, (u32)(R + 24));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_PAYLOAD, 0xce);
	t_ce(t, C + 10, E, 5000, 4500, 4000, 100, VGMEM_CE_LAUNCH_MULTI_LINE |
	     VGMEM_CE_LAUNCH_SEM_RELEASE);
	t_sem(t, R + 16, 3, VGMEM_SEM_OP_RELEASE);
	t_sem(t, R + 16, 3, VGMEM_SEM_OP_ACQUIRE);
	k_memset(t, D + 0x10000 + 1, 0x20000, 0xa5b6c7d8);
	t_submit(t);
}

static void test_chaos_same_bytes(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 16);
	struct tchan *t1 = t_chan(f->sim, f->as[1], f->g, 16);
	struct vg_sim_fault_stats st;
	struct chaos c = { .f = f };
	u8 *m0 = malloc(MSZ), *m1 = malloc(MSZ);
	pthread_t thr;
	bool done;
	int i;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, MSZ, f->back[0], 0),
			 0);
	t_range(f, 1, VA0, MSZ, true);
	TH_ST(f->h.mode, TH_AUTO);
	t_bind(t0);
	t_bind(t1);
	chaos_work(t0);
	t_wait_done(t0);
	assert_int_equal(t_userd(t0, VGMEM_USERD_ERROR), 0);

	assert_int_equal(pthread_create(&thr, NULL, chaos_main, &c), 0);
	/*
	 * The work is idempotent: three rounds give the bytes of one. The
	 * thread uses c on this stack: it is stopped and joined before any
	 * check can fail (and return from this function).
	 */
	for (i = 0, done = true; i < 3 && done; i++) {
		chaos_work(t1);
		done = t_wait_done_for(t1);
	}
	TH_ST(c.stop, 1);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_true(done);
	assert_int_equal(c.errs, 0);
	assert_int_equal(t_userd(t1, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t1->faults, 0);

	f->ops->unmap(f->sim, f->as[1], VA0, MSZ);
	assert_int_equal(f->ops->map(f->sim, f->as[1], VA0, MSZ, f->back[1], 0),
			 0);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0, m0, MSZ), 0);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[1], VA0, m1, MSZ), 0);
	assert_memory_equal(m0, m1, MSZ);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.failed, 0);
	assert_true(st.raised >= 1024 / 4);	/* at least every page touched */
	print_message("chaos: %llu unmaps/protects, %llu faults, %llu handled\n",
		      (unsigned long long)c.ops, (unsigned long long)st.raised,
		      (unsigned long long)st.handled);
	free(m0);
	free(m1);
	t_chan_free(t0);
	t_chan_free(t1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_many_channels_fault_concurrently),
		T(test_chaos_same_bytes),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
