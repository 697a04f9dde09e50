// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The oracle's engine (tools/vgmem-sim/oracle.c), Belady's MIN over chunks:
 *  - the textbook reference strings, whose optimal page faults are known
 *    by hand (Silberschatz's 20 references, Belady's anomaly), give the
 *    known numbers of copies, and online policies written here the obvious
 *    way give the textbook's LRU and FIFO numbers on them;
 *  - on random demand-only strings, the oracle moves exactly what an
 *    exhaustive search over every placement finds optimal;
 *  - on random traces of one chunk size without frees, it is the optimum
 *    when allocations are written at once (as the tenants' are), and
 *    otherwise never moves more than LRU, FIFO, MRU, LFU or random
 *    eviction, nor less than the optimum; with frees it stays at or above
 *    the optimum, and how often it is above is printed; traces where it
 *    is not the optimum (a chunk about to be freed, chunks of different
 *    sizes) are pinned, as docs/performance.md says;
 *  - the heaps agree to the byte with MIN computed the slow way (every
 *    next use found by scanning forward) on traces of mixed chunk sizes,
 *    in both variants;
 *  - the weighted variant never takes a chunk from a VM within its share
 *    while another is above its own, where MIN does.
 * Seeds are fixed; VGO_SEED=<n> in the environment replays another.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "tools/vgmem-sim/oracle.h"

#define S		(1ull << 20)	/* one chunk */
#define MAXC		2048
#define MAXOPS		8192
#define DEAD		(1ull << 32)
#define NONE		UINT32_MAX

static uint64_t seed = 20251129;

struct seq {
	struct or_chunk ch[MAXC];
	struct or_op op[MAXOPS];
	uint32_t nch, nop, nr_vms;
};

static struct seq q0;	/* large: static storage */

static uint64_t rnd(uint64_t *s, uint64_t bound)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return bound ? z % bound : z;
}

static void add(struct seq *q, enum or_op_kind k, uint32_t id)
{
	assert_true(q->nop < MAXOPS);
	q->op[q->nop].kind = (uint8_t)k;
	q->op[q->nop++].id = id;
}

static uint32_t alloc(struct seq *q, uint32_t vm, uint64_t size)
{
	assert_true(q->nch < MAXC);
	q->ch[q->nch].size = size;
	q->ch[q->nch].vm = vm;
	add(q, OR_ALLOC, q->nch);
	return q->nch++;
}

/*
 * A reference string: each name becomes a chunk allocated just before
 * its first reference (a page's first touch: no copy, but it needs room).
 */
static void refstring(struct seq *q, const int *ref, int n)
{
	int map[64], i;

	memset(q, 0, sizeof(*q));
	memset(map, -1, sizeof(map));
	q->nr_vms = 1;
	add(q, OR_VM_START, 0);
	for (i = 0; i < n; i++) {
		if (map[ref[i]] < 0)
			map[ref[i]] = (int)alloc(q, 0, S);
		add(q, OR_ACCESS, (uint32_t)map[ref[i]]);
	}
}

/* The oracle's copies in bytes; per-VM counters into vm[] if given. */
static uint64_t oracle(const struct seq *q, uint64_t vram, enum or_evict ev,
		       struct or_vm *vm)
{
	struct or_cfg cfg = { .vram = vram, .evict = ev, .nr_vms = q->nr_vms };
	struct or_sim s;
	uint64_t bytes;

	assert_int_equal(or_init(&s, &cfg, q->ch, q->nch, q->op, q->nop), 0);
	assert_int_equal(or_run(&s), 0);
	assert_int_equal(s.at, q->nop);
	bytes = s.tot.bytes_in + s.tot.bytes_out;
	if (vm)
		memcpy(vm, s.vm, q->nr_vms * sizeof(*vm));
	or_fini(&s);
	return bytes;
}

/* ---- online policies, the obvious way ----------------------------------- */

enum pol { P_LRU, P_FIFO, P_MRU, P_LFU, P_RANDOM, P_NR };
static const char *const pol_name[P_NR] = { "LRU", "FIFO", "MRU", "LFU", "random" };

struct ref_state {
	uint8_t where[MAXC];	/* 0 none/gone, 1 VRAM, 2 host */
	uint64_t last[MAXC], entered[MAXC], uses[MAXC];
	uint64_t used, bytes;
};

static uint32_t online_victim(const struct seq *q, struct ref_state *r,
			      enum pol p, uint64_t *rs)
{
	uint32_t c, best = NONE, n = 0;

	for (c = 0; c < q->nch; c++) {
		bool better;

		if (r->where[c] != 1)
			continue;
		n++;
		if (best == NONE) {
			best = c;
			continue;
		}
		switch (p) {
		case P_LRU: better = r->last[c] < r->last[best]; break;
		case P_FIFO: better = r->entered[c] < r->entered[best]; break;
		case P_MRU: better = r->last[c] > r->last[best]; break;
		case P_LFU:
			better = r->uses[c] < r->uses[best] ||
				 (r->uses[c] == r->uses[best] &&
				  r->last[c] < r->last[best]);
			break;
		default: better = rnd(rs, n) == 0; break;	/* reservoir */
		}
		if (better)
			best = c;
	}
	return best;
}

/*
 * Demand fetching as the oracle's, an allocation in VRAM whenever it fits
 * and otherwise after evicting by the policy: the same copies charged.
 */
static uint64_t online(const struct seq *q, uint64_t vram, enum pol p,
		       uint64_t rs)
{
	static struct ref_state r;
	uint32_t i, c;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < q->nop; i++) {
		const struct or_op *o = &q->op[i];

		if (o->kind == OR_VM_START || o->kind == OR_VM_STOP)
			continue;
		c = o->id;
		if (o->kind == OR_FREE) {
			if (r.where[c] == 1)
				r.used -= q->ch[c].size;
			r.where[c] = 0;
			continue;
		}
		r.last[c] = i;
		r.uses[c]++;
		if (r.where[c] == 1)
			continue;
		while (vram - r.used < q->ch[c].size) {
			uint32_t x = online_victim(q, &r, p, &rs);

			r.where[x] = 2;
			r.used -= q->ch[x].size;
			r.bytes += q->ch[x].size;
		}
		if (o->kind == OR_ACCESS)
			r.bytes += q->ch[c].size;
		r.where[c] = 1;
		r.entered[c] = i;
		r.used += q->ch[c].size;
	}
	return r.bytes;
}

/* ---- the exhaustive optimum (uniform chunks, at most 12) ---------------- */

/*
 * Every placement, as a shortest path over (operation, chunks in VRAM):
 * an allocation may go to host RAM (free) or to VRAM (free if it fits,
 * else after evicting any resident chunk: one copy); an access to a chunk
 * in host RAM fetches it (one copy), after evicting any chunk if VRAM is
 * full (another); a free costs nothing. Returns copies.
 */
static uint64_t exhaustive(const struct seq *q, uint32_t slots)
{
	static uint64_t cost[2][1 << 12];
	uint32_t i, m, r, cur = 0, n = 1u << q->nch;
	uint64_t best = UINT64_MAX;

	assert_true(q->nch <= 12);
	for (m = 0; m < n; m++)
		cost[0][m] = UINT64_MAX;
	cost[0][0] = 0;
	for (i = 0; i < q->nop; i++) {
		const struct or_op *o = &q->op[i];
		uint32_t bit = 1u << o->id, nx = cur ^ 1;

		if (o->kind == OR_VM_START || o->kind == OR_VM_STOP)
			continue;
		for (m = 0; m < n; m++)
			cost[nx][m] = UINT64_MAX;
#define RELAX(to, c) do { if (cost[cur][m] + (c) < cost[nx][to]) \
				cost[nx][to] = cost[cur][m] + (c); } while (0)
		for (m = 0; m < n; m++) {
			uint32_t k = (uint32_t)__builtin_popcount(m);
			uint64_t in = o->kind == OR_ACCESS;

			if (cost[cur][m] == UINT64_MAX)
				continue;
			if (o->kind == OR_FREE) {
				RELAX(m & ~bit, 0);
				continue;
			}
			if (o->kind == OR_ACCESS && (m & bit)) {
				RELAX(m, 0);
				continue;
			}
			if (o->kind == OR_ALLOC)
				RELAX(m, 0);
			if (k < slots)
				RELAX(m | bit, in);
			else
				for (r = 0; r < q->nch; r++)
					if (m & (1u << r))
						RELAX((m & ~(1u << r)) | bit, in + 1);
		}
#undef RELAX
		cur = nx;
	}
	for (m = 0; m < n; m++)
		if (cost[cur][m] < best)
			best = cost[cur][m];
	return best;
}

/* ---- MIN the slow way: every next use found by scanning forward --------- */

static uint64_t slow_key(const struct seq *q, uint32_t c, uint32_t from)
{
	uint32_t j;

	for (j = from; j < q->nop; j++) {
		if (q->op[j].kind < OR_ALLOC || q->op[j].id != c)
			continue;
		if (q->op[j].kind == OR_ACCESS)
			return j;
		if (q->op[j].kind == OR_FREE)
			return DEAD + j;
	}
	return DEAD + q->nop;
}


#define MAXVM	8

struct slow {
	uint8_t where[MAXC];	/* 0 none/gone, 1 VRAM, 2 host */
	uint64_t resident[MAXVM], in[MAXVM], out[MAXVM];
	bool live[MAXVM];
	uint64_t used, vram;
};

static bool slow_before(const struct seq *q, uint32_t a, uint32_t b,
			uint32_t from)
{
	uint64_t ka = slow_key(q, a, from), kb = slow_key(q, b, from);

	return ka != kb ? ka > kb : a > b;
}

/* Equal weights: the share is VRAM over the VMs alive. */
static bool slow_above(const struct seq *q, const struct slow *w, uint32_t vm)
{
	uint32_t v, n = 0;

	for (v = 0; v < q->nr_vms; v++)
		n += w->live[v];
	return w->live[vm] && n && w->resident[vm] > w->vram / n;
}

static uint32_t slow_victim(const struct seq *q, const struct slow *w,
			    enum or_evict ev, uint32_t from)
{
	uint32_t c, v, best = NONE;
	bool any = false;

	for (v = 0; v < q->nr_vms && ev == OR_EVICT_WEIGHTED; v++)
		any |= slow_above(q, w, v);
	for (c = 0; c < q->nch; c++) {
		if (w->where[c] != 1 || (any && !slow_above(q, w, q->ch[c].vm)))
			continue;
		if (best == NONE || slow_before(q, c, best, from))
			best = c;
	}
	return best;
}

static void slow_evict(const struct seq *q, struct slow *w, uint64_t size,
		       enum or_evict ev, uint32_t from)
{
	while (w->vram - w->used < size) {
		uint32_t x = slow_victim(q, w, ev, from);

		assert_int_not_equal(x, NONE);
		w->where[x] = 2;
		w->used -= q->ch[x].size;
		w->resident[q->ch[x].vm] -= q->ch[x].size;
		w->out[q->ch[x].vm] += q->ch[x].size;
	}
}

static void slow_in(const struct seq *q, struct slow *w, uint32_t c)
{
	w->where[c] = 1;
	w->used += q->ch[c].size;
	w->resident[q->ch[c].vm] += q->ch[c].size;
}

/* MIN with the engine's rules, each decision from a fresh forward scan. */
static void slow_min(const struct seq *q, uint64_t vram, enum or_evict ev,
		     struct slow *w)
{
	uint32_t i, c;

	memset(w, 0, sizeof(*w));
	w->vram = vram;
	for (i = 0; i < q->nop; i++) {
		const struct or_op *o = &q->op[i];

		c = o->id;
		switch (o->kind) {
		case OR_VM_START:
		case OR_VM_STOP:
			w->live[c] = o->kind == OR_VM_START;
			break;
		case OR_FREE:
			if (w->where[c] == 1) {
				w->used -= q->ch[c].size;
				w->resident[q->ch[c].vm] -= q->ch[c].size;
			}
			w->where[c] = 0;
			break;
		case OR_ACCESS:
			if (w->where[c] == 1)
				break;
			slow_evict(q, w, q->ch[c].size, ev, i + 1);
			slow_in(q, w, c);
			w->in[q->ch[c].vm] += q->ch[c].size;
			break;
		default:
			if (vram - w->used < q->ch[c].size) {
				uint32_t x = slow_victim(q, w, ev, i + 1);

				if (!slow_before(q, x, c, i + 1)) {
					w->where[c] = 2;
					break;
				}
				slow_evict(q, w, q->ch[c].size, ev, i + 1);
			}
			slow_in(q, w, c);
			break;
		}
	}
}

/* ---- random traces ------------------------------------------------------ */

/*
 * nr_vms VMs alive throughout; allocations, accesses (mostly to a few hot
 * chunks, as tenants do) and, with RT_FREES, frees; with RT_TOUCH every
 * allocation is accessed at once (a tenant writes what it allocates);
 * with RT_MIXED sizes from a quarter chunk to 4 chunks.
 */
#define RT_FREES	1u
#define RT_TOUCH	2u
#define RT_MIXED	4u

static void random_trace(struct seq *q, uint64_t *rs, uint32_t nr_vms,
			 uint32_t max_chunks, uint32_t ops, unsigned int flags)
{
	uint32_t live[MAXC], nlive = 0, i, v;

	memset(q, 0, sizeof(*q));
	q->nr_vms = nr_vms;
	for (v = 0; v < nr_vms; v++)
		add(q, OR_VM_START, v);
	for (i = 0; i < ops; i++) {
		uint64_t r = rnd(rs, 100);

		if ((r < 25 || !nlive) && q->nch < max_chunks) {
			uint64_t size = flags & RT_MIXED ?
					S / 4 * (1 + rnd(rs, 16)) : S;

			live[nlive++] = alloc(q, (uint32_t)rnd(rs, nr_vms), size);
			if (flags & RT_TOUCH)
				add(q, OR_ACCESS, live[nlive - 1]);
		} else if (r < 35 && nlive && (flags & RT_FREES)) {
			uint32_t k = (uint32_t)rnd(rs, nlive);

			add(q, OR_FREE, live[k]);
			live[k] = live[--nlive];
		} else if (nlive) {
			/* Skewed: the first live chunks are hotter. */
			uint32_t k = (uint32_t)rnd(rs, rnd(rs, 2) ? nlive :
						   (nlive + 2) / 3);

			add(q, OR_ACCESS, live[k]);
		}
	}
	for (i = 0; i < nlive; i++)
		add(q, OR_FREE, live[i]);
	for (v = 0; v < nr_vms; v++)
		add(q, OR_VM_STOP, v);
}

/* A string of references only: allocated at first touch, never freed. */
static void random_refs(struct seq *q, uint64_t *rs, uint32_t names,
			uint32_t len)
{
	int ref[64];
	uint32_t i;

	for (i = 0; i < len; i++)
		ref[i] = (int)rnd(rs, names);
	refstring(q, ref, (int)len);
}

/* ---- the tests ---------------------------------------------------------- */

/*
 * Silberschatz's reference string, three frames: OPT 9 faults, LRU 12,
 * FIFO 15. Six are first touches (7, 0, 1, 2, 3, 4), allocations here: no
 * copy in, but room. So MIN fetches 3 chunks back, and every chunk that
 * entered VRAM leaves it except the 3 there at the end: 6 + 3 - 3 = 6
 * copies out, 9 in all. LRU: 6 in + 9 out; FIFO: 9 in + 12 out.
 */
static void test_textbook(void **state)
{
	static const int ref[] = { 7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1,
				   2, 0, 1, 7, 0, 1 };
	struct seq *q = &q0;
	struct or_vm vm;

	(void)state;
	refstring(q, ref, 20);
	assert_int_equal(oracle(q, 3 * S, OR_EVICT_MIN, &vm), 9 * S);
	assert_int_equal(vm.bytes_in, 3 * S);
	assert_int_equal(vm.bytes_out, 6 * S);
	assert_int_equal(exhaustive(q, 3), 9);
	assert_int_equal(online(q, 3 * S, P_LRU, 1), 15 * S);
	assert_int_equal(online(q, 3 * S, P_FIFO, 1), 21 * S);
	/* One VM alone is always above its share: the same choices. */
	assert_int_equal(oracle(q, 3 * S, OR_EVICT_WEIGHTED, NULL), 9 * S);
}

/*
 * Belady's anomaly string 1 2 3 4 1 2 5 1 2 3 4 5 (5 first touches). OPT:
 * 7 faults in 3 frames (2 fetches, 4 copies out), 6 in 4 (1 fetch, 2 out).
 * FIFO: 9 faults in 3 frames (4 + 6 copies), 10 in 4 (5 + 6): more VRAM,
 * more copies. MIN has no such anomaly.
 */
static void test_anomaly(void **state)
{
	static const int ref[] = { 1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5 };
	struct seq *q = &q0;

	(void)state;
	refstring(q, ref, 12);
	assert_int_equal(oracle(q, 3 * S, OR_EVICT_MIN, NULL), 6 * S);
	assert_int_equal(oracle(q, 4 * S, OR_EVICT_MIN, NULL), 3 * S);
	assert_int_equal(exhaustive(q, 3), 6);
	assert_int_equal(exhaustive(q, 4), 3);
	assert_int_equal(online(q, 3 * S, P_FIFO, 1), 10 * S);
	assert_int_equal(online(q, 4 * S, P_FIFO, 1), 11 * S);
}

/*
 * Demand-only strings (first touch is the allocation, nothing is freed):
 * every policy that only evicts when full evicts fetches + first touches
 * - slots times, so bytes are 2 x fetches + a constant, and MIN's fewest
 * fetches are the fewest bytes. The exhaustive search agrees, every time.
 */
static void test_exhaustive_demand(void **state)
{
	struct seq *q = &q0;
	uint64_t rs = seed;
	uint32_t round;

	(void)state;
	for (round = 0; round < 1500; round++) {
		uint32_t slots = 1 + (uint32_t)rnd(&rs, 4);

		random_refs(q, &rs, 3 + (uint32_t)rnd(&rs, 6),
			    6 + (uint32_t)rnd(&rs, 18));
		if (oracle(q, slots * S, OR_EVICT_MIN, NULL) !=
		    exhaustive(q, slots) * S)
			fail_msg("round %u (seed %llu): oracle %llu chunks, "
				 "optimum %llu", round, (unsigned long long)seed,
				 (unsigned long long)(oracle(q, slots * S,
						      OR_EVICT_MIN, NULL) / S),
				 (unsigned long long)exhaustive(q, slots));
	}
}

/*
 * Nothing freed, every allocation written at once (as the tenants do): a
 * new chunk must come into VRAM, so this is demand paging with the first
 * touch costing room but no copy, and MIN is the optimum, every time.
 */
static void test_exhaustive_no_frees(void **state)
{
	struct seq *q = &q0;
	uint64_t rs = seed + 5;
	uint32_t round, slots;

	(void)state;
	for (round = 0; round < 1500; round++) {
		slots = 1 + (uint32_t)rnd(&rs, 5);
		random_trace(q, &rs, 1 + (uint32_t)rnd(&rs, 3), 11,
			     10 + (uint32_t)rnd(&rs, 50), RT_TOUCH);
		assert_int_equal(oracle(q, slots * S, OR_EVICT_MIN, NULL),
				 exhaustive(q, slots) * S);
	}
}

/*
 * Allocations anywhere, some accessed late or never, nothing freed, one
 * chunk size: the oracle never moves more than any online policy (which
 * all put an allocation in VRAM when it fits), nor less than the optimum
 * (which may leave an allocation in host RAM although it fits: how often
 * that pays is printed).
 */
static void test_never_worse_than_online(void **state)
{
	struct seq *q = &q0;
	uint64_t rs = seed + 1, ob, dp;
	uint32_t round, p, above = 0;

	(void)state;
	for (round = 0; round < 1500; round++) {
		uint32_t slots = 1 + (uint32_t)rnd(&rs, 5);

		random_trace(q, &rs, 1 + (uint32_t)rnd(&rs, 3), 11,
			     10 + (uint32_t)rnd(&rs, 50), 0);
		ob = oracle(q, slots * S, OR_EVICT_MIN, NULL);
		dp = exhaustive(q, slots) * S;
		assert_true(ob >= dp);
		above += ob > dp;
		for (p = 0; p < P_NR; p++) {
			uint64_t on = online(q, slots * S, (enum pol)p, rs);

			if (ob > on)
				fail_msg("round %u (seed %llu): oracle %llu > %s "
					 "%llu", round, (unsigned long long)seed,
					 (unsigned long long)ob, pol_name[p],
					 (unsigned long long)on);
		}
	}
	print_message("no frees: oracle above the optimum in %u of 1500\n", above);
}

/*
 * With frees, "never accessed again" hides whether a chunk's room comes
 * back without a copy: the oracle stays at or above the optimum, and is
 * sometimes above an online policy too. How often, on traces whose
 * allocations are written at once, is printed (docs/performance.md).
 */
static void test_frees(void **state)
{
	struct seq *q = &q0;
	uint64_t rs = seed + 6, ob, dp, best, sum_ob = 0, sum_dp = 0;
	uint32_t round, p, above = 0, beaten = 0;

	(void)state;
	for (round = 0; round < 1500; round++) {
		uint32_t slots = 1 + (uint32_t)rnd(&rs, 5);

		random_trace(q, &rs, 1 + (uint32_t)rnd(&rs, 3), 11,
			     10 + (uint32_t)rnd(&rs, 50), RT_FREES | RT_TOUCH);
		ob = oracle(q, slots * S, OR_EVICT_MIN, NULL);
		dp = exhaustive(q, slots) * S;
		assert_true(ob >= dp);
		above += ob > dp;
		sum_ob += ob;
		sum_dp += dp;
		for (p = 0, best = UINT64_MAX; p < P_NR; p++) {
			uint64_t on = online(q, slots * S, (enum pol)p, rs);

			best = on < best ? on : best;
		}
		beaten += ob > best;
	}
	print_message("frees: oracle above the optimum in %u of 1500 (%.2f %% more "
		      "bytes in all), above the best online policy in %u\n",
		      above, sum_dp ? 100.0 * ((double)sum_ob / sum_dp - 1) : 0,
		      beaten);
}

/*
 * Where MIN is not the optimum (docs/performance.md). One chunk of VRAM:
 * A is about to be freed, B is allocated, D is allocated and used, then
 * B. MIN makes room for B by copying A out (A is never read again), then
 * for D by copying B out, then fetches B back and copies D out: 4 copies.
 * Optimal: B starts in host RAM, A's free leaves room for D, B is fetched
 * at the end over D: 2. Two chunks of VRAM, and an online policy does
 * better: MIN copies 0 out for 2 though 0 is freed right after, then 2
 * out for 3, and fetches 2 back over 3 (4 copies); MRU copies 1 out for
 * 2, finds 0's room for 3, and fetches 1 back over 3 (3 copies).
 */
static void test_not_optimal_with_frees(void **state)
{
	struct seq *q = &q0;
	uint32_t a, b, d, c[4], i;

	(void)state;
	memset(q, 0, sizeof(*q));
	q->nr_vms = 1;
	add(q, OR_VM_START, 0);
	a = alloc(q, 0, S);
	add(q, OR_ACCESS, a);
	b = alloc(q, 0, S);
	add(q, OR_FREE, a);
	d = alloc(q, 0, S);
	add(q, OR_ACCESS, d);
	add(q, OR_ACCESS, b);
	assert_int_equal(oracle(q, S, OR_EVICT_MIN, NULL), 4 * S);
	assert_int_equal(exhaustive(q, 1), 2);

	memset(q, 0, sizeof(*q));
	q->nr_vms = 1;
	add(q, OR_VM_START, 0);
	for (i = 0; i < 3; i++) {
		c[i] = alloc(q, 0, S);
		add(q, OR_ACCESS, c[i]);
	}
	add(q, OR_FREE, c[0]);
	c[3] = alloc(q, 0, S);
	add(q, OR_ACCESS, c[3]);
	add(q, OR_ACCESS, c[1]);
	add(q, OR_ACCESS, c[2]);
	assert_int_equal(oracle(q, 2 * S, OR_EVICT_MIN, NULL), 4 * S);
	assert_int_equal(online(q, 2 * S, P_MRU, 1), 3 * S);
	assert_int_equal(exhaustive(q, 2), 3);
}

/*
 * Where MIN is not the optimum either: chunks of different sizes. Two
 * chunks of VRAM hold B (1.5) and C (0.5); N (0.5) is allocated and used
 * once, then C is read, then B. MIN makes room for N by copying out B,
 * whose next use is the furthest, and fetches it back over N: 3.5 chunks.
 * Copying out C instead (MRU does) costs 1.5: the furthest next use says
 * nothing of how many bytes a choice moves.
 */
static void test_not_optimal_with_sizes(void **state)
{
	struct seq *q = &q0;
	uint32_t b, c, n;

	(void)state;
	memset(q, 0, sizeof(*q));
	q->nr_vms = 1;
	add(q, OR_VM_START, 0);
	b = alloc(q, 0, S + S / 2);
	add(q, OR_ACCESS, b);
	c = alloc(q, 0, S / 2);
	add(q, OR_ACCESS, c);
	n = alloc(q, 0, S / 2);
	add(q, OR_ACCESS, n);
	add(q, OR_ACCESS, c);
	add(q, OR_ACCESS, b);
	assert_int_equal(oracle(q, 2 * S, OR_EVICT_MIN, NULL), 3 * S + S / 2);
	assert_int_equal(online(q, 2 * S, P_MRU, 1), S + S / 2);
}

/*
 * Chunks of different sizes (a quarter chunk to 4), nothing freed, each
 * allocation written at once: MIN by next use is no longer the optimum,
 * nor always below the online policies. How often and by how much it is
 * above the best of them is printed (docs/performance.md); what it does
 * is still MIN's, checked against the slow scan.
 */
static void test_mixed_sizes(void **state)
{
	static struct slow w;
	struct seq *q = &q0;
	uint64_t rs = seed + 7, ob, best, sum_ob = 0, sum_best = 0;
	uint32_t round, p, beaten = 0;

	(void)state;
	for (round = 0; round < 1500; round++) {
		uint64_t vram = S * (4 + rnd(&rs, 5));

		random_trace(q, &rs, 1 + (uint32_t)rnd(&rs, 3), 11,
			     10 + (uint32_t)rnd(&rs, 50), RT_TOUCH | RT_MIXED);
		ob = oracle(q, vram, OR_EVICT_MIN, NULL);
		slow_min(q, vram, OR_EVICT_MIN, &w);
		assert_int_equal(ob, w.in[0] + w.in[1] + w.in[2] + w.out[0] +
				 w.out[1] + w.out[2]);
		for (p = 0, best = UINT64_MAX; p < P_NR; p++) {
			uint64_t on = online(q, vram, (enum pol)p, rs);

			best = on < best ? on : best;
		}
		beaten += ob > best;
		sum_ob += ob;
		sum_best += best;
	}
	print_message("mixed sizes: oracle above the best online policy in %u "
		      "of 1500; in all it moved %.1f %% of the best's bytes\n",
		      beaten, sum_best ? 100.0 * (double)sum_ob / sum_best : 0);
}

/* The heaps against the slow scan, mixed sizes, both variants, per VM. */
static void test_matches_slow_min(void **state)
{
	static struct slow w;
	struct seq *q = &q0;
	struct or_vm vm[MAXVM];
	uint64_t rs = seed + 2;
	uint32_t round, v;
	int ev;

	(void)state;
	for (round = 0; round < 120; round++) {
		uint32_t nvm = 1 + (uint32_t)rnd(&rs, 4);
		uint64_t vram = S * (4 + rnd(&rs, 12));

		random_trace(q, &rs, nvm, 300, 200 + (uint32_t)rnd(&rs, 1500),
			     RT_FREES | (round % 2 ? 0 : RT_MIXED) |
			     (round % 3 ? 0 : RT_TOUCH));
		for (ev = OR_EVICT_MIN; ev <= OR_EVICT_WEIGHTED; ev++) {
			oracle(q, vram, (enum or_evict)ev, vm);
			slow_min(q, vram, (enum or_evict)ev, &w);
			for (v = 0; v < nvm; v++) {
				if (vm[v].bytes_in != w.in[v] ||
				    vm[v].bytes_out != w.out[v])
					fail_msg("round %u %s vm %u: in %llu/%llu "
						 "out %llu/%llu", round,
						 ev ? "weighted" : "min", v,
						 (unsigned long long)vm[v].bytes_in,
						 (unsigned long long)w.in[v],
						 (unsigned long long)vm[v].bytes_out,
						 (unsigned long long)w.out[v]);
			}
		}
	}
}

/*
 * Two VMs, four chunks of VRAM, shares of two. A holds one chunk it reads
 * only at the end; B holds three and allocates a fourth, then reads all
 * four. MIN takes A's chunk (its next use is the furthest) though A is
 * within its share and B above; the weighted variant takes one of B's,
 * and pays for it in bytes.
 */
static void test_weighted_keeps_share(void **state)
{
	struct seq *q = &q0;
	struct or_vm vm[2];
	uint32_t a, b[4], i, k;
	uint64_t min_bytes, w_bytes;

	(void)state;
	memset(q, 0, sizeof(*q));
	q->nr_vms = 2;
	add(q, OR_VM_START, 0);
	add(q, OR_VM_START, 1);
	a = alloc(q, 0, S);
	add(q, OR_ACCESS, a);
	for (i = 0; i < 4; i++) {
		b[i] = alloc(q, 1, S);
		add(q, OR_ACCESS, b[i]);
	}
	for (k = 0; k < 3; k++)
		for (i = 0; i < 4; i++)
			add(q, OR_ACCESS, b[i]);
	add(q, OR_ACCESS, a);

	min_bytes = oracle(q, 4 * S, OR_EVICT_MIN, vm);
	assert_true(vm[0].taken_within_share > 0);
	assert_int_equal(vm[0].bytes_out, S);
	w_bytes = oracle(q, 4 * S, OR_EVICT_WEIGHTED, vm);
	assert_int_equal(vm[0].taken_within_share, 0);
	assert_int_equal(vm[0].bytes_out, 0);
	assert_true(vm[1].bytes_out > 0);
	assert_true(w_bytes >= min_bytes);
}

/* On random traces of several VMs, weighted never takes within a share. */
static void test_weighted_invariant(void **state)
{
	struct seq *q = &q0;
	struct or_vm vm[MAXVM];
	uint64_t rs = seed + 3, taken_by_min = 0;
	uint32_t round, v;

	(void)state;
	for (round = 0; round < 200; round++) {
		uint32_t nvm = 2 + (uint32_t)rnd(&rs, 4);
		uint64_t vram = S * (4 + rnd(&rs, 10));

		random_trace(q, &rs, nvm, 400, 300 + (uint32_t)rnd(&rs, 1500),
			     RT_FREES | (round % 2 ? RT_MIXED : 0));
		oracle(q, vram, OR_EVICT_WEIGHTED, vm);
		for (v = 0; v < nvm; v++)
			assert_int_equal(vm[v].taken_within_share, 0);
		oracle(q, vram, OR_EVICT_MIN, vm);
		for (v = 0; v < nvm; v++)
			taken_by_min += vm[v].taken_within_share;
	}
	/* The property has teeth: MIN alone does take. */
	assert_true(taken_by_min > 0);
}

/* Malformed sequences are refused by or_init; a chunk past VRAM by step. */
static void test_bad_sequences(void **state)
{
	static const uint8_t bad[][4] = {
		/* kinds of the ops after START 0 on chunk 0, 0xff ends */
		{ OR_ACCESS, 0xff },
		{ OR_ALLOC, OR_ALLOC, 0xff },
		{ OR_ALLOC, OR_FREE, OR_FREE, 0xff },
		{ OR_ALLOC, OR_FREE, OR_ACCESS, 0xff },
		{ OR_ALLOC, OR_VM_STOP, 0xff },
		{ OR_FREE, 0xff },
	};
	struct or_cfg cfg = { .vram = S, .nr_vms = 1 };
	struct seq *q = &q0;
	struct or_sim s;
	uint32_t i, k;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(q, 0, sizeof(*q));
		q->ch[0].size = S;
		q->nch = 1;
		add(q, OR_VM_START, 0);
		for (k = 0; bad[i][k] != 0xff; k++)
			add(q, (enum or_op_kind)bad[i][k], 0);
		assert_int_equal(or_init(&s, &cfg, q->ch, q->nch, q->op, q->nop),
				 -EINVAL);
	}
	/* A chunk of a VM that does not exist; a VM started twice. */
	memset(q, 0, sizeof(*q));
	q->ch[0].size = S;
	q->ch[0].vm = 1;
	q->nch = 1;
	add(q, OR_VM_START, 0);
	assert_int_equal(or_init(&s, &cfg, q->ch, q->nch, q->op, q->nop), -EINVAL);
	q->ch[0].vm = 0;
	add(q, OR_VM_START, 0);
	assert_int_equal(or_init(&s, &cfg, q->ch, q->nch, q->op, q->nop), -EINVAL);
	/* Larger than VRAM: it could never be read. */
	memset(q, 0, sizeof(*q));
	add(q, OR_VM_START, 0);
	alloc(q, 0, 2 * S);
	assert_int_equal(or_init(&s, &cfg, q->ch, q->nch, q->op, q->nop), 0);
	assert_int_equal(or_run(&s), -E2BIG);
	or_fini(&s);
}

/* A long trace runs, and what it moved adds up. */
static void test_long_trace(void **state)
{
	static struct or_chunk ch[60000];
	static struct or_op op[400000];
	struct or_cfg cfg = { .vram = 64 * S, .nr_vms = 4,
			      .evict = OR_EVICT_WEIGHTED };
	uint64_t rs = seed + 4, in = 0, out = 0;
	uint32_t nch = 0, nop = 0, i, v;
	struct or_sim s;

	(void)state;
	for (v = 0; v < 4; v++) {
		op[nop].kind = OR_VM_START;
		op[nop++].id = v;
	}
	for (i = 0; i < 60000; i++) {
		ch[i].size = S / 2 * (1 + rnd(&rs, 3));
		ch[i].vm = (uint32_t)rnd(&rs, 4);
	}
	/* Chunks allocated in order, each accessed a few times soon after. */
	while (nop < 399990 && nch < 60000) {
		if (rnd(&rs, 4) == 0 || !nch) {
			op[nop].kind = OR_ALLOC;
			op[nop++].id = nch++;
		} else {
			op[nop].kind = OR_ACCESS;
			op[nop++].id = nch - 1 - (uint32_t)rnd(&rs, nch < 500 ? nch : 500);
		}
	}
	assert_int_equal(or_init(&s, &cfg, ch, nch, op, nop), 0);
	assert_int_equal(or_run(&s), 0);
	for (v = 0; v < 4; v++) {
		in += s.vm[v].bytes_in;
		out += s.vm[v].bytes_out;
	}
	assert_int_equal(in, s.tot.bytes_in);
	assert_int_equal(out, s.tot.bytes_out);
	assert_true(s.used <= cfg.vram);
	assert_true(s.tot.fetches > 0);
	or_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_textbook),
		cmocka_unit_test(test_anomaly),
		cmocka_unit_test(test_exhaustive_demand),
		cmocka_unit_test(test_exhaustive_no_frees),
		cmocka_unit_test(test_never_worse_than_online),
		cmocka_unit_test(test_frees),
		cmocka_unit_test(test_not_optimal_with_frees),
		cmocka_unit_test(test_not_optimal_with_sizes),
		cmocka_unit_test(test_mixed_sizes),
		cmocka_unit_test(test_matches_slow_min),
		cmocka_unit_test(test_weighted_keeps_share),
		cmocka_unit_test(test_weighted_invariant),
		cmocka_unit_test(test_bad_sequences),
		cmocka_unit_test(test_long_trace),
	};
	const char *env = getenv("VGO_SEED");

	if (env)
		seed = strtoull(env, NULL, 0);
	print_message("seed %llu (VGO_SEED replays another)\n",
		      (unsigned long long)seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
