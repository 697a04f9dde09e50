// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of physical GPUs. A GPU driver registers a GPU; the GPU gets a
 * core (struct vg_gpu), a class device vgmemN in class "vgmem" carrying
 * its attributes, and an mdev parent on that device whose types are VRAM
 * quotas. Admission keeps the sum of the quotas of a GPU's vGPUs within
 * oversub_pct percent of its VRAM: oversubscription is the point, but a
 * bounded one.
 */
#include <linux/idr.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "vgk_drv.h"

struct class *vgk_class;

static DEFINE_IDA(vgk_gpu_ida);
/* Every registered GPU, for lookups by later interfaces (netlink). */
LIST_HEAD(vgk_gpus);
DEFINE_MUTEX(vgk_gpus_lock);
/* Bumped on every vGPU or GPU added or removed: netlink dumps check it. */
static atomic_t vgk_gen = ATOMIC_INIT(1);

u32 vgk_registry_gen(void)
{
	return (u32)atomic_read(&vgk_gen);
}

/*
 * Read at every admission, so a change applies to the next mdev created
 * or resized; vGPUs admitted earlier stay.
 */
static unsigned int oversub_pct = 400;
module_param(oversub_pct, uint, 0644);
MODULE_PARM_DESC(oversub_pct,
		 "sum of vGPU quotas a GPU admits, in percent of its VRAM (default 400)");

/*
 * The chunk policy of each GPU registered from now on (its sysfs policy
 * changes one GPU's later): cold, the relocation that moves the chunks no
 * sampled access has seen; random is GPUswap's, the baseline benchmarks
 * compare with. A name the core does not know is refused (-EINVAL).
 */
static enum vg_chunk_policy vgk_policy = VG_POLICY_COLD;

static int vgk_policy_set(const char *val, const struct kernel_param *kp)
{
	enum vg_chunk_policy p;
	char name[16];
	int ret;

	strscpy(name, val, sizeof(name));
	strim(name);
	ret = vg_policy_parse(name, &p);
	if (ret)
		return ret;
	*(enum vg_chunk_policy *)kp->arg = p;
	return 0;
}

static int vgk_policy_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  vg_policy_name(*(enum vg_chunk_policy *)kp->arg));
}

static const struct kernel_param_ops vgk_policy_ops = {
	.set = vgk_policy_set,
	.get = vgk_policy_get,
};
module_param_cb(policy, &vgk_policy_ops, &vgk_policy, 0644);
MODULE_PARM_DESC(policy,
		 "chunk policy of GPUs registered from now on: cold, lra or random (default cold)");

static const struct {
	const char *sysfs_name;
	const char *pretty_name;
	u64 quota;
} vgk_type_desc[VGK_NR_TYPES] = {
	{ "1g", "vGPU 1 GiB", 1ull << 30 },
	{ "2g", "vGPU 2 GiB", 2ull << 30 },
	{ "4g", "vGPU 4 GiB", 4ull << 30 },
	{ "8g", "vGPU 8 GiB", 8ull << 30 },
};

u32 vgk_gpu_oversub(const struct vgk_gpu *gpu)
{
	u32 pct = READ_ONCE(gpu->oversub_pct);

	return pct ? pct : READ_ONCE(oversub_pct);
}

void vgk_gpu_set_oversub(struct vgk_gpu *gpu, u32 pct)
{
	mutex_lock(&gpu->lock);
	WRITE_ONCE(gpu->oversub_pct, pct);
	mutex_unlock(&gpu->lock);
}

static u64 vgk_gpu_limit(const struct vgk_gpu *gpu)
{
	u64 scaled;

	/* Saturate rather than wrap: a huge percentage means "no limit". */
	if (check_mul_overflow(gpu->vram_size, (u64)vgk_gpu_oversub(gpu),
			       &scaled))
		return U64_MAX;
	return div64_u64(scaled, 100);
}

static u64 vgk_gpu_room(struct vgk_gpu *gpu)
{
	u64 limit = vgk_gpu_limit(gpu);

	lockdep_assert_held(&gpu->lock);
	return limit > gpu->committed ? limit - gpu->committed : 0;
}

unsigned int vgk_gpu_available(struct vgk_gpu *gpu, u64 quota)
{
	u64 n;

	mutex_lock(&gpu->lock);
	n = div64_u64(vgk_gpu_room(gpu), quota);
	mutex_unlock(&gpu->lock);
	return (unsigned int)min_t(u64, n, UINT_MAX);
}

int vgk_gpu_attach(struct vgk_gpu *gpu, struct vgk_vgpu *v)
{
	int ret = 0;

	/* Module references first: a GPU driver on its way out gets no vGPU. */
	if (!try_module_get(gpu->owner))
		return -ENODEV;
	mutex_lock(&gpu->lock);
	if (v->quota > vgk_gpu_room(gpu)) {
		ret = -ENOSPC;
	} else {
		gpu->committed += v->quota;
		list_add_tail(&v->node, &gpu->vgpus);
		atomic_inc(&vgk_gen);
	}
	mutex_unlock(&gpu->lock);
	if (ret)
		module_put(gpu->owner);
	return ret;
}

void vgk_gpu_detach(struct vgk_gpu *gpu, struct vgk_vgpu *v)
{
	mutex_lock(&gpu->lock);
	/* _init: a netlink request holding v sees it is gone (set_quota). */
	list_del_init(&v->node);
	atomic_inc(&vgk_gen);
	gpu->committed -= v->quota;
	mutex_unlock(&gpu->lock);
	module_put(gpu->owner);
}

int vgk_gpu_set_quota(struct vgk_gpu *gpu, struct vgk_vgpu *v, u64 quota)
{
	int ret = 0;

	if (!quota || !IS_ALIGNED(quota, VGMEM_PAGE_SIZE))
		return -EINVAL;
	mutex_lock(&gpu->lock);
	mutex_lock(&v->lock);
	if (list_empty(&v->node))
		ret = -ENODEV;		/* being removed */
	else if (quota > v->quota && quota - v->quota > vgk_gpu_room(gpu))
		ret = -ENOSPC;
	else if (v->vm)
		ret = vg_vm_set_quota(v->vm, quota);	/* -EBUSY below allocation */
	if (!ret) {
		gpu->committed = gpu->committed - v->quota + quota;
		v->quota = quota;
	}
	mutex_unlock(&v->lock);
	mutex_unlock(&gpu->lock);
	return ret;
}

/* ---- per-GPU attributes on vgmemN ---------------------------------------- */

static ssize_t vram_size_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct vgk_gpu *gpu = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%llu\n", gpu->vram_size);
}
static DEVICE_ATTR_RO(vram_size);

/* A read-only attribute that prints one u64 field of vg_gpu_get_stats(). */
#define VGK_GPU_STAT_ATTR(field)					\
static ssize_t field##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct vgk_gpu *gpu = dev_get_drvdata(dev);			\
	struct vg_gpu_stats st;						\
									\
	vg_gpu_get_stats(gpu->core, &st);				\
	return sysfs_emit(buf, "%llu\n", st.field);			\
}									\
static DEVICE_ATTR_RO(field)

VGK_GPU_STAT_ATTR(vram_used);
VGK_GPU_STAT_ATTR(host_used);
VGK_GPU_STAT_ATTR(chunk_size);

static ssize_t policy_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct vgk_gpu *gpu = dev_get_drvdata(dev);
	struct vg_gpu_stats st;

	vg_gpu_get_stats(gpu->core, &st);
	return sysfs_emit(buf, "%s\n", vg_policy_name(st.policy));
}

static ssize_t policy_store(struct device *dev, struct device_attribute *attr,
			    const char *buf, size_t count)
{
	struct vgk_gpu *gpu = dev_get_drvdata(dev);
	enum vg_chunk_policy p;
	char name[16];
	int ret;

	/* sysfs hands over the written line, newline included. */
	if (count >= sizeof(name))
		return -EINVAL;
	strscpy(name, buf, sizeof(name));
	strim(name);
	ret = vg_policy_parse(name, &p);
	if (!ret)
		ret = vg_gpu_set_policy(gpu->core, p);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(policy);

static ssize_t return_interval_ms_show(struct device *dev,
				       struct device_attribute *attr, char *buf)
{
	struct vgk_gpu *gpu = dev_get_drvdata(dev);
	u32 ms;

	mutex_lock(&gpu->lock);
	ms = gpu->return_ms;
	mutex_unlock(&gpu->lock);
	return sysfs_emit(buf, "%u\n", ms);
}

static ssize_t return_interval_ms_store(struct device *dev,
					struct device_attribute *attr,
					const char *buf, size_t count)
{
	struct vgk_gpu *gpu = dev_get_drvdata(dev);
	u32 ms;
	int ret;

	ret = kstrtou32(buf, 0, &ms);
	if (ret)
		return ret;
	mutex_lock(&gpu->lock);
	ret = vg_gpu_set_return_interval(gpu->core, ms);
	if (!ret)
		gpu->return_ms = ms;
	mutex_unlock(&gpu->lock);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(return_interval_ms);

static struct attribute *vgk_gpu_attrs[] = {
	&dev_attr_vram_size.attr,
	&dev_attr_vram_used.attr,
	&dev_attr_host_used.attr,
	&dev_attr_chunk_size.attr,
	&dev_attr_policy.attr,
	&dev_attr_return_interval_ms.attr,
	NULL,
};
ATTRIBUTE_GROUPS(vgk_gpu);

/* ---- registration --------------------------------------------------------- */

static void vgk_gpu_init_types(struct vgk_gpu *gpu)
{
	unsigned int i;

	for (i = 0; i < VGK_NR_TYPES; i++) {
		gpu->types[i].type.sysfs_name = vgk_type_desc[i].sysfs_name;
		gpu->types[i].type.pretty_name = vgk_type_desc[i].pretty_name;
		gpu->types[i].quota = vgk_type_desc[i].quota;
		gpu->type_ptrs[i] = &gpu->types[i].type;
	}
}

int vgk_register_gpu(const struct vg_gpu_ops *ops, void *drv,
		     const char *name, struct module *owner,
		     struct vgk_gpu **out)
{
	struct vg_gpu_config cfg = {
		.name = name,
		.policy = READ_ONCE(vgk_policy),
		.events = &vgk_nl_gpu_events,
	};
	struct vg_gpu_stats st;
	struct vgk_gpu *gpu;
	int ret;

	if (!ops || !out)
		return -EINVAL;
	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return -ENOMEM;
	mutex_init(&gpu->lock);
	INIT_LIST_HEAD(&gpu->vgpus);
	gpu->owner = owner;
	gpu->return_ms = VG_RETURN_MS_DEFAULT;

	ret = ida_alloc(&vgk_gpu_ida, GFP_KERNEL);
	if (ret < 0)
		goto err_free_gpu;
	gpu->id = ret;

	cfg.events_priv = gpu;
	ret = vg_gpu_create(&cfg, ops, drv, &gpu->core);
	if (ret)
		goto err_free_id;
	vg_gpu_get_stats(gpu->core, &st);
	gpu->vram_size = st.vram_size;
	vgk_gpu_init_types(gpu);
	vgk_lrc_gpu_add(gpu);

	gpu->dev = device_create_with_groups(vgk_class, NULL, MKDEV(0, 0), gpu,
					     vgk_gpu_groups, "vgmem%d",
					     gpu->id);
	if (IS_ERR(gpu->dev)) {
		ret = PTR_ERR(gpu->dev);
		goto err_destroy_core;
	}

	ret = mdev_register_parent(&gpu->parent, gpu->dev, &vgk_mdev_driver,
				   gpu->type_ptrs, VGK_NR_TYPES);
	if (ret)
		goto err_unregister_dev;

	mutex_lock(&vgk_gpus_lock);
	list_add_tail(&gpu->node, &vgk_gpus);
	atomic_inc(&vgk_gen);
	mutex_unlock(&vgk_gpus_lock);
	dev_info(gpu->dev, "%s: %llu MiB of VRAM, up to %u%% admitted\n",
		 name ? name : "gpu", gpu->vram_size >> 20,
		 READ_ONCE(oversub_pct));
	*out = gpu;
	return 0;

err_unregister_dev:
	device_unregister(gpu->dev);
err_destroy_core:
	vgk_lrc_gpu_remove(gpu);
	vg_gpu_destroy(gpu->core);
err_free_id:
	ida_free(&vgk_gpu_ida, gpu->id);
err_free_gpu:
	mutex_destroy(&gpu->lock);
	kfree(gpu);
	return ret;
}
EXPORT_SYMBOL_GPL(vgk_register_gpu);

void vgk_unregister_gpu(struct vgk_gpu *gpu)
{
	if (!gpu)
		return;
	mutex_lock(&vgk_gpus_lock);
	list_del(&gpu->node);
	atomic_inc(&vgk_gen);
	mutex_unlock(&vgk_gpus_lock);
	/* Removes any vGPU left, each after its device is closed. */
	mdev_unregister_parent(&gpu->parent);
	WARN_ON(!list_empty(&gpu->vgpus));
	device_unregister(gpu->dev);
	vgk_lrc_gpu_remove(gpu);
	vg_gpu_destroy(gpu->core);
	ida_free(&vgk_gpu_ida, gpu->id);
	mutex_destroy(&gpu->lock);
	kfree(gpu);
}
EXPORT_SYMBOL_GPL(vgk_unregister_gpu);

int vgk_registry_init(void)
{
	vgk_class = vgk_class_create("vgmem");
	return PTR_ERR_OR_ZERO(vgk_class);
}

void vgk_registry_exit(void)
{
	/* GPU drivers hold references on vgmem.ko: no GPU is left here. */
	WARN_ON(!list_empty(&vgk_gpus));
	class_destroy(vgk_class);
	ida_destroy(&vgk_gpu_ida);
}
