// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replayable GPU faults: the core owns each GPU's one GPU driver fault
 * handler and dispatches every fault by (address space, address) to the
 * registrant of the range (vg.h, vg_fault_register). The LRC file cache
 * and the paging peer model both register ranges, so one GPU serves both,
 * and neither searches its own contexts or maps for the faulting one: the
 * handler gets the registrant's priv for exactly that range.
 *
 * Lifetime of a registration (the free_irq rule, per range):
 *  - live: in its AS's tree; the dispatcher may start calls of its fn.
 *  - dead: out of the tree (no call starts any more), fault_range off;
 *    calls already started may still be running (reg->running counts
 *    them). The registration and its priv are freed only once running
 *    is 0: by vg_fault_unregister after its wait, or, after
 *    vg_fault_unregister_async, by whoever ends the last call.
 * running only rises under disp->lock, and only for a live registration,
 * so once a registration is dead under that lock its count only falls.
 */
#include "vg_internal.h"

/* An address space with registered ranges (disp->lock). */
struct vg_fault_as {
	struct vg_va_node node;		/* disp->ases: [as, as + 1) */
	struct vg_as *as;
	struct vg_va_tree ranges;	/* struct vg_fault_reg.node */
};

/*
 * One registered range. fn, priv and the range are fixed at registration;
 * dead, release and the tree node are disp->lock's; running is written
 * under disp->lock and read without it by vg_fault_unregister's wait.
 * Rule (asserted where a registration is freed): freed only with running
 * == 0 and dead set, so no call of fn(priv) is under way or can start.
 */
struct vg_fault_reg {
	struct vg_gpu *gpu;
	struct vg_fault_as *fas;	/* NULL once dead */
	struct vg_va_node node;		/* fas->ranges: [va, va + size) */
	vg_fault_fn fn;
	void *priv;
	atomic_t running;		/* calls of fn under way */
	bool dead;
	bool async;			/* the last call frees it (and releases) */
	void (*release)(void *priv);
};

#define VG_FAULT_VA_ALIGN	4096ull

static struct vg_fault_as *vg_fault_as_find(struct vg_fault_disp *d,
					    struct vg_as *as)
{
	struct vg_va_node *n;

	lockdep_assert_held(&d->lock);
	n = vg_va_lookup(&d->ases, (u64)(uintptr_t)as);
	return n ? container_of(n, struct vg_fault_as, node) : NULL;
}

/* The live registration holding va in fas, or NULL: O(log n). */
static struct vg_fault_reg *vg_fault_reg_at(struct vg_fault_as *fas, u64 va)
{
	struct vg_va_node *n = vg_va_end_after(&fas->ranges, va);

	if (!n || n->start > va)
		return NULL;
	return container_of(n, struct vg_fault_reg, node);
}

/* The GPU driver's one handler: its fault thread, no GPU driver or core lock. */
static int vg_fault_dispatch(void *priv, const struct vg_gpu_fault *f)
{
	struct vg_gpu *gpu = priv;
	struct vg_fault_disp *d = &gpu->fault;
	struct vg_fault_reg *reg = NULL, *to_free = NULL;
	struct vg_fault_as *fas;
	void (*release)(void *priv) = NULL;
	void *rpriv = NULL;
	int err;

	mutex_lock(&d->lock);
	fas = vg_fault_as_find(d, f->as);
	if (fas)
		reg = vg_fault_reg_at(fas, f->va);
	if (!reg) {
		/* A range torn down while its fault was queued, or a stray one. */
		d->unclaimed++;
		mutex_unlock(&d->lock);
		return -EFAULT;
	}
	atomic_inc(&reg->running);
	d->dispatched++;
	mutex_unlock(&d->lock);

	err = reg->fn(reg->priv, f);

	mutex_lock(&d->lock);
	if (reg->dead && reg->async && atomic_read(&reg->running) == 1) {
		atomic_set(&reg->running, 0);
		to_free = reg;
		release = reg->release;
		rpriv = reg->priv;
	} else {
		/* After the decrement a waiting unregister may free reg. */
		bool dead = reg->dead;

		if (atomic_dec_and_test(&reg->running) && dead)
			wake_up_all(&d->wq);
	}
	mutex_unlock(&d->lock);
	if (to_free) {
		kfree(to_free);
		if (release)
			release(rpriv);
	}
	return err;
}

void vg_fault_init(struct vg_gpu *gpu)
{
	struct vg_fault_disp *d = &gpu->fault;

	mutex_init(&d->lock);
	init_waitqueue_head(&d->wq);
	/* Pointer keys: a node per AS is [as, as + 1), no alignment. */
	vg_va_init(&d->ases, 0, ~0ull, 1);
	d->installed = gpu->ops->set_fault_handler && gpu->ops->fault_range;
	if (d->installed)
		gpu->ops->set_fault_handler(gpu->drv, vg_fault_dispatch, gpu);
}

void vg_fault_fini(struct vg_gpu *gpu)
{
	struct vg_fault_disp *d = &gpu->fault;

	/* Waits for a dispatch under way, and with it for its fn's call. */
	lockdep_assert_not_held(&gpu->lock);
	if (d->installed)
		gpu->ops->set_fault_handler(gpu->drv, NULL, NULL);
	d->installed = false;
	/* Registrants unregister before the GPU (and its ASes) go. */
	WARN_ON(d->ases.count || d->nr_ranges);
	mutex_destroy(&d->lock);
}

int vg_fault_register(struct vg_gpu *gpu, struct vg_as *as, u64 va,
		      u64 size, vg_fault_fn fn, void *priv,
		      struct vg_fault_reg **out)
{
	struct vg_fault_as *fas, *new_as = NULL;
	struct vg_fault_disp *d;
	struct vg_fault_reg *reg;
	struct vg_va_node *n;
	u64 end;
	int err;

	if (!gpu || !as || !fn || !out || !size ||
	    !IS_ALIGNED(va, VG_FAULT_VA_ALIGN) ||
	    !IS_ALIGNED(size, VG_FAULT_VA_ALIGN) ||
	    check_add_overflow(va, size, &end) || end == ~0ull)
		return -EINVAL;
	d = &gpu->fault;
	if (!d->installed)
		return -ENODEV;
	reg = kzalloc(sizeof(*reg), GFP_KERNEL);
	if (!reg)
		return -ENOMEM;
	reg->gpu = gpu;
	reg->fn = fn;
	reg->priv = priv;
	reg->node.start = va;
	reg->node.end = end;
	atomic_set(&reg->running, 0);

	mutex_lock(&d->lock);
	fas = vg_fault_as_find(d, as);
	if (!fas) {
		/* Allocated under the lock: the innermost lock may sleep. */
		new_as = kzalloc(sizeof(*new_as), GFP_KERNEL);
		if (!new_as) {
			err = -ENOMEM;
			goto err_unlock;
		}
		new_as->as = as;
		new_as->node.start = (u64)(uintptr_t)as;
		new_as->node.end = new_as->node.start + 1;
		vg_va_init(&new_as->ranges, 0, ~0ull, VG_FAULT_VA_ALIGN);
		fas = new_as;
	} else {
		n = vg_va_end_after(&fas->ranges, va);
		if (n && n->start < end) {
			err = -EEXIST;
			goto err_unlock;
		}
	}
	err = gpu->ops->fault_range(gpu->drv, as, va, size, true);
	if (err)
		goto err_unlock;
	if (new_as)
		vg_va_insert(&d->ases, &new_as->node);
	vg_va_insert(&fas->ranges, &reg->node);
	reg->fas = fas;
	d->nr_ranges++;
	mutex_unlock(&d->lock);
	*out = reg;
	return 0;

err_unlock:
	mutex_unlock(&d->lock);
	kfree(new_as);
	kfree(reg);
	return err;
}

/* Take reg out of dispatch and turn its range off: no call starts now. */
static void vg_fault_kill(struct vg_fault_reg *reg)
{
	struct vg_gpu *gpu = reg->gpu;
	struct vg_fault_disp *d = &gpu->fault;
	struct vg_fault_as *fas = reg->fas;
	int err;

	lockdep_assert_held(&d->lock);
	if (WARN_ON(reg->dead))
		return;
	vg_va_remove(&fas->ranges, &reg->node);
	/* Exactly the range put on (the GPU driver's contract). */
	err = gpu->ops->fault_range(gpu->drv, fas->as, reg->node.start,
				    reg->node.end - reg->node.start, false);
	WARN_ON_ONCE(err);
	if (!fas->ranges.count) {
		vg_va_remove(&d->ases, &fas->node);
		kfree(fas);
	}
	reg->fas = NULL;
	reg->dead = true;
	d->nr_ranges--;
}

void vg_fault_unregister(struct vg_fault_reg *reg)
{
	struct vg_fault_disp *d;

	if (!reg)
		return;
	d = &reg->gpu->fault;
	/* Every registrant's handler may take gpu->lock (GPU ops). */
	lockdep_assert_not_held(&reg->gpu->lock);
	mutex_lock(&d->lock);
	vg_fault_kill(reg);
	mutex_unlock(&d->lock);
	/*
	 * Dead: running only falls now; its last call wakes d->wq. Acquire:
	 * a call's reads of reg come before its decrement, and must come
	 * before the kfree below (a relaxed read seeing 0 orders nothing).
	 */
	wait_event(d->wq, !atomic_read_acquire(&reg->running));
	/* The rule of struct vg_fault_reg: no call of fn(priv) is under way. */
	WARN_ON(atomic_read(&reg->running) || !reg->dead);
	kfree(reg);
}

void vg_fault_unregister_async(struct vg_fault_reg *reg,
			       void (*release)(void *priv))
{
	struct vg_fault_disp *d;
	bool now;
	void *priv;

	if (!reg)
		return;
	d = &reg->gpu->fault;
	mutex_lock(&d->lock);
	vg_fault_kill(reg);
	now = !atomic_read(&reg->running);
	if (!now) {
		/* The dispatcher ending the last call frees and releases. */
		reg->async = true;
		reg->release = release;
	}
	priv = reg->priv;
	mutex_unlock(&d->lock);
	if (now) {
		WARN_ON(atomic_read(&reg->running));
		kfree(reg);
		if (release)
			release(priv);
	}
}

void vg_fault_get_stats(struct vg_gpu *gpu, struct vg_fault_stats *st)
{
	struct vg_fault_disp *d = &gpu->fault;

	mutex_lock(&d->lock);
	st->dispatched = d->dispatched;
	st->unclaimed = d->unclaimed;
	st->ranges = d->nr_ranges;
	st->ases = d->ases.count;
	mutex_unlock(&d->lock);
}
