// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The reducer's standing heap (struct vg_gpu, vmh) against a from-scratch
 * recomputation. The heap persists between reductions and is moved by
 * every change of a VM's resident bytes; what it must never change is a
 * choice. So random operation sequences (allocations under pressure,
 * frees, VMs created and destroyed, entitlements set, VMs deferred after
 * a failed drain, return passes, heat changes) run on a small GPU, and
 * after each one a reduction with a random requester, new BO and need is
 * compared with a reference that ranks every VM anew at every pick, the
 * way the reducer is specified (reducer.c, top): the VM most above its
 * entitlement, ties to the oldest; COLD: the coldest next chunk among the
 * VMs above, then by key. LRA and COLD must mark exactly the reference's
 * chunks; RANDOM (which chunk of a victim is random) the same bytes per
 * VM. vg_gpu_check() checks the heap's invariants after every operation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CH		(64 * KiB)
#define NCHUNKS		24		/* VRAM */
#define MAXVMS		10
#define OPS		400
#define NOW		1000000ull	/* the reductions' clock */

struct ref_vm {
	struct vg_vm *vm;
	s64 key;
	u32 left;		/* existing candidates */
	u32 nnew;		/* new-BO candidates (the requester) */
	struct vg_chunk **order;	/* LRA/COLD: existing, in pick order */
	u32 pos;
	u32 picks;
};

/* Accesses per 4 KiB, cross-multiplied (the heats here are small). */
static bool ref_cold_before(const struct vg_chunk *a, const struct vg_chunk *b)
{
	u64 ha = a->heat * (b->size >> 12), hb = b->heat * (a->size >> 12);

	if (a->touched != b->touched)
		return a->touched < b->touched;
	if (ha != hb)
		return ha < hb;
	return a->placed_seq < b->placed_seq;
}

static int ref_cold_cmp(const void *a, const void *b)
{
	const struct vg_chunk *ca = *(const struct vg_chunk *const *)a;
	const struct vg_chunk *cb = *(const struct vg_chunk *const *)b;

	return ref_cold_before(ca, cb) ? -1 : ref_cold_before(cb, ca) ? 1 : 0;
}

static bool ref_above(const struct ref_vm *a, const struct ref_vm *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	return a->vm->order < b->vm->order;
}

static const struct vg_chunk *ref_next(const struct ref_vm *r)
{
	return r->left ? r->order[r->pos] : NULL;
}

/* Does a rank before b? The reducer's order, spelled out per policy. */
static bool ref_before(enum vg_chunk_policy p, const struct ref_vm *a,
		       const struct ref_vm *b)
{
	bool oa = a->key > 0, ob = b->key > 0;

	if (p != VG_POLICY_COLD || oa != ob || !oa)
		return p == VG_POLICY_COLD && oa != ob ? oa : ref_above(a, b);
	if (ref_next(a) && ref_next(b))
		return ref_cold_before(ref_next(a), ref_next(b));
	if (ref_next(a) || ref_next(b))
		return ref_next(a);
	return a->vm->order < b->vm->order;
}

/*
 * Reference reduction: the bytes each VM gives (r[i].picks chunks) and,
 * for LRA/COLD, the chunks (marked in want[]). Returns 0 or -ENOMEM.
 */
static int ref_reduce(struct vg_gpu *gpu, struct vg_vm *req, u32 newn,
		      u64 need, struct ref_vm *r, u32 *nr)
{
	u64 equal = vg_gpu_equal_share(gpu), got = 0;
	struct vg_vm *vm;
	struct vg_chunk *c;
	u32 n = 0, i;

	list_for_each_entry(vm, &gpu->vms, node) {
		struct ref_vm *x = &r[n++];
		u32 k = 0;

		memset(x, 0, sizeof(*x));
		x->vm = vm;
		x->key = (s64)vm->resident -
			 (s64)(vm->entitlement ? vm->entitlement : equal);
		x->left = vg_vm_drain_deferred(vm, NOW) ? 0 : vm->res_nr;
		if (vm == req) {
			x->key += (s64)newn * CH;
			x->nnew = newn;
		}
		x->order = calloc(vm->res_nr + 1, sizeof(*x->order));
		assert_non_null(x->order);
		list_for_each_entry(c, &vm->resident_list, node)
			x->order[k++] = c;
		assert_int_equal(k, vm->res_nr);
		if (gpu->policy == VG_POLICY_COLD)
			qsort(x->order, k, sizeof(*x->order), ref_cold_cmp);
	}
	*nr = n;
	while (got < need) {
		struct ref_vm *best = NULL;

		for (i = 0; i < n; i++) {
			if (!(r[i].left + r[i].nnew))
				continue;
			if (!best || ref_before(gpu->policy, &r[i], best))
				best = &r[i];
		}
		if (!best)
			return -ENOMEM;
		/* RANDOM: which candidate is random, the count is not. */
		if (best->left && gpu->policy != VG_POLICY_RANDOM) {
			best->left--;
			best->pos++;
		} else if (gpu->policy == VG_POLICY_RANDOM) {
			if (best->left)
				best->left--;
			else
				best->nnew--;
		} else {
			best->nnew--;
		}
		best->picks++;
		best->key -= CH;
		got += CH;
	}
	return 0;
}

/*
 * Entitlements: MIXED sets some and clears others; EQUAL never sets one;
 * EXPLICIT gives every VM one as it comes (as mgmtd does). Under EQUAL and
 * EXPLICIT a VM created or an entitlement set moves the heap in place
 * (vg_vmh_added(), vg_vmh_ent_set()): it must stay in force.
 */
enum ent_mode { ENT_MIXED, ENT_EQUAL, ENT_EXPLICIT, ENT_NR };

struct world {
	struct cfx f;
	struct vg_vm *vms[MAXVMS];
	u32 nvms;
	u32 named;
	enum ent_mode mode;
	struct vg_rand rnd;
};

static u64 w_ent(struct world *w)
{
	switch (w->mode) {
	case ENT_EQUAL:
		return 0;
	case ENT_EXPLICIT:
		return (1 + vg_rand_below(&w->rnd, 8)) * CH;
	default:
		return vg_rand_below(&w->rnd, 3) ? 0 :
		       vg_rand_below(&w->rnd, 8) * CH;
	}
}

/* Under EQUAL and EXPLICIT, a heap in force before stays so. */
static void w_kept(struct world *w, bool was)
{
	if (w->mode != ENT_MIXED && was)
		assert_true(w->f.gpu->vmh_valid);
}

static void w_vm(struct world *w)
{
	struct vg_vm_config cfg = { .name = NULL };
	struct vg_vm *vm;
	bool was = w->f.gpu->vmh_valid || !w->nvms;

	assert_int_equal(vg_vm_create(w->f.gpu, &cfg, &vm), 0);
	w->vms[w->nvms++] = vm;
	/* The first VM puts the heap in force. */
	w_kept(w, was);
	if (w->mode == ENT_EXPLICIT) {
		assert_int_equal(vg_vm_set_entitlement(vm, w_ent(w)), 0);
		w_kept(w, was);
	}
}

/* One random operation that changes some VM's standing (or nothing). */
static void w_op(struct world *w)
{
	struct vg_gpu *gpu = w->f.gpu;
	struct vg_vm *vm = w->vms[vg_rand_below(&w->rnd, w->nvms)];
	struct vg_chunk *c;
	struct vg_bo *bo;
	bool was;
	u64 va;
	u32 i;

	switch (vg_rand_below(&w->rnd, 10)) {
	case 0:
		if (w->nvms < MAXVMS)
			w_vm(w);
		break;
	case 1:
		if (w->nvms <= 2)
			break;
		i = vg_rand_below(&w->rnd, w->nvms);
		vg_vm_destroy(w->vms[i]);
		w->vms[i] = w->vms[--w->nvms];
		break;
	case 2:
	case 3:
	case 4:
		/* Under pressure this reduces and relocates for real. */
		vg_bo_alloc(vm, (1 + vg_rand_below(&w->rnd, 5)) * CH, 0, &va);
		break;
	case 5:
		mutex_lock(&gpu->lock);
		bo = list_empty(&vm->bos) ? NULL :
		     list_first_entry(&vm->bos, struct vg_bo, node);
		va = bo ? bo->va : 0;
		mutex_unlock(&gpu->lock);
		if (bo)
			assert_int_equal(vg_bo_free(vm, va), 0);
		break;
	case 6:
		was = gpu->vmh_valid;
		assert_int_equal(vg_vm_set_entitlement(vm, w_ent(w)), 0);
		w_kept(w, was);
		break;
	case 7:
		/* A failed drain defers it, both for allocations and here. */
		mutex_lock(&gpu->lock);
		vm->drain_fails = vm->drain_fails ? 0 : 1;
		vm->drain_retry_ns = vm->drain_fails ? U64_MAX / 2 : 0;
		mutex_unlock(&gpu->lock);
		break;
	case 8:
		vg_gpu_return_once(gpu);
		break;
	default:
		/* What COLD ranks by, as samples would leave it. */
		mutex_lock(&gpu->lock);
		gpu->heat_clock = 2 + vg_rand_below(&w->rnd, 3);
		list_for_each_entry(c, &vm->resident_list, node) {
			c->touched = vg_rand_below(&w->rnd, gpu->heat_clock + 1);
			c->heat = vg_rand_below(&w->rnd, 4);
		}
		mutex_unlock(&gpu->lock);
		break;
	}
}

/* A reduction with a random requester, new BO and need, against ref. */
static void w_compare(struct world *w)
{
	struct vg_gpu *gpu = w->f.gpu;
	struct vg_vm *req = w->vms[vg_rand_below(&w->rnd, w->nvms)];
	u32 newn = vg_rand_below(&w->rnd, 4), n, i, k, nhost = 0;
	u64 need = (1 + vg_rand_below(&w->rnd, 12)) * CH;
	struct ref_vm r[MAXVMS];
	struct vg_bo *newbo = NULL;
	struct vg_plan plan;
	int want, got;

	if (newn) {
		newbo = calloc(1, sizeof(*newbo) + newn * sizeof(newbo->chunks[0]));
		assert_non_null(newbo);
		newbo->vm = req;
		newbo->size = newn * CH;
		newbo->nr_chunks = newn;
		for (i = 0; i < newn; i++) {
			newbo->chunks[i].bo = newbo;
			newbo->chunks[i].index = i;
			newbo->chunks[i].size = CH;
			newbo->chunks[i].loc = VG_LOC_VRAM;
		}
	}
	mutex_lock(&gpu->lock);
	want = ref_reduce(gpu, req, newn, need, r, &n);
	got = vg_reduce_at(gpu, req, newbo, need, NOW, &plan);
	assert_int_equal(got, want);
	for (i = 0; i < newn; i++)
		nhost += newbo->chunks[i].loc == VG_LOC_HOST;
	if (got) {
		/* Nothing chosen: no mark, no new chunk bound for host RAM. */
		assert_false(vg_gpu_has_marks(gpu));
		assert_int_equal(nhost, 0);
	}
	for (i = 0; !got && i < n; i++) {
		struct vg_vm *vm = r[i].vm;
		u64 mine = vm->marked_bytes + (vm == req ? nhost * CH : 0);

		assert_int_equal(mine, (u64)r[i].picks * CH);
		if (gpu->policy == VG_POLICY_RANDOM)
			continue;
		/* Exactly the reference's chunks, in its order's prefix. */
		for (k = 0; k < vm->res_nr; k++)
			assert_int_equal(r[i].order[k]->marked, k < r[i].pos);
	}
	for (i = 0; i < n; i++) {
		vg_unmark_all(r[i].vm);
		free(r[i].order);
	}
	mutex_unlock(&gpu->lock);
	free(newbo);
}

static void run(enum vg_chunk_policy p, enum ent_mode mode, u64 seed)
{
	struct cfx_opts o = { .vram = NCHUNKS * CH, .chunk = CH, .policy = p,
			      .seed = seed };
	struct world w;
	u32 i;

	memset(&w, 0, sizeof(w));
	w.mode = mode;
	cfx_init_opts(&w.f, &o);
	vg_rand_seed(&w.rnd, (seed * 7919 + p) * ENT_NR + mode);
	for (i = 0; i < 4; i++)
		w_vm(&w);
	for (i = 0; i < OPS; i++) {
		w_op(&w);
		assert_int_equal(vg_gpu_check(w.f.gpu), 0);
		w_compare(&w);
		assert_int_equal(vg_gpu_check(w.f.gpu), 0);
	}
	for (i = 0; i < w.nvms; i++)
		vg_vm_destroy(w.vms[i]);
	w.f.nvm = 0;
	cfx_fini(&w.f);
}

static void test_heap_matches_scratch(void **state)
{
	u64 seed;
	int p, m;

	(void)state;
	for (p = 0; p < VG_POLICY_NR; p++)
		for (m = 0; m < ENT_NR; m++)
			for (seed = 1; seed <= 8; seed++)
				run(p, m, seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_matches_scratch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
