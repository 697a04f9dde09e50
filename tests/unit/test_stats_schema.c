// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The statistics schema (include/uapi/vgmem_stats.h) generates ABI: the
 * netlink attribute numbers of the GPU, VM and file-cache stats nests and
 * the layout of struct vgmem_vm_stats (the guest's STATS command). This
 * test pins every number and offset as they were when the tables were
 * written, so that moving, removing or inserting a line (instead of
 * appending one) fails here; and checks the tables themselves: unique
 * names, a help sentence for each line, a kind that is one of the three,
 * and the GPU's and VM's presentation columns by the header's rules (a
 * REST path each, vgmemctl's words with one "%s", Prometheus families
 * named by kind and unit with one HELP each and a _sum for a histogram).
 * test_rest_stats.c and test_rest_vgmemctl.c check that every line is
 * shown where these columns say.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <uapi/vgmem_netlink.h>

static const struct {
	const char *name;
	long value, want;
} attrs[] = {
	{ "VGMEM_GS_UNSPEC", VGMEM_GS_UNSPEC, 0 },
	{ "VGMEM_GS_PAD", VGMEM_GS_PAD, 1 },
	{ "VGMEM_GS_RELOC_OUT_CHUNKS", VGMEM_GS_RELOC_OUT_CHUNKS, 2 },
	{ "VGMEM_GS_RELOC_IN_CHUNKS", VGMEM_GS_RELOC_IN_CHUNKS, 3 },
	{ "VGMEM_GS_BYTES_OUT", VGMEM_GS_BYTES_OUT, 4 },
	{ "VGMEM_GS_BYTES_IN", VGMEM_GS_BYTES_IN, 5 },
	{ "VGMEM_GS_RELOCATIONS", VGMEM_GS_RELOCATIONS, 6 },
	{ "VGMEM_GS_RELOC_FAILURES", VGMEM_GS_RELOC_FAILURES, 7 },
	{ "VGMEM_GS_COPY_DEVICE_NS", VGMEM_GS_COPY_DEVICE_NS, 8 },
	{ "VGMEM_GS_FAULTS", VGMEM_GS_FAULTS, 9 },
	{ "VGMEM_GS_SUSPEND_HIST", VGMEM_GS_SUSPEND_HIST, 10 },
	{ "VGMEM_GS_STALL_HIST", VGMEM_GS_STALL_HIST, 11 },
	{ "__VGMEM_GS_MAX", __VGMEM_GS_MAX, 12 },
	{ "VGMEM_VS_UNSPEC", VGMEM_VS_UNSPEC, 0 },
	{ "VGMEM_VS_PAD", VGMEM_VS_PAD, 1 },
	{ "VGMEM_VS_ALLOCATED", VGMEM_VS_ALLOCATED, 2 },
	{ "VGMEM_VS_RESIDENT", VGMEM_VS_RESIDENT, 3 },
	{ "VGMEM_VS_RELOCATED", VGMEM_VS_RELOCATED, 4 },
	{ "VGMEM_VS_RELOC_OUT_CHUNKS", VGMEM_VS_RELOC_OUT_CHUNKS, 5 },
	{ "VGMEM_VS_RELOC_IN_CHUNKS", VGMEM_VS_RELOC_IN_CHUNKS, 6 },
	{ "VGMEM_VS_BYTES_OUT", VGMEM_VS_BYTES_OUT, 7 },
	{ "VGMEM_VS_BYTES_IN", VGMEM_VS_BYTES_IN, 8 },
	{ "VGMEM_VS_SUSPEND_LAST_NS", VGMEM_VS_SUSPEND_LAST_NS, 9 },
	{ "VGMEM_VS_SUSPEND_MAX_NS", VGMEM_VS_SUSPEND_MAX_NS, 10 },
	{ "VGMEM_VS_SUSPEND_TOTAL_NS", VGMEM_VS_SUSPEND_TOTAL_NS, 11 },
	{ "VGMEM_VS_SUSPENDS", VGMEM_VS_SUSPENDS, 12 },
	{ "VGMEM_VS_SUSPEND_HIST", VGMEM_VS_SUSPEND_HIST, 13 },
	{ "VGMEM_VS_STALL_HIST", VGMEM_VS_STALL_HIST, 14 },
	{ "VGMEM_VS_STALL_TOTAL_NS", VGMEM_VS_STALL_TOTAL_NS, 15 },
	{ "VGMEM_VS_FAULTS", VGMEM_VS_FAULTS, 16 },
	{ "__VGMEM_VS_MAX", __VGMEM_VS_MAX, 17 },
	{ "VGMEM_LS_UNSPEC", VGMEM_LS_UNSPEC, 0 },
	{ "VGMEM_LS_PAD", VGMEM_LS_PAD, 1 },
	{ "VGMEM_LS_FAULTS_MINOR", VGMEM_LS_FAULTS_MINOR, 2 },
	{ "VGMEM_LS_FAULTS_MAJOR", VGMEM_LS_FAULTS_MAJOR, 3 },
	{ "VGMEM_LS_FAULTS_WRITE", VGMEM_LS_FAULTS_WRITE, 4 },
	{ "VGMEM_LS_MERGES", VGMEM_LS_MERGES, 5 },
	{ "VGMEM_LS_MERGE_BYTES", VGMEM_LS_MERGE_BYTES, 6 },
	{ "VGMEM_LS_FETCH_STORAGE", VGMEM_LS_FETCH_STORAGE, 7 },
	{ "VGMEM_LS_STORE_READS", VGMEM_LS_STORE_READS, 8 },
	{ "VGMEM_LS_FETCH_HOST", VGMEM_LS_FETCH_HOST, 9 },
	{ "VGMEM_LS_FETCH_PEER", VGMEM_LS_FETCH_PEER, 10 },
	{ "VGMEM_LS_FETCH_GPU", VGMEM_LS_FETCH_GPU, 11 },
	{ "VGMEM_LS_READAHEAD_PAGES", VGMEM_LS_READAHEAD_PAGES, 12 },
	{ "VGMEM_LS_EVICTIONS", VGMEM_LS_EVICTIONS, 13 },
	{ "VGMEM_LS_WRITEBACK_BYTES", VGMEM_LS_WRITEBACK_BYTES, 14 },
	{ "VGMEM_LS_WRITEBACK_BLOCKS", VGMEM_LS_WRITEBACK_BLOCKS, 15 },
	{ "VGMEM_LS_BASE_COPIES", VGMEM_LS_BASE_COPIES, 16 },
	{ "VGMEM_LS_SHARED_MAPS", VGMEM_LS_SHARED_MAPS, 17 },
	{ "VGMEM_LS_REPLICAS_SHARED", VGMEM_LS_REPLICAS_SHARED, 18 },
	{ "VGMEM_LS_REPLICAS_PRIVATE", VGMEM_LS_REPLICAS_PRIVATE, 19 },
	{ "VGMEM_LS_VRAM_USED", VGMEM_LS_VRAM_USED, 20 },
	{ "VGMEM_LS_HOST_READS_PEER", VGMEM_LS_HOST_READS_PEER, 21 },
	{ "VGMEM_LS_HOST_CHANGES", VGMEM_LS_HOST_CHANGES, 22 },
	{ "VGMEM_LS_ACQUIRES", VGMEM_LS_ACQUIRES, 23 },
	{ "VGMEM_LS_RELEASES", VGMEM_LS_RELEASES, 24 },
	{ "VGMEM_LS_RELEASED_PAGES", VGMEM_LS_RELEASED_PAGES, 25 },
	{ "VGMEM_LS_INVALIDATIONS", VGMEM_LS_INVALIDATIONS, 26 },
	{ "VGMEM_LS_CUCKOO_HITS", VGMEM_LS_CUCKOO_HITS, 27 },
	{ "VGMEM_LS_CUCKOO_MISSES", VGMEM_LS_CUCKOO_MISSES, 28 },
	{ "VGMEM_LS_FILES", VGMEM_LS_FILES, 29 },
	{ "VGMEM_LS_PAGES", VGMEM_LS_PAGES, 30 },
	{ "VGMEM_LS_BYTES_PER_PAGE", VGMEM_LS_BYTES_PER_PAGE, 31 },
	{ "VGMEM_LS_HOST_COMPARES", VGMEM_LS_HOST_COMPARES, 32 },
	{ "VGMEM_LS_HOST_USED", VGMEM_LS_HOST_USED, 33 },
	{ "VGMEM_LS_HOST_EVICTIONS", VGMEM_LS_HOST_EVICTIONS, 34 },
	{ "VGMEM_LS_HOST_EVICT_WRITEBACKS", VGMEM_LS_HOST_EVICT_WRITEBACKS, 35 },
	{ "VGMEM_LS_REPLICAS_HOST", VGMEM_LS_REPLICAS_HOST, 36 },
	{ "VGMEM_LS_REPLICAS_HOST_USED", VGMEM_LS_REPLICAS_HOST_USED, 37 },
	{ "VGMEM_LS_PROMOTIONS", VGMEM_LS_PROMOTIONS, 38 },
	{ "VGMEM_LS_META_BYTES", VGMEM_LS_META_BYTES, 39 },
	{ "__VGMEM_LS_MAX", __VGMEM_LS_MAX, 40 },
	{ "VGMEM_HIST_A_UNSPEC", VGMEM_HIST_A_UNSPEC, 0 },
	{ "VGMEM_HIST_A_PAD", VGMEM_HIST_A_PAD, 1 },
	{ "VGMEM_HIST_A_BUCKET0", VGMEM_HIST_A_BUCKET0, 2 },
	{ "__VGMEM_HIST_A_MAX", __VGMEM_HIST_A_MAX, 26 },
};

#define OFF(f)	offsetof(struct vgmem_vm_stats, f)
#define SIZE(f)	sizeof(((struct vgmem_vm_stats *)0)->f)
static const struct {
	const char *name;
	size_t off, size, want_off, want_size;
} layout[] = {
	{ "quota", OFF(quota), SIZE(quota), 0, 8 },
	{ "entitlement", OFF(entitlement), SIZE(entitlement), 8, 8 },
	{ "allocated", OFF(allocated), SIZE(allocated), 16, 8 },
	{ "resident", OFF(resident), SIZE(resident), 24, 8 },
	{ "relocated", OFF(relocated), SIZE(relocated), 32, 8 },
	{ "reloc_out_chunks", OFF(reloc_out_chunks), SIZE(reloc_out_chunks), 40, 8 },
	{ "reloc_in_chunks", OFF(reloc_in_chunks), SIZE(reloc_in_chunks), 48, 8 },
	{ "bytes_out", OFF(bytes_out), SIZE(bytes_out), 56, 8 },
	{ "bytes_in", OFF(bytes_in), SIZE(bytes_in), 64, 8 },
	{ "suspend_last_ns", OFF(suspend_last_ns), SIZE(suspend_last_ns), 72, 8 },
	{ "suspend_max_ns", OFF(suspend_max_ns), SIZE(suspend_max_ns), 80, 8 },
	{ "suspend_total_ns", OFF(suspend_total_ns), SIZE(suspend_total_ns), 88, 8 },
	{ "suspends", OFF(suspends), SIZE(suspends), 96, 8 },
	{ "suspend_hist", OFF(suspend_hist), SIZE(suspend_hist), 104, 192 },
	{ "stall_hist", OFF(stall_hist), SIZE(stall_hist), 296, 192 },
	{ "stall_total_ns", OFF(stall_total_ns), SIZE(stall_total_ns), 488, 8 },
	{ "faults", OFF(faults), SIZE(faults), 496, 8 },
};

static void test_abi_numbers(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].value != attrs[i].want)
			fail_msg("%s is %ld, the ABI says %ld", attrs[i].name,
				 attrs[i].value, attrs[i].want);
	for (i = 0; i < sizeof(layout) / sizeof(layout[0]); i++)
		if (layout[i].off != layout[i].want_off ||
		    layout[i].size != layout[i].want_size)
			fail_msg("vgmem_vm_stats.%s at %zu (%zu bytes), the ABI says %zu (%zu)",
				 layout[i].name, layout[i].off, layout[i].size,
				 layout[i].want_off, layout[i].want_size);
	assert_int_equal(sizeof(struct vgmem_vm_stats), 504);
	assert_int_equal(VGMEM_HIST_BUCKETS, 24);
}

struct line {
	const char *field;
	const char *attr;
	int kind;
	const char *help;
};

#define LINE(f, a, k, h, ...)	{ #f, #a, k, h },
static const struct line gpu[] = { VGMEM_GPU_STATS(LINE) };
static const struct line vm[] = { VGMEM_VM_STATS(LINE) };
static const struct line lrc[] = { VGMEM_LRC_STATS(LINE) };
#undef LINE

static void check_table(const char *what, const struct line *t, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		size_t len = strlen(t[i].help);

		if (t[i].kind != VGMEM_STAT_COUNTER &&
		    t[i].kind != VGMEM_STAT_GAUGE && t[i].kind != VGMEM_STAT_HIST)
			fail_msg("%s.%s: kind %d", what, t[i].field, t[i].kind);
		if (len < 8 || t[i].help[len - 1] != '.')
			fail_msg("%s.%s: help '%s' is not a sentence", what,
				 t[i].field, t[i].help);
		for (j = 0; j < i; j++)
			if (!strcmp(t[i].field, t[j].field) ||
			    !strcmp(t[i].attr, t[j].attr))
				fail_msg("%s: line %zu repeats line %zu (%s)",
					 what, i, j, t[i].field);
	}
}

/* A GPU or VM line with its presentation columns. */
struct show {
	const char *field;
	int kind, unit;
	const char *rest, *show, *prom, *label, *prom_help;
};

#define SHOW(f, a, k, h, unit, rest, show, prom, label, ph)		\
	{ #f, k, unit, rest, show, prom, label, ph },
static const struct show gpu_show[] = { VGMEM_GPU_STATS(SHOW) };
static const struct show vm_show[] = { VGMEM_VM_STATS(SHOW) };
#undef SHOW

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Lower-case letters, digits and '_', not empty, starting with a letter. */
static bool ident(const char *s, size_t n)
{
	size_t i;

	if (!n || s[0] < 'a' || s[0] > 'z')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A family's name: the unit's suffix, then _total for a counter. */
static void check_name(const char *what, const struct show *l, int kind)
{
	char base[96];
	size_t n = strlen(l->prom);

	if (kind == VGMEM_STAT_COUNTER) {
		if (!ends_with(l->prom, "_total"))
			fail_msg("%s.%s: counter %s does not end in _total",
				 what, l->field, l->prom);
		n -= strlen("_total");
	} else if (ends_with(l->prom, "_total")) {
		fail_msg("%s.%s: %s ends in _total, not a counter", what,
			 l->field, l->prom);
	}
	snprintf(base, sizeof(base), "%.*s", (int)n, l->prom);
	if (ends_with(base, "_bytes") != (l->unit == VGMEM_UNIT_BYTES) ||
	    ends_with(base, "_seconds") != (l->unit == VGMEM_UNIT_NS))
		fail_msg("%s.%s: %s does not name its unit (_bytes, _seconds)",
			 what, l->field, l->prom);
}

/* The family of line i (its first line): one HELP, one kind, ... */
static void check_family(const char *what, const char *prefix,
			 const struct show *t, size_t n, size_t i)
{
	const struct show *hist = NULL, *sum = NULL;
	size_t j, k, lines = 0, helps = 0;

	if (strncmp(t[i].prom, prefix, strlen(prefix)) ||
	    !ident(t[i].prom, strlen(t[i].prom)))
		fail_msg("%s.%s: family %s is not %s...", what, t[i].field,
			 t[i].prom, prefix);
	for (j = i; j < n; j++) {
		if (!same_str(t[j].prom, t[i].prom))
			continue;
		lines++;
		if (t[j].prom_help) {
			size_t len = strlen(t[j].prom_help);

			helps++;
			if (len < 8 || t[j].prom_help[len - 1] != '.')
				fail_msg("%s.%s: HELP '%s' is not a sentence",
					 what, t[j].field, t[j].prom_help);
		}
		if (t[j].kind == VGMEM_STAT_HIST) {
			if (hist)
				fail_msg("%s: %s has two histograms", what,
					 t[i].prom);
			hist = &t[j];
		} else if (t[j].kind == VGMEM_STAT_COUNTER &&
			   t[j].unit == VGMEM_UNIT_NS) {
			sum = &t[j];
		}
	}
	if (helps != 1)
		fail_msg("%s: family %s has %zu HELP texts, not one", what,
			 t[i].prom, helps);
	if (hist) {
		/* buckets and _count from the histogram, _sum from a counter */
		if (lines != 2 || !sum || hist->label || sum->label ||
		    !ends_with(t[i].prom, "_seconds"))
			fail_msg("%s: histogram %s is not a histogram line, a counter of nanoseconds (its _sum) and no labels",
				 what, t[i].prom);
		return;
	}
	for (j = i; j < n; j++) {
		if (!same_str(t[j].prom, t[i].prom))
			continue;
		if (t[j].kind != t[i].kind || t[j].unit != t[i].unit)
			fail_msg("%s.%s: kind or unit unlike %s's in %s", what,
				 t[j].field, t[i].field, t[i].prom);
		if (lines > 1 && !t[j].label)
			fail_msg("%s.%s: no label to tell it from the rest of %s",
				 what, t[j].field, t[i].prom);
		for (k = i; k < j; k++)
			if (same_str(t[k].prom, t[j].prom) &&
			    same_str(t[k].label, t[j].label))
				fail_msg("%s.%s: the same series as %s", what,
					 t[j].field, t[k].field);
		check_name(what, &t[j], t[j].kind);
	}
}

static void check_show(const char *what, const char *prefix,
		       const struct show *t, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct show *l = &t[i];
		size_t g = strcspn(l->rest, ".");
		const char *at;

		if (l->unit != VGMEM_UNIT_COUNT && l->unit != VGMEM_UNIT_BYTES &&
		    l->unit != VGMEM_UNIT_NS)
			fail_msg("%s.%s: unit %d", what, l->field, l->unit);
		if (l->kind == VGMEM_STAT_HIST && l->unit != VGMEM_UNIT_NS)
			fail_msg("%s.%s: a histogram of microseconds has unit NS",
				 what, l->field);
		/* "key" or "group.key" */
		if (l->rest[g] ? !ident(l->rest, g) ||
		    !ident(l->rest + g + 1, strlen(l->rest + g + 1)) :
		    !ident(l->rest, g))
			fail_msg("%s.%s: REST path '%s'", what, l->field, l->rest);
		for (j = 0; j < i; j++)
			if (!strcmp(t[j].rest, l->rest))
				fail_msg("%s.%s: REST path %s of %s too", what,
					 l->field, l->rest, t[j].field);
		/* vgmemctl: words with one "%s" for the value, or histograms */
		if (!l->show && l->kind != VGMEM_STAT_HIST)
			fail_msg("%s.%s: vgmemctl does not show it", what,
				 l->field);
		at = l->show ? strstr(l->show, "%s") : NULL;
		if (l->show && (!at || strchr(l->show, '%') != at ||
				strchr(at + 1, '%')))
			fail_msg("%s.%s: words '%s' need one %%s and no other %%",
				 what, l->field, l->show);
		/* Prometheus: every line but the GPU's histograms */
		if (!l->prom) {
			if (l->kind != VGMEM_STAT_HIST || l->label || l->prom_help)
				fail_msg("%s.%s: not exported", what, l->field);
			continue;
		}
		if (l->label) {
			const char *eq = strchr(l->label, '=');

			if (!eq || !ident(l->label, (size_t)(eq - l->label)) ||
			    eq[1] != '"' || strchr(eq + 2, '"') !=
			    l->label + strlen(l->label) - 1)
				fail_msg("%s.%s: label '%s' is not name=\"value\"",
					 what, l->field, l->label);
		}
		for (j = 0; j < i; j++)
			if (same_str(t[j].prom, l->prom))
				break;
		if (j == i)
			check_family(what, prefix, t, n, i);
	}
}

/* The file cache's lines: one family each, named after kind and unit. */
#define LRC_SHOW(f, a, k, h, unit, prom)	{ #f, k, unit, #f, NULL, prom, NULL, h },
static const struct show lrc_show[] = { VGMEM_LRC_STATS(LRC_SHOW) };
#undef LRC_SHOW

static void check_lrc(void)
{
	size_t i, j, n = sizeof(lrc_show) / sizeof(lrc_show[0]);

	for (i = 0; i < n; i++) {
		const struct show *l = &lrc_show[i];

		if (l->kind == VGMEM_STAT_HIST ||
		    (l->unit != VGMEM_UNIT_COUNT && l->unit != VGMEM_UNIT_BYTES))
			fail_msg("lrc.%s: kind %d unit %d", l->field, l->kind,
				 l->unit);
		if (strncmp(l->prom, "vgmem_lrc_", 10) ||
		    !ident(l->prom, strlen(l->prom)))
			fail_msg("lrc.%s: family %s is not vgmem_lrc_...",
				 l->field, l->prom);
		if (!strcmp(l->prom, "vgmem_lrc_gpus"))
			fail_msg("lrc.%s: vgmem_lrc_gpus is mgmtd's own", l->field);
		check_name("lrc", l, l->kind);
		for (j = 0; j < i; j++)
			if (!strcmp(lrc_show[j].prom, l->prom))
				fail_msg("lrc.%s: family %s of %s too", l->field,
					 l->prom, lrc_show[j].field);
	}
}

static void test_presentation(void **state)
{
	(void)state;
	assert_int_equal(sizeof(gpu_show) / sizeof(gpu_show[0]),
			 sizeof(gpu) / sizeof(gpu[0]));
	assert_int_equal(sizeof(vm_show) / sizeof(vm_show[0]),
			 sizeof(vm) / sizeof(vm[0]));
	check_show("gpu", "vgmem_gpu_", gpu_show,
		   sizeof(gpu_show) / sizeof(gpu_show[0]));
	check_show("vm", "vgmem_vm_", vm_show,
		   sizeof(vm_show) / sizeof(vm_show[0]));
	check_lrc();
}

static void test_tables(void **state)
{
	(void)state;
	check_table("gpu", gpu, sizeof(gpu) / sizeof(gpu[0]));
	check_table("vm", vm, sizeof(vm) / sizeof(vm[0]));
	check_table("lrc", lrc, sizeof(lrc) / sizeof(lrc[0]));
	/* one attribute per line, after UNSPEC and PAD */
	assert_int_equal(sizeof(gpu) / sizeof(gpu[0]), VGMEM_GS_MAX - VGMEM_GS_PAD);
	assert_int_equal(sizeof(vm) / sizeof(vm[0]), VGMEM_VS_MAX - VGMEM_VS_PAD);
	assert_int_equal(sizeof(lrc) / sizeof(lrc[0]), VGMEM_LS_MAX - VGMEM_LS_PAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_numbers),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_presentation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
