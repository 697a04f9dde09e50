/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vgmem guest driver interface: what a process inside a VM uses to drive its
 * vGPU through the guest kernel driver (guest-driver/kernel/, vgmem_guest.ko),
 * and what libvgmem's PCI transport (vgmem_open_pci) speaks. This header is
 * the specification; docs/guest.md explains it.
 *
 * One character device per vGPU, /dev/vgmemN (N from 0, in probe order;
 * /sys/class/vgmem_guest/vgmemN/device links to the PCI device). Everything
 * a process creates through an open file (channels, BOs, DMA buffers, file
 * maps) belongs to that file: closing it, or the process dying, destroys
 * all of it on the device. Files never see each other's resources: a
 * channel id, BO VA, file map or DMA handle of another file is refused as
 * if it did not exist.
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
 *  - FILE_MAP is refused (-EPERM): a file map is made from a file
 *    descriptor with VGMEM_GIOC_MAP_FD, so that a process maps only files
 *    it may open itself;
 *  - FILE_UNMAP, FILE_ACQUIRE, FILE_RELEASE, FILE_SYNC: on a map this file
 *    made (-EBADF otherwise: the range must start inside one of its maps),
 *    with the guest's page cache kept coherent (VGMEM_GIOC_MAP_FD).
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

/*
 * Files of the VM's shares (docs/guest.md, "Files of the share"). A
 * process maps a file it opened on the VM's virtio-fs mount; the driver
 * names it to the device by the mount's virtio-fs tag (which share) and
 * the file's path below the mount's root, both taken from the open file,
 * never from the caller.
 *
 * The guest kernel does not tell a module which tag a virtio-fs mount was
 * mounted with, so the administrator binds each mount to its tag once,
 * after mounting it ("vgmem-guest share bind TAG DIR").
 *
 * VGMEM_GIOC_SHARE_BIND (CAP_SYS_ADMIN): fd an open directory that is the
 * root of a virtio-fs mount, tag its virtio-fs tag (NUL-terminated inside
 * the field, NUL-padded), which must be one of this vGPU's shares
 * (VGMEM_CTRL_SHARES). The binding belongs to the device, not the file,
 * and holds the mount: umount fails with EBUSY until SHARE_UNBIND or the
 * driver lets the device go (umount -l detaches it at once and the
 * binding keeps working). -EPERM, -EBADF, -EINVAL (not the root of a
 * virtio-fs mount, a malformed tag, flags), -ENOENT (no share of this
 * vGPU has the tag), -EEXIST (the tag or the mount is bound already),
 * -ENOSPC (VGMEM_GUEST_BINDS_MAX bindings).
 * VGMEM_GIOC_SHARE_UNBIND (CAP_SYS_ADMIN): fd -1, tag: that binding goes
 * (-ENOENT if there is none); maps made through it stay.
 */
#define VGMEM_GUEST_BINDS_MAX		64

struct vgmem_guest_share_bind {
	__s32 fd;
	__u32 flags;			/* 0 */
	char tag[VGMEM_SHARE_TAG_SIZE];
};

/*
 * VGMEM_GIOC_MAP_FD: map [offset, offset + length) of the regular file
 * open at fd, on a bound virtio-fs mount, into the GPU VA space: FILE_MAP
 * with the share of the mount's tag and the file's path below the mount's
 * root. flags: VGMEM_FILE_RO (fd open for reading) or VGMEM_FILE_RW (open
 * for reading and writing). offset and length as FILE_MAP. Out: va. The
 * map belongs to this open file (closing it unmaps) and holds the file
 * open; fd may be closed after the call.
 *
 * The guest's page cache of the file and the GPU stay coherent: before
 * FILE_ACQUIRE the driver writes the range's dirty guest pages back
 * through virtio-fs (the GPU then sees what the guest's CPU wrote, also
 * through a shared mmap); after FILE_RELEASE, FILE_SYNC and FILE_UNMAP it
 * drops the range's cached guest pages, so read() and mmap reach the host
 * file again and see the GPU's bytes once they are in it (FILE_SYNC).
 *
 * Errors (ioctl(2)'s, the device's FILE_MAP errors included): -EBADF fd,
 * -EXDEV the file is not on a virtio-fs mount bound to this vGPU,
 * -EINVAL not a regular file, flags, rsvd, -EACCES fd's open mode does not
 * allow flags, -ENOENT the file was deleted or the mount's tag is no
 * longer a share of this vGPU, -ENAMETOOLONG the path does not fit
 * VGMEM_FILE_PATH_MAX, -ENOSPC VGMEM_GUEST_FMAPS_MAX maps in this file;
 * then the device's: -EINVAL, -ENOENT, -EACCES, -EFBIG, -ENOSPC, -ENOMEM
 * as include/uapi/vgmem.h says for FILE_MAP, and -ESTALE: the path names
 * another file by the time the device opens it (renamed meanwhile; the
 * driver passes the file's inode number with VGMEM_FILE_INO).
 */
#define VGMEM_GUEST_FMAPS_MAX		1024	/* per open file */

struct vgmem_guest_map_fd {
	__s32 fd;
	__u32 flags;			/* VGMEM_FILE_RO or VGMEM_FILE_RW */
	__u64 offset;
	__u64 length;
	__u64 va;			/* out */
	__u64 rsvd;			/* 0 */
};

#define VGMEM_GIOC_TYPE			0xB8
#define VGMEM_GIOC_QUERY		_IOR(VGMEM_GIOC_TYPE, 0x00, struct vgmem_guest_query)
#define VGMEM_GIOC_CTRL			_IOWR(VGMEM_GIOC_TYPE, 0x01, struct vgmem_ctrl)
#define VGMEM_GIOC_DMA_ALLOC		_IOWR(VGMEM_GIOC_TYPE, 0x02, struct vgmem_guest_dma)
#define VGMEM_GIOC_DMA_FREE		_IOW(VGMEM_GIOC_TYPE, 0x03, struct vgmem_guest_dma_free)
#define VGMEM_GIOC_WAIT_FAULT		_IOWR(VGMEM_GIOC_TYPE, 0x04, struct vgmem_guest_wait)
#define VGMEM_GIOC_SHARE_BIND		_IOW(VGMEM_GIOC_TYPE, 0x05, struct vgmem_guest_share_bind)
#define VGMEM_GIOC_SHARE_UNBIND		_IOW(VGMEM_GIOC_TYPE, 0x06, struct vgmem_guest_share_bind)
#define VGMEM_GIOC_MAP_FD		_IOWR(VGMEM_GIOC_TYPE, 0x07, struct vgmem_guest_map_fd)

#endif /* _UAPI_VGMEM_GUEST_H */
