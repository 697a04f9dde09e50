/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vgmemctl's pieces: the HTTP client (http.c), the event stream's parser
 * (sse.c), the formatting shared by the commands (format.c), one file per
 * command group (cmd_*.c) and the live view (top*.c). main.c parses the
 * global options and dispatches.
 */
#ifndef VGMEMCTL_CTL_H
#define VGMEMCTL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <curl/curl.h>
#include <jansson.h>

#define DEFAULT_SOCKET	"/run/vgmem/mgmtd.sock"
#define EXIT_API	1
#define EXIT_USAGE	2
#define EXIT_CONNECT	3

struct ctl {
	const char *socket;
	const char *url;	/* http(s)://host:port, NULL: unix socket */
	char *token;
	bool json;
	long timeout_s;
	/*
	 * quiet: a failed request's message goes only to err (top draws
	 * it on its screen); else to stderr as well.
	 */
	bool quiet;
	char err[1024];
};

struct buf {
	char *p;
	size_t len;
};

extern const char *prog;

/* main.c */
int usage_error(const char *fmt, const char *arg);

/* http.c */
size_t buf_write(char *p, size_t sz, size_t n, void *priv);
CURL *ctl_handle(struct ctl *c, const char *path, struct curl_slist **h);
void print_problem(long status, const struct buf *b);
int ctl_request(struct ctl *c, const char *method, const char *path,
		const char *body, const char *ctype, struct buf *out);
int ctl_get_json(struct ctl *c, const char *path, json_t **j);
int ctl_fetch_json(struct ctl *c, const char *path, json_t **j);

/* sse.c: text/event-stream, fed by curl's write callback */
struct sse {
	struct buf line;	/* the partial line */
	char last_id[32];	/* the last id: line, for Last-Event-ID */
	void (*on_data)(void *priv, const char *data, size_t len);
	void *priv;
};
size_t sse_write(char *p, size_t sz, size_t n, void *priv);
void sse_free(struct sse *s);

/* format.c */
uint64_t ju(json_t *o, const char *k);
const char *js(json_t *o, const char *k);
const char *human(uint64_t v, char *out, size_t len);
const char *human_ns(uint64_t ns, char *out, size_t len);
const char *vm_state(json_t *vm);
void path_escape(char *out, size_t len, const char *in);
void print_policy(json_t *p);
void print_gpu_stats(json_t *g);
void print_vm_stats(json_t *vm, const char *usage_tail);
void print_histogram(const char *title, json_t *counts);
bool parse_uint(const char *s, uint64_t max, uint64_t *out);

/* cmd_*.c */
int cmd_health(struct ctl *c);
int cmd_gpus(struct ctl *c, const char *index);
int cmd_vms(struct ctl *c, int argc, char **argv);
int cmd_vm(struct ctl *c, const char *id);
int cmd_policy(struct ctl *c, int argc, char **argv);
int cmd_admit(struct ctl *c, int argc, char **argv);
int cmd_knobs(struct ctl *c, int argc, char **argv);
int cmd_events(struct ctl *c, int argc, char **argv);
int cmd_top(struct ctl *c, int argc, char **argv);

#endif
