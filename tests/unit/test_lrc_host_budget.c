// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The host-RAM budget of the cache's host copies (struct vg_lrc_config
 * host_budget, vg_lrc_set_host_budget): least recently used host copies
 * are dropped and read from the store again when needed; a dirty one is
 * written back first (its dirty 4 KiB blocks only, never over an outside
 * writer's bytes); one that backs a GPU replica stays. Every byte
 * survives, under random workloads of host writes, outside writes and a
 * GPU reader with acquire, on a 4 MiB file through a budget of two GPU
 * pages.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)
#define FSZ	(4 * MiB)

struct hb {
	struct lfx x;
	struct ms_file *f;
	struct vg_lrc_file *hf;
	u8 *want;
};

static void hb_init(struct hb *t, u64 host_budget)
{
	lfx_init(&t->x, 1, 64 * MiB, 0);
	assert_int_equal(vg_lrc_set_host_budget(t->x.lrc, host_budget), 0);
	t->f = ms_add(&t->x.ms, "/srv/share0", "h.bin", FSZ);
	lfx_pattern(t->f->data, FSZ, 33);
	t->want = malloc(FSZ);
	assert_non_null(t->want);
	memcpy(t->want, t->f->data, FSZ);
	assert_int_equal(vg_lrc_host_open(t->x.lrc, "/srv/share0", "h.bin",
					  true, &t->hf), 0);
}

static void hb_fini(struct hb *t)
{
	vg_lrc_host_close(t->hf);
	lfx_fini(&t->x);
	free(t->want);
}

static void hb_read_check(struct hb *t, u64 off, u64 len)
{
	u8 *buf = malloc(len);

	assert_int_equal(vg_lrc_host_read(t->hf, off, buf, len), (s64)len);
	assert_memory_equal(buf, t->want + off, len);
	free(buf);
}

/* Bad budgets are refused and change nothing. */
static void test_budget_hostile(void **state)
{
	struct vg_lrc_config cfg = { .store = &ms_ops };
	struct vg_lrc *lrc = NULL;
	struct hb t;
	u64 off;

	(void)state;
	cfg.host_budget = GP + 1;
	assert_int_equal(vg_lrc_create(&cfg, &lrc), -EINVAL);
	assert_null(lrc);
	assert_int_equal(vg_lrc_set_host_budget(NULL, GP), -EINVAL);
	hb_init(&t, 2 * GP);
	assert_int_equal(vg_lrc_set_host_budget(t.x.lrc, 3 * GP / 2), -EINVAL);
	assert_int_equal(vg_lrc_set_host_budget(t.x.lrc, 1), -EINVAL);
	/* Still two GPU pages. */
	for (off = 0; off < 8 * GP; off += GP) {
		hb_read_check(&t, off, GP);
		assert_true(lfx_stats(&t.x).host_used <= 2 * GP);
	}
	hb_fini(&t);
}

/*
 * Streaming a file through a small budget: within it after each read,
 * least recently used pages go first, a page read again comes back from
 * the store; 0 lifts the limit and shrinking evicts at once.
 */
static void test_budget_stream(void **state)
{
	struct vg_lrc_stats s0, s1;
	struct hb t;
	u64 off, reads;

	(void)state;
	hb_init(&t, 4 * GP);
	for (off = 0; off < FSZ; off += GP) {
		hb_read_check(&t, off, GP);
		assert_true(lfx_stats(&t.x).host_used <= 4 * GP);
	}
	s0 = lfx_stats(&t.x);
	assert_int_equal(s0.host_used, 4 * GP);
	assert_int_equal(s0.host_evictions, FSZ / GP - 4);
	/* The last four are cached: no store read; the first one is not. */
	reads = t.x.ms.reads;
	hb_read_check(&t, FSZ - 4 * GP, 4 * GP);
	assert_int_equal(t.x.ms.reads, reads);
	hb_read_check(&t, 0, GP);
	assert_int_equal(t.x.ms.reads, reads + 1);
	/* One large read: over the budget while it copies, within after. */
	hb_read_check(&t, 0, FSZ);
	assert_int_equal(lfx_stats(&t.x).host_used, 4 * GP);
	/* Unlimited: everything stays. */
	assert_int_equal(vg_lrc_set_host_budget(t.x.lrc, 0), 0);
	hb_read_check(&t, 0, FSZ);
	assert_int_equal(lfx_stats(&t.x).host_used, FSZ);
	/* Shrinking evicts at once. */
	s0 = lfx_stats(&t.x);
	assert_int_equal(vg_lrc_set_host_budget(t.x.lrc, GP), 0);
	s1 = lfx_stats(&t.x);
	assert_int_equal(s1.host_used, GP);
	assert_int_equal(s1.host_evictions - s0.host_evictions, FSZ / GP - 1);
	hb_fini(&t);
}

/*
 * Dirty host copies are written back (their dirty 4 KiB blocks only)
 * before they go, and an outside writer's bytes in the same pages are
 * kept: nothing is lost before any fsync.
 */
static void test_budget_dirty(void **state)
{
	struct vg_lrc_stats st;
	struct hb t;
	u8 v[64];
	u32 i;
	u64 off;

	(void)state;
	hb_init(&t, 2 * GP);
	for (i = 0; i < 32; i++) {
		/* One 4 KiB block in every other GPU page. */
		off = (u64)i * 2 * GP + (i % 16) * 4096 + 8;
		memset(v, (u8)(0x40 + i), sizeof(v));
		assert_int_equal(vg_lrc_host_write(t.hf, off, v, sizeof(v)),
				 (s64)sizeof(v));
		memcpy(t.want + off, v, sizeof(v));
		/* An outside writer in the same block, after the host. */
		if (i % 3 == 0) {
			memset(v, (u8)(0x90 + i), 16);
			ms_ext_write(t.f, off + 100, v, 16);
			memcpy(t.want + off + 100, v, 16);
		}
	}
	st = lfx_stats(&t.x);
	assert_true(st.host_used <= 2 * GP);
	assert_int_equal(st.host_evictions, 30);
	assert_int_equal(st.host_evict_writebacks, 30);
	/* Only the dirty blocks went to the store. */
	assert_int_equal(st.writeback_blocks, 30);
	/* The store has all of it already, before any fsync ... */
	for (i = 0; i < 30; i++) {
		off = (u64)i * 2 * GP + (i % 16) * 4096;
		assert_memory_equal(t.f->data + off, t.want + off, 4096);
	}
	/* ... and the cache reads it all back. */
	hb_read_check(&t, 0, FSZ);
	assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
	assert_memory_equal(t.f->data, t.want, FSZ);
	hb_fini(&t);
}

/*
 * A host copy a GPU replica is made from stays (the acquire's compare of
 * an outside write needs it); once the replica is gone it can go too.
 */
static void test_budget_replica_pages(void **state)
{
	struct lfx_vm *a;
	struct hb t;
	u8 buf[4096];
	u64 va;

	(void)state;
	hb_init(&t, GP);
	a = lfx_vm(&t.x, 0);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "h.bin", 0, FSZ, VGMEM_FILE_RW,
				    &va), 0);
	lfx_gpu_read(&t.x, a, va + 5 * GP, buf, sizeof(buf));
	lfx_gpu_read(&t.x, a, va + 9 * GP, buf, sizeof(buf));
	hb_read_check(&t, 20 * GP, 2 * GP);
	/*
	 * Pages 5 and 9 back replicas: over the budget, but kept (20 and 21
	 * went; with 5 or 9 gone too it would be one page).
	 */
	assert_int_equal(lfx_stats(&t.x).host_used, 2 * GP);
	memset(buf, 0x77, 32);
	ms_ext_write(t.f, 5 * GP + 4096, buf, 32);
	memcpy(t.want + 5 * GP + 4096, buf, 32);
	assert_int_equal(vg_lrc_acquire(a->ctx, va + 5 * GP, GP), 0);
	lfx_gpu_read(&t.x, a, va + 5 * GP + 4096, buf, 64);
	assert_memory_equal(buf, t.want + 5 * GP + 4096, 64);
	/*
	 * The replicas go (unmap, a one-page VRAM budget keeps one): so do
	 * their host copies, at the next use: one page is left.
	 */
	assert_int_equal(vg_lrc_unmap(a->ctx, va), 0);
	assert_int_equal(vg_lrc_gpu_set_budget(t.x.lrc, t.x.gpu[0].gpu, GP),
			 0);
	hb_read_check(&t, 30 * GP, GP);
	assert_int_equal(lfx_stats(&t.x).host_used, GP);
	hb_read_check(&t, 0, FSZ);
	hb_fini(&t);
}

/*
 * Random workload: host writes of the CPU's bytes, outside writes of the
 * outside writer's bytes (every byte has one writer, interleaved at a
 * random granularity), host reads, a GPU reader that acquires a random
 * range and reads it, fsyncs, under a host budget of two GPU pages and a
 * VRAM budget of four. A host read sees every byte except outside writes
 * the cache has not looked for yet (it may see those early: a page read
 * again from the store); after an acquire the GPU sees every byte of its
 * range; after fsync the store is the model.
 */
static void run_random(u64 seed)
{
	struct vg_rand r;
	struct lfx_vm *a;
	struct hb t;
	u8 *ext = calloc(1, FSZ), *buf = malloc(512 * KiB);
	u64 va, off, len, b;
	u32 op, kind, gran;

	vg_rand_seed(&r, seed);
	gran = (u32[]){ 16, 100, 4096, 9000 }[vg_rand_below(&r, 4)];
	hb_init(&t, 2 * GP);
	assert_int_equal(vg_lrc_gpu_set_budget(t.x.lrc, t.x.gpu[0].gpu,
					       4 * GP), 0);
	a = lfx_vm(&t.x, 0);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "h.bin", 0, FSZ, VGMEM_FILE_RO,
				    &va), 0);
	for (op = 0; op < 300; op++) {
		kind = vg_rand_below(&r, 100);
		off = vg_rand_below(&r, FSZ);
		len = 1 + vg_rand_below(&r, (u32)min_t(u64, FSZ - off,
						       3 * GP));
		if (kind < 35) {
			/* Host write of the CPU's bytes (even granules). */
			for (b = off; b < off + len; b = (b / gran + 1) * gran) {
				u64 e = min((b / gran + 1) * gran, off + len);

				if ((b / gran) % 2)
					continue;
				for (u64 i = b; i < e; i++)
					t.want[i] = (u8)vg_rand_next(&r);
				assert_int_equal(vg_lrc_host_write(t.hf, b,
						t.want + b, e - b),
						 (s64)(e - b));
			}
		} else if (kind < 55) {
			/* Outside writes of the odd granules. */
			for (b = off; b < off + len; b++) {
				if (!((b / gran) % 2))
					continue;
				t.want[b] = (u8)vg_rand_next(&r);
				ext[b] = 1;
				ms_ext_write(t.f, b, &t.want[b], 1);
			}
		} else if (kind < 80) {
			assert_int_equal(vg_lrc_host_read(t.hf, off, buf, len),
					 (s64)len);
			for (b = off; b < off + len; b++)
				if (!ext[b] && buf[b - off] != t.want[b])
					fail_msg("seed %llu op %u: host byte %llu is %u, want %u",
						 (unsigned long long)seed, op,
						 (unsigned long long)b,
						 buf[b - off], t.want[b]);
		} else if (kind < 95) {
			u64 g0 = off / GP * GP;
			u64 gl = min_t(u64, FSZ - g0, 8 * GP);

			assert_int_equal(vg_lrc_acquire(a->ctx, va + g0, gl), 0);
			/* The store was looked at (its range now, others later). */
			memset(ext, 0, FSZ);
			lfx_gpu_read(&t.x, a, va + g0, buf, (u32)gl);
			for (b = g0; b < g0 + gl; b++)
				if (buf[b - g0] != t.want[b])
					fail_msg("seed %llu op %u: GPU byte %llu is %u, want %u",
						 (unsigned long long)seed, op,
						 (unsigned long long)b,
						 buf[b - g0], t.want[b]);
		} else {
			assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
			memset(ext, 0, FSZ);
			assert_memory_equal(t.f->data, t.want, FSZ);
		}
		assert_true(lfx_stats(&t.x).host_used <= 2 * GP +
			    lfx_stats(&t.x).replicas_shared * GP);
	}
	assert_int_equal(vg_lrc_host_fsync(t.hf), 0);
	assert_memory_equal(t.f->data, t.want, FSZ);
	assert_true(lfx_stats(&t.x).host_evictions > 0);
	hb_read_check(&t, 0, FSZ);
	hb_fini(&t);
	free(ext);
	free(buf);
}

static void test_budget_random(void **state)
{
	u64 seed;

	(void)state;
	for (seed = 1; seed <= 6; seed++)
		run_random(seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_hostile),
		cmocka_unit_test(test_budget_stream),
		cmocka_unit_test(test_budget_dirty),
		cmocka_unit_test(test_budget_replica_pages),
		cmocka_unit_test(test_budget_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
