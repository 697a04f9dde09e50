// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vggd-check: checks the guest kernel driver (vgmem_guest.ko) from inside
 * the nested guest (L2), through /dev/vgmem0 and nothing else. Static, no
 * libraries: the interface is include/uapi/vgmem_guest.h.
 *
 *   vggd-check basic IRQ   QUERY (the interrupt in use must be IRQ: msi,
 *                          intx or none), malformed calls refused with the
 *                          documented errno, DMA buffers and their mmap, a
 *                          SHARES paged through the driver, a
 *                          channel with its ring in a DMA buffer running a
 *                          memset and a copy to guest memory (completion
 *                          read from the mmapped USERD page), a channel
 *                          fault seen by WAIT_FAULT and poll, USERD pages
 *                          gone after CHAN_DESTROY
 *   vggd-check kill        a child holding a channel, a BO and DMA buffers
 *                          is SIGKILLed: a fresh open sees STATS allocated
 *                          0 and the child's channel id free again; then
 *                          children creating and destroying channels and
 *                          BOs in a loop are killed at varied moments, with
 *                          the same check after each
 *   vggd-check files MOUNT TAG SEED
 *                          with MOUNT (a virtio-fs mount) bound to TAG:
 *                          SHARE_BIND and MAP_FD refuse what they must
 *                          (rebind, other filesystems, a subdirectory,
 *                          non-root, a file elsewhere, a directory, a
 *                          read-only fd mapped RW, unlinked files); file
 *                          ranges only on the file's own maps; FILE_MAP
 *                          through CTRL refused; umount of the bound mount
 *                          busy; with a file kept open and mmapped, the
 *                          GPU reads what the CPU left dirty (ACQUIRE
 *                          writes it back) and the CPU's mapping shows
 *                          what the GPU wrote after RELEASE and SYNC; then
 *                          MOUNT/cpu.bin gets pattern SEED through mmap
 *   vggd-check unbind BDF  unbinds the driver from PCI function BDF while a
 *                          file holds a mapped channel: calls fail -ENODEV,
 *                          the USERD page is gone (SIGBUS), close is clean,
 *                          a rebind brings /dev/vgmem0 back with nothing
 *                          left on the device
 *   vggd-check remove BDF  the same with the device removed from the PCI
 *                          bus (sysfs remove: what a hot unplug does to the
 *                          driver) and found again by a bus rescan
 *
 * Prints "PASS what" / "FAIL what: why" lines; exits 1 if anything failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vggd.h"

static void check_query(int fd, const char *irq)
{
	static const char * const names[] = { "none", "msi", "intx" };
	struct vgmem_guest_query q;
	int ret;

	memset(&q, 0xa5, sizeof(q));
	ret = xioctl(fd, VGMEM_GIOC_QUERY, &q);
	if (ret) {
		FAIL("QUERY: %s", strerror(-ret));
		return;
	}
	printf("INFO QUERY driver %u abi %u channels %u irq %u dma_max %llu dma_total_max %llu quota %llu chunk %llu va 0x%llx-0x%llx\n",
	       q.driver_version, q.abi_version, q.max_channels, q.irq,
	       (unsigned long long)q.dma_max, (unsigned long long)q.dma_total_max,
	       (unsigned long long)q.device.quota, (unsigned long long)q.device.chunk_size,
	       (unsigned long long)q.device.va_start, (unsigned long long)q.device.va_end);
	if (q.driver_version == VGMEM_GUEST_DRIVER_VERSION && q.abi_version == VGMEM_ABI_VERSION &&
	    q.max_channels == VGMEM_MAX_CHANNELS && q.device.abi_version == VGMEM_ABI_VERSION &&
	    q.device.va_start == VGMEM_VA_START && q.device.va_end == VGMEM_VA_END &&
	    !q.rsvd[0] && !q.rsvd[3] && q.dma_max && q.dma_total_max >= q.dma_max)
		PASS("QUERY");
	else
		FAIL("QUERY: unexpected values");
	if (q.irq < 3 && !strcmp(names[q.irq], irq))
		PASS("interrupt in use: %s", irq);
	else
		FAIL("interrupt in use: %u, expected %s", q.irq, irq);
}

static void check_malformed(int fd)
{
	struct vgmem_guest_query q;
	struct vgmem_guest_dma d;
	struct vgmem_guest_dma_free f;
	struct vgmem_ctrl c;
	struct dmabuf b;
	uint64_t dma_max;
	void *p;
	int ret;

	xioctl(fd, VGMEM_GIOC_QUERY, &q);
	dma_max = q.dma_max;

	memset(&c, 0, sizeof(c));
	expect("CTRL op 0", ctrl(fd, &c), -EINVAL);
	c.op = VGMEM_CTRL_OP_MAX + 5;
	expect("CTRL unknown op", ctrl(fd, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	c.raw[sizeof(struct vgmem_ctrl_query)] = 1;
	expect("CTRL QUERY with a byte past its struct", ctrl(fd, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_FILE_MAP;
	expect("CTRL FILE_MAP (maps come from MAP_FD)", ctrl(fd, &c), -EPERM);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_FILE_SYNC;
	c.file.va = VGMEM_VA_START;
	expect("CTRL FILE_SYNC of no map of this file", ctrl(fd, &c), -EBADF);
	c.file.rsvd = 1;
	expect("CTRL FILE_SYNC rsvd", ctrl(fd, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_BO_ALLOC;
	c.bo.size = 2 << 20;
	c.bo.rsvd = 1;
	expect("CTRL BO_ALLOC rsvd", ctrl(fd, &c), -EINVAL);
	c.bo.rsvd = 0;
	c.bo.va = VGMEM_VA_START;
	expect("CTRL BO_ALLOC va without FIXED_VA", ctrl(fd, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_BO_FREE;
	c.bo.va = VGMEM_VA_START;
	expect("CTRL BO_FREE of a VA not this file's", ctrl(fd, &c), -ENOENT);
	c.bo.size = 4096;
	expect("CTRL BO_FREE with size", ctrl(fd, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_CHAN_DESTROY;
	c.chan.chan_id = 5;
	expect("CTRL CHAN_DESTROY of a channel not this file's", ctrl(fd, &c), -ENOENT);
	c.chan.chan_id = 1000;
	expect("CTRL CHAN_DESTROY id 1000", ctrl(fd, &c), -ENOENT);
	c.chan.gpfifo_entries = 4;
	expect("CTRL CHAN_DESTROY with entries", ctrl(fd, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_CHAN_CREATE;
	c.chan.gpfifo_gpa = 0x100000;
	c.chan.gpfifo_entries = 16;
	expect("CTRL CHAN_CREATE ring outside this file's DMA buffers", ctrl(fd, &c), -EINVAL);
	expect("CTRL bad pointer", xioctl(fd, VGMEM_GIOC_CTRL, (void *)16), -EFAULT);
	expect("unknown ioctl", xioctl(fd, _IO(VGMEM_GIOC_TYPE, 0x7f), &c), -ENOTTY);

	memset(&d, 0, sizeof(d));
	expect("DMA_ALLOC size 0", xioctl(fd, VGMEM_GIOC_DMA_ALLOC, &d), -EINVAL);
	d.size = 100;
	expect("DMA_ALLOC size 100", xioctl(fd, VGMEM_GIOC_DMA_ALLOC, &d), -EINVAL);
	d.size = dma_max + 4096;
	expect("DMA_ALLOC above dma_max", xioctl(fd, VGMEM_GIOC_DMA_ALLOC, &d), -EINVAL);
	d.size = ~0ull & ~4095ull;
	expect("DMA_ALLOC size 2^64-4096", xioctl(fd, VGMEM_GIOC_DMA_ALLOC, &d), -EINVAL);
	d.size = 4096;
	d.flags = 1;
	expect("DMA_ALLOC flags", xioctl(fd, VGMEM_GIOC_DMA_ALLOC, &d), -EINVAL);
	memset(&f, 0, sizeof(f));
	f.handle = 12345;
	expect("DMA_FREE unknown handle", xioctl(fd, VGMEM_GIOC_DMA_FREE, &f), -EBADF);
	f.handle = 0;
	expect("DMA_FREE handle 0", xioctl(fd, VGMEM_GIOC_DMA_FREE, &f), -EBADF);
	f.rsvd = 1;
	expect("DMA_FREE rsvd", xioctl(fd, VGMEM_GIOC_DMA_FREE, &f), -EINVAL);

	/* mmap: shared, whole, at the right offset, only this file's. */
	ret = dma_alloc(fd, 8192, &b);
	expect("DMA_ALLOC 8 KiB and mmap", ret, 0);
	if (ret)
		return;
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)b.d.mmap_offset);
	expect("mmap DMA MAP_PRIVATE", p == MAP_FAILED ? -errno : 0, -EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)b.d.mmap_offset);
	expect("mmap DMA half", p == MAP_FAILED ? -errno : 0, -EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)(b.d.mmap_offset + 4096));
	expect("mmap DMA at an inner offset", p == MAP_FAILED ? -errno : 0, -EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)VGMEM_GUEST_MMAP_USERD(3));
	expect("mmap USERD of a channel not this file's", p == MAP_FAILED ? -errno : 0, -ENOENT);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)VGMEM_GUEST_MMAP_USERD(64));
	expect("mmap USERD page 64", p == MAP_FAILED ? -errno : 0, -EINVAL);
	if (b.p[0] || b.p[8191])
		FAIL("DMA buffer not zeroed");
	else
		PASS("DMA buffer zeroed");
	memset(b.p, 0x5a, 8192);
	/* Freed while mapped: the handle goes, the mapping stays usable. */
	expect("DMA_FREE while mapped", dma_free(fd, b.d.handle), 0);
	expect("DMA_FREE twice", dma_free(fd, b.d.handle), -EBADF);
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, (off_t)b.d.mmap_offset);
	expect("mmap of a freed handle", p == MAP_FAILED ? -errno : 0, -EBADF);
	if (b.p[8191] == 0x5a)
		PASS("freed buffer still readable through its mapping");
	else
		FAIL("freed buffer's mapping changed");
	munmap(b.p, 8192);
}

/* dma_total_max: buffers of dma_max up to the limit, then -ENOMEM. */
static void check_dma_total(int fd)
{
	struct vgmem_guest_query q;
	struct vgmem_guest_dma d[64];
	unsigned int n = 0, i;
	int ret = 0;

	xioctl(fd, VGMEM_GIOC_QUERY, &q);
	for (n = 0; n < 64; n++) {
		memset(&d[n], 0, sizeof(d[n]));
		d[n].size = q.dma_max;
		ret = xioctl(fd, VGMEM_GIOC_DMA_ALLOC, &d[n]);
		if (ret)
			break;
	}
	if (ret == -ENOMEM && (uint64_t)n * q.dma_max <= q.dma_total_max &&
	    (uint64_t)(n + 1) * q.dma_max > q.dma_total_max)
		PASS("dma_total_max: %u buffers of %llu bytes, then -ENOMEM", n,
		     (unsigned long long)q.dma_max);
	else if (ret == -ENOMEM)
		printf("INFO dma_total_max: -ENOMEM after %u buffers of %llu (guest memory short of the limit)\n",
		       n, (unsigned long long)q.dma_max);
	else
		FAIL("dma_total_max: %u buffers, then %d", n, ret);
	for (i = 0; i < n; i++)
		dma_free(fd, d[i].handle);
}

/*
 * Build the pushbuffer at pb: bind compute and copy, memset the BO to
 * value, copy its first len bytes to guest-physical dst.
 */
static uint32_t build_job(uint32_t *pbp, uint64_t bo_va, uint64_t dst_gpa,
			  uint32_t len, uint32_t value)
{
	struct pb pb = { .p = pbp, .n = 0 };

	pb_memset(&pb, bo_va, len, value);
	pb_copy_out(&pb, bo_va, dst_gpa, len);
	return pb.n;
}

static void check_submit(int fd)
{
	struct dmabuf b;
	struct pollfd pfd;
	struct vgmem_guest_wait w;
	volatile uint32_t *u, *u2;
	uint64_t *ring, bo_va = 0, pb_gpa, dst_gpa;
	uint32_t chan = 0, chan2 = 0, ndw, i, bad = 0;
	double t0;
	int ret;

	/* One buffer: ring at 0, pushbuffer at 4 KiB, destination at 8 KiB. */
	ret = dma_alloc(fd, 16384, &b);
	expect("DMA_ALLOC 16 KiB for ring, pushbuffer and destination", ret, 0);
	if (ret)
		return;
	ring = (uint64_t *)b.p;
	pb_gpa = b.d.gpa + 4096;
	dst_gpa = b.d.gpa + 8192;

	expect("CHAN_CREATE ring crossing the buffer's end",
	       chan_create(fd, b.d.gpa + 16384 - 64, 16, &chan), -EINVAL);
	expect("CHAN_CREATE 3 entries", chan_create(fd, b.d.gpa, 3, &chan), -EINVAL);
	ret = chan_create(fd, b.d.gpa, 16, &chan);
	expect("CHAN_CREATE ring in a DMA buffer", ret, 0);
	if (ret)
		return;
	expect("DMA_FREE of a live channel's ring buffer", dma_free(fd, b.d.handle), -EBUSY);
	ret = bo_alloc(fd, 2 << 20, &bo_va);
	expect("BO_ALLOC 2 MiB", ret, 0);
	if (ret)
		return;
	u = userd_map(fd, chan);
	if (!u) {
		FAIL("mmap USERD of channel %u: %s", chan, strerror(errno));
		return;
	}
	PASS("mmap USERD of channel %u", chan);

	ndw = build_job((uint32_t *)(b.p + 4096), bo_va, dst_gpa, 4096, 0xc0ffee11u);
	t0 = now_s();
	submit(ring, u, 0, pb_gpa, ndw);
	ret = wait_done(u, 1);
	expect("GPFIFO entry: memset + copy to guest memory, ENTRIES_DONE in USERD", ret, 0);
	printf("INFO job took %.2f s; GP_GET %u ENTRIES_DONE %u\n", now_s() - t0,
	       userd_rd(u, VGMEM_USERD_GP_GET), userd_rd(u, VGMEM_USERD_ENTRIES_DONE));
	for (i = 0; i < 1024; i++)
		if (((uint32_t *)(b.p + 8192))[i] != 0xc0ffee11u)
			bad++;
	if (!ret && !bad)
		PASS("the copy's 4096 bytes arrived in the DMA buffer");
	else
		FAIL("%u of 1024 words wrong in the DMA buffer", bad);

	/* A second channel faults on a zero-length entry. */
	expect("WAIT_FAULT with no fault, timeout 0",
	       xioctl(fd, VGMEM_GIOC_WAIT_FAULT, &(struct vgmem_guest_wait){ 0 }), -ETIMEDOUT);
	ret = chan_create(fd, b.d.gpa + 2048, 16, &chan2);
	expect("CHAN_CREATE second channel", ret, 0);
	if (ret)
		return;
	u2 = userd_map(fd, chan2);
	if (!u2) {
		FAIL("mmap USERD of channel %u: %s", chan2, strerror(errno));
		return;
	}
	submit((uint64_t *)(b.p + 2048), u2, 0, pb_gpa, 0);
	memset(&w, 0, sizeof(w));
	w.timeout_ns = (uint64_t)JOB_TIMEOUT_S * 1000000000ull;
	ret = xioctl(fd, VGMEM_GIOC_WAIT_FAULT, &w);
	if (!ret && w.faulted == (1ull << chan2))
		PASS("WAIT_FAULT: channel %u faulted (USERD ERROR %u)", chan2,
		     userd_rd(u2, VGMEM_USERD_ERROR));
	else
		FAIL("WAIT_FAULT: %d faulted 0x%llx, expected channel %u", ret,
		     (unsigned long long)w.faulted, chan2);
	pfd.fd = fd;
	pfd.events = POLLPRI;
	pfd.revents = 0;
	ret = poll(&pfd, 1, 0);
	if (ret == 1 && (pfd.revents & POLLPRI))
		PASS("poll: POLLPRI");
	else
		FAIL("poll: %d revents 0x%x", ret, pfd.revents);

	/* Destroyed: the page leaves the mapping, the fault bit goes. */
	expect("CHAN_DESTROY faulted channel", chan_destroy(fd, chan2), 0);
	if (reads_sigbus(u2))
		PASS("USERD page of a destroyed channel: SIGBUS");
	else
		FAIL("USERD page of a destroyed channel still readable");
	munmap((void *)u2, 4096);
	expect("WAIT_FAULT after the faulted channel is gone",
	       xioctl(fd, VGMEM_GIOC_WAIT_FAULT, &(struct vgmem_guest_wait){ 0 }), -ETIMEDOUT);
	expect("CHAN_DESTROY twice", chan_destroy(fd, chan2), -ENOENT);

	expect("BO_FREE", bo_free(fd, bo_va), 0);
	expect("CHAN_DESTROY", chan_destroy(fd, chan), 0);
	munmap((void *)u, 4096);
	expect("DMA_FREE after its channels died", dma_free(fd, b.d.handle), 0);
	munmap(b.p, 16384);
}

/*
 * SHARES passes through the driver, paged: every page agrees on the total,
 * the pages together list each share once by id ascending, the page at
 * total is empty and one past it refused by the device.
 */
static void check_shares(int fd)
{
	struct vgmem_ctrl c;
	uint32_t total = 0, seen = 0, last = 0, idx;
	int ret;

	for (idx = 0;; idx += VGMEM_CTRL_SHARES_PER_CMD) {
		memset(&c, 0, sizeof(c));
		c.op = VGMEM_CTRL_SHARES;
		c.shares.index = idx;
		ret = ctrl_status(fd, &c);
		if (ret) {
			FAIL("SHARES from %u: %s", idx, strerror(-ret));
			return;
		}
		if (!idx)
			total = c.shares.total;
		if (c.shares.total != total ||
		    c.shares.count > VGMEM_CTRL_SHARES_PER_CMD ||
		    c.shares.count != (total - idx < VGMEM_CTRL_SHARES_PER_CMD ?
				       total - idx : VGMEM_CTRL_SHARES_PER_CMD)) {
			FAIL("SHARES from %u: total %u count %u (first page said total %u)",
			     idx, c.shares.total, c.shares.count, total);
			return;
		}
		for (uint32_t i = 0; i < c.shares.count; i++, seen++) {
			if (seen && c.shares.e[i].share_id <= last) {
				FAIL("SHARES: id %u after %u", c.shares.e[i].share_id, last);
				return;
			}
			last = c.shares.e[i].share_id;
			printf("INFO share id=%u flags=%u tag=%.*s\n", last,
			       c.shares.e[i].flags, VGMEM_SHARE_TAG_SIZE, c.shares.e[i].tag);
		}
		if (idx + c.shares.count >= total)
			break;
	}
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_SHARES;
	c.shares.index = total;
	ret = ctrl_status(fd, &c);
	if (ret || c.shares.count || c.shares.total != total)
		FAIL("SHARES at index total (%u): %d, count %u", total, ret, c.shares.count);
	if (seen == total)
		PASS("SHARES: %u shares over %u page(s)", total,
		     (total + VGMEM_CTRL_SHARES_PER_CMD - 1) / VGMEM_CTRL_SHARES_PER_CMD);
	else
		FAIL("SHARES: %u entries listed, total %u", seen, total);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_SHARES;
	c.shares.index = total + 1;
	expect("SHARES past the end", ctrl_status(fd, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_SHARES;
	c.raw[sizeof(c.shares)] = 1;
	expect("SHARES with a byte past its struct", ctrl(fd, &c), -EINVAL);
}

static int cmd_basic(const char *irq)
{
	int fd = dev_open();

	check_query(fd, irq);
	check_malformed(fd);
	check_shares(fd);
	check_dma_total(fd);
	check_submit(fd);
	close(fd);
	return vggd_failures ? 1 : 0;
}

/* The child: a channel, a BO, mapped DMA; tells its channel id, waits. */
static void hold(int wfd)
{
	struct dmabuf b;
	uint64_t va;
	uint32_t chan = 0;
	int fd = dev_open();

	if (dma_alloc(fd, 65536, &b) || chan_create(fd, b.d.gpa, 64, &chan) ||
	    bo_alloc(fd, 4 << 20, &va) || !userd_map(fd, chan))
		_exit(2);
	if (write(wfd, &chan, sizeof(chan)) != sizeof(chan))
		_exit(3);
	for (;;)
		pause();
}

static int cmd_kill(void)
{
	struct vgmem_vm_stats s;
	struct dmabuf b = { .p = NULL };
	uint32_t chan = 99, again = 98;
	int pfd[2], fd, st, ret;
	pid_t pid;

	if (pipe(pfd))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		hold(pfd[1]);
	}
	close(pfd[1]);
	if (read(pfd[0], &chan, sizeof(chan)) != sizeof(chan)) {
		FAIL("the child did not get its channel, BO and buffer");
		return 1;
	}
	fd = dev_open();
	ret = stats(fd, &s);
	if (!ret && s.allocated >= (4 << 20))
		PASS("while the child lives: STATS allocated %llu", (unsigned long long)s.allocated);
	else
		FAIL("while the child lives: STATS %d allocated %llu", ret,
		     (unsigned long long)s.allocated);
	close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		PASS("child holding channel %u killed", chan);
	else
		FAIL("child ended with status 0x%x", st);

	fd = dev_open();
	ret = stats(fd, &s);
	if (!ret && s.allocated == 0)
		PASS("after the kill, a fresh open sees STATS allocated 0");
	else
		FAIL("after the kill: STATS %d allocated %llu", ret,
		     (unsigned long long)s.allocated);
	/* Channel ids are the lowest free: the child's must be free again. */
	if (!dma_alloc(fd, 4096, &b) && !chan_create(fd, b.d.gpa, 16, &again) &&
	    again == chan)
		PASS("the killed child's channel id %u is free again", chan);
	else
		FAIL("new channel got id %u, the killed child had %u", again, chan);
	/* A mapping keeps the file, and so its channel, alive: unmap first. */
	if (b.p)
		munmap(b.p, 4096);
	close(fd);
	return vggd_failures ? 1 : 0;
}

/* The child: creates and destroys channels and BOs until it is killed. */
static void churn(int wfd)
{
	struct dmabuf b;
	uint64_t va;
	uint32_t chan;
	int fd = dev_open();

	if (dma_alloc(fd, 4096, &b))
		_exit(2);
	if (write(wfd, "r", 1) != 1)
		_exit(3);
	for (;;) {
		if (!chan_create(fd, b.d.gpa, 16, &chan)) {
			if (!bo_alloc(fd, 2 << 20, &va))
				bo_free(fd, va);
			chan_destroy(fd, chan);
		}
	}
}

/*
 * Kills land in the middle of control commands: whatever the device did
 * for the killed process is undone when its file closes.
 */
static int cmd_kill_churn(void)
{
	struct vgmem_vm_stats s;
	struct dmabuf b;
	uint32_t chan;
	int round, pfd[2], fd, st, ret;
	char c;
	pid_t pid;

	for (round = 0; round < 6; round++) {
		if (pipe(pfd))
			return 1;
		pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			churn(pfd[1]);
		}
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1) {
			FAIL("churn child %d did not start", round);
			return 1;
		}
		close(pfd[0]);
		usleep(50000 + round * 150000);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		fd = dev_open();
		ret = stats(fd, &s);
		chan = 99;
		b.p = NULL;
		if (ret || s.allocated || dma_alloc(fd, 4096, &b) ||
		    chan_create(fd, b.d.gpa, 16, &chan) || chan != 0)
			FAIL("churn round %d: STATS %d allocated %llu, new channel id %u (expected 0)",
			     round, ret, (unsigned long long)s.allocated, chan);
		if (b.p)
			munmap(b.p, 4096);
		close(fd);
	}
	if (!vggd_failures)
		PASS("6 processes killed amid control commands left nothing on the device");
	return vggd_failures ? 1 : 0;
}

/*
 * unbind (the driver lets go of a device that stays) or remove (the device
 * leaves the bus, as in a hot unplug, and comes back by a rescan) while a
 * file holds a mapped channel, a BO and a DMA buffer.
 */
static int cmd_unbind(const char *bdf, bool remove)
{
	const char *how = remove ? "remove" : "unbind";
	char path[256];
	struct vgmem_guest_query q;
	struct vgmem_vm_stats s;
	struct dmabuf b;
	volatile uint32_t *u;
	uint64_t va;
	uint32_t chan;
	int fd, ret, i;

	fd = dev_open();
	if (dma_alloc(fd, 65536, &b) || chan_create(fd, b.d.gpa, 64, &chan) ||
	    bo_alloc(fd, 2 << 20, &va) || !(u = userd_map(fd, chan))) {
		FAIL("setting up a channel, a BO and a buffer");
		return 1;
	}
	(void)userd_rd(u, VGMEM_USERD_GP_GET);
	if (remove) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", bdf);
		ret = sysfs_write(path, "1");
		expect("remove from the bus with a file open and a channel mapped", ret, 0);
	} else {
		ret = sysfs_write("/sys/bus/pci/drivers/" VGMEM_GUEST_CLASS "/unbind", bdf);
		expect("unbind with a file open and a channel mapped", ret, 0);
	}
	if (access(DEV, F_OK))
		PASS("%s is gone", DEV);
	else
		FAIL("%s still there after %s", DEV, how);
	expect("QUERY after the device went", xioctl(fd, VGMEM_GIOC_QUERY, &q), -ENODEV);
	expect("CTRL after the device went", stats(fd, &s), -ENODEV);
	if (reads_sigbus(u))
		PASS("USERD mapping after %s: SIGBUS", how);
	else
		FAIL("USERD mapping still readable after %s", how);
	b.p[0] = 1;	/* still this process's memory until unmapped */
	munmap(b.p, 65536);
	munmap((void *)u, 4096);
	close(fd);
	PASS("close after %s", how);

	if (remove)
		ret = sysfs_write("/sys/bus/pci/rescan", "1");
	else
		ret = sysfs_write("/sys/bus/pci/drivers/" VGMEM_GUEST_CLASS "/bind", bdf);
	expect(remove ? "bus rescan" : "bind again", ret, 0);
	/* Probe runs at L2's pace: generous. */
	for (i = 0; i < 1200 && access(DEV, F_OK); i++)
		usleep(100000);
	fd = dev_open();
	ret = stats(fd, &s);
	if (!ret && s.allocated == 0)
		PASS("after %s: STATS allocated 0 (the file's BO went with the device)",
		     remove ? "rescan" : "rebind");
	else
		FAIL("after %s: STATS %d allocated %llu", remove ? "rescan" : "rebind", ret,
		     (unsigned long long)s.allocated);
	close(fd);
	return vggd_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "basic"))
		return cmd_basic(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "kill"))
		return cmd_kill() | cmd_kill_churn();
	if (argc == 3 && !strcmp(argv[1], "unbind"))
		return cmd_unbind(argv[2], false);
	if (argc == 3 && !strcmp(argv[1], "remove"))
		return cmd_unbind(argv[2], true);
	if (argc == 5 && !strcmp(argv[1], "files"))
		return cmd_files(argv[2], argv[3], (uint32_t)strtoul(argv[4], NULL, 0));
	fprintf(stderr, "usage: vggd-check basic msi|intx|none | kill | unbind BDF | remove BDF | files MOUNT TAG SEED\n");
	return 2;
}
