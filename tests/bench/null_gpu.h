/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A GPU driver with no bytes behind its memory: for measuring the core's own
 * bookkeeping (reducer, relocation, accounting) at sizes no real memory
 * could hold. mem objects are small handles with a location and a size;
 * VRAM is a counter against a nominal size (which may be terabytes);
 * copies complete at once and move nothing; maps and unmaps only count;
 * channels own a real USERD page and are always idle.
 */
#ifndef VGMEM_BENCH_NULL_BACKEND_H
#define VGMEM_BENCH_NULL_BACKEND_H

#include "host-module/core/vg_gpu_ops.h"

struct null_gpu;

extern const struct vg_gpu_ops null_ops;

struct null_gpu *null_create(u64 vram_size);
void null_destroy(struct null_gpu *nb);

struct null_counts {
	u64 vram_used, host_used;
	u64 mems;		/* live mem objects */
	u64 copies;		/* copies submitted in all */
	u64 maps, unmaps, flushes;
};
void null_get_counts(struct null_gpu *nb, struct null_counts *out);

#endif /* VGMEM_BENCH_NULL_BACKEND_H */
