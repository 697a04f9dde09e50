// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The GPU as the file cache (core/lrc/) uses it: memory, the copy engine
 * and the page tables of file maps, each call a whole step under gpu->lock.
 *
 * The cache is a layer beside the core, not in it: it never takes
 * gpu->lock and never calls the GPU driver, so every rule about gpu->lock can
 * be read in the core's own files. Each function here takes gpu->lock for
 * itself and is called with no core lock held; the cache calls them under
 * its own lock, which orders before gpu->lock (vg_internal.h).
 *
 * What the cache holds in VRAM is counted in gpu->cache_used and, for a
 * page written by one VM only, in that VM's cache_private (account.c keeps
 * both books). The VM is remembered by its creation order, not by pointer:
 * a replica left by a failed merge may outlive its VM.
 */
#include "vg_internal.h"

bool vg_gpu_can_map_files(const struct vg_gpu *gpu)
{
	const struct vg_gpu_ops *ops = gpu->ops;

	return ops->map_prot && ops->protect && ops->fault_range &&
	       ops->set_fault_handler && ops->mem_host_addr;
}

u64 vg_gpu_vram_size(const struct vg_gpu *gpu)
{
	return gpu->vram_size;
}

const char *vg_gpu_name(const struct vg_gpu *gpu)
{
	return gpu->name;
}

struct vg_gpu *vg_vm_gpu(const struct vg_vm *vm)
{
	return vm->gpu;
}

void vg_vm_va_bounds(const struct vg_vm *vm, u64 *start, u64 *end, u64 *align)
{
	/* Set at creation and never changed: no lock. */
	*start = vm->va.start;
	*end = vm->va.end;
	*align = vm->va.align;
}

int vg_gpu_host_mem_alloc(struct vg_gpu *gpu, u64 size, struct vg_mem **out,
			  void **cpu)
{
	const struct vg_gpu_ops *ops = gpu->ops;
	struct vg_mem *mem;
	void *addr;
	int err;

	mutex_lock(&gpu->lock);
	err = ops->mem_alloc(gpu->drv, VG_LOC_HOST, size, &mem);
	if (err)
		goto out_unlock;
	addr = ops->mem_host_addr ? ops->mem_host_addr(gpu->drv, mem) : NULL;
	if (cpu && !addr) {
		ops->mem_free(gpu->drv, mem);
		err = -ENODEV;
		goto out_unlock;
	}
	*out = mem;
	if (cpu)
		*cpu = addr;
out_unlock:
	mutex_unlock(&gpu->lock);
	return err;
}

void vg_gpu_host_mem_free(struct vg_gpu *gpu, struct vg_mem *mem)
{
	if (!mem)
		return;
	mutex_lock(&gpu->lock);
	gpu->ops->mem_free(gpu->drv, mem);
	mutex_unlock(&gpu->lock);
}

/* The VM charged, if it still exists. gpu->lock held. */
static struct vg_vm *vg_cache_charged_vm(struct vg_gpu *gpu,
					 const struct vg_cache_charge *charge)
{
	struct vg_vm *vm;

	lockdep_assert_held(&gpu->lock);
	if (!charge->vm)
		return NULL;
	list_for_each_entry(vm, &gpu->vms, node)
		if (vm->order == charge->vm_order)
			return vm;
	return NULL;
}

int vg_gpu_cache_vram_get(struct vg_gpu *gpu, struct vg_vm *vm, u64 size,
			  struct vg_mem **out, struct vg_cache_charge *charge)
{
	int err;

	if (WARN_ON(vm && vm->gpu != gpu))
		return -EINVAL;
	mutex_lock(&gpu->lock);
	if (vg_gpu_vram_free(gpu) < size) {
		err = -ENOSPC;
		goto out_unlock;
	}
	err = gpu->ops->mem_alloc(gpu->drv, VG_LOC_VRAM, size, out);
	if (err) {
		/* Free by the count, yet the GPU driver had none: not "full". */
		err = err == -ENOSPC ? -ENOMEM : err;
		goto out_unlock;
	}
	vg_gpu_cache_add(gpu, vm, size);
	charge->vm = vm != NULL;
	charge->vm_order = vm ? vm->order : 0;
out_unlock:
	mutex_unlock(&gpu->lock);
	return err;
}

void vg_gpu_cache_vram_put(struct vg_gpu *gpu, struct vg_mem *mem, u64 size,
			   struct vg_cache_charge *charge)
{
	mutex_lock(&gpu->lock);
	gpu->ops->mem_free(gpu->drv, mem);
	vg_gpu_cache_sub(gpu, vg_cache_charged_vm(gpu, charge), size);
	charge->vm = false;
	mutex_unlock(&gpu->lock);
	/*
	 * Relocated chunks may come back into it at the return worker's
	 * next periodic pass; nothing kicks a pass early (return.c).
	 */
}

int vg_gpu_copy(struct vg_gpu *gpu, const struct vg_copy *c, u32 n)
{
	u64 fence;
	int err;

	if (!n)
		return 0;
	mutex_lock(&gpu->lock);
	err = gpu->ops->copy_submit(gpu->drv, c, n, &fence);
	if (!err)
		err = gpu->ops->copy_wait(gpu->drv, fence, NULL);
	mutex_unlock(&gpu->lock);
	return err;
}

/* va 0: first fit; else exactly there. gpu->lock held. */
static int vg_vm_file_va_find(struct vg_vm *vm, u64 va, u64 length, u64 *start)
{
	struct vg_va_node *next;
	u64 end;

	lockdep_assert_held(&vm->gpu->lock);
	if (!va)
		return vg_va_first_fit(&vm->va, length, start, &next);
	if (!IS_ALIGNED(va, vm->va.align) || check_add_overflow(va, length, &end) ||
	    va < vm->va.start || end > vm->va.end)
		return -EINVAL;
	next = vg_va_end_after(&vm->va, va);
	if (next && next->start < end)
		return -EINVAL;
	*start = va;
	return 0;
}

static int vg_vm_file_va_take(struct vg_vm *vm, u64 va, u64 length,
			      struct vg_va_node *node, vg_fault_fn fn,
			      void *priv, struct vg_fault_reg **reg)
{
	struct vg_gpu *gpu = vm->gpu;
	u64 start;
	int err;

	mutex_lock(&gpu->lock);
	err = vg_vm_file_va_find(vm, va, length, &start);
	/*
	 * A fault in the range may reach fn at once: fn must wait for its
	 * owner to finish setting up (the cache makes it wait for its lock).
	 */
	if (!err)
		err = vg_fault_register(gpu, vm->as, start, length, fn, priv,
					reg);
	if (!err) {
		node->start = start;
		node->end = start + length;
		node->file = true;
		vg_va_insert(&vm->va, node);
	}
	mutex_unlock(&gpu->lock);
	return err;
}

int vg_vm_file_va_get(struct vg_vm *vm, u64 length, struct vg_va_node *node,
		      vg_fault_fn fn, void *priv, struct vg_fault_reg **reg)
{
	return vg_vm_file_va_take(vm, 0, length, node, fn, priv, reg);
}

int vg_vm_file_va_get_at(struct vg_vm *vm, u64 va, u64 length,
			 struct vg_va_node *node, vg_fault_fn fn, void *priv,
			 struct vg_fault_reg **reg)
{
	if (!va)
		return -EINVAL;
	return vg_vm_file_va_take(vm, va, length, node, fn, priv, reg);
}

void vg_vm_file_va_put(struct vg_vm *vm, struct vg_va_node *node,
		       struct vg_fault_reg *reg)
{
	struct vg_gpu *gpu = vm->gpu;

	/*
	 * Unregistering waits for a fault call under way, which may take
	 * gpu->lock: not under it. The VA stays taken until then, so a new
	 * map never meets the old range's faults.
	 */
	vg_fault_unregister(reg);
	mutex_lock(&gpu->lock);
	vg_va_remove(&vm->va, node);
	mutex_unlock(&gpu->lock);
}

/*
 * The 4 KiB pages of [va, va + size) in rw_pages (bit i: page i) writable,
 * the others read-only. gpu->lock held; no TLB flush.
 */
static int vg_vm_file_prot(struct vg_vm *vm, u64 va, u64 size, u64 rw_pages)
{
	const struct vg_gpu_ops *ops = vm->gpu->ops;
	void *b = vm->gpu->drv;
	u64 i, n = size / VGMEM_PAGE_SIZE;
	int err;

	lockdep_assert_held(&vm->gpu->lock);
	err = ops->protect(b, vm->as, va, size, VG_PROT_RO);
	for (i = 0; i < n && !err; i++)
		if (rw_pages & BIT_ULL(i))
			err = ops->protect(b, vm->as, va + i * VGMEM_PAGE_SIZE,
					   VGMEM_PAGE_SIZE, VG_PROT_RW);
	return err;
}

static bool vg_vm_file_range_ok(struct vg_vm *vm, u64 va, u64 size)
{
	return size && IS_ALIGNED(va | size, VGMEM_PAGE_SIZE) &&
	       size / VGMEM_PAGE_SIZE <= 64 && va >= vm->va.start &&
	       va < vm->va.end && size <= vm->va.end - va;
}

int vg_vm_file_map(struct vg_vm *vm, u64 va, u64 size, struct vg_mem *mem,
		   u64 rw_pages)
{
	const struct vg_gpu_ops *ops = vm->gpu->ops;
	void *b = vm->gpu->drv;
	int err;

	if (WARN_ON(!vg_vm_file_range_ok(vm, va, size)))
		return -EINVAL;
	mutex_lock(&vm->gpu->lock);
	/*
	 * Read-only from the first PTE write: another channel of the AS must
	 * never write through a page the cache shares (map, then protect,
	 * would let it). Pages in rw_pages are widened after.
	 */
	err = ops->map_prot(b, vm->as, va, size, mem, 0, VG_PROT_RO);
	if (!err && rw_pages) {
		err = vg_vm_file_prot(vm, va, size, rw_pages);
		if (err)
			ops->unmap(b, vm->as, va, size);
	}
	ops->tlb_flush(b, vm->as);
	mutex_unlock(&vm->gpu->lock);
	return err;
}

int vg_vm_file_protect(struct vg_vm *vm, u64 va, u64 size, u64 rw_pages)
{
	int err;

	if (WARN_ON(!vg_vm_file_range_ok(vm, va, size)))
		return -EINVAL;
	mutex_lock(&vm->gpu->lock);
	err = vg_vm_file_prot(vm, va, size, rw_pages);
	vm->gpu->ops->tlb_flush(vm->gpu->drv, vm->as);
	mutex_unlock(&vm->gpu->lock);
	return err;
}

void vg_vm_file_unmap(struct vg_vm *vm, u64 va, u64 size)
{
	if (WARN_ON(!vg_vm_file_range_ok(vm, va, size)))
		return;
	mutex_lock(&vm->gpu->lock);
	vm->gpu->ops->unmap(vm->gpu->drv, vm->as, va, size);
	vm->gpu->ops->tlb_flush(vm->gpu->drv, vm->as);
	mutex_unlock(&vm->gpu->lock);
}
