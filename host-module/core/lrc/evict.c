// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The VRAM side of the cache: replicas within each GPU's budget, least
 * recently allocated evicted first, and write-back of the host copy's
 * dirty 4 KiB blocks to the store.
 *
 * Eviction never loses a byte: a private replica's released changes are
 * merged into the host copy before its VRAM goes, and its unreleased
 * writes are kept in host memory (rep->saved) until the owner faults the
 * page back in, releases, or unmaps.
 */
#include "lrc_internal.h"

#define GPAGE	VG_LRC_GPAGE_SIZE
#define PAGE	VG_LRC_PAGE_SIZE
#define NPG	VG_LRC_PAGES_PER_GPAGE

static void vg_lrc_count(struct vg_lrc *lrc, u16 owner, bool add)
{
	u64 *c = owner == VG_LRC_OWNER_SHARED ? &lrc->stats.replicas_shared :
		 &lrc->stats.replicas_private;

	if (add)
		(*c)++;
	else
		(*c)--;
}

/*
 * The VM a private replica of owner on lg is counted to: its context's,
 * found among lg's contexts (an owner id is not reused while a private
 * replica of it is cached, ctx.c). NULL for a shared replica.
 */
static struct vg_vm *vg_lrc_owner_vm(struct vg_lrc_gpu *lg, u16 owner)
{
	struct vg_lrc_ctx *ctx;

	lockdep_assert_held(&lg->lrc->lock);
	if (owner == VG_LRC_OWNER_SHARED)
		return NULL;
	list_for_each_entry(ctx, &lg->ctxs, node)
		if (ctx->owner == owner)
			return ctx->vm;
	return NULL;
}

/*
 * Give back the memory of a replica that is on no list yet (a setup that
 * failed): VRAM uncharged, or a host replica's host page.
 */
static void vg_lrc_mem_put(struct vg_lrc_rep *r, struct vg_mem *mem,
			   bool in_host)
{
	struct vg_lrc_gpu *lg = r->lg;

	lockdep_assert_held(&lg->lrc->lock);
	if (in_host)
		vg_gpu_host_mem_free(lg->gpu, mem);
	else
		vg_gpu_cache_vram_put(lg->gpu, mem, GPAGE, &r->charge);
}

/*
 * r got its memory (r->vram, r->in_host): put it on its GPU's LRA list and
 * count it, in VRAM (lg->used, already in gpu->cache_used) or host RAM.
 */
static void vg_lrc_rep_placed(struct vg_lrc_rep *r)
{
	struct vg_lrc_gpu *lg = r->lg;

	lockdep_assert_held(&lg->lrc->lock);
	if (r->in_host) {
		list_add_tail(&r->lra, &lg->hlra);
		lg->host_used += GPAGE;
		lg->lrc->stats.replicas_host++;
	} else {
		list_add_tail(&r->lra, &lg->lra);
		lg->used += GPAGE;
	}
}

/* Release the replica's memory (it is mapped nowhere any more). */
static void vg_lrc_rep_free_vram(struct vg_lrc_rep *r)
{
	struct vg_lrc_gpu *lg = r->lg;

	lockdep_assert_held(&lg->lrc->lock);
	if (!r->vram)
		return;
	if (r->in_host) {
		/* Host RAM: no VRAM and no VM was ever charged for it. */
		vg_lrc_mem_put(r, r->vram, true);
		r->vram = NULL;
		r->in_host = false;
		list_del(&r->lra);
		lg->host_used -= GPAGE;
		lg->lrc->stats.replicas_host--;
		return;
	}
	vg_lrc_mem_put(r, r->vram, false);
	r->vram = NULL;
	list_del(&r->lra);
	lg->used -= GPAGE;
}

/* Unlink and free a replica that nothing maps and no version needs. */
static void vg_lrc_rep_free(struct vg_lrc_rep *r)
{
	struct vg_lrc_rep **pp = &r->page->reps;

	lockdep_assert_held(&r->file->lrc->lock);
	WARN_ON(r->maps);
	while (*pp != r)
		pp = &(*pp)->next;
	*pp = r->next;
	vg_lrc_rep_free_vram(r);
	vg_lrc_count(r->file->lrc, r->owner, false);
	if (r->owner != VG_LRC_OWNER_SHARED) {
		list_del(&r->onode);
		/* Its owner's last replica: a retired id may be reused. */
		if (list_empty(&r->file->lrc->owned[r->owner]))
			vg_lrc_owner_put(r->file->lrc, r->owner);
	}
	kvfree(r->base);
	kvfree(r->saved);
	kfree(r);
}

void vg_lrc_rep_unmap_all(struct vg_lrc_rep *r)
{
	struct vg_lrc_map *m;

	lockdep_assert_held(&r->file->lrc->lock);
	list_for_each_entry(m, &r->file->maps, file_node) {
		if (r->gp < m->first_gp || r->gp >= m->first_gp + m->nr_gp)
			continue;
		if (m->reps[r->gp - m->first_gp] == r)
			vg_lrc_map_clear(m, r->gp - m->first_gp);
	}
}

/*
 * Free a replica that holds no released or unreleased data anyone needs
 * (a new one whose setup failed): no merge, its version entries dropped.
 * Its page entry goes too if nothing else of the page is cached (a setup
 * that failed before the page's host copy was loaded).
 */
void vg_lrc_rep_discard(struct vg_lrc_rep *r)
{
	struct vg_lrc_ino *f = r->file;
	struct vg_lrc_gpage *g = r->page;
	u32 i;

	lockdep_assert_held(&f->lrc->lock);
	vg_lrc_rep_unmap_all(r);
	if (r->owner != VG_LRC_OWNER_SHARED)
		for (i = 0; i < NPG; i++)
			vg_vv_set(&g->vv[i], r->owner, 0);
	vg_lrc_rep_free(r);
	vg_lrc_gpage_tidy(f, g);
}

/*
 * Take a replica out of VRAM for good: unmap it everywhere, merge the
 * released changes of a private one into the host copy, drop its version
 * entries and free it. Its owner must have no unreleased writes in it
 * (callers release first). On error nothing is freed.
 */
int vg_lrc_rep_drop(struct vg_lrc_rep *r)
{
	struct vg_lrc_ino *f = r->file;
	u32 i;
	int err;

	lockdep_assert_held(&f->lrc->lock);
	WARN_ON(r->written);
	vg_lrc_rep_unmap_all(r);
	if (r->owner != VG_LRC_OWNER_SHARED) {
		r->pinned = true;
		err = vg_lrc_gp_merge(f, r->gp);
		r->pinned = false;
		if (err)
			return err;
		/* The host copy holds it all now: dropping cannot lower max. */
		for (i = 0; i < NPG; i++)
			vg_vv_set(&r->page->vv[i], r->owner, 0);
	}
	vg_lrc_rep_free(r);
	return 0;
}

/*
 * Evict one replica: a shared one is just freed; a private one is merged
 * back and, if it holds unreleased writes, its content kept in host RAM.
 */
static int vg_lrc_rep_evict(struct vg_lrc_rep *r)
{
	struct vg_lrc *lrc = r->file->lrc;
	u8 *data;
	int err;

	lockdep_assert_held(&lrc->lock);
	if (r->owner == VG_LRC_OWNER_SHARED || !r->written) {
		err = vg_lrc_rep_drop(r);
		if (!err)
			lrc->stats.evictions++;
		return err;
	}
	r->pinned = true;
	vg_lrc_rep_unmap_all(r);
	err = vg_lrc_gp_merge(r->file, r->gp);
	if (err)
		goto out_unpin;
	r->saved = kvmalloc(GPAGE, GFP_KERNEL);
	if (!r->saved) {
		err = -ENOMEM;
		goto out_unpin;
	}
	err = vg_lrc_rep_read(r, &data);
	if (err) {
		kvfree(r->saved);
		r->saved = NULL;
		goto out_unpin;
	}
	memcpy(r->saved, data, GPAGE);
	vg_lrc_rep_free_vram(r);
	lrc->stats.evictions++;
out_unpin:
	r->pinned = false;
	return err;
}

/*
 * Evict least recently allocated replicas of list (lg->lra or lg->hlra)
 * until *used (lg->used or lg->host_used) <= budget.
 */
static int vg_lrc_evict_list(struct vg_lrc_gpu *lg, struct list_head *list,
			     const u64 *used, u64 budget)
{
	struct vg_lrc_rep *r, *victim;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	while (*used > budget) {
		victim = NULL;
		list_for_each_entry(r, list, lra) {
			if (!r->pinned) {
				victim = r;
				break;
			}
		}
		if (!victim)
			return -ENOMEM;
		err = vg_lrc_rep_evict(victim);
		if (err)
			return err;
	}
	return 0;
}

/* Evict least recently allocated VRAM replicas until used <= budget. */
int vg_lrc_evict_to(struct vg_lrc_gpu *lg, u64 budget)
{
	return vg_lrc_evict_list(lg, &lg->lra, &lg->used, budget);
}

/*
 * The same for host replicas (host_used <= budget). Eviction is the same
 * as from VRAM: a shared one is freed, a private one merged into the host
 * copy first and its unreleased writes kept (rep->saved).
 */
int vg_lrc_host_evict_to(struct vg_lrc_gpu *lg, u64 budget)
{
	return vg_lrc_evict_list(lg, &lg->hlra, &lg->host_used, budget);
}

/*
 * Evict least recently allocated unpinned replicas of lg until bytes of
 * VRAM are freed or none is left to evict (pinned ones, in use by the
 * operation under way, are skipped). Returns the bytes freed.
 */
static u64 vg_lrc_evict_bytes(struct vg_lrc_gpu *lg, u64 bytes)
{
	u64 before = lg->used;

	lockdep_assert_held(&lg->lrc->lock);
	/*
	 * Stops at the first replica that cannot go (-ENOMEM: only pinned
	 * ones left; or a failed merge copy, the replica then stays as it
	 * was): what it freed until then stays freed.
	 */
	vg_lrc_evict_to(lg, lg->used > bytes ? lg->used - bytes : 0);
	return before - lg->used;
}

/*
 * The core's reclaim hook (vg_gpu_set_cache_reclaim, vg.h): the cache
 * yields its VRAM before any VM's chunks are relocated for room (a BO
 * allocation, the return worker). Called with no core lock held; lg
 * lives until vg_lrc_gpu_remove() has unregistered the hook, which waits
 * for this call. Eviction keeps every byte: a shared replica is freed, a
 * private one's released changes are merged into the host copy first and
 * its unreleased writes kept in host RAM (vg_lrc_rep_evict()).
 *
 * Host replicas (lg->hlra) are skipped: they hold no VRAM, and evicting
 * them would free none (vg_lrc_evict_to walks lg->lra only).
 *
 * The VRAM freed here may be taken again by a GPU fault of the cache
 * before the caller takes gpu->lock: the caller then relocates for the
 * difference, as it would have without the hook. The core recomputes
 * free VRAM under the lock it keeps, so a refill costs a relocation,
 * never a wrong count or a lost byte.
 */
u64 vg_lrc_reclaim(void *priv, u64 bytes)
{
	struct vg_lrc_gpu *lg = priv;
	struct vg_lrc *lrc = lg->lrc;
	u64 freed;

	mutex_lock(&lrc->lock);
	freed = vg_lrc_evict_bytes(lg, bytes);
	mutex_unlock(&lrc->lock);
	return freed;
}

/*
 * One attempt at a GPU page of free VRAM for r, with no eviction: counted
 * in the GPU's cache_used and, for a private replica, the owner's VM's
 * cache_private (vg_gpu_cache_vram_get). The cache takes only free VRAM:
 * never VRAM the BOs use, and the BOs get it back first when they need it
 * (vg_lrc_reclaim()). The GPU's VRAM size never changes, so no VM's
 * entitlement or equal share moves with the cache. -ENOSPC: the core
 * counts no free GPU page; else an error.
 */
static int vg_lrc_vram_take(struct vg_lrc_gpu *lg, struct vg_lrc_rep *r,
			    struct vg_mem **out)
{
	lockdep_assert_held(&lg->lrc->lock);
	return vg_gpu_cache_vram_get(lg->gpu, vg_lrc_owner_vm(lg, r->owner),
				     GPAGE, out, &r->charge);
}

/*
 * A GPU page for replica r: r->vram and r->in_host set, on no list yet.
 *
 * VRAM first, within the budget (evicting the cache's own least recently
 * allocated replicas beyond it). When BOs hold all other VRAM, the cache
 * recycles its own VRAM pages. Only when that cannot give a page either
 * (the cache holds no VRAM, or only pinned replicas) and host_ok, the
 * replica goes to host RAM (a GPU driver VG_LOC_HOST mem), which the GPU
 * maps like VRAM and reaches over PCIe: GPUswap's answer for memory that
 * cannot be in VRAM, so a file map keeps working, slower, on a GPU whose
 * VRAM the BOs fill. Host replicas are not VRAM: they count in
 * lg->host_used, bounded by the same per-GPU budget on their own (least
 * recently allocated host replicas are evicted beyond it).
 *
 * A GPU driver VRAM allocation that fails while the core counts free VRAM is
 * an error (-ENOMEM), not a reason to use host RAM.
 */
static int vg_lrc_mem_get(struct vg_lrc_gpu *lg, struct vg_lrc_rep *r,
			  bool host_ok)
{
	struct vg_mem *mem;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	err = vg_lrc_evict_to(lg, lg->budget - GPAGE);
	if (err)
		goto host;	/* the budget holds only pinned replicas */
	for (;;) {
		err = vg_lrc_vram_take(lg, r, &mem);
		if (!err) {
			r->vram = mem;
			r->in_host = false;
			return 0;
		}
		/* No VRAM: recycle one of the cache's own pages. */
		if (!lg->used || vg_lrc_evict_to(lg, lg->used - GPAGE))
			break;
	}
	if (err != -ENOSPC)
		return -ENOMEM;
host:
	if (!host_ok)
		return -ENOMEM;
	err = vg_lrc_host_evict_to(lg, lg->budget - GPAGE);
	if (err)
		return err;
	err = vg_gpu_host_mem_alloc(lg->gpu, GPAGE, &mem, NULL);
	if (err)
		return err;
	r->vram = mem;
	r->in_host = true;
	r->charge.vm = false;
	return 0;
}

/*
 * A new replica of file page gp on lg for owner (VG_LRC_OWNER_SHARED or a
 * context), pinned, with uninitialised memory, linked on the page and its
 * LRA list. The caller fills it and unpins it. host_ok: it may go to host
 * RAM when no VRAM can be had (the faulting page; not readahead beyond it,
 * which then simply stops). A page entry it makes is charged to acct (the
 * faulting VM's: -ENOMEM over its cap).
 */
int vg_lrc_rep_alloc(struct vg_lrc_gpu *lg, struct vg_lrc_ino *f, u32 gp,
		     u16 owner, bool host_ok, struct vg_lrc_acct *acct,
		     struct vg_lrc_rep **out)
{
	struct vg_lrc_gpage *g;
	struct vg_lrc_rep *r;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	/*
	 * The entry first, so the cap refuses before any VRAM moves. Not on
	 * the host LRU (no host copy): the evictions below cannot free it.
	 */
	err = vg_lrc_gpage_get(f, gp, acct, &g);
	if (err)
		return err;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		err = -ENOMEM;
		goto err_tidy;
	}
	r->lg = lg;
	r->owner = owner;
	err = vg_lrc_mem_get(lg, r, host_ok);
	if (err) {
		kfree(r);
		goto err_tidy;
	}
	r->file = f;
	r->page = g;
	r->gp = gp;
	r->pinned = true;
	vg_lrc_rep_placed(r);
	r->next = g->reps;
	g->reps = r;
	vg_lrc_count(lg->lrc, owner, true);
	if (owner != VG_LRC_OWNER_SHARED)
		list_add_tail(&r->onode, &lg->lrc->owned[owner]);
	*out = r;
	return 0;

err_tidy:
	vg_lrc_gpage_tidy(f, g);
	return err;
}

/*
 * Bring an evicted private replica back (its saved content): into VRAM,
 * or host RAM when no VRAM can be had.
 */
int vg_lrc_rep_restore(struct vg_lrc_rep *r)
{
	struct vg_lrc_gpu *lg = r->lg;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	if (r->vram)
		return 0;
	r->pinned = true;
	err = vg_lrc_mem_get(lg, r, true);
	if (err)
		goto out_unpin;
	memcpy(lg->mstage_va, r->saved, GPAGE);
	err = vg_lrc_copy_gpage(lg, r->vram, lg->mstage);
	if (err) {
		vg_lrc_mem_put(r, r->vram, r->in_host);
		r->vram = NULL;
		r->in_host = false;
		goto out_unpin;
	}
	vg_lrc_rep_placed(r);
	lg->lrc->stats.fetch_host += GPAGE;
	kvfree(r->saved);
	r->saved = NULL;
out_unpin:
	r->pinned = false;
	return err;
}

/*
 * Move host replica r to free VRAM (no eviction), keeping every map of it:
 * unmapped first (a GPU access then faults and waits for lrc->lock, so no
 * write can land in the host page after the copy), copied, and mapped
 * again with the same protection. Its version, written pages and base do
 * not change: only where its bytes live.
 */
static int vg_lrc_rep_promote(struct vg_lrc_rep *r)
{
	struct vg_lrc_gpu *lg = r->lg;
	struct vg_lrc_ino *f = r->file;
	struct vg_lrc_map **ms, *m;
	struct vg_mem *mem, *old = r->vram;
	u32 n = 0, k, idx, cap = r->maps ? r->maps : 1;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	/* First the VRAM: while there is none, a fault pays one lock here. */
	err = vg_lrc_vram_take(lg, r, &mem);
	if (err)
		return err;
	ms = kcalloc(cap, sizeof(*ms), GFP_KERNEL);
	if (!ms) {
		vg_lrc_mem_put(r, mem, false);
		return -ENOMEM;
	}
	r->pinned = true;
	list_for_each_entry(m, &f->maps, file_node) {
		if (r->gp < m->first_gp || r->gp >= m->first_gp + m->nr_gp)
			continue;
		idx = r->gp - m->first_gp;
		if (m->reps[idx] != r)
			continue;
		vg_lrc_map_clear(m, idx);
		if (!WARN_ON_ONCE(n >= cap))
			ms[n++] = m;
	}
	err = vg_lrc_copy_gpage(lg, mem, old);
	if (err) {
		vg_lrc_mem_put(r, mem, false);
		goto out_remap;
	}
	/* From host RAM to VRAM: the lists and counts follow. */
	list_del(&r->lra);
	lg->host_used -= GPAGE;
	lg->lrc->stats.replicas_host--;
	r->vram = mem;
	r->in_host = false;
	vg_lrc_rep_placed(r);
	vg_lrc_mem_put(r, old, true);
	lg->lrc->stats.promotions++;
out_remap:
	/* A map that fails stays clear: its next access faults it back. */
	for (k = 0; k < n; k++)
		vg_lrc_map_set(ms[k], r->gp - ms[k]->first_gp, r);
	r->pinned = false;
	kfree(ms);
	return err;
}

/*
 * Once VRAM is free again, move up to max host replicas of lg into it,
 * oldest first, within the budget and never evicting anything: a later
 * GPU fault on lg calls this, so the cache climbs back into VRAM as BOs
 * leave. A stale shared replica stays where it is (contexts that have not
 * acquired yet read it; it goes at their acquire), as do pinned ones.
 */
void vg_lrc_promote(struct vg_lrc_gpu *lg, u32 max)
{
	struct vg_lrc_rep *r, *tmp;

	lockdep_assert_held(&lg->lrc->lock);
	list_for_each_entry_safe(r, tmp, &lg->hlra, lra) {
		if (!max)
			break;
		if (r->pinned || (r->owner == VG_LRC_OWNER_SHARED &&
				  !vg_lrc_rep_newest(r, r->page)))
			continue;
		if (lg->used + GPAGE > lg->budget)
			break;
		max--;
		if (vg_lrc_rep_promote(r))
			break;
	}
}
/*
 * Write the dirty 4 KiB blocks of GPU page gp's host copy to the store
 * (contiguous dirty blocks in one write; nothing past the file's size) and
 * record them in its storage base. No fsync, wb_dirty unchanged: the
 * callers finish the page their way. *wrote is set if a byte went out.
 */
int vg_lrc_gp_store_dirty(struct vg_lrc_ino *f, u32 gp, bool *wrote)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_gpage *g = vg_lrc_gpage(f, gp);
	u64 off, end;
	u32 i, j;
	int err;

	lockdep_assert_held(&lrc->lock);
	if (WARN_ON_ONCE(!g || !g->host || !g->sbase))
		return -EIO;
	for (i = 0; i < NPG; i = j) {
		if (!(g->wb_dirty & BIT(i))) {
			j = i + 1;
			continue;
		}
		for (j = i; j < NPG && (g->wb_dirty & BIT(j)); j++)
			;
		off = (u64)gp * GPAGE + (u64)i * PAGE;
		end = min((u64)gp * GPAGE + (u64)j * PAGE, f->size);
		if (off >= end)
			continue;
		err = lrc->store->write(lrc->store_priv, f->fh, off,
					g->host + i * PAGE, end - off);
		if (err)
			return err;
		/* What the store holds now: for a partial failure. */
		memcpy(g->sbase + i * PAGE, g->host + i * PAGE,
		       (u64)(j - i) * PAGE);
		*wrote = true;
		lrc->stats.writeback_bytes += end - off;
		lrc->stats.writeback_blocks += DIV_ROUND_UP(end - off, PAGE);
	}
	return 0;
}

/*
 * Write the dirty 4 KiB blocks of GPU pages [first, first + n) of the host
 * copy to the store (vg_lrc_gp_store_dirty), then fsync. The caller merged first: the store then holds
 * the newest version (vv[STORAGE] = vv[CPU]).
 */
int vg_lrc_writeback(struct vg_lrc_ino *f, u32 first, u32 n)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_attr attr;
	struct vg_lrc_gpage *g;
	bool wrote = false;
	u32 gp, i, end;
	int err;

	lockdep_assert_held(&lrc->lock);
	/* Take in host writers' changes first: ours would hide them. */
	err = vg_lrc_host_changes(f);
	if (err)
		return err;
	end = min(first + n, f->nr_gp);	/* as the check grew the file */
	/* Pages not cached have nothing to write. Nothing below frees one. */
	for (g = vg_lrc_gpage_next(f, first, end); g;
	     g = vg_lrc_gpage_next(f, gp + 1, end)) {
		gp = vg_lrc_gp_of(g);
		if (!g->wb_dirty) {
			/* Storage bases of pages that stayed clean. */
			kvfree(g->sbase);
			g->sbase = NULL;
			continue;
		}
		if (WARN_ON_ONCE(!f->writable))
			return -EIO;
		err = vg_lrc_gp_store_dirty(f, gp, &wrote);
		if (err)
			return err;
		for (i = 0; i < NPG; i++)
			vg_vv_set(&g->vv[i], VG_LRC_OWNER_STORAGE,
				  vg_vv_get(&g->vv[i], VG_LRC_OWNER_CPU));
		g->wb_dirty = 0;
		kvfree(g->sbase);
		g->sbase = NULL;
	}
	if (!wrote)
		return 0;
	err = lrc->store->fsync(lrc->store_priv, f->fh);
	if (err)
		return err;
	/* Our own writes moved the change counter: not a host writer's. */
	err = lrc->store->getattr(lrc->store_priv, f->fh, &attr);
	if (!err)
		f->change = attr.change;
	return err;
}
