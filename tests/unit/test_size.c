// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The shared size parser (lib/util/size.c): each caller's syntax as
 * size.h lists it, and values past 2^64 - 1 refused in every one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/util/size.h"

#define KI	(1ull << 10)
#define MI	(1ull << 20)
#define GI	(1ull << 30)
#define TI	(1ull << 40)
#define PI	(1ull << 50)

static const unsigned int all_sets[] = {
	VG_SIZE_NL, VG_SIZE_SIM, VG_SIZE_GUEST, VG_SIZE_CONFIG, VG_SIZE_REST,
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
	/* 2^64 - 1 itself: strtoull's callers take it. */
	ok("18446744073709551615", VG_SIZE_NL, UINT64_MAX);
	ok("18446744073709551615", VG_SIZE_SIM, UINT64_MAX);
	ok("18446744073709551615", VG_SIZE_GUEST, UINT64_MAX);
	/* mgmtd's digit loop stops a little earlier (size.h). */
	bad("18446744073709551615", VG_SIZE_CONFIG);
	bad("18446744073709551615", VG_SIZE_REST);
	ok("18446744073709551609", VG_SIZE_CONFIG, 18446744073709551609ull);
	ok("18446744073709551609", VG_SIZE_REST, 18446744073709551609ull);
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

static void test_config(void **state)
{
	const unsigned int f = VG_SIZE_CONFIG;

	(void)state;
	ok("8g", f, 8 * GI);
	ok("1.5G", f, 3 * GI / 2);
	ok(".5G", f, GI / 2);
	ok("1.", f, 1);
	ok("1.0", f, 1);
	ok("1.0B", f, 1);
	ok("512MiB", f, 512 * MI);
	ok("512mib", f, 512 * MI);
	ok("512MIB", f, 512 * MI);
	ok("512Mb", f, 512 * MI);
	ok("512Mi", f, 512 * MI);
	ok("4096B", f, 4096);
	ok("1.25K", f, 1280);
	ok("0.125T", f, TI / 8);
	bad("0.000000001T", f);		/* 1099.51 bytes */
	bad("4096b", f);
	bad("0.3", f);			/* not whole bytes */
	bad("1.3K", f);
	bad(".", f);
	bad("1P", f);
	bad("1.0000000001G", f);	/* more than 9 fraction digits */
	bad("0x10", f);
	bad(" 4", f);
}

static void test_rest(void **state)
{
	const unsigned int f = VG_SIZE_REST;

	(void)state;
	ok("1.5GiB", f, 3 * GI / 2);
	ok("1.5G", f, 3 * GI / 2);
	ok("1.3K", f, 1331);		/* 1331.2, rounded down */
	ok("4096B", f, 4096);
	ok("8GB", f, 8 * GI);
	ok("8Gi", f, 8 * GI);
	ok("1P", f, PI);
	ok("16383P", f, 16383 * PI);
	bad("16384P", f);
	bad("99999999999P", f);
	bad("8g", f);
	bad("8GI", f);
	bad("8Gb", f);
	bad("4096b", f);
	bad("1.5", f);			/* a fraction needs a unit */
	bad("1.0", f);
	bad("1.0B", f);
	bad(".5G", f);
	bad("1.G", f);
	bad("1.0000000001G", f);
	bad("0x10", f);
	ok("0.000000001T", f, 1099);	/* 1099.51 bytes, rounded down */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_set),
		cmocka_unit_test(test_nl),
		cmocka_unit_test(test_sim),
		cmocka_unit_test(test_guest),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
