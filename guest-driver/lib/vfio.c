// SPDX-License-Identifier: MIT
/*
 * libvgmem's VFIO transport: a vGPU mediated device opened from userspace
 * the way QEMU opens it for a guest, so a plain process plays the guest.
 *
 *   mdev UUID -> /sys/bus/mdev/devices/UUID/iommu_group -> /dev/vfio/N
 *   /dev/vfio/vfio container, type1 IOMMU (v2 if offered)
 *   anonymous memory as guest RAM, VFIO_IOMMU_MAP_DMA at VGMEM_VFIO_GPA_BASE
 *   device fd: config space (ids, memory decoding), BAR0 registers through
 *   pread/pwrite, BAR2 USERD pages mapped, MSI on an eventfd
 *   control queue ring in guest RAM (vfio_ctrlq.c)
 *
 * Every step that can fail leaves a message naming itself
 * (vgmem_vfio_error) and undoes what came before it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include "vfio_priv.h"
#include "vgmem_priv.h"

#define MDEV_SYSFS		"/sys/bus/mdev/devices"
#define READY_WAIT_NS		(5ull * 1000000000ull)

struct vfio_dev {
	int container;
	int group;
	int device;
	int group_id;
	int iommu_type;
	int peer_group;			/* a migration's destination, or -1 */
	int peer_group_id;

	uint8_t *ram;			/* guest RAM, CPU view */
	size_t ram_size;
	bool dma_mapped;
	struct vgmem_gpa_heap heap;

	uint64_t cfg_off;		/* region offsets in the device fd */
	uint64_t bar0_off;
	uint64_t bar2_off, bar2_size;
	uint8_t *userd;			/* BAR2 mapping, NULL: pread/pwrite */
	uint32_t nchan;			/* USERD pages we may touch */
	uint32_t vendor, devid;

	int irq_fd;			/* MSI eventfd, -1: polled */

	struct vgmem_ctrl *ring;
	uint64_t ring_gpa;
	size_t ring_bytes;
	bool q_live;
	struct vgmem_ctrlq_drv q;
};

static const struct vgmem_transport_ops vfio_ops;

#define fail(ret, ...)	(vgmem_vfio_set_error(__VA_ARGS__), (ret))

/* ---- device fd access ---------------------------------------------------- */

static int dev_pread(struct vfio_dev *v, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	do {
		n = pread(v->device, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int dev_pwrite(struct vfio_dev *v, const void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	do {
		n = pwrite(v->device, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int reg_rd(void *priv, uint32_t reg, uint32_t *val)
{
	struct vfio_dev *v = priv;

	return dev_pread(v, val, 4, v->bar0_off + reg);
}

static int reg_wr(void *priv, uint32_t reg, uint32_t val)
{
	struct vfio_dev *v = priv;

	return dev_pwrite(v, &val, 4, v->bar0_off + reg);
}

/* Wait for the MSI eventfd, then acknowledge the cause we wait for. */
static int irq_wait(void *priv, uint64_t max_ns)
{
	struct vfio_dev *v = priv;
	struct pollfd pfd = { .fd = v->irq_fd, .events = POLLIN };
	uint64_t cnt;
	int ms = (int)((max_ns + 999999) / 1000000), n;

	n = poll(&pfd, 1, ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (!n)
		return 0;
	/* Non-blocking: a spurious wake just finds the counter at zero. */
	if (read(v->irq_fd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		return -errno;
	return reg_wr(v, VGMEM_REG_IRQ_CAUSE, VGMEM_IRQ_CTRLQ);
}

/* ---- transport ops -------------------------------------------------------- */

static int v_ctrl(void *t, struct vgmem_ctrl *cmd)
{
	struct vfio_dev *v = t;

	return vgmem_ctrlq_drv_run(&v->q, cmd, 1);
}

static bool userd_ok(struct vfio_dev *v, uint32_t chan, uint32_t off)
{
	return chan < v->nchan && off <= VGMEM_USERD_SIZE - 4 && !(off & 3);
}

/*
 * A channel the device does not have reads as zeroes with a KILLED error,
 * as in the in-process transport, so a waiting guest gives up.
 */
static uint32_t v_userd_read(void *t, uint32_t chan, uint32_t off)
{
	struct vfio_dev *v = t;
	uint64_t pos = (uint64_t)chan * VGMEM_USERD_SIZE + off;
	uint32_t val;

	if (!userd_ok(v, chan, off))
		return off == VGMEM_USERD_ERROR ? VGMEM_CHAN_ERR_KILLED : 0;
	if (v->userd)
		return *(volatile uint32_t *)(v->userd + pos);
	if (dev_pread(v, &val, 4, v->bar2_off + pos))
		return off == VGMEM_USERD_ERROR ? VGMEM_CHAN_ERR_KILLED : 0;
	return val;
}

static void v_userd_write(void *t, uint32_t chan, uint32_t off, uint32_t val)
{
	struct vfio_dev *v = t;
	uint64_t pos = (uint64_t)chan * VGMEM_USERD_SIZE + off;

	if (!userd_ok(v, chan, off))
		return;
	if (v->userd)
		*(volatile uint32_t *)(v->userd + pos) = val;
	else
		dev_pwrite(v, &val, 4, v->bar2_off + pos);	/* read back as KILLED if lost */
}

static int v_gmem_alloc(void *t, size_t size, void **cpu, uint64_t *gpa)
{
	struct vfio_dev *v = t;
	uint64_t a;
	int ret;

	ret = vgmem_gpa_heap_alloc(&v->heap, size, &a);
	if (ret)
		return ret;
	*cpu = v->ram + (a - VGMEM_VFIO_GPA_BASE);
	/* The GPU may read what we do not write: never leak old contents. */
	memset(*cpu, 0, size);
	*gpa = a;
	return 0;
}

static void v_gmem_free(void *t, void *cpu, size_t size)
{
	struct vfio_dev *v = t;

	vgmem_gpa_heap_free(&v->heap, VGMEM_VFIO_GPA_BASE +
			    (uint64_t)((uint8_t *)cpu - v->ram), size);
}

static const struct vgmem_transport_ops vfio_ops = {
	.ctrl = v_ctrl,
	.userd_read = v_userd_read,
	.userd_write = v_userd_write,
	.gmem_alloc = v_gmem_alloc,
	.gmem_free = v_gmem_free,
};

/* ---- opening, step by step -------------------------------------------------- */

/* 8-4-4-4-12 hex digits: also keeps the string from walking sysfs paths. */
static bool uuid_valid(const char *s)
{
	static const int dash[] = { 8, 13, 18, 23 };
	unsigned int i, d = 0;

	if (!s || strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (d < 4 && (int)i == dash[d]) {
			if (s[i] != '-')
				return false;
			d++;
		} else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			     (s[i] >= 'A' && s[i] <= 'F'))) {
			return false;
		}
	}
	return true;
}

static int find_group(struct vfio_dev *v, const char *uuid)
{
	char path[128], link[PATH_MAX];
	const char *base;
	char *end;
	ssize_t n;
	long id;

	snprintf(path, sizeof(path), MDEV_SYSFS "/%s/iommu_group", uuid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return fail(-errno, "IOMMU group: readlink %s: %s (no such mdev, or the vfio_mdev/vfio_iommu_type1 modules are not loaded)",
			    path, strerror(errno));
	link[n] = 0;
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	errno = 0;
	id = strtol(base, &end, 10);
	if (errno || end == base || *end || id < 0 || id > INT_MAX)
		return fail(-EINVAL, "IOMMU group: %s points at '%s', not a group number",
			    path, link);
	v->group_id = (int)id;
	return 0;
}

static int open_container(struct vfio_dev *v)
{
	int r;

	v->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (v->container < 0)
		return fail(-errno, "container: open /dev/vfio/vfio: %s", strerror(errno));
	r = ioctl(v->container, VFIO_GET_API_VERSION);
	if (r != VFIO_API_VERSION)
		return fail(-EPROTO, "container: VFIO API version %d, want %d", r,
			    VFIO_API_VERSION);
	if (ioctl(v->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) > 0)
		v->iommu_type = VFIO_TYPE1v2_IOMMU;
	else if (ioctl(v->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) > 0)
		v->iommu_type = VFIO_TYPE1_IOMMU;
	else
		return fail(-EOPNOTSUPP, "container: no type1 IOMMU support (load vfio_iommu_type1)");
	return 0;
}

static int open_group(struct vfio_dev *v)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char path[64];

	snprintf(path, sizeof(path), "/dev/vfio/%d", v->group_id);
	v->group = open(path, O_RDWR | O_CLOEXEC);
	if (v->group < 0)
		return fail(-errno, "group: open %s: %s", path, strerror(errno));
	if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &st))
		return fail(-errno, "group: VFIO_GROUP_GET_STATUS on %s: %s", path,
			    strerror(errno));
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE))
		return fail(-EBUSY, "group: %s is not viable (a device in it is bound to a host driver)",
			    path);
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container))
		return fail(-errno, "group: VFIO_GROUP_SET_CONTAINER on %s: %s", path,
			    strerror(errno));
	if (ioctl(v->container, VFIO_SET_IOMMU, v->iommu_type))
		return fail(-errno, "container: VFIO_SET_IOMMU(%s): %s",
			    v->iommu_type == VFIO_TYPE1v2_IOMMU ? "TYPE1v2" : "TYPE1",
			    strerror(errno));
	return 0;
}

static int map_ram(struct vfio_dev *v, size_t size)
{
	struct vfio_iommu_type1_dma_map map = { .argsz = sizeof(map) };
	void *p;
	int ret;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return fail(-errno, "guest RAM: mmap of %zu bytes: %s", size, strerror(errno));
	v->ram = p;
	v->ram_size = size;
	/* Pages the device reaches must not turn copy-on-write in a child. */
	madvise(p, size, MADV_DONTFORK);
	map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
	map.vaddr = (uint64_t)(uintptr_t)p;
	map.iova = VGMEM_VFIO_GPA_BASE;
	map.size = size;
	if (ioctl(v->container, VFIO_IOMMU_MAP_DMA, &map))
		return fail(-errno, "guest RAM: VFIO_IOMMU_MAP_DMA of %zu bytes at IOVA 0x%llx: %s",
			    size, VGMEM_VFIO_GPA_BASE, strerror(errno));
	v->dma_mapped = true;
	ret = vgmem_gpa_heap_init(&v->heap, VGMEM_VFIO_GPA_BASE, size);
	if (ret)
		return fail(ret, "guest RAM: allocator: %s", strerror(-ret));
	return 0;
}

static int region(struct vfio_dev *v, uint32_t index, const char *name,
		  uint64_t min_size, struct vfio_region_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	ri->argsz = sizeof(*ri);
	ri->index = index;
	if (ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, ri))
		return fail(-errno, "device: VFIO_DEVICE_GET_REGION_INFO(%s): %s", name,
			    strerror(errno));
	if (ri->size < min_size ||
	    (ri->flags & (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE)) !=
	    (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE))
		return fail(-ENODEV, "device: region %s has size %llu flags 0x%x, want >= %llu, read+write",
			    name, (unsigned long long)ri->size, ri->flags,
			    (unsigned long long)min_size);
	return 0;
}

static int open_device(struct vfio_dev *v, const char *uuid)
{
	struct vfio_device_info di = { .argsz = sizeof(di) };
	struct vfio_region_info ri;
	int ret;

	v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, uuid);
	if (v->device < 0)
		return fail(-errno, "device: VFIO_GROUP_GET_DEVICE_FD(%s): %s (already open elsewhere?)",
			    uuid, strerror(errno));
	if (ioctl(v->device, VFIO_DEVICE_GET_INFO, &di))
		return fail(-errno, "device: VFIO_DEVICE_GET_INFO: %s", strerror(errno));
	if (!(di.flags & VFIO_DEVICE_FLAGS_PCI) ||
	    di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX)
		return fail(-ENODEV, "device: not a PCI device (flags 0x%x, %u regions)",
			    di.flags, di.num_regions);
	ret = region(v, VFIO_PCI_CONFIG_REGION_INDEX, "config", 64, &ri);
	if (ret)
		return ret;
	v->cfg_off = ri.offset;
	ret = region(v, VFIO_PCI_BAR0_REGION_INDEX, "BAR0", VGMEM_BAR0_SIZE, &ri);
	if (ret)
		return ret;
	v->bar0_off = ri.offset;
	ret = region(v, VFIO_PCI_BAR2_REGION_INDEX, "BAR2", VGMEM_USERD_SIZE, &ri);
	if (ret)
		return ret;
	v->bar2_off = ri.offset;
	v->bar2_size = ri.size;
	if (ri.flags & VFIO_REGION_INFO_FLAG_MMAP) {
		void *p = mmap(NULL, ri.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       v->device, (off_t)ri.offset);

		/* Not fatal: USERD then goes through the fd, trapped. */
		if (p != MAP_FAILED)
			v->userd = p;
	}
	return 0;
}

/* Ids, then memory decoding and bus mastering, as a guest's driver would. */
static int setup_config(struct vfio_dev *v)
{
	uint32_t id;
	uint16_t cmd;
	int ret;

	ret = dev_pread(v, &id, 4, v->cfg_off + PCI_VENDOR_ID);
	if (ret)
		return fail(ret, "config space: reading the ids: %s", strerror(-ret));
	v->vendor = id & 0xffff;
	v->devid = id >> 16;
	if (v->vendor != VGMEM_PCI_VENDOR || v->devid != VGMEM_PCI_DEVICE)
		return fail(-ENODEV, "config space: ids %04x:%04x, not a vgmem vGPU (%04x:%04x)",
			    v->vendor, v->devid, VGMEM_PCI_VENDOR, VGMEM_PCI_DEVICE);
	ret = dev_pread(v, &cmd, 2, v->cfg_off + PCI_COMMAND);
	if (ret)
		return fail(ret, "config space: reading COMMAND: %s", strerror(-ret));
	cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	ret = dev_pwrite(v, &cmd, 2, v->cfg_off + PCI_COMMAND);
	if (ret)
		return fail(ret, "config space: enabling memory decoding: %s", strerror(-ret));
	return 0;
}

static int check_regs(struct vfio_dev *v)
{
	uint64_t start = vgmem_now_ns();
	uint32_t val, maxch, status;
	unsigned int spins = 0;
	int ret;

	ret = reg_rd(v, VGMEM_REG_ID, &val);
	if (ret)
		return fail(ret, "BAR0: reading REG_ID: %s", strerror(-ret));
	if (val != VGMEM_ID_MAGIC)
		return fail(-ENODEV, "BAR0: REG_ID is 0x%08x, want 0x%08x", val,
			    VGMEM_ID_MAGIC);
	ret = reg_rd(v, VGMEM_REG_ABI_VERSION, &val);
	if (ret)
		return fail(ret, "BAR0: reading ABI_VERSION: %s", strerror(-ret));
	if (val != VGMEM_ABI_VERSION)
		return fail(-EPROTO, "BAR0: device speaks ABI %u, we speak %u", val,
			    VGMEM_ABI_VERSION);
	ret = reg_rd(v, VGMEM_REG_MAX_CHANNELS, &maxch);
	if (ret)
		return fail(ret, "BAR0: reading MAX_CHANNELS: %s", strerror(-ret));
	if (!maxch || maxch > VGMEM_MAX_CHANNELS)
		return fail(-EPROTO, "BAR0: MAX_CHANNELS is %u, want 1..%u", maxch,
			    VGMEM_MAX_CHANNELS);
	v->nchan = maxch;
	if ((uint64_t)v->nchan * VGMEM_USERD_SIZE > v->bar2_size)
		v->nchan = (uint32_t)(v->bar2_size / VGMEM_USERD_SIZE);
	for (;;) {
		ret = reg_rd(v, VGMEM_REG_STATUS, &status);
		if (ret)
			return fail(ret, "BAR0: reading STATUS: %s", strerror(-ret));
		if (status & VGMEM_STATUS_READY)
			return 0;
		if (vgmem_now_ns() - start > READY_WAIT_NS)
			return fail(-ETIMEDOUT, "BAR0: STATUS 0x%x, device not READY after 5 s",
				    status);
		vgmem_relax(spins++);
	}
}

/*
 * The MSI vector on an eventfd, if the device has one. Without it the
 * queue is polled, which works the same, only with more register reads.
 */
static void setup_irq(struct vfio_dev *v)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii), .index = VFIO_PCI_MSI_IRQ_INDEX };
	char buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
	int32_t fd;

	if (ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) || ii.count < 1 ||
	    !(ii.flags & VFIO_IRQ_INFO_EVENTFD))
		return;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return;
	memset(buf, 0, sizeof(buf));
	set->argsz = sizeof(buf);
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_MSI_IRQ_INDEX;
	set->start = 0;
	set->count = 1;
	memcpy(set->data, &fd, sizeof(fd));
	if (ioctl(v->device, VFIO_DEVICE_SET_IRQS, set) ||
	    reg_wr(v, VGMEM_REG_IRQ_MASK, VGMEM_IRQ_CTRLQ)) {
		close(fd);
		return;
	}
	v->irq_fd = fd;
}

static void teardown_irq(struct vfio_dev *v)
{
	struct vfio_irq_set set = {
		.argsz = sizeof(set),
		.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
		.index = VFIO_PCI_MSI_IRQ_INDEX,
	};

	if (v->irq_fd < 0)
		return;
	reg_wr(v, VGMEM_REG_IRQ_MASK, 0);
	ioctl(v->device, VFIO_DEVICE_SET_IRQS, &set);
	close(v->irq_fd);
	v->irq_fd = -1;
}

static int setup_ctrlq(struct vfio_dev *v)
{
	struct vgmem_regs regs = {
		.rd = reg_rd,
		.wr = reg_wr,
		.wait = v->irq_fd >= 0 ? irq_wait : NULL,
		.priv = v,
	};
	void *cpu;
	int ret;

	v->ring_bytes = (size_t)VGMEM_VFIO_CTRLQ_ENTRIES * sizeof(struct vgmem_ctrl);
	ret = v_gmem_alloc(v, v->ring_bytes, &cpu, &v->ring_gpa);
	if (ret)
		return fail(ret, "control queue: no guest RAM for the ring: %s", strerror(-ret));
	v->ring = cpu;
	ret = vgmem_ctrlq_drv_init(&v->q, &regs, v->ring, v->ring_gpa,
			       VGMEM_VFIO_CTRLQ_ENTRIES, 0);
	if (ret)
		return fail(ret, "control queue: arming the ring at 0x%llx: %s (%s)",
			    (unsigned long long)v->ring_gpa, strerror(-ret),
			    vgmem_vfio_error());
	v->q_live = true;
	return 0;
}

/* Undo whatever of the above happened, in reverse; safe on a partial v. */
static void vfio_release(struct vfio_dev *v)
{
	struct vfio_iommu_type1_dma_unmap unmap = { .argsz = sizeof(unmap) };

	if (v->q_live)
		vgmem_ctrlq_drv_fini(&v->q);
	if (v->device >= 0) {
		teardown_irq(v);
		if (v->userd)
			munmap(v->userd, v->bar2_size);
		close(v->device);
	}
	if (v->dma_mapped) {
		unmap.iova = VGMEM_VFIO_GPA_BASE;
		unmap.size = v->ram_size;
		ioctl(v->container, VFIO_IOMMU_UNMAP_DMA, &unmap);
	}
	vgmem_gpa_heap_fini(&v->heap);
	if (v->ram)
		munmap(v->ram, v->ram_size);
	if (v->peer_group >= 0) {
		ioctl(v->peer_group, VFIO_GROUP_UNSET_CONTAINER);
		close(v->peer_group);
	}
	if (v->group >= 0) {
		ioctl(v->group, VFIO_GROUP_UNSET_CONTAINER);
		close(v->group);
	}
	if (v->container >= 0)
		close(v->container);
	free(v);
}

int vgmem_open_vfio(const char *mdev_uuid, size_t guest_ram,
		    struct vgmem_dev **out)
{
	struct vfio_dev *v;
	int ret;

	if (!out)
		return fail(-EINVAL, "vgmem_open_vfio: no output pointer");
	if (!uuid_valid(mdev_uuid))
		return fail(-EINVAL, "mdev UUID '%s' is not of the form 8-4-4-4-12 hex digits",
			    mdev_uuid ? mdev_uuid : "(null)");
	if (!guest_ram)
		guest_ram = VGMEM_VFIO_RAM_DEFAULT;
	guest_ram = (guest_ram + VGMEM_VFIO_PAGE - 1) & ~(size_t)(VGMEM_VFIO_PAGE - 1);
	if (guest_ram < (256u << 10) || guest_ram > VGMEM_VFIO_RAM_MAX)
		return fail(-EINVAL, "guest RAM of %zu bytes: want 256 KiB to %llu GiB",
			    guest_ram, VGMEM_VFIO_RAM_MAX >> 30);
	v = calloc(1, sizeof(*v));
	if (!v)
		return fail(-ENOMEM, "out of memory");
	v->container = v->group = v->device = v->irq_fd = v->peer_group = -1;

	ret = find_group(v, mdev_uuid);
	if (!ret)
		ret = open_container(v);
	if (!ret)
		ret = open_group(v);
	if (!ret)
		ret = map_ram(v, guest_ram);
	if (!ret)
		ret = open_device(v, mdev_uuid);
	if (!ret)
		ret = setup_config(v);
	if (!ret)
		ret = check_regs(v);
	if (!ret) {
		setup_irq(v);
		ret = setup_ctrlq(v);
	}
	if (ret)
		goto err_release;
	vgmem_vfio_set_error("%s", "");
	ret = vgmem_open(&vfio_ops, v, out);
	if (ret) {
		/* A transport failure left its own message: keep it as the reason. */
		char why[256];

		snprintf(why, sizeof(why), "%s", vgmem_vfio_error());
		vgmem_vfio_set_error("QUERY through the control queue: %s (%s)", strerror(-ret),
				     ret == -EPROTO ? "the device answered with another ABI version" : why);
		goto err_release;
	}
	return 0;

err_release:
	vfio_release(v);
	return ret;
}

static struct vfio_dev *to_vfio(struct vgmem_dev *dev)
{
	return dev && dev->ops == &vfio_ops ? dev->t : NULL;
}

void vgmem_close_vfio(struct vgmem_dev *dev)
{
	struct vfio_dev *v = to_vfio(dev);

	if (!dev)
		return;
	/* Channels go first: the device must stop reading their rings. */
	vgmem_close(dev);
	if (v)
		vfio_release(v);
}

int vgmem_vfio_get_info(struct vgmem_dev *dev, struct vgmem_vfio_info *info)
{
	struct vfio_dev *v = to_vfio(dev);

	if (!dev || !info)
		return -EINVAL;
	if (!v)
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	info->vendor = v->vendor;
	info->device = v->devid;
	info->max_channels = v->nchan;
	info->ctrlq_entries = v->q.entries;
	info->ram_gpa = VGMEM_VFIO_GPA_BASE;
	info->ram_size = v->ram_size;
	info->ram_free = vgmem_gpa_heap_free_bytes(&v->heap);
	info->userd_mmap = v->userd != NULL;
	info->irq = v->irq_fd >= 0;
	info->iommu_type = v->iommu_type;
	return 0;
}

int vgmem_vfio_device_fd(struct vgmem_dev *dev, uint64_t *bar2_off,
			 uint64_t *bar2_size)
{
	struct vfio_dev *v;

	if (!dev)
		return -EINVAL;
	v = to_vfio(dev);
	if (!v)
		return -ENODEV;
	if (bar2_off)
		*bar2_off = v->bar2_off;
	if (bar2_size)
		*bar2_size = v->bar2_size;
	return v->device;
}

static int reg_check(struct vgmem_dev *dev, uint32_t reg, struct vfio_dev **vp)
{
	if (!dev)
		return -EINVAL;
	*vp = to_vfio(dev);
	if (!*vp)
		return -ENODEV;
	if (reg > VGMEM_BAR0_SIZE - 4 || (reg & 3))
		return -EINVAL;
	return 0;
}

int vgmem_vfio_reg_read(struct vgmem_dev *dev, uint32_t reg, uint32_t *val)
{
	struct vfio_dev *v;
	int ret = reg_check(dev, reg, &v);

	if (ret)
		return ret;
	if (!val)
		return -EINVAL;
	ret = reg_rd(v, reg, val);
	if (ret)
		vgmem_vfio_set_error("BAR0: reading 0x%03x: %s", reg, strerror(-ret));
	return ret;
}

int vgmem_vfio_reg_write(struct vgmem_dev *dev, uint32_t reg, uint32_t val)
{
	struct vfio_dev *v;
	int ret = reg_check(dev, reg, &v);

	if (ret)
		return ret;
	ret = reg_wr(v, reg, val);
	if (ret)
		vgmem_vfio_set_error("BAR0: writing 0x%03x: %s", reg, strerror(-ret));
	return ret;
}

int vgmem_vfio_ctrl_batch(struct vgmem_dev *dev, struct vgmem_ctrl *cmds,
			  uint32_t n)
{
	struct vfio_dev *v = to_vfio(dev);

	if (!dev || (!cmds && n))
		return -EINVAL;
	if (!v)
		return -ENODEV;
	return vgmem_ctrlq_drv_run(&v->q, cmds, n);
}

int vgmem_vfio_ctrlq_bad_base(struct vgmem_dev *dev, uint64_t gpa,
			      uint32_t *status, int32_t *qerr)
{
	struct vfio_dev *v = to_vfio(dev);

	if (!dev)
		return -EINVAL;
	if (!v)
		return -ENODEV;
	return vgmem_ctrlq_drv_abuse(&v->q, VGMEM_CTRLQ_BASE_AT, gpa, status, qerr);
}

int vgmem_vfio_ctrlq_bad_producer(struct vgmem_dev *dev, uint32_t ahead,
				  uint32_t *status, int32_t *qerr)
{
	struct vfio_dev *v = to_vfio(dev);

	if (!dev)
		return -EINVAL;
	if (!v)
		return -ENODEV;
	return vgmem_ctrlq_drv_abuse(&v->q, VGMEM_CTRLQ_PRODUCER_AHEAD, ahead, status, qerr);
}

/* ---- live migration, the VMM's part ------------------------------------------ */

int vgmem_vfio_open_peer(struct vgmem_dev *dev, const char *mdev_uuid)
{
	struct vfio_dev *v = to_vfio(dev);
	struct vfio_group_status st = { .argsz = sizeof(st) };
	struct vfio_dev peer;
	char path[64];
	int fd, group;

	if (!dev || !uuid_valid(mdev_uuid))
		return fail(-EINVAL, "peer: mdev UUID '%s' is not of the form 8-4-4-4-12 hex digits",
			    mdev_uuid ? mdev_uuid : "(null)");
	if (!v)
		return -ENODEV;
	if (v->peer_group >= 0)
		return fail(-EBUSY, "peer: a destination device is open already");
	memset(&peer, 0, sizeof(peer));
	if (find_group(&peer, mdev_uuid))
		return -ENOENT;
	if (peer.group_id == v->group_id)
		return fail(-EINVAL, "peer: %s is this guest's own device", mdev_uuid);
	snprintf(path, sizeof(path), "/dev/vfio/%d", peer.group_id);
	group = open(path, O_RDWR | O_CLOEXEC);
	if (group < 0)
		return fail(-errno, "peer: open %s: %s", path, strerror(errno));
	if (ioctl(group, VFIO_GROUP_GET_STATUS, &st) ||
	    !(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		close(group);
		return fail(-EBUSY, "peer: group %s is not viable", path);
	}
	/* The same container: the same DMA map, so the same guest RAM. */
	if (ioctl(group, VFIO_GROUP_SET_CONTAINER, &v->container)) {
		fd = -errno;
		close(group);
		return fail(fd, "peer: VFIO_GROUP_SET_CONTAINER on %s: %s", path,
			    strerror(-fd));
	}
	fd = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, mdev_uuid);
	if (fd < 0) {
		fd = -errno;
		ioctl(group, VFIO_GROUP_UNSET_CONTAINER);
		close(group);
		return fail(fd, "peer: VFIO_GROUP_GET_DEVICE_FD(%s): %s", mdev_uuid,
			    strerror(-fd));
	}
	v->peer_group = group;
	v->peer_group_id = peer.group_id;
	return fd;
}

int vgmem_vfio_switch_device(struct vgmem_dev *dev, int fd)
{
	struct vfio_dev *v = to_vfio(dev);
	struct vfio_region_info cfg, bar0, bar2;
	int old = -1, ret;

	if (!dev || fd < 0)
		return -EINVAL;
	if (!v)
		return -ENODEV;
	if (v->peer_group < 0)
		return fail(-EINVAL, "switch: no destination device open (vgmem_vfio_open_peer)");
	/* The destination's regions must be this device's. */
	old = v->device;
	v->device = fd;
	ret = region(v, VFIO_PCI_CONFIG_REGION_INDEX, "config", 64, &cfg);
	if (!ret)
		ret = region(v, VFIO_PCI_BAR0_REGION_INDEX, "BAR0", VGMEM_BAR0_SIZE, &bar0);
	if (!ret)
		ret = region(v, VFIO_PCI_BAR2_REGION_INDEX, "BAR2", VGMEM_USERD_SIZE, &bar2);
	if (!ret && bar2.size != v->bar2_size)
		ret = fail(-ENODEV, "switch: BAR2 of %llu bytes, the source's has %llu",
			   (unsigned long long)bar2.size,
			   (unsigned long long)v->bar2_size);
	if (!ret && v->userd &&
	    mmap(v->userd, bar2.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, (off_t)bar2.offset) == MAP_FAILED)
		ret = fail(-errno, "switch: mapping the destination's BAR2: %s",
			   strerror(errno));
	if (ret) {
		v->device = old;
		return ret;
	}
	/* The source's interrupt goes, the destination's comes. */
	v->device = old;
	teardown_irq(v);
	v->device = fd;
	v->cfg_off = cfg.offset;
	v->bar0_off = bar0.offset;
	v->bar2_off = bar2.offset;
	close(old);
	ioctl(v->group, VFIO_GROUP_UNSET_CONTAINER);
	close(v->group);
	v->group = v->peer_group;
	v->group_id = v->peer_group_id;
	v->peer_group = -1;
	setup_irq(v);
	return 0;
}
