/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Request traces: the arrivals and sizes of inference requests, read from a
 * CSV file in the three-column format of the Azure LLM inference traces
 * (Azure Public Dataset, AzureLLMInferenceTrace_{conv,code}.csv):
 *
 *   TIMESTAMP,ContextTokens,GeneratedTokens
 *   2023-11-16 18:15:46.6805900,374,44
 *
 * The first line names the three columns in that order (case does not
 * matter). A timestamp is "YYYY-MM-DD HH:MM:SS" with up to nine digits of
 * fraction (read as UTC), or a plain number of seconds ("12.25") for
 * hand-written traces; one file uses one form. Token counts are whole
 * numbers from 0 to RQ_MAX_TOKENS (a request with no context is refused:
 * every request has a prompt). Rows are in time order (equal times are
 * fine). Fields may be quoted ("374") and padded with blanks; lines end in
 * LF or CRLF; the last may have no end; empty lines and a UTF-8 byte order
 * mark are skipped. Nothing
 * else is accepted: any other row is an error naming the file, the line and
 * the column, and nothing is returned.
 *
 * The file is untrusted input (tests/fuzz/fuzz_reqtrace.c feeds it
 * arbitrary bytes): the parser reads only inside the buffer it is given,
 * bounds every number before using it, and caps rows and file size.
 */
#ifndef VGSIM_REQTRACE_H
#define VGSIM_REQTRACE_H

#include <stddef.h>
#include <stdint.h>

#define RQ_MAX_TOKENS	(1u << 24)		/* per field: 16 M tokens */
#define RQ_MAX_ROWS	(1u << 24)		/* requests in one trace */
#define RQ_MAX_BYTES	(1ull << 30)		/* a trace file's size */

struct rq_req {
	uint64_t at_ns;		/* arrival, from the first request's */
	uint32_t context;	/* prompt tokens (>= 1) */
	uint32_t generated;	/* tokens generated for it */
};

struct rq_trace {
	struct rq_req *req;	/* nr requests in time order; NULL if none */
	size_t nr;
	int64_t t0_s;		/* first arrival: seconds since the epoch, or 0
				 * for a trace in plain seconds */
	uint64_t span_ns;	/* last arrival - first */
	uint64_t tokens;	/* sum of context + generated */
};

/*
 * Parses len bytes of buf (need not end in NUL). On success fills *t
 * (free it with rq_free) and returns 0; a trace with a header and no rows
 * is valid (nr 0). On error returns -EINVAL (a malformed file: err holds
 * "NAME:LINE: what is wrong"), -E2BIG (over RQ_MAX_ROWS or RQ_MAX_BYTES) or
 * -ENOMEM, and leaves *t empty. name is only used in messages.
 */
int rq_parse(const char *buf, size_t len, const char *name,
	     struct rq_trace *t, char *err, size_t errlen);

/* Reads and parses a file; errors as rq_parse, plus the file's -errno. */
int rq_load(const char *path, struct rq_trace *t, char *err, size_t errlen);

void rq_free(struct rq_trace *t);

#endif
