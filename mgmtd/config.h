/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd configuration: a key=value file ('#' comments; [section] headers
 * are allowed and only group keys for people: every key is unique) and
 * command-line flags (--key=value or --key value, '-' and '_' alike) that
 * override it. Every string is owned by the struct (mg_config_free()).
 */
#ifndef VGMEM_MGMTD_CONFIG_H
#define VGMEM_MGMTD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

#define MG_MAX_EMBEDDED_VMS	256

enum mg_backend_kind {
	MG_BACKEND_AUTO = 0,	/* netlink if vgmem.ko answers, else embedded */
	MG_BACKEND_EMBEDDED,
	MG_BACKEND_NETLINK,
};

struct mg_embedded_vm {
	char name[MG_NAME_LEN];
	char id[MG_ID_LEN];
	uint64_t quota;
	int gpu;		/* -1: the backend picks */
};

struct mg_config {
	/* daemon */
	char *config_file;		/* NULL: none */
	char *state_db;			/* SQLite path; default /var/lib/vgmem/mgmtd.db */
	int log_level;			/* enum mg_log_level */
	bool help, version;

	/* backend */
	enum mg_backend_kind backend;
	/* embedded backend: the software GPU */
	uint32_t embedded_gpus;		/* 1..8 */
	uint64_t embedded_vram;		/* bytes per GPU */
	uint64_t embedded_host_budget;	/* bytes, 0: unlimited */
	uint64_t embedded_chunk;	/* 0: core default */
	struct mg_embedded_vm embedded_vms[MG_MAX_EMBEDDED_VMS];
	size_t nr_embedded_vms;

	/* policy and knobs (defaults; the state database overrides) */
	struct mg_knobs knobs;
	uint32_t recompute_ms;		/* timer period of demand-driven recompute */
	bool hold_spare;		/* policy: never entitle beyond demand */
	/*
	 * Start a VM (source "backend", named by its mdev UUID, quota as
	 * the vGPU has it) for every vGPU the backend shows that no VM
	 * claims, and drop it when the vGPU goes: hosts without libvirt.
	 */
	bool adopt_mdevs;

	/* libvirt */
	char *libvirt_uri;		/* default qemu:///system; "" or "none": off */
	char *migrate_uri;		/* NULL: no automatic live migration */
	char *migrate_data_uri;		/* VIR_MIGRATE_PARAM_URI; NULL: libvirt's choice */

	/* REST (rest*.c) */
	char *listen_unix;		/* default /run/vgmem/mgmtd.sock; "" : none */
	char *unix_group;		/* NULL: the daemon's group */
	uint32_t unix_mode;		/* default 0660 */
	char *listen_tcp;		/* "host:port" or NULL: no TCP */
	char *token_file;		/* bearer token for TCP (required with TCP) */
	uint32_t max_request_bytes;	/* default 65536 */
	uint32_t request_timeout_s;	/* default 10 */
	uint32_t rest_threads;		/* default 4 */
};

/* Defaults into cfg (strings strdup()ed). */
int mg_config_defaults(struct mg_config *cfg);
/*
 * Parse argv: --config FILE is read first, then every flag overrides.
 * Returns 0, or -EINVAL with a message in err.
 */
int mg_config_parse_args(struct mg_config *cfg, int argc, char **argv,
			 char *err, size_t errlen);
/* One config file into cfg; -EINVAL (with "file:line: reason") or -errno. */
int mg_config_load_file(struct mg_config *cfg, const char *path, char *err,
			size_t errlen);
/* One key=value (file syntax, also used by flags); -EINVAL with err. */
int mg_config_set(struct mg_config *cfg, const char *key, const char *val,
		  char *err, size_t errlen);
void mg_config_usage(FILE *f, const char *argv0);
void mg_config_free(struct mg_config *cfg);

/* "8G", "512M", "4096", "1.5G" -> bytes; -EINVAL. */
int mg_parse_size(const char *s, uint64_t *out);
/* "NAME:UUID:QUOTA" into vm; -EINVAL. */
int mg_parse_embedded_vm(const char *s, struct mg_embedded_vm *vm);
/* Canonical lower-case 8-4-4-4-12 UUID check; true if valid. */
bool mg_uuid_valid(const char *s);

#endif /* VGMEM_MGMTD_CONFIG_H */
