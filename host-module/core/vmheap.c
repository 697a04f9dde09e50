// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The standing heap (struct vg_gpu, vmh; its invariants next to it): every
 * VM by its key, the resident bytes above its entitlement, kept between
 * reductions so that a reduction need not rank every VM anew. account.c
 * and relocate.c move a VM in it whenever its resident bytes change
 * (vg_vmh_moved(): once per chunk placed or removed, once per VM
 * relocated); vm.c moves it as VMs come and entitlements change
 * (vg_vmh_added(), vg_vmh_ent_set()) where the others' order holds, and
 * otherwise invalidates it, and the next reduction rebuilds it
 * (vg_vmh_build()). The reducer only reads it,
 * walking it from its root, best first (reducer.c). Its entries: struct
 * vg_vmh_ent.
 */
#include "vg_internal.h"

/*
 * Sift the entry at i up or down to its place. The entry moves as a hole:
 * each entry it passes is written once, with its VM's index.
 *
 * vg_vmh_rise() puts e in the hole at i or above it, no higher than top.
 */
static __always_inline void vg_vmh_rise(struct vg_gpu *gpu, u32 i, u32 top,
					struct vg_vmh_ent e)
{
	struct vg_vmh_ent *h = gpu->vmh;

	while (i != top) {
		u32 parent = (i - 1) / 2;

		if (!vg_vmh_above(&e, &h[parent]))
			break;
		h[i] = h[parent];
		gpu->vmh_pos[h[i].slot] = i;
		i = parent;
	}
	h[i] = e;
	gpu->vmh_pos[e.slot] = i;
}

static void vg_vmh_up(struct vg_gpu *gpu, u32 i)
{
	vg_vmh_rise(gpu, i, 0, gpu->vmh[i]);
}

static void vg_vmh_down(struct vg_gpu *gpu, u32 i)
{
	struct vg_vmh_ent *h = gpu->vmh, e = h[i];
	u32 n = gpu->vmh_n;

	for (;;) {
		u32 best = 2 * i + 1;

		if (best >= n)
			break;
		if (best + 1 < n && vg_vmh_above(&h[best + 1], &h[best]))
			best++;
		if (!vg_vmh_above(&h[best], &e))
			break;
		h[i] = h[best];
		gpu->vmh_pos[h[i].slot] = i;
		i = best;
	}
	h[i] = e;
	gpu->vmh_pos[e.slot] = i;
}

/*
 * Entry i's key just dropped: sink it. A victim gives a chunk and its key
 * drops below those of VMs that gave none; with many VMs at equal keys
 * (VMs of one size, each at its share) it sinks to a leaf, and
 * vg_vmh_down() compares it against the better child at every level.
 * Here the hole goes down to a leaf along the better children first
 * (one comparison a level), then the entry rises from there to its place
 * (none when it belongs at the leaf): Floyd's bottom-up sift, as in
 * heapsort. The construction keeps vg_vmh_down(): its entries mostly
 * stop near where they start.
 */
static void vg_vmh_sink(struct vg_gpu *gpu, u32 i)
{
	struct vg_vmh_ent *h = gpu->vmh, e = h[i];
	u32 n = gpu->vmh_n, top = i;

	for (;;) {
		u32 best = 2 * i + 1;

		if (best >= n)
			break;
		if (best + 1 < n && vg_vmh_above(&h[best + 1], &h[best]))
			best++;
		h[i] = h[best];
		gpu->vmh_pos[h[i].slot] = i;
		i = best;
	}
	vg_vmh_rise(gpu, i, top, e);
}

/* vg_vmh_moved()'s part out of line: entry i's key moves by delta. */
void vg_vmh_fix(struct vg_gpu *gpu, u32 i, s64 delta)
{
	gpu->vmh[i].key += delta;
	if (delta > 0)
		vg_vmh_up(gpu, i);
	else
		vg_vmh_sink(gpu, i);
}

/*
 * A VM created or an entitlement set moves the equal share, and with it
 * the key of every VM without an explicit entitlement, while the keys of
 * VMs with one stay. Among the VMs other than vm, the order therefore
 * holds when all have an explicit entitlement (no key moves) or none has
 * (all move by the same amount, ties still broken by slot); then only
 * vm's own entry needs a sift. A mix would need every key re-ranked.
 */
static bool vg_vmh_others_in_order(const struct vg_gpu *gpu,
				   const struct vg_vm *vm)
{
	u32 others_equal = gpu->nr_ent_equal - !vm->entitlement;

	return !others_equal || others_equal == gpu->nr_vms - 1;
}

/* Every key by d (the others' order holds: vg_vmh_others_in_order()). */
static void vg_vmh_shift(struct vg_gpu *gpu, s64 d)
{
	u32 i;

	if (d)
		for (i = 0; i < gpu->vmh_n; i++)
			gpu->vmh[i].key += d;
}

/*
 * vm is the tail of gpu->vms, counted in nr_vms and nr_ent_equal: its
 * slot is the next rank, so the slots keep creation order.
 */
void vg_vmh_added(struct vg_gpu *gpu, struct vg_vm *vm, u64 old_equal)
{
	u64 equal;
	u32 n;

	lockdep_assert_held(&gpu->lock);
	/* The heap of no VM is in force without being built. */
	if (gpu->nr_vms == 1) {
		gpu->vmh_n = 0;
		gpu->vmh_valid = true;
	}
	if (!gpu->vmh_valid)
		return;
	n = gpu->vmh_n;
	if (WARN_ON_ONCE(vm->entitlement || n + 1 != gpu->nr_vms) ||
	    !vg_vmh_others_in_order(gpu, vm) || vg_red_reserve(gpu)) {
		vg_vmh_invalidate(gpu);
		return;
	}
	equal = vg_gpu_equal_share(gpu);
	/* The others are all equal ones (or none is: nr_ent_equal == 1). */
	if (gpu->nr_ent_equal > 1)
		vg_vmh_shift(gpu, (s64)old_equal - (s64)equal);
	gpu->vmh[n].key = (s64)vm->resident - (s64)equal;
	gpu->vmh[n].slot = n;
	vm->vmh_slot = n;
	gpu->vmh_vm[n] = vm;
	gpu->vmh_pos[n] = n;
	gpu->vmh_n = n + 1;
	vg_vmh_up(gpu, n);
}

void vg_vmh_ent_set(struct vg_gpu *gpu, struct vg_vm *vm, u64 old_ent,
		    u64 old_equal)
{
	u64 equal, was, now;
	s64 d = 0;

	lockdep_assert_held(&gpu->lock);
	if (!gpu->vmh_valid)
		return;
	if (!vg_vmh_others_in_order(gpu, vm)) {
		vg_vmh_invalidate(gpu);
		return;
	}
	equal = vg_gpu_equal_share(gpu);
	was = old_ent ? old_ent : old_equal;
	now = vm->entitlement ? vm->entitlement : equal;
	/* The others without an entitlement, if any, are all the others. */
	if (gpu->nr_ent_equal - !vm->entitlement) {
		d = (s64)old_equal - (s64)equal;
		vg_vmh_shift(gpu, d);
	}
	/* vm's key moves by was - now in all; the shift moved it by d. */
	if ((s64)was - (s64)now != d)
		vg_vmh_fix(gpu, gpu->vmh_pos[vm->vmh_slot],
			   (s64)was - (s64)now - d);
}

void vg_vmh_invalidate(struct vg_gpu *gpu)
{
	lockdep_assert_held(&gpu->lock);
	gpu->vmh_valid = false;
}

/* Every VM's key from scratch, then Floyd's O(V) heap construction. */
void vg_vmh_build(struct vg_gpu *gpu)
{
	u64 equal = vg_gpu_equal_share(gpu);
	struct vg_vm *vm;
	u32 i, n = 0;

	list_for_each_entry(vm, &gpu->vms, node) {
		struct vg_vmh_ent *e = &gpu->vmh[n];

		/* As vg_vm_entitlement() warns: VMs without one are equal ones. */
		WARN_ON_ONCE(!vm->entitlement && !gpu->nr_ent_equal);
		e->key = (s64)vm->resident -
			 (s64)(vm->entitlement ? vm->entitlement : equal);
		e->slot = n;
		vm->vmh_slot = n;
		gpu->vmh_vm[n] = vm;
		gpu->vmh_pos[n] = n;
		n++;
	}
	gpu->vmh_n = n;
	for (i = n / 2; i-- > 0;)
		vg_vmh_down(gpu, i);
	gpu->vmh_valid = true;
}

int vg_vmh_check(struct vg_gpu *gpu)
{
	u64 equal = vg_gpu_equal_share(gpu);
	struct vg_vm *vm;
	u32 i;

	lockdep_assert_held(&gpu->lock);
	if (!gpu->vmh_valid)
		return 0;
	VG_CHECK(gpu->vmh_n == gpu->nr_vms, "standing heap holds %u of %u vms",
		 gpu->vmh_n, gpu->nr_vms);
	for (i = 0; i < gpu->vmh_n; i++) {
		const struct vg_vmh_ent *e = &gpu->vmh[i];
		u64 ent;

		VG_CHECK(e->slot < gpu->vmh_n && gpu->vmh_pos[e->slot] == i,
			 "standing heap entry %u: slot %u, index %u", i, e->slot,
			 e->slot < gpu->vmh_n ? gpu->vmh_pos[e->slot] : 0);
		vm = gpu->vmh_vm[e->slot];
		ent = vm->entitlement ? vm->entitlement : equal;
		VG_CHECK(vm->vmh_slot == e->slot, "%s: slot %u, entry's %u",
			 vm->name, vm->vmh_slot, e->slot);
		VG_CHECK(e->key == (s64)vm->resident - (s64)ent,
			 "%s: standing key %lld, resident %llu entitlement %llu",
			 vm->name, (long long)e->key,
			 (unsigned long long)vm->resident,
			 (unsigned long long)ent);
		VG_CHECK(!i || !vg_vmh_above(e, &gpu->vmh[(i - 1) / 2]),
			 "%s: standing heap out of order at %u", vm->name, i);
	}
	/*
	 * With vmh_n == nr_vms and every entry's index pointing back, the
	 * entries hold distinct slots; each listed VM found at its slot, in
	 * list order (the tie-break), makes it every VM, none destroyed.
	 */
	i = 0;
	list_for_each_entry(vm, &gpu->vms, node) {
		VG_CHECK(vm->vmh_slot == i && gpu->vmh_vm[i] == vm,
			 "%s: slot %u, not its rank %u in the standing heap",
			 vm->name, vm->vmh_slot, i);
		i++;
	}
	return 0;
}
