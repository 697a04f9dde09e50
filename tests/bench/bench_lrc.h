/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers of the LRC file-cache benchmarks (bench_lrc_*.c): a temporary
 * share directory, an in-process host whose guests map its files, and the
 * cost model's price of the bytes the cache moved.
 */
#ifndef VGMEM_BENCH_LRC_H
#define VGMEM_BENCH_LRC_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "host-module/user/host.h"
#include "host-module/core/lrc/lrc.h"
#include "benchlib.h"

#define MiB		(1ull << 20)
#define KiB		(1ull << 10)

struct blrc {
	char dir[64];		/* the share: a temporary directory */
	struct vg_host *h;
};

struct bguest {
	struct vg_host_guest *g;
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint64_t scratch;
};

static inline void blrc_die(const char *what, int err)
{
	fprintf(stderr, "bench_lrc: %s failed: %d\n", what, err);
	exit(1);
}

static inline void blrc_init(struct blrc *b, uint64_t vram, uint64_t budget)
{
	struct vg_host_config cfg;
	int ret;

	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/var/tmp/vg_bench_lrc_XXXXXX");
	if (!mkdtemp(b->dir))
		blrc_die("mkdtemp", -1);
	/* Not model_fixture.h's mf_host_cfg: a benchmark runs without cmocka. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = "bench";
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	cfg.lrc_vram_budget = budget;
	ret = vg_host_create(&cfg, &b->h);
	if (ret)
		blrc_die("vg_host_create", ret);
}

static inline void blrc_fini(struct blrc *b)
{
	char cmd[128];

	if (b->h)
		vg_host_destroy(b->h);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
	if (system(cmd))
		fprintf(stderr, "bench_lrc: could not remove %s\n", b->dir);
}

static inline void blrc_path(const struct blrc *b, const char *name, char *p,
			     size_t len)
{
	snprintf(p, len, "%s/%s", b->dir, name);
}

static inline void blrc_put(const struct blrc *b, const char *name,
			    const void *buf, size_t len)
{
	char p[256];
	int fd;

	blrc_path(b, name, p, sizeof(p));
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		blrc_die("write file", -1);
	fsync(fd);
	close(fd);
}

static inline void bguest_init(struct blrc *b, struct bguest *bg,
			       const char *name)
{
	int ret;

	memset(bg, 0, sizeof(*bg));
	ret = vg_host_guest_create(b->h, name, 0, 64 * MiB, &bg->g);
	if (!ret) {
		bg->dev = vg_host_guest_dev(bg->g);
		ret = vg_host_guest_set_share(bg->g, 0, b->dir);
	}
	if (!ret)
		ret = vgmem_chan_create(bg->dev, 64, 0, 4 * MiB, &bg->ch);
	if (!ret)
		ret = vgmem_bo_alloc(bg->dev, VGMEM_PAGE_SIZE, &bg->scratch);
	if (ret)
		blrc_die("guest", ret);
}

static inline void bguest_fini(struct bguest *bg)
{
	if (bg->g)
		vg_host_guest_destroy(bg->g);
	memset(bg, 0, sizeof(*bg));
}

static inline uint64_t bguest_dev_ns(struct bguest *bg)
{
	struct vg_sim_cost c;

	vg_host_guest_cost(bg->g, &c);
	return c.device_ns;
}

/*
 * What the cache's data movement costs by the sim's cost model: bytes
 * over PCIe (host copy <-> VRAM) at the PCIe bandwidth, VRAM -> VRAM at
 * the VRAM bandwidth. Reading the file from storage into the host copy is
 * host work (fetch_storage), not counted here.
 */
static inline uint64_t blrc_moved_ns(struct blrc *b,
				     const struct vg_lrc_stats *s0,
				     const struct vg_lrc_stats *s1)
{
	struct vg_sim *sim = vg_host_sim(b->h);
	uint64_t pcie = (s1->fetch_host - s0->fetch_host) +
			(s1->fetch_gpu - s0->fetch_gpu);

	return vg_sim_cost_ns(sim, VG_LOC_HOST, pcie) +
	       vg_sim_cost_ns(sim, VG_LOC_VRAM, s1->fetch_peer - s0->fetch_peer);
}

#endif /* VGMEM_BENCH_LRC_H */
