// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Buffer objects: validation, GPU VA assignment, and the allocation path of
 * GPUswap section 4 — if VRAM is short, the reducer picks chunks, the
 * relocation engine moves them to host RAM, and the new BO is placed; the
 * time this takes is the allocation stall.
 *
 * Errors of vg_bo_alloc, in the order they are checked (nothing changes
 * on any of them):
 *  -EINVAL  size zero, not a multiple of VGMEM_PAGE_SIZE or larger than the
 *           VA range; unknown flags; a FIXED_VA address unaligned, outside
 *           [VGMEM_VA_START, VGMEM_VA_END) or overlapping a BO;
 *  -E2BIG   size above VGMEM_BO_MAX_SIZE;
 *  -ENOSPC  the VM's quota would be exceeded, or no VA hole is large enough;
 *  -ENOMEM  the BO cannot fit in free VRAM plus what is left of the host
 *           budget (when one is set), no VRAM can be freed for it, the host
 *           budget for relocated chunks is exhausted, or the GPU driver or the
 *           host kernel ran out of memory. Never because a victim's
 *           channels would not stop: that victim is skipped and the
 *           reducer chooses again without it (vg_bo_alloc()'s retry).
 * Every check that needs no allocation comes before the first allocation:
 * the chunk array costs about 112 bytes per chunk, so a hostile size must
 * not make the host allocate anything before it is refused.
 */
#include "vg_internal.h"

/*
 * VGMEM_BO_MAX_SIZE (uapi) bounds the chunk array: at the smallest chunk
 * size, 1 Mi chunks, about 112 MiB, when no host budget bounds it more
 * tightly.
 */

static u64 vg_chunk_off(const struct vg_gpu *gpu, u32 index)
{
	return (u64)index << gpu->chunk_shift;
}

/* NULL for no node and for an LRC file map's node (n->file). */
static struct vg_bo *vg_bo_of(struct vg_va_node *n)
{
	return n && !n->file ? container_of(n, struct vg_bo, va_node) : NULL;
}

/*
 * The BO of n or of the first BO node after it: LRC file maps share the
 * VA index (so neither overlaps the other) but not vm->bos.
 */
static struct vg_bo *vg_bo_at_or_after(struct vg_va_node *n)
{
	while (n && n->file)
		n = vg_va_next(n);
	return vg_bo_of(n);
}

struct vg_bo *vg_bo_find(struct vg_vm *vm, u64 va)
{
	lockdep_assert_held(&vm->gpu->lock);
	return vg_bo_of(vg_va_lookup(&vm->va, va));
}

struct vg_bo *vg_bo_from(struct vg_vm *vm, u64 va)
{
	struct vg_va_node *n;

	lockdep_assert_held(&vm->gpu->lock);
	/* The first node ending after va; skip it if it began before. */
	n = vg_va_end_after(&vm->va, va);
	if (n && n->start < va)
		n = vg_va_next(n);
	return vg_bo_at_or_after(n);
}

/*
 * The BO before which [va, va + size) goes in the sorted list, or NULL for
 * the tail; *overlap tells whether it would overlap that BO. It is the
 * first BO that ends after va: every BO before it ends at or below va.
 */
static struct vg_bo *vg_bo_fixed_slot(struct vg_vm *vm, u64 va, u64 size,
				      bool *overlap)
{
	struct vg_va_node *n = vg_va_end_after(&vm->va, va);

	*overlap = n && n->start < va + size;
	return vg_bo_at_or_after(n);
}

/*
 * First fit over the holes between BOs (sorted by va), chunk aligned so a
 * chunk never straddles two PTE blocks of different BOs. Returns the BO to
 * insert before (NULL: the tail) through *next; -ENOSPC if no hole fits.
 * vm->va was set up with the chunk size as alignment (vm.c), and its
 * holes index makes this O(log BOs) rather than a walk over the list.
 */
static int vg_bo_find_va(struct vg_vm *vm, u64 size, u64 *va,
			 struct vg_bo **next)
{
	struct vg_va_node *n;
	int err;

	err = vg_va_first_fit(&vm->va, size, va, &n);
	if (err)
		return err;
	*next = vg_bo_at_or_after(n);
	return 0;
}

/* Checks that need no state; cheap, before anything is allocated. */
static int vg_bo_check_args(u64 size, u32 flags, u64 va)
{
	u64 end;

	if (!size || !IS_ALIGNED(size, VGMEM_PAGE_SIZE) ||
	    size > VGMEM_VA_END - VGMEM_VA_START)
		return -EINVAL;
	if (flags & ~VGMEM_BO_FLAGS_ALL)
		return -EINVAL;
	if (flags & VGMEM_BO_FIXED_VA) {
		if (!IS_ALIGNED(va, VGMEM_PAGE_SIZE) || va < VGMEM_VA_START ||
		    check_add_overflow(va, size, &end) || end > VGMEM_VA_END)
			return -EINVAL;
	}
	return 0;
}

/*
 * Checks against the VM's and the GPU's state that allocate nothing: the
 * address (*start in: the FIXED_VA address; out: where the BO goes, before
 * *next), the quota, and whether the BO could be placed at all: with a
 * host budget, VRAM and host RAM together must have room for it even if
 * every other chunk could be moved. gpu->lock held.
 */
static int vg_bo_admit(struct vg_vm *vm, u64 size, u32 flags, u64 *start,
		       struct vg_bo **next)
{
	struct vg_gpu *gpu = vm->gpu;
	u64 room;
	bool overlap;
	int err;

	lockdep_assert_held(&gpu->lock);
	/* Bad arguments first: -EINVAL wins over a full quota. */
	if (flags & VGMEM_BO_FIXED_VA) {
		*next = vg_bo_fixed_slot(vm, *start, size, &overlap);
		if (overlap)
			return -EINVAL;
	} else {
		err = vg_bo_find_va(vm, size, start, next);
		if (err)
			return err;
	}
	if (vm->quota && (size > vm->quota || vm->allocated > vm->quota - size))
		return -ENOSPC;
	if (gpu->host_budget) {
		/*
		 * Both terms are at most their sizes, so no overflow. The
		 * file cache's VRAM counts as room: it yields before any
		 * chunk moves (vg_bo_cache_want()).
		 */
		room = gpu->vram_size - min(gpu->vram_used, gpu->vram_size) +
		       gpu->host_budget - min(gpu->host_used, gpu->host_budget);
		/* Not logged: like the quota, a guest can ask for it cheaply. */
		if (size > room)
			return -ENOMEM;
	}
	return 0;
}

/* A new BO of size bytes, its chunks set up for VRAM, on no list. */
static struct vg_bo *vg_bo_new(struct vg_vm *vm, u64 size)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_bo *bo;
	u32 i, nr = (u32)DIV_ROUND_UP(size, gpu->chunk_size);

	/* size <= VGMEM_BO_MAX_SIZE: neither the count nor the bytes overflow. */
	bo = kvzalloc(sizeof(*bo) + (size_t)nr * sizeof(bo->chunks[0]),
		      GFP_KERNEL);
	if (!bo)
		return NULL;
	bo->vm = vm;
	bo->size = size;
	bo->nr_chunks = nr;
	for (i = 0; i < nr; i++) {
		struct vg_chunk *c = &bo->chunks[i];

		c->bo = bo;
		c->index = i;
		c->size = min_t(u64, gpu->chunk_size, size - vg_chunk_off(gpu, i));
		c->loc = VG_LOC_VRAM;
		INIT_LIST_HEAD(&c->node);
		INIT_LIST_HEAD(&c->mark_node);
	}
	return bo;
}

/*
 * Bytes the file cache should give back before the reducer moves anyone's
 * chunks for a BO of size bytes that does not fit in free VRAM (the
 * cache yields first: a replica is cheaper to drop than a VM's memory is
 * to relocate; a shared one is freed, a private one merged into the host
 * copy, its unreleased writes kept in host RAM, core/lrc/evict.c).
 * vg_bo_alloc() computes it under gpu->lock and calls the hook after
 * dropping the lock (the cache's lock orders before gpu->lock), then
 * takes the lock again and checks everything anew. If the cache refills
 * meanwhile (a GPU fault takes a free page) or a pinned replica could
 * not go, the reducer relocates for the difference: that costs a
 * relocation, never correctness, because vg_bo_make_room() recomputes
 * free VRAM under the lock it then keeps until the BO is placed.
 */
static u64 vg_bo_cache_want(struct vg_gpu *gpu, u64 size)
{
	u64 avail = vg_gpu_vram_free(gpu);

	lockdep_assert_held(&gpu->lock);
	if (size <= avail || !gpu->cache_used)
		return 0;
	return min(size - avail, gpu->cache_used);
}

/*
 * Make size bytes of VRAM free, or account for them with chunks of the new
 * BO that go to host RAM. gpu->lock held. since: when the allocation
 * started; VMs whose drain failed after it are left out of the choice
 * (vg_reduce_at()). -EAGAIN: a victim could not be drained (it is
 * deferred now, others may have moved); the caller chooses again.
 */
static int vg_bo_make_room(struct vg_vm *vm, struct vg_bo *bo, u64 since)
{
	struct vg_gpu *gpu = vm->gpu;
	u64 avail = vg_gpu_vram_free(gpu);
	struct vg_plan plan;
	int err;

	lockdep_assert_held(&gpu->lock);
	if (bo->size <= avail)
		return 0;
	vg_event_pressure(vm, bo->size - avail);
	/* 1. Choose: whose chunks leave, and which of the BO's go to host RAM. */
	err = vg_reduce_at(gpu, vm, bo, bo->size - avail, since, &plan);
	if (err) {
		pr_warn_ratelimited("vgmem: %s: %s: choosing chunks to free %llu bytes of VRAM for a %llu-byte BO failed: %d\n",
				    gpu->name, vm->name,
				    (unsigned long long)(bo->size - avail),
				    (unsigned long long)bo->size, err);
		return -ENOMEM;
	}
	/* 2. Check, once: the host RAM all of it takes. */
	if (vg_plan_check(gpu, &plan)) {
		pr_warn_ratelimited("vgmem: %s: %s: host budget exhausted: %llu of %llu bytes used, %llu more needed\n",
				    gpu->name, vm->name,
				    (unsigned long long)gpu->host_used,
				    (unsigned long long)gpu->host_budget,
				    (unsigned long long)vg_plan_host_bytes(&plan));
		vg_plan_cancel(gpu, &plan);
		return -ENOMEM;
	}
	/* 3. Move the victims' chunks (relocate.c); bo.c places the BO. */
	err = vg_plan_run(gpu, &plan);
	if (err == -EAGAIN)
		return err;
	if (err) {
		pr_warn_ratelimited("vgmem: %s: %s: making room for a %llu-byte BO failed: %d\n",
				    gpu->name, vm->name,
				    (unsigned long long)bo->size, err);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Undo a partial placement of a BO that was never accounted: unmap the
 * first mapped chunks, then free the memory of the first n. The range was
 * unmapped before the BO was placed, so unmapping a page a failed map did
 * not reach only repeats what is already true (vg_gpu_ops.h: unmapping an
 * unmapped page is harmless).
 */
static void vg_bo_unplace(struct vg_vm *vm, struct vg_bo *bo, u32 n,
			  u32 mapped)
{
	struct vg_gpu *gpu = vm->gpu;
	u32 i;

	if (mapped) {
		gpu->ops->unmap(gpu->drv, vm->as, bo->va,
				min_t(u64, bo->size, vg_chunk_off(gpu, mapped)));
		gpu->ops->tlb_flush(gpu->drv, vm->as);
	}
	for (i = 0; i < n; i++) {
		gpu->ops->mem_free(gpu->drv, bo->chunks[i].mem);
		bo->chunks[i].mem = NULL;
	}
}

/*
 * Allocate every chunk at the location chosen for it, then map them all:
 * running out of memory, the likely failure, then touches no page table.
 */
static int vg_bo_place(struct vg_vm *vm, struct vg_bo *bo)
{
	struct vg_gpu *gpu = vm->gpu;
	const struct vg_gpu_ops *ops = gpu->ops;
	u32 i;
	int err;

	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];

		err = ops->mem_alloc(gpu->drv, c->loc, c->size, &c->mem);
		if (err) {
			c->mem = NULL;
			pr_warn_ratelimited("vgmem: %s: %s: allocating chunk %u of %u (%llu bytes, %s) failed: %d\n",
					    gpu->name, vm->name, i,
					    bo->nr_chunks,
					    (unsigned long long)c->size,
					    c->loc == VG_LOC_VRAM ? "vram" : "host",
					    err);
			goto err_free_mems;
		}
	}
	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];
		u64 va = bo->va + vg_chunk_off(gpu, i);

		err = ops->map(gpu->drv, vm->as, va, c->size, c->mem, 0);
		if (err) {
			pr_warn("vgmem: %s: %s: mapping chunk %u at 0x%llx failed: %d\n",
				gpu->name, vm->name, i, (unsigned long long)va,
				err);
			goto err_unmap;
		}
	}
	ops->tlb_flush(gpu->drv, vm->as);
	return 0;

err_unmap:
	/*
	 * Chunk i too: a GPU driver whose map is not all or nothing may have
	 * mapped part of it, and its memory is about to be freed.
	 */
	vg_bo_unplace(vm, bo, bo->nr_chunks, i + 1);
	return err;
err_free_mems:
	vg_bo_unplace(vm, bo, i, 0);
	return err;
}

static void vg_bo_record_stall(struct vg_vm *vm, u64 ns)
{
	struct vg_gpu *gpu = vm->gpu;

	vg_hist_add(vm->stats.stall_hist, ns);
	vm->stats.stall_total_ns += ns;
	vg_hist_add(gpu->stats.stall_hist, ns);
}

int vg_bo_alloc(struct vg_vm *vm, u64 size, u32 flags, u64 *va)
{
	struct vg_gpu *gpu;
	struct vg_bo *bo, *next;
	u64 start, t0, want;
	u32 i;
	int err;

	if (!vm || !va)
		return -EINVAL;
	gpu = vm->gpu;
	err = vg_bo_check_args(size, flags, *va);
	if (err)
		return err;
	if (size > VGMEM_BO_MAX_SIZE)
		return -E2BIG;
	/*
	 * Refuse what cannot succeed before allocating the chunk array, which
	 * is allocated without the lock so that other VMs are not held up.
	 */
	mutex_lock(&gpu->lock);
	start = *va;
	err = vg_bo_admit(vm, size, flags, &start, &next);
	want = err ? 0 : vg_bo_cache_want(gpu, size);
	mutex_unlock(&gpu->lock);
	if (err)
		return err;
	bo = vg_bo_new(vm, size);
	if (!bo)
		return -ENOMEM;
	/* The file cache yields first, unlocked: see vg_bo_cache_want(). */
	if (want)
		vg_gpu_cache_reclaim(gpu, want);

	mutex_lock(&gpu->lock);
	t0 = ktime_get_ns();
retry:
	/* Again: the VM or the GPU may have changed while it was unlocked. */
	start = *va;
	err = vg_bo_admit(vm, size, flags, &start, &next);
	if (err)
		goto err_unlock;
	bo->va = start;
	err = vg_bo_make_room(vm, bo, t0);
	if (err == -EAGAIN) {
		/*
		 * A victim did not stop in time (a starved or blocked
		 * engine): it is deferred, and the others it was chosen
		 * with may have moved. Choose again without it, letting
		 * the other VMs' commands in first. Each round leaves out
		 * one more VM (deferred after t0) and the new BO's own
		 * chunks are always candidates, so this ends: such a VM
		 * never makes this allocation fail.
		 */
		mutex_unlock(&gpu->lock);
		cond_resched();
		mutex_lock(&gpu->lock);
		goto retry;
	}
	if (err)
		goto err_wake;
	err = vg_bo_place(vm, bo);
	if (err) {
		err = -ENOMEM;
		goto err_wake;
	}
	/*
	 * Last, so that res_vec only ever grows for a BO that is there to
	 * stay: a failure before this point leaves it as it was.
	 */
	err = vg_vm_reserve_chunks(vm, bo->nr_chunks);
	if (err)
		goto err_unplace;

	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];

		if (c->loc == VG_LOC_VRAM)
			vg_chunk_add_resident(c, c->mem);
		else
			vg_chunk_add_relocated(c, c->mem);
	}
	vg_vm_account_bo(vm, bo, true);
	if (next)
		list_add_tail(&bo->node, &next->node);
	else
		list_add_tail(&bo->node, &vm->bos);
	bo->va_node.start = start;
	bo->va_node.end = start + size;
	vg_va_insert(&vm->va, &bo->va_node);
	vg_bo_record_stall(vm, ktime_get_ns() - t0);
	mutex_unlock(&gpu->lock);
	*va = start;
	return 0;

err_unplace:
	vg_bo_unplace(vm, bo, bo->nr_chunks, bo->nr_chunks);
err_wake:
	/*
	 * Chunks of other VMs may have gone to host RAM before we failed:
	 * a failed multi-VM relocation kicked the return worker already
	 * (vg_relocate_marked()); after a failed placement they come back
	 * at its next periodic pass.
	 */
	mutex_unlock(&gpu->lock);
	kvfree(bo);
	return err;
err_unlock:
	mutex_unlock(&gpu->lock);
	kvfree(bo);
	return err;
}

void vg_bo_free_locked(struct vg_bo *bo)
{
	struct vg_vm *vm = bo->vm;
	struct vg_gpu *gpu = vm->gpu;
	u32 i;

	lockdep_assert_held(&gpu->lock);
	/* A pre-copy migration tells its destination the BO is gone. */
	vg_mig_track_bo_freed(bo);
	/* The GPU must stop reaching the memory before it is freed. */
	gpu->ops->unmap(gpu->drv, vm->as, bo->va, bo->size);
	gpu->ops->tlb_flush(gpu->drv, vm->as);
	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];
		struct vg_mem *mem = c->mem;

		vg_chunk_remove(c);
		gpu->ops->mem_free(gpu->drv, mem);
	}
	vg_vm_account_bo(vm, bo, false);
	list_del(&bo->node);
	vg_va_remove(&vm->va, &bo->va_node);
	kvfree(bo);
}

int vg_bo_free(struct vg_vm *vm, u64 va)
{
	struct vg_gpu *gpu;
	struct vg_bo *bo;

	if (!vm)
		return -EINVAL;
	gpu = vm->gpu;
	mutex_lock(&gpu->lock);
	bo = vg_bo_find(vm, va);
	if (!bo) {
		mutex_unlock(&gpu->lock);
		return -ENOENT;
	}
	vg_bo_free_locked(bo);
	mutex_unlock(&gpu->lock);
	/*
	 * GPUswap 4.5: freed VRAM is a chance to bring chunks back; the
	 * return worker's next periodic pass (return_ms) takes it.
	 */
	return 0;
}

int vg_bo_query(struct vg_vm *vm, u64 va, enum vg_loc *locs, u32 max,
		u32 *nr_chunks)
{
	struct vg_gpu *gpu;
	struct vg_bo *bo;
	u32 i;

	if (!vm || !nr_chunks || (max && !locs))
		return -EINVAL;
	gpu = vm->gpu;
	mutex_lock(&gpu->lock);
	bo = vg_bo_find(vm, va);
	if (!bo) {
		mutex_unlock(&gpu->lock);
		return -ENOENT;
	}
	/* Fills at most max entries; *nr_chunks says how many there are. */
	for (i = 0; i < bo->nr_chunks && i < max; i++)
		locs[i] = bo->chunks[i].loc;
	*nr_chunks = bo->nr_chunks;
	mutex_unlock(&gpu->lock);
	return 0;
}
