// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmemctl: the operators' CLI over mgmtd's REST API (docs/rest.md).
 * Talks HTTP over the unix socket (default /run/vgmem/mgmtd.sock) or a
 * TCP URL with a bearer token from a file. Tables for people, --json for
 * scripts (the API's JSON, unchanged). Exit codes: 0 success, 1 the API
 * refused or failed (its problem details are printed), 2 usage error,
 * 3 mgmtd could not be reached.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include <uapi/vgmem_stats.h>

#include "lib/util/stat_path.h"

#define DEFAULT_SOCKET	"/run/vgmem/mgmtd.sock"
#define EXIT_API	1
#define EXIT_USAGE	2
#define EXIT_CONNECT	3

struct ctl {
	const char *socket;
	const char *url;	/* http(s)://host:port, NULL: unix socket */
	char *token;
	bool json;
	long timeout_s;
};

struct buf {
	char *p;
	size_t len;
};

static const char *prog = "vgmemctl";

/* ---- help ------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s [global options] COMMAND [args]\n"
"\n"
"Commands:\n"
"  health                      daemon status (GET /healthz)\n"
"  gpus                        list GPUs\n"
"  gpu INDEX                   one GPU\n"
"  vms                         list VMs: policy, entitlement, usage\n"
"  vm ID|NAME                  one VM in detail\n"
"  policy ID|NAME              show a VM's policy\n"
"  policy ID|NAME --quota 8G [--min S --low S --max S --weight N --priority N]\n"
"                              replace the VM's policy (PUT; omitted fields: defaults)\n"
"  policy ID|NAME --patch [--weight N ...]\n"
"                              change only the given fields (PATCH)\n"
"  policy ID|NAME --reset      forget the operator's policy (DELETE)\n"
"  admit --dry-run --quota 8G [--gpu N --min S --low S --max S --weight N\n"
"        --priority N]         would a VM of that policy be admitted now, where,\n"
"                              with what entitlement (POST /v1/admission;\n"
"                              exit 0 if admitted, 1 if not)\n"
"  knobs [--policy random|lra|cold --return-interval-ms N --oversub-pct N\n"
"         --thrash-window-s N]  show or change the global knobs\n"
"  events [--since ID] [--limit N] [--follow]\n"
"                              event history, or follow the live stream\n"
"  metrics                     Prometheus metrics text\n"
"  openapi                     the OpenAPI document\n"
"\n"
"Global options:\n"
"  -s, --socket PATH      mgmtd's unix socket (default %s)\n"
"  -u, --url URL          talk TCP instead, e.g. http://127.0.0.1:7070\n"
"  -t, --token-file FILE  bearer token for --url\n"
"  -j, --json             print the API's JSON instead of tables\n"
"      --timeout SEC      request timeout (default 30; --follow: none)\n"
"  -h, --help             this help (also: COMMAND --help)\n"
"\n"
"Sizes take binary units: 512M, 8G, 1.5G, or plain bytes.\n"
"Exit codes: 0 ok, 1 refused by mgmtd, 2 usage error, 3 mgmtd unreachable.\n",
		prog, DEFAULT_SOCKET);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	return EXIT_USAGE;
}

/* ---- HTTP -------------------------------------------------------------------- */

static size_t buf_write(char *p, size_t sz, size_t n, void *priv)
{
	struct buf *b = priv;
	char *nb = realloc(b->p, b->len + sz * n + 1);

	if (!nb)
		return 0;
	memcpy(nb + b->len, p, sz * n);
	b->len += sz * n;
	nb[b->len] = '\0';
	b->p = nb;
	return sz * n;
}

static CURL *ctl_handle(struct ctl *c, const char *path, struct curl_slist **h)
{
	char url[1024];
	CURL *cu = curl_easy_init();

	if (!cu)
		return NULL;
	if (c->url) {
		size_t n = strlen(c->url);

		snprintf(url, sizeof(url), "%.*s%s", (int)(n && c->url[n - 1] == '/' ? n - 1 : n),
			 c->url, path);
	} else {
		curl_easy_setopt(cu, CURLOPT_UNIX_SOCKET_PATH, c->socket);
		snprintf(url, sizeof(url), "http://localhost%s", path);
	}
	curl_easy_setopt(cu, CURLOPT_URL, url);
	if (c->token) {
		char *auth;

		if (asprintf(&auth, "Authorization: Bearer %s", c->token) > 0) {
			*h = curl_slist_append(*h, auth);
			free(auth);
		}
	}
	*h = curl_slist_append(*h, "Expect:");
	curl_easy_setopt(cu, CURLOPT_USERAGENT, "vgmemctl");
	return cu;
}

/* Prints a problem details body readably (or raw text if it is not one). */
static void print_problem(long status, const struct buf *b)
{
	json_t *j = b->p ? json_loadb(b->p, b->len, 0, NULL) : NULL;
	const char *title = j ? json_string_value(json_object_get(j, "title")) : NULL;
	const char *detail = j ? json_string_value(json_object_get(j, "detail")) : NULL;
	const char *type = j ? json_string_value(json_object_get(j, "type")) : NULL;

	if (title || detail)
		fprintf(stderr, "%s: error %ld %s: %s\n", prog, status,
			title ? title : "", detail ? detail : "");
	else
		fprintf(stderr, "%s: error %ld: %.300s\n", prog, status,
			b->p ? b->p : "");
	if (type)
		fprintf(stderr, "  (%s)\n", type);
	json_decref(j);
}

/*
 * One request; on 2xx *out gets the body. Returns 0, EXIT_API (problem
 * printed) or EXIT_CONNECT.
 */
static int ctl_request(struct ctl *c, const char *method, const char *path,
		       const char *body, const char *ctype, struct buf *out)
{
	struct curl_slist *h = NULL;
	struct buf b = { 0 };
	long status = 0;
	CURLcode rc;
	CURL *cu;
	int ret = 0;

	cu = ctl_handle(c, path, &h);
	if (!cu)
		return EXIT_CONNECT;
	curl_easy_setopt(cu, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		char ct[128];

		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		h = curl_slist_append(h, ct);
		curl_easy_setopt(cu, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(cu, CURLOPT_TIMEOUT, c->timeout_s);
	rc = curl_easy_perform(cu);
	if (rc != CURLE_OK) {
		fprintf(stderr, "%s: cannot reach mgmtd at %s: %s\n", prog,
			c->url ? c->url : c->socket, curl_easy_strerror(rc));
		ret = EXIT_CONNECT;
	} else {
		curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &status);
		if (status < 200 || status > 299) {
			print_problem(status, &b);
			ret = EXIT_API;
		}
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(cu);
	if (ret || !out)
		free(b.p);
	else
		*out = b;
	return ret;
}

/* GET path, parse JSON; prints raw if --json (then *j is NULL). */
static int ctl_get_json(struct ctl *c, const char *path, json_t **j)
{
	struct buf b = { 0 };
	json_error_t err;
	int ret;

	*j = NULL;
	ret = ctl_request(c, "GET", path, NULL, NULL, &b);
	if (ret)
		return ret;
	if (c->json) {
		fputs(b.p ? b.p : "", stdout);
		if (b.len && b.p[b.len - 1] != '\n')
			putchar('\n');
		free(b.p);
		return 0;
	}
	*j = json_loadb(b.p ? b.p : "", b.len, 0, &err);
	free(b.p);
	if (!*j) {
		fprintf(stderr, "%s: mgmtd sent invalid JSON: %s\n", prog, err.text);
		return EXIT_API;
	}
	return 0;
}

/* ---- formatting ------------------------------------------------------------- */

static uint64_t ju(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static const char *human(uint64_t v, char *out, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%" PRIu64 "B", v);
	else
		snprintf(out, len, d < 10 ? "%.1f%c" : "%.0f%c", d, units[u]);
	return out;
}

static const char *human_ns(uint64_t ns, char *out, size_t len)
{
	if (ns < 1000)
		snprintf(out, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(out, len, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(out, len, "%.1fms", (double)ns / 1e6);
	else
		snprintf(out, len, "%.2fs", (double)ns / 1e9);
	return out;
}

/*
 * The GPU's and the VM's counters, from <uapi/vgmem_stats.h>: where the
 * REST object has each one, and the words `gpu N` and `vm ID` print.
 */
struct ctl_stat {
	const char *rest;	/* "key" or "group.key" */
	const char *show;	/* "%s" where the value goes; NULL: not shown */
	int unit;		/* VGMEM_UNIT_* */
};

#define CTL_STAT(f, attr, kind, help, unit, rest, show, ...)	\
	{ rest, show, unit },
static const struct ctl_stat gpu_stats[] = { VGMEM_GPU_STATS(CTL_STAT) };
static const struct ctl_stat vm_stats[] = { VGMEM_VM_STATS(CTL_STAT) };
#undef CTL_STAT

/* A counter's words with its value from the GPU or VM object o. */
static void print_stat(json_t *o, const struct ctl_stat *s)
{
	size_t glen = vg_stat_group_len(s->rest);
	const char *at = strstr(s->show, "%s");
	char group[64], val[32];
	uint64_t v;

	if (glen) {
		snprintf(group, sizeof(group), "%.*s", (int)glen, s->rest);
		o = json_object_get(o, group);
	}
	v = ju(o, vg_stat_key(s->rest));
	if (s->unit == VGMEM_UNIT_BYTES)
		human(v, val, sizeof(val));
	else if (s->unit == VGMEM_UNIT_NS)
		human_ns(v, val, sizeof(val));
	else
		snprintf(val, sizeof(val), "%" PRIu64, v);
	if (at)
		printf("%.*s%s%s", (int)(at - s->show), s->show, val, at + 2);
	else
		printf("%s %s", s->show, val);
}

/*
 * The n counters of t in the GPU or VM object o, grouped as the REST API
 * groups them: a line a group, its counters' words joined by commas, and
 * a line a counter at the top of o. tail ends the line of the group
 * tail_group (the model's members there); both may be NULL.
 */
static void print_stats(json_t *o, const struct ctl_stat *t, size_t n,
			const char *tail_group, const char *tail)
{
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		if (!t[i].show)
			continue;
		if (!vg_stat_group_len(t[i].rest)) {
			printf("  ");	/* at the top of o: a line of its own */
			print_stat(o, &t[i]);
			printf("\n");
			continue;
		}
		for (j = 0; j < i; j++)
			if (t[j].show && vg_stat_same_group(t[j].rest, t[i].rest))
				break;
		if (j < i)
			continue;	/* printed with its group */
		printf("  ");
		for (k = i; k < n; k++) {
			if (!t[k].show || !vg_stat_same_group(t[k].rest, t[i].rest))
				continue;
			if (k != i)
				printf(", ");
			print_stat(o, &t[k]);
		}
		if (tail && vg_stat_in_group(t[i].rest, tail_group))
			printf("%s", tail);
		printf("\n");
	}
}

static void print_vm_row(json_t *vm)
{
	json_t *p = json_object_get(vm, "policy");
	json_t *u = json_object_get(vm, "usage");
	char q[16], e[16], r[16], h[16], fc[16];
	const char *name = js(vm, "name");

	printf("%-20.20s %-36s %3" PRId64 " %-3s %7s %7s %7s %7s %7s %6" PRIu64 " %4" PRIu64 " %s\n",
	       name[0] ? name : "-", js(vm, "id"),
	       (int64_t)json_integer_value(json_object_get(vm, "gpu")),
	       json_is_true(json_object_get(vm, "running")) ? "yes" : "no",
	       human(ju(p, "quota"), q, sizeof(q)),
	       human(ju(vm, "entitlement"), e, sizeof(e)),
	       human(ju(u, "resident"), r, sizeof(r)),
	       human(ju(u, "relocated"), h, sizeof(h)),
	       human(ju(u, "cache_private"), fc, sizeof(fc)),
	       ju(p, "weight"), ju(p, "priority"),
	       json_is_true(json_object_get(vm, "advisory")) ? "MIGRATE" :
	       (js(vm, "error")[0] ? "ERROR" : ""));
}

static void print_policy(json_t *p)
{
	char b[5][16];

	printf("  quota %s  min %s  low %s  max %s  weight %" PRIu64 "  priority %" PRIu64 "\n",
	       human(ju(p, "quota"), b[0], 16), human(ju(p, "min"), b[1], 16),
	       human(ju(p, "low"), b[2], 16), human(ju(p, "max"), b[3], 16),
	       ju(p, "weight"), ju(p, "priority"));
}

/* ---- commands ---------------------------------------------------------------- */

static int cmd_health(struct ctl *c)
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
	printf("  vram %s, used %s, file cache %s; host RAM used %s of budget %s\n",
	       human(ju(g, "vram_size"), v, 16), human(ju(g, "vram_used"), u, 16),
	       human(ju(g, "cache_used"), fc, 16),
	       human(ju(g, "host_used"), h, 16), human(ju(g, "host_budget"), b, 16));
	printf("  policy %s, return interval %" PRIu64 " ms, oversubscription %" PRIu64 "%%, %" PRIu64 " VMs\n",
	       js(g, "policy"), ju(g, "return_interval_ms"), ju(g, "oversub_pct"),
	       ju(g, "nr_vms"));
	printf("  entitled %s, spare %s, demand %s%s\n", human(ju(g, "entitled"), v, 16),
	       human(ju(g, "spare"), u, 16), human(ju(g, "demand"), h, 16),
	       json_is_true(json_object_get(g, "contended")) ? " (contended)" : "");
	print_stats(g, gpu_stats, sizeof(gpu_stats) / sizeof(gpu_stats[0]),
		    NULL, NULL);
}

static int cmd_gpus(struct ctl *c, const char *index)
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

static int cmd_vms(struct ctl *c)
{
	json_t *j, *vm;
	size_t i;
	int ret = ctl_get_json(c, "/v1/vms", &j);

	if (ret || !j)
		return ret;
	printf("%-20s %-36s %3s %-3s %7s %7s %7s %7s %7s %6s %4s %s\n", "NAME", "ID",
	       "GPU", "RUN", "QUOTA", "ENTITLD", "VRAM", "HOST", "FCACHE", "WEIGHT",
	       "PRIO", "NOTE");
	json_array_foreach(json_object_get(j, "vms"), i, vm)
		print_vm_row(vm);
	json_decref(j);
	return 0;
}

/* Percent-encodes an id or name for the path. */
static void path_escape(char *out, size_t len, const char *in)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *in && o + 4 < len; in++) {
		unsigned char ch = (unsigned char)*in;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}

static int cmd_vm(struct ctl *c, const char *id)
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
	       json_is_true(json_object_get(j, "running")) ? "running" : "stopped",
	       js(j, "source"),
	       json_is_true(json_object_get(j, "operator_policy")) ? ", operator policy" : "");
	print_policy(json_object_get(j, "policy"));
	printf("  entitlement %s (guaranteed %s)\n", human(ju(j, "entitlement"), b[0], 16),
	       human(ju(j, "guaranteed"), b[1], 16));
	/* the file cache's private replicas, the model's, with the usage */
	snprintf(fc, sizeof(fc), "; file cache private %s",
		 human(ju(u, "cache_private"), b[0], 16));
	print_stats(j, vm_stats, sizeof(vm_stats) / sizeof(vm_stats[0]),
		    "usage", fc);
	if (json_is_true(json_object_get(j, "advisory")))
		printf("  MIGRATION ADVISORY: the VM keeps thrashing above its entitlement\n");
	if (js(j, "error")[0])
		printf("  error: %s\n", js(j, "error"));
	json_decref(j);
	return 0;
}

/* Adds a size option to obj: numbers as integers, the rest as strings. */
static void put_size(json_t *obj, const char *key, const char *val)
{
	if (val[0] && strspn(val, "0123456789") == strlen(val) && strlen(val) < 19)
		json_object_set_new(obj, key, json_integer(strtoll(val, NULL, 10)));
	else
		json_object_set_new(obj, key, json_string(val));
}

static int put_int(json_t *obj, const char *key, const char *val)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(val, &end, 10);
	if (errno || *end || !*val)
		return usage_error("'%s' is not an integer", val);
	json_object_set_new(obj, key, json_integer(v));
	return 0;
}

static int print_write_result(struct ctl *c, struct buf *b, bool policy)
{
	json_t *j;

	if (c->json) {
		puts(b->p ? b->p : "");
		return 0;
	}
	j = json_loadb(b->p ? b->p : "", b->len, 0, NULL);
	if (!j)
		return EXIT_API;
	if (policy) {
		printf("vm %s (%s)%s\n", js(j, "id"), js(j, "name"),
		       json_is_true(json_object_get(j, "operator_policy")) ?
		       ": operator policy" : ": metadata/default policy");
		print_policy(json_object_get(j, "policy"));
		{
			char e[16];

			printf("  entitlement %s\n", human(ju(j, "entitlement"), e, 16));
		}
	} else {
		printf("policy             %s\nreturn_interval_ms %" PRIu64 "\noversub_pct        %" PRIu64 "\nthrash_window_s    %" PRIu64 "\n",
		       js(j, "policy"), ju(j, "return_interval_ms"), ju(j, "oversub_pct"),
		       ju(j, "thrash_window_s"));
	}
	json_decref(j);
	return 0;
}

static int cmd_policy(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quota", required_argument, NULL, 'q' },
		{ "min", required_argument, NULL, 'm' },
		{ "low", required_argument, NULL, 'l' },
		{ "max", required_argument, NULL, 'M' },
		{ "weight", required_argument, NULL, 'w' },
		{ "priority", required_argument, NULL, 'p' },
		{ "patch", no_argument, NULL, 'P' },
		{ "reset", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	json_t *body = json_object();
	bool patch = false, reset = false;
	char esc[256], path[300];
	struct buf b = { 0 };
	const char *id;
	char *text;
	int opt, ret = 0;

	optind = 0;	/* 0: GNU getopt starts over (permuting again) */
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'q': put_size(body, "quota", optarg); break;
		case 'm': put_size(body, "min", optarg); break;
		case 'l': put_size(body, "low", optarg); break;
		case 'M': put_size(body, "max", optarg); break;
		case 'w': ret = put_int(body, "weight", optarg); break;
		case 'p': ret = put_int(body, "priority", optarg); break;
		case 'P': patch = true; break;
		case 'R': reset = true; break;
		case 'h':
			printf("usage: %s policy ID|NAME [--quota S --min S --low S --max S --weight N --priority N] [--patch | --reset]\n"
			       "  no options: show; options: replace (PUT); --patch: change only those; --reset: forget\n",
			       prog);
			json_decref(body);
			return 0;
		default:
			json_decref(body);
			return EXIT_USAGE;
		}
		if (ret) {
			json_decref(body);
			return ret;
		}
	}
	if (optind != argc - 1) {
		json_decref(body);
		return usage_error("policy: give exactly one VM id or name%s", "");
	}
	id = argv[optind];
	path_escape(esc, sizeof(esc), id);
	snprintf(path, sizeof(path), "/v1/vms/%s/policy", esc);
	if (reset && (patch || json_object_size(body))) {
		json_decref(body);
		return usage_error("policy: --reset takes no other option%s", "");
	}
	if (reset) {
		ret = ctl_request(c, "DELETE", path, NULL, NULL, &b);
	} else if (!json_object_size(body)) {
		json_decref(body);
		if (patch)
			return usage_error("policy --patch: give at least one field%s", "");
		ret = ctl_request(c, "GET", path, NULL, NULL, &b);
		if (!ret)
			ret = print_write_result(c, &b, true);
		free(b.p);
		return ret;
	} else {
		text = json_dumps(body, JSON_COMPACT);
		ret = ctl_request(c, patch ? "PATCH" : "PUT", path, text,
				  "application/json", &b);
		free(text);
	}
	json_decref(body);
	if (!ret)
		ret = print_write_result(c, &b, true);
	free(b.p);
	return ret;
}

/*
 * admit --dry-run: the question a scheduler asks before it places a VM.
 * Only a dry run: a VM is admitted when its domain starts.
 */
static int cmd_admit(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'd' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "quota", required_argument, NULL, 'q' },
		{ "min", required_argument, NULL, 'm' },
		{ "low", required_argument, NULL, 'l' },
		{ "max", required_argument, NULL, 'M' },
		{ "weight", required_argument, NULL, 'w' },
		{ "priority", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	json_t *body = json_object(), *j;
	const char *gpu = NULL;
	bool dry = false;
	char path[64], e[16], g[16], q[16], l[16];
	struct buf b = { 0 };
	char *text;
	int opt, ret = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': dry = true; break;
		case 'g': gpu = optarg; break;
		case 'q': put_size(body, "quota", optarg); break;
		case 'm': put_size(body, "min", optarg); break;
		case 'l': put_size(body, "low", optarg); break;
		case 'M': put_size(body, "max", optarg); break;
		case 'w': ret = put_int(body, "weight", optarg); break;
		case 'p': ret = put_int(body, "priority", optarg); break;
		case 'h':
			printf("usage: %s admit --dry-run --quota S [--gpu N --min S --low S --max S --weight N --priority N]\n"
			       "  would a VM of this policy be admitted now (on GPU N, or where mgmtd\n"
			       "  would place it), and with what entitlement; exit 0 if admitted, 1 if not\n",
			       prog);
			json_decref(body);
			return 0;
		default:
			json_decref(body);
			return EXIT_USAGE;
		}
		if (ret) {
			json_decref(body);
			return ret;
		}
	}
	if (optind != argc) {
		json_decref(body);
		return usage_error("admit: unexpected argument '%s'", argv[optind]);
	}
	if (!dry || !json_object_get(body, "quota")) {
		json_decref(body);
		return usage_error("admit: give --dry-run and --quota (a VM is admitted when its domain starts)%s", "");
	}
	if (gpu && (!gpu[0] || strspn(gpu, "0123456789") != strlen(gpu) || strlen(gpu) > 9)) {
		json_decref(body);
		return usage_error("admit: --gpu takes a GPU index, not '%s'", gpu);
	}
	snprintf(path, sizeof(path), "/v1/admission%s%s", gpu ? "?gpu=" : "",
		 gpu ? gpu : "");
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	ret = ctl_request(c, "POST", path, text, "application/json", &b);
	free(text);
	if (ret) {
		free(b.p);
		return ret;
	}
	if (c->json) {
		puts(b.p ? b.p : "");
		j = json_loadb(b.p ? b.p : "", b.len, 0, NULL);
	} else {
		j = json_loadb(b.p ? b.p : "", b.len, 0, NULL);
		if (j && json_is_true(json_object_get(j, "admitted")))
			printf("admitted on GPU %" PRIu64 ": entitlement %s (guaranteed %s); quotas there %s of %s, %" PRIu64 " VM(s) running\n",
			       ju(j, "gpu"), human(ju(j, "entitlement"), e, 16),
			       human(ju(j, "guaranteed"), g, 16),
			       human(ju(j, "quotas"), q, 16),
			       human(ju(j, "quota_limit"), l, 16), ju(j, "vms"));
		else if (j)
			printf("not admitted%s: %s: %s\n",
			       json_integer_value(json_object_get(j, "gpu")) >= 0 ?
			       " on that GPU" : " on any GPU",
			       js(j, "code"), js(j, "reason"));
	}
	free(b.p);
	if (!j)
		return EXIT_API;
	ret = json_is_true(json_object_get(j, "admitted")) ? 0 : EXIT_API;
	json_decref(j);
	return ret;
}

static int cmd_knobs(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "return-interval-ms", required_argument, NULL, 'r' },
		{ "oversub-pct", required_argument, NULL, 'o' },
		{ "thrash-window-s", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	json_t *body = json_object();
	struct buf b = { 0 };
	char *text;
	int opt, ret = 0;

	optind = 0;	/* 0: GNU getopt starts over (permuting again) */
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': json_object_set_new(body, "policy", json_string(optarg)); break;
		case 'r': ret = put_int(body, "return_interval_ms", optarg); break;
		case 'o': ret = put_int(body, "oversub_pct", optarg); break;
		case 't': ret = put_int(body, "thrash_window_s", optarg); break;
		case 'h':
			printf("usage: %s knobs [--policy random|lra|cold] [--return-interval-ms N] [--oversub-pct N] [--thrash-window-s N]\n",
			       prog);
			json_decref(body);
			return 0;
		default:
			json_decref(body);
			return EXIT_USAGE;
		}
		if (ret) {
			json_decref(body);
			return ret;
		}
	}
	if (optind != argc) {
		json_decref(body);
		return usage_error("knobs: unexpected argument '%s'", argv[optind]);
	}
	if (json_object_size(body)) {
		text = json_dumps(body, JSON_COMPACT);
		ret = ctl_request(c, "PATCH", "/v1/policy", text, "application/json", &b);
		free(text);
	} else {
		ret = ctl_request(c, "GET", "/v1/policy", NULL, NULL, &b);
	}
	json_decref(body);
	if (!ret)
		ret = print_write_result(c, &b, false);
	free(b.p);
	return ret;
}

static void print_event(struct ctl *c, const char *data, size_t len)
{
	json_t *j;
	char *detail;
	time_t t;
	struct tm tm;
	char ts[32];

	if (c->json) {
		printf("%.*s\n", (int)len, data);
		fflush(stdout);
		return;
	}
	j = json_loadb(data, len, 0, NULL);
	if (!j)
		return;
	t = (time_t)(json_integer_value(json_object_get(j, "ts_ms")) / 1000);
	localtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	detail = json_dumps(json_object_get(j, "detail"), JSON_COMPACT);
	printf("%s %6" PRIu64 " %-10s %-36s %s\n", ts, ju(j, "id"), js(j, "type"),
	       js(j, "vm")[0] ? js(j, "vm") : "-", detail ? detail : "");
	fflush(stdout);
	free(detail);
	json_decref(j);
}

struct follow {
	struct ctl *c;
	struct buf line;	/* partial line */
	char last_id[32];
};

/* SSE parsing: only id: and data: matter; events end at a blank line. */
static size_t follow_write(char *p, size_t sz, size_t n, void *priv)
{
	struct follow *f = priv;
	size_t i, len = sz * n;

	for (i = 0; i < len; i++) {
		if (p[i] != '\n') {
			char ch = p[i];

			if (f->line.len < 65536)
				buf_write(&ch, 1, 1, &f->line);
			continue;
		}
		if (f->line.p && !strncmp(f->line.p, "id: ", 4))
			snprintf(f->last_id, sizeof(f->last_id), "%s", f->line.p + 4);
		else if (f->line.p && !strncmp(f->line.p, "data: ", 6))
			print_event(f->c, f->line.p + 6, f->line.len - 6);
		f->line.len = 0;
		if (f->line.p)
			f->line.p[0] = '\0';
	}
	return len;
}

static int follow_events(struct ctl *c, const char *since)
{
	struct follow f = { .c = c };
	int ret = 0, tries = 0;

	if (since)
		snprintf(f.last_id, sizeof(f.last_id), "%s", since);
	/* Reconnects with Last-Event-ID after a dropped stream: no gaps. */
	for (;;) {
		struct curl_slist *h = NULL;
		long status = 0;
		CURLcode rc;
		CURL *cu = ctl_handle(c, "/v1/events", &h);
		char hdr[64];

		if (!cu)
			return EXIT_CONNECT;
		h = curl_slist_append(h, "Accept: text/event-stream");
		if (f.last_id[0]) {
			snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", f.last_id);
			h = curl_slist_append(h, hdr);
		}
		curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, follow_write);
		curl_easy_setopt(cu, CURLOPT_WRITEDATA, &f);
		rc = curl_easy_perform(cu);
		curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &status);
		curl_slist_free_all(h);
		curl_easy_cleanup(cu);
		if (status && status != 200) {
			struct buf b = { 0 };

			print_problem(status, &b);
			ret = EXIT_API;
			break;
		}
		if (rc != CURLE_OK && !status) {
			if (++tries > 5) {
				fprintf(stderr, "%s: cannot reach mgmtd: %s\n", prog,
					curl_easy_strerror(rc));
				ret = EXIT_CONNECT;
				break;
			}
		} else {
			tries = 0;
		}
		sleep(2);
	}
	free(f.line.p);
	return ret;
}

static int cmd_events(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "follow", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *since = NULL, *limit = "100";
	bool follow = false;
	char path[128];
	json_t *j, *ev;
	size_t i;
	int opt, ret;

	optind = 0;	/* 0: GNU getopt starts over (permuting again) */
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case 's': since = optarg; break;
		case 'l': limit = optarg; break;
		case 'f': follow = true; break;
		case 'h':
			printf("usage: %s events [--since ID] [--limit N] [--follow]\n"
			       "  history after ID (default: the last 100 from 0), or --follow the live stream\n"
			       "  (with --since: resume after ID first)\n", prog);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("events: unexpected argument '%s'", argv[optind]);
	if (since && (!*since || strspn(since, "0123456789") != strlen(since) || strlen(since) > 20))
		return usage_error("events: --since needs an event id, not '%s'", since);
	if (strspn(limit, "0123456789") != strlen(limit) || strlen(limit) > 6 || !*limit)
		return usage_error("events: --limit needs a number, not '%s'", limit);
	if (follow)
		return follow_events(c, since);
	snprintf(path, sizeof(path), "/v1/events?since=%s&limit=%s", since ? since : "0", limit);
	if (c->json)
		return ctl_get_json(c, path, &j);
	ret = ctl_get_json(c, path, &j);
	if (ret || !j)
		return ret;
	json_array_foreach(json_object_get(j, "events"), i, ev) {
		char *txt = json_dumps(ev, JSON_COMPACT);

		if (txt)
			print_event(c, txt, strlen(txt));
		free(txt);
	}
	if (json_is_true(json_object_get(j, "more")))
		printf("(more: %s events --since %" PRIu64 ")\n", prog, ju(j, "last_id"));
	json_decref(j);
	return 0;
}

static int cmd_text(struct ctl *c, const char *path)
{
	struct buf b = { 0 };
	int ret = ctl_request(c, "GET", path, NULL, NULL, &b);

	if (!ret && b.p)
		fwrite(b.p, 1, b.len, stdout);
	free(b.p);
	return ret;
}

static int read_token(struct ctl *c, const char *path)
{
	char buf[4200];
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "%s: cannot read token file %s: %s\n", prog, path,
			strerror(errno));
		return EXIT_USAGE;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (!n || strpbrk(buf, "\r\n")) {
		fprintf(stderr, "%s: token file %s must hold one line\n", prog, path);
		return EXIT_USAGE;
	}
	c->token = strdup(buf);
	return c->token ? 0 : EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "url", required_argument, NULL, 'u' },
		{ "token-file", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .socket = DEFAULT_SOCKET, .timeout_s = 30 };
	const char *token_file = NULL, *cmd;
	int opt, ret, cargc;
	char **cargv;

	/* stop at the command: its options are its own */
	while ((opt = getopt_long(argc, argv, "+s:u:t:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 's': c.socket = optarg; break;
		case 'u': c.url = optarg; break;
		case 't': token_file = optarg; break;
		case 'j': c.json = true; break;
		case 'T':
			c.timeout_s = strtol(optarg, NULL, 10);
			if (c.timeout_s <= 0)
				return usage_error("--timeout needs a positive number of seconds, not '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (c.url && strncmp(c.url, "http://", 7) && strncmp(c.url, "https://", 8))
		return usage_error("--url must start with http:// or https://, not '%s'", c.url);
	if (token_file) {
		ret = read_token(&c, token_file);
		if (ret)
			return ret;
	}
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_ALL);
	cmd = argv[optind];
	cargc = argc - optind;
	cargv = argv + optind;
	if (cargc >= 2 && (!strcmp(cargv[1], "--help") || !strcmp(cargv[1], "-h")) &&
	    strcmp(cmd, "policy") && strcmp(cmd, "knobs") && strcmp(cmd, "events") &&
	    strcmp(cmd, "admit")) {
		usage(stdout);
		ret = 0;
	} else if (!strcmp(cmd, "health") && cargc == 1) {
		ret = cmd_health(&c);
	} else if (!strcmp(cmd, "gpus") && cargc == 1) {
		ret = cmd_gpus(&c, NULL);
	} else if (!strcmp(cmd, "gpu") && cargc == 2) {
		ret = cmd_gpus(&c, cargv[1]);
	} else if (!strcmp(cmd, "vms") && cargc == 1) {
		ret = cmd_vms(&c);
	} else if (!strcmp(cmd, "vm") && cargc == 2) {
		ret = cmd_vm(&c, cargv[1]);
	} else if (!strcmp(cmd, "policy")) {
		ret = cmd_policy(&c, cargc, cargv);
	} else if (!strcmp(cmd, "knobs")) {
		ret = cmd_knobs(&c, cargc, cargv);
	} else if (!strcmp(cmd, "admit")) {
		ret = cmd_admit(&c, cargc, cargv);
	} else if (!strcmp(cmd, "events")) {
		ret = cmd_events(&c, cargc, cargv);
	} else if (!strcmp(cmd, "metrics") && cargc == 1) {
		ret = cmd_text(&c, "/metrics");
	} else if (!strcmp(cmd, "openapi") && cargc == 1) {
		ret = cmd_text(&c, "/v1/openapi.json");
	} else {
		ret = usage_error("unknown command or wrong arguments: '%s'", cmd);
	}
	if (c.token) {
		explicit_bzero(c.token, strlen(c.token));
		free(c.token);
	}
	curl_global_cleanup();
	return ret;
}
