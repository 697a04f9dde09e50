/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The userspace host's own structures (host.c, transport.c, guest_ram.c).
 */
#ifndef VGMEM_USER_HOST_PRIV_H
#define VGMEM_USER_HOST_PRIV_H

#include <pthread.h>
#include "host.h"
#include "lib/util/range_alloc.h"

#define VG_HOST_GUEST_RAM_DEFAULT	(16ull << 20)
#define VG_HOST_PAGE			4096ull

struct vg_model;
struct vg_model_vm;

struct vg_host {
	struct vg_sim *sim;
	struct vg_gpu *gpu;
	struct vg_model *model;		/* the memory manager (models/) */
	struct vg_lrc *lrc;		/* the file cache over vg_ustore_ops */
	bool lrc_gpu;			/* gpu registered with it */
	pthread_mutex_t lock;		/* protects guests */
	struct vg_host_guest *guests;	/* singly linked through next */
};

struct vg_host_chan_ref {
	u32 id;
	struct vg_chan *ch;
};

struct vg_host_guest {
	struct vg_host *host;
	struct vg_host_guest *next;
	char name[32];

	u8 *ram;			/* guest-physical 0 is ram[0] */
	u64 ram_size;
	pthread_mutex_t ram_lock;	/* protects ram_free */
	struct vg_range_alloc ram_free;	/* [VG_HOST_PAGE, ram_size) */

	struct vg_vm *vm;
	struct vg_model_vm *mvm;	/* the VM under the host's model */
	u64 quota;			/* as admitted */
	struct vgmem_dev *dev;

	/*
	 * Channel pointers by id. Readers (USERD accesses) hold it shared;
	 * channel create and destroy hold it exclusively, so a USERD access
	 * never races with the channel being freed.
	 */
	pthread_rwlock_t chan_lock;
	struct vg_host_chan_ref *chans;
	u32 nr_chans, cap_chans;
};

/* guest_ram.c */
int vg_guest_ram_init(struct vg_host_guest *g, u64 size);
void vg_guest_ram_fini(struct vg_host_guest *g);
int vg_guest_ram_alloc(struct vg_host_guest *g, u64 size, u64 *gpa);
void vg_guest_ram_free(struct vg_host_guest *g, u64 gpa, u64 size);
extern const struct vg_guest_mem vg_guest_ram_ops;	/* priv: the guest */

/* transport.c */
extern const struct vgmem_transport_ops vg_host_transport_ops;	/* t: the guest */
void vg_host_transport_fini(struct vg_host_guest *g);

#endif /* VGMEM_USER_HOST_PRIV_H */
