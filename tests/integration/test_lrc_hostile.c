// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Hostile FILE_* control commands against the LRC file cache: every field
 * of every command, paths that leave the share (.., absolute, symlinks
 * inside and outside), other VMs' shares, read-only files and shares,
 * ranges and VAs that are not file maps. Each is refused with its
 * documented code (include/uapi/vgmem.h, docs/abi.md) and changes nothing:
 * no file is cached, no VRAM used, no VA taken (the next good map gets the
 * VA it would have got), the out field untouched, files unchanged.
 */
#include "lrc_itest.h"

#define FILE_BYTES	(1 * MiB)

struct hfx {
	struct lrc_fx fx;
	struct lrc_guest a, b;	/* a: shares 0 (sa) and 1 (sa, read-only); b: 5 (sb) */
	uint8_t *data;
};

static int setup(void **state)
{
	struct hfx *t = calloc(1, sizeof(*t));
	char p[256], q[256];

	assert_non_null(t);
	lrc_fx_init(&t->fx, 128 * MiB, 0);
	lrc_mkdir(&t->fx, "sa");
	lrc_mkdir(&t->fx, "sa/sub");
	lrc_mkdir(&t->fx, "sb");
	t->data = malloc(FILE_BYTES);
	assert_non_null(t->data);
	lrc_pattern(t->data, FILE_BYTES, 3);
	lrc_put(&t->fx, "sa/data", t->data, FILE_BYTES, 0644);
	lrc_put(&t->fx, "sa/sub/inner", t->data, 100000, 0644);
	lrc_put(&t->fx, "sa/ro", t->data, FILE_BYTES, 0444);
	lrc_put(&t->fx, "sb/bfile", t->data, FILE_BYTES, 0644);
	lrc_put(&t->fx, "outside", t->data, FILE_BYTES, 0644);
	assert_int_equal(symlink("data", lrc_path(&t->fx, "sa/link_in", p,
						  sizeof(p))), 0);
	assert_int_equal(symlink("../outside", lrc_path(&t->fx, "sa/link_out", p,
							sizeof(p))), 0);
	assert_int_equal(symlink(lrc_path(&t->fx, "sb/bfile", q, sizeof(q)),
				 lrc_path(&t->fx, "sa/link_abs", p, sizeof(p))), 0);
	assert_int_equal(symlink("sub", lrc_path(&t->fx, "sa/link_dir", p,
						 sizeof(p))), 0);
	assert_int_equal(symlink("../sb", lrc_path(&t->fx, "sa/link_b", p,
						   sizeof(p))), 0);

	lrc_guest_init(&t->fx, &t->a, "a", "sa");
	assert_int_equal(vg_host_guest_set_share_ro(t->a.g, 1,
			 lrc_path(&t->fx, "sa", p, sizeof(p))), 0);
	lrc_guest_init(&t->fx, &t->b, "b", NULL);
	assert_int_equal(vg_host_guest_set_share(t->b.g, 5,
			 lrc_path(&t->fx, "sb", p, sizeof(p))), 0);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct hfx *t = *state;

	lrc_guest_fini(&t->a);
	lrc_guest_fini(&t->b);
	free(t->data);
	lrc_fx_fini(&t->fx);
	free(t);
	return 0;
}

static void map_cmd(struct vgmem_ctrl *c, uint32_t share, const char *path,
		    uint64_t off, uint64_t len, uint32_t flags)
{
	memset(c, 0, sizeof(*c));
	c->op = VGMEM_CTRL_FILE_MAP;
	c->file_map.share_id = share;
	c->file_map.offset = off;
	c->file_map.length = len;
	c->file_map.flags = flags;
	snprintf(c->file_map.path, sizeof(c->file_map.path), "%s", path);
	c->file_map.va = 0x5a5a5a5a5a5a5a5aull;	/* out: must stay on failure */
}

/* Run a FILE_MAP that must fail with err and leave its out field alone. */
static void map_refused(struct lrc_guest *lg, struct vgmem_ctrl *c, int err,
			const char *what)
{
	int ret = vgmem_ctrl(lg->dev, c);

	if (ret != err)
		fail_msg("%s: got %d, want %d", what, ret, err);
	assert_true(c->file_map.va == 0x5a5a5a5a5a5a5a5aull);
}

static void assert_untouched(struct hfx *t)
{
	struct vg_lrc_stats st;
	uint8_t *buf = malloc(FILE_BYTES);
	const char *names[] = { "sa/data", "sa/ro", "sb/bfile", "outside" };
	size_t i;

	assert_non_null(buf);
	lrc_stats(&t->fx, &st);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.vram_used, 0);
	assert_int_equal(st.pages, 0);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(lrc_get(&t->fx, names[i], buf, FILE_BYTES),
				 FILE_BYTES);
		assert_memory_equal(buf, t->data, FILE_BYTES);
	}
	free(buf);
}

/* The VA a good map gets, then unmapped: first fit gives it back. */
static uint64_t probe_va(struct lrc_guest *lg)
{
	uint64_t va;

	assert_int_equal(vgmem_map_file(lg->dev, 0, "data", 0, GPAGE,
					VGMEM_FILE_RO, &va), 0);
	assert_int_equal(vgmem_unmap_file(lg->dev, va), 0);
	return va;
}

static void test_map_fields(void **state)
{
	struct hfx *t = *state;
	struct vgmem_ctrl c;
	uint64_t va0 = probe_va(&t->a);

	/* The path field: no NUL in it, bytes after the NUL, empty. */
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO);
	memset(c.file_map.path, 'a', sizeof(c.file_map.path));
	map_refused(&t->a, &c, -EINVAL, "no NUL");
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO);
	c.file_map.path[VGMEM_FILE_PATH_MAX - 1] = 'x';
	map_refused(&t->a, &c, -EINVAL, "byte after NUL");
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO);
	memcpy(c.file_map.path, "data\0../outside", 16);
	map_refused(&t->a, &c, -EINVAL, "hidden path after NUL");
	map_cmd(&c, 0, "", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EINVAL, "empty path");
	/* Reserved and the bytes of the slot past the struct. */
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO);
	c.file_map.ino = 1;
	map_refused(&t->a, &c, -EINVAL, "ino without VGMEM_FILE_INO");
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_INO);
	map_refused(&t->a, &c, -EINVAL, "FILE_INO without RO or RW");
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO);
	c.raw[sizeof(c.raw) - 1] = 1;
	map_refused(&t->a, &c, -EINVAL, "slot tail");
	/* Flags: none, both, unknown. */
	map_cmd(&c, 0, "data", 0, GPAGE, 0);
	map_refused(&t->a, &c, -EINVAL, "flags 0");
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO | VGMEM_FILE_RW);
	map_refused(&t->a, &c, -EINVAL, "flags RO|RW");
	map_cmd(&c, 0, "data", 0, GPAGE, 1u << 7);
	map_refused(&t->a, &c, -EINVAL, "unknown flag");
	/* Offsets and lengths. */
	map_cmd(&c, 0, "data", 4096, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EINVAL, "offset unaligned");
	map_cmd(&c, 0, "data", 0, 4096, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EINVAL, "length unaligned");
	map_cmd(&c, 0, "data", 0, 0, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EINVAL, "length 0");
	map_cmd(&c, 0, "data", 0, VGMEM_BO_MAX_SIZE + GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EFBIG, "length > BO max");
	map_cmd(&c, 0, "data", 0, FILE_BYTES + GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EFBIG, "past the file");
	map_cmd(&c, 0, "data", FILE_BYTES, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EFBIG, "offset at the end");
	map_cmd(&c, 0, "data", ~0ull - GPAGE + 1, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EFBIG, "offset overflow");
	/* A 100000-byte file: one GPU page past its rounded size. */
	map_cmd(&c, 0, "sub/inner", 0, 3 * GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EFBIG, "past the rounded size");
	/* libvgmem's own check of a path that does not fit. */
	{
		char longp[VGMEM_FILE_PATH_MAX + 1];
		uint64_t va = 7;

		memset(longp, 'a', sizeof(longp) - 1);
		longp[sizeof(longp) - 1] = 0;
		assert_int_equal(vgmem_map_file(t->a.dev, 0, longp, 0, GPAGE,
						VGMEM_FILE_RO, &va), -ENAMETOOLONG);
		assert_int_equal(va, 7);
	}
	assert_untouched(t);
	assert_true(probe_va(&t->a) == va0);
}

/*
 * VGMEM_FILE_INO: the map is made only if the path still names the file
 * the guest was handed (its inode number), so a rename racing with the
 * guest driver's MAP_FD cannot swap in another file of the share.
 */
static void test_map_ino(void **state)
{
	struct hfx *t = *state;
	struct vgmem_ctrl c;
	struct stat st;
	char p[256], q[256];

	assert_int_equal(stat(lrc_path(&t->fx, "sa/data", p, sizeof(p)), &st), 0);
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO | VGMEM_FILE_INO);
	c.file_map.ino = st.st_ino + 1;
	map_refused(&t->a, &c, -ESTALE, "another file's inode number");
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RW | VGMEM_FILE_INO);
	c.file_map.ino = 0;
	map_refused(&t->a, &c, -ESTALE, "inode number 0");
	assert_untouched(t);
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO | VGMEM_FILE_INO);
	c.file_map.ino = st.st_ino;
	assert_int_equal(vgmem_ctrl(t->a.dev, &c), 0);
	assert_int_equal(vgmem_unmap_file(t->a.dev, c.file_map.va), 0);
	/* The same name for a new file: the old number no longer fits. */
	assert_int_equal(rename(p, lrc_path(&t->fx, "sa/data.old", q, sizeof(q))), 0);
	lrc_put(&t->fx, "sa/data", t->data, FILE_BYTES, 0644);
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO | VGMEM_FILE_INO);
	c.file_map.ino = st.st_ino;
	map_refused(&t->a, &c, -ESTALE, "renamed over");
}

static void test_paths(void **state)
{
	static const char *const escapes[] = {
		"../outside", "sub/../../outside", "..", "../sb/bfile",
		"link_in", "link_out", "link_abs", "link_dir/inner",
		"link_b/bfile", "./link_in", "sub/../link_out",
	};
	struct hfx *t = *state;
	struct vgmem_ctrl c;
	char abs[256];
	uint64_t va0 = probe_va(&t->a);
	size_t i;

	for (i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		map_cmd(&c, 0, escapes[i], 0, GPAGE, VGMEM_FILE_RO);
		map_refused(&t->a, &c, -EACCES, escapes[i]);
		map_cmd(&c, 0, escapes[i], 0, GPAGE, VGMEM_FILE_RW);
		map_refused(&t->a, &c, -EACCES, escapes[i]);
	}
	/* Absolute paths, even to a file of the VM's own share. */
	map_cmd(&c, 0, lrc_path(&t->fx, "sa/data", abs, sizeof(abs)), 0, GPAGE,
		VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EACCES, "absolute, own share");
	map_cmd(&c, 0, "/etc/passwd", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EACCES, "/etc/passwd");
	/* No such file, no such share, not a regular file. */
	map_cmd(&c, 0, "nope", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -ENOENT, "no such file");
	map_cmd(&c, 0, "sub/nope/x", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -ENOENT, "no such dir");
	map_cmd(&c, 9, "data", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -ENOENT, "no such share");
	map_cmd(&c, 0, "sub", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -EINVAL, "a directory");
	/* Read-only file, read-only share: RW refused, RO fine. */
	map_cmd(&c, 0, "ro", 0, GPAGE, VGMEM_FILE_RW);
	map_refused(&t->a, &c, -EACCES, "RW map of a 0444 file");
	map_cmd(&c, 1, "data", 0, GPAGE, VGMEM_FILE_RW);
	map_refused(&t->a, &c, -EACCES, "RW map on a RO share");
	assert_untouched(t);
	assert_true(probe_va(&t->a) == va0);

	map_cmd(&c, 1, "data", 0, GPAGE, VGMEM_FILE_RO);
	assert_int_equal(vgmem_ctrl(t->a.dev, &c), 0);
	assert_int_equal(vgmem_unmap_file(t->a.dev, c.file_map.va), 0);
	map_cmd(&c, 0, "ro", 0, GPAGE, VGMEM_FILE_RO);
	assert_int_equal(vgmem_ctrl(t->a.dev, &c), 0);
	assert_int_equal(vgmem_unmap_file(t->a.dev, c.file_map.va), 0);
	/* A ".." that stays inside the share is a path like another. */
	map_cmd(&c, 0, "sub/../data", 0, GPAGE, VGMEM_FILE_RO);
	assert_int_equal(vgmem_ctrl(t->a.dev, &c), 0);
	assert_int_equal(vgmem_unmap_file(t->a.dev, c.file_map.va), 0);
}

/* A VM never reaches another VM's share, nor its maps. */
static void test_other_vm(void **state)
{
	struct hfx *t = *state;
	struct vgmem_ctrl c;
	uint64_t va_b, va_a, sum;

	/* b's share id 5 means nothing to a; a's share 0 nothing to b. */
	map_cmd(&c, 5, "bfile", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->a, &c, -ENOENT, "a names b's share id");
	map_cmd(&c, 0, "data", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->b, &c, -ENOENT, "b names a's share id");
	map_cmd(&c, 5, "../sa/data", 0, GPAGE, VGMEM_FILE_RO);
	map_refused(&t->b, &c, -EACCES, "b climbs into a's share");
	assert_untouched(t);

	/* Both map; neither's VA means anything to the other. */
	assert_int_equal(vgmem_map_file(t->b.dev, 5, "bfile", 0, GPAGE,
					VGMEM_FILE_RW, &va_b), 0);
	assert_int_equal(vgmem_map_file(t->a.dev, 0, "data", 0, GPAGE,
					VGMEM_FILE_RW, &va_a), 0);
	if (va_a != va_b) {
		assert_int_equal(vgmem_unmap_file(t->a.dev, va_b), -EBADF);
		assert_int_equal(vgmem_acquire(t->a.dev, va_b, 0), -EBADF);
	}
	/* a's GPU reads its own file, not b's, whatever the VAs. */
	assert_int_equal(vgmem_acquire(t->a.dev, va_a, 0), 0);
	assert_int_equal(lrc_gpu_sum(&t->a, va_a, GPAGE, &sum), 0);
	assert_true(sum == lrc_fnv(t->data, GPAGE));
	assert_int_equal(vgmem_unmap_file(t->a.dev, va_a), 0);
	assert_int_equal(vgmem_unmap_file(t->b.dev, va_b), 0);
	assert_int_equal(vgmem_unmap_file(t->b.dev, va_b), -EBADF);
}

static void range_cmd(struct vgmem_ctrl *c, uint32_t op, uint64_t va,
		      uint64_t len)
{
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->file.va = va;
	c->file.length = len;
}

static void test_ranges(void **state)
{
	static const uint32_t ops[] = {
		VGMEM_CTRL_FILE_ACQUIRE, VGMEM_CTRL_FILE_RELEASE,
		VGMEM_CTRL_FILE_SYNC,
	};
	struct hfx *t = *state;
	struct vg_lrc_stats st0, st1;
	struct vgmem_ctrl c;
	uint64_t va, bo;
	size_t i;

	assert_int_equal(vgmem_bo_alloc(t->a.dev, 2 * MiB, &bo), 0);
	assert_int_equal(vgmem_map_file(t->a.dev, 0, "data", 0, 4 * GPAGE,
					VGMEM_FILE_RW, &va), 0);
	assert_int_equal(vgmem_acquire(t->a.dev, va, 0), 0);
	assert_int_equal(vgmem_memset(t->a.ch, va, GPAGE, 0x01010101), 0);
	lrc_stats(&t->fx, &st0);

	/* Unmap: a BO's VA, the middle of a map, non-zero fields. */
	assert_int_equal(vgmem_unmap_file(t->a.dev, bo), -EBADF);
	assert_int_equal(vgmem_unmap_file(t->a.dev, va + GPAGE), -EBADF);
	assert_int_equal(vgmem_unmap_file(t->a.dev, 0), -EBADF);
	range_cmd(&c, VGMEM_CTRL_FILE_UNMAP, va, GPAGE);
	assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
	range_cmd(&c, VGMEM_CTRL_FILE_UNMAP, va, 0);
	c.file.flags = 1;
	assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
	range_cmd(&c, VGMEM_CTRL_FILE_UNMAP, va, 0);
	c.file.rsvd = 1;
	assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		range_cmd(&c, ops[i], bo, 0);
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EBADF);
		range_cmd(&c, ops[i], va + 4 * GPAGE, 0);	/* just past it */
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EBADF);
		range_cmd(&c, ops[i], va + 4096, 0);
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
		range_cmd(&c, ops[i], va, 4096);
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
		range_cmd(&c, ops[i], va, 5 * GPAGE);		/* leaves the map */
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
		range_cmd(&c, ops[i], va + GPAGE, ~0ull - GPAGE + 1);
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
		range_cmd(&c, ops[i], va, 0);
		c.file.flags = 2;
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
		range_cmd(&c, ops[i], va, 0);
		c.file.rsvd = 3;
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
		range_cmd(&c, ops[i], va, 0);
		c.raw[100] = 1;
		assert_int_equal(vgmem_ctrl(t->a.dev, &c), -EINVAL);
	}
	/* Nothing was released, synced or unmapped by any of them. */
	lrc_stats(&t->fx, &st1);
	assert_int_equal(st1.releases, st0.releases);
	assert_int_equal(st1.acquires, st0.acquires);
	assert_int_equal(st1.writeback_bytes, st0.writeback_bytes);
	assert_int_equal(st1.released_pages, st0.released_pages);
	assert_int_equal(st1.files, 1);
	assert_int_equal(vgmem_unmap_file(t->a.dev, va), 0);
	assert_int_equal(vgmem_bo_free(t->a.dev, bo), 0);
}

/* A GPU write through a read-only map faults the channel (VA error). */
static void test_ro_map_write(void **state)
{
	struct hfx *t = *state;
	struct vgmem_chan *ch;
	uint64_t va, addr = 0;
	uint8_t buf[64];

	assert_int_equal(vgmem_map_file(t->a.dev, 0, "data", 0, GPAGE,
					VGMEM_FILE_RO, &va), 0);
	assert_int_equal(vgmem_chan_create(t->a.dev, 16, 0, 0, &ch), 0);
	assert_int_equal(vgmem_read(ch, va, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, t->data, sizeof(buf));
	assert_int_equal(vgmem_memset(ch, va, GPAGE, 0), -EIO);
	assert_int_equal(vgmem_chan_error(ch, &addr), VGMEM_CHAN_ERR_VA);
	assert_true(addr >= va && addr < va + GPAGE);
	vgmem_chan_destroy(ch);
	assert_int_equal(vgmem_unmap_file(t->a.dev, va), 0);
	{
		uint8_t *f = malloc(FILE_BYTES);

		assert_non_null(f);
		assert_int_equal(lrc_get(&t->fx, "sa/data", f, FILE_BYTES),
				 FILE_BYTES);
		assert_memory_equal(f, t->data, FILE_BYTES);
		free(f);
	}
}

/*
 * A VM with no share, under the paging model (whose BOs share the GPU's
 * fault dispatch with the file maps): every FILE_* command is validated
 * the same and refused, a map as "no such share", a BO's address as no
 * file map.
 */
static void test_no_context(void **state)
{
	struct vg_host_config cfg;
	struct vg_host_guest *g;
	struct vgmem_dev *dev;
	struct vg_host *h;
	struct vgmem_ctrl c;
	uint64_t va = 3, bo;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 64 * MiB;
	cfg.gpu.name = "noctx";
	cfg.gpu.no_return_worker = true;
	cfg.model = "paging";
	assert_int_equal(vg_host_create(&cfg, &h), 0);
	assert_int_equal(vg_host_guest_create(h, "g", 0, 16 * MiB, &g), 0);
	dev = vg_host_guest_dev(g);
	assert_non_null(vg_lrc_vm_ctx(vg_host_guest_vm(g)));
	assert_int_equal(vgmem_map_file(dev, 0, "x", 0, GPAGE, VGMEM_FILE_RO,
					&va), -ENOENT);
	assert_int_equal(va, 3);
	map_cmd(&c, 0, "x", 0, GPAGE, VGMEM_FILE_RO);
	c.file_map.ino = 1;
	map_refused(&(struct lrc_guest){ .dev = dev }, &c, -EINVAL, "ino without FILE_INO, no ctx");
	assert_int_equal(vgmem_bo_alloc(dev, 2 * MiB, &bo), 0);
	assert_int_equal(vgmem_unmap_file(dev, bo), -EBADF);
	assert_int_equal(vgmem_acquire(dev, bo, 0), -EBADF);
	assert_int_equal(vgmem_release(dev, bo, 0), -EBADF);
	assert_int_equal(vgmem_file_sync(dev, bo, 0), -EBADF);
	assert_int_equal(vgmem_acquire(dev, bo + 4096, 0), -EINVAL);
	assert_int_equal(vgmem_bo_free(dev, bo), 0);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_map_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_ino, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_vm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ro_map_write, setup, teardown),
		cmocka_unit_test(test_no_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
