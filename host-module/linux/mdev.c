// SPDX-License-Identifier: GPL-2.0
/*
 * The mdev driver: creating and removing vGPUs, how many more fit, and the
 * per-vGPU sysfs group "vgmem" (quota and entitlement settable, usage
 * readable). A vGPU's quota is admitted against its GPU's oversubscription
 * limit when it is created and whenever it changes.
 */
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/sysfs.h>

#include "vgmem_drv.h"

static struct vgmem_gpu *vgmem_gpu_of_type(struct mdev_type *mtype)
{
	return container_of(mtype->parent, struct vgmem_gpu, parent);
}

static unsigned int vgmem_mdev_get_available(struct mdev_type *mtype)
{
	struct vgmem_type *t = container_of(mtype, struct vgmem_type, type);

	return vgmem_gpu_available(vgmem_gpu_of_type(mtype), t->quota);
}

static ssize_t vgmem_mdev_show_description(struct mdev_type *mtype, char *buf)
{
	struct vgmem_type *t = container_of(mtype, struct vgmem_type, type);
	struct vgmem_gpu *gpu = vgmem_gpu_of_type(mtype);

	return sysfs_emit(buf, "quota %llu MiB on a GPU with %llu MiB of VRAM\n",
			  t->quota >> 20, gpu->vram_size >> 20);
}

static int vgmem_mdev_probe(struct mdev_device *mdev)
{
	struct vgmem_vgpu *v;
	int ret;

	/* vgmem_vfio_ops.init fills in the vGPU from the mdev and its type. */
	v = vfio_alloc_device(vgmem_vgpu, vdev, &mdev->dev, &vgmem_vfio_ops);
	if (IS_ERR(v))
		return PTR_ERR(v);

	ret = vgmem_gpu_attach(v->gpu, v);
	if (ret)
		goto err_put_vdev;

	ret = vfio_register_emulated_iommu_dev(&v->vdev);
	if (ret)
		goto err_detach;
	dev_set_drvdata(&mdev->dev, v);
	return 0;

err_detach:
	vgmem_gpu_detach(v->gpu, v);
err_put_vdev:
	vfio_put_device(&v->vdev);
	return ret;
}

static void vgmem_mdev_remove(struct mdev_device *mdev)
{
	struct vgmem_vgpu *v = dev_get_drvdata(&mdev->dev);

	/* Returns once the device is closed: the VM is gone by then. */
	vfio_unregister_group_dev(&v->vdev);
	vgmem_gpu_detach(v->gpu, v);
	vfio_put_device(&v->vdev);
}

/* ---- sysfs group "vgmem" on each mdev --------------------------------------- */

static struct vgmem_vgpu *vgmem_vgpu_of_dev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

static ssize_t quota_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct vgmem_vm_stats st;

	vgmem_vgpu_stats(vgmem_vgpu_of_dev(dev), &st);
	return sysfs_emit(buf, "%llu\n", st.quota);
}

static ssize_t quota_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count)
{
	struct vgmem_vgpu *v = vgmem_vgpu_of_dev(dev);
	u64 quota;
	int ret;

	ret = kstrtou64(buf, 0, &quota);
	if (!ret)
		ret = vgmem_gpu_set_quota(v->gpu, v, quota);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(quota);

static ssize_t entitlement_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct vgmem_vgpu *v = vgmem_vgpu_of_dev(dev);
	u64 bytes;

	mutex_lock(&v->lock);
	bytes = v->entitlement;
	mutex_unlock(&v->lock);
	return sysfs_emit(buf, "%llu\n", bytes);
}

static ssize_t entitlement_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	u64 bytes;
	int ret;

	ret = kstrtou64(buf, 0, &bytes);
	if (!ret)
		ret = vgmem_vgpu_set_entitlement(vgmem_vgpu_of_dev(dev), bytes);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(entitlement);

/* Read-only statistics, one field of struct vgmem_vm_stats each. */
#define VGMEM_STAT_ATTR(name, field)					\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	struct vgmem_vm_stats st;					\
									\
	vgmem_vgpu_stats(vgmem_vgpu_of_dev(dev), &st);			\
	return sysfs_emit(buf, "%llu\n", st.field);			\
}									\
static DEVICE_ATTR_RO(name)

VGMEM_STAT_ATTR(resident, resident);
VGMEM_STAT_ATTR(relocated, relocated);
VGMEM_STAT_ATTR(allocated, allocated);
VGMEM_STAT_ATTR(relocations_out, reloc_out_chunks);
VGMEM_STAT_ATTR(relocations_in, reloc_in_chunks);
VGMEM_STAT_ATTR(suspend_max_ns, suspend_max_ns);
VGMEM_STAT_ATTR(faults, faults);

static struct attribute *vgmem_mdev_attrs[] = {
	&dev_attr_quota.attr,
	&dev_attr_entitlement.attr,
	&dev_attr_resident.attr,
	&dev_attr_relocated.attr,
	&dev_attr_allocated.attr,
	&dev_attr_relocations_out.attr,
	&dev_attr_relocations_in.attr,
	&dev_attr_suspend_max_ns.attr,
	&dev_attr_faults.attr,
	NULL,
};

static const struct attribute_group vgmem_mdev_group = {
	.name = "vgmem",
	.attrs = vgmem_mdev_attrs,
};

static const struct attribute_group *vgmem_mdev_groups[] = {
	&vgmem_mdev_group,
	NULL,
};

struct mdev_driver vgmem_mdev_driver = {
	.device_api = VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name = "vgmem",
		.owner = THIS_MODULE,
		.mod_name = KBUILD_MODNAME,
		.dev_groups = vgmem_mdev_groups,
	},
	.probe = vgmem_mdev_probe,
	.remove = vgmem_mdev_remove,
	.get_available = vgmem_mdev_get_available,
	.show_description = vgmem_mdev_show_description,
};

int vgmem_mdev_init(void)
{
	return mdev_register_driver(&vgmem_mdev_driver);
}

void vgmem_mdev_exit(void)
{
	mdev_unregister_driver(&vgmem_mdev_driver);
}
