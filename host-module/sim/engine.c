// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The engine: one thread per GPU that goes round-robin over the channels,
 * giving each a turn of at most one GPFIFO entry and at most
 * SIM_TURN_BUDGET units of work. It reads each channel's real USERD GP_PUT
 * (which the guest writes directly, with no trap), fetches the entry from
 * the guest's ring, runs its pushbuffer and then publishes GP_GET and
 * ENTRIES_DONE. An entry (or one launch in it) bigger than a budget takes
 * several turns, the other channels' turns in between: guest-chosen sizes
 * (a gather of 2^32 elements, a copy of 2^32 lines) cannot monopolize the
 * GPU, and a stopped channel (channel_stop) is skipped entirely.
 *
 * There is no doorbell (the guest writes GP_PUT with no trap), so the engine
 * polls, like a real GPU's host interface. After work it keeps polling with
 * only cond_resched in between for spin_us: a guest that waits for one
 * entry and submits the next finds the engine awake (a sleep of poll_us is
 * 20 us asked but often 60-80 us in practice, per entry). Once idle for
 * spin_us it sleeps poll_us between rounds, so an idle GPU burns no core.
 *
 * Where a sleep costs far more than asked (hundreds of microseconds under
 * emulation), a fixed spin_us is shorter than a waiting guest's own sleep
 * (libvgmem yields for 100 us, then sleeps): the guest's next entry comes
 * after the engine went to sleep, the entry waits for the engine's sleep,
 * the guest sleeps meanwhile, and every round trip costs a sleep on each
 * side, for as long as the guest keeps submitting (p50 of 300-460 us
 * instead of 8 us in whole rounds of the VM benchmark). So the engine
 * keeps polling for twice what its own recent sleeps took, when that is
 * longer than spin_us (at most SIM_SPIN_MAX_NS): spinning about as long
 * as blocking would cost, the usual spin-then-block rule. With 60-80 us
 * sleeps spin_us (200 us) stays the window.
 *
 * It never takes a core lock, so the core may wait for it (channel_idle_wait)
 * while holding its own.
 */
#include "sim_internal.h"

#define SIM_SPIN_MAX_NS		(2 * NSEC_PER_MSEC)

static int sim_gp_fault(struct vg_bchan *ch, u32 info, u64 addr)
{
	sim_chan_fault(ch, VGMEM_CHAN_ERR_GPFIFO, info, addr);
	return VGMEM_CHAN_ERR_GPFIFO;
}

/*
 * Fetch and check the entry at GP_GET; 0, or a channel error. Not inlined,
 * nor sim_gp_complete(): bench_submit counts an entry's instructions by
 * these names, apart from the polls that find nothing.
 */
static noinline int sim_gp_fetch(struct vg_bchan *ch, u32 put)
{
	u64 gpa = ch->desc.gpfifo_gpa + (u64)ch->gp_get * 8;
	u64 e;

	if (put >= ch->desc.gpfifo_entries)
		return sim_gp_fault(ch, put, 0);
	/* The entry was written before GP_PUT (read with acquire). */
	if (ch->gmem.read(ch->gmem.priv, gpa, &e, sizeof(e)))
		return sim_gp_fault(ch, ch->gp_get, gpa);
	/* Entries are little endian, like every host this builds for. */
	if (VGMEM_GP_ENTRY_RSVD(e) || !VGMEM_GP_ENTRY_NDW(e))
		return sim_gp_fault(ch, ch->gp_get, VGMEM_GP_ENTRY_ADDR(e));

	ch->pb.gpa = VGMEM_GP_ENTRY_ADDR(e);
	ch->pb.ndw = (u32)VGMEM_GP_ENTRY_NDW(e);
	ch->pb.pos = 0;
	ch->pb.left = 0;
	ch->pb.buf_start = 0;
	ch->pb.buf_n = 0;
	WRITE_ONCE(ch->in_entry, true);
	return 0;
}

static noinline void sim_gp_complete(struct vg_bchan *ch)
{
	struct vg_as *as = ch->as;
	u32 get = (ch->gp_get + 1) & (ch->desc.gpfifo_entries - 1);

	mutex_lock(&as->lock);
	as->cost.entries++;
	mutex_unlock(&as->lock);

	/*
	 * The entry's results (and its reads of guest memory) come before
	 * its ENTRIES_DONE and GP_GET: store-release, so a guest that saw
	 * either may reuse the memory.
	 */
	ch->entries_done++;
	sim_wr32_release(ch->userd, VGMEM_USERD_ENTRIES_DONE, ch->entries_done);
	sim_wr32_release(ch->userd, VGMEM_USERD_GP_GET, get);
	WRITE_ONCE(ch->gp_get, get);
	WRITE_ONCE(ch->in_entry, false);
}

/*
 * A channel parked on a replayable fault: false while the handler has not
 * answered (nothing to do); once it has, either the channel enters the VA
 * error the fault would have been without a range (true, *stepped set) or
 * its method replays from where it stopped (true).
 */
static bool sim_chan_replay(struct vg_bchan *ch, bool *stepped)
{
	u32 st = smp_load_acquire(&ch->pf_state);

	if (st == SIM_PF_NONE)
		return true;
	if (st == SIM_PF_WAIT)
		return false;
	WRITE_ONCE(ch->pf_state, SIM_PF_NONE);
	if (ch->pf_res) {
		ch->job.kind = SIM_JOB_NONE;
		sim_chan_fault(ch, VGMEM_CHAN_ERR_VA, ch->pf_mthd, ch->pf_addr);
		*stepped = true;
		return false;
	}
	return true;
}

bool sim_chan_step(struct vg_bchan *ch)
{
	struct sim_exec x = { .ch = ch, .as = ch->as,
			      .mthd = VGMEM_MTHD_SEMAPHORE_D };
	bool stepped = false;
	u32 put;
	int r;

	if (ch->error)
		return false;
	if (!sim_chan_replay(ch, &stepped))
		return stepped;
	if (ch->parked) {
		sim_exec_lock(&x);
		r = sim_sem_check(&x, &ch->acq);
		sim_exec_unlock(&x);
		if (r == SIM_PARK)
			return false;
		/* A fault keeps it parked: the replay checks again. */
		if (r == SIM_FAULT)
			return true;
		WRITE_ONCE(ch->parked, false);
		if (r)
			return true;
	}
	if (!ch->in_entry) {
		/* Acquire: pairs with the guest's release of GP_PUT. */
		put = smp_load_acquire((u32 *)(ch->userd + VGMEM_USERD_GP_PUT));
		if (put == ch->gp_get)
			return false;
		if (sim_gp_fetch(ch, put))
			return true;
	}
	r = sim_pb_run(&x);
	if (r == SIM_PARK) {
		WRITE_ONCE(ch->parked, true);
		return true;
	}
	if (r == SIM_YIELD) {
		atomic64_inc(&ch->sim->turns_split);
		return true;
	}
	if (r == SIM_FAULT)
		return true;
	if (!r)
		sim_gp_complete(ch);
	return true;
}

/*
 * After a round that did nothing: poll again soon, or sleep. *sleep_ns is
 * a moving average of what a sleep really took (1/8 weight per sleep).
 */
static void sim_engine_idle(struct vg_sim *sim, u64 *spin_until,
			    u64 *sleep_ns)
{
	u64 now = ktime_get_ns(), spin;

	if (!*spin_until) {
		spin = max_t(u64, (u64)sim->spin_us * NSEC_PER_USEC,
			     2 * *sleep_ns);
		*spin_until = now + min_t(u64, spin, SIM_SPIN_MAX_NS);
	}
	if (now < *spin_until) {
		cond_resched();
		return;
	}
	usleep_range(sim->poll_us, sim->poll_us + sim->poll_us / 2 + 1);
	*sleep_ns = (*sleep_ns * 7 + (ktime_get_ns() - now)) >> 3;
}

/* vg_sim_engine_hold(): stand still in ch's turn, as a starved thread. */
static void sim_engine_hold(struct vg_sim *sim, struct vg_bchan *ch)
{
	WRITE_ONCE(sim->holding, true);
	wait_event(sim->hold_wq, READ_ONCE(sim->hold_as) != ch->as ||
		   kthread_should_stop());
	WRITE_ONCE(sim->holding, false);
}

int sim_engine_main(void *data)
{
	struct vg_sim *sim = data;
	struct vg_bchan *ch;
	u64 spin_until = 0, sleep_ns = 0;
	bool progress, stepped, skip;
	u32 i, n;

	while (!kthread_should_stop()) {
		progress = false;
		mutex_lock(&sim->chan_lock);
		n = sim->nr_chans;
		mutex_unlock(&sim->chan_lock);

		for (i = 0; i < n; i++) {
			skip = false;
			mutex_lock(&sim->chan_lock);
			ch = list_first_entry_or_null(&sim->chans,
						      struct vg_bchan, node);
			if (ch) {
				list_move_tail(&ch->node, &sim->chans);
				/*
				 * Under chan_lock, like channel_stop's write:
				 * a stop either sees this channel running and
				 * waits for the turn, or the turn never starts.
				 */
				if (ch->stopped)
					skip = true;
				else
					/*
					 * Release: a waiter that sees this
					 * channel and no longer the previous
					 * one also sees the previous turn.
					 */
					smp_store_release(&sim->running, ch);
			}
			mutex_unlock(&sim->chan_lock);
			if (!ch)
				break;
			if (skip)
				continue;
			if (unlikely(READ_ONCE(sim->hold_as) == ch->as))
				sim_engine_hold(sim, ch);

			stepped = sim_chan_step(ch);
			progress |= stepped;
			sim_chan_fault_notify(ch);

			/*
			 * State is published before "no longer running":
			 * a waiter that sees it frees or inspects the
			 * channel.
			 */
			smp_store_release(&sim->running, NULL);
			smp_mb();
			/*
			 * After progress, or whenever someone waits: an idle
			 * waiter may have looked while this channel was
			 * running. (It counts itself in idle_waiters before
			 * looking, and we read the count after clearing
			 * running, so one of us sees the other.)
			 */
			if (stepped || atomic_read(&sim->idle_waiters))
				wake_up_all(&sim->idle_wq);
		}
		if (progress) {
			spin_until = 0;
			cond_resched();
		} else {
			sim_engine_idle(sim, &spin_until, &sleep_ns);
		}
	}
	return 0;
}
