// SPDX-License-Identifier: MIT
/*
 * Guest-physical ranges of the VFIO transport's guest RAM: first fit over a
 * sorted, coalesced free list, in whole pages (rings, pushbuffers and
 * staging areas are few and long-lived, so simplicity wins over packing).
 * A free that does not match the heap is refused without changing
 * anything: a confused caller must not make two users share memory the
 * GPU writes.
 */
#include <errno.h>
#include <stdlib.h>
#include "vfio_priv.h"

static uint64_t page_up(uint64_t v)
{
	return (v + VGMEM_VFIO_PAGE - 1) & ~(VGMEM_VFIO_PAGE - 1);
}

int vgmem_gpa_heap_init(struct vgmem_gpa_heap *h, uint64_t base, uint64_t size)
{
	struct vgmem_gpa_range *r;

	if (!h || !base || !size || (base | size) & (VGMEM_VFIO_PAGE - 1) ||
	    base + size < base)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->start = base;
	r->size = size;
	h->base = base;
	h->size = size;
	h->free = r;
	h->free_bytes = size;
	pthread_mutex_init(&h->lock, NULL);
	return 0;
}

void vgmem_gpa_heap_fini(struct vgmem_gpa_heap *h)
{
	struct vgmem_gpa_range *r, *next;

	if (!h || !h->size)
		return;
	for (r = h->free; r; r = next) {
		next = r->next;
		free(r);
	}
	h->free = NULL;
	h->size = 0;
	pthread_mutex_destroy(&h->lock);
}

int vgmem_gpa_heap_alloc(struct vgmem_gpa_heap *h, uint64_t size, uint64_t *gpa)
{
	struct vgmem_gpa_range **pp, *r;
	int ret = -ENOMEM;

	if (!h || !gpa || !size || size > h->size)
		return -EINVAL;
	size = page_up(size);
	pthread_mutex_lock(&h->lock);
	for (pp = &h->free; *pp; pp = &(*pp)->next) {
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
		h->free_bytes -= size;
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

int vgmem_gpa_heap_free(struct vgmem_gpa_heap *h, uint64_t gpa, uint64_t size)
{
	struct vgmem_gpa_range **pp, *prev = NULL, *next, *n;
	uint64_t end;
	int ret = 0;

	if (!h || !size || gpa & (VGMEM_VFIO_PAGE - 1))
		return -EINVAL;
	size = page_up(size);
	end = gpa + size;
	if (gpa < h->base || end < gpa || end > h->base + h->size)
		return -EINVAL;
	/* Allocated before we need the lock: a free must not fail half way. */
	n = calloc(1, sizeof(*n));

	pthread_mutex_lock(&h->lock);
	for (pp = &h->free; *pp && (*pp)->start < gpa; pp = &(*pp)->next)
		prev = *pp;
	next = *pp;
	/* Overlapping free space on either side: a double or bogus free. */
	if ((prev && prev->start + prev->size > gpa) ||
	    (next && next->start < end)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (prev && prev->start + prev->size == gpa) {
		prev->size += size;
		if (next && prev->start + prev->size == next->start) {
			prev->size += next->size;
			prev->next = next->next;
			free(next);
		}
	} else if (next && end == next->start) {
		next->start = gpa;
		next->size += size;
	} else if (n) {
		n->start = gpa;
		n->size = size;
		n->next = next;
		*pp = n;
		n = NULL;
	} else {
		ret = -ENOMEM;
		goto out_unlock;
	}
	h->free_bytes += size;
out_unlock:
	pthread_mutex_unlock(&h->lock);
	free(n);
	return ret;
}

uint64_t vgmem_gpa_heap_free_bytes(struct vgmem_gpa_heap *h)
{
	uint64_t v;

	pthread_mutex_lock(&h->lock);
	v = h->free_bytes;
	pthread_mutex_unlock(&h->lock);
	return v;
}
