// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Byte-exact 3-way merge and dirty detection of 4 KiB pages (lrc_merge.h).
 *
 * Two implementations of the same merge, both walking the page one 64-byte
 * line at a time. A line where src equals base costs its loads and one
 * test, so an untouched page costs about one memcmp; a line that differs
 * anywhere is merged without a branch, so randomly scattered changes cost
 * no mispredictions.
 *
 * vg_lrc_merge_page_swar(): portable, 64-bit words (SIMD within a
 * register). For each word:
 *
 *   x    = src ^ base           nonzero bytes are the changed ones
 *   t    = ((x & 0x7f..) + 0x7f..) | x) & 0x80..
 *                               bit 7 of a byte set iff the byte is nonzero
 *                               (the add cannot carry out of a byte)
 *   lo   = t >> 7               one per changed byte
 *   mask = lo * 0xff            0xff in each changed byte (no carries)
 *   dst ^= (dst ^ src) & mask   src's bytes where changed, dst's elsewhere
 *
 * The bytes applied are counted by adding lo into per-byte counters,
 * summed once per line with one multiply (at most 8 per byte lane).
 *
 * vg_lrc_merge_page_vec() (merge_vec.c): the same loop on GCC generic
 * vectors, comparing bytes directly (pcmpeqb): half the instructions,
 * about 2.5x faster (bench_lrc_merge). It is what vg_lrc_merge_page()
 * runs in userspace and in the kernel alike (there between
 * kernel_fpu_begin/end, through os_simd_begin/end); this file itself is
 * built without vector registers in the kernel, so the portable loop is
 * the fallback when they may not be used. The tests run both against a
 * byte reference.
 *
 * Words are read through may_alias types: callers fill pages as bytes.
 */
#include "lrc_merge.h"

typedef u64 __attribute__((__may_alias__)) vg_mword;

#define VG_MERGE_WORDS	(VG_LRC_PAGE_SIZE / sizeof(u64))
#define VG_LO_BITS	0x0101010101010101ull
#define VG_HI_BITS	0x8080808080808080ull

/* Merge one word whose changed bits are x; returns one per changed byte. */
static inline u64 vg_merge_word(vg_mword *d, u64 sv, u64 x)
{
	u64 t = (((x & ~VG_HI_BITS) + ~VG_HI_BITS) | x) & VG_HI_BITS;
	u64 lo = t >> 7;

	*d ^= (*d ^ sv) & (lo * 0xff);
	return lo;
}

/*
 * d must not overlap b or s: restrict lets the compiler keep the line's
 * words in registers (dst == base is handled by the caller).
 */
static u32 vg_merge_swar(vg_mword *__restrict d, const vg_mword *__restrict b,
			 const vg_mword *__restrict s)
{
	u32 i, applied = 0;

	for (i = 0; i < VG_MERGE_WORDS; i += 8) {
		u64 x0 = s[i] ^ b[i], x1 = s[i + 1] ^ b[i + 1];
		u64 x2 = s[i + 2] ^ b[i + 2], x3 = s[i + 3] ^ b[i + 3];
		u64 x4 = s[i + 4] ^ b[i + 4], x5 = s[i + 5] ^ b[i + 5];
		u64 x6 = s[i + 6] ^ b[i + 6], x7 = s[i + 7] ^ b[i + 7];
		u64 cnt;

		if (!(x0 | x1 | x2 | x3 | x4 | x5 | x6 | x7))
			continue;
		cnt = vg_merge_word(d + i, s[i], x0) +
		      vg_merge_word(d + i + 1, s[i + 1], x1) +
		      vg_merge_word(d + i + 2, s[i + 2], x2) +
		      vg_merge_word(d + i + 3, s[i + 3], x3) +
		      vg_merge_word(d + i + 4, s[i + 4], x4) +
		      vg_merge_word(d + i + 5, s[i + 5], x5) +
		      vg_merge_word(d + i + 6, s[i + 6], x6) +
		      vg_merge_word(d + i + 7, s[i + 7], x7);
		applied += (u32)((cnt * VG_LO_BITS) >> 56);
	}
	return applied;
}

/*
 * dst == base: the result is src itself (src's bytes where it differs,
 * base's, equal to src's, elsewhere); only the count needs the compare.
 */
static u32 vg_merge_into_base(vg_mword *d, const vg_mword *s)
{
	u32 i, applied = 0;

	for (i = 0; i < VG_MERGE_WORDS; i++) {
		u64 x = s[i] ^ d[i];
		u64 t = (((x & ~VG_HI_BITS) + ~VG_HI_BITS) | x) & VG_HI_BITS;

		applied += (u32)(((t >> 7) * VG_LO_BITS) >> 56);
		d[i] = s[i];
	}
	return applied;
}

u32 vg_lrc_merge_page_swar(void *dst, const void *base, const void *src)
{
	if (dst == base)
		return vg_merge_into_base(dst, src);
	return vg_merge_swar(dst, base, src);
}

/*
 * The vector loop (merge_vec.c) where vector registers may be used, the
 * portable one otherwise. One os_simd_begin/end per page: in the kernel
 * that is kernel_fpu_begin/end, whose first call in a task saves the
 * user's FPU state and later ones cost a few ns (preemption off, MXCSR
 * loaded): small against the ~250 ns of the page. Callers merge pages one
 * at a time between other work, some of which may sleep (reading a GPU
 * replica back), so the pair cannot be hoisted around a caller's loop.
 */
u32 vg_lrc_merge_page(void *dst, const void *base, const void *src)
{
	u32 applied;

	if (!os_simd_begin())
		return vg_lrc_merge_page_swar(dst, base, src);
	applied = vg_lrc_merge_page_vec(dst, base, src);
	os_simd_end();
	return applied;
}

/* True if the n words at a and b differ anywhere; n a multiple of 4. */
static bool vg_words_differ(const vg_mword *a, const vg_mword *b, u32 n)
{
	u32 i;

	for (i = 0; i < n; i += 4)
		if ((a[i] ^ b[i]) | (a[i + 1] ^ b[i + 1]) |
		    (a[i + 2] ^ b[i + 2]) | (a[i + 3] ^ b[i + 3]))
			return true;
	return false;
}

bool vg_lrc_page_dirty(const void *page, const void *base)
{
	return vg_words_differ(page, base, VG_MERGE_WORDS);
}

u16 vg_lrc_dirty_mask(const void *gpage, const void *base, u32 nr_blocks)
{
	const vg_mword *p = gpage, *b = base;
	u16 mask = 0;
	u32 i;

	if (WARN_ON_ONCE(nr_blocks > 16))
		nr_blocks = 16;
	for (i = 0; i < nr_blocks; i++)
		if (vg_words_differ(p + i * VG_MERGE_WORDS,
				    b + i * VG_MERGE_WORDS, VG_MERGE_WORDS))
			mask |= (u16)BIT(i);
	return mask;
}
