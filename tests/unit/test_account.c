// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GPU and VM lifetime, configuration checks and the accounting: totals
 * exact after every operation, tail chunks, entitlements (GPUswap's equal
 * share and explicit ones), quotas, histograms, and vg_gpu_check catching
 * corrupted books.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CH	(64 * KiB)

static void test_gpu_create_validation(void **state)
{
	struct vg_gpu_config cfg = { .name = "t", .no_return_worker = true };
	struct vg_gpu_ops ops = fake_ops;
	struct fake_gpu *fb = fake_create(4 * MiB), *fb0 = fake_create(0);
	struct vg_gpu *gpu = NULL;
	static const u64 bad_chunks[] = {
		VG_CHUNK_MIN / 2, VG_CHUNK_MAX * 2, VG_CHUNK_MIN + 4096,
		3 * MiB, 1, 4096,
	};
	unsigned int i;

	(void)state;
	assert_int_equal(vg_gpu_create(NULL, &fake_ops, fb, &gpu), -EINVAL);
	assert_int_equal(vg_gpu_create(&cfg, NULL, fb, &gpu), -EINVAL);
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, NULL), -EINVAL);
	for (i = 0; i < ARRAY_SIZE(bad_chunks); i++) {
		cfg.chunk_size = bad_chunks[i];
		assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu),
				 -EINVAL);
	}
	cfg.chunk_size = 0;
	cfg.policy = VG_POLICY_NR;
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu), -EINVAL);
	cfg.policy = (enum vg_chunk_policy)-1;
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu), -EINVAL);
	cfg.policy = VG_POLICY_LRA;
	cfg.return_interval_ms = 10001;
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu), -EINVAL);
	cfg.return_interval_ms = 0;
	/* A GPU driver without VRAM is no GPU. */
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb0, &gpu), -EINVAL);
	/* Every op but sample_access is required. */
	ops.map = NULL;
	assert_int_equal(vg_gpu_create(&cfg, &ops, fb, &gpu), -EINVAL);
	ops = fake_ops;
	ops.channel_idle_wait = NULL;
	assert_int_equal(vg_gpu_create(&cfg, &ops, fb, &gpu), -EINVAL);
	assert_null(gpu);
	assert_int_equal(fake_leaks(fb), 0);

	/* 0 means the default chunk size; sampling is optional. */
	ops = fake_ops_without_sampling();
	assert_int_equal(vg_gpu_create(&cfg, &ops, fb, &gpu), 0);
	{
		struct vg_gpu_stats st;

		vg_gpu_get_stats(gpu, &st);
		assert_int_equal(st.chunk_size, VG_CHUNK_DEFAULT);
		assert_int_equal(st.vram_size, 4 * MiB);
		assert_int_equal(st.policy, VG_POLICY_LRA);
		assert_int_equal(st.nr_vms, 0);
	}
	vg_gpu_destroy(gpu);
	cfg.chunk_size = VG_CHUNK_MIN;
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu), 0);
	vg_gpu_destroy(gpu);
	cfg.chunk_size = VG_CHUNK_MAX;
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu), 0);
	vg_gpu_destroy(gpu);
	fake_destroy(fb);
	fake_destroy(fb0);
}

static void test_gpu_with_worker(void **state)
{
	struct vg_gpu_config cfg = { .name = "w", .chunk_size = CH };
	struct fake_gpu *fb = fake_create(MiB);
	struct vg_gpu *gpu;

	(void)state;
	/* The return worker starts and stops with the GPU. */
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu), 0);
	assert_non_null(gpu->return_task);
	assert_int_equal(vg_gpu_set_return_interval(gpu, 1), 0);
	vg_gpu_destroy(gpu);
	fake_destroy(fb);
}

static void test_policy_names(void **state)
{
	enum vg_chunk_policy p;
	int i;

	(void)state;
	for (i = 0; i < VG_POLICY_NR; i++) {
		assert_int_equal(vg_policy_parse(vg_policy_name(i), &p), 0);
		assert_int_equal(p, i);
	}
	assert_string_equal(vg_policy_name(VG_POLICY_RANDOM), "random");
	assert_string_equal(vg_policy_name(VG_POLICY_LRA), "lra");
	assert_string_equal(vg_policy_name(VG_POLICY_COLD), "cold");
	assert_string_equal(vg_policy_name(VG_POLICY_NR), "invalid");
	p = VG_POLICY_LRA;
	assert_int_equal(vg_policy_parse("Random", &p), -EINVAL);
	assert_int_equal(vg_policy_parse("", &p), -EINVAL);
	assert_int_equal(vg_policy_parse("lru", &p), -EINVAL);
	assert_int_equal(vg_policy_parse(NULL, &p), -EINVAL);
	assert_int_equal(p, VG_POLICY_LRA);
}

static void test_gpu_settings(void **state)
{
	struct cfx f;
	struct vg_gpu_stats st;

	(void)state;
	cfx_init(&f, MiB, CH, VG_POLICY_RANDOM);
	assert_int_equal(vg_gpu_set_policy(f.gpu, VG_POLICY_NR), -EINVAL);
	assert_int_equal(vg_gpu_set_policy(f.gpu, VG_POLICY_COLD), 0);
	vg_gpu_get_stats(f.gpu, &st);
	assert_int_equal(st.policy, VG_POLICY_COLD);
	assert_int_equal(vg_gpu_set_return_interval(f.gpu, 0), -EINVAL);
	assert_int_equal(vg_gpu_set_return_interval(f.gpu, 10001), -EINVAL);
	assert_int_equal(f.gpu->return_ms, VG_RETURN_MS_DEFAULT);
	assert_int_equal(vg_gpu_set_return_interval(f.gpu, 10000), 0);
	assert_int_equal(vg_gpu_set_return_interval(f.gpu, 1), 0);
	assert_int_equal(f.gpu->return_ms, 1);
	cfx_fini(&f);
}

/* Totals of one VM and of the GPU against expected values. */
static void expect(struct cfx *f, struct vg_vm *vm, u64 alloc, u64 res,
		   u64 rel)
{
	struct vgmem_vm_stats st = cfx_stats(vm);

	assert_int_equal(st.allocated, alloc);
	assert_int_equal(st.resident, res);
	assert_int_equal(st.relocated, rel);
	assert_int_equal(vg_gpu_check(f->gpu), 0);
}

static void test_totals_and_tail(void **state)
{
	struct cfx f;
	struct vg_vm *a, *b;
	struct vg_gpu_stats gs;
	u64 va1, va2, va3, size1 = 3 * CH + 8 * KiB;
	u8 buf[3 * 4096], back[sizeof(buf)];
	struct vg_bo *bo;
	unsigned int i;

	(void)state;
	cfx_init(&f, MiB, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	b = cfx_vm(&f, "b");
	expect(&f, a, 0, 0, 0);

	va1 = cfx_alloc(a, size1);
	assert_int_equal(va1, VGMEM_VA_START);
	expect(&f, a, size1, size1, 0);
	bo = cfx_bo(a, va1);
	assert_non_null(bo);
	assert_int_equal(bo->nr_chunks, 4);
	for (i = 0; i < 3; i++)
		assert_int_equal(bo->chunks[i].size, CH);
	assert_int_equal(bo->chunks[3].size, 8 * KiB);
	assert_int_equal(fake_mem_size(bo->chunks[3].mem), 8 * KiB);
	assert_int_equal(fake_vram_used(f.fb), size1);
	assert_int_equal(fake_as_nr_maps(a->as), 4);
	assert_false(fake_as_tlb_dirty(a->as));

	/* Every byte is reachable through the GPU VA, and nothing past it. */
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 7 + 1);
	assert_int_equal(fake_va_rw(f.fb, a->as, va1 + 3 * CH - 4096, buf,
				    sizeof(buf), true), 0);
	assert_int_equal(fake_va_rw(f.fb, a->as, va1 + 3 * CH - 4096, back,
				    sizeof(back), false), 0);
	assert_memory_equal(buf, back, sizeof(buf));
	assert_int_equal(fake_va_rw(f.fb, a->as, va1 + size1 - 8, back, 16,
				    false), -EFAULT);

	va2 = cfx_alloc(b, 4096);
	va3 = cfx_alloc(a, CH);
	/* VAs are chunk aligned and first fit. */
	assert_int_equal(va2, VGMEM_VA_START);
	assert_int_equal(va3, VGMEM_VA_START + 4 * CH);
	expect(&f, a, size1 + CH, size1 + CH, 0);
	expect(&f, b, 4096, 4096, 0);
	vg_gpu_get_stats(f.gpu, &gs);
	assert_int_equal(gs.vram_used, size1 + CH + 4096);
	assert_int_equal(gs.host_used, 0);
	assert_int_equal(gs.nr_vms, 2);
	assert_int_equal(fake_vram_used(f.fb), gs.vram_used);

	assert_int_equal(vg_bo_free(a, va1), 0);
	expect(&f, a, CH, CH, 0);
	assert_int_equal(fake_as_nr_maps(a->as), 1);
	assert_false(fake_as_tlb_dirty(a->as));
	assert_int_equal(fake_va_rw(f.fb, a->as, va1, back, 8, false), -EFAULT);
	assert_int_equal(vg_bo_free(a, va1), -ENOENT);
	assert_int_equal(vg_bo_free(a, va3), 0);
	assert_int_equal(vg_bo_free(b, va2), 0);
	expect(&f, a, 0, 0, 0);
	expect(&f, b, 0, 0, 0);
	assert_int_equal(fake_vram_used(f.fb), 0);
	/* One allocation stall recorded per successful BO. */
	assert_int_equal(cfx_hist_sum(cfx_stats(a).stall_hist), 2);
	vg_gpu_get_stats(f.gpu, &gs);
	assert_int_equal(cfx_hist_sum(gs.stall_hist), 3);
	cfx_fini(&f);
}

static void test_entitlement(void **state)
{
	struct cfx f;
	struct vg_vm *v0, *v1, *v2;
	const u64 vram = 64 * MiB;

	(void)state;
	cfx_init(&f, vram, CH, VG_POLICY_LRA);
	v0 = cfx_vm(&f, "v0");
	assert_int_equal(cfx_stats(v0).entitlement, vram);
	v1 = cfx_vm(&f, "v1");
	v2 = cfx_vm(&f, "v2");
	/* GPUswap: an equal share each (rounded down). */
	assert_int_equal(cfx_stats(v0).entitlement, vram / 3);
	assert_int_equal(cfx_stats(v2).entitlement, vram / 3);

	/* Explicit ones first; the rest share what is left. */
	assert_int_equal(vg_vm_set_entitlement(v0, 32 * MiB), 0);
	assert_int_equal(cfx_stats(v0).entitlement, 32 * MiB);
	assert_int_equal(cfx_stats(v1).entitlement, 16 * MiB);
	assert_int_equal(cfx_stats(v2).entitlement, 16 * MiB);
	assert_int_equal(vg_vm_set_entitlement(v1, 8 * MiB), 0);
	assert_int_equal(cfx_stats(v2).entitlement, 24 * MiB);
	assert_int_equal(vg_gpu_check(f.gpu), 0);

	/* More than VRAM alone is rejected and changes nothing. */
	assert_int_equal(vg_vm_set_entitlement(v1, vram + 1), -EINVAL);
	assert_int_equal(cfx_stats(v1).entitlement, 8 * MiB);

	/* Explicit ones adding up to VRAM leave nothing to share. */
	assert_int_equal(vg_vm_set_entitlement(v1, 32 * MiB), 0);
	assert_int_equal(cfx_stats(v2).entitlement, 0);
	assert_int_equal(vg_vm_set_entitlement(v1, vram), 0);
	assert_int_equal(cfx_stats(v2).entitlement, 0);

	/* 0 returns to the equal share. */
	assert_int_equal(vg_vm_set_entitlement(v0, 0), 0);
	assert_int_equal(vg_vm_set_entitlement(v1, 0), 0);
	assert_int_equal(cfx_stats(v1).entitlement, vram / 3);
	assert_int_equal(vg_vm_set_entitlement(v2, 4 * MiB), 0);
	assert_int_equal(vg_gpu_check(f.gpu), 0);

	/* A VM that goes away gives its share back. */
	vg_vm_destroy(v2);
	f.nvm--;
	assert_int_equal(cfx_stats(v0).entitlement, vram / 2);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

static void test_quota(void **state)
{
	struct cfx f;
	struct vg_vm *a;
	u64 va = 0, va2;

	(void)state;
	cfx_init(&f, MiB, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	assert_int_equal(vg_vm_set_quota(a, 4 * CH), 0);
	assert_int_equal(cfx_stats(a).quota, 4 * CH);
	/* Over quota: -ENOSPC, nothing allocated. */
	assert_int_equal(vg_bo_alloc(a, 4 * CH + 4096, 0, &va), -ENOSPC);
	va = cfx_alloc(a, 3 * CH);
	assert_int_equal(vg_bo_alloc(a, CH + 4096, 0, &va2), -ENOSPC);
	va2 = cfx_alloc(a, CH);
	expect(&f, a, 4 * CH, 4 * CH, 0);
	/* Below what it holds: -EBUSY. */
	assert_int_equal(vg_vm_set_quota(a, 3 * CH), -EBUSY);
	assert_int_equal(cfx_stats(a).quota, 4 * CH);
	assert_int_equal(vg_vm_set_quota(a, 4 * CH), 0);
	assert_int_equal(vg_bo_free(a, va2), 0);
	assert_int_equal(vg_vm_set_quota(a, 3 * CH), 0);
	/* 0: unlimited. */
	assert_int_equal(vg_vm_set_quota(a, 0), 0);
	va2 = cfx_alloc(a, 8 * CH);
	expect(&f, a, 11 * CH, 11 * CH, 0);
	(void)va;
	cfx_fini(&f);
}

static void test_vm_create_destroy(void **state)
{
	struct cfx f;
	struct vg_vm_config cfg = { .name = NULL };
	struct vg_vm *vm, *bad = NULL;
	struct vg_gpu_stats gs;

	(void)state;
	cfx_init(&f, MiB, CH, VG_POLICY_LRA);
	assert_int_equal(vg_vm_create(f.gpu, NULL, &bad), -EINVAL);
	assert_int_equal(vg_vm_create(NULL, &cfg, &bad), -EINVAL);
	/* Half a guest memory accessor is rejected. */
	cfg.gmem.read = (void *)1;
	assert_int_equal(vg_vm_create(f.gpu, &cfg, &bad), -EINVAL);
	cfg.gmem.read = NULL;
	/* The GPU driver failing to make an address space fails the create. */
	fake_fail(f.fb, FAKE_OP_AS_CREATE, 1);
	assert_int_equal(vg_vm_create(f.gpu, &cfg, &bad), -ENOMEM);
	assert_null(bad);
	vg_gpu_get_stats(f.gpu, &gs);
	assert_int_equal(gs.nr_vms, 0);

	/* An unnamed VM gets one. */
	assert_int_equal(vg_vm_create(f.gpu, &cfg, &vm), 0);
	assert_true(strlen(vg_vm_name(vm)) > 0);
	assert_ptr_equal(vg_vm_gpu_as(vm), vm->as);
	/* Destroy frees its BOs, whatever their location. */
	cfx_alloc(vm, 5 * CH);
	cfx_alloc(vm, 4096);
	vg_vm_destroy(vm);
	vg_gpu_get_stats(f.gpu, &gs);
	assert_int_equal(gs.nr_vms, 0);
	assert_int_equal(gs.vram_used, 0);
	assert_int_equal(fake_leaks(f.fb), 0);
	cfx_fini(&f);
}

static void test_hist(void **state)
{
	u64 h[VGMEM_HIST_BUCKETS];

	(void)state;
	memset(h, 0, sizeof(h));
	vg_hist_add(h, 0);
	vg_hist_add(h, 999);		/* < 1 us */
	vg_hist_add(h, 1000);		/* 1 us */
	vg_hist_add(h, 1999);
	assert_int_equal(h[0], 4);
	vg_hist_add(h, 2000);		/* [2, 4) us */
	vg_hist_add(h, 3999);
	assert_int_equal(h[1], 2);
	vg_hist_add(h, 4000);
	assert_int_equal(h[2], 1);
	vg_hist_add(h, 1024 * 1000);	/* 1024 us */
	assert_int_equal(h[10], 1);
	vg_hist_add(h, ~0ull);		/* clamped to the last bucket */
	vg_hist_add(h, (1ull << 23) * 1000);
	assert_int_equal(h[VGMEM_HIST_BUCKETS - 1], 2);
	assert_int_equal(cfx_hist_sum(h), 10);
}

/* vg_gpu_check finds books that disagree with the lists. */
static void test_check_catches(void **state)
{
	struct vg_va_node stray = { 0 };
	struct cfx f;
	struct vg_vm *a;
	struct vg_bo *bo;
	struct vg_chunk *c;
	u64 va;

	(void)state;
	cfx_init(&f, MiB, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	va = cfx_alloc(a, 3 * CH);
	bo = cfx_bo(a, va);
	assert_int_equal(vg_gpu_check(f.gpu), 0);

	a->resident += 4096;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	a->resident -= 4096;
	f.gpu->vram_used++;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	f.gpu->vram_used--;
	a->allocated--;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	a->allocated++;
	c = &bo->chunks[1];
	c->slot ^= 1;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	c->slot ^= 1;
	c->loc = VG_LOC_HOST;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	c->loc = VG_LOC_VRAM;
	c->marked = true;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	c->marked = false;
	f.gpu->nr_ent_equal++;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	f.gpu->nr_ent_equal--;
	/* Placement order is part of the books (LRA relies on it). */
	bo->chunks[0].placed_seq = bo->chunks[2].placed_seq + 1;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	bo->chunks[0].placed_seq = 1;
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	/* The VA index: its own invariants, and that it holds the BOs. */
	bo->va_node.max_gap += CH;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	bo->va_node.max_gap -= CH;
	a->va.count++;
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	a->va.count--;
	vg_va_remove(&a->va, &bo->va_node);
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	vg_va_insert(&a->va, &bo->va_node);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	/* A node where no BO is. */
	stray.start = va + 8 * CH;
	stray.end = va + 9 * CH;
	vg_va_insert(&a->va, &stray);
	assert_int_equal(vg_gpu_check(f.gpu), -EIO);
	vg_va_remove(&a->va, &stray);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

/* The accounting primitives keep res_vec and the lists in step. */
static void test_chunk_move(void **state)
{
	struct cfx f;
	struct vg_vm *a;
	struct vg_bo *bo;
	struct vg_mem *m, *old;
	u64 va;
	u32 i;

	(void)state;
	cfx_init(&f, MiB, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	va = cfx_alloc(a, 4 * CH);
	bo = cfx_bo(a, va);
	mutex_lock(&f.gpu->lock);
	for (i = 0; i < 4; i += 2) {
		/* What relocate.c does, minus the copy and the PTEs. */
		assert_int_equal(f.gpu->ops->mem_alloc(f.fb, VG_LOC_HOST, CH,
						       &m), 0);
		old = bo->chunks[i].mem;
		vg_chunk_mark(&bo->chunks[i]);
		f.gpu->ops->unmap(f.fb, a->as, va + i * CH, CH);
		f.gpu->ops->mem_free(f.fb, old);
		vg_chunk_move(&bo->chunks[i], VG_LOC_HOST, m);
		vg_chunk_unmark(&bo->chunks[i]);
		assert_int_equal(f.gpu->ops->map(f.fb, a->as, va + i * CH, CH,
						 m, 0), 0);
	}
	f.gpu->ops->tlb_flush(f.fb, a->as);
	mutex_unlock(&f.gpu->lock);
	expect(&f, a, 4 * CH, 2 * CH, 2 * CH);
	assert_int_equal(a->res_nr, 2);
	assert_int_equal(cfx_nloc(a, va, VG_LOC_HOST), 2);

	/* Back into VRAM: placed again, so it is now the most recent. */
	mutex_lock(&f.gpu->lock);
	assert_int_equal(f.gpu->ops->mem_alloc(f.fb, VG_LOC_VRAM, CH, &m), 0);
	old = bo->chunks[0].mem;
	f.gpu->ops->unmap(f.fb, a->as, va, CH);
	f.gpu->ops->mem_free(f.fb, old);
	vg_chunk_move(&bo->chunks[0], VG_LOC_VRAM, m);
	assert_int_equal(f.gpu->ops->map(f.fb, a->as, va, CH, m, 0), 0);
	f.gpu->ops->tlb_flush(f.fb, a->as);
	mutex_unlock(&f.gpu->lock);
	assert_ptr_equal(list_last_entry(&a->resident_list, struct vg_chunk,
					 node), &bo->chunks[0]);
	expect(&f, a, 4 * CH, 3 * CH, CH);
	assert_int_equal(vg_bo_free(a, va), 0);
	expect(&f, a, 0, 0, 0);
	assert_int_equal(fake_host_used(f.fb), 0);
	cfx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_create_validation),
		cmocka_unit_test(test_gpu_with_worker),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_gpu_settings),
		cmocka_unit_test(test_totals_and_tail),
		cmocka_unit_test(test_entitlement),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_vm_create_destroy),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_check_catches),
		cmocka_unit_test(test_chunk_move),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
