// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The VA index (core/va.c): every query against a brute-force model over
 * random insertions and removals, with the tree's invariants verified
 * after each step; red-black height bounds on sorted input; vg_va_check()
 * catching corruption; and vg_bo_alloc() placing BOs exactly where the
 * former linear first fit over vm->bos would.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define PG		4096ull
#define MODEL_MAX	256

struct model {
	struct vg_va_tree t;
	struct vg_va_node nodes[MODEL_MAX];
	bool used[MODEL_MAX];
};

/* Live nodes in address order, by selection (MODEL_MAX is small). */
static u32 model_sorted(struct model *m, struct vg_va_node **out)
{
	u32 n = 0, i, j;

	for (i = 0; i < MODEL_MAX; i++)
		if (m->used[i])
			out[n++] = &m->nodes[i];
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (out[j]->start < out[i]->start) {
				struct vg_va_node *t = out[i];

				out[i] = out[j];
				out[j] = t;
			}
	return n;
}

/* The linear first fit bo.c had before the index, over the model. */
static int model_first_fit(struct model *m, u64 size, u64 *start,
			   struct vg_va_node **next)
{
	struct vg_va_node *v[MODEL_MAX];
	u32 n = model_sorted(m, v), i;
	u64 cand = ALIGN(m->t.start, m->t.align);

	for (i = 0; i < n; i++) {
		if (cand + size <= v[i]->start) {
			*start = cand;
			*next = v[i];
			return 0;
		}
		cand = max_t(u64, cand, ALIGN(v[i]->end, m->t.align));
	}
	if (cand + size > m->t.end)
		return -ENOSPC;
	*start = cand;
	*next = NULL;
	return 0;
}

static bool model_overlaps(struct model *m, u64 start, u64 end)
{
	u32 i;

	for (i = 0; i < MODEL_MAX; i++)
		if (m->used[i] && m->nodes[i].start < end &&
		    start < m->nodes[i].end)
			return true;
	return false;
}

/* Every query of the tree against the model, for a few probe addresses. */
static void model_compare(struct model *m, struct vg_rand *r)
{
	struct vg_va_node *v[MODEL_MAX], *n, *tn, *mn;
	u32 nr = model_sorted(m, v), i, k;
	u64 span = m->t.end - m->t.start;

	assert_int_equal(vg_va_check(&m->t), 0);
	assert_int_equal(m->t.count, nr);
	/* In-order iteration is the sorted model. */
	for (i = 0, n = vg_va_first(&m->t); n; n = vg_va_next(n), i++)
		assert_ptr_equal(n, v[i]);
	assert_int_equal(i, nr);
	for (k = 0; k < 8; k++) {
		u64 addr = m->t.start + vg_rand_below(r, (u32)(span / PG)) * PG;
		u64 size = (1 + vg_rand_below(r, 64)) * PG;
		u64 ts = 0, ms = 0;
		int te, me;

		/* lookup: exact starts only. */
		for (mn = NULL, i = 0; i < nr; i++)
			if (v[i]->start == addr)
				mn = v[i];
		assert_ptr_equal(vg_va_lookup(&m->t, addr), mn);
		if (nr) {
			i = vg_rand_below(r, nr);
			assert_ptr_equal(vg_va_lookup(&m->t, v[i]->start), v[i]);
		}
		/* end_after: first node ending above addr. */
		for (mn = NULL, i = 0; i < nr && !mn; i++)
			if (v[i]->end > addr)
				mn = v[i];
		assert_ptr_equal(vg_va_end_after(&m->t, addr), mn);
		/* first fit: same address, same successor, same error. */
		te = vg_va_first_fit(&m->t, size, &ts, &tn);
		me = model_first_fit(m, size, &ms, &mn);
		assert_int_equal(te, me);
		if (!te) {
			assert_int_equal(ts, ms);
			assert_ptr_equal(tn, mn);
		}
	}
}

static void model_run(u64 seed, u64 align, u32 steps)
{
	struct model *m = calloc(1, sizeof(*m));
	struct vg_rand r;
	u32 s;

	assert_non_null(m);
	vg_rand_seed(&r, seed);
	/* Small range, so holes, misfits and -ENOSPC all happen. */
	vg_va_init(&m->t, 1ull << 32, (1ull << 32) + 512 * PG, align);
	for (s = 0; s < steps; s++) {
		u32 op = vg_rand_below(&r, 10), i = vg_rand_below(&r, MODEL_MAX);
		u64 size = (1 + vg_rand_below(&r, 24)) * PG;
		struct vg_va_node *next;
		u64 start;

		if (m->used[i] && op < 4) {
			vg_va_remove(&m->t, &m->nodes[i]);
			m->used[i] = false;
		} else if (!m->used[i] && op < 7) {
			/* First fit, as bo.c does without FIXED_VA. */
			if (vg_va_first_fit(&m->t, size, &start, &next))
				continue;
			assert_true(IS_ALIGNED(start, align));
			assert_false(model_overlaps(m, start, start + size));
			m->nodes[i].start = start;
			m->nodes[i].end = start + size;
			vg_va_insert(&m->t, &m->nodes[i]);
			m->used[i] = true;
		} else if (!m->used[i]) {
			/* A fixed address, page aligned, where it fits. */
			start = m->t.start + vg_rand_below(&r, 512) * PG;
			if (start + size > m->t.end ||
			    model_overlaps(m, start, start + size))
				continue;
			m->nodes[i].start = start;
			m->nodes[i].end = start + size;
			vg_va_insert(&m->t, &m->nodes[i]);
			m->used[i] = true;
		}
		model_compare(m, &r);
	}
	free(m);
}

static void test_model_random(void **state)
{
	u64 seed;

	(void)state;
	for (seed = 1; seed <= 12; seed++)
		model_run(seed, seed % 3 ? 4 * PG : PG, 1500);
}

static struct vg_va_node *va_root(struct vg_va_tree *t)
{
	return rb_entry_safe(t->root.rb_node, struct vg_va_node, rb);
}

/* Nodes on the longest path from the root. */
static u32 va_height(struct vg_va_tree *t)
{
	struct vg_va_node *n;
	u32 h = 0;

	for (n = vg_va_first(t); n; n = vg_va_next(n)) {
		struct rb_node *rb = &n->rb;
		u32 d = 0;

		for (; rb; rb = rb_parent(rb))
			d++;
		h = max(h, d);
	}
	return h;
}

/* Sorted insertion is the worst case of an unbalanced tree. */
static void test_sorted_stays_balanced(void **state)
{
	const u32 n = 4096;
	struct vg_va_node *nodes = calloc(n, sizeof(*nodes));
	struct vg_va_tree t;
	u32 i, dir;

	(void)state;
	assert_non_null(nodes);
	for (dir = 0; dir < 2; dir++) {
		vg_va_init(&t, 0, (u64)n * 2 * PG, PG);
		for (i = 0; i < n; i++) {
			u32 k = dir ? n - 1 - i : i;

			nodes[k].start = (u64)k * 2 * PG;
			nodes[k].end = nodes[k].start + PG;
			vg_va_insert(&t, &nodes[k]);
		}
		assert_int_equal(vg_va_check(&t), 0);
		/* Red-black: height <= 2 log2(n + 1); log2(4097) < 12.001. */
		assert_true(va_height(&t) <= 24);
		/* Every hole is one page: a two-page BO goes to the end. */
		assert_int_equal(va_root(&t)->max_gap, PG);
		/* Remove every other node: holes of three pages appear. */
		for (i = 0; i < n; i += 2)
			vg_va_remove(&t, &nodes[i]);
		assert_int_equal(vg_va_check(&t), 0);
		assert_true(va_height(&t) <= 22);
		assert_int_equal(va_root(&t)->max_gap, 3 * PG);
		for (i = 1; i < n; i += 2)
			vg_va_remove(&t, &nodes[i]);
		assert_null(t.root.rb_node);
		assert_int_equal(t.count, 0);
		assert_int_equal(vg_va_check(&t), 0);
	}
	free(nodes);
}

static void test_first_fit_edges(void **state)
{
	struct vg_va_node a = { .start = 0x10000, .end = 0x11000 };
	struct vg_va_node b = { .start = 0x20000, .end = 0x30000 };
	struct vg_va_node *next;
	struct vg_va_tree t;
	u64 start;

	(void)state;
	vg_va_init(&t, 0x10000, 0x40000, 0x10000);
	/* Empty: the range start; a size beyond the range does not fit. */
	assert_int_equal(vg_va_first_fit(&t, 0x30000, &start, &next), 0);
	assert_int_equal(start, 0x10000);
	assert_null(next);
	assert_int_equal(vg_va_first_fit(&t, 0x30001, &start, &next), -ENOSPC);
	vg_va_insert(&t, &a);
	vg_va_insert(&t, &b);
	/* The hole after a starts at its aligned end, 0x20000: none. */
	assert_int_equal(a.gap, 0);
	assert_int_equal(b.gap, 0);
	assert_int_equal(vg_va_first_fit(&t, 0x1000, &start, &next), 0);
	assert_int_equal(start, 0x30000);
	assert_null(next);
	assert_int_equal(vg_va_first_fit(&t, 0x10001, &start, &next), -ENOSPC);
	/* Without a, the hole before b opens. */
	vg_va_remove(&t, &a);
	assert_int_equal(b.gap, 0x10000);
	assert_int_equal(vg_va_first_fit(&t, 0x10000, &start, &next), 0);
	assert_int_equal(start, 0x10000);
	assert_ptr_equal(next, &b);
	assert_int_equal(vg_va_check(&t), 0);
}

static void test_check_catches_corruption(void **state)
{
	struct vg_va_node n[3] = {
		{ .start = 0x1000, .end = 0x2000 },
		{ .start = 0x4000, .end = 0x5000 },
		{ .start = 0x8000, .end = 0x9000 },
	};
	struct vg_va_tree t;
	u32 i;

	(void)state;
	vg_va_init(&t, 0, 0x10000, 0x1000);
	for (i = 0; i < 3; i++)
		vg_va_insert(&t, &n[i]);
	assert_int_equal(vg_va_check(&t), 0);
	n[2].gap++;
	assert_int_equal(vg_va_check(&t), -EINVAL);
	n[2].gap--;
	va_root(&t)->max_gap++;
	assert_int_equal(vg_va_check(&t), -EINVAL);
	va_root(&t)->max_gap--;
	t.count++;
	assert_int_equal(vg_va_check(&t), -EINVAL);
	t.count--;
	n[1].end = 0x8800;	/* overlaps n[2] */
	assert_int_equal(vg_va_check(&t), -EINVAL);
	n[1].end = 0x5000;
	assert_int_equal(vg_va_check(&t), 0);
}

/* The list walk bo.c used to do, over vm->bos. */
static u64 linear_first_fit(struct vg_vm *vm, u64 size)
{
	u64 align = vm->gpu->chunk_size, cand = ALIGN(VGMEM_VA_START, align);
	struct vg_bo *bo;

	list_for_each_entry(bo, &vm->bos, node) {
		if (cand + size <= bo->va)
			return cand;
		cand = max_t(u64, cand, ALIGN(bo->va + bo->size, align));
	}
	return cand;
}

static bool linear_overlaps(struct vg_vm *vm, u64 va, u64 size)
{
	struct vg_bo *bo;

	list_for_each_entry(bo, &vm->bos, node)
		if (bo->va < va + size && va < bo->va + bo->size)
			return true;
	return false;
}

static void test_bo_alloc_matches_linear(void **state)
{
	const u64 ch = 64 * KiB;
	u64 vas[64] = { 0 };
	struct vg_rand r;
	struct cfx f;
	struct vg_vm *a;
	u32 s;

	(void)state;
	cfx_init(&f, 256 * ch, ch, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	vg_rand_seed(&r, 7);
	for (s = 0; s < 600; s++) {
		u32 i = vg_rand_below(&r, 64);
		u64 size = (1 + vg_rand_below(&r, 40)) * PG, va, want;

		if (vas[i]) {
			assert_int_equal(vg_bo_free(a, vas[i]), 0);
			vas[i] = 0;
			continue;
		}
		if (vg_rand_below(&r, 4)) {
			mutex_lock(&f.gpu->lock);
			want = linear_first_fit(a, size);
			mutex_unlock(&f.gpu->lock);
			va = cfx_alloc(a, size);
			assert_int_equal(va, want);
		} else {
			/* Fixed: succeeds exactly when it overlaps nothing. */
			bool overlap;
			int err;

			va = VGMEM_VA_START + vg_rand_below(&r, 600) * PG;
			mutex_lock(&f.gpu->lock);
			overlap = linear_overlaps(a, va, size);
			mutex_unlock(&f.gpu->lock);
			err = vg_bo_alloc(a, size, VGMEM_BO_FIXED_VA, &va);
			assert_int_equal(err, overlap ? -EINVAL : 0);
			if (err)
				continue;
		}
		vas[i] = va;
		mutex_lock(&f.gpu->lock);
		assert_int_equal(vg_va_check(&a->va), 0);
		assert_ptr_equal(vg_bo_find(a, va)->va, va);
		mutex_unlock(&f.gpu->lock);
	}
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_random),
		cmocka_unit_test(test_sorted_stays_balanced),
		cmocka_unit_test(test_first_fit_edges),
		cmocka_unit_test(test_check_catches_corruption),
		cmocka_unit_test(test_bo_alloc_matches_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
