// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_lrc_mapfind: what a guest's FILE_ACQUIRE / FILE_RELEASE costs as
 * its VM's file maps grow from 1 to 4096 (VG_LRC_MAPS_MAX). Each command
 * first finds the map its VA names (vg_lrc_map_find): a walk over the
 * context's list of maps before, an AVL index of them now. The commands
 * go the guest's way (libvgmem, the control dispatcher) on a 64 KiB map of
 * a real file; the measured map is the one made last (the end of the old
 * list). Columns: median us per command over batches. RATIO = 4096 maps /
 * 1 map (goal <= 1.5: the lookup no longer grows with the maps; the walk
 * over the list cost 12-19 us per command at 4096 maps, 16-73 times one
 * map's, on the 2-core build machine).
 */
#include "bench_lrc.h"

#define NMAPS		4096
#define BATCHES		21
#define PER_BATCH	200

/* Median us per command of BATCHES batches of PER_BATCH on va. */
static double per_op_us(struct bguest *bg, uint64_t va, bool acquire)
{
	double v[BATCHES];
	uint64_t t0;
	uint32_t b, i;
	int ret;

	for (b = 0; b < BATCHES; b++) {
		t0 = bench_now_ns();
		for (i = 0; i < PER_BATCH; i++) {
			ret = acquire ? vgmem_acquire(bg->dev, va, 0) :
					vgmem_release(bg->dev, va, 0);
			if (ret)
				blrc_die(acquire ? "acquire" : "release", ret);
		}
		v[b] = (double)(bench_now_ns() - t0) / PER_BATCH / 1e3;
	}
	return bench_median(v, BATCHES);
}

int main(void)
{
	double acq1, rel1, acqn, reln, acqf;
	static uint64_t va[NMAPS];
	uint8_t buf[64 * KiB];
	struct bguest bg;
	struct blrc b;
	uint32_t i;
	int ret;

	blrc_init(&b, 256 * MiB, 0);
	memset(buf, 0x5a, sizeof(buf));
	blrc_put(&b, "data", buf, sizeof(buf));
	bguest_init(&b, &bg, "mapper");
	ret = vgmem_map_file(bg.dev, 0, "data", 0, sizeof(buf), VGMEM_FILE_RW,
			     &va[0]);
	if (ret)
		blrc_die("map", ret);
	acq1 = per_op_us(&bg, va[0], true);
	rel1 = per_op_us(&bg, va[0], false);
	for (i = 1; i < NMAPS; i++) {
		ret = vgmem_map_file(bg.dev, 0, "data", 0, sizeof(buf),
				     VGMEM_FILE_RW, &va[i]);
		if (ret)
			blrc_die("map", ret);
	}
	acqn = per_op_us(&bg, va[NMAPS - 1], true);
	reln = per_op_us(&bg, va[NMAPS - 1], false);
	acqf = per_op_us(&bg, va[0], true);

	printf("bench_lrc_mapfind: FILE_ACQUIRE/RELEASE of a 64 KiB map, "
	       "median of %d x %d\n", BATCHES, PER_BATCH);
	printf("  %-34s %12s %12s\n", "", "us/acquire", "us/release");
	printf("  %-34s %12.3f %12.3f\n", "1 map", acq1, rel1);
	printf("  %-34s %12.3f %12.3f\n", "4096 maps, the last one made", acqn,
	       reln);
	printf("  %-34s %12.3f %12s\n", "4096 maps, the first one made", acqf,
	       "");
	bench_ratio("acquire latency, 4096 maps vs 1 map", acqn / acq1, 1.5, 1);
	bench_ratio("release latency, 4096 maps vs 1 map", reln / rel1, 1.5, 1);
	for (i = 0; i < NMAPS; i++) {
		ret = vgmem_unmap_file(bg.dev, va[i]);
		if (ret)
			blrc_die("unmap", ret);
	}
	bguest_fini(&bg);
	blrc_fini(&b);
	return 0;
}
