// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_prodcons: GAIA's dynamic-graph scenario (its Figure 7). A
 * legacy CPU producer updates a fraction of a 32 MiB file with pwrite(2)
 * (random 4 KiB blocks); a GPU consumer recomputes over the whole file
 * after each update (a checksum kernel, verified against the CPU).
 *
 * LRC: the consumer maps the file read-only and brackets each round with
 * acquire/release: the cache notices the change (change counter, page
 * compare) and the GPU refetches only the 64 KiB pages that changed.
 * Baseline (CUDA-style, GAIA's "original" implementation): the consumer
 * cannot know what changed, so each round it reads the whole file and
 * copies it into a buffer object.
 *
 * Columns: simulated device ms per round by the sim's cost model (the
 * consumer's kernels and copies, plus for LRC the cache's transfers) and
 * wall-clock ms per round (this includes the cache's page compare and
 * the baseline's read of the file, both host work the cost model does
 * not see). "acq wall": the LRC consumer's acquire alone (the change
 * detection: change counter, reading and comparing the cached pages).
 * RATIO (headline, 1% updated) = baseline / LRC simulated time.
 */
#include "bench_lrc.h"

#define FILE_BYTES	(32 * MiB)
#define BLOCK		4096u
#define NBLOCKS		(FILE_BYTES / BLOCK)
#define ROUNDS		3

static u64 rs = 7;

/* The producer: rewrite nblocks random 4 KiB blocks of buf and the file. */
static void produce(struct blrc *b, uint8_t *buf, uint32_t nblocks)
{
	char p[256];
	uint32_t i, k;
	int fd;

	blrc_path(b, "graph", p, sizeof(p));
	fd = open(p, O_WRONLY);
	if (fd < 0)
		blrc_die("open", -1);
	for (i = 0; i < nblocks; i++) {
		k = (uint32_t)(vg_splitmix64(&rs) % NBLOCKS);
		memset(buf + (uint64_t)k * BLOCK, (int)(vg_splitmix64(&rs) & 0xff),
		       BLOCK);
		if (pwrite(fd, buf + (uint64_t)k * BLOCK, BLOCK,
			   (off_t)k * BLOCK) != BLOCK)
			blrc_die("pwrite", -1);
	}
	close(fd);
	/* No sleep: the store's change counter never misses a write (lrc_store.c). */
}

static void check(struct bguest *bg, uint64_t va, const uint8_t *buf)
{
	uint64_t sum;
	int ret;

	ret = vgmem_checksum(bg->ch, va, FILE_BYTES, bg->scratch, &sum);
	if (ret)
		blrc_die("checksum", ret);
	if (sum != vgmem_fnv1a(VGMEM_FNV_INIT, buf, FILE_BYTES))
		blrc_die("consumer saw a wrong file", -EIO);
}

static void run(double frac, double *sim_ratio)
{
	uint32_t nblocks = (uint32_t)(frac * NBLOCKS);
	uint64_t lrc_sim = 0, base_sim = 0, lrc_wall = 0, base_wall = 0;
	uint64_t acq_wall = 0;
	struct vg_lrc_stats s0, s1;
	struct bguest lg, bg;
	uint64_t va, bo, t0, d0;
	uint8_t *buf, *rd;
	struct blrc b;
	char p[256];
	uint32_t r;
	int ret, fd;

	if (!nblocks)
		nblocks = 1;
	blrc_init(&b, 512 * MiB, 0);
	buf = malloc(FILE_BYTES);
	rd = malloc(FILE_BYTES);
	if (!buf || !rd)
		blrc_die("malloc", -1);
	memset(buf, 0x5a, FILE_BYTES);
	blrc_put(&b, "graph", buf, FILE_BYTES);
	bguest_init(&b, &lg, "lrc");
	bguest_init(&b, &bg, "recopy");
	ret = vgmem_map_file(lg.dev, 0, "graph", 0, FILE_BYTES, VGMEM_FILE_RO, &va);
	if (!ret)
		ret = vgmem_bo_alloc(bg.dev, FILE_BYTES, &bo);
	if (ret)
		blrc_die("setup", ret);
	/* Warm-up round: both hold the whole file once. */
	if (vgmem_acquire(lg.dev, va, 0))
		blrc_die("acquire", -1);
	check(&lg, va, buf);
	blrc_path(&b, "graph", p, sizeof(p));

	for (r = 0; r < ROUNDS; r++) {
		produce(&b, buf, nblocks);

		/* LRC consumer. */
		vg_lrc_get_stats(vg_host_lrc(b.h), &s0);
		d0 = bguest_dev_ns(&lg);
		t0 = bench_now_ns();
		ret = vgmem_acquire(lg.dev, va, 0);
		if (ret)
			blrc_die("acquire", ret);
		acq_wall += bench_now_ns() - t0;
		check(&lg, va, buf);
		ret = vgmem_release(lg.dev, va, 0);
		if (ret)
			blrc_die("release", ret);
		lrc_wall += bench_now_ns() - t0;
		vg_lrc_get_stats(vg_host_lrc(b.h), &s1);
		lrc_sim += bguest_dev_ns(&lg) - d0 + blrc_moved_ns(&b, &s0, &s1);

		/* Re-copy consumer: read the file, copy all of it, compute. */
		d0 = bguest_dev_ns(&bg);
		t0 = bench_now_ns();
		fd = open(p, O_RDONLY);
		if (fd < 0 || pread(fd, rd, FILE_BYTES, 0) != (ssize_t)FILE_BYTES)
			blrc_die("read file", -1);
		close(fd);
		ret = vgmem_write(bg.ch, bo, rd, FILE_BYTES);
		if (ret)
			blrc_die("copy", ret);
		check(&bg, bo, buf);
		base_wall += bench_now_ns() - t0;
		base_sim += bguest_dev_ns(&bg) - d0;
	}
	printf("  %7.2f%% %10.3f %10.3f %8.2f %10.3f %10.3f %10.3f\n",
	       frac * 100, lrc_sim / 1e6 / ROUNDS, base_sim / 1e6 / ROUNDS,
	       (double)base_sim / lrc_sim, lrc_wall / 1e6 / ROUNDS,
	       base_wall / 1e6 / ROUNDS, acq_wall / 1e6 / ROUNDS);
	*sim_ratio = (double)base_sim / lrc_sim;
	bguest_fini(&lg);
	bguest_fini(&bg);
	free(buf);
	free(rd);
	blrc_fini(&b);
}

int main(void)
{
	static const double fracs[] = { 0.001, 0.01, 0.05, 0.25, 0.5, 1.0 };
	double ratio, headline = 0;
	size_t i;

	printf("bench_lrc_prodcons: %llu MiB file, %d rounds per row; ms per "
	       "round (sim: cost model, wall: this host)\n",
	       (unsigned long long)(FILE_BYTES / MiB), ROUNDS);
	printf("  %8s %10s %10s %8s %10s %10s %10s\n", "updated", "LRC sim",
	       "recopy sim", "ratio", "LRC wall", "recopy wall", "acq wall");
	for (i = 0; i < sizeof(fracs) / sizeof(fracs[0]); i++) {
		run(fracs[i], &ratio);
		if (fracs[i] == 0.01)
			headline = ratio;
	}
	bench_ratio("producer-consumer, recopy vs LRC (1% updated, sim)",
		    headline, 1.0, 0);
	return 0;
}
