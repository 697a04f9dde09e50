// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable faults of the software GPU, the basic path: a miss goes to
 * the fault handler, which maps the page, and the work replays with exact
 * data, for every kind of access (kernels, CE copies, semaphores); the
 * replay's cost is exact, a parked acquire costs one read, and a fault the
 * handler did not fix faults again.
 * The fixture and its fault handler: sim_replay_fixture.h.
 */
#include "test_sim_util.h"
#include "sim_replay_fixture.h"

/* ---- the basic path: miss, handler maps, replay --------------------------- */

static void test_miss_handler_maps_kernel_completes(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct vg_sim_fault_stats st;
	u64 sum, n = 64 * 4096 + 123;
	u8 *want;

	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	/* Unaligned end, bigger than a turn's budget: faults and splits. */
	k_fill(t, VA0, n, 99);
	k_checksum(t, VA0, n, VA0 + n + 5);	/* result across a page end */
	t_run_faulting(t);
	check_pattern(f, 0, VA0, n, 99);
	want = malloc(n);
	pattern(want, 0, n, 99);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + n + 5, &sum, 8),
			 0);
	assert_int_equal(sum, t_fnv(want, n));
	free(want);
	/* 65 pages of data, the result's page is the 65th (n + 5 + 8 < 66). */
	assert_int_equal(th_calls(f), 65);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 65);
	assert_int_equal(st.replayed, 65);
	assert_int_equal(st.failed, 0);
	assert_int_equal(t->faults, 0);
	t_chan_free(t);
}

/* Every kernel and the CE fault on reads and writes and still compute exactly. */
/* Where put_every_kind puts things (offsets from VA0). */
#define EK_A		VA0
#define EK_B		(VA0 + 0x40000)
#define EK_C		(VA0 + 0x80000)
#define EK_RES		(VA0 + 0xc0000)
#define EK_GAT		(VA0 + 0x100000)
#define EK_CPY		(VA0 + 0x140000)
#define EK_N		(3 * 1024 + 7)
/* A checksum whose 8-byte result straddles two fresh pages. */
#define EK_RES2		(VA0 + 0x1c0000 - 4)

/*
 * Every kind of access, in order, so that on fresh pages each step faults
 * partway: VECADD's c after a and b were read, GATHER's write after its
 * read, the CE's VA destination after its source, a result across a page
 * boundary after its first half.
 */
static void put_every_kind(struct tchan *t, u64 src_gpa, u64 dst_gpa)
{
	u32 args[VGMEM_CP_NARGS] = { 0 };
	u32 i;

	t_bind(t);
	k_fill(t, EK_A, 4ull * EK_N, 1);
	k_fill(t, EK_B, 4ull * EK_N, 2);
	t_args64(args, 0, EK_A);
	t_args64(args, 2, EK_B);
	t_args64(args, 4, EK_C);
	args[6] = EK_N;
	t_kernel(t, VGMEM_K_VECADD, args);
	/* STRIDED over c, stride 12. */
	memset(args, 0, sizeof(args));
	t_args64(args, 0, EK_C);
	t_args64(args, 2, 4ull * EK_N);
	args[4] = 12;
	t_args64(args, 5, EK_RES);
	t_kernel(t, VGMEM_K_STRIDED, args);
	/* GATHER from a into gat. */
	memset(args, 0, sizeof(args));
	t_args64(args, 0, EK_A);
	t_args64(args, 2, 4ull * EK_N);
	t_args64(args, 4, EK_GAT);
	args[6] = 2000;
	args[7] = 77;
	t_kernel(t, VGMEM_K_GATHER, args);
	k_checksum(t, EK_A, 4ull * EK_N, EK_RES2);
	/* CE: guest -> VA (faulting destination), VA -> guest (source). */
	for (i = 0; i < 16384; i++)
		((u8 *)tg_ptr(t->g, src_gpa))[i] = (u8)(i * 7 + 3);
	t_ce(t, src_gpa, EK_CPY + 100, 16384, 16384, 12000, 1,
	     VGMEM_CE_LAUNCH_SRC_PHYS);
	t_ce(t, EK_CPY + 100, dst_gpa, 16384, 16384, 12000, 1,
	     VGMEM_CE_LAUNCH_DST_PHYS);
	/* CE VA -> VA into fresh pages, multi-line, with a semaphore release. */
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_A, (u32)((VA0 + 0x1f0000) >> 32));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_B, (u32)(VA0 + 0x1f0000));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_PAYLOAD, 0x5eaf00d);
	t_ce(t, EK_CPY + 100, VA0 + 0x180000, 4096, 8192, 3000, 3,
	     VGMEM_CE_LAUNCH_MULTI_LINE | VGMEM_CE_LAUNCH_SEM_RELEASE);
	/* Host semaphore release into a fresh page, then an acquire on it. */
	t_sem(t, VA0 + 0x1e0000, 42, VGMEM_SEM_OP_RELEASE);
	t_sem(t, VA0 + 0x1e0000, 42, VGMEM_SEM_OP_ACQUIRE);
	/* An acquire of a fresh page (zeroed VRAM): GEQ 0 is satisfied. */
	t_sem(t, VA0 + 0x1d0000, 0, VGMEM_SEM_OP_ACQ_GEQ);
}

static void test_every_access_kind_replays(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u64 c = EK_C, res = EK_RES, gat = EK_GAT;
	u32 n = EK_N, i, *ga, *gb, va_, vb, vc, v;
	u64 src_gpa = tg_alloc(f->g, 16384), dst_gpa = tg_alloc(f->g, 16384);
	u64 sum, state2, idx;
	u8 *buf;

	t_range(f, 0, VA0, MSZ, true);
	put_every_kind(t, src_gpa, dst_gpa);
	t_run_faulting(t);

	ga = malloc(4ull * n);
	gb = malloc(4ull * n);
	pattern((u8 *)ga, 0, 4ull * n, 1);
	pattern((u8 *)gb, 0, 4ull * n, 2);
	sum = 0;
	for (i = 0; i < n; i++) {
		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], c + 4 * i, &vc,
						4), 0);
		va_ = ga[i];
		vb = gb[i];
		assert_int_equal(vc, va_ + vb);
		if (i % 3 == 0)
			sum += vc;
	}
	{
		u64 got;

		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], res, &got, 8),
				 0);
		assert_int_equal(got, sum);
	}
	state2 = 77;
	for (i = 0; i < 2000; i++) {
		idx = vg_sim_gather_index(&state2, n);
		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], gat + 4 * i,
						&v, 4), 0);
		assert_int_equal(v, ga[idx]);
	}
	assert_memory_equal(tg_ptr(f->g, dst_gpa), tg_ptr(f->g, src_gpa), 12000);
	buf = malloc(3000);
	for (i = 0; i < 3; i++) {
		assert_int_equal(vg_sim_read_va(f->sim, f->as[0],
						VA0 + 0x180000 + 8192 * i, buf,
						3000), 0);
		assert_memory_equal(buf, (u8 *)tg_ptr(f->g, src_gpa) + 4096 * i,
				    3000);
	}
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 0x1f0000, &v, 4),
			 0);
	assert_int_equal(v, 0x5eaf00d);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 0x1e0000, &v, 4),
			 0);
	assert_int_equal(v, 42);
	free(buf);
	free(ga);
	free(gb);
	t_chan_free(t);
}

/*
 * A replayed step is not paid twice: the same work costs exactly the same
 * (bytes, device time) whether every page faults in on first touch (as[0])
 * or all of them are mapped up front (as[1]). Without the step accounting
 * VECADD, GATHER, the CE and the split result count again on each replay.
 */
static void test_replay_cost_exact(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t1 = t_chan(f->sim, f->as[1], f->g, 8);
	u64 src = tg_alloc(f->g, 16384), dst0 = tg_alloc(f->g, 16384);
	u64 dst1 = tg_alloc(f->g, 16384);
	struct vg_sim_fault_stats fs;
	struct vg_sim_cost c0, c1;

	t_range(f, 0, VA0, MSZ, true);
	assert_int_equal(f->ops->map(f->sim, f->as[1], VA0, MSZ, f->back[1], 0),
			 0);
	put_every_kind(t0, src, dst0);
	t_run_faulting(t0);
	put_every_kind(t1, src, dst1);
	t_run_faulting(t1);
	vg_sim_fault_stats(f->sim, &fs);
	/* Every step kind above faulted partway at least once. */
	assert_true(fs.replayed >= 20);
	vg_sim_as_cost(f->sim, f->as[0], &c0);
	vg_sim_as_cost(f->sim, f->as[1], &c1);
	assert_int_equal(c0.bytes_vram, c1.bytes_vram);
	assert_int_equal(c0.bytes_host, c1.bytes_host);
	assert_int_equal(c0.bytes_guest, c1.bytes_guest);
	assert_int_equal(c0.entries, c1.entries);
	assert_int_equal(c0.launches, c1.launches);
	assert_int_equal(c0.device_ns, c1.device_ns);
	assert_memory_equal(tg_ptr(f->g, dst0), tg_ptr(f->g, dst1), 12000);
	t_chan_free(t0);
	t_chan_free(t1);
}

/*
 * An acquire costs its one satisfied read, however often the engine polled
 * it while it was parked (that depends on when the releasing channel runs,
 * and the cost must not).
 */
static void test_parked_acquire_costs_one_read(void **state)
{
	struct fx *f = *state;
	struct tchan *ta = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *tb = t_chan(f->sim, f->as[1], f->g, 8);
	struct vg_sim_cost c;

	/* One page seen by both address spaces. */
	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 4096, f->back[0], 0),
			 0);
	assert_int_equal(f->ops->map(f->sim, f->as[1], VA0, 4096, f->back[0], 0),
			 0);
	t_sem(ta, VA0, 1, VGMEM_SEM_OP_ACQUIRE);
	t_submit(ta);
	/* Let the engine poll the parked acquire for a while. */
	usleep(20000);
	t_sem(tb, VA0, 1, VGMEM_SEM_OP_RELEASE);
	t_run(tb);
	assert_int_equal(t_idle(ta), 0);
	T_WAIT(t_userd(ta, VGMEM_USERD_GP_GET) == ta->put);
	vg_sim_as_cost(f->sim, f->as[0], &c);
	assert_int_equal(c.bytes_vram, 4);
	assert_int_equal(c.entries, 1);
	t_chan_free(ta);
	t_chan_free(tb);
}

/* A handler that answers 0 without fixing: the replay faults again. */
static void test_unfixed_replay_faults_again(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	f->h.skip = 3;
	t_bind(t);
	k_memset(t, VA0 + 8, 16, 0x01020304);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 4);
	assert_int_equal(f->h.last.va, VA0);
	{
		u32 v[4];

		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 8, v, 16),
				 0);
		assert_int_equal(v[3], 0x01020304);
	}
	t_chan_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_miss_handler_maps_kernel_completes),
		T(test_every_access_kind_replays),
		T(test_replay_cost_exact),
		T(test_parked_acquire_costs_one_read),
		T(test_unfixed_replay_faults_again),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
