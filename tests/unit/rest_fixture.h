/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The REST tests' fixture: the fake model (mg_model_fake.h) and a REST
 * server on a temporary unix socket plus 127.0.0.1:<ephemeral> with a
 * token. Header-only for the same reason as the fake.
 */
#ifndef VGMEM_TESTS_REST_FIXTURE_H
#define VGMEM_TESTS_REST_FIXTURE_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgmtd/config.h"
#include "mgmtd/rest.h"
#include "mg_model_fake.h"
#include "rest_client.h"

#define FIX_TOKEN	"s3cret-token-0123456789abcdef"

struct fix {
	struct mg *mg;
	struct mg_rest *rest;
	char dir[64];
	char sock[128];
	char tokfile[128];
	unsigned int port;
};

/* The token file's text (NULL: FIX_TOKEN alone, the unnamed form). */
static __attribute__((unused)) const char *fix_tokens;

static __attribute__((unused)) int fix_start(struct fix *f, size_t nvms, size_t max_body)
{
	struct mg_config cfg;
	FILE *t;
	int ret;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/vgmem-rest-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->sock, sizeof(f->sock), "%s/mgmtd.sock", f->dir);
	snprintf(f->tokfile, sizeof(f->tokfile), "%s/token", f->dir);
	t = fopen(f->tokfile, "w");
	if (!t)
		return -1;
	if (fix_tokens)
		fputs(fix_tokens, t);
	else
		fprintf(t, "%s\n", FIX_TOKEN);
	fclose(t);

	memset(&cfg, 0, sizeof(cfg));
	cfg.listen_unix = f->sock;
	cfg.unix_mode = 0660;
	cfg.listen_tcp = (char *)"127.0.0.1:0";
	cfg.token_file = f->tokfile;
	cfg.max_request_bytes = (uint32_t)max_body;
	cfg.request_timeout_s = 10;
	cfg.rest_threads = 2;
	f->mg = fake_create(nvms);
	ret = mg_rest_start(f->mg, &cfg, &f->rest, NULL, 0);
	if (ret)
		return ret;
	f->port = mg_rest_tcp_port(f->rest);
	return 0;
}

static __attribute__((unused)) void fix_stop(struct fix *f)
{
	mg_rest_stop(f->rest);
	fake_destroy(f->mg);
	unlink(f->tokfile);
	rmdir(f->dir);
}

/*
 * A test program's server, for its cmocka group setup and teardown:
 * libcurl's global state around fix_start/fix_stop. -1 for cmocka.
 */
static __attribute__((unused)) int fix_group_start(struct fix *f, size_t nvms,
						   size_t max_body)
{
	curl_global_init(CURL_GLOBAL_ALL);
	return fix_start(f, nvms, max_body) ? -1 : 0;
}

static __attribute__((unused)) int fix_group_stop(struct fix *f)
{
	fix_stop(f);
	curl_global_cleanup();
	return 0;
}

/*
 * The one server F of a test program and its cmocka group setup and
 * teardown (setup, teardown): nvms VMs, request bodies up to max_body.
 */
#define FIX_GROUP(nvms, max_body)					\
	static struct fix F;						\
	static int setup(void **state)					\
	{								\
		(void)state;						\
		return fix_group_start(&F, (nvms), (max_body));	\
	}								\
	static int teardown(void **state)				\
	{								\
		(void)state;						\
		return fix_group_stop(&F);				\
	}

/* A request over the unix socket. */
static __attribute__((unused)) struct http_resp fix_req(struct fix *f, const char *method,
				const char *path, const char *body)
{
	struct http_req q = { .unix_path = f->sock, .method = method,
			      .path = path, .body = body };
	struct http_resp r;

	if (http_do(&q, &r))
		r.status = -1;
	return r;
}

#endif /* VGMEM_TESTS_REST_FIXTURE_H */
