/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vgmem-sim: shared pieces of the scenario runner. Each scenario is a
 * struct vs_scenario (its options as a parameter table and a run function);
 * main.c parses the command line into the common options and the table.
 */
#ifndef VGSIM_H
#define VGSIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "host-module/user/host.h"

/* Options every scenario takes (some ignore some, their help says which). */
struct vs_common {
	const char *out;		/* output directory (created) */
	uint64_t seed;
	enum vg_chunk_policy policy;
	bool policy_set;
	uint64_t chunk_size;		/* 0: the scenario's default */
	uint64_t vram;			/* 0: the scenario's default */
	bool quiet;
};

enum vs_ptype {
	VS_SIZE,	/* bytes, with K/M/G (binary) suffixes */
	VS_U32,
	VS_DOUBLE,
	VS_STR,
};

struct vs_param {
	const char *name;	/* --name */
	enum vs_ptype type;
	void *ptr;		/* uint64_t, uint32_t, double or const char * */
	const char *help;
};

struct vs_ctx;

struct vs_scenario {
	const char *name;
	const char *summary;		/* one line */
	const char *description;	/* paragraph for --help */
	const char *outputs;		/* what lands in --out */
	bool uses_policy;		/* --policy applies */
	struct vs_param *params;	/* NULL-name terminated */
	/* Option values that parse but do not fit: message, -EINVAL (exit 2). */
	int (*check)(struct vs_ctx *ctx);
	int (*run)(struct vs_ctx *ctx);
};

struct vs_ctx {
	const struct vs_scenario *sc;
	struct vs_common c;
	char out[4096];			/* output dir, no trailing slash */
	json_t *summary;		/* written as summary.json after run */
	double last_progress;		/* rate-limits progress lines */
};

extern const struct vs_scenario vs_fairness;
extern const struct vs_scenario vs_slowdown;
extern const struct vs_scenario vs_delay;
extern const struct vs_scenario vs_demo;
extern const struct vs_scenario vs_compare;
extern const struct vs_scenario vs_cloudday;
extern const struct vs_scenario vs_replay;

/* ---- helpers (common.c) ---- */
int vs_parse_size(const char *s, uint64_t *out);
int vs_parse_u64(const char *s, uint64_t *out);
#include "fsutil.h"
/* Opens DIR/name for writing; prints an error and returns NULL on failure. */
FILE *vs_open(struct vs_ctx *ctx, const char *name);
/* DIR/name into buf. */
const char *vs_path(struct vs_ctx *ctx, const char *name, char *buf, size_t len);
/* "[scenario] 40% t=8.0s msg" to stderr, at most every 0.5 s (unless quiet). */
void vs_progress(struct vs_ctx *ctx, double frac, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Plain messages (stdout) unless --quiet. */
void vs_info(struct vs_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
double vs_now(void);	/* monotonic seconds */
uint64_t vs_now_ns(void);
double vs_mib(uint64_t bytes);
int vs_write_summary(struct vs_ctx *ctx);
/* Adds the common options to a JSON object (the run's parameters). */
void vs_json_common(struct vs_ctx *ctx, json_t *o, uint64_t chunk_size,
		    uint64_t vram);

/* A host with the given VRAM, chunk size and policy; prints why on failure. */
int vs_host_create(struct vs_ctx *ctx, uint64_t vram, uint64_t chunk_size,
		   enum vg_chunk_policy policy, bool return_worker,
		   uint64_t seed, struct vg_host **out);

#endif /* VGSIM_H */
