/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The GPU's and the VM's counters as mgmtd shows them: the lines of
 * VGMEM_GPU_STATS and VGMEM_VM_STATS (<uapi/vgmem_stats.h>, which says
 * what each column means) with where each one is in struct mg_gpu_info or
 * struct mg_vm_info. rest_json.c writes them as the members of a GPU or a
 * VM, metrics.c as Prometheus families.
 */
#ifndef VGMEM_MGMTD_REST_STATS_H
#define VGMEM_MGMTD_REST_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model.h"

struct mg_stat {
	const char *field;
	int kind;		/* VGMEM_STAT_* */
	int unit;		/* VGMEM_UNIT_* */
	size_t off;		/* of the u64 (a histogram's bucket 0) in the record */
	const char *rest;	/* "key" or "group.key" */
	const char *prom;	/* the family; NULL: not exported */
	const char *label;	/* the series' extra label, or NULL */
	const char *prom_help;	/* the family's HELP, on one of its lines */
};

struct mg_stat_table {
	const struct mg_stat *line;
	size_t n;
};

extern const struct mg_stat_table mg_gpu_stats;	/* in struct mg_gpu_info */
extern const struct mg_stat_table mg_vm_stats;	/* in struct mg_vm_info */

/* A line's value in rec (bucket i of a histogram, else i = 0). */
static inline uint64_t mg_stat_get(const struct mg_stat *s, const void *rec,
				   unsigned int i)
{
	uint64_t v;

	memcpy(&v, (const char *)rec + s->off + i * sizeof(v), sizeof(v));
	return v;
}

#endif /* VGMEM_MGMTD_REST_STATS_H */
