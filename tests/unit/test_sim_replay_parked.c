// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable faults of the software GPU, channels parked on a fault:
 * idle waits and stop while parked, an error while stopped, destroying a
 * channel with faults queued or the sim with a handler call running,
 * faults on one page coalesced, and unhooking the handler mid-call.
 * The fixture and its fault handler: sim_replay_fixture.h.
 */
#include "test_sim_util.h"
#include "sim_replay_fixture.h"
#include "host-module/sim/sim_internal.h"

/* ---- parked channels: idle waits, stop, destroy ------------------------- */

static void test_stop_and_idle_while_parked(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u32 v;

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t);
	k_memset(t, VA0, 3 * 4096, 0x77);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	/* Parked on the fault: idle, and stops at once. */
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(f->ops->channel_stop(f->sim, t->ch, T_TIMEOUT), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_GP_GET), 0);
	TH_ST(f->h.gate, 0);
	T_WAIT(th_calls(f) == 1);
	/* Answered but stopped: no replay (so no second fault) until start. */
	usleep(20000);
	assert_int_equal(th_calls(f), 1);
	assert_int_equal(t_userd(t, VGMEM_USERD_GP_GET), 0);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0, &v, 4), 0);
	assert_int_equal(v, 0);
	f->ops->channel_start(f->sim, t->ch);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(th_calls(f), 3);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 3 * 4096 - 4, &v,
					4), 0);
	assert_int_equal(v, 0x77);
	assert_int_equal(t_idle(t), 0);
	t_chan_free(t);
}

/* A failed fault of a stopped channel errors it when it is started. */
static void test_stopped_error_waits_for_start(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	TH_ST(f->h.mode, TH_FAIL);
	t_bind(t);
	k_memset(t, VA0, 4, 1);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	assert_int_equal(f->ops->channel_stop(f->sim, t->ch, T_TIMEOUT), 0);
	TH_ST(f->h.gate, 0);
	T_WAIT(th_calls(f) == 1);
	usleep(20000);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	f->ops->channel_start(f->sim, t->ch);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t->faults, 1);
	t_chan_free(t);
}

/*
 * Destroy channels parked on a fault being handled and on a queued one;
 * the handler finishes afterwards and nothing touches freed channels.
 */
static void test_destroy_with_faults_pending(void **state)
{
	struct fx *f = *state;
	struct tchan *t0 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t1 = t_chan(f->sim, f->as[0], f->g, 8);
	struct tchan *t2 = t_chan(f->sim, f->as[1], f->g, 8);
	struct vg_sim_fault_stats st;

	t_range(f, 0, VA0, MSZ, true);
	t_range(f, 1, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t0);
	t_bind(t1);
	t_bind(t2);
	k_memset(t0, VA0, 4, 1);
	t_submit(t0);
	T_WAIT(TH_LD(f->h.in));
	k_memset(t1, VA0 + 4096, 4, 1);
	t_submit(t1);
	k_memset(t2, VA0, 4, 1);
	t_submit(t2);
	assert_int_equal(t_idle(t1), 0);
	assert_int_equal(t_idle(t2), 0);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 3);
	/* t1's fault is queued: dropped with it. t0's is being handled. */
	t_chan_free(t1);
	t_chan_free(t0);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.cancelled, 1);
	/* as_destroy of AS 1 with t2 parked on its queued fault: t2 errors. */
	f->ops->as_destroy(f->sim, f->as[1]);
	f->as[1] = NULL;
	t_wait_done(t2);
	assert_int_equal(t_userd(t2, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.cancelled, 2);
	t_chan_free(t2);
	/* The handler call under way finishes after its channel is gone. */
	TH_ST(f->h.gate, 0);
	T_WAIT(th_calls(f) == 1);
	/* And as_destroy of AS 0 while the handler may still be returning. */
	f->ops->as_destroy(f->sim, f->as[0]);
	f->as[0] = NULL;
}

/* The sim goes away with a handler call under way: it waits for it. */
static void test_sim_destroy_waits_for_handler(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	/* Failing touches no mem: teardown frees them before the destroy. */
	TH_ST(f->h.mode, TH_FAIL);
	f->h.no_wait = true;
	t_bind(t);
	k_memset(t, VA0, 4, 1);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	t_chan_free(t);
	f->ops->as_destroy(f->sim, f->as[0]);
	f->as[0] = NULL;
	/* Teardown opens the gate and destroys the sim. */
}

/* Two channels of one AS faulting on one queued page: one handler call. */
static void test_coalesce_same_page(void **state)
{
	struct fx *f = *state;
	struct tchan *t[3];
	struct vg_sim_fault_stats st;
	u64 sum;
	int i;

	t_range(f, 0, VA0, MSZ, true);
	for (i = 0; i < 3; i++) {
		t[i] = t_chan(f->sim, f->as[0], f->g, 8);
		t_bind(t[i]);
	}
	TH_ST(f->h.gate, 1);
	k_memset(t[0], VA0, 4, 1);
	t_submit(t[0]);
	T_WAIT(TH_LD(f->h.in));
	/* t[0]'s fault is being handled; these two queue behind it. */
	for (i = 1; i < 3; i++) {
		k_checksum(t[i], VA0 + 0x10000, 64, VA0 + 8 * (u64)i);
		t_submit(t[i]);
		assert_int_equal(t_idle(t[i]), 0);
	}
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 3);
	assert_int_equal(st.coalesced, 1);
	TH_ST(f->h.gate, 0);
	for (i = 0; i < 3; i++) {
		t_wait_done(t[i]);
		assert_int_equal(t_userd(t[i], VGMEM_USERD_ERROR), 0);
	}
	for (i = 1; i < 3; i++) {
		u8 zero[64] = { 0 };

		assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 8 * (u64)i,
						&sum, 8), 0);
		assert_int_equal(sum, t_fnv(zero, 64));
	}
	/* t[0]'s page, the shared one, then nothing more: results are on page 0. */
	assert_int_equal(th_calls(f), 2);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.handled, 2);
	assert_int_equal(st.replayed, 3);
	for (i = 0; i < 3; i++)
		t_chan_free(t[i]);
}

struct unhook {
	struct fx *f;
	int done;			/* atomic */
};

static void *unhook_main(void *arg)
{
	struct unhook *u = arg;

	u->f->ops->set_fault_handler(u->f->sim, NULL, NULL);
	TH_ST(u->done, 1);
	return NULL;
}

/* set_fault_handler has taken the handler away (and now waits). */
static bool handler_gone(struct fx *f)
{
	bool gone;

	spin_lock(&f->sim->pf_lock);
	gone = !f->sim->pf_handler;
	spin_unlock(&f->sim->pf_lock);
	return gone;
}

/* set_fault_handler waits, like free_irq, for a call of the old handler. */
static void test_unhook_waits_for_call(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct unhook u = { .f = f };
	pthread_t thr;

	t_range(f, 0, VA0, MSZ, true);
	TH_ST(f->h.gate, 1);
	t_bind(t);
	k_memset(t, VA0, 2 * 4096, 3);
	t_submit(t);
	T_WAIT(TH_LD(f->h.in));
	assert_int_equal(pthread_create(&thr, NULL, unhook_main, &u), 0);
	/*
	 * Not a fixed sleep: on a busy machine the thread may not run for a
	 * while, and the second page would still find the handler.
	 */
	T_WAIT(handler_gone(f));
	usleep(20000);
	assert_int_equal(TH_LD(u.done), 0);
	TH_ST(f->h.gate, 0);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(u.done, 1);
	assert_int_equal(__atomic_load_n(&f->h.active, __ATOMIC_SEQ_CST), 0);
	/* The first page was mapped; the second faults with no handler. */
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO), (u32)(VA0 + 4096));
	assert_int_equal(th_calls(f), 1);
	t_chan_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_stop_and_idle_while_parked),
		T(test_stopped_error_waits_for_start),
		T(test_destroy_with_faults_pending),
		T(test_sim_destroy_waits_for_handler),
		T(test_coalesce_same_page),
		T(test_unhook_waits_for_call),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
