// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Server-sent events for GET /v1/events (sse.h has the design). */
#include "sse.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rest_buf.h"
#include "rest_json.h"

struct sse_stream {
	struct sse_hub *hub;
	struct MHD_Connection *conn;
	pthread_mutex_t lock;
	/* protected by lock: */
	struct mg_event q[SSE_QUEUE];
	size_t qhead, qlen;
	uint64_t queued_id;	/* newest id queued or sent */
	bool overflow;		/* read history after last_id before the queue */
	bool suspended;		/* we suspended conn; only then may we resume it */
	bool hb_due;
	/* reader only (MHD's thread of this connection): */
	uint64_t last_id;	/* newest id written to the client */
	struct rbuf pend;	/* formatted, not yet handed to MHD */
	size_t pend_off;
	int handle;		/* model subscription */
	struct sse_stream *prev, *next;	/* hub->lock */
};

struct sse_hub {
	struct mg *mg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sse_stream *streams;	/* lock */
	unsigned int nr_streams;	/* lock */
	unsigned int heartbeat_ms;	/* lock */
	atomic_bool stopping;
	bool thread_started;
	pthread_t thread;
};

/* ---- formatting -------------------------------------------------------- */

static void sse_format(struct rbuf *b, const struct mg_event *ev)
{
	char type[sizeof(ev->type) + 1];
	size_t i;

	/* An event name must not break the line framing: keep it plain. */
	memcpy(type, ev->type, sizeof(ev->type));
	type[sizeof(ev->type)] = '\0';
	for (i = 0; type[i]; i++) {
		char c = type[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			type[i] = '_';
	}
	rbuf_puts(b, "id: ");
	rbuf_u64(b, ev->id);
	rbuf_puts(b, "\nevent: ");
	rbuf_puts(b, type[0] ? type : "message");
	rbuf_puts(b, "\ndata: ");
	rj_event(b, ev);	/* one line: strings escaped, detail re-encoded */
	rbuf_puts(b, "\n\n");
}

/* ---- model callback ------------------------------------------------------ */

static void sse_wake_locked(struct sse_stream *s)
{
	if (s->suspended) {
		s->suspended = false;
		MHD_resume_connection(s->conn);
	}
}

static void sse_on_event(void *priv, const struct mg_event *ev)
{
	struct sse_stream *s = priv;

	pthread_mutex_lock(&s->lock);
	if (ev->id > s->queued_id) {
		if (s->qlen == SSE_QUEUE) {
			s->overflow = true;	/* history has it */
		} else {
			s->q[(s->qhead + s->qlen) % SSE_QUEUE] = *ev;
			s->qlen++;
		}
		s->queued_id = ev->id;
	}
	sse_wake_locked(s);
	pthread_mutex_unlock(&s->lock);
}

/* ---- reader ------------------------------------------------------------- */

/* Appends history after last_id; false if the model failed. */
static bool sse_read_history(struct sse_stream *s)
{
	struct mg_event *evs = NULL;
	size_t n = 0, i;
	int ret;

	ret = mg_events_since(s->hub->mg, s->last_id, SSE_HISTORY_PAGE, &evs, &n);
	if (ret)
		return false;
	for (i = 0; i < n; i++) {
		if (evs[i].id <= s->last_id)
			continue;
		sse_format(&s->pend, &evs[i]);
		s->last_id = evs[i].id;
	}
	free(evs);
	if (n == SSE_HISTORY_PAGE) {
		pthread_mutex_lock(&s->lock);
		s->overflow = true;	/* more pages to read */
		pthread_mutex_unlock(&s->lock);
	}
	return true;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse_stream *s = cls;
	struct mg_event ev;
	int rounds;

	(void)pos;
	for (rounds = 0; rounds < 64; rounds++) {
		bool history = false;

		if (s->pend_off < s->pend.len) {
			size_t n = s->pend.len - s->pend_off;

			if (n > max)
				n = max;
			memcpy(buf, s->pend.p + s->pend_off, n);
			s->pend_off += n;
			if (s->pend_off == s->pend.len) {
				s->pend.len = 0;
				s->pend_off = 0;
			}
			return (ssize_t)n;
		}
		if (s->pend.oom)
			return MHD_CONTENT_READER_END_WITH_ERROR;

		pthread_mutex_lock(&s->lock);
		if (atomic_load(&s->hub->stopping)) {
			pthread_mutex_unlock(&s->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (s->overflow) {
			s->overflow = false;
			history = true;
		} else if (s->qlen) {
			/*
			 * After a history read the queue may hold up to
			 * SSE_QUEUE events already sent from the history:
			 * drop them all here, or they would use up the
			 * rounds below and end the stream.
			 */
			while (s->qlen && s->q[s->qhead].id <= s->last_id) {
				s->qhead = (s->qhead + 1) % SSE_QUEUE;
				s->qlen--;
			}
			if (!s->qlen) {
				pthread_mutex_unlock(&s->lock);
				continue;
			}
			/* formatting outside the lock keeps publishers quick */
			ev = s->q[s->qhead];
			s->qhead = (s->qhead + 1) % SSE_QUEUE;
			s->qlen--;
			pthread_mutex_unlock(&s->lock);
			sse_format(&s->pend, &ev);
			s->last_id = ev.id;
			continue;
		} else if (s->hb_due) {
			s->hb_due = false;
			pthread_mutex_unlock(&s->lock);
			rbuf_puts(&s->pend, ": keepalive\n\n");
			continue;
		} else {
			/* Nothing to send: park the connection. */
			s->suspended = true;
			MHD_suspend_connection(s->conn);
			pthread_mutex_unlock(&s->lock);
			return 0;
		}
		pthread_mutex_unlock(&s->lock);
		if (history && !sse_read_history(s))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	/* Many events without output is impossible; end rather than spin. */
	return s->pend.len ? 0 : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void sse_free(void *cls)
{
	struct sse_stream *s = cls;
	struct sse_hub *hub = s->hub;

	/* After this returns the model calls sse_on_event no more. */
	mg_unsubscribe(hub->mg, s->handle);
	pthread_mutex_lock(&hub->lock);
	if (s->prev)
		s->prev->next = s->next;
	else
		hub->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	hub->nr_streams--;
	pthread_cond_broadcast(&hub->cond);
	pthread_mutex_unlock(&hub->lock);
	rbuf_free(&s->pend);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

struct MHD_Response *sse_open(struct sse_hub *hub, struct MHD_Connection *conn,
			      bool resume, uint64_t after_id, int *err)
{
	struct MHD_Response *resp;
	struct sse_stream *s;
	struct mg_status st;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->hub = hub;
	s->conn = conn;
	pthread_mutex_init(&s->lock, NULL);
	rbuf_init(&s->pend, 4096);
	rbuf_printf(&s->pend, "retry: %u\n: vgmem events\n\n", SSE_RETRY_MS);

	pthread_mutex_lock(&hub->lock);
	if (atomic_load(&hub->stopping)) {
		ret = -ESHUTDOWN;
		goto err_unlock;
	}
	if (hub->nr_streams >= SSE_MAX_STREAMS) {
		ret = -EBUSY;
		goto err_unlock;
	}
	hub->nr_streams++;	/* reserve our place */
	pthread_mutex_unlock(&hub->lock);

	/*
	 * Subscribe first, then fix the starting point: an event published in
	 * between is both queued and (for a resume) in the history; ids
	 * deduplicate it.
	 */
	ret = mg_subscribe(hub->mg, sse_on_event, s);
	if (ret < 0)
		goto err_unreserve;
	s->handle = ret;
	if (resume) {
		s->last_id = after_id;
		s->overflow = true;	/* start with the history */
	} else {
		ret = mg_get_status(hub->mg, &st);
		if (ret)
			goto err_unsubscribe;
		s->last_id = st.last_event_id;
	}

	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
						 sse_read, s, sse_free);
	if (!resp) {
		ret = -ENOMEM;
		goto err_unsubscribe;
	}
	pthread_mutex_lock(&hub->lock);
	s->next = hub->streams;
	if (s->next)
		s->next->prev = s;
	hub->streams = s;
	pthread_mutex_unlock(&hub->lock);
	*err = 0;
	return resp;

err_unsubscribe:
	mg_unsubscribe(hub->mg, s->handle);
err_unreserve:
	pthread_mutex_lock(&hub->lock);
	hub->nr_streams--;
err_unlock:
	pthread_mutex_unlock(&hub->lock);
	rbuf_free(&s->pend);
	pthread_mutex_destroy(&s->lock);
	free(s);
	*err = ret;
	return NULL;
}

/* ---- hub ---------------------------------------------------------------- */

static void *sse_heartbeat_thread(void *arg)
{
	struct sse_hub *hub = arg;
	struct timespec ts;

	pthread_mutex_lock(&hub->lock);
	while (!atomic_load(&hub->stopping)) {
		struct sse_stream *s;
		uint64_t ns;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ns = (uint64_t)ts.tv_nsec + (uint64_t)hub->heartbeat_ms * 1000000u;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		if (pthread_cond_timedwait(&hub->cond, &hub->lock, &ts) != ETIMEDOUT)
			continue;	/* woken early: stop or new interval */
		for (s = hub->streams; s; s = s->next) {
			pthread_mutex_lock(&s->lock);
			s->hb_due = true;
			sse_wake_locked(s);
			pthread_mutex_unlock(&s->lock);
		}
	}
	pthread_mutex_unlock(&hub->lock);
	return NULL;
}

int sse_hub_create(struct mg *mg, unsigned int heartbeat_ms,
		   struct sse_hub **out)
{
	pthread_condattr_t ca;
	struct sse_hub *hub;
	int ret;

	hub = calloc(1, sizeof(*hub));
	if (!hub)
		return -ENOMEM;
	hub->mg = mg;
	hub->heartbeat_ms = heartbeat_ms ? heartbeat_ms : SSE_HEARTBEAT_MS;
	pthread_mutex_init(&hub->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hub->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = -pthread_create(&hub->thread, NULL, sse_heartbeat_thread, hub);
	if (ret) {
		pthread_cond_destroy(&hub->cond);
		pthread_mutex_destroy(&hub->lock);
		free(hub);
		return ret;
	}
	hub->thread_started = true;
	*out = hub;
	return 0;
}

void sse_hub_set_heartbeat(struct sse_hub *hub, unsigned int ms)
{
	pthread_mutex_lock(&hub->lock);
	hub->heartbeat_ms = ms ? ms : SSE_HEARTBEAT_MS;
	pthread_cond_broadcast(&hub->cond);
	pthread_mutex_unlock(&hub->lock);
}

void sse_hub_shutdown(struct sse_hub *hub)
{
	struct sse_stream *s;

	pthread_mutex_lock(&hub->lock);
	atomic_store(&hub->stopping, true);
	/* MHD must not be stopped with suspended connections: wake them all;
	 * their reader sees stopping and ends the stream. */
	for (s = hub->streams; s; s = s->next) {
		pthread_mutex_lock(&s->lock);
		sse_wake_locked(s);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_cond_broadcast(&hub->cond);
	pthread_mutex_unlock(&hub->lock);
	if (hub->thread_started) {
		pthread_join(hub->thread, NULL);
		hub->thread_started = false;
	}
}

void sse_hub_destroy(struct sse_hub *hub)
{
	if (!hub)
		return;
	if (hub->thread_started)
		sse_hub_shutdown(hub);
	pthread_cond_destroy(&hub->cond);
	pthread_mutex_destroy(&hub->lock);
	free(hub);
}
