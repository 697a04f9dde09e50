// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The reducer (GPUswap section 4.3): when a new BO does not fit, pick
 * chunks to move to host RAM, one at a time, in two steps:
 *
 *  1. victim: the VM whose VRAM usage is furthest above its entitlement,
 *     where usage counts resident chunks not yet picked and, for the
 *     requesting VM, the new BO's chunks still bound for VRAM — so a VM
 *     whose new BO pushes it over its share gives up its own memory (and
 *     new-BO chunks it gives up go to host RAM directly, no copy);
 *  2. chunk of the victim, by gpu->policy: RANDOM (the paper), LRA (least
 *     recently placed in VRAM) or COLD (fewest sampled accesses, then LRA).
 *
 * Victims come from a binary max-heap of VMs rebuilt per call (O(V)), so a
 * chosen chunk costs O(log V) plus O(1) for RANDOM and LRA; COLD sorts a
 * victim's candidates once, the first time it becomes a victim. Ties go to
 * the VM created first, so a seed and an operation sequence give one
 * outcome.
 *
 * Precondition: no chunk is marked (marks live only inside one relocation,
 * under gpu->lock). Existing chunks picked are marked; the caller relocates
 * them. On failure every mark and new-BO choice of this call is undone.
 */
#include "vg_internal.h"

struct vg_red_vm {
	struct vg_vm *vm;
	s64 key;			/* usage - entitlement */
	u32 left;			/* existing candidates not yet picked */
	bool ready;			/* policy state built */
	/* RANDOM: unpicked resident chunks are vm->res_vec[0, left). */
	/* LRA: next resident chunk in placement order. */
	struct list_head *cursor;
	/* COLD: candidates by (heat, placed_seq); [0, zero_end) have heat 0. */
	struct vg_chunk **sorted;
	u32 pos, zero_end;
};

struct vg_reducer {
	struct vg_gpu *gpu;
	struct vg_vm *req;
	struct vg_bo *newbo;
	u32 new_left;			/* new-BO chunks [0, new_left) VRAM-bound */
	struct vg_red_vm *st;
	struct vg_red_vm **heap;
	u32 nheap;
};

/* ---- heat (COLD) ------------------------------------------------------- */

void vg_sample_heat_vm(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chunk *c;

	lockdep_assert_held(&gpu->lock);
	if (!gpu->ops->sample_access)
		return;
	/* Exponential decay: a chunk hot long ago cools down. */
	list_for_each_entry(c, &vm->resident_list, node)
		c->heat = c->heat / 2 +
			  gpu->ops->sample_access(gpu->backend, c->mem);
}

void vg_sample_heat(struct vg_gpu *gpu)
{
	struct vg_vm *vm;

	lockdep_assert_held(&gpu->lock);
	list_for_each_entry(vm, &gpu->vms, node)
		vg_sample_heat_vm(vm);
}

static bool vg_cold_before(const struct vg_chunk *a, const struct vg_chunk *b)
{
	if (a->heat != b->heat)
		return a->heat < b->heat;
	return a->placed_seq < b->placed_seq;
}

static void vg_cold_sift(struct vg_chunk **v, u32 root, u32 n)
{
	for (;;) {
		u32 child = 2 * root + 1;
		struct vg_chunk *t;

		if (child >= n)
			return;
		if (child + 1 < n && vg_cold_before(v[child], v[child + 1]))
			child++;
		if (!vg_cold_before(v[root], v[child]))
			return;
		t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

/* Heapsort: in place, no recursion, O(n log n) worst case. */
static void vg_cold_sort(struct vg_chunk **v, u32 n)
{
	u32 i;

	for (i = n / 2; i-- > 0;)
		vg_cold_sift(v, i, n);
	for (i = n; i-- > 1;) {
		struct vg_chunk *t = v[0];

		v[0] = v[i];
		v[i] = t;
		vg_cold_sift(v, 0, i);
	}
}

/* ---- victim heap ------------------------------------------------------- */

static bool vg_red_above(const struct vg_red_vm *a, const struct vg_red_vm *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	return a->vm->order < b->vm->order;
}

static void vg_heap_down(struct vg_reducer *r, u32 i)
{
	struct vg_red_vm **h = r->heap;

	for (;;) {
		u32 l = 2 * i + 1, best = i;
		struct vg_red_vm *t;

		if (l < r->nheap && vg_red_above(h[l], h[best]))
			best = l;
		if (l + 1 < r->nheap && vg_red_above(h[l + 1], h[best]))
			best = l + 1;
		if (best == i)
			return;
		t = h[i];
		h[i] = h[best];
		h[best] = t;
		i = best;
	}
}

static void vg_heap_pop(struct vg_reducer *r)
{
	r->heap[0] = r->heap[--r->nheap];
	vg_heap_down(r, 0);
}

static u32 vg_red_new_left(const struct vg_reducer *r, const struct vg_red_vm *s)
{
	return s->vm == r->req ? r->new_left : 0;
}

/* ---- chunk choice ------------------------------------------------------ */

static int vg_red_prepare(struct vg_reducer *r, struct vg_red_vm *s)
{
	struct vg_vm *vm = s->vm;
	u32 i;

	s->ready = true;
	switch (r->gpu->policy) {
	case VG_POLICY_RANDOM:
		return 0;
	case VG_POLICY_LRA:
		s->cursor = vm->resident_list.next;
		return 0;
	case VG_POLICY_COLD:
	default:
		break;
	}
	if (!s->left)
		return 0;
	vg_sample_heat_vm(vm);
	s->sorted = kvmalloc((size_t)s->left * sizeof(*s->sorted), GFP_KERNEL);
	if (!s->sorted)
		return -ENOMEM;
	memcpy(s->sorted, vm->res_vec, (size_t)s->left * sizeof(*s->sorted));
	vg_cold_sort(s->sorted, s->left);
	for (i = 0; i < s->left && !s->sorted[i]->heat; i++)
		;
	s->zero_end = i;
	return 0;
}

/*
 * The victim's next chunk, or NULL for "one of the new BO's chunks". The
 * caller guarantees the victim has a candidate left.
 */
static struct vg_chunk *vg_red_pick(struct vg_reducer *r, struct vg_red_vm *s)
{
	struct vg_vm *vm = s->vm;
	struct vg_chunk *c;
	u32 nnew = vg_red_new_left(r, s);

	switch (r->gpu->policy) {
	case VG_POLICY_RANDOM: {
		u32 k = vg_rand_below(&r->gpu->rand, s->left + nnew);

		if (k >= s->left)
			return NULL;
		/* Swap the pick behind the unpicked ones: O(1), slots kept. */
		c = vm->res_vec[k];
		vm->res_vec[k] = vm->res_vec[s->left - 1];
		vm->res_vec[k]->slot = k;
		vm->res_vec[s->left - 1] = c;
		c->slot = s->left - 1;
		s->left--;
		return c;
	}
	case VG_POLICY_LRA:
		/* New-BO chunks are the most recently allocated: last. */
		if (!s->left)
			return NULL;
		c = list_entry(s->cursor, struct vg_chunk, node);
		s->cursor = s->cursor->next;
		s->left--;
		return c;
	case VG_POLICY_COLD:
	default:
		/* New-BO chunks: heat 0, but newer than every resident one. */
		if (s->pos == s->zero_end && nnew)
			return NULL;
		if (!s->left)
			return NULL;
		s->left--;
		return s->sorted[s->pos++];
	}
}

static void vg_red_undo(struct vg_reducer *r)
{
	struct vg_vm *vm;

	list_for_each_entry(vm, &r->gpu->vms, node)
		vg_unmark_all(vm);
	if (r->newbo) {
		u32 i;

		for (i = r->new_left; i < r->newbo->nr_chunks; i++)
			r->newbo->chunks[i].loc = VG_LOC_VRAM;
	}
}

static int vg_red_run(struct vg_reducer *r, u64 need)
{
	u64 got = 0;
	int err;

	while (got < need) {
		struct vg_red_vm *s;
		struct vg_chunk *c;
		u64 size;

		if (!r->nheap)
			return -ENOMEM;
		s = r->heap[0];
		if (!s->ready) {
			err = vg_red_prepare(r, s);
			if (err)
				return err;
		}
		c = vg_red_pick(r, s);
		if (c) {
			vg_chunk_mark(c);
			size = c->size;
		} else {
			/* Highest index first: the tail chunk goes early. */
			c = &r->newbo->chunks[--r->new_left];
			c->loc = VG_LOC_HOST;
			size = c->size;
		}
		got += size;
		s->key -= (s64)size;
		if (s->left + vg_red_new_left(r, s))
			vg_heap_down(r, 0);
		else
			vg_heap_pop(r);
	}
	return 0;
}

int vg_reduce(struct vg_gpu *gpu, struct vg_vm *req, struct vg_bo *newbo,
	      u64 need)
{
	struct vg_reducer r = {
		.gpu = gpu,
		.req = req,
		.newbo = newbo,
	};
	struct vg_vm *vm;
	u32 i, n = 0;
	int err;

	lockdep_assert_held(&gpu->lock);
	list_for_each_entry(vm, &gpu->vms, node) {
		if (WARN_ON(!list_empty(&vm->marked)))
			return -EBUSY;
	}
	if (!need)
		return 0;
	if (newbo) {
		r.new_left = newbo->nr_chunks;
		for (i = 0; i < newbo->nr_chunks; i++)
			WARN_ON(newbo->chunks[i].loc != VG_LOC_VRAM);
	}
	r.st = kvcalloc(gpu->nr_vms, sizeof(*r.st), GFP_KERNEL);
	r.heap = kvcalloc(gpu->nr_vms, sizeof(*r.heap), GFP_KERNEL);
	if (!r.st || !r.heap) {
		err = -ENOMEM;
		goto out_free;
	}
	list_for_each_entry(vm, &gpu->vms, node) {
		struct vg_red_vm *s = &r.st[n++];
		u64 usage = vm->resident - vm->marked_bytes;

		s->vm = vm;
		s->left = vm->res_nr;
		if (vm == req && newbo)
			usage += newbo->size;
		s->key = (s64)usage - (s64)vg_vm_entitlement(vm);
		if (s->left + vg_red_new_left(&r, s))
			r.heap[r.nheap++] = s;
	}
	/* Floyd's O(V) heap construction. */
	for (i = r.nheap / 2; i-- > 0;)
		vg_heap_down(&r, i);

	err = vg_red_run(&r, need);
	if (err)
		vg_red_undo(&r);

out_free:
	if (r.st) {
		for (i = 0; i < n; i++)
			kvfree(r.st[i].sorted);
	}
	kvfree(r.heap);
	kvfree(r.st);
	return err;
}
