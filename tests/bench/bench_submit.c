// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_submit: the submit path of an unpressured VM against the bare
 * engine. GPUswap's promise is native performance while there is no
 * memory pressure; here "native" is the software GPU driven directly.
 *
 *   A (vgmem):  a guest of the userspace host submits through libvgmem
 *               (pushbuffer ring, GPFIFO, GP_PUT through the transport and
 *               the core's USERD logic) and waits on GP_GET the same way.
 *   B (bare):   the same sim, no core: a channel made with the GPU ops,
 *               the GPFIFO and pushbuffers written straight into guest
 *               memory, GP_PUT written straight into the real USERD page.
 *
 * Both run the identical pushbuffers: per entry one MEMSET kernel launch
 * over 64 KiB of a VRAM buffer; a run is 256 entries submitted one by one,
 * then waiting for the last. Runs alternate (ABAB...); medians compared.
 * Goal: RATIO (A / B time) <= 1.01. Timing never fails the benchmark.
 *
 * Time drifts with the machine's load; instruction counts do not. So the
 * same goal is measured a second way, when valgrind is installed: each
 * side runs alone (--side vgmem|bare) under callgrind, counting only the
 * submit path, in whichever thread it runs: the guest's submission
 * (A: vgmem_pb_raw + vgmem_submit, all they call down to the core's
 * USERD write; B: b_push) and the engine's work for each entry (fetch,
 * pushbuffer, completion: sim_gp_fetch, sim_pb_run, sim_gp_complete).
 * Waiting is left out on both sides: how often a poll finds nothing
 * depends on thread timing, not on the path. RATIO = A / B instructions
 * per entry, the same goal.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host-module/user/host.h"
#include "benchlib.h"

#define ENTRIES		1024		/* GPFIFO ring */
#define PER_RUN		256		/* entries per run */
#define REPS		21
#define BUF_VA		VGMEM_VA_START
#define BUF_SIZE	(1ull << 20)
#define FILL_BYTES	(64u << 10)
#define ENTRY_DW	12
#define VRAM		(64ull << 20)

/* One launch: KERNEL + 8 ARGS incrementing, then LAUNCH. */
static void build_entry(u32 *dw, u32 value)
{
	u64 dst = BUF_VA;

	dw[0] = VGMEM_PKHDR(VGMEM_PKHDR_INC, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, 9);
	dw[1] = VGMEM_K_MEMSET;
	dw[2] = (u32)dst;
	dw[3] = (u32)(dst >> 32);
	dw[4] = FILL_BYTES;
	dw[5] = 0;
	dw[6] = value;
	dw[7] = dw[8] = dw[9] = 0;
	dw[10] = VGMEM_PKHDR(VGMEM_PKHDR_INC, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 1);
	dw[11] = 0;
}

/* The same back-off as libvgmem's waits, so both sides poll alike. */
static void relax(unsigned int spins)
{
	struct timespec ts = { 0, spins < 1000 ? 10000 : 100000 };

	if (spins < 64)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

/* ---- A: through libvgmem, the host and the core ---- */

struct side_a {
	struct vg_host *h;
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
};

static int a_setup(struct side_a *a)
{
	struct vg_host_config cfg;
	uint64_t va = BUF_VA;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = VRAM;
	cfg.gpu.no_return_worker = true;
	err = vg_host_create(&cfg, &a->h);
	if (!err)
		err = vg_host_guest_create(a->h, "bench", 0, 0, &a->g);
	if (!err)
		err = vgmem_bo_alloc_at(vg_host_guest_dev(a->g), BUF_SIZE, va);
	if (!err)
		err = vgmem_chan_create(vg_host_guest_dev(a->g), ENTRIES, 256 << 10,
					0, &a->ch);
	return err;
}

static double a_run(struct side_a *a)
{
	u32 dw[ENTRY_DW];
	uint64_t seq = 0, t0;
	unsigned int i;
	int err = 0;

	t0 = bench_now_ns();
	for (i = 0; i < PER_RUN && !err; i++) {
		build_entry(dw, i);
		vgmem_pb_raw(a->ch, dw, ENTRY_DW);
		err = vgmem_submit(a->ch, &seq);
	}
	if (!err)
		err = vgmem_wait(a->ch, seq, 0);
	if (err) {
		fprintf(stderr, "bench_submit: vgmem side failed: %d\n", err);
		return -1;
	}
	return (double)(bench_now_ns() - t0);
}

static void a_teardown(struct side_a *a)
{
	if (a->ch)
		vgmem_chan_destroy(a->ch);
	if (a->g)
		vg_host_guest_destroy(a->g);
	if (a->h)
		vg_host_destroy(a->h);
}

/* ---- B: the bare engine ---- */

#define GM_SIZE		(1ull << 20)
#define GM_GPFIFO	0x0
#define GM_PB		0x10000
#define PB_SLOT		64		/* bytes of pushbuffer per ring slot */

struct side_b {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct vg_as *as;
	struct vg_mem *buf;
	struct vg_bchan *bch;
	volatile u32 *userd;
	u8 *gm;
	struct vg_guest_mem gmem;
	u32 put;		/* entries submitted, free running */
};

static int gm_read(void *priv, u64 gpa, void *buf, size_t len)
{
	struct side_b *b = priv;

	if (gpa > GM_SIZE || len > GM_SIZE - gpa)
		return -EFAULT;
	memcpy(buf, b->gm + gpa, len);
	return 0;
}

static int gm_write(void *priv, u64 gpa, const void *buf, size_t len)
{
	struct side_b *b = priv;

	if (gpa > GM_SIZE || len > GM_SIZE - gpa)
		return -EFAULT;
	memcpy(b->gm + gpa, buf, len);
	return 0;
}

static u32 userd_rd(struct side_b *b, u32 off)
{
	return __atomic_load_n(&b->userd[off / 4], __ATOMIC_ACQUIRE);
}

/* Not inlined: callgrind counts it by name (see the top). */
static noinline void b_push(struct side_b *b, const u32 *dw, u32 ndw)
{
	u32 slot = b->put % ENTRIES;
	u64 pb = GM_PB + (u64)slot * PB_SLOT;
	u64 *ring = (u64 *)(b->gm + GM_GPFIFO);

	memcpy(b->gm + pb, dw, ndw * 4);
	ring[slot] = VGMEM_GP_ENTRY(pb, ndw);
	b->put++;
	__atomic_store_n(&b->userd[VGMEM_USERD_GP_PUT / 4], b->put % ENTRIES,
			 __ATOMIC_RELEASE);
}

static int b_wait(struct side_b *b)
{
	unsigned int spins = 0;

	while (userd_rd(b, VGMEM_USERD_GP_GET) != b->put % ENTRIES) {
		if (userd_rd(b, VGMEM_USERD_ERROR))
			return -EIO;
		relax(spins++);
	}
	return 0;
}

static int b_setup(struct side_b *b)
{
	struct vg_sim_config cfg = { .vram_size = VRAM };
	struct vg_channel_desc desc;
	u32 bind[2];
	void *userd;
	int err;

	b->gm = calloc(1, GM_SIZE);
	if (!b->gm)
		return -ENOMEM;
	b->gmem = (struct vg_guest_mem){ gm_read, gm_write, b };
	err = vg_sim_create(&cfg, &b->sim);
	if (err)
		return err;
	b->ops = vg_sim_gpu_ops();
	err = b->ops->as_create(b->sim, &b->as);
	if (!err)
		err = b->ops->mem_alloc(b->sim, VG_LOC_VRAM, BUF_SIZE, &b->buf);
	if (!err)
		err = b->ops->map(b->sim, b->as, BUF_VA, BUF_SIZE, b->buf, 0);
	if (err)
		return err;
	memset(&desc, 0, sizeof(desc));
	desc.gpfifo_gpa = GM_GPFIFO;
	desc.gpfifo_entries = ENTRIES;
	desc.gmem = &b->gmem;
	err = b->ops->channel_create(b->sim, b->as, &desc, &b->bch, &userd);
	if (err)
		return err;
	b->userd = userd;
	bind[0] = VGMEM_PKHDR(VGMEM_PKHDR_INC, VGMEM_SUBC_COMPUTE, VGMEM_MTHD_SET_OBJECT, 1);
	bind[1] = VGMEM_CLASS_COMPUTE;
	b_push(b, bind, 2);
	return b_wait(b);
}

static double b_run(struct side_b *b)
{
	u32 dw[ENTRY_DW];
	uint64_t t0;
	unsigned int i;

	t0 = bench_now_ns();
	for (i = 0; i < PER_RUN; i++) {
		build_entry(dw, i);
		b_push(b, dw, ENTRY_DW);
	}
	if (b_wait(b)) {
		fprintf(stderr, "bench_submit: bare side channel error %u\n",
			userd_rd(b, VGMEM_USERD_ERROR));
		return -1;
	}
	return (double)(bench_now_ns() - t0);
}

static void b_teardown(struct side_b *b)
{
	if (b->bch)
		b->ops->channel_destroy(b->sim, b->bch);
	if (b->as) {
		b->ops->unmap(b->sim, b->as, BUF_VA, BUF_SIZE);
		b->ops->as_destroy(b->sim, b->as);
	}
	if (b->buf)
		b->ops->mem_free(b->sim, b->buf);
	if (b->sim)
		vg_sim_destroy(b->sim);
	free(b->gm);
}

/* Instructions of one side run alone with runs runs (see the top), or 0. */
static unsigned long long cg_count(const char *side, unsigned int runs)
{
	static const char *const a_fns[] = {
		"vgmem_pb_raw", "vgmem_submit",
		"sim_gp_fetch", "sim_pb_run", "sim_gp_complete", NULL,
	};
	static const char *const b_fns[] = {
		"b_push",
		"sim_gp_fetch", "sim_pb_run", "sim_gp_complete", NULL,
	};
	const char *args[] = { "--side", side, NULL, NULL };
	char nruns[16];

	snprintf(nruns, sizeof(nruns), "%u", runs);
	args[2] = nruns;
	return bench_callgrind(strcmp(side, "vgmem") ? b_fns : a_fns, args);
}

/*
 * Instructions per entry of one side: the difference between three runs
 * and one, so that setup and the first run's misses cancel out. 0: not
 * measured.
 */
static double cg_side(const char *side)
{
	unsigned long long one = cg_count(side, 1);
	unsigned long long three = one ? cg_count(side, 3) : 0;

	if (!one || three <= one)
		return 0;
	return (double)(three - one) / (2 * PER_RUN);
}

/* --side vgmem|bare RUNS: that side alone, for cg_count(); 0 or 1. */
static int one_side(const char *side, unsigned int runs)
{
	struct side_a a = { 0 };
	struct side_b b = { 0 };
	bool va = !strcmp(side, "vgmem");
	unsigned int r;
	int err = 0;

	err = va ? a_setup(&a) : b_setup(&b);
	for (r = 0; !err && r < runs; r++)
		err = (va ? a_run(&a) : b_run(&b)) < 0;
	if (va)
		a_teardown(&a);
	else
		b_teardown(&b);
	return !!err;
}

int main(int argc, char **argv)
{
	struct side_a a = { 0 };
	struct side_b b = { 0 };
	double ta[REPS], tb[REPS], ma, mb, ia, ib;
	unsigned int r;
	int err;

	if (argc == 4 && !strcmp(argv[1], "--side") &&
	    (!strcmp(argv[2], "vgmem") || !strcmp(argv[2], "bare")))
		return one_side(argv[2], (unsigned int)strtoul(argv[3], NULL, 0));
	if (argc != 1) {
		printf("usage: %s [--side vgmem|bare RUNS]\n"
		       "  --side  one side alone, RUNS runs, for callgrind (see the source)\n",
		       argv[0]);
		return strcmp(argv[1], "--help") ? 2 : 0;
	}

	err = a_setup(&a);
	if (err) {
		fprintf(stderr, "bench_submit: vgmem side setup: %d\n", err);
		return 1;
	}
	err = b_setup(&b);
	if (err) {
		fprintf(stderr, "bench_submit: bare side setup: %d\n", err);
		return 1;
	}
	/* Warm up both (page faults, caches). */
	if (a_run(&a) < 0 || b_run(&b) < 0)
		return 1;
	for (r = 0; r < REPS; r++) {
		ta[r] = a_run(&a);
		tb[r] = b_run(&b);
		if (ta[r] < 0 || tb[r] < 0)
			return 1;
	}
	ma = bench_median(ta, REPS);
	mb = bench_median(tb, REPS);
	printf("bench_submit: %u entries (MEMSET %u KiB each) per run, %u runs ABAB (median)\n",
	       PER_RUN, FILL_BYTES >> 10, REPS);
	printf("  vgmem (libvgmem + host + core): %8.3f ms  %6.2f us/entry\n",
	       ma / 1e6, ma / 1e3 / PER_RUN);
	printf("  bare engine (GPU ops):      %8.3f ms  %6.2f us/entry\n",
	       mb / 1e6, mb / 1e3 / PER_RUN);
	bench_ratio("bench_submit: vgmem / bare time", ma / mb, 1.01, 1);
	a_teardown(&a);
	b_teardown(&b);
	ia = cg_side("vgmem");
	ib = ia > 0 ? cg_side("bare") : 0;
	if (ia > 0 && ib > 0) {
		printf("  instructions per entry (callgrind): vgmem %.0f, bare %.0f\n",
		       ia, ib);
		bench_ratio("bench_submit: vgmem / bare instructions", ia / ib,
			    1.01, 1);
	} else {
		printf("bench_submit: vgmem / bare instructions: not measured (needs valgrind)\n");
	}
	return 0;
}
