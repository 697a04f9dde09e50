/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Rendered answers of the hot read routes (GET /v1/vms, /v1/gpus,
 * /metrics), kept until the model changes. A body remembers the listing
 * it was rendered from by its generation (and the status, for /metrics);
 * a request serves it only if mg_view_current() (and an equal
 * mg_get_status()) says the model's view is still that generation, so an
 * answer is never older than the model at the moment of the request,
 * whatever changed it (an operator, libvirt, the stats refresh): the
 * model bumps the generation on every change to what it lists. One
 * comparison per request, where comparing the listings (100 VMs: 83 KB)
 * cost GET /v1/vms about 14% of its CPU.
 *
 * /metrics also shows the LRC file cache's counters, which move without a
 * view generation: its body is also keyed on the LRC generation, which
 * the cache moves itself whenever the counters the model reads from the
 * backend (at most every 100 ms, mg_get_lrc()) differ from the last ones
 * seen, or their reading starts or stops failing. So an unchanged scrape
 * is served whole from the cache, and a change to a counter shows in the
 * first scrape after the model's next read.
 *
 * Bodies are immutable once published and reference counted: MHD sends
 * them straight from the cache (no copy) and drops its reference when the
 * response is destroyed; only an answer with a per-request tail (/metrics)
 * of up to 256 KiB is copied once, so that it leaves in one sendmsg(). A gzip copy is made on the first request that
 * accepts gzip (Prometheus always does) and kept with the body.
 */
#ifndef VGMEM_MGMTD_REST_CACHE_H
#define VGMEM_MGMTD_REST_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

enum rc_slot_id { RC_VMS, RC_GPUS, RC_METRICS, RC_NR };

struct rc_body {
	atomic_uint refs;
	/* the key: what the text was rendered from (NULL: not part of it) */
	bool has_status;
	struct mg_status status;
	uint64_t gen;		/* mg_list_view()'s generation */
	bool has_lrc;		/* rendered with the LRC families of lrc_gen */
	uint64_t lrc_gen;
	char *text;
	size_t len;
	/*
	 * gzip of text, made once (gz_lock). open_ended: the deflate stream
	 * is left unfinished after a sync flush so that a per-request tail
	 * (/metrics' own counters) can follow as a final stored block.
	 */
	bool open_ended;
	pthread_mutex_t gz_lock;
	bool gz_done;
	unsigned char *gz;
	size_t gzlen;
	uint32_t crc;		/* CRC-32 of text */
};

struct rc_slot {
	pthread_mutex_t lock;
	struct rc_body *cur;	/* NULL: nothing cached */
};

struct rest_cache {
	struct rc_slot slot[RC_NR];
	atomic_ullong hits, misses;
	/* the LRC counters last seen and their generation (rc_lrc_read) */
	pthread_mutex_t lrc_lock;
	bool lrc_seen;
	int lrc_err;
	struct mg_lrc lrc;
	uint64_t lrc_gen;
};

void rest_cache_init(struct rest_cache *rc);
void rest_cache_fini(struct rest_cache *rc);

/*
 * The cached body of slot id if it is still current (a new reference the
 * caller drops with rc_body_put() or hands to rc_reply()), else NULL.
 */
struct rc_body *rc_lookup(struct rest_cache *rc, struct mg *mg,
			  enum rc_slot_id id);

/*
 * The LRC counters as the model reads them now (mg_get_lrc(): its 0 or
 * -errno, *out zeroed on error) and their generation in *gen, which moves
 * on every change of the counters or of the result.
 */
int rc_lrc_read(struct rest_cache *rc, struct mg *mg, struct mg_lrc *out,
		uint64_t *gen);

/*
 * A body over text (taken, malloc()ed) rendered from the listing of view
 * generation gen (and status, unless NULL). NULL on allocation failure,
 * with text freed. One reference, the caller's.
 */
struct rc_body *rc_body_new(char *text, size_t len, bool open_ended,
			    const struct mg_status *status, uint64_t gen);
/* Publishes b in slot id (the slot takes its own reference). */
void rc_store(struct rest_cache *rc, enum rc_slot_id id, struct rc_body *b);
void rc_body_get(struct rc_body *b);
void rc_body_put(struct rc_body *b);

/* Whether an Accept-Encoding header value accepts gzip. */
bool rc_accepts_gzip(const char *accept_encoding);

/* The gzip form of b (made on first use); false if it cannot be made. */
bool rc_body_gzip(struct rc_body *b);

/*
 * Answers c with b (taking the caller's reference) followed by tail
 * (copied; may be NULL; only for open_ended bodies), gzip-encoded if the
 * client accepts it and the compressed form can be made.
 */
struct rest_ctx;
void rest_reply_cached(struct rest_ctx *c, struct rc_body *b,
		       const char *ctype, const char *tail, size_t tlen);

#endif /* VGMEM_MGMTD_REST_CACHE_H */
