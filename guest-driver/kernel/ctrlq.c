// SPDX-License-Identifier: GPL-2.0
/*
 * The control queue, driver side (include/uapi/vgmem.h, "Control queue";
 * the same protocol as libvgmem's VFIO transport): VGG_CTRLQ_ENTRIES
 * slots of struct vgmem_ctrl in one coherent DMA page, a PRODUCER
 * doorbell and a CONSUMER register in BAR0.
 *
 * One submitter at a time (ctrlq_lock), one command at a time: the slot
 * between CONSUMER and our producer is always ours. The submitter waits
 * for CONSUMER to pass its command, woken by the interrupt, and reads the
 * register again after every slice anyway (a lost or absent interrupt
 * costs a slice, never the command). Slowness is not an error: the device
 * may take long (an allocation can wait for a relocation on the host), so
 * the wait only warns after a generous bound and goes on.
 *
 * Signals: waiting for the queue is interruptible (-EINTR, nothing was
 * sent). Once the doorbell rang the command is the device's and its
 * answer must be kept (a channel created for a dying process must still
 * be known, to be destroyed at close), so the rest of the wait ends only
 * for a fatal signal, and then the submitter leaves an IOU (struct
 * vgg_owed): the next submitter waits for that command first and keeps
 * its answer there, and the killed submitter's file applies it under its
 * lock before doing anything else (file.c, vgg_file_settle). Internal
 * commands (release, remove, probe) wait for the device alone. The device
 * going away ends every wait (-ENODEV).
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>

#include "vgmem_guest_drv.h"

/* Interrupt wait before CONSUMER is read again anyway. */
#define VGG_CTRLQ_SLICE_MS	10
/* A command still running after this long is reported (and waited for). */
#define VGG_CTRLQ_WARN_MS	30000
/* How long remove() lets a command in flight land before stopping the queue. */
#define VGG_CTRLQ_QUIESCE_MS	2000

/*
 * (Re)start the queue at its ring: base, then entries, which also restarts
 * a queue stopped by an error. If commands were pending the first write of
 * ENTRIES may itself stop the queue, so an error left after it gets one
 * more write. New commands start at CONSUMER.
 */
int vgg_ctrlq_arm(struct vgg_dev *gdev)
{
	u32 status = 0, cons;
	int ret, tries;

	lockdep_assert_held(&gdev->ctrlq_lock);
	memset(gdev->ring, 0, VGG_CTRLQ_ENTRIES * sizeof(*gdev->ring));
	for (tries = 0; tries < 2; tries++) {
		ret = vgg_reg_write(gdev, VGMEM_REG_CTRLQ_BASE_LO, lower_32_bits(gdev->ring_dma));
		if (!ret)
			ret = vgg_reg_write(gdev, VGMEM_REG_CTRLQ_BASE_HI,
					    upper_32_bits(gdev->ring_dma));
		if (!ret)
			ret = vgg_reg_write(gdev, VGMEM_REG_CTRLQ_ENTRIES, VGG_CTRLQ_ENTRIES);
		if (!ret)
			ret = vgg_reg_read(gdev, VGMEM_REG_STATUS, &status);
		if (ret)
			return ret;
		if (!(status & VGMEM_STATUS_CTRLQ_ERROR))
			break;
	}
	if (status & VGMEM_STATUS_CTRLQ_ERROR) {
		dev_err(&gdev->pdev->dev, "control queue: CTRLQ_ERROR stays set after re-arming (status 0x%x)\n",
			status);
		return -EIO;
	}
	ret = vgg_reg_read(gdev, VGMEM_REG_CTRLQ_CONSUMER, &cons);
	if (ret)
		return ret;
	gdev->ctrlq_prod = cons;
	gdev->ctrlq_broken = false;
	return 0;
}

/*
 * Has CONSUMER reached target? 1 yes, 0 not yet, -ENODEV the device is
 * gone, -EIO the device stopped the queue (*qerr its CTRLQ_ERROR).
 */
static int vgg_ctrlq_check(struct vgg_dev *gdev, u32 target, s32 *qerr)
{
	unsigned long flags;
	u32 cons, status;
	int ret = 0;

	spin_lock_irqsave(&gdev->lock, flags);
	if (gdev->gone) {
		ret = -ENODEV;
		goto out;
	}
	cons = ioread32(gdev->regs + VGMEM_REG_CTRLQ_CONSUMER);
	status = 0;
	if (cons == ~0u) {
		status = ioread32(gdev->regs + VGMEM_REG_STATUS);
		/* All ones from every register: the device has been pulled out. */
		if (status == ~0u) {
			ret = -ENODEV;
			goto out;
		}
	}
	if ((s32)(cons - target) >= 0) {
		ret = 1;
		goto out;
	}
	/* Each read is a trap to the hypervisor: STATUS only when needed. */
	if (cons != ~0u)
		status = ioread32(gdev->regs + VGMEM_REG_STATUS);
	if (status & VGMEM_STATUS_CTRLQ_ERROR) {
		*qerr = (s32)ioread32(gdev->regs + VGMEM_REG_CTRLQ_ERROR);
		ret = -EIO;
	}
out:
	spin_unlock_irqrestore(&gdev->lock, flags);
	return ret;
}

enum vgg_wait {
	VGG_WAIT_INTR,		/* any signal ends it: nothing handed over yet */
	VGG_WAIT_KILLABLE,	/* only a fatal signal: the caller keeps an IOU */
	VGG_WAIT_UNINTR,	/* nothing but the device ends it */
};

/*
 * Wait for CONSUMER to reach target: 0, -ENODEV, -EIO (*qerr) or, as the
 * mode allows, -EINTR.
 */
static int vgg_ctrlq_wait(struct vgg_dev *gdev, u32 target, u32 op, s32 *qerr,
			  enum vgg_wait mode)
{
	unsigned long start = jiffies, warned = 0, slice;
	long r = 0;
	int ret;

	slice = gdev->irq >= 0 ? msecs_to_jiffies(VGG_CTRLQ_SLICE_MS) : 1;
	for (;;) {
		ret = vgg_ctrlq_check(gdev, target, qerr);
		if (ret)
			return ret < 0 ? ret : 0;
		switch (mode) {
		case VGG_WAIT_INTR:
			r = wait_event_interruptible_timeout(gdev->wq,
					vgg_ctrlq_check(gdev, target, qerr) != 0, slice);
			break;
		case VGG_WAIT_KILLABLE:
			r = wait_event_killable_timeout(gdev->wq,
					vgg_ctrlq_check(gdev, target, qerr) != 0, slice);
			break;
		case VGG_WAIT_UNINTR:
			wait_event_idle_timeout(gdev->wq,
					vgg_ctrlq_check(gdev, target, qerr) != 0, slice);
			break;
		}
		if (r < 0)
			return -EINTR;
		if (jiffies_to_msecs(jiffies - start) / VGG_CTRLQ_WARN_MS > warned) {
			warned++;
			dev_warn(&gdev->pdev->dev, "control command %u still running after %lu s; waiting on\n",
				 op, warned * (VGG_CTRLQ_WARN_MS / 1000));
		}
	}
}

static struct vgmem_ctrl *vgg_ctrlq_slot(struct vgg_dev *gdev, u32 index)
{
	return &gdev->ring[index & (VGG_CTRLQ_ENTRIES - 1)];
}

/* The wait for the command in slot ended with ret: take its answer. */
static int vgg_ctrlq_collect(struct vgg_dev *gdev, int ret, s32 qerr,
			     struct vgmem_ctrl *cmd, const struct vgmem_ctrl *slot)
{
	lockdep_assert_held(&gdev->ctrlq_lock);
	if (ret == -EIO) {
		dev_err_ratelimited(&gdev->pdev->dev, "control queue stopped by the device: CTRLQ_ERROR %d (command %u)\n",
				    qerr, cmd->op);
		gdev->ctrlq_broken = true;
		vgg_ctrlq_arm(gdev);
		return ret;
	}
	if (ret)
		return ret;
	dma_rmb();
	memcpy(cmd, slot, sizeof(*cmd));
	return 0;
}

/*
 * A killed submitter left its command with the device: wait for it and
 * keep the answer in its IOU for the file to apply. 0, or -EINTR (intr).
 */
static int vgg_ctrlq_settle(struct vgg_dev *gdev, bool intr)
{
	struct vgg_owed *o = gdev->owed;
	s32 qerr = 0;
	int ret;

	lockdep_assert_held(&gdev->ctrlq_lock);
	if (!o)
		return 0;
	ret = vgg_ctrlq_wait(gdev, o->target, o->cmd.op, &qerr,
			     intr ? VGG_WAIT_INTR : VGG_WAIT_UNINTR);
	if (ret == -EINTR)
		return ret;
	o->result = vgg_ctrlq_collect(gdev, ret, qerr, &o->cmd,
				      vgg_ctrlq_slot(gdev, o->target - 1));
	o->done = true;
	gdev->owed = NULL;
	return 0;
}

int vgg_ctrlq_settle_owed(struct vgg_dev *gdev, struct vgg_owed *o, bool intr)
{
	int ret = 0;

	if (intr) {
		if (mutex_lock_interruptible(&gdev->ctrlq_lock))
			return -EINTR;
	} else {
		mutex_lock(&gdev->ctrlq_lock);
	}
	if (!o->done)
		ret = vgg_ctrlq_settle(gdev, intr);
	mutex_unlock(&gdev->ctrlq_lock);
	return ret;
}

/*
 * Run one command. 0: the device answered (cmd->status and the out
 * fields); -ENODEV: the device is gone; -EIO: the device stopped the
 * queue (it is re-armed for the next command); -EINTR: a signal came
 * before the command was handed over (intr only), *owed NULL; or a fatal
 * signal came after it was: *owed is the IOU (struct vgg_owed) through
 * which the caller's file learns the answer later.
 */
int vgg_ctrlq_exec(struct vgg_dev *gdev, struct vgmem_ctrl *cmd, bool intr,
		   struct vgg_owed **owed)
{
	struct vgmem_ctrl *slot;
	struct vgg_owed *o;
	s32 qerr = 0;
	u32 target;
	int ret;

	*owed = NULL;
	if (intr) {
		if (mutex_lock_interruptible(&gdev->ctrlq_lock))
			return -EINTR;
	} else {
		mutex_lock(&gdev->ctrlq_lock);
	}
	ret = vgg_ctrlq_settle(gdev, intr);
	if (ret)
		goto out_unlock;
	if (gdev->ctrlq_broken) {
		ret = vgg_ctrlq_arm(gdev);
		if (ret)
			goto out_unlock;
	}
	slot = vgg_ctrlq_slot(gdev, gdev->ctrlq_prod);
	memcpy(slot, cmd, sizeof(*cmd));
	slot->status = 0;
	target = gdev->ctrlq_prod + 1;
	/* iowrite32 orders the slot's stores before the doorbell. */
	ret = vgg_reg_write(gdev, VGMEM_REG_CTRLQ_PRODUCER, target);
	if (ret)
		goto out_unlock;
	gdev->ctrlq_prod = target;

	ret = vgg_ctrlq_wait(gdev, target, cmd->op, &qerr,
			     intr ? VGG_WAIT_KILLABLE : VGG_WAIT_UNINTR);
	if (ret == -EINTR) {
		/* Killed: the device has the command; leave an IOU. */
		o = kzalloc(sizeof(*o), GFP_KERNEL);
		if (o) {
			o->cmd = *cmd;
			o->target = target;
			gdev->owed = o;
			*owed = o;
			goto out_unlock;
		}
		ret = vgg_ctrlq_wait(gdev, target, cmd->op, &qerr, VGG_WAIT_UNINTR);
	}
	ret = vgg_ctrlq_collect(gdev, ret, qerr, cmd, slot);
out_unlock:
	mutex_unlock(&gdev->ctrlq_lock);
	return ret;
}

/*
 * remove(): the device is marked gone, so BAR0 is ours alone. Let a
 * command in flight land (the ring stays allocated regardless), then turn
 * the queue off. A device that has vanished reads all ones.
 */
void vgg_ctrlq_quiesce(struct vgg_dev *gdev)
{
	unsigned long end = jiffies + msecs_to_jiffies(VGG_CTRLQ_QUIESCE_MS);
	u32 cons, status;

	lockdep_assert_held(&gdev->ctrlq_lock);
	for (;;) {
		cons = ioread32(gdev->regs + VGMEM_REG_CTRLQ_CONSUMER);
		status = ioread32(gdev->regs + VGMEM_REG_STATUS);
		if (cons == ~0u || status == ~0u || cons == gdev->ctrlq_prod ||
		    (status & VGMEM_STATUS_CTRLQ_ERROR) || time_after(jiffies, end))
			break;
		msleep(VGG_CTRLQ_SLICE_MS);
	}
	iowrite32(0, gdev->regs + VGMEM_REG_CTRLQ_ENTRIES);
}
