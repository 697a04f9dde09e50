/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A small libcurl client for the REST tests, header-only (see
 * mg_model_fake.h for why): one request, the status, content type,
 * selected headers and the body, over the unix socket or TCP.
 */
#ifndef VGMEM_TESTS_REST_CLIENT_H
#define VGMEM_TESTS_REST_CLIENT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <jansson.h>

struct http_resp {
	long status;
	char ctype[128];
	char allow[128];
	char www_auth[128];
	char *body;
	size_t len;
};

struct http_req {
	const char *unix_path;	/* or NULL: TCP */
	unsigned int port;	/* TCP */
	const char *token;	/* TCP bearer token, NULL: none */
	const char *method;
	const char *path;
	const char *body;	/* NULL: none */
	size_t body_len;	/* 0: strlen(body) */
	const char *ctype;	/* default application/json with a body */
	const char *extra_header;
};

static __attribute__((unused)) size_t http_body_cb(char *p, size_t sz, size_t n, void *priv)
{
	struct http_resp *r = priv;
	char *nb = realloc(r->body, r->len + sz * n + 1);

	if (!nb)
		return 0;
	memcpy(nb + r->len, p, sz * n);
	r->len += sz * n;
	nb[r->len] = '\0';
	r->body = nb;
	return sz * n;
}

static __attribute__((unused)) void http_hdr_copy(char *dst, size_t dlen, const char *v, size_t n)
{
	while (n && (v[n - 1] == '\r' || v[n - 1] == '\n'))
		n--;
	while (n && *v == ' ') {
		v++;
		n--;
	}
	if (n >= dlen)
		n = dlen - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static __attribute__((unused)) size_t http_header_cb(char *p, size_t sz, size_t n, void *priv)
{
	struct http_resp *r = priv;
	size_t len = sz * n;

	if (len > 13 && !strncasecmp(p, "Content-Type:", 13))
		http_hdr_copy(r->ctype, sizeof(r->ctype), p + 13, len - 13);
	else if (len > 6 && !strncasecmp(p, "Allow:", 6))
		http_hdr_copy(r->allow, sizeof(r->allow), p + 6, len - 6);
	else if (len > 17 && !strncasecmp(p, "WWW-Authenticate:", 17))
		http_hdr_copy(r->www_auth, sizeof(r->www_auth), p + 17, len - 17);
	return len;
}

/* 0, or the curl error code (transport failure). */
static __attribute__((unused)) int http_do(const struct http_req *q, struct http_resp *r)
{
	struct curl_slist *h = NULL;
	char url[512], auth[4200], ct[160];
	CURL *c = curl_easy_init();
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (!c)
		return -1;
	if (q->unix_path) {
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, q->unix_path);
		snprintf(url, sizeof(url), "http://localhost%s", q->path);
	} else {
		snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", q->port,
			 q->path);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method ? q->method : "GET");
	if (q->method && !strcmp(q->method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (q->body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, q->body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE,
				 (long)(q->body_len ? q->body_len : strlen(q->body)));
		snprintf(ct, sizeof(ct), "Content-Type: %s",
			 q->ctype ? q->ctype : "application/json");
		h = curl_slist_append(h, ct);
		h = curl_slist_append(h, "Expect:");
	}
	if (q->token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", q->token);
		h = curl_slist_append(h, auth);
	}
	if (q->extra_header)
		h = curl_slist_append(h, q->extra_header);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (!r->body) {
		r->body = calloc(1, 1);
	}
	return rc == CURLE_OK ? 0 : (int)rc;
}

static __attribute__((unused)) void http_free(struct http_resp *r)
{
	free(r->body);
	r->body = NULL;
}

/* The body as JSON (NULL if it is not). */
static __attribute__((unused)) json_t *http_json(const struct http_resp *r)
{
	return json_loadb(r->body, r->len, 0, NULL);
}

#endif /* VGMEM_TESTS_REST_CLIENT_H */
