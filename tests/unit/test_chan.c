// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Channels and GPUswap's shadow USERD pages (core/chan.c) against the fake
 * GPU driver: ring validation, the per-VM channel limit, guest USERD access
 * rules, suspend/drain/resume semantics, the zap fixup of the kernel path
 * and a guest hammering GP_PUT while its VM is swapped in and out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define GMEM_SIZE	(1ull << 20)
#define RING_GPA	0x1000ull
#define RING_ENTRIES	64u

/* A platform zap that plays a guest storing to the page it still maps. */
struct zap_play {
	u32 calls;
	bool store_old;		/* store old_put into the page being left */
	u32 old_put;
	bool store_new;		/* then store new_put into the page swapped in */
	u32 new_put;
	/* What a fault handler looking the id up inside the zap would find. */
	u32 lookups;
	u32 still_listed;
};

struct fx {
	struct cfx c;
	struct vg_vm *vm;	/* c.vm[0] */
	struct cfx_gmem gm;
	struct zap_play zap;
};

static void zap_cb(void *priv, struct vg_chan *ch)
{
	struct zap_play *z = priv;
	void *left = ch->cur == ch->shadow ? ch->real : ch->shadow;

	z->calls++;
	/* The core holds gpu->lock here, as vg_chan_find() wants. */
	z->lookups++;
	if (vg_chan_find(ch->vm, vg_chan_id(ch)) == ch)
		z->still_listed++;
	/* The swap is done; the guest's stale mapping still reaches left. */
	if (z->store_old)
		*(volatile u32 *)((u8 *)left + VGMEM_USERD_GP_PUT) = z->old_put;
	if (z->store_new)
		*(volatile u32 *)((u8 *)ch->cur + VGMEM_USERD_GP_PUT) = z->new_put;
}

static int fx_setup_common(void **state, bool with_zap,
			   const struct vg_gpu_ops *ops)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cfx_opts o = {
		.name = "gpu0", .vram = 16 * VG_CHUNK_MIN,
		.chunk = VG_CHUNK_MIN, .seed = 1, .ops = ops,
	};
	struct vg_vm_config vc = { .name = "vm0" };

	assert_non_null(f);
	cfx_gmem_init(&f->gm, GMEM_SIZE);
	cfx_init_opts(&f->c, &o);
	vc.gmem = cfx_gmem_of(&f->gm);
	if (with_zap) {
		vc.platform.userd_zap = zap_cb;
		vc.platform.priv = &f->zap;
	}
	f->vm = cfx_vm_cfg(&f->c, &vc);
	*state = f;
	return 0;
}

static int fx_setup(void **state)
{
	return fx_setup_common(state, false, &fake_ops);
}

static int fx_setup_zap(void **state)
{
	return fx_setup_common(state, true, &fake_ops);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	cfx_fini(&f->c);
	cfx_gmem_fini(&f->gm);
	free(f);
	return 0;
}

static struct vg_chan *mkchan(struct fx *f)
{
	struct vg_chan *ch = NULL;

	assert_int_equal(vg_chan_create(f->vm, RING_GPA, RING_ENTRIES, &ch), 0);
	assert_non_null(ch);
	return ch;
}

/* The GPU's view: the guest may store to the page meanwhile. */
static u32 real_word(struct vg_chan *ch, u32 off)
{
	return READ_ONCE(fake_bchan_userd(ch->bchan)[off / 4]);
}

static void set_real_word(struct vg_chan *ch, u32 off, u32 val)
{
	fake_bchan_userd(ch->bchan)[off / 4] = val;
}

static void suspend(struct fx *f)
{
	mutex_lock(&f->c.gpu->lock);
	vg_vm_suspend(f->vm);
	mutex_unlock(&f->c.gpu->lock);
}

static void resume(struct fx *f)
{
	mutex_lock(&f->c.gpu->lock);
	vg_vm_resume(f->vm);
	mutex_unlock(&f->c.gpu->lock);
}

static int drain(struct fx *f)
{
	int err;

	mutex_lock(&f->c.gpu->lock);
	err = vg_vm_drain(f->vm);
	mutex_unlock(&f->c.gpu->lock);
	return err;
}

/* ---- creation ----------------------------------------------------------- */

static void test_create_rejects_bad_rings(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = NULL;
	static const struct {
		u64 gpa;
		u32 entries;
	} bad[] = {
		{ RING_GPA + 4, RING_ENTRIES },		/* not 8-byte aligned */
		{ RING_GPA + 1, RING_ENTRIES },
		{ RING_GPA, 0 },
		{ RING_GPA, 2 },			/* below MIN */
		{ RING_GPA, 48 },			/* not a power of two */
		{ RING_GPA, VGMEM_GP_ENTRIES_MAX * 2 },	/* above MAX */
		{ RING_GPA, 0x80000000u },
		{ ~0ull & ~7ull, RING_ENTRIES },	/* gpa + size overflows */
		{ 0xfffffffffffff000ull, 1024 },
		{ GMEM_SIZE, RING_ENTRIES },		/* first entry outside */
		{ GMEM_SIZE - 8 * 32, 64 },		/* last entry outside */
		{ GMEM_SIZE - 8, VGMEM_GP_ENTRIES_MIN },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(vg_chan_create(f->vm, bad[i].gpa,
						bad[i].entries, &ch), -EINVAL);
	}
	assert_null(ch);
	assert_int_equal(f->vm->nr_chans, 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_CREATE), 0);

	/* The edges that are fine: the ring ends exactly at the end. */
	assert_int_equal(vg_chan_create(f->vm, GMEM_SIZE - 8 * 64, 64, &ch), 0);
	vg_chan_destroy(ch);
	assert_int_equal(vg_chan_create(f->vm, 0, VGMEM_GP_ENTRIES_MIN, &ch), 0);
	vg_chan_destroy(ch);
	assert_int_equal(fake_nr_chans(f->c.fb), 0);
}

static void test_create_limit_and_ids(void **state)
{
	struct fx *f = *state;
	struct vg_chan *chans[VG_VM_MAX_CHANS], *ch = NULL;
	u32 i, j, id;

	for (i = 0; i < VG_VM_MAX_CHANS; i++)
		chans[i] = mkchan(f);
	assert_int_equal(vg_chan_create(f->vm, RING_GPA, RING_ENTRIES, &ch),
			 -ENOSPC);
	assert_null(ch);
	assert_int_equal(fake_nr_chans(f->c.fb), VG_VM_MAX_CHANS);

	for (i = 0; i < VG_VM_MAX_CHANS; i++) {
		/* An id is the channel's USERD page in BAR2. */
		assert_true(vg_chan_id(chans[i]) < VG_VM_MAX_CHANS);
		assert_ptr_equal(vg_chan_lookup(f->vm, vg_chan_id(chans[i])),
				 chans[i]);
		for (j = 0; j < i; j++)
			assert_int_not_equal(vg_chan_id(chans[i]),
					     vg_chan_id(chans[j]));
	}
	assert_null(vg_chan_lookup(f->vm, VG_VM_MAX_CHANS));

	/* Ids are reused, lowest first, so they never outgrow the BAR. */
	for (i = 0; i < 3 * VG_VM_MAX_CHANS; i++) {
		u32 k = i % VG_VM_MAX_CHANS;

		id = vg_chan_id(chans[k]);
		vg_chan_destroy(chans[k]);
		assert_null(vg_chan_lookup(f->vm, id));
		chans[k] = mkchan(f);
		assert_int_equal(vg_chan_id(chans[k]), id);
	}
	/* The core's own lookup, under the lock it asserts. */
	mutex_lock(&f->c.gpu->lock);
	assert_ptr_equal(vg_chan_find(f->vm, vg_chan_id(chans[3])), chans[3]);
	assert_null(vg_chan_find(f->vm, ~0u));
	mutex_unlock(&f->c.gpu->lock);

	for (i = 0; i < VG_VM_MAX_CHANS; i++)
		vg_chan_destroy(chans[i]);
	assert_int_equal(f->vm->nr_chans, 0);
	assert_int_equal(fake_nr_chans(f->c.fb), 0);
	vg_chan_destroy(NULL);
}

static void test_create_failures_leave_nothing(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = NULL;
	int n;

	fake_fail(f->c.fb, FAKE_OP_CHAN_CREATE, 1);
	assert_int_equal(vg_chan_create(f->vm, RING_GPA, RING_ENTRIES, &ch),
			 -ENOMEM);
	assert_null(ch);
	/* Each of the core's own allocations in turn. */
	for (n = 0; n < 2; n++) {
		os_fail_alloc_after(n);
		assert_int_equal(vg_chan_create(f->vm, RING_GPA, RING_ENTRIES,
						&ch), -ENOMEM);
		os_fail_alloc_after(-1);
		assert_null(ch);
	}
	assert_int_equal(f->vm->nr_chans, 0);
	assert_int_equal(fake_nr_chans(f->c.fb), 0);
	ch = mkchan(f);
	vg_chan_destroy(ch);
}

/* The GPU driver got the ring and our guest memory. */
static void test_create_desc(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);
	const struct vg_channel_desc *d = fake_bchan_desc(ch->bchan);

	assert_int_equal(d->gpfifo_gpa, RING_GPA);
	assert_int_equal(d->gpfifo_entries, RING_ENTRIES);
	assert_non_null(d->gmem);
	assert_ptr_equal(d->gmem->priv, &f->gm);
	assert_ptr_equal(fake_bchan_as(ch->bchan), vg_vm_gpu_as(f->vm));
	assert_ptr_equal(vg_chan_userd_page(ch), ch->real);
	vg_chan_destroy(ch);
}

/* ---- guest USERD access ------------------------------------------------- */

static void test_userd_access_rules(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);
	u8 before[VGMEM_USERD_SIZE];

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 5);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 5);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 5);

	/* The GPU's words are read-only to the guest. */
	set_real_word(ch, VGMEM_USERD_GP_GET, 3);
	set_real_word(ch, VGMEM_USERD_ERROR, VGMEM_CHAN_ERR_VA);
	memcpy(before, ch->real, sizeof(before));
	vg_chan_userd_write(ch, VGMEM_USERD_GP_GET, 77);
	vg_chan_userd_write(ch, VGMEM_USERD_ERROR, 0);
	vg_chan_userd_write(ch, VGMEM_USERD_ENTRIES_DONE, 9);
	vg_chan_userd_write(ch, 0, 1);
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT + 1, 1);	/* unaligned */
	vg_chan_userd_write(ch, VGMEM_USERD_SIZE, 1);
	vg_chan_userd_write(ch, 0xffffffffu, 1);
	assert_memory_equal(before, ch->real, sizeof(before));

	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 3);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ERROR),
			 VGMEM_CHAN_ERR_VA);
	/* Bad offsets read 0 whatever is there. */
	set_real_word(ch, VGMEM_USERD_SIZE - 4, 0xdead);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_SIZE - 4), 0xdead);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_SIZE - 3), 0);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET + 2), 0);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_SIZE), 0);
	assert_int_equal(vg_chan_userd_read(ch, 0xfffffffcu), 0);
	vg_chan_destroy(ch);
}

static void test_fault_cb_counts(void **state)
{
	struct fx *f = *state;
	struct vg_chan *a = mkchan(f), *b = mkchan(f);
	struct vgmem_vm_stats st;

	assert_int_equal(atomic_read(&a->error), VGMEM_CHAN_OK);
	fake_bchan_fault(a->bchan, VGMEM_CHAN_ERR_METHOD, 0x1234);
	fake_bchan_fault(b->bchan, VGMEM_CHAN_ERR_VA, 0x100000000ull);
	fake_bchan_fault(b->bchan, VGMEM_CHAN_ERR_PUSHBUF, 0);
	assert_int_equal(atomic_read(&a->error), VGMEM_CHAN_ERR_METHOD);
	assert_int_equal(atomic_read(&b->error), VGMEM_CHAN_ERR_PUSHBUF);
	assert_int_equal(atomic64_read(&f->vm->faults), 3);
	vg_vm_get_stats(f->vm, &st);
	assert_int_equal(st.faults, 3);
	vg_chan_destroy(a);
	vg_chan_destroy(b);
}

/* ---- suspend, drain, resume --------------------------------------------- */

/*
 * The kernel's guest reads the real page until the zap; the GPU keeps
 * writing it until the drain stops the channel. A fault that brings the
 * shadow in after the zap shows the GPU's words as they are then, never
 * older ones than the guest may have read (ENTRIES_DONE going back).
 */
static void test_shadow_fault_shows_gpu_progress(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 4);
	set_real_word(ch, VGMEM_USERD_GP_GET, 1);
	set_real_word(ch, VGMEM_USERD_ENTRIES_DONE, 1);
	suspend(f);
	/* The GPU ran two more entries after the shadow was copied. */
	set_real_word(ch, VGMEM_USERD_GP_GET, 3);
	set_real_word(ch, VGMEM_USERD_ENTRIES_DONE, 3);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE), 1);
	assert_ptr_equal(vg_chan_userd_page(ch), ch->shadow);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE), 3);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 3);
	/* The guest's words are its own: GP_PUT is not taken from the GPU. */
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 6);
	set_real_word(ch, VGMEM_USERD_GP_PUT, 4);
	assert_ptr_equal(vg_chan_userd_page(ch), ch->shadow);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 6);
	assert_int_equal(drain(f), 0);
	resume(f);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 6);
	assert_int_equal(drain(f), 0);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 6);
}

static void test_suspend_shadow_semantics(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);
	void *real = ch->real;

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 2);
	assert_int_equal(drain(f), 0);	/* the fake runs entries 0..1 */
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_GET), 2);
	set_real_word(ch, VGMEM_USERD_ENTRIES_DONE, 2);

	suspend(f);
	assert_true(f->vm->suspended);
	assert_ptr_equal(vg_chan_userd_page(ch), ch->shadow);
	assert_ptr_not_equal(ch->shadow, real);
	/* The shadow starts as what the guest saw. */
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 2);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 2);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE), 2);

	/* Several submissions while suspended: only the shadow moves. */
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 3);
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 5);
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 9);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 2);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 9);
	/* Guest-readonly words stay so on the shadow too. */
	vg_chan_userd_write(ch, VGMEM_USERD_GP_GET, 40);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 2);

	/* Draining must not see the shadow's entries. */
	assert_int_equal(drain(f), 0);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_GET), 2);

	resume(f);
	assert_false(f->vm->suspended);
	assert_ptr_equal(vg_chan_userd_page(ch), real);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 9);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 9);
	/* Now the GPU runs what was submitted during the suspension. */
	assert_int_equal(drain(f), 0);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 9);
	vg_chan_destroy(ch);
}

/* Progress the GPU made before the drain shows through the shadow. */
static void test_drain_refreshes_shadow(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 6);
	set_real_word(ch, VGMEM_USERD_GP_GET, 1);
	suspend(f);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 1);
	/* What the engine writes while the ring runs down. */
	set_real_word(ch, VGMEM_USERD_ENTRIES_DONE, 6);
	set_real_word(ch, VGMEM_USERD_ERROR, VGMEM_CHAN_ERR_CLASS);
	set_real_word(ch, VGMEM_USERD_ERROR_INFO, 4);
	set_real_word(ch, VGMEM_USERD_ERROR_ADDR_LO, 0x1000);
	set_real_word(ch, VGMEM_USERD_ERROR_ADDR_HI, 0x1);
	assert_int_equal(drain(f), 0);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 6);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE), 6);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ERROR),
			 VGMEM_CHAN_ERR_CLASS);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ERROR_INFO), 4);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ERROR_ADDR_LO),
			 0x1000);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_ERROR_ADDR_HI), 1);
	/* The shadow's GP_PUT is the guest's, not the real page's. */
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 8);
	assert_int_equal(drain(f), 0);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 8);
	resume(f);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 8);
	vg_chan_destroy(ch);
}

/* Without guest activity a swap cycle changes nothing on the real page. */
static void test_resume_never_moves_put_back(void **state)
{
	struct fx *f = *state;
	struct vg_chan *a = mkchan(f), *b = mkchan(f);
	int i;

	vg_chan_userd_write(a, VGMEM_USERD_GP_PUT, 17);
	vg_chan_userd_write(b, VGMEM_USERD_GP_PUT, 63);
	for (i = 0; i < 5; i++) {
		suspend(f);
		assert_int_equal(drain(f), 0);
		resume(f);
		assert_int_equal(real_word(a, VGMEM_USERD_GP_PUT), 17);
		assert_int_equal(real_word(b, VGMEM_USERD_GP_PUT), 63);
	}
	/* Each channel replays its own shadow. */
	suspend(f);
	vg_chan_userd_write(a, VGMEM_USERD_GP_PUT, 20);
	resume(f);
	assert_int_equal(real_word(a, VGMEM_USERD_GP_PUT), 20);
	assert_int_equal(real_word(b, VGMEM_USERD_GP_PUT), 63);
	vg_chan_destroy(a);
	vg_chan_destroy(b);
}

static void test_drain_timeout(void **state)
{
	struct fx *f = *state;
	struct vg_chan *a = mkchan(f), *b = mkchan(f);

	u64 t0 = ktime_get_ns();

	suspend(f);
	fake_fail(f->c.fb, FAKE_OP_CHAN_STOP, 2);
	assert_int_equal(drain(f), -ETIMEDOUT);
	/* Deferred: no victim before its back-off ends. */
	assert_int_equal(f->vm->drain_fails, 1);
	assert_true(f->vm->drain_retry_ns >= t0 + VG_DRAIN_BACKOFF_MIN_NS);
	assert_true(vg_vm_drain_deferred(f->vm, ktime_get_ns()));
	assert_false(vg_vm_drain_deferred(f->vm, f->vm->drain_retry_ns));
	resume(f);
	/* A second failure in a row doubles the back-off. */
	suspend(f);
	t0 = ktime_get_ns();
	fake_fail(f->c.fb, FAKE_OP_CHAN_STOP, 1);
	assert_int_equal(drain(f), -ETIMEDOUT);
	assert_int_equal(f->vm->drain_fails, 2);
	assert_true(f->vm->drain_retry_ns >= t0 + 2 * VG_DRAIN_BACKOFF_MIN_NS);
	resume(f);
	assert_int_equal(drain(f), 0);
	/* One that works makes it a victim like any other again. */
	assert_int_equal(f->vm->drain_fails, 0);
	assert_false(vg_vm_drain_deferred(f->vm, ktime_get_ns()));
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 5);
	/* Nothing waits for the rings to run dry. */
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_IDLE_WAIT), 0);
	vg_chan_destroy(a);
	vg_chan_destroy(b);
}

/* The guest writes from inside the drain: the hook plays the guest. */
static void guest_submits(void *priv, struct fake_gpu *fb, void *arg)
{
	struct vg_chan *ch = priv;

	(void)fb;
	(void)arg;
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT,
			    vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT) + 1);
}

static void test_guest_submits_during_drain(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 4);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, guest_submits, ch);
	suspend(f);
	assert_int_equal(drain(f), 0);
	/* Stopped by the first drain: a second one has nothing to wait for. */
	assert_int_equal(drain(f), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 1);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, NULL, NULL);
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 6);
	/* Real ring drained up to what it had; the rest went to the shadow. */
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 4);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_GET), 4);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 6);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 4);
	resume(f);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 6);
	vg_chan_destroy(ch);
}

/* A channel created while its VM is suspended starts on its shadow. */
static void test_create_while_suspended(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch;

	suspend(f);
	ch = mkchan(f);
	assert_ptr_equal(vg_chan_userd_page(ch), ch->shadow);
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 3);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 0);
	resume(f);
	assert_ptr_equal(vg_chan_userd_page(ch), ch->real);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 3);
	vg_chan_destroy(ch);
}

/* ---- the kernel path: zap and fixup ------------------------------------- */

static void test_zap_called_per_channel(void **state)
{
	struct fx *f = *state;
	struct vg_chan *a = mkchan(f), *b = mkchan(f);

	suspend(f);
	assert_int_equal(f->zap.calls, 2);
	resume(f);
	assert_int_equal(f->zap.calls, 4);
	/* Destroying a channel zaps its mapping first. */
	vg_chan_destroy(a);
	assert_int_equal(f->zap.calls, 5);
	vg_chan_destroy(b);
}

/* A store that went to the real page before the zap is not lost. */
static void test_zap_fixup_suspend(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 2);
	f->zap.store_old = true;
	f->zap.old_put = 5;
	suspend(f);
	f->zap.store_old = false;
	/* The GPU still sees 5 in the real page and runs it dry... */
	assert_int_equal(drain(f), 0);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_GET), 5);
	/* ...and the shadow carries it, so the resume keeps it. */
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 5);
	resume(f);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 5);
	vg_chan_destroy(ch);
}

/* Stores to both pages: the one to the page swapped in is the later. */
static void test_zap_fixup_both_pages(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 2);
	f->zap.store_old = true;
	f->zap.old_put = 4;
	f->zap.store_new = true;
	f->zap.new_put = 7;
	suspend(f);
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT), 7);
	f->zap.old_put = 9;
	f->zap.new_put = 11;
	resume(f);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 11);
	vg_chan_destroy(ch);
}

/* A store to the shadow just before the resume's zap reaches the GPU. */
static void test_zap_fixup_resume(void **state)
{
	struct fx *f = *state;
	struct vg_chan *ch = mkchan(f);

	suspend(f);
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 3);
	f->zap.store_old = true;
	f->zap.old_put = 6;
	resume(f);
	f->zap.store_old = false;
	assert_ptr_equal(vg_chan_userd_page(ch), ch->real);
	assert_int_equal(real_word(ch, VGMEM_USERD_GP_PUT), 6);
	vg_chan_destroy(ch);
}

/* ---- a guest racing the swaps ------------------------------------------- */

struct racer {
	struct vg_chan *ch;
	bool stop;			/* atomic */
	bool bad;			/* atomic */
	u32 progress;
	u32 last;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	u32 v = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		vg_chan_userd_write(r->ch, VGMEM_USERD_GP_PUT, ++v);
		__atomic_store_n(&r->progress, v, __ATOMIC_RELAXED);
		/* Our own store is what we read back, on whichever page. */
		if (vg_chan_userd_read(r->ch, VGMEM_USERD_GP_PUT) != v) {
			__atomic_store_n(&r->bad, true, __ATOMIC_RELAXED);
			break;
		}
	}
	r->last = v;
	return NULL;
}

static void test_guest_racing_swaps(void **state)
{
	struct fx *f = *state;
	struct racer r = { .ch = mkchan(f) };
	pthread_t t;
	u32 prev = 0, cur;
	int i;

	assert_int_equal(pthread_create(&t, NULL, racer_main, &r), 0);
	/* Enough swaps, and enough guest stores in between them. */
	for (i = 0; i < 2000 ||
	     __atomic_load_n(&r.progress, __ATOMIC_RELAXED) < 100000; i++) {
		mutex_lock(&f->c.gpu->lock);
		vg_vm_suspend(f->vm);
		vg_vm_resume(f->vm);
		/* The GPU's view only ever moves forward. */
		cur = real_word(r.ch, VGMEM_USERD_GP_PUT);
		mutex_unlock(&f->c.gpu->lock);
		assert_true(cur >= prev);
		prev = cur;
		if (__atomic_load_n(&r.bad, __ATOMIC_RELAXED))
			break;
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	assert_false(r.bad);
	assert_true(r.last > 0);
	/* Every store landed, the last one included. */
	assert_int_equal(vg_chan_userd_read(r.ch, VGMEM_USERD_GP_PUT), r.last);
	assert_int_equal(real_word(r.ch, VGMEM_USERD_GP_PUT), r.last);
	vg_chan_destroy(r.ch);
}

/* The VM's destruction takes its channels with it. */
static void test_vm_destroy_frees_channels(void **state)
{
	struct fx *f = *state;
	int i;

	for (i = 0; i < 3; i++)
		mkchan(f);
	assert_int_equal(fake_nr_chans(f->c.fb), 3);
	/* fx_teardown destroys the VM and checks for leaks. */
}

/* ---- stopping channels for the copy ------------------------------------- */

/*
 * The drain stops (preempts) every channel and waits for no ring to run
 * dry; resume starts them.
 */
static void test_drain_stops_resume_starts(void **state)
{
	struct fx *f = *state;
	struct vg_chan *a = mkchan(f), *b = mkchan(f);

	vg_chan_userd_write(a, VGMEM_USERD_GP_PUT, 3);
	suspend(f);
	fake_reset_counts(f->c.fb);
	assert_int_equal(drain(f), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_IDLE_WAIT), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 2);
	assert_int_equal(fake_log_at(f->c.fb, 0), FAKE_OP_CHAN_STOP);
	assert_int_equal(fake_log_at(f->c.fb, 1), FAKE_OP_CHAN_STOP);
	assert_true(fake_bchan_stopped(a->bchan));
	assert_true(fake_bchan_stopped(b->bchan));
	/* A second drain in the same suspension leaves them stopped. */
	assert_int_equal(drain(f), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 2);
	vg_chan_userd_write(a, VGMEM_USERD_GP_PUT, 5);
	resume(f);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), 2);
	assert_false(fake_bchan_stopped(a->bchan));
	assert_false(fake_bchan_stopped(b->bchan));
	assert_int_equal(real_word(a, VGMEM_USERD_GP_PUT), 5);
	/* A suspension without a drain stops and starts nothing. */
	suspend(f);
	resume(f);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), 2);
	vg_chan_destroy(a);
	vg_chan_destroy(b);
}

/* A channel that does not stop: the ones already stopped run again. */
static void test_stop_failure_rolls_back(void **state)
{
	struct fx *f = *state;
	struct vg_chan *a = mkchan(f), *b = mkchan(f), *c = mkchan(f);

	suspend(f);
	fake_reset_counts(f->c.fb);
	fake_fail(f->c.fb, FAKE_OP_CHAN_STOP, 2);
	assert_int_equal(drain(f), -ETIMEDOUT);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 2);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), 1);
	assert_false(fake_bchan_stopped(a->bchan));
	assert_false(fake_bchan_stopped(b->bchan));
	assert_false(fake_bchan_stopped(c->bchan));
	/* The resume has nothing left to start (the fake counts a bad one). */
	resume(f);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), 1);
	/* The first channel failing leaves nothing to start. */
	suspend(f);
	fake_fail(f->c.fb, FAKE_OP_CHAN_STOP, 1);
	assert_int_equal(drain(f), -ETIMEDOUT);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 3);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), 1);
	resume(f);
	assert_int_equal(drain(f), 0);
	vg_chan_destroy(a);
	vg_chan_destroy(b);
	vg_chan_destroy(c);
}

/*
 * The drain bug: A is parked on a semaphore acquire when it is stopped;
 * B runs up to its own stop, after A's, and its work releases the
 * semaphore. A must not run before the resume (the copy would miss what
 * it writes).
 */
static void unpark_a(void *priv, struct fake_gpu *fb, void *arg)
{
	struct vg_chan **chs = priv;

	(void)fb;
	if (arg == chs[1]->bchan)
		fake_bchan_unpark(chs[0]->bchan);
}

static void a_work(void *priv, struct fake_gpu *fb, struct vg_bchan *ch)
{
	(void)fb;
	(void)ch;
	(*(u32 *)priv)++;
}

static void test_parked_channel_stays_parked(void **state)
{
	struct fx *f = *state;
	struct vg_chan *chs[2];
	u32 ran = 0;

	chs[0] = mkchan(f);
	chs[1] = mkchan(f);
	fake_bchan_set_work(chs[0]->bchan, a_work, &ran);
	fake_bchan_park(chs[0]->bchan);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, unpark_a, chs);
	suspend(f);
	assert_int_equal(drain(f), 0);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, NULL, NULL);
	/* Released, but stopped: the GPU may run anything else, not A. */
	assert_int_equal(fake_engine_run(f->c.fb), 0);
	assert_int_equal(ran, 0);
	resume(f);
	assert_int_equal(fake_engine_run(f->c.fb), 1);
	assert_int_equal(ran, 1);
	assert_true(fake_last_seq(f->c.fb, FAKE_OP_CHAN_RUN) >
		    fake_last_seq(f->c.fb, FAKE_OP_CHAN_START));
	vg_chan_destroy(chs[0]);
	vg_chan_destroy(chs[1]);
}

/*
 * channel_stop and channel_start are mandatory: without them a drain could
 * not keep a parked channel from running during the copy.
 */
static void test_gpu_requires_stop_ops(void **state)
{
	struct vg_gpu_config gc = { .name = "t", .no_return_worker = true };
	struct fake_gpu *fb = fake_create(16 * VG_CHUNK_MIN);
	struct vg_gpu_ops ops = fake_ops;
	struct vg_gpu *gpu = NULL;

	(void)state;
	assert_non_null(fb);
	ops.channel_stop = NULL;
	assert_int_equal(vg_gpu_create(&gc, &ops, fb, &gpu), -EINVAL);
	ops = fake_ops;
	ops.channel_start = NULL;
	assert_int_equal(vg_gpu_create(&gc, &ops, fb, &gpu), -EINVAL);
	assert_null(gpu);
	assert_int_equal(vg_gpu_create(&gc, &fake_ops, fb, &gpu), 0);
	vg_gpu_destroy(gpu);
	assert_int_equal(fake_leaks(fb), 0);
	fake_destroy(fb);
}

/*
 * Destroy takes the channel off the VM's list before the zap, so a fault
 * handler that looks the id up under the zap's lock finds nothing; the
 * swaps' zaps still find it.
 */
static void test_destroy_unlists_before_zap(void **state)
{
	struct fx *f = *state;
	struct vg_chan *a = mkchan(f);

	suspend(f);
	resume(f);
	assert_int_equal(f->zap.lookups, 2);
	assert_int_equal(f->zap.still_listed, 2);
	vg_chan_destroy(a);
	assert_int_equal(f->zap.lookups, 3);
	assert_int_equal(f->zap.still_listed, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_rejects_bad_rings, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_create_limit_and_ids, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_create_failures_leave_nothing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_create_desc, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_userd_access_rules, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fault_cb_counts, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_suspend_shadow_semantics, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_shadow_fault_shows_gpu_progress, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_drain_refreshes_shadow, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_resume_never_moves_put_back, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_drain_timeout, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_guest_submits_during_drain, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_create_while_suspended, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_zap_called_per_channel, fx_setup_zap, fx_teardown),
		cmocka_unit_test_setup_teardown(test_zap_fixup_suspend, fx_setup_zap, fx_teardown),
		cmocka_unit_test_setup_teardown(test_zap_fixup_both_pages, fx_setup_zap, fx_teardown),
		cmocka_unit_test_setup_teardown(test_zap_fixup_resume, fx_setup_zap, fx_teardown),
		cmocka_unit_test_setup_teardown(test_guest_racing_swaps, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_vm_destroy_frees_channels, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_drain_stops_resume_starts, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stop_failure_rolls_back, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_parked_channel_stays_parked, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_destroy_unlists_before_zap, fx_setup_zap, fx_teardown),
		cmocka_unit_test(test_gpu_requires_stop_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
