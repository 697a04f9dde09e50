// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fairness: GPUswap section 6.2. Leaking allocators ("alloc1", "alloc2")
 * allocate one BO per step until each holds its cap, the second starting
 * later; the reducer must take VRAM from the first until both hold about
 * the same (at most a chunk apart). Then alloc1 frees everything and the
 * return worker brings alloc2's chunks back.
 *
 * Time is a logical clock: one step allocates at most one BO per leaker and
 * runs one pass of the return worker (the worker thread is off), so a run
 * repeats exactly for a seed. A step stands for --step-ms of wall time in
 * the paper's terms, only for the time axis.
 */
#include "vgsim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define MAX_LEAKERS 8

static struct {
	uint64_t cap;
	uint64_t bo_size;
	uint32_t leakers;
	uint32_t start_gap;
	uint32_t hold;
	uint32_t release;
	double step_ms;
} fp = {
	.cap = 768ull << 20,
	.leakers = 2,
	.start_gap = 40,
	.hold = 20,
	.release = 20,
	.step_ms = 500,
};

static struct vs_param fairness_params[] = {
	{ "cap", VS_SIZE, &fp.cap, "bytes each leaker allocates before holding" },
	{ "bo-size", VS_SIZE, &fp.bo_size, "BO size (auto: the chunk size)" },
	{ "leakers", VS_U32, &fp.leakers, "number of leaking guests, 2..8" },
	{ "start-gap", VS_U32, &fp.start_gap, "steps between leaker starts" },
	{ "hold", VS_U32, &fp.hold, "steps all hold after the last cap is reached" },
	{ "release", VS_U32, &fp.release,
	  "steps after alloc1 frees all (0: no release phase)" },
	{ "step-ms", VS_DOUBLE, &fp.step_ms, "logical milliseconds per step" },
	{ NULL, 0, NULL, NULL },
};

struct leaker {
	struct vg_host_guest *g;
	struct vgmem_dev *dev;
	uint64_t *vas;
	uint32_t nr, want;
	uint32_t start;
	bool released;
	int rs, rl;		/* svg series */
};

struct fair_run {
	struct vs_ctx *ctx;
	struct vg_host *h;
	uint64_t chunk, vram;
	struct leaker l[MAX_LEAKERS];
	uint32_t n;
	FILE *csv;
	struct svg_plot res, rel;
};

static void sample(struct fair_run *r, uint32_t step, double t)
{
	struct vg_gpu_stats gs;
	struct vgmem_vm_stats st;
	uint32_t i;

	fprintf(r->csv, "%u,%.3f", step, t);
	for (i = 0; i < r->n; i++) {
		vg_vm_get_stats(vg_host_guest_vm(r->l[i].g), &st);
		fprintf(r->csv, ",%llu,%llu", (unsigned long long)st.resident,
			(unsigned long long)st.relocated);
		svg_add_point(&r->res, r->l[i].rs, t, vs_mib(st.resident));
		svg_add_point(&r->rel, r->l[i].rl, t, vs_mib(st.relocated));
	}
	vg_gpu_get_stats(vg_host_gpu(r->h), &gs);
	fprintf(r->csv, ",%llu,%llu,%llu\n", (unsigned long long)gs.vram_used,
		(unsigned long long)gs.host_used,
		(unsigned long long)gs.relocations);
}

/* max - min resident of the leakers still holding, in chunks. */
static json_t *holdings(struct fair_run *r, uint64_t *imbalance)
{
	json_t *arr = json_array();
	uint64_t lo = UINT64_MAX, hi = 0;
	struct vgmem_vm_stats st;
	uint32_t i;

	for (i = 0; i < r->n; i++) {
		json_t *o = json_object();

		vg_vm_get_stats(vg_host_guest_vm(r->l[i].g), &st);
		json_object_set_new(o, "name", json_sprintf("alloc%u", i + 1));
		json_object_set_new(o, "allocated", json_integer((json_int_t)st.allocated));
		json_object_set_new(o, "resident", json_integer((json_int_t)st.resident));
		json_object_set_new(o, "relocated", json_integer((json_int_t)st.relocated));
		json_object_set_new(o, "resident_chunks",
				    json_integer((json_int_t)(st.resident / r->chunk)));
		json_object_set_new(o, "suspends", json_integer((json_int_t)st.suspends));
		json_array_append_new(arr, o);
		if (r->l[i].released)
			continue;
		if (st.resident < lo)
			lo = st.resident;
		if (st.resident > hi)
			hi = st.resident;
	}
	*imbalance = hi >= lo ? (hi - lo + r->chunk - 1) / r->chunk : 0;
	return arr;
}

static int leak_step(struct fair_run *r, uint32_t step)
{
	uint32_t i;
	int err;

	for (i = 0; i < r->n; i++) {
		struct leaker *l = &r->l[i];

		if (step < l->start || l->nr >= l->want || l->released)
			continue;
		err = vgmem_bo_alloc(l->dev, fp.bo_size, &l->vas[l->nr]);
		if (err) {
			fprintf(stderr, "vgmem-sim: fairness: alloc%u: BO %u "
				"allocation failed: %s\n", i + 1, l->nr,
				strerror(-err));
			return err;
		}
		l->nr++;
	}
	return 0;
}

static bool all_full(struct fair_run *r)
{
	uint32_t i;

	for (i = 0; i < r->n; i++)
		if (r->l[i].nr < r->l[i].want)
			return false;
	return true;
}

static int release_first(struct fair_run *r)
{
	struct leaker *l = &r->l[0];
	uint32_t i;
	int err;

	for (i = 0; i < l->nr; i++) {
		err = vgmem_bo_free(l->dev, l->vas[i]);
		if (err) {
			fprintf(stderr, "vgmem-sim: fairness: free failed: %s\n",
				strerror(-err));
			return err;
		}
	}
	l->nr = 0;
	l->released = true;
	return 0;
}

static int write_plots(struct fair_run *r)
{
	char path[4200];
	int err;

	err = svg_write(&r->res, vs_path(r->ctx, "fairness_resident.svg",
					  path, sizeof(path)));
	if (!err)
		err = svg_write(&r->rel, vs_path(r->ctx, "fairness_relocated.svg",
						  path, sizeof(path)));
	if (err)
		fprintf(stderr, "vgmem-sim: cannot write %s: %s\n", path,
			strerror(-err));
	return err;
}

static int fairness_setup(struct fair_run *r)
{
	enum vg_chunk_policy pol = r->ctx->c.policy_set ? r->ctx->c.policy :
				   VG_POLICY_COLD;
	char name[32];
	uint32_t i;
	int err;

	err = vs_host_create(r->ctx, r->vram, r->chunk, pol, false, r->ctx->c.seed,
			     &r->h);
	if (err)
		return err;
	for (i = 0; i < r->n; i++) {
		struct leaker *l = &r->l[i];

		snprintf(name, sizeof(name), "alloc%u", i + 1);
		err = vg_host_guest_create(r->h, name, fp.cap, 0, &l->g);
		if (err) {
			fprintf(stderr, "vgmem-sim: fairness: guest %s: %s\n",
				name, strerror(-err));
			return err;
		}
		l->dev = vg_host_guest_dev(l->g);
		l->want = (uint32_t)(fp.cap / fp.bo_size);
		l->start = i * fp.start_gap;
		l->vas = calloc(l->want ? l->want : 1, sizeof(*l->vas));
		if (!l->vas)
			return -ENOMEM;
		l->rs = svg_add_series(&r->res, name, SVG_STEP);
		l->rl = svg_add_series(&r->rel, name, SVG_STEP);
		fprintf(r->csv, ",%s_resident,%s_relocated", name, name);
	}
	fprintf(r->csv, ",vram_used,host_used,relocations\n");
	return 0;
}

static int fairness_check(struct vs_ctx *ctx)
{
	uint64_t bo = fp.bo_size ? fp.bo_size :
		      ctx->c.chunk_size ? ctx->c.chunk_size : 32ull << 20;

	if (fp.leakers < 2 || fp.leakers > MAX_LEAKERS || bo % VGMEM_PAGE_SIZE ||
	    fp.cap < bo) {
		fprintf(stderr, "vgmem-sim: fairness: need 2..8 leakers, a BO size "
			"that is a multiple of 4K and a cap of at least one BO\n");
		return -EINVAL;
	}
	return 0;
}

static int fairness_run(struct vs_ctx *ctx)
{
	struct fair_run *r;
	uint32_t step, last_start, hold_end = 0, total_est;
	uint64_t imbalance = 0, after_imb = 0;
	json_t *params, *res, *hold_json = NULL;
	struct vg_gpu_stats gs;
	double t = 0;
	uint32_t i;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ctx = ctx;
	r->chunk = ctx->c.chunk_size ? ctx->c.chunk_size : 32ull << 20;
	r->vram = ctx->c.vram ? ctx->c.vram : 512ull << 20;
	if (!fp.bo_size)
		fp.bo_size = r->chunk;
	r->n = fp.leakers;
	svg_init(&r->res, "Fairness: VRAM held per VM", "time (s, logical)",
		 "resident (MiB)");
	svg_init(&r->rel, "Fairness: host RAM held per VM", "time (s, logical)",
		 "relocated (MiB)");
	r->csv = vs_open(ctx, "fairness.csv");
	if (!r->csv) {
		err = -EIO;
		goto out;
	}
	fprintf(r->csv, "step,t_s");
	err = fairness_setup(r);
	if (err)
		goto out;

	last_start = (r->n - 1) * fp.start_gap;
	total_est = last_start + r->l[0].want + fp.hold + fp.release + 1;
	for (step = 0;; step++) {
		t = step * fp.step_ms / 1000.0;
		err = leak_step(r, step);
		if (err)
			goto out;
		if (vg_gpu_return_once(vg_host_gpu(r->h)) < 0)
			fprintf(stderr, "vgmem-sim: fairness: return pass failed\n");
		sample(r, step, t);
		vs_progress(ctx, (double)step / total_est, "t=%.1fs step %u", t, step);
		if (!hold_end && all_full(r) && step >= last_start)
			hold_end = step + fp.hold;
		if (hold_end && step == hold_end) {
			hold_json = holdings(r, &imbalance);
			if (!fp.release)
				break;
			err = release_first(r);
			if (err)
				goto out;
		}
		if (hold_end && step >= hold_end + fp.release)
			break;
	}
	vs_progress(ctx, 1.0, "t=%.1fs done", t);

	/* The fair-share line: VRAM split equally between the leakers. */
	{
		int fs = svg_add_series(&r->res, "equal share", SVG_LINE);

		svg_add_point(&r->res, fs, 0, vs_mib(r->vram / r->n));
		svg_add_point(&r->res, fs, t, vs_mib(r->vram / r->n));
	}

	params = json_object();
	vs_json_common(ctx, params, r->chunk, r->vram);
	json_object_set_new(params, "policy", json_string(vg_policy_name(
		ctx->c.policy_set ? ctx->c.policy : VG_POLICY_COLD)));
	json_object_set_new(params, "cap", json_integer((json_int_t)fp.cap));
	json_object_set_new(params, "bo_size", json_integer((json_int_t)fp.bo_size));
	json_object_set_new(params, "leakers", json_integer(r->n));
	json_object_set_new(params, "start_gap_steps", json_integer(fp.start_gap));
	json_object_set_new(params, "step_ms", json_real(fp.step_ms));
	json_object_set_new(ctx->summary, "params", params);

	res = json_object();
	json_object_set_new(res, "steps", json_integer(step + 1));
	json_object_set_new(res, "hold_step", json_integer(hold_end));
	json_object_set_new(res, "final_imbalance_chunks", json_integer((json_int_t)imbalance));
	json_object_set_new(res, "at_hold", hold_json ? hold_json : json_null());
	if (fp.release) {
		json_object_set_new(res, "after_release", holdings(r, &after_imb));
	}
	vg_gpu_get_stats(vg_host_gpu(r->h), &gs);
	json_object_set_new(res, "relocations", json_integer((json_int_t)gs.relocations));
	json_object_set_new(res, "reloc_out_chunks", json_integer((json_int_t)gs.reloc_out_chunks));
	json_object_set_new(res, "reloc_in_chunks", json_integer((json_int_t)gs.reloc_in_chunks));
	json_object_set_new(res, "bytes_out", json_integer((json_int_t)gs.bytes_out));
	json_object_set_new(res, "bytes_in", json_integer((json_int_t)gs.bytes_in));
	json_object_set_new(res, "consistent", json_boolean(vg_gpu_check(vg_host_gpu(r->h)) == 0));
	json_object_set_new(ctx->summary, "result", res);

	vs_info(ctx, "fairness: %u leakers, VRAM %.0f MiB, chunk %.0f MiB, %u steps\n",
		r->n, vs_mib(r->vram), vs_mib(r->chunk), step + 1);
	if (hold_json) {
		size_t k;
		json_t *o;

		json_array_foreach(hold_json, k, o)
			vs_info(ctx, "  %-8s resident %5.0f MiB (%2lld chunks)  relocated %5.0f MiB\n",
				json_string_value(json_object_get(o, "name")),
				vs_mib(json_integer_value(json_object_get(o, "resident"))),
				(long long)json_integer_value(json_object_get(o, "resident_chunks")),
				vs_mib(json_integer_value(json_object_get(o, "relocated"))));
	}
	vs_info(ctx, "  imbalance at hold: %llu chunk(s); relocations %llu (%llu chunks out, %llu back)\n",
		(unsigned long long)imbalance, (unsigned long long)gs.relocations,
		(unsigned long long)gs.reloc_out_chunks,
		(unsigned long long)gs.reloc_in_chunks);
	err = write_plots(r);
out:
	if (r->csv)
		fclose(r->csv);
	for (i = 0; i < r->n; i++) {
		if (r->l[i].g)
			vg_host_guest_destroy(r->l[i].g);
		free(r->l[i].vas);
	}
	if (r->h)
		vg_host_destroy(r->h);
	svg_free(&r->res);
	svg_free(&r->rel);
	free(r);
	return err;
}

const struct vs_scenario vs_fairness = {
	.name = "fairness",
	.summary = "two leaking allocators share VRAM (GPUswap 6.2, Figure 4)",
	.description =
	"Guests alloc1, alloc2 (... up to --leakers) each allocate one BO per step\n"
	"until they hold --cap bytes, then hold; alloc(i+1) starts --start-gap steps\n"
	"after alloc(i). When VRAM is full the reducer relocates chunks of the VM\n"
	"furthest above its share, so the VMs converge to equal VRAM, at most one\n"
	"chunk apart. --hold steps after the last cap is reached, the imbalance is\n"
	"recorded; then alloc1 frees everything and the return worker (one pass per\n"
	"step) moves the others' chunks back. Defaults: VRAM 512M, chunk 32M,\n"
	"policy random. A logical clock makes the run repeat exactly for a seed.",
	.outputs =
	"  fairness.csv            per step: resident and relocated bytes per VM, GPU totals\n"
	"  fairness_resident.svg   VRAM per VM over time, with the equal share\n"
	"  fairness_relocated.svg  host RAM per VM over time\n"
	"  summary.json            holdings at hold time, final_imbalance_chunks, totals",
	.uses_policy = true,
	.params = fairness_params,
	.check = fairness_check,
	.run = fairness_run,
};
