// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Libvirt domains that mgmtd does not manage, and why (model.h, struct
 * mg_dom_info): a small table beside the VMs, filled by the libvirt
 * integration and listed with the VMs. It is part of what GET /v1/vms
 * shows, so every change bumps the view's generation.
 *
 * Locking: mg->lock, like the VM table (model.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "log.h"

static struct mg_dom *dom_find_locked(struct mg *mg, const char *uuid)
{
	size_t i;

	for (i = 0; i < mg->nr_doms; i++)
		if (!strcmp(mg->doms[i].info.uuid, uuid))
			return &mg->doms[i];
	return NULL;
}

int mg_dom_note(struct mg *mg, const struct mg_dom_info *d)
{
	struct mg_dom *e, *nv;
	int64_t since;

	if (!d->uuid[0] || (d->state != MG_DOM_UNMANAGED &&
			    d->state != MG_DOM_REJECTED))
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	e = dom_find_locked(mg, d->uuid);
	if (!e) {
		if (mg->nr_doms == mg->cap_doms) {
			size_t cap = mg->cap_doms ? mg->cap_doms * 2 : 8;

			nv = realloc(mg->doms, cap * sizeof(*nv));
			if (!nv) {
				pthread_mutex_unlock(&mg->lock);
				return -ENOMEM;
			}
			mg->doms = nv;
			mg->cap_doms = cap;
		}
		e = &mg->doms[mg->nr_doms++];
		memset(e, 0, sizeof(*e));
	}
	e->sync = mg->dom_sync;
	/* The same state since the same time: a repeated note changes nothing. */
	since = e->info.state == d->state && e->info.since_ms ?
		e->info.since_ms : mg_now_ms();
	if (strcmp(e->info.uuid, d->uuid) || strcmp(e->info.name, d->name) ||
	    strcmp(e->info.mdev, d->mdev) || e->info.state != d->state ||
	    strcmp(e->info.reason, d->reason) || e->info.since_ms != since) {
		e->info = *d;
		e->info.since_ms = since;
		mg_view_changed_locked(mg);
	}
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

static void dom_remove_locked(struct mg *mg, size_t i)
{
	mg->doms[i] = mg->doms[--mg->nr_doms];
	mg_view_changed_locked(mg);
}

void mg_dom_forget(struct mg *mg, const char *uuid)
{
	struct mg_dom *e;

	pthread_mutex_lock(&mg->lock);
	e = dom_find_locked(mg, uuid);
	if (e)
		dom_remove_locked(mg, (size_t)(e - mg->doms));
	pthread_mutex_unlock(&mg->lock);
}

void mg_dom_sync_begin(struct mg *mg)
{
	pthread_mutex_lock(&mg->lock);
	mg->dom_sync++;
	pthread_mutex_unlock(&mg->lock);
}

void mg_dom_sync_end(struct mg *mg)
{
	size_t i;

	pthread_mutex_lock(&mg->lock);
	for (i = mg->nr_doms; i-- > 0;)
		if (mg->doms[i].sync != mg->dom_sync)
			dom_remove_locked(mg, i);
	pthread_mutex_unlock(&mg->lock);
}

static int dom_cmp(const void *a, const void *b)
{
	const struct mg_dom_info *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->uuid, y->uuid);
}

int mg_list_doms(struct mg *mg, struct mg_dom_info **out, size_t *n)
{
	struct mg_dom_info *v = NULL;
	size_t i;

	pthread_mutex_lock(&mg->lock);
	if (mg->nr_doms) {
		v = malloc(mg->nr_doms * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&mg->lock);
			return -ENOMEM;
		}
		for (i = 0; i < mg->nr_doms; i++)
			v[i] = mg->doms[i].info;
	}
	*n = mg->nr_doms;
	pthread_mutex_unlock(&mg->lock);
	if (v)
		qsort(v, *n, sizeof(*v), dom_cmp);
	*out = v;
	return 0;
}

bool mg_dom_reported(struct mg *mg, const char *uuid, const char *reason)
{
	char last[MG_WHY_LEN];

	return !mg_state_get_report(mg->state, uuid, last) &&
	       !strncmp(last, reason, sizeof(last) - 1);
}

void mg_dom_set_reported(struct mg *mg, const char *uuid, const char *reason)
{
	char last[MG_WHY_LEN], cut[MG_WHY_LEN];
	int ret = mg_state_get_report(mg->state, uuid, last);

	if (reason)
		snprintf(cut, sizeof(cut), "%s", reason);
	if (reason ? !ret && !strcmp(last, cut) : ret == -ENOENT)
		return;
	ret = mg_state_put_report(mg->state, uuid, reason ? cut : NULL);
	if (ret)
		mg_err("domain %s: cannot record its last report: %s", uuid,
		       strerror(-ret));
}
