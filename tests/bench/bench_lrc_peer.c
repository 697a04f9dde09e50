// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_peer: peer-caching. A GPU context wrote a whole 32 MiB file
 * and released it: the newest version lives in its VRAM replicas, the
 * host's copy is stale. A host process then reads 4 KiB blocks at random
 * offsets through the cache (vg_lrc_host_read): each is served from the
 * GPU's replica, the location decided once per readahead window.
 *
 * Baseline: the same bytes read with pread(2) from a file on storage with
 * a cold page cache (fsync, then posix_fadvise(POSIX_FADV_DONTNEED); the
 * bench checks with mincore(2) how much of the file stayed resident and
 * says so: DONTNEED drops clean pages for any user, root or not, but
 * pages other processes map stay).
 *
 * The cache's reads are wall-clock time plus the cost model's price of
 * the bytes it moved from VRAM over PCIe (the software GPU's copies are
 * memcpy, faster than a real bus). RATIO = storage / cache time; both
 * are verified byte for byte.
 */
#include <sys/mman.h>
#include "bench_lrc.h"

#define FILE_BYTES	(32 * MiB)
#define READ_SIZE	4096u
#define NREADS		2048u
#define SEED		11u

static double resident_pct(int fd)
{
	size_t pages = FILE_BYTES / 4096, res = 0, i;
	unsigned char *vec = malloc(pages);
	void *m;

	m = mmap(NULL, FILE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	if (!vec || m == MAP_FAILED || mincore(m, FILE_BYTES, vec)) {
		free(vec);
		if (m != MAP_FAILED)
			munmap(m, FILE_BYTES);
		return -1;
	}
	for (i = 0; i < pages; i++)
		res += vec[i] & 1;
	munmap(m, FILE_BYTES);
	free(vec);
	return 100.0 * res / pages;
}

int main(void)
{
	struct vg_lrc_stats s0, s1;
	uint64_t va, off[NREADS], t0, lrc_ns, move_ns, sto_ns;
	struct vg_lrc_file *f;
	struct bguest gpu;
	uint8_t *exp, buf[READ_SIZE];
	struct blrc b;
	double res;
	char p[256];
	u64 rs = 3;
	uint32_t i;
	int ret, fd;

	blrc_init(&b, 512 * MiB, 0);
	exp = calloc(1, FILE_BYTES);
	if (!exp)
		blrc_die("calloc", -1);
	blrc_put(&b, "data", exp, FILE_BYTES);
	for (i = 0; i < FILE_BYTES; i += 4)
		((uint32_t *)exp)[i / 4] = vgmem_pattern_word(SEED, i / 4);
	for (i = 0; i < NREADS; i++)
		off[i] = (vg_splitmix64(&rs) % (FILE_BYTES / READ_SIZE)) * READ_SIZE;

	/* The GPU writes the whole file and releases it. */
	bguest_init(&b, &gpu, "writer");
	ret = vgmem_map_file(gpu.dev, 0, "data", 0, FILE_BYTES, VGMEM_FILE_RW, &va);
	if (!ret)
		ret = vgmem_acquire(gpu.dev, va, 0);
	if (!ret)
		ret = vgmem_fill_pattern(gpu.ch, va, FILE_BYTES, SEED);
	if (!ret)
		ret = vgmem_release(gpu.dev, va, 0);
	if (!ret)
		ret = vg_host_file_open(b.h, b.dir, "data", false, &f);
	if (ret)
		blrc_die("setup", ret);

	/* Host random reads through the cache: served from VRAM. */
	vg_lrc_get_stats(vg_host_lrc(b.h), &s0);
	t0 = bench_now_ns();
	for (i = 0; i < NREADS; i++) {
		if (vg_lrc_host_read(f, off[i], buf, READ_SIZE) != READ_SIZE ||
		    memcmp(buf, exp + off[i], READ_SIZE))
			blrc_die("cache read", -EIO);
	}
	lrc_ns = bench_now_ns() - t0;
	vg_lrc_get_stats(vg_host_lrc(b.h), &s1);
	move_ns = blrc_moved_ns(&b, &s0, &s1);
	vg_lrc_host_close(f);

	/* The same bytes from storage, page cache dropped. */
	blrc_put(&b, "cold", exp, FILE_BYTES);
	blrc_path(&b, "cold", p, sizeof(p));
	fd = open(p, O_RDONLY);
	if (fd < 0)
		blrc_die("open", -1);
	ret = posix_fadvise(fd, 0, FILE_BYTES, POSIX_FADV_DONTNEED);
	res = resident_pct(fd);
	t0 = bench_now_ns();
	for (i = 0; i < NREADS; i++) {
		if (pread(fd, buf, READ_SIZE, (off_t)off[i]) != READ_SIZE ||
		    memcmp(buf, exp + off[i], READ_SIZE))
			blrc_die("storage read", -EIO);
	}
	sto_ns = bench_now_ns() - t0;
	close(fd);

	printf("bench_lrc_peer: %u random %u-byte host reads of a %llu MiB file "
	       "newest on the GPU\n", NREADS, READ_SIZE,
	       (unsigned long long)(FILE_BYTES / MiB));
	printf("  cache: %.3f ms wall + %.3f ms PCIe model (%llu MiB from VRAM, "
	       "%llu peer reads, %llu readahead GPU pages)\n", lrc_ns / 1e6,
	       move_ns / 1e6,
	       (unsigned long long)((s1.fetch_gpu - s0.fetch_gpu) / MiB),
	       (unsigned long long)(s1.host_reads_peer - s0.host_reads_peer),
	       (unsigned long long)(s1.readahead_pages - s0.readahead_pages));
	printf("  storage, cold page cache: %.3f ms (fadvise %s, %.1f%% of the "
	       "file resident before the reads%s)\n", sto_ns / 1e6,
	       ret ? "failed" : "ok", res,
	       res > 1 ? ": NOT cold, the ratio understates the cache" : "");
	bench_ratio("peer caching, cold storage vs GPU replicas",
		    (double)sto_ns / (lrc_ns + move_ns), 1.0, 0);
	bguest_fini(&gpu);
	free(exp);
	blrc_fini(&b);
	return 0;
}
