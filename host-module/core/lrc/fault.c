// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GPU page faults on file maps (GAIA 4.1.1), serviced on the GPU driver's
 * fault thread:
 *  - minor: the context's own replica is there (a private one, or a
 *    newest shared one of its GPU): map it, or for a write to a page of
 *    its private replica that is still read-only, make that 4 KiB page
 *    writable (the dirty tracking of release);
 *  - major read: fetch a readahead window of shared read-only replicas
 *    from the host copy (merged to the newest version first), one batch
 *    of copies, the source chosen once for the window;
 *  - major write: privatise: a private replica plus its pristine base
 *    copy, from the replica the context was reading (so it keeps the
 *    version it saw until it acquires) or else the newest version.
 * The faulting page's replica goes to host RAM, mapped to the GPU all the
 * same, when no VRAM can be had (evict.c); a later fault moves such
 * replicas to VRAM once it is free (vg_lrc_promote).
 */
#include "lrc_internal.h"

#define GPAGE	VG_LRC_GPAGE_SIZE
#define PAGE	VG_LRC_PAGE_SIZE
#define NPG	VG_LRC_PAGES_PER_GPAGE

/*
 * The handler the core's fault dispatch calls for a fault in a map's
 * range (core/fault.c): the GPU driver's fault thread, no GPU driver or core
 * lock held. priv is the map itself, so no search over the GPU's contexts
 * or the context's maps is needed. The map is not freed before this call
 * returns (vg_fault_unregister waits), but it may have been unmapped while
 * the call waited for lrc->lock: then it is dead and the access errors.
 */
int vg_lrc_fault_handler(void *priv, const struct vg_gpu_fault *f)
{
	struct vg_lrc_map *m = priv;
	struct vg_lrc *lrc = m->ctx->lrc;
	int err;

	mutex_lock(&lrc->lock);
	if (m->dead || WARN_ON_ONCE(f->as != m->ctx->as))
		err = -EFAULT;
	else
		err = vg_lrc_fault_map(m, f->va, f->write);
	mutex_unlock(&lrc->lock);
	return err;
}

/* A shared replica of gp on lg holding the newest version, or NULL. */
static struct vg_lrc_rep *vg_lrc_shared_newest(struct vg_lrc_gpu *lg,
					       struct vg_lrc_ino *f, u32 gp)
{
	struct vg_lrc_gpage *g = vg_lrc_gpage(f, gp);
	struct vg_lrc_rep *r;

	for (r = g ? g->reps : NULL; r; r = r->next)
		if (r->owner == VG_LRC_OWNER_SHARED && r->lg == lg && r->vram &&
		    vg_lrc_rep_newest(r, g))
			return r;
	return NULL;
}

/* Drop a shared replica that nobody maps any more and that is stale. */
static void vg_lrc_shared_unused(struct vg_lrc_rep *r)
{
	if (r && r->owner == VG_LRC_OWNER_SHARED && !r->maps &&
	    !vg_lrc_rep_newest(r, r->page))
		vg_lrc_rep_drop(r);
}

/*
 * Write fault on GPU page idx of m where the context has no private
 * replica: make one, with a base copy, from src (the shared replica it
 * maps) or from the newest version in the host copy.
 */
static int vg_lrc_privatise(struct vg_lrc_ctx *ctx, struct vg_lrc_map *m,
			    u32 idx, u32 pg, struct vg_lrc_rep *src)
{
	struct vg_lrc *lrc = ctx->lrc;
	struct vg_lrc_gpu *lg = ctx->lg;
	struct vg_lrc_ino *f = m->file;
	u32 gp = m->first_gp + idx, i;
	struct vg_lrc_gpage *g;
	struct vg_lrc_rep *p;
	struct vg_mem *from;
	u8 *data;
	int err;

	lockdep_assert_held(&lrc->lock);
	if (src)
		src->pinned = true;
	err = vg_lrc_rep_alloc(lg, f, gp, ctx->owner, true, ctx->acct, &p);
	if (err)
		goto err_unpin_src;
	g = p->page;
	p->base = kvmalloc(GPAGE, GFP_KERNEL);
	if (!p->base) {
		err = -ENOMEM;
		goto err_free_rep;
	}
	if (src) {
		/* The version the context reads now: it keeps it until acquire. */
		err = vg_lrc_rep_read(src, &data);
		if (err)
			goto err_free_rep;
		memcpy(p->base, data, GPAGE);
		memcpy(p->view, src->view, sizeof(p->view));
		from = src->vram;
		lrc->stats.fetch_peer += GPAGE;
	} else {
		/* After the allocation: evicting may have merged into it. */
		err = vg_lrc_gp_merge(f, gp);
		if (err)
			goto err_free_rep;
		memcpy(p->base, g->host, GPAGE);
		memcpy(lg->mstage_va, g->host, GPAGE);
		for (i = 0; i < NPG; i++)
			p->view[i] = vg_vv_max(&g->vv[i]);
		from = lg->mstage;
		lrc->stats.fetch_host += GPAGE;
	}
	err = vg_lrc_copy_gpage(lg, p->vram, from);
	if (err)
		goto err_free_rep;
	/*
	 * The owner's entries, at the version its content holds (never above
	 * the host copy's, so nothing looks pending): release then only
	 * updates them and cannot fail.
	 */
	for (i = 0; i < NPG; i++) {
		err = vg_vv_set(&g->vv[i], ctx->owner, p->view[i]);
		if (err)
			goto err_free_rep;
	}
	p->written = BIT(pg);
	err = vg_lrc_map_set(m, idx, p);
	if (err)
		goto err_free_rep;
	lrc->stats.base_copies++;
	lrc->stats.faults_major++;
	lrc->stats.faults_write++;
	p->pinned = false;
	if (src) {
		src->pinned = false;
		vg_lrc_shared_unused(src);
	}
	return 0;

err_free_rep:
	p->pinned = false;
	p->written = 0;
	vg_lrc_rep_discard(p);
err_unpin_src:
	if (src)
		src->pinned = false;
	return err;
}

/*
 * Read fault on GPU page idx of m with nothing mapped there: readahead.
 * The window grows on sequential faults of the context (ahead of the last
 * window's end), doubling up to lrc->ra_max, at least VG_LRC_RA_MIN once
 * sequential; a random fault fetches its GPU page only.
 */
static int vg_lrc_read_fault(struct vg_lrc_ctx *ctx, struct vg_lrc_map *m,
			     u32 idx)
{
	struct vg_lrc *lrc = ctx->lrc;
	struct vg_lrc_gpu *lg = ctx->lg;
	struct vg_lrc_ino *f = m->file;
	u32 gp = m->first_gp + idx, w, n, j, k, nf = 0, i;
	u32 max_w = lrc->ra_max >> VG_LRC_GSHIFT;
	struct vg_lrc_rep *r, **fetch, *held = NULL;
	struct vg_copy *c;
	int err = 0;

	lockdep_assert_held(&lrc->lock);
	if (ctx->ra_file == f && gp == ctx->ra_next) {
		w = max_t(u32, ctx->ra_window * 2, VG_LRC_RA_MIN >> VG_LRC_GSHIFT);
		w = min(w, max_w);
	} else {
		w = 1;
	}
	n = min(w, m->nr_gp - idx);
	fetch = kcalloc(n, sizeof(*fetch), GFP_KERNEL);
	c = kcalloc(n, sizeof(*c), GFP_KERNEL);
	if (!fetch || !c) {
		err = -ENOMEM;
		goto out_free;
	}
	/*
	 * Phase 1: map newest shared replicas that exist, allocate the
	 * others (pinned: the window's own allocations never evict each
	 * other). Past the faulting page, a page the context already maps
	 * or writes privately ends the window.
	 */
	for (j = 0; j < n; j++) {
		u32 pgp = gp + j;

		if (j && (m->reps[idx + j] ||
			  vg_lrc_rep_private(f, pgp, ctx->owner)))
			break;
		r = vg_lrc_shared_newest(lg, f, pgp);
		if (r) {
			err = vg_lrc_map_set(m, idx + j, r);
			if (err)
				break;
			/*
			 * The faulting page's replica must survive the
			 * window's allocations (LRA would pick it first):
			 * else the replay faults again, and again.
			 */
			if (!j) {
				r->pinned = true;
				held = r;
			}
			lrc->stats.shared_maps++;
			continue;
		}
		/* Only the faulting page may go to host RAM (no VRAM). */
		err = vg_lrc_rep_alloc(lg, f, pgp, VG_LRC_OWNER_SHARED, !j,
				       ctx->acct, &r);
		if (err)
			break;
		fetch[nf++] = r;
	}
	n = j;
	/* Only the faulting page must succeed; the rest is a bonus. */
	if (err && (n || nf)) {
		err = 0;
	}
	if (err)
		goto out_unpin;
	/*
	 * Phase 2: the source for the whole window is the host copy, merged
	 * to the newest version (loading runs of pages from the store in
	 * one pass first).
	 */
	if (nf) {
		err = vg_lrc_gp_load(f, fetch[0]->gp,
				     fetch[nf - 1]->gp - fetch[0]->gp + 1);
		for (k = 0; k < nf && !err; k++)
			err = vg_lrc_gp_merge(f, fetch[k]->gp);
		if (err)
			goto out_drop;
		for (k = 0; k < nf; k++) {
			struct vg_lrc_gpage *g = fetch[k]->page;

			memcpy(lg->stage_va + (u64)k * GPAGE, g->host, GPAGE);
			for (i = 0; i < NPG; i++)
				fetch[k]->view[i] = vg_vv_max(&g->vv[i]);
			c[k].src = lg->stage;
			c[k].src_off = (u64)k * GPAGE;
			c[k].dst = fetch[k]->vram;
			c[k].dst_off = 0;
			c[k].len = GPAGE;
		}
		err = vg_lrc_copy(lg, c, nf);
		if (err)
			goto out_drop;
		lrc->stats.fetch_host += (u64)nf * GPAGE;
		for (k = 0; k < nf; k++) {
			err = vg_lrc_map_set(m, fetch[k]->gp - m->first_gp,
					     fetch[k]);
			if (err && !k)
				goto out_drop;
			err = 0;
		}
	}
	if (nf && fetch[0]->gp == gp) {
		lrc->stats.faults_major++;
		lrc->stats.readahead_pages += nf - 1;
	} else {
		lrc->stats.faults_minor++;
		lrc->stats.readahead_pages += nf;
	}
	ctx->ra_file = f;
	ctx->ra_next = gp + n;
	ctx->ra_window = n;
	goto out_unpin;

out_drop:
	for (k = 0; k < nf; k++) {
		fetch[k]->pinned = false;
		if (!fetch[k]->maps)
			vg_lrc_rep_discard(fetch[k]);
	}
	nf = 0;
	/* The faulting page got mapped (phase 1): only readahead failed. */
	if (m->reps[idx])
		err = 0;
out_unpin:
	for (k = 0; k < nf; k++)
		fetch[k]->pinned = false;
	if (held)
		held->pinned = false;
out_free:
	kfree(c);
	kfree(fetch);
	return err;
}

/* A fault at va in map m (live, va inside it or -EFAULT). */
int vg_lrc_fault_map(struct vg_lrc_map *m, u64 va, bool write)
{
	struct vg_lrc_ctx *ctx = m->ctx;
	struct vg_lrc *lrc = ctx->lrc;
	struct vg_lrc_gpu *lg = ctx->lg;
	struct vg_lrc_rep *r, *p;
	u32 idx, pg;
	int err;

	lockdep_assert_held(&lrc->lock);
	if (va < m->va || va - m->va >= m->len || (write && !m->rw))
		return -EFAULT;
	/* Replicas that had to go to host RAM move to VRAM once it is free. */
	if (!list_empty(&lg->hlra))
		vg_lrc_promote(lg, VG_LRC_PROMOTE_BATCH);
	idx = (va - m->va) >> VG_LRC_GSHIFT;
	pg = ((va - m->va) >> VG_LRC_PSHIFT) & (NPG - 1);
	r = m->reps[idx];
	p = vg_lrc_rep_private(m->file, m->first_gp + idx, ctx->owner);

	if (p) {
		/* Its own private replica: minor, unless it was evicted. */
		if (!p->vram) {
			err = vg_lrc_rep_restore(p);
			if (err)
				return err;
			lrc->stats.faults_major++;
		} else {
			lrc->stats.faults_minor++;
		}
		/*
		 * The first write to a page since its release: if that
		 * release is not in the host copy yet, merge it now. A merge
		 * applies the replica's bytes as they are when it runs; after
		 * this write they would include unreleased ones, and another
		 * VM must never read those (only released data is shared).
		 */
		if (write && !(p->written & BIT(pg)) &&
		    vg_vv_get(&p->page->vv[pg], ctx->owner) >
		    vg_vv_get(&p->page->vv[pg], VG_LRC_OWNER_CPU)) {
			p->pinned = true;
			err = vg_lrc_gp_merge(m->file, p->gp);
			p->pinned = false;
			if (err)
				return err;
		}
		if (write)
			p->written |= BIT(pg);
		if (r != p) {
			err = vg_lrc_map_set(m, idx, p);
			/* The shared replica it read before may be unused now. */
			if (!err)
				vg_lrc_shared_unused(r);
			return err;
		}
		return vg_lrc_map_protect(m, idx);
	}
	if (write)
		return vg_lrc_privatise(ctx, m, idx, pg, r);
	if (r) {
		/* Mapped already (a replay raced with the mapping): minor. */
		lrc->stats.faults_minor++;
		return 0;
	}
	return vg_lrc_read_fault(ctx, m, idx);
}

/* A fault at va of ctx, wherever it is mapped (vg_lrc_fault). */
int vg_lrc_fault_locked(struct vg_lrc_ctx *ctx, u64 va, bool write)
{
	struct vg_lrc_map *m;

	lockdep_assert_held(&ctx->lrc->lock);
	m = vg_lrc_map_find(ctx, va);
	return m ? vg_lrc_fault_map(m, va, write) : -EFAULT;
}

int vg_lrc_fault(struct vg_lrc_ctx *ctx, u64 va, bool write)
{
	int err;

	if (!ctx)
		return -EINVAL;
	mutex_lock(&ctx->lrc->lock);
	err = vg_lrc_fault_locked(ctx, va, write);
	mutex_unlock(&ctx->lrc->lock);
	return err;
}
