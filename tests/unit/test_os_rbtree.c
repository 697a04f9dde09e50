// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace twins of the kernel's data structures (os/rbtree.h,
 * os/list.h): red-black trees under random insertions and removals
 * against a sorted array, with every red-black invariant, the in-order
 * walk both ways and an augmented maximum checked after each operation;
 * postorder, cached and replace; list_sort() order and stability on random
 * lists; hash lists added to, removed from and walked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host-module/os/os.h"

static u64 rnd_state;

static u32 rnd_below(u32 n)
{
	/* splitmix64: small, and every seed gives a usable sequence. */
	u64 z = (rnd_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (u32)(((z >> 32) * n) >> 32);
}

/* ---- red-black trees ----------------------------------------------------- */

#define TREE_MAX	512

struct item {
	struct rb_node rb;
	u32 key;
	u32 weight;		/* per-node value */
	u32 max_weight;		/* augmented: largest weight in the subtree */
	bool in;
};

static u32 item_weight(struct item *it)
{
	return it->weight;
}

RB_DECLARE_CALLBACKS_MAX(static, item_cb, struct item, rb, u32, max_weight,
			 item_weight)

struct model {
	struct rb_root root;
	struct item items[TREE_MAX];
	u32 sorted[TREE_MAX];	/* keys in the tree, ascending */
	u32 n;
	bool augmented;
};

static struct item *item_of(struct rb_node *rb)
{
	return rb_entry_safe(rb, struct item, rb);
}

/*
 * Every invariant, recursively (the test's own code, unlike the tree's):
 * parent links, key order within (lo, hi), no red child of a red node,
 * the same black height on both sides, the augmented maximum. Returns
 * the subtree's black height, counting the missing children's level as 0.
 */
static int check_subtree(struct model *m, struct rb_node *rb,
			 struct rb_node *parent, long lo, long hi, u32 *count)
{
	struct item *it;
	int bl, br;

	if (!rb)
		return 0;
	it = item_of(rb);
	assert_ptr_equal(rb_parent(rb), parent);
	assert_true((long)it->key > lo && (long)it->key < hi);
	if (rb_is_red(rb)) {
		assert_true(!rb->rb_left || rb_is_black(rb->rb_left));
		assert_true(!rb->rb_right || rb_is_black(rb->rb_right));
	}
	bl = check_subtree(m, rb->rb_left, rb, lo, it->key, count);
	br = check_subtree(m, rb->rb_right, rb, it->key, hi, count);
	assert_int_equal(bl, br);
	if (m->augmented) {
		u32 mx = it->weight;

		if (rb->rb_left)
			mx = max(mx, item_of(rb->rb_left)->max_weight);
		if (rb->rb_right)
			mx = max(mx, item_of(rb->rb_right)->max_weight);
		assert_int_equal(it->max_weight, mx);
	}
	(*count)++;
	return bl + rb_is_black(rb);
}

static void check_model(struct model *m)
{
	struct rb_node *rb;
	u32 count = 0, i;

	if (m->root.rb_node)
		assert_true(rb_is_black(m->root.rb_node));
	assert_int_equal(RB_EMPTY_ROOT(&m->root), m->n == 0);
	check_subtree(m, m->root.rb_node, NULL, -1, 1L << 40, &count);
	assert_int_equal(count, m->n);
	/* In order forwards and backwards: the sorted reference. */
	for (i = 0, rb = rb_first(&m->root); rb; rb = rb_next(rb), i++) {
		assert_true(i < m->n);
		assert_int_equal(item_of(rb)->key, m->sorted[i]);
	}
	assert_int_equal(i, m->n);
	for (rb = rb_last(&m->root); rb; rb = rb_prev(rb)) {
		assert_true(i > 0);
		assert_int_equal(item_of(rb)->key, m->sorted[--i]);
	}
	assert_int_equal(i, 0);
}

static void model_insert(struct model *m, struct item *it)
{
	struct rb_node **link = &m->root.rb_node, *parent = NULL;
	u32 i;

	while (*link) {
		struct item *p = item_of(*link);

		parent = *link;
		/* The path down gets the new maximum, as callers must do. */
		if (m->augmented && p->max_weight < it->weight)
			p->max_weight = it->weight;
		link = it->key < p->key ? &parent->rb_left : &parent->rb_right;
	}
	it->max_weight = it->weight;
	rb_link_node(&it->rb, parent, link);
	if (m->augmented)
		rb_insert_augmented(&it->rb, &m->root, &item_cb);
	else
		rb_insert_color(&it->rb, &m->root);
	it->in = true;
	for (i = m->n; i > 0 && m->sorted[i - 1] > it->key; i--)
		m->sorted[i] = m->sorted[i - 1];
	m->sorted[i] = it->key;
	m->n++;
}

static void model_erase(struct model *m, struct item *it)
{
	u32 i;

	if (m->augmented)
		rb_erase_augmented(&it->rb, &m->root, &item_cb);
	else
		rb_erase(&it->rb, &m->root);
	RB_CLEAR_NODE(&it->rb);
	assert_true(RB_EMPTY_NODE(&it->rb));
	assert_null(rb_next(&it->rb));
	it->in = false;
	for (i = 0; m->sorted[i] != it->key; i++)
		;
	memmove(&m->sorted[i], &m->sorted[i + 1],
		(m->n - i - 1) * sizeof(m->sorted[0]));
	m->n--;
}

/* item i has key 2 * i + 1, so probes between keys miss. */
static void model_run(u64 seed, bool augmented, u32 steps)
{
	struct model *m = calloc(1, sizeof(*m));
	u32 s, i, height_bound;

	assert_non_null(m);
	rnd_state = seed;
	m->root = RB_ROOT;
	m->augmented = augmented;
	for (i = 0; i < TREE_MAX; i++) {
		m->items[i].key = 2 * i + 1;
		RB_CLEAR_NODE(&m->items[i].rb);
	}
	for (s = 0; s < steps; s++) {
		/* Drift between growing and shrinking phases. */
		bool grow = (s / 700) % 2 == 0;
		struct item *it = &m->items[rnd_below(TREE_MAX)];

		if (!it->in && rnd_below(4) < (grow ? 3u : 1u)) {
			it->weight = rnd_below(1000);
			model_insert(m, it);
		} else if (it->in && rnd_below(4) < (grow ? 1u : 3u)) {
			model_erase(m, it);
		} else if (it->in && augmented) {
			/* A node's own value changes: propagate it up. */
			it->weight = rnd_below(1000);
			item_cb.propagate(&it->rb, NULL);
		} else {
			continue;
		}
		check_model(m);
	}
	/* Height is at most 2 log2(n + 1): deepest leaf by walking up. */
	height_bound = 2 * (u32)ilog2(2 * (m->n + 1));
	for (i = 0; i < TREE_MAX; i++) {
		struct rb_node *rb = &m->items[i].rb;
		u32 depth = 0;

		if (!m->items[i].in)
			continue;
		for (; rb; rb = rb_parent(rb))
			depth++;
		assert_true(depth <= height_bound);
	}
	free(m);
}

static void test_rbtree_random(void **state)
{
	u64 seed;

	(void)state;
	for (seed = 1; seed <= 8; seed++)
		model_run(seed, false, 4000);
}

static void test_rbtree_augmented_random(void **state)
{
	u64 seed;

	(void)state;
	for (seed = 100; seed <= 107; seed++)
		model_run(seed, true, 4000);
}

/* Ascending and descending insertion, then removal from either end. */
static void test_rbtree_sorted(void **state)
{
	struct model *m = calloc(1, sizeof(*m));
	u32 dir, i;

	(void)state;
	assert_non_null(m);
	for (dir = 0; dir < 4; dir++) {
		memset(m, 0, sizeof(*m));
		m->root = RB_ROOT;
		m->augmented = dir & 1;
		for (i = 0; i < TREE_MAX; i++) {
			struct item *it = &m->items[dir & 2 ? TREE_MAX - 1 - i : i];

			it->key = 2 * (u32)(it - m->items) + 1;
			it->weight = i;
			model_insert(m, it);
		}
		check_model(m);
		for (i = 0; i < TREE_MAX; i++) {
			model_erase(m, &m->items[dir & 2 ? i : TREE_MAX - 1 - i]);
			if (i % 37 == 0)
				check_model(m);
		}
		assert_true(RB_EMPTY_ROOT(&m->root));
		assert_null(rb_first(&m->root));
		assert_null(rb_last(&m->root));
	}
	free(m);
}

static void test_rbtree_postorder_replace_cached(void **state)
{
	struct rb_root_cached croot = RB_ROOT_CACHED;
	struct model *m = calloc(1, sizeof(*m));
	struct item *pos, *n, spare = { .key = 0 };
	struct rb_node *rb;
	u32 i, seen = 0;

	(void)state;
	assert_non_null(m);
	m->root = RB_ROOT;
	for (i = 0; i < 100; i++)
		m->items[i].key = 2 * i + 1;
	/* 37 is prime to 100: every item once, in a scattered order. */
	for (i = 0; i < 100; i++)
		model_insert(m, &m->items[i * 37 % 100]);
	/* Postorder: each node after both its children. */
	rbtree_postorder_for_each_entry_safe(pos, n, &m->root, rb) {
		if (pos->rb.rb_left)
			assert_true(item_of(pos->rb.rb_left)->in == false);
		if (pos->rb.rb_right)
			assert_true(item_of(pos->rb.rb_right)->in == false);
		pos->in = false;	/* "visited" */
		seen++;
	}
	assert_int_equal(seen, 100);
	for (i = 0; i < 100; i++)
		m->items[i].in = true;
	/* A replacement with the same key keeps the shape and order. */
	spare.key = m->items[50].key;
	rb_replace_node(&m->items[50].rb, &spare.rb, &m->root);
	m->augmented = false;
	check_model(m);
	rb = rb_first(&m->root);
	for (i = 0; i < 50; i++)
		rb = rb_next(rb);
	assert_ptr_equal(rb, &spare.rb);

	/* Cached leftmost: inserted descending, each new node is first. */
	memset(m, 0, sizeof(*m));
	for (i = 0; i < 64; i++) {
		struct item *it = &m->items[63 - i];
		struct rb_node **link = &croot.rb_root.rb_node, *parent = NULL;
		bool leftmost = true;

		it->key = 63 - i;
		while (*link) {
			parent = *link;
			if (it->key < item_of(parent)->key) {
				link = &parent->rb_left;
			} else {
				link = &parent->rb_right;
				leftmost = false;
			}
		}
		rb_link_node(&it->rb, parent, link);
		rb_insert_color_cached(&it->rb, &croot, leftmost);
		assert_ptr_equal(rb_first_cached(&croot), &it->rb);
	}
	assert_ptr_equal(rb_first_cached(&croot), rb_first(&croot.rb_root));
	/* Erasing the leftmost returns the next one; others return NULL. */
	assert_ptr_equal(rb_erase_cached(&m->items[0].rb, &croot),
			 &m->items[1].rb);
	assert_null(rb_erase_cached(&m->items[30].rb, &croot));
	assert_ptr_equal(rb_first_cached(&croot), &m->items[1].rb);
	free(m);
}

/* ---- list_sort ------------------------------------------------------------ */

struct elem {
	struct list_head node;
	u32 key;
	u32 seq;		/* input position, for stability */
};

static unsigned long sort_cmps;

static int elem_cmp(void *priv, const struct list_head *a,
		    const struct list_head *b)
{
	const struct elem *ea = list_entry(a, struct elem, node);
	const struct elem *eb = list_entry(b, struct elem, node);

	assert_ptr_equal(priv, &sort_cmps);
	/* The kernel's promise: @a came first in the input. */
	assert_true(ea->seq < eb->seq);
	sort_cmps++;
	return ea->key > eb->key;
}

static void test_list_sort(void **state)
{
	static const u32 sizes[] = { 0, 1, 2, 3, 7, 8, 9, 64, 100, 1000, 4097 };
	struct elem *e = calloc(4097, sizeof(*e));
	u32 s, i;

	(void)state;
	assert_non_null(e);
	rnd_state = 9;
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		u32 n = sizes[s], range = s % 2 ? 4 : 1u << 20;
		struct elem *p, *prev = NULL;
		LIST_HEAD(head);

		for (i = 0; i < n; i++) {
			/* Few distinct keys in every other size: many ties. */
			e[i].key = rnd_below(range);
			e[i].seq = i;
			list_add_tail(&e[i].node, &head);
		}
		sort_cmps = 0;
		list_sort(&sort_cmps, &head, elem_cmp);
		i = 0;
		list_for_each_entry(p, &head, node) {
			if (prev) {
				assert_true(prev->key <= p->key);
				if (prev->key == p->key)
					assert_true(prev->seq < p->seq);
			}
			/* ->prev links rebuilt. */
			assert_ptr_equal(p->node.prev,
					 prev ? &prev->node : &head);
			prev = p;
			i++;
		}
		assert_int_equal(i, n);
		assert_ptr_equal(head.prev, prev ? &prev->node : &head);
		/* O(n log n): at most n * ceil(log2 n) comparisons. */
		if (n > 1)
			assert_true(sort_cmps <= (unsigned long)n *
					(unsigned long)(ilog2(n - 1) + 1));
	}
	free(e);
}

/* ---- hash lists ----------------------------------------------------------- */

struct hent {
	struct hlist_node hnode;
	u32 v;
};

static u32 hlist_values(struct hlist_head *h, u32 *out)
{
	struct hent *p;
	u32 n = 0;

	hlist_for_each_entry(p, h, hnode)
		out[n++] = p->v;
	return n;
}

static void test_hlist(void **state)
{
	struct hent e[6], *p;
	struct hlist_node *tmp;	/* as in the kernel: the next node, not entry */
	HLIST_HEAD(h);
	struct hlist_head h2;
	u32 out[6], n, i;

	(void)state;
	INIT_HLIST_HEAD(&h2);
	assert_true(hlist_empty(&h));
	assert_true(hlist_empty(&h2));
	for (i = 0; i < 6; i++) {
		e[i].v = i;
		INIT_HLIST_NODE(&e[i].hnode);
		assert_true(hlist_unhashed(&e[i].hnode));
		hlist_add_head(&e[i].hnode, &h);
		assert_false(hlist_unhashed(&e[i].hnode));
	}
	/* Stack order: the last added first. */
	n = hlist_values(&h, out);
	assert_int_equal(n, 6);
	for (i = 0; i < 6; i++)
		assert_int_equal(out[i], 5 - i);
	/* Remove the head, a middle node and the tail. */
	hlist_del(&e[5].hnode);
	hlist_del_init(&e[2].hnode);
	assert_true(hlist_unhashed(&e[2].hnode));
	hlist_del_init(&e[2].hnode);	/* unhashed: a no-op */
	hlist_del_init(&e[0].hnode);
	n = hlist_values(&h, out);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 4);
	assert_int_equal(out[1], 3);
	assert_int_equal(out[2], 1);
	/* Safe walk: move every odd one to the other list as we go. */
	hlist_for_each_entry_safe(p, tmp, &h, hnode) {
		if (p->v % 2) {
			hlist_del(&p->hnode);
			hlist_add_head(&p->hnode, &h2);
		}
	}
	n = hlist_values(&h, out);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 4);
	n = hlist_values(&h2, out);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 3);
	assert_ptr_equal(hlist_entry(h2.first, struct hent, hnode), &e[1]);
	hlist_for_each_entry_safe(p, tmp, &h2, hnode)
		hlist_del_init(&p->hnode);
	hlist_del(&e[4].hnode);
	assert_true(hlist_empty(&h));
	assert_true(hlist_empty(&h2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rbtree_random),
		cmocka_unit_test(test_rbtree_augmented_random),
		cmocka_unit_test(test_rbtree_sorted),
		cmocka_unit_test(test_rbtree_postorder_replace_cached),
		cmocka_unit_test(test_list_sort),
		cmocka_unit_test(test_hlist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
