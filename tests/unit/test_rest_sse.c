// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GET /v1/events as server-sent events over a fake model: framing, live
 * events, resume with Last-Event-ID (history then live, no gap, no
 * duplicate), a burst larger than a stream's queue, heartbeats, the
 * subscription released when the client leaves, and mg_rest_stop() ending
 * open streams.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include <cmocka.h>

#include "rest_fixture.h"
#include "mgmtd/sse.h"

#define VM1	"00000000-0000-4000-8000-000000000001"
#define WAIT_MS	15000	/* bound on every wait; a pass takes milliseconds */

static struct fix F;

struct stream {
	pthread_t thread;
	struct fix *f;
	char last_id[64];
	pthread_mutex_t lock;
	char *buf;
	size_t len;
	bool stop, done;
	long status;
	char ctype[128];
};

static size_t stream_write(char *p, size_t sz, size_t n, void *priv)
{
	struct stream *s = priv;
	char *nb;

	pthread_mutex_lock(&s->lock);
	nb = realloc(s->buf, s->len + sz * n + 1);
	if (nb) {
		memcpy(nb + s->len, p, sz * n);
		s->len += sz * n;
		nb[s->len] = '\0';
		s->buf = nb;
	}
	pthread_mutex_unlock(&s->lock);
	return nb ? sz * n : 0;
}

static int stream_progress(void *priv, curl_off_t a, curl_off_t b,
			   curl_off_t c, curl_off_t d)
{
	struct stream *s = priv;
	bool stop;

	(void)a; (void)b; (void)c; (void)d;
	pthread_mutex_lock(&s->lock);
	stop = s->stop;
	pthread_mutex_unlock(&s->lock);
	return stop;	/* non-zero aborts the transfer */
}

static void *stream_main(void *arg)
{
	struct stream *s = arg;
	struct curl_slist *h = NULL;
	char hdr[128];
	char *ct = NULL;
	CURL *c = curl_easy_init();

	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, s->f->sock);
	curl_easy_setopt(c, CURLOPT_URL, "http://localhost/v1/events");
	h = curl_slist_append(h, "Accept: text/event-stream");
	if (s->last_id[0]) {
		snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", s->last_id);
		h = curl_slist_append(h, hdr);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, stream_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)WAIT_MS * 2);
	curl_easy_perform(c);
	pthread_mutex_lock(&s->lock);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &s->status);
	if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
		snprintf(s->ctype, sizeof(s->ctype), "%s", ct);
	s->done = true;
	pthread_mutex_unlock(&s->lock);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return NULL;
}

static void stream_open(struct stream *s, struct fix *f, const char *last_id)
{
	memset(s, 0, sizeof(*s));
	s->f = f;
	if (last_id)
		snprintf(s->last_id, sizeof(s->last_id), "%s", last_id);
	pthread_mutex_init(&s->lock, NULL);
	assert_int_equal(pthread_create(&s->thread, NULL, stream_main, s), 0);
}

static void stream_close(struct stream *s)
{
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	free(s->buf);
	pthread_mutex_destroy(&s->lock);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Waits (bounded) until the stream's text contains needle. */
static bool stream_wait(struct stream *s, const char *needle)
{
	unsigned int t;

	for (t = 0; t < WAIT_MS; t += 2) {
		bool found, done;

		pthread_mutex_lock(&s->lock);
		found = s->buf && strstr(s->buf, needle);
		done = s->done;
		pthread_mutex_unlock(&s->lock);
		if (found)
			return true;
		if (done)
			return false;
		sleep_ms(2);
	}
	return false;
}

/* Whether the stream ended (the server closed it) within the bound. */
static bool stream_wait_done(struct stream *s)
{
	unsigned int t;

	for (t = 0; t < WAIT_MS; t += 2) {
		bool done;

		pthread_mutex_lock(&s->lock);
		done = s->done;
		pthread_mutex_unlock(&s->lock);
		if (done)
			return true;
		sleep_ms(2);
	}
	return false;
}

/* The ids of the stream's events, in order; checks each frame's form. */
static size_t stream_ids(struct stream *s, uint64_t *ids, size_t max)
{
	size_t n = 0;
	char *p;

	pthread_mutex_lock(&s->lock);
	for (p = s->buf; p && (p = strstr(p, "id: ")) && n < max;) {
		unsigned long long id;
		char type[32];
		char *data, *end;
		json_t *j;

		assert_true(p == s->buf || p[-1] == '\n');
		assert_int_equal(sscanf(p, "id: %llu\nevent: %31[a-z_-]\n", &id, type), 2);
		data = strstr(p, "\ndata: ");
		assert_non_null(data);
		data += 7;
		end = strstr(data, "\n\n");
		assert_non_null(end);
		j = json_loadb(data, (size_t)(end - data), 0, NULL);
		assert_non_null(j);
		assert_int_equal(json_integer_value(json_object_get(j, "id")), id);
		assert_string_equal(json_string_value(json_object_get(j, "type")), type);
		assert_true(json_is_object(json_object_get(j, "detail")));
		json_decref(j);
		ids[n++] = id;
		p = end;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

static int setup(void **state)
{
	(void)state;
	if (fix_group_start(&F, 2, 4096))
		return -1;
	mg_rest_set_heartbeat_ms(F.rest, 20);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fix_group_stop(&F);
}

static void test_live_events(void **state)
{
	struct stream s;
	uint64_t ids[8], a, b;
	char want[64];

	(void)state;
	fake_publish(F.mg, "pressure", "", "{\"before\":true}");	/* not sent */
	stream_open(&s, &F, NULL);
	assert_true(stream_wait(&s, ": vgmem events\n\n"));
	assert_int_equal(s.status, 0);
	a = fake_publish(F.mg, "relocation", VM1, "{\"chunks\":4}");
	b = fake_publish(F.mg, "advisory", VM1, "{\"reason\":\"thrashing\"}");
	snprintf(want, sizeof(want), "id: %llu\n", (unsigned long long)b);
	assert_true(stream_wait(&s, want));
	assert_int_equal(stream_ids(&s, ids, 8), 2);
	assert_int_equal(ids[0], a);
	assert_int_equal(ids[1], b);
	assert_true(strstr(s.buf, "retry: ") == s.buf);
	assert_non_null(strstr(s.buf, "event: advisory\ndata: {\"id\":"));
	stream_close(&s);
}

static void test_heartbeat(void **state)
{
	struct stream s;

	(void)state;
	stream_open(&s, &F, NULL);
	assert_true(stream_wait(&s, ": keepalive\n\n"));
	stream_close(&s);
}

static void test_resume_with_last_event_id(void **state)
{
	uint64_t first, ids[16], live;
	struct stream s;
	char last[32], want[64];
	size_t n, i;

	(void)state;
	first = fake_publish(F.mg, "policy", VM1, "{\"n\":1}");
	fake_publish(F.mg, "policy", VM1, "{\"n\":2}");
	fake_publish(F.mg, "policy", VM1, "{\"n\":3}");
	snprintf(last, sizeof(last), "%llu", (unsigned long long)first);
	stream_open(&s, &F, last);
	snprintf(want, sizeof(want), "id: %llu\n", (unsigned long long)first + 2);
	assert_true(stream_wait(&s, want));
	live = fake_publish(F.mg, "fault", VM1, "{\"n\":4}");
	snprintf(want, sizeof(want), "id: %llu\n", (unsigned long long)live);
	assert_true(stream_wait(&s, want));
	n = stream_ids(&s, ids, 16);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++)
		assert_int_equal(ids[i], first + 1 + i);
	stream_close(&s);
}

/* More events than a stream's queue at once: none lost, none doubled. */
static void test_burst_beyond_queue(void **state)
{
	const size_t N = SSE_QUEUE * 3 + 17;
	uint64_t *ids = calloc(N + 8, sizeof(*ids));
	uint64_t first = 0, last = 0;
	struct stream s;
	char want[64];
	size_t i, n;

	(void)state;
	stream_open(&s, &F, NULL);
	assert_true(stream_wait(&s, ": vgmem events\n\n"));
	for (i = 0; i < N; i++) {
		last = fake_publish(F.mg, "relocation", VM1, "{\"burst\":true}");
		if (!i)
			first = last;
	}
	snprintf(want, sizeof(want), "id: %llu\n", (unsigned long long)last);
	assert_true(stream_wait(&s, want));
	n = stream_ids(&s, ids, N + 8);
	assert_int_equal(n, N);
	for (i = 0; i < n; i++)
		assert_int_equal(ids[i], first + i);
	stream_close(&s);
	free(ids);
}

static void test_client_leaves(void **state)
{
	struct stream s;
	unsigned int t;

	(void)state;
	/* Streams the earlier tests closed go at their next heartbeat. */
	for (t = 0; t < WAIT_MS && fake_nsubs(F.mg); t += 5)
		sleep_ms(5);
	assert_int_equal(fake_nsubs(F.mg), 0);
	stream_open(&s, &F, NULL);
	assert_true(stream_wait(&s, ": vgmem events\n\n"));
	assert_int_equal(fake_nsubs(F.mg), 1);
	stream_close(&s);
	/* noticed at the next heartbeat write at the latest */
	for (t = 0; t < WAIT_MS && fake_nsubs(F.mg); t += 5)
		sleep_ms(5);
	assert_int_equal(fake_nsubs(F.mg), 0);
}

static void test_bad_last_event_id(void **state)
{
	struct http_req q = { .unix_path = F.sock, .path = "/v1/events",
			      .extra_header = "Last-Event-ID: 12abc" };
	struct http_resp r;

	(void)state;
	assert_int_equal(http_do(&q, &r), 0);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.ctype, "application/problem+json");
	http_free(&r);
}

static void test_stop_ends_streams(void **state)
{
	struct stream s1, s2;
	struct fix f2;

	(void)state;
	assert_int_equal(fix_start(&f2, 1, 4096), 0);
	stream_open(&s1, &f2, NULL);
	stream_open(&s2, &f2, "0");
	assert_true(stream_wait(&s1, ": vgmem events\n\n"));
	assert_true(stream_wait(&s2, ": vgmem events\n\n"));
	fix_stop(&f2);	/* must not hang on the parked connections */
	/* each stream's reader sees its end in its own time */
	assert_true(stream_wait_done(&s1));
	assert_true(stream_wait_done(&s2));
	assert_false(stream_wait(&s1, "never sent"));
	assert_string_equal(s1.ctype, "text/event-stream; charset=utf-8");
	assert_int_equal(s1.status, 200);
	stream_close(&s1);
	stream_close(&s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_events),
		cmocka_unit_test(test_heartbeat),
		cmocka_unit_test(test_resume_with_last_event_id),
		cmocka_unit_test(test_burst_beyond_queue),
		cmocka_unit_test(test_client_leaves),
		cmocka_unit_test(test_bad_last_event_id),
		cmocka_unit_test(test_stop_ends_streams),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
