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
/*
 * The calling thread's CPU time: what it ran, without the time slices
 * other processes on a loaded machine took from it (their cache pollution
 * still counts).
 */
uint64_t bench_cpu_ns(void);
/* Sorts v in place and returns its median (n > 0). */
double bench_median(double *v, size_t n);
/*
 * Prints the RATIO line. less_is_better: the goal is ratio <= goal, else
 * ratio >= goal.
 */
void bench_ratio(const char *what, double ratio, double goal, int less_is_better);

/*
 * This program run again under callgrind with args (NULL-terminated; the
 * program's own path goes first), counting only inside the functions
 * named in toggles (NULL-terminated; in any thread, callgrind's
 * --toggle-collect): the instructions counted, or 0 when they could not be
 * (valgrind not installed, the run failed). Instruction counts do not
 * drift with the machine's load as times do.
 */
unsigned long long bench_callgrind(const char *const *toggles,
				   const char *const *args);

/*
 * n bytes aligned to a cache line, or the program ends with "out of
 * memory" (benchmarks have nothing to fall back on); bench_oom() is that
 * ending for any other allocation.
 */
void *bench_alloc(size_t n);
void bench_oom(void) __attribute__((noreturn));

#endif /* VGMEM_BENCHLIB_H */
