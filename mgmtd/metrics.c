// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Prometheus exposition of the model (metrics.h). Families are written one
 * at a time (HELP, TYPE, then every series) as the format requires; the
 * per-family tables below keep names, help texts and fields together.
 */
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum val_kind { V_U64, V_U32, V_BOOL, V_NS };	/* V_NS: printed as seconds */

struct family {
	const char *name;
	const char *type;	/* gauge | counter */
	const char *help;
	size_t off;		/* field offset in the info struct */
	enum val_kind kind;
	const char *extra;	/* extra label text, e.g. direction="out" */
};

#define VMF(f) offsetof(struct mg_vm_info, f)
#define GPUF(f) offsetof(struct mg_gpu_info, f)

/* Consecutive entries with the same name form one family. */
static const struct family vm_families[] = {
	{ "vgmem_vm_running", "gauge", "1 while the VM has a live vGPU.",
	  VMF(running), V_BOOL, NULL },
	{ "vgmem_vm_lost", "gauge", "1 while a started VM's vGPU (mdev) is gone from the backend.",
	  VMF(lost), V_BOOL, NULL },
	{ "vgmem_vm_quota_bytes", "gauge", "GPU memory the vGPU offers (VRAM plus host RAM).",
	  VMF(policy.quota), V_U64, NULL },
	{ "vgmem_vm_min_bytes", "gauge", "VRAM never taken away (policy min).",
	  VMF(policy.min), V_U64, NULL },
	{ "vgmem_vm_low_bytes", "gauge", "VRAM use protected while others are above their low.",
	  VMF(policy.low), V_U64, NULL },
	{ "vgmem_vm_max_bytes", "gauge", "VRAM cap (policy max).",
	  VMF(policy.max), V_U64, NULL },
	{ "vgmem_vm_weight", "gauge", "Share of contended VRAM (1..10000).",
	  VMF(policy.weight), V_U32, NULL },
	{ "vgmem_vm_priority", "gauge", "Priority class (higher is served first).",
	  VMF(policy.priority), V_U32, NULL },
	{ "vgmem_vm_entitlement_bytes", "gauge", "VRAM entitlement last applied.",
	  VMF(entitlement), V_U64, NULL },
	{ "vgmem_vm_guaranteed_bytes", "gauge", "Part of the entitlement given by min and low.",
	  VMF(guaranteed), V_U64, NULL },
	{ "vgmem_vm_allocated_bytes", "gauge", "Bytes in live buffer objects.",
	  VMF(stats.allocated), V_U64, NULL },
	{ "vgmem_vm_resident_bytes", "gauge", "Bytes in VRAM.",
	  VMF(stats.resident), V_U64, NULL },
	{ "vgmem_vm_relocated_bytes", "gauge", "Bytes relocated to host RAM now.",
	  VMF(stats.relocated), V_U64, NULL },
	{ "vgmem_vm_cache_private_bytes", "gauge", "VRAM in the file cache's private replicas of the VM (pages it wrote), apart from resident.",
	  VMF(cache_private), V_U64, NULL },
	{ "vgmem_vm_relocation_chunks_total", "counter", "Chunks moved between VRAM and host RAM.",
	  VMF(stats.reloc_out_chunks), V_U64, "direction=\"out\"" },
	{ "vgmem_vm_relocation_chunks_total", NULL, NULL,
	  VMF(stats.reloc_in_chunks), V_U64, "direction=\"in\"" },
	{ "vgmem_vm_relocation_bytes_total", "counter", "Bytes moved between VRAM and host RAM.",
	  VMF(stats.bytes_out), V_U64, "direction=\"out\"" },
	{ "vgmem_vm_relocation_bytes_total", NULL, NULL,
	  VMF(stats.bytes_in), V_U64, "direction=\"in\"" },
	{ "vgmem_vm_suspensions_total", "counter", "Times the VM's channels were suspended for relocation.",
	  VMF(stats.suspends), V_U64, NULL },
	{ "vgmem_vm_suspension_last_seconds", "gauge", "Length of the last suspension.",
	  VMF(stats.suspend_last_ns), V_NS, NULL },
	{ "vgmem_vm_suspension_max_seconds", "gauge", "Longest suspension so far.",
	  VMF(stats.suspend_max_ns), V_NS, NULL },
	{ "vgmem_vm_faults_total", "counter", "Channel errors.",
	  VMF(stats.faults), V_U64, NULL },
	{ "vgmem_vm_advisory", "gauge", "1 while a migration advisory is raised (thrashing).",
	  VMF(advisory), V_BOOL, NULL },
};

static const struct family gpu_families[] = {
	{ "vgmem_gpu_vram_bytes", "gauge", "VRAM size.",
	  GPUF(vram_size), V_U64, NULL },
	{ "vgmem_gpu_vram_used_bytes", "gauge", "VRAM in use by buffer objects.",
	  GPUF(vram_used), V_U64, NULL },
	{ "vgmem_gpu_cache_used_bytes", "gauge", "VRAM held by the file cache's replicas, apart from vram_used; given back before any chunk is relocated.",
	  GPUF(cache_used), V_U64, NULL },
	{ "vgmem_gpu_host_used_bytes", "gauge", "Host RAM holding relocated memory.",
	  GPUF(host_used), V_U64, NULL },
	{ "vgmem_gpu_host_budget_bytes", "gauge", "Host RAM budget for relocated memory (0: unlimited).",
	  GPUF(host_budget), V_U64, NULL },
	{ "vgmem_gpu_chunk_bytes", "gauge", "Relocation granularity.",
	  GPUF(chunk_size), V_U64, NULL },
	{ "vgmem_gpu_oversub_percent", "gauge", "Oversubscription limit: sum of quotas <= VRAM * this / 100.",
	  GPUF(oversub_pct), V_U32, NULL },
	{ "vgmem_gpu_vms", "gauge", "VMs on the GPU.",
	  GPUF(nr_vms), V_U32, NULL },
	{ "vgmem_gpu_entitled_bytes", "gauge", "Sum of entitlements at the last recompute.",
	  GPUF(entitled), V_U64, NULL },
	{ "vgmem_gpu_spare_bytes", "gauge", "Usable VRAM left unentitled at the last recompute.",
	  GPUF(spare), V_U64, NULL },
	{ "vgmem_gpu_demand_bytes", "gauge", "Sum of demands (each capped at max) at the last recompute.",
	  GPUF(demand), V_U64, NULL },
	{ "vgmem_gpu_contended", "gauge", "1 if some demand could not be met at the last recompute.",
	  GPUF(contended), V_BOOL, NULL },
	{ "vgmem_gpu_relocation_chunks_total", "counter", "Chunks moved between VRAM and host RAM.",
	  GPUF(reloc_out_chunks), V_U64, "direction=\"out\"" },
	{ "vgmem_gpu_relocation_chunks_total", NULL, NULL,
	  GPUF(reloc_in_chunks), V_U64, "direction=\"in\"" },
	{ "vgmem_gpu_relocation_bytes_total", "counter", "Bytes moved between VRAM and host RAM.",
	  GPUF(bytes_out), V_U64, "direction=\"out\"" },
	{ "vgmem_gpu_relocation_bytes_total", NULL, NULL,
	  GPUF(bytes_in), V_U64, "direction=\"in\"" },
	{ "vgmem_gpu_relocations_total", "counter", "Relocation passes.",
	  GPUF(relocations), V_U64, NULL },
	{ "vgmem_gpu_relocation_failures_total", "counter", "Relocation passes that failed.",
	  GPUF(reloc_failures), V_U64, NULL },
	{ "vgmem_gpu_copy_seconds_total", "counter", "Time the copy engine spent relocating.",
	  GPUF(copy_device_ns), V_NS, NULL },
	{ "vgmem_gpu_faults_total", "counter", "Channel errors on the GPU.",
	  GPUF(faults), V_U64, NULL },
};

static void put_seconds_ns(struct rbuf *b, uint64_t ns)
{
	char frac[10];
	uint64_t f = ns % 1000000000u;
	int i;

	rbuf_u64(b, ns / 1000000000u);
	rbuf_putc(b, '.');
	for (i = 8; i >= 0; i--) {
		frac[i] = (char)('0' + f % 10);
		f /= 10;
	}
	rbuf_put(b, frac, 9);
}

static void put_value(struct rbuf *b, const void *base, const struct family *f)
{
	const char *p = (const char *)base + f->off;
	uint64_t v64;
	uint32_t v32;
	bool bv;

	switch (f->kind) {
	case V_U64:
		memcpy(&v64, p, sizeof(v64));
		rbuf_u64(b, v64);
		break;
	case V_U32:
		memcpy(&v32, p, sizeof(v32));
		rbuf_u64(b, v32);
		break;
	case V_BOOL:
		memcpy(&bv, p, sizeof(bv));
		rbuf_putc(b, bv ? '1' : '0');
		break;
	case V_NS:
		memcpy(&v64, p, sizeof(v64));
		put_seconds_ns(b, v64);
		break;
	}
}

static void put_header(struct rbuf *b, const char *name, const char *type,
		       const char *help)
{
	rbuf_puts(b, "# HELP ");
	rbuf_puts(b, name);
	rbuf_putc(b, ' ');
	rbuf_puts(b, help);
	rbuf_puts(b, "\n# TYPE ");
	rbuf_puts(b, name);
	rbuf_putc(b, ' ');
	rbuf_puts(b, type);
	rbuf_putc(b, '\n');
}

static void vm_labels(struct rbuf *b, const struct mg_vm_info *vm)
{
	rbuf_puts(b, "vm=\"");
	rbuf_prom_label(b, vm->id);
	rbuf_puts(b, "\",name=\"");
	rbuf_prom_label(b, vm->name);
	rbuf_puts(b, "\",gpu=\"");
	rbuf_i64(b, vm->gpu);
	rbuf_putc(b, '"');
}

static void gpu_labels(struct rbuf *b, const struct mg_gpu_info *g)
{
	rbuf_puts(b, "gpu=\"");
	rbuf_i64(b, g->index);
	rbuf_puts(b, "\",name=\"");
	rbuf_prom_label(b, g->name);
	rbuf_putc(b, '"');
}

/* A record's label set, formatted once per scrape (most of the text). */
struct lbl {
	char *p;
	size_t len;
};

/* Families over an array of records of size elem with their labels. */
static void put_families(struct rbuf *b, const struct family *fam, size_t nfam,
			 const void *recs, size_t n, size_t elem,
			 const struct lbl *lbls)
{
	size_t i, j, k;

	for (i = 0; i < nfam; i = j) {
		/* [i, j) share one name: one HELP/TYPE, then all series */
		for (j = i + 1; j < nfam && !strcmp(fam[j].name, fam[i].name); j++)
			;
		put_header(b, fam[i].name, fam[i].type, fam[i].help);
		for (k = 0; k < n; k++) {
			const void *rec = (const char *)recs + k * elem;
			size_t f;

			for (f = i; f < j; f++) {
				rbuf_puts(b, fam[f].name);
				rbuf_putc(b, '{');
				rbuf_put(b, lbls[k].p, lbls[k].len);
				if (fam[f].extra) {
					rbuf_putc(b, ',');
					rbuf_puts(b, fam[f].extra);
				}
				rbuf_puts(b, "} ");
				put_value(b, rec, &fam[f]);
				rbuf_putc(b, '\n');
			}
		}
	}
}

/* Labels of n records; NULL on allocation failure. */
static struct lbl *make_labels(const void *recs, size_t n, size_t elem,
			       void (*labels)(struct rbuf *, const void *))
{
	struct lbl *l = calloc(n ? n : 1, sizeof(*l));
	size_t k;

	if (!l)
		return NULL;
	for (k = 0; k < n; k++) {
		struct rbuf t;

		rbuf_init(&t, 128);
		labels(&t, (const char *)recs + k * elem);
		l[k].p = rbuf_take(&t, &l[k].len);
		if (!l[k].p) {
			while (k--)
				free(l[k].p);
			free(l);
			return NULL;
		}
	}
	return l;
}

static void free_labels(struct lbl *l, size_t n)
{
	size_t k;

	if (!l)
		return;
	for (k = 0; k < n; k++)
		free(l[k].p);
	free(l);
}

static void vm_labels_cb(struct rbuf *b, const void *rec)
{
	vm_labels(b, rec);
}

static void gpu_labels_cb(struct rbuf *b, const void *rec)
{
	gpu_labels(b, rec);
}

/* le of bucket i in seconds: 2^(i+1) us, exact in six decimals. */
static void put_le(struct rbuf *b, unsigned int i)
{
	uint64_t us = (uint64_t)1 << (i + 1);
	char frac[6];
	uint64_t f = us % 1000000u;
	int d;

	rbuf_u64(b, us / 1000000u);
	rbuf_putc(b, '.');
	for (d = 5; d >= 0; d--) {
		frac[d] = (char)('0' + f % 10);
		f /= 10;
	}
	rbuf_put(b, frac, 6);
}

static void put_vm_histogram(struct rbuf *b, const char *name, const char *help,
			     const struct mg_vm_info *vms, size_t n,
			     const struct lbl *lbls, size_t hist_off,
			     size_t sum_off)
{
	size_t k;
	unsigned int i;

	put_header(b, name, "histogram", help);
	for (k = 0; k < n; k++) {
		const struct mg_vm_info *vm = &vms[k];
		const char *h = (const char *)vm + hist_off;
		uint64_t sum_ns, cum = 0, v;

		memcpy(&sum_ns, (const char *)vm + sum_off, sizeof(sum_ns));
		for (i = 0; i < VGMEM_HIST_BUCKETS; i++) {
			memcpy(&v, h + i * sizeof(v), sizeof(v));
			cum += v;
			if (i == VGMEM_HIST_BUCKETS - 1)
				break;	/* open-ended: only in +Inf */
			rbuf_puts(b, name);
			rbuf_puts(b, "_bucket{");
			rbuf_put(b, lbls[k].p, lbls[k].len);
			rbuf_puts(b, ",le=\"");
			put_le(b, i);
			rbuf_puts(b, "\"} ");
			rbuf_u64(b, cum);
			rbuf_putc(b, '\n');
		}
		rbuf_puts(b, name);
		rbuf_puts(b, "_bucket{");
		rbuf_put(b, lbls[k].p, lbls[k].len);
		rbuf_puts(b, ",le=\"+Inf\"} ");
		rbuf_u64(b, cum);
		rbuf_putc(b, '\n');

		rbuf_puts(b, name);
		rbuf_puts(b, "_sum{");
		rbuf_put(b, lbls[k].p, lbls[k].len);
		rbuf_puts(b, "} ");
		put_seconds_ns(b, sum_ns);
		rbuf_putc(b, '\n');

		rbuf_puts(b, name);
		rbuf_puts(b, "_count{");
		rbuf_put(b, lbls[k].p, lbls[k].len);
		rbuf_puts(b, "} ");
		rbuf_u64(b, cum);
		rbuf_putc(b, '\n');
	}
}

static void put_scalar(struct rbuf *b, const char *name, const char *type,
		       const char *help, uint64_t v)
{
	put_header(b, name, type, help);
	rbuf_puts(b, name);
	rbuf_putc(b, ' ');
	rbuf_u64(b, v);
	rbuf_putc(b, '\n');
}

void mg_metrics_format(struct rbuf *out, const struct mg_status *st,
		       const struct mg_gpu_info *gpus, size_t ngpus,
		       const struct mg_vm_info *vms, size_t nvms)
{
	struct lbl *vl = make_labels(vms, nvms, sizeof(*vms), vm_labels_cb);
	struct lbl *gl = make_labels(gpus, ngpus, sizeof(*gpus), gpu_labels_cb);
	size_t i;

	if (!vl || !gl) {
		out->oom = true;
		goto out;
	}
	put_header(out, "vgmem_mgmtd_info", "gauge",
		   "mgmtd version and backend (value is always 1).");
	rbuf_puts(out, "vgmem_mgmtd_info{version=\"");
	rbuf_prom_label(out, st->version);
	rbuf_puts(out, "\",backend=\"");
	rbuf_prom_label(out, st->backend);
	rbuf_puts(out, "\"} 1\n");
	put_header(out, "vgmem_mgmtd_start_time_seconds", "gauge",
		   "When mgmtd started, seconds since the epoch.");
	rbuf_puts(out, "vgmem_mgmtd_start_time_seconds ");
	put_seconds_ns(out, st->started_ms > 0 ?
		       (uint64_t)st->started_ms * 1000000u : 0);
	rbuf_putc(out, '\n');
	put_scalar(out, "vgmem_libvirt_connected", "gauge",
		   "1 while mgmtd is connected to libvirt.",
		   st->libvirt_connected ? 1 : 0);
	put_scalar(out, "vgmem_recomputes_total", "counter",
		   "Entitlement recomputations.", st->recomputes);
	put_scalar(out, "vgmem_advisories_total", "counter",
		   "Migration advisories raised.", st->advisories);
	put_header(out, "vgmem_migrations_total", "counter",
		   "Live migrations of thrashing domains (migrate_uri), by outcome.");
	rbuf_puts(out, "vgmem_migrations_total{result=\"ok\"} ");
	rbuf_u64(out, st->migrations_ok);
	rbuf_puts(out, "\nvgmem_migrations_total{result=\"failed\"} ");
	rbuf_u64(out, st->migrations_failed);
	rbuf_putc(out, '\n');
	put_scalar(out, "vgmem_events_last_id", "gauge",
		   "Id of the newest event.", st->last_event_id);
	put_scalar(out, "vgmem_gpus", "gauge", "GPUs managed.", ngpus);
	put_scalar(out, "vgmem_vms", "gauge", "VMs known.", nvms);

	put_families(out, gpu_families,
		     sizeof(gpu_families) / sizeof(gpu_families[0]),
		     gpus, ngpus, sizeof(*gpus), gl);
	put_header(out, "vgmem_gpu_eviction_policy", "gauge",
		   "Victim selection policy in force (value is always 1).");
	for (i = 0; i < ngpus; i++) {
		rbuf_puts(out, "vgmem_gpu_eviction_policy{");
		rbuf_put(out, gl[i].p, gl[i].len);
		rbuf_puts(out, ",policy=\"");
		rbuf_prom_label(out, gpus[i].policy);
		rbuf_puts(out, "\"} 1\n");
	}

	put_families(out, vm_families,
		     sizeof(vm_families) / sizeof(vm_families[0]),
		     vms, nvms, sizeof(*vms), vl);
	put_vm_histogram(out, "vgmem_vm_suspension_seconds",
			 "How long the VM's channels stayed suspended for relocation.",
			 vms, nvms, vl, VMF(stats.suspend_hist),
			 VMF(stats.suspend_total_ns));
	put_vm_histogram(out, "vgmem_vm_alloc_stall_seconds",
			 "How long allocations waited for relocation to make room.",
			 vms, nvms, vl, VMF(stats.stall_hist),
			 VMF(stats.stall_total_ns));
out:
	free_labels(vl, nvms);
	free_labels(gl, ngpus);
}

void mg_metrics_format_lrc(struct rbuf *out, const struct mg_lrc *l)
{
	char name[64];

	put_scalar(out, "vgmem_lrc_gpus", "gauge",
		   "GPUs the LRC file cache serves (0: no cache).", l->gpus);
#define LRC_METRIC(f, attr, kind, help)					\
	snprintf(name, sizeof(name), "vgmem_lrc_" #f "%s",		\
		 (kind) == VGMEM_STAT_GAUGE ? "" : "_total");				\
	put_scalar(out, name, (kind) == VGMEM_STAT_GAUGE ? "gauge" : "counter", help, l->f);
	VGMEM_LRC_STATS(LRC_METRIC)
#undef LRC_METRIC
}

int mg_metrics_render(struct mg *mg, struct rbuf *out)
{
	struct mg_gpu_info *gpus = NULL;
	struct mg_vm_info *vms = NULL;
	struct mg_status st;
	struct mg_lrc lrc;
	size_t ngpus = 0, nvms = 0;
	int ret;

	ret = mg_get_status(mg, &st);
	if (ret)
		return ret;
	ret = mg_list_gpus(mg, &gpus, &ngpus);
	if (ret)
		return ret;
	ret = mg_list_vms(mg, &vms, &nvms);
	if (ret)
		goto err_free_gpus;
	mg_metrics_format(out, &st, gpus, ngpus, vms, nvms);
	/* a backend that cannot read the cache costs its families only */
	if (!mg_get_lrc(mg, &lrc))
		mg_metrics_format_lrc(out, &lrc);
	free(vms);
err_free_gpus:
	free(gpus);
	return ret;
}
