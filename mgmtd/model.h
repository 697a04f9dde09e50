/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd's model: the table of GPUs and VMs, their policies and
 * entitlements, global knobs and the event history. Everything the REST
 * server, the metrics exporter and the SSE stream show comes from here.
 *
 * Every function is thread-safe (libmicrohttpd runs handlers on its own
 * threads; libvirt events and the recompute timer run on mgmtd's). Every
 * function returns 0 or a negative errno unless it says otherwise; a call
 * that fails changes nothing. Out-arrays are malloc()ed and the caller
 * free()s them.
 *
 * Policy fields follow policy/policy.h (min <= low <= max <= quota,
 * weight 1..10000, priority 0..3); an unset max means "= quota".
 */
#ifndef VGMEM_MGMTD_MODEL_H
#define VGMEM_MGMTD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uapi/vgmem_netlink.h>

#define MG_VERSION		"0.1.0"
#define MG_ID_LEN		40	/* mdev UUID (36 chars) + NUL */
#define MG_NAME_LEN		64	/* libvirt domain name */
#define MG_WHY_LEN		256	/* suggested size of why buffers */
/*
 * A policy event names the VM, who changed it and each changed field's
 * old and new value: up to ~800 bytes with names escaped at their limits
 * (mg_policy_change_json()), so 256 no longer fits.
 */
#define MG_EVENT_DETAIL_LEN	1024

struct mg;			/* the daemon */
struct mg_config;		/* config.h */

struct mg_vm_policy {
	uint64_t quota, min, low, max;
	uint32_t weight, priority;
};

/* Which fields of a struct mg_vm_policy a set call changes (PATCH). */
enum {
	MG_POL_QUOTA = 1,
	MG_POL_MIN = 2,
	MG_POL_LOW = 4,
	MG_POL_MAX = 8,
	MG_POL_WEIGHT = 16,
	MG_POL_PRIORITY = 32,
	MG_POL_ALL = 63,	/* PUT */
};

/*
 * A policy's sizes as the user wrote them, for messages that quote them:
 * a REST body's strings (or integers, as digits) and a domain's vgmem:gpu
 * attribute values. written: the MG_POL_QUOTA/MIN/LOW/MAX fields given in
 * that input (the others' strings are ""). Longer values are cut: a
 * message needs no more to be recognised.
 */
#define MG_SIZE_TEXT		32
struct mg_pol_text {
	unsigned int written;
	char quota[MG_SIZE_TEXT], min[MG_SIZE_TEXT], low[MG_SIZE_TEXT],
	     max[MG_SIZE_TEXT];
};

/* Where a VM came from. */
enum mg_vm_source {
	MG_SRC_CONFIG = 0,	/* --embedded-vm / vm= in the config file */
	MG_SRC_LIBVIRT = 1,	/* a libvirt domain with a vgmem mdev */
	MG_SRC_BACKEND = 2,	/* found on the backend (a vGPU of vgmem.ko) */
};

struct mg_vm_info {
	char id[MG_ID_LEN];		/* mdev UUID, lower case */
	char name[MG_NAME_LEN];		/* libvirt domain ("" if none) */
	/* the libvirt domain's UUID, lower case ("" if none): its owner */
	char domain_uuid[MG_ID_LEN];
	int gpu;			/* index into mg_list_gpus() */
	struct mg_vm_policy policy;	/* effective (operator > metadata > default) */
	uint64_t entitlement;		/* last computed and applied, bytes */
	uint64_t guaranteed;		/* of which min/low guarantees */
	struct vgmem_vm_stats stats;	/* the backend's counters */
	/*
	 * VRAM of the LRC file cache in this VM's private replicas (the file
	 * pages it wrote): part of its GPU's cache_used, not of
	 * stats.resident, not charged to its quota; 0 while not running.
	 */
	uint64_t cache_private;
	bool running;			/* has a live vGPU on the backend */
	/*
	 * Started, but its vGPU (mdev) vanished from the backend (removed
	 * through sysfs/mdevctl, or its GPU unregistered): not running, no
	 * entitlement, error says so; running again when the mdev is back.
	 */
	bool lost;
	bool advisory;			/* migration advisory raised (thrash.c) */
	int64_t advisory_since_ms;	/* 0 if !advisory */
	int64_t started_ms;		/* last start, wall clock ms; 0 if never */
	enum mg_vm_source source;
	bool operator_policy;		/* some field was set through the API */
	char error[128];		/* last metadata error, "" if none */
};

/*
 * A member for a line of a <uapi/vgmem_stats.h> table: the GPU's and the
 * file cache's counters are defined there, with their help texts.
 */
#define MG_STAT_MEMBER(field, attr, kind, ...)			\
	uint64_t field VGMEM_STAT_DIM_OF(kind);

struct mg_gpu_info {
	int index;
	char name[32];
	uint64_t vram_size, vram_used, host_used, chunk_size, host_budget;
	/*
	 * VRAM held by the LRC file cache's replicas, apart from vram_used
	 * (the BOs' chunks): free is vram_size - vram_used - cache_used. The
	 * cache gives it back before any VM's chunk is relocated.
	 */
	uint64_t cache_used;
	char policy[8];			/* random | lra | cold */
	uint32_t return_interval_ms, oversub_pct, nr_vms;
	/* the core's per-GPU counters: the lines of VGMEM_GPU_STATS */
	VGMEM_GPU_STATS(MG_STAT_MEMBER)
	/* policy engine's view at the last recompute */
	uint64_t entitled, spare, demand;
	bool contended;
};

/* Global knobs, applied to every GPU. */
struct mg_knobs {
	char policy[8];			/* random | lra | cold */
	uint32_t return_interval_ms;	/* VGMEM_RETURN_MS_MIN..MAX (1..10000) */
	uint32_t oversub_pct;		/* VGP_OVERSUB_MIN..MAX */
	uint32_t thrash_window_s;	/* 1..86400 */
};

enum {
	MG_KNOB_POLICY = 1,
	MG_KNOB_RETURN_INTERVAL = 2,
	MG_KNOB_OVERSUB = 4,
	MG_KNOB_THRASH_WINDOW = 8,
	MG_KNOB_ALL = 15,
};

/*
 * Event types: pressure | relocation | fault | advisory | policy |
 * lifecycle | error. detail is the text of a JSON object (always valid
 * JSON, e.g. {"reason":"..."}), ready to embed.
 */
struct mg_event {
	uint64_t id;			/* strictly increasing, survives restarts */
	int64_t ts_ms;			/* wall clock, ms since the epoch */
	char type[16];
	char vm[MG_ID_LEN];		/* "" for GPU-wide/global events */
	char detail[MG_EVENT_DETAIL_LEN];
};

/*
 * A virtio-fs share of a VM (a <filesystem> of its libvirt domain with
 * <driver type='virtiofs'/>): the host directory whose files the guest may
 * map onto its GPU (the LRC file cache), named by id in the guest ABI. id
 * is the filesystem's position among the domain's virtio-fs filesystems,
 * counting refused ones, so ids do not shift when one share is bad.
 */
#define MG_SHARE_TAG_LEN	40	/* virtio-fs tag: at most 36 bytes */
#define MG_SHARE_PATH_LEN	VGMEM_SHARE_PATH_MAX	/* with the NUL */
#define MG_SHARES_MAX		VGMEM_SHARES_MAX

struct mg_share {
	uint32_t id;
	bool readonly;
	char tag[MG_SHARE_TAG_LEN];
	char source[MG_SHARE_PATH_LEN];	/* absolute host directory */
};

/* Daemon-wide facts for /healthz and the metrics exporter. */
struct mg_status {
	char version[16];
	char backend[16];		/* embedded | netlink */
	char libvirt_uri[128];		/* "" if libvirt is off */
	bool libvirt_connected;
	int64_t started_ms;
	uint64_t last_event_id;
	uint64_t recomputes;		/* entitlement recomputations so far */
	uint64_t advisories;		/* migration advisories raised so far */
	uint64_t migrations_ok;		/* live migrations that completed */
	uint64_t migrations_failed;	/* that could not start or failed */
	uint32_t nr_gpus, nr_vms;
};

struct mg_lrc {
	uint32_t gpus;			/* GPUs the cache serves (0: off) */
	VGMEM_LRC_STATS(MG_STAT_MEMBER)
};

/* The LRC counters from the backend (all 0 if it has no cache). */
int mg_get_lrc(struct mg *mg, struct mg_lrc *out);
int mg_list_gpus(struct mg *mg, struct mg_gpu_info **out, size_t *n);
int mg_list_vms(struct mg *mg, struct mg_vm_info **out, size_t *n);
/*
 * For caches of rendered answers (the REST server's /v1/vms, /v1/gpus and
 * /metrics). mg_list_view() is mg_list_gpus() and mg_list_vms() read under
 * one lock, with the view's generation in *gen (may be NULL): a counter
 * the model bumps under its lock on every change to anything these
 * listings show (an operator's or libvirt's change, a recompute, a stats
 * refresh that read new counters, a VM lost or found). An answer rendered
 * from a listing is current exactly while mg_view_current() says its
 * generation still is, which costs one comparison instead of comparing
 * the listings. mg_view_current() first refreshes stale counters as a
 * listing would, so an answer is never older than the backend either.
 *
 * mg_view_equal() compares listings byte for byte with what the model
 * would list now: what a generation stands for (tests use it as the
 * oracle: an unchanged generation must mean an equal view).
 */
int mg_list_view(struct mg *mg, struct mg_gpu_info **gpus, size_t *ngpus,
		 struct mg_vm_info **vms, size_t *nvms, uint64_t *gen);
bool mg_view_current(struct mg *mg, uint64_t gen);
bool mg_view_equal(struct mg *mg, const struct mg_gpu_info *gpus,
		   size_t ngpus, const struct mg_vm_info *vms, size_t nvms);
/*
 * Libvirt domains mgmtd does not manage, and why (domains.c): listed with
 * the VMs (GET /v1/vms) so that an operator sees a domain that was left
 * out or refused without reading the log.
 *  MG_DOM_UNMANAGED  it looks meant for vgmem but is not managed: it names
 *                    a vgmem vGPU (an mdev of a vgmem- type) without
 *                    <vgmem:gpu> metadata, or its metadata is in a
 *                    namespace that is nearly vgmem's;
 *  MG_DOM_REJECTED   it has vgmem metadata that was refused (invalid, no
 *                    mdev, another domain's mdev, not admitted) and no VM
 *                    of its own.
 * A domain is in the list while that holds; it leaves it once managed,
 * undefined, or no longer meant for vgmem.
 */
enum mg_dom_state { MG_DOM_UNMANAGED = 1, MG_DOM_REJECTED = 2 };

struct mg_dom_info {
	char uuid[MG_ID_LEN];		/* the domain's UUID, lower case */
	char name[MG_NAME_LEN];
	char mdev[MG_ID_LEN];		/* the mdev it names, "" if none */
	enum mg_dom_state state;
	char reason[MG_WHY_LEN];
	int64_t since_ms;		/* wall clock, when it got this state */
};

static inline const char *mg_dom_state_name(enum mg_dom_state s)
{
	return s == MG_DOM_UNMANAGED ? "unmanaged" :
	       s == MG_DOM_REJECTED ? "rejected" : "unknown";
}

/* Adds or updates the domain d->uuid (since_ms kept if state is). */
int mg_dom_note(struct mg *mg, const struct mg_dom_info *d);
/* The domain is managed now, undefined, or none of vgmem's business. */
void mg_dom_forget(struct mg *mg, const char *uuid);
/*
 * Around a listing of every domain (libvirt.c at start and reconnection):
 * a domain not noted again between begin and end leaves the list.
 */
void mg_dom_sync_begin(struct mg *mg);
void mg_dom_sync_end(struct mg *mg);
/* The list, by name; *out malloc()ed (NULL when empty). */
int mg_list_doms(struct mg *mg, struct mg_dom_info **out, size_t *n);
/*
 * Whether reason is the refusal last reported for domain uuid (kept in
 * the state database across restarts), and recording it (NULL: the
 * domain is fine or gone). Only a write when it changes.
 */
bool mg_dom_reported(struct mg *mg, const char *uuid, const char *reason);
void mg_dom_set_reported(struct mg *mg, const char *uuid, const char *reason);

/* By UUID or by domain name; -ENOENT. */
int mg_get_vm(struct mg *mg, const char *id_or_name, struct mg_vm_info *out);
int mg_get_status(struct mg *mg, struct mg_status *out);
/*
 * The shares in force of a VM (by UUID or domain name), by id; -ENOENT.
 * *out is NULL when there are none.
 */
int mg_get_vm_shares(struct mg *mg, const char *id_or_name,
		     struct mg_share **out, size_t *n);

/*
 * Changes the masked fields of a VM's policy (id: UUID or domain name).
 * -EINVAL (bad values, bad mask), -ENOENT, -ENOSPC (admission refused:
 * the GPU could not honour the quotas/mins/host budget), -EBUSY (a quota
 * below the bytes the running VM holds now: HTTP 409), -EIO (the state
 * database failed; nothing changed: HTTP 500). why gets a
 * human-readable reason on error (may be NULL). Written durably to the
 * state database before it returns 0; entitlements are recomputed and
 * applied before it returns.
 */
int mg_set_vm_policy(struct mg *mg, const char *id,
		     const struct mg_vm_policy *p, unsigned int mask,
		     char *why, size_t whylen);
/*
 * The same, with the sizes as the request wrote them (rj_parse_policy()),
 * so that a refusal quotes them: "web1: min 8G is above low 1GiB" (txt
 * NULL: sizes shown from their values).
 */
int mg_set_vm_policy_text(struct mg *mg, const char *id,
			  const struct mg_vm_policy *p, unsigned int mask,
			  const struct mg_pol_text *txt, char *why,
			  size_t whylen);
/* Forgets the operator's policy of a VM: metadata/defaults apply again. */
int mg_reset_vm_policy(struct mg *mg, const char *id, char *why,
		       size_t whylen);

/*
 * A dry-run admission (admission.c; POST /v1/admission, `vgmemctl admit
 * --dry-run`): would a new VM with policy p (every field: quota required,
 * max 0 meaning the quota) be admitted now, on gpu (-1: where mgmtd would
 * place it, the admitting GPU with the fewest quota bytes), beside the VMs
 * running there, and what would it be entitled to while it uses its whole
 * quota and they what they hold? Changes nothing. 0 with *out filled
 * (admitted or not, and why not); -EINVAL (a policy no VM may have: why
 * says which field), -ENOENT (no such GPU).
 */
struct mg_admission {
	bool admitted;
	int gpu;			/* where (-1: refused on every GPU) */
	uint64_t entitlement;		/* bytes, if admitted */
	uint64_t guaranteed;		/* of which min and low give */
	uint64_t quotas;		/* the GPU's quotas with it */
	uint64_t quota_limit;		/* VRAM * oversub_pct / 100 */
	uint32_t vms;			/* VMs running there now */
	char code[24];			/* "ok" or policy/'s refusal code */
	char reason[MG_WHY_LEN];	/* why not, or "" */
};
int mg_admission_query(struct mg *mg, int gpu, const struct mg_vm_policy *p,
		       struct mg_admission *out, char *why, size_t whylen);

int mg_get_knobs(struct mg *mg, struct mg_knobs *out);

/*
 * Who the calling thread acts for, named in the "by" of the policy events
 * it causes: "uid 1000 (alice)" or "token" (rest.c). A REST request is
 * handled start to end on one thread, so a thread-local set around the
 * model call reaches every event it emits without threading a caller
 * argument through each model entry point. NULL (the default) is mgmtd
 * itself. by is copied (MG_BY_LEN - 1 bytes). A domain's metadata names
 * its domain instead, whichever thread applies it (vms.c).
 */
#define MG_BY_LEN	128
void mg_actor_set(const char *by);
const char *mg_actor(void);
/* -EINVAL with why; durable before it returns 0. */
int mg_set_knobs(struct mg *mg, const struct mg_knobs *k, unsigned int mask,
		 char *why, size_t whylen);

/*
 * Events with id > after_id, oldest first, at most max (0: -EINVAL).
 * Old events come from the state database, so history survives restarts.
 */
int mg_events_since(struct mg *mg, uint64_t after_id, size_t max,
		    struct mg_event **out, size_t *n);

/*
 * cb is called for every new event, in id order, on the publishing thread
 * with no model lock held (it may call mg_* functions except
 * mg_subscribe/mg_unsubscribe, and must not block for long). After
 * mg_unsubscribe() returns, cb is not running and will not be called.
 * Returns a handle >= 0 or -errno.
 */
int mg_subscribe(struct mg *mg,
		 void (*cb)(void *priv, const struct mg_event *ev),
		 void *priv);
void mg_unsubscribe(struct mg *mg, int handle);

/* Lifetime (main.c and tests). */
int mg_create(const struct mg_config *cfg, struct mg **out);
void mg_destroy(struct mg *mg);
/* Recompute and apply every GPU's entitlements now (the timer does it too). */
int mg_recompute(struct mg *mg);

/*
 * The REST server (mgmtd/rest*.c) is started by main.c after mg_create()
 * and stopped before mg_destroy(). A failed start says why in why (may be
 * NULL), e.g. that another mgmtd serves on the unix socket (-EADDRINUSE).
 */
struct mg_rest;
int mg_rest_start(struct mg *mg, const struct mg_config *cfg,
		  struct mg_rest **out, char *why, size_t whylen);
void mg_rest_stop(struct mg_rest *rest);
/* Where rest serves, for the log: "unix socket PATH, TCP HOST:PORT". */
void mg_rest_where(const struct mg_rest *rest, const struct mg_config *cfg,
		   char *buf, size_t len);

#endif /* VGMEM_MGMTD_MODEL_H */
