// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Host replicas (core/lrc/evict.c): when buffer objects hold all of a
 * GPU's VRAM, the file cache's replicas go to host RAM and are mapped to
 * the GPU all the same (GPUswap's answer for memory that cannot be in
 * VRAM), so file maps keep working on an oversubscribed GPU. They are not
 * VRAM (not in the cache's vram_used or the GPU's cache_used), they keep
 * every semantic of a VRAM replica (shared RO vs private, release and
 * acquire, eviction with unreleased writes, write-back, unmap, VM
 * teardown), the reclaim hook leaves them alone, and they move to VRAM
 * once it is free again.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)
#define VRAM	(8 * MiB)

/* A VM whose BO takes all of GPU 0's VRAM; returns the BO's VA. */
static u64 fill_vram(struct lfx *x, struct lfx_vm **hog)
{
	u64 bo = 0;

	*hog = lfx_vm(x, 0);
	assert_int_equal(vg_bo_alloc((*hog)->vm, VRAM, 0, &bo), 0);
	assert_int_equal(lfx_gpu_stats(x, 0).vram_used, VRAM);
	return bo;
}

/* The GPU of v reads/writes len bytes at va in 256 KiB steps. */
static void gpu_read_all(struct lfx *x, struct lfx_vm *v, u64 va, u8 *buf,
			 u64 len)
{
	u64 off, n;

	for (off = 0; off < len; off += n) {
		n = min_t(u64, len - off, 256 * KiB);
		lfx_gpu_read(x, v, va + off, buf + off, (u32)n);
	}
}

static void gpu_write_all(struct lfx *x, struct lfx_vm *v, u64 va,
			  const u8 *buf, u64 len)
{
	u64 off, n;

	for (off = 0; off < len; off += n) {
		n = min_t(u64, len - off, 256 * KiB);
		lfx_gpu_write(x, v, va + off, buf + off, (u32)n);
	}
}

/*
 * Replicas are host ones (or evicted); the cache holds no VRAM, which the
 * BOs fill.
 */
static void assert_all_host(struct lfx *x)
{
	struct vg_lrc_stats st = lfx_stats(x);

	assert_true(st.replicas_host > 0);
	assert_true(st.replicas_host <=
		    st.replicas_shared + st.replicas_private);
	assert_int_equal(st.replicas_host_used, st.replicas_host * GP);
	assert_int_equal(st.vram_used, 0);
	assert_int_equal(lfx_gpu_stats(x, 0).cache_used, 0);
	assert_int_equal(lfx_gpu_stats(x, 0).vram_used, VRAM);
	assert_int_equal(vg_gpu_check(x->gpu[0].gpu), 0);
}

/*
 * VRAM full of BOs: one VM maps a file read-only, another read-write;
 * both read and write through the GPU with no channel error, LRC holds
 * (the reader sees the writer's bytes only after release and acquire),
 * and sync leaves the file exact.
 */
static void test_full_vram_ro_rw(void **state)
{
	struct lfx x;
	struct lfx_vm *hog, *r, *w;
	struct ms_file *f;
	u8 *orig, *want, *buf;
	u64 vr, vw;

	(void)state;
	orig = malloc(MiB);
	want = malloc(MiB);
	buf = malloc(MiB);
	lfx_init(&x, 1, VRAM, 4 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "h.bin", MiB);
	lfx_pattern(f->data, MiB, 9);
	memcpy(orig, f->data, MiB);
	memcpy(want, orig, MiB);
	lfx_pattern(want + 128 * KiB, 384 * KiB, 21);
	fill_vram(&x, &hog);
	r = lfx_vm(&x, 0);
	w = lfx_vm(&x, 0);
	vr = lfx_map(r, "h.bin", 0, MiB, VGMEM_FILE_RO);
	vw = lfx_map(w, "h.bin", 0, MiB, VGMEM_FILE_RW);

	gpu_read_all(&x, r, vr, buf, MiB);
	assert_memory_equal(buf, orig, MiB);
	assert_all_host(&x);
	assert_int_equal(lfx_stats(&x).replicas_private, 0);
	assert_int_equal(lfx_stats(&x).replicas_host, 16);

	/* Private host replicas with base copies; the reader keeps its view. */
	gpu_write_all(&x, w, vw + 128 * KiB, want + 128 * KiB, 384 * KiB);
	gpu_read_all(&x, w, vw, buf, MiB);
	assert_memory_equal(buf, want, MiB);
	assert_true(lfx_stats(&x).replicas_private >= 6);
	assert_true(lfx_stats(&x).base_copies >= 6);
	assert_all_host(&x);
	/* No evictions here: every replica is a host one. */
	assert_int_equal(lfx_stats(&x).replicas_host,
			 lfx_stats(&x).replicas_shared +
			 lfx_stats(&x).replicas_private);
	gpu_read_all(&x, r, vr, buf, MiB);
	assert_memory_equal(buf, orig, MiB);

	/* Released and acquired: the reader sees it; synced: the file. */
	assert_int_equal(vg_lrc_release(w->ctx, vw, 0), 0);
	gpu_read_all(&x, r, vr, buf, MiB);
	assert_memory_equal(buf, orig, MiB);
	assert_int_equal(vg_lrc_acquire(r->ctx, vr, 0), 0);
	gpu_read_all(&x, r, vr, buf, MiB);
	assert_memory_equal(buf, want, MiB);
	assert_int_equal(vg_lrc_sync(w->ctx, vw, 0), 0);
	assert_memory_equal(f->data, want, MiB);
	assert_all_host(&x);
	assert_int_equal(lfx_gpu_stats(&x, 0).relocations, 0);

	/* A second round of writes after release: write tracking still works. */
	lfx_pattern(want, 64 * KiB, 33);
	gpu_write_all(&x, w, vw, want, 64 * KiB);
	assert_int_equal(vg_lrc_sync(w->ctx, vw, 64 * KiB), 0);
	assert_memory_equal(f->data, want, MiB);

	assert_int_equal(vg_lrc_unmap(r->ctx, vr), 0);
	assert_int_equal(vg_lrc_unmap(w->ctx, vw), 0);
	assert_memory_equal(f->data, want, MiB);
	assert_int_equal(lfx_stats(&x).replicas_private, 0);
	assert_int_equal(lfx_gpu_stats(&x, 0).cache_used, 0);
	lfx_fini(&x);
	free(orig);
	free(want);
	free(buf);
}

/* A VM torn down with unreleased writes in host replicas keeps them. */
static void test_full_vram_vm_destroy(void **state)
{
	struct lfx x;
	struct lfx_vm *hog, *w;
	struct ms_file *f;
	u8 *want;
	u64 vw;

	(void)state;
	want = malloc(512 * KiB);
	lfx_init(&x, 1, VRAM, 4 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "d.bin", 512 * KiB);
	lfx_pattern(f->data, 512 * KiB, 4);
	memcpy(want, f->data, 512 * KiB);
	lfx_pattern(want + 4000, 300 * KiB, 17);
	fill_vram(&x, &hog);
	w = lfx_vm(&x, 0);
	vw = lfx_map(w, "d.bin", 0, 512 * KiB, VGMEM_FILE_RW);
	gpu_write_all(&x, w, vw + 4000, want + 4000, 300 * KiB);
	assert_all_host(&x);
	lfx_vm_destroy(w);
	assert_memory_equal(f->data, want, 512 * KiB);
	assert_int_equal(lfx_stats(&x).replicas_private, 0);
	lfx_fini(&x);
	free(want);
}

/*
 * The host replicas are bounded by the GPU's cache budget: beyond it the
 * least recently allocated are evicted like VRAM ones, a private one's
 * unreleased writes kept until its owner faults it back. Every byte
 * survives; the reclaim hook frees no host replica (they hold no VRAM).
 */
static void test_host_replica_eviction(void **state)
{
	struct lfx x;
	struct lfx_vm *hog, *w, *r;
	struct vg_lrc_gpu *lg;
	struct vg_lrc_stats st;
	struct ms_file *f;
	u8 *orig, *want, *buf;
	u64 vw, vr, before;

	(void)state;
	orig = malloc(MiB);
	want = malloc(MiB);
	buf = malloc(MiB);
	lfx_init(&x, 1, VRAM, 4 * GP);
	f = ms_add(&x.ms, "/srv/share0", "e.bin", MiB);
	lfx_pattern(f->data, MiB, 2);
	memcpy(orig, f->data, MiB);
	memcpy(want, orig, MiB);
	lfx_pattern(want, MiB, 40);
	fill_vram(&x, &hog);
	w = lfx_vm(&x, 0);
	r = lfx_vm(&x, 0);
	vw = lfx_map(w, "e.bin", 0, MiB, VGMEM_FILE_RW);
	vr = lfx_map(r, "e.bin", 0, MiB, VGMEM_FILE_RO);

	/* 16 private GPU pages through 4 pages of host replicas. */
	gpu_write_all(&x, w, vw, want, MiB);
	st = lfx_stats(&x);
	assert_true(st.replicas_host_used <= 4 * GP);
	assert_true(st.evictions >= 12);
	assert_int_equal(st.replicas_private, 16);	/* 12 of them evicted */
	assert_all_host(&x);

	/* Nothing released: the other VM and the host read the old file. */
	gpu_read_all(&x, r, vr, buf, MiB);
	assert_memory_equal(buf, orig, MiB);
	assert_memory_equal(f->data, orig, MiB);

	/* The writer reads every one of its unreleased bytes back. */
	gpu_read_all(&x, w, vw, buf, MiB);
	assert_memory_equal(buf, want, MiB);
	assert_true(lfx_stats(&x).replicas_host_used <= 4 * GP);

	/* The reclaim hook frees VRAM only: it has none to give. */
	mutex_lock(&x.lrc->lock);
	lg = vg_lrc_gpu_find(x.lrc, x.gpu[0].gpu);
	mutex_unlock(&x.lrc->lock);
	before = lfx_stats(&x).replicas_host;
	assert_int_equal(vg_lrc_reclaim(lg, MiB), 0);
	assert_int_equal(lfx_stats(&x).replicas_host, before);

	/* Release half, acquire: the reader sees that half only. */
	assert_int_equal(vg_lrc_release(w->ctx, vw, 512 * KiB), 0);
	assert_int_equal(vg_lrc_acquire(r->ctx, vr, 0), 0);
	gpu_read_all(&x, r, vr, buf, MiB);
	assert_memory_equal(buf, want, 512 * KiB);
	assert_memory_equal(buf + 512 * KiB, orig + 512 * KiB, 512 * KiB);
	assert_int_equal(vg_lrc_sync(w->ctx, vw, 0), 0);
	assert_memory_equal(f->data, want, MiB);
	assert_true(lfx_stats(&x).replicas_host_used <= 4 * GP);
	assert_all_host(&x);
	lfx_fini(&x);
	free(orig);
	free(want);
	free(buf);
}

/*
 * When the BOs leave, new replicas go to VRAM and later faults move the
 * host replicas there too, keeping their maps, written pages and unreleased
 * bytes.
 */
static void test_promotion(void **state)
{
	struct lfx x;
	struct lfx_vm *hog, *r, *w;
	struct vg_lrc_stats st;
	struct ms_file *f;
	u8 *orig, *want, *buf;
	u64 vr, vw, bo, host;
	int i;

	(void)state;
	orig = malloc(2 * MiB);
	want = malloc(2 * MiB);
	buf = malloc(2 * MiB);
	lfx_init(&x, 1, VRAM, 4 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "p.bin", 2 * MiB);
	lfx_pattern(f->data, 2 * MiB, 6);
	memcpy(orig, f->data, 2 * MiB);
	memcpy(want, orig, 2 * MiB);
	lfx_pattern(want, 256 * KiB, 50);
	bo = fill_vram(&x, &hog);
	r = lfx_vm(&x, 0);
	w = lfx_vm(&x, 0);
	vr = lfx_map(r, "p.bin", 0, 2 * MiB, VGMEM_FILE_RO);
	vw = lfx_map(w, "p.bin", 0, 2 * MiB, VGMEM_FILE_RW);
	gpu_read_all(&x, r, vr, buf, MiB);
	gpu_write_all(&x, w, vw, want, 256 * KiB);	/* not released */
	assert_all_host(&x);
	host = lfx_stats(&x).replicas_host;
	assert_int_equal(host, 16 + 4);
	assert_int_equal(lfx_stats(&x).promotions, 0);

	assert_int_equal(vg_bo_free(hog->vm, bo), 0);
	/*
	 * Random faults on the second MiB (one GPU page each): each lands in
	 * VRAM and moves up to VG_LRC_PROMOTE_BATCH host replicas there.
	 */
	for (i = 15; i >= 0; i--)
		lfx_gpu_read(&x, r, vr + MiB + (u64)i * GP, buf, 64);
	st = lfx_stats(&x);
	assert_int_equal(st.replicas_host, 0);
	assert_int_equal(st.replicas_host_used, 0);
	assert_int_equal(st.promotions, host);
	assert_int_equal(st.vram_used, (host + 16) * GP);
	assert_int_equal(lfx_gpu_stats(&x, 0).cache_used, st.vram_used);
	assert_int_equal(vg_vm_cache_private(w->vm), 4 * GP);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);

	/*
	 * The writer's bytes moved with it, its maps too: it reads them and
	 * keeps writing its written pages with no fault.
	 */
	st = lfx_stats(&x);
	gpu_read_all(&x, w, vw, buf, 256 * KiB);
	assert_memory_equal(buf, want, 256 * KiB);
	lfx_pattern(want + 1000, 2000, 77);
	lfx_gpu_write(&x, w, vw + 1000, want + 1000, 2000);
	assert_int_equal(lfx_stats(&x).faults_major, st.faults_major);
	assert_int_equal(lfx_stats(&x).faults_minor, st.faults_minor);
	gpu_read_all(&x, r, vr, buf, 2 * MiB);
	assert_memory_equal(buf, orig, 2 * MiB);
	assert_int_equal(vg_lrc_sync(w->ctx, vw, 0), 0);
	assert_memory_equal(f->data, want, 2 * MiB);
	assert_int_equal(vg_lrc_acquire(r->ctx, vr, 0), 0);
	gpu_read_all(&x, r, vr, buf, 2 * MiB);
	assert_memory_equal(buf, want, 2 * MiB);
	assert_int_equal(lfx_stats(&x).replicas_host, 0);
	lfx_fini(&x);
	free(orig);
	free(want);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_vram_ro_rw),
		cmocka_unit_test(test_full_vram_vm_destroy),
		cmocka_unit_test(test_host_replica_eviction),
		cmocka_unit_test(test_promotion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
