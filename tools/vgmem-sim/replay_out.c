// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The replay's outputs (replay.h): the per-model table with every model
 * over the oracle, the per-VM table, issue 16's goals with their measured
 * values, the CSVs and one plot per VM of its memory against its demand.
 * Bytes are shown in real units (simulated bytes times the scale).
 */
#include "replay.h"

#include <errno.h>
#include <string.h>

#include "metrics.h"
#include "svg.h"

double rp_gib(const struct rp_state *s, uint64_t n)
{
	return (double)n * (double)s->o->sv.scale / (double)(1ull << 30);
}

const struct rp_model *rp_find(const struct rp_state *s, const char *spec)
{
	uint32_t mi;

	for (mi = 0; mi < s->nr_models; mi++)
		if (s->mod[mi].ok && !strcmp(s->mod[mi].spec, spec))
			return &s->mod[mi];
	return NULL;
}

static uint64_t pcie(const struct rp_point *p)
{
	return p->r.st.pcie_copy_bytes + p->r.st.pcie_access_bytes;
}

static const char *met(bool ok)
{
	return ok ? "met" : "missed";
}

static int write_csv(struct rp_state *s)
{
	FILE *f = vs_open(s->ctx, "replay.csv"), *g;
	uint32_t mi, k, v;

	if (!f)
		return -EIO;
	g = vs_open(s->ctx, "replay_vms.csv");
	if (!g) {
		fclose(f);
		return -EIO;
	}
	fprintf(f, "model,k,admitted,refused,capped,vms_avg,requests_placed,"
		"requests_failed,ttft_p50,ttft_p99,token_p50,token_p99,"
		"token_mean,jain,pcie_copy_bytes,pcie_access_bytes,pass\n");
	fprintf(g, "model,vm,admitted,oom,steps_slowdown,requests_dealt\n");
	for (mi = 0; mi < s->nr_models; mi++) {
		const struct rp_model *m = &s->mod[mi];

		for (k = 0; k < m->nr; k++) {
			const struct rp_point *p = &m->pt[k];

			fprintf(f, "%s,%u,%u,%u,%u,%.3f,%u,%u,%.4f,%.4f,%.4f,%.4f,"
				"%.4f,%.4f,%llu,%llu,%d\n", m->spec, p->k,
				p->r.admitted, p->r.refused, p->r.capped,
				p->r.vms_avg, p->m.placed, p->m.failed,
				p->m.ttft_p50, p->m.ttft_p99, p->m.tok_p50,
				p->m.tok_p99, p->m.tok_mean, p->m.jain,
				(unsigned long long)p->r.st.pcie_copy_bytes,
				(unsigned long long)p->r.st.pcie_access_bytes,
				p->pass);
		}
		for (v = 0; m->nr && v < s->l.t.nr_vms; v++)
			fprintf(g, "%s,%s,%d,%u,%.4f,%u\n", m->spec,
				s->l.t.vms[v].name, m->pt[0].r.vm[v].admitted,
				m->pt[0].r.vm[v].oom, m->pt[0].m.vm_mean[v],
				s->l.nr_req / s->l.t.nr_vms +
				(v < s->l.nr_req % s->l.t.nr_vms));
	}
	fclose(g);
	return fclose(f) ? -EIO : 0;
}

/* The model whose memory is plotted: vgmem cold, else the first vgmem. */
static const struct rp_model *plotted(const struct rp_state *s)
{
	const struct rp_model *m = rp_find(s, "vgmem:policy=cold");
	uint32_t mi;

	for (mi = 0; !m && mi < s->nr_models; mi++)
		if (s->mod[mi].ok && !strncmp(s->mod[mi].spec, "vgmem", 5))
			m = &s->mod[mi];
	return m;
}

/* replay_mem.csv and replay_vmN.svg: held, resident, relocated, demand. */
static int write_mem(struct rp_state *s)
{
	const struct rp_model *m = plotted(s);
	const struct sv_load *l = &s->l;
	uint32_t v, st, n = l->t.nr_vms;
	char path[4200], name[64], title[128];
	FILE *f;
	int err = 0;

	if (!m)
		return 0;
	f = vs_open(s->ctx, "replay_mem.csv");
	if (!f)
		return -EIO;
	fprintf(f, "# %s; GiB, real (simulated x %llu); held = weights + KV blocks + "
		"the player's scratch BO\nstep,minute,vm,"
		"kv_tokens,kv_demand,held,allocated,resident,"
		"relocated\n", m->spec, (unsigned long long)s->o->sv.scale);
	for (v = 0; v < n && !err; v++) {
		struct svg_plot p;
		int sd, sw, sr, sl;

		snprintf(title, sizeof(title), "%s, %s (held: weights + KV "
			 "blocks + scratch)", l->t.vms[v].name, m->spec);
		svg_init(&p, title, "trace time (minutes)", "GiB (real)");
		p.y_from_zero = true;
		p.x_from_zero = true;
		sd = svg_add_series(&p, "KV demand", SVG_STEP);
		sw = svg_add_series(&p, "held", SVG_STEP);
		sr = svg_add_series(&p, "resident", SVG_STEP);
		sl = svg_add_series(&p, "relocated", SVG_STEP);
		for (st = 0; st < l->t.steps; st++) {
			size_t c = (size_t)st * n + v;
			uint64_t alloc = m->mem[2 * c], res = m->mem[2 * c + 1];
			double x = st * l->step_s / 60;
			double kv = (double)l->kv_tokens[c] *
				    (double)s->o->sv.kv_token / (1ull << 30);
			/* The player's scratch BO is in the model's bytes too. */
			uint64_t held = l->sim_weights + l->kv_bytes[c] + PL_SCRATCH;

			if (!m->pt[0].r.vm[v].admitted)
				break;
			fprintf(f, "%u,%.3f,%s,%llu,%.4f,%.4f,%.4f,%.4f,%.4f\n",
				st, x, l->t.vms[v].name,
				(unsigned long long)l->kv_tokens[c], kv,
				rp_gib(s, held), rp_gib(s, alloc), rp_gib(s, res),
				rp_gib(s, alloc - res));
			svg_add_point(&p, sd, x, kv);
			svg_add_point(&p, sw, x, rp_gib(s, held));
			svg_add_point(&p, sr, x, rp_gib(s, res));
			svg_add_point(&p, sl, x, rp_gib(s, alloc - res));
		}
		snprintf(name, sizeof(name), "replay_%s.svg", l->t.vms[v].name);
		err = svg_write(&p, vs_path(s->ctx, name, path, sizeof(path)));
		svg_free(&p);
	}
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

/* Issue 16's goals for the replay: lines into md, stdout and JSON. */
static void goals(struct rp_state *s, FILE *md, json_t *j)
{
	const struct rp_model *c = rp_find(s, "vgmem:policy=cold");
	const struct rp_model *o = rp_find(s, "oracle");
	const struct rp_model *st = rp_find(s, "static");
	char line[6][256];
	uint32_t i, nl = 0;

	if (!c || !o) {
		snprintf(line[nl++], 256, "vgmem cold against the oracle: not "
			 "measured (vgmem:policy=cold and oracle must be in --models)");
	} else {
		const struct rp_point *pc = &c->pt[0], *po = &o->pt[0];
		double rb = pcie(po) ? (double)pcie(pc) / (double)pcie(po) : 0;
		double rm = po->m.tok_mean > 0 ? pc->m.tok_mean / po->m.tok_mean : 0;
		double rd = o->density > 0 ? c->density / o->density : 0;

		snprintf(line[nl++], 256, "PCIe bytes vgmem cold %.1f GiB, oracle "
			 "%.1f GiB: %.2fx (goal <= 1.5x): %s", rp_gib(s, pcie(pc)),
			 rp_gib(s, pcie(po)), rb, met(pcie(po) && rb <= 1.5));
		snprintf(line[nl++], 256, "mean per-token slowdown vgmem cold %.3f, "
			 "oracle %.3f: %.2fx (goal <= 1.3x): %s", pc->m.tok_mean,
			 po->m.tok_mean, rm, met(rm > 0 && rm <= 1.3));
		snprintf(line[nl++], 256, "failed requests (OOM) vgmem cold %u of "
			 "%u (goal 0): %s", pc->m.failed, pc->m.placed,
			 met(!pc->m.failed));
		snprintf(line[nl++], 256, "Jain vgmem cold %.3f (goal >= 0.95): %s; "
			 "oracle %.3f", pc->m.jain, met(pc->m.jain >= 0.95),
			 po->m.jain);
		snprintf(line[nl++], 256, "VMs per GPU at p99 <= %.2f: vgmem cold "
			 "%.2f, oracle %.2f: %.2fx (goal >= 0.85x): %s", s->o->slo,
			 c->density, o->density, rd, met(o->density > 0 && rd >= 0.85));
		json_object_set_new(j, "cold_vs_oracle_pcie", json_real(rb));
		json_object_set_new(j, "cold_vs_oracle_mean", json_real(rm));
		json_object_set_new(j, "cold_failed", json_integer(pc->m.failed));
		json_object_set_new(j, "cold_jain", json_real(pc->m.jain));
		json_object_set_new(j, "cold_vs_oracle_density", json_real(rd));
	}
	if (c && st && st->density > 0) {
		double r = c->density / st->density;

		snprintf(line[nl++], 256, "VMs per GPU at p99 <= %.2f: vgmem cold "
			 "%.2f, static %.2f: %.2fx (goal >= 2.5x): %s", s->o->slo,
			 c->density, st->density, r, met(r >= 2.5));
		json_object_set_new(j, "cold_vs_static_density", json_real(r));
	} else if (c && st) {
		/* Static fails a request at every K: no ratio to take. */
		snprintf(line[nl++], 256, "VMs per GPU at p99 <= %.2f: vgmem cold "
			 "%.2f, static 0 (a request fails at every K, even K=%u: "
			 "%u failed) (goal >= 2.5x): %s", s->o->slo, c->density,
			 st->pt[st->nr - 1].k, st->pt[st->nr - 1].m.failed,
			 c->density > 0 ? "met, static serving no K" : "missed");
	}
	fprintf(md, "\n## Goals (issue 16, item 3)\n\n");
	for (i = 0; i < nl; i++) {
		fprintf(md, "- %s\n", line[i]);
		vs_info(s->ctx, "goal: %s\n", line[i]);
	}
}

static void model_row(struct rp_state *s, FILE *f, const struct rp_model *m,
		      json_t *jr)
{
	const struct rp_model *o = rp_find(s, "oracle");
	const struct rp_point *p = &m->pt[0];
	char rb[16] = "", rm[16] = "", rd[16] = "";
	json_t *jm = json_object();

	if (o) {
		mt_ratio_str((double)pcie(p), (double)pcie(&o->pt[0]), rb, sizeof(rb));
		mt_ratio_str(p->m.tok_mean, o->pt[0].m.tok_mean, rm, sizeof(rm));
		mt_ratio_str(m->density, o->density, rd, sizeof(rd));
	}
	fprintf(f, "| %s | %u/%u | %u of %u | %.2f | %.2f | %.2f | %.2f | %.3f | "
		"%.3f | %.1f + %.1f | %s | %s | %.2f (K=%u) | %s |\n", m->spec,
		p->r.admitted, s->l.t.nr_vms, p->m.failed, p->m.placed,
		p->m.ttft_p50, p->m.ttft_p99, p->m.tok_p50, p->m.tok_p99,
		p->m.tok_mean, p->m.jain, rp_gib(s, p->r.st.pcie_copy_bytes),
		rp_gib(s, p->r.st.pcie_access_bytes), rb, rm, m->density,
		m->density_k, rd);
	json_object_set_new(jm, "failed", json_integer(p->m.failed));
	json_object_set_new(jm, "placed", json_integer(p->m.placed));
	json_object_set_new(jm, "ttft_p99", json_real(p->m.ttft_p99));
	json_object_set_new(jm, "token_p99", json_real(p->m.tok_p99));
	json_object_set_new(jm, "token_mean", json_real(p->m.tok_mean));
	json_object_set_new(jm, "jain", json_real(p->m.jain));
	json_object_set_new(jm, "pcie_bytes_real", json_real(rp_gib(s, pcie(p)) *
							     (1ull << 30)));
	json_object_set_new(jm, "density", json_real(m->density));
	json_object_set_new(jr, m->spec, jm);
}

static int write_md(struct rp_state *s)
{
	FILE *f = vs_open(s->ctx, "replay.md");
	json_t *res = json_object(), *jm = json_object(), *jg = json_object();
	const struct sv_params *sp = &s->o->sv;
	uint32_t mi, v, k;

	if (!f)
		return -EIO;
	fprintf(f, "# vgmem-sim replay (%s)\n\n%u requests over %.0f s dealt "
		"round robin to %u inference VMs; weights %.2f GiB, KV %llu KiB "
		"per token in blocks of %u tokens; GPU %.0f GiB, profiles %.0f GiB "
		"(limit %u%%). Scale: 1 simulated byte = %llu real bytes; 1 step = "
		"%u tokens x %.1f ms = %.2f s of the trace (%u steps).\n\n",
		s->o->trace, s->l.nr_req, (double)s->rq.span_ns / 1e9,
		s->l.t.nr_vms, (double)sp->weights / (1 << 30),
		(unsigned long long)(sp->kv_token >> 10), sp->block_tokens,
		(double)s->o->gpu / (1 << 30), (double)sp->profile / (1 << 30),
		sp->limit_pct, (unsigned long long)sp->scale, sp->step_tokens,
		sp->token_us / 1e3, s->l.step_s, s->l.t.steps);
	fprintf(f, "Every VM offered. Slowdowns are over the same steps with "
		"unlimited VRAM; failed: a request whose KV (or its VM's weights) "
		"could not be allocated; PCIe in real GiB; / oracle: PCIe bytes, "
		"mean per-token slowdown and VMs per GPU over the oracle's "
		"(Belady's MIN). VMs per GPU: the most VMs the GPU holds with no "
		"failed request and both p99s <= %.2f.\n\n"
		"| model | VMs placed | failed requests | TTFT p50 | TTFT p99 | "
		"per-token p50 | per-token p99 | per-token mean | Jain | PCIe GiB "
		"(copies + remote) | / oracle: PCIe | mean | VMs/GPU at p99 <= "
		"%.2f | / oracle |\n|---|---|---|---|---|---|---|---|---|---|---|"
		"---|---|---|\n", s->o->slo, s->o->slo);
	for (mi = 0; mi < s->nr_models; mi++) {
		const struct rp_model *m = &s->mod[mi];

		if (m->ok)
			model_row(s, f, m, jm);
		else
			fprintf(f, "| %s | (%s) |\n", m->spec, m->failed ?
				strerror(-m->failed) : "not in this build");
	}
	fprintf(f, "\nEach VM's steps (weights pass and its requests) over the "
		"baseline's, every VM offered (-: not placed):\n\n| model |");
	for (v = 0; v < s->l.t.nr_vms; v++)
		fprintf(f, " %s |", s->l.t.vms[v].name);
	fprintf(f, "\n|---|");
	for (v = 0; v < s->l.t.nr_vms; v++)
		fprintf(f, "---|");
	fprintf(f, "\n");
	for (mi = 0; mi < s->nr_models; mi++) {
		const struct rp_model *m = &s->mod[mi];

		if (!m->ok)
			continue;
		fprintf(f, "| %s |", m->spec);
		for (v = 0; v < s->l.t.nr_vms; v++) {
			if (m->pt[0].r.vm[v].admitted)
				fprintf(f, " %.2f |", m->pt[0].m.vm_mean[v]);
			else
				fprintf(f, " - |");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\nThe sweep (K: VMs the GPU may hold; failed requests, p99 "
		"TTFT / per-token):\n\n");
	for (mi = 0; mi < s->nr_models; mi++) {
		const struct rp_model *m = &s->mod[mi];

		fprintf(f, "- %s:", m->spec);
		for (k = 0; k < m->nr; k++)
			fprintf(f, " K=%u: %u, %.2f / %.2f%s;", m->pt[k].k,
				m->pt[k].m.failed, m->pt[k].m.ttft_p99,
				m->pt[k].m.tok_p99, m->pt[k].pass ? " (pass)" : "");
		fprintf(f, "\n");
	}
	goals(s, f, jg);
	json_object_set_new(res, "models", jm);
	json_object_set_new(res, "goals", jg);
	json_object_set_new(s->ctx->summary, "result", res);
	return fclose(f) ? -EIO : 0;
}

static void params_json(struct rp_state *s)
{
	const struct sv_params *p = &s->o->sv;
	json_t *j = json_object();

	vs_json_common(s->ctx, j, s->chunk, s->vram);
	json_object_set_new(j, "trace", json_string(s->o->trace));
	json_object_set_new(j, "requests", json_integer(s->l.nr_req));
	json_object_set_new(j, "vms", json_integer(p->nr_vms));
	json_object_set_new(j, "scale", json_integer((json_int_t)p->scale));
	json_object_set_new(j, "step_s", json_real(s->l.step_s));
	json_object_set_new(j, "steps", json_integer(s->l.t.steps));
	json_object_set_new(j, "weights", json_integer((json_int_t)p->weights));
	json_object_set_new(j, "kv_token", json_integer((json_int_t)p->kv_token));
	json_object_set_new(j, "block_tokens", json_integer(p->block_tokens));
	json_object_set_new(j, "gpu", json_integer((json_int_t)s->o->gpu));
	json_object_set_new(j, "profile", json_integer((json_int_t)p->profile));
	json_object_set_new(j, "slo", json_real(s->o->slo));
	json_object_set_new(s->ctx->summary, "params", j);
}

int rp_write(struct rp_state *s)
{
	int err = write_csv(s);

	if (!err)
		err = write_md(s);
	if (!err)
		err = write_mem(s);
	params_json(s);
	if (!err)
		vs_info(s->ctx, "table: %s/replay.md (and replay.csv, "
			"replay_vms.csv); plots: %s/replay_vm*.svg\n",
			s->ctx->out, s->ctx->out);
	return err;
}
