/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgmem_guest.ko internals. One struct vgg_dev per vGPU PCI function, one
 * struct vgg_file per open file of /dev/vgmemN.
 *
 * Lock order (outermost first):
 *   vgg_dev.files_lock the device's open files
 *   mmap_lock of a process (page faults, mmap, munmap)
 *   vgg_file.lock      a file's resources
 *   vgg_dev.ctrlq_lock the control queue (one submitter)
 *   vgg_dev.map_sem    USERD page faults against unplug
 *   vgg_dev.lock       spinlock: gone, BAR0 access, channel owners, faults
 * vgg_dev.binds_lock is a leaf, never held with another of these.
 * Under vgg_file.lock the page cache of a mapped share file is written
 * back and dropped (fmap.c): that takes the file's page and mapping
 * locks and waits for virtio-fs, never one of ours.
 * No lock is held across copy_{from,to}_user(): a fault in one of the
 * file's own mappings takes vgg_file.lock under mmap_lock.
 */
#ifndef VGMEM_GUEST_DRV_H
#define VGMEM_GUEST_DRV_H

#include <linux/cdev.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/version.h>
#include <linux/xarray.h>

#include <uapi/vgmem_guest.h>

#define VGG_NAME		"vgmem_guest"
#define VGG_MAX_DEVS		64		/* minors of /dev/vgmemN */
/* Control-queue slots: 8 x 512 bytes, one 4 KiB page. */
#define VGG_CTRLQ_ENTRIES	8
/* DMA buffer handle h is mapped at VGMEM_GUEST_MMAP_DMA_BASE + (h << 32). */
#define VGG_DMA_OFFSET_SHIFT	32
#define VGG_DMA_HANDLE_MAX	(1u << 20)

/* Module parameters (main.c). */
extern unsigned long vgg_dma_max;
extern unsigned long vgg_dma_total_max;
extern unsigned int vgg_irq_mode;	/* VGMEM_GUEST_IRQ_*: the preferred one */

struct vgg_file;

/*
 * The IOU of a command whose submitter was killed after the doorbell
 * (ctrlq.c). cmd, result and done are under ctrlq_lock until done; then
 * the file that owns it (vgg_file.owed) applies and frees it.
 */
struct vgg_owed {
	struct vgmem_ctrl cmd;		/* in, then the device's answer */
	u32 target;			/* CONSUMER value that completes it */
	int result;			/* 0: cmd holds the answer; or -errno */
	bool done;
	void *ctx;			/* the file's note (CHAN_CREATE: the ring) */
};

/* vm_flags became read-only (vm_flags_set) in 6.3. */
static inline void vm_flags_set_compat(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

struct vgg_dev {
	struct kref kref;		/* probe's reference + one per open file */
	struct pci_dev *pdev;		/* held (pci_dev_get) until the last put */
	int minor;
	struct device *node;		/* /dev/vgmemN; NULL once removed */

	void __iomem *regs;		/* BAR0; touched only under lock, !gone */
	resource_size_t userd_phys;	/* BAR2: USERD page n at n * 4 KiB */
	u32 max_channels;		/* min(MAX_CHANNELS register, QUERY) */
	struct vgmem_ctrl_query query;	/* the device's QUERY answer at probe */
	u32 irq_type;			/* VGMEM_GUEST_IRQ_* in use */
	int irq;			/* Linux irq number, or -1 when polled */

	/*
	 * The control queue. ctrlq_lock makes one submitter at a time: it
	 * owns ring, ctrlq_prod and ctrlq_broken. The ring stays allocated
	 * until the last reference goes (a device that is being unbound may
	 * still write a slot).
	 */
	struct mutex ctrlq_lock;
	struct vgmem_ctrl *ring;
	dma_addr_t ring_dma;
	u32 ctrlq_prod;
	bool ctrlq_broken;		/* the device stopped the queue: re-arm */
	struct vgg_owed *owed;		/* a killed submitter's command, or NULL */

	/*
	 * lock (irq-safe spinlock) protects gone, every BAR0 access after
	 * probe, chan_owner[] and each file's faulted bits. Once gone is set
	 * nobody touches BAR0 again but remove().
	 */
	spinlock_t lock;
	bool gone;
	struct vgg_file *chan_owner[VGMEM_MAX_CHANNELS];
	wait_queue_head_t wq;		/* ctrlq progress, faults, gone */

	/*
	 * USERD pages are inserted at fault time under map_sem (read) after
	 * a check of gone; remove() sets gone, then takes map_sem for write
	 * once, then zaps: no fault can insert a page of a released BAR.
	 */
	struct rw_semaphore map_sem;
	/*
	 * Every file of this device maps through one address_space (the
	 * inode of the first open, held): unmap_mapping_range() on it
	 * reaches every process's USERD mappings. map_lock guards map_inode.
	 */
	struct mutex map_lock;
	struct inode *map_inode;

	/*
	 * files_lock guards files (every open file) and closing (remove()
	 * has begun: no more opens). A file leaves the list, and its
	 * channels and BOs the device, under it: remove() cleans the device
	 * of every file still open while it is still there to clean.
	 */
	struct mutex files_lock;
	struct list_head files;
	bool closing;

	/*
	 * binds_lock (a leaf) guards binds (struct vgg_bind: virtio-fs
	 * mounts bound to share tags), nr_binds and binds_closed (the driver
	 * let the device go: no more bindings).
	 */
	struct mutex binds_lock;
	struct list_head binds;
	unsigned int nr_binds;
	bool binds_closed;
};

/* A virtio-fs mount bound to its share tag (fmap.c). */
struct vgg_bind {
	struct list_head node;		/* in vgg_dev.binds */
	struct path root;		/* held: the mount and its superblock stay */
	char tag[VGMEM_SHARE_TAG_SIZE];
};

/*
 * A file map of an open file (fmap.c), in vgg_file.fmaps under its lock:
 * GPU VA [va, va + length) shows file bytes [offset, offset + length).
 */
struct vgg_fmap {
	struct list_head node;
	u64 va;
	u64 length;
	u64 offset;
	struct file *file;		/* held: its page cache is kept coherent */
};

/*
 * A DMA buffer. Fields other than the constants are under the owning
 * file's lock. Its memory goes back when the handle is freed (freed), no
 * VMA maps it (maps) and no channel alive at DMA_FREE still lives
 * (wait_chans).
 */
struct vgg_dmabuf {
	void *cpu;
	dma_addr_t dma;
	size_t size;
	u32 handle;
	unsigned int maps;
	bool freed;
	u64 wait_chans;
	struct list_head zombie;	/* in vgg_file.zombies once freed */
};

/*
 * One open file. lock protects everything but faulted: chans (bit n:
 * channel n is this file's), chan_ring[] (the buffer channel n's ring
 * lies in), bos (BO VA >> 12 -> xa_mk_value(size >> 12)), dma (handle ->
 * vgg_dmabuf), zombies (freed buffers still mapped or read by channels),
 * fmaps and nr_fmaps (its file maps),
 * dma_total (bytes of live and zombie buffers), owed (the answer of a
 * command whose submitter was killed, applied first by whoever takes
 * lock next) and dropped (the device
 * side is cleaned: the driver is going, no new resources). Held across control
 * commands, never across user copies. faulted (bit n: channel n faulted)
 * is under gdev->lock, because the interrupt handler sets it.
 */
struct vgg_file {
	struct vgg_dev *gdev;		/* a reference */
	struct list_head node;		/* in gdev->files, under files_lock */
	struct mutex lock;
	u64 chans;
	struct vgg_dmabuf *chan_ring[VGMEM_MAX_CHANNELS];
	struct xarray bos;
	struct xarray dma;
	struct list_head zombies;
	u64 dma_total;
	bool dropped;			/* vgg_file_drop_device ran: -ENODEV */
	struct vgg_owed *owed;		/* a command of a killed submitter */
	struct list_head fmaps;		/* struct vgg_fmap */
	unsigned int nr_fmaps;
	u64 faulted;
};

/* pci.c */
int vgg_pci_init(void);
void vgg_pci_exit(void);
void vgg_dev_put(struct vgg_dev *gdev);
int vgg_reg_read(struct vgg_dev *gdev, u32 reg, u32 *val);
int vgg_reg_write(struct vgg_dev *gdev, u32 reg, u32 val);
bool vgg_dev_gone(struct vgg_dev *gdev);
void vgg_scan_faults(struct vgg_dev *gdev);
void vgg_zap_userd(struct vgg_dev *gdev, u64 offset, u64 len);

/* ctrlq.c */
int vgg_ctrlq_arm(struct vgg_dev *gdev);
void vgg_ctrlq_quiesce(struct vgg_dev *gdev);
int vgg_ctrlq_exec(struct vgg_dev *gdev, struct vgmem_ctrl *cmd, bool intr,
		   struct vgg_owed **owed);
int vgg_ctrlq_settle_owed(struct vgg_dev *gdev, struct vgg_owed *o, bool intr);

/* chardev.c */
int vgg_chardev_init(void);
void vgg_chardev_exit(void);
int vgg_chardev_add(struct vgg_dev *gdev);
void vgg_chardev_remove(struct vgg_dev *gdev);

/* file.c */
struct vgg_file *vgg_file_create(struct vgg_dev *gdev);
void vgg_file_drop_device(struct vgg_file *gf);
void vgg_file_destroy(struct vgg_file *gf);
int vgg_file_ctrl(struct vgg_file *gf, struct vgmem_ctrl *cmd);
int vgg_file_dma_alloc(struct vgg_file *gf, struct vgmem_guest_dma *arg);
int vgg_file_dma_free(struct vgg_file *gf, const struct vgmem_guest_dma_free *arg);
int vgg_file_mmap(struct vgg_file *gf, struct vm_area_struct *vma);
u64 vgg_file_faulted(struct vgg_file *gf);
int vgg_run(struct vgg_file *gf, struct vgmem_ctrl *cmd, bool intr, void *ctx);
int vgg_file_settle(struct vgg_file *gf, bool intr);

/* fmap.c */
int vgg_share_bind(struct vgg_file *gf, const struct vgmem_guest_share_bind *arg);
int vgg_share_unbind(struct vgg_dev *gdev, const struct vgmem_guest_share_bind *arg);
void vgg_binds_release(struct vgg_dev *gdev);
int vgg_file_map_fd(struct vgg_file *gf, struct vgmem_guest_map_fd *arg);
int vgg_fmap_ctrl(struct vgg_file *gf, struct vgmem_ctrl *cmd);
int vgg_fmap_apply_map(struct vgg_file *gf, const struct vgmem_ctrl *cmd,
		       int ret, struct vgg_fmap *m);
void vgg_fmap_forget(struct vgg_file *gf, u64 va);
void vgg_fmaps_drop(struct vgg_file *gf, struct vgmem_ctrl *cmd);

#endif /* VGMEM_GUEST_DRV_H */
