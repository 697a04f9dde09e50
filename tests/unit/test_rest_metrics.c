// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GET /metrics over a fake model, parsed as Prometheus text format 0.0.4:
 * every sample line well-formed and preceded by its family's HELP and TYPE,
 * each family declared once, histogram buckets cumulative with increasing
 * le and +Inf equal to _count, every VM present from the start, label
 * values escaped. Plus the pure formatter on hand-made input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "rest_fixture.h"
#include "mgmtd/metrics.h"

#define NVMS	5
#define MAX_FAM	256

FIX_GROUP(NVMS, 4096)

struct fam {
	char name[96];
	char type[16];
	bool help;
};

struct parsed {
	struct fam fam[MAX_FAM];
	size_t nfam;
	size_t samples;
};

static struct fam *fam_find(struct parsed *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nfam; i++)
		if (!strcmp(p->fam[i].name, name))
			return &p->fam[i];
	return NULL;
}

/* The family a sample belongs to (histogram suffixes stripped). */
static struct fam *sample_family(struct parsed *p, const char *metric)
{
	static const char *suffix[] = { "_bucket", "_sum", "_count" };
	char base[96];
	struct fam *f = fam_find(p, metric);
	size_t i, n = strlen(metric);

	if (f)
		return f;
	for (i = 0; i < 3; i++) {
		size_t s = strlen(suffix[i]);

		if (n > s && !strcmp(metric + n - s, suffix[i]) && n - s < sizeof(base)) {
			memcpy(base, metric, n - s);
			base[n - s] = '\0';
			f = fam_find(p, base);
			if (f && !strcmp(f->type, "histogram"))
				return f;
		}
	}
	return NULL;
}

static bool name_ok(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || *s == ':'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == ':'))
			return false;
	return true;
}

/* Parses the labels {a="x",b="y"}; returns the char after '}'. */
static const char *parse_labels(const char *p, char *le, size_t lelen)
{
	assert_int_equal(*p, '{');
	p++;
	le[0] = '\0';
	while (*p != '}') {
		char lname[64];
		size_t n = 0;
		char *v = NULL;
		size_t vn = 0;

		while (*p != '=') {
			assert_true(n < sizeof(lname) - 1);
			lname[n++] = *p++;
		}
		lname[n] = '\0';
		assert_true(name_ok(lname));
		p++;
		assert_int_equal(*p, '"');
		p++;
		if (!strcmp(lname, "le"))
			v = le;
		while (*p != '"') {
			if (*p == '\\') {
				p++;
				assert_true(*p == '\\' || *p == '"' || *p == 'n');
			}
			assert_true(*p && *p != '\n');
			if (v && vn < lelen - 1)
				v[vn++] = *p;
			p++;
		}
		if (v)
			v[vn] = '\0';
		p++;
		if (*p == ',')
			p++;
		else
			assert_int_equal(*p, '}');
	}
	return p + 1;
}

/* Parses the whole text; checks families and the histogram rules. */
static void parse_exposition(char *text, struct parsed *p)
{
	char *save = NULL, *line;
	char cur_series[512] = "";
	double prev_le = -1, prev_cum = -1, inf_cum = -1;

	memset(p, 0, sizeof(*p));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char metric[96], le[32];
		const char *q;
		struct fam *f;
		double v;
		char *end;
		size_t n = 0;

		if (!strncmp(line, "# HELP ", 7)) {
			assert_int_equal(sscanf(line + 7, "%95s", metric), 1);
			assert_null(fam_find(p, metric));	/* once */
			assert_true(p->nfam < MAX_FAM);
			f = &p->fam[p->nfam++];
			snprintf(f->name, sizeof(f->name), "%s", metric);
			f->help = true;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			char type[16];

			assert_int_equal(sscanf(line + 7, "%95s %15s", metric, type), 2);
			f = fam_find(p, metric);
			assert_non_null(f);	/* HELP came first */
			assert_string_equal(f->type, "");
			assert_true(!strcmp(type, "gauge") || !strcmp(type, "counter") ||
				    !strcmp(type, "histogram"));
			snprintf(f->type, sizeof(f->type), "%s", type);
			continue;
		}
		assert_int_not_equal(line[0], '#');
		while (line[n] && line[n] != '{' && line[n] != ' ') {
			assert_true(n < sizeof(metric) - 1);
			metric[n] = line[n];
			n++;
		}
		metric[n] = '\0';
		assert_true(name_ok(metric));
		f = sample_family(p, metric);
		if (!f)
			fprintf(stderr, "sample without family: %s\n", line);
		assert_non_null(f);
		assert_string_not_equal(f->type, "");
		q = line + n;
		le[0] = '\0';
		if (*q == '{')
			q = parse_labels(q, le, sizeof(le));
		assert_int_equal(*q, ' ');
		v = strtod(q + 1, &end);
		assert_int_equal(*end, '\0');
		assert_true(v >= 0);
		if (!strcmp(f->type, "counter"))
			assert_true(strlen(metric) > 6 &&
				    !strcmp(metric + strlen(metric) - 6, "_total"));
		p->samples++;

		if (!strcmp(f->type, "histogram")) {
			/* series identity: the labels without le */
			char series[512];
			const char *lp = strchr(line, '{');
			const char *lend = lp ? strstr(lp, ",le=") : NULL;

			snprintf(series, sizeof(series), "%s%.*s", f->name,
				 (int)(lend ? lend - lp : (lp ? (long)(strchr(lp, '}') - lp) : 0)),
				 lp ? lp : "");
			if (strstr(metric, "_bucket")) {
				double lev;

				assert_true(le[0]);
				lev = strcmp(le, "+Inf") ? strtod(le, NULL) : INFINITY;
				if (strcmp(series, cur_series)) {
					snprintf(cur_series, sizeof(cur_series), "%s", series);
					prev_le = -1;
					prev_cum = -1;
				}
				assert_true(lev > prev_le);
				assert_true(v >= prev_cum);	/* cumulative */
				prev_le = lev;
				prev_cum = v;
				if (isinf(lev))
					inf_cum = v;
			} else if (strstr(metric, "_count")) {
				assert_true(isinf(prev_le));	/* +Inf came last */
				assert_true(v == inf_cum);
			}
		}
	}
	for (size_t i = 0; i < p->nfam; i++)
		assert_string_not_equal(p->fam[i].type, "");
}

static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0;
	const char *p = text;

	while ((p = strstr(p, prefix))) {
		if (p == text || p[-1] == '\n')
			n++;
		p++;
	}
	return n;
}

static void test_scrape(void **state)
{
	struct http_resp r = fix_req(&F, "GET", "/metrics", NULL);
	struct parsed p;
	char *copy;

	(void)state;
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, MG_METRICS_CONTENT_TYPE);
	assert_int_equal(r.body[r.len - 1], '\n');
	copy = strdup(r.body);
	parse_exposition(copy, &p);
	free(copy);
	assert_true(p.samples > 100);
	assert_string_equal(fam_find(&p, "vgmem_vm_suspension_seconds")->type, "histogram");
	assert_string_equal(fam_find(&p, "vgmem_vm_alloc_stall_seconds")->type, "histogram");
	assert_string_equal(fam_find(&p, "vgmem_vm_relocation_bytes_total")->type, "counter");
	assert_string_equal(fam_find(&p, "vgmem_gpu_vram_bytes")->type, "gauge");

	/* every VM, from the start */
	assert_int_equal(count_lines(r.body, "vgmem_vm_entitlement_bytes{"), NVMS);
	assert_int_equal(count_lines(r.body, "vgmem_vm_suspension_seconds_count{"), NVMS);
	assert_int_equal(count_lines(r.body, "vgmem_gpu_vram_bytes{"), 2);
	/* 23 finite buckets and +Inf per VM */
	assert_int_equal(count_lines(r.body, "vgmem_vm_suspension_seconds_bucket{"),
			 NVMS * VGMEM_HIST_BUCKETS);
	/* escaped label value of the first VM's domain name */
	assert_non_null(strstr(r.body, "domain=\"web \\\"prod\\\"\\\\1\""));
	/* 1 us and 3 us fall under le=4us; 700 us under 1.024 ms; 20 s only in +Inf */
	assert_non_null(strstr(r.body,
		"vgmem_vm_suspension_seconds_bucket{vm=\"00000000-0000-4000-8000-000000000002\",domain=\"vm2\",domain_uuid=\"\",gpu=\"1\",le=\"0.000004\"} 2\n"));
	assert_non_null(strstr(r.body,
		"vgmem_vm_suspension_seconds_bucket{vm=\"00000000-0000-4000-8000-000000000002\",domain=\"vm2\",domain_uuid=\"\",gpu=\"1\",le=\"0.001024\"} 3\n"));
	assert_non_null(strstr(r.body,
		"vgmem_vm_suspension_seconds_bucket{vm=\"00000000-0000-4000-8000-000000000002\",domain=\"vm2\",domain_uuid=\"\",gpu=\"1\",le=\"8.388608\"} 3\n"));
	assert_non_null(strstr(r.body,
		"vgmem_vm_suspension_seconds_bucket{vm=\"00000000-0000-4000-8000-000000000002\",domain=\"vm2\",domain_uuid=\"\",gpu=\"1\",le=\"+Inf\"} 4\n"));
	assert_non_null(strstr(r.body,
		"vgmem_vm_suspension_seconds_sum{vm=\"00000000-0000-4000-8000-000000000002\",domain=\"vm2\",domain_uuid=\"\",gpu=\"1\"} 20.000704000\n"));
	assert_non_null(strstr(r.body, "vgmem_mgmtd_info{version=\"" MG_VERSION "\",backend=\"embedded\"} 1\n"));
	/* the file cache's VRAM: gauges with their neighbours' labels */
	assert_string_equal(fam_find(&p, "vgmem_gpu_cache_used_bytes")->type, "gauge");
	assert_string_equal(fam_find(&p, "vgmem_vm_cache_private_bytes")->type, "gauge");
	assert_int_equal(count_lines(r.body, "vgmem_gpu_cache_used_bytes{"), 2);
	assert_int_equal(count_lines(r.body, "vgmem_vm_cache_private_bytes{"), NVMS);
	assert_non_null(strstr(r.body,
		"\nvgmem_gpu_cache_used_bytes{gpu=\"1\",device=\"sim1\"} 4194304\n"));
	assert_non_null(strstr(r.body,
		"\nvgmem_vm_cache_private_bytes{vm=\"00000000-0000-4000-8000-000000000002\",domain=\"vm2\",domain_uuid=\"\",gpu=\"1\"} 131072\n"));
	assert_non_null(strstr(r.body, "vgmem_rest_responses_total{class=\"2xx\"}"));
	http_free(&r);
}

/*
 * Values in Prometheus' base units: an unlimited host budget (0 in the
 * model) is +Inf, the oversubscription percent a ratio; a VM's series
 * carry its domain's name and UUID.
 */
static void test_units_and_labels(void **state)
{
	static const struct {
		uint32_t pct;
		const char *ratio;
	} pcts[] = {
		{ 100, "1" }, { 200, "2" }, { 250, "2.5" }, { 125, "1.25" },
		{ 105, "1.05" }, { 1000, "10" },
	};
	struct mg_status st = { .version = "x", .backend = "embedded" };
	struct mg_gpu_info gpu[2];
	struct mg_vm_info vm;
	struct parsed p;
	char want[160];
	struct rbuf b;
	char *text;
	size_t i;

	(void)state;
	memset(gpu, 0, sizeof(gpu));
	memset(&vm, 0, sizeof(vm));
	gpu[1].index = 1;
	gpu[1].host_budget = 1ull << 30;
	snprintf(gpu[0].name, sizeof(gpu[0].name), "0000:65:00.0");
	snprintf(vm.id, sizeof(vm.id), "11111111-2222-4333-8444-555555555555");
	snprintf(vm.name, sizeof(vm.name), "web1");
	snprintf(vm.domain_uuid, sizeof(vm.domain_uuid),
		 "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
	vm.gpu = 1;
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		gpu[0].oversub_pct = pcts[i].pct;
		rbuf_init(&b, 1024);
		mg_metrics_format(&b, &st, gpu, 2, &vm, 1);
		text = rbuf_take(&b, NULL);
		assert_non_null(text);
		snprintf(want, sizeof(want),
			 "\nvgmem_gpu_oversub_ratio{gpu=\"0\",device=\"0000:65:00.0\"} %s\n",
			 pcts[i].ratio);
		if (!strstr(text, want))
			fail_msg("%u%%: no line %s", pcts[i].pct, want + 1);
		assert_non_null(strstr(text,
			"\nvgmem_gpu_host_budget_bytes{gpu=\"0\",device=\"0000:65:00.0\"} +Inf\n"));
		assert_non_null(strstr(text,
			"\nvgmem_gpu_host_budget_bytes{gpu=\"1\",device=\"\"} 1073741824\n"));
		assert_non_null(strstr(text,
			"\nvgmem_vm_running{vm=\"11111111-2222-4333-8444-555555555555\",domain=\"web1\",domain_uuid=\"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee\",gpu=\"1\"} 0\n"));
		assert_null(strstr(text, "oversub_percent"));
		parse_exposition(text, &p);
		free(text);
	}
}

/* A VM that just appeared (all zeros) is exported and still well-formed. */
static void test_new_vm_zeros(void **state)
{
	struct mg_status st = { .version = "x", .backend = "embedded" };
	struct mg_vm_info vm;
	struct mg_gpu_info gpu;
	struct parsed p;
	struct rbuf b;
	char *text;

	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(&gpu, 0, sizeof(gpu));
	snprintf(vm.id, sizeof(vm.id), "11111111-2222-4333-8444-555555555555");
	rbuf_init(&b, 1024);
	mg_metrics_format(&b, &st, &gpu, 1, &vm, 1);
	text = rbuf_take(&b, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text,
		"vgmem_vm_suspension_seconds_bucket{vm=\"11111111-2222-4333-8444-555555555555\",domain=\"\",domain_uuid=\"\",gpu=\"0\",le=\"+Inf\"} 0\n"));
	assert_non_null(strstr(text,
		"vgmem_vm_suspension_seconds_sum{vm=\"11111111-2222-4333-8444-555555555555\",domain=\"\",domain_uuid=\"\",gpu=\"0\"} 0.000000000\n"));
	parse_exposition(text, &p);
	free(text);

	/* no VMs, no GPUs: families still declared, still valid */
	rbuf_init(&b, 1024);
	mg_metrics_format(&b, &st, NULL, 0, NULL, 0);
	text = rbuf_take(&b, NULL);
	parse_exposition(text, &p);
	assert_non_null(fam_find(&p, "vgmem_vm_running"));
	free(text);
}

/*
 * The LRC file cache families in a scrape: counters as _total, the "now"
 * fields as gauges, vgmem_lrc_gpus, each with the model's value.
 */
static void test_lrc(void **state)
{
	struct http_resp r = fix_req(&F, "GET", "/metrics", NULL);
	struct parsed p;
	struct fam *f;
	char *copy;

	(void)state;
	assert_int_equal(r.status, 200);
	copy = strdup(r.body);
	parse_exposition(copy, &p);
	free(copy);
	assert_string_equal(fam_find(&p, "vgmem_lrc_gpus")->type, "gauge");
#define LRC_FAM(fld, attr, kind, hlp, unit, prom)			\
	f = fam_find(&p, prom);						\
	if (!f)								\
		fprintf(stderr, "missing family %s\n", prom);		\
	assert_non_null(f);						\
	assert_string_equal(f->type, (kind) == VGMEM_STAT_GAUGE ? "gauge" : "counter");	\
	assert_true(f->help);
	VGMEM_LRC_STATS(LRC_FAM)
#undef LRC_FAM
	assert_non_null(strstr(r.body, "\nvgmem_lrc_gpus 2\n"));
	assert_non_null(strstr(r.body, "\nvgmem_lrc_faults_minor_total 7\n"));
	assert_non_null(strstr(r.body, "\nvgmem_lrc_vram_used_bytes 3221225472\n"));
	assert_non_null(strstr(r.body, "\nvgmem_lrc_page_meta_bytes 48\n"));
	assert_non_null(strstr(r.body, "\nvgmem_lrc_merges_total 0\n"));
	assert_null(strstr(r.body, "vgmem_lrc_vram_used_total"));
	assert_null(strstr(r.body, "vgmem_lrc_vram_used "));
	http_free(&r);

	/* a backend that cannot read the cache: the rest is still served */
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc_err = -EIO;
	pthread_mutex_unlock(&F.mg->lock);
	r = fix_req(&F, "GET", "/metrics", NULL);
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc_err = 0;
	pthread_mutex_unlock(&F.mg->lock);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, "vgmem_lrc_"));
	assert_non_null(strstr(r.body, "vgmem_rest_responses_total{class=\"2xx\"}"));
	http_free(&r);

	/* the pure formatter alone is a valid exposition too */
	{
		struct mg_lrc l;
		struct rbuf b;
		char *text;

		memset(&l, 0, sizeof(l));
		l.evictions = 5;
		rbuf_init(&b, 1024);
		mg_metrics_format_lrc(&b, &l);
		text = rbuf_take(&b, NULL);
		assert_non_null(text);
		assert_non_null(strstr(text, "\nvgmem_lrc_evictions_total 5\n"));
		parse_exposition(text, &p);
		/* vgmem_lrc_gpus and one family per counter */
#define LRC_ONE(f, attr, kind, ...) + 1
		assert_int_equal(p.nfam, 1 VGMEM_LRC_STATS(LRC_ONE));
		assert_int_equal(p.samples, 1 VGMEM_LRC_STATS(LRC_ONE));
#undef LRC_ONE
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape),
		cmocka_unit_test(test_new_vm_zeros),
		cmocka_unit_test(test_units_and_labels),
		cmocka_unit_test(test_lrc),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
