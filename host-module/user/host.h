/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The userspace host: the core and the software GPU in one process, with
 * in-process guests that drive their vGPU through libvgmem over an
 * in-process transport (control commands go to the same dispatcher the
 * kernel's control queue uses; USERD accesses go through the core's shadow
 * logic as the kernel's page mappings do). Used by tests, benchmarks,
 * vgmem-sim and mgmtd's embedded backend.
 */
#ifndef VGMEM_USER_HOST_H
#define VGMEM_USER_HOST_H

#include "core/vg.h"
#include "sim/sim.h"
#include <libvgmem.h>

struct vg_host_config {
	struct vg_sim_config sim;
	struct vg_gpu_config gpu;
	/*
	 * The memory manager, a spec of models/models.h ("vgmem",
	 * "paging:gran=64k", ...). NULL: the core, with gpu.policy.
	 */
	const char *model;
	/*
	 * VRAM budget of the LRC file cache's replicas (core/lrc/lrc.h);
	 * 0: its default. The cache serves the GPU unless the model is
	 * paging (which owns the GPU's fault handler).
	 */
	u64 lrc_vram_budget;
	/*
	 * Host-RAM budget of the LRC file cache's host copies in bytes (a
	 * 64 KiB multiple); 0: no limit (vg_lrc_set_host_budget).
	 */
	u64 lrc_host_budget;
};

struct vg_host;
struct vg_host_guest;
struct vg_lrc;
struct vg_lrc_file;

int vg_host_create(const struct vg_host_config *cfg, struct vg_host **out);
void vg_host_destroy(struct vg_host *h);	/* destroys remaining guests */
struct vg_gpu *vg_host_gpu(struct vg_host *h);
struct vg_sim *vg_host_sim(struct vg_host *h);
/*
 * The LRC file cache (core/lrc/lrc.h) over this process's filesystem
 * (lrc_store.h), for its statistics and budget (vg_lrc_get_stats,
 * vg_lrc_gpu_set_budget).
 */
struct vg_lrc *vg_host_lrc(struct vg_host *h);
/*
 * Act as a host process on a share file: relpath beneath the directory
 * dir, through the cache (vg_lrc_host_open: the same beneath-the-root
 * rules as a guest's map). Then vg_lrc_host_read, vg_lrc_host_write,
 * vg_lrc_host_fsync and vg_lrc_host_close on *out; close every file
 * before vg_host_destroy.
 */
int vg_host_file_open(struct vg_host *h, const char *dir, const char *relpath,
		      bool writable, struct vg_lrc_file **out);

/*
 * A guest: a core VM with guest_ram bytes of guest memory (0: 16 MiB) and
 * a libvgmem device opened on it.
 */
int vg_host_guest_create(struct vg_host *h, const char *name, u64 quota,
			 u64 guest_ram, struct vg_host_guest **out);
void vg_host_guest_destroy(struct vg_host_guest *g);
/*
 * After a migration stream restored channels into the guest's VM
 * (vg_mig_load_*, core/vg.h), make them the guest's: its device reaches a
 * channel only through the host's table of the ones it created. 0 or
 * -ENOMEM.
 */
int vg_host_guest_adopt_chans(struct vg_host_guest *g);
struct vgmem_dev *vg_host_guest_dev(struct vg_host_guest *g);
struct vg_vm *vg_host_guest_vm(struct vg_host_guest *g);
/*
 * The guest's share share_id is the host directory dir (what mgmtd takes
 * from the domain's virtio-fs <filesystem> source); _ro refuses RW maps.
 * Replaces an earlier share of the same id. A guest has an LRC context
 * from its creation, under every model (the paging model's BOs and the
 * file maps share the GPU's fault dispatch); a VM names only its own
 * shares.
 */
int vg_host_guest_set_share(struct vg_host_guest *g, u32 share_id,
			    const char *dir);
int vg_host_guest_set_share_ro(struct vg_host_guest *g, u32 share_id,
			       const char *dir);
/*
 * The same with the share's virtio-fs tag (NULL: none), which the guest
 * reads with VGMEM_CTRL_SHARES: -EINVAL for a tag vgmem_share_tag_ok()
 * refuses, -EEXIST if another share of the guest has it.
 */
int vg_host_guest_set_share_tag(struct vg_host_guest *g, u32 share_id,
				const char *dir, bool read_only,
				const char *tag);
/* Simulated device time and bytes of this guest so far (sim cost model). */
void vg_host_guest_cost(struct vg_host_guest *g, struct vg_sim_cost *out);

#endif /* VGMEM_USER_HOST_H */
