// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Buffer objects: validation, GPU VA assignment, and the allocation path of
 * GPUswap section 4 — if VRAM is short, the reducer picks chunks, the
 * relocation engine moves them to host RAM, and the new BO is placed; the
 * time this takes is the allocation stall.
 *
 * Errors of vg_bo_alloc (nothing changes on any of them):
 *  -EINVAL  size zero, not a multiple of VGMEM_PAGE_SIZE or larger than the
 *           VA range; unknown flags; a FIXED_VA address unaligned, outside
 *           [VGMEM_VA_START, VGMEM_VA_END) or overlapping a BO;
 *  -ENOSPC  the VM's quota would be exceeded, or no VA hole is large enough;
 *  -ENOMEM  no VRAM can be freed for it, the host budget for relocated
 *           chunks is exhausted, or the backend ran out of memory.
 */
#include "vg_internal.h"

static u64 vg_chunk_off(const struct vg_gpu *gpu, u32 index)
{
	return (u64)index << gpu->chunk_shift;
}

struct vg_bo *vg_bo_find(struct vg_vm *vm, u64 va)
{
	struct vg_bo *bo;

	lockdep_assert_held(&vm->gpu->lock);
	list_for_each_entry(bo, &vm->bos, node) {
		if (bo->va == va)
			return bo;
		if (bo->va > va)
			break;
	}
	return NULL;
}

/*
 * The BO before which [va, va + size) goes in the sorted list, or NULL for
 * the tail; *overlap tells whether it would overlap that BO.
 */
static struct vg_bo *vg_bo_fixed_slot(struct vg_vm *vm, u64 va, u64 size,
				      bool *overlap)
{
	struct vg_bo *bo;

	*overlap = false;
	list_for_each_entry(bo, &vm->bos, node) {
		if (bo->va + bo->size <= va)
			continue;
		if (bo->va < va + size)
			*overlap = true;
		return bo;
	}
	return NULL;
}

/*
 * First fit over the holes between BOs (sorted by va), chunk aligned so a
 * chunk never straddles two PTE blocks of different BOs. Returns the BO to
 * insert before (NULL: the tail) through *next; -ENOSPC if no hole fits.
 */
static int vg_bo_find_va(struct vg_vm *vm, u64 size, u64 *va,
			 struct vg_bo **next)
{
	u64 align = vm->gpu->chunk_size;
	u64 cand = ALIGN(VGMEM_VA_START, align);
	struct vg_bo *bo;

	list_for_each_entry(bo, &vm->bos, node) {
		if (cand + size <= bo->va) {
			*va = cand;
			*next = bo;
			return 0;
		}
		cand = max_t(u64, cand, ALIGN(bo->va + bo->size, align));
	}
	/* size <= VA range was checked, so this cannot wrap. */
	if (cand + size > VGMEM_VA_END)
		return -ENOSPC;
	*va = cand;
	*next = NULL;
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

/* Host bytes the pending relocation plus the new BO's host chunks take. */
static u64 vg_bo_host_need(struct vg_gpu *gpu, struct vg_bo *bo)
{
	struct vg_vm *vm;
	u64 bytes = 0;
	u32 i;

	list_for_each_entry(vm, &gpu->vms, node)
		bytes += vm->marked_bytes;
	for (i = 0; i < bo->nr_chunks; i++)
		if (bo->chunks[i].loc == VG_LOC_HOST)
			bytes += bo->chunks[i].size;
	return bytes;
}

/* Undo the reducer's choice of new-BO chunks after a failed reduction. */
static void vg_bo_reset_locs(struct vg_bo *bo)
{
	u32 i;

	for (i = 0; i < bo->nr_chunks; i++)
		bo->chunks[i].loc = VG_LOC_VRAM;
}

/*
 * Make size bytes of VRAM free, or account for them with chunks of the new
 * BO that go to host RAM. gpu->lock held.
 */
static int vg_bo_make_room(struct vg_vm *vm, struct vg_bo *bo)
{
	struct vg_gpu *gpu = vm->gpu;
	u64 avail = gpu->vram_size - gpu->vram_used;
	u64 host;
	int err;

	lockdep_assert_held(&gpu->lock);
	if (bo->size <= avail)
		return 0;
	err = vg_reduce(gpu, vm, bo, bo->size - avail);
	if (err) {
		pr_warn("vgmem: %s: %s: choosing chunks to free %llu bytes of VRAM for a %llu-byte BO failed: %d\n",
			gpu->name, vm->name,
			(unsigned long long)(bo->size - avail),
			(unsigned long long)bo->size, err);
		return -ENOMEM;
	}
	host = vg_bo_host_need(gpu, bo);
	if (gpu->host_budget && host > gpu->host_budget - min(gpu->host_used,
							      gpu->host_budget)) {
		struct vg_vm *v;

		list_for_each_entry(v, &gpu->vms, node)
			vg_unmark_all(v);
		vg_bo_reset_locs(bo);
		pr_warn("vgmem: %s: %s: host budget exhausted: %llu of %llu bytes used, %llu more needed\n",
			gpu->name, vm->name,
			(unsigned long long)gpu->host_used,
			(unsigned long long)gpu->host_budget,
			(unsigned long long)host);
		return -ENOMEM;
	}
	err = vg_relocate_marked(gpu, VG_LOC_HOST);
	if (err) {
		/* relocate.c logged the cause and cleared the marks. */
		vg_bo_reset_locs(bo);
		pr_warn("vgmem: %s: %s: making room for a %llu-byte BO failed: %d\n",
			gpu->name, vm->name, (unsigned long long)bo->size, err);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Undo a partial placement of a BO that was never accounted: unmap the
 * first mapped chunks, then free the memory of the first n.
 */
static void vg_bo_unplace(struct vg_vm *vm, struct vg_bo *bo, u32 n,
			  u32 mapped)
{
	struct vg_gpu *gpu = vm->gpu;
	u32 i;

	if (mapped) {
		gpu->ops->unmap(gpu->backend, vm->as, bo->va,
				min_t(u64, bo->size, vg_chunk_off(gpu, mapped)));
		gpu->ops->tlb_flush(gpu->backend, vm->as);
	}
	for (i = 0; i < n; i++) {
		gpu->ops->mem_free(gpu->backend, bo->chunks[i].mem);
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
	const struct vg_backend_ops *ops = gpu->ops;
	u32 i;
	int err;

	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];

		err = ops->mem_alloc(gpu->backend, c->loc, c->size, &c->mem);
		if (err) {
			c->mem = NULL;
			pr_warn("vgmem: %s: %s: allocating chunk %u of %u (%llu bytes, %s) failed: %d\n",
				gpu->name, vm->name, i, bo->nr_chunks,
				(unsigned long long)c->size,
				c->loc == VG_LOC_VRAM ? "vram" : "host", err);
			goto err_free_mems;
		}
	}
	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];
		u64 va = bo->va + vg_chunk_off(gpu, i);

		err = ops->map(gpu->backend, vm->as, va, c->size, c->mem, 0);
		if (err) {
			pr_warn("vgmem: %s: %s: mapping chunk %u at 0x%llx failed: %d\n",
				gpu->name, vm->name, i, (unsigned long long)va,
				err);
			goto err_unmap;
		}
	}
	ops->tlb_flush(gpu->backend, vm->as);
	return 0;

err_unmap:
	vg_bo_unplace(vm, bo, bo->nr_chunks, i);
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
	u64 nr, start, t0, bytes;
	bool overlap;
	u32 i;
	int err;

	if (!vm || !va)
		return -EINVAL;
	gpu = vm->gpu;
	err = vg_bo_check_args(size, flags, *va);
	if (err)
		return err;
	nr = DIV_ROUND_UP(size, gpu->chunk_size);
	if (check_mul_overflow(nr, (u64)sizeof(struct vg_chunk), &bytes) ||
	    check_add_overflow(bytes, (u64)sizeof(*bo), &bytes))
		return -EINVAL;
	bo = kvzalloc(bytes, GFP_KERNEL);
	if (!bo)
		return -ENOMEM;
	bo->vm = vm;
	bo->size = size;
	bo->nr_chunks = (u32)nr;
	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];

		c->bo = bo;
		c->index = i;
		c->size = min_t(u64, gpu->chunk_size, size - vg_chunk_off(gpu, i));
		c->loc = VG_LOC_VRAM;
		INIT_LIST_HEAD(&c->node);
		INIT_LIST_HEAD(&c->mark_node);
	}

	mutex_lock(&gpu->lock);
	t0 = ktime_get_ns();
	/* Bad arguments first: -EINVAL wins over a full quota. */
	if (flags & VGMEM_BO_FIXED_VA) {
		start = *va;
		next = vg_bo_fixed_slot(vm, start, size, &overlap);
		if (overlap) {
			err = -EINVAL;
			goto err_unlock;
		}
	} else {
		err = vg_bo_find_va(vm, size, &start, &next);
		if (err)
			goto err_unlock;
	}
	if (vm->quota && (size > vm->quota || vm->allocated > vm->quota - size)) {
		err = -ENOSPC;
		goto err_unlock;
	}
	bo->va = start;
	err = vg_vm_reserve_chunks(vm, bo->nr_chunks);
	if (err)
		goto err_unlock;
	err = vg_bo_make_room(vm, bo);
	if (err)
		goto err_wake;
	err = vg_bo_place(vm, bo);
	if (err) {
		err = -ENOMEM;
		goto err_wake;
	}

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
	vg_bo_record_stall(vm, ktime_get_ns() - t0);
	mutex_unlock(&gpu->lock);
	*va = start;
	return 0;

err_wake:
	/*
	 * Chunks of other VMs may have gone to host RAM before we failed;
	 * the return worker brings them back.
	 */
	mutex_unlock(&gpu->lock);
	wake_up(&gpu->return_wq);
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
	/* The GPU must stop reaching the memory before it is freed. */
	gpu->ops->unmap(gpu->backend, vm->as, bo->va, bo->size);
	gpu->ops->tlb_flush(gpu->backend, vm->as);
	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];
		struct vg_mem *mem = c->mem;

		vg_chunk_remove(c);
		gpu->ops->mem_free(gpu->backend, mem);
	}
	vg_vm_account_bo(vm, bo, false);
	list_del(&bo->node);
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
	/* GPUswap 4.5: freed VRAM is a chance to bring chunks back. */
	wake_up(&gpu->return_wq);
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
