// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The admission model: HAMi's behaviour. Quotas are enforced per VM (as
 * HAMi-core's CUDA_DEVICE_MEMORY_LIMIT is per container) and may together
 * exceed VRAM (HAMi's deviceMemoryScaling > 1), optionally up to a cap
 * (oversub=PCT). Memory is never moved: an allocation that finds VRAM full
 * fails with out-of-memory even if the VM is under its quota, and the
 * VMs already holding VRAM keep running (HAMi PR 2850 documents exactly
 * this: the holder keeps its memory, the challenger gets CUDA OOM).
 */
#include "models_priv.h"

const struct vg_model_ops vg_model_admission_ops = {
	.kind = VG_MODEL_ADMISSION,
	.name = "admission",
	.vm_fini = vg_mbo_free_all,
	.bo_ctrl = vg_mbo_ctrl,
	.bo_place = vg_mbo_place_vram,
	.bo_release = vg_mbo_release_whole,
};
