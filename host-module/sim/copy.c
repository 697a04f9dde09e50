// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The core's copy engine: copy_submit copies a batch or queues it for a
 * worker thread (see below); batches complete in submission order; fences
 * are sequence numbers, so fence f is done once fence_done >= f.
 *
 * Device time of a batch by the cost model: a copy between VRAM and host
 * memory crosses PCIe once (len / pcie_bw); VRAM to VRAM reads and writes
 * VRAM (2 len / vram_bw); host to host crosses PCIe twice (2 len / pcie_bw).
 * Relocation copies are not guest accesses: they add nothing to the access
 * counters or to any address space's cost.
 *
 * A batch's result stays on the done list until copy_wait collects it; if
 * nobody does, the oldest beyond SIM_DONE_MAX are dropped and a later wait
 * for them returns -ENOENT: its result is lost, and 0 could hide a failed
 * copy. The done list is in fence order and drops take its head, so every
 * fence up to the newest dropped one (drop_max) that is not on the list was
 * either collected or dropped; such a wait returns -ENOENT too (waiting
 * twice for one fence is the caller's bug). A collected fence above
 * drop_max returns 0 again.
 *
 * A batch submitted to an idle engine (empty queue, nothing being copied)
 * is copied by the submitter itself before copy_submit returns, whatever
 * its size: every caller (relocation, the file cache, the models) waits
 * for its fence right after submitting, so the worker could only add two
 * thread wake-ups (the worker's, then the waiter's), and the waiter is
 * usually a suspended VM. Under emulation on a loaded host those cost
 * from hundreds of microseconds to several milliseconds each (a 2 ms copy
 * of 4 MiB was measured waited for in 3-10 ms), more than the copy itself
 * for a few pages. The worker copies the batches submitted while another
 * one is being copied. copy_busy keeps batches in fence order: whoever
 * copies (worker or submitter) holds it, and the worker takes a queued
 * batch only when it is clear. Long copies offer to reschedule every
 * SIM_COPY_RESCHED pages, in either thread.
 */
#include "sim_internal.h"

#define SIM_DONE_MAX		1024
#define SIM_COPY_POLL_MS	10
/* 1 MiB: a few milliseconds of memcpy at worst, even under emulation. */
#define SIM_COPY_RESCHED	256u

/* Copy c page by page; the caller may sleep (no lock held). */
static void sim_copy_one(const struct vg_copy *c, u32 *pages)
{
	u64 so = c->src_off, dso = c->dst_off, left = c->len, n;
	u32 sp, dp, soff, doff;

	while (left) {
		if (!(++*pages % SIM_COPY_RESCHED))
			cond_resched();
		sp = (u32)(so >> SIM_PAGE_SHIFT);
		dp = (u32)(dso >> SIM_PAGE_SHIFT);
		soff = (u32)(so & (SIM_PAGE_SIZE - 1));
		doff = (u32)(dso & (SIM_PAGE_SIZE - 1));
		n = min_t(u64, left, SIM_PAGE_SIZE - max(soff, doff));
		memcpy(sim_mem_page(c->dst, dp) + doff,
		       sim_mem_page(c->src, sp) + soff, n);
		so += n;
		dso += n;
		left -= n;
	}
}

static u64 sim_batch_cost(struct vg_sim *sim, const struct sim_batch *b)
{
	u64 vram = 0, pcie = 0;
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		const struct vg_copy *c = &b->copies[i];

		if (c->src->loc == VG_LOC_VRAM && c->dst->loc == VG_LOC_VRAM)
			vram += 2 * c->len;
		else if (c->src->loc == VG_LOC_HOST && c->dst->loc == VG_LOC_HOST)
			pcie += 2 * c->len;
		else
			pcie += c->len;
	}
	return vg_sim_cost_ns(sim, VG_LOC_VRAM, vram) +
	       vg_sim_cost_ns(sim, VG_LOC_HOST, pcie);
}

static void sim_batch_release(struct sim_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		sim_mem_put(b->copies[i].src);
		sim_mem_put(b->copies[i].dst);
	}
	b->n = 0;
}

/* Copy b (or fail it, if injected) and drop its references to the mems. */
static void sim_batch_run(struct vg_sim *sim, struct sim_batch *b)
{
	unsigned int i;
	u32 pages = 0;

	if (b->fail) {
		b->result = -EIO;
	} else {
		for (i = 0; i < b->n; i++)
			sim_copy_one(&b->copies[i], &pages);
		b->result = 0;
	}
	b->device_ns = b->fail ? 0 : sim_batch_cost(sim, b);
	sim_batch_release(b);
}

/* b is done: put it on the done list, advance fence_done, clear copy_busy. */
static void sim_batch_publish(struct vg_sim *sim, struct sim_batch *b)
{
	struct sim_batch *old = NULL;
	bool more;

	spin_lock(&sim->copy_lock);
	list_add_tail(&b->node, &sim->copy_done);
	if (++sim->nr_done > SIM_DONE_MAX) {
		old = list_first_entry(&sim->copy_done, struct sim_batch, node);
		list_del(&old->node);
		sim->nr_done--;
		sim->drop_max = old->fence;
	}
	smp_store_release(&sim->fence_done, b->fence);
	sim->copy_busy = false;
	more = !list_empty(&sim->copy_queue);
	spin_unlock(&sim->copy_lock);
	kfree(old);
	wake_up_all(&sim->copy_done_wq);
	/* Batches queued behind an inline copy wait for the worker. */
	if (more)
		wake_up_all(&sim->copy_wq);
}

static bool sim_copy_ready(struct vg_sim *sim)
{
	return !list_empty(&sim->copy_queue) && !READ_ONCE(sim->copy_busy);
}

static int sim_copy_main(void *data)
{
	struct vg_sim *sim = data;
	struct sim_batch *b;

	while (!kthread_should_stop()) {
		b = NULL;
		spin_lock(&sim->copy_lock);
		if (!sim->copy_busy) {
			b = list_first_entry_or_null(&sim->copy_queue,
						     struct sim_batch, node);
			if (b) {
				list_del(&b->node);
				sim->copy_busy = true;
			}
		}
		spin_unlock(&sim->copy_lock);
		if (!b) {
			/*
			 * The timeout bounds the wait should kthread_stop not
			 * wake this queue.
			 */
			wait_event_timeout(sim->copy_wq,
					   sim_copy_ready(sim) ||
					   kthread_should_stop(),
					   msecs_to_jiffies(SIM_COPY_POLL_MS));
			continue;
		}
		sim_batch_run(sim, b);
		sim_batch_publish(sim, b);
	}
	return 0;
}

int sim_copy_init(struct vg_sim *sim)
{
	spin_lock_init(&sim->copy_lock);
	INIT_LIST_HEAD(&sim->copy_queue);
	INIT_LIST_HEAD(&sim->copy_done);
	init_waitqueue_head(&sim->copy_wq);
	init_waitqueue_head(&sim->copy_done_wq);
	sim->fence_next = 1;
	sim->fence_done = 0;
	sim->copy_busy = false;
	sim->copier = kthread_run(sim_copy_main, sim, "vgsim-copy");
	if (IS_ERR(sim->copier)) {
		int err = (int)PTR_ERR(sim->copier);

		sim->copier = NULL;
		return err;
	}
	return 0;
}

/* After the worker stopped: drop what nobody collected. */
void sim_copy_fini(struct vg_sim *sim)
{
	struct sim_batch *b, *tmp;

	if (sim->copier)
		kthread_stop(sim->copier);
	sim->copier = NULL;
	list_for_each_entry_safe(b, tmp, &sim->copy_queue, node) {
		list_del(&b->node);
		sim_batch_release(b);
		kfree(b);
	}
	list_for_each_entry_safe(b, tmp, &sim->copy_done, node) {
		list_del(&b->node);
		kfree(b);
	}
}

static bool sim_copy_valid(const struct vg_copy *c)
{
	u64 send, dend;

	if (!c->src || !c->dst || !c->len)
		return false;
	if (check_add_overflow(c->src_off, c->len, &send) ||
	    check_add_overflow(c->dst_off, c->len, &dend))
		return false;
	if (send > c->src->size || dend > c->dst->size)
		return false;
	/* Overlap within one mem has no defined result. */
	if (c->src == c->dst && c->src_off < dend && c->dst_off < send)
		return false;
	return true;
}

int sim_copy_submit(struct vg_sim *sim, const struct vg_copy *copies,
		    unsigned int n, u64 *fence)
{
	struct sim_batch *b;
	unsigned int i;
	bool inline_copy;
	size_t sz;

	if (!fence || (n && !copies))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!sim_copy_valid(&copies[i]))
			return -EINVAL;
	if (check_mul_overflow((size_t)n, sizeof(*copies), &sz) ||
	    check_add_overflow(sz, sizeof(*b), &sz))
		return -EINVAL;
	b = kmalloc(sz, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->n = n;
	b->result = 0;
	b->device_ns = 0;
	b->fail = sim_inject_hit(sim, VG_SIM_INJ_COPY);
	for (i = 0; i < n; i++) {
		b->copies[i] = copies[i];
		sim_mem_get(copies[i].src);
		sim_mem_get(copies[i].dst);
	}

	spin_lock(&sim->copy_lock);
	b->fence = sim->fence_next++;
	inline_copy = !sim->copy_busy && list_empty(&sim->copy_queue);
	if (inline_copy)
		sim->copy_busy = true;
	else
		list_add_tail(&b->node, &sim->copy_queue);
	spin_unlock(&sim->copy_lock);
	*fence = b->fence;
	if (inline_copy) {
		sim_batch_run(sim, b);
		sim_batch_publish(sim, b);
	} else {
		wake_up_all(&sim->copy_wq);
	}
	return 0;
}

int sim_copy_wait(struct vg_sim *sim, u64 fence, u64 *device_ns)
{
	struct sim_batch *b, *found = NULL;
	u64 next, drop_max;
	int err;

	spin_lock(&sim->copy_lock);
	next = sim->fence_next;
	spin_unlock(&sim->copy_lock);
	if (!fence || fence >= next)
		return -EINVAL;

	wait_event(sim->copy_done_wq,
		   smp_load_acquire(&sim->fence_done) >= fence);

	spin_lock(&sim->copy_lock);
	list_for_each_entry(b, &sim->copy_done, node) {
		if (b->fence == fence) {
			found = b;
			list_del(&b->node);
			sim->nr_done--;
			break;
		}
	}
	drop_max = sim->drop_max;
	spin_unlock(&sim->copy_lock);

	if (device_ns)
		*device_ns = found ? found->device_ns : 0;
	if (found)
		err = found->result;
	else
		err = fence <= drop_max ? -ENOENT : 0;
	kfree(found);
	return err;
}
