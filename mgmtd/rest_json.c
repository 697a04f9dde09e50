// SPDX-License-Identifier: GPL-2.0 OR MIT
/* JSON encoders and strict body parsers of the REST API (rest_json.h). */
#include "rest_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/util/size.h"
#include "lib/util/stat_path.h"
#include "rest_stats.h"

/* ---- encoders ---------------------------------------------------------- */

static void kv_u64(struct rbuf *b, const char *k, uint64_t v, bool first)
{
	rbuf_json_key(b, k, first);
	rbuf_u64(b, v);
}

static void kv_i64(struct rbuf *b, const char *k, int64_t v)
{
	rbuf_json_key(b, k, false);
	rbuf_i64(b, v);
}

static void kv_bool(struct rbuf *b, const char *k, bool v)
{
	rbuf_json_key(b, k, false);
	rbuf_puts(b, v ? "true" : "false");
}

static void kv_str(struct rbuf *b, const char *k, const char *v, bool first)
{
	rbuf_json_key(b, k, first);
	rbuf_json_str(b, v);
}

/* A histogram line's VGMEM_HIST_BUCKETS counts in rec, as an array. */
static void hist(struct rbuf *b, const char *k, const struct mg_stat *s,
		 const void *rec, bool first)
{
	unsigned int i;

	rbuf_json_key(b, k, first);
	rbuf_putc(b, '[');
	for (i = 0; i < VGMEM_HIST_BUCKETS; i++) {
		if (i)
			rbuf_putc(b, ',');
		rbuf_u64(b, mg_stat_get(s, rec, i));
	}
	rbuf_putc(b, ']');
}

/* A member of the model's in a group of counters (rj_stats()). */
struct rj_extra {
	const char *group;
	const char *key;
	uint64_t v;
};

/*
 * The members of the group of line from (which is its first) and the
 * lines after it: the counters and gauges, the histograms if detail, then
 * the model's members of the group. first: the object has none so far.
 */
static void rj_stat_group(struct rbuf *b, const struct mg_stat_table *t,
			  size_t from, const void *rec, bool detail,
			  const struct rj_extra *x, size_t nx, bool first)
{
	const char *path = t->line[from].rest;
	int hists;		/* 0: counters and gauges, 1: histograms */
	size_t k;

	for (hists = 0; hists <= (int)detail; hists++) {
		for (k = from; k < t->n; k++) {
			const struct mg_stat *s = &t->line[k];

			if (!vg_stat_same_group(s->rest, path) ||
			    (s->kind == VGMEM_STAT_HIST) != hists)
				continue;
			if (hists)
				hist(b, vg_stat_key(s->rest), s, rec, first);
			else
				kv_u64(b, vg_stat_key(s->rest),
				       mg_stat_get(s, rec, 0), first);
			first = false;
		}
	}
	for (k = 0; k < nx; k++) {
		if (vg_stat_in_group(path, x[k].group)) {
			kv_u64(b, x[k].key, x[k].v, first);
			first = false;
		}
	}
}

/*
 * A table's counters as members of the GPU or VM object rec, after some
 * of its own: each at its REST path, a group (an object of its own, or the
 * top level) where its first line is.
 */
static void rj_stats(struct rbuf *b, const struct mg_stat_table *t,
		     const void *rec, bool detail,
		     const struct rj_extra *x, size_t nx)
{
	size_t i, j, glen;

	for (i = 0; i < t->n; i++) {
		for (j = 0; j < i; j++)
			if (vg_stat_same_group(t->line[j].rest, t->line[i].rest))
				break;
		if (j < i)
			continue;	/* written with its group */
		glen = vg_stat_group_len(t->line[i].rest);
		if (glen) {
			rbuf_put(b, ",\"", 2);
			rbuf_put(b, t->line[i].rest, glen);
			rbuf_put(b, "\":{", 3);
		}
		rj_stat_group(b, t, i, rec, detail, x, nx, glen != 0);
		if (glen)
			rbuf_putc(b, '}');
	}
}

void rj_policy(struct rbuf *b, const struct mg_vm_policy *p)
{
	rbuf_putc(b, '{');
	kv_u64(b, "quota", p->quota, true);
	kv_u64(b, "min", p->min, false);
	kv_u64(b, "low", p->low, false);
	kv_u64(b, "max", p->max, false);
	kv_u64(b, "weight", p->weight, false);
	kv_u64(b, "priority", p->priority, false);
	rbuf_putc(b, '}');
}

static const char *source_name(enum mg_vm_source s)
{
	switch (s) {
	case MG_SRC_CONFIG: return "config";
	case MG_SRC_LIBVIRT: return "libvirt";
	case MG_SRC_BACKEND: return "backend";
	}
	return "unknown";
}

/* The members of a VM object, without the closing brace. */
static void rj_vm_members(struct rbuf *b, const struct mg_vm_info *vm,
			  bool detail)
{
	/* the file cache's private replicas: VRAM apart from resident */
	const struct rj_extra extra[] = {
		{ "usage", "cache_private", vm->cache_private },
	};

	rbuf_putc(b, '{');
	kv_str(b, "id", vm->id, true);
	kv_str(b, "name", vm->name, false);
	kv_str(b, "domain_uuid", vm->domain_uuid, false);
	kv_i64(b, "gpu", vm->gpu);
	kv_str(b, "state", vm->lost ? "lost" : vm->running ? "running" :
	       "stopped", false);
	kv_bool(b, "running", vm->running);
	kv_bool(b, "lost", vm->lost);
	kv_str(b, "source", source_name(vm->source), false);
	kv_bool(b, "operator_policy", vm->operator_policy);
	kv_str(b, "error", vm->error, false);
	rbuf_json_key(b, "policy", false);
	rj_policy(b, &vm->policy);
	kv_u64(b, "entitlement", vm->entitlement, false);
	kv_u64(b, "guaranteed", vm->guaranteed, false);
	rj_stats(b, &mg_vm_stats, vm, detail, extra,
		 sizeof(extra) / sizeof(extra[0]));
	kv_bool(b, "advisory", vm->advisory);
	kv_i64(b, "advisory_since_ms", vm->advisory_since_ms);
	kv_i64(b, "started_ms", vm->started_ms);
}

void rj_vm(struct rbuf *b, const struct mg_vm_info *vm, bool detail)
{
	rj_vm_members(b, vm, detail);
	rbuf_putc(b, '}');
}

void rj_vm_shares(struct rbuf *b, const struct mg_vm_info *vm, bool detail,
		  const struct mg_share *shares, size_t n)
{
	size_t i;

	rj_vm_members(b, vm, detail);
	rbuf_json_key(b, "shares", false);
	rbuf_putc(b, '[');
	for (i = 0; i < n; i++) {
		if (i)
			rbuf_putc(b, ',');
		rbuf_putc(b, '{');
		kv_u64(b, "id", shares[i].id, true);
		kv_str(b, "tag", shares[i].tag, false);
		kv_str(b, "source", shares[i].source, false);
		kv_bool(b, "readonly", shares[i].readonly);
		rbuf_putc(b, '}');
	}
	rbuf_putc(b, ']');
	rbuf_putc(b, '}');
}

void rj_dom(struct rbuf *b, const struct mg_dom_info *d)
{
	rbuf_putc(b, '{');
	kv_str(b, "name", d->name, true);
	kv_str(b, "domain_uuid", d->uuid, false);
	kv_str(b, "mdev", d->mdev, false);
	kv_str(b, "state", mg_dom_state_name(d->state), false);
	kv_str(b, "reason", d->reason, false);
	kv_i64(b, "since_ms", d->since_ms);
	rbuf_putc(b, '}');
}

void rj_vm_detail(struct rbuf *b, const struct mg_vm_info *vm,
		  const struct mg_share *shares, size_t n)
{
	rj_vm_shares(b, vm, true, shares, n);
}

void rj_gpu(struct rbuf *b, const struct mg_gpu_info *g, bool detail)
{
	rbuf_putc(b, '{');
	rbuf_json_key(b, "index", true);
	rbuf_i64(b, g->index);
	kv_str(b, "name", g->name, false);
	kv_u64(b, "vram_size", g->vram_size, false);
	kv_u64(b, "vram_used", g->vram_used, false);
	kv_u64(b, "cache_used", g->cache_used, false);
	kv_u64(b, "host_used", g->host_used, false);
	kv_u64(b, "host_budget", g->host_budget, false);
	kv_u64(b, "chunk_size", g->chunk_size, false);
	kv_str(b, "policy", g->policy, false);
	kv_u64(b, "return_interval_ms", g->return_interval_ms, false);
	kv_u64(b, "oversub_pct", g->oversub_pct, false);
	kv_u64(b, "nr_vms", g->nr_vms, false);
	kv_u64(b, "entitled", g->entitled, false);
	kv_u64(b, "spare", g->spare, false);
	kv_u64(b, "demand", g->demand, false);
	kv_bool(b, "contended", g->contended);
	rj_stats(b, &mg_gpu_stats, g, detail, NULL, 0);
	rbuf_putc(b, '}');
}

void rj_knobs(struct rbuf *b, const struct mg_knobs *k)
{
	char pol[sizeof(k->policy) + 1];

	memcpy(pol, k->policy, sizeof(k->policy));
	pol[sizeof(k->policy)] = '\0';
	rbuf_putc(b, '{');
	kv_str(b, "policy", pol, true);
	kv_u64(b, "return_interval_ms", k->return_interval_ms, false);
	kv_u64(b, "oversub_pct", k->oversub_pct, false);
	kv_u64(b, "thrash_window_s", k->thrash_window_s, false);
	rbuf_putc(b, '}');
}

void rj_event(struct rbuf *b, const struct mg_event *ev)
{
	char detail[MG_EVENT_DETAIL_LEN + 1];
	json_t *j;

	memcpy(detail, ev->detail, MG_EVENT_DETAIL_LEN);
	detail[MG_EVENT_DETAIL_LEN] = '\0';
	rbuf_putc(b, '{');
	kv_u64(b, "id", ev->id, true);
	kv_i64(b, "ts_ms", ev->ts_ms);
	kv_str(b, "type", ev->type, false);
	kv_str(b, "vm", ev->vm, false);
	rbuf_json_key(b, "detail", false);
	/*
	 * The model promises a JSON object; check rather than trust it, so a
	 * bad detail can never break the stream's framing or a client's
	 * parser. Re-encoding also puts it on one line, as SSE data needs.
	 */
	j = json_loads(detail, JSON_REJECT_DUPLICATES, NULL);
	if (j && json_is_object(j)) {
		char *txt = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);

		if (txt)
			rbuf_puts(b, txt);
		else
			rbuf_puts(b, "{}");
		free(txt);
	} else {
		rbuf_puts(b, "{\"text\":");
		rbuf_json_str(b, detail);
		rbuf_putc(b, '}');
	}
	json_decref(j);
	rbuf_putc(b, '}');
}

/* ---- parsers ----------------------------------------------------------- */

/* REST size strings, as the config file's and domain XML's: VG_SIZE_MGMT. */
int rj_parse_size(const char *s, uint64_t *out)
{
	return vg_parse_size(s, VG_SIZE_MGMT, out);
}

static int rj_fail(struct rj_error *e, unsigned int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rj_fail(struct rj_error *e, unsigned int status, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static json_t *rj_load(const char *body, size_t len, struct rj_error *e)
{
	json_error_t jerr;
	json_t *root;

	if (!len) {
		rj_fail(e, 400, "the request body is empty; a JSON object is required");
		return NULL;
	}
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		rj_fail(e, 400, "malformed JSON at line %d, column %d: %s",
			jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		rj_fail(e, 400, "the body must be a JSON object");
		return NULL;
	}
	return root;
}

/* text (MG_SIZE_TEXT bytes, or NULL) gets the size as written. */
static int rj_size_field(const char *key, json_t *v, uint64_t *out,
			 char *text, struct rj_error *e)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		if (i < 0)
			return rj_fail(e, 422, "\"%s\" must not be negative", key);
		*out = (uint64_t)i;
		if (text)
			snprintf(text, MG_SIZE_TEXT, "%lld", (long long)i);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);

		if (text)
			snprintf(text, MG_SIZE_TEXT, "%s", s);

		if (strlen(s) != json_string_length(v) || rj_parse_size(s, out))
			return rj_fail(e, 400,
				       "\"%s\" is not a size: use bytes or a number with a unit (K or KiB, KB, M or MiB, MB, ... E or EiB, EB), e.g. \"8G\"",
				       key);
		/*
		 * Sizes go back out as JSON integers, which JSON parsers
		 * (jansson's json_int_t) read as signed 64-bit: a string may
		 * not name a size an integer field could not.
		 */
		if (*out > (uint64_t)INT64_MAX)
			return rj_fail(e, 422, "\"%s\" is above the largest size, 2^63 - 1 bytes",
				       key);
		return 0;
	}
	return rj_fail(e, 400, "\"%s\" must be an integer or a size string such as \"8G\"",
		       key);
}

static int rj_u32_field(const char *key, json_t *v, uint32_t *out,
			struct rj_error *e)
{
	json_int_t i;

	if (!json_is_integer(v))
		return rj_fail(e, 400, "\"%s\" must be an integer", key);
	i = json_integer_value(v);
	if (i < 0 || i > (json_int_t)UINT32_MAX)
		return rj_fail(e, 422, "\"%s\" is out of range", key);
	*out = (uint32_t)i;
	return 0;
}

int rj_parse_policy(const char *body, size_t len, bool full,
		    struct mg_vm_policy *p, unsigned int *mask,
		    struct mg_pol_text *txt, struct rj_error *e)
{
	struct mg_vm_policy np = { .weight = 100 };
	struct mg_pol_text t;
	unsigned int m = 0;
	const char *key;
	json_t *root, *v;
	int ret = 0;

	memset(&t, 0, sizeof(t));
	root = rj_load(body, len, e);
	if (!root)
		return -EINVAL;
	json_object_foreach(root, key, v) {
		if (!strcmp(key, "quota")) {
			ret = rj_size_field(key, v, &np.quota, t.quota, e);
			m |= MG_POL_QUOTA;
		} else if (!strcmp(key, "min")) {
			ret = rj_size_field(key, v, &np.min, t.min, e);
			m |= MG_POL_MIN;
		} else if (!strcmp(key, "low")) {
			ret = rj_size_field(key, v, &np.low, t.low, e);
			m |= MG_POL_LOW;
		} else if (!strcmp(key, "max")) {
			ret = rj_size_field(key, v, &np.max, t.max, e);
			m |= MG_POL_MAX;
		} else if (!strcmp(key, "weight")) {
			ret = rj_u32_field(key, v, &np.weight, e);
			m |= MG_POL_WEIGHT;
		} else if (!strcmp(key, "priority")) {
			ret = rj_u32_field(key, v, &np.priority, e);
			m |= MG_POL_PRIORITY;
		} else {
			ret = rj_fail(e, 400,
				      "unknown field \"%.64s\" (allowed: quota, min, low, max, weight, priority)",
				      key);
		}
		if (ret)
			goto out;
	}
	t.written = m & (MG_POL_QUOTA | MG_POL_MIN | MG_POL_LOW | MG_POL_MAX);
	if (full) {
		if (!(m & MG_POL_QUOTA)) {
			ret = rj_fail(e, 422, "PUT needs \"quota\" (use PATCH to change single fields)");
			goto out;
		}
		if (!(m & MG_POL_MAX))
			np.max = np.quota;
		if (!(m & MG_POL_LOW))
			np.low = np.min;	/* min alone implies low >= min */
		m = MG_POL_ALL;
	} else if (!m) {
		ret = rj_fail(e, 422, "the body changes nothing: give at least one field");
		goto out;
	}
	*p = np;
	*mask = m;
	if (txt)
		*txt = t;
out:
	json_decref(root);
	return ret;
}

int rj_parse_knobs(const char *body, size_t len, struct mg_knobs *k,
		   unsigned int *mask, struct rj_error *e)
{
	struct mg_knobs nk;
	unsigned int m = 0;
	const char *key;
	json_t *root, *v;
	int ret = 0;

	memset(&nk, 0, sizeof(nk));
	root = rj_load(body, len, e);
	if (!root)
		return -EINVAL;
	json_object_foreach(root, key, v) {
		if (!strcmp(key, "policy")) {
			const char *s;

			m |= MG_KNOB_POLICY;
			if (!json_is_string(v)) {
				ret = rj_fail(e, 400, "\"policy\" must be a string");
				goto out;
			}
			s = json_string_value(v);
			if (strcmp(s, "random") && strcmp(s, "lra") &&
			    strcmp(s, "cold")) {
				ret = rj_fail(e, 422, "\"policy\" must be one of random, lra, cold");
				goto out;
			}
			snprintf(nk.policy, sizeof(nk.policy), "%s", s);
		} else if (!strcmp(key, "return_interval_ms")) {
			ret = rj_u32_field(key, v, &nk.return_interval_ms, e);
			m |= MG_KNOB_RETURN_INTERVAL;
		} else if (!strcmp(key, "oversub_pct")) {
			ret = rj_u32_field(key, v, &nk.oversub_pct, e);
			m |= MG_KNOB_OVERSUB;
		} else if (!strcmp(key, "thrash_window_s")) {
			ret = rj_u32_field(key, v, &nk.thrash_window_s, e);
			m |= MG_KNOB_THRASH_WINDOW;
		} else {
			ret = rj_fail(e, 400,
				      "unknown field \"%.64s\" (allowed: policy, return_interval_ms, oversub_pct, thrash_window_s)",
				      key);
		}
		if (ret)
			goto out;
	}
	if (!m) {
		ret = rj_fail(e, 422, "the body changes nothing: give at least one field");
		goto out;
	}
	*k = nk;
	*mask = m;
out:
	json_decref(root);
	return ret;
}
