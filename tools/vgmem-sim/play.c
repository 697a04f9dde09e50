// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The trace player (play.h). One host per run, created with the model's
 * spec; the return worker's thread is off and one pass of it runs after
 * every step, and each kernel is submitted and waited for before the next
 * event, so the engine thread only ever has one VM's work and the run is
 * a function of the trace and the seed.
 *
 * Cost of an iteration = the VM's device time over it (vg_host_guest_cost:
 * its kernels by the cost model plus the model's charges: swsched's
 * mediation and swap-ins, paging's migrations, vgmem's relocation copies
 * of its chunks) plus, for vgmem, the time an allocation of the VM waits
 * for other VMs' chunks to be relocated (the relocation copies the core's
 * copy_device_ns counts during the allocation, beyond what the VM was
 * charged for its own chunks).
 */
#include "play.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "host-module/user/models/models.h"

#define PL_GATHER_MAX	((PL_SCRATCH - 4096) / 4)

struct pvm {
	struct vg_host_guest *g;
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint64_t *va;		/* per BO slot; 0: not allocated (OOM) */
	uint64_t scratch;
	uint64_t stall_ns;	/* vgmem allocation stall charged on top */
	uint64_t it_start;
	uint64_t held;		/* bytes of its trace BOs now (not the scratch) */
	bool it_failed;
	bool live;
};

struct player {
	struct vs_ctx *ctx;
	const struct trace *t;
	const struct pl_cfg *cfg;
	struct pl_result *res;
	struct vg_host *h;
	bool is_vgmem;
	struct pvm *v;
	struct pvm *pending;	/* the VM whose kernels are in flight */
	uint32_t running;
	uint64_t pcie_access_gone;	/* bytes_host of VMs already destroyed */
};

static uint64_t vm_ns(struct player *p, struct pvm *v)
{
	struct vg_sim_cost c;

	(void)p;
	vg_host_guest_cost(v->g, &c);
	return c.device_ns + v->stall_ns;
}

static bool out_of_memory(int err)
{
	return err == -ENOMEM || err == -ENOSPC || err == -EDQUOT;
}

static int vm_start(struct player *p, uint16_t i)
{
	const struct tr_vm *tv = &p->t->vms[i];
	struct pl_vm_result *r = &p->res->vm[i];
	struct pvm *v = &p->v[i];
	struct vg_host_vm_config vc;
	int err;

	if (p->cfg->max_vms && p->running >= p->cfg->max_vms) {
		p->res->capped++;
		return 0;
	}
	memset(&vc, 0, sizeof(vc));
	vc.name = tv->name;
	/*
	 * A static partition is the profile; the others may burst to the
	 * limit. The player's scratch BO (kernel results) comes on top: it is
	 * the harness's, not the tenant's.
	 */
	vc.quota = (vg_host_model(p->h)->kind == VG_MODEL_STATIC ?
		    tv->entitlement : tv->limit) + PL_SCRATCH;
	vc.entitlement = 0;	/* equal profiles: the equal share */
	/*
	 * What the tenant was sold, the scratch on top as for the quota:
	 * past it the core treats its memory as a burst (vg_vm_past_profile()),
	 * as the density's SLO does (a VM past its profile is best effort).
	 */
	vc.profile = tv->entitlement + PL_SCRATCH;
	vc.guest_ram = 4ull << 20;
	err = vg_host_vm_admit(p->h, &vc, &v->g);
	if (err == -ENOSPC) {
		r->refused = true;
		p->res->refused++;
		return 0;
	}
	if (err) {
		fprintf(stderr, "vgmem-sim: %s: admitting %s: %s\n",
			p->cfg->model, tv->name, strerror(-err));
		return err;
	}
	v->dev = vg_host_guest_dev(v->g);
	v->va = calloc(tv->nr_bos ? tv->nr_bos : 1, sizeof(*v->va));
	if (!v->va)
		return -ENOMEM;
	err = vgmem_chan_create(v->dev, 64, 0, 64 << 10, &v->ch);
	if (err) {
		fprintf(stderr, "vgmem-sim: %s: channel of %s: %s\n",
			p->cfg->model, tv->name, strerror(-err));
		return err;
	}
	v->live = true;
	r->admitted = true;
	p->res->admitted++;
	p->running++;
	if (p->running > p->res->vms_max)
		p->res->vms_max = p->running;
	err = vgmem_bo_alloc(v->dev, PL_SCRATCH, &v->scratch);
	if (out_of_memory(err)) {
		r->oom++;
		r->oom_profile++;
		v->scratch = 0;
		return 0;
	}
	return err;
}

static void vm_stop(struct player *p, uint16_t i)
{
	struct pvm *v = &p->v[i];
	struct vg_sim_cost c;

	if (!v->live)
		return;
	vg_host_guest_cost(v->g, &c);
	p->res->vm[i].total_ns = c.device_ns + v->stall_ns;
	p->pcie_access_gone += c.bytes_host;
	vgmem_chan_destroy(v->ch);
	vg_host_guest_destroy(v->g);
	free(v->va);
	memset(v, 0, sizeof(*v));
	p->running--;
}

/*
 * vgmem's allocation stall in device time: the relocation copies during
 * the allocation, less what the VM was charged for its own chunks.
 */
static int do_alloc(struct player *p, struct pvm *v, uint64_t bytes,
		    uint64_t *va)
{
	struct vg_gpu_stats g0, g1;
	uint64_t n0 = 0, n1;
	int err;

	if (p->is_vgmem) {
		vg_gpu_get_stats(vg_host_gpu(p->h), &g0);
		n0 = vm_ns(p, v);
	}
	err = vgmem_bo_alloc(v->dev, bytes, va);
	if (p->is_vgmem) {
		vg_gpu_get_stats(vg_host_gpu(p->h), &g1);
		n1 = vm_ns(p, v);
		if (g1.copy_device_ns - g0.copy_device_ns > n1 - n0) {
			uint64_t s = g1.copy_device_ns - g0.copy_device_ns -
				     (n1 - n0);

			v->stall_ns += s;
			p->res->st.stall_ns += s;
		}
	}
	return err;
}

#define LO(x)	((uint32_t)(x))
#define HI(x)	((uint32_t)((uint64_t)(x) >> 32))

static int do_kernel(struct player *p, struct pvm *v, const struct tr_event *e)
{
	uint64_t va = v->va[e->bo] + e->off, res = v->scratch;
	uint32_t a[VGMEM_CP_NARGS] = { LO(va), HI(va), LO(e->bytes),
				       HI(e->bytes), 0, 0, 0, 0 };
	enum vgmem_kernel k;
	uint32_t n, kind;

	switch (e->kern) {
	case TR_K_WRITE:
		k = VGMEM_K_MEMSET;
		a[4] = e->arg;
		break;
	case TR_K_READ:
		/* CHECKSUM walks page spans: much faster to simulate than STRIDED. */
		k = VGMEM_K_CHECKSUM;
		a[4] = LO(res);
		a[5] = HI(res);
		break;
	case TR_K_UPDATE:
		k = VGMEM_K_VECADD;
		a[2] = LO(va);
		a[3] = HI(va);
		a[4] = LO(va);
		a[5] = HI(va);
		a[6] = (uint32_t)(e->bytes / 4);
		break;
	case TR_K_GATHER:
		n = e->arg < PL_GATHER_MAX ? e->arg : (uint32_t)PL_GATHER_MAX;
		k = VGMEM_K_GATHER;
		a[4] = LO(res + 4096);
		a[5] = HI(res + 4096);
		a[6] = n ? n : 1;
		a[7] = e->step * 2654435761u + e->bo;
		break;
	default:
		return -EINVAL;
	}
	kind = (uint32_t)k;
	/*
	 * One GPFIFO entry (one doorbell) per kernel, as a CUDA-style tenant
	 * launches; the wait comes before the next event that is not a
	 * kernel of this VM (flush()), so only one VM has work in flight.
	 */
	vgmem_pb_inc(v->ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, &kind, 1);
	vgmem_pb_inc(v->ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_ARG(0), a,
		     VGMEM_CP_NARGS);
	vgmem_pb_immd(v->ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
	p->pending = v;
	return vgmem_submit(v->ch, NULL);
}

/* Waits for the kernels in flight, if any. */
static int flush(struct player *p)
{
	struct pvm *v = p->pending;

	p->pending = NULL;
	return v ? vgmem_finish(v->ch) : 0;
}

static int play_event(struct player *p, const struct tr_event *e)
{
	struct pl_vm_result *r = &p->res->vm[e->vm];
	struct pvm *v = &p->v[e->vm];
	int err;

	if (p->pending && (p->pending != v || e->op != TR_KERNEL)) {
		err = flush(p);
		if (err)
			return err;
	}
	if (e->op == TR_START)
		return vm_start(p, e->vm);
	if (!v->live)
		return 0;	/* refused or turned away: its events go elsewhere */
	switch (e->op) {
	case TR_STOP:
		vm_stop(p, e->vm);
		return 0;
	case TR_ALLOC:
		err = do_alloc(p, v, e->bytes, &v->va[e->bo]);
		if (!err)
			v->held += e->bytes;
		if (out_of_memory(err)) {
			r->oom++;
			if (v->held + e->bytes <= p->t->vms[e->vm].entitlement)
				r->oom_profile++;
			v->va[e->bo] = 0;
			v->it_failed = true;
			return 0;
		}
		return err;
	case TR_FREE:
		if (!v->va[e->bo])
			return 0;
		err = vgmem_bo_free(v->dev, v->va[e->bo]);
		v->va[e->bo] = 0;
		v->held -= e->bytes;
		return err;
	case TR_KERNEL:
		if (!v->va[e->bo] || !v->scratch) {
			v->it_failed = true;	/* its memory was never given */
			return 0;
		}
		return do_kernel(p, v, e);
	case TR_ITER_BEGIN:
		v->it_start = vm_ns(p, v);
		v->it_failed = !v->scratch;
		return 0;
	case TR_ITER_END:
		if (e->arg >= p->t->vms[e->vm].nr_iters)
			return -EINVAL;
		if (v->it_failed) {
			r->iters_failed++;
		} else {
			r->iter_ns[e->arg] = vm_ns(p, v) - v->it_start;
			r->iters_ok++;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

/* What each placed VM holds after the step, if the caller asked. */
static void sample_mem(struct player *p, uint32_t step)
{
	uint64_t *row = p->cfg->mem + (size_t)step * p->t->nr_vms * 2;
	struct vg_model_vm_stats st;
	uint32_t i;

	for (i = 0; i < p->t->nr_vms; i++) {
		if (!p->v[i].live)
			continue;
		vg_host_guest_model_stats(p->v[i].g, &st);
		row[2 * i] = st.allocated;
		row[2 * i + 1] = st.resident;
	}
}

static int tick(struct player *p, uint32_t step)
{
	s64 moved = 0;
	int err = flush(p);

	if (!err && p->is_vgmem)
		moved = vg_gpu_return_once(vg_host_gpu(p->h));
	if (!err && moved >= 0 && p->cfg->mem)
		sample_mem(p, step);
	return err ? err : moved < 0 ? (int)moved : 0;
}

static void collect(struct player *p)
{
	struct pl_stats *st = &p->res->st;
	struct vg_model_gpu_stats ms;
	struct vg_gpu_stats gs;
	uint32_t i;

	vg_host_model_stats(p->h, &ms);
	st->pcie_copy_bytes = ms.bytes_to_vram + ms.bytes_to_host;
	st->model_ns = ms.model_ns;
	st->pcie_access_bytes = p->pcie_access_gone;
	for (i = 0; i < p->t->nr_vms; i++) {
		struct vg_sim_cost c;

		if (!p->v[i].live)
			continue;
		vg_host_guest_cost(p->v[i].g, &c);
		st->pcie_access_bytes += c.bytes_host;
	}
	vg_gpu_get_stats(vg_host_gpu(p->h), &gs);
	st->relocations = gs.relocations;
	memcpy(st->suspend_hist, gs.suspend_hist, sizeof(st->suspend_hist));
	memcpy(st->stall_hist, gs.stall_hist, sizeof(st->stall_hist));
	for (i = 0; i < p->t->nr_vms; i++)
		if (p->res->vm[i].oom) {
			p->res->oom += p->res->vm[i].oom;
			p->res->oom_profile += p->res->vm[i].oom_profile;
			p->res->oom_vms++;
		}
}

int pl_result_init(struct pl_result *res, const struct trace *t)
{
	uint32_t i, k;

	memset(res, 0, sizeof(*res));
	res->nr_vms = t->nr_vms;
	res->vm = calloc(t->nr_vms, sizeof(*res->vm));
	if (!res->vm)
		return -ENOMEM;
	for (i = 0; i < t->nr_vms; i++) {
		uint32_t n = t->vms[i].nr_iters ? t->vms[i].nr_iters : 1;

		res->vm[i].iter_ns = malloc(n * sizeof(uint64_t));
		if (!res->vm[i].iter_ns)
			return -ENOMEM;
		for (k = 0; k < n; k++)
			res->vm[i].iter_ns[k] = PL_NO_SAMPLE;
	}
	return 0;
}

int pl_run(struct vs_ctx *ctx, const struct trace *t, const struct pl_cfg *cfg,
	   struct pl_result *res, void (*progress)(void *arg, double frac),
	   void *arg)
{
	struct player p = { .ctx = ctx, .t = t, .cfg = cfg, .res = res };
	struct vg_host_config hc;
	uint64_t vm_steps = 0;
	uint32_t i, step = 0;
	enum or_evict ev;
	int err;

	/* The oracle is computed from the trace, not played on a host. */
	err = or_spec_parse(cfg->model, &ev);
	if (err != -ENOENT) {
		if (!err)
			err = or_play(t, cfg, res);
		if (!err && progress)
			progress(arg, 1.0);
		return err;
	}
	err = pl_result_init(res, t);
	if (err)
		goto out_res;
	p.v = calloc(t->nr_vms, sizeof(*p.v));
	if (!p.v) {
		err = -ENOMEM;
		goto out_res;
	}
	memset(&hc, 0, sizeof(hc));
	hc.sim.vram_size = cfg->vram;
	if (cfg->bw_scale > 1) {
		hc.sim.vram_bw = VG_SIM_VRAM_BW_DEFAULT / cfg->bw_scale;
		hc.sim.pcie_bw = VG_SIM_PCIE_BW_DEFAULT / cfg->bw_scale;
	}
	hc.gpu.name = ctx->sc->name;
	hc.gpu.chunk_size = cfg->chunk_size;
	hc.gpu.seed = cfg->seed;
	hc.gpu.no_return_worker = true;
	hc.model = cfg->model;
	err = vg_host_create(&hc, &p.h);
	if (err) {
		fprintf(stderr, "vgmem-sim: %s: cannot create a host with model "
			"'%s' and %llu bytes of VRAM: %s\n", ctx->sc->name,
			cfg->model, (unsigned long long)cfg->vram,
			strerror(-err));
		goto out_free;
	}
	p.is_vgmem = vg_host_model(p.h)->kind == VG_MODEL_VGMEM;

	for (i = 0; i < t->nr_ev && !err; i++) {
		const struct tr_event *e = &t->ev[i];

		while (step < e->step && !err) {
			err = tick(&p, step);
			vm_steps += p.running;
			step++;
			if (progress)
				progress(arg, (double)step / t->steps);
		}
		if (!err) {
			err = play_event(&p, e);
			if (err)
				fprintf(stderr, "vgmem-sim: %s: %s of %s (bo %u, "
					"%llu bytes) failed: %s\n", cfg->model,
					tr_op_name((enum tr_op)e->op),
					t->vms[e->vm].name, e->bo,
					(unsigned long long)e->bytes,
					strerror(-err));
		}
	}
	while (step < t->steps && !err) {
		err = tick(&p, step);
		vm_steps += p.running;
		step++;
	}
	if (!err)
		err = flush(&p);
	if (err)
		fprintf(stderr, "vgmem-sim: %s: model %s failed at step %u: %s\n",
			ctx->sc->name, cfg->model, step, strerror(-err));
	res->vms_avg = (double)vm_steps / t->steps;
	collect(&p);
	for (i = 0; i < t->nr_vms; i++)
		vm_stop(&p, (uint16_t)i);
	res->check = vg_gpu_check(vg_host_gpu(p.h));
	vg_host_destroy(p.h);
out_free:
	free(p.v);
out_res:
	if (err)
		pl_result_free(res);
	return err;
}

void pl_result_free(struct pl_result *r)
{
	uint32_t i;

	if (r->vm)
		for (i = 0; i < r->nr_vms; i++)
			free(r->vm[i].iter_ns);
	free(r->vm);
	memset(r, 0, sizeof(*r));
}

int pl_model_check(const char *spec)
{
	struct vg_model_params mp;
	enum or_evict ev;

	return or_spec_parse(spec, &ev) && vg_model_parse(spec, &mp) ? -EINVAL : 0;
}

int pl_parse_models(const char *list, char (*specs)[PL_SPEC_LEN], uint32_t max,
		    uint32_t *nr)
{
	static const char *const oracles[] = { "oracle", "oracle:evict=weighted" };
	char buf[512], *tok, *save = NULL;
	uint32_t i;

	*nr = 0;
	if (!strcmp(list, "all")) {
		for (i = 0; vg_model_runs[i] && *nr < max; i++)
			snprintf(specs[(*nr)++], PL_SPEC_LEN, "%s", vg_model_runs[i]);
		for (i = 0; i < 2 && *nr < max; i++)
			snprintf(specs[(*nr)++], PL_SPEC_LEN, "%s", oracles[i]);
		return 0;
	}
	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		/* key=value after a comma continues the previous spec. */
		if (strchr(tok, '=') && !strchr(tok, ':') && *nr) {
			char *prev = specs[*nr - 1];

			if (strlen(prev) + strlen(tok) + 2 > PL_SPEC_LEN)
				return -EINVAL;
			strcat(prev, ",");
			strcat(prev, tok);
			continue;
		}
		if (*nr == max || strlen(tok) >= PL_SPEC_LEN)
			return -EINVAL;
		snprintf(specs[(*nr)++], PL_SPEC_LEN, "%s", tok);
	}
	for (i = 0; i < *nr; i++)
		if (pl_model_check(specs[i]))
			return -EINVAL;
	return *nr ? 0 : -EINVAL;
}
