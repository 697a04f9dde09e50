/* SPDX-License-Identifier: MIT */
/*
 * libvgmem's own structures, shared by its .c files only.
 *
 * Pushbuffer ring: positions are free-running dword counters (u64), the
 * physical dword is pos % pb_dw. [tail, head) is submitted and not yet
 * completed, [head, cur) is the open segment. A segment is one GPFIFO entry
 * and must be physically contiguous, so when it would cross the end of the
 * buffer it is moved to the start (the skipped dwords count as used until
 * the entries before them complete).
 *
 * Sequence numbers: entry n (0-based, counting every entry ever submitted)
 * has sequence n + 1. It lives in GPFIFO slot n % entries. GP_GET names the
 * next entry the GPU will take, so with at most entries - 1 outstanding the
 * completed count is submitted - ((put - GP_GET) mod entries).
 */
#ifndef LIBVGMEM_PRIV_H
#define LIBVGMEM_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <libvgmem.h>

/*
 * Fences before publishing to (release) and after reading from (acquire)
 * the device. ThreadSanitizer does not model stand-alone fences (GCC refuses
 * them under -fsanitize=thread): there, a read-modify-write or an acquire
 * load of one library-wide word stands in, which TSan does see, and which
 * orders at least as much (host-module/os/os_user.h does the same for
 * smp_wmb()/smp_rmb()).
 */
#ifndef __SANITIZE_THREAD__
#define vgmem_fence_release()	__atomic_thread_fence(__ATOMIC_RELEASE)
#define vgmem_fence_acquire()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
#else
extern unsigned long vgmem_fence_word;
#define vgmem_fence_release() \
	((void)__atomic_fetch_add(&vgmem_fence_word, 0, __ATOMIC_RELEASE))
#define vgmem_fence_acquire() \
	((void)__atomic_load_n(&vgmem_fence_word, __ATOMIC_ACQUIRE))
#endif

/*
 * The waits libvgmem does on its own (ring space, pushbuffer space,
 * vgmem_finish and the convenience operations) have no deadline: they end
 * when the work is done or the channel has faulted (-EIO). A slow host (a
 * busy GPU, a relocation, a CPU-starved engine) makes them slower, never
 * an error; only the caller of vgmem_wait() chooses a timeout.
 */
#define VGMEM_WAIT_FOREVER	0ull

#define VGMEM_PB_DEFAULT	(64u << 10)
#define VGMEM_STAGING_DEFAULT	(1u << 20)
#define VGMEM_SEG_MAX_DW	((1u << 21) - 1)

struct vgmem_dev {
	const struct vgmem_transport_ops *ops;
	void *t;
	struct vgmem_ctrl_query q;
	pthread_mutex_t lock;		/* protects chans */
	struct vgmem_chan *chans;	/* singly linked through next */
};

struct vgmem_chan {
	struct vgmem_dev *dev;
	struct vgmem_chan *next;
	uint32_t id;
	uint32_t entries;		/* power of two */

	uint64_t *gpfifo;		/* CPU view of the ring in guest memory */
	uint64_t gpfifo_gpa;
	size_t gpfifo_bytes;

	uint32_t *pb;
	uint64_t pb_gpa;
	size_t pb_bytes;
	uint64_t pb_dw;			/* dwords in pb */
	uint64_t pb_tail, pb_head, pb_cur;
	int pb_err;			/* open segment could not grow: submit fails with it */
	uint64_t *seg_start;		/* per GPFIFO slot: pb position of its segment */

	void *staging;
	uint64_t staging_gpa;
	size_t staging_bytes;

	uint64_t submitted;		/* entries submitted == last sequence */
	uint64_t done;			/* entries known complete */
	uint32_t error;			/* sticky copy of USERD ERROR */
};

int vgmem_ctrl_op(struct vgmem_dev *dev, struct vgmem_ctrl *cmd);
/* Re-read GP_GET and ERROR; returns -EIO once the channel has failed. */
int vgmem_chan_poll(struct vgmem_chan *ch);
/* Wait until at most `outstanding` entries are not complete. */
int vgmem_chan_wait_outstanding(struct vgmem_chan *ch, uint64_t outstanding,
				uint64_t timeout_ns);
uint64_t vgmem_now_ns(void);
void vgmem_relax(unsigned int spins);

/* A copy between GPU VA and guest memory through the copy engine. */
int vgmem_ce_copy(struct vgmem_chan *ch, uint64_t src, bool src_phys,
		  uint64_t dst, bool dst_phys, uint32_t len);
/* Queue one kernel launch into the open segment (no submit). */
void vgmem_pb_launch(struct vgmem_chan *ch, enum vgmem_kernel k,
		     const uint32_t args[VGMEM_CP_NARGS]);

#endif /* LIBVGMEM_PRIV_H */
