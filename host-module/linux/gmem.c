// SPDX-License-Identifier: GPL-2.0
/*
 * Guest memory for the core and the GPU (struct vg_guest_mem) over
 * vfio_dma_rw(): every access is looked up in the container's DMA map as
 * it stands at that moment, so memory the guest has unmapped is simply
 * unreachable (-EFAULT) and nothing here caches a translation that
 * VFIO_IOMMU_UNMAP_DMA would have to invalidate. Valid only while the
 * device is open: the VM, its channels and the control queue are gone
 * before close_device returns (vgpu.c).
 */
#include "vgk_drv.h"

/*
 * No single access needs more: slots are 512 bytes, the GPU moves data in
 * bounded pieces. A larger request is a bug or hostile, not a transfer.
 */
#define VGK_GMEM_MAX_LEN	(16u << 20)

static int vgk_gmem_rw(void *priv, u64 gpa, void *buf, size_t len,
		       bool write)
{
	struct vgk_vgpu *v = priv;
	u64 end;

	if (!len)
		return 0;
	if (len > VGK_GMEM_MAX_LEN || check_add_overflow(gpa, (u64)len, &end))
		return -EFAULT;
	/* Whatever VFIO says (-EINVAL outside the map, -EPERM, ...): -EFAULT. */
	if (vfio_dma_rw(&v->vdev, gpa, buf, len, write))
		return -EFAULT;
	return 0;
}

static int vgk_gmem_read(void *priv, u64 gpa, void *buf, size_t len)
{
	return vgk_gmem_rw(priv, gpa, buf, len, false);
}

static int vgk_gmem_write(void *priv, u64 gpa, const void *buf, size_t len)
{
	/* vfio_dma_rw() takes one buffer for both directions; it only reads it here. */
	return vgk_gmem_rw(priv, gpa, (void *)buf, len, true);
}

void vgk_gmem_init(struct vgk_vgpu *v, struct vg_guest_mem *gmem)
{
	gmem->read = vgk_gmem_read;
	gmem->write = vgk_gmem_write;
	gmem->priv = v;
}
