// SPDX-License-Identifier: MIT
/*
 * vgmem-guest hostile bar: what a VMM that maps the device straight into a
 * guest needs from it (docs/abi.md "USERD pages", "Interrupts"), checked
 * through VFIO as QEMU uses it:
 *  - every BAR2 page is safe to touch: a page without a channel reads as
 *    zeros (no SIGBUS, which would kill the VMM and its guest), and what
 *    the guest writes there reaches no channel;
 *  - creating a channel turns its page, in a mapping made before, into the
 *    channel's USERD page; destroying it turns it back;
 *  - the error (AER) interrupt index is refused with EINVAL and the device
 *    request index has one eventfd-capable interrupt, as vfio-pci answers
 *    for a conventional PCI device.
 * A fault on the mapping is caught (SIGBUS/SIGSEGV) and reported as a
 * failure, so the tool survives to say which page it was.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/vfio.h>
#include "vgg.h"

#define JUNK		0x6a756e6bu	/* "junk" */
#define JUNK_OFF	0x200		/* a word of USERD no one defines */
#define SIGNAL_MS	5000		/* an eventfd signal that must come */
#define QUIET_MS	300		/* one that must not: how long we look */

static sigjmp_buf bar_jmp;
static volatile sig_atomic_t bar_sig;

static void bar_fault(int sig)
{
	bar_sig = sig;
	siglongjmp(bar_jmp, 1);
}

/* Read the word at off of every page; -1 and *bad_page on a fault. */
static int read_all(volatile uint8_t *bar, uint32_t pages, uint32_t off,
		    uint32_t *vals, uint32_t *bad_page)
{
	struct sigaction sa = { .sa_handler = bar_fault }, obus, osegv;
	volatile uint32_t p = 0;
	int ret = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	if (sigsetjmp(bar_jmp, 1)) {
		*bad_page = p;
		ret = -1;
		goto out;
	}
	for (p = 0; p < pages; p++)
		vals[p] = *(volatile uint32_t *)(bar + (size_t)p * VGMEM_USERD_SIZE + off);
out:
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return ret;
}

static int irq_info(int fd, uint32_t index, struct vfio_irq_info *info)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	return ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, info) ? -errno : 0;
}

/* SET_IRQS on the request index: one eventfd (or -1), or a loopback bool. */
static int req_set(int fd, uint32_t data_type, int32_t val)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
	uint8_t b = 1;

	memset(buf, 0, sizeof(buf));
	set->argsz = sizeof(buf);
	set->flags = data_type | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_REQ_IRQ_INDEX;
	set->count = 1;
	if (data_type == VFIO_IRQ_SET_DATA_BOOL)
		memcpy(set->data, &b, 1);
	else
		memcpy(set->data, &val, sizeof(val));
	return ioctl(fd, VFIO_DEVICE_SET_IRQS, set) ? -errno : 0;
}

static bool signalled(int efd, int ms)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t n;

	if (poll(&pfd, 1, ms) != 1)
		return false;
	return read(efd, &n, sizeof(n)) == sizeof(n) && n > 0;
}

static int check_irq_indexes(struct vgg_ctx *c, int fd)
{
	struct vfio_irq_info info;
	int efd, ret;

	ret = irq_info(fd, VFIO_PCI_ERR_IRQ_INDEX, &info);
	if (ret != -EINVAL)
		return vgg_detail(c, VGG_FAIL, "hostile bar: GET_IRQ_INFO(ERR) gave %d (count %u), want -EINVAL as vfio-pci",
				  ret, info.count);
	ret = irq_info(fd, VFIO_PCI_REQ_IRQ_INDEX, &info);
	if (ret || info.count != 1 || !(info.flags & VFIO_IRQ_INFO_EVENTFD))
		return vgg_detail(c, VGG_FAIL, "hostile bar: GET_IRQ_INFO(REQ) gave %d, count %u, flags 0x%x; want one eventfd interrupt",
				  ret, info.count, info.flags);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return vgg_detail(c, VGG_FAIL, "hostile bar: eventfd: %s", strerror(errno));
	ret = req_set(fd, VFIO_IRQ_SET_DATA_EVENTFD, efd);
	if (!ret)
		ret = req_set(fd, VFIO_IRQ_SET_DATA_BOOL, 0);
	if (ret || !signalled(efd, SIGNAL_MS)) {
		close(efd);
		return vgg_detail(c, VGG_FAIL, "hostile bar: the request eventfd was not signalled by a loopback trigger (%d)", ret);
	}
	ret = req_set(fd, VFIO_IRQ_SET_DATA_EVENTFD, -1);
	if (!ret)
		ret = req_set(fd, VFIO_IRQ_SET_DATA_BOOL, 0);
	if (ret || signalled(efd, QUIET_MS)) {
		close(efd);
		return vgg_detail(c, VGG_FAIL, "hostile bar: the request eventfd stayed installed after fd -1 (%d)", ret);
	}
	close(efd);
	return VGG_OK;
}

int vgg_hostile_bar(struct vgg_ctx *c)
{
	uint32_t vals[VGMEM_MAX_CHANNELS], pages, bad = 0, id, p, got, done;
	struct vgmem_chan *ch = NULL;
	uint64_t off, size, va = 0;
	volatile uint8_t *bar;
	const char *why;
	int fd, ret;
	void *m;

	fd = vgmem_vfio_device_fd(c->dev, &off, &size);
	if (fd < 0)
		return vgg_detail(c, VGG_FAIL, "hostile bar needs --dev (a VFIO device): %d", fd);
	ret = check_irq_indexes(c, fd);
	if (ret != VGG_OK)
		return ret;

	/* A mapping of our own, made before any channel exists. */
	pages = (uint32_t)(size / VGMEM_USERD_SIZE);
	if (pages > VGMEM_MAX_CHANNELS)
		pages = VGMEM_MAX_CHANNELS;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return vgg_detail(c, VGG_FAIL, "hostile bar: mmap of BAR2: %s", strerror(errno));
	bar = m;

	if (read_all(bar, pages, VGMEM_USERD_GP_PUT, vals, &bad)) {
		ret = vgg_detail(c, VGG_FAIL, "hostile bar: reading page %u of BAR2 (no channel) raised signal %d",
				 bad, (int)bar_sig);
		goto out_unmap;
	}
	for (p = 0; p < pages; p++)
		if (vals[p]) {
			ret = vgg_detail(c, VGG_FAIL, "hostile bar: page %u without a channel reads 0x%x, want 0",
					 p, vals[p]);
			goto out_unmap;
		}
	/* Junk into every absent page's GP_PUT and a word no one defines. */
	for (p = 0; p < pages; p++) {
		*(volatile uint32_t *)(bar + (size_t)p * VGMEM_USERD_SIZE + VGMEM_USERD_GP_PUT) = JUNK;
		*(volatile uint32_t *)(bar + (size_t)p * VGMEM_USERD_SIZE + JUNK_OFF) = JUNK;
	}
	/* The trapped path never shows it: no channel is there. */
	if (pread(fd, &got, 4, (off_t)(off + VGMEM_USERD_GP_PUT)) != 4 || got) {
		ret = vgg_detail(c, VGG_FAIL, "hostile bar: pread of an absent page's GP_PUT gave 0x%x, want 0", got);
		goto out_unmap;
	}

	/* A channel: its page, in our old mapping, is its USERD now. */
	ret = vgg_chan(c, &ch);
	if (!ret)
		ret = vgmem_bo_alloc(c->dev, 64 << 10, &va);
	if (!ret)
		ret = vgmem_memset(ch, va, 64 << 10, 0x11);
	if (ret) {
		ret = vgg_detail(c, VGG_FAIL, "hostile bar: a channel after the junk: %d (%s)",
				 ret, strerror(-ret));
		goto out_chan;
	}
	id = vgmem_chan_id(ch);
	done = vgmem_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE);
	if (id >= pages || read_all(bar, pages, VGMEM_USERD_ENTRIES_DONE, vals, &bad) ||
	    vals[id] != done || !done) {
		ret = vgg_detail(c, VGG_FAIL, "hostile bar: channel %u: the old mapping shows ENTRIES_DONE %u, the channel %u",
				 id, id < pages ? vals[id] : 0, done);
		goto out_chan;
	}
	got = *(volatile uint32_t *)(bar + (size_t)id * VGMEM_USERD_SIZE + JUNK_OFF);
	if (got == JUNK) {
		ret = vgg_detail(c, VGG_FAIL, "hostile bar: channel %u's USERD page holds the junk written before it existed", id);
		goto out_chan;
	}
	vgmem_chan_destroy(ch);
	ch = NULL;
	if (read_all(bar, pages, VGMEM_USERD_ENTRIES_DONE, vals, &bad) || vals[id]) {
		ret = vgg_detail(c, VGG_FAIL, "hostile bar: page %u after its channel went: %s 0x%x",
				 id, bar_sig ? "signal" : "reads", vals[id]);
		goto out_unmap;
	}
	if (vgg_sanity(c, &why)) {
		ret = vgg_detail(c, VGG_FAIL, "hostile bar: %s", why);
		goto out_unmap;
	}
	ret = vgg_detail(c, VGG_OK, "hostile bar: %u BAR2 pages read 0 without a channel, junk written there reached none; channel %u appeared in and left an old mapping; ERR index refused, REQ eventfd works; fresh channel ok",
			 pages, id);
	goto out_unmap;
out_chan:
	if (ch)
		vgmem_chan_destroy(ch);
out_unmap:
	munmap(m, size);
	return ret;
}
