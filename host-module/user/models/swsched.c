// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The swsched model: software scheduling in the style of Gdev and GDM
 * (GPUswap paper, sections 1 and 7). Every submission is mediated: the
 * guest's GP_PUT write traps into the host (here: the transport calls
 * userd_write instead of writing the USERD page), which charges a fixed
 * mediation cost in device time, and before the submission reaches the GPU
 * the launching VM's whole working set is made resident, GDM-style:
 * every BO of it that sits in host RAM is copied into VRAM, and if VRAM is
 * short, BOs of the VM that ran least recently are copied out to host RAM
 * first. A VM whose memory is taken out is quiesced the way GPUswap
 * quiesces a victim (vg_vm_quiesce(), vg.h: the core's suspend and drain,
 * so its work in flight completes and nothing new starts) and its PTEs
 * then point at the host copy, so even work it queued before keeps every
 * byte.
 *
 * Allocation works the same way (Gdev evicts other contexts' buffers when
 * an allocation finds device memory full); an allocation fails only if
 * the VM's own resident BOs leave no room, i.e. its working set alone
 * exceeds VRAM (-ENOMEM).
 *
 * The time the launching VM waits for the copies (its swap-in and the
 * evictions made for it) is charged to it in model_ns, with the mediation.
 *
 * Simplification: a real scheduler would queue the submission and return;
 * here the trapped write blocks the guest's thread until its working set is
 * resident, which is the same order of events for a guest that waits for
 * its work (every built-in workload does). If even evicting every other VM
 * leaves no room (a copy failed), the BOs left in host RAM stay mapped
 * there and the work runs over PCIe: slower, never wrong.
 */
#include <errno.h>
#include "models_priv.h"

/*
 * Move bo to loc: new memory, copy, remap, flush, free the old. The owner
 * must be quiesced (vg_vm_quiesce: nothing of it in flight or starting;
 * gpu->lock is held, so only GPU ops here). Adds the copy's device
 * time to *ns.
 */
static int vg_swsched_move(struct vg_mbo *bo, enum vg_loc loc, u64 *ns)
{
	struct vg_model_vm *v = bo->v;
	struct vg_model *m = v->m;
	struct vg_mem *mem;
	int err;

	err = m->bops->mem_alloc(m->b, loc, bo->size, &mem);
	if (err)
		return err;
	err = vg_model_copy(m, bo->mem, 0, mem, 0, bo->size, ns);
	if (err)
		goto err_free_mem;
	err = m->bops->map(m->b, v->as, bo->va, bo->size, mem, 0);
	if (err) {
		/* The old mapping may be partly replaced: restore it whole. */
		if (m->bops->map(m->b, v->as, bo->va, bo->size, bo->mem, 0))
			pr_warn("vgmem: swsched: %s: restoring a mapping failed\n",
				vg_vm_name(v->vm));
		m->bops->tlb_flush(m->b, v->as);
		goto err_free_mem;
	}
	m->bops->tlb_flush(m->b, v->as);
	m->bops->mem_free(m->b, bo->mem);
	bo->mem = mem;
	bo->loc = loc;
	if (loc == VG_LOC_VRAM) {
		v->st.resident += bo->size;
		m->vram_used += bo->size;
		v->st.bytes_to_vram += bo->size;
	} else {
		v->st.resident -= bo->size;
		m->vram_used -= bo->size;
		v->st.bytes_to_host += bo->size;
	}
	return 0;

err_free_mem:
	m->bops->mem_free(m->b, mem);
	return err;
}

/* The VM, other than self, with resident BOs that ran least recently. */
static struct vg_model_vm *vg_swsched_victim(struct vg_model *m,
					     struct vg_model_vm *self,
					     struct vg_model_vm *skip)
{
	struct vg_model_vm *v, *best = NULL;

	list_for_each_entry(v, &m->vms, node) {
		if (v == self || v == skip || !v->st.resident)
			continue;
		if (!best || v->last_run < best->last_run)
			best = v;
	}
	return best;
}

/*
 * Make room for need bytes of VRAM by copying BOs of the least recently
 * run other VMs to host RAM. Returns 0 once free VRAM >= need (by the
 * model's own count of what it placed), -ENOMEM if no other VM has
 * anything left to give. Copy time goes to *ns.
 */
static int vg_swsched_make_room(struct vg_model_vm *self, u64 need, u64 *ns)
{
	struct vg_model *m = self->m;
	struct vg_model_vm *victim, *skip = NULL;
	u32 failures = 0;
	struct vg_mbo *bo;
	bool moved;
	int err;

	while (m->vram_size - m->vram_used < need) {
		victim = vg_swsched_victim(m, self, skip);
		/* Bounded: two VMs that cannot give must not alternate forever. */
		if (!victim || failures > m->nr_vms)
			return -ENOMEM;
		err = vg_vm_quiesce(victim->vm);
		if (err) {
			/* Its work does not drain: try the next one. */
			skip = victim;
			failures++;
			continue;
		}
		moved = false;
		list_for_each_entry(bo, &victim->bos, link) {
			if (bo->loc != VG_LOC_VRAM)
				continue;
			if (vg_swsched_move(bo, VG_LOC_HOST, ns))
				break;
			moved = true;
			if (m->vram_size - m->vram_used >= need)
				break;
		}
		/* One eviction per victim quiesced, if anything of it moved. */
		if (moved)
			victim->st.evictions++;
		vg_vm_unquiesce(victim->vm);
		if (victim->st.resident && m->vram_size - m->vram_used < need) {
			skip = victim;	/* a copy failed: do not spin on it */
			failures++;
		}
	}
	return 0;
}

static int vg_swsched_place(struct vg_model_vm *v, struct vg_mbo *bo)
{
	struct vg_model *m = v->m;
	u64 ns = 0;
	int err;

	/* Its whole working set must fit, or no launch of it could run. */
	if (bo->size > m->vram_size ||
	    v->st.allocated > m->vram_size - bo->size)
		return -ENOMEM;
	err = vg_swsched_make_room(v, bo->size, &ns);
	v->st.model_ns += ns;
	if (err)
		return err;
	return vg_mbo_place_vram(v, bo);
}

/*
 * Every BO of v in host RAM into VRAM. Its BOs got there only by another
 * VM's eviction, which quiesced v, and v has submitted nothing since (a
 * submission would have brought them back), so nothing of v runs; it is
 * quiesced once more anyway, as the copy's precondition.
 */
static void vg_swsched_make_resident(struct vg_model_vm *v, u64 *ns)
{
	struct vg_model *m = v->m;
	struct vg_mbo *bo;
	u64 need = 0;

	list_for_each_entry(bo, &v->bos, link)
		if (bo->loc != VG_LOC_VRAM)
			need += bo->size;
	if (!need)
		return;
	if (need > m->vram_size - m->vram_used)
		vg_swsched_make_room(v, need, ns);
	if (vg_vm_quiesce(v->vm))
		return;		/* runs from host RAM this time */
	list_for_each_entry(bo, &v->bos, link) {
		if (bo->loc == VG_LOC_VRAM)
			continue;
		if (vg_swsched_move(bo, VG_LOC_VRAM, ns))
			break;	/* no room after all: the rest runs over PCIe */
	}
	vg_vm_unquiesce(v->vm);
}

/*
 * The trapped USERD write. Only GP_PUT is a submission; the rest go
 * straight through (and the core ignores them anyway). m->lock is held
 * across the write, so no other VM's submission can evict this VM's BOs
 * between its swap-in and the GPU seeing the new GP_PUT.
 */
static void vg_swsched_userd_write(struct vg_model_vm *v, struct vg_chan *ch,
				   u32 off, u32 val)
{
	struct vg_model *m = v->m;
	u64 ns = 0;

	if (off != VGMEM_USERD_GP_PUT) {
		vg_chan_userd_write(ch, off, val);
		return;
	}
	pthread_mutex_lock(&m->lock);
	v->st.submissions++;
	v->last_run = ++m->clock;
	vg_swsched_make_resident(v, &ns);
	v->st.model_ns += m->p.mediation_ns + ns;
	vg_chan_userd_write(ch, off, val);
	pthread_mutex_unlock(&m->lock);
}

const struct vg_model_ops vg_model_swsched_ops = {
	.kind = VG_MODEL_SWSCHED,
	.name = "swsched",
	.vm_fini = vg_mbo_free_all,
	.bo_ctrl = vg_mbo_ctrl,
	.bo_place = vg_swsched_place,
	.bo_release = vg_mbo_release_whole,
	.userd_write = vg_swsched_userd_write,
};
