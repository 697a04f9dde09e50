// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * replay: real inference traffic. A request trace in the three-column
 * format of the Azure LLM inference traces (reqtrace.h) is dealt to
 * inference VMs (serving.h: model weights read by every decode step, a KV
 * cache in vLLM-style blocks that grows per generated token and is freed
 * with the request), scaled in time and bytes so that every model runs in
 * seconds, and played on each model like compare's tenants (play.c), the
 * oracle computed from the same load. Per model: failed requests, time to
 * first token and per-token slowdown percentiles, PCIe bytes, and the VMs
 * one GPU holds at a p99 slowdown (the cap K bisected, as cloud-day does).
 */
#include "replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static struct rp_opts rp = {
	.sv = {
		.nr_vms = 16,
		/* Llama-2-7B: 6,738,415,616 parameters in fp16. */
		.weights = 13476831232ull,
		/* 2 (K and V) x 32 layers x 4096 hidden x 2 bytes. */
		.kv_token = 512ull << 10,
		.block_tokens = 512,
		.step_tokens = 512,
		.token_us = 30000,
		.scale = 65536,
		.profile = 20ull << 30,
		.limit_pct = 200,
		.bo_size = 256ull << 10,
	},
	.gpu = 80ull << 30,
	.slo = 1.2,
	.sweep = 1,
	.models = "all",
};

static struct vs_param replay_params[] = {
	{ "trace", VS_STR, &rp.trace, "the request trace (CSV: TIMESTAMP,"
	  "ContextTokens,GeneratedTokens); required" },
	{ "vms", VS_U32, &rp.sv.nr_vms, "inference VMs the requests are dealt to" },
	{ "weights", VS_SIZE, &rp.sv.weights, "real bytes of the model's weights "
	  "(default Llama-2-7B in fp16)" },
	{ "kv-token", VS_SIZE, &rp.sv.kv_token, "real bytes of KV cache per token" },
	{ "block-tokens", VS_U32, &rp.sv.block_tokens, "tokens per KV block" },
	{ "step-tokens", VS_U32, &rp.sv.step_tokens, "tokens a request generates "
	  "per step (decode iterations a step stands for)" },
	{ "token-us", VS_U32, &rp.sv.token_us, "real time of one decode "
	  "iteration, microseconds" },
	{ "scale", VS_SIZE, &rp.sv.scale, "real bytes per simulated byte" },
	{ "profile", VS_SIZE, &rp.sv.profile, "real bytes: each VM's profile" },
	{ "limit-pct", VS_U32, &rp.sv.limit_pct, "what a VM may allocate, % of "
	  "its profile" },
	{ "gpu", VS_SIZE, &rp.gpu, "real bytes of the GPU's VRAM" },
	{ "bo-size", VS_SIZE, &rp.sv.bo_size, "simulated bytes: the weights' BOs "
	  "at most" },
	{ "slo", VS_DOUBLE, &rp.slo, "p99 slowdown VMs per GPU are taken at" },
	{ "sweep", VS_U32, &rp.sweep, "1: bisect the VMs per GPU; 0: only the "
	  "run with every VM" },
	{ "models", VS_STR, &rp.models, "'all' or a comma list of model specs "
	  "(vgmem-sim --help lists them)" },
	{ "bw-scale", VS_U32, &rp.bw_scale, "divide the cost model's bandwidths "
	  "by this (0: by --scale, so a read lasts as long as the real one)" },
	{ "tiny", VS_U32, &rp.tiny, "1: a small preset for tests (4 VMs, "
	  "coarser steps; overrides those options)" },
	{ NULL, 0, NULL, NULL },
};

static void apply_tiny(void)
{
	rp.sv.nr_vms = 4;
	rp.sv.step_tokens = 1024;
}

static int parse_models(char (*specs)[PL_SPEC_LEN], uint32_t *nr)
{
	return pl_parse_models(rp.models, specs, RP_MAX_MODELS, nr);
}

static int replay_check(struct vs_ctx *ctx)
{
	char specs[RP_MAX_MODELS][PL_SPEC_LEN];
	uint32_t nr;

	if (!rp.trace) {
		fprintf(stderr, "vgmem-sim: replay: --trace FILE is required (the "
			"Azure LLM trace is tests/data/traces/"
			"azure-llm-2023-conv.csv)\n");
		return -EINVAL;
	}
	if (ctx->c.vram) {
		fprintf(stderr, "vgmem-sim: replay: give the GPU's real VRAM with "
			"--gpu (it is scaled with --scale), not --vram\n");
		return -EINVAL;
	}
	if (rp.tiny > 1 || rp.sweep > 1) {
		fprintf(stderr, "vgmem-sim: replay: --tiny and --sweep are 0 or 1\n");
		return -EINVAL;
	}
	if (rp.tiny)
		apply_tiny();
	if (!(rp.slo >= 1) || !rp.sv.scale || rp.sv.scale > UINT32_MAX ||
	    rp.gpu / rp.sv.scale < SV_PAGE) {
		fprintf(stderr, "vgmem-sim: replay: need slo >= 1, a scale from 1 "
			"to 2^32 and a GPU of at least a page once scaled\n");
		return -EINVAL;
	}
	if (parse_models(specs, &nr)) {
		fprintf(stderr, "vgmem-sim: replay: bad --models '%s'\n", rp.models);
		return -EINVAL;
	}
	return 0;
}

static void on_progress(void *arg, double frac)
{
	struct rp_state *s = arg;

	vs_progress(s->ctx, (s->done + frac) / s->total, "%s", s->now);
}

static int play(struct rp_state *s, const char *spec, uint64_t vram,
		uint32_t k, uint64_t *mem, struct pl_result *r)
{
	struct pl_cfg cfg = {
		.model = spec, .vram = vram, .chunk_size = s->chunk,
		.seed = s->ctx->c.seed, .max_vms = k, .base = &s->base,
		.bw_scale = rp.bw_scale ? rp.bw_scale : (uint32_t)rp.sv.scale,
		.mem = mem,
	};
	int err;

	snprintf(s->now, sizeof(s->now), "%s K=%u", spec, k ? k : s->l.t.nr_vms);
	err = pl_run(s->ctx, &s->l.t, &cfg, r, on_progress, s);
	s->done++;
	if (!err && r->check) {
		fprintf(stderr, "vgmem-sim: replay: %s: the core's accounting "
			"check failed\n", spec);
		pl_result_free(r);
		err = -EIO;
	}
	return err;
}

/* One point of a model: played, measured, judged. */
static int point(struct rp_state *s, struct rp_model *m, uint32_t k)
{
	struct rp_point *p = &m->pt[m->nr];
	int err;

	p->k = k;
	err = play(s, m->spec, s->vram, k == s->l.t.nr_vms ? 0 : k,
		   m->nr ? NULL : m->mem, &p->r);
	if (err)
		return err;
	m->nr++;
	err = ss_compute(&s->l, &p->r, &s->base, &p->m);
	if (err)
		return err;
	p->pass = !p->m.failed && p->m.p99 <= s->o->slo;
	if (p->pass && p->r.vms_avg > m->density) {
		m->density = p->r.vms_avg;
		m->density_k = k;
	}
	return 0;
}

/*
 * The main run offers every VM; if it fails the SLO, K is bisected below
 * it (more VMs only add pressure: pass/fail is monotonic in K).
 */
static int sweep(struct rp_state *s, struct rp_model *m)
{
	uint32_t lo = 0, hi = s->l.t.nr_vms, mid;
	int err;

	m->mem = calloc((size_t)s->l.t.steps * s->l.t.nr_vms * 2, sizeof(uint64_t));
	if (!m->mem)
		return -ENOMEM;
	err = point(s, m, s->l.t.nr_vms);
	if (err == -EINVAL || err == -ENOENT) {
		fprintf(stderr, "vgmem-sim: replay: model %s did not run (%s)\n",
			m->spec, strerror(-err));
		return 0;
	}
	if (err) {
		m->failed = err;	/* in the table; the others still run */
		return 0;
	}
	m->ok = true;
	if (m->pt[0].pass || !rp.sweep)
		return 0;
	while (hi - lo > 1 && m->nr < RP_MAX_POINTS) {
		mid = lo + (hi - lo) / 2;
		err = point(s, m, mid);
		if (err) {
			m->failed = err;
			return 0;
		}
		if (m->pt[m->nr - 1].pass)
			lo = mid;
		else
			hi = mid;
	}
	return 0;
}

static void vs_scale_info(struct rp_state *s)
{
	const struct sv_params *p = &rp.sv;

	vs_info(s->ctx, "replay: %u requests over %.0f s dealt to %u VMs; "
		"scale: 1 simulated byte = %llu real bytes, 1 step = %u tokens "
		"x %.1f ms = %.2f s of the trace (%u steps)\n", s->l.nr_req,
		(double)s->rq.span_ns / 1e9, p->nr_vms,
		(unsigned long long)p->scale, p->step_tokens, p->token_us / 1e3,
		s->l.step_s, s->l.t.steps);
	vs_info(s->ctx, "replay: GPU %.1f GiB = %llu KiB (+ %llu KiB scratch "
		"per VM), profile %.1f GiB = %llu KiB, weights %.2f GiB = %llu "
		"KiB, KV %llu KiB/token, block %u tokens = %llu KiB\n",
		(double)rp.gpu / (1 << 30), (unsigned long long)(rp.gpu / p->scale >> 10),
		(unsigned long long)(PL_SCRATCH >> 10),
		(double)p->profile / (1 << 30),
		(unsigned long long)(s->l.sim_profile >> 10),
		(double)p->weights / (1 << 30),
		(unsigned long long)(s->l.sim_weights >> 10),
		(unsigned long long)(p->kv_token >> 10), p->block_tokens,
		(unsigned long long)(s->l.sim_block >> 10));
}

static void free_models(struct rp_state *s)
{
	uint32_t mi, k;

	for (mi = 0; s->mod && mi < s->nr_models; mi++) {
		for (k = 0; k < s->mod[mi].nr; k++)
			pl_result_free(&s->mod[mi].pt[k].r);
		free(s->mod[mi].mem);
	}
	free(s->mod);
}

static int replay_run(struct vs_ctx *ctx)
{
	char (*specs)[PL_SPEC_LEN] = calloc(RP_MAX_MODELS, PL_SPEC_LEN);
	struct rp_state *s = calloc(1, sizeof(*s));
	char err_msg[256];
	uint32_t mi, k, per;
	uint64_t bv;
	int err;

	if (!s || !specs) {
		err = -ENOMEM;
		goto out;
	}
	s->ctx = ctx;
	s->o = &rp;
	err = parse_models(specs, &s->nr_models);
	if (err)
		goto out;
	err = rq_load(rp.trace, &s->rq, err_msg, sizeof(err_msg));
	if (!err)
		err = sv_build(&s->rq, &rp.sv, &s->l, err_msg, sizeof(err_msg));
	if (err) {
		fprintf(stderr, "vgmem-sim: replay: %s\n", err_msg);
		goto out;
	}
	s->mod = calloc(s->nr_models, sizeof(*s->mod));
	if (!s->mod) {
		err = -ENOMEM;
		goto out_load;
	}
	s->chunk = ctx->c.chunk_size ? ctx->c.chunk_size : VG_CHUNK_MIN;
	/* The harness's scratch BO of each VM comes on top of the GPU's. */
	s->vram = (rp.gpu / rp.sv.scale & ~(SV_PAGE - 1)) +
		  s->l.t.nr_vms * PL_SCRATCH;
	vs_scale_info(s);
	/* Progress: the main run and at most ceil(log2(VMs)) bisection steps. */
	for (k = s->l.t.nr_vms, per = 1; rp.sweep && k > 1; k = (k + 1) / 2)
		per++;
	s->total = 1 + s->nr_models * per;
	/* The baseline: room for everything, with a chunk of slack per VM. */
	bv = s->l.t.peak_total + 2ull * s->l.t.nr_vms * (s->chunk + PL_SCRATCH);
	bv = (bv + s->chunk - 1) / s->chunk * s->chunk;
	err = play(s, "vgmem:policy=random", bv, 0, NULL, &s->base);
	if (err)
		goto out_load;
	for (mi = 0; mi < s->nr_models && !err; mi++) {
		memcpy(s->mod[mi].spec, specs[mi], PL_SPEC_LEN);
		err = sweep(s, &s->mod[mi]);
	}
	vs_progress(ctx, 1.0, "done");
	if (!err)
		err = rp_write(s);
	for (mi = 0; mi < s->nr_models && !err; mi++)
		err = s->mod[mi].failed;
	pl_result_free(&s->base);
out_load:
	free_models(s);
	sv_free(&s->l);
	rq_free(&s->rq);
out:
	free(s);
	free(specs);
	return err;
}

const struct vs_scenario vs_replay = {
	.name = "replay",
	.summary = "real inference traffic from a request trace on every model",
	.description =
	"Plays a request trace (CSV: TIMESTAMP,ContextTokens,GeneratedTokens, the\n"
	"format of the Azure LLM inference traces; tests/data/traces/ holds the\n"
	"2023 conversation trace) on inference VMs: requests dealt round robin to\n"
	"--vms VMs; each VM holds the model's weights (--weights, read by every\n"
	"step) and a KV cache of --kv-token bytes per token in blocks of\n"
	"--block-tokens tokens, grown as tokens are generated and freed when the\n"
	"request ends. A step stands for --step-tokens decode iterations of\n"
	"--token-us each; real bytes are divided by --scale (both printed). The\n"
	"GPU has --gpu of VRAM, each VM a --profile (static's partition). Every\n"
	"model and the oracle run the same load; a request's time to first token\n"
	"and per-token slowdown are its steps' simulated device time over the\n"
	"same steps with unlimited VRAM. VMs per GPU: the most VMs (K) the GPU\n"
	"can hold with no failed request and both p99s at most --slo, K\n"
	"bisected. Malformed rows are errors naming FILE:LINE.",
	.outputs =
	"  replay.md                per-model table, per-VM table, goals\n"
	"  replay.csv               one row per model and K tried\n"
	"  replay_vms.csv           per model and VM (every VM offered)\n"
	"  replay_mem.csv           per step and VM: KV demand, held, resident\n"
	"                           and relocated bytes (real), vgmem cold\n"
	"  replay_vmN.svg           VM N's resident and relocated memory over\n"
	"                           time against its KV demand\n"
	"  summary.json             parameters, scale, results, goals",
	.uses_policy = false,
	.params = replay_params,
	.check = replay_check,
	.run = replay_run,
};
