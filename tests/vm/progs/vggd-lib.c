// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vggd-check's helpers (vggd.h): thin wrappers of /dev/vgmem0's ioctls and
 * of the USERD page, shared by the driver checks and the file-map checks.
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

int vggd_failures;

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int dev_open(void)
{
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		FAIL("open %s: %s", DEV, strerror(errno));
		exit(1);
	}
	return fd;
}

/* ioctl's result as 0 or -errno. */
int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

void expect(const char *what, int got, int want)
{
	if (got == want)
		PASS("%s: %d", what, got);
	else
		FAIL("%s: got %d (%s), expected %d (%s)", what, got,
		     strerror(-got), want, strerror(-want));
}

int ctrl(int fd, struct vgmem_ctrl *c)
{
	return xioctl(fd, VGMEM_GIOC_CTRL, c);
}

/* Runs a command; -errno of the ioctl, or the device's status. */
int ctrl_status(int fd, struct vgmem_ctrl *c)
{
	int ret = ctrl(fd, c);

	return ret ? ret : c->status;
}


int dma_alloc(int fd, uint64_t size, struct dmabuf *b)
{
	int ret;

	memset(b, 0, sizeof(*b));
	b->d.size = size;
	ret = xioctl(fd, VGMEM_GIOC_DMA_ALLOC, &b->d);
	if (ret)
		return ret;
	b->p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)b->d.mmap_offset);
	if (b->p == MAP_FAILED) {
		b->p = NULL;
		return -errno;
	}
	return 0;
}

int dma_free(int fd, uint32_t handle)
{
	struct vgmem_guest_dma_free f = { .handle = handle };

	return xioctl(fd, VGMEM_GIOC_DMA_FREE, &f);
}

int chan_create(int fd, uint64_t ring_gpa, uint32_t entries, uint32_t *id)
{
	struct vgmem_ctrl c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_CHAN_CREATE;
	c.chan.gpfifo_gpa = ring_gpa;
	c.chan.gpfifo_entries = entries;
	ret = ctrl_status(fd, &c);
	if (!ret)
		*id = c.chan.chan_id;
	return ret;
}

int chan_destroy(int fd, uint32_t id)
{
	struct vgmem_ctrl c;

	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_CHAN_DESTROY;
	c.chan.chan_id = id;
	return ctrl_status(fd, &c);
}

int bo_alloc(int fd, uint64_t size, uint64_t *va)
{
	struct vgmem_ctrl c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_BO_ALLOC;
	c.bo.size = size;
	ret = ctrl_status(fd, &c);
	if (!ret)
		*va = c.bo.va;
	return ret;
}

int bo_free(int fd, uint64_t va)
{
	struct vgmem_ctrl c;

	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_BO_FREE;
	c.bo.va = va;
	return ctrl_status(fd, &c);
}

int stats(int fd, struct vgmem_vm_stats *s)
{
	struct vgmem_ctrl c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_STATS;
	ret = ctrl_status(fd, &c);
	if (!ret)
		*s = c.stats;
	return ret;
}

volatile uint32_t *userd_map(int fd, uint32_t chan)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)VGMEM_GUEST_MMAP_USERD(chan));

	return p == MAP_FAILED ? NULL : p;
}

uint32_t userd_rd(volatile uint32_t *u, uint32_t off)
{
	return u[off / 4];
}


void pb_inc(struct pb *pb, unsigned int subc, uint32_t mthd,
	    const uint32_t *data, uint32_t count)
{
	pb->p[pb->n++] = VGMEM_PKHDR(VGMEM_PKHDR_INC, subc, mthd, count);
	memcpy(pb->p + pb->n, data, count * 4);
	pb->n += count;
}

/* Methods: the compute engine's memset kernel sets len bytes at va to value. */
void pb_memset(struct pb *pb, uint64_t va, uint32_t len, uint32_t value)
{
	uint32_t v[1 + VGMEM_CP_NARGS], cls = VGMEM_CLASS_COMPUTE;

	pb_inc(pb, SUBC_COMPUTE, VGMEM_MTHD_SET_OBJECT, &cls, 1);
	memset(v, 0, sizeof(v));
	v[0] = VGMEM_K_MEMSET;
	v[1] = (uint32_t)va;
	v[2] = (uint32_t)(va >> 32);
	v[3] = len;
	v[5] = value;
	pb_inc(pb, SUBC_COMPUTE, VGMEM_CP_KERNEL, v, 1 + VGMEM_CP_NARGS);
	v[0] = 0;
	pb_inc(pb, SUBC_COMPUTE, VGMEM_CP_LAUNCH, v, 1);
}

/* Methods: the copy engine copies len bytes at GPU VA va to guest memory. */
void pb_copy_out(struct pb *pb, uint64_t va, uint64_t dst_gpa, uint32_t len)
{
	uint32_t v[8], cls = VGMEM_CLASS_COPY, flags;

	pb_inc(pb, SUBC_COPY, VGMEM_MTHD_SET_OBJECT, &cls, 1);
	v[0] = (uint32_t)(va >> 32);
	v[1] = (uint32_t)va;
	v[2] = (uint32_t)(dst_gpa >> 32);
	v[3] = (uint32_t)dst_gpa;
	v[4] = len;
	v[5] = len;
	v[6] = len;
	v[7] = 1;
	pb_inc(pb, SUBC_COPY, VGMEM_CE_OFFSET_IN_UPPER, v, 8);
	flags = VGMEM_CE_LAUNCH_SRC_PITCH | VGMEM_CE_LAUNCH_DST_PITCH |
		VGMEM_CE_LAUNCH_DST_PHYS;
	pb_inc(pb, SUBC_COPY, VGMEM_CE_LAUNCH_DMA, &flags, 1);
}

/* Put one GPFIFO entry at ring[idx] and GP_PUT = idx + 1. */
void submit(uint64_t *ring, volatile uint32_t *u, uint32_t idx,
	    uint64_t pb_gpa, uint32_t ndw)
{
	ring[idx] = VGMEM_GP_ENTRY(pb_gpa, ndw);
	__sync_synchronize();
	u[VGMEM_USERD_GP_PUT / 4] = idx + 1;
	__sync_synchronize();
}

/* Wait until ENTRIES_DONE reaches done or the channel reports an error. */
int wait_done(volatile uint32_t *u, uint32_t done)
{
	double end = now_s() + JOB_TIMEOUT_S;

	while (now_s() < end) {
		if (userd_rd(u, VGMEM_USERD_ERROR))
			return -(int)userd_rd(u, VGMEM_USERD_ERROR);
		if ((int32_t)(userd_rd(u, VGMEM_USERD_ENTRIES_DONE) - done) >= 0)
			return 0;
		usleep(2000);
	}
	return -ETIMEDOUT;
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(sigbus_jmp, 1);
}

/* 1 when reading *p raises SIGBUS, 0 when it reads. */
int reads_sigbus(volatile uint32_t *p)
{
	struct sigaction sa, old;
	volatile uint32_t v = 0;
	int bus = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(sigbus_jmp, 1))
		bus = 1;
	else
		v = *p;
	sigaction(SIGBUS, &old, NULL);
	(void)v;
	return bus;
}

int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}
