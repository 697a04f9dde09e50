// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * BO bookkeeping for the models that manage memory themselves (static,
 * admission, swsched, paging): the guest's BO_ALLOC/BO_FREE checked as
 * strictly as the core checks them (core/ctrl.c, core/bo.c), VAs from the
 * models' own range, the quota, and the failure counters. Where the memory
 * comes from is each model's bo_place/bo_release.
 *
 * Errors of an allocation, in this order (nothing changes on any):
 *  -EINVAL  unknown flags, rsvd or a non-zero tail, size zero or not a page
 *           multiple, va given without FIXED_VA, a FIXED_VA address not
 *           page-aligned, outside [VG_MODEL_VA_START, VGMEM_VA_END) or
 *           overlapping a BO;
 *  -E2BIG   size above VGMEM_BO_MAX_SIZE;
 *  -ENOSPC  the quota would be exceeded (any model; static's partition is
 *           its quota), or no VA hole is large enough;
 *  -ENOMEM  the model has no memory for it (bo_place).
 */
#include <errno.h>
#include <stdlib.h>
#include "models_priv.h"

static bool vg_mbo_tail_zero(const struct vgmem_ctrl *cmd)
{
	size_t i;

	for (i = sizeof(struct vgmem_ctrl_bo); i < sizeof(cmd->raw); i++)
		if (cmd->raw[i])
			return false;
	return true;
}

struct vg_mbo *vg_mbo_at(struct vg_model_vm *v, u64 addr)
{
	struct vg_va_node *n = vg_va_end_after(&v->va, addr);

	if (!n || n->start > addr)
		return NULL;
	return container_of(n, struct vg_mbo, node);
}

/* Where a new BO goes: 0 with *va set, or -EINVAL/-ENOSPC. */
static int vg_mbo_find_va(struct vg_model_vm *v, const struct vgmem_ctrl_bo *b,
			  u64 *va)
{
	struct vg_va_node *next;
	u64 end;

	if (!(b->flags & VGMEM_BO_FIXED_VA))
		return vg_va_first_fit(&v->va, b->size, va, &next);
	if (b->va % VGMEM_PAGE_SIZE || b->va < VG_MODEL_VA_START ||
	    b->va >= VGMEM_VA_END || b->size > VGMEM_VA_END - b->va)
		return -EINVAL;
	end = b->va + b->size;
	next = vg_va_end_after(&v->va, b->va);
	if (next && next->start < end)
		return -EINVAL;
	*va = b->va;
	return 0;
}

static int vg_mbo_alloc(struct vg_model_vm *v, struct vgmem_ctrl_bo *b)
{
	struct vg_model *m = v->m;
	struct vg_mbo *bo;
	u64 va;
	int err;

	if (b->rsvd || (b->flags & ~VGMEM_BO_FLAGS_ALL) ||
	    (!(b->flags & VGMEM_BO_FIXED_VA) && b->va) || !b->size ||
	    b->size % VGMEM_PAGE_SIZE ||
	    b->size > VGMEM_VA_END - VG_MODEL_VA_START)
		return -EINVAL;
	err = vg_mbo_find_va(v, b, &va);
	if (err == -EINVAL)
		return err;
	if (b->size > VGMEM_BO_MAX_SIZE)
		return -E2BIG;
	if (err)
		return err;
	if (v->quota && (b->size > v->quota ||
			 v->st.allocated > v->quota - b->size))
		return -ENOSPC;

	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->v = v;
	bo->va = va;
	bo->size = b->size;
	bo->node.start = va;
	bo->node.end = va + b->size;
	err = m->ops->bo_place(v, bo);
	if (err) {
		free(bo);
		return err;
	}
	vg_va_insert(&v->va, &bo->node);
	list_add_tail(&bo->link, &v->bos);
	v->st.allocated += bo->size;
	b->va = va;
	return 0;
}

static void vg_mbo_del(struct vg_mbo *bo)
{
	struct vg_model_vm *v = bo->v;

	v->m->ops->bo_release(v, bo);
	vg_va_remove(&v->va, &bo->node);
	list_del(&bo->link);
	v->st.allocated -= bo->size;
	free(bo);
}

static int vg_mbo_free(struct vg_model_vm *v, struct vgmem_ctrl_bo *b)
{
	struct vg_va_node *n;

	if (b->size || b->flags || b->rsvd)
		return -EINVAL;
	n = vg_va_lookup(&v->va, b->va);
	if (!n)
		return -ENOENT;
	vg_mbo_del(container_of(n, struct vg_mbo, node));
	return 0;
}

void vg_mbo_ctrl(struct vg_model_vm *v, struct vgmem_ctrl *cmd)
{
	int err;

	if (!vg_mbo_tail_zero(cmd)) {
		cmd->status = -EINVAL;
		return;
	}
	if (cmd->op == VGMEM_CTRL_BO_ALLOC) {
		err = vg_mbo_alloc(v, &cmd->bo);
		if (err)
			vg_model_count_failure(v, err);
	} else {
		err = vg_mbo_free(v, &cmd->bo);
	}
	cmd->status = err;
}

void vg_mbo_free_all(struct vg_model_vm *v)
{
	while (!list_empty(&v->bos))
		vg_mbo_del(list_first_entry(&v->bos, struct vg_mbo, link));
}

/*
 * The whole BO in VRAM, mapped: static's and admission's placement. A full
 * VRAM (the GPU driver's -ENOSPC) is the guest's out-of-memory, -ENOMEM.
 */
int vg_mbo_place_vram(struct vg_model_vm *v, struct vg_mbo *bo)
{
	struct vg_model *m = v->m;
	int err;

	err = m->bops->mem_alloc(m->b, VG_LOC_VRAM, bo->size, &bo->mem);
	if (err)
		return err == -ENOSPC ? -ENOMEM : err;
	err = m->bops->map(m->b, v->as, bo->va, bo->size, bo->mem, 0);
	if (err) {
		m->bops->unmap(m->b, v->as, bo->va, bo->size);
		m->bops->mem_free(m->b, bo->mem);
		bo->mem = NULL;
		return err;
	}
	m->bops->tlb_flush(m->b, v->as);
	bo->loc = VG_LOC_VRAM;
	v->st.resident += bo->size;
	m->vram_used += bo->size;
	return 0;
}

/* Unmap and free a BO placed whole (static, admission, swsched). */
void vg_mbo_release_whole(struct vg_model_vm *v, struct vg_mbo *bo)
{
	struct vg_model *m = v->m;

	m->bops->unmap(m->b, v->as, bo->va, bo->size);
	m->bops->tlb_flush(m->b, v->as);
	m->bops->mem_free(m->b, bo->mem);
	bo->mem = NULL;
	if (bo->loc == VG_LOC_VRAM) {
		v->st.resident -= bo->size;
		m->vram_used -= bo->size;
	}
}
