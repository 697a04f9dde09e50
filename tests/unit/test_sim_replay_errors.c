// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable faults of the software GPU, errors: a handler's error, no
 * handler at all, an access outside every fault range, and a range turned
 * off while its fault is queued.
 * The fixture and its fault handler: sim_replay_fixture.h.
 */
#include "test_sim_util.h"
#include "sim_replay_fixture.h"

/* ---- errors ---------------------------------------------------------------- */

static void test_handler_error_is_va_error(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct vg_sim_fault_stats st;
	u32 v = 0;

	t_range(f, 0, VA0, MSZ, true);
	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 4096, f->back[0], 0),
			 0);
	TH_ST(f->h.mode, TH_FAIL);
	t_bind(t);
	k_memset(t, VA0 + 4000, 200, 0x11111111);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_INFO), VGMEM_CP_LAUNCH);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO), (u32)(VA0 + 4096));
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_HI),
			 (u32)((VA0 + 4096) >> 32));
	assert_int_equal(t->faults, 1);
	assert_int_equal(t->fault_err, VGMEM_CHAN_ERR_VA);
	assert_int_equal(t->fault_addr, VA0 + 4096);
	/* What came before the fault was written. */
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 4092, &v, 4), 0);
	assert_int_equal(v, 0x11111111);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.replayed, 0);
	t_chan_free(t);
}

static void test_no_handler_errors(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	f->ops->set_fault_handler(f->sim, NULL, NULL);
	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	k_memset(t, VA0 + 64, 4, 1);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO), (u32)(VA0 + 64));
	assert_int_equal(th_calls(f), 0);
	t_chan_free(t);
}

static void test_outside_ranges_error_as_before(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, 4 * 4096, true);
	t_range(f, 0, VA0 + 8 * 4096, 4 * 4096, true);
	t_bind(t);
	/* Pages 0-3 fault and are mapped; page 4 is in no range. */
	k_memset(t, VA0, 5 * 4096, 9);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO),
			 (u32)(VA0 + 4 * 4096));
	assert_int_equal(th_calls(f), 4);
	t_chan_free(t);

	/* A range turned off faults no more. */
	t_range(f, 0, VA0 + 8 * 4096, 4 * 4096, false);
	t = t_chan(f->sim, f->as[0], f->g, 8);
	t_bind(t);
	k_memset(t, VA0 + 9 * 4096, 4, 9);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(th_calls(f), 4);
	t_chan_free(t);
}

/* A fault whose range is turned off before the handler runs: error, no call. */
static void test_range_off_while_queued(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t1 = t_chan(f->sim, f->as[1], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	t_range(f, 1, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t0);
	t_bind(t1);
	k_memset(t0, VA0, 4, 1);
	t_submit(t0);
	T_WAIT(TH_LD(f->h.in));
	k_memset(t1, VA0, 4, 1);
	t_submit(t1);
	/* t1 parks on a queued fault (idle), then its range goes. */
	assert_int_equal(t_idle(t1), 0);
	t_range(f, 1, VA0, MSZ, false);
	TH_ST(f->h.gate, 0);
	t_wait_done(t0);
	t_wait_done(t1);
	assert_int_equal(t_userd(t0, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t_userd(t1, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(th_calls(f), 1);
	t_chan_free(t0);
	t_chan_free(t1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_handler_error_is_va_error),
		T(test_no_handler_errors),
		T(test_outside_ranges_error_as_before),
		T(test_range_off_while_queued),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
