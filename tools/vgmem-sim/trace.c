// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Tenant traces (see trace.h). Generation walks the logical clock step by
 * step and, within a step, the live VMs in index order; each VM draws from
 * its own generator (seed mixed with its index), so adding a VM of one kind
 * does not change what another VM does, and the event order is the order
 * the player runs them in.
 */
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TR_PAGE		4096ull
#define TR_HEARTBEAT	8	/* idle VMs touch their memory this often */
#define TR_CKPT		16	/* train: iterations between checkpoints */
#define TR_GATHER_N	4096	/* u32 elements per gather (fits the scratch) */

static const char *const kind_names[TR_KIND_NR] = {
	[TR_TRAIN] = "train", [TR_INFER] = "infer",
	[TR_LEAK] = "leak", [TR_IDLE] = "idle",
};

const char *tr_kind_name(enum tr_kind k)
{
	return (unsigned int)k < TR_KIND_NR ? kind_names[k] : "unknown";
}

const char *tr_op_name(enum tr_op op)
{
	static const char *const n[] = {
		"start", "stop", "alloc", "free", "kernel", "begin", "end",
	};

	return (unsigned int)op <= TR_ITER_END ? n[op] : "unknown";
}

/* splitmix64, as everywhere in vgmem: the same numbers on every platform. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

/* Uniform in (0, 1]: never 0, so -log() is finite. */
static double unit(uint64_t *s)
{
	return ((rnd(s) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

static uint64_t page_up(uint64_t v)
{
	return (v + TR_PAGE - 1) & ~(TR_PAGE - 1);
}

/* Per-VM generator state. */
struct gen {
	struct tr_vm *vm;
	uint16_t id;
	uint64_t rng;
	uint64_t bo_size;
	uint64_t target;	/* bytes of its main working set / hold */
	uint64_t held;
	uint32_t ws_first, ws_n;	/* slots of the working set (or model) */
	uint64_t ws_last;	/* size of the last working-set BO */
	uint32_t work;		/* leak: slot of its work buffer */
	uint32_t ck_first, ck_n;	/* train: checkpoint buffer slots */
	uint64_t ck_last;
	uint32_t iter;
	bool burst;		/* infer: in a burst of requests */
	bool full;		/* leak: reached its target */
};

int tr_push(struct trace *t, const struct tr_event *e)
{
	if (t->nr_ev == t->cap_ev) {
		uint32_t cap = t->cap_ev ? t->cap_ev * 2 : 4096;
		struct tr_event *n;

		if (cap < t->cap_ev)
			return -ENOMEM;
		n = realloc(t->ev, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->ev = n;
		t->cap_ev = cap;
	}
	t->ev[t->nr_ev++] = *e;
	return 0;
}

static int ev(struct trace *t, struct gen *g, uint32_t step, enum tr_op op,
	      enum tr_kern k, uint32_t bo, uint32_t arg, uint64_t off,
	      uint64_t bytes)
{
	struct tr_event e = {
		.step = step, .vm = g->id, .op = (uint8_t)op, .kern = (uint8_t)k,
		.bo = bo, .arg = arg, .off = off, .bytes = bytes,
	};

	return tr_push(t, &e);
}

static int alloc(struct trace *t, struct gen *g, uint32_t step, uint64_t bytes,
		 uint32_t *slot)
{
	*slot = g->vm->nr_bos++;
	g->held += bytes;
	if (g->held > g->vm->peak)
		g->vm->peak = g->held;
	/* Peaks at every allocation: requests free within a step. */
	t->held_now += bytes;
	if (t->held_now > t->peak_total)
		t->peak_total = t->held_now;
	return ev(t, g, step, TR_ALLOC, 0, *slot, 0, 0, bytes);
}

/* The working set: target bytes in BOs of bo_size, each written once. */
static int alloc_ws(struct trace *t, struct gen *g, uint32_t step,
		    uint64_t bytes)
{
	uint64_t left = bytes, sz;
	uint32_t slot;
	int err;

	g->ws_first = g->vm->nr_bos;
	g->ws_n = 0;
	while (left) {
		sz = left < g->bo_size ? left : g->bo_size;
		err = alloc(t, g, step, sz, &slot);
		if (!err)
			err = ev(t, g, step, TR_KERNEL, TR_K_WRITE, slot,
				 (uint32_t)rnd(&g->rng), 0, sz);
		if (err)
			return err;
		g->ws_last = sz;
		g->ws_n++;
		left -= sz;
	}
	return 0;
}

static uint64_t ws_size(const struct gen *g, uint32_t i)
{
	return i + 1 == g->ws_n ? g->ws_last : g->bo_size;
}

static int gen_start(struct trace *t, struct gen *g, uint32_t step)
{
	int err;

	err = ev(t, g, step, TR_START, 0, 0, 0, 0, 0);
	if (err)
		return err;
	switch (g->vm->kind) {
	case TR_TRAIN:
		/*
		 * A quarter is a checkpoint buffer, written at the start and
		 * at each checkpoint; the rest is read and updated every
		 * iteration. alloc_ws() records the last set it allocated.
		 */
		err = alloc_ws(t, g, step, page_up(g->target / 4));
		g->ck_first = g->ws_first;
		g->ck_n = g->ws_n;
		g->ck_last = g->ws_last;
		return err ? err : alloc_ws(t, g, step, g->target - page_up(g->target / 4));
	case TR_IDLE:
		return alloc_ws(t, g, step, g->target);
	case TR_INFER:
		/* The model: two thirds of what it uses; activations the rest. */
		return alloc_ws(t, g, step, page_up(g->target * 2 / 3));
	case TR_LEAK:
		err = alloc(t, g, step, g->bo_size, &g->work);
		if (!err)
			err = ev(t, g, step, TR_KERNEL, TR_K_WRITE, g->work, 1, 0,
				 g->bo_size);
		return err;
	default:
		return -EINVAL;
	}
}

static int iter_begin(struct trace *t, struct gen *g, uint32_t step)
{
	return ev(t, g, step, TR_ITER_BEGIN, 0, 0, g->iter, 0, 0);
}

static int iter_end(struct trace *t, struct gen *g, uint32_t step)
{
	g->vm->nr_iters++;
	return ev(t, g, step, TR_ITER_END, 0, 0, g->iter++, 0, 0);
}

/* Forward pass reads everything, the backward pass updates a quarter. */
static int step_train(struct trace *t, struct gen *g, uint32_t step)
{
	uint32_t i, q = (g->ws_n + 3) / 4, first = (g->iter * q) % g->ws_n;
	int err = iter_begin(t, g, step);

	for (i = 0; !err && i < g->ws_n; i++)
		err = ev(t, g, step, TR_KERNEL, TR_K_READ, g->ws_first + i, 0, 0,
			 ws_size(g, i));
	for (i = 0; !err && i < q; i++) {
		uint32_t k = (first + i) % g->ws_n;

		err = ev(t, g, step, TR_KERNEL, TR_K_UPDATE, g->ws_first + k, 0,
			 0, ws_size(g, k));
	}
	/* A checkpoint every TR_CKPT iterations. */
	for (i = 0; !err && g->iter % TR_CKPT == TR_CKPT - 1 && i < g->ck_n; i++)
		err = ev(t, g, step, TR_KERNEL, TR_K_WRITE, g->ck_first + i,
			 g->iter, 0, i + 1 == g->ck_n ? g->ck_last : g->bo_size);
	return err ? err : iter_end(t, g, step);
}

/* One request: activations in, the whole model read, a gather, out. */
static int request(struct trace *t, struct gen *g, uint32_t step)
{
	uint64_t act_room = g->vm->limit > g->held ? g->vm->limit - g->held : 0;
	uint64_t act, typical = g->target / 3 / 4;
	uint32_t i, slot = 0;
	int err;

	/* Mostly small batches; one in eight is a big one (4x). */
	act = typical / 2 + below(&g->rng, typical / 2 + 1);
	if (below(&g->rng, 8) == 0)
		act *= 4;
	act = page_up(act ? act : TR_PAGE);
	if (act > act_room)
		act = act_room & ~(TR_PAGE - 1);
	err = iter_begin(t, g, step);
	if (err)
		return err;
	if (act) {
		err = alloc(t, g, step, act, &slot);
		if (!err)
			err = ev(t, g, step, TR_KERNEL, TR_K_WRITE, slot, g->iter,
				 0, act);
	}
	for (i = 0; !err && i < g->ws_n; i++)
		err = ev(t, g, step, TR_KERNEL, TR_K_READ, g->ws_first + i, 0, 0,
			 ws_size(g, i));
	if (!err) {
		i = (uint32_t)below(&g->rng, g->ws_n);
		err = ev(t, g, step, TR_KERNEL, TR_K_GATHER, g->ws_first + i,
			 TR_GATHER_N, 0, ws_size(g, i));
	}
	if (!err && act) {
		err = ev(t, g, step, TR_KERNEL, TR_K_READ, slot, 0, 0, act);
		if (!err)
			err = ev(t, g, step, TR_FREE, 0, slot, 0, 0, act);
		g->held -= act;
		t->held_now -= act;
	}
	return err ? err : iter_end(t, g, step);
}

/* Bursty arrivals: a burst lasts ~3 steps, quiet spells ~10. */
static int step_infer(struct trace *t, struct gen *g, uint32_t step)
{
	uint32_t n, i;
	int err = 0;

	if (g->burst)
		g->burst = below(&g->rng, 3) != 0;
	else
		g->burst = below(&g->rng, 10) == 0;
	n = g->burst ? 2 + (uint32_t)below(&g->rng, 3) :
		       (uint32_t)below(&g->rng, 2);
	for (i = 0; !err && i < n; i++)
		err = request(t, g, step);
	return err;
}

/* Uses its work buffer, and leaks half a BO per step until its target. */
static int step_leak(struct trace *t, struct gen *g, uint32_t step)
{
	uint64_t sz = g->bo_size / 2 ? page_up(g->bo_size / 2) : TR_PAGE;
	uint32_t slot;
	int err = iter_begin(t, g, step);

	if (!err)
		err = ev(t, g, step, TR_KERNEL, TR_K_UPDATE, g->work, 0, 0,
			 g->bo_size);
	if (!err && !g->full && g->held + sz <= g->target) {
		err = alloc(t, g, step, sz, &slot);
		if (!err)
			err = ev(t, g, step, TR_KERNEL, TR_K_WRITE, slot, step, 0,
				 sz);
	} else {
		g->full = true;
	}
	return err ? err : iter_end(t, g, step);
}

/*
 * A heartbeat over the first 64 KiB of its memory now and then. An idle VM
 * serves no requests: the heartbeat is not an iteration (no slowdown
 * sample), it only keeps the memory from looking entirely dead.
 */
static int step_idle(struct trace *t, struct gen *g, uint32_t step)
{
	if ((step - g->vm->start) % TR_HEARTBEAT != TR_HEARTBEAT - 1)
		return 0;
	return ev(t, g, step, TR_KERNEL, TR_K_READ, g->ws_first, 0, 0,
		  64 * 1024 < ws_size(g, 0) ? 64 * 1024 : ws_size(g, 0));
}

static int gen_step(struct trace *t, struct gen *g, uint32_t step)
{
	if (step == g->vm->start)
		return gen_start(t, g, step);
	if (step + 1 == g->vm->stop) {
		t->held_now -= g->held;
		g->held = 0;
		return ev(t, g, step, TR_STOP, 0, 0, 0, 0, 0);
	}
	switch (g->vm->kind) {
	case TR_TRAIN: return step_train(t, g, step);
	case TR_INFER: return step_infer(t, g, step);
	case TR_LEAK: return step_leak(t, g, step);
	default: return step_idle(t, g, step);
	}
}

/* Walks the clock over every VM; fills nr_bos, the peaks and the totals. */
static int generate(struct trace *t, struct gen *g)
{
	uint32_t s, v;
	int err;

	for (s = 0; s < t->steps; s++) {
		for (v = 0; v < t->nr_vms; v++) {
			if (s < t->vms[v].start || s >= t->vms[v].stop)
				continue;
			err = gen_step(t, &g[v], s);
			if (err)
				return err;
		}
	}
	for (v = 0; v < t->nr_vms; v++)
		t->entitled_total += t->vms[v].entitlement;
	return 0;
}

static void gen_init(struct gen *g, struct trace *t, uint32_t v, uint64_t seed,
		     uint64_t bo_size, uint64_t target)
{
	memset(g, 0, sizeof(*g));
	g->vm = &t->vms[v];
	g->id = (uint16_t)v;
	g->rng = seed ^ (0x5851f42d4c957f2dull * (v + 1));
	g->bo_size = bo_size;
	g->target = page_up(target ? target : TR_PAGE);
}

static bool size_ok(uint64_t v)
{
	return v && !(v % TR_PAGE) && v <= (1ull << 34);
}

int tr_build_mix(const struct tr_mix *p, struct trace *t)
{
	/* What each kind uses, in percent of its entitlement. */
	static const uint32_t use[TR_KIND_NR] = {
		[TR_TRAIN] = 75, [TR_INFER] = 75, [TR_LEAK] = 0, [TR_IDLE] = 75,
	};
	struct gen *g = NULL;
	uint32_t n = 0, k, i, v = 0;
	int err;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < TR_KIND_NR; k++)
		n += p->nr[k];
	if (!n || n > 1024 || p->steps < 3 || p->steps > 1000000 ||
	    !size_ok(p->entitlement) || !size_ok(p->bo_size) ||
	    p->limit_pct < 100 || p->limit_pct > 1000)
		return -EINVAL;
	t->seed = p->seed;
	t->steps = p->steps;
	t->nr_vms = n;
	t->vms = calloc(n, sizeof(*t->vms));
	g = calloc(n, sizeof(*g));
	if (!t->vms || !g) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < TR_KIND_NR; k++) {
		for (i = 0; i < p->nr[k]; i++, v++) {
			struct tr_vm *vm = &t->vms[v];

			snprintf(vm->name, sizeof(vm->name), "%s%u",
				 tr_kind_name((enum tr_kind)k), i + 1);
			vm->kind = (enum tr_kind)k;
			vm->entitlement = p->entitlement;
			vm->limit = page_up(p->entitlement * p->limit_pct / 100);
			vm->start = 0;
			vm->stop = p->steps;
			/* The leaker grows to its limit: past its entitlement. */
			gen_init(&g[v], t, v, p->seed, p->bo_size,
				 k == TR_LEAK ? vm->limit :
				 p->entitlement * use[k] / 100);
		}
	}
	err = generate(t, g);
out:
	free(g);
	if (err)
		tr_free(t);
	return err;
}

int tr_build_day(const struct tr_day *p, struct trace *t)
{
	uint64_t rng = p->seed ^ 0xda3e39cb94b95bdbull, wsum = 0, r;
	uint32_t cap = 64, k, use, life;
	struct gen *g = NULL;
	double at = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < TR_KIND_NR; k++)
		wsum += p->weight[k];
	if (!wsum || p->steps < 3 || p->steps > 1000000 ||
	    !(p->arrival_rate > 0) || p->arrival_rate > 64 || !p->mean_life ||
	    !size_ok(p->entitlement) || !size_ok(p->bo_size) ||
	    p->limit_pct < 100 || p->limit_pct > 1000 || !p->use_hi ||
	    p->use_lo > p->use_hi || p->burst_pct > 100 ||
	    p->burst_hi > p->limit_pct)
		return -EINVAL;
	t->seed = p->seed;
	t->steps = p->steps;
	t->vms = calloc(cap, sizeof(*t->vms));
	g = calloc(cap, sizeof(*g));
	if (!t->vms || !g) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		struct tr_vm *vm;

		at += -log(unit(&rng)) / p->arrival_rate;
		if (at >= p->steps - 2)
			break;
		if (t->nr_vms == 65535) {
			err = -EINVAL;
			goto out;
		}
		if (t->nr_vms == cap) {
			struct tr_vm *nv = realloc(t->vms, 2 * cap * sizeof(*nv));
			struct gen *ng;

			if (!nv) {
				err = -ENOMEM;
				goto out;
			}
			t->vms = nv;
			ng = realloc(g, 2 * cap * sizeof(*ng));
			if (!ng) {
				err = -ENOMEM;
				goto out;
			}
			g = ng;
			cap *= 2;
		}
		vm = &t->vms[t->nr_vms];
		memset(vm, 0, sizeof(*vm));
		r = below(&rng, wsum);
		for (k = 0; k < TR_KIND_NR - 1 && r >= p->weight[k]; k++)
			r -= p->weight[k];
		vm->kind = (enum tr_kind)k;
		snprintf(vm->name, sizeof(vm->name), "%s%u", tr_kind_name(vm->kind),
			 t->nr_vms + 1);
		vm->entitlement = p->entitlement;
		vm->limit = page_up(p->entitlement * p->limit_pct / 100);
		vm->start = (uint32_t)at;
		life = (uint32_t)(p->mean_life / 4 +
				  -log(unit(&rng)) * p->mean_life * 3 / 4);
		vm->stop = vm->start + (life < 3 ? 3 : life);
		if (vm->stop > p->steps)
			vm->stop = p->steps;
		if (below(&rng, 100) < p->burst_pct)
			use = 100 + (uint32_t)below(&rng, p->burst_hi > 100 ?
						    p->burst_hi - 100 + 1 : 1);
		else
			use = p->use_lo + (uint32_t)below(&rng, p->use_hi -
							  p->use_lo + 1);
		gen_init(&g[t->nr_vms], t, t->nr_vms, p->seed, p->bo_size,
			 p->entitlement * use / 100);
		t->nr_vms++;
	}
	/* gen_init kept pointers into t->vms: realloc may have moved it. */
	for (k = 0; k < t->nr_vms; k++)
		g[k].vm = &t->vms[k];
	if (!t->nr_vms) {
		err = -EINVAL;
		goto out;
	}
	err = generate(t, g);
out:
	free(g);
	if (err)
		tr_free(t);
	return err;
}

void tr_free(struct trace *t)
{
	free(t->vms);
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t tr_hash(const struct trace *t)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i;

	for (i = 0; i < t->nr_vms; i++) {
		const struct tr_vm *v = &t->vms[i];

		h = fnv(h, v->name, strlen(v->name));
		h = fnv(h, &v->kind, sizeof(v->kind));
		h = fnv(h, &v->entitlement, sizeof(v->entitlement));
		h = fnv(h, &v->limit, sizeof(v->limit));
		h = fnv(h, &v->start, sizeof(v->start));
		h = fnv(h, &v->stop, sizeof(v->stop));
	}
	for (i = 0; i < t->nr_ev; i++) {
		const struct tr_event *e = &t->ev[i];

		h = fnv(h, &e->step, sizeof(e->step));
		h = fnv(h, &e->vm, sizeof(e->vm));
		h = fnv(h, &e->op, sizeof(e->op));
		h = fnv(h, &e->kern, sizeof(e->kern));
		h = fnv(h, &e->bo, sizeof(e->bo));
		h = fnv(h, &e->arg, sizeof(e->arg));
		h = fnv(h, &e->off, sizeof(e->off));
		h = fnv(h, &e->bytes, sizeof(e->bytes));
	}
	return h;
}

int tr_write_csv(const struct trace *t, const char *path)
{
	static const char *const kn[TR_K_NR] = { "write", "read", "update",
						 "gather" };
	FILE *f = fopen(path, "w");
	uint32_t i;

	if (!f)
		return -errno;
	fprintf(f, "step,vm,op,kernel,bo,arg,off,bytes\n");
	for (i = 0; i < t->nr_ev; i++) {
		const struct tr_event *e = &t->ev[i];

		fprintf(f, "%u,%s,%s,%s,%u,%u,%llu,%llu\n", e->step,
			t->vms[e->vm].name, tr_op_name((enum tr_op)e->op),
			e->op == TR_KERNEL && e->kern < TR_K_NR ? kn[e->kern] : "",
			e->bo, e->arg, (unsigned long long)e->off,
			(unsigned long long)e->bytes);
	}
	if (fclose(f))
		return -EIO;
	return 0;
}
