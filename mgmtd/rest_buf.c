// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Growable text buffer (rest_buf.h). */
#include "rest_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rbuf_init(struct rbuf *b, size_t hint)
{
	memset(b, 0, sizeof(*b));
	if (hint < 64)
		hint = 64;
	b->p = malloc(hint);
	if (!b->p) {
		b->oom = true;
		return;
	}
	b->cap = hint;
	b->p[0] = '\0';
}

void rbuf_free(struct rbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

char *rbuf_take(struct rbuf *b, size_t *len)
{
	char *p = b->oom ? NULL : b->p;

	if (b->oom)
		free(b->p);
	if (len)
		*len = p ? b->len : 0;
	memset(b, 0, sizeof(*b));
	return p;
}

bool rbuf_grow(struct rbuf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->oom)
		return false;
	need = b->len + n + 1;
	if (need < b->len) {
		b->oom = true;
		return false;
	}
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void rbuf_u64(struct rbuf *b, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	/* Hand-rolled: the metrics page prints thousands of numbers. */
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rbuf_put(b, tmp + i, sizeof(tmp) - i);
}

void rbuf_i64(struct rbuf *b, int64_t v)
{
	if (v < 0) {
		rbuf_putc(b, '-');
		rbuf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		rbuf_u64(b, (uint64_t)v);
	}
}

void rbuf_printf(struct rbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (!rbuf_grow(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void rbuf_json_str(struct rbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t run = 0;

	rbuf_putc(b, '"');
	for (;; u++) {
		unsigned char c = *u;
		char esc[6];

		if (c && c >= 0x20 && c != '"' && c != '\\') {
			run++;
			continue;
		}
		rbuf_put(b, (const char *)u - run, run);
		run = 0;
		if (!c)
			break;
		esc[0] = '\\';
		switch (c) {
		case '"':  esc[1] = '"';  rbuf_put(b, esc, 2); break;
		case '\\': esc[1] = '\\'; rbuf_put(b, esc, 2); break;
		case '\n': esc[1] = 'n';  rbuf_put(b, esc, 2); break;
		case '\r': esc[1] = 'r';  rbuf_put(b, esc, 2); break;
		case '\t': esc[1] = 't';  rbuf_put(b, esc, 2); break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			rbuf_put(b, esc, 6);
		}
	}
	rbuf_putc(b, '"');
}

void rbuf_prom_label(struct rbuf *b, const char *s)
{
	size_t run = 0;

	/* Copies runs that need no escape in one go (the common case). */
	for (;; s++) {
		char c = *s;

		if (c && c != '\\' && c != '"' && c != '\n') {
			run++;
			continue;
		}
		rbuf_put(b, s - run, run);
		run = 0;
		if (!c)
			break;
		if (c == '\\')
			rbuf_put(b, "\\\\", 2);
		else if (c == '"')
			rbuf_put(b, "\\\"", 2);
		else
			rbuf_put(b, "\\n", 2);
	}
}
