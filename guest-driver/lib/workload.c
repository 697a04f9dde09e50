// SPDX-License-Identifier: MIT
/*
 * Built-in workloads: a working set in BOs and kernels that touch it the way
 * real tenants do, so that relocation and its cost model see realistic
 * access patterns. Everything that varies comes from a seeded generator, so
 * a run repeats exactly for a seed.
 */
#include <errno.h>
#include <stdlib.h>
#include "vgmem_priv.h"

#define WL_PAGE		4096ull
#define WL_SCRATCH	(64ull << 10)	/* results at 0, gather output at 4 KiB */
#define WL_BATCH	32		/* launches per GPFIFO entry */

struct wl {
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint64_t *va;
	uint64_t *size;
	uint32_t nr;
	uint64_t ws;
	uint64_t scratch;
	uint64_t rng;
	unsigned int queued;
};

static const char *const wl_names[VGMEM_WL_NR] = {
	[VGMEM_WL_STREAM] = "stream",
	[VGMEM_WL_STRIDED] = "strided",
	[VGMEM_WL_GATHER] = "gather",
	[VGMEM_WL_HOTCOLD] = "hotcold",
};

const char *vgmem_workload_name(enum vgmem_workload w)
{
	if ((unsigned int)w >= VGMEM_WL_NR)
		return "unknown";
	return wl_names[w];
}

/* splitmix64: small, seedable, and the same on every platform. */
static uint64_t wl_rand(struct wl *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t wl_below(struct wl *s, uint64_t n)
{
	return n ? wl_rand(s) % n : 0;
}

static int wl_queue(struct wl *s, enum vgmem_kernel k, uint32_t a0, uint32_t a1,
		    uint32_t a2, uint32_t a3, uint32_t a4, uint32_t a5,
		    uint32_t a6, uint32_t a7)
{
	uint32_t a[VGMEM_CP_NARGS] = { a0, a1, a2, a3, a4, a5, a6, a7 };

	vgmem_pb_launch(s->ch, k, a);
	if (++s->queued % WL_BATCH)
		return 0;
	return vgmem_submit(s->ch, NULL);
}

#define LO(x)	((uint32_t)(x))
#define HI(x)	((uint32_t)((uint64_t)(x) >> 32))

static int wl_checksum_range(struct wl *s, uint64_t off, uint64_t len,
			     uint32_t slot)
{
	uint64_t res = s->scratch + 8 * (slot % 512);
	uint64_t piece;
	uint32_t i;
	int ret;

	/* Split [off, off + len) of the working set at BO boundaries. */
	for (i = 0; i < s->nr && len; i++) {
		if (off >= s->size[i]) {
			off -= s->size[i];
			continue;
		}
		piece = s->size[i] - off < len ? s->size[i] - off : len;
		ret = wl_queue(s, VGMEM_K_CHECKSUM, LO(s->va[i] + off),
			       HI(s->va[i] + off), LO(piece), HI(piece),
			       LO(res), HI(res), 0, 0);
		if (ret)
			return ret;
		len -= piece;
		off = 0;
	}
	return 0;
}

static int wl_memset_range(struct wl *s, uint64_t off, uint64_t len,
			   uint32_t value)
{
	uint64_t piece;
	uint32_t i;
	int ret;

	for (i = 0; i < s->nr && len; i++) {
		if (off >= s->size[i]) {
			off -= s->size[i];
			continue;
		}
		piece = s->size[i] - off < len ? s->size[i] - off : len;
		ret = wl_queue(s, VGMEM_K_MEMSET, LO(s->va[i] + off),
			       HI(s->va[i] + off), LO(piece), HI(piece),
			       value, 0, 0, 0);
		if (ret)
			return ret;
		len -= piece;
		off = 0;
	}
	return 0;
}

/* c = a + b over thirds of every BO: reads two streams, writes one. */
static int wl_step_stream(struct wl *s)
{
	uint64_t n, a;
	uint32_t i;
	int ret;

	for (i = 0; i < s->nr; i++) {
		n = s->size[i] / 12;
		a = s->va[i];
		ret = wl_queue(s, VGMEM_K_VECADD, LO(a), HI(a), LO(a + 4 * n),
			       HI(a + 4 * n), LO(a + 8 * n), HI(a + 8 * n),
			       (uint32_t)n, 0);
		if (ret)
			return ret;
	}
	return 0;
}

static int wl_step_strided(struct wl *s, uint32_t step)
{
	uint64_t res;
	uint32_t i, stride;
	int ret;

	for (i = 0; i < s->nr; i++) {
		stride = 64u << wl_below(s, 7);		/* 64 B ... 4 KiB */
		res = s->scratch + 8 * ((step + i) % 512);
		ret = wl_queue(s, VGMEM_K_STRIDED, LO(s->va[i]), HI(s->va[i]),
			       LO(s->size[i]), HI(s->size[i]), stride,
			       LO(res), HI(res), 0);
		if (ret)
			return ret;
	}
	return 0;
}

static int wl_step_gather(struct wl *s)
{
	uint64_t dst = s->scratch + WL_PAGE;
	uint64_t n;
	uint32_t i;
	int ret;

	for (i = 0; i < s->nr; i++) {
		n = s->size[i] / 4 / 16;
		if (n > (WL_SCRATCH - WL_PAGE) / 4)
			n = (WL_SCRATCH - WL_PAGE) / 4;
		if (!n)
			n = 1;
		ret = wl_queue(s, VGMEM_K_GATHER, LO(s->va[i]), HI(s->va[i]),
			       LO(s->size[i]), HI(s->size[i]), LO(dst), HI(dst),
			       (uint32_t)n, (uint32_t)wl_rand(s));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The first 10% of the working set is hot: read on even steps, written on
 * odd ones. About every eighth step one random chunk of the cold rest is
 * read, so cold data is live but rarely touched.
 */
static int wl_step_hotcold(struct wl *s, uint32_t step)
{
	uint64_t chunk = s->dev->q.chunk_size ? s->dev->q.chunk_size : (2ull << 20);
	uint64_t hot = (s->ws / 10 + WL_PAGE - 1) & ~(WL_PAGE - 1);
	uint64_t cold, off;
	int ret;

	if (!hot)
		hot = WL_PAGE;
	if (hot > s->ws)
		hot = s->ws;
	if (step & 1)
		ret = wl_memset_range(s, 0, hot, step);
	else
		ret = wl_checksum_range(s, 0, hot, step);
	if (ret)
		return ret;
	cold = s->ws - hot;
	if (cold && wl_below(s, 8) == 0) {
		off = hot + (wl_below(s, (cold + chunk - 1) / chunk) * chunk);
		ret = wl_checksum_range(s, off,
					s->ws - off < chunk ? s->ws - off : chunk,
					step);
	}
	return ret;
}

static void wl_free_bos(struct wl *s)
{
	uint32_t i;

	for (i = 0; i < s->nr; i++)
		vgmem_bo_free(s->dev, s->va[i]);
	if (s->scratch)
		vgmem_bo_free(s->dev, s->scratch);
}

int vgmem_workload_run(struct vgmem_dev *dev, struct vgmem_chan *ch,
		       enum vgmem_workload w, uint64_t ws_bytes,
		       uint64_t bo_bytes, uint32_t iters, uint64_t seed)
{
	struct wl s = { .dev = dev, .ch = ch, .rng = seed };
	uint64_t nr, left;
	uint32_t i, step;
	int ret, ret2;

	if (!dev || !ch || (unsigned int)w >= VGMEM_WL_NR || !ws_bytes ||
	    !bo_bytes || ws_bytes > VGMEM_VA_END - VGMEM_VA_START ||
	    bo_bytes > ws_bytes)
		return -EINVAL;
	ws_bytes = (ws_bytes + WL_PAGE - 1) & ~(WL_PAGE - 1);
	bo_bytes = (bo_bytes + WL_PAGE - 1) & ~(WL_PAGE - 1);
	/* vecadd and the like count elements in 32 bits. */
	if (bo_bytes > (1ull << 34))
		return -EINVAL;
	nr = (ws_bytes + bo_bytes - 1) / bo_bytes;
	if (nr > (1u << 20))
		return -E2BIG;
	s.ws = ws_bytes;
	s.va = calloc(nr, sizeof(*s.va));
	s.size = calloc(nr, sizeof(*s.size));
	if (!s.va || !s.size) {
		ret = -ENOMEM;
		goto out_free;
	}

	ret = vgmem_bo_alloc(dev, WL_SCRATCH, &s.scratch);
	if (ret) {
		s.scratch = 0;
		goto out_free;
	}
	left = ws_bytes;
	for (i = 0; i < nr; i++) {
		s.size[i] = left < bo_bytes ? left : bo_bytes;
		ret = vgmem_bo_alloc(dev, s.size[i], &s.va[i]);
		if (ret)
			goto out_free_bos;
		s.nr++;
		left -= s.size[i];
	}

	/* Give the working set defined contents first. */
	for (i = 0; i < s.nr; i++) {
		ret = wl_queue(&s, VGMEM_K_FILL_PATTERN, LO(s.va[i]),
			       HI(s.va[i]), LO(s.size[i]), HI(s.size[i]),
			       (uint32_t)wl_rand(&s), 0, 0, 0);
		if (ret)
			goto out_finish;
	}

	for (step = 0; step < iters; step++) {
		switch (w) {
		case VGMEM_WL_STREAM:
			ret = wl_step_stream(&s);
			break;
		case VGMEM_WL_STRIDED:
			ret = wl_step_strided(&s, step);
			break;
		case VGMEM_WL_GATHER:
			ret = wl_step_gather(&s);
			break;
		default:
			ret = wl_step_hotcold(&s, step);
			break;
		}
		if (ret)
			goto out_finish;
		/* One entry per step at least, so completion follows progress. */
		ret = vgmem_submit(ch, NULL);
		if (ret)
			goto out_finish;
	}

out_finish:
	/* The BOs may only go once the GPU is done with them. */
	ret2 = vgmem_finish(ch);
	if (!ret)
		ret = ret2;
out_free_bos:
	wl_free_bos(&s);
out_free:
	free(s.va);
	free(s.size);
	return ret;
}
