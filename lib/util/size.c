// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One parser for the byte counts of every tool and of mgmtd; size.h lists
 * which caller accepts which syntax.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "size.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* log2 of unit letter c, or 0 if flags do not make c a unit. */
static unsigned int unit_shift(char c, unsigned int flags)
{
	static const char units[] = "KMGT";
	unsigned int i;

	if ((flags & VG_SIZE_LOWER) && c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	for (i = 0; units[i]; i++)
		if (c == units[i])
			return 10 * (i + 1);
	return 0;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* ASCII case-insensitive equality, whatever the locale. */
static bool same(const char *a, const char *b)
{
	for (; *a && lower(*a) == lower(*b); a++, b++)
		;
	return lower(*a) == lower(*b);
}

/*
 * The bytes in unit u as libvirt's virScaleInteger() reads it (size.h's
 * table), or 0 if u is not a unit.
 */
static uint64_t scaled_unit(const char *u)
{
	static const char letters[] = "kmgtpe";
	uint64_t base, mult = 1;
	const char *l;

	if (!*u || same(u, "b") || same(u, "byte") || same(u, "bytes"))
		return 1;
	l = strchr(letters, lower(*u));
	if (!l)
		return 0;
	if (!u[1] || same(u + 1, "ib"))
		base = 1024;
	else if (same(u + 1, "b"))
		base = 1000;
	else
		return 0;
	do
		mult *= base;
	while (l-- > letters);
	return mult;
}

/*
 * Decimal digits, '.', at most 9 fraction digits (VG_SIZE_MGMT); either
 * side of the '.' may be empty, not both.
 */
static int parse_frac(const char *s, uint64_t *ip, uint64_t *frac,
		      uint64_t *fscale, const char **end)
{
	bool digits = false;
	const char *p = s;

	*ip = 0;
	*frac = 0;
	*fscale = 1;
	for (; is_digit(*p); p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (*ip > (UINT64_MAX - d) / 10)
			return -EINVAL;
		*ip = *ip * 10 + d;
		digits = true;
	}
	if (*p == '.') {
		for (p++; is_digit(*p); p++) {
			if (*fscale >= 1000000000ull)
				return -EINVAL;	/* more precision than bytes have */
			*frac = *frac * 10 + (uint64_t)(*p - '0');
			*fscale *= 10;
			digits = true;
		}
	}
	if (!digits)
		return -EINVAL;
	*end = p;
	return 0;
}

/* VG_SIZE_MGMT: ip.frac (frac / fscale) times mult, in whole bytes. */
static int scale_frac(uint64_t ip, uint64_t frac, uint64_t fscale,
		      uint64_t mult, uint64_t *out)
{
	uint64_t whole, part;

	if (ip > UINT64_MAX / mult)
		return -EINVAL;
	/*
	 * frac / fscale of mult: frac < fscale <= 10^9 and mult <= 2^60, so
	 * split mult by fscale to stay within 64 bits.
	 */
	whole = mult / fscale * frac;
	part = (mult % fscale) * frac;
	if (part % fscale)
		return -EINVAL;	/* not a whole number of bytes */
	part /= fscale;
	if (ip * mult > UINT64_MAX - whole - part)
		return -EINVAL;
	*out = ip * mult + whole + part;
	return 0;
}

static int parse_mgmt(const char *s, uint64_t *out)
{
	uint64_t ip, frac, fscale, mult;
	const char *p;

	if (parse_frac(s, &ip, &frac, &fscale, &p))
		return -EINVAL;
	mult = scaled_unit(p);
	if (!mult)
		return -EINVAL;
	return scale_frac(ip, frac, fscale, mult, out);
}

int vg_parse_size(const char *s, unsigned int flags, uint64_t *out)
{
	uint64_t v, mult = 1;
	unsigned int shift;
	const char *p;
	char *end;

	if (!s)
		return -EINVAL;
	if (flags & VG_SIZE_MGMT)
		return parse_mgmt(s, out);
	/* strtoull's own syntax, as the tools always read their sizes. */
	if (flags & VG_SIZE_C_NUMBER ? !*s || *s == '-' : !is_digit(*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, flags & VG_SIZE_C_NUMBER ? 0 : 10);
	if (errno || end == s)
		return -EINVAL;
	p = end;

	shift = unit_shift(*p, flags);
	if (shift) {
		mult = 1ull << shift;
		p++;
		if (flags & VG_SIZE_IB) {
			bool any = flags & VG_SIZE_IB_ANYCASE;

			if (*p == 'i' || (any && *p == 'I'))
				p++;
			if (*p == 'B' || (any && *p == 'b'))
				p++;
		}
	} else if (*p == 'b' && (flags & VG_SIZE_BARE_LOWER_B)) {
		p++;
	}
	if (*p || v > UINT64_MAX / mult)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

char *vg_format_size(uint64_t bytes, unsigned int flags, char *buf,
		     size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB",
					    "EiB" };
	int i;

	for (i = 5; i >= 0; i--) {
		unsigned int sh = 10 * (unsigned int)(i + 1);

		if (bytes && !(bytes & ((1ull << sh) - 1))) {
			snprintf(buf, len, "%llu%s",
				 (unsigned long long)(bytes >> sh), unit[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)bytes,
		 (flags & VG_FMT_BYTES_WORD) ? " bytes" : "");
	return buf;
}
