// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The admission model (HAMi): quotas may oversubscribe VRAM, and an
 * allocation fails with out-of-memory exactly when VRAM is full, even
 * under the VM's quota; the VMs holding VRAM keep running untouched.
 */
#include "model_fixture.h"
#include "host-module/sim/sim.h"

static void test_admission_oom_exactly_when_full(void **state)
{
	struct vg_host *h = mf_host("admission", 16 * MiB);
	struct vg_host_guest *a = mf_vm(h, "holder", 16 * MiB);
	struct vg_host_guest *b = mf_vm(h, "challenger", 16 * MiB);
	struct vgmem_chan *cha = mf_chan(a), *chb = mf_chan(b);
	struct vg_model_vm_stats st;
	uint64_t va, vb, sa, sb, free_b, x;

	(void)state;
	/* Both quotas are all of VRAM: admitted, 200 % oversubscribed. */
	assert_int_equal(mf_gstats(h).vms, 2);
	sa = mf_bo(a, 4 * KiB);
	sb = mf_bo(b, 4 * KiB);
	va = mf_bo(a, 10 * MiB);
	mf_fill(cha, va, 10 * MiB, 3);

	/* One page more than is free fails; exactly what is free succeeds. */
	free_b = vg_sim_vram_free(vg_host_sim(h));
	assert_true(free_b > 4 * KiB && free_b < 6 * MiB);
	assert_int_equal(mf_alloc(b, free_b + 4 * KiB, &x), -ENOMEM);
	st = mf_stats(b);
	assert_int_equal(st.oom_failures, 1);
	assert_int_equal(st.allocated, 4 * KiB);
	vb = mf_bo(b, free_b);
	assert_int_equal(vg_sim_vram_free(vg_host_sim(h)), 0);
	mf_fill(chb, vb, free_b, 4);
	/* Full: the smallest BO fails, under the quota, for either VM. */
	assert_int_equal(mf_alloc(b, 4 * KiB, &x), -ENOMEM);
	assert_int_equal(mf_alloc(a, 4 * KiB, &x), -ENOMEM);
	assert_int_equal(mf_stats(b).oom_failures, 2);
	assert_int_equal(mf_stats(a).oom_failures, 1);
	assert_int_equal(mf_stats(b).quota_failures, 0);
	assert_int_equal(mf_gstats(h).oom_failures, 3);

	/* The holder keeps every byte and keeps running; nothing moved. */
	mf_check(cha, va, 10 * MiB, 3, sa);
	mf_check(chb, vb, free_b, 4, sb);
	st = mf_stats(a);
	assert_int_equal(st.bytes_to_host + st.bytes_to_vram, 0);
	assert_int_equal(st.resident, 10 * MiB + 4 * KiB);

	/* Freed VRAM is allocatable again. */
	assert_int_equal(vgmem_bo_free(vg_host_guest_dev(a), va), 0);
	mf_bo(b, 10 * MiB);
	vgmem_chan_destroy(cha);
	vgmem_chan_destroy(chb);
	vg_host_destroy(h);
}

/* The quota is still each VM's own limit (HAMi-core's per-container limit). */
static void test_admission_quota_still_limits(void **state)
{
	struct vg_host *h = mf_host("admission", 64 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 8 * MiB);
	uint64_t x;

	(void)state;
	mf_bo(a, 8 * MiB);
	assert_int_equal(mf_alloc(a, 4 * KiB, &x), -ENOSPC);
	assert_int_equal(mf_stats(a).quota_failures, 1);
	assert_int_equal(mf_stats(a).oom_failures, 0);
	vg_host_destroy(h);
}

/* With a cap the sum of quotas stops at oversub percent of VRAM. */
static void test_admission_cap(void **state)
{
	struct vg_host *h = mf_host("admission:oversub=150", 16 * MiB);
	struct vg_host_guest *g;
	struct vg_model_params p;
	char buf[64];

	(void)state;
	mf_vm(h, "a", 16 * MiB);
	mf_vm(h, "b", 8 * MiB);
	assert_int_equal(mf_admit(h, "c", 4 * KiB, &g), -ENOSPC);
	assert_int_equal(mf_gstats(h).vms_refused, 1);
	assert_string_equal(vg_model_spec(vg_host_model(h), buf, sizeof(buf)),
			    "admission:oversub=150");
	assert_int_equal(vg_model_parse("admission:oversub=x", &p), -EINVAL);
	assert_int_equal(vg_model_parse("static:oversub=200", &p), -EINVAL);
	vg_host_destroy(h);
}

/*
 * Without a cap, quotas add up freely, but never past what the sum can
 * hold: a quota that would wrap it is refused and changes nothing.
 */
static void test_admission_quota_sum_cannot_wrap(void **state)
{
	struct vg_host *h = mf_host("admission", 16 * MiB);
	struct vg_host_guest *g;
	struct vg_model_gpu_stats gs;

	(void)state;
	mf_vm(h, "a", UINT64_MAX / 2 + 1);
	assert_int_equal(mf_admit(h, "b", UINT64_MAX / 2 + 1, &g), -ENOSPC);
	assert_null(g);
	gs = mf_gstats(h);
	assert_int_equal(gs.quota_sum, UINT64_MAX / 2 + 1);
	assert_int_equal(gs.vms, 1);
	assert_int_equal(gs.vms_refused, 1);
	/* Small quotas still fit next to it. */
	mf_vm(h, "c", 4 * MiB);
	assert_int_equal(mf_gstats(h).quota_sum, UINT64_MAX / 2 + 1 + 4 * MiB);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admission_oom_exactly_when_full),
		cmocka_unit_test(test_admission_quota_still_limits),
		cmocka_unit_test(test_admission_cap),
		cmocka_unit_test(test_admission_quota_sum_cannot_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
