/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd's REST server (docs/rest.md): libmicrohttpd daemons on a unix
 * socket (default) and optionally TCP with a bearer token, JSON bodies via
 * jansson, RFC 9457 problem details for every error. mg_rest_start() and
 * mg_rest_stop() are declared in model.h; this header holds what the
 * routes, the SSE stream and the tests share.
 *
 * Threads: each listener runs an MHD thread pool (cfg->rest_threads).
 * Handlers only call the thread-safe mg_* functions and keep no state
 * between requests except struct rest_req (one per request) and the
 * atomic counters below. SSE streams suspend their connection while idle
 * (sse.c), so a few open streams do not tie up pool threads.
 */
#ifndef VGMEM_MGMTD_REST_H
#define VGMEM_MGMTD_REST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "model.h"
#include "rest_buf.h"
#include "rest_cache.h"
#include "rest_tokens.h"

#define REST_DEFAULT_SOCKET	"/run/vgmem/mgmtd.sock"
#define REST_MAX_BODY_DEFAULT	65536u
#define REST_MAX_BODY_LIMIT	(16u << 20)
/*
 * A body over the limit is read and thrown away, up to REST_DISCARD_FACTOR
 * times the limit or REST_DISCARD_MIN, whichever is more, before its 413:
 * a client that writes its whole request before reading would otherwise
 * have the connection closed under it and see a broken pipe or a reset
 * instead of the answer. Beyond that the connection is closed.
 */
#define REST_DISCARD_FACTOR	4u
#define REST_DISCARD_MIN	(1u << 20)
#define REST_CONN_LIMIT		256	/* per listener */
/*
 * MHD's per-connection pool (request line, headers, reply headers; bodies
 * are streamed through it). MHD zeroes the pool between the requests of a
 * keep-alive connection, so a bigger one costs on every request: 16 KiB
 * holds a REST_TOKEN_MAX token and any sane header set.
 */
#define REST_CONN_MEMORY	(16u * 1024)
#define REST_EVENTS_PAGE	1000	/* most events one history request returns */

struct sse_hub;

struct rest_listener {
	struct mg_rest *rest;
	struct MHD_Daemon *daemon;
	int fd;			/* ours until MHD takes it */
	bool tcp;
};

struct mg_rest {
	struct mg *mg;
	struct rest_listener unix_l, tcp_l;
	char *unix_path;	/* NULL: no unix listener */
	dev_t unix_dev;		/* the socket file bound there (0: none yet) */
	ino_t unix_ino;
	gid_t unix_gid;		/* group allowed to write */
	struct rest_tokens tokens;	/* TCP bearer tokens (token_file) */
	size_t max_body;
	unsigned int timeout_s;
	unsigned int threads;
	uint16_t tcp_port;	/* bound port (after port 0) */
	struct sse_hub *sse;
	struct rest_cache cache;	/* rendered /v1/vms, /v1/gpus, /metrics */
	/* requests answered, by status class (1xx..5xx -> [1..5]) */
	atomic_ullong answered[6];
};

/* Per-request state kept by MHD between calls (con_cls). */
struct rest_req {
	struct rbuf body;
	bool started;		/* first call done (auth, route checked) */
	bool too_large;		/* over max_body: discarded, then 413 */
	size_t discarded;	/* bytes of it read and thrown away */
	bool may_write;		/* peer authorised to change state */
	char by[MG_BY_LEN];	/* who asks, for the audit trail (mg_actor_set) */
};

/* What a route produced; rest.c turns it into an MHD response. */
struct rest_out {
	unsigned int status;
	char *body;		/* malloc()ed, owned */
	size_t len;
	const char *ctype;
	const char *allow;	/* Allow header for 405 */
	const char *www_auth;	/* WWW-Authenticate for 401 */
	struct MHD_Response *raw;	/* ready response (SSE), else NULL */
};

/* The request as the routes see it. */
struct rest_ctx {
	struct mg_rest *rest;
	struct MHD_Connection *conn;
	const char *method;
	const char *url;
	const char *body;	/* NUL-terminated, may be "" */
	size_t body_len;
	bool may_write;
	/* TCP: the name of the token the request presented */
	const char *token_name;
	struct rest_out out;
};

/* rest_routes.c: fills c->out for every request (never fails silently). */
void rest_dispatch(struct rest_ctx *c);

/* Problem details (application/problem+json) into c->out. */
void rest_problem(struct rest_ctx *c, unsigned int status, const char *slug,
		  const char *title, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* JSON (or any) text into c->out, taking b's memory. */
void rest_reply(struct rest_ctx *c, unsigned int status, const char *ctype,
		struct rbuf *b);
/* Maps a model errno to a problem (404, 409, 422, 500). */
void rest_problem_errno(struct rest_ctx *c, int err, const char *what,
			const char *why);


/* For tests and the benchmark: the TCP port bound (0: no TCP listener). */
uint16_t mg_rest_tcp_port(const struct mg_rest *rest);
/* For tests: how often idle SSE streams get a heartbeat comment. */
void mg_rest_set_heartbeat_ms(struct mg_rest *rest, unsigned int ms);

#endif /* VGMEM_MGMTD_REST_H */
