/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The portable core of vgmem: GPUswap's accounting, reducer, relocation
 * engine with shadow channels, and return worker. Compiled unchanged into
 * vgmem.ko and into the userspace host. All functions return 0 or a
 * negative errno unless they say otherwise; a call that fails changes
 * nothing.
 */
#ifndef VGMEM_CORE_VG_H
#define VGMEM_CORE_VG_H

#include "os/os.h"
#include <uapi/vgmem.h>
#include "vg_gpu_ops.h"

struct vg_gpu;
struct vg_vm;
struct vg_chan;

enum vg_chunk_policy {
	VG_POLICY_RANDOM = 0,	/* GPUswap: a random resident chunk of the victim */
	VG_POLICY_LRA = 1,	/* least recently allocated (placed in VRAM) first */
	VG_POLICY_COLD = 2,	/* fewest sampled accesses first, then LRA */
	VG_POLICY_NR
};

const char *vg_policy_name(enum vg_chunk_policy p);
int vg_policy_parse(const char *name, enum vg_chunk_policy *out);

#define VG_CHUNK_MIN		(64ull << 10)
#define VG_CHUNK_MAX		(64ull << 20)
#define VG_CHUNK_DEFAULT	(2ull << 20)
#define VG_RETURN_MS_DEFAULT	50
/*
 * A relocation preempts its victim's channels (channel_stop), it never
 * waits for their work to finish: the wait is one turn of the GPU's
 * engine however long the work is, so a launch that runs for days costs
 * a drain no more than a short one. VG_STOP_TIMEOUT_NS bounds that wait
 * under gpu->lock for a GPU driver whose turn does not end (an engine
 * thread starved of CPU, a guest memory access that blocks, hardware
 * that cannot preempt mid-kernel). A VM whose channels do not stop in it
 * is not drained: the relocation leaves it as it was, and it is not a
 * victim again for VG_DRAIN_BACKOFF_MIN_NS, doubling with each failure in
 * a row up to VG_DRAIN_BACKOFF_MAX_NS (chan.c, vg_vm_drain).
 */
#define VG_STOP_TIMEOUT_NS	(100ull * NSEC_PER_MSEC)
#define VG_DRAIN_BACKOFF_MIN_NS	(100ull * NSEC_PER_MSEC)
#define VG_DRAIN_BACKOFF_MAX_NS	(5ull * NSEC_PER_SEC)

/*
 * Optional event hooks of a GPU (vgmem.ko multicasts them over netlink).
 * The core calls them with its gpu->lock held, from the thread that
 * allocates or from the return worker: they must not take a lock that is
 * held around calls into the core, and must not sleep long (allocating
 * with GFP_KERNEL is fine). Either pointer may be NULL.
 */
struct vg_gpu_events {
	/* An allocation of req needs need more bytes of VRAM than are free. */
	void (*pressure)(void *priv, struct vg_vm *req, u64 need);
	/* vm's chunks moved to to; its channels were suspended suspend_ns. */
	void (*relocated)(void *priv, struct vg_vm *vm, enum vg_loc to,
			  u32 chunks, u64 bytes, u64 suspend_ns);
};

struct vg_gpu_config {
	const char *name;
	u64 chunk_size;			/* power of two, VG_CHUNK_MIN..MAX; 0: default */
	enum vg_chunk_policy policy;
	u32 return_interval_ms;		/* 0: default; the worker runs while the GPU lives */
	u64 host_budget;		/* bytes of host RAM for relocated chunks; 0: unlimited */
	u64 seed;			/* of the reducer's random choices */
	bool no_return_worker;		/* tests drive vg_gpu_return_once() themselves */
	const struct vg_gpu_events *events;	/* NULL: none */
	void *events_priv;
};

/*
 * Platform hooks of a VM: how the guest reaches its USERD pages. The kernel
 * zaps the guest's mappings so the next access faults in the page that
 * vg_chan_userd_page() names; the userspace host needs nothing (its guests
 * go through vg_chan_userd_read/write). May be NULL.
 */
struct vg_vm_platform {
	void (*userd_zap)(void *priv, struct vg_chan *ch);
	/*
	 * A channel of the VM entered an error state (enum vgmem_chan_error).
	 * Called from the GPU's engine thread with no core lock held; must not
	 * sleep (the kernel signals the guest's interrupt eventfd here).
	 */
	void (*chan_fault)(void *priv, struct vg_chan *ch, u32 error);
	void *priv;
};

struct vg_vm_config {
	const char *name;
	u64 quota;			/* bytes of BOs this VM may hold; 0: unlimited */
	/*
	 * Bytes of BOs the VM was sold (its vGPU profile); what it holds
	 * beyond is a burst, best effort: under COLD its memory goes first
	 * while it is past it (reducer.c). 0: none, no VM is ever past it.
	 */
	u64 profile;
	struct vg_guest_mem gmem;
	struct vg_vm_platform platform;
};

/* GPU lifetime. */
int vg_gpu_create(const struct vg_gpu_config *cfg,
		  const struct vg_gpu_ops *ops, void *drv,
		  struct vg_gpu **out);
void vg_gpu_destroy(struct vg_gpu *gpu);	/* all VMs must be gone */

int vg_gpu_set_policy(struct vg_gpu *gpu, enum vg_chunk_policy p);
int vg_gpu_set_return_interval(struct vg_gpu *gpu, u32 ms);
/* One pass of the return worker, synchronously; returns bytes moved back or -errno. */
s64 vg_gpu_return_once(struct vg_gpu *gpu);

/*
 * A stats struct member for a line of a <uapi/vgmem_stats.h> table, in the
 * core's types: the GPU's and the file cache's counters are defined there.
 */
#define VG_STAT_MEMBER(field, attr, kind, ...)			\
	u64 field VGMEM_STAT_DIM_OF(kind);

struct vg_gpu_stats {
	u64 vram_size;
	u64 vram_used;		/* bytes of resident chunks */
	u64 host_used;		/* bytes of relocated chunks */
	u32 nr_vms;
	u64 chunk_size;
	enum vg_chunk_policy policy;
	/*
	 * Bytes of VRAM the LRC file cache holds now (its replicas). Not
	 * part of vram_used; vram_size - vram_used - cache_used is free.
	 */
	u64 cache_used;
	/* reloc_out_chunks ... stall_hist: VGMEM_GPU_STATS */
	VGMEM_GPU_STATS(VG_STAT_MEMBER)
};
void vg_gpu_get_stats(struct vg_gpu *gpu, struct vg_gpu_stats *st);

/*
 * Consistency check of every total against the lists (tests, debugfs):
 * returns 0 or -EIO and logs the first mismatch.
 */
int vg_gpu_check(struct vg_gpu *gpu);

/*
 * The LRC file cache's VRAM (core/lrc/) sits next to the BOs' and yields
 * first: the cache registers a reclaim hook per GPU, and before the core
 * relocates any VM's chunks to make room (a BO allocation that does not
 * fit in free VRAM; the return worker bringing chunks back to VMs below
 * their entitlement) it calls reclaim(priv, bytes), which evicts the
 * cache's least recently allocated unpinned replicas until bytes of VRAM
 * are freed or none is left, and returns the bytes it freed. The hook is
 * called with no core lock held and may sleep; calls are serialised.
 * Setting a new hook (or NULL) waits until no call of the old one is
 * under way, so its priv may be freed then: call it with no lock the
 * hook takes held. One hook per GPU; NULL removes it.
 */
void vg_gpu_set_cache_reclaim(struct vg_gpu *gpu,
			      u64 (*reclaim)(void *priv, u64 bytes),
			      void *priv);

/*
 * Replayable GPU faults (core/fault.c). The core owns each GPU's one
 * GPU driver fault handler (set_fault_handler, vg_gpu_ops.h): it installs it
 * when the GPU is created and removes it when the GPU is destroyed, and
 * dispatches every fault by (address space, address) to whoever registered
 * the range. Anyone who services faults (the LRC file cache, the paging
 * peer model) registers each range it serves instead of owning the GPU's
 * handler, so several of them share one GPU.
 *
 * vg_fault_register: [va, va + size) of as (4 KiB aligned, size > 0)
 * faults to fn(priv, f) from now on; the GPU driver's fault_range is turned
 * on for it. The ranges of one AS never overlap (the GPU driver's contract):
 * an overlap is refused with -EEXIST and changes nothing. -ENODEV if the
 * GPU driver has no replayable faults, -EINVAL for bad arguments. fn is
 * called like the GPU driver's handler (its fault thread, no core or GPU driver
 * lock held, may sleep and call GPU ops, returns 0 to replay or
 * -errno for VGMEM_CHAN_ERR_VA). A fault in no registered range errors
 * its channel. Locks: it takes the GPU's fault lock and, under it, calls
 * the GPU driver's fault_range, which takes the address space's lock (the
 * sim's as->lock): so it may be called under gpu->lock or the caller's own
 * locks, but not under a GPU driver lock, nor under a lock that is ever taken
 * with the AS's lock or the fault lock held. The range must be
 * unregistered before its AS is destroyed.
 *
 * vg_fault_unregister: no new call of fn for the range starts, its
 * fault_range goes off, and it returns once no call of fn for it is under
 * way: then priv may be freed (like free_irq). So it must be called with
 * no lock fn takes, never under gpu->lock, and never from fn itself.
 *
 * vg_fault_unregister_async: for callers that must unregister under the
 * lock fn takes. Does what vg_fault_unregister does without waiting;
 * release(priv) (if not NULL) runs once no call is under way: at once in
 * the caller, or in the fault thread when the running call returns. A call
 * already under way may still run fn(priv) after this returns (typically
 * blocked on that lock), so fn must recognise a priv its owner has
 * retired (a flag set under that lock) before touching anything else.
 * The handle is gone after either call.
 */
struct vg_fault_reg;
typedef int (*vg_fault_fn)(void *priv, const struct vg_gpu_fault *f);
int vg_fault_register(struct vg_gpu *gpu, struct vg_as *as, u64 va,
		      u64 size, vg_fault_fn fn, void *priv,
		      struct vg_fault_reg **out);
void vg_fault_unregister(struct vg_fault_reg *reg);
void vg_fault_unregister_async(struct vg_fault_reg *reg,
			       void (*release)(void *priv));

struct vg_fault_stats {
	u64 dispatched;		/* faults handed to a registrant */
	u64 unclaimed;		/* faults in no registered range (errored) */
	u32 ranges;		/* registered now */
	u32 ases;		/* address spaces with a registered range */
};
void vg_fault_get_stats(struct vg_gpu *gpu, struct vg_fault_stats *st);

/* VM lifetime. Destroy frees its BOs and channels. */
int vg_vm_create(struct vg_gpu *gpu, const struct vg_vm_config *cfg,
		 struct vg_vm **out);
void vg_vm_destroy(struct vg_vm *vm);
/* Entitlement in VRAM bytes; 0 returns the VM to the equal share. */
int vg_vm_set_entitlement(struct vg_vm *vm, u64 bytes);
int vg_vm_set_quota(struct vg_vm *vm, u64 bytes);
void vg_vm_get_stats(struct vg_vm *vm, struct vgmem_vm_stats *st);
/*
 * Bytes of VRAM in the file cache's private replicas of the VM (the file
 * pages it wrote and has not had merged and dropped yet); part of the
 * GPU's cache_used, not of the VM's resident bytes.
 */
u64 vg_vm_cache_private(struct vg_vm *vm);
const char *vg_vm_name(const struct vg_vm *vm);
/*
 * Files on the GPU: the FILE_* control commands and SHARES are served by a
 * file service attached to the VM (the LRC file cache attaches one per VM
 * it gives shares, core/lrc/ctx.c). The core checks a command's fields
 * (ctrl.c), then calls the service with the context it attached; without
 * a service FILE_MAP is -ENOENT (no such share), the range commands
 * -EBADF (no map) and SHARES lists none. Every op may sleep and is called
 * without core locks held.
 *
 * vg_vm_attach_files: -EEXIST if the VM has a service already.
 * vg_vm_detach_files: the service leaves (its destroy op is not called).
 * vg_vm_files: the context attached with ops, or NULL (none, or another
 * service's).
 * vg_vm_destroy() calls destroy(ctx) first, before anything of the VM goes
 * (its writes reach the files while the VM's memory is still there); the
 * service detaches itself in it.
 */
/* A file map as a migration carries it (mig_save.c, mig_load.c). */
struct vg_file_map_desc {
	u64 va, offset, length;
	u64 ino;			/* the file's inode number when mapped */
	u32 share_id;
	u32 flags;			/* VGMEM_FILE_RO or VGMEM_FILE_RW */
	char path[VGMEM_FILE_PATH_MAX];	/* as mapped, NUL-terminated */
};

/*
 * mig_next and map_at are for a migration (docs/migration.md): mig_next
 * gives the live map starting at or after va (-ENOENT: none left), after
 * it has released the context's outstanding writes in it and written the
 * newest bytes of its range to the file (sync), so that another host
 * reading the file sees what this one had; the VM is frozen meanwhile.
 * map_at maps d on the destination at d->va exactly (-EINVAL if that
 * range is taken), with the checks and errors of map.
 */
struct vg_file_ops {
	int (*map)(void *ctx, u32 share_id, const char *path, u64 offset,
		   u64 length, u32 flags, u64 ino, u64 *va);
	int (*mig_next)(void *ctx, u64 va, struct vg_file_map_desc *out);
	int (*map_at)(void *ctx, const struct vg_file_map_desc *d);
	int (*unmap)(void *ctx, u64 va);
	int (*acquire)(void *ctx, u64 va, u64 length);
	int (*release)(void *ctx, u64 va, u64 length);
	int (*sync)(void *ctx, u64 va, u64 length);
	int (*shares)(void *ctx, struct vgmem_ctrl_shares *out);
	void (*destroy)(void *ctx);
};
int vg_vm_attach_files(struct vg_vm *vm, const struct vg_file_ops *ops,
		       void *ctx);
void vg_vm_detach_files(struct vg_vm *vm);
void *vg_vm_files(struct vg_vm *vm, const struct vg_file_ops *ops);
/* The VM's file service and its context, or NULL (read under gpu->lock). */
const struct vg_file_ops *vg_vm_file_service(struct vg_vm *vm, void **ctx);

/*
 * The GPU as the file cache uses it (cachemem.c): the cache is a layer
 * beside the core that never takes gpu->lock or calls the GPU driver itself.
 * Each call below is one step under gpu->lock, taken inside: call them
 * with no core lock held (the cache's own lock, which orders before
 * gpu->lock, may be held).
 *
 * vg_gpu_can_map_files: the GPU driver has what file maps need (map_prot,
 * protect, fault_range, set_fault_handler, mem_host_addr).
 * vg_gpu_host_mem_alloc/free: host RAM the GPU maps (VG_LOC_HOST, never
 * counted as VRAM); *cpu, if asked for, is the CPU's address of it
 * (-ENODEV if the GPU driver has none).
 * vg_gpu_cache_vram_get: size bytes of free VRAM (vram_size less what the
 * BOs and the cache hold: never VRAM a BO uses) counted in the GPU's
 * cache_used and, if vm is not NULL, in vm's cache_private; *charge says
 * whom to uncharge. -ENOSPC when the core counts less free VRAM than size
 * (reclaim or recycle, then retry), -ENOMEM when the GPU driver had none
 * although the count said there was. vg_gpu_cache_vram_put frees it and
 * uncharges the VM if it still exists (the return worker's next pass
 * may bring relocated chunks back into it).
 * vg_gpu_copy: one batch on the copy engine, waited for.
 * vg_vm_file_va_get: length bytes of the VM's GPU VA (first fit among its
 * BOs and maps, node inserted with node->file set) whose faults go to
 * fn(priv) (vg_fault_register: fn may be called before this returns).
 * vg_vm_file_va_get_at: the same at va exactly (a migrated map keeps its
 * VA): -EINVAL if it is misaligned, outside the VA space or overlaps.
 * vg_vm_file_va_put unregisters the range, waiting for a call of fn under
 * way (so never with a lock fn takes), then gives the VA back.
 * vg_vm_file_map/protect/unmap: page tables of [va, va + size) in the
 * VM's AS, in 4 KiB pages (at most 64): map mem from offset 0, or change
 * the protection of what is mapped, with the pages set in rw_pages (bit i:
 * the i-th 4 KiB page) writable and all others read-only, never writable
 * even for a moment; unmap. Each flushes the AS's TLB. A failed map leaves
 * nothing mapped there; a failed protect may leave any protection.
 */
struct vg_va_node;
struct vg_cache_charge {
	u64 vm_order;		/* the VM charged, by creation order */
	bool vm;		/* a VM is charged */
};
bool vg_gpu_can_map_files(const struct vg_gpu *gpu);
u64 vg_gpu_vram_size(const struct vg_gpu *gpu);
const char *vg_gpu_name(const struct vg_gpu *gpu);
struct vg_gpu *vg_vm_gpu(const struct vg_vm *vm);
void vg_vm_va_bounds(const struct vg_vm *vm, u64 *start, u64 *end, u64 *align);
int vg_gpu_host_mem_alloc(struct vg_gpu *gpu, u64 size, struct vg_mem **out,
			  void **cpu);
void vg_gpu_host_mem_free(struct vg_gpu *gpu, struct vg_mem *mem);
int vg_gpu_cache_vram_get(struct vg_gpu *gpu, struct vg_vm *vm, u64 size,
			  struct vg_mem **out, struct vg_cache_charge *charge);
void vg_gpu_cache_vram_put(struct vg_gpu *gpu, struct vg_mem *mem, u64 size,
			   struct vg_cache_charge *charge);
int vg_gpu_copy(struct vg_gpu *gpu, const struct vg_copy *c, u32 n);
int vg_vm_file_va_get(struct vg_vm *vm, u64 length, struct vg_va_node *node,
		      vg_fault_fn fn, void *priv, struct vg_fault_reg **reg);
int vg_vm_file_va_get_at(struct vg_vm *vm, u64 va, u64 length,
			 struct vg_va_node *node, vg_fault_fn fn, void *priv,
			 struct vg_fault_reg **reg);
void vg_vm_file_va_put(struct vg_vm *vm, struct vg_va_node *node,
		       struct vg_fault_reg *reg);
int vg_vm_file_map(struct vg_vm *vm, u64 va, u64 size, struct vg_mem *mem,
		   u64 rw_pages);
int vg_vm_file_protect(struct vg_vm *vm, u64 va, u64 size, u64 rw_pages);
void vg_vm_file_unmap(struct vg_vm *vm, u64 va, u64 size);

/*
 * Migration of a VM's GPU memory (mig_save.c, mig_load.c, mig_track.c;
 * docs/migration.md): its BOs and their bytes as a versioned stream,
 * produced and consumed in pieces of any size (as VFIO's migration data fd moves them). Calls take
 * gpu->lock for themselves; call with no core lock held.
 *
 * vg_mig_save_begin/read/end: a VM with channels must be frozen
 * (vg_vm_freeze; -EBUSY otherwise), and its BOs and file maps are left
 * alone meanwhile (no control commands); its file maps go through its
 * file service (vg_file_ops.mig_next: their writes reach the files first;
 * a file range the service does not know fails the read, -EOPNOTSUPP);
 * its channels go with their USERD pages and the GPU driver's state
 * (channel_save; -EOPNOTSUPP without it). read returns the
 * bytes it put in buf (less than len only at the end, 0 after it) or a
 * negative errno (-ESTALE: the BOs changed).
 * vg_mig_load_begin: into a VM with no BOs and no channels (-EBUSY
 * otherwise), which it freezes: restored channels keep their ids and
 * stay stopped until the caller's vg_vm_thaw() after a good finish.
 * vg_mig_load_write consumes all of buf or returns a negative errno; an
 * error is final (-EBADMSG: a malformed or inconsistent stream,
 * -EPROTONOSUPPORT: another version, -EFBIG: more than the VM's quota,
 * or what restoring a BO met, e.g. -ENOMEM, or a file map, e.g. -ENOENT
 * no such share here, -ESTALE another file at its path), and
 * vg_mig_load_error() says why in a sentence. vg_mig_load_finish ends it
 * either way: 0 if the whole stream came and was good (the VM frozen),
 * else a negative errno with every BO, file map and channel it made gone
 * again and the VM thawed (as it was).
 *
 * The platform's own device state (a PCI device's config space and
 * registers, say) travels in the same stream as one DEV record, opaque to
 * the core, of 1 to VG_MIG_DEV_MAX bytes: the source passes its bytes to
 * save_begin or, for a pre-copy, to save_stop (copied there; -EINVAL for
 * another size), and the destination's load() gets them whole (before
 * any BO from a stop-only save, after the BOs from a pre-copy) to check
 * them and keep them for after a good finish: 0, or a negative errno
 * with a sentence in why, which refuses the stream. A load begun with a
 * vg_mig_dev needs one DEV record (-EBADMSG at END without it); a load
 * begun without one refuses any (-EPROTONOSUPPORT: a device state this
 * host cannot restore). NULL for either: no device state.
 */
#define VG_MIG_DEV_MAX	4096u
struct vg_mig_dev {
	const void *state;		/* source: the bytes to send */
	u32 len;
	int (*load)(void *priv, const void *buf, u32 len, char *why,
		    size_t why_len);	/* destination */
	void *priv;
};
struct vg_mig_save;
struct vg_mig_load;
int vg_mig_save_begin(struct vg_vm *vm, const struct vg_mig_dev *dev,
		      struct vg_mig_save **out);
/*
 * The most bytes vg_mig_save_* would hand out for this VM as it is now,
 * with a DEV record of dev_len bytes (0: none): every chunk counted as a
 * DATA record (a stream leaves chunks of zeroes out, so it is shorter by
 * theirs) and every channel's GPU driver state at VG_CHAN_STATE_MAX. Exact
 * for a VM without channels whose chunks all hold data. Takes gpu->lock;
 * any time, frozen or not (a VMM's estimate of the stop-and-copy phase).
 */
u64 vg_mig_save_max(struct vg_vm *vm, u32 dev_len);
ssize_t vg_mig_save_read(struct vg_mig_save *s, void *buf, size_t len);
void vg_mig_save_end(struct vg_mig_save *s);
/*
 * Pre-copy: the stream begins while the VM runs, as VFIO's PRE_COPY
 * state wants it. vg_mig_precopy_begin needs a GPU driver with read-only
 * PTEs and replayable faults (-EOPNOTSUPP without; the write tracking of
 * mig_track.c), one pre-copy per VM at a time (-EBUSY); file maps go at
 * the stop. The guest goes on allocating, freeing and
 * writing meanwhile. vg_mig_save_read hands out the chunks not sent yet
 * or written by the GPU since they were sent (relocated ones first), and
 * -ENOMSG once a whole pass over the VM found nothing to send: the
 * temporary end of the stream, for now (read again later for more).
 * vg_mig_precopy_info: what is left, as VFIO_MIG_GET_PRECOPY_INFO gives
 * it: bytes of the first pass not sent yet, and bytes to send again.
 * vg_mig_save_stop: the VM is frozen now (vg_vm_freeze; -EBUSY if it has
 * channels and is not): reads go on with what is still dirty, the
 * channels and dev's state, then END (0 after it). -EINVAL if not a
 * pre-copy or stopped already. vg_mig_save_end ends a pre-copy at any
 * point: the VM's memory is writable again and nothing of the tracking
 * is left (the VM runs on, as if nothing had begun). The VM must not be
 * destroyed before its save has ended.
 */
int vg_mig_precopy_begin(struct vg_vm *vm, struct vg_mig_save **out);
/* Can this GPU's VMs be pre-copied (its GPU driver has what it takes)? */
bool vg_mig_precopy_possible(struct vg_gpu *gpu);
/*
 * The most bytes the rest of s would take were the VM stopped now (a
 * pre-copy: what is not clean, the channels, a DEV record of dev_len,
 * END; a stop-only save: vg_mig_save_max). A VMM's estimate of the
 * stop-and-copy phase.
 */
u64 vg_mig_save_left(struct vg_mig_save *s, u32 dev_len);
void vg_mig_precopy_info(struct vg_mig_save *s, u64 *initial, u64 *dirty);
int vg_mig_save_stop(struct vg_mig_save *s, const struct vg_mig_dev *dev);
/* What a save handed out so far (for tests, benchmarks and logs). */
struct vg_mig_save_stats {
	u64 bytes;			/* of the stream */
	u64 stop_bytes;			/* read after vg_mig_save_stop */
	u64 data_records;		/* chunks sent */
	u64 stop_data_records;		/* of which after the stop */
	u64 walks;			/* a pre-copy's finished passes */
	u64 dirtied;			/* bytes of sent chunks written again */
};
void vg_mig_save_stats(const struct vg_mig_save *s,
		       struct vg_mig_save_stats *st);
int vg_mig_load_begin(struct vg_vm *vm, const struct vg_mig_dev *dev,
		      struct vg_mig_load **out);
ssize_t vg_mig_load_write(struct vg_mig_load *l, const void *buf, size_t len);
const char *vg_mig_load_error(const struct vg_mig_load *l);
int vg_mig_load_finish(struct vg_mig_load *l);

/* The platform.priv the VM was created with (event hooks find theirs). */
void *vg_vm_priv(const struct vg_vm *vm);
/* The VM's GPU driver address space, for GPU driver-specific readouts (cost model). */
struct vg_as *vg_vm_gpu_as(struct vg_vm *vm);

/*
 * Quiesce a VM for a memory manager outside the core (the userspace host's
 * peer models move a VM's memory themselves): the same suspension the core
 * gives a relocation victim. Its guest keeps submitting into the shadow
 * USERD pages and every channel is stopped (preempted: a launch cut short
 * goes on from where it was once started again), so until
 * vg_vm_unquiesce() no method of the VM runs and the caller may copy its
 * memory and remap it (GPU ops only).
 *
 * Locking: vg_vm_quiesce() takes gpu->lock and, on success (0), returns
 * with it HELD; the same thread must call vg_vm_unquiesce(), which
 * replays what the guest submitted meanwhile and drops it. In between the
 * caller must not call any function of this header (they take gpu->lock),
 * only GPU ops. On failure (-ETIMEDOUT: a channel did not stop
 * within VG_STOP_TIMEOUT_NS) nothing is suspended and the lock is not
 * held. The caller's own locks order before gpu->lock.
 */
int vg_vm_quiesce(struct vg_vm *vm);
void vg_vm_unquiesce(struct vg_vm *vm);
/*
 * Freeze a VM for a migration's stop-and-copy: the suspension above (its
 * channels stopped, its guest writing into the shadows), held with no lock
 * until vg_vm_thaw() replays what the guest wrote and starts it. Meanwhile
 * every call may be made, vg_mig_save_* in particular; the VM may still
 * be relocated (its channels stay stopped), channels created while frozen
 * wait for the thaw like the others, and vg_vm_quiesce() is -EBUSY.
 * -EALREADY if frozen, -ETIMEDOUT as vg_vm_quiesce(). vg_vm_destroy()
 * takes a frozen VM as it is.
 */
int vg_vm_freeze(struct vg_vm *vm);
void vg_vm_thaw(struct vg_vm *vm);

/*
 * Buffer objects: size a multiple of VGMEM_PAGE_SIZE; va chosen by the core
 * (aligned to the chunk size) unless VGMEM_BO_FIXED_VA. May relocate other
 * VMs' (or this VM's) chunks and waits for that (the allocation stall).
 */
int vg_bo_alloc(struct vg_vm *vm, u64 size, u32 flags, u64 *va);
int vg_bo_free(struct vg_vm *vm, u64 va);

/* Where each chunk of the BO at va lives (tests, tools): locs[i] per chunk. */
int vg_bo_query(struct vg_vm *vm, u64 va, enum vg_loc *locs, u32 max,
		u32 *nr_chunks);

/* Channels with GPUswap's shadow USERD pages. */
int vg_chan_create(struct vg_vm *vm, u64 gpfifo_gpa, u32 entries,
		   struct vg_chan **out);
void vg_chan_destroy(struct vg_chan *ch);
/*
 * The channel with this id, or NULL. vg_chan_find() needs gpu->lock held:
 * only the core's own code and the platform hooks the core calls under it
 * (userd_zap) may use it. vg_chan_lookup() takes the lock itself; the
 * channel it returns lives until it is destroyed, and only the platform's
 * own requests destroy channels (vg_chan_destroy, VGMEM_CTRL_CHAN_DESTROY,
 * vg_vm_destroy), so the caller must serialize those with its use of the
 * pointer (the userspace host and the kernel do it with the lock they
 * hold across every CHAN_CREATE/CHAN_DESTROY).
 */
struct vg_chan *vg_chan_find(struct vg_vm *vm, u32 id);
struct vg_chan *vg_chan_lookup(struct vg_vm *vm, u32 id);
u32 vg_chan_id(const struct vg_chan *ch);
/*
 * The guest's view of USERD (the page the guest's mapping points at right
 * now: the real page or, while its VM is suspended, the shadow). Offsets
 * are 4-byte aligned and below VGMEM_USERD_SIZE; others read 0 and are
 * ignored on write. Only GP_PUT is guest-writable.
 */
u32 vg_chan_userd_read(struct vg_chan *ch, u32 off);
void vg_chan_userd_write(struct vg_chan *ch, u32 off, u32 val);
/*
 * For the kernel's fault handler: the page to map now, under ch's map lock.
 *
 * The rule the fault handler follows, so it never maps a freed page:
 *  - it holds its own per-vGPU mapping lock across finding the channel
 *    (in its own id -> channel table), vg_chan_userd_page() and inserting
 *    the page into the guest's mapping;
 *  - platform.userd_zap takes that same lock; the core calls it after
 *    every shadow swap and in channel destroy;
 *  - channel destroy first takes the channel off the VM's list, then
 *    calls userd_zap, and only then frees the real and shadow pages. The
 *    zap, seeing vg_chan_find() (legal there: the core holds gpu->lock)
 *    no longer return the channel, drops it from the handler's table and
 *    zaps its page. A fault that got the lock before the zap has finished
 *    its insert, and the zap removes that PTE; a fault after it finds no
 *    channel. No fault reaches a destroyed channel.
 */
void *vg_chan_userd_page(struct vg_chan *ch);

/* The control queue's dispatcher: validates and runs one command. */
void vg_ctrl_exec(struct vg_vm *vm, struct vgmem_ctrl *cmd);

#endif /* VGMEM_CORE_VG_H */
