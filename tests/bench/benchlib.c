// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Benchmark helpers (see benchlib.h). */
#include "benchlib.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

#define BENCH_CG_ARGS	32

unsigned long long bench_callgrind(const char *const *toggles,
				   const char *const *args)
{
	char dir[] = "/tmp/bench_cg.XXXXXX", out[64], opt[96], line[256];
	char tog[BENCH_CG_ARGS][96];
	const char *argv[2 * BENCH_CG_ARGS + 8];
	unsigned long long ir = 0;
	int n = 0, t = 0, status;
	char *self;
	FILE *f;
	pid_t pid;

	/* valgrind runs the program itself, not /proc/self/exe (valgrind). */
	self = realpath("/proc/self/exe", NULL);
	if (!self)
		return 0;
	if (!mkdtemp(dir)) {
		free(self);
		return 0;
	}
	snprintf(out, sizeof(out), "%s/cg.out", dir);
	snprintf(opt, sizeof(opt), "--callgrind-out-file=%s", out);
	argv[n++] = "valgrind";
	argv[n++] = "--tool=callgrind";
	argv[n++] = "--quiet";
	argv[n++] = "--collect-atstart=no";
	argv[n++] = opt;
	for (; toggles[t] && t < BENCH_CG_ARGS; t++) {
		snprintf(tog[t], sizeof(tog[t]), "--toggle-collect=%s",
			 toggles[t]);
		argv[n++] = tog[t];
	}
	argv[n++] = self;
	for (t = 0; args[t] && t < BENCH_CG_ARGS; t++)
		argv[n++] = args[t];
	argv[n] = NULL;
	if (posix_spawnp(&pid, "valgrind", NULL, NULL, (char *const *)argv,
			 environ) ||
	    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		goto out;
	f = fopen(out, "r");
	if (!f)
		goto out;
	/* "summary: N" (older callgrind) or "totals: N": events collected. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "summary: %llu", &ir) == 1 ||
		    sscanf(line, "totals: %llu", &ir) == 1)
			break;
	}
	fclose(f);
out:
	unlink(out);
	rmdir(dir);
	free(self);
	return ir;
}
