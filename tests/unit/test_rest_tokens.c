// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The TCP listener's token file (mgmtd/rest_tokens.h): one unnamed token
 * as before, or named tokens; every malformed file refused with the line
 * and what is wrong, never the secret; the match compares every token.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mgmtd/rest_tokens.h"

#define S1	"0123456789abcdef-one"
#define S2	"0123456789abcdef-two"

static int parse(const char *text, struct rest_tokens *t, char *err,
		 size_t len)
{
	err[0] = 0;
	return rest_tokens_parse(text, strlen(text), t, err, len);
}

static void test_unnamed(void **state)
{
	struct rest_tokens t;
	char err[200];

	(void)state;
	assert_int_equal(parse(S1 "\n", &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.v[0].name, "token");
	assert_int_equal(t.v[0].len, strlen(S1));
	assert_ptr_equal(rest_tokens_match(&t, S1, strlen(S1)), &t.v[0]);
	assert_null(rest_tokens_match(&t, S2, strlen(S2)));
	assert_null(rest_tokens_match(&t, S1, strlen(S1) - 1));
	assert_null(rest_tokens_match(&t, "", 0));
	rest_tokens_free(&t);
	/* CRLF, no final newline, blanks around */
	assert_int_equal(parse("  " S1 " \r\n", &t, err, sizeof(err)), 0);
	assert_string_equal(t.v[0].secret, S1);
	rest_tokens_free(&t);
}

static void test_named(void **state)
{
	struct rest_tokens t;
	char err[200];

	(void)state;
	assert_int_equal(parse("# operators\n\nci " S1 "\nnova.host-1\t" S2 "\n",
			       &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.v[0].name, "ci");
	assert_string_equal(t.v[1].name, "nova.host-1");
	assert_string_equal(rest_tokens_match(&t, S2, strlen(S2))->name,
			    "nova.host-1");
	assert_string_equal(rest_tokens_match(&t, S1, strlen(S1))->name, "ci");
	assert_null(rest_tokens_match(&t, "ci " S1, strlen("ci " S1)));
	rest_tokens_free(&t);
	assert_int_equal(t.n, 0);
}

static void test_refused(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "", "no token" },
		{ "# only a comment\n\n", "no token" },
		{ "short\n", "line 1: not a token" },
		{ "ci short\n", "line 1: the token of ci is not" },
		{ "ci " S1 "\nci " S2 "\n", "line 2: the name ci is given twice" },
		{ "ci " S1 "\nops " S1 "\n", "line 2: the token of ops is ci's too" },
		{ "c/i " S1 "\n", "line 1: not a token name" },
		{ "abcdefghijklmnopqrstuvwxyzabcdefg " S1 "\n", "line 1: not a token name" },
		{ "ci " S1 " extra\n", "line 1: the token of ci is not" },
		{ S1 "\nops " S2 "\n", "line 1: a token without a name among several" },
		{ "ops " S2 "\n\n" S1 "\n", "line 3: a token without a name among several" },
		{ "ci " S1 "\x01\n", "line 1: the token of ci is not" },
	};
	struct rest_tokens t;
	char err[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i].text, &t, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].says))
			fail_msg("case %zu: '%s' instead of '%s'", i, err,
				 bad[i].says);
		assert_int_equal(t.n, 0);
		assert_null(t.v);
		/* an error never shows a secret */
		assert_null(strstr(err, "0123456789abcdef"));
	}
}

/* More than REST_TOKENS_MAX, and a file that cannot be read. */
static void test_limits_and_load(void **state)
{
	char path[] = "/tmp/test-rest-tokens-XXXXXX", err[200] = "";
	struct rest_tokens t;
	char *text, line[96];
	size_t i, n = 0;
	FILE *f;
	int fd;

	(void)state;
	text = calloc(REST_TOKENS_MAX + 1, sizeof(line));
	assert_non_null(text);
	for (i = 0; i <= REST_TOKENS_MAX; i++) {
		snprintf(line, sizeof(line), "t%zu %s-%zu\n", i, S1, i);
		memcpy(text + n, line, strlen(line));
		n += strlen(line);
	}
	assert_int_equal(rest_tokens_parse(text, n, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 64 tokens"));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	/* exactly the maximum is fine */
	fwrite(text, 1, n - strlen(line), f);
	fclose(f);
	assert_int_equal(rest_tokens_load(path, &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, REST_TOKENS_MAX);
	rest_tokens_free(&t);
	unlink(path);
	assert_int_equal(rest_tokens_load(path, &t, err, sizeof(err)), -ENOENT);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unnamed),
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_limits_and_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
