// SPDX-License-Identifier: MIT
/*
 * Example: a guest maps a file of its share into its GPU's address space,
 * runs built-in kernels over it between vgmem_acquire and vgmem_release,
 * and syncs the result to the file.
 *
 *   file_map --dev MDEV-UUID SHARE-ID PATH     in a VM with a vgmem vGPU
 *   file_map --inproc SHARE-DIR PATH           with an in-process host whose
 *                                              guest has SHARE-DIR as share 0
 *
 * PATH is relative to the share root; the file must be at least 64 KiB.
 * The program checksums the first 64 KiB on the GPU, overwrites them with
 * a pattern (VGMEM_K_FILL_PATTERN, seed 7), releases and syncs, then
 * checks the checksum of what the GPU wrote. With --inproc it also reads
 * the file back with read(2) and compares: the file holds the GPU's data.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libvgmem.h>
#include "../../host-module/user/host.h"

#define SEED	7u

static int run(struct vgmem_dev *dev, uint32_t share, const char *path)
{
	uint64_t va, scratch, before, after;
	struct vgmem_chan *ch;
	int ret;

	ret = vgmem_chan_create(dev, 64, 0, 0, &ch);
	if (ret)
		return ret;
	ret = vgmem_bo_alloc(dev, VGMEM_PAGE_SIZE, &scratch);	/* kernel results */
	if (ret)
		goto out_chan;
	ret = vgmem_map_file(dev, share, path, 0, VGMEM_FILE_ALIGN,
			     VGMEM_FILE_RW, &va);
	if (ret) {
		fprintf(stderr, "map %s: %s\n", path, strerror(-ret));
		goto out_bo;
	}
	/* See what others released (host writers included) ... */
	ret = vgmem_acquire(dev, va, 0);
	if (!ret)
		ret = vgmem_checksum(ch, va, VGMEM_FILE_ALIGN, scratch, &before);
	/* ... write on the GPU, and publish it once the kernel is done. */
	if (!ret)
		ret = vgmem_fill_pattern(ch, va, VGMEM_FILE_ALIGN, SEED);
	if (!ret)
		ret = vgmem_release(dev, va, 0);
	if (!ret)
		ret = vgmem_file_sync(dev, va, 0);
	if (!ret)
		ret = vgmem_checksum(ch, va, VGMEM_FILE_ALIGN, scratch, &after);
	if (!ret && after != vgmem_pattern_checksum(VGMEM_FILE_ALIGN, SEED))
		ret = -EIO;
	if (!ret)
		printf("checksum before %016" PRIx64 ", after %016" PRIx64 "\n",
		       before, after);
	vgmem_unmap_file(dev, va);
out_bo:
	vgmem_bo_free(dev, scratch);
out_chan:
	vgmem_chan_destroy(ch);
	return ret;
}

/* The file, read with read(2), holds the pattern the GPU wrote. */
static int check_file(const char *dir, const char *path)
{
	char full[4096];
	uint8_t *buf;
	ssize_t n;
	int fd, ret = 0;

	snprintf(full, sizeof(full), "%s/%s", dir, path);
	buf = malloc(VGMEM_FILE_ALIGN);
	fd = open(full, O_RDONLY);
	if (!buf || fd < 0) {
		free(buf);
		return -errno;
	}
	n = read(fd, buf, VGMEM_FILE_ALIGN);
	if (n != (ssize_t)VGMEM_FILE_ALIGN ||
	    vgmem_fnv1a(VGMEM_FNV_INIT, buf, VGMEM_FILE_ALIGN) !=
	    vgmem_pattern_checksum(VGMEM_FILE_ALIGN, SEED))
		ret = -EIO;
	close(fd);
	free(buf);
	return ret;
}

static int run_inproc(const char *dir, const char *path)
{
	struct vg_host_config cfg;
	struct vg_host_guest *g;
	struct vg_host *h;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 256ull << 20;
	cfg.gpu.name = "example";
	ret = vg_host_create(&cfg, &h);
	if (ret)
		return ret;
	ret = vg_host_guest_create(h, "guest", 0, 0, &g);
	if (!ret)
		ret = vg_host_guest_set_share(g, 0, dir);
	if (!ret)
		ret = run(vg_host_guest_dev(g), 0, path);
	vg_host_destroy(h);
	if (!ret)
		ret = check_file(dir, path);
	return ret;
}

int main(int argc, char **argv)
{
	struct vgmem_dev *dev;
	int ret;

	if (argc == 4 && !strcmp(argv[1], "--inproc")) {
		ret = run_inproc(argv[2], argv[3]);
	} else if (argc == 5 && !strcmp(argv[1], "--dev")) {
		ret = vgmem_open_vfio(argv[2], 0, &dev);
		if (ret) {
			fprintf(stderr, "open: %s\n", vgmem_vfio_error());
			return 1;
		}
		ret = run(dev, (uint32_t)strtoul(argv[3], NULL, 0), argv[4]);
		vgmem_close_vfio(dev);
	} else {
		fprintf(stderr, "usage: %s --dev MDEV-UUID SHARE-ID PATH\n"
			"       %s --inproc SHARE-DIR PATH\n", argv[0], argv[0]);
		return 2;
	}
	if (ret)
		fprintf(stderr, "file_map: %s\n", strerror(-ret));
	else
		printf("file_map: ok\n");
	return ret ? 1 : 0;
}
