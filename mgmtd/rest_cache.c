// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Cache of rendered answers (rest_cache.h) and how they are sent.
 *
 * gzip with a per-request tail: /metrics ends with the REST server's own
 * response counters, which change with every request, so the cached part
 * is compressed once into a gzip stream that is left open after a sync
 * flush (byte-aligned, no final block). Each answer then appends the tail
 * as one final stored (uncompressed) deflate block and the gzip trailer:
 * the CRC-32 of everything, continued from the cached part's, and the
 * length. RFC 1951 3.2.4 and RFC 1952 2.3; any inflater reads it as one
 * ordinary stream.
 */
#include "rest_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "rest.h"

/* Fast: the cached part is compressed at most once per model change. */
#define RC_GZIP_LEVEL	1
#define RC_TAIL_MAX	0xffff	/* one stored block */

void rest_cache_init(struct rest_cache *rc)
{
	int i;

	memset(rc, 0, sizeof(*rc));
	for (i = 0; i < RC_NR; i++)
		pthread_mutex_init(&rc->slot[i].lock, NULL);
	pthread_mutex_init(&rc->lrc_lock, NULL);
}

void rest_cache_fini(struct rest_cache *rc)
{
	int i;

	for (i = 0; i < RC_NR; i++) {
		if (rc->slot[i].cur)
			rc_body_put(rc->slot[i].cur);
		rc->slot[i].cur = NULL;
		pthread_mutex_destroy(&rc->slot[i].lock);
	}
	pthread_mutex_destroy(&rc->lrc_lock);
}

/* Field by field: struct mg_lrc has padding after gpus. */
static bool lrc_equal(const struct mg_lrc *a, const struct mg_lrc *b)
{
	if (a->gpus != b->gpus)
		return false;
#define LRC_SAME(f, attr, kind, ...)	if (a->f != b->f) return false;
	VGMEM_LRC_STATS(LRC_SAME)
#undef LRC_SAME
	return true;
}

int rc_lrc_read(struct rest_cache *rc, struct mg *mg, struct mg_lrc *out,
		uint64_t *gen)
{
	int ret = mg_get_lrc(mg, out);

	pthread_mutex_lock(&rc->lrc_lock);
	if (!rc->lrc_seen || ret != rc->lrc_err ||
	    (!ret && !lrc_equal(out, &rc->lrc))) {
		rc->lrc_seen = true;
		rc->lrc_err = ret;
		rc->lrc = *out;
		rc->lrc_gen++;
	}
	*gen = rc->lrc_gen;
	pthread_mutex_unlock(&rc->lrc_lock);
	return ret;
}

struct rc_body *rc_body_new(char *text, size_t len, bool open_ended,
			    const struct mg_status *status, uint64_t gen)
{
	struct rc_body *b = calloc(1, sizeof(*b));

	if (!b || !text) {
		free(b);
		free(text);
		return NULL;
	}
	atomic_init(&b->refs, 1);
	if (status) {
		b->has_status = true;
		b->status = *status;
	}
	b->gen = gen;
	b->text = text;
	b->len = len;
	b->open_ended = open_ended;
	pthread_mutex_init(&b->gz_lock, NULL);
	return b;
}

void rc_body_get(struct rc_body *b)
{
	atomic_fetch_add(&b->refs, 1);
}

void rc_body_put(struct rc_body *b)
{
	if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&b->gz_lock);
	free(b->gz);
	free(b->text);
	free(b);
}

void rc_store(struct rest_cache *rc, enum rc_slot_id id, struct rc_body *b)
{
	struct rc_slot *s = &rc->slot[id];
	struct rc_body *old;

	rc_body_get(b);
	pthread_mutex_lock(&s->lock);
	old = s->cur;
	s->cur = b;
	pthread_mutex_unlock(&s->lock);
	rc_body_put(old);
}

struct rc_body *rc_lookup(struct rest_cache *rc, struct mg *mg,
			  enum rc_slot_id id)
{
	struct rc_slot *s = &rc->slot[id];
	struct mg_status st;
	struct rc_body *b;

	pthread_mutex_lock(&s->lock);
	b = s->cur;
	if (b)
		rc_body_get(b);
	pthread_mutex_unlock(&s->lock);
	if (!b)
		goto miss;
	/* mg_get_status() zeroes its output first, so memcmp is exact. */
	if (b->has_status &&
	    (mg_get_status(mg, &st) || memcmp(&st, &b->status, sizeof(st))))
		goto stale;
	if (!mg_view_current(mg, b->gen))
		goto stale;
	if (b->has_lrc) {
		struct mg_lrc l;
		uint64_t g;

		rc_lrc_read(rc, mg, &l, &g);
		if (g != b->lrc_gen)
			goto stale;
	}
	atomic_fetch_add(&rc->hits, 1);
	return b;
stale:
	rc_body_put(b);
miss:
	atomic_fetch_add(&rc->misses, 1);
	return NULL;
}

/* ---- gzip ----------------------------------------------------------------- */

/* q=0, q=0.0, q=0.00, q=0.000: "not acceptable" (RFC 9110 12.4.2). */
static bool q_is_zero(const char *p, size_t n)
{
	size_t i;

	if (n < 3 || strncasecmp(p, "q=", 2) || p[2] != '0')
		return false;
	if (n == 3)
		return true;
	if (p[3] != '.' || n > 7)
		return false;
	for (i = 4; i < n; i++)
		if (p[i] != '0')
			return false;
	return true;
}

bool rc_accepts_gzip(const char *h)
{
	int gzip = -1, star = -1;	/* -1: not named, 0: refused, 1: ok */

	if (!h)
		return false;
	while (*h) {
		size_t n;
		const char *tok;
		bool zero = false;

		h += strspn(h, " \t,");
		if (!*h)
			break;
		tok = h;
		n = strcspn(h, " \t,;");
		h += n;
		/* parameters up to the next element */
		while (*h && *h != ',') {
			size_t pn;

			h += strspn(h, " \t;");
			pn = strcspn(h, " \t,;");
			if (q_is_zero(h, pn))
				zero = true;
			h += pn;
		}
		if ((n == 4 && !strncasecmp(tok, "gzip", 4)) ||
		    (n == 6 && !strncasecmp(tok, "x-gzip", 6)))
			gzip = !zero;
		else if (n == 1 && *tok == '*')
			star = !zero;
	}
	return gzip >= 0 ? gzip == 1 : star == 1;
}

static bool gzip_make(struct rc_body *b)
{
	z_stream zs;
	size_t cap;
	unsigned char *out;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, RC_GZIP_LEVEL, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	/* The bound covers a finished stream; a sync flush adds 5 bytes. */
	cap = deflateBound(&zs, (uLong)b->len) + 64;
	out = malloc(cap);
	if (!out || b->len > UINT32_MAX) {
		deflateEnd(&zs);
		free(out);
		return false;
	}
	zs.next_in = (Bytef *)b->text;
	zs.avail_in = (uInt)b->len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	ret = deflate(&zs, b->open_ended ? Z_SYNC_FLUSH : Z_FINISH);
	if ((b->open_ended ? ret != Z_OK : ret != Z_STREAM_END) ||
	    zs.avail_in || !zs.avail_out) {
		deflateEnd(&zs);
		free(out);
		return false;
	}
	b->gzlen = cap - zs.avail_out;
	/* An open stream ends with Z_DATA_ERROR here; the memory is freed. */
	deflateEnd(&zs);
	b->crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), (const Bytef *)b->text,
				 (uInt)b->len);
	b->gz = out;
	return true;
}

bool rc_body_gzip(struct rc_body *b)
{
	bool ok;

	pthread_mutex_lock(&b->gz_lock);
	if (!b->gz_done) {
		gzip_make(b);
		b->gz_done = true;	/* tried: a failure is not retried */
	}
	ok = b->gz != NULL;
	pthread_mutex_unlock(&b->gz_lock);
	return ok;
}

/* ---- sending -------------------------------------------------------------- */

/*
 * What one response holds: the body's reference (NULL once copied) and its
 * own bytes: the tail, or the whole answer joined (see rest_reply_cached).
 */
struct rc_send {
	struct rc_body *b;
	size_t tlen;
	unsigned char tail[];
};

/*
 * Answers up to this size are sent from one contiguous buffer, copying
 * the cached part when a tail follows it: MHD then writes the header and
 * the body with one sendmsg(), where an iovec response costs a second
 * system call and a second TCP segment (and wakes the client twice) per
 * answer, far more than copying a few tens of KiB. Larger answers (plain
 * /metrics) go out as an iovec without a copy.
 */
#define RC_JOIN_MAX	(256u << 10)

static void send_free(void *cls)
{
	struct rc_send *s = cls;

	rc_body_put(s->b);
	free(s);
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/*
 * The bytes that follow the cached part into t: the tail as is, or as a
 * final stored block (5 bytes) plus the gzip trailer (8). Returns their
 * length (<= tlen + 13).
 */
static size_t tail_bytes(const struct rc_body *b, bool gz, const char *tail,
			 size_t tlen, unsigned char *t)
{
	uint32_t crc;

	if (!gz) {
		memcpy(t, tail, tlen);
		return tlen;
	}
	if (!b->open_ended)
		return 0;
	crc = (uint32_t)crc32(b->crc, (const Bytef *)tail, (uInt)tlen);
	t[0] = 1;	/* BFINAL, stored */
	t[1] = (unsigned char)tlen;
	t[2] = (unsigned char)(tlen >> 8);
	t[3] = (unsigned char)~tlen;
	t[4] = (unsigned char)(~tlen >> 8);
	memcpy(t + 5, tail, tlen);
	put_le32(t + 5 + tlen, crc);
	put_le32(t + 9 + tlen, (uint32_t)(b->len + tlen));
	return tlen + 13;
}

void rest_reply_cached(struct rest_ctx *c, struct rc_body *b,
		       const char *ctype, const char *tail, size_t tlen)
{
	const char *ae = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING);
	struct MHD_Response *resp;
	const unsigned char *part;
	struct rc_send *s;
	size_t plen, extra;
	bool gz, join;

	if (!tail) {
		tail = "";
		tlen = 0;
	}
	if (tlen > RC_TAIL_MAX || (tlen && !b->open_ended)) {
		rc_body_put(b);
		rest_problem(c, 500, "internal", NULL, "answer tail too long");
		return;
	}
	gz = (!tlen || b->open_ended) && rc_accepts_gzip(ae) && rc_body_gzip(b);
	part = gz ? b->gz : (const unsigned char *)b->text;
	plen = gz ? b->gzlen : b->len;
	extra = gz && b->open_ended ? tlen + 13 : tlen;
	/* With nothing to add, the cached bytes are sent as they are. */
	join = extra && plen + extra <= RC_JOIN_MAX;
	s = malloc(sizeof(*s) + (join ? plen : 0) + extra);
	if (!s) {
		rc_body_put(b);
		rest_problem(c, 500, "internal", NULL, "out of memory");
		return;
	}
	s->b = b;
	if (join) {
		memcpy(s->tail, part, plen);
		s->tlen = plen + tail_bytes(b, gz, tail, tlen, s->tail + plen);
		s->b = NULL;	/* copied: the body may go */
		rc_body_put(b);
		resp = MHD_create_response_from_buffer_with_free_callback_cls(
			s->tlen, s->tail, send_free, s);
	} else if (!extra) {
		s->tlen = 0;
		resp = MHD_create_response_from_buffer_with_free_callback_cls(
			plen, (void *)part, send_free, s);
	} else {
		struct MHD_IoVec iov[2];

		s->tlen = tail_bytes(b, gz, tail, tlen, s->tail);
		iov[0].iov_base = part;
		iov[0].iov_len = plen;
		iov[1].iov_base = s->tail;
		iov[1].iov_len = s->tlen;
		resp = MHD_create_response_from_iovec(iov, 2, send_free, s);
	}
	if (!resp) {
		send_free(s);
		rest_problem(c, 500, "internal", NULL, "out of memory");
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	if (gz)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	c->out.status = 200;
	c->out.raw = resp;
}
