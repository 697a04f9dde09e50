// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A stopped channel's execution state as bytes, for a migration
 * (channel_save/channel_load, vg_gpu_ops.h): where the engine is in the
 * ring and in the entry's pushbuffer, the packet being decoded, a launch
 * cut short with its progress, a parked acquire, the classes bound to the
 * subchannels with their registers, the sticky error. All of it is
 * offsets, sums and register values (sim_internal.h): nothing refers to
 * host memory, so it means the same on another host's software GPU.
 *
 * Not in it: the ring and the pushbuffers (guest memory, which the VMM
 * moves), the USERD page (the core carries it), the fetch window and the
 * TLB (caches, refilled), and a fault the channel is parked on: loaded,
 * the channel replays the faulting step, which faults again if the page
 * is still missing.
 *
 * The bytes come from another host and are checked like any input before
 * anything changes: magic, version and length, then every value that the
 * engine assumes rather than checks (ring index, decoder position, packet
 * type and subchannel, the job's kind, classes). Register values and job
 * progress need no check beyond that: the engine takes them from guests
 * in the first place, and every memory access it makes with them is
 * translated and bounded.
 */
#include "sim_internal.h"

#define SIM_CS_MAGIC		0x48435356u	/* "VSCH" */
#define SIM_CS_VERSION		1u

struct sim_cs_buf {
	u8 *p;
	u32 pos, len;
	bool bad;
};

static void cs_put(struct sim_cs_buf *b, u64 v, u32 bytes)
{
	u32 i;

	if (b->bad || b->pos + bytes > b->len) {
		b->bad = true;
		return;
	}
	for (i = 0; i < bytes; i++)
		b->p[b->pos++] = (u8)(v >> (8 * i));
}

static u64 cs_get(struct sim_cs_buf *b, u32 bytes)
{
	u64 v = 0;
	u32 i;

	if (b->pos + bytes > b->len) {
		b->bad = true;
		return 0;
	}
	for (i = 0; i < bytes; i++)
		v |= (u64)b->p[b->pos++] << (8 * i);
	return v;
}

/*
 * One walk for both directions, so the layout is written once: save puts
 * each field, load gets it into the same place of a scratch copy.
 */
static void cs_u32(struct sim_cs_buf *b, bool save, u32 *v)
{
	if (save)
		cs_put(b, *v, 4);
	else
		*v = (u32)cs_get(b, 4);
}

static void cs_u64(struct sim_cs_buf *b, bool save, u64 *v)
{
	if (save)
		cs_put(b, *v, 8);
	else
		*v = cs_get(b, 8);
}

static void cs_bool(struct sim_cs_buf *b, bool save, bool *v, bool *bad)
{
	u32 x = *v;

	cs_u32(b, save, &x);
	if (!save) {
		*bad |= x > 1;
		*v = x == 1;
	}
}

static void cs_ce(struct sim_cs_buf *b, bool save, struct sim_ce *ce)
{
	cs_u64(b, save, &ce->offset_in);
	cs_u64(b, save, &ce->offset_out);
	cs_u32(b, save, &ce->pitch_in);
	cs_u32(b, save, &ce->pitch_out);
	cs_u32(b, save, &ce->line_length);
	cs_u32(b, save, &ce->line_count);
	cs_u64(b, save, &ce->sem_va);
	cs_u32(b, save, &ce->sem_payload);
}

static void cs_cp(struct sim_cs_buf *b, bool save, struct sim_cp *cp)
{
	u32 i;

	cs_u32(b, save, &cp->kernel);
	for (i = 0; i < VGMEM_CP_NARGS; i++)
		cs_u32(b, save, &cp->args[i]);
}

/* A class's registers: the union member its class uses, or none. */
static void cs_regs(struct sim_cs_buf *b, bool save, u32 cls,
		    struct sim_ce *ce, struct sim_cp *cp)
{
	if (cls == VGMEM_CLASS_COPY)
		cs_ce(b, save, ce);
	else if (cls == VGMEM_CLASS_COMPUTE)
		cs_cp(b, save, cp);
}

static bool cs_class_ok(u32 cls)
{
	return !cls || cls == VGMEM_CLASS_COPY || cls == VGMEM_CLASS_COMPUTE;
}

/*
 * The fields of ch, in order; *bad collects what load finds impossible.
 * The job's class decides its registers: a CP job has compute's, a CE job
 * the copy engine's.
 */
static void cs_walk(struct sim_cs_buf *b, bool save, struct vg_bchan *ch,
		    bool *bad)
{
	struct sim_job *j = &ch->job;
	u32 i, job_cls;

	cs_u32(b, save, &ch->gp_get);
	cs_u32(b, save, &ch->error);
	cs_bool(b, save, &ch->parked, bad);
	cs_bool(b, save, &ch->in_entry, bad);
	cs_u32(b, save, &ch->entries_done);
	cs_u64(b, save, &ch->pb.gpa);
	cs_u32(b, save, &ch->pb.ndw);
	cs_u32(b, save, &ch->pb.pos);
	cs_u32(b, save, &ch->pb.type);
	cs_u32(b, save, &ch->pb.subc);
	cs_u32(b, save, &ch->pb.mthd);
	cs_u32(b, save, &ch->pb.left);
	cs_u64(b, save, &ch->acq.va);
	cs_u32(b, save, &ch->acq.payload);
	cs_u32(b, save, &ch->acq.op);
	cs_u64(b, save, &ch->sem_va);
	cs_u32(b, save, &ch->sem_payload);
	cs_u32(b, save, &j->kind);
	cs_u32(b, save, &j->mthd);
	cs_u64(b, save, &j->off);
	cs_u64(b, save, &j->acc);
	cs_u64(b, save, &j->state);
	cs_u32(b, save, &j->line);
	cs_u32(b, save, &j->flags);
	cs_bool(b, save, &j->result, bad);
	cs_u64(b, save, &j->sem_va);
	cs_u32(b, save, &j->sem_payload);
	if (!save && j->kind > SIM_JOB_SEM)
		*bad = true;
	job_cls = j->kind == SIM_JOB_CP ? VGMEM_CLASS_COMPUTE :
		  j->kind == SIM_JOB_CE ? VGMEM_CLASS_COPY : 0;
	cs_regs(b, save, job_cls, &j->ce, &j->cp);
	for (i = 0; i < SIM_NR_SUBC; i++) {
		struct sim_obj *o = &ch->obj[i];

		cs_u32(b, save, &o->cls);
		if (!save && !cs_class_ok(o->cls)) {
			*bad = true;
			return;		/* its registers' layout is unknown */
		}
		cs_regs(b, save, o->cls, &o->ce, &o->cp);
	}
}

static bool sim_chan_quiet(struct vg_sim *sim, struct vg_bchan *ch)
{
	bool stopped;

	mutex_lock(&sim->chan_lock);
	stopped = ch->stopped;
	mutex_unlock(&sim->chan_lock);
	return stopped && READ_ONCE(sim->running) != ch;
}

int sim_chan_save(struct vg_sim *sim, struct vg_bchan *ch, void *buf, u32 len)
{
	struct sim_cs_buf b = { buf, 16, len, false };
	bool bad = false;

	if (!sim_chan_quiet(sim, ch))
		return -EBUSY;
	if (len < 16)
		return -ENOSPC;
	cs_walk(&b, true, ch, &bad);
	if (b.bad)
		return -ENOSPC;
	b.len = b.pos;
	b.pos = 0;
	cs_put(&b, SIM_CS_MAGIC, 4);
	cs_put(&b, SIM_CS_VERSION, 4);
	cs_put(&b, b.len, 4);
	cs_put(&b, 0, 4);
	return (int)b.len;
}

int sim_chan_load(struct vg_sim *sim, struct vg_bchan *ch, const void *buf,
		  u32 len)
{
	struct sim_cs_buf b = { (u8 *)buf, 0, len, false };
	struct vg_bchan *t;
	bool bad = false;
	u32 magic, version, total;

	if (!sim_chan_quiet(sim, ch))
		return -EBUSY;
	magic = (u32)cs_get(&b, 4);
	version = (u32)cs_get(&b, 4);
	total = (u32)cs_get(&b, 4);
	(void)cs_get(&b, 4);
	if (b.bad || magic != SIM_CS_MAGIC || version != SIM_CS_VERSION ||
	    total != len)
		return -EINVAL;
	/* Into a scratch copy: ch changes only if all of it is good. */
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	/*
	 * ch is stopped, so the engine writes nothing of it but its place
	 * in sim->chans (each turn moves it, under chan_lock): copy under
	 * that lock. Only the fields written back below are used.
	 */
	mutex_lock(&sim->chan_lock);
	*t = *ch;
	mutex_unlock(&sim->chan_lock);
	memset(&t->pb, 0, offsetof(struct sim_pb, buf_start));
	memset(&t->job, 0, sizeof(t->job));
	memset(t->obj, 0, sizeof(t->obj));
	cs_walk(&b, false, t, &bad);
	bad |= b.bad || b.pos != len;
	bad |= t->gp_get >= ch->desc.gpfifo_entries;
	bad |= t->error > VGMEM_CHAN_ERR_KILLED;
	bad |= t->pb.ndw > VGMEM_GP_ENTRY_NDW(~0ull) || t->pb.pos > t->pb.ndw ||
	       t->pb.left > t->pb.ndw - t->pb.pos || t->pb.subc >= SIM_NR_SUBC;
	bad |= t->pb.left && t->pb.type != VGMEM_PKHDR_INC &&
	       t->pb.type != VGMEM_PKHDR_NONINC &&
	       t->pb.type != VGMEM_PKHDR_INC_ONCE;
	/* Work in an entry, or a job, only inside an entry. */
	bad |= !t->in_entry && (t->job.kind || t->parked);
	if (bad) {
		kfree(t);
		return -EINVAL;
	}
	ch->gp_get = t->gp_get;
	ch->error = t->error;
	ch->parked = t->parked;
	ch->in_entry = t->in_entry;
	ch->entries_done = t->entries_done;
	ch->pb.gpa = t->pb.gpa;
	ch->pb.ndw = t->pb.ndw;
	ch->pb.pos = t->pb.pos;
	ch->pb.type = t->pb.type;
	ch->pb.subc = t->pb.subc;
	ch->pb.mthd = t->pb.mthd;
	ch->pb.left = t->pb.left;
	ch->pb.buf_start = 0;
	ch->pb.buf_n = 0;		/* refetched */
	ch->acq = t->acq;
	ch->sem_va = t->sem_va;
	ch->sem_payload = t->sem_payload;
	ch->job = t->job;
	memcpy(ch->obj, t->obj, sizeof(ch->obj));
	memset(ch->tlb, 0, sizeof(ch->tlb));
	ch->pf_state = SIM_PF_NONE;	/* the faulting step replays */
	ch->fault_pending = false;
	kfree(t);
	return 0;
}
