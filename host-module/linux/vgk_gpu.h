/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vgmem.ko offers GPU drivers (vgmem_sim.ko today, a hardware driver
 * later): register a GPU, described by its table of GPU ops, and get an
 * mdev parent on it whose vGPUs the core manages.
 */
#ifndef VGK_LINUX_GPU_H
#define VGK_LINUX_GPU_H

#include <linux/module.h>

#include "core/vg_gpu_ops.h"

struct vgk_gpu;

/*
 * Register a GPU. ops and drv must stay valid until
 * vgk_unregister_gpu() returns; name (copied) shows in logs. owner is
 * the GPU driver's module: every live vGPU holds a reference on it, so the
 * GPU driver cannot be unloaded while a vGPU of its GPU exists.
 * Returns 0 and the handle in *out, or a negative errno.
 */
int vgk_register_gpu(const struct vg_gpu_ops *ops, void *drv,
		     const char *name, struct module *owner,
		     struct vgk_gpu **out);

/*
 * Remove the GPU's mdev parent (and so any vGPU left: each removal waits
 * until its device is closed), then the GPU. The GPU driver may be destroyed
 * after this returns.
 */
void vgk_unregister_gpu(struct vgk_gpu *gpu);

#endif /* VGK_LINUX_GPU_H */
