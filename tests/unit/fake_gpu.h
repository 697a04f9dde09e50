/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A recording fake of struct vg_gpu_ops for the core's unit tests.
 *
 *  - mem objects hold real host bytes, so copies move data and tests can
 *    check contents; VRAM allocations are accounted against vram_size and
 *    fail with -ENOSPC beyond it; host allocations are unlimited unless
 *    fake_set_host_limit() says otherwise (-ENOMEM past it).
 *  - every address space is a list of mapped ranges; fake_va_rw() reads or
 *    writes through it as the GPU would.
 *  - copy_submit queues a batch; copy_wait performs it (memcpy), so a core
 *    that reads a destination before waiting sees stale bytes.
 *  - every op is counted (fake_count), stamped with a global sequence number
 *    (fake_last_seq) and logged in a ring (fake_log_at).
 *  - fake_fail(fb, op, nth): the nth next call of op fails with the op's
 *    errno (fake_fail_errno lets a test choose it). A failing call counts.
 *  - fake_set_hook(fb, op, fn, priv): fn runs at the start of every call of
 *    op, before failure injection (e.g. a guest writing GP_PUT while its VM
 *    is suspended, from inside channel_idle_wait).
 *
 * No real engine (see the tiny one at the end). Not thread safe beyond what the
 * core guarantees (every op is called under gpu->lock); an internal mutex
 * keeps the counters coherent for tests that read them from another thread.
 */
#ifndef VGMEM_TESTS_FAKE_BACKEND_H
#define VGMEM_TESTS_FAKE_BACKEND_H

#include "host-module/core/vg_gpu_ops.h"

enum fake_op {
	FAKE_OP_VRAM_SIZE,
	FAKE_OP_MEM_ALLOC_VRAM,
	FAKE_OP_MEM_ALLOC_HOST,
	FAKE_OP_MEM_FREE,
	FAKE_OP_COPY_SUBMIT,
	FAKE_OP_COPY_WAIT,
	FAKE_OP_AS_CREATE,
	FAKE_OP_AS_DESTROY,
	FAKE_OP_MAP,
	FAKE_OP_UNMAP,
	FAKE_OP_TLB_FLUSH,
	FAKE_OP_CHAN_CREATE,
	FAKE_OP_CHAN_DESTROY,
	FAKE_OP_IDLE_WAIT,
	FAKE_OP_SAMPLE_ACCESS,
	FAKE_OP_CHAN_STOP,
	FAKE_OP_CHAN_START,
	/* Not an op: a channel's pending work ran (fake_engine_run). */
	FAKE_OP_CHAN_RUN,
	FAKE_OP_NR
};

struct fake_gpu;

/*
 * All ops; the GPU driver pointer is the struct fake_gpu. The one table:
 * a test that needs a GPU without an op (sample_access: one that cannot
 * sample; a mandatory one: the core must refuse it) or with one replaced
 * takes a copy, changes that op and passes the copy, which must outlive
 * the GPU (fake_ops_without_sampling() for the common case).
 */
extern const struct vg_gpu_ops fake_ops;

static inline struct vg_gpu_ops fake_ops_without_sampling(void)
{
	struct vg_gpu_ops ops = fake_ops;

	ops.sample_access = NULL;
	return ops;
}

struct fake_gpu *fake_create(u64 vram_size);
/* Frees everything; returns nothing, but fake_leaks() before it tells. */
void fake_destroy(struct fake_gpu *fb);
/* Objects still alive: mems + address spaces + channels. */
u64 fake_leaks(struct fake_gpu *fb);
/*
 * Contract violations seen (each also printed to stderr): a mem freed while
 * still mapped, a map outside its mem or unaligned, a copy out of bounds, a
 * destroy of an AS with live channels or mappings. Tests assert it is 0.
 */
u64 fake_errors(struct fake_gpu *fb);

const char *fake_op_name(enum fake_op op);
u64 fake_count(struct fake_gpu *fb, enum fake_op op);
void fake_reset_counts(struct fake_gpu *fb);
/* Global sequence number of op's last call (0: never), for ordering checks. */
u64 fake_last_seq(struct fake_gpu *fb, enum fake_op op);
/* The i-th most recent op (0 = the last); FAKE_OP_NR past the ring's end. */
enum fake_op fake_log_at(struct fake_gpu *fb, u32 i);

/* The nth next call of op (1 = the very next) fails with the op's errno. */
void fake_fail(struct fake_gpu *fb, enum fake_op op, u32 nth);
void fake_fail_errno(struct fake_gpu *fb, enum fake_op op, u32 nth,
		     int err);
void fake_fail_clear(struct fake_gpu *fb);

typedef void (*fake_hook_fn)(void *priv, struct fake_gpu *fb, void *arg);
/*
 * fn(priv, fb, arg) runs at the start of each call of op. arg is the op's
 * main object: the struct vg_bchan * for channel ops, the struct vg_as * for
 * map/unmap/tlb_flush/as_destroy, the struct vg_mem * for mem_free and
 * sample_access, NULL otherwise. fn may use the fake's query functions and
 * fake_va_rw/fake_bchan_userd, but not call ops itself.
 */
void fake_set_hook(struct fake_gpu *fb, enum fake_op op, fake_hook_fn fn,
		   void *priv);

/* Memory. */
void fake_set_host_limit(struct fake_gpu *fb, u64 bytes);	/* 0: none */
u64 fake_vram_used(struct fake_gpu *fb);
u64 fake_host_used(struct fake_gpu *fb);
void fake_set_access(struct vg_mem *mem, u64 n);
u64 fake_mem_size(const struct vg_mem *mem);
enum vg_loc fake_mem_loc(const struct vg_mem *mem);
u8 *fake_mem_data(struct vg_mem *mem);

/* Total bytes copied by completed batches, and the number of copies. */
u64 fake_bytes_copied(struct fake_gpu *fb);
u64 fake_copies(struct fake_gpu *fb);
/* Batches submitted but not yet waited for. */
u32 fake_copies_pending(struct fake_gpu *fb);

/*
 * GPU view of an address space: read (write = false) or write len bytes at
 * va. Returns 0, or -EFAULT if any byte is unmapped (nothing done then).
 */
int fake_va_rw(struct fake_gpu *fb, struct vg_as *as, u64 va, void *buf,
	       u64 len, bool write);
/* The mem and offset va maps to, or NULL. */
struct vg_mem *fake_va_mem(struct vg_as *as, u64 va, u64 *off);
/* Mapped ranges in as. */
u32 fake_as_nr_maps(struct vg_as *as);
/* True if map/unmap changed as since its last tlb_flush. */
bool fake_as_tlb_dirty(struct vg_as *as);

/* Channels. */
u32 *fake_bchan_userd(struct vg_bchan *ch);	/* the real USERD page */
struct vg_as *fake_bchan_as(struct vg_bchan *ch);
u32 fake_nr_chans(struct fake_gpu *fb);
/* Any live channel (the most recently created), or NULL; for hooks. */
struct vg_bchan *fake_last_chan(struct fake_gpu *fb);

/* Appended by helper C (chan tests). */
/* The engine's side of a channel error: calls the channel's fault_cb. */
void fake_bchan_fault(struct vg_bchan *ch, u32 error, u64 addr);
/* The descriptor the core passed to channel_create. */
const struct vg_channel_desc *fake_bchan_desc(struct vg_bchan *ch);

/*
 * A tiny engine, for ordering tests (no methods, no rings): a channel may
 * hold one piece of pending work, fn(priv, fb, ch), which plays the
 * methods it still has to run (typically fake_va_rw writes through its
 * address space).
 *  - fake_bchan_park: the work waits on a semaphore acquire. A parked
 *    channel counts as idle for channel_idle_wait, as on real hardware.
 *  - fake_bchan_unpark: another channel released the semaphore.
 *  - channel_idle_wait runs the work of a channel that is neither parked
 *    nor stopped (the ring drains); channel_stop keeps it from running;
 *    channel_start makes it runnable again (it runs at the next
 *    fake_engine_run or idle wait).
 *  - fake_engine_run: the GPU makes progress: every channel with work that
 *    is neither parked nor stopped runs it now (logged as FAKE_OP_CHAN_RUN).
 *    Returns how many ran. Callable from hooks.
 * Contract violations: stopping a stopped channel, starting a running one.
 */
typedef void (*fake_work_fn)(void *priv, struct fake_gpu *fb,
			     struct vg_bchan *ch);
void fake_bchan_set_work(struct vg_bchan *ch, fake_work_fn fn, void *priv);
void fake_bchan_park(struct vg_bchan *ch);
void fake_bchan_unpark(struct vg_bchan *ch);
bool fake_bchan_stopped(struct vg_bchan *ch);
u64 fake_bchan_runs(struct vg_bchan *ch);
u32 fake_engine_run(struct fake_gpu *fb);

#endif /* VGMEM_TESTS_FAKE_BACKEND_H */
