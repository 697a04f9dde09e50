// SPDX-License-Identifier: MIT
/*
 * The VFIO transport's guest-physical allocator (guest-driver/lib/vfio_ram.c,
 * over lib/util/range_alloc.c):
 * page rounding, first fit, coalescing, and frees that do not match the
 * heap refused without changing anything.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "guest-driver/lib/vfio_priv.h"

#define BASE	0x100000ull
#define PG	4096ull

static unsigned int nr_ranges(struct vgmem_gpa_heap *h)
{
	struct vg_range *r;
	unsigned int n = 0;

	for (r = h->ra.free; r; r = r->next)
		n++;
	return n;
}

static void test_init_rejects(void **state)
{
	struct vgmem_gpa_heap h;

	(void)state;
	assert_int_equal(vgmem_gpa_heap_init(&h, 0, 16 * PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_init(&h, BASE + 1, 16 * PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_init(&h, BASE, 0), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_init(&h, BASE, 16 * PG + 5), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_init(&h, ~0ull & ~(PG - 1), 16 * PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_init(NULL, BASE, 16 * PG), -EINVAL);
}

static void test_alloc_first_fit(void **state)
{
	struct vgmem_gpa_heap h;
	uint64_t a, b, c, d;

	(void)state;
	assert_int_equal(vgmem_gpa_heap_init(&h, BASE, 8 * PG), 0);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 0, &a), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 9 * PG, &a), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 1, &a), 0);
	assert_true(a == BASE);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, PG + 1, &b), 0);	/* two pages */
	assert_true(b == BASE + PG);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 3 * PG, &c), 0);
	assert_true(c == BASE + 3 * PG);
	assert_true(vgmem_gpa_heap_free_bytes(&h) == 2 * PG);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 3 * PG, &d), -ENOMEM);
	/* A hole of two pages at b is found first for a two-page request. */
	assert_int_equal(vgmem_gpa_heap_free(&h, b, PG + 1), 0);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 2 * PG, &d), 0);
	assert_true(d == b);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 2 * PG, &d), 0);
	assert_true(d == BASE + 6 * PG);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 1, &d), -ENOMEM);
	assert_true(vgmem_gpa_heap_free_bytes(&h) == 0);
	assert_null(h.ra.free);
	vgmem_gpa_heap_fini(&h);
}

static void test_free_coalesces(void **state)
{
	struct vgmem_gpa_heap h;
	uint64_t v[4];
	int i;

	(void)state;
	assert_int_equal(vgmem_gpa_heap_init(&h, BASE, 4 * PG), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(vgmem_gpa_heap_alloc(&h, PG, &v[i]), 0);
	assert_int_equal(vgmem_gpa_heap_free(&h, v[1], PG), 0);
	assert_int_equal(vgmem_gpa_heap_free(&h, v[3], PG), 0);
	assert_int_equal(nr_ranges(&h), 2);
	/* Between two free ranges: all three become one. */
	assert_int_equal(vgmem_gpa_heap_free(&h, v[2], PG), 0);
	assert_int_equal(nr_ranges(&h), 1);
	/* Before the free range: merged forward. */
	assert_int_equal(vgmem_gpa_heap_free(&h, v[0], PG), 0);
	assert_int_equal(nr_ranges(&h), 1);
	assert_true(h.ra.free->start == BASE && h.ra.free->size == 4 * PG);
	assert_true(vgmem_gpa_heap_free_bytes(&h) == 4 * PG);
	vgmem_gpa_heap_fini(&h);
}

static void test_bad_free_changes_nothing(void **state)
{
	struct vgmem_gpa_heap h;
	uint64_t a, b;

	(void)state;
	assert_int_equal(vgmem_gpa_heap_init(&h, BASE, 8 * PG), 0);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 2 * PG, &a), 0);
	assert_int_equal(vgmem_gpa_heap_alloc(&h, 2 * PG, &b), 0);
	assert_int_equal(vgmem_gpa_heap_free(&h, a, 2 * PG), 0);
	/* Double free, partly free, outside, unaligned, empty. */
	assert_int_equal(vgmem_gpa_heap_free(&h, a, 2 * PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_free(&h, a + PG, PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_free(&h, b, 3 * PG), -EINVAL);	/* into free space */
	assert_int_equal(vgmem_gpa_heap_free(&h, BASE - PG, PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_free(&h, BASE + 8 * PG, PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_free(&h, BASE + 7 * PG, 2 * PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_free(&h, b + 8, PG), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_free(&h, b, 0), -EINVAL);
	assert_int_equal(vgmem_gpa_heap_free(&h, ~0ull & ~(PG - 1), 2 * PG), -EINVAL);
	assert_true(vgmem_gpa_heap_free_bytes(&h) == 6 * PG);
	assert_int_equal(nr_ranges(&h), 2);
	assert_int_equal(vgmem_gpa_heap_free(&h, b, 2 * PG), 0);
	assert_int_equal(nr_ranges(&h), 1);
	vgmem_gpa_heap_fini(&h);
}

/* Random allocations and frees against a page map: never two owners. */
static void test_random_against_map(void **state)
{
	enum { PAGES = 256, SLOTS = 64 };
	struct vgmem_gpa_heap h;
	uint8_t map[PAGES];
	uint64_t va[SLOTS], sz[SLOTS], used = 0, x = 12345, p;
	int i, s, ret;

	(void)state;
	memset(map, 0, sizeof(map));
	memset(va, 0, sizeof(va));
	assert_int_equal(vgmem_gpa_heap_init(&h, BASE, PAGES * PG), 0);
	for (i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		s = (int)((x >> 33) % SLOTS);
		if (va[s]) {
			assert_int_equal(vgmem_gpa_heap_free(&h, va[s], sz[s]), 0);
			for (p = 0; p < sz[s] / PG; p++)
				map[(va[s] - BASE) / PG + p] = 0;
			used -= sz[s];
			va[s] = 0;
			continue;
		}
		sz[s] = PG * (1 + ((x >> 20) % 12));
		ret = vgmem_gpa_heap_alloc(&h, sz[s], &va[s]);
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			va[s] = 0;
			continue;
		}
		assert_true(va[s] >= BASE && va[s] + sz[s] <= BASE + PAGES * PG);
		for (p = 0; p < sz[s] / PG; p++) {
			assert_int_equal(map[(va[s] - BASE) / PG + p], 0);
			map[(va[s] - BASE) / PG + p] = 1;
		}
		used += sz[s];
		assert_true(vgmem_gpa_heap_free_bytes(&h) == PAGES * PG - used);
	}
	for (s = 0; s < SLOTS; s++)
		if (va[s])
			assert_int_equal(vgmem_gpa_heap_free(&h, va[s], sz[s]), 0);
	assert_int_equal(nr_ranges(&h), 1);
	assert_true(vgmem_gpa_heap_free_bytes(&h) == PAGES * PG);
	vgmem_gpa_heap_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_rejects),
		cmocka_unit_test(test_alloc_first_fit),
		cmocka_unit_test(test_free_coalesces),
		cmocka_unit_test(test_bad_free_changes_nothing),
		cmocka_unit_test(test_random_against_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
