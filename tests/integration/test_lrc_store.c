// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace host's LRC file store on real files in a temporary
 * directory: beneath-the-root resolution refuses every way out of a share
 * (.., absolute paths, symlinks inside and outside, magic links) with
 * -EACCES and what is no regular file with -EINVAL, reads past the end zero-fill, the change counter moves on
 * a write by another descriptor, and a writable open of a file without
 * write permission is refused even for root.
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
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "host-module/user/lrc_store.h"

struct fx {
	char dir[64];		/* the temporary directory */
	char share[96];		/* dir/share: the share root */
	int root;
};

static void put_file(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char p[256];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/vg_lrc_store_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->share, sizeof(f->share), "%s/share", f->dir);
	assert_int_equal(mkdir(f->share, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub", f->share);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/data", f->share);
	put_file(p, "0123456789", 10, 0644);
	snprintf(p, sizeof(p), "%s/sub/inner", f->share);
	put_file(p, "inner", 5, 0644);
	snprintf(p, sizeof(p), "%s/ro", f->share);
	put_file(p, "readonly", 8, 0444);
	snprintf(p, sizeof(p), "%s/secret", f->dir);	/* outside the share */
	put_file(p, "secret", 6, 0644);
	snprintf(p, sizeof(p), "%s/link_in", f->share);
	assert_int_equal(symlink("data", p), 0);
	snprintf(p, sizeof(p), "%s/link_out", f->share);
	assert_int_equal(symlink("../secret", p), 0);
	snprintf(p, sizeof(p), "%s/link_abs", f->share);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/link_dir", f->share);
	assert_int_equal(symlink("sub", p), 0);
	snprintf(p, sizeof(p), "%s/fifo", f->share);
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(vg_ustore_root_open(f->share, &f->root), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	vg_ustore_root_close(f->root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void test_open_read(void **state)
{
	struct fx *f = *state;
	struct vg_ustore_file file;
	struct stat st;
	char buf[16];
	char p[256];

	assert_int_equal(vg_ustore_open(f->root, "data", false, &file), 0);
	snprintf(p, sizeof(p), "%s/data", f->share);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(file.dev, st.st_dev);
	assert_int_equal(file.ino, st.st_ino);
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(vg_ustore_read(&file, 4, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, "456789", 6);
	for (int i = 6; i < 16; i++)	/* past the end: zero */
		assert_int_equal(buf[i], 0);
	/* A read-only handle does not write. */
	assert_int_equal(vg_ustore_write(&file, 0, "x", 1), -EBADF);
	vg_ustore_close(&file);

	/* A ".." that stays inside the share is fine. */
	assert_int_equal(vg_ustore_open(f->root, "sub/../data", false, &file), 0);
	vg_ustore_close(&file);
	assert_int_equal(vg_ustore_open(f->root, "sub/inner", false, &file), 0);
	vg_ustore_close(&file);
}

static void test_refused(void **state)
{
	static const char *const escapes[] = {
		"../secret", "sub/../../secret", "..", "/etc/passwd",
		"link_in", "link_out", "link_abs", "link_dir/inner",
	};
	static const char *const not_files[] = { "fifo", "sub", "." };
	struct fx *f = *state;
	struct vg_ustore_file file;
	struct stat st;
	char p[256];
	size_t i;
	int r;

	for (i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		memset(&file, 0, sizeof(file));
		file.fd = -7;
		assert_int_equal(vg_ustore_open(f->root, escapes[i], false, &file),
				 -EACCES);
		assert_int_equal(file.fd, -7);	/* nothing filled in */
		assert_int_equal(vg_ustore_open(f->root, escapes[i], true, &file),
				 -EACCES);
	}
	for (i = 0; i < sizeof(not_files) / sizeof(not_files[0]); i++) {
		assert_int_equal(vg_ustore_open(f->root, not_files[i], false, &file),
				 -EINVAL);
		assert_int_equal(vg_ustore_open(f->root, not_files[i], true, &file),
				 -EINVAL);
	}
	/* A magic link of /proc (an fd of this process) is not followed. */
	snprintf(p, sizeof(p), "%s/magic", f->share);
	assert_int_equal(symlink("/proc/self/fd/0", p), 0);
	assert_int_equal(vg_ustore_open(f->root, "magic", false, &file), -EACCES);

	assert_int_equal(vg_ustore_open(f->root, "nope", false, &file), -ENOENT);
	assert_int_equal(vg_ustore_open(f->root, "", false, &file), -ENOENT);
	assert_int_equal(vg_ustore_open(f->root, NULL, false, &file), -EINVAL);
	assert_int_equal(vg_ustore_open(-1, "data", false, &file), -EINVAL);
	/* Writable open of a file nobody may write: refused, even for root. */
	assert_int_equal(vg_ustore_open(f->root, "ro", true, &file), -EACCES);
	assert_int_equal(vg_ustore_open(f->root, "ro", false, &file), 0);
	vg_ustore_close(&file);

	/* The secret is untouched. */
	snprintf(p, sizeof(p), "%s/secret", f->dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 6);

	assert_int_equal(vg_ustore_root_open("/nonexistent/dir", &r), -ENOENT);
	snprintf(p, sizeof(p), "%s/data", f->share);
	assert_int_equal(vg_ustore_root_open(p, &r), -ENOTDIR);
}

static void test_write_fsync_getattr(void **state)
{
	struct fx *f = *state;
	struct vg_ustore_file file;
	uint64_t size, ch1, ch2;
	char buf[8];
	char p[256];
	int fd;

	assert_int_equal(vg_ustore_open(f->root, "data", true, &file), 0);
	assert_int_equal(vg_ustore_getattr(&file, &size, &ch1), 0);
	assert_int_equal(size, 10);
	assert_int_equal(vg_ustore_write(&file, 8, "abcd", 4), 0);
	assert_int_equal(vg_ustore_fsync(&file), 0);
	assert_int_equal(vg_ustore_getattr(&file, &size, &ch2), 0);
	assert_int_equal(size, 12);
	assert_int_equal(vg_ustore_read(&file, 6, buf, 6), 0);
	assert_memory_equal(buf, "67abcd", 6);

	/* Another writer (a host process): the counter moves. */
	/* No sleep: a racily clean counter never repeats (lrc_store.c). */
	snprintf(p, sizeof(p), "%s/data", f->share);
	fd = open(p, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "Z", 1, 0), 1);
	close(fd);
	assert_int_equal(vg_ustore_getattr(&file, &size, &ch1), 0);
	assert_true(ch1 != ch2);
	assert_int_equal(vg_ustore_read(&file, 0, buf, 1), 0);
	assert_int_equal(buf[0], 'Z');
	vg_ustore_close(&file);
	assert_int_equal(file.fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_fsync_getattr, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
