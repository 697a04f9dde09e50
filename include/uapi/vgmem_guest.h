/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vgmem guest driver interface: what a process inside a VM uses to drive its
 * vGPU through the guest kernel driver (guest-driver/kernel/, vgmem_guest.ko),
 * and what libvgmem's PCI transport (vgmem_open_pci) speaks. This header is
 * the specification; docs/guest.md explains it.
 *
 * One character device per vGPU, /dev/vgmemN (N from 0, in probe order;
 * /sys/class/vgmem_guest/vgmemN/device links to the PCI device). Everything
 * a process creates through an open file (channels, BOs, DMA buffers)
 * belongs to that file: closing it, or the process
 * dying, destroys all of it on the device. Files never see each other's
 * resources: a channel id, BO VA or DMA handle of another file is refused
 * as if it did not exist.
 *
 * The vGPU reads GPFIFO rings and pushbuffers by guest-physical address
 * (include/uapi/vgmem.h): in a guest without an IOMMU, a process that can
 * submit work can make the GPU read and write any guest memory. The device
 * node is therefore root's (mode 0600) unless the administrator grants it.
 *
 * Errors are negative errnos from ioctl(2): -EINVAL a malformed argument
 * (reserved fields not zero, sizes, alignment), -EBADF/-ENOENT a handle,
 * channel or VA this file does not own, -ENODEV the device was unplugged or
 * its driver unbound (every later call fails the same; close the file),
 * -EINTR a wait interrupted by a signal (nothing changed), -ENOMEM, -EFAULT.
 * A command the driver passed on to the device returns 0 from ioctl(2) and
 * the device's answer in vgmem_ctrl.status.
 */
#ifndef _UAPI_VGMEM_GUEST_H
#define _UAPI_VGMEM_GUEST_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include "vgmem.h"

#define VGMEM_GUEST_DRIVER_VERSION	1
#define VGMEM_GUEST_CLASS		"vgmem_guest"	/* /sys/class/... */
#define VGMEM_GUEST_DEV_PREFIX		"vgmem"		/* /dev/vgmemN */

/*
 * VGMEM_GIOC_QUERY: what the device and driver are. device is the answer of
 * the device's VGMEM_CTRL_QUERY at probe (quota, chunk size, VA range).
 */
#define VGMEM_GUEST_IRQ_NONE		0	/* polled */
#define VGMEM_GUEST_IRQ_MSI		1
#define VGMEM_GUEST_IRQ_INTX		2

struct vgmem_guest_query {
	__u32 driver_version;		/* VGMEM_GUEST_DRIVER_VERSION */
	__u32 abi_version;		/* the device's VGMEM_REG_ABI_VERSION */
	__u32 max_channels;		/* VGMEM_REG_MAX_CHANNELS */
	__u32 irq;			/* VGMEM_GUEST_IRQ_* in use */
	__u64 dma_max;			/* largest DMA buffer, bytes */
	__u64 dma_total_max;		/* all DMA buffers of one file, bytes */
	struct vgmem_ctrl_query device;
	__u64 rsvd[4];
};

/*
 * VGMEM_GIOC_CTRL: one control command (struct vgmem_ctrl), checked by the
 * driver before it reaches the device:
 *  - QUERY, STATS, SHARES: as they are;
 *  - CHAN_CREATE: the whole GPFIFO ring (gpfifo_entries * 8 bytes from
 *    gpfifo_gpa) must lie inside one DMA buffer of this file; the new
 *    channel belongs to this file;
 *  - CHAN_DESTROY: a channel of this file;
 *  - BO_ALLOC (the BO belongs to this file), BO_FREE (a BO of this file);
 *  - FILE_MAP, FILE_UNMAP, FILE_ACQUIRE, FILE_RELEASE, FILE_SYNC are
 *    refused (-EPERM) for now: file maps will be made from a file
 *    descriptor the process opened on its virtio-fs mount, so that a
 *    process can only map files it may open itself.
 * Reserved fields must be zero and the union's bytes past the op's struct
 * too (-EINVAL). The device's answer is in status (0 or -errno) and the
 * out fields; ioctl(2) returns 0 then.
 */

/*
 * VGMEM_GIOC_DMA_ALLOC: a buffer of guest memory the GPU can reach (rings,
 * pushbuffers, copy staging), physically contiguous, zeroed. size: a
 * multiple of 4 KiB, 1 ... dma_max, within dma_total_max for the file.
 * Out: handle (non-zero), gpa (the bus address the device uses: what goes
 * into GPFIFO entries, CHAN_CREATE and copy methods), mmap_offset (mmap(2)
 * it with MAP_SHARED, whole, at that offset).
 */
struct vgmem_guest_dma {
	__u64 size;
	__u64 gpa;			/* out */
	__u64 mmap_offset;		/* out */
	__u32 handle;			/* out */
	__u32 flags;			/* 0 */
};

/*
 * VGMEM_GIOC_DMA_FREE: the handle goes at once; the memory is returned to
 * the guest when no mapping of it is left and no channel this file had at
 * the time of the free is alive any more (the GPU may still be reading a
 * pushbuffer in it). A handle that a live channel's ring lies in: -EBUSY.
 */
struct vgmem_guest_dma_free {
	__u32 handle;
	__u32 rsvd;
};

/*
 * mmap(2) offsets. A channel's USERD page (GP_GET, GP_PUT, ERROR...): one
 * page at VGMEM_GUEST_MMAP_USERD(chan), MAP_SHARED, for a channel of this
 * file only; it stays valid while the channel lives (the host swaps the
 * page behind it during relocation; the guest never notices). A DMA buffer:
 * at the mmap_offset DMA_ALLOC returned.
 */
#define VGMEM_GUEST_MMAP_USERD(chan)	((__u64)(chan) << 12)
#define VGMEM_GUEST_MMAP_DMA_BASE	(1ull << 32)

/*
 * VGMEM_GIOC_WAIT_FAULT: wait until a channel of this file faults (its
 * USERD ERROR becomes non-zero: the device raises VGMEM_IRQ_CHAN_FAULT), or
 * timeout_ns passes (0: just look). Out: faulted, a bit per channel id of
 * this file that has faulted and is not destroyed yet (destroying a
 * channel clears its bit, so one fault does not wake every later wait).
 * -ETIMEDOUT when none did in time. poll(2) on the file reports POLLPRI the same way.
 * Completion of GPFIFO entries is read from the channel's USERD page
 * (GP_GET, ENTRIES_DONE); the device raises no interrupt for it.
 */
struct vgmem_guest_wait {
	__u64 timeout_ns;
	__u64 faulted;			/* out: bit n = channel n */
};

#define VGMEM_GIOC_TYPE			0xB8
#define VGMEM_GIOC_QUERY		_IOR(VGMEM_GIOC_TYPE, 0x00, struct vgmem_guest_query)
#define VGMEM_GIOC_CTRL			_IOWR(VGMEM_GIOC_TYPE, 0x01, struct vgmem_ctrl)
#define VGMEM_GIOC_DMA_ALLOC		_IOWR(VGMEM_GIOC_TYPE, 0x02, struct vgmem_guest_dma)
#define VGMEM_GIOC_DMA_FREE		_IOW(VGMEM_GIOC_TYPE, 0x03, struct vgmem_guest_dma_free)
#define VGMEM_GIOC_WAIT_FAULT		_IOWR(VGMEM_GIOC_TYPE, 0x04, struct vgmem_guest_wait)

#endif /* _UAPI_VGMEM_GUEST_H */
