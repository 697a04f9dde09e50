/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * JSON of the REST API: encoders (hand-written into a struct rbuf, since
 * GET /v1/vms is the hot path) and strict request-body parsers (jansson):
 * objects only, unknown or duplicate fields rejected, types and ranges
 * checked, sizes as integers or strings with binary units ("8G").
 */
#ifndef VGMEM_MGMTD_REST_JSON_H
#define VGMEM_MGMTD_REST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "rest_buf.h"

#define REST_ERR_LEN	256

void rj_vm(struct rbuf *b, const struct mg_vm_info *vm, bool detail);
/*
 * A VM with its virtio-fs shares (id, tag, source, readonly): detail for
 * GET /v1/vms/{id} (histograms too), not for the list of GET /v1/vms.
 */
void rj_vm_shares(struct rbuf *b, const struct mg_vm_info *vm, bool detail,
		  const struct mg_share *shares, size_t n);
/* A domain not managed: name, domain_uuid, mdev, state, reason, since_ms. */
void rj_dom(struct rbuf *b, const struct mg_dom_info *d);
void rj_vm_detail(struct rbuf *b, const struct mg_vm_info *vm,
		  const struct mg_share *shares, size_t n);
void rj_gpu(struct rbuf *b, const struct mg_gpu_info *g, bool detail);
void rj_policy(struct rbuf *b, const struct mg_vm_policy *p);
void rj_knobs(struct rbuf *b, const struct mg_knobs *k);
/* detail is embedded as JSON if it parses as an object, else as a string. */
void rj_event(struct rbuf *b, const struct mg_event *ev);

/*
 * "8G", "8GiB", "512M", "1.5G", "4096", "4096B" -> bytes (binary units
 * K M G T P, optional "i"/"iB"/"B"); 0 or -EINVAL (also on overflow).
 */
int rj_parse_size(const char *s, uint64_t *out);

/* Why a body was refused: which HTTP status and the message. */
struct rj_error {
	unsigned int status;	/* 400 (syntax, type, unknown) or 422 (range) */
	char msg[REST_ERR_LEN];
};

/*
 * A policy body into p and mask. full (PUT): quota required, omitted
 * fields take defaults (min = 0, low = min, max = quota, weight 100,
 * priority 0) and mask = MG_POL_ALL; otherwise (PATCH) only the fields
 * present, at least one. (PUT: an omitted low is the given min.)
 * txt (may be NULL) gets the sizes as written, for messages. 0 or -EINVAL
 * with e filled.
 */
int rj_parse_policy(const char *body, size_t len, bool full,
		    struct mg_vm_policy *p, unsigned int *mask,
		    struct mg_pol_text *txt, struct rj_error *e);
/* A knobs body (PATCH): the fields present, at least one. */
int rj_parse_knobs(const char *body, size_t len, struct mg_knobs *k,
		   unsigned int *mask, struct rj_error *e);

#endif /* VGMEM_MGMTD_REST_JSON_H */
