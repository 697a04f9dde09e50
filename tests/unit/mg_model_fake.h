/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A test double of mgmtd's model (mgmtd/model.h) for the REST tests: the
 * same functions and error contract over plain arrays, so the REST server
 * is tested without a backend, libvirt or SQLite. Included by exactly one
 * .c file per test program (it defines the functions): a shared object
 * file in tests/unit/ would be linked into every unit test, including
 * those of the real model, and clash with it.
 */
#ifndef VGMEM_TESTS_MG_MODEL_FAKE_H
#define VGMEM_TESTS_MG_MODEL_FAKE_H

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mgmtd/model.h"

#define FAKE_MAX_VMS	256
#define FAKE_MAX_EVENTS	4096
#define FAKE_MAX_SUBS	128
#define FAKE_GIB	(1ull << 30)

struct fake_sub {
	void (*cb)(void *priv, const struct mg_event *ev);
	void *priv;
	bool used;
};

struct mg {
	pthread_mutex_t lock;		/* data below */
	pthread_mutex_t pub;		/* subscribers; held while calling them */
	struct mg_gpu_info gpus[2];
	size_t ngpus;
	struct mg_vm_info vms[FAKE_MAX_VMS];
	size_t nvms;
	struct mg_knobs knobs;
	struct mg_event *events;
	size_t nevents;
	uint64_t next_id;
	struct fake_sub subs[FAKE_MAX_SUBS];
	int nsubs;
	unsigned int policy_sets;	/* successful mg_set_vm_policy calls */
	/*
	 * The view generation, bumped by every change to what the listings
	 * show: by the fake's writers, and by tests that change gpus/vms
	 * directly (fake_changed_locked()), as the real model's writers do.
	 */
	uint64_t gen;
	unsigned int gen_checks;	/* mg_view_current calls */
	struct mg_lrc lrc;		/* what mg_get_lrc answers */
	int lrc_err;			/* mg_get_lrc fails with it */
	struct mg_dom_info doms[4];	/* what mg_list_doms answers */
	size_t ndoms;
};

/* gpus/vms were changed (lock held): a new view generation. */
static inline void fake_changed_locked(struct mg *mg)
{
	mg->gen++;
}

static inline int64_t fake_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* As events.c: who the calling thread acts for (mgmtd.h). */
static __thread char fake_actor[MG_BY_LEN];

void mg_actor_set(const char *by)
{
	snprintf(fake_actor, sizeof(fake_actor), "%s", by ? by : "");
}

const char *mg_actor(void)
{
	return fake_actor[0] ? fake_actor : "mgmtd";
}

/* Appends an event and tells the subscribers, as the model does. */
static inline uint64_t fake_publish(struct mg *mg, const char *type,
				    const char *vm, const char *detail)
{
	struct mg_event ev;
	int i;

	memset(&ev, 0, sizeof(ev));
	pthread_mutex_lock(&mg->pub);	/* keeps callbacks in id order */
	pthread_mutex_lock(&mg->lock);
	ev.id = ++mg->next_id;
	ev.ts_ms = fake_now_ms();
	snprintf(ev.type, sizeof(ev.type), "%s", type);
	snprintf(ev.vm, sizeof(ev.vm), "%s", vm ? vm : "");
	snprintf(ev.detail, sizeof(ev.detail), "%s", detail);
	if (mg->nevents < FAKE_MAX_EVENTS)
		mg->events[mg->nevents++] = ev;
	pthread_mutex_unlock(&mg->lock);
	for (i = 0; i < FAKE_MAX_SUBS; i++)
		if (mg->subs[i].used)
			mg->subs[i].cb(mg->subs[i].priv, &ev);
	pthread_mutex_unlock(&mg->pub);
	return ev.id;
}

static inline void fake_vm_init(struct mg_vm_info *v, unsigned int i,
				int gpu, uint64_t quota)
{
	unsigned int b;

	memset(v, 0, sizeof(*v));
	snprintf(v->id, sizeof(v->id), "00000000-0000-4000-8000-%012x", i + 1);
	snprintf(v->name, sizeof(v->name), "vm%u", i + 1);
	v->gpu = gpu;
	v->policy.quota = quota;
	v->policy.max = quota;
	v->policy.weight = 100;
	v->entitlement = quota / 2;
	v->running = true;
	v->started_ms = fake_now_ms();
	v->source = MG_SRC_CONFIG;
	v->stats.quota = quota;
	v->stats.entitlement = v->entitlement;
	v->stats.allocated = quota / 2 + i;
	v->stats.resident = quota / 4;
	v->stats.relocated = quota / 4;
	v->cache_private = (i + 1ull) << 16;	/* the file cache's, apart */
	v->stats.reloc_out_chunks = 10 + i;
	v->stats.reloc_in_chunks = 3;
	v->stats.bytes_out = (10ull + i) << 21;
	v->stats.bytes_in = 3ull << 21;
	/* suspensions of 1, 3 and 700 us and 20 s (beyond the last le) */
	v->stats.suspend_hist[0] = 1;
	v->stats.suspend_hist[1] = 1;
	v->stats.suspend_hist[9] = 1;
	v->stats.suspend_hist[VGMEM_HIST_BUCKETS - 1] = 1;
	v->stats.suspends = 4;
	v->stats.suspend_total_ns = 1000 + 3000 + 700000 + 20000000000ull;
	v->stats.suspend_max_ns = 20000000000ull;
	v->stats.suspend_last_ns = 700000;
	for (b = 0; b < VGMEM_HIST_BUCKETS; b += 3)
		v->stats.stall_hist[b] = b + i;
	v->stats.stall_total_ns = 123456789;
}

/* n VMs of 4 GiB on two GPUs of 16 GiB, oversubscription 200 %. */
static inline struct mg *fake_create(size_t n)
{
	struct mg *mg = calloc(1, sizeof(*mg));
	size_t i;

	if (!mg || n > FAKE_MAX_VMS)
		abort();
	pthread_mutex_init(&mg->lock, NULL);
	pthread_mutex_init(&mg->pub, NULL);
	mg->events = calloc(FAKE_MAX_EVENTS, sizeof(*mg->events));
	if (!mg->events)
		abort();
	snprintf(mg->knobs.policy, sizeof(mg->knobs.policy), "cold");
	mg->knobs.return_interval_ms = 100;
	mg->knobs.oversub_pct = 200;
	mg->knobs.thrash_window_s = 60;
	mg->lrc.gpus = 2;
	mg->lrc.faults_minor = 7;
	mg->lrc.vram_used = 3 * FAKE_GIB;
	mg->lrc.bytes_per_page = 48;
	mg->ngpus = 2;
	for (i = 0; i < mg->ngpus; i++) {
		struct mg_gpu_info *g = &mg->gpus[i];

		g->index = (int)i;
		snprintf(g->name, sizeof(g->name), "sim%zu", i);
		g->vram_size = 16 * FAKE_GIB;
		g->chunk_size = 2u << 20;
		g->host_budget = 64 * FAKE_GIB;
		g->cache_used = (3 + i) << 20;	/* file cache replicas */
		snprintf(g->policy, sizeof(g->policy), "cold");
		g->return_interval_ms = 100;
		g->oversub_pct = 200;
		g->reloc_out_chunks = 42;
		g->suspend_hist[2] = 5;
	}
	for (i = 0; i < n; i++) {
		fake_vm_init(&mg->vms[i], (unsigned int)i, (int)(i % 2),
			     FAKE_MAX_VMS > 8 && n > 8 ? FAKE_GIB / 4 : 4 * FAKE_GIB);
		mg->gpus[i % 2].nr_vms++;
	}
	/* a VM name with characters that need escaping */
	if (n)
		snprintf(mg->vms[0].name, sizeof(mg->vms[0].name),
			 "web \"prod\"\\1");
	mg->nvms = n;
	return mg;
}

static inline void fake_destroy(struct mg *mg)
{
	free(mg->events);
	pthread_mutex_destroy(&mg->lock);
	pthread_mutex_destroy(&mg->pub);
	free(mg);
}

static inline struct mg_vm_info *fake_find(struct mg *mg, const char *id)
{
	size_t i;

	for (i = 0; i < mg->nvms; i++)
		if (!strcmp(mg->vms[i].id, id) || !strcmp(mg->vms[i].name, id))
			return &mg->vms[i];
	return NULL;
}

int mg_list_gpus(struct mg *mg, struct mg_gpu_info **out, size_t *n)
{
	pthread_mutex_lock(&mg->lock);
	*out = malloc(sizeof(**out) * (mg->ngpus ? mg->ngpus : 1));
	if (!*out) {
		pthread_mutex_unlock(&mg->lock);
		return -ENOMEM;
	}
	memcpy(*out, mg->gpus, sizeof(**out) * mg->ngpus);
	*n = mg->ngpus;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

int mg_list_vms(struct mg *mg, struct mg_vm_info **out, size_t *n)
{
	pthread_mutex_lock(&mg->lock);
	*out = malloc(sizeof(**out) * (mg->nvms ? mg->nvms : 1));
	if (!*out) {
		pthread_mutex_unlock(&mg->lock);
		return -ENOMEM;
	}
	memcpy(*out, mg->vms, sizeof(**out) * mg->nvms);
	*n = mg->nvms;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

int mg_list_doms(struct mg *mg, struct mg_dom_info **out, size_t *n)
{
	pthread_mutex_lock(&mg->lock);
	*out = NULL;
	*n = mg->ndoms;
	if (mg->ndoms) {
		*out = malloc(sizeof(**out) * mg->ndoms);
		if (!*out) {
			pthread_mutex_unlock(&mg->lock);
			return -ENOMEM;
		}
		memcpy(*out, mg->doms, sizeof(**out) * mg->ndoms);
	}
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

int mg_list_view(struct mg *mg, struct mg_gpu_info **gpus, size_t *ngpus,
		 struct mg_vm_info **vms, size_t *nvms, uint64_t *gen)
{
	pthread_mutex_lock(&mg->lock);
	*gpus = malloc(sizeof(**gpus) * (mg->ngpus ? mg->ngpus : 1));
	*vms = malloc(sizeof(**vms) * (mg->nvms ? mg->nvms : 1));
	if (!*gpus || !*vms) {
		pthread_mutex_unlock(&mg->lock);
		free(*gpus);
		free(*vms);
		return -ENOMEM;
	}
	memcpy(*gpus, mg->gpus, sizeof(**gpus) * mg->ngpus);
	memcpy(*vms, mg->vms, sizeof(**vms) * mg->nvms);
	*ngpus = mg->ngpus;
	*nvms = mg->nvms;
	if (gen)
		*gen = mg->gen;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

bool mg_view_current(struct mg *mg, uint64_t gen)
{
	bool cur;

	pthread_mutex_lock(&mg->lock);
	mg->gen_checks++;
	cur = mg->gen == gen;
	pthread_mutex_unlock(&mg->lock);
	return cur;
}

bool mg_view_equal(struct mg *mg, const struct mg_gpu_info *gpus,
		   size_t ngpus, const struct mg_vm_info *vms, size_t nvms)
{
	bool eq = true;

	pthread_mutex_lock(&mg->lock);
	if (gpus)
		eq = ngpus == mg->ngpus &&
		     !memcmp(gpus, mg->gpus, sizeof(*gpus) * ngpus);
	if (eq && vms)
		eq = nvms == mg->nvms &&
		     !memcmp(vms, mg->vms, sizeof(*vms) * nvms);
	pthread_mutex_unlock(&mg->lock);
	return eq;
}

int mg_get_vm(struct mg *mg, const char *id, struct mg_vm_info *out)
{
	struct mg_vm_info *v;

	pthread_mutex_lock(&mg->lock);
	v = fake_find(mg, id);
	if (v)
		*out = *v;
	pthread_mutex_unlock(&mg->lock);
	return v ? 0 : -ENOENT;
}

/* The fake's VMs have no virtio-fs shares. */
int mg_get_vm_shares(struct mg *mg, const char *id, struct mg_share **out,
		     size_t *n)
{
	struct mg_vm_info *v;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&mg->lock);
	v = fake_find(mg, id);
	pthread_mutex_unlock(&mg->lock);
	return v ? 0 : -ENOENT;
}

int mg_get_status(struct mg *mg, struct mg_status *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&mg->lock);
	snprintf(out->version, sizeof(out->version), "%s", MG_VERSION);
	snprintf(out->backend, sizeof(out->backend), "embedded");
	out->started_ms = 1700000000123;
	out->last_event_id = mg->next_id;
	out->recomputes = 7;
	out->nr_gpus = (uint32_t)mg->ngpus;
	out->nr_vms = (uint32_t)mg->nvms;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

static inline int fake_why(char *why, size_t len, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg);
	return 0;
}

int mg_set_vm_policy(struct mg *mg, const char *id,
		     const struct mg_vm_policy *p, unsigned int mask,
		     char *why, size_t whylen)
{
	struct mg_vm_policy np;
	struct mg_vm_info *v;
	uint64_t sum = 0;
	char detail[128 + MG_BY_LEN], vid[MG_ID_LEN];
	size_t i;

	if (!mask || (mask & ~(unsigned int)MG_POL_ALL)) {
		fake_why(why, whylen, "bad mask");
		return -EINVAL;
	}
	pthread_mutex_lock(&mg->lock);
	v = fake_find(mg, id);
	if (!v) {
		pthread_mutex_unlock(&mg->lock);
		return -ENOENT;
	}
	np = v->policy;
	if (mask & MG_POL_QUOTA)
		np.quota = p->quota;
	if (mask & MG_POL_MIN)
		np.min = p->min;
	if (mask & MG_POL_LOW)
		np.low = p->low;
	if (mask & MG_POL_MAX)
		np.max = p->max;
	if (mask & MG_POL_WEIGHT)
		np.weight = p->weight;
	if (mask & MG_POL_PRIORITY)
		np.priority = p->priority;
	if (!(np.min <= np.low && np.low <= np.max && np.max <= np.quota) ||
	    np.weight < 1 || np.weight > 10000 || np.priority > 3 ||
	    !np.quota) {
		pthread_mutex_unlock(&mg->lock);
		fake_why(why, whylen,
			 "need min <= low <= max <= quota, weight 1..10000, priority 0..3");
		return -EINVAL;
	}
	for (i = 0; i < mg->nvms; i++)
		if (mg->vms[i].gpu == v->gpu)
			sum += &mg->vms[i] == v ? np.quota : mg->vms[i].policy.quota;
	if (sum > mg->gpus[v->gpu].vram_size / 100 * mg->knobs.oversub_pct) {
		pthread_mutex_unlock(&mg->lock);
		fake_why(why, whylen, "quotas exceed the oversubscription limit");
		return -ENOSPC;
	}
	v->policy = np;
	v->operator_policy = true;
	v->stats.quota = np.quota;
	mg->policy_sets++;
	fake_changed_locked(mg);
	snprintf(vid, sizeof(vid), "%s", v->id);
	/*
	 * "by" as the model has it, so that the REST tests see who the REST
	 * layer said asked (no escaping: the tests' names need none).
	 */
	snprintf(detail, sizeof(detail), "{\"quota\":%llu,\"by\":\"%s\"}",
		 (unsigned long long)np.quota, mg_actor());
	pthread_mutex_unlock(&mg->lock);
	fake_publish(mg, "policy", vid, detail);
	return 0;
}

/* The strings only shape the real model's messages (test_mgmtd_model). */
int mg_set_vm_policy_text(struct mg *mg, const char *id,
			  const struct mg_vm_policy *p, unsigned int mask,
			  const struct mg_pol_text *txt, char *why,
			  size_t whylen)
{
	(void)txt;
	return mg_set_vm_policy(mg, id, p, mask, why, whylen);
}

int mg_reset_vm_policy(struct mg *mg, const char *id, char *why, size_t whylen)
{
	struct mg_vm_info *v;

	(void)why;
	(void)whylen;
	pthread_mutex_lock(&mg->lock);
	v = fake_find(mg, id);
	if (v) {
		v->policy.min = v->policy.low = 0;
		v->policy.max = v->policy.quota;
		v->policy.weight = 100;
		v->policy.priority = 0;
		v->operator_policy = false;
		fake_changed_locked(mg);
	}
	pthread_mutex_unlock(&mg->lock);
	return v ? 0 : -ENOENT;
}

/*
 * The dry run over the fake's GPUs: the quota limit only, the first GPU
 * with room (or the one asked for), an equal share as the entitlement.
 */
int mg_admission_query(struct mg *mg, int gpu, const struct mg_vm_policy *p,
		       struct mg_admission *out, char *why, size_t whylen)
{
	size_t g, i;

	if (gpu >= 0 && (size_t)gpu >= mg->ngpus)
		return fake_why(why, whylen, "no such GPU"), -ENOENT;
	if (!p->quota || p->min > p->quota || p->low < p->min ||
	    (p->max && p->max > p->quota))
		return fake_why(why, whylen, "min above quota"), -EINVAL;
	pthread_mutex_lock(&mg->lock);
	memset(out, 0, sizeof(*out));
	out->gpu = -1;
	for (g = 0; g < mg->ngpus; g++) {
		uint64_t sum = p->quota, limit;
		uint32_t n = 0;

		if (gpu >= 0 && (size_t)gpu != g)
			continue;
		for (i = 0; i < mg->nvms; i++)
			if (mg->vms[i].running && mg->vms[i].gpu == (int)g) {
				sum += mg->vms[i].policy.quota;
				n++;
			}
		limit = mg->gpus[g].vram_size / 100 * mg->knobs.oversub_pct;
		out->gpu = (int)g;
		out->vms = n;
		out->quotas = sum;
		out->quota_limit = limit;
		if (sum > limit) {
			snprintf(out->code, sizeof(out->code), "quota-limit");
			snprintf(out->reason, sizeof(out->reason),
				 "quotas would exceed the oversubscription limit");
			continue;
		}
		out->admitted = true;
		out->entitlement = mg->gpus[g].vram_size / (n + 1);
		snprintf(out->code, sizeof(out->code), "ok");
		out->reason[0] = 0;
		break;
	}
	if (!out->admitted && gpu < 0)
		out->gpu = -1;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

int mg_get_knobs(struct mg *mg, struct mg_knobs *out)
{
	pthread_mutex_lock(&mg->lock);
	*out = mg->knobs;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

int mg_get_lrc(struct mg *mg, struct mg_lrc *out)
{
	int ret;

	pthread_mutex_lock(&mg->lock);
	ret = mg->lrc_err;
	if (ret)
		memset(out, 0, sizeof(*out));
	else
		*out = mg->lrc;
	pthread_mutex_unlock(&mg->lock);
	return ret;
}

int mg_set_knobs(struct mg *mg, const struct mg_knobs *k, unsigned int mask,
		 char *why, size_t whylen)
{
	struct mg_knobs nk;

	if (!mask || (mask & ~(unsigned int)MG_KNOB_ALL))
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	nk = mg->knobs;
	if (mask & MG_KNOB_POLICY)
		memcpy(nk.policy, k->policy, sizeof(nk.policy));
	if (mask & MG_KNOB_RETURN_INTERVAL)
		nk.return_interval_ms = k->return_interval_ms;
	if (mask & MG_KNOB_OVERSUB)
		nk.oversub_pct = k->oversub_pct;
	if (mask & MG_KNOB_THRASH_WINDOW)
		nk.thrash_window_s = k->thrash_window_s;
	if (nk.return_interval_ms < 1 || nk.return_interval_ms > 60000 ||
	    nk.oversub_pct < 1 || nk.oversub_pct > 100000 ||
	    nk.thrash_window_s < 1 || nk.thrash_window_s > 86400) {
		pthread_mutex_unlock(&mg->lock);
		fake_why(why, whylen, "knob out of range");
		return -EINVAL;
	}
	mg->knobs = nk;
	fake_changed_locked(mg);
	pthread_mutex_unlock(&mg->lock);
	fake_publish(mg, "policy", "", "{\"knobs\":true}");
	return 0;
}

int mg_events_since(struct mg *mg, uint64_t after_id, size_t max,
		    struct mg_event **out, size_t *n)
{
	size_t i, k = 0;

	if (!max)
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	*out = malloc(sizeof(**out) * max);
	if (!*out) {
		pthread_mutex_unlock(&mg->lock);
		return -ENOMEM;
	}
	for (i = 0; i < mg->nevents && k < max; i++)
		if (mg->events[i].id > after_id)
			(*out)[k++] = mg->events[i];
	*n = k;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

int mg_subscribe(struct mg *mg, void (*cb)(void *priv, const struct mg_event *ev),
		 void *priv)
{
	int i;

	pthread_mutex_lock(&mg->pub);
	for (i = 0; i < FAKE_MAX_SUBS; i++) {
		if (!mg->subs[i].used) {
			mg->subs[i].cb = cb;
			mg->subs[i].priv = priv;
			mg->subs[i].used = true;
			mg->nsubs++;
			pthread_mutex_unlock(&mg->pub);
			return i;
		}
	}
	pthread_mutex_unlock(&mg->pub);
	return -ENOSPC;
}

void mg_unsubscribe(struct mg *mg, int handle)
{
	if (handle < 0 || handle >= FAKE_MAX_SUBS)
		return;
	pthread_mutex_lock(&mg->pub);	/* waits for a running callback */
	if (mg->subs[handle].used) {
		mg->subs[handle].used = false;
		mg->nsubs--;
	}
	pthread_mutex_unlock(&mg->pub);
}

static inline int fake_nsubs(struct mg *mg)
{
	int n;

	pthread_mutex_lock(&mg->pub);
	n = mg->nsubs;
	pthread_mutex_unlock(&mg->pub);
	return n;
}

#endif /* VGMEM_TESTS_MG_MODEL_FAKE_H */
