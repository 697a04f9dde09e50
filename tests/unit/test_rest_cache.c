// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cache of rendered answers (mgmtd/rest_cache.h) over the fake model:
 * every kind of change (an operator's policy, a VM appearing or going, a
 * stats refresh, a GPU, the daemon's status) shows in the very next GET of
 * /v1/vms, /v1/gpus and /metrics; gzip answers inflate (CRC and length
 * checked by zlib) to exactly the plain ones, /metrics' per-request tail
 * included; /metrics' LRC families are cached, keyed on their own
 * generation; Accept-Encoding is parsed as RFC 9110 says; and readers racing
 * a writer never see a value older than one committed before their request
 * started (run under ASan/UBSan by make check).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <zlib.h>

#include "rest_fixture.h"

#define NVMS	20

FIX_GROUP(NVMS, 4096)

static struct http_resp get(const char *path, const char *extra)
{
	struct http_req q = { .unix_path = F.sock, .path = path,
			      .extra_header = extra };
	struct http_resp r;

	assert_int_equal(http_do(&q, &r), 0);
	assert_int_equal(r.status, 200);
	return r;
}

/* The integer value of key in VM i of a GET /v1/vms body. */
static json_int_t vms_field(const struct http_resp *r, size_t i,
			    const char *obj, const char *key)
{
	json_t *j = http_json(r), *vm, *v;
	json_int_t n;

	assert_non_null(j);
	vm = json_array_get(json_object_get(j, "vms"), i);
	assert_non_null(vm);
	v = obj ? json_object_get(json_object_get(vm, obj), key) :
		  json_object_get(vm, key);
	assert_true(json_is_integer(v));
	n = json_integer_value(v);
	json_decref(j);
	return n;
}

static size_t vms_count(const struct http_resp *r)
{
	json_t *j = http_json(r);
	size_t n;

	assert_non_null(j);
	n = json_array_size(json_object_get(j, "vms"));
	json_decref(j);
	return n;
}

/* Whether a /metrics body has the exact sample line. */
static bool has_line(const struct http_resp *r, const char *line)
{
	const char *p = r->body;
	size_t n = strlen(line);

	while ((p = strstr(p, line))) {
		if ((p == r->body || p[-1] == '\n') && p[n] == '\n')
			return true;
		p += n;
	}
	return false;
}

/* ---- every change shows in the next GET --------------------------------- */

static void test_policy_change_visible(void **state)
{
	struct http_resp r;
	uint64_t q0;

	(void)state;
	r = get("/v1/vms", NULL);
	q0 = (uint64_t)vms_field(&r, 2, "policy", "quota");
	http_free(&r);
	r = get("/v1/vms", NULL);	/* now from the cache */
	assert_int_equal(vms_field(&r, 2, "policy", "quota"), q0);
	http_free(&r);

	r = fix_req(&F, "PATCH", "/v1/vms/vm3/policy", "{\"quota\":\"300M\"}");
	assert_int_equal(r.status, 200);
	http_free(&r);
	r = get("/v1/vms", NULL);
	assert_int_equal(vms_field(&r, 2, "policy", "quota"), 300ull << 20);
	http_free(&r);
	r = get("/metrics", NULL);
	assert_true(has_line(&r, "vgmem_vm_quota_bytes{vm=\"00000000-0000-4000-8000-000000000003\",domain=\"vm3\",domain_uuid=\"\",gpu=\"0\"} 314572800"));
	http_free(&r);
}

static void test_stats_refresh_visible(void **state)
{
	struct http_resp r;

	(void)state;
	r = get("/v1/vms", NULL);
	http_free(&r);
	r = get("/metrics", NULL);
	http_free(&r);
	/* what the model's stats refresh does: new counters, same VMs */
	pthread_mutex_lock(&F.mg->lock);
	F.mg->vms[4].stats.faults = 4242;
	F.mg->vms[4].stats.suspend_hist[3] += 7;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	r = get("/v1/vms", NULL);
	assert_int_equal(vms_field(&r, 4, NULL, "faults"), 4242);
	http_free(&r);
	r = get("/metrics", NULL);
	assert_true(has_line(&r, "vgmem_vm_faults_total{vm=\"00000000-0000-4000-8000-000000000005\",domain=\"vm5\",domain_uuid=\"\",gpu=\"0\"} 4242"));
	assert_true(has_line(&r, "vgmem_vm_suspension_seconds_bucket{vm=\"00000000-0000-4000-8000-000000000005\",domain=\"vm5\",domain_uuid=\"\",gpu=\"0\",le=\"0.000016\"} 9"));
	http_free(&r);
}

static void test_vm_set_change_visible(void **state)
{
	struct http_resp r;

	(void)state;
	r = get("/v1/vms", NULL);
	assert_int_equal(vms_count(&r), NVMS);
	http_free(&r);
	r = get("/metrics", NULL);
	assert_true(has_line(&r, "vgmem_vms 20"));
	http_free(&r);

	/* a VM starts ... */
	pthread_mutex_lock(&F.mg->lock);
	fake_vm_init(&F.mg->vms[NVMS], NVMS, 1, FAKE_GIB / 4);
	F.mg->nvms++;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	r = get("/v1/vms", NULL);
	assert_int_equal(vms_count(&r), NVMS + 1);
	http_free(&r);
	r = get("/metrics", NULL);
	assert_true(has_line(&r, "vgmem_vms 21"));
	assert_true(has_line(&r, "vgmem_vm_running{vm=\"00000000-0000-4000-8000-000000000015\",domain=\"vm21\",domain_uuid=\"\",gpu=\"1\"} 1"));
	http_free(&r);

	/* ... stops (running false) and goes */
	pthread_mutex_lock(&F.mg->lock);
	F.mg->vms[NVMS].running = false;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	r = get("/metrics", NULL);
	assert_true(has_line(&r, "vgmem_vm_running{vm=\"00000000-0000-4000-8000-000000000015\",domain=\"vm21\",domain_uuid=\"\",gpu=\"1\"} 0"));
	http_free(&r);
	pthread_mutex_lock(&F.mg->lock);
	F.mg->nvms--;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	r = get("/v1/vms", NULL);
	assert_int_equal(vms_count(&r), NVMS);
	http_free(&r);
	r = get("/metrics", NULL);
	assert_true(has_line(&r, "vgmem_vms 20"));
	assert_null(strstr(r.body, "domain=\"vm21\""));
	http_free(&r);
}

static void test_gpu_and_status_change_visible(void **state)
{
	struct http_resp r;
	json_t *j;

	(void)state;
	r = get("/v1/gpus", NULL);
	http_free(&r);
	pthread_mutex_lock(&F.mg->lock);
	F.mg->gpus[1].reloc_out_chunks = 777;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	r = get("/v1/gpus", NULL);
	j = http_json(&r);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
		json_array_get(json_object_get(j, "gpus"), 1), "relocations"),
		"out_chunks")), 777);
	json_decref(j);
	http_free(&r);

	/* the status (an event) is part of /metrics' key, not of the lists' */
	r = get("/metrics", NULL);
	http_free(&r);
	{
		char line[64];
		uint64_t id = fake_publish(F.mg, "fault", "", "{}");

		r = get("/metrics", NULL);
		snprintf(line, sizeof(line), "vgmem_events_last_id %llu",
			 (unsigned long long)id);
		assert_true(has_line(&r, line));
		http_free(&r);
	}
}

/*
 * The file cache's VRAM alone changes (what the model's stats refresh
 * does when only the cache's replicas moved): the next GET of every GPU
 * and VM answer and of /metrics shows the new bytes.
 */
static void test_file_cache_change_visible(void **state)
{
	static const char *const paths[] = {
		"/v1/gpus", "/v1/gpus/1", "/v1/vms",
		"/v1/vms/00000000-0000-4000-8000-000000000004", "/metrics",
	};
	struct http_resp r;
	json_t *j;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		r = get(paths[i], NULL);	/* cached now */
		http_free(&r);
	}
	pthread_mutex_lock(&F.mg->lock);
	F.mg->gpus[1].cache_used = 5ull << 20;
	F.mg->vms[3].cache_private = 3ull << 16;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);

	r = get("/v1/gpus", NULL);
	j = http_json(&r);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(
		json_array_get(json_object_get(j, "gpus"), 1), "cache_used")),
		5 << 20);
	json_decref(j);
	http_free(&r);
	r = get("/v1/gpus/1", NULL);
	j = http_json(&r);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "cache_used")),
			 5 << 20);
	json_decref(j);
	http_free(&r);
	r = get("/v1/vms", NULL);
	assert_int_equal(vms_field(&r, 3, "usage", "cache_private"), 3 << 16);
	http_free(&r);
	r = get("/v1/vms/00000000-0000-4000-8000-000000000004", NULL);
	j = http_json(&r);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(j, "usage"), "cache_private")), 3 << 16);
	json_decref(j);
	http_free(&r);
	r = get("/metrics", NULL);
	assert_true(has_line(&r, "vgmem_gpu_cache_used_bytes{gpu=\"1\",device=\"sim1\"} 5242880"));
	assert_true(has_line(&r, "vgmem_vm_cache_private_bytes{vm=\"00000000-0000-4000-8000-000000000004\",domain=\"vm4\",domain_uuid=\"\",gpu=\"1\"} 196608"));
	http_free(&r);
}

/* The REST counters at the end of /metrics are per request, never cached. */
static void test_metrics_tail_per_request(void **state)
{
	const char *key = "vgmem_rest_responses_total{class=\"2xx\"} ";
	struct http_resp a, b;
	const char *pa, *pb;

	(void)state;
	a = get("/metrics", NULL);
	b = get("/metrics", NULL);
	pa = strstr(a.body, key);
	pb = strstr(b.body, key);
	assert_non_null(pa);
	assert_non_null(pb);
	assert_int_equal(strtoull(pb + strlen(key), NULL, 10),
			 strtoull(pa + strlen(key), NULL, 10) + 1);
	http_free(&a);
	http_free(&b);
}

/* ---- gzip ------------------------------------------------------------------- */

/* Inflates a whole gzip stream (trailer checked); NULL if it is not one. */
static char *gunzip(const char *p, size_t n, size_t *outlen)
{
	z_stream zs;
	size_t cap = 1 << 20;
	char *out = malloc(cap);
	int ret;

	memset(&zs, 0, sizeof(zs));
	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (Bytef *)p;
	zs.avail_in = (uInt)n;
	for (;;) {
		zs.next_out = (Bytef *)out + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		ret = inflate(&zs, Z_NO_FLUSH);
		if (ret == Z_STREAM_END)
			break;
		if (ret != Z_OK || zs.avail_out) {
			inflateEnd(&zs);
			free(out);
			return NULL;
		}
		cap *= 2;
		out = realloc(out, cap);
		assert_non_null(out);
	}
	*outlen = zs.total_out;
	/* nothing may follow the stream */
	if (zs.avail_in) {
		inflateEnd(&zs);
		free(out);
		return NULL;
	}
	inflateEnd(&zs);
	return out;
}

static bool is_gzip(const struct http_resp *r)
{
	return r->len > 18 && (unsigned char)r->body[0] == 0x1f &&
	       (unsigned char)r->body[1] == 0x8b;
}

static void check_gzip_equals_plain(const char *path, bool tail)
{
	struct http_resp z, p;
	size_t n, i;
	char *txt;

	for (i = 0; i < 2; i++) {	/* rendered, then from the cache */
		z = get(path, "Accept-Encoding: deflate, gzip;q=0.8");
		p = get(path, NULL);
		assert_true(is_gzip(&z));
		assert_false(is_gzip(&p));
		txt = gunzip(z.body, z.len, &n);
		assert_non_null(txt);
		if (!tail) {
			assert_int_equal(n, p.len);
			assert_memory_equal(txt, p.body, n);
		} else {
			/* identical up to the tail, whose 2xx count moved by one */
			const char *cut = "# HELP vgmem_rest_responses_total";
			char *tz = memmem(txt, n, cut, strlen(cut));
			char *tp = strstr(p.body, cut);

			assert_non_null(tz);
			assert_non_null(tp);
			assert_int_equal(tz - txt, tp - p.body);
			assert_memory_equal(txt, p.body, (size_t)(tz - txt));
			assert_true(txt[n - 1] == '\n');
			assert_non_null(memmem(tz, n - (size_t)(tz - txt),
					       "vgmem_rest_responses_total{class=\"5xx\"} ",
					       strlen("vgmem_rest_responses_total{class=\"5xx\"} ")));
		}
		free(txt);
		http_free(&z);
		http_free(&p);
	}
}

static void test_gzip(void **state)
{
	struct http_resp r;

	(void)state;
	check_gzip_equals_plain("/v1/vms", false);
	check_gzip_equals_plain("/v1/gpus", false);
	check_gzip_equals_plain("/metrics", true);
	/* refused or not offered: plain */
	r = get("/metrics", "Accept-Encoding: gzip;q=0, identity");
	assert_false(is_gzip(&r));
	http_free(&r);
	r = get("/v1/vms", "Accept-Encoding: br");
	assert_false(is_gzip(&r));
	http_free(&r);
	/* a change after a gzip answer: the next gzip answer has it */
	r = get("/v1/vms", "Accept-Encoding: gzip");
	http_free(&r);
	pthread_mutex_lock(&F.mg->lock);
	F.mg->vms[0].stats.faults = 99;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	r = get("/v1/vms", "Accept-Encoding: gzip");
	{
		size_t n;
		char *txt = gunzip(r.body, r.len, &n);

		assert_non_null(txt);
		assert_non_null(memmem(txt, n, "\"faults\":99", 11));
		free(txt);
	}
	http_free(&r);
}

static void test_accept_encoding(void **state)
{
	(void)state;
	assert_true(rc_accepts_gzip("gzip"));
	assert_true(rc_accepts_gzip("GZip"));
	assert_true(rc_accepts_gzip("x-gzip"));
	assert_true(rc_accepts_gzip("deflate, gzip;q=1.0, *;q=0.5"));
	assert_true(rc_accepts_gzip(" gzip ; q=0.001"));
	assert_true(rc_accepts_gzip("*"));
	assert_true(rc_accepts_gzip("identity;q=0, gzip"));
	assert_false(rc_accepts_gzip(NULL));
	assert_false(rc_accepts_gzip(""));
	assert_false(rc_accepts_gzip("identity"));
	assert_false(rc_accepts_gzip("gzipx, br"));
	assert_false(rc_accepts_gzip("gzip;q=0"));
	assert_false(rc_accepts_gzip("gzip;q=0.000"));
	assert_false(rc_accepts_gzip("*;q=0"));
	assert_false(rc_accepts_gzip("gzip;q=0, *"));	/* named beats * */
	assert_false(rc_accepts_gzip(",,;;"));
}

/* ---- readers racing a writer --------------------------------------------- */

#define RACE_READERS	3
#define RACE_READS	150
#define RACE_WRITES	300

static atomic_ullong committed;	/* faults of VM 0 the model has now */
static atomic_bool writer_done;

static void *race_writer(void *arg)
{
	unsigned long long k;

	(void)arg;
	for (k = 1; k <= RACE_WRITES; k++) {
		pthread_mutex_lock(&F.mg->lock);
		F.mg->vms[0].stats.faults = 1000000 + k;
		F.mg->vms[1].policy.weight = 100 + (uint32_t)(k % 50);
		fake_changed_locked(F.mg);
		pthread_mutex_unlock(&F.mg->lock);
		atomic_store(&committed, 1000000 + k);
		usleep(200);
	}
	atomic_store(&writer_done, true);
	return NULL;
}

struct reader {
	int idx;
	int stale;	/* answers older than the committed value */
	int bad;	/* transport errors, non-200, unparsable */
};

/* The value after needle in text, or 0. */
static unsigned long long value_after(const char *text, size_t n,
				      const char *needle)
{
	const char *p = memmem(text, n, needle, strlen(needle));

	return p ? strtoull(p + strlen(needle), NULL, 10) : 0;
}

static void *race_reader(void *arg)
{
	struct reader *rd = arg;
	int i;

	for (i = 0; i < RACE_READS; i++) {
		static const char *paths[] = { "/v1/vms", "/metrics" };
		const char *path = paths[(i + rd->idx) % 2];
		bool gz = (i / 2 + rd->idx) % 2;
		struct http_req q = { .unix_path = F.sock, .path = path,
				      .extra_header = gz ? "Accept-Encoding: gzip" : NULL };
		unsigned long long before = atomic_load(&committed), seen;
		struct http_resp r;
		char *txt = NULL;
		size_t n;

		if (http_do(&q, &r) || r.status != 200) {
			rd->bad++;
			http_free(&r);
			continue;
		}
		if (gz) {
			txt = gunzip(r.body, r.len, &n);
			if (!txt) {
				rd->bad++;
				http_free(&r);
				continue;
			}
		} else {
			n = r.len;
		}
		seen = value_after(txt ? txt : r.body, n,
				   path[1] == 'v' ? "\"faults\":" :
				   "vgmem_vm_faults_total{vm=\"00000000-0000-4000-8000-000000000001\",domain=\"web \\\"prod\\\"\\\\1\",domain_uuid=\"\",gpu=\"0\"} ");
		if (before && seen < before)
			rd->stale++;
		if (!seen && before)
			rd->bad++;
		free(txt);
		http_free(&r);
	}
	return NULL;
}

static void test_concurrent_reads_and_changes(void **state)
{
	struct reader rd[RACE_READERS];
	pthread_t w, t[RACE_READERS];
	int i;

	(void)state;
	atomic_store(&committed, 0);
	atomic_store(&writer_done, false);
	assert_int_equal(pthread_create(&w, NULL, race_writer, NULL), 0);
	for (i = 0; i < RACE_READERS; i++) {
		rd[i] = (struct reader){ .idx = i };
		assert_int_equal(pthread_create(&t[i], NULL, race_reader, &rd[i]), 0);
	}
	for (i = 0; i < RACE_READERS; i++)
		pthread_join(t[i], NULL);
	pthread_join(w, NULL);
	for (i = 0; i < RACE_READERS; i++) {
		assert_int_equal(rd[i].stale, 0);
		assert_int_equal(rd[i].bad, 0);
	}
	/* and after the writer: the final value, plain and gzip */
	{
		struct http_resp r = get("/v1/vms", NULL);

		assert_int_equal(vms_field(&r, 0, NULL, "faults"),
				 1000000 + RACE_WRITES);
		http_free(&r);
	}
	assert_true(atomic_load(&F.rest->cache.hits) > 0);
	assert_true(atomic_load(&F.rest->cache.misses) > 0);
}

/*
 * The cache keys on the model's view generation: an unchanged model costs
 * one generation check per request and serves the same body; a new
 * generation is a miss even when the bytes happen to be the same.
 */
static void test_keyed_on_generation(void **state)
{
	unsigned long long hits, misses;
	struct http_resp a, b;
	unsigned int checks;

	(void)state;
	a = get("/v1/vms", NULL);
	hits = atomic_load(&F.rest->cache.hits);
	misses = atomic_load(&F.rest->cache.misses);
	pthread_mutex_lock(&F.mg->lock);
	checks = F.mg->gen_checks;
	pthread_mutex_unlock(&F.mg->lock);
	b = get("/v1/vms", NULL);
	assert_int_equal(atomic_load(&F.rest->cache.hits), hits + 1);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses);
	pthread_mutex_lock(&F.mg->lock);
	assert_int_equal(F.mg->gen_checks, checks + 1);
	pthread_mutex_unlock(&F.mg->lock);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.body, b.body, a.len);
	http_free(&b);

	pthread_mutex_lock(&F.mg->lock);
	F.mg->gen++;	/* a change the model counted, same bytes */
	pthread_mutex_unlock(&F.mg->lock);
	b = get("/v1/vms", NULL);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses + 1);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.body, b.body, a.len);
	http_free(&a);
	http_free(&b);
}

/* The length of a /metrics body up to its per-request tail. */
static size_t metrics_cached_len(const char *body, size_t len)
{
	const char *cut = "# HELP vgmem_rest_responses_total";
	const char *t = memmem(body, len, cut, strlen(cut));

	assert_non_null(t);
	return (size_t)(t - body);
}

/*
 * /metrics' LRC families are part of the cached rendering: an unchanged
 * scrape is a cache hit with the same bytes up to the REST counters; a
 * changed counter (or an LRC read that starts or stops failing) makes the
 * next scrape a miss that shows it, gzip or not; the scrape after that is
 * a hit again.
 */
static void test_metrics_lrc_cached(void **state)
{
	unsigned long long hits, misses;
	struct http_resp a, b;
	size_t la, lb, n;
	char *txt;

	(void)state;
	a = get("/metrics", NULL);
	hits = atomic_load(&F.rest->cache.hits);
	misses = atomic_load(&F.rest->cache.misses);
	b = get("/metrics", NULL);
	assert_int_equal(atomic_load(&F.rest->cache.hits), hits + 1);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses);
	la = metrics_cached_len(a.body, a.len);
	lb = metrics_cached_len(b.body, b.len);
	assert_int_equal(la, lb);
	assert_memory_equal(a.body, b.body, la);
	/* the LRC families are in the cached part, before the REST counters */
	assert_non_null(memmem(a.body, la, "\nvgmem_lrc_faults_minor_total 7\n", 32));
	http_free(&b);

	/* a counter moves: the next scrape is rendered again and shows it */
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc.faults_minor = 8;
	pthread_mutex_unlock(&F.mg->lock);
	b = get("/metrics", NULL);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses + 1);
	lb = metrics_cached_len(b.body, b.len);
	assert_non_null(memmem(b.body, lb, "\nvgmem_lrc_faults_minor_total 8\n", 32));
	assert_null(memmem(b.body, lb, "\nvgmem_lrc_faults_minor_total 7\n", 32));
	/* nothing else in it changed */
	assert_int_equal(la, lb);
	http_free(&a);
	a = get("/metrics", NULL);
	assert_int_equal(atomic_load(&F.rest->cache.hits), hits + 2);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses + 1);
	assert_memory_equal(a.body, b.body, lb);
	http_free(&a);
	http_free(&b);

	/* gzip answers follow the same key */
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc.evictions = 5;
	pthread_mutex_unlock(&F.mg->lock);
	a = get("/metrics", "Accept-Encoding: gzip");
	assert_true(is_gzip(&a));
	txt = gunzip(a.body, a.len, &n);
	assert_non_null(txt);
	assert_non_null(memmem(txt, n, "\nvgmem_lrc_evictions_total 5\n", 29));
	free(txt);
	http_free(&a);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses + 2);

	/* a read that fails drops the families (a miss), and back (a miss) */
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc_err = -EIO;
	pthread_mutex_unlock(&F.mg->lock);
	a = get("/metrics", NULL);
	assert_null(strstr(a.body, "vgmem_lrc_"));
	assert_non_null(strstr(a.body, "vgmem_vm_running"));
	http_free(&a);
	a = get("/metrics", NULL);
	assert_null(strstr(a.body, "vgmem_lrc_"));
	http_free(&a);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses + 3);
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc_err = 0;
	F.mg->lrc.faults_minor = 7;
	F.mg->lrc.evictions = 0;
	pthread_mutex_unlock(&F.mg->lock);
	a = get("/metrics", NULL);
	assert_non_null(strstr(a.body, "\nvgmem_lrc_faults_minor_total 7\n"));
	http_free(&a);
	assert_int_equal(atomic_load(&F.rest->cache.misses), misses + 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_change_visible),
		cmocka_unit_test(test_stats_refresh_visible),
		cmocka_unit_test(test_vm_set_change_visible),
		cmocka_unit_test(test_gpu_and_status_change_visible),
		cmocka_unit_test(test_file_cache_change_visible),
		cmocka_unit_test(test_metrics_tail_per_request),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_accept_encoding),
		cmocka_unit_test(test_concurrent_reads_and_changes),
		cmocka_unit_test(test_keyed_on_generation),
		cmocka_unit_test(test_metrics_lrc_cached),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
