// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmemctl top: a live terminal view of the GPUs and VMs (top_view.c
 * draws it) in ncurses. It follows mgmtd's event stream (GET /v1/events)
 * and reads the totals again when events arrive (at most every
 * TOP_MIN_GAP_S) and every --interval; between those it sleeps in
 * curl_multi_poll() on the stream's socket and the terminal, so it does
 * not poll busily. When mgmtd goes away it says so and keeps trying; the
 * stream resumes after the last event it saw (Last-Event-ID). --once
 * prints one frame for scripts, without a terminal.
 */
#include <curses.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "top.h"

/* Events come in bursts under pressure: one read of the totals a burst. */
#define TOP_MIN_GAP_S	0.3
/* A stream that ended is opened again after this long. */
#define TOP_RETRY_S	2.0
/* The longest sleep: a resize is drawn within it even if no signal wakes us. */
#define TOP_MAX_SLEEP_MS	1000

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- --once: plain lines ----------------------------------------------- */

struct text_canvas {
	struct top_canvas cv;
	char **lines;
	int used;
};

static void text_put(struct top_canvas *cv, int row, int col, const char *s,
		     enum top_style st)
{
	struct text_canvas *tc = (struct text_canvas *)cv;
	char *l = tc->lines[row];
	size_t n = strlen(s), len = strlen(l);

	(void)st;
	if (len < (size_t)col) {
		memset(l + len, ' ', (size_t)col - len);
		l[col] = '\0';
		len = (size_t)col;
	}
	memcpy(l + col, s, n);
	if ((size_t)col + n > len)
		l[col + n] = '\0';
	if (row + 1 > tc->used)
		tc->used = row + 1;
}

static int top_once(struct top *t)
{
	struct text_canvas tc = { .cv = { .rows = 512, .cols = 120, .put = text_put } };
	struct winsize ws;
	int i, ret;

	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 40)
		tc.cv.cols = ws.ws_col;
	/* Rates need two reads an interval apart. */
	ret = top_refresh(t, mono_s());
	if (ret)
		return ret;
	usleep((useconds_t)(t->interval_s * 1e6));
	ret = top_refresh(t, mono_s());
	if (ret)
		return ret;
	tc.lines = calloc((size_t)tc.cv.rows, sizeof(*tc.lines));
	if (!tc.lines)
		return EXIT_API;
	for (i = 0; i < tc.cv.rows; i++) {
		tc.lines[i] = calloc(1, (size_t)tc.cv.cols + 1);
		if (!tc.lines[i])
			ret = EXIT_API;
	}
	if (!ret) {
		top_draw(t, &tc.cv, false);
		for (i = 0; i < tc.used; i++) {
			size_t n = strlen(tc.lines[i]);

			while (n && tc.lines[i][n - 1] == ' ')
				tc.lines[i][--n] = '\0';
			puts(tc.lines[i]);
		}
	}
	for (i = 0; i < tc.cv.rows; i++)
		free(tc.lines[i]);
	free(tc.lines);
	return ret;
}

/* ---- the terminal -------------------------------------------------------- */

static void curses_put(struct top_canvas *cv, int row, int col, const char *s,
		       enum top_style st)
{
	static const int look[TS_NR] = {
		[TS_NORMAL] = A_NORMAL, [TS_TITLE] = A_REVERSE, [TS_BO] = A_BOLD,
		[TS_CACHE] = A_NORMAL, [TS_FREE] = A_DIM, [TS_RELOC] = A_BOLD,
		[TS_MARK] = A_BOLD, [TS_ALERT] = A_BOLD | A_REVERSE,
	};
	attr_t a = (attr_t)look[st];

	(void)cv;
	if (has_colors() && st != TS_NORMAL && st != TS_TITLE)
		a |= COLOR_PAIR(st);
	attrset(a);
	mvaddnstr(row, col, s, COLS - col);
	attrset(A_NORMAL);
}

static void draw(struct top *t, bool help)
{
	struct top_canvas cv = { .rows = LINES, .cols = COLS, .put = curses_put };

	erase();
	top_draw(t, &cv, true);
	if (help)
		top_help(&cv);
	refresh();
}

static void stream_data(void *priv, const char *data, size_t len)
{
	struct top *t = priv;

	top_event(t, data, len);
}

struct stream {
	struct top *t;
	CURL *cu;
	struct curl_slist *h;
	struct sse sse;
	double retry_at;
};

static void stream_stop(CURLM *m, struct stream *s)
{
	if (!s->cu)
		return;
	curl_multi_remove_handle(m, s->cu);
	curl_easy_cleanup(s->cu);
	curl_slist_free_all(s->h);
	s->cu = NULL;
	s->h = NULL;
	sse_free(&s->sse);
}

/* The stream is up once mgmtd sends something (its first line comes at once). */
static size_t stream_write(char *p, size_t sz, size_t n, void *priv)
{
	struct stream *s = priv;

	s->t->stream_up = true;
	return sse_write(p, sz, n, &s->sse);
}

/* Opens the event stream, after the last event seen if any. */
static void stream_start(struct top *t, CURLM *m, struct stream *s)
{
	char hdr[64];

	s->h = NULL;
	s->cu = ctl_handle(t->c, "/v1/events", &s->h);
	if (!s->cu)
		return;
	s->h = curl_slist_append(s->h, "Accept: text/event-stream");
	if (t->last_event_id) {
		snprintf(hdr, sizeof(hdr), "Last-Event-ID: %" PRIu64, t->last_event_id);
		s->h = curl_slist_append(s->h, hdr);
	}
	s->sse.on_data = stream_data;
	s->sse.priv = t;
	curl_easy_setopt(s->cu, CURLOPT_HTTPHEADER, s->h);
	curl_easy_setopt(s->cu, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(s->cu, CURLOPT_WRITEDATA, s);
	curl_multi_add_handle(m, s->cu);
}

/*
 * The events just before top started, for the bottom pane; the stream
 * then resumes after the last of them (Last-Event-ID), without a gap.
 */
static void prefill_events(struct top *t)
{
	json_t *h, *j, *ev;
	char path[96], *txt;
	uint64_t last;
	size_t i;

	if (ctl_fetch_json(t->c, "/healthz", &h))
		return;
	last = ju(h, "last_event_id");
	json_decref(h);
	if (!last)
		return;
	snprintf(path, sizeof(path), "/v1/events?since=%" PRIu64 "&limit=%d",
		 last > TOP_EVENTS ? last - TOP_EVENTS : 0, TOP_EVENTS);
	if (ctl_fetch_json(t->c, path, &j))
		return;
	json_array_foreach(json_object_get(j, "events"), i, ev) {
		txt = json_dumps(ev, JSON_COMPACT);
		if (txt)
			top_event(t, txt, strlen(txt));
		free(txt);
	}
	json_decref(j);
}

static int top_live(struct top *t)
{
	struct curl_waitfd tty = { .fd = STDIN_FILENO, .events = CURL_WAIT_POLLIN };
	struct stream s = { .t = t };
	double now, last_read = 0;
	bool quit = false, help = false, dirty = true, redraw = true, was_up;
	uint64_t seen = 0;
	CURLM *m = curl_multi_init();
	SCREEN *scr;

	if (!m)
		return EXIT_API;
	/* newterm, not initscr: a terminal it cannot drive is an error, not an exit */
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fprintf(stderr, "%s: top: cannot drive the terminal '%s' (TERM); try --once\n",
			prog, getenv("TERM") ? getenv("TERM") : "");
		curl_multi_cleanup(m);
		return EXIT_USAGE;
	}
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(TS_BO, COLOR_GREEN, -1);
		init_pair(TS_CACHE, COLOR_CYAN, -1);
		init_pair(TS_FREE, -1, -1);
		init_pair(TS_RELOC, COLOR_YELLOW, -1);
		init_pair(TS_MARK, COLOR_MAGENTA, -1);
		init_pair(TS_ALERT, COLOR_RED, -1);
	}
	t->c->quiet = true;	/* errors go on the screen */
	last_read = mono_s();
	if (!top_refresh(t, last_read))
		prefill_events(t);
	seen = t->events_seen;
	while (!quit) {
		int ch, running, numfds;
		double wait_s;
		CURLMsg *msg;

		now = mono_s();
		/* the totals: after events (a burst at a time) and every interval */
		if ((dirty && now - last_read >= TOP_MIN_GAP_S) ||
		    now - last_read >= (t->connected ? t->interval_s : TOP_RETRY_S)) {
			top_refresh(t, now);
			last_read = now;
			dirty = false;
			redraw = true;
		}
		if (!s.cu && now >= s.retry_at)
			stream_start(t, m, &s);
		if (redraw) {
			draw(t, help);
			redraw = false;
		}
		wait_s = last_read + (t->connected ? t->interval_s : TOP_RETRY_S) - now;
		if (dirty)
			wait_s = last_read + TOP_MIN_GAP_S - now;
		if (!s.cu && s.retry_at - now < wait_s)
			wait_s = s.retry_at - now;
		if (wait_s > TOP_MAX_SLEEP_MS / 1000.0)
			wait_s = TOP_MAX_SLEEP_MS / 1000.0;
		if (wait_s < 0.01)
			wait_s = 0.01;
		was_up = t->stream_up;
		curl_multi_poll(m, &tty, 1, (int)(wait_s * 1000), &numfds);
		curl_multi_perform(m, &running);
		if (t->stream_up != was_up)
			redraw = true;
		if (t->events_seen != seen) {
			/* new events: read the totals soon, show them now */
			seen = t->events_seen;
			dirty = true;
			redraw = true;
		}
		while ((msg = curl_multi_info_read(m, &numfds))) {
			if (msg->msg != CURLMSG_DONE || msg->easy_handle != s.cu)
				continue;
			/* the stream ended: mgmtd stopped, or the connection broke */
			stream_stop(m, &s);
			t->stream_up = false;
			s.retry_at = mono_s() + TOP_RETRY_S;
			dirty = true;
			redraw = true;
		}
		while ((ch = getch()) != ERR) {
			redraw = true;
			if (help) {	/* any key closes the help */
				help = false;
				if (ch != 'q')
					continue;
			}
			switch (ch) {
			case 'q':
			case 'Q':
				quit = true;
				break;
			case '?':
			case 'h':
				help = true;
				break;
			case 's':
				t->sort = (t->sort + 1) % SORT_NR;
				dirty = true;
				last_read = 0;	/* sorted as read: read now */
				break;
			case 'r':
				t->reverse = !t->reverse;
				last_read = 0;
				break;
			case KEY_RESIZE:
			default:
				break;
			}
		}
	}
	stream_stop(m, &s);
	curl_multi_cleanup(m);
	endwin();
	delscreen(scr);
	return 0;
}

int cmd_top(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, '1' },
		{ "sort", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct top t = { .c = c, .interval_s = 2, .connected = true };
	bool once = false;
	uint64_t v;
	int opt, ret, k;

	optind = 0;	/* 0: GNU getopt starts over (permuting again) */
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case '1': once = true; break;
		case 's':
			for (k = 0; k < SORT_NR; k++)
				if (!strcmp(optarg, top_sort_names[k]))
					break;
			if (k == SORT_NR)
				return usage_error("top: --sort takes gpu, name, resident, relocated, rate, suspensions or entitlement, not '%s'",
						   optarg);
			t.sort = (enum top_sort)k;
			break;
		case 'i':
			if (!parse_uint(optarg, 3600, &v) || !v)
				return usage_error("top: --interval takes 1 to 3600 seconds, not '%s'", optarg);
			t.interval_s = (double)v;
			break;
		case 'h':
			printf("usage: %s top [--once] [--sort KEY] [--interval SEC]\n"
			       "  live view: per GPU its VRAM (BOs, file cache, free), per VM resident\n"
			       "  against relocated with its entitlement, suspensions, relocation MiB/s,\n"
			       "  thrash advisories; keys: s sort, r reverse, ? help, q quit.\n"
			       "  --once: one frame on stdout (after one interval, for the rates);\n"
			       "  KEY: gpu, name, resident, relocated, rate, suspensions, entitlement;\n"
			       "  --interval: read the totals at least every SEC seconds (2)\n", prog);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("top: unexpected argument '%s'", argv[optind]);
	if (once) {
		ret = top_once(&t);
	} else if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
		ret = usage_error("top: needs a terminal on stdin and stdout; for scripts: %s top --once",
				  prog);
	} else {
		ret = top_live(&t);
	}
	top_free(&t);
	return ret;
}
