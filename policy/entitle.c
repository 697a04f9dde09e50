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
 * breakpoints (the bench's baseline shows why not), L is first guessed in
 * floating point (Newton steps on F, on a sample of the VMs and then on
 * all), and the breakpoints nearest the guess on either side are tried as
 * a bracket: one pass decides every VM for it, and if F(below) <= R <=
 * F(above) holds exactly, that is the answer (nearly always: three to six
 * passes over the class in all). Otherwise L is bracketed by breakpoints,
 * quickselect style: evaluating F at a breakpoint decides on which side L
 * lies, and every VM whose clamp is then known (fixed at lo, fixed at hi,
 * or strictly proportional) leaves the loop. Expected O(n) per class.
 * Levels are fractions num / den compared by cross-multiplication in 128
 * bits; doubles only decide comparisons that are far apart, so no rounding
 * enters the result.
 *
 * The proportional VMs then share R minus the fixed part exactly in
 * proportion to their weights: each takes the floor of its share, and the
 * few chunks the floors leave go to the largest remainders, ties to the
 * lower VM index (Hamilton's method). Each VM is so within one chunk of
 * its exact share, and the result depends neither on the guess nor on the
 * random pivots: the solution is unique.
 *
 * Speed (bench_policy, 10 000 VMs): the passes read one contiguous array
 * per class in order, branch-free where the outcome is random.
 */
#include <errno.h>

#include "policy.h"
#include "policy_internal.h"

/* Per-VM state, in VM order. */
struct wk {
	uint64_t x;		/* allocation so far (chunks) */
	uint64_t g;		/* guaranteed by steps 1-2 */
	uint64_t dem;		/* demand in chunks, capped at max */
	uint64_t maxc;		/* max in chunks (rounded down) */
	uint64_t key;		/* steps 1-2: chunks claimed */
};

/*
 * One VM of the class being water-filled. The class is copied into a
 * contiguous array that the passes permute in place: every pass then
 * reads memory in order, which is most of the speed at 10 000 VMs (the
 * per-VM state of that many VMs does not fit in L2).
 */
struct wf {
	double bl, bh;		/* lo / w, hi / w: fast, inexact comparisons */
	uint64_t lo;		/* floor of the water-fill (chunks) */
	uint64_t hi;		/* top of the water-fill */
	uint32_t w;
	uint32_t vm;		/* index in the caller's array */
};

/*
 * Hand-out order of leftover chunks, packed into one number: remainder
 * above (rem < den < 2^84: at most 2^20 keys of < 2^64), then the VM
 * index inverted so that ties go to the lower index. Larger is better.
 */
#define VM_BITS		20
_Static_assert(VGP_MAX_VMS <= (1u << VM_BITS), "VM index bits");

_Static_assert(_Alignof(vgp_u128) <= VGP_SCRATCH_ALIGN, "scratch alignment");

struct ctx {
	struct wk *wk;
	struct wf *wf;
	vgp_u128 *rk;		/* packed remainders of one apportioning */
	uint64_t rng;		/* xorshift64 state: pivots only */
};

/* Scratch: rk[n] first (16-byte aligned), then wk[n], wf[n], idx[n]. */
size_t vgp_scratch_size(size_t n)
{
	if (n > VGP_MAX_VMS)
		return 0;
	return n * (sizeof(vgp_u128) + sizeof(struct wk) + sizeof(struct wf) +
		    sizeof(uint32_t));
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

static inline void swap_rk(vgp_u128 *rk, size_t a, size_t b)
{
	vgp_u128 t = rk[a];

	rk[a] = rk[b];
	rk[b] = t;
}

static inline void swap_wf(struct wf *e, size_t a, size_t b)
{
	struct wf t = e[a];

	e[a] = e[b];
	e[b] = t;
}

/* Moves the k largest of rk[0..m) to the front (quickselect). */
static void select_top(struct ctx *cx, vgp_u128 *rk, size_t m, size_t k)
{
	size_t lo = 0, hi = m;

	while (hi - lo > 1 && k > lo && k < hi) {
		size_t p = lo + rnd(cx, hi - lo), store = lo, i;
		vgp_u128 pv;

		swap_rk(rk, p, hi - 1);
		pv = rk[hi - 1];
		/* Lomuto without jumps: [store, i) never beats the pivot. */
		for (i = lo; i < hi - 1; i++) {
			vgp_u128 t = rk[i];

			rk[i] = rk[store];
			rk[store] = t;
			store += t > pv;
		}
		swap_rk(rk, store, hi - 1);
		/* [lo, store) beat the pivot, which now sits at store. */
		if (k <= store)
			hi = store;
		else
			lo = store + 1;
	}
}

/*
 * Exact split of amount in proportion to keys summing to den > 0, in two
 * halves so that callers feed it from any layout: share() gives one VM
 * the floor of its share and records its remainder in cx->rk[i]; then
 * hand_out() gives one chunk each to the largest remainders, as many as
 * the floors left. Gives exactly amount when the keys are what den sums.
 *
 * The largest remainders are found without sorting or quickselect over
 * all of them: share() also counts remainders per bucket of rem / den
 * (NR_BUCKETS equal parts of [0, 1)), computed in floating point, which
 * is monotonic in rem (each rounding step is), so bucket order never
 * contradicts remainder order. Every VM in a bucket above the one where
 * the count runs out gets its chunk; only that one bucket is selected
 * exactly.
 */
#define NR_BUCKETS	1024

struct split {
	uint64_t amount;
	vgp_u128 den;
	double inv;		/* 1 / den, for the fast quotient */
	double binv;		/* NR_BUCKETS / den */
	int small;		/* every product key * amount fits in 52 bits */
	uint64_t given;
	uint32_t cnt[NR_BUCKETS];
};

static void split_init(struct split *sp, uint64_t amount, vgp_u128 den,
		       uint64_t maxkey)
{
	sp->amount = amount;
	sp->den = den;
	sp->given = 0;
	/* Products below 2^52 are exact doubles: see share(). */
	sp->small = den < (1ull << 62) &&
		    (!maxkey || amount < (1ull << 52) / maxkey);
	sp->inv = 1.0 / (double)den;
	sp->binv = (double)NR_BUCKETS / (double)den;
	__builtin_memset(sp->cnt, 0, sizeof(sp->cnt));
}

/* The bucket of a remainder: monotonic, in [0, NR_BUCKETS). */
static inline size_t bucket(const struct split *sp, vgp_u128 rem)
{
	double r = sp->small ? (double)(int64_t)rem : (double)rem;
	size_t b = (size_t)(r * sp->binv);

	return b < NR_BUCKETS ? b : NR_BUCKETS - 1;
}

static inline uint64_t share(struct ctx *cx, struct split *sp, size_t i,
			     uint64_t key, uint32_t vm)
{
	uint64_t q;
	vgp_u128 rem;

	if (sp->small) {
		/*
		 * num < 2^52 is exact as a double, and so num * (1 / den)
		 * is within a few ulps of num / den: the truncated quotient
		 * is off by at most one either way, which the remainder
		 * shows. No division in the common case.
		 */
		uint64_t num = key * sp->amount, d = (uint64_t)sp->den;
		int64_t r;

		q = (uint64_t)((double)num * sp->inv);
		r = (int64_t)(num - q * d);
		if (r < 0) {
			q--;
			r += (int64_t)d;
		} else if ((uint64_t)r >= d) {
			q++;
			r -= (int64_t)d;
		}
		rem = (uint64_t)r;
	} else {
		vgp_u128 num = (vgp_u128)key * sp->amount;

		q = (uint64_t)(num / sp->den);
		rem = num % sp->den;
	}
	cx->rk[i] = rem << VM_BITS | (vgp_u128)((1u << VM_BITS) - 1 - vm);
	sp->cnt[bucket(sp, rem)]++;
	sp->given += q;
	return q;
}

static inline uint32_t rk_vm(vgp_u128 k)
{
	return (1u << VM_BITS) - 1 - (uint32_t)(k & ((1u << VM_BITS) - 1));
}

static void hand_out(struct ctx *cx, const struct split *sp, size_t m)
{
	size_t left = (size_t)(sp->amount - sp->given);	/* < m */
	size_t kb = NR_BUCKETS - 1, above = 0, c = 0, i;
	vgp_u128 *rk = cx->rk;

	if (!left)
		return;
	/* kb: the bucket where the count of left runs out. */
	while (above + sp->cnt[kb] < left)
		above += sp->cnt[kb--];
	for (i = 0; i < m; i++) {
		size_t b = bucket(sp, rk[i] >> VM_BITS);

		if (b > kb)
			cx->wk[rk_vm(rk[i])].x++;
		else if (b == kb)
			rk[c++] = rk[i];
	}
	left -= above;
	select_top(cx, rk, c, left);
	for (i = 0; i < left; i++)
		cx->wk[rk_vm(rk[i])].x++;
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
	size_t na;		/* e[0..na): proportional */
	size_t nu;		/* e[na..nu): undecided; e[nu..m): fixed */
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
 * Sorts e[na..nu) into proportional (moved to the front), fixed (to the
 * back, their x written) and still undecided, for the bracket [llo, lhi];
 * on the way, finds the undecided breakpoints nearest to f->target on
 * either side.
 */
static void classify(struct ctx *cx, struct wf *e, struct fill *f)
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
		struct wf *v = &e[i];
		int le_lo, ge_hi;

		if (fle(v->bh, v->hi, v->w, f->llo, llo)) {
			/* L >= llo >= hi / w: capped. */
			wk[v->vm].x = v->hi;
			f->fixed += v->hi;
			swap_wf(e, i, --f->nu);
			continue;
		}
		if (fge(v->bl, v->lo, v->w, f->lhi, lhi)) {
			/* L <= lhi <= lo / w: at its floor. */
			wk[v->vm].x = v->lo;
			f->fixed += v->lo;
			swap_wf(e, i, --f->nu);
			continue;
		}
		le_lo = fle(v->bl, v->lo, v->w, f->llo, llo);
		ge_hi = fge(v->bh, v->hi, v->w, f->lhi, lhi);
		if (le_lo && ge_hi) {
			/* lo / w <= llo <= L <= lhi <= hi / w */
			f->wact += v->w;
			swap_wf(e, i, f->na++);
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

/* F and its slope at l over e[0], e[stride], ...; see guess_level(). */
struct probe {
	double f, s;
	struct level pb, pa;	/* nearest breakpoints <= l and > l */
};

static void probe(const struct wf *e, size_t m, size_t stride, double l,
		  struct probe *p)
{
	const double inf = __builtin_inf();
	double f = 0.0, s = 0.0, below = -1.0, above = inf;
	size_t i;

	p->pb.den = 0;
	p->pa.den = 0;
	for (i = 0; i < m; i += stride) {
		/* Written to compile to min/max and masks, no jumps. */
		double w = (double)e[i].w, bl = e[i].bl, bh = e[i].bh;
		double c = l > bl ? l : bl;
		int in = (l >= bl) & (l < bh);
		double cb = bh <= l ? bh : bl <= l ? bl : -1.0;
		double ca = bl > l ? bl : bh > l ? bh : inf;

		c = c < bh ? c : bh;
		f += w * c;
		s += w * (double)in;
		/* Rarely taken after the first few VMs. */
		if (cb > below) {
			below = cb;
			p->pb = (struct level){ bh <= l ? e[i].hi : e[i].lo, e[i].w };
		}
		if (ca < above) {
			above = ca;
			p->pa = (struct level){ bl > l ? e[i].lo : e[i].hi, e[i].w };
		}
	}
	p->f = f;
	p->s = s;
}

/*
 * Safeguarded Newton steps on F(L) = r over every stride-th VM, from l;
 * returns the last level probed, *p its probe. F is mostly concave in L
 * (VMs reach their tops as L grows), where Newton from below closes in
 * fast; a step leaving the bracket bisects instead.
 */
static double newton(const struct wf *e, size_t m, size_t stride, double rd,
		     double tol, double l, struct probe *p)
{
	const double inf = __builtin_inf();
	double a = 0.0, b = inf, lp = l;
	int it;

	for (it = 0; it < 12; it++) {
		double next;

		lp = l;
		probe(e, m, stride, l, p);
		if (__builtin_fabs(rd - p->f) <= rd * tol)
			break;		/* as close as wanted */
		if (p->f < rd)
			a = l;
		else
			b = l;
		next = p->s > 0.0 ? l + (rd - p->f) / p->s : b;
		if (!(next > a && next < b))
			next = b < inf ? a + (b - a) / 2 : 2 * l + 1;
		if (next == l)
			break;
		l = next;
	}
	return lp;
}

/*
 * A first guess of L in floating point, and the breakpoints nearest to it
 * on either side (*pb, *pa; den 0 if none): the bracket waterfill() tries
 * first. Many VMs are first sampled (every stride-th: about 256), so that
 * the full passes start close. Only the speed depends on the guess, never
 * the result.
 */
static double guess_level(const struct wf *e, size_t m, uint64_t r,
			  double sum_lo, double wsum,
			  struct level *pb, struct level *pa)
{
	double rd = (double)r, l = (rd - sum_lo) / wsum;
	struct probe p;

	if (m >= 2048) {
		size_t stride = m / 256, ns = (m + stride - 1) / stride;

		l = newton(e, m, stride, rd * (double)ns / (double)m, 1e-4, l, &p);
	}
	l = newton(e, m, 1, rd, 1e-12, l, &p);
	*pb = p.pb;
	*pa = p.pa;
	return l;
}

/* With every VM decided for [llo, lhi]: whether F(llo) <= r <= F(lhi). */
static int bracket_holds(const struct fill *f, uint64_t r)
{
	vgp_u128 lo = f->fixed * f->llo.den + (vgp_u128)f->wact * f->llo.num;

	if (lo > (vgp_u128)r * f->llo.den)
		return 0;
	if (!f->lhi.den)
		return 0;	/* nobody is proportional up to infinity */
	return f->fixed * f->lhi.den + (vgp_u128)f->wact * f->lhi.num >=
	       (vgp_u128)r * f->lhi.den;
}

/*
 * Water-fills capacity r over the VMs e[0..m) between their lo and hi
 * (sum of lo <= r). Sets every x; returns the chunks used (<= r).
 *
 * Pivots: the breakpoints just below and above the estimated level (found
 * while classifying), both evaluated in one pass, usually leave no
 * breakpoint inside the bracket after one or two rounds. When an estimate
 * fails to halve the undecided VMs, the next pivot is random, which keeps
 * the expected work linear whatever the input.
 */
static uint64_t waterfill(struct ctx *cx, struct wf *e, size_t m, uint64_t r)
{
	struct wk *wk = cx->wk;
	struct fill f = { .llo = { 0, 1 }, .lhi = { 0, 0 }, .nu = m };
	struct level gb, ga;
	vgp_u128 sum_hi = 0, sum_lo = 0;
	uint64_t wsum = 0;
	int interp = 1;
	size_t i;

	for (i = 0; i < m; i++) {
		sum_hi += e[i].hi;
		sum_lo += e[i].lo;
		wsum += e[i].w;
	}
	if (sum_hi <= r) {
		for (i = 0; i < m; i++)
			wk[e[i].vm].x = e[i].hi;
		return (uint64_t)sum_hi;
	}
	if (sum_lo >= r) {
		/* F(0) = r: everyone at the floor (a higher class took the rest). */
		for (i = 0; i < m; i++)
			wk[e[i].vm].x = e[i].lo;
		return (uint64_t)sum_lo;
	}

	for (i = 0; i < m; i++) {
		struct wf *v = &e[i];
		double inv = 1.0 / v->w;

		v->bl = (double)v->lo * inv;
		v->bh = (double)v->hi * inv;
	}
	f.flo = (double)sum_lo;		/* F(0) */
	f.wund = wsum;
	f.target = guess_level(e, m, r, (double)sum_lo, (double)wsum, &gb, &ga);

	/*
	 * Fast path: no breakpoint lies strictly between the two found
	 * around the guess, so one pass decides every VM for that bracket,
	 * and F is linear on it: then L is inside iff F(gb) <= r <= F(ga),
	 * checked exactly. Otherwise start over from [0, infinity).
	 */
	if (gb.den)
		f.llo = gb;
	f.lhi = ga;
	classify(cx, e, &f);
	if (f.nu == f.na && bracket_holds(&f, r))
		goto split;
	f = (struct fill){ .llo = { 0, 1 }, .lhi = { 0, 0 }, .nu = m,
			   .flo = (double)sum_lo, .wund = wsum,
			   .target = f.target };
	classify(cx, e, &f);
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
			const struct wf *pv = &e[f.na + rnd(cx, f.nu - f.na)];

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
				const struct wf *v = &e[i];

				/* Masks, not jumps: which case is random. */
				uint64_t blo = -(uint64_t)far_below(pd, v->bl);
				uint64_t ahi = -(uint64_t)far_above(pd, v->bh);
				uint64_t in = -(uint64_t)(far_above(pd, v->bl) &
							  far_below(pd, v->bh));

				if (blo | ahi | in) {
					at += (v->lo & blo) | (v->hi & ahi);
					win += v->w & in;
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
		classify(cx, e, &f);
		interp = !interp || (f.nu - f.na) * 2 <= before;
	}

	/*
	 * L = (r - fixed) / wact lies in [llo, lhi]: the proportional VMs
	 * split r - fixed by weight. fixed <= F(llo) <= r.
	 */
split:
	if (!f.na)
		return (uint64_t)f.fixed;	/* unreachable: F would be flat */
	{
		struct split sp;
		uint64_t maxw = 0;

		for (i = 0; i < f.na; i++)
			maxw = e[i].w > maxw ? e[i].w : maxw;
		split_init(&sp, r - (uint64_t)f.fixed, f.wact, maxw);
		for (i = 0; i < f.na; i++)
			wk[e[i].vm].x = share(cx, &sp, i, e[i].w, e[i].vm);
		hand_out(cx, &sp, f.na);
	}
	return r;
}

/*
 * Guarantee step: each VM claims key more chunks (sum of keys: sum, the
 * largest: maxkey); all of them if they fit in avail, else avail split in
 * proportion. Returns the chunks given and whether the claims had to be
 * scaled.
 */
static uint64_t guarantee(struct ctx *cx, size_t n, uint64_t avail,
			  vgp_u128 sum, uint64_t maxkey, int *scaled)
{
	struct wk *wk = cx->wk;
	struct split sp;
	size_t i;

	*scaled = sum > avail;
	if (!*scaled) {
		if (sum)
			for (i = 0; i < n; i++)
				wk[i].x += wk[i].key;
		return (uint64_t)sum;
	}
	split_init(&sp, avail, sum, maxkey);
	for (i = 0; i < n; i++)
		wk[i].x += share(cx, &sp, i, wk[i].key, (uint32_t)i);
	hand_out(cx, &sp, n);
	return avail;
}

/* Step 3 or 4: water-fill each class, highest first, from the VMs' x up. */
/*
 * *short_of is set if some VM ends below hi, which in step 3 (hi: its
 * demand or what it has) means some demand is not met.
 */
static uint64_t fill_classes(struct ctx *cx, const struct vgp_vm *vms,
			     const uint32_t *idx, const size_t *start,
			     uint64_t spare, int headroom, int *short_of)
{
	struct wk *wk = cx->wk;
	int c;

	for (c = (int)VGP_PRIO_MAX; c >= 0; c--) {
		size_t b = start[c], e = start[c + 1], i;
		struct wf *cl = cx->wf + b;
		uint64_t floors = 0, used;
		vgp_u128 tops = 0;

		if (b == e)
			continue;
		for (i = b; i < e; i++) {
			struct wk *v = &wk[idx[i]];
			struct wf *d = &cl[i - b];

			d->lo = v->x;
			d->hi = headroom ? v->maxc : (v->dem > v->x ? v->dem : v->x);
			d->w = vms[idx[i]].weight;
			d->vm = idx[i];
			floors += d->lo;	/* <= usable VRAM: no overflow */
			tops += d->hi;
		}
		/* waterfill() gives everyone hi iff the tops fit. */
		if (tops > spare + floors)
			*short_of = 1;
		used = waterfill(cx, cl, e - b, spare + floors);
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
	uint64_t c, vram_c, given, spare, total = 0, maxkey = 0;
	vgp_u128 demand = 0, mins = 0, lows;
	int short_of = 0;
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

	cx.rk = scratch;
	cx.wk = (struct wk *)(cx.rk + n);
	cx.wf = (struct wf *)(cx.wk + n);
	idx = (uint32_t *)(cx.wf + n);
	c = gpu->chunk;
	sh = vgp_shift(c);
	vram_c = gpu->vram >> sh;

	/* Step 1: min, reserved whether used or not. */
	for (i = 0; i < n; i++) {
		const struct vgp_vm *vm = &vms[i];
		struct wk *v = &cx.wk[i];
		uint64_t d = vgp_chunks_up(vm->demand, sh);

		v->x = 0;
		v->maxc = vm->max >> sh;
		v->dem = d < v->maxc ? d : v->maxc;
		v->key = vgp_chunks_up(vm->min, sh);
		demand += v->dem;
		mins += v->key;
		maxkey = v->key > maxkey ? v->key : maxkey;
		count[vm->prio]++;
	}
	if (mins > vram_c) {
		/*
		 * Admission keeps this from happening, unless VRAM shrank or
		 * admission was skipped. cgroup rule: each VM is protected in
		 * proportion to the part of its min it uses.
		 */
		flags |= VGP_F_MIN_OVERCOMMIT;
		mins = 0;
		maxkey = 0;
		for (i = 0; i < n; i++) {
			struct wk *v = &cx.wk[i];

			v->key = v->key < v->dem ? v->key : v->dem;
			mins += v->key;
			maxkey = v->key > maxkey ? v->key : maxkey;
		}
	}
	given = guarantee(&cx, n, vram_c, mins, maxkey, &scaled);

	/* Step 2: use below low, protected unless it does not fit. */
	lows = 0;
	maxkey = 0;
	for (i = 0; i < n; i++) {
		struct wk *v = &cx.wk[i];
		uint64_t low = vgp_chunks_up(vms[i].low, sh);
		uint64_t prot = low < v->dem ? low : v->dem;

		v->key = prot > v->x ? prot - v->x : 0;
		lows += v->key;
		maxkey = v->key > maxkey ? v->key : maxkey;
	}
	given += guarantee(&cx, n, vram_c - given, lows, maxkey, &scaled);
	if (scaled)
		flags |= VGP_F_LOW_OVERCOMMIT;

	/* Classes as contiguous runs of idx, in VM order within a class. */
	start[0] = 0;
	for (i = 0; i < VGP_NR_PRIO; i++)
		start[i + 1] = start[i] + count[i];
	for (i = 0; i < VGP_NR_PRIO; i++)
		count[i] = start[i];
	for (i = 0; i < n; i++) {
		cx.wk[i].g = cx.wk[i].x;
		idx[count[vms[i].prio]++] = (uint32_t)i;
	}

	/* Step 3: demand. Step 4: headroom up to max. */
	spare = fill_classes(&cx, vms, idx, start, vram_c - given, 0, &short_of);
	if (short_of)
		flags |= VGP_F_CONTENDED;
	if (!gpu->hold_spare && spare)
		spare = fill_classes(&cx, vms, idx, start, spare, 1, &short_of);

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
