// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * VMs as libvirt and the config file define them (mgmtd.h): defined,
 * started (placed on a GPU, admitted, started on the backend), stopped,
 * forgotten, their metadata changed live, their definition errors
 * reported. Locking as in model.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "log.h"

/* ---- VMs from libvirt and the config --------------------------------- */

static struct mg_vm *vm_new_locked(struct mg *mg, const char *id,
				   const char *name, enum mg_vm_source src)
{
	const struct mg_state_policy *sp;
	struct mg_vm **nv, *vm;

	if (mg->nr_vms == mg->cap_vms) {
		size_t cap = mg->cap_vms ? mg->cap_vms * 2 : 16;

		nv = realloc(mg->vms, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		mg->vms = nv;
		mg->cap_vms = cap;
	}
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	snprintf(vm->info.id, sizeof(vm->info.id), "%s", id);
	snprintf(vm->info.name, sizeof(vm->info.name), "%s", name ? name : "");
	vm->info.gpu = -1;
	vm->info.source = src;
	/* A libvirt domain claims its mdev before the model is told of it. */
	if (mg_state_get_owner(mg->state, id, vm->info.domain_uuid))
		vm->info.domain_uuid[0] = 0;
	sp = mg_stored_find(mg, id);
	if (sp) {
		vm->op = sp->p;
		vm->op_mask = sp->mask;
		vm->info.operator_policy = true;
	}
	mg->vms[mg->nr_vms++] = vm;
	mg_view_changed_locked(mg);
	return vm;
}

static void vm_free_locked(struct mg *mg, struct mg_vm *vm)
{
	size_t i;

	for (i = 0; i < mg->nr_vms; i++) {
		if (mg->vms[i] == vm) {
			mg->vms[i] = mg->vms[--mg->nr_vms];
			break;
		}
	}
	mg_view_changed_locked(mg);
	free(vm->shares);
	free(vm);
}

/*
 * The effective policy a definition would give vm (existing or not yet):
 * validated; -EINVAL with why otherwise.
 */
static int definition_policy_locked(struct mg *mg, const char *id,
				    const char *name, int gpu,
				    const struct mg_vm_policy *meta,
				    unsigned int meta_mask,
				    const struct mg_pol_text *txt,
				    struct mg_vm_policy *np, char *why,
				    size_t whylen)
{
	const struct mg_state_policy *sp = mg_stored_find(mg, id);
	unsigned int op_mask = sp ? sp->mask : 0;
	struct mg_vm_policy none;
	struct mg_pol_text t;
	/* Only a domain's definition comes with its strings (libvirt.c). */
	struct mg_pol_who who = {
		.name = name && name[0] ? name : id,
		.domain = txt != NULL,
		.set = meta_mask | op_mask,
	};

	memset(&none, 0, sizeof(none));
	if (!((meta_mask | op_mask) & MG_POL_QUOTA)) {
		mg_why_set(why, whylen, "no quota given");
		return -EINVAL;
	}
	/* The domain's strings, where the operator's policy does not override them. */
	if (txt) {
		t = *txt;
		t.written &= ~op_mask;
		who.txt = &t;
	}
	mg_effective(meta, meta_mask, sp ? &sp->p : &none, op_mask, np);
	return mg_validate_policy_locked(mg, gpu, np, &who, why, whylen);
}

int mg_vm_define(struct mg *mg, const char *id, const char *name,
		 const struct mg_vm_policy *meta, unsigned int meta_mask,
		 enum mg_vm_source src, char *why, size_t whylen)
{
	return mg_vm_define_text(mg, id, name, meta, meta_mask, NULL, src, why,
				 whylen);
}

int mg_vm_define_text(struct mg *mg, const char *id, const char *name,
		      const struct mg_vm_policy *meta, unsigned int meta_mask,
		      const struct mg_pol_text *txt, enum mg_vm_source src,
		      char *why, size_t whylen)
{
	struct mg_vm_policy np;
	struct mg_vm *vm;
	int ret;

	if (!mg_uuid_valid(id) || (meta_mask & ~(unsigned int)MG_POL_ALL)) {
		mg_why_set(why, whylen, "bad VM id '%s'", id ? id : "");
		return -EINVAL;
	}
	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (vm && vm->info.running) {
		/* the running definition stays; metadata changes go live */
		pthread_mutex_unlock(&mg->lock);
		return 0;
	}
	ret = definition_policy_locked(mg, id, name, vm ? vm->info.gpu : -1,
				       meta, meta_mask, txt, &np, why, whylen);
	if (ret)
		goto out_unlock;
	if (!vm) {
		vm = vm_new_locked(mg, id, name, src);
		if (!vm) {
			ret = -ENOMEM;
			goto out_unlock;
		}
	}
	snprintf(vm->info.name, sizeof(vm->info.name), "%s", name ? name : "");
	vm->meta = *meta;
	vm->meta_mask = meta_mask;
	vm->info.policy = np;
	vm->info.source = src;
	vm->info.error[0] = 0;
	mg_view_changed_locked(mg);
out_unlock:
	pthread_mutex_unlock(&mg->lock);
	return ret;
}

/* The GPU with the smallest sum of running quotas that admits p. */
static int place_locked(struct mg *mg, struct mg_vm *vm,
			const struct mg_vm_policy *p, char *why, size_t whylen)
{
	uint64_t best_sum = UINT64_MAX;
	int best = -1;
	size_t i, j;

	for (i = 0; i < mg->nr_gpus; i++) {
		uint64_t sum = 0;

		if (mg_admit_locked(mg, vm, (int)i, p, mg->knobs.oversub_pct, why,
				 whylen))
			continue;
		for (j = 0; j < mg->nr_vms; j++)
			if (mg->vms[j]->info.running &&
			    mg->vms[j]->info.gpu == (int)i)
				sum += mg->vms[j]->info.policy.quota;
		if (sum < best_sum) {
			best_sum = sum;
			best = (int)i;
		}
	}
	return best;
}

int mg_vm_start(struct mg *mg, const char *id, const char *name,
		const struct mg_vm_policy *meta, unsigned int meta_mask,
		int gpu, enum mg_vm_source src, char *why, size_t whylen)
{
	return mg_vm_start_text(mg, id, name, meta, meta_mask, NULL, gpu, src,
				why, whylen);
}

int mg_vm_start_text(struct mg *mg, const char *id, const char *name,
		     const struct mg_vm_policy *meta, unsigned int meta_mask,
		     const struct mg_pol_text *txt, int gpu,
		     enum mg_vm_source src, char *why, size_t whylen)
{
	char whybuf[MG_WHY_LEN] = "", ename[2 * MG_NAME_LEN], ewhy[2 * MG_WHY_LEN];
	struct mg_vm_policy np;
	struct mg_vm *vm;
	bool created = false;
	int ret;

	if (!mg_uuid_valid(id) || (meta_mask & ~(unsigned int)MG_POL_ALL))
		return -EINVAL;
	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (vm && vm->info.running) {
		ret = -EEXIST;
		goto out_unlock;
	}
	ret = definition_policy_locked(mg, id, name, gpu, meta, meta_mask, txt,
				       &np, whybuf, sizeof(whybuf));
	if (ret)
		goto out_error;
	if (!vm) {
		vm = vm_new_locked(mg, id, name, src);
		if (!vm) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		created = true;
	}
	if (gpu >= 0) {
		if ((size_t)gpu >= mg->nr_gpus) {
			mg_why_set(whybuf, sizeof(whybuf), "no GPU %d", gpu);
			ret = -EINVAL;
			goto out_error_forget;
		}
		ret = mg_admit_locked(mg, vm, gpu, &np, mg->knobs.oversub_pct,
				   whybuf, sizeof(whybuf));
		if (ret)
			goto out_error_forget;
	} else {
		gpu = place_locked(mg, vm, &np, whybuf, sizeof(whybuf));
		if (gpu < 0) {
			ret = -ENOSPC;
			goto out_error_forget;
		}
	}
	ret = mg->be.ops->vm_start(mg->be.priv, id, name, np.quota, &gpu);
	if (ret) {
		mg_why_set(whybuf, sizeof(whybuf), "backend could not start the vGPU: %s",
			strerror(-ret));
		goto out_error_forget;
	}
	snprintf(vm->info.name, sizeof(vm->info.name), "%s", name ? name : "");
	vm->meta = *meta;
	vm->meta_mask = meta_mask;
	vm->info.policy = np;
	vm->info.gpu = gpu;
	vm->info.running = true;
	vm->info.lost = false;
	vm->refound_refused = false;
	vm->info.source = src;
	vm->info.started_ms = mg_now_ms();
	vm->info.error[0] = 0;
	vm->applied = false;
	mg_view_changed_locked(mg);
	memset(&vm->info.stats, 0, sizeof(vm->info.stats));
	vm->info.cache_private = 0;
	mg_thrash_reset(&vm->thrash);
	vm->last_faults = 0;
	vm->last_moves = 0;
	mg_json_escape(ename, sizeof(ename), vm->info.name);
	mg_emit_locked(mg, "lifecycle", id,
		       "{\"state\":\"started\",\"name\":\"%s\",\"gpu\":%d,\"quota\":%llu}",
		       ename, gpu, (unsigned long long)np.quota);
	mg_info("vm %s (%s): started on GPU %d, quota %llu", id, vm->info.name,
		gpu, (unsigned long long)np.quota);
	/* shares known from its definition; a refusal is reported there */
	mg_shares_push_locked(mg, vm);
	mg_refresh_stats_locked(mg);
	mg_recompute_locked(mg);
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return 0;

out_error_forget:
	if (created) {
		vm_free_locked(mg, vm);
		vm = NULL;
	}
out_error:
	mg_json_escape(ewhy, sizeof(ewhy), whybuf);
	mg_json_escape(ename, sizeof(ename), name ? name : "");
	mg_emit_locked(mg, "error", id,
		       "{\"op\":\"start\",\"name\":\"%s\",\"reason\":\"%s\"}",
		       ename, ewhy);
	mg_err("vm %s (%s): not started: %s", id, name ? name : "", whybuf);
	if (vm)
		mg_strlcpy(vm->info.error, whybuf, sizeof(vm->info.error));
	mg_view_changed_locked(mg);
	mg_why_set(why, whylen, "%s", whybuf);
out_unlock:
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}

int mg_vm_stop(struct mg *mg, const char *id)
{
	struct mg_vm *vm;
	int ret = 0;

	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (vm && vm->info.lost) {
		/* its vGPU went first; now the domain stopped too */
		vm->info.lost = false;
		vm->refound_refused = false;
		vm->info.error[0] = 0;
		mg_view_changed_locked(mg);
		mg_emit_locked(mg, "lifecycle", vm->info.id,
			       "{\"state\":\"stopped\"}");
		mg_info("vm %s (%s): stopped (its vGPU was lost)", vm->info.id,
			vm->info.name);
		goto out_unlock;
	}
	if (!vm || !vm->info.running) {
		ret = vm ? 0 : -ENOENT;
		goto out_unlock;
	}
	/* Last counters for the record, then release the vGPU. */
	mg->be.ops->vm_stats(mg->be.priv, vm->info.id, &vm->info.stats);
	mg->be.ops->vm_stop(mg->be.priv, vm->info.id);
	vm->info.running = false;
	vm->info.cache_private = 0;	/* its replicas went with its vGPU */
	vm->info.entitlement = 0;
	vm->info.guaranteed = 0;
	vm->info.advisory = false;
	vm->info.advisory_since_ms = 0;
	vm->applied = false;
	mg_thrash_reset(&vm->thrash);
	mg_view_changed_locked(mg);
	mg_emit_locked(mg, "lifecycle", vm->info.id, "{\"state\":\"stopped\"}");
	mg_info("vm %s (%s): stopped", vm->info.id, vm->info.name);
	mg_refresh_stats_locked(mg);
	mg_recompute_locked(mg);
out_unlock:
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}

int mg_vm_forget(struct mg *mg, const char *id)
{
	struct mg_vm *vm;
	int ret = 0;

	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (!vm)
		ret = -ENOENT;
	else if (vm->info.running)
		ret = -EBUSY;
	else
		vm_free_locked(mg, vm);
	pthread_mutex_unlock(&mg->lock);
	return ret;
}

int mg_vm_set_meta(struct mg *mg, const char *id,
		   const struct mg_vm_policy *meta, unsigned int meta_mask,
		   int gpu, char *why, size_t whylen)
{
	return mg_vm_set_meta_text(mg, id, meta, meta_mask, NULL, gpu, why,
				   whylen);
}

int mg_vm_set_meta_text(struct mg *mg, const char *id,
			const struct mg_vm_policy *meta, unsigned int meta_mask,
			const struct mg_pol_text *txt, int gpu, char *why,
			size_t whylen)
{
	char whybuf[MG_WHY_LEN] = "", ewhy[2 * MG_WHY_LEN], pj[400];
	char words[300], ename[2 * MG_NAME_LEN];
	struct mg_vm_policy np, old;
	struct mg_pol_text t;
	struct mg_pol_who who = { .domain = txt != NULL };
	struct mg_vm *vm;
	int ret;

	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (!vm) {
		pthread_mutex_unlock(&mg->lock);
		return -ENOENT;
	}
	if (!((meta_mask | vm->op_mask) & MG_POL_QUOTA)) {
		mg_why_set(whybuf, sizeof(whybuf), "no quota given");
		ret = -EINVAL;
		goto out_error;
	}
	if (gpu >= 0 && (size_t)gpu >= mg->nr_gpus) {
		mg_why_set(whybuf, sizeof(whybuf), "gpu %d: no such GPU (%zu)",
			   gpu, mg->nr_gpus);
		ret = -EINVAL;
		goto out_error;
	}
	/*
	 * A vGPU cannot move: an mdev is a child of its GPU's device
	 * (netlink) and an embedded guest's memory lives in its GPU's
	 * simulator. A running VM keeps its GPU; the domain's new placement
	 * counts from its next start.
	 */
	if (gpu >= 0 && vm->info.running && gpu != vm->info.gpu) {
		mg_why_set(whybuf, sizeof(whybuf),
			   "gpu %d: a running VM cannot move from GPU %d; the change applies when the domain next starts",
			   gpu, vm->info.gpu);
		ret = -EBUSY;
		goto out_error;
	}
	mg_effective(meta, meta_mask, &vm->op, vm->op_mask, &np);
	who.name = mg_vm_name(vm);
	who.set = meta_mask | vm->op_mask;
	if (txt) {
		/* The operator's fields override the domain's strings. */
		t = *txt;
		t.written &= ~vm->op_mask;
		who.txt = &t;
	}
	ret = mg_validate_policy_locked(mg, gpu >= 0 ? gpu : vm->info.gpu,
					&np, &who, whybuf, sizeof(whybuf));
	if (!ret && vm->info.running)
		ret = mg_admit_locked(mg, vm, vm->info.gpu, &np,
				   mg->knobs.oversub_pct, whybuf,
				   sizeof(whybuf));
	if (!ret)
		ret = mg_apply_policy_locked(mg, vm, &np, whybuf, sizeof(whybuf));
	if (ret)
		goto out_error;
	old = vm->info.policy;
	vm->meta = *meta;
	vm->meta_mask = meta_mask;
	/* where a stopped VM will start (a lost one's vGPU decides) */
	if (gpu >= 0 && !vm->info.running && !vm->info.lost)
		vm->info.gpu = gpu;
	vm->info.policy = np;
	vm->info.error[0] = 0;
	mg_view_changed_locked(mg);
	/*
	 * The domain restates its whole <gpu> element each time: what moved
	 * is the change, not what it wrote. The change is the domain's
	 * whichever thread saw it, so "by" names the domain, not mg_actor().
	 */
	mg_policy_change_json(pj, sizeof(pj), words, sizeof(words), &old, &np,
			      0);
	mg_json_escape(ename, sizeof(ename), mg_vm_name(vm));
	mg_emit_locked(mg, "policy", vm->info.id,
		       "{\"source\":\"metadata\",\"name\":\"%s\",\"gpu\":%d,%s,\"by\":\"libvirt domain %s\"}",
		       ename, gpu, pj, ename);
	mg_info("vm %s: metadata policy by libvirt domain %s, gpu %d: %s",
		vm->info.id, mg_vm_name(vm), gpu, words);
	if (vm->info.running) {
		mg_refresh_stats_locked(mg);
		mg_recompute_locked(mg);
	}
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return 0;

out_error:
	mg_json_escape(ewhy, sizeof(ewhy), whybuf);
	mg_emit_locked(mg, "error", vm->info.id,
		       "{\"op\":\"metadata\",\"reason\":\"%s\"}", ewhy);
	mg_err("vm %s: metadata change refused: %s", vm->info.id, whybuf);
	mg_strlcpy(vm->info.error, whybuf, sizeof(vm->info.error));
	mg_view_changed_locked(mg);
	mg_why_set(why, whylen, "%s", whybuf);
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}

/* The state has its own lock; mg->state does not change while mg lives. */
int mg_vm_owner_set(struct mg *mg, const char *id, const char *domain)
{
	struct mg_vm *vm;
	int ret;

	pthread_mutex_lock(&mg->lock);
	ret = mg_state_put_owner(mg->state, id, domain);
	vm = mg_find_locked(mg, id);
	if (vm && strcmp(vm->info.domain_uuid, domain ? domain : "")) {
		snprintf(vm->info.domain_uuid, sizeof(vm->info.domain_uuid),
			 "%s", domain ? domain : "");
		mg_view_changed_locked(mg);
	}
	pthread_mutex_unlock(&mg->lock);
	if (ret)
		mg_err("vm %s: cannot record its owner %s: %s", id,
		       domain ? domain : "(none)", strerror(-ret));
	return ret;
}

int mg_vm_owner_get(struct mg *mg, const char *id, char domain[MG_ID_LEN])
{
	return mg_state_get_owner(mg->state, id, domain);
}

void mg_vm_note_error(struct mg *mg, const char *id, const char *msg)
{
	struct mg_vm *vm;

	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (vm && strcmp(vm->info.error, msg)) {
		mg_strlcpy(vm->info.error, msg, sizeof(vm->info.error));
		mg_view_changed_locked(mg);
	}
	pthread_mutex_unlock(&mg->lock);
}

void mg_vm_report_error(struct mg *mg, const char *id, const char *name,
			const char *msg)
{
	char emsg[2 * MG_WHY_LEN], ename[2 * MG_NAME_LEN];
	struct mg_vm *vm;

	mg_json_escape(emsg, sizeof(emsg), msg);
	mg_json_escape(ename, sizeof(ename), name ? name : "");
	pthread_mutex_lock(&mg->lock);
	vm = id ? mg_find_locked(mg, id) : NULL;
	if (vm) {
		mg_strlcpy(vm->info.error, msg, sizeof(vm->info.error));
		mg_view_changed_locked(mg);
	}
	mg_emit_locked(mg, "error", id && mg_uuid_valid(id) ? id : "",
		       "{\"op\":\"metadata\",\"name\":\"%s\",\"reason\":\"%s\"}",
		       ename, emsg);
	pthread_mutex_unlock(&mg->lock);
	mg_err("domain %s%s%s: %s", name ? name : "", id ? " " : "",
	       id ? id : "", msg);
	mg_events_flush(mg);
}


/* ---- started VMs whose vGPU goes or comes back ------------------------ */

/*
 * A started VM's vGPU is no longer on the backend: its mdev was removed
 * (sysfs, mdevctl) or its GPU unregistered. The domain may still run, so
 * the VM is not stopped: it is lost, holds no entitlement, and says why.
 */
static void vm_lost_locked(struct mg *mg, struct mg_vm *vm)
{
	int gpu = vm->info.gpu;

	/* The backend forgets it too, so that a new start is not -EEXIST. */
	mg->be.ops->vm_stop(mg->be.priv, vm->info.id);
	vm->info.running = false;
	vm->info.lost = true;
	vm->info.cache_private = 0;
	vm->info.entitlement = 0;
	vm->info.guaranteed = 0;
	vm->info.stats.entitlement = 0;
	vm->info.advisory = false;
	vm->info.advisory_since_ms = 0;
	vm->applied = false;
	vm->refound_refused = false;
	mg_thrash_reset(&vm->thrash);
	mg_why_set(vm->info.error, sizeof(vm->info.error),
		   "vGPU lost: mdev %s is gone from GPU %d", vm->info.id, gpu);
	mg_view_changed_locked(mg);
	mg_emit_locked(mg, "lifecycle", vm->info.id,
		       "{\"state\":\"lost\",\"gpu\":%d,\"reason\":\"vGPU (mdev) gone from the backend\"}",
		       gpu);
	mg_err("vm %s (%s): its vGPU is gone from GPU %d; lost until the mdev is back",
	       vm->info.id, vm->info.name, gpu);
}

/*
 * A lost VM's vGPU is back (on whichever GPU it now lives): admitted
 * there with its policy and started on the backend again, as a start
 * would. A refusal is retried at every refresh (room may appear) but
 * reported once per return of the mdev. True if the VM runs again.
 */
static bool vm_found_locked(struct mg *mg, struct mg_vm *vm,
			    const struct mg_backend_vm *b)
{
	char why[MG_WHY_LEN] = "", ewhy[2 * MG_WHY_LEN];
	int gpu = b->gpu, ret;

	if (gpu < 0 || (size_t)gpu >= mg->nr_gpus) {
		mg_why_set(why, sizeof(why), "vGPU back on unknown GPU %d", gpu);
		ret = -EINVAL;
	} else {
		ret = mg_admit_locked(mg, vm, gpu, &vm->info.policy,
				      mg->knobs.oversub_pct, why, sizeof(why));
	}
	if (!ret) {
		ret = mg->be.ops->vm_start(mg->be.priv, vm->info.id,
					   vm->info.name, vm->info.policy.quota,
					   &gpu);
		if (ret)
			mg_why_set(why, sizeof(why),
				   "backend could not take the vGPU back: %s",
				   strerror(-ret));
	}
	if (ret) {
		if (vm->refound_refused)
			return false;
		vm->refound_refused = true;
		mg_why_set(vm->info.error, sizeof(vm->info.error),
			   "vGPU back but not resumed: %s", why);
		mg_view_changed_locked(mg);
		mg_json_escape(ewhy, sizeof(ewhy), why);
		mg_emit_locked(mg, "error", vm->info.id,
			       "{\"op\":\"resume\",\"reason\":\"%s\"}", ewhy);
		mg_err("vm %s (%s): vGPU back, not resumed: %s", vm->info.id,
		       vm->info.name, why);
		return false;
	}
	vm->info.gpu = gpu;
	vm->info.running = true;
	vm->info.lost = false;
	vm->info.error[0] = 0;
	/* counters as they are after the start (which set the quota) */
	if (mg->be.ops->vm_stats(mg->be.priv, vm->info.id, &vm->info.stats))
		vm->info.stats = b->stats;
	vm->info.cache_private = b->cache_private;
	vm->applied = false;
	vm->last_faults = b->stats.faults;
	vm->last_moves = b->stats.reloc_out_chunks + b->stats.reloc_in_chunks;
	mg_thrash_reset(&vm->thrash);
	mg_view_changed_locked(mg);
	mg_emit_locked(mg, "lifecycle", vm->info.id,
		       "{\"state\":\"running\",\"gpu\":%d,\"reason\":\"vGPU (mdev) back\"}",
		       gpu);
	mg_info("vm %s (%s): vGPU back on GPU %d, running again", vm->info.id,
		vm->info.name, gpu);
	mg_shares_push_locked(mg, vm);
	return true;
}

static const struct mg_backend_vm *bv_find(const struct mg_backend_vm *bv,
					   size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(bv[i].id, id))
			return &bv[i];
	return NULL;
}

bool mg_track_vgpus_locked(struct mg *mg, const struct mg_backend_vm *bv,
			   size_t n)
{
	bool changed = false;
	size_t i;

	for (i = 0; i < mg->nr_vms; i++) {
		struct mg_vm *vm = mg->vms[i];
		const struct mg_backend_vm *b;

		/* adoption follows its own VMs (mg_adopt_backend_vms()) */
		if (vm->info.source == MG_SRC_BACKEND ||
		    (!vm->info.running && !vm->info.lost))
			continue;
		b = bv_find(bv, n, vm->info.id);
		if (vm->info.running && (!b || b->gpu != vm->info.gpu)) {
			/* gone, or re-created on another GPU in between */
			vm_lost_locked(mg, vm);
			changed = true;
			if (b)
				vm_found_locked(mg, vm, b);
		} else if (vm->info.lost && b) {
			changed |= vm_found_locked(mg, vm, b);
		} else if (vm->info.lost) {
			/* gone again: its next return is tried afresh */
			vm->refound_refused = false;
		}
	}
	return changed;
}

/* ---- vGPUs found on the backend (adopt_mdevs) ------------------------ */

struct adoptee {
	char id[MG_ID_LEN];
	int gpu;
	uint64_t quota;
};

static bool model_has_id_locked(struct mg *mg, const char *id)
{
	size_t i;

	for (i = 0; i < mg->nr_vms; i++)
		if (!strcmp(mg->vms[i]->info.id, id))
			return true;
	return false;
}

int mg_adopt_backend_vms(struct mg *mg)
{
	struct mg_backend_vm *bv = NULL;
	struct adoptee *add = NULL;
	char (*gone)[MG_ID_LEN] = NULL;
	size_t n = 0, nr_add = 0, nr_gone = 0, i;
	char why[MG_WHY_LEN];
	int ret;

	if (!mg->cfg->adopt_mdevs)
		return 0;
	pthread_mutex_lock(&mg->lock);
	ret = mg->be.ops->list_vms(mg->be.priv, &bv, &n);
	if (ret)
		goto out_unlock;
	add = calloc(n + 1, sizeof(*add));
	gone = calloc(mg->nr_vms + 1, sizeof(*gone));
	if (!add || !gone) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	for (i = 0; i < n; i++) {
		if (!mg_uuid_valid(bv[i].id) || model_has_id_locked(mg, bv[i].id))
			continue;
		memcpy(add[nr_add].id, bv[i].id, MG_ID_LEN);
		add[nr_add].gpu = bv[i].gpu;
		add[nr_add].quota = bv[i].stats.quota;
		nr_add++;
	}
	/* Only what adoption brought in goes with its vGPU. */
	for (i = 0; i < mg->nr_vms; i++)
		if (mg->vms[i]->info.source == MG_SRC_BACKEND &&
		    !bv_find(bv, n, mg->vms[i]->info.id))
			memcpy(gone[nr_gone++], mg->vms[i]->info.id, MG_ID_LEN);
out_unlock:
	pthread_mutex_unlock(&mg->lock);

	for (i = 0; i < nr_gone; i++) {
		mg_vm_stop(mg, gone[i]);
		if (!mg_vm_forget(mg, gone[i]))
			mg_info("vm %s: its vGPU is gone, forgotten", gone[i]);
	}
	for (i = 0; i < nr_add; i++) {
		struct mg_vm_policy meta;

		memset(&meta, 0, sizeof(meta));
		meta.quota = add[i].quota;
		why[0] = 0;
		/*
		 * Defined first, so a VM that cannot start (admission) keeps
		 * its record with the reason, and is not retried every tick.
		 */
		if (mg_vm_define(mg, add[i].id, "", &meta, MG_POL_QUOTA,
				 MG_SRC_BACKEND, why, sizeof(why))) {
			mg_vm_report_error(mg, add[i].id, "", why);
			continue;
		}
		mg_info("vm %s: vGPU found on GPU %d, quota %llu: adopting",
			add[i].id, add[i].gpu, (unsigned long long)add[i].quota);
		mg_vm_start(mg, add[i].id, "", &meta, MG_POL_QUOTA, add[i].gpu,
			    MG_SRC_BACKEND, why, sizeof(why));
	}
	free(gone);
	free(add);
	free(bv);
	return ret;
}
