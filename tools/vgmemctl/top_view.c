// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What vgmemctl top shows, apart from the terminal: the GPUs and VMs as
 * GET /v1/gpus and /v1/vms give them, relocation rates measured between
 * those reads (the API has byte counters, and a rate is their change over
 * at least one interval), the recent events of the stream, and one frame
 * of all that drawn on a canvas: ncurses in top.c, plain lines for --once.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"

#define MiB	(1024.0 * 1024.0)

const char *const top_sort_names[SORT_NR] = {
	[SORT_GPU] = "gpu", [SORT_NAME] = "name", [SORT_RESIDENT] = "resident",
	[SORT_RELOCATED] = "relocated", [SORT_RATE] = "rate",
	[SORT_SUSPENSIONS] = "suspensions", [SORT_ENTITLEMENT] = "entitlement",
};

/* Names come from domain XML: nothing in them may drive the terminal. */
static void copy_printable(char *out, size_t len, const char *in)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = (unsigned char)in[i] < 0x20 || (unsigned char)in[i] >= 0x7f ?
			 '?' : in[i];
	out[i] = '\0';
}

/*
 * The rate of the counter key: its change since its base, once the base
 * is at least an interval old; the base then moves on. A rate stays the
 * last interval's until the next one is complete.
 */
static void rate_update(struct top *t, const char *key, uint64_t moved, double now,
			double *rate, bool *known)
{
	struct top_base *b = NULL, *nb;
	size_t i;

	for (i = 0; i < t->nr_bases; i++)
		if (!strcmp(t->bases[i].key, key))
			b = &t->bases[i];
	if (!b) {
		nb = realloc(t->bases, (t->nr_bases + 1) * sizeof(*nb));
		if (!nb) {
			*known = false;
			return;
		}
		t->bases = nb;
		b = &t->bases[t->nr_bases++];
		memset(b, 0, sizeof(*b));
		snprintf(b->key, sizeof(b->key), "%s", key);
		b->moved = moved;
		b->t = now;
	}
	if (moved < b->moved) {		/* a counter that started over: a new vGPU */
		b->moved = moved;
		b->t = now;
		b->known = false;
	} else if (now - b->t >= t->interval_s * 0.9) {
		b->rate = (double)(moved - b->moved) / MiB / (now - b->t);
		b->known = true;
		b->moved = moved;
		b->t = now;
	}
	*rate = b->rate;
	*known = b->known;
}

static int vm_cmp(const void *pa, const void *pb, void *priv)
{
	const struct top_vm *a = pa, *b = pb;
	const struct top *t = priv;
	int r = 0;

#define CMP_DESC(f) (a->f < b->f ? 1 : a->f > b->f ? -1 : 0)
	switch (t->sort) {
	case SORT_GPU: r = a->gpu - b->gpu; break;
	case SORT_NAME: break;
	case SORT_RESIDENT: r = CMP_DESC(resident); break;
	case SORT_RELOCATED: r = CMP_DESC(relocated); break;
	case SORT_RATE: r = CMP_DESC(rate); break;
	case SORT_SUSPENSIONS: r = CMP_DESC(suspensions); break;
	case SORT_ENTITLEMENT: r = CMP_DESC(entitlement); break;
	case SORT_NR: break;
	}
#undef CMP_DESC
	if (!r)
		r = strcmp(a->name, b->name);
	if (!r)
		r = strcmp(a->id, b->id);
	return t->reverse ? -r : r;
}

static uint64_t group_u(json_t *o, const char *group, const char *key)
{
	return ju(json_object_get(o, group), key);
}

/*
 * Reads the GPUs and the VMs; on failure keeps what was shown and says
 * why (t->err). Returns 0 or the request's exit code.
 */
int top_refresh(struct top *t, double now)
{
	json_t *jg = NULL, *jv = NULL, *o;
	struct top_gpu *g = NULL;
	struct top_vm *v = NULL;
	size_t i, ng, nv;
	char key[48];
	int ret;

	ret = ctl_fetch_json(t->c, "/v1/gpus", &jg);
	if (!ret)
		ret = ctl_fetch_json(t->c, "/v1/vms", &jv);
	if (ret) {
		snprintf(t->err, sizeof(t->err), "%s", t->c->err);
		t->connected = false;
		json_decref(jg);
		return ret;
	}
	ng = json_array_size(json_object_get(jg, "gpus"));
	nv = json_array_size(json_object_get(jv, "vms"));
	g = calloc(ng ? ng : 1, sizeof(*g));
	v = calloc(nv ? nv : 1, sizeof(*v));
	if (!g || !v) {
		free(g);
		free(v);
		json_decref(jg);
		json_decref(jv);
		snprintf(t->err, sizeof(t->err), "out of memory");
		return EXIT_API;
	}
	json_array_foreach(json_object_get(jg, "gpus"), i, o) {
		g[i].index = (int)json_integer_value(json_object_get(o, "index"));
		copy_printable(g[i].name, sizeof(g[i].name), js(o, "name"));
		g[i].vram = ju(o, "vram_size");
		g[i].used = ju(o, "vram_used");
		g[i].cache = ju(o, "cache_used");
		g[i].host_used = ju(o, "host_used");
		g[i].moved = group_u(o, "relocations", "bytes_out") +
			     group_u(o, "relocations", "bytes_in");
		g[i].contended = json_is_true(json_object_get(o, "contended"));
		g[i].nr_vms = (unsigned int)ju(o, "nr_vms");
		snprintf(key, sizeof(key), "gpu %d", g[i].index);
		{
			bool known;

			rate_update(t, key, g[i].moved, now, &g[i].rate, &known);
			if (!known)
				g[i].rate = -1;
		}
	}
	json_array_foreach(json_object_get(jv, "vms"), i, o) {
		json_t *u = json_object_get(o, "usage");

		copy_printable(v[i].id, sizeof(v[i].id), js(o, "id"));
		copy_printable(v[i].name, sizeof(v[i].name),
			       js(o, "name")[0] ? js(o, "name") : js(o, "id"));
		copy_printable(v[i].state, sizeof(v[i].state), vm_state(o));
		v[i].gpu = (int)json_integer_value(json_object_get(o, "gpu"));
		v[i].resident = ju(u, "resident");
		v[i].relocated = ju(u, "relocated");
		v[i].entitlement = ju(o, "entitlement");
		v[i].suspensions = group_u(o, "suspension", "count");
		v[i].moved = group_u(o, "relocations", "bytes_out") +
			     group_u(o, "relocations", "bytes_in");
		v[i].advisory = json_is_true(json_object_get(o, "advisory"));
		snprintf(key, sizeof(key), "vm %s", v[i].id);
		rate_update(t, key, v[i].moved, now, &v[i].rate, &v[i].rate_known);
	}
	/* the libvirt domains mgmtd lists without managing them: named only */
	t->unmanaged[0] = '\0';
	t->nr_unmanaged = 0;
	json_array_foreach(json_object_get(jv, "unmanaged"), i, o) {
		char name[64];
		size_t l = strlen(t->unmanaged);

		copy_printable(name, sizeof(name), js(o, "name"));
		if (l + strlen(name) + 32 < sizeof(t->unmanaged))
			snprintf(t->unmanaged + l, sizeof(t->unmanaged) - l, "%s%s (%s)",
				 l ? ", " : "", name, vm_state(o));
		t->nr_unmanaged++;
	}
	qsort_r(v, nv, sizeof(*v), vm_cmp, t);
	free(t->gpus);
	free(t->vms);
	t->gpus = g;
	t->vms = v;
	t->nr_gpus = ng;
	t->nr_vms = nv;
	t->connected = true;
	t->have_data = true;
	t->err[0] = '\0';
	json_decref(jg);
	json_decref(jv);
	return 0;
}

/* One event of the stream: remembered, formatted, for the bottom pane. */
void top_event(struct top *t, const char *data, size_t len)
{
	json_t *j = json_loadb(data, len, 0, NULL), *d;
	const char *vm, *type;
	char ts[16], *detail, who[64] = "";
	struct tm tm;
	time_t sec;
	size_t i;
	unsigned int slot;

	if (!j)
		return;
	if (ju(j, "id") > t->last_event_id)
		t->last_event_id = ju(j, "id");
	sec = (time_t)(ju(j, "ts_ms") / 1000);
	localtime_r(&sec, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	type = js(j, "type");
	vm = js(j, "vm");
	/* the VM by its name where top knows it */
	for (i = 0; vm[0] && i < t->nr_vms; i++)
		if (!strcmp(t->vms[i].id, vm))
			snprintf(who, sizeof(who), "%s", t->vms[i].name);
	if (!who[0])
		copy_printable(who, sizeof(who), vm[0] ? vm : "-");
	d = json_object_get(j, "detail");
	detail = json_dumps(d, JSON_COMPACT);
	slot = t->ev_head;
	snprintf(t->events[slot], sizeof(t->events[slot]), "%s %-10.10s %-16.16s %s", ts,
		 type, who, detail ? detail : "");
	copy_printable(t->events[slot], sizeof(t->events[slot]), t->events[slot]);
	t->event_alert[slot] = !strcmp(type, "advisory") || !strcmp(type, "error");
	t->ev_head = (t->ev_head + 1) % TOP_EVENTS;
	if (t->nr_events < TOP_EVENTS)
		t->nr_events++;
	t->events_seen++;
	free(detail);
	json_decref(j);
}

/* ---- drawing ------------------------------------------------------------ */

static void put(struct top_canvas *cv, int row, int col, enum top_style st,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void put(struct top_canvas *cv, int row, int col, enum top_style st,
		const char *fmt, ...)
{
	char s[512];
	va_list ap;

	if (row < 0 || row >= cv->rows || col >= cv->cols)
		return;
	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	if ((int)strlen(s) > cv->cols - col)
		s[cv->cols - col] = '\0';
	cv->put(cv, row, col, s, st);
}

/* n characters ch at (row, col). */
static void fill(struct top_canvas *cv, int row, int col, int n, char ch,
		 enum top_style st)
{
	char s[512];

	if (n <= 0)
		return;
	if (n > (int)sizeof(s) - 1)
		n = (int)sizeof(s) - 1;
	memset(s, ch, (size_t)n);
	s[n] = '\0';
	put(cv, row, col, st, "%s", s);
}

/* Cells of w for part of whole, rounded. */
static int cells(uint64_t part, uint64_t whole, int w)
{
	if (!whole)
		return 0;
	if (part > whole)
		part = whole;
	return (int)(((double)part * w) / (double)whole + 0.5);
}

/* A GPU: its numbers, then VRAM as a bar: BOs #, file cache =, free . */
static int draw_gpu(struct top_canvas *cv, int row, const struct top_gpu *g)
{
	uint64_t free_b = g->vram > g->used + g->cache ? g->vram - g->used - g->cache : 0;
	char s[6][16], rate[32];
	int w = cv->cols - 4, nb, nc;

	if (g->rate < 0)
		snprintf(rate, sizeof(rate), "-");
	else
		snprintf(rate, sizeof(rate), "%.1f", g->rate);
	put(cv, row, 0, TS_NORMAL,
	    "GPU %d %s  VRAM %s: BOs %s, file cache %s, free %s  host %s  relocating %s MiB/s  %u VMs%s",
	    g->index, g->name, human(g->vram, s[0], 16), human(g->used, s[1], 16),
	    human(g->cache, s[2], 16), human(free_b, s[3], 16),
	    human(g->host_used, s[4], 16), rate, g->nr_vms,
	    g->contended ? "  contended" : "");
	if (w < 10)
		return row + 1;
	nb = cells(g->used, g->vram, w);
	nc = cells(g->cache, g->vram, w);
	if (nb + nc > w)
		nc = w - nb;
	put(cv, row + 1, 1, TS_NORMAL, "[");
	fill(cv, row + 1, 2, nb, '#', TS_BO);
	fill(cv, row + 1, 2 + nb, nc, '=', TS_CACHE);
	fill(cv, row + 1, 2 + nb + nc, w - nb - nc, '.', TS_FREE);
	put(cv, row + 1, 2 + w, TS_NORMAL, "]");
	return row + 2;
}

#define VM_COLS	"%-16.16s %3s %-9.9s %8s %8s %8s %6s %7s %-6s"
#define VM_FIXED 81	/* the width of VM_COLS and a space */

/* A VM: its numbers, then resident # and relocated ~ with | at its entitlement. */
static void draw_vm(struct top_canvas *cv, int row, const struct top_vm *v, uint64_t scale)
{
	char s[3][16], gpu[12], susp[24], rate[24];
	int w = cv->cols - VM_FIXED - 2, nr, nh, ne;

	snprintf(gpu, sizeof(gpu), "%d", v->gpu);
	snprintf(susp, sizeof(susp), "%" PRIu64, v->suspensions);
	if (v->rate_known)
		snprintf(rate, sizeof(rate), "%.1f", v->rate);
	else
		snprintf(rate, sizeof(rate), "-");
	put(cv, row, 0, v->advisory ? TS_ALERT : TS_NORMAL, VM_COLS, v->name, gpu,
	    v->state, human(v->resident, s[0], 16), human(v->relocated, s[1], 16),
	    human(v->entitlement, s[2], 16), susp, rate, v->advisory ? "THRASH" : "");
	if (w < 8)
		return;
	nr = cells(v->resident, scale, w);
	nh = cells(v->relocated, scale, w);
	if (nr + nh > w)
		nh = w - nr;
	ne = cells(v->entitlement, scale, w);
	put(cv, row, VM_FIXED, TS_NORMAL, "[");
	fill(cv, row, VM_FIXED + 1, nr, '#', TS_BO);
	fill(cv, row, VM_FIXED + 1 + nr, nh, '~', TS_RELOC);
	fill(cv, row, VM_FIXED + 1 + nr + nh, w - nr - nh, ' ', TS_NORMAL);
	if (ne >= w)
		ne = w - 1;
	put(cv, row, VM_FIXED + 1 + ne, TS_MARK, "|");
	put(cv, row, VM_FIXED + 1 + w, TS_NORMAL, "]");
}

/*
 * One frame. live: the terminal view (status of the stream, keys, the
 * recent events below); else --once's frame for a script.
 */
void top_draw(struct top *t, struct top_canvas *cv, bool live)
{
	const char *where = t->c->url ? t->c->url : t->c->socket;
	uint64_t scale = 1;
	size_t i;
	int row = 0;

	if (live)
		put(cv, row++, 0, TS_TITLE,
		    "vgmemctl top  mgmtd %s: %s  events: %s  sort: %s%s  (? help, q quit)",
		    where, t->connected ? "connected" : "UNREACHABLE",
		    t->stream_up ? "live" : "reconnecting", top_sort_names[t->sort],
		    t->reverse ? " reversed" : "");
	else
		put(cv, row++, 0, TS_TITLE, "vgmemctl top  mgmtd %s  sort: %s%s", where,
		    top_sort_names[t->sort], t->reverse ? " reversed" : "");
	if (!t->connected)
		put(cv, row, 0, TS_ALERT, "mgmtd unreachable: %s; retrying", t->err);
	row++;
	for (i = 0; i < t->nr_gpus; i++)
		row = draw_gpu(cv, row, &t->gpus[i]);
	row++;
	put(cv, row++, 0, TS_TITLE, VM_COLS " %s", "NAME", "GPU", "STATE", "RESIDENT",
	    "RELOC", "ENTITLED", "SUSP", "MiB/s", "NOTE",
	    "# resident ~ relocated | entitlement");
	for (i = 0; i < t->nr_vms; i++) {
		uint64_t m = t->vms[i].resident + t->vms[i].relocated;

		if (m > scale)
			scale = m;
		if (t->vms[i].entitlement > scale)
			scale = t->vms[i].entitlement;
	}
	for (i = 0; i < t->nr_vms; i++)
		draw_vm(cv, row++, &t->vms[i], scale);
	if (!t->nr_vms)
		put(cv, row++, 0, TS_NORMAL, "(no VMs)");
	if (t->nr_unmanaged)
		put(cv, row++, 0, TS_ALERT, "%u libvirt domain%s not managed: %s (vgmemctl vms)",
		    t->nr_unmanaged, t->nr_unmanaged == 1 ? "" : "s", t->unmanaged);
	if (!live || row + 2 >= cv->rows)
		return;
	row++;
	put(cv, row++, 0, TS_TITLE, "recent events (newest first)");
	for (i = 0; i < t->nr_events && row < cv->rows; i++) {
		unsigned int slot = (t->ev_head + TOP_EVENTS - 1 - (unsigned int)i) % TOP_EVENTS;

		put(cv, row++, 0, t->event_alert[slot] ? TS_ALERT : TS_NORMAL, "%s",
		    t->events[slot]);
	}
}

/* The keys, over the middle of the frame. */
void top_help(struct top_canvas *cv)
{
	static const char *const lines[] = {
		"vgmemctl top: keys",
		"",
		"  s      sort by the next column: gpu, name, resident,",
		"         relocated, rate, suspensions, entitlement",
		"  r      reverse the order",
		"  ?      this help (any key closes it)",
		"  q      quit",
		"",
		"GPU bars: # buffer objects, = file cache, . free VRAM",
		"VM bars:  # resident, ~ relocated, | the entitlement",
		"THRASH:   a migration advisory (the VM keeps thrashing)",
	};
	int n = (int)(sizeof(lines) / sizeof(lines[0])), w = 60, i;
	int top = (cv->rows - n - 2) / 2, left = (cv->cols - w) / 2;

	if (top < 0)
		top = 0;
	if (left < 0)
		left = 0;
	fill(cv, top, left, w, '-', TS_TITLE);
	for (i = 0; i < n; i++) {
		fill(cv, top + 1 + i, left, w, ' ', TS_TITLE);
		put(cv, top + 1 + i, left + 1, TS_TITLE, "%s", lines[i]);
	}
	fill(cv, top + 1 + n, left, w, '-', TS_TITLE);
}

void top_free(struct top *t)
{
	free(t->gpus);
	free(t->vms);
	free(t->bases);
	t->gpus = NULL;
	t->vms = NULL;
	t->bases = NULL;
}
