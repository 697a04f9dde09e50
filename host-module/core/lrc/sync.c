// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Acquire, release and msync of a context's file range (GAIA's macquire
 * and mrelease), with the host CPU's own release and acquire done eagerly
 * alongside (GAIA 4.1), and the detection of host writers that never call
 * either (the store's change counter, then a page compare).
 */
#include "lrc_internal.h"

#define GPAGE	VG_LRC_GPAGE_SIZE
#define PAGE	VG_LRC_PAGE_SIZE
#define NPG	VG_LRC_PAGES_PER_GPAGE

/*
 * Release the context's writes in GPU pages [first, first + n) of m: every
 * 4 KiB page it wrote since its last release (the pages its private
 * replica maps writable) gets the next version of the page clock, owned by
 * the context. No data moves: the next reader merges it (peer fetch). The
 * pages go back to read-only so the next write is seen again.
 */
int vg_lrc_release_locked(struct vg_lrc_map *m, u32 first, u32 n)
{
	struct vg_lrc_ctx *ctx = m->ctx;
	struct vg_lrc *lrc = ctx->lrc;
	struct vg_lrc_ino *f = m->file;
	struct vg_lrc_map *m2;
	struct vg_lrc_rep *r;
	struct vg_lrc_gpage *g;
	u32 gp, i, old, end = m->first_gp + first + n;
	int err = 0;

	lockdep_assert_held(&lrc->lock);
	/* Only cached pages have private replicas; nothing here frees one. */
	for (g = vg_lrc_gpage_next(f, m->first_gp + first, end); g;
	     g = vg_lrc_gpage_next(f, gp + 1, end)) {
		gp = vg_lrc_gp_of(g);
		r = vg_lrc_rep_private(f, gp, ctx->owner);
		if (!r || !r->written)
			continue;
		for (i = 0; i < NPG; i++) {
			if (!(r->written & BIT(i)))
				continue;
			old = vg_vv_max(&g->vv[i]);
			/* The entry exists since privatise: cannot fail. */
			err = vg_vv_set(&g->vv[i], ctx->owner, old + 1);
			if (WARN_ON_ONCE(err))
				return err;
			/* Complete if nobody released since its view. */
			if (r->view[i] == old)
				r->view[i] = old + 1;
			vg_lrc_cf_homed(f, g, i);
			lrc->stats.released_pages++;
		}
		r->written = 0;
		if (!r->vram)
			continue;
		list_for_each_entry(m2, &f->maps, file_node) {
			if (m2->ctx != ctx || gp < m2->first_gp ||
			    gp >= m2->first_gp + m2->nr_gp ||
			    m2->reps[gp - m2->first_gp] != r)
				continue;
			err = vg_lrc_map_protect(m2, gp - m2->first_gp);
			if (err) {
				/* Writable PTEs would hide writes: unmap. */
				vg_lrc_map_clear(m2, gp - m2->first_gp);
				err = 0;
			}
		}
	}
	return err;
}

/*
 * Take the outside writer's changes of one cached GPU page (its store
 * content in buf) into the host copy; returns the pages changed.
 *  - A clean page (host copy == what the store held) that differs now
 *    takes the store's bytes.
 *  - A page the cache changed and has not written back (wb_dirty) is
 *    compared with its storage base, not with the host copy: only the
 *    bytes the outside writer changed since the cache last read or wrote
 *    the page differ, and they are merged 3-way into the host copy
 *    (vg_lrc_merge_page). Both sides' bytes survive; the same byte
 *    changed on both sides ends as the outside writer's (STORAGE's
 *    changes are applied over the host copy: CPU, owner 0, before
 *    STORAGE, owner 1). The storage base becomes what was read.
 * GPU releases the host copy does not hold yet are merged on top by the
 * caller, so they win over the outside writer, in owner-id order too.
 */
static u16 vg_lrc_host_changes_gp(struct vg_lrc_ino *f, u32 gp, const u8 *buf)
{
	struct vg_lrc *lrc = f->lrc;
	/* The caller's page has a host copy, so an entry. */
	struct vg_lrc_gpage *g = vg_lrc_gpage(f, gp);
	u16 changed = 0;
	u8 *host, *sb;
	u32 i;

	lockdep_assert_held(&lrc->lock);
	for (i = 0; i < NPG; i++) {
		host = g->host + i * PAGE;
		if (!(g->wb_dirty & BIT(i))) {
			if (!memcmp(host, buf + i * PAGE, PAGE))
				continue;
			memcpy(host, buf + i * PAGE, PAGE);
		} else {
			sb = g->sbase + i * PAGE;
			if (!memcmp(sb, buf + i * PAGE, PAGE))
				continue;
			lrc->stats.merge_bytes +=
				vg_lrc_merge_page(host, sb, buf + i * PAGE);
			lrc->stats.merges++;
			memcpy(sb, buf + i * PAGE, PAGE);
		}
		changed |= BIT(i);
	}
	return changed;
}

/* The outside writer's changes of cached GPU page gp (store bytes in buf). */
static int vg_lrc_host_changes_apply(struct vg_lrc_ino *f, u32 gp,
				     const u8 *buf)
{
	struct vg_lrc_gpage *g;
	u16 changed;
	u32 i, v;
	int err;

	changed = vg_lrc_host_changes_gp(f, gp, buf);
	if (!changed)
		return 0;
	err = vg_lrc_gp_merge(f, gp);
	if (err)
		return err;
	g = vg_lrc_gpage(f, gp);
	for (i = 0; i < NPG; i++) {
		if (!(changed & BIT(i)))
			continue;
		v = vg_vv_max(&g->vv[i]) + 1;
		/* Both entries exist since the page was loaded. */
		vg_vv_set(&g->vv[i], VG_LRC_OWNER_STORAGE, v);
		if (g->wb_dirty & BIT(i))
			v++;
		vg_vv_set(&g->vv[i], VG_LRC_OWNER_CPU, v);
		f->lrc->stats.host_changes++;
	}
	return 0;
}

/*
 * Has the store's change counter moved since the cache last looked (a host
 * writer outside the cache: a host process, virtiofsd for another VM)?
 * Then every cached page of the file becomes unverified at once, in O(1):
 * the file's verification epoch goes up. Nothing is compared here: each
 * host copy is compared with the store before its next use (range-first:
 * an acquire compares its range now, the rest waits for whatever touches
 * it first: an acquire, a host read or write, a GPU fetch, a merge, a
 * write-back). The file's growth is taken in here (its size: page
 * entries come with what is cached).
 */
int vg_lrc_change_check(struct vg_lrc_ino *f)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_attr attr;
	int err;

	lockdep_assert_held(&lrc->lock);
	err = lrc->store->getattr(lrc->store_priv, f->fh, &attr);
	if (err)
		return err;
	if (attr.change == f->change)
		return 0;
	err = vg_lrc_ino_grow(f, attr.size);
	if (err)
		return err;
	f->epoch++;
	f->change = attr.change;
	return 0;
}

static bool vg_lrc_unverified(struct vg_lrc_ino *f, struct vg_lrc_gpage *g,
			      bool dirty_only)
{
	return g && g->hn && g->hn->vepoch != f->epoch &&
	       (!dirty_only || g->wb_dirty);
}

/*
 * Compare the unverified host copies among GPU pages [first, first + n) of
 * f (only the dirty ones if dirty_only) with the store and take in the
 * outside writer's changes (vg_lrc_host_changes_apply). A changed page
 * gets a new version: held by the storage and the CPU for a page the
 * cache had not changed; for a merged one the storage holds the outside
 * writer's version and the CPU the next (it includes the cache's own
 * bytes). One store read per run of up to VG_LRC_CMP_RUN such pages.
 */
static int vg_lrc_verify_some(struct vg_lrc_ino *f, u32 first, u32 n,
			      bool dirty_only)
{
	struct vg_lrc *lrc = f->lrc;
	u32 gp, end, k, last = min(first + n, f->nr_gp), old;
	struct vg_lrc_gpage *g;
	int err;

	lockdep_assert_held(&lrc->lock);
	/*
	 * Only cached pages (with a host copy) can be unverified. A compare
	 * merges, which loads nothing here (the pages have host copies), so
	 * no entry is freed under the walk.
	 */
	for (g = vg_lrc_gpage_next(f, first, last); g;
	     g = vg_lrc_gpage_next(f, end, last)) {
		gp = vg_lrc_gp_of(g);
		if (!vg_lrc_unverified(f, g, dirty_only)) {
			end = gp + 1;
			continue;
		}
		/* One store read per run of pages (syscalls add up). */
		for (end = gp + 1; end < last && end - gp < VG_LRC_CMP_RUN &&
		     vg_lrc_unverified(f, vg_lrc_gpage(f, end), dirty_only);
		     end++)
			;
		err = lrc->store->read(lrc->store_priv, f->fh, (u64)gp * GPAGE,
				       lrc->scratch, (u64)(end - gp) * GPAGE);
		if (err)
			return err;
		lrc->stats.fetch_storage += (u64)(end - gp) * GPAGE;
		lrc->stats.store_reads++;
		for (k = gp; k < end; k++) {
			struct vg_lrc_hnode *hn = vg_lrc_gpage(f, k)->hn;

			/* Verified first: the merge below loads (verifies) it. */
			old = hn->vepoch;
			hn->vepoch = f->epoch;
			lrc->stats.host_compares++;
			err = vg_lrc_host_changes_apply(f, k, lrc->scratch +
							(u64)(k - gp) * GPAGE);
			if (err) {
				hn->vepoch = old;
				return err;
			}
		}
	}
	return 0;
}

/* Compare the unverified host copies of [first, first + n) with the store. */
int vg_lrc_verify(struct vg_lrc_ino *f, u32 first, u32 n)
{
	return vg_lrc_verify_some(f, first, n, false);
}

/*
 * Before write-back (evict.c): the change counter, then every unverified
 * dirty host copy of the file compared with the store, so the cache's
 * bytes never go over an outside writer's. Clean pages are not written:
 * they stay unverified until their next use.
 */
int vg_lrc_host_changes(struct vg_lrc_ino *f)
{
	int err;

	lockdep_assert_held(&f->lrc->lock);
	err = vg_lrc_change_check(f);
	if (!err)
		err = vg_lrc_verify_some(f, 0, f->nr_gp, true);
	return err;
}

/*
 * The CPU's eager release (before any GPU acquire of f): pages the host
 * wrote through the cache get a new CPU version. The change counter is
 * the caller's (vg_lrc_change_check): each page is compared with the store
 * first anyway (its merge loads, and so verifies, it).
 */
int vg_lrc_cpu_release(struct vg_lrc_ino *f)
{
	struct vg_lrc_gpage *g;
	u32 gp;
	int err = 0;

	lockdep_assert_held(&f->lrc->lock);
	/* Cached pages only (host writes keep their entries). */
	for (g = vg_lrc_gpage_next(f, 0, f->nr_gp); g && !err;
	     g = vg_lrc_gpage_next(f, gp + 1, f->nr_gp)) {
		gp = vg_lrc_gp_of(g);
		err = vg_lrc_cpu_release_gp(f, gp);
	}
	return err;
}

int vg_lrc_acquire(struct vg_lrc_ctx *ctx, u64 va, u64 length)
{
	struct vg_lrc *lrc;
	struct vg_lrc_map *m;
	struct vg_lrc_rep *r, *p;
	struct vg_lrc_gpage *g;
	struct vg_lrc_ino *f;
	u32 first, n, idx, gp, end;
	int err;

	if (!ctx)
		return -EINVAL;
	lrc = ctx->lrc;
	mutex_lock(&lrc->lock);
	err = vg_lrc_map_range(ctx, va, length, &m, &first, &n);
	if (err)
		goto out_unlock;
	f = m->file;
	lrc->stats.acquires++;
	/*
	 * GAIA 4.1: the CPU's release first, then the GPU's acquire. Host
	 * writers outside the cache: range-first, only the acquired range is
	 * compared with the store now, the rest of the file when next used.
	 */
	err = vg_lrc_change_check(f);
	if (!err)
		err = vg_lrc_verify(f, m->first_gp + first, n);
	if (!err)
		err = vg_lrc_cpu_release(f);
	if (err)
		goto out_unlock;
	/* Its own unreleased writes would be lost with a stale replica. */
	err = vg_lrc_release_locked(m, first, n);
	if (err)
		goto out_unlock;
	/*
	 * Pages with a replica are cached: walk those of the range, asking
	 * again after each (a merge's load may evict other host copies).
	 */
	end = m->first_gp + first + n;
	for (g = vg_lrc_gpage_next(f, m->first_gp + first, end); g;
	     g = vg_lrc_gpage_next(f, gp + 1, end)) {
		gp = vg_lrc_gp_of(g);
		idx = gp - m->first_gp;
		r = m->reps[idx];
		p = vg_lrc_rep_private(f, gp, ctx->owner);
		if (p && !vg_lrc_rep_newest(p, g)) {
			/* Merged into the host copy, then gone: refetch. */
			err = vg_lrc_rep_drop(p);
			if (err)
				goto out_unlock;
			lrc->stats.invalidations++;
		} else if (r && r != p && !vg_lrc_rep_newest(r, g)) {
			vg_lrc_map_clear(m, idx);
			lrc->stats.invalidations++;
			/* Others may still read this version until they acquire. */
			if (!r->maps)
				vg_lrc_rep_drop(r);
		}
	}
	/* A large acquire loads (and compares) past the host budget. */
	if (lrc->host_budget)
		vg_lrc_host_trim(lrc, lrc->host_budget);
out_unlock:
	mutex_unlock(&lrc->lock);
	return err;
}

int vg_lrc_release(struct vg_lrc_ctx *ctx, u64 va, u64 length)
{
	struct vg_lrc_map *m;
	u32 first, n;
	int err;

	if (!ctx)
		return -EINVAL;
	mutex_lock(&ctx->lrc->lock);
	err = vg_lrc_map_range(ctx, va, length, &m, &first, &n);
	if (!err) {
		ctx->lrc->stats.releases++;
		/*
		 * The CPU's eager acquire needs no work here: a host copy
		 * that is no longer newest is found so by its next host read
		 * (the cuckoo filter and vv.max), which merges then.
		 */
		err = vg_lrc_release_locked(m, first, n);
	}
	mutex_unlock(&ctx->lrc->lock);
	return err;
}

int vg_lrc_sync(struct vg_lrc_ctx *ctx, u64 va, u64 length)
{
	struct vg_lrc_map *m;
	struct vg_lrc_gpage *g;
	u32 first, n, gp, end;
	int err;

	if (!ctx)
		return -EINVAL;
	mutex_lock(&ctx->lrc->lock);
	err = vg_lrc_map_range(ctx, va, length, &m, &first, &n);
	if (err)
		goto out_unlock;
	if (!m->rw) {
		/* Nothing of a RO map can be dirty; others' data is theirs. */
		goto out_unlock;
	}
	/* Outside writers first: their changes are older than the merge. */
	err = vg_lrc_change_check(m->file);
	if (!err)
		err = vg_lrc_release_locked(m, first, n);
	/* Pages never loaded hold nothing newer than the store. */
	end = m->first_gp + first + n;
	for (g = vg_lrc_gpage_next(m->file, m->first_gp + first, end);
	     g && !err; g = vg_lrc_gpage_next(m->file, gp + 1, end)) {
		gp = vg_lrc_gp_of(g);
		if (g->host)
			err = vg_lrc_gp_merge(m->file, gp);
	}
	if (!err)
		err = vg_lrc_writeback(m->file, m->first_gp + first, n);
out_unlock:
	mutex_unlock(&ctx->lrc->lock);
	return err;
}
