// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Channel faults of every kind put only the faulting channel in error: a
 * second channel in another address space keeps running and finishes its
 * work. Also hostile channel descriptors.
 */
#include "test_sim_util.h"

#define VA0	0x200000000ull
#define MSZ	(256ull << 10)

struct fx {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct tg *g;
	struct vg_as *as[2];
	struct vg_mem *mem[2];
	struct tchan *bad, *good;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int i;

	f->sim = t_sim(16ull << 20, 0);
	f->ops = vg_sim_gpu_ops();
	f->g = tg_new();
	for (i = 0; i < 2; i++) {
		assert_int_equal(f->ops->as_create(f->sim, &f->as[i]), 0);
		f->mem[i] = t_map_new(f->sim, f->as[i], VA0, MSZ, VG_LOC_VRAM);
	}
	f->bad = t_chan(f->sim, f->as[0], f->g, 8);
	f->good = t_chan(f->sim, f->as[1], f->g, 8);
	t_bind(f->bad);
	t_bind(f->good);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int i;

	t_chan_free(f->bad);
	t_chan_free(f->good);
	for (i = 0; i < 2; i++) {
		f->ops->mem_free(f->sim, f->mem[i]);
		f->ops->as_destroy(f->sim, f->as[i]);
	}
	assert_int_equal(vg_sim_vram_free(f->sim), 16ull << 20);
	vg_sim_destroy(f->sim);
	tg_free(f->g);
	free(f);
	return 0;
}

/*
 * The good channel runs several entries of work while (and after) the bad
 * one faults; then everything is checked.
 */
static void check_isolated(struct fx *f, u32 err, u32 info, u64 addr)
{
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u32 i, v;
	u64 sum;

	for (i = 0; i < 6; i++) {
		t_args64(a, 0, VA0 + i * 4096);
		t_args64(a, 2, 4096);
		a[4] = 0x1000 + i;
		t_kernel(f->good, VGMEM_K_MEMSET, a);
		t_submit(f->good);
	}
	t_args64(a, 0, VA0);
	t_args64(a, 2, 6 * 4096);
	t_args64(a, 4, VA0 + 100000);
	t_kernel(f->good, VGMEM_K_CHECKSUM, a);
	t_run(f->good);

	/* The bad channel's error, reported once, with its details. */
	assert_int_equal(f->ops->channel_idle_wait(f->sim, f->bad->ch,
						   T_TIMEOUT), 0);
	assert_int_equal(t_userd(f->bad, VGMEM_USERD_ERROR), err);
	assert_int_equal(t_userd(f->bad, VGMEM_USERD_ERROR_INFO), info);
	assert_int_equal(t_userd(f->bad, VGMEM_USERD_ERROR_ADDR_LO), (u32)addr);
	assert_int_equal(t_userd(f->bad, VGMEM_USERD_ERROR_ADDR_HI),
			 (u32)(addr >> 32));
	assert_int_equal(f->bad->faults, 1);
	assert_int_equal(f->bad->fault_err, err);
	assert_int_equal(f->bad->fault_addr, addr);

	/* The good one finished, right. */
	assert_int_equal(f->good->faults, 0);
	assert_int_equal(t_userd(f->good, VGMEM_USERD_ERROR), 0);
	for (i = 0; i < 6; i++) {
		assert_int_equal(vg_sim_read_va(f->sim, f->as[1],
						VA0 + i * 4096 + 4092, &v, 4), 0);
		assert_int_equal(v, 0x1000 + i);
	}
	assert_int_equal(vg_sim_read_va(f->sim, f->as[1], VA0 + 100000, &sum,
					8), 0);
	{
		u8 *buf = malloc(6 * 4096);

		assert_int_equal(vg_sim_read_va(f->sim, f->as[1], VA0, buf,
						6 * 4096), 0);
		assert_int_equal(sum, t_fnv(buf, 6 * 4096));
		free(buf);
	}

	/* The bad channel stays stopped: more work is not executed. */
	t_sem(f->bad, VA0, 1, VGMEM_SEM_OP_RELEASE);
	t_submit(f->bad);
	assert_int_equal(f->ops->channel_idle_wait(f->sim, f->bad->ch,
						   T_TIMEOUT), 0);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0, &v, 4), 0);
	assert_int_equal(v, 0);
	assert_int_equal(f->bad->faults, 1);
}

static void test_fault_unmapped_va(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };

	/* A memset that runs off the end of the mapping. */
	t_args64(a, 0, VA0 + MSZ - 100);
	t_args64(a, 2, 200);
	t_kernel(f->bad, VGMEM_K_MEMSET, a);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_VA, VGMEM_CP_LAUNCH, VA0 + MSZ);
}

static void test_fault_sem_unmapped(void **state)
{
	struct fx *f = *state;

	t_sem(f->bad, 0x7000000000ull, 1, VGMEM_SEM_OP_ACQUIRE);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_VA, VGMEM_MTHD_SEMAPHORE_D,
		       0x7000000000ull);
}

static void test_fault_bad_method(void **state)
{
	struct fx *f = *state;
	u64 gpa;

	t_mthd(f->bad, 1, 0x3100, 5);
	gpa = f->bad->pb_gpa + 4ull * (f->bad->pb_pos - 1);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_METHOD, 0x3100, gpa);
}

static void test_fault_bad_class(void **state)
{
	struct fx *f = *state;
	u64 gpa;

	t_mthd(f->bad, 3, VGMEM_MTHD_SET_OBJECT, VGMEM_CLASS_CHANNEL);
	gpa = f->bad->pb_gpa + 4ull * (f->bad->pb_pos - 1);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_CLASS, VGMEM_MTHD_SET_OBJECT, gpa);
}

static void test_fault_gp_rsvd(void **state)
{
	struct fx *f = *state;
	u64 e = VGMEM_GP_ENTRY(f->bad->pb_gpa, 1) | (1ull << 41);	/* bit 9 */

	t_put_entry(f->bad, e);
	check_isolated(f, VGMEM_CHAN_ERR_GPFIFO, 0, f->bad->pb_gpa);
}

static void test_fault_gp_zero_length(void **state)
{
	struct fx *f = *state;

	t_put_entry(f->bad, VGMEM_GP_ENTRY(f->bad->pb_gpa, 0));
	check_isolated(f, VGMEM_CHAN_ERR_GPFIFO, 0, f->bad->pb_gpa);
}

static void test_fault_gp_put_range(void **state)
{
	struct fx *f = *state;

	__atomic_store_n((u32 *)(f->bad->userd + VGMEM_USERD_GP_PUT), 8,
			 __ATOMIC_RELEASE);
	check_isolated(f, VGMEM_CHAN_ERR_GPFIFO, 8, 0);
}

static void test_fault_pushbuf_range(void **state)
{
	struct fx *f = *state;
	u64 pb = TG_BASE + TG_SIZE - 8;

	/* 4 dwords, only 2 inside guest memory. */
	t_put_entry(f->bad, VGMEM_GP_ENTRY(pb, 4));
	check_isolated(f, VGMEM_CHAN_ERR_PUSHBUF, 0, pb);
}

static void test_fault_guest_phys(void **state)
{
	struct fx *f = *state;

	t_ce(f->bad, VA0, 0x40000000ull, 0, 0, 16, 1, VGMEM_CE_LAUNCH_DST_PHYS);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_GUEST_MEM, VGMEM_CE_LAUNCH_DMA,
		       0x40000000ull);
}

static void test_fault_kernel_zero_length(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, VA0);
	t_args64(a, 2, 0);
	t_args64(a, 4, VA0 + 64);
	t_kernel(f->bad, VGMEM_K_CHECKSUM, a);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_ARG, VGMEM_CP_LAUNCH, VA0);
}

static void test_fault_kernel_overflow(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, 0xfffffffffffff000ull);
	t_args64(a, 2, 0x2000);
	a[4] = 1;
	t_kernel(f->bad, VGMEM_K_FILL_PATTERN, a);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_ARG, VGMEM_CP_LAUNCH,
		       0xfffffffffffff000ull);
}

static void test_fault_vecadd_past_40_bits(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, VA0);
	t_args64(a, 2, VA0);
	t_args64(a, 4, (1ull << 40) - 8);
	a[6] = 4;	/* 16 bytes: ends past 2^40 */
	t_kernel(f->bad, VGMEM_K_VECADD, a);
	t_submit(f->bad);
	check_isolated(f, VGMEM_CHAN_ERR_ARG, VGMEM_CP_LAUNCH, (1ull << 40) - 8);
}

/* Hostile channel descriptors are refused and create nothing. */
static void test_chan_create_hostile(void **state)
{
	struct fx *f = *state;
	const struct vg_gpu_ops *ops = f->ops;
	struct vg_guest_mem gm = { tg_read, tg_write, f->g };
	struct vg_channel_desc d = { .gpfifo_gpa = TG_BASE, .gpfifo_entries = 8,
				     .gmem = &gm };
	struct vg_bchan *ch = NULL;
	void *userd = NULL;

	d.gpfifo_entries = 12;
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 -EINVAL);
	d.gpfifo_entries = 2;
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 -EINVAL);
	d.gpfifo_entries = 2 * VGMEM_GP_ENTRIES_MAX;
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 -EINVAL);
	d.gpfifo_entries = 8;
	d.gpfifo_gpa = TG_BASE + 4;
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 -EINVAL);
	d.gpfifo_gpa = TG_BASE + TG_SIZE - 32;	/* ring sticks out */
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 -EINVAL);
	d.gpfifo_gpa = ~0ull - 7;
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 -EINVAL);
	d.gpfifo_gpa = TG_BASE;
	d.gmem = NULL;
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 -EINVAL);
	assert_null(ch);
	assert_null(userd);
	/* A valid one still works afterwards. */
	d.gmem = &gm;
	assert_int_equal(ops->channel_create(f->sim, f->as[0], &d, &ch, &userd),
			 0);
	assert_non_null(userd);
	assert_int_equal(ops->channel_idle_wait(f->sim, ch, T_TIMEOUT), 0);
	ops->channel_destroy(f->sim, ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_fault_unmapped_va),
		T(test_fault_sem_unmapped),
		T(test_fault_bad_method),
		T(test_fault_bad_class),
		T(test_fault_gp_rsvd),
		T(test_fault_gp_zero_length),
		T(test_fault_gp_put_range),
		T(test_fault_pushbuf_range),
		T(test_fault_guest_phys),
		T(test_fault_kernel_zero_length),
		T(test_fault_kernel_overflow),
		T(test_fault_vecadd_past_40_bits),
		T(test_chan_create_hostile),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
