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
 * COLD returns only chunks accessed in host RAM (heat restarts at 0 when
 * a chunk leaves VRAM, account.c): one nobody reads costs nothing there,
 * and bringing it back would cost a copy now and another, stalling some
 * VM's allocation, when the room is needed again. Of those, a chunk in
 * sustained use (accessed in two sampling rounds in a row,
 * c->host_streak) may take any free VRAM; one accessed now and then (a
 * checkpoint written, a heartbeat) only the VRAM the reserve leaves.
 * Why: bringing a chunk back costs a copy in and, when the room is
 * needed, a copy out; leaving it costs its accesses over PCIe. Waiting
 * one round in host RAM before paying the round trip is the ski-rental
 * rule (rent until renting has cost what buying would): a chunk read
 * every round pays one round of reads in place, at most about one copy,
 * and a chunk touched once is never copied twice for one touch. Before,
 * a train's checkpoint written in host RAM came back at once, took the
 * reserve, and two rounds later was copied out again. A chunk its VM is
 * owed (vg_return_owed_now()) comes back after one round if that round
 * used about all of it: the rent paid already equals the copy. A chunk
 * due to be used whole again (vg_chunk_due(): its period, reducer.c) is
 * fetched the round before, nobody having touched it in host RAM, but
 * only into room beyond the reserve.
 *
 * And COLD keeps a reserve of free VRAM (vg_return_reserve()) by moving
 * out, in the background, memory idle for two sampling rounds of VMs
 * above their entitlement and then of VMs with an equal share
 * (vg_reduce_cold(), reducer.c says why), so that allocations of the
 * others find room without waiting for copies.
 *
 * COLD needs fresh heat, and sampling walks every chunk under gpu->lock
 * (blocking every allocation meanwhile). So a pass samples only when it
 * has something to do (host RAM in use and VRAM free, or the reserve to
 * refill), and the worker only on every VG_HEAT_SAMPLE_TICKS-th pass
 * (200 ms at the default interval): the GPU driver's counters keep
 * accumulating in between, so a slower sample loses no access. Each such
 * sample is one ageing round (heat halves, vg_sample_heat()), so heat
 * decays with time, not with the rate of allocations.
 * vg_gpu_return_once() always samples (tests, tools: one pass on demand).
 *
 * The LRC file cache (core/lrc/) holds VRAM next to the chunks
 * (gpu->cache_used) and yields first: before a pass, if VMs below their
 * entitlement have relocated chunks that free VRAM cannot take, the cache
 * is asked to evict replicas for the difference (vg_return_cache_yield()).
 * Only for those VMs: they are owed their VRAM, while a VM above its
 * entitlement gets back only what is free (its chunks in host RAM are
 * GPUswap's normal state under pressure, and file replicas in use are
 * worth as much as its surplus). The COLD reserve counts the cache's VRAM
 * as free: it is reclaimable without a VM's relocation, so the cache
 * never makes the reserve move a VM's chunks out.
 *
 * Failures: each VM's relocation is atomic (relocate.c). A VM that fails
 * (a guest whose channels do not drain, no VRAM after all, ...) is
 * skipped for this pass and the others still get their chunks back; the
 * failure is counted in reloc_failures and logged with its reason. Any
 * failure makes the worker back off (up to VG_RETURN_BACKOFF_MAX_MS). A
 * VM whose drain failed (its channels did not stop in VG_STOP_TIMEOUT_NS)
 * is not picked again until its own back-off ends (vg_vm_drain_deferred()),
 * so it costs at most one stop timeout per back-off under gpu->lock.
 */
#include "vg_internal.h"

#define VG_RETURN_BACKOFF_MAX_MS	5000u
#define VG_HEAT_SAMPLE_TICKS		4u
/*
 * COLD: keep 1/16 of VRAM free (vg_return_reserve()). The reserve moves
 * out, ahead of any allocation, memory idle for two rounds; some of that
 * memory is only idle for a while (a checkpoint between two writes, a
 * model between two bursts), and every byte of reserve is a byte of it
 * pushed to host RAM, used there in place inside an iteration when its
 * spell ends. Too small a reserve and allocations wait for copies and
 * take whatever is coldest without the reserve's idle filter. Measured
 * on compare, cloud-day and replay over seeds 1-6 (docs/performance.md,
 * issue 16, change 6): 1/8 cost compare 4-27 % more PCIe bytes and
 * cloud-day up to 3 VMs per GPU; 1/32 cost compare up to 40 % more bytes
 * and Jain 0.95-0.99 against 0.99.
 */
#define VG_RESERVE_SHIFT		4u

/*
 * Has vm an unmarked relocated chunk of at most limit bytes? Every chunk
 * but a BO's tail is chunk_size, so a limit of chunk_size or more only
 * needs one such chunk to exist; in a pass all marks are return marks,
 * so relocated - marked_bytes is what is left unmarked.
 */
/*
 * COLD: a chunk its VM is owed comes back after one round of use if that
 * round read or wrote about all of it in host RAM (an access per 4 KiB):
 * what it cost in place already equals the copy back, and a VM within
 * its entitlement keeps what it gets back (an allocation takes nothing
 * of it while another VM is above its entitlement). Typically memory the
 * reserve moved out while it sat idle, used again (an inference server's
 * model after a quiet spell): without this it waits a second round, read
 * over PCIe by every request. A heartbeat touching a few pages of a
 * chunk waits, as before.
 */
static bool vg_return_owed_now(const struct vg_gpu *gpu,
			       const struct vg_chunk *c)
{
	struct vg_vm *vm = c->bo->vm;

	if (c->touched != gpu->heat_clock || c->heat < vg_chunk_heat_units(c))
		return false;
	return vm->resident + vm->marked_bytes + c->size <= vg_vm_entitlement(vm);
}

static bool vg_return_candidate(const struct vg_gpu *gpu,
				const struct vg_chunk *c, u64 limit, bool any)
{
	if (c->marked || c->size > limit)
		return false;
	if (gpu->policy != VG_POLICY_COLD)
		return true;
	/*
	 * COLD: only chunks read or written over PCIe since they left (heat
	 * counts just those, account.c). One nobody touches costs nothing
	 * in host RAM, while bringing it back costs a copy now and another
	 * when the next allocation needs the room (that copy stalls the
	 * allocating VM): free VRAM is worth more to the next allocation.
	 * Sustained use (two rounds in a row, the latest this one) always
	 * qualifies; any access only with any (room beyond the reserve).
	 */
	/*
	 * ... but a chunk of a VM past its profile (vg_vm_past_profile())
	 * only into room beyond the reserve: the reserve moved it out for
	 * the allocations of VMs within their profiles, and bringing it
	 * back into that room would only have it copied out again.
	 */
	if (c->host_streak >= 2 && c->touched == gpu->heat_clock)
		return any || !vg_vm_past_profile(c->bo->vm);
	if (vg_return_owed_now(gpu, c))
		return true;
	/*
	 * Expected back whole in the next round (vg_chunk_due()): fetched
	 * before it is used, into room beyond the reserve only. Fetching it
	 * into the reserve's room would make the reserve copy other memory
	 * out for it: a copy in and a copy out where writing it in place
	 * costs one pass over PCIe (compare, seeds 2 and 4: 1.45x -> 1.62x
	 * and 1.52x -> 1.71x the oracle's bytes).
	 */
	return any && (c->heat || vg_chunk_due(c, gpu->heat_clock));
}

static bool vg_vm_can_return(struct vg_vm *vm, u64 limit, bool any)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chunk *c;
	u32 k = 0;

	if (vm->relocated <= vm->marked_bytes)
		return false;
	if (limit >= gpu->chunk_size && gpu->policy != VG_POLICY_COLD)
		return true;
	list_for_each_entry(c, &vm->relocated_list, node) {
		if (vg_return_candidate(gpu, c, limit, any))
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
				    bool within, bool any, u64 now, u64 *limit)
{
	struct vg_vm *vm, *best = NULL;
	s64 best_key = 0;

	list_for_each_entry(vm, &gpu->vms, node) {
		u64 have = vm->resident + vm->marked_bytes;
		u64 ent = vg_vm_entitlement(vm);
		u64 lim = avail;
		s64 key;

		/* Its drain failed lately: not retried before its back-off ends. */
		if (vg_vm_drain_deferred(vm, now))
			continue;

		if (within) {
			if (have >= ent)
				continue;
			lim = min_t(u64, lim, ent - have);
		}
		if (!vg_vm_can_return(vm, lim, any))
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

/* Does a rank before b for a return under policy p? */
static bool vg_return_before(enum vg_chunk_policy p, const struct vg_chunk *a,
			     const struct vg_chunk *b)
{
	if (p == VG_POLICY_COLD && a->heat != b->heat)
		return a->heat > b->heat;
	return a->placed_seq > b->placed_seq;
}

static struct vg_chunk *vg_pick_chunk(struct vg_gpu *gpu, struct vg_vm *vm,
				      u64 limit, bool any)
{
	struct vg_chunk *c, *best = NULL;
	u32 n = 0, k, r = 0;

	if (gpu->policy != VG_POLICY_RANDOM) {
		list_for_each_entry(c, &vm->relocated_list, node) {
			vg_resched_every(&r);
			if (!vg_return_candidate(gpu, c, limit, any))
				continue;
			if (!best || vg_return_before(gpu->policy, c, best))
				best = c;
		}
		return best;
	}

	list_for_each_entry(c, &vm->relocated_list, node) {
		vg_resched_every(&r);
		if (vg_return_candidate(gpu, c, limit, any))
			n++;
	}
	if (!n)
		return NULL;
	k = vg_rand_below(&gpu->rand, n);
	list_for_each_entry(c, &vm->relocated_list, node) {
		vg_resched_every(&r);
		if (!vg_return_candidate(gpu, c, limit, any))
			continue;
		if (!k--)
			return c;
	}
	return NULL;
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
		pr_warn_ratelimited("vgmem: %s: returning %llu bytes to %s failed (%d), skipped for this pass\n",
				    gpu->name, (unsigned long long)bytes,
				    vm->name, e);
		if (!*err)
			*err = e;
	}
	return moved;
}

/* Mark chunks to come back in up to *avail bytes; returns the bytes. */
static u64 vg_return_mark(struct vg_gpu *gpu, u64 *avail, bool any, u64 now)
{
	u64 limit = 0, total = 0;

	for (;;) {
		struct vg_vm *vm;
		struct vg_chunk *c;

		vm = vg_pick_winner(gpu, *avail, true, any, now, &limit);
		if (!vm)
			vm = vg_pick_winner(gpu, *avail, false, any, now, &limit);
		if (!vm)
			break;
		c = vg_pick_chunk(gpu, vm, limit, any);
		if (WARN_ON(!c))
			break;
		vg_chunk_mark(c);
		*avail -= c->size;
		total += c->size;
	}
	return total;
}

/*
 * Bring chunks back; see vg_return_pass(). COLD in two rounds of marks:
 * chunks in sustained use in host RAM may take all free VRAM; chunks
 * read or written there only now and then only what the reserve leaves.
 */
static s64 vg_return_chunks(struct vg_gpu *gpu, bool *failed)
{
	u64 avail, want, total, moved, now = ktime_get_ns();
	int err = 0;

	avail = vg_gpu_vram_free(gpu);
	total = vg_return_mark(gpu, &avail, false, now);
	want = gpu->vram_size >> VG_RESERVE_SHIFT;
	if (gpu->policy == VG_POLICY_COLD && avail > want) {
		u64 spare = avail - want;

		total += vg_return_mark(gpu, &spare, true, now);
	}
	if (!total)
		return 0;
	moved = vg_return_marked(gpu, &err);
	if (!err)
		return (s64)moved;
	*failed = true;
	return moved ? (s64)moved : err;
}

/*
 * Returns true if moving chunks out failed (the worker backs off).
 *
 * COLD: keep 1/2^VG_RESERVE_SHIFT of VRAM free by moving out, in the
 * background, chunks that no sample has seen accessed for two ageing
 * rounds (vg_reduce_cold()): of VMs above their entitlement first, then
 * of VMs with an equal share. Without it the next allocation of a VM
 * within its entitlement finds VRAM full and waits for the copy that
 * makes room: its allocation stall pays for another VM's growth, or for
 * memory nobody reads. The copy is charged to the VM whose chunks move
 * (relocate.c), and nothing it moves was in use. A VM at or below an
 * explicit entitlement is never touched, and what the reserve moves out
 * is not brought back unless it is accessed in host RAM
 * (vg_return_candidate()).
 */
static bool vg_return_reserve(struct vg_gpu *gpu)
{
	u64 want = gpu->vram_size >> VG_RESERVE_SHIFT;
	/* The cache's VRAM is room an allocation gets without a copy of ours. */
	u64 avail = gpu->vram_size - min(gpu->vram_used, gpu->vram_size);
	struct vg_plan plan;
	s64 got;
	int err;

	/* The chunks just returned may have filled it. */
	if (avail >= want)
		return false;
	got = vg_reduce_cold(gpu, want - avail, &plan);
	if (got <= 0)
		return got < 0;
	if (vg_plan_check(gpu, &plan)) {
		vg_plan_cancel(gpu, &plan);
		return false;
	}
	err = vg_plan_run(gpu, &plan);
	if (err)
		pr_warn_ratelimited("vgmem: %s: moving %lld cold bytes out for the reserve failed (%d)\n",
				    gpu->name, (long long)got, err);
	return err != 0;
}

/*
 * One pass. Returns the bytes moved back; *failed is set if any VM's
 * relocation failed (then the bytes of the others, or the first error if
 * nothing moved at all; a failed refill of the reserve sets it too).
 * Under COLD a sampling pass then refills the reserve. Heat is sampled
 * (one ageing round) only when the pass has something to do: chunks to
 * return and room for them, or the reserve to refill.
 */
static s64 vg_return_pass(struct vg_gpu *gpu, bool sample, bool *failed)
{
	u64 avail = vg_gpu_vram_free(gpu);
	u64 spare = gpu->vram_size - min(gpu->vram_used, gpu->vram_size);
	bool cold = gpu->policy == VG_POLICY_COLD, ret, res;
	struct vg_vm *vm;
	s64 moved = 0;

	lockdep_assert_held(&gpu->lock);
	*failed = false;
	/* Marks never outlive the gpu->lock section that made them. */
	list_for_each_entry(vm, &gpu->vms, node)
		if (WARN_ON(!list_empty(&vm->marked)))
			vg_unmark_all(vm);
	/* The common case, every tick: nothing to do. O(1). */
	ret = gpu->host_used && avail;
	res = cold && sample && spare < gpu->vram_size >> VG_RESERVE_SHIFT;
	if (!ret && !res)
		return 0;
	if (cold && sample) {
		vg_sample_heat(gpu);
		vg_sample_heat_relocated(gpu);
	}
	if (ret)
		moved = vg_return_chunks(gpu, failed);
	/* A failure backs the worker off, as a failed return does. */
	if (res && vg_return_reserve(gpu))
		*failed = true;
	return moved;
}

/*
 * Bytes of vm's relocated chunks the pass would return within its
 * entitlement (gap bytes below it): the candidates that fit, as
 * vg_pick_winner() and vg_pick_chunk() would take them.
 */
static u64 vg_return_owed(struct vg_gpu *gpu, struct vg_vm *vm, u64 gap)
{
	struct vg_chunk *c;
	u64 sum = 0;
	u32 k = 0;

	list_for_each_entry(c, &vm->relocated_list, node) {
		if (sum >= gap)
			break;
		if (vg_return_candidate(gpu, c, gap - sum, true))
			sum += c->size;
		vg_resched_every(&k);
	}
	return sum;
}

/*
 * VRAM the file cache should free so that the VMs below their
 * entitlement get their relocated chunks back: what they are owed beyond
 * free VRAM, at most what the cache holds. O(1) without a cache in VRAM
 * or without relocated chunks (every tick's common case).
 */
static u64 vg_return_cache_want(struct vg_gpu *gpu)
{
	struct vg_vm *vm;
	u64 owed = 0, avail;

	lockdep_assert_held(&gpu->lock);
	if (!gpu->cache_used || !gpu->host_used)
		return 0;
	list_for_each_entry(vm, &gpu->vms, node) {
		u64 ent = vg_vm_entitlement(vm);

		if (vm->resident >= ent || !vm->relocated)
			continue;
		owed += vg_return_owed(gpu, vm, ent - vm->resident);
	}
	avail = vg_gpu_vram_free(gpu);
	if (owed <= avail)
		return 0;
	return min(owed - avail, gpu->cache_used);
}

/*
 * Before a pass, and without gpu->lock (the cache's lock orders before
 * it): have the cache give back what the VMs below their entitlement are
 * owed. The pass then takes the lock and recomputes everything; if the
 * cache refilled in between, those VMs just wait for a later pass (or a
 * later yield): a missed return, never a wrong one.
 */
static void vg_return_cache_yield(struct vg_gpu *gpu)
{
	u64 want;

	mutex_lock(&gpu->lock);
	want = vg_return_cache_want(gpu);
	mutex_unlock(&gpu->lock);
	if (want)
		vg_gpu_cache_reclaim(gpu, want);
}

s64 vg_gpu_return_once(struct vg_gpu *gpu)
{
	bool failed;
	s64 ret;

	vg_return_cache_yield(gpu);
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

	vg_return_cache_yield(gpu);
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
