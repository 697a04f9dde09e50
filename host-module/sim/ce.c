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
 * Each page step reads its source before it writes its destination, so
 * with both sides bad the source's error is reported. A copy that faults
 * midway has copied what came before the fault.
 *
 * A launch runs as ch->job (line and offset in the line), a turn's budget
 * at a time, so LINE_COUNT up to 2^32 cannot hold the engine.
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

/*
 * One step of a line with a guest-physical side: at most a page of the VA
 * side (or SIM_BOUNCE_SIZE bytes) through ch->bounce, so the guest memory
 * accessor runs without as->lock and the VA side is translated and touched
 * under it. Returns the bytes done in *n.
 */
static int sim_ce_step_phys(struct sim_exec *x, bool sphys, bool dphys,
			    u64 src, u64 dst, u64 len, u32 *n)
{
	const struct vg_guest_mem *g = &x->ch->gmem;
	u8 *bounce = x->ch->bounce;
	u8 *p;

	lockdep_assert_not_held(&x->as->lock);
	if (sphys && dphys) {
		*n = (u32)min_t(u64, len, SIM_BOUNCE_SIZE);
		if (g->read(g->priv, src, bounce, *n))
			return sim_ce_gmem_fault(x, src);
		if (g->write(g->priv, dst, bounce, *n))
			return sim_ce_gmem_fault(x, dst);
		sim_exec_lock(x);
		x->as->cost.bytes_guest += 2ull * *n;
		sim_exec_unlock(x);
		return 0;
	}
	if (sphys) {
		/* Read the guest first: as much as dst's page takes. */
		*n = (u32)min_t(u64, len, sim_page_left(dst));
		if (g->read(g->priv, src, bounce, *n))
			return sim_ce_gmem_fault(x, src);
		sim_exec_lock(x);
		p = sim_va_span(x, dst, *n, true, n);
		if (p) {
			memcpy(p, bounce, *n);
			x->as->cost.bytes_guest += *n;
		}
		sim_exec_unlock(x);
		return p ? 0 : sim_va_fault(x, dst);
	}
	sim_exec_lock(x);
	p = sim_va_span(x, src, len, false, n);
	if (p) {
		memcpy(bounce, p, *n);
		x->as->cost.bytes_guest += *n;
	}
	sim_exec_unlock(x);
	if (!p)
		return sim_va_fault(x, src);
	if (g->write(g->priv, dst, bounce, *n))
		return sim_ce_gmem_fault(x, dst);
	return 0;
}

/*
 * The rest of the current line, from job->off: src, dst and len are where
 * that rest starts and how long it is. A VA-to-VA line runs under
 * as->lock, relaxed between page spans; a line touching guest memory takes
 * it per step. Out of budget, job->off says how far it got (SIM_YIELD).
 */
static int sim_ce_line(struct sim_exec *x, struct sim_job *job, u64 src,
		       u64 dst, u64 len)
{
	bool sphys = job->flags & VGMEM_CE_LAUNCH_SRC_PHYS;
	bool dphys = job->flags & VGMEM_CE_LAUNCH_DST_PHYS;
	u8 *ps, *pd;
	u32 n, ns;
	u64 want;
	int r;

	if (sphys || dphys) {
		while (len) {
			r = sim_ce_step_phys(x, sphys, dphys, src, dst, len, &n);
			if (r)
				return r;
			src += n;
			dst += n;
			len -= n;
			job->off += n;
			if (sim_exec_spend(x, n) && len)
				return SIM_YIELD;
			x->since_resched += n;
			if (x->since_resched >= SIM_STEP_BYTES) {
				x->since_resched = 0;
				cond_resched();
			}
		}
		return 0;
	}

	sim_exec_lock(x);
	while (len) {
		/* Both in VA space: the span both pages allow. */
		want = min_t(u64, len, min(sim_page_left(src),
					   sim_page_left(dst)));
		ps = sim_va_span(x, src, want, false, &ns);
		if (!ps) {
			sim_exec_unlock(x);
			return sim_va_fault(x, src);
		}
		pd = sim_va_span(x, dst, want, true, &n);
		if (!pd) {
			sim_exec_unlock(x);
			return sim_va_fault(x, dst);
		}
		memmove(pd, ps, n);
		src += n;
		dst += n;
		len -= n;
		job->off += n;
		if (sim_exec_spend(x, 2 * n) && len) {
			sim_exec_unlock(x);
			return SIM_YIELD;
		}
		sim_exec_relax(x, 2 * n);
	}
	sim_exec_unlock(x);
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

static u32 sim_ce_lines(const struct sim_job *job)
{
	return (job->flags & VGMEM_CE_LAUNCH_MULTI_LINE) ? job->ce.line_count : 1;
}

/* From line job->line, offset job->off on; then the semaphore release. */
int sim_ce_run(struct sim_exec *x, struct sim_job *job)
{
	const struct sim_ce *ce = &job->ce;
	u32 lines = sim_ce_lines(job);
	u64 len = ce->line_length, src, dst;
	int r;

	while (job->line < lines) {
		src = ce->offset_in + (u64)job->line * ce->pitch_in + job->off;
		dst = ce->offset_out + (u64)job->line * ce->pitch_out + job->off;
		r = sim_ce_line(x, job, src, dst, len - job->off);
		if (r)
			return r;
		job->line++;
		job->off = 0;
		/* A line costs more than its bytes: 2^32 short lines add up. */
		if (sim_exec_spend(x, SIM_ELEM_COST) && job->line < lines)
			return SIM_YIELD;
	}
	if (job->flags & VGMEM_CE_LAUNCH_SEM_RELEASE) {
		sim_exec_lock(x);
		r = sim_sem_release(x, ce->sem_va, ce->sem_payload);
		sim_exec_unlock(x);
		return r;
	}
	return 0;
}

/* Check a launch, make it the channel's job and run its first part. */
static int sim_ce_launch(struct sim_exec *x, const struct sim_ce *ce,
			 u32 flags)
{
	struct sim_job *job = &x->ch->job;
	u32 lines = (flags & VGMEM_CE_LAUNCH_MULTI_LINE) ? ce->line_count : 1;
	u64 len = ce->line_length, end;

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

	memset(job, 0, sizeof(*job));
	job->kind = SIM_JOB_CE;
	job->mthd = x->mthd;
	job->flags = flags;
	job->ce = *ce;
	sim_exec_lock(x);
	x->as->cost.launches++;
	sim_exec_unlock(x);
	return sim_job_run(x);
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
