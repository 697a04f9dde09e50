// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The relocation mechanism (GPUswap sections 4.4 and 5.4): move every
 * marked chunk of one VM to VRAM or to host RAM while only that VM is
 * suspended.
 *
 *   1. allocate the destination of every marked chunk (before suspending:
 *      running out of memory must not cost the guest a stall);
 *   2. suspend the VM (shadow USERD pages) and drain its real rings, so
 *      no kernel of it can write a chunk during the copy;
 *   3. copy all chunks in one batch and wait once (the paper's
 *      asynchronous DMA of all queued chunks);
 *   4. point each chunk's VA range at its new memory, then one TLB flush;
 *   5. free the old memory and move the chunks in the accounting;
 *   6. resume: replay the shadows.
 *
 * Any failure in 1-4 undoes everything: the new memory is freed, ranges
 * already remapped point at their old memory again (which still holds
 * the data: nothing ran since the copy), and the VM resumes. A chunk is
 * never half moved: its mapping, its mem and the accounting always agree.
 */
#include "vg_internal.h"

u64 vg_chunk_va(const struct vg_chunk *c)
{
	return c->bo->va + ((u64)c->index << c->bo->vm->gpu->chunk_shift);
}

void vg_chunk_mark(struct vg_chunk *c)
{
	struct vg_vm *vm = c->bo->vm;

	lockdep_assert_held(&vm->gpu->lock);
	if (WARN_ON(c->marked))
		return;
	c->marked = true;
	list_add_tail(&c->mark_node, &vm->marked);
	vm->marked_bytes += c->size;
}

void vg_chunk_unmark(struct vg_chunk *c)
{
	struct vg_vm *vm = c->bo->vm;

	lockdep_assert_held(&vm->gpu->lock);
	if (WARN_ON(!c->marked))
		return;
	c->marked = false;
	list_del_init(&c->mark_node);
	vm->marked_bytes -= c->size;
}

void vg_unmark_all(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chunk *c, *tmp;

	lockdep_assert_held(&gpu->lock);
	list_for_each_entry_safe(c, tmp, &vm->marked, mark_node) {
		/* Only a relocation in progress owns a destination. */
		if (WARN_ON(c->new_mem)) {
			gpu->ops->mem_free(gpu->backend, c->new_mem);
			c->new_mem = NULL;
		}
		vg_chunk_unmark(c);
	}
}

static const char *vg_loc_name(enum vg_loc loc)
{
	return loc == VG_LOC_VRAM ? "vram" : "host";
}

static void vg_free_new_mems(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chunk *c;

	list_for_each_entry(c, &vm->marked, mark_node) {
		if (c->new_mem) {
			gpu->ops->mem_free(gpu->backend, c->new_mem);
			c->new_mem = NULL;
		}
	}
}

/*
 * Point the ranges of the first n marked chunks (and of the one whose map
 * failed, which may be partly rewritten) back at their old memory. If the
 * backend cannot do even that, the copy did complete and nothing ran
 * since, so the chunk is committed to its new memory instead: the chunk
 * stays whole either way. Returns how many were committed.
 */
static u32 vg_restore_maps(struct vg_vm *vm, enum vg_loc to, u32 n)
{
	const struct vg_backend_ops *ops = vm->gpu->ops;
	void *b = vm->gpu->backend;
	struct vg_chunk *c, *tmp;
	u32 i = 0, committed = 0;

	list_for_each_entry_safe(c, tmp, &vm->marked, mark_node) {
		u64 va = vg_chunk_va(c);

		if (i++ > n)
			break;
		if (!ops->map(b, vm->as, va, c->size, c->mem, 0))
			continue;
		if (!ops->map(b, vm->as, va, c->size, c->new_mem, 0)) {
			pr_err("vgmem: %s: could not restore the mapping at 0x%llx, kept the chunk in %s\n",
			       vm->name, (unsigned long long)va,
			       vg_loc_name(to));
			ops->mem_free(b, c->mem);
			vg_chunk_move(c, to, c->new_mem);
			c->new_mem = NULL;
			vg_chunk_unmark(c);
			committed++;
			continue;
		}
		/* The backend lost the range: nothing left that could help. */
		WARN(1, "vgmem: %s: range 0x%llx is unmapped\n", vm->name,
		     (unsigned long long)va);
	}
	return committed;
}

static void vg_record_suspend(struct vg_vm *vm, u64 ns)
{
	struct vg_gpu *gpu = vm->gpu;

	vm->stats.suspend_last_ns = ns;
	if (ns > vm->stats.suspend_max_ns)
		vm->stats.suspend_max_ns = ns;
	vm->stats.suspend_total_ns += ns;
	vm->stats.suspends++;
	vg_hist_add(vm->stats.suspend_hist, ns);
	vg_hist_add(gpu->stats.suspend_hist, ns);
}

static void vg_record_moved(struct vg_vm *vm, enum vg_loc to, u32 n,
			    u64 bytes)
{
	struct vg_gpu *gpu = vm->gpu;

	if (to == VG_LOC_HOST) {
		vm->stats.reloc_out_chunks += n;
		vm->stats.bytes_out += bytes;
		gpu->stats.reloc_out_chunks += n;
		gpu->stats.bytes_out += bytes;
	} else {
		vm->stats.reloc_in_chunks += n;
		vm->stats.bytes_in += bytes;
		gpu->stats.reloc_in_chunks += n;
		gpu->stats.bytes_in += bytes;
	}
	gpu->stats.relocations++;
}

int vg_relocate_vm(struct vg_vm *vm, enum vg_loc to)
{
	struct vg_gpu *gpu = vm->gpu;
	const struct vg_backend_ops *ops = gpu->ops;
	void *b = gpu->backend;
	struct vg_copy *copies;
	struct vg_chunk *c, *tmp;
	u64 bytes = 0, fence, device_ns = 0, t0 = 0;
	u32 n = 0, i;
	const char *what;
	int err;

	lockdep_assert_held(&gpu->lock);
	if (list_empty(&vm->marked))
		return 0;

	list_for_each_entry(c, &vm->marked, mark_node) {
		/* The caller marks only chunks that are elsewhere. */
		if (WARN_ON(c->loc == to || !c->mem || c->new_mem)) {
			err = -EINVAL;
			what = "a marked chunk is already there";
			goto err_unmark;
		}
		n++;
		bytes += c->size;
	}

	/* 1. Destinations, before the guest pays anything. */
	if (to == VG_LOC_HOST && gpu->host_budget &&
	    gpu->host_used + bytes > gpu->host_budget) {
		err = -ENOMEM;
		what = "host budget";
		goto err_unmark;
	}
	copies = kvmalloc_array(n, sizeof(*copies), GFP_KERNEL);
	if (!copies) {
		err = -ENOMEM;
		what = "copy list";
		goto err_unmark;
	}
	i = 0;
	list_for_each_entry(c, &vm->marked, mark_node) {
		err = ops->mem_alloc(b, to, c->size, &c->new_mem);
		if (err) {
			/* -ENOSPC from a full VRAM too: out of memory. */
			pr_warn("vgmem: %s: mem_alloc(%s, %llu) failed: %d\n",
				vm->name, vg_loc_name(to),
				(unsigned long long)c->size, err);
			c->new_mem = NULL;
			err = -ENOMEM;
			what = "mem_alloc";
			goto err_free_mems;
		}
		copies[i].src = c->mem;
		copies[i].src_off = 0;
		copies[i].dst = c->new_mem;
		copies[i].dst_off = 0;
		copies[i].len = c->size;
		i++;
	}

	/* 2. Stop the VM's GPU work; it keeps submitting into the shadows. */
	t0 = ktime_get_ns();
	vg_vm_suspend(vm);
	err = vg_vm_drain(vm);
	if (err) {
		what = "channel_idle_wait";
		goto err_resume;
	}

	/* 3. One batch, one wait. */
	err = ops->copy_submit(b, copies, n, &fence);
	if (err) {
		what = "copy_submit";
		goto err_resume;
	}
	err = ops->copy_wait(b, fence, &device_ns);
	gpu->stats.copy_device_ns += device_ns;
	if (err) {
		what = "copy_wait";
		goto err_resume;
	}

	/* 4. Same VAs, new memory; the old mappings are overwritten. */
	i = 0;
	list_for_each_entry(c, &vm->marked, mark_node) {
		err = ops->map(b, vm->as, vg_chunk_va(c), c->size, c->new_mem, 0);
		if (err) {
			what = "map";
			goto err_restore_maps;
		}
		i++;
	}
	ops->tlb_flush(b, vm->as);

	/* 5. Commit: nothing can fail from here on. */
	list_for_each_entry_safe(c, tmp, &vm->marked, mark_node) {
		ops->mem_free(b, c->mem);
		vg_chunk_move(c, to, c->new_mem);
		c->new_mem = NULL;
		vg_chunk_unmark(c);
	}

	/* 6. Replay what the guest submitted meanwhile. */
	vg_vm_resume(vm);
	vg_record_suspend(vm, ktime_get_ns() - t0);
	vg_record_moved(vm, to, n, bytes);
	kvfree(copies);
	return 0;

err_restore_maps:
	if (vg_restore_maps(vm, to, i)) {
		err = -EIO;
		what = "map, and restoring it (some chunks kept their new place)";
	}
	ops->tlb_flush(b, vm->as);
err_resume:
	vg_vm_resume(vm);
	vg_record_suspend(vm, ktime_get_ns() - t0);
err_free_mems:
	vg_free_new_mems(vm);
	kvfree(copies);
err_unmark:
	vg_unmark_all(vm);
	gpu->stats.reloc_failures++;
	pr_warn("vgmem: %s: relocating %u chunks (%llu bytes) to %s failed in %s: %d\n",
		vm->name, n, (unsigned long long)bytes, vg_loc_name(to), what,
		err);
	return err;
}

int vg_relocate_marked(struct vg_gpu *gpu, enum vg_loc to)
{
	struct vg_vm *vm;
	int err = 0;

	lockdep_assert_held(&gpu->lock);
	/* One VM at a time, so the others keep the GPU busy (GPUswap 4.4). */
	list_for_each_entry(vm, &gpu->vms, node) {
		if (list_empty(&vm->marked))
			continue;
		err = vg_relocate_vm(vm, to);
		if (err)
			break;
	}
	if (err) {
		list_for_each_entry(vm, &gpu->vms, node)
			vg_unmark_all(vm);
	}
	return err;
}
