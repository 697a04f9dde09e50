// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The commands that change policy: a VM's policy (show, PUT, PATCH,
 * DELETE), the dry-run admission of a VM of some policy, and the global
 * knobs. policy and admit take the same policy options (policy_opts,
 * policy_opt), so they spell and check them alike.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* The policy fields as options: the head of policy's and admit's lists. */
#define POLICY_OPTS							\
	{ "quota", required_argument, NULL, 'q' },			\
	{ "min", required_argument, NULL, 'm' },			\
	{ "low", required_argument, NULL, 'l' },			\
	{ "max", required_argument, NULL, 'M' },			\
	{ "weight", required_argument, NULL, 'w' },			\
	{ "priority", required_argument, NULL, 'p' }


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


/*
 * A policy option of POLICY_OPTS into body: 0, EXIT_USAGE (said why) for
 * a bad integer, or -ENOENT if opt is none of them.
 */
static int policy_opt(json_t *body, int opt, const char *arg)
{
	switch (opt) {
	case 'q': put_size(body, "quota", arg); return 0;
	case 'm': put_size(body, "min", arg); return 0;
	case 'l': put_size(body, "low", arg); return 0;
	case 'M': put_size(body, "max", arg); return 0;
	case 'w': return put_int(body, "weight", arg);
	case 'p': return put_int(body, "priority", arg);
	default: return -ENOENT;
	}
}

int cmd_policy(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		POLICY_OPTS,
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
		ret = policy_opt(body, opt, optarg);
		if (ret != -ENOENT) {
			if (ret) {
				json_decref(body);
				return ret;
			}
			continue;
		}
		switch (opt) {
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
int cmd_admit(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		POLICY_OPTS,
		{ "dry-run", no_argument, NULL, 'd' },
		{ "gpu", required_argument, NULL, 'g' },
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
		ret = policy_opt(body, opt, optarg);
		if (ret != -ENOENT) {
			if (ret) {
				json_decref(body);
				return ret;
			}
			continue;
		}
		switch (opt) {
		case 'd': dry = true; break;
		case 'g': gpu = optarg; break;
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

int cmd_knobs(struct ctl *c, int argc, char **argv)
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
