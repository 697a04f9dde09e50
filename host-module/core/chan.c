// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Channels with GPUswap's shadow USERD pages (paper sections 4.4 and 5.3).
 *
 * The guest submits work by storing GP_PUT into a USERD page it reaches
 * directly: no trap on the submit path. To suspend a VM without stopping
 * it, each channel's page is swapped for a shadow copy that the GPU does
 * not poll; the guest keeps submitting into the shadow while its real
 * rings drain and its memory is copied. Resuming replays the shadow's
 * GP_PUT into the real page (the GPFIFO entries and pushbuffers are in
 * guest memory already, so the pointer is all there is to replay) and
 * swaps the real page back in.
 *
 * Who sees which page:
 *  - ch->cur, under ch->map_lock, is the page the guest's accesses go to.
 *    The userspace host's guests go through vg_chan_userd_read/write,
 *    which take map_lock, so a swap is atomic for them.
 *  - The kernel maps the page into the guest and zaps that mapping after
 *    a swap (platform.userd_zap); the next guest access faults in
 *    vg_chan_userd_page(). Between the swap and the end of the zap a
 *    guest store can still reach the old page, so after the zap
 *    vg_chan_fixup() carries such a store over (GPUswap avoided this by
 *    unmapping first and stalling the fault; we cannot sleep in the
 *    swap, so we reconcile instead).
 */
#include "vg_internal.h"

static inline u32 *vg_userd_word(void *page, u32 off)
{
	return (u32 *)((u8 *)page + off);
}

static inline u32 vg_userd_get(void *page, u32 off)
{
	return READ_ONCE(*vg_userd_word(page, off));
}

static inline void vg_userd_set(void *page, u32 off, u32 val)
{
	WRITE_ONCE(*vg_userd_word(page, off), val);
}

/*
 * GP_PUT is the doorbell: the GPU fetches entries up to it, so every
 * earlier store (GPFIFO entries, pushbuffers, other USERD words) must be
 * visible before it is.
 */
static inline void vg_userd_set_put(void *page, u32 val)
{
	smp_store_release(vg_userd_word(page, VGMEM_USERD_GP_PUT), val);
}

/* Engine thread: the GPU driver saw this channel fail. No core lock here. */
static void vg_chan_fault(void *priv, u32 error, u64 addr)
{
	struct vg_chan *ch = priv;

	atomic_set(&ch->error, (int)error);
	atomic64_inc(&ch->vm->faults);
	pr_debug("vgmem: %s: channel %u error %u at 0x%llx\n", ch->vm->name,
		 ch->id, error, (unsigned long long)addr);
	if (ch->vm->platform.chan_fault)
		ch->vm->platform.chan_fault(ch->vm->platform.priv, ch, error);
}

struct vg_chan *vg_chan_find(struct vg_vm *vm, u32 id)
{
	struct vg_chan *ch;

	/* vm->chans changes only under it (create, destroy). */
	lockdep_assert_held(&vm->gpu->lock);
	list_for_each_entry(ch, &vm->chans, node)
		if (ch->id == id)
			return ch;
	return NULL;
}

struct vg_chan *vg_chan_lookup(struct vg_vm *vm, u32 id)
{
	struct vg_chan *ch;

	mutex_lock(&vm->gpu->lock);
	ch = vg_chan_find(vm, id);
	mutex_unlock(&vm->gpu->lock);
	return ch;
}

u32 vg_chan_id(const struct vg_chan *ch)
{
	return ch->id;
}

/* Ids start at 1 so a zeroed command never names a channel. */
/*
 * The lowest free id: a channel's id is also its USERD page's index in the
 * vGPU's BAR2 (VGMEM_USERD_BAR_SIZE has VG_VM_MAX_CHANS pages), so ids are
 * reused and never reach VG_VM_MAX_CHANS. The caller checked nr_chans.
 */
static u32 vg_chan_next_id(struct vg_vm *vm)
{
	u32 id = 0;

	while (vg_chan_find(vm, id))
		id++;
	return id;
}

static int vg_chan_check_ring(struct vg_vm *vm, u64 gpa, u32 entries)
{
	u64 bytes, last;
	u64 probe;

	if (!IS_ALIGNED(gpa, 8))
		return -EINVAL;
	if (entries < VGMEM_GP_ENTRIES_MIN || entries > VGMEM_GP_ENTRIES_MAX ||
	    !is_power_of_2(entries))
		return -EINVAL;
	bytes = (u64)entries * 8;
	if (check_add_overflow(gpa, bytes, &last))
		return -EINVAL;
	if (!vm->gmem.read)
		return -EINVAL;
	/*
	 * The provider bounds-checks every access, so the first and the last
	 * entry being readable means the whole ring is in guest memory.
	 */
	if (vm->gmem.read(vm->gmem.priv, gpa, &probe, sizeof(probe)) ||
	    vm->gmem.read(vm->gmem.priv, last - 8, &probe, sizeof(probe)))
		return -EINVAL;
	return 0;
}

/*
 * A channel with the given id (VG_CHAN_ANY_ID: the lowest free one), with
 * gpu->lock held. In a frozen VM it is born stopped, on its shadow, and
 * runs from the thaw on like the VM's other channels.
 */
int vg_chan_create_locked(struct vg_vm *vm, u64 gpfifo_gpa, u32 entries,
			  u32 id, struct vg_chan **out)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_channel_desc desc;
	struct vg_chan *ch;
	int err;

	lockdep_assert_held(&gpu->lock);
	err = vg_chan_check_ring(vm, gpfifo_gpa, entries);
	if (err)
		return err;
	if (vm->nr_chans >= VG_VM_MAX_CHANS)
		return -ENOSPC;
	if (id != VG_CHAN_ANY_ID &&
	    (id >= VG_VM_MAX_CHANS || vg_chan_find(vm, id)))
		return -EEXIST;

	err = -ENOMEM;
	ch = kzalloc(sizeof(*ch), GFP_KERNEL);
	if (!ch)
		return -ENOMEM;
	/* A whole page: the kernel maps it into the guest while suspended. */
	ch->shadow = kzalloc(VGMEM_USERD_SIZE, GFP_KERNEL);
	if (!ch->shadow)
		goto err_free_chan;
	ch->vm = vm;
	/*
	 * Before channel_create: from then on the GPU driver's threads may call
	 * vg_chan_fault, which reads the id without a lock.
	 */
	ch->id = id == VG_CHAN_ANY_ID ? vg_chan_next_id(vm) : id;
	ch->gpfifo_gpa = gpfifo_gpa;
	ch->entries = entries;
	spin_lock_init(&ch->map_lock);
	atomic_set(&ch->error, VGMEM_CHAN_OK);

	memset(&desc, 0, sizeof(desc));
	desc.gpfifo_gpa = gpfifo_gpa;
	desc.gpfifo_entries = entries;
	desc.gmem = &vm->gmem;
	desc.fault_cb = vg_chan_fault;
	desc.fault_priv = ch;
	err = gpu->ops->channel_create(gpu->drv, vm->as, &desc, &ch->bchan,
				       &ch->real);
	if (err)
		goto err_free_shadow;
	if (vm->frozen) {
		/* Idle and new: it stops at once (else it was never there). */
		err = gpu->ops->channel_stop(gpu->drv, ch->bchan,
					     VG_STOP_TIMEOUT_NS);
		if (err) {
			gpu->ops->channel_destroy(gpu->drv, ch->bchan);
			goto err_free_shadow;
		}
		ch->stopped = true;
	}

	/*
	 * A channel born while its VM is suspended starts on its shadow, so
	 * the guest's first submissions wait for the resume like the others.
	 */
	spin_lock(&ch->map_lock);
	if (vm->suspended) {
		memcpy(ch->shadow, ch->real, VGMEM_USERD_SIZE);
		ch->cur = ch->shadow;
	} else {
		ch->cur = ch->real;
	}
	ch->swap_put = vg_userd_get(ch->cur, VGMEM_USERD_GP_PUT);
	spin_unlock(&ch->map_lock);

	list_add_tail(&ch->node, &vm->chans);
	vm->nr_chans++;
	*out = ch;
	return 0;

err_free_shadow:
	kfree(ch->shadow);
err_free_chan:
	kfree(ch);
	return err;
}

int vg_chan_create(struct vg_vm *vm, u64 gpfifo_gpa, u32 entries,
		   struct vg_chan **out)
{
	int err;

	mutex_lock(&vm->gpu->lock);
	err = vg_chan_create_locked(vm, gpfifo_gpa, entries, VG_CHAN_ANY_ID,
				    out);
	mutex_unlock(&vm->gpu->lock);
	return err;
}

void vg_chan_destroy_locked(struct vg_chan *ch)
{
	struct vg_vm *vm = ch->vm;
	struct vg_gpu *gpu = vm->gpu;

	lockdep_assert_held(&gpu->lock);
	/*
	 * Off the list first: a fault handler racing with us looks the id up
	 * (vg_chan_find, under its mapping lock, which the zap below takes)
	 * and must find nothing from here on.
	 */
	list_del(&ch->node);
	vm->nr_chans--;
	/* Then no guest mapping may outlive the pages it points at. */
	if (vm->platform.userd_zap)
		vm->platform.userd_zap(vm->platform.priv, ch);
	/* A stopped channel is destroyed as it is: nothing runs it again. */
	gpu->ops->channel_destroy(gpu->drv, ch->bchan);
	kfree(ch->shadow);
	kfree(ch);
}

void vg_chan_destroy(struct vg_chan *ch)
{
	struct vg_gpu *gpu;

	if (!ch)
		return;
	gpu = ch->vm->gpu;
	mutex_lock(&gpu->lock);
	vg_chan_destroy_locked(ch);
	mutex_unlock(&gpu->lock);
}

static bool vg_userd_off_ok(u32 off)
{
	return off < VGMEM_USERD_SIZE && IS_ALIGNED(off, 4);
}

u32 vg_chan_userd_read(struct vg_chan *ch, u32 off)
{
	u32 val;

	if (!vg_userd_off_ok(off))
		return 0;
	spin_lock(&ch->map_lock);
	val = vg_userd_get(ch->cur, off);
	spin_unlock(&ch->map_lock);
	return val;
}

void vg_chan_userd_write(struct vg_chan *ch, u32 off, u32 val)
{
	/* Everything else in USERD belongs to the GPU. */
	if (off != VGMEM_USERD_GP_PUT)
		return;
	spin_lock(&ch->map_lock);
	vg_userd_set_put(ch->cur, val);
	spin_unlock(&ch->map_lock);
}

/* The words of USERD the GPU writes, real page to shadow: map_lock held. */
static void vg_shadow_take_gpu_words(struct vg_chan *ch)
{
	static const u32 offs[] = {
		VGMEM_USERD_GP_GET,
		VGMEM_USERD_ERROR,
		VGMEM_USERD_ERROR_INFO,
		VGMEM_USERD_ERROR_ADDR_LO,
		VGMEM_USERD_ERROR_ADDR_HI,
		VGMEM_USERD_ENTRIES_DONE,
	};
	unsigned int i;

	lockdep_assert_held(&ch->map_lock);
	for (i = 0; i < ARRAY_SIZE(offs); i++)
		vg_userd_set(ch->shadow, offs[i],
			     vg_userd_get(ch->real, offs[i]));
}

void *vg_chan_userd_page(struct vg_chan *ch)
{
	void *page;

	spin_lock(&ch->map_lock);
	/*
	 * A fault on the shadow comes after the zap that ended the guest's
	 * view of the real page, which the GPU kept writing since the
	 * shadow was copied (the drain has not stopped it yet): show the
	 * GPU's words as they are now, or the guest, having read newer
	 * ones from the real page just before, would see GP_GET and
	 * ENTRIES_DONE go back. They stay frozen until the drain's refresh.
	 */
	if (ch->cur == ch->shadow)
		vg_shadow_take_gpu_words(ch);
	page = ch->cur;
	spin_unlock(&ch->map_lock);
	return page;
}

/*
 * After the zap: a guest that still had the old page mapped may have
 * stored GP_PUT there after the swap copied it. The guest cannot reach
 * the old page once the zap is done, and it reaches the new page only
 * after faulting, so a store to the new page is the later one; carry the
 * old page's store over only if the new page still holds what the swap
 * wrote. Without a platform zap (userspace) nothing can differ.
 */
static void vg_chan_fixup(struct vg_chan *ch, void *old)
{
	u32 old_put, cur_put;

	spin_lock(&ch->map_lock);
	old_put = vg_userd_get(old, VGMEM_USERD_GP_PUT);
	cur_put = vg_userd_get(ch->cur, VGMEM_USERD_GP_PUT);
	if (old_put != ch->swap_put && cur_put == ch->swap_put) {
		vg_userd_set_put(ch->cur, old_put);
		ch->swap_put = old_put;
	}
	spin_unlock(&ch->map_lock);
}

static void vg_vm_zap_and_fixup(struct vg_vm *vm, bool to_shadow)
{
	struct vg_chan *ch;

	if (!vm->platform.userd_zap)
		return;
	list_for_each_entry(ch, &vm->chans, node) {
		vm->platform.userd_zap(vm->platform.priv, ch);
		vg_chan_fixup(ch, to_shadow ? ch->real : ch->shadow);
	}
}

void vg_vm_suspend(struct vg_vm *vm)
{
	struct vg_chan *ch;

	lockdep_assert_held(&vm->gpu->lock);
	if (WARN_ON(vm->suspended))
		return;
	list_for_each_entry(ch, &vm->chans, node) {
		/*
		 * The shadow starts as an exact copy, so the guest reads the
		 * same GP_GET, errors and counters it read a moment ago.
		 */
		spin_lock(&ch->map_lock);
		memcpy(ch->shadow, ch->real, VGMEM_USERD_SIZE);
		ch->swap_put = vg_userd_get(ch->shadow, VGMEM_USERD_GP_PUT);
		ch->cur = ch->shadow;
		spin_unlock(&ch->map_lock);
	}
	vm->suspended = true;
	vg_vm_zap_and_fixup(vm, true);
}

/*
 * A drained real page holds the GPU's last word on GP_GET, the completion
 * counter and the error state: show them through the shadow so a guest
 * waiting for its work sees it finish during the suspension.
 */
static void vg_chan_refresh_shadow(struct vg_chan *ch)
{
	spin_lock(&ch->map_lock);
	vg_shadow_take_gpu_words(ch);
	spin_unlock(&ch->map_lock);
}

/* Start again every channel of vm that a drain stopped. */
static void vg_vm_start_chans(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_chan *ch;

	list_for_each_entry(ch, &vm->chans, node) {
		if (!ch->stopped)
			continue;
		gpu->ops->channel_start(gpu->drv, ch->bchan);
		ch->stopped = false;
	}
}

static u64 vg_time_left(u64 deadline)
{
	u64 now = ktime_get_ns();

	return now < deadline ? deadline - now : 0;
}

/*
 * After a drain: one that worked makes the VM a victim like any other
 * again; one that failed keeps it out of victim choice for a back-off
 * that doubles with each failure in a row (VG_DRAIN_BACKOFF_*), so an
 * allocation does not pay the stop timeout again at once for the same VM
 * and goes on with another victim meanwhile.
 */
static void vg_vm_drain_result(struct vg_vm *vm, bool ok)
{
	u64 backoff = VG_DRAIN_BACKOFF_MIN_NS;

	if (ok) {
		vm->drain_fails = 0;
		vm->drain_retry_ns = 0;
		return;
	}
	if (vm->drain_fails < U32_MAX)
		vm->drain_fails++;
	if (vm->drain_fails > 1)
		backoff <<= min_t(u32, vm->drain_fails - 1, 16);
	backoff = min_t(u64, backoff, VG_DRAIN_BACKOFF_MAX_NS);
	vm->drain_retry_ns = ktime_get_ns() + backoff;
}

/*
 * Stop every channel (channel_stop): from then on no method of the VM
 * runs until vg_vm_resume() starts it again, after the copy and the new
 * mappings. The stop is a preemption, as disabling and preempting a
 * channel is on NVIDIA hardware: a launch cut short keeps its progress
 * and goes on from there, translating its addresses anew, once started.
 * So the drain does not wait for the guest's work to finish, only for
 * the engine to leave the channel (one turn, however long the work is),
 * and a guest cannot hold gpu->lock by submitting work that never ends:
 * the whole VM gets VG_STOP_TIMEOUT_NS, which only a starved or blocked
 * engine (or hardware that cannot preempt) exceeds.
 *
 * Waiting for the rings to run dry first would gain nothing: a channel
 * parked on a semaphore acquire, or one stopped in front of work another
 * waits for, simply goes on after the resume, and everything the guest
 * submitted meanwhile is replayed from the shadows. A channel already
 * stopped (a second drain in the same suspension) stays stopped.
 */
int vg_vm_drain(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	/* One budget for the whole VM, not one per channel. */
	u64 deadline = ktime_get_ns() + VG_STOP_TIMEOUT_NS;
	struct vg_chan *ch;
	int err;

	lockdep_assert_held(&gpu->lock);
	list_for_each_entry(ch, &vm->chans, node) {
		if (ch->stopped)
			continue;
		err = gpu->ops->channel_stop(gpu->drv, ch->bchan,
					     vg_time_left(deadline));
		if (err) {
			/* A guest may cause this at will: rate-limited. */
			pr_warn_ratelimited("vgmem: %s: channel %u did not stop in %llu ms: %d\n",
					    vm->name, ch->id,
					    (unsigned long long)(VG_STOP_TIMEOUT_NS / NSEC_PER_MSEC),
					    err);
			goto err_start;
		}
		ch->stopped = true;
	}
	/* The GPU's last word, after the stop: GP_GET may have moved. */
	if (vm->suspended)
		list_for_each_entry(ch, &vm->chans, node)
			vg_chan_refresh_shadow(ch);
	vg_vm_drain_result(vm, true);
	return 0;

err_start:
	vg_vm_start_chans(vm);
	vg_vm_drain_result(vm, false);
	return err;
}

void vg_vm_resume(struct vg_vm *vm)
{
	struct vg_chan *ch;

	lockdep_assert_held(&vm->gpu->lock);
	if (WARN_ON(!vm->suspended))
		return;
	list_for_each_entry(ch, &vm->chans, node) {
		u32 put;

		/*
		 * Runnable again first, so the GP_PUT below is what it picks
		 * up (a GPU driver may sample GP_PUT when a channel starts).
		 */
		if (ch->stopped) {
			vm->gpu->ops->channel_start(vm->gpu->drv, ch->bchan);
			ch->stopped = false;
		}
		spin_lock(&ch->map_lock);
		/*
		 * Only the latest GP_PUT matters: every entry up to it is in
		 * guest memory, and the GPU fetches them in ring order from
		 * its GP_GET. The shadow started as a copy of the real page
		 * and only the guest moved it since, so this never moves the
		 * real GP_PUT backwards.
		 */
		put = vg_userd_get(ch->shadow, VGMEM_USERD_GP_PUT);
		vg_userd_set_put(ch->real, put);
		ch->swap_put = put;
		ch->cur = ch->real;
		spin_unlock(&ch->map_lock);
	}
	vm->suspended = false;
	vg_vm_zap_and_fixup(vm, false);
}

/* vg.h: the suspension above, for a memory manager outside the core. */
int vg_vm_quiesce(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	int err;

	mutex_lock(&gpu->lock);
	if (vm->frozen) {
		mutex_unlock(&gpu->lock);
		return -EBUSY;
	}
	vg_vm_suspend(vm);
	err = vg_vm_drain(vm);
	if (err) {
		vg_vm_resume(vm);
		mutex_unlock(&gpu->lock);
	}
	return err;
}

void vg_vm_unquiesce(struct vg_vm *vm)
{
	lockdep_assert_held(&vm->gpu->lock);
	vg_vm_resume(vm);
	mutex_unlock(&vm->gpu->lock);
}

/*
 * vg.h: the same suspension for a migration, held with no lock between
 * the calls. The guest keeps writing into the shadows; a relocation of
 * the VM meanwhile copies and remaps without suspending it again
 * (relocate.c), so nothing of it runs until the thaw replays the shadows.
 */
int vg_vm_freeze(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	int err;

	mutex_lock(&gpu->lock);
	if (vm->frozen) {
		err = -EALREADY;
		goto out_unlock;
	}
	vg_vm_suspend(vm);
	err = vg_vm_drain(vm);
	if (err)
		vg_vm_resume(vm);
	else
		vm->frozen = true;
out_unlock:
	mutex_unlock(&gpu->lock);
	return err;
}

void vg_vm_thaw(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;

	mutex_lock(&gpu->lock);
	if (vm->frozen) {
		vm->frozen = false;
		vg_vm_resume(vm);
	}
	mutex_unlock(&gpu->lock);
}
