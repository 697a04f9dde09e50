// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * VRAM entitlements: guarantees (min, low), then weighted max-min fair
 * water-filling of demand by priority class, then spare VRAM as headroom.
 * Everything is computed in whole chunks with exact integer arithmetic;
 * see policy.h for the model and docs/policy.md for the reasoning.
 *
 * Water-filling with floors: in one class, VM i gets
 *	x_i = clamp(w_i * L, lo_i, hi_i)
 * for the one level L at which the class's capacity R is used up:
 * F(L) = sum x_i = R. F is continuous, nondecreasing and piecewise linear
 * with breakpoints lo_i / w_i and hi_i / w_i. Instead of sorting the 2n
 * breakpoints (the bench's baseline shows why not), L is bracketed by
 * random breakpoints, quickselect style: evaluating F at a breakpoint
 * decides on which side L lies, and every VM whose clamp is then known
 * (fixed at lo, fixed at hi, or strictly proportional) leaves the loop.
 * Expected O(n) per class. Levels are fractions num / den compared by
 * cross-multiplication in 128 bits, so no rounding enters before the end.
 *
 * The proportional VMs then share R minus the fixed part exactly in
 * proportion to their weights: each takes the floor of its share, and the
 * few chunks the floors leave go to the largest remainders, ties to the
 * lower VM index (Hamilton's method). Each VM is so within one chunk of
 * its exact share, and the result does not depend on the random pivots.
 */
#include <errno.h>

#include "policy.h"
#include "policy_internal.h"

/* Per-VM working state, in the caller's scratch. */
struct wk {
	uint64_t lo;		/* floor of the current water-fill (chunks) */
	uint64_t hi;		/* top of the current water-fill */
	uint64_t x;		/* allocation so far */
	uint64_t g;		/* guaranteed by steps 1-2 */
	uint64_t dem;		/* demand in chunks, capped at max */
	uint64_t maxc;		/* max in chunks (rounded down) */
	uint64_t key;		/* apportioning weight */
	vgp_u128 rem;		/* apportioning remainder */
	double bl, bh;		/* lo / w, hi / w: fast, inexact comparisons */
	uint32_t w;
	uint32_t vm;		/* index in the caller's array: tie-break */
};

_Static_assert(_Alignof(struct wk) <= VGP_SCRATCH_ALIGN, "scratch alignment");

struct ctx {
	struct wk *wk;
	uint64_t rng;		/* xorshift64 state: pivots only */
};

size_t vgp_scratch_size(size_t n)
{
	if (n > VGP_MAX_VMS)
		return 0;
	return n * (sizeof(struct wk) + sizeof(uint32_t)) + sizeof(struct wk);
}

static uint64_t rnd(struct ctx *cx, uint64_t bound)
{
	uint64_t s = cx->rng;

	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	cx->rng = s;
	return s % bound;
}

static inline void swap_idx(uint32_t *idx, size_t a, size_t b)
{
	uint32_t t = idx[a];

	idx[a] = idx[b];
	idx[b] = t;
}

/* a before b in the hand-out order of leftover chunks. */
static inline int better(const struct wk *a, const struct wk *b)
{
	if (a->rem != b->rem)
		return a->rem > b->rem;
	return a->vm < b->vm;
}

/* Moves the k best of idx[0..m) (by better()) to the front. */
static void select_top(struct ctx *cx, uint32_t *idx, size_t m, size_t k)
{
	struct wk *wk = cx->wk;
	size_t lo = 0, hi = m;

	while (hi - lo > 1 && k > lo && k < hi) {
		size_t p = lo + rnd(cx, hi - lo), store = lo, i;
		const struct wk *pv;

		swap_idx(idx, p, hi - 1);
		pv = &wk[idx[hi - 1]];
		for (i = lo; i < hi - 1; i++)
			if (better(&wk[idx[i]], pv))
				swap_idx(idx, i, store++);
		swap_idx(idx, store, hi - 1);
		/* [lo, store) beat the pivot, which now sits at store. */
		if (k <= store)
			hi = store;
		else
			lo = store + 1;
	}
}

/*
 * Adds to the x of idx[0..m) an exact split of amount in proportion to
 * their keys (sum: den > 0): floors, then one chunk each to the largest
 * remainders. Gives exactly amount when the keys are what den sums.
 */
static void apportion(struct ctx *cx, uint32_t *idx, size_t m,
		      uint64_t amount, vgp_u128 den)
{
	struct wk *wk = cx->wk;
	uint64_t maxkey = 0, given = 0;
	size_t i, left;
	int small;

	for (i = 0; i < m; i++)
		if (wk[idx[i]].key > maxkey)
			maxkey = wk[idx[i]].key;
	/* 64-bit division when every product and the divisor fit. */
	small = den <= UINT64_MAX &&
		(!maxkey || amount <= UINT64_MAX / maxkey);
	for (i = 0; i < m; i++) {
		struct wk *v = &wk[idx[i]];
		uint64_t q;

		if (small) {
			uint64_t num = v->key * amount, d = (uint64_t)den;

			q = num / d;
			v->rem = num % d;
		} else {
			vgp_u128 num = (vgp_u128)v->key * amount;

			q = (uint64_t)(num / den);
			v->rem = num % den;
		}
		v->x += q;
		given += q;
	}
	left = (size_t)(amount - given);	/* < m: each floor lost < 1 */
	if (!left)
		return;
	select_top(cx, idx, m, left);
	for (i = 0; i < left; i++)
		wk[idx[i]].x++;
}

/* A level num / den; den == 0 means +infinity. */
struct level {
	uint64_t num;
	uint64_t den;
};

/* a / wa <= l, for a breakpoint a / wa (wa > 0) and a finite l. */
static inline int bp_le(uint64_t a, uint32_t wa, struct level l)
{
	return (vgp_u128)a * l.den <= (vgp_u128)l.num * wa;
}

/* a / wa >= l. */
static inline int bp_ge(uint64_t a, uint32_t wa, struct level l)
{
	if (!l.den)
		return 0;
	return (vgp_u128)a * l.den >= (vgp_u128)l.num * wa;
}

/*
 * Doubles decide a comparison when the two values are far apart: a/w and
 * num/den as doubles are each within 2^-51 of the exact ratio, so a gap of
 * more than 1e-12 relative is real. Closer calls are made exactly.
 */
#define REL_EPS	1e-12

static inline int far_below(double a, double b)
{
	return a < b - b * REL_EPS;
}

static inline int far_above(double a, double b)
{
	return a > b + b * REL_EPS;
}

/* bp_le() and bp_ge() for a VM's lo or hi, with the doubles first. */
static inline int fle(double b, uint64_t a, uint32_t w, struct level l, double ld)
{
	if (far_below(b, ld))
		return 1;
	if (far_above(b, ld))
		return 0;
	return bp_le(a, w, l);
}

static inline int fge(double b, uint64_t a, uint32_t w, struct level l, double ld)
{
	if (!l.den)
		return 0;
	if (far_above(b, ld))
		return 1;
	if (far_below(b, ld))
		return 0;
	return bp_ge(a, w, l);
}

struct fill {
	struct level llo;	/* F(llo) <= R, always finite */
	struct level lhi;	/* F(lhi) > R */
	double flo, fhi;	/* F(llo), F(lhi) (approximate): for pivots only */
	vgp_u128 fixed;		/* sum of x of the VMs whose clamp is known */
	uint64_t wact;		/* sum of weights of the proportional VMs */
	uint64_t wund;		/* sum of weights of the undecided VMs */
	size_t na;		/* idx[0..na): proportional */
	size_t nu;		/* idx[na..nu): undecided; idx[nu..m): fixed */
	/* Undecided breakpoints nearest below and above the target level. */
	double target, below, above;
	struct level pb, pa;
};

static inline double lvl(struct level l)
{
	return (double)l.num / (double)l.den;
}

/* A breakpoint strictly inside the bracket: keep it if nearest the target. */
static inline void consider(struct fill *f, uint64_t a, uint32_t w, double b)
{
	if (b <= f->target) {
		if (b > f->below) {
			f->below = b;
			f->pb = (struct level){ a, w };
		}
	} else if (b < f->above) {
		f->above = b;
		f->pa = (struct level){ a, w };
	}
}

/*
 * Sorts idx[na..nu) into proportional (moved to the front), fixed (to the
 * back) and still undecided, for the bracket [llo, lhi]; on the way, finds
 * the undecided breakpoints nearest to f->target on either side.
 */
static void classify(struct ctx *cx, uint32_t *idx, struct fill *f)
{
	struct wk *wk = cx->wk;
	double llo = lvl(f->llo);
	double lhi = f->lhi.den ? lvl(f->lhi) : __builtin_inf();
	size_t i = f->na;

	f->below = -1.0;
	f->above = __builtin_inf();
	f->pb.den = 0;
	f->pa.den = 0;
	f->wund = 0;
	while (i < f->nu) {
		struct wk *v = &wk[idx[i]];
		int le_lo, ge_hi;

		if (fle(v->bh, v->hi, v->w, f->llo, llo)) {
			/* L >= llo >= hi / w: capped. */
			v->x = v->hi;
			f->fixed += v->hi;
			swap_idx(idx, i, --f->nu);
			continue;
		}
		if (fge(v->bl, v->lo, v->w, f->lhi, lhi)) {
			/* L <= lhi <= lo / w: at its floor. */
			v->x = v->lo;
			f->fixed += v->lo;
			swap_idx(idx, i, --f->nu);
			continue;
		}
		le_lo = fle(v->bl, v->lo, v->w, f->llo, llo);
		ge_hi = fge(v->bh, v->hi, v->w, f->lhi, lhi);
		if (le_lo && ge_hi) {
			/* lo / w <= llo <= L <= lhi <= hi / w */
			f->wact += v->w;
			swap_idx(idx, i, f->na++);
		} else {
			/* At least one breakpoint strictly inside. */
			if (!le_lo)
				consider(f, v->lo, v->w, v->bl);
			if (!ge_hi)
				consider(f, v->hi, v->w, v->bh);
			f->wund += v->w;
		}
		i++;
	}
}

/*
 * Where L probably is: the secant through the bracket's ends, or with no
 * upper end yet, the level F would reach if every undecided VM grew.
 */
static double estimate(const struct fill *f, uint64_t r)
{
	double lo = lvl(f->llo);

	if (!f->lhi.den)
		return lo + ((double)r - f->flo) / (double)(f->wact + f->wund + 1);
	if (!(f->fhi > f->flo))
		return lo;
	return lo + ((double)r - f->flo) * (lvl(f->lhi) - lo) / (f->fhi - f->flo);
}

/*
 * Water-fills capacity r over the VMs idx[0..m) between their lo and hi
 * (sum of lo <= r). Sets every x; returns the chunks used (<= r).
 *
 * Pivots: the breakpoints just below and above the estimated level (found
 * while classifying), both evaluated in one pass, usually leave no
 * breakpoint inside the bracket after two or three rounds. When an estimate fails to halve the
 * undecided VMs, the next pivot is random, which keeps the expected work
 * linear whatever the input.
 */
static uint64_t waterfill(struct ctx *cx, uint32_t *idx, size_t m, uint64_t r)
{
	struct wk *wk = cx->wk;
	struct fill f = { .llo = { 0, 1 }, .lhi = { 0, 0 }, .nu = m };
	vgp_u128 sum_hi = 0, sum_lo = 0;
	uint64_t wsum = 0;
	int interp = 1;
	size_t i;

	for (i = 0; i < m; i++) {
		struct wk *v = &wk[idx[i]];

		sum_hi += v->hi;
		sum_lo += v->lo;
		wsum += v->w;
	}
	if (sum_hi <= r) {
		for (i = 0; i < m; i++)
			wk[idx[i]].x = wk[idx[i]].hi;
		return (uint64_t)sum_hi;
	}
	if (sum_lo >= r) {
		/* F(0) = r: everyone at the floor (a higher class took the rest). */
		for (i = 0; i < m; i++)
			wk[idx[i]].x = wk[idx[i]].lo;
		return (uint64_t)sum_lo;
	}

	for (i = 0; i < m; i++) {
		struct wk *v = &wk[idx[i]];
		double inv = 1.0 / v->w;

		v->bl = (double)v->lo * inv;
		v->bh = (double)v->hi * inv;
	}
	f.flo = (double)sum_lo;		/* F(0) */
	f.wund = wsum;
	f.target = estimate(&f, r);
	classify(cx, idx, &f);
	while (f.nu > f.na) {
		struct level p[2];
		vgp_u128 s[2];
		size_t before = f.nu - f.na;
		int np = 0, k;

		if (interp) {
			if (f.pb.den)
				p[np++] = f.pb;
			if (f.pa.den)
				p[np++] = f.pa;
		}
		if (!np) {
			const struct wk *pv = &wk[idx[f.na + rnd(cx, f.nu - f.na)]];

			/* An undecided VM has a breakpoint strictly inside. */
			if (!bp_le(pv->lo, pv->w, f.llo))
				p[np++] = (struct level){ pv->lo, pv->w };
			else
				p[np++] = (struct level){ pv->hi, pv->w };
		}

		/*
		 * F(p) scaled by p.den, for each pivot in one pass: sums of
		 * the VMs at lo, at hi and in between, exact products only
		 * for close calls.
		 */
		for (k = 0; k < np; k++) {
			vgp_u128 at = 0, ex = 0;
			uint64_t win = 0;
			double pd = lvl(p[k]);

			for (i = f.na; i < f.nu; i++) {
				const struct wk *v = &wk[idx[i]];

				if (far_below(pd, v->bl)) {
					at += v->lo;
				} else if (far_above(pd, v->bh)) {
					at += v->hi;
				} else if (far_above(pd, v->bl) && far_below(pd, v->bh)) {
					win += v->w;
				} else {
					vgp_u128 y = (vgp_u128)v->w * p[k].num;
					vgp_u128 lo = (vgp_u128)v->lo * p[k].den;
					vgp_u128 hi = (vgp_u128)v->hi * p[k].den;

					ex += y < lo ? lo : y > hi ? hi : y;
				}
			}
			s[k] = (f.fixed + at) * p[k].den +
			       (vgp_u128)(f.wact + win) * p[k].num + ex;
		}
		for (k = 0; k < np; k++) {
			double fp = (double)s[k] / (double)p[k].den;

			if (s[k] == (vgp_u128)r * p[k].den) {
				/* L = p exactly: a closed bracket decides everyone. */
				f.llo = f.lhi = p[k];
				f.flo = f.fhi = fp;
				break;
			}
			if (s[k] <= (vgp_u128)r * p[k].den) {
				if (!bp_le(p[k].num, (uint32_t)p[k].den, f.llo)) {
					f.llo = p[k];
					f.flo = fp;
				}
			} else if (!f.lhi.den ||
				   !bp_ge(p[k].num, (uint32_t)p[k].den, f.lhi)) {
				f.lhi = p[k];
				f.fhi = fp;
			}
		}
		/* wund is of the last pass: an upper bound, fine for a guess. */
		f.target = estimate(&f, r);
		classify(cx, idx, &f);
		interp = !interp || (f.nu - f.na) * 2 <= before;
	}

	/*
	 * L = (r - fixed) / wact lies in [llo, lhi]: the proportional VMs
	 * split r - fixed by weight. fixed <= F(llo) <= r.
	 */
	if (!f.na)
		return (uint64_t)f.fixed;	/* unreachable: F would be flat */
	for (i = 0; i < f.na; i++) {
		wk[idx[i]].x = 0;
		wk[idx[i]].key = wk[idx[i]].w;
	}
	apportion(cx, idx, f.na, r - (uint64_t)f.fixed, f.wact);
	return r;
}

/*
 * Guarantee step: each VM claims key more chunks; all of them if they fit
 * in avail, else avail split in proportion. Returns the chunks given and
 * whether the claims had to be scaled.
 */
static uint64_t guarantee(struct ctx *cx, uint32_t *idx, size_t n,
			  uint64_t avail, int *scaled)
{
	struct wk *wk = cx->wk;
	vgp_u128 sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += wk[i].key;
	*scaled = sum > avail;
	if (!*scaled) {
		for (i = 0; i < n; i++)
			wk[i].x += wk[i].key;
		return (uint64_t)sum;
	}
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	apportion(cx, idx, n, avail, sum);
	return avail;
}

/* Step 3 or 4: water-fill each class, highest first, from the VMs' x up. */
static uint64_t fill_classes(struct ctx *cx, uint32_t *idx,
			     const size_t *start, uint64_t spare, int headroom)
{
	struct wk *wk = cx->wk;
	int c;

	for (c = (int)VGP_PRIO_MAX; c >= 0; c--) {
		size_t b = start[c], e = start[c + 1], i;
		uint64_t floors = 0, used;

		if (b == e)
			continue;
		for (i = b; i < e; i++) {
			struct wk *v = &wk[idx[i]];

			v->lo = v->x;
			v->hi = headroom ? v->maxc : (v->dem > v->x ? v->dem : v->x);
			floors += v->lo;	/* <= usable VRAM: no overflow */
		}
		used = waterfill(cx, idx + b, e - b, spare + floors);
		spare = spare + floors - used;
	}
	return spare;
}

int vgp_compute(const struct vgp_gpu *gpu, const struct vgp_vm *vms, size_t n,
		struct vgp_ent *out, void *scratch, size_t scratch_len,
		struct vgp_status *st)
{
	size_t count[VGP_NR_PRIO] = { 0 }, start[VGP_NR_PRIO + 1];
	struct ctx cx = { .rng = 0x9e3779b97f4a7c15ull };
	uint64_t c, vram_c, given, spare, total = 0;
	vgp_u128 demand = 0, mins = 0;
	uint32_t *idx, flags = 0;
	unsigned int sh;
	size_t i, need;
	int scaled, err;

	err = vgp_validate_all(gpu, vms, n, st);
	if (err)
		return err;
	if (n && !out)
		return vgp_fail(st, VGP_E_COUNT, -1, "%zu VMs but no output array", n);
	need = vgp_scratch_size(n);
	if (!scratch || scratch_len < need ||
	    ((uintptr_t)scratch & (VGP_SCRATCH_ALIGN - 1)))
		return vgp_fail(st, VGP_E_SCRATCH, -1,
				"scratch of %zu bytes aligned to %d needed, %zu given",
				need, VGP_SCRATCH_ALIGN, scratch ? scratch_len : 0);

	cx.wk = scratch;
	idx = (uint32_t *)(cx.wk + n);
	c = gpu->chunk;
	sh = vgp_shift(c);
	vram_c = gpu->vram >> sh;

	/* Step 1: min, reserved whether used or not. */
	for (i = 0; i < n; i++) {
		const struct vgp_vm *vm = &vms[i];
		struct wk *v = &cx.wk[i];
		uint64_t d = vgp_chunks_up(vm->demand, sh);

		v->x = 0;
		v->w = vm->weight;
		v->vm = (uint32_t)i;
		v->maxc = vm->max >> sh;
		v->dem = d < v->maxc ? d : v->maxc;
		v->key = vgp_chunks_up(vm->min, sh);
		demand += v->dem;
	}
	for (i = 0; i < n; i++)
		mins += cx.wk[i].key;
	if (mins > vram_c) {
		/*
		 * Admission keeps this from happening, unless VRAM shrank or
		 * admission was skipped. cgroup rule: each VM is protected in
		 * proportion to the part of its min it uses.
		 */
		flags |= VGP_F_MIN_OVERCOMMIT;
		for (i = 0; i < n; i++) {
			struct wk *v = &cx.wk[i];

			v->key = v->key < v->dem ? v->key : v->dem;
		}
	}
	given = guarantee(&cx, idx, n, vram_c, &scaled);

	/* Step 2: use below low, protected unless it does not fit. */
	for (i = 0; i < n; i++) {
		struct wk *v = &cx.wk[i];
		uint64_t low = vgp_chunks_up(vms[i].low, sh);
		uint64_t prot = low < v->dem ? low : v->dem;

		v->key = prot > v->x ? prot - v->x : 0;
	}
	given += guarantee(&cx, idx, n, vram_c - given, &scaled);
	if (scaled)
		flags |= VGP_F_LOW_OVERCOMMIT;
	for (i = 0; i < n; i++)
		cx.wk[i].g = cx.wk[i].x;

	/* Classes as contiguous runs of idx, in VM order within a class. */
	for (i = 0; i < n; i++)
		count[vms[i].prio]++;
	start[0] = 0;
	for (i = 0; i < VGP_NR_PRIO; i++)
		start[i + 1] = start[i] + count[i];
	for (i = 0; i < VGP_NR_PRIO; i++)
		count[i] = start[i];
	for (i = 0; i < n; i++)
		idx[count[vms[i].prio]++] = (uint32_t)i;

	/* Step 3: demand. Step 4: headroom up to max. */
	spare = fill_classes(&cx, idx, start, vram_c - given, 0);
	for (i = 0; i < n; i++)
		if (cx.wk[i].x < cx.wk[i].dem)
			flags |= VGP_F_CONTENDED;
	if (!gpu->hold_spare && spare)
		spare = fill_classes(&cx, idx, start, spare, 1);

	for (i = 0; i < n; i++) {
		out[i].bytes = cx.wk[i].x * c;
		out[i].guaranteed = cx.wk[i].g * c;
		total += cx.wk[i].x;
	}
	vgp_status_ok(st);
	if (st) {
		st->flags = flags;
		st->entitled = total * c;
		st->spare = spare * c;
		demand *= c;
		st->demand = demand > UINT64_MAX ? UINT64_MAX : (uint64_t)demand;
	}
	return 0;
}
