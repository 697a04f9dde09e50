// SPDX-License-Identifier: MIT
/*
 * vgmem-guest's file command run in-process (--inproc --share 0=DIR)
 * through vgg_main, as the VM tests run it: files written through the GPU
 * hold exactly the documented pattern (read(2) checks it), the false
 * sharing halves of two writers both survive, a held map sees a host
 * writer only after it acquires, a writer's --hold ends on SIGTERM, hostile
 * paths get exactly the documented errors and leave the file alone, and the
 * command line is checked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "vgg_run.h"

#define KiB	1024ull

/* A share directory with a file a.bin of `size` bytes of `fill`. */
struct share {
	char dir[64];
	char arg[96];	/* "0=DIR" */
	char file[128];
};

static void share_make(struct share *s, size_t size, int fill)
{
	char *buf = malloc(size);
	int fd;

	assert_non_null(buf);
	strcpy(s->dir, "/tmp/vgg-file-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->arg, sizeof(s->arg), "0=%s", s->dir);
	snprintf(s->file, sizeof(s->file), "%s/a.bin", s->dir);
	memset(buf, fill, size);
	fd = open(s->file, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_true(write(fd, buf, size) == (ssize_t)size);
	close(fd);
	free(buf);
}

static void share_remove(struct share *s)
{
	char p[160];

	unlink(s->file);
	snprintf(p, sizeof(p), "%s/link", s->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sub", s->dir);
	rmdir(p);
	rmdir(s->dir);
}

/* FNV-1a of bytes [off, off + len) of the file, read with read(2). */
static uint64_t file_fnv(const struct share *s, uint64_t off, uint64_t len)
{
	uint8_t *buf = malloc(len);
	uint64_t h;
	int fd;

	assert_non_null(buf);
	fd = open(s->file, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(pread(fd, buf, len, (off_t)off) == (ssize_t)len);
	close(fd);
	h = vgmem_fnv1a(VGMEM_FNV_INIT, buf, len);
	free(buf);
	return h;
}

/* The pattern rule of docs/vgmem-guest.md, on the CPU: row r, seed s + r. */
static void pattern_rows(uint8_t *buf, uint32_t rows, uint64_t row_bytes,
			 int half, uint32_t seed)
{
	uint64_t part = half < 0 ? row_bytes : row_bytes / 2, i;
	uint32_t r, w;
	uint8_t *p;

	for (r = 0; r < rows; r++) {
		p = buf + r * row_bytes + (half > 0 ? part : 0);
		for (i = 0; i < part; i++) {
			w = vgmem_pattern_word(seed + r, i / 4);
			p[i] = (uint8_t)(w >> (8 * (i & 3)));
		}
	}
}

static void test_write_then_read(void **state)
{
	struct share s;
	struct run r;
	uint8_t *want;

	(void)state;
	share_make(&s, 200 * KiB, 0x11);	/* not a 64 KiB multiple */
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "write", "0", "a.bin", "--pattern", "5", "--offset", "64K",
		 "--length", "128K", NULL });
	assert_ok(&r);
	assert_non_null(strstr(r.out, "\nfile sync\n"));
	run_free(&r);

	/* The file: 64 KiB untouched, then the pattern, then untouched bytes. */
	want = malloc(128 * KiB);
	assert_non_null(want);
	pattern_rows(want, 1, 128 * KiB, -1, 5);
	assert_true(file_fnv(&s, 64 * KiB, 128 * KiB) ==
		    vgmem_fnv1a(VGMEM_FNV_INIT, want, 128 * KiB));
	memset(want, 0x11, 64 * KiB);
	assert_true(file_fnv(&s, 0, 64 * KiB) ==
		    vgmem_fnv1a(VGMEM_FNV_INIT, want, 64 * KiB));
	assert_true(file_fnv(&s, 192 * KiB, 8 * KiB) ==
		    vgmem_fnv1a(VGMEM_FNV_INIT, want, 8 * KiB));
	free(want);

	/* A fresh host reads it back through the cache. */
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "read", "0", "a.bin", "--offset", "64K", "--length", "128K",
		 "--expect-pattern", "5", NULL });
	assert_ok(&r);
	assert_non_null(strstr(r.out, " match\n"));
	run_free(&r);
	/* A wrong expectation fails, naming the mismatch. */
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "read", "0", "a.bin", "--offset", "64K", "--length", "128K",
		 "--expect-pattern", "6", NULL });
	assert_int_equal(r.rc, 1);
	assert_true(starts(r.last, "RESULT fail file read a.bin: compare: "));
	assert_non_null(strstr(r.last, "EILSEQ"));
	assert_non_null(strstr(r.last, " expected="));
	assert_non_null(strstr(r.out, "MISMATCH"));
	run_free(&r);
	/* --expect-fnv with the FNV of the file as read(2) sees it. */
	{
		char hex[24];
		const char *sync_args[] = { "--inproc", "--vram", "64M", "--share",
			s.arg, "file", "sync", "0", "a.bin", NULL };

		snprintf(hex, sizeof(hex), "%016llx",
			 (unsigned long long)file_fnv(&s, 0, 64 * KiB));
		runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share",
			 s.arg, "file", "read", "0", "a.bin", "--expect-fnv", hex, NULL });
		assert_ok(&r);
		assert_non_null(strstr(r.last, hex));
		run_free(&r);
		runv(&r, sync_args);
		assert_ok(&r);
		run_free(&r);
	}
	share_remove(&s);
}

/* Two writers, each one half of every row: the file keeps both halves. */
static void test_false_sharing_halves(void **state)
{
	const uint32_t rows = 8;
	const uint64_t rb = 24 * KiB;	/* rows straddle the 64 KiB pages */
	struct share s;
	struct run r;
	uint8_t *want;

	(void)state;
	share_make(&s, 192 * KiB, 0);
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "write", "0", "a.bin", "--pattern", "100", "--rows", "8",
		 "--row-bytes", "24K", "--half", "0", NULL });
	assert_ok(&r);
	assert_non_null(strstr(r.last, "half=0"));
	run_free(&r);
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "write", "0", "a.bin", "--pattern", "200", "--rows", "8",
		 "--row-bytes", "24K", "--half", "1", NULL });
	assert_ok(&r);
	run_free(&r);

	want = calloc(1, rows * rb);
	assert_non_null(want);
	pattern_rows(want, rows, rb, 0, 100);
	pattern_rows(want, rows, rb, 1, 200);
	assert_true(file_fnv(&s, 0, rows * rb) ==
		    vgmem_fnv1a(VGMEM_FNV_INIT, want, rows * rb));
	free(want);

	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "read", "0", "a.bin", "--rows", "8", "--row-bytes", "24K",
		 "--expect-pattern", "100,200", NULL });
	assert_ok(&r);
	assert_non_null(strstr(r.out, "bytes=196608 "));
	run_free(&r);
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "read", "0", "a.bin", "--rows", "8", "--row-bytes", "24K",
		 "--expect-pattern", "100", NULL });
	assert_int_equal(r.rc, 1);
	run_free(&r);
	share_remove(&s);
}

/* ---- hold: a host writer becomes visible only at the next acquire -------- */

struct hold_run {
	struct run r;
	const char *const *args;
	int fd;			/* write end of the pipe the tool prints to */
};

static void *hold_thread(void *arg)
{
	struct hold_run *h = arg;
	char *argv[40];
	size_t elen = 0;
	FILE *out, *err;
	int argc = 0;
	const char *const *a = h->args;

	argv[argc++] = "vgmem-guest";
	while (*a && argc < 39)
		argv[argc++] = (char *)*a++;
	argv[argc] = NULL;
	out = fdopen(h->fd, "w");
	err = open_memstream(&h->r.err, &elen);
	if (!out || !err)
		return NULL;
	h->r.rc = vgg_main(argc, argv, out, err, &vgg_inproc_host);
	fclose(out);		/* the reader sees end of file */
	fclose(err);
	return NULL;
}

/*
 * Starts the tool with args on a thread of its own (it holds until a
 * signal); returns the read end of its output.
 */
static FILE *hold_spawn(struct hold_run *h, pthread_t *t,
			const char *const *args)
{
	FILE *in;
	int pfd[2];

	memset(h, 0, sizeof(*h));
	h->args = args;
	assert_int_equal(pipe(pfd), 0);
	h->fd = pfd[1];
	in = fdopen(pfd[0], "r");
	assert_non_null(in);
	assert_int_equal(pthread_create(t, NULL, hold_thread, h), 0);
	return in;
}

/* The next line from the tool that starts with prefix (others skipped). */
static bool next_line(FILE *in, const char *prefix, char *line, size_t len)
{
	while (fgets(line, (int)len, in))
		if (starts(line, prefix))
			return true;
	return false;
}

static const char *fnv_of(const char *line)
{
	const char *p = strstr(line, "fnv=");

	return p ? p + 4 : "";
}

static void test_hold_sees_host_writer_after_acquire(void **state)
{
	char l0[256], l1[256], l2[256], last[256] = "";
	struct hold_run h;
	struct share s;
	pthread_t t;
	uint8_t buf[4096];
	FILE *in;
	int fd;

	(void)state;
	share_make(&s, 64 * KiB, 0x22);
	in = hold_spawn(&h, &t, (const char *[]){ "--inproc", "--vram", "64M",
		"--share", s.arg, "file", "hold", "0", "a.bin", "--hold", "60",
		NULL });

	assert_true(next_line(in, "file hold ready ", l0, sizeof(l0)));
	/* A host process changes the file behind the cache's back. */
	memset(buf, 0x33, sizeof(buf));
	fd = open(s.file, O_WRONLY);
	assert_true(fd >= 0);
	assert_true(pwrite(fd, buf, sizeof(buf), 8192) == (ssize_t)sizeof(buf));
	close(fd);

	kill(getpid(), SIGUSR1);	/* check without acquiring */
	assert_true(next_line(in, "file check ", l1, sizeof(l1)));
	kill(getpid(), SIGUSR2);	/* acquire, then check */
	assert_true(next_line(in, "file acquire-check ", l2, sizeof(l2)));
	kill(getpid(), SIGTERM);
	while (fgets(l2 + 128, 128, in))
		if (starts(l2 + 128, "RESULT "))
			snprintf(last, sizeof(last), "%s", l2 + 128);
	pthread_join(t, NULL);
	fclose(in);

	/* Before the acquire: the snapshot; after: the host's bytes. */
	assert_memory_equal(fnv_of(l0), fnv_of(l1), 16);
	assert_memory_not_equal(fnv_of(l0), fnv_of(l2), 16);
	{
		char hex[24];

		snprintf(hex, sizeof(hex), "%016llx",
			 (unsigned long long)file_fnv(&s, 0, 64 * KiB));
		assert_memory_equal(fnv_of(l2), hex, 16);
	}
	if (h.r.rc != 0 || !starts(last, "RESULT ok file hold "))
		fail_msg("rc %d, last '%s', stderr '%s'", h.r.rc, last,
			 h.r.err ? h.r.err : "");
	assert_non_null(strstr(last, "checks=1 acquires=1"));
	free(h.r.err);
	share_remove(&s);
}

/* A held map ends by itself after --hold seconds. */
static void test_hold_timeout(void **state)
{
	struct share s;
	struct run r;

	(void)state;
	share_make(&s, 64 * KiB, 0);
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "hold", "0", "a.bin", "--rw", "--hold", "0.05",
		 "--expect-fnv", "0x0", NULL });
	assert_int_equal(r.rc, 1);	/* the FNV of zeros is not 0 */
	assert_non_null(strstr(r.out, "MISMATCH"));
	run_free(&r);
	{
		char hex[24], *args_hex = hex;

		snprintf(hex, sizeof(hex), "%016llx",
			 (unsigned long long)file_fnv(&s, 0, 64 * KiB));
		runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share",
			 s.arg, "file", "hold", "0", "a.bin", "--rw", "--hold", "0.05",
			 "--expect-fnv", args_hex, NULL });
		assert_ok(&r);
		assert_non_null(strstr(r.last, " rw checks=0 acquires=0"));
		run_free(&r);
	}
	share_remove(&s);
}

/* ---- hostile paths and ranges: exactly the documented errors ------------- */

/*
 * write --hold waits before its release until SIGTERM, not just for the
 * time given: the VM tests give a long one and end it once the other
 * writer has filled, however long that took. The file then holds the
 * pattern, released and synced, and nothing was released before.
 */
static void test_write_hold_ends_on_sigterm(void **state)
{
	char l[256], last[256] = "";
	struct hold_run h;
	struct share s;
	pthread_t t;
	uint8_t *want;
	FILE *in;

	(void)state;
	share_make(&s, 64 * KiB, 0x44);
	in = hold_spawn(&h, &t, (const char *[]){ "--inproc", "--vram", "64M",
		"--share", s.arg, "file", "write", "0", "a.bin", "--pattern", "9",
		"--hold", "3600", NULL });

	assert_true(next_line(in, "file hold-before-release ", l, sizeof(l)));
	want = malloc(64 * KiB);
	assert_non_null(want);
	memset(want, 0x44, 64 * KiB);
	/* Not released yet: the file still has the old bytes. */
	assert_true(file_fnv(&s, 0, 64 * KiB) ==
		    vgmem_fnv1a(VGMEM_FNV_INIT, want, 64 * KiB));
	kill(getpid(), SIGTERM);
	assert_true(next_line(in, "file wait ended early by a signal", l, sizeof(l)));
	assert_true(next_line(in, "file release", l, sizeof(l)));
	while (fgets(l, sizeof(l), in))
		if (starts(l, "RESULT "))
			snprintf(last, sizeof(last), "%s", l);
	pthread_join(t, NULL);
	fclose(in);
	if (h.r.rc != 0 || !starts(last, "RESULT ok file write "))
		fail_msg("rc %d, last '%s', stderr '%s'", h.r.rc, last,
			 h.r.err ? h.r.err : "");
	pattern_rows(want, 1, 64 * KiB, -1, 9);
	assert_true(file_fnv(&s, 0, 64 * KiB) ==
		    vgmem_fnv1a(VGMEM_FNV_INIT, want, 64 * KiB));
	free(want);
	free(h.r.err);
	share_remove(&s);
}

static void test_errors(void **state)
{
	static const struct {
		const char *path, *kind, *offset, *length, *err;
	} cases[] = {
		{ "../a.bin", "read", "0", "64K", "EACCES" },
		{ "/etc/passwd", "read", "0", "64K", "EACCES" },
		{ "link", "read", "0", "64K", "EACCES" },		/* symlink */
		{ "sub/../../a.bin", "read", "0", "64K", "EACCES" },
		{ "nope.bin", "read", "0", "64K", "ENOENT" },
		{ "sub", "read", "0", "64K", "EINVAL" },		/* a directory */
		{ "a.bin", "read", "4K", "64K", "EINVAL" },
		{ "a.bin", "read", "0", "60K", "EINVAL" },
		{ "a.bin", "read", "128K", "64K", "EFBIG" },
		{ "a.bin", "write", "0", "128K", "EFBIG" },
	};
	char path[160], long_path[500];
	uint64_t before;
	struct share s;
	struct run r;
	size_t i;

	(void)state;
	share_make(&s, 64 * KiB, 0x44);
	snprintf(path, sizeof(path), "%s/link", s.dir);
	assert_int_equal(symlink("a.bin", path), 0);
	snprintf(path, sizeof(path), "%s/sub", s.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	before = file_fnv(&s, 0, 64 * KiB);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share",
			 s.arg, "file", cases[i].kind, "0", cases[i].path,
			 "--pattern", "1", "--offset", cases[i].offset,
			 "--length", cases[i].length, "--expect-error", cases[i].err,
			 NULL });
		if (!strcmp(cases[i].kind, "read")) {
			/* --pattern is for write only: a usage error first. */
			assert_int_equal(r.rc, 2);
			run_free(&r);
			runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share",
				 s.arg, "file", "read", "0", cases[i].path,
				 "--offset", cases[i].offset, "--length",
				 cases[i].length, "--expect-error", cases[i].err, NULL });
		}
		if (r.rc != 0 || !strstr(r.last, cases[i].err))
			fail_msg("case %zu %s: rc %d last '%s'", i, cases[i].path,
				 r.rc, r.last);
		run_free(&r);
		/* Without --expect-error the same map fails, naming the error. */
		runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share",
			 s.arg, "file", "read", "0", cases[i].path, "--offset",
			 cases[i].offset, "--length", cases[i].length, NULL });
		assert_int_equal(r.rc, 1);
		assert_non_null(strstr(r.last, ": map: "));
		assert_non_null(strstr(r.last, cases[i].err));
		assert_non_null(strstr(r.last, " ("));	/* and what it means */
		run_free(&r);
	}
	/* No such share; a read-only share refuses write; a too long path. */
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "read", "0", "a.bin", "--expect-error", "ENOENT", NULL });
	assert_int_equal(r.rc, 1);	/* it mapped: not the expected error */
	assert_non_null(strstr(r.last, "mapped, expected ENOENT"));
	run_free(&r);
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "read", "9", "a.bin", "--expect-error", "ENOENT", NULL });
	assert_ok(&r);
	run_free(&r);
	snprintf(path, sizeof(path), "0=%s", s.dir);
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share-ro", path,
		 "file", "write", "0", "a.bin", "--pattern", "3", NULL });
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.last, "EACCES"));
	assert_non_null(strstr(r.last, "read-only"));
	run_free(&r);
	memset(long_path, 'x', 450);
	long_path[450] = 0;
	runv(&r, (const char *[]){ "--inproc", "--vram", "64M", "--share", s.arg,
		 "file", "read", "0", long_path, "--expect-error", "ENAMETOOLONG",
		 NULL });
	assert_ok(&r);
	run_free(&r);

	assert_true(file_fnv(&s, 0, 64 * KiB) == before);	/* nothing changed */
	share_remove(&s);
}

static void test_usage(void **state)
{
	static const char *const bad[][12] = {
		{ "--inproc", "file", NULL },				/* no kind */
		{ "--inproc", "file", "peek", "0", "a", NULL },
		{ "--inproc", "file", "read", NULL },			/* no share */
		{ "--inproc", "file", "read", "0", NULL },		/* no path */
		{ "--inproc", "file", "read", "x", "a", NULL },
		{ "--inproc", "file", "read", "0", "a", "b", NULL },
		{ "--inproc", "file", "write", "0", "a", NULL },	/* no --pattern */
		{ "--inproc", "file", "write", "0", "a", "--pattern", "-1", NULL },
		{ "--inproc", "file", "write", "0", "a", "--pattern", "0x100000000", NULL },
		{ "--inproc", "file", "write", "0", "a", "--pattern", "1", "--half", "2", NULL },
		{ "--inproc", "file", "read", "0", "a", "--half", "0", NULL },
		{ "--inproc", "file", "read", "0", "a", "--rows", "2", NULL },
		{ "--inproc", "file", "read", "0", "a", "--rows", "0", "--row-bytes", "8", NULL },
		{ "--inproc", "file", "read", "0", "a", "--row-bytes", "12", NULL },
		{ "--inproc", "file", "read", "0", "a", "--rows", "3", "--row-bytes", "32K",
		  "--length", "64K", NULL },
		{ "--inproc", "file", "read", "0", "a", "--length", "0", NULL },
		{ "--inproc", "file", "read", "0", "a", "--offset", "x", NULL },
		{ "--inproc", "file", "read", "0", "a", "--expect-fnv", "xyz", NULL },
		{ "--inproc", "file", "read", "0", "a", "--expect-fnv", "1",
		  "--expect-pattern", "1", NULL },
		{ "--inproc", "file", "read", "0", "a", "--expect-pattern", "1,", NULL },
		{ "--inproc", "file", "read", "0", "a", "--expect-pattern", ",1", NULL },
		{ "--inproc", "file", "sync", "0", "a", "--expect-pattern", "1", NULL },
		{ "--inproc", "file", "read", "0", "a", "--rw", NULL },
		{ "--inproc", "file", "read", "0", "a", "--hold", "1", NULL },
		{ "--inproc", "file", "read", "0", "a", "--expect-error", "EWHAT", NULL },
		{ "--inproc", "--share", "0", "file", "read", "0", "a", NULL },
		{ "--inproc", "--share", "=/tmp", "file", "read", "0", "a", NULL },
		{ "--inproc", "--share", "x=/tmp", "file", "read", "0", "a", NULL },
		{ "--inproc", "--share", "0=/tmp", "--share-ro", "1=/tmp", "file", "read",
		  "0", "a", NULL },
		{ "--dev", "u", "--share", "0=/tmp", "file", "read", "0", "a", NULL },
		{ "--inproc", "info", "--offset", "0", NULL },
	};
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		runv(&r, bad[i]);
		if (r.rc != 2 || !starts(r.last, "RESULT fail usage: "))
			fail_msg("case %zu (%s %s %s): rc %d, last line '%s'", i,
				 bad[i][1], bad[i][2] ? bad[i][2] : "",
				 bad[i][2] && bad[i][3] ? bad[i][3] : "", r.rc, r.last);
		assert_non_null(strstr(r.err, "usage:"));
		run_free(&r);
	}
	runv(&r, (const char *[]){ "file", "--help", NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "--expect-pattern SEED[,SEED2]"));
	run_free(&r);
	runv(&r, (const char *[]){ "--help", NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "file {read|write|hold|sync}"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_then_read),
		cmocka_unit_test(test_false_sharing_halves),
		cmocka_unit_test(test_hold_sees_host_writer_after_acquire),
		cmocka_unit_test(test_hold_timeout),
		cmocka_unit_test(test_write_hold_ends_on_sigterm),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
