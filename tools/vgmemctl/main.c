// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmemctl: the operators' CLI over mgmtd's REST API (docs/rest.md).
 * Talks HTTP over the unix socket (default /run/vgmem/mgmtd.sock) or a
 * TCP URL with a bearer token from a file. Tables for people, --json for
 * scripts (the API's JSON, unchanged). Exit codes: 0 success, 1 the API
 * refused or failed (its problem details are printed), 2 usage error,
 * 3 mgmtd could not be reached. This file: the global options and the
 * dispatch to the commands (cmd_*.c, top*.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

const char *prog = "vgmemctl";

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s [global options] COMMAND [args]\n"
"\n"
"Commands:\n"
"  health                      daemon status (GET /healthz)\n"
"  gpus                        list GPUs\n"
"  gpu INDEX                   one GPU, with its histograms\n"
"  vms [--gpu N] [--state STATE] [--output table|json|csv] [--watch[=SEC]]\n"
"                              list VMs: policy, entitlement, usage\n"
"  vm ID|NAME                  one VM in detail, with its histograms\n"
"  top [--once] [--sort KEY] [--interval SEC]\n"
"                              live view of the GPUs and VMs (q quits, ? helps)\n"
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
"  events [--since ID|SPAN] [--limit N] [--follow]\n"
"                              event history, newest first, or follow the live stream\n"
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

int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	return EXIT_USAGE;
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
	    strcmp(cmd, "admit") && strcmp(cmd, "vms") && strcmp(cmd, "top")) {
		usage(stdout);
		ret = 0;
	} else if (!strcmp(cmd, "health") && cargc == 1) {
		ret = cmd_health(&c);
	} else if (!strcmp(cmd, "gpus") && cargc == 1) {
		ret = cmd_gpus(&c, NULL);
	} else if (!strcmp(cmd, "gpu") && cargc == 2) {
		ret = cmd_gpus(&c, cargv[1]);
	} else if (!strcmp(cmd, "vms")) {
		ret = cmd_vms(&c, cargc, cargv);
	} else if (!strcmp(cmd, "top")) {
		ret = cmd_top(&c, cargc, cargv);
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
