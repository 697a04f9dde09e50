// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * slowdown: GPUswap section 6.3, Figure 5. Two instances of a workload run
 * at once while the GPU's VRAM shrinks in steps; for each chunk policy the
 * slower instance's simulated device time is compared with the same run on
 * a GPU with room for everything. Device time comes from the software GPU's
 * cost model (bytes in VRAM at VRAM bandwidth, bytes in host RAM at PCIe
 * bandwidth), so the numbers do not depend on how fast this machine is.
 */
#include "runner.h"
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct {
	uint64_t ws;
	uint64_t bo_size;
	uint32_t iters;
	uint32_t points;
	uint32_t runs;
	uint32_t instances;
	const char *workloads;
} sp = {
	.ws = 32ull << 20,
	.bo_size = 4ull << 20,
	.iters = 6,
	.points = 8,
	.runs = 1,
	.instances = 2,
	.workloads = "all",
};

static struct vs_param slowdown_params[] = {
	{ "ws", VS_SIZE, &sp.ws, "working set of each instance" },
	{ "bo-size", VS_SIZE, &sp.bo_size, "BO size the workloads allocate in" },
	{ "iters", VS_U32, &sp.iters, "workload steps per run" },
	{ "points", VS_U32, &sp.points, "VRAM sizes, from all-fits down to 1/points of it" },
	{ "runs", VS_U32, &sp.runs, "runs per point (seed + run), averaged" },
	{ "instances", VS_U32, &sp.instances, "instances per workload, 1..16" },
	{ "workloads", VS_STR, &sp.workloads, "'all' or a comma list (stream,...)" },
	{ NULL, 0, NULL, NULL },
};

/* One host, n instances of w, fresh guests: the slower one's device time. */
static int run_point(struct vs_ctx *ctx, enum vgmem_workload w, uint64_t vram,
		     uint64_t chunk, enum vg_chunk_policy pol, uint64_t seed,
		     uint64_t *slow_ns, uint64_t *host_bytes)
{
	struct vs_instance in[16];
	struct vg_host *h;
	char name[32];
	unsigned int i;
	int err;

	err = vs_host_create(ctx, vram, chunk, pol, false, seed, &h);
	if (err)
		return err;
	memset(in, 0, sizeof(in));
	for (i = 0; i < sp.instances; i++) {
		snprintf(name, sizeof(name), "%s%u", vgmem_workload_name(w), i + 1);
		err = vg_host_guest_create(h, name, 0, 0, &in[i].g);
		if (err) {
			fprintf(stderr, "vgmem-sim: slowdown: guest %s: %s\n",
				name, strerror(-err));
			goto out;
		}
		in[i].wl = w;
		in[i].ws = sp.ws;
		in[i].bo_size = sp.bo_size;
		in[i].iters = sp.iters;
		in[i].seed = seed * 1000 + i;
	}
	err = vs_run_instances(in, sp.instances);
	if (err) {
		for (i = 0; i < sp.instances; i++)
			if (in[i].err)
				fprintf(stderr, "vgmem-sim: slowdown: %s instance %u "
					"at %.0f MiB: %s failed: %s\n",
					vgmem_workload_name(w), i + 1, vs_mib(vram),
					in[i].failed, strerror(-in[i].err));
		goto out;
	}
	*slow_ns = 0;
	*host_bytes = 0;
	for (i = 0; i < sp.instances; i++) {
		if (in[i].cost.device_ns > *slow_ns)
			*slow_ns = in[i].cost.device_ns;
		*host_bytes += in[i].cost.bytes_host;
	}
out:
	for (i = 0; i < sp.instances; i++)
		if (in[i].g)
			vg_host_guest_destroy(in[i].g);
	vg_host_destroy(h);
	return err;
}

struct curve {
	double vram_mib[64];
	double mean[64];
	double sd[64];
};

static int write_workload_svg(struct vs_ctx *ctx, enum vgmem_workload w,
			      struct curve *cv, const bool *pols, uint32_t npts)
{
	char title[128], file[64], path[4200];
	struct svg_plot p;
	uint32_t k;
	int pol, s, err;

	snprintf(title, sizeof(title), "Slowdown of %s (slower of %u instances)",
		 vgmem_workload_name(w), sp.instances);
	svg_init(&p, title, "VRAM available (MiB)", "device time / all-in-VRAM");
	p.x_from_zero = true;
	for (pol = 0; pol < VG_POLICY_NR; pol++) {
		if (!pols[pol])
			continue;
		s = svg_add_series(&p, vg_policy_name((enum vg_chunk_policy)pol),
				   SVG_LINE);
		for (k = 0; k < npts; k++)
			svg_add_point(&p, s, cv[pol].vram_mib[k], cv[pol].mean[k]);
	}
	s = svg_add_series(&p, "no slowdown", SVG_LINE);
	svg_add_point(&p, s, 0, 1.0);
	svg_add_point(&p, s, cv[0].vram_mib[0] > 0 ? cv[0].vram_mib[0] :
		      cv[1].vram_mib[0] > 0 ? cv[1].vram_mib[0] : cv[2].vram_mib[0], 1.0);
	snprintf(file, sizeof(file), "slowdown_%s.svg", vgmem_workload_name(w));
	err = svg_write(&p, vs_path(ctx, file, path, sizeof(path)));
	if (err)
		fprintf(stderr, "vgmem-sim: cannot write %s: %s\n", path,
			strerror(-err));
	svg_free(&p);
	return err;
}

static int slowdown_check(struct vs_ctx *ctx)
{
	unsigned int wmask;

	(void)ctx;
	if (vs_parse_workloads(sp.workloads, &wmask)) {
		fprintf(stderr, "vgmem-sim: slowdown: bad --workloads '%s' (all, or "
			"a comma list of stream, strided, gather, hotcold)\n",
			sp.workloads);
		return -EINVAL;
	}
	if (sp.points < 1 || sp.points > 64 || sp.runs < 1 ||
	    sp.instances < 1 || sp.instances > 16 || sp.ws < sp.bo_size ||
	    sp.bo_size % VGMEM_PAGE_SIZE) {
		fprintf(stderr, "vgmem-sim: slowdown: need 1..64 points, runs >= 1, "
			"1..16 instances, ws >= bo-size, bo-size a multiple of 4K\n");
		return -EINVAL;
	}
	return 0;
}

static int slowdown_run(struct vs_ctx *ctx)
{
	uint64_t chunk = ctx->c.chunk_size ? ctx->c.chunk_size : VG_CHUNK_DEFAULT;
	uint64_t full, base_vram, slow, hostb, base_ns;
	unsigned int wmask;
	bool pols[VG_POLICY_NR] = { false };
	struct curve *cv = NULL;
	uint32_t npol = 0, done = 0, total, k, run;
	json_t *res, *params;
	FILE *csv;
	int w, pol, err = 0;

	if (vs_parse_workloads(sp.workloads, &wmask))
		return -EINVAL;	/* slowdown_check said why */
	for (pol = 0; pol < VG_POLICY_NR; pol++) {
		pols[pol] = !ctx->c.policy_set || ctx->c.policy == (enum vg_chunk_policy)pol;
		npol += pols[pol];
	}
	/* "All fits": every instance's working set plus slack for rounding. */
	full = ctx->c.vram ? ctx->c.vram :
	       sp.instances * (sp.ws + sp.bo_size) + 4 * chunk;
	full = (full + VGMEM_PAGE_SIZE - 1) & ~(VGMEM_PAGE_SIZE - 1);
	base_vram = 2 * full;
	cv = calloc(VG_POLICY_NR, sizeof(*cv));
	csv = vs_open(ctx, "slowdown.csv");
	if (!cv || !csv) {
		err = cv ? -EIO : -ENOMEM;
		goto out;
	}
	fprintf(csv, "workload,policy,vram,run,slower_device_ns,baseline_device_ns,"
		"slowdown,host_bytes\n");
	res = json_object();
	json_object_set_new(ctx->summary, "result", res);
	total = (uint32_t)__builtin_popcount(wmask) * (1 + npol * sp.points * sp.runs);

	for (w = 0; w < VGMEM_WL_NR; w++) {
		json_t *jw;

		if (!(wmask & (1u << w)))
			continue;
		err = run_point(ctx, (enum vgmem_workload)w, base_vram, chunk,
				VG_POLICY_RANDOM, ctx->c.seed, &base_ns, &hostb);
		if (err)
			goto out;
		done++;
		if (!base_ns)
			base_ns = 1;
		jw = json_object();
		json_object_set_new(jw, "baseline_device_ns", json_integer((json_int_t)base_ns));
		json_object_set_new(res, vgmem_workload_name((enum vgmem_workload)w), jw);
		for (pol = 0; pol < VG_POLICY_NR; pol++) {
			json_t *jp;

			if (!pols[pol])
				continue;
			jp = json_array();
			json_object_set_new(jw, vg_policy_name((enum vg_chunk_policy)pol), jp);
			for (k = 0; k < sp.points; k++) {
				/* Shrinking: full, (n-1)/n ... 1/n of it. */
				uint64_t vram = full * (sp.points - k) / sp.points;
				double sum = 0, sum2 = 0, sd;
				json_t *pt;

				vram &= ~(VGMEM_PAGE_SIZE - 1);
				if (vram < VGMEM_PAGE_SIZE)
					vram = VGMEM_PAGE_SIZE;
				for (run = 0; run < sp.runs; run++) {
					double sl;

					err = run_point(ctx, (enum vgmem_workload)w, vram,
							chunk, (enum vg_chunk_policy)pol,
							ctx->c.seed + run, &slow, &hostb);
					if (err)
						goto out;
					sl = (double)slow / base_ns;
					sum += sl;
					sum2 += sl * sl;
					fprintf(csv, "%s,%s,%llu,%u,%llu,%llu,%.4f,%llu\n",
						vgmem_workload_name((enum vgmem_workload)w),
						vg_policy_name((enum vg_chunk_policy)pol),
						(unsigned long long)vram, run,
						(unsigned long long)slow,
						(unsigned long long)base_ns, sl,
						(unsigned long long)hostb);
					done++;
					vs_progress(ctx, (double)done / total,
						    "%s %s vram=%.0fMiB slowdown=%.2f",
						    vgmem_workload_name((enum vgmem_workload)w),
						    vg_policy_name((enum vg_chunk_policy)pol),
						    vs_mib(vram), sl);
				}
				cv[pol].vram_mib[k] = vs_mib(vram);
				cv[pol].mean[k] = sum / sp.runs;
				sd = sum2 / sp.runs - cv[pol].mean[k] * cv[pol].mean[k];
				cv[pol].sd[k] = sd > 0 ? sqrt(sd) : 0;
				pt = json_object();
				json_object_set_new(pt, "vram", json_integer((json_int_t)vram));
				json_object_set_new(pt, "slowdown", json_real(cv[pol].mean[k]));
				json_object_set_new(pt, "stddev", json_real(cv[pol].sd[k]));
				json_array_append_new(jp, pt);
			}
		}
		err = write_workload_svg(ctx, (enum vgmem_workload)w, cv, pols,
					 sp.points);
		if (err)
			goto out;
		vs_info(ctx, "%-8s baseline %8.2f ms |", vgmem_workload_name((enum vgmem_workload)w),
			base_ns / 1e6);
		for (pol = 0; pol < VG_POLICY_NR; pol++)
			if (pols[pol])
				vs_info(ctx, " %s: %.2fx@%.0fM %.2fx@%.0fM",
					vg_policy_name((enum vg_chunk_policy)pol),
					cv[pol].mean[sp.points / 2], cv[pol].vram_mib[sp.points / 2],
					cv[pol].mean[sp.points - 1], cv[pol].vram_mib[sp.points - 1]);
		vs_info(ctx, "\n");
	}
	vs_progress(ctx, 1.0, "done");
	params = json_object();
	vs_json_common(ctx, params, chunk, full);
	json_object_set_new(params, "ws", json_integer((json_int_t)sp.ws));
	json_object_set_new(params, "bo_size", json_integer((json_int_t)sp.bo_size));
	json_object_set_new(params, "iters", json_integer(sp.iters));
	json_object_set_new(params, "points", json_integer(sp.points));
	json_object_set_new(params, "runs", json_integer(sp.runs));
	json_object_set_new(params, "instances", json_integer(sp.instances));
	json_object_set_new(params, "baseline_vram", json_integer((json_int_t)base_vram));
	json_object_set_new(ctx->summary, "params", params);
	vs_info(ctx, "plots: %s/slowdown_<workload>.svg, table: %s/slowdown.csv\n",
		ctx->out, ctx->out);
out:
	if (csv)
		fclose(csv);
	free(cv);
	return err;
}

const struct vs_scenario vs_slowdown = {
	.name = "slowdown",
	.summary = "workload slowdown as VRAM shrinks, per policy (GPUswap 6.3, Figure 5)",
	.description =
	"For each workload (vgmem_workload_run kinds), --instances instances (default\n"
	"two, as in the paper) run at once on fresh guests while the GPU's VRAM\n"
	"shrinks in --points steps from 'all fits' (--vram, default the instances'\n"
	"working sets plus slack) down to 1/points of it. For each chunk policy\n"
	"(all three, or only --policy) the slowdown is the slower instance's\n"
	"simulated device time (sim cost model) over the same run on a GPU with\n"
	"twice the all-fits VRAM. With --runs > 1 each point averages runs with\n"
	"seeds seed..seed+runs-1 and reports the standard deviation. The return\n"
	"worker runs at its default interval.",
	.outputs =
	"  slowdown.csv             workload, policy, vram, run, device times, slowdown\n"
	"  slowdown_<workload>.svg  slowdown against VRAM, a line per policy\n"
	"  summary.json             baseline and per-point mean and stddev",
	.uses_policy = true,
	.params = slowdown_params,
	.check = slowdown_check,
	.run = slowdown_run,
};
