// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The routes of the REST API (docs/rest.md, mgmtd/openapi.json). Each
 * handler reads or changes the model through mg_* and answers JSON or a
 * problem; the order of checks is: path (404), method (405), authority
 * for writes (403), media type (415), body (400/422), model (404/409/422).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metrics.h"
#include "openapi.h"
#include "rest.h"
#include "rest_json.h"
#include "sse.h"

#define JSON_CT	"application/json"

/* Methods a route answers, for 405 and its Allow header. */
enum { M_GET = 1, M_PUT = 2, M_PATCH = 4, M_DELETE = 8, M_POST = 16 };

static unsigned int method_bit(const char *m)
{
	if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
		return M_GET;
	if (!strcmp(m, "PUT"))
		return M_PUT;
	if (!strcmp(m, "PATCH"))
		return M_PATCH;
	if (!strcmp(m, "DELETE"))
		return M_DELETE;
	if (!strcmp(m, "POST"))
		return M_POST;
	return 0;
}

static bool method_ok(struct rest_ctx *c, unsigned int allowed,
		      const char *allow_hdr)
{
	if (method_bit(c->method) & allowed)
		return true;
	rest_problem(c, 405, "method-not-allowed", NULL,
		     "%s is not supported here; allowed: %s", c->method,
		     allow_hdr);
	c->out.allow = allow_hdr;
	return false;
}

static bool write_ok(struct rest_ctx *c)
{
	if (c->may_write)
		return true;
	rest_problem(c, 403, "forbidden", NULL,
		     "changes need root, mgmtd's user or the socket's group");
	return false;
}

/* application/json (parameters allowed), and for PATCH merge-patch too. */
static bool json_body_ok(struct rest_ctx *c)
{
	const char *ct = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_TYPE);
	size_t n;

	if (ct) {
		n = strcspn(ct, "; \t");
		if ((n == 16 && !strncasecmp(ct, "application/json", n)) ||
		    (n == 28 && !strcmp(c->method, "PATCH") &&
		     !strncasecmp(ct, "application/merge-patch+json", n)))
			return true;
	}
	rest_problem(c, 415, "unsupported-media-type", NULL,
		     "send the body as application/json (got %s)",
		     ct ? ct : "no Content-Type");
	return false;
}

/* Strict decimal u64; false on anything else. */
static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

/* ---- daemon ------------------------------------------------------------ */

static void route_healthz(struct rest_ctx *c)
{
	struct mg_status st;
	struct rbuf b;
	int ret;

	if (!method_ok(c, M_GET, "GET, HEAD"))
		return;
	ret = mg_get_status(c->rest->mg, &st);
	if (ret) {
		rest_problem(c, 503, "unhealthy", NULL,
			     "the model does not answer: %s", strerror(-ret));
		return;
	}
	rbuf_init(&b, 512);
	rbuf_puts(&b, "{\"status\":\"ok\",\"version\":");
	rbuf_json_str(&b, st.version);
	rbuf_puts(&b, ",\"backend\":");
	rbuf_json_str(&b, st.backend);
	rbuf_puts(&b, ",\"libvirt_uri\":");
	rbuf_json_str(&b, st.libvirt_uri);
	rbuf_puts(&b, ",\"libvirt_connected\":");
	rbuf_puts(&b, st.libvirt_connected ? "true" : "false");
	rbuf_puts(&b, ",\"started_ms\":");
	rbuf_i64(&b, st.started_ms);
	rbuf_puts(&b, ",\"last_event_id\":");
	rbuf_u64(&b, st.last_event_id);
	rbuf_puts(&b, ",\"gpus\":");
	rbuf_u64(&b, st.nr_gpus);
	rbuf_puts(&b, ",\"vms\":");
	rbuf_u64(&b, st.nr_vms);
	rbuf_putc(&b, '}');
	rest_reply(c, 200, JSON_CT, &b);
}

/* ---- cached reads (rest_cache.h) ------------------------------------------ */

/*
 * {"vms":[...],"unmanaged":[...]} (histograms omitted, as in the list),
 * each VM with its shares: a guest names a share by its tag, and
 * operators read both sides here; then the libvirt domains not managed
 * and why (domains.c). Setting a table or noting a domain bumps the
 * view's generation, so a cached list never shows an old one. A VM gone
 * since the listing has no shares; -ENOMEM fails the answer rather than
 * showing a VM without its shares.
 */
static int render_vms(struct mg *mg, struct rbuf *b,
		      const struct mg_vm_info *vms, size_t n)
{
	struct mg_dom_info *doms;
	struct mg_share *sh;
	size_t i, nsh, ndoms;
	int ret;

	ret = mg_list_doms(mg, &doms, &ndoms);
	if (ret)
		return ret;
	rbuf_puts(b, "{\"vms\":[");
	for (i = 0; i < n; i++) {
		ret = mg_get_vm_shares(mg, vms[i].id, &sh, &nsh);
		if (ret == -ENOMEM) {
			free(doms);
			return ret;
		}
		if (ret)
			nsh = 0;
		if (i)
			rbuf_putc(b, ',');
		rj_vm_shares(b, &vms[i], false, sh, nsh);
		free(sh);
	}
	rbuf_puts(b, "],\"unmanaged\":[");
	for (i = 0; i < ndoms; i++) {
		if (i)
			rbuf_putc(b, ',');
		rj_dom(b, &doms[i]);
	}
	rbuf_puts(b, "]}");
	free(doms);
	return 0;
}

static void render_gpus(struct rbuf *b, const struct mg_gpu_info *gpus,
			size_t n)
{
	size_t i;

	rbuf_puts(b, "{\"gpus\":[");
	for (i = 0; i < n; i++) {
		if (i)
			rbuf_putc(b, ',');
		rj_gpu(b, &gpus[i], false);
	}
	rbuf_puts(b, "]}");
}

/*
 * The answer of slot id: the cached one if the model still lists what it
 * was rendered from, else a fresh rendering, published for the next
 * requests. Each body's key is only what its text shows. NULL with the
 * problem in c->out.
 */
static struct rc_body *cached_answer(struct rest_ctx *c, enum rc_slot_id id)
{
	struct mg_rest *r = c->rest;
	struct mg_gpu_info *gpus = NULL;
	struct mg_vm_info *vms = NULL;
	size_t ngpus = 0, nvms = 0, len;
	struct mg_status st;
	struct mg_lrc lrc;
	uint64_t gen = 0, lrc_gen = 0;
	int lrc_err = 0;
	struct rc_body *b;
	struct rbuf t;
	char *text;
	int ret;

	b = rc_lookup(&r->cache, r->mg, id);
	if (b)
		return b;
	if (id == RC_METRICS) {
		/*
		 * The LRC counters with their generation: a backend that
		 * cannot read the cache (an older vgmem.ko) costs its
		 * families, not the scrape.
		 */
		lrc_err = rc_lrc_read(&r->cache, r->mg, &lrc, &lrc_gen);
		ret = mg_get_status(r->mg, &st);
		if (ret) {
			rest_problem_errno(c, ret, "metrics", NULL);
			return NULL;
		}
	}
	ret = mg_list_view(r->mg, &gpus, &ngpus, &vms, &nvms, &gen);
	if (ret) {
		rest_problem_errno(c, ret, id == RC_GPUS ? "GPU list" :
				   id == RC_VMS ? "VM list" : "metrics", NULL);
		return NULL;
	}
	switch (id) {
	case RC_VMS:
		rbuf_init(&t, 1024 * (nvms + 1));
		ret = render_vms(r->mg, &t, vms, nvms);
		if (ret) {
			rbuf_free(&t);
			free(gpus);
			free(vms);
			rest_problem_errno(c, ret, "VM list", NULL);
			return NULL;
		}
		break;
	case RC_GPUS:
		rbuf_init(&t, 1024 * (ngpus + 1));
		render_gpus(&t, gpus, ngpus);
		break;
	default:
		rbuf_init(&t, 64 * 1024);
		mg_metrics_format(&t, &st, gpus, ngpus, vms, nvms);
		if (!lrc_err)
			mg_metrics_format_lrc(&t, &lrc);
		break;
	}
	free(gpus);
	free(vms);
	text = rbuf_take(&t, &len);
	b = rc_body_new(text, len, id == RC_METRICS,
			id == RC_METRICS ? &st : NULL, gen);
	if (!b) {
		rest_problem(c, 500, "internal", NULL, "out of memory");
		return NULL;
	}
	if (id == RC_METRICS) {
		b->has_lrc = true;
		b->lrc_gen = lrc_gen;
	}
	rc_store(&r->cache, id, b);
	return b;
}

static void route_metrics(struct rest_ctx *c)
{
	struct rc_body *body;
	struct rbuf b;
	unsigned int i;

	if (!method_ok(c, M_GET, "GET, HEAD"))
		return;
	body = cached_answer(c, RC_METRICS);
	if (!body)
		return;
	/* The server's own counters are from before this answer: per request. */
	rbuf_init(&b, 512);
	rbuf_puts(&b, "# HELP vgmem_rest_responses_total REST responses sent, by status class.\n"
		  "# TYPE vgmem_rest_responses_total counter\n");
	for (i = 1; i <= 5; i++) {
		rbuf_puts(&b, "vgmem_rest_responses_total{class=\"");
		rbuf_u64(&b, i);
		rbuf_puts(&b, "xx\"} ");
		rbuf_u64(&b, atomic_load(&c->rest->answered[i]));
		rbuf_putc(&b, '\n');
	}
	if (b.oom) {
		rbuf_free(&b);
		rc_body_put(body);
		rest_problem(c, 500, "internal", NULL, "out of memory");
		return;
	}
	rest_reply_cached(c, body, MG_METRICS_CONTENT_TYPE, b.p, b.len);
	rbuf_free(&b);
}

/* {"gpus":N,"faults_minor":N,...}: the LRC file cache, never cached. */
static void route_lrc(struct rest_ctx *c)
{
	struct mg_lrc lrc;
	struct rbuf b;
	int ret;

	if (!method_ok(c, M_GET, "GET, HEAD"))
		return;
	ret = mg_get_lrc(c->rest->mg, &lrc);
	if (ret) {
		rest_problem_errno(c, ret, "LRC counters", NULL);
		return;
	}
	rbuf_init(&b, 1024);
	rbuf_puts(&b, "{\"gpus\":");
	rbuf_u64(&b, lrc.gpus);
#define LRC_MEMBER(f, attr, kind, ...)		\
	rbuf_puts(&b, ",\"" #f "\":");	\
	rbuf_u64(&b, lrc.f);
	VGMEM_LRC_STATS(LRC_MEMBER)
#undef LRC_MEMBER
	rbuf_putc(&b, '}');
	rest_reply(c, 200, JSON_CT, &b);
}

static void route_openapi(struct rest_ctx *c)
{
	const char *doc;
	size_t len;
	struct rbuf b;

	if (!method_ok(c, M_GET, "GET, HEAD"))
		return;
	doc = mg_openapi_text(&len);
	rbuf_init(&b, len + 1);
	rbuf_put(&b, doc, len);
	rest_reply(c, 200, JSON_CT, &b);
}

/* ---- GPUs and VMs ------------------------------------------------------- */

static void route_gpus(struct rest_ctx *c, const char *index)
{
	struct mg_gpu_info *gpus = NULL;
	struct rc_body *body;
	size_t n = 0, i;
	uint64_t want = 0;
	struct rbuf b;
	int ret;

	if (!method_ok(c, M_GET, "GET, HEAD"))
		return;
	if (!index) {
		body = cached_answer(c, RC_GPUS);
		if (body)
			rest_reply_cached(c, body, JSON_CT, NULL, 0);
		return;
	}
	if (!parse_u64(index, &want) || want > INT32_MAX) {
		rest_problem(c, 404, "not-found", NULL,
			     "GPU \"%.40s\" not found: GPUs are numbered from 0",
			     index);
		return;
	}
	ret = mg_list_gpus(c->rest->mg, &gpus, &n);
	if (ret) {
		rest_problem_errno(c, ret, "GPU list", NULL);
		return;
	}
	for (i = 0; i < n && gpus[i].index != (int)want; i++)
		;
	if (i == n) {
		free(gpus);
		rest_problem(c, 404, "not-found", NULL,
			     "GPU %" PRIu64 " not found (%zu GPUs)", want, n);
		return;
	}
	rbuf_init(&b, 4096);
	rj_gpu(&b, &gpus[i], true);
	free(gpus);
	rest_reply(c, 200, JSON_CT, &b);
}

static void route_vms(struct rest_ctx *c)
{
	struct rc_body *body;

	if (!method_ok(c, M_GET, "GET, HEAD"))
		return;
	body = cached_answer(c, RC_VMS);
	if (body)
		rest_reply_cached(c, body, JSON_CT, NULL, 0);
}

/* A VM id or name from the path: bounded, no control characters. */
static bool vm_ref_ok(struct rest_ctx *c, const char *id)
{
	size_t n = strlen(id), i;

	for (i = 0; i < n; i++)
		if ((unsigned char)id[i] < 0x20)
			break;
	if (n && n < MG_NAME_LEN && i == n)
		return true;
	rest_problem(c, 404, "not-found", NULL,
		     "no VM has that id or name");
	return false;
}

static void vm_errno(struct rest_ctx *c, int err, const char *id,
		     const char *why)
{
	char what[MG_NAME_LEN + 16];

	snprintf(what, sizeof(what), "VM \"%s\"", id);
	rest_problem_errno(c, err, what, why);
}

static void route_vm(struct rest_ctx *c, const char *id)
{
	struct mg_share *shares = NULL;
	struct mg_vm_info vm;
	size_t nr_shares = 0;
	struct rbuf b;
	int ret;

	if (!method_ok(c, M_GET, "GET, HEAD") || !vm_ref_ok(c, id))
		return;
	ret = mg_get_vm(c->rest->mg, id, &vm);
	if (!ret)
		ret = mg_get_vm_shares(c->rest->mg, vm.id, &shares, &nr_shares);
	if (ret) {
		vm_errno(c, ret, id, NULL);
		return;
	}
	rbuf_init(&b, 2048);
	rj_vm_detail(&b, &vm, shares, nr_shares);
	free(shares);
	rest_reply(c, 200, JSON_CT, &b);
}

static void reply_policy(struct rest_ctx *c, const char *id, unsigned int status)
{
	struct mg_vm_info vm;
	struct rbuf b;
	int ret;

	ret = mg_get_vm(c->rest->mg, id, &vm);
	if (ret) {
		vm_errno(c, ret, id, NULL);
		return;
	}
	rbuf_init(&b, 512);
	rbuf_puts(&b, "{\"id\":");
	rbuf_json_str(&b, vm.id);
	rbuf_puts(&b, ",\"name\":");
	rbuf_json_str(&b, vm.name);
	rbuf_puts(&b, ",\"policy\":");
	rj_policy(&b, &vm.policy);
	rbuf_puts(&b, ",\"operator_policy\":");
	rbuf_puts(&b, vm.operator_policy ? "true" : "false");
	rbuf_puts(&b, ",\"entitlement\":");
	rbuf_u64(&b, vm.entitlement);
	rbuf_puts(&b, ",\"guaranteed\":");
	rbuf_u64(&b, vm.guaranteed);
	rbuf_putc(&b, '}');
	rest_reply(c, status, JSON_CT, &b);
}

static void route_vm_policy(struct rest_ctx *c, const char *id)
{
	const char *allow = "GET, HEAD, PUT, PATCH, DELETE";
	struct mg_vm_info vm;
	struct mg_vm_policy p;
	struct mg_pol_text txt;
	struct rj_error e;
	char why[MG_WHY_LEN] = "";
	unsigned int mask;
	bool put;
	int ret;

	if (!method_ok(c, M_GET | M_PUT | M_PATCH | M_DELETE, allow) ||
	    !vm_ref_ok(c, id))
		return;
	if (method_bit(c->method) == M_GET) {
		reply_policy(c, id, 200);
		return;
	}
	if (!write_ok(c))
		return;
	/* Unknown VMs are 404 whatever the body says. */
	ret = mg_get_vm(c->rest->mg, id, &vm);
	if (ret) {
		vm_errno(c, ret, id, NULL);
		return;
	}
	if (method_bit(c->method) == M_DELETE) {
		ret = mg_reset_vm_policy(c->rest->mg, vm.id, why, sizeof(why));
		if (ret)
			vm_errno(c, ret, id, why);
		else
			reply_policy(c, vm.id, 200);
		return;
	}
	if (!json_body_ok(c))
		return;
	put = method_bit(c->method) == M_PUT;
	if (rj_parse_policy(c->body, c->body_len, put, &p, &mask, &txt, &e)) {
		rest_problem(c, e.status,
			     e.status == 400 ? "bad-request" : "invalid-value",
			     e.status == 400 ? "Bad request body" : "Invalid value",
			     "%s", e.msg);
		return;
	}
	ret = mg_set_vm_policy_text(c->rest->mg, vm.id, &p, mask, &txt, why,
				    sizeof(why));
	if (ret) {
		vm_errno(c, ret, id, why);
		return;
	}
	reply_policy(c, vm.id, 200);
}

/* ---- dry-run admission ---------------------------------------------------- */

/*
 * POST /v1/admission[?gpu=N] with a policy as PUT takes it: would a VM of
 * it be admitted now, where, and with what entitlement? A question, so
 * reading is enough (no write permission) and a refusal is a 200 whose
 * "admitted" is false; a policy no VM may have is a 422.
 */
static void route_admission(struct rest_ctx *c)
{
	const char *q = MHD_lookup_connection_value(c->conn,
						    MHD_GET_ARGUMENT_KIND, "gpu");
	char why[MG_WHY_LEN] = "";
	struct mg_admission a;
	struct mg_vm_policy p;
	struct rj_error e;
	unsigned int mask;
	struct rbuf b;
	long gpu = -1;
	char *end;
	int ret;

	if (!method_ok(c, M_POST, "POST") || !json_body_ok(c))
		return;
	if (q) {
		errno = 0;
		gpu = strtol(q, &end, 10);
		if (!*q || *end || errno || gpu < 0 || gpu > INT32_MAX) {
			rest_problem(c, 400, "bad-request", "Bad request",
				     "gpu=%.32s: not a GPU index", q);
			return;
		}
	}
	if (rj_parse_policy(c->body, c->body_len, false, &p, &mask, NULL, &e)) {
		rest_problem(c, e.status,
			     e.status == 400 ? "bad-request" : "invalid-value",
			     e.status == 400 ? "Bad request body" : "Invalid value",
			     "%s", e.msg);
		return;
	}
	if (!(mask & MG_POL_QUOTA)) {
		rest_problem(c, 422, "invalid-value", "Invalid value",
			     "the body needs \"quota\": the VM's size");
		return;
	}
	/* As a PUT fills what it does not name. */
	if (!(mask & MG_POL_MAX))
		p.max = p.quota;
	if (!(mask & MG_POL_LOW))
		p.low = p.min;
	ret = mg_admission_query(c->rest->mg, (int)gpu, &p, &a, why, sizeof(why));
	if (ret == -ENOENT) {
		rest_problem(c, 404, "not-found", NULL, "%s", why);
		return;
	}
	if (ret == -EINVAL) {
		rest_problem(c, 422, "invalid-value", "Invalid value", "%s", why);
		return;
	}
	if (ret) {
		rest_problem_errno(c, ret, "admission", why);
		return;
	}
	rbuf_init(&b, 256);
	rbuf_puts(&b, "{\"admitted\":");
	rbuf_puts(&b, a.admitted ? "true" : "false");
	rbuf_puts(&b, ",\"gpu\":");
	rbuf_printf(&b, "%d", a.gpu);
	rbuf_puts(&b, ",\"entitlement\":");
	rbuf_u64(&b, a.entitlement);
	rbuf_puts(&b, ",\"guaranteed\":");
	rbuf_u64(&b, a.guaranteed);
	rbuf_puts(&b, ",\"quotas\":");
	rbuf_u64(&b, a.quotas);
	rbuf_puts(&b, ",\"quota_limit\":");
	rbuf_u64(&b, a.quota_limit);
	rbuf_puts(&b, ",\"vms\":");
	rbuf_u64(&b, a.vms);
	rbuf_puts(&b, ",\"code\":");
	rbuf_json_str(&b, a.code);
	rbuf_puts(&b, ",\"reason\":");
	rbuf_json_str(&b, a.reason);
	rbuf_putc(&b, '}');
	rest_reply(c, 200, JSON_CT, &b);
}

/* ---- global knobs ------------------------------------------------------- */

static void reply_knobs(struct rest_ctx *c)
{
	struct mg_knobs k;
	struct rbuf b;
	int ret;

	ret = mg_get_knobs(c->rest->mg, &k);
	if (ret) {
		rest_problem_errno(c, ret, "knobs", NULL);
		return;
	}
	rbuf_init(&b, 256);
	rj_knobs(&b, &k);
	rest_reply(c, 200, JSON_CT, &b);
}

static void route_knobs(struct rest_ctx *c)
{
	struct mg_knobs k;
	struct rj_error e;
	char why[MG_WHY_LEN] = "";
	unsigned int mask;
	int ret;

	if (!method_ok(c, M_GET | M_PATCH, "GET, HEAD, PATCH"))
		return;
	if (method_bit(c->method) == M_GET) {
		reply_knobs(c);
		return;
	}
	if (!write_ok(c) || !json_body_ok(c))
		return;
	if (rj_parse_knobs(c->body, c->body_len, &k, &mask, &e)) {
		rest_problem(c, e.status,
			     e.status == 400 ? "bad-request" : "invalid-value",
			     e.status == 400 ? "Bad request body" : "Invalid value",
			     "%s", e.msg);
		return;
	}
	ret = mg_set_knobs(c->rest->mg, &k, mask, why, sizeof(why));
	if (ret) {
		rest_problem_errno(c, ret, "knobs", why);
		return;
	}
	reply_knobs(c);
}

/* ---- events --------------------------------------------------------------- */

static void route_events_history(struct rest_ctx *c, const char *since_s)
{
	const char *limit_s = MHD_lookup_connection_value(c->conn,
							  MHD_GET_ARGUMENT_KIND,
							  "limit");
	struct mg_event *evs = NULL;
	uint64_t since, limit = 100;
	size_t n = 0, i;
	struct rbuf b;
	int ret;

	if (!parse_u64(since_s, &since)) {
		rest_problem(c, 400, "bad-request", NULL,
			     "\"since\" must be an event id (a decimal integer)");
		return;
	}
	if (limit_s && (!parse_u64(limit_s, &limit) || !limit ||
			limit > REST_EVENTS_PAGE)) {
		rest_problem(c, 400, "bad-request", NULL,
			     "\"limit\" must be 1..%d", REST_EVENTS_PAGE);
		return;
	}
	ret = mg_events_since(c->rest->mg, since, (size_t)limit, &evs, &n);
	if (ret) {
		rest_problem_errno(c, ret, "events", NULL);
		return;
	}
	rbuf_init(&b, 512 * (n + 1));
	rbuf_puts(&b, "{\"events\":[");
	for (i = 0; i < n; i++) {
		if (i)
			rbuf_putc(&b, ',');
		rj_event(&b, &evs[i]);
	}
	rbuf_puts(&b, "],\"last_id\":");
	rbuf_u64(&b, n ? evs[n - 1].id : since);
	rbuf_puts(&b, ",\"more\":");
	rbuf_puts(&b, n == limit ? "true" : "false");
	rbuf_putc(&b, '}');
	free(evs);
	rest_reply(c, 200, JSON_CT, &b);
}

static void route_events(struct rest_ctx *c)
{
	const char *since = MHD_lookup_connection_value(c->conn,
							MHD_GET_ARGUMENT_KIND,
							"since");
	const char *last = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND,
						       "Last-Event-ID");
	struct MHD_Response *resp;
	uint64_t after = 0;
	int err;

	if (!method_ok(c, M_GET, "GET, HEAD"))
		return;
	if (since) {
		route_events_history(c, since);
		return;
	}
	if (last && *last && !parse_u64(last, &after)) {
		rest_problem(c, 400, "bad-request", NULL,
			     "Last-Event-ID must be an event id (a decimal integer)");
		return;
	}
	resp = sse_open(c->rest->sse, c->conn, last && *last, after, &err);
	if (!resp) {
		if (err == -EBUSY)
			rest_problem(c, 503, "busy", NULL,
				     "too many event streams are open (%d)",
				     SSE_MAX_STREAMS);
		else
			rest_problem_errno(c, err, "event stream", NULL);
		return;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/event-stream; charset=utf-8");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	c->out.status = 200;
	c->out.raw = resp;
}

/* ---- dispatch ------------------------------------------------------------- */

void rest_dispatch(struct rest_ctx *c)
{
	char path[512];
	char *seg[5];
	int n = 0;
	char *p, *save = NULL, *tok;

	if (strlen(c->url) >= sizeof(path)) {
		rest_problem(c, 404, "not-found", NULL, "no such resource");
		return;
	}
	strcpy(path, c->url);
	/* "/v1/vms/x/policy": no empty segments, at most five */
	if (path[0] != '/' || (path[1] && path[strlen(path) - 1] == '/') ||
	    strstr(path, "//"))
		n = -1;
	for (p = path; n >= 0 && (tok = strtok_r(p, "/", &save)); p = NULL) {
		if (n == 5) {
			n = -1;
			break;
		}
		seg[n++] = tok;
	}

	if (n == 1 && !strcmp(seg[0], "healthz"))
		route_healthz(c);
	else if (n == 1 && !strcmp(seg[0], "metrics"))
		route_metrics(c);
	else if (n >= 2 && !strcmp(seg[0], "v1")) {
		if (n == 2 && !strcmp(seg[1], "openapi.json"))
			route_openapi(c);
		else if (n == 2 && !strcmp(seg[1], "gpus"))
			route_gpus(c, NULL);
		else if (n == 3 && !strcmp(seg[1], "gpus"))
			route_gpus(c, seg[2]);
		else if (n == 2 && !strcmp(seg[1], "vms"))
			route_vms(c);
		else if (n == 3 && !strcmp(seg[1], "vms"))
			route_vm(c, seg[2]);
		else if (n == 4 && !strcmp(seg[1], "vms") &&
			 !strcmp(seg[3], "policy"))
			route_vm_policy(c, seg[2]);
		else if (n == 2 && !strcmp(seg[1], "policy"))
			route_knobs(c);
		else if (n == 2 && !strcmp(seg[1], "admission"))
			route_admission(c);
		else if (n == 2 && !strcmp(seg[1], "events"))
			route_events(c);
		else if (n == 2 && !strcmp(seg[1], "lrc"))
			route_lrc(c);
		else
			goto not_found;
	} else {
		goto not_found;
	}
	return;
not_found:
	rest_problem(c, 404, "not-found", NULL,
		     "no such resource (see /v1/openapi.json)");
}
