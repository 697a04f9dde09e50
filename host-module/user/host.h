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

#include "../core/vg.h"
#include "../sim/sim.h"
#include "../../guest-driver/include/libvgmem.h"

struct vg_host_config {
	struct vg_sim_config sim;
	struct vg_gpu_config gpu;
};

struct vg_host;
struct vg_host_guest;

int vg_host_create(const struct vg_host_config *cfg, struct vg_host **out);
void vg_host_destroy(struct vg_host *h);	/* destroys remaining guests */
struct vg_gpu *vg_host_gpu(struct vg_host *h);
struct vg_sim *vg_host_sim(struct vg_host *h);

/*
 * A guest: a core VM with guest_ram bytes of guest memory (0: 16 MiB) and
 * a libvgmem device opened on it.
 */
int vg_host_guest_create(struct vg_host *h, const char *name, u64 quota,
			 u64 guest_ram, struct vg_host_guest **out);
void vg_host_guest_destroy(struct vg_host_guest *g);
struct vgmem_dev *vg_host_guest_dev(struct vg_host_guest *g);
struct vg_vm *vg_host_guest_vm(struct vg_host_guest *g);
/* Simulated device time and bytes of this guest so far (sim cost model). */
void vg_host_guest_cost(struct vg_host_guest *g, struct vg_sim_cost *out);

#endif /* VGMEM_USER_HOST_H */
