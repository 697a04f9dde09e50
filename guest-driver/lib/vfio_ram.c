// SPDX-License-Identifier: MIT
/*
 * Guest-physical ranges of the VFIO transport's guest RAM, in whole pages:
 * the shared first-fit allocator (lib/util/range_alloc.h) under the heap's
 * lock. A free that does not match the heap is refused without changing
 * anything: a confused caller must not make two users share memory the
 * GPU writes.
 */
#include <errno.h>
#include "vfio_priv.h"

int vgmem_gpa_heap_init(struct vgmem_gpa_heap *h, uint64_t base, uint64_t size)
{
	int ret;

	/* Guest-physical 0 is never handed out, so 0 is never valid data. */
	if (!h || !base)
		return -EINVAL;
	ret = vg_range_init(&h->ra, base, size, VGMEM_VFIO_PAGE);
	if (ret)
		return ret;
	pthread_mutex_init(&h->lock, NULL);
	return 0;
}

void vgmem_gpa_heap_fini(struct vgmem_gpa_heap *h)
{
	if (!h || !h->ra.size)
		return;
	vg_range_fini(&h->ra);
	h->ra.size = 0;
	pthread_mutex_destroy(&h->lock);
}

int vgmem_gpa_heap_alloc(struct vgmem_gpa_heap *h, uint64_t size, uint64_t *gpa)
{
	int ret;

	if (!h || !gpa)
		return -EINVAL;
	pthread_mutex_lock(&h->lock);
	ret = vg_range_alloc(&h->ra, size, gpa);
	pthread_mutex_unlock(&h->lock);
	return ret;
}

int vgmem_gpa_heap_free(struct vgmem_gpa_heap *h, uint64_t gpa, uint64_t size)
{
	int ret;

	if (!h)
		return -EINVAL;
	pthread_mutex_lock(&h->lock);
	ret = vg_range_free(&h->ra, gpa, size);
	pthread_mutex_unlock(&h->lock);
	return ret;
}

uint64_t vgmem_gpa_heap_free_bytes(struct vgmem_gpa_heap *h)
{
	uint64_t v;

	pthread_mutex_lock(&h->lock);
	v = h->ra.free_bytes;
	pthread_mutex_unlock(&h->lock);
	return v;
}
