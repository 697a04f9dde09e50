// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The LRC file cache on the software GPU (core/lrc/): faults, release and
 * acquire, merges, host writers, read-only sharing, eviction, write-back,
 * hostile input. GPU accesses are copy-engine copies that fault into the
 * cache through the sim's replayable faults.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)

/* First access of a page is major, a second VM's read of it minor. */
static void test_minor_major(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	struct vg_lrc_stats st;
	u8 buf[256];
	u64 va, vb;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "data.bin", 1 * MiB);
	lfx_pattern(f->data, f->size, 1);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	va = lfx_map(a, "data.bin", 0, 1 * MiB, VGMEM_FILE_RO);
	vb = lfx_map(b, "data.bin", 0, 1 * MiB, VGMEM_FILE_RO);

	lfx_gpu_read(&x, a, va + 100, buf, sizeof(buf));
	assert_memory_equal(buf, f->data + 100, sizeof(buf));
	st = lfx_stats(&x);
	assert_int_equal(st.faults_major, 1);
	assert_int_equal(st.faults_minor, 0);
	assert_int_equal(st.replicas_shared, 1);

	/* Same page, other VM: the shared replica is mapped, nothing fetched. */
	lfx_gpu_read(&x, b, vb + 200, buf, sizeof(buf));
	assert_memory_equal(buf, f->data + 200, sizeof(buf));
	st = lfx_stats(&x);
	assert_int_equal(st.faults_major, 1);
	assert_int_equal(st.faults_minor, 1);
	assert_int_equal(st.shared_maps, 1);
	assert_int_equal(st.replicas_shared, 1);
	assert_int_equal(st.fetch_host, GP);

	/* Again: mapped, no fault at all. */
	lfx_gpu_read(&x, a, va + 300, buf, sizeof(buf));
	assert_int_equal(lfx_stats(&x).faults_minor, 1);
	assert_int_equal(lfx_stats(&x).faults_major, 1);
	lfx_fini(&x);
}

static struct vg_lrc_ino *ino_of(struct lfx_vm *v, u64 va)
{
	struct vg_lrc_map *m;

	list_for_each_entry(m, &v->ctx->maps, ctx_node)
		if (va >= m->va && va < m->va + m->len)
			return m->file;
	fail();
	return NULL;
}

/* Sequential reads grow the readahead window; every byte is right. */
static void test_readahead(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct ms_file *f;
	struct vg_lrc_stats st;
	u8 *buf = malloc(GP);
	u64 va, off;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 16 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "seq.bin", 4 * MiB);
	lfx_pattern(f->data, f->size, 3);
	a = lfx_vm(&x, 0);
	va = lfx_map(a, "seq.bin", 0, 4 * MiB, VGMEM_FILE_RO);
	for (off = 0; off < 4 * MiB; off += GP) {
		lfx_gpu_read(&x, a, va + off, buf, GP);
		assert_memory_equal(buf, f->data + off, GP);
	}
	st = lfx_stats(&x);
	/* 64 GPU pages in far fewer major faults: windows of 512 KiB, 1 MiB. */
	assert_true(st.faults_major < 10);
	assert_int_equal(st.faults_major + st.readahead_pages, 64);
	assert_int_equal(st.fetch_host, 4 * MiB);
	/* One store read per window, not per GPU page. */
	assert_int_equal(st.store_reads, st.faults_major);
	assert_int_equal(st.fetch_storage, 4 * MiB);
	free(buf);
	lfx_fini(&x);
}

/* Release raises the version of exactly the 4 KiB pages written. */
static void test_release_bumps_modified(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct vg_lrc_ino *ino;
	struct vg_lrc_gpage *g;
	struct vg_lrc_stats st;
	u8 v = 0x5a;
	u64 va;
	u32 i, own;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "w.bin", 256 * KiB);
	a = lfx_vm(&x, 0);
	va = lfx_map(a, "w.bin", 0, 256 * KiB, VGMEM_FILE_RW);
	own = vg_lrc_ctx_owner(a->ctx);
	lfx_gpu_write(&x, a, va + 5, &v, 1);			/* page 0 */
	lfx_gpu_write(&x, a, va + 5 * 4096 + 7, &v, 1);	/* page 5 */
	lfx_gpu_write(&x, a, va + GP + 3 * 4096, &v, 1);	/* page 19 */
	st = lfx_stats(&x);
	assert_int_equal(st.base_copies, 2);
	assert_int_equal(st.faults_write, 2);
	/* page 5: a write fault on its own private replica, minor */
	assert_int_equal(st.faults_minor, 1);
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	st = lfx_stats(&x);
	assert_int_equal(st.released_pages, 3);
	ino = ino_of(a, va);
	mutex_lock(&x.lrc->lock);
	for (i = 0; i < 32; i++) {
		g = vg_lrc_gpage(ino, i / 16);
		assert_non_null(g);
		if (i == 0 || i == 5 || i == 19) {
			assert_int_equal(vg_vv_get(&g->vv[i % 16], own), 2);
			assert_true(vg_vv_is_newest(&g->vv[i % 16], own));
			assert_false(vg_vv_is_newest(&g->vv[i % 16],
						     VG_LRC_OWNER_CPU));
		} else {
			assert_int_equal(vg_vv_max(&g->vv[i % 16]), 1);
		}
	}
	mutex_unlock(&x.lrc->lock);
	/* Compact page entries: GAIA's TSVT row plus our masks. */
	assert_true(st.bytes_per_page > 0 && st.bytes_per_page <= 64);
	/* A second release without writes changes nothing. */
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	assert_int_equal(lfx_stats(&x).released_pages, 3);
	/* Writing page 5 again faults once more (minor) and bumps only it. */
	lfx_gpu_write(&x, a, va + 5 * 4096, &v, 1);
	assert_int_equal(vg_lrc_release(a->ctx, va, GP), 0);
	assert_int_equal(lfx_stats(&x).released_pages, 4);
	mutex_lock(&x.lrc->lock);
	g = vg_lrc_gpage(ino, 0);
	assert_non_null(g);
	assert_int_equal(vg_vv_get(&g->vv[5], own), 3);
	assert_int_equal(vg_vv_get(&g->vv[0], own), 2);
	mutex_unlock(&x.lrc->lock);
	lfx_fini(&x);
}

/* A reader keeps its version until it acquires; then it sees the new one. */
static void test_acquire_invalidates(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	u8 buf[64], nv[64];
	u64 va, vb;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "d.bin", 128 * KiB);
	lfx_pattern(f->data, f->size, 9);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	va = lfx_map(a, "d.bin", 0, 128 * KiB, VGMEM_FILE_RO);
	vb = lfx_map(b, "d.bin", 0, 128 * KiB, VGMEM_FILE_RW);
	lfx_gpu_read(&x, a, va + 1000, buf, 64);
	assert_memory_equal(buf, f->data + 1000, 64);

	memset(nv, 0xee, sizeof(nv));
	lfx_gpu_write(&x, b, vb + 1000, nv, 64);
	assert_int_equal(vg_lrc_release(b->ctx, vb, 0), 0);

	lfx_gpu_read(&x, a, va + 1000, buf, 64);
	assert_memory_equal(buf, f->data + 1000, 64);	/* old version */
	assert_int_equal(vg_lrc_acquire(a->ctx, va, 0), 0);
	assert_int_equal(lfx_stats(&x).invalidations, 1);
	lfx_gpu_read(&x, a, va + 1000, buf, 64);
	assert_memory_equal(buf, nv, 64);
	/* Untouched second GPU page: acquire keeps nothing stale there. */
	lfx_gpu_read(&x, a, va + GP + 5, buf, 64);
	assert_memory_equal(buf, f->data + GP + 5, 64);
	lfx_fini(&x);
}

/* Two contexts on two GPUs write disjoint bytes of one page: both survive. */
static void test_merge_disjoint(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	struct vg_lrc_file *hf;
	u8 pa[2048], pb[2048], buf[4096], want[4096];
	u64 va, vb;

	(void)state;
	lfx_init(&x, 2, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "img.bin", 64 * KiB);
	lfx_pattern(f->data, f->size, 4);
	memcpy(want, f->data, 4096);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 1);
	va = lfx_map(a, "img.bin", 0, GP, VGMEM_FILE_RW);
	vb = lfx_map(b, "img.bin", 0, GP, VGMEM_FILE_RW);
	memset(pa, 0xa1, sizeof(pa));
	memset(pb, 0xb2, sizeof(pb));
	/* Interleaved halves of rows: false sharing at byte granularity. */
	lfx_gpu_write(&x, a, va, pa, 1000);
	lfx_gpu_write(&x, b, vb + 1000, pb, 1000);
	lfx_gpu_write(&x, a, va + 2000, pa, 1000);
	lfx_gpu_write(&x, b, vb + 3000, pb, 1000);
	memset(want, 0xa1, 1000);
	memset(want + 1000, 0xb2, 1000);
	memset(want + 2000, 0xa1, 1000);
	memset(want + 3000, 0xb2, 1000);
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	assert_int_equal(vg_lrc_release(b->ctx, vb, 0), 0);

	/* The host reads the merge (peer: both GPUs' releases). */
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "img.bin",
					  false, &hf), 0);
	assert_int_equal(vg_lrc_host_read(hf, 0, buf, 4096), 4096);
	assert_memory_equal(buf, want, 4096);
	assert_true(lfx_stats(&x).host_reads_peer >= 1);
	assert_int_equal(lfx_stats(&x).merges, 2);
	/* Each GPU sees the other's bytes after acquire. */
	assert_int_equal(vg_lrc_acquire(a->ctx, va, 0), 0);
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	lfx_gpu_read(&x, a, va, buf, 4096);
	assert_memory_equal(buf, want, 4096);
	lfx_gpu_read(&x, b, vb, buf, 4096);
	assert_memory_equal(buf, want, 4096);
	assert_int_equal(vg_lrc_sync(a->ctx, va, 0), 0);
	assert_memory_equal(f->data, want, 4096);
	vg_lrc_host_close(hf);
	lfx_fini(&x);
}

/* The same byte written by two contexts: the highest owner id wins. */
static void test_conflict_highest_owner(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	u8 va1 = 0x11, vb1 = 0x22, buf[4];
	u64 va, vb;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "c.bin", 64 * KiB);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	assert_true(vg_lrc_ctx_owner(b->ctx) > vg_lrc_ctx_owner(a->ctx));
	va = lfx_map(a, "c.bin", 0, GP, VGMEM_FILE_RW);
	vb = lfx_map(b, "c.bin", 0, GP, VGMEM_FILE_RW);
	/* b writes and releases first, a last: still b's byte (higher id). */
	lfx_gpu_write(&x, b, vb + 9, &vb1, 1);
	lfx_gpu_write(&x, a, va + 9, &va1, 1);
	assert_int_equal(vg_lrc_release(b->ctx, vb, 0), 0);
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	assert_int_equal(vg_lrc_acquire(a->ctx, va, 0), 0);
	lfx_gpu_read(&x, a, va + 8, buf, 3);
	assert_int_equal(buf[1], vb1);
	assert_int_equal(vg_lrc_sync(a->ctx, va, 0), 0);
	assert_int_equal(f->data[9], vb1);
	lfx_fini(&x);
}

/* A host writer the cache never saw is picked up at the next acquire. */
static void test_host_write_detected(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct ms_file *f;
	struct vg_lrc_file *hf;
	u8 buf[32], ext[32], hw[32];
	u64 va;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "h.bin", 128 * KiB);
	lfx_pattern(f->data, f->size, 5);
	a = lfx_vm(&x, 0);
	va = lfx_map(a, "h.bin", 0, 128 * KiB, VGMEM_FILE_RO);
	lfx_gpu_read(&x, a, va + 4096, buf, 32);
	assert_memory_equal(buf, f->data + 4096, 32);
	lfx_gpu_read(&x, a, va + GP + 10, buf, 32);

	memset(ext, 0x77, sizeof(ext));
	ms_ext_write(f, 4096, ext, 32);
	lfx_gpu_read(&x, a, va + 4096, buf, 32);
	assert_memory_not_equal(buf, ext, 32);	/* not acquired yet */
	assert_int_equal(vg_lrc_acquire(a->ctx, va, 0), 0);
	assert_int_equal(lfx_stats(&x).host_changes, 1);
	lfx_gpu_read(&x, a, va + 4096, buf, 32);
	assert_memory_equal(buf, ext, 32);

	/* A host write through the cache: seen at the next acquire too. */
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "h.bin", true,
					  &hf), 0);
	memset(hw, 0x31, sizeof(hw));
	assert_int_equal(vg_lrc_host_write(hf, GP + 10, hw, 32), 32);
	lfx_gpu_read(&x, a, va + GP + 10, buf, 32);
	assert_memory_not_equal(buf, hw, 32);
	assert_int_equal(vg_lrc_acquire(a->ctx, va, 0), 0);
	lfx_gpu_read(&x, a, va + GP + 10, buf, 32);
	assert_memory_equal(buf, hw, 32);
	assert_int_equal(vg_lrc_host_fsync(hf), 0);
	assert_memory_equal(f->data + GP + 10, hw, 32);
	vg_lrc_host_close(hf);
	lfx_fini(&x);
}

/*
 * Ten VMs read one file through one VRAM replica per GPU page; one writes:
 * only it gets a private copy, the others read the old version until they
 * acquire.
 */
static void test_ro_sharing(void **state)
{
	struct lfx x;
	struct lfx_vm *v[10];
	struct ms_file *f;
	struct vg_lrc_stats st;
	u64 va[10];
	u8 buf[16], nv[16];
	u32 i;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "shared.bin", 128 * KiB);
	lfx_pattern(f->data, f->size, 6);
	for (i = 0; i < 10; i++) {
		v[i] = lfx_vm(&x, 0);
		va[i] = lfx_map(v[i], "shared.bin", 0, 128 * KiB,
				 VGMEM_FILE_RW);
		lfx_gpu_read(&x, v[i], va[i] + 64, buf, 16);
		assert_memory_equal(buf, f->data + 64, 16);
	}
	st = lfx_stats(&x);
	assert_int_equal(st.replicas_shared, 1);
	assert_int_equal(st.replicas_private, 0);
	assert_int_equal(st.vram_used, GP);
	assert_int_equal(st.shared_maps, 9);

	memset(nv, 0x99, sizeof(nv));
	lfx_gpu_write(&x, v[3], va[3] + 64, nv, 16);
	st = lfx_stats(&x);
	assert_int_equal(st.replicas_shared, 1);
	assert_int_equal(st.replicas_private, 1);
	assert_int_equal(st.base_copies, 1);
	assert_int_equal(vg_lrc_release(v[3]->ctx, va[3], 0), 0);
	for (i = 0; i < 10; i++) {
		if (i == 3)
			continue;
		lfx_gpu_read(&x, v[i], va[i] + 64, buf, 16);
		assert_memory_equal(buf, f->data + 64, 16);
	}
	for (i = 0; i < 10; i++) {
		assert_int_equal(vg_lrc_acquire(v[i]->ctx, va[i], 0), 0);
		lfx_gpu_read(&x, v[i], va[i] + 64, buf, 16);
		assert_memory_equal(buf, nv, 16);
	}
	st = lfx_stats(&x);
	/* The readers share one new replica; the old one is gone. */
	assert_int_equal(st.replicas_shared, 1);
	assert_int_equal(st.replicas_private, 1);
	lfx_fini(&x);
	/* The writer's release reached the file at teardown. */
	assert_true(true);
}

/* A budget of two GPU pages: every byte survives eviction. */
static void test_eviction_tiny_budget(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	struct vg_lrc_file *hf;
	u8 *want = malloc(MiB), *buf = malloc(MiB);
	u64 va, vb, off;
	u32 k;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 2 * GP);
	f = ms_add(&x.ms, "/srv/share0", "big.bin", MiB);
	lfx_pattern(f->data, f->size, 8);
	memcpy(want, f->data, MiB);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	va = lfx_map(a, "big.bin", 0, MiB, VGMEM_FILE_RW);
	vb = lfx_map(b, "big.bin", 0, MiB, VGMEM_FILE_RW);
	/* a writes every GPU page (unreleased writes get evicted)... */
	for (off = 0, k = 0; off < MiB; off += GP, k++) {
		u8 val[100];

		memset(val, 0x40 + k, sizeof(val));
		lfx_gpu_write(&x, a, va + off + 10, val, 100);
		memcpy(want + off + 10, val, 100);
	}
	/* ...and b other bytes of the same pages. */
	for (off = 0, k = 0; off < MiB; off += GP, k++) {
		u8 val[100];

		memset(val, 0x80 + k, sizeof(val));
		lfx_gpu_write(&x, b, vb + off + 4000, val, 100);
		memcpy(want + off + 4000, val, 100);
	}
	assert_true(lfx_stats(&x).evictions > 10);
	assert_true(lfx_stats(&x).vram_used <= 2 * GP);
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	assert_int_equal(vg_lrc_release(b->ctx, vb, 0), 0);
	assert_int_equal(vg_lrc_acquire(a->ctx, va, 0), 0);
	for (off = 0; off < MiB; off += 256 * KiB) {
		lfx_gpu_read(&x, a, va + off, buf, 256 * KiB);
		assert_memory_equal(buf, want + off, 256 * KiB);
	}
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "big.bin",
					  false, &hf), 0);
	assert_int_equal(vg_lrc_host_read(hf, 0, buf, MiB), MiB);
	assert_memory_equal(buf, want, MiB);
	vg_lrc_host_close(hf);
	assert_int_equal(vg_lrc_sync(b->ctx, vb, 0), 0);
	assert_memory_equal(f->data, want, MiB);
	free(want);
	free(buf);
	lfx_fini(&x);
}

/* fsync writes only the dirty 4 KiB blocks. */
static void test_fsync_dirty_blocks(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct ms_file *f;
	struct vg_lrc_stats st;
	u8 v = 0xcd;
	u64 va;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "s.bin", 256 * KiB);
	a = lfx_vm(&x, 0);
	va = lfx_map(a, "s.bin", 0, 256 * KiB, VGMEM_FILE_RW);
	lfx_gpu_write(&x, a, va + 1, &v, 1);
	lfx_gpu_write(&x, a, va + 9 * 4096 + 100, &v, 1);
	lfx_gpu_write(&x, a, va + 3 * GP + 4095, &v, 1);
	assert_int_equal(vg_lrc_sync(a->ctx, va, 0), 0);
	st = lfx_stats(&x);
	assert_int_equal(st.writeback_blocks, 3);
	assert_int_equal(st.writeback_bytes, 3 * 4096);
	assert_int_equal(x.ms.write_bytes, 3 * 4096);
	assert_int_equal(f->data[1], v);
	assert_int_equal(f->data[9 * 4096 + 100], v);
	assert_int_equal(f->data[3 * GP + 4095], v);
	assert_int_equal(f->data[2], 0);
	/* Nothing new: a second sync writes nothing. */
	assert_int_equal(vg_lrc_sync(a->ctx, va, 0), 0);
	assert_int_equal(x.ms.write_bytes, 3 * 4096);
	lfx_fini(&x);
}

/* Destroying a VM with unreleased writes releases and writes them back. */
static void test_vm_destroy_writes_back(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	u8 v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, buf[8];
	u64 va, vb;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "k.bin", 128 * KiB);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	va = lfx_map(a, "k.bin", 0, 128 * KiB, VGMEM_FILE_RW);
	vb = lfx_map(b, "k.bin", 0, 128 * KiB, VGMEM_FILE_RO);
	lfx_gpu_write(&x, a, va + GP + 8, v, 8);
	lfx_vm_destroy(a);
	/* b still maps the file: the data went to the store all the same. */
	assert_memory_equal(f->data + GP + 8, v, 8);
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	lfx_gpu_read(&x, b, vb + GP + 8, buf, 8);
	assert_memory_equal(buf, v, 8);
	lfx_fini(&x);
}

/* Hostile maps and ranges are refused and change nothing. */
static void test_hostile(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct ms_file *f;
	u64 va = 0, bo = 0, fva;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "ok.bin", 200 * KiB);
	ms_add(&x.ms, "/srv/share0", "link", 64 * KiB)->symlink = true;
	ms_add(&x.ms, "/srv/share1", "other.bin", 64 * KiB);
	ms_add(&x.ms, "/srv/share0", "ro.bin", 64 * KiB)->ro = true;
	a = lfx_vm(&x, 0);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ok.bin", 0, GP, 0, &va), -EINVAL);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ok.bin", 0, GP, 3, &va), -EINVAL);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ok.bin", 4096, GP,
				    VGMEM_FILE_RO, &va), -EINVAL);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ok.bin", 0, 0,
				    VGMEM_FILE_RO, &va), -EINVAL);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ok.bin", 0, 5 * GP,
				    VGMEM_FILE_RO, &va), -EFBIG);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ok.bin", GP, 4 * GP,
				    VGMEM_FILE_RO, &va), -EFBIG);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ok.bin", ~0ull << 16, 2 * GP,
				    VGMEM_FILE_RO, &va), -EFBIG);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "", 0, GP, VGMEM_FILE_RO, &va),
			 -EINVAL);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "/srv/share0/ok.bin", 0, GP,
				    VGMEM_FILE_RO, &va), -EACCES);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "../share1/other.bin", 0, GP,
				    VGMEM_FILE_RO, &va), -EACCES);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "link", 0, GP, VGMEM_FILE_RO,
				    &va), -EACCES);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "nope", 0, GP, VGMEM_FILE_RO,
				    &va), -ENOENT);
	assert_int_equal(vg_lrc_map(a->ctx, 9, "ok.bin", 0, GP, VGMEM_FILE_RO,
				    &va), -ENOENT);
	assert_int_equal(vg_lrc_map(a->ctx, 2, "other.bin", 0, GP,
				    VGMEM_FILE_RW, &va), -EACCES);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "ro.bin", 0, GP, VGMEM_FILE_RW,
				    &va), -EACCES);
	assert_int_equal(va, 0);
	assert_int_equal(x.ms.open_handles, 0);
	/* Share tables: unknown roots and ids, a full table. */
	assert_int_equal(vg_lrc_share_set(a->ctx, 5, "/srv/nope", false),
			 -ENOENT);
	assert_int_equal(vg_lrc_share_set(a->ctx, 5, "", false), -EINVAL);
	assert_int_equal(vg_lrc_share_clear(a->ctx, 5), -ENOENT);
	{
		u32 id;

		for (id = 10; id < 10 + VG_LRC_SHARES_MAX - 2; id++)
			assert_int_equal(vg_lrc_share_set(a->ctx, id,
							  "/srv/share1", true),
					 0);
		assert_int_equal(vg_lrc_share_set(a->ctx, id, "/srv/share1",
						  true), -ENOSPC);
		for (id = 10; id < 10 + VG_LRC_SHARES_MAX - 2; id++)
			assert_int_equal(vg_lrc_share_clear(a->ctx, id), 0);
	}
	/* A second context for the same VM. */
	{
		struct vg_lrc_ctx *c2;

		assert_int_equal(vg_lrc_ctx_create(x.lrc, a->vm, &c2), -EEXIST);
	}
	assert_int_equal(lfx_stats(&x).files, 0);

	/* The last GPU page may reach past EOF (rounded up). */
	fva = lfx_map(a, "ok.bin", GP, 3 * GP, VGMEM_FILE_RW);
	assert_int_equal(vg_lrc_acquire(a->ctx, fva + GP / 2, 0), -EINVAL);
	assert_int_equal(vg_lrc_acquire(a->ctx, fva, 4 * GP), -EINVAL);
	assert_int_equal(vg_lrc_release(a->ctx, fva + 8 * GP, 0), -EBADF);
	assert_int_equal(vg_lrc_sync(a->ctx, 0x1000, 0), -EBADF);
	assert_int_equal(vg_lrc_unmap(a->ctx, fva + GP), -EBADF);
	/* BOs and file maps never overlap; a file map is no BO. */
	assert_int_equal(vg_bo_alloc(a->vm, 2 * MiB, 0, &bo), 0);
	assert_true(bo + 2 * MiB <= fva || bo >= fva + 3 * GP);
	assert_int_equal(vg_bo_free(a->vm, fva), -ENOENT);
	bo = fva;
	assert_int_equal(vg_bo_alloc(a->vm, 2 * MiB, VGMEM_BO_FIXED_VA, &bo),
			 -EINVAL);
	assert_int_equal(vg_gpu_check(a->vm->gpu), 0);
	/* A write to a RO map is a channel error, not a write. */
	assert_int_equal(vg_lrc_unmap(a->ctx, fva), 0);
	fva = lfx_map(a, "ok.bin", 0, GP, VGMEM_FILE_RO);
	assert_int_equal(vg_lrc_fault(a->ctx, fva, true), -EFAULT);
	assert_int_equal(vg_lrc_fault(a->ctx, fva + GP, false), -EFAULT);
	assert_int_equal(vg_lrc_fault(a->ctx, fva + 4096, false), 0);
	assert_int_equal(lfx_stats(&x).faults_major, 1);
	{
		u8 v = 1;

		memcpy(tg_ptr(x.gpu[0].g, a->xfer), &v, 1);
		t_ce(a->t, a->xfer, fva, 1, 1, 1, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
		assert_int_equal(lfx_run(a->t), -EFAULT);
		assert_int_equal(f->data[0], 0);
	}
	assert_int_equal(vg_lrc_unmap(a->ctx, fva), 0);
	assert_int_equal(vg_gpu_check(a->vm->gpu), 0);
	/* The errored channel cannot be reused: retire the VM now. */
	lfx_vm_destroy(a);
	lfx_fini(&x);
}

/* Replicas take VRAM only while they exist, and never VRAM the BOs use. */
/*
 * A GPU's staging buffers are made with its first context, not when it
 * joins the cache (on by default, most GPUs never see a file map): with
 * host allocations failing, adding the GPU still works, the first context
 * fails with -ENOMEM and leaves nothing behind, the next one works.
 */
static void test_stage_with_first_ctx(void **state)
{
	struct lfx x;
	struct vg_vm_config vc = { 0 };
	struct vg_lrc_ctx *ctx;
	struct vg_vm *vm;

	(void)state;
	/* The GPU joined the cache in lfx_init with no host allocation. */
	lfx_init(&x, 1, 8 << 20, 0);
	assert_int_equal(vg_vm_create(x.gpu[0].gpu, &vc, &vm), 0);
	/* The readahead stage, then the one-page stage, fail. */
	vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_HOST_ALLOC, 1);
	assert_int_equal(vg_lrc_ctx_create(x.lrc, vm, &ctx), -ENOMEM);
	vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_HOST_ALLOC, 2);
	assert_int_equal(vg_lrc_ctx_create(x.lrc, vm, &ctx), -ENOMEM);
	/* Neither left a context on the VM (that would be -EEXIST). */
	vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_HOST_ALLOC, 0);
	assert_int_equal(vg_lrc_ctx_create(x.lrc, vm, &ctx), 0);
	vg_vm_destroy(vm);
	lfx_fini(&x);
}

static void test_vram_shared_with_bos(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct ms_file *f1, *f2;
	struct vg_gpu_stats gs;
	u8 *buf = malloc(MiB);
	u64 va1, va2, bo = 0, off;

	(void)state;
	lfx_init(&x, 1, 8 * MiB, 4 * MiB);
	f1 = ms_add(&x.ms, "/srv/share0", "one.bin", MiB);
	f2 = ms_add(&x.ms, "/srv/share0", "two.bin", 2 * MiB);
	lfx_pattern(f1->data, f1->size, 11);
	lfx_pattern(f2->data, f2->size, 12);
	a = lfx_vm(&x, 0);
	vg_gpu_get_stats(x.gpu[0].gpu, &gs);
	assert_int_equal(gs.vram_size, 8 * MiB);
	assert_int_equal(gs.cache_used, 0);
	va1 = lfx_map(a, "one.bin", 0, MiB, VGMEM_FILE_RO);
	lfx_gpu_read(&x, a, va1, buf, 512 * KiB);
	lfx_gpu_read(&x, a, va1 + 512 * KiB, buf, 512 * KiB);
	vg_gpu_get_stats(x.gpu[0].gpu, &gs);
	/* The cache's VRAM is counted apart: vram_size never moves. */
	assert_int_equal(gs.vram_size, 8 * MiB);
	assert_int_equal(gs.cache_used, MiB);
	/* A smaller budget evicts at once; bad budgets change nothing. */
	assert_int_equal(vg_lrc_gpu_set_budget(x.lrc, x.gpu[0].gpu, 4096),
			 -EINVAL);
	assert_int_equal(vg_lrc_gpu_set_budget(x.lrc, x.gpu[0].gpu, 0),
			 -EINVAL);
	assert_int_equal(vg_lrc_gpu_set_budget(x.lrc, x.gpu[0].gpu, 4 * GP),
			 0);
	assert_int_equal(lfx_stats(&x).vram_used, 4 * GP);
	vg_gpu_get_stats(x.gpu[0].gpu, &gs);
	assert_int_equal(gs.cache_used, 4 * GP);
	lfx_gpu_read(&x, a, va1 + 100, buf, 4096);
	assert_memory_equal(buf, f1->data + 100, 4096);
	assert_int_equal(vg_lrc_gpu_set_budget(x.lrc, x.gpu[0].gpu, 4 * MiB),
			 0);
	assert_int_equal(vg_bo_alloc(a->vm, 6 * MiB, 0, &bo), 0);
	/* 1 MiB left: two.bin's 2 MiB stream through it, recycled. */
	va2 = lfx_map(a, "two.bin", 0, 2 * MiB, VGMEM_FILE_RO);
	for (off = 0; off < 2 * MiB; off += 256 * KiB) {
		lfx_gpu_read(&x, a, va2 + off, buf, 256 * KiB);
		assert_memory_equal(buf, f2->data + off, 256 * KiB);
	}
	vg_gpu_get_stats(x.gpu[0].gpu, &gs);
	assert_true(gs.vram_used + gs.cache_used <= 8 * MiB);
	assert_int_equal(gs.vram_used, 6 * MiB);
	assert_true(lfx_stats(&x).evictions > 0);
	assert_int_equal(vg_gpu_check(x.gpu[0].gpu), 0);
	assert_int_equal(vg_lrc_unmap(a->ctx, va1), 0);
	assert_int_equal(vg_lrc_unmap(a->ctx, va2), 0);
	vg_gpu_get_stats(x.gpu[0].gpu, &gs);
	assert_int_equal(gs.vram_size, 8 * MiB);
	assert_int_equal(gs.cache_used, 0);
	assert_int_equal(lfx_stats(&x).vram_used, 0);
	free(buf);
	lfx_fini(&x);
}

/* GPU driver failures inside a fault: the channel errors, the cache stays whole. */
static void test_injected_failures(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b, *c;
	struct ms_file *f;
	struct vg_lrc_stats st;
	u8 buf[64], v[64], orig[64];
	u64 va, vb, vc;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "inj.bin", 256 * KiB);
	lfx_pattern(f->data, f->size, 13);
	memcpy(orig, f->data + GP, 64);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	c = lfx_vm(&x, 0);
	va = lfx_map(a, "inj.bin", 0, 256 * KiB, VGMEM_FILE_RW);
	vb = lfx_map(b, "inj.bin", 0, 256 * KiB, VGMEM_FILE_RW);
	vc = lfx_map(c, "inj.bin", 0, 256 * KiB, VGMEM_FILE_RW);

	/* The fetch's copy fails: a's read errors its channel. */
	vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_COPY, 1);
	t_ce(a->t, va + 100, a->xfer, 64, 64, 64, 1, VGMEM_CE_LAUNCH_DST_PHYS);
	assert_int_equal(lfx_run(a->t), -EFAULT);
	st = lfx_stats(&x);
	assert_int_equal(st.replicas_shared, 0);
	assert_int_equal(st.vram_used, 0);
	lfx_vm_destroy(a);

	/* No VRAM for b's private replica: its write errors, nothing leaks. */
	lfx_gpu_read(&x, b, vb + GP, buf, 64);
	vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_VRAM_ALLOC, 1);
	memset(v, 0x3c, sizeof(v));
	memcpy(tg_ptr(x.gpu[0].g, b->xfer), v, 64);
	t_ce(b->t, b->xfer, vb + GP, 64, 64, 64, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
	assert_int_equal(lfx_run(b->t), -EFAULT);
	st = lfx_stats(&x);
	assert_int_equal(st.replicas_private, 0);
	assert_int_equal(st.replicas_shared, 1);
	lfx_vm_destroy(b);
	/* The failed write never happened. */
	assert_memory_equal(f->data + GP, orig, 64);

	/* c works normally afterwards. */
	lfx_gpu_write(&x, c, vc + GP, v, 64);
	assert_int_equal(vg_lrc_sync(c->ctx, vc, 0), 0);
	assert_memory_equal(f->data + GP, v, 64);
	lfx_gpu_read(&x, c, vc + 100, buf, 64);
	assert_int_equal(vg_gpu_check(c->vm->gpu), 0);
	lfx_fini(&x);
}

/* ---- concurrency: API calls from threads, faults on two fault threads ---- */

#include <pthread.h>

#define CT_SIZE		(256 * KiB)
#define CT_ITERS	30

struct ct {
	struct lfx *x;
	struct lfx_vm *v;
	u64 va;
	u32 who;		/* 1, 2: GPU writers; 0: the host */
	struct vg_lrc_file *hf;
	u8 *last;		/* this writer's final bytes */
	int err;
};

/* Pages (4 KiB) of the file belong to writer page % 3. */
static bool ct_mine(u64 b, u32 who)
{
	return (b / 4096) % 3 == who;
}

static int ct_run(struct tchan *t)
{
	u64 end = lfx_now() + T_TIMEOUT;

	t_submit(t);
	while (t_userd(t, VGMEM_USERD_GP_GET) != t->put &&
	       !t_userd(t, VGMEM_USERD_ERROR)) {
		if (lfx_now() > end)
			return -ETIMEDOUT;
		usleep(50);
	}
	t->pb_pos = t->seg_start = 0;
	return t_userd(t, VGMEM_USERD_ERROR) ? -EFAULT : 0;
}

static void *ct_gpu(void *arg)
{
	struct ct *c = arg;
	struct lfx_vm *v = c->v;
	u8 *gm = tg_ptr(c->x->gpu[v->gpu].g, v->xfer);
	u64 b;
	u32 it;
	int err = 0;

	for (it = 0; it < CT_ITERS && !err; it++) {
		err = vg_lrc_acquire(v->ctx, c->va, 0);
		if (err)
			break;
		for (b = 0; b < CT_SIZE; b += 4096) {
			if (!ct_mine(b, c->who))
				continue;
			memset(gm + b, (int)(it * 3 + c->who), 4096);
			memset(c->last + b, (int)(it * 3 + c->who), 4096);
			t_ce(v->t, v->xfer + b, c->va + b, 4096, 4096, 4096, 1,
			     VGMEM_CE_LAUNCH_SRC_PHYS);
		}
		err = ct_run(v->t);
		if (!err)
			err = vg_lrc_release(v->ctx, c->va, 0);
	}
	c->err = err;
	return NULL;
}

static void *ct_host(void *arg)
{
	struct ct *c = arg;
	u8 *buf = malloc(CT_SIZE);
	u64 b;
	u32 it;
	s64 n;
	int err = 0;

	for (it = 0; it < CT_ITERS * 2 && !err; it++) {
		n = vg_lrc_host_read(c->hf, 0, buf, CT_SIZE);
		if (n != (s64)CT_SIZE) {
			err = -EIO;
			break;
		}
		for (b = 0; b < CT_SIZE && !err; b += 4096) {
			if (!ct_mine(b, 0))
				continue;
			memset(c->last + b, (int)(0x80 + it), 4096);
			if (vg_lrc_host_write(c->hf, b, c->last + b, 4096) != 4096)
				err = -EIO;
		}
		usleep(200);
	}
	free(buf);
	c->err = err;
	return NULL;
}

/* Two GPUs and the host write their pages of one file at the same time. */
static void test_concurrent(void **state)
{
	struct lfx x;
	struct ms_file *f;
	struct ct c[3];
	pthread_t th[3];
	u8 *want = calloc(1, CT_SIZE);
	u64 b;
	u32 i;

	(void)state;
	lfx_init(&x, 2, 64 * MiB, 3 * GP);
	f = ms_add(&x.ms, "/srv/share0", "cc.bin", CT_SIZE);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 3; i++) {
		c[i].x = &x;
		c[i].who = i;
		c[i].last = want;
	}
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "cc.bin", true,
					  &c[0].hf), 0);
	for (i = 1; i < 3; i++) {
		c[i].v = lfx_vm(&x, i - 1);
		c[i].va = lfx_map(c[i].v, "cc.bin", 0, CT_SIZE,
				   VGMEM_FILE_RW);
	}
	assert_int_equal(pthread_create(&th[0], NULL, ct_host, &c[0]), 0);
	for (i = 1; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, ct_gpu, &c[i]),
				 0);
	for (i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].err, 0);
	}
	assert_int_equal(vg_lrc_host_fsync(c[0].hf), 0);
	for (b = 0; b < CT_SIZE; b++)
		if (f->data[b] != want[b])
			fail_msg("byte %llu is %u, want %u",
				 (unsigned long long)b, f->data[b], want[b]);
	assert_true(lfx_stats(&x).evictions > 0);
	vg_lrc_host_close(c[0].hf);
	free(want);
	lfx_fini(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minor_major),
		cmocka_unit_test(test_readahead),
		cmocka_unit_test(test_release_bumps_modified),
		cmocka_unit_test(test_acquire_invalidates),
		cmocka_unit_test(test_merge_disjoint),
		cmocka_unit_test(test_conflict_highest_owner),
		cmocka_unit_test(test_host_write_detected),
		cmocka_unit_test(test_ro_sharing),
		cmocka_unit_test(test_eviction_tiny_budget),
		cmocka_unit_test(test_fsync_dirty_blocks),
		cmocka_unit_test(test_vm_destroy_writes_back),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_stage_with_first_ctx),
		cmocka_unit_test(test_vram_shared_with_bos),
		cmocka_unit_test(test_injected_failures),
		cmocka_unit_test(test_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
