/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers of the LRC file-cache integration tests (test_lrc_*.c): a
 * temporary directory with share directories, real files in it, a host
 * whose guests have those shares, and GPU work over file maps through
 * libvgmem over the in-process transport with the real software GPU.
 */
#ifndef VGMEM_LRC_ITEST_H
#define VGMEM_LRC_ITEST_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "itest.h"
#include "tests/unit/model_fixture.h"
#include "host-module/core/lrc/lrc.h"

#define KiB		(1ull << 10)
#define GPAGE		VGMEM_FILE_ALIGN

struct lrc_fx {
	char dir[64];			/* mkdtemp */
	struct vg_host *h;
};

struct lrc_guest {
	struct vg_host_guest *g;
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint64_t scratch;		/* a 4 KiB BO for kernel results */
};

/* "<fx dir>/<name>" into buf. */
static inline const char *lrc_path(const struct lrc_fx *fx, const char *name,
				   char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", fx->dir, name);
	return buf;
}

static inline void lrc_mkdir(const struct lrc_fx *fx, const char *name)
{
	char p[256];

	assert_int_equal(mkdir(lrc_path(fx, name, p, sizeof(p)), 0755), 0);
}

static inline void lrc_put(const struct lrc_fx *fx, const char *name,
			   const void *buf, size_t len, mode_t mode)
{
	char p[256];
	int fd;

	fd = open(lrc_path(fx, name, p, sizeof(p)),
		  O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* The file's bytes as read(2) sees them; returns its size. */
static inline size_t lrc_get(const struct lrc_fx *fx, const char *name,
			     void *buf, size_t len)
{
	char p[256];
	ssize_t n;
	int fd;

	fd = open(lrc_path(fx, name, p, sizeof(p)), O_RDONLY);
	assert_true(fd >= 0);
	n = pread(fd, buf, len, 0);
	assert_true(n >= 0);
	close(fd);
	return (size_t)n;
}

/* A host process writing the file with pwrite(2): never calls the cache. */
static inline void lrc_pwrite(const struct lrc_fx *fx, const char *name,
			      uint64_t off, const void *buf, size_t len)
{
	char p[256];
	int fd;

	fd = open(lrc_path(fx, name, p, sizeof(p)), O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static inline struct vg_host *lrc_host(uint64_t vram, uint64_t budget)
{
	return mf_host_cfg("lrc", NULL, vram, budget);
}

static inline void lrc_fx_init(struct lrc_fx *fx, uint64_t vram,
			       uint64_t budget)
{
	memset(fx, 0, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/vg_lrc_XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->h = vram ? lrc_host(vram, budget) : NULL;
}

static inline void lrc_fx_fini(struct lrc_fx *fx)
{
	char cmd[128];

	if (fx->h)
		vg_host_destroy(fx->h);
	fx->h = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
}

/* A guest with a channel, a scratch BO and share 0 = <fx dir>/<share>. */
static inline void lrc_guest_init(struct lrc_fx *fx, struct lrc_guest *lg,
				  const char *name, const char *share)
{
	char p[256];

	memset(lg, 0, sizeof(*lg));
	assert_int_equal(vg_host_guest_create(fx->h, name, 0, 16 * MiB, &lg->g), 0);
	lg->dev = vg_host_guest_dev(lg->g);
	if (share)
		assert_int_equal(vg_host_guest_set_share(lg->g, 0,
				 lrc_path(fx, share, p, sizeof(p))), 0);
	assert_int_equal(vgmem_chan_create(lg->dev, 64, 0, 0, &lg->ch), 0);
	assert_int_equal(vgmem_bo_alloc(lg->dev, VGMEM_PAGE_SIZE, &lg->scratch), 0);
}

static inline void lrc_guest_fini(struct lrc_guest *lg)
{
	if (lg->g)
		vg_host_guest_destroy(lg->g);
	memset(lg, 0, sizeof(*lg));
}

static inline void lrc_stats(struct lrc_fx *fx, struct vg_lrc_stats *st)
{
	vg_lrc_get_stats(vg_host_lrc(fx->h), st);
}

/* GPU checksum (FNV-1a) of [va, va + len). */
static inline int lrc_gpu_sum(struct lrc_guest *lg, uint64_t va, uint64_t len,
			      uint64_t *sum)
{
	return vgmem_checksum(lg->ch, va, len, lg->scratch, sum);
}

static inline uint64_t lrc_fnv(const void *buf, size_t len)
{
	return vgmem_fnv1a(VGMEM_FNV_INIT, buf, len);
}

/*
 * The copy engine's 2D copy: lines of line_len bytes, line i from src +
 * i * src_pitch to dst + i * dst_pitch, both GPU VAs. Submits and waits.
 * A "row-half writer" is this with dst at the half's start and dst_pitch
 * the image's row length.
 */
static inline int lrc_ce_2d(struct vgmem_chan *ch, uint64_t src,
			    uint32_t src_pitch, uint64_t dst, uint32_t dst_pitch,
			    uint32_t line_len, uint32_t lines)
{
	uint32_t v[8], flags;

	v[0] = (uint32_t)(src >> 32);
	v[1] = (uint32_t)src;
	v[2] = (uint32_t)(dst >> 32);
	v[3] = (uint32_t)dst;
	v[4] = src_pitch;
	v[5] = dst_pitch;
	v[6] = line_len;
	v[7] = lines;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_OFFSET_IN_UPPER, v, 8);
	flags = VGMEM_CE_LAUNCH_SRC_PITCH | VGMEM_CE_LAUNCH_DST_PITCH |
		VGMEM_CE_LAUNCH_MULTI_LINE;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_LAUNCH_DMA, &flags, 1);
	return vgmem_finish(ch);
}

/* The bytes VGMEM_K_FILL_PATTERN writes, on the CPU. */
static inline void lrc_pattern(void *buf, uint64_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint64_t k;

	for (k = 0; k < len; k++)
		p[k] = (uint8_t)(vgmem_pattern_word(seed, k >> 2) >> (8 * (k & 3)));
}

#endif /* VGMEM_LRC_ITEST_H */
