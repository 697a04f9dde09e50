/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared helpers of the benchmarks: a monotonic clock, medians, and the
 * one output format every benchmark uses:
 *   <name>: <measured> vs <baseline> ... RATIO <r> (goal <g>) [met|NOT met]
 * Benchmarks never fail on timing; they report.
 */
#ifndef VGMEM_BENCHLIB_H
#define VGMEM_BENCHLIB_H

#include <stddef.h>
#include <stdint.h>

uint64_t bench_now_ns(void);
/* Sorts v in place and returns its median (n > 0). */
double bench_median(double *v, size_t n);
/*
 * Prints the RATIO line. less_is_better: the goal is ratio <= goal, else
 * ratio >= goal.
 */
void bench_ratio(const char *what, double ratio, double goal, int less_is_better);

#endif /* VGMEM_BENCHLIB_H */
