// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The netlink backend: vgmem.ko through its generic netlink family, using
 * libvgnl (lib/vgnl/vgnl.h). vGPUs are mdevs that mdevctl or libvirt
 * create; mgmtd does not create or remove them, it only follows the ones
 * its VMs use and gives them quotas and entitlements. Two handles: one
 * for requests, one subscribed to the events group (a subscribed socket
 * serves only events).
 *
 * Also here: mg_backend_open(), which picks the backend.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "log.h"
#include "lib/vgnl/vgnl.h"

#define NL_MAX_EVENTS_PER_POLL	4096

struct nlb {
	struct vgnl *req;
	struct vgnl *ev;		/* NULL if the subscription failed */
	char (*ids)[MG_ID_LEN];		/* VMs the model started */
	size_t nr_ids, cap_ids;
};

static int nlb_uuid(const char *id, uint8_t u[VGMEM_UUID_LEN])
{
	return vgnl_uuid_parse(id, u) ? -EINVAL : 0;
}

static ssize_t nlb_find(struct nlb *n, const char *id)
{
	size_t i;

	for (i = 0; i < n->nr_ids; i++)
		if (!strcmp(n->ids[i], id))
			return (ssize_t)i;
	return -1;
}

static int nlb_list_gpus(void *b, struct mg_gpu_info **out, size_t *cnt)
{
	struct nlb *n = b;
	struct vgnl_gpu *g;
	struct mg_gpu_info *v;
	size_t nr, i;
	int ret;

	ret = vgnl_list_gpus(n->req, &g, &nr);
	if (ret)
		return ret;
	v = calloc(nr ? nr : 1, sizeof(*v));
	if (!v) {
		free(g);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		v[i].index = (int)g[i].index;
		snprintf(v[i].name, sizeof(v[i].name), "%s", g[i].name);
		v[i].vram_size = g[i].vram_size;
		v[i].vram_used = g[i].vram_used;
		v[i].host_used = g[i].host_used;
		/* libvgnl leaves it 0 when an older module does not send it */
		v[i].cache_used = g[i].cache_used;
		v[i].chunk_size = g[i].chunk_size;
		v[i].host_budget = 0;	/* the module's budget is not exported */
		snprintf(v[i].policy, sizeof(v[i].policy), "%s",
			 vgnl_policy_name(g[i].policy));
		v[i].return_interval_ms = g[i].return_ms;
		v[i].oversub_pct = g[i].oversub_pct;
		v[i].nr_vms = g[i].nr_vms;
#define NLB_GPU_COPY(f, attr, kind, ...)			\
		memcpy(&v[i].f, &g[i].f, sizeof(v[i].f));
		VGMEM_GPU_STATS(NLB_GPU_COPY)
#undef NLB_GPU_COPY
	}
	free(g);
	*out = v;
	*cnt = nr;
	return 0;
}

static int nlb_vm_start(void *b, const char *id, const char *name,
			uint64_t quota, int *gpu)
{
	struct nlb *n = b;
	uint8_t u[VGMEM_UUID_LEN];
	struct vgnl_vm vm;
	struct vgnl_vm_set set;
	int ret;

	(void)name;
	if (nlb_uuid(id, u))
		return -EINVAL;
	if (nlb_find(n, id) >= 0)
		return -EEXIST;
	ret = vgnl_get_vm(n->req, u, &vm);
	if (ret == -ENODEV)
		return -ENOENT;	/* no such mdev: nothing to manage */
	if (ret)
		return ret;
	if (vm.st.quota != quota) {
		memset(&set, 0, sizeof(set));
		set.has_quota = true;
		set.quota = quota;
		ret = vgnl_set_vm(n->req, u, &set);
		if (ret) {
			mg_err("netlink: vGPU %s: quota %llu refused: %s", id,
			       (unsigned long long)quota, vgnl_ext_msg(n->req));
			return ret;
		}
	}
	if (n->nr_ids == n->cap_ids) {
		size_t cap = n->cap_ids ? n->cap_ids * 2 : 16;
		char (*ni)[MG_ID_LEN] = realloc(n->ids, cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		n->ids = ni;
		n->cap_ids = cap;
	}
	snprintf(n->ids[n->nr_ids++], MG_ID_LEN, "%s", id);
	*gpu = (int)vm.gpu;
	return 0;
}

static void nlb_vm_stop(void *b, const char *id)
{
	struct nlb *n = b;
	ssize_t i = nlb_find(n, id);
	uint8_t u[VGMEM_UUID_LEN];
	struct vgnl_vm_set set;

	if (i < 0)
		return;
	/* Back to the equal share: the module's default for unmanaged VMs. */
	if (!nlb_uuid(id, u)) {
		memset(&set, 0, sizeof(set));
		set.has_entitlement = true;
		set.entitlement = 0;
		vgnl_set_vm(n->req, u, &set);
	}
	memcpy(n->ids[i], n->ids[--n->nr_ids], MG_ID_LEN);
}

static int nlb_list_vms(void *b, struct mg_backend_vm **out, size_t *cnt)
{
	struct nlb *n = b;
	struct mg_backend_vm *v;
	struct vgnl_vm *vms;
	size_t nr, i, k = 0;
	int ret;

	ret = vgnl_list_vms(n->req, -1, &vms, &nr);
	if (ret)
		return ret;
	v = calloc(nr ? nr : 1, sizeof(*v));
	if (!v) {
		free(vms);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		char id[VGNL_UUID_STR_LEN];

		vgnl_uuid_format(vms[i].uuid, id);
		snprintf(v[k].id, sizeof(v[k].id), "%s", id);
		v[k].gpu = (int)vms[i].gpu;
		v[k].stats = vms[i].st;
		v[k].cache_private = vms[i].cache_private;
		k++;
	}
	free(vms);
	*out = v;
	*cnt = k;
	return 0;
}

static int nlb_vm_stats(void *b, const char *id, struct vgmem_vm_stats *st)
{
	struct nlb *n = b;
	uint8_t u[VGMEM_UUID_LEN];
	struct vgnl_vm vm;
	int ret;

	if (nlb_uuid(id, u))
		return -EINVAL;
	ret = vgnl_get_vm(n->req, u, &vm);
	if (ret)
		return ret == -ENODEV ? -ENOENT : ret;
	*st = vm.st;
	return 0;
}

static int nlb_set_vm(struct nlb *n, const char *id, bool ent, uint64_t bytes)
{
	uint8_t u[VGMEM_UUID_LEN];
	struct vgnl_vm_set set;
	int ret;

	if (nlb_uuid(id, u))
		return -EINVAL;
	memset(&set, 0, sizeof(set));
	if (ent) {
		set.has_entitlement = true;
		set.entitlement = bytes;
	} else {
		set.has_quota = true;
		set.quota = bytes;
	}
	ret = vgnl_set_vm(n->req, u, &set);
	if (ret && ret != -EBUSY)
		mg_warn("netlink: vGPU %s: %s %llu: %s", id,
			ent ? "entitlement" : "quota",
			(unsigned long long)bytes, vgnl_ext_msg(n->req));
	return ret == -ENODEV ? -ENOENT : ret;
}

static int nlb_set_entitlement(void *b, const char *id, uint64_t bytes)
{
	if (!bytes)
		return -EINVAL;	/* 0 means "equal share" to the module */
	return nlb_set_vm(b, id, true, bytes);
}

static int nlb_set_quota(void *b, const char *id, uint64_t bytes)
{
	if (!bytes)
		return -EINVAL;
	return nlb_set_vm(b, id, false, bytes);
}

/*
 * The whole table in one SET_VM: vgmem.ko resolves every root before it
 * replaces anything, so a refused table leaves the old one in force.
 */
static int nlb_set_shares(void *b, const char *id,
			  const struct mg_share *shares, size_t n)
{
	struct nlb *nl = b;
	uint8_t u[VGMEM_UUID_LEN];
	struct vgnl_share *sh = NULL;
	struct vgnl_vm_set set;
	size_t i;
	int ret;

	if (nlb_uuid(id, u) || n > VGMEM_SHARES_MAX || (n && !shares))
		return -EINVAL;
	if (n) {
		sh = calloc(n, sizeof(*sh));
		if (!sh)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		sh[i].id = shares[i].id;
		sh[i].readonly = shares[i].readonly;
		snprintf(sh[i].path, sizeof(sh[i].path), "%s",
			 shares[i].source);
		/* the guest finds the share by it (VGMEM_CTRL_SHARES) */
		sh[i].has_tag = shares[i].tag[0] != 0;
		snprintf(sh[i].tag, sizeof(sh[i].tag), "%s", shares[i].tag);
	}
	memset(&set, 0, sizeof(set));
	set.has_shares = true;
	set.shares = sh;
	set.nr_shares = n;
	ret = vgnl_set_vm(nl->req, u, &set);
	if (ret)
		mg_warn("netlink: vGPU %s: share table (%zu shares): %s", id, n,
			vgnl_ext_msg(nl->req));
	free(sh);
	return ret == -ENODEV ? -ENOENT : ret;
}

static int nlb_set_knobs(void *b, int gpu, const struct mg_knobs *k)
{
	struct nlb *n = b;
	struct vgnl_gpu_set set;
	uint32_t pol;
	int ret;

	if (gpu < 0 || vgnl_policy_parse(k->policy, &pol))
		return -EINVAL;
	memset(&set, 0, sizeof(set));
	set.has_policy = true;
	set.policy = pol;
	set.has_return_ms = true;
	set.return_ms = k->return_interval_ms;
	set.has_oversub = true;
	set.oversub_pct = k->oversub_pct;
	ret = vgnl_set_gpu(n->req, (uint32_t)gpu, &set);
	if (ret)
		mg_warn("netlink: GPU %d knobs: %s", gpu, vgnl_ext_msg(n->req));
	return ret;
}

static int nlb_get_lrc(void *b, struct mg_lrc *out)
{
	struct nlb *n = b;
	struct vgnl_lrc l;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = vgnl_get_lrc(n->req, &l);
	if (ret) {
		mg_warn("netlink: LRC counters: %s", vgnl_ext_msg(n->req));
		return ret;
	}
	out->gpus = l.nr_gpus;
#define NLB_LRC_COPY(f, attr, kind, ...)	out->f = l.f;
	VGMEM_LRC_STATS(NLB_LRC_COPY)
#undef NLB_LRC_COPY
	return 0;
}

struct nlb_poll {
	struct nlb *n;
	mg_backend_emit_fn emit;
	void *priv;
	unsigned int count;
};

static int nlb_event(const struct vgnl_event *ev, void *arg)
{
	struct nlb_poll *p = arg;
	char id[VGNL_UUID_STR_LEN], detail[MG_EVENT_DETAIL_LEN];

	vgnl_uuid_format(ev->uuid, id);
	/*
	 * Relocations and faults also show in the counters, which the model
	 * turns into one event per VM and tick; pressure does not.
	 */
	if (ev->cmd == VGMEM_CMD_EVENT_PRESSURE) {
		snprintf(detail, sizeof(detail),
			 "{\"gpu\":%u,\"state\":\"reclaim\",\"need\":%llu}",
			 ev->gpu, (unsigned long long)ev->need);
		p->emit(p->priv, "pressure", id, detail);
	}
	return ++p->count >= NL_MAX_EVENTS_PER_POLL;
}

static int nlb_poll_events(void *b, mg_backend_emit_fn emit, void *priv)
{
	struct nlb *n = b;
	struct nlb_poll p = { n, emit, priv, 0 };
	struct pollfd pfd;
	int ret;

	if (!n->ev)
		return 0;
	pfd.fd = vgnl_event_fd(n->ev);
	pfd.events = POLLIN;
	/* Only what is queued now: the model's tick must not block. */
	while (p.count < NL_MAX_EVENTS_PER_POLL) {
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & POLLIN))
			break;
		ret = vgnl_read_events(n->ev, nlb_event, &p);
		if (ret < 0) {
			if (ret == -ENOBUFS) {
				mg_warn("netlink: event queue overran, some events lost");
				continue;
			}
			return ret;
		}
	}
	return 0;
}

static void nlb_destroy(void *b)
{
	struct nlb *n = b;

	vgnl_close(n->req);
	if (n->ev)
		vgnl_close(n->ev);
	free(n->ids);
	free(n);
}

static const struct mg_backend_ops nlb_ops = {
	.name = "netlink",
	.list_gpus = nlb_list_gpus,
	.vm_start = nlb_vm_start,
	.vm_stop = nlb_vm_stop,
	.list_vms = nlb_list_vms,
	.vm_stats = nlb_vm_stats,
	.set_entitlement = nlb_set_entitlement,
	.set_quota = nlb_set_quota,
	.set_knobs = nlb_set_knobs,
	.set_shares = nlb_set_shares,
	.get_lrc = nlb_get_lrc,
	.poll_events = nlb_poll_events,
	.destroy = nlb_destroy,
};

bool mg_backend_netlink_available(void)
{
	return access("/sys/class/vgmem", F_OK) == 0;
}

int mg_backend_netlink_create(const struct mg_config *cfg,
			      struct mg_backend *out)
{
	struct nlb *n;
	int ret;

	(void)cfg;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	ret = vgnl_open(&n->req);
	if (ret) {
		free(n);
		return ret == -ENOENT ? -ENODEV : ret;
	}
	if (vgnl_open(&n->ev) || vgnl_subscribe(n->ev)) {
		mg_warn("netlink: cannot join the events group; pressure events come from counters only");
		if (n->ev)
			vgnl_close(n->ev);
		n->ev = NULL;
	}
	out->ops = &nlb_ops;
	out->priv = n;
	return 0;
}

int mg_backend_open(const struct mg_config *cfg, struct mg_backend *out)
{
	int ret;

	switch (cfg->backend) {
	case MG_BACKEND_EMBEDDED:
		return mg_backend_embedded_create(cfg, out);
	case MG_BACKEND_NETLINK:
		ret = mg_backend_netlink_create(cfg, out);
		if (ret)
			mg_err("backend netlink: vgmem.ko does not answer (%s)",
			       strerror(-ret));
		return ret;
	case MG_BACKEND_AUTO:
		if (mg_backend_netlink_available()) {
			ret = mg_backend_netlink_create(cfg, out);
			if (!ret)
				return 0;
			mg_warn("backend: /sys/class/vgmem exists but the vgmem family does not answer (%s); using embedded",
				strerror(-ret));
		}
		return mg_backend_embedded_create(cfg, out);
	}
	return -EINVAL;
}
