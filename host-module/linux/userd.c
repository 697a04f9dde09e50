// SPDX-License-Identifier: GPL-2.0
/*
 * BAR2: the USERD page of channel n at n * 4 KiB, mapped into the guest so
 * that a submission (a GP_PUT store) never traps. The mapping is a
 * VM_PFNMAP filled page by page by the fault handler with whatever page
 * vg_chan_userd_page() names: the channel's real page, or its shadow while
 * the core relocates this VM (GPUswap section 4.4).
 *
 * Suspension, as GPUswap does it: the core swaps a channel's page, then
 * calls userd_zap; we remove that page from every VMA of this device, and
 * the guest's next access faults in the page the core names now. The fault
 * handler chooses the page and inserts it under userd_lock, and the zap
 * holds userd_lock too, so a fault racing a swap either finishes before
 * the zap (and is zapped) or sees the new page.
 *
 * A page without a channel (never created, or destroyed) maps the vGPU's
 * absent page (vgk_drv.h): a real VMM maps BAR2 straight into the guest,
 * where any stray access must be harmless, never a SIGBUS that kills the
 * VMM. It reads as zeros until the guest itself writes there; what it
 * writes reaches no channel and no other VM. The VMA is tracked all the
 * same, so creating the channel zaps the absent page and the next access
 * faults in the USERD page.
 *
 * In 6.1 the VFIO device file is an anonymous inode shared by all VFIO
 * devices, so zapping by address_space would hit others' mappings; we
 * track our own VMAs instead, as vfio-pci-core does. A VMA is tracked
 * from its first fault until it is closed; one that is split or moved has
 * its entries dropped in .open / .mremap so that only tracked VMAs ever
 * hold entries; fork does not copy the mapping (VM_DONTCOPY).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "vgk_drv.h"

static_assert(PAGE_SIZE == VGMEM_USERD_SIZE);

/* The BAR2 page a VMA address maps. */
static unsigned long vgk_vma_page(struct vm_area_struct *vma,
				  unsigned long addr)
{
	return (vma->vm_pgoff & VGK_PGOFF_MASK) +
	       ((addr - vma->vm_start) >> PAGE_SHIFT);
}

static struct vgk_vma *vgk_vma_find(struct vgk_vgpu *v,
				    struct vm_area_struct *vma)
{
	struct vgk_vma *e;

	lockdep_assert_held(&v->userd_lock);
	list_for_each_entry(e, &v->vmas, node)
		if (e->vma == vma)
			return e;
	return NULL;
}

static void vgk_vma_zap_all(struct vm_area_struct *vma)
{
	zap_vma_ptes(vma, vma->vm_start, vma->vm_end - vma->vm_start);
}

static void vgk_vma_zap_page(struct vm_area_struct *vma, u32 page)
{
	unsigned long first = vma->vm_pgoff & VGK_PGOFF_MASK;

	if (page < first || page - first >= vma_pages(vma))
		return;
	zap_vma_ptes(vma, vma->vm_start + ((page - first) << PAGE_SHIFT),
		     PAGE_SIZE);
}

static vm_fault_t vgk_userd_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct vgk_vgpu *v = vma->vm_private_data;
	unsigned long page = vgk_vma_page(vma, vmf->address);
	struct vgk_vma *e;
	struct vg_chan *ch;
	vm_fault_t ret;
	void *userd;

	/* mmap checked the range: a VMA never reaches past BAR2. */
	if (WARN_ON_ONCE(page >= VGK_USERD_PAGES))
		return VM_FAULT_SIGBUS;
	mutex_lock(&v->userd_lock);
	e = vgk_vma_find(v, vma);
	if (!e) {
		e = kzalloc(sizeof(*e), GFP_KERNEL);
		if (!e) {
			ret = VM_FAULT_OOM;
			goto out_unlock;
		}
		e->vma = vma;
		/* What it maps now is current: the running zap may skip it. */
		e->gen = v->zap_gen;
		list_add_tail(&e->node, &v->vmas);
	}
	ch = v->chans[page];
	if (!ch) {
		ret = vmf_insert_pfn(vma, vmf->address & PAGE_MASK,
				     page_to_pfn(v->absent));
		goto out_unlock;
	}
	userd = vg_chan_userd_page(ch);
	/* Whole pages only: the guest must not see a neighbour's bytes. */
	if (WARN_ON_ONCE(!PAGE_ALIGNED(userd) || is_vmalloc_addr(userd))) {
		ret = VM_FAULT_SIGBUS;
		goto out_unlock;
	}
	ret = vmf_insert_pfn(vma, vmf->address & PAGE_MASK,
			     PHYS_PFN(virt_to_phys(userd)));
out_unlock:
	mutex_unlock(&v->userd_lock);
	return ret;
}

/* A split or a copy: drop the new VMA's entries; it faults them back. */
static void vgk_userd_open(struct vm_area_struct *vma)
{
	vgk_vma_zap_all(vma);
}

static void vgk_userd_close(struct vm_area_struct *vma)
{
	struct vgk_vgpu *v = vma->vm_private_data;
	struct vgk_vma *e;

	mutex_lock(&v->userd_lock);
	e = vgk_vma_find(v, vma);
	if (e) {
		list_del(&e->node);
		kfree(e);
	}
	mutex_unlock(&v->userd_lock);
}

/* mremap moved the entries into a VMA we do not track: drop them. */
static int vgk_userd_mremap(struct vm_area_struct *vma)
{
	vgk_vma_zap_all(vma);
	return 0;
}

static const struct vm_operations_struct vgk_userd_vm_ops = {
	.open = vgk_userd_open,
	.close = vgk_userd_close,
	.mremap = vgk_userd_mremap,
	.fault = vgk_userd_fault,
};

int vgk_userd_mmap(struct vgk_vgpu *v, struct vm_area_struct *vma)
{
	unsigned long pgoff = vma->vm_pgoff & VGK_PGOFF_MASK;

	if ((vma->vm_pgoff >> VGK_PGOFF_SHIFT) != VFIO_PCI_BAR2_REGION_INDEX)
		return -EINVAL;
	if (pgoff >= VGK_USERD_PAGES ||
	    vma_pages(vma) > VGK_USERD_PAGES - pgoff)
		return -EINVAL;
	/* A private copy would not be the device's page. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP |
		     VM_DONTCOPY);
	vma->vm_private_data = v;
	vma->vm_ops = &vgk_userd_vm_ops;
	return 0;
}

static struct vgk_vma *vgk_vma_next(struct vgk_vgpu *v, u64 gen)
{
	struct vgk_vma *e;

	list_for_each_entry(e, &v->vmas, node)
		if (e->gen != gen)
			return e;
	return NULL;
}

/*
 * Remove page from every tracked VMA. zap_vma_ptes() needs the VMA's
 * mmap_lock, which ranks above userd_lock (the fault path holds it when
 * it takes userd_lock): try it, and if that fails let go of userd_lock to
 * wait for it, like vfio-pci-core. Each pass marks the VMAs it covered
 * with this zap's generation; VMAs that fault in while userd_lock is let
 * go map the current page already and carry the generation from birth.
 */
static void vgk_userd_zap_page(struct vgk_vgpu *v, u32 page)
{
	struct vgk_vma *e;
	u64 gen;

	lockdep_assert_held(&v->userd_lock);
	gen = ++v->zap_gen;
	while ((e = vgk_vma_next(v, gen))) {
		struct mm_struct *mm = e->vma->vm_mm;

		if (!mmget_not_zero(mm)) {
			/* exit_mmap is taking the page tables away already. */
			e->gen = gen;
			continue;
		}
		if (!mmap_read_trylock(mm)) {
			mutex_unlock(&v->userd_lock);
			mmap_read_lock(mm);
			mutex_lock(&v->userd_lock);
		}
		list_for_each_entry(e, &v->vmas, node) {
			if (e->gen == gen || e->vma->vm_mm != mm)
				continue;
			vgk_vma_zap_page(e->vma, page);
			e->gen = gen;
		}
		mmap_read_unlock(mm);
		/* Never exit_mmap here: its .close takes userd_lock. */
		mmput_async(mm);
	}
}

/*
 * platform.userd_zap: the core holds its gpu->lock, so the channel list
 * cannot change under vg_chan_find(). A channel no longer on it is being
 * destroyed: its page leaves the table before the core frees it.
 */
void vgk_userd_zap(void *priv, struct vg_chan *ch)
{
	struct vgk_vgpu *v = priv;
	struct vg_vm *vm = READ_ONCE(v->vm);
	u32 id = vg_chan_id(ch);

	mutex_lock(&v->userd_lock);
	if (id < VGK_USERD_PAGES && v->chans[id] == ch &&
	    (!vm || vg_chan_find(vm, id) != ch))
		v->chans[id] = NULL;
	if (id < VGK_USERD_PAGES)
		vgk_userd_zap_page(v, id);
	mutex_unlock(&v->userd_lock);
}

/*
 * After CHAN_CREATE succeeded (ctrlq.c, v->lock held): make the channel
 * reachable at its page, and take the absent page out of every mapping of
 * it, so the guest's next access faults in the channel's USERD page.
 * vm->chans changes only under v->lock (control commands, reset, close),
 * so the channel found stays alive while v->lock is held. The core hands
 * out ids below VGMEM_MAX_CHANNELS; a channel whose id had no page would
 * be destroyed again.
 */
int vgk_userd_add_chan(struct vgk_vgpu *v, u32 id)
{
	struct vg_chan *ch;

	lockdep_assert_held(&v->lock);
	ch = vg_chan_lookup(v->vm, id);
	if (WARN_ON_ONCE(!ch))
		return -ENOENT;
	if (id >= VGK_USERD_PAGES) {
		vg_chan_destroy(ch);
		return -ENOSPC;
	}
	mutex_lock(&v->userd_lock);
	v->chans[id] = ch;
	vgk_userd_zap_page(v, id);
	mutex_unlock(&v->userd_lock);
	return 0;
}

/* Zeroed at open and reset: a new guest sees no bytes of the last one. */
void vgk_userd_reset_absent(struct vgk_vgpu *v)
{
	clear_highpage(v->absent);
}

/* pread/pwrite of BAR2: the same page the mapping shows. */
u32 vgk_userd_read(struct vgk_vgpu *v, u64 off)
{
	struct vg_chan *ch;
	u32 val = 0;

	mutex_lock(&v->userd_lock);
	ch = v->chans[off / VGMEM_USERD_SIZE];
	if (ch)
		val = vg_chan_userd_read(ch, off % VGMEM_USERD_SIZE);
	mutex_unlock(&v->userd_lock);
	return val;
}

void vgk_userd_write(struct vgk_vgpu *v, u64 off, u32 val)
{
	struct vg_chan *ch;

	mutex_lock(&v->userd_lock);
	ch = v->chans[off / VGMEM_USERD_SIZE];
	if (ch)
		vg_chan_userd_write(ch, off % VGMEM_USERD_SIZE, val);
	mutex_unlock(&v->userd_lock);
}
