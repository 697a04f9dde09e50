// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The VA index of a VM (see vg_va.h): an AVL tree with parent pointers,
 * each node carrying the usable hole before it (gap) and the largest hole
 * of its subtree (max_gap).
 *
 * A node's gap depends on its predecessor's end, so inserting or removing
 * a node changes exactly one other gap: its successor's. Every update
 * therefore ends with "recompute the successor's gap, then max_gap up to
 * the root"; rebalancing walks the same path and keeps heights and maxima
 * right through the rotations. All operations are O(log n) and iterative.
 */
#include "vg_va.h"

static u32 vg_va_h(const struct vg_va_node *n)
{
	return n ? n->height : 0;
}

static u64 vg_va_mg(const struct vg_va_node *n)
{
	return n ? n->max_gap : 0;
}

/* Height and max_gap from the children, which are up to date. */
static void vg_va_update(struct vg_va_node *n)
{
	n->height = 1 + max_t(u32, vg_va_h(n->left), vg_va_h(n->right));
	n->max_gap = max_t(u64, n->gap,
			   max_t(u64, vg_va_mg(n->left), vg_va_mg(n->right)));
}

static struct vg_va_node *vg_va_leftmost(struct vg_va_node *n)
{
	while (n && n->left)
		n = n->left;
	return n;
}

struct vg_va_node *vg_va_first(const struct vg_va_tree *t)
{
	return vg_va_leftmost(t->root);
}

struct vg_va_node *vg_va_next(const struct vg_va_node *n)
{
	const struct vg_va_node *p;

	if (n->right)
		return vg_va_leftmost(n->right);
	/* Up until we come from a left subtree. */
	for (p = n->parent; p && n == p->right; p = p->parent)
		n = p;
	return (struct vg_va_node *)p;
}

static struct vg_va_node *vg_va_prev(const struct vg_va_node *n)
{
	const struct vg_va_node *p;

	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return (struct vg_va_node *)n;
	}
	for (p = n->parent; p && n == p->left; p = p->parent)
		n = p;
	return (struct vg_va_node *)p;
}

/* The hole a first fit could use before n: from the aligned end of prev. */
static u64 vg_va_gap(const struct vg_va_tree *t, const struct vg_va_node *prev,
		     const struct vg_va_node *n)
{
	u64 from = ALIGN(prev ? prev->end : t->start, t->align);

	return n->start > from ? n->start - from : 0;
}

static void vg_va_set_child(struct vg_va_tree *t, struct vg_va_node *parent,
			    struct vg_va_node *old, struct vg_va_node *new)
{
	if (!parent)
		t->root = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
	if (new)
		new->parent = parent;
}

static struct vg_va_node *vg_va_rotate_left(struct vg_va_tree *t,
					    struct vg_va_node *x)
{
	struct vg_va_node *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	vg_va_set_child(t, x->parent, x, y);
	y->left = x;
	x->parent = y;
	vg_va_update(x);
	vg_va_update(y);
	return y;
}

static struct vg_va_node *vg_va_rotate_right(struct vg_va_tree *t,
					     struct vg_va_node *x)
{
	struct vg_va_node *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	vg_va_set_child(t, x->parent, x, y);
	y->right = x;
	x->parent = y;
	vg_va_update(x);
	vg_va_update(y);
	return y;
}

/*
 * From n to the root: refresh each node and rotate where the heights of
 * the two subtrees differ by two (the same rule serves insert and remove).
 */
static void vg_va_rebalance(struct vg_va_tree *t, struct vg_va_node *n)
{
	while (n) {
		u32 hl, hr;

		vg_va_update(n);
		hl = vg_va_h(n->left);
		hr = vg_va_h(n->right);
		if (hl > hr + 1) {
			if (vg_va_h(n->left->left) < vg_va_h(n->left->right))
				vg_va_rotate_left(t, n->left);
			n = vg_va_rotate_right(t, n);
		} else if (hr > hl + 1) {
			if (vg_va_h(n->right->right) < vg_va_h(n->right->left))
				vg_va_rotate_right(t, n->right);
			n = vg_va_rotate_left(t, n);
		}
		n = n->parent;
	}
}

/* n's predecessor changed: new gap, new maxima on the way up. */
static void vg_va_refresh_gap(struct vg_va_tree *t, struct vg_va_node *n)
{
	n->gap = vg_va_gap(t, vg_va_prev(n), n);
	for (; n; n = n->parent)
		vg_va_update(n);
}

void vg_va_init(struct vg_va_tree *t, u64 start, u64 end, u64 align)
{
	t->root = NULL;
	t->start = start;
	t->end = end;
	t->align = align;
	t->count = 0;
}

void vg_va_insert(struct vg_va_tree *t, struct vg_va_node *n)
{
	struct vg_va_node **link = &t->root, *parent = NULL, *next;

	while (*link) {
		parent = *link;
		link = n->start < parent->start ? &parent->left : &parent->right;
	}
	n->parent = parent;
	n->left = NULL;
	n->right = NULL;
	*link = n;
	n->gap = vg_va_gap(t, vg_va_prev(n), n);
	vg_va_rebalance(t, n);
	next = vg_va_next(n);
	if (next)
		vg_va_refresh_gap(t, next);
	t->count++;
}

void vg_va_remove(struct vg_va_tree *t, struct vg_va_node *n)
{
	struct vg_va_node *next = vg_va_next(n), *fix;

	if (n->left && n->right) {
		/* next is the leftmost of n's right subtree: it takes n's place. */
		if (next->parent == n) {
			fix = next;
		} else {
			fix = next->parent;
			vg_va_set_child(t, next->parent, next, next->right);
			next->right = n->right;
			n->right->parent = next;
		}
		next->left = n->left;
		n->left->parent = next;
		vg_va_set_child(t, n->parent, n, next);
	} else {
		fix = n->parent;
		vg_va_set_child(t, n->parent, n, n->left ? n->left : n->right);
	}
	vg_va_rebalance(t, fix);
	if (next)
		vg_va_refresh_gap(t, next);
	n->parent = NULL;
	n->left = NULL;
	n->right = NULL;
	t->count--;
}

struct vg_va_node *vg_va_lookup(const struct vg_va_tree *t, u64 start)
{
	struct vg_va_node *n = t->root;

	while (n && n->start != start)
		n = start < n->start ? n->left : n->right;
	return n;
}

struct vg_va_node *vg_va_end_after(const struct vg_va_tree *t, u64 addr)
{
	struct vg_va_node *n = t->root, *best = NULL;

	/* Nodes do not overlap, so ends grow with starts: a lower bound. */
	while (n) {
		if (n->end > addr) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best;
}

int vg_va_first_fit(const struct vg_va_tree *t, u64 size, u64 *start,
		    struct vg_va_node **next)
{
	struct vg_va_node *n = t->root;
	u64 from;

	if (n && n->max_gap >= size) {
		/* Leftmost node whose gap fits; max_gap says where to go. */
		for (;;) {
			if (n->left && n->left->max_gap >= size) {
				n = n->left;
			} else if (n->gap >= size) {
				*start = n->start - n->gap;
				*next = n;
				return 0;
			} else {
				n = n->right;
			}
		}
	}
	/* After the last node. */
	n = t->root;
	while (n && n->right)
		n = n->right;
	from = ALIGN(n ? n->end : t->start, t->align);
	if (from > t->end || size > t->end - from)
		return -ENOSPC;
	*start = from;
	*next = NULL;
	return 0;
}

#define VG_VA_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		pr_err("vgmem: va tree: " __VA_ARGS__);			\
		return -EINVAL;						\
	}								\
} while (0)

int vg_va_check(const struct vg_va_tree *t)
{
	const struct vg_va_node *n, *prev = NULL;
	u32 count = 0;

	VG_VA_CHECK(!t->root || !t->root->parent, "root has a parent\n");
	for (n = vg_va_first(t); n; prev = n, n = vg_va_next(n)) {
		const struct vg_va_node *l = n->left, *r = n->right;
		u32 hl = vg_va_h(l), hr = vg_va_h(r);
		u64 mg;

		VG_VA_CHECK(n->start < n->end && n->start >= t->start &&
			    n->end <= t->end, "node 0x%llx-0x%llx out of range\n",
			    (unsigned long long)n->start,
			    (unsigned long long)n->end);
		VG_VA_CHECK(!prev || prev->end <= n->start,
			    "node 0x%llx unsorted or overlapping\n",
			    (unsigned long long)n->start);
		VG_VA_CHECK((!l || l->parent == n) && (!r || r->parent == n),
			    "node 0x%llx: child without parent link\n",
			    (unsigned long long)n->start);
		VG_VA_CHECK(!n->parent || n->parent->left == n ||
			    n->parent->right == n,
			    "node 0x%llx: parent does not link back\n",
			    (unsigned long long)n->start);
		VG_VA_CHECK(n->height == 1 + max_t(u32, hl, hr) &&
			    hl <= hr + 1 && hr <= hl + 1,
			    "node 0x%llx: height %u, children %u/%u\n",
			    (unsigned long long)n->start, n->height, hl, hr);
		VG_VA_CHECK(n->gap == vg_va_gap(t, prev, n),
			    "node 0x%llx: gap %llu is stale\n",
			    (unsigned long long)n->start,
			    (unsigned long long)n->gap);
		mg = max_t(u64, n->gap, max_t(u64, vg_va_mg(l), vg_va_mg(r)));
		VG_VA_CHECK(n->max_gap == mg, "node 0x%llx: max_gap %llu != %llu\n",
			    (unsigned long long)n->start,
			    (unsigned long long)n->max_gap,
			    (unsigned long long)mg);
		count++;
	}
	VG_VA_CHECK(count == t->count, "%u nodes, count %u\n", count, t->count);
	return 0;
}
