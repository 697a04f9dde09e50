// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GPU address spaces: a three-level page table over a 40-bit VA (bits
 * 39:30, 29:21, 20:12, as a real GPU's), 4 KiB PTEs pointing at (mem, page).
 * Tables are allocated on first use and freed once they map nothing: each
 * leaf counts its valid PTEs and each middle table its used entries, so
 * unmap frees what became empty. Otherwise a guest could map and free a
 * small buffer at every 2 MiB of its VA space and pin ~8 KiB of host memory
 * per step until its address space goes (the whole 40 bits: gigabytes).
 * Outside a map or unmap call no empty table exists.
 *
 * Big pages: as a real GPU maps VRAM with 2 MiB PDEs, a map that covers a
 * whole 2 MiB-aligned 2 MiB of VA with 512 pages of one mem starting at a
 * multiple of 512 (the same alignment a real big page needs physically)
 * writes one middle-table entry instead of 512 PTEs, and frees the leaf it
 * replaces. Relocating a 2 MiB chunk is then one entry write, not 512: it
 * runs while the victim is suspended. Any change to part of a big page
 * first splits it into a leaf of 512 equal PTEs; translations never see
 * the difference (the TLB caches 4 KiB translations of either).
 *
 * Each PTE and each big page holds a reference on its mem. map over a
 * mapped page replaces the PTE (that is what a real PTE write does;
 * relocation relies on it).
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

#define SIM_L2_SPAN	SIM_BIG_SIZE

/* The start of the next leaf span after va. */
static inline u64 sim_span_next(u64 va)
{
	return (va | (SIM_L2_SPAN - 1)) + 1;
}

/*
 * Mem references to drop, gathered per run of entries that mapped the same
 * mem: one atomic per run instead of one per PTE.
 */
struct sim_putrun {
	struct vg_mem *mem;
	u32 n;
};

static void sim_putrun_add(struct sim_putrun *r, struct vg_mem *mem)
{
	if (mem != r->mem) {
		sim_mem_put_many(r->mem, r->n);
		r->mem = mem;
		r->n = 0;
	}
	r->n++;
}

static void sim_putrun_end(struct sim_putrun *r)
{
	sim_mem_put_many(r->mem, r->n);
	r->mem = NULL;
	r->n = 0;
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

/* Queue the references of a leaf's valid PTEs for dropping. */
static void sim_leaf_drop(struct sim_pt2 *l2, struct sim_putrun *run)
{
	u32 k;

	for (k = 0; k < SIM_L2_SIZE; k++)
		if (l2->pte[k].mem)
			sim_putrun_add(run, l2->pte[k].mem);
}

/* Drop every PTE's and big page's mem reference and free the tables. */
static void sim_as_free_tables(struct vg_as *as)
{
	struct sim_putrun run = { 0 };
	struct sim_pt1 *l1;
	struct sim_pde *pde;
	u32 i, j;

	for (i = 0; i < SIM_L0_SIZE; i++) {
		l1 = as->l0[i];
		if (!l1)
			continue;
		for (j = 0; j < SIM_L1_SIZE; j++) {
			pde = &l1->pde[j];
			if (pde->big.mem)
				sim_putrun_add(&run, pde->big.mem);
			if (!pde->l2)
				continue;
			sim_leaf_drop(pde->l2, &run);
			kvfree(pde->l2);
			atomic_dec(&as->sim->nr_tables);
		}
		kvfree(l1);
		atomic_dec(&as->sim->nr_tables);
	}
	sim_putrun_end(&run);
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

bool sim_as_walk(struct vg_as *as, u64 va, struct sim_pte *pte)
{
	const struct sim_pt1 *l1;
	const struct sim_pde *pde;
	const struct sim_pte *p;

	lockdep_assert_held(&as->lock);
	if (va >= SIM_VA_LIMIT)
		return false;
	l1 = as->l0[sim_l0_idx(va)];
	if (!l1)
		return false;
	pde = &l1->pde[sim_l1_idx(va)];
	if (pde->big.mem) {
		*pte = pde->big;
		pte->page += sim_l2_idx(va);
		return true;
	}
	if (!pde->l2)
		return false;
	p = &pde->l2->pte[sim_l2_idx(va)];
	if (!p->mem)
		return false;
	*pte = *p;
	return true;
}

/* The middle table covering va, allocated if alloc. */
static struct sim_pt1 *sim_as_l1(struct vg_as *as, u64 va, bool alloc)
{
	struct sim_pt1 **l1p = &as->l0[sim_l0_idx(va)];

	lockdep_assert_held(&as->lock);
	if (!*l1p && alloc) {
		*l1p = kvzalloc(sizeof(**l1p), GFP_KERNEL);
		if (*l1p)
			atomic_inc(&as->sim->nr_tables);
	}
	return *l1p;
}

/* An empty leaf for an unused entry of l1. */
static int sim_pde_alloc_leaf(struct vg_as *as, struct sim_pt1 *l1,
			      struct sim_pde *pde)
{
	pde->l2 = kvzalloc(sizeof(*pde->l2), GFP_KERNEL);
	if (!pde->l2)
		return -ENOMEM;
	l1->nr_used++;
	atomic_inc(&as->sim->nr_tables);
	return 0;
}

/*
 * Turn the big page of pde into a leaf of 512 PTEs translating the same:
 * the big page's reference goes to one of them, 511 more are taken. Nothing
 * a translation sees changes.
 */
static int sim_pde_split(struct vg_as *as, struct sim_pde *pde)
{
	struct sim_pt2 *l2;
	u32 i;

	lockdep_assert_held(&as->lock);
	/* Every field is written below: no need to zero 8 KiB first. */
	l2 = kvmalloc(sizeof(*l2), GFP_KERNEL);
	if (!l2)
		return -ENOMEM;
	for (i = 0; i < SIM_L2_SIZE; i++) {
		l2->pte[i].mem = pde->big.mem;
		l2->pte[i].page = pde->big.page + i;
		l2->pte[i].flags = pde->big.flags;
	}
	l2->nr_valid = SIM_L2_SIZE;
	sim_mem_get_many(pde->big.mem, SIM_L2_SIZE - 1);
	pde->l2 = l2;
	pde->big.mem = NULL;
	pde->big.page = 0;
	pde->big.flags = 0;
	atomic_inc(&as->sim->nr_tables);
	return 0;
}

/* Free the leaf covering va if it maps nothing, then its L1 if it is empty. */
static void sim_as_prune(struct vg_as *as, u64 va)
{
	struct sim_pt1 **l1p = &as->l0[sim_l0_idx(va)];
	struct sim_pde *pde;

	lockdep_assert_held(&as->lock);
	if (!*l1p)
		return;
	pde = &(*l1p)->pde[sim_l1_idx(va)];
	if (pde->l2 && !pde->l2->nr_valid) {
		kvfree(pde->l2);
		pde->l2 = NULL;
		(*l1p)->nr_used--;
		atomic_dec(&as->sim->nr_tables);
	}
	if (!(*l1p)->nr_used) {
		kvfree(*l1p);
		*l1p = NULL;
		atomic_dec(&as->sim->nr_tables);
	}
}

/*
 * Can [v, end) of a map, at mem page page, start with a big page? The whole
 * 2 MiB span from a 2 MiB boundary, from a 512-page boundary of the mem.
 */
static bool sim_big_fits(u64 v, u64 end, u64 page)
{
	return IS_ALIGNED(v, SIM_BIG_SIZE) && end - v >= SIM_BIG_SIZE &&
	       IS_ALIGNED(page, SIM_L2_SIZE);
}

int sim_as_map(struct vg_as *as, u64 va, u64 size, struct vg_mem *mem,
	       u64 mem_off)
{
	return sim_as_map_prot(as, va, size, mem, mem_off, VG_PROT_RW);
}

/*
 * Every span of the map gets what it needs before any PTE changes, so a
 * failure changes nothing visible (empty tables translate like absent
 * ones, a split big page like the big page): the L1 table for a big page;
 * a leaf for a partial span, split from a big page found there.
 * *nbig: how many spans take a big page.
 */
static int sim_as_map_prepare(struct vg_as *as, u64 va, u64 end, u64 page,
			      u32 *nbig)
{
	struct sim_pt1 *l1;
	struct sim_pde *pde;
	u64 v;

	*nbig = 0;
	for (v = va; v < end; v = sim_span_next(v)) {
		l1 = sim_as_l1(as, v, true);
		if (!l1)
			goto err_prune;
		pde = &l1->pde[sim_l1_idx(v)];
		if (sim_big_fits(v, end, page + ((v - va) >> SIM_PAGE_SHIFT))) {
			(*nbig)++;
			continue;
		}
		if (pde->big.mem) {
			if (sim_pde_split(as, pde))
				goto err_prune;
		} else if (!pde->l2) {
			if (sim_pde_alloc_leaf(as, l1, pde))
				goto err_prune;
		}
	}
	return 0;

err_prune:
	/* The tables allocated so far are empty: free them again. */
	for (end = v, v = va; v <= end; v = sim_span_next(v))
		sim_as_prune(as, v);
	/* Splits translate the same; the bump only keeps things simple. */
	as->gen++;
	return -ENOMEM;
}

/*
 * The PTEs get their protection in the same write that makes them valid,
 * under as->lock: no access can see the page mapped but not yet
 * write-protected (map followed by protect leaves that window open).
 */
int sim_as_map_prot(struct vg_as *as, u64 va, u64 size, struct vg_mem *mem,
		    u64 mem_off, u32 prot)
{
	struct sim_putrun run = { 0 };
	struct sim_pt1 *l1;
	struct sim_pde *pde;
	struct sim_pt2 *l2;
	struct sim_pte *pte;
	u64 end, v, p, next, page, pg;
	u32 i, nbig, flags = prot == VG_PROT_RO ? SIM_PTE_RO : 0;

	if (!mem || !size || !IS_ALIGNED(va, SIM_PAGE_SIZE) ||
	    !IS_ALIGNED(size, SIM_PAGE_SIZE) ||
	    !IS_ALIGNED(mem_off, SIM_PAGE_SIZE) ||
	    check_add_overflow(va, size, &end) || end > SIM_VA_LIMIT ||
	    mem_off > mem->size || size > mem->size - mem_off ||
	    (prot != VG_PROT_RW && prot != VG_PROT_RO))
		return -EINVAL;
	if (sim_inject_hit(as->sim, VG_SIM_INJ_MAP))
		return -ENOMEM;

	page = mem_off >> SIM_PAGE_SHIFT;
	sim_as_lock(as);
	if (sim_as_map_prepare(as, va, end, page, &nbig)) {
		sim_as_unlock(as);
		return -ENOMEM;
	}
	/*
	 * This runs while a relocated VM is suspended: one walk per span,
	 * one entry per big page, and the references of all PTEs and big
	 * pages in one atomic, taken before any old one drops (some may map
	 * mem already), the replaced ones dropped per run that mapped the
	 * same mem.
	 */
	sim_mem_get_many(mem, (u32)(size >> SIM_PAGE_SHIFT) -
			      nbig * (SIM_L2_SIZE - 1));
	for (v = va; v < end; v = next) {
		next = min(sim_span_next(v), end);
		pg = page + ((v - va) >> SIM_PAGE_SHIFT);
		l1 = as->l0[sim_l0_idx(v)];
		pde = &l1->pde[sim_l1_idx(v)];
		if (sim_big_fits(v, end, pg)) {
			if (pde->l2) {
				/* The leaf it replaces goes. */
				sim_leaf_drop(pde->l2, &run);
				kvfree(pde->l2);
				pde->l2 = NULL;
				atomic_dec(&as->sim->nr_tables);
			} else if (pde->big.mem) {
				sim_putrun_add(&run, pde->big.mem);
			} else {
				l1->nr_used++;
			}
			pde->big.mem = mem;
			pde->big.page = (u32)pg;
			pde->big.flags = flags;
			continue;
		}
		l2 = pde->l2;
		for (p = v, i = sim_l2_idx(v); p < next;
		     p += SIM_PAGE_SIZE, i++, pg++) {
			pte = &l2->pte[i];
			if (pte->mem)
				sim_putrun_add(&run, pte->mem);
			else
				l2->nr_valid++;
			pte->mem = mem;
			pte->page = (u32)pg;
			/* A PTE write sets every bit, the protection too. */
			pte->flags = flags;
		}
	}
	sim_putrun_end(&run);
	as->gen++;
	sim_as_unlock(as);
	return 0;
}

/*
 * Split the big pages that [va, end) covers only partly: at most two, the
 * spans of va and of end - 1 (the others are whole).
 */
static int sim_as_split_ends(struct vg_as *as, u64 va, u64 end)
{
	u64 ends[2] = { va, end - 1 };
	struct sim_pt1 *l1;
	struct sim_pde *pde;
	u64 v, s;
	u32 i;

	lockdep_assert_held(&as->lock);
	for (i = 0; i < 2; i++) {
		v = ends[i];
		s = v & ~(SIM_L2_SPAN - 1);
		if (s >= va && s + SIM_L2_SPAN <= end)
			continue;
		l1 = sim_as_l1(as, v, false);
		if (!l1)
			continue;
		pde = &l1->pde[sim_l1_idx(v)];
		if (pde->big.mem && sim_pde_split(as, pde))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Unmap (unmap true) or set prot on every mapped page of [va, end), as->lock
 * held, span by span, freeing each table that ends up empty. Big pages are
 * changed whole (the caller split those the range covers only partly).
 * Bumps the TLB generation: no channel's TLB keeps what was there.
 */
static void sim_as_change(struct vg_as *as, u64 va, u64 end, bool unmap,
			  u32 prot)
{
	struct sim_putrun run = { 0 };
	struct sim_pt1 *l1;
	struct sim_pde *pde;
	struct sim_pt2 *l2;
	struct sim_pte *pte;
	u64 v, p, next;

	lockdep_assert_held(&as->lock);
	for (v = va; v < end; v = next) {
		next = min(sim_span_next(v), end);
		l1 = as->l0[sim_l0_idx(v)];
		if (!l1)
			continue;
		pde = &l1->pde[sim_l1_idx(v)];
		if (pde->big.mem && unmap) {
			sim_putrun_add(&run, pde->big.mem);
			pde->big.mem = NULL;
			pde->big.page = 0;
			pde->big.flags = 0;
			l1->nr_used--;
			sim_as_prune(as, v);
			continue;
		}
		if (pde->big.mem) {
			if (prot == VG_PROT_RO)
				pde->big.flags |= SIM_PTE_RO;
			else
				pde->big.flags &= ~SIM_PTE_RO;
			continue;
		}
		l2 = pde->l2;
		if (!l2)
			continue;
		for (p = v; p < next; p += SIM_PAGE_SIZE) {
			pte = &l2->pte[sim_l2_idx(p)];
			if (!pte->mem)
				continue;
			if (!unmap) {
				if (prot == VG_PROT_RO)
					pte->flags |= SIM_PTE_RO;
				else
					pte->flags &= ~SIM_PTE_RO;
				continue;
			}
			sim_putrun_add(&run, pte->mem);
			pte->mem = NULL;
			pte->page = 0;
			pte->flags = 0;
			l2->nr_valid--;
		}
		if (!l2->nr_valid)
			sim_as_prune(as, v);
	}
	sim_putrun_end(&run);
	as->gen++;
}

void sim_as_unmap(struct vg_as *as, u64 va, u64 size)
{
	u64 end;

	if (WARN_ON(!IS_ALIGNED(va, SIM_PAGE_SIZE) ||
		    !IS_ALIGNED(size, SIM_PAGE_SIZE) ||
		    check_add_overflow(va, size, &end) || end > SIM_VA_LIMIT))
		return;
	if (!size)
		return;

	sim_as_lock(as);
	/*
	 * unmap cannot fail. If a big page the range covers partly cannot
	 * be split (an 8 KiB allocation failed), it goes whole: its other
	 * pages fault afterwards (a replayable fault range maps them again)
	 * rather than staying mapped to memory the caller believes unmapped.
	 */
	if (sim_as_split_ends(as, va, end))
		pr_warn_once("vgmem-sim: no memory to split a big page, unmapped whole\n");
	sim_as_change(as, va, end, true, 0);
	sim_as_unlock(as);
}

int sim_as_protect(struct vg_as *as, u64 va, u64 size, u32 prot)
{
	u64 end;
	int err;

	if (!size || !IS_ALIGNED(va, SIM_PAGE_SIZE) ||
	    !IS_ALIGNED(size, SIM_PAGE_SIZE) ||
	    check_add_overflow(va, size, &end) || end > SIM_VA_LIMIT ||
	    (prot != VG_PROT_RW && prot != VG_PROT_RO))
		return -EINVAL;

	/* Takes effect at once: the change bumps the TLB generation. */
	sim_as_lock(as);
	err = sim_as_split_ends(as, va, end);
	if (!err)
		sim_as_change(as, va, end, false, prot);
	else
		as->gen++;	/* a split translates the same; kept simple */
	sim_as_unlock(as);
	return err;
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
	struct sim_pte pte;
	u8 *dst = buf;
	u64 off, n, end;
	int err = 0;

	(void)sim;
	if (!as || (len && !buf) || check_add_overflow(va, len, &end))
		return -EFAULT;
	sim_as_lock(as);
	while (len) {
		if (!sim_as_walk(as, va, &pte)) {
			err = -EFAULT;
			break;
		}
		off = va & (SIM_PAGE_SIZE - 1);
		n = min_t(u64, len, SIM_PAGE_SIZE - off);
		memcpy(dst, sim_mem_page(pte.mem, pte.page) + off, n);
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
	struct sim_pte pte;

	lockdep_assert_held(&as->lock);
	if (e->gen != as->gen || e->vpn != vpn) {
		if (!sim_as_walk(as, va, &pte))
			return sim_translate_fail(x, va, write, false);
		e->gen = as->gen;
		e->vpn = vpn;
		e->mem = pte.mem;
		e->page = pte.page;
		e->flags = pte.flags;
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
