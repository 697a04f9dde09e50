// SPDX-License-Identifier: GPL-2.0
/*
 * The vGPU as a PCI function (include/uapi/vgmem.h, "the vGPU as a PCI
 * device"): probe checks that BAR0 speaks our ABI, sets up the control
 * queue and the interrupt, asks the device QUERY and adds /dev/vgmemN;
 * remove (unplug or unbind) marks the device gone, wakes every waiter,
 * zaps user mappings of BAR2 and lets the last open file free the rest.
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "vgmem_guest_drv.h"

#ifndef PCI_IRQ_INTX
#define PCI_IRQ_INTX	PCI_IRQ_LEGACY
#endif

/* GPFIFO entries carry 40-bit addresses (VGMEM_GP_ENTRY). */
#define VGG_DMA_BITS	40

static void vgg_dev_release(struct kref *kref)
{
	struct vgg_dev *gdev = container_of(kref, struct vgg_dev, kref);

	if (gdev->ring)
		dma_free_coherent(&gdev->pdev->dev, PAGE_SIZE, gdev->ring,
				  gdev->ring_dma);
	if (gdev->map_inode)
		iput(gdev->map_inode);
	/* A probe that failed after the bindings could exist. */
	vgg_binds_release(gdev);
	pci_dev_put(gdev->pdev);
	kfree(gdev);
}

void vgg_dev_put(struct vgg_dev *gdev)
{
	kref_put(&gdev->kref, vgg_dev_release);
}

bool vgg_dev_gone(struct vgg_dev *gdev)
{
	unsigned long flags;
	bool gone;

	spin_lock_irqsave(&gdev->lock, flags);
	gone = gdev->gone;
	spin_unlock_irqrestore(&gdev->lock, flags);
	return gone;
}

int vgg_reg_read(struct vgg_dev *gdev, u32 reg, u32 *val)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&gdev->lock, flags);
	if (gdev->gone)
		ret = -ENODEV;
	else
		*val = ioread32(gdev->regs + reg);
	spin_unlock_irqrestore(&gdev->lock, flags);
	return ret;
}

int vgg_reg_write(struct vgg_dev *gdev, u32 reg, u32 val)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&gdev->lock, flags);
	if (gdev->gone)
		ret = -ENODEV;
	else
		iowrite32(val, gdev->regs + reg);
	spin_unlock_irqrestore(&gdev->lock, flags);
	return ret;
}

/* FAULTED_LO/HI: read, acknowledge, hand each bit to the channel's file. */
static bool vgg_faults_locked(struct vgg_dev *gdev)
{
	u32 lo, hi, n;
	u64 bits;
	bool any = false;

	lockdep_assert_held(&gdev->lock);
	lo = ioread32(gdev->regs + VGMEM_REG_FAULTED_LO);
	hi = ioread32(gdev->regs + VGMEM_REG_FAULTED_HI);
	if ((lo & hi) == ~0u)		/* the device has vanished */
		return false;
	if (lo)
		iowrite32(lo, gdev->regs + VGMEM_REG_FAULTED_LO);
	if (hi)
		iowrite32(hi, gdev->regs + VGMEM_REG_FAULTED_HI);
	bits = ((u64)hi << 32) | lo;
	for (n = 0; n < VGMEM_MAX_CHANNELS; n++) {
		if (!(bits & BIT_ULL(n)) || !gdev->chan_owner[n])
			continue;
		gdev->chan_owner[n]->faulted |= BIT_ULL(n);
		any = true;
	}
	return any;
}

/* Polling fallback of the fault interrupt (a waiter's slice ran out). */
void vgg_scan_faults(struct vgg_dev *gdev)
{
	unsigned long flags;
	bool any = false;

	spin_lock_irqsave(&gdev->lock, flags);
	if (!gdev->gone)
		any = vgg_faults_locked(gdev);
	spin_unlock_irqrestore(&gdev->lock, flags);
	if (any)
		wake_up_all(&gdev->wq);
}

/* Rounds of the interrupt handler before it leaves the rest to polling. */
#define VGG_IRQ_ROUNDS	8

/*
 * MSI is an edge on IRQ_CAUSE & IRQ_MASK becoming non-zero: a cause raised
 * while another is still set makes none. So the handler acknowledges what
 * it read and reads again until IRQ_CAUSE is zero; from then on any cause
 * fires anew.
 */
static irqreturn_t vgg_irq(int irq, void *data)
{
	struct vgg_dev *gdev = data;
	irqreturn_t ret = IRQ_NONE;
	u32 cause;
	int round;

	spin_lock(&gdev->lock);
	for (round = 0; !gdev->gone && round < VGG_IRQ_ROUNDS; round++) {
		cause = ioread32(gdev->regs + VGMEM_REG_IRQ_CAUSE);
		/* Not ours (a shared INTx line), or a device that has vanished. */
		if (cause == ~0u)
			break;
		cause &= VGMEM_IRQ_CTRLQ | VGMEM_IRQ_CHAN_FAULT;
		if (!cause)
			break;
		/* Acknowledge before looking: a cause raised meanwhile stays. */
		iowrite32(cause, gdev->regs + VGMEM_REG_IRQ_CAUSE);
		if (cause & VGMEM_IRQ_CHAN_FAULT)
			vgg_faults_locked(gdev);
		ret = IRQ_HANDLED;
	}
	spin_unlock(&gdev->lock);
	if (ret == IRQ_HANDLED)
		wake_up_all(&gdev->wq);
	return ret;
}

void vgg_zap_userd(struct vgg_dev *gdev, u64 offset, u64 len)
{
	struct inode *inode;

	mutex_lock(&gdev->map_lock);
	inode = gdev->map_inode;
	if (inode)
		unmap_mapping_range(inode->i_mapping, offset, len, 1);
	mutex_unlock(&gdev->map_lock);
}

static int vgg_check_bars(struct vgg_dev *gdev)
{
	struct pci_dev *pdev = gdev->pdev;

	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, 0) < VGMEM_BAR0_SIZE) {
		dev_err(&pdev->dev, "BAR0 is not a memory BAR of at least %u bytes\n",
			VGMEM_BAR0_SIZE);
		return -ENODEV;
	}
	if (!(pci_resource_flags(pdev, 2) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, 2) < VGMEM_USERD_SIZE ||
	    !IS_ALIGNED(pci_resource_start(pdev, 2), PAGE_SIZE)) {
		dev_err(&pdev->dev, "BAR2 (USERD pages) is not a page-aligned memory BAR\n");
		return -ENODEV;
	}
	return 0;
}

/* ID and ABI version: a device speaking another ABI is refused. */
static int vgg_check_abi(struct vgg_dev *gdev)
{
	struct device *dev = &gdev->pdev->dev;
	u32 id, abi, chans;

	id = ioread32(gdev->regs + VGMEM_REG_ID);
	if (id != VGMEM_ID_MAGIC) {
		dev_err(dev, "BAR0 ID register reads 0x%08x, not 0x%08x: not a vgmem vGPU\n",
			id, VGMEM_ID_MAGIC);
		return -ENODEV;
	}
	abi = ioread32(gdev->regs + VGMEM_REG_ABI_VERSION);
	if (abi != VGMEM_ABI_VERSION) {
		dev_err(dev, "the vGPU speaks ABI version %u, this driver only version %u: refusing it (update the driver)\n",
			abi, VGMEM_ABI_VERSION);
		return -ENODEV;
	}
	chans = ioread32(gdev->regs + VGMEM_REG_MAX_CHANNELS);
	if (!chans || chans > VGMEM_MAX_CHANNELS ||
	    (u64)chans * VGMEM_USERD_SIZE > pci_resource_len(gdev->pdev, 2)) {
		dev_err(dev, "MAX_CHANNELS %u does not fit 1..%u and BAR2\n",
			chans, VGMEM_MAX_CHANNELS);
		return -ENODEV;
	}
	gdev->max_channels = chans;
	return 0;
}

static const char *vgg_irq_name(u32 type)
{
	switch (type) {
	case VGMEM_GUEST_IRQ_MSI:
		return "MSI";
	case VGMEM_GUEST_IRQ_INTX:
		return "INTx";
	default:
		return "none (polled)";
	}
}

/* MSI, else INTx, else polling: the driver works without an interrupt. */
static void vgg_setup_irq(struct vgg_dev *gdev)
{
	struct pci_dev *pdev = gdev->pdev;
	unsigned int types;
	int ret;

	gdev->irq = -1;
	gdev->irq_type = VGMEM_GUEST_IRQ_NONE;
	if (vgg_irq_mode == VGMEM_GUEST_IRQ_NONE)
		return;
	types = vgg_irq_mode == VGMEM_GUEST_IRQ_INTX ? PCI_IRQ_INTX :
		PCI_IRQ_MSI | PCI_IRQ_INTX;
	ret = pci_alloc_irq_vectors(pdev, 1, 1, types);
	if (ret < 0) {
		dev_warn(&pdev->dev, "no interrupt (%d): polling the device\n", ret);
		return;
	}
	ret = pci_irq_vector(pdev, 0);
	if (ret < 0)
		goto err_vectors;
	gdev->irq = ret;
	gdev->irq_type = pdev->msi_enabled ? VGMEM_GUEST_IRQ_MSI :
		VGMEM_GUEST_IRQ_INTX;
	ret = request_irq(gdev->irq, vgg_irq,
			  gdev->irq_type == VGMEM_GUEST_IRQ_INTX ? IRQF_SHARED : 0,
			  VGG_NAME, gdev);
	if (ret) {
		dev_warn(&pdev->dev, "requesting irq %d: %d: polling the device\n",
			 gdev->irq, ret);
		goto err_vectors;
	}
	return;

err_vectors:
	pci_free_irq_vectors(pdev);
	gdev->irq = -1;
	gdev->irq_type = VGMEM_GUEST_IRQ_NONE;
}

static void vgg_teardown_irq(struct vgg_dev *gdev)
{
	if (gdev->irq >= 0) {
		free_irq(gdev->irq, gdev);
		pci_free_irq_vectors(gdev->pdev);
	}
	gdev->irq = -1;
}

/* Ask the device for its limits; the driver answers VGMEM_GIOC_QUERY from them. */
static int vgg_query(struct vgg_dev *gdev)
{
	struct vgg_owed *owed;
	struct vgmem_ctrl *cmd;
	int ret;

	cmd = kzalloc(sizeof(*cmd), GFP_KERNEL);
	if (!cmd)
		return -ENOMEM;
	cmd->op = VGMEM_CTRL_QUERY;
	ret = vgg_ctrlq_exec(gdev, cmd, false, &owed);
	if (!ret && cmd->status)
		ret = cmd->status;
	if (ret) {
		dev_err(&gdev->pdev->dev, "control command QUERY failed: %d\n", ret);
	} else if (cmd->query.abi_version != VGMEM_ABI_VERSION) {
		dev_err(&gdev->pdev->dev, "QUERY reports ABI version %u, this driver only version %u: refusing the vGPU\n",
			cmd->query.abi_version, VGMEM_ABI_VERSION);
		ret = -ENODEV;
	} else {
		gdev->query = cmd->query;
		if (cmd->query.max_channels && cmd->query.max_channels < gdev->max_channels)
			gdev->max_channels = cmd->query.max_channels;
	}
	kfree(cmd);
	return ret;
}

/* Stop the device: no interrupt, no queue. Only while nobody else uses BAR0. */
static void vgg_quiet_device(struct vgg_dev *gdev)
{
	iowrite32(0, gdev->regs + VGMEM_REG_IRQ_MASK);
	iowrite32(0, gdev->regs + VGMEM_REG_CTRLQ_ENTRIES);
	iowrite32(VGMEM_IRQ_CTRLQ | VGMEM_IRQ_CHAN_FAULT,
		  gdev->regs + VGMEM_REG_IRQ_CAUSE);
}

static int vgg_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vgg_dev *gdev;
	int ret;

	if (PAGE_SIZE != VGMEM_USERD_SIZE) {
		dev_err(&pdev->dev, "needs 4 KiB pages (USERD pages are 4 KiB), this kernel has %lu\n",
			PAGE_SIZE);
		return -ENODEV;
	}
	gdev = kzalloc(sizeof(*gdev), GFP_KERNEL);
	if (!gdev)
		return -ENOMEM;
	kref_init(&gdev->kref);
	gdev->pdev = pci_dev_get(pdev);
	gdev->minor = -1;
	gdev->irq = -1;
	mutex_init(&gdev->ctrlq_lock);
	spin_lock_init(&gdev->lock);
	init_waitqueue_head(&gdev->wq);
	init_rwsem(&gdev->map_sem);
	mutex_init(&gdev->map_lock);
	mutex_init(&gdev->files_lock);
	INIT_LIST_HEAD(&gdev->files);
	mutex_init(&gdev->binds_lock);
	INIT_LIST_HEAD(&gdev->binds);

	ret = pci_enable_device(pdev);
	if (ret)
		goto err_put;
	ret = vgg_check_bars(gdev);
	if (ret)
		goto err_disable;
	ret = pci_request_regions(pdev, VGG_NAME);
	if (ret)
		goto err_disable;
	gdev->regs = pci_iomap(pdev, 0, VGMEM_BAR0_SIZE);
	if (!gdev->regs) {
		ret = -ENOMEM;
		goto err_regions;
	}
	ret = vgg_check_abi(gdev);
	if (ret)
		goto err_iounmap;
	gdev->userd_phys = pci_resource_start(pdev, 2);

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(VGG_DMA_BITS));
	if (ret)
		ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (ret) {
		dev_err(&pdev->dev, "no usable DMA mask\n");
		goto err_iounmap;
	}
	pci_set_master(pdev);

	/* A stale queue or interrupt of an earlier driver goes first. */
	vgg_quiet_device(gdev);
	iowrite32(~0u, gdev->regs + VGMEM_REG_FAULTED_LO);
	iowrite32(~0u, gdev->regs + VGMEM_REG_FAULTED_HI);

	gdev->ring = dma_alloc_coherent(&pdev->dev, PAGE_SIZE, &gdev->ring_dma,
					GFP_KERNEL);
	if (!gdev->ring) {
		ret = -ENOMEM;
		goto err_master;
	}
	BUILD_BUG_ON(VGG_CTRLQ_ENTRIES * sizeof(struct vgmem_ctrl) > 4096);

	vgg_setup_irq(gdev);

	mutex_lock(&gdev->ctrlq_lock);
	ret = vgg_ctrlq_arm(gdev);
	mutex_unlock(&gdev->ctrlq_lock);
	if (ret)
		goto err_irq;
	if (gdev->irq >= 0)
		iowrite32(VGMEM_IRQ_CTRLQ | VGMEM_IRQ_CHAN_FAULT,
			  gdev->regs + VGMEM_REG_IRQ_MASK);

	ret = vgg_query(gdev);
	if (ret)
		goto err_queue;

	pci_set_drvdata(pdev, gdev);
	ret = vgg_chardev_add(gdev);
	if (ret)
		goto err_queue;

	dev_info(&pdev->dev, "vgmem%d: vGPU ABI %u, %u channels, quota %llu bytes, interrupt %s\n",
		 gdev->minor, VGMEM_ABI_VERSION, gdev->max_channels,
		 (unsigned long long)gdev->query.quota, vgg_irq_name(gdev->irq_type));
	return 0;

err_queue:
	vgg_quiet_device(gdev);
err_irq:
	vgg_teardown_irq(gdev);
err_master:
	pci_clear_master(pdev);
err_iounmap:
	pci_iounmap(pdev, gdev->regs);
	gdev->regs = NULL;
err_regions:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_put:
	vgg_dev_put(gdev);
	return ret;
}

static void vgg_remove(struct pci_dev *pdev)
{
	struct vgg_dev *gdev = pci_get_drvdata(pdev);
	struct vgg_file *gf;

	/*
	 * An unbind leaves the device in place: whatever open files own goes
	 * from it now, as their release would (commands in flight finish
	 * first). A device that has vanished answers -ENODEV at once.
	 */
	mutex_lock(&gdev->files_lock);
	gdev->closing = true;
	list_for_each_entry(gf, &gdev->files, node) {
		mutex_lock(&gf->lock);
		vgg_file_drop_device(gf);
		mutex_unlock(&gf->lock);
	}
	mutex_unlock(&gdev->files_lock);
	/* The mounts bound to share tags may unmount again. */
	vgg_binds_release(gdev);

	/* From here on nobody but this function touches BAR0. */
	spin_lock_irq(&gdev->lock);
	gdev->gone = true;
	iowrite32(0, gdev->regs + VGMEM_REG_IRQ_MASK);
	spin_unlock_irq(&gdev->lock);
	wake_up_all(&gdev->wq);

	/* New opens fail; open files get -ENODEV from every call. */
	vgg_chardev_remove(gdev);

	/* No USERD fault can be inserting a page now; drop every mapping. */
	down_write(&gdev->map_sem);
	up_write(&gdev->map_sem);
	vgg_zap_userd(gdev, 0, VGMEM_GUEST_MMAP_DMA_BASE);

	/* Submitters left on gone; let a command in flight land, then stop. */
	mutex_lock(&gdev->ctrlq_lock);
	vgg_ctrlq_quiesce(gdev);
	mutex_unlock(&gdev->ctrlq_lock);

	vgg_teardown_irq(gdev);
	pci_clear_master(pdev);
	pci_iounmap(pdev, gdev->regs);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	pci_set_drvdata(pdev, NULL);
	dev_info(&pdev->dev, "vGPU removed\n");
	/* The ring and the structure go with the last open file. */
	vgg_dev_put(gdev);
}

static const struct pci_device_id vgg_ids[] = {
	{ PCI_DEVICE(VGMEM_PCI_VENDOR, VGMEM_PCI_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vgg_ids);

static struct pci_driver vgg_pci_driver = {
	.name = VGG_NAME,
	.id_table = vgg_ids,
	.probe = vgg_probe,
	.remove = vgg_remove,
};

int vgg_pci_init(void)
{
	return pci_register_driver(&vgg_pci_driver);
}

void vgg_pci_exit(void)
{
	pci_unregister_driver(&vgg_pci_driver);
}
