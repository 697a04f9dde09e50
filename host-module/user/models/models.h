/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Peer models (issue 6): alternative GPU memory managers behind the same
 * guest control plane, software GPU and cost model, so one trace can be run
 * under each and compared (docs/performance.md, "Models").
 *
 *   vgmem      the core as it is (GPUswap + entitlements), param policy=
 *              random|lra|cold
 *   static     fixed VRAM partition per VM (= its quota), no oversubscription:
 *              admitted only if the partitions fit in VRAM (vGPU profiles, MIG)
 *   admission  quotas may oversubscribe VRAM; an allocation that finds VRAM
 *              full fails with out-of-memory (HAMi)
 *   swsched    Gdev-style software scheduling: every GP_PUT write is trapped
 *              (mediation cost per submission) and the launching VM's whole
 *              working set is made resident before its work runs, evicting
 *              other VMs' BOs to host RAM
 *   paging     UVM-style demand paging: BOs start unpopulated, GPU faults
 *              migrate 64 KiB or 2 MiB blocks in, global LRU eviction of 2 MiB
 *              chunks, no fairness (param gran=64k|2m)
 *
 * A model is chosen per host by a spec string "name[:key=value[,key=value]]",
 * e.g. "vgmem:policy=cold", "paging:gran=64k", "swsched:mediation_ns=8000",
 * "admission:oversub=200". Channels stay the core's in every model; the
 * models other than vgmem manage BO memory themselves through the GPU driver
 * ops (the core then holds no BOs of those VMs) in their own VA range
 * [VG_MODEL_VA_START, VGMEM_VA_END), apart from the core's allocations.
 *
 * Locking: each model has one mutex for its state; the order is
 * transport's chan_lock -> model lock -> the core's gpu->lock.
 */
#ifndef VGMEM_USER_MODELS_H
#define VGMEM_USER_MODELS_H

#include "user/host.h"

/* Model BOs live here (the core allocates first-fit from VGMEM_VA_START). */
#define VG_MODEL_VA_START		0x0000008000000000ull	/* 512 GiB */
#define VG_MODEL_CHUNK			(2ull << 20)	/* paging's eviction unit */
#define VG_MODEL_GRAN_SMALL		(64ull << 10)
/*
 * swsched: device time charged per trapped submission. Gdev's measured
 * overhead (GPUswap paper, sections 1 and 6: 3.5-30 %) comes from trapping each
 * launch into the host scheduler: an MMIO exit, the scheduler's decision
 * and the re-issue, ~10 us on a 2015 host. See docs/performance.md.
 */
#define VG_MODEL_MEDIATION_NS_DEFAULT	10000ull

enum vg_model_kind {
	VG_MODEL_VGMEM = 0,
	VG_MODEL_STATIC,
	VG_MODEL_ADMISSION,
	VG_MODEL_SWSCHED,
	VG_MODEL_PAGING,
	VG_MODEL_NR
};

struct vg_model_params {
	enum vg_model_kind kind;
	enum vg_chunk_policy policy;	/* vgmem: chunk policy */
	u64 gran;			/* paging: 64 KiB or 2 MiB (0: 2 MiB) */
	u64 mediation_ns;		/* swsched: per submission (0: default) */
	/*
	 * Admission cap: the sum of quotas may reach oversub_pct percent of
	 * VRAM (0: no cap). static always uses 100 (its partitions).
	 */
	u32 oversub_pct;
};

/*
 * Registry. vg_model_name(k) is the bare name ("paging"); the runs a
 * comparison makes by default are the specs in vg_model_runs (NULL
 * terminated): every vgmem policy, static, admission, swsched and paging
 * at both granularities.
 */
const char *vg_model_name(enum vg_model_kind k);
extern const char *const vg_model_runs[];
/* Parse a spec into p (defaults filled in); -EINVAL on anything unknown. */
int vg_model_parse(const char *spec, struct vg_model_params *p);
/* Canonical spec of p into buf ("paging:gran=64k"); returns buf. */
const char *vg_model_spec(const struct vg_model_params *p, char *buf,
			  size_t len);

/*
 * A host with a model: vg_host_create() with cfg->model set to a spec (NULL:
 * "vgmem" with cfg->gpu.policy). For vgmem the spec's policy overrides
 * cfg->gpu.policy.
 */
const struct vg_model_params *vg_host_model(struct vg_host *h);

/*
 * Admit a VM: -ENOSPC if the model refuses it (counted in vms_refused),
 * otherwise as vg_host_guest_create(). entitlement: VRAM bytes the VM is
 * entitled to (vgmem: vg_vm_set_entitlement; 0 = equal share); the other
 * models keep it for reporting only. vg_host_guest_create() is this with
 * entitlement 0.
 */
struct vg_host_vm_config {
	const char *name;
	u64 quota;		/* bytes of BOs; 0: unlimited (static refuses 0) */
	u64 entitlement;	/* bytes; 0: equal share */
	u64 guest_ram;		/* 0: 16 MiB */
	/*
	 * Bytes the VM was sold; past it a burst is best effort (the core's
	 * struct vg_vm_config, used by the COLD policy); 0: none.
	 */
	u64 profile;
};
int vg_host_vm_admit(struct vg_host *h, const struct vg_host_vm_config *c,
		     struct vg_host_guest **out);

struct vg_model_vm_stats {
	u64 quota;
	u64 entitlement;
	u64 allocated;		/* bytes in live BOs */
	u64 resident;		/* bytes of them in VRAM now */
	u64 oom_failures;	/* BO allocations failed for want of memory (-ENOMEM) */
	u64 quota_failures;	/* BO allocations past the quota (-ENOSPC), any model */
	u64 bytes_to_vram;	/* host RAM -> VRAM copies by the manager (PCIe) */
	u64 bytes_to_host;	/* VRAM -> host RAM copies (PCIe) */
	/*
	 * Device time the model charges this VM on top of its own work's cost
	 * (vg_sim_as_cost): swsched's mediation and the swap-ins it waits for,
	 * paging's migrations and evictions its faults cause, vgmem's
	 * relocation copies of this VM's chunks (it is suspended meanwhile).
	 * vg_host_guest_cost() already includes it in device_ns.
	 */
	u64 model_ns;
	u64 submissions;	/* GP_PUT writes (swsched: each one mediated) */
	u64 faults;		/* paging: GPU page faults serviced */
	u64 evictions;		/* times memory of this VM was moved out */
};
void vg_host_guest_model_stats(struct vg_host_guest *g,
			       struct vg_model_vm_stats *st);

struct vg_model_gpu_stats {
	u64 vram_size;
	u64 vram_used;		/* bytes of BOs in VRAM now */
	u32 vms;		/* VMs admitted and still present */
	u32 vms_admitted;	/* admitted since the host was created */
	u32 vms_refused;
	u64 quota_sum;		/* of the present VMs */
	u64 oom_failures;
	u64 quota_failures;
	u64 bytes_to_vram;
	u64 bytes_to_host;
	u64 model_ns;
};
void vg_host_model_stats(struct vg_host *h, struct vg_model_gpu_stats *st);

/* ---- the ops each model implements (host glue in models.c) ------------ */

struct vg_model;	/* a model instance: one per host */
struct vg_model_vm;	/* a VM under it: one per guest */
struct vg_mbo;		/* a BO a model manages itself */

struct vg_model_ops {
	enum vg_model_kind kind;
	const char *name;
	/* Model state beyond the shared part (models_priv.h). */
	int (*init)(struct vg_model *m);
	void (*fini)(struct vg_model *m);
	/* Admission (model lock held): 0 or -ENOSPC. */
	int (*admit)(struct vg_model *m, u64 quota);
	/* Per-VM state after admission, and its teardown (frees every BO). */
	int (*vm_init)(struct vg_model_vm *v);
	void (*vm_fini)(struct vg_model_vm *v);
	/* A BO_ALLOC or BO_FREE command of the guest: sets cmd->status. */
	void (*bo_ctrl)(struct vg_model_vm *v, struct vgmem_ctrl *cmd);
	/*
	 * For the models whose bo_ctrl is the shared one (mbo.c): give a new
	 * BO memory and map it (0, or -ENOMEM when there is no room: an
	 * out-of-memory failure), and take it all back.
	 */
	int (*bo_place)(struct vg_model_vm *v, struct vg_mbo *bo);
	void (*bo_release)(struct vg_model_vm *v, struct vg_mbo *bo);
	/* Optional: a guest write to USERD (swsched traps GP_PUT). */
	void (*userd_write)(struct vg_model_vm *v, struct vg_chan *ch, u32 off,
			    u32 val);
	/* Optional: fill the counters the model does not keep itself (vgmem). */
	void (*vm_stats)(struct vg_model_vm *v, struct vg_model_vm_stats *st);
};

const struct vg_model_ops *vg_model_ops_of(enum vg_model_kind k);

#endif /* VGMEM_USER_MODELS_H */
