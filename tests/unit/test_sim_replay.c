// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable faults of the software GPU: protect (read-only PTEs),
 * fault_range and set_fault_handler, and mem_host_addr. A test handler
 * maps a backing mem page by page (or unprotects, or fails) from the sim's
 * fault thread; kernels, CE copies and semaphores that fault replay and
 * finish with exact data. Also: errors, stop and idle waits while parked,
 * destroys with faults queued or being handled, many channels at once.
 */
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
	const struct vg_backend_ops *ops;
	struct tg *g;
	struct vg_as *as[2];
	struct vg_mem *back[2];
	struct th h;
	int warns;			/* os_warn_count() at setup */
};

static int th_fix(struct th *h, const struct vg_gpu_fault *fl);

static int th_handler(void *priv, const struct vg_gpu_fault *fl)
{
	struct th *h = priv;
	int r;

	__atomic_add_fetch(&h->active, 1, __ATOMIC_SEQ_CST);
	r = th_fix(h, fl);
	__atomic_sub_fetch(&h->active, 1, __ATOMIC_SEQ_CST);
	return r;
}

static int th_fix(struct th *h, const struct vg_gpu_fault *fl)
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

static int th_calls(struct fx *f)
{
	return __atomic_load_n(&f->h.calls, __ATOMIC_SEQ_CST);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int i;

	assert_non_null(f);
	f->sim = t_sim(32ull << 20, 0);
	f->ops = vg_sim_backend_ops();
	f->g = tg_new();
	for (i = 0; i < 2; i++) {
		assert_int_equal(f->ops->as_create(f->sim, &f->as[i]), 0);
		assert_int_equal(f->ops->mem_alloc(f->sim, VG_LOC_VRAM, MSZ,
						   &f->back[i]), 0);
	}
	f->h.f = f;
	f->warns = os_warn_count();
	f->ops->set_fault_handler(f->sim, th_handler, &f->h);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int i;

	TH_ST(f->h.gate, 0);
	/* A handler still mapping a backing mem would race its free. */
	if (!f->h.no_wait)
		T_WAIT(!__atomic_load_n(&f->h.active, __ATOMIC_SEQ_CST));
	for (i = 0; i < 2; i++) {
		f->ops->mem_free(f->sim, f->back[i]);
		if (f->as[i])
			f->ops->as_destroy(f->sim, f->as[i]);
	}
	vg_sim_destroy(f->sim);
	assert_int_equal(os_warn_count(), f->warns);
	tg_free(f->g);
	free(f);
	return 0;
}

/* The ring drained or the channel failed: false (said why) if never. */
static bool t_wait_done_for(struct tchan *t)
{
	return T_WAIT_FOR(t_userd(t, VGMEM_USERD_GP_GET) == t->put ||
			  t_userd(t, VGMEM_USERD_ERROR));
}

static void t_wait_done(struct tchan *t)
{
	assert_true(t_wait_done_for(t));
}

/* Submit, wait for the ring to drain (through faults), expect no error. */
static void t_run_faulting(struct tchan *t)
{
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t->faults, 0);
}

static void t_range(struct fx *f, int i, u64 va, u64 size, bool on)
{
	assert_int_equal(f->ops->fault_range(f->sim, f->as[i], va, size, on), 0);
}

/* A kernel over [va, va + bytes) with a third argument (a word or a VA). */
static void k_range(struct tchan *t, u32 k, u64 va, u64 bytes, u64 arg)
{
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, va);
	t_args64(a, 2, bytes);
	t_args64(a, 4, arg);
	t_kernel(t, k, a);
}

static void k_fill(struct tchan *t, u64 dst, u64 bytes, u32 seed)
{
	k_range(t, VGMEM_K_FILL_PATTERN, dst, bytes, seed);
}

static void k_memset(struct tchan *t, u64 dst, u64 bytes, u32 v)
{
	k_range(t, VGMEM_K_MEMSET, dst, bytes, v);
}

static void k_checksum(struct tchan *t, u64 src, u64 bytes, u64 res)
{
	k_range(t, VGMEM_K_CHECKSUM, src, bytes, res);
}

/* The FILL_PATTERN bytes [off, off + n) of seed. */
static void pattern(u8 *buf, u64 off, u64 n, u32 seed)
{
	u64 k;

	for (k = 0; k < n; k++) {
		u32 w = vgmem_pattern_word(seed, (off + k) >> 2);

		buf[k] = (u8)(w >> (8 * ((off + k) & 3)));
	}
}

static void check_pattern(struct fx *f, int i, u64 va, u64 n, u32 seed)
{
	u8 *got = malloc(n), *want = malloc(n);

	assert_int_equal(vg_sim_read_va(f->sim, f->as[i], va, got, n), 0);
	/* The pattern is of the offset in the kernel's range (from va). */
	pattern(want, 0, n, seed);
	assert_memory_equal(got, want, n);
	free(got);
	free(want);
}

/* ---- protection ---------------------------------------------------------- */

static void test_ro_write_faults_read_does_not(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u8 buf[64];
	u64 sum;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 8 * 4096,
				     f->back[0], 0), 0);
	t_bind(t);
	k_fill(t, VA0, 4 * 4096, 7);
	t_run(t);
	assert_int_equal(f->ops->protect(f->sim, f->as[0], VA0, 4 * 4096,
					 VG_PROT_RO), 0);
	f->ops->tlb_flush(f->sim, f->as[0]);

	/* Reads of RO pages work; the result goes to a writable page. */
	k_checksum(t, VA0, 4 * 4096, VA0 + 5 * 4096);
	t_run(t);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 5 * 4096, &sum,
					8), 0);
	{
		u8 *want = malloc(4 * 4096);

		pattern(want, 0, 4 * 4096, 7);
		assert_int_equal(sum, t_fnv(want, 4 * 4096));
		free(want);
	}

	/* A write outside every fault range: the VA error, as an unmapped page. */
	k_memset(t, VA0 + 4096 + 100, 8, 0x55);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_INFO), VGMEM_CP_LAUNCH);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO),
			 (u32)(VA0 + 4096 + 100));
	assert_int_equal(t->faults, 1);
	assert_int_equal(th_calls(f), 0);
	/* Nothing was written. */
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 4096 + 100, buf,
					8), 0);
	{
		u8 want[8];

		pattern(want, 4096 + 100, 8, 7);
		assert_memory_equal(buf, want, 8);
	}
	t_chan_free(t);
}

/*
 * Fault ranges over 2 MiB big pages (the backing is mapped whole): a
 * read-only big page is made writable page by page by the handler (the
 * first protect splits it), a page unmapped out of a big page is mapped
 * back, and every other page keeps its translation and protection.
 */
static void test_big_pages_in_fault_range(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u64 tables;
	u8 buf[16];
	u32 v;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, MSZ, f->back[0],
				     0), 0);
	tables = vg_sim_pt_tables(f->sim);
	/* Whole big pages: protected without a split. */
	assert_int_equal(f->ops->protect(f->sim, f->as[0], VA0, MSZ,
					 VG_PROT_RO), 0);
	assert_int_equal(vg_sim_pt_tables(f->sim), tables);
	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	TH_ST(f->h.mode, TH_AUTO);
	/* Across pages 0 and 1: a present write fault on each. */
	k_memset(t, VA0 + 4096 - 8, 16, 0x5a5a5a5a);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 2);
	assert_int_equal(f->h.presents, 2);
	assert_int_equal(vg_sim_pt_tables(f->sim), tables + 1);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 4096 - 8, buf,
					16), 0);
	memcpy(&v, buf + 12, 4);
	assert_int_equal(v, 0x5a5a5a5a);
	/* Page 2 is still read-only. */
	k_memset(t, VA0 + 2 * 4096, 4, 1);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 3);
	assert_int_equal(f->h.presents, 3);

	/* A page out of the second big page: mapped back on the miss. */
	f->ops->unmap(f->sim, f->as[0], VA0 + MSZ / 2 + 4096, 4096);
	assert_int_equal(vg_sim_pt_tables(f->sim), tables + 2);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + MSZ / 2 + 4096,
					&v, 4), -EFAULT);
	/* Reads of the RO pages around it do not fault; the result does. */
	k_checksum(t, VA0 + MSZ / 2, 3 * 4096, VA0 + 8 * 4096);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 5);
	assert_int_equal(f->h.presents, 4);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + MSZ / 2 + 4096,
					&v, 4), 0);
	/* Its neighbours kept their protection: a write still faults. */
	k_memset(t, VA0 + MSZ / 2 + 2 * 4096, 4, 2);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 6);
	assert_int_equal(f->h.presents, 5);
	t_range(f, 0, VA0, MSZ, false);
	t_chan_free(t);
}

/* map_prot(RO): the PTE is read-only from its first moment. */
static void test_map_prot_ro(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u8 buf[8], want[8];

	assert_int_equal(f->ops->map_prot(f->sim, f->as[0], VA0, 4 * 4096,
					  f->back[0], 0, 7), -EINVAL);
	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 4 * 4096,
				     f->back[0], 0), 0);
	t_bind(t);
	k_fill(t, VA0, 4 * 4096, 3);
	t_run(t);
	/* Over a writable mapping, in one PTE write: no flush in between. */
	assert_int_equal(f->ops->map_prot(f->sim, f->as[0], VA0, 4 * 4096,
					  f->back[0], 0, VG_PROT_RO), 0);
	k_memset(t, VA0 + 100, 8, 0x55);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 100, buf, 8), 0);
	pattern(want, 100, 8, 3);
	assert_memory_equal(buf, want, 8);
	t_chan_free(t);
}

static void test_ro_write_in_range_unprotects(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct vg_sim_fault_stats st;
	u32 v;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 8 * 4096,
				     f->back[0], 0), 0);
	assert_int_equal(f->ops->protect(f->sim, f->as[0], VA0, 8 * 4096,
					 VG_PROT_RO), 0);
	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	/* Reads: no fault. The result page is unmapped: not present, write. */
	TH_ST(f->h.mode, TH_MAP);
	k_checksum(t, VA0, 8 * 4096, VA0 + 0x100000);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(th_calls(f), 1);
	assert_true(f->h.last.write);
	assert_false(f->h.last.present);
	assert_int_equal(f->h.last.va, VA0 + 0x100000);

	/* Writes to the RO pages: one fault each, write and present. */
	TH_ST(f->h.mode, TH_UNPROTECT);
	k_memset(t, VA0, 8 * 4096, 0xabcd1234);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 9);
	assert_int_equal(f->h.presents, 8);
	assert_int_equal(f->h.writes, 9);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 7 * 4096 + 4092,
					&v, 4), 0);
	assert_int_equal(v, 0xabcd1234);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 9);
	assert_int_equal(st.handled, 9);
	assert_int_equal(st.replayed, 9);
	assert_int_equal(st.failed, 0);
	t_chan_free(t);
}

/* ---- the basic path: miss, handler maps, replay --------------------------- */

static void test_miss_handler_maps_kernel_completes(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct vg_sim_fault_stats st;
	u64 sum, n = 64 * 4096 + 123;
	u8 *want;

	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	/* Unaligned end, bigger than a turn's budget: faults and splits. */
	k_fill(t, VA0, n, 99);
	k_checksum(t, VA0, n, VA0 + n + 5);	/* result across a page end */
	t_run_faulting(t);
	check_pattern(f, 0, VA0, n, 99);
	want = malloc(n);
	pattern(want, 0, n, 99);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + n + 5, &sum, 8),
			 0);
	assert_int_equal(sum, t_fnv(want, n));
	free(want);
	/* 65 pages of data, the result's page is the 65th (n + 5 + 8 < 66). */
	assert_int_equal(th_calls(f), 65);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 65);
	assert_int_equal(st.replayed, 65);
	assert_int_equal(st.failed, 0);
	assert_int_equal(t->faults, 0);
	t_chan_free(t);
}

/* Every kernel and the CE fault on reads and writes and still compute exactly. */
/* Where put_every_kind puts things (offsets from VA0). */
#define EK_A		VA0
#define EK_B		(VA0 + 0x40000)
#define EK_C		(VA0 + 0x80000)
#define EK_RES		(VA0 + 0xc0000)
#define EK_GAT		(VA0 + 0x100000)
#define EK_CPY		(VA0 + 0x140000)
#define EK_N		(3 * 1024 + 7)
/* A checksum whose 8-byte result straddles two fresh pages. */
#define EK_RES2		(VA0 + 0x1c0000 - 4)

/*
 * Every kind of access, in order, so that on fresh pages each step faults
 * partway: VECADD's c after a and b were read, GATHER's write after its
 * read, the CE's VA destination after its source, a result across a page
 * boundary after its first half.
 */
static void put_every_kind(struct tchan *t, u64 src_gpa, u64 dst_gpa)
{
	u32 args[VGMEM_CP_NARGS] = { 0 };
	u32 i;

	t_bind(t);
	k_fill(t, EK_A, 4ull * EK_N, 1);
	k_fill(t, EK_B, 4ull * EK_N, 2);
	t_args64(args, 0, EK_A);
	t_args64(args, 2, EK_B);
	t_args64(args, 4, EK_C);
	args[6] = EK_N;
	t_kernel(t, VGMEM_K_VECADD, args);
	/* STRIDED over c, stride 12. */
	memset(args, 0, sizeof(args));
	t_args64(args, 0, EK_C);
	t_args64(args, 2, 4ull * EK_N);
	args[4] = 12;
	t_args64(args, 5, EK_RES);
	t_kernel(t, VGMEM_K_STRIDED, args);
	/* GATHER from a into gat. */
	memset(args, 0, sizeof(args));
	t_args64(args, 0, EK_A);
	t_args64(args, 2, 4ull * EK_N);
	t_args64(args, 4, EK_GAT);
	args[6] = 2000;
	args[7] = 77;
	t_kernel(t, VGMEM_K_GATHER, args);
	k_checksum(t, EK_A, 4ull * EK_N, EK_RES2);
	/* CE: guest -> VA (faulting destination), VA -> guest (source). */
	for (i = 0; i < 16384; i++)
		((u8 *)tg_ptr(t->g, src_gpa))[i] = (u8)(i * 7 + 3);
	t_ce(t, src_gpa, EK_CPY + 100, 16384, 16384, 12000, 1,
	     VGMEM_CE_LAUNCH_SRC_PHYS);
	t_ce(t, EK_CPY + 100, dst_gpa, 16384, 16384, 12000, 1,
	     VGMEM_CE_LAUNCH_DST_PHYS);
	/* CE VA -> VA into fresh pages, multi-line, with a semaphore release. */
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_A, (u32)((VA0 + 0x1f0000) >> 32));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_B, (u32)(VA0 + 0x1f0000));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_PAYLOAD, 0x5eaf00d);
	t_ce(t, EK_CPY + 100, VA0 + 0x180000, 4096, 8192, 3000, 3,
	     VGMEM_CE_LAUNCH_MULTI_LINE | VGMEM_CE_LAUNCH_SEM_RELEASE);
	/* Host semaphore release into a fresh page, then an acquire on it. */
	t_sem(t, VA0 + 0x1e0000, 42, VGMEM_SEM_OP_RELEASE);
	t_sem(t, VA0 + 0x1e0000, 42, VGMEM_SEM_OP_ACQUIRE);
	/* An acquire of a fresh page (zeroed VRAM): GEQ 0 is satisfied. */
	t_sem(t, VA0 + 0x1d0000, 0, VGMEM_SEM_OP_ACQ_GEQ);
}

static void test_every_access_kind_replays(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u64 c = EK_C, res = EK_RES, gat = EK_GAT;
	u32 n = EK_N, i, *ga, *gb, va_, vb, vc, v;
	u64 src_gpa = tg_alloc(f->g, 16384), dst_gpa = tg_alloc(f->g, 16384);
	u64 sum, state2, idx;
	u8 *buf;

	t_range(f, 0, VA0, MSZ, true);
	put_every_kind(t, src_gpa, dst_gpa);
	t_run_faulting(t);

	ga = malloc(4ull * n);
	gb = malloc(4ull * n);
	pattern((u8 *)ga, 0, 4ull * n, 1);
	pattern((u8 *)gb, 0, 4ull * n, 2);
	sum = 0;
	for (i = 0; i < n; i++) {
		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], c + 4 * i, &vc,
						4), 0);
		va_ = ga[i];
		vb = gb[i];
		assert_int_equal(vc, va_ + vb);
		if (i % 3 == 0)
			sum += vc;
	}
	{
		u64 got;

		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], res, &got, 8),
				 0);
		assert_int_equal(got, sum);
	}
	state2 = 77;
	for (i = 0; i < 2000; i++) {
		idx = vg_sim_gather_index(&state2, n);
		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], gat + 4 * i,
						&v, 4), 0);
		assert_int_equal(v, ga[idx]);
	}
	assert_memory_equal(tg_ptr(f->g, dst_gpa), tg_ptr(f->g, src_gpa), 12000);
	buf = malloc(3000);
	for (i = 0; i < 3; i++) {
		assert_int_equal(vg_sim_read_va(f->sim, f->as[0],
						VA0 + 0x180000 + 8192 * i, buf,
						3000), 0);
		assert_memory_equal(buf, (u8 *)tg_ptr(f->g, src_gpa) + 4096 * i,
				    3000);
	}
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 0x1f0000, &v, 4),
			 0);
	assert_int_equal(v, 0x5eaf00d);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 0x1e0000, &v, 4),
			 0);
	assert_int_equal(v, 42);
	free(buf);
	free(ga);
	free(gb);
	t_chan_free(t);
}

/*
 * A replayed step is not paid twice: the same work costs exactly the same
 * (bytes, device time) whether every page faults in on first touch (as[0])
 * or all of them are mapped up front (as[1]). Without the step accounting
 * VECADD, GATHER, the CE and the split result count again on each replay.
 */
static void test_replay_cost_exact(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t1 = t_chan(f->sim, f->as[1], f->g, 8);
	u64 src = tg_alloc(f->g, 16384), dst0 = tg_alloc(f->g, 16384);
	u64 dst1 = tg_alloc(f->g, 16384);
	struct vg_sim_fault_stats fs;
	struct vg_sim_cost c0, c1;

	t_range(f, 0, VA0, MSZ, true);
	assert_int_equal(f->ops->map(f->sim, f->as[1], VA0, MSZ, f->back[1], 0),
			 0);
	put_every_kind(t0, src, dst0);
	t_run_faulting(t0);
	put_every_kind(t1, src, dst1);
	t_run_faulting(t1);
	vg_sim_fault_stats(f->sim, &fs);
	/* Every step kind above faulted partway at least once. */
	assert_true(fs.replayed >= 20);
	vg_sim_as_cost(f->sim, f->as[0], &c0);
	vg_sim_as_cost(f->sim, f->as[1], &c1);
	assert_int_equal(c0.bytes_vram, c1.bytes_vram);
	assert_int_equal(c0.bytes_host, c1.bytes_host);
	assert_int_equal(c0.bytes_guest, c1.bytes_guest);
	assert_int_equal(c0.entries, c1.entries);
	assert_int_equal(c0.launches, c1.launches);
	assert_int_equal(c0.device_ns, c1.device_ns);
	assert_memory_equal(tg_ptr(f->g, dst0), tg_ptr(f->g, dst1), 12000);
	t_chan_free(t0);
	t_chan_free(t1);
}

/*
 * An acquire costs its one satisfied read, however often the engine polled
 * it while it was parked (that depends on when the releasing channel runs,
 * and the cost must not).
 */
static void test_parked_acquire_costs_one_read(void **state)
{
	struct fx *f = *state;
	struct tchan *ta = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *tb = t_chan(f->sim, f->as[1], f->g, 8);
	struct vg_sim_cost c;

	/* One page seen by both address spaces. */
	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 4096, f->back[0], 0),
			 0);
	assert_int_equal(f->ops->map(f->sim, f->as[1], VA0, 4096, f->back[0], 0),
			 0);
	t_sem(ta, VA0, 1, VGMEM_SEM_OP_ACQUIRE);
	t_submit(ta);
	/* Let the engine poll the parked acquire for a while. */
	usleep(20000);
	t_sem(tb, VA0, 1, VGMEM_SEM_OP_RELEASE);
	t_run(tb);
	assert_int_equal(t_idle(ta), 0);
	T_WAIT(t_userd(ta, VGMEM_USERD_GP_GET) == ta->put);
	vg_sim_as_cost(f->sim, f->as[0], &c);
	assert_int_equal(c.bytes_vram, 4);
	assert_int_equal(c.entries, 1);
	t_chan_free(ta);
	t_chan_free(tb);
}

/* A handler that answers 0 without fixing: the replay faults again. */
static void test_unfixed_replay_faults_again(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	f->h.skip = 3;
	t_bind(t);
	k_memset(t, VA0 + 8, 16, 0x01020304);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 4);
	assert_int_equal(f->h.last.va, VA0);
	{
		u32 v[4];

		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 8, v, 16),
				 0);
		assert_int_equal(v[3], 0x01020304);
	}
	t_chan_free(t);
}

/* ---- errors ---------------------------------------------------------------- */

static void test_handler_error_is_va_error(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct vg_sim_fault_stats st;
	u32 v = 0;

	t_range(f, 0, VA0, MSZ, true);
	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 4096, f->back[0], 0),
			 0);
	TH_ST(f->h.mode, TH_FAIL);
	t_bind(t);
	k_memset(t, VA0 + 4000, 200, 0x11111111);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_INFO), VGMEM_CP_LAUNCH);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO), (u32)(VA0 + 4096));
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_HI),
			 (u32)((VA0 + 4096) >> 32));
	assert_int_equal(t->faults, 1);
	assert_int_equal(t->fault_err, VGMEM_CHAN_ERR_VA);
	assert_int_equal(t->fault_addr, VA0 + 4096);
	/* What came before the fault was written. */
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 4092, &v, 4), 0);
	assert_int_equal(v, 0x11111111);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.replayed, 0);
	t_chan_free(t);
}

static void test_no_handler_errors(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	f->ops->set_fault_handler(f->sim, NULL, NULL);
	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	k_memset(t, VA0 + 64, 4, 1);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO), (u32)(VA0 + 64));
	assert_int_equal(th_calls(f), 0);
	t_chan_free(t);
}

static void test_outside_ranges_error_as_before(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, 4 * 4096, true);
	t_range(f, 0, VA0 + 8 * 4096, 4 * 4096, true);
	t_bind(t);
	/* Pages 0-3 fault and are mapped; page 4 is in no range. */
	k_memset(t, VA0, 5 * 4096, 9);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO),
			 (u32)(VA0 + 4 * 4096));
	assert_int_equal(th_calls(f), 4);
	t_chan_free(t);

	/* A range turned off faults no more. */
	t_range(f, 0, VA0 + 8 * 4096, 4 * 4096, false);
	t = t_chan(f->sim, f->as[0], f->g, 8);
	t_bind(t);
	k_memset(t, VA0 + 9 * 4096, 4, 9);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(th_calls(f), 4);
	t_chan_free(t);
}

/* A fault whose range is turned off before the handler runs: error, no call. */
static void test_range_off_while_queued(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t1 = t_chan(f->sim, f->as[1], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	t_range(f, 1, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t0);
	t_bind(t1);
	k_memset(t0, VA0, 4, 1);
	t_submit(t0);
	T_WAIT(TH_LD(f->h.in));
	k_memset(t1, VA0, 4, 1);
	t_submit(t1);
	/* t1 parks on a queued fault (idle), then its range goes. */
	assert_int_equal(t_idle(t1), 0);
	t_range(f, 1, VA0, MSZ, false);
	TH_ST(f->h.gate, 0);
	t_wait_done(t0);
	t_wait_done(t1);
	assert_int_equal(t_userd(t0, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t_userd(t1, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(th_calls(f), 1);
	t_chan_free(t0);
	t_chan_free(t1);
}

/* ---- parked channels: idle waits, stop, destroy ------------------------- */

static void test_stop_and_idle_while_parked(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u32 v;

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t);
	k_memset(t, VA0, 3 * 4096, 0x77);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	/* Parked on the fault: idle, and stops at once. */
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(f->ops->channel_stop(f->sim, t->ch, T_TIMEOUT), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_GP_GET), 0);
	TH_ST(f->h.gate, 0);
	T_WAIT(th_calls(f) == 1);
	/* Answered but stopped: no replay (so no second fault) until start. */
	usleep(20000);
	assert_int_equal(th_calls(f), 1);
	assert_int_equal(t_userd(t, VGMEM_USERD_GP_GET), 0);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0, &v, 4), 0);
	assert_int_equal(v, 0);
	f->ops->channel_start(f->sim, t->ch);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(th_calls(f), 3);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 3 * 4096 - 4, &v,
					4), 0);
	assert_int_equal(v, 0x77);
	assert_int_equal(t_idle(t), 0);
	t_chan_free(t);
}

/* A failed fault of a stopped channel errors it when it is started. */
static void test_stopped_error_waits_for_start(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	TH_ST(f->h.mode, TH_FAIL);
	t_bind(t);
	k_memset(t, VA0, 4, 1);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	assert_int_equal(f->ops->channel_stop(f->sim, t->ch, T_TIMEOUT), 0);
	TH_ST(f->h.gate, 0);
	T_WAIT(th_calls(f) == 1);
	usleep(20000);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	f->ops->channel_start(f->sim, t->ch);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t->faults, 1);
	t_chan_free(t);
}

/*
 * Destroy channels parked on a fault being handled and on a queued one;
 * the handler finishes afterwards and nothing touches freed channels.
 */
static void test_destroy_with_faults_pending(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t1 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t2 = t_chan(f->sim, f->as[1], f->g, 8);
	struct vg_sim_fault_stats st;

	t_range(f, 0, VA0, MSZ, true);
	t_range(f, 1, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t0);
	t_bind(t1);
	t_bind(t2);
	k_memset(t0, VA0, 4, 1);
	t_submit(t0);
	T_WAIT(TH_LD(f->h.in));
	k_memset(t1, VA0 + 4096, 4, 1);
	t_submit(t1);
	k_memset(t2, VA0, 4, 1);
	t_submit(t2);
	assert_int_equal(t_idle(t1), 0);
	assert_int_equal(t_idle(t2), 0);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 3);
	/* t1's fault is queued: dropped with it. t0's is being handled. */
	t_chan_free(t1);
	t_chan_free(t0);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.cancelled, 1);
	/* as_destroy of AS 1 with t2 parked on its queued fault: t2 errors. */
	f->ops->as_destroy(f->sim, f->as[1]);
	f->as[1] = NULL;
	t_wait_done(t2);
	assert_int_equal(t_userd(t2, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.cancelled, 2);
	t_chan_free(t2);
	/* The handler call under way finishes after its channel is gone. */
	TH_ST(f->h.gate, 0);
	T_WAIT(th_calls(f) == 1);
	/* And as_destroy of AS 0 while the handler may still be returning. */
	f->ops->as_destroy(f->sim, f->as[0]);
	f->as[0] = NULL;
}

/* The sim goes away with a handler call under way: it waits for it. */
static void test_sim_destroy_waits_for_handler(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	/* Failing touches no mem: teardown frees them before the destroy. */
	TH_ST(f->h.mode, TH_FAIL);
	f->h.no_wait = true;
	t_bind(t);
	k_memset(t, VA0, 4, 1);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	t_chan_free(t);
	f->ops->as_destroy(f->sim, f->as[0]);
	f->as[0] = NULL;
	/* Teardown opens the gate and destroys the sim. */
}

/* Two channels of one AS faulting on one queued page: one handler call. */
static void test_coalesce_same_page(void **state)
{
	struct fx *f = *state;
	struct tchan *t[3];
	struct vg_sim_fault_stats st;
	u64 sum;
	int i;

	t_range(f, 0, VA0, MSZ, true);
	for (i = 0; i < 3; i++) {
		t[i] = t_chan(f->sim, f->as[0], f->g, 8);
		t_bind(t[i]);
	}
	TH_ST(f->h.gate, 1);
	k_memset(t[0], VA0, 4, 1);
	t_submit(t[0]);
	T_WAIT(TH_LD(f->h.in));
	/* t[0]'s fault is being handled; these two queue behind it. */
	for (i = 1; i < 3; i++) {
		k_checksum(t[i], VA0 + 0x10000, 64, VA0 + 8 * (u64)i);
		t_submit(t[i]);
		assert_int_equal(t_idle(t[i]), 0);
	}
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 3);
	assert_int_equal(st.coalesced, 1);
	TH_ST(f->h.gate, 0);
	for (i = 0; i < 3; i++) {
		t_wait_done(t[i]);
		assert_int_equal(t_userd(t[i], VGMEM_USERD_ERROR), 0);
	}
	for (i = 1; i < 3; i++) {
		u8 zero[64] = { 0 };

		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 8 * (u64)i,
						&sum, 8), 0);
		assert_int_equal(sum, t_fnv(zero, 64));
	}
	/* t[0]'s page, the shared one, then nothing more: results are on page 0. */
	assert_int_equal(th_calls(f), 2);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.handled, 2);
	assert_int_equal(st.replayed, 3);
	for (i = 0; i < 3; i++)
		t_chan_free(t[i]);
}

struct unhook {
	struct fx *f;
	int done;			/* atomic */
};

static void *unhook_main(void *arg)
{
	struct unhook *u = arg;

	u->f->ops->set_fault_handler(u->f->sim, NULL, NULL);
	TH_ST(u->done, 1);
	return NULL;
}

/* set_fault_handler waits, like free_irq, for a call of the old handler. */
static void test_unhook_waits_for_call(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct unhook u = { .f = f };
	pthread_t thr;

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t);
	k_memset(t, VA0, 2 * 4096, 3);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	assert_int_equal(pthread_create(&thr, NULL, unhook_main, &u), 0);
	usleep(20000);
	assert_int_equal(TH_LD(u.done), 0);
	TH_ST(f->h.gate, 0);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(u.done, 1);
	assert_int_equal(__atomic_load_n(&f->h.active, __ATOMIC_SEQ_CST), 0);
	/* The first page was mapped; the second faults with no handler. */
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO), (u32)(VA0 + 4096));
	assert_int_equal(th_calls(f), 1);
	t_chan_free(t);
}

/* ---- many channels --------------------------------------------------------- */

#define NCH	8

static void test_many_channels_fault_concurrently(void **state)
{
	struct fx *f = *state;
	struct tchan *t[NCH];
	struct vg_sim_fault_stats st;
	u64 region = MSZ / NCH, sum;
	u8 *want, *zero = calloc(1, 4096);
	int i, round;

	t_range(f, 0, VA0, MSZ, true);
	t_range(f, 1, VA0, MSZ, true);
	for (i = 0; i < NCH; i++) {
		t[i] = t_chan(f->sim, f->as[i & 1], f->g, 8);
		t_bind(t[i]);
	}
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NCH; i++) {
			u64 va = VA0 + region * (u64)(i / 2);

			/* A region of its own (AS i & 1, region i / 2). */
			k_fill(t[i], va + (round ? region / 2 : 0), region / 2,
			       (u32)(i * 10 + round));
			/* Everyone reads one zero page: coalescing. */
			k_checksum(t[i], VA0 + MSZ - 8192, 4096,
				   VA0 + MSZ - 4096 + 8 * (u64)i);
			t_submit(t[i]);
		}
		for (i = 0; i < NCH; i++) {
			t_wait_done(t[i]);
			assert_int_equal(t_userd(t[i], VGMEM_USERD_ERROR), 0);
		}
	}
	want = malloc(region / 2);
	for (i = 0; i < NCH; i++) {
		u64 va = VA0 + region * (u64)(i / 2);
		u8 *got = malloc(region / 2);

		for (round = 0; round < 2; round++) {
			pattern(want, 0, region / 2, (u32)(i * 10 + round));
			assert_int_equal(vg_sim_read_va(f->sim, f->as[i & 1],
							va + (round ? region / 2 : 0),
							got, region / 2), 0);
			assert_memory_equal(got, want, region / 2);
		}
		free(got);
		assert_int_equal(vg_sim_read_va(f->sim, f->as[i & 1],
						VA0 + MSZ - 4096 + 8 * (u64)i,
						&sum, 8), 0);
		assert_int_equal(sum, t_fnv(zero, 4096));
	}
	free(want);
	free(zero);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.raised, st.replayed);
	assert_int_equal(st.handled, st.raised - st.coalesced);
	assert_int_equal((u64)th_calls(f), st.handled);
	for (i = 0; i < NCH; i++) {
		assert_int_equal(t[i]->faults, 0);
		t_chan_free(t[i]);
	}
}

/*
 * Chaos: the same work runs on a fully mapped AS and on one whose pages a
 * thread keeps unmapping and write-protecting while it runs (the handler
 * maps the same backing pages again, or unprotects them). Every kernel and
 * copy, faulting anywhere, budget-split or not, must give the same bytes.
 */
struct chaos {
	struct fx *f;
	int stop;			/* atomic */
	u64 ops;			/* read after the join */
	int errs;			/* failed protects, read after the join */
};

static void *chaos_main(void *arg)
{
	struct chaos *c = arg;
	struct fx *f = c->f;
	struct vg_rand r;
	u64 va;

	vg_rand_seed(&r, 4242);
	while (!TH_LD(c->stop)) {
		/* The pages the work uses: A to E and the results. */
		va = VA0 + (u64)vg_rand_below(&r, 641) * 4096;
		if (va == VA0 + 640 * 4096)
			va = VA0 + 0x3ff000;
		if (vg_rand_below(&r, 2))
			f->ops->unmap(f->sim, f->as[1], va, 4096);
		/* Not asserted here: cmocka fails a test on its own thread. */
		else if (f->ops->protect(f->sim, f->as[1], va, 4096,
					 VG_PROT_RO))
			c->errs++;
		f->ops->tlb_flush(f->sim, f->as[1]);
		c->ops++;
		usleep(5);
	}
	return NULL;
}

/* The work, identical for both channels. */
static void chaos_work(struct tchan *t)
{
	u32 a[VGMEM_CP_NARGS];
	u64 A = VA0, B = VA0 + 0x80000, C = VA0 + 0x100000;
	u64 D = VA0 + 0x180000, E = VA0 + 0x200000, R = VA0 + 0x3ff000;
	u32 n = 0x80000 / 4;

	k_fill(t, A, 0x80000, 11);
	t_submit(t);
	k_fill(t, B, 0x80000 - 3, 12);
	t_submit(t);
	memset(a, 0, sizeof(a));
	t_args64(a, 0, A);
	t_args64(a, 2, B);
	t_args64(a, 4, C);
	a[6] = n;
	t_kernel(t, VGMEM_K_VECADD, a);
	t_submit(t);
	k_checksum(t, C, 0x80000, R);
	memset(a, 0, sizeof(a));
	t_args64(a, 0, C);
	t_args64(a, 2, 0x80000);
	a[4] = 4 * 4099;
	t_args64(a, 5, R + 8);
	t_kernel(t, VGMEM_K_STRIDED, a);
	t_submit(t);
	memset(a, 0, sizeof(a));
	t_args64(a, 0, A);
	t_args64(a, 2, 0x80000);
	t_args64(a, 4, D);
	a[6] = 40000;
	a[7] = 5;
	t_kernel(t, VGMEM_K_GATHER, a);
	t_submit(t);
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_A, (u32)((R + 24) >> 32));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_B, (u32)(R + 24));
	t_mthd(t, 4, VGMEM_CE_SET_SEMAPHORE_PAYLOAD, 0xce);
	t_ce(t, C + 10, E, 5000, 4500, 4000, 100, VGMEM_CE_LAUNCH_MULTI_LINE |
	     VGMEM_CE_LAUNCH_SEM_RELEASE);
	t_sem(t, R + 16, 3, VGMEM_SEM_OP_RELEASE);
	t_sem(t, R + 16, 3, VGMEM_SEM_OP_ACQUIRE);
	k_memset(t, D + 0x10000 + 1, 0x20000, 0xa5b6c7d8);
	t_submit(t);
}

static void test_chaos_same_bytes(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 16);
	struct tchan *t1 = t_chan(f->sim, f->as[1], f->g, 16);
	struct vg_sim_fault_stats st;
	struct chaos c = { .f = f };
	u8 *m0 = malloc(MSZ), *m1 = malloc(MSZ);
	pthread_t thr;
	bool done;
	int i;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, MSZ, f->back[0], 0),
			 0);
	t_range(f, 1, VA0, MSZ, true);
	TH_ST(f->h.mode, TH_AUTO);
	t_bind(t0);
	t_bind(t1);
	chaos_work(t0);
	t_wait_done(t0);
	assert_int_equal(t_userd(t0, VGMEM_USERD_ERROR), 0);

	assert_int_equal(pthread_create(&thr, NULL, chaos_main, &c), 0);
	/*
	 * The work is idempotent: three rounds give the bytes of one. The
	 * thread uses c on this stack: it is stopped and joined before any
	 * check can fail (and return from this function).
	 */
	for (i = 0, done = true; i < 3 && done; i++) {
		chaos_work(t1);
		done = t_wait_done_for(t1);
	}
	TH_ST(c.stop, 1);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_true(done);
	assert_int_equal(c.errs, 0);
	assert_int_equal(t_userd(t1, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t1->faults, 0);

	f->ops->unmap(f->sim, f->as[1], VA0, MSZ);
	assert_int_equal(f->ops->map(f->sim, f->as[1], VA0, MSZ, f->back[1], 0),
			 0);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0, m0, MSZ), 0);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[1], VA0, m1, MSZ), 0);
	assert_memory_equal(m0, m1, MSZ);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.failed, 0);
	assert_true(st.raised >= 1024 / 4);	/* at least every page touched */
	print_message("chaos: %llu unmaps/protects, %llu faults, %llu handled\n",
		      (unsigned long long)c.ops, (unsigned long long)st.raised,
		      (unsigned long long)st.handled);
	free(m0);
	free(m1);
	t_chan_free(t0);
	t_chan_free(t1);
}

/* ---- hostile arguments, mem_host_addr ----------------------------------- */

static void test_hostile_args(void **state)
{
	struct fx *f = *state;
	struct vg_as *as = f->as[0];
	const struct vg_backend_ops *o = f->ops;

	assert_int_equal(o->protect(f->sim, NULL, VA0, 4096, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0 + 1, 4096, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0, 4095, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0, 0, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0, 4096, 2), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, 1ull << 40, 4096, VG_PROT_RO),
			 -EINVAL);
	assert_int_equal(o->protect(f->sim, as, ~0ull - 4095, 8192, VG_PROT_RO),
			 -EINVAL);
	/* Unmapped pages are left alone (a later map is writable). */
	assert_int_equal(o->protect(f->sim, as, VA0, 4096, VG_PROT_RO), 0);

	assert_int_equal(o->fault_range(f->sim, NULL, VA0, 4096, true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 8, 4096, true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 0, true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, (1ull << 40) - 4096, 8192,
					true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4 * 4096, true), 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 3 * 4096, 4096, true),
			 -EEXIST);
	assert_int_equal(o->fault_range(f->sim, as, VA0 - 4096, 8192, true),
			 -EEXIST);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 4 * 4096, 4096, true),
			 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0 - 4096, 4096, true), 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4096, false), -ENOENT);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 8 * 4096, false),
			 -ENOENT);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4 * 4096, false), 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4 * 4096, false),
			 -ENOENT);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 4 * 4096, 4096, false),
			 0);
	/* Left on: as_destroy drops it. */
}

static void test_many_ranges(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	int i;

	/* Every other page, inserted out of order: the array grows. */
	for (i = 0; i < 64; i++)
		t_range(f, 0, VA0 + (u64)((i * 37) % 64) * 8192, 4096, true);
	t_bind(t);
	k_memset(t, VA0 + 62 * 8192, 4096, 5);
	t_run_faulting(t);
	k_memset(t, VA0 + 62 * 8192 + 4096, 4, 5);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(th_calls(f), 1);
	t_chan_free(t);
}

static void test_mem_host_addr(void **state)
{
	struct fx *f = *state;
	struct vg_mem *h, *v;
	struct vg_copy c;
	u64 fence;
	u8 *p;
	int i;

	assert_null(f->ops->mem_host_addr(f->sim, f->back[0]));
	assert_int_equal(f->ops->mem_alloc(f->sim, VG_LOC_HOST, 3 * 4096 + 1, &h),
			 0);
	assert_int_equal(f->ops->mem_alloc(f->sim, VG_LOC_VRAM, 4 * 4096, &v), 0);
	p = f->ops->mem_host_addr(f->sim, h);
	assert_non_null(p);
	for (i = 0; i < 4 * 4096; i++)
		p[i] = (u8)(i * 13);
	/* Through the copy engine and back: the CPU view is the mem. */
	c = (struct vg_copy){ .src = h, .dst = v, .len = 4 * 4096 };
	assert_int_equal(f->ops->copy_submit(f->sim, &c, 1, &fence), 0);
	assert_int_equal(f->ops->copy_wait(f->sim, fence, NULL), 0);
	memset(p, 0, 4 * 4096);
	c = (struct vg_copy){ .src = v, .dst = h, .src_off = 4096, .len = 4096 };
	assert_int_equal(f->ops->copy_submit(f->sim, &c, 1, &fence), 0);
	assert_int_equal(f->ops->copy_wait(f->sim, fence, NULL), 0);
	for (i = 0; i < 4096; i++)
		assert_int_equal(p[i], (u8)((i + 4096) * 13));
	assert_null(f->ops->mem_host_addr(f->sim, NULL));
	f->ops->mem_free(f->sim, h);
	f->ops->mem_free(f->sim, v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_ro_write_faults_read_does_not),
	T(test_map_prot_ro),
		T(test_big_pages_in_fault_range),
		T(test_ro_write_in_range_unprotects),
		T(test_miss_handler_maps_kernel_completes),
		T(test_every_access_kind_replays),
		T(test_replay_cost_exact),
		T(test_parked_acquire_costs_one_read),
		T(test_unfixed_replay_faults_again),
		T(test_handler_error_is_va_error),
		T(test_no_handler_errors),
		T(test_outside_ranges_error_as_before),
		T(test_range_off_while_queued),
		T(test_stop_and_idle_while_parked),
		T(test_stopped_error_waits_for_start),
		T(test_destroy_with_faults_pending),
		T(test_sim_destroy_waits_for_handler),
		T(test_coalesce_same_page),
		T(test_unhook_waits_for_call),
		T(test_many_channels_fault_concurrently),
		T(test_chaos_same_bytes),
		T(test_hostile_args),
		T(test_many_ranges),
		T(test_mem_host_addr),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
