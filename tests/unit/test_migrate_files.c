// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * File maps in a migration (core/mig_save.c FMAP records, the LRC cache's
 * mig_next and map_at): the source writes the VM's writes to the file
 * first, the destination maps the same file of the same share at the same
 * VA, and the guest reads there what it wrote here. Both hosts see one
 * directory, as two hosts of a virtio-fs share on shared storage do.
 * Refused, each with the destination left empty: no such share there, a
 * path that leaves the share, another file at the path (its inode).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "host-module/user/host.h"
#include "host-module/core/vg.h"

#define MiB		(1ull << 20)
#define KiB		(1ull << 10)
#define FILE_SIZE	(256 * KiB)
#define MAP		(128 * KiB)	/* the file's second half */
#define SEED		0xf11e5u
#define SHARE		3u
#define CAP		(32 * MiB)

struct side {
	struct vg_host *h;
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
};

static char dir[64];

static void side_init(struct side *s, bool share, bool chan)
{
	struct vg_host_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 8 * MiB;
	cfg.gpu.name = "files";
	cfg.gpu.chunk_size = 256 * KiB;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	cfg.lrc_vram_budget = 2 * MiB;
	cfg.lrc_host_budget = 4 * MiB;
	assert_int_equal(vg_host_create(&cfg, &s->h), 0);
	assert_int_equal(vg_host_guest_create(s->h, "tenant", 0, 4 * MiB, &s->g), 0);
	if (share)
		assert_int_equal(vg_host_guest_set_share_tag(s->g, SHARE, dir, false,
							     "data"), 0);
	s->ch = NULL;
	/* A destination loads into an empty VM: its channel comes after. */
	if (chan)
		assert_int_equal(vgmem_chan_create(vg_host_guest_dev(s->g), 16, 4096,
						   64 * KiB, &s->ch), 0);
}

static void side_free(struct side *s)
{
	if (s->ch)
		vgmem_chan_destroy(s->ch);
	vg_host_destroy(s->h);
}

static void write_file(const char *name, uint8_t fill)
{
	char path[128];
	uint8_t *b = malloc(FILE_SIZE);
	int fd;

	assert_non_null(b);
	memset(b, fill, FILE_SIZE);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, FILE_SIZE), FILE_SIZE);
	close(fd);
	free(b);
}

static uint8_t *read_file(const char *name)
{
	char path[128];
	uint8_t *b = malloc(FILE_SIZE);
	int fd;

	assert_non_null(b);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, b, FILE_SIZE), FILE_SIZE);
	close(fd);
	return b;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vgmig-files.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* The source's stream of a frozen VM; the source stays frozen. */
static uint8_t *save(struct side *s, size_t *len)
{
	struct vg_mig_save *sv;
	uint8_t *buf = malloc(CAP);
	ssize_t n;

	assert_non_null(buf);
	*len = 0;
	assert_int_equal(vg_vm_freeze(vg_host_guest_vm(s->g)), 0);
	assert_int_equal(vg_mig_save_begin(vg_host_guest_vm(s->g), NULL, &sv), 0);
	while ((n = vg_mig_save_read(sv, buf + *len, 4093)) > 0)
		*len += (size_t)n;
	assert_int_equal(n, 0);
	vg_mig_save_end(sv);
	return buf;
}

static int load(struct side *d, const uint8_t *buf, size_t len, char *why,
		size_t whylen)
{
	struct vg_mig_load *l;
	ssize_t r;
	int err;

	assert_int_equal(vg_mig_load_begin(vg_host_guest_vm(d->g), NULL, &l), 0);
	r = vg_mig_load_write(l, buf, len);
	snprintf(why, whylen, "%s", vg_mig_load_error(l));
	err = vg_mig_load_finish(l);
	if (!err)
		vg_vm_thaw(vg_host_guest_vm(d->g));
	assert_true(err || r == (ssize_t)len);
	return err;
}

/* Offset of the k-th record of type t in a stream (a test's parser). */
static size_t rec_at(const uint8_t *b, size_t len, uint32_t t, int k)
{
	size_t off = 32;

	while (off + 16 <= len) {
		uint32_t type;
		uint64_t l;

		memcpy(&type, b + off, 4);
		memcpy(&l, b + off + 8, 8);
		if (type == t && k-- == 0)
			return off;
		off += 16 + l;
	}
	return 0;
}

static uint64_t allocated(struct side *s)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(vg_host_guest_vm(s->g), &st);
	return st.allocated;
}

static void test_file_map_moves(void **state)
{
	struct side src, dst, bare;
	uint64_t va, va_bo;
	uint8_t *stream, *bad, *f, *want, *got;
	size_t len, fm;
	char why[160];
	uint32_t i;

	(void)state;
	write_file("model.bin", 0x11);
	side_init(&src, true, true);
	/* A BO beside the map, and the map: the guest writes half of it. */
	assert_int_equal(vgmem_bo_alloc(vg_host_guest_dev(src.g), 64 * KiB, &va_bo), 0);
	assert_int_equal(vgmem_fill_pattern(src.ch, va_bo, 64 * KiB, 7), 0);
	assert_int_equal(vgmem_map_file(vg_host_guest_dev(src.g), SHARE, "model.bin",
					MAP, MAP, VGMEM_FILE_RW, &va), 0);
	assert_int_equal(vgmem_fill_pattern(src.ch, va, 64 * KiB, SEED), 0);
	/* Not released: the migration writes it to the file itself. */
	want = malloc(MAP);
	assert_non_null(want);
	assert_int_equal(vgmem_read(src.ch, va, want, MAP), 0);

	stream = save(&src, &len);
	fm = rec_at(stream, len, 7, 0);
	assert_true(fm > 0);
	assert_int_equal(rec_at(stream, len, 7, 1), 0);	/* one map, one record */
	/* The file holds the guest's writes now, the rest as it was. */
	f = read_file("model.bin");
	assert_memory_equal(f + MAP, want, MAP);
	for (i = 0; i < MAP; i++)
		if (f[i] != 0x11)
			fail_msg("byte %u before the map changed: %#x", i, f[i]);
	free(f);

	/* No such share here: refused, nothing left. */
	side_init(&bare, false, false);
	assert_int_equal(load(&bare, stream, len, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no such share"));
	assert_int_equal(allocated(&bare), 0);
	side_free(&bare);

	side_init(&dst, true, false);
	/* A path that leaves the share, then a path to another file. */
	bad = malloc(len + 16);
	assert_non_null(bad);
	memcpy(bad, stream, len);
	memcpy(bad + fm + 16 + 40, "../x/model", 9);	/* same length as before */
	assert_int_equal(load(&dst, bad, len, why, sizeof(why)), -EACCES);
	assert_int_equal(allocated(&dst), 0);
	write_file("other.bin", 0x22);
	memcpy(bad, stream, len);
	memcpy(bad + fm + 16 + 40, "other.bin", 9);
	assert_int_equal(load(&dst, bad, len, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "another file"));
	assert_int_equal(allocated(&dst), 0);
	free(bad);

	/* The real one: the map at its VA, the guest's bytes in it. */
	assert_int_equal(load(&dst, stream, len, why, sizeof(why)), 0);
	assert_int_equal(vgmem_chan_create(vg_host_guest_dev(dst.g), 16, 4096,
					   64 * KiB, &dst.ch), 0);
	got = malloc(MAP);
	assert_non_null(got);
	assert_int_equal(vgmem_read(dst.ch, va, got, MAP), 0);
	assert_memory_equal(got, want, MAP);
	/* And it works there: unmapped, it is the file's again. */
	assert_int_equal(vgmem_fill_pattern(dst.ch, va, 64 * KiB, SEED + 1), 0);
	assert_int_equal(vgmem_unmap_file(vg_host_guest_dev(dst.g), va), 0);
	assert_int_equal(vg_gpu_check(vg_host_gpu(dst.h)), 0);

	vg_vm_thaw(vg_host_guest_vm(src.g));
	side_free(&dst);
	side_free(&src);
	free(got);
	free(want);
	free(stream);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_map_moves),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
