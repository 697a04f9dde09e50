// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The schema's GPU and VM lines where mgmtd's model has them (rest_stats.h). */
#include "rest_stats.h"

#define GPU_STAT(f, attr, kind, help, unit, rest, show, prom, label, ph)	\
	{ #f, kind, unit, offsetof(struct mg_gpu_info, f), rest, prom, label, ph },
static const struct mg_stat gpu_lines[] = { VGMEM_GPU_STATS(GPU_STAT) };
#undef GPU_STAT

#define VM_STAT(f, attr, kind, help, unit, rest, show, prom, label, ph)	\
	{ #f, kind, unit, offsetof(struct mg_vm_info, stats.f), rest, prom,	\
	  label, ph },
static const struct mg_stat vm_lines[] = { VGMEM_VM_STATS(VM_STAT) };
#undef VM_STAT

const struct mg_stat_table mg_gpu_stats = {
	gpu_lines, sizeof(gpu_lines) / sizeof(gpu_lines[0])
};
const struct mg_stat_table mg_vm_stats = {
	vm_lines, sizeof(vm_lines) / sizeof(vm_lines[0])
};
