// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Red-black trees for userspace (os/rbtree.h), with the kernel's API and
 * guarantees: insertion and removal rebalance in O(log n) with at most
 * three rotations, no recursion, no allocation. The textbook algorithm
 * (Cormen et al., chapter 13) on the kernel's node layout, where a missing
 * child is black.
 *
 * The invariants: the root is black; a red node has no red child; every
 * path from a node down to a missing child crosses the same number of
 * black nodes. So the longest path is at most twice the shortest, and the
 * height at most 2 log2(n + 1).
 *
 * Every rotation reports (old, new) to the augment callback, and removal
 * recomputes the path it changed, so an augmented tree's values stay
 * right; the plain rb_insert_color()/rb_erase() pass callbacks that do
 * nothing.
 */
#include "os.h"

static inline void rb_set_black(struct rb_node *rb)
{
	rb->__rb_parent_color |= RB_BLACK;
}

static inline void rb_set_red(struct rb_node *rb)
{
	rb->__rb_parent_color &= ~1UL;
}

/* A missing child counts as black. */
static inline bool rb_black_or_null(const struct rb_node *rb)
{
	return !rb || rb_is_black(rb);
}

/* Make @new the child of @parent that @old was (or the root). */
static void rb_change_child(struct rb_node *old, struct rb_node *new,
			    struct rb_node *parent, struct rb_root *root)
{
	if (!parent)
		root->rb_node = new;
	else if (parent->rb_left == old)
		parent->rb_left = new;
	else
		parent->rb_right = new;
}

/*
 * Rotate @x down to the left: its right child rises into its place.
 * Colours stay with the nodes; the caller recolours.
 */
static void rb_rotate_left(struct rb_node *x, struct rb_root *root,
			   void (*augment_rotate)(struct rb_node *old,
						  struct rb_node *new))
{
	struct rb_node *y = x->rb_right, *parent = rb_parent(x);

	x->rb_right = y->rb_left;
	if (y->rb_left)
		rb_set_parent(y->rb_left, x);
	rb_set_parent(y, parent);
	rb_change_child(x, y, parent, root);
	y->rb_left = x;
	rb_set_parent(x, y);
	augment_rotate(x, y);
}

static void rb_rotate_right(struct rb_node *x, struct rb_root *root,
			    void (*augment_rotate)(struct rb_node *old,
						   struct rb_node *new))
{
	struct rb_node *y = x->rb_left, *parent = rb_parent(x);

	x->rb_left = y->rb_right;
	if (y->rb_right)
		rb_set_parent(y->rb_right, x);
	rb_set_parent(y, parent);
	rb_change_child(x, y, parent, root);
	y->rb_right = x;
	rb_set_parent(x, y);
	augment_rotate(x, y);
}

static void rb_rotate(struct rb_node *x, bool left, struct rb_root *root,
		      void (*augment_rotate)(struct rb_node *old,
					     struct rb_node *new))
{
	if (left)
		rb_rotate_left(x, root, augment_rotate);
	else
		rb_rotate_right(x, root, augment_rotate);
}

static void rb_dummy_propagate(struct rb_node *node, struct rb_node *stop)
{
	(void)node;
	(void)stop;
}

static void rb_dummy_copy(struct rb_node *old, struct rb_node *new)
{
	(void)old;
	(void)new;
}

static void rb_dummy_rotate(struct rb_node *old, struct rb_node *new)
{
	(void)old;
	(void)new;
}

static const struct rb_augment_callbacks rb_dummy_callbacks = {
	.propagate = rb_dummy_propagate,
	.copy = rb_dummy_copy,
	.rotate = rb_dummy_rotate,
};

/*
 * @node was just linked, red. The only invariant that can break is "no
 * red child of a red node", between @node and its parent: push the
 * violation up by recolouring while the uncle is red, then end it with
 * one or two rotations.
 */
void __rb_insert_augmented(struct rb_node *node, struct rb_root *root,
			   void (*augment_rotate)(struct rb_node *old,
						  struct rb_node *new))
{
	struct rb_node *parent;

	while ((parent = rb_parent(node)) && rb_is_red(parent)) {
		/* A red node is never the root: the grandparent exists. */
		struct rb_node *gparent = rb_parent(parent);
		bool left = parent == gparent->rb_left;
		struct rb_node *uncle = left ? gparent->rb_right :
					       gparent->rb_left;

		if (uncle && rb_is_red(uncle)) {
			rb_set_black(parent);
			rb_set_black(uncle);
			rb_set_red(gparent);
			node = gparent;
			continue;
		}
		/* The inner grandchild first becomes the outer one. */
		if (node == (left ? parent->rb_right : parent->rb_left)) {
			rb_rotate(parent, left, root, augment_rotate);
			node = parent;
			parent = rb_parent(node);
		}
		rb_set_black(parent);
		rb_set_red(gparent);
		rb_rotate(gparent, !left, root, augment_rotate);
		break;
	}
	rb_set_black(root->rb_node);
}

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	__rb_insert_augmented(node, root, rb_dummy_rotate);
}

/*
 * A black node left the path below @parent on the side where @node (NULL
 * or black) now is: that side is one black short. Borrow from the
 * sibling's side by rotation, or recolour the sibling red and move the
 * shortage up a level.
 */
static void rb_erase_color(struct rb_node *node, struct rb_node *parent,
			   struct rb_root *root,
			   void (*augment_rotate)(struct rb_node *old,
						  struct rb_node *new))
{
	while (parent && rb_black_or_null(node)) {
		/*
		 * The short side has black height h - 1 >= 0, so the other
		 * side has h >= 1: the sibling exists.
		 */
		bool left = node == parent->rb_left;
		struct rb_node *sib = left ? parent->rb_right : parent->rb_left;
		struct rb_node *near, *far;

		if (rb_is_red(sib)) {
			/* A red sibling: rotate so a black one takes its place. */
			rb_set_black(sib);
			rb_set_red(parent);
			rb_rotate(parent, left, root, augment_rotate);
			sib = left ? parent->rb_right : parent->rb_left;
		}
		near = left ? sib->rb_left : sib->rb_right;
		far = left ? sib->rb_right : sib->rb_left;
		if (rb_black_or_null(near) && rb_black_or_null(far)) {
			rb_set_red(sib);
			node = parent;
			parent = rb_parent(node);
			continue;
		}
		if (rb_black_or_null(far)) {
			/* Make the far nephew the red one. */
			rb_set_black(near);
			rb_set_red(sib);
			rb_rotate(sib, !left, root, augment_rotate);
			sib = left ? parent->rb_right : parent->rb_left;
			far = left ? sib->rb_right : sib->rb_left;
		}
		rb_set_parent_color(sib, rb_parent(sib), rb_color(parent));
		rb_set_black(parent);
		rb_set_black(far);
		rb_rotate(parent, left, root, augment_rotate);
		node = root->rb_node;
		break;
	}
	if (node)
		rb_set_black(node);
}

void rb_erase_augmented(struct rb_node *node, struct rb_root *root,
			const struct rb_augment_callbacks *augment)
{
	struct rb_node *parent = rb_parent(node), *child, *fix;
	bool black;

	if (!node->rb_left || !node->rb_right) {
		/* At most one child: it takes @node's place. */
		child = node->rb_left ? node->rb_left : node->rb_right;
		black = rb_is_black(node);
		rb_change_child(node, child, parent, root);
		if (child)
			rb_set_parent(child, parent);
		fix = parent;
		if (parent)
			augment->propagate(parent, NULL);
	} else {
		/*
		 * Two children: the successor (leftmost of the right subtree,
		 * no left child) takes @node's place and colour, and its own
		 * right child takes the successor's old place.
		 */
		struct rb_node *succ = node->rb_right;

		while (succ->rb_left)
			succ = succ->rb_left;
		child = succ->rb_right;
		black = rb_is_black(succ);
		if (succ == node->rb_right) {
			fix = succ;
		} else {
			fix = rb_parent(succ);
			fix->rb_left = child;
			if (child)
				rb_set_parent(child, fix);
			succ->rb_right = node->rb_right;
			rb_set_parent(node->rb_right, succ);
		}
		succ->rb_left = node->rb_left;
		rb_set_parent(node->rb_left, succ);
		succ->__rb_parent_color = node->__rb_parent_color;
		rb_change_child(node, succ, parent, root);
		/*
		 * The successor heads @node's subtree less @node: start from
		 * @node's value, fix the path below it, then it and above.
		 */
		augment->copy(node, succ);
		if (fix != succ)
			augment->propagate(fix, succ);
		augment->propagate(succ, NULL);
	}
	/* A red node leaving changes no black height. */
	if (!black)
		return;
	if (child && rb_is_red(child))
		rb_set_black(child);
	else
		rb_erase_color(child, fix, root, augment->rotate);
}

void rb_erase(struct rb_node *node, struct rb_root *root)
{
	rb_erase_augmented(node, root, &rb_dummy_callbacks);
}

static struct rb_node *rb_leftmost(struct rb_node *n)
{
	while (n && n->rb_left)
		n = n->rb_left;
	return n;
}

static struct rb_node *rb_rightmost(struct rb_node *n)
{
	while (n && n->rb_right)
		n = n->rb_right;
	return n;
}

struct rb_node *rb_first(const struct rb_root *root)
{
	return rb_leftmost(root->rb_node);
}

struct rb_node *rb_last(const struct rb_root *root)
{
	return rb_rightmost(root->rb_node);
}

struct rb_node *rb_next(const struct rb_node *node)
{
	struct rb_node *parent;

	if (RB_EMPTY_NODE(node))
		return NULL;
	if (node->rb_right)
		return rb_leftmost(node->rb_right);
	/* Up until we arrive from a left subtree. */
	while ((parent = rb_parent(node)) && node == parent->rb_right)
		node = parent;
	return parent;
}

struct rb_node *rb_prev(const struct rb_node *node)
{
	struct rb_node *parent;

	if (RB_EMPTY_NODE(node))
		return NULL;
	if (node->rb_left)
		return rb_rightmost(node->rb_left);
	while ((parent = rb_parent(node)) && node == parent->rb_left)
		node = parent;
	return parent;
}

/* The first node of @n's subtree in postorder: the deepest leftmost leaf. */
static struct rb_node *rb_left_deepest(const struct rb_node *n)
{
	for (;;) {
		if (n->rb_left)
			n = n->rb_left;
		else if (n->rb_right)
			n = n->rb_right;
		else
			return (struct rb_node *)n;
	}
}

struct rb_node *rb_first_postorder(const struct rb_root *root)
{
	return root->rb_node ? rb_left_deepest(root->rb_node) : NULL;
}

struct rb_node *rb_next_postorder(const struct rb_node *node)
{
	struct rb_node *parent;

	if (!node)
		return NULL;
	parent = rb_parent(node);
	/* From a left child, the right subtree comes before the parent. */
	if (parent && node == parent->rb_left && parent->rb_right)
		return rb_left_deepest(parent->rb_right);
	return parent;
}

void rb_replace_node(struct rb_node *victim, struct rb_node *new,
		     struct rb_root *root)
{
	struct rb_node *parent = rb_parent(victim);

	*new = *victim;
	if (victim->rb_left)
		rb_set_parent(victim->rb_left, new);
	if (victim->rb_right)
		rb_set_parent(victim->rb_right, new);
	rb_change_child(victim, new, parent, root);
}
