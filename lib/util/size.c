// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One parser for the byte counts of every tool and of mgmtd; size.h lists
 * which caller accepts which syntax.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include "size.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* log2 of unit letter c, or 0 if flags do not make c a unit. */
static unsigned int unit_shift(char c, unsigned int flags)
{
	static const char units[] = "KMGTP";
	unsigned int i;

	if ((flags & VG_SIZE_LOWER) && c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	for (i = 0; units[i]; i++)
		if (c == units[i])
			break;
	if (!units[i] || (c == 'P' && !(flags & VG_SIZE_P)))
		return 0;
	return 10 * (i + 1);
}

/*
 * Decimal digits, '.', fraction digits (VG_SIZE_FRAC). The bound on the
 * whole part is the one mgmtd's parsers had, which refuses a few values
 * just below 2^64 too: kept so that none of them changes.
 */
static int parse_frac(const char *s, unsigned int flags, uint64_t *ip,
		      uint64_t *frac, uint64_t *fscale, const char **end)
{
	bool exact = flags & VG_SIZE_FRAC_EXACT, digits = false;
	const char *p = s;

	*ip = 0;
	*frac = 0;
	*fscale = 1;
	if (!exact && !is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		if (*ip > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		*ip = *ip * 10 + (uint64_t)(*p - '0');
		digits = true;
	}
	if (*p == '.') {
		p++;
		if (!exact && !is_digit(*p))
			return -EINVAL;
		for (; is_digit(*p); p++) {
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

int vg_parse_size(const char *s, unsigned int flags, uint64_t *out)
{
	uint64_t v, frac = 0, fscale = 1, mult = 1, whole, part;
	unsigned int shift;
	const char *p;
	char *end;
	int err;

	if (!s)
		return -EINVAL;
	if (flags & VG_SIZE_FRAC) {
		err = parse_frac(s, flags, &v, &frac, &fscale, &p);
		if (err)
			return err;
	} else {
		/* strtoull's own syntax, as the tools always read their sizes. */
		if (flags & VG_SIZE_C_NUMBER ? !*s || *s == '-' : !is_digit(*s))
			return -EINVAL;
		errno = 0;
		v = strtoull(s, &end, flags & VG_SIZE_C_NUMBER ? 0 : 10);
		if (errno || end == s)
			return -EINVAL;
		p = end;
	}

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
	} else {
		/* Only the exact fraction syntax takes "1.0" as a byte count. */
		if (fscale > 1 && !(flags & VG_SIZE_FRAC_EXACT))
			return -EINVAL;
		if ((*p == 'B' && (flags & VG_SIZE_BARE_B)) ||
		    (*p == 'b' && (flags & VG_SIZE_BARE_LOWER_B)))
			p++;
	}
	if (*p)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -EINVAL;
	v *= mult;
	/*
	 * frac / fscale of mult, rounded down: frac < 10^9 and mult <= 2^50,
	 * so split mult by fscale to stay within 64 bits.
	 */
	whole = mult / fscale * frac;
	part = (mult % fscale) * frac;
	if ((flags & VG_SIZE_FRAC_EXACT) && part % fscale)
		return -EINVAL;	/* not a whole number of bytes */
	part /= fscale;
	if (v > UINT64_MAX - whole - part)
		return -EINVAL;
	*out = v + whole + part;
	return 0;
}
