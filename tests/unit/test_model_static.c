// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The static model (fixed partitions, vGPU profiles / MIG): a VM is admitted
 * only while every partition fits in VRAM, and a BO past the partition
 * fails; nothing ever moves.
 */
#include "model_fixture.h"

static void test_static_admission_stops_at_vram(void **state)
{
	struct vg_host *h = mf_host("static", 64 * MiB);
	struct vg_host_guest *a, *b, *c;
	struct vg_model_gpu_stats gs;

	(void)state;
	a = mf_vm(h, "a", 32 * MiB);
	b = mf_vm(h, "b", 24 * MiB);
	/* 8 MiB left: exactly 8 MiB fits, one page more does not. */
	assert_int_equal(mf_admit(h, "c", 8 * MiB + 4 * KiB, &c), -ENOSPC);
	assert_null(c);
	/* Unlimited is no partition at all. */
	assert_int_equal(mf_admit(h, "d", 0, &c), -ENOSPC);
	c = mf_vm(h, "c", 8 * MiB);
	assert_int_equal(mf_admit(h, "e", 4 * KiB, &c), -ENOSPC);

	gs = mf_gstats(h);
	assert_int_equal(gs.vms, 3);
	assert_int_equal(gs.vms_admitted, 3);
	assert_int_equal(gs.vms_refused, 3);
	assert_int_equal(gs.quota_sum, 64 * MiB);

	/* A VM leaving gives its partition back. */
	vg_host_guest_destroy(b);
	c = mf_vm(h, "f", 24 * MiB);
	gs = mf_gstats(h);
	assert_int_equal(gs.vms, 3);
	assert_int_equal(gs.vms_admitted, 4);
	(void)a;
	vg_host_destroy(h);
}

static void test_static_partition_limits_allocations(void **state)
{
	struct vg_host *h = mf_host("static", 64 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 16 * MiB);
	struct vg_host_guest *b = mf_vm(h, "b", 16 * MiB);
	struct vgmem_chan *ch = mf_chan(a);
	struct vg_model_vm_stats st;
	uint64_t va, va2, scratch, x;

	(void)state;
	scratch = mf_bo(a, 4 * KiB);
	va = mf_bo(a, 12 * MiB);
	assert_true(va >= VG_MODEL_VA_START);
	mf_fill(ch, va, 12 * MiB, 7);
	/* 4 MiB - 4 KiB left in the partition: one page more fails. */
	assert_int_equal(mf_alloc(a, 4 * MiB, &x), -ENOSPC);
	va2 = mf_bo(a, 4 * MiB - 4 * KiB);
	assert_int_equal(mf_alloc(a, 4 * KiB, &x), -ENOSPC);
	st = mf_stats(a);
	assert_int_equal(st.quota_failures, 2);
	assert_int_equal(st.oom_failures, 0);
	assert_int_equal(st.allocated, 16 * MiB);
	assert_int_equal(st.resident, 16 * MiB);

	/* The other partition is untouched by a's full one. */
	mf_bo(b, 16 * MiB);
	mf_check(ch, va, 12 * MiB, 7, scratch);

	/* Freeing inside the partition makes room again. */
	assert_int_equal(vgmem_bo_free(vg_host_guest_dev(a), va2), 0);
	mf_bo(a, 4 * MiB - 4 * KiB);
	st = mf_stats(a);
	assert_int_equal(st.bytes_to_host + st.bytes_to_vram, 0);
	assert_int_equal(st.model_ns, 0);
	vgmem_chan_destroy(ch);
	vg_host_destroy(h);
}

/* Hostile BO commands change nothing (the same checks as the core's). */
static void test_static_bad_bo_commands(void **state)
{
	struct vg_host *h = mf_host("static", 16 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 8 * MiB);
	struct vgmem_dev *dev = vg_host_guest_dev(a);
	struct vgmem_ctrl cmd;
	uint64_t va = mf_bo(a, 1 * MiB);

	(void)state;
	assert_int_equal(mf_alloc(a, 0, &va), -EINVAL);
	assert_int_equal(mf_alloc(a, 4097, &va), -EINVAL);
	assert_int_equal(vgmem_bo_alloc_at(dev, 4 * KiB, VGMEM_VA_START), -EINVAL);
	assert_int_equal(vgmem_bo_alloc_at(dev, 4 * KiB, va), -EINVAL);
	assert_int_equal(vgmem_bo_alloc_at(dev, 4 * KiB, VG_MODEL_VA_START + 1), -EINVAL);
	assert_int_equal(vgmem_bo_alloc_at(dev, 4 * KiB, VGMEM_VA_END - 4 * KiB), 0);
	assert_int_equal(vgmem_bo_free(dev, va + 4 * KiB), -ENOENT);
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_BO_ALLOC;
	cmd.bo.size = 4 * KiB;
	cmd.bo.rsvd = 1;
	assert_int_equal(vgmem_ctrl(dev, &cmd), -EINVAL);
	cmd.bo.rsvd = 0;
	cmd.raw[100] = 1;
	assert_int_equal(vgmem_ctrl(dev, &cmd), -EINVAL);
	assert_int_equal(mf_stats(a).allocated, 1 * MiB + 4 * KiB);
	assert_int_equal(mf_stats(a).quota_failures + mf_stats(a).oom_failures, 0);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_admission_stops_at_vram),
		cmocka_unit_test(test_static_partition_limits_allocations),
		cmocka_unit_test(test_static_bad_bo_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
