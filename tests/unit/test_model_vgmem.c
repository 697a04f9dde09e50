// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The vgmem model is the core untouched: BOs are the core's, entitlements
 * given at admission reach the reducer, and the model's counters are the
 * core's statistics (relocation copies charged to the VM they move).
 */
#include "model_fixture.h"
#include "host-module/sim/sim.h"

static void test_vgmem_counters_are_the_cores(void **state)
{
	struct vg_host *h = mf_host("vgmem:policy=lra", 16 * MiB);
	struct vg_host_vm_config c = { .name = "a", .entitlement = 4 * MiB };
	struct vg_host_guest *a, *b;
	struct vgmem_chan *ch;
	struct vg_model_vm_stats st;
	struct vgmem_vm_stats vs;
	struct vg_gpu_stats gs;
	uint64_t va, sa;

	(void)state;
	assert_int_equal(vg_host_vm_admit(h, &c, &a), 0);
	b = mf_vm(h, "b", 0);
	ch = mf_chan(a);
	vg_gpu_get_stats(vg_host_gpu(h), &gs);
	assert_int_equal(gs.policy, VG_POLICY_LRA);
	vg_vm_get_stats(vg_host_guest_vm(a), &vs);
	assert_int_equal(vs.entitlement, 4 * MiB);

	sa = mf_bo(a, 4 * KiB);
	va = mf_bo(a, 12 * MiB);
	assert_true(va < VG_MODEL_VA_START);	/* the core's VA */
	mf_fill(ch, va, 12 * MiB, 9);
	/* b's 10 MiB push a (above its 4 MiB entitlement) out: no failure. */
	mf_bo(b, 10 * MiB);
	mf_check(ch, va, 12 * MiB, 9, sa);

	st = mf_stats(a);
	vg_vm_get_stats(vg_host_guest_vm(a), &vs);
	assert_true(vs.bytes_out > 0);
	assert_int_equal(st.bytes_to_host, vs.bytes_out);
	assert_int_equal(st.bytes_to_vram, vs.bytes_in);
	assert_int_equal(st.resident, vs.resident);
	assert_int_equal(st.allocated, vs.allocated);
	assert_int_equal(st.model_ns,
			 vg_sim_cost_ns(vg_host_sim(h), VG_LOC_HOST,
					vs.bytes_out + vs.bytes_in));
	assert_int_equal(st.oom_failures + st.quota_failures, 0);
	assert_int_equal(st.submissions, 0);	/* nothing is trapped */
	assert_int_equal(mf_gstats(h).bytes_to_host, vs.bytes_out);
	assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
	vgmem_chan_destroy(ch);
	vg_host_destroy(h);
}

/* The core's failures are counted: quota (-ENOSPC) apart from -ENOMEM. */
static void test_vgmem_failures_counted(void **state)
{
	struct vg_host_config cfg;
	struct vg_host *h = NULL;
	struct vg_host_guest *a;
	uint64_t x;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 8 * MiB;
	cfg.gpu.no_return_worker = true;
	cfg.gpu.host_budget = 4 * MiB;	/* VRAM + host: 12 MiB in all */
	cfg.model = "vgmem";
	assert_int_equal(vg_host_create(&cfg, &h), 0);
	a = mf_vm(h, "a", 32 * MiB);
	assert_int_equal(mf_alloc(a, 64 * MiB, &x), -ENOSPC);
	assert_int_equal(mf_alloc(a, 16 * MiB, &x), -ENOMEM);
	assert_int_equal(mf_stats(a).quota_failures, 1);
	assert_int_equal(mf_stats(a).oom_failures, 1);
	vg_host_guest_destroy(a);
	/* A departed VM's counters stay in the GPU's totals. */
	assert_int_equal(mf_gstats(h).oom_failures, 1);
	assert_int_equal(mf_gstats(h).quota_failures, 1);
	assert_int_equal(mf_gstats(h).vms, 0);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vgmem_counters_are_the_cores),
		cmocka_unit_test(test_vgmem_failures_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
