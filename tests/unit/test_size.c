// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The shared size parser (lib/util/size.c): each caller's syntax as
 * size.h lists it (mgmtd's with every libvirt unit both ways and in either
 * case), and values past 2^64 - 1 refused in every one; the formatter
 * (vg_format_size) and that mgmtd's syntax reads back what it writes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/size.h"

#define KI	(1ull << 10)
#define MI	(1ull << 20)
#define GI	(1ull << 30)
#define TI	(1ull << 40)
#define PI	(1ull << 50)

static const unsigned int all_sets[] = {
	VG_SIZE_NL, VG_SIZE_SIM, VG_SIZE_GUEST, VG_SIZE_MGMT,
};

static void ok(const char *s, unsigned int flags, uint64_t want)
{
	uint64_t v = 0;

	if (vg_parse_size(s, flags, &v) != 0 || v != want)
		fail_msg("\"%s\" (flags %#x): got %llu, want %llu", s, flags,
			 (unsigned long long)v, (unsigned long long)want);
}

static void bad(const char *s, unsigned int flags)
{
	uint64_t v = 12345;

	if (vg_parse_size(s, flags, &v) != -EINVAL || v != 12345)
		fail_msg("\"%s\" (flags %#x) was accepted or changed the result",
			 s, flags);
}

static void test_every_set(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(all_sets) / sizeof(all_sets[0]); i++) {
		unsigned int f = all_sets[i];

		ok("0", f, 0);
		ok("4096", f, 4096);
		ok("8G", f, 8 * GI);
		ok("16777215T", f, 16777215 * TI);
		bad(NULL, f);
		bad("", f);
		bad("-1", f);
		bad("-1K", f);
		bad("K", f);
		bad("4X", f);
		bad("4K ", f);
		bad("4KX", f);
		bad("4 K", f);
		/* past 2^64 - 1, written out or through a unit */
		bad("18446744073709551616", f);
		bad("99999999999999999999", f);
		bad("16777216T", f);
		bad("17179869184G", f);
		bad("18014398509481984K", f);
	}
	/* 2^64 - 1 itself: every syntax takes it. */
	for (i = 0; i < sizeof(all_sets) / sizeof(all_sets[0]); i++)
		ok("18446744073709551615", all_sets[i], UINT64_MAX);
}

static void test_nl(void **state)
{
	const unsigned int f = VG_SIZE_NL;

	(void)state;
	ok("4k", f, 4 * KI);
	ok("4K", f, 4 * KI);
	ok("3m", f, 3 * MI);
	ok("2g", f, 2 * GI);
	ok("1t", f, TI);
	ok("0x10", f, 16);
	ok("0x10K", f, 16 * KI);
	ok("010", f, 8);		/* octal, as strtoull(s, 0) */
	bad("4KB", f);
	bad("4Ki", f);
	bad("4b", f);
	bad("4B", f);
	bad("1P", f);
	bad("1.5G", f);
	bad("0x", f);
}

static void test_sim(void **state)
{
	const unsigned int f = VG_SIZE_SIM;

	(void)state;
	ok("4k", f, 4 * KI);
	ok("4K", f, 4 * KI);
	ok("4KB", f, 4 * KI);
	ok("4kb", f, 4 * KI);
	ok("4KiB", f, 4 * KI);
	ok("4kib", f, 4 * KI);
	ok("4KIB", f, 4 * KI);
	ok("4Ki", f, 4 * KI);
	ok("2TiB", f, 2 * TI);
	ok("0x10M", f, 16 * MI);
	ok("4b", f, 4);
	bad("4B", f);
	bad("4bb", f);
	bad("4KBi", f);
	bad("4KiBB", f);
	bad("1P", f);
	bad("1.5G", f);
}

static void test_guest(void **state)
{
	const unsigned int f = VG_SIZE_GUEST;

	(void)state;
	ok("3K", f, 3 * KI);
	ok("16m", f, 16 * MI);
	ok("2G", f, 2 * GI);
	ok("1T", f, TI);
	ok("010", f, 10);		/* decimal only */
	bad("0x10", f);
	bad(" 4", f);
	bad("+4", f);
	bad("M", f);
	bad("4MB", f);
	bad("4Mi", f);
	bad("4b", f);
	bad("4B", f);
	bad("1P", f);
	bad("1 M", f);
	bad("20000000T", f);
}

#define KB	1000ull
#define MB	(1000 * KB)
#define GB	(1000 * MB)
#define TB	(1000 * GB)
#define PB	(1000 * TB)
#define EB	(1000 * PB)
#define EI	(1ull << 60)

/* One value in every spelling libvirt takes for its unit (any case). */
static void ok_cases(const char *num, const char *unit, uint64_t want)
{
	char s[64], up[16];
	size_t i;

	snprintf(s, sizeof(s), "%s%s", num, unit);
	ok(s, VG_SIZE_MGMT, want);
	for (i = 0; unit[i] && i + 1 < sizeof(up); i++)
		up[i] = (char)(unit[i] >= 'a' && unit[i] <= 'z' ?
			       unit[i] - 'a' + 'A' : unit[i]);
	up[i] = 0;
	snprintf(s, sizeof(s), "%s%s", num, up);
	ok(s, VG_SIZE_MGMT, want);
}

static void test_mgmt_units(void **state)
{
	(void)state;
	/* bytes */
	ok_cases("4096", "", 4096);
	ok_cases("4096", "b", 4096);
	ok_cases("4096", "byte", 4096);
	ok_cases("4096", "bytes", 4096);
	ok("4096Bytes", VG_SIZE_MGMT, 4096);
	/* binary: the letter alone or with "iB" */
	ok_cases("3", "k", 3 * KI);
	ok_cases("3", "kib", 3 * KI);
	ok_cases("3", "m", 3 * MI);
	ok_cases("3", "mib", 3 * MI);
	ok_cases("3", "g", 3 * GI);
	ok_cases("3", "gib", 3 * GI);
	ok_cases("3", "t", 3 * TI);
	ok_cases("3", "tib", 3 * TI);
	ok_cases("3", "p", 3 * PI);
	ok_cases("3", "pib", 3 * PI);
	ok_cases("3", "e", 3 * EI);
	ok_cases("3", "eib", 3 * EI);
	ok("3KiB", VG_SIZE_MGMT, 3 * KI);
	ok("3GiB", VG_SIZE_MGMT, 3 * GI);
	ok("3gIb", VG_SIZE_MGMT, 3 * GI);
	/* decimal: the letter with "B" */
	ok_cases("3", "kb", 3 * KB);
	ok_cases("3", "mb", 3 * MB);
	ok_cases("3", "gb", 3 * GB);
	ok_cases("3", "tb", 3 * TB);
	ok_cases("3", "pb", 3 * PB);
	ok_cases("3", "eb", 3 * EB);
	ok("2GB", VG_SIZE_MGMT, 2 * GB);
	ok("2Gb", VG_SIZE_MGMT, 2 * GB);	/* bytes, not bits */
	ok("2gB", VG_SIZE_MGMT, 2 * GB);
	/* not units */
	bad("8Gi", VG_SIZE_MGMT);
	bad("8GiBB", VG_SIZE_MGMT);
	bad("8GBi", VG_SIZE_MGMT);
	bad("8bb", VG_SIZE_MGMT);
	bad("8byt", VG_SIZE_MGMT);
	bad("8bytess", VG_SIZE_MGMT);
	bad("8X", VG_SIZE_MGMT);
	bad("8XB", VG_SIZE_MGMT);
	bad("8ib", VG_SIZE_MGMT);
	bad("8Z", VG_SIZE_MGMT);
	bad("8 G", VG_SIZE_MGMT);
	bad("8G ", VG_SIZE_MGMT);
}

static void test_mgmt_numbers(void **state)
{
	const unsigned int f = VG_SIZE_MGMT;

	(void)state;
	/* fractions that come to whole bytes */
	ok("1.5G", f, 3 * GI / 2);
	ok("1.5GB", f, 1500 * MB);
	ok(".5G", f, GI / 2);
	ok("1.", f, 1);
	ok("1.0", f, 1);
	ok("1.0b", f, 1);
	ok("1.25K", f, 1280);
	ok("1.3KB", f, 1300);
	ok("0.125T", f, TI / 8);
	ok("0.000000001GB", f, 1);
	ok("1.000000000E", f, EI);
	bad("0.3", f);			/* not whole bytes */
	bad("1.5b", f);
	bad("1.3K", f);			/* 1331.2 bytes */
	bad("0.000000001T", f);		/* 1099.51 bytes */
	bad("1.0000000001G", f);	/* more than 9 fraction digits */
	bad(".", f);
	bad(".G", f);
	bad("1..0", f);
	bad("1.5.G", f);
	/* overflow: 2^64 - 1 is the largest */
	ok("15E", f, 15 * EI);
	ok("15.5E", f, 15 * EI + EI / 2);
	bad("15.999999999E", f);	/* not whole bytes */
	bad("16E", f);
	bad("16EiB", f);
	ok("18EB", f, 18 * EB);
	bad("19EB", f);
	bad("18.446744074EB", f);
	ok("18446744073709551615b", f, UINT64_MAX);
	bad("18446744073709551616b", f);
	bad("18446744073709551615.5", f);
	ok("18.446744073EB", f, 18446744073 * GB);
	ok("16383.5P", f, 16383 * PI + PI / 2);
	bad("16384P", f);
	/* garbage */
	bad("0x10", f);
	bad(" 4", f);
	bad("+4", f);
	bad("4,5G", f);
	bad("1e3", f);			/* E is exbi, and "1e3" is no number */
	bad("G", f);
	bad("b", f);
	bad("\t4G", f);
}

static void fmt(uint64_t v, unsigned int flags, const char *want)
{
	char buf[VG_SIZE_TEXT];
	uint64_t back = 0;

	memset(buf, 'x', sizeof(buf));
	if (vg_format_size(v, flags, buf, sizeof(buf)) != buf ||
	    strcmp(buf, want))
		fail_msg("%llu (flags %#x): \"%.*s\", want \"%s\"",
			 (unsigned long long)v, flags, (int)sizeof(buf), buf,
			 want);
	if (flags & VG_FMT_BYTES_WORD)
		return;
	if (vg_parse_size(buf, VG_SIZE_MGMT, &back) || back != v)
		fail_msg("\"%s\" reads back as %llu, not %llu", buf,
			 (unsigned long long)back, (unsigned long long)v);
}

static void test_format(void **state)
{
	char small[6];

	(void)state;
	fmt(0, 0, "0");
	fmt(0, VG_FMT_BYTES_WORD, "0 bytes");
	fmt(1536, 0, "1536");
	fmt(1536, VG_FMT_BYTES_WORD, "1536 bytes");
	fmt(KI, 0, "1KiB");
	fmt(1536 * KI, 0, "1536KiB");		/* 1.5 MiB is not whole MiB */
	fmt(66 * GI, VG_FMT_BYTES_WORD, "66GiB");
	fmt(4 * GI + 4096, 0, "4194308KiB");
	fmt(3 * TI, 0, "3TiB");
	fmt(5 * PI, 0, "5PiB");
	fmt(1ull << 63, 0, "8EiB");
	fmt(15ull << 60, 0, "15EiB");
	fmt(UINT64_MAX, 0, "18446744073709551615");
	fmt(UINT64_MAX, VG_FMT_BYTES_WORD, "18446744073709551615 bytes");
	/* a short buffer is cut and still a string */
	vg_format_size(123456789, 0, small, sizeof(small));
	assert_string_equal(small, "12345");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_set),
		cmocka_unit_test(test_nl),
		cmocka_unit_test(test_sim),
		cmocka_unit_test(test_guest),
		cmocka_unit_test(test_mgmt_units),
		cmocka_unit_test(test_mgmt_numbers),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
