// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The copy class (MAXWELL_DMA_COPY_A subset). LAUNCH_DMA copies
 * LINE_LENGTH_IN bytes from OFFSET_IN to OFFSET_OUT; with MULTI_LINE it
 * copies LINE_COUNT lines, line i from OFFSET_IN + i * PITCH_IN to
 * OFFSET_OUT + i * PITCH_OUT. SRC_PHYS / DST_PHYS make that side a
 * guest-physical address, otherwise it is a GPU VA of the channel's address
 * space. Both layouts must be pitch (SRC_PITCH and DST_PITCH set): block
 * linear is not simulated. SEM_RELEASE writes SET_SEMAPHORE_PAYLOAD to the
 * 32-bit word at SET_SEMAPHORE_A/B once the copy is done.
 *
 * Accepted LAUNCH_DMA bits: 1:0 (data transfer type) and 2 (flush enable)
 * are ignored, plus the named ones above; any other bit is an ARG error.
 * Bad flags are an ARG error whose ADDR is the flags value. Zero
 * LINE_LENGTH_IN, zero LINE_COUNT with MULTI_LINE, and a range that
 * overflows (or, for a VA, ends past 2^40) are ARG errors with the start
 * address; unmapped VAs are VA errors, unreachable guest memory GUEST_MEM.
 * A copy that faults midway has copied what came before the fault.
 */
#include "sim_internal.h"

#define SIM_CE_FLAGS_OK	(0x7u | VGMEM_CE_LAUNCH_SEM_RELEASE | \
			 VGMEM_CE_LAUNCH_SRC_PITCH | VGMEM_CE_LAUNCH_DST_PITCH | \
			 VGMEM_CE_LAUNCH_MULTI_LINE | VGMEM_CE_LAUNCH_SRC_PHYS | \
			 VGMEM_CE_LAUNCH_DST_PHYS)

static int sim_ce_arg_fault(struct sim_exec *x, u64 addr)
{
	sim_chan_fault(x->ch, VGMEM_CHAN_ERR_ARG, x->mthd, addr);
	return VGMEM_CHAN_ERR_ARG;
}

static int sim_ce_gmem_fault(struct sim_exec *x, u64 gpa)
{
	sim_chan_fault(x->ch, VGMEM_CHAN_ERR_GUEST_MEM, x->mthd, gpa);
	return VGMEM_CHAN_ERR_GUEST_MEM;
}

static u32 sim_page_left(u64 a)
{
	return (u32)(SIM_PAGE_SIZE - (a & (SIM_PAGE_SIZE - 1)));
}

/* One line of len bytes; as->lock held. */
static int sim_ce_line(struct sim_exec *x, u32 flags, u64 src, u64 dst,
		       u64 len)
{
	const struct vg_guest_mem *g = &x->ch->gmem;
	bool sphys = flags & VGMEM_CE_LAUNCH_SRC_PHYS;
	bool dphys = flags & VGMEM_CE_LAUNCH_DST_PHYS;
	u8 *ps, *pd;
	u32 n, ns;
	u64 want;

	lockdep_assert_held(&x->as->lock);
	while (len) {
		if (sphys && dphys) {
			n = (u32)min_t(u64, len, SIM_BOUNCE_SIZE);
			if (g->read(g->priv, src, x->ch->bounce, n))
				return sim_ce_gmem_fault(x, src);
			if (g->write(g->priv, dst, x->ch->bounce, n))
				return sim_ce_gmem_fault(x, dst);
			x->as->cost.bytes_guest += 2ull * n;
		} else if (sphys) {
			pd = sim_va_span(x, dst, len, &n);
			if (!pd)
				return sim_va_fault(x, dst);
			if (g->read(g->priv, src, pd, n))
				return sim_ce_gmem_fault(x, src);
			x->as->cost.bytes_guest += n;
		} else if (dphys) {
			ps = sim_va_span(x, src, len, &n);
			if (!ps)
				return sim_va_fault(x, src);
			if (g->write(g->priv, dst, ps, n))
				return sim_ce_gmem_fault(x, dst);
			x->as->cost.bytes_guest += n;
		} else {
			/* Both in VA space: the span both pages allow. */
			want = min_t(u64, len, min(sim_page_left(src),
						   sim_page_left(dst)));
			ps = sim_va_span(x, src, want, &ns);
			if (!ps)
				return sim_va_fault(x, src);
			pd = sim_va_span(x, dst, want, &n);
			if (!pd)
				return sim_va_fault(x, dst);
			memmove(pd, ps, n);
		}
		src += n;
		dst += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

/* The last byte + 1 of lines lines of len at base with pitch; false if it overflows. */
static bool sim_ce_extent(u64 base, u32 pitch, u32 lines, u64 len, bool va,
			  u64 *end)
{
	u64 off;

	if (check_mul_overflow((u64)pitch, (u64)(lines - 1), &off) ||
	    check_add_overflow(base, off, end) ||
	    check_add_overflow(*end, len, end))
		return false;
	return !va || *end <= SIM_VA_LIMIT;
}

static int sim_ce_launch(struct sim_exec *x, struct sim_ce *ce, u32 flags)
{
	u32 lines = (flags & VGMEM_CE_LAUNCH_MULTI_LINE) ? ce->line_count : 1;
	u64 len = ce->line_length, end, src, dst;
	u32 i;
	int r = 0;

	if ((flags & ~SIM_CE_FLAGS_OK) ||
	    !(flags & VGMEM_CE_LAUNCH_SRC_PITCH) ||
	    !(flags & VGMEM_CE_LAUNCH_DST_PITCH))
		return sim_ce_arg_fault(x, flags);
	if (!len || !lines)
		return sim_ce_arg_fault(x, ce->offset_in);
	if (!sim_ce_extent(ce->offset_in, ce->pitch_in, lines, len,
			   !(flags & VGMEM_CE_LAUNCH_SRC_PHYS), &end))
		return sim_ce_arg_fault(x, ce->offset_in);
	if (!sim_ce_extent(ce->offset_out, ce->pitch_out, lines, len,
			   !(flags & VGMEM_CE_LAUNCH_DST_PHYS), &end))
		return sim_ce_arg_fault(x, ce->offset_out);

	mutex_lock(&x->as->lock);
	x->as->cost.launches++;
	for (i = 0; i < lines && !r; i++) {
		src = ce->offset_in + (u64)i * ce->pitch_in;
		dst = ce->offset_out + (u64)i * ce->pitch_out;
		r = sim_ce_line(x, flags, src, dst, len);
	}
	if (!r && (flags & VGMEM_CE_LAUNCH_SEM_RELEASE))
		r = sim_sem_release(x, ce->sem_va, ce->sem_payload);
	mutex_unlock(&x->as->lock);
	return r;
}

int sim_ce_method(struct sim_exec *x, struct sim_ce *ce, u32 mthd, u32 data)
{
	switch (mthd) {
	case VGMEM_CE_OFFSET_IN_UPPER:
		ce->offset_in = (ce->offset_in & 0xffffffffull) | ((u64)data << 32);
		return 0;
	case VGMEM_CE_OFFSET_IN_LOWER:
		ce->offset_in = (ce->offset_in & ~0xffffffffull) | data;
		return 0;
	case VGMEM_CE_OFFSET_OUT_UPPER:
		ce->offset_out = (ce->offset_out & 0xffffffffull) | ((u64)data << 32);
		return 0;
	case VGMEM_CE_OFFSET_OUT_LOWER:
		ce->offset_out = (ce->offset_out & ~0xffffffffull) | data;
		return 0;
	case VGMEM_CE_PITCH_IN:
		ce->pitch_in = data;
		return 0;
	case VGMEM_CE_PITCH_OUT:
		ce->pitch_out = data;
		return 0;
	case VGMEM_CE_LINE_LENGTH_IN:
		ce->line_length = data;
		return 0;
	case VGMEM_CE_LINE_COUNT:
		ce->line_count = data;
		return 0;
	case VGMEM_CE_SET_SEMAPHORE_A:
		ce->sem_va = (ce->sem_va & 0xffffffffull) | ((u64)data << 32);
		return 0;
	case VGMEM_CE_SET_SEMAPHORE_B:
		ce->sem_va = (ce->sem_va & ~0xffffffffull) | (data & ~3u);
		return 0;
	case VGMEM_CE_SET_SEMAPHORE_PAYLOAD:
		ce->sem_payload = data;
		return 0;
	case VGMEM_CE_LAUNCH_DMA:
		return sim_ce_launch(x, ce, data);
	default:
		return sim_method_fault(x, VGMEM_CHAN_ERR_METHOD);
	}
}
