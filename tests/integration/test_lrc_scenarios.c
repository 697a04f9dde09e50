// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The LRC file cache's scenarios from the GAIA paper, end to end: real files
 * in a temporary directory, guests driving the software GPU through
 * libvgmem over the in-process transport, built-in kernels and the copy
 * engine as the GPU's readers and writers.
 *
 *  - producer-consumer: a CPU process updates part of a graph file (through
 *    the cache, and with plain pwrite(2) that never tells the cache), a GPU
 *    consumer acquires and recomputes over the whole file each round;
 *  - false sharing: two guests write disjoint halves of every row of one
 *    image file at the same time; the file ends exact;
 *  - durability: write, release, sync, then the process is killed (SIGKILL
 *    in a child): the file holds every byte;
 *  - no released byte is lost when a VM goes away without a sync;
 *  - read-only sharing: ten guests hold one VRAM replica; one writes and only
 *    it gets a private copy; the others read the old version until they
 *    acquire;
 *  - eviction under a tiny cache budget keeps every byte;
 *  - peer caching: a host read of bytes a GPU released is served from the
 *    GPU's replica, exact, before any sync.
 */
#include <signal.h>
#include <sys/wait.h>
#include "lrc_itest.h"

/* ---- producer-consumer -------------------------------------------------- */

#define GRAPH_WORDS	(1u << 20)		/* 4 MiB of u32 edge weights */
#define GRAPH_BYTES	(GRAPH_WORDS * 4ull)

static uint64_t graph_sum(const uint32_t *w)
{
	uint64_t s = 0;
	uint32_t i;

	for (i = 0; i < GRAPH_WORDS; i++)
		s += w[i];
	return s;
}

/* STRIDED with stride 4 over the whole map: the sum of every weight. */
static int gpu_graph_sum(struct lrc_guest *lg, uint64_t va, uint64_t *sum)
{
	uint32_t a[VGMEM_CP_NARGS] = {
		(uint32_t)va, (uint32_t)(va >> 32),
		(uint32_t)GRAPH_BYTES, (uint32_t)(GRAPH_BYTES >> 32), 4,
		(uint32_t)lg->scratch, (uint32_t)(lg->scratch >> 32), 0,
	};
	int ret;

	ret = vgmem_launch(lg->ch, VGMEM_K_STRIDED, a);
	if (ret)
		return ret;
	return vgmem_read(lg->ch, lg->scratch, sum, sizeof(*sum));
}

static void test_producer_consumer(void **state)
{
	struct vg_lrc_stats st0, st1;
	struct lrc_guest gpu;
	struct vg_lrc_file *f;
	struct lrc_fx fx;
	uint64_t va, sum, fnv;
	u64 rs = 42;
	uint32_t *w, upd[256];
	char share[256];
	uint32_t round, i, j;

	(void)state;
	lrc_fx_init(&fx, 256 * MiB, 0);
	lrc_mkdir(&fx, "s");
	w = malloc(GRAPH_BYTES);
	assert_non_null(w);
	for (i = 0; i < GRAPH_WORDS; i++)
		w[i] = i * 7u + 1u;
	lrc_put(&fx, "s/graph", w, GRAPH_BYTES, 0644);

	lrc_guest_init(&fx, &gpu, "consumer", "s");
	assert_int_equal(vgmem_map_file(gpu.dev, 0, "graph", 0, GRAPH_BYTES,
					VGMEM_FILE_RO, &va), 0);
	assert_int_equal(vg_host_file_open(fx.h, lrc_path(&fx, "s", share,
			 sizeof(share)), "graph", true, &f), 0);

	for (round = 0; round < 6; round++) {
		/*
		 * The producer updates part of the weights: one run of 256
		 * and 20 scattered single ones, through the cache on even
		 * rounds, with pwrite(2) behind its back on odd ones.
		 */
		uint32_t start = (uint32_t)(vg_splitmix64(&rs) % (GRAPH_WORDS - 256));

		for (j = 0; j < 256; j++)
			upd[j] = w[start + j] = round * 1000u + j;
		if (round & 1) {
			lrc_pwrite(&fx, "s/graph", start * 4ull, upd, sizeof(upd));
		} else {
			assert_int_equal(vg_lrc_host_write(f, start * 4ull, upd,
							   sizeof(upd)),
					 (int64_t)sizeof(upd));
		}
		for (j = 0; j < 20; j++) {
			uint32_t k = (uint32_t)(vg_splitmix64(&rs) % GRAPH_WORDS);

			w[k] = round + k;
			if (round & 1)
				lrc_pwrite(&fx, "s/graph", k * 4ull, &w[k], 4);
			else
				assert_int_equal(vg_lrc_host_write(f, k * 4ull,
						 &w[k], 4), 4);
		}

		/*
		 * No fsync between the two host writers: the cache's host
		 * writes stay in its host copy while the legacy writer's
		 * pwrite(2) lands in the file, often in the same pages. The
		 * acquire finds the legacy writes against the cache's
		 * storage base and merges them with its own, and the
		 * file's change counter moves without a sleep (ns
		 * timestamps; see docs/lrc.md for coarse clocks).
		 */

		/* The consumer: acquire, recompute over the whole file. */
		lrc_stats(&fx, &st0);
		assert_int_equal(vgmem_acquire(gpu.dev, va, 0), 0);
		assert_int_equal(gpu_graph_sum(&gpu, va, &sum), 0);
		assert_true(sum == graph_sum(w));
		assert_int_equal(lrc_gpu_sum(&gpu, va, GRAPH_BYTES, &fnv), 0);
		assert_true(fnv == lrc_fnv(w, GRAPH_BYTES));
		assert_int_equal(vgmem_release(gpu.dev, va, 0), 0);
		lrc_stats(&fx, &st1);
		if (round & 1)
			assert_true(st1.host_changes > st0.host_changes);
		/*
		 * Only GPU pages with changed bytes are fetched again: at
		 * most 22 of the 64 after the first round.
		 */
		if (round)
			assert_true(st1.fetch_host - st0.fetch_host <=
				    22 * GPAGE);
		print_message("round %u: fetched %llu bytes from the host copy, "
			      "%llu from storage\n", round,
			      (unsigned long long)(st1.fetch_host - st0.fetch_host),
			      (unsigned long long)(st1.fetch_storage -
						   st0.fetch_storage));
	}

	/* The host's own writes reach the file with its fsync. */
	assert_int_equal(vg_lrc_host_fsync(f), 0);
	vg_lrc_host_close(f);
	{
		uint32_t *disk = malloc(GRAPH_BYTES);

		assert_non_null(disk);
		assert_int_equal(lrc_get(&fx, "s/graph", disk, GRAPH_BYTES),
				 GRAPH_BYTES);
		assert_memory_equal(disk, w, GRAPH_BYTES);
		free(disk);
	}
	assert_int_equal(vgmem_unmap_file(gpu.dev, va), 0);
	lrc_guest_fini(&gpu);
	free(w);
	lrc_fx_fini(&fx);
}

/* ---- false sharing: two writers, disjoint halves of every row ------------ */

#define IMG_ROW		6000u		/* bytes; rows straddle 4 KiB pages */
#define IMG_ROWS	200u
#define IMG_BYTES	(IMG_ROW * IMG_ROWS)
#define IMG_HALF	(IMG_ROW / 2)

struct writer {
	struct lrc_guest *lg;
	uint64_t va;		/* the image map */
	uint64_t src;		/* a BO of IMG_ROWS half rows */
	uint32_t half;		/* 0: left halves, 1: right */
	uint32_t seed;
	struct it_fail *fail;
};

static int write_halves(struct writer *w)
{
	struct vgmem_dev *dev = w->lg->dev;

	IT_CHECK(w->fail, vgmem_fill_pattern(w->lg->ch, w->src,
					     IMG_HALF * IMG_ROWS, w->seed) == 0);
	IT_CHECK(w->fail, vgmem_acquire(dev, w->va, 0) == 0);
	IT_CHECK(w->fail, lrc_ce_2d(w->lg->ch, w->src, IMG_HALF,
				    w->va + w->half * IMG_HALF, IMG_ROW,
				    IMG_HALF, IMG_ROWS) == 0);
	IT_CHECK(w->fail, vgmem_release(dev, w->va, 0) == 0);
	return 0;
}

static void *writer_thread(void *arg)
{
	write_halves(arg);
	return NULL;
}

/* The image both writers of a round leave: halves of their patterns. */
static void expected_image(uint8_t *img, uint32_t seed0, uint32_t seed1)
{
	uint8_t *half = malloc(IMG_HALF * IMG_ROWS);
	uint32_t r, s;

	assert_non_null(half);
	for (s = 0; s < 2; s++) {
		lrc_pattern(half, IMG_HALF * IMG_ROWS, s ? seed1 : seed0);
		for (r = 0; r < IMG_ROWS; r++)
			memcpy(img + r * IMG_ROW + s * IMG_HALF,
			       half + r * IMG_HALF, IMG_HALF);
	}
	free(half);
}

static void test_false_sharing(void **state)
{
	uint64_t map_len = (IMG_BYTES + GPAGE - 1) / GPAGE * GPAGE;
	struct lrc_guest lg[2];
	struct writer w[2];
	pthread_t t[2];
	struct it_fail fail;
	struct lrc_fx fx;
	uint8_t *img, *exp;
	uint32_t round, i;

	(void)state;
	lrc_fx_init(&fx, 256 * MiB, 0);
	lrc_mkdir(&fx, "s");
	img = calloc(1, IMG_BYTES + 1);	/* + 1: a read sees no growth */
	exp = malloc(IMG_BYTES);
	assert_non_null(img);
	assert_non_null(exp);
	lrc_put(&fx, "s/image", img, IMG_BYTES, 0644);
	it_fail_init(&fail);
	for (i = 0; i < 2; i++) {
		lrc_guest_init(&fx, &lg[i], i ? "right" : "left", "s");
		w[i].lg = &lg[i];
		w[i].half = i;
		w[i].fail = &fail;
		assert_int_equal(vgmem_map_file(lg[i].dev, 0, "image", 0, map_len,
						VGMEM_FILE_RW, &w[i].va), 0);
		assert_int_equal(vgmem_bo_alloc(lg[i].dev, 2 * MiB, &w[i].src), 0);
	}

	for (round = 0; round < 3; round++) {
		for (i = 0; i < 2; i++) {
			w[i].seed = 100 * (i + 1) + round;
			assert_int_equal(pthread_create(&t[i], NULL,
							writer_thread, &w[i]), 0);
		}
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		it_fail_assert(&fail);
		expected_image(exp, w[0].seed, w[1].seed);
		/* Each writer sees both halves once it acquires. */
		for (i = 0; i < 2; i++) {
			assert_int_equal(vgmem_acquire(lg[i].dev, w[i].va, 0), 0);
			assert_int_equal(vgmem_read(lg[i].ch, w[i].va, img,
						    IMG_BYTES), 0);
			assert_memory_equal(img, exp, IMG_BYTES);
		}
	}
	/* msync from one of them: the file is exact, its size unchanged. */
	assert_int_equal(vgmem_file_sync(lg[0].dev, w[0].va, 0), 0);
	memset(img, 0xee, IMG_BYTES);
	assert_int_equal(lrc_get(&fx, "s/image", img, IMG_BYTES + 1), IMG_BYTES);
	assert_memory_equal(img, exp, IMG_BYTES);

	for (i = 0; i < 2; i++)
		lrc_guest_fini(&lg[i]);
	free(img);
	free(exp);
	lrc_fx_fini(&fx);
}

/* ---- durability ------------------------------------------------------------ */

#define DUR_BYTES	(1 * MiB)

/*
 * In a child: write on the GPU, release, sync, then die by SIGKILL with
 * the host and everything in it still alive.
 */
static void durability_child(const char *dir)
{
	struct lrc_fx fx;
	struct lrc_guest lg;
	uint64_t va;

	memset(&fx, 0, sizeof(fx));
	snprintf(fx.dir, sizeof(fx.dir), "%s", dir);
	fx.h = lrc_host(64 * MiB, 0);
	lrc_guest_init(&fx, &lg, "writer", "s");
	if (vgmem_map_file(lg.dev, 0, "log", 0, DUR_BYTES, VGMEM_FILE_RW, &va) ||
	    vgmem_acquire(lg.dev, va, 0) ||
	    vgmem_fill_pattern(lg.ch, va + 64 * KiB, DUR_BYTES - 128 * KiB, 9) ||
	    vgmem_release(lg.dev, va, 0) ||
	    vgmem_file_sync(lg.dev, va, 0))
		_exit(3);
	raise(SIGKILL);
	_exit(4);
}

static void test_durability_kill(void **state)
{
	struct lrc_fx fx;
	uint8_t *buf, *exp;
	int status;
	pid_t pid;

	(void)state;
	lrc_fx_init(&fx, 0, 0);
	lrc_mkdir(&fx, "s");
	exp = malloc(DUR_BYTES);
	buf = malloc(DUR_BYTES);
	assert_non_null(exp);
	assert_non_null(buf);
	memset(exp, 0x11, DUR_BYTES);
	lrc_put(&fx, "s/log", exp, DUR_BYTES, 0644);
	lrc_pattern(exp + 64 * KiB, DUR_BYTES - 128 * KiB, 9);

	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		durability_child(fx.dir);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);

	/* Reopen: every byte the GPU released and synced is in the file. */
	assert_int_equal(lrc_get(&fx, "s/log", buf, DUR_BYTES), DUR_BYTES);
	assert_memory_equal(buf, exp, DUR_BYTES);
	free(buf);
	free(exp);
	lrc_fx_fini(&fx);
}

/*
 * Without a sync: a VM that goes away (unmap, or the VM destroyed with its
 * map) loses no released byte, and its unreleased writes are released
 * implicitly; both reach the file when the host goes.
 */
static void test_no_lost_release(void **state)
{
	struct lrc_guest a, b;
	struct lrc_fx fx;
	uint8_t *buf, *exp;
	uint64_t va_a, va_b;

	(void)state;
	lrc_fx_init(&fx, 64 * MiB, 0);
	lrc_mkdir(&fx, "s");
	exp = calloc(1, 512 * KiB);
	buf = malloc(512 * KiB);
	assert_non_null(exp);
	assert_non_null(buf);
	lrc_put(&fx, "s/f", exp, 512 * KiB, 0644);

	lrc_guest_init(&fx, &a, "a", "s");
	lrc_guest_init(&fx, &b, "b", "s");
	assert_int_equal(vgmem_map_file(a.dev, 0, "f", 0, 256 * KiB,
					VGMEM_FILE_RW, &va_a), 0);
	assert_int_equal(vgmem_map_file(b.dev, 0, "f", 256 * KiB, 256 * KiB,
					VGMEM_FILE_RW, &va_b), 0);
	assert_int_equal(vgmem_acquire(a.dev, va_a, 0), 0);
	assert_int_equal(vgmem_acquire(b.dev, va_b, 0), 0);
	assert_int_equal(vgmem_fill_pattern(a.ch, va_a, 256 * KiB, 5), 0);
	assert_int_equal(vgmem_release(a.dev, va_a, 0), 0);
	/* b writes and never releases. */
	assert_int_equal(vgmem_fill_pattern(b.ch, va_b, 256 * KiB, 6), 0);
	lrc_pattern(exp, 256 * KiB, 5);
	lrc_pattern(exp + 256 * KiB, 256 * KiB, 6);

	assert_int_equal(vgmem_unmap_file(a.dev, va_a), 0);
	lrc_guest_fini(&a);
	lrc_guest_fini(&b);		/* destroyed with its map */
	vg_host_destroy(fx.h);
	fx.h = NULL;
	assert_int_equal(lrc_get(&fx, "s/f", buf, 512 * KiB), 512 * KiB);
	assert_memory_equal(buf, exp, 512 * KiB);
	free(buf);
	free(exp);
	lrc_fx_fini(&fx);
}

/* ---- read-only sharing: ten VMs, one VRAM replica ------------------------ */

#define NSHARE		10
#define SH_BYTES	(256 * KiB)	/* 4 GPU pages */

static void test_readonly_sharing(void **state)
{
	struct lrc_guest lg[NSHARE];
	struct vg_lrc_stats st;
	uint64_t va[NSHARE], sum, old_sum, new_sum;
	struct lrc_fx fx;
	uint8_t *buf;
	uint32_t i;

	(void)state;
	lrc_fx_init(&fx, 256 * MiB, 0);
	lrc_mkdir(&fx, "s");
	buf = malloc(SH_BYTES);
	assert_non_null(buf);
	lrc_pattern(buf, SH_BYTES, 77);
	lrc_put(&fx, "s/model.bin", buf, SH_BYTES, 0644);
	old_sum = lrc_fnv(buf, SH_BYTES);

	for (i = 0; i < NSHARE; i++) {
		char name[16];

		snprintf(name, sizeof(name), "vm%u", i);
		lrc_guest_init(&fx, &lg[i], name, "s");
		/* All may write; none has yet. */
		assert_int_equal(vgmem_map_file(lg[i].dev, 0, "model.bin", 0,
						SH_BYTES, VGMEM_FILE_RW, &va[i]), 0);
		assert_int_equal(vgmem_acquire(lg[i].dev, va[i], 0), 0);
		assert_int_equal(lrc_gpu_sum(&lg[i], va[i], SH_BYTES, &sum), 0);
		assert_true(sum == old_sum);
	}
	lrc_stats(&fx, &st);
	assert_int_equal(st.replicas_shared, SH_BYTES / GPAGE);
	assert_int_equal(st.replicas_private, 0);
	assert_int_equal(st.vram_used, SH_BYTES);
	assert_int_equal(st.base_copies, 0);	/* nobody wrote: no base */
	assert_true(st.shared_maps >= (NSHARE - 1) * (SH_BYTES / GPAGE));

	/* vm0 writes its first GPU page: only it gets a private copy. */
	assert_int_equal(vgmem_memset(lg[0].ch, va[0], GPAGE, 0xabababab), 0);
	lrc_stats(&fx, &st);
	assert_int_equal(st.replicas_private, 1);
	assert_int_equal(st.replicas_shared, SH_BYTES / GPAGE);
	assert_int_equal(st.vram_used, SH_BYTES + GPAGE);
	assert_true(st.base_copies >= 1);
	assert_int_equal(vgmem_release(lg[0].dev, va[0], 0), 0);
	memset(buf, 0xab, GPAGE);
	new_sum = lrc_fnv(buf, SH_BYTES);
	assert_int_equal(lrc_gpu_sum(&lg[0], va[0], SH_BYTES, &sum), 0);
	assert_true(sum == new_sum);

	/* The others still read the old version ... */
	for (i = 1; i < NSHARE; i++) {
		assert_int_equal(lrc_gpu_sum(&lg[i], va[i], SH_BYTES, &sum), 0);
		assert_true(sum == old_sum);
	}
	/* ... until they acquire. */
	for (i = 1; i < NSHARE; i++) {
		assert_int_equal(vgmem_acquire(lg[i].dev, va[i], 0), 0);
		assert_int_equal(lrc_gpu_sum(&lg[i], va[i], SH_BYTES, &sum), 0);
		assert_true(sum == new_sum);
	}
	/* The file is untouched until someone syncs. */
	assert_int_equal(lrc_get(&fx, "s/model.bin", buf, SH_BYTES), SH_BYTES);
	assert_true(lrc_fnv(buf, SH_BYTES) == old_sum);
	assert_int_equal(vgmem_file_sync(lg[3].dev, va[3], 0), 0);
	assert_int_equal(lrc_get(&fx, "s/model.bin", buf, SH_BYTES), SH_BYTES);
	assert_true(lrc_fnv(buf, SH_BYTES) == new_sum);

	for (i = 0; i < NSHARE; i++)
		lrc_guest_fini(&lg[i]);
	free(buf);
	lrc_fx_fini(&fx);
}

/* ---- eviction under a tiny budget ------------------------------------------ */

#define EV_BYTES	(4 * MiB)

static void test_eviction_tiny_budget(void **state)
{
	struct lrc_guest wr, rd;
	struct vg_lrc_stats st;
	struct lrc_fx fx;
	uint64_t va_w, va_r, sum;
	uint8_t *exp, *buf;

	(void)state;
	/* 256 KiB of replicas for a 4 MiB file: 4 GPU pages at a time. */
	lrc_fx_init(&fx, 256 * MiB, 256 * KiB);
	lrc_mkdir(&fx, "s");
	exp = malloc(EV_BYTES);
	buf = malloc(EV_BYTES);
	assert_non_null(exp);
	assert_non_null(buf);
	lrc_pattern(exp, EV_BYTES, 1);
	lrc_put(&fx, "s/big", exp, EV_BYTES, 0644);

	lrc_guest_init(&fx, &wr, "writer", "s");
	lrc_guest_init(&fx, &rd, "reader", "s");
	assert_int_equal(vgmem_map_file(wr.dev, 0, "big", 0, EV_BYTES,
					VGMEM_FILE_RW, &va_w), 0);
	assert_int_equal(vgmem_map_file(rd.dev, 0, "big", 0, EV_BYTES,
					VGMEM_FILE_RO, &va_r), 0);
	/* Unreleased writes of private replicas are evicted, never lost. */
	assert_int_equal(vgmem_acquire(wr.dev, va_w, 0), 0);
	assert_int_equal(vgmem_fill_pattern(wr.ch, va_w + 64 * KiB,
					    EV_BYTES - 192 * KiB, 2), 0);
	lrc_pattern(exp + 64 * KiB, EV_BYTES - 192 * KiB, 2);
	assert_int_equal(lrc_gpu_sum(&wr, va_w, EV_BYTES, &sum), 0);
	assert_true(sum == lrc_fnv(exp, EV_BYTES));
	lrc_stats(&fx, &st);
	assert_true(st.evictions > 0);
	assert_true(st.vram_used <= 256 * KiB);
	assert_int_equal(vgmem_release(wr.dev, va_w, 0), 0);

	/* The reader sees every byte, through the same tiny budget. */
	assert_int_equal(vgmem_acquire(rd.dev, va_r, 0), 0);
	assert_int_equal(vgmem_read(rd.ch, va_r, buf, EV_BYTES), 0);
	assert_memory_equal(buf, exp, EV_BYTES);
	assert_int_equal(vgmem_file_sync(wr.dev, va_w, 0), 0);
	assert_int_equal(lrc_get(&fx, "s/big", buf, EV_BYTES), EV_BYTES);
	assert_memory_equal(buf, exp, EV_BYTES);
	lrc_stats(&fx, &st);
	assert_true(st.vram_used <= 256 * KiB);

	lrc_guest_fini(&wr);
	lrc_guest_fini(&rd);
	free(exp);
	free(buf);
	lrc_fx_fini(&fx);
}

/* ---- peer caching: a host read finds the newest bytes on the GPU ---------- */

static void test_host_reads_gpu(void **state)
{
	struct vg_lrc_stats st0, st1;
	struct vg_lrc_file *f;
	struct lrc_guest lg;
	struct lrc_fx fx;
	uint8_t *exp, *buf;
	char share[256];
	uint64_t va;

	(void)state;
	lrc_fx_init(&fx, 128 * MiB, 0);
	lrc_mkdir(&fx, "s");
	exp = calloc(1, 2 * MiB);
	buf = malloc(2 * MiB);
	assert_non_null(exp);
	assert_non_null(buf);
	lrc_put(&fx, "s/f", exp, 2 * MiB, 0644);
	lrc_guest_init(&fx, &lg, "gpu", "s");
	assert_int_equal(vg_host_file_open(fx.h, lrc_path(&fx, "s", share,
			 sizeof(share)), "f", false, &f), 0);
	/* The host reads the file once: its copy holds the old bytes. */
	assert_int_equal(vg_lrc_host_read(f, 0, buf, 2 * MiB), 2 * MiB);
	assert_memory_equal(buf, exp, 2 * MiB);

	assert_int_equal(vgmem_map_file(lg.dev, 0, "f", 0, 2 * MiB,
					VGMEM_FILE_RW, &va), 0);
	assert_int_equal(vgmem_acquire(lg.dev, va, 0), 0);
	assert_int_equal(vgmem_fill_pattern(lg.ch, va + 128 * KiB, 1 * MiB, 4), 0);
	/* Unreleased: the host still reads the old version. */
	assert_int_equal(vg_lrc_host_read(f, 0, buf, 2 * MiB), 2 * MiB);
	assert_memory_equal(buf, exp, 2 * MiB);
	assert_int_equal(vgmem_release(lg.dev, va, 0), 0);
	lrc_pattern(exp + 128 * KiB, 1 * MiB, 4);

	/* Released: served from the GPU's replicas, byte exact, no sync. */
	lrc_stats(&fx, &st0);
	assert_int_equal(vg_lrc_host_read(f, 4096, buf, 2 * MiB - 8192),
			 2 * MiB - 8192);
	assert_memory_equal(buf, exp + 4096, 2 * MiB - 8192);
	lrc_stats(&fx, &st1);
	assert_true(st1.host_reads_peer > st0.host_reads_peer);
	assert_true(st1.fetch_gpu > st0.fetch_gpu);
	/* Past the end of the file: nothing. */
	assert_int_equal(vg_lrc_host_read(f, 2 * MiB, buf, 4096), 0);
	/* The file itself has not changed yet. */
	assert_int_equal(lrc_get(&fx, "s/f", buf, 2 * MiB), 2 * MiB);
	assert_true(buf[128 * KiB] == 0 && buf[2 * MiB - 1] == 0);

	vg_lrc_host_close(f);
	lrc_guest_fini(&lg);
	free(exp);
	free(buf);
	lrc_fx_fini(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_producer_consumer),
		cmocka_unit_test(test_false_sharing),
		cmocka_unit_test(test_durability_kill),
		cmocka_unit_test(test_no_lost_release),
		cmocka_unit_test(test_readonly_sharing),
		cmocka_unit_test(test_eviction_tiny_budget),
		cmocka_unit_test(test_host_reads_gpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
