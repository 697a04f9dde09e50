/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The models' shared structures (models.c, mbo.c and one file per model).
 *
 * Lock rules: m->lock (a mutex) protects every field of the model, its VMs
 * and their BOs, and is held across each BO command of a model that
 * manages memory itself (not vgmem's: the core locks for itself), each
 * trapped submission and each fault service, so a model never races with
 * itself.
 * Order: the transport's chan_lock, then m->lock, then the core's
 * gpu->lock. The GPU driver's ops lock for themselves (the fault handler may
 * call them with no core lock held; vg_gpu_ops.h).
 */
#ifndef VGMEM_USER_MODELS_PRIV_H
#define VGMEM_USER_MODELS_PRIV_H

#include <pthread.h>
#include "models.h"
#include "core/vg_va.h"

struct vg_model {
	const struct vg_model_ops *ops;
	struct vg_model_params p;
	struct vg_host *host;
	struct vg_gpu *gpu;
	struct vg_sim *sim;
	const struct vg_gpu_ops *bops;
	void *b;			/* the GPU driver (the vg_sim) */
	u64 vram_size;

	pthread_mutex_t lock;
	struct list_head vms;		/* struct vg_model_vm.node */
	u32 nr_vms;
	u32 admitted;			/* since creation */
	u32 refused;
	u64 quota_sum;			/* of the present VMs (0 counts as VRAM) */
	u64 vram_used;			/* bytes of model-managed BOs in VRAM */
	u64 clock;			/* use stamps (LRU) */
	struct vg_model_vm_stats gone;	/* counters of VMs already destroyed */
	void *priv;			/* the model's own */
};

struct vg_model_vm {
	struct vg_model *m;
	struct vg_host_guest *g;
	struct vg_vm *vm;
	struct vg_as *as;		/* the core VM's address space */
	struct list_head node;		/* m->vms */
	u64 quota;			/* 0: unlimited */
	u64 entitlement;
	struct vg_va_tree va;		/* model BOs, [VG_MODEL_VA_START, VA_END) */
	struct list_head bos;		/* struct vg_mbo.link, by creation */
	struct vg_model_vm_stats st;	/* the counters the model keeps */
	u64 last_run;			/* swsched: stamp of the last submission */
	void *priv;
};

/* A BO the model manages (not vgmem, whose BOs are the core's). */
struct vg_mbo {
	struct vg_model_vm *v;
	struct vg_va_node node;		/* [va, va + size) in v->va */
	struct list_head link;		/* v->bos */
	u64 va;
	u64 size;			/* multiple of VGMEM_PAGE_SIZE */
	enum vg_loc loc;		/* where the GPU reaches it (static..swsched) */
	struct vg_mem *mem;		/* its memory at loc */
	void *priv;			/* paging: its chunks */
};

/* models.c: the host's side (host.c, transport.c). */
/* p->policy == VG_POLICY_NR (not in the spec) must be resolved first. */
int vg_model_create(struct vg_host *h, struct vg_gpu *gpu, struct vg_sim *sim,
		    const struct vg_model_params *p, struct vg_model **out);
/*
 * Every VM detached and the GPU and sim destroyed first (no fault handler
 * call can be under way); so fini must not call the GPU driver.
 */
void vg_model_destroy(struct vg_model *m);
/* Admission: reserve the VM's place (0 or -ENOSPC, counted), or give it back. */
int vg_model_reserve(struct vg_model *m, u64 quota);
void vg_model_unreserve(struct vg_model *m, u64 quota);
/* A reserved VM's state, once its core VM exists; detach frees its BOs. */
int vg_model_attach(struct vg_model *m, struct vg_host_guest *g,
		    struct vg_vm *vm, u64 quota, u64 entitlement,
		    struct vg_model_vm **out);
void vg_model_detach(struct vg_model_vm *v);
void vg_model_bo_ctrl(struct vg_model_vm *v, struct vgmem_ctrl *cmd);
/* Returns false if the model does not trap USERD writes (write directly). */
bool vg_model_userd_write(struct vg_model_vm *v, struct vg_chan *ch, u32 off,
			  u32 val);
void vg_model_vm_stats(struct vg_model_vm *v, struct vg_model_vm_stats *st);
void vg_model_gpu_stats(struct vg_model *m, struct vg_model_gpu_stats *st);

/* mbo.c: BO bookkeeping shared by the models that manage memory. */
void vg_mbo_ctrl(struct vg_model_vm *v, struct vgmem_ctrl *cmd);
struct vg_mbo *vg_mbo_at(struct vg_model_vm *v, u64 addr);	/* containing */
void vg_mbo_free_all(struct vg_model_vm *v);
int vg_mbo_place_vram(struct vg_model_vm *v, struct vg_mbo *bo);
void vg_mbo_release_whole(struct vg_model_vm *v, struct vg_mbo *bo);
/* Count a failed allocation's errno in v's counters. */
void vg_model_count_failure(struct vg_model_vm *v, int err);
/* Device time of bytes over PCIe (copies) by the cost model. */
u64 vg_model_pcie_ns(struct vg_model *m, u64 bytes);
/*
 * One synchronous copy of len bytes; 0 or -errno. Adds the copy's device
 * time to *ns if ns is not NULL.
 */
int vg_model_copy(struct vg_model *m, struct vg_mem *src, u64 src_off,
		  struct vg_mem *dst, u64 dst_off, u64 len, u64 *ns);

#endif /* VGMEM_USER_MODELS_PRIV_H */
