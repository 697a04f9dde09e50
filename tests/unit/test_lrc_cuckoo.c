// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuckoo filter (core/lrc/cuckoo.c): no false negatives with the table
 * filled to 95% of its slots (over 100k keys, both random and page-like
 * structured keys), a false-positive rate within 2 * 4 / 2^16, delete
 * removing exactly what was inserted, -ENOSPC on a full table leaving every
 * slot exactly as it was, bad capacities and allocation failure refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "host-module/os/os.h"
#include "host-module/core/lrc/lrc_cuckoo.h"

#define NKEYS_MAX	200000

static u64 keys[NKEYS_MAX];
static u64 rs;

static u64 rnd64(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* Random keys, or page keys (file id << 32 | page index) if structured. */
static void make_keys(u32 n, bool structured)
{
	u32 i;

	for (i = 0; i < n; i++)
		keys[i] = structured ? ((u64)(i / 5000 + 1) << 32) | (i % 5000) :
				       rnd64();
}

static u32 slots_of(const struct vg_cuckoo *cf)
{
	return cf->nr_buckets * 4;
}

static void test_init_bad(void **state)
{
	struct vg_cuckoo cf;
	unsigned long f;

	(void)state;
	assert_int_equal(vg_cuckoo_init(&cf, 0, 1), -EINVAL);
	assert_null(cf.slots);
	assert_false(vg_cuckoo_maybe(&cf, 5));
	assert_false(vg_cuckoo_delete(&cf, 5));
	assert_int_equal(vg_cuckoo_init(&cf, (1u << 30) + 1, 1), -EINVAL);
	assert_int_equal(vg_cuckoo_init(&cf, 0xffffffffu, 1), -EINVAL);
	f = os_alloc_failures();
	os_fail_alloc_after(0);
	assert_int_equal(vg_cuckoo_init(&cf, 1000, 1), -ENOMEM);
	os_fail_alloc_after(-1);
	assert_int_equal(os_alloc_failures(), f + 1);
	assert_null(cf.slots);
	assert_int_equal(vg_cuckoo_bytes(&cf), 0);

	/* capacity at 95% load rounds up to a power of two of buckets */
	assert_int_equal(vg_cuckoo_init(&cf, 1, 1), 0);
	assert_int_equal(cf.nr_buckets, 1);
	assert_int_equal(vg_cuckoo_bytes(&cf), 8);
	vg_cuckoo_fini(&cf);
	assert_int_equal(vg_cuckoo_init(&cf, 100000, 1), 0);
	assert_true(cf.nr_buckets * 4 * 95ull >= 100000ull * 100);
	assert_true(is_power_of_2(cf.nr_buckets));
	assert_int_equal(vg_cuckoo_bytes(&cf), cf.nr_buckets * 8);
	vg_cuckoo_fini(&cf);
}

static void fill_95(struct vg_cuckoo *cf, bool structured, u32 *n)
{
	u32 i;

	*n = slots_of(cf) * 95 / 100;
	assert_true(*n >= 100000 && *n <= NKEYS_MAX);
	make_keys(*n, structured);
	for (i = 0; i < *n; i++)
		assert_int_equal(vg_cuckoo_insert(cf, keys[i]), 0);
	assert_int_equal(cf->nr_items, *n);
}

static void no_false_negatives(bool structured)
{
	struct vg_cuckoo cf;
	u32 n, i;

	rs = structured ? 11 : 12;
	assert_int_equal(vg_cuckoo_init(&cf, 100000, 77), 0);
	fill_95(&cf, structured, &n);
	for (i = 0; i < n; i++)
		assert_true(vg_cuckoo_maybe(&cf, keys[i]));
	vg_cuckoo_fini(&cf);
}

static void test_no_false_negatives_random(void **state)
{
	(void)state;
	no_false_negatives(false);
}

static void test_no_false_negatives_pages(void **state)
{
	(void)state;
	no_false_negatives(true);
}

/*
 * An absent key matches one of at most 8 fingerprints (two buckets of 4),
 * each with probability 1/65535: the rate is at most 8 / 65535 = 1.22e-4.
 * 1M absent keys at 95% load expect ~116 hits (sd ~11); the bound allows
 * 25% over the full-table rate, about 4 sd.
 */
static void test_false_positive_rate(void **state)
{
	struct vg_cuckoo cf;
	u32 n, i, fp = 0;
	const u32 q = 1000000;

	(void)state;
	rs = 13;
	assert_int_equal(vg_cuckoo_init(&cf, 100000, 5), 0);
	fill_95(&cf, false, &n);
	/* fresh random 64-bit keys: one equal to an inserted key is 2^-44 */
	for (i = 0; i < q; i++)
		fp += vg_cuckoo_maybe(&cf, rnd64());
	print_message("false positives: %u in %u (bound %u)\n", fp, q,
		      (u32)(q * 8ull * 125 / 100 / 65535));
	assert_true((u64)fp * 65535 * 100 <= (u64)q * 8 * 125);
	vg_cuckoo_fini(&cf);
}

static void test_delete(void **state)
{
	struct vg_cuckoo cf;
	u32 n, i, still = 0;

	(void)state;
	rs = 14;
	assert_int_equal(vg_cuckoo_init(&cf, 100000, 9), 0);
	fill_95(&cf, false, &n);
	for (i = 0; i < n; i += 2)
		assert_true(vg_cuckoo_delete(&cf, keys[i]));
	assert_int_equal(cf.nr_items, n - (n + 1) / 2);
	for (i = 1; i < n; i += 2)
		assert_true(vg_cuckoo_maybe(&cf, keys[i]));
	/* deleted keys are gone but for false positives */
	for (i = 0; i < n; i += 2)
		still += vg_cuckoo_maybe(&cf, keys[i]);
	assert_true(still * 1000ull < n);
	/* re-insert them: all found again */
	for (i = 0; i < n; i += 2)
		assert_int_equal(vg_cuckoo_insert(&cf, keys[i]), 0);
	for (i = 0; i < n; i++)
		assert_true(vg_cuckoo_maybe(&cf, keys[i]));
	/* delete all: empty table */
	for (i = 0; i < n; i++)
		assert_true(vg_cuckoo_delete(&cf, keys[i]));
	assert_int_equal(cf.nr_items, 0);
	for (i = 0; i < slots_of(&cf); i++)
		assert_int_equal(cf.slots[i], 0);
	assert_false(vg_cuckoo_delete(&cf, keys[0]));
	assert_false(vg_cuckoo_maybe(&cf, keys[0]));
	vg_cuckoo_fini(&cf);
}

/* A key inserted twice is held twice; one delete leaves it present. */
static void test_duplicate(void **state)
{
	struct vg_cuckoo cf;

	(void)state;
	assert_int_equal(vg_cuckoo_init(&cf, 64, 3), 0);
	assert_int_equal(vg_cuckoo_insert(&cf, 42), 0);
	assert_int_equal(vg_cuckoo_insert(&cf, 42), 0);
	assert_true(vg_cuckoo_delete(&cf, 42));
	assert_true(vg_cuckoo_maybe(&cf, 42));
	assert_true(vg_cuckoo_delete(&cf, 42));
	assert_false(vg_cuckoo_maybe(&cf, 42));
	assert_int_equal(cf.nr_items, 0);
	vg_cuckoo_fini(&cf);
}

/*
 * Fill a small table until inserts fail: each -ENOSPC leaves every slot
 * and the item count as they were, and every key inserted before is still
 * found. The first failure only comes at a high load.
 */
static void test_enospc_consistent(void **state)
{
	static u16 before[4096];
	struct vg_cuckoo cf;
	u32 n = 0, fails = 0, i, first_fail = 0;
	u64 k;

	(void)state;
	rs = 15;
	assert_int_equal(vg_cuckoo_init(&cf, 900, 21), 0);
	assert_true(slots_of(&cf) <= ARRAY_SIZE(before));
	while (fails < 50) {
		int ret;

		k = rnd64();
		memcpy(before, cf.slots, slots_of(&cf) * sizeof(u16));
		ret = vg_cuckoo_insert(&cf, k);
		if (!ret) {
			keys[n++] = k;
			assert_int_equal(cf.nr_items, n);
			continue;
		}
		assert_int_equal(ret, -ENOSPC);
		if (!fails)
			first_fail = n;
		fails++;
		assert_int_equal(cf.nr_items, n);
		assert_memory_equal(before, cf.slots,
				    slots_of(&cf) * sizeof(u16));
		for (i = 0; i < n; i++)
			assert_true(vg_cuckoo_maybe(&cf, keys[i]));
	}
	print_message("first -ENOSPC at load %u/%u, %u after 50 failures\n",
		      first_fail, slots_of(&cf), n);
	assert_true(first_fail * 100ull >= slots_of(&cf) * 90ull);
	assert_true(n <= slots_of(&cf));
	/* deleting makes room again */
	assert_true(vg_cuckoo_delete(&cf, keys[0]));
	assert_int_equal(vg_cuckoo_insert(&cf, keys[0]), 0);
	vg_cuckoo_fini(&cf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_bad),
		cmocka_unit_test(test_no_false_negatives_random),
		cmocka_unit_test(test_no_false_negatives_pages),
		cmocka_unit_test(test_false_positive_rate),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_enospc_consistent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
