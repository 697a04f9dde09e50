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
	u32 gp, i, i0, i1, peer;
	int err;

	lockdep_assert_held(&lrc->lock);
	err = vg_lrc_gp_load(f, first, last - first + 1);
	if (err)
		return err;
	for (gp = first; gp <= last; gp++) {
		i0 = gp == first ? (off >> VG_LRC_PSHIFT) & (NPG - 1) : 0;
		i1 = gp == last ? ((end - 1) >> VG_LRC_PSHIFT) & (NPG - 1) :
		     NPG - 1;
		peer = 0;
		for (i = i0; i <= i1; i++)
			if (!vg_lrc_host_current(f, gp, i))
				peer++;
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
	for (pos = off; pos < end; pos += n) {
		struct vg_lrc_gpage *g = &f->gp[pos >> VG_LRC_GSHIFT];
		u64 in = pos & (GPAGE - 1);

		n = min(end - pos, GPAGE - in);
		memcpy((u8 *)buf + (pos - off), g->host + in, n);
	}
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
		struct vg_lrc_gpage *g = &f->gp[pos >> VG_LRC_GSHIFT];
		u64 in = pos & (GPAGE - 1);

		n = min(end - pos, GPAGE - in);
		memcpy(g->host + in, (const u8 *)buf + (pos - off), n);
		g->cpu_dirty |= vg_lrc_page_mask(in, n);
		g->wb_dirty |= vg_lrc_page_mask(in, n);
	}
	mutex_unlock(&lrc->lock);
	return len;
}

int vg_lrc_host_fsync(struct vg_lrc_file *hf)
{
	struct vg_lrc_ino *f;
	struct vg_lrc *lrc;
	u32 gp;
	int err = 0;

	if (!hf)
		return -EINVAL;
	f = hf->ino;
	lrc = f->lrc;
	mutex_lock(&lrc->lock);
	for (gp = 0; gp < f->nr_gp && !err; gp++)
		if (f->gp[gp].host)
			err = vg_lrc_gp_merge(f, gp);
	if (!err && f->writable)
		err = vg_lrc_writeback(f, 0, f->nr_gp);
	mutex_unlock(&lrc->lock);
	return err;
}
