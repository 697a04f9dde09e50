// SPDX-License-Identifier: GPL-2.0
/*
 * What one open file owns: channels, BOs and DMA buffers (file maps:
 * fmap.c), and the checks
 * that keep a process to its own. Everything a process passes is hostile:
 * every size, offset, alignment and sum is checked before use, and a
 * channel id, BO VA or DMA handle of another file is refused as if it did
 * not exist. Closing the file (or the process dying) destroys its channels
 * and BOs on the device and frees its DMA buffers.
 *
 * Locking: struct vgg_file in vgmem_guest_drv.h. Every function here that
 * takes no lock itself asserts gf->lock.
 */
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "vgmem_guest_drv.h"

struct vgg_file *vgg_file_create(struct vgg_dev *gdev)
{
	struct vgg_file *gf = kzalloc(sizeof(*gf), GFP_KERNEL);

	if (!gf)
		return NULL;
	gf->gdev = gdev;
	INIT_LIST_HEAD(&gf->node);
	mutex_init(&gf->lock);
	xa_init(&gf->bos);
	xa_init_flags(&gf->dma, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&gf->zombies);
	INIT_LIST_HEAD(&gf->fmaps);
	return gf;
}

u64 vgg_file_faulted(struct vgg_file *gf)
{
	unsigned long flags;
	u64 f;

	spin_lock_irqsave(&gf->gdev->lock, flags);
	f = gf->faulted;
	spin_unlock_irqrestore(&gf->gdev->lock, flags);
	return f;
}


/* ---- DMA buffers -------------------------------------------------------- */

static void vgg_dma_release(struct vgg_file *gf, struct vgg_dmabuf *buf)
{
	lockdep_assert_held(&gf->lock);
	dma_free_coherent(&gf->gdev->pdev->dev, buf->size, buf->cpu, buf->dma);
	gf->dma_total -= buf->size;
	kfree(buf);
}

/* A freed buffer goes back once nothing maps it and its channels died. */
static void vgg_dma_try_release(struct vgg_file *gf, struct vgg_dmabuf *buf)
{
	lockdep_assert_held(&gf->lock);
	if (!buf->freed || buf->maps || buf->wait_chans)
		return;
	list_del(&buf->zombie);
	vgg_dma_release(gf, buf);
}

int vgg_file_dma_alloc(struct vgg_file *gf, struct vgmem_guest_dma *arg)
{
	struct vgg_dev *gdev = gf->gdev;
	struct vgg_dmabuf *buf;
	u64 size = arg->size;
	u32 handle;
	int ret;

	if (arg->flags || !size || !IS_ALIGNED(size, VGMEM_PAGE_SIZE) ||
	    size > vgg_dma_max)
		return -EINVAL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	INIT_LIST_HEAD(&buf->zombie);
	buf->size = size;

	if (mutex_lock_interruptible(&gf->lock)) {
		kfree(buf);
		return -EINTR;
	}
	if (gf->dropped) {
		ret = -ENODEV;
		goto err_unlock;
	}
	if (gf->dma_total + size > vgg_dma_total_max) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	/* Zeroed: dma_alloc_coherent() memory always is. */
	buf->cpu = dma_alloc_coherent(&gdev->pdev->dev, size, &buf->dma,
				      GFP_KERNEL | __GFP_NOWARN);
	if (!buf->cpu) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	ret = xa_alloc(&gf->dma, &handle, buf, XA_LIMIT(1, VGG_DMA_HANDLE_MAX),
		       GFP_KERNEL);
	if (ret) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err_free;
	}
	buf->handle = handle;
	gf->dma_total += size;
	mutex_unlock(&gf->lock);

	arg->gpa = buf->dma;
	arg->mmap_offset = VGMEM_GUEST_MMAP_DMA_BASE +
		((u64)handle << VGG_DMA_OFFSET_SHIFT);
	arg->handle = handle;
	return 0;

err_free:
	dma_free_coherent(&gdev->pdev->dev, size, buf->cpu, buf->dma);
err_unlock:
	mutex_unlock(&gf->lock);
	kfree(buf);
	return ret;
}

int vgg_file_dma_free(struct vgg_file *gf, const struct vgmem_guest_dma_free *arg)
{
	struct vgg_dmabuf *buf;
	unsigned int n;
	int ret = 0;

	if (arg->rsvd)
		return -EINVAL;
	if (mutex_lock_interruptible(&gf->lock))
		return -EINTR;
	/* A killed submitter's CHAN_CREATE may have its ring in this buffer. */
	ret = vgg_file_settle(gf, true);
	if (ret)
		goto out;
	buf = arg->handle ? xa_load(&gf->dma, arg->handle) : NULL;
	if (!buf) {
		ret = -EBADF;
		goto out;
	}
	for (n = 0; n < VGMEM_MAX_CHANNELS; n++) {
		if (gf->chan_ring[n] == buf) {
			ret = -EBUSY;
			goto out;
		}
	}
	xa_erase(&gf->dma, buf->handle);
	buf->freed = true;
	/* The GPU may still read a pushbuffer in it through a live channel. */
	buf->wait_chans = gf->chans;
	list_add_tail(&buf->zombie, &gf->zombies);
	vgg_dma_try_release(gf, buf);
out:
	mutex_unlock(&gf->lock);
	return ret;
}

/* The live buffer [gpa, gpa + len) lies in, or NULL. */
static struct vgg_dmabuf *vgg_dma_find(struct vgg_file *gf, u64 gpa, u64 len)
{
	struct vgg_dmabuf *buf;
	unsigned long idx;

	lockdep_assert_held(&gf->lock);
	if (!len || gpa > U64_MAX - len)
		return NULL;
	xa_for_each(&gf->dma, idx, buf) {
		if (gpa >= buf->dma && gpa + len <= (u64)buf->dma + buf->size)
			return buf;
	}
	return NULL;
}

static void vgg_dma_vm_open(struct vm_area_struct *vma)
{
	struct vgg_file *gf = vma->vm_file->private_data;
	struct vgg_dmabuf *buf = vma->vm_private_data;

	mutex_lock(&gf->lock);
	buf->maps++;
	mutex_unlock(&gf->lock);
}

static void vgg_dma_vm_close(struct vm_area_struct *vma)
{
	struct vgg_file *gf = vma->vm_file->private_data;
	struct vgg_dmabuf *buf = vma->vm_private_data;

	mutex_lock(&gf->lock);
	buf->maps--;
	vgg_dma_try_release(gf, buf);
	mutex_unlock(&gf->lock);
}

static const struct vm_operations_struct vgg_dma_vm_ops = {
	.open = vgg_dma_vm_open,
	.close = vgg_dma_vm_close,
};

static int vgg_mmap_dma(struct vgg_file *gf, struct vm_area_struct *vma, u64 off)
{
	u64 rel = off - VGMEM_GUEST_MMAP_DMA_BASE;
	u64 handle = rel >> VGG_DMA_OFFSET_SHIFT;
	struct vgg_dmabuf *buf;
	unsigned long pgoff;
	int ret;

	if (rel & ((1ull << VGG_DMA_OFFSET_SHIFT) - 1) || !handle ||
	    handle > VGG_DMA_HANDLE_MAX)
		return -EINVAL;
	mutex_lock(&gf->lock);
	buf = xa_load(&gf->dma, handle);
	if (!buf) {
		ret = -EBADF;
		goto out;
	}
	/* Whole: the same size as the buffer, from its start. */
	if (vma->vm_end - vma->vm_start != buf->size) {
		ret = -EINVAL;
		goto out;
	}
	vm_flags_set_compat(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	/*
	 * dma_mmap_coherent() takes vm_pgoff as the offset into the buffer;
	 * the VMA keeps the file offset it was mapped at.
	 */
	pgoff = vma->vm_pgoff;
	vma->vm_pgoff = 0;
	ret = dma_mmap_coherent(&gf->gdev->pdev->dev, vma, buf->cpu, buf->dma,
				buf->size);
	vma->vm_pgoff = pgoff;
	if (ret)
		goto out;
	vma->vm_private_data = buf;
	vma->vm_ops = &vgg_dma_vm_ops;
	buf->maps++;
out:
	mutex_unlock(&gf->lock);
	return ret;
}

/* ---- USERD pages ----------------------------------------------------------- */

/*
 * The page is inserted at fault time, under the file's lock and map_sem:
 * a channel destroyed (zap, then CHAN_DESTROY) or a device removed (gone,
 * map_sem, zap) can never leave a page behind, as a mapping made in
 * mmap() could (it reaches the address_space only after ->mmap returns).
 */
static vm_fault_t vgg_userd_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct vgg_file *gf = vma->vm_file->private_data;
	struct vgg_dev *gdev = gf->gdev;
	unsigned long chan = vma->vm_pgoff;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	mutex_lock(&gf->lock);
	down_read(&gdev->map_sem);
	if (chan < VGMEM_MAX_CHANNELS && (gf->chans & BIT_ULL(chan)) &&
	    !vgg_dev_gone(gdev))
		ret = vmf_insert_pfn(vma, vma->vm_start,
				     PHYS_PFN(gdev->userd_phys) + chan);
	up_read(&gdev->map_sem);
	mutex_unlock(&gf->lock);
	return ret;
}

static const struct vm_operations_struct vgg_userd_vm_ops = {
	.fault = vgg_userd_fault,
};

static int vgg_mmap_userd(struct vgg_file *gf, struct vm_area_struct *vma, u64 off)
{
	u64 chan = off >> PAGE_SHIFT;
	int ret = 0;

	if (vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    chan >= gf->gdev->max_channels)
		return -EINVAL;
	mutex_lock(&gf->lock);
	if (!(gf->chans & BIT_ULL(chan)))
		ret = -ENOENT;
	mutex_unlock(&gf->lock);
	if (ret)
		return ret;
	vm_flags_set_compat(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
			    VM_DONTDUMP);
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_ops = &vgg_userd_vm_ops;
	return 0;
}

int vgg_file_mmap(struct vgg_file *gf, struct vm_area_struct *vma)
{
	u64 off;

	/* Shared only: a private (copy-on-write) device mapping means nothing. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -EINVAL;
	off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	if (off < VGMEM_GUEST_MMAP_DMA_BASE)
		return vgg_mmap_userd(gf, vma, off);
	return vgg_mmap_dma(gf, vma, off);
}

/* ---- control commands ---------------------------------------------------------- */

static void vgg_chan_forget(struct vgg_file *gf, u32 chan)
{
	struct vgg_dev *gdev = gf->gdev;
	struct vgg_dmabuf *buf, *tmp;

	lockdep_assert_held(&gf->lock);
	gf->chans &= ~BIT_ULL(chan);
	gf->chan_ring[chan] = NULL;
	spin_lock_irq(&gdev->lock);
	if (gdev->chan_owner[chan] == gf)
		gdev->chan_owner[chan] = NULL;
	gf->faulted &= ~BIT_ULL(chan);
	spin_unlock_irq(&gdev->lock);
	list_for_each_entry_safe(buf, tmp, &gf->zombies, zombie) {
		buf->wait_chans &= ~BIT_ULL(chan);
		vgg_dma_try_release(gf, buf);
	}
}


/* Give back what the device made but the file cannot own (its mistake). */
static void vgg_undo(struct vgg_file *gf, u32 op, u32 chan, u64 va)
{
	struct vgmem_ctrl *undo = kzalloc(sizeof(*undo), GFP_KERNEL);

	if (!undo)
		return;
	undo->op = op;
	undo->chan.chan_id = chan;
	if (op == VGMEM_CTRL_BO_FREE)
		undo->bo.va = va;
	vgg_run(gf, undo, false, NULL);
	kfree(undo);
}

/* CHAN_CREATE succeeded: the channel is this file's. */
static int vgg_chan_adopt(struct vgg_file *gf, u32 id, struct vgg_dmabuf *ring)
{
	struct vgg_dev *gdev = gf->gdev;

	lockdep_assert_held(&gf->lock);
	spin_lock_irq(&gdev->lock);
	if (id < gdev->max_channels && !gdev->chan_owner[id]) {
		gdev->chan_owner[id] = gf;
		gf->faulted &= ~BIT_ULL(id);
		spin_unlock_irq(&gdev->lock);
		gf->chans |= BIT_ULL(id);
		gf->chan_ring[id] = ring;
		return 0;
	}
	spin_unlock_irq(&gdev->lock);
	dev_err_ratelimited(&gdev->pdev->dev, "CHAN_CREATE returned channel %u, which is out of range or taken\n",
			    id);
	/* Beyond BAR2, nobody can use it: give it back (a taken id stays its owner's). */
	if (id >= gdev->max_channels)
		vgg_undo(gf, VGMEM_CTRL_CHAN_DESTROY, id, 0);
	return -EIO;
}

/* BO_ALLOC succeeded: the BO is this file's. */
static int vgg_bo_adopt(struct vgg_file *gf, u64 va, u64 size)
{
	int ret;

	lockdep_assert_held(&gf->lock);
	if (IS_ALIGNED(va, VGMEM_PAGE_SIZE) && va >= VGMEM_VA_START &&
	    va < VGMEM_VA_END && !xa_load(&gf->bos, va >> PAGE_SHIFT)) {
		ret = xa_err(xa_store(&gf->bos, va >> PAGE_SHIFT,
				      xa_mk_value(size >> PAGE_SHIFT), GFP_KERNEL));
		if (!ret)
			return 0;
	} else {
		dev_err_ratelimited(&gf->gdev->pdev->dev, "BO_ALLOC returned VA 0x%llx, which is misaligned, out of range or taken\n",
				    (unsigned long long)va);
		ret = -EIO;
		if (xa_load(&gf->bos, va >> PAGE_SHIFT))
			return ret;
	}
	/* Not recorded, so not this file's: free it again. */
	vgg_undo(gf, VGMEM_CTRL_BO_FREE, 0, va);
	return ret;
}

/*
 * The device answered cmd (ret 0: cmd->status and the out fields), or
 * could not (ret < 0): make the file agree with the device. Returns what
 * the caller's ioctl returns.
 */
static int vgg_ctrl_apply(struct vgg_file *gf, struct vgmem_ctrl *cmd, int ret,
			  void *ctx)
{
	bool gone_or_done = ret == -ENODEV ||
		(!ret && (!cmd->status || cmd->status == -ENOENT));

	lockdep_assert_held(&gf->lock);
	switch (cmd->op) {
	case VGMEM_CTRL_CHAN_CREATE:
		if (ret || cmd->status)
			return ret;
		return vgg_chan_adopt(gf, cmd->chan.chan_id, ctx);
	case VGMEM_CTRL_CHAN_DESTROY:
		/* Gone from the device (or the device is gone): forget it. */
		if (gone_or_done && cmd->chan.chan_id < VGMEM_MAX_CHANNELS)
			vgg_chan_forget(gf, cmd->chan.chan_id);
		return ret;
	case VGMEM_CTRL_BO_ALLOC:
		if (ret || cmd->status)
			return ret;
		return vgg_bo_adopt(gf, cmd->bo.va, cmd->bo.size);
	case VGMEM_CTRL_BO_FREE:
		if (gone_or_done)
			xa_erase(&gf->bos, cmd->bo.va >> PAGE_SHIFT);
		return ret;
	case VGMEM_CTRL_FILE_MAP:
		return vgg_fmap_apply_map(gf, cmd, ret, ctx);
	case VGMEM_CTRL_FILE_UNMAP:
		/* -EBADF: the device has no such map (any more): forget it too. */
		if (gone_or_done || (!ret && cmd->status == -EBADF))
			vgg_fmap_forget(gf, cmd->file.va);
		return ret;
	default:
		return ret;
	}
}

/*
 * Run a command and make the file agree with the answer. ctx: the ring
 * buffer of a CHAN_CREATE. A submitter killed while the device has its
 * command leaves the IOU in gf->owed and returns -EINTR.
 */
int vgg_run(struct vgg_file *gf, struct vgmem_ctrl *cmd, bool intr, void *ctx)
{
	struct vgg_owed *owed;
	int ret;

	lockdep_assert_held(&gf->lock);
	ret = vgg_ctrlq_exec(gf->gdev, cmd, intr, &owed);
	if (owed) {
		owed->ctx = ctx;
		gf->owed = owed;
		return -EINTR;
	}
	return vgg_ctrl_apply(gf, cmd, ret, ctx);
}

/*
 * Apply the answer of a killed submitter's command, waiting for it if
 * need be: first thing under the file's lock for everything that looks
 * at channels, BOs or ring buffers. 0, or -EINTR (intr).
 */
int vgg_file_settle(struct vgg_file *gf, bool intr)
{
	struct vgg_owed *o = gf->owed;
	int ret;

	lockdep_assert_held(&gf->lock);
	if (!o)
		return 0;
	ret = vgg_ctrlq_settle_owed(gf->gdev, o, intr);
	if (ret)
		return ret;
	gf->owed = NULL;
	vgg_ctrl_apply(gf, &o->cmd, o->result, o->ctx);
	kfree(o);
	return 0;
}

static int vgg_ctrl_chan_create(struct vgg_file *gf, struct vgmem_ctrl *cmd)
{
	struct vgmem_ctrl_chan *c = &cmd->chan;
	struct vgg_dmabuf *ring;

	lockdep_assert_held(&gf->lock);
	if (c->gpfifo_entries < VGMEM_GP_ENTRIES_MIN ||
	    c->gpfifo_entries > VGMEM_GP_ENTRIES_MAX ||
	    !is_power_of_2(c->gpfifo_entries) || !IS_ALIGNED(c->gpfifo_gpa, 8))
		return -EINVAL;
	ring = vgg_dma_find(gf, c->gpfifo_gpa, (u64)c->gpfifo_entries * 8);
	if (!ring)
		return -EINVAL;
	c->chan_id = 0;
	return vgg_run(gf, cmd, true, ring);
}

/* Destroy a channel of this file on the device. */
static int vgg_chan_destroy(struct vgg_file *gf, struct vgmem_ctrl *cmd, bool intr)
{
	lockdep_assert_held(&gf->lock);
	/*
	 * Zap before the device lets the id go: another file could get it
	 * the moment the command completes. Faults wait for our lock and
	 * then find the channel gone (or still ours, if the command fails).
	 */
	vgg_zap_userd(gf->gdev, VGMEM_GUEST_MMAP_USERD(cmd->chan.chan_id), PAGE_SIZE);
	return vgg_run(gf, cmd, intr, NULL);
}

static bool vgg_owns_bo(struct vgg_file *gf, u64 va)
{
	lockdep_assert_held(&gf->lock);
	return IS_ALIGNED(va, VGMEM_PAGE_SIZE) && va >= VGMEM_VA_START &&
		va < VGMEM_VA_END && xa_load(&gf->bos, va >> PAGE_SHIFT);
}

int vgg_file_ctrl(struct vgg_file *gf, struct vgmem_ctrl *cmd)
{
	struct vgmem_ctrl_bo *b = &cmd->bo;
	size_t used;
	int ret;

	/* A file map is made from a file descriptor: VGMEM_GIOC_MAP_FD. */
	if (cmd->op == VGMEM_CTRL_FILE_MAP)
		return -EPERM;
	used = vgmem_ctrl_well_formed(cmd);
	if (!used)
		return -EINVAL;
	cmd->status = 0;

	if (mutex_lock_interruptible(&gf->lock))
		return -EINTR;
	ret = gf->dropped ? -ENODEV : vgg_file_settle(gf, true);
	if (ret)
		goto out_unlock;
	switch (cmd->op) {
	case VGMEM_CTRL_QUERY:
	case VGMEM_CTRL_STATS:
		/* The whole member is output. */
		memset(cmd->raw, 0, used);
		ret = vgg_run(gf, cmd, true, NULL);
		break;
	case VGMEM_CTRL_SHARES:
		/* index is the input; the device checks it and rsvd. */
		ret = vgg_run(gf, cmd, true, NULL);
		break;
	case VGMEM_CTRL_CHAN_CREATE:
		ret = vgg_ctrl_chan_create(gf, cmd);
		break;
	case VGMEM_CTRL_CHAN_DESTROY:
		if (cmd->chan.gpfifo_gpa || cmd->chan.gpfifo_entries)
			ret = -EINVAL;
		else if (cmd->chan.chan_id >= VGMEM_MAX_CHANNELS ||
			 !(gf->chans & BIT_ULL(cmd->chan.chan_id)))
			ret = -ENOENT;
		else
			ret = vgg_chan_destroy(gf, cmd, true);
		break;
	case VGMEM_CTRL_BO_ALLOC:
		if (b->rsvd || (b->flags & ~VGMEM_BO_FLAGS_ALL) ||
		    (!(b->flags & VGMEM_BO_FIXED_VA) && b->va))
			ret = -EINVAL;
		else
			ret = vgg_run(gf, cmd, true, NULL);
		break;
	case VGMEM_CTRL_BO_FREE:
		if (b->size || b->flags || b->rsvd)
			ret = -EINVAL;
		else if (!vgg_owns_bo(gf, b->va))
			ret = -ENOENT;
		else
			ret = vgg_run(gf, cmd, true, NULL);
		break;
	case VGMEM_CTRL_FILE_UNMAP:
	case VGMEM_CTRL_FILE_ACQUIRE:
	case VGMEM_CTRL_FILE_RELEASE:
	case VGMEM_CTRL_FILE_SYNC:
		ret = vgg_fmap_ctrl(gf, cmd);
		break;
	default:
		ret = -EINVAL;
		break;
	}
out_unlock:
	mutex_unlock(&gf->lock);
	return ret;
}

/* ---- release ------------------------------------------------------------------- */

/*
 * Destroy every channel and BO of the file on the device: at release, or
 * when the device's driver goes while the file is open. A device that is
 * gone has lost them already.
 */
void vgg_file_drop_device(struct vgg_file *gf)
{
	struct vgmem_ctrl *cmd;
	unsigned long idx;
	void *entry;
	u32 chan;

	lockdep_assert_held(&gf->lock);
	gf->dropped = true;
	vgg_file_settle(gf, false);
	cmd = kmalloc(sizeof(*cmd), GFP_KERNEL | __GFP_NOFAIL);
	vgg_fmaps_drop(gf, cmd);
	for (chan = 0; chan < VGMEM_MAX_CHANNELS; chan++) {
		if (!(gf->chans & BIT_ULL(chan)))
			continue;
		memset(cmd, 0, sizeof(*cmd));
		cmd->op = VGMEM_CTRL_CHAN_DESTROY;
		cmd->chan.chan_id = chan;
		if (vgg_chan_destroy(gf, cmd, false) || cmd->status)
			vgg_chan_forget(gf, chan);
	}
	xa_for_each(&gf->bos, idx, entry) {
		memset(cmd, 0, sizeof(*cmd));
		cmd->op = VGMEM_CTRL_BO_FREE;
		cmd->bo.va = (u64)idx << PAGE_SHIFT;
		if (vgg_run(gf, cmd, false, NULL) || cmd->status)
			xa_erase(&gf->bos, idx);
	}
	kfree(cmd);
}

/*
 * The file's last reference is gone, so no VMA maps it any more (a VMA
 * holds its file): the device part is done (vgg_file_drop_device, under
 * files_lock), now every DMA buffer goes.
 */
void vgg_file_destroy(struct vgg_file *gf)
{
	struct vgg_dmabuf *buf, *tmp;
	unsigned long idx;

	mutex_lock(&gf->lock);
	vgg_file_settle(gf, false);
	xa_destroy(&gf->bos);
	/* Maps a killed submitter's FILE_MAP left after the drop. */
	while (!list_empty(&gf->fmaps))
		vgg_fmap_forget(gf, list_first_entry(&gf->fmaps, struct vgg_fmap, node)->va);
	xa_for_each(&gf->dma, idx, buf) {
		xa_erase(&gf->dma, idx);
		vgg_dma_release(gf, buf);
	}
	xa_destroy(&gf->dma);
	list_for_each_entry_safe(buf, tmp, &gf->zombies, zombie) {
		list_del(&buf->zombie);
		vgg_dma_release(gf, buf);
	}
	mutex_unlock(&gf->lock);
	mutex_destroy(&gf->lock);
	kfree(gf);
}
