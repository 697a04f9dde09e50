// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmem-sim: runs GPUswap's experiments (and a demo) against the userspace
 * host, writing CSV, JSON and SVG. Command line: a scenario name, then the
 * common options and the scenario's own. Exit status: 0 success, 1 the run
 * failed, 2 bad usage.
 */
#include "vgsim.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct vs_scenario *const scenarios[] = {
	&vs_fairness, &vs_slowdown, &vs_delay, &vs_demo, &vs_compare,
	&vs_cloudday, &vs_replay,
};
#define NR_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

enum {
	OPT_HELP = 1000, OPT_OUT, OPT_SEED, OPT_POLICY, OPT_CHUNK, OPT_VRAM,
	OPT_QUIET, OPT_PARAM = 2000,
};

static void usage_tool(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: vgmem-sim <scenario> [options]\n"
		"       vgmem-sim <scenario> --help\n"
		"\n"
		"Runs vgmem's core and software GPU in one process with simulated\n"
		"guests and writes CSV, summary.json and SVG plots.\n"
		"\nscenarios:\n");
	for (i = 0; i < NR_SCENARIOS; i++)
		fprintf(f, "  %-10s %s\n", scenarios[i]->name, scenarios[i]->summary);
	fprintf(f,
		"\ncommon options:\n"
		"  --out DIR          output directory, created (default: out/<scenario>)\n"
		"  --seed N           seed of the reducer and the workloads (default 1)\n"
		"  --policy P         chunk policy: random, lra or cold (where it applies;\n"
		"                     default cold; random is GPUswap's, the baseline)\n"
		"  --chunk-size SIZE  chunk size, power of two, 64K..64M\n"
		"  --vram SIZE        VRAM of the simulated GPU\n"
		"  --quiet            no progress or tables, only errors\n"
		"  --help             this text, or a scenario's with a scenario\n"
		"\nmodels (compare, cloud-day and replay --models; 'all' runs every one):\n"
		"  vgmem:policy=random|lra|cold  the core: GPUswap relocation, chunk policy\n"
		"  static                        fixed VRAM partitions (vGPU profiles, MIG)\n"
		"  admission                     quotas may oversubscribe; VRAM full fails\n"
		"  swsched                       Gdev-style mediation and working-set swap\n"
		"  paging:gran=64k|2m            UVM-style demand paging, global LRU\n"
		"  oracle                        the offline optimum: Belady's MIN over\n"
		"                                chunks, knowing the whole trace\n"
		"  oracle:evict=weighted         MIN only among VMs above their fair share\n"
		"\nSIZE takes K, M, G suffixes (binary: 32M = 32 MiB). See docs/vgmem-sim.md.\n");
}

static const char *ptype_meta(enum vs_ptype t)
{
	switch (t) {
	case VS_SIZE: return "SIZE";
	case VS_U32: return "N";
	case VS_DOUBLE: return "X";
	case VS_STR: return "STR";
	}
	return "?";
}

static void param_default(const struct vs_param *p, char *buf, size_t len)
{
	switch (p->type) {
	case VS_SIZE: {
		uint64_t v = *(uint64_t *)p->ptr;

		if (!v)
			snprintf(buf, len, "auto");
		else if (!(v & ((1ull << 20) - 1)))
			snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
		else if (!(v & ((1ull << 10) - 1)))
			snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
		else
			snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	}
	case VS_U32:
		snprintf(buf, len, "%u", *(uint32_t *)p->ptr);
		break;
	case VS_DOUBLE:
		snprintf(buf, len, "%g", *(double *)p->ptr);
		break;
	case VS_STR:
		snprintf(buf, len, "%s", *(const char **)p->ptr ?
			 *(const char **)p->ptr : "");
		break;
	}
}

static void usage_scenario(FILE *f, const struct vs_scenario *sc)
{
	const struct vs_param *p;
	char meta[64], def[64];

	fprintf(f, "usage: vgmem-sim %s [options]\n\n%s\n\n%s\n",
		sc->name, sc->summary, sc->description);
	fprintf(f, "\noptions:\n");
	for (p = sc->params; p && p->name; p++) {
		snprintf(meta, sizeof(meta), "--%s %s", p->name, ptype_meta(p->type));
		param_default(p, def, sizeof(def));
		fprintf(f, "  %-24s %s (default %s)\n", meta, p->help, def);
	}
	fprintf(f, "  %-24s %s\n", "--out DIR", "output directory, created");
	fprintf(f, "  %-24s %s\n", "--seed N", "seed (default 1)");
	if (sc->uses_policy)
		fprintf(f, "  %-24s %s\n", "--policy P",
			"chunk policy random|lra|cold (see description)");
	fprintf(f, "  %-24s %s\n", "--chunk-size SIZE", "chunk size (64K..64M)");
	fprintf(f, "  %-24s %s\n", "--vram SIZE", "VRAM of the simulated GPU");
	fprintf(f, "  %-24s %s\n", "--quiet", "no progress or tables");
	fprintf(f, "\noutputs (in --out):\n%s\n", sc->outputs);
}

static int bad_usage(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "vgmem-sim: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\nTry 'vgmem-sim --help'.\n");
	return 2;
}

static int set_param(const struct vs_param *p, const char *val)
{
	uint64_t v;
	char *end;
	double d;

	switch (p->type) {
	case VS_SIZE:
		if (vs_parse_size(val, &v) || v == 0)
			return -EINVAL;
		*(uint64_t *)p->ptr = v;
		return 0;
	case VS_U32:
		if (vs_parse_u64(val, &v) || v > UINT32_MAX)
			return -EINVAL;
		*(uint32_t *)p->ptr = (uint32_t)v;
		return 0;
	case VS_DOUBLE:
		errno = 0;
		d = strtod(val, &end);
		if (errno || end == val || *end || !(d >= 0))
			return -EINVAL;
		*(double *)p->ptr = d;
		return 0;
	case VS_STR:
		*(const char **)p->ptr = val;
		return 0;
	}
	return -EINVAL;
}

static int parse(int argc, char **argv, struct vs_ctx *ctx)
{
	const struct vs_scenario *sc = ctx->sc;
	struct option opts[64];
	size_t n = 0, np = 0;
	const struct vs_param *p;
	uint64_t v;
	int c;

	static const struct option common[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "chunk-size", required_argument, NULL, OPT_CHUNK },
		{ "vram", required_argument, NULL, OPT_VRAM },
		{ "quiet", no_argument, NULL, OPT_QUIET },
	};

	for (n = 0; n < sizeof(common) / sizeof(common[0]); n++)
		opts[n] = common[n];
	for (p = sc->params; p && p->name && n < 62; p++, np++, n++) {
		opts[n].name = p->name;
		opts[n].has_arg = required_argument;
		opts[n].flag = NULL;
		opts[n].val = OPT_PARAM + (int)np;
	}
	memset(&opts[n], 0, sizeof(opts[n]));

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *arg = optarg;

		switch (c) {
		case 'h':
		case OPT_HELP:
			usage_scenario(stdout, sc);
			return 1;
		case OPT_OUT:
			ctx->c.out = arg;
			break;
		case OPT_SEED:
			if (vs_parse_u64(arg, &ctx->c.seed))
				return bad_usage("--seed: '%s' is not a number%s",
						 arg, "");
			break;
		case OPT_POLICY:
			if (!sc->uses_policy)
				return bad_usage("--policy does not apply to %s%s",
						 sc->name, "");
			if (vg_policy_parse(arg, &ctx->c.policy))
				return bad_usage("--policy: '%s' is not one of "
						 "random, lra, cold%s", arg, "");
			ctx->c.policy_set = true;
			break;
		case OPT_CHUNK:
			if (vs_parse_size(arg, &v) || v < VG_CHUNK_MIN ||
			    v > VG_CHUNK_MAX || (v & (v - 1)))
				return bad_usage("--chunk-size: '%s' is not a power "
						 "of two in 64K..64M%s", arg, "");
			ctx->c.chunk_size = v;
			break;
		case OPT_VRAM:
			if (vs_parse_size(arg, &v) || v == 0 ||
			    v % VGMEM_PAGE_SIZE)
				return bad_usage("--vram: '%s' is not a positive "
						 "multiple of 4K%s", arg, "");
			ctx->c.vram = v;
			break;
		case OPT_QUIET:
			ctx->c.quiet = true;
			break;
		case '?': {
			char shortopt[3] = { '-', (char)optopt, 0 };

			if (optopt > 0 && optopt < 256)
				return bad_usage("%s: unknown option %s", sc->name,
						 shortopt);
			if (optopt >= OPT_HELP)
				return bad_usage("%s: option %s needs a value",
						 sc->name, argv[optind - 1]);
			return bad_usage("%s: unknown option %s", sc->name,
					 argv[optind - 1]);
		}
		default:
			if (c >= OPT_PARAM && c < OPT_PARAM + (int)np) {
				p = &sc->params[c - OPT_PARAM];
				if (set_param(p, arg))
					return bad_usage("--%s: bad value '%s'",
							 p->name, arg);
				break;
			}
			return bad_usage("%s: cannot parse options%s", sc->name, "");
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'%s", argv[optind], "");
	return 0;
}

int main(int argc, char **argv)
{
	struct vs_ctx ctx;
	size_t i;
	int err;

	if (argc < 2) {
		usage_tool(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage_tool(stdout);
		return 0;
	}
	memset(&ctx, 0, sizeof(ctx));
	for (i = 0; i < NR_SCENARIOS; i++)
		if (!strcmp(argv[1], scenarios[i]->name))
			ctx.sc = scenarios[i];
	if (!ctx.sc) {
		fprintf(stderr, "vgmem-sim: unknown scenario '%s'\n\n", argv[1]);
		usage_tool(stderr);
		return 2;
	}
	ctx.c.seed = 1;
	err = parse(argc - 1, argv + 1, &ctx);
	if (err == 1)
		return 0;	/* --help */
	if (err)
		return err;

	if (ctx.sc->check && ctx.sc->check(&ctx)) {
		fprintf(stderr, "Try 'vgmem-sim %s --help'.\n", ctx.sc->name);
		return 2;
	}
	if (ctx.c.out)
		snprintf(ctx.out, sizeof(ctx.out), "%s", ctx.c.out);
	else
		snprintf(ctx.out, sizeof(ctx.out), "out/%s", ctx.sc->name);
	while (strlen(ctx.out) > 1 && ctx.out[strlen(ctx.out) - 1] == '/')
		ctx.out[strlen(ctx.out) - 1] = 0;
	err = vs_mkdir_p(ctx.out);
	if (err) {
		fprintf(stderr, "vgmem-sim: cannot create %s: %s\n", ctx.out,
			strerror(-err));
		return 1;
	}
	ctx.summary = json_object();
	json_object_set_new(ctx.summary, "scenario", json_string(ctx.sc->name));
	err = ctx.sc->run(&ctx);
	json_object_set_new(ctx.summary, "ok", json_boolean(err == 0));
	if (vs_write_summary(&ctx) && !err)
		err = -EIO;
	json_decref(ctx.summary);
	if (err) {
		fprintf(stderr, "vgmem-sim: %s failed: %s\n", ctx.sc->name,
			strerror(err < 0 ? -err : err));
		return 1;
	}
	return 0;
}
