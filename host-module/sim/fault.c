// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable GPU page faults, as NVIDIA GPUs have them since Pascal: an
 * access inside a fault range of its address space that finds no PTE, or
 * writes a read-only one, does not put the channel in an error state.
 * The engine parks the channel on the fault (its method keeps its
 * progress in ch->job, like a turn that ran out of budget), queues a
 * record and goes on with the other channels; a fault thread calls the
 * core's handler with no sim lock held, so the handler may map, copy and
 * allocate; then the channel replays the access (0) or enters
 * VGMEM_CHAN_ERR_VA (an error), on its next turn.
 *
 * Why a thread of its own: the handler may sleep and take the core's
 * locks, and the core waits for the engine (channel_idle_wait,
 * channel_stop) under them. A parked channel has no method in flight, so
 * those waits never wait for a handler.
 *
 * Records: one per (AS, page, write, present) while queued, with the list
 * of the channels parked on it (coalescing: one handler call for all of
 * them). A record holds a reference on its AS, so a handler call under way
 * never sees it freed. channel_destroy takes its channel off the record
 * (a queued record left without channels is dropped); as_destroy drops the
 * AS's queued records. Everything about records and the channels' links to
 * them is under sim->pf_lock, a leaf spinlock, never held across the
 * handler or an allocation.
 */
#include "sim_internal.h"

#define SIM_PF_POLL_MS		10
#define SIM_FR_MIN		8	/* first size of an AS's range array */

static void sim_pf_count(struct vg_sim *sim, enum sim_pf_stat what, u64 n)
{
	atomic64_add((s64)n, &sim->pf_stat[what]);
}

/* ---- fault ranges of an address space (as->lock) -------------------------- */

/* Index of the first range whose end is above va (as->nr_fr if none). */
static u32 sim_fr_find(const struct vg_as *as, u64 va)
{
	u32 lo = 0, hi = as->nr_fr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (as->fr[mid].end <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool sim_as_in_fault_range(struct vg_as *as, u64 va)
{
	u32 i;

	lockdep_assert_held(&as->lock);
	if (!as->nr_fr)
		return false;
	i = sim_fr_find(as, va);
	return i < as->nr_fr && as->fr[i].va <= va;
}

/* Room for one more range; as->lock held (it may sleep: a mutex). */
static int sim_fr_grow(struct vg_as *as)
{
	struct sim_frange *fr;
	u32 cap;

	lockdep_assert_held(&as->lock);
	if (as->nr_fr < as->cap_fr)
		return 0;
	if (as->cap_fr > U32_MAX / 2)
		return -ENOSPC;
	cap = as->cap_fr ? as->cap_fr * 2 : SIM_FR_MIN;
	fr = kvcalloc(cap, sizeof(*fr), GFP_KERNEL);
	if (!fr)
		return -ENOMEM;
	if (as->nr_fr)
		memcpy(fr, as->fr, (size_t)as->nr_fr * sizeof(*fr));
	kvfree(as->fr);
	as->fr = fr;
	as->cap_fr = cap;
	return 0;
}

int sim_as_fault_range(struct vg_as *as, u64 va, u64 size, bool on)
{
	u64 end;
	u32 i;
	int err = 0;

	if (!size || !IS_ALIGNED(va, SIM_PAGE_SIZE) ||
	    !IS_ALIGNED(size, SIM_PAGE_SIZE) ||
	    check_add_overflow(va, size, &end) || end > SIM_VA_LIMIT)
		return -EINVAL;

	sim_as_lock(as);
	i = sim_fr_find(as, va);
	if (on) {
		/* Ranges are sorted and disjoint: only fr[i] can overlap. */
		if (i < as->nr_fr && as->fr[i].va < end) {
			err = -EEXIST;
			goto out_unlock;
		}
		err = sim_fr_grow(as);
		if (err)
			goto out_unlock;
		memmove(&as->fr[i + 1], &as->fr[i],
			(size_t)(as->nr_fr - i) * sizeof(*as->fr));
		as->fr[i].va = va;
		as->fr[i].end = end;
		as->nr_fr++;
	} else {
		if (i >= as->nr_fr || as->fr[i].va != va ||
		    as->fr[i].end != end) {
			err = -ENOENT;
			goto out_unlock;
		}
		memmove(&as->fr[i], &as->fr[i + 1],
			(size_t)(as->nr_fr - i - 1) * sizeof(*as->fr));
		as->nr_fr--;
	}
out_unlock:
	sim_as_unlock(as);
	return err;
}

void sim_as_fault_ranges_free(struct vg_as *as)
{
	kvfree(as->fr);
	as->fr = NULL;
	as->nr_fr = 0;
	as->cap_fr = 0;
}

/* ---- raising (engine thread) ---------------------------------------------- */

static bool sim_fault_same(const struct sim_fault *r, const struct vg_gpu_fault *f)
{
	return !r->busy && r->f.as == f->as && r->f.va == f->va &&
	       r->f.write == f->write && r->f.present == f->present;
}

/*
 * Park x's channel on a fault at va: join a queued record of the same page
 * or queue a new one. The method's progress is in ch->job (or ch->acq) and
 * the caller returns SIM_FAULT up to sim_chan_step. With no handler set,
 * or no memory for the record, the access errors like one outside every
 * range.
 */
int sim_fault_raise(struct sim_exec *x, u64 va)
{
	struct vg_bchan *ch = x->ch;
	struct vg_sim *sim = ch->sim;
	struct sim_fault *rec, *r, *use = NULL;

	rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	sim_pf_count(sim, SIM_PF_RAISED, 1);
	if (rec) {
		rec->f.as = x->as;
		rec->f.va = va & ~(SIM_PAGE_SIZE - 1);
		rec->f.write = x->pf_write;
		rec->f.present = x->pf_present;
		INIT_LIST_HEAD(&rec->chans);
	}

	spin_lock(&sim->pf_lock);
	if (!rec || !sim->pf_handler)
		goto err_unlock;
	list_for_each_entry(r, &sim->pf_queue, node) {
		if (sim_fault_same(r, &rec->f)) {
			use = r;
			break;
		}
	}
	if (!use) {
		use = rec;
		rec = NULL;
		atomic_inc(&use->f.as->refs);
		list_add_tail(&use->node, &sim->pf_queue);
		atomic_inc(&sim->pf_queued);
	} else {
		sim_pf_count(sim, SIM_PF_COALESCED, 1);
	}
	list_add_tail(&ch->pf_node, &use->chans);
	ch->pf_rec = use;
	ch->pf_res = 0;
	ch->pf_addr = va;
	ch->pf_mthd = x->mthd;
	WRITE_ONCE(ch->pf_state, SIM_PF_WAIT);
	spin_unlock(&sim->pf_lock);
	kfree(rec);
	wake_up(&sim->pf_wq);
	return SIM_FAULT;

err_unlock:
	spin_unlock(&sim->pf_lock);
	kfree(rec);
	sim_pf_count(sim, SIM_PF_FAILED, 1);
	sim_chan_fault(ch, VGMEM_CHAN_ERR_VA, x->mthd, va);
	return VGMEM_CHAN_ERR_VA;
}

/* ---- servicing (fault thread) --------------------------------------------- */

/*
 * Give every channel still parked on rec the answer res and free rec. The
 * channel's next turn replays or errors it (never while it is stopped: the
 * engine does not pick stopped channels).
 */
static void sim_fault_finish(struct vg_sim *sim, struct sim_fault *rec,
			     int res)
{
	struct vg_bchan *ch, *tmp;
	bool called;
	u64 n = 0;

	spin_lock(&sim->pf_lock);
	/* Cancelled records were never the thread's call. */
	called = sim->pf_calling && rec == sim->pf_cur;
	if (called) {
		sim->pf_calling = false;
		sim->pf_cur = NULL;
	}
	list_for_each_entry_safe(ch, tmp, &rec->chans, pf_node) {
		list_del_init(&ch->pf_node);
		ch->pf_rec = NULL;
		ch->pf_res = res;
		/* The answer before the state: the engine reads them in order. */
		smp_store_release(&ch->pf_state, SIM_PF_DONE);
		n++;
	}
	spin_unlock(&sim->pf_lock);
	if (called)
		wake_up_all(&sim->pf_done_wq);
	sim_pf_count(sim, res ? SIM_PF_FAILED : SIM_PF_REPLAYED, n);
	sim_as_put(rec->f.as);
	kfree(rec);
}

/* Call the handler for rec unless its range went away meanwhile. */
static int sim_fault_service(struct sim_fault *rec,
			     int (*handler)(void *priv,
					    const struct vg_gpu_fault *f),
			     void *priv)
{
	struct vg_as *as = rec->f.as;
	bool in;

	sim_as_lock(as);
	in = sim_as_in_fault_range(as, rec->f.va);
	sim_as_unlock(as);
	if (!in || !handler)
		return -EFAULT;
	sim_pf_count(as->sim, SIM_PF_HANDLED, 1);
	return handler(priv, &rec->f);
}

static int sim_fault_main(void *data)
{
	struct vg_sim *sim = data;
	int (*handler)(void *priv, const struct vg_gpu_fault *f);
	struct sim_fault *rec;
	void *priv;
	int res;

	while (!kthread_should_stop()) {
		spin_lock(&sim->pf_lock);
		rec = list_first_entry_or_null(&sim->pf_queue,
					       struct sim_fault, node);
		if (rec) {
			list_del(&rec->node);
			(void)atomic_add_return(-1, &sim->pf_queued);
			rec->busy = true;
			/* set_fault_handler waits for this call to end. */
			sim->pf_calling = true;
			sim->pf_cur = rec;
			sim->pf_call_gen = sim->pf_hgen;
		}
		handler = sim->pf_handler;
		priv = sim->pf_priv;
		spin_unlock(&sim->pf_lock);
		if (!rec) {
			/* The timeout bounds the wait should a wake-up be missed. */
			wait_event_timeout(sim->pf_wq,
					   atomic_read(&sim->pf_queued) ||
					   kthread_should_stop(),
					   msecs_to_jiffies(SIM_PF_POLL_MS));
			continue;
		}
		res = sim_fault_service(rec, handler, priv);
		/* Only an error or 0: anything positive would be a channel error. */
		sim_fault_finish(sim, rec, res < 0 ? res : 0);
	}
	return 0;
}

/* ---- lifetime -------------------------------------------------------------- */

int sim_fault_init(struct vg_sim *sim)
{
	int i;

	spin_lock_init(&sim->pf_lock);
	INIT_LIST_HEAD(&sim->pf_queue);
	atomic_set(&sim->pf_queued, 0);
	init_waitqueue_head(&sim->pf_wq);
	init_waitqueue_head(&sim->pf_done_wq);
	for (i = 0; i < SIM_PF_NR_STATS; i++)
		atomic64_set(&sim->pf_stat[i], 0);
	sim->pf_thread = kthread_run(sim_fault_main, sim, "vgsim-fault");
	if (IS_ERR(sim->pf_thread)) {
		int err = (int)PTR_ERR(sim->pf_thread);

		sim->pf_thread = NULL;
		return err;
	}
	return 0;
}

/* Take every queued record matching as (NULL: all) onto list; pf_lock held. */
static void sim_fault_take(struct vg_sim *sim, struct vg_as *as,
			   struct list_head *list)
{
	struct sim_fault *rec, *tmp;

	lockdep_assert_held(&sim->pf_lock);
	list_for_each_entry_safe(rec, tmp, &sim->pf_queue, node) {
		if (as && rec->f.as != as)
			continue;
		list_move_tail(&rec->node, list);
		(void)atomic_add_return(-1, &sim->pf_queued);
		rec->busy = true;
	}
}

/* Answer the records on list with -ESHUTDOWN (their channels error). */
static void sim_fault_cancel(struct vg_sim *sim, struct list_head *list)
{
	struct sim_fault *rec, *tmp;

	list_for_each_entry_safe(rec, tmp, list, node) {
		list_del(&rec->node);
		sim_pf_count(sim, SIM_PF_CANCELLED, 1);
		sim_fault_finish(sim, rec, -ESHUTDOWN);
	}
}

/* After the engine stopped: wait for a handler call under way, drop the rest. */
void sim_fault_fini(struct vg_sim *sim)
{
	LIST_HEAD(list);

	if (sim->pf_thread)
		kthread_stop(sim->pf_thread);
	sim->pf_thread = NULL;
	spin_lock(&sim->pf_lock);
	sim_fault_take(sim, NULL, &list);
	spin_unlock(&sim->pf_lock);
	sim_fault_cancel(sim, &list);
}

void sim_fault_chan_detach(struct vg_bchan *ch)
{
	struct vg_sim *sim = ch->sim;
	struct sim_fault *rec, *drop = NULL;

	spin_lock(&sim->pf_lock);
	rec = ch->pf_rec;
	if (rec) {
		list_del_init(&ch->pf_node);
		ch->pf_rec = NULL;
		/* Nobody waits for it: no handler call, unless under way. */
		if (!rec->busy && list_empty(&rec->chans)) {
			list_del(&rec->node);
			(void)atomic_add_return(-1, &sim->pf_queued);
			drop = rec;
		}
	}
	spin_unlock(&sim->pf_lock);
	if (drop) {
		sim_pf_count(sim, SIM_PF_CANCELLED, 1);
		sim_as_put(drop->f.as);
		kfree(drop);
	}
}

void sim_fault_as_destroy(struct vg_as *as)
{
	struct vg_sim *sim = as->sim;
	LIST_HEAD(list);

	sim_as_lock(as);
	as->nr_fr = 0;
	sim_as_unlock(as);
	spin_lock(&sim->pf_lock);
	sim_fault_take(sim, as, &list);
	spin_unlock(&sim->pf_lock);
	sim_fault_cancel(sim, &list);
}

/* No call of a handler older than generation gen is under way. */
static bool sim_fault_calls_done(struct vg_sim *sim, u64 gen)
{
	bool done;

	spin_lock(&sim->pf_lock);
	done = !sim->pf_calling || sim->pf_call_gen >= gen;
	spin_unlock(&sim->pf_lock);
	return done;
}

/*
 * Like free_irq: once this returns, the old handler is not running and
 * will not be called again, so its priv may go. The caller must not hold
 * a lock the old handler takes, nor be that handler.
 */
void sim_fault_set_handler(struct vg_sim *sim,
			   int (*handler)(void *priv,
					  const struct vg_gpu_fault *f),
			   void *priv)
{
	u64 gen;

	spin_lock(&sim->pf_lock);
	sim->pf_handler = handler;
	sim->pf_priv = handler ? priv : NULL;
	gen = ++sim->pf_hgen;
	spin_unlock(&sim->pf_lock);
	wait_event(sim->pf_done_wq, sim_fault_calls_done(sim, gen));
}

void vg_sim_fault_stats(struct vg_sim *sim, struct vg_sim_fault_stats *out)
{
	out->raised = (u64)atomic64_read(&sim->pf_stat[SIM_PF_RAISED]);
	out->coalesced = (u64)atomic64_read(&sim->pf_stat[SIM_PF_COALESCED]);
	out->handled = (u64)atomic64_read(&sim->pf_stat[SIM_PF_HANDLED]);
	out->replayed = (u64)atomic64_read(&sim->pf_stat[SIM_PF_REPLAYED]);
	out->failed = (u64)atomic64_read(&sim->pf_stat[SIM_PF_FAILED]);
	out->cancelled = (u64)atomic64_read(&sim->pf_stat[SIM_PF_CANCELLED]);
}
