// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_policy: one entitlement computation (policy/vgp_compute) for
 * 10 000 VMs on one GPU. Goal: under 1 ms. Side by side, the baseline is
 * qsort() of 10 000 random 64-bit keys, the cost an implementation that
 * sorted the VMs once would start from; the RATIO line is compute / 1 ms.
 *
 * Scenarios (80 GiB of VRAM, 2 MiB chunks, weights 1..10000, 10% of VMs
 * with low, 4 priority classes unless said otherwise):
 *   contended    total demand 4x VRAM: steps 1-3, every class water-filled;
 *   one class    the same with every VM in class 0;
 *   headroom     total demand half of VRAM: steps 3 and 4;
 *   low-overcommit  every VM has low above its share: step 2 scales.
 * Median of 301 runs each. Timing never fails the benchmark.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "benchlib.h"

#define NVM	10000
#define RUNS	301
#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

static struct vgp_vm vms[NVM];
static struct vgp_ent out[NVM];
static uint64_t keys[NVM], sorted[NVM];
static double t[RUNS];
static uint64_t rs = 42;

static uint64_t rnd(uint64_t bound)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs % bound;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static double sort_ns(void)
{
	int r;

	for (r = 0; r < RUNS; r++) {
		uint64_t t0;

		memcpy(sorted, keys, sizeof(keys));
		t0 = bench_now_ns();
		qsort(sorted, NVM, sizeof(sorted[0]), cmp_u64);
		t[r] = (double)(bench_now_ns() - t0);
	}
	return bench_median(t, RUNS);
}

enum scen { CONTENDED, ONE_CLASS, HEADROOM, LOW_OVER, NR_SCEN };
static const char *const scen_name[] = {
	"contended", "one class", "headroom", "low-overcommit",
};

static void setup(const struct vgp_gpu *g, enum scen s)
{
	/* Mean demand: 4x or 0.5x the per-VM share of VRAM. */
	uint64_t share = g->vram / NVM;
	uint64_t mean = s == HEADROOM ? share / 2 : 4 * share;
	int i;

	rs = 42;
	for (i = 0; i < NVM; i++) {
		struct vgp_vm *v = &vms[i];

		vgp_vm_init(v, 8 * share + rnd(8 * share));
		v->weight = 1 + (uint32_t)rnd(VGP_WEIGHT_MAX);
		v->prio = s == ONE_CLASS ? 0 : (uint32_t)rnd(VGP_NR_PRIO);
		v->demand = rnd(2 * mean);
		if (s == LOW_OVER)
			v->low = 2 * share;
		else if (rnd(10) == 0)
			v->low = rnd(share);
		if (rnd(20) == 0)
			v->max = v->quota / 2;
	}
}

int main(void)
{
	struct vgp_gpu g = { .vram = 80 * GiB, .chunk = 64 << 10,
			     .oversub_pct = VGP_OVERSUB_MAX, .host_budget = UINT64_MAX };
	size_t len = vgp_scratch_size(NVM);
	void *scratch = aligned_alloc(64, (len + 63) & ~(size_t)63);
	double base, worst = 0;
	int s, r, i;

	if (!scratch)
		return 1;
	for (i = 0; i < NVM; i++)
		keys[i] = rnd(UINT64_MAX);
	base = sort_ns();
	printf("bench_policy: vgp_compute for %d VMs, 80 GiB VRAM in 64 KiB chunks, "
	       "median of %d; scratch %zu KiB\n", NVM, RUNS, len >> 10);
	printf("baseline: qsort of %d u64 keys: %.1f us\n", NVM, base / 1000);
	printf("%-16s %10s %10s %8s\n", "scenario", "compute_us", "sort_us", "ratio");
	for (s = 0; s < NR_SCEN; s++) {
		struct vgp_status st;
		double med;

		setup(&g, (enum scen)s);
		for (r = 0; r < RUNS; r++) {
			uint64_t t0 = bench_now_ns();

			if (vgp_compute(&g, vms, NVM, out, scratch, len, &st)) {
				fprintf(stderr, "bench_policy: %s\n", st.reason);
				return 1;
			}
			t[r] = (double)(bench_now_ns() - t0);
		}
		med = bench_median(t, RUNS);
		worst = med > worst ? med : worst;
		printf("%-16s %10.1f %10.1f %8.2f   (entitled %llu MiB, flags %#x)\n",
		       scen_name[s], med / 1000, base / 1000, med / base,
		       (unsigned long long)(st.entitled / MiB), st.flags);
	}
	bench_ratio("bench_policy 10000 VMs: slowest scenario / 1 ms", worst / 1e6, 1.0, 1);
	free(scratch);
	return 0;
}
