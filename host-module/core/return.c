// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Returning memory to the GPU (GPUswap sections 4.5 and 5.5).
 *
 * A kernel thread wakes every return_ms (50 ms by default: long enough to
 * catch a burst of frees in one pass, short enough that VRAM does not sit
 * idle) and, while free VRAM holds a relocated chunk, marks chunks to come
 * back, then runs the relocation mechanism towards VRAM, one VM at a time.
 *
 * Winner: GPUswap picks the application owning the least GPU memory. With
 * entitlements the measure is resident - entitlement, counting chunks
 * already marked in this pass as back. VMs that are below their
 * entitlement and get a chunk that keeps them at or below it come first;
 * only when none is left do chunks go to whoever is least over (GPUswap
 * returns whenever there is room: idle VRAM helps nobody, and the reducer
 * takes it back when someone needs it).
 *
 * Chunk: RANDOM as the paper; COLD the hottest first (it hurts most over
 * PCIe); LRA the most recently placed first (the reverse of the order in
 * which the reducer evicts).
 *
 * COLD needs fresh heat, and sampling walks every chunk under gpu->lock
 * (blocking every allocation meanwhile). So a pass samples only when it
 * has something to return (host RAM in use and VRAM free), and the
 * worker only on every VG_HEAT_SAMPLE_TICKS-th such pass (200 ms at the
 * default interval): the backend's counters keep accumulating in between,
 * so a slower sample loses no access, it only ages heat more coarsely.
 * vg_gpu_return_once() always samples (tests, tools: one pass on demand).
 *
 * Failures: each VM's relocation is atomic (relocate.c). A VM that fails
 * (a guest whose channels do not drain, no VRAM after all, ...) is
 * skipped for this pass and the others still get their chunks back; the
 * failure is counted in reloc_failures and logged with its reason. Any
 * failure makes the worker back off (up to VG_RETURN_BACKOFF_MAX_MS), so
 * a VM that cannot drain costs one drain timeout per back-off period
 * under gpu->lock, not one per tick.
 */
#include "vg_internal.h"

#define VG_RETURN_BACKOFF_MAX_MS	5000u
#define VG_HEAT_SAMPLE_TICKS		4u
#define VG_RESCHED_EVERY		256u

static inline void vg_resched_every(u32 *n)
{
	if (!(++*n % VG_RESCHED_EVERY))
		cond_resched();
}

/*
 * Has vm an unmarked relocated chunk of at most limit bytes? Every chunk
 * but a BO's tail is chunk_size, so a limit of chunk_size or more only
 * needs one such chunk to exist; in a pass all marks are return marks,
 * so relocated - marked_bytes is what is left unmarked.
 */
static bool vg_vm_can_return(struct vg_vm *vm, u64 limit)
{
	struct vg_chunk *c;
	u32 k = 0;

	if (vm->relocated <= vm->marked_bytes)
		return false;
	if (limit >= vm->gpu->chunk_size)
		return true;
	list_for_each_entry(c, &vm->relocated_list, node) {
		if (!c->marked && c->size <= limit)
			return true;
		vg_resched_every(&k);
	}
	return false;
}

/*
 * The VM furthest below its entitlement that can take a chunk from avail
 * free bytes; with within, only VMs that stay within their entitlement.
 * *limit receives the largest chunk the winner may get.
 */
static struct vg_vm *vg_pick_winner(struct vg_gpu *gpu, u64 avail,
				    bool within, u64 *limit)
{
	struct vg_vm *vm, *best = NULL;
	s64 best_key = 0;

	list_for_each_entry(vm, &gpu->vms, node) {
		u64 have = vm->resident + vm->marked_bytes;
		u64 ent = vg_vm_entitlement(vm);
		u64 lim = avail;
		s64 key;

		if (within) {
			if (have >= ent)
				continue;
			lim = min_t(u64, lim, ent - have);
		}
		if (!vg_vm_can_return(vm, lim))
			continue;
		key = (s64)have - (s64)ent;
		if (!best || key < best_key) {
			best = vm;
			best_key = key;
			*limit = lim;
		}
	}
	return best;
}

static bool vg_return_candidate(const struct vg_chunk *c, u64 limit)
{
	return !c->marked && c->size <= limit;
}

/* Does a rank before b for a return under policy p? */
static bool vg_return_before(enum vg_chunk_policy p, const struct vg_chunk *a,
			     const struct vg_chunk *b)
{
	if (p == VG_POLICY_COLD && a->heat != b->heat)
		return a->heat > b->heat;
	return a->placed_seq > b->placed_seq;
}

static struct vg_chunk *vg_pick_chunk(struct vg_gpu *gpu, struct vg_vm *vm,
				      u64 limit)
{
	struct vg_chunk *c, *best = NULL;
	u32 n = 0, k, r = 0;

	if (gpu->policy != VG_POLICY_RANDOM) {
		list_for_each_entry(c, &vm->relocated_list, node) {
			vg_resched_every(&r);
			if (!vg_return_candidate(c, limit))
				continue;
			if (!best || vg_return_before(gpu->policy, c, best))
				best = c;
		}
		return best;
	}

	list_for_each_entry(c, &vm->relocated_list, node) {
		vg_resched_every(&r);
		if (vg_return_candidate(c, limit))
			n++;
	}
	if (!n)
		return NULL;
	k = vg_rand_below(&gpu->rand, n);
	list_for_each_entry(c, &vm->relocated_list, node) {
		vg_resched_every(&r);
		if (!vg_return_candidate(c, limit))
			continue;
		if (!k--)
			return c;
	}
	return NULL;
}

/*
 * vg_sample_heat() covers resident chunks (what the reducer ranks); the
 * relocated ones are ranked here, and their accesses over PCIe are the
 * ones worth counting. Same decay as reducer.c.
 */
static void vg_sample_heat_relocated(struct vg_gpu *gpu)
{
	struct vg_vm *vm;
	struct vg_chunk *c;
	u32 k = 0;

	if (!gpu->ops->sample_access)
		return;
	list_for_each_entry(vm, &gpu->vms, node) {
		list_for_each_entry(c, &vm->relocated_list, node) {
			c->heat = c->heat / 2 +
				  gpu->ops->sample_access(gpu->backend, c->mem);
			vg_resched_every(&k);
		}
	}
}

/*
 * Relocate every VM with marks to VRAM; one that fails is skipped (its
 * marks are cleared by vg_relocate_vm) and the others go on. Returns the
 * bytes moved; *err gets the first error, or stays 0.
 */
static u64 vg_return_marked(struct vg_gpu *gpu, int *err)
{
	struct vg_vm *vm;
	u64 moved = 0;

	list_for_each_entry(vm, &gpu->vms, node) {
		u64 bytes = vm->marked_bytes;
		int e;

		if (!bytes)
			continue;
		e = vg_relocate_vm(vm, VG_LOC_VRAM);
		if (!e) {
			moved += bytes;
			continue;
		}
		pr_warn("vgmem: %s: returning %llu bytes to %s failed (%d), skipped for this pass\n",
			gpu->name, (unsigned long long)bytes, vm->name, e);
		if (!*err)
			*err = e;
	}
	return moved;
}

/*
 * One pass. Returns the bytes moved back; *failed is set if any VM's
 * relocation failed (then the bytes of the others, or the first error if
 * nothing moved at all).
 */
static s64 vg_return_pass(struct vg_gpu *gpu, bool sample, bool *failed)
{
	struct vg_vm *vm;
	u64 avail, limit = 0, total = 0, moved;
	int err = 0;

	lockdep_assert_held(&gpu->lock);
	*failed = false;
	/* Marks never outlive the gpu->lock section that made them. */
	list_for_each_entry(vm, &gpu->vms, node)
		if (WARN_ON(!list_empty(&vm->marked)))
			vg_unmark_all(vm);
	/* The common case, every tick: nothing out, or no room. O(1). */
	if (!gpu->host_used || gpu->vram_used >= gpu->vram_size)
		return 0;
	if (sample && gpu->policy == VG_POLICY_COLD) {
		vg_sample_heat(gpu);
		vg_sample_heat_relocated(gpu);
	}
	avail = gpu->vram_size - gpu->vram_used;

	for (;;) {
		struct vg_chunk *c;

		vm = vg_pick_winner(gpu, avail, true, &limit);
		if (!vm)
			vm = vg_pick_winner(gpu, avail, false, &limit);
		if (!vm)
			break;
		c = vg_pick_chunk(gpu, vm, limit);
		if (WARN_ON(!c))
			break;
		vg_chunk_mark(c);
		avail -= c->size;
		total += c->size;
	}
	if (!total)
		return 0;
	moved = vg_return_marked(gpu, &err);
	if (!err)
		return (s64)moved;
	*failed = true;
	return moved ? (s64)moved : err;
}

s64 vg_gpu_return_once(struct vg_gpu *gpu)
{
	bool failed;
	s64 ret;

	mutex_lock(&gpu->lock);
	ret = vg_return_pass(gpu, true, &failed);
	mutex_unlock(&gpu->lock);
	return ret;
}

void vg_return_kick(struct vg_gpu *gpu)
{
	WRITE_ONCE(gpu->return_kick, true);
	wake_up(&gpu->return_wq);
}

/* The worker's pass: the heat cadence, and whether to back off. */
static bool vg_return_tick(struct vg_gpu *gpu)
{
	bool failed, sample;

	mutex_lock(&gpu->lock);
	sample = !(gpu->return_ticks++ % VG_HEAT_SAMPLE_TICKS);
	vg_return_pass(gpu, sample, &failed);
	mutex_unlock(&gpu->lock);
	return failed;
}

static int vg_return_thread(void *data)
{
	struct vg_gpu *gpu = data;
	u32 fails = 0;

	/*
	 * Leave only through kthread_stop(): a kthread that returns early
	 * would be gone when vg_return_stop() stops it.
	 */
	while (!kthread_should_stop()) {
		u32 set = READ_ONCE(gpu->return_ms);
		u64 ms = set ? set : VG_RETURN_MS_DEFAULT;
		bool woken;

		/* A pass that keeps failing should not log every 50 ms. */
		if (fails)
			ms = min_t(u64, ms << min_t(u32, fails, 7),
				   VG_RETURN_BACKOFF_MAX_MS);
		woken = wait_event_timeout(gpu->return_wq,
					   kthread_should_stop() ||
					   READ_ONCE(gpu->stopping) ||
					   READ_ONCE(gpu->return_ms) != set ||
					   READ_ONCE(gpu->return_kick),
					   msecs_to_jiffies((unsigned int)ms));
		if (kthread_should_stop())
			break;
		if (READ_ONCE(gpu->stopping)) {
			msleep(1);
			continue;
		}
		/* A new interval (vg_gpu_set_return_interval) applies now. */
		if (woken && !READ_ONCE(gpu->return_kick))
			continue;
		/* Cleared first: a kick during the pass asks for another. */
		WRITE_ONCE(gpu->return_kick, false);
		fails = vg_return_tick(gpu) ? fails + 1 : 0;
	}
	return 0;
}

int vg_return_start(struct vg_gpu *gpu)
{
	struct task_struct *t;

	if (gpu->return_task)
		return -EBUSY;
	WRITE_ONCE(gpu->stopping, false);
	t = kthread_run(vg_return_thread, gpu, "vgmem-ret-%s", gpu->name);
	if (IS_ERR(t))
		return PTR_ERR(t);
	gpu->return_task = t;
	return 0;
}

/* Called without gpu->lock: the thread may be waiting for it. */
void vg_return_stop(struct vg_gpu *gpu)
{
	if (!gpu->return_task)
		return;
	lockdep_assert_not_held(&gpu->lock);
	WRITE_ONCE(gpu->stopping, true);
	wake_up_all(&gpu->return_wq);
	kthread_stop(gpu->return_task);
	gpu->return_task = NULL;
}
