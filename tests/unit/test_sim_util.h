/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers of the software GPU's unit tests (test_sim_*.c): a guest memory
 * region, channels with a GPFIFO ring and a pushbuffer in it, and a
 * pushbuffer builder. Everything static inline: each test program includes it.
 */
#ifndef TEST_SIM_UTIL_H
#define TEST_SIM_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "host-module/sim/sim.h"
#include <uapi/vgmem.h>

#define TG_BASE		0x100000ull	/* guest-physical base of the region */
#define TG_SIZE		(8ull << 20)
/*
 * Generous: a starved CI machine runs the engine thread rarely (the chaos
 * test of test_sim_replay_many needs more than 30 s there), and no test passes
 * by waiting less.
 */
#define T_TIMEOUT	(120ull * NSEC_PER_SEC)

static inline u64 t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + (u64)ts.tv_nsec;
}

/*
 * Wait until cond, polling, for at most T_TIMEOUT: true once it holds;
 * false after printing what it waited for, and how long. For a caller that
 * must clean up (stop a thread) before it fails.
 */
#define T_WAIT_FOR(cond) ({						\
	u64 start_ = t_now();						\
	bool ok_;							\
	while (!(ok_ = (cond)) && t_now() - start_ < T_TIMEOUT)	\
		usleep(100);						\
	if (!ok_)							\
		print_error("%s:%d: waited %llu s for %s, in vain\n",	\
			    __FILE__, __LINE__,				\
			    (unsigned long long)((t_now() - start_) /	\
						 NSEC_PER_SEC), #cond);	\
	ok_; })
/* The same, failing the test when cond never held. */
#define T_WAIT(cond)	assert_true(T_WAIT_FOR(cond))
#define T_PB_DW		16384		/* pushbuffer dwords per channel */

/* A guest's memory: [TG_BASE, TG_BASE + TG_SIZE). */
struct tg {
	u8 *mem;
	u64 next;			/* bump allocator, offset */
	int gate;			/* atomic: reads of gate_gpa spin while set */
	u64 gate_gpa;			/* set before gate */
	int gate_hit;			/* atomic */
};

static inline int tg_check(struct tg *g, u64 gpa, size_t len)
{
	if (gpa < TG_BASE || gpa - TG_BASE > TG_SIZE ||
	    len > TG_SIZE - (gpa - TG_BASE))
		return -EFAULT;
	(void)g;
	return 0;
}

static inline int tg_read(void *priv, u64 gpa, void *buf, size_t len)
{
	struct tg *g = priv;

	if (tg_check(g, gpa, len))
		return -EFAULT;
	if (__atomic_load_n(&g->gate, __ATOMIC_ACQUIRE) && gpa == g->gate_gpa) {
		__atomic_store_n(&g->gate_hit, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&g->gate, __ATOMIC_ACQUIRE))
			usleep(100);
	}
	memcpy(buf, g->mem + (gpa - TG_BASE), len);
	return 0;
}

static inline int tg_write(void *priv, u64 gpa, const void *buf, size_t len)
{
	struct tg *g = priv;

	if (tg_check(g, gpa, len))
		return -EFAULT;
	memcpy(g->mem + (gpa - TG_BASE), buf, len);
	return 0;
}

static inline struct tg *tg_new(void)
{
	struct tg *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	g->mem = calloc(1, TG_SIZE);
	assert_non_null(g->mem);
	return g;
}

static inline void tg_free(struct tg *g)
{
	free(g->mem);
	free(g);
}

static inline u64 tg_alloc(struct tg *g, u64 size)
{
	u64 gpa = TG_BASE + g->next;

	g->next += (size + 4095) & ~4095ull;
	assert_true(g->next <= TG_SIZE);
	return gpa;
}

static inline void *tg_ptr(struct tg *g, u64 gpa)
{
	return g->mem + (gpa - TG_BASE);
}

/* A channel and its guest-side state. */
struct tchan {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct vg_as *as;
	struct vg_bchan *ch;
	u8 *userd;
	struct tg *g;
	struct vg_guest_mem gmem;
	u64 ring_gpa;
	u32 entries;
	u32 put;
	u64 pb_gpa;
	u32 pb_pos;			/* next dword */
	u32 seg_start;			/* first dword of the open segment */
	int faults;
	u32 fault_err;
	u64 fault_addr;
};

static inline void t_fault_cb(void *priv, u32 error, u64 addr)
{
	struct tchan *t = priv;

	t->faults++;
	t->fault_err = error;
	t->fault_addr = addr;
}

static inline struct tchan *t_chan(struct vg_sim *sim, struct vg_as *as,
			    struct tg *g, u32 entries)
{
	struct tchan *t = calloc(1, sizeof(*t));
	struct vg_channel_desc d;
	void *userd;

	assert_non_null(t);
	t->sim = sim;
	t->ops = vg_sim_gpu_ops();
	t->as = as;
	t->g = g;
	t->entries = entries;
	t->gmem.read = tg_read;
	t->gmem.write = tg_write;
	t->gmem.priv = g;
	t->ring_gpa = tg_alloc(g, (u64)entries * 8);
	t->pb_gpa = tg_alloc(g, T_PB_DW * 4);
	memset(&d, 0, sizeof(d));
	d.gpfifo_gpa = t->ring_gpa;
	d.gpfifo_entries = entries;
	d.gmem = &t->gmem;
	d.fault_cb = t_fault_cb;
	d.fault_priv = t;
	assert_int_equal(t->ops->channel_create(sim, as, &d, &t->ch, &userd), 0);
	t->userd = userd;
	return t;
}

static inline void t_chan_free(struct tchan *t)
{
	t->ops->channel_destroy(t->sim, t->ch);
	free(t);
}

static inline u32 t_userd(struct tchan *t, u32 off)
{
	return __atomic_load_n((u32 *)(t->userd + off), __ATOMIC_ACQUIRE);
}

static inline void t_dw(struct tchan *t, u32 v)
{
	u32 *pb = tg_ptr(t->g, t->pb_gpa);

	assert_true(t->pb_pos < T_PB_DW);
	pb[t->pb_pos++] = v;
}

static inline void t_inc(struct tchan *t, u32 subc, u32 mthd, const u32 *d, u32 n)
{
	u32 i;

	t_dw(t, VGMEM_PKHDR(VGMEM_PKHDR_INC, subc, mthd, n));
	for (i = 0; i < n; i++)
		t_dw(t, d[i]);
}

static inline void t_noninc(struct tchan *t, u32 subc, u32 mthd, const u32 *d, u32 n)
{
	u32 i;

	t_dw(t, VGMEM_PKHDR(VGMEM_PKHDR_NONINC, subc, mthd, n));
	for (i = 0; i < n; i++)
		t_dw(t, d[i]);
}

static inline void t_inc_once(struct tchan *t, u32 subc, u32 mthd, const u32 *d,
		       u32 n)
{
	u32 i;

	t_dw(t, VGMEM_PKHDR(VGMEM_PKHDR_INC_ONCE, subc, mthd, n));
	for (i = 0; i < n; i++)
		t_dw(t, d[i]);
}

static inline void t_immd(struct tchan *t, u32 subc, u32 mthd, u32 data)
{
	t_dw(t, VGMEM_PKHDR(VGMEM_PKHDR_IMMD, subc, mthd, data));
}

static inline void t_mthd(struct tchan *t, u32 subc, u32 mthd, u32 data)
{
	t_inc(t, subc, mthd, &data, 1);
}

/* Publish a raw GPFIFO entry. */
static inline void t_put_entry(struct tchan *t, u64 e)
{
	u64 *ring = tg_ptr(t->g, t->ring_gpa);

	ring[t->put] = e;
	t->put = (t->put + 1) & (t->entries - 1);
	__atomic_store_n((u32 *)(t->userd + VGMEM_USERD_GP_PUT), t->put,
			 __ATOMIC_RELEASE);
}

/* Close the open segment as one entry and publish it. */
static inline void t_submit(struct tchan *t)
{
	u32 n = t->pb_pos - t->seg_start;

	t_put_entry(t, VGMEM_GP_ENTRY(t->pb_gpa + 4ull * t->seg_start, n));
	t->seg_start = t->pb_pos;
}

static inline int t_idle(struct tchan *t)
{
	return t->ops->channel_idle_wait(t->sim, t->ch, T_TIMEOUT);
}

/* Submit, wait, and expect the channel healthy with its ring drained. */
static inline void t_run(struct tchan *t)
{
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_GP_GET), t->put);
}

static inline void t_bind(struct tchan *t)
{
	t_mthd(t, 1, VGMEM_MTHD_SET_OBJECT, VGMEM_CLASS_COMPUTE);
	t_mthd(t, 4, VGMEM_MTHD_SET_OBJECT, VGMEM_CLASS_COPY);
}

static inline void t_kernel(struct tchan *t, u32 k, const u32 args[VGMEM_CP_NARGS])
{
	t_mthd(t, 1, VGMEM_CP_KERNEL, k);
	t_inc(t, 1, VGMEM_CP_ARG(0), args, VGMEM_CP_NARGS);
	t_mthd(t, 1, VGMEM_CP_LAUNCH, 0);
}

/* Address spaces as[0..n), each with a backing mem back[i] of size bytes in VRAM. */
static inline void t_new_ases(struct vg_sim *sim, struct vg_as **as,
			      struct vg_mem **back, int n, u64 size)
{
	const struct vg_gpu_ops *ops = vg_sim_gpu_ops();
	int i;

	for (i = 0; i < n; i++) {
		assert_int_equal(ops->as_create(sim, &as[i]), 0);
		assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, size,
						&back[i]), 0);
	}
}

/*
 * Address spaces as[0..n) (NULL: already gone) and their backing mems
 * back[0..n) freed, as a teardown does before the sim goes.
 */
static inline void t_free_ases(struct vg_sim *sim, struct vg_as **as,
			       struct vg_mem **back, int n)
{
	const struct vg_gpu_ops *ops = vg_sim_gpu_ops();
	int i;

	for (i = 0; i < n; i++) {
		ops->mem_free(sim, back[i]);
		if (as[i])
			ops->as_destroy(sim, as[i]);
	}
}

/* The sim and the guest memory gone, no WARN fired since warns was read. */
static inline void t_sim_free_nowarn(struct vg_sim *sim, unsigned long warns,
				     struct tg *g)
{
	vg_sim_destroy(sim);
	assert_int_equal(os_warn_count(), warns);
	tg_free(g);
}

/*
 * The end of a sim test's teardown: every byte of the sim's VRAM (vram)
 * free again, then the sim and the guest memory gone.
 */
static inline void t_sim_free(struct vg_sim *sim, u64 vram, struct tg *g)
{
	assert_int_equal(vg_sim_vram_free(sim), vram);
	vg_sim_destroy(sim);
	tg_free(g);
}

static inline void t_sem(struct tchan *t, u64 va, u32 payload, u32 op)
{
	u32 d[4] = { (u32)(va >> 32), (u32)va, payload, op };

	t_inc(t, 0, VGMEM_MTHD_SEMAPHORE_A, d, 4);
}

/* CE launch: offsets, pitches, line length and count, then LAUNCH_DMA. */
static inline void t_ce(struct tchan *t, u64 in, u64 out, u32 pitch_in,
		 u32 pitch_out, u32 len, u32 lines, u32 flags)
{
	u32 off[4] = { (u32)(in >> 32), (u32)in, (u32)(out >> 32), (u32)out };
	u32 geo[4] = { pitch_in, pitch_out, len, lines };

	t_inc(t, 4, VGMEM_CE_OFFSET_IN_UPPER, off, 4);
	t_inc(t, 4, VGMEM_CE_PITCH_IN, geo, 4);
	t_mthd(t, 4, VGMEM_CE_LAUNCH_DMA, flags | VGMEM_CE_LAUNCH_SRC_PITCH |
	       VGMEM_CE_LAUNCH_DST_PITCH);
}

static inline void t_args64(u32 *a, u32 i, u64 v)
{
	a[i] = (u32)v;
	a[i + 1] = (u32)(v >> 32);
}

/* A kernel over [va, va + bytes) with a third argument (a word or a VA). */
static inline void k_range(struct tchan *t, u32 k, u64 va, u64 bytes, u64 arg)
{
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, va);
	t_args64(a, 2, bytes);
	t_args64(a, 4, arg);
	t_kernel(t, k, a);
}

/* A GPU and an address space with a mem mapped at va. */
static inline struct vg_sim *t_sim(u64 vram, u64 host_limit)
{
	struct vg_sim_config cfg = { .vram_size = vram,
				     .host_limit = host_limit,
				     .poll_us = 50 };
	struct vg_sim *sim;

	assert_int_equal(vg_sim_create(&cfg, &sim), 0);
	return sim;
}

static inline struct vg_mem *t_map_new(struct vg_sim *sim, struct vg_as *as, u64 va,
				u64 size, enum vg_loc loc)
{
	const struct vg_gpu_ops *ops = vg_sim_gpu_ops();
	struct vg_mem *m;

	assert_int_equal(ops->mem_alloc(sim, loc, size, &m), 0);
	assert_int_equal(ops->map(sim, as, va, size, m, 0), 0);
	return m;
}

static inline u64 t_fnv(const u8 *p, u64 n)
{
	u64 h = VGMEM_FNV1A_OFFSET;

	while (n--) {
		h ^= *p++;
		h *= VGMEM_FNV1A_PRIME;
	}
	return h;
}

#endif /* TEST_SIM_UTIL_H */
