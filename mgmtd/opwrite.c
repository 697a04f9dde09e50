// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Operator writes to mgmtd's model (mgmtd.h): a VM's policy replaced,
 * patched or forgotten, and the global knobs, each validated, admitted,
 * made durable in the state database, applied to the backend and told as
 * an audit event (who, what changed, old and new values) in one step
 * under mg->lock. Locking as in model.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "log.h"

/* ---- operator writes -------------------------------------------------- */

static int policy_valid_mask(unsigned int mask)
{
	return mask && !(mask & ~(unsigned int)MG_POL_ALL);
}

/*
 * Applies a new effective policy to vm (validated and admitted already):
 * quota to the backend first, since that is the step that may fail.
 */
int mg_apply_policy_locked(struct mg *mg, struct mg_vm *vm,
			       const struct mg_vm_policy *np, char *why,
			       size_t whylen)
{
	int ret;

	if (vm->info.running && np->quota != vm->info.policy.quota) {
		ret = mg->be.ops->set_quota(mg->be.priv, vm->info.id, np->quota);
		if (ret == -EBUSY) {
			mg_why_set(why, whylen,
				"quota %llu is below what the VM holds now (%llu bytes)",
				(unsigned long long)np->quota,
				(unsigned long long)vm->info.stats.allocated);
			return ret;
		}
		if (ret) {
			mg_why_set(why, whylen, "backend refused quota %llu (%s)",
				(unsigned long long)np->quota, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static const struct {
	unsigned int bit;
	const char *name;
} pol_fields[] = {
	{ MG_POL_QUOTA, "quota" }, { MG_POL_MIN, "min" }, { MG_POL_LOW, "low" },
	{ MG_POL_MAX, "max" }, { MG_POL_WEIGHT, "weight" },
	{ MG_POL_PRIORITY, "priority" },
};

static unsigned long long pol_field(const struct mg_vm_policy *p,
				    unsigned int bit)
{
	switch (bit) {
	case MG_POL_QUOTA: return p->quota;
	case MG_POL_MIN: return p->min;
	case MG_POL_LOW: return p->low;
	case MG_POL_MAX: return p->max;
	case MG_POL_WEIGHT: return p->weight;
	default: return p->priority;
	}
}

/* Appends with snprintf semantics; *off may pass len (then nothing more). */
static void app(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void app(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	*off += n > 0 ? (size_t)n : 0;
}

/* One field of a change: its name, whether it changed, old and new as JSON. */
struct chg {
	const char *name;
	bool changed;
	char v[2][32];
};

/*
 * The audit members of a change event, "changed":[names],"old":{...},
 * "new":{...} with the changed fields only, into buf; the same in words
 * ("min 1 -> 2, max 3 -> 4", or "no WHAT changed") into text. Shared by
 * the policy and the knob events so both read alike.
 */
static void change_json(char *buf, size_t len, char *text, size_t textlen,
			const struct chg *c, size_t n, const char *what)
{
	static const char *const sname[2] = { "old", "new" };
	size_t i, k, off = 0, toff = 0;
	bool first = true;

	if (len)
		buf[0] = 0;
	if (textlen)
		text[0] = 0;
	app(buf, len, &off, "\"changed\":[");
	for (i = 0; i < n; i++) {
		if (!c[i].changed)
			continue;
		app(buf, len, &off, "%s\"%s\"", first ? "" : ",", c[i].name);
		app(text, textlen, &toff, "%s%s %s -> %s", first ? "" : ", ",
		    c[i].name, c[i].v[0], c[i].v[1]);
		first = false;
	}
	if (first)
		app(text, textlen, &toff, "no %s changed", what);
	app(buf, len, &off, "]");
	for (k = 0; k < 2; k++) {
		app(buf, len, &off, ",\"%s\":{", sname[k]);
		first = true;
		for (i = 0; i < n; i++) {
			if (!c[i].changed)
				continue;
			app(buf, len, &off, "%s\"%s\":%s", first ? "" : ",",
			    c[i].name, c[i].v[k]);
			first = false;
		}
		app(buf, len, &off, "}");
	}
}

void mg_policy_change_json(char *buf, size_t len, char *text, size_t textlen,
			   const struct mg_vm_policy *old,
			   const struct mg_vm_policy *np, unsigned int written)
{
	struct chg c[sizeof(pol_fields) / sizeof(pol_fields[0])];
	size_t i;

	for (i = 0; i < sizeof(pol_fields) / sizeof(pol_fields[0]); i++) {
		unsigned long long o = pol_field(old, pol_fields[i].bit);
		unsigned long long v = pol_field(np, pol_fields[i].bit);

		c[i].name = pol_fields[i].name;
		/* Also the fields that moved unwritten (max follows quota). */
		c[i].changed = (written & pol_fields[i].bit) || o != v;
		snprintf(c[i].v[0], sizeof(c[i].v[0]), "%llu", o);
		snprintf(c[i].v[1], sizeof(c[i].v[1]), "%llu", v);
	}
	change_json(buf, len, text, textlen, c, i, "field");
}

int mg_set_vm_policy(struct mg *mg, const char *id,
		     const struct mg_vm_policy *p, unsigned int mask,
		     char *why, size_t whylen)
{
	return mg_set_vm_policy_text(mg, id, p, mask, NULL, why, whylen);
}

/*
 * An operator's policy for vm: nop over nmask (none for a reset), checked
 * (validation, admission, the backend), stored before it is acknowledged,
 * then announced. written is what the request wrote (the event lists those
 * fields and the ones that moved with them). mg->lock held.
 */
static int op_commit_locked(struct mg *mg, struct mg_vm *vm,
			    const struct mg_vm_policy *nop, unsigned int nmask,
			    const struct mg_pol_who *who, unsigned int written,
			    char *why, size_t whylen)
{
	char pj[400], words[300], ename[2 * MG_NAME_LEN], eby[2 * MG_BY_LEN];
	bool reset = !nmask;
	struct mg_vm_policy np, old;
	int ret;

	mg_effective(&vm->meta, vm->meta_mask, nop, nmask, &np);
	ret = mg_validate_policy_locked(mg, vm->info.gpu, &np, who, why,
					whylen);
	if (ret)
		return ret;
	if (vm->info.gpu >= 0) {
		ret = mg_admit_locked(mg, vm, vm->info.gpu, &np,
				   mg->knobs.oversub_pct, why, whylen);
		if (ret)
			return ret;
	}
	ret = mg_apply_policy_locked(mg, vm, &np, why, whylen);
	if (ret)
		return ret;
	/* Durable before acknowledged; undo the backend quota if not. */
	ret = mg_state_put_policy(mg->state, vm->info.id, nop, nmask);
	if (ret) {
		if (vm->info.running && np.quota != vm->info.policy.quota)
			mg->be.ops->set_quota(mg->be.priv, vm->info.id,
					      vm->info.policy.quota);
		mg_why_set(why, whylen, "state database write failed");
		return -EIO;
	}
	old = vm->info.policy;
	vm->op = *nop;
	vm->op_mask = nmask;
	vm->info.policy = np;
	vm->info.operator_policy = !reset;
	mg_view_changed_locked(mg);
	mg_stored_update_locked(mg, vm->info.id, nop, nmask);
	mg_policy_change_json(pj, sizeof(pj), words, sizeof(words), &old, &np,
			      written);
	mg_json_escape(ename, sizeof(ename), vm->info.name);
	mg_json_escape(eby, sizeof(eby), mg_actor());
	mg_emit_locked(mg, "policy", vm->info.id,
		       "{\"source\":\"operator\",%s\"name\":\"%s\",%s,\"by\":\"%s\"}",
		       reset ? "\"reset\":true," : "", ename, pj, eby);
	mg_info("vm %s (%s): operator policy %sby %s: %s", vm->info.id,
		vm->info.name[0] ? vm->info.name : "no name",
		reset ? "reset " : "", mg_actor(), words);
	if (vm->info.running) {
		mg_refresh_stats_locked(mg);
		mg_recompute_locked(mg);
	}
	return 0;
}

int mg_set_vm_policy_text(struct mg *mg, const char *id,
			  const struct mg_vm_policy *p, unsigned int mask,
			  const struct mg_pol_text *txt, char *why,
			  size_t whylen)
{
	struct mg_pol_who who = { .txt = txt };
	struct mg_vm_policy nop;
	unsigned int nmask;
	struct mg_vm *vm;
	int ret;

	if (why && whylen)
		why[0] = 0;
	if (!mg || !id || !p) {
		mg_why_set(why, whylen, "missing argument");
		return -EINVAL;
	}
	if (!policy_valid_mask(mask)) {
		mg_why_set(why, whylen, "no policy field given");
		return -EINVAL;
	}
	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (!vm) {
		mg_why_set(why, whylen, "no VM '%s'", id);
		ret = -ENOENT;
		goto out_unlock;
	}
	nop = vm->op;
	mg_apply_fields(&nop, p, mask);
	nmask = vm->op_mask | mask;
	who.name = mg_vm_name(vm);
	/*
	 * A PUT sets every field, the ones not written to what they derive
	 * from (low = min, max = quota, rj_parse_policy()): a conflict is
	 * then one between fields the body wrote.
	 */
	who.set = txt && mask == MG_POL_ALL ? txt->written :
		  vm->meta_mask | nmask;
	ret = op_commit_locked(mg, vm, &nop, nmask, &who, mask, why, whylen);
out_unlock:
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}

int mg_reset_vm_policy(struct mg *mg, const char *id, char *why,
		       size_t whylen)
{
	struct mg_pol_who who = { 0 };
	struct mg_vm_policy none;
	struct mg_vm *vm;
	int ret;

	if (why && whylen)
		why[0] = 0;
	if (!mg || !id)
		return -EINVAL;
	memset(&none, 0, sizeof(none));
	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (!vm) {
		mg_why_set(why, whylen, "no VM '%s'", id);
		ret = -ENOENT;
		goto out_unlock;
	}
	who.name = mg_vm_name(vm);
	who.set = vm->meta_mask;
	/* Only what moved: a reset writes no field. */
	ret = op_commit_locked(mg, vm, &none, 0, &who, 0, why, whylen);
out_unlock:
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}

int mg_knobs_validate(const struct mg_knobs *k, unsigned int mask, char *why,
		      size_t whylen)
{
	if (!mask || (mask & ~(unsigned int)MG_KNOB_ALL)) {
		mg_why_set(why, whylen, "no knob given");
		return -EINVAL;
	}
	if ((mask & MG_KNOB_POLICY) && strcmp(k->policy, "random") &&
	    strcmp(k->policy, "lra") && strcmp(k->policy, "cold")) {
		mg_why_set(why, whylen, "policy must be random, lra or cold");
		return -EINVAL;
	}
	if ((mask & MG_KNOB_RETURN_INTERVAL) &&
	    (k->return_interval_ms < VGMEM_RETURN_MS_MIN ||
	     k->return_interval_ms > VGMEM_RETURN_MS_MAX)) {
		mg_why_set(why, whylen, "return_interval_ms must be %u..%u",
			VGMEM_RETURN_MS_MIN, VGMEM_RETURN_MS_MAX);
		return -EINVAL;
	}
	if ((mask & MG_KNOB_OVERSUB) && (k->oversub_pct < VGP_OVERSUB_MIN ||
					 k->oversub_pct > VGP_OVERSUB_MAX)) {
		mg_why_set(why, whylen, "oversub_pct must be %u..%u",
			VGP_OVERSUB_MIN, VGP_OVERSUB_MAX);
		return -EINVAL;
	}
	if ((mask & MG_KNOB_THRASH_WINDOW) &&
	    (k->thrash_window_s < 1 || k->thrash_window_s > 86400)) {
		mg_why_set(why, whylen, "thrash_window_s must be 1..86400");
		return -EINVAL;
	}
	return 0;
}

static void apply_knob_fields(struct mg_knobs *dst, const struct mg_knobs *src,
			      unsigned int mask)
{
	if (mask & MG_KNOB_POLICY)
		snprintf(dst->policy, sizeof(dst->policy), "%s", src->policy);
	if (mask & MG_KNOB_RETURN_INTERVAL)
		dst->return_interval_ms = src->return_interval_ms;
	if (mask & MG_KNOB_OVERSUB)
		dst->oversub_pct = src->oversub_pct;
	if (mask & MG_KNOB_THRASH_WINDOW)
		dst->thrash_window_s = src->thrash_window_s;
}

static int knobs_to_backend_locked(struct mg *mg, const struct mg_knobs *k)
{
	size_t i;
	int ret;

	for (i = 0; i < mg->nr_gpus; i++) {
		ret = mg->be.ops->set_knobs(mg->be.priv, (int)i, k);
		if (ret)
			return ret;
	}
	return 0;
}

/* As mg_policy_change_json(), for the knobs (policy is a string). */
static void knobs_change_json(char *buf, size_t len, char *text,
			      size_t textlen, const struct mg_knobs *o,
			      const struct mg_knobs *n, unsigned int written)
{
	static const char *const names[] = { "policy", "return_interval_ms",
					     "oversub_pct", "thrash_window_s" };
	static const unsigned int bits[] = { MG_KNOB_POLICY,
		MG_KNOB_RETURN_INTERVAL, MG_KNOB_OVERSUB, MG_KNOB_THRASH_WINDOW };
	const struct mg_knobs *side[2] = { o, n };
	struct chg c[4];
	size_t i, k;

	for (k = 0; k < 2; k++) {
		/* policy is one of random|lra|cold (validated): no escaping */
		snprintf(c[0].v[k], sizeof(c[0].v[k]), "\"%s\"", side[k]->policy);
		snprintf(c[1].v[k], sizeof(c[1].v[k]), "%u",
			 side[k]->return_interval_ms);
		snprintf(c[2].v[k], sizeof(c[2].v[k]), "%u", side[k]->oversub_pct);
		snprintf(c[3].v[k], sizeof(c[3].v[k]), "%u",
			 side[k]->thrash_window_s);
	}
	for (i = 0; i < 4; i++) {
		c[i].name = names[i];
		c[i].changed = (written & bits[i]) || strcmp(c[i].v[0], c[i].v[1]);
	}
	change_json(buf, len, text, textlen, c, 4, "knob");
}

int mg_set_knobs(struct mg *mg, const struct mg_knobs *k, unsigned int mask,
		 char *why, size_t whylen)
{
	char kj[400], words[300], eby[2 * MG_BY_LEN];
	struct mg_knobs nk;
	size_t i;
	int ret;

	if (why && whylen)
		why[0] = 0;
	if (!mg || !k) {
		mg_why_set(why, whylen, "missing argument");
		return -EINVAL;
	}
	ret = mg_knobs_validate(k, mask, why, whylen);
	if (ret)
		return ret;
	pthread_mutex_lock(&mg->lock);
	nk = mg->knobs;
	apply_knob_fields(&nk, k, mask);
	/* A lower oversubscription limit must still admit every GPU's VMs. */
	if (nk.oversub_pct < mg->knobs.oversub_pct) {
		for (i = 0; i < mg->nr_gpus; i++) {
			ret = mg_admit_locked(mg, NULL, (int)i, NULL, nk.oversub_pct,
					   why, whylen);
			if (ret)
				goto out_unlock;
		}
	}
	ret = knobs_to_backend_locked(mg, &nk);
	if (ret) {
		knobs_to_backend_locked(mg, &mg->knobs);
		mg_why_set(why, whylen, "backend refused the knobs (%s)",
			strerror(-ret));
		goto out_unlock;
	}
	ret = mg_state_put_knobs(mg->state, &nk, mg->knobs_mask | mask);
	if (ret) {
		knobs_to_backend_locked(mg, &mg->knobs);
		mg_why_set(why, whylen, "state database write failed");
		ret = -EIO;
		goto out_unlock;
	}
	knobs_change_json(kj, sizeof(kj), words, sizeof(words), &mg->knobs,
			  &nk, mask);
	mg->knobs = nk;
	mg->knobs_mask |= mask;
	mg_view_changed_locked(mg);
	mg_json_escape(eby, sizeof(eby), mg_actor());
	mg_emit_locked(mg, "policy", "",
		       "{\"source\":\"operator\",\"knobs\":{\"policy\":\"%s\",\"return_interval_ms\":%u,\"oversub_pct\":%u,\"thrash_window_s\":%u},%s,\"by\":\"%s\"}",
		       nk.policy, nk.return_interval_ms, nk.oversub_pct,
		       nk.thrash_window_s, kj, eby);
	mg_info("knobs by %s: %s", mg_actor(), words);
	mg_refresh_stats_locked(mg);
	mg_recompute_locked(mg);
out_unlock:
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}
