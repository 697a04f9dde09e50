// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Guest RAM of an in-process guest: one zeroed region, guest-physical
 * address = offset. The GPU reaches it through bounds-checked accessors (as
 * the kernel's vfio_dma_rw would); the guest library allocates its rings,
 * pushbuffers and staging areas from it with a first-fit allocator.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "host_priv.h"

static int ram_check(struct vg_host_guest *g, u64 gpa, size_t len)
{
	if (len > g->ram_size || gpa > g->ram_size - len)
		return -EFAULT;
	return 0;
}

static int ram_read(void *priv, u64 gpa, void *buf, size_t len)
{
	struct vg_host_guest *g = priv;

	if (ram_check(g, gpa, len))
		return -EFAULT;
	memcpy(buf, g->ram + gpa, len);
	return 0;
}

static int ram_write(void *priv, u64 gpa, const void *buf, size_t len)
{
	struct vg_host_guest *g = priv;

	if (ram_check(g, gpa, len))
		return -EFAULT;
	memcpy(g->ram + gpa, buf, len);
	return 0;
}

const struct vg_guest_mem vg_guest_ram_ops = {
	.read = ram_read,
	.write = ram_write,
};

int vg_guest_ram_init(struct vg_host_guest *g, u64 size)
{
	struct vg_ram_range *r;

	if (!size)
		size = VG_HOST_GUEST_RAM_DEFAULT;
	if (size < 2 * VG_HOST_PAGE || size > (1ull << 40))
		return -EINVAL;
	size = ALIGN(size, VG_HOST_PAGE);
	g->ram = calloc(1, size);
	if (!g->ram)
		return -ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(g->ram);
		g->ram = NULL;
		return -ENOMEM;
	}
	/* Page 0 is never handed out, so guest-physical 0 is never valid data. */
	r->start = VG_HOST_PAGE;
	r->size = size - VG_HOST_PAGE;
	g->free_list = r;
	g->ram_size = size;
	pthread_mutex_init(&g->ram_lock, NULL);
	return 0;
}

void vg_guest_ram_fini(struct vg_host_guest *g)
{
	struct vg_ram_range *r, *next;

	for (r = g->free_list; r; r = next) {
		next = r->next;
		free(r);
	}
	g->free_list = NULL;
	pthread_mutex_destroy(&g->ram_lock);
	free(g->ram);
	g->ram = NULL;
}

int vg_guest_ram_alloc(struct vg_host_guest *g, u64 size, u64 *gpa)
{
	struct vg_ram_range **pp, *r;
	int ret = -ENOMEM;

	if (!size || size > g->ram_size)
		return -EINVAL;
	size = ALIGN(size, VG_HOST_PAGE);
	pthread_mutex_lock(&g->ram_lock);
	for (pp = &g->free_list; *pp; pp = &(*pp)->next) {
		r = *pp;
		if (r->size < size)
			continue;
		*gpa = r->start;
		r->start += size;
		r->size -= size;
		if (!r->size) {
			*pp = r->next;
			free(r);
		}
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&g->ram_lock);
	if (!ret)
		memset(g->ram + *gpa, 0, size);
	return ret;
}

void vg_guest_ram_free(struct vg_host_guest *g, u64 gpa, u64 size)
{
	struct vg_ram_range **pp, *prev = NULL, *r, *n;

	size = ALIGN(size, VG_HOST_PAGE);
	if (WARN_ON(ram_check(g, gpa, size) || !IS_ALIGNED(gpa, VG_HOST_PAGE)))
		return;
	pthread_mutex_lock(&g->ram_lock);
	for (pp = &g->free_list; *pp && (*pp)->start < gpa; pp = &(*pp)->next)
		prev = *pp;
	r = *pp;
	/* Merge with the range before, the range after, or both. */
	if (prev && prev->start + prev->size == gpa) {
		prev->size += size;
		if (r && prev->start + prev->size == r->start) {
			prev->size += r->size;
			prev->next = r->next;
			free(r);
		}
	} else if (r && gpa + size == r->start) {
		r->start = gpa;
		r->size += size;
	} else {
		n = calloc(1, sizeof(*n));
		/* Losing a free range only leaks guest RAM until the guest goes. */
		if (n) {
			n->start = gpa;
			n->size = size;
			n->next = r;
			*pp = n;
		}
	}
	pthread_mutex_unlock(&g->ram_lock);
}
