// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The embedded backend: one userspace host (core + software GPU) per
 * configured GPU, in this process. A VM that starts gets an in-process
 * guest (a core VM with a libvgmem device) named after its mdev UUID, so
 * mgmtd runs, and can be tested end to end, on a machine without
 * vgmem.ko. The model serialises every call (backend.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "log.h"
#include "host-module/user/host.h"
#include "host-module/core/lrc/lrc.h"

struct emb_vm {
	char id[MG_ID_LEN];
	int gpu;
	struct vg_host_guest *guest;
	struct mg_share *shares;	/* the table last set, by id */
	size_t nr_shares;
	/*
	 * Plugged from outside (mg_backend_embedded_plug(), as mdevctl
	 * creates an mdev): it outlives the model's start and stop, as a
	 * vGPU of vgmem.ko does; managed while the model has it started.
	 */
	bool external, managed;
};

struct emb {
	struct vg_host **hosts;
	uint32_t nr_gpus;
	uint64_t host_budget;
	uint32_t *return_ms;		/* per GPU, as last set */
	struct emb_vm *vms;
	size_t nr_vms, cap_vms;
};

static struct emb_vm *emb_find(struct emb *e, const char *id)
{
	size_t i;

	for (i = 0; i < e->nr_vms; i++)
		if (!strcmp(e->vms[i].id, id))
			return &e->vms[i];
	return NULL;
}

static int emb_list_gpus(void *b, struct mg_gpu_info **out, size_t *n)
{
	struct emb *e = b;
	struct mg_gpu_info *v;
	uint32_t i;

	v = calloc(e->nr_gpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < e->nr_gpus; i++) {
		struct vg_gpu_stats st;
		struct mg_gpu_info *g = &v[i];

		vg_gpu_get_stats(vg_host_gpu(e->hosts[i]), &st);
		g->index = (int)i;
		snprintf(g->name, sizeof(g->name), "sim%u", i);
		g->vram_size = st.vram_size;
		g->vram_used = st.vram_used;
		g->host_used = st.host_used;
		g->cache_used = st.cache_used;
		g->chunk_size = st.chunk_size;
		g->host_budget = e->host_budget;
		snprintf(g->policy, sizeof(g->policy), "%s",
			 vg_policy_name(st.policy));
		g->return_interval_ms = e->return_ms[i];
		g->nr_vms = st.nr_vms;
#define EMB_GPU_COPY(f, attr, kind, ...)			\
		memcpy(&g->f, &st.f, sizeof(g->f));
		VGMEM_GPU_STATS(EMB_GPU_COPY)
#undef EMB_GPU_COPY
	}
	*out = v;
	*n = e->nr_gpus;
	return 0;
}

static int emb_vm_start(void *b, const char *id, const char *name,
			uint64_t quota, int *gpu)
{
	struct emb *e = b;
	struct emb_vm *vm, *nv;
	int ret;

	(void)name;	/* the core VM is named by UUID: unique, unlike names */
	vm = emb_find(e, id);
	if (vm && vm->external && !vm->managed) {
		/* an mdev that is already there: taken as it is, where it is */
		ret = vg_vm_set_quota(vg_host_guest_vm(vm->guest), quota);
		if (ret)
			return ret;
		vm->managed = true;
		*gpu = vm->gpu;
		return 0;
	}
	if (vm)
		return -EEXIST;
	if (*gpu < 0 || (uint32_t)*gpu >= e->nr_gpus || !mg_uuid_valid(id))
		return -EINVAL;
	if (e->nr_vms == e->cap_vms) {
		size_t cap = e->cap_vms ? e->cap_vms * 2 : 16;

		nv = realloc(e->vms, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		e->vms = nv;
		e->cap_vms = cap;
	}
	vm = &e->vms[e->nr_vms];
	memset(vm, 0, sizeof(*vm));
	snprintf(vm->id, sizeof(vm->id), "%s", id);
	vm->gpu = *gpu;
	/* 1 MiB of guest RAM: mgmtd's guests hold rings, not workloads. */
	ret = vg_host_guest_create(e->hosts[*gpu], id, quota, 1ull << 20,
				   &vm->guest);
	if (ret)
		return ret;
	e->nr_vms++;
	return 0;
}

static void emb_vm_remove(struct emb *e, struct emb_vm *vm)
{
	vg_host_guest_destroy(vm->guest);
	free(vm->shares);
	*vm = e->vms[--e->nr_vms];
}

static void emb_vm_stop(void *b, const char *id)
{
	struct emb *e = b;
	struct emb_vm *vm = emb_find(e, id);

	if (!vm)
		return;
	if (vm->external) {
		vm->managed = false;	/* the mdev stays until unplugged */
		return;
	}
	emb_vm_remove(e, vm);
}

static int emb_list_vms(void *b, struct mg_backend_vm **out, size_t *n)
{
	struct emb *e = b;
	struct mg_backend_vm *v;
	size_t i;

	v = calloc(e->nr_vms ? e->nr_vms : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < e->nr_vms; i++) {
		snprintf(v[i].id, sizeof(v[i].id), "%s", e->vms[i].id);
		v[i].gpu = e->vms[i].gpu;
		vg_vm_get_stats(vg_host_guest_vm(e->vms[i].guest), &v[i].stats);
		v[i].cache_private =
			vg_vm_cache_private(vg_host_guest_vm(e->vms[i].guest));
	}
	*out = v;
	*n = e->nr_vms;
	return 0;
}

static int emb_vm_stats(void *b, const char *id, struct vgmem_vm_stats *st)
{
	struct emb_vm *vm = emb_find(b, id);

	if (!vm)
		return -ENOENT;
	vg_vm_get_stats(vg_host_guest_vm(vm->guest), st);
	return 0;
}

static int emb_set_entitlement(void *b, const char *id, uint64_t bytes)
{
	struct emb_vm *vm = emb_find(b, id);

	if (!vm)
		return -ENOENT;
	if (!bytes)
		return -EINVAL;	/* 0 means "equal share" to the core */
	return vg_vm_set_entitlement(vg_host_guest_vm(vm->guest), bytes);
}

static int emb_set_quota(void *b, const char *id, uint64_t bytes)
{
	struct emb_vm *vm = emb_find(b, id);

	if (!vm)
		return -ENOENT;
	if (!bytes)
		return -EINVAL;	/* 0 means "unlimited" to the core */
	return vg_vm_set_quota(vg_host_guest_vm(vm->guest), bytes);
}

/*
 * One share of the guest's LRC context (the userspace host opens its
 * root), with its virtio-fs tag for the guest's SHARES.
 */
static int emb_share_set(struct emb_vm *vm, const struct mg_share *s)
{
	return vg_host_guest_set_share_tag(vm->guest, s->id, s->source,
					   s->readonly,
					   s->tag[0] ? s->tag : NULL);
}

static void emb_share_clear(struct emb_vm *vm, uint32_t id)
{
	struct vg_lrc_ctx *ctx = vg_lrc_vm_ctx(vg_host_guest_vm(vm->guest));

	if (ctx)
		vg_lrc_share_clear(ctx, id);
}

/*
 * The guest's share table, handed to the userspace host (which opens the
 * roots for the guest's file cache) and kept as the VM's record (tests
 * read it back). The old entries are cleared first (a tag may move to
 * another id; the host refuses a tag two shares hold); a root the host
 * cannot open clears what was set and puts the old table back: nothing
 * changes on error (unless an old root vanished meanwhile).
 */
static int emb_set_shares(void *b, const char *id,
			  const struct mg_share *shares, size_t n)
{
	struct emb_vm *vm = emb_find(b, id);
	struct mg_share *copy = NULL;
	size_t i, k;
	int ret;

	if (!vm)
		return -ENOENT;
	if (n > MG_SHARES_MAX || (n && !shares))
		return -EINVAL;
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, shares, n * sizeof(*copy));
	}
	for (i = 0; i < vm->nr_shares; i++)
		emb_share_clear(vm, vm->shares[i].id);
	for (i = 0; i < n; i++) {
		ret = emb_share_set(vm, &shares[i]);
		if (!ret)
			continue;
		for (k = 0; k < i; k++)
			emb_share_clear(vm, shares[k].id);
		for (k = 0; k < vm->nr_shares; k++)
			emb_share_set(vm, &vm->shares[k]);
		free(copy);
		return ret;
	}
	free(vm->shares);
	vm->shares = copy;
	vm->nr_shares = n;
	return 0;
}

static int emb_set_knobs(void *b, int gpu, const struct mg_knobs *k)
{
	const char *policy = k->policy;
	uint32_t return_interval_ms = k->return_interval_ms;
	struct emb *e = b;
	enum vg_chunk_policy p;
	struct vg_gpu *g;
	int ret;

	if (gpu < 0 || (uint32_t)gpu >= e->nr_gpus)
		return -EINVAL;
	g = vg_host_gpu(e->hosts[gpu]);
	ret = vg_policy_parse(policy, &p);
	if (ret)
		return ret;
	ret = vg_gpu_set_return_interval(g, return_interval_ms);
	if (ret)
		return ret;
	e->return_ms[gpu] = return_interval_ms;
	return vg_gpu_set_policy(g, p);
}

/*
 * Each GPU's host has a cache of its own: the counters add up, and the
 * metadata bytes per page entry is the mean over all their entries.
 */
static int emb_get_lrc(void *b, struct mg_lrc *out)
{
	struct emb *e = b;
	uint64_t meta = 0;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < e->nr_gpus; i++) {
		struct vg_lrc *lrc = vg_host_lrc(e->hosts[i]);
		struct vg_lrc_stats st;

		if (!lrc)
			continue;
		vg_lrc_get_stats(lrc, &st);
		out->gpus++;
#define EMB_LRC_ADD(f, attr, kind, ...)	out->f += st.f;
		VGMEM_LRC_STATS(EMB_LRC_ADD)
#undef EMB_LRC_ADD
		meta += st.bytes_per_page * st.pages;
	}
	out->bytes_per_page = out->pages ? meta / out->pages : 0;
	return 0;
}

static void emb_destroy(void *b)
{
	struct emb *e = b;
	uint32_t i;

	while (e->nr_vms)
		emb_vm_remove(e, &e->vms[0]);
	for (i = 0; i < e->nr_gpus; i++)
		vg_host_destroy(e->hosts[i]);
	free(e->hosts);
	free(e->return_ms);
	free(e->vms);
	free(e);
}

static const struct mg_backend_ops emb_ops = {
	.name = "embedded",
	.list_gpus = emb_list_gpus,
	.vm_start = emb_vm_start,
	.vm_stop = emb_vm_stop,
	.list_vms = emb_list_vms,
	.vm_stats = emb_vm_stats,
	.set_entitlement = emb_set_entitlement,
	.set_quota = emb_set_quota,
	.set_knobs = emb_set_knobs,
	.set_shares = emb_set_shares,
	.get_lrc = emb_get_lrc,
	.poll_events = NULL,	/* faults and relocations show in the counters */
	.destroy = emb_destroy,
};

int mg_backend_embedded_create(const struct mg_config *cfg,
			       struct mg_backend *out)
{
	struct vg_host_config hc;
	struct emb *e;
	uint32_t i;
	int ret;

	if (!cfg->embedded_gpus || cfg->embedded_gpus > 8)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->hosts = calloc(cfg->embedded_gpus, sizeof(*e->hosts));
	e->return_ms = calloc(cfg->embedded_gpus, sizeof(*e->return_ms));
	if (!e->hosts || !e->return_ms) {
		ret = -ENOMEM;
		goto err_free;
	}
	e->host_budget = cfg->embedded_host_budget;
	for (i = 0; i < cfg->embedded_gpus; i++) {
		enum vg_chunk_policy p = VG_POLICY_RANDOM;
		char name[16];

		snprintf(name, sizeof(name), "sim%u", i);
		memset(&hc, 0, sizeof(hc));
		hc.sim.vram_size = cfg->embedded_vram;
		hc.sim.host_limit = cfg->embedded_host_budget;
		hc.gpu.name = name;
		hc.gpu.chunk_size = cfg->embedded_chunk;
		vg_policy_parse(cfg->knobs.policy, &p);
		hc.gpu.policy = p;
		hc.gpu.return_interval_ms = cfg->knobs.return_interval_ms;
		hc.gpu.host_budget = cfg->embedded_host_budget;
		hc.gpu.seed = 0x6d676d74ull + i;
		ret = vg_host_create(&hc, &e->hosts[i]);
		if (ret) {
			mg_err("embedded: software GPU %u: %s", i, strerror(-ret));
			goto err_destroy_hosts;
		}
		e->return_ms[i] = cfg->knobs.return_interval_ms ?
			cfg->knobs.return_interval_ms : VG_RETURN_MS_DEFAULT;
		e->nr_gpus++;
	}
	out->ops = &emb_ops;
	out->priv = e;
	return 0;

err_destroy_hosts:
	for (i = 0; i < e->nr_gpus; i++)
		vg_host_destroy(e->hosts[i]);
err_free:
	free(e->hosts);
	free(e->return_ms);
	free(e);
	return ret;
}

struct vg_host_guest *mg_backend_embedded_guest(struct mg_backend *be,
						 const char *id)
{
	struct emb_vm *vm;

	if (!be || be->ops != &emb_ops)
		return NULL;
	vm = emb_find(be->priv, id);
	return vm ? vm->guest : NULL;
}

int mg_backend_embedded_shares(struct mg_backend *be, const char *id,
			       struct mg_share **out, size_t *n)
{
	struct emb_vm *vm;

	*out = NULL;
	*n = 0;
	if (!be || be->ops != &emb_ops)
		return -EINVAL;
	vm = emb_find(be->priv, id);
	if (!vm)
		return -ENOENT;
	if (!vm->nr_shares)
		return 0;
	*out = malloc(vm->nr_shares * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, vm->shares, vm->nr_shares * sizeof(**out));
	*n = vm->nr_shares;
	return 0;
}

int mg_backend_embedded_plug(struct mg_backend *be, const char *id, int gpu,
			     uint64_t quota)
{
	struct emb *e;
	struct emb_vm *vm;
	int ret;

	if (!be || be->ops != &emb_ops || !quota)
		return -EINVAL;
	e = be->priv;
	if (emb_find(e, id))
		return -EEXIST;
	ret = emb_vm_start(e, id, "", quota, &gpu);
	if (ret)
		return ret;
	vm = emb_find(e, id);
	vm->external = true;
	vm->managed = false;
	return 0;
}

int mg_backend_embedded_unplug(struct mg_backend *be, const char *id)
{
	struct emb_vm *vm;

	if (!be || be->ops != &emb_ops)
		return -EINVAL;
	vm = emb_find(be->priv, id);
	if (!vm)
		return -ENOENT;
	emb_vm_remove(be->priv, vm);
	return 0;
}
