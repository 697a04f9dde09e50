/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vggd-check's helpers: /dev/vgmem0's ioctls as 0 or -errno, a DMA buffer
 * with its mmap, a pushbuffer writer and a GPFIFO submit through a mapped
 * USERD page, and the PASS/FAIL report every check prints.
 */
#ifndef VGGD_H
#define VGGD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uapi/vgmem_guest.h>

#define DEV		"/dev/vgmem0"
#define SUBC_COMPUTE	1
#define SUBC_COPY	4
/* L2 runs TCG inside TCG: a GPU job may take seconds. */
#define JOB_TIMEOUT_S	120

/* Every FAIL counts here; a command exits 1 when it is not zero. */
extern int vggd_failures;

#define PASS(...) do { printf("PASS "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)
#define FAIL(...) do { printf("FAIL "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); vggd_failures++; } while (0)

struct dmabuf {
	struct vgmem_guest_dma d;
	uint8_t *p;
};

/* A pushbuffer being written: dwords at p, counted in n. */
struct pb {
	uint32_t *p;
	uint32_t n;
};

double now_s(void);
int dev_open(void);
int xioctl(int fd, unsigned long req, void *arg);
void expect(const char *what, int got, int want);
int ctrl(int fd, struct vgmem_ctrl *c);
int ctrl_status(int fd, struct vgmem_ctrl *c);
int dma_alloc(int fd, uint64_t size, struct dmabuf *b);
int dma_free(int fd, uint32_t handle);
int chan_create(int fd, uint64_t ring_gpa, uint32_t entries, uint32_t *id);
int chan_destroy(int fd, uint32_t id);
int bo_alloc(int fd, uint64_t size, uint64_t *va);
int bo_free(int fd, uint64_t va);
int stats(int fd, struct vgmem_vm_stats *s);
volatile uint32_t *userd_map(int fd, uint32_t chan);
uint32_t userd_rd(volatile uint32_t *u, uint32_t off);
void pb_inc(struct pb *pb, unsigned int subc, uint32_t mthd,
	    const uint32_t *data, uint32_t count);
void submit(uint64_t *ring, volatile uint32_t *u, uint32_t idx,
	    uint64_t pb_gpa, uint32_t ndw);
void pb_memset(struct pb *pb, uint64_t va, uint32_t len, uint32_t value);
void pb_copy_out(struct pb *pb, uint64_t va, uint64_t dst_gpa, uint32_t len);
int wait_done(volatile uint32_t *u, uint32_t done);
int reads_sigbus(volatile uint32_t *p);
int sysfs_write(const char *path, const char *val);

int cmd_files(const char *mnt, const char *tag, uint32_t seed);

#endif /* VGGD_H */
