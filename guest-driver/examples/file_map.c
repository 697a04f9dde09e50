// SPDX-License-Identifier: MIT
/*
 * Example: a guest maps a file of its share into its GPU's address space,
 * runs built-in kernels over it between vgmem_acquire and vgmem_release,
 * and syncs the result to the file.
 *
 *   file_map --dev MDEV-UUID SHARE-ID PATH   VFIO: the vGPU in this VM
 *   file_map --pci DEV SHARE-ID PATH          the guest kernel driver
 *                                            (/dev/vgmem0, or "auto")
 *
 * PATH is relative to the share root; the file must be at least 64 KiB.
 * The program checksums the first 64 KiB on the GPU, overwrites them with
 * a pattern (VGMEM_K_FILL_PATTERN, seed 7), releases and syncs, then
 * checks the checksum of what the GPU wrote. It links libvgmem alone, as
 * a tenant's program does; the same steps with an in-process host and no
 * VM are `vgmem-guest-inproc --inproc --share 0=DIR file ...` on the host.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libvgmem.h>

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

int main(int argc, char **argv)
{
	struct vgmem_dev *dev;
	int ret;

	if (argc == 5 && !strcmp(argv[1], "--dev")) {
		ret = vgmem_open_vfio(argv[2], 0, &dev);
		if (ret) {
			fprintf(stderr, "open: %s\n", vgmem_vfio_error());
			return 1;
		}
		ret = run(dev, (uint32_t)strtoul(argv[3], NULL, 0), argv[4]);
		vgmem_close_vfio(dev);
	} else if (argc == 5 && !strcmp(argv[1], "--pci")) {
		ret = vgmem_open_pci(strcmp(argv[2], "auto") ? argv[2] : NULL,
				     &dev);
		if (ret) {
			fprintf(stderr, "open: %s\n", vgmem_pci_error());
			return 1;
		}
		ret = run(dev, (uint32_t)strtoul(argv[3], NULL, 0), argv[4]);
		vgmem_close_pci(dev);
	} else {
		fprintf(stderr, "usage: %s --dev MDEV-UUID SHARE-ID PATH\n"
			"       %s --pci DEV|auto SHARE-ID PATH\n", argv[0],
			argv[0]);
		return 2;
	}
	if (ret)
		fprintf(stderr, "file_map: %s\n", strerror(-ret));
	else
		printf("file_map: ok\n");
	return ret ? 1 : 0;
}
