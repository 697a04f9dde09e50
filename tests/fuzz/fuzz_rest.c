// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's REST request bodies (mgmtd/rest_json.c): byte 0 picks the
 * parser, the rest is the body: a policy as PUT sends it (full), as PATCH
 * sends it, a knobs PATCH, or a size string.
 *
 * Invariants: a refusal is -EINVAL with HTTP status 400 or 422 and a
 * message. PUT: mask is every field, and the policy round-trips through
 * the server's own encoder (rj_policy) and the parser. PATCH: mask is not
 * empty; the policy and the knobs round-trip the same way (the fields
 * outside the mask taken from a valid default).
 * A size round-trips as decimal bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mgmtd/rest_json.h"
#include "fuzz_util.h"

#define SENT64	0xa5a5a5a5a5a5a5a5ull

static void refusal(const char *what, int ret, const struct rj_error *e)
{
	if (ret != -EINVAL || (e->status != 400 && e->status != 422) ||
	    !memchr(e->msg, 0, sizeof(e->msg)) || !e->msg[0])
		fuzz_die("%s: refused with %d, status %u", what, ret, e->status);
}

static void policy_roundtrip(const struct mg_vm_policy *p)
{
	struct mg_vm_policy q;
	struct rj_error e = { 0 };
	unsigned int mask = 0;
	struct rbuf b;
	int ret;

	rbuf_init(&b, 256);
	rj_policy(&b, p);
	ret = rj_parse_policy(b.p, b.len, true, &q, &mask, NULL, &e);
	if (ret || mask != MG_POL_ALL || memcmp(p, &q, sizeof(q)))
		fuzz_die("policy %.*s does not round-trip (%d: %s)", (int)b.len,
			 b.p, ret, e.msg);
	rbuf_free(&b);
}

static void policy(const char *body, size_t len, bool full)
{
	struct mg_vm_policy p, d;
	struct rj_error e = { 0 };
	unsigned int mask = 0;
	int ret;

	ret = rj_parse_policy(body, len, full, &p, &mask, NULL, &e);
	if (ret) {
		refusal(full ? "PUT policy" : "PATCH policy", ret, &e);
		return;
	}
	if (full) {
		if (mask != MG_POL_ALL)
			fuzz_die("PUT policy: mask %#x", mask);
		policy_roundtrip(&p);
		return;
	}
	if (!mask || (mask & ~MG_POL_ALL))
		fuzz_die("PATCH policy: mask %#x", mask);
	/* A PATCH checks fields alone; the whole is judged by the model. */
	d = p;
	if (!(mask & MG_POL_QUOTA))
		d.quota = 0;
	if (!(mask & MG_POL_MIN))
		d.min = 0;
	if (!(mask & MG_POL_LOW))
		d.low = 0;
	if (!(mask & MG_POL_MAX))
		d.max = 0;
	if (!(mask & MG_POL_WEIGHT))
		d.weight = 100;
	if (!(mask & MG_POL_PRIORITY))
		d.priority = 0;
	{
		struct mg_vm_policy q;
		struct rj_error e2 = { 0 };
		unsigned int m2 = 0;
		struct rbuf b;

		rbuf_init(&b, 256);
		rj_policy(&b, &d);
		ret = rj_parse_policy(b.p, b.len, false, &q, &m2, NULL, &e2);
		if (ret || m2 != MG_POL_ALL || memcmp(&d, &q, sizeof(q)))
			fuzz_die("PATCH policy %.*s does not round-trip (%d: %s)",
				 (int)b.len, b.p, ret, e2.msg);
		rbuf_free(&b);
	}
}

static void knobs(const char *body, size_t len)
{
	struct mg_knobs k, q;
	struct rj_error e = { 0 };
	unsigned int mask = 0, m2 = 0;
	struct rbuf b;
	int ret;

	ret = rj_parse_knobs(body, len, &k, &mask, &e);
	if (ret) {
		refusal("PATCH knobs", ret, &e);
		return;
	}
	if (!mask || (mask & ~MG_KNOB_ALL))
		fuzz_die("knobs: mask %#x", mask);
	if (!(mask & MG_KNOB_POLICY)) {
		memset(k.policy, 0, sizeof(k.policy));
		strcpy(k.policy, "lra");
	}
	if (!(mask & MG_KNOB_RETURN_INTERVAL))
		k.return_interval_ms = 50;
	if (!(mask & MG_KNOB_OVERSUB))
		k.oversub_pct = 200;
	if (!(mask & MG_KNOB_THRASH_WINDOW))
		k.thrash_window_s = 60;
	rbuf_init(&b, 256);
	rj_knobs(&b, &k);
	memset(&q, 0, sizeof(q));
	ret = rj_parse_knobs(b.p, b.len, &q, &m2, &e);
	if (ret || m2 != MG_KNOB_ALL || strncmp(q.policy, k.policy, sizeof(q.policy)) ||
	    q.return_interval_ms != k.return_interval_ms ||
	    q.oversub_pct != k.oversub_pct || q.thrash_window_s != k.thrash_window_s)
		fuzz_die("knobs %.*s do not round-trip (%d: %s)", (int)b.len, b.p,
			 ret, e.msg);
	rbuf_free(&b);
}

static void size(const char *s)
{
	uint64_t v = SENT64, v2 = 0;
	char out[32];
	int ret;

	ret = rj_parse_size(s, &v);
	if (ret) {
		if (ret != -EINVAL || v != SENT64)
			fuzz_die("size '%s': %d, and the output written", s, ret);
		return;
	}
	snprintf(out, sizeof(out), "%llu", (unsigned long long)v);
	if (rj_parse_size(out, &v2) || v2 != v)
		fuzz_die("size '%s' = %llu does not round-trip", s,
			 (unsigned long long)v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *body;

	if (len < 1 || len > 16384)
		return -1;
	body = fuzz_cstr(data + 1, len - 1);
	switch (data[0] & 3) {
	case 0:
		policy(body, len - 1, true);
		break;
	case 1:
		policy(body, len - 1, false);
		break;
	case 2:
		knobs(body, len - 1);
		break;
	default:
		size(body);
		break;
	}
	free(body);
	return 0;
}
