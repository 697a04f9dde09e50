// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Inference VMs serving a request trace (serving.h). The load is generated
 * step by step and, within a step, VM by VM, in the order the player runs
 * events, so the trace's event list is the schedule itself.
 */
#include "serving.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A trace may not be longer than this many steps (as tr_build_*). */
#define SV_MAX_STEPS	1000000u

/* One BO of a request's KV cache: the blocks one step added. */
struct sv_seg {
	uint32_t slot;
	uint64_t off, bytes;	/* simulated bytes of the request's cache */
};

struct sv_gen {
	const struct sv_params *p;
	struct sv_load *l;
	struct sv_seg *seg;	/* per request, from req.it: its BOs */
	uint32_t *nseg;		/* per request: BOs so far */
	uint32_t *active;	/* per VM (stride per_vm): requests running, in
				 * arrival order */
	uint32_t per_vm;	/* most requests one VM is dealt */
	uint32_t *nactive;
	uint32_t *next;		/* per VM: its next request to arrive */
	uint32_t *weights_first, *weights_n;	/* per VM: the weights' slots */
	uint32_t *it;		/* per VM: iterations so far */
	uint64_t *held;		/* per VM: simulated bytes held */
};

static uint64_t page_up(uint64_t v)
{
	return (v + SV_PAGE - 1) & ~(SV_PAGE - 1);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

uint64_t sv_token_bytes(const struct sv_params *p, uint64_t n)
{
	/* n <= 2^25 and kv_token <= 2^30 (sv_build): no overflow. */
	return n * p->kv_token / p->scale;
}

/* Tokens a request holds at the end of its k-th step (0: the prefill). */
static uint64_t held_tokens(const struct sv_params *p, const struct sv_req *r,
			    uint32_t k)
{
	uint64_t gen = 0;

	if (r->generated) {
		gen = (uint64_t)(k + 1) * p->step_tokens;
		if (gen > r->generated)
			gen = r->generated;
	}
	return r->context + gen;
}

static uint64_t blocks_of(const struct sv_params *p, uint64_t tokens)
{
	return (tokens + p->block_tokens - 1) / p->block_tokens;
}

static int ev(struct sv_gen *g, uint32_t step, uint16_t vm, enum tr_op op,
	      enum tr_kern k, uint32_t bo, uint32_t arg, uint64_t off,
	      uint64_t bytes)
{
	struct tr_event e = {
		.step = step, .vm = vm, .op = (uint8_t)op, .kern = (uint8_t)k,
		.bo = bo, .arg = arg, .off = off, .bytes = bytes,
	};

	return tr_push(&g->l->t, &e);
}

static int alloc(struct sv_gen *g, uint32_t step, uint16_t vm, uint64_t bytes,
		 uint32_t *slot)
{
	struct tr_vm *v = &g->l->t.vms[vm];

	*slot = v->nr_bos++;
	g->held[vm] += bytes;
	if (g->held[vm] > v->peak)
		v->peak = g->held[vm];
	return ev(g, step, vm, TR_ALLOC, 0, *slot, 0, 0, bytes);
}

/* A kernel over [lo, hi) of a request's cache, one per BO it touches. */
static int kv_kernel(struct sv_gen *g, uint32_t step, uint32_t r,
		     enum tr_kern k, uint64_t lo, uint64_t hi)
{
	const struct sv_req *rq = &g->l->req[r];
	const struct sv_seg *s = &g->seg[rq->it];
	uint32_t i;
	int err = 0;

	for (i = 0; i < g->nseg[r] && !err; i++) {
		uint64_t a = lo > s[i].off ? lo : s[i].off;
		uint64_t b = hi < s[i].off + s[i].bytes ? hi : s[i].off + s[i].bytes;

		if (a < b)
			err = ev(g, step, rq->vm, TR_KERNEL, k, s[i].slot,
				 k == TR_K_WRITE ? r : 0, a - s[i].off, b - a);
	}
	return err;
}

/* The request's iteration in its k-th step: read, grow, write. */
static int req_step(struct sv_gen *g, uint32_t step, uint32_t r)
{
	const struct sv_params *p = g->p;
	struct sv_load *l = g->l;
	const struct sv_req *rq = &l->req[r];
	uint32_t k = step - rq->step, slot;
	uint64_t before = k ? held_tokens(p, rq, k - 1) : 0;
	uint64_t now = held_tokens(p, rq, k);
	uint64_t b0 = blocks_of(p, before), b1 = blocks_of(p, now);
	uint16_t vm = rq->vm;
	int err;

	l->req_it[rq->it + k] = g->it[vm];
	err = ev(g, step, vm, TR_ITER_BEGIN, 0, 0, g->it[vm], 0, 0);
	/* Attention reads the whole cache (the prefill only writes it). */
	if (!err && k)
		err = kv_kernel(g, step, r, TR_K_READ, 0, sv_token_bytes(p, before));
	if (!err && b1 > b0) {
		struct sv_seg *s = &g->seg[rq->it + g->nseg[r]];

		s->off = b0 * l->sim_block;
		s->bytes = (b1 - b0) * l->sim_block;
		err = alloc(g, step, vm, s->bytes, &slot);
		s->slot = slot;
		g->nseg[r]++;
	}
	if (!err)
		err = kv_kernel(g, step, r, TR_K_WRITE, sv_token_bytes(p, before),
				sv_token_bytes(p, now));
	if (!err)
		err = ev(g, step, vm, TR_ITER_END, 0, 0, g->it[vm], 0, 0);
	g->it[vm]++;
	l->t.vms[vm].nr_iters++;
	return err;
}

/* One step of one VM: arrivals, the weights pass, every request, frees. */
static int vm_step(struct sv_gen *g, uint32_t step, uint16_t vm)
{
	const struct sv_params *p = g->p;
	struct sv_load *l = g->l;
	uint32_t *act = g->active + (size_t)vm * g->per_vm;
	uint32_t i, n, r;
	uint64_t tokens = 0;
	struct sv_step *st = &l->step[(size_t)step * p->nr_vms + vm];
	int err = 0;

	/*
	 * Requests whose last step was the one before give their blocks back
	 * first: what a VM holds at the end of a step (the player samples it
	 * there) includes the requests that finished in it.
	 */
	for (i = 0, n = 0; i < g->nactive[vm] && !err; i++) {
		const struct sv_req *rq = &l->req[act[i]];
		uint32_t s;

		if (step < rq->step + rq->nr_steps) {
			act[n++] = act[i];
			continue;
		}
		for (s = 0; s < g->nseg[act[i]] && !err; s++) {
			const struct sv_seg *sg = &g->seg[rq->it + s];

			err = ev(g, step, vm, TR_FREE, 0, sg->slot, 0, 0, sg->bytes);
			g->held[vm] -= sg->bytes;
		}
	}
	g->nactive[vm] = n;
	for (r = g->next[vm]; r < l->nr_req && l->req[r].step == step;
	     r += p->nr_vms)
		act[g->nactive[vm]++] = r;
	g->next[vm] = r;
	if (!g->nactive[vm] || err)
		goto out;
	st->it_first = g->it[vm];
	err = ev(g, step, vm, TR_ITER_BEGIN, 0, 0, g->it[vm], 0, 0);
	for (i = 0; i < g->weights_n[vm] && !err; i++)
		err = ev(g, step, vm, TR_KERNEL, TR_K_READ, g->weights_first[vm] + i,
			 0, 0, i + 1 < g->weights_n[vm] ? p->bo_size :
			 l->sim_weights - (uint64_t)i * p->bo_size);
	if (!err)
		err = ev(g, step, vm, TR_ITER_END, 0, 0, g->it[vm], 0, 0);
	g->it[vm]++;
	l->t.vms[vm].nr_iters++;
	for (i = 0; i < g->nactive[vm] && !err; i++) {
		err = req_step(g, step, act[i]);
		tokens += held_tokens(p, &l->req[act[i]], step - l->req[act[i]].step);
	}
	st->it_n = g->it[vm] - st->it_first;
	l->kv_tokens[(size_t)step * p->nr_vms + vm] = tokens;
	l->kv_bytes[(size_t)step * p->nr_vms + vm] = g->held[vm] - l->sim_weights;
out:
	if (!err && step + 1 == l->t.steps)
		err = ev(g, step, vm, TR_STOP, 0, 0, 0, 0, 0);
	return err;
}

/* Step 0: every VM starts and loads the weights. */
static int vm_start(struct sv_gen *g, uint16_t vm)
{
	const struct sv_params *p = g->p;
	uint64_t left = g->l->sim_weights, sz;
	uint32_t slot;
	int err = ev(g, 0, vm, TR_START, 0, 0, 0, 0, 0);

	g->weights_first[vm] = g->l->t.vms[vm].nr_bos;
	while (!err && left) {
		sz = left < p->bo_size ? left : p->bo_size;
		err = alloc(g, 0, vm, sz, &slot);
		if (!err)
			err = ev(g, 0, vm, TR_KERNEL, TR_K_WRITE, slot, vm + 1, 0, sz);
		g->weights_n[vm]++;
		left -= sz;
	}
	return err;
}

static int check(const struct rq_trace *rq, const struct sv_params *p,
		 char *err, size_t errlen)
{
	if (!rq->nr)
		return fail(err, errlen, "the trace has no requests");
	if (!p->nr_vms || p->nr_vms > SV_MAX_VMS)
		return fail(err, errlen, "--vms is 1 to %d", SV_MAX_VMS);
	if (!p->scale || !p->kv_token || p->kv_token > (1ull << 30) ||
	    !p->weights || p->weights > (1ull << 50) || !p->block_tokens ||
	    p->block_tokens > RQ_MAX_TOKENS || !p->step_tokens ||
	    !p->token_us || !p->profile || p->profile > (1ull << 50))
		return fail(err, errlen, "need scale, weights (at most 1P), "
			    "kv-token (at most 1G), block-tokens, step-tokens, "
			    "token-us and profile above 0");
	if ((uint64_t)p->block_tokens * p->kv_token % p->scale ||
	    (uint64_t)p->block_tokens * p->kv_token / p->scale % SV_PAGE)
		return fail(err, errlen, "a block (%u tokens x %llu bytes) over "
			    "the scale %llu is not whole 4 KiB pages: change "
			    "--block-tokens or --scale", p->block_tokens,
			    (unsigned long long)p->kv_token,
			    (unsigned long long)p->scale);
	if (!p->bo_size || p->bo_size % SV_PAGE)
		return fail(err, errlen, "--bo-size is whole 4 KiB pages");
	if (p->limit_pct < 100 || p->limit_pct > 1000)
		return fail(err, errlen, "--limit-pct is 100 to 1000");
	if (p->profile / p->scale < page_up(p->weights / p->scale) + SV_PAGE)
		return fail(err, errlen, "the profile must hold the weights and "
			    "a page more");
	return 0;
}

/* Places the requests in steps; 0 or -EINVAL (too many steps). */
static int place(const struct rq_trace *rq, const struct sv_params *p,
		 struct sv_load *l, char *err, size_t errlen)
{
	uint64_t step_ns = (uint64_t)p->step_tokens * p->token_us * 1000, last = 0;
	uint64_t its = 0;
	uint32_t i;

	for (i = 0; i < rq->nr; i++) {
		struct sv_req *r = &l->req[i];
		uint64_t s = rq->req[i].at_ns / step_ns, d = 0;

		r->vm = (uint16_t)(i % p->nr_vms);
		r->context = rq->req[i].context;
		r->generated = rq->req[i].generated;
		if (r->generated > p->step_tokens)
			d = (r->generated + (uint64_t)p->step_tokens - 1) /
			    p->step_tokens - 1;
		if (s + d + 2 > SV_MAX_STEPS)
			return fail(err, errlen, "the trace needs more than %u "
				    "steps: raise --step-tokens", SV_MAX_STEPS);
		r->step = (uint32_t)s;
		r->nr_steps = (uint32_t)(1 + d);
		r->it = (uint32_t)its;
		its += r->nr_steps;
		if (its > UINT32_MAX)
			return fail(err, errlen, "too many request steps");
		if (s + d > last)
			last = s + d;
	}
	/* One step more: the VMs stop after their last request's frees. */
	l->t.steps = (uint32_t)last + 2;
	l->req_it = calloc(its ? its : 1, sizeof(*l->req_it));
	return l->req_it ? 0 : -ENOMEM;
}

static void gen_free(struct sv_gen *g)
{
	free(g->seg);
	free(g->nseg);
	free(g->active);
	free(g->nactive);
	free(g->next);
	free(g->weights_first);
	free(g->weights_n);
	free(g->it);
	free(g->held);
}

static int gen_init(struct sv_gen *g, uint32_t vms, uint32_t nr_req,
		    uint64_t req_steps)
{
	g->seg = calloc(req_steps ? req_steps : 1, sizeof(*g->seg));
	g->nseg = calloc(nr_req, sizeof(*g->nseg));
	/* Round robin deals a VM at most nr_req / vms + 1 requests. */
	g->per_vm = nr_req / vms + 1;
	g->active = calloc((size_t)vms * g->per_vm, sizeof(*g->active));
	g->nactive = calloc(vms, sizeof(uint32_t));
	g->next = calloc(vms, sizeof(uint32_t));
	g->weights_first = calloc(vms, sizeof(uint32_t));
	g->weights_n = calloc(vms, sizeof(uint32_t));
	g->it = calloc(vms, sizeof(uint32_t));
	g->held = calloc(vms, sizeof(uint64_t));
	return g->seg && g->nseg && g->active && g->nactive && g->next &&
	       g->weights_first && g->weights_n && g->it && g->held ? 0 : -ENOMEM;
}

int sv_build(const struct rq_trace *rq, const struct sv_params *p,
	     struct sv_load *l, char *err, size_t errlen)
{
	struct sv_gen g = { .p = p, .l = l };
	uint64_t req_steps, peak = 0;
	uint32_t s, v;
	int ret;

	memset(l, 0, sizeof(*l));
	ret = check(rq, p, err, errlen);
	if (ret)
		return ret;
	l->sim_block = (uint64_t)p->block_tokens * p->kv_token / p->scale;
	l->sim_weights = page_up(p->weights / p->scale);
	l->sim_profile = p->profile / p->scale & ~(SV_PAGE - 1);
	l->step_s = (double)p->step_tokens * p->token_us / 1e6;
	l->nr_req = (uint32_t)rq->nr;
	l->req = calloc(rq->nr, sizeof(*l->req));
	l->t.nr_vms = p->nr_vms;
	l->t.vms = calloc(p->nr_vms, sizeof(*l->t.vms));
	if (!l->req || !l->t.vms) {
		ret = -ENOMEM;
		goto out;
	}
	ret = place(rq, p, l, err, errlen);
	if (ret)
		goto out;
	req_steps = l->nr_req ? l->req[l->nr_req - 1].it +
				l->req[l->nr_req - 1].nr_steps : 0;
	l->step = calloc((size_t)l->t.steps * p->nr_vms, sizeof(*l->step));
	l->kv_tokens = calloc((size_t)l->t.steps * p->nr_vms, sizeof(uint64_t));
	l->kv_bytes = calloc((size_t)l->t.steps * p->nr_vms, sizeof(uint64_t));
	ret = gen_init(&g, p->nr_vms, l->nr_req, req_steps);
	if (!ret && (!l->step || !l->kv_tokens || !l->kv_bytes))
		ret = -ENOMEM;
	for (v = 0; v < p->nr_vms && !ret; v++) {
		struct tr_vm *vm = &l->t.vms[v];

		snprintf(vm->name, sizeof(vm->name), "vm%u", v + 1);
		vm->kind = TR_INFER;
		vm->entitlement = l->sim_profile;
		vm->limit = page_up(l->sim_profile * p->limit_pct / 100);
		vm->start = 0;
		vm->stop = l->t.steps;
		g.next[v] = v;
		ret = vm_start(&g, (uint16_t)v);
	}
	for (s = 0; s < l->t.steps && !ret; s++) {
		uint64_t all = 0;

		for (v = 0; v < p->nr_vms && !ret; v++) {
			ret = vm_step(&g, s, (uint16_t)v);
			all += l->sim_weights + l->kv_bytes[(size_t)s * p->nr_vms + v];
		}
		if (all > peak)
			peak = all;
	}
	l->t.peak_total = peak;
	for (v = 0; v < p->nr_vms; v++)
		l->t.entitled_total += l->t.vms[v].entitlement;
out:
	gen_free(&g);
	if (ret) {
		if (ret == -ENOMEM && errlen)
			snprintf(err, errlen, "out of memory");
		sv_free(l);
	}
	return ret;
}

void sv_free(struct sv_load *l)
{
	tr_free(&l->t);
	free(l->req);
	free(l->req_it);
	free(l->step);
	free(l->kv_tokens);
	free(l->kv_bytes);
	memset(l, 0, sizeof(*l));
}
