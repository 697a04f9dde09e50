// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace host: one software GPU under the core, and in-process
 * guests each made of guest RAM, a core VM and a libvgmem device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_priv.h"

int vg_host_create(const struct vg_host_config *cfg, struct vg_host **out)
{
	struct vg_host *h;
	int ret;

	if (!cfg || !out)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	ret = vg_sim_create(&cfg->sim, &h->sim);
	if (ret)
		goto err_free_host;
	ret = vg_gpu_create(&cfg->gpu, vg_sim_backend_ops(), h->sim, &h->gpu);
	if (ret)
		goto err_destroy_sim;
	*out = h;
	return 0;

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
	vg_gpu_destroy(h->gpu);
	vg_sim_destroy(h->sim);
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

int vg_host_guest_create(struct vg_host *h, const char *name, u64 quota,
			 u64 guest_ram, struct vg_host_guest **out)
{
	struct vg_vm_config vcfg;
	struct vg_host_guest *g;
	int ret;

	if (!h || !out)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->host = h;
	snprintf(g->name, sizeof(g->name), "%s", name ? name : "guest");
	pthread_rwlock_init(&g->chan_lock, NULL);
	ret = vg_guest_ram_init(g, guest_ram);
	if (ret)
		goto err_free_guest;

	memset(&vcfg, 0, sizeof(vcfg));
	vcfg.name = g->name;
	vcfg.quota = quota;
	vcfg.gmem = vg_guest_ram_ops;
	vcfg.gmem.priv = g;
	ret = vg_vm_create(h->gpu, &vcfg, &g->vm);
	if (ret)
		goto err_fini_ram;

	ret = vgmem_open(&vg_host_transport_ops, g, &g->dev);
	if (ret)
		goto err_destroy_vm;

	pthread_mutex_lock(&h->lock);
	g->next = h->guests;
	h->guests = g;
	pthread_mutex_unlock(&h->lock);
	*out = g;
	return 0;

err_destroy_vm:
	vg_vm_destroy(g->vm);
err_fini_ram:
	vg_guest_ram_fini(g);
err_free_guest:
	pthread_rwlock_destroy(&g->chan_lock);
	free(g);
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

	/* Channels first (they read guest RAM), then the VM, then the RAM. */
	vgmem_close(g->dev);
	vg_vm_destroy(g->vm);
	vg_host_transport_fini(g);
	vg_guest_ram_fini(g);
	pthread_rwlock_destroy(&g->chan_lock);
	free(g);
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
	vg_sim_as_cost(g->host->sim, vg_vm_backend_as(g->vm), out);
}
