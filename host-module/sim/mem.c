// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Simulated memory: VRAM is one arena handed out in 4 KiB frames from a
 * stack of free frame indices (a mem's frames need not be contiguous, as
 * with a real GPU's page-granular VRAM allocator); host memory is one zeroed
 * buffer per mem, bounded by host_limit.
 *
 * Fresh memory is always zeroed: a frame freed by one VM is cleared before
 * the next owner can see it. Zeroing at allocation would cost the
 * allocator ~300 us per 2 MiB, on the relocation path; so freed frames go
 * on a dirty stack and a zeroer thread moves them, cleared, to the clean
 * stack in the background. Allocation takes clean frames first and zeroes
 * only the dirty ones it still needs, itself, before anyone can map them;
 * frames the zeroer is clearing right now are waited for, never handed out.
 *
 * Where the arena costs RAM only as it is touched (userspace), the zeroer
 * gives freed frames back to the OS, and they read as zeroes when next
 * touched: VRAM nobody uses costs no RAM. Giving back and faulting in again
 * is a system call, a TLB shootdown in every thread and a page fault per
 * frame, so up to vram_retain bytes of freed frames are cleared in place
 * instead and kept on a warm stack that allocation takes first.
 */
#include "sim_internal.h"

#define SIM_ZERO_BATCH		64	/* frames the zeroer takes at once */
#define SIM_ZERO_POLL_MS	10

static int sim_zero_main(void *data);

static u64 sim_seg_len(struct vg_sim *sim, u32 i)
{
	u64 at = (u64)i * SIM_SEG_FRAMES << SIM_PAGE_SHIFT;

	return min_t(u64, sim->vram_size - at,
		     (u64)SIM_SEG_FRAMES << SIM_PAGE_SHIFT);
}

static void sim_vram_free_segs(struct vg_sim *sim)
{
	u32 i;

	for (i = 0; i < sim->nr_segs; i++)
		os_vmem_free(sim->vram_seg[i], sim_seg_len(sim, i));
	kvfree(sim->vram_seg);
	sim->vram_seg = NULL;
}

/*
 * The arena in segments: one multi-GiB allocation is not possible in the
 * kernel (kvmalloc refuses more than INT_MAX bytes). Where the OS commits
 * an arena only as it is touched (userspace, OS_VMEM_ZEROED), VRAM costs
 * host RAM only for the frames in use: the arena starts clean, and the
 * zeroer gives freed frames back instead of writing zeroes into them.
 */
int sim_mem_init(struct vg_sim *sim)
{
	u32 i;

	sim->nr_frames = (u32)(sim->vram_size >> SIM_PAGE_SHIFT);
	sim->nr_segs = DIV_ROUND_UP(sim->nr_frames, SIM_SEG_FRAMES);
	sim->vram_seg = kvcalloc(sim->nr_segs, sizeof(*sim->vram_seg),
				 GFP_KERNEL);
	if (!sim->vram_seg)
		return -ENOMEM;
	for (i = 0; i < sim->nr_segs; i++) {
		sim->vram_seg[i] = os_vmem_alloc(sim_seg_len(sim, i));
		if (!sim->vram_seg[i])
			goto err_free_segs;
	}
	sim->clean = kvcalloc(sim->nr_frames, sizeof(u32), GFP_KERNEL);
	sim->dirty = kvcalloc(sim->nr_frames, sizeof(u32), GFP_KERNEL);
	if (!sim->clean || !sim->dirty)
		goto err_free_stacks;
	if (sim->retain) {
		sim->warm = kvcalloc(sim->retain, sizeof(u32), GFP_KERNEL);
		if (!sim->warm)
			goto err_free_stacks;
	}
	sim->nr_warm = 0;
	/* Frame 0 on top; dirty unless the arena came zeroed. */
	for (i = 0; i < sim->nr_frames; i++) {
		if (OS_VMEM_ZEROED)
			sim->clean[i] = sim->nr_frames - 1 - i;
		else
			sim->dirty[i] = sim->nr_frames - 1 - i;
	}
	sim->nr_dirty = OS_VMEM_ZEROED ? 0 : sim->nr_frames;
	sim->nr_clean = OS_VMEM_ZEROED ? sim->nr_frames : 0;
	sim->nr_zeroing = 0;
	mutex_init(&sim->mem_lock);
	init_waitqueue_head(&sim->dirty_wq);
	init_waitqueue_head(&sim->zeroed_wq);
	sim->zeroer = kthread_run(sim_zero_main, sim, "vgsim-zero");
	if (IS_ERR(sim->zeroer)) {
		sim->zeroer = NULL;
		mutex_destroy(&sim->mem_lock);
		goto err_free_stacks;
	}
	return 0;

err_free_stacks:
	kvfree(sim->warm);
	kvfree(sim->clean);
	kvfree(sim->dirty);
err_free_segs:
	sim_vram_free_segs(sim);
	return -ENOMEM;
}

void sim_mem_fini(struct vg_sim *sim)
{
	WARN_ON(sim->nr_mems);
	if (sim->zeroer)
		kthread_stop(sim->zeroer);
	kvfree(sim->warm);
	kvfree(sim->clean);
	kvfree(sim->dirty);
	sim_vram_free_segs(sim);
	mutex_destroy(&sim->mem_lock);
}

static u8 *sim_frame(struct vg_sim *sim, u32 f)
{
	return sim->vram_seg[f >> SIM_SEG_SHIFT] +
	       ((u64)(f & (SIM_SEG_FRAMES - 1)) << SIM_PAGE_SHIFT);
}

static int sim_frame_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Zero a batch of frames, each run of neighbours in one segment at once:
 * in userspace each call gives pages back to the kernel (a system call),
 * and a freed chunk's frames are mostly neighbours. The first warm frames
 * (after sorting) are cleared in place and stay resident.
 */
static void sim_zero_frames(struct vg_sim *sim, u32 *f, u32 n, u32 warm)
{
	u32 i, run;

	sort(f, n, sizeof(*f), sim_frame_cmp, NULL);
	for (i = 0; i < n; i += run) {
		/* A run ends where the warm frames do. */
		for (run = 1; i + run < n && f[i + run] == f[i] + run &&
		     (f[i + run] >> SIM_SEG_SHIFT) == (f[i] >> SIM_SEG_SHIFT) &&
		     i + run != warm;
		     run++)
			;
		if (i < warm)
			memset(sim_frame(sim, f[i]), 0,
			       (size_t)run << SIM_PAGE_SHIFT);
		else
			os_vmem_zero(sim_frame(sim, f[i]),
				     (size_t)run << SIM_PAGE_SHIFT);
	}
}

/* The background zeroer: dirty frames to clean ones, a batch at a time. */
static int sim_zero_main(void *data)
{
	struct vg_sim *sim = data;
	u32 batch[SIM_ZERO_BATCH];
	u32 i, n, warm;

	while (!kthread_should_stop()) {
		mutex_lock(&sim->mem_lock);
		/* An allocator waits for the frames in flight: take no more. */
		n = sim->zero_waiters ? 0 : min_t(u32, sim->nr_dirty,
						  SIM_ZERO_BATCH);
		for (i = 0; i < n; i++)
			batch[i] = sim->dirty[sim->nr_dirty - 1 - i];
		/* Allocation only takes warm frames: the room stays. */
		warm = min_t(u32, n, sim->retain - sim->nr_warm);
		/* Read without the lock by the waits below and in alloc. */
		WRITE_ONCE(sim->nr_dirty, sim->nr_dirty - n);
		WRITE_ONCE(sim->nr_zeroing, sim->nr_zeroing + n);
		mutex_unlock(&sim->mem_lock);
		if (!n) {
			/* The timeout bounds the wait should kthread_stop not wake us. */
			wait_event_timeout(sim->dirty_wq,
					   (READ_ONCE(sim->nr_dirty) &&
					    !READ_ONCE(sim->zero_waiters)) ||
					   kthread_should_stop(),
					   msecs_to_jiffies(SIM_ZERO_POLL_MS));
			continue;
		}
		sim_zero_frames(sim, batch, n, warm);
		mutex_lock(&sim->mem_lock);
		for (i = 0; i < warm; i++)
			sim->warm[sim->nr_warm++] = batch[i];
		for (; i < n; i++)
			sim->clean[sim->nr_clean++] = batch[i];
		WRITE_ONCE(sim->nr_zeroing, sim->nr_zeroing - n);
		mutex_unlock(&sim->mem_lock);
		wake_up_all(&sim->zeroed_wq);
		cond_resched();
	}
	return 0;
}

static int sim_mem_alloc_vram(struct vg_sim *sim, struct vg_mem *mem)
{
	u32 i, n = mem->nr_pages, from_clean, from_warm;

	mem->frames = kvcalloc(n, sizeof(u32), GFP_KERNEL);
	if (!mem->frames)
		return -ENOMEM;
	mutex_lock(&sim->mem_lock);
	/* Enough only with the frames being zeroed: wait for those. */
	while (sim->nr_warm + sim->nr_clean + sim->nr_dirty < n &&
	       sim->nr_warm + sim->nr_clean + sim->nr_dirty +
	       sim->nr_zeroing >= n) {
		WRITE_ONCE(sim->zero_waiters, sim->zero_waiters + 1);
		mutex_unlock(&sim->mem_lock);
		wait_event(sim->zeroed_wq, !READ_ONCE(sim->nr_zeroing));
		mutex_lock(&sim->mem_lock);
		WRITE_ONCE(sim->zero_waiters, sim->zero_waiters - 1);
	}
	if (sim->nr_warm + sim->nr_clean + sim->nr_dirty < n) {
		mutex_unlock(&sim->mem_lock);
		kvfree(mem->frames);
		return -ENOSPC;
	}
	/* Resident frames first: the others fault in as they are touched. */
	from_warm = min(n, sim->nr_warm);
	for (i = 0; i < from_warm; i++)
		mem->frames[i] = sim->warm[--sim->nr_warm];
	from_clean = from_warm + min(n - from_warm, sim->nr_clean);
	for (; i < from_clean; i++)
		mem->frames[i] = sim->clean[--sim->nr_clean];
	for (; i < n; i++)
		mem->frames[i] = sim->dirty[sim->nr_dirty - 1 - (i - from_clean)];
	WRITE_ONCE(sim->nr_dirty, sim->nr_dirty - (n - from_clean));
	sim->nr_mems++;
	mutex_unlock(&sim->mem_lock);
	/* The zeroer may have paused for us. */
	wake_up_all(&sim->dirty_wq);

	/* Zero the dirty ones outside the lock: the frames are ours now. */
	for (i = from_clean; i < n; i++)
		memset(sim_mem_page(mem, i), 0, SIM_PAGE_SIZE);
	return 0;
}

static int sim_mem_alloc_host(struct vg_sim *sim, struct vg_mem *mem)
{
	mutex_lock(&sim->mem_lock);
	if (sim->host_limit && (sim->host_used > sim->host_limit ||
				mem->size > sim->host_limit - sim->host_used)) {
		mutex_unlock(&sim->mem_lock);
		return -ENOMEM;
	}
	/* Reserve first so concurrent allocations cannot overshoot. */
	sim->host_used += mem->size;
	mutex_unlock(&sim->mem_lock);

	mem->host = kvzalloc(mem->size, GFP_KERNEL);
	mutex_lock(&sim->mem_lock);
	if (!mem->host)
		sim->host_used -= mem->size;
	else
		sim->nr_mems++;
	mutex_unlock(&sim->mem_lock);
	return mem->host ? 0 : -ENOMEM;
}

int sim_mem_alloc(struct vg_sim *sim, enum vg_loc loc, u64 size,
		  struct vg_mem **out)
{
	struct vg_mem *mem;
	u64 pages;
	int err;

	if (!out || !size || (loc != VG_LOC_VRAM && loc != VG_LOC_HOST))
		return -EINVAL;
	/* Not DIV_ROUND_UP: size + 4095 may wrap. */
	pages = (size >> SIM_PAGE_SHIFT) + !!(size & (SIM_PAGE_SIZE - 1));
	if (pages > 0xffffffffull)
		return loc == VG_LOC_VRAM ? -ENOSPC : -ENOMEM;
	if (loc == VG_LOC_VRAM && sim_inject_hit(sim, VG_SIM_INJ_VRAM_ALLOC))
		return -ENOSPC;
	if (loc == VG_LOC_HOST && sim_inject_hit(sim, VG_SIM_INJ_HOST_ALLOC))
		return -ENOMEM;

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return -ENOMEM;
	mem->sim = sim;
	mem->loc = loc;
	mem->nr_pages = (u32)pages;
	mem->size = pages << SIM_PAGE_SHIFT;
	atomic_set(&mem->refs, 1);
	atomic64_set(&mem->access, 0);

	if (loc == VG_LOC_VRAM)
		err = sim_mem_alloc_vram(sim, mem);
	else
		err = sim_mem_alloc_host(sim, mem);
	if (err) {
		kfree(mem);
		return err;
	}
	*out = mem;
	return 0;
}

void sim_mem_get(struct vg_mem *mem)
{
	atomic_inc(&mem->refs);
}

/* n references at once: one atomic for all the PTEs of a map. */
void sim_mem_get_many(struct vg_mem *mem, u32 n)
{
	if (n)
		(void)atomic_add_return((int)n, &mem->refs);
}

/* The last reference went: return the frames or the host buffer. */
static void sim_mem_release(struct vg_mem *mem)
{
	struct vg_sim *sim = mem->sim;
	u32 i;

	mutex_lock(&sim->mem_lock);
	if (mem->loc == VG_LOC_VRAM) {
		for (i = 0; i < mem->nr_pages; i++)
			sim->dirty[sim->nr_dirty + i] = mem->frames[i];
		WRITE_ONCE(sim->nr_dirty, sim->nr_dirty + mem->nr_pages);
	} else {
		sim->host_used -= mem->size;
	}
	sim->nr_mems--;
	mutex_unlock(&sim->mem_lock);
	if (mem->loc == VG_LOC_VRAM) {
		wake_up_all(&sim->dirty_wq);
		kvfree(mem->frames);
	} else {
		kvfree(mem->host);
	}
	kfree(mem);
}

void sim_mem_put(struct vg_mem *mem)
{
	if (atomic_dec_and_test(&mem->refs))
		sim_mem_release(mem);
}

/* Drop n references at once (the PTEs a map replaced). */
void sim_mem_put_many(struct vg_mem *mem, u32 n)
{
	if (n && !atomic_add_return(-(int)n, &mem->refs))
		sim_mem_release(mem);
}

/* Subtracting what was read keeps the touches that race with the sample. */
u64 sim_mem_sample(struct vg_mem *mem)
{
	s64 n = atomic64_read(&mem->access);

	atomic64_add(-n, &mem->access);
	return (u64)n;
}

u64 vg_sim_vram_free(struct vg_sim *sim)
{
	u64 n;

	mutex_lock(&sim->mem_lock);
	n = (u64)(sim->nr_warm + sim->nr_clean + sim->nr_dirty +
		  sim->nr_zeroing) << SIM_PAGE_SHIFT;
	mutex_unlock(&sim->mem_lock);
	return n;
}

u64 vg_sim_vram_clean(struct vg_sim *sim)
{
	u64 n;

	mutex_lock(&sim->mem_lock);
	n = (u64)(sim->nr_warm + sim->nr_clean) << SIM_PAGE_SHIFT;
	mutex_unlock(&sim->mem_lock);
	return n;
}
