/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A GPU, as the core sees it: a table of GPU operations. The software
 * GPU (sim/) implements every one; a hardware GPU driver has to implement the
 * same table (docs/architecture.md says which nouveau/nvkm calls would back
 * each). All handles are opaque to the core.
 *
 * Context: every op may sleep, and is called with gpu->lock held unless it
 * says otherwise. No op may call back into the core.
 */
#ifndef VGMEM_CORE_GPU_OPS_H
#define VGMEM_CORE_GPU_OPS_H

#include "os/os.h"

enum vg_loc {
	VG_LOC_VRAM = 0,
	VG_LOC_HOST = 1,	/* pinned, DMA-reachable host RAM */
};

struct vg_mem;		/* the GPU driver's memory: VRAM or host pages */
struct vg_as;		/* its GPU address space (page table) */
struct vg_bchan;	/* its channel */

/*
 * Guest memory accessor of one VM: guest-physical reads and writes, bounds
 * checked by the provider (userspace: a region; kernel: vfio_dma_rw).
 * Return 0 or -EFAULT. May be called from the engine thread.
 */
struct vg_guest_mem {
	int (*read)(void *priv, u64 gpa, void *buf, size_t len);
	int (*write)(void *priv, u64 gpa, const void *buf, size_t len);
	void *priv;
};

/* One copy of a batch: whole mem objects' ranges, same length. */
struct vg_copy {
	struct vg_mem *src;
	u64 src_off;
	struct vg_mem *dst;
	u64 dst_off;
	u64 len;
};

/* Page protection (protect op). */
#define VG_PROT_RW	0u
#define VG_PROT_RO	(1u << 0)	/* GPU writes fault */

/* A replayable GPU page fault (see fault_range). */
struct vg_gpu_fault {
	struct vg_as *as;
	u64 va;			/* the faulting address, 4 KiB aligned */
	bool write;		/* a write (to a missing or read-only page) */
	bool present;		/* a PTE exists (so: a write to a RO page) */
};

struct vg_channel_desc {
	u64 gpfifo_gpa;
	u32 gpfifo_entries;
	const struct vg_guest_mem *gmem;	/* valid until channel_destroy */
	/* Called from the engine thread when the channel enters an error state. */
	void (*fault_cb)(void *priv, u32 error, u64 addr);
	void *fault_priv;
};

/* The most bytes a channel_save writes. */
#define VG_CHAN_STATE_MAX	4096u

struct vg_gpu_ops {
	const char *name;
	u64 (*vram_size)(void *b);

	/*
	 * Memory. mem_alloc returns -ENOMEM/-ENOSPC when the location is
	 * full. New memory reads as zeroes: no VM ever sees bytes another
	 * left (and a migration leaves chunks of zeroes out of its stream).
	 */
	int (*mem_alloc)(void *b, enum vg_loc loc, u64 size, struct vg_mem **out);
	void (*mem_free)(void *b, struct vg_mem *mem);

	/*
	 * Asynchronous batched copies: copy_submit queues all n copies on the
	 * copy engine and returns a fence; copy_wait waits for it and returns
	 * 0 or the first error (-EIO). device_ns, if not NULL, receives the
	 * simulated or measured device time of the batch.
	 */
	int (*copy_submit)(void *b, const struct vg_copy *copies, unsigned int n,
			   u64 *fence);
	int (*copy_wait)(void *b, u64 fence, u64 *device_ns);

	/*
	 * Address spaces: map [va, va + size) to mem at mem_off, 4 KiB aligned.
	 * A failed map should leave the range as it was (the sim's and the
	 * test fake's are all or nothing); the core does not rely on it and
	 * unmaps the whole range of a new BO's chunk whose map failed. unmap
	 * of pages that are not mapped must be harmless: error paths unmap
	 * ranges only partly mapped.
	 */
	int (*as_create)(void *b, struct vg_as **out);
	void (*as_destroy)(void *b, struct vg_as *as);
	int (*map)(void *b, struct vg_as *as, u64 va, u64 size,
		   struct vg_mem *mem, u64 mem_off);
	void (*unmap)(void *b, struct vg_as *as, u64 va, u64 size);
	void (*tlb_flush)(void *b, struct vg_as *as);

	/*
	 * Channels. channel_create returns the channel and its real USERD page
	 * (VGMEM_USERD_SIZE bytes, host-addressable, polled by the GPU).
	 * channel_idle_wait returns 0 once the ring is drained (GP_GET ==
	 * GP_PUT of the real page) or the channel is parked on an unsatisfied
	 * semaphore acquire or in an error state, and no method of it is in
	 * flight; -ETIMEDOUT otherwise. The relocation does not use it (how
	 * long a ring takes to run dry is up to the guest; it preempts with
	 * channel_stop instead); peer models and tests may.
	 */
	int (*channel_create)(void *b, struct vg_as *as,
			      const struct vg_channel_desc *desc,
			      struct vg_bchan **out, void **userd);
	void (*channel_destroy)(void *b, struct vg_bchan *ch);
	int (*channel_idle_wait)(void *b, struct vg_bchan *ch, u64 timeout_ns);

	/*
	 * Required (vg_gpu_create checks): stop and restart one channel, as
	 * disabling and preempting a channel does on NVIDIA hardware.
	 *
	 * channel_stop: a preemption. From its return until channel_start the
	 * GPU touches no memory for ch, whatever happens meanwhile: in
	 * particular a channel parked on a semaphore acquire stays parked
	 * even if another channel releases the semaphore. It must not wait
	 * for ch's work to finish (a guest decides how long that is): a
	 * method cut short keeps its progress, and after channel_start goes
	 * on from there, translating its addresses anew (the relocation
	 * remaps memory in between). Returns 0 once ch is off the GPU,
	 * -ETIMEDOUT if it still is after timeout_ns (the sim: one engine
	 * turn that lasts longer, a starved or blocked engine; hardware that
	 * cannot preempt mid-kernel); on error ch is left running as before
	 * (the GPU driver undoes its stop). The core stops a channel only while
	 * it is running and starts it only while it is stopped.
	 *
	 * channel_start: the channel may run again from where it stopped
	 * (re-reading GP_PUT and any semaphore it waits for).
	 */
	int (*channel_stop)(void *b, struct vg_bchan *ch, u64 timeout_ns);
	void (*channel_start)(void *b, struct vg_bchan *ch);

	/*
	 * Optional, for migration: a stopped channel's execution state as at
	 * most VG_CHAN_STATE_MAX bytes in a format of the GPU driver's own
	 * (versioned: another host's driver of the same kind reads it), and
	 * back. Not in it: the ring and pushbuffers (guest memory), the
	 * USERD page (the core carries it). channel_save returns the bytes
	 * written, -ENOSPC if len is too small, -EBUSY if ch is not stopped.
	 * channel_load takes such bytes into a stopped channel created with
	 * the same ring; the bytes come from another host, so anything this
	 * driver would not have written (another format or version, a
	 * length, a value no channel of it can have) is -EINVAL with ch
	 * unchanged. Then channel_start goes on from the loaded state.
	 */
	int (*channel_save)(void *b, struct vg_bchan *ch, void *buf, u32 len);
	int (*channel_load)(void *b, struct vg_bchan *ch, const void *buf,
			    u32 len);

	/*
	 * Optional: accesses to mem since the last call (then reset). NULL if
	 * the GPU cannot sample; the core then treats every chunk as equally
	 * warm.
	 */
	u64 (*sample_access)(void *b, struct vg_mem *mem);

	/*
	 * Optional: CPU address of a VG_LOC_HOST mem's bytes (the whole mem,
	 * contiguous), NULL for VRAM or if the GPU driver cannot. The LRC cache
	 * reads and merges its host replicas through it.
	 */
	void *(*mem_host_addr)(void *b, struct vg_mem *mem);

	/*
	 * Optional: per-page protection and replayable GPU page faults, as
	 * NVIDIA GPUs since Pascal have them (a fault buffer the driver
	 * services, then a replay). Either all five are set or none; the core
	 * checks. The LRC file cache and the demand-paging peer model need
	 * them.
	 *
	 * map_prot: map, with the PTEs created at protection prot: a page
	 * shared read-only between address spaces must be mapped this way,
	 * since between a map and a protect another channel of the AS could
	 * write it.
	 *
	 * protect: set prot (VG_PROT_*) on the mapped pages of [va, va + size);
	 * unmapped pages in the range are left alone. Takes effect for every
	 * access after the next tlb_flush (or at once; a flush is still owed).
	 * map always writes VG_PROT_RW PTEs (also over a read-only one), so
	 * between a map and its protect a channel of the AS that did not
	 * fault on the page may write it.
	 *
	 * fault_range: while on, an access in [va, va + size) that finds no
	 * PTE, or writes a VG_PROT_RO page, does not put the channel in an
	 * error state: the channel parks on the fault (no method of it is in
	 * flight, so channel_idle_wait and channel_stop treat it as idle and
	 * stopped), the GPU driver queues a struct vg_gpu_fault and calls the
	 * handler from its own fault thread. Ranges of one AS never overlap;
	 * off takes exactly a range that was put on. as_destroy drops them.
	 * A fault whose range is off by the time of its handler call, and
	 * one with no handler set, errors its channel(s) without a call.
	 * as_destroy also drops the AS's queued faults; a call already under
	 * way completes (f->as stays valid until the handler returns).
	 *
	 * set_fault_handler: one handler per GPU. The core installs
	 * it when the GPU is created and dispatches each fault to the
	 * registrant of its range (core/fault.c, vg_fault_register in vg.h),
	 * which also calls fault_range: nothing else calls these two on a
	 * GPU the core runs. It is called with
	 * no GPU driver lock held, may sleep and may call every op of this table
	 * (map, unmap, protect, tlb_flush, copies, mem_alloc), so it must not
	 * be called, and is not, from a thread the core waits for under
	 * gpu->lock. It returns 0 after fixing the mapping: the access is
	 * replayed (and faults again if it still finds no usable PTE); or a
	 * negative errno: the channel enters VGMEM_CHAN_ERR_VA with the address,
	 * exactly as an access outside any fault range does. A replayed
	 * channel that was stopped meanwhile stays stopped until
	 * channel_start (and one whose fault failed enters the error only
	 * then: a stopped channel's USERD does not change). Faults of one channel are serviced in order; the
	 * GPU driver may coalesce faults of several channels of one AS to one
	 * page into one call.
	 * set_fault_handler (also with NULL) waits, like free_irq, until no
	 * call of the handler it replaces is under way: then the old priv may
	 * be freed. So, unlike the other ops, it must be called with no lock
	 * that handler takes (not under gpu->lock if the handler takes it),
	 * and never from the handler itself.
	 */
	int (*map_prot)(void *b, struct vg_as *as, u64 va, u64 size,
			struct vg_mem *mem, u64 mem_off, u32 prot);
	int (*protect)(void *b, struct vg_as *as, u64 va, u64 size, u32 prot);
	int (*fault_range)(void *b, struct vg_as *as, u64 va, u64 size, bool on);
	void (*set_fault_handler)(void *b,
				  int (*handler)(void *priv,
						 const struct vg_gpu_fault *f),
				  void *priv);
};

#endif /* VGMEM_CORE_GPU_OPS_H */
