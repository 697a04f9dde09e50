// SPDX-License-Identifier: GPL-2.0
/*
 * The "events" multicast group of the generic netlink family "vgmem"
 * (netlink.c): pressure and relocation events from the core's hooks, and
 * channel faults. Who may join the group is netlink.c's business
 * (netlink_open).
 *
 * Events from the core arrive with the core's gpu->lock held and build
 * their message right there; channel faults arrive from the engine thread
 * in atomic context and are queued.
 */
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>

#include "vgk_drv.h"

static bool vgk_nl_listened(void)
{
	return genl_has_listeners(&vgk_genl_family, &init_net,
				  VGK_NL_MCGRP_EVENTS);
}

static struct sk_buff *vgk_nl_event_new(u8 cmd, int gpu, void **hdr)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);

	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &vgk_genl_family, 0, cmd);
	if (!*hdr || nla_put_u32(msg, VGMEM_A_GPU_INDEX, gpu)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void vgk_nl_event_send(struct sk_buff *msg, void *hdr)
{
	genlmsg_end(msg, hdr);
	/* -ESRCH only says nobody listens any more. */
	genlmsg_multicast(&vgk_genl_family, msg, 0, VGK_NL_MCGRP_EVENTS,
			  GFP_KERNEL);
}

/*
 * Core hooks: the core's gpu->lock is held, the VM exists and so does its
 * vGPU (a vGPU is removed only after its device, and so its VM, is gone).
 */
static void vgk_nl_ev_pressure(void *priv, struct vg_vm *req, u64 need)
{
	struct vgk_gpu *gpu = priv;
	struct vgk_vgpu *v = vg_vm_priv(req);
	struct sk_buff *msg;
	void *hdr;

	if (!vgk_nl_listened())
		return;
	msg = vgk_nl_event_new(VGMEM_CMD_EVENT_PRESSURE, gpu->id, &hdr);
	if (!msg)
		return;
	if (vgk_nl_put_uuid(msg, v) ||
	    nla_put_u64_64bit(msg, VGMEM_A_EV_NEED, need, VGMEM_A_PAD)) {
		nlmsg_free(msg);
		return;
	}
	vgk_nl_event_send(msg, hdr);
}

static void vgk_nl_ev_relocated(void *priv, struct vg_vm *vm,
				enum vg_loc to, u32 chunks, u64 bytes,
				u64 suspend_ns)
{
	struct vgk_gpu *gpu = priv;
	struct vgk_vgpu *v = vg_vm_priv(vm);
	struct sk_buff *msg;
	void *hdr;

	if (!vgk_nl_listened())
		return;
	msg = vgk_nl_event_new(VGMEM_CMD_EVENT_RELOCATION, gpu->id, &hdr);
	if (!msg)
		return;
	if (vgk_nl_put_uuid(msg, v) ||
	    nla_put_u32(msg, VGMEM_A_EV_DIRECTION,
			to == VG_LOC_HOST ? VGMEM_RELOC_OUT : VGMEM_RELOC_IN) ||
	    nla_put_u32(msg, VGMEM_A_EV_CHUNKS, chunks) ||
	    nla_put_u64_64bit(msg, VGMEM_A_EV_BYTES, bytes, VGMEM_A_PAD) ||
	    nla_put_u64_64bit(msg, VGMEM_A_EV_SUSPEND_NS, suspend_ns,
			      VGMEM_A_PAD)) {
		nlmsg_free(msg);
		return;
	}
	vgk_nl_event_send(msg, hdr);
}

const struct vg_gpu_events vgk_nl_gpu_events = {
	.pressure = vgk_nl_ev_pressure,
	.relocated = vgk_nl_ev_relocated,
};

/*
 * Channel faults come from the engine thread in atomic context: they are
 * copied (the vGPU may be gone when the work runs) onto a bounded queue,
 * so a guest faulting in a loop cannot make the host allocate without end.
 */
#define VGK_NL_FAULTS_MAX	256

struct vgk_nl_fault {
	struct list_head node;
	int gpu;
	u32 chan;
	u32 error;
	u8 uuid[VGMEM_UUID_LEN];
};

static void vgk_nl_fault_work(struct work_struct *work);

static DEFINE_SPINLOCK(vgk_nl_faults_lock);
static LIST_HEAD(vgk_nl_faults);		/* vgk_nl_faults_lock */
static unsigned int vgk_nl_nr_faults;		/* vgk_nl_faults_lock */
static bool vgk_nl_live;			/* vgk_nl_faults_lock */
static DECLARE_WORK(vgk_nl_faults_work, vgk_nl_fault_work);

void vgk_nl_chan_fault(struct vgk_vgpu *v, u32 chan, u32 error)
{
	struct vgk_nl_fault *f;
	unsigned long flags;
	bool queued = false;

	if (!READ_ONCE(vgk_nl_live) || !vgk_nl_listened())
		return;
	f = kmalloc(sizeof(*f), GFP_ATOMIC);
	if (!f)
		return;
	f->gpu = v->gpu->id;
	f->chan = chan;
	f->error = error;
	vgk_nl_swap_uuid(f->uuid, v->mdev->uuid.b);

	spin_lock_irqsave(&vgk_nl_faults_lock, flags);
	if (vgk_nl_live && vgk_nl_nr_faults < VGK_NL_FAULTS_MAX) {
		list_add_tail(&f->node, &vgk_nl_faults);
		vgk_nl_nr_faults++;
		queued = true;
		schedule_work(&vgk_nl_faults_work);
	}
	spin_unlock_irqrestore(&vgk_nl_faults_lock, flags);
	if (!queued)
		kfree(f);
}

static void vgk_nl_fault_work(struct work_struct *work)
{
	struct vgk_nl_fault *f, *tmp;
	struct sk_buff *msg;
	LIST_HEAD(todo);
	void *hdr;

	spin_lock_irq(&vgk_nl_faults_lock);
	list_splice_init(&vgk_nl_faults, &todo);
	vgk_nl_nr_faults = 0;
	spin_unlock_irq(&vgk_nl_faults_lock);

	list_for_each_entry_safe(f, tmp, &todo, node) {
		msg = vgk_nl_event_new(VGMEM_CMD_EVENT_CHAN_FAULT, f->gpu,
				       &hdr);
		if (msg) {
			if (nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN,
				    f->uuid) ||
			    nla_put_u32(msg, VGMEM_A_EV_CHANNEL, f->chan) ||
			    nla_put_u32(msg, VGMEM_A_EV_ERROR, f->error))
				nlmsg_free(msg);
			else
				vgk_nl_event_send(msg, hdr);
		}
		list_del(&f->node);
		kfree(f);
	}
}

void vgk_nl_events_start(void)
{
	spin_lock_irq(&vgk_nl_faults_lock);
	vgk_nl_live = true;
	spin_unlock_irq(&vgk_nl_faults_lock);
}

void vgk_nl_events_stop(void)
{
	struct vgk_nl_fault *f, *tmp;

	/* No GPU is left (GPU drivers pin this module): no new events come. */
	spin_lock_irq(&vgk_nl_faults_lock);
	vgk_nl_live = false;
	spin_unlock_irq(&vgk_nl_faults_lock);
	cancel_work_sync(&vgk_nl_faults_work);
	list_for_each_entry_safe(f, tmp, &vgk_nl_faults, node) {
		list_del(&f->node);
		kfree(f);
	}
	vgk_nl_nr_faults = 0;
}
