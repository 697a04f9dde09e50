/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgmem.ko's kernel-only side: registered GPUs (registry.c), their mdev
 * parents and vGPU instances (mdev.c), and the VFIO device each vGPU is
 * (vgpu.c: config space and BAR0; ctrlq.c: the control queue; userd.c:
 * BAR2 and GPUswap's zap; irq.c: interrupts; gmem.c: guest memory).
 *
 * Lock order, outermost first:
 *   vgk_gpu.lock -> vgk_vgpu.lock -> the core's gpu->lock
 *     -> vgk_vgpu.userd_lock -> vgk_vgpu.reg_lock (spinlock)
 * The fault handler holds the faulting mm's mmap_lock and then takes
 * userd_lock; the zap therefore only try-locks an mmap_lock while holding
 * userd_lock and otherwise drops userd_lock first (userd.c).
 */
#ifndef VGK_LINUX_DRV_H
#define VGK_LINUX_DRV_H

#include <linux/device.h>
#include <linux/eventfd.h>
#include <linux/mdev.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pci_regs.h>
#include <linux/spinlock.h>
#include <linux/vfio.h>
#include <linux/workqueue.h>
#include <net/netlink.h>

#include <uapi/vgmem_netlink.h>

#include "core/vg.h"
#include "core/lrc/lrc.h"
#include "vgk_compat.h"
#include "vgk_gpu.h"

/*
 * Region offsets in the device file, as vfio-pci lays them out: region
 * index in the bits from 40 up, the offset inside the region below.
 */
#define VGK_OFFSET_SHIFT	40
#define VGK_OFFSET_MASK	((1ull << VGK_OFFSET_SHIFT) - 1)
#define VGK_PGOFF_SHIFT	(VGK_OFFSET_SHIFT - PAGE_SHIFT)
#define VGK_PGOFF_MASK	((1ul << VGK_PGOFF_SHIFT) - 1)
#define VGK_CFG_SIZE		PCI_CFG_SPACE_SIZE
#define VGK_USERD_PAGES	VGMEM_MAX_CHANNELS
#define VGK_NR_TYPES		4
#define VGK_IRQ_ALL		(VGMEM_IRQ_CTRLQ | VGMEM_IRQ_CHAN_FAULT)

extern struct class *vgk_class;
extern struct mdev_driver vgk_mdev_driver;
extern const struct vfio_device_ops vgk_vfio_ops;

/* An mdev type: a VRAM quota. */
struct vgk_type {
	struct mdev_type type;
	u64 quota;
};

/*
 * A registered GPU.
 *
 * Lock rules: lock (mutex) protects committed, vgpus and return_ms, and
 * every vgpu's quota as far as admission is concerned (a quota changes
 * under this lock and the vgpu's lock). The rest is set at registration
 * and read-only after.
 */
struct vgk_gpu {
	struct list_head node;		/* vgk_gpus, vgk_gpus_lock */
	int id;
	struct device *dev;		/* class device vgmemN */
	struct mdev_parent parent;
	struct vgk_type types[VGK_NR_TYPES];
	struct mdev_type *type_ptrs[VGK_NR_TYPES];
	struct vg_gpu *core;
	struct module *owner;		/* the GPU driver's: one reference per vGPU */
	u64 vram_size;

	struct mutex lock;
	u64 committed;			/* sum of the quotas of its vGPUs */
	struct list_head vgpus;		/* struct vgk_vgpu.node */
	u32 return_ms;			/* as last set, for reading back */
	u32 oversub_pct;		/* 0: the module parameter (netlink sets it) */
	bool lrc;			/* added to the file cache (lrc_store.c) */
};

/* A VMA of the BAR2 mapping that may hold page-table entries (userd.c). */
struct vgk_vma {
	struct list_head node;		/* vgk_vgpu.vmas */
	struct vm_area_struct *vma;
	u64 gen;			/* last zap pass that covered it */
};

enum vgk_irq_type {
	VGK_IRQ_NONE,
	VGK_IRQ_INTX,
	VGK_IRQ_MSI,
};

/*
 * A vGPU's virtio-fs shares as the operator set them (netlink SET_VM):
 * the roots its guest's file maps resolve beneath, entries by id
 * ascending. Immutable once set; replaced whole.
 */
struct vgk_share {
	u32 id;
	bool readonly;
	char *path;		/* absolute, checked (vgk_share_path_check) */
	/* virtio-fs tag (vgmem_share_tag_ok), unique in the table; "": none */
	char tag[VGMEM_SHARE_TAG_SIZE];
};

struct vgk_shares {
	unsigned int nr;
	struct vgk_share e[];
};

/*
 * One vGPU: an mdev, a VFIO device and, while the device is open, a VM of
 * the core.
 *
 * Lock rules:
 *  - lock (mutex): vm (created at open, destroyed at close, replaced by a
 *    reset), past, scratch, entitlement, shares, and quota (together with
 *    gpu->lock); it also
 *    serialises control commands with reset and close, so vm->chans
 *    changes only under it (ctrlq.c relies on that).
 *  - userd_lock (mutex): chans[], vmas, zap_gen; held across choosing the
 *    page and inserting it in the fault handler and across every zap, so
 *    a fault racing a suspend cannot map the page the zap removed.
 *  - reg_lock (spinlock, taken from the GPU's engine thread too): the
 *    register file, the control queue's indices, config space and the
 *    interrupt state including the eventfd pointer.
 */
struct vgk_vgpu {
	struct vfio_device vdev;	/* first: vfio_alloc_device() wants it */
	struct mdev_device *mdev;
	struct vgk_gpu *gpu;
	const struct vgk_type *type;
	struct list_head node;		/* gpu->vgpus, gpu->lock */

	struct mutex lock;
	struct vg_vm *vm;
	u64 quota;
	u64 entitlement;		/* 0: equal share */
	struct vgk_shares *shares;	/* NULL: none; kept while closed */
	/*
	 * The counters of the VMs this vGPU had before the current one,
	 * folded in at close and reset (vgpu.c): what operators read is this
	 * plus the live VM's, cumulative for the mdev's life. scratch is the
	 * fold's copy of the live VM's (too big for the stack).
	 */
	struct vgmem_vm_stats past;
	struct vgmem_vm_stats scratch;

	struct mutex userd_lock;
	struct vg_chan *chans[VGK_USERD_PAGES];	/* by channel id */
	struct list_head vmas;
	u64 zap_gen;
	/*
	 * What a BAR2 page without a channel maps: one page of this vGPU's
	 * own, zeroed at every open, so a stray access by the guest (a
	 * real VMM maps BAR2 straight into it) neither kills the VMM nor
	 * reaches a channel or anyone else. Lives from init to release.
	 */
	struct page *absent;

	spinlock_t reg_lock;
	u8 cfg[VGK_CFG_SIZE];
	bool ready;			/* a VM exists: STATUS_READY */
	bool closing;			/* no more control-queue work */
	bool q_paused;			/* migration: doorbells wait for RUNNING */
	u64 q_base;
	u32 q_entries;			/* 0: queue off */
	u32 q_producer;
	u32 q_consumer;
	u32 q_gen;			/* bumped when the queue is reset */
	s32 q_error;			/* 0, or -errno: the queue is stopped */
	u32 irq_cause;
	u32 irq_mask;
	u64 faulted;			/* channels 0-63 that faulted */
	enum vgk_irq_type irq_type;
	struct eventfd_ctx *irq_trigger;
	bool intx_masked;
	/*
	 * INTx's unmask eventfd (irq.c): set and cleared under lock (SET_IRQS)
	 * or at close, through vfio_virqfd_enable/disable (their own lock;
	 * virqfd clears the pointer itself when the eventfd is closed).
	 * intx_unmask_ctx holds a reference to that eventfd until then, only
	 * to refuse it as INTx's trigger (same rules, without virqfd's lock).
	 */
	struct virqfd *intx_unmask;
	struct eventfd_ctx *intx_unmask_ctx;
	/*
	 * The device request eventfd (VFIO_PCI_REQ_IRQ_INDEX): signalled when
	 * the mdev is being removed while a VMM has it open, so the VMM can
	 * unplug it from the guest, as vfio-pci does. Under reg_lock.
	 */
	struct eventfd_ctx *req_trigger;

	struct work_struct ctrlq_work;

	/*
	 * VFIO migration (migration.c), under lock: the state the VMM set
	 * and the data file of STOP_COPY or RESUMING (NULL otherwise).
	 */
	enum vfio_device_mig_state mig_state;
	struct vgk_mig_file *mig_file;
};

static inline struct vgk_vgpu *vgk_vgpu_from_vdev(struct vfio_device *vdev)
{
	return container_of(vdev, struct vgk_vgpu, vdev);
}

/* registry.c */
/*
 * Every registered GPU (struct vgk_gpu.node). A GPU found on the list
 * under vgk_gpus_lock stays registered until the lock is dropped
 * (vgk_unregister_gpu() takes it first). Lock order: vgk_gpus_lock
 * before vgk_gpu.lock.
 */
extern struct list_head vgk_gpus;
extern struct mutex vgk_gpus_lock;
/* Changes whenever a GPU or a vGPU comes or goes (netlink dump checks). */
u32 vgk_registry_gen(void);
/* The admission limit in force, in percent of VRAM; 0 sets "follow oversub_pct". */
u32 vgk_gpu_oversub(const struct vgk_gpu *gpu);
void vgk_gpu_set_oversub(struct vgk_gpu *gpu, u32 pct);
int vgk_registry_init(void);
void vgk_registry_exit(void);
/* Admission: add a new vGPU's quota to the GPU, or -ENOSPC. */
int vgk_gpu_attach(struct vgk_gpu *gpu, struct vgk_vgpu *v);
void vgk_gpu_detach(struct vgk_gpu *gpu, struct vgk_vgpu *v);
/* Live quota change within the GPU's oversubscription limit. */
int vgk_gpu_set_quota(struct vgk_gpu *gpu, struct vgk_vgpu *v, u64 quota);
unsigned int vgk_gpu_available(struct vgk_gpu *gpu, u64 quota);

/* mdev.c */
int vgk_mdev_init(void);
void vgk_mdev_exit(void);

/* vgpu.c */
/*
 * The vGPU's statistics: counters summed over every VM it had (open to
 * close, or reset), gauges (allocated, resident, relocated) of the live
 * VM only, 0 while closed.
 */
void vgk_vgpu_stats(struct vgk_vgpu *v, struct vgmem_vm_stats *st);
/* A fresh VM, config space and registers, as a reset makes them; lock held. */
int vgk_vgpu_renew(struct vgk_vgpu *v);
/* Config space as a reset leaves it, and the bits the guest may write. */
void vgk_cfg_default(u8 *cfg);
extern const u8 vgk_cfg_wmask[VGK_CFG_SIZE];
/* Registers as a reset leaves them; reg_lock held. */
void vgk_regs_reset(struct vgk_vgpu *v);
int vgk_vgpu_set_entitlement(struct vgk_vgpu *v, u64 bytes);

/* migration.c: VFIO migration protocol v2 (docs/migration.md). */
void vgk_mig_init(struct vgk_vgpu *v);
/* Close and reset: any data file dies, the state is RUNNING; lock held. */
void vgk_mig_reset(struct vgk_vgpu *v);

/* ctrlq.c */
int vgk_ctrlq_dev_init(void);
void vgk_ctrlq_dev_exit(void);
void vgk_ctrlq_dev_work(struct work_struct *work);
/* Register writes, reg_lock held. */
void vgk_ctrlq_dev_write(struct vgk_vgpu *v, u32 reg, u32 val);
/*
 * Migration: hold doorbells while the device is stopped, serve the ones
 * rung meanwhile when it runs again (lock held, so no command is running).
 */
void vgk_ctrlq_dev_pause(struct vgk_vgpu *v, bool pause);
/* Stop the queue and wait for its work (close). */
void vgk_ctrlq_dev_stop(struct vgk_vgpu *v);

/* userd.c */
int vgk_userd_mmap(struct vgk_vgpu *v, struct vm_area_struct *vma);
void vgk_userd_zap(void *priv, struct vg_chan *ch);
int vgk_userd_add_chan(struct vgk_vgpu *v, u32 id);
void vgk_userd_reset_absent(struct vgk_vgpu *v);
u32 vgk_userd_read(struct vgk_vgpu *v, u64 off);
void vgk_userd_write(struct vgk_vgpu *v, u64 off, u32 val);

/* irq.c */
int vgk_irq_set(struct vgk_vgpu *v, struct vfio_irq_set *hdr, void *data);
int vgk_irq_count(unsigned int index);
void vgk_irq_disable(struct vgk_vgpu *v);
/* vfio_device_ops.request: the mdev is going away while open. */
void vgk_irq_request(struct vgk_vgpu *v, unsigned int count);
void vgk_req_disable(struct vgk_vgpu *v);
/* Set cause bits and raise the interrupt on a rising edge; reg_lock held. */
void vgk_irq_raise(struct vgk_vgpu *v, u32 cause);
/* After cause, mask or command changed; reg_lock held. */
void vgk_irq_update(struct vgk_vgpu *v, bool was_pending);
bool vgk_irq_pending(struct vgk_vgpu *v);
void vgk_chan_fault(void *priv, struct vg_chan *ch, u32 error);

/* netlink.c: the generic netlink family "vgmem" (include/uapi/vgmem.h). */
int vgk_netlink_init(void);
void vgk_netlink_exit(void);
extern struct genl_family vgk_genl_family;
enum vgk_nl_mcgrp {
	VGK_NL_MCGRP_EVENTS,
};
/* UUIDs: wire order (RFC 4122 text order) <-> guid_t; its own inverse. */
void vgk_nl_swap_uuid(u8 *dst, const u8 *src);
int vgk_nl_put_uuid(struct sk_buff *skb, struct vgk_vgpu *v);

/*
 * events.c: the family's events group. Started once the family is
 * registered, stopped before it goes (queued faults are dropped).
 */
void vgk_nl_events_start(void);
void vgk_nl_events_stop(void);
/* The core's event hooks of every registered GPU (priv: the vgk_gpu). */
extern const struct vg_gpu_events vgk_nl_gpu_events;
/* A channel fault, from the engine thread (atomic): queued for multicast. */
void vgk_nl_chan_fault(struct vgk_vgpu *v, u32 chan, u32 error);

/*
 * lrc_store.c: the LRC file cache's store over the VFS, and share roots.
 * vgk_share_path_check(): absolute, shorter than VGMEM_SHARE_PATH_MAX,
 * no control characters, no "." or ".." components (-EINVAL).
 * vgk_share_root_check(): that, and an existing directory (-ENOENT,
 * -ENOTDIR, ...). vgk_vgpu_set_shares() takes s (may be NULL: none) and
 * frees the table it replaces.
 */
extern const struct vg_lrc_store_ops vgk_lrc_store_ops;
int vgk_share_path_check(const char *path);
int vgk_share_root_check(const char *path);
void vgk_vgpu_set_shares(struct vgk_vgpu *v, struct vgk_shares *s);

/*
 * shares.c: share tables and their netlink form. vgk_nl_parse_shares()
 * builds SET_VM's table (every entry checked, every root resolved,
 * sorted by id; outside any lock: lookups sleep) or refuses it with an
 * extack message; vgk_nl_put_shares() adds the vGPU's table to a
 * GET_VM reply (v->lock held).
 */
extern const struct nla_policy vgk_nl_share_policy[VGMEM_SHARE_A_MAX + 1];
struct vgk_shares *vgk_shares_alloc(unsigned int nr);
void vgk_shares_free(struct vgk_shares *s);
/* Bytes of a VGMEM_A_VM_SHARES nest holding s. */
size_t vgk_shares_nla_size(const struct vgk_shares *s);
int vgk_nl_parse_shares(struct nlattr *nest, struct netlink_ext_ack *extack,
			struct vgk_shares **out);
int vgk_nl_put_shares(struct sk_buff *skb, struct vgk_vgpu *v);
/*
 * The host's file cache: created at module init, GPUs added as they
 * register with a budget of lrc_budget_mb MiB of VRAM for replicas
 * (module parameter; 0, the default, or a GPU driver that cannot fault: no
 * file cache), a context per
 * VM when its device opens (vgk_lrc_vm_open, v->lock held, after the VM
 * exists), which the VM's destruction tears down with write-back.
 */
int vgk_lrc_init(void);
void vgk_lrc_exit(void);
void vgk_lrc_gpu_add(struct vgk_gpu *gpu);
void vgk_lrc_gpu_remove(struct vgk_gpu *gpu);
void vgk_lrc_vm_open(struct vgk_vgpu *v);
/* The host cache's statistics (netlink GET_LRC). */
void vgk_lrc_get_stats(struct vg_lrc_stats *st);

/* gmem.c */
void vgk_gmem_init(struct vgk_vgpu *v, struct vg_guest_mem *gmem);

#endif /* VGK_LINUX_DRV_H */
