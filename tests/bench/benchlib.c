// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Benchmark helpers (see benchlib.h). */
#include "benchlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_ratio(const char *what, double ratio, double goal, int less_is_better)
{
	int met = less_is_better ? ratio <= goal : ratio >= goal;

	printf("%s: RATIO %.3f (goal %s %.2f) %s\n", what, ratio,
	       less_is_better ? "<=" : ">=", goal, met ? "met" : "NOT met");
}

void bench_oom(void)
{
	fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
	exit(1);
}

void *bench_alloc(size_t n)
{
	/* aligned_alloc wants a multiple of the alignment */
	void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

	if (!p)
		bench_oom();
	return p;
}
