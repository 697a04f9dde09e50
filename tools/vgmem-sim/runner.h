/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Guests that run built-in workloads in threads, started together: what
 * slowdown, delay and demo share.
 */
#ifndef VGSIM_RUNNER_H
#define VGSIM_RUNNER_H

#include <pthread.h>

#include "vgsim.h"

struct vs_instance {
	/* in */
	struct vg_host_guest *g;
	enum vgmem_workload wl;
	uint64_t ws, bo_size;
	uint32_t iters;
	uint64_t seed;
	uint64_t canary;		/* bytes of a pattern BO checked after; 0: none */
	/* out */
	int err;			/* 0 or the first failure */
	const char *failed;		/* which step failed */
	bool canary_ok;
	struct vg_sim_cost cost;	/* this guest's device cost of the run */
	double wall_s;
	pthread_t thread;
};

/* Runs every instance in its own thread, all released at once; waits. */
int vs_run_instances(struct vs_instance *in, unsigned int n);
/* The same, calling tick(arg) every period_ms (and once at the end) meanwhile. */
int vs_run_instances_sampled(struct vs_instance *in, unsigned int n,
			     void (*tick)(void *arg), void *arg,
			     unsigned int period_ms);
/* Parses "all" or a comma list of workload names into a bit mask. */
int vs_parse_workloads(const char *s, unsigned int *mask);

#endif /* VGSIM_RUNNER_H */
