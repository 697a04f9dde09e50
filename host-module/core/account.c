// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory accounting (GPUswap section 4.2): the only code that changes where
 * a chunk is, which list it is on, and the per-VM and per-GPU totals. The
 * reducer, the relocation engine and the return worker decide; this file
 * keeps the books so that vg_gpu_check() can recompute every total from the
 * lists and find them equal.
 *
 * A VM's resident chunks are kept twice:
 *  - vm->resident_list in placement order (head = least recently placed
 *    into VRAM), which LRA and COLD walk;
 *  - vm->res_vec, an unordered array with c->slot as back index, so a random
 *    resident chunk is one index away and removal is an O(1) swap with the
 *    last element.
 * res_vec is sized for every chunk the VM owns (vg_vm_reserve_chunks), so
 * moving a chunk into VRAM never allocates and never fails. bo.c reserves
 * only once a new BO is placed and nothing else can fail, so a refused or
 * failed allocation never grows it.
 */
#include "vg_internal.h"

/* res_vec slots are u32; also the "no slot" value. */
#define VG_VM_MAX_CHUNKS	(1u << 30)

u64 vg_gpu_equal_share(const struct vg_gpu *gpu)
{
	lockdep_assert_held(&gpu->lock);
	/*
	 * GPUswap's equal share, refined by explicit entitlements: the VMs
	 * without one split what the others leave.
	 */
	if (!gpu->nr_ent_equal || gpu->ent_explicit >= gpu->vram_size)
		return 0;
	return div64_u64(gpu->vram_size - gpu->ent_explicit, gpu->nr_ent_equal);
}

/*
 * The file cache's VRAM is neither a VM's nor part of vram_size's split:
 * equal shares and entitlements come from vram_size alone, which never
 * moves, and the cache yields its VRAM before any VM is relocated for
 * room (vg_gpu_cache_reclaim()). What is free is what neither holds.
 */
u64 vg_gpu_vram_free(const struct vg_gpu *gpu)
{
	u64 held = gpu->vram_used + gpu->cache_used;

	lockdep_assert_held(&gpu->lock);
	return gpu->vram_size - min(held, gpu->vram_size);
}

void vg_gpu_cache_add(struct vg_gpu *gpu, struct vg_vm *vm, u64 bytes)
{
	lockdep_assert_held(&gpu->lock);
	/* The cache allocates from free VRAM only (core/lrc/evict.c). */
	WARN_ON(bytes > vg_gpu_vram_free(gpu));
	gpu->cache_used += bytes;
	if (vm)
		vm->cache_private += bytes;
}

void vg_gpu_cache_sub(struct vg_gpu *gpu, struct vg_vm *vm, u64 bytes)
{
	lockdep_assert_held(&gpu->lock);
	if (WARN_ON(bytes > gpu->cache_used))
		bytes = gpu->cache_used;
	gpu->cache_used -= bytes;
	if (vm)
		vm->cache_private -= min(bytes, vm->cache_private);
}

u64 vg_vm_entitlement(const struct vg_vm *vm)
{
	const struct vg_gpu *gpu = vm->gpu;

	lockdep_assert_held(&gpu->lock);
	if (vm->entitlement)
		return vm->entitlement;
	/* This VM counts among the equal ones, so nr_ent_equal >= 1 here. */
	if (WARN_ON_ONCE(!gpu->nr_ent_equal))
		return 0;
	return vg_gpu_equal_share(gpu);
}

int vg_vm_reserve_chunks(struct vg_vm *vm, u32 more)
{
	struct vg_chunk **vec;
	u64 want = (u64)vm->nr_chunks + more;
	u64 cap;

	lockdep_assert_held(&vm->gpu->lock);
	if (want <= vm->res_cap)
		return 0;
	if (want > VG_VM_MAX_CHUNKS)
		return -ENOMEM;
	/* Grow geometrically so a stream of small BOs costs O(1) amortised. */
	cap = max_t(u64, want, (u64)vm->res_cap * 2);
	cap = max_t(u64, cap, 64);
	cap = min_t(u64, cap, VG_VM_MAX_CHUNKS);
	vec = kvmalloc(cap * sizeof(*vec), GFP_KERNEL);
	if (!vec)
		return -ENOMEM;
	if (vm->res_nr)
		memcpy(vec, vm->res_vec, vm->res_nr * sizeof(*vec));
	kvfree(vm->res_vec);
	vm->res_vec = vec;
	vm->res_cap = (u32)cap;
	return 0;
}

void vg_vm_account_bo(struct vg_vm *vm, const struct vg_bo *bo, bool add)
{
	lockdep_assert_held(&vm->gpu->lock);
	if (add) {
		vm->allocated += bo->size;
		vm->nr_chunks += bo->nr_chunks;
	} else {
		WARN_ON(vm->allocated < bo->size || vm->nr_chunks < bo->nr_chunks);
		vm->allocated -= bo->size;
		vm->nr_chunks -= bo->nr_chunks;
	}
}

static void vg_res_vec_push(struct vg_vm *vm, struct vg_chunk *c)
{
	/* Reserved ahead by vg_vm_reserve_chunks(); running out is a bug. */
	BUG_ON(vm->res_nr >= vm->res_cap);
	c->slot = vm->res_nr;
	vm->res_vec[vm->res_nr++] = c;
}

static void vg_res_vec_del(struct vg_vm *vm, struct vg_chunk *c)
{
	struct vg_chunk *last;

	if (WARN_ON(c->slot >= vm->res_nr || vm->res_vec[c->slot] != c))
		return;
	last = vm->res_vec[--vm->res_nr];
	vm->res_vec[c->slot] = last;
	last->slot = c->slot;
	c->slot = VG_VM_MAX_CHUNKS;
}

/*
 * The books of a chunk coming into VRAM. key: also move the VM in the
 * standing heap; without it the caller does, once for all the chunks of
 * the VM it moves (vg_chunk_move_batched()).
 */
static __always_inline void vg_chunk_add_resident_t(struct vg_chunk *c,
						    struct vg_mem *mem,
						    const bool key)
{
	struct vg_vm *vm = c->bo->vm;
	struct vg_gpu *gpu = vm->gpu;

	lockdep_assert_held(&gpu->lock);
	c->loc = VG_LOC_VRAM;
	c->mem = mem;
	c->placed_seq = ++gpu->seq;
	/* New memory is presumed in use until a sample says otherwise. */
	if (!c->touched)
		c->touched = gpu->heat_clock;
	list_add_tail(&c->node, &vm->resident_list);
	vg_res_vec_push(vm, c);
	vm->resident += c->size;
	gpu->vram_used += c->size;
	if (key)
		vg_vmh_moved(vm, (s64)c->size);
}

void vg_chunk_add_resident(struct vg_chunk *c, struct vg_mem *mem)
{
	vg_chunk_add_resident_t(c, mem, true);
}

void vg_chunk_add_relocated(struct vg_chunk *c, struct vg_mem *mem)
{
	struct vg_vm *vm = c->bo->vm;
	struct vg_gpu *gpu = vm->gpu;

	lockdep_assert_held(&gpu->lock);
	c->loc = VG_LOC_HOST;
	c->mem = mem;
	/*
	 * From now on heat counts accesses over PCIe only: what the return
	 * worker ranks by (COLD), and a chunk nobody reads in host RAM
	 * costs nothing there (return.c).
	 */
	c->heat = 0;
	c->host_streak = 0;
	list_add_tail(&c->node, &vm->relocated_list);
	vm->relocated += c->size;
	gpu->host_used += c->size;
}

/*
 * Off its list and out of the totals; c->mem is left to the caller, and
 * so is the VM's key in the standing heap unless key.
 */
static __always_inline void vg_chunk_unaccount(struct vg_chunk *c,
					       const bool key)
{
	struct vg_vm *vm = c->bo->vm;
	struct vg_gpu *gpu = vm->gpu;

	list_del_init(&c->node);
	if (c->loc == VG_LOC_VRAM) {
		vg_res_vec_del(vm, c);
		vm->resident -= c->size;
		gpu->vram_used -= c->size;
		if (key)
			vg_vmh_moved(vm, -(s64)c->size);
	} else {
		vm->relocated -= c->size;
		gpu->host_used -= c->size;
	}
}

void vg_chunk_remove(struct vg_chunk *c)
{
	lockdep_assert_held(&c->bo->vm->gpu->lock);
	/* Marks belong to a relocation, which holds the lock throughout. */
	WARN_ON(c->marked);
	vg_chunk_unaccount(c, true);
	c->mem = NULL;
}

static __always_inline void vg_chunk_move_t(struct vg_chunk *c,
					    enum vg_loc to,
					    struct vg_mem *mem, const bool key)
{
	lockdep_assert_held(&c->bo->vm->gpu->lock);
	WARN_ON(c->loc == to);
	/* The relocation calls this on marked chunks and unmarks after. */
	vg_chunk_unaccount(c, key);
	if (to == VG_LOC_VRAM)
		vg_chunk_add_resident_t(c, mem, key);
	else
		vg_chunk_add_relocated(c, mem);
}

void vg_chunk_move(struct vg_chunk *c, enum vg_loc to, struct vg_mem *mem)
{
	vg_chunk_move_t(c, to, mem, true);
}

void vg_chunk_move_batched(struct vg_chunk *c, enum vg_loc to,
			   struct vg_mem *mem)
{
	vg_chunk_move_t(c, to, mem, false);
}

void vg_hist_add(u64 hist[VGMEM_HIST_BUCKETS], u64 ns)
{
	u64 us = div64_u64(ns, NSEC_PER_USEC);
	u32 b = 0;

	/* Bucket i holds [2^i, 2^(i+1)) us; bucket 0 also below 1 us. */
	if (us)
		b = min_t(u32, ilog2(us), VGMEM_HIST_BUCKETS - 1);
	hist[b]++;
}
