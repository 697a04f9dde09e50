// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * First fit over a sorted, coalesced free list (range_alloc.h).
 */
#include <errno.h>
#include <stdlib.h>
#include "range_alloc.h"

static uint64_t align_up(const struct vg_range_alloc *ra, uint64_t v)
{
	return (v + ra->align - 1) & ~(ra->align - 1);
}

int vg_range_init(struct vg_range_alloc *ra, uint64_t base, uint64_t size,
		  uint64_t align)
{
	struct vg_range *r;

	if (!ra || !size || !align || (align & (align - 1)) ||
	    (base | size) & (align - 1) || base + size < base)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->start = base;
	r->size = size;
	ra->base = base;
	ra->size = size;
	ra->align = align;
	ra->free = r;
	ra->free_bytes = size;
	return 0;
}

void vg_range_fini(struct vg_range_alloc *ra)
{
	struct vg_range *r, *next;

	for (r = ra->free; r; r = next) {
		next = r->next;
		free(r);
	}
	ra->free = NULL;
	ra->free_bytes = 0;
}

int vg_range_alloc(struct vg_range_alloc *ra, uint64_t size, uint64_t *start)
{
	struct vg_range **pp, *r;

	/* Checked before rounding up, which then cannot wrap. */
	if (!size || size > ra->size)
		return -EINVAL;
	size = align_up(ra, size);
	for (pp = &ra->free; *pp; pp = &(*pp)->next) {
		r = *pp;
		if (r->size < size)
			continue;
		*start = r->start;
		r->start += size;
		r->size -= size;
		if (!r->size) {
			*pp = r->next;
			free(r);
		}
		ra->free_bytes -= size;
		return 0;
	}
	return -ENOMEM;
}

int vg_range_free(struct vg_range_alloc *ra, uint64_t start, uint64_t size)
{
	struct vg_range **pp, *prev = NULL, *next, *n;
	uint64_t end;

	if (!size || size > ra->size || start & (ra->align - 1))
		return -EINVAL;
	size = align_up(ra, size);
	end = start + size;
	if (start < ra->base || end < start || end > ra->base + ra->size)
		return -EINVAL;
	for (pp = &ra->free; *pp && (*pp)->start < start; pp = &(*pp)->next)
		prev = *pp;
	next = *pp;
	/* Overlapping free space on either side: a double or bogus free. */
	if ((prev && prev->start + prev->size > start) ||
	    (next && next->start < end))
		return -EINVAL;
	if (prev && prev->start + prev->size == start) {
		prev->size += size;
		if (next && prev->start + prev->size == next->start) {
			prev->size += next->size;
			prev->next = next->next;
			free(next);
		}
	} else if (next && end == next->start) {
		next->start = start;
		next->size += size;
	} else {
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->start = start;
		n->size = size;
		n->next = next;
		*pp = n;
	}
	ra->free_bytes += size;
	return 0;
}
