// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * events: the history, newest first (the last --limit events, or those
 * after an event id or within a time span given with --since), or the
 * live stream (--follow), which reconnects with Last-Event-ID.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

/* The server's page: GET /v1/events?limit= takes 1..1000 (docs/rest.md). */
#define EVENTS_MAX_LIMIT	1000

static void print_event(struct ctl *c, const char *data, size_t len)
{
	json_t *j;
	char *detail;
	time_t t;
	struct tm tm;
	char ts[32];

	if (c->json) {
		printf("%.*s\n", (int)len, data);
		fflush(stdout);
		return;
	}
	j = json_loadb(data, len, 0, NULL);
	if (!j)
		return;
	t = (time_t)(json_integer_value(json_object_get(j, "ts_ms")) / 1000);
	localtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	detail = json_dumps(json_object_get(j, "detail"), JSON_COMPACT);
	printf("%s %6" PRIu64 " %-10s %-36s %s\n", ts, ju(j, "id"), js(j, "type"),
	       js(j, "vm")[0] ? js(j, "vm") : "-", detail ? detail : "");
	fflush(stdout);
	free(detail);
	json_decref(j);
}

static void follow_data(void *priv, const char *data, size_t len)
{
	print_event(priv, data, len);
}

static int follow_events(struct ctl *c, const char *since)
{
	struct sse f = { .on_data = follow_data, .priv = c };
	int ret = 0, tries = 0;

	if (since)
		snprintf(f.last_id, sizeof(f.last_id), "%s", since);
	/* Reconnects with Last-Event-ID after a dropped stream: no gaps. */
	for (;;) {
		struct curl_slist *h = NULL;
		long status = 0;
		CURLcode rc;
		CURL *cu = ctl_handle(c, "/v1/events", &h);
		char hdr[64];

		if (!cu)
			return EXIT_CONNECT;
		h = curl_slist_append(h, "Accept: text/event-stream");
		if (f.last_id[0]) {
			snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", f.last_id);
			h = curl_slist_append(h, hdr);
		}
		curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, sse_write);
		curl_easy_setopt(cu, CURLOPT_WRITEDATA, &f);
		rc = curl_easy_perform(cu);
		curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &status);
		curl_slist_free_all(h);
		curl_easy_cleanup(cu);
		if (status && status != 200) {
			struct buf b = { 0 };

			print_problem(status, &b);
			ret = EXIT_API;
			break;
		}
		if (rc != CURLE_OK && !status) {
			if (++tries > 5) {
				fprintf(stderr, "%s: cannot reach mgmtd: %s\n", prog,
					curl_easy_strerror(rc));
				ret = EXIT_CONNECT;
				break;
			}
		} else {
			tries = 0;
		}
		sleep(2);
	}
	sse_free(&f);
	return ret;
}

/*
 * --since: an event id (digits), or a time span back from now: a number
 * and s, m, h or d ("90s", "10m", "2h", "7d"). 0 or a usage error.
 */
static int parse_since(const char *s, uint64_t *id, uint64_t *span_ms)
{
	static const struct { char unit; uint64_t ms; } units[] = {
		{ 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 }, { 'd', 86400000 },
	};
	size_t n = strlen(s), i;
	char num[24];
	uint64_t v;

	*id = 0;
	*span_ms = 0;
	if (parse_uint(s, UINT64_MAX / 2, id))
		return 0;
	if (n >= 2 && n < sizeof(num)) {
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			/* at most ten years back: a larger span is a typo */
			if (s[n - 1] == units[i].unit &&
			    parse_uint(num, 3650ull * 86400000 / units[i].ms, &v) && v) {
				*span_ms = v * units[i].ms;
				return 0;
			}
		}
	}
	return usage_error("events: --since needs an event id or a time span such as 90s, 10m, 2h or 7d, not '%s'", s);
}

/*
 * The history, newest first: the newest `limit` events after event id
 * `after` and, with a span, no older than it. The newest id comes from
 * /healthz, so one page of the history holds them all.
 */
static int events_history(struct ctl *c, uint64_t after, uint64_t span_ms,
			  uint64_t limit)
{
	json_t *h, *j, *evs, *out;
	uint64_t last, from, cutoff = 0;
	struct timespec now;
	char path[128];
	bool more;
	size_t i, n;
	int ret;

	ret = ctl_fetch_json(c, "/healthz", &h);
	if (ret)
		return ret;
	last = ju(h, "last_event_id");
	json_decref(h);
	from = last > limit ? last - limit : 0;
	if (from < after)
		from = after;
	snprintf(path, sizeof(path), "/v1/events?since=%" PRIu64 "&limit=%" PRIu64,
		 from, limit);
	ret = ctl_fetch_json(c, path, &j);
	if (ret)
		return ret;
	if (span_ms) {
		clock_gettime(CLOCK_REALTIME, &now);
		cutoff = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
		cutoff = cutoff > span_ms ? cutoff - span_ms : 0;
	}
	evs = json_object_get(j, "events");
	n = json_array_size(evs);
	/* older ones left out: before the page, and within the span if any */
	more = from > after &&
	       (!span_ms || (n && ju(json_array_get(evs, 0), "ts_ms") >= cutoff));
	out = json_array();
	for (i = n; i-- > 0;) {
		json_t *ev = json_array_get(evs, i);

		if (span_ms && ju(ev, "ts_ms") < cutoff)
			break;
		json_array_append(out, ev);
	}
	if (c->json) {
		json_t *o = json_pack("{s:o, s:I, s:b}", "events", out, "last_id",
				      (json_int_t)(json_array_size(out) ?
						   ju(json_array_get(out, 0), "id") : last),
				      "more", more);
		char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;

		if (txt)
			puts(txt);
		free(txt);
		json_decref(o);
	} else {
		json_array_foreach(out, i, h) {
			char *txt = json_dumps(h, JSON_COMPACT);

			if (txt)
				print_event(c, txt, strlen(txt));
			free(txt);
		}
		if (more)
			printf("(older events left out: raise --limit, or %s events --since ID)\n",
			       prog);
		json_decref(out);
	}
	json_decref(j);
	return 0;
}

int cmd_events(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "follow", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *since = NULL, *limit_s = NULL;
	uint64_t after = 0, span_ms = 0, limit = 100;
	bool follow = false;
	int opt, ret;

	optind = 0;	/* 0: GNU getopt starts over (permuting again) */
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case 's': since = optarg; break;
		case 'l': limit_s = optarg; break;
		case 'f': follow = true; break;
		case 'h':
			printf("usage: %s events [--since ID|SPAN] [--limit N] [--follow]\n"
			       "  the history, newest first: the last N events (default 100, at most %d),\n"
			       "  those after event ID, or those of the last SPAN (90s, 10m, 2h, 7d);\n"
			       "  --follow: the live stream (with --since ID: resume after ID first)\n",
			       prog, EVENTS_MAX_LIMIT);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("events: unexpected argument '%s'", argv[optind]);
	if (since) {
		ret = parse_since(since, &after, &span_ms);
		if (ret)
			return ret;
	}
	if (limit_s && !parse_uint(limit_s, EVENTS_MAX_LIMIT, &limit))
		limit = 0;
	if (!limit)
		return usage_error("events: --limit needs a number of events from 1 to 1000, not '%s'",
				   limit_s);
	if (follow && (span_ms || limit_s))
		return usage_error("events --follow: takes only --since ID (resume after that event)%s", "");
	if (follow)
		return follow_events(c, since);
	return events_history(c, after, span_ms, limit);
}
