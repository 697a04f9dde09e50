// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * VM lifetime and per-VM settings: quota (how much it may allocate) and
 * entitlement (how much VRAM it may keep when others want some).
 */
#include "vg_internal.h"

int vg_vm_create(struct vg_gpu *gpu, const struct vg_vm_config *cfg,
		 struct vg_vm **out)
{
	struct vg_vm *vm;
	u64 old_equal;
	int err;

	if (!gpu || !cfg || !out)
		return -EINVAL;
	/* A guest memory accessor is all or nothing. */
	if (!cfg->gmem.read != !cfg->gmem.write)
		return -EINVAL;
	vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	if (!vm)
		return -ENOMEM;
	vm->gpu = gpu;
	vm->quota = cfg->quota;
	vm->profile = cfg->profile;
	vm->gmem = cfg->gmem;
	vm->platform = cfg->platform;
	INIT_LIST_HEAD(&vm->bos);
	/* Holes are chunk aligned: see vg_bo_find_va(). */
	vg_va_init(&vm->va, VGMEM_VA_START, VGMEM_VA_END, gpu->chunk_size);
	INIT_LIST_HEAD(&vm->resident_list);
	INIT_LIST_HEAD(&vm->relocated_list);
	INIT_LIST_HEAD(&vm->marked);
	INIT_HLIST_NODE(&vm->marked_node);
	INIT_LIST_HEAD(&vm->chans);
	atomic64_set(&vm->faults, 0);

	mutex_lock(&gpu->lock);
	err = gpu->ops->as_create(gpu->drv, &vm->as);
	if (err) {
		mutex_unlock(&gpu->lock);
		pr_warn("vgmem: %s: creating an address space failed: %d\n",
			gpu->name, err);
		goto err_free_vm;
	}
	vm->order = gpu->next_vm_order++;
	if (cfg->name && cfg->name[0])
		strscpy(vm->name, cfg->name, sizeof(vm->name));
	else
		snprintf(vm->name, sizeof(vm->name), "vm%llu",
			 (unsigned long long)vm->order);
	old_equal = vg_gpu_equal_share(gpu);
	list_add_tail(&vm->node, &gpu->vms);
	gpu->nr_vms++;
	gpu->nr_ent_equal++;
	vg_vmh_added(gpu, vm, old_equal);
	mutex_unlock(&gpu->lock);
	*out = vm;
	return 0;

err_free_vm:
	kfree(vm);
	return err;
}

int vg_vm_attach_files(struct vg_vm *vm, const struct vg_file_ops *ops,
		       void *ctx)
{
	int err = 0;

	mutex_lock(&vm->gpu->lock);
	if (vm->files_ops) {
		err = -EEXIST;
	} else {
		vm->files_ops = ops;
		vm->files_ctx = ctx;
	}
	mutex_unlock(&vm->gpu->lock);
	return err;
}

void vg_vm_detach_files(struct vg_vm *vm)
{
	mutex_lock(&vm->gpu->lock);
	vm->files_ops = NULL;
	vm->files_ctx = NULL;
	mutex_unlock(&vm->gpu->lock);
}

void *vg_vm_files(struct vg_vm *vm, const struct vg_file_ops *ops)
{
	void *ctx = NULL;

	if (!vm)
		return NULL;
	mutex_lock(&vm->gpu->lock);
	if (vm->files_ops == ops)
		ctx = vm->files_ctx;
	mutex_unlock(&vm->gpu->lock);
	return ctx;
}

const struct vg_file_ops *vg_vm_file_service(struct vg_vm *vm, void **ctx)
{
	const struct vg_file_ops *ops;

	mutex_lock(&vm->gpu->lock);
	ops = vm->files_ops;
	*ctx = vm->files_ctx;
	mutex_unlock(&vm->gpu->lock);
	return ops;
}

/* The service's teardown, without gpu->lock (it takes its own locks first). */
static void vg_vm_files_destroy(struct vg_vm *vm)
{
	const struct vg_file_ops *ops;
	void *ctx;

	mutex_lock(&vm->gpu->lock);
	ops = vm->files_ops;
	ctx = vm->files_ctx;
	mutex_unlock(&vm->gpu->lock);
	if (ops)
		ops->destroy(ctx);
}

void vg_vm_destroy(struct vg_vm *vm)
{
	struct vg_gpu *gpu;
	struct vg_chan *ch, *tch;
	struct vg_bo *bo, *tbo;

	if (!vm)
		return;
	gpu = vm->gpu;
	/*
	 * File maps first, without gpu->lock (the cache takes its own lock,
	 * then gpu->lock): released data is written back, unreleased GPU
	 * writes are released implicitly (core/lrc/, docs/lrc.md).
	 */
	vg_vm_files_destroy(vm);
	mutex_lock(&gpu->lock);
	/* The platform ends a migration's save first (vg.h); if not, cut it off. */
	if (WARN_ON(vm->mig_track))
		vg_mig_track_vm_gone(vm);
	/* Channels first: nothing may run on the memory we free next. */
	list_for_each_entry_safe(ch, tch, &vm->chans, node)
		vg_chan_destroy_locked(ch);
	WARN_ON(!list_empty(&vm->marked));
	list_for_each_entry_safe(bo, tbo, &vm->bos, node)
		vg_bo_free_locked(bo);
	gpu->ops->as_destroy(gpu->drv, vm->as);
	list_del(&vm->node);
	gpu->nr_vms--;
	if (vm->entitlement)
		gpu->ent_explicit -= vm->entitlement;
	else
		gpu->nr_ent_equal--;
	vg_vmh_invalidate(gpu);
	/* Keep the GPU's fault count cumulative. */
	gpu->stats.faults += atomic64_read(&vm->faults);
	/* vg_gpu_destroy() requires no VMs: the last one frees the scratch. */
	if (!gpu->nr_vms)
		vg_red_free(gpu);
	mutex_unlock(&gpu->lock);
	/*
	 * Freed VRAM: relocated chunks of other VMs come back at the return
	 * worker's next periodic pass.
	 */
	kvfree(vm->res_vec);
	kfree(vm);
}

int vg_vm_set_entitlement(struct vg_vm *vm, u64 bytes)
{
	struct vg_gpu *gpu = vm->gpu;
	u64 old_ent, old_equal;

	/*
	 * Explicit entitlements may transiently add up to more than VRAM
	 * while mgmtd updates them one by one; each must fit on its own.
	 */
	if (bytes > gpu->vram_size)
		return -EINVAL;
	mutex_lock(&gpu->lock);
	old_ent = vm->entitlement;
	old_equal = vg_gpu_equal_share(gpu);
	if (vm->entitlement)
		gpu->ent_explicit -= vm->entitlement;
	else
		gpu->nr_ent_equal--;
	vm->entitlement = bytes;
	if (bytes)
		gpu->ent_explicit += bytes;
	else
		gpu->nr_ent_equal++;
	vg_vmh_ent_set(gpu, vm, old_ent, old_equal);
	mutex_unlock(&gpu->lock);
	return 0;
}

int vg_vm_set_quota(struct vg_vm *vm, u64 bytes)
{
	struct vg_gpu *gpu = vm->gpu;
	int err = 0;

	mutex_lock(&gpu->lock);
	/* Shrinking below what the VM holds would need freeing its BOs. */
	if (bytes && bytes < vm->allocated)
		err = -EBUSY;
	else
		vm->quota = bytes;
	mutex_unlock(&gpu->lock);
	return err;
}

void vg_vm_get_stats(struct vg_vm *vm, struct vgmem_vm_stats *st)
{
	struct vg_gpu *gpu = vm->gpu;

	mutex_lock(&gpu->lock);
	*st = vm->stats;
	st->quota = vm->quota;
	st->entitlement = vg_vm_entitlement(vm);
	st->allocated = vm->allocated;
	st->resident = vm->resident;
	st->relocated = vm->relocated;
	st->faults = atomic64_read(&vm->faults);
	mutex_unlock(&gpu->lock);
}

u64 vg_vm_cache_private(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	u64 bytes;

	mutex_lock(&gpu->lock);
	bytes = vm->cache_private;
	mutex_unlock(&gpu->lock);
	return bytes;
}

const char *vg_vm_name(const struct vg_vm *vm)
{
	return vm->name;
}

void *vg_vm_priv(const struct vg_vm *vm)
{
	return vm->platform.priv;
}

struct vg_as *vg_vm_gpu_as(struct vg_vm *vm)
{
	return vm->as;
}
