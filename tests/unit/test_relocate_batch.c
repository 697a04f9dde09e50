// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What keeps reduce-and-relocate cheap per chunk must not change what it
 * does:
 *  - the reducer heapifies only the k + 1 best VMs for a call that needs
 *    k chunks and widens to every VM when one left out may rank first: its
 *    picks equal a naive "most above its entitlement, ties to the oldest"
 *    loop over every VM, in configurations with tail chunks and VMs that
 *    run out (which force the widening, and the test checks they did);
 *  - the chain of VMs with marks: vg_relocate_marked() takes them in
 *    creation order whatever order they were marked in, and a failure
 *    leaves no mark and an empty chain;
 *  - the per-GPU copy list: relocations above its size and below it, one
 *    after the other, move every byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CH	(64 * KiB)
#define PAGE	(4 * KiB)

/* ---- the reducer against a naive reference ----------------------------- */

struct ref_vm {
	struct vg_vm *vm;
	s64 key;
	struct list_head *next;		/* next resident chunk (LRA) */
	u32 left;
	u32 rank;			/* by key before the call: 0 = first */
};

static bool ref_above(const struct ref_vm *a, const struct ref_vm *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	return a->vm->order < b->vm->order;
}

/*
 * The picks GPUswap's rule makes, one full scan per pick, under LRA.
 * Returns how many were made (*got bytes), or -1 if need is not reachable.
 * *late is set if a VM outside the first k by key got picked (the case
 * the reducer's selection must widen for).
 */
static int ref_reduce(struct vg_gpu *gpu, struct ref_vm *r, u32 n, u64 need,
		      struct vg_chunk **picks, u32 max, bool *late)
{
	u64 got = 0, k = (need + CH - 1) / CH;
	u32 i, j, np = 0;

	for (i = 0; i < n; i++) {
		struct vg_vm *vm = r[i].vm;

		r[i].key = (s64)vm->resident - (s64)vg_vm_entitlement(vm);
		r[i].next = vm->resident_list.next;
		r[i].left = vm->res_nr;
	}
	for (i = 0; i < n; i++) {
		r[i].rank = 0;
		for (j = 0; j < n; j++)
			if (j != i && ref_above(&r[j], &r[i]))
				r[i].rank++;
	}
	(void)gpu;
	*late = false;
	while (got < need) {
		struct ref_vm *best = NULL;
		struct vg_chunk *c;

		for (i = 0; i < n; i++)
			if (r[i].left && (!best || ref_above(&r[i], best)))
				best = &r[i];
		if (!best)
			return -1;
		if (best->rank >= k)
			*late = true;
		c = list_entry(best->next, struct vg_chunk, node);
		best->next = best->next->next;
		best->left--;
		best->key -= (s64)c->size;
		got += c->size;
		assert_true(np < max);
		picks[np++] = c;
	}
	return (int)np;
}

static void test_reduce_matches_reference(void **state)
{
	struct vg_gpu_config gcfg = {
		.name = "ref", .chunk_size = CH, .policy = VG_POLICY_LRA,
		.seed = 1, .no_return_worker = true,
	};
	struct vg_vm_config vcfg = { .name = NULL };
	struct vg_plan plan;
	struct vg_rand rnd;
	u32 cfg, lates = 0, fails = 0, runs = 0;

	(void)state;
	vg_rand_seed(&rnd, 20240611);
	for (cfg = 0; cfg < 40; cfg++) {
		u32 nvm = 20 + vg_rand_below(&rnd, 100), i, j, np;
		u64 vram = 0, need, total = 0;
		struct vg_chunk **picks;
		struct fake_gpu *fb;
		struct ref_vm *ref;
		struct vg_gpu *gpu;
		u64 *sizes;
		bool late;
		int err;

		/* Up to 3 BOs a VM, 4 KiB to 3 chunks: many tail chunks. */
		sizes = calloc((size_t)nvm * 3, sizeof(*sizes));
		ref = calloc(nvm, sizeof(*ref));
		picks = calloc(nvm * 12, sizeof(*picks));
		assert_true(sizes && ref && picks);
		for (i = 0; i < nvm * 3; i++) {
			/*
			 * Every third configuration, all VMs alike with a
			 * one-page BO first: equal keys, and LRA takes the
			 * small chunks first, so picks outnumber chunks
			 * needed and go to VMs beyond the first k.
			 */
			if (cfg % 3 == 0 && i >= 3)
				sizes[i] = sizes[i % 3];
			else if (cfg % 3 == 0 && i == 0)
				sizes[i] = PAGE;
			else if (vg_rand_below(&rnd, 3))
				sizes[i] = PAGE * (1 + vg_rand_below(&rnd, 48));
			vram += (sizes[i] + CH - 1) / CH * CH;
		}
		fb = fake_create(vram + CH);
		assert_non_null(fb);
		assert_int_equal(vg_gpu_create(&gcfg, &fake_ops, fb, &gpu), 0);
		for (i = 0; i < nvm; i++) {
			u64 va;

			assert_int_equal(vg_vm_create(gpu, &vcfg, &ref[i].vm), 0);
			for (j = 0; j < 3; j++)
				if (sizes[i * 3 + j])
					assert_int_equal(vg_bo_alloc(ref[i].vm,
						sizes[i * 3 + j], 0, &va), 0);
			if (i % 4 == 1 && cfg % 3)
				assert_int_equal(vg_vm_set_entitlement(ref[i].vm,
					PAGE * (1 + vg_rand_below(&rnd, 64))), 0);
			total += ref[i].vm->resident;
		}
		/* Mostly a few chunks, as allocations are; sometimes all. */
		need = PAGE * (1 + vg_rand_below(&rnd, 16 * CH / PAGE));
		if (cfg % 8 == 7)
			need = total + PAGE * (cfg % 16 == 7);

		mutex_lock(&gpu->lock);
		np = 0;
		err = ref_reduce(gpu, ref, nvm, need, picks, nvm * 12, &late);
		if (err >= 0)
			np = (u32)err;
		assert_int_equal(vg_reduce(gpu, ref[nvm / 2].vm, NULL, need,
					   &plan), err < 0 ? -ENOMEM : 0);
		runs++;
		fails += err < 0;
		lates += err >= 0 && late;
		/* Each VM's marks are its picks, in pick order. */
		for (i = 0; i < nvm; i++) {
			struct vg_vm *vm = ref[i].vm;
			struct vg_chunk *c;
			u32 p = 0;

			list_for_each_entry(c, &vm->marked, mark_node) {
				while (p < np && picks[p]->bo->vm != vm)
					p++;
				assert_true(p < np);
				assert_ptr_equal(picks[p], c);
				p++;
			}
			while (p < np && picks[p]->bo->vm != vm)
				p++;
			assert_int_equal(p, np);
		}
		assert_int_equal(vg_gpu_has_marks(gpu), np > 0);
		vg_unmark_gpu(gpu);
		assert_false(vg_gpu_has_marks(gpu));
		mutex_unlock(&gpu->lock);
		assert_int_equal(vg_gpu_check(gpu), 0);

		for (i = 0; i < nvm; i++)
			vg_vm_destroy(ref[i].vm);
		vg_gpu_destroy(gpu);
		assert_int_equal(fake_leaks(fb), 0);
		fake_destroy(fb);
		free(sizes);
		free(ref);
		free(picks);
	}
	/* The configurations did reach the widening and the failure. */
	assert_true(lates > 0);
	assert_true(fails > 0);
	assert_true(runs - fails - lates > 0);
}

/* ---- the chain of VMs with marks --------------------------------------- */

#define NVM	6

struct order_log {
	struct vg_vm *vm[16];
	u32 n;
};

static void on_relocated(void *priv, struct vg_vm *vm, enum vg_loc to,
			 u32 chunks, u64 bytes, u64 suspend_ns)
{
	struct order_log *log = priv;

	(void)to; (void)chunks; (void)bytes; (void)suspend_ns;
	if (log->n < 16)
		log->vm[log->n++] = vm;
}

static const struct vg_gpu_events log_events = {
	.relocated = on_relocated,
};

struct bfx {
	struct cfx c;		/* c.vm[i] holds bo[i] */
	struct vg_bo *bo[NVM];
	struct order_log log;
};

/* NVM VMs of nchunks chunks each, the last one 4 KiB short. */
static void bfx_init(struct bfx *f, u32 nchunks)
{
	struct cfx_opts o = {
		.name = "batch", .vram = (u64)NVM * nchunks * CH, .chunk = CH,
		.policy = VG_POLICY_LRA, .seed = 1,
		.events = &log_events, .events_priv = &f->log,
	};
	u32 i;

	memset(f, 0, sizeof(*f));
	cfx_init_opts(&f->c, &o);
	for (i = 0; i < NVM; i++) {
		u64 va;

		assert_int_equal(vg_bo_alloc(cfx_vm(&f->c, NULL),
					     nchunks * CH - PAGE, 0, &va), 0);
		f->bo[i] = cfx_bo(f->c.vm[i], va);
		assert_non_null(f->bo[i]);
	}
}

static void bfx_fini(struct bfx *f)
{
	cfx_fini(&f->c);
}

/* Mark chunks [from, to) of VM i's BO. gpu->lock held. */
static void mark_range(struct bfx *f, u32 i, u32 from, u32 to)
{
	for (; from < to; from++)
		vg_chunk_mark(&f->bo[i]->chunks[from]);
}

static void test_relocate_in_creation_order(void **state)
{
	static const u32 marks[] = { 5, 2, 4, 0 };
	struct bfx f;
	u32 i;

	(void)state;
	bfx_init(&f, 4);
	mutex_lock(&f.c.gpu->lock);
	assert_false(vg_gpu_has_marks(f.c.gpu));
	/* Marked newest first, one VM twice, interleaved. */
	for (i = 0; i < 4; i++)
		mark_range(&f, marks[i], 0, 1);
	mark_range(&f, 2, 1, 4);
	assert_true(vg_gpu_has_marks(f.c.gpu));
	/* A VM whose marks are gone again leaves the chain. */
	mark_range(&f, 3, 0, 2);
	vg_unmark_all(f.c.vm[3]);
	assert_int_equal(vg_relocate_marked(f.c.gpu, VG_LOC_HOST), 0);
	assert_false(vg_gpu_has_marks(f.c.gpu));
	mutex_unlock(&f.c.gpu->lock);

	assert_int_equal(f.log.n, 4);
	assert_ptr_equal(f.log.vm[0], f.c.vm[0]);
	assert_ptr_equal(f.log.vm[1], f.c.vm[2]);
	assert_ptr_equal(f.log.vm[2], f.c.vm[4]);
	assert_ptr_equal(f.log.vm[3], f.c.vm[5]);
	assert_int_equal(cfx_stats(f.c.vm[2]).relocated, 4 * CH - PAGE);
	assert_int_equal(cfx_stats(f.c.vm[3]).relocated, 0);
	assert_int_equal(cfx_stats(f.c.vm[5]).relocated, CH);
	assert_int_equal(fake_count(f.c.fb, FAKE_OP_COPY_SUBMIT), 4);
	bfx_fini(&f);
}

/*
 * The second VM (in creation order) fails: the first keeps its new place,
 * no VM keeps a mark, the chain is empty and the next reduction runs.
 */
static void test_relocate_failure_clears_chain(void **state)
{
	struct vg_plan plan;
	struct bfx f;
	u32 i;

	(void)state;
	bfx_init(&f, 4);
	mutex_lock(&f.c.gpu->lock);
	for (i = NVM; i-- > 0;)
		mark_range(&f, i, 0, 2);
	/* vm0 takes host allocations 1 and 2; vm1's first one fails. */
	fake_fail(f.c.fb, FAKE_OP_MEM_ALLOC_HOST, 3);
	assert_int_equal(vg_relocate_marked(f.c.gpu, VG_LOC_HOST), -ENOMEM);
	assert_false(vg_gpu_has_marks(f.c.gpu));
	for (i = 0; i < NVM; i++) {
		assert_true(list_empty(&f.c.vm[i]->marked));
		assert_int_equal(f.c.vm[i]->marked_bytes, 0);
	}
	assert_int_equal(f.c.vm[0]->relocated, 2 * CH);
	for (i = 1; i < NVM; i++)
		assert_int_equal(f.c.vm[i]->relocated, 0);
	assert_int_equal(vg_reduce(f.c.gpu, f.c.vm[0], NULL, CH, &plan), 0);
	assert_true(vg_gpu_has_marks(f.c.gpu));
	vg_unmark_gpu(f.c.gpu);
	mutex_unlock(&f.c.gpu->lock);
	/*
	 * Only vm0 moved (one relocated event). The failure is logged, not
	 * a WARN: the fixture's teardown checks that none fired.
	 */
	assert_int_equal(f.log.n, 1);
	assert_ptr_equal(f.log.vm[0], f.c.vm[0]);
	bfx_fini(&f);
}

/* ---- the copy list ----------------------------------------------------- */

static void fill(struct bfx *f, u32 i, u32 seed)
{
	struct vg_bo *bo = f->bo[i];
	u8 *buf = malloc(bo->size);
	u64 k;

	assert_non_null(buf);
	for (k = 0; k < bo->size; k++)
		buf[k] = (u8)(k * 31 + seed + (k >> 12));
	assert_int_equal(fake_va_rw(f->c.fb, f->c.vm[i]->as, bo->va, buf,
				    bo->size, true), 0);
	free(buf);
}

static void check(struct bfx *f, u32 i, u32 seed)
{
	struct vg_bo *bo = f->bo[i];
	u8 *buf = malloc(bo->size);
	u64 k;

	assert_non_null(buf);
	assert_int_equal(fake_va_rw(f->c.fb, f->c.vm[i]->as, bo->va, buf,
				    bo->size, false), 0);
	for (k = 0; k < bo->size; k++)
		assert_int_equal(buf[k], (u8)(k * 31 + seed + (k >> 12)));
	free(buf);
}

/* 300 chunks (an allocated list), then 3 and 256 (the kept one), and back. */
static void test_copy_list_sizes(void **state)
{
	static const u32 n[] = { 300, 3, 256, 257 };
	struct bfx f;
	u32 i;

	(void)state;
	bfx_init(&f, 300);
	for (i = 0; i < 4; i++)
		fill(&f, i, i);
	for (i = 0; i < 4; i++) {
		mutex_lock(&f.c.gpu->lock);
		mark_range(&f, i, 0, n[i]);
		assert_int_equal(vg_relocate_marked(f.c.gpu, VG_LOC_HOST), 0);
		mutex_unlock(&f.c.gpu->lock);
		check(&f, i, i);
	}
	assert_int_equal(fake_count(f.c.fb, FAKE_OP_COPY_SUBMIT), 4);
	for (i = 0; i < 4; i++) {
		mutex_lock(&f.c.gpu->lock);
		mark_range(&f, i, 0, n[i]);
		assert_int_equal(vg_relocate_marked(f.c.gpu, VG_LOC_VRAM), 0);
		mutex_unlock(&f.c.gpu->lock);
		check(&f, i, i);
		assert_int_equal(f.c.vm[i]->relocated, 0);
	}
	assert_int_equal(fake_bytes_copied(f.c.fb),
			 2 * ((300 + 3 + 256 + 257) * CH - PAGE));
	bfx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduce_matches_reference),
		cmocka_unit_test(test_relocate_in_creation_order),
		cmocka_unit_test(test_relocate_failure_clears_chain),
		cmocka_unit_test(test_copy_list_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
