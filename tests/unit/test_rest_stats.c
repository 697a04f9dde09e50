// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Every line of VGMEM_GPU_STATS and VGMEM_VM_STATS (<uapi/vgmem_stats.h>)
 * is shown where its columns say, with its own value: a GPU and a VM
 * whose every counter (and histogram bucket) differs from every other go
 * through the REST encoders (detail and list views) and the Prometheus
 * formatter, and each line's REST member and series must carry its
 * field's value. A line the encoders left out, or showed from another
 * field, fails here. (vgmemctl's words: test_rest_vgmemctl.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "mg_model_fake.h"
#include "mgmtd/metrics.h"
#include "mgmtd/rest_json.h"

struct line {
	const char *field;
	int kind, unit;
	size_t off;		/* in the record */
	const char *rest, *prom, *label;
};

#define GPU_LINE(f, a, k, h, unit, rest, show, prom, label, ph)	\
	{ #f, k, unit, offsetof(struct mg_gpu_info, f), rest, prom, label },
static const struct line gpu_lines[] = { VGMEM_GPU_STATS(GPU_LINE) };
#undef GPU_LINE
#define VM_LINE(f, a, k, h, unit, rest, show, prom, label, ph)	\
	{ #f, k, unit, offsetof(struct mg_vm_info, stats.f), rest, prom, label },
static const struct line vm_lines[] = { VGMEM_VM_STATS(VM_LINE) };
#undef VM_LINE

#define NGPU	(sizeof(gpu_lines) / sizeof(gpu_lines[0]))
#define NVM	(sizeof(vm_lines) / sizeof(vm_lines[0]))

/* Line i's value (its bucket b): distinct over both tables. */
static uint64_t value(uint64_t base, size_t i, unsigned int b)
{
	return base + i * 1000 + b + 1;
}

static uint64_t *at(void *rec, const struct line *l)
{
	return (uint64_t *)((char *)rec + l->off);
}

static void fill(void *rec, const struct line *t, size_t n, uint64_t base)
{
	size_t i;
	unsigned int b;

	for (i = 0; i < n; i++)
		for (b = 0; b < (t[i].kind == VGMEM_STAT_HIST ?
				 VGMEM_HIST_BUCKETS : 1u); b++)
			at(rec, &t[i])[b] = value(base, i, b);
}

/* The member at a REST path ("key" or "group.key"), or NULL. */
static json_t *member(json_t *o, const char *path)
{
	const char *dot = strchr(path, '.');
	char group[64];

	if (!dot)
		return json_object_get(o, path);
	snprintf(group, sizeof(group), "%.*s", (int)(dot - path), path);
	return json_object_get(json_object_get(o, group), dot + 1);
}

/* Every line at its path with its value; histograms only in detail. */
static void check_json(const char *text, const struct line *t, size_t n,
		       uint64_t base, bool detail)
{
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	size_t i;
	unsigned int b;

	assert_non_null(o);
	for (i = 0; i < n; i++) {
		json_t *m = member(o, t[i].rest);

		if (t[i].kind != VGMEM_STAT_HIST) {
			if (!json_is_integer(m) ||
			    (uint64_t)json_integer_value(m) != value(base, i, 0))
				fail_msg("%s: %s is not its value %llu in %s",
					 t[i].field, t[i].rest,
					 (unsigned long long)value(base, i, 0),
					 text);
			continue;
		}
		if (!detail) {
			if (m)
				fail_msg("%s: histogram %s in a list view",
					 t[i].field, t[i].rest);
			continue;
		}
		if (json_array_size(m) != VGMEM_HIST_BUCKETS)
			fail_msg("%s: no histogram %s in %s", t[i].field,
				 t[i].rest, text);
		for (b = 0; b < VGMEM_HIST_BUCKETS; b++)
			if ((uint64_t)json_integer_value(json_array_get(m, b)) !=
			    value(base, i, b))
				fail_msg("%s: bucket %u of %s", t[i].field, b,
					 t[i].rest);
	}
	json_decref(o);
}

static void test_rest_members(void **state)
{
	struct mg_gpu_info g;
	struct mg_vm_info vm;
	struct rbuf b;
	char *text;
	json_t *o;
	int detail;

	(void)state;
	memset(&g, 0, sizeof(g));
	fill(&g, gpu_lines, NGPU, 1000000);
	fake_vm_init(&vm, 0, 0, 1ull << 30);
	fill(&vm, vm_lines, NVM, 2000000);
	vm.cache_private = 77;
	for (detail = 0; detail <= 1; detail++) {
		rbuf_init(&b, 1024);
		rj_gpu(&b, &g, detail);
		text = rbuf_take(&b, NULL);
		assert_non_null(text);
		check_json(text, gpu_lines, NGPU, 1000000, detail);
		free(text);

		rbuf_init(&b, 1024);
		rj_vm_shares(&b, &vm, detail, NULL, 0);
		text = rbuf_take(&b, NULL);
		assert_non_null(text);
		check_json(text, vm_lines, NVM, 2000000, detail);
		/* the model's own member in the schema's group */
		o = json_loads(text, 0, NULL);
		assert_int_equal(json_integer_value(member(o, "usage.cache_private")), 77);
		json_decref(o);
		free(text);
	}
}

/* "\n" PROM LABELS " " VALUE "\n" is in text. */
static void expect_sample(const char *text, const char *prom,
			  const char *labels, uint64_t v, bool seconds)
{
	char want[512];

	if (seconds)
		snprintf(want, sizeof(want), "\n%s{%s} %llu.%09llu\n", prom,
			 labels, (unsigned long long)(v / 1000000000u),
			 (unsigned long long)(v % 1000000000u));
	else
		snprintf(want, sizeof(want), "\n%s{%s} %llu\n", prom, labels,
			 (unsigned long long)v);
	if (!strstr(text, want))
		fail_msg("no sample %s", want + 1);
}

/* Every exported line's series with its value, under its family. */
static void check_metrics(const char *text, const struct line *t, size_t n,
			  uint64_t base, const char *labels)
{
	char lbl[256], name[128];
	size_t i, j;
	unsigned int b;
	uint64_t count;

	for (i = 0; i < n; i++) {
		const struct line *hist = NULL;

		if (!t[i].prom) {
			assert_int_equal(t[i].kind, VGMEM_STAT_HIST);
			continue;
		}
		snprintf(name, sizeof(name), "\n# TYPE %s ", t[i].prom);
		if (!strstr(text, name))
			fail_msg("%s: no family %s", t[i].field, t[i].prom);
		for (j = 0; j < n; j++)
			if (t[j].kind == VGMEM_STAT_HIST && t[j].prom &&
			    !strcmp(t[j].prom, t[i].prom))
				hist = &t[j];
		if (!hist) {
			snprintf(lbl, sizeof(lbl), "%s%s%s", labels,
				 t[i].label ? "," : "",
				 t[i].label ? t[i].label : "");
			expect_sample(text, t[i].prom, lbl, value(base, i, 0),
				      t[i].unit == VGMEM_UNIT_NS);
			continue;
		}
		if (hist != &t[i]) {	/* the histogram's _sum */
			snprintf(name, sizeof(name), "%s_sum", t[i].prom);
			expect_sample(text, name, labels, value(base, i, 0), true);
			continue;
		}
		for (b = 0, count = 0; b < VGMEM_HIST_BUCKETS; b++)
			count += value(base, i, b);
		snprintf(name, sizeof(name), "%s_count", t[i].prom);
		expect_sample(text, name, labels, count, false);
		snprintf(name, sizeof(name), "%s_bucket", t[i].prom);
		snprintf(lbl, sizeof(lbl), "%s,le=\"0.000002\"", labels);
		expect_sample(text, name, lbl, value(base, i, 0), false);
	}
}

static void test_metrics(void **state)
{
	struct mg_status st = { .version = "x", .backend = "embedded" };
	struct mg_gpu_info g;
	struct mg_vm_info vm;
	struct rbuf b;
	char *text;

	(void)state;
	memset(&g, 0, sizeof(g));
	snprintf(g.name, sizeof(g.name), "sim0");
	fill(&g, gpu_lines, NGPU, 1000000);
	fake_vm_init(&vm, 0, 0, 1ull << 30);
	fill(&vm, vm_lines, NVM, 2000000);
	rbuf_init(&b, 4096);
	mg_metrics_format(&b, &st, &g, 1, &vm, 1);
	text = rbuf_take(&b, NULL);
	assert_non_null(text);
	check_metrics(text, gpu_lines, NGPU, 1000000, "gpu=\"0\",device=\"sim0\"");
	check_metrics(text, vm_lines, NVM, 2000000,
		      "vm=\"00000000-0000-4000-8000-000000000001\",domain=\"vm1\",domain_uuid=\"\",gpu=\"0\"");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rest_members),
		cmocka_unit_test(test_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
