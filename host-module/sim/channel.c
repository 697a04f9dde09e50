// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Channels: a real USERD page (kzalloc'ed, so the kernel side can map it
 * into a guest), a GPFIFO ring of desc->gpfifo_entries entries in guest
 * memory, and the engine's execution state.
 */
#include "sim_internal.h"

u32 sim_rd32(const u8 *userd, u32 off)
{
	return READ_ONCE(*(const u32 *)(userd + off));
}

void sim_wr32(u8 *userd, u32 off, u32 val)
{
	WRITE_ONCE(*(u32 *)(userd + off), val);
}

/* A word that publishes what came before it (GP_GET, ERROR). */
void sim_wr32_release(u8 *userd, u32 off, u32 val)
{
	smp_store_release((u32 *)(userd + off), val);
}

void sim_chan_fault(struct vg_bchan *ch, u32 err, u32 info, u64 addr)
{
	if (ch->error)
		return;		/* the first error is the one reported */
	sim_wr32(ch->userd, VGMEM_USERD_ERROR_INFO, info);
	sim_wr32(ch->userd, VGMEM_USERD_ERROR_ADDR_LO, (u32)addr);
	sim_wr32(ch->userd, VGMEM_USERD_ERROR_ADDR_HI, (u32)(addr >> 32));
	/* ERROR last: whoever sees it also sees INFO and ADDR. */
	sim_wr32_release(ch->userd, VGMEM_USERD_ERROR, err);
	ch->fault_addr = addr;
	ch->fault_pending = true;
	WRITE_ONCE(ch->error, err);
}

void sim_chan_fault_notify(struct vg_bchan *ch)
{
	if (!ch->fault_pending)
		return;
	ch->fault_pending = false;
	if (ch->desc.fault_cb)
		ch->desc.fault_cb(ch->desc.fault_priv, ch->error,
				  ch->fault_addr);
}

static bool sim_desc_valid(const struct vg_channel_desc *d)
{
	u64 ring, end;
	u64 e;

	if (!d || !d->gmem || !d->gmem->read || !d->gmem->write)
		return false;
	if (!is_power_of_2(d->gpfifo_entries) ||
	    d->gpfifo_entries < VGMEM_GP_ENTRIES_MIN ||
	    d->gpfifo_entries > VGMEM_GP_ENTRIES_MAX)
		return false;
	ring = (u64)d->gpfifo_entries * 8;
	if (!IS_ALIGNED(d->gpfifo_gpa, 8) ||
	    check_add_overflow(d->gpfifo_gpa, ring, &end))
		return false;
	/* The whole ring must be guest memory: probe both ends. */
	if (d->gmem->read(d->gmem->priv, d->gpfifo_gpa, &e, sizeof(e)) ||
	    d->gmem->read(d->gmem->priv, end - 8, &e, sizeof(e)))
		return false;
	return true;
}

int sim_chan_create(struct vg_sim *sim, struct vg_as *as,
		    const struct vg_channel_desc *desc, struct vg_bchan **out,
		    void **userd)
{
	struct vg_bchan *ch;

	if (!as || !out || !userd || !sim_desc_valid(desc))
		return -EINVAL;
	ch = kzalloc(sizeof(*ch), GFP_KERNEL);
	if (!ch)
		return -ENOMEM;
	ch->userd = kzalloc(VGMEM_USERD_SIZE, GFP_KERNEL);
	if (!ch->userd)
		goto err_free_chan;
	ch->pb.buf = kcalloc(SIM_PB_BUF_DW, sizeof(u32), GFP_KERNEL);
	if (!ch->pb.buf)
		goto err_free_userd;
	ch->bounce = kmalloc(SIM_BOUNCE_SIZE, GFP_KERNEL);
	if (!ch->bounce)
		goto err_free_pbbuf;

	ch->sim = sim;
	ch->as = as;
	INIT_LIST_HEAD(&ch->pf_node);
	atomic_inc(&as->refs);
	ch->desc = *desc;
	ch->gmem = *desc->gmem;
	ch->desc.gmem = &ch->gmem;

	mutex_lock(&sim->chan_lock);
	list_add_tail(&ch->node, &sim->chans);
	sim->nr_chans++;
	mutex_unlock(&sim->chan_lock);
	*out = ch;
	*userd = ch->userd;
	return 0;

err_free_pbbuf:
	kfree(ch->pb.buf);
err_free_userd:
	kfree(ch->userd);
err_free_chan:
	kfree(ch);
	return -ENOMEM;
}

void sim_chan_destroy(struct vg_sim *sim, struct vg_bchan *ch)
{
	mutex_lock(&sim->chan_lock);
	list_del(&ch->node);
	sim->nr_chans--;
	mutex_unlock(&sim->chan_lock);
	/*
	 * Off the list, the engine cannot pick it again; wait until it is
	 * done with the method it may be executing.
	 */
	(void)atomic_add_return(1, &sim->idle_waiters);
	wait_event(sim->idle_wq, READ_ONCE(sim->running) != ch);
	(void)atomic_add_return(-1, &sim->idle_waiters);
	/* Parked on a fault: nobody may answer it any more. */
	sim_fault_chan_detach(ch);

	sim_as_put(ch->as);
	kfree(ch->bounce);
	kfree(ch->pb.buf);
	kfree(ch->userd);
	kfree(ch);
}

static bool sim_chan_idle(struct vg_bchan *ch)
{
	struct vg_sim *sim = ch->sim;
	bool idle;

	if (READ_ONCE(sim->running) == ch)
		return false;
	smp_rmb();
	/*
	 * Parked on an acquire or on a fault the handler has not answered:
	 * no method in flight. (Answered, it has its replay to run.)
	 */
	if (READ_ONCE(ch->error) || READ_ONCE(ch->parked) ||
	    READ_ONCE(ch->pf_state) == SIM_PF_WAIT)
		idle = true;
	else
		idle = !READ_ONCE(ch->in_entry) &&
		       READ_ONCE(ch->gp_get) ==
		       sim_rd32(ch->userd, VGMEM_USERD_GP_PUT);
	/* The engine may have picked it meanwhile: then it is not idle. */
	smp_rmb();
	return idle && READ_ONCE(sim->running) != ch;
}

/* A timeout in jiffies, rounded up; capped at an hour. */
static unsigned long sim_timeout_jiffies(u64 timeout_ns)
{
	u64 us = div64_u64(timeout_ns, NSEC_PER_USEC);

	if (us * NSEC_PER_USEC < timeout_ns)
		us++;
	/* usecs_to_jiffies takes an unsigned int. */
	return usecs_to_jiffies((u32)min_t(u64, us, 3600ull * 1000 * 1000));
}

int sim_chan_idle_wait(struct vg_sim *sim, struct vg_bchan *ch,
		       u64 timeout_ns)
{
	long left;

	if (sim_chan_idle(ch))
		return 0;
	/* Fully ordered: counted before the condition reads sim->running. */
	(void)atomic_add_return(1, &sim->idle_waiters);
	left = wait_event_timeout(sim->idle_wq, sim_chan_idle(ch),
				  sim_timeout_jiffies(timeout_ns));
	(void)atomic_add_return(-1, &sim->idle_waiters);
	return left ? 0 : -ETIMEDOUT;
}

/*
 * Stop: from now on the engine skips ch (it checks ch->stopped under
 * chan_lock when it picks a channel), so only a turn already under way can
 * still touch memory; wait for it on idle_wq like an idle wait. A turn
 * lasts at most one budget (or one guest memory access that blocks), and a
 * launch cut short by the stop keeps its progress in ch->job: nothing of
 * ch runs until sim_chan_start, not even the re-check of a parked acquire.
 */
int sim_chan_stop(struct vg_sim *sim, struct vg_bchan *ch, u64 timeout_ns)
{
	long left;

	mutex_lock(&sim->chan_lock);
	ch->stopped = true;
	mutex_unlock(&sim->chan_lock);
	/* After the unlock: a turn started before it has set running. */
	if (READ_ONCE(sim->running) != ch)
		return 0;
	(void)atomic_add_return(1, &sim->idle_waiters);
	left = wait_event_timeout(sim->idle_wq, READ_ONCE(sim->running) != ch,
				  sim_timeout_jiffies(timeout_ns));
	(void)atomic_add_return(-1, &sim->idle_waiters);
	if (left)
		return 0;
	/* The contract: on error the channel runs on as before. */
	sim_chan_start(sim, ch);
	return -ETIMEDOUT;
}

void sim_chan_start(struct vg_sim *sim, struct vg_bchan *ch)
{
	mutex_lock(&sim->chan_lock);
	ch->stopped = false;
	mutex_unlock(&sim->chan_lock);
}
