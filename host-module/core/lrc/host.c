// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The host CPU's path into the cache: reads and writes of a cached file
 * by a host daemon (or the tests), through the host copy.
 *
 * A read first decides, for the whole request (its readahead window), where
 * each page's newest version is: one O(1) check per 4 KiB page (the cuckoo
 * filter of GPU-homed pages, then vv.max), never a scan over owners. Pages
 * newest on a GPU are merged into the host copy from there (peer-caching:
 * the GPU's replica serves the read, the store is not touched), pages not
 * cached yet are read from the store in one pass, then the bytes are
 * copied out.
 *
 * A write lands in the host copy after it took in every earlier release (so
 * the host's bytes win over older GPU versions); it becomes a new CPU
 * version at the CPU's next eager release, i.e. at the next GPU acquire.
 */
#include "lrc_internal.h"

#define GPAGE	VG_LRC_GPAGE_SIZE
#define PAGE	VG_LRC_PAGE_SIZE
#define NPG	VG_LRC_PAGES_PER_GPAGE

/* ---- host copies and their host-RAM budget ------------------------------ */

/* Is gp of f being loaded by the gp_load under way (not to be evicted)? */
static bool vg_lrc_host_pinned(struct vg_lrc *lrc, struct vg_lrc_ino *f,
			       u32 gp)
{
	return lrc->hpin_f == f && gp >= lrc->hpin_first &&
	       gp < lrc->hpin_end;
}

/*
 * Write the dirty 4 KiB blocks of host copy gp of f to the store (contiguous
 * ones in one write, nothing past the file's size) and fsync, for its
 * eviction. Not vg_lrc_writeback: that may grow the file (its change
 * check), and eviction runs inside loads whose callers hold page
 * pointers. So the change counter is checked here without growing:
 * if it moved, the file's pages become unverified (a new epoch) and this
 * one is compared with the store first, so an outside writer's bytes are
 * merged, never overwritten; if the file grew behind the cache the page
 * stays (-EAGAIN) until the next acquire or fsync takes the growth in.
 */
static int vg_lrc_host_wb_one(struct vg_lrc_ino *f, u32 gp)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_attr attr;
	struct vg_lrc_gpage *g;
	bool wrote = false;
	int err;

	lockdep_assert_held(&lrc->lock);
	if (!f->writable)
		return -EBADF;
	err = lrc->store->getattr(lrc->store_priv, f->fh, &attr);
	if (err)
		return err;
	if (attr.change != f->change) {
		if (attr.size > f->size)
			return -EAGAIN;
		f->epoch++;
		f->change = attr.change;
	}
	err = vg_lrc_verify(f, gp, 1);
	if (err)
		return err;
	g = vg_lrc_gpage(f, gp);	/* has its host copy */
	err = vg_lrc_gp_store_dirty(f, gp, &wrote);
	if (err)
		return err;
	err = lrc->store->fsync(lrc->store_priv, f->fh);
	if (err)
		return err;
	g->wb_dirty = 0;
	/* Our own writes moved the change counter: not a host writer's. */
	err = lrc->store->getattr(lrc->store_priv, f->fh, &attr);
	if (!err)
		f->change = attr.change;
	return err;
}

/*
 * Evict host copy gp of f for the budget, if that loses nothing:
 *  - a page any GPU replica (shared, private, or evicted private) is
 *    made from keeps its host copy: the change detection of acquire
 *    compares host copies with the store, and a replica without its host
 *    copy would hide an outside writer's change from it;
 *  - a dirty one (host writes, merged GPU releases not in the store) is
 *    written back first (its dirty 4 KiB blocks, after a compare with the
 *    store); if that cannot be done (a read-only handle, a failed write)
 *    it stays;
 *  - a clean one equals the store (as of its last compare; a change since
 *    is simply read at the next load: no replica holds the old bytes).
 * STORAGE then holds the host copy's version, and the next load reads
 * the page back at that version. With nothing else of the page cached,
 * its page entry goes too (vg_lrc_gpage_tidy); the next load makes a new
 * one at version 1: no replica or version entry remembers the old one.
 * Returns true if it was dropped.
 */
static bool vg_lrc_host_evict(struct vg_lrc_ino *f, struct vg_lrc_gpage *g)
{
	struct vg_lrc *lrc = f->lrc;
	u32 gp = vg_lrc_gp_of(g), i;

	lockdep_assert_held(&lrc->lock);
	if (!g->host || g->reps || vg_lrc_host_pinned(lrc, f, gp))
		return false;
	if (g->wb_dirty) {
		if (vg_lrc_host_wb_one(f, gp))
			return false;
		lrc->stats.host_evict_writebacks++;
	}
	for (i = 0; i < NPG; i++)
		/* Both entries exist since the load: cannot fail. */
		vg_vv_set(&g->vv[i], VG_LRC_OWNER_STORAGE,
			  vg_vv_get(&g->vv[i], VG_LRC_OWNER_CPU));
	vg_lrc_cf_clear(f, g, 0xffff);
	kvfree(g->sbase);
	g->sbase = NULL;
	vg_lrc_host_free(f, g);
	lrc->stats.host_evictions++;
	vg_lrc_gpage_tidy(f, g);
	return true;
}

/*
 * Evict least recently used host copies until at most budget bytes are
 * left, as far as that loses nothing (vg_lrc_host_evict). A soft limit:
 * host copies that back GPU replicas, dirty ones that cannot be written
 * back and the pages of a load under way stay, over the budget if need
 * be (an operation never fails for the budget).
 */
void vg_lrc_host_trim(struct vg_lrc *lrc, u64 budget)
{
	struct vg_lrc_hnode *hn, *tmp;
	bool again = true;

	lockdep_assert_held(&lrc->lock);
	while (again && lrc->host_used > budget) {
		again = false;
		list_for_each_entry_safe(hn, tmp, &lrc->host_lru, lru) {
			bool dirty = hn->g->wb_dirty;

			if (lrc->host_used <= budget)
				return;
			if (!vg_lrc_host_evict(hn->f, hn->g))
				continue;
			/*
			 * A write-back may have reordered the list (its
			 * compare uses other pages): start over.
			 */
			if (dirty) {
				again = true;
				break;
			}
		}
	}
}

/*
 * A new host copy for page g of f (content undefined), within the budget:
 * the least recently used ones go first (the pages of the load under way,
 * lrc->hpin_*, stay). Verified at the file's epoch (it is read from the
 * store now) and the most recently used.
 */
int vg_lrc_host_alloc(struct vg_lrc_ino *f, struct vg_lrc_gpage *g)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_hnode *hn;

	lockdep_assert_held(&lrc->lock);
	if (WARN_ON_ONCE(g->host))
		return -EINVAL;
	if (lrc->host_budget)
		vg_lrc_host_trim(lrc, lrc->host_budget > GPAGE ?
				 lrc->host_budget - GPAGE : 0);
	hn = kmalloc(sizeof(*hn), GFP_KERNEL);
	if (!hn)
		return -ENOMEM;
	g->host = kvmalloc(GPAGE, GFP_KERNEL);
	if (!g->host) {
		kfree(hn);
		return -ENOMEM;
	}
	hn->f = f;
	hn->g = g;
	hn->vepoch = f->epoch;
	list_add_tail(&hn->lru, &lrc->host_lru);
	g->hn = hn;
	lrc->host_used += GPAGE;
	return 0;
}

void vg_lrc_host_free(struct vg_lrc_ino *f, struct vg_lrc_gpage *g)
{
	lockdep_assert_held(&f->lrc->lock);
	if (!g->host)
		return;
	list_del(&g->hn->lru);
	kfree(g->hn);
	g->hn = NULL;
	kvfree(g->host);
	g->host = NULL;
	f->lrc->host_used -= GPAGE;
}

/* Page g of f is in use: the most recently used host copy. */
void vg_lrc_host_touch(struct vg_lrc_ino *f, struct vg_lrc_gpage *g)
{
	lockdep_assert_held(&f->lrc->lock);
	if (g->hn)
		list_move_tail(&g->hn->lru, &f->lrc->host_lru);
}

int vg_lrc_set_host_budget(struct vg_lrc *lrc, u64 bytes)
{
	if (!lrc || !IS_ALIGNED(bytes, GPAGE))
		return -EINVAL;
	mutex_lock(&lrc->lock);
	lrc->host_budget = bytes;
	if (bytes)
		vg_lrc_host_trim(lrc, bytes);
	mutex_unlock(&lrc->lock);
	return 0;
}

/* ---- the host CPU's reads and writes ------------------------------------ */

int vg_lrc_host_open(struct vg_lrc *lrc, const char *root_path,
		     const char *relpath, bool writable,
		     struct vg_lrc_file **out)
{
	struct vg_lrc_file *hf;
	void *root;
	int err;

	if (!lrc || !root_path || !relpath || !relpath[0] || !out)
		return -EINVAL;
	hf = kzalloc(sizeof(*hf), GFP_KERNEL);
	if (!hf)
		return -ENOMEM;
	mutex_lock(&lrc->lock);
	err = lrc->store->root_open(lrc->store_priv, root_path, &root);
	if (err)
		goto err_unlock;
	err = vg_lrc_ino_get(lrc, root, relpath, writable, &hf->ino);
	lrc->store->root_close(lrc->store_priv, root);
	if (err)
		goto err_unlock;
	mutex_unlock(&lrc->lock);
	hf->writable = writable;
	*out = hf;
	return 0;

err_unlock:
	mutex_unlock(&lrc->lock);
	kfree(hf);
	return err;
}

void vg_lrc_host_close(struct vg_lrc_file *hf)
{
	struct vg_lrc *lrc;

	if (!hf)
		return;
	lrc = hf->ino->lrc;
	mutex_lock(&lrc->lock);
	vg_lrc_ino_put(hf->ino);
	mutex_unlock(&lrc->lock);
	kfree(hf);
}

u64 vg_lrc_host_size(struct vg_lrc_file *hf)
{
	struct vg_lrc *lrc = hf->ino->lrc;
	u64 size;

	mutex_lock(&lrc->lock);
	size = hf->ino->size;
	mutex_unlock(&lrc->lock);
	return size;
}

/*
 * Make the host copy of GPU pages [first, last] current for the bytes
 * [off, end): load what is not cached (one pass over the store), merge
 * pages whose newest version is on a GPU.
 */
static int vg_lrc_host_prepare(struct vg_lrc_ino *f, u64 off, u64 end)
{
	struct vg_lrc *lrc = f->lrc;
	u32 first = off >> VG_LRC_GSHIFT, last = (end - 1) >> VG_LRC_GSHIFT;
	u32 gp, i0, i1, peer;
	int err;

	lockdep_assert_held(&lrc->lock);
	err = vg_lrc_gp_load(f, first, last - first + 1);
	if (err)
		return err;
	for (gp = first; gp <= last; gp++) {
		i0 = gp == first ? (off >> VG_LRC_PSHIFT) & (NPG - 1) : 0;
		i1 = gp == last ? ((end - 1) >> VG_LRC_PSHIFT) & (NPG - 1) :
		     NPG - 1;
		peer = hweight16(vg_lrc_host_stale(f, gp,
						   GENMASK(i1, i0)));
		if (!peer)
			continue;
		err = vg_lrc_gp_merge(f, gp);
		if (err)
			return err;
		lrc->stats.host_reads_peer += peer;
	}
	return 0;
}

s64 vg_lrc_host_read(struct vg_lrc_file *hf, u64 off, void *buf, u64 len)
{
	struct vg_lrc_ino *f;
	struct vg_lrc *lrc;
	u64 end, pos, n;
	int err;

	if (!hf || (!buf && len))
		return -EINVAL;
	f = hf->ino;
	lrc = f->lrc;
	mutex_lock(&lrc->lock);
	if (off >= f->size || !len) {
		mutex_unlock(&lrc->lock);
		return 0;
	}
	end = off + min(len, f->size - off);
	err = vg_lrc_host_prepare(f, off, end);
	if (err) {
		mutex_unlock(&lrc->lock);
		return err;
	}
	/* Loaded: every page of the range has its entry and host copy. */
	for (pos = off; pos < end; pos += n) {
		struct vg_lrc_gpage *g = vg_lrc_gpage(f, pos >> VG_LRC_GSHIFT);
		u64 in = pos & (GPAGE - 1);

		n = min(end - pos, GPAGE - in);
		memcpy((u8 *)buf + (pos - off), g->host + in, n);
	}
	/* The pages are copied out: the budget applies again. */
	if (lrc->host_budget)
		vg_lrc_host_trim(lrc, lrc->host_budget);
	mutex_unlock(&lrc->lock);
	return end - off;
}

s64 vg_lrc_host_write(struct vg_lrc_file *hf, u64 off, const void *buf,
		      u64 len)
{
	struct vg_lrc_ino *f;
	struct vg_lrc *lrc;
	u64 end, pos, n, old_size;
	int err;

	if (!hf || (!buf && len))
		return -EINVAL;
	if (!hf->writable)
		return -EBADF;
	if (!len)
		return 0;
	if (check_add_overflow(off, len, &end))
		return -EFBIG;
	f = hf->ino;
	lrc = f->lrc;
	mutex_lock(&lrc->lock);
	old_size = f->size;
	err = vg_lrc_ino_grow(f, end);
	if (!err)
		err = vg_lrc_host_prepare(f, off, end);
	/* Storage bases first (they allocate): then nothing can fail. */
	for (pos = off; pos < end && !err; pos += n) {
		u64 in = pos & (GPAGE - 1);

		n = min(end - pos, GPAGE - in);
		err = vg_lrc_sbase_keep(f, pos >> VG_LRC_GSHIFT,
					vg_lrc_page_mask(in, n));
	}
	if (err) {
		/* A failed write changes nothing (more page entries are harmless). */
		f->size = old_size;
		mutex_unlock(&lrc->lock);
		return err;
	}
	for (pos = off; pos < end; pos += n) {
		struct vg_lrc_gpage *g = vg_lrc_gpage(f, pos >> VG_LRC_GSHIFT);
		u64 in = pos & (GPAGE - 1);

		n = min(end - pos, GPAGE - in);
		memcpy(g->host + in, (const u8 *)buf + (pos - off), n);
		g->cpu_dirty |= vg_lrc_page_mask(in, n);
		g->wb_dirty |= vg_lrc_page_mask(in, n);
	}
	if (lrc->host_budget)
		vg_lrc_host_trim(lrc, lrc->host_budget);
	mutex_unlock(&lrc->lock);
	return len;
}

int vg_lrc_host_fsync(struct vg_lrc_file *hf)
{
	struct vg_lrc_gpage *g;
	struct vg_lrc_ino *f;
	struct vg_lrc *lrc;
	u32 gp;
	int err = 0;

	if (!hf)
		return -EINVAL;
	f = hf->ino;
	lrc = f->lrc;
	mutex_lock(&lrc->lock);
	/* Outside writers first: their changes are older than the merges. */
	err = vg_lrc_change_check(f);
	for (g = vg_lrc_gpage_next(f, 0, f->nr_gp); g && !err;
	     g = vg_lrc_gpage_next(f, gp + 1, f->nr_gp)) {
		gp = vg_lrc_gp_of(g);
		if (g->host)
			err = vg_lrc_gp_merge(f, gp);
	}
	if (!err && f->writable)
		err = vg_lrc_writeback(f, 0, f->nr_gp);
	mutex_unlock(&lrc->lock);
	return err;
}
