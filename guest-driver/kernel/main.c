// SPDX-License-Identifier: GPL-2.0
/*
 * vgmem_guest.ko: the init ladder and the module parameters. Each rung is
 * set up by the file that owns it; every unwind label is named after what
 * it undoes.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>

#include "vgmem_guest_drv.h"

/*
 * 4 MiB: the largest block the page allocator gives (MAX_ORDER - 1 on
 * x86 with 4 KiB pages); a larger buffer needs a kernel with CMA.
 */
unsigned long vgg_dma_max = SZ_4M;
unsigned long vgg_dma_total_max = SZ_64M;
unsigned int vgg_irq_mode = VGMEM_GUEST_IRQ_MSI;

/* Bounds of the DMA limits: a page at least, 1 GiB (max) or 16 GiB (total). */
#define VGG_DMA_MAX_LIMIT	SZ_1G
#define VGG_DMA_TOTAL_LIMIT	(16ull << 30)

static int vgg_param_set_bytes(const char *val, unsigned long *p, u64 limit)
{
	unsigned long v;
	int ret;

	ret = kstrtoul(val, 0, &v);
	if (ret)
		return ret;
	if (v < PAGE_SIZE || v > limit || !PAGE_ALIGNED(v))
		return -EINVAL;
	*p = v;
	return 0;
}

static int vgg_param_set_dma_max(const char *val, const struct kernel_param *kp)
{
	return vgg_param_set_bytes(val, kp->arg, VGG_DMA_MAX_LIMIT);
}

static int vgg_param_set_dma_total(const char *val, const struct kernel_param *kp)
{
	return vgg_param_set_bytes(val, kp->arg, VGG_DMA_TOTAL_LIMIT);
}

static const struct kernel_param_ops vgg_dma_max_ops = {
	.set = vgg_param_set_dma_max,
	.get = param_get_ulong,
};

static const struct kernel_param_ops vgg_dma_total_ops = {
	.set = vgg_param_set_dma_total,
	.get = param_get_ulong,
};

module_param_cb(dma_max, &vgg_dma_max_ops, &vgg_dma_max, 0444);
MODULE_PARM_DESC(dma_max,
		 "Largest DMA buffer in bytes, a page multiple, 4 KiB to 1 GiB (default 4 MiB; more needs CMA)");
module_param_cb(dma_total_max, &vgg_dma_total_ops, &vgg_dma_total_max, 0444);
MODULE_PARM_DESC(dma_total_max,
		 "All DMA buffers of one open file in bytes, dma_max to 16 GiB (default 64 MiB)");

static int vgg_param_set_irq(const char *val, const struct kernel_param *kp)
{
	static const char * const modes[] = {
		[VGMEM_GUEST_IRQ_NONE] = "none",
		[VGMEM_GUEST_IRQ_MSI] = "msi",
		[VGMEM_GUEST_IRQ_INTX] = "intx",
	};
	int i = sysfs_match_string(modes, val);

	if (i < 0)
		return -EINVAL;
	*(unsigned int *)kp->arg = i;
	return 0;
}

static int vgg_param_get_irq(char *buf, const struct kernel_param *kp)
{
	switch (*(unsigned int *)kp->arg) {
	case VGMEM_GUEST_IRQ_NONE:
		return sysfs_emit(buf, "none\n");
	case VGMEM_GUEST_IRQ_INTX:
		return sysfs_emit(buf, "intx\n");
	default:
		return sysfs_emit(buf, "msi\n");
	}
}

static const struct kernel_param_ops vgg_irq_ops = {
	.set = vgg_param_set_irq,
	.get = vgg_param_get_irq,
};

module_param_cb(irq, &vgg_irq_ops, &vgg_irq_mode, 0444);
MODULE_PARM_DESC(irq,
		 "Interrupt: msi (MSI, INTx if MSI fails; default), intx (INTx only) or none (polled)");

static int __init vgg_init(void)
{
	int ret;

	if (vgg_dma_max > vgg_dma_total_max) {
		pr_err(VGG_NAME ": dma_max (%lu) is larger than dma_total_max (%lu)\n",
		       vgg_dma_max, vgg_dma_total_max);
		return -EINVAL;
	}

	ret = vgg_chardev_init();
	if (ret)
		return ret;

	ret = vgg_pci_init();
	if (ret)
		goto err_chardev;

	return 0;

err_chardev:
	vgg_chardev_exit();
	return ret;
}

static void __exit vgg_exit(void)
{
	vgg_pci_exit();
	vgg_chardev_exit();
}

module_init(vgg_init);
module_exit(vgg_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vgmem vGPU guest driver (/dev/vgmemN)");
MODULE_AUTHOR("vgmem developers");
MODULE_VERSION(__stringify(VGMEM_GUEST_DRIVER_VERSION));
