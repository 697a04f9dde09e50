// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmem-sim helpers: number parsing, output files, progress lines and host
 * setup shared by every scenario.
 */
#include "vgsim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/util/size.h"

int vs_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* vgmem-sim's size syntax: size.h, VG_SIZE_SIM. */
int vs_parse_size(const char *s, uint64_t *out)
{
	return vg_parse_size(s, VG_SIZE_SIM, out);
}

const char *vs_path(struct vs_ctx *ctx, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", ctx->out, name);
	return buf;
}

FILE *vs_open(struct vs_ctx *ctx, const char *name)
{
	char path[4200];
	FILE *f;

	vs_path(ctx, name, path, sizeof(path));
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "vgmem-sim: cannot write %s: %s\n", path,
			strerror(errno));
	return f;
}

double vs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t vs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double vs_mib(uint64_t bytes)
{
	return bytes / (double)(1 << 20);
}

void vs_progress(struct vs_ctx *ctx, double frac, const char *fmt, ...)
{
	double now = vs_now();
	va_list ap;

	if (ctx->c.quiet)
		return;
	if (frac < 1.0 && now - ctx->last_progress < 0.5)
		return;
	ctx->last_progress = now;
	fprintf(stderr, "[%s] %3.0f%% ", ctx->sc->name, frac * 100.0);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void vs_info(struct vs_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->c.quiet)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

void vs_json_common(struct vs_ctx *ctx, json_t *o, uint64_t chunk_size,
		    uint64_t vram)
{
	json_object_set_new(o, "seed", json_integer((json_int_t)ctx->c.seed));
	json_object_set_new(o, "chunk_size", json_integer((json_int_t)chunk_size));
	json_object_set_new(o, "vram", json_integer((json_int_t)vram));
	if (ctx->sc->uses_policy && ctx->c.policy_set)
		json_object_set_new(o, "policy",
				    json_string(vg_policy_name(ctx->c.policy)));
}

int vs_write_summary(struct vs_ctx *ctx)
{
	char path[4200];

	vs_path(ctx, "summary.json", path, sizeof(path));
	if (json_dump_file(ctx->summary, path, JSON_INDENT(2) | JSON_SORT_KEYS)) {
		fprintf(stderr, "vgmem-sim: cannot write %s\n", path);
		return -EIO;
	}
	return 0;
}

int vs_host_create(struct vs_ctx *ctx, uint64_t vram, uint64_t chunk_size,
		   enum vg_chunk_policy policy, bool return_worker,
		   uint64_t seed, struct vg_host **out)
{
	struct vg_host_config cfg;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = ctx->sc->name;
	cfg.gpu.chunk_size = chunk_size;
	cfg.gpu.policy = policy;
	cfg.gpu.seed = seed;
	cfg.gpu.no_return_worker = !return_worker;
	err = vg_host_create(&cfg, out);
	if (err)
		fprintf(stderr, "vgmem-sim: %s: cannot create host (vram %llu, "
			"chunk %llu): %s\n", ctx->sc->name,
			(unsigned long long)vram,
			(unsigned long long)chunk_size, strerror(-err));
	return err;
}
