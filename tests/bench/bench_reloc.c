// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_reloc: relocation throughput of the software GPU's copy engine
 * against plain memcpy of the same bytes. One batch is 64 chunks of 2 MiB
 * (128 MiB) copied VRAM -> host and back with copy_submit/copy_wait, as the
 * relocation engine does; the baseline memcpy's the same 2 MiB pieces
 * between two buffers of the same size, both ways. Runs alternate
 * (ABAB...) and medians are compared. Goal: RATIO (sim / memcpy
 * throughput) >= 0.9. Timing never fails the benchmark.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host-module/sim/sim.h"
#include "benchlib.h"

#define PIECE		(2ull << 20)
#define NR_PIECES	64
#define REPS		9

static double run_sim(void *b, const struct vg_gpu_ops *ops,
		      struct vg_copy *out, struct vg_copy *in)
{
	u64 fence, dev_ns, t0;
	int err;

	t0 = bench_now_ns();
	err = ops->copy_submit(b, out, NR_PIECES, &fence);
	if (!err)
		err = ops->copy_wait(b, fence, &dev_ns);
	if (!err)
		err = ops->copy_submit(b, in, NR_PIECES, &fence);
	if (!err)
		err = ops->copy_wait(b, fence, &dev_ns);
	if (err) {
		fprintf(stderr, "bench_reloc: copy failed: %d\n", err);
		return -1;
	}
	return (double)(bench_now_ns() - t0);
}

static double run_memcpy(u8 **a, u8 **h)
{
	u64 t0 = bench_now_ns();
	unsigned int i;

	for (i = 0; i < NR_PIECES; i++)
		memcpy(h[i], a[i], PIECE);
	for (i = 0; i < NR_PIECES; i++)
		memcpy(a[i], h[i], PIECE);
	/* Keep the compiler from dropping the copies. */
	__asm__ __volatile__("" : : "r"(a[0]), "r"(h[0]) : "memory");
	return (double)(bench_now_ns() - t0);
}

int main(void)
{
	struct vg_sim_config cfg = { .vram_size = NR_PIECES * PIECE + (16ull << 20) };
	const struct vg_gpu_ops *ops = vg_sim_gpu_ops();
	struct vg_mem *vram[NR_PIECES], *host[NR_PIECES];
	struct vg_copy out[NR_PIECES], in[NR_PIECES];
	u8 *a[NR_PIECES], *h[NR_PIECES];
	double ts[REPS], tm[REPS], sim_ns, mem_ns, bytes;
	struct vg_sim *sim;
	unsigned int i, r;
	int err;

	err = vg_sim_create(&cfg, &sim);
	if (err) {
		fprintf(stderr, "bench_reloc: vg_sim_create: %d\n", err);
		return 1;
	}
	for (i = 0; i < NR_PIECES; i++) {
		err = ops->mem_alloc(sim, VG_LOC_VRAM, PIECE, &vram[i]);
		if (!err)
			err = ops->mem_alloc(sim, VG_LOC_HOST, PIECE, &host[i]);
		a[i] = malloc(PIECE);
		h[i] = malloc(PIECE);
		if (err || !a[i] || !h[i]) {
			fprintf(stderr, "bench_reloc: allocation failed\n");
			return 1;
		}
		memset(a[i], (int)i, PIECE);
		memset(h[i], 0, PIECE);
		out[i] = (struct vg_copy){ vram[i], 0, host[i], 0, PIECE };
		in[i] = (struct vg_copy){ host[i], 0, vram[i], 0, PIECE };
	}
	/* Warm both: first touches fault pages in. */
	run_sim(sim, ops, out, in);
	run_memcpy(a, h);
	for (r = 0; r < REPS; r++) {
		ts[r] = run_sim(sim, ops, out, in);
		tm[r] = run_memcpy(a, h);
		if (ts[r] < 0)
			return 1;
	}
	sim_ns = bench_median(ts, REPS);
	mem_ns = bench_median(tm, REPS);
	bytes = 2.0 * NR_PIECES * PIECE;
	printf("bench_reloc: %u x %llu KiB chunks VRAM->host->VRAM per run, %u runs (median)\n",
	       NR_PIECES, (unsigned long long)(PIECE >> 10), REPS);
	printf("  sim copy engine: %8.2f ms  %7.2f GiB/s\n", sim_ns / 1e6,
	       bytes / sim_ns * 1e9 / (1ull << 30));
	printf("  plain memcpy:    %8.2f ms  %7.2f GiB/s\n", mem_ns / 1e6,
	       bytes / mem_ns * 1e9 / (1ull << 30));
	bench_ratio("bench_reloc: sim throughput / memcpy throughput",
		    mem_ns / sim_ns, 0.9, 0);

	for (i = 0; i < NR_PIECES; i++) {
		ops->mem_free(sim, vram[i]);
		ops->mem_free(sim, host[i]);
		free(a[i]);
		free(h[i]);
	}
	vg_sim_destroy(sim);
	return 0;
}
