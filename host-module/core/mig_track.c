// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Which chunks the GPU wrote after a pre-copy migration sent them
 * (docs/migration.md, "Pre-copy").
 *
 * A guest writes its GPU memory only through the GPU: BOs are not mapped
 * to its CPUs, and uploads are copy-engine work. So the GPU's writes are
 * all there is to track, and a GPU has no dirty bits in its page tables.
 * What it has is what the file cache uses already: read-only PTEs and
 * replayable write faults. A chunk the migration sends is made read-only
 * first (vg_mig_track_clean, before its bytes are copied out); the GPU's
 * first write to it afterwards faults, the handler here clears the chunk's
 * mig_clean, maps it writable and the access replays: the chunk goes
 * again in the next round, or in the stop phase. A write that came before
 * the protection is in the bytes copied after it; one after it faults. The
 * GPU driver's contract gives exactly that order: once protect and
 * tlb_flush have returned, no access translated through the old PTE is
 * still to land.
 *
 * Each BO gets its own fault range when one of its chunks is first made
 * read-only, so file maps (which register their own ranges in the same
 * address space) are never in the way. A freed BO's range is unregistered
 * asynchronously under gpu->lock (the handler takes gpu->lock), so a
 * handler call may still be running for it: each registration holds a
 * reference on the tracker, and the handler looks the chunk up anew by
 * address under gpu->lock. It never needs the VM once tracking has
 * stopped: t->dead says so, and then it only lets the access replay
 * (every chunk was made writable before dead was set).
 *
 * Locks: everything here under gpu->lock except refs; the handler is
 * called with no lock (fault.c) and takes gpu->lock.
 */
#include "vg_internal.h"

/* Room for this many freed BO addresses at first; doubles after. */
#define VG_MIG_FREED_MIN	16u

struct vg_mig_track {
	struct vg_gpu *gpu;		/* outlives every VM, so every call */
	struct vg_vm *vm;		/* valid while !dead */
	/* The tracker's own, and one per registration not yet released. */
	atomic_t refs;
	bool dead;			/* tracking stopped (gpu->lock) */
	int err;			/* sticky (gpu->lock) */
	/* VAs of announced BOs freed since, oldest first (gpu->lock). */
	u64 *freed;
	u32 nr_freed, freed_pos, cap_freed;
	u64 dirtied;			/* bytes of sent chunks written again */
};

static void vg_mig_track_put(void *priv)
{
	struct vg_mig_track *t = priv;

	if (atomic_dec_and_test(&t->refs)) {
		kfree(t->freed);
		kfree(t);
	}
}

/* The chunk holding va in vm, or NULL. gpu->lock held. */
static struct vg_chunk *vg_mig_chunk_at(struct vg_vm *vm, u64 va)
{
	struct vg_va_node *n = vg_va_end_after(&vm->va, va);
	struct vg_bo *bo;

	if (!n || n->start > va || n->file)
		return NULL;
	bo = container_of(n, struct vg_bo, va_node);
	return &bo->chunks[(va - bo->va) >> vm->gpu->chunk_shift];
}

/*
 * A GPU write to a read-only chunk (or any fault in a tracked BO's range).
 * Returns 0 to replay, -EFAULT to error the channel as the fault would
 * have without tracking.
 */
static int vg_mig_track_fault(void *priv, const struct vg_gpu_fault *f)
{
	struct vg_mig_track *t = priv;
	struct vg_gpu *gpu = t->gpu;
	struct vg_chunk *c;
	int ret = 0;

	mutex_lock(&gpu->lock);
	if (t->dead)
		goto out;	/* made writable before dead was set */
	c = vg_mig_chunk_at(t->vm, f->va);
	if (!c || !c->mem || !f->present) {
		/* No BO there any more, or a page that is not mapped at all. */
		ret = -EFAULT;
		goto out;
	}
	/*
	 * Writable again even if not clean: a protect that failed part way
	 * (vg_mig_track_clean) may have left pages read-only. Another fault
	 * of the same write may have done it already; that costs a protect.
	 */
	ret = gpu->ops->protect(gpu->drv, t->vm->as, vg_chunk_va(c), c->size,
				VG_PROT_RW);
	if (ret) {
		pr_warn_ratelimited("vgmem: %s: could not make chunk at %#llx writable again: %d\n",
				    t->vm->name,
				    (unsigned long long)vg_chunk_va(c), ret);
		goto out;
	}
	gpu->ops->tlb_flush(gpu->drv, t->vm->as);
	if (c->mig_clean) {
		c->mig_clean = false;
		t->dirtied += c->size;
	}
out:
	mutex_unlock(&gpu->lock);
	return ret;
}

int vg_mig_track_start(struct vg_vm *vm, struct vg_mig_track **out)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_mig_track *t;
	int err = 0;

	if (!vg_mig_precopy_possible(gpu))
		return -EOPNOTSUPP;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->gpu = gpu;
	t->vm = vm;
	atomic_set(&t->refs, 1);
	mutex_lock(&gpu->lock);
	if (vm->mig_track)
		err = -EBUSY;
	else
		vm->mig_track = t;
	mutex_unlock(&gpu->lock);
	if (err) {
		kfree(t);
		return err;
	}
	*out = t;
	return 0;
}

int vg_mig_track_clean(struct vg_mig_track *t, struct vg_chunk *c)
{
	struct vg_gpu *gpu = t->gpu;
	struct vg_bo *bo = c->bo;
	int err;

	lockdep_assert_held(&gpu->lock);
	if (WARN_ON(t->dead || bo->vm != t->vm))
		return -EINVAL;
	if (c->mig_clean)
		return 0;
	if (!bo->mig_reg) {
		/* The range first: a write to a read-only page outside one errors. */
		atomic_inc(&t->refs);
		err = vg_fault_register(gpu, t->vm->as, bo->va,
					ALIGN(bo->size, VGMEM_PAGE_SIZE),
					vg_mig_track_fault, t, &bo->mig_reg);
		if (err) {
			bo->mig_reg = NULL;
			vg_mig_track_put(t);
			return err;
		}
	}
	err = gpu->ops->protect(gpu->drv, t->vm->as, vg_chunk_va(c), c->size,
				VG_PROT_RO);
	if (err)
		return err;	/* a write to a page it did protect faults and undoes it */
	gpu->ops->tlb_flush(gpu->drv, t->vm->as);
	c->mig_clean = true;
	return 0;
}

void vg_mig_track_bo_freed(struct vg_bo *bo)
{
	struct vg_mig_track *t = bo->vm->mig_track;
	u64 *freed;
	u32 cap;

	lockdep_assert_held(&bo->vm->gpu->lock);
	if (bo->mig_reg) {
		vg_fault_unregister_async(bo->mig_reg, vg_mig_track_put);
		bo->mig_reg = NULL;
	}
	if (!t || !bo->mig_announced || t->err)
		return;
	if (t->nr_freed == t->cap_freed) {
		cap = t->cap_freed ? t->cap_freed * 2 : VG_MIG_FREED_MIN;
		freed = kmalloc_array(cap, sizeof(*freed), GFP_KERNEL);
		if (!freed) {
			/* The destination would keep a BO the guest freed. */
			t->err = -ENOMEM;
			return;
		}
		if (t->nr_freed)
			memcpy(freed, t->freed, t->nr_freed * sizeof(*freed));
		kfree(t->freed);
		t->freed = freed;
		t->cap_freed = cap;
	}
	t->freed[t->nr_freed++] = bo->va;
}

bool vg_mig_track_take_freed(struct vg_mig_track *t, u64 *va)
{
	lockdep_assert_held(&t->gpu->lock);
	if (t->freed_pos == t->nr_freed)
		return false;
	*va = t->freed[t->freed_pos++];
	if (t->freed_pos == t->nr_freed)
		t->freed_pos = t->nr_freed = 0;
	return true;
}

int vg_mig_track_error(const struct vg_mig_track *t)
{
	return t->err;
}

u64 vg_mig_track_dirtied(const struct vg_mig_track *t)
{
	return t->dirtied;
}

void vg_mig_track_vm_gone(struct vg_vm *vm)
{
	struct vg_mig_track *t = vm->mig_track;

	lockdep_assert_held(&vm->gpu->lock);
	/* Its BOs go next, each unregistering its range as it is freed. */
	t->dead = true;
	t->vm = NULL;
	vm->mig_track = NULL;
}

void vg_mig_track_stop(struct vg_mig_track *t)
{
	struct vg_gpu *gpu = t->gpu;
	struct vg_vm *vm = t->vm;
	struct vg_bo *bo;
	bool flush = false;
	u32 i;

	mutex_lock(&gpu->lock);
	if (t->dead) {
		/* Its VM went first (vg_mig_track_vm_gone). */
		mutex_unlock(&gpu->lock);
		vg_mig_track_put(t);
		return;
	}
	list_for_each_entry(bo, &vm->bos, node) {
		for (i = 0; i < bo->nr_chunks; i++) {
			struct vg_chunk *c = &bo->chunks[i];

			/*
			 * A protect that fails leaves the page read-only with
			 * its range going away: the next write errors the
			 * channel. Said loudly; the GPU driver's contract has
			 * protect fail only for bad arguments.
			 */
			if (c->mig_clean &&
			    WARN_ON(gpu->ops->protect(gpu->drv, vm->as,
						      vg_chunk_va(c), c->size,
						      VG_PROT_RW)))
				pr_err("vgmem: %s: chunk at %#llx stays read-only\n",
				       vm->name,
				       (unsigned long long)vg_chunk_va(c));
			flush |= c->mig_clean;
			c->mig_clean = false;
			c->mig_sent = false;
		}
		bo->mig_announced = false;
		if (bo->mig_reg) {
			vg_fault_unregister_async(bo->mig_reg, vg_mig_track_put);
			bo->mig_reg = NULL;
		}
	}
	if (flush)
		gpu->ops->tlb_flush(gpu->drv, vm->as);
	t->dead = true;
	vm->mig_track = NULL;
	mutex_unlock(&gpu->lock);
	vg_mig_track_put(t);
}

int vg_chunk_map(struct vg_vm *vm, struct vg_chunk *c, struct vg_mem *mem)
{
	const struct vg_gpu_ops *ops = vm->gpu->ops;

	lockdep_assert_held(&vm->gpu->lock);
	if (c->mig_clean)
		return ops->map_prot(vm->gpu->drv, vm->as, vg_chunk_va(c),
				     c->size, mem, 0, VG_PROT_RO);
	return ops->map(vm->gpu->drv, vm->as, vg_chunk_va(c), c->size, mem, 0);
}
