// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_vcheck: the version check on the host read path. A host read
 * of a cached file copies 4 KiB pages out of the cache's host copy, and
 * for each page first asks vg_vv_is_newest(vv, VG_LRC_OWNER_CPU): is the
 * host copy the newest version, or must the read go to the GPU replica
 * that holds it? Side by side in one run: the same copies with and without
 * the checks, on pages whose version vectors have 32 and 160 owners (CPU,
 * storage and GPU contexts, all with versions, so every vector lives out
 * of line). Goal: overhead at most 1% at 160 owners (GAIA: 1% at 32, 5%
 * at 160); the RATIO line is (with checks / without) - 1 at 160, in %.
 *
 * The cache is 4096 pages (16 MiB: beyond L2, within L3, as a warm host
 * page cache would be) read in 64 KiB windows in a shuffled order into a
 * 256 KiB buffer; the vectors sit in one array (24 bytes each, as in the
 * LRC's page entries), their out-of-line entries in one allocation each.
 * The two variants run back to back, alternating which goes first; the
 * overhead is the median of the pairs' ratios, so slow drifts of a shared
 * machine cancel; times are medians of RUNS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host-module/core/lrc/lrc_vv.h"
#include "benchlib.h"

#define NPAGES	4096
#define PS	4096
#define WIN	16		/* pages per 64 KiB read window */
#define NWIN	(NPAGES / WIN)
#define OUTP	64		/* pages in the read buffer */
#define RUNS	401
#define GOAL_PCT 1.0

static u8 *cache, *out;
static struct vg_vv *vvs;
static u32 order[NWIN];
enum mode { PLAIN, CHECKED, NR_MODES };

static double t[NR_MODES][RUNS], tr[RUNS];
static u64 rs = 3;
static volatile u32 sink;

static u32 rnd(u32 bound)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (u32)(rs % bound);
}

static void *xalloc(size_t n)
{
	void *p = aligned_alloc(64, n);

	if (!p) {
		fprintf(stderr, "bench_lrc_vcheck: out of memory\n");
		exit(1);
	}
	return p;
}

/*
 * Every page: the CPU and storage at the page's newest version (the host
 * copy is current, the common case on the read path), except every 64th
 * page where a GPU released a newer one; nowner - 2 GPU contexts at older
 * versions.
 */
static void setup(u32 nowner)
{
	u32 p, o;

	for (p = 0; p < NPAGES; p++) {
		struct vg_vv *vv = &vvs[p];
		u32 top = 100 + rnd(1000);

		vg_vv_fini(vv);
		for (o = VG_LRC_OWNER_GPU0; o < nowner; o++)
			if (vg_vv_set(vv, (u16)o, 1 + rnd(top - 1)))
				goto oom;
		if (vg_vv_set(vv, VG_LRC_OWNER_CPU, top) ||
		    vg_vv_set(vv, VG_LRC_OWNER_STORAGE, top))
			goto oom;
		if (p % 64 == 0 &&
		    vg_vv_set(vv, (u16)(VG_LRC_OWNER_GPU0 + rnd(nowner - 2)),
			      top + 1))
			goto oom;
	}
	return;
oom:
	fprintf(stderr, "bench_lrc_vcheck: out of memory\n");
	exit(1);
}

/*
 * CHECKED asks vg_vv_is_newest(CPU) for each page just before copying it.
 * A stale page would be fetched from its GPU instead: here it is counted
 * and copied like the others, so both modes copy the same bytes.
 */
static double run(enum mode m)
{
	u64 t0 = bench_now_ns();
	u32 w, k, n = 0, stale = 0;

	for (w = 0; w < NWIN; w++) {
		u32 first = order[w] * WIN;

		for (k = 0; k < WIN; k++) {
			u32 p = first + k;

			if (m == CHECKED &&
			    !vg_vv_is_newest(&vvs[p], VG_LRC_OWNER_CPU))
				stale++;
			memcpy(out + (size_t)(n++ % OUTP) * PS,
			       cache + (size_t)p * PS, PS);
		}
	}
	sink = stale + out[rnd(OUTP * PS)];
	return (double)(bench_now_ns() - t0) / NPAGES;
}

int main(void)
{
	static const u32 owners[] = { 32, 160 };
	double pct = 0;
	u32 i, r;

	cache = xalloc((size_t)NPAGES * PS);
	out = xalloc((size_t)OUTP * PS);
	vvs = calloc(NPAGES, sizeof(*vvs));
	if (!vvs) {
		fprintf(stderr, "bench_lrc_vcheck: out of memory\n");
		return 1;
	}
	for (i = 0; i < NPAGES * PS; i++)
		cache[i] = (u8)i;
	for (i = 0; i < NWIN; i++)
		order[i] = i;
	for (i = NWIN - 1; i > 0; i--) {
		u32 j = rnd(i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	printf("bench_lrc_vcheck: host read of %u cached 4 KiB pages "
	       "(64 KiB windows, shuffled), vg_vv_is_newest(CPU) per page "
	       "vs no check, median of %u runs\n",
	       NPAGES, RUNS);
	for (i = 0; i < ARRAY_SIZE(owners); i++) {
		double med[NR_MODES];
		u32 k;

		setup(owners[i]);
		for (k = 0; k < NR_MODES; k++)
			run(k);	/* warm up */
		for (r = 0; r < RUNS; r++) {
			/* rotate which goes first: no order bias */
			for (k = 0; k < NR_MODES; k++) {
				u32 mo = (k + r) % NR_MODES;

				t[mo][r] = run(mo);
			}
			tr[r] = t[CHECKED][r] / t[PLAIN][r];
		}
		for (k = 0; k < NR_MODES; k++)
			med[k] = bench_median(t[k], RUNS);
		pct = (bench_median(tr, RUNS) - 1) * 100;
		printf("  %3u owners (vector %zu bytes out of line): with check %6.1f ns/page "
		       "vs without %6.1f ns/page: overhead %+.2f%%\n",
		       owners[i], vg_vv_ext_bytes(&vvs[1]), med[CHECKED],
		       med[PLAIN], pct);
	}
	bench_ratio("lrc host-read version check overhead at 160 owners, %",
		    pct, GOAL_PCT, 1);
	for (i = 0; i < NPAGES; i++)
		vg_vv_fini(&vvs[i]);
	free(vvs);
	free(cache);
	free(out);
	return 0;
}
