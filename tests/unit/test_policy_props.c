// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Property tests of the entitlement computation (policy/entitle.c) over
 * random inputs from a fixed seed. The seed is printed; VGP_SEED=<n> in
 * the environment replays another one, VGP_ROUNDS=<n> changes the count.
 *
 * Besides the properties (sum within VRAM, mins kept, caps kept, equal
 * VMs within one chunk, weight monotonicity, work conservation, strict
 * priority, max-min fairness to a chunk), every result is compared with
 * an oracle written the slow, obvious way: it evaluates the fill level at
 * every breakpoint instead of bracketing it, and sorts all remainders
 * instead of selecting. The two must agree to the byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/policy.h"

typedef unsigned __int128 u128;

#define MAXN		64
#define SCRATCH_N	4096

static uint64_t seed = 20240611;
static unsigned int rounds = 3000;
static uint64_t rs;
static uint64_t scratch[SCRATCH_N * 16] __attribute__((aligned(16)));

static uint64_t rnd64(void)
{
	/* splitmix64 */
	uint64_t z = (rs += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t bound)
{
	return bound ? rnd64() % bound : 0;
}

/* ---- oracle ------------------------------------------------------------- */

struct ov {
	uint64_t lo, hi, x, key, dem, maxc, g;
	u128 rem;
	uint32_t w;
	int vm;
};

static int o_better(const struct ov *a, const struct ov *b)
{
	if (a->rem != b->rem)
		return a->rem > b->rem;
	return a->vm < b->vm;
}

static void o_apportion(struct ov **v, int m, uint64_t amount, u128 den)
{
	uint64_t given = 0;
	int i, j, k;

	for (i = 0; i < m; i++) {
		u128 num = (u128)v[i]->key * amount;

		v[i]->x += (uint64_t)(num / den);
		given += (uint64_t)(num / den);
		v[i]->rem = num % den;
	}
	/* insertion sort: best first */
	for (i = 1; i < m; i++)
		for (j = i; j > 0 && o_better(v[j], v[j - 1]); j--) {
			struct ov *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	k = (int)(amount - given);
	for (i = 0; i < k; i++)
		v[i]->x++;
}

/* F(a / d) * d */
static u128 o_f(struct ov **v, int m, uint64_t a, uint64_t d)
{
	u128 s = 0;
	int i;

	for (i = 0; i < m; i++) {
		u128 y = (u128)v[i]->w * a, lo = (u128)v[i]->lo * d,
		     hi = (u128)v[i]->hi * d;

		s += y < lo ? lo : y > hi ? hi : y;
	}
	return s;
}

static uint64_t o_fill(struct ov **v, int m, uint64_t r)
{
	uint64_t ln = 0, ld = 1, hn = 0, hd = 0, wact = 0;
	u128 sumhi = 0, fixed = 0;
	struct ov *act[MAXN];
	int i, b, na = 0;

	for (i = 0; i < m; i++)
		sumhi += v[i]->hi;
	if (sumhi <= r) {
		for (i = 0; i < m; i++)
			v[i]->x = v[i]->hi;
		return (uint64_t)sumhi;
	}
	/* Every breakpoint: the largest with F <= r, the smallest with F > r. */
	for (i = 0; i < m; i++)
		for (b = 0; b < 2; b++) {
			uint64_t a = b ? v[i]->hi : v[i]->lo, d = v[i]->w;

			if (o_f(v, m, a, d) <= (u128)r * d) {
				if ((u128)a * ld > (u128)ln * d) {
					ln = a;
					ld = d;
				}
			} else if (!hd || (u128)a * hd < (u128)hn * d) {
				hn = a;
				hd = d;
			}
		}
	assert_true(hd != 0);
	for (i = 0; i < m; i++) {
		struct ov *x = v[i];

		if ((u128)x->hi * ld <= (u128)ln * x->w) {
			x->x = x->hi;
			fixed += x->hi;
		} else if ((u128)x->lo * hd >= (u128)hn * x->w) {
			x->x = x->lo;
			fixed += x->lo;
		} else {
			x->x = 0;
			x->key = x->w;
			wact += x->w;
			act[na++] = x;
		}
	}
	assert_true(na > 0);
	o_apportion(act, na, r - (uint64_t)fixed, wact);
	return r;
}

static void oracle(const struct vgp_gpu *gpu, const struct vgp_vm *vms, int n,
		   uint64_t *res, uint64_t *gres)
{
	struct ov ov[MAXN], *p[MAXN];
	uint64_t c = gpu->chunk, vc = gpu->vram / c, given, spare;
	u128 sum = 0;
	int i, cl, m, pass;

	for (i = 0; i < n; i++) {
		uint64_t d = vms[i].demand / c + (vms[i].demand % c != 0);

		memset(&ov[i], 0, sizeof(ov[i]));
		ov[i].vm = i;
		ov[i].w = vms[i].weight;
		ov[i].maxc = vms[i].max / c;
		ov[i].dem = d < ov[i].maxc ? d : ov[i].maxc;
		ov[i].key = vms[i].min / c + (vms[i].min % c != 0);
		sum += ov[i].key;
		p[i] = &ov[i];
	}
	if (sum > vc) {
		sum = 0;
		for (i = 0; i < n; i++) {
			if (ov[i].key > ov[i].dem)
				ov[i].key = ov[i].dem;
			sum += ov[i].key;
		}
	}
	if (sum <= vc) {
		for (i = 0; i < n; i++)
			ov[i].x = ov[i].key;
		given = (uint64_t)sum;
	} else {
		o_apportion(p, n, vc, sum);
		given = vc;
	}
	sum = 0;
	for (i = 0; i < n; i++) {
		uint64_t low = vms[i].low / c + (vms[i].low % c != 0);
		uint64_t prot = low < ov[i].dem ? low : ov[i].dem;

		ov[i].key = prot > ov[i].x ? prot - ov[i].x : 0;
		sum += ov[i].key;
		p[i] = &ov[i];
	}
	if (sum <= vc - given) {
		for (i = 0; i < n; i++)
			ov[i].x += ov[i].key;
		given += (uint64_t)sum;
	} else {
		o_apportion(p, n, vc - given, sum);
		given = vc;
	}
	for (i = 0; i < n; i++)
		ov[i].g = ov[i].x;
	spare = vc - given;
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && (gpu->hold_spare || !spare))
			break;
		for (cl = VGP_PRIO_MAX; cl >= 0; cl--) {
			uint64_t floors = 0, used;

			for (i = 0, m = 0; i < n; i++) {
				if (vms[i].prio != (uint32_t)cl)
					continue;
				ov[i].lo = ov[i].x;
				ov[i].hi = pass ? ov[i].maxc :
					   (ov[i].dem > ov[i].x ? ov[i].dem : ov[i].x);
				floors += ov[i].lo;
				p[m++] = &ov[i];
			}
			if (!m)
				continue;
			used = o_fill(p, m, spare + floors);
			spare = spare + floors - used;
		}
	}
	for (i = 0; i < n; i++) {
		res[i] = ov[i].x * c;
		gres[i] = ov[i].g * c;
	}
}

/* ---- random inputs --------------------------------------------------------- */

static uint32_t rand_weight(void)
{
	static const uint32_t common[] = { 1, 100, 100, 100, 250, 10000 };

	if (rnd(3))
		return common[rnd(6)];
	return 1 + (uint32_t)rnd(VGP_WEIGHT_MAX);
}

/* A valid VM of the gpu; mins kept small enough that they usually fit. */
static void rand_vm(const struct vgp_gpu *g, struct vgp_vm *v, int n)
{
	uint64_t c = g->chunk, vc = g->vram / c;
	uint64_t maxc, lowc, minc;

	uint64_t qmax = vc > (UINT64_MAX / c - 1) / 3 ? UINT64_MAX / c - 1 : 3 * vc;

	vgp_vm_init(v, (1 + rnd(qmax)) * c - rnd(c));
	maxc = v->quota / c;
	if (rnd(4) == 0)
		maxc = rnd(maxc + 1);
	lowc = rnd(4) ? 0 : rnd(maxc + 1);
	if (rnd(2) && lowc > 2 * vc / (unsigned)n)
		lowc = rnd(2 * vc / (unsigned)n + 1);
	minc = rnd(3) ? 0 : rnd(lowc + 1);
	if (minc > vc / (unsigned)n)
		minc = rnd(vc / (unsigned)n + 1);
	if (minc > lowc)
		minc = lowc;
	v->max = maxc * c + (maxc * c < v->quota && rnd(2) ?
			     rnd(v->quota - maxc * c + 1) : 0);
	if (v->max > v->quota || v->max / c != maxc)
		v->max = maxc * c;
	v->low = lowc ? lowc * c - rnd(c) : 0;
	v->min = minc ? minc * c - rnd(c) : 0;
	if (v->min > v->low)
		v->min = v->low;
	v->weight = rand_weight();
	v->prio = rnd(3) ? 0 : (uint32_t)rnd(VGP_NR_PRIO);
	switch (rnd(5)) {
	case 0:
		v->demand = 0;
		break;
	case 1:
		v->demand = v->quota;
		break;
	default:
		v->demand = rnd(v->quota + 1);
	}
}

static void rand_gpu(struct vgp_gpu *g)
{
	memset(g, 0, sizeof(*g));
	g->chunk = 1ull << rnd(22);
	g->vram = (1 + rnd(rnd(2) ? 64 : 4096)) * g->chunk + rnd(g->chunk);
	if (rnd(10) == 0) {
		/* Huge byte counts: the 128-bit paths. */
		g->chunk = 1ull << rnd(4);
		g->vram = (1ull << 62) + rnd(1ull << 62);
	}
	g->oversub_pct = 100000;
	g->host_budget = UINT64_MAX;
	g->hold_spare = rnd(4) == 0;
}

static int rand_case(struct vgp_gpu *g, struct vgp_vm *v)
{
	int n = 1 + (int)rnd(rnd(4) ? 8 : MAXN), i;

	rand_gpu(g);
	for (i = 0; i < n; i++)
		rand_vm(g, &v[i], n);
	/* Mins that may not fit: the cgroup overcommit rule. */
	if (rnd(6) == 0)
		for (i = 0; i < n; i++) {
			uint64_t c = g->chunk, lowc = rnd(v[i].max / c + 1);

			v[i].low = lowc * c;
			v[i].min = rnd(2) ? v[i].low : rnd(v[i].low + 1);
		}
	/* Copies of one VM, to check equal treatment. */
	if (n > 2 && rnd(3) == 0) {
		int k = 1 + (int)rnd((uint64_t)n - 1);

		for (i = 1; i <= k && i < n; i++)
			v[i] = v[0];
	}
	return n;
}

static void compute(const struct vgp_gpu *g, const struct vgp_vm *v, int n,
		    struct vgp_ent *out, struct vgp_status *st)
{
	int err = vgp_compute(g, v, (size_t)n, out, scratch, sizeof(scratch), st);

	if (err)
		fprintf(stderr, "compute: %d %s\n", err, st->reason);
	assert_int_equal(err, 0);
}

static uint64_t chunks_up(uint64_t b, uint64_t c)
{
	return b / c + (b % c != 0);
}

/* ---- tests ------------------------------------------------------------------- */

static void test_oracle_and_invariants(void **state)
{
	struct vgp_vm v[MAXN];
	struct vgp_ent out[MAXN];
	uint64_t ores[MAXN], ogres[MAXN];
	struct vgp_status st;
	struct vgp_gpu g;
	unsigned int r;

	(void)state;
	rs = seed;
	for (r = 0; r < rounds; r++) {
		uint64_t c, vc, sum = 0;
		u128 demc = 0, maxsum = 0, minsum = 0, need;
		int n = rand_case(&g, v), i, j;
		int mins_fit;

		compute(&g, v, n, out, &st);
		oracle(&g, v, n, ores, ogres);
		c = g.chunk;
		vc = g.vram / c;
		for (i = 0; i < n; i++) {
			uint64_t d = chunks_up(v[i].demand, c), mx = v[i].max / c;

			if (out[i].bytes != ores[i] || out[i].guaranteed != ogres[i])
				fail_msg("round %u vm %d: %llu/%llu, oracle %llu/%llu",
					 r, i, (unsigned long long)out[i].bytes,
					 (unsigned long long)out[i].guaranteed,
					 (unsigned long long)ores[i],
					 (unsigned long long)ogres[i]);
			/* Whole chunks, at most max, guarantee within it. */
			assert_int_equal(out[i].bytes % c, 0);
			assert_true(out[i].bytes <= v[i].max);
			assert_true(out[i].guaranteed <= out[i].bytes);
			sum += out[i].bytes / c;
			demc += d < mx ? d : mx;
			maxsum += mx;
			minsum += chunks_up(v[i].min, c);
		}
		assert_true(sum <= vc);
		assert_int_equal(st.entitled, sum * c);
		assert_int_equal(st.spare, (vc - sum) * c);
		mins_fit = minsum <= vc;
		assert_int_equal(!!(st.flags & VGP_F_MIN_OVERCOMMIT), !mins_fit);

		for (i = 0; i < n; i++) {
			uint64_t x = out[i].bytes / c, gi = out[i].guaranteed / c;
			uint64_t d = chunks_up(v[i].demand, c), mx = v[i].max / c;
			uint64_t lo = chunks_up(v[i].low, c);

			if (d > mx)
				d = mx;
			/* No VM below its min when the mins fit. */
			if (mins_fit)
				assert_true(x >= chunks_up(v[i].min, c));
			/* Use below low protected unless low is overcommitted. */
			if (mins_fit && !(st.flags & VGP_F_LOW_OVERCOMMIT))
				assert_true(gi >= (lo < d ? lo : d));
			/* Beyond the guarantee, only demand unless spare is left. */
			if (g.hold_spare || st.flags & VGP_F_CONTENDED)
				assert_true(x <= (gi > d ? gi : d));
			for (j = 0; j < n; j++) {
				uint64_t xj = out[j].bytes / c, gj = out[j].guaranteed / c;

				if (i == j)
					continue;
				/* Same inputs: within one chunk. */
				if (!memcmp(&v[i], &v[j], sizeof(v[i])))
					assert_true(x <= xj + 1 && xj <= x + 1);
				/* Strict priority: a starved VM means every lower class
				 * sits at its guarantee. */
				if (x < d && v[j].prio < v[i].prio)
					assert_int_equal(xj, gj);
				/*
				 * Max-min fair in a class: j above its guarantee has
				 * at most i's level (by weight) plus a chunk, while i
				 * is short of its demand.
				 */
				if (x < d && v[j].prio == v[i].prio && xj > gj)
					assert_true((u128)(xj - 1) * v[i].weight <=
						    (u128)(x + 1) * v[j].weight);
			}
		}
		/* Work conserving. */
		if (demc >= vc)
			assert_int_equal(sum, vc);
		if (!g.hold_spare && maxsum >= vc)
			assert_int_equal(sum, vc);
		/* Short of demand only when guarantees plus demands overflow. */
		for (i = 0, need = 0; i < n; i++) {
			uint64_t d = chunks_up(v[i].demand, c), mx = v[i].max / c;
			uint64_t gi = out[i].guaranteed / c;

			d = d < mx ? d : mx;
			need += gi > d ? gi : d;
		}
		assert_int_equal(!!(st.flags & VGP_F_CONTENDED), need > vc);
	}
}

static void test_weight_monotone(void **state)
{
	struct vgp_vm v[MAXN];
	struct vgp_ent a[MAXN], b[MAXN];
	struct vgp_status st;
	struct vgp_gpu g;
	unsigned int r;

	(void)state;
	rs = seed ^ 0x5555;
	for (r = 0; r < rounds; r++) {
		int n = rand_case(&g, v), k = (int)rnd((uint64_t)n);
		uint32_t w0 = v[k].weight;

		compute(&g, v, n, a, &st);
		v[k].weight = w0 + 1 + (uint32_t)rnd(VGP_WEIGHT_MAX - w0 + 1);
		if (v[k].weight > VGP_WEIGHT_MAX)
			v[k].weight = VGP_WEIGHT_MAX;
		compute(&g, v, n, b, &st);
		if (b[k].bytes < a[k].bytes)
			fail_msg("round %u: vm %d weight %u -> %u lowered %llu -> %llu",
				 r, k, w0, v[k].weight,
				 (unsigned long long)a[k].bytes,
				 (unsigned long long)b[k].bytes);
	}
}

static void test_demand_monotone(void **state)
{
	struct vgp_vm v[MAXN];
	struct vgp_ent a[MAXN], b[MAXN];
	struct vgp_status st;
	struct vgp_gpu g;
	unsigned int r;

	(void)state;
	rs = seed ^ 0xaaaa;
	for (r = 0; r < rounds; r++) {
		int n = rand_case(&g, v), k = (int)rnd((uint64_t)n);
		uint64_t d0 = v[k].demand;

		compute(&g, v, n, a, &st);
		v[k].demand = d0 + rnd(v[k].quota - (d0 < v[k].quota ? d0 : v[k].quota) + 1);
		compute(&g, v, n, b, &st);
		if (b[k].bytes < a[k].bytes)
			fail_msg("round %u: vm %d demand %llu -> %llu lowered %llu -> %llu",
				 r, k, (unsigned long long)d0,
				 (unsigned long long)v[k].demand,
				 (unsigned long long)a[k].bytes,
				 (unsigned long long)b[k].bytes);
	}
}

/* Identical VMs, all demanding more than VRAM: shares equal to a chunk. */
static void test_equal_shares(void **state)
{
	static struct vgp_vm v[1000];
	static struct vgp_ent out[1000];
	struct vgp_status st;
	struct vgp_gpu g;
	unsigned int r;

	(void)state;
	rs = seed ^ 0x1234;
	for (r = 0; r < rounds / 10; r++) {
		int n = 1 + (int)rnd(1000), i;
		uint64_t lo = UINT64_MAX, hi = 0, sum = 0;

		rand_gpu(&g);
		rand_vm(&g, &v[0], n);
		v[0].demand = v[0].quota;
		for (i = 1; i < n; i++)
			v[i] = v[0];
		compute(&g, v, n, out, &st);
		for (i = 0; i < n; i++) {
			lo = out[i].bytes < lo ? out[i].bytes : lo;
			hi = out[i].bytes > hi ? out[i].bytes : hi;
			sum += out[i].bytes;
		}
		assert_true(hi - lo <= g.chunk);
		/* And the larger shares go to the lower indices. */
		for (i = 1; i < n; i++)
			assert_true(out[i].bytes <= out[i - 1].bytes);
		assert_true(sum <= g.vram);
	}
}

/* Same input, garbage scratch: same output; the oracle still agrees at 4096 VMs. */
static void test_deterministic_large(void **state)
{
	static struct vgp_vm v[SCRATCH_N];
	static struct vgp_ent a[SCRATCH_N], b[SCRATCH_N];
	struct vgp_status st;
	struct vgp_gpu g = { .vram = 80ull << 30, .chunk = 2ull << 20,
			     .oversub_pct = 100000, .host_budget = UINT64_MAX };
	uint64_t sum = 0;
	size_t i;

	(void)state;
	rs = seed ^ 0x77;
	for (i = 0; i < SCRATCH_N; i++) {
		vgp_vm_init(&v[i], (1 + rnd(64)) << 30);
		v[i].weight = rand_weight();
		v[i].prio = (uint32_t)rnd(VGP_NR_PRIO);
		v[i].demand = rnd(v[i].quota);
		v[i].low = rnd(4) ? 0 : rnd(v[i].demand / 4 + 1) & ~((2ull << 20) - 1);
	}
	assert_int_equal(vgp_compute(&g, v, SCRATCH_N, a, scratch, sizeof(scratch), &st), 0);
	for (i = 0; i < sizeof(scratch) / sizeof(scratch[0]); i++)
		scratch[i] = rnd64();
	assert_int_equal(vgp_compute(&g, v, SCRATCH_N, b, scratch, sizeof(scratch), &st), 0);
	assert_memory_equal(a, b, sizeof(a));
	for (i = 0; i < SCRATCH_N; i++)
		sum += a[i].bytes;
	assert_int_equal(sum, g.vram);
	assert_true(st.flags & VGP_F_CONTENDED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oracle_and_invariants),
		cmocka_unit_test(test_weight_monotone),
		cmocka_unit_test(test_demand_monotone),
		cmocka_unit_test(test_equal_shares),
		cmocka_unit_test(test_deterministic_large),
	};
	const char *s = getenv("VGP_SEED"), *r = getenv("VGP_ROUNDS");

	if (s)
		seed = strtoull(s, NULL, 0);
	if (r)
		rounds = (unsigned int)strtoul(r, NULL, 0);
	printf("test_policy_props: seed %llu, %u rounds (VGP_SEED=, VGP_ROUNDS= to change)\n",
	       (unsigned long long)seed, rounds);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
