/* SPDX-License-Identifier: MIT */
/*
 * The VFIO transport's parts that need no device, shared by vfio.c and the
 * unit tests: the allocator of guest-physical ranges (vfio_ram.c, over
 * lib/util/range_alloc.h) and the control-queue protocol over BAR0
 * registers (vfio_ctrlq.c). Both are plain code over function pointers so
 * that a test can drive them with a fake device.
 */
#ifndef LIBVGMEM_VFIO_PRIV_H
#define LIBVGMEM_VFIO_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <libvgmem.h>
#include "lib/util/range_alloc.h"

#define VGMEM_VFIO_PAGE		4096ull

/* ---- guest-physical allocator (vfio_ram.c) ---------------------------- */

struct vgmem_gpa_heap {
	pthread_mutex_t lock;		/* protects ra */
	struct vg_range_alloc ra;	/* page aligned, base never 0 */
};

/* Manage [base, base + size); both page aligned, base != 0. */
int vgmem_gpa_heap_init(struct vgmem_gpa_heap *h, uint64_t base, uint64_t size);
void vgmem_gpa_heap_fini(struct vgmem_gpa_heap *h);
/* First fit of size rounded up to pages; -EINVAL for 0, -ENOMEM if no room. */
int vgmem_gpa_heap_alloc(struct vgmem_gpa_heap *h, uint64_t size, uint64_t *gpa);
/*
 * Give [gpa, gpa + size rounded up) back. -EINVAL (and nothing changes) if
 * it is unaligned, outside the heap or overlaps free space (a double free).
 */
int vgmem_gpa_heap_free(struct vgmem_gpa_heap *h, uint64_t gpa, uint64_t size);
uint64_t vgmem_gpa_heap_free_bytes(struct vgmem_gpa_heap *h);

/* ---- control queue (vfio_ctrlq.c) -------------------------------------- */

/*
 * BAR0 access and interrupt wait of one device. rd and wr return 0 or a
 * negative errno. wait (may be NULL: poll with sleeps instead) blocks until
 * the device interrupts or max_ns pass, acknowledges the interrupt, and
 * returns 0 or a negative errno; a timeout is not an error.
 */
struct vgmem_regs {
	int (*rd)(void *priv, uint32_t reg, uint32_t *val);
	int (*wr)(void *priv, uint32_t reg, uint32_t val);
	int (*wait)(void *priv, uint64_t max_ns);
	void *priv;
};

struct vgmem_ctrlq_drv {
	struct vgmem_regs regs;
	struct vgmem_ctrl *ring;	/* CPU view of the slots in guest memory */
	uint64_t ring_gpa;
	uint32_t entries;		/* power of two, 1 ... VGMEM_CTRLQ_ENTRIES_MAX */
	uint64_t timeout_ns;		/* UINT64_MAX: none (the default) */
	pthread_mutex_t lock;		/* one submitter at a time; protects prod */
	uint32_t prod;			/* free-running index of the next slot */
};

/*
 * Program the queue's registers (base, entries) and start at CONSUMER.
 * timeout_ns 0: commands are waited for as long as they run (a slow host is
 * not an error a tenant should see; the queue's own error or a register
 * error still ends the wait); tests pass a deadline.
 */
int vgmem_ctrlq_drv_init(struct vgmem_ctrlq_drv *q, const struct vgmem_regs *regs,
		     struct vgmem_ctrl *ring, uint64_t ring_gpa, uint32_t entries,
		     uint64_t timeout_ns);
void vgmem_ctrlq_drv_fini(struct vgmem_ctrlq_drv *q);
/*
 * Run n commands in order, as many per doorbell as the ring holds, and copy
 * each slot (status and outputs) back into cmds. Returns 0 when every
 * command ran (each cmds[i].status says how it went), -ETIMEDOUT if the
 * device did not complete them within the queue's deadline (if it has one), the queue's own error (CTRLQ_ERROR,
 * after which the queue is re-armed) or a register access error.
 */
int vgmem_ctrlq_drv_run(struct vgmem_ctrlq_drv *q, struct vgmem_ctrl *cmds, uint32_t n);

enum vgmem_ctrlq_drv_abuse {
	VGMEM_CTRLQ_BASE_AT,		/* point the ring at arg and ring once */
	VGMEM_CTRLQ_PRODUCER_AHEAD,	/* write PRODUCER arg slots ahead */
};

/*
 * Abuse the queue the way a hostile guest would, wait until the device
 * reacts (CTRLQ_ERROR or CONSUMER reaching the doorbell, at most the
 * queue's timeout), record STATUS and CTRLQ_ERROR, then re-arm the queue at
 * its real ring. Returns 0 if the queue works again afterwards.
 */
int vgmem_ctrlq_drv_abuse(struct vgmem_ctrlq_drv *q, enum vgmem_ctrlq_drv_abuse how,
		      uint64_t arg, uint32_t *status, int32_t *qerr);

/* The calling thread's message for its last failure (vgmem_vfio_error). */
void vgmem_vfio_set_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* LIBVGMEM_VFIO_PRIV_H */
