// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Request traces (reqtrace.h): a strict reader for the three-column CSV of
 * the Azure LLM inference traces. Every check names the line and column,
 * because a trace that is silently half-read makes a replay lie.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "reqtrace.h"

#define NS_PER_S	1000000000ull
/* A trace may span at most this (about 31 years): keeps at_ns in 2^63. */
#define RQ_MAX_SPAN_S	1000000000ll

static const char *const rq_columns[3] = {
	"TIMESTAMP", "ContextTokens", "GeneratedTokens"
};

struct rq_field {
	const char *p;
	size_t len;
};

/* One timestamp: whole seconds (since the epoch, or plain) and a fraction. */
struct rq_time {
	int64_t s;
	uint32_t ns;
	bool civil;	/* "YYYY-MM-DD HH:MM:SS" rather than plain seconds */
};

struct rq_parser {
	const char *name;
	unsigned long line;
	char *err;
	size_t errlen;
};

static int rq_error(struct rq_parser *ps, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (ps->errlen)
		snprintf(ps->err, ps->errlen, "%s:%lu: %s", ps->name, ps->line,
			 what);
	return -EINVAL;
}

/* A field as it can be quoted in a message: printable, at most 32 bytes. */
static const char *rq_show(const struct rq_field *f, char *buf, size_t size)
{
	size_t i, n = f->len < 32 ? f->len : 32;

	for (i = 0; i < n && i + 1 < size; i++) {
		unsigned char c = (unsigned char)f->p[i];

		buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	buf[i] = '\0';
	if (f->len > n && i + 4 < size)
		strcpy(buf + i, "...");
	return buf;
}

static bool rq_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Trims blanks and one pair of double quotes; a stray quote is an error. */
static int rq_unquote(struct rq_parser *ps, struct rq_field *f, int col)
{
	char show[40];

	while (f->len && rq_blank(f->p[0])) {
		f->p++;
		f->len--;
	}
	while (f->len && rq_blank(f->p[f->len - 1]))
		f->len--;
	if (f->len && f->p[0] == '"') {
		if (f->len < 2 || f->p[f->len - 1] != '"')
			return rq_error(ps, "column %d: unterminated quote in '%s'",
					col, rq_show(f, show, sizeof(show)));
		f->p++;
		f->len -= 2;
	}
	if (memchr(f->p, '"', f->len))
		return rq_error(ps, "column %d: stray quote in '%s'", col,
				rq_show(f, show, sizeof(show)));
	return 0;
}

/* Splits a line into exactly three unquoted fields. */
static int rq_split(struct rq_parser *ps, const char *p, size_t len,
		    struct rq_field f[3])
{
	const char *end = p + len;
	int n = 0, ret, i;

	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;

		if (n == 3)
			return rq_error(ps, "more than 3 columns");
		f[n].p = p;
		f[n].len = (size_t)(stop - p);
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (n != 3)
		return rq_error(ps, "%d column%s, expected 3 (%s,%s,%s)", n,
				n == 1 ? "" : "s", rq_columns[0], rq_columns[1],
				rq_columns[2]);
	for (i = 0; i < 3; i++) {
		ret = rq_unquote(ps, &f[i], i + 1);
		if (ret)
			return ret;
	}
	return 0;
}

/* Reads exactly n decimal digits at *p. */
static bool rq_digits(const char **p, const char *end, int n, uint32_t *out)
{
	uint32_t v = 0;

	if (end - *p < n)
		return false;
	while (n--) {
		if (**p < '0' || **p > '9')
			return false;
		v = v * 10 + (uint32_t)(**p - '0');
		(*p)++;
	}
	*out = v;
	return true;
}

/* One separator, any of the characters of seps. */
static bool rq_sep(const char **p, const char *end, const char *seps)
{
	if (*p == end || !**p || !strchr(seps, **p))
		return false;
	(*p)++;
	return true;
}

/* An optional ".ddddddddd" (1 to 9 digits) ending the field. */
static bool rq_fraction(const char *p, const char *end, uint32_t *ns)
{
	uint32_t scale = 100000000, v = 0;

	*ns = 0;
	if (p == end)
		return true;
	if (*p++ != '.' || p == end || end - p > 9)
		return false;
	for (; p < end; p++, scale /= 10) {
		if (*p < '0' || *p > '9')
			return false;
		v += (uint32_t)(*p - '0') * scale;
	}
	*ns = v;
	return true;
}

/* Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant). */
static int64_t rq_days(int64_t y, uint32_t m, uint32_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static uint32_t rq_month_days(uint32_t y, uint32_t m)
{
	static const uint8_t days[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

static int rq_time(struct rq_parser *ps, const struct rq_field *f,
		   struct rq_time *t)
{
	const char *p = f->p, *end = f->p + f->len;
	uint32_t y, mo, d, h, mi, s;
	char show[40];

	if (f->len >= 10 && f->p[4] == '-') {
		if (!rq_digits(&p, end, 4, &y) || !rq_sep(&p, end, "-") ||
		    !rq_digits(&p, end, 2, &mo) || !rq_sep(&p, end, "-") ||
		    !rq_digits(&p, end, 2, &d) || !rq_sep(&p, end, " T") ||
		    !rq_digits(&p, end, 2, &h) || !rq_sep(&p, end, ":") ||
		    !rq_digits(&p, end, 2, &mi) || !rq_sep(&p, end, ":") ||
		    !rq_digits(&p, end, 2, &s) || !rq_fraction(p, end, &t->ns))
			return rq_error(ps, "column 1 (TIMESTAMP): '%s' is not a time "
					"(YYYY-MM-DD HH:MM:SS[.fraction])",
					rq_show(f, show, sizeof(show)));
		if (y < 1970 || mo < 1 || mo > 12 || d < 1 ||
		    d > rq_month_days(y, mo) || h > 23 || mi > 59 || s > 59)
			return rq_error(ps, "column 1 (TIMESTAMP): '%s' is not a valid date "
					"and time", rq_show(f, show, sizeof(show)));
		t->s = rq_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
		t->civil = true;
		return 0;
	}
	/* Plain seconds: 1 to 10 digits, an optional fraction. */
	t->s = 0;
	while (p < end && *p >= '0' && *p <= '9' && p - f->p < 10)
		t->s = t->s * 10 + (*p++ - '0');
	if (p == f->p || !rq_fraction(p, end, &t->ns))
		return rq_error(ps, "column 1 (TIMESTAMP): '%s' is neither a time "
				"(YYYY-MM-DD HH:MM:SS[.fraction]) nor seconds",
				rq_show(f, show, sizeof(show)));
	t->civil = false;
	return 0;
}

static int rq_tokens(struct rq_parser *ps, const struct rq_field *f, int col,
		     uint32_t min, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;
	char show[40];

	for (i = 0; i < f->len; i++) {
		if (f->p[i] < '0' || f->p[i] > '9' || v > RQ_MAX_TOKENS)
			break;
		v = v * 10 + (uint64_t)(f->p[i] - '0');
	}
	if (!f->len || i < f->len || v > RQ_MAX_TOKENS)
		return rq_error(ps, "column %d (%s): '%s' is not a token count "
				"(a whole number from %u to %u)", col,
				rq_columns[col - 1], rq_show(f, show, sizeof(show)),
				min, RQ_MAX_TOKENS);
	if (v < min)
		return rq_error(ps, "column %d (%s): %llu, at least %u", col,
				rq_columns[col - 1], (unsigned long long)v, min);
	*out = (uint32_t)v;
	return 0;
}

static int rq_header(struct rq_parser *ps, const struct rq_field f[3])
{
	char show[40];
	int i;

	for (i = 0; i < 3; i++)
		if (f[i].len != strlen(rq_columns[i]) ||
		    strncasecmp(f[i].p, rq_columns[i], f[i].len))
			return rq_error(ps, "column %d of the header is '%s', "
					"expected %s (the header is %s,%s,%s)",
					i + 1, rq_show(&f[i], show, sizeof(show)),
					rq_columns[i], rq_columns[0],
					rq_columns[1], rq_columns[2]);
	return 0;
}

static int rq_push(struct rq_trace *t, size_t *cap, const struct rq_req *r)
{
	if (t->nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct rq_req *n;

		if (ncap > RQ_MAX_ROWS)
			ncap = RQ_MAX_ROWS;
		if (t->nr >= ncap)
			return -E2BIG;
		n = realloc(t->req, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->req = n;
		*cap = ncap;
	}
	t->req[t->nr++] = *r;
	return 0;
}

static int rq_row(struct rq_parser *ps, const struct rq_field f[3],
		  struct rq_time *first, struct rq_time *prev, bool *have,
		  struct rq_trace *t, size_t *cap)
{
	struct rq_time tm;
	struct rq_req r;
	int64_t ds;
	int ret;

	ret = rq_time(ps, &f[0], &tm);
	if (!ret)
		ret = rq_tokens(ps, &f[1], 2, 1, &r.context);
	if (!ret)
		ret = rq_tokens(ps, &f[2], 3, 0, &r.generated);
	if (ret)
		return ret;
	if (*have && tm.civil != first->civil)
		return rq_error(ps, "column 1 (TIMESTAMP): %s, but the first row has %s",
				tm.civil ? "a date and time" : "plain seconds",
				first->civil ? "a date and time" : "plain seconds");
	if (*have && (tm.s < prev->s || (tm.s == prev->s && tm.ns < prev->ns)))
		return rq_error(ps, "column 1 (TIMESTAMP): earlier than the row above "
				"(rows must be in time order)");
	if (!*have) {
		*first = tm;
		*have = true;
		t->t0_s = tm.civil ? tm.s : 0;
	}
	ds = tm.s - first->s;
	if (ds > RQ_MAX_SPAN_S)
		return rq_error(ps, "column 1 (TIMESTAMP): more than %lld s after the first "
				"row", (long long)RQ_MAX_SPAN_S);
	/* ds >= 0 and (ds, ns) >= first's: the sum is not negative. */
	r.at_ns = (uint64_t)ds * NS_PER_S + tm.ns - first->ns;
	*prev = tm;
	ret = rq_push(t, cap, &r);
	if (ret == -E2BIG)
		rq_error(ps, "more than %u requests", RQ_MAX_ROWS);
	if (ret)
		return ret;
	t->span_ns = r.at_ns;
	t->tokens += (uint64_t)r.context + r.generated;
	return 0;
}

int rq_parse(const char *buf, size_t len, const char *name,
	     struct rq_trace *t, char *err, size_t errlen)
{
	struct rq_parser ps = { .name = name, .err = err, .errlen = errlen };
	const char *p = buf, *end = buf + len;
	struct rq_time first = { 0 }, prev = { 0 };
	bool header = false, have = false;
	struct rq_field f[3];
	size_t cap = 0;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (errlen)
		err[0] = '\0';
	if (len > RQ_MAX_BYTES) {
		snprintf(err, errlen, "%s: larger than %llu bytes", name,
			 (unsigned long long)RQ_MAX_BYTES);
		return -E2BIG;
	}
	/* A UTF-8 byte order mark, as spreadsheets write, is not data. */
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		size_t n = (size_t)(eol - p), i;

		ps.line++;
		if (n && p[n - 1] == '\r')
			n--;
		for (i = 0; i < n && rq_blank(p[i]); i++)
			;
		if (i < n) {
			ret = rq_split(&ps, p, n, f);
			if (!ret && !header)
				ret = rq_header(&ps, f);
			else if (!ret)
				ret = rq_row(&ps, f, &first, &prev, &have, t, &cap);
			if (ret)
				break;
			header = true;
		}
		p = nl ? nl + 1 : end;
	}
	if (!ret && !header) {
		ps.line = ps.line ? ps.line : 1;
		ret = rq_error(&ps, "no header line (%s,%s,%s)", rq_columns[0],
			       rq_columns[1], rq_columns[2]);
	}
	if (ret)
		rq_free(t);
	return ret;
}

int rq_load(const char *path, struct rq_trace *t, char *err, size_t errlen)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int fd, ret = 0;

	memset(t, 0, sizeof(*t));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		ssize_t got;

		if (len == cap) {
			/* Room for one byte over the limit, to see it. */
			size_t ncap = cap ? cap * 2 : 1 << 20;
			char *n;

			if (ncap > RQ_MAX_BYTES + 1)
				ncap = RQ_MAX_BYTES + 1;
			if (cap > RQ_MAX_BYTES) {
				ret = -E2BIG;
				snprintf(err, errlen, "%s: larger than %llu bytes",
					 path, (unsigned long long)RQ_MAX_BYTES);
				goto out_buf;
			}
			n = realloc(buf, ncap);
			if (!n) {
				ret = -ENOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				goto out_buf;
			}
			buf = n;
			cap = ncap;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
			goto out_buf;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	ret = rq_parse(buf, len, path, t, err, errlen);
out_buf:
	free(buf);
	close(fd);
	return ret;
}

void rq_free(struct rq_trace *t)
{
	free(t->req);
	memset(t, 0, sizeof(*t));
}
