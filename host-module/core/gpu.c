// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GPU lifetime, settings, statistics and the consistency check that tests
 * and debugfs run after every operation.
 */
#include "vg_internal.h"

static const char *const vg_policy_names[VG_POLICY_NR] = {
	[VG_POLICY_RANDOM] = "random",
	[VG_POLICY_LRA] = "lra",
	[VG_POLICY_COLD] = "cold",
};

const char *vg_policy_name(enum vg_chunk_policy p)
{
	if ((unsigned int)p >= VG_POLICY_NR)
		return "invalid";
	return vg_policy_names[p];
}

int vg_policy_parse(const char *name, enum vg_chunk_policy *out)
{
	unsigned int i;

	if (!name || !out)
		return -EINVAL;
	for (i = 0; i < VG_POLICY_NR; i++) {
		if (!strcmp(name, vg_policy_names[i])) {
			*out = (enum vg_chunk_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Every op except sample_access is required. */
static bool vg_ops_complete(const struct vg_gpu_ops *ops)
{
	return ops->vram_size && ops->mem_alloc && ops->mem_free &&
	       ops->copy_submit && ops->copy_wait && ops->as_create &&
	       ops->as_destroy && ops->map && ops->unmap && ops->tlb_flush &&
	       ops->channel_create && ops->channel_destroy &&
	       ops->channel_idle_wait && ops->channel_stop &&
	       ops->channel_start;
}

#define VG_RETURN_MS_MAX	10000

int vg_gpu_create(const struct vg_gpu_config *cfg,
		  const struct vg_gpu_ops *ops, void *drv,
		  struct vg_gpu **out)
{
	struct vg_gpu *gpu;
	u64 chunk, vram;
	int err;

	if (!cfg || !ops || !out || !vg_ops_complete(ops))
		return -EINVAL;
	chunk = cfg->chunk_size ? cfg->chunk_size : VG_CHUNK_DEFAULT;
	if (!is_power_of_2(chunk) || chunk < VG_CHUNK_MIN ||
	    chunk > VG_CHUNK_MAX)
		return -EINVAL;
	if ((unsigned int)cfg->policy >= VG_POLICY_NR)
		return -EINVAL;
	if (cfg->return_interval_ms > VG_RETURN_MS_MAX)
		return -EINVAL;
	vram = ops->vram_size(drv);
	if (!vram || !IS_ALIGNED(vram, VGMEM_PAGE_SIZE))
		return -EINVAL;

	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return -ENOMEM;
	gpu->ops = ops;
	gpu->drv = drv;
	strscpy(gpu->name, cfg->name ? cfg->name : "vgmem", sizeof(gpu->name));
	mutex_init(&gpu->lock);
	mutex_init(&gpu->cache_lock);
	gpu->vram_size = vram;
	gpu->chunk_size = chunk;
	gpu->chunk_shift = ilog2(chunk);
	gpu->policy = cfg->policy;
	gpu->host_budget = cfg->host_budget;
	gpu->events = cfg->events;
	gpu->events_priv = cfg->events_priv;
	INIT_LIST_HEAD(&gpu->vms);
	INIT_HLIST_HEAD(&gpu->marked_vms);
	vg_rand_seed(&gpu->rand, cfg->seed);
	init_waitqueue_head(&gpu->return_wq);
	gpu->return_ms = cfg->return_interval_ms ? cfg->return_interval_ms :
			 VG_RETURN_MS_DEFAULT;
	/* The GPU driver's one fault handler is the core's (fault.c). */
	vg_fault_init(gpu);

	if (!cfg->no_return_worker) {
		err = vg_return_start(gpu);
		if (err)
			goto err_free_gpu;
	}
	*out = gpu;
	return 0;

err_free_gpu:
	vg_fault_fini(gpu);
	mutex_destroy(&gpu->cache_lock);
	mutex_destroy(&gpu->lock);
	kfree(gpu);
	return err;
}

void vg_gpu_destroy(struct vg_gpu *gpu)
{
	if (!gpu)
		return;
	/* First, with no lock: it waits for a fault call under way. */
	vg_fault_fini(gpu);
	if (gpu->return_task)
		vg_return_stop(gpu);
	/* VMs own guest state; the caller must tear them down first. */
	WARN_ON(!list_empty(&gpu->vms));
	/* The cache removes its GPU (and its hook, its VRAM) first. */
	WARN_ON(gpu->cache_reclaim || gpu->cache_used);
	mutex_destroy(&gpu->cache_lock);
	mutex_destroy(&gpu->lock);
	kfree(gpu);
}

void vg_gpu_set_cache_reclaim(struct vg_gpu *gpu,
			      u64 (*reclaim)(void *priv, u64 bytes),
			      void *priv)
{
	lockdep_assert_not_held(&gpu->lock);
	/* Held across every call: taking it waits for one under way. */
	mutex_lock(&gpu->cache_lock);
	gpu->cache_reclaim = reclaim;
	gpu->cache_priv = reclaim ? priv : NULL;
	mutex_unlock(&gpu->cache_lock);
}

u64 vg_gpu_cache_reclaim(struct vg_gpu *gpu, u64 bytes)
{
	u64 freed = 0;

	lockdep_assert_not_held(&gpu->lock);
	if (!bytes)
		return 0;
	mutex_lock(&gpu->cache_lock);
	if (gpu->cache_reclaim)
		freed = gpu->cache_reclaim(gpu->cache_priv, bytes);
	mutex_unlock(&gpu->cache_lock);
	return freed;
}

int vg_gpu_set_policy(struct vg_gpu *gpu, enum vg_chunk_policy p)
{
	if ((unsigned int)p >= VG_POLICY_NR)
		return -EINVAL;
	mutex_lock(&gpu->lock);
	gpu->policy = p;
	mutex_unlock(&gpu->lock);
	return 0;
}

int vg_gpu_set_return_interval(struct vg_gpu *gpu, u32 ms)
{
	if (!ms || ms > VG_RETURN_MS_MAX)
		return -EINVAL;
	mutex_lock(&gpu->lock);
	/* The return worker reads it without the lock. */
	WRITE_ONCE(gpu->return_ms, ms);
	mutex_unlock(&gpu->lock);
	/* Let a sleeping worker pick up the new period now. */
	wake_up(&gpu->return_wq);
	return 0;
}

void vg_gpu_get_stats(struct vg_gpu *gpu, struct vg_gpu_stats *st)
{
	struct vg_vm *vm;

	mutex_lock(&gpu->lock);
	*st = gpu->stats;
	st->vram_size = gpu->vram_size;
	st->vram_used = gpu->vram_used;
	st->host_used = gpu->host_used;
	st->nr_vms = gpu->nr_vms;
	st->chunk_size = gpu->chunk_size;
	st->policy = gpu->policy;
	st->cache_used = gpu->cache_used;
	/* stats.faults holds the faults of VMs already destroyed. */
	list_for_each_entry(vm, &gpu->vms, node)
		st->faults += atomic64_read(&vm->faults);
	mutex_unlock(&gpu->lock);
}

/* ---- consistency check --------------------------------------------------- */

/* VG_CHECK() is in vg_internal.h (the reducer checks its heap too). */

/* The same inside vg_gpu_check(), which holds the lock. */
#define VG_CHECK_UNLOCK(cond, fmt, ...)					\
	do {								\
		if (unlikely(!(cond))) {				\
			pr_err("vgmem: %s: check failed: " fmt "\n",	\
			       gpu->name, ##__VA_ARGS__);		\
			err = -EIO;					\
			goto out_unlock;				\
		}							\
	} while (0)

static int vg_check_bo(struct vg_gpu *gpu, struct vg_vm *vm, struct vg_bo *bo)
{
	u64 sum = 0;
	u32 i;

	VG_CHECK(bo->vm == vm, "%s: bo 0x%llx has the wrong vm", vm->name,
		 (unsigned long long)bo->va);
	VG_CHECK(bo->nr_chunks ==
		 DIV_ROUND_UP(bo->size, gpu->chunk_size),
		 "%s: bo 0x%llx has %u chunks for %llu bytes", vm->name,
		 (unsigned long long)bo->va, bo->nr_chunks,
		 (unsigned long long)bo->size);
	for (i = 0; i < bo->nr_chunks; i++) {
		struct vg_chunk *c = &bo->chunks[i];

		VG_CHECK(c->bo == bo && c->index == i && c->mem,
			 "%s: bo 0x%llx chunk %u: bad back pointer or no mem",
			 vm->name, (unsigned long long)bo->va, i);
		VG_CHECK(!c->marked && !c->new_mem,
			 "%s: bo 0x%llx chunk %u still marked outside a relocation",
			 vm->name, (unsigned long long)bo->va, i);
		VG_CHECK(c->size == (i + 1 < bo->nr_chunks ? gpu->chunk_size :
				     bo->size - (u64)i * gpu->chunk_size),
			 "%s: bo 0x%llx chunk %u size %llu", vm->name,
			 (unsigned long long)bo->va, i,
			 (unsigned long long)c->size);
		sum += c->size;
	}
	VG_CHECK(sum == bo->size, "%s: bo 0x%llx chunks sum %llu != size %llu",
		 vm->name, (unsigned long long)bo->va, (unsigned long long)sum,
		 (unsigned long long)bo->size);
	return 0;
}

static int vg_check_vm(struct vg_gpu *gpu, struct vg_vm *vm)
{
	u64 alloc = 0, res = 0, rel = 0, end = VGMEM_VA_START, seq = 0;
	u32 chunks = 0, nres = 0, nrel = 0;
	struct vg_va_node *n;
	struct vg_chunk *c;
	struct vg_bo *bo;
	int err;

	/* The VA index (its own invariants), then that it holds the BOs. */
	VG_CHECK(!vg_va_check(&vm->va), "%s: VA index corrupt", vm->name);
	n = vg_va_first(&vm->va);
	list_for_each_entry(bo, &vm->bos, node) {
		while (n && n->file)	/* LRC file maps: not BOs */
			n = vg_va_next(n);
		VG_CHECK(bo->va >= end && bo->size &&
			 bo->va + bo->size <= VGMEM_VA_END,
			 "%s: bo 0x%llx unsorted, overlapping or out of range",
			 vm->name, (unsigned long long)bo->va);
		/* Both in address order: the i-th node is the i-th BO's. */
		VG_CHECK(n == &bo->va_node && n->start == bo->va &&
			 n->end == bo->va + bo->size,
			 "%s: bo 0x%llx missing from the VA index or out of step",
			 vm->name, (unsigned long long)bo->va);
		n = vg_va_next(n);
		end = bo->va + bo->size;
		err = vg_check_bo(gpu, vm, bo);
		if (err)
			return err;
		alloc += bo->size;
		chunks += bo->nr_chunks;
	}
	while (n && n->file)
		n = vg_va_next(n);
	VG_CHECK(!n, "%s: VA index holds 0x%llx, which is no BO", vm->name,
		 (unsigned long long)n->start);
	list_for_each_entry(c, &vm->resident_list, node) {
		VG_CHECK(c->bo->vm == vm && c->loc == VG_LOC_VRAM,
			 "%s: resident list holds a chunk of loc %d or of another vm",
			 vm->name, c->loc);
		VG_CHECK(c->slot < vm->res_nr && vm->res_vec[c->slot] == c,
			 "%s: chunk %u of bo 0x%llx not at its res_vec slot %u",
			 vm->name, c->index, (unsigned long long)c->bo->va,
			 c->slot);
		/* LRA: the list is in placement order. */
		VG_CHECK(c->placed_seq > seq && c->placed_seq <= gpu->seq,
			 "%s: resident list out of placement order", vm->name);
		seq = c->placed_seq;
		res += c->size;
		nres++;
	}
	list_for_each_entry(c, &vm->relocated_list, node) {
		VG_CHECK(c->bo->vm == vm && c->loc == VG_LOC_HOST,
			 "%s: relocated list holds a chunk of loc %d or of another vm",
			 vm->name, c->loc);
		rel += c->size;
		nrel++;
	}
	VG_CHECK(list_empty(&vm->marked) && !vm->marked_bytes,
		 "%s: %llu marked bytes outside a relocation", vm->name,
		 (unsigned long long)vm->marked_bytes);
	VG_CHECK(nres == vm->res_nr, "%s: %u resident chunks listed, res_nr %u",
		 vm->name, nres, vm->res_nr);
	VG_CHECK(nres + nrel == chunks && chunks == vm->nr_chunks,
		 "%s: %u + %u chunks on lists, %u in bos, nr_chunks %u",
		 vm->name, nres, nrel, chunks, vm->nr_chunks);
	VG_CHECK(vm->res_cap >= vm->nr_chunks,
		 "%s: res_vec capacity %u below %u chunks", vm->name,
		 vm->res_cap, vm->nr_chunks);
	VG_CHECK(alloc == vm->allocated, "%s: allocated %llu, bos sum %llu",
		 vm->name, (unsigned long long)vm->allocated,
		 (unsigned long long)alloc);
	VG_CHECK(res == vm->resident, "%s: resident %llu, list sum %llu",
		 vm->name, (unsigned long long)vm->resident,
		 (unsigned long long)res);
	VG_CHECK(rel == vm->relocated, "%s: relocated %llu, list sum %llu",
		 vm->name, (unsigned long long)vm->relocated,
		 (unsigned long long)rel);
	VG_CHECK(res + rel == alloc, "%s: resident + relocated != allocated",
		 vm->name);
	VG_CHECK(!vm->quota || alloc <= vm->quota,
		 "%s: allocated %llu above quota %llu", vm->name,
		 (unsigned long long)alloc, (unsigned long long)vm->quota);
	return 0;
}

int vg_gpu_check(struct vg_gpu *gpu)
{
	u64 vram = 0, host = 0, explicit = 0, order = 0, priv = 0;
	u32 nvms = 0, nequal = 0;
	struct vg_vm *vm;
	int err = 0;

	mutex_lock(&gpu->lock);
	list_for_each_entry(vm, &gpu->vms, node) {
		err = vg_check_vm(gpu, vm);
		if (err)
			goto out_unlock;
		if (nvms) {
			VG_CHECK_UNLOCK(vm->order > order,
					"%s: vm list out of creation order",
					vm->name);
		}
		order = vm->order;
		vram += vm->resident;
		host += vm->relocated;
		priv += vm->cache_private;
		explicit += vm->entitlement;
		nequal += !vm->entitlement;
		nvms++;
	}
	VG_CHECK_UNLOCK(nvms == gpu->nr_vms, "%u vms listed, nr_vms %u", nvms,
			gpu->nr_vms);
	VG_CHECK_UNLOCK(vram == gpu->vram_used, "vram_used %llu, vms sum %llu",
			(unsigned long long)gpu->vram_used,
			(unsigned long long)vram);
	VG_CHECK_UNLOCK(host == gpu->host_used, "host_used %llu, vms sum %llu",
			(unsigned long long)gpu->host_used,
			(unsigned long long)host);
	/* The file cache's VRAM comes out of what is free, never beyond. */
	VG_CHECK_UNLOCK(vram <= gpu->vram_size &&
			gpu->cache_used <= gpu->vram_size - vram,
			"vram_used %llu + cache_used %llu above %llu",
			(unsigned long long)vram,
			(unsigned long long)gpu->cache_used,
			(unsigned long long)gpu->vram_size);
	/* A VM's private replicas are part of the cache's VRAM. */
	VG_CHECK_UNLOCK(priv <= gpu->cache_used,
			"vms' cache_private sum %llu above cache_used %llu",
			(unsigned long long)priv,
			(unsigned long long)gpu->cache_used);
	VG_CHECK_UNLOCK(explicit == gpu->ent_explicit &&
			nequal == gpu->nr_ent_equal,
			"entitlement sums %llu/%u, cached %llu/%u",
			(unsigned long long)explicit, nequal,
			(unsigned long long)gpu->ent_explicit,
			gpu->nr_ent_equal);
	err = vg_vmh_check(gpu);
out_unlock:
	mutex_unlock(&gpu->lock);
	return err;
}
