// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vgmemN: one character device per vGPU, class "vgmem_guest", mode
 * 0600 (a process that submits work can make the GPU reach any guest
 * memory). The file operations unpack the ioctls of
 * include/uapi/vgmem_guest.h and leave the resources to file.c.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>

#include "vgmem_guest_drv.h"

/* Fault waits read FAULTED again after this long (a lost interrupt). */
#define VGG_FAULT_SLICE_MS	100

static dev_t vgg_devt;
static struct cdev vgg_cdev;
static struct class *vgg_class;
/* minor -> vgg_dev; an entry holds no reference, open takes one under xa_lock */
static DEFINE_XARRAY_ALLOC(vgg_minors);

static int vgg_open(struct inode *inode, struct file *filp)
{
	struct vgg_dev *gdev;
	struct vgg_file *gf;

	xa_lock(&vgg_minors);
	gdev = xa_load(&vgg_minors, iminor(inode));
	if (gdev && !vgg_dev_gone(gdev))
		kref_get(&gdev->kref);
	else
		gdev = NULL;
	xa_unlock(&vgg_minors);
	if (!gdev)
		return -ENODEV;

	gf = vgg_file_create(gdev);
	if (!gf) {
		vgg_dev_put(gdev);
		return -ENOMEM;
	}
	mutex_lock(&gdev->files_lock);
	if (gdev->closing) {
		mutex_unlock(&gdev->files_lock);
		vgg_file_destroy(gf);
		vgg_dev_put(gdev);
		return -ENODEV;
	}
	list_add_tail(&gf->node, &gdev->files);
	mutex_unlock(&gdev->files_lock);
	/* All files map through one address_space, so that zaps reach all. */
	mutex_lock(&gdev->map_lock);
	if (!gdev->map_inode) {
		ihold(inode);
		gdev->map_inode = inode;
	}
	filp->f_mapping = gdev->map_inode->i_mapping;
	mutex_unlock(&gdev->map_lock);
	filp->private_data = gf;
	return nonseekable_open(inode, filp);
}

static int vgg_release(struct inode *inode, struct file *filp)
{
	struct vgg_file *gf = filp->private_data;
	struct vgg_dev *gdev = gf->gdev;

	/* Under files_lock: remove() must not miss what this file still owns. */
	mutex_lock(&gdev->files_lock);
	list_del(&gf->node);
	mutex_lock(&gf->lock);
	vgg_file_drop_device(gf);
	mutex_unlock(&gf->lock);
	mutex_unlock(&gdev->files_lock);
	vgg_file_destroy(gf);
	vgg_dev_put(gdev);
	return 0;
}

static long vgg_ioctl_query(struct vgg_file *gf, void __user *uarg)
{
	struct vgg_dev *gdev = gf->gdev;
	struct vgmem_guest_query q;

	memset(&q, 0, sizeof(q));
	q.driver_version = VGMEM_GUEST_DRIVER_VERSION;
	q.abi_version = VGMEM_ABI_VERSION;
	q.max_channels = gdev->max_channels;
	q.irq = gdev->irq_type;
	q.dma_max = vgg_dma_max;
	q.dma_total_max = vgg_dma_total_max;
	q.device = gdev->query;
	return copy_to_user(uarg, &q, sizeof(q)) ? -EFAULT : 0;
}

static long vgg_ioctl_ctrl(struct vgg_file *gf, void __user *uarg)
{
	struct vgmem_ctrl *cmd;
	long ret;

	/* 512 bytes: not on the stack. */
	cmd = kmalloc(sizeof(*cmd), GFP_KERNEL);
	if (!cmd)
		return -ENOMEM;
	if (copy_from_user(cmd, uarg, sizeof(*cmd))) {
		ret = -EFAULT;
		goto out;
	}
	ret = vgg_file_ctrl(gf, cmd);
	if (!ret && copy_to_user(uarg, cmd, sizeof(*cmd)))
		ret = -EFAULT;
out:
	kfree(cmd);
	return ret;
}

static long vgg_ioctl_dma_alloc(struct vgg_file *gf, void __user *uarg)
{
	struct vgmem_guest_dma d;
	struct vgmem_guest_dma_free f;
	long ret;

	if (copy_from_user(&d, uarg, sizeof(d)))
		return -EFAULT;
	ret = vgg_file_dma_alloc(gf, &d);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &d, sizeof(d))) {
		/* The caller cannot learn the handle: take the buffer back. */
		f.handle = d.handle;
		f.rsvd = 0;
		vgg_file_dma_free(gf, &f);
		return -EFAULT;
	}
	return 0;
}

static long vgg_ioctl_dma_free(struct vgg_file *gf, void __user *uarg)
{
	struct vgmem_guest_dma_free f;

	if (copy_from_user(&f, uarg, sizeof(f)))
		return -EFAULT;
	return vgg_file_dma_free(gf, &f);
}

/*
 * Faulted channels of this file, or -ENODEV. With no interrupt (or one
 * lost) the FAULTED registers are read here.
 */
static long vgg_ioctl_wait_fault(struct vgg_file *gf, void __user *uarg)
{
	struct vgg_dev *gdev = gf->gdev;
	struct vgmem_guest_wait w;
	u64 faulted;
	ktime_t deadline;
	long left;

	if (copy_from_user(&w, uarg, sizeof(w)))
		return -EFAULT;
	deadline = ktime_add_ns(ktime_get(), min_t(u64, w.timeout_ns, KTIME_MAX / 2));
	for (;;) {
		vgg_scan_faults(gdev);
		faulted = vgg_file_faulted(gf);
		if (faulted)
			break;
		if (vgg_dev_gone(gdev))
			return -ENODEV;
		left = ktime_to_ms(ktime_sub(deadline, ktime_get()));
		if (!w.timeout_ns || left < 0)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(gdev->wq,
				vgg_file_faulted(gf) || vgg_dev_gone(gdev),
				msecs_to_jiffies(min_t(long, left + 1, VGG_FAULT_SLICE_MS)));
		if (left < 0)
			return -EINTR;
	}
	w.faulted = faulted;
	return copy_to_user(uarg, &w, sizeof(w)) ? -EFAULT : 0;
}

static long vgg_ioctl_bind(struct vgg_file *gf, void __user *uarg, bool bind)
{
	struct vgmem_guest_share_bind b;

	if (copy_from_user(&b, uarg, sizeof(b)))
		return -EFAULT;
	return bind ? vgg_share_bind(gf, &b) : vgg_share_unbind(gf->gdev, &b);
}

static long vgg_ioctl_map_fd(struct vgg_file *gf, void __user *uarg)
{
	struct vgmem_guest_map_fd m;
	struct vgmem_ctrl *undo;
	long ret;

	if (copy_from_user(&m, uarg, sizeof(m)))
		return -EFAULT;
	ret = vgg_file_map_fd(gf, &m);
	if (ret || !copy_to_user(uarg, &m, sizeof(m)))
		return ret;
	/* The caller cannot learn the VA: take the map back. */
	undo = kzalloc(sizeof(*undo), GFP_KERNEL);
	if (undo) {
		undo->op = VGMEM_CTRL_FILE_UNMAP;
		undo->file.va = m.va;
		vgg_file_ctrl(gf, undo);
		kfree(undo);
	}
	return -EFAULT;
}

static long vgg_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct vgg_file *gf = filp->private_data;
	void __user *uarg = (void __user *)arg;

	if (vgg_dev_gone(gf->gdev))
		return -ENODEV;
	switch (cmd) {
	case VGMEM_GIOC_QUERY:
		return vgg_ioctl_query(gf, uarg);
	case VGMEM_GIOC_CTRL:
		return vgg_ioctl_ctrl(gf, uarg);
	case VGMEM_GIOC_DMA_ALLOC:
		return vgg_ioctl_dma_alloc(gf, uarg);
	case VGMEM_GIOC_DMA_FREE:
		return vgg_ioctl_dma_free(gf, uarg);
	case VGMEM_GIOC_WAIT_FAULT:
		return vgg_ioctl_wait_fault(gf, uarg);
	case VGMEM_GIOC_SHARE_BIND:
		return vgg_ioctl_bind(gf, uarg, true);
	case VGMEM_GIOC_SHARE_UNBIND:
		return vgg_ioctl_bind(gf, uarg, false);
	case VGMEM_GIOC_MAP_FD:
		return vgg_ioctl_map_fd(gf, uarg);
	default:
		return -ENOTTY;
	}
}

static int vgg_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct vgg_file *gf = filp->private_data;

	if (vgg_dev_gone(gf->gdev))
		return -ENODEV;
	return vgg_file_mmap(gf, vma);
}

static __poll_t vgg_poll(struct file *filp, poll_table *wait)
{
	struct vgg_file *gf = filp->private_data;
	struct vgg_dev *gdev = gf->gdev;

	poll_wait(filp, &gdev->wq, wait);
	if (vgg_dev_gone(gdev))
		return EPOLLERR | EPOLLHUP;
	if (gdev->irq < 0)
		vgg_scan_faults(gdev);
	return vgg_file_faulted(gf) ? EPOLLPRI : 0;
}

static const struct file_operations vgg_fops = {
	.owner = THIS_MODULE,
	.open = vgg_open,
	.release = vgg_release,
	.unlocked_ioctl = vgg_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = vgg_mmap,
	.poll = vgg_poll,
};

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static char *vgg_devnode(const struct device *dev, umode_t *mode)
#else
static char *vgg_devnode(struct device *dev, umode_t *mode)
#endif
{
	if (mode)
		*mode = 0600;
	return NULL;
}

int vgg_chardev_add(struct vgg_dev *gdev)
{
	struct device *node;
	u32 minor;
	int ret;

	ret = xa_alloc(&vgg_minors, &minor, gdev, XA_LIMIT(0, VGG_MAX_DEVS - 1),
		       GFP_KERNEL);
	if (ret) {
		dev_err(&gdev->pdev->dev, "no free minor (%d vGPUs at most)\n",
			VGG_MAX_DEVS);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	gdev->minor = minor;
	node = device_create(vgg_class, &gdev->pdev->dev,
			     MKDEV(MAJOR(vgg_devt), minor), gdev,
			     VGMEM_GUEST_DEV_PREFIX "%u", minor);
	if (IS_ERR(node)) {
		xa_erase(&vgg_minors, minor);
		gdev->minor = -1;
		return PTR_ERR(node);
	}
	gdev->node = node;
	return 0;
}

void vgg_chardev_remove(struct vgg_dev *gdev)
{
	if (gdev->minor < 0)
		return;
	device_destroy(vgg_class, MKDEV(MAJOR(vgg_devt), gdev->minor));
	gdev->node = NULL;
	xa_erase(&vgg_minors, gdev->minor);
}

int vgg_chardev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&vgg_devt, 0, VGG_MAX_DEVS, VGG_NAME);
	if (ret)
		return ret;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	vgg_class = class_create(VGMEM_GUEST_CLASS);
#else
	vgg_class = class_create(THIS_MODULE, VGMEM_GUEST_CLASS);
#endif
	if (IS_ERR(vgg_class)) {
		ret = PTR_ERR(vgg_class);
		goto err_region;
	}
	vgg_class->devnode = vgg_devnode;
	cdev_init(&vgg_cdev, &vgg_fops);
	vgg_cdev.owner = THIS_MODULE;
	ret = cdev_add(&vgg_cdev, vgg_devt, VGG_MAX_DEVS);
	if (ret)
		goto err_class;
	return 0;

err_class:
	class_destroy(vgg_class);
err_region:
	unregister_chrdev_region(vgg_devt, VGG_MAX_DEVS);
	return ret;
}

void vgg_chardev_exit(void)
{
	cdev_del(&vgg_cdev);
	class_destroy(vgg_class);
	unregister_chrdev_region(vgg_devt, VGG_MAX_DEVS);
}
