// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * REST throughput and tail latency: the REST server over the fake model
 * with 100 VMs on TCP 127.0.0.1 (token auth, as a remote scraper would
 * use it), loaded by wrk (Debian's wrk) or, without it, by a libcurl loop
 * with keep-alive connections. Reports requests/s and p99 for /healthz
 * (the baseline: routing, auth and HTTP alone), GET /v1/vms and /metrics,
 * plain and with "Accept-Encoding: gzip" (as Prometheus scrapes), and the
 * ratio of each to the baseline. Goal (issue 4): >= 20 000 requests/s and
 * p99 < 5 ms on 2 cores for /v1/vms and /metrics. The model does not
 * change during a run, so this measures the cached answers (rest_cache.h);
 * one rendering is timed separately (the cost after every model change).
 * Bounded in time (a few seconds per route); never fails on numbers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"
#include "../unit/rest_fixture.h"

#define NVMS		100
#define SECONDS		4
#define CONNS		16
#define CURL_THREADS	4

struct result {
	double rps;
	double p99_ms;
	size_t bytes;	/* response size */
};

static bool have_wrk(void)
{
	return !system("command -v wrk >/dev/null 2>&1");
}

/* wrk's latency line "99%  1.23ms" into milliseconds. */
static double wrk_ms(const char *s)
{
	double v = strtod(s, NULL);

	if (strstr(s, "us"))
		return v / 1000;
	if (strstr(s, "ms"))
		return v;
	if (strstr(s, "s"))
		return v * 1000;
	return v;
}

struct route {
	const char *path;
	bool gzip;	/* sends Accept-Encoding: gzip */
};

static int run_wrk(struct fix *f, const struct route *rt, struct result *r)
{
	char cmd[512], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "wrk -t2 -c%d -d%ds --latency -H 'Authorization: Bearer %s' %s"
		 "http://127.0.0.1:%u%s 2>&1", CONNS, SECONDS, FIX_TOKEN,
		 rt->gzip ? "-H 'Accept-Encoding: gzip' " : "", f->port, rt->path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *s = line;

		while (*s == ' ')
			s++;
		if (!strncmp(s, "Requests/sec:", 13))
			r->rps = strtod(s + 13, NULL);
		else if (!strncmp(s, "99%", 3))
			r->p99_ms = wrk_ms(s + 3);
		else if (strstr(s, "Non-2xx"))
			fprintf(stderr, "bench_rest: wrk saw errors: %s", s);
	}
	return pclose(p) ? -1 : 0;
}

/* ---- libcurl fallback ------------------------------------------------------ */

struct loop {
	struct fix *f;
	const struct route *rt;
	uint64_t end_ns;
	double *lat;
	size_t n, cap;
};

static size_t sink(char *p, size_t sz, size_t n, void *priv)
{
	(void)p;
	(void)priv;
	return sz * n;
}

static void *curl_loop(void *arg)
{
	struct loop *l = arg;
	struct curl_slist *h = NULL;
	char url[256];
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", l->f->port, l->rt->path);
	h = curl_slist_append(h, "Authorization: Bearer " FIX_TOKEN);
	if (l->rt->gzip)	/* raw bytes, not decoded: as wrk */
		h = curl_slist_append(h, "Accept-Encoding: gzip");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	while (bench_now_ns() < l->end_ns && l->n < l->cap) {
		uint64_t t0 = bench_now_ns();

		if (curl_easy_perform(c) != CURLE_OK)
			break;
		l->lat[l->n++] = (double)(bench_now_ns() - t0) / 1e6;
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_curl(struct fix *f, const struct route *rt, struct result *r)
{
	struct loop l[CURL_THREADS];
	pthread_t t[CURL_THREADS];
	uint64_t t0 = bench_now_ns();
	double *all;
	size_t i, n = 0;

	for (i = 0; i < CURL_THREADS; i++) {
		l[i] = (struct loop){ .f = f, .rt = rt,
				      .end_ns = t0 + SECONDS * 1000000000ull,
				      .cap = 2000000 };
		l[i].lat = malloc(sizeof(double) * l[i].cap);
		pthread_create(&t[i], NULL, curl_loop, &l[i]);
	}
	for (i = 0; i < CURL_THREADS; i++) {
		pthread_join(t[i], NULL);
		n += l[i].n;
	}
	all = malloc(sizeof(double) * (n ? n : 1));
	for (n = 0, i = 0; i < CURL_THREADS; i++) {
		memcpy(all + n, l[i].lat, l[i].n * sizeof(double));
		n += l[i].n;
		free(l[i].lat);
	}
	qsort(all, n, sizeof(double), cmp_double);
	r->rps = (double)n / ((double)(bench_now_ns() - t0) / 1e9);
	r->p99_ms = n ? all[(size_t)((double)n * 0.99)] : 0;
	free(all);
	return n ? 0 : -1;
}

static size_t response_size(struct fix *f, const struct route *rt)
{
	struct http_req q = { .port = f->port, .token = FIX_TOKEN, .path = rt->path,
			      .extra_header = rt->gzip ? "Accept-Encoding: gzip" : NULL };
	struct http_resp r;
	size_t n;

	if (http_do(&q, &r) || r.status != 200) {
		http_free(&r);
		return 0;
	}
	n = r.len;
	http_free(&r);
	return n;
}

/* One rendering of path after a model change: the price of a cache miss. */
static double miss_ms(struct fix *f, const char *path)
{
	struct http_req q = { .port = f->port, .token = FIX_TOKEN, .path = path };
	struct http_resp r;
	double best = 1e9;
	int i;

	for (i = 0; i < 20; i++) {
		uint64_t t0;

		pthread_mutex_lock(&f->mg->lock);
		f->mg->vms[i].stats.faults++;	/* a stats refresh changed it */
		pthread_mutex_unlock(&f->mg->lock);
		t0 = bench_now_ns();
		if (http_do(&q, &r) || r.status != 200) {
			http_free(&r);
			return 0;
		}
		http_free(&r);
		if ((double)(bench_now_ns() - t0) / 1e6 < best)
			best = (double)(bench_now_ns() - t0) / 1e6;
	}
	return best;
}

int main(void)
{
	static const struct route routes[] = {
		{ "/healthz", false }, { "/v1/vms", false }, { "/v1/vms", true },
		{ "/metrics", false }, { "/metrics", true },
	};
	enum { NR = sizeof(routes) / sizeof(routes[0]) };
	struct result res[NR];
	bool wrk = have_wrk();
	struct fix f;
	size_t i;

	curl_global_init(CURL_GLOBAL_ALL);
	if (fix_start(&f, NVMS, 65536)) {
		fprintf(stderr, "bench_rest: cannot start the REST server\n");
		return 1;
	}
	printf("bench_rest: %d VMs, %s, %d s per route, %ld CPUs\n", NVMS,
	       wrk ? "wrk -t2 -c16 (keep-alive)" : "libcurl loop, 4 threads (wrk not found)",
	       SECONDS, sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 0; i < NR; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		res[i].bytes = response_size(&f, &routes[i]);
		if ((wrk ? run_wrk : run_curl)(&f, &routes[i], &res[i]))
			fprintf(stderr, "bench_rest: load run on %s failed\n",
				routes[i].path);
		printf("  GET %-10s %-5s %7zu B/response  %9.0f requests/s  p99 %7.3f ms\n",
		       routes[i].path, routes[i].gzip ? "gzip" : "", res[i].bytes,
		       res[i].rps, res[i].p99_ms);
	}
	printf("  after a model change, one answer (render + send): /v1/vms %.3f ms, /metrics %.3f ms\n",
	       miss_ms(&f, "/v1/vms"), miss_ms(&f, "/metrics"));
	for (i = 1; i < NR; i++) {
		char what[128];
		const char *enc = routes[i].gzip ? " (gzip)" : "";

		snprintf(what, sizeof(what), "GET %s%s requests/s vs /healthz",
			 routes[i].path, enc);
		bench_ratio(what, res[0].rps > 0 ? res[i].rps / res[0].rps : 0, 0.5, 0);
		snprintf(what, sizeof(what), "GET %s%s requests/s vs goal 20000",
			 routes[i].path, enc);
		bench_ratio(what, res[i].rps / 20000.0, 1.0, 0);
		snprintf(what, sizeof(what), "GET %s%s p99 ms vs goal 5 ms",
			 routes[i].path, enc);
		bench_ratio(what, res[i].p99_ms / 5.0, 1.0, 1);
	}
	fix_stop(&f);
	curl_global_cleanup();
	return 0;
}
