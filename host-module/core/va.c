// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The VA index of a VM (see vg_va.h): an augmented red-black tree, each
 * node carrying the usable hole before it (gap) and the largest hole of
 * its subtree (max_gap), kept by the rbtree's augment callbacks through
 * every rotation.
 *
 * A node's gap depends on its predecessor's end, so inserting or removing
 * a node changes exactly one other gap: its successor's. Every update
 * therefore ends with "recompute the successor's gap, then max_gap up to
 * the root". All operations are O(log n) and iterative.
 */
#include "vg_va.h"

static u64 vg_va_node_gap(struct vg_va_node *n)
{
	return n->gap;
}

RB_DECLARE_CALLBACKS_MAX(static, vg_va_cb, struct vg_va_node, rb, u64,
			 max_gap, vg_va_node_gap)

static struct vg_va_node *vg_va_entry(const struct rb_node *rb)
{
	return rb ? rb_entry(rb, struct vg_va_node, rb) : NULL;
}

struct vg_va_node *vg_va_first(const struct vg_va_tree *t)
{
	return vg_va_entry(rb_first(&t->root));
}

struct vg_va_node *vg_va_next(const struct vg_va_node *n)
{
	return vg_va_entry(rb_next(&n->rb));
}

/* The hole a first fit could use before n: from the aligned end of prev. */
static u64 vg_va_gap(const struct vg_va_tree *t, const struct vg_va_node *prev,
		     const struct vg_va_node *n)
{
	u64 from = ALIGN(prev ? prev->end : t->start, t->align);

	return n->start > from ? n->start - from : 0;
}

void vg_va_init(struct vg_va_tree *t, u64 start, u64 end, u64 align)
{
	t->root = RB_ROOT;
	t->start = start;
	t->end = end;
	t->align = align;
	t->count = 0;
}

void vg_va_insert(struct vg_va_tree *t, struct vg_va_node *n)
{
	struct rb_node **link = &t->root.rb_node, *parent = NULL;
	struct vg_va_node *prev = NULL, *next = NULL;

	/*
	 * The last node we went right of is n's predecessor, the last we
	 * went left of its successor: both come free with the descent.
	 */
	while (*link) {
		struct vg_va_node *p = vg_va_entry(*link);

		parent = *link;
		if (n->start < p->start) {
			next = p;
			link = &parent->rb_left;
		} else {
			prev = p;
			link = &parent->rb_right;
		}
	}
	n->gap = vg_va_gap(t, prev, n);
	n->max_gap = n->gap;
	rb_link_node(&n->rb, parent, link);
	/* The augmented path down to n first, as rb_insert_augmented() wants. */
	if (parent)
		vg_va_cb_propagate(parent, NULL);
	rb_insert_augmented(&n->rb, &t->root, &vg_va_cb);
	if (next) {
		next->gap = vg_va_gap(t, n, next);
		vg_va_cb_propagate(&next->rb, NULL);
	}
	t->count++;
}

void vg_va_remove(struct vg_va_tree *t, struct vg_va_node *n)
{
	struct vg_va_node *prev = vg_va_entry(rb_prev(&n->rb));
	struct vg_va_node *next = vg_va_entry(rb_next(&n->rb));

	rb_erase_augmented(&n->rb, &t->root, &vg_va_cb);
	/* The successor's hole now reaches back to n's predecessor. */
	if (next) {
		next->gap = vg_va_gap(t, prev, next);
		vg_va_cb_propagate(&next->rb, NULL);
	}
	RB_CLEAR_NODE(&n->rb);
	t->count--;
}

struct vg_va_node *vg_va_lookup(const struct vg_va_tree *t, u64 start)
{
	struct rb_node *rb = t->root.rb_node;

	while (rb) {
		struct vg_va_node *n = vg_va_entry(rb);

		if (n->start == start)
			return n;
		rb = start < n->start ? rb->rb_left : rb->rb_right;
	}
	return NULL;
}

struct vg_va_node *vg_va_end_after(const struct vg_va_tree *t, u64 addr)
{
	struct rb_node *rb = t->root.rb_node;
	struct vg_va_node *best = NULL;

	/* Nodes do not overlap, so ends grow with starts: a lower bound. */
	while (rb) {
		struct vg_va_node *n = vg_va_entry(rb);

		if (n->end > addr) {
			best = n;
			rb = rb->rb_left;
		} else {
			rb = rb->rb_right;
		}
	}
	return best;
}

int vg_va_first_fit(const struct vg_va_tree *t, u64 size, u64 *start,
		    struct vg_va_node **next)
{
	struct vg_va_node *n = vg_va_entry(t->root.rb_node), *last;
	u64 from;

	if (n && n->max_gap >= size) {
		/* Leftmost node whose gap fits; max_gap says where to go. */
		for (;;) {
			struct vg_va_node *l = vg_va_entry(n->rb.rb_left);

			if (l && l->max_gap >= size) {
				n = l;
			} else if (n->gap >= size) {
				*start = n->start - n->gap;
				*next = n;
				return 0;
			} else {
				n = vg_va_entry(n->rb.rb_right);
			}
		}
	}
	/* After the last node. */
	last = vg_va_entry(rb_last(&t->root));
	from = ALIGN(last ? last->end : t->start, t->align);
	if (from > t->end || size > t->end - from)
		return -ENOSPC;
	*start = from;
	*next = NULL;
	return 0;
}

/*
 * In-order step for vg_va_check(), keeping *black, the black nodes from
 * the root down to the current one, so that every path's black height is
 * known in O(1) per node.
 */
static const struct rb_node *vg_va_check_next(const struct rb_node *rb,
					      int *black)
{
	const struct rb_node *p;

	if (rb->rb_right) {
		rb = rb->rb_right;
		*black += (int)rb_is_black(rb);
		while (rb->rb_left) {
			rb = rb->rb_left;
			*black += (int)rb_is_black(rb);
		}
		return rb;
	}
	/* Up until we arrive from a left subtree, leaving each node passed. */
	while ((p = rb_parent(rb)) && rb == p->rb_right) {
		*black -= (int)rb_is_black(rb);
		rb = p;
	}
	*black -= (int)rb_is_black(rb);
	return p;
}

#define VG_VA_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		pr_err("vgmem: va tree: " __VA_ARGS__);			\
		return -EINVAL;						\
	}								\
} while (0)

int vg_va_check(const struct vg_va_tree *t)
{
	const struct rb_node *rb = t->root.rb_node;
	const struct vg_va_node *prev = NULL;
	int black = 0, path_black = -1;
	u32 count = 0;

	VG_VA_CHECK(!rb || (!rb_parent(rb) && rb_is_black(rb)),
		    "root has a parent or is red\n");
	/* The first node: leftmost, counting the black ones on the way. */
	if (rb) {
		black = (int)rb_is_black(rb);
		while (rb->rb_left) {
			rb = rb->rb_left;
			black += (int)rb_is_black(rb);
		}
	}
	for (; rb; rb = vg_va_check_next(rb, &black)) {
		const struct vg_va_node *n = vg_va_entry(rb);
		const struct vg_va_node *l = vg_va_entry(rb->rb_left);
		const struct vg_va_node *r = vg_va_entry(rb->rb_right);
		const struct rb_node *parent = rb_parent(rb);
		u64 mg;

		VG_VA_CHECK(n->start < n->end && n->start >= t->start &&
			    n->end <= t->end, "node 0x%llx-0x%llx out of range\n",
			    (unsigned long long)n->start,
			    (unsigned long long)n->end);
		VG_VA_CHECK(!prev || prev->end <= n->start,
			    "node 0x%llx unsorted or overlapping\n",
			    (unsigned long long)n->start);
		VG_VA_CHECK((!l || rb_parent(&l->rb) == rb) &&
			    (!r || rb_parent(&r->rb) == rb),
			    "node 0x%llx: child without parent link\n",
			    (unsigned long long)n->start);
		VG_VA_CHECK(!parent || parent->rb_left == rb ||
			    parent->rb_right == rb,
			    "node 0x%llx: parent does not link back\n",
			    (unsigned long long)n->start);
		VG_VA_CHECK(!rb_is_red(rb) || !parent || rb_is_black(parent),
			    "node 0x%llx: red child of a red node\n",
			    (unsigned long long)n->start);
		/* A missing child ends a path: all must cross equal blacks. */
		if (!l || !r) {
			if (path_black < 0)
				path_black = black;
			VG_VA_CHECK(black == path_black,
				    "node 0x%llx: %d black nodes above a leaf, %d elsewhere\n",
				    (unsigned long long)n->start, black,
				    path_black);
		}
		VG_VA_CHECK(n->gap == vg_va_gap(t, prev, n),
			    "node 0x%llx: gap %llu is stale\n",
			    (unsigned long long)n->start,
			    (unsigned long long)n->gap);
		mg = max_t(u64, n->gap, max_t(u64, l ? l->max_gap : 0,
					      r ? r->max_gap : 0));
		VG_VA_CHECK(n->max_gap == mg, "node 0x%llx: max_gap %llu != %llu\n",
			    (unsigned long long)n->start,
			    (unsigned long long)n->max_gap,
			    (unsigned long long)mg);
		prev = n;
		count++;
	}
	VG_VA_CHECK(count == t->count, "%u nodes, count %u\n", count, t->count);
	return 0;
}
