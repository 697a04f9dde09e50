// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The file cache's VRAM next to the BOs' (core/lrc/evict.c, core/bo.c,
 * core/return.c): it is counted apart (gpu->cache_used, vram_size never
 * moves), it yields first (the reclaim hook evicts replicas before any
 * VM's chunk is relocated), it keeps every byte while yielding, and each
 * VM's private replicas are counted to it (vm->cache_private).
 */
#include <pthread.h>

#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)

static u64 entitlement(struct lfx_vm *v)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(v->vm, &st);
	return st.entitlement;
}

/* Every chunk of the BO at va is in VRAM. */
static void assert_bo_in_vram(struct lfx_vm *v, u64 va)
{
	enum vg_loc locs[16];
	u32 n, i;

	assert_int_equal(vg_bo_query(v->vm, va, locs, 16, &n), 0);
	assert_true(n <= 16);
	for (i = 0; i < n; i++)
		assert_int_equal(locs[i], VG_LOC_VRAM);
}

/* The GPU of v reads len bytes at va in 256 KiB steps. */
static void gpu_read_all(struct lfx *x, struct lfx_vm *v, u64 va, u8 *buf,
			 u64 len)
{
	u64 off;

	for (off = 0; off < len; off += 256 * KiB)
		lfx_gpu_read(x, v, va + off, buf + off, 256 * KiB);
}

/*
 * A BO that does not fit in free VRAM because cache replicas hold it is
 * placed with no relocation of anyone's chunks: the cache is evicted, its
 * released writes merged into the host copy, its unreleased writes kept
 * for their writer, and the file ends with every byte.
 */
static void test_bo_alloc_evicts_cache(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	struct vg_lrc_file *h;
	struct vg_gpu_stats gs;
	u8 *orig, *want, *buf;
	u64 va, bo_a = 0, bo_b = 0, bo_big = 0;

	(void)state;
	orig = malloc(2 * MiB);
	want = malloc(2 * MiB);
	buf = malloc(2 * MiB);
	lfx_init(&x, 1, 8 * MiB, 4 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "y.bin", 2 * MiB);
	lfx_pattern(f->data, f->size, 3);
	memcpy(orig, f->data, 2 * MiB);
	memcpy(want, orig, 2 * MiB);
	lfx_pattern(want, MiB, 77);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	assert_int_equal(vg_bo_alloc(a->vm, 2 * MiB, 0, &bo_a), 0);
	assert_int_equal(vg_bo_alloc(b->vm, 2 * MiB, 0, &bo_b), 0);

	/*
	 * a writes the first MiB (private replicas), releases only its first
	 * half, and reads the second MiB (shared replicas).
	 */
	va = lfx_map(a, "y.bin", 0, 2 * MiB, VGMEM_FILE_RW);
	for (u64 off = 0; off < MiB; off += 256 * KiB)
		lfx_gpu_write(&x, a, va + off, want + off, 256 * KiB);
	assert_int_equal(vg_lrc_release(a->ctx, va, 512 * KiB), 0);
	gpu_read_all(&x, a, va + MiB, buf, MiB);
	assert_memory_equal(buf, orig + MiB, MiB);
	gs = lfx_gpu_stats(&x, 0);
	assert_int_equal(gs.vram_size, 8 * MiB);
	assert_int_equal(gs.vram_used, 4 * MiB);
	assert_true(gs.cache_used >= 2 * MiB);
	assert_int_equal(vg_vm_cache_private(a->vm), MiB);
	assert_int_equal(vg_vm_cache_private(b->vm), 0);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);

	/* 4 MiB for b: free VRAM is below that only because of the cache. */
	assert_true(8 * MiB - gs.vram_used - gs.cache_used < 4 * MiB);
	assert_int_equal(vg_bo_alloc(b->vm, 4 * MiB, 0, &bo_big), 0);
	gs = lfx_gpu_stats(&x, 0);
	assert_int_equal(gs.relocations, 0);
	assert_int_equal(gs.reloc_out_chunks, 0);
	assert_int_equal(gs.reloc_failures, 0);
	assert_int_equal(gs.vram_used, 8 * MiB);
	assert_int_equal(gs.cache_used, 0);
	assert_int_equal(gs.host_used, 0);
	assert_bo_in_vram(a, bo_a);
	assert_bo_in_vram(b, bo_b);
	assert_bo_in_vram(b, bo_big);
	assert_int_equal(vg_vm_cache_private(a->vm), 0);
	assert_true(lfx_stats(&x).evictions >= 2 * MiB / GP);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);

	/*
	 * The released half reached the host copy; the unreleased half is
	 * a's alone: the host still reads the old bytes there.
	 */
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "y.bin", false,
					  &h), 0);
	assert_int_equal(vg_lrc_host_read(h, 0, buf, MiB), (s64)MiB);
	assert_memory_equal(buf, want, 512 * KiB);
	assert_memory_equal(buf + 512 * KiB, orig + 512 * KiB, 512 * KiB);
	vg_lrc_host_close(h);

	/* Room for the cache again: a reads its own writes back, all of them. */
	assert_int_equal(vg_bo_free(b->vm, bo_big), 0);
	gpu_read_all(&x, a, va, buf, 2 * MiB);
	assert_memory_equal(buf, want, 2 * MiB);
	assert_int_equal(vg_lrc_sync(a->ctx, va, 0), 0);
	assert_memory_equal(f->data, want, 2 * MiB);
	assert_int_equal(vg_lrc_unmap(a->ctx, va), 0);
	assert_memory_equal(f->data, want, 2 * MiB);
	assert_int_equal(lfx_gpu_stats(&x, 0).relocations, 0);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);
	lfx_fini(&x);
	free(orig);
	free(want);
	free(buf);
}

/* Shares and entitlements come from the GPU's VRAM, whatever the cache holds. */
static void test_entitlement_ignores_cache(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	u8 *buf = malloc(2 * MiB);
	u64 va;

	(void)state;
	lfx_init(&x, 1, 8 * MiB, 4 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "e.bin", 2 * MiB);
	lfx_pattern(f->data, f->size, 5);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	assert_int_equal(entitlement(a), 4 * MiB);
	assert_int_equal(entitlement(b), 4 * MiB);
	va = lfx_map(a, "e.bin", 0, 2 * MiB, VGMEM_FILE_RO);
	gpu_read_all(&x, a, va, buf, 2 * MiB);
	assert_memory_equal(buf, f->data, 2 * MiB);
	assert_int_equal(lfx_gpu_stats(&x, 0).cache_used, 2 * MiB);
	assert_int_equal(lfx_gpu_stats(&x, 0).vram_size, 8 * MiB);
	/* Read-only: shared replicas, nobody's private ones. */
	assert_int_equal(vg_vm_cache_private(a->vm), 0);
	assert_int_equal(entitlement(a), 4 * MiB);
	assert_int_equal(entitlement(b), 4 * MiB);
	/* An explicit entitlement is checked against the whole VRAM too. */
	assert_int_equal(vg_vm_set_entitlement(b->vm, 8 * MiB), 0);
	assert_int_equal(vg_vm_set_entitlement(b->vm, 0), 0);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);
	assert_int_equal(vg_lrc_unmap(a->ctx, va), 0);
	lfx_fini(&x);
	free(buf);
}

/*
 * The return worker brings chunks back to a VM below its entitlement by
 * evicting the cache, and leaves the cache alone for a VM that is not.
 */
static void test_return_evicts_cache(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	struct vg_gpu_stats gs;
	u8 *buf = malloc(2 * MiB);
	u64 va, bo_a = 0, bo_b1 = 0, bo_b2 = 0;
	s64 moved;

	(void)state;
	lfx_init(&x, 1, 8 * MiB, 4 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "r.bin", 2 * MiB);
	lfx_pattern(f->data, f->size, 9);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	assert_int_equal(vg_vm_set_entitlement(a->vm, 2 * MiB), 0);
	assert_int_equal(vg_vm_set_entitlement(b->vm, 6 * MiB), 0);
	assert_int_equal(vg_bo_alloc(a->vm, 4 * MiB, 0, &bo_a), 0);
	assert_int_equal(vg_bo_alloc(b->vm, 4 * MiB, 0, &bo_b1), 0);
	/* VRAM is full: one of a's chunks (a is above its share) goes out. */
	assert_int_equal(vg_bo_alloc(b->vm, 2 * MiB, 0, &bo_b2), 0);
	gs = lfx_gpu_stats(&x, 0);
	assert_int_equal(gs.host_used, 2 * MiB);
	assert_int_equal(gs.reloc_out_chunks, 1);
	assert_bo_in_vram(b, bo_b1);
	assert_bo_in_vram(b, bo_b2);
	/* b frees 2 MiB and the cache takes them. */
	assert_int_equal(vg_bo_free(b->vm, bo_b2), 0);
	va = lfx_map(b, "r.bin", 0, 2 * MiB, VGMEM_FILE_RO);
	gpu_read_all(&x, b, va, buf, 2 * MiB);
	assert_memory_equal(buf, f->data, 2 * MiB);
	gs = lfx_gpu_stats(&x, 0);
	assert_int_equal(gs.cache_used, 2 * MiB);
	assert_int_equal(gs.vram_used + gs.cache_used, 8 * MiB);

	/* a is at its entitlement: its chunk stays out, the cache stays. */
	moved = vg_gpu_return_once(x.gpu[0].gpu);
	assert_int_equal(moved, 0);
	gs = lfx_gpu_stats(&x, 0);
	assert_int_equal(gs.cache_used, 2 * MiB);
	assert_int_equal(gs.host_used, 2 * MiB);

	/* Now a is owed 2 MiB: the cache yields them. */
	assert_int_equal(vg_vm_set_entitlement(b->vm, 4 * MiB), 0);
	assert_int_equal(vg_vm_set_entitlement(a->vm, 4 * MiB), 0);
	moved = vg_gpu_return_once(x.gpu[0].gpu);
	assert_int_equal(moved, 2 * MiB);
	gs = lfx_gpu_stats(&x, 0);
	assert_int_equal(gs.cache_used, 0);
	assert_int_equal(gs.host_used, 0);
	assert_int_equal(gs.reloc_in_chunks, 1);
	assert_bo_in_vram(a, bo_a);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);
	assert_int_equal(vg_lrc_unmap(b->ctx, va), 0);
	lfx_fini(&x);
	free(buf);
}

/* vg_gpu_check() sees a cache count that does not fit. */
static void test_check_invariant(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct vg_gpu *gpu;
	u64 bo = 0;

	(void)state;
	lfx_init(&x, 1, 8 * MiB, 4 * MiB);
	gpu = x.gpu[0].gpu;
	a = lfx_vm(&x, 0);
	assert_int_equal(vg_bo_alloc(a->vm, 6 * MiB, 0, &bo), 0);
	mutex_lock(&gpu->lock);
	vg_gpu_cache_add(gpu, a->vm, 2 * MiB);
	mutex_unlock(&gpu->lock);
	assert_int_equal(vg_gpu_check(gpu), 0);
	assert_int_equal(vg_vm_cache_private(a->vm), 2 * MiB);
	/* vram_used + cache_used above vram_size. */
	mutex_lock(&gpu->lock);
	gpu->cache_used += GP;
	mutex_unlock(&gpu->lock);
	assert_int_equal(vg_gpu_check(gpu), -EIO);
	/* A VM's private bytes above the cache's. */
	mutex_lock(&gpu->lock);
	gpu->cache_used -= 2 * GP;
	mutex_unlock(&gpu->lock);
	assert_int_equal(vg_gpu_check(gpu), -EIO);
	mutex_lock(&gpu->lock);
	gpu->cache_used += GP;
	vg_gpu_cache_sub(gpu, a->vm, 2 * MiB);
	mutex_unlock(&gpu->lock);
	assert_int_equal(vg_vm_cache_private(a->vm), 0);
	assert_int_equal(vg_gpu_check(gpu), 0);
	lfx_fini(&x);
}

/* ---- the hook's lifetime ------------------------------------------------ */

struct blk {
	struct vg_gpu *gpu;
	pthread_mutex_t m;
	pthread_cond_t c;
	bool entered, go, done;
	u64 asked;
	u64 *priv_alive;	/* freed right after unregistering */
};

/* A hook that blocks until told, then frees what it was asked for. */
static u64 blk_reclaim(void *priv, u64 bytes)
{
	struct blk *k = priv;

	pthread_mutex_lock(&k->m);
	k->entered = true;
	k->asked = bytes;
	pthread_cond_broadcast(&k->c);
	while (!k->go)
		pthread_cond_wait(&k->c, &k->m);
	pthread_mutex_unlock(&k->m);
	/* Use-after-free here if unregistering did not wait (ASan). */
	(*k->priv_alive)++;
	mutex_lock(&k->gpu->lock);
	vg_gpu_cache_sub(k->gpu, NULL, bytes);
	mutex_unlock(&k->gpu->lock);
	return bytes;
}

struct alloc_arg {
	struct vg_vm *vm;
	u64 va;
	int ret;
};

static void *alloc_thread(void *p)
{
	struct alloc_arg *a = p;

	a->ret = vg_bo_alloc(a->vm, 4 * MiB, 0, &a->va);
	return NULL;
}

static void *unhook_thread(void *p)
{
	struct blk *k = p;

	vg_gpu_set_cache_reclaim(k->gpu, NULL, NULL);
	pthread_mutex_lock(&k->m);
	k->done = true;
	pthread_cond_broadcast(&k->c);
	pthread_mutex_unlock(&k->m);
	return NULL;
}

/*
 * Unregistering waits for a reclaim call under way (a BO allocation's),
 * so the hook's priv may be freed as soon as it returns.
 */
static void test_unhook_waits_for_call(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct vg_gpu *gpu;
	struct blk k;
	struct alloc_arg aa;
	pthread_t ta, tu;
	u64 bo = 0;

	(void)state;
	lfx_init(&x, 1, 8 * MiB, 4 * MiB);
	gpu = x.gpu[0].gpu;
	a = lfx_vm(&x, 0);
	memset(&k, 0, sizeof(k));
	k.gpu = gpu;
	k.priv_alive = calloc(1, sizeof(u64));
	pthread_mutex_init(&k.m, NULL);
	pthread_cond_init(&k.c, NULL);
	/* Stand in for the LRC: its hook, 2 MiB of "replicas". */
	vg_gpu_set_cache_reclaim(gpu, blk_reclaim, &k);
	assert_int_equal(vg_bo_alloc(a->vm, 4 * MiB, 0, &bo), 0);
	mutex_lock(&gpu->lock);
	vg_gpu_cache_add(gpu, NULL, 2 * MiB);
	mutex_unlock(&gpu->lock);

	aa.vm = a->vm;
	aa.va = 0;
	assert_int_equal(pthread_create(&ta, NULL, alloc_thread, &aa), 0);
	pthread_mutex_lock(&k.m);
	while (!k.entered)
		pthread_cond_wait(&k.c, &k.m);
	pthread_mutex_unlock(&k.m);
	assert_int_equal(k.asked, 2 * MiB);
	assert_int_equal(pthread_create(&tu, NULL, unhook_thread, &k), 0);
	/* The unhook cannot finish while the call runs. */
	usleep(20000);
	pthread_mutex_lock(&k.m);
	assert_false(k.done);
	k.go = true;
	pthread_cond_broadcast(&k.c);
	pthread_mutex_unlock(&k.m);
	assert_int_equal(pthread_join(tu, NULL), 0);
	/* The call is over: its priv may go now. */
	assert_int_equal(*k.priv_alive, 1);
	free(k.priv_alive);
	k.priv_alive = NULL;
	assert_int_equal(pthread_join(ta, NULL), 0);
	assert_int_equal(aa.ret, 0);
	assert_int_equal(lfx_gpu_stats(&x, 0).relocations, 0);
	assert_int_equal(lfx_gpu_stats(&x, 0).cache_used, 0);
	assert_int_equal(vg_gpu_check(gpu), 0);
	/* The LRC's own hook went with it; lfx_fini removes the GPU. */
	pthread_mutex_destroy(&k.m);
	pthread_cond_destroy(&k.c);
	lfx_fini(&x);
}

struct loop_arg {
	struct vg_vm *vm;
	int rounds;
	int fails;
};

static void *alloc_loop(void *p)
{
	struct loop_arg *l = p;
	int i;

	for (i = 0; i < l->rounds; i++) {
		u64 va = 0;

		if (vg_bo_alloc(l->vm, 4 * MiB, 0, &va)) {
			l->fails++;
			continue;
		}
		vg_bo_free(l->vm, va);
	}
	return NULL;
}

/*
 * The real cache removed from a GPU while BO allocations that need its
 * VRAM run: no call reaches the freed per-GPU state (ASan), and the
 * cache's VRAM is all given back.
 */
static void test_gpu_remove_during_alloc(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	struct loop_arg l;
	struct vg_lrc_file *h;
	pthread_t t;
	u8 *buf = malloc(2 * MiB);
	u64 va, bo = 0;

	(void)state;
	lfx_init(&x, 1, 8 * MiB, 4 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "g.bin", 2 * MiB);
	lfx_pattern(f->data, f->size, 21);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	assert_int_equal(vg_bo_alloc(b->vm, 4 * MiB, 0, &bo), 0);
	va = lfx_map(a, "g.bin", 0, 2 * MiB, VGMEM_FILE_RO);
	gpu_read_all(&x, a, va, buf, 2 * MiB);
	/*
	 * Shared replicas nobody maps stay cached while the file is (a host
	 * open keeps it); the context goes.
	 */
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "g.bin", false,
					  &h), 0);
	assert_int_equal(vg_lrc_unmap(a->ctx, va), 0);
	vg_lrc_ctx_destroy(a->ctx);
	a->ctx = NULL;
	vg_lrc_ctx_destroy(b->ctx);
	b->ctx = NULL;
	assert_int_equal(lfx_gpu_stats(&x, 0).cache_used, 2 * MiB);
	/*
	 * 4 MiB (b) + 2 MiB (cache) + 4 MiB: the first rounds need the
	 * cache's VRAM. One that runs between the unhook and the removal's
	 * eviction relocates instead (not counted here): that is the race
	 * the core accepts, a relocation, never a failure.
	 */
	l.vm = b->vm;
	l.rounds = 200;
	l.fails = 0;
	assert_int_equal(pthread_create(&t, NULL, alloc_loop, &l), 0);
	vg_lrc_gpu_remove(x.lrc, x.gpu[0].gpu);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(l.fails, 0);
	assert_int_equal(lfx_gpu_stats(&x, 0).cache_used, 0);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);
	assert_int_equal(vg_lrc_host_read(h, 0, buf, 2 * MiB), (s64)(2 * MiB));
	assert_memory_equal(buf, f->data, 2 * MiB);
	vg_lrc_host_close(h);
	/* Removing it again (lfx_fini) is a no-op. */
	lfx_fini(&x);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bo_alloc_evicts_cache),
		cmocka_unit_test(test_entitlement_ignores_cache),
		cmocka_unit_test(test_return_evicts_cache),
		cmocka_unit_test(test_check_invariant),
		cmocka_unit_test(test_unhook_waits_for_call),
		cmocka_unit_test(test_gpu_remove_during_alloc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
