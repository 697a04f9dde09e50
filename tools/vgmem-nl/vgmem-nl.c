// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmem-nl: the command-line face of the "vgmem" generic netlink family.
 * Lists GPUs and vGPUs, changes entitlements, quotas and GPU knobs, and
 * prints events. Text output is one "key=value" line per object, so shell
 * scripts can pick fields; --json gives the same as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/util/size.h"
#include "lib/vgnl/vgnl.h"

static bool json;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vgmem-nl [--json] COMMAND\n"
		"  list gpus                       every GPU with its statistics\n"
		"  list vms [GPU]                  every vGPU (of one GPU)\n"
		"  show gpu GPU                    one GPU, with histograms\n"
		"  show vm UUID                    one vGPU, with histograms\n"
		"  set-entitlement UUID BYTES      VRAM entitlement (0: equal share)\n"
		"  set-quota UUID BYTES            live quota change\n"
		"  set-policy GPU random|lra|cold  chunk choice policy\n"
		"  set-return-interval GPU MS      return worker period\n"
		"  set-oversub GPU PCT             admission limit, %% of VRAM (0: module default)\n"
		"  set-shares UUID [--share ID:PATH[:ro][:tag=TAG]]...\n"
		"                                  replace the vGPU's virtio-fs share table\n"
		"                                  (no --share: clear it); TAG: the share's\n"
		"                                  virtio-fs tag, which the guest sees\n"
		"  show shares UUID                the vGPU's share table: id, readonly,\n"
		"                                  tag (if any), path\n"
		"  show lrc                        the host's LRC file cache counters\n"
		"  monitor [--count N] [--timeout SECONDS]\n"
		"                                  print events (pressure, relocation, chan_fault)\n"
		"BYTES takes a K, M, G or T suffix (powers of 1024). Changes need\n"
		"CAP_NET_ADMIN, and so do vGPUs (list vms, show vm/shares) and monitor\n"
		"unless vgmem is loaded with netlink_open=1.\n"
		"Exit status: 0 ok, 1 refused or failed, 2 bad usage.\n");
}

static int bad_usage(const char *why)
{
	fprintf(stderr, "vgmem-nl: %s\n", why);
	usage(stderr);
	return 2;
}

/* Sizes and counts: size.h, VG_SIZE_NL. */
static int parse_u64(const char *s, uint64_t *out)
{
	return vg_parse_size(s, VG_SIZE_NL, out);
}

static int parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int fail(struct vgnl *h, const char *what, int err)
{
	const char *ext = h ? vgnl_ext_msg(h) : "";

	fprintf(stderr, "vgmem-nl: %s: %s (%d)%s%s\n", what, strerror(-err),
		err, *ext ? ": " : "", ext);
	return 1;
}

/* ---- printing ----------------------------------------------------------- */

/* A JSON string: quotes, backslashes and control characters escaped. */
static void print_json_str(const char *str)
{
	const unsigned char *c;

	putchar('"');
	for (c = (const unsigned char *)str; *c; c++) {
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c < 0x20)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	}
	putchar('"');
}

static void print_hist(const char *name, const uint64_t *h)
{
	int i;

	if (json) {
		printf(", \"%s\": [", name);
		for (i = 0; i < VGMEM_HIST_BUCKETS; i++)
			printf("%s%" PRIu64, i ? ", " : "", h[i]);
		printf("]");
		return;
	}
	printf("  %s:", name);
	for (i = 0; i < VGMEM_HIST_BUCKETS; i++)
		printf(" %" PRIu64, h[i]);
	printf("\n");
}

/* A field: "key=value" or "\"key\": value". */
static void kv(bool *first, const char *key, uint64_t val)
{
	if (json)
		printf("%s\"%s\": %" PRIu64, *first ? "" : ", ", key, val);
	else
		printf("%s%s=%" PRIu64, *first ? "" : " ", key, val);
	*first = false;
}

static void ks(bool *first, const char *key, const char *val)
{
	/* Names come from the kernel: no quotes or backslashes in them. */
	if (json)
		printf("%s\"%s\": \"%s\"", *first ? "" : ", ", key, val);
	else
		printf("%s%s=%s", *first ? "" : " ", key, val);
	*first = false;
}

/* A line of a stats table: a counter or gauge as a field, no histogram. */
static void stat_kv(bool *first, const char *key, int kind, const uint64_t *v)
{
	if (kind != VGMEM_STAT_HIST)
		kv(first, key, *v);
}

/* ... and its histogram, where asked for. */
static void stat_hist(bool want, const char *name, int kind, const uint64_t *h)
{
	if (want && kind == VGMEM_STAT_HIST)
		print_hist(name, h);
}

static void print_gpu(const struct vgnl_gpu *g, bool hist)
{
	bool first = true;

	printf(json ? "{" : "gpu ");
	kv(&first, "index", g->index);
	ks(&first, "name", g->name);
	kv(&first, "vram_size", g->vram_size);
	kv(&first, "vram_used", g->vram_used);
	kv(&first, "cache_used", g->cache_used);
	kv(&first, "host_used", g->host_used);
	kv(&first, "chunk_size", g->chunk_size);
	ks(&first, "policy", vgnl_policy_name(g->policy));
	kv(&first, "return_ms", g->return_ms);
	kv(&first, "oversub_pct", g->oversub_pct);
	kv(&first, "committed", g->committed);
	kv(&first, "vgpus", g->nr_vgpus);
	kv(&first, "vms", g->nr_vms);
#define GPU_KV(f, attr, kind, ...)				\
	stat_kv(&first, #f, kind, (const uint64_t *)&g->f);
	VGMEM_GPU_STATS(GPU_KV)
#undef GPU_KV
	if (!json)
		printf("\n");
#define GPU_HIST(f, attr, kind, ...)				\
	stat_hist(hist, #f, kind, (const uint64_t *)&g->f);
	VGMEM_GPU_STATS(GPU_HIST)
#undef GPU_HIST
	if (json)
		printf("}");
}

static void print_vm(const struct vgnl_vm *v, bool hist)
{
	const struct vgmem_vm_stats *s = &v->st;
	char uuid[VGNL_UUID_STR_LEN];
	bool first = true;

	vgnl_uuid_format(v->uuid, uuid);
	if (json) {
		printf("{");
		ks(&first, "uuid", uuid);
	} else {
		printf("vm %s", uuid);
		first = false;
	}
	kv(&first, "gpu", v->gpu);
	ks(&first, "type", v->type);
	kv(&first, "active", v->active);
	kv(&first, "quota", s->quota);
	kv(&first, "entitlement", s->entitlement);
	kv(&first, "cache_private", v->cache_private);
#define VM_KV(f, attr, kind, ...)					\
	stat_kv(&first, #f, kind, (const uint64_t *)&s->f);
	VGMEM_VM_STATS(VM_KV)
#undef VM_KV
	if (!json)
		printf("\n");
#define VM_HIST(f, attr, kind, ...)					\
	stat_hist(hist, #f, kind, (const uint64_t *)&s->f);
	VGMEM_VM_STATS(VM_HIST)
#undef VM_HIST
	if (json)
		printf("}");
}

/* One line (or object) "lrc gpus=N faults_minor=... ...": the host's cache. */
static void print_lrc(const struct vgnl_lrc *l)
{
	bool first = true;
	const char *name;
	unsigned int i;
	uint64_t val;

	printf(json ? "{" : "lrc ");
	kv(&first, "gpus", l->nr_gpus);
	for (i = 0; (name = vgnl_lrc_field(l, i, &val)); i++)
		kv(&first, name, val);
	printf(json ? "}\n" : "\n");
}

static int print_event(const struct vgnl_event *e, void *priv)
{
	char uuid[VGNL_UUID_STR_LEN];
	bool first = true;
	long *left = priv;

	vgnl_uuid_format(e->uuid, uuid);
	if (json) {
		printf("{");
		ks(&first, "event", vgnl_event_name(e->cmd));
	} else {
		printf("%s", vgnl_event_name(e->cmd));
		first = false;
	}
	kv(&first, "gpu", e->gpu);
	ks(&first, "vm", uuid);
	switch (e->cmd) {
	case VGMEM_CMD_EVENT_PRESSURE:
		kv(&first, "need", e->need);
		break;
	case VGMEM_CMD_EVENT_RELOCATION:
		ks(&first, "direction",
		   e->direction == VGMEM_RELOC_OUT ? "out" : "in");
		kv(&first, "chunks", e->chunks);
		kv(&first, "bytes", e->bytes);
		kv(&first, "suspend_ns", e->suspend_ns);
		break;
	case VGMEM_CMD_EVENT_CHAN_FAULT:
		kv(&first, "channel", e->channel);
		kv(&first, "error", e->error);
		break;
	}
	printf(json ? "}\n" : "\n");
	fflush(stdout);
	/* Count down to 0 (stop) if a count was given; -1: forever. */
	if (*left > 0 && --*left == 0)
		return 1;
	return 0;
}

/* ---- commands ------------------------------------------------------------ */

static int cmd_list(struct vgnl *h, int argc, char **argv)
{
	size_t n, i;
	int ret;

	if (argc >= 1 && !strcmp(argv[0], "gpus") && argc == 1) {
		struct vgnl_gpu *g;

		ret = vgnl_list_gpus(h, &g, &n);
		if (ret)
			return fail(h, "list gpus", ret);
		printf(json ? "{\"gpus\": [" : "");
		for (i = 0; i < n; i++) {
			printf(json && i ? ", " : "");
			print_gpu(&g[i], false);
		}
		printf(json ? "]}\n" : "");
		free(g);
		return 0;
	}
	if (argc >= 1 && !strcmp(argv[0], "vms") && argc <= 2) {
		struct vgnl_vm *v;
		uint32_t gpu;
		int64_t only = -1;

		if (argc == 2) {
			if (parse_u32(argv[1], &gpu))
				return bad_usage("list vms: GPU must be a number");
			only = gpu;
		}
		ret = vgnl_list_vms(h, only, &v, &n);
		if (ret)
			return fail(h, "list vms", ret);
		printf(json ? "{\"vms\": [" : "");
		for (i = 0; i < n; i++) {
			printf(json && i ? ", " : "");
			print_vm(&v[i], false);
		}
		printf(json ? "]}\n" : "");
		free(v);
		return 0;
	}
	return bad_usage("list gpus | list vms [GPU]");
}

static int cmd_show(struct vgnl *h, int argc, char **argv)
{
	uint8_t uuid[VGMEM_UUID_LEN];
	int ret;

	if (argc == 2 && !strcmp(argv[0], "gpu")) {
		struct vgnl_gpu g;
		uint32_t idx;

		if (parse_u32(argv[1], &idx))
			return bad_usage("show gpu: GPU must be a number");
		ret = vgnl_get_gpu(h, idx, &g);
		if (ret)
			return fail(h, "show gpu", ret);
		print_gpu(&g, true);
		printf(json ? "\n" : "");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[0], "vm")) {
		struct vgnl_vm v;

		if (vgnl_uuid_parse(argv[1], uuid))
			return bad_usage("show vm: not a UUID");
		ret = vgnl_get_vm(h, uuid, &v);
		if (ret)
			return fail(h, "show vm", ret);
		print_vm(&v, true);
		printf(json ? "\n" : "");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[0], "shares")) {
		struct vgnl_share *sh;
		size_t n, k;

		if (vgnl_uuid_parse(argv[1], uuid))
			return bad_usage("show shares: not a UUID");
		ret = vgnl_get_vm_shares(h, uuid, &sh, &n);
		if (ret == -EPERM) {
			fprintf(stderr, "vgmem-nl: show shares: the share table is shown only to CAP_NET_ADMIN\n");
			return 1;
		}
		if (ret)
			return fail(h, "show shares", ret);
		if (json)
			printf("[");
		for (k = 0; k < n; k++) {
			if (json) {
				printf("%s{\"id\":%" PRIu32 ",\"readonly\":%s,\"path\":",
				       k ? "," : "", sh[k].id,
				       sh[k].readonly ? "true" : "false");
				print_json_str(sh[k].path);
				if (sh[k].has_tag) {
					printf(",\"tag\":");
					print_json_str(sh[k].tag);
				}
				printf("}");
			} else if (sh[k].has_tag) {
				/* before the path, which may hold anything */
				printf("id=%" PRIu32 " readonly=%d tag=%s path=%s\n",
				       sh[k].id, sh[k].readonly, sh[k].tag,
				       sh[k].path);
			} else {
				printf("id=%" PRIu32 " readonly=%d path=%s\n",
				       sh[k].id, sh[k].readonly, sh[k].path);
			}
		}
		if (json)
			printf("]\n");
		free(sh);
		return 0;
	}
	if (argc == 1 && !strcmp(argv[0], "lrc")) {
		struct vgnl_lrc l;

		ret = vgnl_get_lrc(h, &l);
		if (ret)
			return fail(h, "show lrc", ret);
		print_lrc(&l);
		return 0;
	}
	return bad_usage("show gpu GPU | show vm UUID | show shares UUID | show lrc");
}

/* set-shares UUID [--share ID:PATH[:ro][:tag=TAG]]...: the whole table at once. */
static int cmd_set_shares(struct vgnl *h, int argc, char **argv)
{
	struct vgnl_vm_set set = { 0 };
	uint8_t uuid[VGMEM_UUID_LEN];
	struct vgnl_share *sh;
	int i, ret;

	if (argc < 1 || vgnl_uuid_parse(argv[0], uuid))
		return bad_usage("set-shares UUID [--share ID:PATH[:ro][:tag=TAG]]...");
	if (argc > 1 + 2 * VGMEM_SHARES_MAX)
		return bad_usage("set-shares: too many shares");
	sh = calloc((size_t)argc, sizeof(*sh));
	if (!sh)
		return fail(h, "set-shares", -ENOMEM);
	for (i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "--share") || i + 1 >= argc ||
		    vgnl_share_parse(argv[i + 1], &sh[set.nr_shares])) {
			free(sh);
			return bad_usage("set-shares: --share ID:PATH[:ro][:tag=TAG] expected");
		}
		set.nr_shares++;
	}
	set.has_shares = true;
	set.shares = sh;
	ret = vgnl_set_vm(h, uuid, &set);
	free(sh);
	return ret ? fail(h, "set-shares", ret) : 0;
}

static int cmd_set_vm(struct vgnl *h, const char *cmd, int argc, char **argv)
{
	struct vgnl_vm_set set = { 0 };
	uint8_t uuid[VGMEM_UUID_LEN];
	uint64_t bytes;
	int ret;

	if (argc != 2)
		return bad_usage("set-entitlement|set-quota UUID BYTES");
	if (vgnl_uuid_parse(argv[0], uuid))
		return bad_usage("not a UUID");
	if (parse_u64(argv[1], &bytes))
		return bad_usage("BYTES must be a number (K, M, G, T suffixes)");
	if (!strcmp(cmd, "set-quota")) {
		set.has_quota = true;
		set.quota = bytes;
	} else {
		set.has_entitlement = true;
		set.entitlement = bytes;
	}
	ret = vgnl_set_vm(h, uuid, &set);
	return ret ? fail(h, cmd, ret) : 0;
}

static int cmd_set_gpu(struct vgnl *h, const char *cmd, int argc, char **argv)
{
	struct vgnl_gpu_set set = { 0 };
	uint32_t idx, val;
	int ret;

	if (argc != 2)
		return bad_usage("set-policy|set-return-interval|set-oversub GPU VALUE");
	if (parse_u32(argv[0], &idx))
		return bad_usage("GPU must be a number");
	if (!strcmp(cmd, "set-policy")) {
		if (vgnl_policy_parse(argv[1], &val))
			return bad_usage("policy must be random, lra or cold");
		set.has_policy = true;
		set.policy = val;
	} else {
		/* Ranges are the kernel's to check (and explain). */
		if (parse_u32(argv[1], &val))
			return bad_usage("VALUE must be a 32-bit number");
		if (!strcmp(cmd, "set-return-interval")) {
			set.has_return_ms = true;
			set.return_ms = val;
		} else {
			set.has_oversub = true;
			set.oversub_pct = val;
		}
	}
	ret = vgnl_set_gpu(h, idx, &set);
	return ret ? fail(h, cmd, ret) : 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmd_monitor(struct vgnl *h, int argc, char **argv)
{
	long left = -1;
	int64_t deadline = -1;
	uint32_t v;
	int i, ret;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--count") && i + 1 < argc &&
		    !parse_u32(argv[i + 1], &v) && v) {
			left = v;
			i++;
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc &&
			   !parse_u32(argv[i + 1], &v)) {
			deadline = now_ms() + (int64_t)v * 1000;
			i++;
		} else {
			return bad_usage("monitor [--count N] [--timeout SECONDS]");
		}
	}
	ret = vgnl_subscribe(h);
	if (ret)
		return fail(h, "monitor: joining the events group", ret);
	/* Tell a script waiting for us that events will be seen now. */
	fprintf(stderr, "vgmem-nl: monitoring\n");
	for (;;) {
		struct pollfd p = { .fd = vgnl_event_fd(h), .events = POLLIN };
		int ms = -1;

		if (deadline >= 0) {
			int64_t rest = deadline - now_ms();

			if (rest <= 0)
				break;
			ms = rest > INT_MAX ? INT_MAX : (int)rest;
		}
		ret = poll(&p, 1, ms);
		if (ret < 0 && errno != EINTR)
			return fail(h, "monitor: poll", -errno);
		if (ret <= 0)
			continue;
		ret = vgnl_read_events(h, print_event, &left);
		if (ret == -ENOBUFS) {
			/* The kernel dropped events we were too slow for: say so, go on. */
			fprintf(stderr, "vgmem-nl: monitor: events lost (receive queue overrun)\n");
			continue;
		}
		if (ret < 0)
			return fail(h, "monitor", ret);
		if (ret > 0)
			return 0;	/* --count reached */
	}
	/* A timeout with events still expected is a failure. */
	return left > 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct vgnl *h;
	const char *cmd;
	int i = 1, ret;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			return bad_usage("unknown option");
		}
		i++;
	}
	if (i >= argc)
		return bad_usage("no command");
	cmd = argv[i++];
	if (strcmp(cmd, "list") && strcmp(cmd, "show") &&
	    strcmp(cmd, "set-entitlement") && strcmp(cmd, "set-quota") &&
	    strcmp(cmd, "set-policy") && strcmp(cmd, "set-return-interval") &&
	    strcmp(cmd, "set-oversub") && strcmp(cmd, "monitor") &&
	    strcmp(cmd, "set-shares"))
		return bad_usage("unknown command");

	ret = vgnl_open(&h);
	if (ret) {
		fail(NULL, ret == -ENOENT ?
		     "the vgmem netlink family is not there (is vgmem.ko loaded?)" :
		     "connecting to generic netlink", ret);
		return 1;
	}
	if (!strcmp(cmd, "list"))
		ret = cmd_list(h, argc - i, argv + i);
	else if (!strcmp(cmd, "show"))
		ret = cmd_show(h, argc - i, argv + i);
	else if (!strcmp(cmd, "set-entitlement") || !strcmp(cmd, "set-quota"))
		ret = cmd_set_vm(h, cmd, argc - i, argv + i);
	else if (!strcmp(cmd, "monitor"))
		ret = cmd_monitor(h, argc - i, argv + i);
	else if (!strcmp(cmd, "set-shares"))
		ret = cmd_set_shares(h, argc - i, argv + i);
	else
		ret = cmd_set_gpu(h, cmd, argc - i, argv + i);
	vgnl_close(h);
	return ret;
}
