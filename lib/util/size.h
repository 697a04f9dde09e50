/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vg_parse_size(): a byte count with an optional unit, written once for
 * every program that reads sizes. Plain C, no dependencies.
 *
 * The tools grew their own syntaxes (binary units only: K = 2^10, M = 2^20,
 * G = 2^30, T = 2^40) before they shared this parser, and what each accepts
 * is part of its interface (scripts), so the flags below name each syntax
 * rather than change any. mgmtd reads every size it is given, from any
 * source, in one syntax, libvirt's:
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
 *   mgmtd           (VG_SIZE_MGMT)     REST size strings, domain XML
 *                                      attributes and the config file alike:
 *                                      a decimal number, optionally with a
 *                                      fraction (".5", "1.", "1.5"; at most
 *                                      9 digits after the '.'), then an
 *                                      optional unit as libvirt's "unit"
 *                                      attributes take them (its
 *                                      virScaleInteger()), in any case:
 *
 *        unit                    bytes     unit                  bytes
 *        (none), b, byte, bytes  1
 *        KB                      10^3      K, KiB                2^10
 *        MB                      10^6      M, MiB                2^20
 *        GB                      10^9      G, GiB                2^30
 *        TB                      10^12     T, TiB                2^40
 *        PB                      10^15     P, PiB                2^50
 *        EB                      10^18     E, EiB                2^60
 *
 *     so "8g", "8gib" and "8GIB" are 8 GiB, "8gb" and "8Gb" are 8 * 10^9
 *     ("b" is bytes, never bits). The value must be a whole number of
 *     bytes: "1.5G" and "1.0" are sizes, "0.3", "1.3K" and "1.5b" are not.
 *     "8Gi" is refused, as libvirt refuses it.
 *
 * Every syntax refuses an empty string, a sign, white space, anything after
 * the unit, and a value above 2^64 - 1.
 */
#ifndef VGMEM_LIB_UTIL_SIZE_H
#define VGMEM_LIB_UTIL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* The number as strtoull(s, &end, 0) reads it; else decimal digits. */
#define VG_SIZE_C_NUMBER	(1u << 0)
/* k m g t as well as K M G T. */
#define VG_SIZE_LOWER		(1u << 1)
/* After a unit, an optional "i" and then an optional "B" ("KiB", "KB"). */
#define VG_SIZE_IB		(1u << 3)
/* With VG_SIZE_IB: "I" and "b" there too. */
#define VG_SIZE_IB_ANYCASE	(1u << 4)
/* A count without a unit may end in "b". */
#define VG_SIZE_BARE_LOWER_B	(1u << 6)
/*
 * mgmtd's syntax as a whole: a decimal fraction of whole bytes and
 * libvirt's units (the table above). Not with any other flag.
 */
#define VG_SIZE_MGMT		(1u << 7)

#define VG_SIZE_NL	(VG_SIZE_C_NUMBER | VG_SIZE_LOWER)
#define VG_SIZE_SIM	(VG_SIZE_C_NUMBER | VG_SIZE_LOWER | VG_SIZE_IB | \
			 VG_SIZE_IB_ANYCASE | VG_SIZE_BARE_LOWER_B)
#define VG_SIZE_GUEST	VG_SIZE_LOWER

/*
 * Parse s as flags allow into *out. Returns 0, or -EINVAL (and *out is left
 * alone) for a string that is not a size in that syntax or is too large.
 */
int vg_parse_size(const char *s, unsigned int flags, uint64_t *out);

/*
 * vg_format_size(): bytes as operators write them, the inverse of
 * VG_SIZE_MGMT for what it writes: the largest binary unit that holds the
 * count exactly ("66GiB", "1536KiB"), else the bare count ("1536", or
 * "1536 bytes" with VG_FMT_BYTES_WORD, for prose). 0 is "0". buf always
 * ends in a NUL; VG_SIZE_TEXT holds any result. Returns buf.
 */
#define VG_FMT_BYTES_WORD	(1u << 0)
#define VG_SIZE_TEXT		32

char *vg_format_size(uint64_t bytes, unsigned int flags, char *buf,
		     size_t len);

#endif /* VGMEM_LIB_UTIL_SIZE_H */
