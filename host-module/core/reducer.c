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
 *  2. chunk of the victim, by gpu->policy: RANDOM (the paper) or LRA
 *     (least recently placed in VRAM).
 *
 * COLD chooses across VMs instead: among every VM above its entitlement,
 * the coldest chunk goes first, whoever holds it (vg_cold_before(): idle
 * for the most sampling rounds, then the fewest accesses, then LRA). A VM
 * leaves that set as soon as it is at its entitlement, so GPUswap's
 * guarantee holds: no VM at or below its entitlement is a victim while
 * another is above. When none is above, VMs rank by key as in step 1.
 * Why: equal VRAM above entitlement is not equal slowdown. A relocated
 * chunk costs its owner every access over PCIe, so a training loop that
 * reads all it holds pays for each of its chunks moved, while a leak or
 * a checkpoint nobody reads costs nothing in host RAM; taking the
 * coldest memory of anyone above entitlement first moves what costs
 * least. A requester's new-BO chunks go last (it allocates them to use
 * them, and no sample has seen them), after its own resident chunks.
 *
 * Victims come from a binary max-heap of VMs, so a chosen chunk costs
 * O(log V) plus O(1) for RANDOM and LRA. COLD samples and sorts the
 * candidates of every VM above its entitlement once per call (all at the
 * same moment, so their heats compare): O(C log C) for the C chunks of
 * those VMs, where GPUswap's rule sorted only the victims'. Ties go to
 * the VM created first, so a seed and an operation sequence give one
 * outcome.
 *
 * The keys change with every placement, so the heap is rebuilt per call:
 * one O(V) pass per allocation that needs room, which with 1000 VMs
 * dominates small BOs. So the pass reads only the fields the key needs
 * (together in struct vg_vm), computes the equal share once, and fills
 * per-GPU scratch arrays kept between calls (gpu->red_st/red_heap, grown
 * here, freed with the last VM) instead of allocating two V-sized arrays
 * per call. And it does not heapify every VM: a call that needs k chunks
 * takes k picks when chunks are whole, and every VM picked at step j
 * ranks, by its key before the call, among the first j (each VM above it
 * must have been picked at least once to fall below it). So the pass
 * keeps only the k + 1 best VMs (a min-heap, one comparison for most
 * VMs); the k best are the victim heap, and picking goes on from it as
 * long as its top still ranks above the (k + 1)-th. In the rare case it
 * does not (smaller tail chunks, victims that run out of candidates) the
 * heap is rebuilt from every VM's scratch entry as it stands. Each pick is
 * the same as with one heap of every VM. The heap compares keys and
 * creation order copied into the scratch entries, never chasing a VM
 * pointer. The VM list is a chain of pointers, one cache miss after the
 * other when VMs are many and cold; the scratch still holds the list as
 * the last call walked it, which is the list now unless VMs came or went,
 * so the pass prefetches a few VMs ahead from it (a hint: a stale pointer
 * costs a wasted prefetch, never a fault).
 *
 * A VM deferred after a failed drain (vg_vm_drain_deferred()) offers no
 * chunk until its back-off ends: the reducer goes on with the others, so
 * an allocation never waits for a VM that cannot be stopped, and never
 * fails because of one (the requester's new-BO chunks are always
 * candidates). While it is deferred, a VM at or below its entitlement
 * may give chunks that the deferred one, above it, would have given.
 *
 * Precondition: no chunk is marked (marks live only inside one relocation,
 * under gpu->lock). Existing chunks picked are marked; the caller relocates
 * them. On failure every mark and new-BO choice of this call is undone.
 */
#include "vg_internal.h"

/* VMs the pass prefetches ahead: enough to overlap a few misses. */
#define VG_RED_AHEAD	4u
/* vg_reduce_cold(): idle for this many sampling rounds is cold. */
#define VG_COLD_ROUNDS	2u

/*
 * One per VM per call. The pass writes only the first fields; the policy
 * state is set by vg_red_prepare() when the VM first becomes a victim.
 */
struct vg_red_vm {
	s64 key;			/* usage - entitlement */
	u64 order;			/* vm->order: the tie-break */
	struct vg_vm *vm;
	u32 left;			/* existing candidates not yet picked */
	bool ready;			/* policy state built */
	struct vg_red_vm *next_ready;	/* chain of ready ones, to free sorted */
	/* RANDOM: unpicked resident chunks are vm->res_vec[0, left). */
	union {
		/* LRA: next resident chunk in placement order. */
		struct list_head *cursor;
		/* COLD: sorted[pos], the heap's key (NULL: none, or new). */
		const struct vg_chunk *next;
	};
	/* COLD: candidates coldest first (vg_cold_before()). */
	struct vg_chunk **sorted;
	u32 pos;
};

struct vg_reducer {
	struct vg_gpu *gpu;
	struct vg_vm *req;
	struct vg_bo *newbo;
	u32 new_left;			/* new-BO chunks [0, new_left) VRAM-bound */
	struct vg_red_vm **heap;
	u32 nheap;
	u32 nst;			/* scratch entries: every VM */
	/*
	 * A candidate VM not in the heap that ranks above all others left
	 * out (NULL: the heap has them all). Nothing left out is picked, so
	 * its key stays as the pass computed it.
	 */
	struct vg_red_vm *out;
	struct vg_red_vm *ready;	/* chain through next_ready */
	/*
	 * COLD: the VMs above their entitlement rank by their next chunk's
	 * coldness, all of them ahead of every VM at or below it (see top).
	 */
	bool global;
	/* vg_reduce_cold(): stop at the first chunk that is not cold. */
	bool cold_only;
};

/* ---- heat (COLD) ------------------------------------------------------- */

/*
 * Heat is the accesses sampled since the last ageing plus half the heat
 * before it. Ageing happens at a fixed cadence only (vg_sample_heat(),
 * from the return worker): if every reduction aged it too, heat would
 * decay with the allocation rate, and under pressure (many reductions
 * between two accesses) every chunk would look cold. A sample that saw
 * accesses also stamps the chunk with the current round (touched).
 */
static void vg_heat_collect(struct vg_vm *vm, bool age)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chunk *c;

	if (!gpu->ops->sample_access)
		return;
	list_for_each_entry(c, &vm->resident_list, node) {
		u64 n = gpu->ops->sample_access(gpu->drv, c->mem);

		c->heat = (age ? c->heat / 2 : c->heat) + n;
		if (n)
			c->touched = gpu->heat_clock;
	}
}

void vg_sample_heat_vm(struct vg_vm *vm)
{
	lockdep_assert_held(&vm->gpu->lock);
	vg_heat_collect(vm, false);
}

void vg_sample_heat(struct vg_gpu *gpu)
{
	struct vg_vm *vm;

	lockdep_assert_held(&gpu->lock);
	gpu->heat_clock++;
	list_for_each_entry(vm, &gpu->vms, node)
		vg_heat_collect(vm, true);
}

/*
 * Coldest first: idle for the most sampling rounds, then the fewest
 * accesses, then the least recently placed. Recency goes first because
 * heat halves every round: memory written once long ago (a leak, a
 * checkpoint) may still have more heat than memory read every round.
 */
static bool vg_cold_before(const struct vg_chunk *a, const struct vg_chunk *b)
{
	if (a->touched != b->touched)
		return a->touched < b->touched;
	if (a->heat != b->heat)
		return a->heat < b->heat;
	return a->placed_seq < b->placed_seq;
}

/*
 * sort()'s order over vg_cold_before(), coldest first. It is total (no two
 * resident chunks share a placed_seq), so the kernel's heapsort and the
 * userspace sort() put the candidates in one and the same order.
 */
static int vg_cold_cmp(const void *a, const void *b)
{
	const struct vg_chunk *ca = *(const struct vg_chunk *const *)a;
	const struct vg_chunk *cb = *(const struct vg_chunk *const *)b;

	if (vg_cold_before(ca, cb))
		return -1;
	return vg_cold_before(cb, ca) ? 1 : 0;
}

/* ---- victim heap ------------------------------------------------------- */

static bool vg_red_above(const struct vg_red_vm *a, const struct vg_red_vm *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	return a->order < b->order;
}

/*
 * The victim heap's order under COLD: a VM above its entitlement (key > 0)
 * ranks ahead of every VM at or below it; among those above, the one whose
 * next chunk is coldest (vg_cold_before()) ranks first, one with only
 * new-BO chunks left last; VMs at or below rank by key as in GPUswap.
 */
static bool vg_red_colder(const struct vg_red_vm *a, const struct vg_red_vm *b)
{
	bool oa = a->key > 0, ob = b->key > 0;

	if (oa != ob)
		return oa;
	if (!oa)
		return vg_red_above(a, b);
	if (a->next && b->next)
		return vg_cold_before(a->next, b->next);
	if (a->next || b->next)
		return a->next;
	return a->order < b->order;
}

/*
 * Specialised per order (global is a constant at each call site), so
 * RANDOM and LRA compare keys as they always did.
 */
static __always_inline void vg_heap_down_t(struct vg_reducer *r, u32 i,
					   const bool global)
{
	struct vg_red_vm **h = r->heap;

	for (;;) {
		u32 l = 2 * i + 1, best = i;
		struct vg_red_vm *t;

		if (l < r->nheap &&
		    (global ? vg_red_colder(h[l], h[best]) :
			      vg_red_above(h[l], h[best])))
			best = l;
		if (l + 1 < r->nheap &&
		    (global ? vg_red_colder(h[l + 1], h[best]) :
			      vg_red_above(h[l + 1], h[best])))
			best = l + 1;
		if (best == i)
			return;
		t = h[i];
		h[i] = h[best];
		h[best] = t;
		i = best;
	}
}

static void vg_heap_down_cold(struct vg_reducer *r, u32 i)
{
	vg_heap_down_t(r, i, true);
}

static void vg_heap_down_key(struct vg_reducer *r, u32 i)
{
	vg_heap_down_t(r, i, false);
}

static void vg_heap_down(struct vg_reducer *r, u32 i)
{
	if (r->global)
		vg_heap_down_cold(r, i);
	else
		vg_heap_down_key(r, i);
}

static void vg_heap_pop(struct vg_reducer *r)
{
	r->heap[0] = r->heap[--r->nheap];
	vg_heap_down(r, 0);
}

/* Floyd's O(n) heap construction over heap[0, nheap). */
static void vg_heap_build(struct vg_reducer *r)
{
	u32 i;

	for (i = r->nheap / 2; i-- > 0;)
		vg_heap_down(r, i);
}

static u32 vg_red_new_left(const struct vg_reducer *r, const struct vg_red_vm *s)
{
	return s->vm == r->req ? r->new_left : 0;
}

/*
 * The pass's selection of the k + 1 best VMs: a min-heap in r->heap,
 * heap[0] the one ranked lowest, so a VM that does not beat it (most of
 * them) costs one comparison.
 */
static void vg_sel_up(struct vg_red_vm **h, u32 i)
{
	while (i) {
		u32 parent = (i - 1) / 2;
		struct vg_red_vm *t;

		if (!vg_red_above(h[parent], h[i]))
			return;
		t = h[i];
		h[i] = h[parent];
		h[parent] = t;
		i = parent;
	}
}

static void vg_sel_down(struct vg_red_vm **h, u32 n)
{
	u32 i = 0;

	for (;;) {
		u32 l = 2 * i + 1, low = i;
		struct vg_red_vm *t;

		if (l < n && vg_red_above(h[low], h[l]))
			low = l;
		if (l + 1 < n && vg_red_above(h[low], h[l + 1]))
			low = l + 1;
		if (low == i)
			return;
		t = h[i];
		h[i] = h[low];
		h[low] = t;
		i = low;
	}
}

/*
 * The pass offers each VM with candidates to the selection (cap 0: no
 * selection, every VM goes into the heap, as when there are only a few).
 * The one ranked lowest of a full selection is copied (low_key/low_order)
 * so that most VMs cost one comparison in registers.
 */
struct vg_sel {
	u32 n, cap;
	s64 low_key;
	u64 low_order;
};

static inline void vg_sel_offer(struct vg_reducer *r, struct vg_sel *sel,
				struct vg_red_vm *s)
{
	struct vg_red_vm **h = r->heap;

	if (!sel->cap) {
		h[sel->n++] = s;
		return;
	}
	if (sel->n == sel->cap) {
		if (s->key < sel->low_key ||
		    (s->key == sel->low_key && s->order > sel->low_order))
			return;
		h[0] = s;
		vg_sel_down(h, sel->n);
	} else {
		h[sel->n] = s;
		vg_sel_up(h, sel->n++);
		if (sel->n < sel->cap)
			return;
	}
	sel->low_key = h[0]->key;
	sel->low_order = h[0]->order;
}

/*
 * After the pass: the selection holds the k + 1 best VMs (or all). Keep
 * the k best as the victim heap; the (k + 1)-th is r->out, and ranks above
 * every other VM left out, so the picks may go on from the heap as long
 * as its top ranks above r->out.
 */
static void vg_sel_finish(struct vg_reducer *r, const struct vg_sel *sel,
			  u32 k)
{
	r->nheap = sel->n;
	if (sel->cap && r->nheap > k) {
		r->out = r->heap[0];
		r->heap[0] = r->heap[--r->nheap];
	}
	vg_heap_build(r);
}

/*
 * The VMs left out of the heap may now rank first: put every VM with a
 * candidate left into the heap, with its key as it stands.
 */
static void vg_red_widen(struct vg_reducer *r)
{
	struct vg_red_vm *st = r->gpu->red_st;
	u32 i;

	r->nheap = 0;
	for (i = 0; i < r->nst; i++) {
		if (st[i].left + vg_red_new_left(r, &st[i]))
			r->heap[r->nheap++] = &st[i];
	}
	r->out = NULL;
	vg_heap_build(r);
}

/* ---- chunk choice ------------------------------------------------------ */

static int vg_red_prepare(struct vg_reducer *r, struct vg_red_vm *s)
{
	struct vg_vm *vm = s->vm;

	s->ready = true;
	s->next_ready = r->ready;
	r->ready = s;
	s->sorted = NULL;
	s->pos = 0;
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
	/* vg_reduce_cold(): the return worker sampled just before. */
	if (!r->cold_only)
		vg_sample_heat_vm(vm);
	s->sorted = kvmalloc((size_t)s->left * sizeof(*s->sorted), GFP_KERNEL);
	if (!s->sorted)
		return -ENOMEM;
	memcpy(s->sorted, vm->res_vec, (size_t)s->left * sizeof(*s->sorted));
	sort(s->sorted, s->left, sizeof(*s->sorted), vg_cold_cmp, NULL);
	return 0;
}

/*
 * The victim's next chunk, or NULL for "one of the new BO's chunks". The
 * caller guarantees the victim has a candidate left.
 */
static __always_inline struct vg_chunk *vg_red_pick(struct vg_reducer *r,
						    struct vg_red_vm *s)
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
		/*
		 * New-BO chunks last: the requester allocates them to use
		 * them now, and no sample has seen them yet.
		 */
		if (!s->left)
			return NULL;
		s->left--;
		return s->sorted[s->pos++];
	}
}

/* COLD: what vg_red_pick() would take next from s, the heap's key. */
static void vg_red_next(struct vg_red_vm *s)
{
	/* NULL: new-BO chunks, or none left (then s leaves the heap). */
	s->next = s->left ? s->sorted[s->pos] : NULL;
}

/*
 * What relocating c will touch besides c: its neighbours on the resident
 * list (unlinked), its BO (its VA) and its memory object (freed). With a
 * million chunks each is a miss; started here, the misses of all chunks
 * of the call overlap instead of coming one after the other during the
 * relocation.
 */
static inline void vg_red_prefetch(const struct vg_chunk *c)
{
	prefetch(c->node.prev);
	prefetch(c->node.next);
	prefetch(c->bo);
	prefetch(c->mem);
}

static void vg_red_undo(struct vg_reducer *r)
{
	/* No marks before the call: every mark is this call's. */
	vg_unmark_gpu(r->gpu);
	if (r->newbo) {
		u32 i;

		for (i = r->new_left; i < r->newbo->nr_chunks; i++)
			r->newbo->chunks[i].loc = VG_LOC_VRAM;
	}
}

/* Not seen accessed for VG_COLD_ROUNDS sampling rounds (cold_only). */
static bool vg_red_idle(const struct vg_gpu *gpu, const struct vg_chunk *c)
{
	return c && gpu->heat_clock >= VG_COLD_ROUNDS &&
	       c->touched <= gpu->heat_clock - VG_COLD_ROUNDS;
}

/*
 * Choose until need bytes; *got receives the bytes chosen. Specialised
 * like vg_heap_down_t(): RANDOM and LRA run the loop they always ran.
 */
static __always_inline int vg_red_run_t(struct vg_reducer *r, u64 need,
					u64 *got_out, const bool global)
{
	u64 got = 0;
	int err;

	while (got < need) {
		struct vg_red_vm *s;
		struct vg_chunk *c;
		u64 size;

		/* Could a VM left out rank first now? Then take them all in. */
		if (r->out && (!r->nheap || !vg_red_above(r->heap[0], r->out)))
			vg_red_widen(r);
		if (!r->nheap)
			return -ENOMEM;
		s = r->heap[0];
		/* Heap order: when the top is not cold, nothing left is. */
		if (global && r->cold_only &&
		    (s->key <= 0 || !vg_red_idle(r->gpu, s->next)))
			break;
		if (!s->ready) {
			err = vg_red_prepare(r, s);
			if (err)
				return err;
		}
		c = vg_red_pick(r, s);
		if (c) {
			vg_red_prefetch(c);
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
		if (global)
			vg_red_next(s);
		if (s->left + vg_red_new_left(r, s) && global)
			vg_heap_down_cold(r, 0);
		else if (s->left + vg_red_new_left(r, s))
			vg_heap_down_key(r, 0);
		else
			vg_heap_pop(r);
	}
	*got_out = got;
	return 0;
}

static int vg_red_run_cold(struct vg_reducer *r, u64 need, u64 *got)
{
	return vg_red_run_t(r, need, got, true);
}

static int vg_red_run(struct vg_reducer *r, u64 need, u64 *got)
{
	if (r->global)
		return vg_red_run_cold(r, need, got);
	return vg_red_run_t(r, need, got, false);
}

/* Room for every VM in the scratch arrays; they only grow. */
static int vg_red_reserve(struct vg_gpu *gpu)
{
	struct vg_red_vm *st;
	struct vg_red_vm **heap;
	u32 cap;

	if (gpu->nr_vms <= gpu->red_cap)
		return 0;
	/* Doubling: VMs created one by one reallocate O(log V) times. */
	cap = max_t(u32, gpu->nr_vms, 2 * gpu->red_cap);
	st = kvmalloc_array(cap, sizeof(*st), GFP_KERNEL);
	heap = kvmalloc_array(cap, sizeof(*heap), GFP_KERNEL);
	if (!st || !heap) {
		kvfree(st);
		kvfree(heap);
		return -ENOMEM;
	}
	kvfree(gpu->red_st);
	kvfree(gpu->red_heap);
	gpu->red_st = st;
	gpu->red_heap = heap;
	gpu->red_cap = cap;
	gpu->red_nst = 0;	/* nothing to prefetch from */
	return 0;
}

void vg_red_free(struct vg_gpu *gpu)
{
	lockdep_assert_held(&gpu->lock);
	kvfree(gpu->red_st);
	kvfree(gpu->red_heap);
	gpu->red_st = NULL;
	gpu->red_heap = NULL;
	gpu->red_cap = 0;
	gpu->red_nst = 0;
	vg_reloc_free(gpu);
}

/* What a run chose, as a plan: the new BO's chunks from new_left on. */
static void vg_red_plan(const struct vg_reducer *r, u64 got,
			struct vg_plan *plan)
{
	u32 i;

	if (r->newbo) {
		for (i = r->new_left; i < r->newbo->nr_chunks; i++)
			plan->new_host_bytes += r->newbo->chunks[i].size;
		plan->new_host_chunks = r->newbo->nr_chunks - r->new_left;
	}
	plan->move_bytes = got - plan->new_host_bytes;
}

static int vg_reduce_common(struct vg_gpu *gpu, struct vg_vm *req,
			    struct vg_bo *newbo, u64 need, bool cold_only,
			    u64 now, struct vg_plan *plan)
{
	struct vg_reducer r = {
		.gpu = gpu,
		.req = req,
		.newbo = newbo,
		.global = gpu->policy == VG_POLICY_COLD,
		.cold_only = cold_only,
	};
	struct vg_red_vm *s;
	struct vg_vm *vm;
	u64 equal, picks, new_bytes = newbo ? newbo->size : 0;
	u32 i, k, n = 0, ahead;
	struct vg_sel sel = { 0 };
	u64 got = 0;
	int err;

	lockdep_assert_held(&gpu->lock);
	memset(plan, 0, sizeof(*plan));
	plan->newbo = newbo;
	/* Nothing but scratch is written yet. */
	if (WARN_ON(vg_gpu_has_marks(gpu)))
		return -EBUSY;
	if (!need)
		return 0;
	err = vg_red_reserve(gpu);
	if (err)
		return err;
	r.heap = gpu->red_heap;
	if (newbo) {
		r.new_left = newbo->nr_chunks;
		for (i = 0; i < newbo->nr_chunks; i++)
			WARN_ON(newbo->chunks[i].loc != VG_LOC_VRAM);
	}
	/* Picks if every chunk is whole: the victim heap's size (see top). */
	picks = (need >> gpu->chunk_shift) + !!(need & (gpu->chunk_size - 1));
	k = min_t(u64, picks, gpu->nr_vms);
	/*
	 * A selection that would keep every VM is no selection. COLD ranks
	 * by chunks, not keys: every VM goes into the heap.
	 */
	sel.cap = k + 1 < gpu->nr_vms && !r.global ? k + 1 : 0;
	/* vg_vm_entitlement() of every VM without an explicit one. */
	equal = vg_gpu_equal_share(gpu);
	/* As vg_vm_entitlement() warns: VMs without one are equal ones. */
	if (unlikely(!gpu->nr_ent_equal)) {
		list_for_each_entry(vm, &gpu->vms, node)
			WARN_ON_ONCE(!vm->entitlement);
	}
	/* Last call's list, VG_RED_AHEAD VMs on (see top). */
	ahead = gpu->red_nst > VG_RED_AHEAD ? gpu->red_nst - VG_RED_AHEAD : 0;
	s = gpu->red_st;
	/* One pass: the keys, and the k + 1 VMs that rank first. */
	list_for_each_entry(vm, &gpu->vms, node) {
		/* No marks (checked above): usage is what is resident. */
		u64 usage = vm->resident;
		u64 ent = vm->entitlement ? vm->entitlement : equal;
		u32 nnew = 0;

		if (n < ahead)
			prefetch(s[VG_RED_AHEAD].vm);
		if (vm == req) {
			usage += new_bytes;
			nnew = r.new_left;
		}
		s->vm = vm;
		s->order = vm->order;
		/*
		 * A VM whose drain just failed has no candidates until its
		 * back-off ends (its key still counts, so no one else's
		 * rank changes): moving it would mean waiting for it again.
		 */
		s->left = unlikely(vg_vm_drain_deferred(vm, now)) ? 0 : vm->res_nr;
		s->ready = false;
		s->key = (s64)usage - (s64)ent;
		if (s->left + nnew)
			vg_sel_offer(&r, &sel, s);
		s++;
		n++;
	}
	r.nst = n;
	gpu->red_nst = n;
	/*
	 * COLD: every VM above its entitlement is ranked by its coldest
	 * chunk, so each is sampled and sorted now, all at the same moment
	 * (sampled together, their counts compare).
	 */
	if (r.global) {
		for (i = 0; i < sel.n; i++) {
			s = r.heap[i];
			if (s->key <= 0)
				continue;
			err = vg_red_prepare(&r, s);
			if (err)
				goto err_free_sorted;
			vg_red_next(s);
		}
	}
	vg_sel_finish(&r, &sel, k);

	err = vg_red_run(&r, need, &got);
	if (err)
		vg_red_undo(&r);
	else
		vg_red_plan(&r, got, plan);
err_free_sorted:
	for (s = r.ready; s; s = s->next_ready)
		kvfree(s->sorted);
	return err;
}

int vg_reduce_at(struct vg_gpu *gpu, struct vg_vm *req, struct vg_bo *newbo,
		 u64 need, u64 now, struct vg_plan *plan)
{
	return vg_reduce_common(gpu, req, newbo, need, false, now, plan);
}

int vg_reduce(struct vg_gpu *gpu, struct vg_vm *req, struct vg_bo *newbo,
	      u64 need, struct vg_plan *plan)
{
	return vg_reduce_at(gpu, req, newbo, need, ktime_get_ns(), plan);
}

s64 vg_reduce_cold(struct vg_gpu *gpu, u64 need, struct vg_plan *plan)
{
	int err;

	lockdep_assert_held(&gpu->lock);
	memset(plan, 0, sizeof(*plan));
	if (gpu->policy != VG_POLICY_COLD)
		return 0;
	err = vg_reduce_common(gpu, NULL, NULL, need, true, ktime_get_ns(),
			       plan);
	return err ? err : (s64)plan->move_bytes;
}
