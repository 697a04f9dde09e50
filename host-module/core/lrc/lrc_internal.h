/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The LRC file cache's own structures (docs/lrc.md). Not for anyone
 * outside core/lrc/.
 *
 * Lock rules (asserted with lockdep_assert_held):
 *  - lrc->lock (mutex) protects everything below: files, page entries and
 *    their version vectors, replicas, maps, contexts, shares, the owner
 *    table, the per-GPU budgets and LRA lists, the cuckoo filter, the
 *    VMs' metadata accounts and the statistics. One lock: a fault, an
 *    acquire or a host read each touch several of them, and the
 *    expensive part (copies) is bounded per call.
 *  - The cache never takes a core lock itself: it reaches the GPU only
 *    through the core's calls for it (vg.h, core/cachemem.c: memory, the
 *    copy engine, a file map's VA and page tables, the VRAM it holds),
 *    each of which takes gpu->lock inside. So the order is lrc->lock,
 *    then gpu->lock; no core path calls into the cache with a gpu->lock
 *    held (vg_vm_destroy tears the context down before it takes its
 *    lock), so the order never inverts.
 *  - GPU faults: each map registers its range with the core's fault
 *    dispatch (vg_fault_register, core/fault.c), which calls
 *    vg_lrc_fault_handler(map, f) on the GPU driver's fault thread with no
 *    GPU driver or core lock held; it takes lrc->lock and services the fault
 *    on that map. An unmap marks the map dead under lrc->lock and
 *    unregisters it after dropping lrc->lock (vg_fault_unregister waits
 *    for a call under way, which may be waiting for lrc->lock), and frees
 *    the map only then; a call that finds its map dead does nothing. The
 *    core never waits for that thread under gpu->lock (a channel parked
 *    on a fault counts as idle).
 *  - Store ops are called under lrc->lock only.
 *  - The core's reclaim hook (vg_lrc_reclaim, registered per GPU with
 *    vg_gpu_set_cache_reclaim) is called with no core lock held, under
 *    the core's gpu->cache_lock, and takes lrc->lock: cache_lock orders
 *    before lrc->lock. The cache sets and clears the hook with no lock
 *    held, and the core waits for a call under way before it clears, so
 *    lg outlives every call (vg_lrc_gpu_add/remove).
 */
#ifndef VGMEM_CORE_LRC_INTERNAL_H
#define VGMEM_CORE_LRC_INTERNAL_H

#include "lrc.h"
#include "lrc_vv.h"
#include "lrc_merge.h"
#include "lrc_cuckoo.h"
#include "core/vg_va.h"

#define VG_LRC_PSHIFT		12
#define VG_LRC_GSHIFT		16
#define VG_LRC_OWNER_SHARED	0	/* rep->owner of a shared RO replica */
/*
 * GPU pages (64 KiB) with GPU-homed pages the filter tracks exactly: 4 GiB
 * of them in a 256 KiB table, small enough to stay in a core's L2 on the
 * host read path; beyond it every lookup says "maybe" (slower, correct).
 */
#define VG_LRC_CF_CAPACITY	(1u << 16)
#define VG_LRC_CMP_RUN		16		/* GPU pages per store read of a compare */
/* Host replicas moved to VRAM per GPU fault once VRAM is free (evict.c). */
#define VG_LRC_PROMOTE_BATCH	4

struct vg_lrc_rep;
struct vg_lrc_ino;
struct vg_lrc_gpage;

/*
 * Host memory a VM's file maps hold, charged to it (lrc->lock): its maps
 * (struct and replica table) and the page entries its GPU faults created,
 * at most lrc->meta_max bytes (-ENOMEM beyond: vg_lrc_charge). A page
 * entry can outlive the context (its file stays cached for other users):
 * then the account is dead and goes with its last charge.
 */
struct vg_lrc_acct {
	u64 bytes;
	bool dead;			/* its context is gone */
};

/*
 * The bookkeeping of one host copy (lrc->lock), allocated with it and
 * freed with it (host.c): its place in lrc->host_lru (least recently used
 * first) and the file's verification epoch it was last compared with the
 * store at. The host copy is "unverified" while vepoch != f->epoch: the
 * store's change counter moved since, and the page is compared with the
 * store before anything reads or changes it (range-first sync, sync.c).
 */
struct vg_lrc_hnode {
	struct list_head lru;		/* lrc->host_lru */
	struct vg_lrc_ino *f;
	struct vg_lrc_gpage *g;		/* its GPU page */
	u32 vepoch;
};

/*
 * One 64 KiB GPU page of a file and its 16 page entries (lrc->lock).
 * Allocated only while the GPU page is cached (a host copy, a replica, a
 * storage base, host writes not released yet), in the file's index
 * f->gps; an entry with none of these is freed (vg_lrc_gpage_tidy). So a
 * file costs metadata for what is cached of it, never for its size.
 */
struct vg_lrc_gpage {
	/* In f->gps as [gp, gp + 1): gp is its index in the file. */
	struct vg_va_node node;
	struct vg_lrc_acct *acct;	/* charged to; NULL: the host's */
	/* Per 4 KiB page: the version vector; vv.max is the page clock. */
	struct vg_vv vv[VG_LRC_PAGES_PER_GPAGE];
	/*
	 * The host copy: the CPU owner's replica and the cache's home. It
	 * holds every release up to vv[i][CPU] plus the CPU's unreleased
	 * writes; NULL until first needed (then read from the store).
	 */
	u8 *host;
	struct vg_lrc_hnode *hn;	/* with host: LRU place, verification */
	/*
	 * The storage base: for each page in wb_dirty, what the cache last
	 * read from or wrote to the store (the host copy as it was before
	 * the page first diverged from the store). A host writer outside
	 * the cache changed the page iff the store differs from it, and
	 * then only in the bytes that differ (the 3-way merge's base).
	 * Clean pages need none (host copy == store): NULL while wb_dirty
	 * is 0; the content of a clean page's slot is meaningless.
	 */
	u8 *sbase;
	struct vg_lrc_rep *reps;	/* GPU replicas, singly linked */
	u16 cpu_dirty;			/* host writes since the CPU's last release */
	u16 wb_dirty;			/* host copy differs from the store */
	/*
	 * GPU-homed 4 KiB pages (newest bytes on a GPU, host copy stale).
	 * The filter holds one key per GPU page, present while cf_in != 0;
	 * cf_over instead when the filter had no room for the key. At most
	 * one of the two is nonzero.
	 */
	u16 cf_in;
	u16 cf_over;
};

/*
 * A replica of one GPU page on one GPU (lrc->lock).
 *  - shared (owner VG_LRC_OWNER_SHARED): read-only, mapped by any number
 *    of contexts of lg; its content never changes. A newer version gets
 *    a new shared replica; the old one lives while someone maps it.
 *  - private (owner = a context's id): the context's writable copy, with
 *    the pristine base copy the 3-way merge needs. Pages written since
 *    the last release are mapped RW (written), the others RO, so the
 *    first write to each 4 KiB page faults once per release period: that
 *    is the dirty tracking, without moving data.
 * view[i]: the content holds every release of page i up to that version;
 * the replica is newest for page i iff view[i] == vv[i].max.
 */
struct vg_lrc_rep {
	struct vg_lrc_rep *next;	/* gpage->reps */
	struct vg_lrc_ino *file;
	struct vg_lrc_gpage *page;	/* its GPU page (outlives r) */
	struct vg_lrc_gpu *lg;
	u32 gp;				/* GPU page index in the file */
	u16 owner;
	u16 written;			/* private: 4 KiB pages written, unreleased */
	u32 maps;			/* map->reps[] entries pointing here */
	bool pinned;			/* in use by the running operation: not evictable */
	/*
	 * The replica's memory, mapped to the GPU: VRAM, or with in_host a
	 * GPU driver host mem (VG_LOC_HOST) the GPU reaches over PCIe, used
	 * when no VRAM can be had (evict.c). NULL: evicted private replica,
	 * see saved.
	 */
	struct vg_mem *vram;
	bool in_host;			/* vram is host RAM: lg->hlra, lg->host_used */
	/*
	 * Whom the core counts the replica's VRAM to (the GPU's cache_used
	 * and, for a private replica, its owner's VM's cache_private), as
	 * vg_gpu_cache_vram_get() set it: handed back to the core's put.
	 */
	struct vg_cache_charge charge;
	struct list_head onode;		/* private: lrc->owned[owner] */
	u8 *saved;			/* evicted private content (unreleased writes) */
	u8 *base;			/* private: pristine base copy, 64 KiB */
	u32 view[VG_LRC_PAGES_PER_GPAGE];
	struct list_head lra;		/* lg->lra (lg->hlra if in_host) while vram != NULL */
};

/*
 * One cached file (store identity dev/ino): shared by every map and host
 * open of it (lrc->lock).
 */
struct vg_lrc_ino {
	struct vg_lrc *lrc;
	struct list_head node;		/* lrc->files */
	struct vg_lrc_file_id id;
	void *fh;			/* store handle */
	bool writable;			/* fh was opened for writing */
	u32 refs;			/* maps + host opens */
	u64 serial;			/* cuckoo key prefix, unique per file */
	u64 size;			/* bytes, as the cache sees the file */
	u64 change;			/* store change counter last seen */
	/*
	 * Verification epoch: raised each time the change counter is seen to
	 * move; host copies verified at an older one are compared with the
	 * store lazily, on their next use (struct vg_lrc_hnode).
	 */
	u32 epoch;
	u32 nr_gp;			/* GPU pages the size covers */
	/*
	 * The page entries of the GPU pages cached now, by index (a
	 * red-black tree: O(log n) lookups, in-order walks of a range):
	 * sparse, so a huge file mapped in part costs what the cached part
	 * does.
	 */
	struct vg_va_tree gps;
	struct list_head maps;		/* struct vg_lrc_map.file_node */
};

/* A host open of a cached file (vg_lrc_host_open). */
struct vg_lrc_file {
	struct vg_lrc_ino *ino;
	bool writable;
};

/* One GPU registered with the cache (lrc->lock). */
struct vg_lrc_gpu {
	struct vg_lrc *lrc;
	struct list_head node;		/* lrc->gpus */
	struct vg_gpu *gpu;
	u64 budget;			/* bytes of replicas allowed */
	u64 used;			/* == gpu->cache_used (evict.c) */
	struct list_head lra;		/* replicas in VRAM, oldest first */
	/*
	 * Host replicas: in host RAM because no VRAM could be had, mapped to
	 * the GPU all the same. Not VRAM (not in used or gpu->cache_used);
	 * bounded by budget on their own (evict.c).
	 */
	u64 host_used;
	struct list_head hlra;		/* host replicas, oldest first */
	struct list_head ctxs;		/* struct vg_lrc_ctx.node */
	/*
	 * Host staging (GPU driver host mems, CPU-addressable): stage for
	 * readahead windows (readahead_max bytes), mstage for one GPU page
	 * read back by a merge, an eviction or a write-back. NULL until the
	 * GPU's first context (vg_lrc_gpu_stage), then kept until removal.
	 */
	struct vg_mem *stage;
	u8 *stage_va;
	struct vg_mem *mstage;
	u8 *mstage_va;
};

struct vg_lrc_share {
	u32 id;
	bool ro;
	void *root;			/* NULL: slot free */
	char tag[VGMEM_SHARE_TAG_SIZE];	/* virtio-fs tag, NUL-padded; "": none */
};

/* A file range mapped into a context's GPU VA space (lrc->lock). */
struct vg_lrc_map {
	struct vg_lrc_ctx *ctx;
	struct vg_lrc_ino *file;
	struct list_head ctx_node;	/* ctx->maps */
	struct list_head file_node;	/* file->maps */
	/* In the VM's VA index (vg_vm_file_va_get), so BOs never overlap it. */
	struct vg_va_node va_node;
	/*
	 * In ctx->map_va (lrc->lock) while live: vg_lrc_map_find's index.
	 * Leaves it when the map dies, so a dead map is never found.
	 */
	struct vg_va_node ctx_va;
	u64 va, len;
	u32 first_gp, nr_gp;		/* file GPU pages covered */
	bool rw;
	/*
	 * How the guest named it (a migration maps the same on another host,
	 * vg_file_ops.mig_next): the share, the path (kmalloc'ed, charged
	 * with the map), the inode number seen then.
	 */
	u32 share_id;
	char *path;
	u64 ino;
	struct vg_lrc_rep **reps;	/* per GPU page: what is mapped, or NULL */
	/* The range's fault registration (core/fault.c); priv is the map. */
	struct vg_fault_reg *freg;
	/*
	 * Unmapped (lrc->lock): everything but ctx, freg and va_node is gone;
	 * the map waits for vg_fault_unregister, then leaves the VA index.
	 */
	bool dead;
};

struct vg_lrc_ctx {
	struct vg_lrc *lrc;
	struct vg_lrc_gpu *lg;
	struct vg_vm *vm;
	struct vg_as *as;		/* the VM's, to check a fault's */
	u16 owner;
	struct list_head node;		/* lg->ctxs */
	struct list_head maps;
	u32 nr_maps;
	/*
	 * The live maps by VA (lrc->lock): O(log n) lookups for acquire,
	 * release, sync and unmap without a call into the core for the VM's
	 * own index, which also holds dead maps until they are buried.
	 */
	struct vg_va_tree map_va;
	struct vg_lrc_share shares[VG_LRC_SHARES_MAX];
	struct vg_lrc_acct *acct;	/* host memory charged to the VM */
	/* Readahead state of the context's GPU reads. */
	struct vg_lrc_ino *ra_file;
	u32 ra_next;			/* GPU page a sequential fault would hit */
	u32 ra_window;			/* GPU pages of the last window */
};

struct vg_lrc {
	struct mutex lock;
	const struct vg_lrc_store_ops *store;
	void *store_priv;
	u64 vram_budget;		/* default per GPU */
	u64 ra_max;			/* bytes */
	struct list_head gpus;
	struct list_head files;
	u64 next_serial;
	/*
	 * Owner ids: the context holding each, or the retired marker while
	 * a gone context's private replicas are still cached (ctx.c).
	 * owned[id]: the private replicas of id, wherever they are; an id is
	 * handed out only while its list is empty, so no replica and no
	 * version entry (only a private replica's page has one) names it.
	 */
	struct vg_lrc_ctx *owners[VG_LRC_OWNERS_MAX];
	struct list_head owned[VG_LRC_OWNERS_MAX];
	u32 nr_ctxs;
	u32 nr_retired;			/* ids retired now */
	struct vg_cuckoo cf;
	u64 cf_over;			/* GPU pages homed but not in the filter */
	u8 *scratch;			/* VG_LRC_CMP_RUN GPU pages: store compares */
	/* Host copies: budget (0: unlimited), bytes, LRU list (host.c). */
	u64 host_budget;
	u64 host_used;
	struct list_head host_lru;	/* struct vg_lrc_hnode.lru, oldest first */
	/* GPU pages [hpin_first, hpin_end) of hpin_f are being loaded: kept. */
	struct vg_lrc_ino *hpin_f;
	u32 hpin_first, hpin_end;
	u64 meta_max;			/* bytes a VM's account may hold */
	struct vg_lrc_stats stats;
};

/*
 * The filter's key of GPU page gp: one per 64 KiB, so a host read asks the
 * filter once per GPU page of its window, not once per 4 KiB page.
 */
static inline u64 vg_lrc_cf_key(const struct vg_lrc_ino *f, u32 gp)
{
	return (f->serial << 32) | gp;
}

/* The 4 KiB pages of a GPU page that bytes [in, in + n) touch (n > 0). */
static inline u16 vg_lrc_page_mask(u64 in, u64 n)
{
	u32 a = in >> VG_LRC_PSHIFT, b = (in + n - 1) >> VG_LRC_PSHIFT;

	return (u16)(((2u << b) - 1) & ~((1u << a) - 1));
}

/* The index in its file of a GPU page. */
static inline u32 vg_lrc_gp_of(const struct vg_lrc_gpage *g)
{
	return (u32)g->node.start;
}

/* Does r hold the newest version of all 16 pages? */
static inline bool vg_lrc_rep_newest(const struct vg_lrc_rep *r,
				     const struct vg_lrc_gpage *g)
{
	u32 i;

	for (i = 0; i < VG_LRC_PAGES_PER_GPAGE; i++)
		if (r->view[i] != vg_vv_max(&g->vv[i]))
			return false;
	return true;
}

/* cache.c */
struct vg_lrc_gpu *vg_lrc_gpu_find(struct vg_lrc *lrc, struct vg_gpu *gpu);
int vg_lrc_charge(struct vg_lrc *lrc, struct vg_lrc_acct *a, u64 bytes);
void vg_lrc_uncharge(struct vg_lrc_acct *a, u64 bytes);
struct vg_lrc_gpage *vg_lrc_gpage(struct vg_lrc_ino *f, u32 gp);
struct vg_lrc_gpage *vg_lrc_gpage_next(struct vg_lrc_ino *f, u32 from,
				       u32 end);
int vg_lrc_gpage_get(struct vg_lrc_ino *f, u32 gp, struct vg_lrc_acct *acct,
		     struct vg_lrc_gpage **out);
void vg_lrc_gpage_tidy(struct vg_lrc_ino *f, struct vg_lrc_gpage *g);
int vg_lrc_ino_get(struct vg_lrc *lrc, void *root, const char *relpath,
		    bool writable, struct vg_lrc_ino **out);
void vg_lrc_ino_put(struct vg_lrc_ino *f);
int vg_lrc_ino_grow(struct vg_lrc_ino *f, u64 size);
int vg_lrc_gp_load(struct vg_lrc_ino *f, u32 first, u32 n);
int vg_lrc_gp_merge(struct vg_lrc_ino *f, u32 gp);
int vg_lrc_sbase_keep(struct vg_lrc_ino *f, u32 gp, u16 mask);
int vg_lrc_cpu_release_gp(struct vg_lrc_ino *f, u32 gp);
void vg_lrc_cf_homed(struct vg_lrc_ino *f, struct vg_lrc_gpage *g, u32 i);
void vg_lrc_cf_clear(struct vg_lrc_ino *f, struct vg_lrc_gpage *g, u16 mask);
u16 vg_lrc_host_stale(struct vg_lrc_ino *f, u32 gp, u16 range);
struct vg_lrc_rep *vg_lrc_rep_private(struct vg_lrc_ino *f, u32 gp,
				      u16 owner);
int vg_lrc_rep_read(struct vg_lrc_rep *r, u8 **data);
int vg_lrc_copy(struct vg_lrc_gpu *lg, const struct vg_copy *c, u32 n);
int vg_lrc_copy_gpage(struct vg_lrc_gpu *lg, struct vg_mem *dst,
		      struct vg_mem *src);

/* evict.c */
int vg_lrc_rep_alloc(struct vg_lrc_gpu *lg, struct vg_lrc_ino *f, u32 gp,
		     u16 owner, bool host_ok, struct vg_lrc_acct *acct,
		     struct vg_lrc_rep **out);
void vg_lrc_rep_unmap_all(struct vg_lrc_rep *r);
int vg_lrc_rep_restore(struct vg_lrc_rep *r);
int vg_lrc_rep_drop(struct vg_lrc_rep *r);
void vg_lrc_rep_discard(struct vg_lrc_rep *r);
int vg_lrc_evict_to(struct vg_lrc_gpu *lg, u64 budget);
int vg_lrc_host_evict_to(struct vg_lrc_gpu *lg, u64 budget);
void vg_lrc_promote(struct vg_lrc_gpu *lg, u32 max);
u64 vg_lrc_reclaim(void *priv, u64 bytes);
int vg_lrc_gpu_stage(struct vg_lrc_gpu *lg);
int vg_lrc_gp_store_dirty(struct vg_lrc_ino *f, u32 gp, bool *wrote);
int vg_lrc_writeback(struct vg_lrc_ino *f, u32 first, u32 n);

/* ctx.c */
void vg_lrc_owner_put(struct vg_lrc *lrc, u16 owner);
struct vg_lrc_map *vg_lrc_map_find(struct vg_lrc_ctx *ctx, u64 va);
int vg_lrc_map_range(struct vg_lrc_ctx *ctx, u64 va, u64 length,
		     struct vg_lrc_map **out, u32 *first, u32 *n);
int vg_lrc_map_set(struct vg_lrc_map *m, u32 idx, struct vg_lrc_rep *r);
int vg_lrc_map_protect(struct vg_lrc_map *m, u32 idx);
void vg_lrc_map_clear(struct vg_lrc_map *m, u32 idx);

/* fault.c */
int vg_lrc_fault_locked(struct vg_lrc_ctx *ctx, u64 va, bool write);
int vg_lrc_fault_map(struct vg_lrc_map *m, u64 va, bool write);
/* The registered handler of every map's range: priv is the map. */
int vg_lrc_fault_handler(void *priv, const struct vg_gpu_fault *f);

/* sync.c */
int vg_lrc_release_locked(struct vg_lrc_map *m, u32 first, u32 n);
int vg_lrc_cpu_release(struct vg_lrc_ino *f);
int vg_lrc_change_check(struct vg_lrc_ino *f);
int vg_lrc_verify(struct vg_lrc_ino *f, u32 first, u32 n);
int vg_lrc_host_changes(struct vg_lrc_ino *f);

/* host.c */
int vg_lrc_host_alloc(struct vg_lrc_ino *f, struct vg_lrc_gpage *g);
void vg_lrc_host_free(struct vg_lrc_ino *f, struct vg_lrc_gpage *g);
void vg_lrc_host_touch(struct vg_lrc_ino *f, struct vg_lrc_gpage *g);
void vg_lrc_host_trim(struct vg_lrc *lrc, u64 budget);

#endif /* VGMEM_CORE_LRC_INTERNAL_H */
