// SPDX-License-Identifier: MIT
/*
 * The VFIO transport's control-queue protocol (guest-driver/lib/vfio_ctrlq.c)
 * against a fake device that implements BAR0's queue registers as
 * include/uapi/vgmem.h describes them: batches of a ring's worth, slots
 * copied back in order, CTRLQ_ERROR (the queue stops, the guest re-arms
 * it), a device that does not answer (-ETIMEDOUT, then recovery), the
 * interrupt wait, and a register that cannot be read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "guest-driver/lib/vfio_priv.h"

#define RAM_GPA		0x100000ull
#define RING_ENTRIES	16

struct fake {
	struct vgmem_ctrl *ram;		/* "guest RAM": the ring lives here */
	uint64_t ram_size;
	uint64_t base;
	uint32_t entries, prod, cons;
	int32_t qerr;
	uint32_t cause, cause_acks;
	bool stuck;			/* never runs commands */
	bool lazy;			/* runs commands only when CONSUMER is read */
	unsigned int stall_reads;	/* lazy, but only after this many reads */
	int fail_reg;			/* register whose reads fail, -1: none */
	unsigned int doorbells, executed, waits;
};

static void fake_fail(struct fake *f, int32_t err)
{
	if (!f->qerr)
		f->qerr = err;
}

static void fake_exec(struct vgmem_ctrl *c)
{
	switch (c->op) {
	case VGMEM_CTRL_QUERY:
		c->status = 0;
		c->query.abi_version = VGMEM_ABI_VERSION;
		c->query.max_channels = 64;
		break;
	case VGMEM_CTRL_BO_ALLOC:
		/* Echo, so the test sees which slot came back where. */
		c->status = 0;
		c->bo.va = VGMEM_VA_START + c->bo.size;
		break;
	default:
		c->status = -EINVAL;
		break;
	}
}

static void fake_run(struct fake *f)
{
	uint64_t gpa;

	while (!f->stuck && !f->qerr && f->entries && f->cons != f->prod) {
		gpa = f->base + (uint64_t)(f->cons & (f->entries - 1)) * sizeof(struct vgmem_ctrl);
		if (gpa < RAM_GPA || gpa + sizeof(struct vgmem_ctrl) > RAM_GPA + f->ram_size) {
			fake_fail(f, -EFAULT);
			break;
		}
		fake_exec(&f->ram[(gpa - RAM_GPA) / sizeof(struct vgmem_ctrl)]);
		f->executed++;
		f->cons++;
		f->cause |= VGMEM_IRQ_CTRLQ;
	}
}

static bool fake_pending(struct fake *f)
{
	return f->entries && !f->qerr && f->prod != f->cons;
}

static int fake_rd(void *priv, uint32_t reg, uint32_t *val)
{
	struct fake *f = priv;

	if ((int)reg == f->fail_reg)
		return -EIO;
	switch (reg) {
	case VGMEM_REG_CTRLQ_CONSUMER:
		if (f->lazy && f->stall_reads)
			f->stall_reads--;
		else if (f->lazy)
			fake_run(f);
		*val = f->cons;
		return 0;
	case VGMEM_REG_STATUS:
		*val = VGMEM_STATUS_READY | (f->qerr ? VGMEM_STATUS_CTRLQ_ERROR : 0) |
		       (fake_pending(f) ? VGMEM_STATUS_CTRLQ_BUSY : 0);
		return 0;
	case VGMEM_REG_CTRLQ_ERROR:
		*val = (uint32_t)f->qerr;
		return 0;
	default:
		*val = 0;
		return 0;
	}
}

static int fake_wr(void *priv, uint32_t reg, uint32_t val)
{
	struct fake *f = priv;
	uint32_t ahead;

	switch (reg) {
	case VGMEM_REG_CTRLQ_BASE_LO:
		if (fake_pending(f))
			fake_fail(f, -EINVAL);
		else
			f->base = (f->base & ~0xffffffffull) | val;
		return 0;
	case VGMEM_REG_CTRLQ_BASE_HI:
		if (fake_pending(f))
			fake_fail(f, -EINVAL);
		else
			f->base = (f->base & 0xffffffffull) | ((uint64_t)val << 32);
		return 0;
	case VGMEM_REG_CTRLQ_ENTRIES:
		if (fake_pending(f)) {
			fake_fail(f, -EINVAL);
			return 0;
		}
		f->entries = val;
		f->prod = f->cons = 0;
		f->qerr = 0;
		return 0;
	case VGMEM_REG_CTRLQ_PRODUCER:
		if (f->qerr)
			return 0;
		ahead = val - f->cons;
		if (!f->entries || ahead > f->entries || ahead < f->prod - f->cons) {
			fake_fail(f, -EINVAL);
			return 0;
		}
		f->prod = val;
		f->doorbells++;
		if (!f->lazy)
			fake_run(f);
		return 0;
	case VGMEM_REG_IRQ_CAUSE:
		f->cause &= ~val;
		f->cause_acks++;
		return 0;
	default:
		return 0;
	}
}

/* The "interrupt": the device finishes the work while we wait. */
static int fake_wait(void *priv, uint64_t max_ns)
{
	struct fake *f = priv;

	(void)max_ns;
	f->waits++;
	fake_run(f);
	return 0;
}

struct fix {
	struct fake f;
	struct vgmem_ctrlq_drv q;
	struct vgmem_regs regs;
};

static int setup(void **state)
{
	struct fix *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	x->f.ram_size = RING_ENTRIES * sizeof(struct vgmem_ctrl);
	x->f.ram = calloc(RING_ENTRIES, sizeof(struct vgmem_ctrl));
	assert_non_null(x->f.ram);
	x->f.fail_reg = -1;
	x->regs.rd = fake_rd;
	x->regs.wr = fake_wr;
	x->regs.priv = &x->f;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fix *x = *state;

	vgmem_ctrlq_drv_fini(&x->q);
	free(x->f.ram);
	free(x);
	return 0;
}

static void init_q(struct fix *x, uint64_t timeout_ns)
{
	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &x->regs, x->f.ram, RAM_GPA,
					  RING_ENTRIES, timeout_ns), 0);
	assert_int_equal(x->f.entries, RING_ENTRIES);
	assert_true(x->f.base == RAM_GPA);
}

static void test_init_rejects(void **state)
{
	struct fix *x = *state;
	struct vgmem_regs none = { 0 };

	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &x->regs, x->f.ram, RAM_GPA, 0, 0), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &x->regs, x->f.ram, RAM_GPA, 12, 0), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &x->regs, x->f.ram, RAM_GPA, 512, 0), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &x->regs, x->f.ram, RAM_GPA + 8, 16, 0), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &x->regs, x->f.ram, 0, 16, 0), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &x->regs, NULL, RAM_GPA, 16, 0), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_init(&x->q, &none, x->f.ram, RAM_GPA, 16, 0), -EINVAL);
	/* Nothing was programmed by any of them. */
	assert_int_equal(x->f.entries, 0);
	init_q(x, 0);
}

static void test_batches_in_order(void **state)
{
	struct fix *x = *state;
	struct vgmem_ctrl cmds[100];
	uint32_t i;

	init_q(x, 0);
	memset(cmds, 0, sizeof(cmds));
	for (i = 0; i < 100; i++) {
		cmds[i].op = i % 10 == 9 ? 0x7777 : VGMEM_CTRL_BO_ALLOC;
		cmds[i].bo.size = 4096ull * (i + 1);
	}
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, cmds, 100), 0);
	/* 100 commands through a 16-slot ring: 7 doorbells, all run. */
	assert_int_equal(x->f.doorbells, 7);
	assert_int_equal(x->f.executed, 100);
	for (i = 0; i < 100; i++) {
		if (i % 10 == 9) {
			assert_int_equal(cmds[i].status, -EINVAL);
		} else {
			assert_int_equal(cmds[i].status, 0);
			assert_true(cmds[i].bo.va == VGMEM_VA_START + 4096ull * (i + 1));
		}
	}
	/* Single commands keep working after the ring wrapped. */
	memset(cmds, 0, sizeof(cmds[0]));
	cmds[0].op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, cmds, 1), 0);
	assert_int_equal(cmds[0].query.abi_version, VGMEM_ABI_VERSION);
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, cmds, 0), 0);
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, NULL, 1), -EINVAL);
}

static void test_queue_error_rearms(void **state)
{
	struct fix *x = *state;
	struct vgmem_ctrl c;

	init_q(x, 0);
	/* The device finds the ring unreadable (as if unmapped). */
	x->f.ram_size = 0;
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), -EFAULT);
	assert_non_null(strstr(vgmem_vfio_error(), "CTRLQ_ERROR -14"));
	/* The queue was re-armed; once readable it runs again. */
	assert_int_equal(x->f.qerr, 0);
	x->f.ram_size = RING_ENTRIES * sizeof(struct vgmem_ctrl);
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), 0);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.query.abi_version, VGMEM_ABI_VERSION);
}

static void test_timeout_then_recovery(void **state)
{
	struct fix *x = *state;
	struct vgmem_ctrl c;

	init_q(x, 20 * 1000000ull);
	x->f.stuck = true;
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), -ETIMEDOUT);
	assert_non_null(strstr(vgmem_vfio_error(), "not completed"));
	/* Still stuck: the next caller waits for the old slot and gives up. */
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), -ETIMEDOUT);
	assert_int_equal(x->f.doorbells, 1);
	/* The device catches up late: the old command completes, then ours. */
	x->f.stuck = false;
	x->f.lazy = true;
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), 0);
	assert_int_equal(c.query.abi_version, VGMEM_ABI_VERSION);
	assert_int_equal(x->f.executed, 2);
}

/*
 * With no deadline given (as libvgmem's VFIO transport opens it) a command
 * the device takes long over is waited for, never failed: a slow host is
 * not an error a tenant sees. The stall here is 1500 polls (over 0.1 s of
 * sleeps); the point is that the default has no deadline at all.
 */
static void test_slow_device_is_not_an_error(void **state)
{
	struct fix *x = *state;
	struct vgmem_ctrl c;

	init_q(x, 0);
	assert_true(x->q.timeout_ns == UINT64_MAX);
	x->f.lazy = true;
	x->f.stall_reads = 1500;
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), 0);
	assert_int_equal(x->f.stall_reads, 0);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.query.abi_version, VGMEM_ABI_VERSION);
}

static void test_abuse(void **state)
{
	struct fix *x = *state;
	struct vgmem_ctrl c;
	uint32_t status = 0;
	int32_t qerr = 0;

	init_q(x, 0);
	assert_int_equal(vgmem_ctrlq_drv_abuse(&x->q, VGMEM_CTRLQ_PRODUCER_AHEAD,
					   RING_ENTRIES + 1, &status, &qerr), 0);
	assert_true(status & VGMEM_STATUS_CTRLQ_ERROR);
	assert_int_equal(qerr, -EINVAL);
	assert_int_equal(x->f.qerr, 0);
	assert_true(x->f.base == RAM_GPA);

	assert_int_equal(vgmem_ctrlq_drv_abuse(&x->q, VGMEM_CTRLQ_BASE_AT, 0x40000000ull,
					   &status, &qerr), 0);
	assert_true(status & VGMEM_STATUS_CTRLQ_ERROR);
	assert_int_equal(qerr, -EFAULT);
	/* Re-armed at the real ring. */
	assert_true(x->f.base == RAM_GPA);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), 0);
	assert_int_equal(c.status, 0);

	/* Bad requests change nothing. */
	assert_int_equal(vgmem_ctrlq_drv_abuse(&x->q, VGMEM_CTRLQ_PRODUCER_AHEAD, 0,
					   &status, &qerr), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_abuse(&x->q, 7, 0, &status, &qerr), -EINVAL);
	assert_int_equal(vgmem_ctrlq_drv_abuse(&x->q, VGMEM_CTRLQ_BASE_AT, 0, NULL, &qerr),
			 -EINVAL);
}

static void test_irq_wait(void **state)
{
	struct fix *x = *state;
	struct vgmem_ctrl c[40];
	uint32_t i;

	x->regs.wait = fake_wait;
	x->f.lazy = true;		/* completes only when waited for (or read) */
	init_q(x, 0);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 40; i++)
		c[i].op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, c, 40), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(c[i].status, 0);
	/* Each doorbell was preceded by acknowledging the completion cause. */
	assert_int_equal(x->f.doorbells, 3);
	assert_true(x->f.cause_acks >= 3);
}

static void test_register_error(void **state)
{
	struct fix *x = *state;
	struct vgmem_ctrl c;

	init_q(x, 0);
	x->f.fail_reg = VGMEM_REG_CTRLQ_CONSUMER;
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), -EIO);
	assert_non_null(strstr(vgmem_vfio_error(), "0x020"));
	x->f.fail_reg = -1;
	assert_int_equal(vgmem_ctrlq_drv_run(&x->q, &c, 1), 0);
}

/* The ring arithmetic of include/uapi/vgmem.h that both ends share. */
static void test_ring_arithmetic(void **state)
{
	(void)state;
	assert_false(vgmem_ctrlq_entries_ok(0));
	assert_true(vgmem_ctrlq_entries_ok(1));
	assert_true(vgmem_ctrlq_entries_ok(VGMEM_CTRLQ_ENTRIES_MAX));
	assert_false(vgmem_ctrlq_entries_ok(3));
	assert_false(vgmem_ctrlq_entries_ok(2 * VGMEM_CTRLQ_ENTRIES_MAX));
	assert_false(vgmem_ctrlq_entries_ok(0x80000000u));

	assert_int_equal(vgmem_ctrlq_slot_gpa(0x10000, 8, 0), 0x10000);
	assert_int_equal(vgmem_ctrlq_slot_gpa(0x10000, 8, 9), 0x10000 + VGMEM_CTRL_SLOT_SIZE);
	assert_int_equal(vgmem_ctrlq_slot_gpa(0x10000, 8, 0xffffffffu),
			 0x10000 + 7 * VGMEM_CTRL_SLOT_SIZE);

	/* A ring ahead is fine, one more is not; so across the 2^32 wrap. */
	assert_true(vgmem_ctrlq_producer_ok(8, 0, 0, 8));
	assert_false(vgmem_ctrlq_producer_ok(9, 0, 0, 8));
	assert_true(vgmem_ctrlq_producer_ok(4, 0xfffffffcu, 0xfffffffcu, 8));
	assert_false(vgmem_ctrlq_producer_ok(5, 0xfffffffcu, 0xfffffffcu, 8));
	/* Never back over queued commands; standing still is allowed. */
	assert_false(vgmem_ctrlq_producer_ok(2, 3, 1, 8));
	assert_true(vgmem_ctrlq_producer_ok(3, 3, 1, 8));
	assert_false(vgmem_ctrlq_producer_ok(0xffffffffu, 1, 0, 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_arithmetic),
		cmocka_unit_test_setup_teardown(test_init_rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batches_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_error_rearms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_then_recovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_device_is_not_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_irq_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_error, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
