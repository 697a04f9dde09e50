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

#include "vgk_drv.h"

static struct vgk_gpu *vgk_gpu_of_type(struct mdev_type *mtype)
{
	return container_of(mtype->parent, struct vgk_gpu, parent);
}

static unsigned int vgk_mdev_get_available(struct mdev_type *mtype)
{
	struct vgk_type *t = container_of(mtype, struct vgk_type, type);

	return vgk_gpu_available(vgk_gpu_of_type(mtype), t->quota);
}

static ssize_t vgk_mdev_show_description(struct mdev_type *mtype, char *buf)
{
	struct vgk_type *t = container_of(mtype, struct vgk_type, type);
	struct vgk_gpu *gpu = vgk_gpu_of_type(mtype);

	return sysfs_emit(buf, "quota %llu MiB on a GPU with %llu MiB of VRAM\n",
			  t->quota >> 20, gpu->vram_size >> 20);
}

static int vgk_mdev_probe(struct mdev_device *mdev)
{
	struct vgk_vgpu *v;
	int ret;

	/* vgk_vfio_ops.init fills in the vGPU from the mdev and its type. */
	v = vfio_alloc_device(vgk_vgpu, vdev, &mdev->dev, &vgk_vfio_ops);
	if (IS_ERR(v))
		return PTR_ERR(v);

	ret = vgk_gpu_attach(v->gpu, v);
	if (ret)
		goto err_put_vdev;

	ret = vfio_register_emulated_iommu_dev(&v->vdev);
	if (ret)
		goto err_detach;
	dev_set_drvdata(&mdev->dev, v);
	return 0;

err_detach:
	vgk_gpu_detach(v->gpu, v);
err_put_vdev:
	vfio_put_device(&v->vdev);
	return ret;
}

static void vgk_mdev_remove(struct mdev_device *mdev)
{
	struct vgk_vgpu *v = dev_get_drvdata(&mdev->dev);

	/* Returns once the device is closed: the VM is gone by then. */
	vfio_unregister_group_dev(&v->vdev);
	vgk_gpu_detach(v->gpu, v);
	vfio_put_device(&v->vdev);
}

/* ---- sysfs group "vgmem" on each mdev --------------------------------------- */

static struct vgk_vgpu *vgk_vgpu_of_dev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

static ssize_t quota_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct vgmem_vm_stats st;

	vgk_vgpu_stats(vgk_vgpu_of_dev(dev), &st);
	return sysfs_emit(buf, "%llu\n", st.quota);
}

static ssize_t quota_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count)
{
	struct vgk_vgpu *v = vgk_vgpu_of_dev(dev);
	u64 quota;
	int ret;

	ret = kstrtou64(buf, 0, &quota);
	if (!ret)
		ret = vgk_gpu_set_quota(v->gpu, v, quota);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(quota);

static ssize_t entitlement_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct vgk_vgpu *v = vgk_vgpu_of_dev(dev);
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
		ret = vgk_vgpu_set_entitlement(vgk_vgpu_of_dev(dev), bytes);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(entitlement);

/*
 * What the vGPU was sold: its type's size, fixed. Memory the VM holds
 * beyond it (a quota raised above it) is a burst, the first to leave VRAM
 * under the cold policy while the VM is above its entitlement.
 */
static ssize_t profile_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%llu\n", vgk_vgpu_of_dev(dev)->type->quota);
}
static DEVICE_ATTR_RO(profile);

/* Read-only statistics, one field of struct vgmem_vm_stats each. */
#define VGK_STAT_ATTR(name, field)					\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	struct vgmem_vm_stats st;					\
									\
	vgk_vgpu_stats(vgk_vgpu_of_dev(dev), &st);			\
	return sysfs_emit(buf, "%llu\n", st.field);			\
}									\
static DEVICE_ATTR_RO(name)

VGK_STAT_ATTR(resident, resident);
VGK_STAT_ATTR(relocated, relocated);
VGK_STAT_ATTR(allocated, allocated);
VGK_STAT_ATTR(relocations_out, reloc_out_chunks);
VGK_STAT_ATTR(relocations_in, reloc_in_chunks);
VGK_STAT_ATTR(suspend_max_ns, suspend_max_ns);
VGK_STAT_ATTR(faults, faults);

static struct attribute *vgk_mdev_attrs[] = {
	&dev_attr_quota.attr,
	&dev_attr_entitlement.attr,
	&dev_attr_profile.attr,
	&dev_attr_resident.attr,
	&dev_attr_relocated.attr,
	&dev_attr_allocated.attr,
	&dev_attr_relocations_out.attr,
	&dev_attr_relocations_in.attr,
	&dev_attr_suspend_max_ns.attr,
	&dev_attr_faults.attr,
	NULL,
};

static const struct attribute_group vgk_mdev_group = {
	.name = "vgmem",
	.attrs = vgk_mdev_attrs,
};

static const struct attribute_group *vgk_mdev_groups[] = {
	&vgk_mdev_group,
	NULL,
};

struct mdev_driver vgk_mdev_driver = {
	.device_api = VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name = "vgmem",
		.owner = THIS_MODULE,
		.mod_name = KBUILD_MODNAME,
		.dev_groups = vgk_mdev_groups,
	},
	.probe = vgk_mdev_probe,
	.remove = vgk_mdev_remove,
	.get_available = vgk_mdev_get_available,
	.show_description = vgk_mdev_show_description,
};

int vgk_mdev_init(void)
{
	return mdev_register_driver(&vgk_mdev_driver);
}

void vgk_mdev_exit(void)
{
	mdev_unregister_driver(&vgk_mdev_driver);
}
