/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A first-fit allocator of ranges of [base, base + size), in multiples of
 * an alignment: a sorted, coalesced list of free ranges. Its users hand
 * out guest-physical memory for rings, pushbuffers and staging areas,
 * which are few and long-lived, so simplicity wins over packing:
 * libvgmem's VFIO transport (guest-driver/lib/vfio_ram.c) and the
 * userspace host's in-process guests (host-module/user/guest_ram.c).
 *
 * Plain C (libc's calloc and free only), and no locking: each user holds
 * its own lock around every call.
 */
#ifndef VGMEM_LIB_UTIL_RANGE_ALLOC_H
#define VGMEM_LIB_UTIL_RANGE_ALLOC_H

#include <stdint.h>

/* A free range, sorted by start, never adjacent to the next (coalesced). */
struct vg_range {
	uint64_t start;
	uint64_t size;
	struct vg_range *next;
};

struct vg_range_alloc {
	uint64_t base;			/* a multiple of align */
	uint64_t size;			/* a multiple of align, not 0 */
	uint64_t align;			/* a power of two */
	struct vg_range *free;
	uint64_t free_bytes;
};

/*
 * Manage [base, base + size): base and size multiples of align (a power of
 * two), size not 0, the range not past 2^64. -EINVAL if not, -ENOMEM.
 */
int vg_range_init(struct vg_range_alloc *ra, uint64_t base, uint64_t size,
		  uint64_t align);
/* Forget every range; ra may be zeroed or finished already. */
void vg_range_fini(struct vg_range_alloc *ra);
/*
 * The lowest free range of size rounded up to align, its start in *start.
 * -EINVAL for 0 or more than the whole range, -ENOMEM if no free range is
 * that large.
 */
int vg_range_alloc(struct vg_range_alloc *ra, uint64_t size, uint64_t *start);
/*
 * Give [start, start + size rounded up to align) back, merged with its free
 * neighbours. -EINVAL, and nothing changes, if start is unaligned, size 0,
 * the range not inside [base, base + size) or overlapping free space (a
 * double free): a confused caller must not make two users share memory.
 * -ENOMEM (nothing changes) if the range needs a list entry and none can
 * be allocated.
 */
int vg_range_free(struct vg_range_alloc *ra, uint64_t start, uint64_t size);

#endif /* VGMEM_LIB_UTIL_RANGE_ALLOC_H */
