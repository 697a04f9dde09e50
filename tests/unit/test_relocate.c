// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The relocation mechanism (core/relocate.c) against the fake GPU:
 * bytes survive a move in both directions, PTEs follow, one copy batch and
 * one suspension per VM, guest submissions during the suspension are
 * replayed, and every injected failure leaves every chunk, mapping, total
 * and byte as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CHUNK		VG_CHUNK_MIN
#define VRAM_CHUNKS	16u
#define GMEM_SIZE	(64ull << 10)
#define NVMS		2
#define MAX_SNAP	64

struct fx {
	struct cfx c;			/* c.vm[i] has channel ch[i] */
	struct vg_chan *ch[NVMS];
	struct cfx_gmem gm[NVMS];
	/* Hook observations. */
	u32 suspended_at_copy;
	u32 suspended_at_idle;
	struct vg_vm *copy_vm[8];
	u32 nr_copy_vm;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cfx_opts o = {
		.name = "gpu0", .vram = VRAM_CHUNKS * CHUNK, .chunk = CHUNK,
		.seed = 7,
	};
	int i;

	assert_non_null(f);
	cfx_init_opts(&f->c, &o);
	for (i = 0; i < NVMS; i++) {
		struct vg_vm_config vc = { .name = i ? "vmB" : "vmA" };
		struct vg_vm *vm;

		cfx_gmem_init(&f->gm[i], GMEM_SIZE);
		vc.gmem = cfx_gmem_of(&f->gm[i]);
		vm = cfx_vm_cfg(&f->c, &vc);
		assert_int_equal(vg_chan_create(vm, 0, 64, &f->ch[i]), 0);
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int i;

	cfx_fini(&f->c);
	for (i = 0; i < NVMS; i++)
		cfx_gmem_fini(&f->gm[i]);
	free(f);
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static u8 pat(u32 seed, u64 i)
{
	u64 x = (i + 1) * 0x9e3779b97f4a7c15ull ^ ((u64)seed << 32);

	x ^= x >> 29;
	return (u8)(x * 0xbf58476d1ce4e5b9ull >> 56);
}

static void fill(struct fx *f, struct vg_vm *vm, u64 va, u64 size, u32 seed)
{
	u8 *buf = malloc(size);
	u64 i;

	for (i = 0; i < size; i++)
		buf[i] = pat(seed, i);
	assert_int_equal(fake_va_rw(f->c.fb, vm->as, va, buf, size, true), 0);
	free(buf);
}

static void check(struct fx *f, struct vg_vm *vm, u64 va, u64 size, u32 seed)
{
	u8 *buf = malloc(size);
	u64 i;

	assert_int_equal(fake_va_rw(f->c.fb, vm->as, va, buf, size, false), 0);
	for (i = 0; i < size; i++)
		if (buf[i] != pat(seed, i))
			fail_msg("byte %llu of 0x%llx: %u != %u",
				 (unsigned long long)i, (unsigned long long)va,
				 buf[i], pat(seed, i));
	free(buf);
}

/* A BO of n chunks (the last one tail bytes short if tail) with a pattern. */
static struct vg_bo *mkbo(struct fx *f, struct vg_vm *vm, u32 n, u64 tail,
			  u32 seed)
{
	u64 va = 0, size = n * CHUNK - tail;
	struct vg_bo *bo;

	assert_int_equal(vg_bo_alloc(vm, size, 0, &va), 0);
	mutex_lock(&f->c.gpu->lock);
	bo = vg_bo_find(vm, va);
	mutex_unlock(&f->c.gpu->lock);
	assert_non_null(bo);
	assert_int_equal(bo->nr_chunks, n);
	fill(f, vm, va, size, seed);
	return bo;
}

static void mark(struct fx *f, struct vg_bo *bo, u32 mask)
{
	u32 i;

	mutex_lock(&f->c.gpu->lock);
	for (i = 0; i < bo->nr_chunks; i++)
		if (mask & (1u << i))
			vg_chunk_mark(&bo->chunks[i]);
	mutex_unlock(&f->c.gpu->lock);
}

static int relocate(struct fx *f, struct vg_vm *vm, enum vg_loc to)
{
	int err;

	mutex_lock(&f->c.gpu->lock);
	err = vg_relocate_vm(vm, to);
	mutex_unlock(&f->c.gpu->lock);
	return err;
}

/* Chunk c lives where the books say, and its VA range points there. */
static void assert_chunk_at(struct fx *f, struct vg_chunk *c, enum vg_loc loc)
{
	u64 off = 1, va = vg_chunk_va(c);

	assert_int_equal(fake_errors(f->c.fb), 0);
	assert_int_equal(c->loc, loc);
	assert_false(c->marked);
	assert_null(c->new_mem);
	assert_int_equal(fake_mem_loc(c->mem), loc);
	assert_ptr_equal(fake_va_mem(c->bo->vm->as, va, &off), c->mem);
	assert_int_equal(off, 0);
	assert_ptr_equal(fake_va_mem(c->bo->vm->as, va + c->size - 1, &off),
			 c->mem);
	assert_false(fake_as_tlb_dirty(c->bo->vm->as));
}

struct snap {
	u32 n;
	enum vg_loc loc[MAX_SNAP];
	struct vg_mem *mem[MAX_SNAP];
	struct vg_mem *pte[MAX_SNAP];
	u64 resident[NVMS], relocated[NVMS], marked[NVMS];
	u64 vram_used, host_used, fvram, fhost, leaks;
	u32 real_put[NVMS];
};

static void take(struct fx *f, struct snap *s)
{
	struct vg_bo *bo;
	u32 i;
	int v;

	memset(s, 0, sizeof(*s));
	mutex_lock(&f->c.gpu->lock);
	for (v = 0; v < NVMS; v++) {
		struct vg_vm *vm = f->c.vm[v];

		list_for_each_entry(bo, &vm->bos, node) {
			for (i = 0; i < bo->nr_chunks; i++) {
				struct vg_chunk *c = &bo->chunks[i];

				assert_true(s->n < MAX_SNAP);
				s->loc[s->n] = c->loc;
				s->mem[s->n] = c->mem;
				s->pte[s->n] = fake_va_mem(vm->as,
							   vg_chunk_va(c), NULL);
				s->n++;
			}
		}
		s->resident[v] = vm->resident;
		s->relocated[v] = vm->relocated;
		s->marked[v] = vm->marked_bytes;
		s->real_put[v] = fake_bchan_userd(f->ch[v]->bchan)
					[VGMEM_USERD_GP_PUT / 4];
		assert_false(vm->suspended);
		assert_ptr_equal(f->ch[v]->cur, f->ch[v]->real);
		assert_true(list_empty(&vm->marked));
		assert_false(fake_as_tlb_dirty(vm->as));
	}
	s->vram_used = f->c.gpu->vram_used;
	s->host_used = f->c.gpu->host_used;
	mutex_unlock(&f->c.gpu->lock);
	s->fvram = fake_vram_used(f->c.fb);
	s->fhost = fake_host_used(f->c.fb);
	s->leaks = fake_leaks(f->c.fb);
}

static void assert_snap_equal(const struct snap *a, const struct snap *b)
{
	assert_memory_equal(a, b, sizeof(*a));
}

static u64 vm_stat(struct vg_vm *vm, size_t off)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(vm, &st);
	return *(u64 *)((u8 *)&st + off);
}

#define VM_STAT(vm, field) vm_stat(vm, offsetof(struct vgmem_vm_stats, field))

static struct vg_gpu_stats gpu_stats(struct fx *f)
{
	struct vg_gpu_stats st;

	vg_gpu_get_stats(f->c.gpu, &st);
	return st;
}

/* ---- moves -------------------------------------------------------------- */

static void test_move_out_and_back(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_bo *bo = mkbo(f, vm, 8, 0, 1);
	struct vg_bo *other = mkbo(f, f->c.vm[1], 2, 0, 2);
	struct vg_mem *old1 = bo->chunks[1].mem;
	struct vg_gpu_stats gs;
	u64 leaks = fake_leaks(f->c.fb);
	u32 i;

	fake_reset_counts(f->c.fb);
	mark(f, bo, 0x2a);	/* chunks 1, 3, 5 */
	assert_int_equal(vm->marked_bytes, 3 * CHUNK);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);

	for (i = 0; i < 8; i++)
		assert_chunk_at(f, &bo->chunks[i],
				(0x2a & (1u << i)) ? VG_LOC_HOST : VG_LOC_VRAM);
	assert_ptr_not_equal(bo->chunks[1].mem, old1);
	check(f, vm, bo->va, bo->size, 1);
	check(f, f->c.vm[1], other->va, other->size, 2);
	assert_int_equal(vm->marked_bytes, 0);
	assert_int_equal(vm->resident, 5 * CHUNK);
	assert_int_equal(vm->relocated, 3 * CHUNK);
	assert_int_equal(fake_vram_used(f->c.fb), 7 * CHUNK);
	assert_int_equal(fake_host_used(f->c.fb), 3 * CHUNK);
	/* The old VRAM went back to the GPU driver: same number of objects. */
	assert_int_equal(fake_leaks(f->c.fb), leaks);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);

	/* One batch of three, one wait, one flush, one drain per channel. */
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_COPY_SUBMIT), 1);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_COPY_WAIT), 1);
	assert_int_equal(fake_copies(f->c.fb), 3);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_TLB_FLUSH), 1);
	/* Preempted, not waited for: no idle wait at all. */
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 1);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_IDLE_WAIT), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_MAP), 3);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_MEM_FREE), 3);
	/* The old mems are freed only after the flush. */
	assert_true(fake_last_seq(f->c.fb, FAKE_OP_COPY_WAIT) <
		    fake_last_seq(f->c.fb, FAKE_OP_MAP));
	assert_true(fake_last_seq(f->c.fb, FAKE_OP_TLB_FLUSH) <
		    fake_last_seq(f->c.fb, FAKE_OP_MEM_FREE));

	assert_int_equal(VM_STAT(vm, reloc_out_chunks), 3);
	assert_int_equal(VM_STAT(vm, bytes_out), 3 * CHUNK);
	assert_int_equal(VM_STAT(vm, suspends), 1);
	assert_int_equal(VM_STAT(f->c.vm[1], suspends), 0);
	gs = gpu_stats(f);
	assert_int_equal(gs.relocations, 1);
	assert_int_equal(gs.reloc_out_chunks, 3);
	assert_int_equal(gs.bytes_out, 3 * CHUNK);
	assert_int_not_equal(gs.copy_device_ns, 0);
	assert_int_equal(gs.reloc_failures, 0);

	/* And back: every relocated chunk to VRAM. */
	mark(f, bo, 0x0a);	/* 1 and 3 */
	assert_int_equal(relocate(f, vm, VG_LOC_VRAM), 0);
	for (i = 0; i < 8; i++)
		assert_chunk_at(f, &bo->chunks[i], i == 5 ? VG_LOC_HOST :
				VG_LOC_VRAM);
	check(f, vm, bo->va, bo->size, 1);
	mark(f, bo, 0x20);
	assert_int_equal(relocate(f, vm, VG_LOC_VRAM), 0);
	check(f, vm, bo->va, bo->size, 1);
	assert_int_equal(fake_host_used(f->c.fb), 0);
	assert_int_equal(fake_vram_used(f->c.fb), 10 * CHUNK);
	assert_int_equal(VM_STAT(vm, reloc_in_chunks), 3);
	assert_int_equal(VM_STAT(vm, bytes_in), 3 * CHUNK);
	assert_int_equal(VM_STAT(vm, suspends), 3);
	gs = gpu_stats(f);
	assert_int_equal(gs.relocations, 3);
	assert_int_equal(gs.reloc_in_chunks, 3);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
}

/* A BO's short tail chunk moves with its own size. */
static void test_tail_chunk(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_bo *bo = mkbo(f, vm, 3, CHUNK - 3 * VGMEM_PAGE_SIZE, 5);

	assert_int_equal(bo->chunks[2].size, 3 * VGMEM_PAGE_SIZE);
	mark(f, bo, 0x6);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);
	assert_chunk_at(f, &bo->chunks[2], VG_LOC_HOST);
	assert_int_equal(fake_mem_size(bo->chunks[2].mem), 3 * VGMEM_PAGE_SIZE);
	assert_int_equal(vm->relocated, CHUNK + 3 * VGMEM_PAGE_SIZE);
	check(f, vm, bo->va, bo->size, 5);
	mark(f, bo, 0x4);
	assert_int_equal(relocate(f, vm, VG_LOC_VRAM), 0);
	check(f, vm, bo->va, bo->size, 5);
}

static void count_suspended(void *priv, struct fake_gpu *fb, void *arg)
{
	struct fx *f = priv;
	int i, n = 0;

	(void)fb;
	(void)arg;
	for (i = 0; i < NVMS; i++) {
		if (f->c.vm[i]->suspended) {
			n++;
			if (f->nr_copy_vm < ARRAY_SIZE(f->copy_vm))
				f->copy_vm[f->nr_copy_vm++] = f->c.vm[i];
			/* The guest's page is the shadow right now. */
			assert_ptr_equal(vg_chan_userd_page(f->ch[i]),
					 f->ch[i]->shadow);
		}
	}
	/* Exactly one VM is suspended at each copy. */
	assert_int_equal(n, 1);
	f->suspended_at_copy++;
}

static void test_one_batch_one_suspension_per_vm(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4, 0, 10);
	struct vg_bo *b = mkbo(f, f->c.vm[1], 5, 0, 11);
	struct vg_gpu_stats gs;
	int err;

	fake_reset_counts(f->c.fb);
	mark(f, a, 0x5);
	mark(f, b, 0x1e);
	fake_set_hook(f->c.fb, FAKE_OP_COPY_SUBMIT, count_suspended, f);
	mutex_lock(&f->c.gpu->lock);
	err = vg_relocate_marked(f->c.gpu, VG_LOC_HOST);
	mutex_unlock(&f->c.gpu->lock);
	fake_set_hook(f->c.fb, FAKE_OP_COPY_SUBMIT, NULL, NULL);
	assert_int_equal(err, 0);

	assert_int_equal(f->suspended_at_copy, 2);
	assert_int_equal(f->nr_copy_vm, 2);
	assert_ptr_not_equal(f->copy_vm[0], f->copy_vm[1]);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_COPY_SUBMIT), 2);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_COPY_WAIT), 2);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_TLB_FLUSH), 2);
	assert_int_equal(fake_copies(f->c.fb), 6);
	assert_int_equal(VM_STAT(f->c.vm[0], suspends), 1);
	assert_int_equal(VM_STAT(f->c.vm[1], suspends), 1);
	assert_int_equal(VM_STAT(f->c.vm[0], reloc_out_chunks), 2);
	assert_int_equal(VM_STAT(f->c.vm[1], reloc_out_chunks), 4);
	gs = gpu_stats(f);
	assert_int_equal(gs.relocations, 2);
	assert_int_equal(gs.reloc_out_chunks, 6);
	assert_int_equal(gs.bytes_out, 6 * CHUNK);
	check(f, f->c.vm[0], a->va, a->size, 10);
	check(f, f->c.vm[1], b->va, b->size, 11);
	assert_false(f->c.vm[0]->suspended);
	assert_false(f->c.vm[1]->suspended);
}

static void test_suspension_stats(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_bo *bo = mkbo(f, vm, 4, 0, 3);
	struct vgmem_vm_stats st;
	struct vg_gpu_stats gs;
	u64 sum = 0, gsum = 0;
	int i;

	for (i = 0; i < 4; i++) {
		mark(f, bo, 1u << i);
		assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);
	}
	vg_vm_get_stats(vm, &st);
	gs = gpu_stats(f);
	assert_int_equal(st.suspends, 4);
	for (i = 0; i < VGMEM_HIST_BUCKETS; i++) {
		sum += st.suspend_hist[i];
		gsum += gs.suspend_hist[i];
	}
	assert_int_equal(sum, 4);
	assert_int_equal(gsum, 4);
	assert_true(st.suspend_max_ns >= st.suspend_last_ns);
	assert_true(st.suspend_total_ns >= st.suspend_max_ns);
	check(f, vm, bo->va, bo->size, 3);
}

/* The guest submits while its VM is suspended (from inside the stop). */
static void guest_submits(void *priv, struct fake_gpu *fb, void *arg)
{
	struct vg_chan *ch = priv;

	(void)fb;
	(void)arg;
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT,
			    vg_chan_userd_read(ch, VGMEM_USERD_GP_PUT) + 2);
}

static void real_put_unchanged(void *priv, struct fake_gpu *fb, void *arg)
{
	struct vg_chan *ch = priv;

	(void)fb;
	(void)arg;
	/* The copy runs while the GPU still sees only the old work. */
	assert_int_equal(fake_bchan_userd(ch->bchan)[VGMEM_USERD_GP_PUT / 4], 1);
}

static void test_submissions_replayed(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_chan *ch = f->ch[0];
	struct vg_bo *bo = mkbo(f, vm, 2, 0, 4);

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 1);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, guest_submits, ch);
	fake_set_hook(f->c.fb, FAKE_OP_COPY_SUBMIT, real_put_unchanged, ch);
	mark(f, bo, 0x3);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, NULL, NULL);
	fake_set_hook(f->c.fb, FAKE_OP_COPY_SUBMIT, NULL, NULL);
	assert_int_equal(fake_bchan_userd(ch->bchan)[VGMEM_USERD_GP_PUT / 4], 3);
	assert_ptr_equal(vg_chan_userd_page(ch), ch->real);
	/* The drained ring's progress was visible through the shadow. */
	assert_int_equal(vg_chan_userd_read(ch, VGMEM_USERD_GP_GET), 1);
	check(f, vm, bo->va, bo->size, 4);
}

/*
 * A frozen VM (a migration's stop-and-copy) stays stopped with no lock
 * held: relocating it copies and remaps without starting its channels,
 * what its guest submits waits in the shadow, a second freeze and a
 * quiesce are refused, and the thaw replays the submissions and starts it.
 */
static void test_frozen_vm_stays_stopped(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_chan *ch = f->ch[0];
	struct vg_bo *bo = mkbo(f, vm, 2, 0, 9);
	u32 starts;

	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 1);
	assert_int_equal(vg_vm_freeze(vm), 0);
	assert_true(fake_bchan_stopped(ch->bchan));
	assert_int_equal(vg_vm_freeze(vm), -EALREADY);
	assert_int_equal(vg_vm_quiesce(vm), -EBUSY);
	/* The guest goes on submitting: into the shadow. */
	vg_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 4);
	assert_int_equal(fake_bchan_userd(ch->bchan)[VGMEM_USERD_GP_PUT / 4], 1);

	fake_reset_counts(f->c.fb);
	mark(f, bo, 0x3);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);
	assert_chunk_at(f, &bo->chunks[0], VG_LOC_HOST);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), 0);
	assert_true(fake_bchan_stopped(ch->bchan));
	assert_int_equal(fake_bchan_userd(ch->bchan)[VGMEM_USERD_GP_PUT / 4], 1);
	check(f, vm, bo->va, bo->size, 9);

	starts = (u32)fake_count(f->c.fb, FAKE_OP_CHAN_START);
	vg_vm_thaw(vm);
	assert_false(fake_bchan_stopped(ch->bchan));
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), starts + 1);
	assert_int_equal(fake_bchan_userd(ch->bchan)[VGMEM_USERD_GP_PUT / 4], 4);
	assert_ptr_equal(vg_chan_userd_page(ch), ch->real);
	/* A thaw of a VM that is not frozen does nothing. */
	vg_vm_thaw(vm);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_START), starts + 1);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
}

/* ---- failures ----------------------------------------------------------- */

struct failcase {
	enum fake_op op;
	u32 nth;
	int err;
	bool suspended;		/* did it get as far as suspending? */
};

static void run_failure(struct fx *f, enum vg_loc to, const struct failcase *fc)
{
	struct vg_vm *vm = f->c.vm[0];
	struct vg_bo *bo, *other;
	struct snap before, after;
	struct vg_gpu_stats gs0, gs1;
	u64 susp0;

	bo = mkbo(f, vm, 6, 0, 20);
	other = mkbo(f, f->c.vm[1], 2, 0, 21);
	vg_chan_userd_write(f->ch[0], VGMEM_USERD_GP_PUT, 5);
	if (to == VG_LOC_VRAM) {
		mark(f, bo, 0x2d);
		assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);
	}
	take(f, &before);
	gs0 = gpu_stats(f);
	susp0 = VM_STAT(vm, suspends);

	mark(f, bo, 0x2d);	/* chunks 0, 2, 3, 5 */
	if (fc->op == FAKE_OP_NR)
		os_fail_alloc_after(fc->nth);
	else
		fake_fail(f->c.fb, fc->op, fc->nth);
	assert_int_equal(relocate(f, vm, to), fc->err);
	os_fail_alloc_after(-1);
	fake_fail_clear(f->c.fb);

	take(f, &after);
	assert_snap_equal(&before, &after);
	check(f, vm, bo->va, bo->size, 20);
	check(f, f->c.vm[1], other->va, other->size, 21);
	assert_int_equal(vm->marked_bytes, 0);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	gs1 = gpu_stats(f);
	assert_int_equal(gs1.reloc_failures, gs0.reloc_failures + 1);
	assert_int_equal(gs1.relocations, gs0.relocations);
	assert_int_equal(gs1.bytes_out, gs0.bytes_out);
	assert_int_equal(gs1.bytes_in, gs0.bytes_in);
	assert_int_equal(VM_STAT(vm, suspends), susp0 + fc->suspended);

	/* Nothing is stuck: the same relocation works now. */
	mark(f, bo, 0x2d);
	assert_int_equal(relocate(f, vm, to), 0);
	check(f, vm, bo->va, bo->size, 20);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
}

static void test_fail_host_alloc_first(void **state)
{
	const struct failcase fc = { FAKE_OP_MEM_ALLOC_HOST, 1, -ENOMEM, false };

	run_failure(*state, VG_LOC_HOST, &fc);
}

static void test_fail_host_alloc_last(void **state)
{
	const struct failcase fc = { FAKE_OP_MEM_ALLOC_HOST, 4, -ENOMEM, false };

	run_failure(*state, VG_LOC_HOST, &fc);
}

static void test_fail_copy_list_alloc(void **state)
{
	const struct failcase fc = { FAKE_OP_NR, 0, -ENOMEM, false };

	run_failure(*state, VG_LOC_HOST, &fc);
}

static void test_fail_copy_submit(void **state)
{
	const struct failcase fc = { FAKE_OP_COPY_SUBMIT, 1, -EIO, true };

	run_failure(*state, VG_LOC_HOST, &fc);
}

static void test_fail_copy_wait(void **state)
{
	const struct failcase fc = { FAKE_OP_COPY_WAIT, 1, -EIO, true };

	run_failure(*state, VG_LOC_HOST, &fc);
}

static void test_fail_map_first(void **state)
{
	const struct failcase fc = { FAKE_OP_MAP, 1, -ENOMEM, true };

	run_failure(*state, VG_LOC_HOST, &fc);
}

static void test_fail_map_middle(void **state)
{
	const struct failcase fc = { FAKE_OP_MAP, 3, -ENOMEM, true };

	run_failure(*state, VG_LOC_HOST, &fc);
}

static void test_fail_map_last(void **state)
{
	const struct failcase fc = { FAKE_OP_MAP, 4, -ENOMEM, true };

	run_failure(*state, VG_LOC_HOST, &fc);
}

/* Not drained: -EAGAIN, not out of memory, and the VM is deferred. */
static void test_fail_chan_stop(void **state)
{
	const struct failcase fc = { FAKE_OP_CHAN_STOP, 1, -EAGAIN, true };
	struct fx *f = *state;

	run_failure(f, VG_LOC_HOST, &fc);
	/* The relocation that worked at the end reset the back-off. */
	assert_int_equal(f->c.vm[0]->drain_fails, 0);
}

static void test_fail_vram_alloc_on_return(void **state)
{
	const struct failcase fc = { FAKE_OP_MEM_ALLOC_VRAM, 2, -ENOMEM, false };

	run_failure(*state, VG_LOC_VRAM, &fc);
}

static void test_fail_copy_on_return(void **state)
{
	const struct failcase fc = { FAKE_OP_COPY_WAIT, 1, -EIO, true };

	run_failure(*state, VG_LOC_VRAM, &fc);
}

static void test_fail_map_on_return(void **state)
{
	const struct failcase fc = { FAKE_OP_MAP, 2, -ENOMEM, true };

	run_failure(*state, VG_LOC_VRAM, &fc);
}

static void test_fail_host_budget(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_bo *bo = mkbo(f, vm, 4, 0, 30);
	struct snap before, after;

	mutex_lock(&f->c.gpu->lock);
	f->c.gpu->host_budget = 2 * CHUNK;
	mutex_unlock(&f->c.gpu->lock);
	take(f, &before);
	fake_reset_counts(f->c.fb);
	mark(f, bo, 0x7);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), -ENOMEM);
	take(f, &after);
	assert_snap_equal(&before, &after);
	/* Refused before anyone paid for it. */
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_MEM_ALLOC_HOST), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 0);
	assert_int_equal(VM_STAT(vm, suspends), 0);
	/* Exactly the budget is fine. */
	mark(f, bo, 0x3);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);
	mark(f, bo, 0x4);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), -ENOMEM);
	check(f, vm, bo->va, bo->size, 30);
}

/*
 * The map of chunk 1 fails and so does the restore of chunk 0: chunk 0 is
 * kept at its new location (its copy is complete), chunk 1 stays where it
 * was; both are whole and the books agree.
 */
struct map_plan {
	struct fake_gpu *fb;
	u32 calls;
};

static void map_plan_hook(void *priv, struct fake_gpu *fb, void *arg)
{
	struct map_plan *p = priv;

	(void)arg;
	p->calls++;
	/* Call 2: map chunk 1 new; call 3: restore chunk 0 old. */
	if (p->calls == 2 || p->calls == 3)
		fake_fail(fb, FAKE_OP_MAP, 1);
}

static void test_restore_failure_keeps_chunks_whole(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_bo *bo = mkbo(f, vm, 2, 0, 40);
	struct map_plan plan = { .fb = f->c.fb };
	u64 warns = os_warn_count();
	struct vg_gpu_stats gs;

	mark(f, bo, 0x3);
	fake_set_hook(f->c.fb, FAKE_OP_MAP, map_plan_hook, &plan);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), -EIO);
	fake_set_hook(f->c.fb, FAKE_OP_MAP, NULL, NULL);
	assert_chunk_at(f, &bo->chunks[0], VG_LOC_HOST);
	assert_chunk_at(f, &bo->chunks[1], VG_LOC_VRAM);
	assert_int_equal(vm->relocated, CHUNK);
	assert_int_equal(vm->marked_bytes, 0);
	assert_false(vm->suspended);
	assert_false(fake_as_tlb_dirty(vm->as));
	check(f, vm, bo->va, bo->size, 40);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	assert_int_equal(os_warn_count(), warns);
	/* Chunk 0 did move: the stats say so; the relocation still failed. */
	assert_int_equal(VM_STAT(vm, reloc_out_chunks), 1);
	assert_int_equal(VM_STAT(vm, bytes_out), CHUNK);
	gs = gpu_stats(f);
	assert_int_equal(gs.reloc_out_chunks, 1);
	assert_int_equal(gs.bytes_out, CHUNK);
	assert_int_equal(gs.relocations, 0);
	assert_int_equal(gs.reloc_failures, 1);
	/* And chunk 0 comes back like any other. */
	mark(f, bo, 0x1);
	assert_int_equal(relocate(f, vm, VG_LOC_VRAM), 0);
	assert_int_equal(VM_STAT(vm, reloc_in_chunks), 1);
	check(f, vm, bo->va, bo->size, 40);
}

/* VM B fails after VM A moved: A stays moved, B untouched, no marks left. */
static void test_relocate_marked_stops_at_failure(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 3, 0, 50);
	struct vg_bo *b = mkbo(f, f->c.vm[1], 3, 0, 51);
	int err;

	mark(f, a, 0x3);
	mark(f, b, 0x6);
	fake_fail(f->c.fb, FAKE_OP_MEM_ALLOC_HOST, 3);
	mutex_lock(&f->c.gpu->lock);
	err = vg_relocate_marked(f->c.gpu, VG_LOC_HOST);
	mutex_unlock(&f->c.gpu->lock);
	assert_int_equal(err, -ENOMEM);
	assert_chunk_at(f, &a->chunks[0], VG_LOC_HOST);
	assert_chunk_at(f, &a->chunks[1], VG_LOC_HOST);
	assert_chunk_at(f, &b->chunks[1], VG_LOC_VRAM);
	assert_chunk_at(f, &b->chunks[2], VG_LOC_VRAM);
	assert_int_equal(f->c.vm[0]->marked_bytes, 0);
	assert_int_equal(f->c.vm[1]->marked_bytes, 0);
	check(f, f->c.vm[0], a->va, a->size, 50);
	check(f, f->c.vm[1], b->va, b->size, 51);
	/* A is not moved back here, but the return worker is told to. */
	assert_true(READ_ONCE(f->c.gpu->return_kick));
	assert_int_equal(gpu_stats(f).reloc_failures, 1);
	assert_int_equal(vg_gpu_return_once(f->c.gpu), 2 * CHUNK);
	assert_chunk_at(f, &a->chunks[0], VG_LOC_VRAM);
	assert_chunk_at(f, &a->chunks[1], VG_LOC_VRAM);
	check(f, f->c.vm[0], a->va, a->size, 50);
	WRITE_ONCE(f->c.gpu->return_kick, false);

	/* The same failure on the first VM leaves the second one marked-free. */
	mark(f, a, 0x4);
	mark(f, b, 0x1);
	fake_fail(f->c.fb, FAKE_OP_COPY_WAIT, 1);
	mutex_lock(&f->c.gpu->lock);
	err = vg_relocate_marked(f->c.gpu, VG_LOC_HOST);
	mutex_unlock(&f->c.gpu->lock);
	assert_int_equal(err, -EIO);
	assert_chunk_at(f, &a->chunks[2], VG_LOC_VRAM);
	assert_chunk_at(f, &b->chunks[0], VG_LOC_VRAM);
	assert_true(list_empty(&f->c.vm[1]->marked));
	assert_int_equal(VM_STAT(f->c.vm[1], suspends), 0);
	/* Nothing moved before the failure: nothing to bring back. */
	assert_false(READ_ONCE(f->c.gpu->return_kick));
}

/*
 * The drain bug through a whole relocation. vmA's first channel is parked
 * on a semaphore acquire when it is stopped, with a write still to do;
 * its second channel runs up to its own stop, after the first's, and
 * releases the semaphore. If the first ran as soon as the GPU got to it (here: while
 * the core rewrites the page tables, after the copy), its write would go
 * to the old memory and be lost. Stopped, it runs after the resume and
 * its write lands in the chunk's new place.
 */
struct parked {
	struct fx *f;
	struct vg_chan *a, *b;
	u64 va;
};

static void parked_write(void *priv, struct fake_gpu *fb,
			 struct vg_bchan *ch)
{
	struct parked *p = priv;
	static const u8 marker[8] = "written";

	(void)ch;
	assert_int_equal(fake_va_rw(fb, p->f->c.vm[0]->as, p->va,
				    (void *)marker, sizeof(marker), true), 0);
}

static void release_on_b(void *priv, struct fake_gpu *fb, void *arg)
{
	struct parked *p = priv;

	(void)fb;
	if (arg == p->b->bchan)
		fake_bchan_unpark(p->a->bchan);
}

static void gpu_progresses(void *priv, struct fake_gpu *fb, void *arg)
{
	(void)priv;
	(void)arg;
	fake_engine_run(fb);
}

static void test_parked_channel_write_not_lost(void **state)
{
	struct fx *f = *state;
	struct vg_vm *vm = f->c.vm[0];
	struct vg_bo *bo = mkbo(f, vm, 2, 0, 80);
	struct parked p = { .f = f, .a = f->ch[0], .va = bo->va + 100 };
	u8 got[8];

	assert_int_equal(vg_chan_create(vm, 0, 64, &p.b), 0);
	fake_bchan_set_work(p.a->bchan, parked_write, &p);
	fake_bchan_park(p.a->bchan);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, release_on_b, &p);
	fake_set_hook(f->c.fb, FAKE_OP_MAP, gpu_progresses, NULL);
	mark(f, bo, 0x3);
	assert_int_equal(relocate(f, vm, VG_LOC_HOST), 0);
	fake_set_hook(f->c.fb, FAKE_OP_CHAN_STOP, NULL, NULL);
	fake_set_hook(f->c.fb, FAKE_OP_MAP, NULL, NULL);
	assert_int_equal(fake_bchan_runs(p.a->bchan), 0);
	/* After the resume the GPU gets to it. */
	assert_int_equal(fake_engine_run(f->c.fb), 1);
	assert_true(fake_last_seq(f->c.fb, FAKE_OP_CHAN_RUN) >
		    fake_last_seq(f->c.fb, FAKE_OP_CHAN_START));
	assert_int_equal(fake_va_rw(f->c.fb, vm->as, p.va, got, sizeof(got),
				    false), 0);
	assert_memory_equal(got, "written", sizeof(got));
	assert_chunk_at(f, &bo->chunks[0], VG_LOC_HOST);
	vg_chan_destroy(p.b);
}

static void test_unmark_all(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], 4, 0, 60);
	struct snap before, after;

	take(f, &before);
	mark(f, a, 0xf);
	assert_int_equal(f->c.vm[0]->marked_bytes, 4 * CHUNK);
	mutex_lock(&f->c.gpu->lock);
	vg_unmark_all(f->c.vm[0]);
	vg_unmark_all(f->c.vm[1]);
	/* Nothing marked: nothing to do, nothing suspended. */
	assert_int_equal(vg_relocate_vm(f->c.vm[0], VG_LOC_HOST), 0);
	assert_int_equal(vg_relocate_marked(f->c.gpu, VG_LOC_HOST), 0);
	mutex_unlock(&f->c.gpu->lock);
	take(f, &after);
	assert_snap_equal(&before, &after);
	assert_int_equal(VM_STAT(f->c.vm[0], suspends), 0);
}

/*
 * Through the allocation path: B's BO needs A's VRAM. Each injected
 * failure of the relocation makes the allocation fail with -ENOMEM and
 * leaves A exactly as it was; then the same allocation succeeds.
 */
static void test_bo_alloc_relocation_failures(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], VRAM_CHUNKS, 0, 70);
	static const struct {
		enum fake_op op;
		u32 nth;
	} cases[] = {
		{ FAKE_OP_MEM_ALLOC_HOST, 1 },
		{ FAKE_OP_COPY_SUBMIT, 1 },
		{ FAKE_OP_COPY_WAIT, 1 },
		{ FAKE_OP_MAP, 1 },
		{ FAKE_OP_MAP, 2 },
	};
	struct snap before, after;
	u64 va;
	u32 i;

	take(f, &before);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		va = 0;
		fake_fail(f->c.fb, cases[i].op, cases[i].nth);
		assert_int_equal(vg_bo_alloc(f->c.vm[1], 4 * CHUNK, 0, &va),
				 -ENOMEM);
		fake_fail_clear(f->c.fb);
		take(f, &after);
		assert_snap_equal(&before, &after);
		check(f, f->c.vm[0], a->va, a->size, 70);
		assert_true(list_empty(&f->c.vm[1]->bos));
		assert_int_equal(vg_gpu_check(f->c.gpu), 0);
	}
	va = 0;
	assert_int_equal(vg_bo_alloc(f->c.vm[1], 4 * CHUNK, 0, &va), 0);
	assert_int_equal(f->c.gpu->vram_used, VRAM_CHUNKS * CHUNK);
	assert_int_equal(f->c.vm[0]->relocated + f->c.vm[1]->relocated, 4 * CHUNK);
	/* Every case but the host allocation got as far as suspending. */
	assert_int_equal(VM_STAT(f->c.vm[0], suspends), ARRAY_SIZE(cases) - 1 + 1);
	check(f, f->c.vm[0], a->va, a->size, 70);
	fill(f, f->c.vm[1], va, 4 * CHUNK, 71);
	check(f, f->c.vm[1], va, 4 * CHUNK, 71);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
}

/*
 * Through the allocation path, a victim whose channel does not stop (a
 * starved engine, a guest memory access that blocks): the allocation
 * does not fail. The victim stays exactly as it was and is deferred, the
 * reducer chooses again without it (here only the requester's own new
 * chunks are left: they go to host RAM), and the next allocation does
 * not ask it again until its back-off is over.
 */
static void test_bo_alloc_undrainable_victim(void **state)
{
	struct fx *f = *state;
	struct vg_bo *a = mkbo(f, f->c.vm[0], VRAM_CHUNKS, 0, 90);
	u64 va = 0, va2 = 0, va3 = 0, t0;
	u32 i;

	fake_reset_counts(f->c.fb);
	fake_fail(f->c.fb, FAKE_OP_CHAN_STOP, 1);
	t0 = ktime_get_ns();
	assert_int_equal(vg_bo_alloc(f->c.vm[1], 4 * CHUNK, 0, &va), 0);
	fake_fail_clear(f->c.fb);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 1);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_COPY_SUBMIT), 0);
	/* A did not move at all; B's BO went to host RAM. */
	for (i = 0; i < VRAM_CHUNKS; i++)
		assert_chunk_at(f, &a->chunks[i], VG_LOC_VRAM);
	assert_false(f->c.vm[0]->suspended);
	assert_false(fake_bchan_stopped(f->ch[0]->bchan));
	check(f, f->c.vm[0], a->va, a->size, 90);
	assert_int_equal(f->c.vm[0]->relocated, 0);
	assert_int_equal(f->c.vm[1]->relocated, 4 * CHUNK);
	assert_int_equal(VM_STAT(f->c.vm[0], suspends), 1);
	assert_int_equal(gpu_stats(f).reloc_failures, 1);
	assert_int_equal(f->c.vm[0]->drain_fails, 1);
	/* Deferred for the first back-off from the failure on. */
	assert_true(f->c.vm[0]->drain_retry_ns >= t0 + VG_DRAIN_BACKOFF_MIN_NS);
	fill(f, f->c.vm[1], va, 4 * CHUNK, 91);
	check(f, f->c.vm[1], va, 4 * CHUNK, 91);

	/*
	 * Deferred: the next allocation does not even ask A. The back-off
	 * is 100 ms, which a starved machine (TSan beside other work) can
	 * spend between two lines here: it is pushed out of reach, so the
	 * test checks the rule, not the machine's speed.
	 */
	mutex_lock(&f->c.gpu->lock);
	f->c.vm[0]->drain_retry_ns = ktime_get_ns() + 3600 * NSEC_PER_SEC;
	mutex_unlock(&f->c.gpu->lock);
	fake_reset_counts(f->c.fb);
	assert_int_equal(vg_bo_alloc(f->c.vm[1], 2 * CHUNK, 0, &va2), 0);
	assert_int_equal(fake_count(f->c.fb, FAKE_OP_CHAN_STOP), 0);
	assert_int_equal(f->c.vm[0]->relocated, 0);
	assert_int_equal(VM_STAT(f->c.vm[0], suspends), 1);

	/* Its back-off over (as if the time had passed), A is a victim again. */
	mutex_lock(&f->c.gpu->lock);
	f->c.vm[0]->drain_retry_ns = ktime_get_ns();
	mutex_unlock(&f->c.gpu->lock);
	assert_int_equal(vg_bo_alloc(f->c.vm[1], 2 * CHUNK, 0, &va3), 0);
	assert_int_equal(f->c.vm[0]->relocated, 2 * CHUNK);
	assert_int_equal(f->c.vm[0]->drain_fails, 0);
	check(f, f->c.vm[0], a->va, a->size, 90);
	check(f, f->c.vm[1], va, 4 * CHUNK, 91);
	assert_int_equal(vg_gpu_check(f->c.gpu), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_move_out_and_back, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tail_chunk, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_one_batch_one_suspension_per_vm, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_suspension_stats, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_frozen_vm_stays_stopped,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_submissions_replayed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_host_alloc_first, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_host_alloc_last, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_copy_list_alloc, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_copy_submit, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_copy_wait, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_map_first, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_map_middle, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_map_last, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_chan_stop, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_vram_alloc_on_return, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_copy_on_return, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_map_on_return, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fail_host_budget, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_restore_failure_keeps_chunks_whole, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_relocate_marked_stops_at_failure, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_unmark_all, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_parked_channel_write_not_lost, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bo_alloc_relocation_failures, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bo_alloc_undrainable_victim, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
