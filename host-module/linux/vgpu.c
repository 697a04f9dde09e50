// SPDX-License-Identifier: GPL-2.0
/*
 * A vGPU as a VFIO device: PCI config space and BAR0 behind one access
 * dispatcher, BAR2 (USERD pages) in userd.c, the control queue in ctrlq.c,
 * interrupts in irq.c. The device's VM of the core exists while the device
 * is open: guest memory is only reachable then (vfio_dma_rw), and a fresh
 * open, like VFIO_DEVICE_RESET, is a fresh vGPU to the guest. Its
 * counters, though, are the mdev's, like a NIC's: each VM's are folded
 * into the vGPU's when it goes (vgk_vgpu_stats).
 */
#include <linux/pci_regs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vgk_drv.h"

#define VGK_MSI_CAP		0x40
#define VGK_BAR_MEM32		PCI_BASE_ADDRESS_SPACE_MEMORY	/* 0: 32-bit, non-prefetchable */

/* The four bytes of a 32-bit value, as designated initialisers. */
#define VGK_WMASK32(off, v)				\
	[(off)] = (u8)(v), [(off) + 1] = (u8)((v) >> 8),	\
	[(off) + 2] = (u8)((v) >> 16), [(off) + 3] = (u8)((v) >> 24)

/* Which bits of each config-space byte the guest may change. */
const u8 vgk_cfg_wmask[VGK_CFG_SIZE] = {
	/* No I/O BARs: memory space, bus master and INTx disable only. */
	[PCI_COMMAND] = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER,
	[PCI_COMMAND + 1] = PCI_COMMAND_INTX_DISABLE >> 8,
	[PCI_CACHE_LINE_SIZE] = 0xff,
	[PCI_LATENCY_TIMER] = 0xff,
	/* BAR sizing: only the address bits above the size stick. */
	VGK_WMASK32(PCI_BASE_ADDRESS_0, ~(u32)(VGMEM_BAR0_SIZE - 1)),
	VGK_WMASK32(PCI_BASE_ADDRESS_2, ~(u32)(VGMEM_USERD_BAR_SIZE - 1)),
	[PCI_INTERRUPT_LINE] = 0xff,
	/* MSI: one vector, so only the enable bit of the control word. */
	[VGK_MSI_CAP + PCI_MSI_FLAGS] = PCI_MSI_FLAGS_ENABLE,
	VGK_WMASK32(VGK_MSI_CAP + PCI_MSI_ADDRESS_LO, ~3u),
	VGK_WMASK32(VGK_MSI_CAP + PCI_MSI_ADDRESS_HI, ~0u),
	[VGK_MSI_CAP + PCI_MSI_DATA_64] = 0xff,
	[VGK_MSI_CAP + PCI_MSI_DATA_64 + 1] = 0xff,
};

static void vgk_put8(u8 *p, unsigned int off, u8 v)
{
	p[off] = v;
}

static void vgk_put16(u8 *p, unsigned int off, u16 v)
{
	p[off] = v & 0xff;
	p[off + 1] = v >> 8;
}

static void vgk_put32(u8 *p, unsigned int off, u32 v)
{
	vgk_put16(p, off, v & 0xffff);
	vgk_put16(p, off + 2, v >> 16);
}

void vgk_cfg_default(u8 *c)
{
	memset(c, 0, VGK_CFG_SIZE);
	vgk_put16(c, PCI_VENDOR_ID, VGMEM_PCI_VENDOR);
	vgk_put16(c, PCI_DEVICE_ID, VGMEM_PCI_DEVICE);
	vgk_put16(c, PCI_STATUS, PCI_STATUS_CAP_LIST);
	vgk_put8(c, PCI_REVISION_ID, VGMEM_ABI_VERSION);
	vgk_put8(c, PCI_CLASS_PROG, VGMEM_PCI_CLASS & 0xff);
	vgk_put16(c, PCI_CLASS_DEVICE, VGMEM_PCI_CLASS >> 8);
	vgk_put8(c, PCI_HEADER_TYPE, PCI_HEADER_TYPE_NORMAL);
	vgk_put32(c, PCI_BASE_ADDRESS_0, VGK_BAR_MEM32);
	vgk_put32(c, PCI_BASE_ADDRESS_2, VGK_BAR_MEM32);
	vgk_put16(c, PCI_SUBSYSTEM_VENDOR_ID, VGMEM_PCI_VENDOR);
	vgk_put16(c, PCI_SUBSYSTEM_ID, VGMEM_PCI_DEVICE);
	vgk_put8(c, PCI_CAPABILITY_LIST, VGK_MSI_CAP);
	vgk_put8(c, PCI_INTERRUPT_PIN, 1);	/* INTA# */
	vgk_put8(c, VGK_MSI_CAP + PCI_CAP_LIST_ID, PCI_CAP_ID_MSI);
	vgk_put8(c, VGK_MSI_CAP + PCI_CAP_LIST_NEXT, 0);
	vgk_put16(c, VGK_MSI_CAP + PCI_MSI_FLAGS, PCI_MSI_FLAGS_64BIT);
}

static void vgk_cfg_reset(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->reg_lock);
	vgk_cfg_default(v->cfg);
}

/* Config space: any naturally aligned 1, 2 or 4 byte access. */
static int vgk_cfg_access(struct vgk_vgpu *v, u32 off, u8 *val,
			  unsigned int size, bool write)
{
	unsigned int i;
	bool was_pending;

	spin_lock(&v->reg_lock);
	if (!write) {
		memcpy(val, v->cfg + off, size);
		spin_unlock(&v->reg_lock);
		return 0;
	}
	was_pending = vgk_irq_pending(v);
	for (i = 0; i < size; i++) {
		u8 m = vgk_cfg_wmask[off + i];

		v->cfg[off + i] = (v->cfg[off + i] & ~m) | (val[i] & m);
	}
	/* INTx disable may have changed. */
	vgk_irq_update(v, was_pending);
	spin_unlock(&v->reg_lock);
	return 0;
}

/* ---- BAR0 ------------------------------------------------------------------- */

static u32 vgk_status(struct vgk_vgpu *v)
{
	u32 st = 0;

	lockdep_assert_held(&v->reg_lock);
	if (v->ready)
		st |= VGMEM_STATUS_READY;
	if (v->q_error)
		st |= VGMEM_STATUS_CTRLQ_ERROR;
	else if (v->q_entries && v->q_producer != v->q_consumer)
		st |= VGMEM_STATUS_CTRLQ_BUSY;
	return st;
}

static u32 vgk_bar0_read(struct vgk_vgpu *v, u32 reg)
{
	lockdep_assert_held(&v->reg_lock);
	switch (reg) {
	case VGMEM_REG_ID:
		return VGMEM_ID_MAGIC;
	case VGMEM_REG_ABI_VERSION:
		return VGMEM_ABI_VERSION;
	case VGMEM_REG_MAX_CHANNELS:
		return VGMEM_MAX_CHANNELS;
	case VGMEM_REG_CTRLQ_BASE_LO:
		return (u32)v->q_base;
	case VGMEM_REG_CTRLQ_BASE_HI:
		return (u32)(v->q_base >> 32);
	case VGMEM_REG_CTRLQ_ENTRIES:
		return v->q_entries;
	case VGMEM_REG_CTRLQ_PRODUCER:
		return v->q_producer;
	case VGMEM_REG_CTRLQ_CONSUMER:
		return v->q_consumer;
	case VGMEM_REG_STATUS:
		return vgk_status(v);
	case VGMEM_REG_CTRLQ_ERROR:
		return (u32)v->q_error;
	case VGMEM_REG_IRQ_CAUSE:
		return v->irq_cause;
	case VGMEM_REG_IRQ_MASK:
		return v->irq_mask;
	case VGMEM_REG_FAULTED_LO:
		return (u32)v->faulted;
	case VGMEM_REG_FAULTED_HI:
		return (u32)(v->faulted >> 32);
	default:
		return 0;	/* unassigned registers read as zero */
	}
}

/* Writes to read-only or unassigned registers are dropped, as on hardware. */
static void vgk_bar0_write(struct vgk_vgpu *v, u32 reg, u32 val)
{
	bool was_pending;

	lockdep_assert_held(&v->reg_lock);
	switch (reg) {
	case VGMEM_REG_CTRLQ_BASE_LO:
	case VGMEM_REG_CTRLQ_BASE_HI:
	case VGMEM_REG_CTRLQ_ENTRIES:
	case VGMEM_REG_CTRLQ_PRODUCER:
		vgk_ctrlq_dev_write(v, reg, val);
		break;
	case VGMEM_REG_IRQ_CAUSE:
		was_pending = vgk_irq_pending(v);
		v->irq_cause &= ~val;
		vgk_irq_update(v, was_pending);
		break;
	case VGMEM_REG_IRQ_MASK:
		was_pending = vgk_irq_pending(v);
		v->irq_mask = val & VGK_IRQ_ALL;
		vgk_irq_update(v, was_pending);
		break;
	case VGMEM_REG_FAULTED_LO:
		v->faulted &= ~(u64)val;
		break;
	case VGMEM_REG_FAULTED_HI:
		v->faulted &= ~((u64)val << 32);
		break;
	default:
		break;
	}
}

void vgk_regs_reset(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->reg_lock);
	v->q_base = 0;
	v->q_entries = 0;
	v->q_producer = 0;
	v->q_consumer = 0;
	v->q_gen++;		/* a command in flight is not counted */
	v->q_error = 0;
	v->irq_cause = 0;
	v->irq_mask = 0;
	v->faulted = 0;
	v->intx_masked = false;
}

/*
 * The one dispatcher for trapped accesses: config space in naturally
 * aligned pieces of up to 4 bytes, BAR0 and BAR2 in aligned 32-bit words
 * only. Returns 0 or -EINVAL; *val is little endian, as the guest sees it.
 */
static int vgk_access(struct vgk_vgpu *v, unsigned int index, u64 off,
		      u8 *val, unsigned int size, bool write)
{
	u32 word;

	switch (index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		if (off >= VGK_CFG_SIZE || !IS_ALIGNED(off, size))
			return -EINVAL;
		return vgk_cfg_access(v, off, val, size, write);
	case VFIO_PCI_BAR0_REGION_INDEX:
		if (size != 4 || off >= VGMEM_BAR0_SIZE || !IS_ALIGNED(off, 4))
			return -EINVAL;
		spin_lock(&v->reg_lock);
		if (write) {
			memcpy(&word, val, 4);
			vgk_bar0_write(v, off, le32_to_cpu((__force __le32)word));
		} else {
			word = (__force u32)cpu_to_le32(vgk_bar0_read(v, off));
			memcpy(val, &word, 4);
		}
		spin_unlock(&v->reg_lock);
		return 0;
	case VFIO_PCI_BAR2_REGION_INDEX:
		if (size != 4 || off >= VGMEM_USERD_BAR_SIZE || !IS_ALIGNED(off, 4))
			return -EINVAL;
		if (write) {
			memcpy(&word, val, 4);
			vgk_userd_write(v, off, le32_to_cpu((__force __le32)word));
		} else {
			word = (__force u32)cpu_to_le32(vgk_userd_read(v, off));
			memcpy(val, &word, 4);
		}
		return 0;
	default:
		return -EINVAL;
	}
}

/* Access size for the next piece: config space splits, BARs do not. */
static unsigned int vgk_piece(unsigned int index, u64 off, size_t count)
{
	if (index != VFIO_PCI_CONFIG_REGION_INDEX)
		return 4;
	if (count >= 4 && IS_ALIGNED(off, 4))
		return 4;
	if (count >= 2 && IS_ALIGNED(off, 2))
		return 2;
	return 1;
}

static ssize_t vgk_rw(struct vfio_device *vdev, char __user *ubuf,
		      size_t count, loff_t *ppos, bool write)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);
	unsigned int index = (u64)*ppos >> VGK_OFFSET_SHIFT;
	u64 off = (u64)*ppos & VGK_OFFSET_MASK;
	size_t done = 0;
	u8 val[4];
	int ret;

	if (*ppos < 0)
		return -EINVAL;
	/* A BAR access must be whole words: no partial effects. */
	if (index != VFIO_PCI_CONFIG_REGION_INDEX &&
	    (!IS_ALIGNED(count, 4) || !IS_ALIGNED(off, 4)))
		return -EINVAL;
	while (done < count) {
		unsigned int size = vgk_piece(index, off, count - done);

		if (write && copy_from_user(val, ubuf + done, size))
			return done ? done : -EFAULT;
		ret = vgk_access(v, index, off, val, size, write);
		if (ret)
			return done ? done : ret;
		if (!write && copy_to_user(ubuf + done, val, size))
			return done ? done : -EFAULT;
		done += size;
		off += size;
		*ppos += size;
	}
	return done;
}

static ssize_t vgk_read(struct vfio_device *vdev, char __user *buf,
			size_t count, loff_t *ppos)
{
	return vgk_rw(vdev, buf, count, ppos, false);
}

static ssize_t vgk_write(struct vfio_device *vdev, const char __user *buf,
			 size_t count, loff_t *ppos)
{
	return vgk_rw(vdev, (char __user *)buf, count, ppos, true);
}

/* ---- the VM behind the device ------------------------------------------------ */

static int vgk_vm_create(struct vgk_vgpu *v)
{
	struct vg_vm_config cfg = {
		.name = dev_name(&v->mdev->dev),
		.quota = v->quota,
		/*
		 * The type is what the tenant was sold; a quota raised above
		 * it (sysfs, netlink, mgmtd) allows bursts, best effort.
		 */
		.profile = v->type->quota,
		.platform = {
			.userd_zap = vgk_userd_zap,
			.chan_fault = vgk_chan_fault,
			.priv = v,
		},
	};
	struct vg_vm *vm;
	int ret;

	lockdep_assert_held(&v->lock);
	vgk_gmem_init(v, &cfg.gmem);
	ret = vg_vm_create(v->gpu->core, &cfg, &vm);
	if (ret)
		return ret;
	if (v->entitlement) {
		ret = vg_vm_set_entitlement(vm, v->entitlement);
		if (ret) {
			vg_vm_destroy(vm);
			return ret;
		}
	}
	WRITE_ONCE(v->vm, vm);	/* the zap reads it under the core's lock */
	/* its file cache context and shares (none: file maps get -ENOENT) */
	vgk_lrc_vm_open(v);
	spin_lock(&v->reg_lock);
	v->ready = true;
	spin_unlock(&v->reg_lock);
	return 0;
}

/* Add n u64s of past to st: a counter, or a histogram's buckets. */
static void vgk_stats_add(__u64 *st, const __u64 *past, unsigned int n)
{
	while (n--)
		*st++ += *past++;
}

/*
 * Add the counters of past (VMs gone) to st (the live VM's, or zero):
 * every counter and histogram of VGMEM_VM_STATS. The gauges in st stay
 * the live VM's; the largest suspension is the larger of the two, the
 * last one the live VM's if it had any.
 */
static void vgk_stats_fold(struct vgmem_vm_stats *st,
			   const struct vgmem_vm_stats *past)
{
	bool live_suspended = st->suspends;

#define VGK_FOLD(field, attr, kind, ...)				\
	if ((kind) != VGMEM_STAT_GAUGE)					\
		vgk_stats_add((__u64 *)&st->field,			\
			      (const __u64 *)&past->field,		\
			      sizeof(st->field) / sizeof(__u64));
	VGMEM_VM_STATS(VGK_FOLD)
#undef VGK_FOLD
	if (!live_suspended)
		st->suspend_last_ns = past->suspend_last_ns;
	st->suspend_max_ns = max(st->suspend_max_ns, past->suspend_max_ns);
}

static void vgk_vm_destroy(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->lock);
	spin_lock(&v->reg_lock);
	v->ready = false;
	spin_unlock(&v->reg_lock);
	if (!v->vm)
		return;
	/* Its counters live on in the vGPU's (the gauges are not used). */
	vg_vm_get_stats(v->vm, &v->scratch);
	vgk_stats_fold(&v->scratch, &v->past);
	v->past = v->scratch;
	/* Destroys channels first; each one's zap clears its BAR2 page. */
	vg_vm_destroy(v->vm);
	WRITE_ONCE(v->vm, NULL);
}

void vgk_vgpu_stats(struct vgk_vgpu *v, struct vgmem_vm_stats *st)
{
	mutex_lock(&v->lock);
	if (v->vm) {
		vg_vm_get_stats(v->vm, st);
	} else {
		memset(st, 0, sizeof(*st));
		st->quota = v->quota;
		st->entitlement = v->entitlement;
	}
	vgk_stats_fold(st, &v->past);
	mutex_unlock(&v->lock);
}

int vgk_vgpu_set_entitlement(struct vgk_vgpu *v, u64 bytes)
{
	int ret = 0;

	if (bytes > v->gpu->vram_size)
		return -EINVAL;
	mutex_lock(&v->lock);
	if (v->vm)
		ret = vg_vm_set_entitlement(v->vm, bytes);
	if (!ret)
		v->entitlement = bytes;
	mutex_unlock(&v->lock);
	return ret;
}

static int vgk_open_device(struct vfio_device *vdev)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);
	int ret;

	mutex_lock(&v->lock);
	spin_lock(&v->reg_lock);
	vgk_cfg_reset(v);
	vgk_regs_reset(v);
	v->closing = false;
	spin_unlock(&v->reg_lock);
	vgk_userd_reset_absent(v);
	ret = vgk_vm_create(v);
	mutex_unlock(&v->lock);
	return ret;
}

static void vgk_close_device(struct vfio_device *vdev)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);

	/* No control command may touch guest memory after we return. */
	vgk_ctrlq_dev_stop(v);
	mutex_lock(&v->lock);
	vgk_mig_reset(v);
	vgk_vm_destroy(v);
	mutex_unlock(&v->lock);
	vgk_irq_disable(v);
	vgk_req_disable(v);
	/* Every mapping holds the device file open: none is left now. */
	WARN_ON(!list_empty(&v->vmas));
}

/*
 * VFIO_DEVICE_RESET: a fresh vGPU. Channels and BOs go with the old VM;
 * interrupt eventfds stay, as vfio-pci keeps them over a reset.
 */
int vgk_vgpu_renew(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->lock);
	vgk_vm_destroy(v);
	spin_lock(&v->reg_lock);
	vgk_cfg_reset(v);
	vgk_regs_reset(v);
	spin_unlock(&v->reg_lock);
	vgk_userd_reset_absent(v);
	return vgk_vm_create(v);
}

/* A reset also ends a migration: the device is RUNNING again (vfio-pci). */
static int vgk_reset(struct vgk_vgpu *v)
{
	int ret;

	mutex_lock(&v->lock);
	vgk_mig_reset(v);
	ret = vgk_vgpu_renew(v);
	mutex_unlock(&v->lock);
	return ret;
}

/* ---- ioctls -------------------------------------------------------------------- */

static int vgk_region_info(struct vfio_region_info *info)
{
	info->cap_offset = 0;
	info->offset = (u64)info->index << VGK_OFFSET_SHIFT;
	switch (info->index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		info->size = VGK_CFG_SIZE;
		info->flags = VFIO_REGION_INFO_FLAG_READ |
			      VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_BAR0_REGION_INDEX:
		info->size = VGMEM_BAR0_SIZE;
		info->flags = VFIO_REGION_INFO_FLAG_READ |
			      VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_BAR2_REGION_INDEX:
		info->size = VGMEM_USERD_BAR_SIZE;
		info->flags = VFIO_REGION_INFO_FLAG_READ |
			      VFIO_REGION_INFO_FLAG_WRITE |
			      VFIO_REGION_INFO_FLAG_MMAP;
		break;
	default:
		if (info->index >= VFIO_PCI_NUM_REGIONS)
			return -EINVAL;
		info->size = 0;
		info->flags = 0;
		break;
	}
	return 0;
}

static long vgk_ioctl_device_info(void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_device_info, num_irqs);
	struct vfio_device_info info;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;
	info.flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
	info.num_regions = VFIO_PCI_NUM_REGIONS;
	info.num_irqs = VFIO_PCI_NUM_IRQS;
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long vgk_ioctl_region_info(void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_region_info, offset);
	struct vfio_region_info info;
	int ret;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;
	ret = vgk_region_info(&info);
	if (ret)
		return ret;
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long vgk_ioctl_irq_info(void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_irq_info, count);
	struct vfio_irq_info info;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz || info.index >= VFIO_PCI_NUM_IRQS)
		return -EINVAL;
	/* As vfio-pci: no error (AER) interrupt on a conventional PCI device. */
	if (info.index == VFIO_PCI_ERR_IRQ_INDEX)
		return -EINVAL;
	info.count = vgk_irq_count(info.index);
	info.flags = 0;
	if (info.index == VFIO_PCI_INTX_IRQ_INDEX)
		info.flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_MASKABLE |
			     VFIO_IRQ_INFO_AUTOMASKED;
	else if (info.index == VFIO_PCI_MSI_IRQ_INDEX)
		info.flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE;
	else if (info.index == VFIO_PCI_REQ_IRQ_INDEX)
		info.flags = VFIO_IRQ_INFO_EVENTFD;
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long vgk_ioctl_set_irqs(struct vgk_vgpu *v, void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_irq_set, count);
	struct vfio_irq_set hdr;
	size_t data_size = 0;
	void *data = NULL;
	int ret;

	if (copy_from_user(&hdr, arg, minsz))
		return -EFAULT;
	ret = vfio_set_irqs_validate_and_prepare(&hdr,
						 hdr.index < VFIO_PCI_NUM_IRQS ?
						 vgk_irq_count(hdr.index) : 0,
						 VFIO_PCI_NUM_IRQS, &data_size);
	if (ret)
		return ret;
	if (data_size) {
		data = memdup_user(arg + minsz, data_size);
		if (IS_ERR(data))
			return PTR_ERR(data);
	}
	mutex_lock(&v->lock);
	ret = vgk_irq_set(v, &hdr, data);
	mutex_unlock(&v->lock);
	kfree(data);
	return ret;
}

static long vgk_ioctl(struct vfio_device *vdev, unsigned int cmd,
		      unsigned long arg)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case VFIO_DEVICE_GET_INFO:
		return vgk_ioctl_device_info(uarg);
	case VFIO_DEVICE_GET_REGION_INFO:
		return vgk_ioctl_region_info(uarg);
	case VFIO_DEVICE_GET_IRQ_INFO:
		return vgk_ioctl_irq_info(uarg);
	case VFIO_DEVICE_SET_IRQS:
		return vgk_ioctl_set_irqs(v, uarg);
	case VFIO_DEVICE_RESET:
		return vgk_reset(v);
	default:
		return -ENOTTY;
	}
}

static int vgk_mmap(struct vfio_device *vdev, struct vm_area_struct *vma)
{
	return vgk_userd_mmap(vgk_vgpu_from_vdev(vdev), vma);
}

static void vgk_request(struct vfio_device *vdev, unsigned int count)
{
	vgk_irq_request(vgk_vgpu_from_vdev(vdev), count);
}

/* Called by vfio_alloc_device() from the mdev probe. */
static int vgk_vgpu_init(struct vfio_device *vdev)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);
	struct mdev_device *mdev = to_mdev_device(vdev->dev);

	v->mdev = mdev;
	v->gpu = container_of(mdev->type->parent, struct vgk_gpu, parent);
	v->type = container_of(mdev->type, struct vgk_type, type);
	v->quota = v->type->quota;
	v->absent = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!v->absent)
		return -ENOMEM;
	INIT_LIST_HEAD(&v->node);
	mutex_init(&v->lock);
	mutex_init(&v->userd_lock);
	INIT_LIST_HEAD(&v->vmas);
	spin_lock_init(&v->reg_lock);
	INIT_WORK(&v->ctrlq_work, vgk_ctrlq_dev_work);
	vgk_mig_init(v);
	spin_lock(&v->reg_lock);
	vgk_cfg_reset(v);
	vgk_regs_reset(v);
	spin_unlock(&v->reg_lock);
	return 0;
}

static void vgk_vgpu_release(struct vfio_device *vdev)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);

	vgk_shares_free(v->shares);
	__free_page(v->absent);
	mutex_destroy(&v->userd_lock);
	mutex_destroy(&v->lock);
	vgk_vfio_release_free(vdev);
}

const struct vfio_device_ops vgk_vfio_ops = {
	.name = "vgmem",
	.init = vgk_vgpu_init,
	.release = vgk_vgpu_release,
	VGK_VFIO_EMULATED_IOMMUFD_OPS
	.open_device = vgk_open_device,
	.close_device = vgk_close_device,
	.read = vgk_read,
	.write = vgk_write,
	.ioctl = vgk_ioctl,
	.mmap = vgk_mmap,
	.request = vgk_request,
};
