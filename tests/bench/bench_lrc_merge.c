// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_merge: GAIA's 3-way merge of one 4 KiB page
 * (vg_lrc_merge_page, core/lrc/merge.c) for several fractions of changed
 * bytes, side by side with the least any merge must do: a plain memcmp of
 * the page against its base and a memcpy of it. Goal: at most 0.5 us per
 * page (GAIA reports 1.4 us); the RATIO line is merge time / 0.5 us for the
 * worst fraction.
 *
 * Timed in the same runs:
 *  - "merge": vg_lrc_merge_page(), i.e. os_simd_begin + the vector loop
 *    (core/lrc/merge_vec.c) + os_simd_end. The vector loop is the same C
 *    the kernel compiles (there with -msse -msse2, between
 *    kernel_fpu_begin/end, which userspace does not pay: see below);
 *  - "portable": vg_lrc_merge_page_swar(), the 64-bit-word fallback used
 *    where vector registers may not be;
 *  - "kernel .o" (only when linked in, VG_BENCH_KOBJ): the very object
 *    file Kbuild produced for the module, host-module/core/lrc/merge_vec.o,
 *    its one function renamed, called here. Its only outside references
 *    are __fentry__ (ftrace; a nop in a running kernel) and
 *    __x86_return_thunk (the retbleed return), stubbed below with a ret.
 *    Build (after `make module`):
 *      objcopy --redefine-sym vg_lrc_merge_page_vec=vg_kobj_merge_page_vec \
 *        host-module/core/lrc/merge_vec.o /tmp/merge_vec_k.o
 *      gcc -O2 -DVG_BENCH_KOBJ -I. -D_GNU_SOURCE -no-pie \
 *        tests/bench/bench_lrc_merge.c tests/bench/benchlib.c \
 *        /tmp/merge_vec_k.o build/lib/libvgcore.a -lpthread -lm \
 *        -o /tmp/bench_lrc_merge_k
 *
 * The kernel adds kernel_fpu_begin/end per page: the first in a task
 * saves the user's FPU registers (an XSAVE, a few hundred ns, once per
 * system call or never in a kthread), the others cost preempt off/on
 * and an LDMXCSR, a few ns.
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

#include "host-module/core/lrc/lrc_merge.h"
#include "host-module/core/vg_rand.h"
#include "benchlib.h"

#ifndef NP
#define NP	256
#endif
#define PS	VG_LRC_PAGE_SIZE
#define RUNS	201
#define GOAL_NS	500.0

static u8 *base, *src, *dst;
static double tm[RUNS], ts[RUNS], tb[RUNS], tk[RUNS];
static struct vg_rand rs;
static volatile u32 sink;



/* src = base with per-mille of its bytes changed (-1: one word). */
static void setup(int permille)
{
	u32 p, i;

	for (i = 0; i < NP * PS; i++)
		base[i] = (u8)vg_rand_below(&rs, 256);
	memcpy(src, base, (size_t)NP * PS);
	memcpy(dst, base, (size_t)NP * PS);
	for (p = 0; p < NP; p++) {
		u8 *s = src + (size_t)p * PS;

		if (permille < 0) {
			u32 w = vg_rand_below(&rs, PS / 8) * 8;

			for (i = 0; i < 8; i++)
				s[w + i] ^= 0x5a;
			continue;
		}
		for (i = 0; i < PS; i++)
			if (permille == 1000 || vg_rand_below(&rs, 1000) < (u32)permille)
				s[i] ^= (u8)(1 + vg_rand_below(&rs, 255));
	}
}

typedef u32 (*merge_fn)(void *dst, const void *base, const void *src);

#ifdef VG_BENCH_KOBJ
u32 vg_kobj_merge_page_vec(void *dst, const void *base, const void *src);
/* the kernel object's two outside references: see the top comment */
__asm__(".text\n.globl __fentry__\n__fentry__: ret\n"
	".globl __x86_return_thunk\n__x86_return_thunk: ret\n");
#define KOBJ_FN vg_kobj_merge_page_vec
#else
#define KOBJ_FN NULL
#endif

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
	const merge_fn kobj = KOBJ_FN;
	double worst = 0, worst_sw = 0, worst_k = 0;
	u32 f, r;

	vg_rand_seed(&rs, 7);
	base = bench_alloc((size_t)NP * PS);
	src = bench_alloc((size_t)NP * PS);
	dst = bench_alloc((size_t)NP * PS);
	printf("bench_lrc_merge: 3-way merge of a 4 KiB page vs memcmp+memcpy, "
	       "%u pages per run, median of %u runs\n", NP, RUNS);
	printf("  merge = vector loop (merge_vec.c, what the kernel runs), "
	       "portable = 64-bit-word fallback%s\n",
	       kobj ? ", kernel .o = the module's own merge_vec.o" : "");
	for (f = 0; f < ARRAY_SIZE(fr); f++) {
		double m, sw, b, k = 0;

		setup(fr[f].permille);
		run_merge(vg_lrc_merge_page);	/* warm up: caches, TLB */
		run_plain();
		for (r = 0; r < RUNS; r++) {
			tm[r] = run_merge(vg_lrc_merge_page);
			ts[r] = run_merge(vg_lrc_merge_page_swar);
			tb[r] = run_plain();
			if (kobj)
				tk[r] = run_merge(kobj);
		}
		m = bench_median(tm, RUNS);
		sw = bench_median(ts, RUNS);
		b = bench_median(tb, RUNS);
		printf("  changed %-6s: merge %6.1f ns/page (x%.2f), "
		       "portable %6.1f ns/page (x%.2f), "
		       "memcmp+memcpy %6.1f ns/page",
		       fr[f].name, m, m / b, sw, sw / b, b);
		if (kobj) {
			k = bench_median(tk, RUNS);
			printf(", kernel .o %6.1f ns/page", k);
		}
		printf("\n");
		if (sw > worst_sw)
			worst_sw = sw;
		if (m > worst)
			worst = m;
		if (k > worst_k)
			worst_k = k;
	}
	printf("  worst merge %.1f ns/page (portable %.1f", worst, worst_sw);
	if (kobj)
		printf(", kernel .o %.1f", worst_k);
	printf(") vs goal %.0f ns (GAIA: 1400 ns)\n", GOAL_NS);
	bench_ratio("lrc merge per 4 KiB page / 0.5 us (worst fraction)",
		    worst / GOAL_NS, 1.0, 1);
	free(base);
	free(src);
	free(dst);
	return 0;
}
