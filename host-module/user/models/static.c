// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The static model: a fixed VRAM partition per VM, as NVIDIA vGPU profiles
 * and MIG instances give one. The partition is the VM's quota; a VM is
 * admitted only if every partition fits in VRAM together (models.c), so
 * nothing is ever oversubscribed and a BO within the partition always finds
 * VRAM. A BO past the partition fails like one past any quota (-ENOSPC).
 * Nothing ever moves: no PCIe traffic, no slowdown, and the price is
 * density.
 */
#include "models_priv.h"

const struct vg_model_ops vg_model_static_ops = {
	.kind = VG_MODEL_STATIC,
	.name = "static",
	.vm_fini = vg_mbo_free_all,
	.bo_ctrl = vg_mbo_ctrl,
	.bo_place = vg_mbo_place_vram,
	.bo_release = vg_mbo_release_whole,
};
