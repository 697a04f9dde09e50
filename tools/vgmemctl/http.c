// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmemctl's HTTP client: one request over the unix socket or TCP (with
 * the bearer token), problem details printed readably.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

size_t buf_write(char *p, size_t sz, size_t n, void *priv)
{
	struct buf *b = priv;
	char *nb = realloc(b->p, b->len + sz * n + 1);

	if (!nb)
		return 0;
	memcpy(nb + b->len, p, sz * n);
	b->len += sz * n;
	nb[b->len] = '\0';
	b->p = nb;
	return sz * n;
}

CURL *ctl_handle(struct ctl *c, const char *path, struct curl_slist **h)
{
	char url[1024];
	CURL *cu = curl_easy_init();

	if (!cu)
		return NULL;
	if (c->url) {
		size_t n = strlen(c->url);

		snprintf(url, sizeof(url), "%.*s%s", (int)(n && c->url[n - 1] == '/' ? n - 1 : n),
			 c->url, path);
	} else {
		curl_easy_setopt(cu, CURLOPT_UNIX_SOCKET_PATH, c->socket);
		snprintf(url, sizeof(url), "http://localhost%s", path);
	}
	curl_easy_setopt(cu, CURLOPT_URL, url);
	if (c->token) {
		char *auth;

		if (asprintf(&auth, "Authorization: Bearer %s", c->token) > 0) {
			*h = curl_slist_append(*h, auth);
			free(auth);
		}
	}
	*h = curl_slist_append(*h, "Expect:");
	curl_easy_setopt(cu, CURLOPT_USERAGENT, "vgmemctl");
	return cu;
}

/* A problem details body readably (or its raw text if it is not one). */
static void format_problem(long status, const struct buf *b, char *out, size_t len)
{
	json_t *j = b->p ? json_loadb(b->p, b->len, 0, NULL) : NULL;
	const char *title = j ? json_string_value(json_object_get(j, "title")) : NULL;
	const char *detail = j ? json_string_value(json_object_get(j, "detail")) : NULL;
	const char *type = j ? json_string_value(json_object_get(j, "type")) : NULL;
	size_t n;

	if (title || detail)
		snprintf(out, len, "error %ld %s: %s", status, title ? title : "",
			 detail ? detail : "");
	else
		snprintf(out, len, "error %ld: %.300s", status, b->p ? b->p : "");
	n = strlen(out);
	if (type && n < len)
		snprintf(out + n, len - n, "\n  (%s)", type);
	json_decref(j);
}

void print_problem(long status, const struct buf *b)
{
	char msg[1024];

	format_problem(status, b, msg, sizeof(msg));
	fprintf(stderr, "%s: %s\n", prog, msg);
}

/*
 * One request; on 2xx *out gets the body. Returns 0, EXIT_API (problem
 * printed) or EXIT_CONNECT.
 */
int ctl_request(struct ctl *c, const char *method, const char *path,
		       const char *body, const char *ctype, struct buf *out)
{
	struct curl_slist *h = NULL;
	struct buf b = { 0 };
	long status = 0;
	CURLcode rc;
	CURL *cu;
	int ret = 0;

	cu = ctl_handle(c, path, &h);
	if (!cu)
		return EXIT_CONNECT;
	curl_easy_setopt(cu, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		char ct[128];

		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		h = curl_slist_append(h, ct);
		curl_easy_setopt(cu, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(cu, CURLOPT_TIMEOUT, c->timeout_s);
	rc = curl_easy_perform(cu);
	if (rc != CURLE_OK) {
		snprintf(c->err, sizeof(c->err), "cannot reach mgmtd at %s: %s",
			 c->url ? c->url : c->socket, curl_easy_strerror(rc));
		ret = EXIT_CONNECT;
	} else {
		curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &status);
		if (status < 200 || status > 299) {
			format_problem(status, &b, c->err, sizeof(c->err));
			ret = EXIT_API;
		}
	}
	if (ret && !c->quiet)
		fprintf(stderr, "%s: %s\n", prog, c->err);
	curl_slist_free_all(h);
	curl_easy_cleanup(cu);
	if (ret || !out)
		free(b.p);
	else
		*out = b;
	return ret;
}

/* b's text as JSON into *j (b is freed); EXIT_API if it is not JSON. */
static int parse_body(struct ctl *c, struct buf *b, json_t **j)
{
	json_error_t err;

	*j = json_loadb(b->p ? b->p : "", b->len, 0, &err);
	free(b->p);
	if (!*j) {
		snprintf(c->err, sizeof(c->err), "mgmtd sent invalid JSON: %s", err.text);
		if (!c->quiet)
			fprintf(stderr, "%s: %s\n", prog, c->err);
		return EXIT_API;
	}
	return 0;
}

/* GET path, parse JSON; prints raw if --json (then *j is NULL). */
int ctl_get_json(struct ctl *c, const char *path, json_t **j)
{
	struct buf b = { 0 };
	int ret;

	*j = NULL;
	ret = ctl_request(c, "GET", path, NULL, NULL, &b);
	if (ret)
		return ret;
	if (c->json) {
		fputs(b.p ? b.p : "", stdout);
		if (b.len && b.p[b.len - 1] != '\n')
			putchar('\n');
		free(b.p);
		return 0;
	}
	return parse_body(c, &b, j);
}

/* GET path and parse the JSON, whatever --json says (for views that
 * filter or combine what they get). */
int ctl_fetch_json(struct ctl *c, const char *path, json_t **j)
{
	struct buf b = { 0 };
	int ret;

	*j = NULL;
	ret = ctl_request(c, "GET", path, NULL, NULL, &b);
	if (ret)
		return ret;
	return parse_body(c, &b, j);
}
