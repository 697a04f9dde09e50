// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What vgmemctl's commands print alike: values of the REST objects, sizes
 * and times readably, the statistics schema's counters in their words
 * and its histograms as bars.
 */
#include <inttypes.h>
#include <string.h>

#include <uapi/vgmem_stats.h>

#include "lib/util/stat_path.h"
#include "ctl.h"

uint64_t ju(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

const char *human(uint64_t v, char *out, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%" PRIu64 "B", v);
	else
		snprintf(out, len, d < 10 ? "%.1f%c" : "%.0f%c", d, units[u]);
	return out;
}

const char *human_ns(uint64_t ns, char *out, size_t len)
{
	if (ns < 1000)
		snprintf(out, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(out, len, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(out, len, "%.1fms", (double)ns / 1e6);
	else
		snprintf(out, len, "%.2fs", (double)ns / 1e9);
	return out;
}

/*
 * The GPU's and the VM's counters, from <uapi/vgmem_stats.h>: where the
 * REST object has each one, the words `gpu N` and `vm ID` print, and the
 * histograms' titles.
 */
struct ctl_stat {
	const char *rest;	/* "key" or "group.key" */
	const char *show;	/* "%s" where the value goes; NULL: not shown */
	const char *help;	/* a histogram's title */
	int kind;		/* VGMEM_STAT_* */
	int unit;		/* VGMEM_UNIT_* */
};

#define CTL_STAT(f, attr, kind, help, unit, rest, show, ...)	\
	{ rest, show, help, kind, unit },
static const struct ctl_stat gpu_stats[] = { VGMEM_GPU_STATS(CTL_STAT) };
static const struct ctl_stat vm_stats[] = { VGMEM_VM_STATS(CTL_STAT) };
#undef CTL_STAT

/* A counter's words with its value from the GPU or VM object o. */
static void print_stat(json_t *o, const struct ctl_stat *s)
{
	size_t glen = vg_stat_group_len(s->rest);
	const char *at = strstr(s->show, "%s");
	char group[64], val[32];
	uint64_t v;

	if (glen) {
		snprintf(group, sizeof(group), "%.*s", (int)glen, s->rest);
		o = json_object_get(o, group);
	}
	v = ju(o, vg_stat_key(s->rest));
	if (s->unit == VGMEM_UNIT_BYTES)
		human(v, val, sizeof(val));
	else if (s->unit == VGMEM_UNIT_NS)
		human_ns(v, val, sizeof(val));
	else
		snprintf(val, sizeof(val), "%" PRIu64, v);
	if (at)
		printf("%.*s%s%s", (int)(at - s->show), s->show, val, at + 2);
	else
		printf("%s %s", s->show, val);
}

/*
 * The n counters of t in the GPU or VM object o, grouped as the REST API
 * groups them: a line a group, its counters' words joined by commas, and
 * a line a counter at the top of o. tail ends the line of the group
 * tail_group (the model's members there); both may be NULL.
 */
static void print_stats(json_t *o, const struct ctl_stat *t, size_t n,
			const char *tail_group, const char *tail)
{
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		if (!t[i].show)
			continue;
		if (!vg_stat_group_len(t[i].rest)) {
			printf("  ");	/* at the top of o: a line of its own */
			print_stat(o, &t[i]);
			printf("\n");
			continue;
		}
		for (j = 0; j < i; j++)
			if (t[j].show && vg_stat_same_group(t[j].rest, t[i].rest))
				break;
		if (j < i)
			continue;	/* printed with its group */
		printf("  ");
		for (k = i; k < n; k++) {
			if (!t[k].show || !vg_stat_same_group(t[k].rest, t[i].rest))
				continue;
			if (k != i)
				printf(", ");
			print_stat(o, &t[k]);
		}
		if (tail && vg_stat_in_group(t[i].rest, tail_group))
			printf("%s", tail);
		printf("\n");
	}
}
void print_policy(json_t *p)
{
	char b[5][16];

	printf("  quota %s  min %s  low %s  max %s  weight %" PRIu64 "  priority %" PRIu64 "\n",
	       human(ju(p, "quota"), b[0], 16), human(ju(p, "min"), b[1], 16),
	       human(ju(p, "low"), b[2], 16), human(ju(p, "max"), b[3], 16),
	       ju(p, "weight"), ju(p, "priority"));
}

/* Percent-encodes an id or name for the path. */
void path_escape(char *out, size_t len, const char *in)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *in && o + 4 < len; in++) {
		unsigned char ch = (unsigned char)*in;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}

/* A histogram bucket's lower bound, readably: bucket i starts at 2^i us. */
static const char *bucket_bound(unsigned int i, char *out, size_t len)
{
	return human_ns((1000ull << i), out, len);
}

/*
 * A log2-us histogram (VGMEM_HIST_BUCKETS counts) as a bar per bucket,
 * from the first bucket with a count to the last; bucket 0 also holds
 * everything under 1 us, the last everything longer.
 */
void print_histogram(const char *title, json_t *counts)
{
	uint64_t v[VGMEM_HIST_BUCKETS] = { 0 }, max = 0, total = 0;
	unsigned int i, first = VGMEM_HIST_BUCKETS, last = 0;
	char lo[16], hi[16], range[40];
	size_t n = json_array_size(counts);

	for (i = 0; i < VGMEM_HIST_BUCKETS && i < n; i++) {
		json_t *e = json_array_get(counts, i);

		v[i] = json_is_integer(e) && json_integer_value(e) > 0 ?
		       (uint64_t)json_integer_value(e) : 0;
		total += v[i];
		if (v[i] > max)
			max = v[i];
		if (v[i] && first == VGMEM_HIST_BUCKETS)
			first = i;
		if (v[i])
			last = i;
	}
	/* "Suspensions, by length." without its full stop, then a colon */
	n = strlen(title);
	if (n && title[n - 1] == '.')
		n--;
	if (!total) {
		printf("  %.*s: none\n", (int)n, title);
		return;
	}
	printf("  %.*s (%" PRIu64 " in all):\n", (int)n, title, total);
	for (i = first; i <= last; i++) {
		int w = (int)((v[i] * 40 + max - 1) / max);

		if (i == 0)
			snprintf(range, sizeof(range), "< %s", bucket_bound(1, hi, 16));
		else if (i == VGMEM_HIST_BUCKETS - 1)
			snprintf(range, sizeof(range), ">= %s", bucket_bound(i, lo, 16));
		else
			snprintf(range, sizeof(range), "%s - %s", bucket_bound(i, lo, 16),
				 bucket_bound(i + 1, hi, 16));
		printf("    %17s %8" PRIu64 " %.*s\n", range, v[i], w,
		       "########################################");
	}
}

/* The histograms of a table in o, in the schema's order. */
static void print_histograms(json_t *o, const struct ctl_stat *t, size_t n)
{
	size_t i, glen;
	json_t *g;
	char group[64];

	for (i = 0; i < n; i++) {
		if (t[i].kind != VGMEM_STAT_HIST)
			continue;
		g = o;
		glen = vg_stat_group_len(t[i].rest);
		if (glen) {
			snprintf(group, sizeof(group), "%.*s", (int)glen, t[i].rest);
			g = json_object_get(o, group);
		}
		print_histogram(t[i].help, json_object_get(g, vg_stat_key(t[i].rest)));
	}
}

void print_gpu_stats(json_t *g)
{
	size_t n = sizeof(gpu_stats) / sizeof(gpu_stats[0]);

	print_stats(g, gpu_stats, n, NULL, NULL);
	print_histograms(g, gpu_stats, n);
}

/* usage_tail ends the line of the group "usage" (the model's members). */
void print_vm_stats(json_t *vm, const char *usage_tail)
{
	size_t n = sizeof(vm_stats) / sizeof(vm_stats[0]);

	print_stats(vm, vm_stats, n, "usage", usage_tail);
	print_histograms(vm, vm_stats, n);
}

/*
 * A VM's state: mgmtd's "state" member where it sends one (any word it
 * chooses), else what running and lost say.
 */
const char *vm_state(json_t *vm)
{
	const char *s = json_string_value(json_object_get(vm, "state"));

	if (s && *s)
		return s;
	if (json_is_true(json_object_get(vm, "lost")))
		return "lost";
	return json_is_true(json_object_get(vm, "running")) ? "running" : "stopped";
}

/* A decimal integer 0..max, digits only (no sign, no space): true if so. */
bool parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s || strlen(s) > 19 || strspn(s, "0123456789") != strlen(s))
		return false;
	for (; *s; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	if (v > max)
		return false;
	*out = v;
	return true;
}
