// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The compute class: instead of QMDs, built-in kernels (enum vgmem_kernel)
 * whose exact semantics sim.h documents. A launch touches memory page span
 * by page span (element by element for STRIDED and GATHER) through the
 * channel's TLB, so the cost model and the access counters see every byte.
 * Each span is one step under the address space lock: between two steps
 * sim_exec_relax lets map/unmap/tlb_flush in, and the next step translates
 * again (a page unmapped meanwhile faults, it is never touched).
 *
 * A launch runs as ch->job: each kernel starts from job->off (and its
 * running hash, sum or generator state), saves them after every step and,
 * once the turn's budget is spent, returns SIM_YIELD; the next turn goes on
 * from there, so a split launch computes exactly what a whole one would.
 * A replayable fault (SIM_FAULT) stops a kernel the same way, before the
 * faulting step wrote anything: every step translates all its pages
 * first. The arguments are checked again on every turn (they are the
 * job's copy, so the outcome is the same); the launch counts once.
 */
#include "sim_internal.h"

static u64 sim_arg64(const struct sim_cp *cp, u32 i)
{
	return cp->args[i] | ((u64)cp->args[i + 1] << 32);
}

static int sim_cp_arg_fault(struct sim_exec *x, u64 addr)
{
	sim_chan_fault(x->ch, VGMEM_CHAN_ERR_ARG, x->mthd, addr);
	return VGMEM_CHAN_ERR_ARG;
}

/* A VA range of a kernel: non-empty, no overflow, within 40 bits. */
static bool sim_range_ok(u64 va, u64 bytes)
{
	u64 end;

	return bytes && !check_add_overflow(va, bytes, &end) &&
	       end <= SIM_VA_LIMIT;
}

static int sim_check_range(struct sim_exec *x, u64 va, u64 bytes, u32 align)
{
	if (!sim_range_ok(va, bytes) || !IS_ALIGNED(va, (u64)align))
		return sim_cp_arg_fault(x, va);
	return 0;
}

/* ---- byte-pattern fills (MEMSET, FILL_PATTERN) ---------------------------- */

/* MEMSET: byte k of the range is byte (k & 3) of value. */
static void sim_memset_span(u8 *p, u32 n, u64 off, u32 value)
{
	u32 i = 0, r = (u32)(off & 3);
	u64 w;

	if (value == (value & 0xff) * 0x01010101u) {
		memset(p, (int)(value & 0xff), n);
		return;
	}
	/* The word as it lies at p: value rotated by off's byte phase. */
	if (r)
		value = (value >> (8 * r)) | (value << (32 - 8 * r));
	w = value | ((u64)value << 32);
	for (; i + 8 <= n; i += 8)
		memcpy(p + i, &w, 8);
	for (; i < n; i++)
		p[i] = (u8)(w >> (8 * (i & 3)));
}

static void sim_fill_span(u8 *p, u32 n, u64 off, bool pattern, u32 seed,
			  u32 value)
{
	u32 w, i = 0;

	if (!pattern) {
		sim_memset_span(p, n, off, value);
		return;
	}
	while (i < n) {
		u64 k = off + i;

		w = pattern ? vgmem_pattern_word(seed, k >> 2) : value;
		if (!(k & 3) && n - i >= 4) {
			memcpy(p + i, &w, 4);
			i += 4;
		} else {
			p[i] = (u8)(w >> (8 * (k & 3)));
			i++;
		}
	}
}

static int sim_k_fill(struct sim_exec *x, struct sim_job *job, u64 dst,
		      u64 bytes, bool pattern, u32 arg)
{
	u64 off = job->off;
	u8 *p;
	u32 n;
	int r;

	r = sim_check_range(x, dst, bytes, 1);
	if (r)
		return r;
	while (off < bytes) {
		p = sim_va_span(x, dst + off, bytes - off, true, &n);
		if (!p)
			return sim_va_fault(x, dst + off);
		sim_fill_span(p, n, off, pattern, arg, arg);
		off += n;
		job->off = off;
		if (sim_exec_spend(x, n) && off < bytes)
			return SIM_YIELD;
		sim_exec_relax(x, n);
	}
	return 0;
}

/* ---- VECADD -------------------------------------------------------------- */

static u32 sim_words_left(u64 va)
{
	return (u32)((SIM_PAGE_SIZE - (va & (SIM_PAGE_SIZE - 1))) / 4);
}

static int sim_k_vecadd(struct sim_exec *x, struct sim_job *job, u64 a,
			u64 b, u64 c, u32 n)
{
	u64 bytes = (u64)n * 4, i = job->off;
	u32 k, j, span, va_, vb, vc;
	u8 *pa, *pb, *pc;
	int r;

	r = sim_check_range(x, a, bytes, 4);
	if (!r)
		r = sim_check_range(x, b, bytes, 4);
	if (!r)
		r = sim_check_range(x, c, bytes, 4);
	if (r)
		return r;
	while (i < n) {
		k = (u32)min_t(u64, n - i, sim_words_left(a + 4 * i));
		k = min(k, sim_words_left(b + 4 * i));
		k = min(k, sim_words_left(c + 4 * i));
		pa = sim_va_span(x, a + 4 * i, 4ull * k, false, &span);
		if (!pa)
			return sim_va_fault(x, a + 4 * i);
		pb = sim_va_span(x, b + 4 * i, 4ull * k, false, &span);
		if (!pb)
			return sim_va_fault(x, b + 4 * i);
		pc = sim_va_span(x, c + 4 * i, 4ull * k, true, &span);
		if (!pc)
			return sim_va_fault(x, c + 4 * i);
		for (j = 0; j < k; j++) {
			memcpy(&va_, pa + 4 * j, 4);
			memcpy(&vb, pb + 4 * j, 4);
			vc = va_ + vb;
			memcpy(pc + 4 * j, &vc, 4);
		}
		i += k;
		job->off = i;
		if (sim_exec_spend(x, 12 * k) && i < n)
			return SIM_YIELD;
		sim_exec_relax(x, 12 * k);
	}
	return 0;
}

/* ---- CHECKSUM, STRIDED ----------------------------------------------------- */

static int sim_k_checksum(struct sim_exec *x, struct sim_job *job, u64 src,
			  u64 bytes, u64 res)
{
	u64 h = job->acc, off = job->off;
	u32 n, i;
	u8 *p;
	int r;

	r = sim_check_range(x, src, bytes, 1);
	if (!r)
		r = sim_check_range(x, res, 8, 1);
	if (r)
		return r;
	while (off < bytes) {
		p = sim_va_span(x, src + off, bytes - off, false, &n);
		if (!p)
			return sim_va_fault(x, src + off);
		for (i = 0; i < n; i++) {
			h ^= p[i];
			h *= VGMEM_FNV1A_PRIME;
		}
		off += n;
		job->off = off;
		job->acc = h;
		if (sim_exec_spend(x, n) && off < bytes)
			return SIM_YIELD;
		sim_exec_relax(x, n);
	}
	/* A fault on the result replays just the write (off == bytes). */
	return sim_va_write(x, res, &h, sizeof(h));
}

static int sim_k_strided(struct sim_exec *x, struct sim_job *job, u64 src,
			 u64 bytes, u32 stride, u64 res)
{
	u64 sum = job->acc, off;
	u32 v;
	int r;

	if (!stride || !IS_ALIGNED(stride, 4) || bytes < 4)
		return sim_cp_arg_fault(x, src);
	r = sim_check_range(x, src, bytes, 4);
	if (!r)
		r = sim_check_range(x, res, 8, 1);
	if (r)
		return r;
	/* job->off is the next k * stride, always <= bytes - 4. */
	for (off = job->off; !job->result; off += stride) {
		r = sim_va_read(x, src + off, &v, sizeof(v));
		if (r)
			return r;
		sum += v;
		job->acc = sum;
		/* off <= bytes - 4 here, so this cannot wrap. */
		if (bytes - 4 - off < stride) {
			/*
			 * A fault on the result replays just the write: this
			 * element's read is done, so its cost is committed
			 * before the write's step.
			 */
			job->result = true;
			sim_exec_relax(x, sizeof(v));
			break;
		}
		job->off = off + stride;
		if (sim_exec_spend(x, SIM_ELEM_COST))
			return SIM_YIELD;
		sim_exec_relax(x, sizeof(v));
	}
	return sim_va_write(x, res, &sum, sizeof(sum));
}

/* ---- GATHER ---------------------------------------------------------------- */

static int sim_k_gather(struct sim_exec *x, struct sim_job *job, u64 src,
			u64 bytes, u64 dst, u32 n)
{
	u64 nwords = bytes / 4, state = job->state, idx, i;
	u32 v;
	int r;

	if (!nwords || nwords > (1ull << 32))
		return sim_cp_arg_fault(x, src);
	r = sim_check_range(x, src, bytes, 4);
	if (!r)
		r = sim_check_range(x, dst, (u64)n * 4, 4);
	if (r)
		return r;
	for (i = job->off; i < n; i++) {
		idx = vg_sim_gather_index(&state, nwords);
		r = sim_va_read(x, src + 4 * idx, &v, sizeof(v));
		if (!r)
			r = sim_va_write(x, dst + 4 * i, &v, sizeof(v));
		/* A fault replays element i from the state before it. */
		if (r)
			return r;
		job->off = i + 1;
		job->state = state;
		if (sim_exec_spend(x, SIM_ELEM_COST) && i + 1 < n)
			return SIM_YIELD;
		sim_exec_relax(x, 2 * sizeof(v));
	}
	return 0;
}

/* ---- the class ----------------------------------------------------------- */

int sim_cp_run(struct sim_exec *x, struct sim_job *job)
{
	const struct sim_cp *cp = &job->cp;
	const u32 *a = cp->args;
	int r;

	sim_exec_lock(x);
	switch (cp->kernel) {
	case VGMEM_K_MEMSET:
		r = sim_k_fill(x, job, sim_arg64(cp, 0), sim_arg64(cp, 2),
			       false, a[4]);
		break;
	case VGMEM_K_VECADD:
		r = sim_k_vecadd(x, job, sim_arg64(cp, 0), sim_arg64(cp, 2),
				 sim_arg64(cp, 4), a[6]);
		break;
	case VGMEM_K_CHECKSUM:
		r = sim_k_checksum(x, job, sim_arg64(cp, 0), sim_arg64(cp, 2),
				   sim_arg64(cp, 4));
		break;
	case VGMEM_K_STRIDED:
		r = sim_k_strided(x, job, sim_arg64(cp, 0), sim_arg64(cp, 2),
				  a[4], sim_arg64(cp, 5));
		break;
	case VGMEM_K_GATHER:
		r = sim_k_gather(x, job, sim_arg64(cp, 0), sim_arg64(cp, 2),
				 sim_arg64(cp, 4), a[6]);
		break;
	default:	/* VGMEM_K_FILL_PATTERN */
		r = sim_k_fill(x, job, sim_arg64(cp, 0), sim_arg64(cp, 2),
			       true, a[4]);
		break;
	}
	sim_exec_unlock(x);
	return r;
}

/* Start a launch as the channel's job and run its first part. */
static int sim_cp_launch(struct sim_exec *x, const struct sim_cp *cp)
{
	struct sim_job *job = &x->ch->job;

	if (cp->kernel < VGMEM_K_MEMSET || cp->kernel >= VGMEM_K_MAX)
		return sim_cp_arg_fault(x, 0);

	memset(job, 0, sizeof(*job));
	job->kind = SIM_JOB_CP;
	job->mthd = x->mthd;
	job->cp = *cp;
	if (cp->kernel == VGMEM_K_CHECKSUM)
		job->acc = VGMEM_FNV1A_OFFSET;
	/* GATHER's generator starts at the zero-extended seed. */
	job->state = cp->args[7];
	sim_exec_lock(x);
	x->as->cost.launches++;
	sim_exec_unlock(x);
	return sim_job_run(x);
}

int sim_cp_method(struct sim_exec *x, struct sim_cp *cp, u32 mthd, u32 data)
{
	if (mthd == VGMEM_CP_KERNEL) {
		cp->kernel = data;
		return 0;
	}
	if (mthd >= VGMEM_CP_ARG(0) && mthd < VGMEM_CP_ARG(VGMEM_CP_NARGS)) {
		cp->args[(mthd - VGMEM_CP_ARG(0)) / 4] = data;
		return 0;
	}
	if (mthd == VGMEM_CP_LAUNCH)
		return sim_cp_launch(x, cp);
	return sim_method_fault(x, VGMEM_CHAN_ERR_METHOD);
}
