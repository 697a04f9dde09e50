/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The software GPU: a GPU driver (struct vg_gpu_ops) faithful enough that a
 * hardware GPU driver could replace it op for op. Portable: builds in the
 * kernel (vgmem_sim.ko) and in userspace (the userspace host).
 *
 *  - VRAM: an arena of vram_size bytes handed out in 4 KiB frames; host
 *    RAM: chunks allocated on demand up to host_limit.
 *  - One page table per address space: GPU VA -> (mem, offset), 4 KiB PTEs,
 *    40-bit VAs; a per-channel translation cache flushed by tlb_flush.
 *  - Channels: USERD page, GPFIFO ring and pushbuffers in guest memory,
 *    NVIDIA method headers, SET_OBJECT binding classes to subchannels, the
 *    copy engine class (LAUNCH_DMA between GPU VAs and guest memory), the
 *    compute class (built-in kernels), semaphores.
 *  - One engine thread per GPU polls every channel's USERD GP_PUT (busily
 *    for spin_us after work, longer where its sleeps cost more than that,
 *    then every poll_us); a
 *    channel's bad VA, bad method or malformed entry puts that channel in an
 *    error state (VGMEM_USERD_ERROR), nothing else.
 *  - A cost model: bytes touched per location and simulated device time
 *    from the VRAM and PCIe bandwidths; access counters per mem object.
 */
#ifndef VGMEM_SIM_H
#define VGMEM_SIM_H

#include "core/vg_gpu_ops.h"
#include "core/vg_rand.h"
#include <uapi/vgmem.h>

#define VG_SIM_VRAM_BW_DEFAULT	(320ull << 30)	/* bytes/s, GDDR-class */
#define VG_SIM_PCIE_BW_DEFAULT	(12ull << 30)	/* bytes/s, PCIe 3.0 x16 in practice */

struct vg_sim_config {
	u64 vram_size;		/* bytes, multiple of 4 KiB, > 0 */
	u64 host_limit;		/* bytes of host chunks; 0: unlimited */
	u64 vram_bw;		/* bytes/s; 0: default */
	u64 pcie_bw;		/* bytes/s; 0: default */
	u32 poll_us;		/* engine idle poll period; 0: 20 us */
	u32 spin_us;		/* busy polling after work before sleeping; 0: 200 us */
	/*
	 * Bytes of freed VRAM kept resident, zeroed in place, instead of
	 * given back to the OS; 0: give it all back. Only where the arena
	 * costs RAM as it is touched (userspace): a VM that frees and
	 * allocates again then faults nothing in, and the zeroer makes no
	 * system call (in a threaded process each also shoots down TLBs).
	 * The kernel's arena is resident anyway, so there it changes nothing.
	 */
	u64 vram_retain;
};

struct vg_sim;

int vg_sim_create(const struct vg_sim_config *cfg, struct vg_sim **out);
void vg_sim_destroy(struct vg_sim *sim);	/* all channels/AS/mem freed first */
const struct vg_gpu_ops *vg_sim_gpu_ops(void);	/* GPU driver pointer: the vg_sim */

/*
 * Semantics the ops table leaves open, as the sim implements them:
 *  - mem_alloc rounds up to 4 KiB; VRAM takes ceil(size / 4 KiB) frames, not
 *    necessarily contiguous (-ENOSPC if too few are free); host memory
 *    counts against host_limit (-ENOMEM). Fresh memory is always zeroed
 *    (freed VRAM frames in the background, or by mem_alloc if it needs
 *    frames not zeroed yet).
 *  - mem_free of a mem still mapped or used by a queued copy defers the
 *    release until the last PTE or copy lets go (never a use after free).
 *  - map over mapped pages replaces the PTEs (a PTE write). Every PTE
 *    change and tlb_flush invalidates the channels' TLBs.
 *  - sample_access: one count per access of a kernel, CE launch or
 *    semaphore to one 4 KiB page of the mem (a memset of n pages counts n,
 *    a gather counts every element); copy_submit copies count nothing.
 *  - copy_wait of a fence already collected returns 0; fence 0 or one never
 *    returned by copy_submit is -EINVAL. Results are kept for the newest
 *    1024 uncollected batches: a wait for an older one, whose result was
 *    dropped, returns -ENOENT (as does a second wait for a collected fence
 *    at or below the newest dropped one).
 *  - channel_create checks the descriptor (ring entries a power of two in
 *    VGMEM_GP_ENTRIES_MIN..MAX, 8-byte aligned, both ends of the ring
 *    readable through gmem) and returns -EINVAL otherwise.
 *  - Turns: the engine serves the channels round-robin, each turn at most
 *    one GPFIFO entry and a bounded amount of work; a longer launch resumes
 *    where it stopped on the channel's next turn, with identical results.
 *  - channel_stop preempts: it waits for at most the channel's current
 *    turn (a launch cut short keeps its progress and goes on once started)
 *    and returns -ETIMEDOUT (the channel left running) only if that turn
 *    lasts longer than the timeout: it blocks in a guest memory access, or
 *    the engine thread does not get the CPU.
 *  - Channel errors: see the USERD ERROR_* fields. GPFIFO: INFO is the
 *    entry index (or the bad GP_PUT), ADDR the entry's pushbuffer address;
 *    PUSHBUF: INFO the entry index, ADDR the unreadable address; METHOD and
 *    CLASS: INFO the method (the header dword for a bad header), ADDR the
 *    pushbuffer dword; VA: INFO the method, ADDR the first unmapped VA;
 *    GUEST_MEM: INFO the method, ADDR the guest-physical address; ARG: INFO
 *    the method, ADDR the offending VA. A packet may not continue into the
 *    next GPFIFO entry (METHOD error).
 */

/* Cost model readouts of one address space (cumulative). */
struct vg_sim_cost {
	u64 bytes_vram;		/* touched by kernels and the CE in VRAM */
	u64 bytes_host;		/* touched in relocated host chunks (over PCIe) */
	u64 bytes_guest;	/* CE traffic to and from guest memory */
	u64 device_ns;		/* simulated device time of all its work */
	u64 entries;		/* GPFIFO entries completed */
	u64 launches;		/* kernel launches and copies */
};
void vg_sim_as_cost(struct vg_sim *sim, struct vg_as *as, struct vg_sim_cost *out);

/* Device time of n bytes at a location, by the cost model. */
u64 vg_sim_cost_ns(const struct vg_sim *sim, enum vg_loc loc, u64 bytes);

/*
 * Fault injection for tests: make the n-th next op of a kind fail, once
 * (nth = 1: the very next one); nth <= 0 turns it off. mem_alloc counts
 * per location; VG_SIM_INJ_COPY counts copy_submit calls and the batch it
 * hits copies nothing and makes its copy_wait return -EIO.
 */
enum vg_sim_inject {
	VG_SIM_INJ_HOST_ALLOC,	/* mem_alloc(VG_LOC_HOST) returns -ENOMEM */
	VG_SIM_INJ_VRAM_ALLOC,	/* mem_alloc(VG_LOC_VRAM) returns -ENOSPC */
	VG_SIM_INJ_COPY,	/* copy_wait returns -EIO (nothing copied) */
	VG_SIM_INJ_MAP,		/* map returns -ENOMEM */
	VG_SIM_INJ_NR
};
void vg_sim_inject(struct vg_sim *sim, enum vg_sim_inject what, int nth);

/*
 * Replayable faults (protect, fault_range, set_fault_handler), as the sim
 * implements them:
 *  - map writes read-write PTEs (replacing a read-only one too); protect
 *    changes the mapped pages at once (it bumps the TLB generation, a
 *    tlb_flush is still owed by the contract). protect and fault_range
 *    return -EINVAL for an unaligned, empty, overflowing or beyond-2^40
 *    range or an unknown prot, changing nothing; fault_range on returns
 *    -EEXIST if the range overlaps one that is on, off -ENOENT if no range
 *    is exactly [va, va + size).
 *  - Every access faults: kernel reads and writes, CE reads and writes of
 *    the VA side (guest-physical sides never do), semaphore releases and
 *    acquires (host methods and the CE's). An acquire that faults stays
 *    parked on its semaphore: after the replay it checks it again.
 *  - A fault parks the channel with its method's progress kept (bytes,
 *    lines, elements, hash: what a budget split keeps), the replay goes on
 *    from there, so a launch that faulted N times computes exactly what
 *    an unfaulted one does. Each step translates all its pages before it
 *    writes, so a replay writes no byte a second time, except the first
 *    bytes of a result (CHECKSUM, STRIDED) that straddles a page end,
 *    rewritten with the same value.
 *  - Faults of one AS to one page with the same write/present bits that
 *    are still queued are coalesced: one handler call, every channel
 *    parked on it replays (or errors) with its result.
 *  - A fault whose range was turned off before its handler call errors
 *    its channels without calling the handler; so does a fault with no
 *    handler set (at once, like an access outside every range).
 *  - A channel whose handler failed enters VGMEM_CHAN_ERR_VA (INFO the
 *    method, ADDR the faulting address, not page aligned) on its next
 *    turn: a stopped channel when it is started again. A channel whose
 *    handler returned 0 replays on its next turn, never while stopped.
 *  - channel_destroy of a parked channel drops it from its fault (a fault
 *    no channel waits for any more is dropped unless its handler call is
 *    under way); as_destroy drops the AS's ranges and its queued faults.
 *    A handler call under way keeps its AS reference until it returns, so
 *    the handler may still use f->as (its memory stays valid).
 *  - set_fault_handler waits for a call of the handler it replaces to
 *    return (like free_irq); vg_sim_destroy waits for any call too.
 *  - A fault raised while a call for the same page is under way is a new
 *    call after it: the handler may find the page already fixed and must
 *    return 0 then.
 */
struct vg_sim_fault_stats {
	u64 raised;		/* accesses that faulted inside a fault range */
	u64 coalesced;		/* of those, joined to a queued fault of the page */
	u64 handled;		/* handler calls */
	u64 replayed;		/* channels resumed after the handler returned 0 */
	u64 failed;		/* channels put in VGMEM_CHAN_ERR_VA by a fault */
	u64 cancelled;		/* queued faults dropped by a destroy */
};
void vg_sim_fault_stats(struct vg_sim *sim, struct vg_sim_fault_stats *out);

/* Free VRAM bytes in the arena (tests). */
u64 vg_sim_vram_free(struct vg_sim *sim);
/*
 * Free VRAM bytes already zeroed by the background zeroer (tests); the
 * rest of the free VRAM is zeroed by whoever allocates it first.
 */
u64 vg_sim_vram_clean(struct vg_sim *sim);

/*
 * Page-table pages (L1 and leaf tables) of all address spaces (tests):
 * tables that map nothing are freed by unmap, so this stays bounded by what
 * is mapped.
 */
u64 vg_sim_pt_tables(struct vg_sim *sim);

/*
 * Engine turns that ended with work left because the turn's budget was
 * spent (tests: a big launch is split into many turns).
 */
u64 vg_sim_turns_split(struct vg_sim *sim);

/*
 * Tests: hold the engine thread at the start of its next turn of a
 * channel of as, as if the OS did not run it mid-turn (a CPU-starved
 * engine): that channel counts as running, so channel_stop of it waits,
 * and no channel at all runs until vg_sim_engine_release().
 * vg_sim_engine_held() tells whether the engine is held now. Release
 * before vg_sim_destroy().
 */
void vg_sim_engine_hold(struct vg_sim *sim, struct vg_as *as);
bool vg_sim_engine_held(struct vg_sim *sim);
void vg_sim_engine_release(struct vg_sim *sim);

/*
 * Debug read of GPU memory through an address space (tests only; takes the
 * AS lock like the engine does): 0 or -EFAULT if any byte is unmapped.
 */
int vg_sim_read_va(struct vg_sim *sim, struct vg_as *as, u64 va, void *buf,
		   u64 len);

/*
 * The built-in kernels (enum vgmem_kernel), exactly, so the guest library can
 * compute the same results on the CPU. All values are little endian; "VA
 * range" means [va, va + bytes) must not overflow or end past 2^40 and every
 * page of it must be mapped; a zero size is an ARG error.
 *
 *  MEMSET(dst, bytes, value): byte k of the range = byte (k & 3) of value
 *    (so any dst alignment and size works; aligned it is a u32 fill).
 *  VECADD(a, b, c, n): c[i] = a[i] + b[i] (u32, wrapping), i < n; a, b and c
 *    must be 4-byte aligned. Element i is read before c[i] is written.
 *  CHECKSUM(src, bytes, result): FNV-1a 64 over the bytes (VGMEM_FNV1A_OFFSET,
 *    VGMEM_FNV1A_PRIME: h ^= byte; h *= prime), the u64 written to result
 *    (any alignment).
 *  STRIDED(src, bytes, stride, result): the u64 sum (wrapping) of the u32
 *    words at src + k * stride for every k with k * stride + 4 <= bytes;
 *    src 4-aligned, stride a non-zero multiple of 4, bytes >= 4.
 *  GATHER(src, bytes, dst, n, seed): nwords = bytes / 4 (1 ... 2^32), src
 *    and dst 4-aligned; dst[i] = src[vg_sim_gather_index(&state, nwords)]
 *    for i = 0 ... n - 1, state starting at seed (zero-extended).
 *  FILL_PATTERN(dst, bytes, seed): byte k of the range = byte (k & 3) of
 *    vgmem_pattern_word(seed, k >> 2) (include/uapi/vgmem.h).
 *
 * Bad arguments (unknown kernel, zero size, misalignment, overflowing
 * ranges) put the channel in VGMEM_CHAN_ERR_ARG, ERROR_ADDR = the offending
 * VA (0 for an unknown kernel); unmapped pages are VGMEM_CHAN_ERR_VA with
 * the first unmapped address. ERROR_INFO is the method (VGMEM_CP_LAUNCH).
 */
/*
 * The same splitmix64 step as the core's generator (vg_rand.h), then
 * Lemire's multiply-shift onto [0, nwords).
 */
static inline u64 vg_sim_gather_index(u64 *state, u64 nwords)
{
	return ((vg_splitmix64(state) >> 32) * nwords) >> 32;
}

#endif /* VGMEM_SIM_H */
