/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A VM's GPU VA index (va.c): the ranges of its BOs in a red-black tree
 * (the kernel's rbtree, through os.h) keyed by start address, augmented
 * with the aligned hole before each node and the largest such hole in its
 * subtree. Lookup by address, the overlap check of a fixed address and the
 * first-fit search for a free hole all take O(log n) instead of a walk
 * over every BO of the VM.
 *
 * A balanced tree keeps the worst case bounded: a guest choosing its own
 * addresses cannot make it degenerate (the height stays within
 * 2 log2(n + 1)), and rebalancing is iterative and needs no randomness.
 * This is the kernel's own shape for such an index: the VMA tree kept its
 * largest-gap-in-subtree the same way before the maple tree.
 *
 * Nodes are embedded in their owner (struct vg_bo) and never allocated
 * here, so no operation can fail. The caller serialises access (gpu->lock
 * for the VMs' trees).
 */
#ifndef VGMEM_CORE_VA_H
#define VGMEM_CORE_VA_H

#include "os/os.h"

struct vg_va_node {
	struct rb_node rb;
	u64 start, end;		/* [start, end), set before insertion */
	u64 gap;		/* usable aligned hole between predecessor and start */
	u64 max_gap;		/* largest gap in this subtree (augmented) */
	/*
	 * The owner is an LRC file map (core/lrc/), not a struct vg_bo: the
	 * VM's BOs and file maps share one index so they never overlap. Set
	 * before insertion; va.c itself ignores it.
	 */
	bool file;
};

struct vg_va_tree {
	struct rb_root root;
	u64 start, end;		/* the range holes are searched in */
	u64 align;		/* power of two: holes start at multiples of it */
	u32 count;
};

/* Empty tree over [start, end); align is a power of two. */
void vg_va_init(struct vg_va_tree *t, u64 start, u64 end, u64 align);
/* Insert n (start < end, inside the range, overlapping no other node). */
void vg_va_insert(struct vg_va_tree *t, struct vg_va_node *n);
void vg_va_remove(struct vg_va_tree *t, struct vg_va_node *n);
/* The node starting exactly at start, or NULL. */
struct vg_va_node *vg_va_lookup(const struct vg_va_tree *t, u64 start);
/* The first node (lowest start) that ends after addr, or NULL. */
struct vg_va_node *vg_va_end_after(const struct vg_va_tree *t, u64 addr);
/*
 * First fit: the lowest align-aligned address where size bytes fit between
 * the nodes (or after the last one, before the range's end). On success
 * *next is the node that follows the hole (NULL: none). -ENOSPC if no hole
 * is large enough; size must not be 0.
 */
int vg_va_first_fit(const struct vg_va_tree *t, u64 size, u64 *start,
		    struct vg_va_node **next);
/* In-order iteration: NULL after the last node. */
struct vg_va_node *vg_va_first(const struct vg_va_tree *t);
struct vg_va_node *vg_va_next(const struct vg_va_node *n);
/*
 * Verify every invariant (order, no overlap, parent links, the red-black
 * rules: a black root, no red child of a red node, one black height on
 * every path; holes and their maxima, count) in O(n) without recursion.
 * 0 or -EINVAL, with what is wrong logged.
 */
int vg_va_check(const struct vg_va_tree *t);

#endif /* VGMEM_CORE_VA_H */
