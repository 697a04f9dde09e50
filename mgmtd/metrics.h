/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Prometheus text exposition (format 0.0.4) of mgmtd's model: daemon,
 * per-GPU and per-VM gauges and counters, and per-VM suspension and
 * allocation-stall histograms built from the log2-microsecond buckets of
 * struct vgmem_vm_stats (bucket i covers [2^i, 2^(i+1)) us, so its upper
 * bound le is 2^(i+1) us; the last bucket also holds everything longer and
 * only counts towards +Inf). Every VM the model knows is exported, with
 * zeros, from the moment it appears, so rates work from the first scrape.
 */
#ifndef VGMEM_MGMTD_METRICS_H
#define VGMEM_MGMTD_METRICS_H

#include <stddef.h>

#include "model.h"
#include "rest_buf.h"

#define MG_METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

/* Pure formatter: everything from the arguments, nothing else read. */
void mg_metrics_format(struct rbuf *out, const struct mg_status *st,
		       const struct mg_gpu_info *gpus, size_t ngpus,
		       const struct mg_vm_info *vms, size_t nvms);

/*
 * The LRC file cache: vgmem_lrc_gpus, vgmem_lrc_<counter>_total and the
 * "now" fields as gauges vgmem_lrc_<field>. Pure, like the above; apart
 * from it because these counters move without the model's view
 * generation: the REST server appends them to its cached rendering and
 * keys that on an LRC generation of its own (rest_cache.h).
 */
void mg_metrics_format_lrc(struct rbuf *out, const struct mg_lrc *l);

/*
 * Reads the model and formats it, with the LRC counters when the backend
 * reads them; 0 or -errno (then out is unchanged).
 */
int mg_metrics_render(struct mg *mg, struct rbuf *out);

#endif /* VGMEM_MGMTD_METRICS_H */
