// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's REST server: listeners, authentication, request bodies, limits
 * and problem details (rest.h). The routes are in rest_routes.c.
 *
 * Authentication and authorisation, checked before anything else:
 *   unix socket  reaching it needs the socket's mode/group (0660 by
 *                default), which is enough to read; a write (PUT, PATCH,
 *                DELETE, POST) additionally needs the peer (SO_PEERCRED)
 *                to be root, the daemon's user, or a member of the
 *                socket's group, so a socket made world-accessible by
 *                mistake still refuses changes from strangers;
 *   TCP          every request needs "Authorization: Bearer <token>"
 *                (401 if absent, 403 if wrong), compared in constant time.
 */
#include "rest.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "sse.h"

/* ---- replies ------------------------------------------------------------ */

static const char *status_title(unsigned int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	}
	return "Error";
}

void rest_reply(struct rest_ctx *c, unsigned int status, const char *ctype,
		struct rbuf *b)
{
	size_t len;
	char *p = rbuf_take(b, &len);

	free(c->out.body);
	if (!p) {
		static const char oom[] =
			"{\"type\":\"urn:vgmem:problem:internal\",\"title\":\"Internal Server Error\",\"status\":500,\"detail\":\"out of memory\"}";

		c->out.status = 500;
		c->out.ctype = "application/problem+json";
		c->out.body = strdup(oom);
		c->out.len = c->out.body ? strlen(oom) : 0;
		return;
	}
	c->out.status = status;
	c->out.ctype = ctype;
	c->out.body = p;
	c->out.len = len;
}

void rest_problem(struct rest_ctx *c, unsigned int status, const char *slug,
		  const char *title, const char *fmt, ...)
{
	char detail[512];
	struct rbuf b;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	rbuf_init(&b, 256 + strlen(detail));
	rbuf_puts(&b, "{\"type\":\"urn:vgmem:problem:");
	rbuf_puts(&b, slug);
	rbuf_puts(&b, "\",\"title\":");
	rbuf_json_str(&b, title ? title : status_title(status));
	rbuf_puts(&b, ",\"status\":");
	rbuf_u64(&b, status);
	rbuf_puts(&b, ",\"detail\":");
	rbuf_json_str(&b, detail);
	rbuf_puts(&b, ",\"instance\":");
	rbuf_json_str(&b, c->url ? c->url : "");
	rbuf_putc(&b, '}');
	rest_reply(c, status, "application/problem+json", &b);
}

void rest_problem_errno(struct rest_ctx *c, int err, const char *what,
			const char *why)
{
	const char *reason = why && why[0] ? why : strerror(-err);

	switch (err) {
	case -ENOENT:
		rest_problem(c, 404, "not-found", NULL, "%s not found", what);
		break;
	case -ENOSPC:
		rest_problem(c, 409, "admission-refused",
			     "Admission refused", "%s", reason);
		break;
	case -EINVAL:
	case -ERANGE:
		rest_problem(c, 422, "invalid-value", "Invalid value", "%s",
			     reason);
		break;
	case -EBUSY:
	case -EAGAIN:
		rest_problem(c, 503, "busy", NULL, "%s", reason);
		break;
	default:
		rest_problem(c, 500, "internal", NULL, "%s: %s", what, reason);
	}
}

/* ---- authentication ------------------------------------------------------- */

static bool peer_in_group(uid_t uid, gid_t pgid, gid_t want)
{
	struct passwd pw, *res = NULL;
	gid_t groups[256];
	int ngroups = 256, i;
	char buf[4096];

	if (pgid == want)
		return true;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) || !res)
		return false;
	if (getgrouplist(res->pw_name, res->pw_gid, groups, &ngroups) < 0)
		return false;
	for (i = 0; i < ngroups; i++)
		if (groups[i] == want)
			return true;
	return false;
}

static bool unix_peer_may_write(struct mg_rest *r, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return false;
	if (getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    len != sizeof(cred))
		return false;
	if (cred.uid == 0 || cred.uid == geteuid())
		return true;
	return peer_in_group(cred.uid, cred.gid, r->unix_gid);
}

/*
 * Who a request comes from, for the "by" of the events it causes. On TCP
 * the name of the bearer token it presented ("token NAME"; "token" for a
 * token file of one unnamed token). On the unix socket,
 * the peer's uid from SO_PEERCRED (the kernel's word, unlike anything the
 * client sends) and its user name when the passwd database knows it.
 */
static void request_by(struct MHD_Connection *conn, const char *token,
		       char *by, size_t len)
{
	const union MHD_ConnectionInfo *ci;
	struct passwd pw, *res = NULL;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char buf[4096];

	if (token) {
		if (strcmp(token, "token"))
			snprintf(by, len, "token %s", token);
		else
			snprintf(by, len, "token");
		return;
	}
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred,
			      &clen) || clen != sizeof(cred)) {
		snprintf(by, len, "unix socket peer (uid unknown)");
		return;
	}
	if (!getpwuid_r(cred.uid, &pw, buf, sizeof(buf), &res) && res)
		snprintf(by, len, "uid %u (%.64s)", (unsigned int)cred.uid,
			 res->pw_name);
	else
		snprintf(by, len, "uid %u", (unsigned int)cred.uid);
}

/* 0 if allowed, else the problem is in c->out. */
static int check_tcp_token(struct mg_rest *r, struct rest_ctx *c)
{
	const struct rest_token *tok;
	const char *h = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	size_t len;

	if (!h || !*h) {
		rest_problem(c, 401, "unauthenticated", NULL,
			     "this listener needs \"Authorization: Bearer <token>\"");
		c->out.www_auth = "Bearer realm=\"vgmem\"";
		return -EACCES;
	}
	if (strncasecmp(h, "Bearer ", 7)) {
		rest_problem(c, 401, "unauthenticated", NULL,
			     "only the Bearer authentication scheme is accepted");
		c->out.www_auth = "Bearer realm=\"vgmem\"";
		return -EACCES;
	}
	h += 7;
	while (*h == ' ')
		h++;
	len = strnlen(h, REST_TOKEN_MAX + 1);
	tok = rest_tokens_match(&r->tokens, h, len);
	if (!tok) {
		rest_problem(c, 403, "forbidden", NULL, "the token is not valid");
		c->out.www_auth = "Bearer realm=\"vgmem\", error=\"invalid_token\"";
		return -EACCES;
	}
	c->token_name = tok->name;
	return 0;
}

/* ---- MHD glue ------------------------------------------------------------- */

static bool is_write(const char *method)
{
	return strcmp(method, "GET") && strcmp(method, "HEAD") &&
	       strcmp(method, "OPTIONS");
}

static enum MHD_Result send_out(struct mg_rest *r, struct MHD_Connection *conn,
				struct rest_out *o)
{
	struct MHD_Response *resp = o->raw;
	enum MHD_Result ret;
	unsigned int cls = o->status / 100;

	if (!resp) {
		resp = MHD_create_response_from_buffer(o->len, o->body,
						       MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(o->body);
			o->body = NULL;
			return MHD_NO;
		}
		o->body = NULL;	/* MHD frees it */
		if (o->ctype)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
						o->ctype);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
					"no-store");
	}
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (o->allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, o->allow);
	if (o->www_auth)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					o->www_auth);
	ret = MHD_queue_response(conn, o->status, resp);
	MHD_destroy_response(resp);
	if (cls >= 1 && cls <= 5)
		atomic_fetch_add(&r->answered[cls], 1);
	return ret;
}

static void ctx_init(struct rest_ctx *c, struct mg_rest *r,
		     struct MHD_Connection *conn, const char *url,
		     const char *method)
{
	memset(c, 0, sizeof(*c));
	c->rest = r;
	c->conn = conn;
	c->url = url;
	c->method = method;
	c->body = "";
}

/* How much of a body over the limit is read and discarded (rest.h). */
static size_t discard_max(const struct mg_rest *r)
{
	size_t m = r->max_body * REST_DISCARD_FACTOR;

	return m < REST_DISCARD_MIN ? REST_DISCARD_MIN : m;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct rest_listener *l = cls;
	struct mg_rest *r = l->rest;
	struct rest_req *req = *con_cls;
	struct rest_ctx c;
	enum MHD_Result ret;

	(void)version;
	if (!req) {
		const char *cl;

		/* First call: headers only. Refuse early what we can. */
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		*con_cls = req;
		req->started = true;
		ctx_init(&c, r, conn, url, method);
		if (l->tcp && check_tcp_token(r, &c))
			return send_out(r, conn, &c.out);
		if (is_write(method)) {
			req->may_write = l->tcp ||
					 unix_peer_may_write(r, conn);
			request_by(conn, l->tcp ? c.token_name : NULL, req->by,
				   sizeof(req->by));
		}
		cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl) {
			const char *expect;
			char *end;
			unsigned long long n;

			errno = 0;
			n = strtoull(cl, &end, 10);
			expect = MHD_lookup_connection_value(conn,
					MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
			/*
			 * Answered before the body when the client waits for
			 * "100 Continue" (it gets the final status instead and
			 * sends nothing), or when the body is more than we
			 * would read; else the body is read and discarded
			 * first, so that a client writing it all before
			 * reading gets the 413 rather than a broken pipe.
			 */
			if (errno || *end || n > discard_max(r) ||
			    (n > r->max_body && expect &&
			     !strcasecmp(expect, "100-continue"))) {
				rest_problem(&c, 413, "too-large", NULL,
					     "request bodies are limited to %zu bytes",
					     r->max_body);
				return send_out(r, conn, &c.out);
			}
			req->too_large = n > r->max_body;
		}
		/*
		 * req->body stays empty (calloc: no buffer) until data comes:
		 * most requests are GETs, which then allocate nothing here.
		 */
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (!req->too_large &&
		    req->body.len + *upload_data_size > r->max_body) {
			req->too_large = true;
			req->discarded = req->body.len;
			rbuf_free(&req->body);
		}
		if (req->too_large) {
			req->discarded += *upload_data_size;
			/*
			 * A chunked body without end: MHD cannot answer in the
			 * middle of a body, so the connection is closed.
			 */
			if (req->discarded > discard_max(r))
				return MHD_NO;
		} else {
			rbuf_put(&req->body, upload_data, *upload_data_size);
		}
		*upload_data_size = 0;	/* consumed (or discarded) */
		return MHD_YES;
	}

	ctx_init(&c, r, conn, url, method);
	if (req->too_large) {
		rest_problem(&c, 413, "too-large", NULL,
			     "request bodies are limited to %zu bytes",
			     r->max_body);
		return send_out(r, conn, &c.out);
	}
	if (req->body.oom) {
		rest_problem(&c, 500, "internal", NULL, "out of memory");
		return send_out(r, conn, &c.out);
	}
	c.body = req->body.p ? req->body.p : "";
	c.body_len = req->body.len;
	c.may_write = req->may_write;
	/* Only writes change state; GETs leave "by" empty, i.e. mgmtd. */
	mg_actor_set(req->by);
	rest_dispatch(&c);
	mg_actor_set(NULL);
	ret = send_out(r, conn, &c.out);
	free(c.out.body);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct rest_req *req = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!req)
		return;
	rbuf_free(&req->body);
	free(req);
	*con_cls = NULL;
}

/* ---- listeners ------------------------------------------------------------ */

/*
 * Whether a process accepts connections on the unix socket sa names: 1
 * (someone listens: a connection succeeded or the backlog is full), 0 (a
 * stale socket file: nobody listens), or -errno when that cannot be told
 * (e.g. -EACCES).
 */
static int unix_socket_live(const struct sockaddr_un *sa)
{
	int fd, ret;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		ret = 1;
	else if (errno == EAGAIN)
		ret = 1;
	else if (errno == ECONNREFUSED || errno == ENOENT)
		ret = 0;
	else
		ret = -errno;
	close(fd);
	return ret;
}

static int make_unix_socket(struct mg_rest *r, const struct mg_config *cfg,
			    char *why, size_t whylen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = r->unix_path;
	struct stat st;
	char dir[sizeof(sa.sun_path)];
	char *slash;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	/* The parent (e.g. /run/vgmem) normally comes from systemd's
	 * RuntimeDirectory=; create it for a manual start. */
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
	}
	/*
	 * A stale socket from a previous run is replaced; a live one is
	 * another mgmtd's (a second daemon on another state_db, or started
	 * twice by hand), which keeps it: replacing it would cut that daemon
	 * off from its clients. Nothing but a socket is ever removed.
	 */
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(why, whylen, "%s exists and is not a socket: not replacing it",
				 path);
			return -EEXIST;
		}
		ret = unix_socket_live(&sa);
		if (ret > 0) {
			snprintf(why, whylen, "another mgmtd is serving on %s: refusing to replace its socket",
				 path);
			return -EADDRINUSE;
		}
		if (ret < 0) {
			snprintf(why, whylen, "cannot tell whether %s is in use (%s): not replacing it",
				 path, strerror(-ret));
			return ret;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err_close;
	if (chmod(path, cfg->unix_mode ? cfg->unix_mode : 0660))
		goto err_unlink;
	r->unix_gid = getegid();
	if (cfg->unix_group && cfg->unix_group[0]) {
		struct group gr, *res = NULL;
		char buf[4096];

		if (getgrnam_r(cfg->unix_group, &gr, buf, sizeof(buf), &res) ||
		    !res) {
			errno = ENOENT;
			goto err_unlink;
		}
		r->unix_gid = res->gr_gid;
		if (chown(path, (uid_t)-1, res->gr_gid))
			goto err_unlink;
	}
	if (listen(fd, 128) || lstat(path, &st))
		goto err_unlink;
	/* What mg_rest_stop() may remove: this socket, nobody else's. */
	r->unix_dev = st.st_dev;
	r->unix_ino = st.st_ino;
	r->unix_l.fd = fd;
	return 0;

err_unlink:
	ret = -errno;
	unlink(path);
	close(fd);
	return ret;
err_close:
	ret = -errno;
	close(fd);
	return ret;
}

/* "host:port", "[v6]:port" or ":port" (loopback). */
static int make_tcp_socket(struct mg_rest *r, const char *spec)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char host[256], *port;
	int fd, one = 1, ret;

	if (strlen(spec) >= sizeof(host))
		return -EINVAL;
	strcpy(host, spec);
	port = strrchr(host, ':');
	if (!port || !port[1])
		return -EINVAL;
	*port++ = '\0';
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 2 || host[n - 1] != ']')
			return -EINVAL;
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
	}
	ret = getaddrinfo(host[0] ? host : "127.0.0.1", port, &hints, &ai);
	if (ret || !ai)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sslen)) {
		ret = -errno;
		close(fd);
		goto out;
	}
	r->tcp_port = ntohs(ss.ss_family == AF_INET6 ?
			    ((struct sockaddr_in6 *)&ss)->sin6_port :
			    ((struct sockaddr_in *)&ss)->sin_port);
	r->tcp_l.fd = fd;
	ret = 0;
out:
	freeaddrinfo(ai);
	return ret;
}

static int start_daemon(struct mg_rest *r, struct rest_listener *l)
{
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD |
			     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO;

	l->rest = r;
	l->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, l,
		MHD_OPTION_LISTEN_SOCKET, l->fd,
		MHD_OPTION_THREAD_POOL_SIZE, r->threads,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)REST_CONN_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, r->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REST_CONN_MEMORY,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		MHD_OPTION_END);
	if (!l->daemon)
		return -EIO;
	l->fd = -1;	/* MHD closes it */
	return 0;
}

int mg_rest_start(struct mg *mg, const struct mg_config *cfg,
		  struct mg_rest **out, char *why, size_t whylen)
{
	char dummy[1];
	struct mg_rest *r;
	int ret;

	if (!why || !whylen) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	why[0] = 0;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->mg = mg;
	rest_cache_init(&r->cache);
	r->unix_l.fd = -1;
	r->tcp_l.fd = -1;
	r->max_body = cfg->max_request_bytes ? cfg->max_request_bytes :
					      REST_MAX_BODY_DEFAULT;
	if (r->max_body > REST_MAX_BODY_LIMIT)
		r->max_body = REST_MAX_BODY_LIMIT;
	r->timeout_s = cfg->request_timeout_s ? cfg->request_timeout_s : 10;
	/* config.c refuses anything outside 1..64; 0 is a zeroed config. */
	r->threads = cfg->rest_threads ? cfg->rest_threads : 4;

	ret = sse_hub_create(mg, SSE_HEARTBEAT_MS, &r->sse);
	if (ret)
		goto err_free;
	if (!cfg->listen_unix || cfg->listen_unix[0]) {
		r->unix_path = strdup(cfg->listen_unix ? cfg->listen_unix :
				      REST_DEFAULT_SOCKET);
		if (!r->unix_path) {
			ret = -ENOMEM;
			goto err_stop;
		}
		ret = make_unix_socket(r, cfg, why, whylen);
		if (ret) {
			free(r->unix_path);
			r->unix_path = NULL;
			goto err_stop;
		}
		ret = start_daemon(r, &r->unix_l);
		if (ret)
			goto err_stop;
	}
	if (cfg->listen_tcp && cfg->listen_tcp[0]) {
		char terr[160] = "";

		ret = cfg->token_file && cfg->token_file[0] ?
		      rest_tokens_load(cfg->token_file, &r->tokens, terr,
				       sizeof(terr)) : -EINVAL;
		if (ret == -EINVAL && terr[0])
			snprintf(why, whylen, "token_file %s: %s",
				 cfg->token_file, terr);
		else if (ret == -EINVAL)
			snprintf(why, whylen, "listen_tcp %s needs token_file",
				 cfg->listen_tcp);
		else if (ret)
			snprintf(why, whylen, "token_file %s: %s",
				 cfg->token_file, strerror(-ret));
		if (ret) {
			ret = -EINVAL;	/* a setting that cannot work */
			goto err_stop;
		}
		ret = make_tcp_socket(r, cfg->listen_tcp);
		if (ret) {
			snprintf(why, whylen, "listen_tcp %s: %s", cfg->listen_tcp,
				 strerror(-ret));
			goto err_stop;
		}
		r->tcp_l.tcp = true;
		ret = start_daemon(r, &r->tcp_l);
		if (ret)
			goto err_stop;
	}
	if (!r->unix_l.daemon && !r->tcp_l.daemon) {
		ret = -EINVAL;	/* nothing to listen on */
		goto err_stop;
	}
	*out = r;
	return 0;

err_stop:
	mg_rest_stop(r);
	return ret;
err_free:
	rest_cache_fini(&r->cache);
	free(r);
	return ret;
}

void mg_rest_where(const struct mg_rest *r, const struct mg_config *cfg,
		   char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s",
		 r->unix_l.daemon ? "unix socket " : "",
		 r->unix_l.daemon ? r->unix_path : "",
		 r->unix_l.daemon && r->tcp_l.daemon ? ", " : "",
		 r->tcp_l.daemon ? "TCP " : "",
		 r->tcp_l.daemon ? cfg->listen_tcp : "");
}

void mg_rest_stop(struct mg_rest *r)
{
	if (!r)
		return;
	if (r->sse)
		sse_hub_shutdown(r->sse);
	if (r->unix_l.daemon)
		MHD_stop_daemon(r->unix_l.daemon);
	if (r->tcp_l.daemon)
		MHD_stop_daemon(r->tcp_l.daemon);
	if (r->unix_l.fd >= 0)
		close(r->unix_l.fd);
	if (r->tcp_l.fd >= 0)
		close(r->tcp_l.fd);
	if (r->unix_path) {
		struct stat st;

		/* Only the socket this daemon bound, if it is still there. */
		if (!lstat(r->unix_path, &st) && S_ISSOCK(st.st_mode) &&
		    st.st_dev == r->unix_dev && st.st_ino == r->unix_ino)
			unlink(r->unix_path);
		free(r->unix_path);
	}
	sse_hub_destroy(r->sse);
	rest_cache_fini(&r->cache);	/* no handler runs any more */
	rest_tokens_free(&r->tokens);
	free(r);
}

uint16_t mg_rest_tcp_port(const struct mg_rest *rest)
{
	return rest->tcp_l.daemon ? rest->tcp_port : 0;
}

void mg_rest_set_heartbeat_ms(struct mg_rest *rest, unsigned int ms)
{
	sse_hub_set_heartbeat(rest->sse, ms);
}
