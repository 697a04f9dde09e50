// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The commands that show: health, the GPUs, the VMs (filtered by GPU and
 * state, as a table, JSON or CSV, once or --watch) and one VM in detail
 * with its histograms.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

int cmd_health(struct ctl *c)
{
	json_t *j;
	int ret = ctl_get_json(c, "/healthz", &j);

	if (ret || !j)
		return ret;
	printf("status     %s\nversion    %s\nbackend    %s\nlibvirt    %s (%s)\n"
	       "gpus       %" PRIu64 "\nvms        %" PRIu64 "\nlast event %" PRIu64 "\n",
	       js(j, "status"), js(j, "version"), js(j, "backend"),
	       js(j, "libvirt_uri")[0] ? js(j, "libvirt_uri") : "off",
	       json_is_true(json_object_get(j, "libvirt_connected")) ?
	       "connected" : "not connected",
	       ju(j, "gpus"), ju(j, "vms"), ju(j, "last_event_id"));
	json_decref(j);
	return 0;
}

static void print_gpu(json_t *g, bool detail)
{
	char v[16], u[16], h[16], b[16], e[16], fc[16];

	if (!detail) {
		printf("%3" PRId64 " %-12.12s %8s %8s %8s %8s %8s %4" PRIu64 " %5" PRIu64 "%% %-6s %s\n",
		       (int64_t)json_integer_value(json_object_get(g, "index")), js(g, "name"),
		       human(ju(g, "vram_size"), v, 16), human(ju(g, "vram_used"), u, 16),
		       human(ju(g, "cache_used"), fc, 16),
		       human(ju(g, "host_used"), h, 16), human(ju(g, "entitled"), e, 16),
		       ju(g, "nr_vms"), ju(g, "oversub_pct"), js(g, "policy"),
		       json_is_true(json_object_get(g, "contended")) ? "contended" : "");
		return;
	}
	printf("gpu %" PRId64 " (%s)\n", (int64_t)json_integer_value(json_object_get(g, "index")),
	       js(g, "name"));
	/* a budget of 0 is no limit (mgmtd.md, embedded_host_budget) */
	printf("  vram %s, used %s, file cache %s; host RAM used %s of budget %s\n",
	       human(ju(g, "vram_size"), v, 16), human(ju(g, "vram_used"), u, 16),
	       human(ju(g, "cache_used"), fc, 16),
	       human(ju(g, "host_used"), h, 16),
	       ju(g, "host_budget") ? human(ju(g, "host_budget"), b, 16) : "unlimited");
	printf("  policy %s, return interval %" PRIu64 " ms, oversubscription %" PRIu64 "%%, %" PRIu64 " VMs\n",
	       js(g, "policy"), ju(g, "return_interval_ms"), ju(g, "oversub_pct"),
	       ju(g, "nr_vms"));
	printf("  entitled %s, spare %s, demand %s%s\n", human(ju(g, "entitled"), v, 16),
	       human(ju(g, "spare"), u, 16), human(ju(g, "demand"), h, 16),
	       json_is_true(json_object_get(g, "contended")) ? " (contended)" : "");
	print_gpu_stats(g);
}

int cmd_gpus(struct ctl *c, const char *index)
{
	char path[64];
	json_t *j, *g;
	size_t i;
	int ret;

	if (index) {
		if (strlen(index) > 10 || strspn(index, "0123456789") != strlen(index) || !*index)
			return usage_error("gpu: INDEX must be a number, not '%s'", index);
		snprintf(path, sizeof(path), "/v1/gpus/%s", index);
	}
	ret = ctl_get_json(c, index ? path : "/v1/gpus", &j);
	if (ret || !j)
		return ret;
	if (index) {
		print_gpu(j, true);
	} else {
		printf("%3s %-12s %8s %8s %8s %8s %8s %4s %6s %-6s\n", "GPU", "NAME", "VRAM",
		       "USED", "FCACHE", "HOST", "ENTITLED", "VMS", "OVSUB", "POLICY");
		json_array_foreach(json_object_get(j, "gpus"), i, g)
			print_gpu(g, false);
	}
	json_decref(j);
	return 0;
}

/* ---- vms ------------------------------------------------------------------ */

enum vms_output { OUT_TABLE, OUT_JSON, OUT_CSV };

struct vms_opts {
	const char *gpu;	/* NULL: every GPU */
	const char *state;	/* NULL: every state */
	enum vms_output out;
	unsigned int watch_s;	/* 0: once */
};

static void print_vm_row(json_t *vm)
{
	json_t *p = json_object_get(vm, "policy");
	json_t *u = json_object_get(vm, "usage");
	char q[16], e[16], r[16], h[16], fc[16];
	const char *name = js(vm, "name");

	printf("%-20.20s %-36s %3" PRId64 " %-9.9s %7s %7s %7s %7s %7s %6" PRIu64 " %4" PRIu64 " %s\n",
	       name[0] ? name : "-", js(vm, "id"),
	       (int64_t)json_integer_value(json_object_get(vm, "gpu")),
	       vm_state(vm),
	       human(ju(p, "quota"), q, sizeof(q)),
	       human(ju(vm, "entitlement"), e, sizeof(e)),
	       human(ju(u, "resident"), r, sizeof(r)),
	       human(ju(u, "relocated"), h, sizeof(h)),
	       human(ju(u, "cache_private"), fc, sizeof(fc)),
	       ju(p, "weight"), ju(p, "priority"),
	       json_is_true(json_object_get(vm, "advisory")) ? "MIGRATE" :
	       (js(vm, "error")[0] ? "ERROR" : ""));
}

/* A CSV field (RFC 4180): quoted when it holds a comma, quote or line end. */
static void csv_field(const char *s, bool last)
{
	if (strpbrk(s, ",\"\r\n")) {
		putchar('"');
		for (; *s; s++) {
			if (*s == '"')
				putchar('"');
			putchar(*s);
		}
		putchar('"');
	} else {
		fputs(s, stdout);
	}
	putchar(last ? '\n' : ',');
}

/* Sizes in plain bytes: a script's columns, not a person's. */
static void print_vm_csv(json_t *vm)
{
	static const char *const usage[] = { "allocated", "resident", "relocated",
					     "cache_private" };
	json_t *p = json_object_get(vm, "policy");
	json_t *u = json_object_get(vm, "usage");
	char n[32];
	size_t i;

	csv_field(js(vm, "name"), false);
	csv_field(js(vm, "id"), false);
	snprintf(n, sizeof(n), "%" PRId64,
		 (int64_t)json_integer_value(json_object_get(vm, "gpu")));
	csv_field(n, false);
	csv_field(vm_state(vm), false);
	snprintf(n, sizeof(n), "%" PRIu64, ju(p, "quota"));
	csv_field(n, false);
	snprintf(n, sizeof(n), "%" PRIu64, ju(vm, "entitlement"));
	csv_field(n, false);
	for (i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		snprintf(n, sizeof(n), "%" PRIu64, ju(u, usage[i]));
		csv_field(n, false);
	}
	snprintf(n, sizeof(n), "%" PRIu64, ju(p, "weight"));
	csv_field(n, false);
	snprintf(n, sizeof(n), "%" PRIu64, ju(p, "priority"));
	csv_field(n, false);
	csv_field(json_is_true(json_object_get(vm, "advisory")) ? "1" : "0", false);
	csv_field(js(vm, "error"), true);
}

/*
 * A libvirt domain mgmtd lists without managing it (GET /v1/vms'
 * "unmanaged": state unmanaged or rejected, and why): it has no GPU, no
 * policy and no usage, so its row has only its name, mdev, state and why.
 */
static void print_dom_row(json_t *d)
{
	printf("%-20.20s %-36s %3s %-9.9s %7s %7s %7s %7s %7s %6s %4s %s\n",
	       js(d, "name")[0] ? js(d, "name") : "-",
	       js(d, "mdev")[0] ? js(d, "mdev") : "-", "-", vm_state(d), "-", "-", "-",
	       "-", "-", "-", "-", js(d, "reason"));
}

static void print_dom_csv(json_t *d)
{
	int i;

	csv_field(js(d, "name"), false);
	csv_field(js(d, "mdev"), false);
	csv_field("", false);		/* no GPU */
	csv_field(vm_state(d), false);
	for (i = 0; i < 9; i++)		/* no policy, no usage */
		csv_field("", false);
	csv_field(js(d, "reason"), true);
}

static bool vm_selected(const struct vms_opts *o, json_t *vm)
{
	char gpu[24];

	/* a domain not managed has no GPU: --gpu leaves it out */
	if (o->gpu && !json_is_integer(json_object_get(vm, "gpu")))
		return false;
	snprintf(gpu, sizeof(gpu), "%" PRId64,
		 (int64_t)json_integer_value(json_object_get(vm, "gpu")));
	if (o->gpu && strcmp(o->gpu, gpu))
		return false;
	return !o->state || !strcmp(o->state, vm_state(vm));
}

/* The members of a listing's array key that o selects. */
static json_t *select_from(const struct vms_opts *o, json_t *listing, const char *key)
{
	json_t *sel = json_array(), *e;
	size_t i;

	json_array_foreach(json_object_get(listing, key), i, e)
		if (vm_selected(o, e))
			json_array_append(sel, e);
	return sel;
}

/*
 * One listing of what o selects: the VMs, then the libvirt domains
 * mgmtd lists without managing them (a row each, with why).
 */
static int vms_once(struct ctl *c, const struct vms_opts *o)
{
	json_t *j, *vms, *doms, *e;
	size_t i;
	char *txt;
	int ret = ctl_fetch_json(c, "/v1/vms", &j);

	if (ret)
		return ret;
	vms = select_from(o, j, "vms");
	doms = select_from(o, j, "unmanaged");
	switch (o->out) {
	case OUT_JSON:
		/* the API's object, with what was asked for */
		json_object_set(j, "vms", vms);
		if (json_object_get(j, "unmanaged"))
			json_object_set(j, "unmanaged", doms);
		txt = json_dumps(j, JSON_COMPACT);
		if (txt)
			puts(txt);
		free(txt);
		break;
	case OUT_CSV:
		printf("name,id,gpu,state,quota,entitlement,allocated,resident,relocated,"
		       "cache_private,weight,priority,advisory,error\n");
		json_array_foreach(vms, i, e)
			print_vm_csv(e);
		json_array_foreach(doms, i, e)
			print_dom_csv(e);
		break;
	case OUT_TABLE:
		printf("%-20s %-36s %3s %-9s %7s %7s %7s %7s %7s %6s %4s %s\n", "NAME", "ID",
		       "GPU", "STATE", "QUOTA", "ENTITLD", "VRAM", "HOST", "FCACHE", "WEIGHT",
		       "PRIO", "NOTE");
		json_array_foreach(vms, i, e)
			print_vm_row(e);
		json_array_foreach(doms, i, e)
			print_dom_row(e);
		break;
	}
	fflush(stdout);
	json_decref(vms);
	json_decref(doms);
	json_decref(j);
	return 0;
}

/* A schema of the OpenAPI document: follows "$ref": "#/components/schemas/NAME". */
static json_t *schema_deref(json_t *doc, json_t *sch)
{
	const char *ref = json_string_value(json_object_get(sch, "$ref"));
	static const char prefix[] = "#/components/schemas/";

	if (!ref || strncmp(ref, prefix, sizeof(prefix) - 1))
		return sch;
	return json_object_get(json_object_get(json_object_get(doc, "components"),
					       "schemas"), ref + sizeof(prefix) - 1);
}

/*
 * Adds to known (", "-separated) the states the OpenAPI document doc
 * enumerates for what GET /v1/vms lists: each array of its answer (the
 * VMs, the domains not managed), its items' "state" enum. true if state
 * is one of them.
 */
static bool listed_states(json_t *doc, const char *state, char *known, size_t len)
{
	static const char *const path[] = { "paths", "/v1/vms", "get", "responses", "200",
					    "content", "application/json", "schema",
					    "properties" };
	json_t *props, *arr, *st, *v;
	const char *key, *s;
	bool found = false;
	size_t i, n;

	props = doc;
	for (i = 0; i < sizeof(path) / sizeof(path[0]); i++)
		props = schema_deref(doc, json_object_get(props, path[i]));
	json_object_foreach(props, key, arr) {
		st = json_object_get(json_object_get(schema_deref(doc, json_object_get(
			schema_deref(doc, arr), "items")), "properties"), "state");
		json_array_foreach(json_object_get(st, "enum"), i, v) {
			s = json_string_value(v);
			if (!s)
				continue;
			found |= !strcmp(s, state);
			n = strlen(known);
			if (n + strlen(s) + 3 < len)
				snprintf(known + n, len - n, "%s%s", n ? ", " : "", s);
		}
	}
	return found;
}

/*
 * --state names a state mgmtd has: one its OpenAPI document enumerates
 * for what GET /v1/vms lists, or, when it enumerates none, one of those
 * vm_state() derives. No list is kept here, so the states mgmtd adds
 * are taken as they come.
 */
static int check_state(struct ctl *c, const char *state)
{
	static const char *const derived[] = { "running", "stopped", "lost" };
	char known[512] = "";
	bool found;
	json_t *doc;
	size_t i;
	int ret;

	if (!*state || strlen(state) > 64 ||
	    strspn(state, "abcdefghijklmnopqrstuvwxyz_-") != strlen(state))
		return usage_error("vms: --state needs a state such as running, not '%s'", state);
	ret = ctl_fetch_json(c, "/v1/openapi.json", &doc);
	if (ret)
		return ret;
	found = listed_states(doc, state, known, sizeof(known));
	json_decref(doc);
	if (!known[0]) {
		for (i = 0; i < sizeof(derived) / sizeof(derived[0]); i++) {
			found |= !strcmp(derived[i], state);
			snprintf(known + strlen(known), sizeof(known) - strlen(known),
				 "%s%s", i ? ", " : "", derived[i]);
		}
	}
	if (found)
		return 0;
	fprintf(stderr, "%s: vms: unknown state '%s' (mgmtd's states: %s)\n", prog,
		state, known);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return EXIT_USAGE;
}

int cmd_vms(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "state", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vms_opts o = { .out = c->json ? OUT_JSON : OUT_TABLE };
	uint64_t v;
	int opt, ret;

	optind = 0;	/* 0: GNU getopt starts over (permuting again) */
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			if (!parse_uint(optarg, 999999999, &v))
				return usage_error("vms: --gpu takes a GPU index, not '%s'", optarg);
			o.gpu = optarg;
			/* "007" and 7 are one GPU: compare as the API prints it */
			while (o.gpu[0] == '0' && o.gpu[1])
				o.gpu++;
			break;
		case 's': o.state = optarg; break;
		case 'o':
			if (!strcmp(optarg, "table"))
				o.out = OUT_TABLE;
			else if (!strcmp(optarg, "json"))
				o.out = OUT_JSON;
			else if (!strcmp(optarg, "csv"))
				o.out = OUT_CSV;
			else
				return usage_error("vms: --output takes table, json or csv, not '%s'", optarg);
			break;
		case 'w':
			o.watch_s = 2;
			if (optarg && (!parse_uint(optarg, 86400, &v) || !v))
				return usage_error("vms: --watch=SEC takes 1 to 86400 seconds, not '%s'", optarg);
			if (optarg)
				o.watch_s = (unsigned int)v;
			break;
		case 'h':
			printf("usage: %s vms [--gpu N] [--state STATE] [--output table|json|csv] [--watch[=SEC]]\n"
			       "  the VMs, and the libvirt domains mgmtd does not manage (on GPU N, in\n"
			       "  state STATE: running, stopped, lost, unmanaged, rejected or any other\n"
			       "  state mgmtd reports); --watch: again every SEC seconds (2)\n",
			       prog);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("vms: unexpected argument '%s'", argv[optind]);
	if (o.state) {
		ret = check_state(c, o.state);
		if (ret)
			return ret;
	}
	if (!o.watch_s)
		return vms_once(c, &o);
	/*
	 * Like watch(1): a listing every watch_s seconds, each headed by the
	 * time, until interrupted; an unreachable mgmtd is said and retried.
	 */
	for (;;) {
		time_t t = time(NULL);
		struct tm tm;
		char ts[32];

		localtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
		if (o.out == OUT_TABLE)
			printf("%s (every %us)\n", ts, o.watch_s);
		ret = vms_once(c, &o);
		if (ret == EXIT_API)
			return ret;
		if (o.out == OUT_TABLE)
			putchar('\n');
		fflush(stdout);
		sleep(o.watch_s);
	}
}

/* ---- vm ------------------------------------------------------------------- */

int cmd_vm(struct ctl *c, const char *id)
{
	char esc[256], path[300], b[2][16], fc[64];
	json_t *j, *u;
	int ret;

	path_escape(esc, sizeof(esc), id);
	snprintf(path, sizeof(path), "/v1/vms/%s", esc);
	ret = ctl_get_json(c, path, &j);
	if (ret || !j)
		return ret;
	u = json_object_get(j, "usage");
	printf("vm %s (%s) on gpu %" PRId64 ", %s, from %s%s\n", js(j, "id"),
	       js(j, "name")[0] ? js(j, "name") : "no domain",
	       (int64_t)json_integer_value(json_object_get(j, "gpu")),
	       vm_state(j), js(j, "source"),
	       json_is_true(json_object_get(j, "operator_policy")) ? ", operator policy" : "");
	print_policy(json_object_get(j, "policy"));
	printf("  entitlement %s (guaranteed %s)\n", human(ju(j, "entitlement"), b[0], 16),
	       human(ju(j, "guaranteed"), b[1], 16));
	/* the file cache's private replicas, the model's, with the usage */
	snprintf(fc, sizeof(fc), "; file cache private %s",
		 human(ju(u, "cache_private"), b[0], 16));
	print_vm_stats(j, fc);
	if (json_is_true(json_object_get(j, "advisory")))
		printf("  MIGRATION ADVISORY: the VM keeps thrashing above its entitlement\n");
	if (js(j, "error")[0])
		printf("  error: %s\n", js(j, "error"));
	json_decref(j);
	return 0;
}
