/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vg_parse_size(): a byte count with an optional binary unit (K = 2^10,
 * M = 2^20, G = 2^30, T = 2^40, P = 2^50), written once for every program
 * that reads sizes. Plain C, no dependencies.
 *
 * The programs grew their own syntaxes before they shared this parser, and
 * what each accepts is part of its interface (scripts, config files, REST
 * clients), so the flags below name each syntax rather than change any:
 *
 *   caller (flags)                     accepts
 *   vgmem-nl        (VG_SIZE_NL)       a C number as strtoull(s, 0) reads it
 *                                      (decimal, 0x hex, 0 octal), then at
 *                                      most one of K M G T k m g t
 *   vgmem-sim       (VG_SIZE_SIM)      the same number, then K M G T in
 *                                      either case, optionally followed by
 *                                      i/I and then b/B ("4kib", "4KB");
 *                                      bytes may end in a lower-case "b"
 *   vgmem-guest     (VG_SIZE_GUEST)    decimal digits only, then at most one
 *                                      of K M G T k m g t
 *   mgmtd's config  (VG_SIZE_CONFIG)   a decimal fraction ("1.5G", ".5G",
 *   and domain XML                     "1.", "1.0"), then K M G T in either
 *                                      case, optionally followed by i/I and
 *                                      then B/b; bytes may end in "B"; the
 *                                      value must be a whole number of bytes
 *                                      ("0.3" and "1.3K" are refused)
 *   mgmtd's REST    (VG_SIZE_REST)     decimal digits, with a fraction of
 *   size strings                       1-9 digits only before a unit
 *                                      ("1.5G"), rounded down to whole
 *                                      bytes ("1.3K" is 1331); upper-case
 *                                      K M G T P only, then an optional
 *                                      "i", then an optional "B"; bytes may
 *                                      end in "B"
 *
 * Every syntax refuses an empty string, a minus sign, anything after the
 * suffix, and a value above 2^64 - 1 (for the two fraction syntaxes the
 * digits before the '.' are refused from 18446744073709551610 on). Issue
 * 17 is to settle on one syntax; until then a new caller picks the set of
 * an existing one.
 */
#ifndef VGMEM_LIB_UTIL_SIZE_H
#define VGMEM_LIB_UTIL_SIZE_H

#include <stdint.h>

/* The number as strtoull(s, &end, 0) reads it; else decimal digits. */
#define VG_SIZE_C_NUMBER	(1u << 0)
/* k m g t (p) as well as K M G T (P). */
#define VG_SIZE_LOWER		(1u << 1)
/* P, 2^50. */
#define VG_SIZE_P		(1u << 2)
/* After a unit, an optional "i" and then an optional "B" ("KiB", "KB"). */
#define VG_SIZE_IB		(1u << 3)
/* With VG_SIZE_IB: "I" and "b" there too. */
#define VG_SIZE_IB_ANYCASE	(1u << 4)
/* A count without a unit may end in "B". */
#define VG_SIZE_BARE_B		(1u << 5)
/* A count without a unit may end in "b". */
#define VG_SIZE_BARE_LOWER_B	(1u << 6)
/*
 * A decimal fraction before a unit: at least one digit on either side of
 * the '.', at most 9 after it, rounded down to whole bytes. Not with
 * VG_SIZE_C_NUMBER.
 */
#define VG_SIZE_FRAC		(1u << 7)
/*
 * With VG_SIZE_FRAC: either side of the '.' may be empty (not both), no
 * unit is needed, and the value must be a whole number of bytes instead of
 * being rounded down.
 */
#define VG_SIZE_FRAC_EXACT	(1u << 8)

#define VG_SIZE_NL	(VG_SIZE_C_NUMBER | VG_SIZE_LOWER)
#define VG_SIZE_SIM	(VG_SIZE_C_NUMBER | VG_SIZE_LOWER | VG_SIZE_IB | \
			 VG_SIZE_IB_ANYCASE | VG_SIZE_BARE_LOWER_B)
#define VG_SIZE_GUEST	VG_SIZE_LOWER
#define VG_SIZE_CONFIG	(VG_SIZE_FRAC | VG_SIZE_FRAC_EXACT | VG_SIZE_LOWER | \
			 VG_SIZE_IB | VG_SIZE_IB_ANYCASE | VG_SIZE_BARE_B)
#define VG_SIZE_REST	(VG_SIZE_FRAC | VG_SIZE_P | VG_SIZE_IB | VG_SIZE_BARE_B)

/*
 * Parse s as flags allow into *out. Returns 0, or -EINVAL (and *out is left
 * alone) for a string that is not a size in that syntax or is too large.
 */
int vg_parse_size(const char *s, unsigned int flags, uint64_t *out);

#endif /* VGMEM_LIB_UTIL_SIZE_H */
