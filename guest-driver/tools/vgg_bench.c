// SPDX-License-Identifier: MIT
/*
 * vgmem-guest bench: measurements for the VM benchmarks (tests/vm/bench/).
 * They print numbers and never fail on timing; they fail only when the
 * device misbehaves (an error, a lost or reordered entry).
 *
 *   submit  N single-entry round trips: build one GPFIFO entry, publish it
 *           (GP_PUT in the USERD page), wait until GP_GET passed it. The
 *           same code runs over VFIO (--dev) and in process (--inproc), so
 *           the two differ only in the layer under libvgmem: the mdev and
 *           the kernel's core, or the userspace host.
 *   memcpy  the CPU's copy of --size bytes between two buffers in 4 KiB
 *           pieces (as the software GPU's copy engine copies pages), the
 *           raw copy time a relocation of that many bytes cannot beat.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "vgg.h"

#define PAGE		4096ull
#define SUBMIT_DEFAULT	2000u
#define MEMCPY_DEFAULT	9u
#define WAIT_NS		(120ull * 1000000000ull)

static const char *const kind_names[VGG_B_NR] = {
	[VGG_B_SUBMIT] = "submit",
	[VGG_B_MEMCPY] = "memcpy",
};

int vgg_bench_kind(const char *name)
{
	int i;

	for (i = 0; i < VGG_B_NR; i++)
		if (!strcmp(kind_names[i], name))
			return i;
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const uint64_t *v, uint32_t n, unsigned int p)
{
	uint64_t rank = ((uint64_t)p * n + 99) / 100;

	return (double)v[rank ? rank - 1 : 0];
}

/* Sorts v and prints "name count=N min_us= p50_us= p90_us= p99_us= max_us= mean_us=". */
static void report(struct vgg_ctx *c, const char *name, uint64_t *v, uint32_t n,
		   const char *extra)
{
	double sum = 0;
	uint32_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)v[i];
	vgg_detail(c, VGG_OK,
		   "bench %s count=%u min_us=%.2f p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.2f mean_us=%.2f%s",
		   name, n, v[0] / 1e3, pct(v, n, 50) / 1e3, pct(v, n, 90) / 1e3,
		   pct(v, n, 99) / 1e3, v[n - 1] / 1e3, sum / n / 1e3, extra);
	vgg_log(c, "%s", c->detail);
}

static void queue_release(struct vgmem_chan *ch, uint64_t va, uint32_t payload)
{
	uint32_t d[4] = { (uint32_t)(va >> 32) & 0xff, (uint32_t)va, payload,
			  VGMEM_SEM_OP_RELEASE };

	vgmem_pb_inc(ch, 0, VGMEM_MTHD_SEMAPHORE_A, d, 4);
}

static void queue_memset(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
			 uint32_t value)
{
	uint32_t v[1 + VGMEM_CP_NARGS] = {
		VGMEM_K_MEMSET, (uint32_t)va, (uint32_t)(va >> 32),
		(uint32_t)bytes, (uint32_t)(bytes >> 32), value, 0, 0, 0
	};

	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, v, 1 + VGMEM_CP_NARGS);
	vgmem_pb_immd(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
}

/*
 * Round trip i: (a MEMSET of --size bytes, if given, then) a semaphore
 * release of i, as one entry; submit; wait for it. A warm-up tenth of the
 * rounds (at least 10) is not counted: first-touch faults, a cold engine.
 */
static int bench_submit(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	uint32_t n = o->count ? o->count : SUBMIT_DEFAULT;
	uint32_t warm = n / 10 > 10 ? n / 10 : 10, i, val = 0;
	uint64_t sem = 0, buf = 0, seq, t0, *lat;
	struct vgmem_chan *ch = NULL;
	char extra[64];
	int ret;

	lat = calloc(n, sizeof(*lat));
	if (!lat)
		return vgg_detail(c, VGG_FAIL, "bench submit: out of memory");
	ret = vgg_chan(c, &ch);
	if (ret) {
		ch = NULL;
		ret = vgg_detail(c, VGG_FAIL, "bench submit: channel: %d (%s)", ret,
				 strerror(-ret));
		goto out;
	}
	ret = vgmem_bo_alloc(c->dev, PAGE, &sem);
	if (!ret && o->size)
		ret = vgmem_bo_alloc(c->dev, (o->size + PAGE - 1) & ~(PAGE - 1), &buf);
	if (ret) {
		ret = vgg_detail(c, VGG_FAIL, "bench submit: BO_ALLOC: %d (%s)", ret,
				 strerror(-ret));
		goto out;
	}
	ret = vgmem_memset(ch, sem, PAGE, 0);
	for (i = 0; !ret && i < warm + n; i++) {
		t0 = vgg_now_ns();
		if (buf)
			queue_memset(ch, buf, o->size, i);
		queue_release(ch, sem, i + 1);
		ret = vgmem_submit(ch, &seq);
		if (!ret)
			ret = vgmem_wait(ch, seq, WAIT_NS);
		if (i >= warm)
			lat[i - warm] = vgg_now_ns() - t0;
	}
	if (ret) {
		uint64_t addr = 0;
		uint32_t e = vgmem_chan_error(ch, &addr);

		ret = vgg_detail(c, VGG_FAIL, "bench submit: round trip %u: %d (%s), channel error %u %s",
				 i, ret, strerror(-ret), e, vgg_chan_error_name(e));
		goto out;
	}
	ret = vgmem_read(ch, sem, &val, sizeof(val));
	if (ret || val != warm + n) {
		ret = vgg_detail(c, VGG_FAIL, "bench submit: semaphore %u (read %d), want %u",
				 val, ret, warm + n);
		goto out;
	}
	snprintf(extra, sizeof(extra), " memset_bytes=%llu transport=%s",
		 (unsigned long long)(buf ? o->size : 0), c->vfio ? "vfio" : "inproc");
	report(c, "submit", lat, n, extra);
	ret = VGG_OK;
out:
	if (ch)
		vgmem_chan_destroy(ch);
	if (buf)
		vgmem_bo_free(c->dev, buf);
	if (sem)
		vgmem_bo_free(c->dev, sem);
	free(lat);
	return ret;
}

/*
 * --count copies of --size bytes, page by page from one buffer to another
 * (both touched first, so no page fault is timed). The first copy is a
 * warm-up and not counted.
 */
static int bench_memcpy(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	uint32_t n = o->count ? o->count : MEMCPY_DEFAULT, i;
	uint64_t off, t0, *lat, sum = 0;
	unsigned char *src, *dst;
	char extra[64];

	if (!o->size)
		return vgg_detail(c, VGG_FAIL, "bench memcpy needs --size SIZE");
	src = malloc(o->size);
	dst = malloc(o->size);
	lat = calloc(n, sizeof(*lat));
	if (!src || !dst || !lat) {
		free(src);
		free(dst);
		free(lat);
		return vgg_detail(c, VGG_FAIL, "bench memcpy: out of memory for %llu bytes",
				  (unsigned long long)o->size);
	}
	for (off = 0; off < o->size; off++)
		src[off] = (unsigned char)(off * 131 + 7);
	memset(dst, 0, o->size);
	for (i = 0; i <= n; i++) {
		t0 = vgg_now_ns();
		for (off = 0; off < o->size; off += PAGE)
			memcpy(dst + off, src + off,
			       o->size - off < PAGE ? o->size - off : PAGE);
		if (i)
			lat[i - 1] = vgg_now_ns() - t0;
		/* The copies must not be optimized away: look at the result. */
		sum += dst[(i * 4099) % o->size];
	}
	snprintf(extra, sizeof(extra), " bytes=%llu check=%llu",
		 (unsigned long long)o->size, (unsigned long long)sum);
	report(c, "memcpy", lat, n, extra);
	free(src);
	free(dst);
	free(lat);
	return VGG_OK;
}

int vgg_cmd_bench(struct vgg_ctx *c)
{
	switch (c->o->kind) {
	case VGG_B_SUBMIT:
		return bench_submit(c);
	case VGG_B_MEMCPY:
		return bench_memcpy(c);
	default:
		return vgg_detail(c, VGG_FAIL, "bench: unknown kind %d", c->o->kind);
	}
}
