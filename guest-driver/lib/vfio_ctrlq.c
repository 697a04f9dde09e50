// SPDX-License-Identifier: MIT
/*
 * The control queue of a vGPU PCI device, driver side: the guest's end
 * (the host's device side is host-module/linux/ctrlq.c; the ring arithmetic
 * both ends use is in include/uapi/vgmem.h, "Control queue"). Slots of
 * struct vgmem_ctrl in guest memory, a PRODUCER doorbell and a CONSUMER
 * register in BAR0. Commands go in batches of at most a ring's worth; one
 * submitter at a time, so the slots between CONSUMER and our producer are
 * always ours.
 *
 * Registers are reached through struct vgmem_regs so that this file runs
 * against a fake device in the unit tests exactly as against the kernel.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "vfio_priv.h"
#include "vgmem_priv.h"

/* How long one interrupt wait lasts before CONSUMER is read again anyway. */
#define CTRLQ_IRQ_SLICE_NS	(10ull * 1000000ull)
/* How long a hostile-queue check waits for the device to react. */
#define CTRLQ_ABUSE_WAIT_NS	(5ull * 1000000000ull)

static __thread char vfio_err[256];

void vgmem_vfio_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vfio_err, sizeof(vfio_err), fmt, ap);
	va_end(ap);
}

const char *vgmem_vfio_error(void)
{
	return vfio_err[0] ? vfio_err : "no error";
}

static int rd(struct vgmem_ctrlq_drv *q, uint32_t reg, uint32_t *val)
{
	int ret = q->regs.rd(q->regs.priv, reg, val);

	if (ret)
		vgmem_vfio_set_error("control queue: reading BAR0 register 0x%03x: %s",
				     reg, strerror(-ret));
	return ret;
}

static int wr(struct vgmem_ctrlq_drv *q, uint32_t reg, uint32_t val)
{
	int ret = q->regs.wr(q->regs.priv, reg, val);

	if (ret)
		vgmem_vfio_set_error("control queue: writing BAR0 register 0x%03x: %s",
				     reg, strerror(-ret));
	return ret;
}

/*
 * (Re)start the queue at its ring: base, then entries, which also restarts
 * a queue stopped by an error. If commands were pending the first write of
 * ENTRIES may itself stop the queue (the device cannot tell a restart from
 * a guest changing the ring under it), so an error left after it gets one
 * more write. New commands start at CONSUMER.
 */
static int ctrlq_arm(struct vgmem_ctrlq_drv *q)
{
	uint32_t status, cons;
	int ret, tries;

	for (tries = 0; tries < 2; tries++) {
		ret = wr(q, VGMEM_REG_CTRLQ_BASE_LO, (uint32_t)q->ring_gpa);
		if (!ret)
			ret = wr(q, VGMEM_REG_CTRLQ_BASE_HI, (uint32_t)(q->ring_gpa >> 32));
		if (!ret)
			ret = wr(q, VGMEM_REG_CTRLQ_ENTRIES, q->entries);
		if (!ret)
			ret = rd(q, VGMEM_REG_STATUS, &status);
		if (ret)
			return ret;
		if (!(status & VGMEM_STATUS_CTRLQ_ERROR))
			break;
	}
	if (status & VGMEM_STATUS_CTRLQ_ERROR) {
		vgmem_vfio_set_error("control queue: the device keeps CTRLQ_ERROR set after re-arming (status 0x%x)",
				     status);
		return -EIO;
	}
	ret = rd(q, VGMEM_REG_CTRLQ_CONSUMER, &cons);
	if (ret)
		return ret;
	q->prod = cons;
	return 0;
}

int vgmem_ctrlq_drv_init(struct vgmem_ctrlq_drv *q, const struct vgmem_regs *regs,
		     struct vgmem_ctrl *ring, uint64_t ring_gpa, uint32_t entries,
		     uint64_t timeout_ns)
{
	int ret;

	if (!q || !regs || !regs->rd || !regs->wr || !ring ||
	    !vgmem_ctrlq_entries_ok(entries) ||
	    !ring_gpa || (ring_gpa & (VGMEM_VFIO_PAGE - 1)))
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->regs = *regs;
	q->ring = ring;
	q->ring_gpa = ring_gpa;
	q->entries = entries;
	q->timeout_ns = timeout_ns ? timeout_ns : UINT64_MAX;
	memset(ring, 0, (size_t)entries * sizeof(*ring));
	ret = ctrlq_arm(q);
	if (ret)
		return ret;
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

void vgmem_ctrlq_drv_fini(struct vgmem_ctrlq_drv *q)
{
	if (!q || !q->entries)
		return;
	/* Stop the device from reading a ring that is about to be unmapped. */
	q->regs.wr(q->regs.priv, VGMEM_REG_CTRLQ_ENTRIES, 0);
	pthread_mutex_destroy(&q->lock);
	q->entries = 0;
}

static void relax(unsigned int spins)
{
	vgmem_relax(spins);
}

/*
 * Wait until CONSUMER reaches target. 0 when it did, 1 with *qerr when the
 * device stopped the queue instead, -ETIMEDOUT, or a register error.
 */
static int ctrlq_wait(struct vgmem_ctrlq_drv *q, uint32_t target, uint64_t timeout_ns,
		      int32_t *qerr)
{
	uint64_t start = vgmem_now_ns(), now, left;
	uint32_t cons, status, e;
	unsigned int spins;
	int ret;

	for (spins = 0;; spins++) {
		ret = rd(q, VGMEM_REG_CTRLQ_CONSUMER, &cons);
		if (ret)
			return ret;
		if ((int32_t)(cons - target) >= 0)
			return 0;
		ret = rd(q, VGMEM_REG_STATUS, &status);
		if (ret)
			return ret;
		if (status & VGMEM_STATUS_CTRLQ_ERROR) {
			ret = rd(q, VGMEM_REG_CTRLQ_ERROR, &e);
			if (ret)
				return ret;
			*qerr = (int32_t)e < 0 ? (int32_t)e : -EIO;
			return 1;
		}
		now = vgmem_now_ns();
		if (now - start >= timeout_ns)
			return -ETIMEDOUT;
		if (q->regs.wait) {
			left = timeout_ns - (now - start);
			ret = q->regs.wait(q->regs.priv, left < CTRLQ_IRQ_SLICE_NS ?
					   left : CTRLQ_IRQ_SLICE_NS);
			if (ret) {
				vgmem_vfio_set_error("control queue: waiting for the interrupt: %s",
						     strerror(-ret));
				return ret;
			}
		} else {
			relax(spins);
		}
	}
}

/* After a timeout the device may still own slots: wait for them first. */
static int ctrlq_settle(struct vgmem_ctrlq_drv *q)
{
	int32_t qerr = 0;
	int ret;

	ret = ctrlq_wait(q, q->prod, q->timeout_ns, &qerr);
	if (ret == 1)
		return ctrlq_arm(q);
	if (ret == -ETIMEDOUT)
		vgmem_vfio_set_error("control queue: earlier commands still not completed after %llu ms",
				     (unsigned long long)(q->timeout_ns / 1000000));
	return ret;
}

int vgmem_ctrlq_drv_run(struct vgmem_ctrlq_drv *q, struct vgmem_ctrl *cmds, uint32_t n)
{
	uint32_t done = 0, k, i, mask;
	int32_t qerr = 0;
	int ret;

	if (!q || (!cmds && n))
		return -EINVAL;
	mask = q->entries - 1;
	pthread_mutex_lock(&q->lock);
	ret = ctrlq_settle(q);
	while (!ret && done < n) {
		k = n - done < q->entries ? n - done : q->entries;
		for (i = 0; i < k; i++)
			memcpy(&q->ring[(q->prod + i) & mask], &cmds[done + i],
			       sizeof(*cmds));
		/* The slots must be in memory before the device hears the bell. */
		vgmem_fence_release();
		/* An edge we acknowledge now cannot hide this batch's interrupt. */
		if (q->regs.wait) {
			ret = wr(q, VGMEM_REG_IRQ_CAUSE, VGMEM_IRQ_CTRLQ);
			if (ret)
				break;
		}
		ret = wr(q, VGMEM_REG_CTRLQ_PRODUCER, q->prod + k);
		if (ret)
			break;
		q->prod += k;
		ret = ctrlq_wait(q, q->prod, q->timeout_ns, &qerr);
		if (ret == 1) {
			vgmem_vfio_set_error("control queue: the device stopped the queue: CTRLQ_ERROR %d (%s)",
					     qerr, strerror(-qerr));
			/* Put the queue back for the next caller; report the error. */
			ctrlq_arm(q);
			ret = qerr;
			break;
		}
		if (ret == -ETIMEDOUT) {
			vgmem_vfio_set_error("control queue: %u command(s) not completed after %llu ms",
					     k, (unsigned long long)(q->timeout_ns / 1000000));
			break;
		}
		if (ret)
			break;
		vgmem_fence_acquire();
		for (i = 0; i < k; i++)
			memcpy(&cmds[done + i], &q->ring[(q->prod - k + i) & mask],
			       sizeof(*cmds));
		done += k;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int vgmem_ctrlq_drv_abuse(struct vgmem_ctrlq_drv *q, enum vgmem_ctrlq_drv_abuse how,
		      uint64_t arg, uint32_t *status, int32_t *qerr)
{
	uint64_t wait_ns;
	uint32_t cons, e;
	int32_t werr = 0;
	int ret;

	if (!q || !status || !qerr)
		return -EINVAL;
	if (how == VGMEM_CTRLQ_PRODUCER_AHEAD && (arg == 0 || arg > UINT32_MAX / 2))
		return -EINVAL;
	if (how != VGMEM_CTRLQ_BASE_AT && how != VGMEM_CTRLQ_PRODUCER_AHEAD)
		return -EINVAL;
	wait_ns = q->timeout_ns < CTRLQ_ABUSE_WAIT_NS ? q->timeout_ns : CTRLQ_ABUSE_WAIT_NS;
	pthread_mutex_lock(&q->lock);
	ret = ctrlq_settle(q);
	if (ret)
		goto out_unlock;
	if (how == VGMEM_CTRLQ_BASE_AT) {
		ret = wr(q, VGMEM_REG_CTRLQ_BASE_LO, (uint32_t)arg);
		if (!ret)
			ret = wr(q, VGMEM_REG_CTRLQ_BASE_HI, (uint32_t)(arg >> 32));
		if (!ret)
			ret = wr(q, VGMEM_REG_CTRLQ_ENTRIES, q->entries);
		if (!ret)
			ret = rd(q, VGMEM_REG_CTRLQ_CONSUMER, &cons);
		if (!ret)
			ret = wr(q, VGMEM_REG_CTRLQ_PRODUCER, cons + 1);
		if (ret)
			goto out_rearm;
		ret = ctrlq_wait(q, cons + 1, wait_ns, &werr);
	} else {
		/* Slots a well-behaved device might run anyway: make them no-ops. */
		memset(q->ring, 0, (size_t)q->entries * sizeof(*q->ring));
		ret = rd(q, VGMEM_REG_CTRLQ_CONSUMER, &cons);
		if (!ret)
			ret = wr(q, VGMEM_REG_CTRLQ_PRODUCER, cons + (uint32_t)arg);
		if (ret)
			goto out_rearm;
		ret = ctrlq_wait(q, cons + (uint32_t)arg, wait_ns, &werr);
	}
	/* Whatever the device did (or did not) is the result; record it. */
	ret = rd(q, VGMEM_REG_STATUS, status);
	if (!ret)
		ret = rd(q, VGMEM_REG_CTRLQ_ERROR, &e);
	if (!ret)
		*qerr = (int32_t)e;
out_rearm:
	if (!ret)
		ret = ctrlq_arm(q);
	else
		ctrlq_arm(q);
out_unlock:
	pthread_mutex_unlock(&q->lock);
	return ret;
}
