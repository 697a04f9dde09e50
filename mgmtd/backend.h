/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd backends: what the model needs from whatever runs the vGPUs.
 *   embedded  the userspace host (core + software GPU) in this process;
 *   netlink   vgmem.ko through its generic-netlink family.
 * The model serialises every call with its own lock, so a backend needs no
 * locking of its own against the model (it may be called from any thread).
 * VMs are named by their mdev UUID (lower case, 36 characters).
 */
#ifndef VGMEM_MGMTD_BACKEND_H
#define VGMEM_MGMTD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "config.h"

/* One vGPU as the backend sees it. */
struct mg_backend_vm {
	char id[MG_ID_LEN];
	int gpu;
	struct vgmem_vm_stats stats;
	uint64_t cache_private;		/* mg_vm_info.cache_private */
};

/*
 * Something the backend observed on its own (netlink notifications);
 * the model turns it into an event. detail: JSON object text.
 */
typedef void (*mg_backend_emit_fn)(void *priv, const char *type,
				   const char *vm, const char *detail);

struct mg_backend_ops {
	const char *name;
	/*
	 * The GPUs, filled into the backend fields of mg_gpu_info (index,
	 * name, sizes, usage and the file cache's cache_used, policy,
	 * return interval, nr_vms, counters).
	 */
	int (*list_gpus)(void *b, struct mg_gpu_info **out, size_t *n);
	/*
	 * A VM started: embedded creates its guest on gpu; netlink checks
	 * the vGPU exists and reports its GPU in *gpu (gpu < 0 in: any).
	 * -EEXIST if already running, -ENOENT if there is no such vGPU.
	 */
	int (*vm_start)(void *b, const char *id, const char *name,
			uint64_t quota, int *gpu);
	/* The VM stopped: embedded destroys its guest; netlink forgets it. */
	void (*vm_stop)(void *b, const char *id);
	/* Every running vGPU with its counters and cache_private. */
	int (*list_vms)(void *b, struct mg_backend_vm **out, size_t *n);
	int (*vm_stats)(void *b, const char *id, struct vgmem_vm_stats *st);
	/* Bytes of VRAM (the core's 0 "equal share" is never sent). */
	int (*set_entitlement)(void *b, const char *id, uint64_t bytes);
	int (*set_quota)(void *b, const char *id, uint64_t bytes);
	/*
	 * Global knobs on one GPU: policy name, return interval, and the
	 * oversubscription limit where the backend enforces one of its own
	 * (vgmem.ko refuses mdev creation and quota raises beyond it).
	 */
	int (*set_knobs)(void *b, int gpu, const struct mg_knobs *k);
	/*
	 * Replaces a running VM's virtio-fs share table (the roots the
	 * LRC file cache resolves its guest's file maps beneath); n == 0
	 * clears it. Shares are valid (mg_share_check()). Nothing changes
	 * on error: -ENOENT (no such VM), -ENOTDIR/-EACCES (a root the
	 * backend cannot open), -EINVAL.
	 */
	int (*set_shares)(void *b, const char *id,
			  const struct mg_share *shares, size_t n);
	/*
	 * The host's LRC file cache counters, summed over the GPUs that
	 * have one (out->gpus of them; 0 and all counters 0: none).
	 * May be NULL: the backend has no cache.
	 */
	int (*get_lrc)(void *b, struct mg_lrc *out);
	/* Delivers pending backend notifications; may be NULL. */
	int (*poll_events)(void *b, mg_backend_emit_fn emit, void *priv);
	void (*destroy)(void *b);
};

struct mg_backend {
	const struct mg_backend_ops *ops;
	void *priv;
};

/* backend_embedded.c */
int mg_backend_embedded_create(const struct mg_config *cfg,
			       struct mg_backend *out);
/*
 * Tests: the in-process guest of a running embedded VM (NULL if none),
 * to allocate buffer objects that make demand.
 */
struct vg_host_guest;
struct vg_host_guest *mg_backend_embedded_guest(struct mg_backend *be,
						 const char *id);
/*
 * Tests: the share table the embedded backend holds for a running VM
 * (a copy: *out malloc()ed, NULL if empty); -ENOENT if not running.
 */
int mg_backend_embedded_shares(struct mg_backend *be, const char *id,
			       struct mg_share **out, size_t *n);

/*
 * What an operator does to mdevs with mdevctl or sysfs, for the embedded
 * backend's vGPUs (tests, and trying mgmtd without vgmem.ko). plug: a
 * vGPU of quota bytes on gpu appears, unmanaged (-EEXIST if there is
 * one); a start takes it as it is and a stop leaves it there. unplug:
 * the vGPU vanishes, guest and memory with it, whoever started it
 * (-ENOENT if there is none). The model notices at its next refresh.
 * Call under the same serialisation as the model's backend calls (tests:
 * with the timer idle); -EINVAL on another backend.
 */
int mg_backend_embedded_plug(struct mg_backend *be, const char *id, int gpu,
			     uint64_t quota);
int mg_backend_embedded_unplug(struct mg_backend *be, const char *id);

/* backend_netlink.c: -ENODEV if vgmem.ko does not answer. */
int mg_backend_netlink_create(const struct mg_config *cfg,
			      struct mg_backend *out);
/* Whether vgmem.ko looks loaded (/sys/class/vgmem exists). */
bool mg_backend_netlink_available(void);

/* Picks by cfg->backend (auto: netlink if available, else embedded). */
int mg_backend_open(const struct mg_config *cfg, struct mg_backend *out);

#endif /* VGMEM_MGMTD_BACKEND_H */
