// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Contexts (a VM's address space on a GPU: one LRC owner), their share
 * tables, and file maps: a file range placed in the VM's VA index next to
 * its BOs, the replicas each GPU page of it maps, and the PTEs.
 */
#include "lrc_internal.h"

#define GPAGE	VG_LRC_GPAGE_SIZE
#define PAGE	VG_LRC_PAGE_SIZE
#define NPG	VG_LRC_PAGES_PER_GPAGE

/*
 * Holds the owner id of a destroyed context whose private replicas are
 * still cached (a merge failed at unmap, e.g. a copy error). While one is
 * there the id is not handed out: a new context with it would take that
 * replica for its own and read or publish another VM's bytes. Never
 * dereferenced.
 */
static struct vg_lrc_ctx vg_lrc_ctx_retired;
/* How the core reaches a context (the end of this file). */
static const struct vg_file_ops vg_lrc_file_ops;

/*
 * owner's last private replica is gone (evict.c): if its context is gone
 * too, the id is free again. No version entry names it any more: only a
 * private replica's page holds one for its owner, and dropping or
 * discarding the replica clears it.
 */
void vg_lrc_owner_put(struct vg_lrc *lrc, u16 owner)
{
	lockdep_assert_held(&lrc->lock);
	if (lrc->owners[owner] != &vg_lrc_ctx_retired)
		return;
	lrc->owners[owner] = NULL;
	lrc->nr_retired--;
}

/*
 * No owner id is free: merge and drop what the retired ids' contexts left
 * (a merge that failed at their unmap usually works later: the copy
 * error, the allocation failure was passing), which frees their ids. One
 * that fails again, or a replica with writes never released, keeps its
 * id retired. So a guest that makes its merges fail, over device reset
 * after device reset, cannot use the ids up for other VMs.
 */
static void vg_lrc_owners_reclaim(struct vg_lrc *lrc)
{
	struct vg_lrc_rep *r, *tmp;
	u32 id;

	lockdep_assert_held(&lrc->lock);
	for (id = VG_LRC_OWNER_GPU0; id < VG_LRC_OWNERS_MAX && lrc->nr_retired;
	     id++) {
		if (lrc->owners[id] != &vg_lrc_ctx_retired)
			continue;
		/* A drop frees r only: tmp stays (a merge frees no replica). */
		list_for_each_entry_safe(r, tmp, &lrc->owned[id], onode)
			if (r->written || vg_lrc_rep_drop(r))
				break;
	}
}

/* A free owner id, reclaiming retired ones if none is; 0 if none. */
static u32 vg_lrc_owner_get(struct vg_lrc *lrc)
{
	u32 id, pass;

	lockdep_assert_held(&lrc->lock);
	for (pass = 0; pass < 2; pass++) {
		for (id = VG_LRC_OWNER_GPU0; id < VG_LRC_OWNERS_MAX; id++)
			if (!lrc->owners[id])
				return id;
		if (!lrc->nr_retired)
			break;
		vg_lrc_owners_reclaim(lrc);
	}
	return 0;
}

int vg_lrc_ctx_create(struct vg_lrc *lrc, struct vg_vm *vm,
		      struct vg_lrc_ctx **out)
{
	struct vg_lrc_ctx *ctx;
	struct vg_lrc_gpu *lg;
	u64 va_start, va_end, va_align;
	struct vg_gpu *gpu;
	u32 id;
	int err;

	if (!lrc || !vm || !out)
		return -EINVAL;
	gpu = vg_vm_gpu(vm);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->acct = kzalloc(sizeof(*ctx->acct), GFP_KERNEL);
	if (!ctx->acct) {
		kfree(ctx);
		return -ENOMEM;
	}
	mutex_lock(&lrc->lock);
	lg = vg_lrc_gpu_find(lrc, gpu);
	if (!lg) {
		err = -ENODEV;
		goto err_unlock;
	}
	err = vg_lrc_gpu_stage(lg);
	if (err)
		goto err_unlock;
	id = vg_lrc_owner_get(lrc);
	if (!id) {
		err = -ENOSPC;
		goto err_unlock;
	}
	/* The core calls the cache through it (FILE_*, SHARES, teardown). */
	err = vg_vm_attach_files(vm, &vg_lrc_file_ops, ctx);
	if (err)
		goto err_unlock;
	/* The VM's own bounds: a map's VA always fits. */
	vg_vm_va_bounds(vm, &va_start, &va_end, &va_align);
	vg_va_init(&ctx->map_va, va_start, va_end, va_align);
	ctx->lrc = lrc;
	ctx->lg = lg;
	ctx->vm = vm;
	ctx->as = vg_vm_gpu_as(vm);
	ctx->owner = id;
	INIT_LIST_HEAD(&ctx->maps);
	list_add_tail(&ctx->node, &lg->ctxs);
	lrc->owners[id] = ctx;
	lrc->nr_ctxs++;
	mutex_unlock(&lrc->lock);
	*out = ctx;
	return 0;

err_unlock:
	mutex_unlock(&lrc->lock);
	kfree(ctx->acct);
	kfree(ctx);
	return err;
}

static void vg_lrc_unmap_locked(struct vg_lrc_map *m, struct list_head *dead);
static void vg_lrc_maps_bury(struct list_head *dead);

void vg_lrc_ctx_destroy(struct vg_lrc_ctx *ctx)
{
	struct vg_lrc *lrc;
	struct vg_lrc_map *m, *tm;
	LIST_HEAD(dead);
	u32 i;

	if (!ctx)
		return;
	lrc = ctx->lrc;
	mutex_lock(&lrc->lock);
	list_for_each_entry_safe(m, tm, &ctx->maps, ctx_node)
		vg_lrc_unmap_locked(m, &dead);
	WARN_ON(ctx->map_va.count);
	for (i = 0; i < VG_LRC_SHARES_MAX; i++)
		if (ctx->shares[i].root)
			lrc->store->root_close(lrc->store_priv,
					       ctx->shares[i].root);
	list_del(&ctx->node);
	lrc->owners[ctx->owner] = NULL;
	/* A replica its unmap could not merge: the id waits for it. */
	if (!list_empty(&lrc->owned[ctx->owner])) {
		pr_warn("vgmem: lrc: owner %u retired until its replicas are merged\n",
			ctx->owner);
		lrc->owners[ctx->owner] = &vg_lrc_ctx_retired;
		lrc->nr_retired++;
	}
	lrc->nr_ctxs--;
	/*
	 * Its maps are gone; page entries its faults made may stay cached
	 * for the files' other users, charged until they go.
	 */
	ctx->acct->dead = true;
	if (!ctx->acct->bytes)
		kfree(ctx->acct);
	ctx->acct = NULL;
	vg_vm_detach_files(ctx->vm);
	mutex_unlock(&lrc->lock);
	/* A fault call on one of the maps may still use ctx: first this. */
	vg_lrc_maps_bury(&dead);
	kfree(ctx);
}

struct vg_lrc_ctx *vg_lrc_vm_ctx(struct vg_vm *vm)
{
	return vg_vm_files(vm, &vg_lrc_file_ops);
}

u32 vg_lrc_ctx_owner(const struct vg_lrc_ctx *ctx)
{
	return ctx->owner;
}

/* ---- shares ------------------------------------------------------------------ */

static struct vg_lrc_share *vg_lrc_share_find(struct vg_lrc_ctx *ctx, u32 id)
{
	u32 i;

	lockdep_assert_held(&ctx->lrc->lock);
	for (i = 0; i < VG_LRC_SHARES_MAX; i++)
		if (ctx->shares[i].root && ctx->shares[i].id == id)
			return &ctx->shares[i];
	return NULL;
}

/* Another share of the context with this tag (not "": never a clash). */
static bool vg_lrc_tag_taken(struct vg_lrc_ctx *ctx, u32 id, const char *tag)
{
	u32 i;

	lockdep_assert_held(&ctx->lrc->lock);
	for (i = 0; tag[0] && i < VG_LRC_SHARES_MAX; i++)
		if (ctx->shares[i].root && ctx->shares[i].id != id &&
		    !strcmp(ctx->shares[i].tag, tag))
			return true;
	return false;
}

int vg_lrc_share_set_tag(struct vg_lrc_ctx *ctx, u32 share_id,
			 const char *root_path, bool read_only,
			 const char *tag)
{
	struct vg_lrc *lrc;
	struct vg_lrc_share *s;
	void *root;
	u32 i;
	int err;

	if (!ctx || !root_path || !root_path[0])
		return -EINVAL;
	if (!tag)
		tag = "";
	if (tag[0] && !vgmem_share_tag_ok(tag))
		return -EINVAL;
	lrc = ctx->lrc;
	mutex_lock(&lrc->lock);
	if (vg_lrc_tag_taken(ctx, share_id, tag)) {
		err = -EEXIST;
		goto out_unlock;
	}
	s = vg_lrc_share_find(ctx, share_id);
	for (i = 0; !s && i < VG_LRC_SHARES_MAX; i++)
		if (!ctx->shares[i].root)
			s = &ctx->shares[i];
	if (!s) {
		err = -ENOSPC;
		goto out_unlock;
	}
	err = lrc->store->root_open(lrc->store_priv, root_path, &root);
	if (err)
		goto out_unlock;
	/* Open maps keep their files; only new maps see the new root. */
	if (s->root)
		lrc->store->root_close(lrc->store_priv, s->root);
	s->root = root;
	s->id = share_id;
	s->ro = read_only;
	/* NUL-padded whole: the guest gets the field as it is */
	memset(s->tag, 0, sizeof(s->tag));
	memcpy(s->tag, tag, strlen(tag));
out_unlock:
	mutex_unlock(&lrc->lock);
	return err;
}

int vg_lrc_share_set(struct vg_lrc_ctx *ctx, u32 share_id,
		     const char *root_path, bool read_only)
{
	return vg_lrc_share_set_tag(ctx, share_id, root_path, read_only, NULL);
}

int vg_lrc_share_clear(struct vg_lrc_ctx *ctx, u32 share_id)
{
	struct vg_lrc_share *s;
	int err = 0;

	if (!ctx)
		return -EINVAL;
	mutex_lock(&ctx->lrc->lock);
	s = vg_lrc_share_find(ctx, share_id);
	if (s) {
		ctx->lrc->store->root_close(ctx->lrc->store_priv, s->root);
		s->root = NULL;
	} else {
		err = -ENOENT;
	}
	mutex_unlock(&ctx->lrc->lock);
	return err;
}

/*
 * The table is at most VG_LRC_SHARES_MAX slots in no order: an entry's
 * place in the answer is its rank by id, counted, which keeps the paging
 * order stable without a sorted copy (no big buffer on a kernel stack).
 */
int vg_lrc_shares_list(struct vg_lrc_ctx *ctx, struct vgmem_ctrl_shares *out)
{
	u32 i, j, rank, total = 0;
	int err = 0;

	memset(out->e, 0, sizeof(out->e));
	out->count = 0;
	if (!ctx) {
		out->total = 0;
		return out->index ? -EINVAL : 0;
	}
	mutex_lock(&ctx->lrc->lock);
	for (i = 0; i < VG_LRC_SHARES_MAX; i++)
		total += ctx->shares[i].root != NULL;
	if (out->index > total) {
		err = -EINVAL;
		goto out_unlock;
	}
	for (i = 0; i < VG_LRC_SHARES_MAX; i++) {
		const struct vg_lrc_share *s = &ctx->shares[i];
		struct vgmem_ctrl_share *e;

		if (!s->root)
			continue;
		rank = 0;
		for (j = 0; j < VG_LRC_SHARES_MAX; j++)
			rank += ctx->shares[j].root &&
				ctx->shares[j].id < s->id;
		if (rank < out->index ||
		    rank - out->index >= VGMEM_CTRL_SHARES_PER_CMD)
			continue;
		e = &out->e[rank - out->index];
		e->share_id = s->id;
		e->flags = s->ro ? VGMEM_SHARE_F_RO : 0;
		memcpy(e->tag, s->tag, sizeof(e->tag));
		out->count++;
	}
	out->total = total;
out_unlock:
	mutex_unlock(&ctx->lrc->lock);
	return err;
}

/* ---- maps ---------------------------------------------------------------- */

/*
 * The live map holding va, or NULL (between maps, past a map's end, a
 * BO's VA, a dead map). O(log n) in the context's own index of its maps,
 * under lrc->lock alone: no call into the core per guest FILE_* command.
 */
struct vg_lrc_map *vg_lrc_map_find(struct vg_lrc_ctx *ctx, u64 va)
{
	struct vg_va_node *n;

	lockdep_assert_held(&ctx->lrc->lock);
	/* Maps do not overlap: the first one ending after va, if it holds va. */
	n = vg_va_end_after(&ctx->map_va, va);
	if (!n || va < n->start)
		return NULL;
	return container_of(n, struct vg_lrc_map, ctx_va);
}

/*
 * The map holding [va, va + length) and the range's GPU pages within it
 * (*first: index into m->reps). length 0: to the end of the map.
 */
int vg_lrc_map_range(struct vg_lrc_ctx *ctx, u64 va, u64 length,
		     struct vg_lrc_map **out, u32 *first, u32 *n)
{
	struct vg_lrc_map *m;

	lockdep_assert_held(&ctx->lrc->lock);
	m = vg_lrc_map_find(ctx, va);
	if (!m)
		return -EBADF;
	if (!IS_ALIGNED(va, GPAGE) || !IS_ALIGNED(length, GPAGE))
		return -EINVAL;
	if (!length)
		length = m->len - (va - m->va);
	if (length > m->len - (va - m->va))
		return -EINVAL;
	*out = m;
	*first = (va - m->va) >> VG_LRC_GSHIFT;
	*n = length >> VG_LRC_GSHIFT;
	return 0;
}

/*
 * The PTE protection of a GPU page of m holding r: read-only, except the
 * 4 KiB pages a private replica's owner wrote since its last release.
 */
static u32 vg_lrc_map_rw_pages(struct vg_lrc_map *m, struct vg_lrc_rep *r)
{
	/* A read-only map of a file the context also maps RW stays RO. */
	if (r->owner != m->ctx->owner || !m->rw)
		return 0;
	return r->written;
}

/* Set GPU page idx's protection again (what r->written says changed). */
int vg_lrc_map_protect(struct vg_lrc_map *m, u32 idx)
{
	lockdep_assert_held(&m->ctx->lrc->lock);
	return vg_vm_file_protect(m->ctx->vm, m->va + (u64)idx * GPAGE, GPAGE,
				  vg_lrc_map_rw_pages(m, m->reps[idx]));
}

/* Map replica r at GPU page idx of m (replacing what was there). */
int vg_lrc_map_set(struct vg_lrc_map *m, u32 idx, struct vg_lrc_rep *r)
{
	struct vg_lrc_gpu *lg = m->ctx->lg;
	struct vg_lrc_rep *old = m->reps[idx];
	u64 va = m->va + (u64)idx * GPAGE;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	if (WARN_ON(!r->vram || r->lg != lg))
		return -EINVAL;
	/*
	 * Never writable for a moment: another channel of the AS must never
	 * write a shared replica. A private replica's written pages are RW.
	 */
	err = vg_vm_file_map(m->ctx->vm, va, GPAGE, r->vram,
			     vg_lrc_map_rw_pages(m, r));
	if (err) {
		/* The old PTEs may be gone too: nothing is mapped now. */
		m->reps[idx] = NULL;
		if (old && old != r)
			old->maps--;
		return err;
	}
	m->reps[idx] = r;
	if (old != r) {
		if (old)
			old->maps--;
		r->maps++;
	}
	return 0;
}

void vg_lrc_map_clear(struct vg_lrc_map *m, u32 idx)
{
	struct vg_lrc_gpu *lg = m->ctx->lg;
	struct vg_lrc_rep *r = m->reps[idx];

	lockdep_assert_held(&lg->lrc->lock);
	if (!r)
		return;
	vg_vm_file_unmap(m->ctx->vm, m->va + (u64)idx * GPAGE, GPAGE);
	m->reps[idx] = NULL;
	r->maps--;
}

int vg_lrc_map(struct vg_lrc_ctx *ctx, u32 share_id, const char *relpath,
	       u64 offset, u64 length, u32 flags, u64 *va)
{
	if (flags & VGMEM_FILE_INO)
		return -EINVAL;
	return vg_lrc_map_ino(ctx, share_id, relpath, offset, length, flags, 0,
			      va);
}

/* A map at the first free VA (at 0) or at at exactly (a migrated one). */
static int vg_lrc_map_at(struct vg_lrc_ctx *ctx, u32 share_id,
			 const char *relpath, u64 offset, u64 length, u32 flags,
			 u64 ino, u64 at, u64 *va);

int vg_lrc_map_ino(struct vg_lrc_ctx *ctx, u32 share_id, const char *relpath,
		   u64 offset, u64 length, u32 flags, u64 ino, u64 *va)
{
	return vg_lrc_map_at(ctx, share_id, relpath, offset, length, flags, ino,
			     0, va);
}

static int vg_lrc_map_at(struct vg_lrc_ctx *ctx, u32 share_id,
			 const char *relpath, u64 offset, u64 length, u32 flags,
			 u64 ino, u64 at, u64 *va)
{
	struct vg_lrc *lrc;
	struct vg_lrc_share *s;
	struct vg_lrc_ino *f;
	struct vg_lrc_map *m = NULL;
	struct vg_lrc_rep **reps = NULL;
	char *path = NULL;
	bool want_ino = flags & VGMEM_FILE_INO;
	u64 end, start, cost;
	u32 nr;
	bool rw;
	int err;

	if (!ctx || !relpath || !va || !relpath[0])
		return -EINVAL;
	flags &= ~VGMEM_FILE_INO;
	if (flags != VGMEM_FILE_RO && flags != VGMEM_FILE_RW)
		return -EINVAL;
	if (!want_ino && ino)
		return -EINVAL;
	if (!length || !IS_ALIGNED(offset, VGMEM_FILE_ALIGN) ||
	    !IS_ALIGNED(length, VGMEM_FILE_ALIGN))
		return -EINVAL;
	if (length > VGMEM_BO_MAX_SIZE || check_add_overflow(offset, length,
							     &end))
		return -EFBIG;
	rw = flags == VGMEM_FILE_RW;
	lrc = ctx->lrc;
	nr = length >> VG_LRC_GSHIFT;
	/* What the map holds: the VM's, checked before it is allocated. */
	cost = sizeof(*m) + (u64)nr * sizeof(*m->reps) + strlen(relpath) + 1;
	mutex_lock(&lrc->lock);
	if (ctx->nr_maps >= VG_LRC_MAPS_MAX) {
		err = -ENOMEM;
		goto err_unlock;
	}
	s = vg_lrc_share_find(ctx, share_id);
	if (!s) {
		err = -ENOENT;
		goto err_unlock;
	}
	if (rw && s->ro) {
		err = -EACCES;
		goto err_unlock;
	}
	err = vg_lrc_ino_get(lrc, s->root, relpath, rw, &f);
	if (err)
		goto err_unlock;
	/* The path names another file than the one the guest was handed. */
	if (want_ino && f->id.ino != ino) {
		err = -ESTALE;
		goto err_put_file;
	}
	if (end > ALIGN(f->size, VGMEM_FILE_ALIGN)) {
		err = -EFBIG;
		goto err_put_file;
	}
	err = vg_lrc_charge(lrc, ctx->acct, cost);
	if (err)
		goto err_put_file;
	/*
	 * The map's slot and charge are taken: allocate without the
	 * host-wide lock (the table is up to 8 MiB). Nothing checked above
	 * can be undone meanwhile: the reference keeps the file (and its
	 * size only grows), a share replaced leaves maps their files, and
	 * the context outlives its control commands.
	 */
	ctx->nr_maps++;
	mutex_unlock(&lrc->lock);
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	reps = kvcalloc(nr, sizeof(*reps), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	path = kmemdup(relpath, strlen(relpath) + 1, GFP_KERNEL_ACCOUNT);
	mutex_lock(&lrc->lock);
	if (!m || !reps || !path) {
		err = -ENOMEM;
		goto err_unreserve;
	}
	m->reps = reps;
	m->path = path;
	m->share_id = share_id;
	m->ino = f->id.ino;
	m->ctx = ctx;
	m->file = f;
	m->len = length;
	m->first_gp = offset >> VG_LRC_GSHIFT;
	m->nr_gp = nr;
	m->rw = rw;

	/*
	 * Faults in the range go to vg_lrc_fault_handler(m): one may come at
	 * once, and waits for lrc->lock, that is, for m to be complete.
	 */
	err = at ? vg_vm_file_va_get_at(ctx->vm, at, length, &m->va_node,
					vg_lrc_fault_handler, m, &m->freg) :
		   vg_vm_file_va_get(ctx->vm, length, &m->va_node,
				     vg_lrc_fault_handler, m, &m->freg);
	if (err)
		goto err_unreserve;
	start = m->va_node.start;
	m->va = start;
	/* The VM's index holds it, so it overlaps no live map of ctx either. */
	m->ctx_va.start = start;
	m->ctx_va.end = start + length;
	m->ctx_va.file = true;
	vg_va_insert(&ctx->map_va, &m->ctx_va);
	list_add_tail(&m->ctx_node, &ctx->maps);
	list_add_tail(&m->file_node, &f->maps);
	mutex_unlock(&lrc->lock);
	*va = start;
	return 0;

err_unreserve:
	ctx->nr_maps--;
	vg_lrc_uncharge(ctx->acct, cost);
err_put_file:
	vg_lrc_ino_put(f);
err_unlock:
	mutex_unlock(&lrc->lock);
	kvfree(reps);
	kfree(path);
	kfree(m);
	return err;
}

/*
 * Unmap m: the context's unreleased writes are released, its private
 * replicas no other map of it uses are merged into the host copy and
 * dropped, and the range is written back. Best effort on errors (each is
 * logged): the mapping goes in any case, and what could not be merged
 * stays in its replica's host-side saved state only if eviction saved it.
 * m ends dead on the list dead (through ctx_node), still registered for
 * faults and in the VM's VA index: the caller passes the list to
 * vg_lrc_maps_bury() once it has dropped lrc->lock.
 */
static void vg_lrc_unmap_locked(struct vg_lrc_map *m, struct list_head *dead)
{
	struct vg_lrc_ctx *ctx = m->ctx;
	struct vg_lrc_ino *f = m->file;
	struct vg_lrc_rep *r, *mapped;
	struct vg_lrc_gpage *g;
	u32 idx, gp, end = m->first_gp + m->nr_gp;
	int err;

	lockdep_assert_held(&ctx->lrc->lock);
	err = vg_lrc_release_locked(m, 0, m->nr_gp);
	if (err) {
		pr_warn("vgmem: lrc: implicit release at unmap failed: %d\n",
			err);
	}
	/*
	 * Only cached pages have replicas (mapped or private). Asked again
	 * after each: a merge's load may evict other host copies.
	 */
	for (g = vg_lrc_gpage_next(f, m->first_gp, end); g;
	     g = vg_lrc_gpage_next(f, gp + 1, end)) {
		gp = vg_lrc_gp_of(g);
		idx = gp - m->first_gp;
		mapped = m->reps[idx];
		vg_lrc_map_clear(m, idx);
		r = vg_lrc_rep_private(f, gp, ctx->owner);
		if (r && !r->maps && !r->written) {
			err = vg_lrc_rep_drop(r);
			if (err) {
				pr_warn("vgmem: lrc: merge at unmap failed: %d\n",
					err);
			}
		}
		/* A shared replica nobody maps stays cached while it is newest. */
		if (mapped && mapped != r && !mapped->maps) {
			u32 i;

			for (i = 0; i < NPG; i++)
				if (mapped->view[i] !=
				    vg_vv_max(&mapped->page->vv[i]))
					break;
			if (i < NPG)
				vg_lrc_rep_drop(mapped);
		}
	}
	if (f->writable) {
		/* Pages never loaded hold nothing newer than the store. */
		for (g = vg_lrc_gpage_next(f, m->first_gp, end); g;
		     g = vg_lrc_gpage_next(f, gp + 1, end)) {
			gp = vg_lrc_gp_of(g);
			if (!g->host)
				continue;
			err = vg_lrc_gp_merge(f, gp);
			if (err)
				break;
		}
		if (!err)
			err = vg_lrc_writeback(f, m->first_gp, m->nr_gp);
		if (err)
			pr_warn("vgmem: lrc: write-back at unmap failed: %d\n",
				err);
	}
	/* Every PTE is gone: an access faults, and the handler sees dead. */
	list_move_tail(&m->ctx_node, dead);
	vg_va_remove(&ctx->map_va, &m->ctx_va);
	ctx->nr_maps--;
	list_del(&m->file_node);
	vg_lrc_ino_put(f);
	vg_lrc_uncharge(ctx->acct, sizeof(*m) + (u64)m->nr_gp * sizeof(*m->reps) +
			strlen(m->path) + 1);
	kvfree(m->reps);
	m->reps = NULL;
	kfree(m->path);
	m->path = NULL;
	m->file = NULL;
	m->dead = true;
}

/*
 * The second half of unmapping, with no lrc->lock (a fault call under way
 * may wait for it): unregister each dead map's range, which waits for
 * that call, then give its VA back and free it. The VA stays taken until
 * the range is unregistered, so a new map never meets the old range.
 */
static void vg_lrc_maps_bury(struct list_head *dead)
{
	struct vg_lrc_map *m, *tm;

	list_for_each_entry_safe(m, tm, dead, ctx_node) {
		vg_vm_file_va_put(m->ctx->vm, &m->va_node, m->freg);
		list_del(&m->ctx_node);
		kfree(m);
	}
}

int vg_lrc_unmap(struct vg_lrc_ctx *ctx, u64 va)
{
	struct vg_va_node *n;
	struct vg_lrc_map *m;
	LIST_HEAD(dead);
	int err = 0;

	if (!ctx)
		return -EINVAL;
	mutex_lock(&ctx->lrc->lock);
	/* Only a live map's exact start: a dead one left ctx->map_va. */
	n = vg_va_lookup(&ctx->map_va, va);
	m = n ? container_of(n, struct vg_lrc_map, ctx_va) : NULL;
	if (!m)
		err = -EBADF;
	else
		vg_lrc_unmap_locked(m, &dead);
	mutex_unlock(&ctx->lrc->lock);
	vg_lrc_maps_bury(&dead);
	return err;
}

/* ---- the core's view of a context (struct vg_file_ops, vg.h) ------------------ */

static int vg_lrc_fo_map(void *ctx, u32 share_id, const char *path,
			 u64 offset, u64 length, u32 flags, u64 ino, u64 *va)
{
	return vg_lrc_map_ino(ctx, share_id, path, offset, length, flags, ino,
			      va);
}

/*
 * The live map starting at or after va, its range synced first (released,
 * merged into the host copy, written to the file, fsynced): a migration's
 * record of it (vg_file_ops.mig_next).
 */
static int vg_lrc_fo_mig_next(void *priv, u64 va, struct vg_file_map_desc *d)
{
	struct vg_lrc_ctx *ctx = priv;
	struct vg_va_node *n;
	struct vg_lrc_map *m;
	int err;

	mutex_lock(&ctx->lrc->lock);
	n = vg_va_end_after(&ctx->map_va, va);
	while (n && n->start < va)
		n = vg_va_next(n);
	if (!n) {
		mutex_unlock(&ctx->lrc->lock);
		return -ENOENT;
	}
	m = container_of(n, struct vg_lrc_map, ctx_va);
	memset(d, 0, sizeof(*d));
	d->va = m->va;
	d->offset = (u64)m->first_gp << VG_LRC_GSHIFT;
	d->length = m->len;
	d->ino = m->ino;
	d->share_id = m->share_id;
	d->flags = m->rw ? VGMEM_FILE_RW : VGMEM_FILE_RO;
	strscpy(d->path, m->path, sizeof(d->path));
	mutex_unlock(&ctx->lrc->lock);
	/* Read-only maps hold no writes of the context's. */
	err = d->flags == VGMEM_FILE_RW ? vg_lrc_sync(ctx, d->va, 0) : 0;
	return err;
}

static int vg_lrc_fo_map_at(void *ctx, const struct vg_file_map_desc *d)
{
	u64 va;

	if (!d->va)
		return -EINVAL;
	return vg_lrc_map_at(ctx, d->share_id, d->path, d->offset, d->length,
			     d->flags | VGMEM_FILE_INO, d->ino, d->va, &va);
}

static int vg_lrc_fo_unmap(void *ctx, u64 va)
{
	return vg_lrc_unmap(ctx, va);
}

static int vg_lrc_fo_acquire(void *ctx, u64 va, u64 length)
{
	return vg_lrc_acquire(ctx, va, length);
}

static int vg_lrc_fo_release(void *ctx, u64 va, u64 length)
{
	return vg_lrc_release(ctx, va, length);
}

static int vg_lrc_fo_sync(void *ctx, u64 va, u64 length)
{
	return vg_lrc_sync(ctx, va, length);
}

static int vg_lrc_fo_shares(void *ctx, struct vgmem_ctrl_shares *out)
{
	return vg_lrc_shares_list(ctx, out);
}

static void vg_lrc_fo_destroy(void *ctx)
{
	vg_lrc_ctx_destroy(ctx);
}

static const struct vg_file_ops vg_lrc_file_ops = {
	.map = vg_lrc_fo_map,
	.mig_next = vg_lrc_fo_mig_next,
	.map_at = vg_lrc_fo_map_at,
	.unmap = vg_lrc_fo_unmap,
	.acquire = vg_lrc_fo_acquire,
	.release = vg_lrc_fo_release,
	.sync = vg_lrc_fo_sync,
	.shares = vg_lrc_fo_shares,
	.destroy = vg_lrc_fo_destroy,
};
