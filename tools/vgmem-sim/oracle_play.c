// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The oracle as a model of compare and cloud-day (play.h): a trace turned
 * into chunk operations for the MIN engine (oracle.h), and the engine's
 * copies charged the way vgmem's relocations are, on top of the baseline.
 *
 * Chunks are the core's: each BO split into chunk-size pieces, the last
 * one shorter (a BO smaller than a chunk is one chunk of its size), plus
 * the player's scratch BO of each VM (kernel results), which every read
 * and gather writes after its range. A kernel accesses the chunks of its
 * range in address order, as the software GPU walks them.
 *
 * Why the baseline: the oracle never reads host memory, so each of its
 * kernels costs exactly what it costs with unlimited VRAM (the cost model
 * charges bytes by where they are); an iteration's time is the baseline's
 * plus the copies the oracle makes the VM wait for. As vgmem's: a VM is
 * charged the PCIe time of its own chunks' copies, both ways (model_ns),
 * and an operation that needs another VM's chunks copied out to make room
 * waits for those copies (the allocation stall). Nothing is played on the
 * software GPU: the oracle needs the future, which no memory manager of
 * the host has; its placement is a function of the trace alone.
 */
#include "oracle.h"
#include "play.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OB_NONE	UINT32_MAX

struct ob_vm {
	uint32_t *first;	/* per BO slot: its first chunk id */
	uint32_t *nr;		/* per BO slot: its chunks (0: not allocated) */
	uint32_t scratch;	/* the scratch BO's chunk */
	bool placed;		/* admitted (not turned away by max_vms) */
};

struct ob {
	const struct trace *t;
	uint64_t chunk;
	struct or_chunk *ch;
	uint32_t nr_ch, cap_ch;
	struct or_op *op;
	uint32_t nr_op, cap_op;
	uint32_t *ev_op;	/* [nr_ev + 1]: the first op of each event */
	struct ob_vm *vm;
};

static int grow(void **a, uint32_t *cap, uint32_t n, size_t elem)
{
	uint32_t c = *cap ? *cap * 2 : 4096;
	void *p;

	if (n < *cap)
		return 0;
	if (c <= *cap || c >= OB_NONE)
		return -ENOMEM;
	p = realloc(*a, (size_t)c * elem);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = c;
	return 0;
}

static int op(struct ob *b, enum or_op_kind k, uint32_t id)
{
	int err = grow((void **)&b->op, &b->cap_op, b->nr_op, sizeof(*b->op));

	if (err)
		return err;
	b->op[b->nr_op].kind = (uint8_t)k;
	b->op[b->nr_op++].id = id;
	return 0;
}

/* A new chunk and its ALLOC. */
static int chunk(struct ob *b, uint16_t vm, uint64_t size, uint32_t *id)
{
	int err = grow((void **)&b->ch, &b->cap_ch, b->nr_ch, sizeof(*b->ch));

	if (err)
		return err;
	b->ch[b->nr_ch].size = size;
	b->ch[b->nr_ch].vm = vm;
	*id = b->nr_ch++;
	return op(b, OR_ALLOC, *id);
}

static int bo_alloc(struct ob *b, const struct tr_event *e)
{
	struct ob_vm *v = &b->vm[e->vm];
	uint64_t off;
	uint32_t id;
	int err = 0;

	if (e->bo >= b->t->vms[e->vm].nr_bos || v->nr[e->bo] || !e->bytes)
		return -EINVAL;
	v->first[e->bo] = b->nr_ch;
	for (off = 0; off < e->bytes && !err; off += b->chunk) {
		err = chunk(b, e->vm, e->bytes - off < b->chunk ?
			    e->bytes - off : b->chunk, &id);
		v->nr[e->bo]++;
	}
	return err;
}

static int bo_free(struct ob *b, uint16_t vm, uint32_t slot)
{
	struct ob_vm *v = &b->vm[vm];
	uint32_t k;
	int err = 0;

	for (k = 0; k < v->nr[slot] && !err; k++)
		err = op(b, OR_FREE, v->first[slot] + k);
	v->nr[slot] = 0;
	return err;
}

static int kernel(struct ob *b, const struct tr_event *e)
{
	const struct ob_vm *v = &b->vm[e->vm];
	uint64_t k, last;
	int err = 0;

	if (e->bo >= b->t->vms[e->vm].nr_bos || !v->nr[e->bo] ||
	    e->off + e->bytes > (uint64_t)v->nr[e->bo] * b->chunk)
		return -EINVAL;
	last = e->bytes ? (e->off + e->bytes - 1) / b->chunk : 0;
	for (k = e->off / b->chunk; e->bytes && k <= last && !err; k++)
		err = op(b, OR_ACCESS, v->first[e->bo] + (uint32_t)k);
	/* Results go to the scratch BO (play.c's do_kernel). */
	if (!err && (e->kern == TR_K_READ || e->kern == TR_K_GATHER))
		err = op(b, OR_ACCESS, v->scratch);
	return err;
}

static int vm_stop(struct ob *b, uint16_t vm)
{
	uint32_t s;
	int err = 0;

	for (s = 0; s < b->t->vms[vm].nr_bos && !err; s++)
		err = bo_free(b, vm, s);
	if (!err)
		err = op(b, OR_FREE, b->vm[vm].scratch);
	return err ? err : op(b, OR_VM_STOP, vm);
}

/*
 * The operations of every event, the VMs turned away by max_vms decided
 * as the player decides them (running VMs at each start).
 */
static int build(struct ob *b, uint32_t max_vms)
{
	const struct trace *t = b->t;
	uint32_t i, running = 0;
	int err = 0;

	for (i = 0; i < t->nr_ev && !err; i++) {
		const struct tr_event *e = &t->ev[i];
		struct ob_vm *v;

		b->ev_op[i] = b->nr_op;
		if (e->vm >= t->nr_vms)
			return -EINVAL;
		v = &b->vm[e->vm];
		if (e->op == TR_START) {
			if (max_vms && running >= max_vms)
				continue;
			v->placed = true;
			running++;
			err = op(b, OR_VM_START, e->vm);
			if (!err)
				err = chunk(b, e->vm, PL_SCRATCH, &v->scratch);
			continue;
		}
		if (!v->placed || v->scratch == OB_NONE)
			continue;	/* turned away, or gone */
		switch (e->op) {
		case TR_STOP:
			running--;
			err = vm_stop(b, e->vm);
			v->scratch = OB_NONE;
			break;
		case TR_ALLOC:
			err = bo_alloc(b, e);
			break;
		case TR_FREE:
			err = e->bo < t->vms[e->vm].nr_bos ?
			      bo_free(b, e->vm, e->bo) : -EINVAL;
			break;
		case TR_KERNEL:
			err = kernel(b, e);
			break;
		default:
			break;
		}
	}
	b->ev_op[t->nr_ev] = b->nr_op;
	return err;
}

static int ob_init(struct ob *b, const struct trace *t, uint64_t chunk)
{
	uint32_t i, n;

	b->t = t;
	b->chunk = chunk;
	b->ev_op = malloc(((size_t)t->nr_ev + 1) * sizeof(*b->ev_op));
	b->vm = calloc(t->nr_vms ? t->nr_vms : 1, sizeof(*b->vm));
	if (!b->ev_op || !b->vm)
		return -ENOMEM;
	for (i = 0; i < t->nr_vms; i++) {
		n = t->vms[i].nr_bos ? t->vms[i].nr_bos : 1;
		b->vm[i].first = malloc(n * sizeof(uint32_t));
		b->vm[i].nr = calloc(n, sizeof(uint32_t));
		b->vm[i].scratch = OB_NONE;
		if (!b->vm[i].first || !b->vm[i].nr)
			return -ENOMEM;
	}
	return 0;
}

static void ob_free(struct ob *b)
{
	uint32_t i;

	if (b->vm)
		for (i = 0; i < b->t->nr_vms; i++) {
			free(b->vm[i].first);
			free(b->vm[i].nr);
		}
	free(b->vm);
	free(b->ev_op);
	free(b->ch);
	free(b->op);
}

/* ---- charging ----------------------------------------------------------- */

struct charge {
	uint64_t pcie_bw;	/* bytes/s, as the player's cost model */
	uint64_t *stall_ns;	/* per VM */
	uint64_t *begin;	/* per VM: charged at its iteration's start */
};

static uint64_t pcie_ns(const struct charge *c, uint64_t bytes)
{
	return (uint64_t)((unsigned __int128)bytes * 1000000000u / c->pcie_bw);
}

/* What vgmem would have charged the VM so far: its copies and its waits. */
static uint64_t charged(const struct charge *c, const struct or_sim *s,
			uint32_t vm)
{
	return pcie_ns(c, s->vm[vm].bytes_in + s->vm[vm].bytes_out) +
	       c->stall_ns[vm];
}

/* The event's operations; every one is on behalf of the event's VM. */
static int apply(struct or_sim *s, struct charge *c, const struct ob *b,
		 uint32_t i)
{
	uint16_t vm = b->t->ev[i].vm;
	uint64_t before = s->vm[vm].stall_bytes;
	int err = 0;

	while (s->at < b->ev_op[i + 1] && !err)
		err = or_step(s);
	c->stall_ns[vm] += pcie_ns(c, s->vm[vm].stall_bytes - before);
	return err;
}

static int replay(struct or_sim *s, struct charge *c, const struct ob *b,
		  const struct pl_result *base, struct pl_result *res)
{
	const struct trace *t = b->t;
	uint64_t vm_steps = 0;
	uint32_t i, step = 0, running = 0;
	int err = 0;

	for (i = 0; i < t->nr_ev && !err; i++) {
		const struct tr_event *e = &t->ev[i];
		struct pl_vm_result *r = &res->vm[e->vm];

		for (; step < e->step; step++)
			vm_steps += running;
		if (e->op == TR_START && !b->vm[e->vm].placed)
			res->capped++;
		if (!b->vm[e->vm].placed)
			continue;
		if (e->op == TR_ITER_BEGIN)
			c->begin[e->vm] = charged(c, s, e->vm);
		err = apply(s, c, b, i);
		switch (e->op) {
		case TR_START:
			r->admitted = true;
			res->admitted++;
			if (++running > res->vms_max)
				res->vms_max = running;
			break;
		case TR_STOP:
			running--;
			r->total_ns = base->vm[e->vm].total_ns +
				      charged(c, s, e->vm);
			break;
		case TR_ITER_END:
			if (e->arg >= t->vms[e->vm].nr_iters)
				return -EINVAL;
			r->iters_ok++;
			if (base->vm[e->vm].iter_ns[e->arg] != PL_NO_SAMPLE)
				r->iter_ns[e->arg] = base->vm[e->vm].iter_ns[e->arg] +
					charged(c, s, e->vm) - c->begin[e->vm];
			break;
		default:
			break;
		}
	}
	for (; step < t->steps; step++)
		vm_steps += running;
	res->vms_avg = (double)vm_steps / t->steps;
	for (i = 0; i < t->nr_vms; i++)
		if (b->vm[i].placed && b->vm[i].scratch != OB_NONE)
			res->vm[i].total_ns = base->vm[i].total_ns +
					      charged(c, s, i);
	return err;
}

static void totals(const struct or_sim *s, const struct charge *c,
		   uint32_t nr_vms, struct pl_result *res)
{
	uint32_t i;

	res->st.pcie_copy_bytes = s->tot.bytes_in + s->tot.bytes_out;
	res->st.pcie_access_bytes = 0;	/* it never reads host memory */
	res->st.relocations = s->tot.fetches + s->tot.evictions;
	for (i = 0; i < nr_vms; i++) {
		res->st.model_ns += pcie_ns(c, s->vm[i].bytes_in +
					    s->vm[i].bytes_out);
		res->st.stall_ns += c->stall_ns[i];
	}
}

int or_spec_parse(const char *spec, enum or_evict *evict)
{
	if (!spec || strncmp(spec, "oracle", 6) || (spec[6] && spec[6] != ':'))
		return -ENOENT;
	*evict = OR_EVICT_MIN;
	if (!spec[6] || !strcmp(spec + 7, "evict=min"))
		return 0;
	if (!strcmp(spec + 7, "evict=weighted")) {
		*evict = OR_EVICT_WEIGHTED;
		return 0;
	}
	return -EINVAL;
}

int or_play(const struct trace *t, const struct pl_cfg *cfg,
	    struct pl_result *res)
{
	struct or_cfg oc = { .vram = cfg->vram, .nr_vms = t->nr_vms };
	struct charge c = { .pcie_bw = VG_SIM_PCIE_BW_DEFAULT };
	uint64_t *weight = NULL;
	struct or_sim s;
	struct ob b;
	uint32_t i;
	int err;

	memset(&s, 0, sizeof(s));
	memset(&b, 0, sizeof(b));
	if (!cfg->base || cfg->base->nr_vms != t->nr_vms) {
		fprintf(stderr, "vgmem-sim: %s: the oracle is computed from the "
			"baseline run, which was not given\n", cfg->model);
		return -EINVAL;
	}
	err = or_spec_parse(cfg->model, &oc.evict);
	if (err)
		return err;
	if (cfg->bw_scale > 1)
		c.pcie_bw /= cfg->bw_scale;
	err = pl_result_init(res, t);
	if (!err)
		err = ob_init(&b, t, cfg->chunk_size ? cfg->chunk_size :
			      VG_CHUNK_DEFAULT);
	c.stall_ns = calloc(t->nr_vms ? t->nr_vms : 1, sizeof(uint64_t));
	c.begin = calloc(t->nr_vms ? t->nr_vms : 1, sizeof(uint64_t));
	weight = malloc((t->nr_vms ? t->nr_vms : 1) * sizeof(*weight));
	if (!err && (!c.stall_ns || !c.begin || !weight))
		err = -ENOMEM;
	if (err)
		goto out;
	/* Shares in proportion to the profiles: the equal share when equal. */
	for (i = 0; i < t->nr_vms; i++)
		weight[i] = t->vms[i].entitlement ? t->vms[i].entitlement : 1;
	oc.weight = weight;
	err = build(&b, cfg->max_vms);
	if (!err)
		err = or_init(&s, &oc, b.ch, b.nr_ch, b.op, b.nr_op);
	if (!err) {
		err = replay(&s, &c, &b, cfg->base, res);
		totals(&s, &c, t->nr_vms, res);
		or_fini(&s);
	}
	if (err == -E2BIG)
		fprintf(stderr, "vgmem-sim: %s: a chunk is larger than the %llu "
			"bytes of VRAM\n", cfg->model,
			(unsigned long long)cfg->vram);
	else if (err)
		fprintf(stderr, "vgmem-sim: %s: cannot compute the oracle: %s\n",
			cfg->model, strerror(-err));
out:
	ob_free(&b);
	free(c.stall_ns);
	free(c.begin);
	free(weight);
	if (err)
		pl_result_free(res);
	return err;
}
