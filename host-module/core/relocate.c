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
 *   5. resume: replay the shadows (the GPU only needs the new mappings);
 *   6. free the old memory and move the chunks in the accounting, with the
 *      VM running again: nothing maps the old memory since the flush, and
 *      gpu->lock still keeps everyone else out of the books.
 *
 * Any failure in 1-4 undoes everything: the new memory is freed, ranges
 * already remapped point at their old memory again (which still holds
 * the data: nothing ran since the copy), and the VM resumes. A chunk is
 * never half moved: its mapping, its mem and the accounting always agree.
 * (If even restoring a mapping fails, that chunk is committed to its new
 * place instead, counted as moved, and the call returns -EIO.)
 *
 * So one VM's relocation is atomic; a relocation of several VMs is not.
 * vg_relocate_marked() moves them one after the other (one suspension at
 * a time) and stops at the first VM that fails: the VMs before it keep
 * their new places. A VM that fails only because its channels did not
 * stop in time (-EAGAIN: a starved or blocked engine, chan.c) does not
 * stop the others: it is deferred, the rest move, and the allocation
 * chooses again without it (bo.c), so such a VM never makes another
 * VM's allocation fail. Undoing them would be a second relocation in the other
 * direction, which can fail too, and costs each of them a second stall;
 * instead they stay where they are (consistent) and the return worker,
 * kicked at once, brings them back into the VRAM the failed allocation
 * did not take.
 *
 * Long walks over the marked chunks call cond_resched() every
 * VG_RESCHED_EVERY chunks: gpu->lock is a mutex, and a VM may have
 * tens of thousands of chunks.
 *
 * Per-VM fixed costs matter: with many VMs of equal share the victims
 * rotate, so a 16-chunk allocation relocates up to 16 VMs one chunk each.
 * Hence the VMs with marks are kept on a chain (gpu->marked_vms, in and
 * out in O(1) as a VM's first mark comes and its last goes), so neither
 * vg_relocate_marked() nor the reducer's "nothing marked" check walks
 * every VM; and relocations of up to VG_COPY_SCRATCH chunks build their
 * copy list in a per-GPU array kept between them (gpu->reloc_copies,
 * used only under gpu->lock, like every relocation) instead of
 * allocating one each time.
 */
#include "vg_internal.h"

/* 256 * 40 bytes: one small allocation, kept until the last VM goes. */
#define VG_COPY_SCRATCH		256u

u64 vg_chunk_va(const struct vg_chunk *c)
{
	return c->bo->va + ((u64)c->index << c->bo->vm->gpu->chunk_shift);
}

/*
 * gpu->marked_vms: the VMs with marks, in and out in O(1). An hlist, as
 * its head is one pointer and no walk needs its tail.
 */
static void vg_chain_add(struct vg_gpu *gpu, struct vg_vm *vm)
{
	hlist_add_head(&vm->marked_node, &gpu->marked_vms);
}

static void vg_chain_del(struct vg_vm *vm)
{
	hlist_del_init(&vm->marked_node);
}

void vg_vm_mark(struct vg_vm *vm, struct vg_chunk *c)
{
	lockdep_assert_held(&vm->gpu->lock);
	if (WARN_ON(c->marked))
		return;
	c->marked = true;
	if (hlist_unhashed(&vm->marked_node))
		vg_chain_add(vm->gpu, vm);
	list_add_tail(&c->mark_node, &vm->marked);
	vm->marked_bytes += c->size;
}

void vg_chunk_mark(struct vg_chunk *c)
{
	vg_vm_mark(c->bo->vm, c);
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
	if (list_empty(&vm->marked) &&
	    !WARN_ON(hlist_unhashed(&vm->marked_node)))
		vg_chain_del(vm);
}

bool vg_gpu_has_marks(struct vg_gpu *gpu)
{
	lockdep_assert_held(&gpu->lock);
	return !hlist_empty(&gpu->marked_vms);
}

void vg_unmark_gpu(struct vg_gpu *gpu)
{
	lockdep_assert_held(&gpu->lock);
	/* Each VM leaves the chain with its last mark. */
	while (!hlist_empty(&gpu->marked_vms)) {
		struct vg_vm *vm = hlist_entry(gpu->marked_vms.first,
					       struct vg_vm, marked_node);

		vg_unmark_all(vm);
		/* Only if the chain and vm->marked disagree (a bug). */
		if (WARN_ON(gpu->marked_vms.first == &vm->marked_node))
			vg_chain_del(vm);
	}
}

void vg_reloc_free(struct vg_gpu *gpu)
{
	lockdep_assert_held(&gpu->lock);
	kfree(gpu->reloc_copies);
	gpu->reloc_copies = NULL;
}

/*
 * The copy list for n chunks: the per-GPU scratch when it is big enough
 * (allocated on first use), else an allocation of its own. Either way
 * vg_copies_put() gives it back. gpu->lock held: one relocation at a time
 * uses the scratch.
 */
static struct vg_copy *vg_copies_get(struct vg_gpu *gpu, u32 n)
{
	if (n > VG_COPY_SCRATCH)
		return kvmalloc_array(n, sizeof(struct vg_copy), GFP_KERNEL);
	if (!gpu->reloc_copies)
		gpu->reloc_copies = kmalloc_array(VG_COPY_SCRATCH,
						  sizeof(struct vg_copy),
						  GFP_KERNEL);
	return gpu->reloc_copies;
}

static void vg_copies_put(struct vg_gpu *gpu, struct vg_copy *copies)
{
	if (copies != gpu->reloc_copies)
		kvfree(copies);
}

void vg_unmark_all(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chunk *c, *tmp;
	u32 k = 0;

	lockdep_assert_held(&gpu->lock);
	list_for_each_entry_safe(c, tmp, &vm->marked, mark_node) {
		vg_resched_every(&k);
		/* Only a relocation in progress owns a destination. */
		if (WARN_ON(c->new_mem)) {
			gpu->ops->mem_free(gpu->drv, c->new_mem);
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
	u32 k = 0;

	list_for_each_entry(c, &vm->marked, mark_node) {
		vg_resched_every(&k);
		if (c->new_mem) {
			gpu->ops->mem_free(gpu->drv, c->new_mem);
			c->new_mem = NULL;
		}
	}
}

/*
 * Point the ranges of the first n marked chunks (and of the one whose map
 * failed, which may be partly rewritten) back at their old memory. If the
 * GPU driver cannot do even that, the copy did complete and nothing ran
 * since, so the chunk is committed to its new memory instead: the chunk
 * stays whole either way. Returns how many were committed; *bytes gets
 * their size.
 */
static u32 vg_restore_maps(struct vg_vm *vm, enum vg_loc to, u32 n,
			   u64 *bytes)
{
	const struct vg_gpu_ops *ops = vm->gpu->ops;
	void *b = vm->gpu->drv;
	struct vg_chunk *c, *tmp;
	u32 i = 0, k = 0, committed = 0;

	*bytes = 0;
	list_for_each_entry_safe(c, tmp, &vm->marked, mark_node) {
		u64 va = vg_chunk_va(c);

		if (i++ > n)
			break;
		vg_resched_every(&k);
		if (!vg_chunk_map(vm, c, c->mem))
			continue;
		if (!vg_chunk_map(vm, c, c->new_mem)) {
			pr_err("vgmem: %s: could not restore the mapping at 0x%llx, kept the chunk in %s\n",
			       vm->name, (unsigned long long)va,
			       vg_loc_name(to));
			*bytes += c->size;
			ops->mem_free(b, c->mem);
			vg_chunk_move(c, to, c->new_mem);
			c->new_mem = NULL;
			vg_chunk_unmark(c);
			committed++;
			continue;
		}
		/* The GPU driver lost the range: nothing left that could help. */
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

/*
 * Chunks that changed place, whether the relocation succeeded or kept a
 * few chunks at their new place on its way out (vg_restore_maps).
 */
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
}

int vg_relocate_vm(struct vg_vm *vm, enum vg_loc to)
{
	struct vg_gpu *gpu = vm->gpu;
	const struct vg_gpu_ops *ops = gpu->ops;
	void *b = gpu->drv;
	struct vg_copy *copies;
	struct vg_chunk *c, *tmp;
	u64 bytes = 0, fence, device_ns = 0, t0 = 0, kept, suspend_ns;
	u32 n = 0, i, k = 0, nkept;
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
		vg_resched_every(&k);
		n++;
		bytes += c->size;
	}

	/*
	 * 1. Destinations, before the guest pays anything. The budget was
	 * checked with the plan (vg_plan_check()); this guards the
	 * mechanism against any caller that did not.
	 */
	if (to == VG_LOC_HOST && gpu->host_budget &&
	    gpu->host_used + bytes > gpu->host_budget) {
		err = -ENOMEM;
		what = "host budget";
		goto err_unmark;
	}
	copies = vg_copies_get(gpu, n);
	if (!copies) {
		err = -ENOMEM;
		what = "copy list";
		goto err_unmark;
	}
	i = 0;
	list_for_each_entry(c, &vm->marked, mark_node) {
		vg_resched_every(&k);
		err = ops->mem_alloc(b, to, c->size, &c->new_mem);
		if (err) {
			/* -ENOSPC from a full VRAM too: out of memory. */
			pr_warn_ratelimited("vgmem: %s: mem_alloc(%s, %llu) failed: %d\n",
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

	/*
	 * 2. Stop the VM's GPU work; it keeps submitting into the shadows.
	 * A frozen VM's is stopped already, and stays so.
	 */
	t0 = ktime_get_ns();
	if (!vm->frozen) {
		vg_vm_suspend(vm);
		err = vg_vm_drain(vm);
	}
	if (!vm->frozen && err) {
		/*
		 * Not out of memory: this VM cannot be moved just now. It is
		 * deferred (vg_vm_drain_deferred()) and the caller chooses
		 * another victim.
		 */
		what = "drain (a channel did not stop in time; the VM is skipped for a while)";
		err = -EAGAIN;
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
		vg_resched_every(&k);
		/* With its protection: read-only while a migration tracks it. */
		err = vg_chunk_map(vm, c, c->new_mem);
		if (err) {
			what = "map";
			goto err_restore_maps;
		}
		i++;
	}
	ops->tlb_flush(b, vm->as);

	/* 5. Nothing can fail from here on: replay what the guest submitted. */
	if (!vm->frozen)
		vg_vm_resume(vm);
	suspend_ns = ktime_get_ns() - t0;

	/* 6. Commit, outside the suspension. */
	list_for_each_entry_safe(c, tmp, &vm->marked, mark_node) {
		vg_resched_every(&k);
		ops->mem_free(b, c->mem);
		vg_chunk_move_batched(c, to, c->new_mem);
		c->new_mem = NULL;
		vg_chunk_unmark(c);
	}
	vg_vmh_moved(vm, to == VG_LOC_VRAM ? (s64)bytes : -(s64)bytes);
	vg_record_suspend(vm, suspend_ns);
	vg_record_moved(vm, to, n, bytes);
	gpu->stats.relocations++;
	vg_event_relocated(vm, to, n, bytes, suspend_ns);
	vg_copies_put(gpu, copies);
	return 0;

err_restore_maps:
	nkept = vg_restore_maps(vm, to, i, &kept);
	if (nkept) {
		/* They did move: the books say so, and so must the stats. */
		vg_record_moved(vm, to, nkept, kept);
		err = -EIO;
		what = "map, and restoring it (some chunks kept their new place)";
	}
	ops->tlb_flush(b, vm->as);
err_resume:
	if (!vm->frozen)
		vg_vm_resume(vm);
	vg_record_suspend(vm, ktime_get_ns() - t0);
err_free_mems:
	vg_free_new_mems(vm);
	vg_copies_put(gpu, copies);
err_unmark:
	vg_unmark_all(vm);
	gpu->stats.reloc_failures++;
	/* A guest can make its own or another VM's relocations fail. */
	pr_warn_ratelimited("vgmem: %s: relocating %u chunks (%llu bytes) to %s failed in %s: %d\n",
			    vm->name, n, (unsigned long long)bytes,
			    vg_loc_name(to), what, err);
	return err;
}

/* list_sort() order of a relocation's VMs: creation order, as gpu->vms. */
static int vg_cmp_order(void *priv __always_unused,
			const struct list_head *a, const struct list_head *b)
{
	const struct vg_vm *va = list_entry(a, struct vg_vm, reloc_node);
	const struct vg_vm *vb = list_entry(b, struct vg_vm, reloc_node);

	return va->order > vb->order;
}

int vg_relocate_marked(struct vg_gpu *gpu, enum vg_loc to)
{
	struct vg_vm *vm, *next, *failed = NULL, *head = NULL;
	bool sorted = true;
	LIST_HEAD(list);
	u32 done = 0;
	int err = 0;

	lockdep_assert_held(&gpu->lock);
	/*
	 * The VMs with marks, in creation order as gpu->vms has them. They
	 * stay on the chain: each leaves it as vg_relocate_vm() clears its
	 * marks. (The chain is in reverse order of first marks; reversed,
	 * the reducer's usual ties by creation order come out sorted, and
	 * then are not sorted again: list_sort() costs about 100
	 * instructions per VM even on a sorted list, and with many VMs of
	 * equal keys every VM relocated gives one chunk.)
	 */
	hlist_for_each_entry(vm, &gpu->marked_vms, marked_node) {
		if (head && vm->order > head->order)
			sorted = false;
		list_add(&vm->reloc_node, &list);
		head = vm;
	}
	if (!sorted)
		list_sort(NULL, &list, vg_cmp_order);
	/* One VM at a time, so the others keep the GPU busy (GPUswap 4.4). */
	list_for_each_entry_safe(vm, next, &list, reloc_node) {
		int e;

		if (list_empty(&vm->marked))
			continue;
		e = vg_relocate_vm(vm, to);
		if (e == -EAGAIN) {
			/*
			 * Not drained (deferred now): the others still move,
			 * their room is wanted all the same, and the caller
			 * chooses a replacement for this one's share.
			 */
			if (!err)
				failed = vm;
			err = -EAGAIN;
			continue;
		}
		if (e) {
			failed = vm;
			err = e;
			break;
		}
		done++;
	}
	if (!err)
		return 0;
	vg_unmark_gpu(gpu);
	if (done && err != -EAGAIN) {
		/*
		 * Not undone (see the top of this file): those VMs are whole
		 * where they are now, and the VRAM they left is free.
		 */
		pr_warn_ratelimited("vgmem: %s: %s failed after %u VM(s) were relocated to %s; they stay there until the return worker brings them back\n",
				    gpu->name, failed->name, done,
				    vg_loc_name(to));
		if (to == VG_LOC_HOST)
			vg_return_kick(gpu);
	}
	return err;
}

int vg_plan_check(struct vg_gpu *gpu, const struct vg_plan *plan)
{
	u64 left;

	lockdep_assert_held(&gpu->lock);
	if (!gpu->host_budget)
		return 0;
	left = gpu->host_budget - min(gpu->host_used, gpu->host_budget);
	return vg_plan_host_bytes(plan) > left ? -ENOMEM : 0;
}

void vg_plan_cancel(struct vg_gpu *gpu, struct vg_plan *plan)
{
	struct vg_bo *bo = plan->newbo;
	u32 i;

	lockdep_assert_held(&gpu->lock);
	vg_unmark_gpu(gpu);
	if (bo)
		for (i = bo->nr_chunks - plan->new_host_chunks;
		     i < bo->nr_chunks; i++)
			bo->chunks[i].loc = VG_LOC_VRAM;
	memset(plan, 0, sizeof(*plan));
	plan->newbo = bo;
}

int vg_plan_run(struct vg_gpu *gpu, struct vg_plan *plan)
{
	int err;

	lockdep_assert_held(&gpu->lock);
	if (!plan->move_bytes)
		return 0;
	err = vg_relocate_marked(gpu, VG_LOC_HOST);
	/* relocate.c logged the cause and cleared the marks. */
	if (err)
		vg_plan_cancel(gpu, plan);
	return err;
}
