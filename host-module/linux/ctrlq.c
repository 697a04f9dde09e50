// SPDX-License-Identifier: GPL-2.0
/*
 * The control queue, device side (the guest's driver side is libvgmem's
 * vfio_ctrlq.c or the guest kernel driver): a ring of struct vgmem_ctrl
 * slots in guest memory, configured and kicked through BAR0
 * (include/uapi/vgmem.h, whose helpers give the ring arithmetic). A doorbell
 * only queues the vGPU's work item; the work reads each slot with
 * vfio_dma_rw(), lets the core validate and run it (vg_ctrl_exec), writes
 * the slot back, advances CONSUMER and raises VGMEM_IRQ_CTRLQ. Commands
 * run in a kthread because they may sleep for long (an allocation can wait
 * for a relocation) and because vfio_dma_rw() reaches the guest's memory
 * from a kthread by borrowing the mm that mapped it.
 *
 * The guest can break only its own queue: a ring it cannot read or write
 * sets CTRLQ_ERROR (-EFAULT), a bad index or reconfiguring under load sets
 * -EINVAL; either stops the queue until CTRLQ_ENTRIES is written again.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "vgk_drv.h"

static_assert(sizeof(struct vgmem_ctrl) == VGMEM_CTRL_SLOT_SIZE);

/* Unbound: a command may sleep for a whole relocation. */
static struct workqueue_struct *vgk_wq;

static void vgk_ctrlq_dev_fail(struct vgk_vgpu *v, s32 err)
{
	lockdep_assert_held(&v->reg_lock);
	if (v->q_error)
		return;
	v->q_error = err;
	/* Wake a guest waiting for completions: its queue is dead. */
	vgk_irq_raise(v, VGMEM_IRQ_CTRLQ);
}

static bool vgk_ctrlq_dev_pending(const struct vgk_vgpu *v)
{
	return v->q_entries && !v->q_error && v->q_producer != v->q_consumer;
}

void vgk_ctrlq_dev_write(struct vgk_vgpu *v, u32 reg, u32 val)
{
	lockdep_assert_held(&v->reg_lock);
	switch (reg) {
	case VGMEM_REG_CTRLQ_BASE_LO:
	case VGMEM_REG_CTRLQ_BASE_HI:
		if (vgk_ctrlq_dev_pending(v)) {
			vgk_ctrlq_dev_fail(v, -EINVAL);
			return;
		}
		if (reg == VGMEM_REG_CTRLQ_BASE_HI) {
			v->q_base = (v->q_base & 0xffffffffull) | ((u64)val << 32);
		} else if (!IS_ALIGNED(val, PAGE_SIZE)) {
			vgk_ctrlq_dev_fail(v, -EINVAL);
		} else {
			v->q_base = (v->q_base & ~0xffffffffull) | val;
		}
		return;
	case VGMEM_REG_CTRLQ_ENTRIES:
		/* The way out of an error: in error, nothing counts as pending. */
		if (vgk_ctrlq_dev_pending(v)) {
			vgk_ctrlq_dev_fail(v, -EINVAL);
			return;
		}
		if (val && !vgmem_ctrlq_entries_ok(val)) {
			v->q_entries = 0;
			vgk_ctrlq_dev_fail(v, -EINVAL);
			return;
		}
		v->q_entries = val;
		v->q_producer = 0;
		v->q_consumer = 0;
		v->q_error = 0;
		v->q_gen++;
		return;
	case VGMEM_REG_CTRLQ_PRODUCER:
		if (v->q_error)
			return;
		if (!v->q_entries) {
			vgk_ctrlq_dev_fail(v, -EINVAL);
			return;
		}
		if (!vgmem_ctrlq_producer_ok(val, v->q_producer, v->q_consumer,
					     v->q_entries)) {
			vgk_ctrlq_dev_fail(v, -EINVAL);
			return;
		}
		v->q_producer = val;
		if (val != v->q_consumer && !v->closing && !v->q_paused)
			queue_work(vgk_wq, &v->ctrlq_work);
		return;
	}
}

/*
 * One command: read the slot, run it, write it back. Returns 0 or the
 * queue error. v->lock held, so the VM cannot change underneath.
 */
static int vgk_ctrlq_dev_run(struct vgk_vgpu *v, struct vg_vm *vm, u64 gpa,
			   struct vgmem_ctrl *cmd)
{
	struct vg_guest_mem gmem;
	u32 op;
	int ret;

	lockdep_assert_held(&v->lock);
	vgk_gmem_init(v, &gmem);
	ret = gmem.read(gmem.priv, gpa, cmd, sizeof(*cmd));
	if (ret)
		return ret;
	op = cmd->op;
	vg_ctrl_exec(vm, cmd);
	/*
	 * A channel becomes reachable through BAR2 only once it is in the
	 * page table; one that cannot be is refused.
	 */
	if (op == VGMEM_CTRL_CHAN_CREATE && !cmd->status) {
		ret = vgk_userd_add_chan(v, cmd->chan.chan_id);
		if (ret) {
			cmd->status = ret;
			cmd->chan.chan_id = 0;
		}
	}
	return gmem.write(gmem.priv, gpa, cmd, sizeof(*cmd));
}

void vgk_ctrlq_dev_work(struct work_struct *work)
{
	struct vgk_vgpu *v = container_of(work, struct vgk_vgpu, ctrlq_work);
	struct vgmem_ctrl *cmd;

	/* 512 bytes: too much for the stack of a work item. */
	cmd = kmalloc(sizeof(*cmd), GFP_KERNEL);
	if (!cmd) {
		spin_lock(&v->reg_lock);
		vgk_ctrlq_dev_fail(v, -ENOMEM);
		spin_unlock(&v->reg_lock);
		return;
	}
	for (;;) {
		u64 gpa;
		u32 gen;
		int ret;

		/* Per command, so a flood does not starve SET_IRQS or sysfs. */
		mutex_lock(&v->lock);
		spin_lock(&v->reg_lock);
		if (v->closing || v->q_paused || !v->vm ||
		    !vgk_ctrlq_dev_pending(v)) {
			spin_unlock(&v->reg_lock);
			mutex_unlock(&v->lock);
			break;
		}
		gpa = vgmem_ctrlq_slot_gpa(v->q_base, v->q_entries,
					   v->q_consumer);
		gen = v->q_gen;
		spin_unlock(&v->reg_lock);

		ret = vgk_ctrlq_dev_run(v, v->vm, gpa, cmd);

		spin_lock(&v->reg_lock);
		/* A reset or a reconfiguration meanwhile voids this command. */
		if (gen == v->q_gen) {
			if (ret) {
				vgk_ctrlq_dev_fail(v, -EFAULT);
			} else {
				v->q_consumer++;
				vgk_irq_raise(v, VGMEM_IRQ_CTRLQ);
			}
		}
		spin_unlock(&v->reg_lock);
		mutex_unlock(&v->lock);
		/* A flood of commands must not hog the CPU. */
		cond_resched();
	}
	kfree(cmd);
}

void vgk_ctrlq_dev_pause(struct vgk_vgpu *v, bool pause)
{
	lockdep_assert_held(&v->lock);
	spin_lock(&v->reg_lock);
	v->q_paused = pause;
	/* Doorbells rung meanwhile were only recorded: serve them now. */
	if (!pause && !v->closing && vgk_ctrlq_dev_pending(v))
		queue_work(vgk_wq, &v->ctrlq_work);
	spin_unlock(&v->reg_lock);
}

void vgk_ctrlq_dev_stop(struct vgk_vgpu *v)
{
	spin_lock(&v->reg_lock);
	v->closing = true;
	spin_unlock(&v->reg_lock);
	cancel_work_sync(&v->ctrlq_work);
}

int vgk_ctrlq_dev_init(void)
{
	vgk_wq = alloc_workqueue("vgmem", WQ_UNBOUND, 0);
	return vgk_wq ? 0 : -ENOMEM;
}

void vgk_ctrlq_dev_exit(void)
{
	destroy_workqueue(vgk_wq);
}
