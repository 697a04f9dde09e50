// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_merge: GAIA's 3-way merge of one 4 KiB page
 * (vg_lrc_merge_page, core/lrc/merge.c) for several fractions of changed
 * bytes, side by side with the least any merge must do: a plain memcmp of
 * the page against its base and a memcpy of it. Goal: at most 0.5 us per
 * page (GAIA reports 1.4 us); the RATIO line is merge time / 0.5 us for the
 * worst fraction. The portable 64-bit-word implementation (the one the
 * kernel runs: no SIMD there) is timed in the same runs and printed too.
 *
 * 256 pages (1 MiB each of base, writer and destination: beyond L2, mostly
 * within L3) are merged in a row; a run's time / 256 is one sample, the
 * median of RUNS samples is reported, merge and baseline runs interleaved
 * so machine noise hits both alike. Changed bytes are scattered at random
 * (the worst case for the word-at-a-time loop: most words differ only in
 * part) except "1 word" (8 adjacent bytes) and "100%" (every byte).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host-module/core/lrc/lrc_merge.h"
#include "benchlib.h"

#ifndef NP
#define NP	256
#endif
#define PS	VG_LRC_PAGE_SIZE
#define RUNS	201
#define GOAL_NS	500.0

static u8 *base, *src, *dst;
static double tm[RUNS], ts[RUNS], tb[RUNS];
static u64 rs = 7;
static volatile u32 sink;

static u32 rnd(u32 bound)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (u32)(rs % bound);
}

static void *page_alloc(size_t n)
{
	void *p = aligned_alloc(64, n);

	if (!p) {
		fprintf(stderr, "bench_lrc_merge: out of memory\n");
		exit(1);
	}
	return p;
}

/* src = base with per-mille of its bytes changed (-1: one word). */
static void setup(int permille)
{
	u32 p, i;

	for (i = 0; i < NP * PS; i++)
		base[i] = (u8)rnd(256);
	memcpy(src, base, (size_t)NP * PS);
	memcpy(dst, base, (size_t)NP * PS);
	for (p = 0; p < NP; p++) {
		u8 *s = src + (size_t)p * PS;

		if (permille < 0) {
			u32 w = rnd(PS / 8) * 8;

			for (i = 0; i < 8; i++)
				s[w + i] ^= 0x5a;
			continue;
		}
		for (i = 0; i < PS; i++)
			if (permille == 1000 || rnd(1000) < (u32)permille)
				s[i] ^= (u8)(1 + rnd(255));
	}
}

typedef u32 (*merge_fn)(void *dst, const void *base, const void *src);

static double run_merge(merge_fn merge)
{
	u64 t0 = bench_now_ns();
	u32 p, n = 0;

	for (p = 0; p < NP; p++)
		n += merge(dst + (size_t)p * PS, base + (size_t)p * PS,
				       src + (size_t)p * PS);
	sink = n;
	return (double)(bench_now_ns() - t0) / NP;
}

static double run_plain(void)
{
	u64 t0 = bench_now_ns();
	u32 p, n = 0;

	for (p = 0; p < NP; p++) {
		const u8 *s = src + (size_t)p * PS;

		if (memcmp(s, base + (size_t)p * PS, PS)) {
			memcpy(dst + (size_t)p * PS, s, PS);
			n++;
		}
	}
	sink = n;
	return (double)(bench_now_ns() - t0) / NP;
}

int main(void)
{
	static const struct {
		const char *name;
		int permille;
	} fr[] = {
		{ "0%", 0 }, { "1 word", -1 }, { "10%", 100 }, { "50%", 500 },
		{ "100%", 1000 },
	};
	double worst = 0, worst_sw = 0;
	u32 f, r;

	base = page_alloc((size_t)NP * PS);
	src = page_alloc((size_t)NP * PS);
	dst = page_alloc((size_t)NP * PS);
	printf("bench_lrc_merge: 3-way merge of a 4 KiB page vs memcmp+memcpy, "
	       "%u pages per run, median of %u runs\n", NP, RUNS);
	for (f = 0; f < ARRAY_SIZE(fr); f++) {
		double m, sw, b;

		setup(fr[f].permille);
		run_merge(vg_lrc_merge_page);	/* warm up: caches, TLB */
		run_plain();
		for (r = 0; r < RUNS; r++) {
			tm[r] = run_merge(vg_lrc_merge_page);
			ts[r] = run_merge(vg_lrc_merge_page_swar);
			tb[r] = run_plain();
		}
		m = bench_median(tm, RUNS);
		sw = bench_median(ts, RUNS);
		b = bench_median(tb, RUNS);
		printf("  changed %-6s: merge %6.1f ns/page (x%.2f), "
		       "portable/kernel path %6.1f ns/page (x%.2f), "
		       "memcmp+memcpy %6.1f ns/page\n",
		       fr[f].name, m, m / b, sw, sw / b, b);
		if (sw > worst_sw)
			worst_sw = sw;
		if (m > worst)
			worst = m;
	}
	printf("  worst merge %.1f ns/page (portable/kernel path %.1f) "
	       "vs goal %.0f ns (GAIA: 1400 ns)\n",
	       worst, worst_sw, GOAL_NS);
	bench_ratio("lrc merge per 4 KiB page / 0.5 us (worst fraction)",
		    worst / GOAL_NS, 1.0, 1);
	free(base);
	free(src);
	free(dst);
	return 0;
}
