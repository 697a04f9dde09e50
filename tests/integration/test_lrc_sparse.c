// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A guest's file maps cost host memory for what they map and cache, not
 * for the size of the file: in a writable share a guest can make any file
 * as large as the filesystem allows (truncate -s 256G f) without writing a
 * byte. Mapping 64 KiB of such a file, at its start and at its end, keeps
 * the cache's page metadata (stats.meta_bytes) at a few page entries, and
 * the bytes written through the maps land where they belong. Map tables
 * (8 bytes per 64 KiB mapped) count against the VM's metadata cap: a VM
 * over it gets -ENOMEM for its next FILE_MAP, another VM maps on.
 */
#include <unistd.h>
#include "lrc_itest.h"

#define GiB		(1ull << 30)
#define HUGE_BYTES	(256 * GiB)
/* A page entry is well under 1 KiB: two of them, with room to spare. */
#define META_SMALL	(16 * KiB)

struct sfx {
	struct lrc_fx fx;
	struct lrc_guest a, b;
};

static int setup(void **state)
{
	struct sfx *t = calloc(1, sizeof(*t));
	char p[256];
	int fd;

	assert_non_null(t);
	lrc_fx_init(&t->fx, 128 * MiB, 0);
	lrc_mkdir(&t->fx, "s");
	/* Sparse: no block is written, the filesystem holds none. */
	fd = open(lrc_path(&t->fx, "s/huge", p, sizeof(p)),
		  O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)HUGE_BYTES), 0);
	close(fd);
	lrc_guest_init(&t->fx, &t->a, "a", "s");
	lrc_guest_init(&t->fx, &t->b, "b", "s");
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct sfx *t = *state;

	lrc_guest_fini(&t->a);
	lrc_guest_fini(&t->b);
	lrc_fx_fini(&t->fx);
	free(t);
	return 0;
}

/* The file's bytes [off, off + len) as pread(2) sees them. */
static void file_read(struct sfx *t, uint64_t off, void *buf, size_t len)
{
	char p[256];
	int fd;

	fd = open(lrc_path(&t->fx, "s/huge", p, sizeof(p)), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void test_sparse_huge_file(void **state)
{
	struct sfx *t = *state;
	struct vg_lrc_stats st;
	uint8_t want[GPAGE], got[GPAGE];
	uint64_t va0, va1, end = HUGE_BYTES - GPAGE;
	struct stat sb;
	char p[256];

	assert_int_equal(vgmem_map_file(t->a.dev, 0, "huge", 0, GPAGE,
					VGMEM_FILE_RW, &va0), 0);
	lrc_stats(&t->fx, &st);
	assert_int_equal(st.files, 1);
	print_message("page metadata after the map: %llu bytes\n",
		      (unsigned long long)st.meta_bytes);
	if (st.meta_bytes > META_SMALL)
		fail_msg("a 64 KiB map of a 256 GiB file: %llu bytes of page "
			 "metadata", (unsigned long long)st.meta_bytes);
	assert_int_equal(vgmem_map_file(t->a.dev, 0, "huge", end, GPAGE,
					VGMEM_FILE_RW, &va1), 0);

	/* Written through both maps and synced: the file has the bytes. */
	assert_int_equal(vgmem_acquire(t->a.dev, va0, 0), 0);
	assert_int_equal(vgmem_acquire(t->a.dev, va1, 0), 0);
	assert_int_equal(vgmem_memset(t->a.ch, va0, GPAGE, 0x5a5a5a5a), 0);
	assert_int_equal(vgmem_memset(t->a.ch, va1, GPAGE, 0xa5a5a5a5), 0);
	assert_int_equal(vgmem_file_sync(t->a.dev, va0, 0), 0);
	assert_int_equal(vgmem_file_sync(t->a.dev, va1, 0), 0);
	lrc_stats(&t->fx, &st);
	/* The two GPU pages cached, nothing else. */
	print_message("page metadata with two GPU pages cached: %llu bytes\n",
		      (unsigned long long)st.meta_bytes);
	assert_int_equal(st.pages, 2 * 16);
	if (st.meta_bytes > META_SMALL)
		fail_msg("two cached GPU pages of a 256 GiB file: %llu bytes "
			 "of page metadata", (unsigned long long)st.meta_bytes);
	memset(want, 0x5a, sizeof(want));
	file_read(t, 0, got, sizeof(got));
	assert_memory_equal(got, want, sizeof(want));
	memset(want, 0xa5, sizeof(want));
	file_read(t, end, got, sizeof(got));
	assert_memory_equal(got, want, sizeof(want));
	/* Still sparse and as large as before. */
	assert_int_equal(stat(lrc_path(&t->fx, "s/huge", p, sizeof(p)), &sb), 0);
	assert_int_equal((uint64_t)sb.st_size, HUGE_BYTES);
	assert_true((uint64_t)sb.st_blocks * 512 < 64 * MiB);

	assert_int_equal(vgmem_unmap_file(t->a.dev, va0), 0);
	assert_int_equal(vgmem_unmap_file(t->a.dev, va1), 0);
	lrc_stats(&t->fx, &st);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.meta_bytes, 0);
}

/*
 * A 1 MiB cap: a 16 GiB map (a 2 MiB table) is refused, one 4 GiB map
 * (512 KiB) fits and a second does not; B maps 4 GiB all the same and
 * writes through it; A's unmap gives its room back.
 */
static void test_map_cap(void **state)
{
	struct sfx *t = *state;
	struct vg_lrc *lrc = vg_host_lrc(t->fx.h);
	uint64_t va = 0x33, vb, sum, want;
	uint8_t buf[GPAGE];

	assert_int_equal(vg_lrc_set_meta_max(lrc, 1 * MiB), 0);
	assert_int_equal(vgmem_map_file(t->a.dev, 0, "huge", 0, 16 * GiB,
					VGMEM_FILE_RO, &va), -ENOMEM);
	assert_int_equal(va, 0x33);
	assert_int_equal(vgmem_map_file(t->a.dev, 0, "huge", 0, 4 * GiB,
					VGMEM_FILE_RO, &va), 0);
	assert_int_equal(vgmem_map_file(t->a.dev, 0, "huge", 4 * GiB, 4 * GiB,
					VGMEM_FILE_RO, &vb), -ENOMEM);

	assert_int_equal(vgmem_map_file(t->b.dev, 0, "huge", 4 * GiB, 4 * GiB,
					VGMEM_FILE_RW, &vb), 0);
	assert_int_equal(vgmem_acquire(t->b.dev, vb, 0), 0);
	assert_int_equal(vgmem_memset(t->b.ch, vb + GPAGE, GPAGE, 0x11111111), 0);
	assert_int_equal(vgmem_release(t->b.dev, vb, 0), 0);
	memset(buf, 0x11, sizeof(buf));
	want = lrc_fnv(buf, sizeof(buf));
	assert_int_equal(lrc_gpu_sum(&t->b, vb + GPAGE, GPAGE, &sum), 0);
	assert_int_equal(sum, want);

	/* A's unmap gives its room back: it maps and reads B's bytes. */
	assert_int_equal(vgmem_unmap_file(t->a.dev, va), 0);
	assert_int_equal(vgmem_map_file(t->a.dev, 0, "huge", 4 * GiB, 4 * GiB,
					VGMEM_FILE_RO, &va), 0);
	assert_int_equal(vgmem_acquire(t->a.dev, va, 0), 0);
	assert_int_equal(lrc_gpu_sum(&t->a, va + GPAGE, GPAGE, &sum), 0);
	assert_int_equal(sum, want);
	assert_int_equal(vgmem_unmap_file(t->a.dev, va), 0);
	assert_int_equal(vgmem_unmap_file(t->b.dev, vb), 0);
	memset(buf, 0, sizeof(buf));
	file_read(t, 4 * GiB + GPAGE, buf, sizeof(buf));
	assert_int_equal(lrc_fnv(buf, sizeof(buf)), want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sparse_huge_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_map_cap, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
