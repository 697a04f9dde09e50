// SPDX-License-Identifier: GPL-2.0
/*
 * The vGPU's interrupt: one MSI vector or INTx, delivered through the
 * eventfd that VFIO_DEVICE_SET_IRQS installs (QEMU turns it into the
 * guest's interrupt; a VFIO user program polls it). It fires when
 * IRQ_CAUSE & IRQ_MASK becomes non-zero. INTx is level-triggered and, as
 * with vfio-pci, automasked: after firing it stays quiet until the user
 * unmasks it, and an unmask while the level is still high fires again.
 * Only one of the two is enabled at a time.
 *
 * The eventfd pointer is under reg_lock, so the GPU's engine thread (a
 * channel fault) and the control queue can signal it while a SET_IRQS
 * swaps it; the reference is dropped outside the spinlock.
 *
 * INTx can also be unmasked through an eventfd (ACTION_UNMASK with
 * DATA_EVENTFD), as QEMU does with KVM's irqfd resample eventfd: vfio's
 * virqfd watches it. Unlike vfio-pci we give virqfd no handler, only the
 * thread: the handler would run under the eventfd's wait-queue lock in
 * whatever context signalled it (even an interrupt), and taking reg_lock
 * there could deadlock against a signal we send under reg_lock (a user may
 * pass one eventfd as both trigger and unmask). The thread runs from a
 * workqueue, where reg_lock is safe to take.
 */
#include <linux/eventfd.h>

#include "vgk_drv.h"

/*
 * As vfio-pci answers for a conventional PCI device with MSI: one INTx,
 * one MSI vector, no MSI-X, and the device request interrupt. The error
 * (AER) index exists only on PCIe devices: vgk_ioctl_irq_info refuses it.
 */
int vgk_irq_count(unsigned int index)
{
	return index == VFIO_PCI_INTX_IRQ_INDEX ||
	       index == VFIO_PCI_MSI_IRQ_INDEX ||
	       index == VFIO_PCI_REQ_IRQ_INDEX ? 1 : 0;
}

bool vgk_irq_pending(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->reg_lock);
	return v->irq_cause & v->irq_mask;
}

static bool vgk_intx_disabled(struct vgk_vgpu *v)
{
	u16 cmd = v->cfg[PCI_COMMAND] | (v->cfg[PCI_COMMAND + 1] << 8);

	return cmd & PCI_COMMAND_INTX_DISABLE;
}

static void vgk_irq_fire(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->reg_lock);
	if (!v->irq_trigger)
		return;
	if (v->irq_type == VGK_IRQ_INTX) {
		if (v->intx_masked || vgk_intx_disabled(v))
			return;
		v->intx_masked = true;
	}
	vgk_eventfd_signal(v->irq_trigger);
}

void vgk_irq_update(struct vgk_vgpu *v, bool was_pending)
{
	lockdep_assert_held(&v->reg_lock);
	/*
	 * MSI fires on the rising edge only. INTx is a level: it also fires
	 * when it was held back (masked or disabled) and is free now.
	 */
	if (!vgk_irq_pending(v))
		return;
	if (!was_pending || v->irq_type == VGK_IRQ_INTX)
		vgk_irq_fire(v);
}

void vgk_irq_raise(struct vgk_vgpu *v, u32 cause)
{
	bool was_pending;

	lockdep_assert_held(&v->reg_lock);
	was_pending = vgk_irq_pending(v);
	v->irq_cause |= cause;
	if (!was_pending && vgk_irq_pending(v))
		vgk_irq_fire(v);
}

/* Engine thread, no core lock held: record the channel and interrupt. */
void vgk_chan_fault(void *priv, struct vg_chan *ch, u32 error)
{
	struct vgk_vgpu *v = priv;
	u32 id = vg_chan_id(ch);

	spin_lock(&v->reg_lock);
	if (id < VGK_USERD_PAGES)
		v->faulted |= BIT_ULL(id);
	vgk_irq_raise(v, VGMEM_IRQ_CHAN_FAULT);
	spin_unlock(&v->reg_lock);
	/* Tell the management plane too (queued: this is atomic context). */
	vgk_nl_chan_fault(v, id, error);
}

/* Install (ctx) or remove (NULL) the trigger of type; returns the old one. */
static struct eventfd_ctx *vgk_irq_swap(struct vgk_vgpu *v,
					enum vgk_irq_type type,
					struct eventfd_ctx *ctx)
{
	struct eventfd_ctx *old;

	spin_lock(&v->reg_lock);
	old = v->irq_trigger;
	v->irq_trigger = ctx;
	v->irq_type = ctx ? type : VGK_IRQ_NONE;
	v->intx_masked = false;
	/* An interrupt already pending is delivered to the new eventfd. */
	if (ctx)
		vgk_irq_update(v, false);
	spin_unlock(&v->reg_lock);
	return old;
}

/*
 * The unmask eventfd was signalled (virqfd's thread, process context):
 * the same as the ioctl unmask. Stale after INTx went away: then nothing.
 */
static void vgk_intx_unmask_thread(void *opaque, void *unused)
{
	struct vgk_vgpu *v = opaque;

	spin_lock(&v->reg_lock);
	if (v->irq_type == VGK_IRQ_INTX) {
		v->intx_masked = false;
		vgk_irq_update(v, true);	/* a level still high fires again */
	}
	spin_unlock(&v->reg_lock);
}

/* Stop watching the unmask eventfd; returns after its last thread run. */
static void vgk_intx_unmask_off(struct vgk_vgpu *v)
{
	vfio_virqfd_disable(&v->intx_unmask);
	if (v->intx_unmask_ctx) {
		eventfd_ctx_put(v->intx_unmask_ctx);
		v->intx_unmask_ctx = NULL;
	}
}

/* The unmask eventfd goes with the interrupt (close, disable, other type). */
void vgk_irq_disable(struct vgk_vgpu *v)
{
	struct eventfd_ctx *old;

	vgk_intx_unmask_off(v);
	old = vgk_irq_swap(v, VGK_IRQ_NONE, NULL);
	if (old)
		eventfd_ctx_put(old);
}

static int vgk_irq_trigger(struct vgk_vgpu *v, enum vgk_irq_type type,
			   struct vfio_irq_set *hdr, void *data)
{
	u32 dtype = hdr->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
	enum vgk_irq_type cur;
	struct eventfd_ctx *ctx, *old;
	s32 fd;

	spin_lock(&v->reg_lock);
	cur = v->irq_type;
	spin_unlock(&v->reg_lock);

	/* count 0 with no data: disable this index. */
	if (!hdr->count) {
		if (cur == type)
			vgk_irq_disable(v);
		return 0;
	}
	if (dtype != VFIO_IRQ_SET_DATA_EVENTFD) {
		/* Loopback: fire as the device would, for testing. */
		if (cur != type)
			return -EINVAL;
		if (dtype == VFIO_IRQ_SET_DATA_BOOL && !*(u8 *)data)
			return 0;
		spin_lock(&v->reg_lock);
		if (v->irq_trigger)
			vgk_eventfd_signal(v->irq_trigger);
		spin_unlock(&v->reg_lock);
		return 0;
	}

	fd = *(s32 *)data;
	if (fd < 0) {
		if (cur == type)
			vgk_irq_disable(v);
		return 0;
	}
	/* INTx and MSI exclude each other, as on vfio-pci. */
	if (cur != VGK_IRQ_NONE && cur != type)
		return -EINVAL;
	ctx = eventfd_ctx_fdget(fd);
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	/* INTx's unmask eventfd as its trigger: see vgk_intx_unmask_fd(). */
	if (type == VGK_IRQ_INTX && ctx == v->intx_unmask_ctx) {
		eventfd_ctx_put(ctx);
		return -EINVAL;
	}
	old = vgk_irq_swap(v, type, ctx);
	if (old)
		eventfd_ctx_put(old);
	return 0;
}

/*
 * ACTION_UNMASK with DATA_EVENTFD: fd >= 0 watches it (-EBUSY while one
 * is watched, as on vfio-pci: remove it first), fd < 0 removes it. Only
 * while INTx is the interrupt in use. v->lock held.
 */
static int vgk_intx_unmask_fd(struct vgk_vgpu *v, s32 fd)
{
	struct eventfd_ctx *ctx;
	bool ok;
	int ret;

	lockdep_assert_held(&v->lock);
	if (fd < 0) {
		vgk_intx_unmask_off(v);
		return 0;
	}
	ctx = eventfd_ctx_fdget(fd);
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	/*
	 * The trigger itself as unmask eventfd would unmask every interrupt
	 * as it fires: a storm on the workqueue while the level is high.
	 */
	spin_lock(&v->reg_lock);
	ok = v->irq_type == VGK_IRQ_INTX && v->irq_trigger != ctx;
	spin_unlock(&v->reg_lock);
	if (!ok) {
		eventfd_ctx_put(ctx);
		return -EINVAL;
	}
	/* An eventfd already signalled unmasks at once (virqfd polls it). */
	ret = vfio_virqfd_enable(v, NULL, vgk_intx_unmask_thread, NULL,
				 &v->intx_unmask, fd);
	if (ret) {
		eventfd_ctx_put(ctx);	/* -EBUSY: the one installed stays */
		return ret;
	}
	/* One whose eventfd was closed left virqfd, not our reference. */
	if (v->intx_unmask_ctx)
		eventfd_ctx_put(v->intx_unmask_ctx);
	v->intx_unmask_ctx = ctx;
	return 0;
}

static int vgk_intx_mask(struct vgk_vgpu *v, struct vfio_irq_set *hdr,
			 void *data, bool mask)
{
	u32 dtype = hdr->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
	int ret = 0;

	if (hdr->count != 1)
		return -EINVAL;
	if (dtype == VFIO_IRQ_SET_DATA_EVENTFD) {
		/* Masking through an eventfd is not offered (nor used by QEMU). */
		if (mask)
			return -EINVAL;
		return vgk_intx_unmask_fd(v, *(s32 *)data);
	}
	if (dtype == VFIO_IRQ_SET_DATA_BOOL && !*(u8 *)data)
		return 0;
	spin_lock(&v->reg_lock);
	if (v->irq_type != VGK_IRQ_INTX) {
		ret = -EINVAL;
	} else if (mask) {
		v->intx_masked = true;
	} else {
		v->intx_masked = false;
		vgk_irq_update(v, true);	/* a level still high fires again */
	}
	spin_unlock(&v->reg_lock);
	return ret;
}

/*
 * The device request interrupt, as vfio-pci's: an eventfd (fd < 0 or
 * count 0 removes it), or a loopback signal for testing.
 */
static int vgk_req_trigger(struct vgk_vgpu *v, struct vfio_irq_set *hdr,
			   void *data)
{
	u32 dtype = hdr->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
	struct eventfd_ctx *ctx = NULL, *old;
	s32 fd;

	if (hdr->count && dtype != VFIO_IRQ_SET_DATA_EVENTFD) {
		if (dtype == VFIO_IRQ_SET_DATA_BOOL && !*(u8 *)data)
			return 0;
		spin_lock(&v->reg_lock);
		if (v->req_trigger)
			vgk_eventfd_signal(v->req_trigger);
		spin_unlock(&v->reg_lock);
		return 0;
	}
	if (hdr->count) {
		fd = *(s32 *)data;
		if (fd >= 0) {
			ctx = eventfd_ctx_fdget(fd);
			if (IS_ERR(ctx))
				return PTR_ERR(ctx);
		}
	}
	spin_lock(&v->reg_lock);
	old = v->req_trigger;
	v->req_trigger = ctx;
	spin_unlock(&v->reg_lock);
	if (old)
		eventfd_ctx_put(old);
	return 0;
}

/*
 * vfio_unregister_group_dev() calls this (count 0, 1, ...) every 10 s while
 * a VMM keeps the device open during its removal: ask the VMM to let go,
 * as vfio-pci does. Without a request eventfd there is nobody to ask.
 */
void vgk_irq_request(struct vgk_vgpu *v, unsigned int count)
{
	spin_lock(&v->reg_lock);
	if (v->req_trigger) {
		if (!count)
			dev_notice(mdev_dev(v->mdev),
				   "asking the user to release the vGPU\n");
		vgk_eventfd_signal(v->req_trigger);
	} else if (!count) {
		dev_notice(mdev_dev(v->mdev),
			   "in use, no request eventfd: waiting for the user to release it\n");
	}
	spin_unlock(&v->reg_lock);
}

/* The request eventfd goes at close, as every other trigger. */
void vgk_req_disable(struct vgk_vgpu *v)
{
	struct eventfd_ctx *old;

	spin_lock(&v->reg_lock);
	old = v->req_trigger;
	v->req_trigger = NULL;
	spin_unlock(&v->reg_lock);
	if (old)
		eventfd_ctx_put(old);
}

/* hdr was checked by vfio_set_irqs_validate_and_prepare(); v->lock held. */
int vgk_irq_set(struct vgk_vgpu *v, struct vfio_irq_set *hdr, void *data)
{
	u32 action = hdr->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;

	lockdep_assert_held(&v->lock);
	switch (hdr->index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		switch (action) {
		case VFIO_IRQ_SET_ACTION_MASK:
			return vgk_intx_mask(v, hdr, data, true);
		case VFIO_IRQ_SET_ACTION_UNMASK:
			return vgk_intx_mask(v, hdr, data, false);
		case VFIO_IRQ_SET_ACTION_TRIGGER:
			return vgk_irq_trigger(v, VGK_IRQ_INTX, hdr, data);
		}
		return -EINVAL;
	case VFIO_PCI_MSI_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			return vgk_irq_trigger(v, VGK_IRQ_MSI, hdr, data);
		return -EINVAL;
	case VFIO_PCI_REQ_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			return vgk_req_trigger(v, hdr, data);
		return -EINVAL;
	default:
		return -EINVAL;
	}
}
