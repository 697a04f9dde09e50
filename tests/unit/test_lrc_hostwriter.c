// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Host writers outside the cache (a plain pwrite, another process,
 * virtiofsd for another VM) against bytes the cache changed and has not
 * written back yet: both sides' bytes survive, in either order, because
 * the cache detects the outside writer against its storage base (what it
 * last read from or wrote to the file) and merges the page 3-way. A true
 * conflict (the same byte on both sides) goes to the outside writer:
 * STORAGE's changes are applied over the host copy (docs/lrc.md).
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)

struct hw {
	struct lfx x;
	struct lfx_vm *a;
	struct ms_file *f;
	struct vg_lrc_file *hf;
	u8 want[2 * 64 * 1024];
	u64 va;
};

static void hw_init(struct hw *t, u32 flags)
{
	lfx_init(&t->x, 1, 64 * MiB, 8 * MiB);
	t->f = ms_add(&t->x.ms, "/srv/share0", "w.bin", 2 * GP);
	lfx_pattern(t->f->data, t->f->size, 9);
	memcpy(t->want, t->f->data, sizeof(t->want));
	t->a = lfx_vm(&t->x, 0);
	t->va = lfx_map(t->a, "w.bin", 0, 2 * GP, flags);
	assert_int_equal(vg_lrc_host_open(t->x.lrc, "/srv/share0", "w.bin",
					  true, &t->hf), 0);
}

/* A host process writing through the cache (not written back yet). */
static void hw_cache_write(struct hw *t, u64 off, u8 v, u32 len)
{
	lfx_fill_cache(t->hf, t->want, off, v, len);
}

static void hw_ext_write(struct hw *t, u64 off, u8 v, u32 len)
{
	lfx_fill_ext(t->f, t->want, off, v, len);
}

/* GPU after acquire, host read and the file after fsync all say want. */
static void hw_check(struct hw *t)
{
	static u8 buf[2 * 64 * 1024];

	assert_int_equal(vg_lrc_acquire(t->a->ctx, t->va, 0), 0);
	lfx_gpu_read(&t->x, t->a, t->va, buf, sizeof(buf));
	assert_memory_equal(buf, t->want, sizeof(buf));
	assert_int_equal(vg_lrc_host_read(t->hf, 0, buf, sizeof(buf)),
			 (s64)sizeof(buf));
	assert_memory_equal(buf, t->want, sizeof(buf));
	assert_int_equal(vg_lrc_host_fsync(t->hf), 0);
	assert_memory_equal(t->f->data, t->want, sizeof(buf));
	/* Nothing left to take in: the file and the cache agree. */
	assert_int_equal(vg_lrc_acquire(t->a->ctx, t->va, 0), 0);
	lfx_gpu_read(&t->x, t->a, t->va, buf, sizeof(buf));
	assert_memory_equal(buf, t->want, sizeof(buf));
}

static void hw_fini(struct hw *t)
{
	vg_lrc_host_close(t->hf);
	lfx_fini(&t->x);
}

/* (a) cache write first, then an outside write to other bytes of the page. */
static void test_cache_then_outside(void **state)
{
	struct hw t;

	(void)state;
	hw_init(&t, VGMEM_FILE_RO);
	hw_cache_write(&t, 100, 0xc1, 64);
	hw_ext_write(&t, 1000, 0xe1, 64);
	hw_check(&t);
	hw_fini(&t);
}

/* (b) outside write first, then a cache write to other bytes, no acquire. */
static void test_outside_then_cache(void **state)
{
	struct hw t;
	u8 buf[64];

	(void)state;
	hw_init(&t, VGMEM_FILE_RO);
	/* The page is cached before the outside writer comes. */
	assert_int_equal(vg_lrc_host_read(t.hf, 0, buf, sizeof(buf)), 64);
	hw_ext_write(&t, 1000, 0xe2, 64);
	hw_cache_write(&t, 100, 0xc2, 64);
	/* The write-back must not put the page's old bytes over it. */
	assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
	assert_memory_equal(t.f->data, t.want, 2 * GP);
	hw_check(&t);
	hw_fini(&t);
}

/* A GPU release merged into the host copy, not written back, then outside. */
static void test_gpu_merged_then_outside(void **state)
{
	struct hw t;
	u8 buf[256];

	(void)state;
	hw_init(&t, VGMEM_FILE_RW);
	memset(buf, 0x6a, sizeof(buf));
	lfx_gpu_write(&t.x, t.a, t.va + GP + 300, buf, sizeof(buf));
	memset(t.want + GP + 300, 0x6a, sizeof(buf));
	assert_int_equal(vg_lrc_release(t.a->ctx, t.va, 0), 0);
	/* The host read merges the release into the host copy. */
	assert_int_equal(vg_lrc_host_read(t.hf, GP, buf, sizeof(buf)), 256);
	hw_ext_write(&t, GP + 2000, 0xe3, 64);
	hw_ext_write(&t, 20, 0xe4, 8);
	hw_check(&t);
	hw_fini(&t);
}

/* Several rounds of both, alternating, across both GPU pages. */
static void test_interleaved_rounds(void **state)
{
	struct hw t;
	u64 rs = 11;
	u32 r, k;

	(void)state;
	hw_init(&t, VGMEM_FILE_RW);
	for (r = 0; r < 8; r++) {
		for (k = 0; k < 6; k++) {
			u64 off = vg_splitmix64(&rs) % (2 * GP - 64);
			u8 v = (u8)(r * 16 + k + 1);

			if ((k + r) & 1)
				hw_ext_write(&t, off, v, 1 + (u32)(off % 64));
			else
				hw_cache_write(&t, off, v, 1 + (u32)(off % 64));
		}
		if (r & 1)
			hw_check(&t);
		else
			assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va, 0), 0);
	}
	hw_check(&t);
	hw_fini(&t);
}

/* The same bytes on both sides: the outside writer (STORAGE) wins. */
static void test_true_conflict_outside_wins(void **state)
{
	struct hw t;

	(void)state;
	hw_init(&t, VGMEM_FILE_RO);
	hw_cache_write(&t, 500, 0xc5, 100);
	hw_ext_write(&t, 550, 0xe5, 100);	/* overlaps 550..599 */
	hw_check(&t);
	/* And the other order: cache after outside, same bytes. */
	hw_ext_write(&t, 700, 0xe6, 100);
	hw_cache_write(&t, 700, 0xc6, 50);
	memset(t.want + 700, 0xe6, 100);	/* still the outside writer's */
	hw_check(&t);
	hw_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_then_outside),
		cmocka_unit_test(test_outside_then_cache),
		cmocka_unit_test(test_gpu_merged_then_outside),
		cmocka_unit_test(test_interleaved_rounds),
		cmocka_unit_test(test_true_conflict_outside_wins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
