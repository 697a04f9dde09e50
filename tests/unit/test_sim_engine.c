// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The software GPU's engine: method headers, classes, the copy engine, the
 * built-in kernels against CPU references, semaphores across channels and
 * idle waits.
 */
#include "test_sim_util.h"

#define VA0	0x100000000ull
#define MSZ	(1ull << 20)

struct fx {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct tg *g;
	struct vg_as *as;
	struct vg_mem *mem;
	struct tchan *t;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->sim = t_sim(64ull << 20, 0);
	f->ops = vg_sim_gpu_ops();
	f->g = tg_new();
	assert_int_equal(f->ops->as_create(f->sim, &f->as), 0);
	f->mem = t_map_new(f->sim, f->as, VA0, MSZ, VG_LOC_VRAM);
	f->t = t_chan(f->sim, f->as, f->g, 64);
	t_bind(f->t);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	t_chan_free(f->t);
	f->ops->unmap(f->sim, f->as, VA0, MSZ);
	f->ops->mem_free(f->sim, f->mem);
	f->ops->as_destroy(f->sim, f->as);
	t_sim_free(f->sim, 64ull << 20, f->g);
	free(f);
	return 0;
}

static u32 rd32(struct fx *f, u64 va)
{
	u32 v;

	assert_int_equal(vg_sim_read_va(f->sim, f->as, va, &v, 4), 0);
	return v;
}

static u64 rd64(struct fx *f, u64 va)
{
	u64 v;

	assert_int_equal(vg_sim_read_va(f->sim, f->as, va, &v, 8), 0);
	return v;
}

/* Write bytes into GPU memory through the CE from a guest buffer. */
static void upload(struct fx *f, u64 va, const void *buf, u32 len)
{
	u64 gpa = tg_alloc(f->g, len);

	memcpy(tg_ptr(f->g, gpa), buf, len);
	t_ce(f->t, gpa, va, 0, 0, len, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
	t_run(f->t);
}

/* ---- method headers -------------------------------------------------------- */

static void test_hdr_inc(void **state)
{
	struct fx *f = *state;

	t_sem(f->t, VA0 + 16, 0x1234, VGMEM_SEM_OP_RELEASE);
	t_run(f->t);
	assert_int_equal(rd32(f, VA0 + 16), 0x1234);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ENTRIES_DONE), 1);
}

static void test_hdr_noninc(void **state)
{
	struct fx *f = *state;
	u32 ab[2] = { (u32)(VA0 >> 32), (u32)VA0 + 32 };
	u32 c[3] = { 7, 8, 9 };

	t_inc(f->t, 0, VGMEM_MTHD_SEMAPHORE_A, ab, 2);
	/* All three go to SEMAPHORE_C: the last one wins. */
	t_noninc(f->t, 0, VGMEM_MTHD_SEMAPHORE_C, c, 3);
	t_mthd(f->t, 0, VGMEM_MTHD_SEMAPHORE_D, VGMEM_SEM_OP_RELEASE);
	t_run(f->t);
	assert_int_equal(rd32(f, VA0 + 32), 9);
}

static void test_hdr_immd(void **state)
{
	struct fx *f = *state;
	u32 ab[2] = { (u32)(VA0 >> 32), (u32)VA0 + 48 };

	t_inc(f->t, 0, VGMEM_MTHD_SEMAPHORE_A, ab, 2);
	t_immd(f->t, 0, VGMEM_MTHD_SEMAPHORE_C, 0x1abc);
	t_immd(f->t, 0, VGMEM_MTHD_NOP, 0);
	t_immd(f->t, 0, VGMEM_MTHD_SEMAPHORE_D, VGMEM_SEM_OP_RELEASE);
	t_run(f->t);
	assert_int_equal(rd32(f, VA0 + 48), 0x1abc);
}

static void test_hdr_inc_once(void **state)
{
	struct fx *f = *state;
	u32 ab[2] = { (u32)(VA0 >> 32), (u32)VA0 + 64 };
	/* C = 55, then D twice (the rest go to C + 4). */
	u32 cd[3] = { 55, VGMEM_SEM_OP_RELEASE, VGMEM_SEM_OP_RELEASE };

	t_inc(f->t, 0, VGMEM_MTHD_SEMAPHORE_A, ab, 2);
	t_inc_once(f->t, 0, VGMEM_MTHD_SEMAPHORE_C, cd, 3);
	t_run(f->t);
	assert_int_equal(rd32(f, VA0 + 64), 55);
}

static void test_hdr_many_entries(void **state)
{
	struct fx *f = *state;
	u32 i;

	/* Wrap the 64-entry ring twice, one release per entry. */
	for (i = 0; i < 130; i++) {
		t_sem(f->t, VA0 + 128, i, VGMEM_SEM_OP_RELEASE);
		t_run(f->t);
		assert_int_equal(rd32(f, VA0 + 128), i);
	}
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ENTRIES_DONE), 130);
}

/* ---- classes ---------------------------------------------------------------- */

static void expect_error(struct tchan *t, u32 err)
{
	assert_int_equal(t->ops->channel_idle_wait(t->sim, t->ch, T_TIMEOUT), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), err);
	assert_int_equal(t->faults, 1);
	assert_int_equal(t->fault_err, err);
}

static void test_set_object_unknown_class(void **state)
{
	struct fx *f = *state;

	t_mthd(f->t, 2, VGMEM_MTHD_SET_OBJECT, 0xdead);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_CLASS);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_INFO),
			 VGMEM_MTHD_SET_OBJECT);
}

static void test_unbound_subchannel(void **state)
{
	struct fx *f = *state;

	t_mthd(f->t, 6, VGMEM_CE_LAUNCH_DMA, 0);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_CLASS);
}

static void test_rebind_and_class_methods(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };

	/* Subchannel 4 becomes compute: a CE method is unknown there. */
	t_mthd(f->t, 4, VGMEM_MTHD_SET_OBJECT, VGMEM_CLASS_COMPUTE);
	t_args64(a, 0, VA0);
	t_args64(a, 2, 4096);
	a[4] = 0x01020304;
	t_mthd(f->t, 4, VGMEM_CP_KERNEL, VGMEM_K_MEMSET);
	t_inc(f->t, 4, VGMEM_CP_ARG(0), a, VGMEM_CP_NARGS);
	t_mthd(f->t, 4, VGMEM_CP_LAUNCH, 0);
	t_run(f->t);
	assert_int_equal(rd32(f, VA0 + 4092), 0x01020304);
	t_mthd(f->t, 4, VGMEM_CE_LINE_COUNT, 1);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_METHOD);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_INFO),
			 VGMEM_CE_LINE_COUNT);
}

static void test_unknown_host_method(void **state)
{
	struct fx *f = *state;

	t_mthd(f->t, 0, 0x50, 1);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_METHOD);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_INFO), 0x50);
}

static void test_bad_header_type(void **state)
{
	struct fx *f = *state;
	u64 gpa = f->t->pb_gpa + 4ull * f->t->pb_pos;

	t_dw(f->t, 0x40000000u);	/* type 2 */
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_METHOD);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_INFO), 0x40000000u);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_ADDR_LO), (u32)gpa);
}

static void test_packet_past_entry(void **state)
{
	struct fx *f = *state;

	/* INC of 3 dwords with only 1 in the entry. */
	t_dw(f->t, VGMEM_PKHDR(VGMEM_PKHDR_INC, 0, VGMEM_MTHD_SEMAPHORE_A, 3));
	t_dw(f->t, 0);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_METHOD);
}

static void test_bad_sem_op(void **state)
{
	struct fx *f = *state;

	t_sem(f->t, VA0, 1, 0x3);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_METHOD);
}

/* ---- copy engine -------------------------------------------------------------- */

static void test_ce_guest_va_guest(void **state)
{
	struct fx *f = *state;
	u64 src = tg_alloc(f->g, 20000), dst = tg_alloc(f->g, 20000);
	u8 *s = tg_ptr(f->g, src), *d = tg_ptr(f->g, dst);
	u32 i;

	for (i = 0; i < 20000; i++)
		s[i] = (u8)(i * 7 + 3);
	/* Unaligned VA, crossing pages. */
	t_ce(f->t, src, VA0 + 4093, 0, 0, 20000, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
	t_ce(f->t, VA0 + 4093, dst + 1, 0, 0, 19999, 1,
	     VGMEM_CE_LAUNCH_DST_PHYS);
	t_run(f->t);
	assert_memory_equal(d + 1, s, 19999);
	assert_int_equal(d[0], 0);
}

static void test_ce_multiline_pitch(void **state)
{
	struct fx *f = *state;
	u64 src = tg_alloc(f->g, 64 * 100), dst = tg_alloc(f->g, 200 * 100);
	u8 *s = tg_ptr(f->g, src), *d = tg_ptr(f->g, dst);
	u32 i, l;

	for (i = 0; i < 64 * 100; i++)
		s[i] = (u8)(i ^ (i >> 8));
	/* 100 lines of 40 bytes: guest pitch 64 -> VA pitch 4100 -> pitch 200. */
	t_ce(f->t, src, VA0 + 8, 64, 4100, 40, 100,
	     VGMEM_CE_LAUNCH_SRC_PHYS | VGMEM_CE_LAUNCH_MULTI_LINE);
	t_ce(f->t, VA0 + 8, dst, 4100, 200, 40, 100,
	     VGMEM_CE_LAUNCH_DST_PHYS | VGMEM_CE_LAUNCH_MULTI_LINE);
	t_run(f->t);
	for (l = 0; l < 100; l++) {
		assert_memory_equal(d + 200 * l, s + 64 * l, 40);
		for (i = 40; i < 200; i++)
			assert_int_equal(d[200 * l + i], 0);
	}
	/* The gaps between lines in VA stayed zero. */
	assert_int_equal(rd32(f, VA0 + 8 + 40), 0);
	assert_int_equal(rd32(f, VA0 + 4), 0);
}

static void test_ce_va_to_va_and_phys_to_phys(void **state)
{
	struct fx *f = *state;
	u64 src = tg_alloc(f->g, 10000), dst = tg_alloc(f->g, 10000);
	u8 *s = tg_ptr(f->g, src), *d = tg_ptr(f->g, dst);
	u32 i;

	for (i = 0; i < 10000; i++)
		s[i] = (u8)(i * 13);
	t_ce(f->t, src, VA0 + 100, 0, 0, 10000, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
	t_ce(f->t, VA0 + 100, VA0 + 65536 + 7, 0, 0, 10000, 1, 0);
	t_ce(f->t, VA0 + 65536 + 7, dst, 0, 0, 10000, 1,
	     VGMEM_CE_LAUNCH_DST_PHYS);
	t_run(f->t);
	assert_memory_equal(d, s, 10000);
	memset(d, 0, 10000);
	t_ce(f->t, src, dst, 0, 0, 9000, 1,
	     VGMEM_CE_LAUNCH_SRC_PHYS | VGMEM_CE_LAUNCH_DST_PHYS);
	t_run(f->t);
	assert_memory_equal(d, s, 9000);
	assert_int_equal(d[9000], 0);
}

static void test_ce_semaphore_release(void **state)
{
	struct fx *f = *state;
	u64 src = tg_alloc(f->g, 64);
	u32 sem[3] = { (u32)(VA0 >> 32), (u32)VA0 + 512, 0xfeed };

	memset(tg_ptr(f->g, src), 0x5a, 64);
	t_inc(f->t, 4, VGMEM_CE_SET_SEMAPHORE_A, sem, 3);
	t_ce(f->t, src, VA0, 0, 0, 64, 1,
	     VGMEM_CE_LAUNCH_SRC_PHYS | VGMEM_CE_LAUNCH_SEM_RELEASE);
	t_run(f->t);
	assert_int_equal(rd32(f, VA0 + 512), 0xfeed);
	assert_int_equal(rd32(f, VA0 + 60), 0x5a5a5a5a);
}

static void test_ce_bad_args(void **state)
{
	struct fx *f = *state;

	/* Block linear (no DST_PITCH) is not simulated. */
	t_mthd(f->t, 4, VGMEM_CE_LINE_LENGTH_IN, 4);
	t_mthd(f->t, 4, VGMEM_CE_LAUNCH_DMA, VGMEM_CE_LAUNCH_SRC_PITCH);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_ARG);
}

static void test_ce_zero_length(void **state)
{
	struct fx *f = *state;

	t_ce(f->t, VA0, VA0 + 4096, 0, 0, 0, 1, 0);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_ARG);
}

static void test_ce_guest_out_of_range(void **state)
{
	struct fx *f = *state;
	u64 bad = TG_BASE + TG_SIZE - 8;

	t_ce(f->t, bad, VA0, 0, 0, 64, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_GUEST_MEM);
	assert_int_equal(f->t->fault_addr, bad);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_ADDR_LO), (u32)bad);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_INFO),
			 VGMEM_CE_LAUNCH_DMA);
}

/* ---- kernels -------------------------------------------------------------------- */

static void launch(struct fx *f, u32 k, const u32 *a)
{
	t_kernel(f->t, k, a);
	t_run(f->t);
}

static void test_k_memset(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u8 buf[9000];
	u32 i;

	t_args64(a, 0, VA0 + 3);
	t_args64(a, 2, 9000);
	a[4] = 0xa1b2c3d4;
	launch(f, VGMEM_K_MEMSET, a);
	assert_int_equal(vg_sim_read_va(f->sim, f->as, VA0 + 3, buf, 9000), 0);
	for (i = 0; i < 9000; i++)
		assert_int_equal(buf[i], (u8)(0xa1b2c3d4u >> (8 * (i & 3))));
	assert_int_equal(rd32(f, VA0 + 9003) & 0xff, 0);
	assert_int_equal(rd32(f, VA0) & 0xffffff, 0);
}

static void test_k_vecadd(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u32 n = 3000, i, *x = malloc(4 * n), *y = malloc(4 * n), *z = malloc(4 * n);

	for (i = 0; i < n; i++) {
		x[i] = i * 2654435761u;
		y[i] = ~i + 17;
	}
	upload(f, VA0 + 4, x, 4 * n);
	upload(f, VA0 + 65536, y, 4 * n);
	t_args64(a, 0, VA0 + 4);
	t_args64(a, 2, VA0 + 65536);
	t_args64(a, 4, VA0 + 131072 + 8);
	a[6] = n;
	launch(f, VGMEM_K_VECADD, a);
	assert_int_equal(vg_sim_read_va(f->sim, f->as, VA0 + 131072 + 8, z, 4 * n), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(z[i], x[i] + y[i]);
	free(x);
	free(y);
	free(z);
}

static void test_k_checksum(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u8 buf[10001];
	u32 i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 31 + (i >> 5));
	upload(f, VA0 + 1, buf, sizeof(buf));
	t_args64(a, 0, VA0 + 1);
	t_args64(a, 2, sizeof(buf));
	t_args64(a, 4, VA0 + 200003);	/* unaligned result */
	launch(f, VGMEM_K_CHECKSUM, a);
	assert_int_equal(rd64(f, VA0 + 200003), t_fnv(buf, sizeof(buf)));
}

static void test_k_strided(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u32 w[4000], i;
	u64 sum = 0;

	for (i = 0; i < 4000; i++)
		w[i] = 0xf0000000u + i * 977;
	upload(f, VA0, w, sizeof(w));
	/* stride 12 over 15998 bytes: words 0, 3, 6, ... while off + 4 <= bytes */
	for (i = 0; i * 12 + 4 <= 15998; i++)
		sum += w[i * 3];
	t_args64(a, 0, VA0);
	t_args64(a, 2, 15998);
	a[4] = 12;
	t_args64(a, 5, VA0 + 300000);
	launch(f, VGMEM_K_STRIDED, a);
	assert_int_equal(rd64(f, VA0 + 300000), sum);
}

static void test_k_gather(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u32 w[3000], out[500], i;
	u64 st = 99;

	for (i = 0; i < 3000; i++)
		w[i] = i * 0x9e3779b9u;
	upload(f, VA0 + 4096, w, sizeof(w));
	t_args64(a, 0, VA0 + 4096);
	t_args64(a, 2, sizeof(w) + 3);	/* trailing partial word ignored */
	t_args64(a, 4, VA0 + 500000);
	a[6] = 500;
	a[7] = 99;
	launch(f, VGMEM_K_GATHER, a);
	assert_int_equal(vg_sim_read_va(f->sim, f->as, VA0 + 500000, out,
					sizeof(out)), 0);
	for (i = 0; i < 500; i++)
		assert_int_equal(out[i], w[vg_sim_gather_index(&st, 3000)]);
}

static void test_k_fill_pattern(void **state)
{
	struct fx *f = *state;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u8 *buf = malloc(70001);
	u32 i, w;

	t_args64(a, 0, VA0 + 8192);
	t_args64(a, 2, 70001);
	a[4] = 42;
	launch(f, VGMEM_K_FILL_PATTERN, a);
	assert_int_equal(vg_sim_read_va(f->sim, f->as, VA0 + 8192, buf, 70001), 0);
	for (i = 0; i < 70001; i++) {
		w = vgmem_pattern_word(42, i >> 2);
		assert_int_equal(buf[i], (u8)(w >> (8 * (i & 3))));
	}
	/* Checksum on the GPU equals the CPU's over the same pattern. */
	t_args64(a, 0, VA0 + 8192);
	t_args64(a, 2, 70001);
	t_args64(a, 4, VA0 + 600000);
	launch(f, VGMEM_K_CHECKSUM, a);
	assert_int_equal(rd64(f, VA0 + 600000), t_fnv(buf, 70001));
	assert_int_not_equal(vgmem_pattern_word(42, 0),
			     vgmem_pattern_word(43, 0));
	free(buf);
}

static void kernel_arg_error(void **state, u32 k, const u32 *a, u64 addr)
{
	struct fx *f = *state;

	t_kernel(f->t, k, a);
	t_submit(f->t);
	expect_error(f->t, VGMEM_CHAN_ERR_ARG);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_ERROR_INFO), VGMEM_CP_LAUNCH);
	assert_int_equal(f->t->fault_addr, addr);
}

static void test_k_zero_length(void **state)
{
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, VA0);
	kernel_arg_error(state, VGMEM_K_MEMSET, a, VA0);
}

static void test_k_overflow(void **state)
{
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, ~0ull - 8);
	t_args64(a, 2, 64);
	t_args64(a, 4, VA0);
	kernel_arg_error(state, VGMEM_K_CHECKSUM, a, ~0ull - 8);
}

static void test_k_unknown(void **state)
{
	u32 a[VGMEM_CP_NARGS] = { 0 };

	kernel_arg_error(state, 77, a, 0);
}

static void test_k_misaligned(void **state)
{
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_args64(a, 0, VA0 + 2);
	t_args64(a, 2, VA0 + 64);
	t_args64(a, 4, VA0 + 128);
	a[6] = 4;
	kernel_arg_error(state, VGMEM_K_VECADD, a, VA0 + 2);
}

/* ---- semaphores across channels, idle waits ---------------------------------- */

static void test_sem_acquire_release(void **state)
{
	struct fx *f = *state;
	struct tchan *b = t_chan(f->sim, f->as, f->g, 16);
	u32 a[VGMEM_CP_NARGS] = { 0 };

	/* Channel A waits for the semaphore at VA0 + 1024 to be 5, then memsets. */
	t_sem(f->t, VA0 + 1024, 5, VGMEM_SEM_OP_ACQUIRE);
	t_args64(a, 0, VA0 + 2048);
	t_args64(a, 2, 64);
	a[4] = 0x77777777;
	t_kernel(f->t, VGMEM_K_MEMSET, a);
	t_submit(f->t);
	/* Parked counts as idle, without completing the entry. */
	assert_int_equal(t_idle(f->t), 0);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_GP_GET), 0);
	assert_int_equal(rd32(f, VA0 + 2048), 0);

	/* B releases 4: not enough for "== 5"; then 5. */
	t_sem(b, VA0 + 1024, 4, VGMEM_SEM_OP_RELEASE);
	t_run(b);
	assert_int_equal(t_idle(f->t), 0);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_GP_GET), 0);
	t_sem(b, VA0 + 1024, 5, VGMEM_SEM_OP_RELEASE);
	t_run(b);
	/* Now A runs: wait for its ring to drain. */
	while (t_userd(f->t, VGMEM_USERD_GP_GET) != f->t->put)
		assert_int_equal(t_idle(f->t), 0);
	assert_int_equal(rd32(f, VA0 + 2048 + 60), 0x77777777);

	/* ACQ_GEQ: 5 >= 3 passes at once. */
	t_sem(f->t, VA0 + 1024, 3, VGMEM_SEM_OP_ACQ_GEQ);
	t_sem(f->t, VA0 + 1028, 1, VGMEM_SEM_OP_RELEASE);
	t_run(f->t);
	assert_int_equal(rd32(f, VA0 + 1028), 1);
	assert_int_equal(f->t->faults + b->faults, 0);
	t_chan_free(b);
}

static void test_idle_wait_busy_and_parked(void **state)
{
	struct fx *f = *state;
	struct tchan *p = t_chan(f->sim, f->as, f->g, 16);

	/* p parks on an acquire that nobody satisfies. */
	t_sem(p, VA0 + 4000, 1, VGMEM_SEM_OP_ACQUIRE);
	t_submit(p);
	assert_int_equal(t_idle(p), 0);

	/* The engine stalls inside t's pushbuffer fetch: t is busy. */
	t_sem(f->t, VA0, 9, VGMEM_SEM_OP_RELEASE);
	f->g->gate_gpa = f->t->pb_gpa + 4ull * f->t->seg_start;
	__atomic_store_n(&f->g->gate, 1, __ATOMIC_RELEASE);
	t_submit(f->t);
	while (!__atomic_load_n(&f->g->gate_hit, __ATOMIC_ACQUIRE))
		usleep(100);
	assert_int_equal(f->ops->channel_idle_wait(f->sim, f->t->ch,
						   20 * NSEC_PER_MSEC),
			 -ETIMEDOUT);
	assert_int_equal(f->ops->channel_idle_wait(f->sim, f->t->ch, 0),
			 -ETIMEDOUT);
	__atomic_store_n(&f->g->gate, 0, __ATOMIC_RELEASE);
	assert_int_equal(t_idle(f->t), 0);
	assert_int_equal(rd32(f, VA0), 9);
	assert_int_equal(t_userd(f->t, VGMEM_USERD_GP_GET), f->t->put);

	/* Still parked: idle, GP_GET not advanced. */
	assert_int_equal(t_idle(p), 0);
	assert_int_equal(t_userd(p, VGMEM_USERD_GP_GET), 0);
	t_chan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_hdr_inc),
		T(test_hdr_noninc),
		T(test_hdr_immd),
		T(test_hdr_inc_once),
		T(test_hdr_many_entries),
		T(test_set_object_unknown_class),
		T(test_unbound_subchannel),
		T(test_rebind_and_class_methods),
		T(test_unknown_host_method),
		T(test_bad_header_type),
		T(test_packet_past_entry),
		T(test_bad_sem_op),
		T(test_ce_guest_va_guest),
		T(test_ce_multiline_pitch),
		T(test_ce_va_to_va_and_phys_to_phys),
		T(test_ce_semaphore_release),
		T(test_ce_bad_args),
		T(test_ce_zero_length),
		T(test_ce_guest_out_of_range),
		T(test_k_memset),
		T(test_k_vecadd),
		T(test_k_checksum),
		T(test_k_strided),
		T(test_k_gather),
		T(test_k_fill_pattern),
		T(test_k_zero_length),
		T(test_k_overflow),
		T(test_k_unknown),
		T(test_k_misaligned),
		T(test_sem_acquire_release),
		T(test_idle_wait_busy_and_parked),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
