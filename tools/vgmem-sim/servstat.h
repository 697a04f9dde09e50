/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the replay measures from a run of a serving load (serving.h) and
 * its baseline (the same load with unlimited VRAM), per request:
 *  - failed: an allocation of its KV cache (or of its VM's weights) was
 *    refused, so some of its iterations never ran (counted once, not as a
 *    slowdown);
 *  - time to first token: the time of its prefill step over the baseline's
 *    (a step's time is that of all the VM's iterations in it, the batch);
 *  - per-token slowdown: the time of all its steps (each generates tokens,
 *    the prefill step too) over the baseline's.
 * A step's time adds only the iterations measured in both runs, so a
 * failed request's missing work does not make its batch look faster.
 */
#ifndef VGSIM_SERVSTAT_H
#define VGSIM_SERVSTAT_H

#include "play.h"
#include "serving.h"

struct ss_run {
	uint32_t placed;	/* requests of VMs placed on the GPU */
	uint32_t failed;	/* of them: an allocation refused */
	uint32_t n_ttft, n_tok;	/* samples of each */
	double ttft_p50, ttft_p99, ttft_mean;
	double tok_p50, tok_p99, tok_mean;
	double p99;		/* the larger p99: what the SLO is held to */
	double jain;		/* over the VMs' step-time slowdowns */
	double vm_mean[SV_MAX_VMS];	/* per VM: its steps' time over the baseline's */
};

/* 0 or -ENOMEM. */
int ss_compute(const struct sv_load *l, const struct pl_result *run,
	       const struct pl_result *base, struct ss_run *out);

#endif /* VGSIM_SERVSTAT_H */
