/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The trace player: runs a trace (trace.h) event by event on one memory
 * model of one GPU, single-threaded and on the trace's logical clock, and
 * measures each iteration/request of each VM in simulated device time (the
 * software GPU's cost model plus what the model makes the VM wait for:
 * relocation copies, migrations, working-set copy-ins). Nothing depends on
 * thread timing, so the same trace and seed give the same numbers.
 *
 * The model is a spec of host-module/user/models/models.h: the host is
 * created with it and every VM is admitted through vg_host_vm_admit(), so
 * static refuses what does not fit and every model drives the same
 * software GPU and cost model.
 */
#ifndef VGSIM_PLAY_H
#define VGSIM_PLAY_H

#include "oracle.h"
#include "trace.h"
#include "vgsim.h"

/* The player's own BO per VM: kernel results at 0, gather output at 4 KiB. */
#define PL_SCRATCH	(64ull << 10)

struct pl_cfg {
	const char *model;		/* a spec of models.h ("vgmem:policy=cold") */
	uint64_t vram;
	uint64_t chunk_size;		/* 0: default */
	uint64_t seed;
	uint32_t max_vms;		/* VMs placed at once; 0: no limit */
	/*
	 * The cost model's VRAM and PCIe bandwidths are divided by this (0
	 * or 1: the sim's defaults), so that the trace's small buffers take
	 * as long as a real tenant's kernels; fixed per-launch costs (swsched's
	 * mediation) then stay in proportion.
	 */
	uint32_t bw_scale;
	/*
	 * The run with unlimited VRAM, for the models computed from it rather
	 * than played (the oracle: oracle_play.c); NULL for the others.
	 */
	const struct pl_result *base;
	/*
	 * If set, [steps][nr_vms][2]: each placed VM's bytes allocated and
	 * resident in VRAM (the model's per-VM statistics, its scratch BO
	 * included) at the end of every step, for plots over time. Played
	 * models only: the oracle places nothing on a GPU.
	 */
	uint64_t *mem;
};

/* What a model moved and how long it held VMs up (cumulative per run). */
struct pl_stats {
	uint64_t pcie_copy_bytes;	/* migrations/relocations, both ways */
	uint64_t pcie_access_bytes;	/* GPU accesses served over PCIe */
	uint64_t model_ns;		/* device time the model charged VMs */
	uint64_t stall_ns;		/* vgmem: allocators waiting for relocation */
	uint64_t relocations;		/* vgmem: suspend-copy-resume cycles */
	uint64_t suspend_hist[VGMEM_HIST_BUCKETS];	/* vgmem, wall time, log2 us */
	uint64_t stall_hist[VGMEM_HIST_BUCKETS];
};

#define PL_NO_SAMPLE	UINT64_MAX

struct pl_vm_result {
	bool admitted;			/* placed on this GPU */
	bool refused;			/* the model refused it (static: no room) */
	uint32_t oom;			/* allocations refused: no memory (-ENOMEM)
					 * or its partition/quota full (-ENOSPC) */
	uint32_t oom_profile;		/* ... of them while the VM held no more
					 * than its entitlement (not a burst) */
	uint32_t iters_ok, iters_failed;
	uint64_t *iter_ns;		/* [tr_vm.nr_iters]; PL_NO_SAMPLE: failed/not run */
	uint64_t total_ns;		/* charged device time over its life */
};

struct pl_result {
	uint32_t nr_vms;
	struct pl_vm_result *vm;
	uint32_t admitted;		/* VMs placed */
	uint32_t refused;		/* VMs the model refused */
	uint32_t capped;		/* VMs turned away by max_vms */
	uint32_t oom;			/* refused allocations of all VMs */
	uint32_t oom_vms;		/* VMs that saw at least one */
	uint32_t oom_profile;		/* refused within the VM's profile */
	uint32_t vms_max;		/* most VMs running at once */
	double vms_avg;			/* VMs running, averaged over steps */
	struct pl_stats st;
	int check;			/* the core's vg_gpu_check after the run */
};

/*
 * progress(arg, fraction) is called now and then; may be NULL. A model
 * spec of models.h is played on a host; an oracle spec is computed
 * (or_play).
 */
int pl_run(struct vs_ctx *ctx, const struct trace *t, const struct pl_cfg *cfg,
	   struct pl_result *res, void (*progress)(void *arg, double frac), void *arg);
/* An empty result for t (every sample PL_NO_SAMPLE): 0 or -ENOMEM. */
int pl_result_init(struct pl_result *res, const struct trace *t);
void pl_result_free(struct pl_result *r);

/*
 * Model specs of compare and cloud-day: a host model of models.h
 * ("vgmem:policy=cold", "paging:gran=64k") or the oracle ("oracle",
 * "oracle:evict=weighted"). pl_parse_models() takes "all" (every spec of
 * vg_model_runs, then both oracles) or a comma list ("key=value" after a
 * comma continues the previous spec); 0, or -EINVAL for an unknown spec,
 * an empty list or more than max.
 */
#define PL_SPEC_LEN	64
int pl_model_check(const char *spec);
int pl_parse_models(const char *list, char (*specs)[PL_SPEC_LEN], uint32_t max,
		    uint32_t *nr);

/*
 * The oracle (oracle_play.c): Belady's MIN over the trace's chunks under
 * cfg->vram, each iteration timed as the baseline's (cfg->base) plus the
 * copies the oracle makes it wait for, charged as vgmem's relocations.
 * or_spec_parse: 0, -ENOENT (not an oracle spec) or -EINVAL.
 */
int or_spec_parse(const char *spec, enum or_evict *evict);
int or_play(const struct trace *t, const struct pl_cfg *cfg,
	    struct pl_result *res);

#endif /* VGSIM_PLAY_H */
