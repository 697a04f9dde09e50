// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The address space lock against a long method: map, unmap, tlb_flush and
 * debug reads of an address space go through while the engine is in the
 * middle of a long copy on it, and what they change is seen by the rest of
 * the copy (an unmapped and freed mem faults, it is never touched; a
 * remapped page is written in its new mem).
 *
 * The copy is held mid-way by the guest memory gate (test_sim_util.h): the
 * engine spins in a guest read of one source page until the test opens the
 * gate. A guard thread opens it after 20 s in any case, so a regression
 * (map waiting for the whole copy) fails the "still gated" assertions
 * instead of hanging.
 */
#include <pthread.h>

#include "test_sim_util.h"

#define VA0	0x300000000ull		/* the copy's destination */
#define VA1	0x380000000ull		/* an unrelated range */
#define NPG	64u
#define PG	4096u

struct fx {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct tg *g;
	struct vg_as *as;
	struct tchan *t;
	pthread_t guard;
	int guard_stop;			/* atomic */
};

static void *guard_main(void *p)
{
	struct fx *f = p;
	int i;

	for (i = 0; i < 2000 &&
	     !__atomic_load_n(&f->guard_stop, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	__atomic_store_n(&f->g->gate, 0, __ATOMIC_RELEASE);
	return NULL;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sim = t_sim(64ull << 20, 0);
	f->ops = vg_sim_gpu_ops();
	f->g = tg_new();
	assert_int_equal(f->ops->as_create(f->sim, &f->as), 0);
	f->t = t_chan(f->sim, f->as, f->g, 16);
	t_bind(f->t);
	t_run(f->t);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	t_chan_free(f->t);
	f->ops->as_destroy(f->sim, f->as);
	t_sim_free(f->sim, 64ull << 20, f->g);
	free(f);
	return 0;
}

/* A guest buffer of n pages, byte i = seed + i * 7 (mod 256). */
static u64 guest_buf(struct fx *f, u32 n, u8 seed)
{
	u64 gpa = tg_alloc(f->g, (u64)n * PG);
	u8 *p = tg_ptr(f->g, gpa);
	u32 i;

	for (i = 0; i < n * PG; i++)
		p[i] = (u8)(seed + i * 7);
	return gpa;
}

/* Arm the gate on the guest read at gpa, submit, wait until the engine is there. */
static void submit_gated(struct fx *f, u64 gate_gpa)
{
	__atomic_store_n(&f->g->gate_hit, 0, __ATOMIC_RELAXED);
	f->g->gate_gpa = gate_gpa;
	__atomic_store_n(&f->g->gate, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&f->guard_stop, 0, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&f->guard, NULL, guard_main, f), 0);
	t_submit(f->t);
	while (!__atomic_load_n(&f->g->gate_hit, __ATOMIC_ACQUIRE))
		usleep(100);
}

static void open_gate(struct fx *f)
{
	__atomic_store_n(&f->g->gate, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&f->guard_stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(f->guard, NULL), 0);
}

/* GPU memory at va equals the guest bytes at gpa. */
static void check_va(struct fx *f, u64 va, u64 gpa, u32 len)
{
	u8 *buf = malloc(len);

	assert_non_null(buf);
	assert_int_equal(vg_sim_read_va(f->sim, f->as, va, buf, len), 0);
	assert_memory_equal(buf, tg_ptr(f->g, gpa), len);
	free(buf);
}

/*
 * Mid-copy: map an unrelated range, flush, read, then unmap and free the
 * copy's last quarter (host memory: ASan sees any touch after the free).
 * The copy then faults at the first unmapped page, having copied the rest.
 */
static void test_map_unmap_during_copy(void **state)
{
	struct fx *f = *state;
	u64 src = guest_buf(f, NPG, 3);
	u64 tail = VA0 + 48ull * PG;
	struct vg_mem *head, *rest, *other;
	u8 zero[PG], buf[PG];

	head = t_map_new(f->sim, f->as, VA0, 48ull * PG, VG_LOC_VRAM);
	rest = t_map_new(f->sim, f->as, tail, 16ull * PG, VG_LOC_HOST);
	assert_int_equal(f->ops->mem_alloc(f->sim, VG_LOC_VRAM, 4 * PG, &other),
			 0);

	/* The engine stops in the read of source page 32. */
	t_ce(f->t, src, VA0, 0, 0, NPG * PG, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
	submit_gated(f, src + 32ull * PG);

	assert_int_equal(f->ops->map(f->sim, f->as, VA1, 4 * PG, other, 0), 0);
	f->ops->tlb_flush(f->sim, f->as);
	/* All of that returned while the copy is still mid-way. */
	assert_int_equal(__atomic_load_n(&f->g->gate, __ATOMIC_ACQUIRE), 1);
	assert_int_not_equal(t_userd(f->t, VGMEM_USERD_GP_GET), f->t->put);
	check_va(f, VA0, src, 32 * PG);
	memset(zero, 0, sizeof(zero));
	assert_int_equal(vg_sim_read_va(f->sim, f->as, VA1, buf, PG), 0);
	assert_memory_equal(buf, zero, PG);

	f->ops->unmap(f->sim, f->as, tail, 16ull * PG);
	f->ops->mem_free(f->sim, rest);
	assert_int_equal(__atomic_load_n(&f->g->gate, __ATOMIC_ACQUIRE), 1);
	open_gate(f);

	assert_int_equal(t_idle(f->t), 0);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_ADDR_LO), (u32)tail);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_ADDR_HI),
			 (u32)(tail >> 32));
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_INFO),
			 VGMEM_CE_LAUNCH_DMA);
	assert_int_equal(f->t->faults, 1);
	check_va(f, VA0, src, 48 * PG);

	f->ops->unmap(f->sim, f->as, VA0, 48ull * PG);
	f->ops->unmap(f->sim, f->as, VA1, 4 * PG);
	f->ops->mem_free(f->sim, head);
	f->ops->mem_free(f->sim, other);
}

/*
 * Relocation's pattern mid-copy: the destination's pages are remapped to a
 * new mem (PTE replacement) and the TLB flushed. Line 0 filled the TLB for
 * those pages; line 1, run after the flush, must write the new mem only.
 */
static void test_remap_during_copy(void **state)
{
	struct fx *f = *state;
	u64 src = guest_buf(f, 32, 11);
	u32 len = 16 * PG;
	struct vg_mem *old, *new;

	old = t_map_new(f->sim, f->as, VA0, len, VG_LOC_VRAM);
	assert_int_equal(f->ops->mem_alloc(f->sim, VG_LOC_HOST, len, &new), 0);

	/* Two lines onto the same 16 pages; stop at line 1's first read. */
	t_ce(f->t, src, VA0, len, 0, len, 2,
	     VGMEM_CE_LAUNCH_SRC_PHYS | VGMEM_CE_LAUNCH_MULTI_LINE);
	submit_gated(f, src + len);
	check_va(f, VA0, src, len);

	/* Remap the pages and flush, as the core does after moving them. */
	assert_int_equal(f->ops->map(f->sim, f->as, VA0, len, new, 0), 0);
	f->ops->tlb_flush(f->sim, f->as);
	assert_int_equal(__atomic_load_n(&f->g->gate, __ATOMIC_ACQUIRE), 1);
	open_gate(f);
	assert_int_equal(t_idle(f->t), 0);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_GP_GET), f->t->put);

	/* Line 1's data is in the new mem; the old one still has line 0's. */
	check_va(f, VA0, src + len, len);
	f->ops->unmap(f->sim, f->as, VA0, len);
	assert_int_equal(f->ops->map(f->sim, f->as, VA0, len, old, 0), 0);
	check_va(f, VA0, src, len);

	f->ops->unmap(f->sim, f->as, VA0, len);
	f->ops->mem_free(f->sim, old);
	f->ops->mem_free(f->sim, new);
}

/*
 * Many kernel launches and CE copies racing with map/unmap/flush of their
 * own address space from another thread: every access either sees a page
 * mapped to its data or faults; nothing else (ASan checks the memory).
 */
struct racer {
	struct fx *f;
	int stop;		/* atomic */
	int rounds;		/* atomic */
	int err;		/* cmocka asserts only in the test's thread */
};

static void *racer_main(void *p)
{
	struct racer *r = p;
	struct fx *f = r->f;
	struct vg_mem *m;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) && !r->err) {
		r->err = f->ops->mem_alloc(f->sim, VG_LOC_HOST, 4 * PG, &m);
		if (r->err)
			break;
		r->err = f->ops->map(f->sim, f->as, VA1, 4 * PG, m, 0);
		f->ops->tlb_flush(f->sim, f->as);
		f->ops->unmap(f->sim, f->as, VA1, 4 * PG);
		f->ops->mem_free(f->sim, m);
		__atomic_add_fetch(&r->rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_kernels_race_map(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	struct racer r = { .f = f };
	struct vg_mem *m;
	pthread_t th;
	u32 i, v;

	m = t_map_new(f->sim, f->as, VA0, 1ull << 20, VG_LOC_VRAM);
	assert_int_equal(pthread_create(&th, NULL, racer_main, &r), 0);
	/* 40 launches, and more until the racer made some rounds. */
	for (i = 0; i < 40 ||
	     (__atomic_load_n(&r.rounds, __ATOMIC_RELAXED) < 20 && i < 100000);
	     i++) {
		memset(a, 0, sizeof(a));
		t_args64(a, 0, VA0);
		t_args64(a, 2, 1ull << 20);
		a[4] = 0x01020304u + i;
		t_kernel(f->t, VGMEM_K_MEMSET, a);
		t_run(f->t);
		/*
		 * The ring drained: the pushbuffer is free again, or a racer
		 * starved by a busy host would let the launches run past it.
		 */
		f->t->pb_pos = f->t->seg_start = 0;
		assert_int_equal(vg_sim_read_va(f->sim, f->as,
						VA0 + (1ull << 20) - 4, &v, 4),
				 0);
		assert_int_equal(v, 0x01020304u + i);
	}
	/* Not mapped at VA1 most of the time: a fault or a clean copy. */
	t_ce(f->t, VA0, VA1, 0, 0, 4 * PG, 1, 0);
	t_submit(f->t);
	assert_int_equal(t_idle(f->t), 0);
	v = t_userd(f->t, VGMEM_USERD_ERROR);
	assert_true(v == 0 || v == VGMEM_CHAN_ERR_VA);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.err, 0);
	assert_true(r.rounds >= 20);

	f->ops->unmap(f->sim, f->as, VA0, 1ull << 20);
	f->ops->mem_free(f->sim, m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_map_unmap_during_copy),
		T(test_remap_during_copy),
		T(test_kernels_race_map),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
