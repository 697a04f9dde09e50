// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's config file (mgmtd/config.c, mg_config_load_file) from the
 * input's bytes, loaded over the defaults as mgmtd does.
 *
 * Invariants: the load returns 0 or a negative errno; -EINVAL comes with
 * a "PATH:LINE: reason" message. A file that loads gives a config within
 * every key's documented range, and round-trips: written back as
 * key=value lines for every setting (this harness's writer) and loaded
 * over fresh defaults, it gives the same config, field for field.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mgmtd/config.h"
#include "mgmtd/log.h"
#include "policy/policy.h"
#include "fuzz_util.h"

static int fd_in, fd_out;
static char path_in[64], path_out[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fd_in = memfd_create("fuzz-config-in", 0);
	fd_out = memfd_create("fuzz-config-out", 0);
	if (fd_in < 0 || fd_out < 0)
		fuzz_die("memfd_create");
	snprintf(path_in, sizeof(path_in), "/proc/self/fd/%d", fd_in);
	snprintf(path_out, sizeof(path_out), "/proc/self/fd/%d", fd_out);
	return 0;
}

static void put(int fd, const void *buf, size_t len)
{
	if (ftruncate(fd, 0) || pwrite(fd, buf, len, 0) != (ssize_t)len)
		fuzz_die("writing a memfd");
}

static const char *level_name(int l)
{
	switch (l) {
	case MG_LOG_ERR: return "error";
	case MG_LOG_WARN: return "warn";
	case MG_LOG_INFO: return "info";
	case MG_LOG_DEBUG: return "debug";
	}
	fuzz_die("log level %d", l);
}

static const char *backend_name(enum mg_backend_kind b)
{
	switch (b) {
	case MG_BACKEND_AUTO: return "auto";
	case MG_BACKEND_EMBEDDED: return "embedded";
	case MG_BACKEND_NETLINK: return "netlink";
	}
	fuzz_die("backend %d", b);
}

static void in_range(const struct mg_config *c)
{
	size_t i;

	if (c->embedded_gpus < 1 || c->embedded_gpus > 8 ||
	    c->embedded_vram < (1ull << 20) || c->embedded_vram > (1ull << 40) ||
	    c->embedded_host_budget > (1ull << 42) ||
	    c->embedded_chunk > (64ull << 20) ||
	    c->knobs.return_interval_ms < VGMEM_RETURN_MS_MIN ||
	    c->knobs.return_interval_ms > VGMEM_RETURN_MS_MAX ||
	    c->knobs.oversub_pct < VGP_OVERSUB_MIN ||
	    c->knobs.oversub_pct > VGP_OVERSUB_MAX ||
	    c->knobs.thrash_window_s < 1 || c->knobs.thrash_window_s > 86400 ||
	    c->recompute_ms < 10 || c->recompute_ms > 3600000 ||
	    c->unix_mode > 0777 ||
	    c->max_request_bytes < 256 || c->max_request_bytes > (16u << 20) ||
	    c->request_timeout_s < 1 || c->request_timeout_s > 3600 ||
	    c->rest_threads < 1 || c->rest_threads > 64 ||
	    c->nr_embedded_vms > MG_MAX_EMBEDDED_VMS)
		fuzz_die("a loaded config out of its documented ranges");
	if (strcmp(c->knobs.policy, "random") && strcmp(c->knobs.policy, "lra") &&
	    strcmp(c->knobs.policy, "cold"))
		fuzz_die("policy '%.8s'", c->knobs.policy);
	for (i = 0; i < c->nr_embedded_vms; i++) {
		const struct mg_embedded_vm *v = &c->embedded_vms[i];

		if (!memchr(v->name, 0, sizeof(v->name)) || !v->name[0] ||
		    strchr(v->name, ':') || !mg_uuid_valid(v->id) || !v->quota ||
		    v->gpu < -1 || v->gpu > 7)
			fuzz_die("embedded VM %zu is not valid", i);
	}
}

/*
 * Whether v can be written without quotes: the parser trims blanks and
 * strips one pair of quotes. Written bare when that changes nothing, the
 * line is never longer than the one it came from.
 */
static bool bare(const char *v)
{
	size_t n = strlen(v);

	return n && !isspace((unsigned char)v[0]) &&
	       !isspace((unsigned char)v[n - 1]) &&
	       !(n >= 2 && v[0] == '"' && v[n - 1] == '"');
}

/* The writer: every setting as a key=value line. */
static size_t dump(const struct mg_config *c, char *buf, size_t cap)
{
	size_t n = 0, i;

#define OUT(...) do {							\
		int k = snprintf(buf + n, cap - n, __VA_ARGS__);	\
		if (k < 0 || (size_t)k >= cap - n)			\
			fuzz_die("dump buffer too small");		\
		n += (size_t)k;						\
	} while (0)
#define STR(key, v) do {						\
		if (v && bare(v))					\
			OUT("%s=%s\n", key, v);				\
		else if (v)						\
			OUT("%s=\"%s\"\n", key, v);			\
	} while (0)
	OUT("[daemon]\n");
	STR("state_db", c->state_db);
	OUT("log_level = %s\n", level_name(c->log_level));
	OUT("backend = %s\n", backend_name(c->backend));
	OUT("embedded_gpus = %u\nembedded_vram = %llu\nembedded_host_budget = %llu\n"
	    "embedded_chunk = %llu\n", c->embedded_gpus,
	    (unsigned long long)c->embedded_vram,
	    (unsigned long long)c->embedded_host_budget,
	    (unsigned long long)c->embedded_chunk);
	for (i = 0; i < c->nr_embedded_vms; i++) {
		const struct mg_embedded_vm *v = &c->embedded_vms[i];

		OUT("embedded-vm = \"%s:%s:%llu", v->name, v->id,
		    (unsigned long long)v->quota);
		if (v->gpu >= 0)
			OUT(":%d", v->gpu);
		OUT("\"\n");
	}
	OUT("policy = %.8s\nreturn_interval_ms = %u\noversub_pct = %u\n"
	    "thrash_window_s = %u\nrecompute_ms = %u\nhold_spare = %s\n"
	    "adopt_mdevs = %s\n", c->knobs.policy, c->knobs.return_interval_ms,
	    c->knobs.oversub_pct, c->knobs.thrash_window_s, c->recompute_ms,
	    c->hold_spare ? "true" : "false", c->adopt_mdevs ? "yes" : "0");
	STR("libvirt_uri", c->libvirt_uri);
	STR("migrate_uri", c->migrate_uri);
	STR("listen_unix", c->listen_unix);
	STR("unix_group", c->unix_group);
	OUT("unix_mode = %o\n", c->unix_mode);
	STR("listen_tcp", c->listen_tcp);
	STR("token_file", c->token_file);
	OUT("max_request_bytes = %u\nrequest_timeout_s = %u\nrest_threads = %u\n",
	    c->max_request_bytes, c->request_timeout_s, c->rest_threads);
#undef STR
#undef OUT
	return n;
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void same(const struct mg_config *a, const struct mg_config *b)
{
	size_t i;

	if (!str_eq(a->state_db, b->state_db) || a->log_level != b->log_level ||
	    a->backend != b->backend || a->embedded_gpus != b->embedded_gpus ||
	    a->embedded_vram != b->embedded_vram ||
	    a->embedded_host_budget != b->embedded_host_budget ||
	    a->embedded_chunk != b->embedded_chunk ||
	    a->nr_embedded_vms != b->nr_embedded_vms ||
	    memcmp(&a->knobs, &b->knobs, sizeof(a->knobs)) ||
	    a->recompute_ms != b->recompute_ms || a->hold_spare != b->hold_spare ||
	    a->adopt_mdevs != b->adopt_mdevs ||
	    !str_eq(a->libvirt_uri, b->libvirt_uri) ||
	    !str_eq(a->migrate_uri, b->migrate_uri) ||
	    !str_eq(a->listen_unix, b->listen_unix) ||
	    !str_eq(a->unix_group, b->unix_group) || a->unix_mode != b->unix_mode ||
	    !str_eq(a->listen_tcp, b->listen_tcp) ||
	    !str_eq(a->token_file, b->token_file) ||
	    a->max_request_bytes != b->max_request_bytes ||
	    a->request_timeout_s != b->request_timeout_s ||
	    a->rest_threads != b->rest_threads)
		fuzz_die("the written config does not load back the same");
	for (i = 0; i < a->nr_embedded_vms; i++) {
		const struct mg_embedded_vm *x = &a->embedded_vms[i], *y = &b->embedded_vms[i];

		if (strcmp(x->name, y->name) || strcmp(x->id, y->id) ||
		    x->quota != y->quota || x->gpu != y->gpu)
			fuzz_die("embedded VM %zu does not load back the same", i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[96 << 10];
	struct mg_config a, b;
	char err[512];
	size_t n;
	int ret;

	if (size > 16384)
		return -1;
	put(fd_in, data, size);
	if (mg_config_defaults(&a))
		fuzz_die("defaults");
	err[0] = 0;
	ret = mg_config_load_file(&a, path_in, err, sizeof(err));
	if (ret > 0 || ret < -4095)
		fuzz_die("load returned %d", ret);
	if (ret == -EINVAL && (strncmp(err, path_in, strlen(path_in)) ||
			       err[strlen(path_in)] != ':'))
		fuzz_die("-EINVAL without a 'file:line:' message: '%s'", err);
	if (!ret) {
		in_range(&a);
		n = dump(&a, out, sizeof(out));
		put(fd_out, out, n);
		if (mg_config_defaults(&b))
			fuzz_die("defaults");
		ret = mg_config_load_file(&b, path_out, err, sizeof(err));
		if (ret)
			fuzz_die("the written config does not load: %d %s\n%s", ret,
				 err, out);
		same(&a, &b);
		mg_config_free(&b);
	}
	mg_config_free(&a);
	return 0;
}
