// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's model (model.h): the VM table, effective policies, entitlements
 * from policy/ applied to the backend, knobs, and the recompute timer.
 * Events are in events.c, VM definitions (libvirt, config) in vms.c,
 * operator writes (policy, knobs) in opwrite.c, domains not managed in
 * domains.c.
 *
 * Locking: mg->lock (a mutex) protects everything in struct mg except the
 * event delivery state (events.c). Backend calls and state writes happen
 * under it, so an operator change is validated, admitted, made durable and
 * applied as one step that no other change can interleave with. Events are
 * queued under it and delivered after it is dropped.
 *
 * A VM's effective policy is built from three layers: defaults (min = low
 * = 0, weight 100, priority 0), the fields its definition sets (libvirt
 * metadata or the config file), and the fields an operator set through the
 * API, which win and are the only ones persisted. max, if no layer sets
 * it, follows quota.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_priv.h"
#include "lib/util/size.h"
#include "log.h"

int64_t mg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mg_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mg_why_set(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* ---- lookups --------------------------------------------------------- */

struct mg_vm *mg_find_locked(struct mg *mg, const char *id_or_name)
{
	size_t i;

	if (!id_or_name || !*id_or_name)
		return NULL;
	for (i = 0; i < mg->nr_vms; i++)
		if (!strcmp(mg->vms[i]->info.id, id_or_name))
			return mg->vms[i];
	for (i = 0; i < mg->nr_vms; i++)
		if (mg->vms[i]->info.name[0] &&
		    !strcmp(mg->vms[i]->info.name, id_or_name))
			return mg->vms[i];
	return NULL;
}

const struct mg_state_policy *mg_stored_find(struct mg *mg, const char *id)
{
	size_t i;

	for (i = 0; i < mg->nr_stored; i++)
		if (!strcmp(mg->stored[i].id, id))
			return &mg->stored[i];
	return NULL;
}

/* ---- policy layers --------------------------------------------------- */

void mg_apply_fields(struct mg_vm_policy *dst, const struct mg_vm_policy *src,
		     unsigned int mask)
{
	if (mask & MG_POL_QUOTA)
		dst->quota = src->quota;
	if (mask & MG_POL_MIN)
		dst->min = src->min;
	if (mask & MG_POL_LOW)
		dst->low = src->low;
	if (mask & MG_POL_MAX)
		dst->max = src->max;
	if (mask & MG_POL_WEIGHT)
		dst->weight = src->weight;
	if (mask & MG_POL_PRIORITY)
		dst->priority = src->priority;
}

void mg_effective(const struct mg_vm_policy *meta, unsigned int meta_mask,
		  const struct mg_vm_policy *op, unsigned int op_mask,
		  struct mg_vm_policy *out)
{
	memset(out, 0, sizeof(*out));
	out->weight = VGP_WEIGHT_DEFAULT;
	mg_apply_fields(out, meta, meta_mask);
	mg_apply_fields(out, op, op_mask);
	if (!((meta_mask | op_mask) & MG_POL_MAX))
		out->max = out->quota;
	/*
	 * An unset low protects what min protects, as in cgroup v2 where the
	 * effective protection is the larger of memory.min and memory.low; so
	 * `min` alone is a valid policy on every path (PUT, PATCH, metadata).
	 */
	if (!((meta_mask | op_mask) & MG_POL_LOW) && out->low < out->min)
		out->low = out->min;
}

void mg_to_vgp(const struct mg_vm_policy *p, uint64_t demand,
	       struct vgp_vm *v)
{
	v->quota = p->quota;
	v->min = p->min;
	v->low = p->low;
	v->max = p->max;
	v->weight = p->weight;
	v->prio = p->priority;
	v->demand = demand;
}

int mg_gpu_params_locked(struct mg *mg, int gpu, struct vgp_gpu *g)
{
	const struct mg_gpu_info *gi;

	if (gpu < 0 || (size_t)gpu >= mg->nr_gpus)
		return -EINVAL;
	gi = &mg->gpus[gpu];
	memset(g, 0, sizeof(*g));
	g->vram = gi->vram_size;
	/* The backend's 0 is "unlimited"; policy/ wants a number. */
	g->host_budget = gi->host_budget ? gi->host_budget : UINT64_MAX;
	g->chunk = gi->chunk_size ? gi->chunk_size : (2ull << 20);
	g->oversub_pct = mg->knobs.oversub_pct;
	g->hold_spare = mg->cfg->hold_spare;
	return 0;
}

/*
 * Would policy p for vm (p == NULL: its current one) on gpu, with every
 * other running VM there as it is, be admitted under oversub_pct?
 */
int mg_admit_locked(struct mg *mg, const struct mg_vm *vm, int gpu,
			const struct mg_vm_policy *p, uint32_t oversub_pct,
			char *why, size_t whylen)
{
	struct vgp_status st;
	struct vgp_vm *others, cand;
	struct vgp_gpu g;
	size_t i, n = 0;
	int ret;

	ret = mg_gpu_params_locked(mg, gpu, &g);
	if (ret) {
		mg_why_set(why, whylen, "no GPU %d", gpu);
		return ret;
	}
	g.oversub_pct = oversub_pct;
	others = calloc(mg->nr_vms + 1, sizeof(*others));
	if (!others)
		return -ENOMEM;
	for (i = 0; i < mg->nr_vms; i++) {
		const struct mg_vm *o = mg->vms[i];

		if (o == vm || !o->info.running || o->info.gpu != gpu)
			continue;
		mg_to_vgp(&o->info.policy, 0, &others[n++]);
	}
	if (vm) {
		mg_to_vgp(p ? p : &vm->info.policy, 0, &cand);
		ret = vgp_admit(&g, others, n, &cand, &st);
	} else {
		ret = vgp_admit(&g, others, n, NULL, &st);
	}
	free(others);
	if (ret)
		mg_why_set(why, whylen, "%s: %s", vgp_code_name(st.code), st.reason);
	return ret;
}

const char *mg_vm_name(const struct mg_vm *vm)
{
	return vm->info.name[0] ? vm->info.name : vm->info.id;
}

/* The four sizes in the order they must keep, smallest first. */
enum { ORD_MIN, ORD_LOW, ORD_MAX, ORD_QUOTA, ORD_N };

static const struct {
	const char *name;
	unsigned int bit;
} ord_field[ORD_N] = {
	{ "min", MG_POL_MIN }, { "low", MG_POL_LOW },
	{ "max", MG_POL_MAX }, { "quota", MG_POL_QUOTA },
};

/* Field f as the user sees it: "min 8G", "min='8GiB'" or "max 1GiB". */
static void ord_quote(const struct mg_pol_who *who, int f, uint64_t bytes,
		      char *buf, size_t len)
{
	const struct mg_pol_text *t = who->txt;
	const char *s = NULL;
	char num[MG_SIZE_TEXT];

	if (t && (t->written & ord_field[f].bit))
		s = f == ORD_MIN ? t->min : f == ORD_LOW ? t->low :
		    f == ORD_MAX ? t->max : t->quota;
	if (s && who->domain) {
		snprintf(buf, len, "%s='%s'", ord_field[f].name, s);
		return;
	}
	if (!s) {
		s = vg_format_size(bytes, 0, num, sizeof(num));
	}
	snprintf(buf, len, "%s %s", ord_field[f].name, s);
}

/*
 * min <= low <= max <= quota (see mg_validate_policy_locked()). A field
 * the user did not set holds what it is derived from (low: min; max:
 * quota), so only the fields set are compared, neighbours in that chain:
 * a domain with min='8GiB' and max='1GiB' has low = min, and the conflict
 * is min's with max, not low's.
 */
static int check_order(const struct mg_pol_who *who,
		       const struct mg_vm_policy *p, char *why, size_t whylen)
{
	const uint64_t v[ORD_N] = { p->min, p->low, p->max, p->quota };
	char qa[2 * MG_SIZE_TEXT], qb[2 * MG_SIZE_TEXT];
	int chain[ORD_N], n = 0, f, i;

	for (f = 0; f < ORD_N; f++) {
		if ((f == ORD_LOW || f == ORD_MAX) &&
		    !(who->set & ord_field[f].bit))
			continue;
		chain[n++] = f;
	}
	for (i = 0; i + 1 < n; i++) {
		if (v[chain[i]] <= v[chain[i + 1]])
			continue;
		ord_quote(who, chain[i], v[chain[i]], qa, sizeof(qa));
		ord_quote(who, chain[i + 1], v[chain[i + 1]], qb, sizeof(qb));
		mg_why_set(why, whylen, "%s%s: %s is above %s",
			   who->domain ? "domain " : "", who->name, qa, qb);
		return -EINVAL;
	}
	return 0;
}

int mg_validate_policy_locked(struct mg *mg, int gpu,
			      const struct mg_vm_policy *p,
			      const struct mg_pol_who *who, char *why,
			      size_t whylen)
{
	struct vgp_status st;
	struct vgp_gpu g;
	struct vgp_vm v;
	const char *r;

	if (check_order(who, p, why, whylen))
		return -EINVAL;
	if (mg_gpu_params_locked(mg, gpu < 0 ? 0 : gpu, &g)) {
		mg_why_set(why, whylen, "no GPU to validate against");
		return -EINVAL;
	}
	mg_to_vgp(p, 0, &v);
	if (vgp_validate_vm(&g, &v, &st)) {
		/* The engine numbers the VMs it was given: "vm 0: ...". */
		r = st.reason;
		if (!strncmp(r, "vm 0: ", 6))
			r += 6;
		mg_why_set(why, whylen, "%s%s: %s", who->domain ? "domain " : "",
			   who->name, r);
		return -EINVAL;
	}
	return 0;
}

/* ---- stats, recompute ------------------------------------------------ */

static int refresh_gpus_locked(struct mg *mg)
{
	struct mg_gpu_info *v;
	size_t n, i;
	int ret;

	ret = mg->be.ops->list_gpus(mg->be.priv, &v, &n);
	if (ret)
		return ret;
	for (i = 0; i < n && i < mg->nr_gpus; i++) {
		/* keep the policy engine's view of the last recompute */
		v[i].entitled = mg->gpus[i].entitled;
		v[i].spare = mg->gpus[i].spare;
		v[i].demand = mg->gpus[i].demand;
		v[i].contended = mg->gpus[i].contended;
	}
	for (i = 0; i < n; i++)
		v[i].oversub_pct = mg->knobs.oversub_pct;
	/* Backends calloc() their lists, so memcmp sees only fields. */
	if (n != mg->nr_gpus ||
	    (n && memcmp(v, mg->gpus, n * sizeof(*v))))
		mg_view_changed_locked(mg);
	free(mg->gpus);
	mg->gpus = v;
	mg->nr_gpus = n;
	return 0;
}

int mg_refresh_stats_locked(struct mg *mg)
{
	struct mg_backend_vm *bv;
	size_t n, i;
	int ret;

	ret = refresh_gpus_locked(mg);
	if (ret)
		return ret;
	ret = mg->be.ops->list_vms(mg->be.priv, &bv, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		struct mg_vm *vm = mg_find_locked(mg, bv[i].id);

		/*
		 * The file cache's bytes are a view field too: a change of
		 * them alone is a new generation (cached answers re-render).
		 */
		if (!vm || !vm->info.running ||
		    (!memcmp(&vm->info.stats, &bv[i].stats, sizeof(bv[i].stats)) &&
		     vm->info.cache_private == bv[i].cache_private))
			continue;
		vm->info.stats = bv[i].stats;
		vm->info.cache_private = bv[i].cache_private;
		mg_view_changed_locked(mg);
	}
	/* VMs whose vGPU went or came back; their GPUs' shares move. */
	if (mg_track_vgpus_locked(mg, bv, n))
		mg_recompute_locked(mg);
	free(bv);
	mg->stats_ms = mg_mono_ms();
	return 0;
}

/* Bytes sent to the backend for an entitlement (its 0 means equal share). */
static uint64_t backend_ent(const struct mg_gpu_info *g, uint64_t bytes)
{
	(void)g;
	return bytes ? bytes : 1;
}

static int recompute_gpu_locked(struct mg *mg, int gpu)
{
	struct mg_gpu_info *gi = &mg->gpus[gpu];
	struct mg_vm **sel = NULL;
	struct vgp_status st;
	struct vgp_vm *in = NULL;
	struct vgp_ent *out = NULL;
	struct vgp_gpu g;
	void *scratch = NULL;
	size_t i, n = 0, slen;
	bool was_contended = gi->contended;
	int ret;

	ret = mg_gpu_params_locked(mg, gpu, &g);
	if (ret)
		return ret;
	sel = calloc(mg->nr_vms + 1, sizeof(*sel));
	in = calloc(mg->nr_vms + 1, sizeof(*in));
	out = calloc(mg->nr_vms + 1, sizeof(*out));
	if (!sel || !in || !out) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < mg->nr_vms; i++) {
		struct mg_vm *vm = mg->vms[i];

		if (!vm->info.running || vm->info.gpu != gpu)
			continue;
		sel[n] = vm;
		mg_to_vgp(&vm->info.policy, vm->info.stats.allocated, &in[n]);
		n++;
	}
	slen = vgp_scratch_size(n);
	scratch = malloc(slen ? slen : 16);
	if (!scratch) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = vgp_compute(&g, in, n, out, scratch, slen, &st);
	if (ret) {
		mg_err("recompute gpu %d: %s", gpu, st.reason);
		goto out_free;
	}
	for (i = 0; i < n; i++) {
		struct mg_vm *vm = sel[i];
		int r;

		if (vm->applied && vm->info.entitlement == out[i].bytes) {
			if (vm->info.guaranteed != out[i].guaranteed)
				mg_view_changed_locked(mg);
			vm->info.guaranteed = out[i].guaranteed;
			continue;
		}
		r = mg->be.ops->set_entitlement(mg->be.priv, vm->info.id,
						 backend_ent(gi, out[i].bytes));
		if (r) {
			mg_warn("vm %s: backend refused entitlement %llu: %s",
				vm->info.id, (unsigned long long)out[i].bytes,
				strerror(-r));
			if (!ret)
				ret = r;
			continue;
		}
		vm->info.entitlement = out[i].bytes;
		vm->info.guaranteed = out[i].guaranteed;
		vm->info.stats.entitlement = out[i].bytes;
		vm->applied = true;
		mg_view_changed_locked(mg);
	}
	if (gi->entitled != st.entitled || gi->spare != st.spare ||
	    gi->demand != st.demand ||
	    gi->contended != !!(st.flags & VGP_F_CONTENDED))
		mg_view_changed_locked(mg);
	gi->entitled = st.entitled;
	gi->spare = st.spare;
	gi->demand = st.demand;
	gi->contended = !!(st.flags & VGP_F_CONTENDED);
	if (gi->contended != was_contended)
		mg_emit_locked(mg, "pressure", "",
			       "{\"gpu\":%d,\"state\":\"%s\",\"demand\":%llu,\"vram\":%llu}",
			       gpu, gi->contended ? "contended" : "relieved",
			       (unsigned long long)st.demand,
			       (unsigned long long)gi->vram_size);
	mg->recomputes++;
out_free:
	free(scratch);
	free(out);
	free(in);
	free(sel);
	return ret;
}

int mg_recompute_locked(struct mg *mg)
{
	size_t i;
	int ret = 0, r;

	for (i = 0; i < mg->nr_gpus; i++) {
		r = recompute_gpu_locked(mg, (int)i);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

int mg_recompute(struct mg *mg)
{
	int ret;

	pthread_mutex_lock(&mg->lock);
	ret = mg_refresh_stats_locked(mg);
	if (!ret)
		ret = mg_recompute_locked(mg);
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}

/* ---- public reads ---------------------------------------------------- */

/* Stats older than this are refreshed by a read (the timer refreshes too). */
#define MG_STATS_FRESH_MS 100

/*
 * True if it refreshed: a refresh may find a VM lost or back, whose
 * events the caller delivers (mg_events_flush()) once the lock is dropped.
 */
static bool maybe_refresh_locked(struct mg *mg)
{
	if (mg_mono_ms() - mg->stats_ms < MG_STATS_FRESH_MS)
		return false;
	mg_refresh_stats_locked(mg);
	return true;
}

/* Unlocks after a read; delivers what a refresh in it may have queued. */
static void read_unlock(struct mg *mg, bool refreshed)
{
	pthread_mutex_unlock(&mg->lock);
	if (refreshed)
		mg_events_flush(mg);
}

/*
 * GPU i as listed: the knobs are global, so they override what the
 * backend reported. memcpy (not assignment) so that every byte, padding
 * included, is a function of the model, which mg_view_equal() relies on.
 */
static void gpu_view_locked(struct mg *mg, size_t i, struct mg_gpu_info *out)
{
	memcpy(out, &mg->gpus[i], sizeof(*out));
	snprintf(out->policy, sizeof(out->policy), "%s", mg->knobs.policy);
	out->oversub_pct = mg->knobs.oversub_pct;
}

int mg_list_gpus(struct mg *mg, struct mg_gpu_info **out, size_t *n)
{
	struct mg_gpu_info *v;
	bool refreshed;
	size_t i;

	if (!mg || !out || !n)
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	refreshed = maybe_refresh_locked(mg);
	v = malloc((mg->nr_gpus ? mg->nr_gpus : 1) * sizeof(*v));
	if (!v) {
		read_unlock(mg, refreshed);
		return -ENOMEM;
	}
	for (i = 0; i < mg->nr_gpus; i++)
		gpu_view_locked(mg, i, &v[i]);
	*n = mg->nr_gpus;
	read_unlock(mg, refreshed);
	*out = v;
	return 0;
}

int mg_list_vms(struct mg *mg, struct mg_vm_info **out, size_t *n)
{
	struct mg_vm_info *v;
	bool refreshed;
	size_t i;

	if (!mg || !out || !n)
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	refreshed = maybe_refresh_locked(mg);
	v = malloc((mg->nr_vms ? mg->nr_vms : 1) * sizeof(*v));
	if (!v) {
		read_unlock(mg, refreshed);
		return -ENOMEM;
	}
	for (i = 0; i < mg->nr_vms; i++)
		v[i] = mg->vms[i]->info;
	*n = mg->nr_vms;
	read_unlock(mg, refreshed);
	*out = v;
	return 0;
}

int mg_list_view(struct mg *mg, struct mg_gpu_info **gpus, size_t *ngpus,
		 struct mg_vm_info **vms, size_t *nvms, uint64_t *gen)
{
	struct mg_gpu_info *g;
	struct mg_vm_info *v;
	bool refreshed;
	size_t i;

	if (!mg || !gpus || !ngpus || !vms || !nvms)
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	refreshed = maybe_refresh_locked(mg);
	g = malloc((mg->nr_gpus ? mg->nr_gpus : 1) * sizeof(*g));
	v = malloc((mg->nr_vms ? mg->nr_vms : 1) * sizeof(*v));
	if (!g || !v) {
		read_unlock(mg, refreshed);
		free(g);
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < mg->nr_gpus; i++)
		gpu_view_locked(mg, i, &g[i]);
	for (i = 0; i < mg->nr_vms; i++)
		memcpy(&v[i], &mg->vms[i]->info, sizeof(v[i]));
	*ngpus = mg->nr_gpus;
	*nvms = mg->nr_vms;
	if (gen)
		*gen = mg->view_gen;
	read_unlock(mg, refreshed);
	*gpus = g;
	*vms = v;
	return 0;
}

bool mg_view_current(struct mg *mg, uint64_t gen)
{
	bool refreshed, cur;

	if (!mg)
		return false;
	pthread_mutex_lock(&mg->lock);
	refreshed = maybe_refresh_locked(mg);
	cur = mg->view_gen == gen;
	read_unlock(mg, refreshed);
	return cur;
}

bool mg_view_equal(struct mg *mg, const struct mg_gpu_info *gpus,
		   size_t ngpus, const struct mg_vm_info *vms, size_t nvms)
{
	struct mg_gpu_info t;
	bool eq = true, refreshed;
	size_t i;

	if (!mg)
		return false;
	pthread_mutex_lock(&mg->lock);
	refreshed = maybe_refresh_locked(mg);
	if (gpus) {
		eq = ngpus == mg->nr_gpus;
		for (i = 0; eq && i < ngpus; i++) {
			gpu_view_locked(mg, i, &t);
			eq = !memcmp(&t, &gpus[i], sizeof(t));
		}
	}
	if (eq && vms) {
		eq = nvms == mg->nr_vms;
		for (i = 0; eq && i < nvms; i++)
			eq = !memcmp(&mg->vms[i]->info, &vms[i], sizeof(vms[i]));
	}
	read_unlock(mg, refreshed);
	return eq;
}

int mg_get_vm(struct mg *mg, const char *id_or_name, struct mg_vm_info *out)
{
	struct mg_vm *vm;
	bool refreshed;
	int ret = 0;

	if (!mg || !id_or_name || !out)
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	refreshed = maybe_refresh_locked(mg);
	vm = mg_find_locked(mg, id_or_name);
	if (vm)
		*out = vm->info;
	else
		ret = -ENOENT;
	read_unlock(mg, refreshed);
	return ret;
}

int mg_get_status(struct mg *mg, struct mg_status *out)
{
	if (!mg || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&mg->lock);
	snprintf(out->version, sizeof(out->version), "%s", MG_VERSION);
	snprintf(out->backend, sizeof(out->backend), "%s", mg->be.ops->name);
	if (mg->lv)
		snprintf(out->libvirt_uri, sizeof(out->libvirt_uri), "%s",
			 mg->cfg->libvirt_uri);
	out->started_ms = mg->started_ms;
	out->recomputes = mg->recomputes;
	out->advisories = mg->advisories;
	out->migrations_ok = mg->migrations_ok;
	out->migrations_failed = mg->migrations_failed;
	out->nr_gpus = (uint32_t)mg->nr_gpus;
	out->nr_vms = (uint32_t)mg->nr_vms;
	pthread_mutex_unlock(&mg->lock);
	out->libvirt_connected = mg->lv && mg_libvirt_connected(mg->lv);
	out->last_event_id = mg_events_last_id(mg);
	return 0;
}

int mg_get_knobs(struct mg *mg, struct mg_knobs *out)
{
	if (!mg || !out)
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	*out = mg->knobs;
	pthread_mutex_unlock(&mg->lock);
	return 0;
}

int mg_get_lrc(struct mg *mg, struct mg_lrc *out)
{
	int ret = 0;

	if (!mg || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&mg->lock);
	if (mg->lrc_valid && mg_mono_ms() - mg->lrc_ms < MG_STATS_FRESH_MS) {
		*out = mg->lrc;
	} else if (mg->be.ops->get_lrc) {
		ret = mg->be.ops->get_lrc(mg->be.priv, out);
		mg->lrc_valid = !ret;
		if (!ret) {
			mg->lrc = *out;
			mg->lrc_ms = mg_mono_ms();
		}
	}
	pthread_mutex_unlock(&mg->lock);
	if (ret)
		memset(out, 0, sizeof(*out));
	return ret;
}

struct mg_backend *mg_get_backend(struct mg *mg)
{
	return &mg->be;
}

const struct mg_config *mg_get_config(struct mg *mg)
{
	return mg->cfg;
}

void mg_set_libvirt(struct mg *mg, struct mg_libvirt *lv)
{
	pthread_mutex_lock(&mg->lock);
	mg->lv = lv;
	pthread_mutex_unlock(&mg->lock);
}
