// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The control queue's dispatcher. A command comes from the guest and is
 * hostile until checked: the op must be known, the bytes of the union past
 * the op's own structure must be zero (room for future fields), and every
 * input field the op does not use must be zero as well, so a later ABI can
 * give them meaning. Output-only fields are ignored on input. A malformed
 * command gets -EINVAL (the FILE_* commands also their documented codes)
 * and changes nothing.
 *
 *  op            inputs                      must be zero
 *  QUERY         -                           (whole union is output)
 *  CHAN_CREATE   gpfifo_gpa, gpfifo_entries  (chan_id is output)
 *  CHAN_DESTROY  chan_id                     gpfifo_gpa, gpfifo_entries
 *  BO_ALLOC      size, flags, va if FIXED_VA va without FIXED_VA, rsvd
 *  BO_FREE       va                          size, flags, rsvd
 *  STATS         -                           (whole union is output)
 *  FILE_MAP      share_id, path, offset,     ino without FILE_INO, path bytes after its NUL
 *                length, flags               (va is output)
 *  FILE_UNMAP    va                          length, flags, rsvd
 *  FILE_ACQUIRE  va, length                  flags, rsvd
 *  FILE_RELEASE  va, length                  flags, rsvd
 *  FILE_SYNC     va, length                  flags, rsvd
 *  SHARES        index                       rsvd (total, count, e[] are
 *                                            output)
 *
 * The FILE_* commands reach the VM's file service (vg_vm_attach_files():
 * the LRC file cache's context, core/lrc/); the dispatcher checks the fields the cache cannot see (the path field's
 * NUL and tail, reserved words) and the cheap shape checks, so a malformed
 * command never reaches the cache; the cache checks the rest (the share,
 * the file, the range against the file) and changes nothing on failure.
 * Error codes are the ones include/uapi/vgmem.h and docs/abi.md document.
 */
#include "vg_internal.h"

_Static_assert(sizeof(struct vgmem_ctrl) == VGMEM_CTRL_SLOT_SIZE,
	       "a command is one control-queue slot");
_Static_assert(sizeof(struct vgmem_ctrl_shares) <=
	       sizeof(((struct vgmem_ctrl *)0)->raw),
	       "a SHARES page fits the command's union");
_Static_assert(sizeof(struct vgmem_ctrl_shares) == 496 &&
	       sizeof(struct vgmem_ctrl_share) == 48,
	       "the SHARES layout is ABI: 10 entries of 48 bytes");
_Static_assert(VGMEM_SHARE_TAG_SIZE > VGMEM_SHARE_TAG_MAX,
	       "a tag field always holds the NUL");

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

/*
 * The path field: NUL-terminated inside the field, not empty, every byte
 * after the NUL zero (room for nothing hidden behind the name).
 */
static bool vg_ctrl_path_ok(const char *path)
{
	u32 i, len;

	for (len = 0; len < VGMEM_FILE_PATH_MAX && path[len]; len++)
		;
	if (!len || len == VGMEM_FILE_PATH_MAX)
		return false;
	for (i = len + 1; i < VGMEM_FILE_PATH_MAX; i++)
		if (path[i])
			return false;
	return true;
}

static int vg_ctrl_file_map(struct vg_vm *vm, struct vgmem_ctrl_file_map *m)
{
	const struct vg_file_ops *ops;
	void *ctx;
	u64 va;
	int err;

	if (!vg_ctrl_path_ok(m->path))
		return -EINVAL;
	if ((m->flags & ~VGMEM_FILE_INO) != VGMEM_FILE_RO &&
	    (m->flags & ~VGMEM_FILE_INO) != VGMEM_FILE_RW)
		return -EINVAL;
	if (!(m->flags & VGMEM_FILE_INO) && m->ino)
		return -EINVAL;
	if (!m->length || (m->offset | m->length) & (VGMEM_FILE_ALIGN - 1))
		return -EINVAL;
	if (m->length > VGMEM_BO_MAX_SIZE || m->offset + m->length < m->offset)
		return -EFBIG;
	/* A VM the operator gave no share has no service: no such share. */
	ops = vg_vm_file_service(vm, &ctx);
	if (!ops)
		return -ENOENT;
	err = ops->map(ctx, m->share_id, m->path, m->offset, m->length,
		       m->flags, m->ino, &va);
	if (err)
		return err;
	m->va = va;
	return 0;
}

static int vg_ctrl_file_range(struct vg_vm *vm, u32 op,
			      struct vgmem_ctrl_file_range *r)
{
	const struct vg_file_ops *ops;
	void *ctx;

	if (r->flags || r->rsvd)
		return -EINVAL;
	if (op == VGMEM_CTRL_FILE_UNMAP && r->length)
		return -EINVAL;
	if ((r->va | r->length) & (VGMEM_FILE_ALIGN - 1))
		return -EINVAL;
	/* Without a service the VM has no file map anywhere. */
	ops = vg_vm_file_service(vm, &ctx);
	if (!ops)
		return -EBADF;
	switch (op) {
	case VGMEM_CTRL_FILE_UNMAP:
		return ops->unmap(ctx, r->va);
	case VGMEM_CTRL_FILE_ACQUIRE:
		return ops->acquire(ctx, r->va, r->length);
	case VGMEM_CTRL_FILE_RELEASE:
		return ops->release(ctx, r->va, r->length);
	default:
		return ops->sync(ctx, r->va, r->length);
	}
}

/*
 * The VM's share table, from the same platform data FILE_MAP resolves
 * share ids in (the VM's file service, whose table the platform sets):
 * what it lists is exactly what the guest can map.
 */
static int vg_ctrl_shares(struct vg_vm *vm, struct vgmem_ctrl_shares *s)
{
	const struct vg_file_ops *ops;
	void *ctx;

	if (s->rsvd)
		return -EINVAL;
	ops = vg_vm_file_service(vm, &ctx);
	if (ops)
		return ops->shares(ctx, s);
	/* No service: no share, and no page of them but the first. */
	memset(s->e, 0, sizeof(s->e));
	s->count = 0;
	s->total = 0;
	return s->index ? -EINVAL : 0;
}

/* Size of the union member each op uses. */
void vg_ctrl_exec(struct vg_vm *vm, struct vgmem_ctrl *cmd)
{
	size_t used;
	int err;

	if (!cmd)
		return;
	used = vgmem_ctrl_well_formed(cmd);
	if (!vm || !used) {
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
	case VGMEM_CTRL_FILE_MAP:
		err = vg_ctrl_file_map(vm, &cmd->file_map);
		break;
	case VGMEM_CTRL_FILE_UNMAP:
	case VGMEM_CTRL_FILE_ACQUIRE:
	case VGMEM_CTRL_FILE_RELEASE:
	case VGMEM_CTRL_FILE_SYNC:
		err = vg_ctrl_file_range(vm, cmd->op, &cmd->file);
		break;
	case VGMEM_CTRL_SHARES:
		err = vg_ctrl_shares(vm, &cmd->shares);
		break;
	case VGMEM_CTRL_STATS:
	default:
		vg_vm_get_stats(vm, &cmd->stats);
		err = 0;
		break;
	}
	cmd->status = err;
}
