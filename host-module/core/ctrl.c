// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The control queue's dispatcher. A command comes from the guest and is
 * hostile until checked: the op must be known, the bytes of the union past
 * the op's own structure must be zero (room for future fields), and every
 * input field the op does not use must be zero as well, so a later ABI can
 * give them meaning. Output-only fields are ignored on input. A rejected
 * command gets -EINVAL and changes nothing.
 *
 *  op            inputs                      must be zero
 *  QUERY         -                           (whole union is output)
 *  CHAN_CREATE   gpfifo_gpa, gpfifo_entries  (chan_id is output)
 *  CHAN_DESTROY  chan_id                     gpfifo_gpa, gpfifo_entries
 *  BO_ALLOC      size, flags, va if FIXED_VA va without FIXED_VA, rsvd
 *  BO_FREE       va                          size, flags, rsvd
 *  STATS         -                           (whole union is output)
 */
#include "vg_internal.h"

_Static_assert(sizeof(struct vgmem_ctrl) == VGMEM_CTRL_SLOT_SIZE,
	       "a command is one control-queue slot");

static bool vg_ctrl_tail_zero(const struct vgmem_ctrl *cmd, size_t used)
{
	size_t i;

	for (i = used; i < sizeof(cmd->raw); i++)
		if (cmd->raw[i])
			return false;
	return true;
}

static int vg_ctrl_query(struct vg_vm *vm, struct vgmem_ctrl_query *q)
{
	struct vg_gpu *gpu = vm->gpu;

	memset(q, 0, sizeof(*q));
	q->abi_version = VGMEM_ABI_VERSION;
	q->max_channels = VG_VM_MAX_CHANS;
	mutex_lock(&gpu->lock);
	q->quota = vm->quota;		/* 0: unlimited */
	mutex_unlock(&gpu->lock);
	q->chunk_size = gpu->chunk_size;
	q->va_start = VGMEM_VA_START;
	q->va_end = VGMEM_VA_END;
	return 0;
}

static int vg_ctrl_chan_create(struct vg_vm *vm, struct vgmem_ctrl_chan *c)
{
	struct vg_chan *ch;
	int err;

	err = vg_chan_create(vm, c->gpfifo_gpa, c->gpfifo_entries, &ch);
	if (err)
		return err;
	c->chan_id = vg_chan_id(ch);
	return 0;
}

static int vg_ctrl_chan_destroy(struct vg_vm *vm, struct vgmem_ctrl_chan *c)
{
	struct vg_chan *ch;
	int err;

	if (c->gpfifo_gpa || c->gpfifo_entries)
		return -EINVAL;
	/* Look up and destroy in one section: the id cannot go stale. */
	mutex_lock(&vm->gpu->lock);
	ch = vg_chan_find(vm, c->chan_id);
	err = ch ? 0 : -ENOENT;
	if (ch)
		vg_chan_destroy_locked(ch);
	mutex_unlock(&vm->gpu->lock);
	return err;
}

static int vg_ctrl_bo_alloc(struct vg_vm *vm, struct vgmem_ctrl_bo *b)
{
	u64 va = b->va;
	int err;

	if (b->rsvd || (!(b->flags & VGMEM_BO_FIXED_VA) && b->va))
		return -EINVAL;
	err = vg_bo_alloc(vm, b->size, b->flags, &va);
	if (err)
		return err;
	b->va = va;
	return 0;
}

static int vg_ctrl_bo_free(struct vg_vm *vm, struct vgmem_ctrl_bo *b)
{
	if (b->size || b->flags || b->rsvd)
		return -EINVAL;
	return vg_bo_free(vm, b->va);
}

/* Size of the union member each op uses. */
static size_t vg_ctrl_used(u32 op)
{
	switch (op) {
	case VGMEM_CTRL_QUERY:
		return sizeof(struct vgmem_ctrl_query);
	case VGMEM_CTRL_CHAN_CREATE:
	case VGMEM_CTRL_CHAN_DESTROY:
		return sizeof(struct vgmem_ctrl_chan);
	case VGMEM_CTRL_BO_ALLOC:
	case VGMEM_CTRL_BO_FREE:
		return sizeof(struct vgmem_ctrl_bo);
	case VGMEM_CTRL_STATS:
		return sizeof(struct vgmem_vm_stats);
	default:
		return 0;
	}
}

void vg_ctrl_exec(struct vg_vm *vm, struct vgmem_ctrl *cmd)
{
	size_t used;
	int err;

	if (!cmd)
		return;
	used = vg_ctrl_used(cmd->op);
	if (!vm || !used || !vg_ctrl_tail_zero(cmd, used)) {
		cmd->status = -EINVAL;
		return;
	}
	switch (cmd->op) {
	case VGMEM_CTRL_QUERY:
		err = vg_ctrl_query(vm, &cmd->query);
		break;
	case VGMEM_CTRL_CHAN_CREATE:
		err = vg_ctrl_chan_create(vm, &cmd->chan);
		break;
	case VGMEM_CTRL_CHAN_DESTROY:
		err = vg_ctrl_chan_destroy(vm, &cmd->chan);
		break;
	case VGMEM_CTRL_BO_ALLOC:
		err = vg_ctrl_bo_alloc(vm, &cmd->bo);
		break;
	case VGMEM_CTRL_BO_FREE:
		err = vg_ctrl_bo_free(vm, &cmd->bo);
		break;
	case VGMEM_CTRL_STATS:
	default:
		vg_vm_get_stats(vm, &cmd->stats);
		err = 0;
		break;
	}
	cmd->status = err;
}
