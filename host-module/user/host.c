// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace host: one software GPU under the core, and in-process
 * guests each made of guest RAM, a core VM and a libvgmem device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/lrc/lrc.h"
#include "host_priv.h"
#include "lrc_store.h"
#include "models/models_priv.h"

/*
 * The file cache over this process's files, serving the GPU whatever the
 * model: the core owns the GPU's fault handler and dispatches each fault
 * to the range's registrant (core/fault.c), so the cache's file maps and
 * the paging model's BOs share it.
 */
static int vg_host_lrc_create(struct vg_host *h,
			      const struct vg_host_config *cfg)
{
	struct vg_lrc_config lcfg;
	int ret;

	memset(&lcfg, 0, sizeof(lcfg));
	lcfg.store = &vg_ustore_ops;
	lcfg.seed = cfg->gpu.seed;
	lcfg.host_budget = cfg->lrc_host_budget;
	ret = vg_lrc_create(&lcfg, &h->lrc);
	if (ret)
		return ret;
	ret = vg_lrc_gpu_add(h->lrc, h->gpu, cfg->lrc_vram_budget);
	if (ret) {
		vg_lrc_destroy(h->lrc);
		return ret;
	}
	h->lrc_gpu = true;
	return 0;
}

int vg_host_create(const struct vg_host_config *cfg, struct vg_host **out)
{
	struct vg_model_params mp;
	struct vg_gpu_config gcfg;
	struct vg_host *h;
	int ret;

	if (!cfg || !out)
		return -EINVAL;
	ret = vg_model_parse(cfg->model ? cfg->model : "vgmem", &mp);
	if (ret)
		return ret;
	gcfg = cfg->gpu;
	if (mp.policy == VG_POLICY_NR)
		mp.policy = gcfg.policy;
	gcfg.policy = mp.policy;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	ret = vg_sim_create(&cfg->sim, &h->sim);
	if (ret)
		goto err_free_host;
	ret = vg_gpu_create(&gcfg, vg_sim_gpu_ops(), h->sim, &h->gpu);
	if (ret)
		goto err_destroy_sim;
	ret = vg_model_create(h, h->gpu, h->sim, &mp, &h->model);
	if (ret)
		goto err_destroy_gpu;
	ret = vg_host_lrc_create(h, cfg);
	if (ret)
		goto err_destroy_model;
	*out = h;
	return 0;

err_destroy_model:
	/* The model goes after the sim, as in vg_host_destroy. */
	vg_gpu_destroy(h->gpu);
	vg_sim_destroy(h->sim);
	vg_model_destroy(h->model);
	goto err_free_host;
err_destroy_gpu:
	vg_gpu_destroy(h->gpu);
err_destroy_sim:
	vg_sim_destroy(h->sim);
err_free_host:
	pthread_mutex_destroy(&h->lock);
	free(h);
	return ret;
}

void vg_host_destroy(struct vg_host *h)
{
	if (!h)
		return;
	while (h->guests)
		vg_host_guest_destroy(h->guests);
	/* The guests' LRC contexts went with their VMs (written back). */
	if (h->lrc_gpu)
		vg_lrc_gpu_remove(h->lrc, h->gpu);
	vg_lrc_destroy(h->lrc);
	vg_gpu_destroy(h->gpu);
	/* After the sim, which waits for a GPU fault handler call under way. */
	vg_sim_destroy(h->sim);
	vg_model_destroy(h->model);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct vg_gpu *vg_host_gpu(struct vg_host *h)
{
	return h->gpu;
}

struct vg_sim *vg_host_sim(struct vg_host *h)
{
	return h->sim;
}

struct vg_lrc *vg_host_lrc(struct vg_host *h)
{
	return h->lrc;
}

int vg_host_file_open(struct vg_host *h, const char *dir, const char *relpath,
		      bool writable, struct vg_lrc_file **out)
{
	if (!h || !dir || !relpath || !out)
		return -EINVAL;
	return vg_lrc_host_open(h->lrc, dir, relpath, writable, out);
}

int vg_host_guest_create(struct vg_host *h, const char *name, u64 quota,
			 u64 guest_ram, struct vg_host_guest **out)
{
	struct vg_host_vm_config c = {
		.name = name, .quota = quota, .guest_ram = guest_ram,
	};

	return vg_host_vm_admit(h, &c, out);
}

int vg_host_vm_admit(struct vg_host *h, const struct vg_host_vm_config *c,
		     struct vg_host_guest **out)
{
	struct vg_vm_config vcfg;
	struct vg_host_guest *g;
	struct vg_lrc_ctx *ctx;
	u64 quota, guest_ram;
	int ret;

	if (!h || !c || !out)
		return -EINVAL;
	quota = c->quota;
	guest_ram = c->guest_ram;
	ret = vg_model_reserve(h->model, quota);
	if (ret)
		return ret;
	g = calloc(1, sizeof(*g));
	if (!g) {
		ret = -ENOMEM;
		goto err_unreserve;
	}
	g->host = h;
	g->quota = quota;
	snprintf(g->name, sizeof(g->name), "%s", c->name ? c->name : "guest");
	pthread_rwlock_init(&g->chan_lock, NULL);
	ret = vg_guest_ram_init(g, guest_ram);
	if (ret)
		goto err_free_guest;

	memset(&vcfg, 0, sizeof(vcfg));
	vcfg.name = g->name;
	vcfg.quota = quota;
	vcfg.profile = c->profile;
	vcfg.gmem = vg_guest_ram_ops;
	vcfg.gmem.priv = g;
	ret = vg_vm_create(h->gpu, &vcfg, &g->vm);
	if (ret)
		goto err_fini_ram;
	/* Its file-cache context; vg_vm_destroy tears it down. */
	if (h->lrc_gpu) {
		ret = vg_lrc_ctx_create(h->lrc, g->vm, &ctx);
		if (ret)
			goto err_destroy_vm;
	}
	ret = vg_model_attach(h->model, g, g->vm, quota, c->entitlement,
			      &g->mvm);
	if (ret)
		goto err_destroy_vm;

	ret = vgmem_open(&vg_host_transport_ops, g, &g->dev);
	if (ret)
		goto err_detach;

	pthread_mutex_lock(&h->lock);
	g->next = h->guests;
	h->guests = g;
	pthread_mutex_unlock(&h->lock);
	*out = g;
	return 0;

err_detach:
	vg_model_detach(g->mvm);
err_destroy_vm:
	vg_vm_destroy(g->vm);
err_fini_ram:
	vg_guest_ram_fini(g);
err_free_guest:
	pthread_rwlock_destroy(&g->chan_lock);
	free(g);
err_unreserve:
	vg_model_unreserve(h->model, quota);
	return ret;
}

void vg_host_guest_destroy(struct vg_host_guest *g)
{
	struct vg_host_guest **pp;
	struct vg_host *h;

	if (!g)
		return;
	h = g->host;
	pthread_mutex_lock(&h->lock);
	for (pp = &h->guests; *pp; pp = &(*pp)->next) {
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);

	/*
	 * Channels first (they read guest RAM), then the model's BOs (mapped
	 * in the VM's address space), then the VM, then the RAM.
	 */
	vgmem_close(g->dev);
	vg_model_detach(g->mvm);
	vg_vm_destroy(g->vm);
	vg_model_unreserve(h->model, g->quota);
	vg_host_transport_fini(g);
	vg_guest_ram_fini(g);
	pthread_rwlock_destroy(&g->chan_lock);
	free(g);
}

int vg_host_guest_set_share_tag(struct vg_host_guest *g, u32 share_id,
				const char *dir, bool read_only,
				const char *tag)
{
	struct vg_lrc_ctx *ctx;

	if (!g || !dir)
		return -EINVAL;
	ctx = vg_lrc_vm_ctx(g->vm);
	if (!ctx)
		return -ENODEV;		/* the VM is going away */
	return vg_lrc_share_set_tag(ctx, share_id, dir, read_only, tag);
}

int vg_host_guest_set_share(struct vg_host_guest *g, u32 share_id,
			    const char *dir)
{
	return vg_host_guest_set_share_tag(g, share_id, dir, false, NULL);
}

int vg_host_guest_set_share_ro(struct vg_host_guest *g, u32 share_id,
			       const char *dir)
{
	return vg_host_guest_set_share_tag(g, share_id, dir, true, NULL);
}

struct vgmem_dev *vg_host_guest_dev(struct vg_host_guest *g)
{
	return g->dev;
}

struct vg_vm *vg_host_guest_vm(struct vg_host_guest *g)
{
	return g->vm;
}

void vg_host_guest_cost(struct vg_host_guest *g, struct vg_sim_cost *out)
{
	struct vg_model_vm_stats st;

	vg_sim_as_cost(g->host->sim, vg_vm_gpu_as(g->vm), out);
	/* What the memory manager made this VM wait for (models.h). */
	vg_model_vm_stats(g->mvm, &st);
	out->device_ns += st.model_ns;
}
