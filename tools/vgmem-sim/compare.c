// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * compare: one trace of tenants (trace.h) under every memory model
 * (host-module/user/models/models.h) and once with unlimited VRAM, the
 * baseline. Two VRAM sizes: "roomy" (everything the tenants hold fits, and
 * the static partitions too) and "pressure" (--pressure-pct of the peak the
 * tenants hold at once, or --vram). For each run and VM: median and p99 of
 * the per-iteration slowdowns against the baseline, in simulated device
 * time (the cost model, so a run repeats exactly), out-of-memory failures,
 * Jain's index, PCIe traffic, VMs admitted; for vgmem the core's suspension
 * and allocation-stall histograms (wall time: not part of the repeatable
 * tables).
 */
#include "metrics.h"
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


#define CP_MAX_MODELS	16
#define CP_SETTINGS	2

static const char *const setting_name[CP_SETTINGS] = { "roomy", "pressure" };

static struct {
	uint32_t tiny;
	uint32_t steps;
	uint32_t nr[TR_KIND_NR];
	uint64_t entitlement;
	uint32_t limit_pct;
	uint64_t bo_size;
	uint32_t pressure_pct;
	const char *models;
	uint32_t bw_scale;
} cp = {
	.steps = 40,
	.nr = { [TR_TRAIN] = 2, [TR_INFER] = 2, [TR_LEAK] = 1, [TR_IDLE] = 1 },
	.entitlement = 8ull << 20,
	.limit_pct = 200,
	.bo_size = 1ull << 20,
	.pressure_pct = 60,
	.models = "all",
	.bw_scale = 64,
};

static struct vs_param compare_params[] = {
	{ "tiny", VS_U32, &cp.tiny, "1: a small preset for tests (7 VMs, 4M "
	  "profiles, 12 steps; overrides those options)" },
	{ "steps", VS_U32, &cp.steps, "steps of the trace" },
	{ "train", VS_U32, &cp.nr[TR_TRAIN], "training-like VMs" },
	{ "infer", VS_U32, &cp.nr[TR_INFER], "inference servers" },
	{ "leak", VS_U32, &cp.nr[TR_LEAK], "leaky allocators" },
	{ "idle", VS_U32, &cp.nr[TR_IDLE], "idle VMs holding memory" },
	{ "entitlement", VS_SIZE, &cp.entitlement, "profile of each VM" },
	{ "limit-pct", VS_U32, &cp.limit_pct,
	  "what a VM may allocate, percent of its profile" },
	{ "bo-size", VS_SIZE, &cp.bo_size, "BO size of the working sets" },
	{ "pressure-pct", VS_U32, &cp.pressure_pct,
	  "pressure VRAM, percent of the peak the VMs hold" },
	{ "models", VS_STR, &cp.models, "'all' or a comma list of model specs "
	  "(vgmem-sim --help lists them)" },
	{ "bw-scale", VS_U32, &cp.bw_scale, "divide the cost model's bandwidths by "
	  "this (docs/vgmem-sim.md)" },
	{ NULL, 0, NULL, NULL },
};

struct cp_run {
	char spec[PL_SPEC_LEN];
	int setting;
	uint64_t vram;
	bool ok;		/* the model ran to the end */
	int failed;		/* -errno: the run failed (0: ran, or not built) */
	struct pl_result r;
	struct mt_run m;
};

struct cp_state {
	struct vs_ctx *ctx;
	struct trace t;
	struct pl_result base;
	uint64_t base_vram, vram[CP_SETTINGS], chunk;
	uint32_t nr_models;
	char specs[CP_MAX_MODELS][PL_SPEC_LEN];
	struct cp_run runs[CP_SETTINGS][CP_MAX_MODELS];
	uint32_t done, total;
	const char *now;
};

static uint64_t cp_round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int parse_models(struct cp_state *s)
{
	return pl_parse_models(cp.models, s->specs, CP_MAX_MODELS, &s->nr_models);
}

static void apply_tiny(void)
{
	cp.steps = 12;
	cp.nr[TR_TRAIN] = 2;
	cp.nr[TR_INFER] = 2;
	cp.nr[TR_LEAK] = 2;
	cp.nr[TR_IDLE] = 1;
	cp.entitlement = 4ull << 20;
	cp.bo_size = 512ull << 10;
}

static int compare_check(struct vs_ctx *ctx)
{
	struct cp_state s;

	(void)ctx;
	if (cp.tiny > 1) {
		fprintf(stderr, "vgmem-sim: compare: --tiny is 0 or 1\n");
		return -EINVAL;
	}
	if (cp.tiny)
		apply_tiny();
	if (cp.steps < 3 || cp.pressure_pct < 1 || cp.pressure_pct > 100 ||
	    cp.limit_pct < 100 || cp.limit_pct > 1000 ||
	    cp.entitlement % VGMEM_PAGE_SIZE || cp.bo_size % VGMEM_PAGE_SIZE ||
	    cp.nr[0] + cp.nr[1] + cp.nr[2] + cp.nr[3] == 0 ||
	    cp.nr[0] + cp.nr[1] + cp.nr[2] + cp.nr[3] > 64) {
		fprintf(stderr, "vgmem-sim: compare: need steps >= 3, 1..64 VMs, "
			"pressure-pct 1..100, limit-pct 100..1000, sizes multiples "
			"of 4K\n");
		return -EINVAL;
	}
	if (parse_models(&s)) {
		fprintf(stderr, "vgmem-sim: compare: bad --models '%s' (all, or "
			"specs like vgmem:policy=cold,static,paging:gran=64k,oracle)\n",
			cp.models);
		return -EINVAL;
	}
	return 0;
}

static void on_progress(void *arg, double frac)
{
	struct cp_state *s = arg;

	vs_progress(s->ctx, (s->done + frac) / s->total, "%s", s->now);
}

static int run_one(struct cp_state *s, struct cp_run *run)
{
	struct pl_cfg cfg = {
		.model = run->spec, .vram = run->vram, .chunk_size = s->chunk,
		.seed = s->ctx->c.seed, .bw_scale = cp.bw_scale,
		.base = &s->base,
	};
	char now[160];
	int err;

	snprintf(now, sizeof(now), "%s %s vram=%.0fMiB",
		 run->setting < 0 ? "baseline" : setting_name[run->setting],
		 run->spec, vs_mib(run->vram));
	s->now = now;
	err = pl_run(s->ctx, &s->t, &cfg, &run->r, on_progress, s);
	s->done++;
	s->now = "";
	if (err)
		return err;
	run->ok = true;
	return mt_compute(&s->t, &run->r, &s->base, &run->m);
}

/* ---- outputs ---------------------------------------------------------- */

static uint64_t pcie(const struct cp_run *r)
{
	return r->r.st.pcie_copy_bytes + r->r.st.pcie_access_bytes;
}

/* The run of exactly this spec in setting st, if it ran. */
static const struct cp_run *find_spec(const struct cp_state *s, int st,
				      const char *spec)
{
	uint32_t mi;

	for (mi = 0; mi < s->nr_models; mi++)
		if (s->runs[st][mi].ok && !strcmp(s->runs[st][mi].spec, spec))
			return &s->runs[st][mi];
	return NULL;
}

/* Every model is measured against MIN's run ("oracle"), when it ran. */
static const struct cp_run *oracle_of(const struct cp_state *s, int st)
{
	return find_spec(s, st, "oracle");
}

/* r's PCIe bytes, mean and p99 slowdown over the oracle's, as text. */
static void vs_oracle(const struct cp_state *s, int st, const struct cp_run *r,
		      char out[3][16])
{
	const struct cp_run *o = oracle_of(s, st);
	int k;

	for (k = 0; k < 3 && !o; k++)
		snprintf(out[k], 16, "%s", "");
	if (!o)
		return;
	mt_ratio_str((double)pcie(r), (double)pcie(o), out[0], 16);
	mt_ratio_str(r->m.mean, o->m.mean, out[1], 16);
	mt_ratio_str(r->m.p99, o->m.p99, out[2], 16);
}

static int write_csv(struct cp_state *s)
{
	FILE *f = vs_open(s->ctx, "compare.csv"), *g;
	uint32_t st, mi, v;

	if (!f)
		return -EIO;
	g = vs_open(s->ctx, "compare_vms.csv");
	if (!g) {
		fclose(f);
		return -EIO;
	}
	fprintf(f, "setting,model,vram,vms,admitted,refused,oom,oom_vms,"
		"iterations,median,p99,min,jain,worst_vm,worst_p99,"
		"pcie_copy_bytes,pcie_access_bytes,model_ns,stall_ns,relocations,"
		"mean,pcie_vs_oracle,mean_vs_oracle,p99_vs_oracle\n");
	fprintf(g, "setting,model,vm,kind,entitlement,admitted,oom,iters_ok,"
		"iters_failed,median,p99,mean,device_ns,baseline_ns\n");
	for (st = 0; st < CP_SETTINGS; st++) {
		for (mi = 0; mi < s->nr_models; mi++) {
			const struct cp_run *r = &s->runs[st][mi];
			char ro[3][16];

			if (!r->ok) {
				fprintf(f, "%s,%s,%llu,%u,,,,,,,,,,,,,,,,,,,,\n",
					setting_name[st], r->spec,
					(unsigned long long)r->vram, s->t.nr_vms);
				continue;
			}
			vs_oracle(s, (int)st, r, ro);
			fprintf(f, "%s,%s,%llu,%u,%u,%u,%u,%u,%u,%.4f,%.4f,%.4f,"
				"%.4f,%s,%.4f,%llu,%llu,%llu,%llu,%llu,%.4f,%s,%s,"
				"%s\n",
				setting_name[st], r->spec,
				(unsigned long long)r->vram, s->t.nr_vms,
				r->r.admitted, r->r.refused, r->r.oom,
				r->r.oom_vms, r->m.n, r->m.median, r->m.p99,
				r->m.min, r->m.jain,
				r->m.worst_vm >= 0 ? s->t.vms[r->m.worst_vm].name : "",
				r->m.worst_p99,
				(unsigned long long)r->r.st.pcie_copy_bytes,
				(unsigned long long)r->r.st.pcie_access_bytes,
				(unsigned long long)r->r.st.model_ns,
				(unsigned long long)r->r.st.stall_ns,
				(unsigned long long)r->r.st.relocations, r->m.mean,
				strcmp(ro[0], "-") ? ro[0] : "",
				strcmp(ro[1], "-") ? ro[1] : "",
				strcmp(ro[2], "-") ? ro[2] : "");
			for (v = 0; v < s->t.nr_vms; v++) {
				const struct pl_vm_result *pv = &r->r.vm[v];
				const struct mt_vm *mv = &r->m.vm[v];

				fprintf(g, "%s,%s,%s,%s,%llu,%d,%u,%u,%u,%.4f,%.4f,"
					"%.4f,%llu,%llu\n", setting_name[st], r->spec,
					s->t.vms[v].name,
					tr_kind_name(s->t.vms[v].kind),
					(unsigned long long)s->t.vms[v].entitlement,
					pv->admitted, pv->oom, pv->iters_ok,
					pv->iters_failed, mv->median, mv->p99,
					mv->mean, (unsigned long long)pv->total_ns,
					(unsigned long long)s->base.vm[v].total_ns);
			}
		}
	}
	fclose(g);
	return fclose(f) ? -EIO : 0;
}

/*
 * The pressure setting in a few lines on stdout, what `make run` shows: per
 * model the VMs it admitted, the allocations that failed, the slowdowns
 * and what it moved over PCIe. compare.md has the rest.
 */
static void story(const struct cp_state *s)
{
	const uint32_t st = 1;
	uint32_t mi;

	printf("\nunder pressure: %llu MiB of VRAM for %u VMs that hold up to %.1f MiB"
	       " at once\n",
	       (unsigned long long)(s->vram[st] >> 20), s->t.nr_vms,
	       (double)s->t.peak_total / (1 << 20));
	printf("%-22s %9s %13s %9s %9s %10s\n", "model", "admitted",
	       "failed allocs", "mean slow", "p99 slow", "moved MiB");
	for (mi = 0; mi < s->nr_models; mi++) {
		const struct cp_run *r = &s->runs[st][mi];

		if (!r->ok) {
			printf("%-22s (did not run)\n", r->spec);
			continue;
		}
		printf("%-22s %5u/%-3u %13u %8.2fx %8.2fx %10.1f\n", r->spec,
		       r->r.admitted, s->t.nr_vms, r->r.oom, r->m.mean, r->m.p99,
		       (double)(r->r.st.pcie_copy_bytes + r->r.st.pcie_access_bytes) /
		       (1 << 20));
	}
	printf("(slowdown: simulated device time over the same work with unlimited"
	       " VRAM; vgmem:policy=random is GPUswap's choice of victim chunks)\n");
}

/* Wall-time histograms of vgmem's core: kept apart, they do not repeat. */
static int write_hist(struct cp_state *s)
{
	FILE *f = vs_open(s->ctx, "compare_vgmem_hist.csv");
	struct svg_plot p[2];
	char path[4200];
	uint32_t mi, b, st = 1;
	int err = 0, k;

	if (!f)
		return -EIO;
	fprintf(f, "setting,model,histogram,bucket_ge_us,count\n");
	svg_init(&p[0], "vgmem: victim suspension under pressure (core histogram)",
		 "bucket i: [2^i, 2^(i+1)) us of wall time", "suspensions");
	svg_init(&p[1], "vgmem: allocation stall under pressure (core histogram)",
		 "bucket i: [2^i, 2^(i+1)) us of wall time", "allocations");
	for (mi = 0; mi < s->nr_models; mi++) {
		const struct cp_run *r = &s->runs[st][mi];
		int sr[2];

		if (!r->ok || strncmp(r->spec, "vgmem", 5))
			continue;
		for (k = 0; k < 2; k++)
			sr[k] = svg_add_series(&p[k], r->spec, SVG_STEP);
		for (b = 0; b < VGMEM_HIST_BUCKETS; b++) {
			fprintf(f, "%s,%s,suspend,%llu,%llu\n", setting_name[st],
				r->spec, b ? 1ull << b : 0ull,
				(unsigned long long)r->r.st.suspend_hist[b]);
			fprintf(f, "%s,%s,stall,%llu,%llu\n", setting_name[st],
				r->spec, b ? 1ull << b : 0ull,
				(unsigned long long)r->r.st.stall_hist[b]);
			svg_add_point(&p[0], sr[0], b, (double)r->r.st.suspend_hist[b]);
			svg_add_point(&p[1], sr[1], b, (double)r->r.st.stall_hist[b]);
		}
	}
	fclose(f);
	p[0].y_from_zero = p[1].y_from_zero = true;
	if (p[0].nr_series) {
		err = svg_write(&p[0], vs_path(s->ctx, "compare_suspend.svg", path,
						sizeof(path)));
		if (!err)
			err = svg_write(&p[1], vs_path(s->ctx, "compare_stall.svg",
							path, sizeof(path)));
	}
	svg_free(&p[0]);
	svg_free(&p[1]);
	return err;
}

/* Per setting: p99 per VM (a series per model), and the pooled CDF. */
static int write_svgs(struct cp_state *s)
{
	char title[160], file[64], path[4200];
	struct svg_plot p, c;
	uint32_t st, mi, v, k;
	int err = 0, sr;

	for (st = 0; st < CP_SETTINGS && !err; st++) {
		snprintf(title, sizeof(title), "p99 slowdown per VM, %s (%.0f MiB VRAM)",
			 setting_name[st], vs_mib(s->vram[st]));
		svg_init(&p, title, "VM (as in compare.md)",
			 "p99 slowdown vs unlimited VRAM");
		/* Grouped bars per VM, the oracle's mark over them. */
		{
			const char *names[SVG_MAX_CATS];
			double lo = INFINITY, hi = 0;

			for (v = 0; v < s->t.nr_vms && v < SVG_MAX_CATS; v++)
				names[v] = s->t.vms[v].name;
			svg_set_categories(&p, names, v);
			for (mi = 0; mi < s->nr_models; mi++)
				for (v = 0; v < s->t.nr_vms; v++)
					if (s->runs[st][mi].ok && s->runs[st][mi].m.vm[v].n) {
						lo = fmin(lo, s->runs[st][mi].m.vm[v].p99);
						hi = fmax(hi, s->runs[st][mi].m.vm[v].p99);
					}
			/* A log axis where the values span a decade or more. */
			p.y_log = lo > 0 && hi >= 10 * lo;
		}
		snprintf(title, sizeof(title), "Iteration slowdowns, all VMs, %s",
			 setting_name[st]);
		svg_init(&c, title, "slowdown vs unlimited VRAM",
			 "fraction of iterations at or below");
		p.y_from_zero = c.y_from_zero = true;
		for (mi = 0; mi < s->nr_models; mi++) {
			const struct cp_run *r = &s->runs[st][mi];
			double *all;
			uint32_t n = 0;

			if (!r->ok)
				continue;
			sr = svg_add_series(&p, r->spec,
					    strncmp(r->spec, "oracle", 6) ? SVG_BARS :
					    SVG_MARK);
			for (v = 0; v < s->t.nr_vms && v < SVG_MAX_CATS; v++)
				if (r->m.vm[v].n)
					svg_add_point(&p, sr, v, r->m.vm[v].p99);
			/* The CDF, from the per-iteration slowdowns again. */
			all = malloc((r->m.n ? r->m.n : 1) * sizeof(*all));
			if (!all) {
				err = -ENOMEM;
				break;
			}
			for (v = 0; v < s->t.nr_vms; v++)
				for (k = 0; k < s->t.vms[v].nr_iters; k++) {
					uint64_t a = r->r.vm[v].iter_ns[k];
					uint64_t b = s->base.vm[v].iter_ns[k];

					if (a != PL_NO_SAMPLE && b != PL_NO_SAMPLE && b)
						all[n++] = (double)a / b;
				}
			mt_quantile(all, n, 0.5);	/* sorts */
			sr = svg_add_series(&c, r->spec, SVG_STEP);
			for (k = 0; k < n; k++)
				svg_add_point(&c, sr, all[k], (double)(k + 1) / n);
			free(all);
		}
		snprintf(file, sizeof(file), "compare_p99_%s.svg", setting_name[st]);
		if (!err)
			err = svg_write(&p, vs_path(s->ctx, file, path, sizeof(path)));
		snprintf(file, sizeof(file), "compare_cdf_%s.svg", setting_name[st]);
		if (!err)
			err = svg_write(&c, vs_path(s->ctx, file, path, sizeof(path)));
		svg_free(&p);
		svg_free(&c);
	}
	if (err)
		fprintf(stderr, "vgmem-sim: compare: cannot write plots: %s\n",
			strerror(-err));
	return err;
}

static const struct cp_run *find(const struct cp_state *s, int st,
				 const char *prefix)
{
	uint32_t mi;

	for (mi = 0; mi < s->nr_models; mi++)
		if (s->runs[st][mi].ok &&
		    !strncmp(s->runs[st][mi].spec, prefix, strlen(prefix)))
			return &s->runs[st][mi];
	return NULL;
}

static double worst_of(const struct cp_run *r)
{
	return r ? r->m.worst_p99 : 0;
}

static const char *met(bool ok)
{
	return ok ? "met" : "missed";
}

/*
 * Issue 16's goals against the oracle, under pressure: vgmem cold's PCIe
 * bytes at most 1.5x MIN's, its mean slowdown within 1.3x; and how both
 * oracles fare on p99 and Jain. Lines into line[0..), their count back.
 */
static uint32_t oracle_goals(struct cp_state *s, char (*line)[256], json_t *j)
{
	const struct cp_run *o = oracle_of(s, 1);
	const struct cp_run *w = find_spec(s, 1, "oracle:evict=weighted");
	const struct cp_run *c = find_spec(s, 1, "vgmem:policy=cold");
	double rp, rm;

	if (!o || !c) {
		snprintf(line[0], 256, "pressure: vgmem cold against the oracle: "
			 "not measured (both must be in --models)");
		return 1;
	}
	rp = pcie(o) ? (double)pcie(c) / (double)pcie(o) : 0;
	rm = o->m.mean > 0 ? c->m.mean / o->m.mean : 0;
	snprintf(line[0], 256, "pressure: PCIe bytes vgmem cold %.1f MiB, oracle "
		 "%.1f MiB: %.2fx (goal <= 1.5x): %s", vs_mib(pcie(c)),
		 vs_mib(pcie(o)), rp, met(pcie(o) && rp <= 1.5));
	snprintf(line[1], 256, "pressure: mean slowdown vgmem cold %.3f, oracle "
		 "%.3f: %.2fx (goal <= 1.3x): %s", c->m.mean, o->m.mean, rm,
		 met(rm > 0 && rm <= 1.3));
	snprintf(line[2], 256, "pressure: p99 vgmem cold %.3f, oracle %.3f; Jain "
		 "vgmem cold %.3f, oracle %.3f, weighted oracle %.3f (%.1f MiB "
		 "over PCIe)", c->m.p99, o->m.p99, c->m.jain, o->m.jain,
		 w ? w->m.jain : 0, w ? vs_mib(pcie(w)) : 0);
	json_object_set_new(j, "oracle_pcie_bytes", json_integer((json_int_t)pcie(o)));
	json_object_set_new(j, "cold_pcie_bytes", json_integer((json_int_t)pcie(c)));
	json_object_set_new(j, "cold_vs_oracle_pcie", json_real(rp));
	json_object_set_new(j, "oracle_mean", json_real(o->m.mean));
	json_object_set_new(j, "cold_mean", json_real(c->m.mean));
	json_object_set_new(j, "cold_vs_oracle_mean", json_real(rm));
	json_object_set_new(j, "oracle_p99", json_real(o->m.p99));
	json_object_set_new(j, "oracle_jain", json_real(o->m.jain));
	if (w) {
		json_object_set_new(j, "oracle_weighted_jain", json_real(w->m.jain));
		json_object_set_new(j, "oracle_weighted_pcie_bytes",
				    json_integer((json_int_t)pcie(w)));
	}
	return 3;
}

/* The goals from this run, to stdout, compare.md and summary.json. */
static void goals(struct cp_state *s, FILE *md, json_t *j)
{
	const struct cp_run *sw = find(s, 0, "swsched");
	const struct cp_run *pr = find(s, 1, "vgmem:policy=random");
	const struct cp_run *pc = find(s, 1, "vgmem:policy=cold");
	const struct cp_run *ad = find(s, 1, "admission");
	const struct cp_run *pg = find(s, 1, "paging");
	const struct cp_run *ps = find(s, 1, "static");
	uint32_t vgmem_oom = 0, mi, nl;
	double jain_min = 1, vgmem_roomy_worst = 0;
	char line[9][256];

	for (mi = 0; mi < s->nr_models; mi++) {
		const struct cp_run *r = &s->runs[1][mi];
		const struct cp_run *q = &s->runs[0][mi];

		if (r->ok && !strncmp(r->spec, "vgmem", 5)) {
			vgmem_oom += r->r.oom;
			if (r->m.jain < jain_min)
				jain_min = r->m.jain;
		}
		if (q->ok && !strncmp(q->spec, "vgmem", 5) &&
		    q->m.worst_p99 > vgmem_roomy_worst)
			vgmem_roomy_worst = q->m.worst_p99;
	}
	snprintf(line[0], 256, "no pressure: vgmem worst p99 %.4f (goal <= 1.01), "
		 "swsched median %.3f p99 %.3f (its mediation cost)",
		 vgmem_roomy_worst, sw ? sw->m.median : 0, sw ? sw->m.p99 : 0);
	snprintf(line[1], 256, "pressure: vgmem OOM failures %u (goal 0), "
		 "admission %u, static %u (+%u VMs refused)", vgmem_oom,
		 ad ? ad->r.oom : 0, ps ? ps->r.oom : 0, ps ? ps->r.refused : 0);
	snprintf(line[2], 256, "pressure: Jain's index, vgmem cold %.3f "
		 "(goal >= 0.95); lowest vgmem policy %.3f", pc ? pc->m.jain : 0,
		 jain_min);
	snprintf(line[3], 256, "pressure: p99 cold %.3f vs random %.3f: cut %.1f%% "
		 "(goal >= 30%%)", pc ? pc->m.p99 : 0, pr ? pr->m.p99 : 0,
		 pc && pr && pr->m.p99 > 0 ? 100.0 * (1 - pc->m.p99 / pr->m.p99) : 0);
	snprintf(line[4], 256, "pressure: worst-case victim (p99): vgmem cold %s "
		 "%.3f, random %s %.3f; paging %s %.3f",
		 pc && pc->m.worst_vm >= 0 ? s->t.vms[pc->m.worst_vm].name : "-",
		 worst_of(pc),
		 pr && pr->m.worst_vm >= 0 ? s->t.vms[pr->m.worst_vm].name : "-",
		 worst_of(pr),
		 pg && pg->m.worst_vm >= 0 ? s->t.vms[pg->m.worst_vm].name : "-",
		 worst_of(pg));
	snprintf(line[5], 256, "pressure: VMs admitted per GPU: vgmem %u, static %u "
		 "of %u (density at p99 1.2: see cloud-day)",
		 pr ? pr->r.admitted : 0, ps ? ps->r.admitted : 0, s->t.nr_vms);
	nl = 6 + oracle_goals(s, line + 6, j);
	fprintf(md, "\n## Goals (this run)\n\n");
	for (mi = 0; mi < nl; mi++) {
		fprintf(md, "- %s\n", line[mi]);
		vs_info(s->ctx, "goal: %s\n", line[mi]);
	}
	json_object_set_new(j, "vgmem_roomy_worst_p99", json_real(vgmem_roomy_worst));
	json_object_set_new(j, "swsched_roomy_median", json_real(sw ? sw->m.median : 0));
	json_object_set_new(j, "swsched_roomy_p99", json_real(sw ? sw->m.p99 : 0));
	json_object_set_new(j, "vgmem_pressure_oom", json_integer(vgmem_oom));
	json_object_set_new(j, "admission_pressure_oom", json_integer(ad ? (json_int_t)ad->r.oom : -1));
	json_object_set_new(j, "vgmem_pressure_jain_min", json_real(jain_min));
	json_object_set_new(j, "vgmem_pressure_jain_cold",
			    json_real(pc ? pc->m.jain : 0));
	json_object_set_new(j, "cold_p99", json_real(pc ? pc->m.p99 : 0));
	json_object_set_new(j, "random_p99", json_real(pr ? pr->m.p99 : 0));
	json_object_set_new(j, "cold_vs_random_p99_cut",
			    json_real(pc && pr && pr->m.p99 > 0 ?
				      1 - pc->m.p99 / pr->m.p99 : 0));
	json_object_set_new(j, "vgmem_cold_worst_p99", json_real(worst_of(pc)));
	json_object_set_new(j, "paging_worst_p99", json_real(worst_of(pg)));
	json_object_set_new(j, "static_admitted", json_integer(ps ? ps->r.admitted : 0));
	json_object_set_new(j, "vgmem_admitted", json_integer(pr ? pr->r.admitted : 0));
}

/* The per-VM p99 table's last row: vgmem cold's p99 over the oracle's. */
static void vm_ratio_row(const struct cp_state *s, int st, FILE *f)
{
	const struct cp_run *o = oracle_of(s, st);
	const struct cp_run *c = find_spec(s, st, "vgmem:policy=cold");
	char buf[16];
	uint32_t v;

	if (!o || !c)
		return;
	fprintf(f, "| vgmem:policy=cold / oracle |");
	for (v = 0; v < s->t.nr_vms; v++)
		fprintf(f, " %s |", c->m.vm[v].n && o->m.vm[v].n ?
			mt_ratio_str(c->m.vm[v].p99, o->m.vm[v].p99, buf,
				     sizeof(buf)) : "n/a");
	fprintf(f, "\n");
}

static int write_md(struct cp_state *s)
{
	FILE *f = vs_open(s->ctx, "compare.md");
	json_t *res = json_object(), *jg = json_object();
	uint32_t st, mi, v;

	if (!f)
		return -EIO;
	fprintf(f, "# vgmem-sim compare (seed %llu, trace %016llx)\n\n",
		(unsigned long long)s->ctx->c.seed,
		(unsigned long long)tr_hash(&s->t));
	fprintf(f, "%u VMs, %u steps; slowdown = an iteration's simulated device "
		"time (cost model) over the same iteration with unlimited VRAM "
		"(%.0f MiB). Peak held %.1f MiB, profiles %.1f MiB in all.\n\n",
		s->t.nr_vms, s->t.steps, vs_mib(s->base_vram),
		vs_mib(s->t.peak_total), vs_mib(s->t.entitled_total));
	fprintf(f, "VMs: ");
	for (v = 0; v < s->t.nr_vms; v++)
		fprintf(f, "%s%u=%s", v ? ", " : "", v + 1, s->t.vms[v].name);
	fprintf(f, "\n");
	for (st = 0; st < CP_SETTINGS; st++) {
		json_t *js = json_object();

		fprintf(f, "\n## %s: %.0f MiB of VRAM\n\n", setting_name[st],
			vs_mib(s->vram[st]));
		fprintf(f, "| model | admitted | OOM | median | mean | p99 | worst VM "
			"(p99) | Jain | PCIe MiB (copies + remote) | / oracle: PCIe "
			"| mean | p99 |\n"
			"|---|---|---|---|---|---|---|---|---|---|---|---|\n");
		for (mi = 0; mi < s->nr_models; mi++) {
			const struct cp_run *r = &s->runs[st][mi];
			char ro[3][16];
			json_t *jm;

			if (!r->ok) {
				fprintf(f, "| %s | (%s%s) | | | | | | | | | | |\n",
					r->spec,
					r->failed ? "failed: " : "not in this build",
					r->failed ? strerror(-r->failed) : "");
				continue;
			}
			vs_oracle(s, (int)st, r, ro);
			fprintf(f, "| %s | %u/%u | %u | %.3f | %.3f | %.3f | %s "
				"(%.3f) | %.3f | %.1f + %.1f | %s | %s | %s |\n",
				r->spec, r->r.admitted, s->t.nr_vms, r->r.oom,
				r->m.median, r->m.mean, r->m.p99,
				/* No victim when nobody is slowed down. */
				r->m.worst_vm >= 0 && r->m.worst_p99 >= 1.0005 ?
				s->t.vms[r->m.worst_vm].name : "-",
				r->m.worst_p99, r->m.jain,
				vs_mib(r->r.st.pcie_copy_bytes),
				vs_mib(r->r.st.pcie_access_bytes), ro[0], ro[1],
				ro[2]);
			jm = json_object();
			json_object_set_new(jm, "vram", json_integer((json_int_t)r->vram));
			json_object_set_new(jm, "admitted", json_integer(r->r.admitted));
			json_object_set_new(jm, "oom", json_integer(r->r.oom));
			json_object_set_new(jm, "median", json_real(r->m.median));
			json_object_set_new(jm, "mean", json_real(r->m.mean));
			json_object_set_new(jm, "p99", json_real(r->m.p99));
			json_object_set_new(jm, "jain", json_real(r->m.jain));
			json_object_set_new(jm, "worst_p99", json_real(r->m.worst_p99));
			json_object_set_new(jm, "pcie_bytes", json_integer((json_int_t)pcie(r)));
			json_object_set_new(js, r->spec, jm);
		}
		fprintf(f, "\np99 slowdown per VM (x: out-of-memory failures; -: not "
			"admitted)\n\n| model |");
		for (v = 0; v < s->t.nr_vms; v++)
			fprintf(f, " %s |", s->t.vms[v].name);
		fprintf(f, "\n|---|");
		for (v = 0; v < s->t.nr_vms; v++)
			fprintf(f, "---|");
		fprintf(f, "\n");
		for (mi = 0; mi < s->nr_models; mi++) {
			const struct cp_run *r = &s->runs[st][mi];

			if (!r->ok)
				continue;
			fprintf(f, "| %s |", r->spec);
			for (v = 0; v < s->t.nr_vms; v++) {
				if (!r->r.vm[v].admitted)
					fprintf(f, " - |");
				else if (r->m.vm[v].n)
					fprintf(f, " %.2f%s |", r->m.vm[v].p99,
						r->r.vm[v].oom ? " x" : "");
				else
					fprintf(f, " n/a%s |", r->r.vm[v].oom ? " x" : "");
			}
			fprintf(f, "\n");
		}
		vm_ratio_row(s, (int)st, f);
		json_object_set_new(res, setting_name[st], js);
	}
	goals(s, f, jg);
	fprintf(f, "\nvgmem's suspension and allocation-stall histograms (wall "
		"time): compare_vgmem_hist.csv, compare_suspend.svg, "
		"compare_stall.svg.\n");
	json_object_set_new(res, "goals", jg);
	json_object_set_new(s->ctx->summary, "result", res);
	return fclose(f) ? -EIO : 0;
}

static int compare_run(struct vs_ctx *ctx)
{
	struct cp_state *s = calloc(1, sizeof(*s));
	struct tr_mix mix;
	struct cp_run base_run;
	json_t *params;
	char path[4200];
	uint32_t st, mi;
	int err, failed = 0;

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	err = parse_models(s);
	if (err)
		goto out;
	s->chunk = ctx->c.chunk_size ? ctx->c.chunk_size : VG_CHUNK_DEFAULT;
	memset(&mix, 0, sizeof(mix));
	mix.seed = ctx->c.seed;
	mix.steps = cp.steps;
	memcpy(mix.nr, cp.nr, sizeof(mix.nr));
	mix.entitlement = cp.entitlement;
	mix.limit_pct = cp.limit_pct;
	mix.bo_size = cp.bo_size;
	err = tr_build_mix(&mix, &s->t);
	if (err) {
		fprintf(stderr, "vgmem-sim: compare: cannot build the trace: %s\n",
			strerror(-err));
		goto out;
	}
	err = tr_write_csv(&s->t, vs_path(ctx, "trace.csv", path, sizeof(path)));
	if (err)
		goto out_trace;
	/*
	 * Roomy: the static partitions fit and so does the most the VMs hold
	 * at once, with a chunk of slack per VM for rounding and its scratch.
	 */
	s->vram[0] = s->t.peak_total + s->t.nr_vms * (s->chunk + (64 << 10));
	if (s->vram[0] < s->t.entitled_total + s->t.nr_vms * (64 << 10))
		s->vram[0] = s->t.entitled_total + s->t.nr_vms * (64 << 10);
	s->vram[0] = cp_round_up(s->vram[0], s->chunk);
	s->vram[1] = ctx->c.vram ? ctx->c.vram :
		     cp_round_up(s->t.peak_total * cp.pressure_pct / 100, s->chunk);
	s->base_vram = 2 * s->vram[0];
	s->total = 1 + CP_SETTINGS * s->nr_models;

	memset(&base_run, 0, sizeof(base_run));
	snprintf(base_run.spec, sizeof(base_run.spec), "vgmem:policy=random");
	base_run.setting = -1;
	base_run.vram = s->base_vram;
	{
		struct pl_cfg cfg = { .model = base_run.spec, .vram = s->base_vram,
				      .chunk_size = s->chunk, .seed = ctx->c.seed,
				      .bw_scale = cp.bw_scale };

		s->now = "baseline (unlimited VRAM)";
		err = pl_run(ctx, &s->t, &cfg, &s->base, on_progress, s);
		s->done++;
		if (err)
			goto out_trace;
	}
	for (st = 0; st < CP_SETTINGS; st++) {
		for (mi = 0; mi < s->nr_models; mi++) {
			struct cp_run *r = &s->runs[st][mi];

			memcpy(r->spec, s->specs[mi], sizeof(r->spec));
			r->setting = (int)st;
			r->vram = s->vram[st];
			err = run_one(s, r);
			if (!err && r->r.check) {
				fprintf(stderr, "vgmem-sim: compare: %s: the core's "
					"accounting check failed\n", r->spec);
				err = -EIO;
			}
			if (err == -EINVAL || err == -ENOENT) {
				/* A model this build does not have: say so, go on. */
				fprintf(stderr, "vgmem-sim: compare: model %s did not "
					"run (%s)\n", r->spec, strerror(-err));
				r->ok = false;
				err = 0;
			}
			/*
			 * A model that fails mid-run is reported as failed in
			 * the tables; the others still run, and the scenario
			 * fails at the end.
			 */
			if (err) {
				r->ok = false;
				r->failed = err;
				if (!failed)
					failed = err;
				err = 0;
			}
		}
	}
	vs_progress(ctx, 1.0, "done");
	err = write_csv(s);
	if (!err)
		err = write_md(s);
	if (!err)
		err = write_svgs(s);
	if (!err)
		err = write_hist(s);
	params = json_object();
	vs_json_common(ctx, params, s->chunk, s->vram[1]);
	json_object_set_new(params, "roomy_vram", json_integer((json_int_t)s->vram[0]));
	json_object_set_new(params, "baseline_vram", json_integer((json_int_t)s->base_vram));
	json_object_set_new(params, "steps", json_integer(cp.steps));
	json_object_set_new(params, "vms", json_integer(s->t.nr_vms));
	json_object_set_new(params, "entitlement", json_integer((json_int_t)cp.entitlement));
	json_object_set_new(params, "bw_scale", json_integer(cp.bw_scale));
	json_object_set_new(params, "trace_hash", json_integer((json_int_t)(tr_hash(&s->t) >> 1)));
	json_object_set_new(ctx->summary, "params", params);
	if (!err)
		err = failed;
	if (!err && !ctx->c.quiet) {
		story(s);
		snprintf(path, sizeof(path), "%s/compare.md", ctx->out);
		vs_info(ctx, "table: %s (and compare.csv, compare_vms.csv), plots: "
			"%s/compare_*.svg\n", path, ctx->out);
	}
	for (st = 0; st < CP_SETTINGS; st++)
		for (mi = 0; mi < s->nr_models; mi++) {
			pl_result_free(&s->runs[st][mi].r);
			mt_free(&s->runs[st][mi].m);
		}
	pl_result_free(&s->base);
out_trace:
	tr_free(&s->t);
out:
	free(s);
	return err;
}

const struct vs_scenario vs_compare = {
	.name = "compare",
	.summary = "one tenant trace under every memory model vs unlimited VRAM",
	.description =
	"Builds a seeded trace of tenants (--train training-like loops over a\n"
	"large working set, --infer inference servers with a hot model and bursty\n"
	"activations, --leak leaky allocators growing to their limit, --idle VMs\n"
	"holding memory) and plays it, single-threaded on a logical clock, under\n"
	"every model of --models (vgmem with each chunk policy, static,\n"
	"admission, swsched, paging at 64K and 2M) and once with unlimited VRAM\n"
	"(the baseline); the oracle (Belady's MIN over chunks, knowing the whole\n"
	"trace; oracle:evict=weighted within fair shares) is computed from the\n"
	"trace and the baseline, and every model's PCIe bytes, mean and p99\n"
	"slowdown are given over the oracle's. Two VRAM sizes: roomy (all\n"
	"partitions and the peak the VMs hold fit) and pressure (--pressure-pct\n"
	"of that peak, or --vram). Slowdown is an iteration's simulated device\n"
	"time (cost model, plus the model's copies, mediation and vgmem's\n"
	"allocation stall) over the same iteration in the baseline: the tables\n"
	"repeat exactly for a seed. The histograms of vgmem's suspensions and\n"
	"stalls are wall time and do not.",
	.outputs =
	"  compare.md               tables per VRAM size and the goals\n"
	"  compare.csv              one row per setting and model\n"
	"  compare_vms.csv          one row per setting, model and VM\n"
	"  compare_p99_<setting>.svg, compare_cdf_<setting>.svg  plots\n"
	"  compare_vgmem_hist.csv, compare_suspend.svg, compare_stall.svg\n"
	"  trace.csv                the trace's events\n"
	"  summary.json             parameters, per-model numbers, goals",
	.uses_policy = false,
	.params = compare_params,
	.check = compare_check,
	.run = compare_run,
};
