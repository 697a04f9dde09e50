// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd REST API over a fake model: every route, problem details for each
 * error class, hostile bodies (malformed, oversized, wrong types, unknown
 * fields), unknown VMs, impossible quotas, tokens on TCP, peer credentials
 * on the unix socket; every refused write leaves the model unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "rest_fixture.h"
#include "mgmtd/openapi.h"
#include "mgmtd/rest_json.h"

#define NVMS	4
#define VM1	"00000000-0000-4000-8000-000000000001"
#define VM2	"00000000-0000-4000-8000-000000000002"

FIX_GROUP(NVMS, 4096)

/* Checks an RFC 9457 problem: media type, members, status mirrored. */
static void assert_problem(struct http_resp *r, long status, const char *slug)
{
	json_t *j;
	char want[96];

	assert_int_equal(r->status, status);
	assert_string_equal(r->ctype, "application/problem+json");
	j = http_json(r);
	assert_non_null(j);
	snprintf(want, sizeof(want), "urn:vgmem:problem:%s", slug);
	assert_string_equal(json_string_value(json_object_get(j, "type")), want);
	assert_non_null(json_string_value(json_object_get(j, "title")));
	assert_int_equal(json_integer_value(json_object_get(j, "status")), status);
	assert_true(strlen(json_string_value(json_object_get(j, "detail"))) > 0);
	assert_non_null(json_string_value(json_object_get(j, "instance")));
	json_decref(j);
}

static struct mg_vm_policy policy_of(const char *id)
{
	struct mg_vm_info v;

	assert_int_equal(mg_get_vm(F.mg, id, &v), 0);
	return v.policy;
}

/* The "by" of the newest event: who the REST layer said asked. */
static void assert_last_by(const char *want_prefix)
{
	char detail[MG_EVENT_DETAIL_LEN], *b;

	pthread_mutex_lock(&F.mg->lock);
	assert_true(F.mg->nevents > 0);
	memcpy(detail, F.mg->events[F.mg->nevents - 1].detail, sizeof(detail));
	pthread_mutex_unlock(&F.mg->lock);
	b = strstr(detail, "\"by\":\"");
	assert_non_null(b);
	b += strlen("\"by\":\"");
	if (strncmp(b, want_prefix, strlen(want_prefix)))
		fail_msg("event %s: by is not %s...", detail, want_prefix);
	b += strlen(want_prefix);
	assert_true(*b == '"' || *b == ' ');	/* "uid 1" is not "uid 10" */
}

static void test_healthz(void **state)
{
	struct http_resp r = fix_req(&F, "GET", "/healthz", NULL);
	json_t *j;

	(void)state;
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "application/json");
	j = http_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "ok");
	assert_string_equal(json_string_value(json_object_get(j, "backend")), "embedded");
	assert_int_equal(json_integer_value(json_object_get(j, "vms")), NVMS);
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "HEAD", "/healthz", NULL);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 0);
	http_free(&r);
}

static void test_gpus(void **state)
{
	struct http_resp r = fix_req(&F, "GET", "/v1/gpus", NULL);
	json_t *j, *g;

	(void)state;
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	g = json_object_get(j, "gpus");
	assert_int_equal(json_array_size(g), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 1), "index")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 0), "vram_size")),
			 16 * FAKE_GIB);
	/* the file cache's VRAM, next to the BOs' (the model's values) */
	assert_true(json_is_integer(json_object_get(json_array_get(g, 0), "vram_used")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 0), "cache_used")),
			 3 << 20);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 1), "cache_used")),
			 4 << 20);
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "GET", "/v1/gpus/1", NULL);
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "sim1");
	assert_int_equal(json_integer_value(json_object_get(j, "cache_used")), 4 << 20);
	assert_int_equal(json_array_size(json_object_get(j, "suspension_histogram_log2_us")),
			 VGMEM_HIST_BUCKETS);
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "GET", "/v1/gpus/2", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/gpus/-1", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/gpus/99999999999999999999999", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
}

static void test_vms(void **state)
{
	struct http_resp r = fix_req(&F, "GET", "/v1/vms", NULL);
	json_t *j, *v, *vm0;
	size_t i;

	(void)state;
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_non_null(j);
	v = json_object_get(j, "vms");
	assert_int_equal(json_array_size(v), NVMS);
	vm0 = json_array_get(v, 0);
	assert_string_equal(json_string_value(json_object_get(vm0, "id")), VM1);
	/* quotes and backslashes in a domain name come back intact */
	assert_string_equal(json_string_value(json_object_get(vm0, "name")),
			    "web \"prod\"\\1");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(vm0, "policy"), "quota")),
			 4 * FAKE_GIB);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(vm0, "suspension"), "count")), 4);
	/* the file cache's private replicas, in usage, apart from resident */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(vm0, "usage"),
							    "cache_private")), 1 << 16);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(vm0, "usage"),
							    "resident")), FAKE_GIB);
	/* state says what running and lost say */
	for (i = 0; i < json_array_size(v); i++) {
		json_t *x = json_array_get(v, i);
		const char *st = json_string_value(json_object_get(x, "state"));

		assert_non_null(st);
		assert_string_equal(st, json_is_true(json_object_get(x, "lost")) ? "lost" :
				    json_is_true(json_object_get(x, "running")) ? "running" :
				    "stopped");
	}
	assert_int_equal(json_array_size(json_object_get(j, "unmanaged")), 0);
	json_decref(j);
	http_free(&r);

	/* the domains not managed, after the VMs, with why */
	pthread_mutex_lock(&F.mg->lock);
	memset(&F.mg->doms[0], 0, sizeof(F.mg->doms[0]));
	snprintf(F.mg->doms[0].uuid, sizeof(F.mg->doms[0].uuid),
		 "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
	snprintf(F.mg->doms[0].name, sizeof(F.mg->doms[0].name), "plain \"x\"");
	F.mg->doms[0].state = MG_DOM_UNMANAGED;
	snprintf(F.mg->doms[0].reason, sizeof(F.mg->doms[0].reason),
		 "it names vgmem vGPU x but has no <vgmem:gpu> metadata");
	F.mg->doms[0].since_ms = 1714000000000;
	F.mg->doms[1] = F.mg->doms[0];
	F.mg->doms[1].state = MG_DOM_REJECTED;
	snprintf(F.mg->doms[1].mdev, sizeof(F.mg->doms[1].mdev), "%s", VM1);
	F.mg->ndoms = 2;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	r = fix_req(&F, "GET", "/v1/vms", NULL);
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_int_equal(json_array_size(json_object_get(j, "vms")), NVMS);
	v = json_object_get(j, "unmanaged");
	assert_int_equal(json_array_size(v), 2);
	vm0 = json_array_get(v, 0);
	assert_string_equal(json_string_value(json_object_get(vm0, "name")), "plain \"x\"");
	assert_string_equal(json_string_value(json_object_get(vm0, "domain_uuid")),
			    "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
	assert_string_equal(json_string_value(json_object_get(vm0, "state")), "unmanaged");
	assert_string_equal(json_string_value(json_object_get(vm0, "mdev")), "");
	assert_non_null(strstr(json_string_value(json_object_get(vm0, "reason")),
			       "no <vgmem:gpu> metadata"));
	assert_int_equal(json_integer_value(json_object_get(vm0, "since_ms")), 1714000000000);
	assert_string_equal(json_string_value(json_object_get(json_array_get(v, 1), "state")),
			    "rejected");
	assert_string_equal(json_string_value(json_object_get(json_array_get(v, 1), "mdev")), VM1);
	json_decref(j);
	http_free(&r);
	pthread_mutex_lock(&F.mg->lock);
	F.mg->ndoms = 0;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);

	/* by id and by name */
	r = fix_req(&F, "GET", "/v1/vms/" VM2, NULL);
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "vm2");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "usage"),
							    "cache_private")), 2 << 16);
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "suspension"),
							 "histogram_log2_us")),
			 VGMEM_HIST_BUCKETS);
	json_decref(j);
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/vms/vm3", NULL);
	assert_int_equal(r.status, 200);
	http_free(&r);

	r = fix_req(&F, "GET", "/v1/vms/00000000-0000-4000-8000-0000000000ff", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/vms/%01", NULL);	/* control character */
	assert_problem(&r, 404, "not-found");
	http_free(&r);
}

static void test_policy_get_put_patch_delete(void **state)
{
	struct mg_vm_policy p;
	struct http_resp r;
	json_t *j;

	(void)state;
	r = fix_req(&F, "GET", "/v1/vms/" VM2 "/policy", NULL);
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "policy"), "weight")), 100);
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "PUT", "/v1/vms/" VM2 "/policy",
		    "{\"quota\":\"8G\",\"min\":\"1G\",\"low\":\"1.5G\",\"max\":6442450944,\"weight\":300,\"priority\":2}");
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_true(json_is_true(json_object_get(j, "operator_policy")));
	json_decref(j);
	http_free(&r);
	p = policy_of(VM2);
	assert_int_equal(p.quota, 8 * FAKE_GIB);
	assert_int_equal(p.min, FAKE_GIB);
	assert_int_equal(p.low, FAKE_GIB + FAKE_GIB / 2);
	assert_int_equal(p.max, 6 * FAKE_GIB);
	assert_int_equal(p.weight, 300);
	assert_int_equal(p.priority, 2);

	/* PATCH changes only what it names; by domain name too */
	r = fix_req(&F, "PATCH", "/v1/vms/vm2/policy", "{\"weight\":50}");
	assert_int_equal(r.status, 200);
	http_free(&r);
	/* on the unix socket, the peer's uid as the kernel tells it */
	{
		char uid[32];

		snprintf(uid, sizeof(uid), "uid %u", (unsigned int)getuid());
		assert_last_by(uid);
	}
	p = policy_of(VM2);
	assert_int_equal(p.weight, 50);
	assert_int_equal(p.quota, 8 * FAKE_GIB);

	/* PUT with only a quota: the rest back to defaults */
	r = fix_req(&F, "PUT", "/v1/vms/" VM2 "/policy", "{\"quota\":\"2GiB\"}");
	assert_int_equal(r.status, 200);
	http_free(&r);
	p = policy_of(VM2);
	assert_int_equal(p.quota, 2 * FAKE_GIB);
	assert_int_equal(p.max, 2 * FAKE_GIB);
	assert_int_equal(p.weight, 100);
	assert_int_equal(p.min, 0);

	r = fix_req(&F, "DELETE", "/v1/vms/" VM2 "/policy", NULL);
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_true(json_is_false(json_object_get(j, "operator_policy")));
	json_decref(j);
	http_free(&r);

	/* merge-patch media type is accepted for PATCH */
	{
		struct http_req q = { .unix_path = F.sock, .method = "PATCH",
				      .path = "/v1/vms/" VM2 "/policy",
				      .body = "{\"priority\":1}",
				      .ctype = "application/merge-patch+json" };

		assert_int_equal(http_do(&q, &r), 0);
		assert_int_equal(r.status, 200);
		http_free(&r);
	}
	assert_int_equal(policy_of(VM2).priority, 1);
}

struct bad_case {
	const char *method, *path, *body, *ctype;
	long status;
	const char *slug;
};

/* Every hostile write: the right problem, and nothing changed. */
static void test_policy_hostile(void **state)
{
	static char big[8192];
	const struct bad_case cases[] = {
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "[1,2]", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"8G\",\"quota\":\"9G\"}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":true}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":1.5}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"8X\"}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"-8G\"}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"99999999999P\"}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":-1}", NULL, 422, "invalid-value" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"8G\",\"colour\":1}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"weight\":5}", NULL, 422, "invalid-value" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"8G\",\"weight\":\"heavy\"}", NULL, 400, "bad-request" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"8G\",\"weight\":4294967296}", NULL, 422, "invalid-value" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"8G\",\"weight\":0}", NULL, 422, "invalid-value" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"8G\",\"min\":\"4G\",\"max\":\"2G\"}", NULL, 422, "invalid-value" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"quota\":\"100G\"}", NULL, 409, "admission-refused" },
		{ "PATCH", "/v1/vms/" VM1 "/policy", "{}", NULL, 422, "invalid-value" },
		{ "PATCH", "/v1/vms/" VM1 "/policy", "{\"priority\":null}", NULL, 400, "bad-request" },
		{ "PATCH", "/v1/vms/" VM1 "/policy", "{\"priority\":9}", NULL, 422, "invalid-value" },
		{ "PATCH", "/v1/vms/" VM1 "/policy", "{\"weight\":1}", "text/plain", 415, "unsupported-media-type" },
		{ "PUT", "/v1/vms/" VM1 "/policy", "{\"weight\":1}", "application/merge-patch+json", 415, "unsupported-media-type" },
		{ "PUT", "/v1/vms/nosuchvm/policy", "{\"quota\":\"1G\"}", NULL, 404, "not-found" },
		{ "DELETE", "/v1/vms/nosuchvm/policy", NULL, NULL, 404, "not-found" },
		{ "PUT", "/v1/vms/" VM1 "/policy", big, NULL, 413, "too-large" },
		{ "PATCH", "/v1/policy", "{\"policy\":\"fifo\"}", NULL, 422, "invalid-value" },
		{ "PATCH", "/v1/policy", "{\"policy\":7}", NULL, 400, "bad-request" },
		{ "PATCH", "/v1/policy", "{\"oversub_pct\":0}", NULL, 422, "invalid-value" },
		{ "PATCH", "/v1/policy", "{\"speed\":1}", NULL, 400, "bad-request" },
		{ "PATCH", "/v1/policy", "not json", NULL, 400, "bad-request" },
	};
	struct mg_vm_policy before = policy_of(VM1);
	struct mg_knobs kb, ka;
	unsigned int sets = F.mg->policy_sets;
	size_t i;

	(void)state;
	memset(big, ' ', sizeof(big) - 1);
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	mg_get_knobs(F.mg, &kb);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *bc = &cases[i];
		struct http_req q = { .unix_path = F.sock, .method = bc->method,
				      .path = bc->path, .body = bc->body,
				      .ctype = bc->ctype };
		struct http_resp r;

		if (bc->body && !bc->body[0])
			q.body_len = 0;
		assert_int_equal(http_do(&q, &r), 0);
		if (r.status != bc->status)
			fprintf(stderr, "case %zu: %s %s %.60s -> %ld %s\n", i,
				bc->method, bc->path, bc->body ? bc->body : "",
				r.status, r.body);
		assert_problem(&r, bc->status, bc->slug);
		http_free(&r);
	}
	{
		struct mg_vm_policy after = policy_of(VM1);

		assert_memory_equal(&before, &after, sizeof(before));
	}
	assert_int_equal(F.mg->policy_sets, sets);
	mg_get_knobs(F.mg, &ka);
	assert_memory_equal(&kb, &ka, sizeof(kb));
}

static void test_knobs(void **state)
{
	struct http_resp r = fix_req(&F, "GET", "/v1/policy", NULL);
	struct mg_knobs k;
	json_t *j;

	(void)state;
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "policy")), "cold");
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "PATCH", "/v1/policy",
		    "{\"policy\":\"lra\",\"return_interval_ms\":250,\"thrash_window_s\":30}");
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "policy")), "lra");
	assert_int_equal(json_integer_value(json_object_get(j, "return_interval_ms")), 250);
	json_decref(j);
	http_free(&r);
	mg_get_knobs(F.mg, &k);
	assert_string_equal(k.policy, "lra");
	assert_int_equal(k.thrash_window_s, 30);
	assert_int_equal(k.oversub_pct, 200);
}

/*
 * POST /v1/admission: a question that changes nothing; a refusal is an
 * answer (200, admitted false, why), a policy no VM may have a 422.
 */
static void test_admission(void **state)
{
	struct mg_vm_policy before = policy_of(VM1);
	struct http_resp r;
	json_t *j;

	(void)state;
	r = fix_req(&F, "POST", "/v1/admission", "{\"quota\":\"1M\",\"weight\":200}");
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_true(json_is_true(json_object_get(j, "admitted")));
	assert_true(json_integer_value(json_object_get(j, "gpu")) >= 0);
	assert_true(json_integer_value(json_object_get(j, "entitlement")) > 0);
	assert_string_equal(json_string_value(json_object_get(j, "code")), "ok");
	assert_true(json_integer_value(json_object_get(j, "quotas")) <=
		    json_integer_value(json_object_get(j, "quota_limit")));
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "POST", "/v1/admission?gpu=0", "{\"quota\":\"1P\"}");
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_false(json_is_true(json_object_get(j, "admitted")));
	assert_int_equal(json_integer_value(json_object_get(j, "gpu")), 0);
	assert_string_equal(json_string_value(json_object_get(j, "code")), "quota-limit");
	assert_true(strlen(json_string_value(json_object_get(j, "reason"))) > 0);
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "POST", "/v1/admission?gpu=99", "{\"quota\":\"1M\"}");
	assert_problem(&r, 404, "not-found");
	http_free(&r);
	r = fix_req(&F, "POST", "/v1/admission?gpu=x1", "{\"quota\":\"1M\"}");
	assert_problem(&r, 400, "bad-request");
	http_free(&r);
	r = fix_req(&F, "POST", "/v1/admission", "{\"weight\":5}");
	assert_problem(&r, 422, "invalid-value");
	http_free(&r);
	r = fix_req(&F, "POST", "/v1/admission", "{\"quota\":\"1M\",\"min\":\"2M\"}");
	assert_problem(&r, 422, "invalid-value");
	http_free(&r);
	r = fix_req(&F, "POST", "/v1/admission", "{\"quota\":\"1M\",\"gpu\":0}");
	assert_problem(&r, 400, "bad-request");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/admission", NULL);
	assert_problem(&r, 405, "method-not-allowed");
	http_free(&r);
	{
		struct mg_vm_policy after = policy_of(VM1);

		assert_memory_equal(&before, &after, sizeof(before));
	}
}

/* GET /v1/lrc: every counter of the model's answer, and gpus. */
static void test_lrc(void **state)
{
	static const char *const names[] = {
#define LRC_NAME(f, attr, kind, ...)	#f,
		VGMEM_LRC_STATS(LRC_NAME)
#undef LRC_NAME
	};
	struct http_resp r = fix_req(&F, "GET", "/v1/lrc", NULL);
	json_t *j, *v;
	size_t i;

	(void)state;
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_true(json_is_object(j));
	assert_int_equal(json_object_size(j), 1 + sizeof(names) / sizeof(names[0]));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		v = json_object_get(j, names[i]);
		if (!v)
			fprintf(stderr, "missing member %s\n", names[i]);
		assert_true(json_is_integer(v));
	}
	assert_int_equal(json_integer_value(json_object_get(j, "gpus")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "faults_minor")), 7);
	assert_int_equal(json_integer_value(json_object_get(j, "vram_used")),
			 3 * FAKE_GIB);
	assert_int_equal(json_integer_value(json_object_get(j, "bytes_per_page")), 48);
	assert_int_equal(json_integer_value(json_object_get(j, "merges")), 0);
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "POST", "/v1/lrc", "{}");
	assert_problem(&r, 405, "method-not-allowed");
	http_free(&r);

	/* the backend failing is a problem, not zeros */
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc_err = -EIO;
	pthread_mutex_unlock(&F.mg->lock);
	r = fix_req(&F, "GET", "/v1/lrc", NULL);
	assert_problem(&r, 500, "internal");
	http_free(&r);
	pthread_mutex_lock(&F.mg->lock);
	F.mg->lrc_err = 0;
	pthread_mutex_unlock(&F.mg->lock);
}

static void test_methods_and_paths(void **state)
{
	struct http_resp r;

	(void)state;
	r = fix_req(&F, "POST", "/v1/vms", "{}");
	assert_problem(&r, 405, "method-not-allowed");
	assert_string_equal(r.allow, "GET, HEAD");
	http_free(&r);
	r = fix_req(&F, "PUT", "/v1/policy", "{}");
	assert_problem(&r, 405, "method-not-allowed");
	assert_string_equal(r.allow, "GET, HEAD, PATCH");
	http_free(&r);
	r = fix_req(&F, "DELETE", "/metrics", NULL);
	assert_problem(&r, 405, "method-not-allowed");
	http_free(&r);

	r = fix_req(&F, "GET", "/v2/vms", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/vms/", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1//vms", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/vms/" VM1 "/policy/x/y", NULL);
	assert_problem(&r, 404, "not-found");
	http_free(&r);
}

static void test_tcp_token(void **state)
{
	struct http_req q = { .port = F.port, .method = "GET", .path = "/v1/vms" };
	struct http_resp r;

	(void)state;
	assert_true(F.port > 0);
	assert_int_equal(http_do(&q, &r), 0);
	assert_problem(&r, 401, "unauthenticated");
	assert_true(strstr(r.www_auth, "Bearer") != NULL);
	http_free(&r);

	/* even health needs the token on TCP */
	q.path = "/healthz";
	assert_int_equal(http_do(&q, &r), 0);
	assert_problem(&r, 401, "unauthenticated");
	http_free(&r);

	q.token = FIX_TOKEN "x";
	assert_int_equal(http_do(&q, &r), 0);
	assert_problem(&r, 403, "forbidden");
	http_free(&r);
	q.token = "s3cret";	/* a prefix */
	assert_int_equal(http_do(&q, &r), 0);
	assert_problem(&r, 403, "forbidden");
	http_free(&r);
	q.token = NULL;
	q.extra_header = "Authorization: Basic Zm9vOmJhcg==";
	assert_int_equal(http_do(&q, &r), 0);
	assert_problem(&r, 401, "unauthenticated");
	http_free(&r);

	q.extra_header = NULL;
	q.token = FIX_TOKEN;
	assert_int_equal(http_do(&q, &r), 0);
	assert_int_equal(r.status, 200);
	http_free(&r);

	/* a write without a token changes nothing; with it, it works */
	q.method = "PATCH";
	q.path = "/v1/vms/" VM1 "/policy";
	q.body = "{\"weight\":77}";
	q.token = NULL;
	assert_int_equal(http_do(&q, &r), 0);
	assert_problem(&r, 401, "unauthenticated");
	http_free(&r);
	assert_int_not_equal(policy_of(VM1).weight, 77);
	q.token = FIX_TOKEN;
	assert_int_equal(http_do(&q, &r), 0);
	assert_int_equal(r.status, 200);
	http_free(&r);
	assert_int_equal(policy_of(VM1).weight, 77);
	/* TCP has one token, which has no name */
	assert_last_by("token");
}

/*
 * A token file of named tokens: each token works, and the events a write
 * causes name the token it presented ("token NAME").
 */
static void test_named_tokens(void **state)
{
	struct http_req q = { .method = "PATCH", .path = "/v1/vms/" VM1 "/policy" };
	struct http_resp r;
	struct fix g;
	char detail[MG_EVENT_DETAIL_LEN];

	(void)state;
	fix_tokens = "# who may write\nci " FIX_TOKEN "-ci\nnova-host1 " FIX_TOKEN "-nova\n";
	assert_int_equal(fix_start(&g, 2, 4096), 0);
	fix_tokens = NULL;
	q.port = g.port;
	q.body = "{\"weight\":61}";
	q.token = FIX_TOKEN;	/* the other server's: not one of these */
	assert_int_equal(http_do(&q, &r), 0);
	assert_problem(&r, 403, "forbidden");
	http_free(&r);
	q.token = FIX_TOKEN "-nova";
	assert_int_equal(http_do(&q, &r), 0);
	assert_int_equal(r.status, 200);
	http_free(&r);
	pthread_mutex_lock(&g.mg->lock);
	assert_true(g.mg->nevents > 0);
	memcpy(detail, g.mg->events[g.mg->nevents - 1].detail, sizeof(detail));
	pthread_mutex_unlock(&g.mg->lock);
	assert_non_null(strstr(detail, "\"by\":\"token nova-host1\""));
	q.token = FIX_TOKEN "-ci";
	q.body = "{\"weight\":62}";
	assert_int_equal(http_do(&q, &r), 0);
	assert_int_equal(r.status, 200);
	http_free(&r);
	pthread_mutex_lock(&g.mg->lock);
	memcpy(detail, g.mg->events[g.mg->nevents - 1].detail, sizeof(detail));
	pthread_mutex_unlock(&g.mg->lock);
	assert_non_null(strstr(detail, "\"by\":\"token ci\""));
	fix_stop(&g);

	/* a malformed token file: the server does not start, saying why */
	fix_tokens = "ci " FIX_TOKEN "\nci " FIX_TOKEN "-2\n";
	assert_int_not_equal(fix_start(&g, 1, 4096), 0);
	fix_tokens = NULL;
	fake_destroy(g.mg);
	unlink(g.tokfile);
	rmdir(g.dir);
}

static void test_token_compare(void **state)
{
	(void)state;
	assert_true(rest_token_equal("abc", 3, "abc", 3));
	assert_false(rest_token_equal("abd", 3, "abc", 3));
	assert_false(rest_token_equal("ab", 2, "abc", 3));
	assert_false(rest_token_equal("abcd", 4, "abc", 3));
	assert_false(rest_token_equal("", 0, "abc", 3));
	assert_false(rest_token_equal("", 0, "", 0));
}

/*
 * A peer that is neither root, mgmtd's user nor in the socket's group may
 * read but not write, even if the socket was made world-accessible.
 */
static void test_unix_peer_credentials(void **state)
{
	unsigned int sets = F.mg->policy_sets;
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(chmod(F.sock, 0666), 0);
	assert_int_equal(chmod(F.dir, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct http_resp r;
		int code = 0;

		if (setgid(65534) || setuid(65534))
			_exit(90);
		r = fix_req(&F, "GET", "/v1/vms", NULL);
		if (r.status != 200)
			code |= 1;
		http_free(&r);
		r = fix_req(&F, "PATCH", "/v1/vms/" VM1 "/policy", "{\"weight\":5}");
		if (r.status != 403 || !strstr(r.body, "urn:vgmem:problem:forbidden"))
			code |= 2;
		http_free(&r);
		r = fix_req(&F, "PATCH", "/v1/policy", "{\"policy\":\"random\"}");
		if (r.status != 403)
			code |= 4;
		http_free(&r);
		_exit(code);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	chmod(F.sock, 0660);
	chmod(F.dir, 0700);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(F.mg->policy_sets, sets);
}

static void test_event_history(void **state)
{
	struct http_resp r;
	uint64_t first;
	json_t *j, *evs;
	char path[64];

	(void)state;
	first = fake_publish(F.mg, "pressure", VM1, "{\"gpu\":0,\"level\":\"high\"}");
	fake_publish(F.mg, "fault", VM2, "not json \"at all\"\n");
	snprintf(path, sizeof(path), "/v1/events?since=%llu",
		 (unsigned long long)(first - 1));
	r = fix_req(&F, "GET", path, NULL);
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_non_null(j);
	evs = json_object_get(j, "events");
	assert_int_equal(json_array_size(evs), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 0), "type")),
			    "pressure");
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(json_array_get(evs, 0), "detail"), "level")), "high");
	/* a detail that is not JSON is carried as text, never raw */
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(json_array_get(evs, 1), "detail"), "text")),
		"not json \"at all\"\n");
	assert_int_equal(json_integer_value(json_object_get(j, "last_id")), first + 1);
	json_decref(j);
	http_free(&r);

	snprintf(path, sizeof(path), "/v1/events?since=%llu&limit=1",
		 (unsigned long long)(first - 1));
	r = fix_req(&F, "GET", path, NULL);
	j = http_json(&r);
	assert_int_equal(json_array_size(json_object_get(j, "events")), 1);
	assert_true(json_is_true(json_object_get(j, "more")));
	json_decref(j);
	http_free(&r);

	r = fix_req(&F, "GET", "/v1/events?since=abc", NULL);
	assert_problem(&r, 400, "bad-request");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/events?since=1&limit=0", NULL);
	assert_problem(&r, 400, "bad-request");
	http_free(&r);
	r = fix_req(&F, "GET", "/v1/events?since=1&limit=100000", NULL);
	assert_problem(&r, 400, "bad-request");
	http_free(&r);
}

/* Every route the server answers is in the OpenAPI document. */
/* A schema, or the one its "$ref" (#/components/schemas/X) names. */
static json_t *schema_deref(json_t *schemas, json_t *sch)
{
	const char *ref = json_string_value(json_object_get(sch, "$ref"));
	const char *pfx = "#/components/schemas/";

	if (ref && !strncmp(ref, pfx, strlen(pfx)))
		return json_object_get(schemas, ref + strlen(pfx));
	return sch;
}

/*
 * Every member of a served object (and of its objects, where the schema
 * describes their members) is a property of its schema in openapi.json.
 */
static void assert_described(json_t *schemas, json_t *sch, json_t *obj,
			     const char *where)
{
	json_t *props, *val, *p;
	const char *key;

	sch = schema_deref(schemas, sch);
	assert_non_null(sch);
	props = json_object_get(sch, "properties");
	assert_non_null(props);
	json_object_foreach(obj, key, val) {
		p = schema_deref(schemas, json_object_get(props, key));
		if (!p)
			fail_msg("%s.%s is served but not in openapi.json", where, key);
		if (json_is_object(val) && json_object_get(p, "properties")) {
			char sub[128];

			snprintf(sub, sizeof(sub), "%s.%s", where, key);
			assert_described(schemas, p, val, sub);
		}
	}
}

static void test_openapi(void **state)
{
	static const struct { const char *path, *methods[5]; } routes[] = {
		{ "/healthz", { "get" } },
		{ "/metrics", { "get" } },
		{ "/v1/openapi.json", { "get" } },
		{ "/v1/gpus", { "get" } },
		{ "/v1/gpus/{index}", { "get" } },
		{ "/v1/vms", { "get" } },
		{ "/v1/vms/{id}", { "get" } },
		{ "/v1/vms/{id}/policy", { "get", "put", "patch", "delete" } },
		{ "/v1/policy", { "get", "patch" } },
		{ "/v1/admission", { "post" } },
		{ "/v1/events", { "get" } },
		{ "/v1/lrc", { "get" } },
	};
	struct http_resp r = fix_req(&F, "GET", "/v1/openapi.json", NULL);
	size_t i, m, len;
	json_t *j, *paths, *served;

	(void)state;
	assert_int_equal(r.status, 200);
	j = http_json(&r);
	assert_non_null(j);
	assert_int_equal(strncmp(json_string_value(json_object_get(j, "openapi")), "3.0.", 4), 0);
	assert_int_equal(r.len, (mg_openapi_text(&len), len));
	paths = json_object_get(j, "paths");
	assert_int_equal(json_object_size(paths),
			 sizeof(routes) / sizeof(routes[0]));
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		json_t *p = json_object_get(paths, routes[i].path);

		if (!p)
			fprintf(stderr, "missing path %s\n", routes[i].path);
		assert_non_null(p);
		for (m = 0; m < 5 && routes[i].methods[m]; m++) {
			json_t *op = json_object_get(p, routes[i].methods[m]);

			if (!op)
				fprintf(stderr, "missing %s %s\n",
					routes[i].methods[m], routes[i].path);
			assert_non_null(op);
			assert_non_null(json_object_get(op, "responses"));
			assert_non_null(json_object_get(op, "operationId"));
		}
	}
	/* and the served paths really answer (not 404) */
	served = json_object_get(j, "components");
	assert_non_null(json_object_get(json_object_get(served, "schemas"), "Problem"));
	/* every member a GPU and a VM are served with is described */
	{
		json_t *schemas = json_object_get(served, "schemas");
		struct http_resp g = fix_req(&F, "GET", "/v1/gpus/0", NULL);
		struct http_resp v = fix_req(&F, "GET", "/v1/vms", NULL);
		json_t *gj = http_json(&g), *vj = http_json(&v);

		assert_non_null(gj);
		assert_non_null(vj);
		assert_described(schemas, json_object_get(schemas, "Gpu"), gj, "Gpu");
		{
			struct http_resp a = fix_req(&F, "POST", "/v1/admission",
						     "{\"quota\":\"1M\"}");
			json_t *aj = http_json(&a);

			assert_non_null(aj);
			assert_described(schemas, json_object_get(schemas, "Admission"),
					 aj, "Admission");
			json_decref(aj);
			http_free(&a);
		}
		assert_described(schemas, json_object_get(schemas, "Vm"),
				 json_array_get(json_object_get(vj, "vms"), 0), "Vm");
		{
			struct mg_dom_info d = { .uuid = "u", .name = "n",
						 .state = MG_DOM_REJECTED,
						 .reason = "r" };
			struct rbuf b;
			json_t *dj;
			char *text;

			rbuf_init(&b, 256);
			rj_dom(&b, &d);
			text = rbuf_take(&b, NULL);
			dj = json_loads(text, 0, NULL);
			assert_non_null(dj);
			assert_described(schemas, json_object_get(schemas, "Domain"),
					 dj, "Domain");
			json_decref(dj);
			free(text);
		}
		json_decref(gj);
		json_decref(vj);
		http_free(&g);
		http_free(&v);
	}
	json_decref(j);
	http_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthz),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_vms),
		cmocka_unit_test(test_policy_get_put_patch_delete),
		cmocka_unit_test(test_policy_hostile),
		cmocka_unit_test(test_knobs),
		cmocka_unit_test(test_admission),
		cmocka_unit_test(test_lrc),
		cmocka_unit_test(test_methods_and_paths),
		cmocka_unit_test(test_tcp_token),
		cmocka_unit_test(test_token_compare),
		cmocka_unit_test(test_named_tokens),
		cmocka_unit_test(test_unix_peer_credentials),
		cmocka_unit_test(test_event_history),
		cmocka_unit_test(test_openapi),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
