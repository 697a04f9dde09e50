// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's settings (mgmtd/config.c): a value outside a setting's range is
 * refused with a message naming the range and leaves the setting as it
 * was, so the daemon never runs with something other than what was asked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mgmtd/config.h"

static void test_rest_threads_range(void **state)
{
	struct mg_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(mg_config_defaults(&cfg), 0);
	assert_int_equal(cfg.rest_threads, 4);
	assert_int_equal(mg_config_set(&cfg, "rest_threads", "64", err,
				       sizeof(err)), 0);
	assert_int_equal(cfg.rest_threads, 64);
	/* The REST server would have used 64 for these: refused instead. */
	assert_int_not_equal(mg_config_set(&cfg, "rest_threads", "65", err,
					   sizeof(err)), 0);
	assert_non_null(strstr(err, "1..64"));
	assert_int_not_equal(mg_config_set(&cfg, "rest_threads", "0", err,
					   sizeof(err)), 0);
	assert_int_not_equal(mg_config_set(&cfg, "rest_threads", "4x", err,
					   sizeof(err)), 0);
	assert_int_equal(cfg.rest_threads, 64);
	assert_int_equal(mg_config_set(&cfg, "rest_threads", "1", err,
				       sizeof(err)), 0);
	assert_int_equal(cfg.rest_threads, 1);
	mg_config_free(&cfg);
}

static void test_unknown_setting(void **state)
{
	struct mg_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(mg_config_defaults(&cfg), 0);
	assert_int_not_equal(mg_config_set(&cfg, "rest_thread", "2", err,
					   sizeof(err)), 0);
	assert_non_null(strstr(err, "unknown setting 'rest_thread'"));
	assert_int_equal(cfg.rest_threads, 4);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rest_threads_range),
		cmocka_unit_test(test_unknown_setting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
