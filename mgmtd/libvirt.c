// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libvirt: follows domains that carry a <vgmem:gpu> element and a vgmem
 * mdev hostdev (domxml.c). A domain that starts is started in the model
 * (which applies its policy), one that stops is stopped (its vGPU's
 * entitlement released), one whose metadata changes gets its new policy
 * live. Bad metadata: an "error" event and a log line, nothing else.
 *
 * One mdev, one owner: the VM of an mdev is the domain's that claimed it
 * first. Another domain naming the same mdev is refused (an "error" event
 * naming both) and remembered, so that its starts, stops, metadata changes
 * and undefinition touch nothing; once the owner is undefined (or names
 * another mdev), the best remaining claimant takes the VM over. At every
 * full sync (start, reconnection) the owner is chosen by claim_before(),
 * never by libvirt's listing order, and recorded in the state database.
 *
 * Domains that look meant for vgmem but are not managed (a vgmem vGPU
 * without metadata, metadata in a namespace nearly ours) and domains
 * refused without a VM of their own are noted in the model (domains.c),
 * which lists them with the VMs. A refusal is reported (error event, log
 * line) once per reason: a full sync does not report again what the state
 * database says was reported before.
 *
 * Threads: one event-loop thread runs virEventRunDefaultImpl(); every
 * callback runs on it and calls into the model (which has its own lock).
 * The domain table (domain UUID -> mdev UUID, needed when a transient
 * domain is gone by the time its stop event arrives) is under lv->lock.
 * Migrations run on their own threads (lvmigrate.c), counted so that
 * stop waits.
 * If the connection drops, the loop reconnects every few seconds and
 * re-reads every domain.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "libvirt_priv.h"
#include "migdest.h"
#include "log.h"

#define RECONNECT_MS	5000

static pthread_once_t lv_once = PTHREAD_ONCE_INIT;
static int lv_once_err;

static void lv_error_func(void *priv, virErrorPtr err)
{
	(void)priv;
	/* Callers log what matters; libvirt's own chatter goes to debug. */
	if (err && err->message)
		mg_dbg("libvirt: %s", err->message);
}

static void lv_global_init(void)
{
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0)
		lv_once_err = -EIO;
	virSetErrorFunc(NULL, lv_error_func);
}


/* ---- domain table ----------------------------------------------------- */

static struct lv_dom *dom_find(struct mg_libvirt *lv, const char *uuid)
{
	size_t i;

	for (i = 0; i < lv->nr_doms; i++)
		if (!strcmp(lv->doms[i].uuid, uuid))
			return &lv->doms[i];
	return NULL;
}

/* Adds or updates the domain's entry. */
static void dom_remember(struct mg_libvirt *lv, const char *uuid,
			 const char *name, const char *mdev, bool owner)
{
	struct lv_dom *d;

	pthread_mutex_lock(&lv->lock);
	d = dom_find(lv, uuid);
	if (!d) {
		if (lv->nr_doms == lv->cap_doms) {
			size_t cap = lv->cap_doms ? lv->cap_doms * 2 : 16;
			struct lv_dom *nd = realloc(lv->doms, cap * sizeof(*nd));

			if (!nd) {
				pthread_mutex_unlock(&lv->lock);
				return;
			}
			lv->doms = nd;
			lv->cap_doms = cap;
		}
		d = &lv->doms[lv->nr_doms++];
	}
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->mdev, sizeof(d->mdev), "%s", mdev);
	d->owner = owner;
	pthread_mutex_unlock(&lv->lock);
}

/* A copy of the domain's entry (removed from the table with forget). */
static bool dom_lookup(struct mg_libvirt *lv, const char *uuid,
		       struct lv_dom *out, bool forget)
{
	struct lv_dom *d;
	bool found = false;

	pthread_mutex_lock(&lv->lock);
	d = dom_find(lv, uuid);
	if (d) {
		*out = *d;
		found = true;
		if (forget)
			*d = lv->doms[--lv->nr_doms];
	}
	pthread_mutex_unlock(&lv->lock);
	return found;
}

/* A copy of the entry of the domain that owns mdev's VM, if any. */
static bool dom_owner(struct mg_libvirt *lv, const char *mdev,
		      struct lv_dom *out)
{
	bool found = false;
	size_t i;

	pthread_mutex_lock(&lv->lock);
	for (i = 0; i < lv->nr_doms && !found; i++) {
		if (lv->doms[i].owner && !strcmp(lv->doms[i].mdev, mdev)) {
			*out = lv->doms[i];
			found = true;
		}
	}
	pthread_mutex_unlock(&lv->lock);
	return found;
}

/* ---- claims: one owner per mdev --------------------------------------- */

/* What a domain claims, for choosing among the claimants of one mdev. */
struct lv_claim {
	char uuid[VIR_UUID_STRING_BUFLEN];
	char mdev[MG_ID_LEN];		/* "" if the domain is not ours */
	bool active;
	bool recorded;			/* the state database's owner of mdev */
	bool first;			/* goes before every other claimant */
};

/*
 * Whether claim a wins over claim b for one mdev: the owner recorded in
 * the state database (it owned the VM before: a restart changes nothing),
 * then a running domain before a stopped one (only one can hold the vGPU
 * open, and it does), then the smaller domain UUID. Each is a property of
 * the claims themselves, so libvirt's listing order never decides.
 */
static bool claim_before(const struct lv_claim *a, const struct lv_claim *b)
{
	if (a->recorded != b->recorded)
		return a->recorded;
	if (a->active != b->active)
		return a->active;
	return strcmp(a->uuid, b->uuid) < 0;
}

/* Fills c for dom: its UUID, the mdev it validly claims, its state. */
static void lv_claim_read(struct mg_libvirt *lv, virDomainPtr dom,
			  struct lv_claim *c)
{
	char err[MG_WHY_LEN], owner[MG_ID_LEN];
	struct mg_vm_policy meta;
	unsigned int mask = 0;
	int gpu;
	char *xml;

	memset(c, 0, sizeof(*c));
	if (virDomainGetUUIDString(dom, c->uuid) < 0)
		return;
	xml = virDomainGetXMLDesc(dom, 0);
	if (!xml)
		return;
	if (mg_domain_parse(xml, c->mdev, sizeof(c->mdev), &meta, &mask, &gpu,
			    err, sizeof(err)) || !mask)
		c->mdev[0] = 0;
	free(xml);
	c->active = virDomainIsActive(dom) == 1;
	c->recorded = c->mdev[0] && !mg_vm_owner_get(lv->mg, c->mdev, owner) &&
		      !strcmp(owner, c->uuid);
}

/* ---- domains not managed ---------------------------------------------- */

static void lv_note(struct mg_libvirt *lv, const char *uuid, const char *name,
		    const char *mdev, enum mg_dom_state st, const char *why)
{
	struct mg_dom_info d;
	int ret;

	memset(&d, 0, sizeof(d));
	snprintf(d.uuid, sizeof(d.uuid), "%s", uuid);
	snprintf(d.name, sizeof(d.name), "%s", name);
	snprintf(d.mdev, sizeof(d.mdev), "%s", mdev ? mdev : "");
	d.state = st;
	snprintf(d.reason, sizeof(d.reason), "%s", why);
	ret = mg_dom_note(lv->mg, &d);
	if (ret)
		mg_err("libvirt: domain %s: cannot list it as %s: %s", name,
		       mg_dom_state_name(st), strerror(-ret));
}

/* The domain is managed now: off the list, its last refusal forgotten. */
static void lv_managed(struct mg_libvirt *lv, const char *uuid)
{
	mg_dom_forget(lv->mg, uuid);
	mg_dom_set_reported(lv->mg, uuid, NULL);
}

/* Reported already, in a full sync: say so at info level only. */
static bool lv_said_before(struct mg_libvirt *lv, const char *uuid,
			   const char *name, const char *why)
{
	if (!lv->full_sync || !mg_dom_reported(lv->mg, uuid, why))
		return false;
	mg_info("libvirt: domain %s: %s (as reported before)", name, why);
	return true;
}

/*
 * A refusal of domain uuid (name): an error event and log line, and the
 * error of its VM id if it has one, once per reason (lv_said_before).
 */
static void lv_report(struct mg_libvirt *lv, const char *uuid,
		      const char *id, const char *name, const char *why)
{
	if (lv_said_before(lv, uuid, name, why)) {
		if (id)
			mg_vm_note_error(lv->mg, id, why);
		return;
	}
	mg_vm_report_error(lv->mg, id, name, why);
	mg_dom_set_reported(lv->mg, uuid, why);
}

/*
 * A refused domain: reported (for its mdev's VM unless another domain
 * owns that VM), and listed unless it owns a VM, which keeps its last
 * valid policy and shows the error itself.
 */
static void lv_reject(struct mg_libvirt *lv, const char *uuid,
		      const char *name, const char *mdev, const char *why)
{
	struct mg_vm_info vi;
	struct lv_dom o;
	bool other = mdev && mdev[0] && dom_owner(lv, mdev, &o) &&
		     strcmp(o.uuid, uuid);

	lv_report(lv, uuid, mdev && mdev[0] && !other ? mdev : NULL, name, why);
	if (mdev && mdev[0] && !other && !mg_get_vm(lv->mg, mdev, &vi))
		mg_dom_forget(lv->mg, uuid);
	else
		lv_note(lv, uuid, name, mdev, MG_DOM_REJECTED, why);
}

/* The mdev is a vgmem vGPU: libvirt lists it with a vgmem type. */
static bool lv_mdev_is_vgmem(struct mg_libvirt *lv, const char *mdev)
{
	char err[MG_WHY_LEN] = "not connected";
	struct mg_mdev *v;
	bool ours = false;
	size_t n, i;

	if (!lv->conn || mg_list_mdevs(lv->conn, "this host", &v, &n, err,
				       sizeof(err))) {
		mg_dbg("libvirt: %s", err);
		return false;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(v[i].uuid, mdev) && !strncmp(v[i].type, "vgmem-", 6))
			ours = true;
	free(v);
	return ours;
}

/*
 * A domain without vgmem metadata: listed (and warned about, once per
 * reason) if it looks meant for vgmem, else none of our business.
 */
static void lv_no_metadata(struct mg_libvirt *lv, const char *uuid,
			   const char *name, const char *mdev,
			   const char *near)
{
	char why[MG_WHY_LEN];

	if (near[0])
		snprintf(why, sizeof(why),
			 "its metadata is in namespace %.100s, not vgmem's %s: not managed",
			 near, MG_XMLNS);
	else if (mdev[0] && lv_mdev_is_vgmem(lv, mdev))
		snprintf(why, sizeof(why),
			 "it names vgmem vGPU %s but has no <vgmem:gpu> metadata: not managed",
			 mdev);
	else
		why[0] = 0;
	if (!why[0]) {
		mg_dbg("libvirt: domain %s has no vgmem metadata: not managed",
		       name);
		lv_managed(lv, uuid);
		return;
	}
	if (!lv_said_before(lv, uuid, name, why)) {
		mg_warn("libvirt: domain %s: %s", name, why);
		mg_dom_set_reported(lv->mg, uuid, why);
	}
	lv_note(lv, uuid, name, mdev, MG_DOM_UNMANAGED, why);
}

static void lv_refuse(struct mg_libvirt *lv, const char *uuid,
		      const char *name, const char *mdev,
		      const struct lv_dom *owner)
{
	char ename[2 * MG_NAME_LEN], eowner[2 * MG_NAME_LEN];
	char why[MG_WHY_LEN];

	snprintf(why, sizeof(why), "mdev %s is the vGPU of domain %s", mdev,
		 owner->name);
	lv_note(lv, uuid, name, mdev, MG_DOM_REJECTED, why);
	if (lv_said_before(lv, uuid, name, why))
		return;
	mg_dom_set_reported(lv->mg, uuid, why);
	mg_err("libvirt: domain %s names mdev %s, the vGPU of domain %s (%s): refused, the VM stays %s's",
	       name, mdev, owner->name, owner->uuid, owner->name);
	mg_json_escape(ename, sizeof(ename), name);
	mg_json_escape(eowner, sizeof(eowner), owner->name);
	mg_emit(lv->mg, "error", mdev,
		"{\"op\":\"claim\",\"name\":\"%s\",\"owner\":\"%s\","
		"\"owner_uuid\":\"%s\",\"reason\":\"mdev %s is the vGPU of domain %s\"}",
		ename, eowner, owner->uuid, mdev, eowner);
}

static void lv_sync_domain(struct mg_libvirt *lv, virDomainPtr dom);

/*
 * The owner of mdev is gone (undefined, or it names another mdev now):
 * its VM is stopped and forgotten, and the best claimant left in the
 * table (claim_before) takes the mdev over as if newly defined.
 */
static void lv_release(struct mg_libvirt *lv, const char *mdev)
{
	char (*uuids)[VIR_UUID_STRING_BUFLEN] = NULL;
	struct lv_claim best, c;
	virDomainPtr best_dom = NULL, dom;
	size_t i, n = 0;

	mg_vm_stop(lv->mg, mdev);
	mg_vm_forget(lv->mg, mdev);
	mg_vm_owner_set(lv->mg, mdev, NULL);
	if (!lv->conn)
		return;
	pthread_mutex_lock(&lv->lock);
	if (lv->nr_doms)
		uuids = calloc(lv->nr_doms, sizeof(*uuids));
	for (i = 0; uuids && i < lv->nr_doms; i++)
		if (!strcmp(lv->doms[i].mdev, mdev))
			memcpy(uuids[n++], lv->doms[i].uuid, sizeof(*uuids));
	pthread_mutex_unlock(&lv->lock);
	for (i = 0; i < n; i++) {
		dom = virDomainLookupByUUIDString(lv->conn, uuids[i]);
		if (!dom)
			continue;
		lv_claim_read(lv, dom, &c);
		if (strcmp(c.mdev, mdev) || (best_dom && !claim_before(&c, &best))) {
			virDomainFree(dom);
			continue;
		}
		if (best_dom)
			virDomainFree(best_dom);
		best_dom = dom;
		best = c;
	}
	free(uuids);
	if (best_dom) {
		lv_sync_domain(lv, best_dom);
		virDomainFree(best_dom);
	}
}

/*
 * The domain claims mdev: it owns its VM unless another domain does, in
 * which case it is refused (reported) and remembered as a claimant. A
 * domain that owned another mdev before releases it.
 */
static bool lv_claim(struct mg_libvirt *lv, const char *uuid,
		     const char *name, const char *mdev)
{
	struct lv_dom prev, owner;
	bool had, taken, owned;

	had = dom_lookup(lv, uuid, &prev, false);
	taken = dom_owner(lv, mdev, &owner) && strcmp(owner.uuid, uuid);
	owned = had && prev.owner && !strcmp(prev.mdev, mdev);
	dom_remember(lv, uuid, name, mdev, !taken);
	if (had && prev.owner && strcmp(prev.mdev, mdev))
		lv_release(lv, prev.mdev);
	if (taken) {
		lv_refuse(lv, uuid, name, mdev, &owner);
		return false;
	}
	if (!owned)
		mg_vm_owner_set(lv->mg, mdev, uuid);
	return true;
}

/* ---- domains -> model ----------------------------------------------- */

/*
 * Reads a domain's definition and starts or defines it in the model.
 * Domains without <vgmem:gpu> are not ours and are ignored.
 */
static void lv_sync_domain(struct mg_libvirt *lv, virDomainPtr dom)
{
	char uuid[VIR_UUID_STRING_BUFLEN], mdev[MG_ID_LEN], err[MG_WHY_LEN];
	char bad[MG_WHY_LEN] = "", near[128] = "";
	struct mg_share *shares = NULL;
	struct mg_vm_info vi;
	struct mg_vm_policy meta;
	struct mg_pol_text txt;
	unsigned int mask;
	const char *name = virDomainGetName(dom);
	int active = virDomainIsActive(dom), gpu, ret, sret = 0;
	size_t nr_shares = 0;
	char *xml;

	if (!name || virDomainGetUUIDString(dom, uuid) < 0)
		return;
	xml = virDomainGetXMLDesc(dom, 0);
	if (!xml) {
		mg_warn("libvirt: domain %s: cannot read its XML: %s", name,
			lv_errmsg());
		return;
	}
	ret = mg_domain_parse_text(xml, mdev, sizeof(mdev), &meta, &mask, &gpu,
				   &txt, err, sizeof(err));
	if (!ret && mask && mdev[0])
		sret = mg_domain_shares(xml, &shares, &nr_shares, bad,
					sizeof(bad));
	if (!ret && !mask)
		mg_domain_near_ns(xml, near, sizeof(near));
	free(xml);
	if (ret) {
		/* Another domain's VM is not this definition's to mark. */
		lv_reject(lv, uuid, name, mdev, err);
		return;
	}
	if (!mask) {
		lv_no_metadata(lv, uuid, name, mdev, near);
		return;
	}
	if (!mdev[0]) {
		lv_reject(lv, uuid, name, NULL,
			  "vgmem:gpu metadata but no <hostdev type='mdev'> with a UUID");
		return;
	}
	if (!lv_claim(lv, uuid, name, mdev)) {
		free(shares);
		return;
	}
	err[0] = 0;
	if (active == 1)
		ret = mg_vm_start_text(lv->mg, mdev, name, &meta, mask, &txt,
				       gpu, MG_SRC_LIBVIRT, err, sizeof(err));
	else
		ret = mg_vm_define_text(lv->mg, mdev, name, &meta, mask, &txt,
					MG_SRC_LIBVIRT, err, sizeof(err));
	if (ret == -EINVAL && active != 1)
		lv_report(lv, uuid, mdev, name, err);
	/* Refused without a VM (a start not admitted): listed as rejected. */
	if (ret && ret != -EEXIST && mg_get_vm(lv->mg, mdev, &vi))
		lv_note(lv, uuid, name, mdev, MG_DOM_REJECTED,
			err[0] ? err : strerror(-ret));
	else if (!ret && !sret)
		lv_managed(lv, uuid);
	else
		mg_dom_forget(lv->mg, uuid);
	/* -EEXIST: already running in the model; a metadata event updates it */
	/*
	 * Its virtio-fs shares, once the model knows the VM (after the
	 * start, whose success clears the VM's error): refused ones are
	 * reported and left out, the others go to the backend.
	 */
	if (!ret || ret == -EEXIST) {
		if (sret)
			lv_report(lv, uuid, mdev, name, bad);
		else
			mg_vm_set_shares(lv->mg, mdev, shares, nr_shares, bad);
	}
	free(shares);
}

/*
 * Every domain, the owner of each mdev decided afresh: the claimants that
 * go first (claim_before) are synced before the others, which are then
 * refused. Ownership of domains no longer listed lapses.
 */
static void lv_sync_all(struct mg_libvirt *lv)
{
	virDomainPtr *doms = NULL;
	struct lv_claim *c;
	int n, i, j, pass;

	n = virConnectListAllDomains(lv->conn, &doms, 0);
	if (n < 0) {
		mg_err("libvirt: cannot list domains: %s", lv_errmsg());
		return;
	}
	c = calloc(n ? (size_t)n : 1, sizeof(*c));
	for (i = 0; c && i < n; i++)
		lv_claim_read(lv, doms[i], &c[i]);
	for (i = 0; c && i < n; i++) {
		c[i].first = true;
		for (j = 0; j < n && c[i].mdev[0]; j++)
			if (j != i && !strcmp(c[j].mdev, c[i].mdev) &&
			    claim_before(&c[j], &c[i]))
				c[i].first = false;
	}
	pthread_mutex_lock(&lv->lock);
	lv->nr_doms = 0;
	pthread_mutex_unlock(&lv->lock);
	/* Domains gone while we were away leave the not-managed list. */
	mg_dom_sync_begin(lv->mg);
	lv->full_sync = true;
	/* Without memory for the claims: listing order, as a last resort. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
			if ((!c && !pass) || (c && c[i].first == !pass))
				lv_sync_domain(lv, doms[i]);
	lv->full_sync = false;
	mg_dom_sync_end(lv->mg);
	for (i = 0; i < n; i++)
		virDomainFree(doms[i]);
	free(c);
	free(doms);
}

static void lv_domain_stopped(struct mg_libvirt *lv, virDomainPtr dom,
			      bool undefined)
{
	char uuid[VIR_UUID_STRING_BUFLEN];
	struct lv_dom d;

	if (virDomainGetUUIDString(dom, uuid) < 0)
		return;
	if (undefined)
		lv_managed(lv, uuid);	/* gone: nothing to list or report */
	if (!dom_lookup(lv, uuid, &d, undefined))
		return;
	/* A refused claimant: the VM is another domain's. */
	if (!d.owner)
		return;
	if (undefined)
		lv_release(lv, d.mdev);
	else
		mg_vm_stop(lv->mg, d.mdev);
}

static int lv_lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event,
			   int detail, void *opaque)
{
	struct mg_libvirt *lv = opaque;

	(void)conn;
	(void)detail;
	switch (event) {
	case VIR_DOMAIN_EVENT_STARTED:
	case VIR_DOMAIN_EVENT_DEFINED:
		lv_sync_domain(lv, dom);
		break;
	case VIR_DOMAIN_EVENT_STOPPED:
		lv_domain_stopped(lv, dom, false);
		/* a transient domain is gone with its stop */
		if (virDomainIsPersistent(dom) != 1)
			lv_domain_stopped(lv, dom, true);
		break;
	case VIR_DOMAIN_EVENT_UNDEFINED:
		lv_domain_stopped(lv, dom, true);
		break;
	default:
		break;		/* suspend/resume keep the vGPU as it is */
	}
	return 0;
}

static int lv_metadata_cb(virConnectPtr conn, virDomainPtr dom, int type,
			  const char *nsuri, void *opaque)
{
	char uuid[VIR_UUID_STRING_BUFLEN], err[MG_WHY_LEN];
	struct mg_libvirt *lv = opaque;
	struct mg_vm_policy meta;
	struct mg_pol_text txt;
	const char *name = virDomainGetName(dom);
	const char *mdev;
	struct lv_dom d, o;
	unsigned int mask = 0;
	int gpu, active, ret;
	char *xml;

	(void)conn;
	if (type != VIR_DOMAIN_METADATA_ELEMENT || !nsuri)
		return 0;
	if (!name || virDomainGetUUIDString(dom, uuid) < 0)
		return 0;
	if (strcmp(nsuri, MG_XMLNS)) {
		/* metadata nearly ours on a domain we do not manage: say so */
		if (strcasestr(nsuri, "vgmem") && !dom_lookup(lv, uuid, &d, false))
			lv_sync_domain(lv, dom);
		return 0;
	}
	if (!dom_lookup(lv, uuid, &d, false)) {
		/* metadata added to a domain we did not manage yet */
		lv_sync_domain(lv, dom);
		return 0;
	}
	mdev = d.mdev;
	if (!d.owner) {
		/* a refused claimant's policy is not the VM's */
		if (dom_owner(lv, mdev, &o))
			lv_refuse(lv, uuid, name, mdev, &o);
		else
			lv_sync_domain(lv, dom);
		return 0;
	}
	active = virDomainIsActive(dom);
	xml = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, MG_XMLNS,
				   active == 1 ? VIR_DOMAIN_AFFECT_LIVE :
				   VIR_DOMAIN_AFFECT_CONFIG);
	if (!xml) {
		lv_report(lv, uuid, mdev, name,
			  "vgmem:gpu metadata was removed; the last valid policy stays");
		return 0;
	}
	ret = mg_metadata_parse_text(xml, &meta, &mask, &gpu, &txt, err,
				     sizeof(err));
	free(xml);
	if (ret) {
		lv_report(lv, uuid, mdev, name, err);
		return 0;
	}
	/* the model reports its own refusals (error event, VM's error) */
	mg_vm_set_meta_text(lv->mg, mdev, &meta, mask, &txt, gpu, err,
			    sizeof(err));
	return 0;
}

/* ---- connection ------------------------------------------------------- */

static void lv_close_cb(virConnectPtr conn, int reason, void *opaque)
{
	struct mg_libvirt *lv = opaque;

	(void)conn;
	mg_warn("libvirt: connection to %s closed (reason %d); reconnecting",
		lv->uri, reason);
	pthread_mutex_lock(&lv->lock);
	lv->connected = false;
	pthread_mutex_unlock(&lv->lock);
	mg_emit(lv->mg, "error", "", "{\"op\":\"libvirt\",\"reason\":\"connection closed\"}");
}

static void lv_disconnect(struct mg_libvirt *lv)
{
	if (!lv->conn)
		return;
	if (lv->cb_life >= 0)
		virConnectDomainEventDeregisterAny(lv->conn, lv->cb_life);
	if (lv->cb_meta >= 0)
		virConnectDomainEventDeregisterAny(lv->conn, lv->cb_meta);
	virConnectUnregisterCloseCallback(lv->conn, lv_close_cb);
	lv->cb_life = lv->cb_meta = -1;
	virConnectClose(lv->conn);
	lv->conn = NULL;
	pthread_mutex_lock(&lv->lock);
	lv->connected = false;
	pthread_mutex_unlock(&lv->lock);
}

static int lv_connect(struct mg_libvirt *lv)
{
	lv->conn = virConnectOpen(lv->uri);
	if (!lv->conn) {
		mg_err("libvirt: cannot connect to %s: %s", lv->uri, lv_errmsg());
		return -ECONNREFUSED;
	}
	lv->cb_life = virConnectDomainEventRegisterAny(lv->conn, NULL,
		VIR_DOMAIN_EVENT_ID_LIFECYCLE,
		VIR_DOMAIN_EVENT_CALLBACK(lv_lifecycle_cb), lv, NULL);
	lv->cb_meta = virConnectDomainEventRegisterAny(lv->conn, NULL,
		VIR_DOMAIN_EVENT_ID_METADATA_CHANGE,
		VIR_DOMAIN_EVENT_CALLBACK(lv_metadata_cb), lv, NULL);
	if (lv->cb_life < 0 || lv->cb_meta < 0) {
		mg_err("libvirt: %s: cannot register domain events: %s",
		       lv->uri, lv_errmsg());
		lv_disconnect(lv);
		return -EIO;
	}
	virConnectRegisterCloseCallback(lv->conn, lv_close_cb, lv, NULL);
	pthread_mutex_lock(&lv->lock);
	lv->connected = true;
	pthread_mutex_unlock(&lv->lock);
	mg_info("libvirt: connected to %s", lv->uri);
	lv_sync_all(lv);
	return 0;
}

static void lv_reconnect_cb(int timer, void *opaque)
{
	struct mg_libvirt *lv = opaque;
	bool connected;

	(void)timer;
	pthread_mutex_lock(&lv->lock);
	connected = lv->connected;
	pthread_mutex_unlock(&lv->lock);
	if (connected || lv->stop)
		return;
	lv_disconnect(lv);
	lv_connect(lv);
}

static void lv_wake_cb(int timer, void *opaque)
{
	(void)timer;
	(void)opaque;
}

static void *lv_thread(void *arg)
{
	struct mg_libvirt *lv = arg;

	while (!lv->stop) {
		if (virEventRunDefaultImpl() < 0)
			mg_err("libvirt: event loop: %s", lv_errmsg());
	}
	return NULL;
}

int mg_libvirt_start(struct mg *mg, const char *uri, struct mg_libvirt **out)
{
	struct mg_libvirt *lv;
	int ret;

	if (!mg || !uri || !*uri || !out)
		return -EINVAL;
	pthread_once(&lv_once, lv_global_init);
	if (lv_once_err)
		return lv_once_err;
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return -ENOMEM;
	lv->mg = mg;
	lv->cb_life = lv->cb_meta = -1;
	lv->uri = strdup(uri);
	pthread_mutex_init(&lv->lock, NULL);
	pthread_cond_init(&lv->mig_done, NULL);
	if (!lv->uri) {
		ret = -ENOMEM;
		goto err_free;
	}
	/*
	 * A libvirtd that is not up yet (mgmtd often starts first at boot) is
	 * not fatal: the reconnect timer keeps trying, as after a drop.
	 */
	if (lv_connect(lv))
		mg_warn("libvirt: %s not reachable yet; retrying every %d ms",
			lv->uri, RECONNECT_MS);
	lv->reconnect_timer = virEventAddTimeout(RECONNECT_MS, lv_reconnect_cb,
						 lv, NULL);
	ret = pthread_create(&lv->thread, NULL, lv_thread, lv);
	if (ret) {
		ret = -ret;
		goto err_disconnect;
	}
	mg_set_libvirt(mg, lv);
	*out = lv;
	return 0;

err_disconnect:
	if (lv->reconnect_timer >= 0)
		virEventRemoveTimeout(lv->reconnect_timer);
	lv_disconnect(lv);
err_free:
	pthread_cond_destroy(&lv->mig_done);
	pthread_mutex_destroy(&lv->lock);
	free(lv->uri);
	free(lv);
	return ret;
}

void mg_libvirt_stop(struct mg_libvirt *lv)
{
	if (!lv)
		return;
	mg_set_libvirt(lv->mg, NULL);
	pthread_mutex_lock(&lv->lock);
	while (lv->migrations)
		pthread_cond_wait(&lv->mig_done, &lv->lock);
	pthread_mutex_unlock(&lv->lock);
	lv->stop = 1;
	/* a zero timeout makes the loop return at once */
	lv->wake_timer = virEventAddTimeout(0, lv_wake_cb, NULL, NULL);
	pthread_join(lv->thread, NULL);
	if (lv->wake_timer >= 0)
		virEventRemoveTimeout(lv->wake_timer);
	if (lv->reconnect_timer >= 0)
		virEventRemoveTimeout(lv->reconnect_timer);
	lv_disconnect(lv);
	pthread_cond_destroy(&lv->mig_done);
	pthread_mutex_destroy(&lv->lock);
	free(lv->doms);
	free(lv->uri);
	free(lv);
}

bool mg_libvirt_connected(struct mg_libvirt *lv)
{
	bool c;

	pthread_mutex_lock(&lv->lock);
	c = lv->connected;
	pthread_mutex_unlock(&lv->lock);
	return c;
}

void *mg_libvirt_conn(struct mg_libvirt *lv)
{
	return lv->conn;
}
