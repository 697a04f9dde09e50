// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GPU address spaces: a three-level page table over a 40-bit VA (bits
 * 39:30, 29:21, 20:12, as a real GPU's), 4 KiB PTEs pointing at (mem, page).
 * Tables are allocated on first use and freed once they map nothing: each
 * leaf counts its valid PTEs and each middle table its leaves, so unmap
 * frees what became empty. Otherwise a guest could map and free a small
 * buffer at every 2 MiB of its VA space and pin ~8 KiB of host memory per
 * step until its address space goes (the whole 40 bits: gigabytes). Outside
 * a map or unmap call no empty table exists.
 *
 * Each PTE holds a reference on its mem. map over a mapped page replaces the
 * PTE (that is what a real PTE write does; relocation relies on it).
 *
 * Channels cache translations in a small TLB tagged with as->gen. tlb_flush
 * bumps the generation; so does every PTE change, which a real GPU would not
 * do: it makes a missing flush a stale-data bug at worst, never a use of
 * freed memory in the simulator.
 *
 * The engine translates and touches memory one step at a time under
 * as->lock and yields it between steps to anyone announced in as->waiters
 * (see sim_internal.h): a map of an unrelated range never waits for a long
 * kernel, and once map/unmap/tlb_flush return, no later step can see the
 * old PTEs (they bump as->gen, which every TLB hit checks under the lock).
 */
#include "sim_internal.h"

static inline u32 sim_l0_idx(u64 va)
{
	return (u32)(va >> (SIM_PAGE_SHIFT + SIM_L2_BITS + SIM_L1_BITS)) &
	       (SIM_L0_SIZE - 1);
}

static inline u32 sim_l1_idx(u64 va)
{
	return (u32)(va >> (SIM_PAGE_SHIFT + SIM_L2_BITS)) & (SIM_L1_SIZE - 1);
}

static inline u32 sim_l2_idx(u64 va)
{
	return (u32)(va >> SIM_PAGE_SHIFT) & (SIM_L2_SIZE - 1);
}

int sim_as_create(struct vg_sim *sim, struct vg_as **out)
{
	struct vg_as *as;

	as = kzalloc(sizeof(*as), GFP_KERNEL);
	if (!as)
		return -ENOMEM;
	as->l0 = kvcalloc(SIM_L0_SIZE, sizeof(*as->l0), GFP_KERNEL);
	if (!as->l0) {
		kfree(as);
		return -ENOMEM;
	}
	as->sim = sim;
	mutex_init(&as->lock);
	atomic_set(&as->waiters, 0);
	init_waitqueue_head(&as->waiters_wq);
	atomic_set(&as->refs, 1);
	as->gen = 1;
	atomic_inc(&sim->nr_as);
	*out = as;
	return 0;
}

/* Drop every PTE's mem reference and free the tables. */
static void sim_as_free_tables(struct vg_as *as)
{
	struct sim_pt1 *l1;
	struct sim_pt2 *l2;
	u32 i, j, k;

	for (i = 0; i < SIM_L0_SIZE; i++) {
		l1 = as->l0[i];
		if (!l1)
			continue;
		for (j = 0; j < SIM_L1_SIZE; j++) {
			l2 = l1->l2[j];
			if (!l2)
				continue;
			for (k = 0; k < SIM_L2_SIZE; k++)
				if (l2->pte[k].mem)
					sim_mem_put(l2->pte[k].mem);
			kvfree(l2);
			atomic_dec(&as->sim->nr_tables);
		}
		kvfree(l1);
		atomic_dec(&as->sim->nr_tables);
	}
	kvfree(as->l0);
}

void sim_as_put(struct vg_as *as)
{
	struct vg_sim *sim = as->sim;

	if (!atomic_dec_and_test(&as->refs))
		return;
	sim_as_free_tables(as);
	sim_as_fault_ranges_free(as);
	mutex_destroy(&as->lock);
	kfree(as);
	(void)atomic_add_return(-1, &sim->nr_as);
}

void sim_as_lock(struct vg_as *as)
{
	atomic_inc(&as->waiters);
	mutex_lock(&as->lock);
	/* Ours: the engine may go on once every announced waiter had it. */
	if (!atomic_add_return(-1, &as->waiters))
		wake_up_all(&as->waiters_wq);
}

void sim_as_unlock(struct vg_as *as)
{
	mutex_unlock(&as->lock);
}

const struct sim_pte *sim_as_walk(struct vg_as *as, u64 va)
{
	struct sim_pt1 *l1;
	struct sim_pt2 *l2;
	const struct sim_pte *pte;

	lockdep_assert_held(&as->lock);
	if (va >= SIM_VA_LIMIT)
		return NULL;
	l1 = as->l0[sim_l0_idx(va)];
	if (!l1)
		return NULL;
	l2 = l1->l2[sim_l1_idx(va)];
	if (!l2)
		return NULL;
	pte = &l2->pte[sim_l2_idx(va)];
	return pte->mem ? pte : NULL;
}

/* The leaf table covering va, allocating the levels on the way. */
static struct sim_pt2 *sim_as_leaf(struct vg_as *as, u64 va, bool alloc)
{
	struct sim_pt1 **l1p = &as->l0[sim_l0_idx(va)];
	struct sim_pt2 **l2p;

	lockdep_assert_held(&as->lock);
	if (!*l1p) {
		if (!alloc)
			return NULL;
		*l1p = kvzalloc(sizeof(**l1p), GFP_KERNEL);
		if (!*l1p)
			return NULL;
		atomic_inc(&as->sim->nr_tables);
	}
	l2p = &(*l1p)->l2[sim_l1_idx(va)];
	if (!*l2p && alloc) {
		*l2p = kvzalloc(sizeof(**l2p), GFP_KERNEL);
		if (*l2p) {
			(*l1p)->nr_l2++;
			atomic_inc(&as->sim->nr_tables);
		}
	}
	return *l2p;
}

/* Free the leaf covering va if it maps nothing, then its L1 if it is empty. */
static void sim_as_prune(struct vg_as *as, u64 va)
{
	struct sim_pt1 **l1p = &as->l0[sim_l0_idx(va)];
	struct sim_pt2 **l2p;

	lockdep_assert_held(&as->lock);
	if (!*l1p)
		return;
	l2p = &(*l1p)->l2[sim_l1_idx(va)];
	if (*l2p && !(*l2p)->nr_valid) {
		kvfree(*l2p);
		*l2p = NULL;
		(*l1p)->nr_l2--;
		atomic_dec(&as->sim->nr_tables);
	}
	if (!(*l1p)->nr_l2) {
		kvfree(*l1p);
		*l1p = NULL;
		atomic_dec(&as->sim->nr_tables);
	}
}

#define SIM_L2_SPAN	((u64)SIM_L2_SIZE << SIM_PAGE_SHIFT)

int sim_as_map(struct vg_as *as, u64 va, u64 size, struct vg_mem *mem,
	       u64 mem_off)
{
	return sim_as_map_prot(as, va, size, mem, mem_off, VG_PROT_RW);
}

/*
 * The PTEs get their protection in the same write that makes them valid,
 * under as->lock: no access can see the page mapped but not yet
 * write-protected (map followed by protect leaves that window open).
 */
int sim_as_map_prot(struct vg_as *as, u64 va, u64 size, struct vg_mem *mem,
		    u64 mem_off, u32 prot)
{
	struct vg_mem *old, *run = NULL;
	struct sim_pt2 *l2;
	struct sim_pte *pte;
	u64 end, v, page;
	u32 i, nrun = 0;

	if (!mem || !size || !IS_ALIGNED(va, SIM_PAGE_SIZE) ||
	    !IS_ALIGNED(size, SIM_PAGE_SIZE) ||
	    !IS_ALIGNED(mem_off, SIM_PAGE_SIZE) ||
	    check_add_overflow(va, size, &end) || end > SIM_VA_LIMIT ||
	    mem_off > mem->size || size > mem->size - mem_off ||
	    (prot != VG_PROT_RW && prot != VG_PROT_RO))
		return -EINVAL;
	if (sim_inject_hit(as->sim, VG_SIM_INJ_MAP))
		return -ENOMEM;

	sim_as_lock(as);
	/*
	 * Allocate every table first so a failure changes nothing visible
	 * (empty tables translate like absent ones).
	 */
	for (v = va; v < end; v = (v | (SIM_L2_SPAN - 1)) + 1) {
		if (!sim_as_leaf(as, v, true))
			goto err_prune;
	}
	/*
	 * This runs while a relocated VM is suspended: one walk per leaf,
	 * and the references of all PTEs in one atomic, taken before any
	 * old one drops (some PTEs may map mem already), the replaced ones
	 * dropped per run of PTEs that mapped the same mem.
	 */
	sim_mem_get_many(mem, (u32)(size >> SIM_PAGE_SHIFT));
	page = mem_off >> SIM_PAGE_SHIFT;
	for (v = va; v < end;) {
		l2 = sim_as_leaf(as, v, false);
		for (i = sim_l2_idx(v); i < SIM_L2_SIZE && v < end;
		     i++, v += SIM_PAGE_SIZE, page++) {
			pte = &l2->pte[i];
			old = pte->mem;
			pte->mem = mem;
			pte->page = (u32)page;
			/* A PTE write sets every bit, the protection too. */
			pte->flags = prot == VG_PROT_RO ? SIM_PTE_RO : 0;
			if (!old) {
				l2->nr_valid++;
				continue;
			}
			if (old != run) {
				sim_mem_put_many(run, nrun);
				run = old;
				nrun = 0;
			}
			nrun++;
		}
	}
	sim_mem_put_many(run, nrun);
	as->gen++;
	sim_as_unlock(as);
	return 0;

err_prune:
	/* The tables allocated so far are empty: free them again. */
	for (end = v, v = va; v <= end; v = (v | (SIM_L2_SPAN - 1)) + 1)
		sim_as_prune(as, v);
	sim_as_unlock(as);
	return -ENOMEM;
}

/*
 * Every mapped PTE of [va, end), as->lock held: fn(pte, arg) on each, leaf
 * by leaf, freeing each leaf that ends up empty (fn may unmap). Bumps the
 * TLB generation: no channel's TLB keeps what was there.
 */
static void sim_as_each_pte(struct vg_as *as, u64 va, u64 end,
			    void (*fn)(struct sim_pt2 *l2, struct sim_pte *pte,
				       u32 prot),
			    u32 prot)
{
	struct sim_pt2 *l2;
	struct sim_pte *pte;
	u64 v, p, next;

	lockdep_assert_held(&as->lock);
	for (v = va; v < end; v = next) {
		next = min((v | (SIM_L2_SPAN - 1)) + 1, end);
		l2 = sim_as_leaf(as, v, false);
		if (!l2)
			continue;
		for (p = v; p < next; p += SIM_PAGE_SIZE) {
			pte = &l2->pte[sim_l2_idx(p)];
			if (pte->mem)
				fn(l2, pte, prot);
		}
		if (!l2->nr_valid)
			sim_as_prune(as, v);
	}
	as->gen++;
}

static void sim_pte_clear(struct sim_pt2 *l2, struct sim_pte *pte, u32 prot)
{
	(void)prot;
	sim_mem_put(pte->mem);
	pte->mem = NULL;
	pte->page = 0;
	pte->flags = 0;
	l2->nr_valid--;
}

static void sim_pte_protect(struct sim_pt2 *l2, struct sim_pte *pte, u32 prot)
{
	(void)l2;
	if (prot == VG_PROT_RO)
		pte->flags |= SIM_PTE_RO;
	else
		pte->flags &= ~SIM_PTE_RO;
}

void sim_as_unmap(struct vg_as *as, u64 va, u64 size)
{
	u64 end;

	if (WARN_ON(!IS_ALIGNED(va, SIM_PAGE_SIZE) ||
		    !IS_ALIGNED(size, SIM_PAGE_SIZE) ||
		    check_add_overflow(va, size, &end) || end > SIM_VA_LIMIT))
		return;

	sim_as_lock(as);
	sim_as_each_pte(as, va, end, sim_pte_clear, 0);
	sim_as_unlock(as);
}

int sim_as_protect(struct vg_as *as, u64 va, u64 size, u32 prot)
{
	u64 end;

	if (!size || !IS_ALIGNED(va, SIM_PAGE_SIZE) ||
	    !IS_ALIGNED(size, SIM_PAGE_SIZE) ||
	    check_add_overflow(va, size, &end) || end > SIM_VA_LIMIT ||
	    (prot != VG_PROT_RW && prot != VG_PROT_RO))
		return -EINVAL;

	/* Takes effect at once: the walk bumps the TLB generation. */
	sim_as_lock(as);
	sim_as_each_pte(as, va, end, sim_pte_protect, prot);
	sim_as_unlock(as);
	return 0;
}

void sim_as_tlb_flush(struct vg_as *as)
{
	sim_as_lock(as);
	as->gen++;
	sim_as_unlock(as);
}

u64 vg_sim_pt_tables(struct vg_sim *sim)
{
	return (u64)atomic_read(&sim->nr_tables);
}

int vg_sim_read_va(struct vg_sim *sim, struct vg_as *as, u64 va, void *buf,
		   u64 len)
{
	const struct sim_pte *pte;
	u8 *dst = buf;
	u64 off, n, end;
	int err = 0;

	(void)sim;
	if (!as || (len && !buf) || check_add_overflow(va, len, &end))
		return -EFAULT;
	sim_as_lock(as);
	while (len) {
		pte = sim_as_walk(as, va);
		if (!pte) {
			err = -EFAULT;
			break;
		}
		off = va & (SIM_PAGE_SIZE - 1);
		n = min_t(u64, len, SIM_PAGE_SIZE - off);
		memcpy(dst, sim_mem_page(pte->mem, pte->page) + off, n);
		dst += n;
		va += n;
		len -= n;
	}
	sim_as_unlock(as);
	return err;
}

/* ---- translation for the engine ------------------------------------------ */

void sim_exec_lock(struct sim_exec *x)
{
	mutex_lock(&x->as->lock);
}

/* The step completed: what it touched goes into the AS's counters. */
static void sim_exec_commit(struct sim_exec *x)
{
	lockdep_assert_held(&x->as->lock);
	x->as->cost.bytes_vram += x->step_vram;
	x->as->cost.bytes_host += x->step_host;
	x->step_vram = 0;
	x->step_host = 0;
}

void sim_exec_discard(struct sim_exec *x)
{
	x->step_vram = 0;
	x->step_host = 0;
}

void sim_exec_unlock(struct sim_exec *x)
{
	sim_exec_commit(x);
	mutex_unlock(&x->as->lock);
}

void sim_exec_relax(struct sim_exec *x, u32 bytes)
{
	struct vg_as *as = x->as;

	lockdep_assert_held(&as->lock);
	sim_exec_commit(x);
	x->since_resched += bytes;
	if (x->since_resched < SIM_STEP_BYTES && !atomic_read(&as->waiters))
		return;
	x->since_resched = 0;
	mutex_unlock(&as->lock);
	/*
	 * A mutex is not fair: retaken at once, it could be ours again before
	 * a woken waiter runs. Wait until every announced waiter had it.
	 */
	wait_event(as->waiters_wq, !atomic_read(&as->waiters));
	cond_resched();
	mutex_lock(&as->lock);
}

/*
 * A failed translation: say what the fault would be (no PTE, or a write to
 * a read-only one) and whether it is replayable, for sim_va_fault.
 */
static bool sim_translate_fail(struct sim_exec *x, u64 va, bool write,
			       bool present)
{
	/* The step stops here and is redone (or the channel errors). */
	sim_exec_discard(x);
	x->pf_write = write;
	x->pf_present = present;
	x->pf_range = sim_as_in_fault_range(x->as, va);
	return false;
}

/*
 * The channel's TLB first, then the page table. An entry is valid only for
 * the generation it was filled in. A write through a read-only entry
 * fails like a missing one (present set).
 */
static bool sim_translate(struct sim_exec *x, u64 va, bool write,
			  struct vg_mem **mem, u32 *page)
{
	struct vg_as *as = x->as;
	u64 vpn = va >> SIM_PAGE_SHIFT;
	struct sim_tlb_ent *e = &x->ch->tlb[vpn & (SIM_TLB_SIZE - 1)];
	const struct sim_pte *pte;

	lockdep_assert_held(&as->lock);
	if (e->gen != as->gen || e->vpn != vpn) {
		pte = sim_as_walk(as, va);
		if (!pte)
			return sim_translate_fail(x, va, write, false);
		e->gen = as->gen;
		e->vpn = vpn;
		e->mem = pte->mem;
		e->page = pte->page;
		e->flags = pte->flags;
	}
	if (write && (e->flags & SIM_PTE_RO))
		return sim_translate_fail(x, va, write, true);
	*mem = e->mem;
	*page = e->page;
	return true;
}

u8 *sim_va_span(struct sim_exec *x, u64 va, u64 len, bool write, u32 *span)
{
	struct vg_mem *mem;
	u32 page, off = (u32)(va & (SIM_PAGE_SIZE - 1));
	u64 n = min_t(u64, len, SIM_PAGE_SIZE - off);

	if (!sim_translate(x, va, write, &mem, &page))
		return NULL;
	if (mem->loc == VG_LOC_VRAM)
		x->step_vram += n;
	else
		x->step_host += n;
	atomic64_inc(&mem->access);
	*span = (u32)n;
	return sim_mem_page(mem, page) + off;
}

int sim_va_fault(struct sim_exec *x, u64 va)
{
	if (x->pf_range)
		return sim_fault_raise(x, va);
	sim_chan_fault(x->ch, VGMEM_CHAN_ERR_VA, x->mthd, va);
	return VGMEM_CHAN_ERR_VA;
}

/*
 * A page span at a time, into rbuf (a read) or from wbuf (a write). A
 * fault on a later page leaves the earlier ones done; the step is redone
 * whole on replay (their cost was discarded with the fault).
 */
static int sim_va_rw(struct sim_exec *x, u64 va, u8 *rbuf, const u8 *wbuf,
		     u32 len)
{
	u8 *p;
	u32 n;

	while (len) {
		p = sim_va_span(x, va, len, wbuf != NULL, &n);
		if (!p)
			return sim_va_fault(x, va);
		if (wbuf) {
			memcpy(p, wbuf, n);
			wbuf += n;
		} else {
			memcpy(rbuf, p, n);
			rbuf += n;
		}
		va += n;
		len -= n;
	}
	return 0;
}

int sim_va_read(struct sim_exec *x, u64 va, void *buf, u32 len)
{
	return sim_va_rw(x, va, buf, NULL, len);
}

int sim_va_write(struct sim_exec *x, u64 va, const void *buf, u32 len)
{
	return sim_va_rw(x, va, NULL, buf, len);
}
