// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_falseshare: GAIA's false-sharing scenario. Two GPU contexts
 * (two guests) write disjoint halves of every row of one image file,
 * PASSES times each (a filter applied repeatedly, GAIA section 3.1's
 * read-modify-write loop), concurrently, between one acquire and one
 * release; then one syncs the file.
 *
 * LRC: run for real on the software GPU through the cache. Its cost is
 * the guests' device time (the sim's cost model of their copy-engine
 * work) plus the cache's data movement priced by the same model
 * (bench_lrc.h: faults' fetches, write-back of private replicas).
 *
 * Baseline: a strict one-owner page-migration model, as UVM does it. Each
 * 64 KiB page has one owner; the two writers run concurrently, so their
 * accesses interleave, here at row granularity (writer 0 row r, writer 1
 * row r, ...: the coarsest interleaving two concurrent kernels can have,
 * so the fewest migrations, in the baseline's favour); every write by a
 * processor that does not own the page migrates the whole page to it, one
 * 64 KiB copy over PCIe by the cost model. The writes themselves cost what
 * they cost the LRC run (the same kernels). Fault-handling latency (tens
 * of microseconds per fault on real hardware) is left out, again in the
 * baseline's favour. RATIO = baseline / LRC simulated time; goal >= 10.
 */
#include <pthread.h>
#include "bench_lrc.h"

#define ROW		8000u			/* bytes; rows straddle pages */
#define ROWS		1024u
#define HALF		(ROW / 2)
#define IMG		((uint64_t)ROW * ROWS)
#define UVM_PAGE	(64ull << 10)

struct writer {
	struct bguest *bg;
	uint64_t va, src;
	uint32_t half, passes;
	int err;
};

static int ce_rows(struct vgmem_chan *ch, uint64_t src, uint64_t dst)
{
	uint32_t v[8] = {
		(uint32_t)(src >> 32), (uint32_t)src,
		(uint32_t)(dst >> 32), (uint32_t)dst,
		HALF, ROW, HALF, ROWS,
	};
	uint32_t flags = VGMEM_CE_LAUNCH_SRC_PITCH | VGMEM_CE_LAUNCH_DST_PITCH |
			 VGMEM_CE_LAUNCH_MULTI_LINE;

	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_OFFSET_IN_UPPER, v, 8);
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_LAUNCH_DMA, &flags, 1);
	return vgmem_finish(ch);
}

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	uint32_t p;

	w->err = vgmem_acquire(w->bg->dev, w->va, 0);
	for (p = 0; !w->err && p < w->passes; p++)
		w->err = ce_rows(w->bg->ch, w->src + (p & 1) * 4 * MiB,
				 w->va + w->half * HALF);
	if (!w->err)
		w->err = vgmem_release(w->bg->dev, w->va, 0);
	return NULL;
}

/* The strict one-owner model: page migrations of the same access stream. */
static uint64_t uvm_migrations(uint32_t passes)
{
	uint32_t npages = (uint32_t)((IMG + UVM_PAGE - 1) / UVM_PAGE);
	int *owner = malloc(npages * sizeof(*owner));
	uint64_t migr = 0, a, first, last, pg;
	uint32_t p, r, w;

	if (!owner)
		blrc_die("malloc", -1);
	for (pg = 0; pg < npages; pg++)
		owner[pg] = -1;			/* the file: first touch migrates */
	for (p = 0; p < passes; p++) {
		for (r = 0; r < ROWS; r++) {
			for (w = 0; w < 2; w++) {
				a = (uint64_t)r * ROW + w * HALF;
				first = a / UVM_PAGE;
				last = (a + HALF - 1) / UVM_PAGE;
				for (pg = first; pg <= last; pg++) {
					if (owner[pg] != (int)w) {
						owner[pg] = (int)w;
						migr++;
					}
				}
			}
		}
	}
	free(owner);
	return migr;
}

static void run(uint32_t passes, double *ratio_out)
{
	struct vg_lrc_stats s0, s1;
	struct bguest bg[2];
	struct writer w[2];
	pthread_t t[2];
	uint64_t map = (IMG + UVM_PAGE - 1) / UVM_PAGE * UVM_PAGE;
	uint64_t work_ns = 0, move_ns, lrc_ns, uvm_ns, migr, dev0[2];
	struct blrc b;
	uint8_t *img;
	uint32_t i;
	int ret;

	blrc_init(&b, 512 * MiB, 0);
	img = calloc(1, IMG);
	if (!img)
		blrc_die("calloc", -1);
	blrc_put(&b, "image", img, IMG);
	free(img);
	for (i = 0; i < 2; i++) {
		bguest_init(&b, &bg[i], i ? "right" : "left");
		w[i].bg = &bg[i];
		w[i].half = i;
		w[i].passes = passes;
		ret = vgmem_map_file(bg[i].dev, 0, "image", 0, map, VGMEM_FILE_RW,
				     &w[i].va);
		if (!ret)
			ret = vgmem_bo_alloc(bg[i].dev, 8 * MiB, &w[i].src);
		if (!ret)
			ret = vgmem_fill_pattern(bg[i].ch, w[i].src, 8 * MiB, i + 1);
		if (ret)
			blrc_die("setup", ret);
		dev0[i] = bguest_dev_ns(&bg[i]);
	}
	vg_lrc_get_stats(vg_host_lrc(b.h), &s0);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, writer_run, &w[i]);
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		if (w[i].err)
			blrc_die("writer", w[i].err);
	}
	ret = vgmem_file_sync(bg[0].dev, w[0].va, 0);
	if (ret)
		blrc_die("sync", ret);
	vg_lrc_get_stats(vg_host_lrc(b.h), &s1);
	for (i = 0; i < 2; i++)
		work_ns += bguest_dev_ns(&bg[i]) - dev0[i];
	move_ns = blrc_moved_ns(&b, &s0, &s1);
	lrc_ns = work_ns + move_ns;
	migr = uvm_migrations(passes);
	uvm_ns = work_ns + migr * vg_sim_cost_ns(vg_host_sim(b.h), VG_LOC_HOST,
						 UVM_PAGE);
	printf("  %6u %10.3f %10.3f %10.3f %10llu %10.3f %8.1f\n", passes,
	       work_ns / 1e6, move_ns / 1e6, lrc_ns / 1e6,
	       (unsigned long long)migr, uvm_ns / 1e6, (double)uvm_ns / lrc_ns);
	*ratio_out = (double)uvm_ns / lrc_ns;
	for (i = 0; i < 2; i++)
		bguest_fini(&bg[i]);
	blrc_fini(&b);
}

int main(void)
{
	static const uint32_t passes[] = { 1, 4, 16 };
	double ratio, headline = 0;
	size_t i;

	printf("bench_lrc_falseshare: 2 writers x halves of %u rows of %u bytes "
	       "(%.1f MiB), simulated ms\n", ROWS, ROW, IMG / (double)MiB);
	printf("  %6s %10s %10s %10s %10s %10s %8s\n", "passes", "work",
	       "lrc-moves", "LRC", "migrations", "one-owner", "ratio");
	for (i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
		run(passes[i], &ratio);
		if (passes[i] == 4)
			headline = ratio;
	}
	bench_ratio("false sharing, one-owner migration vs LRC (4 passes)",
		    headline, 10.0, 0);
	return 0;
}
