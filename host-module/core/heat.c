// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Chunk heat (the COLD policy): the GPU driver's access sampling turned
 * into each chunk's heat, the round it was last seen accessed (touched)
 * and its period (vg_chunk_seen()). The reducer ranks resident chunks by
 * it (reducer.c, vg_cold_before()), the return worker relocated ones
 * (return.c). gpu->lock held throughout.
 */
#include "vg_internal.h"

/*
 * Heat is the accesses sampled since the last ageing plus half the heat
 * before it. Ageing happens at a fixed cadence only (vg_sample_heat(),
 * from the return worker): if every reduction aged it too, heat would
 * decay with the allocation rate, and under pressure (many reductions
 * between two accesses) every chunk would look cold. A sample that saw
 * accesses also stamps the chunk with the current round (touched).
 */
static void vg_heat_collect(struct vg_vm *vm, bool age)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chunk *c;
	u32 k = 0;

	if (!gpu->ops->sample_access)
		return;
	list_for_each_entry(c, &vm->resident_list, node) {
		u64 n = gpu->ops->sample_access(gpu->drv, c->mem);

		c->heat = (age ? c->heat / 2 : c->heat) + n;
		if (n)
			vg_chunk_seen(c, gpu->heat_clock, n);
		vg_resched_every(&k);
	}
}

void vg_sample_heat_vm(struct vg_vm *vm)
{
	lockdep_assert_held(&vm->gpu->lock);
	vg_heat_collect(vm, false);
}

void vg_sample_heat(struct vg_gpu *gpu)
{
	struct vg_vm *vm;

	lockdep_assert_held(&gpu->lock);
	gpu->heat_clock++;
	list_for_each_entry(vm, &gpu->vms, node)
		vg_heat_collect(vm, true);
}

/*
 * vg_sample_heat() covers resident chunks (what the reducer ranks); the
 * relocated ones are what the return worker ranks (return.c), and their
 * accesses over PCIe are the ones worth counting. The same decay; the
 * return worker calls it right after vg_sample_heat(), in the same round.
 */
void vg_sample_heat_relocated(struct vg_gpu *gpu)
{
	struct vg_vm *vm;
	struct vg_chunk *c;
	u32 k = 0;

	lockdep_assert_held(&gpu->lock);
	if (!gpu->ops->sample_access)
		return;
	list_for_each_entry(vm, &gpu->vms, node) {
		list_for_each_entry(c, &vm->relocated_list, node) {
			u64 n = gpu->ops->sample_access(gpu->drv, c->mem);

			/* The round vg_sample_heat() just started. */
			c->heat = c->heat / 2 + n;
			if (n) {
				c->host_streak = c->touched + 1 == gpu->heat_clock ?
						 c->host_streak + (c->host_streak < U8_MAX) : 1;
				vg_chunk_seen(c, gpu->heat_clock, n);
			}
			vg_resched_every(&k);
		}
	}
}
