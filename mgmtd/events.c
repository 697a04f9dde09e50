// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd events: ids, persistence, the in-memory ring and subscribers.
 *
 * An event gets its id when it is queued (under mg->lock, so ids follow
 * the order of the changes they describe). Delivery is one thread at a
 * time (mg->flushing): it writes a batch to the state database, then puts
 * it in the ring and calls the subscribers, so no client ever sees an id
 * that a restart could hand out again. A thread that finds a delivery in
 * progress leaves its events to that thread, which loops until the queue
 * is empty; that keeps id order without holding a lock across callbacks
 * that may themselves change the model and queue events.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "log.h"

void mg_json_escape(char *dst, size_t len, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!len)
		return;
	for (; src && *src; src++) {
		unsigned char c = (unsigned char)*src;
		char e[7];
		size_t el;

		if (c == '"' || c == '\\') {
			e[0] = '\\';
			e[1] = (char)c;
			el = 2;
		} else if (c == '\n') {
			memcpy(e, "\\n", 2);
			el = 2;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(e, "\\u00", 4);
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			el = 6;
		} else {
			e[0] = (char)c;
			el = 1;
		}
		if (o + el >= len)
			break;
		memcpy(dst + o, e, el);
		o += el;
	}
	/* never end inside a UTF-8 sequence cut by truncation */
	while (o && (unsigned char)dst[o - 1] >= 0x80) {
		size_t start = o - 1, need;
		unsigned char lead;

		while (start && ((unsigned char)dst[start] & 0xc0) == 0x80)
			start--;
		lead = (unsigned char)dst[start];
		need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
		if (o - start >= need)
			break;
		o = start;
	}
	dst[o] = 0;
}

static void emit_va(struct mg *mg, const char *type, const char *vm,
		    const char *fmt, va_list ap)
{
	struct mg_event *ev;
	int n;

	if (mg->nr_pending == mg->cap_pending) {
		size_t cap = mg->cap_pending ? mg->cap_pending * 2 : 32;
		struct mg_event *nv = realloc(mg->pending, cap * sizeof(*nv));

		if (!nv) {
			mg_err("event %s lost: out of memory", type);
			return;
		}
		mg->pending = nv;
		mg->cap_pending = cap;
	}
	ev = &mg->pending[mg->nr_pending];
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->type, sizeof(ev->type), "%s", type);
	snprintf(ev->vm, sizeof(ev->vm), "%s", vm ? vm : "");
	n = vsnprintf(ev->detail, sizeof(ev->detail), fmt, ap);
	if (n < 0 || (size_t)n >= sizeof(ev->detail))
		snprintf(ev->detail, sizeof(ev->detail), "{\"truncated\":true}");
	ev->id = mg->next_event_id++;
	ev->ts_ms = mg_now_ms();
	mg->nr_pending++;
	mg_dbg("event %llu %s %s %s", (unsigned long long)ev->id, ev->type,
	       ev->vm, ev->detail);
}

static __thread char actor[MG_BY_LEN];

void mg_actor_set(const char *by)
{
	mg_strlcpy(actor, by ? by : "", sizeof(actor));
}

const char *mg_actor(void)
{
	return actor[0] ? actor : "mgmtd";
}

void mg_emit_locked(struct mg *mg, const char *type, const char *vm,
		    const char *detail_fmt, ...)
{
	va_list ap;

	va_start(ap, detail_fmt);
	emit_va(mg, type, vm, detail_fmt, ap);
	va_end(ap);
}

void mg_emit(struct mg *mg, const char *type, const char *vm,
	     const char *detail_fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&mg->lock);
	va_start(ap, detail_fmt);
	emit_va(mg, type, vm, detail_fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
}

void mg_events_flush(struct mg *mg)
{
	struct mg_event *batch;
	size_t n, i;

	pthread_mutex_lock(&mg->lock);
	if (mg->flushing) {
		pthread_mutex_unlock(&mg->lock);
		return;
	}
	mg->flushing = true;
	while (mg->nr_pending) {
		batch = mg->pending;
		n = mg->nr_pending;
		mg->pending = NULL;
		mg->nr_pending = mg->cap_pending = 0;
		pthread_mutex_unlock(&mg->lock);

		if (mg_state_add_events(mg->state, batch, n))
			mg_err("events %llu..%llu not persisted",
			       (unsigned long long)batch[0].id,
			       (unsigned long long)batch[n - 1].id);

		pthread_mutex_lock(&mg->lock);
		for (i = 0; i < n; i++) {
			size_t slot = (mg->ring_head + mg->ring_count) % MG_EVENT_RING;

			mg->ring[slot] = batch[i];
			if (mg->ring_count < MG_EVENT_RING)
				mg->ring_count++;
			else
				mg->ring_head = (mg->ring_head + 1) % MG_EVENT_RING;
		}
		mg->last_delivered = batch[n - 1].id;
		pthread_mutex_unlock(&mg->lock);

		pthread_mutex_lock(&mg->sub_lock);
		for (i = 0; i < n; i++) {
			size_t s;

			for (s = 0; s < mg->nr_subs; s++)
				if (mg->subs[s].used)
					mg->subs[s].cb(mg->subs[s].priv, &batch[i]);
		}
		pthread_mutex_unlock(&mg->sub_lock);
		free(batch);
		pthread_mutex_lock(&mg->lock);
	}
	mg->flushing = false;
	pthread_mutex_unlock(&mg->lock);
}

uint64_t mg_events_last_id(struct mg *mg)
{
	uint64_t id;

	pthread_mutex_lock(&mg->lock);
	id = mg->last_delivered;
	pthread_mutex_unlock(&mg->lock);
	return id;
}

int mg_events_since(struct mg *mg, uint64_t after_id, size_t max,
		    struct mg_event **out, size_t *n)
{
	struct mg_event *v;
	size_t i, cnt = 0;
	uint64_t oldest;

	if (!mg || !out || !n || !max)
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	oldest = mg->ring_count ? mg->ring[mg->ring_head].id : mg->next_event_id;
	if (after_id + 1 < oldest && after_id < mg->last_delivered) {
		/* older than the ring: the database has them all */
		pthread_mutex_unlock(&mg->lock);
		return mg_state_events_since(mg->state, after_id, max, out, n);
	}
	if (max > mg->ring_count)
		max = mg->ring_count;
	v = malloc((max ? max : 1) * sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&mg->lock);
		return -ENOMEM;
	}
	for (i = 0; i < mg->ring_count && cnt < max; i++) {
		const struct mg_event *e =
			&mg->ring[(mg->ring_head + i) % MG_EVENT_RING];

		if (e->id > after_id)
			v[cnt++] = *e;
	}
	pthread_mutex_unlock(&mg->lock);
	*out = v;
	*n = cnt;
	return 0;
}

int mg_subscribe(struct mg *mg,
		 void (*cb)(void *priv, const struct mg_event *ev), void *priv)
{
	struct mg_sub *ns;
	size_t i;
	int h = -ENOMEM;

	if (!mg || !cb)
		return -EINVAL;
	pthread_mutex_lock(&mg->sub_lock);
	for (i = 0; i < mg->nr_subs; i++)
		if (!mg->subs[i].used)
			break;
	if (i == mg->nr_subs) {
		if (i >= 65536) {
			h = -ENOSPC;
			goto out_unlock;
		}
		ns = realloc(mg->subs, (i + 1) * sizeof(*ns));
		if (!ns)
			goto out_unlock;
		mg->subs = ns;
		mg->nr_subs++;
	}
	mg->subs[i].cb = cb;
	mg->subs[i].priv = priv;
	mg->subs[i].used = true;
	h = (int)i;
out_unlock:
	pthread_mutex_unlock(&mg->sub_lock);
	return h;
}

void mg_unsubscribe(struct mg *mg, int handle)
{
	if (!mg || handle < 0)
		return;
	pthread_mutex_lock(&mg->sub_lock);
	if ((size_t)handle < mg->nr_subs)
		mg->subs[handle].used = false;
	pthread_mutex_unlock(&mg->sub_lock);
}

int mg_events_init(struct mg *mg)
{
	uint64_t last = 0;
	int ret;

	pthread_mutex_init(&mg->sub_lock, NULL);
	ret = mg_state_last_event_id(mg->state, &last);
	if (ret) {
		pthread_mutex_destroy(&mg->sub_lock);
		return ret;
	}
	mg->next_event_id = last + 1;
	mg->last_delivered = last;
	return 0;
}

void mg_events_fini(struct mg *mg)
{
	mg_events_flush(mg);
	free(mg->pending);
	mg->pending = NULL;
	free(mg->subs);
	mg->subs = NULL;
	mg->nr_subs = 0;
	pthread_mutex_destroy(&mg->sub_lock);
}
