// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The swsched model (Gdev/GDM software scheduling): every submission is
 * mediated and charged, and the launching VM's whole working set is
 * resident before its work runs, other VMs' BOs going to host RAM.
 */
#include <pthread.h>

#include "model_fixture.h"
#include "host-module/sim/sim.h"

/* Without pressure: a fixed mediation cost per GP_PUT, nothing moves. */
static void test_swsched_mediation_per_submission(void **state)
{
	struct vg_host *h = mf_host("swsched:mediation_ns=1000", 64 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0);
	struct vgmem_chan *ch = mf_chan(a);
	struct vg_model_vm_stats st0, st;
	struct vg_sim_cost c;
	uint64_t va, sa, n0;
	int i;

	(void)state;
	sa = mf_bo(a, 4 * KiB);
	va = mf_bo(a, 4 * MiB);
	st0 = mf_stats(a);
	n0 = vgmem_chan_submitted(ch);
	for (i = 0; i < 5; i++)
		mf_fill(ch, va, 4 * MiB, (uint32_t)i);
	mf_check(ch, va, 4 * MiB, 4, sa);
	st = mf_stats(a);
	/* One GP_PUT per submitted entry, each charged exactly once. */
	assert_int_equal(st.submissions - st0.submissions,
			 vgmem_chan_submitted(ch) - n0);
	assert_true(st.submissions >= 6);
	assert_int_equal(st.model_ns, st.submissions * 1000);
	assert_int_equal(st.bytes_to_host + st.bytes_to_vram, 0);
	/* The host's cost readout includes the mediation. */
	vg_host_guest_cost(a, &c);
	{
		struct vg_sim_cost raw;

		vg_sim_as_cost(vg_host_sim(h), vg_vm_gpu_as(vg_host_guest_vm(a)),
			       &raw);
		assert_int_equal(c.device_ns, raw.device_ns + st.model_ns);
	}
	vgmem_chan_destroy(ch);
	vg_host_destroy(h);
}

/*
 * Under pressure: each VM's submission brings all of it into VRAM first
 * (its kernels touch no host RAM at all) and evicts the other VM.
 */
static void test_swsched_launcher_fully_resident(void **state)
{
	struct vg_host *h = mf_host("swsched", 16 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0), *b = mf_vm(h, "b", 0);
	struct vgmem_chan *cha = mf_chan(a), *chb = mf_chan(b);
	struct vg_model_vm_stats sta, stb;
	struct vg_sim_cost ca, cb;
	uint64_t va, vb, sa, sb;
	int round;

	(void)state;
	sa = mf_bo(a, 4 * KiB);
	va = mf_bo(a, 10 * MiB);
	mf_fill(cha, va, 10 * MiB, 1);
	/* b's allocation evicts a (Gdev evicts at allocation too). */
	sb = mf_bo(b, 4 * KiB);
	vb = mf_bo(b, 10 * MiB);
	sta = mf_stats(a);
	assert_int_equal(sta.resident, 0);
	assert_int_equal(sta.bytes_to_host, 10 * MiB + 4 * KiB);
	assert_int_equal(sta.evictions, 1);
	assert_int_equal(mf_stats(b).resident, 10 * MiB + 4 * KiB);
	mf_fill(chb, vb, 10 * MiB, 2);

	for (round = 0; round < 3; round++) {
		/* a runs: it comes back whole, b goes out whole. */
		mf_check(cha, va, 10 * MiB, 1, sa);
		sta = mf_stats(a);
		stb = mf_stats(b);
		assert_int_equal(sta.resident, 10 * MiB + 4 * KiB);
		assert_int_equal(stb.resident, 0);
		mf_check(chb, vb, 10 * MiB, 2, sb);
		assert_int_equal(mf_stats(b).resident, 10 * MiB + 4 * KiB);
		assert_int_equal(mf_stats(a).resident, 0);
	}
	/* No kernel of either VM ever touched host RAM. */
	vg_host_guest_cost(a, &ca);
	vg_host_guest_cost(b, &cb);
	assert_int_equal(ca.bytes_host, 0);
	assert_int_equal(cb.bytes_host, 0);
	sta = mf_stats(a);
	stb = mf_stats(b);
	assert_int_equal(sta.bytes_to_vram, 3 * (10 * MiB + 4 * KiB));
	assert_int_equal(stb.bytes_to_host, 3 * (10 * MiB + 4 * KiB));
	assert_true(sta.model_ns > sta.submissions * VG_MODEL_MEDIATION_NS_DEFAULT);
	assert_int_equal(mf_gstats(h).oom_failures, 0);
	vgmem_chan_destroy(cha);
	vgmem_chan_destroy(chb);
	vg_host_destroy(h);
}

/* A VM's own working set beyond VRAM is out of memory. */
static void test_swsched_own_working_set_too_big(void **state)
{
	struct vg_host *h = mf_host("swsched", 16 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0);
	uint64_t x;

	(void)state;
	mf_bo(a, 12 * MiB);
	assert_int_equal(mf_alloc(a, 8 * MiB, &x), -ENOMEM);
	assert_int_equal(mf_stats(a).oom_failures, 1);
	assert_int_equal(mf_stats(a).allocated, 12 * MiB);
	vg_host_destroy(h);
}

/*
 * The guest of test_quiesce_holds_submissions: a vCPU, not the host thread
 * that quiesced (which holds gpu->lock until it unquiesces, so anything of
 * the guest's that takes it, a channel create, would deadlock there).
 */
struct qguest {
	struct vgmem_chan *ch;
	uint64_t va, seq;
	int submit_err, wait_err;
};

static void *qguest_main(void *arg)
{
	struct qguest *g = arg;
	uint32_t v[1 + VGMEM_CP_NARGS] = {
		VGMEM_K_MEMSET, (uint32_t)g->va, (uint32_t)(g->va >> 32),
		64 * KiB, 0, 0x22222222u, 0, 0, 0,
	};

	/* No cmocka assertion off the main thread: results go back. */
	vgmem_pb_inc(g->ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, v,
		     1 + VGMEM_CP_NARGS);
	vgmem_pb_immd(g->ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
	g->submit_err = vgmem_submit(g->ch, &g->seq);
	/* Quiesced: it cannot complete, however long we wait. */
	if (!g->submit_err)
		g->wait_err = vgmem_wait(g->ch, g->seq, 50ull * 1000 * 1000);
	return NULL;
}

/*
 * The core's vg_vm_quiesce() (vg.h), with which swsched stops a victim:
 * until vg_vm_unquiesce() nothing of the VM runs, what its guest submits
 * meanwhile waits in the shadow USERD page, and it all runs afterwards.
 */
static void test_quiesce_holds_submissions(void **state)
{
	struct vg_host *h = mf_host("vgmem", 16 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0);
	struct vgmem_chan *ch = mf_chan(a);
	struct vg_vm *vm = vg_host_guest_vm(a);
	struct qguest g = { .ch = ch, .va = mf_bo(a, 64 * KiB) };
	uint64_t va = g.va;
	uint8_t buf[64];
	pthread_t t;

	(void)state;
	assert_int_equal(vgmem_memset(ch, va, 64 * KiB, 0x11111111u), 0);
	assert_int_equal(vg_vm_quiesce(vm), 0);
	assert_int_equal(pthread_create(&t, NULL, qguest_main, &g), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(vg_sim_read_va(vg_host_sim(h), vg_vm_gpu_as(vm),
					va, buf, sizeof(buf)), 0);
	vg_vm_unquiesce(vm);
	assert_int_equal(g.submit_err, 0);
	assert_int_equal(g.wait_err, -ETIMEDOUT);
	assert_int_equal(buf[0], 0x11);
	assert_int_equal(buf[sizeof(buf) - 1], 0x11);
	assert_int_equal(vgmem_wait(ch, g.seq, 0), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	assert_int_equal(vg_sim_read_va(vg_host_sim(h), vg_vm_gpu_as(vm),
					va + 64 * KiB - sizeof(buf), buf,
					sizeof(buf)), 0);
	assert_int_equal(buf[0], 0x22);
	assert_int_equal(buf[sizeof(buf) - 1], 0x22);
	vgmem_chan_destroy(ch);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swsched_mediation_per_submission),
		cmocka_unit_test(test_swsched_launcher_fully_resident),
		cmocka_unit_test(test_swsched_own_working_set_too_big),
		cmocka_unit_test(test_quiesce_holds_submissions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
