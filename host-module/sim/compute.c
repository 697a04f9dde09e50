// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The compute class: instead of QMDs, built-in kernels (enum vgmem_kernel)
 * whose exact semantics sim.h documents. A launch runs to completion with
 * the address space lock held, touching memory page span by page span
 * through the channel's TLB, so the cost model and the access counters see
 * every byte.
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

static void sim_fill_span(u8 *p, u32 n, u64 off, bool pattern, u32 seed,
			  u32 value)
{
	u32 w, i = 0;

	while (i < n) {
		u64 k = off + i;

		w = pattern ? vg_sim_pattern_word(seed, k >> 2) : value;
		if (!(k & 3) && n - i >= 4) {
			memcpy(p + i, &w, 4);
			i += 4;
		} else {
			p[i] = (u8)(w >> (8 * (k & 3)));
			i++;
		}
	}
}

static int sim_k_fill(struct sim_exec *x, u64 dst, u64 bytes, bool pattern,
		      u32 arg)
{
	u64 off = 0;
	u8 *p;
	u32 n;
	int r;

	r = sim_check_range(x, dst, bytes, 1);
	if (r)
		return r;
	while (off < bytes) {
		p = sim_va_span(x, dst + off, bytes - off, &n);
		if (!p)
			return sim_va_fault(x, dst + off);
		sim_fill_span(p, n, off, pattern, arg, arg);
		off += n;
		cond_resched();
	}
	return 0;
}

/* ---- VECADD -------------------------------------------------------------- */

static u32 sim_words_left(u64 va)
{
	return (u32)((SIM_PAGE_SIZE - (va & (SIM_PAGE_SIZE - 1))) / 4);
}

static int sim_k_vecadd(struct sim_exec *x, u64 a, u64 b, u64 c, u32 n)
{
	u64 bytes = (u64)n * 4, i = 0;
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
		pa = sim_va_span(x, a + 4 * i, 4ull * k, &span);
		if (!pa)
			return sim_va_fault(x, a + 4 * i);
		pb = sim_va_span(x, b + 4 * i, 4ull * k, &span);
		if (!pb)
			return sim_va_fault(x, b + 4 * i);
		pc = sim_va_span(x, c + 4 * i, 4ull * k, &span);
		if (!pc)
			return sim_va_fault(x, c + 4 * i);
		for (j = 0; j < k; j++) {
			memcpy(&va_, pa + 4 * j, 4);
			memcpy(&vb, pb + 4 * j, 4);
			vc = va_ + vb;
			memcpy(pc + 4 * j, &vc, 4);
		}
		i += k;
		cond_resched();
	}
	return 0;
}

/* ---- CHECKSUM, STRIDED ----------------------------------------------------- */

static int sim_k_checksum(struct sim_exec *x, u64 src, u64 bytes, u64 res)
{
	u64 h = VG_SIM_FNV_BASIS, off = 0;
	u32 n, i;
	u8 *p;
	int r;

	r = sim_check_range(x, src, bytes, 1);
	if (!r)
		r = sim_check_range(x, res, 8, 1);
	if (r)
		return r;
	while (off < bytes) {
		p = sim_va_span(x, src + off, bytes - off, &n);
		if (!p)
			return sim_va_fault(x, src + off);
		for (i = 0; i < n; i++) {
			h ^= p[i];
			h *= VG_SIM_FNV_PRIME;
		}
		off += n;
		cond_resched();
	}
	return sim_va_write(x, res, &h, sizeof(h));
}

static int sim_k_strided(struct sim_exec *x, u64 src, u64 bytes, u32 stride,
			 u64 res)
{
	u64 sum = 0, off;
	u32 v;
	int r;

	if (!stride || !IS_ALIGNED(stride, 4) || bytes < 4)
		return sim_cp_arg_fault(x, src);
	r = sim_check_range(x, src, bytes, 4);
	if (!r)
		r = sim_check_range(x, res, 8, 1);
	if (r)
		return r;
	for (off = 0;; off += stride) {
		r = sim_va_read(x, src + off, &v, sizeof(v));
		if (r)
			return r;
		sum += v;
		/* off <= bytes - 4 here, so this cannot wrap. */
		if (bytes - 4 - off < stride)
			break;
	}
	return sim_va_write(x, res, &sum, sizeof(sum));
}

/* ---- GATHER ---------------------------------------------------------------- */

static int sim_k_gather(struct sim_exec *x, u64 src, u64 bytes, u64 dst,
			u32 n, u32 seed)
{
	u64 nwords = bytes / 4, state = seed, idx, i;
	u32 v;
	int r;

	if (!nwords || nwords > (1ull << 32))
		return sim_cp_arg_fault(x, src);
	r = sim_check_range(x, src, bytes, 4);
	if (!r)
		r = sim_check_range(x, dst, (u64)n * 4, 4);
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		idx = vg_sim_gather_index(&state, nwords);
		r = sim_va_read(x, src + 4 * idx, &v, sizeof(v));
		if (!r)
			r = sim_va_write(x, dst + 4 * i, &v, sizeof(v));
		if (r)
			return r;
		if (!(i & 1023))
			cond_resched();
	}
	return 0;
}

/* ---- the class ----------------------------------------------------------- */

static int sim_cp_launch(struct sim_exec *x, const struct sim_cp *cp)
{
	const u32 *a = cp->args;
	int r;

	if (cp->kernel < VGMEM_K_MEMSET || cp->kernel >= VGMEM_K_MAX)
		return sim_cp_arg_fault(x, 0);

	mutex_lock(&x->as->lock);
	x->as->cost.launches++;
	switch (cp->kernel) {
	case VGMEM_K_MEMSET:
		r = sim_k_fill(x, sim_arg64(cp, 0), sim_arg64(cp, 2), false,
			       a[4]);
		break;
	case VGMEM_K_VECADD:
		r = sim_k_vecadd(x, sim_arg64(cp, 0), sim_arg64(cp, 2),
				 sim_arg64(cp, 4), a[6]);
		break;
	case VGMEM_K_CHECKSUM:
		r = sim_k_checksum(x, sim_arg64(cp, 0), sim_arg64(cp, 2),
				   sim_arg64(cp, 4));
		break;
	case VGMEM_K_STRIDED:
		r = sim_k_strided(x, sim_arg64(cp, 0), sim_arg64(cp, 2), a[4],
				  sim_arg64(cp, 5));
		break;
	case VGMEM_K_GATHER:
		r = sim_k_gather(x, sim_arg64(cp, 0), sim_arg64(cp, 2),
				 sim_arg64(cp, 4), a[6], a[7]);
		break;
	default:	/* VGMEM_K_FILL_PATTERN */
		r = sim_k_fill(x, sim_arg64(cp, 0), sim_arg64(cp, 2), true,
			       a[4]);
		break;
	}
	mutex_unlock(&x->as->lock);
	return r;
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
