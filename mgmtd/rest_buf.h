/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A growable text buffer for REST responses and metrics. Appends never
 * fail visibly: on allocation failure the buffer remembers it (oom) and
 * the caller answers 500 once at the end, which keeps the encoders short.
 */
#ifndef VGMEM_MGMTD_REST_BUF_H
#define VGMEM_MGMTD_REST_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct rbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

void rbuf_init(struct rbuf *b, size_t hint);
void rbuf_free(struct rbuf *b);
/* Hands the NUL-terminated text to the caller (NULL after oom). */
char *rbuf_take(struct rbuf *b, size_t *len);

/* Makes room for n more bytes and the NUL; false after oom. */
bool rbuf_grow(struct rbuf *b, size_t n);

/* Inline: responses are built from thousands of small appends. */
static inline void rbuf_put(struct rbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap && !rbuf_grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void rbuf_puts(struct rbuf *b, const char *s)
{
	rbuf_put(b, s, strlen(s));
}

static inline void rbuf_putc(struct rbuf *b, char c)
{
	rbuf_put(b, &c, 1);
}
void rbuf_u64(struct rbuf *b, uint64_t v);
void rbuf_i64(struct rbuf *b, int64_t v);
void rbuf_printf(struct rbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A JSON string literal, quotes included, control characters escaped. */
void rbuf_json_str(struct rbuf *b, const char *s);
/* "key": (with a leading comma unless first); key is a literal. */
static inline void rbuf_json_key(struct rbuf *b, const char *key, bool first)
{
	if (!first)
		rbuf_putc(b, ',');
	rbuf_putc(b, '"');
	rbuf_puts(b, key);
	rbuf_put(b, "\":", 2);
}
/* A Prometheus label value: \, " and newline escaped, no quotes added. */
void rbuf_prom_label(struct rbuf *b, const char *s);

#endif /* VGMEM_MGMTD_REST_BUF_H */
