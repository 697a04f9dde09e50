// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_sync: the cost of detecting a host writer outside the cache
 * (pwrite(2) by another process) at a GPU acquire. A GPU consumer maps a
 * 32 MiB file read-only and holds all of it cached; each round a producer
 * rewrites one 4 KiB block inside a 1 MiB range and one outside it, and
 * the consumer acquires.
 *
 * Range-first (docs/lrc.md): the acquire of the 1 MiB range compares only
 * its 16 GPU pages with the file; the rest of the file is compared when
 * something next uses it. Whole-file: an acquire of the whole map, which
 * compares every cached page; that is what every acquire cost before
 * range-first sync, whatever its range. Columns: wall-clock ms per
 * acquire (this host's work: the change counter, reading and comparing
 * pages), GPU pages compared per acquire. RATIO = whole / range-first.
 * The consumer then checks the whole file (a checksum kernel after a
 * whole acquire) so the lazily compared pages are seen too.
 */
#include "bench_lrc.h"

#define FILE_BYTES	(32 * MiB)
#define RANGE_OFF	(4 * MiB)
#define RANGE_LEN	(1 * MiB)
#define ROUNDS		20

static u64 rs = 11;

/* One block inside the range, one outside, rewritten in buf and the file. */
static void produce(struct blrc *b, uint8_t *buf)
{
	uint64_t offs[2] = {
		RANGE_OFF + vg_splitmix64(&rs) % (RANGE_LEN / 4096) * 4096,
		(RANGE_OFF + RANGE_LEN +
		 vg_splitmix64(&rs) % ((FILE_BYTES - RANGE_OFF - RANGE_LEN) /
				       4096) * 4096),
	};
	char p[256];
	uint32_t i;
	int fd;

	blrc_path(b, "data", p, sizeof(p));
	fd = open(p, O_WRONLY);
	if (fd < 0)
		blrc_die("open", -1);
	for (i = 0; i < 2; i++) {
		memset(buf + offs[i], (int)(vg_splitmix64(&rs) & 0xff), 4096);
		if (pwrite(fd, buf + offs[i], 4096, (off_t)offs[i]) != 4096)
			blrc_die("pwrite", -1);
	}
	close(fd);
}

static void check(struct bguest *bg, uint64_t va, uint64_t off, uint64_t len,
		  const uint8_t *buf)
{
	uint64_t sum;
	int ret;

	ret = vgmem_checksum(bg->ch, va + off, len, bg->scratch, &sum);
	if (ret)
		blrc_die("checksum", ret);
	if (sum != vgmem_fnv1a(VGMEM_FNV_INIT, buf + off, len))
		blrc_die("consumer saw a wrong file", -EIO);
}

/* ROUNDS of produce + acquire of [off, off + len); ns and compares. */
static void rounds(struct blrc *b, struct bguest *bg, uint64_t va,
		   uint8_t *buf, uint64_t off, uint64_t len, uint64_t *ns,
		   uint64_t *cmp)
{
	struct vg_lrc_stats s0, s1;
	uint64_t t0;
	uint32_t r;
	int ret;

	*ns = 0;
	vg_lrc_get_stats(vg_host_lrc(b->h), &s0);
	for (r = 0; r < ROUNDS; r++) {
		produce(b, buf);
		t0 = bench_now_ns();
		ret = vgmem_acquire(bg->dev, va + off, len);
		*ns += bench_now_ns() - t0;
		if (ret)
			blrc_die("acquire", ret);
		check(bg, va, off, len, buf);
		ret = vgmem_release(bg->dev, va + off, len);
		if (ret)
			blrc_die("release", ret);
	}
	vg_lrc_get_stats(vg_host_lrc(b->h), &s1);
	*cmp = s1.host_compares - s0.host_compares;
}

int main(void)
{
	uint64_t va, range_ns, whole_ns, range_cmp, whole_cmp;
	struct bguest bg;
	struct blrc b;
	uint8_t *buf;
	double ratio;
	int ret;

	blrc_init(&b, 512 * MiB, 0);
	buf = malloc(FILE_BYTES);
	if (!buf)
		blrc_die("malloc", -1);
	memset(buf, 0x3c, FILE_BYTES);
	blrc_put(&b, "data", buf, FILE_BYTES);
	bguest_init(&b, &bg, "consumer");
	ret = vgmem_map_file(bg.dev, 0, "data", 0, FILE_BYTES, VGMEM_FILE_RO,
			     &va);
	if (ret)
		blrc_die("map", ret);
	/* Warm-up: the whole file in host copies and VRAM. */
	if (vgmem_acquire(bg.dev, va, 0))
		blrc_die("acquire", -1);
	check(&bg, va, 0, FILE_BYTES, buf);

	rounds(&b, &bg, va, buf, RANGE_OFF, RANGE_LEN, &range_ns, &range_cmp);
	rounds(&b, &bg, va, buf, 0, FILE_BYTES, &whole_ns, &whole_cmp);
	/* Everything the producer wrote, outside the range too, is seen. */
	if (vgmem_acquire(bg.dev, va, 0))
		blrc_die("acquire", -1);
	check(&bg, va, 0, FILE_BYTES, buf);

	ratio = (double)whole_ns / (double)range_ns;
	printf("bench_lrc_sync: acquire after an outside write, %llu MiB file, "
	       "%d rounds\n", (unsigned long long)(FILE_BYTES / MiB), ROUNDS);
	printf("  %-34s %12s %14s\n", "", "ms/acquire", "pages compared");
	printf("  %-34s %12.3f %14.1f\n", "range-first, 1 MiB range",
	       range_ns / 1e6 / ROUNDS, (double)range_cmp / ROUNDS);
	printf("  %-34s %12.3f %14.1f\n", "whole file (the old cost)",
	       whole_ns / 1e6 / ROUNDS, (double)whole_cmp / ROUNDS);
	bench_ratio("acquire of 1 MiB of 32 MiB after an outside write, "
		    "whole-file vs range-first (wall)", ratio, 4.0, 0);
	bguest_fini(&bg);
	free(buf);
	blrc_fini(&b);
	return 0;
}
