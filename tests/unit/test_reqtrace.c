// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The request-trace reader (tools/vgmem-sim/reqtrace.c): the published Azure
 * trace reads in full with the values an independent reader computes, the
 * format's latitude (quotes, blanks, CRLF, BOM, no final newline, plain
 * seconds) is honoured, and every malformed file is refused with a message
 * naming its line and what is wrong, returning nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "tools/vgmem-sim/reqtrace.h"

#define AZURE	"tests/data/traces/azure-llm-2023-conv.csv"
#define HDR	"TIMESTAMP,ContextTokens,GeneratedTokens\n"

static int parse(const char *text, struct rq_trace *t, char *err, size_t n)
{
	return rq_parse(text, strlen(text), "t.csv", t, err, n);
}

/*
 * Known answers from Python's csv and calendar.timegm over the same file:
 * 19366 rows, first 2023-11-16 18:15:46.68059 UTC, last 3501.721937 s
 * later, 26450535 tokens; row 101 is 18:16:29.371828,890,402.
 */
static void test_azure_trace(void **state)
{
	struct rq_trace t;
	char err[256];

	(void)state;
	assert_int_equal(rq_load(AZURE, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nr, 19366);
	assert_int_equal(t.t0_s, 1700158546);
	assert_int_equal(t.req[0].at_ns, 0);
	assert_int_equal(t.span_ns, 3501721937000ull);
	assert_int_equal(t.req[t.nr - 1].at_ns, t.span_ns);
	assert_int_equal(t.tokens, 26450535);
	assert_int_equal(t.req[100].at_ns, 43ull * 1000000000 - 308762000);
	assert_int_equal(t.req[100].context, 890);
	assert_int_equal(t.req[100].generated, 402);
	assert_int_equal(t.req[0].context, 374);
	assert_int_equal(t.req[0].generated, 44);
	rq_free(&t);
	assert_null(t.req);
}

static void test_latitude(void **state)
{
	static const char text[] =
		"\xef\xbb\xbf timestamp , \"contexttokens\",GENERATEDTOKENS\r\n"
		"\r\n"
		"2024-02-29T23:59:59.5,\"10\", 0\r\n"
		"   \n"
		"\"2024-03-01 00:00:00\",1 ,7\r\n"
		"2024-03-01 00:00:00.000000001,3,4";
	struct rq_trace t;
	char err[256];

	(void)state;
	assert_int_equal(parse(text, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nr, 3);
	assert_int_equal(t.req[0].at_ns, 0);
	assert_int_equal(t.req[0].context, 10);
	assert_int_equal(t.req[0].generated, 0);
	assert_int_equal(t.req[1].at_ns, 500000000);
	assert_int_equal(t.req[2].at_ns, 500000001);
	assert_int_equal(t.span_ns, 500000001);
	assert_int_equal(t.tokens, 10 + 0 + 1 + 7 + 3 + 4);
	/* 2024-02-29 23:59:59 UTC */
	assert_int_equal(t.t0_s, 1709251199);
	rq_free(&t);

	assert_int_equal(parse(HDR "0,5,5\n2.25,6,6\n2.25,7,7\n", &t, err,
			       sizeof(err)), 0);
	assert_int_equal(t.nr, 3);
	assert_int_equal(t.t0_s, 0);
	assert_int_equal(t.req[1].at_ns, 2250000000ull);
	assert_int_equal(t.req[2].at_ns, 2250000000ull);
	rq_free(&t);

	/* A header alone is an empty trace, not an error. */
	assert_int_equal(parse(HDR, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nr, 0);
	assert_null(t.req);
}

static const struct {
	const char *text;
	const char *says;	/* in the message, after "t.csv:LINE: " */
	unsigned int line;
	size_t len;		/* bytes of text, if not strlen's */
} bad[] = {
	{ "", "no header line", 1, 0 },
	{ "\n\n", "no header line", 2, 0 },
	{ "2023-11-16 18:15:46,1,1\n", "header is '2023-11-16 18:15:46'", 1, 0 },
	{ "TIMESTAMP,GeneratedTokens,ContextTokens\n", "column 2 of the header", 1, 0 },
	{ "TIMESTAMP,ContextTokens\n", "2 columns, expected 3", 1, 0 },
	{ HDR "1,2,3,4\n", "more than 3 columns", 2, 0 },
	{ HDR "1,2\n", "2 columns", 2, 0 },
	{ HDR "1,1,1\n\n1,\"2,3\n", "unterminated quote", 4, 0 },
	{ HDR "1,2\"3,4\n", "stray quote", 2, 0 },
	{ HDR "2023-02-29 00:00:00,1,1\n", "not a valid date", 2, 0 },
	{ HDR "2023-13-01 00:00:00,1,1\n", "not a valid date", 2, 0 },
	{ HDR "2023-01-01 24:00:00,1,1\n", "not a valid date", 2, 0 },
	{ HDR "1969-12-31 23:59:59,1,1\n", "not a valid date", 2, 0 },
	{ HDR "2023-01-01 00:00:00.1234567890,1,1\n", "is not a time", 2, 0 },
	{ HDR "2023-01-01 00:00,1,1\n", "is not a time", 2, 0 },
	{ HDR "2023-01-01x00:00:00,1,1\n", "is not a time", 2, 0 },
	{ HDR "-1,1,1\n", "neither a time", 2, 0 },
	{ HDR "12345678901,1,1\n", "neither a time", 2, 0 },
	{ HDR "1.,1,1\n", "neither a time", 2, 0 },
	{ HDR "1,0,5\n", "ContextTokens): 0, at least 1", 2, 0 },
	{ HDR "1,1,-5\n", "(GeneratedTokens): '-5' is not a token count", 2, 0 },
	{ HDR "1,1e3,5\n", "'1e3' is not a token count", 2, 0 },
	{ HDR "1,16777217,5\n", "'16777217' is not a token count", 2, 0 },
	{ HDR "1,99999999999999999999999,5\n", "is not a token count", 2, 0 },
	{ HDR "1,,5\n", "'' is not a token count", 2, 0 },
	{ HDR "5,1,1\n4.9,1,1\n", "earlier than the row above", 3, 0 },
	{ HDR "2023-01-01 00:00:01,1,1\n2023-01-01 00:00:00.9,1,1\n",
	  "earlier than the row above", 3, 0 },
	{ HDR "0,1,1\n2023-01-01 00:00:00,1,1\n", "but the first row has plain", 3, 0 },
	{ HDR "2000-01-01 00:00:00,1,1\n2040-01-01 00:00:00,1,1\n",
	  "more than 1000000000 s after", 3, 0 },
	{ HDR "1,1\x01,1\n", "'1?' is not a token count", 2, 0 },
	{ HDR "1,1,1\0\n", "'1?' is not a token count", 2,
	  sizeof(HDR "1,1,1\0\n") - 1 },
};

static void test_malformed(void **state)
{
	struct rq_trace t;
	char err[256], want[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);

		memset(&t, 0x5a, sizeof(t));
		print_message("case %zu: %s\n", i, bad[i].says);
		assert_int_equal(rq_parse(bad[i].text, len, "t.csv", &t, err,
					  sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "t.csv:%u: ", bad[i].line);
		if (strncmp(err, want, strlen(want)) || !strstr(err, bad[i].says))
			fail_msg("case %zu: got '%s', want '%s...%s'", i, err,
				 want, bad[i].says);
		assert_null(t.req);
		assert_int_equal(t.nr, 0);
	}
}

static void test_load_errors(void **state)
{
	struct rq_trace t;
	char err[256];

	(void)state;
	assert_int_equal(rq_load("tests/data/traces/no-such.csv", &t, err,
				 sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no-such.csv: No such file"));
	assert_int_equal(rq_load("tests/data/traces", &t, err, sizeof(err)),
			 -EISDIR);
	assert_null(t.req);
	/* A NULL or zero-sized message buffer is allowed. */
	assert_int_equal(rq_parse("x", 1, "t.csv", &t, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_azure_trace),
		cmocka_unit_test(test_latitude),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_load_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
