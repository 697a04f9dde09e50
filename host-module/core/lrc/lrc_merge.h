/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * GAIA's 3-way merge of one 4 KiB page, byte exact: every byte a writer
 * changed against the pristine base copy is applied to the result. Apply
 * the writers in ascending owner-id order and a byte written by several
 * owners ends as the highest owner's (any-write-wins, deterministic).
 * Compares a 64-byte line at a time and builds byte masks only inside
 * lines that differ (branch-free there), so an untouched page costs about
 * one memcmp: ~0.25 us per page at any fraction changed with 16-byte
 * vectors (merge_vec.c; the kernel too, between kernel_fpu_begin/end),
 * ~0.75 us with the portable 64-bit words (merge.c), the fallback where
 * vector registers may not be used (bench_lrc_merge).
 */
#ifndef VGMEM_CORE_LRC_MERGE_H
#define VGMEM_CORE_LRC_MERGE_H

#include "os/os.h"

#define VG_LRC_PAGE_SIZE	4096u

/*
 * dst[i] = src[i] for every byte where src[i] != base[i]. All three are
 * VG_LRC_PAGE_SIZE bytes, 8-byte aligned; dst may equal base (then base is
 * consumed) but not src. Returns the number of bytes applied (0: src was
 * unmodified).
 */
u32 vg_lrc_merge_page(void *dst, const void *base, const void *src);
/*
 * The two implementations vg_lrc_merge_page chooses from, exposed so the
 * tests check both and the benchmark times both; callers use
 * vg_lrc_merge_page.
 *
 * _swar: portable 64-bit words, no vector registers: the fallback where
 * os_simd_begin() refuses (e.g. in an interrupt, or not on x86).
 * _vec: 16-byte generic vectors (merge_vec.c). Only between
 * os_simd_begin() and os_simd_end() (in the kernel it may use the SSE
 * registers; in userspace they are always usable).
 */
u32 vg_lrc_merge_page_swar(void *dst, const void *base, const void *src);
u32 vg_lrc_merge_page_vec(void *dst, const void *base, const void *src);

/* True if the page differs from base anywhere (dirty detection). */
bool vg_lrc_page_dirty(const void *page, const void *base);

/*
 * Dirty 4 KiB blocks of a 64 KiB GPU page against its base: bit i set if
 * block i differs, for the first nr_blocks (<= 16; more WARNs and is
 * clamped) blocks. Write-back sends only those.
 */
u16 vg_lrc_dirty_mask(const void *gpage, const void *base, u32 nr_blocks);

#endif /* VGMEM_CORE_LRC_MERGE_H */
