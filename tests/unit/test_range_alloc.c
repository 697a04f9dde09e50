// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The shared first-fit range allocator (lib/util/range_alloc.c) that
 * libvgmem's VFIO transport and the userspace host's guest RAM use: first
 * fit, rounding to the alignment, coalescing, exhaustion, and frees that do
 * not match refused without changing anything.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/range_alloc.h"

#define BASE	0x10000ull
#define AL	0x1000ull

static unsigned int nr_ranges(const struct vg_range_alloc *ra)
{
	const struct vg_range *r;
	unsigned int n = 0;

	for (r = ra->free; r; r = r->next) {
		/* sorted, never empty, never touching the next */
		assert_true(r->size);
		if (r->next)
			assert_true(r->start + r->size < r->next->start);
		n++;
	}
	return n;
}

static void test_init(void **state)
{
	struct vg_range_alloc ra;

	(void)state;
	assert_int_equal(vg_range_init(NULL, BASE, 4 * AL, AL), -EINVAL);
	assert_int_equal(vg_range_init(&ra, BASE, 0, AL), -EINVAL);
	assert_int_equal(vg_range_init(&ra, BASE, 4 * AL, 0), -EINVAL);
	assert_int_equal(vg_range_init(&ra, BASE, 4 * AL, 3 * AL), -EINVAL);
	assert_int_equal(vg_range_init(&ra, BASE + 8, 4 * AL, AL), -EINVAL);
	assert_int_equal(vg_range_init(&ra, BASE, 4 * AL + 8, AL), -EINVAL);
	assert_int_equal(vg_range_init(&ra, ~0ull & ~(AL - 1), 2 * AL, AL), -EINVAL);
	/* base 0 and byte alignment are the users' business, not refused */
	assert_int_equal(vg_range_init(&ra, 0, 7, 1), 0);
	assert_true(ra.free_bytes == 7);
	vg_range_fini(&ra);
	assert_null(ra.free);
	vg_range_fini(&ra);	/* twice is harmless */
}

static void test_first_fit_and_alignment(void **state)
{
	struct vg_range_alloc ra;
	uint64_t a, b, c, d;

	(void)state;
	assert_int_equal(vg_range_init(&ra, BASE, 8 * AL, AL), 0);
	assert_int_equal(vg_range_alloc(&ra, 0, &a), -EINVAL);
	assert_int_equal(vg_range_alloc(&ra, 8 * AL + 1, &a), -EINVAL);
	assert_int_equal(vg_range_alloc(&ra, 1, &a), 0);		/* one unit */
	assert_true(a == BASE);
	assert_int_equal(vg_range_alloc(&ra, AL + 1, &b), 0);	/* two */
	assert_true(b == BASE + AL);
	assert_int_equal(vg_range_alloc(&ra, 3 * AL, &c), 0);
	assert_true(c == BASE + 3 * AL);
	assert_true(ra.free_bytes == 2 * AL);
	/* Free a then b: one hole of three units at the front. */
	assert_int_equal(vg_range_free(&ra, a, 1), 0);
	assert_int_equal(vg_range_free(&ra, b, AL + 1), 0);
	assert_int_equal(nr_ranges(&ra), 2);
	/* The lowest range that fits wins, not the best fit. */
	assert_int_equal(vg_range_alloc(&ra, AL, &d), 0);
	assert_true(d == BASE);
	assert_int_equal(vg_range_alloc(&ra, 2 * AL, &d), 0);
	assert_true(d == BASE + AL);
	assert_int_equal(vg_range_alloc(&ra, 2 * AL, &d), 0);
	assert_true(d == BASE + 6 * AL);
	assert_true(ra.free_bytes == 0);
	assert_null(ra.free);
	vg_range_fini(&ra);
}

static void test_exhaustion(void **state)
{
	struct vg_range_alloc ra;
	uint64_t a = 77;
	int i;

	(void)state;
	assert_int_equal(vg_range_init(&ra, BASE, 4 * AL, AL), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(vg_range_alloc(&ra, AL, &a), 0);
	a = 77;
	assert_int_equal(vg_range_alloc(&ra, 1, &a), -ENOMEM);
	assert_true(a == 77);	/* untouched on failure */
	/* Room in total but not in one piece. */
	assert_int_equal(vg_range_free(&ra, BASE, AL), 0);
	assert_int_equal(vg_range_free(&ra, BASE + 2 * AL, AL), 0);
	assert_int_equal(vg_range_alloc(&ra, 2 * AL, &a), -ENOMEM);
	assert_true(ra.free_bytes == 2 * AL);
	vg_range_fini(&ra);
}

static void test_coalescing(void **state)
{
	struct vg_range_alloc ra;
	uint64_t v[5];
	int i;

	(void)state;
	assert_int_equal(vg_range_init(&ra, BASE, 5 * AL, AL), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(vg_range_alloc(&ra, AL, &v[i]), 0);
	assert_int_equal(vg_range_free(&ra, v[1], AL), 0);
	assert_int_equal(vg_range_free(&ra, v[3], AL), 0);
	assert_int_equal(nr_ranges(&ra), 2);
	/* After a free range: merged backward. */
	assert_int_equal(vg_range_free(&ra, v[4], AL), 0);
	assert_int_equal(nr_ranges(&ra), 2);
	/* Between two: all three become one. */
	assert_int_equal(vg_range_free(&ra, v[2], AL), 0);
	assert_int_equal(nr_ranges(&ra), 1);
	/* Before: merged forward. */
	assert_int_equal(vg_range_free(&ra, v[0], AL), 0);
	assert_int_equal(nr_ranges(&ra), 1);
	assert_true(ra.free->start == BASE && ra.free->size == 5 * AL);
	assert_true(ra.free_bytes == 5 * AL);
	vg_range_fini(&ra);
}

static void test_bad_free_refused(void **state)
{
	struct vg_range_alloc ra;
	uint64_t a, b;

	(void)state;
	assert_int_equal(vg_range_init(&ra, BASE, 8 * AL, AL), 0);
	assert_int_equal(vg_range_alloc(&ra, 2 * AL, &a), 0);
	assert_int_equal(vg_range_alloc(&ra, 2 * AL, &b), 0);
	assert_int_equal(vg_range_free(&ra, a, 2 * AL), 0);
	/* double, partly free, into free space, outside, unaligned, empty */
	assert_int_equal(vg_range_free(&ra, a, 2 * AL), -EINVAL);
	assert_int_equal(vg_range_free(&ra, a + AL, AL), -EINVAL);
	assert_int_equal(vg_range_free(&ra, b, 3 * AL), -EINVAL);
	assert_int_equal(vg_range_free(&ra, BASE - AL, AL), -EINVAL);
	assert_int_equal(vg_range_free(&ra, BASE + 8 * AL, AL), -EINVAL);
	assert_int_equal(vg_range_free(&ra, BASE + 7 * AL, 2 * AL), -EINVAL);
	assert_int_equal(vg_range_free(&ra, b + 8, AL), -EINVAL);
	assert_int_equal(vg_range_free(&ra, b, 0), -EINVAL);
	assert_int_equal(vg_range_free(&ra, b, ~0ull), -EINVAL);
	assert_int_equal(vg_range_free(&ra, ~0ull & ~(AL - 1), 2 * AL), -EINVAL);
	assert_true(ra.free_bytes == 6 * AL);
	assert_int_equal(nr_ranges(&ra), 2);
	assert_int_equal(vg_range_free(&ra, b, 2 * AL), 0);
	assert_int_equal(nr_ranges(&ra), 1);
	assert_true(ra.free_bytes == 8 * AL);
	vg_range_fini(&ra);
}

/* Random allocations and frees against a unit map: never two owners. */
static void test_random_against_map(void **state)
{
	enum { UNITS = 128, SLOTS = 32 };
	struct vg_range_alloc ra;
	uint8_t map[UNITS];
	uint64_t at[SLOTS], sz[SLOTS], used = 0, x = 777, u;
	int i, s, ret;

	(void)state;
	memset(map, 0, sizeof(map));
	memset(at, 0, sizeof(at));
	assert_int_equal(vg_range_init(&ra, BASE, UNITS * AL, AL), 0);
	for (i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		s = (int)((x >> 33) % SLOTS);
		if (at[s]) {
			assert_int_equal(vg_range_free(&ra, at[s], sz[s]), 0);
			for (u = 0; u < (sz[s] + AL - 1) / AL; u++)
				map[(at[s] - BASE) / AL + u] = 0;
			used -= (sz[s] + AL - 1) / AL * AL;
			at[s] = 0;
			continue;
		}
		sz[s] = 1 + (x >> 16) % (10 * AL);	/* not aligned */
		ret = vg_range_alloc(&ra, sz[s], &at[s]);
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			at[s] = 0;
			continue;
		}
		assert_true(at[s] % AL == 0);
		assert_true(at[s] >= BASE && at[s] + sz[s] <= BASE + UNITS * AL);
		for (u = 0; u < (sz[s] + AL - 1) / AL; u++) {
			assert_int_equal(map[(at[s] - BASE) / AL + u], 0);
			map[(at[s] - BASE) / AL + u] = 1;
		}
		used += (sz[s] + AL - 1) / AL * AL;
		assert_true(ra.free_bytes == UNITS * AL - used);
		nr_ranges(&ra);
	}
	for (s = 0; s < SLOTS; s++)
		if (at[s])
			assert_int_equal(vg_range_free(&ra, at[s], sz[s]), 0);
	assert_int_equal(nr_ranges(&ra), 1);
	assert_true(ra.free_bytes == UNITS * AL);
	vg_range_fini(&ra);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_first_fit_and_alignment),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_coalescing),
		cmocka_unit_test(test_bad_free_refused),
		cmocka_unit_test(test_random_against_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
