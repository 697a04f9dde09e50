// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The LRC cache itself: lifetime, GPU registration, cached files and their
 * page entries, the host copy (load from the store, 3-way merge of the
 * released GPU versions into it), the cuckoo filter of GPU-homed pages and
 * the statistics. docs/lrc.md has the protocol.
 */
#include "lrc_internal.h"

#define GPAGE	VG_LRC_GPAGE_SIZE
#define PAGE	VG_LRC_PAGE_SIZE
#define NPG	VG_LRC_PAGES_PER_GPAGE

int vg_lrc_create(const struct vg_lrc_config *cfg, struct vg_lrc **out)
{
	struct vg_lrc *lrc;
	u64 ra;
	u32 i;
	int err;

	if (!cfg || !out || !cfg->store)
		return -EINVAL;
	if (!cfg->store->root_open || !cfg->store->root_close ||
	    !cfg->store->open_beneath || !cfg->store->read ||
	    !cfg->store->write || !cfg->store->fsync ||
	    !cfg->store->getattr || !cfg->store->close)
		return -EINVAL;
	ra = cfg->readahead_max ? cfg->readahead_max : VG_LRC_RA_MAX_DEFAULT;
	if (!IS_ALIGNED(ra, GPAGE) || ra > (256ull << 20))
		return -EINVAL;
	if (!IS_ALIGNED(cfg->vram_budget, GPAGE) ||
	    !IS_ALIGNED(cfg->host_budget, GPAGE))
		return -EINVAL;
	lrc = kzalloc(sizeof(*lrc), GFP_KERNEL);
	if (!lrc)
		return -ENOMEM;
	lrc->scratch = kvmalloc(VG_LRC_CMP_RUN * GPAGE, GFP_KERNEL);
	if (!lrc->scratch) {
		err = -ENOMEM;
		goto err_free_lrc;
	}
	err = vg_cuckoo_init(&lrc->cf, VG_LRC_CF_CAPACITY, cfg->seed);
	if (err)
		goto err_free_scratch;
	mutex_init(&lrc->lock);
	lrc->store = cfg->store;
	lrc->store_priv = cfg->store_priv;
	lrc->vram_budget = cfg->vram_budget;
	lrc->ra_max = ra;
	lrc->host_budget = cfg->host_budget;
	lrc->meta_max = cfg->meta_max ? cfg->meta_max : VG_LRC_META_MAX_DEFAULT;
	INIT_LIST_HEAD(&lrc->host_lru);
	for (i = 0; i < VG_LRC_OWNERS_MAX; i++)
		INIT_LIST_HEAD(&lrc->owned[i]);
	INIT_LIST_HEAD(&lrc->gpus);
	INIT_LIST_HEAD(&lrc->files);
	lrc->next_serial = 1;
	*out = lrc;
	return 0;

err_free_scratch:
	kvfree(lrc->scratch);
err_free_lrc:
	kfree(lrc);
	return err;
}

int vg_lrc_set_meta_max(struct vg_lrc *lrc, u64 bytes)
{
	if (!lrc || !bytes)
		return -EINVAL;
	mutex_lock(&lrc->lock);
	lrc->meta_max = bytes;
	mutex_unlock(&lrc->lock);
	return 0;
}

/*
 * Charge bytes to a VM's account (NULL: the host's own, never refused):
 * -ENOMEM if that would take it over the cap, nothing charged then.
 */
int vg_lrc_charge(struct vg_lrc *lrc, struct vg_lrc_acct *a, u64 bytes)
{
	lockdep_assert_held(&lrc->lock);
	if (!a)
		return 0;
	if (a->bytes > lrc->meta_max || bytes > lrc->meta_max - a->bytes)
		return -ENOMEM;
	a->bytes += bytes;
	return 0;
}

/* Give back a charge; a dead account goes with its last one. */
void vg_lrc_uncharge(struct vg_lrc_acct *a, u64 bytes)
{
	if (!a)
		return;
	if (WARN_ON_ONCE(bytes > a->bytes))
		bytes = a->bytes;
	a->bytes -= bytes;
	if (a->dead && !a->bytes)
		kfree(a);
}

void vg_lrc_destroy(struct vg_lrc *lrc)
{
	struct vg_lrc_gpu *lg, *tlg;

	if (!lrc)
		return;
	/* Contexts hold GPUs and files: the caller must have ended them. */
	WARN_ON(lrc->nr_ctxs);
	WARN_ON(!list_empty(&lrc->files));
	/* The files' last closes freed every replica a context left. */
	WARN_ON(lrc->nr_retired);
	list_for_each_entry_safe(lg, tlg, &lrc->gpus, node)
		vg_lrc_gpu_remove(lrc, lg->gpu);
	vg_cuckoo_fini(&lrc->cf);
	kvfree(lrc->scratch);
	mutex_destroy(&lrc->lock);
	kfree(lrc);
}

/* ---- GPUs ------------------------------------------------------------------ */

struct vg_lrc_gpu *vg_lrc_gpu_find(struct vg_lrc *lrc, struct vg_gpu *gpu)
{
	struct vg_lrc_gpu *lg;

	lockdep_assert_held(&lrc->lock);
	list_for_each_entry(lg, &lrc->gpus, node)
		if (lg->gpu == gpu)
			return lg;
	return NULL;
}

int vg_lrc_gpu_add(struct vg_lrc *lrc, struct vg_gpu *gpu, u64 vram_budget)
{
	struct vg_lrc_gpu *lg;
	u64 budget;
	int err;

	if (!lrc || !gpu || !IS_ALIGNED(vram_budget, GPAGE))
		return -EINVAL;
	if (!vg_gpu_can_map_files(gpu))
		return -ENODEV;
	budget = vram_budget ? vram_budget : lrc->vram_budget;
	if (!budget)
		budget = ALIGN(vg_gpu_vram_size(gpu) / 4, GPAGE);
	if (budget < GPAGE)
		return -EINVAL;
	lg = kzalloc(sizeof(*lg), GFP_KERNEL);
	if (!lg)
		return -ENOMEM;
	lg->lrc = lrc;
	lg->gpu = gpu;
	lg->budget = budget;
	INIT_LIST_HEAD(&lg->lra);
	INIT_LIST_HEAD(&lg->hlra);
	INIT_LIST_HEAD(&lg->ctxs);

	mutex_lock(&lrc->lock);
	if (vg_lrc_gpu_find(lrc, gpu)) {
		err = -EEXIST;
		goto err_unlock;
	}
	list_add_tail(&lg->node, &lrc->gpus);
	mutex_unlock(&lrc->lock);
	/*
	 * The cache yields its VRAM to BOs and returning chunks first
	 * (evict.c vg_lrc_reclaim). Set with no lock held: the core takes
	 * its cache_lock, which orders before lrc->lock.
	 */
	vg_gpu_set_cache_reclaim(gpu, vg_lrc_reclaim, lg);
	/*
	 * No fault handler to install: the core owns the GPU's and each map
	 * registers its range with it (ctx.c, vg_fault_register).
	 */
	return 0;

err_unlock:
	mutex_unlock(&lrc->lock);
	kfree(lg);
	return err;
}

/*
 * The GPU's staging buffers (the readahead window and one GPU page in host
 * RAM), made when its first context is: a GPU whose VMs never map a file
 * costs no host RAM for them (the cache is on by default). Every user of
 * them runs for a map or a replica, so after a context existed; they stay
 * until the GPU leaves the cache.
 */
int vg_lrc_gpu_stage(struct vg_lrc_gpu *lg)
{
	struct vg_mem *stage, *mstage;
	void *stage_va, *mstage_va;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	if (lg->stage)
		return 0;
	err = vg_gpu_host_mem_alloc(lg->gpu, lg->lrc->ra_max, &stage,
				    &stage_va);
	if (err)
		return err;
	err = vg_gpu_host_mem_alloc(lg->gpu, GPAGE, &mstage, &mstage_va);
	if (err) {
		vg_gpu_host_mem_free(lg->gpu, stage);
		return err;
	}
	lg->stage = stage;
	lg->stage_va = stage_va;
	lg->mstage = mstage;
	lg->mstage_va = mstage_va;
	return 0;
}

void vg_lrc_gpu_remove(struct vg_lrc *lrc, struct vg_gpu *gpu)
{
	struct vg_lrc_gpu *lg;

	if (!lrc || !gpu)
		return;
	mutex_lock(&lrc->lock);
	lg = vg_lrc_gpu_find(lrc, gpu);
	mutex_unlock(&lrc->lock);
	if (!lg)
		return;
	/*
	 * No reclaim call may reach lg once it is freed: this waits for one
	 * under way (it may be waiting for lrc->lock, so none is held).
	 */
	vg_gpu_set_cache_reclaim(gpu, NULL, NULL);
	mutex_lock(&lrc->lock);
	WARN_ON(!list_empty(&lg->ctxs));
	/* Shared replicas cached without maps may remain: drop them. */
	if (vg_lrc_evict_to(lg, 0) || vg_lrc_host_evict_to(lg, 0))
		pr_warn("vgmem: lrc: %s: replicas left at removal\n",
			vg_gpu_name(gpu));
	list_del(&lg->node);
	if (lg->stage) {
		vg_gpu_host_mem_free(gpu, lg->mstage);
		vg_gpu_host_mem_free(gpu, lg->stage);
	}
	mutex_unlock(&lrc->lock);
	kfree(lg);
}

int vg_lrc_gpu_set_budget(struct vg_lrc *lrc, struct vg_gpu *gpu, u64 bytes)
{
	struct vg_lrc_gpu *lg;
	int err;

	if (!lrc || !gpu || bytes < GPAGE || !IS_ALIGNED(bytes, GPAGE))
		return -EINVAL;
	mutex_lock(&lrc->lock);
	lg = vg_lrc_gpu_find(lrc, gpu);
	if (!lg) {
		err = -ENOENT;
		goto out_unlock;
	}
	/* Host replicas have the same bound (evict.c vg_lrc_mem_get). */
	err = vg_lrc_evict_to(lg, bytes);
	if (!err)
		err = vg_lrc_host_evict_to(lg, bytes);
	if (!err)
		lg->budget = bytes;
out_unlock:
	mutex_unlock(&lrc->lock);
	return err;
}

/* One batch of copies on lg's copy engine, waited for. */
int vg_lrc_copy(struct vg_lrc_gpu *lg, const struct vg_copy *c, u32 n)
{
	lockdep_assert_held(&lg->lrc->lock);
	return vg_gpu_copy(lg->gpu, c, n);
}

/* Copy one GPU page of src to dst on lg's copy engine, waited for. */
int vg_lrc_copy_gpage(struct vg_lrc_gpu *lg, struct vg_mem *dst,
		      struct vg_mem *src)
{
	struct vg_copy c = {
		.src = src, .src_off = 0, .dst = dst, .dst_off = 0,
		.len = GPAGE,
	};

	return vg_lrc_copy(lg, &c, 1);
}

/* ---- files ---------------------------------------------------------------- */

static struct vg_lrc_ino *vg_lrc_ino_find(struct vg_lrc *lrc,
					  const struct vg_lrc_file_id *id)
{
	struct vg_lrc_ino *f;

	lockdep_assert_held(&lrc->lock);
	list_for_each_entry(f, &lrc->files, node)
		if (f->id.dev == id->dev && f->id.ino == id->ino)
			return f;
	return NULL;
}

/*
 * The file is size bytes now. Nothing is allocated: page entries come
 * with what is cached (vg_lrc_gpage_get), so growth costs nothing and a
 * huge sparse file no more than a small one.
 */
int vg_lrc_ino_grow(struct vg_lrc_ino *f, u64 size)
{
	lockdep_assert_held(&f->lrc->lock);
	if (size <= f->size)
		return 0;
	/*
	 * Page indexes must fit the cuckoo key's 32 bits. Checked before
	 * rounding up: a size near 2^64 would wrap DIV_ROUND_UP.
	 */
	if (size > (u64)(0xffffffffu / NPG) * GPAGE)
		return -EFBIG;
	f->nr_gp = DIV_ROUND_UP(size, GPAGE);
	f->size = size;
	return 0;
}

/* ---- page entries -------------------------------------------------------- */

/* The page entry of GPU page gp, or NULL if it is not cached. */
struct vg_lrc_gpage *vg_lrc_gpage(struct vg_lrc_ino *f, u32 gp)
{
	struct vg_va_node *n;

	lockdep_assert_held(&f->lrc->lock);
	n = vg_va_lookup(&f->gps, gp);
	return n ? container_of(n, struct vg_lrc_gpage, node) : NULL;
}

/*
 * The cached GPU page of lowest index in [from, end), or NULL. A fresh
 * search each time: callers walking a range ask again with the index
 * after the last one, so an entry freed meanwhile (a host copy evicted
 * for the budget) is never stepped through.
 */
struct vg_lrc_gpage *vg_lrc_gpage_next(struct vg_lrc_ino *f, u32 from,
				       u32 end)
{
	struct vg_va_node *n;

	lockdep_assert_held(&f->lrc->lock);
	if (from >= end)
		return NULL;
	n = vg_va_end_after(&f->gps, from);
	if (!n || n->start >= end)
		return NULL;
	return container_of(n, struct vg_lrc_gpage, node);
}

/*
 * The page entry of GPU page gp, made if there is none: charged to acct
 * (a VM's fault; NULL: the host's), -ENOMEM over its cap or if the
 * allocation fails. Nothing is cached in a new one: the caller caches
 * something or tidies it away (vg_lrc_gpage_tidy).
 */
int vg_lrc_gpage_get(struct vg_lrc_ino *f, u32 gp, struct vg_lrc_acct *acct,
		     struct vg_lrc_gpage **out)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_gpage *g;
	u32 j;
	int err;

	lockdep_assert_held(&lrc->lock);
	g = vg_lrc_gpage(f, gp);
	if (g) {
		*out = g;
		return 0;
	}
	if (WARN_ON_ONCE(gp >= f->nr_gp))
		return -EINVAL;
	err = vg_lrc_charge(lrc, acct, sizeof(*g));
	if (err)
		return err;
	/* Small; charged to the caller's memory cgroup in the kernel. */
	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!g) {
		vg_lrc_uncharge(acct, sizeof(*g));
		return -ENOMEM;
	}
	for (j = 0; j < NPG; j++)
		vg_vv_init(&g->vv[j]);
	g->acct = acct;
	g->node.start = gp;
	g->node.end = (u64)gp + 1;
	vg_va_insert(&f->gps, &g->node);
	*out = g;
	return 0;
}

/* Free g's entry and what it holds, cached or not (the file goes). */
static void vg_lrc_gpage_free(struct vg_lrc_ino *f, struct vg_lrc_gpage *g)
{
	u32 j;

	lockdep_assert_held(&f->lrc->lock);
	vg_lrc_cf_clear(f, g, 0xffff);
	vg_lrc_host_free(f, g);
	kvfree(g->sbase);
	for (j = 0; j < NPG; j++)
		vg_vv_fini(&g->vv[j]);
	vg_va_remove(&f->gps, &g->node);
	vg_lrc_uncharge(g->acct, sizeof(*g));
	kfree(g);
}

/*
 * Free g if nothing of the GPU page is cached any more: no host copy, no
 * storage base, no replica (so no GPU context has a version entry), no
 * host write to release, not GPU-homed. Its version vectors then hold
 * only the CPU and STORAGE at one version, which the next load of the
 * page starts again from the store.
 */
void vg_lrc_gpage_tidy(struct vg_lrc_ino *f, struct vg_lrc_gpage *g)
{
	lockdep_assert_held(&f->lrc->lock);
	if (g->host || g->sbase || g->reps || g->cpu_dirty || g->wb_dirty ||
	    g->cf_in || g->cf_over)
		return;
	vg_lrc_gpage_free(f, g);
}

int vg_lrc_ino_get(struct vg_lrc *lrc, void *root, const char *relpath,
		   bool writable, struct vg_lrc_ino **out)
{
	const struct vg_lrc_store_ops *st = lrc->store;
	struct vg_lrc_file_id id;
	struct vg_lrc_attr attr;
	struct vg_lrc_ino *f;
	void *fh;
	int err;

	lockdep_assert_held(&lrc->lock);
	err = st->open_beneath(lrc->store_priv, root, relpath, writable, &fh,
			       &id);
	if (err)
		return err;
	f = vg_lrc_ino_find(lrc, &id);
	if (f) {
		/* Upgrade a read-only handle: write-back needs a writable one. */
		if (writable && !f->writable) {
			st->close(lrc->store_priv, f->fh);
			f->fh = fh;
			f->writable = true;
		} else {
			st->close(lrc->store_priv, fh);
		}
		f->refs++;
		*out = f;
		return 0;
	}
	err = st->getattr(lrc->store_priv, fh, &attr);
	if (err)
		goto err_close;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		err = -ENOMEM;
		goto err_close;
	}
	f->lrc = lrc;
	f->id = id;
	f->fh = fh;
	f->writable = writable;
	f->refs = 1;
	f->serial = lrc->next_serial++;
	f->change = attr.change;
	INIT_LIST_HEAD(&f->maps);
	/* Indexes of GPU pages: below 2^32 (vg_lrc_ino_grow). */
	vg_va_init(&f->gps, 0, 1ull << 32, 1);
	err = vg_lrc_ino_grow(f, attr.size);
	if (err)
		goto err_free_file;
	list_add_tail(&f->node, &lrc->files);
	*out = f;
	return 0;

err_free_file:
	kfree(f);
err_close:
	st->close(lrc->store_priv, fh);
	return err;
}

/* Drop a reference; the last one writes everything back and frees. */
void vg_lrc_ino_put(struct vg_lrc_ino *f)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_gpage *g;
	struct vg_lrc_rep *r;
	struct vg_va_node *n;
	u32 gp;
	int err;

	lockdep_assert_held(&lrc->lock);
	if (--f->refs)
		return;
	WARN_ON(!list_empty(&f->maps));
	/*
	 * Cached shared replicas without maps go; so do private ones a
	 * failed merge left behind (their contexts are gone).
	 */
	for (g = vg_lrc_gpage_next(f, 0, f->nr_gp); g;
	     g = vg_lrc_gpage_next(f, gp + 1, f->nr_gp)) {
		gp = vg_lrc_gp_of(g);
		/* Asked again each time: a discard may free the entry. */
		while ((g = vg_lrc_gpage(f, gp)) && g->reps) {
			r = g->reps;
			err = vg_lrc_rep_drop(r);
			if (!err)
				continue;
			/*
			 * Nothing can merge it once the file is gone: free it
			 * rather than leave it (and its owner id) behind.
			 */
			pr_warn("vgmem: lrc: dropping a replica failed: %d; its unmerged bytes are lost\n",
				err);
			vg_lrc_rep_discard(r);
		}
	}
	if (f->writable) {
		err = vg_lrc_writeback(f, 0, f->nr_gp);
		if (err)
			pr_warn("vgmem: lrc: write-back at close failed: %d\n",
				err);
	}
	while ((n = vg_va_first(&f->gps))) {
		g = container_of(n, struct vg_lrc_gpage, node);
		vg_lrc_gpage_free(f, g);
	}
	lrc->store->close(lrc->store_priv, f->fh);
	list_del(&f->node);
	kfree(f);
}

/* ---- the host copy -------------------------------------------------------- */

/* First sight of a page: the storage and the CPU both hold version 1. */
static int vg_lrc_gp_init_vv(struct vg_lrc_gpage *g)
{
	u32 j, sv;
	int err;

	for (j = 0; j < NPG; j++) {
		sv = vg_vv_get(&g->vv[j], VG_LRC_OWNER_STORAGE);
		if (!sv)
			sv = 1;
		/* Two inline entries at most so far: cannot fail. */
		err = vg_vv_set(&g->vv[j], VG_LRC_OWNER_STORAGE, sv);
		if (!err)
			err = vg_vv_set(&g->vv[j], VG_LRC_OWNER_CPU, sv);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A new host copy for GPU page gp (page entry made if need be, uncharged:
 * only a fault charges a VM, and a fault's pages have their entries from
 * their replicas). NULL if it cannot be had (nothing left behind).
 */
static struct vg_lrc_gpage *vg_lrc_gp_host_new(struct vg_lrc_ino *f, u32 gp)
{
	struct vg_lrc_gpage *g;

	if (vg_lrc_gpage_get(f, gp, NULL, &g))
		return NULL;
	if (vg_lrc_host_alloc(f, g)) {
		vg_lrc_gpage_tidy(f, g);
		return NULL;
	}
	return g;
}

/*
 * Read GPU pages [first, first + n) from the store into new host copies
 * where there is none yet: each run of pages not cached is one store read
 * (up to readahead_max bytes), split into the pages' host copies.
 */
int vg_lrc_gp_load(struct vg_lrc_ino *f, u32 first, u32 n)
{
	struct vg_lrc *lrc = f->lrc;
	u32 max_run = lrc->ra_max >> VG_LRC_GSHIFT;
	u32 end = min(first + n, f->nr_gp), i, j, k, run;
	struct vg_lrc_ino *pin_f = lrc->hpin_f;
	u32 pin_first = lrc->hpin_first, pin_end = lrc->hpin_end;
	struct vg_lrc_gpage *g;
	u8 *tmp;
	int err = 0;

	lockdep_assert_held(&lrc->lock);
	/* The host budget's eviction keeps the pages of this load. */
	lrc->hpin_f = f;
	lrc->hpin_first = first;
	lrc->hpin_end = end;
	for (i = first; i < end; i = j) {
		g = vg_lrc_gpage(f, i);
		if (g && g->host) {
			vg_lrc_host_touch(f, g);
			j = i + 1;
			continue;
		}
		for (j = i; j < end && j - i < max_run; j++) {
			g = vg_lrc_gpage(f, j);
			if ((g && g->host) || !vg_lrc_gp_host_new(f, j))
				break;
		}
		run = j - i;
		if (!run) {
			err = -ENOMEM;
			break;
		}
		/* The run's pages are pinned: their entries stay meanwhile. */
		/* One read for the run; page by page if no room for it. */
		tmp = run > 1 ? kvmalloc((u64)run * GPAGE, GFP_KERNEL) : NULL;
		if (tmp) {
			err = lrc->store->read(lrc->store_priv, f->fh,
					       (u64)i * GPAGE, tmp,
					       (u64)run * GPAGE);
			for (k = 0; k < run && !err; k++)
				memcpy(vg_lrc_gpage(f, i + k)->host,
				       tmp + (u64)k * GPAGE, GPAGE);
			kvfree(tmp);
		} else {
			for (k = 0, err = 0; k < run && !err; k++) {
				g = vg_lrc_gpage(f, i + k);
				err = lrc->store->read(lrc->store_priv, f->fh,
						       (u64)(i + k) * GPAGE,
						       g->host, GPAGE);
			}
		}
		for (k = 0; k < run && !err; k++)
			err = vg_lrc_gp_init_vv(vg_lrc_gpage(f, i + k));
		if (err) {
			for (k = 0; k < run; k++) {
				g = vg_lrc_gpage(f, i + k);
				vg_lrc_host_free(f, g);
				vg_lrc_gpage_tidy(f, g);
			}
			break;
		}
		lrc->stats.fetch_storage += (u64)run * GPAGE;
		lrc->stats.store_reads++;
	}
	lrc->hpin_f = pin_f;
	lrc->hpin_first = pin_first;
	lrc->hpin_end = pin_end;
	/* Pages cached before an outside write are compared now (sync.c). */
	if (!err)
		err = vg_lrc_verify(f, first, n);
	return err;
}

/* The private replica of owner for GPU page gp, or NULL. */
struct vg_lrc_rep *vg_lrc_rep_private(struct vg_lrc_ino *f, u32 gp, u16 owner)
{
	struct vg_lrc_gpage *g = vg_lrc_gpage(f, gp);
	struct vg_lrc_rep *r;

	if (!g)
		return NULL;
	for (r = g->reps; r; r = r->next)
		if (r->owner == owner)
			return r;
	return NULL;
}

/*
 * A replica's content in host memory: read back from VRAM into the GPU's
 * merge staging (valid until the next use of it), or the saved copy of an
 * evicted private replica.
 */
int vg_lrc_rep_read(struct vg_lrc_rep *r, u8 **data)
{
	struct vg_lrc_gpu *lg = r->lg;
	int err;

	lockdep_assert_held(&lg->lrc->lock);
	if (!r->vram) {
		*data = r->saved;
		return 0;
	}
	err = vg_lrc_copy_gpage(lg, lg->mstage, r->vram);
	if (err)
		return err;
	lg->lrc->stats.fetch_gpu += GPAGE;
	*data = lg->mstage_va;
	return 0;
}

/*
 * The pages in mask of gp's host copy are about to change: give the clean
 * ones among them a storage base (the host copy as it is, which is what
 * the store held when the cache last read or wrote it). Allocates before
 * anything changes (-ENOMEM leaves all as it was); the caller sets
 * wb_dirty for the pages it really changes.
 */
int vg_lrc_sbase_keep(struct vg_lrc_ino *f, u32 gp, u16 mask)
{
	struct vg_lrc_gpage *g = vg_lrc_gpage(f, gp);
	u32 i;

	lockdep_assert_held(&f->lrc->lock);
	if (WARN_ON_ONCE(!g))
		return -EINVAL;
	mask &= ~g->wb_dirty;
	if (!mask)
		return 0;
	if (WARN_ON_ONCE(!g->host))
		return -EINVAL;
	if (!g->sbase) {
		g->sbase = kvmalloc(GPAGE, GFP_KERNEL);
		if (!g->sbase)
			return -ENOMEM;
	}
	for (i = 0; i < NPG; i++)
		if (mask & BIT(i))
			memcpy(g->sbase + i * PAGE, g->host + i * PAGE, PAGE);
	return 0;
}

/*
 * Make the host copy of gp the newest version of all 16 pages: apply the
 * released changes of every private writer whose version the host copy
 * does not hold yet, in ascending owner id (any-write-wins, deterministic:
 * the highest owner's byte stays), each against its pristine base. The
 * writer's base then becomes what was merged, so the same bytes are never
 * applied twice (a later write by someone else survives).
 */
int vg_lrc_gp_merge(struct vg_lrc_ino *f, u32 gp)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_gpage *g;
	struct vg_lrc_rep *r, *w;
	u16 mask, pend = 0;
	int last = -1;
	u32 i, cpu, applied;
	u8 *data;
	int err;

	lockdep_assert_held(&lrc->lock);
	err = vg_lrc_gp_load(f, gp, 1);
	if (err)
		return err;
	/* Loaded: its entry exists, and nothing below frees it. */
	g = vg_lrc_gpage(f, gp);
	for (i = 0; i < NPG; i++)
		if (!vg_vv_is_newest(&g->vv[i], VG_LRC_OWNER_CPU))
			pend |= BIT(i);
	if (!pend)
		return 0;
	/* Pages the merge changes diverge from the store. */
	err = vg_lrc_sbase_keep(f, gp, pend);
	if (err)
		return err;
	for (;;) {
		/* The private writer with the next higher owner id. */
		w = NULL;
		for (r = g->reps; r; r = r->next)
			if (r->owner != VG_LRC_OWNER_SHARED && r->owner > last &&
			    (!w || r->owner < w->owner))
				w = r;
		if (!w)
			break;
		last = w->owner;
		mask = 0;
		for (i = 0; i < NPG; i++) {
			cpu = vg_vv_get(&g->vv[i], VG_LRC_OWNER_CPU);
			if (vg_vv_get(&g->vv[i], w->owner) > cpu)
				mask |= BIT(i);
		}
		if (!mask)
			continue;
		err = vg_lrc_rep_read(w, &data);
		if (err)
			return err;
		for (i = 0; i < NPG; i++) {
			if (!(mask & BIT(i)))
				continue;
			applied = vg_lrc_merge_page(g->host + i * PAGE,
						    w->base + i * PAGE,
						    data + i * PAGE);
			memcpy(w->base + i * PAGE, data + i * PAGE, PAGE);
			lrc->stats.merges++;
			lrc->stats.merge_bytes += applied;
			if (applied)
				g->wb_dirty |= BIT(i);
		}
	}
	for (i = 0; i < NPG; i++) {
		if (!(pend & BIT(i)))
			continue;
		/* An existing entry (set at load): cannot fail. */
		err = vg_vv_set(&g->vv[i], VG_LRC_OWNER_CPU,
				vg_vv_max(&g->vv[i]));
		if (WARN_ON_ONCE(err))
			return err;
	}
	vg_lrc_cf_clear(f, g, pend);
	return 0;
}

/*
 * The CPU's release of gp (GAIA's eager CPU release): pages the host wrote
 * get a new version held by the host copy, after it took in everything
 * released before (so the CPU's bytes win over older releases).
 */
int vg_lrc_cpu_release_gp(struct vg_lrc_ino *f, u32 gp)
{
	struct vg_lrc_gpage *g = vg_lrc_gpage(f, gp);
	u32 i;
	int err;

	lockdep_assert_held(&f->lrc->lock);
	/* Its host writes keep the entry (vg_lrc_gpage_tidy). */
	if (!g || !g->cpu_dirty)
		return 0;
	err = vg_lrc_gp_merge(f, gp);
	if (err)
		return err;
	for (i = 0; i < NPG; i++) {
		if (!(g->cpu_dirty & BIT(i)))
			continue;
		err = vg_vv_set(&g->vv[i], VG_LRC_OWNER_CPU,
				vg_vv_max(&g->vv[i]) + 1);
		if (WARN_ON_ONCE(err))
			return err;
	}
	g->cpu_dirty = 0;
	return 0;
}

/* ---- the cuckoo filter of GPU-homed pages -------------------------------- */

/*
 * Page i of gp was released by a GPU context: the host copy is stale. The
 * GPU page's key goes into the filter with its first homed page.
 */
void vg_lrc_cf_homed(struct vg_lrc_ino *f, struct vg_lrc_gpage *g, u32 i)
{
	struct vg_lrc *lrc = f->lrc;
	u32 gp = vg_lrc_gp_of(g);

	lockdep_assert_held(&lrc->lock);
	if (g->cf_in) {
		g->cf_in |= BIT(i);
	} else if (g->cf_over) {
		g->cf_over |= BIT(i);
	} else if (!vg_cuckoo_insert(&lrc->cf, vg_lrc_cf_key(f, gp))) {
		g->cf_in = BIT(i);
	} else {
		/* No room: every lookup says "maybe" until it is merged. */
		g->cf_over = BIT(i);
		lrc->cf_over++;
	}
}

/* The pages of mask are no longer GPU-homed (merged into the host copy). */
void vg_lrc_cf_clear(struct vg_lrc_ino *f, struct vg_lrc_gpage *g, u16 mask)
{
	struct vg_lrc *lrc = f->lrc;

	lockdep_assert_held(&lrc->lock);
	if (g->cf_in && !(g->cf_in & ~mask))
		vg_cuckoo_delete(&lrc->cf, vg_lrc_cf_key(f, vg_lrc_gp_of(g)));
	if (g->cf_over && !(g->cf_over & ~mask))
		lrc->cf_over--;
	g->cf_in &= ~mask;
	g->cf_over &= ~mask;
}

/*
 * Which pages of range (a mask of gp's 4 KiB pages) have a host copy that
 * is not the newest version? The filter's "certainly not GPU-homed"
 * answers most host reads with one lookup per 64 KiB, without reading a
 * version vector. On "maybe", only the pages the GPU page's entry records
 * as homed (cf_in/cf_over, which the filter's key stands for) are checked,
 * each in O(1) (vg_vv_is_newest): the vectors of the others stay unread.
 */
u16 vg_lrc_host_stale(struct vg_lrc_ino *f, u32 gp, u16 range)
{
	struct vg_lrc *lrc = f->lrc;
	struct vg_lrc_gpage *g = vg_lrc_gpage(f, gp);
	u16 cand;
	u32 i;

	lockdep_assert_held(&lrc->lock);
	if (!g || !g->host)
		return range;
	if (!lrc->cf_over && !vg_cuckoo_maybe(&lrc->cf, vg_lrc_cf_key(f, gp))) {
		lrc->stats.cuckoo_misses++;
		return 0;
	}
	lrc->stats.cuckoo_hits++;
	cand = (g->cf_in | g->cf_over) & range;
	for (i = 0; cand >> i; i++)
		if ((cand & BIT(i)) &&
		    vg_vv_is_newest(&g->vv[i], VG_LRC_OWNER_CPU))
			cand &= ~BIT(i);
	return cand;
}

/* ---- statistics ----------------------------------------------------------- */

void vg_lrc_get_stats(struct vg_lrc *lrc, struct vg_lrc_stats *st)
{
	struct vg_lrc_gpu *lg;
	struct vg_lrc_ino *f;
	struct vg_lrc_gpage *g;
	struct vg_va_node *n;
	u64 meta = 0, pages = 0, files = 0, vram = 0, hrep = 0;
	u32 j;

	mutex_lock(&lrc->lock);
	*st = lrc->stats;
	st->host_used = lrc->host_used;
	list_for_each_entry(lg, &lrc->gpus, node) {
		vram += lg->used;
		hrep += lg->host_used;
	}
	list_for_each_entry(f, &lrc->files, node) {
		files++;
		/* Entries of cached GPU pages only; the index is in them. */
		pages += (u64)f->gps.count * NPG;
		meta += (u64)f->gps.count * sizeof(struct vg_lrc_gpage);
		for (n = vg_va_first(&f->gps); n; n = vg_va_next(n)) {
			g = container_of(n, struct vg_lrc_gpage, node);
			for (j = 0; j < NPG; j++)
				meta += vg_vv_ext_bytes(&g->vv[j]);
			/* A host copy's bookkeeping is page metadata too. */
			if (g->hn)
				meta += sizeof(struct vg_lrc_hnode);
		}
	}
	mutex_unlock(&lrc->lock);
	st->files = files;
	st->pages = pages;
	st->vram_used = vram;
	st->replicas_host_used = hrep;
	st->meta_bytes = meta;
	st->bytes_per_page = pages ? div64_u64(meta, pages) : 0;
}
