// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable faults of the software GPU, protection: read-only PTEs
 * (protect, map with VG_PROT_RO) fault on writes and not on reads, also
 * with 2 MiB pages inside a fault range, and a handler that unprotects
 * lets the write replay.
 * The fixture and its fault handler: sim_replay_fixture.h.
 */
#include "test_sim_util.h"
#include "sim_replay_fixture.h"

/* ---- protection ---------------------------------------------------------- */

static void test_ro_write_faults_read_does_not(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u8 buf[64];
	u64 sum;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 8 * 4096,
				     f->back[0], 0), 0);
	t_bind(t);
	k_fill(t, VA0, 4 * 4096, 7);
	t_run(t);
	assert_int_equal(f->ops->protect(f->sim, f->as[0], VA0, 4 * 4096,
					 VG_PROT_RO), 0);
	f->ops->tlb_flush(f->sim, f->as[0]);

	/* Reads of RO pages work; the result goes to a writable page. */
	k_checksum(t, VA0, 4 * 4096, VA0 + 5 * 4096);
	t_run(t);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 5 * 4096, &sum,
					8), 0);
	{
		u8 *want = malloc(4 * 4096);

		pattern(want, 0, 4 * 4096, 7);
		assert_int_equal(sum, t_fnv(want, 4 * 4096));
		free(want);
	}

	/* A write outside every fault range: the VA error, as an unmapped page. */
	k_memset(t, VA0 + 4096 + 100, 8, 0x55);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_INFO), VGMEM_CP_LAUNCH);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO),
			 (u32)(VA0 + 4096 + 100));
	assert_int_equal(t->faults, 1);
	assert_int_equal(th_calls(f), 0);
	/* Nothing was written. */
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 4096 + 100, buf,
					8), 0);
	{
		u8 want[8];

		pattern(want, 4096 + 100, 8, 7);
		assert_memory_equal(buf, want, 8);
	}
	t_chan_free(t);
}

/*
 * Fault ranges over 2 MiB big pages (the backing is mapped whole): a
 * read-only big page is made writable page by page by the handler (the
 * first protect splits it), a page unmapped out of a big page is mapped
 * back, and every other page keeps its translation and protection.
 */
static void test_big_pages_in_fault_range(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u64 tables;
	u8 buf[16];
	u32 v;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, MSZ, f->back[0],
				     0), 0);
	tables = vg_sim_pt_tables(f->sim);
	/* Whole big pages: protected without a split. */
	assert_int_equal(f->ops->protect(f->sim, f->as[0], VA0, MSZ,
					 VG_PROT_RO), 0);
	assert_int_equal(vg_sim_pt_tables(f->sim), tables);
	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	TH_ST(f->h.mode, TH_AUTO);
	/* Across pages 0 and 1: a present write fault on each. */
	k_memset(t, VA0 + 4096 - 8, 16, 0x5a5a5a5a);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 2);
	assert_int_equal(f->h.presents, 2);
	assert_int_equal(vg_sim_pt_tables(f->sim), tables + 1);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 4096 - 8, buf,
					16), 0);
	memcpy(&v, buf + 12, 4);
	assert_int_equal(v, 0x5a5a5a5a);
	/* Page 2 is still read-only. */
	k_memset(t, VA0 + 2 * 4096, 4, 1);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 3);
	assert_int_equal(f->h.presents, 3);

	/* A page out of the second big page: mapped back on the miss. */
	f->ops->unmap(f->sim, f->as[0], VA0 + MSZ / 2 + 4096, 4096);
	assert_int_equal(vg_sim_pt_tables(f->sim), tables + 2);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + MSZ / 2 + 4096,
					&v, 4), -EFAULT);
	/* Reads of the RO pages around it do not fault; the result does. */
	k_checksum(t, VA0 + MSZ / 2, 3 * 4096, VA0 + 8 * 4096);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 5);
	assert_int_equal(f->h.presents, 4);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + MSZ / 2 + 4096,
					&v, 4), 0);
	/* Its neighbours kept their protection: a write still faults. */
	k_memset(t, VA0 + MSZ / 2 + 2 * 4096, 4, 2);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 6);
	assert_int_equal(f->h.presents, 5);
	t_range(f, 0, VA0, MSZ, false);
	t_chan_free(t);
}

/* map_prot(RO): the PTE is read-only from its first moment. */
static void test_map_prot_ro(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	u8 buf[8], want[8];

	assert_int_equal(f->ops->map_prot(f->sim, f->as[0], VA0, 4 * 4096,
					  f->back[0], 0, 7), -EINVAL);
	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 4 * 4096,
				     f->back[0], 0), 0);
	t_bind(t);
	k_fill(t, VA0, 4 * 4096, 3);
	t_run(t);
	/* Over a writable mapping, in one PTE write: no flush in between. */
	assert_int_equal(f->ops->map_prot(f->sim, f->as[0], VA0, 4 * 4096,
					  f->back[0], 0, VG_PROT_RO), 0);
	k_memset(t, VA0 + 100, 8, 0x55);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 100, buf, 8), 0);
	pattern(want, 100, 8, 3);
	assert_memory_equal(buf, want, 8);
	t_chan_free(t);
}

static void test_ro_write_in_range_unprotects(void **state)
{
	struct fx *f = *state;
	struct tchan *t = t_chan(f->sim, f->as[0], f->g, 8);
	struct vg_sim_fault_stats st;
	u32 v;

	assert_int_equal(f->ops->map(f->sim, f->as[0], VA0, 8 * 4096,
				     f->back[0], 0), 0);
	assert_int_equal(f->ops->protect(f->sim, f->as[0], VA0, 8 * 4096,
					 VG_PROT_RO), 0);
	t_range(f, 0, VA0, MSZ, true);
	t_bind(t);
	/* Reads: no fault. The result page is unmapped: not present, write. */
	TH_ST(f->h.mode, TH_MAP);
	k_checksum(t, VA0, 8 * 4096, VA0 + 0x100000);
	t_submit(t);
	t_wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(th_calls(f), 1);
	assert_true(f->h.last.write);
	assert_false(f->h.last.present);
	assert_int_equal(f->h.last.va, VA0 + 0x100000);

	/* Writes to the RO pages: one fault each, write and present. */
	TH_ST(f->h.mode, TH_UNPROTECT);
	k_memset(t, VA0, 8 * 4096, 0xabcd1234);
	t_run_faulting(t);
	assert_int_equal(th_calls(f), 9);
	assert_int_equal(f->h.presents, 8);
	assert_int_equal(f->h.writes, 9);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[0], VA0 + 7 * 4096 + 4092,
					&v, 4), 0);
	assert_int_equal(v, 0xabcd1234);
	vg_sim_fault_stats(f->sim, &st);
	assert_int_equal(st.raised, 9);
	assert_int_equal(st.handled, 9);
	assert_int_equal(st.replayed, 9);
	assert_int_equal(st.failed, 0);
	t_chan_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_ro_write_faults_read_does_not),
		T(test_map_prot_ro),
		T(test_big_pages_in_fault_range),
		T(test_ro_write_in_range_unprotects),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
