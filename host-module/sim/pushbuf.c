// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Pushbuffer decoding (Fermi+ method headers, as nouveau's NVC0_FIFO_PKHDR_*
 * encode them), host methods (SET_OBJECT, NOP, semaphores) and dispatch of
 * class methods to the object bound to the subchannel.
 *
 * The decoder keeps its position in the channel, so a channel parked on a
 * semaphore acquire in the middle of a packet resumes exactly there, and so
 * does one whose turn ended out of budget (between two methods, or inside a
 * launch, whose progress ch->job keeps).
 *
 * Error reports (USERD ERROR_INFO / ERROR_ADDR):
 *  - bad header (unknown type, packet longer than the entry): METHOD, the
 *    header dword, the header's guest-physical address;
 *  - unknown method: METHOD, the method offset, the dword's address;
 *  - no or unknown class: CLASS, the method offset, the dword's address;
 *  - pushbuffer not readable: PUSHBUF, the GP_GET index, the address.
 * A packet may not continue into the next GPFIFO entry.
 */
#include "sim_internal.h"

/* Guest-physical address of the dword last fetched. */
static u64 sim_pb_addr(const struct sim_pb *pb)
{
	return pb->gpa + (u64)(pb->pos - 1) * 4;
}

static int sim_pb_fault(struct vg_bchan *ch, u32 err, u32 info)
{
	sim_chan_fault(ch, err, info, sim_pb_addr(&ch->pb));
	return (int)err;
}

int sim_method_fault(struct sim_exec *x, u32 err)
{
	return sim_pb_fault(x->ch, err, x->mthd);
}

static int sim_pb_fetch(struct vg_bchan *ch, u32 *dw)
{
	struct sim_pb *pb = &ch->pb;
	u32 n;

	if (pb->pos < pb->buf_start || pb->pos >= pb->buf_start + pb->buf_n) {
		n = min_t(u32, SIM_PB_BUF_DW, pb->ndw - pb->pos);
		if (ch->gmem.read(ch->gmem.priv, pb->gpa + (u64)pb->pos * 4,
				  pb->buf, (size_t)n * 4)) {
			sim_chan_fault(ch, VGMEM_CHAN_ERR_PUSHBUF, ch->gp_get,
				       pb->gpa + (u64)pb->pos * 4);
			return VGMEM_CHAN_ERR_PUSHBUF;
		}
		pb->buf_start = pb->pos;
		pb->buf_n = n;
	}
	*dw = pb->buf[pb->pos - pb->buf_start];
	pb->pos++;
	return 0;
}

/* ---- semaphores ---------------------------------------------------------- */

int sim_sem_release(struct sim_exec *x, u64 va, u32 payload)
{
	lockdep_assert_held(&x->as->lock);
	return sim_va_write(x, va, &payload, sizeof(payload));
}

int sim_sem_check(struct sim_exec *x, const struct sim_acquire *acq)
{
	u32 v;
	int r;

	lockdep_assert_held(&x->as->lock);
	r = sim_va_read(x, acq->va, &v, sizeof(v));
	if (r)
		return r;
	if (acq->op == VGMEM_SEM_OP_ACQUIRE ? v == acq->payload :
	    v >= acq->payload)
		return 0;
	/*
	 * Not yet: the read is not counted, so an acquire costs its one
	 * satisfied read however often it was polled (polls depend on when
	 * the other channel ran, and the cost must not).
	 */
	sim_exec_discard(x);
	return SIM_PARK;
}

static int sim_host_method(struct sim_exec *x, u32 subc, u32 data)
{
	struct vg_bchan *ch = x->ch;
	int r = 0;

	switch (x->mthd) {
	case VGMEM_MTHD_SET_OBJECT:
		if (data != VGMEM_CLASS_COPY && data != VGMEM_CLASS_COMPUTE)
			return sim_pb_fault(ch, VGMEM_CHAN_ERR_CLASS, x->mthd);
		/* A new object starts from reset state. */
		memset(&ch->obj[subc], 0, sizeof(ch->obj[subc]));
		ch->obj[subc].cls = data;
		return 0;
	case VGMEM_MTHD_NOP:
		return 0;
	case VGMEM_MTHD_SEMAPHORE_A:
		ch->sem_va = (ch->sem_va & 0xffffffffull) | ((u64)data << 32);
		return 0;
	case VGMEM_MTHD_SEMAPHORE_B:
		ch->sem_va = (ch->sem_va & ~0xffffffffull) | (data & ~3u);
		return 0;
	case VGMEM_MTHD_SEMAPHORE_C:
		ch->sem_payload = data;
		return 0;
	case VGMEM_MTHD_SEMAPHORE_D:
		break;
	default:
		return sim_pb_fault(ch, VGMEM_CHAN_ERR_METHOD, x->mthd);
	}

	switch (data) {
	case VGMEM_SEM_OP_RELEASE:
		/* A job: the method is consumed, a faulted release replays. */
		memset(&ch->job, 0, sizeof(ch->job));
		ch->job.kind = SIM_JOB_SEM;
		ch->job.mthd = x->mthd;
		ch->job.sem_va = ch->sem_va;
		ch->job.sem_payload = ch->sem_payload;
		return sim_job_run(x);
	case VGMEM_SEM_OP_ACQUIRE:
	case VGMEM_SEM_OP_ACQ_GEQ:
		ch->acq.va = ch->sem_va;
		ch->acq.payload = ch->sem_payload;
		ch->acq.op = data;
		sim_exec_lock(x);
		r = sim_sem_check(x, &ch->acq);
		sim_exec_unlock(x);
		/* Faulted: park on the acquire too; the replay checks it. */
		if (r == SIM_FAULT)
			WRITE_ONCE(ch->parked, true);
		return r;
	default:
		return sim_pb_fault(ch, VGMEM_CHAN_ERR_METHOD, x->mthd);
	}
}

static int sim_method(struct sim_exec *x, u32 subc, u32 mthd, u32 data)
{
	struct vg_bchan *ch = x->ch;
	struct sim_obj *obj = &ch->obj[subc];

	x->mthd = mthd;
	sim_exec_spend(x, SIM_METHOD_COST);
	if (mthd < 0x100)
		return sim_host_method(x, subc, data);
	switch (obj->cls) {
	case VGMEM_CLASS_COPY:
		return sim_ce_method(x, &obj->ce, mthd, data);
	case VGMEM_CLASS_COMPUTE:
		return sim_cp_method(x, &obj->cp, mthd, data);
	default:
		return sim_pb_fault(ch, VGMEM_CHAN_ERR_CLASS, mthd);
	}
}

int sim_job_run(struct sim_exec *x)
{
	struct sim_job *job = &x->ch->job;
	int r;

	x->mthd = job->mthd;
	switch (job->kind) {
	case SIM_JOB_CE:
		r = sim_ce_run(x, job);
		break;
	case SIM_JOB_SEM:
		sim_exec_lock(x);
		r = sim_sem_release(x, job->sem_va, job->sem_payload);
		sim_exec_unlock(x);
		break;
	default:
		r = sim_cp_run(x, job);
		break;
	}
	/* Out of budget or parked on a fault: it goes on from job. */
	if (r != SIM_YIELD && r != SIM_FAULT)
		job->kind = SIM_JOB_NONE;
	return r;
}

int sim_pb_run(struct sim_exec *x)
{
	struct vg_bchan *ch = x->ch;
	struct sim_pb *pb = &ch->pb;
	u32 dw, type, count, mthd;
	int r;

	if (ch->job.kind) {
		r = sim_job_run(x);
		if (r)
			return r;
	}
	for (;;) {
		/* Out of budget: the decoder state is in ch->pb. */
		if (x->spent >= SIM_TURN_BUDGET &&
		    (pb->left || pb->pos < pb->ndw))
			return SIM_YIELD;
		if (!pb->left) {
			if (pb->pos >= pb->ndw)
				return 0;
			r = sim_pb_fetch(ch, &dw);
			if (r)
				return r;
			/* Headers cost too: 2^21 empty packets are work. */
			sim_exec_spend(x, SIM_METHOD_COST);
			type = VGMEM_PKHDR_GET_TYPE(dw);
			count = VGMEM_PKHDR_GET_COUNT(dw);
			pb->subc = VGMEM_PKHDR_GET_SUBC(dw);
			pb->mthd = VGMEM_PKHDR_GET_MTHD(dw);
			switch (type) {
			case VGMEM_PKHDR_IMMD:
				/* The data is the count field. */
				r = sim_method(x, pb->subc, pb->mthd, count);
				if (r)
					return r;
				continue;
			case VGMEM_PKHDR_INC:
			case VGMEM_PKHDR_NONINC:
			case VGMEM_PKHDR_INC_ONCE:
				if (count > pb->ndw - pb->pos)
					return sim_pb_fault(ch,
							    VGMEM_CHAN_ERR_METHOD,
							    dw);
				pb->type = type;
				pb->left = count;
				continue;
			default:
				return sim_pb_fault(ch, VGMEM_CHAN_ERR_METHOD, dw);
			}
		}

		r = sim_pb_fetch(ch, &dw);
		if (r)
			return r;
		mthd = pb->mthd;
		pb->left--;
		/* Advance before executing: a parked method is consumed. */
		if (pb->type == VGMEM_PKHDR_INC) {
			pb->mthd += 4;
		} else if (pb->type == VGMEM_PKHDR_INC_ONCE) {
			pb->mthd += 4;
			pb->type = VGMEM_PKHDR_NONINC;
		}
		r = sim_method(x, pb->subc, mthd, dw);
		if (r)
			return r;
	}
}
