// SPDX-License-Identifier: MIT
/*
 * Pushbuffer building: method headers encoded as Fermi+ GPUs (and nouveau's
 * NVC0_FIFO_PKHDR_*) do, appended to the open segment of the channel's
 * pushbuffer ring (see vgmem_priv.h for the ring positions).
 */
#include <errno.h>
#include <string.h>
#include "vgmem_priv.h"

#define PKHDR_COUNT_MAX		0x1fffu

/*
 * Wait until the dwords up to pos (exclusive) are free: until entries
 * complete, however long that takes (VGMEM_WAIT_FOREVER), or the channel
 * faults (-EIO).
 */
static int pb_wait_space(struct vgmem_chan *ch, uint64_t end)
{
	unsigned int spins = 0;
	int ret;

	/*
	 * pb_tail only moves forward, so room by the last poll is room now:
	 * no USERD read (over a transport, a call and two locks each).
	 */
	if (ch->error)
		return -EIO;
	if (end - ch->pb_tail <= ch->pb_dw)
		return 0;
	for (;;) {
		ret = vgmem_chan_poll(ch);
		if (ret)
			return ret;
		if (end - ch->pb_tail <= ch->pb_dw)
			return 0;
		vgmem_relax(spins++);
	}
}

/*
 * Room for n more dwords in the open segment, physically contiguous with
 * it. Returns where to write them, or NULL after recording why in pb_err.
 */
static uint32_t *pb_reserve(struct vgmem_chan *ch, uint64_t n)
{
	uint64_t len = ch->pb_cur - ch->pb_head;
	uint64_t hs = ch->pb_head % ch->pb_dw;
	uint64_t max = ch->pb_dw < VGMEM_SEG_MAX_DW ? ch->pb_dw : VGMEM_SEG_MAX_DW;
	uint64_t new_head;
	int ret;

	if (ch->pb_err)
		return NULL;
	if (len + n > max) {
		ch->pb_err = -ENOSPC;
		return NULL;
	}
	if (hs + len + n > ch->pb_dw) {
		/* Move the open segment to the start of the buffer. */
		new_head = (ch->pb_head / ch->pb_dw + 1) * ch->pb_dw;
		ret = pb_wait_space(ch, new_head + len + n);
		if (ret) {
			ch->pb_err = ret;
			return NULL;
		}
		memmove(ch->pb, ch->pb + hs, len * 4);
		ch->pb_head = new_head;
		ch->pb_cur = new_head + len;
		/* Nothing in flight now starts below new_head - pb_dw + len + n. */
	} else {
		ret = pb_wait_space(ch, ch->pb_cur + n);
		if (ret) {
			ch->pb_err = ret;
			return NULL;
		}
	}
	return ch->pb + ch->pb_cur % ch->pb_dw;
}

static void pb_method(struct vgmem_chan *ch, uint32_t type, unsigned int subc,
		      uint32_t mthd, const uint32_t *data, unsigned int n)
{
	uint32_t *p;

	p = pb_reserve(ch, 1 + (uint64_t)n);
	if (!p)
		return;
	p[0] = VGMEM_PKHDR(type, subc, mthd, n);
	if (n)
		memcpy(p + 1, data, (size_t)n * 4);
	ch->pb_cur += 1 + (uint64_t)n;
}

void vgmem_pb_inc(struct vgmem_chan *ch, unsigned int subc, uint32_t mthd,
		  const uint32_t *data, unsigned int n)
{
	unsigned int k;

	/* A header carries at most 8191 dwords; continue at the next method. */
	while (n) {
		k = n > PKHDR_COUNT_MAX ? PKHDR_COUNT_MAX : n;
		pb_method(ch, VGMEM_PKHDR_INC, subc, mthd, data, k);
		data += k;
		mthd += 4 * k;
		n -= k;
	}
}

void vgmem_pb_noninc(struct vgmem_chan *ch, unsigned int subc, uint32_t mthd,
		     const uint32_t *data, unsigned int n)
{
	unsigned int k;

	while (n) {
		k = n > PKHDR_COUNT_MAX ? PKHDR_COUNT_MAX : n;
		pb_method(ch, VGMEM_PKHDR_NONINC, subc, mthd, data, k);
		data += k;
		n -= k;
	}
}

void vgmem_pb_immd(struct vgmem_chan *ch, unsigned int subc, uint32_t mthd,
		   uint16_t data)
{
	uint32_t *p;

	p = pb_reserve(ch, 1);
	if (!p)
		return;
	/* The count field carries 13 bits of data. */
	p[0] = VGMEM_PKHDR(VGMEM_PKHDR_IMMD, subc, mthd, data & PKHDR_COUNT_MAX);
	ch->pb_cur++;
}

void vgmem_pb_raw(struct vgmem_chan *ch, const uint32_t *dw, unsigned int n)
{
	uint32_t *p;

	if (!n)
		return;
	p = pb_reserve(ch, n);
	if (!p)
		return;
	memcpy(p, dw, (size_t)n * 4);
	ch->pb_cur += n;
}
