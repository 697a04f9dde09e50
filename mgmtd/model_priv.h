/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The model's structures (model.c, events.c, daemon.c). Lock rules:
 * mg->lock protects everything in struct mg and struct mg_vm except the
 * fields under "events" (events.c documents those).
 */
#ifndef VGMEM_MGMTD_MODEL_PRIV_H
#define VGMEM_MGMTD_MODEL_PRIV_H

#include <pthread.h>
#include <stdarg.h>

#include "mgmtd.h"
#include "state.h"
#include "policy/policy.h"

/* A domain not managed (model.h, struct mg_dom_info), under mg->lock. */
struct mg_dom {
	struct mg_dom_info info;
	uint64_t sync;			/* mg->dom_sync when last noted */
};

struct mg_vm {
	struct mg_vm_info info;		/* info.policy: the effective policy */
	struct mg_vm_policy meta;	/* from the definition (metadata/config) */
	unsigned int meta_mask;
	struct mg_vm_policy op;		/* from operators (persisted) */
	unsigned int op_mask;
	bool applied;			/* info.entitlement was sent to the backend */
	struct mg_thrash thrash;
	uint64_t last_faults;		/* counters at the last tick, for events */
	uint64_t last_moves;
	struct mg_share *shares;	/* virtio-fs shares in force, by id */
	size_t nr_shares;
	/*
	 * The shares come from a definition (libvirt): only then does mgmtd
	 * own the vGPU's table (an adopted vGPU keeps what it was given).
	 */
	bool shares_set;
	/* lost, its mdev back but refused: reported once per return */
	bool refound_refused;
};

struct mg_sub {
	void (*cb)(void *priv, const struct mg_event *ev);
	void *priv;
	bool used;
};

#define MG_EVENT_RING		1024	/* recent events kept in memory */
#define MG_EVENT_KEEP		100000	/* events kept in the database */

struct mg {
	pthread_mutex_t lock;
	const struct mg_config *cfg;	/* the caller's; outlives mg */
	struct mg_backend be;
	struct mg_state *state;
	struct mg_knobs knobs;
	unsigned int knobs_mask;	/* fields operators set (persisted) */

	struct mg_vm **vms;
	size_t nr_vms, cap_vms;
	/* domains not managed (domains.c), each with the sync it was seen in */
	struct mg_dom *doms;
	size_t nr_doms, cap_doms;
	uint64_t dom_sync;
	struct mg_state_policy *stored;	/* operator policies by VM id */
	size_t nr_stored;
	struct mg_gpu_info *gpus;	/* backend view + policy results */
	size_t nr_gpus;
	int64_t stats_ms;		/* monotonic time of the last refresh */
	/*
	 * The file cache's counters as last read from the backend, and
	 * when: a scrape of /metrics or GET /v1/lrc reads the backend at most
	 * once per MG_STATS_FRESH_MS, like the VM counters.
	 */
	struct mg_lrc lrc;
	int64_t lrc_ms;
	bool lrc_valid;
	uint64_t view_gen;		/* mg_view_current(): see below */
	int64_t started_ms;
	uint64_t recomputes, advisories;
	uint64_t migrations_ok, migrations_failed;	/* mg_migration_result() */
	struct mg_libvirt *lv;

	/* timer thread (daemon.c) */
	pthread_t timer;
	pthread_cond_t timer_cond;	/* with lock */
	bool timer_running, stopping;
	uint64_t ticks;

	/*
	 * events (events.c): next_event_id and pending under lock; the ring
	 * under lock too; subscribers under sub_lock, which is held while
	 * callbacks run (so unsubscribe waits for a running callback) and
	 * never taken with lock held.
	 */
	uint64_t next_event_id;
	struct mg_event *pending;
	size_t nr_pending, cap_pending;
	bool flushing;
	struct mg_event ring[MG_EVENT_RING];
	size_t ring_head, ring_count;	/* oldest at ring_head */
	uint64_t last_delivered;
	pthread_mutex_t sub_lock;
	struct mg_sub *subs;
	size_t nr_subs;
};

/*
 * Every change to what mg_list_view() shows (any mg_vm.info, the VM
 * table, mg->gpus, the knobs) calls this under the lock; a spurious call
 * only costs the REST cache a miss, a missing one serves a stale answer
 * (test_mgmtd_view.c checks the generation against mg_view_equal()).
 */
static inline void mg_view_changed_locked(struct mg *mg)
{
	mg->view_gen++;
}

/* model.c */
struct mg_vm *mg_find_locked(struct mg *mg, const char *id_or_name);
/* dst's fields in mask become src's. */
void mg_apply_fields(struct mg_vm_policy *dst, const struct mg_vm_policy *src,
		     unsigned int mask);
void mg_effective(const struct mg_vm_policy *meta, unsigned int meta_mask,
		  const struct mg_vm_policy *op, unsigned int op_mask,
		  struct mg_vm_policy *out);
int mg_gpu_params_locked(struct mg *mg, int gpu, struct vgp_gpu *g);
int mg_refresh_stats_locked(struct mg *mg);
int mg_recompute_locked(struct mg *mg);
int mg_knobs_validate(const struct mg_knobs *k, unsigned int mask, char *why,
		      size_t whylen);
/* Keeps mg->stored in step with what was persisted (mask 0: removed). */
void mg_stored_update_locked(struct mg *mg, const char *id,
			     const struct mg_vm_policy *p, unsigned int mask);

/* model.c helpers shared with vms.c */
void mg_why_set(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const struct mg_state_policy *mg_stored_find(struct mg *mg, const char *id);
/*
 * Would policy p for vm (vm NULL: the GPU's VMs alone; p NULL: vm's own)
 * on gpu, with every other running VM there as it is, be admitted under
 * oversub_pct? 0, -ENOSPC (why says which limit), -EINVAL, -ENOMEM.
 */
int mg_admit_locked(struct mg *mg, const struct mg_vm *vm, int gpu,
		    const struct mg_vm_policy *p, uint32_t oversub_pct,
		    char *why, size_t whylen);
/*
 * Is the effective policy p valid on gpu? First min <= low <= max <=
 * quota, said in the user's terms: who names the VM (its domain name, or
 * its id), set holds the fields set anywhere (meta or operator; an unset
 * low is min and an unset max is quota, mg_effective(), so a conflict
 * names the field the user did set), txt the strings of the fields
 * written in this input that are in force (NULL: none), and domain says
 * to quote them as the domain's attributes (min='8GiB', else min 8G);
 * sizes without a string are shown in binary units when exact. Then the
 * policy engine's own check (vgp_validate_vm()), the last guard, its
 * "vm N" replaced by who. 0, or -EINVAL with why.
 */
struct mg_pol_who {
	const char *name;
	bool domain;
	unsigned int set;
	const struct mg_pol_text *txt;
};
/* A VM's policy and demand as the policy engine takes them. */
void mg_to_vgp(const struct mg_vm_policy *p, uint64_t demand,
	       struct vgp_vm *v);
int mg_validate_policy_locked(struct mg *mg, int gpu,
			      const struct mg_vm_policy *p,
			      const struct mg_pol_who *who, char *why,
			      size_t whylen);
/* A VM's name for messages: its domain's, else its id. */
const char *mg_vm_name(const struct mg_vm *vm);
/* The backend side of a new effective policy (the quota of a running VM). */
int mg_apply_policy_locked(struct mg *mg, struct mg_vm *vm,
			   const struct mg_vm_policy *np, char *why,
			   size_t whylen);
/* "quota":..,"min":.. (JSON members, no braces) */
/*
 * The JSON members of a policy event from old to new, written being the
 * fields the change wrote (also listed when their value did not move):
 * "changed":[names],"old":{...},"new":{...}. text gets the same in
 * words for the log ("min 0 -> 67108864, ...").
 */
void mg_policy_change_json(char *buf, size_t len, char *text, size_t textlen,
			   const struct mg_vm_policy *old,
			   const struct mg_vm_policy *np, unsigned int written);

/*
 * shares.c: sends vm's share table to the backend (vm running); on error
 * an "error" event and the VM's error say why.
 */
int mg_shares_push_locked(struct mg *mg, struct mg_vm *vm);

/*
 * vms.c: the backend's vGPUs (bv, n) against the started VMs of libvirt
 * and the config: one whose vGPU is gone is lost (error, event, no
 * entitlement), a lost one whose vGPU is back runs again. Called by every
 * stats refresh; true if a VM changed state (entitlements need a
 * recompute).
 */
bool mg_track_vgpus_locked(struct mg *mg, const struct mg_backend_vm *bv,
			   size_t n);

/* events.c */
void mg_emit_locked(struct mg *mg, const char *type, const char *vm,
		    const char *detail_fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Persists and delivers pending events; call without lock. */
void mg_events_flush(struct mg *mg);
uint64_t mg_events_last_id(struct mg *mg);
int mg_events_init(struct mg *mg);
void mg_events_fini(struct mg *mg);

#endif /* VGMEM_MGMTD_MODEL_PRIV_H */
