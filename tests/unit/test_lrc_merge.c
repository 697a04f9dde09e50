// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * 3-way page merge and dirty detection (core/lrc/merge.c) against a
 * byte-by-byte reference: result = base, then for every writer in
 * ascending owner order, every byte where the writer differs from base
 * takes the writer's value. A table of hand-made cases (single bytes at
 * word edges, false-sharing stripes, overlaps, writes of the base's own
 * value, dst == base), then random pages with several writers doing
 * unaligned writes, checked against the reference and against the
 * any-write-wins properties directly. Dirty detection and dirty-block
 * masks of 64 KiB GPU pages by single-byte changes anywhere.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host-module/os/os.h"
#include "host-module/core/lrc/lrc_merge.h"

#define PS	VG_LRC_PAGE_SIZE
#define NW_MAX	6

static u8 base[PS] __aligned(64);
static u8 wr[NW_MAX][PS] __aligned(64);
static u8 dst[PS] __aligned(64);
static u8 ref[PS] __aligned(64);
static u8 gpage[16 * PS] __aligned(64);
static u8 gbase[16 * PS] __aligned(64);

static u64 rs;

typedef u32 (*merge_fn)(void *dst, const void *base, const void *src);
/* Both implementations: the one in use and the portable (kernel) one. */
static const merge_fn impl_fast = vg_lrc_merge_page;
static const merge_fn impl_swar = vg_lrc_merge_page_swar;
/* the vector loop called directly (userspace needs no os_simd_begin) */
static const merge_fn impl_vec = vg_lrc_merge_page_vec;
static merge_fn merge = vg_lrc_merge_page;

static void use_impl(void **state)
{
	merge = *(const merge_fn *)*state;
}

static u32 rnd(u32 bound)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (u32)(rs % bound);
}

static void fill_random(u8 *p, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		p[i] = (u8)rnd(256);
}

/* The reference: writers already in ascending owner order. */
static void ref_merge(u8 *out, const u8 *b, u8 (*w)[PS], u32 nw)
{
	u32 k, i;

	memcpy(out, b, PS);
	for (k = 0; k < nw; k++)
		for (i = 0; i < PS; i++)
			if (w[k][i] != b[i])
				out[i] = w[k][i];
}

static u32 ref_count(const u8 *w, const u8 *b)
{
	u32 i, n = 0;

	for (i = 0; i < PS; i++)
		n += w[i] != b[i];
	return n;
}

/* Merge with the code under test, checking each call's byte count. */
static void merge_all(u8 *out, const u8 *b, u8 (*w)[PS], u32 nw)
{
	u32 k;

	memcpy(out, b, PS);
	for (k = 0; k < nw; k++)
		assert_int_equal(merge(out, b, w[k]),
				 ref_count(w[k], b));
}

/* any-write-wins, stated directly rather than through the reference */
static void check_properties(const u8 *out, const u8 *b, u8 (*w)[PS], u32 nw)
{
	u32 i, k;

	for (i = 0; i < PS; i++) {
		int last = -1;

		for (k = 0; k < nw; k++)
			if (w[k][i] != b[i])
				last = (int)k;
		if (last < 0)
			assert_int_equal(out[i], b[i]);
		else
			assert_int_equal(out[i], w[last][i]);
	}
}

static void check_case(u32 nw)
{
	ref_merge(ref, base, wr, nw);
	merge_all(dst, base, wr, nw);
	assert_memory_equal(dst, ref, PS);
	check_properties(dst, base, wr, nw);
}

struct wspan {
	u32 off, len;
	u8 val;
};

struct mcase {
	const char *name;
	u32 nw;
	/* per writer up to 3 spans; len 0 ends the list */
	struct wspan w[3][3];
	u32 stripe;	/* >0: writer k writes bytes with (i / stripe) % nw == k */
};

static const struct mcase cases[] = {
	{ "untouched", 1, { { { 0, 0, 0 } } }, 0 },
	{ "first byte", 1, { { { 0, 1, 0xaa } } }, 0 },
	{ "last byte", 1, { { { PS - 1, 1, 0xaa } } }, 0 },
	{ "word edges", 1, { { { 7, 2, 0x55 }, { 63, 1, 0x11 }, { 4088, 1, 1 } } }, 0 },
	{ "one full word", 1, { { { 8, 8, 0xee } } }, 0 },
	{ "unaligned run", 1, { { { 13, 101, 0x3c } } }, 0 },
	{ "whole page", 1, { { { 0, PS, 0x77 } } }, 0 },
	{ "disjoint", 2, { { { 0, 100, 1 } }, { { 100, 100, 2 } } }, 0 },
	{ "overlap", 2, { { { 0, 300, 1 } }, { { 200, 300, 2 } } }, 0 },
	{ "overlap three", 3, { { { 5, 50, 1 } }, { { 20, 50, 2 } }, { { 30, 3, 3 } } }, 0 },
	{ "same bytes same value", 2, { { { 10, 10, 9 } }, { { 10, 10, 9 } } }, 0 },
	{ "false sharing 8", 2, { { { 0 } } }, 8 },
	{ "false sharing 3", 3, { { { 0 } } }, 3 },
	{ "false sharing 1", 2, { { { 0 } } }, 1 },
	{ "false sharing 2048", 2, { { { 0 } } }, 2048 },
};

static void build_case(const struct mcase *c)
{
	u32 k, s, i;

	for (i = 0; i < PS; i++)
		base[i] = (u8)(i * 7 + 3);
	for (k = 0; k < c->nw; k++) {
		memcpy(wr[k], base, PS);
		if (c->stripe) {
			for (i = 0; i < PS; i++)
				if ((i / c->stripe) % c->nw == k)
					wr[k][i] = (u8)(base[i] ^ (0x40 + k));
			continue;
		}
		for (s = 0; s < 3 && c->w[k][s].len; s++)
			memset(wr[k] + c->w[k][s].off, c->w[k][s].val,
			       c->w[k][s].len);
	}
}

static void test_table(void **state)
{
	u32 n;

	use_impl(state);
	for (n = 0; n < ARRAY_SIZE(cases); n++) {
		build_case(&cases[n]);
		check_case(cases[n].nw);
	}
	/* false sharing: both halves survive, exactly */
	build_case(&cases[11]);
	merge_all(dst, base, wr, 2);
	for (n = 0; n < PS; n++)
		assert_int_equal(dst[n], wr[(n / 8) % 2][n]);
	/* overlap: the higher owner (applied last) wins on 200..299 */
	build_case(&cases[8]);
	merge_all(dst, base, wr, 2);
	for (n = 0; n < 200; n++)
		assert_int_equal(dst[n], 1);
	for (n = 200; n < 500; n++)
		assert_int_equal(dst[n], 2);
	assert_int_equal(dst[500], base[500]);
}

/* A write of the base's own value is no change and is not applied. */
static void test_write_of_base_value(void **state)
{
	u32 i;

	use_impl(state);
	for (i = 0; i < PS; i++)
		base[i] = (u8)i;
	memcpy(wr[0], base, PS);
	memset(wr[0], 0xff, 64);
	memcpy(wr[1], base, PS);
	/* writer 1 "rewrites" bytes 0..31 with the base values: invisible */
	memcpy(wr[1] + 32, "\x01\x02\x03", 3);
	check_case(2);
	for (i = 0; i < 32; i++)
		assert_int_equal(dst[i], 0xff);
	assert_int_equal(merge(dst, base, base), 0);
}

/* dst == base: the base is consumed and becomes the merged page. */
static void test_dst_is_base(void **state)
{
	u32 n;

	use_impl(state);
	rs = 99;
	for (n = 0; n < 50; n++) {
		u32 i, cnt = 1 + rnd(600);
		u8 *b2 = gpage;

		fill_random(base, PS);
		memcpy(wr[0], base, PS);
		for (i = 0; i < cnt; i++)
			wr[0][rnd(PS)] = (u8)rnd(256);
		memcpy(b2, base, PS);
		assert_int_equal(merge(b2, b2, wr[0]),
				 ref_count(wr[0], base));
		assert_memory_equal(b2, wr[0], PS);
	}
}

/*
 * Random pages, 1..NW_MAX writers each doing a few unaligned writes of
 * random length (sometimes long runs, sometimes single bytes, sometimes a
 * byte equal to the base), merged in owner order.
 */
static void test_random_property(void **state)
{
	u32 iter;

	use_impl(state);
	rs = 0xfeedbeef;
	for (iter = 0; iter < 1500; iter++) {
		u32 nw = 1 + rnd(NW_MAX), k;

		if (rnd(4) == 0)
			memset(base, (u8)rnd(256), PS);	/* uniform page */
		else
			fill_random(base, PS);
		for (k = 0; k < nw; k++) {
			u32 nwrites = rnd(8), j;

			memcpy(wr[k], base, PS);
			for (j = 0; j < nwrites; j++) {
				u32 kind = rnd(10);
				u32 len = kind < 5 ? 1 + rnd(16) :
					  kind < 8 ? 1 + rnd(300) : 1 + rnd(PS);
				u32 off = rnd(PS), i;

				len = len > PS - off ? PS - off : len;
				for (i = 0; i < len; i++)
					wr[k][off + i] = rnd(8) == 0 ?
						base[off + i] : (u8)rnd(256);
			}
		}
		check_case(nw);
	}
}

/*
 * Pages are only promised 8-byte alignment: merge pages at 8 bytes past a
 * 64-byte boundary (never 16-byte aligned) against the reference.
 */
static void test_align8(void **state)
{
	u8 *b8 = gbase + 8, *s8 = gbase + 8 + 2 * PS, *d8 = gpage + 8;
	u32 iter;

	use_impl(state);
	rs = 31337;
	for (iter = 0; iter < 200; iter++) {
		u32 i, cnt = rnd(PS);

		fill_random(b8, PS);
		memcpy(s8, b8, PS);
		for (i = 0; i < cnt; i++)
			s8[rnd(PS)] = (u8)rnd(256);
		fill_random(d8, PS);
		memcpy(ref, d8, PS);
		for (i = 0; i < PS; i++)
			if (s8[i] != b8[i])
				ref[i] = s8[i];
		assert_int_equal(merge(d8, b8, s8), ref_count(s8, b8));
		assert_memory_equal(d8, ref, PS);
		assert_int_equal(vg_lrc_page_dirty(s8, b8), ref_count(s8, b8) != 0);
	}
}

static void test_page_dirty(void **state)
{
	u32 i;

	(void)state;
	rs = 7;
	fill_random(base, PS);
	memcpy(dst, base, PS);
	assert_false(vg_lrc_page_dirty(dst, base));
	/* any single changed byte, every position */
	for (i = 0; i < PS; i++) {
		dst[i] ^= 0x80;
		assert_true(vg_lrc_page_dirty(dst, base));
		dst[i] ^= 0x80;
	}
	assert_false(vg_lrc_page_dirty(dst, base));
}

static void test_dirty_mask(void **state)
{
	u32 iter;

	(void)state;
	rs = 4242;
	fill_random(gbase, sizeof(gbase));
	memcpy(gpage, gbase, sizeof(gpage));
	assert_int_equal(vg_lrc_dirty_mask(gpage, gbase, 16), 0);
	assert_int_equal(vg_lrc_dirty_mask(gpage, gbase, 0), 0);
	for (iter = 0; iter < 300; iter++) {
		u32 want = rnd(1u << 16), nb = 1 + rnd(16), b;

		memcpy(gpage, gbase, sizeof(gpage));
		for (b = 0; b < 16; b++) {
			if (!(want & BIT(b)))
				continue;
			/* one bit of one byte anywhere in block b */
			gpage[b * PS + rnd(PS)] ^= (u8)BIT(rnd(8));
		}
		assert_int_equal(vg_lrc_dirty_mask(gpage, gbase, 16), want);
		/* blocks beyond nr_blocks are not looked at */
		assert_int_equal(vg_lrc_dirty_mask(gpage, gbase, nb),
				 want & (BIT(nb) - 1));
		for (b = 0; b < 16; b++)
			assert_int_equal(vg_lrc_page_dirty(gpage + b * PS,
							   gbase + b * PS),
					 !!(want & BIT(b)));
	}
}

/*
 * One src against one base into one prior dst (a random page: dst is not
 * base), with the vector loop, the portable loop and the byte reference:
 * all three results and counts byte-identical; then the same with dst ==
 * base. b, s live in gbase at offset off (8-byte aligned, not always 16).
 */
static void cross_check(const u8 *b, const u8 *s, const u8 *prior)
{
	u8 *dv = gpage, *ds = gpage + PS, *bb = gpage + 2 * PS;
	u32 want = ref_count(s, b), i;

	memcpy(ref, prior, PS);
	for (i = 0; i < PS; i++)
		if (s[i] != b[i])
			ref[i] = s[i];
	memcpy(dv, prior, PS);
	memcpy(ds, prior, PS);
	assert_int_equal(vg_lrc_merge_page_vec(dv, b, s), want);
	assert_int_equal(vg_lrc_merge_page_swar(ds, b, s), want);
	memcpy(dst, prior, PS);
	assert_int_equal(vg_lrc_merge_page(dst, b, s), want);
	assert_memory_equal(dv, ref, PS);
	assert_memory_equal(dst, ref, PS);
	assert_memory_equal(ds, ref, PS);
	memcpy(bb, b, PS);
	assert_int_equal(vg_lrc_merge_page_vec(bb, bb, s), want);
	assert_memory_equal(bb, s, PS);
	memcpy(bb, b, PS);
	assert_int_equal(vg_lrc_merge_page_swar(bb, bb, s), want);
	assert_memory_equal(bb, s, PS);
}

/*
 * The vector loop (what the kernel runs too, merge_vec.c) against the
 * portable one and the reference on adversarial pages: a single changed
 * byte at every offset (each lane of each 16-byte vector and 64-byte
 * line, first and last), changes by only the top bit or only the bottom
 * bit of a byte (the edges of the portable loop's bit tricks), 0x00 <->
 * 0xff, every byte changed, every other byte, changes only in the last
 * line; then random pages at any density, 8-byte (not 16) aligned too.
 */
static void test_vec_matches_swar(void **state)
{
	static const u8 flips[] = { 0x80, 0x01, 0xff, 0x7f, 0xfe };
	u8 *prior = wr[NW_MAX - 1];
	u32 f, i, iter, off;

	(void)state;
	rs = 0xabad1dea;
	fill_random(prior, PS);
	/* single byte, every offset, several flips, on a random base */
	fill_random(base, PS);
	for (f = 0; f < ARRAY_SIZE(flips); f++)
		for (i = 0; i < PS; i += f ? 13 : 1) {
			memcpy(wr[0], base, PS);
			wr[0][i] ^= flips[f];
			cross_check(base, wr[0], prior);
		}
	/* 0x00 base, 0xff writer and back; every byte; every other byte */
	memset(base, 0, PS);
	memset(wr[0], 0xff, PS);
	cross_check(base, wr[0], prior);
	cross_check(wr[0], base, prior);
	for (i = 0; i < PS; i += 2)
		wr[0][i] = 0;
	cross_check(base, wr[0], prior);
	cross_check(wr[0], base, prior);
	memcpy(wr[0], base, PS);
	wr[0][PS - 64] = 1;
	wr[0][PS - 1] = 0x80;
	cross_check(base, wr[0], prior);
	/* identical pages: nothing applied, dst untouched */
	cross_check(base, base, prior);
	/* random densities, 16-byte and 8-byte aligned */
	for (iter = 0; iter < 400; iter++) {
		u8 *b, *s;
		u32 cnt = rnd(5) == 0 ? rnd(PS * 2) : rnd(64);

		off = (iter & 1) ? 8 : 0;
		b = gbase + off;
		s = gbase + off + 2 * PS;
		if (rnd(3) == 0)
			memset(b, (u8)rnd(256), PS);
		else
			fill_random(b, PS);
		memcpy(s, b, PS);
		for (i = 0; i < cnt; i++)
			s[rnd(PS)] ^= rnd(2) ? (u8)BIT(rnd(8)) : (u8)rnd(256);
		fill_random(prior, PS);
		cross_check(b, s, prior);
	}
}

/* Runs f on all implementations, under names that tell them apart. */
#define BOTH(f)								\
	{ #f " (in use)", f, NULL, NULL, (void *)&impl_fast },		\
	{ #f " (vec)", f, NULL, NULL, (void *)&impl_vec },		\
	{ #f " (swar)", f, NULL, NULL, (void *)&impl_swar }

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_table),
		BOTH(test_write_of_base_value),
		BOTH(test_dst_is_base),
		BOTH(test_random_property),
		BOTH(test_align8),
		cmocka_unit_test(test_vec_matches_swar),
		cmocka_unit_test(test_page_dirty),
		cmocka_unit_test(test_dirty_mask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
