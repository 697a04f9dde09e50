/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The software GPU's own structures. Not for anyone outside sim/.
 *
 * Lock rules (asserted with lockdep_assert_held where a function needs one):
 *  - sim->mem_lock (mutex) protects the VRAM free-frame stacks (clean,
 *    warm, dirty, nr_zeroing), host_used and the mem counters. Taken last: it may be taken under as->lock
 *    (map/unmap drop the references of replaced PTEs).
 *  - as->lock (mutex) protects the page table, as->gen and the cost
 *    counters of that address space, and every access the engine makes to
 *    a page through it: a PTE (and so the mem behind it) cannot change
 *    while the engine touches the page. The engine holds it for one step
 *    of a method (one page span, one element of a gather, one TLB fill),
 *    never across guest memory accesses, and lets go between steps when
 *    anyone else waits (sim_exec_relax), so map, unmap, tlb_flush,
 *    vg_sim_read_va and vg_sim_as_cost (which take it with sim_as_lock)
 *    wait for at most one short step, never for a whole kernel. Once
 *    tlb_flush or unmap returns, no step can use the old translation.
 *  - sim->chan_lock (mutex) protects the channel list, every ch->stopped
 *    and sim->running (the channel whose turn the engine runs; cleared
 *    without the lock). Never held while a method executes, so
 *    channel_create/destroy/stop do not wait for a kernel.
 *  - sim->copy_lock (spinlock) protects the copy queue, the done list and
 *    the fence counters.
 *  - sim->inj_lock (spinlock) protects the fault injection counters.
 *  - sim->pf_lock (spinlock) protects the replayable fault queue, every
 *    record's channel list, ch->pf_rec/pf_node/pf_res, the handler and its
 *    priv (fault.c). The engine takes it under as->lock.
 *  - as->lock also protects as->fr (the fault ranges).
 *  - Order: chan_lock and as->lock are never nested; as->lock, then
 *    mem_lock. copy_lock, inj_lock and pf_lock are leaves.
 *  - A channel's execution state (struct vg_bchan below "engine only") is
 *    touched only by the engine thread, except error/parked/in_entry/gp_get
 *    /pf_state which idle_wait reads with READ_ONCE. pf_state goes
 *    NONE -> WAIT (engine, as it queues a fault), WAIT -> DONE (fault
 *    thread, under pf_lock, with pf_res, store-release) and DONE -> NONE
 *    (engine, which then replays or errors the channel): a channel in WAIT
 *    or DONE has no method in flight and its job keeps its progress.
 *  - Turns: the engine gives each channel in turn at most one GPFIFO entry
 *    and at most SIM_TURN_BUDGET units of work (bytes touched; an element of
 *    STRIDED or GATHER, a CE line or a method costs more). A method that
 *    runs out of budget keeps its progress in ch->job and resumes on the
 *    channel's next turn, so no guest-chosen size keeps the engine from the
 *    other channels for longer than one budget: channel_stop, idle waits
 *    and channel_destroy of any channel wait for at most one turn.
 *  - desc->fault_cb and the guest memory accessor are called with no sim
 *    lock held (the CE bounces guest data through ch->bounce).
 *
 * Lifetimes: mems and address spaces are reference counted. A mem holds one
 * reference for its owner (dropped by mem_free), one per PTE pointing at it
 * and one per queued copy using it, so a premature mem_free never lets the
 * GPU touch freed memory. A channel holds a reference on its AS.
 */
#ifndef VGMEM_SIM_INTERNAL_H
#define VGMEM_SIM_INTERNAL_H

#include "sim.h"
#include <uapi/vgmem.h>

#define SIM_PAGE_SHIFT		12
#define SIM_PAGE_SIZE		(1ull << SIM_PAGE_SHIFT)
#define SIM_VA_BITS		40
#define SIM_VA_LIMIT		(1ull << SIM_VA_BITS)
/* The VRAM arena is allocated in 2 MiB segments of 512 frames. */
#define SIM_SEG_SHIFT		9
#define SIM_SEG_FRAMES		(1u << SIM_SEG_SHIFT)

/* ---- memory (mem.c) ------------------------------------------------------ */

struct vg_mem {
	struct vg_sim *sim;
	enum vg_loc loc;
	u32 nr_pages;
	u64 size;		/* nr_pages * 4 KiB */
	atomic_t refs;
	atomic64_t access;	/* page touches since the last sample */
	union {
		u32 *frames;	/* VRAM: frame index of each page */
		u8 *host;	/* host: one zeroed buffer */
	};
};

int sim_mem_init(struct vg_sim *sim);
void sim_mem_fini(struct vg_sim *sim);
int sim_mem_alloc(struct vg_sim *sim, enum vg_loc loc, u64 size,
		  struct vg_mem **out);
void sim_mem_get(struct vg_mem *mem);
void sim_mem_put(struct vg_mem *mem);
void sim_mem_get_many(struct vg_mem *mem, u32 n);
void sim_mem_put_many(struct vg_mem *mem, u32 n);
u64 sim_mem_sample(struct vg_mem *mem);

/* ---- address spaces (mmu.c) --------------------------------------------- */

/* Three levels like a real GPU's: VA bits 39:30, 29:21, 20:12. */
#define SIM_L0_BITS		10
#define SIM_L1_BITS		9
#define SIM_L2_BITS		9
#define SIM_L0_SIZE		(1u << SIM_L0_BITS)
#define SIM_L1_SIZE		(1u << SIM_L1_BITS)
#define SIM_L2_SIZE		(1u << SIM_L2_BITS)

#define SIM_PTE_RO		(1u << 0)	/* writes fault */

struct sim_pte {
	struct vg_mem *mem;	/* NULL: not mapped */
	u32 page;		/* page index within mem */
	u32 flags;		/* SIM_PTE_* */
};

struct sim_pt2 {
	struct sim_pte pte[SIM_L2_SIZE];
	u32 nr_valid;		/* PTEs with a mem */
};

/*
 * A big page: an L1 entry (PDE) that maps 2 MiB itself, as a real GPU's
 * 2 MiB PDE does, instead of pointing at a leaf. It is never used together
 * with a leaf.
 */
#define SIM_BIG_SHIFT		(SIM_PAGE_SHIFT + SIM_L2_BITS)
#define SIM_BIG_SIZE		(1ull << SIM_BIG_SHIFT)

/*
 * One L1 entry: a leaf table, or a big page mapping pages big.page ..
 * big.page + 511 of big.mem with big.flags (one mem reference, like one
 * PTE's), or neither.
 */
struct sim_pde {
	struct sim_pt2 *l2;
	struct sim_pte big;	/* big.mem NULL: no big page */
};

struct sim_pt1 {
	struct sim_pde pde[SIM_L1_SIZE];
	u32 nr_used;		/* entries with a leaf or a big page */
};

/* The cost counters of one address space (as->lock). */
struct sim_cost {
	u64 bytes_vram;
	u64 bytes_host;
	u64 bytes_guest;
	u64 entries;
	u64 launches;
};

/* A replayable fault range [va, end) of an address space. */
struct sim_frange {
	u64 va;
	u64 end;
};

struct vg_as {
	struct vg_sim *sim;
	struct mutex lock;
	/*
	 * Callers of sim_as_lock waiting for or about to take lock; the engine
	 * leaves the lock to them between two steps and waits on waiters_wq
	 * until they all had it.
	 */
	atomic_t waiters;
	wait_queue_head_t waiters_wq;
	atomic_t refs;		/* owner + one per channel */
	u64 gen;		/* TLB generation, bumped by every PTE change and flush */
	struct sim_pt1 **l0;	/* SIM_L0_SIZE entries */
	struct sim_cost cost;
	/* Fault ranges, sorted by va, never overlapping (as->lock). */
	struct sim_frange *fr;
	u32 nr_fr;
	u32 cap_fr;
};

int sim_as_create(struct vg_sim *sim, struct vg_as **out);
void sim_as_put(struct vg_as *as);
int sim_as_map(struct vg_as *as, u64 va, u64 size, struct vg_mem *mem,
	       u64 mem_off);
int sim_as_map_prot(struct vg_as *as, u64 va, u64 size, struct vg_mem *mem,
		    u64 mem_off, u32 prot);
void sim_as_unmap(struct vg_as *as, u64 va, u64 size);
void sim_as_tlb_flush(struct vg_as *as);
/* as->lock for everyone but the engine: announced, so the engine yields. */
void sim_as_lock(struct vg_as *as);
void sim_as_unlock(struct vg_as *as);
/*
 * Page table walk, as->lock held: false if va is unmapped, else the 4 KiB
 * translation of va in *pte (from a PTE or a big page).
 */
bool sim_as_walk(struct vg_as *as, u64 va, struct sim_pte *pte);
int sim_as_protect(struct vg_as *as, u64 va, u64 size, u32 prot);

/* ---- replayable faults (fault.c) ---------------------------------------- */

/* As->lock held: is va inside one of the AS's fault ranges? */
bool sim_as_in_fault_range(struct vg_as *as, u64 va);
int sim_as_fault_range(struct vg_as *as, u64 va, u64 size, bool on);
void sim_as_fault_ranges_free(struct vg_as *as);

/* A queued fault: one handler call, for every channel in chans. */
struct sim_fault {
	struct list_head node;		/* sim->pf_queue while queued */
	struct vg_gpu_fault f;		/* holds a reference on f.as */
	struct list_head chans;		/* vg_bchan.pf_node */
	bool busy;			/* taken by the fault thread */
};

/* Counters behind vg_sim_fault_stats(). */
enum sim_pf_stat {
	SIM_PF_RAISED,
	SIM_PF_COALESCED,
	SIM_PF_HANDLED,
	SIM_PF_REPLAYED,
	SIM_PF_FAILED,
	SIM_PF_CANCELLED,
	SIM_PF_NR_STATS
};

enum sim_pf_state {
	SIM_PF_NONE = 0,
	SIM_PF_WAIT,			/* parked: the handler has not answered */
	SIM_PF_DONE,			/* answered (pf_res): replay or error */
};

int sim_fault_init(struct vg_sim *sim);
void sim_fault_fini(struct vg_sim *sim);
/* Detach a channel being destroyed from its queued or serviced fault. */
void sim_fault_chan_detach(struct vg_bchan *ch);
/* as_destroy: drop the AS's fault ranges and its queued faults. */
void sim_fault_as_destroy(struct vg_as *as);
void sim_fault_set_handler(struct vg_sim *sim,
			   int (*handler)(void *priv,
					  const struct vg_gpu_fault *f),
			   void *priv);

/* ---- cost model (cost.c) ------------------------------------------------- */

u64 sim_muldiv(u64 a, u64 mul, u64 div);

/* ---- channels and the engine (channel.c, pushbuf.c, ce.c, compute.c, engine.c) */

#define SIM_TLB_SIZE		16	/* per channel, direct mapped */
#define SIM_PB_BUF_DW		256	/* pushbuffer dwords fetched at once */
#define SIM_BOUNCE_SIZE		4096	/* guest-to-guest CE copies */
#define SIM_NR_SUBC		8

struct sim_tlb_ent {
	u64 gen;		/* 0: invalid */
	u64 vpn;
	struct vg_mem *mem;
	u32 page;
	u32 flags;		/* SIM_PTE_* */
};

/* Copy class state of one subchannel (clb0b5 registers). */
struct sim_ce {
	u64 offset_in;
	u64 offset_out;
	u32 pitch_in;
	u32 pitch_out;
	u32 line_length;
	u32 line_count;
	u64 sem_va;
	u32 sem_payload;
};

/* Compute class state of one subchannel. */
struct sim_cp {
	u32 kernel;
	u32 args[VGMEM_CP_NARGS];
};

enum sim_job_kind {
	SIM_JOB_NONE = 0,
	SIM_JOB_CP,		/* a kernel launch */
	SIM_JOB_CE,		/* a LAUNCH_DMA */
	SIM_JOB_SEM,		/* a host semaphore release (replayable) */
};

/*
 * A launch in progress across turns: the registers it was launched with
 * (the decoder stays on the launch method, but a copy keeps the job
 * self-contained) and how far it got. Everything is offsets and sums, no
 * host pointer: each turn translates again, so a relocation between two
 * turns is seen by the next one.
 */
struct sim_job {
	u32 kind;		/* enum sim_job_kind */
	u32 mthd;		/* the launching method, for fault reports */
	u64 off;		/* bytes, words or elements done (CE: of the line) */
	u64 acc;		/* CHECKSUM: hash so far; STRIDED: sum so far */
	u64 state;		/* GATHER: generator state */
	u32 line;		/* CE: lines done */
	u32 flags;		/* CE: LAUNCH_DMA data */
	bool result;		/* CP: only the result is left to write */
	u64 sem_va;		/* SEM */
	u32 sem_payload;
	union {
		struct sim_cp cp;
		struct sim_ce ce;
	};
};

struct sim_obj {
	u32 cls;		/* 0: nothing bound */
	union {
		struct sim_ce ce;
		struct sim_cp cp;
	};
};

/* The pushbuffer of the entry being executed and the decoder's position. */
struct sim_pb {
	u64 gpa;
	u32 ndw;
	u32 pos;		/* next dword to fetch */
	/* Current packet: data dwords left, where they go. */
	u32 type;
	u32 subc;
	u32 mthd;
	u32 left;
	/* Fetch window: dwords [buf_start, buf_start + buf_n) of the entry. */
	u32 buf_start;
	u32 buf_n;
	u32 *buf;		/* SIM_PB_BUF_DW */
};

struct sim_acquire {
	u64 va;
	u32 payload;
	u32 op;
};

struct vg_bchan {
	struct vg_sim *sim;
	struct vg_as *as;
	struct list_head node;		/* sim->chans (chan_lock) */
	struct vg_channel_desc desc;
	struct vg_guest_mem gmem;	/* copy of *desc.gmem */
	u8 *userd;			/* the real USERD page */

	/* Set by channel_stop, cleared by channel_start (chan_lock). */
	bool stopped;

	/* Read by idle_wait without a lock (READ_ONCE), written by the engine. */
	u32 error;			/* enum vgmem_chan_error, sticky */
	bool parked;			/* on an unsatisfied acquire */
	bool in_entry;			/* an entry is fetched and not completed */
	u32 gp_get;

	/* Engine only. */
	u32 pf_state;			/* enum sim_pf_state, see the lock rules */

	/* pf_lock */
	struct sim_fault *pf_rec;	/* the fault parked on, while queued or serviced */
	struct list_head pf_node;	/* pf_rec->chans */
	int pf_res;			/* the handler's answer */

	/* Engine only. */
	u64 pf_addr;			/* the faulting access, for ERROR_ADDR */
	u32 pf_mthd;			/* and its method, for ERROR_INFO */
	u32 entries_done;
	bool fault_pending;		/* fault_cb still to be called */
	u64 fault_addr;
	struct sim_pb pb;
	struct sim_acquire acq;
	struct sim_job job;
	u64 sem_va;			/* host semaphore methods */
	u32 sem_payload;
	struct sim_obj obj[SIM_NR_SUBC];
	struct sim_tlb_ent tlb[SIM_TLB_SIZE];
	u8 *bounce;			/* SIM_BOUNCE_SIZE */
};

/* What the engine is doing right now: one turn of one channel. */
struct sim_exec {
	struct vg_bchan *ch;
	struct vg_as *as;
	u32 mthd;			/* for VGMEM_USERD_ERROR_INFO */
	u32 since_resched;		/* bytes stepped since the last resched */
	u64 spent;			/* work units of this turn */
	/*
	 * Bytes the current step touched, not yet in as->cost: a step either
	 * completes (committed when the engine lets go of as->lock:
	 * sim_exec_relax, sim_exec_unlock) or fails a translation, and then
	 * nothing it counted stays counted (sim_exec_discard), since a
	 * replayed step touches the same bytes again. So a launch costs the
	 * same however many faults it took (compare uses simulated time).
	 */
	u64 step_vram;
	u64 step_host;
	/* The last failed translation (for sim_va_fault). */
	bool pf_write;
	bool pf_present;		/* a PTE, written read-only */
	bool pf_range;			/* inside a fault range */
};

/*
 * The work budget of one turn and what things cost in it. 256 KiB of
 * memory traffic is some tens of microseconds; an element of a gather or
 * strided kernel is a translation and a 4-byte access, so it costs more
 * than its bytes.
 */
#define SIM_TURN_BUDGET		(256u << 10)
#define SIM_ELEM_COST		64u	/* STRIDED/GATHER element, CE line */
#define SIM_METHOD_COST		32u	/* any method */

/* Account units of work; true once the turn's budget is spent. */
static inline bool sim_exec_spend(struct sim_exec *x, u32 units)
{
	x->spent += units;
	return x->spent >= SIM_TURN_BUDGET;
}

/*
 * The engine's side of as->lock. A long method takes it with
 * sim_exec_lock, calls sim_exec_relax(x, bytes) after every step (a page
 * span, an element) and sim_exec_unlock at the end. relax drops and
 * retakes the lock when someone waits for it (or every SIM_STEP_BYTES, to
 * reschedule), so no pointer from sim_va_span survives it and the next
 * step translates again against the current page table.
 */
#define SIM_STEP_BYTES		(256u << 10)
void sim_exec_lock(struct sim_exec *x);
void sim_exec_unlock(struct sim_exec *x);
void sim_exec_relax(struct sim_exec *x, u32 bytes);
/* Forget what the current step counted (it is abandoned and redone). */
void sim_exec_discard(struct sim_exec *x);

/*
 * Result of a method: 0, a channel error (> 0), SIM_PARK (on an acquire),
 * SIM_YIELD (out of budget: ch->job resumes on the channel's next turn) or
 * SIM_FAULT (a replayable fault is queued and the channel parks on it; the
 * method resumes from ch->job, or the acquire from ch->acq, once the
 * handler answered).
 */
#define SIM_PARK		(-1)
#define SIM_YIELD		(-2)
#define SIM_FAULT		(-3)

u32 sim_rd32(const u8 *userd, u32 off);
void sim_wr32(u8 *userd, u32 off, u32 val);
void sim_wr32_release(u8 *userd, u32 off, u32 val);

/*
 * Put ch in the error state: USERD ERROR/INFO/ADDR, stop executing it. The
 * fault callback runs later, with no lock held (sim_chan_fault_notify).
 */
void sim_chan_fault(struct vg_bchan *ch, u32 err, u32 info, u64 addr);
void sim_chan_fault_notify(struct vg_bchan *ch);

int sim_chan_create(struct vg_sim *sim, struct vg_as *as,
		    const struct vg_channel_desc *desc, struct vg_bchan **out,
		    void **userd);
void sim_chan_destroy(struct vg_sim *sim, struct vg_bchan *ch);
int sim_chan_idle_wait(struct vg_sim *sim, struct vg_bchan *ch,
		       u64 timeout_ns);
int sim_chan_stop(struct vg_sim *sim, struct vg_bchan *ch, u64 timeout_ns);
void sim_chan_start(struct vg_sim *sim, struct vg_bchan *ch);
/* chanstate.c: a stopped channel's state for a migration (vg_gpu_ops.h). */
int sim_chan_save(struct vg_sim *sim, struct vg_bchan *ch, void *buf, u32 len);
int sim_chan_load(struct vg_sim *sim, struct vg_bchan *ch, const void *buf,
		  u32 len);

/* Engine turn of one channel; true if it made progress. */
bool sim_chan_step(struct vg_bchan *ch);
int sim_engine_main(void *data);

/*
 * pushbuf.c: run the current entry's pushbuffer (first the job in progress,
 * if any) within x's budget; 0 done, SIM_PARK, SIM_YIELD or an error.
 */
int sim_pb_run(struct sim_exec *x);
/* Run ch->job on from where it stopped; 0 done, SIM_YIELD or an error. */
int sim_job_run(struct sim_exec *x);

/*
 * Memory access through a channel's TLB, with as->lock held: the host
 * address of va and the bytes left in its page, up to len. Adds the bytes
 * to the step's cost (x->step_*) and one touch to the mem's access counter.
 * Returns NULL if va is not mapped, or is read-only and write is set: the
 * step is then abandoned (its cost discarded) and the caller calls
 * sim_va_fault(x, va) before anything else translates.
 */
u8 *sim_va_span(struct sim_exec *x, u64 va, u64 len, bool write, u32 *span);
/*
 * Byte copies between a VA range and a kernel buffer: 0,
 * VGMEM_CHAN_ERR_VA or SIM_FAULT.
 */
int sim_va_read(struct sim_exec *x, u64 va, void *buf, u32 len);
int sim_va_write(struct sim_exec *x, u64 va, const void *buf, u32 len);
/*
 * After a failed sim_va_span of va: inside a fault range of the AS (with a
 * handler set) queue a replayable fault and return SIM_FAULT; otherwise put
 * the channel in VGMEM_CHAN_ERR_VA with va and return that.
 */
int sim_va_fault(struct sim_exec *x, u64 va);
/* fault.c: queue x's fault at va; SIM_FAULT or, failing that, a channel error. */
int sim_fault_raise(struct sim_exec *x, u64 va);

/* Semaphore helpers shared by the host methods and the CE. */
int sim_sem_release(struct sim_exec *x, u64 va, u32 payload);
/* 0 satisfied, SIM_PARK not yet, or a channel error. */
int sim_sem_check(struct sim_exec *x, const struct sim_acquire *acq);

/* Fault with INFO = x->mthd and ADDR = the method's pushbuffer dword. */
int sim_method_fault(struct sim_exec *x, u32 err);

int sim_ce_method(struct sim_exec *x, struct sim_ce *ce, u32 mthd, u32 data);
int sim_cp_method(struct sim_exec *x, struct sim_cp *cp, u32 mthd, u32 data);
/* One turn of a job of that class: 0 done, SIM_YIELD or a channel error. */
int sim_ce_run(struct sim_exec *x, struct sim_job *job);
int sim_cp_run(struct sim_exec *x, struct sim_job *job);

/* ---- copy engine for the core (copy.c) ---------------------------------- */

struct sim_batch {
	struct list_head node;	/* sim->copy_queue, then sim->copy_done */
	u64 fence;
	int result;
	bool fail;		/* injected failure: copy nothing */
	u64 device_ns;
	unsigned int n;
	struct vg_copy copies[];
};

int sim_copy_init(struct vg_sim *sim);
void sim_copy_fini(struct vg_sim *sim);
int sim_copy_submit(struct vg_sim *sim, const struct vg_copy *copies,
		    unsigned int n, u64 *fence);
int sim_copy_wait(struct vg_sim *sim, u64 fence, u64 *device_ns);

/* ---- the GPU (GPU driver.c) ---------------------------------------------------- */

struct vg_sim {
	u64 vram_size;
	u64 host_limit;
	u64 vram_bw;
	u64 pcie_bw;
	u32 poll_us;
	u32 spin_us;

	/* mem.c (mem_lock) */
	struct mutex mem_lock;
	u8 **vram_seg;			/* the arena, SIM_SEG_FRAMES frames each */
	u32 nr_segs;
	u32 nr_frames;
	/*
	 * Free frames: clean ones (zeroed) and dirty ones (freed since), each
	 * a stack of frame indices; nr_zeroing are off both stacks while the
	 * zeroer clears them. Allocation takes clean frames first and zeroes
	 * the dirty ones it has to take itself. nr_dirty, nr_zeroing and
	 * zero_waiters change under mem_lock with WRITE_ONCE: the zeroer's
	 * and the allocators' waits read them without it.
	 */
	u32 nr_clean;
	u32 *clean;
	/*
	 * Clean frames zeroed in place, so still resident (userspace; at
	 * most retain of them, see vg_sim_config.vram_retain): taken before
	 * the clean ones, which the zeroer gave back.
	 */
	u32 nr_warm;
	u32 *warm;
	u32 retain;
	u32 nr_dirty;
	u32 *dirty;
	u32 nr_zeroing;
	u32 zero_waiters;		/* allocators waiting for nr_zeroing == 0 */
	wait_queue_head_t dirty_wq;	/* the zeroer waits for dirty frames */
	wait_queue_head_t zeroed_wq;	/* allocators wait for nr_zeroing */
	struct task_struct *zeroer;
	u64 host_used;
	u32 nr_mems;

	/* mmu.c */
	atomic_t nr_as;
	atomic_t nr_tables;		/* L1 and leaf tables of all address spaces */

	/* channel.c, engine.c (chan_lock) */
	struct mutex chan_lock;
	struct list_head chans;
	u32 nr_chans;
	struct vg_bchan *running;
	wait_queue_head_t idle_wq;	/* woken after engine steps */
	/*
	 * Sleepers on idle_wq (idle waits, channel_destroy): they count
	 * themselves here before looking at running, with a fully ordered
	 * atomic, so the engine can skip wake-ups nobody waits for.
	 */
	atomic_t idle_waiters;
	struct task_struct *engine;
	atomic64_t turns_split;		/* turns that ended out of budget */
	/*
	 * Tests (vg_sim_engine_hold): the engine waits on hold_wq at the
	 * start of a turn of a channel of hold_as, with holding set, until
	 * hold_as changes. Both READ_ONCE/WRITE_ONCE, no lock.
	 */
	struct vg_as *hold_as;
	bool holding;
	wait_queue_head_t hold_wq;

	/* copy.c (copy_lock) */
	spinlock_t copy_lock;
	struct list_head copy_queue;
	struct list_head copy_done;
	u32 nr_done;
	u64 fence_next;
	u64 fence_done;
	u64 drop_max;			/* newest fence dropped uncollected */
	bool copy_busy;			/* a batch is being copied */
	wait_queue_head_t copy_wq;	/* worker waits for work */
	wait_queue_head_t copy_done_wq;	/* copy_wait waits for fences */
	struct task_struct *copier;

	/* fault injection (inj_lock) */
	spinlock_t inj_lock;
	int inject[VG_SIM_INJ_NR];

	/* replayable faults (fault.c; pf_lock) */
	spinlock_t pf_lock;
	struct list_head pf_queue;	/* struct sim_fault, oldest first */
	atomic_t pf_queued;		/* records on pf_queue */
	int (*pf_handler)(void *priv, const struct vg_gpu_fault *f);
	void *pf_priv;
	u64 pf_hgen;			/* bumped by every set_fault_handler */
	struct sim_fault *pf_cur;	/* the record the fault thread services */
	bool pf_calling;		/* a handler call is under way ... */
	u64 pf_call_gen;		/* ... of the handler of this generation */
	wait_queue_head_t pf_wq;	/* the fault thread waits for faults */
	wait_queue_head_t pf_done_wq;	/* set_fault_handler waits for a call */
	struct task_struct *pf_thread;
	atomic64_t pf_stat[SIM_PF_NR_STATS];
};

/* Consume one op of a kind: true if it must fail by injection. */
bool sim_inject_hit(struct vg_sim *sim, enum vg_sim_inject what);

/* Host address of page i of mem (i < nr_pages). */
static inline u8 *sim_mem_page(const struct vg_mem *mem, u32 i)
{
	u32 f;

	if (mem->loc == VG_LOC_VRAM) {
		f = mem->frames[i];
		return mem->sim->vram_seg[f >> SIM_SEG_SHIFT] +
		       ((u64)(f & (SIM_SEG_FRAMES - 1)) << SIM_PAGE_SHIFT);
	}
	return mem->host + ((u64)i << SIM_PAGE_SHIFT);
}

#endif /* VGMEM_SIM_INTERNAL_H */
