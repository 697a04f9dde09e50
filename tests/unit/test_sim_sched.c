// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The software GPU's scheduling: channel_stop/channel_start (a stopped
 * channel runs nothing, not even the re-check of a parked acquire, so a
 * relocation's copy cannot lose a write), and work budgets per turn (a huge
 * launch is split into many turns, other channels run in between, results
 * equal the CPU's, and stop/destroy do not wait for the whole launch).
 */
#include "test_sim_util.h"

#define VA0	0x100000000ull
#define MiB	(1ull << 20)

static const struct vg_gpu_ops *ops;

static u32 rd32(struct vg_sim *sim, struct vg_as *as, u64 va)
{
	u32 v;

	assert_int_equal(vg_sim_read_va(sim, as, va, &v, 4), 0);
	return v;
}

static u64 rd64(struct vg_sim *sim, struct vg_as *as, u64 va)
{
	u64 v;

	assert_int_equal(vg_sim_read_va(sim, as, va, &v, 8), 0);
	return v;
}

static void k_args(u32 *a, u64 p0, u64 p1, u64 p2)
{
	memset(a, 0, VGMEM_CP_NARGS * sizeof(*a));
	t_args64(a, 0, p0);
	t_args64(a, 2, p1);
	t_args64(a, 4, p2);
}

static u64 launches(struct vg_sim *sim, struct vg_as *as)
{
	struct vg_sim_cost c;

	vg_sim_as_cost(sim, as, &c);
	return c.launches;
}

static u64 bytes_touched(struct vg_sim *sim, struct vg_as *as)
{
	struct vg_sim_cost c;

	vg_sim_as_cost(sim, as, &c);
	return c.bytes_vram + c.bytes_host;
}

/* Wait until as has seen n launches: the engine is inside the last one. */
static void wait_launches(struct vg_sim *sim, struct vg_as *as, u64 n)
{
	while (launches(sim, as) < n)
		usleep(200);
}

/* Byte k of a FILL_PATTERN of seed over a range starting at its word 0. */
static u8 pat_byte(u32 seed, u64 k)
{
	return (u8)(vgmem_pattern_word(seed, k >> 2) >> (8 * (k & 3)));
}

/* ---- channel_stop / channel_start -------------------------------------- */

/*
 * The relocation hazard: A is parked on an acquire (idle as far as
 * idle_wait goes), B releases the semaphore while the VM drains. Stopped,
 * A must not run until started, so the copy to the new memory loses
 * nothing: no write lands in the old memory between stop and start, and
 * A's write after start lands in the new memory next to the copied data.
 */
static void test_stop_keeps_parked_channel_parked(void **state)
{
	struct vg_sim *sim = t_sim(16 * MiB, 0);
	struct tg *g = tg_new();
	struct vg_as *as;
	struct vg_mem *mx, *my, *ms;
	struct tchan *a, *b;
	struct vg_copy c;
	u32 k[VGMEM_CP_NARGS];
	u64 fence, i;
	u8 *buf = malloc(64 * 1024);
	u32 entries_a;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(ops->as_create(sim, &as), 0);
	mx = t_map_new(sim, as, VA0, 64 * 1024, VG_LOC_VRAM);
	ms = t_map_new(sim, as, VA0 + MiB, 4096, VG_LOC_VRAM);
	/* A second view of the old memory, to look at it after the remap. */
	assert_int_equal(ops->map(sim, as, VA0 + 2 * MiB, 64 * 1024, mx, 0), 0);
	a = t_chan(sim, as, g, 16);
	b = t_chan(sim, as, g, 16);
	t_bind(a);
	t_bind(b);

	/* The data to relocate: a pattern over all of X. */
	k_args(k, VA0, 64 * 1024, 0);
	k[4] = 3;
	t_kernel(a, VGMEM_K_FILL_PATTERN, k);
	t_run(a);

	/* A: wait for sem == 1, then overwrite the first half of X. */
	t_sem(a, VA0 + MiB, 1, VGMEM_SEM_OP_ACQUIRE);
	k_args(k, VA0, 32 * 1024, 0);
	k[4] = 0xaaaaaaaa;
	t_kernel(a, VGMEM_K_MEMSET, k);
	t_submit(a);
	entries_a = t_userd(a, VGMEM_USERD_ENTRIES_DONE);
	/* Drain as the core does: parked counts as idle; then stop it. */
	assert_int_equal(t_idle(a), 0);
	assert_int_equal(ops->channel_stop(sim, a->ch, T_TIMEOUT), 0);

	/* B, still draining, releases the semaphore, then one more entry. */
	t_sem(b, VA0 + MiB, 1, VGMEM_SEM_OP_RELEASE);
	t_run(b);
	t_immd(b, 0, VGMEM_MTHD_NOP, 0);
	t_run(b);
	assert_int_equal(ops->channel_stop(sim, b->ch, T_TIMEOUT), 0);
	assert_int_equal(rd32(sim, as, VA0 + MiB), 1);

	/* The engine went round since the release: A did not move. */
	assert_int_equal(t_userd(a, VGMEM_USERD_ENTRIES_DONE), entries_a);
	assert_int_not_equal(t_userd(a, VGMEM_USERD_GP_GET), a->put);

	/* Copy X to new memory and remap it, as a relocation does. */
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, 64 * 1024, &my), 0);
	c = (struct vg_copy){ mx, 0, my, 0, 64 * 1024 };
	assert_int_equal(ops->copy_submit(sim, &c, 1, &fence), 0);
	assert_int_equal(ops->copy_wait(sim, fence, NULL), 0);
	assert_int_equal(ops->map(sim, as, VA0, 64 * 1024, my, 0), 0);
	ops->tlb_flush(sim, as);

	/* Nothing landed in the old memory between stop and now. */
	assert_int_equal(vg_sim_read_va(sim, as, VA0 + 2 * MiB, buf, 64 * 1024), 0);
	for (i = 0; i < 64 * 1024; i++)
		assert_int_equal(buf[i], pat_byte(3, i));

	ops->channel_start(sim, a->ch);
	ops->channel_start(sim, b->ch);
	while (t_userd(a, VGMEM_USERD_GP_GET) != a->put)
		assert_int_equal(t_idle(a), 0);

	/* A's write is in the new memory, the copied half intact. */
	assert_int_equal(vg_sim_read_va(sim, as, VA0, buf, 64 * 1024), 0);
	for (i = 0; i < 32 * 1024; i++)
		assert_int_equal(buf[i], 0xaa);
	for (; i < 64 * 1024; i++)
		assert_int_equal(buf[i], pat_byte(3, i));
	/* And still not in the old one. */
	assert_int_equal(vg_sim_read_va(sim, as, VA0 + 2 * MiB, buf, 4), 0);
	assert_int_equal(buf[0], pat_byte(3, 0));
	assert_int_equal(a->faults + b->faults, 0);

	t_chan_free(a);
	t_chan_free(b);
	ops->unmap(sim, as, 0, 1ull << 40);
	ops->mem_free(sim, mx);
	ops->mem_free(sim, my);
	ops->mem_free(sim, ms);
	ops->as_destroy(sim, as);
	vg_sim_destroy(sim);
	tg_free(g);
	free(buf);
}

/* Entries submitted to a stopped channel wait for channel_start. */
static void test_stop_holds_new_entries(void **state)
{
	struct vg_sim *sim = t_sim(16 * MiB, 0);
	struct tg *g = tg_new();
	struct vg_as *as;
	struct vg_mem *m;
	struct tchan *a, *b;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 4096, VG_LOC_VRAM);
	a = t_chan(sim, as, g, 16);
	b = t_chan(sim, as, g, 16);
	assert_int_equal(ops->channel_stop(sim, a->ch, T_TIMEOUT), 0);
	assert_int_equal(ops->channel_stop(sim, NULL, T_TIMEOUT), -EINVAL);

	t_sem(a, VA0, 7, VGMEM_SEM_OP_RELEASE);
	t_submit(a);
	/* B's entries take rounds of the engine; A is skipped in each. */
	t_sem(b, VA0 + 8, 1, VGMEM_SEM_OP_RELEASE);
	t_run(b);
	t_sem(b, VA0 + 8, 2, VGMEM_SEM_OP_RELEASE);
	t_run(b);
	assert_int_equal(rd32(sim, as, VA0), 0);
	assert_int_equal(t_userd(a, VGMEM_USERD_GP_GET), 0);
	/* Not drained, so not idle: an idle wait runs out. */
	assert_int_equal(ops->channel_idle_wait(sim, a->ch, 5 * NSEC_PER_MSEC),
			 -ETIMEDOUT);

	ops->channel_start(sim, a->ch);
	assert_int_equal(t_idle(a), 0);
	assert_int_equal(t_userd(a, VGMEM_USERD_GP_GET), a->put);
	assert_int_equal(rd32(sim, as, VA0), 7);

	/* Stop and start again, and destroy a stopped channel. */
	assert_int_equal(ops->channel_stop(sim, a->ch, 0), 0);
	ops->channel_start(sim, a->ch);
	assert_int_equal(ops->channel_stop(sim, b->ch, T_TIMEOUT), 0);
	t_chan_free(a);
	t_chan_free(b);
	ops->unmap(sim, as, VA0, 4096);
	ops->mem_free(sim, m);
	ops->as_destroy(sim, as);
	vg_sim_destroy(sim);
	tg_free(g);
}

/*
 * A turn blocked in a guest memory access outlasts the stop's timeout:
 * -ETIMEDOUT, and the channel is left running as before.
 */
static void test_stop_timeout_leaves_running(void **state)
{
	struct vg_sim *sim = t_sim(16 * MiB, 0);
	struct tg *g = tg_new();
	struct vg_as *as;
	struct vg_mem *m;
	struct tchan *a;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 4096, VG_LOC_VRAM);
	a = t_chan(sim, as, g, 16);
	t_sem(a, VA0, 5, VGMEM_SEM_OP_RELEASE);
	g->gate_gpa = a->pb_gpa;
	__atomic_store_n(&g->gate, 1, __ATOMIC_RELEASE);
	t_submit(a);
	while (!__atomic_load_n(&g->gate_hit, __ATOMIC_ACQUIRE))
		usleep(100);
	assert_int_equal(ops->channel_stop(sim, a->ch, 20 * NSEC_PER_MSEC),
			 -ETIMEDOUT);
	__atomic_store_n(&g->gate, 0, __ATOMIC_RELEASE);
	assert_int_equal(t_idle(a), 0);
	assert_int_equal(rd32(sim, as, VA0), 5);
	/* Not stopped: a new entry runs. */
	t_sem(a, VA0, 6, VGMEM_SEM_OP_RELEASE);
	t_run(a);
	assert_int_equal(rd32(sim, as, VA0), 6);
	t_chan_free(a);
	ops->unmap(sim, as, VA0, 4096);
	ops->mem_free(sim, m);
	ops->as_destroy(sim, as);
	vg_sim_destroy(sim);
	tg_free(g);
}

/* ---- work budgets ---------------------------------------------------------- */

/*
 * Every kernel and a multi-line copy, each far bigger than one turn's
 * budget, on channel A while channel B of another address space submits
 * small jobs: the results equal the CPU's, the launches were split into
 * many turns, and B's work is all done.
 */
static void test_split_launches_match_cpu(void **state)
{
	const u64 S = VA0, T = VA0 + 4 * MiB, C = VA0 + 8 * MiB;
	const u64 G = VA0 + 12 * MiB, CE = VA0 + 13 * MiB, R = VA0 + 15 * MiB;
	const u32 nwords = (u32)(4 * MiB / 4), ngather = 250000;
	const u32 ce_lines = 600, ce_len = 3000, ce_pitch_in = 6000;
	struct vg_sim *sim = t_sim(32 * MiB, 0);
	struct tg *g = tg_new();
	struct vg_as *as1, *as2;
	struct vg_mem *m1, *m2;
	struct tchan *a, *b;
	u32 k[VGMEM_CP_NARGS], *w = malloc(4 * MiB), *out = malloc(4 * MiB);
	u64 split0, h, sum, st, i, j;
	u8 *sb = (u8 *)w, *ob = (u8 *)out;

	(void)state;
	assert_non_null(w);
	assert_non_null(out);
	assert_int_equal(ops->as_create(sim, &as1), 0);
	assert_int_equal(ops->as_create(sim, &as2), 0);
	m1 = t_map_new(sim, as1, VA0, 16 * MiB, VG_LOC_VRAM);
	m2 = t_map_new(sim, as2, VA0, MiB, VG_LOC_HOST);
	a = t_chan(sim, as1, g, 64);
	b = t_chan(sim, as2, g, 64);
	t_bind(a);
	t_bind(b);
	split0 = vg_sim_turns_split(sim);

	/* One entry per launch, all queued at once. */
	k_args(k, S, 4 * MiB, 0);
	k[4] = 5;
	t_kernel(a, VGMEM_K_FILL_PATTERN, k);
	t_submit(a);
	k_args(k, T, 4 * MiB, 0);
	k[4] = 6;
	t_kernel(a, VGMEM_K_FILL_PATTERN, k);
	t_submit(a);
	k_args(k, S, T, C);
	k[6] = nwords;
	t_kernel(a, VGMEM_K_VECADD, k);
	t_submit(a);
	k_args(k, S + 1, 4 * MiB - 3, R);
	t_kernel(a, VGMEM_K_CHECKSUM, k);
	t_submit(a);
	k_args(k, S, 4 * MiB, 0);
	k[4] = 4;
	t_args64(k, 5, R + 8);
	t_kernel(a, VGMEM_K_STRIDED, k);
	t_submit(a);
	k_args(k, S, 4 * MiB, G);
	k[6] = ngather;
	k[7] = 77;
	t_kernel(a, VGMEM_K_GATHER, k);
	t_submit(a);
	t_ce(a, T + 2, CE, ce_pitch_in, ce_len, ce_len, ce_lines,
	     VGMEM_CE_LAUNCH_MULTI_LINE);
	t_submit(a);

	/* Meanwhile B's small jobs, each its own entry. */
	for (i = 0; i < 32; i++) {
		k_args(k, VA0 + i * 4096, 4096, 0);
		k[4] = (u32)i * 0x01010101u;
		t_kernel(b, VGMEM_K_MEMSET, k);
		t_submit(b);
	}
	assert_int_equal(t_idle(b), 0);
	assert_int_equal(t_userd(b, VGMEM_USERD_GP_GET), b->put);
	while (t_userd(a, VGMEM_USERD_GP_GET) != a->put)
		assert_int_equal(t_idle(a), 0);
	assert_int_equal(t_userd(a, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t_userd(b, VGMEM_USERD_ERROR), 0);

	/* STRIDED alone is 2^20 elements: hundreds of turns. */
	assert_true(vg_sim_turns_split(sim) - split0 >= 256);

	/* CPU references. */
	for (i = 0; i < 32; i++)
		assert_int_equal(rd32(sim, as2, VA0 + i * 4096 + 4092),
				 (u32)i * 0x01010101u);
	for (i = 0; i < nwords; i++)
		w[i] = vgmem_pattern_word(5, i);
	assert_int_equal(vg_sim_read_va(sim, as1, S, out, 4 * MiB), 0);
	assert_memory_equal(out, w, 4 * MiB);
	h = t_fnv(sb + 1, 4 * MiB - 3);
	assert_int_equal(rd64(sim, as1, R), h);
	for (sum = 0, i = 0; i < nwords; i++)
		sum += w[i];
	assert_int_equal(rd64(sim, as1, R + 8), sum);
	assert_int_equal(vg_sim_read_va(sim, as1, G, out, ngather * 4ull), 0);
	for (st = 77, i = 0; i < ngather; i++)
		assert_int_equal(out[i], w[vg_sim_gather_index(&st, nwords)]);
	assert_int_equal(vg_sim_read_va(sim, as1, C, out, 4 * MiB), 0);
	for (i = 0; i < nwords; i++)
		assert_int_equal(out[i], w[i] + vgmem_pattern_word(6, i));
	/* The copy: line j from T + 2 + j * pitch_in, packed at CE. */
	assert_int_equal(vg_sim_read_va(sim, as1, CE, out,
					(u64)ce_lines * ce_len), 0);
	for (j = 0; j < ce_lines; j++)
		for (i = 0; i < ce_len; i += 7)
			assert_int_equal(ob[j * ce_len + i],
					 pat_byte(6, 2 + j * ce_pitch_in + i));
	assert_int_equal(a->faults + b->faults, 0);

	t_chan_free(a);
	t_chan_free(b);
	ops->unmap(sim, as1, VA0, 16 * MiB);
	ops->unmap(sim, as2, VA0, MiB);
	ops->mem_free(sim, m1);
	ops->mem_free(sim, m2);
	ops->as_destroy(sim, as1);
	ops->as_destroy(sim, as2);
	vg_sim_destroy(sim);
	tg_free(g);
	free(w);
	free(out);
}

/*
 * A gather of 2^24 elements on one address space does not hold up a small
 * job of another: the small job completes while the gather still runs,
 * and the gather's channel stops and goes away without finishing it.
 */
static void test_small_job_during_huge_gather(void **state)
{
	const u32 n = 1u << 24;
	struct vg_sim *sim = t_sim(16 * MiB, 0);
	struct tg *g = tg_new();
	struct vg_as *as1, *as2;
	struct vg_mem *src, *dst, *m2;
	struct tchan *a, *b;
	u32 k[VGMEM_CP_NARGS];
	u64 i;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as1), 0);
	assert_int_equal(ops->as_create(sim, &as2), 0);
	src = t_map_new(sim, as1, VA0, 64 * 1024, VG_LOC_VRAM);
	/* 64 MiB of destination VA: one 2 MiB mem mapped 32 times. */
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_HOST, 2 * MiB, &dst), 0);
	for (i = 0; i < 32; i++)
		assert_int_equal(ops->map(sim, as1, VA0 + (1 + i) * 2 * MiB,
					  2 * MiB, dst, 0), 0);
	m2 = t_map_new(sim, as2, VA0, 4096, VG_LOC_VRAM);
	a = t_chan(sim, as1, g, 16);
	b = t_chan(sim, as2, g, 16);
	t_bind(a);
	t_bind(b);

	k_args(k, VA0, 64 * 1024, VA0 + 2 * MiB);
	k[6] = n;
	k[7] = 1;
	t_kernel(a, VGMEM_K_GATHER, k);
	t_submit(a);
	wait_launches(sim, as1, 1);

	k_args(k, VA0, 4096, 0);
	k[4] = 0x5a5a5a5a;
	t_kernel(b, VGMEM_K_MEMSET, k);
	t_run(b);
	assert_int_equal(rd32(sim, as2, VA0 + 4092), 0x5a5a5a5a);
	/* The gather is still going. */
	assert_int_equal(t_userd(a, VGMEM_USERD_GP_GET), 0);

	/* Stop waits for one turn, not for the gather. */
	assert_int_equal(ops->channel_stop(sim, a->ch, T_TIMEOUT), 0);
	assert_int_equal(t_userd(a, VGMEM_USERD_GP_GET), 0);
	t_chan_free(a);
	t_chan_free(b);
	ops->unmap(sim, as1, 0, 1ull << 40);
	ops->unmap(sim, as2, VA0, 4096);
	ops->mem_free(sim, src);
	ops->mem_free(sim, dst);
	ops->mem_free(sim, m2);
	ops->as_destroy(sim, as1);
	ops->as_destroy(sim, as2);
	vg_sim_destroy(sim);
	tg_free(g);
}

/*
 * A copy of 2^32 - 1 lines (pitch 0: the same 64 KiB again and again) would
 * run for hours: stop returns within a turn, a stopped copy touches no
 * memory while other channels run, start resumes it, destroy ends it.
 */
static void test_endless_copy_stops_and_resumes(void **state)
{
	struct vg_sim *sim = t_sim(16 * MiB, 0);
	struct tg *g = tg_new();
	struct vg_as *as1, *as2;
	struct vg_mem *m1, *m2;
	struct tchan *a, *b;
	u64 before;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as1), 0);
	assert_int_equal(ops->as_create(sim, &as2), 0);
	m1 = t_map_new(sim, as1, VA0, MiB, VG_LOC_VRAM);
	m2 = t_map_new(sim, as2, VA0, 4096, VG_LOC_VRAM);
	a = t_chan(sim, as1, g, 16);
	b = t_chan(sim, as2, g, 16);
	t_bind(a);
	t_bind(b);

	t_ce(a, VA0, VA0 + 512 * 1024, 0, 0, 64 * 1024, 0xffffffffu,
	     VGMEM_CE_LAUNCH_MULTI_LINE);
	t_submit(a);
	wait_launches(sim, as1, 1);
	assert_int_equal(ops->channel_stop(sim, a->ch, T_TIMEOUT), 0);

	/* Stopped: B's entries go round the engine, A touches nothing. */
	before = bytes_touched(sim, as1);
	t_sem(b, VA0, 1, VGMEM_SEM_OP_RELEASE);
	t_run(b);
	t_sem(b, VA0, 2, VGMEM_SEM_OP_RELEASE);
	t_run(b);
	assert_int_equal(bytes_touched(sim, as1), before);

	/* Started, it goes on from where it was. */
	ops->channel_start(sim, a->ch);
	while (bytes_touched(sim, as1) == before)
		usleep(200);
	assert_int_equal(t_userd(a, VGMEM_USERD_GP_GET), 0);
	assert_int_equal(launches(sim, as1), 1);
	/* Destroyed mid-copy: waits for one turn only. */
	t_chan_free(a);
	t_chan_free(b);
	ops->unmap(sim, as1, VA0, MiB);
	ops->unmap(sim, as2, VA0, 4096);
	ops->mem_free(sim, m1);
	ops->mem_free(sim, m2);
	ops->as_destroy(sim, as1);
	ops->as_destroy(sim, as2);
	vg_sim_destroy(sim);
	tg_free(g);
}

/* A pushbuffer of many methods in one entry is split between turns too. */
static void test_long_pushbuffer_is_split(void **state)
{
	struct vg_sim *sim = t_sim(16 * MiB, 0);
	struct tg *g = tg_new();
	struct vg_as *as;
	struct vg_mem *m;
	struct tchan *a;
	u64 split0;
	u32 i;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 4096, VG_LOC_VRAM);
	a = t_chan(sim, as, g, 16);
	split0 = vg_sim_turns_split(sim);
	/* 3000 releases (12000 methods) in one entry: the last one wins. */
	for (i = 1; i <= 3000; i++)
		t_sem(a, VA0, i, VGMEM_SEM_OP_RELEASE);
	t_run(a);
	assert_int_equal(rd32(sim, as, VA0), 3000);
	assert_true(vg_sim_turns_split(sim) > split0);
	t_chan_free(a);
	ops->unmap(sim, as, VA0, 4096);
	ops->mem_free(sim, m);
	ops->as_destroy(sim, as);
	vg_sim_destroy(sim);
	tg_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stop_keeps_parked_channel_parked),
		cmocka_unit_test(test_stop_holds_new_entries),
		cmocka_unit_test(test_stop_timeout_leaves_running),
		cmocka_unit_test(test_split_launches_match_cpu),
		cmocka_unit_test(test_small_job_during_huge_gather),
		cmocka_unit_test(test_endless_copy_stops_and_resumes),
		cmocka_unit_test(test_long_pushbuffer_is_split),
	};

	ops = vg_sim_gpu_ops();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
