// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * demo: what `make run` shows. The fairness scenario with its defaults,
 * then a short mixed run: several guests, each running a different
 * built-in workload at once on a GPU with about half the VRAM they want,
 * each checking a canary BO by checksum afterwards. The same guests run
 * first on a roomy GPU for the baseline of the slowdown column.
 */
#include "runner.h"
#include "svg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MIXED 8

static struct {
	uint32_t guests;
	uint64_t ws;
	uint32_t iters;
	uint32_t fairness;
} mp = {
	.guests = 4,
	.ws = 40ull << 20,
	.iters = 4,
	.fairness = 1,
};

static struct vs_param demo_params[] = {
	{ "guests", VS_U32, &mp.guests, "mixed-run guests, 1..8 (workloads cycle)" },
	{ "ws", VS_SIZE, &mp.ws, "working set per mixed-run guest" },
	{ "iters", VS_U32, &mp.iters, "workload steps per mixed-run guest" },
	{ "fairness", VS_U32, &mp.fairness, "1: run the fairness scenario first" },
	{ NULL, 0, NULL, NULL },
};

#define CANARY (4ull << 20)

struct sampler {
	struct vs_instance *in;
	unsigned int n;
	double t0;
	FILE *csv;
	struct svg_plot res;
	int series[MAX_MIXED];
};

static void sample(void *p)
{
	struct sampler *s = p;
	struct vgmem_vm_stats st;
	double t = vs_now() - s->t0;
	unsigned int i;

	fprintf(s->csv, "%.4f", t);
	for (i = 0; i < s->n; i++) {
		vg_vm_get_stats(vg_host_guest_vm(s->in[i].g), &st);
		fprintf(s->csv, ",%llu,%llu", (unsigned long long)st.resident,
			(unsigned long long)st.relocated);
		svg_add_point(&s->res, s->series[i], t, vs_mib(st.resident));
	}
	fputc('\n', s->csv);
}

static int run_mixed(struct vs_ctx *ctx, uint64_t vram, uint64_t chunk,
		     enum vg_chunk_policy pol, struct vs_instance *in,
		     struct sampler *smp, struct vgmem_vm_stats *st,
		     bool *consistent)
{
	struct vg_host *h;
	char name[32];
	unsigned int i;
	int err;

	err = vs_host_create(ctx, vram, chunk, pol, true, ctx->c.seed, &h);
	if (err)
		return err;
	for (i = 0; i < mp.guests; i++) {
		in[i].g = NULL;
		snprintf(name, sizeof(name), "vm%u-%s", i + 1,
			 vgmem_workload_name(in[i].wl));
		err = vg_host_guest_create(h, name, 0, 0, &in[i].g);
		if (err) {
			fprintf(stderr, "vgmem-sim: demo: guest %s: %s\n", name,
				strerror(-err));
			goto out;
		}
	}
	if (smp) {
		smp->t0 = vs_now();
		err = vs_run_instances_sampled(in, mp.guests, sample, smp, 10);
	} else {
		err = vs_run_instances(in, mp.guests);
	}
	for (i = 0; i < mp.guests; i++) {
		if (in[i].err)
			fprintf(stderr, "vgmem-sim: demo: %s: %s failed: %s\n",
				vg_vm_name(vg_host_guest_vm(in[i].g)), in[i].failed,
				strerror(-in[i].err));
		if (st)
			vg_vm_get_stats(vg_host_guest_vm(in[i].g), &st[i]);
	}
	*consistent = vg_gpu_check(vg_host_gpu(h)) == 0;
out:
	for (i = 0; i < mp.guests; i++)
		if (in[i].g)
			vg_host_guest_destroy(in[i].g);
	vg_host_destroy(h);
	return err;
}

static int demo_fairness(struct vs_ctx *ctx)
{
	struct vs_ctx sub = *ctx;
	int err;

	sub.sc = &vs_fairness;
	sub.c.chunk_size = 0;
	sub.c.vram = 0;
	if (strlen(ctx->out) + sizeof("/fairness") > sizeof(sub.out))
		return -ENAMETOOLONG;
	memcpy(sub.out, ctx->out, strlen(ctx->out));
	strcpy(sub.out + strlen(ctx->out), "/fairness");
	err = vs_mkdir_p(sub.out);
	if (err) {
		fprintf(stderr, "vgmem-sim: cannot create %s: %s\n", sub.out,
			strerror(-err));
		return err;
	}
	sub.summary = json_object();
	json_object_set_new(sub.summary, "scenario", json_string("fairness"));
	err = vs_fairness.run(&sub);
	json_object_set_new(sub.summary, "ok", json_boolean(err == 0));
	if (!vs_write_summary(&sub))
		json_object_set(ctx->summary, "fairness", sub.summary);
	json_decref(sub.summary);
	return err;
}

static void print_table(struct vs_ctx *ctx, struct vs_instance *base,
			struct vs_instance *in, struct vgmem_vm_stats *st,
			json_t *arr)
{
	unsigned int i;

	vs_info(ctx, "\n%-14s %8s %11s %11s %8s %8s %9s %6s\n", "guest", "ws MiB",
		"device ms", "alone ms", "slowdown", "suspends", "out MiB", "data");
	for (i = 0; i < mp.guests; i++) {
		double sl = base[i].cost.device_ns ?
			    (double)in[i].cost.device_ns / base[i].cost.device_ns : 0;
		json_t *o = json_object();

		vs_info(ctx, "vm%u-%-10s %8.0f %11.2f %11.2f %7.2fx %8llu %9.1f %6s\n",
			i + 1, vgmem_workload_name(in[i].wl), vs_mib(in[i].ws),
			in[i].cost.device_ns / 1e6, base[i].cost.device_ns / 1e6,
			sl, (unsigned long long)st[i].suspends, vs_mib(st[i].bytes_out),
			in[i].canary_ok ? "ok" : "BAD");
		json_object_set_new(o, "workload", json_string(vgmem_workload_name(in[i].wl)));
		json_object_set_new(o, "device_ns", json_integer((json_int_t)in[i].cost.device_ns));
		json_object_set_new(o, "baseline_device_ns",
				    json_integer((json_int_t)base[i].cost.device_ns));
		json_object_set_new(o, "slowdown", json_real(sl));
		json_object_set_new(o, "suspends", json_integer((json_int_t)st[i].suspends));
		json_object_set_new(o, "bytes_out", json_integer((json_int_t)st[i].bytes_out));
		json_object_set_new(o, "bytes_in", json_integer((json_int_t)st[i].bytes_in));
		json_object_set_new(o, "canary_ok", json_boolean(in[i].canary_ok));
		json_array_append_new(arr, o);
	}
}

static int demo_check(struct vs_ctx *ctx)
{
	uint64_t chunk = ctx->c.chunk_size ? ctx->c.chunk_size : VG_CHUNK_DEFAULT;

	if (mp.guests < 1 || mp.guests > MAX_MIXED || mp.ws < chunk ||
	    mp.ws % VGMEM_PAGE_SIZE) {
		fprintf(stderr, "vgmem-sim: demo: need 1..8 guests and --ws of at "
			"least a chunk, a multiple of 4K\n");
		return -EINVAL;
	}
	return 0;
}

static int demo_run(struct vs_ctx *ctx)
{
	struct vs_instance base[MAX_MIXED], in[MAX_MIXED];
	struct vgmem_vm_stats st[MAX_MIXED];
	uint64_t chunk = ctx->c.chunk_size ? ctx->c.chunk_size : VG_CHUNK_DEFAULT;
	uint64_t want, vram;
	enum vg_chunk_policy pol = ctx->c.policy_set ? ctx->c.policy : VG_POLICY_COLD;
	struct sampler smp;
	char path[4200], name[48];
	bool cons_base = false, cons = false, all_ok = true;
	json_t *mixed, *arr;
	unsigned int i;
	int err;

	if (mp.fairness) {
		vs_info(ctx, "== fairness (GPUswap 6.2) ==\n");
		err = demo_fairness(ctx);
		if (err)
			return err;
	}

	memset(in, 0, sizeof(in));
	for (i = 0; i < mp.guests; i++) {
		in[i].wl = (enum vgmem_workload)(i % VGMEM_WL_NR);
		in[i].ws = mp.ws;
		in[i].bo_size = chunk * 2 < mp.ws ? chunk * 2 : mp.ws;
		in[i].iters = mp.iters;
		in[i].seed = ctx->c.seed * 100 + i;
		in[i].canary = CANARY;
	}
	memcpy(base, in, sizeof(in));
	want = mp.guests * (mp.ws + CANARY + 2 * chunk);
	vram = ctx->c.vram ? ctx->c.vram : (want / 2) & ~(chunk - 1);
	vs_info(ctx, "\n== mixed: %u guests, %.0f MiB wanted, %.0f MiB VRAM, chunk %.0f MiB, policy %s ==\n",
		mp.guests, vs_mib(want), vs_mib(vram), vs_mib(chunk), vg_policy_name(pol));

	vs_progress(ctx, 0.0, "mixed: baseline run (VRAM %.0f MiB)", vs_mib(2 * want));
	err = run_mixed(ctx, 2 * want, chunk, pol, base, NULL, NULL, &cons_base);
	if (err)
		return err;

	memset(&smp, 0, sizeof(smp));
	smp.in = in;
	smp.n = mp.guests;
	svg_init(&smp.res, "Mixed run: VRAM held per VM", "time (s, wall)",
		 "resident (MiB)");
	smp.csv = vs_open(ctx, "mixed.csv");
	if (!smp.csv) {
		svg_free(&smp.res);
		return -EIO;
	}
	fprintf(smp.csv, "t_s");
	for (i = 0; i < mp.guests; i++) {
		snprintf(name, sizeof(name), "vm%u-%s", i + 1, vgmem_workload_name(in[i].wl));
		smp.series[i] = svg_add_series(&smp.res, name, SVG_LINE);
		fprintf(smp.csv, ",%s_resident,%s_relocated", name, name);
	}
	fputc('\n', smp.csv);
	vs_progress(ctx, 0.5, "mixed: pressured run (VRAM %.0f MiB)", vs_mib(vram));
	err = run_mixed(ctx, vram, chunk, pol, in, &smp, st, &cons);
	fclose(smp.csv);
	if (!err)
		err = svg_write(&smp.res, vs_path(ctx, "mixed_resident.svg", path,
						  sizeof(path)));
	svg_free(&smp.res);
	if (err)
		return err;
	vs_progress(ctx, 1.0, "mixed: done");

	mixed = json_object();
	arr = json_array();
	print_table(ctx, base, in, st, arr);
	for (i = 0; i < mp.guests; i++)
		all_ok &= in[i].canary_ok && base[i].canary_ok;
	json_object_set_new(mixed, "guests", arr);
	json_object_set_new(mixed, "vram", json_integer((json_int_t)vram));
	json_object_set_new(mixed, "chunk_size", json_integer((json_int_t)chunk));
	json_object_set_new(mixed, "policy", json_string(vg_policy_name(pol)));
	json_object_set_new(mixed, "data_ok", json_boolean(all_ok));
	json_object_set_new(mixed, "consistent", json_boolean(cons && cons_base));
	json_object_set_new(ctx->summary, "mixed", mixed);

	vs_info(ctx, "\ndata checks: %s; accounting consistent: %s\n",
		all_ok ? "all ok" : "FAILED", cons && cons_base ? "yes" : "NO");
	vs_info(ctx, "plots:  %s/fairness/fairness_resident.svg\n"
		"        %s/fairness/fairness_relocated.svg\n"
		"        %s/mixed_resident.svg\n"
		"tables: %s/fairness/fairness.csv %s/mixed.csv, summary: %s/summary.json\n",
		ctx->out, ctx->out, ctx->out, ctx->out, ctx->out, ctx->out);
	if (!all_ok || !cons || !cons_base)
		return -EIO;
	return 0;
}

const struct vs_scenario vs_demo = {
	.name = "demo",
	.summary = "fairness plus a short mixed run with data checks (make run)",
	.description =
	"Runs the fairness scenario with its defaults (into DIR/fairness), then a\n"
	"mixed run: --guests guests, each running a different built-in workload\n"
	"(stream, strided, gather, hotcold, cycling) on --ws bytes at once, on a GPU\n"
	"with about half the VRAM they want (or --vram), chunk 2M (or --chunk-size).\n"
	"Each guest fills a 4 MiB canary BO with a pattern before its workload and\n"
	"checks it by GPU checksum after. The same guests first run on a GPU with\n"
	"room for all, for the slowdown column. Prints a table; fails (exit 1) if a\n"
	"canary or the core's accounting check fails.",
	.outputs =
	"  fairness/            the fairness scenario's outputs\n"
	"  mixed.csv            resident and relocated bytes per VM, sampled every 10 ms\n"
	"  mixed_resident.svg   VRAM per VM over wall time\n"
	"  summary.json         both runs' results",
	.uses_policy = true,
	.params = demo_params,
	.check = demo_check,
	.run = demo_run,
};
