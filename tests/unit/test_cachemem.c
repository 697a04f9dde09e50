// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The GPU as the file cache uses it (core/cachemem.c), on the fake
 * GPU driver: the VRAM the cache takes is free VRAM only and counted to the
 * GPU and the writing VM, given back to whoever still exists, and a file
 * map's VA shares the VM's index with its BOs. (The page-table calls need
 * a GPU driver with protect and fault ranges: the LRC tests run them on the
 * software GPU.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "core_fixture.h"
#include "host-module/sim/sim.h"

#define GP	(64 * KiB)

static u64 cache_used(struct cfx *f)
{
	struct vg_gpu_stats st;

	vg_gpu_get_stats(f->gpu, &st);
	return st.cache_used;
}

/* Taken VRAM is the GPU's and the VM's; given back, it is neither's. */
static void test_vram_charged_and_uncharged(void **state)
{
	struct vg_cache_charge c1, c2;
	struct vg_mem *m1, *m2;
	struct vg_vm *vm;
	struct cfx f;

	(void)state;
	cfx_init(&f, 8 * MiB, 2 * MiB, VG_POLICY_LRA);
	vm = cfx_vm(&f, "writer");
	assert_int_equal(vg_gpu_cache_vram_get(f.gpu, vm, GP, &m1, &c1), 0);
	assert_int_equal(vg_gpu_cache_vram_get(f.gpu, NULL, GP, &m2, &c2), 0);
	assert_true(c1.vm);
	assert_false(c2.vm);
	assert_int_equal(fake_mem_loc(m1), VG_LOC_VRAM);
	assert_int_equal(cache_used(&f), 2 * GP);
	assert_int_equal(vg_vm_cache_private(vm), GP);
	assert_int_equal(fake_vram_used(f.fb), 2 * GP);

	vg_gpu_cache_vram_put(f.gpu, m1, GP, &c1);
	assert_false(c1.vm);
	assert_int_equal(cache_used(&f), GP);
	assert_int_equal(vg_vm_cache_private(vm), 0);
	vg_gpu_cache_vram_put(f.gpu, m2, GP, &c2);
	assert_int_equal(cache_used(&f), 0);
	assert_int_equal(fake_vram_used(f.fb), 0);
	cfx_fini(&f);
}

/* Never VRAM a BO holds: -ENOSPC, and nothing is taken or counted. */
static void test_vram_only_what_is_free(void **state)
{
	struct vg_cache_charge c;
	struct vg_mem *m = NULL;
	struct vg_vm *vm;
	struct cfx f;
	u64 va;

	(void)state;
	cfx_init(&f, 8 * MiB, 2 * MiB, VG_POLICY_LRA);
	vm = cfx_vm(&f, "full");
	assert_int_equal(vg_bo_alloc(vm, 8 * MiB, 0, &va), 0);
	assert_int_equal(vg_gpu_cache_vram_get(f.gpu, vm, GP, &m, &c),
			 -ENOSPC);
	assert_null(m);
	assert_int_equal(cache_used(&f), 0);
	assert_int_equal(vg_vm_cache_private(vm), 0);
	assert_int_equal(fake_vram_used(f.fb), 8 * MiB);

	/* Free by the count but not in the GPU driver: an error, not "full". */
	assert_int_equal(vg_bo_free(vm, va), 0);
	fake_fail_errno(f.fb, FAKE_OP_MEM_ALLOC_VRAM, 1, -ENOSPC);
	assert_int_equal(vg_gpu_cache_vram_get(f.gpu, vm, GP, &m, &c),
			 -ENOMEM);
	fake_fail_clear(f.fb);
	assert_int_equal(cache_used(&f), 0);
	cfx_fini(&f);
}

/*
 * A replica may outlive the VM it was charged to (a failed merge keeps
 * it): giving it back then uncharges the GPU and touches no VM, not even
 * a new one (ASan sees a use of the old VM).
 */
static void test_vram_put_after_vm_gone(void **state)
{
	struct vg_vm_config cfg = { .name = "gone" };
	struct vg_cache_charge c;
	struct vg_vm *vm, *next;
	struct vg_mem *m;
	struct cfx f;

	(void)state;
	cfx_init(&f, 8 * MiB, 2 * MiB, VG_POLICY_LRA);
	assert_int_equal(vg_vm_create(f.gpu, &cfg, &vm), 0);
	assert_int_equal(vg_gpu_cache_vram_get(f.gpu, vm, GP, &m, &c), 0);
	vg_vm_destroy(vm);
	next = cfx_vm(&f, "next");
	vg_gpu_cache_vram_put(f.gpu, m, GP, &c);
	assert_int_equal(cache_used(&f), 0);
	assert_int_equal(vg_vm_cache_private(next), 0);
	cfx_fini(&f);
}

static void test_host_mem(void **state)
{
	struct vg_mem *m;
	struct cfx f;
	void *cpu;

	(void)state;
	cfx_init(&f, 8 * MiB, 2 * MiB, VG_POLICY_LRA);
	/* The fake has no mem_host_addr: asking for a CPU address fails. */
	assert_int_equal(vg_gpu_host_mem_alloc(f.gpu, 4 * GP, &m, &cpu),
			 -ENODEV);
	assert_int_equal(fake_host_used(f.fb), 0);
	assert_int_equal(vg_gpu_host_mem_alloc(f.gpu, 4 * GP, &m, NULL), 0);
	assert_int_equal(fake_mem_loc(m), VG_LOC_HOST);
	assert_int_equal(fake_host_used(f.fb), 4 * GP);
	/* Host RAM is not VRAM: no VRAM counted anywhere. */
	assert_int_equal(cache_used(&f), 0);
	assert_int_equal(fake_vram_used(f.fb), 0);
	vg_gpu_host_mem_free(f.gpu, m);
	assert_int_equal(fake_host_used(f.fb), 0);

	fake_fail(f.fb, FAKE_OP_MEM_ALLOC_HOST, 1);
	m = NULL;
	assert_int_not_equal(vg_gpu_host_mem_alloc(f.gpu, GP, &m, NULL), 0);
	assert_null(m);
	fake_fail_clear(f.fb);
	cfx_fini(&f);
}

static int fault_never(void *priv, const struct vg_gpu_fault *fault)
{
	(void)priv;
	(void)fault;
	fail_msg("no fault was raised");
	return -EFAULT;
}

/*
 * A map's VA is in the VM's index: BOs go around it, and get it back. On
 * the software GPU, which has fault ranges and page protection.
 */
static void test_file_va_and_ptes(void **state)
{
	struct vg_sim_config scfg = { .vram_size = 8 * MiB };
	struct vg_gpu_config cfg = { .name = "sim", .chunk_size = 2 * MiB,
				     .seed = 1, .no_return_worker = true };
	struct vg_vm_config vcfg = { .name = "maps" };
	struct vg_cache_charge c;
	struct vg_va_node node;
	struct vg_fault_reg *reg;
	struct vg_fault_stats fs;
	u64 start, end, align, va;
	unsigned long warns = os_warn_count();
	u8 buf[16];
	struct vg_mem *m;
	struct vg_sim *sim;
	struct vg_gpu *gpu;
	struct vg_vm *vm;

	(void)state;
	assert_int_equal(vg_sim_create(&scfg, &sim), 0);
	assert_int_equal(vg_gpu_create(&cfg, vg_sim_gpu_ops(), sim, &gpu),
			 0);
	assert_true(vg_gpu_can_map_files(gpu));
	assert_int_equal(vg_vm_create(gpu, &vcfg, &vm), 0);
	vg_vm_va_bounds(vm, &start, &end, &align);
	assert_int_equal(start, VGMEM_VA_START);
	assert_int_equal(end, VGMEM_VA_END);
	assert_int_equal(align, 2 * MiB);
	memset(&node, 0, sizeof(node));
	assert_int_equal(vg_vm_file_va_get(vm, 4 * MiB, &node, fault_never,
					   NULL, &reg), 0);
	assert_true(node.file);
	assert_int_equal(node.start, VGMEM_VA_START);
	assert_int_equal(node.end, VGMEM_VA_START + 4 * MiB);
	vg_fault_get_stats(gpu, &fs);
	assert_int_equal(fs.ranges, 1);
	/* The first BO goes after the map; a fixed one on it is refused. */
	assert_int_equal(vg_bo_alloc(vm, 2 * MiB, 0, &va), 0);
	assert_true(va >= node.end);
	assert_int_equal(vg_bo_free(vm, va), 0);
	va = node.start;
	assert_int_not_equal(vg_bo_alloc(vm, 2 * MiB, VGMEM_BO_FIXED_VA, &va),
			     0);

	/* A page of cache VRAM mapped there is readable, then gone. */
	assert_int_equal(vg_gpu_cache_vram_get(gpu, vm, GP, &m, &c), 0);
	assert_int_equal(vg_vm_file_map(vm, node.start, GP, m, 1), 0);
	assert_int_equal(vg_vm_file_protect(vm, node.start, GP, 0), 0);
	assert_int_equal(vg_sim_read_va(sim, vg_vm_gpu_as(vm), node.start,
					buf, sizeof(buf)), 0);
	vg_vm_file_unmap(vm, node.start, GP);
	assert_int_not_equal(vg_sim_read_va(sim, vg_vm_gpu_as(vm),
					    node.start, buf, sizeof(buf)), 0);
	vg_gpu_cache_vram_put(gpu, m, GP, &c);

	vg_vm_file_va_put(vm, &node, reg);
	vg_fault_get_stats(gpu, &fs);
	assert_int_equal(fs.ranges, 0);
	assert_int_equal(vg_bo_alloc(vm, 2 * MiB, 0, &va), 0);
	assert_int_equal(va, VGMEM_VA_START);
	assert_int_equal(vg_gpu_check(gpu), 0);
	vg_vm_destroy(vm);
	vg_gpu_destroy(gpu);
	vg_sim_destroy(sim);
	assert_int_equal(os_warn_count(), warns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vram_charged_and_uncharged),
		cmocka_unit_test(test_vram_only_what_is_free),
		cmocka_unit_test(test_vram_put_after_vm_gone),
		cmocka_unit_test(test_host_mem),
		cmocka_unit_test(test_file_va_and_ptes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
