// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The control dispatcher: every op, every field check (unknown ops,
 * non-zero reserved bytes and unused inputs are -EINVAL and change
 * nothing), and the results matching the direct API.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CH		(64 * KiB)
#define GMEM_SIZE	(64 * KiB)

struct t {
	struct cfx f;
	struct vg_vm *vm;
	struct cfx_gmem gm;
};

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));
	struct vg_vm_config cfg = { .name = "guest", .quota = 64 * CH };

	if (!t)
		return -1;
	cfx_gmem_init(&t->gm, GMEM_SIZE);
	cfg.gmem = cfx_gmem_of(&t->gm);
	cfx_init(&t->f, 32 * CH, CH, VG_POLICY_LRA);
	t->vm = cfx_vm_cfg(&t->f, &cfg);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	cfx_fini(&t->f);
	cfx_gmem_fini(&t->gm);
	free(t);
	return 0;
}

static struct vgmem_ctrl cmd(u32 op)
{
	struct vgmem_ctrl c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.status = 12345;	/* must be overwritten */
	return c;
}

static void test_query(void **state)
{
	struct t *t = *state;
	struct vgmem_ctrl c = cmd(VGMEM_CTRL_QUERY);

	/* Output fields may hold anything on input. */
	c.query.quota = 77;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.query.abi_version, VGMEM_ABI_VERSION);
	assert_int_equal(c.query.max_channels, 64);
	assert_int_equal(c.query.quota, 64 * CH);
	assert_int_equal(c.query.chunk_size, CH);
	assert_int_equal(c.query.va_start, VGMEM_VA_START);
	assert_int_equal(c.query.va_end, VGMEM_VA_END);
}

static void test_bad_ops_and_tails(void **state)
{
	struct t *t = *state;
	static const u32 bad_ops[] = { 0, VGMEM_CTRL_OP_MAX, 100, 0xffffffffu };
	static const u32 ops[] = {
		VGMEM_CTRL_QUERY, VGMEM_CTRL_CHAN_CREATE,
		VGMEM_CTRL_CHAN_DESTROY, VGMEM_CTRL_BO_ALLOC,
		VGMEM_CTRL_BO_FREE, VGMEM_CTRL_STATS,
	};
	static const size_t used[] = {
		sizeof(struct vgmem_ctrl_query), sizeof(struct vgmem_ctrl_chan),
		sizeof(struct vgmem_ctrl_chan), sizeof(struct vgmem_ctrl_bo),
		sizeof(struct vgmem_ctrl_bo), sizeof(struct vgmem_vm_stats),
	};
	struct vgmem_ctrl c, orig;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_ops); i++) {
		c = cmd(bad_ops[i]);
		vg_ctrl_exec(t->vm, &c);
		assert_int_equal(c.status, -EINVAL);
	}
	/* A stray byte after the op's structure. */
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		/* STATS fills the whole payload: no byte comes after it. */
		if (used[i] >= sizeof(c.raw))
			continue;
		c = cmd(ops[i]);
		if (ops[i] == VGMEM_CTRL_BO_ALLOC)
			c.bo.size = CH;
		c.raw[used[i]] = 1;
		orig = c;
		vg_ctrl_exec(t->vm, &c);
		assert_int_equal(c.status, -EINVAL);
		/* Rejected commands leave the payload alone. */
		assert_memory_equal(c.raw, orig.raw, sizeof(c.raw));
		c = cmd(ops[i]);
		c.raw[sizeof(c.raw) - 1] = 0x80;
		vg_ctrl_exec(t->vm, &c);
		assert_int_equal(c.status, -EINVAL);
	}
	c = cmd(VGMEM_CTRL_QUERY);
	vg_ctrl_exec(NULL, &c);
	assert_int_equal(c.status, -EINVAL);
	vg_ctrl_exec(t->vm, NULL);
	assert_int_equal(cfx_stats(t->vm).allocated, 0);
	assert_int_equal(fake_nr_chans(t->f.fb), 0);
}

static void test_bo_alloc_free(void **state)
{
	struct t *t = *state;
	struct vgmem_ctrl c = cmd(VGMEM_CTRL_BO_ALLOC);
	u64 va;

	c.bo.size = 3 * CH + 4096;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	va = c.bo.va;
	assert_int_equal(va, VGMEM_VA_START);
	assert_int_equal(cfx_stats(t->vm).allocated, 3 * CH + 4096);
	assert_non_null(cfx_bo(t->vm, va));

	/* Fixed VA. */
	c = cmd(VGMEM_CTRL_BO_ALLOC);
	c.bo.size = CH;
	c.bo.flags = VGMEM_BO_FIXED_VA;
	c.bo.va = VGMEM_VA_START + 16 * CH;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.bo.va, VGMEM_VA_START + 16 * CH);

	/* Errors of the API come through: overlap, bad size, quota. */
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c = cmd(VGMEM_CTRL_BO_ALLOC);
	c.bo.size = 100;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.bo.size = 61 * CH;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -ENOSPC);
	assert_int_equal(c.bo.va, 0);

	/* Reserved and unused inputs must be zero. */
	c = cmd(VGMEM_CTRL_BO_ALLOC);
	c.bo.size = CH;
	c.bo.rsvd = 1;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.bo.rsvd = 0;
	c.bo.va = VGMEM_VA_START + 40 * CH;	/* va without FIXED_VA */
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.bo.va = 0;
	c.bo.flags = 0x10;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	assert_int_equal(cfx_stats(t->vm).allocated, 4 * CH + 4096);

	c = cmd(VGMEM_CTRL_BO_FREE);
	c.bo.va = va;
	c.bo.size = 3 * CH + 4096;	/* unused on free: must be 0 */
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.bo.size = 0;
	c.bo.flags = VGMEM_BO_FIXED_VA;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.bo.flags = 0;
	c.bo.rsvd = 5;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	assert_int_equal(cfx_stats(t->vm).allocated, 4 * CH + 4096);
	c.bo.rsvd = 0;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -ENOENT);
	c.bo.va = VGMEM_VA_START + 16 * CH;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	assert_int_equal(cfx_stats(t->vm).allocated, 0);
}

static void test_chan(void **state)
{
	struct t *t = *state;
	struct vgmem_ctrl c = cmd(VGMEM_CTRL_CHAN_CREATE);
	u32 id1, id2;

	c.chan.gpfifo_gpa = 0x1000;
	c.chan.gpfifo_entries = 64;
	c.chan.chan_id = 999;	/* output: ignored on input */
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	id1 = c.chan.chan_id;
	assert_true(id1 < VGMEM_MAX_CHANNELS);
	assert_non_null(vg_chan_lookup(t->vm, id1));
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	id2 = c.chan.chan_id;
	assert_int_not_equal(id1, id2);
	assert_int_equal(fake_nr_chans(t->f.fb), 2);

	/* Rings the channel code rejects. */
	c = cmd(VGMEM_CTRL_CHAN_CREATE);
	c.chan.gpfifo_gpa = 0x1004;
	c.chan.gpfifo_entries = 64;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.chan.gpfifo_gpa = GMEM_SIZE - 8;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.chan.gpfifo_gpa = 0;
	c.chan.gpfifo_entries = 63;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	assert_int_equal(fake_nr_chans(t->f.fb), 2);

	c = cmd(VGMEM_CTRL_CHAN_DESTROY);
	c.chan.chan_id = id1;
	c.chan.gpfifo_entries = 64;	/* unused on destroy: must be 0 */
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	c.chan.gpfifo_entries = 0;
	c.chan.gpfifo_gpa = 0x1000;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -EINVAL);
	assert_int_equal(fake_nr_chans(t->f.fb), 2);
	c.chan.gpfifo_gpa = 0;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	assert_null(vg_chan_lookup(t->vm, id1));
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -ENOENT);
	c.chan.chan_id = 0;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, -ENOENT);
	assert_int_equal(fake_nr_chans(t->f.fb), 1);
	/* id2 is left for the VM's destroy. */
	(void)id2;
}

static void test_stats(void **state)
{
	struct t *t = *state;
	struct vgmem_ctrl c = cmd(VGMEM_CTRL_BO_ALLOC);
	struct vgmem_vm_stats st;

	c.bo.size = 5 * CH;
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	c = cmd(VGMEM_CTRL_STATS);
	memset(&c.stats, 0xff, sizeof(c.stats));	/* output only */
	vg_ctrl_exec(t->vm, &c);
	assert_int_equal(c.status, 0);
	vg_vm_get_stats(t->vm, &st);
	assert_memory_equal(&st, &c.stats, sizeof(st));
	assert_int_equal(c.stats.allocated, 5 * CH);
	assert_int_equal(c.stats.resident, 5 * CH);
	assert_int_equal(c.stats.quota, 64 * CH);
	assert_int_equal(c.stats.entitlement, 32 * CH);
	assert_int_equal(cfx_hist_sum(c.stats.stall_hist), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_ops_and_tails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bo_alloc_free, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_chan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
