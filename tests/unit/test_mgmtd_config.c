// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's settings (mgmtd/config.c): a value outside a setting's range is
 * refused with a message naming the range and leaves the setting as it
 * was, so the daemon never runs with something other than what was asked.
 * Sizes are read in one syntax wherever they are written: the config
 * file, a domain's XML and a REST body.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mgmtd/config.h"
#include "mgmtd/mgmtd.h"
#include "mgmtd/rest_json.h"

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

#define VMU	"9a0e5f2c-1111-4222-8333-944455556666"

static const struct {
	const char *s;
	uint64_t v;	/* 0: refused */
} sizes[] = {
	{ "8G", 8ull << 30 },	{ "8g", 8ull << 30 },
	{ "8GiB", 8ull << 30 },	{ "8gib", 8ull << 30 },
	{ "2GB", 2000000000 },	{ "2gb", 2000000000 },
	{ "512M", 512ull << 20 }, { "512MB", 512000000 },
	{ "1.5G", 3ull << 29 },	{ "1.5GB", 1500000000 },
	{ "3T", 3ull << 40 },	{ "1P", 1ull << 50 },
	{ "4194304", 4194304 },	{ "4194304b", 4194304 },
	{ "4194304Bytes", 4194304 },
	{ "8Gi", 0 },		{ "1.3K", 0 },	{ "8 G", 0 },
	{ "-1G", 0 },		{ "16E", 0 },	{ "8X", 0 },
};

static void test_sizes_everywhere(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const char *s = sizes[i].s;
		uint64_t want = sizes[i].v;
		struct mg_embedded_vm vm;
		struct mg_vm_policy p;
		struct rj_error e;
		unsigned int mask;
		char buf[256], err[256];
		int gpu, ret;

		/* the config file's vm= (and --embedded-vm) */
		snprintf(buf, sizeof(buf), "web1:" VMU ":%s", s);
		ret = mg_parse_embedded_vm(buf, &vm);
		if (want ? ret || vm.quota != want : !ret)
			fail_msg("config vm=%s: %d", buf, ret);
		/* domain XML */
		snprintf(buf, sizeof(buf),
			 "<gpu xmlns='" MG_XMLNS "' quota='%s'/>", s);
		ret = mg_metadata_parse(buf, &p, &mask, &gpu, err, sizeof(err));
		if (want ? ret || p.quota != want : !ret)
			fail_msg("XML quota='%s': %d %s", s, ret, ret ? err : "");
		/* REST */
		snprintf(buf, sizeof(buf), "{\"quota\":\"%s\"}", s);
		memset(&e, 0, sizeof(e));
		ret = rj_parse_policy(buf, strlen(buf), true, &p, &mask, NULL, &e);
		if (want ? ret || p.quota != want : !ret)
			fail_msg("REST %s: %d %s", buf, ret, e.msg);
	}
}

/* A config setting that is a size takes the same strings. */
static void test_size_setting(void **state)
{
	struct mg_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(mg_config_defaults(&cfg), 0);
	assert_int_equal(mg_config_set(&cfg, "embedded_vram", "16GB", err,
				       sizeof(err)), 0);
	assert_true(cfg.embedded_vram == 16000000000ull);
	assert_int_equal(mg_config_set(&cfg, "embedded_vram", "16gib", err,
				       sizeof(err)), 0);
	assert_true(cfg.embedded_vram == 16ull << 30);
	assert_int_not_equal(mg_config_set(&cfg, "embedded_vram", "16Gi", err,
					   sizeof(err)), 0);
	assert_non_null(strstr(err, "'16Gi' is not a size"));
	assert_true(cfg.embedded_vram == 16ull << 30);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rest_threads_range),
		cmocka_unit_test(test_unknown_setting),
		cmocka_unit_test(test_sizes_everywhere),
		cmocka_unit_test(test_size_setting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
