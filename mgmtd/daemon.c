// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The model's lifetime and its timer: mg_create() opens the state, the
 * backend and the config-defined VMs; the timer thread refreshes the
 * counters, turns their changes into events, runs thrash detection and
 * recomputes entitlements from demand every recompute_ms.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_priv.h"
#include "log.h"

#define MG_PRUNE_EVERY_TICKS	600

void mg_stored_update_locked(struct mg *mg, const char *id,
			     const struct mg_vm_policy *p, unsigned int mask)
{
	struct mg_state_policy *ns;
	size_t i;

	for (i = 0; i < mg->nr_stored; i++)
		if (!strcmp(mg->stored[i].id, id))
			break;
	if (!mask) {
		if (i < mg->nr_stored)
			mg->stored[i] = mg->stored[--mg->nr_stored];
		return;
	}
	if (i == mg->nr_stored) {
		ns = realloc(mg->stored, (mg->nr_stored + 1) * sizeof(*ns));
		if (!ns)
			return;	/* the VM keeps it; only a restart re-reads */
		mg->stored = ns;
		mg->nr_stored++;
		memset(&mg->stored[i], 0, sizeof(mg->stored[i]));
		snprintf(mg->stored[i].id, sizeof(mg->stored[i].id), "%s", id);
	}
	mg->stored[i].p = *p;
	mg->stored[i].mask = mask;
}

/* A migration to ask libvirt for once the lock is dropped. */
struct migration {
	char id[MG_ID_LEN];
	char name[MG_NAME_LEN];
};

#define MIG_ERR_FMT \
	"{\"op\":\"migrate\",\"name\":\"%s\",\"migrate_to\":\"%s\",\"reason\":\"%s\"}"

/*
 * reason, JSON-escaped into out, cut (with "...", at a character
 * boundary) so that an event whose other fields take `fixed` bytes still
 * fits MG_EVENT_DETAIL_LEN: the log line has it whole, the event keeps
 * its start rather than being dropped as too long.
 */
static void fit_reason(char *out, size_t outlen, const char *reason, size_t fixed)
{
	char raw[400];
	size_t len, over;

	snprintf(raw, sizeof(raw), "%s", reason);
	for (;;) {
		mg_json_escape(out, outlen, raw);
		if (fixed + strlen(out) < MG_EVENT_DETAIL_LEN)
			return;
		len = strlen(raw);
		over = fixed + strlen(out) - MG_EVENT_DETAIL_LEN + 1 + 3;
		if (len <= over) {
			out[0] = 0;
			return;
		}
		len -= over;
		while (len && ((unsigned char)raw[len] & 0xc0) == 0x80)
			len--;
		memcpy(raw + len, "...", 4);
	}
}

void mg_migration_result(struct mg *mg, const char *id, const char *name,
			 const char *dest, int err, const char *reason)
{
	char edest[300], ename[2 * MG_NAME_LEN], ereason[400];

	pthread_mutex_lock(&mg->lock);
	if (err)
		mg->migrations_failed++;
	else
		mg->migrations_ok++;
	pthread_mutex_unlock(&mg->lock);
	mg_json_escape(edest, sizeof(edest), dest);
	mg_json_escape(ename, sizeof(ename), name);
	if (!err) {
		mg_info("vm %s (%s): live-migrated to %s", id, name, dest);
		mg_emit(mg, "advisory", id,
			"{\"state\":\"migrated\",\"name\":\"%s\",\"migrate_to\":\"%s\"}",
			ename, edest);
		return;
	}
	if (!reason || !*reason)
		reason = strerror(-err);
	mg_err("vm %s (%s): live migration to %s failed: %s; it keeps running here",
	       id, name, dest, reason);
	fit_reason(ereason, sizeof(ereason), reason,
		   strlen(MIG_ERR_FMT) - 3 * strlen("%s") + strlen(ename) + strlen(edest));
	mg_emit(mg, "error", id, MIG_ERR_FMT, ename, edest, ereason);
}

static void tick_vm_locked(struct mg *mg, struct mg_vm *vm, int64_t now,
			   struct migration *mig, size_t *nr_mig)
{
	const struct vgmem_vm_stats *st = &vm->info.stats;
	uint64_t moves = st->reloc_out_chunks + st->reloc_in_chunks;
	int64_t window = (int64_t)mg->knobs.thrash_window_s * 1000;
	int64_t grace;
	enum mg_thrash_verdict v;

	if (st->faults > vm->last_faults)
		mg_emit_locked(mg, "fault", vm->info.id,
			       "{\"faults\":%llu,\"new\":%llu}",
			       (unsigned long long)st->faults,
			       (unsigned long long)(st->faults - vm->last_faults));
	vm->last_faults = st->faults;
	if (moves > vm->last_moves)
		mg_emit_locked(mg, "relocation", vm->info.id,
			       "{\"out_chunks\":%llu,\"in_chunks\":%llu,\"bytes_out\":%llu,\"bytes_in\":%llu,\"resident\":%llu,\"relocated\":%llu}",
			       (unsigned long long)st->reloc_out_chunks,
			       (unsigned long long)st->reloc_in_chunks,
			       (unsigned long long)st->bytes_out,
			       (unsigned long long)st->bytes_in,
			       (unsigned long long)st->resident,
			       (unsigned long long)st->relocated);
	vm->last_moves = moves;

	/* Quiet ticks an episode survives: a few timer periods. */
	grace = 3 * (int64_t)mg->cfg->recompute_ms;
	if (grace > window / 2)
		grace = window / 2;
	v = mg_thrash_step(&vm->thrash, st, vm->info.entitlement, now, window,
			   grace);
	if (v == MG_THRASH_RAISE) {
		char dest[160] = "";

		vm->info.advisory = true;
		vm->info.advisory_since_ms = mg_now_ms();
		mg_view_changed_locked(mg);
		mg->advisories++;
		/*
		 * Only libvirt's VMs are domains: the name of a VM of the
		 * configuration or the backend names no domain to migrate.
		 */
		if (mg->cfg->migrate_uri && vm->info.source == MG_SRC_LIBVIRT &&
		    vm->info.name[0] && mg->lv && *nr_mig < 16) {
			snprintf(mig[*nr_mig].id, sizeof(mig[*nr_mig].id),
				 "%s", vm->info.id);
			snprintf(mig[*nr_mig].name, sizeof(mig[*nr_mig].name),
				 "%s", vm->info.name);
			(*nr_mig)++;
			mg_json_escape(dest, sizeof(dest), mg->cfg->migrate_uri);
		}
		mg_emit_locked(mg, "advisory", vm->info.id,
			       "{\"state\":\"raised\",\"action\":\"migrate\",\"window_s\":%u,\"entitlement\":%llu,\"allocated\":%llu,\"relocated\":%llu,\"migrate_to\":\"%s\"}",
			       mg->knobs.thrash_window_s,
			       (unsigned long long)vm->info.entitlement,
			       (unsigned long long)st->allocated,
			       (unsigned long long)st->relocated, dest);
		mg_warn("vm %s (%s): thrashing for %u s above its entitlement (%llu of %llu bytes relocated): migration advised%s%s",
			vm->info.id, vm->info.name, mg->knobs.thrash_window_s,
			(unsigned long long)st->relocated,
			(unsigned long long)st->allocated,
			dest[0] ? ", migrating to " : "", dest);
	} else if (v == MG_THRASH_CLEAR) {
		vm->info.advisory = false;
		vm->info.advisory_since_ms = 0;
		mg_view_changed_locked(mg);
		mg_emit_locked(mg, "advisory", vm->info.id,
			       "{\"state\":\"cleared\"}");
		mg_info("vm %s: no longer thrashing, advisory cleared",
			vm->info.id);
	}
}

static void backend_emit(void *priv, const char *type, const char *vm,
			 const char *detail)
{
	mg_emit_locked(priv, type, vm, "%s", detail);
}

/* One timer period; also called by tests for deterministic steps. */
void mg_tick(struct mg *mg, int64_t now_mono_ms)
{
	struct migration mig[16];
	size_t nr_mig = 0, i;
	struct mg_libvirt *lv;
	bool prune;

	if (mg_adopt_backend_vms(mg))
		mg_warn("backend vGPUs unavailable for adoption this tick");
	pthread_mutex_lock(&mg->lock);
	if (mg_refresh_stats_locked(mg))
		mg_warn("backend counters unavailable this tick");
	if (mg->be.ops->poll_events &&
	    mg->be.ops->poll_events(mg->be.priv, backend_emit, mg))
		mg_warn("backend events unavailable this tick");
	for (i = 0; i < mg->nr_vms; i++)
		if (mg->vms[i]->info.running)
			tick_vm_locked(mg, mg->vms[i], now_mono_ms, mig, &nr_mig);
	mg_recompute_locked(mg);
	prune = ++mg->ticks % MG_PRUNE_EVERY_TICKS == 0;
	lv = mg->lv;
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	for (i = 0; i < nr_mig; i++) {
		int r = lv ? mg_libvirt_migrate(lv, mig[i].id, mig[i].name,
					       mg->cfg->migrate_uri,
					       mg->cfg->migrate_data_uri) : -ENOTCONN;

		if (r)
			mg_migration_result(mg, mig[i].id, mig[i].name,
					    mg->cfg->migrate_uri, r,
					    r == -ENOENT ? "no such domain" :
					    r == -ENOTCONN ? "libvirt not connected" :
					    NULL);
	}
	if (prune)
		mg_state_prune_events(mg->state, MG_EVENT_KEEP);
}

static void *timer_main(void *arg)
{
	struct mg *mg = arg;
	struct timespec ts;

	pthread_mutex_lock(&mg->lock);
	while (!mg->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += mg->cfg->recompute_ms / 1000;
		ts.tv_nsec += (long)(mg->cfg->recompute_ms % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		while (!mg->stopping &&
		       pthread_cond_timedwait(&mg->timer_cond, &mg->lock, &ts) == 0)
			;
		if (mg->stopping)
			break;
		pthread_mutex_unlock(&mg->lock);
		mg_tick(mg, mg_mono_ms());
		pthread_mutex_lock(&mg->lock);
	}
	pthread_mutex_unlock(&mg->lock);
	return NULL;
}

static int load_state(struct mg *mg)
{
	struct mg_knobs k = mg->knobs;
	unsigned int mask = 0;
	char why[MG_WHY_LEN];
	int ret;

	ret = mg_state_load_knobs(mg->state, &k, &mask);
	if (ret)
		return ret;
	if (mask) {
		if (mg_knobs_validate(&k, mask, why, sizeof(why))) {
			mg_err("state: stored knobs ignored: %s", why);
		} else {
			if (mask & MG_KNOB_POLICY)
				memcpy(mg->knobs.policy, k.policy, sizeof(k.policy));
			if (mask & MG_KNOB_RETURN_INTERVAL)
				mg->knobs.return_interval_ms = k.return_interval_ms;
			if (mask & MG_KNOB_OVERSUB)
				mg->knobs.oversub_pct = k.oversub_pct;
			if (mask & MG_KNOB_THRASH_WINDOW)
				mg->knobs.thrash_window_s = k.thrash_window_s;
			mg->knobs_mask = mask;
		}
	}
	return mg_state_load_policies(mg->state, &mg->stored, &mg->nr_stored);
}

int mg_create(const struct mg_config *cfg, struct mg **out)
{
	pthread_condattr_t ca;
	char why[MG_WHY_LEN];
	struct mg *mg;
	size_t i;
	int ret;

	if (!cfg || !out || !cfg->state_db || !cfg->recompute_ms)
		return -EINVAL;
	if (mg_knobs_validate(&cfg->knobs, MG_KNOB_ALL, why, sizeof(why))) {
		mg_err("config: %s", why);
		return -EINVAL;
	}
	mg = calloc(1, sizeof(*mg));
	if (!mg)
		return -ENOMEM;
	mg->cfg = cfg;
	mg->knobs = cfg->knobs;
	pthread_mutex_init(&mg->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mg->timer_cond, &ca);
	pthread_condattr_destroy(&ca);

	ret = mg_state_open(cfg->state_db, &mg->state);
	if (ret)
		goto err_free;
	ret = mg_events_init(mg);
	if (ret)
		goto err_close_state;
	ret = load_state(mg);
	if (ret)
		goto err_fini_events;
	ret = mg_backend_open(cfg, &mg->be);
	if (ret)
		goto err_free_stored;
	pthread_mutex_lock(&mg->lock);
	ret = mg_refresh_stats_locked(mg);
	for (i = 0; !ret && i < mg->nr_gpus; i++)
		ret = mg->be.ops->set_knobs(mg->be.priv, (int)i, &mg->knobs);
	pthread_mutex_unlock(&mg->lock);
	if (ret) {
		mg_err("backend %s: %s", mg->be.ops->name, strerror(-ret));
		goto err_destroy_backend;
	}
	mg->started_ms = mg_now_ms();
	mg_info("model: backend %s, %zu GPU(s), knobs policy=%s return_interval_ms=%u oversub_pct=%u thrash_window_s=%u, %zu stored VM policies",
		mg->be.ops->name, mg->nr_gpus, mg->knobs.policy,
		mg->knobs.return_interval_ms, mg->knobs.oversub_pct,
		mg->knobs.thrash_window_s, mg->nr_stored);

	for (i = 0; i < cfg->nr_embedded_vms; i++) {
		const struct mg_embedded_vm *ev = &cfg->embedded_vms[i];
		struct mg_vm_policy meta;

		memset(&meta, 0, sizeof(meta));
		meta.quota = ev->quota;
		/* A refusal is an error event; the daemon still runs. */
		mg_vm_start(mg, ev->id, ev->name, &meta, MG_POL_QUOTA, ev->gpu,
			    MG_SRC_CONFIG, why, sizeof(why));
	}
	/* The vGPUs that are already there, before the API answers. */
	mg_adopt_backend_vms(mg);

	ret = pthread_create(&mg->timer, NULL, timer_main, mg);
	if (ret) {
		ret = -ret;
		goto err_destroy_backend;
	}
	mg->timer_running = true;
	*out = mg;
	return 0;

err_destroy_backend:
	mg->be.ops->destroy(mg->be.priv);
	for (i = 0; i < mg->nr_vms; i++) {
		free(mg->vms[i]->shares);
		free(mg->vms[i]);
	}
	free(mg->vms);
	free(mg->gpus);
err_free_stored:
	free(mg->stored);
err_fini_events:
	mg_events_fini(mg);
err_close_state:
	mg_state_close(mg->state);
err_free:
	pthread_cond_destroy(&mg->timer_cond);
	pthread_mutex_destroy(&mg->lock);
	free(mg);
	return ret;
}

/*
 * Stops the timer and releases the backend. Embedded guests go with it;
 * vGPUs of vgmem.ko keep running with the entitlements they were given.
 * Libvirt must be stopped first (main.c does).
 */
void mg_destroy(struct mg *mg)
{
	size_t i;

	if (!mg)
		return;
	pthread_mutex_lock(&mg->lock);
	mg->stopping = true;
	pthread_cond_broadcast(&mg->timer_cond);
	pthread_mutex_unlock(&mg->lock);
	if (mg->timer_running)
		pthread_join(mg->timer, NULL);
	mg_events_fini(mg);
	mg->be.ops->destroy(mg->be.priv);
	for (i = 0; i < mg->nr_vms; i++) {
		free(mg->vms[i]->shares);
		free(mg->vms[i]);
	}
	free(mg->vms);
	free(mg->doms);
	free(mg->gpus);
	free(mg->stored);
	mg_state_close(mg->state);
	pthread_cond_destroy(&mg->timer_cond);
	pthread_mutex_destroy(&mg->lock);
	free(mg);
}
