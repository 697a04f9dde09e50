// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable faults of the software GPU, the interface: hostile arguments
 * to protect and fault_range, many ranges in one address space, and
 * mem_host_addr.
 * The fixture and its fault handler: sim_replay_fixture.h.
 */
#include "test_sim_util.h"
#include "sim_replay_fixture.h"

/* ---- hostile arguments, mem_host_addr ----------------------------------- */

static void test_hostile_args(void **state)
{
	struct fx *f = *state;
	struct vg_as *as = f->as[0];
	const struct vg_gpu_ops *o = f->ops;

	assert_int_equal(o->protect(f->sim, NULL, VA0, 4096, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0 + 1, 4096, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0, 4095, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0, 0, VG_PROT_RO), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, VA0, 4096, 2), -EINVAL);
	assert_int_equal(o->protect(f->sim, as, 1ull << 40, 4096, VG_PROT_RO),
			 -EINVAL);
	assert_int_equal(o->protect(f->sim, as, ~0ull - 4095, 8192, VG_PROT_RO),
			 -EINVAL);
	/* Unmapped pages are left alone (a later map is writable). */
	assert_int_equal(o->protect(f->sim, as, VA0, 4096, VG_PROT_RO), 0);

	assert_int_equal(o->fault_range(f->sim, NULL, VA0, 4096, true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 8, 4096, true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 0, true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, (1ull << 40) - 4096, 8192,
					true), -EINVAL);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4 * 4096, true), 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 3 * 4096, 4096, true),
			 -EEXIST);
	assert_int_equal(o->fault_range(f->sim, as, VA0 - 4096, 8192, true),
			 -EEXIST);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 4 * 4096, 4096, true),
			 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0 - 4096, 4096, true), 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4096, false), -ENOENT);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 8 * 4096, false),
			 -ENOENT);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4 * 4096, false), 0);
	assert_int_equal(o->fault_range(f->sim, as, VA0, 4 * 4096, false),
			 -ENOENT);
	assert_int_equal(o->fault_range(f->sim, as, VA0 + 4 * 4096, 4096, false),
			 0);
	/* Left on: as_destroy drops it. */
}

static void test_many_ranges(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	int i;

	/* Every other page, inserted out of order: the array grows. */
	for (i = 0; i < 64; i++)
		t_range(f, 0, VA0 + (u64)((i * 37) % 64) * 8192, 4096, true);
	t_bind(t);
	k_memset(t, VA0 + 62 * 8192, 4096, 5);
	t_run_faulting(t);
	k_memset(t, VA0 + 62 * 8192 + 4096, 4, 5);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(th_calls(f), 1);
	t_chan_free(t);
}

static void test_mem_host_addr(void **state)
{
	struct fx *f = *state;
	struct vg_mem *h, *v;
	struct vg_copy c;
	u64 fence;
	u8 *p;
	int i;

	assert_null(f->ops->mem_host_addr(f->sim, f->back[0]));
	assert_int_equal(f->ops->mem_alloc(f->sim, VG_LOC_HOST, 3 * 4096 + 1, &h),
			 0);
	assert_int_equal(f->ops->mem_alloc(f->sim, VG_LOC_VRAM, 4 * 4096, &v), 0);
	p = f->ops->mem_host_addr(f->sim, h);
	assert_non_null(p);
	for (i = 0; i < 4 * 4096; i++)
		p[i] = (u8)(i * 13);
	/* Through the copy engine and back: the CPU view is the mem. */
	c = (struct vg_copy){ .src = h, .dst = v, .len = 4 * 4096 };
	assert_int_equal(f->ops->copy_submit(f->sim, &c, 1, &fence), 0);
	assert_int_equal(f->ops->copy_wait(f->sim, fence, NULL), 0);
	memset(p, 0, 4 * 4096);
	c = (struct vg_copy){ .src = v, .dst = h, .src_off = 4096, .len = 4096 };
	assert_int_equal(f->ops->copy_submit(f->sim, &c, 1, &fence), 0);
	assert_int_equal(f->ops->copy_wait(f->sim, fence, NULL), 0);
	for (i = 0; i < 4096; i++)
		assert_int_equal(p[i], (u8)((i + 4096) * 13));
	assert_null(f->ops->mem_host_addr(f->sim, NULL));
	f->ops->mem_free(f->sim, h);
	f->ops->mem_free(f->sim, v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_hostile_args),
		T(test_many_ranges),
		T(test_mem_host_addr),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
