// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The paging model: demand migration as NVIDIA's UVM driver does it when
 * managed memory oversubscribes the GPU.
 *
 *  - A BO starts unpopulated: its whole VA range is a fault range and
 *    nothing is mapped (cudaMallocManaged backs nothing until first touch).
 *  - A GPU access to a page of it that is not in VRAM raises a replayable
 *    fault. The handler migrates the block around the address, gran bytes
 *    (64 KiB or 2 MiB, UVM's big-page and root-chunk sizes; the block never
 *    crosses its 2 MiB chunk of the BO), into VRAM: copied from host RAM if
 *    the block had been evicted, left as fresh zeroed VRAM on first touch;
 *    then maps it, flushes the TLB, and the access is replayed.
 *  - VRAM is taken from the GPU driver in 2 MiB root chunks, each split into
 *    slots of gran bytes, and a block goes into any free slot of any root
 *    chunk, whoever owns the other slots: UVM's PMM splits its root chunks
 *    into 64 KiB chunks for whichever VA block asks, so a tenant touching
 *    64 KiB here and there holds 64 KiB of VRAM per touch, not 2 MiB.
 *  - When VRAM is full, the least recently used root chunk is evicted,
 *    whichever tenants its blocks belong to: every block in it is unmapped
 *    and flushed first (so its owner's next access faults), then copied
 *    back to host RAM, and the root chunk's VRAM is freed. "Used" is what
 *    the driver can see: a root chunk moves to the tail of the one global
 *    list whenever a fault migrates a block into it (UVM updates its
 *    root-chunk lists on allocation; GPU accesses to mapped pages raise
 *    nothing, so it sees no other use).
 *  - No fairness: a tenant with a large scan evicts everyone's blocks.
 *
 * Costs: the copies (and their device time) of the migration a fault
 * causes, evictions included, are charged to the faulting VM's model_ns;
 * the bytes are counted on the VM whose data moves.
 *
 * Simplifications: no prefetching heuristics (UVM's tree-based prefetcher
 * grows migrations towards 2 MiB on dense access; gran=2m is that limit),
 * no access-counter-based migration, no remote mapping of host memory, no
 * thrashing detection/pinning; faults are serviced one at a time where UVM
 * services a sorted batch and replays once (no difference in simulated
 * time: the cost model has no fixed cost per copy or per batch), and no
 * fault-servicing latency is charged (docs/performance.md, "paging").
 */
#include <errno.h>
#include <stdlib.h>
#include "models_priv.h"

#define VG_PG_MAX_SLOTS		(VG_MODEL_CHUNK / VG_MODEL_GRAN_SMALL)

struct vg_pg_chunk;

/* A root chunk: VG_MODEL_CHUNK of VRAM in slots of gran bytes. */
struct vg_pg_root {
	struct vg_mem *vram;
	struct list_head lru;		/* pg->lru */
	struct list_head partial;	/* pg->partial while a slot is free */
	u32 used;			/* slots holding a block */
	/* Per slot: the BO chunk and block whose data it holds (or NULL). */
	struct vg_pg_chunk *owner[VG_PG_MAX_SLOTS];
	u8 blk[VG_PG_MAX_SLOTS];
};

/* Where a resident block lives. */
struct vg_pg_place {
	struct vg_pg_root *root;
	u32 slot;
};

/* A 2 MiB-aligned piece of a BO: the unit of its host copy. */
struct vg_pg_chunk {
	struct vg_mbo *bo;
	u64 off;			/* in the BO */
	u64 size;			/* VG_MODEL_CHUNK, or less for the tail */
	struct vg_mem *host;		/* from the first eviction on */
	u64 resident;			/* blocks in VRAM and mapped (bit each) */
	u64 in_host;			/* blocks whose data is in host */
	struct vg_pg_place *at;		/* per block, from the first touch on */
};

/*
 * A BO's paging state; also the priv of its fault range, registered with
 * the core's dispatch (vg_fault_register), so a fault comes with its BO.
 * Released under m->lock, where the registration goes asynchronously: a
 * fault call under way may still be waiting for m->lock then, so the
 * state is freed only once that call returns (vg_pg_bo_free), and the
 * call does nothing when it finds dead set.
 */
struct vg_pg_bo {
	struct vg_model *m;
	struct vg_mbo *bo;
	struct vg_fault_reg *freg;
	bool dead;			/* released (m->lock) */
	u32 nr;
	struct vg_pg_chunk c[];
};

struct vg_pg {
	struct list_head lru;		/* root chunks, head: least recently used */
	struct list_head partial;	/* root chunks with a free slot */
	u32 nslots;			/* VG_MODEL_CHUNK / gran */
};

static u64 vg_pg_block_len(const struct vg_pg_chunk *c, u64 gran, u32 i)
{
	u64 off = (u64)i * gran;

	return min(gran, c->size - off);
}

static u32 vg_pg_nr_blocks(const struct vg_pg_chunk *c, u64 gran)
{
	return (u32)((c->size + gran - 1) / gran);
}

static u64 vg_pg_block_va(const struct vg_pg_chunk *c, u64 gran, u32 i)
{
	return c->bo->va + c->off + (u64)i * gran;
}

/* Map block i of c where it lives, into its owner's AS, and flush. */
static int vg_pg_map_block(struct vg_model *m, struct vg_pg_chunk *c, u32 i)
{
	struct vg_as *as = c->bo->v->as;
	u64 gran = m->p.gran, va = vg_pg_block_va(c, gran, i);
	u64 len = vg_pg_block_len(c, gran, i);
	const struct vg_pg_place *p = &c->at[i];
	int err;

	err = m->bops->map(m->b, as, va, len, p->root->vram,
			   (u64)p->slot * gran);
	if (err) {
		m->bops->unmap(m->b, as, va, len);
		return err;
	}
	m->bops->tlb_flush(m->b, as);
	return 0;
}

/* A slot no longer holds a block; an empty root chunk gives VRAM back. */
static void vg_pg_slot_put(struct vg_model *m, struct vg_pg_root *r, u32 slot)
{
	struct vg_pg *pg = m->priv;

	r->owner[slot] = NULL;
	r->used--;
	if (!r->used) {
		list_del(&r->lru);
		list_del(&r->partial);
		m->bops->mem_free(m->b, r->vram);
		free(r);
		return;
	}
	if (list_empty(&r->partial))
		list_add_tail(&r->partial, &pg->partial);
}

/*
 * Evict root chunk r: unmap and flush every block in it (their owners'
 * next accesses fault and wait for m->lock, held here), copy them to their
 * chunks' host copies in one batch, free r. Copy time goes to *ns. On
 * failure every mapping is back and nothing else changed (a host copy
 * allocated for it is kept for next time).
 */
static int vg_pg_evict(struct vg_model *m, struct vg_pg_root *r, u64 *ns)
{
	struct vg_copy copies[VG_PG_MAX_SLOTS];
	struct vg_model_vm *owners[VG_PG_MAX_SLOTS];
	struct vg_pg *pg = m->priv;
	u64 gran = m->p.gran, fence, dns = 0, len;
	u32 s, k, n = 0, nown = 0;
	struct vg_pg_chunk *c;
	int err;

	for (s = 0; s < pg->nslots; s++) {
		c = r->owner[s];
		if (c && !c->host) {
			err = m->bops->mem_alloc(m->b, VG_LOC_HOST, c->size,
						 &c->host);
			if (err)
				return err;
		}
	}
	for (s = 0; s < pg->nslots; s++) {
		c = r->owner[s];
		if (!c)
			continue;
		m->bops->unmap(m->b, c->bo->v->as,
			       vg_pg_block_va(c, gran, r->blk[s]),
			       vg_pg_block_len(c, gran, r->blk[s]));
		m->bops->tlb_flush(m->b, c->bo->v->as);
		copies[n].src = r->vram;
		copies[n].src_off = (u64)s * gran;
		copies[n].dst = c->host;
		copies[n].dst_off = (u64)r->blk[s] * gran;
		copies[n].len = vg_pg_block_len(c, gran, r->blk[s]);
		n++;
	}
	err = m->bops->copy_submit(m->b, copies, n, &fence);
	if (!err)
		err = m->bops->copy_wait(m->b, fence, &dns);
	if (err)
		goto err_remap;
	*ns += dns;

	for (s = 0; s < pg->nslots; s++) {
		c = r->owner[s];
		if (!c)
			continue;
		len = vg_pg_block_len(c, gran, r->blk[s]);
		c->resident &= ~(1ull << r->blk[s]);
		c->in_host |= 1ull << r->blk[s];
		c->bo->v->st.bytes_to_host += len;
		c->bo->v->st.resident -= len;
		m->vram_used -= len;
		/* One eviction per VM whose data this root chunk held. */
		for (k = 0; k < nown && owners[k] != c->bo->v; k++)
			;
		if (k == nown) {
			owners[nown++] = c->bo->v;
			c->bo->v->st.evictions++;
		}
		c->at[r->blk[s]].root = NULL;
		r->owner[s] = NULL;
	}
	list_del(&r->lru);
	list_del(&r->partial);
	m->bops->mem_free(m->b, r->vram);
	free(r);
	return 0;

err_remap:
	for (s = 0; s < pg->nslots; s++)
		if (r->owner[s] && vg_pg_map_block(m, r->owner[s], r->blk[s]))
			pr_warn("vgmem: paging: restoring a mapping failed\n");
	return err;
}

/*
 * A free slot for a block: in a root chunk with room, else in a new root
 * chunk, evicting the least recently used ones while VRAM is full
 * (-ENOMEM if there is none to evict). The slot is reserved (used, owner
 * set) on return.
 */
static int vg_pg_slot_get(struct vg_model *m, struct vg_pg_chunk *c, u32 blk,
			  u64 *ns, struct vg_pg_place *out)
{
	struct vg_pg *pg = m->priv;
	struct vg_pg_root *r;
	u32 s;
	int err;

	r = list_first_entry_or_null(&pg->partial, struct vg_pg_root, partial);
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		for (;;) {
			err = m->bops->mem_alloc(m->b, VG_LOC_VRAM,
						 VG_MODEL_CHUNK, &r->vram);
			if (!err)
				break;
			if (err == -ENOSPC && !list_empty(&pg->lru))
				err = vg_pg_evict(m, list_first_entry(&pg->lru,
						struct vg_pg_root, lru), ns);
			else if (err == -ENOSPC)
				err = -ENOMEM;	/* VRAM is not ours to evict */
			if (err) {
				free(r);
				return err;
			}
		}
		list_add_tail(&r->lru, &pg->lru);
		list_add_tail(&r->partial, &pg->partial);
	}
	for (s = 0; s < pg->nslots && r->owner[s]; s++)
		;
	r->owner[s] = c;
	r->blk[s] = (u8)blk;
	if (++r->used == pg->nslots)
		list_del_init(&r->partial);
	out->root = r;
	out->slot = s;
	return 0;
}

/* Migrate the block of bo around va into VRAM; m->lock held. */
static int vg_pg_fault(struct vg_model_vm *v, struct vg_mbo *bo, u64 va)
{
	struct vg_model *m = v->m;
	struct vg_pg *pg = m->priv;
	struct vg_pg_bo *pb = bo->priv;
	struct vg_pg_chunk *c;
	u64 gran = m->p.gran, off = va - bo->va, len, ns = 0;
	struct vg_pg_place *p;
	u32 i;
	int err;

	c = &pb->c[off / VG_MODEL_CHUNK];
	i = (u32)((off - c->off) / gran);
	len = vg_pg_block_len(c, gran, i);
	v->st.faults++;
	if (c->resident & (1ull << i)) {
		/*
		 * A stale fault: its access raced the migration of the same
		 * block by another fault. Nothing migrates, so the LRU does
		 * not move (UVM updates it on allocation only); the block is
		 * mapped again, so a replay can never fault on it forever.
		 */
		return vg_pg_map_block(m, c, i);
	}
	if (!c->at) {
		c->at = calloc(vg_pg_nr_blocks(c, gran), sizeof(*c->at));
		if (!c->at)
			return -ENOMEM;
	}
	p = &c->at[i];
	err = vg_pg_slot_get(m, c, i, &ns, p);
	if (err)
		goto out;
	if (c->in_host & (1ull << i)) {
		err = vg_model_copy(m, c->host, (u64)i * gran, p->root->vram,
				    (u64)p->slot * gran, len, &ns);
		if (err)
			goto err_put_slot;
		v->st.bytes_to_vram += len;
	}
	err = vg_pg_map_block(m, c, i);
	if (err)
		goto err_put_slot;
	c->resident |= 1ull << i;
	v->st.resident += len;
	m->vram_used += len;
	/* A migration into the root chunk: it becomes the most recent. */
	list_move_tail(&p->root->lru, &pg->lru);
	goto out;

err_put_slot:
	vg_pg_slot_put(m, p->root, p->slot);
	p->root = NULL;
out:
	v->st.model_ns += ns;
	return err;
}

/*
 * The core's fault dispatch, on the GPU driver's fault thread (no GPU driver or
 * core lock held), for a fault in a BO's range: priv is the BO's state.
 */
static int vg_pg_handler(void *priv, const struct vg_gpu_fault *f)
{
	struct vg_pg_bo *pb = priv;
	struct vg_model *m = pb->m;
	int err = -EFAULT;

	pthread_mutex_lock(&m->lock);
	/* Released while this call waited for the lock: the BO is gone. */
	if (!pb->dead && !WARN_ON_ONCE(f->as != pb->bo->v->as))
		err = vg_pg_fault(pb->bo->v, pb->bo, f->va);
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* The release of a BO's registration: no fault call uses pb any more. */
static void vg_pg_bo_free(void *priv)
{
	free(priv);
}

static int vg_pg_place(struct vg_model_vm *v, struct vg_mbo *bo)
{
	struct vg_model *m = v->m;
	struct vg_pg_bo *pb;
	u32 i, nr = (u32)((bo->size + VG_MODEL_CHUNK - 1) / VG_MODEL_CHUNK);
	int err;

	pb = calloc(1, sizeof(*pb) + nr * sizeof(pb->c[0]));
	if (!pb)
		return -ENOMEM;
	pb->m = m;
	pb->bo = bo;
	pb->nr = nr;
	for (i = 0; i < nr; i++) {
		pb->c[i].bo = bo;
		pb->c[i].off = (u64)i * VG_MODEL_CHUNK;
		pb->c[i].size = min(VG_MODEL_CHUNK, bo->size - pb->c[i].off);
	}
	err = vg_fault_register(m->gpu, v->as, bo->va, bo->size,
				vg_pg_handler, pb, &pb->freg);
	if (err) {
		free(pb);
		return err;
	}
	bo->priv = pb;
	bo->loc = VG_LOC_HOST;	/* nothing in VRAM until touched */
	return 0;
}

static void vg_pg_release(struct vg_model_vm *v, struct vg_mbo *bo)
{
	struct vg_model *m = v->m;
	struct vg_pg_bo *pb = bo->priv;
	struct vg_pg_chunk *c;
	u32 i, b, nb;
	u64 len;

	/* No fault call can use pb meanwhile: each waits for m->lock. */
	pb->dead = true;
	m->bops->unmap(m->b, v->as, bo->va, bo->size);
	m->bops->tlb_flush(m->b, v->as);
	for (i = 0; i < pb->nr; i++) {
		c = &pb->c[i];
		nb = vg_pg_nr_blocks(c, m->p.gran);
		for (b = 0; b < nb; b++) {
			if (!(c->resident & (1ull << b)))
				continue;
			len = vg_pg_block_len(c, m->p.gran, b);
			v->st.resident -= len;
			m->vram_used -= len;
			vg_pg_slot_put(m, c->at[b].root, c->at[b].slot);
		}
		free(c->at);
		if (c->host)
			m->bops->mem_free(m->b, c->host);
	}
	/*
	 * Range off, and pb freed once no fault call uses it: under m->lock,
	 * which such a call may be waiting for, so without waiting here.
	 */
	vg_fault_unregister_async(pb->freg, vg_pg_bo_free);
	bo->priv = NULL;
}

static int vg_pg_init(struct vg_model *m)
{
	struct vg_pg *pg;

	/* The core owns the GPU's fault handler; BOs register their ranges. */
	if (!m->gpu || !m->bops->set_fault_handler || !m->bops->fault_range)
		return -EOPNOTSUPP;
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	INIT_LIST_HEAD(&pg->lru);
	INIT_LIST_HEAD(&pg->partial);
	pg->nslots = (u32)(VG_MODEL_CHUNK / m->p.gran);
	m->priv = pg;
	return 0;
}

/*
 * After the GPU and the sim are gone (models_priv.h): every BO was freed
 * with its VM (its registration with it; the GPU's teardown waited for a
 * fault call under way), and the last block out of a root chunk freed it.
 */
static void vg_pg_fini(struct vg_model *m)
{
	struct vg_pg *pg = m->priv;

	WARN_ON(!list_empty(&pg->lru));
	free(pg);
	m->priv = NULL;
}

const struct vg_model_ops vg_model_paging_ops = {
	.kind = VG_MODEL_PAGING,
	.name = "paging",
	.init = vg_pg_init,
	.fini = vg_pg_fini,
	.vm_fini = vg_mbo_free_all,
	.bo_ctrl = vg_mbo_ctrl,
	.bo_place = vg_pg_place,
	.bo_release = vg_pg_release,
};
