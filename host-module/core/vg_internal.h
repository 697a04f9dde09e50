/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The core's own structures. Not for anyone outside core/.
 *
 * Lock rules (asserted with lockdep_assert_held):
 *  - gpu->lock (mutex) protects every field of the gpu, its vms, bos and
 *    chunks, except those listed under a channel's map_lock. It is held
 *    across a whole reduce-and-relocate and across one return pass, so at
 *    most one relocation runs per GPU (GPUswap suspends one VM at a time).
 *  - ch->map_lock (spinlock) protects ch->cur and the contents of the shadow
 *    page: the guest's USERD accesses and the suspend/resume swaps.
 *  - Order: gpu->lock, then ch->map_lock. GPU driver ops are called with
 *    gpu->lock held; the GPU driver's engine thread never takes either lock,
 *    which is why the relocation may wait for it to stop a channel.
 *  - No wait under gpu->lock depends on a guest: a relocation preempts its
 *    victim's channels (channel_stop, one engine turn, bounded by
 *    VG_STOP_TIMEOUT_NS) instead of waiting for their work to finish, and
 *    a victim that does not stop in time is skipped (vm->drain_retry_ns)
 *    rather than waited for.
 *  - gpu->cache_lock (mutex) protects the file cache's reclaim hook
 *    (cache_reclaim, cache_priv) and is held across every call of it, so
 *    vg_gpu_set_cache_reclaim() returns only once no call is under way
 *    and the old priv may be freed. Order: cache_lock, then the cache's
 *    own lock (lrc->lock), then gpu->lock. Never taken under gpu->lock:
 *    the core calls the hook before it takes gpu->lock (bo.c, return.c).
 */
#ifndef VGMEM_CORE_INTERNAL_H
#define VGMEM_CORE_INTERNAL_H

#include "vg.h"
#include "vg_rand.h"
#include "vg_va.h"

struct vg_bo;
struct vg_vm;
struct vg_red_vm;

/*
 * One VM in the standing heap (struct vg_gpu, vmh): its key copied next to
 * it, so the heap compares without chasing the VM, and its slot, which
 * names the VM (gpu->vmh_vm), breaks ties (slots follow creation order)
 * and holds its index (gpu->vmh_pos). A sift down a heap of 1000 VMs
 * moves ten entries: writing each one's index into its VM was ten cache
 * misses, and 16-byte entries keep the heap in half the lines.
 */
struct vg_vmh_ent {
	s64 key;		/* vm->resident - vg_vm_entitlement(vm) */
	u32 slot;		/* vm->vmh_slot */
};

/* Heap order: the higher key first, ties to the older VM (lower slot). */
static inline bool vg_vmh_above(const struct vg_vmh_ent *a,
				const struct vg_vmh_ent *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	return a->slot < b->slot;
}

/* ---- accounting (bo.c, vm.c, account.c) -------------------------------- */

struct vg_chunk {
	struct vg_bo *bo;
	u32 index;		/* within bo->chunks */
	u32 slot;		/* index in vm->res_vec while resident */
	u64 size;		/* chunk_size, or less for the tail */
	enum vg_loc loc;
	u32 touched;		/* gpu->heat_clock when last seen accessed (COLD) */
	struct vg_mem *mem;	/* NULL only while a new BO is being placed */
	struct list_head node;	/* vm->resident (in placement order) or vm->relocated */
	u64 placed_seq;		/* gpu->seq when it last got into VRAM (LRA) */
	u64 heat;		/* sampled accesses, decayed (COLD) */

	/* Relocation state, valid while marked. */
	bool marked;
	/*
	 * COLD: sampling rounds in a row that saw it accessed in host RAM
	 * (return.c), saturating; 0 when it leaves VRAM (account.c). In the
	 * padding after marked: struct vg_chunk does not grow.
	 */
	u8 host_streak;
	/*
	 * COLD: the gap, in sampling rounds, between the last two rounds
	 * that saw it accessed with an idle spell in between (a checkpoint
	 * written every n-th iteration), 0 while none was seen; saturating
	 * (vg_chunk_seen(), vg_chunk_expected()). Padding too.
	 */
	u16 period;
	/* COLD: that access after the idle spell touched about all of it. */
	bool period_whole;
	struct list_head mark_node;	/* vm->marked */
	struct vg_mem *new_mem;		/* destination during a relocation */

	/*
	 * A pre-copy migration's view of the chunk (mig_track.c; gpu->lock),
	 * both false when none runs. mig_clean: the destination holds the
	 * chunk's current bytes and the chunk is mapped read-only, so the
	 * GPU's next write to it faults and clears this (every mapping of it
	 * goes through vg_chunk_map()). mig_sent: its bytes went to the
	 * destination once, so even a chunk of zeroes must be sent again
	 * (the destination's copy may hold older bytes).
	 */
	bool mig_clean;
	bool mig_sent;
};

struct vg_bo {
	struct vg_vm *vm;
	u64 va;
	u64 size;
	u32 nr_chunks;
	struct list_head node;	/* vm->bos, sorted by va */
	struct vg_va_node va_node;	/* vm->va: [va, va + size) */
	/*
	 * Pre-copy (mig_track.c; gpu->lock): the destination has a BO record
	 * of it; its range's fault registration while a chunk of it may be
	 * read-only (NULL otherwise).
	 */
	bool mig_announced;
	struct vg_fault_reg *mig_reg;
	struct vg_chunk chunks[];
};

struct vg_vm {
	struct vg_gpu *gpu;
	struct list_head node;		/* gpu->vms */
	/*
	 * What the reducer reads of every VM on each call, together so the
	 * O(VMs) pass touches few cache lines (reducer.c).
	 */
	u64 entitlement;		/* 0: equal share (vg_vm_entitlement()) */
	u64 resident;			/* bytes of chunks in VRAM */
	u64 order;			/* creation order: reducer tie-break (vm.c) */
	u32 res_nr, res_cap;
	u32 vmh_slot;			/* gpu->vmh_pos[vmh_slot]: its entry in gpu->vmh while vmh_valid */
	/* Chunks chosen by the reducer or the return worker (relocate.c). */
	struct list_head marked;
	u64 marked_bytes;
	/*
	 * On gpu->marked_vms exactly while vm->marked is not empty
	 * (relocate.c): unhashed is off it. reloc_node orders the VMs of
	 * one vg_relocate_marked() call (list_sort()).
	 */
	struct hlist_node marked_node;
	struct list_head reloc_node;

	/* For logs: whole for an mdev's UUID (36 characters), which names it. */
	char name[48];
	u64 quota;			/* 0: unlimited */
	u64 profile;			/* 0: none (struct vg_vm_config) */
	u64 allocated;			/* bytes in live BOs */
	u64 relocated;			/* bytes of chunks in host RAM */
	u32 nr_chunks;			/* chunks of live BOs: bounds res_nr (account.c) */
	struct list_head bos;
	struct vg_va_tree va;		/* the BOs by address, holes (bo.c, va.c) */
	struct list_head resident_list;	/* placement order: head = least recent */
	struct list_head relocated_list;
	struct vg_chunk **res_vec;	/* resident chunks, for O(1) random picks;
					 * res_nr used, res_cap allocated */

	struct vg_as *as;
	struct vg_guest_mem gmem;
	struct vg_vm_platform platform;

	struct list_head chans;		/* struct vg_chan.node */
	u32 nr_chans;

	bool suspended;			/* its channels point at their shadows */
	/*
	 * Frozen for a migration (vg_vm_freeze, gpu->lock): suspended and
	 * drained with no lock held until vg_vm_thaw. A relocation of a
	 * frozen VM copies and remaps without its own suspension, so the
	 * channels stay stopped.
	 */
	bool frozen;
	/*
	 * A drain that failed (a channel did not stop in VG_STOP_TIMEOUT_NS)
	 * keeps the VM out of the reducer's and the return worker's choices
	 * until drain_retry_ns (ktime_get_ns()); drain_fails counts failures
	 * in a row (the back-off doubles with each) and a drain that works
	 * resets it. gpu->lock, like the rest (chan.c).
	 */
	u64 drain_retry_ns;
	u32 drain_fails;
	/*
	 * Its file service (vg_vm_attach_files(): the LRC file cache's
	 * context), or NULL: set and cleared under gpu->lock;
	 * vg_vm_destroy() tears it down first.
	 */
	const struct vg_file_ops *files_ops;
	void *files_ctx;
	/*
	 * Bytes of VRAM in the file cache's private replicas of this VM (the
	 * pages it wrote), part of gpu->cache_used (gpu->lock; the cache
	 * keeps it, account.c vg_gpu_cache_add/sub). Not charged against
	 * its quota or entitlement: shown, so that what a VM costs the GPU
	 * is visible (vg_vm_cache_private()).
	 */
	u64 cache_private;
	/*
	 * The pre-copy migration tracking the GPU's writes to this VM's BOs
	 * (mig_track.c), or NULL; set and cleared under gpu->lock.
	 */
	struct vg_mig_track *mig_track;
	struct vgmem_vm_stats stats;	/* cumulative parts; sizes filled on read */
	atomic64_t faults;		/* channel errors: the engine thread adds, no lock */
};

/* ---- channels and relocation (chan.c, relocate.c, return.c) -------------- */

struct vg_chan {
	struct vg_vm *vm;
	u32 id;
	struct list_head node;		/* vm->chans */
	struct vg_bchan *bchan;
	u64 gpfifo_gpa;			/* its ring in guest memory */
	u32 entries;
	void *real;			/* the GPU driver's USERD page, polled by the GPU */
	void *shadow;			/* GPUswap's shadow copy, VGMEM_USERD_SIZE */
	spinlock_t map_lock;
	void *cur;			/* what the guest's mapping points at */
	atomic_t error;			/* last enum vgmem_chan_error seen by fault_cb */
	/*
	 * GP_PUT as the last suspend/resume swap wrote it (map_lock): after
	 * the platform zap, a value that differs shows a guest store that
	 * went to the old page through a mapping not yet zapped (chan.c).
	 */
	u32 swap_put;
	/*
	 * channel_stop succeeded and channel_start is still due (gpu->lock):
	 * set by vg_vm_drain, cleared by vg_vm_resume or a drain that failed.
	 */
	bool stopped;
};

/*
 * The GPU's replayable-fault dispatch (fault.c): the one GPU driver fault
 * handler, installed by vg_gpu_create() and removed by vg_gpu_destroy(),
 * finds the registrant of each fault's range here.
 *  - lock (mutex) protects ases, every registration's index node and
 *    dead flag, the counters, and serialises the GPU driver's fault_range
 *    calls. It is innermost: taken under gpu->lock or a registrant's own
 *    lock, and never held across a registrant's handler, so a handler may
 *    take any lock and register or unregister (asynchronously) ranges.
 *  - ases: one struct vg_fault_as per address space with ranges, keyed by
 *    the AS pointer in a vg_va_tree (a red-black tree: O(log n) lookups); each
 *    holds its ranges in its own vg_va_tree. A fault costs two O(log n)
 *    lookups, whatever the number of VMs or ranges.
 *  - wq: woken when a retired registration's last running call returns
 *    (vg_fault_unregister waits on it).
 */
struct vg_fault_disp {
	struct mutex lock;
	struct vg_va_tree ases;
	wait_queue_head_t wq;
	bool installed;			/* the GPU driver has set_fault_handler */
	u32 nr_ranges;
	u64 dispatched;
	u64 unclaimed;
};

struct vg_gpu {
	const struct vg_gpu_ops *ops;
	void *drv;			/* the GPU driver's own, passed to each op */
	char name[32];
	struct mutex lock;

	u64 vram_size;
	u64 chunk_size;
	u32 chunk_shift;
	enum vg_chunk_policy policy;
	u64 host_budget;

	struct list_head vms;
	u32 nr_vms;
	u64 vram_used;			/* sum of vm->resident */
	/*
	 * VRAM the LRC file cache holds for its replicas (core/lrc/evict.c
	 * through vg_gpu_cache_add/sub). vram_size stays the GPU's VRAM, so
	 * entitlements and equal shares never move with the cache; free VRAM
	 * is vram_size - vram_used - cache_used (vg_gpu_vram_free()), and
	 * vram_used + cache_used <= vram_size (vg_gpu_check()).
	 */
	u64 cache_used;
	u64 host_used;			/* sum of vm->relocated */
	u64 seq;			/* placement counter for LRA */
	u64 ent_explicit;		/* sum of explicit vm->entitlement (vm.c) */
	u32 nr_ent_equal;		/* VMs with vm->entitlement == 0 */
	u64 next_vm_order;		/* vm->order of the next VM */
	struct vg_rand rand;

	/*
	 * The standing heap (vmheap.c): every VM, as a binary max-heap by
	 * how far its resident bytes are above its entitlement, ties to the
	 * VM created first, kept between reductions so that one does not
	 * rank every VM again. Under gpu->lock, like the rest. Invariants
	 * while vmh_valid (vg_vmh_check(), from vg_gpu_check()):
	 *  - vmh[0, vmh_n) holds each VM of gpu->vms once, vmh_n == nr_vms;
	 *    a VM's slot (vm->vmh_slot) is its rank in gpu->vms when the
	 *    heap was last built, so slots order VMs as vm->order does;
	 *    vmh_vm[slot] is the VM and vmh_pos[slot] its entry's index;
	 *  - vmh[i].key == vm->resident - vg_vm_entitlement(vm);
	 *  - no entry ranks above its parent (vg_vmh_above()).
	 * account.c and relocate.c keep it so whenever vm->resident
	 * changes (vg_vmh_moved(), O(log VMs)). A VM created or an
	 * entitlement set moves the equal share of every VM without an
	 * explicit entitlement: when the other VMs all have one, or none
	 * has, their order holds and vm.c moves only the VM concerned
	 * (vg_vmh_added(), vg_vmh_ent_set()); otherwise, and when a VM is
	 * destroyed, vmh_valid is cleared and the next reduction rebuilds
	 * it in one O(VMs) pass; while it is clear the entries are not read
	 * (they may name destroyed VMs).
	 */
	struct vg_vmh_ent *vmh;
	struct vg_vm **vmh_vm;		/* by slot: the VM */
	u32 *vmh_pos;			/* by slot: its entry's index in vmh */
	u32 vmh_n;
	bool vmh_valid;
	/*
	 * Reducer scratch, red_cap entries each (>= nr_vms), kept between
	 * calls: per-call VM state, the call's victim heap, and the
	 * frontier of its walk down the standing heap (reducer.c).
	 */
	struct vg_red_vm *red_st;
	struct vg_red_vm **red_heap;
	u32 *red_front;
	u32 red_cap;
	/*
	 * The VMs with marked chunks, through vm->marked_node, so that
	 * relocating them and checking for marks need not walk every VM
	 * (relocate.c; empty: none).
	 */
	struct hlist_head marked_vms;
	/* Copy list of small relocations, kept between them (relocate.c). */
	struct vg_copy *reloc_copies;

	struct vg_gpu_stats stats;	/* cumulative parts */

	/* Return worker (return.c). */
	struct task_struct *return_task;
	wait_queue_head_t return_wq;
	u32 return_ms;			/* set under lock (WRITE_ONCE), read without */
	bool stopping;
	/*
	 * Run a pass now (vg_return_kick, the one way to wake the worker for
	 * a pass): a failed multi-VM relocation left chunks in host RAM that
	 * no allocation got. Freed VRAM waits for the periodic pass. The
	 * worker's wait ends only on this, a new return_ms or stopping (a
	 * bare wake_up() of return_wq does nothing). Read without the lock.
	 */
	bool return_kick;
	u32 return_ticks;		/* worker passes, for the heat cadence */
	/*
	 * Ageing rounds of heat (COLD, vg_sample_heat()): a chunk's touched
	 * is the round that last saw it accessed, so how long a chunk has
	 * been idle is known whatever its heat (reducer.c, return.c).
	 */
	u32 heat_clock;

	/*
	 * The file cache's reclaim hook (vg_gpu_set_cache_reclaim(), under
	 * cache_lock): frees cache VRAM before the core relocates any VM's
	 * chunks for room (vg_gpu_cache_reclaim()). NULL: no cache.
	 */
	struct mutex cache_lock;
	u64 (*cache_reclaim)(void *priv, u64 bytes);
	void *cache_priv;

	/* Event hooks (vg.h), set at creation, called under lock. */
	const struct vg_gpu_events *events;
	void *events_priv;

	/* Replayable faults: the GPU driver's handler and the registry (fault.c). */
	struct vg_fault_disp fault;
};

/*
 * vm->resident just changed by delta bytes: its entry in the standing
 * heap moves (vmheap.c). Once per chunk placed or removed (once per VM
 * relocated: vg_chunk_move_batched()), so inline and without its own
 * lockdep check: its callers in account.c and relocate.c hold gpu->lock
 * and assert it.
 */
void vg_vmh_fix(struct vg_gpu *gpu, u32 i, s64 delta);
static inline void vg_vmh_moved(struct vg_vm *vm, s64 delta)
{
	struct vg_gpu *gpu = vm->gpu;

	if (gpu->vmh_valid)
		vg_vmh_fix(gpu, gpu->vmh_pos[vm->vmh_slot], delta);
}

/* Event hooks: gpu->lock held (vg.h, struct vg_gpu_events). */
static inline void vg_event_pressure(struct vg_vm *req, u64 need)
{
	struct vg_gpu *gpu = req->gpu;

	lockdep_assert_held(&gpu->lock);
	if (gpu->events && gpu->events->pressure)
		gpu->events->pressure(gpu->events_priv, req, need);
}

static inline void vg_event_relocated(struct vg_vm *vm, enum vg_loc to,
				      u32 chunks, u64 bytes, u64 suspend_ns)
{
	struct vg_gpu *gpu = vm->gpu;

	lockdep_assert_held(&gpu->lock);
	if (gpu->events && gpu->events->relocated)
		gpu->events->relocated(gpu->events_priv, vm, to, chunks, bytes,
				       suspend_ns);
}

/* account.c: the only code that changes a chunk's location or the totals. */
u64 vg_vm_entitlement(const struct vg_vm *vm);	/* gpu->lock held */
/* The entitlement of every VM without an explicit one; gpu->lock held. */
u64 vg_gpu_equal_share(const struct vg_gpu *gpu);
void vg_chunk_add_resident(struct vg_chunk *c, struct vg_mem *mem);
void vg_chunk_add_relocated(struct vg_chunk *c, struct vg_mem *mem);
void vg_chunk_remove(struct vg_chunk *c);		/* from either list */
/* Move between lists after a relocation copied it; sets c->mem. */
void vg_chunk_move(struct vg_chunk *c, enum vg_loc to, struct vg_mem *mem);
/*
 * vg_chunk_move() leaving the VM's key in the standing heap to the
 * caller, who moves it once for all the chunks of the VM it moves
 * (vg_vmh_moved(), the bytes moved into VRAM minus those out), before
 * anything reads it: one sift per VM relocated instead of one per chunk.
 */
void vg_chunk_move_batched(struct vg_chunk *c, enum vg_loc to,
			   struct vg_mem *mem);
void vg_hist_add(u64 hist[VGMEM_HIST_BUCKETS], u64 ns);
/*
 * Make room in vm->res_vec for more chunks, so that later moves into VRAM
 * never allocate (bo.c calls it after placing a BO, before accounting
 * it, and undoes the placement if it fails). 0 or -ENOMEM.
 */
int vg_vm_reserve_chunks(struct vg_vm *vm, u32 more);
/* Add or remove a BO's size and chunk count to the VM's totals. */
void vg_vm_account_bo(struct vg_vm *vm, const struct vg_bo *bo, bool add);

/*
 * account.c: the file cache's VRAM (gpu->lock held). Free VRAM for BOs,
 * relocations and the cache alike: vram_size - vram_used - cache_used.
 */
u64 vg_gpu_vram_free(const struct vg_gpu *gpu);
/*
 * Account bytes of VRAM the cache took (its caller allocated them from
 * free VRAM) or gave back; vm, or NULL, is the VM whose private replica
 * it is (vm->cache_private).
 */
void vg_gpu_cache_add(struct vg_gpu *gpu, struct vg_vm *vm, u64 bytes);
void vg_gpu_cache_sub(struct vg_gpu *gpu, struct vg_vm *vm, u64 bytes);
/*
 * gpu.c: ask the file cache to free bytes of its VRAM (its least recently
 * allocated unpinned replicas) and wait for it; returns the bytes freed
 * (0 without a cache). Called WITHOUT gpu->lock: the hook takes the
 * cache's lock, which orders before it.
 */
u64 vg_gpu_cache_reclaim(struct vg_gpu *gpu, u64 bytes);

/* bo.c */
struct vg_bo *vg_bo_find(struct vg_vm *vm, u64 va);	/* BO starting at va */
struct vg_bo *vg_bo_from(struct vg_vm *vm, u64 va);	/* first starting at or after va: O(log n) */
void vg_bo_free_locked(struct vg_bo *bo);	/* unmap, flush, free, account */

/*
 * A reduction's decision (reducer.c), made and carried out under one hold
 * of gpu->lock. The resident chunks it chose are marked on their VMs
 * (vm->marked, each such VM on gpu->marked_vms); the chunks of the new BO
 * it chose have loc VG_LOC_HOST (bo.c allocates them in host RAM
 * directly). The plan sums both, so the host budget is checked once
 * (vg_plan_check) before anything moves; then one call carries it out
 * (vg_plan_run) or drops it (vg_plan_cancel), either way leaving no mark.
 */
struct vg_plan {
	struct vg_bo *newbo;	/* the BO being placed, or NULL */
	u64 move_bytes;		/* marked chunks, VRAM to host RAM */
	u64 new_host_bytes;	/* the new BO's chunks placed in host RAM */
	u32 new_host_chunks;	/* those are its last ones */
};

/* Host RAM the plan takes: what moves out plus what is placed there. */
static inline u64 vg_plan_host_bytes(const struct vg_plan *p)
{
	return p->move_bytes + p->new_host_bytes;
}

/*
 * reducer.c: choose chunks until need bytes of VRAM are accounted for, and
 * say so in *plan (filled in full, also when nothing is needed). Returns 0,
 * or -ENOMEM when even all candidates are not enough (nothing chosen
 * then, *plan empty).
 */
int vg_reduce(struct vg_gpu *gpu, struct vg_vm *req, struct vg_bo *newbo,
	      u64 need, struct vg_plan *plan);
/*
 * The same, with now the clock against which VMs deferred after a failed
 * drain are left out (vg_vm_drain_deferred()): their chunks are not
 * candidates (the requester's new-BO chunks always are). vg_reduce()
 * uses ktime_get_ns(); an allocation that chooses again after a failed
 * drain passes the time it started, so every VM that failed during it
 * stays out until it is done and its retries end.
 */
int vg_reduce_at(struct vg_gpu *gpu, struct vg_vm *req, struct vg_bo *newbo,
		 u64 need, u64 now, struct vg_plan *plan);
/*
 * COLD only (0 otherwise): mark, coldest first, chunks that no sample has
 * seen accessed for two ageing rounds, up to need bytes: of VMs above
 * their entitlement first, then of VMs with an equal share
 * (vm->entitlement 0) however far below it; never a chunk of a VM at or
 * below an explicit entitlement. For the return worker's free-VRAM
 * reserve (return.c).
 * Returns the bytes marked (maybe fewer than need, maybe 0; *plan says the
 * same) or -errno (nothing marked then).
 */
s64 vg_reduce_cold(struct vg_gpu *gpu, u64 need, struct vg_plan *plan);
/*
 * COLD: a chunk's size in the units heat is compared in (4 KiB: about
 * one sampled access when a kernel reads or writes each of its bytes).
 */
static inline u64 vg_chunk_heat_units(const struct vg_chunk *c)
{
	return max_t(u64, c->size >> 12, 1);
}

/*
 * COLD: a sample saw n accesses to c in round now (gpu->heat_clock). A
 * gap of two rounds or more since the last access is an idle spell: its
 * length is the chunk's period (the last one, so a period that changes is
 * followed), and whether that access used about all of the chunk (an
 * access per heat unit, as vg_return_owed_now() asks) is kept with it.
 */
static inline void vg_chunk_seen(struct vg_chunk *c, u32 now, u64 n)
{
	u32 gap = now - c->touched;

	if (c->touched && gap >= 2) {
		c->period = gap < U16_MAX ? gap : U16_MAX;
		c->period_whole = n >= vg_chunk_heat_units(c);
	}
	c->touched = now;
}

/*
 * COLD: is c expected to be used whole again, after an idle spell, as it
 * was the last time (a checkpoint written every n-th iteration)? It has
 * a period, its last use after a spell covered about all of it, and the
 * period has not run out by more than a round: a prediction that failed
 * is dropped. The reserve leaves such a chunk in VRAM (reducer.c) and
 * the return worker brings it back the round before it is due (return.c):
 * idle most of the time, it is needed whole at once, and over PCIe that
 * use is one slow iteration of its VM every period.
 */
static inline bool vg_chunk_expected(const struct vg_chunk *c, u32 now)
{
	return c->period && c->period_whole &&
	       now - c->touched <= (u32)c->period + 1;
}

/*
 * COLD: does vm hold more than the profile it was sold (a burst past it,
 * struct vg_vm_config)? What a VM holds beyond its profile is best
 * effort, the promise a profile makes (a static partition would refuse
 * it): while a VM is past its profile, its memory, in use or not, leaves
 * VRAM before the idle memory of VMs within theirs, which they were sold
 * and will use again (a checkpoint between two writes, a model between
 * two bursts), and it comes back only into room beyond the reserve
 * (reducer.c, return.c). A VM at or below an explicit entitlement is
 * still never a victim: the profile orders the victims, it adds none
 * below their entitlement.
 */
static inline bool vg_vm_past_profile(const struct vg_vm *vm)
{
	return vm->profile && vm->allocated > vm->profile;
}

/* COLD: ... and due in the next round (or overdue by at most one). */
static inline bool vg_chunk_due(const struct vg_chunk *c, u32 now)
{
	return vg_chunk_expected(c, now) && now + 1 >= c->touched + c->period;
}
/*
 * Room for gpu->nr_vms in the reducer's scratch and the standing heap,
 * which keeps its entries (0 or -ENOMEM); gpu->lock held.
 */
int vg_red_reserve(struct vg_gpu *gpu);
/*
 * Free the reducer's and the relocation's scratch arrays (vm.c, when the
 * last VM goes).
 */
void vg_red_free(struct vg_gpu *gpu);
/*
 * vg_gpu_check()'s parts: a failed condition logs and makes the function
 * holding gpu (struct vg_gpu *) return -EIO.
 */
#define VG_CHECK(cond, fmt, ...)					\
	do {								\
		if (unlikely(!(cond))) {				\
			pr_err("vgmem: %s: check failed: " fmt "\n",	\
			       gpu->name, ##__VA_ARGS__);		\
			return -EIO;					\
		}							\
	} while (0)

/*
 * The standing heap (struct vg_gpu, vmh; vg_vmh_moved() above), from
 * vm.c, gpu->lock held. vg_vmh_added(): vm was just put at the tail of
 * gpu->vms and counted (no entitlement yet), old_equal the equal share
 * before. vg_vmh_ent_set(): vm's entitlement just changed from old_ent
 * (0: the equal share old_equal). Each moves what moved, or invalidates
 * the heap when the others' order may have changed. vg_vmh_invalidate():
 * every VM's standing may have moved at once (a VM destroyed), so the
 * next reduction rebuilds it. vg_vmh_check(): its invariants, 0 or -EIO
 * (vg_gpu_check()).
 */
void vg_vmh_added(struct vg_gpu *gpu, struct vg_vm *vm, u64 old_equal);
void vg_vmh_ent_set(struct vg_gpu *gpu, struct vg_vm *vm, u64 old_ent,
		    u64 old_equal);
void vg_vmh_invalidate(struct vg_gpu *gpu);
int vg_vmh_check(struct vg_gpu *gpu);
/* Every VM's key anew and Floyd's O(VMs) construction (vmheap.c). */
void vg_vmh_build(struct vg_gpu *gpu);
/*
 * Refresh chunk heat from the GPU driver's access sampling (COLD, heat.c):
 * every VM's resident chunks, ageing the heat (the return worker's
 * cadence); one VM's resident chunks, adding what was sampled without
 * ageing (the reducer); every VM's relocated chunks, ageing them in the
 * round vg_sample_heat() started (the return worker, right after it).
 */
void vg_sample_heat(struct vg_gpu *gpu);
void vg_sample_heat_vm(struct vg_vm *vm);
void vg_sample_heat_relocated(struct vg_gpu *gpu);

/*
 * Loops over every chunk or VM under gpu->lock (a relocation, a return
 * pass, a heat sample: a million chunks) give the CPU away every so often,
 * as the kernel wants of long loops where sleeping is allowed.
 */
#define VG_RESCHED_EVERY	256u
static inline void vg_resched_every(u32 *n)
{
	if (!(++*n % VG_RESCHED_EVERY))
		cond_resched();
}

/* chan.c */
#define VG_VM_MAX_CHANS		VGMEM_MAX_CHANNELS	/* per VM: the USERD BAR has room for this many */
void vg_chan_destroy_locked(struct vg_chan *ch);	/* gpu->lock held */
void vg_vm_suspend(struct vg_vm *vm);	/* swap in shadows, zap */
void vg_vm_resume(struct vg_vm *vm);	/* replay shadows, swap back, zap */
/*
 * Stop (preempt) every channel so none runs again before vg_vm_resume(),
 * waiting at most VG_STOP_TIMEOUT_NS for the whole VM. On failure
 * (-ETIMEDOUT) no channel is left stopped and the VM is deferred: see
 * vg_vm_drain_deferred().
 */
int vg_vm_drain(struct vg_vm *vm);
/* chan.c: a channel at a given id (migration), or the lowest free one. */
#define VG_CHAN_ANY_ID		U32_MAX
int vg_chan_create_locked(struct vg_vm *vm, u64 gpfifo_gpa, u32 entries,
			  u32 id, struct vg_chan **out);
/*
 * Is vm still kept out of victim choice at time now after a failed drain?
 * gpu->lock held.
 */
static inline bool vg_vm_drain_deferred(const struct vg_vm *vm, u64 now)
{
	return vm->drain_fails && now < vm->drain_retry_ns;
}

/*
 * relocate.c: move every chunk on vm->marked to loc, suspending the VM
 * once. Atomic per VM: on failure nothing moved (except chunks whose
 * mapping could not even be restored: those are committed to loc and
 * counted, and the call returns -EIO), the marks are cleared,
 * gpu->stats.reloc_failures counts it, returns -ENOMEM (or the GPU driver's
 * error) and logs why (rate-limited). -EAGAIN: the VM's channels did not
 * stop in time; it is deferred (vg_vm_drain_deferred()), and the caller
 * chooses another victim rather than fail.
 */
int vg_relocate_vm(struct vg_vm *vm, enum vg_loc to);
/*
 * Every VM with marked chunks, in turn, stopping at the first failure
 * (the allocation path: the room it needed cannot be made), except a VM
 * that only could not be drained (-EAGAIN): the others still move, and
 * the call returns -EAGAIN so that the caller chooses again. Not atomic
 * across VMs: VMs relocated before a failure keep their new places (each
 * is consistent) and the return worker is kicked to bring them back; the
 * others' marks are cleared. Returns 0 or the first error.
 */
int vg_relocate_marked(struct vg_gpu *gpu, enum vg_loc to);
/*
 * A plan (vg_reduce()) against the host budget: -ENOMEM if what it puts in
 * host RAM does not fit what is left of it (nothing changed; the caller
 * cancels), else 0. The one budget check of a reduction: relocation
 * trusts it.
 */
int vg_plan_check(struct vg_gpu *gpu, const struct vg_plan *plan);
/*
 * Carry a checked plan out: its marked chunks to host RAM
 * (vg_relocate_marked()). On failure the marks are gone and so is the new
 * BO's choice of host chunks (back to VG_LOC_VRAM); errors as
 * vg_relocate_marked().
 */
int vg_plan_run(struct vg_gpu *gpu, struct vg_plan *plan);
/* Drop a plan that will not run: no marks, the new BO's chunks for VRAM. */
void vg_plan_cancel(struct vg_gpu *gpu, struct vg_plan *plan);
/* Wake the return worker for a pass now (any context holding gpu->lock). */
void vg_return_kick(struct vg_gpu *gpu);
void vg_unmark_all(struct vg_vm *vm);
/* vg_unmark_all() of every VM with marks; gpu->lock held. */
void vg_unmark_gpu(struct vg_gpu *gpu);
/* Is a chunk marked anywhere on the GPU? O(1); gpu->lock held. */
bool vg_gpu_has_marks(struct vg_gpu *gpu);
/* Free the relocation's scratch (vg_red_free()); gpu->lock held. */
void vg_reloc_free(struct vg_gpu *gpu);
/*
 * Put c on (take it off) its VM's marked list and keep vm->marked_bytes
 * in step; the reducer and the return worker mark only through these.
 * vg_vm_mark() is vg_chunk_mark() given c's VM (c->bo->vm), for a caller
 * that took c from that VM's own lists and need not wait for c's BO to be
 * read (the reducer: a miss per chunk chosen, with a million chunks).
 */
void vg_chunk_mark(struct vg_chunk *c);
void vg_vm_mark(struct vg_vm *vm, struct vg_chunk *c);
void vg_chunk_unmark(struct vg_chunk *c);
/* GPU VA of the first byte of c. */
u64 vg_chunk_va(const struct vg_chunk *c);

/*
 * fault.c: install the GPU driver's fault handler (if the GPU driver has
 * replayable faults) at creation; remove it at destruction, which waits
 * for a call under way, so never under a lock a registrant's handler
 * takes (no lock at all: vg_gpu_destroy calls it first). Every range must
 * be unregistered by then.
 */
void vg_fault_init(struct vg_gpu *gpu);
void vg_fault_fini(struct vg_gpu *gpu);

/*
 * mig_track.c: the GPU's writes to a VM's BOs during a pre-copy migration
 * (docs/migration.md). A chunk whose bytes were sent is mapped read-only;
 * the GPU's first write faults, the handler marks the chunk dirty (clears
 * mig_clean), maps it writable and the access replays.
 *
 * vg_mig_track_start: -EOPNOTSUPP if the GPU driver has no replayable
 * faults, -EBUSY if the VM is tracked already. Takes gpu->lock.
 * vg_mig_track_clean: make c clean: its BO's range registered, c mapped
 * read-only and the TLB flushed, so that every GPU write after this
 * returns faults; the caller copies the bytes out afterwards. gpu->lock.
 * vg_mig_track_stop: every chunk writable again, every flag cleared, the
 * ranges unregistered; t is gone after it. Takes gpu->lock.
 * vg_mig_track_bo_freed: the BO is going (vg_bo_free_locked): its range
 * is unregistered and, if the destination knew it, its VA is kept for a
 * BO_FREE record. gpu->lock.
 * vg_mig_track_take_freed: the oldest VA kept so (true) or none. gpu->lock.
 * vg_chunk_map: map c's VA to mem with c's protection (relocation).
 */
struct vg_mig_track;
int vg_mig_track_start(struct vg_vm *vm, struct vg_mig_track **out);
int vg_mig_track_clean(struct vg_mig_track *t, struct vg_chunk *c);
void vg_mig_track_stop(struct vg_mig_track *t);
/* vg_vm_destroy() of a VM still tracked (a platform bug): tracking ends. */
void vg_mig_track_vm_gone(struct vg_vm *vm);
void vg_mig_track_bo_freed(struct vg_bo *bo);
bool vg_mig_track_take_freed(struct vg_mig_track *t, u64 *va);
/* Sticky error of the tracking (-ENOMEM: a free could not be kept). */
int vg_mig_track_error(const struct vg_mig_track *t);
u64 vg_mig_track_dirtied(const struct vg_mig_track *t);
int vg_chunk_map(struct vg_vm *vm, struct vg_chunk *c, struct vg_mem *mem);

/* return.c */
int vg_return_start(struct vg_gpu *gpu);
void vg_return_stop(struct vg_gpu *gpu);

#endif /* VGMEM_CORE_INTERNAL_H */
