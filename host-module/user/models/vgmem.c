// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The vgmem model: the core as it is (GPUswap's reducer and relocation with
 * the host's chunk policy and entitlements). BO commands go to the core's
 * dispatcher unchanged and unserialised (models.c); the model only counts
 * failures and reads the core's statistics.
 */
#include "models_priv.h"

static int vg_model_vgmem_vm_init(struct vg_model_vm *v)
{
	return v->entitlement ? vg_vm_set_entitlement(v->vm, v->entitlement) : 0;
}

static void vg_model_vgmem_bo_ctrl(struct vg_model_vm *v,
				   struct vgmem_ctrl *cmd)
{
	vg_ctrl_exec(v->vm, cmd);
	if (cmd->op == VGMEM_CTRL_BO_ALLOC && cmd->status) {
		pthread_mutex_lock(&v->m->lock);
		vg_model_count_failure(v, cmd->status);
		pthread_mutex_unlock(&v->m->lock);
	}
}

/*
 * Bytes moved are the relocations' (out: to host RAM, in: back). The VM's
 * channels are suspended while its chunks are copied, so the copies' PCIe
 * time is charged to it, as paging charges a fault's migration to the
 * faulting VM.
 */
static void vg_model_vgmem_vm_stats(struct vg_model_vm *v,
				    struct vg_model_vm_stats *st)
{
	struct vgmem_vm_stats vs;

	vg_vm_get_stats(v->vm, &vs);
	st->allocated = vs.allocated;
	st->resident = vs.resident;
	st->bytes_to_host = vs.bytes_out;
	st->bytes_to_vram = vs.bytes_in;
	st->evictions = vs.reloc_out_chunks;
	st->model_ns = vg_model_pcie_ns(v->m, vs.bytes_out + vs.bytes_in);
}

const struct vg_model_ops vg_model_vgmem_ops = {
	.kind = VG_MODEL_VGMEM,
	.name = "vgmem",
	.vm_init = vg_model_vgmem_vm_init,
	.bo_ctrl = vg_model_vgmem_bo_ctrl,
	.vm_stats = vg_model_vgmem_vm_stats,
};
