// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmem-sim's request-trace reader (tools/vgmem-sim/reqtrace.c), which reads
 * whatever file an operator or a downloaded dataset names: the input is the
 * file's bytes, in a buffer of exactly that size (no terminating NUL).
 *
 * Invariants: 0, -EINVAL or -ENOMEM; on -EINVAL a message that starts with
 * the file's name and a line number no larger than the input's line count,
 * and nothing returned; on success at most one request per line after the
 * header, arrivals from 0 in order, span the last arrival, context tokens
 * at least 1, every count within RQ_MAX_TOKENS and the token total their
 * sum. Written back as a trace in plain seconds with nine digits of
 * fraction and read again, the requests are the same, value for value.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/vgmem-sim/reqtrace.h"
#include "fuzz_util.h"

static void check(const struct rq_trace *t, size_t lines)
{
	uint64_t tokens = 0, prev = 0;
	size_t i;

	if (t->nr > lines || (t->nr && !t->req))
		fuzz_die("%zu requests from %zu lines", t->nr, lines);
	for (i = 0; i < t->nr; i++) {
		const struct rq_req *r = &t->req[i];

		if (r->at_ns < prev || (i == 0 && r->at_ns))
			fuzz_die("request %zu at %" PRIu64 " ns, previous %" PRIu64,
				 i, r->at_ns, prev);
		if (!r->context || r->context > RQ_MAX_TOKENS ||
		    r->generated > RQ_MAX_TOKENS)
			fuzz_die("request %zu: %u + %u tokens", i, r->context,
				 r->generated);
		tokens += (uint64_t)r->context + r->generated;
		prev = r->at_ns;
	}
	if (t->tokens != tokens || t->span_ns != prev)
		fuzz_die("totals: %" PRIu64 " tokens (sum %" PRIu64 "), span %"
			 PRIu64 " (last %" PRIu64 ")", t->tokens, tokens,
			 t->span_ns, prev);
}

/* The trace written back in plain seconds, and read again. */
static void round_trip(const struct rq_trace *t)
{
	char *buf, err[256];
	struct rq_trace u;
	size_t cap = 64 + t->nr * 48, len;
	FILE *f;
	int ret;

	buf = malloc(cap);
	if (!buf)
		fuzz_die("malloc");
	f = fmemopen(buf, cap, "w");
	if (!f)
		fuzz_die("fmemopen");
	fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n", f);
	for (size_t i = 0; i < t->nr; i++)
		fprintf(f, "%" PRIu64 ".%09" PRIu64 ",%u,%u\n",
			t->req[i].at_ns / 1000000000, t->req[i].at_ns % 1000000000,
			t->req[i].context, t->req[i].generated);
	len = (size_t)ftell(f);
	fclose(f);
	ret = rq_parse(buf, len, "again.csv", &u, err, sizeof(err));
	if (ret)
		fuzz_die("written back, not read again: %d %s", ret, err);
	if (u.nr != t->nr || u.tokens != t->tokens || u.span_ns != t->span_ns ||
	    (t->nr && memcmp(u.req, t->req, t->nr * sizeof(*t->req))))
		fuzz_die("written back and read again, the trace differs");
	rq_free(&u);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rq_trace t;
	char err[256];
	size_t lines = 1;
	unsigned long line;
	int ret;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	ret = rq_parse((const char *)data, size, "in.csv", &t, err, sizeof(err));
	if (ret == -EINVAL) {
		if (sscanf(err, "in.csv:%lu: ", &line) != 1 || !line ||
		    line > lines)
			fuzz_die("message '%s' for %zu lines", err, lines);
		if (t.req || t.nr)
			fuzz_die("an error returned %zu requests", t.nr);
		return 0;
	}
	if (ret == -ENOMEM)
		return 0;
	if (ret)
		fuzz_die("rq_parse returned %d", ret);
	check(&t, lines - 1);
	round_trip(&t);
	rq_free(&t);
	return 0;
}
