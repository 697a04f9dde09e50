// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The vector 3-way merge of one 4 KiB page (vg_lrc_merge_page_vec,
 * lrc_merge.h): the one implementation both the kernel and userspace run.
 *
 * Written with GCC generic vectors (a compiler feature, no header): 16
 * bytes at a time, bytes compared directly (pcmpeqb on x86-64), half the
 * instructions of the 64-bit-word loop in merge.c and about 2.5x faster
 * (bench_lrc_merge). Userspace x86-64 always has SSE2; the kernel builds
 * everything with -mno-sse -mno-sse2 except this file, which Kbuild
 * compiles with -msse -msse2 (CFLAGS_core/lrc/merge_vec.o). So:
 *  - every instruction here may use vector registers: call it only between
 *    os_simd_begin() and os_simd_end() (merge.c does, once per page);
 *  - nothing here may call a function: no other code may run with the
 *    vector registers on loan, and nothing may sleep (preemption is off).
 *    Keep it pure loads, stores and arithmetic (no struct copies either:
 *    they could become memcpy calls).
 *
 * Same structure as merge.c's portable loop: a 64-byte line where src
 * equals base costs its loads and one test; a line that differs is merged
 * without a branch:
 *
 *   e    = (src == base)        0xff per unchanged byte
 *   dst  = src ^ ((src ^ dst) & e)
 *                               src's bytes where changed, dst's elsewhere
 *
 * and the changed bytes are counted from the sum of the four e's (each
 * byte -1 or 0, so 0 - e0 - e1 - e2 - e3 is 0..4 a byte lane).
 */
#include "lrc_merge.h"

/* aligned(8): pages are only promised 8-byte alignment (movdqu, not movdqa) */
typedef u8 vg_mvec __attribute__((vector_size(16), __may_alias__, aligned(8)));
typedef u64 vg_mvec64 __attribute__((vector_size(16), __may_alias__,
				     aligned(8)));

#define VG_MERGE_VECS	(VG_LRC_PAGE_SIZE / sizeof(vg_mvec))
#define VG_VEC_LO_BITS	0x0101010101010101ull

/* Unchanged bytes of a line given the sum of its four e's (0..4 a byte). */
static inline u32 vg_vec_equal_bytes(vg_mvec sum)
{
	vg_mvec64 s = (vg_mvec64)sum;

	/* at most 8 a byte after the add, 64 in all: no carry out of a byte */
	return (u32)(((s[0] + s[1]) * VG_VEC_LO_BITS) >> 56);
}

/* dst != base; neither overlaps src. */
static u32 vg_vec_merge(vg_mvec *__restrict d, const vg_mvec *__restrict b,
			const vg_mvec *__restrict s)
{
	u32 i, applied = 0;

	for (i = 0; i < VG_MERGE_VECS; i += 4) {
		vg_mvec s0 = s[i], s1 = s[i + 1], s2 = s[i + 2], s3 = s[i + 3];
		vg_mvec e0 = (vg_mvec)(s0 == b[i]);
		vg_mvec e1 = (vg_mvec)(s1 == b[i + 1]);
		vg_mvec e2 = (vg_mvec)(s2 == b[i + 2]);
		vg_mvec e3 = (vg_mvec)(s3 == b[i + 3]);
		vg_mvec64 all = (vg_mvec64)(e0 & e1 & e2 & e3);

		if ((all[0] & all[1]) == ~0ull)
			continue;
		d[i] = s0 ^ ((s0 ^ d[i]) & e0);
		d[i + 1] = s1 ^ ((s1 ^ d[i + 1]) & e1);
		d[i + 2] = s2 ^ ((s2 ^ d[i + 2]) & e2);
		d[i + 3] = s3 ^ ((s3 ^ d[i + 3]) & e3);
		applied += 64 - vg_vec_equal_bytes((vg_mvec){ 0 } - e0 - e1 -
						   e2 - e3);
	}
	return applied;
}

/*
 * dst == base: the result is src itself (src's bytes where it differs,
 * base's, equal to src's, elsewhere); only the count needs the compare.
 */
static u32 vg_vec_into_base(vg_mvec *d, const vg_mvec *__restrict s)
{
	u32 i, applied = 0;

	for (i = 0; i < VG_MERGE_VECS; i += 4) {
		vg_mvec s0 = s[i], s1 = s[i + 1], s2 = s[i + 2], s3 = s[i + 3];
		vg_mvec e0 = (vg_mvec)(s0 == d[i]);
		vg_mvec e1 = (vg_mvec)(s1 == d[i + 1]);
		vg_mvec e2 = (vg_mvec)(s2 == d[i + 2]);
		vg_mvec e3 = (vg_mvec)(s3 == d[i + 3]);

		d[i] = s0;
		d[i + 1] = s1;
		d[i + 2] = s2;
		d[i + 3] = s3;
		applied += 64 - vg_vec_equal_bytes((vg_mvec){ 0 } - e0 - e1 -
						   e2 - e3);
	}
	return applied;
}

u32 vg_lrc_merge_page_vec(void *dst, const void *base, const void *src)
{
	if (dst == base)
		return vg_vec_into_base(dst, src);
	return vg_vec_merge(dst, base, src);
}
