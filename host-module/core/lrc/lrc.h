/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The LRC file cache (GAIA, lazy release consistency): files of a VM's
 * shares mapped into its GPU address space, cached across host RAM and
 * VRAM, shared by host processes, VMs and GPUs without false-sharing
 * ping-pong. docs/lrc.md describes the design; this is the public API the
 * control dispatcher, the userspace host and vgmem.ko use.
 *
 * All functions return 0 or a negative errno unless they say otherwise and
 * may sleep. None may be called with a gpu->lock held (the cache takes it
 * itself, inside its own lock: see "Lock order" in docs/lrc.md).
 */
#ifndef VGMEM_CORE_LRC_H
#define VGMEM_CORE_LRC_H

#include "os/os.h"
#include "core/vg.h"

struct vg_lrc;
struct vg_lrc_ctx;
struct vg_lrc_file;

/* ---- the store: how the cache reaches files -------------------------- */

/* A file's identity: the same (dev, ino) is one cached file. */
struct vg_lrc_file_id {
	u64 dev;
	u64 ino;
};

struct vg_lrc_attr {
	u64 size;	/* bytes */
	/*
	 * Changes whenever the file's data may have changed behind the cache
	 * (ns of mtime + ctime, or i_version): a host writer that never
	 * calls acquire/release is detected by it moving.
	 */
	u64 change;
};

/*
 * Implemented by the platform (userspace: openat2; kernel: vfs). Handles
 * are opaque. Every op may sleep; the cache calls them under its own lock,
 * never under a gpu->lock, so they must not call back into the cache.
 */
struct vg_lrc_store_ops {
	/*
	 * Open a share's root directory by host path. -ENOENT if it does not
	 * exist, -ENOTDIR (or -ENOENT) if it is no directory.
	 */
	int (*root_open)(void *priv, const char *path, void **root);
	void (*root_close)(void *priv, void *root);
	/*
	 * Open relpath beneath root for reading (and writing if writable),
	 * refusing absolute paths, ".." escapes and ANY symlink on the way
	 * (-EACCES), -ENOENT if there is no such file, -EACCES too if it
	 * may not be opened writable, -EINVAL if it is not a regular file.
	 * Fills the file's identity.
	 */
	int (*open_beneath)(void *priv, void *root, const char *relpath,
			    bool writable, void **fh, struct vg_lrc_file_id *id);
	/* Read len bytes at off; bytes past the end of the file read as 0. */
	int (*read)(void *priv, void *fh, u64 off, void *buf, u64 len);
	/* Write len bytes at off (the file grows if needed). */
	int (*write)(void *priv, void *fh, u64 off, const void *buf, u64 len);
	int (*fsync)(void *priv, void *fh);
	int (*getattr)(void *priv, void *fh, struct vg_lrc_attr *attr);
	void (*close)(void *priv, void *fh);
};

/* ---- the cache ----------------------------------------------------------- */

#define VG_LRC_GPAGE_SIZE	(64ull << 10)	/* GPU page: replica unit */
#define VG_LRC_PAGES_PER_GPAGE	16		/* 4 KiB pages in one */
#define VG_LRC_RA_MIN		(512ull << 10)	/* sequential GPU reads fetch at least */
#define VG_LRC_RA_MAX_DEFAULT	(16ull << 20)	/* GAIA's GPU readahead bound */
#define VG_LRC_SHARES_MAX	64		/* shares per VM */
/*
 * File maps per VM: each holds host memory (its replica table, a file
 * reference), so a guest cannot pin host memory without bound (-ENOMEM).
 */
#define VG_LRC_MAPS_MAX		4096
/*
 * Host memory of file-map metadata a VM may hold, by default: its maps
 * (about 8 bytes per 64 KiB mapped: 8 MiB for a 64 GiB map) and the page
 * entries of the GPU pages its faults brought into the cache (about
 * 500 bytes per 64 KiB cached: 256 MiB is some 32 GiB of file cached).
 * Beyond it, a map or a fault that needs more fails -ENOMEM.
 */
#define VG_LRC_META_MAX_DEFAULT	(256ull << 20)

struct vg_lrc_config {
	const struct vg_lrc_store_ops *store;
	void *store_priv;
	/*
	 * Default VRAM budget of each GPU's cache replicas; 0: 1/4 of VRAM.
	 * A cap: replicas take VRAM from what BOs may use (gpu->vram_size)
	 * only while they exist, and never VRAM that BOs hold.
	 */
	u64 vram_budget;
	/* Readahead window bound in bytes (GPU page multiple); 0: 16 MiB. */
	u64 readahead_max;
	u64 seed;		/* of the cuckoo filter */
	/*
	 * Host-RAM budget in bytes of the host copies (64 KiB per cached GPU
	 * page; GPU page multiple); 0: unlimited. Least recently used host
	 * copies that no GPU replica needs are dropped (dirty ones written
	 * back first) and read from the store again when needed.
	 */
	u64 host_budget;
	/* Metadata bytes each VM may hold; 0: VG_LRC_META_MAX_DEFAULT. */
	u64 meta_max;
};

int vg_lrc_create(const struct vg_lrc_config *cfg, struct vg_lrc **out);
/*
 * Change the metadata cap of every VM (bytes > 0; -EINVAL for 0): maps
 * and faults beyond it fail -ENOMEM from now on; a VM above a new, lower
 * cap keeps what it holds.
 */
int vg_lrc_set_meta_max(struct vg_lrc *lrc, u64 bytes);
/*
 * Change the host copies' budget (bytes, GPU page multiple, 0: unlimited;
 * -EINVAL otherwise); shrinking evicts at once, as far as it can.
 */
int vg_lrc_set_host_budget(struct vg_lrc *lrc, u64 bytes);
/*
 * Every context and host file must be gone (it WARNs otherwise); GPUs
 * still registered are removed here.
 */
void vg_lrc_destroy(struct vg_lrc *lrc);

/*
 * Register a GPU with the cache: its GPU driver must have map_prot, protect,
 * fault_range, set_fault_handler and mem_host_addr (-ENODEV otherwise).
 * The cache installs no fault handler: the core owns the GPU's, and each
 * file map registers its range with it (vg_fault_register, core/vg.h).
 * vram_budget 0: the config's default. -EEXIST if already added. Add and
 * remove of one GPU must not run concurrently with each other.
 */
int vg_lrc_gpu_add(struct vg_lrc *lrc, struct vg_gpu *gpu, u64 vram_budget);
/* No context of the GPU may remain. */
void vg_lrc_gpu_remove(struct vg_lrc *lrc, struct vg_gpu *gpu);
/* Change a GPU's budget; shrinking evicts at once. */
int vg_lrc_gpu_set_budget(struct vg_lrc *lrc, struct vg_gpu *gpu, u64 bytes);

/* ---- per-VM context: a VM's address space on a GPU, one owner id ------ */

/*
 * A context for vm (whose GPU must have been added): allocates its owner
 * id (VG_LRC_OWNER_GPU0 ...; -ENOSPC when all are taken) and attaches to
 * the VM as its file service (vg_vm_attach_files()), so that the core's
 * FILE_* commands reach it and vg_vm_destroy() tears it down
 * (vg_lrc_ctx_destroy) with write-back. -EEXIST if the VM has a file
 * service already.
 */
int vg_lrc_ctx_create(struct vg_lrc *lrc, struct vg_vm *vm,
		      struct vg_lrc_ctx **out);
/*
 * Unmap every file map of the context (unreleased writes are released
 * implicitly, released data is written back to the files), drop its
 * shares, free its owner id. Called by vg_vm_destroy() if the caller did
 * not. NULL is a no-op.
 */
void vg_lrc_ctx_destroy(struct vg_lrc_ctx *ctx);
/*
 * The VM's context, or NULL (the control dispatcher: -ENOENT then). The
 * pointer stays valid until the context is destroyed: the platform
 * serialises its control commands with vg_vm_destroy().
 */
struct vg_lrc_ctx *vg_lrc_vm_ctx(struct vg_vm *vm);
u32 vg_lrc_ctx_owner(const struct vg_lrc_ctx *ctx);

/*
 * The operator's share table of the VM: share id -> host directory (its
 * virtio-fs <filesystem> source). read_only refuses RW maps (-EACCES).
 * set replaces an existing entry of the same id (its open maps stay).
 * -ENOSPC beyond VG_LRC_SHARES_MAX, store errors from root_open.
 */
int vg_lrc_share_set(struct vg_lrc_ctx *ctx, u32 share_id,
		     const char *root_path, bool read_only);
/*
 * The same with the share's virtio-fs tag (NULL or "": none), which the
 * guest reads back with VGMEM_CTRL_SHARES: -EINVAL unless
 * vgmem_share_tag_ok(), -EEXIST if another share of the context has it.
 * The platform validates a whole table first; replacing one whose tags
 * move between ids goes through clearing the old entries.
 */
int vg_lrc_share_set_tag(struct vg_lrc_ctx *ctx, u32 share_id,
			 const char *root_path, bool read_only,
			 const char *tag);
int vg_lrc_share_clear(struct vg_lrc_ctx *ctx, u32 share_id);	/* -ENOENT */
/*
 * VGMEM_CTRL_SHARES's answer (include/uapi/vgmem.h) from the context's
 * table: total, and from entry out->index on (by id ascending) count
 * entries into out->e, the rest of e zeroed. -EINVAL if index > total.
 * ctx NULL: a VM without a table (total 0).
 */
int vg_lrc_shares_list(struct vg_lrc_ctx *ctx, struct vgmem_ctrl_shares *out);

/*
 * Map [offset, offset + length) of the share's file relpath into the VM's
 * GPU VA space (a free range of its VA index, never overlapping a BO) and
 * return its va. flags: VGMEM_FILE_RO or VGMEM_FILE_RW. offset and
 * length: VGMEM_FILE_ALIGN multiples, length > 0 and <= VGMEM_BO_MAX_SIZE,
 * offset + length <= the file's size rounded up to VGMEM_FILE_ALIGN.
 * Nothing is fetched: the GPU's first access faults (readahead).
 * -ENOMEM also when the VM has VG_LRC_MAPS_MAX maps already, or when the
 * map's metadata (its replica table, 8 bytes per 64 KiB) would take the
 * VM over its metadata cap (vg_lrc_set_meta_max). Everything is checked
 * before the table is allocated.
 * Errors as VGMEM_CTRL_FILE_MAP documents (include/uapi/vgmem.h).
 */
int vg_lrc_map(struct vg_lrc_ctx *ctx, u32 share_id, const char *relpath,
	       u64 offset, u64 length, u32 flags, u64 *va);
/*
 * The same, and with VGMEM_FILE_INO in flags the file must have inode
 * number ino (the store's vg_lrc_file_id.ino): -ESTALE otherwise.
 */
int vg_lrc_map_ino(struct vg_lrc_ctx *ctx, u32 share_id, const char *relpath,
		   u64 offset, u64 length, u32 flags, u64 ino, u64 *va);
/*
 * Unmap the file map starting at va (-EBADF if none): the context's
 * unreleased writes in it are released implicitly, then released data
 * is written back (no released byte is lost).
 */
int vg_lrc_unmap(struct vg_lrc_ctx *ctx, u64 va);

/*
 * [va, va + length) inside one file map (GPU page aligned; length 0: to
 * the end of the map); -EBADF if va is in no file map, -EINVAL if the
 * range leaves it or is misaligned. The GPU must not run the context's
 * work on the range during these calls (GAIA: at kernel boundaries).
 *
 * acquire: the CPU's eager release first (host writers detected by the
 * store's change counter and a page compare), the context's own
 * unreleased writes in the range are released, then every replica of
 * the context that is not newest is unmapped: the next access faults and
 * fetches the newest version.
 * release: pages the context modified since its acquire get a new
 * version; then the CPU's eager acquire (host copies no longer newest are
 * refreshed on their next host read).
 * sync (msync): release, then merge the newest version of every page in
 * the range into the host copy and write its dirty 4 KiB blocks to the
 * file, then fsync it.
 */
int vg_lrc_acquire(struct vg_lrc_ctx *ctx, u64 va, u64 length);
int vg_lrc_release(struct vg_lrc_ctx *ctx, u64 va, u64 length);
int vg_lrc_sync(struct vg_lrc_ctx *ctx, u64 va, u64 length);

/*
 * The GPU fault entry point (the handler installed by vg_lrc_gpu_add calls
 * it; tests may too): service a fault of ctx at va (write or read).
 * Returns 0 when the page is mapped (the access can be replayed), -EFAULT
 * if va is in no file map of ctx or a write hits a RO map, -ENOMEM (also
 * when a page entry the fault needs would take the VM over its metadata
 * cap).
 */
int vg_lrc_fault(struct vg_lrc_ctx *ctx, u64 va, bool write);

/* ---- the host CPU path (host daemons, virtiofsd, tests) -------------- */

/*
 * Open relpath beneath the host directory root_path through the cache
 * (the same beneath-the-root rules as a VM's map). Reads see the newest
 * released version of every page (served from a GPU's replica when that
 * is where it is: peer-caching); writes become visible to GPU contexts at
 * their next acquire.
 */
int vg_lrc_host_open(struct vg_lrc *lrc, const char *root_path,
		     const char *relpath, bool writable,
		     struct vg_lrc_file **out);
/* Closing writes back nothing by itself: call vg_lrc_host_fsync first. */
void vg_lrc_host_close(struct vg_lrc_file *f);
/* Bytes read (short at the end of the file, 0 past it) or -errno. */
s64 vg_lrc_host_read(struct vg_lrc_file *f, u64 off, void *buf, u64 len);
/* Bytes written (all of them) or -errno; -EBADF on a read-only open. */
s64 vg_lrc_host_write(struct vg_lrc_file *f, u64 off, const void *buf,
		      u64 len);
/*
 * Merge the newest version of every page into the host copy, write the
 * dirty 4 KiB blocks to the file, fsync it.
 */
int vg_lrc_host_fsync(struct vg_lrc_file *f);
u64 vg_lrc_host_size(struct vg_lrc_file *f);

/* ---- statistics ---------------------------------------------------------- */

/* The counters of VGMEM_LRC_STATS (<uapi/vgmem_stats.h>), with their help. */
struct vg_lrc_stats {
	VGMEM_LRC_STATS(VG_STAT_MEMBER)
};
void vg_lrc_get_stats(struct vg_lrc *lrc, struct vg_lrc_stats *st);

#endif /* VGMEM_CORE_LRC_H */
