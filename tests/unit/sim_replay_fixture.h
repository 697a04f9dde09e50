/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The fixture of the replayable-fault tests (test_sim_replay_*.c): a
 * software GPU with two address spaces, each with a 4 MiB backing mem in
 * VRAM for [VA0, VA0 + MSZ), and a test fault handler (struct th) that,
 * on the sim's fault thread, maps the faulting page from that backing,
 * unprotects it, fails, or leaves it unfixed, as the test asks; plus
 * the kernels and checks the tests submit. Teardown waits for a handler
 * call in flight and asserts that no WARN fired. Static inline: each
 * test program includes it.
 */
#ifndef VGMEM_TESTS_SIM_REPLAY_FIXTURE_H
#define VGMEM_TESTS_SIM_REPLAY_FIXTURE_H

#include <pthread.h>
#include <time.h>

#include "test_sim_util.h"

#define VA0	0x300000000ull
#define MSZ	(4ull << 20)		/* backing of each AS */
#define NPG	(MSZ / 4096)

enum th_mode {
	TH_MAP,			/* map the backing page */
	TH_UNPROTECT,		/* make the page writable */
	TH_FAIL,		/* return -EFAULT */
	TH_AUTO,		/* present: unprotect, else map */
};

struct fx;

/* The handler runs on the sim's fault thread: its flags are atomics. */
#define TH_LD(x)	__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define TH_ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

struct th {
	struct fx *f;
	int mode;			/* atomic */
	int calls;			/* atomic */
	int gate;			/* atomic: the handler spins while set */
	int in;				/* atomic: a call has started */
	int skip;			/* answer 0 without fixing this often */
	struct vg_gpu_fault last;
	int writes, presents;		/* atomic */
	int active;			/* calls not returned yet (atomic) */
	bool no_wait;			/* teardown: let vg_sim_destroy wait */
};

struct fx {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct tg *g;
	struct vg_as *as[2];
	struct vg_mem *back[2];
	struct th h;
	int warns;			/* os_warn_count() at setup */
};

static inline int th_fix(struct th *h, const struct vg_gpu_fault *fl);

static inline int th_handler(void *priv, const struct vg_gpu_fault *fl)
{
	struct th *h = priv;
	int r;

	__atomic_add_fetch(&h->active, 1, __ATOMIC_SEQ_CST);
	r = th_fix(h, fl);
	__atomic_sub_fetch(&h->active, 1, __ATOMIC_SEQ_CST);
	return r;
}

static inline int th_fix(struct th *h, const struct vg_gpu_fault *fl)
{
	struct fx *f = h->f;
	int i = fl->as == f->as[0] ? 0 : 1;

	assert_true(fl->as == f->as[0] || fl->as == f->as[1]);
	assert_true((fl->va & 4095) == 0);
	h->last = *fl;
	__atomic_add_fetch(&h->writes, fl->write, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&h->presents, fl->present, __ATOMIC_SEQ_CST);
	TH_ST(h->in, 1);
	while (TH_LD(h->gate))
		usleep(100);
	__atomic_add_fetch(&h->calls, 1, __ATOMIC_SEQ_CST);
	if (TH_LD(h->mode) == TH_FAIL)
		return -EFAULT;
	if (__atomic_load_n(&h->skip, __ATOMIC_SEQ_CST) > 0) {
		__atomic_sub_fetch(&h->skip, 1, __ATOMIC_SEQ_CST);
		return 0;	/* not fixed: the replay faults again */
	}
	if (TH_LD(h->mode) == TH_UNPROTECT ||
	    (TH_LD(h->mode) == TH_AUTO && fl->present)) {
		if (f->ops->protect(f->sim, fl->as, fl->va, 4096, VG_PROT_RW))
			return -EIO;
	} else {
		if (fl->va < VA0 || fl->va >= VA0 + MSZ)
			return -ERANGE;
		if (f->ops->map(f->sim, fl->as, fl->va, 4096, f->back[i],
				fl->va - VA0))
			return -ENOMEM;
	}
	f->ops->tlb_flush(f->sim, fl->as);
	return 0;
}

static inline int th_calls(struct fx *f)
{
	return __atomic_load_n(&f->h.calls, __ATOMIC_SEQ_CST);
}

static inline int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sim = t_sim(32ull << 20, 0);
	f->ops = vg_sim_gpu_ops();
	f->g = tg_new();
	t_new_ases(f->sim, f->as, f->back, 2, MSZ);
	f->h.f = f;
	f->warns = os_warn_count();
	f->ops->set_fault_handler(f->sim, th_handler, &f->h);
	*state = f;
	return 0;
}

static inline int fx_teardown(void **state)
{
	struct fx *f = *state;

	TH_ST(f->h.gate, 0);
	/* A handler still mapping a backing mem would race its free. */
	if (!f->h.no_wait)
		T_WAIT(!__atomic_load_n(&f->h.active, __ATOMIC_SEQ_CST));
	t_free_ases(f->sim, f->as, f->back, 2);
	t_sim_free_nowarn(f->sim, f->warns, f->g);
	free(f);
	return 0;
}

/* The ring drained or the channel failed: false (said why) if never. */
static inline bool t_wait_done_for(struct tchan *t)
{
	return T_WAIT_FOR(t_userd(t, VGMEM_USERD_GP_GET) == t->put ||
			  t_userd(t, VGMEM_USERD_ERROR));
}

static inline void t_wait_done(struct tchan *t)
{
	assert_true(t_wait_done_for(t));
}

/* Submit, wait for the ring to drain (through faults), expect no error. */
static inline void t_run_faulting(struct tchan *t)
{
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t->faults, 0);
}

static inline void t_range(struct fx *f, int i, u64 va, u64 size, bool on)
{
	assert_int_equal(f->ops->fault_range(f->sim, f->as[i], va, size, on), 0);
}

static inline void k_fill(struct tchan *t, u64 dst, u64 bytes, u32 seed)
{
	k_range(t, VGMEM_K_FILL_PATTERN, dst, bytes, seed);
}

static inline void k_memset(struct tchan *t, u64 dst, u64 bytes, u32 v)
{
	k_range(t, VGMEM_K_MEMSET, dst, bytes, v);
}

static inline void k_checksum(struct tchan *t, u64 src, u64 bytes, u64 res)
{
	k_range(t, VGMEM_K_CHECKSUM, src, bytes, res);
}

/* The FILL_PATTERN bytes [off, off + n) of seed. */
static inline void pattern(u8 *buf, u64 off, u64 n, u32 seed)
{
	u64 k;

	for (k = 0; k < n; k++) {
		u32 w = vgmem_pattern_word(seed, (off + k) >> 2);

		buf[k] = (u8)(w >> (8 * ((off + k) & 3)));
	}
}

static inline void check_pattern(struct fx *f, int i, u64 va, u64 n, u32 seed)
{
	u8 *got = malloc(n), *want = malloc(n);

	assert_int_equal(vg_sim_read_va(f->sim, f->as[i], va, got, n), 0);
	/* The pattern is of the offset in the kernel's range (from va). */
	pattern(want, 0, n, seed);
	assert_memory_equal(got, want, n);
	free(got);
	free(want);
}

#endif /* VGMEM_TESTS_SIM_REPLAY_FIXTURE_H */
