// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libvgmem's built-in workloads on the software GPU: they run, they repeat
 * exactly for a seed (same bytes touched, same launches, same entries),
 * they differ from each other as their access patterns say, and they keep
 * working when the working set does not fit in VRAM.
 */
#include <stdlib.h>
#include "itest.h"

static int run_once(enum vgmem_workload w, uint64_t ws, uint64_t vram,
		    uint64_t seed, struct vg_sim_cost *cost)
{
	struct vg_host *h = it_host(vram, 2 * MiB, false, 0);
	struct vg_host_guest *g = it_guest(h, "tenant");
	struct vgmem_chan *ch;
	struct vgmem_vm_stats st;
	int ret;

	assert_int_equal(vgmem_chan_create(vg_host_guest_dev(g), 64, 0, 0, &ch), 0);
	ret = vgmem_workload_run(vg_host_guest_dev(g), ch, w, ws, 4 * MiB, 8, seed);
	vg_host_guest_cost(g, cost);
	/* The working set is gone again, and the channel is healthy. */
	vg_vm_get_stats(vg_host_guest_vm(g), &st);
	assert_true(st.allocated == 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
	vg_host_destroy(h);
	return ret;
}

static void test_deterministic(void **state)
{
	struct vg_sim_cost a, b;
	int w;

	(void)state;
	for (w = 0; w < VGMEM_WL_NR; w++) {
		assert_int_equal(run_once(w, 12 * MiB, 64 * MiB, 42, &a), 0);
		assert_int_equal(run_once(w, 12 * MiB, 64 * MiB, 42, &b), 0);
		print_message("%-8s %llu launches, %llu MiB in VRAM\n",
			      vgmem_workload_name(w), (unsigned long long)a.launches,
			      (unsigned long long)(a.bytes_vram >> 20));
		assert_true(a.launches > 0);
		assert_true(a.bytes_vram > 0);
		assert_true(a.launches == b.launches);
		assert_true(a.entries == b.entries);
		assert_true(a.bytes_vram == b.bytes_vram);
		assert_true(a.bytes_host == b.bytes_host);
	}
}

static void test_patterns_differ(void **state)
{
	struct vg_sim_cost stream, hotcold, strided;

	(void)state;
	assert_int_equal(run_once(VGMEM_WL_STREAM, 40 * MiB, 128 * MiB, 1, &stream), 0);
	assert_int_equal(run_once(VGMEM_WL_HOTCOLD, 40 * MiB, 128 * MiB, 1, &hotcold), 0);
	assert_int_equal(run_once(VGMEM_WL_STRIDED, 40 * MiB, 128 * MiB, 1, &strided), 0);
	/* Streaming reads and writes everything; hot/cold mostly its hot 10%. */
	assert_true(hotcold.bytes_vram < stream.bytes_vram / 2);
	/* Strided reads touch one word per stride. */
	assert_true(strided.bytes_vram < stream.bytes_vram);
}

static void test_oversubscribed(void **state)
{
	struct vg_sim_cost c;

	(void)state;
	/* 48 MiB of working set on 32 MiB of VRAM: some of it runs over PCIe. */
	assert_int_equal(run_once(VGMEM_WL_STREAM, 48 * MiB, 32 * MiB, 3, &c), 0);
	assert_true(c.bytes_host > 0);
}

static void test_bad_args(void **state)
{
	struct vg_host *h = it_host(64 * MiB, 2 * MiB, false, 0);
	struct vg_host_guest *g = it_guest(h, "tenant");
	struct vgmem_dev *dev = vg_host_guest_dev(g);
	struct vgmem_chan *ch;
	struct vgmem_vm_stats st;

	(void)state;
	assert_int_equal(vgmem_chan_create(dev, 16, 0, 0, &ch), 0);
	assert_int_equal(vgmem_workload_run(dev, ch, VGMEM_WL_NR, MiB, MiB, 1, 0), -EINVAL);
	assert_int_equal(vgmem_workload_run(dev, ch, VGMEM_WL_STREAM, 0, MiB, 1, 0), -EINVAL);
	assert_int_equal(vgmem_workload_run(dev, ch, VGMEM_WL_STREAM, MiB, 0, 1, 0), -EINVAL);
	assert_int_equal(vgmem_workload_run(dev, ch, VGMEM_WL_STREAM, MiB, 2 * MiB, 1, 0), -EINVAL);
	assert_int_equal(vgmem_workload_run(NULL, ch, VGMEM_WL_STREAM, MiB, MiB, 1, 0), -EINVAL);
	/* More than the GPU and quota can give fails cleanly, leaving nothing. */
	assert_int_equal(vg_vm_set_quota(vg_host_guest_vm(g), 8 * MiB), 0);
	assert_int_equal(vgmem_workload_run(dev, ch, VGMEM_WL_GATHER, 16 * MiB, MiB, 1, 0),
			 -ENOSPC);
	vg_vm_get_stats(vg_host_guest_vm(g), &st);
	assert_true(st.allocated == 0);
	assert_string_equal(vgmem_workload_name(VGMEM_WL_HOTCOLD), "hotcold");
	assert_string_equal(vgmem_workload_name(VGMEM_WL_NR), "unknown");
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_patterns_differ),
		cmocka_unit_test(test_oversubscribed),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
