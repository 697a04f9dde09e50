/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The replay scenario's state, shared by its run (replay.c) and its
 * outputs (replay_out.c): inference VMs serving a request trace
 * (serving.h), every model, the oracle, and VMs per GPU at a p99.
 */
#ifndef VGSIM_REPLAY_H
#define VGSIM_REPLAY_H

#include "play.h"
#include "serving.h"
#include "servstat.h"

#define RP_MAX_MODELS	16
#define RP_MAX_POINTS	8	/* runs of one model's sweep over K */

struct rp_point {
	uint32_t k;		/* VMs the GPU may hold (0: every VM) */
	struct pl_result r;
	struct ss_run m;
	bool pass;		/* no failed request and p99 <= slo */
};

struct rp_model {
	char spec[PL_SPEC_LEN];
	bool ok;		/* its main run (every VM offered) ran */
	int failed;		/* -errno: a run failed */
	uint32_t nr;		/* points: [0] is the main run */
	struct rp_point pt[RP_MAX_POINTS];
	uint64_t *mem;		/* main run: [steps][vms][2] (play.h) */
	double density;		/* VMs per GPU at the SLO; 0: never met */
	uint32_t density_k;
};

struct rp_opts {
	const char *trace;
	struct sv_params sv;
	uint64_t gpu;		/* real bytes of VRAM */
	uint32_t bw_scale;	/* 0: the byte scale */
	double slo;
	uint32_t sweep;
	const char *models;
	uint32_t tiny;
};

struct rp_state {
	struct vs_ctx *ctx;
	const struct rp_opts *o;
	struct rq_trace rq;
	struct sv_load l;
	struct pl_result base;
	uint64_t vram, chunk;	/* simulated */
	uint32_t nr_models;
	struct rp_model *mod;
	uint32_t done, total;
	char now[160];
};

/* Writes replay.md, the CSVs, the plots and the result JSON (replay_out.c). */
int rp_write(struct rp_state *s);
/* The model of this spec whose main run ran, or NULL. */
const struct rp_model *rp_find(const struct rp_state *s, const char *spec);
/* Real bytes (GiB) of n simulated bytes. */
double rp_gib(const struct rp_state *s, uint64_t n);

#endif /* VGSIM_REPLAY_H */
