/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vgmemctl top: what it shows (top_view.c: the GPUs and VMs from the REST
 * API, relocation rates, recent events, drawn on a canvas) and the
 * terminal around it (top.c: ncurses, keys, the event stream).
 */
#ifndef VGMEMCTL_TOP_H
#define VGMEMCTL_TOP_H

#include "ctl.h"

/* How a piece of text is drawn: ncurses gives each a look, --once none. */
enum top_style {
	TS_NORMAL,
	TS_TITLE,	/* the status and the column headings */
	TS_BO,		/* VRAM of buffer objects; a VM's resident bytes */
	TS_CACHE,	/* VRAM of the file cache */
	TS_FREE,	/* free VRAM */
	TS_RELOC,	/* a VM's relocated bytes */
	TS_MARK,	/* a VM's entitlement on its bar */
	TS_ALERT,	/* thrash advisories, mgmtd unreachable */
	TS_NR
};

struct top_canvas {
	int rows, cols;
	void (*put)(struct top_canvas *cv, int row, int col, const char *s,
		    enum top_style st);
};

enum top_sort {
	SORT_GPU,	/* GPU, then name */
	SORT_NAME,
	SORT_RESIDENT,
	SORT_RELOCATED,
	SORT_RATE,
	SORT_SUSPENSIONS,
	SORT_ENTITLEMENT,
	SORT_NR
};

extern const char *const top_sort_names[SORT_NR];

struct top_gpu {
	int index;
	char name[32];
	uint64_t vram, used, cache, host_used, moved;
	double rate;		/* MiB/s relocated, over the last interval */
	bool contended;
	unsigned int nr_vms;
};

struct top_vm {
	char id[40], name[64], state[24];
	int gpu;
	uint64_t resident, relocated, entitlement, suspensions, moved;
	double rate;		/* MiB/s relocated out and in */
	bool rate_known, advisory;
};

/* What the rates are measured from: a VM's or GPU's bytes moved then. */
struct top_base {
	char key[48];
	uint64_t moved;
	double t;
	double rate;
	bool known;
};

#define TOP_EVENTS	64

struct top {
	struct ctl *c;
	struct top_gpu *gpus;
	struct top_vm *vms;
	size_t nr_gpus, nr_vms;
	struct top_base *bases;
	size_t nr_bases;
	double interval_s;	/* rates and totals at least this often */
	enum top_sort sort;
	bool reverse;		/* the other way round from the key's usual */
	bool connected, stream_up, have_data;
	char err[1024];		/* why not connected */
	uint64_t last_event_id;
	char unmanaged[256];	/* the domains not managed, "name (state), ..." */
	unsigned int nr_unmanaged;
	char events[TOP_EVENTS][160];	/* a ring of the recent events, formatted */
	bool event_alert[TOP_EVENTS];
	unsigned int nr_events, ev_head;
	uint64_t events_seen;	/* every event top_event() took */
};

int top_refresh(struct top *t, double now);
void top_event(struct top *t, const char *data, size_t len);
void top_draw(struct top *t, struct top_canvas *cv, bool live);
void top_help(struct top_canvas *cv);
void top_free(struct top *t);

#endif
