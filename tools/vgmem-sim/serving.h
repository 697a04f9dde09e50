/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Inference VMs serving a request trace (reqtrace.h), as a tenant trace
 * (trace.h) the player and the oracle run like any other: what `vgmem-sim
 * replay` plays.
 *
 * The model (docs/performance.md, "replay"):
 *  - the requests are dealt round robin, in arrival order, to nr_vms
 *    inference VMs; each VM loads the model's weights when it starts;
 *  - time runs in steps; a step stands for step_tokens decode iterations
 *    (step_tokens x token_us of trace time). A request arriving in a step
 *    is prefilled in it (its prompt's KV cache written) and generates
 *    step_tokens tokens in every step, that one included, until it has all
 *    it asked for; its blocks are freed as its VM's next step begins;
 *  - every step of a VM with requests reads the weights once (the
 *    batch's pass) and each running request's KV cache once, and writes
 *    the new tokens' KV; the sim reads each byte once per step, standing for
 *    the step_tokens reads of the real decode iterations;
 *  - the KV cache is held in vLLM-style blocks of block_tokens tokens,
 *    taken as the request's tokens cross a block boundary; the blocks a
 *    step adds to a request are one allocation (one BO), freed with the
 *    request;
 *  - sizes are real bytes divided by scale (the weights, the KV cache per
 *    token, the profile); a block must come to whole 4 KiB pages.
 *
 * Iterations (the player's samples): per VM and step, first the weights
 * pass, then one per request (its prefill or its decode step), in arrival
 * order. A step's time is the sum of its iterations: every token of the
 * batch waits for the whole step.
 */
#ifndef VGSIM_SERVING_H
#define VGSIM_SERVING_H

#include <stdint.h>

#include "reqtrace.h"
#include "trace.h"

#define SV_PAGE		4096ull
#define SV_MAX_VMS	64

struct sv_params {
	uint32_t nr_vms;	/* inference VMs the requests are dealt to */
	uint64_t weights;	/* real bytes of the model's weights */
	uint64_t kv_token;	/* real bytes of KV cache per token */
	uint32_t block_tokens;	/* tokens per KV block */
	uint32_t step_tokens;	/* tokens a running request generates per step */
	uint32_t token_us;	/* real decode time of one token (iteration) */
	uint64_t scale;		/* real bytes per simulated byte */
	uint64_t profile;	/* real bytes: each VM's profile (entitlement) */
	uint32_t limit_pct;	/* what a VM may allocate, % of its profile */
	uint64_t bo_size;	/* simulated bytes: the weights' BOs at most */
};

/* One request as placed: where, when, and which iterations are its own. */
struct sv_req {
	uint16_t vm;
	uint32_t step;		/* its prefill step */
	uint32_t nr_steps;	/* steps it runs: prefill + decode steps */
	uint32_t it;		/* index into sv_load.req_it: its nr_steps
				 * iterations, one per step */
	uint32_t context, generated;
};

/* The iterations of one VM in one step. */
struct sv_step {
	uint32_t it_first;	/* the weights pass; then its requests' */
	uint32_t it_n;		/* 0: the VM did nothing in the step */
};

struct sv_load {
	struct trace t;		/* what the player runs */
	uint32_t nr_req;
	struct sv_req *req;
	uint32_t *req_it;	/* iteration indices (in its VM) of each request */
	struct sv_step *step;	/* [steps][nr_vms] */
	uint64_t *kv_tokens;	/* [steps][nr_vms]: tokens held at the step's end */
	uint64_t *kv_bytes;	/* [steps][nr_vms]: simulated bytes of blocks held */
	uint64_t sim_weights;	/* simulated bytes of the weights */
	uint64_t sim_block;	/* simulated bytes of a block */
	uint64_t sim_profile;	/* simulated bytes of a profile */
	double step_s;		/* trace seconds a step stands for */
};

/*
 * Checks p against the trace (err: why not, -EINVAL) and builds the load.
 * 0, -EINVAL or -ENOMEM; nothing to free on error.
 */
int sv_build(const struct rq_trace *rq, const struct sv_params *p,
	     struct sv_load *l, char *err, size_t errlen);
void sv_free(struct sv_load *l);

/* Simulated bytes of KV cache for n tokens (whole bytes, rounded down). */
uint64_t sv_token_bytes(const struct sv_params *p, uint64_t n);

#endif /* VGSIM_SERVING_H */
