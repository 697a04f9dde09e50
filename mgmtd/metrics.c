// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Prometheus exposition of the model (metrics.h). Families are written one
 * at a time (HELP, TYPE, then every series) as the format requires; the
 * per-family tables below keep names, help texts and fields together for
 * the model's own facts, and the GPU's and VM's counters are the families
 * of their lines of <uapi/vgmem_stats.h> (rest_stats.h).
 */
#include "metrics.h"
#include "rest_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * V_LIMIT: a u64 where 0 means no limit, shown as +Inf so that a ratio
 * against it is 0 and a threshold on it never fires; V_PCT: a u32 percent
 * shown as a ratio (Prometheus' base unit).
 */
enum val_kind { V_U64, V_U32, V_BOOL, V_LIMIT, V_PCT };

struct family {
	const char *name;
	const char *type;	/* gauge | counter */
	const char *help;
	size_t off;		/* field offset in the info struct */
	enum val_kind kind;
};

#define VMF(f) offsetof(struct mg_vm_info, f)
#define GPUF(f) offsetof(struct mg_gpu_info, f)

/* The VM's facts of the model's; its counters are the schema's. */
static const struct family vm_families[] = {
	{ "vgmem_vm_running", "gauge", "1 while the VM has a live vGPU.",
	  VMF(running), V_BOOL },
	{ "vgmem_vm_lost", "gauge", "1 while a started VM's vGPU (mdev) is gone from the backend.",
	  VMF(lost), V_BOOL },
	{ "vgmem_vm_quota_bytes", "gauge", "GPU memory the vGPU offers (VRAM plus host RAM).",
	  VMF(policy.quota), V_U64 },
	{ "vgmem_vm_min_bytes", "gauge", "VRAM never taken away (policy min).",
	  VMF(policy.min), V_U64 },
	{ "vgmem_vm_low_bytes", "gauge", "VRAM use protected while others are above their low.",
	  VMF(policy.low), V_U64 },
	{ "vgmem_vm_max_bytes", "gauge", "VRAM cap (policy max).",
	  VMF(policy.max), V_U64 },
	{ "vgmem_vm_weight", "gauge", "Share of contended VRAM (1..10000).",
	  VMF(policy.weight), V_U32 },
	{ "vgmem_vm_priority", "gauge", "Priority class (higher is served first).",
	  VMF(policy.priority), V_U32 },
	{ "vgmem_vm_entitlement_bytes", "gauge", "VRAM entitlement last applied.",
	  VMF(entitlement), V_U64 },
	{ "vgmem_vm_guaranteed_bytes", "gauge", "Part of the entitlement given by min and low.",
	  VMF(guaranteed), V_U64 },
	{ "vgmem_vm_cache_private_bytes", "gauge", "VRAM in the file cache's private replicas of the VM (pages it wrote), apart from resident.",
	  VMF(cache_private), V_U64 },
	{ "vgmem_vm_advisory", "gauge", "1 while a migration advisory is raised (thrashing).",
	  VMF(advisory), V_BOOL },
};

/* The GPU's facts of the model's; its counters are the schema's. */
static const struct family gpu_families[] = {
	{ "vgmem_gpu_vram_bytes", "gauge", "VRAM size.",
	  GPUF(vram_size), V_U64 },
	{ "vgmem_gpu_vram_used_bytes", "gauge", "VRAM in use by buffer objects.",
	  GPUF(vram_used), V_U64 },
	{ "vgmem_gpu_cache_used_bytes", "gauge", "VRAM held by the file cache's replicas, apart from vram_used; given back before any chunk is relocated.",
	  GPUF(cache_used), V_U64 },
	{ "vgmem_gpu_host_used_bytes", "gauge", "Host RAM holding relocated memory.",
	  GPUF(host_used), V_U64 },
	{ "vgmem_gpu_host_budget_bytes", "gauge", "Host RAM budget for relocated memory (+Inf: unlimited).",
	  GPUF(host_budget), V_LIMIT },
	{ "vgmem_gpu_chunk_bytes", "gauge", "Relocation granularity.",
	  GPUF(chunk_size), V_U64 },
	{ "vgmem_gpu_oversub_ratio", "gauge", "Oversubscription limit: sum of quotas <= VRAM * this.",
	  GPUF(oversub_pct), V_PCT },
	{ "vgmem_gpu_vms", "gauge", "VMs on the GPU.",
	  GPUF(nr_vms), V_U32 },
	{ "vgmem_gpu_entitled_bytes", "gauge", "Sum of entitlements at the last recompute.",
	  GPUF(entitled), V_U64 },
	{ "vgmem_gpu_spare_bytes", "gauge", "Usable VRAM left unentitled at the last recompute.",
	  GPUF(spare), V_U64 },
	{ "vgmem_gpu_demand_bytes", "gauge", "Sum of demands (each capped at max) at the last recompute.",
	  GPUF(demand), V_U64 },
	{ "vgmem_gpu_contended", "gauge", "1 if some demand could not be met at the last recompute.",
	  GPUF(contended), V_BOOL },
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
	case V_LIMIT:
		memcpy(&v64, p, sizeof(v64));
		if (v64)
			rbuf_u64(b, v64);
		else
			rbuf_puts(b, "+Inf");
		break;
	case V_PCT:
		memcpy(&v32, p, sizeof(v32));
		rbuf_u64(b, v32 / 100);
		if (v32 % 100) {
			rbuf_putc(b, '.');
			rbuf_putc(b, (char)('0' + v32 % 100 / 10));
			if (v32 % 10)
				rbuf_putc(b, (char)('0' + v32 % 10));
		}
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

/*
 * A VM's series are labelled as per-VM GPU exporters label theirs: the
 * workload (the libvirt domain's name and UUID), the vGPU (its mdev UUID)
 * and the GPU's index, so a query joins them with the GPU's series on gpu
 * and with libvirt's exporters on domain. A VM without a domain (config
 * file, --embedded-vm) has empty domain labels.
 */
static void vm_labels(struct rbuf *b, const struct mg_vm_info *vm)
{
	rbuf_puts(b, "vm=\"");
	rbuf_prom_label(b, vm->id);
	rbuf_puts(b, "\",domain=\"");
	rbuf_prom_label(b, vm->name);
	rbuf_puts(b, "\",domain_uuid=\"");
	rbuf_prom_label(b, vm->domain_uuid);
	rbuf_puts(b, "\",gpu=\"");
	rbuf_i64(b, vm->gpu);
	rbuf_putc(b, '"');
}

/* gpu is the index VMs name; device the kernel's name of the GPU. */
static void gpu_labels(struct rbuf *b, const struct mg_gpu_info *g)
{
	rbuf_puts(b, "gpu=\"");
	rbuf_i64(b, g->index);
	rbuf_puts(b, "\",device=\"");
	rbuf_prom_label(b, g->name);
	rbuf_putc(b, '"');
}

/* A record's label set, formatted once per scrape (most of the text). */
struct lbl {
	char *p;
	size_t len;
};

/* The start of a sample, "name{labels[,extra]} ", before its value. */
static void put_series(struct rbuf *b, const char *name, const struct lbl *l,
		       const char *extra)
{
	rbuf_puts(b, name);
	rbuf_putc(b, '{');
	rbuf_put(b, l->p, l->len);
	if (extra) {
		rbuf_putc(b, ',');
		rbuf_puts(b, extra);
	}
	rbuf_puts(b, "} ");
}

/* Families over an array of records of size elem with their labels. */
static void put_families(struct rbuf *b, const struct family *fam, size_t nfam,
			 const void *recs, size_t n, size_t elem,
			 const struct lbl *lbls)
{
	size_t i, k;

	for (i = 0; i < nfam; i++) {
		put_header(b, fam[i].name, fam[i].type, fam[i].help);
		for (k = 0; k < n; k++) {
			put_series(b, fam[i].name, &lbls[k], NULL);
			put_value(b, (const char *)recs + k * elem, &fam[i]);
			rbuf_putc(b, '\n');
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

/*
 * The series of a histogram family over records of size elem: buckets and
 * _count from the line hist, _sum from the line sum (nanoseconds, shown
 * as seconds).
 */
static void put_histogram(struct rbuf *b, const char *name, const void *recs,
			  size_t n, size_t elem, const struct lbl *lbls,
			  const struct mg_stat *hist, const struct mg_stat *sum)
{
	size_t k;
	unsigned int i;

	for (k = 0; k < n; k++) {
		const void *rec = (const char *)recs + k * elem;
		uint64_t cum = 0;

		for (i = 0; i < VGMEM_HIST_BUCKETS; i++) {
			cum += mg_stat_get(hist, rec, i);
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
		put_seconds_ns(b, sum ? mg_stat_get(sum, rec, 0) : 0);
		rbuf_putc(b, '\n');

		rbuf_puts(b, name);
		rbuf_puts(b, "_count{");
		rbuf_put(b, lbls[k].p, lbls[k].len);
		rbuf_puts(b, "} ");
		rbuf_u64(b, cum);
		rbuf_putc(b, '\n');
	}
}

static bool in_family(const struct mg_stat *m, const char *name)
{
	return m->prom && !strcmp(m->prom, name);
}

/*
 * The families of a table's counters over records of size elem: one a
 * name, where its first line is. A family with a histogram line is that
 * histogram, its counter line the _sum; the others have a series a line.
 */
static void put_stat_families(struct rbuf *b, const struct mg_stat_table *t,
			      const void *recs, size_t n, size_t elem,
			      const struct lbl *lbls)
{
	size_t i, j, k, f;

	for (i = 0; i < t->n; i++) {
		const struct mg_stat *s = &t->line[i], *hist = NULL, *sum = NULL;
		const char *help = "";

		if (!s->prom)
			continue;
		for (j = 0; j < i; j++)
			if (in_family(&t->line[j], s->prom))
				break;
		if (j < i)
			continue;	/* written with its family */
		for (f = i; f < t->n; f++) {
			const struct mg_stat *m = &t->line[f];

			if (!in_family(m, s->prom))
				continue;
			if (m->prom_help)
				help = m->prom_help;
			if (m->kind == VGMEM_STAT_HIST)
				hist = m;
			else if (m->kind == VGMEM_STAT_COUNTER)
				sum = m;
		}
		if (hist) {
			put_header(b, s->prom, "histogram", help);
			put_histogram(b, s->prom, recs, n, elem, lbls, hist, sum);
			continue;
		}
		put_header(b, s->prom, s->kind == VGMEM_STAT_COUNTER ?
			   "counter" : "gauge", help);
		for (k = 0; k < n; k++) {
			const void *rec = (const char *)recs + k * elem;

			for (f = i; f < t->n; f++) {
				const struct mg_stat *m = &t->line[f];

				if (!in_family(m, s->prom))
					continue;
				put_series(b, m->prom, &lbls[k], m->label);
				if (m->unit == VGMEM_UNIT_NS)
					put_seconds_ns(b, mg_stat_get(m, rec, 0));
				else
					rbuf_u64(b, mg_stat_get(m, rec, 0));
				rbuf_putc(b, '\n');
			}
		}
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
	put_stat_families(out, &mg_gpu_stats, gpus, ngpus, sizeof(*gpus), gl);
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
	put_stat_families(out, &mg_vm_stats, vms, nvms, sizeof(*vms), vl);
out:
	free_labels(vl, nvms);
	free_labels(gl, ngpus);
}

void mg_metrics_format_lrc(struct rbuf *out, const struct mg_lrc *l)
{
	put_scalar(out, "vgmem_lrc_gpus", "gauge",
		   "GPUs the LRC file cache serves (0: no cache).", l->gpus);
#define LRC_METRIC(f, attr, kind, help, unit, prom)			\
	put_scalar(out, prom, (kind) == VGMEM_STAT_GAUGE ? "gauge" : "counter", \
		   help, l->f);
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
