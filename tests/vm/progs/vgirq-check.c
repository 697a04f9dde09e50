// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgirq-check UUID: the vGPU's INTx as QEMU drives it with KVM's irqfd,
 * unmask through an eventfd (VFIO_IRQ_SET_ACTION_UNMASK with
 * VFIO_IRQ_SET_DATA_EVENTFD; docs/abi.md "Interrupts"), on a raw VFIO open
 * of the mdev (no guest memory needed). The interrupt source is the control
 * queue's error: CTRLQ_ENTRIES = 3 (not a power of two) stops the queue and
 * raises IRQ_CAUSE.CTRLQ, a level that stays high until the cause is
 * written back (RW1C).
 *
 * Prints "ok: ..." per check, "FAIL: ..." and exits 1 at the first failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/vfio.h>

#include <uapi/vgmem.h>

#include "vmcheck.h"

#define DELIVER_MS	5000	/* an interrupt that must come: generous */
#define QUIET_MS	300	/* one that must not: how long we look */

static const char *uuid;
static int container = -1, group = -1, device = -1;
static uint64_t bar0;

static void reg_wr(uint32_t reg, uint32_t val)
{
	if (pwrite(device, &val, 4, bar0 + reg) != 4)
		fail("BAR0 write 0x%x: %s", reg, strerror(errno));
}

static uint32_t reg_rd(uint32_t reg)
{
	uint32_t val;

	if (pread(device, &val, 4, bar0 + reg) != 4)
		fail("BAR0 read 0x%x: %s", reg, strerror(errno));
	return val;
}

/* SET_IRQS on INTx with one eventfd (or -1); returns 0 or -errno. */
static int set_fd(uint32_t action, int fd)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
	int32_t v = fd;

	memset(buf, 0, sizeof(buf));
	set->argsz = sizeof(buf);
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | action;
	set->index = VFIO_PCI_INTX_IRQ_INDEX;
	set->count = 1;
	memcpy(set->data, &v, sizeof(v));
	return ioctl(device, VFIO_DEVICE_SET_IRQS, set) ? -errno : 0;
}

/* SET_IRQS with DATA_NONE: the ioctl unmask, or (count 0) disable INTx. */
static int set_none(uint32_t action, uint32_t count)
{
	struct vfio_irq_set set = {
		.argsz = sizeof(set),
		.flags = VFIO_IRQ_SET_DATA_NONE | action,
		.index = VFIO_PCI_INTX_IRQ_INDEX,
		.count = count,
	};

	return ioctl(device, VFIO_DEVICE_SET_IRQS, &set) ? -errno : 0;
}

/* Did fd fire within ms? Consumes the count. */
static int fired(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t n;

	if (poll(&p, 1, ms) < 0)
		fail("poll: %s", strerror(errno));
	if (!(p.revents & POLLIN))
		return 0;
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		fail("read eventfd: %s", strerror(errno));
	return 1;
}

static int new_eventfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (fd < 0)
		fail("eventfd: %s", strerror(errno));
	return fd;
}

static void signal_fd(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		fail("write eventfd: %s", strerror(errno));
}

/* The level: raise IRQ_CAUSE.CTRLQ through a queue error, or clear it. */
static void level_high(void)
{
	reg_wr(VGMEM_REG_CTRLQ_ENTRIES, 3);
	if (!(reg_rd(VGMEM_REG_IRQ_CAUSE) & VGMEM_IRQ_CTRLQ))
		fail("CTRLQ_ENTRIES = 3 did not raise IRQ_CAUSE.CTRLQ");
}

static void level_low(void)
{
	reg_wr(VGMEM_REG_IRQ_CAUSE, VGMEM_IRQ_CTRLQ);
	reg_wr(VGMEM_REG_CTRLQ_ENTRIES, 1);	/* clears the queue's error */
	if (reg_rd(VGMEM_REG_IRQ_CAUSE) & VGMEM_IRQ_CTRLQ)
		fail("IRQ_CAUSE.CTRLQ still set after clearing it");
}

static void open_device(void)
{
	struct vfio_region_info ri = { .argsz = sizeof(ri),
				       .index = VFIO_PCI_BAR0_REGION_INDEX };

	device = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, uuid);
	if (device < 0)
		fail("VFIO_GROUP_GET_DEVICE_FD %s: %s", uuid, strerror(errno));
	if (ioctl(device, VFIO_DEVICE_GET_REGION_INFO, &ri))
		fail("BAR0 region info: %s", strerror(errno));
	bar0 = ri.offset;
}

static void open_vfio(void)
{
	char link[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/iommu_group", uuid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		fail("readlink %s: %s", path, strerror(errno));
	link[n] = 0;
	snprintf(path, sizeof(path), "/dev/vfio/%s", basename(link));
	group = open(path, O_RDWR | O_CLOEXEC);
	container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (group < 0 || container < 0)
		fail("opening %s or /dev/vfio/vfio: %s", path, strerror(errno));
	if (ioctl(group, VFIO_GROUP_SET_CONTAINER, &container))
		fail("VFIO_GROUP_SET_CONTAINER: %s", strerror(errno));
	if (ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) &&
	    ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU))
		fail("VFIO_SET_IOMMU: %s", strerror(errno));
	open_device();
}

int main(int argc, char **argv)
{
	int trig, unmask, other, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: vgirq-check UUID\n");
		return 2;
	}
	uuid = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	open_vfio();
	trig = new_eventfd();
	unmask = new_eventfd();
	other = new_eventfd();

	ret = set_fd(VFIO_IRQ_SET_ACTION_UNMASK, unmask);
	if (ret != -EINVAL)
		fail("unmask eventfd without INTx: %d, expected -EINVAL", ret);
	ok("unmask eventfd refused while INTx is off");

	if (set_fd(VFIO_IRQ_SET_ACTION_TRIGGER, trig))
		fail("INTx trigger eventfd: %s", strerror(errno));
	reg_wr(VGMEM_REG_IRQ_MASK, VGMEM_IRQ_CTRLQ);
	ret = set_fd(VFIO_IRQ_SET_ACTION_UNMASK, trig);
	if (ret != -EINVAL)
		fail("the trigger as unmask eventfd: %d, expected -EINVAL", ret);
	ret = set_fd(VFIO_IRQ_SET_ACTION_MASK, unmask);
	if (ret != -EINVAL)
		fail("mask through an eventfd: %d, expected -EINVAL", ret);
	ok("trigger as unmask eventfd and mask eventfd refused");

	/* Fires once, then automasked while the level stays high. */
	level_high();
	if (!fired(trig, DELIVER_MS))
		fail("INTx did not fire on IRQ_CAUSE.CTRLQ");
	if (fired(trig, QUIET_MS))
		fail("INTx fired again while automasked");
	ok("INTx fires and stays automasked");

	/* The unmask eventfd: the level is still high, so it fires again. */
	if (set_fd(VFIO_IRQ_SET_ACTION_UNMASK, unmask))
		fail("unmask eventfd: %s", strerror(errno));
	ret = set_fd(VFIO_IRQ_SET_ACTION_UNMASK, other);
	if (ret != -EBUSY)
		fail("a second unmask eventfd: %d, expected -EBUSY", ret);
	ret = set_fd(VFIO_IRQ_SET_ACTION_TRIGGER, unmask);
	if (ret != -EINVAL)
		fail("the unmask eventfd as trigger: %d, expected -EINVAL", ret);
	signal_fd(unmask);
	if (!fired(trig, DELIVER_MS))
		fail("unmask through the eventfd did not deliver the high level");
	if (fired(trig, QUIET_MS))
		fail("INTx fired twice for one unmask");
	ok("eventfd unmask delivers a level still high, once");

	/* Level low: the unmask leaves INTx open, the next edge comes through. */
	level_low();
	signal_fd(unmask);
	level_high();
	if (!fired(trig, DELIVER_MS))
		fail("no interrupt for a new cause after an eventfd unmask");
	ok("after an eventfd unmask the next cause is delivered");

	/* Several unmasks in a row, as a guest's EOIs. */
	for (int i = 0; i < 50; i++) {
		signal_fd(unmask);
		if (!fired(trig, DELIVER_MS))
			fail("round %d: eventfd unmask did not deliver", i);
	}
	ok("50 eventfd unmask rounds");

	/* Removed: signalling it does nothing, the ioctl unmask still works. */
	if (set_fd(VFIO_IRQ_SET_ACTION_UNMASK, -1))
		fail("removing the unmask eventfd: %s", strerror(errno));
	signal_fd(unmask);
	if (fired(trig, QUIET_MS))
		fail("a removed unmask eventfd still unmasks");
	if (set_none(VFIO_IRQ_SET_ACTION_UNMASK, 1))
		fail("ioctl unmask: %s", strerror(errno));
	if (!fired(trig, DELIVER_MS))
		fail("ioctl unmask did not deliver the high level");
	ok("removed unmask eventfd is inert; ioctl unmask works");

	/* Closing the unmask eventfd's file ends virqfd's watch: a new one fits. */
	{
		int gone = new_eventfd();

		if (set_fd(VFIO_IRQ_SET_ACTION_UNMASK, gone))
			fail("unmask eventfd to be closed: %s", strerror(errno));
		close(gone);
		for (int i = 0; i < 100; i++) {
			ret = set_fd(VFIO_IRQ_SET_ACTION_UNMASK, unmask);
			if (ret != -EBUSY)
				break;
			usleep(20000);	/* virqfd's teardown is a work item */
		}
		if (ret)
			fail("unmask eventfd after the last one's file closed: %d", ret);
		if (set_fd(VFIO_IRQ_SET_ACTION_UNMASK, -1))
			fail("removing the unmask eventfd: %s", strerror(errno));
	}
	ok("a closed unmask eventfd makes room for a new one");

	/* Disabling INTx takes the unmask eventfd with it. */
	if (set_fd(VFIO_IRQ_SET_ACTION_UNMASK, other))
		fail("unmask eventfd after removal: %s", strerror(errno));
	if (set_none(VFIO_IRQ_SET_ACTION_TRIGGER, 0))
		fail("disabling INTx: %s", strerror(errno));
	if (set_fd(VFIO_IRQ_SET_ACTION_TRIGGER, trig))
		fail("INTx trigger again: %s", strerror(errno));
	/* The pending level is delivered to the new trigger. */
	if (!fired(trig, DELIVER_MS))
		fail("the pending level not delivered to the re-installed trigger");
	signal_fd(other);
	if (fired(trig, QUIET_MS))
		fail("the unmask eventfd survived disabling INTx");
	if (set_fd(VFIO_IRQ_SET_ACTION_UNMASK, unmask))
		fail("unmask eventfd after INTx was disabled: %s", strerror(errno));
	signal_fd(unmask);
	if (!fired(trig, DELIVER_MS))
		fail("a fresh unmask eventfd did not deliver");
	ok("disabling INTx removes the unmask eventfd");

	/* Close with both eventfds installed; the device must open again. */
	close(device);
	open_device();
	ret = set_fd(VFIO_IRQ_SET_ACTION_UNMASK, unmask);
	if (ret != -EINVAL)
		fail("unmask eventfd survived close: %d, expected -EINVAL", ret);
	if (set_fd(VFIO_IRQ_SET_ACTION_TRIGGER, trig) ||
	    set_fd(VFIO_IRQ_SET_ACTION_UNMASK, unmask))
		fail("INTx and unmask eventfd after reopen: %s", strerror(errno));
	reg_wr(VGMEM_REG_IRQ_MASK, VGMEM_IRQ_CTRLQ);
	level_high();
	if (!fired(trig, DELIVER_MS))
		fail("INTx after reopen");
	signal_fd(unmask);
	if (!fired(trig, DELIVER_MS))
		fail("eventfd unmask after reopen");
	ok("close tears the unmask eventfd down; reopen works");

	close(device);
	close(group);
	close(container);
	printf("RESULT ok\n");
	return 0;
}
