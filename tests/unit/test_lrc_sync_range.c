// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Range-first detection of host writers outside the cache (docs/lrc.md,
 * "acquire"): when the store's change counter moves, an acquire compares
 * only its own range with the store; every other cached page of the file
 * is compared lazily, by whatever uses it first (another acquire, a host
 * read or write, a GPU fetch, a merge, a write-back), and never skipped:
 *  - the compare counter (stats.host_compares) shows that the acquire
 *    compared its range and nothing else, and each later use one page;
 *  - every later reader of a page sees the outside writer's bytes;
 *  - write-back (fsync, msync) never writes a stale host copy over them,
 *    and a host write after the outside one wins over it.
 * The file is 4 MiB (64 GPU pages), small enough for ASan.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)
#define FSZ	(4 * MiB)
#define NGP	(FSZ / GP)
#define R_OFF	(1 * MiB)	/* the acquired range */
#define R_LEN	(256 * KiB)

struct sr {
	struct lfx x;
	struct lfx_vm *a;
	struct ms_file *f;
	struct vg_lrc_file *hf;
	u8 *want;
	u64 va;
};

static void sr_init(struct sr *t)
{
	static u8 buf[GP];
	u64 off;

	lfx_init(&t->x, 1, 64 * MiB, 0);
	t->f = ms_add(&t->x.ms, "/srv/share0", "s.bin", FSZ);
	lfx_pattern(t->f->data, FSZ, 21);
	t->want = malloc(FSZ);
	assert_non_null(t->want);
	memcpy(t->want, t->f->data, FSZ);
	t->a = lfx_vm(&t->x, 0);
	assert_int_equal(vg_lrc_map(t->a->ctx, 1, "s.bin", 0, FSZ,
				    VGMEM_FILE_RW, &t->va), 0);
	assert_int_equal(vg_lrc_host_open(t->x.lrc, "/srv/share0", "s.bin",
					  true, &t->hf), 0);
	/* The whole file in host copies, so a counter move has 64 to compare. */
	for (off = 0; off < FSZ; off += GP)
		assert_int_equal(vg_lrc_host_read(t->hf, off, buf, GP),
				 (s64)GP);
	assert_int_equal(lfx_stats(&t->x).host_used, FSZ);
}

static void sr_fini(struct sr *t)
{
	vg_lrc_host_close(t->hf);
	lfx_fini(&t->x);
	free(t->want);
}

static void sr_ext(struct sr *t, u64 off, u8 v, u32 len)
{
	lfx_fill_ext(t->f, t->want, off, v, len);
}

static void sr_host(struct sr *t, u64 off, u8 v, u32 len)
{
	lfx_fill_cache(t->hf, t->want, off, v, len);
}

static void sr_host_check(struct sr *t, u64 off, u64 len)
{
	u8 *buf = malloc(len);

	assert_int_equal(vg_lrc_host_read(t->hf, off, buf, len), (s64)len);
	assert_memory_equal(buf, t->want + off, len);
	free(buf);
}

static void sr_gpu_check(struct sr *t, struct lfx_vm *v, u64 va, u64 off,
			 u64 len)
{
	u8 *buf = malloc(len);

	lfx_gpu_read(&t->x, v, va + off, buf, (u32)len);
	assert_memory_equal(buf, t->want + off, len);
	free(buf);
}

/*
 * Outside writes in and out of the acquired range: the acquire compares its
 * 4 GPU pages only; the others are compared when a host read, a GPU fetch
 * or another acquire first uses them, one each, and all see the bytes.
 */
static void test_range_first(void **state)
{
	struct vg_lrc_stats s0, s1;
	struct lfx_vm *b;
	struct sr t;
	u64 vb;

	(void)state;
	sr_init(&t);
	/* The GPU reads the range: shared replicas of the old version. */
	sr_gpu_check(&t, t.a, t.va, R_OFF, R_LEN);
	sr_ext(&t, R_OFF + GP + 100, 0xa1, 50);		/* in the range */
	sr_ext(&t, 40 * GP + 7, 0xa2, 200);		/* host reads it */
	sr_ext(&t, 60 * GP + 4096, 0xa3, 1);		/* GPU B fetches it */
	sr_ext(&t, 3 * GP, 0xa4, 16);			/* A acquires it later */
	s0 = lfx_stats(&t.x);
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va + R_OFF, R_LEN), 0);
	s1 = lfx_stats(&t.x);
	assert_int_equal(s1.host_compares - s0.host_compares, R_LEN / GP);
	assert_int_equal(s1.host_changes - s0.host_changes, 1);
	sr_gpu_check(&t, t.a, t.va, R_OFF, R_LEN);

	/* A host read of one unverified page compares that page only. */
	s0 = lfx_stats(&t.x);
	sr_host_check(&t, 40 * GP, GP);
	s1 = lfx_stats(&t.x);
	assert_int_equal(s1.host_compares - s0.host_compares, 1);
	assert_int_equal(s1.host_changes - s0.host_changes, 1);

	/* A GPU fetch (another VM's first read) compares its page. */
	b = lfx_vm(&t.x, 0);
	assert_int_equal(vg_lrc_map(b->ctx, 1, "s.bin", 60 * GP, GP,
				    VGMEM_FILE_RO, &vb), 0);
	s0 = lfx_stats(&t.x);
	sr_gpu_check(&t, b, vb - 60 * GP, 60 * GP, GP);
	s1 = lfx_stats(&t.x);
	assert_int_equal(s1.host_compares - s0.host_compares, 1);

	/* Another acquire: its range, nothing more (no counter move). */
	s0 = lfx_stats(&t.x);
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va, 4 * GP), 0);
	s1 = lfx_stats(&t.x);
	assert_int_equal(s1.host_compares - s0.host_compares, 4);
	sr_gpu_check(&t, t.a, t.va, 0, 4 * GP);
	/* Verified now: the same acquire again compares nothing. */
	s0 = lfx_stats(&t.x);
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va, 4 * GP), 0);
	s1 = lfx_stats(&t.x);
	assert_int_equal(s1.host_compares, s0.host_compares);

	/* Everything else, read in full, is the store's. */
	sr_host_check(&t, 0, FSZ);
	assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
	assert_memory_equal(t.f->data, t.want, FSZ);
	sr_fini(&t);
}

/*
 * A replica outside the acquired range keeps the version it had (LRC: not
 * acquired yet); its own acquire of the page compares it then and
 * invalidates the replica.
 */
static void test_stale_replica_outside_range(void **state)
{
	u8 old[64], buf[64];
	struct sr t;

	(void)state;
	sr_init(&t);
	lfx_gpu_read(&t.x, t.a, t.va + 50 * GP, old, sizeof(old));
	sr_ext(&t, 50 * GP, 0xb1, 64);
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va + R_OFF, R_LEN), 0);
	/* Not acquired: it may still read its version (and here does). */
	lfx_gpu_read(&t.x, t.a, t.va + 50 * GP, buf, sizeof(buf));
	assert_memory_equal(buf, old, sizeof(buf));
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va + 50 * GP, GP), 0);
	sr_gpu_check(&t, t.a, t.va, 50 * GP, GP);
	sr_fini(&t);
}

/*
 * Write-back never puts a stale host copy over an outside writer's bytes
 * in a page no acquire compared: the cache's dirty page (a host write, a
 * GPU release merged into it) and the outside writer's bytes both land.
 */
static void test_fsync_unverified(void **state)
{
	u8 g[32];
	struct sr t;

	(void)state;
	sr_init(&t);
	/* Page 30: a host write, then an outside write of other bytes. */
	sr_host(&t, 30 * GP + 10, 0xc1, 100);
	sr_ext(&t, 30 * GP + 200, 0xc2, 100);
	/* Page 31: a GPU release, then an outside write of other bytes. */
	memset(g, 0xc3, sizeof(g));
	lfx_gpu_write(&t.x, t.a, t.va + 31 * GP + 64, g, sizeof(g));
	memset(t.want + 31 * GP + 64, 0xc3, sizeof(g));
	assert_int_equal(vg_lrc_release(t.a->ctx, t.va + 31 * GP, GP), 0);
	sr_host_check(&t, 31 * GP, 128);	/* merged into the host copy */
	sr_ext(&t, 31 * GP + 1000, 0xc4, 10);
	/* The counter moved; this acquire compares its range only. */
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va + R_OFF, R_LEN), 0);
	/* msync of another range writes nothing of pages 30 and 31 ... */
	assert_int_equal(vg_lrc_sync(t.a->ctx, t.va, GP), 0);
	assert_memory_equal(t.f->data + 30 * GP + 200, t.want + 30 * GP + 200,
			    100);
	assert_memory_equal(t.f->data + 31 * GP + 1000,
			    t.want + 31 * GP + 1000, 10);
	/* ... and fsync writes both sides' bytes. */
	assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
	assert_memory_equal(t.f->data, t.want, FSZ);
	sr_host_check(&t, 0, FSZ);
	sr_fini(&t);
}

/*
 * The file's last close writes back without merging first (no GPU is
 * left): its write-back compares the dirty pages no acquire compared.
 */
static void test_close_unverified(void **state)
{
	struct lfx_vm *b;
	struct sr t;
	u64 vb;

	(void)state;
	sr_init(&t);
	/* B maps only the acquired range; A's whole-file map goes first. */
	b = lfx_vm(&t.x, 0);
	assert_int_equal(vg_lrc_map(b->ctx, 1, "s.bin", R_OFF, R_LEN,
				    VGMEM_FILE_RW, &vb), 0);
	assert_int_equal(vg_lrc_unmap(t.a->ctx, t.va), 0);
	sr_host(&t, 12 * GP + 40, 0xf1, 60);
	/* The CPU's release (it compares page 12): dirty, not written back. */
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	sr_ext(&t, 12 * GP + 300, 0xf2, 60);
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	assert_int_equal(vg_lrc_unmap(b->ctx, vb), 0);
	vg_lrc_host_close(t.hf);
	/* The cache is gone: the store holds both writers' bytes. */
	assert_int_equal(lfx_stats(&t.x).files, 0);
	assert_memory_equal(t.f->data, t.want, FSZ);
	lfx_fini(&t.x);
	free(t.want);
}

/*
 * A host write after an outside write of the same bytes wins, even when no
 * acquire compared the page in between: the write compares it first.
 */
static void test_host_write_after_outside(void **state)
{
	struct sr t;

	(void)state;
	sr_init(&t);
	sr_ext(&t, 20 * GP + 512, 0xd1, 64);
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va + R_OFF, R_LEN), 0);
	sr_host(&t, 20 * GP + 512, 0xd2, 32);	/* over half of it */
	assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
	assert_memory_equal(t.f->data, t.want, FSZ);
	assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va + 20 * GP, GP), 0);
	sr_gpu_check(&t, t.a, t.va, 20 * GP, GP);
	sr_fini(&t);
}

/*
 * Several counter moves between uses of a page: each outside write is
 * seen, the page is compared once per use, not once per move.
 */
static void test_many_moves(void **state)
{
	struct vg_lrc_stats s0, s1;
	struct sr t;
	u32 i;

	(void)state;
	sr_init(&t);
	for (i = 0; i < 5; i++) {
		sr_ext(&t, 45 * GP + i * 8, (u8)(0xe0 + i), 8);
		assert_int_equal(vg_lrc_acquire(t.a->ctx, t.va + R_OFF, GP),
				 0);
	}
	s0 = lfx_stats(&t.x);
	sr_host_check(&t, 45 * GP, GP);
	s1 = lfx_stats(&t.x);
	assert_int_equal(s1.host_compares - s0.host_compares, 1);
	sr_host_check(&t, 0, FSZ);
	assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
	assert_memory_equal(t.f->data, t.want, FSZ);
	sr_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_first),
		cmocka_unit_test(test_stale_replica_outside_range),
		cmocka_unit_test(test_fsync_unverified),
		cmocka_unit_test(test_close_unverified),
		cmocka_unit_test(test_host_write_after_outside),
		cmocka_unit_test(test_many_moves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
