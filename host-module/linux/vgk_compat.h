/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel APIs that differ between the kernels vgmem.ko builds for:
 * Debian 12's 6.1 and 6.12 from bookworm-backports (docs/testing.md). Every
 * version test of the glue is here, one entry per kernel change, named
 * after the kernel's own function or field and the release that changed
 * it; the .c files call these and hold no #if of their own.
 *
 * Where a kernel added a function, older kernels get it under its own name
 * (vm_flags_set); where a kernel changed a signature or a structure, the
 * glue calls a vgk_ wrapper with the newer meaning.
 */
#ifndef VGK_LINUX_COMPAT_H
#define VGK_LINUX_COMPAT_H

#include <linux/device.h>
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/vfio.h>
#include <linux/version.h>
#include <net/genetlink.h>

/*
 * vfs_path_lookup() is exported by fs/namei.c, but 6.1 declares it only in
 * fs/internal.h, which modules cannot include; later kernels (6.12) declare
 * it in <linux/namei.h>, with this same prototype, so declaring it again
 * is harmless there and needs no version test.
 */
struct dentry;
struct path;
struct vfsmount;
int vfs_path_lookup(struct dentry *dentry, struct vfsmount *mnt,
		    const char *name, unsigned int flags, struct path *path);

/* 6.3: vma->vm_flags became read-only; vm_flags_set() changes them. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/* 6.4: class_create() lost its module argument. */
static inline struct class *vgk_class_create(const char *name)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return class_create(name);
#else
	return class_create(THIS_MODULE, name);
#endif
}

/* 6.8: eventfd_signal() lost its count; it always adds 1. */
static inline void vgk_eventfd_signal(struct eventfd_ctx *ctx)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/*
 * 6.2: a dump's parsed attributes moved into a struct genl_info inside
 * struct genl_dumpit_info (info.attrs).
 */
static inline struct nlattr **vgk_genl_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * 6.2: the VFIO core frees a device itself after its .release; before,
 * .release ended with vfio_free_device(). Call last in .release.
 */
static inline void vgk_vfio_release_free(struct vfio_device *vdev)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
	vfio_free_device(vdev);
#endif
}

/*
 * 6.2: a device on an emulated IOMMU (an mdev) names the iommufd callbacks
 * of its kind; the VFIO core refuses one without them when CONFIG_IOMMUFD
 * is set (they are NULL without it). For a struct vfio_device_ops
 * initialiser.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define VGK_VFIO_EMULATED_IOMMUFD_OPS					\
	.bind_iommufd = vfio_iommufd_emulated_bind,			\
	.unbind_iommufd = vfio_iommufd_emulated_unbind,			\
	.attach_ioas = vfio_iommufd_emulated_attach_ioas,		\
	.detach_ioas = vfio_iommufd_emulated_detach_ioas,
#else
#define VGK_VFIO_EMULATED_IOMMUFD_OPS
#endif

/*
 * 6.2: struct vfio_migration_ops gained migration_get_data_size
 * (VFIO_DEVICE_FEATURE_MIG_DATA_SIZE), which the VFIO core calls without
 * checking for NULL: a migratable device must have it. For a struct
 * vfio_migration_ops initialiser; fn is unused before 6.2 (mark it
 * __maybe_unused).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define VGK_MIG_DATA_SIZE_OP(fn)	.migration_get_data_size = (fn),
#else
#define VGK_MIG_DATA_SIZE_OP(fn)
#endif

/*
 * 6.2: pre-copy (VFIO_MIGRATION_PRE_COPY, the PRE_COPY states and
 * VFIO_MIG_GET_PRECOPY_INFO on the data fd). Before it the device offers
 * stop-and-copy only.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define VGK_HAVE_PRECOPY	1
#else
#define VGK_HAVE_PRECOPY	0
#endif

#endif /* VGK_LINUX_COMPAT_H */
