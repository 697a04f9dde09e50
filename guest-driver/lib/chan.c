// SPDX-License-Identifier: MIT
/*
 * libvgmem channels: creation, submission of GPFIFO entries and completion
 * tracking against GP_GET (see vgmem_priv.h for the sequence arithmetic).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "vgmem_priv.h"

#ifdef __SANITIZE_THREAD__
/* The word vgmem_fence_*() touch under ThreadSanitizer (vgmem_priv.h). */
unsigned long vgmem_fence_word;
#endif

uint64_t vgmem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Back off while polling USERD: yield first (the GPU usually finishes in
 * microseconds), then sleep up to 100 us so that waiting guests do not
 * starve the GPU's engine thread.
 */
void vgmem_relax(unsigned int spins)
{
	struct timespec ts = { 0, 0 };

	if (spins < 64) {
		sched_yield();
		return;
	}
	ts.tv_nsec = spins < 1000 ? 10000 : 100000;
	nanosleep(&ts, NULL);
}

static uint32_t userd_rd(struct vgmem_chan *ch, uint32_t off)
{
	return ch->dev->ops->userd_read(ch->dev->t, ch->id, off);
}

int vgmem_chan_poll(struct vgmem_chan *ch)
{
	uint32_t mask = ch->entries - 1;
	uint32_t err, get, put, out;
	uint64_t done;

	if (ch->error)
		return -EIO;
	err = userd_rd(ch, VGMEM_USERD_ERROR);
	if (err) {
		ch->error = err;
		return -EIO;
	}
	get = userd_rd(ch, VGMEM_USERD_GP_GET);
	put = (uint32_t)ch->submitted & mask;
	out = (put - get) & mask;
	/* GP_GET only moves forward; never let a stale read move us back. */
	if (out <= ch->submitted - ch->done) {
		done = ch->submitted - out;
		if (done > ch->done)
			ch->done = done;
	}
	if (ch->done == ch->submitted)
		ch->pb_tail = ch->pb_head;
	else
		ch->pb_tail = ch->seg_start[ch->done & mask];
	return 0;
}

/*
 * How long a waiter only yields before it starts to sleep. A sleep asks for
 * 10 us but costs far more where timers are coarse or emulated (hundreds of
 * microseconds under QEMU TCG), which would make the latency of a short
 * round trip bimodal; a spin bounded in wall time (not in iterations, whose
 * cost varies) covers the usual completion and still yields the CPU to the
 * GPU's engine on every turn.
 */
#define VGMEM_SPIN_NS	100000ull

int vgmem_chan_wait_outstanding(struct vgmem_chan *ch, uint64_t outstanding,
				uint64_t timeout_ns)
{
	uint64_t start = 0, now;
	unsigned int spins = 0;
	int ret;

	for (;;) {
		ret = vgmem_chan_poll(ch);
		if (ret)
			return ret;
		if (ch->submitted - ch->done <= outstanding)
			return 0;
		now = vgmem_now_ns();
		if (!start)
			start = now;
		else if (timeout_ns && now - start >= timeout_ns)
			return -ETIMEDOUT;
		if (now - start < VGMEM_SPIN_NS) {
			sched_yield();
			continue;
		}
		/* Spun long enough: go straight to vgmem_relax's sleeps. */
		if (spins < 64)
			spins = 64;
		vgmem_relax(spins++);
	}
}

/* Write one entry into the ring and publish it. */
static int publish(struct vgmem_chan *ch, uint64_t entry, uint64_t seg_start,
		   uint64_t *seq)
{
	uint32_t slot;
	int ret;

	/*
	 * Leave one slot free: GP_PUT == GP_GET means empty. done only moves
	 * forward, so a slot free by the last poll is free now: poll only
	 * when the ring looks full.
	 */
	if (ch->submitted - ch->done > ch->entries - 2) {
		ret = vgmem_chan_wait_outstanding(ch, ch->entries - 2,
						  VGMEM_WAIT_FOREVER);
		if (ret)
			return ret;
	}
	slot = (uint32_t)ch->submitted & (ch->entries - 1);
	ch->seg_start[slot] = seg_start;
	ch->gpfifo[slot] = entry;
	ch->submitted++;
	/* Entry and pushbuffer must be visible before GP_PUT moves. */
	vgmem_fence_release();
	ch->dev->ops->userd_write(ch->dev->t, ch->id, VGMEM_USERD_GP_PUT,
				  (uint32_t)ch->submitted & (ch->entries - 1));
	if (seq)
		*seq = ch->submitted;
	return 0;
}

int vgmem_submit(struct vgmem_chan *ch, uint64_t *seq)
{
	uint64_t ndw, entry;
	int ret;

	if (!ch)
		return -EINVAL;
	/*
	 * A fault already seen fails at once. One not seen yet is not
	 * looked for here: that would cost two USERD reads per submission
	 * (over a transport, a call and two locks each), and the next wait
	 * or poll reports it (-EIO); the entry goes to a channel that no
	 * longer runs anything.
	 */
	if (ch->error)
		return -EIO;
	if (ch->pb_err) {
		/* A partial segment is not what the caller asked for: drop it. */
		ret = ch->pb_err;
		ch->pb_err = 0;
		ch->pb_cur = ch->pb_head;
		return ret;
	}
	if (ch->pb_cur == ch->pb_head) {
		if (seq)
			*seq = ch->submitted;
		return 0;
	}
	ndw = ch->pb_cur - ch->pb_head;
	entry = VGMEM_GP_ENTRY(ch->pb_gpa + (ch->pb_head % ch->pb_dw) * 4, ndw);
	ret = publish(ch, entry, ch->pb_head, seq);
	if (ret)
		return ret;
	ch->pb_head = ch->pb_cur;
	return 0;
}

int vgmem_submit_entry(struct vgmem_chan *ch, uint64_t entry, uint64_t *seq)
{
	if (!ch)
		return -EINVAL;
	/* As vgmem_submit(): a fault not seen yet is the next wait's. */
	if (ch->error)
		return -EIO;
	return publish(ch, entry, ch->pb_head, seq);
}

int vgmem_wait(struct vgmem_chan *ch, uint64_t seq, uint64_t timeout_ns)
{
	if (!ch || seq > ch->submitted)
		return -EINVAL;
	return vgmem_chan_wait_outstanding(ch, ch->submitted - seq, timeout_ns);
}

int vgmem_finish(struct vgmem_chan *ch)
{
	uint64_t seq;
	int ret;

	ret = vgmem_submit(ch, &seq);
	if (ret)
		return ret;
	return vgmem_wait(ch, seq, VGMEM_WAIT_FOREVER);
}

uint64_t vgmem_chan_submitted(const struct vgmem_chan *ch)
{
	return ch->submitted;
}

uint32_t vgmem_chan_id(const struct vgmem_chan *ch)
{
	return ch->id;
}

uint32_t vgmem_chan_error(struct vgmem_chan *ch, uint64_t *addr)
{
	uint32_t lo, hi;

	vgmem_chan_poll(ch);
	if (addr) {
		*addr = 0;
		if (ch->error) {
			lo = userd_rd(ch, VGMEM_USERD_ERROR_ADDR_LO);
			hi = userd_rd(ch, VGMEM_USERD_ERROR_ADDR_HI);
			*addr = ((uint64_t)hi << 32) | lo;
		}
	}
	return ch->error;
}

uint32_t vgmem_chan_userd_read(struct vgmem_chan *ch, uint32_t off)
{
	return userd_rd(ch, off);
}

void vgmem_chan_userd_write(struct vgmem_chan *ch, uint32_t off, uint32_t val)
{
	ch->dev->ops->userd_write(ch->dev->t, ch->id, off, val);
}

static void chan_free_mem(struct vgmem_chan *ch)
{
	const struct vgmem_transport_ops *ops = ch->dev->ops;

	if (ch->staging)
		ops->gmem_free(ch->dev->t, ch->staging, ch->staging_bytes);
	if (ch->pb)
		ops->gmem_free(ch->dev->t, ch->pb, ch->pb_bytes);
	if (ch->gpfifo)
		ops->gmem_free(ch->dev->t, ch->gpfifo, ch->gpfifo_bytes);
	free(ch->seg_start);
	free(ch);
}

static int chan_bind(struct vgmem_chan *ch)
{
	uint32_t cls;

	cls = VGMEM_CLASS_COMPUTE;
	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_MTHD_SET_OBJECT, &cls, 1);
	cls = VGMEM_CLASS_COPY;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_MTHD_SET_OBJECT, &cls, 1);
	return vgmem_finish(ch);
}

int vgmem_chan_create(struct vgmem_dev *dev, uint32_t entries, size_t pb_bytes,
		      size_t staging_bytes, struct vgmem_chan **out)
{
	const struct vgmem_transport_ops *ops;
	struct vgmem_chan *ch;
	struct vgmem_ctrl cmd;
	void *cpu;
	int ret;

	if (!dev || !out || entries < VGMEM_GP_ENTRIES_MIN ||
	    entries > VGMEM_GP_ENTRIES_MAX || (entries & (entries - 1)))
		return -EINVAL;
	if (!pb_bytes)
		pb_bytes = VGMEM_PB_DEFAULT;
	if (!staging_bytes)
		staging_bytes = VGMEM_STAGING_DEFAULT;
	/* A segment must hold at least a kernel launch or a copy. */
	if (pb_bytes < 256 || pb_bytes > (1ull << 30) || staging_bytes > UINT32_MAX)
		return -EINVAL;
	pb_bytes = (pb_bytes + 3) & ~(size_t)3;
	ops = dev->ops;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->dev = dev;
	ch->entries = entries;
	ch->seg_start = calloc(entries, sizeof(*ch->seg_start));
	if (!ch->seg_start) {
		free(ch);
		return -ENOMEM;
	}

	ch->gpfifo_bytes = (size_t)entries * 8;
	ret = ops->gmem_alloc(dev->t, ch->gpfifo_bytes, &cpu, &ch->gpfifo_gpa);
	if (ret)
		goto err_free_mem;
	ch->gpfifo = cpu;
	memset(ch->gpfifo, 0, ch->gpfifo_bytes);

	ret = ops->gmem_alloc(dev->t, pb_bytes, &cpu, &ch->pb_gpa);
	if (ret)
		goto err_free_mem;
	ch->pb = cpu;
	ch->pb_bytes = pb_bytes;
	ch->pb_dw = pb_bytes / 4;

	ret = ops->gmem_alloc(dev->t, staging_bytes, &cpu, &ch->staging_gpa);
	if (ret)
		goto err_free_mem;
	ch->staging = cpu;
	ch->staging_bytes = staging_bytes;

	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_CHAN_CREATE;
	cmd.chan.gpfifo_gpa = ch->gpfifo_gpa;
	cmd.chan.gpfifo_entries = entries;
	ret = vgmem_ctrl_op(dev, &cmd);
	if (ret)
		goto err_free_mem;
	ch->id = cmd.chan.chan_id;

	ret = chan_bind(ch);
	if (ret)
		goto err_destroy_chan;

	pthread_mutex_lock(&dev->lock);
	ch->next = dev->chans;
	dev->chans = ch;
	pthread_mutex_unlock(&dev->lock);
	*out = ch;
	return 0;

err_destroy_chan:
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_CHAN_DESTROY;
	cmd.chan.chan_id = ch->id;
	vgmem_ctrl_op(dev, &cmd);
err_free_mem:
	chan_free_mem(ch);
	return ret;
}

void vgmem_chan_destroy(struct vgmem_chan *ch)
{
	struct vgmem_dev *dev;
	struct vgmem_chan **pp;
	struct vgmem_ctrl cmd;

	if (!ch)
		return;
	dev = ch->dev;
	pthread_mutex_lock(&dev->lock);
	for (pp = &dev->chans; *pp; pp = &(*pp)->next) {
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);

	/* The host stops the channel before this returns; then free its rings. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_CHAN_DESTROY;
	cmd.chan.chan_id = ch->id;
	vgmem_ctrl_op(dev, &cmd);
	chan_free_mem(ch);
}
