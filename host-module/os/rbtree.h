/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Userspace red-black trees with the names and semantics of the kernel's
 * <linux/rbtree.h> and <linux/rbtree_augmented.h>, written for this
 * project (os_user_rbtree.c). Included by os_user.h only; the kernel build
 * uses the real ones, so portable code sees one API in both.
 *
 * As in the kernel the tree is intrusive and does no searching: the caller
 * walks rb_left/rb_right to find the link where a new node belongs, puts it
 * there with rb_link_node() and recolours with rb_insert_color(). A node's
 * parent pointer and colour share one word (__rb_parent_color, the colour
 * in bit 0: nodes are aligned to at least 4 bytes), so struct rb_node has
 * the kernel's size and layout.
 *
 * Augmented trees keep a value per node computed from its subtree (say the
 * largest hole in it): rb_insert_augmented()/rb_erase_augmented() call the
 * caller's callbacks at every rotation, and RB_DECLARE_CALLBACKS_MAX()
 * builds those callbacks for a maximum, as the kernel's macro does.
 */
#ifndef VGMEM_OS_RBTREE_H
#define VGMEM_OS_RBTREE_H

#ifndef VGMEM_OS_USER_H
#error "include os.h, not rbtree.h"
#endif

struct rb_node {
	unsigned long __rb_parent_color;
	struct rb_node *rb_right;
	struct rb_node *rb_left;
} __aligned(sizeof(long));

struct rb_root {
	struct rb_node *rb_node;
};

/* A tree that also knows its leftmost node: rb_first_cached() is O(1). */
struct rb_root_cached {
	struct rb_root rb_root;
	struct rb_node *rb_leftmost;
};

#define RB_ROOT		(struct rb_root) { NULL, }
#define RB_ROOT_CACHED	(struct rb_root_cached) { { NULL, }, NULL }

#define RB_RED		0
#define RB_BLACK	1

#define __rb_parent(pc)		((struct rb_node *)((pc) & ~3UL))
#define __rb_color(pc)		((pc) & 1)
#define __rb_is_black(pc)	__rb_color(pc)
#define __rb_is_red(pc)		(!__rb_color(pc))
#define rb_parent(r)		__rb_parent((r)->__rb_parent_color)
#define rb_color(rb)		__rb_color((rb)->__rb_parent_color)
#define rb_is_red(rb)		__rb_is_red((rb)->__rb_parent_color)
#define rb_is_black(rb)		__rb_is_black((rb)->__rb_parent_color)

#define rb_entry(ptr, type, member)	container_of(ptr, type, member)
#define rb_entry_safe(ptr, type, member) ({				\
	typeof(ptr) __os_rb = (ptr);					\
	__os_rb ? rb_entry(__os_rb, type, member) : NULL; })

#define RB_EMPTY_ROOT(root)	(READ_ONCE((root)->rb_node) == NULL)
/* A node known to be in no tree points at itself (RB_CLEAR_NODE()). */
#define RB_EMPTY_NODE(node) \
	((node)->__rb_parent_color == (unsigned long)(node))
#define RB_CLEAR_NODE(node) \
	((node)->__rb_parent_color = (unsigned long)(node))

static inline void rb_set_parent(struct rb_node *rb, struct rb_node *p)
{
	rb->__rb_parent_color = rb_color(rb) | (unsigned long)p;
}

static inline void rb_set_parent_color(struct rb_node *rb, struct rb_node *p,
				       int color)
{
	rb->__rb_parent_color = (unsigned long)p | (unsigned long)color;
}

/* Put @node, red and childless, at *@rb_link below @parent. */
static inline void rb_link_node(struct rb_node *node, struct rb_node *parent,
				struct rb_node **rb_link)
{
	node->__rb_parent_color = (unsigned long)parent;
	node->rb_left = NULL;
	node->rb_right = NULL;
	*rb_link = node;
}

void rb_insert_color(struct rb_node *node, struct rb_root *root);
void rb_erase(struct rb_node *node, struct rb_root *root);

/* In-order neighbours and ends; NULL past either end or for an empty tree. */
struct rb_node *rb_next(const struct rb_node *node);
struct rb_node *rb_prev(const struct rb_node *node);
struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_last(const struct rb_root *root);

/* Children before their parent: a whole tree can be freed on the way. */
struct rb_node *rb_first_postorder(const struct rb_root *root);
struct rb_node *rb_next_postorder(const struct rb_node *node);

#define rbtree_postorder_for_each_entry_safe(pos, n, root, field)	\
	for (pos = rb_entry_safe(rb_first_postorder(root), typeof(*pos), field); \
	     pos && ({ n = rb_entry_safe(rb_next_postorder(&pos->field),	\
					 typeof(*pos), field); 1; });	\
	     pos = n)

/* @new takes @victim's place (same key: the order must not change). */
void rb_replace_node(struct rb_node *victim, struct rb_node *new,
		     struct rb_root *root);

#define rb_first_cached(root)	(root)->rb_leftmost

/* @leftmost: the caller's descent never went right, @node is the new first. */
static inline void rb_insert_color_cached(struct rb_node *node,
					  struct rb_root_cached *root,
					  bool leftmost)
{
	if (leftmost)
		root->rb_leftmost = node;
	rb_insert_color(node, &root->rb_root);
}

/* Returns the new leftmost node if @node was it, else NULL. */
static inline struct rb_node *rb_erase_cached(struct rb_node *node,
					      struct rb_root_cached *root)
{
	struct rb_node *leftmost = NULL;

	if (root->rb_leftmost == node)
		leftmost = root->rb_leftmost = rb_next(node);
	rb_erase(node, &root->rb_root);
	return leftmost;
}

/* ---- augmented trees (<linux/rbtree_augmented.h>) ---------------------- */
/*
 * propagate(node, stop): recompute from @node up to, not including, @stop
 * (NULL: the root), and may end early where a value did not change.
 * copy(old, new): @new took @old's place, subtree and all.
 * rotate(old, new): @new rose above @old in a rotation: @new now heads the
 * subtree @old headed, and @old's own subtree changed.
 */
struct rb_augment_callbacks {
	void (*propagate)(struct rb_node *node, struct rb_node *stop);
	void (*copy)(struct rb_node *old, struct rb_node *new);
	void (*rotate)(struct rb_node *old, struct rb_node *new);
};

void __rb_insert_augmented(struct rb_node *node, struct rb_root *root,
			   void (*augment_rotate)(struct rb_node *old,
						  struct rb_node *new));

/*
 * The caller updates the augmented values on the path down to the new
 * node first (it was walking that path anyway), links it, then calls this
 * instead of rb_insert_color().
 */
static inline void rb_insert_augmented(struct rb_node *node,
				       struct rb_root *root,
				       const struct rb_augment_callbacks *augment)
{
	__rb_insert_augmented(node, root, augment->rotate);
}

/* rb_erase() that keeps every remaining node's augmented value right. */
void rb_erase_augmented(struct rb_node *node, struct rb_root *root,
			const struct rb_augment_callbacks *augment);

/*
 * Callbacks named RBNAME for nodes of type RBSTRUCT (their struct rb_node
 * is RBFIELD) whose RBAUGMENTED field is recomputed by
 * RBCOMPUTE(node, exit), which returns true, leaving the node alone, when
 * @exit is set and the value would not change. Like the kernel's, the
 * macro ends its own declaration: no semicolon after it.
 */
#define RB_DECLARE_CALLBACKS(RBSTATIC, RBNAME, RBSTRUCT, RBFIELD,	\
			     RBAUGMENTED, RBCOMPUTE)			\
static inline void RBNAME ## _propagate(struct rb_node *rb,		\
					struct rb_node *stop)		\
{									\
	for (; rb != stop; rb = rb_parent(rb))				\
		if (RBCOMPUTE(rb_entry(rb, RBSTRUCT, RBFIELD), true))	\
			break;						\
}									\
static inline void RBNAME ## _copy(struct rb_node *rb_old,		\
				   struct rb_node *rb_new)		\
{									\
	rb_entry(rb_new, RBSTRUCT, RBFIELD)->RBAUGMENTED =		\
		rb_entry(rb_old, RBSTRUCT, RBFIELD)->RBAUGMENTED;	\
}									\
static void RBNAME ## _rotate(struct rb_node *rb_old,			\
			      struct rb_node *rb_new)			\
{									\
	RBNAME ## _copy(rb_old, rb_new);				\
	RBCOMPUTE(rb_entry(rb_old, RBSTRUCT, RBFIELD), false);		\
}									\
RBSTATIC const struct rb_augment_callbacks RBNAME = {			\
	.propagate = RBNAME ## _propagate,				\
	.copy = RBNAME ## _copy,					\
	.rotate = RBNAME ## _rotate,					\
};

/*
 * The same for a maximum: RBAUGMENTED (of type RBTYPE) is the largest
 * RBCOMPUTE(node) over the node's subtree.
 */
#define RB_DECLARE_CALLBACKS_MAX(RBSTATIC, RBNAME, RBSTRUCT, RBFIELD,	\
				 RBTYPE, RBAUGMENTED, RBCOMPUTE)	\
static inline bool RBNAME ## _compute_max(RBSTRUCT *node, bool exit)	\
{									\
	struct rb_node *kid[2] = { node->RBFIELD.rb_left,		\
				   node->RBFIELD.rb_right };		\
	RBTYPE max = RBCOMPUTE(node);					\
	unsigned int i;							\
									\
	for (i = 0; i < 2; i++) {					\
		RBSTRUCT *c = rb_entry_safe(kid[i], RBSTRUCT, RBFIELD);	\
									\
		if (c && c->RBAUGMENTED > max)				\
			max = c->RBAUGMENTED;				\
	}								\
	if (exit && node->RBAUGMENTED == max)				\
		return true;						\
	node->RBAUGMENTED = max;					\
	return false;							\
}									\
RB_DECLARE_CALLBACKS(RBSTATIC, RBNAME, RBSTRUCT, RBFIELD, RBAUGMENTED,	\
		     RBNAME ## _compute_max)

#endif /* VGMEM_OS_RBTREE_H */
