// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Request bodies over the limit, as simple clients send them: the whole
 * request written at once before reading, over plain sockets (no libcurl,
 * which waits for "100 Continue" or stops sending at the first answer).
 * Every such client must read its 413: a body within REST_DISCARD_MIN (or
 * REST_DISCARD_FACTOR times the limit) is read and thrown away before the
 * answer, with Content-Length and chunked alike; a client that sends
 * "Expect: 100-continue" gets the 413 before sending its body; a
 * Content-Length beyond what is read gets its 413 at once, and a chunked
 * body that keeps going past it has its connection closed instead of
 * being read without end. The server answers normally afterwards.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include <cmocka.h>

#include "rest_fixture.h"

#define NVMS		2
#define VM1		"00000000-0000-4000-8000-000000000001"
#define MAX_BODY	4096
/* Several times the socket buffers, within what the server reads. */
#define BIG		(768u * 1024)

FIX_GROUP(NVMS, MAX_BODY)

static int connect_unix(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(F.sock) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, F.sock, strlen(F.sock) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static int connect_tcp(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)F.port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* All of buf, blocking: 0 or -errno (EPIPE, ECONNRESET: the server quit). */
static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * What the server sends until it closes (the requests say "Connection:
 * close"), NUL-terminated; waits up to 60 s in all (a bound for a hang,
 * not a timing). Returns the bytes read, or -errno if reading failed (a
 * reset) before anything arrived.
 */
static ssize_t read_reply(int fd, char *out, size_t cap)
{
	time_t end = time(NULL) + 60;
	size_t len = 0;

	while (len + 1 < cap && time(NULL) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = recv(fd, out + len, cap - 1 - len, 0);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!len)
				return -errno;
			break;
		}
		len += (size_t)n;
	}
	out[len] = 0;
	return (ssize_t)len;
}

static void assert_413(const char *what, const char *reply, ssize_t n)
{
	if (n <= 0 || strncmp(reply, "HTTP/1.1 413 ", 13) ||
	    !strstr(reply, "urn:vgmem:problem:too-large"))
		fail_msg("%s: no 413 read (%zd: %.200s)", what, n,
			 n > 0 ? reply : strerror((int)-n));
}

/* The server still answers a normal request. */
static void assert_healthy(void)
{
	struct http_resp r = fix_req(&F, "GET", "/healthz", NULL);

	assert_int_equal(r.status, 200);
	http_free(&r);
}

static char *body_of(size_t n)
{
	char *b = malloc(n);

	assert_non_null(b);
	memset(b, ' ', n);
	b[0] = '{';
	b[n - 1] = '}';
	return b;
}

/* Headers, then the whole body at once, then the reply. */
static void simple_client(const char *what, int fd, const char *auth)
{
	char hdr[512], reply[8192];
	char *body = body_of(BIG);
	ssize_t n;
	int ret;

	snprintf(hdr, sizeof(hdr),
		 "PUT /v1/vms/" VM1 "/policy HTTP/1.1\r\nHost: localhost\r\n"
		 "%sContent-Type: application/json\r\nContent-Length: %u\r\n"
		 "Connection: close\r\n\r\n", auth, BIG);
	ret = send_all(fd, hdr, strlen(hdr));
	if (!ret)
		ret = send_all(fd, body, BIG);
	if (ret)
		fail_msg("%s: sending the request failed: %s", what,
			 strerror(-ret));
	n = read_reply(fd, reply, sizeof(reply));
	assert_413(what, reply, n);
	close(fd);
	free(body);
}

static void test_content_length_unix(void **state)
{
	(void)state;
	simple_client("unix socket, Content-Length", connect_unix(), "");
	assert_healthy();
}

static void test_content_length_tcp(void **state)
{
	(void)state;
	simple_client("TCP, Content-Length", connect_tcp(),
		      "Authorization: Bearer " FIX_TOKEN "\r\n");
	assert_healthy();
}

/* Chunks of 64 KiB, the terminating chunk, the reply. */
static void test_chunked(void **state)
{
	static const char hdr[] =
		"PUT /v1/vms/" VM1 "/policy HTTP/1.1\r\nHost: localhost\r\n"
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
		"Connection: close\r\n\r\n";
	char *chunk = body_of(65536), reply[8192];
	int fd = connect_unix(), ret;
	size_t sent;
	ssize_t n;

	(void)state;
	ret = send_all(fd, hdr, sizeof(hdr) - 1);
	for (sent = 0; !ret && sent < BIG; sent += 65536) {
		ret = send_all(fd, "10000\r\n", 7);
		if (!ret)
			ret = send_all(fd, chunk, 65536);
		if (!ret)
			ret = send_all(fd, "\r\n", 2);
	}
	if (!ret)
		ret = send_all(fd, "0\r\n\r\n", 5);
	if (ret)
		fail_msg("chunked: sending the request failed: %s", strerror(-ret));
	n = read_reply(fd, reply, sizeof(reply));
	assert_413("chunked", reply, n);
	close(fd);
	free(chunk);
	assert_healthy();
}

/* "Expect: 100-continue": the 413 comes instead of "100 Continue". */
static void test_expect_continue(void **state)
{
	char hdr[512], reply[8192];
	int fd = connect_unix();
	ssize_t n;

	(void)state;
	snprintf(hdr, sizeof(hdr),
		 "PUT /v1/vms/" VM1 "/policy HTTP/1.1\r\nHost: localhost\r\n"
		 "Content-Type: application/json\r\nContent-Length: %u\r\n"
		 "Expect: 100-continue\r\nConnection: close\r\n\r\n", BIG);
	assert_int_equal(send_all(fd, hdr, strlen(hdr)), 0);
	n = read_reply(fd, reply, sizeof(reply));
	assert_413("Expect: 100-continue", reply, n);
	assert_null(strstr(reply, "100 Continue"));
	close(fd);
	assert_healthy();
}

/*
 * A Content-Length far beyond what the server reads: the 413 is there
 * before any of the body is sent, for a client that reads first.
 */
static void test_content_length_beyond_discard(void **state)
{
	char hdr[512], reply[8192];
	int fd = connect_unix();
	ssize_t n;

	(void)state;
	snprintf(hdr, sizeof(hdr),
		 "PUT /v1/vms/" VM1 "/policy HTTP/1.1\r\nHost: localhost\r\n"
		 "Content-Type: application/json\r\nContent-Length: %llu\r\n"
		 "Connection: close\r\n\r\n", 1ull << 36);
	assert_int_equal(send_all(fd, hdr, strlen(hdr)), 0);
	n = read_reply(fd, reply, sizeof(reply));
	assert_413("Content-Length of 64 GiB", reply, n);
	close(fd);
	assert_healthy();
}

/*
 * A chunked body without end: the server stops reading it after its
 * bound (REST_DISCARD_MIN here) and closes the connection, so the sender
 * fails long before 64 MiB.
 */
static void test_chunked_without_end(void **state)
{
	static const char hdr[] =
		"PUT /v1/vms/" VM1 "/policy HTTP/1.1\r\nHost: localhost\r\n"
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
		"Connection: close\r\n\r\n";
	char *chunk = body_of(65536);
	int fd = connect_unix(), ret;
	size_t sent = 0;

	(void)state;
	ret = send_all(fd, hdr, sizeof(hdr) - 1);
	while (!ret && sent < (64u << 20)) {
		ret = send_all(fd, "10000\r\n", 7);
		if (!ret)
			ret = send_all(fd, chunk, 65536);
		if (!ret)
			ret = send_all(fd, "\r\n", 2);
		if (!ret)
			sent += 65536;
	}
	if (!ret)
		fail_msg("the server read a 64 MiB body over the limit");
	assert_true(ret == -EPIPE || ret == -ECONNRESET);
	assert_true(sent >= REST_DISCARD_MIN);
	close(fd);
	free(chunk);
	assert_healthy();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content_length_unix),
		cmocka_unit_test(test_content_length_tcp),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_expect_continue),
		cmocka_unit_test(test_content_length_beyond_discard),
		cmocka_unit_test(test_chunked_without_end),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
