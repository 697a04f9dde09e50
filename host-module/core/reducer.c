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
 * Heat compares per byte (vg_cold_before()), so a small chunk is not
 * taken for cold only for being small.
 *
 * The return worker's reserve (vg_reduce_cold()) takes only chunks idle
 * for VG_COLD_ROUNDS rounds: first those of VMs above their entitlement,
 * then those of VMs at or below an *equal share* (vm->entitlement 0: no
 * policy set one). An equal share protects the memory a VM uses, not
 * memory it left idle: without this, a VM holding memory nobody reads
 * within its share (a leak, an idle tenant) made the VMs above theirs
 * give up memory they read every round, and those chunks came back and
 * went out again at every burst (docs/performance.md, issue 16). A VM
 * with an explicit entitlement keeps the strict rule even for idle
 * memory: mgmtd's entitlement may carry a min reservation ("never taken
 * away", docs/policy.md) that the core cannot tell apart. The allocation
 * path keeps the strict rule for every VM. The reserve leaves a chunk
 * expected back whole after its idle spell (vg_chunk_expected(): its last
 * use after a spell covered all of it, and a spell as long has not run
 * out yet), such as a training loop's checkpoint: moved out, its next
 * write goes over PCIe inside an iteration (docs/performance.md, issue
 * 16: cloud-day's 2.5x-static goal). An allocation may still take it,
 * after the idle memory nobody is expected to use (vg_cold_before()).
 *
 * Victims come from a binary max-heap of VMs, so a chosen chunk costs
 * O(log V) plus O(1) for RANDOM and LRA. COLD samples and sorts the
 * candidates of every VM above its entitlement once per call (all at the
 * same moment, so their heats compare): O(C log C) for the C chunks of
 * those VMs, where GPUswap's rule sorted only the victims'. The reserve
 * sorts the chunks of every equal-share VM too (the worker sampled them
 * all just before, O(C) already), on a sampling pass that finds the
 * reserve short, never on an allocation. Ties go to
 * the VM created first, so a seed and an operation sequence give one
 * outcome.
 *
 * Ranking every VM on every call was one O(V) pass per allocation that
 * needed room, which with 1000 VMs dominated small BOs. So the ranking
 * persists: gpu->vmh, the standing heap (vmheap.c), holds every VM by
 * its key (resident bytes above its entitlement) between calls, and
 * account.c and relocate.c move a VM in it whenever its resident bytes
 * change (O(log V) per chunk placed or removed, per VM relocated; see
 * struct vg_gpu for its invariants). A call
 * never writes it: its picks only mark chunks, and the relocation that
 * follows moves the keys for real. A call walks the standing heap from
 * its root, best first (a frontier of heap indices ordered by key: pop
 * the best, push its two children), and takes a VM into its own victim
 * heap only when the best VM not taken yet (r->out) could rank above
 * the victim heap's top. A VM not taken has not been picked, so its key
 * is still the standing heap's, and out ranks above every other VM not
 * taken: each pick is the maximum over every VM, the same pick a heap of
 * all VMs makes. A call that chooses k chunks takes at most k + 2 VMs
 * (the requester, k victims, the next in line), O(k log V), plus the VMs
 * ranked above them that the walk passes over for having no candidate
 * (nothing resident, or deferred, below).
 * The requester's key counts its new BO, so it is taken up front with
 * that key, and the walk skips it. COLD needs every VM above its
 * entitlement at the start (their chunks are sampled together): the walk
 * takes them all first, in key order, and stops at the first at or below.
 * The reserve needs every equal-share VM too: with any, it takes every VM
 * (vg_red_take_all()).
 * A call that may pick about as many chunks as there are VMs would walk
 * to most of them at O(log V) each: it takes every VM in one pass
 * instead, as a heap of all VMs would.
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

/* vg_reduce_cold(): idle for this many sampling rounds is cold. */
#define VG_COLD_ROUNDS	2u

/*
 * One per VM a call takes from the standing heap (or the requester). The
 * walk writes the first fields; the policy state is set by
 * vg_red_prepare() when the VM first becomes a victim.
 */
struct vg_red_vm {
	s64 key;			/* usage - entitlement */
	u64 order;			/* vm->order: the tie-break */
	struct vg_vm *vm;
	u32 left;			/* existing candidates not yet picked */
	bool ready;			/* policy state built */
	/*
	 * COLD, the reserve only (vg_reduce_cold()): its idle chunks may go
	 * although it is at or below its share (an equal share: no policy
	 * set an entitlement for it).
	 */
	bool open;
	bool reserve;			/* vg_reduce_cold(): idle chunks only */
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
	u64 now;			/* for vg_vm_drain_deferred() */
	u32 new_left;			/* new-BO chunks [0, new_left) VRAM-bound */
	struct vg_red_vm **heap;	/* the victim heap: VMs taken */
	u32 nheap;
	struct vg_red_vm *st;		/* gpu->red_st: [0, nst) taken */
	u32 nst;
	/* The walk: gpu->vmh indices, a max-heap by vg_vmh_above(). */
	u32 *front;
	u32 nfront;
	/*
	 * The best VM with a candidate not taken yet, taken from the walk
	 * but not in the victim heap (NULL: none left). Nothing not taken
	 * is picked, so its key is still the standing heap's.
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

/* ---- coldness (COLD) -------------------------------------------------- */

/*
 * Coldest first: idle for the most sampling rounds, then the fewest
 * accesses, then the least recently placed. Recency goes first because
 * heat halves every round: memory written once long ago (a leak, a
 * checkpoint) may still have more heat than memory read every round.
 */
/*
 * Accesses per byte decide, not accesses: a sample counts the accesses
 * to a chunk, so a chunk half the size of another, used the same way,
 * has half its heat, and would go first although moving it frees half
 * the room for the same cost per byte (its owner reads each of its
 * bytes as often). Cross-multiplied in 4 KiB units, heat capped so the
 * product fits in 64 bits (2^40 accesses by 2^24 units of a 64 GiB
 * chunk).
 */
#define VG_HEAT_CAP	(1ull << 40)

/*
 * A chunk expected back whole after its idle spell (vg_chunk_expected():
 * a checkpoint between two writes) is idle, but its next use is known:
 * it ranks after the idle memory nobody is expected to use (a leak, an
 * idle tenant's), whose next use may never come, and before the memory
 * used in the last VG_COLD_ROUNDS rounds, which is likely used again
 * next round, whatever its period says (an inference server's model in
 * a burst). Belady's rule with what is known: the chunk used furthest
 * ahead goes first; among expected chunks, the one due last. Without
 * this an allocation took a checkpoint as the coldest chunk of its VM
 * (idle the longest), after the return worker had brought it back, and
 * the next periodic write went over PCIe inside an iteration, however
 * often the period had been seen (docs/performance.md, issue 16,
 * change 7).
 */
static u32 vg_cold_class(const struct vg_chunk *c, u32 now)
{
	if (now < VG_COLD_ROUNDS || c->touched > now - VG_COLD_ROUNDS)
		return 2;
	return vg_chunk_expected(c, now) ? 1 : 0;
}

static bool vg_cold_before(const struct vg_chunk *a, const struct vg_chunk *b)
{
	u64 ha = min_t(u64, a->heat, VG_HEAT_CAP) * vg_chunk_heat_units(b);
	u64 hb = min_t(u64, b->heat, VG_HEAT_CAP) * vg_chunk_heat_units(a);

	/* Only a chunk with a period can be expected: the common case is cheap. */
	if (unlikely(a->period || b->period)) {
		u32 now = a->bo->vm->gpu->heat_clock;
		u32 ca = vg_cold_class(a, now), cb = vg_cold_class(b, now);

		if (ca != cb)
			return ca < cb;
		if (ca == 1 && a->touched + a->period != b->touched + b->period)
			return a->touched + a->period > b->touched + b->period;
	}
	if (a->touched != b->touched)
		return a->touched < b->touched;
	if (ha != hb)
		return ha < hb;
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

static bool vg_red_idle(const struct vg_gpu *gpu, const struct vg_chunk *c);

/*
 * May s give its next chunk now? An allocation: only while above its
 * entitlement. The reserve: only an idle chunk, of a VM above its
 * entitlement or of an open one (at or below an equal share).
 */
static bool vg_red_victim(const struct vg_red_vm *s)
{
	if (!s->reserve)
		return s->key > 0;
	/*
	 * A VM above its entitlement and past its profile gives the reserve
	 * memory in use too: all it holds beyond its profile is best effort
	 * (vg_vm_past_profile()), and the reserve's room goes to the
	 * allocations of VMs within theirs.
	 */
	if (s->key > 0 && s->next && vg_vm_past_profile(s->vm))
		return true;
	return (s->key > 0 || s->open) && vg_red_idle(s->vm->gpu, s->next);
}

/*
 * The victim heap's order under COLD: a VM that may give its next chunk
 * (vg_red_victim()) ranks ahead of every other; among those, the VMs
 * above their entitlement first (the reserve's open VMs after them), then
 * the one whose next chunk is coldest (vg_cold_before()), one with only
 * new-BO chunks left last; the others rank by key as in GPUswap.
 */
static bool vg_red_colder(const struct vg_red_vm *a, const struct vg_red_vm *b)
{
	bool oa = vg_red_victim(a), ob = vg_red_victim(b);

	if (oa != ob)
		return oa;
	if (!oa)
		return vg_red_above(a, b);
	/*
	 * A VM past its profile first, however hot its memory: the requests
	 * of VMs within their profiles are what a profile promises, a burst
	 * past one is best effort (vg_vm_past_profile()). Coldest first
	 * within it, so its idle memory still goes before what it uses.
	 * Before, the coldest chunk of any VM above its share went first,
	 * and on cloud-day (seeds 1-6) the bursting VMs kept a third of VRAM
	 * in use while the checkpoints and idle models of VMs within their
	 * profiles were written and read over PCIe (docs/performance.md,
	 * issue 16, change 8).
	 */
	if (vg_vm_past_profile(a->vm) != vg_vm_past_profile(b->vm))
		return vg_vm_past_profile(a->vm);
	/* The reserve: the idle memory of VMs above their share goes first. */
	if ((a->key > 0) != (b->key > 0))
		return a->key > 0;
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

/* Sift s, just appended at heap[i], up to its place. */
static void vg_heap_up(struct vg_reducer *r, u32 i)
{
	struct vg_red_vm **h = r->heap;

	while (i) {
		u32 parent = (i - 1) / 2;
		struct vg_red_vm *t;

		if (!(r->global ? vg_red_colder(h[i], h[parent]) :
				  vg_red_above(h[i], h[parent])))
			return;
		t = h[i];
		h[i] = h[parent];
		h[parent] = t;
		i = parent;
	}
}

static void vg_heap_push(struct vg_reducer *r, struct vg_red_vm *s)
{
	r->heap[r->nheap] = s;
	vg_heap_up(r, r->nheap++);
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

/* ---- the walk: VMs in standing order ----------------------------------- */

static bool vg_front_above(const struct vg_reducer *r, u32 a, u32 b)
{
	return vg_vmh_above(&r->gpu->vmh[a], &r->gpu->vmh[b]);
}

static void vg_front_push(struct vg_reducer *r, u32 idx)
{
	u32 *f = r->front, i = r->nfront++;

	f[i] = idx;
	while (i) {
		u32 parent = (i - 1) / 2, t;

		if (!vg_front_above(r, f[i], f[parent]))
			return;
		t = f[i];
		f[i] = f[parent];
		f[parent] = t;
		i = parent;
	}
}

/* Sift the frontier's root down to its place. */
static void vg_front_down(struct vg_reducer *r)
{
	u32 *f = r->front, i = 0;

	for (;;) {
		u32 l = 2 * i + 1, best = i, t;

		if (l < r->nfront && vg_front_above(r, f[l], f[best]))
			best = l;
		if (l + 1 < r->nfront && vg_front_above(r, f[l + 1], f[best]))
			best = l + 1;
		if (best == i)
			return;
		t = f[i];
		f[i] = f[best];
		f[best] = t;
		i = best;
	}
}

/* A scratch entry for vm, key as given, policy state not built. */
static struct vg_red_vm *vg_red_take(struct vg_reducer *r, struct vg_vm *vm,
				     s64 key, u32 left)
{
	struct vg_red_vm *s = &r->st[r->nst++];

	s->vm = vm;
	s->key = key;
	s->order = vm->order;
	s->left = left;
	s->ready = false;
	s->open = r->cold_only && !vm->entitlement;
	s->reserve = r->cold_only;
	s->next = NULL;
	return s;
}

/*
 * Does vm, not the requester (taken first), offer a chunk? A VM whose
 * drain just failed has no candidates until its back-off ends (its key
 * still counts, so no one else's rank changes): moving it would mean
 * waiting for it again.
 */
static bool vg_red_offers(const struct vg_reducer *r, const struct vg_vm *vm)
{
	return vm != r->req && vm->res_nr &&
	       likely(!vg_vm_drain_deferred(vm, r->now));
}

/*
 * The next VM in standing order that has a candidate, taken; NULL when
 * none is left.
 */
static struct vg_red_vm *vg_red_walk(struct vg_reducer *r)
{
	struct vg_gpu *gpu = r->gpu;

	while (r->nfront) {
		u32 i = r->front[0], l = 2 * i + 1;
		const struct vg_vmh_ent *e = &gpu->vmh[i];
		struct vg_vm *vm = gpu->vmh_vm[e->slot];

		/*
		 * Pop i and push its children: the first child takes i's
		 * place at the root (one sift instead of two).
		 */
		if (l < gpu->vmh_n)
			r->front[0] = l;
		else
			r->front[0] = r->front[--r->nfront];
		vg_front_down(r);
		if (l + 1 < gpu->vmh_n)
			vg_front_push(r, l + 1);
		if (vg_red_offers(r, vm))
			return vg_red_take(r, vm, e->key, vm->res_nr);
	}
	return NULL;
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
	/*
	 * The reserve leaves memory that is expected back whole after its
	 * idle spell (vg_chunk_expected()): the idle memory it is after is
	 * memory nobody will read. An allocation may still take it, and so
	 * may the reserve from a VM past its profile (vg_red_victim()).
	 */
	if (r->cold_only && !vg_vm_past_profile(vm)) {
		u32 i, n = 0;

		for (i = 0; i < s->left; i++)
			if (!vg_chunk_expected(s->sorted[i], r->gpu->heat_clock))
				s->sorted[n++] = s->sorted[i];
		s->left = n;
	}
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
		bool fresh = false;
		u64 size;

		/*
		 * Could the best VM not taken rank first now? Take it, and
		 * walk on to the next. (COLD: out is at or below its
		 * entitlement, where vg_red_colder() is vg_red_above().)
		 * RANDOM and LRA pick from it before it enters the victim
		 * heap: pushed first, it would rise to the root and sink
		 * again with its first pick, two sifts the height of the
		 * heap, while with many VMs of equal keys it gives one chunk
		 * and then ranks below every VM in the heap (pushed after,
		 * one comparison). It is the pick the heap's top would be.
		 */
		if (!global && r->out &&
		    (!r->nheap || !vg_red_above(r->heap[0], r->out))) {
			s = r->out;
			r->out = vg_red_walk(r);
			fresh = true;
		} else {
			while (r->out &&
			       (!r->nheap || !vg_red_above(r->heap[0], r->out))) {
				vg_heap_push(r, r->out);
				r->out = vg_red_walk(r);
			}
			if (!r->nheap)
				return -ENOMEM;
			s = r->heap[0];
		}
		/* Heap order: when the top is not cold, nothing left is. */
		if (global && r->cold_only && !vg_red_victim(s))
			break;
		if (!s->ready) {
			err = vg_red_prepare(r, s);
			if (err)
				return err;
		}
		c = vg_red_pick(r, s);
		if (c) {
			vg_red_prefetch(c);
			vg_vm_mark(s->vm, c);
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
		if (fresh) {
			if (s->left + vg_red_new_left(r, s))
				vg_heap_push(r, s);
		} else if (s->left + vg_red_new_left(r, s) && global) {
			vg_heap_down_cold(r, 0);
		} else if (s->left + vg_red_new_left(r, s)) {
			vg_heap_down_key(r, 0);
		} else {
			vg_heap_pop(r);
		}
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

static void vg_red_free_arrays(struct vg_gpu *gpu)
{
	kvfree(gpu->red_st);
	kvfree(gpu->red_heap);
	kvfree(gpu->red_front);
	kvfree(gpu->vmh);
	kvfree(gpu->vmh_pos);
	kvfree(gpu->vmh_vm);
	gpu->red_st = NULL;
	gpu->red_heap = NULL;
	gpu->red_front = NULL;
	gpu->vmh = NULL;
	gpu->vmh_pos = NULL;
	gpu->vmh_vm = NULL;
	gpu->vmh_n = 0;
	gpu->vmh_valid = false;
}

/*
 * Room for every VM in the scratch arrays and the standing heap; they
 * only grow. A standing heap in force is copied over (vm.c reserves as it
 * adds a VM to it), so growing never costs a rebuild.
 */
int vg_red_reserve(struct vg_gpu *gpu)
{
	struct vg_red_vm *st;
	struct vg_red_vm **heap;
	struct vg_vmh_ent *vmh;
	struct vg_vm **vmv;
	u32 *front, *pos;
	u32 cap, n;
	bool valid;

	lockdep_assert_held(&gpu->lock);
	if (gpu->nr_vms <= gpu->red_cap)
		return 0;
	/* Doubling: VMs created one by one reallocate O(log V) times. */
	cap = max_t(u32, gpu->nr_vms, 2 * gpu->red_cap);
	st = kvmalloc_array(cap, sizeof(*st), GFP_KERNEL);
	heap = kvmalloc_array(cap, sizeof(*heap), GFP_KERNEL);
	front = kvmalloc_array(cap, sizeof(*front), GFP_KERNEL);
	vmh = kvmalloc_array(cap, sizeof(*vmh), GFP_KERNEL);
	pos = kvmalloc_array(cap, sizeof(*pos), GFP_KERNEL);
	vmv = kvmalloc_array(cap, sizeof(*vmv), GFP_KERNEL);
	if (!st || !heap || !front || !vmh || !pos || !vmv) {
		kvfree(vmv);
		kvfree(st);
		kvfree(heap);
		kvfree(front);
		kvfree(vmh);
		kvfree(pos);
		return -ENOMEM;
	}
	n = gpu->vmh_n;
	valid = gpu->vmh_valid;
	if (valid && n) {
		memcpy(vmh, gpu->vmh, n * sizeof(*vmh));
		memcpy(pos, gpu->vmh_pos, n * sizeof(*pos));
		memcpy(vmv, gpu->vmh_vm, n * sizeof(*vmv));
	}
	vg_red_free_arrays(gpu);
	gpu->vmh_n = n;
	gpu->vmh_valid = valid;
	gpu->red_st = st;
	gpu->red_heap = heap;
	gpu->red_front = front;
	gpu->vmh = vmh;
	gpu->vmh_pos = pos;
	gpu->vmh_vm = vmv;
	gpu->red_cap = cap;
	return 0;
}

void vg_red_free(struct vg_gpu *gpu)
{
	lockdep_assert_held(&gpu->lock);
	vg_red_free_arrays(gpu);
	gpu->red_cap = 0;
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

/* ---- the start of a call: which VMs the victim heap holds first ------- */

/*
 * COLD: every VM above its entitlement is ranked by its coldest chunk, so
 * each is taken, sampled and sorted before the first pick, all at the
 * same moment (sampled together, their counts compare). s: one of them.
 */
static int vg_red_prepare_above(struct vg_reducer *r, struct vg_red_vm *s)
{
	int err = vg_red_prepare(r, s);

	if (!err)
		vg_red_next(s);
	return err;
}

/*
 * The start when most VMs would be taken anyway (a call that needs about
 * as many chunks as there are VMs): every VM with a candidate into the
 * victim heap at once, one O(V) pass and Floyd's construction, as the
 * walk would cost O(V log V). Nothing is left out (r->out NULL).
 */
static int vg_red_take_all(struct vg_reducer *r)
{
	struct vg_gpu *gpu = r->gpu;
	u32 i;
	int err;

	for (i = 0; i < gpu->vmh_n; i++) {
		const struct vg_vmh_ent *e = &gpu->vmh[i];
		struct vg_vm *vm = gpu->vmh_vm[e->slot];

		if (vg_red_offers(r, vm))
			r->heap[r->nheap++] = vg_red_take(r, vm, e->key,
							  vm->res_nr);
	}
	for (i = 0; r->global && i < r->nheap; i++) {
		if (r->heap[i]->key <= 0 && !r->heap[i]->open)
			continue;
		err = vg_red_prepare_above(r, r->heap[i]);
		if (err)
			return err;
	}
	vg_heap_build(r);
	return 0;
}

/*
 * The start otherwise: the walk from the standing heap's root, the best
 * VM not taken in r->out. COLD takes every VM above its entitlement now:
 * the walk yields them in key order, so the first at or below ends them
 * (the requester is in the heap already).
 */
static int vg_red_take_walk(struct vg_reducer *r)
{
	int err;

	if (r->gpu->vmh_n)
		vg_front_push(r, 0);
	r->out = vg_red_walk(r);
	if (!r->global)
		return 0;
	if (r->nheap && r->heap[0]->key > 0) {
		err = vg_red_prepare_above(r, r->heap[0]);
		if (err)
			return err;
	}
	while (r->out && r->out->key > 0) {
		err = vg_red_prepare_above(r, r->out);
		if (err)
			return err;
		vg_heap_push(r, r->out);
		r->out = vg_red_walk(r);
	}
	return 0;
}

static int vg_reduce_common(struct vg_gpu *gpu, struct vg_vm *req,
			    struct vg_bo *newbo, u64 need, bool cold_only,
			    u64 now, struct vg_plan *plan)
{
	struct vg_reducer r = {
		.gpu = gpu,
		.req = req,
		.newbo = newbo,
		.now = now,
		.global = gpu->policy == VG_POLICY_COLD,
		.cold_only = cold_only,
	};
	struct vg_red_vm *s;
	u64 got = 0, picks;
	u32 i;
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
	if (!gpu->vmh_valid)
		vg_vmh_build(gpu);
	r.heap = gpu->red_heap;
	r.st = gpu->red_st;
	r.front = gpu->red_front;
	if (newbo) {
		r.new_left = newbo->nr_chunks;
		for (i = 0; i < newbo->nr_chunks; i++)
			WARN_ON(newbo->chunks[i].loc != VG_LOC_VRAM);
	}
	/*
	 * The requester first, its new BO counted in its usage (no marks,
	 * checked above: usage is what is resident).
	 */
	if (req) {
		u32 left = unlikely(vg_vm_drain_deferred(req, now)) ?
			   0 : req->res_nr;

		s = vg_red_take(&r, req, gpu->vmh[gpu->vmh_pos[req->vmh_slot]].key +
				(s64)(newbo ? newbo->size : 0), left);
		if (s->left + r.new_left)
			vg_heap_push(&r, s);
	}
	/* Picks if every chunk is whole: about the VMs the call takes. */
	picks = (need >> gpu->chunk_shift) + !!(need & (gpu->chunk_size - 1));
	if (picks + 1 >= gpu->vmh_n || (cold_only && gpu->nr_ent_equal))
		err = vg_red_take_all(&r);
	else
		err = vg_red_take_walk(&r);
	if (err)
		goto err_free_sorted;

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
