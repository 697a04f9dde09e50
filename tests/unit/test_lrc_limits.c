// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What one VM can make the LRC cache hold, and what it cannot take from
 * others: a FILE_MAP is checked before its replica table is allocated;
 * page entries exist only for cached GPU pages; a VM's maps and the page
 * entries its faults create are charged to it up to its metadata cap
 * (-ENOMEM beyond), while another VM maps and faults on; a VM whose
 * merges fail, reset over and over, does not use up the owner ids.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GiB	(1024ull * MiB)
#define GP	(64 * KiB)

static u64 acct_bytes(struct lfx *x, struct lfx_vm *v)
{
	u64 b;

	mutex_lock(&x->lrc->lock);
	b = v->ctx->acct->bytes;
	mutex_unlock(&x->lrc->lock);
	return b;
}

/* What a map of len bytes is charged. */
/*
 * What a map of len bytes of the file at path holds: itself, its replica
 * table, the path it keeps (a migration names it).
 */
static u64 map_cost(u64 len, const char *path)
{
	return sizeof(struct vg_lrc_map) +
	       (len >> VG_LRC_GSHIFT) * sizeof(struct vg_lrc_rep *) +
	       strlen(path) + 1;
}

/*
 * Every refusal of a map comes before the map's allocations (up to 8 MiB
 * for a 64 GiB map): with the next allocation set to fail, each still
 * gets its own error, and no allocation was even tried.
 */
static void test_map_checks_first(void **state)
{
	static const struct {
		u32 share;
		const char *name;
		u64 len;
		u32 flags;
		int err;
	} bad[] = {
		{ 9, "f.bin", 64 * GiB, VGMEM_FILE_RO, -ENOENT },	/* no share */
		{ 2, "f.bin", 64 * GiB, VGMEM_FILE_RW, -EACCES },	/* RO share */
		{ 1, "none", 64 * GiB, VGMEM_FILE_RO, -ENOENT },	/* no file */
		{ 1, "f.bin", 64 * GiB, VGMEM_FILE_RO, -EFBIG },	/* past its end */
		{ 1, "f.bin", 8 * GP, VGMEM_FILE_RW, -EFBIG },
	};
	struct lfx x;
	struct lfx_vm *a;
	unsigned long failed;
	u64 va, keep;
	size_t i;
	int err;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "f.bin", 4 * GP);
	a = lfx_vm(&x, 0);
	/* Cached already: opening it again allocates nothing. */
	keep = lfx_map(a, "f.bin", 0, GP, VGMEM_FILE_RO);
	failed = os_alloc_failures();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		va = 0x77;
		os_fail_alloc_after(0);
		err = vg_lrc_map(a->ctx, bad[i].share, bad[i].name, 0,
				 bad[i].len, bad[i].flags, &va);
		os_fail_alloc_after(-1);
		if (err != bad[i].err)
			fail_msg("case %zu: %d, want %d", i, err, bad[i].err);
		assert_int_equal(va, 0x77);
		assert_int_equal(os_alloc_failures(), failed);
	}
	assert_int_equal(acct_bytes(&x, a), map_cost(GP, "f.bin"));
	assert_int_equal(vg_lrc_unmap(a->ctx, keep), 0);
	assert_int_equal(acct_bytes(&x, a), 0);
	lfx_fini(&x);
}

/*
 * Page entries come with what is cached: a map costs none, a fault one
 * per GPU page it brings in, a host read one per page it loads (the
 * host's, charged to no VM), and the last unmap frees them all.
 */
static void test_entries_sparse(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	struct vg_lrc_file *hf;
	struct vg_lrc_stats st;
	u8 buf[64];
	u64 va;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "big.bin", 256 * MiB);
	a = lfx_vm(&x, 0);
	va = lfx_map(a, "big.bin", 0, 256 * MiB, VGMEM_FILE_RW);
	st = lfx_stats(&x);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.pages, 0);
	assert_int_equal(st.meta_bytes, 0);
	assert_int_equal(acct_bytes(&x, a), map_cost(256 * MiB, "big.bin"));

	assert_int_equal(vg_lrc_fault(a->ctx, va + 100 * GP, false), 0);
	assert_int_equal(vg_lrc_fault(a->ctx, va + 300 * GP, true), 0);
	st = lfx_stats(&x);
	assert_int_equal(st.pages, 2 * 16);
	assert_true(st.meta_bytes >= 2 * sizeof(struct vg_lrc_gpage) &&
		    st.meta_bytes < 2 * sizeof(struct vg_lrc_gpage) + 2048);
	assert_int_equal(acct_bytes(&x, a), map_cost(256 * MiB, "big.bin") +
			 2 * sizeof(struct vg_lrc_gpage));

	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "big.bin",
					  false, &hf), 0);
	assert_int_equal(vg_lrc_host_read(hf, 500 * GP, buf, sizeof(buf)),
			 sizeof(buf));
	assert_int_equal(lfx_stats(&x).pages, 3 * 16);
	assert_int_equal(acct_bytes(&x, a), map_cost(256 * MiB, "big.bin") +
			 2 * sizeof(struct vg_lrc_gpage));
	vg_lrc_host_close(hf);

	assert_int_equal(vg_lrc_unmap(a->ctx, va), 0);
	st = lfx_stats(&x);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.pages, 0);
	assert_int_equal(st.meta_bytes, 0);
	assert_int_equal(acct_bytes(&x, a), 0);
	lfx_fini(&x);
}

/*
 * A over its cap: its next map and its next fault that needs a page entry
 * fail -ENOMEM, its data stays right; B, under the same cap, maps and
 * faults on. Entries are charged to the VM whose fault made them, until
 * they leave the cache, after its context if need be.
 */
static void test_meta_cap(void **state)
{
	const u64 len = 4 * MiB, entries = 8;
	struct lfx x;
	struct lfx_vm *a, *b;
	struct ms_file *f;
	u8 buf[64];
	u64 va, vb, extra;
	u32 i;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "c.bin", len);
	lfx_pattern(f->data, f->size, 5);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	assert_int_equal(vg_lrc_set_meta_max(x.lrc, 0), -EINVAL);
	assert_int_equal(vg_lrc_set_meta_max(x.lrc, map_cost(len, "c.bin") + entries *
					     sizeof(struct vg_lrc_gpage)), 0);
	va = lfx_map(a, "c.bin", 0, len, VGMEM_FILE_RO);
	/* Every other GPU page: no readahead, one entry per fault. */
	for (i = 0; i < entries; i++)
		assert_int_equal(vg_lrc_fault(a->ctx, va + 2 * i * GP, false), 0);
	assert_int_equal(acct_bytes(&x, a), map_cost(len, "c.bin") + entries *
			 sizeof(struct vg_lrc_gpage));
	assert_int_equal(vg_lrc_fault(a->ctx, va + 2 * entries * GP, false),
			 -ENOMEM);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "c.bin", 0, GP, VGMEM_FILE_RO,
				    &extra), -ENOMEM);
	/* What A has cached reads right, through the GPU. */
	lfx_gpu_read(&x, a, va + 2 * GP + 10, buf, sizeof(buf));
	assert_memory_equal(buf, f->data + 2 * GP + 10, sizeof(buf));

	/* B is not A: same file, its own account. */
	vb = lfx_map(b, "c.bin", 0, len, VGMEM_FILE_RO);
	assert_int_equal(vg_lrc_fault(b->ctx, vb + 2 * entries * GP, false), 0);
	lfx_gpu_read(&x, b, vb + 3 * GP + 20, buf, sizeof(buf));
	assert_memory_equal(buf, f->data + 3 * GP + 20, sizeof(buf));
	assert_int_equal(acct_bytes(&x, b), map_cost(len, "c.bin") +
			 2 * sizeof(struct vg_lrc_gpage));
	/* A page B brought in costs A nothing to map. */
	assert_int_equal(vg_lrc_fault(a->ctx, va + 3 * GP, false), 0);
	assert_int_equal(acct_bytes(&x, a), map_cost(len, "c.bin") + entries *
			 sizeof(struct vg_lrc_gpage));

	/* A's context goes; the file stays cached for B, A's entries too. */
	lfx_vm_destroy(a);
	assert_int_equal(lfx_stats(&x).pages, (entries + 2) * 16);
	lfx_gpu_read(&x, b, vb + 2 * GP + 30, buf, sizeof(buf));
	assert_memory_equal(buf, f->data + 2 * GP + 30, sizeof(buf));
	assert_int_equal(vg_lrc_unmap(b->ctx, vb), 0);
	assert_int_equal(lfx_stats(&x).meta_bytes, 0);
	assert_int_equal(acct_bytes(&x, b), 0);
	lfx_fini(&x);
}

static u32 nr_retired(struct lfx *x)
{
	u32 n;

	mutex_lock(&x->lrc->lock);
	n = x->lrc->nr_retired;
	mutex_unlock(&x->lrc->lock);
	return n;
}

/*
 * A VM maps a page of a file, writes it, and goes away (a device reset)
 * while its unmap's merge fails (a copy error), round after round, more
 * rounds than there are owner ids, while B keeps the file cached: each
 * round leaves a private replica and retires its owner id. Ids are not
 * used up: once none is free, the retired ones' replicas are merged and
 * their ids handed out again. No byte released in any round is lost.
 */
static void test_owner_ids_recycled(void **state)
{
	const u32 rounds = VG_LRC_OWNERS_MAX + 16;
	struct lfx x;
	struct lfx_vm *a, *b, *c;
	struct ms_file *f;
	u8 v[64], buf[64];
	u32 i, owner0;
	bool reused = false;
	u64 va, vb, vc;
	int err, level;

	(void)state;
	/* Room for every round's replica: no eviction merges them. */
	lfx_init(&x, 1, 256 * MiB, 160 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "o.bin", (u64)rounds * GP);
	b = lfx_vm(&x, 0);
	vb = lfx_map(b, "o.bin", 0, GP, VGMEM_FILE_RO);

	/* Round 0 writes and releases real bytes through its GPU. */
	a = lfx_vm(&x, 0);
	va = lfx_map(a, "o.bin", 0, GP, VGMEM_FILE_RW);
	memset(v, 0x6b, sizeof(v));
	lfx_gpu_write(&x, a, va + 8, v, sizeof(v));
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	owner0 = vg_lrc_ctx_owner(a->ctx);
	vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_COPY, 1);
	lfx_vm_destroy(a);
	assert_int_equal(nr_retired(&x), 1);
	assert_memory_equal(f->data + 8, v, sizeof(v));

	/* The other rounds: a write fault on page i, the same failed merge. */
	level = os_log_level(LOGLEVEL_ERR);	/* two warnings a round */
	for (i = 1; i < rounds; i++) {
		struct vg_vm_config cfg = { 0 };
		struct vg_lrc_ctx *ctx;
		struct vg_vm *vm;

		assert_int_equal(vg_vm_create(x.gpu[0].gpu, &cfg, &vm), 0);
		err = vg_lrc_ctx_create(x.lrc, vm, &ctx);
		if (err)
			fail_msg("round %u: no owner id: %d", i, err);
		reused |= vg_lrc_ctx_owner(ctx) == owner0;
		assert_int_equal(vg_lrc_share_set(ctx, 1, "/srv/share0", false),
				 0);
		assert_int_equal(vg_lrc_map(ctx, 1, "o.bin", (u64)i * GP, GP,
					    VGMEM_FILE_RW, &va), 0);
		assert_int_equal(vg_lrc_fault(ctx, va, true), 0);
		vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_COPY, 1);
		vg_vm_destroy(vm);
	}
	os_log_level(level);
	/* Reclaimed when they ran out: round 0's id came back. */
	assert_true(reused);
	assert_true(nr_retired(&x) > 0 && nr_retired(&x) < rounds / 2);
	assert_int_equal(lfx_stats(&x).replicas_private, nr_retired(&x));

	/* Another VM gets a context and reads round 0's bytes, as B does. */
	c = lfx_vm(&x, 0);
	vc = lfx_map(c, "o.bin", 0, GP, VGMEM_FILE_RO);
	lfx_gpu_read(&x, c, vc + 8, buf, sizeof(buf));
	assert_memory_equal(buf, v, sizeof(buf));
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	lfx_gpu_read(&x, b, vb + 8, buf, sizeof(buf));
	assert_memory_equal(buf, v, sizeof(buf));

	/* The file's last close merges the rest: every id is free. */
	lfx_vm_destroy(c);
	lfx_vm_destroy(b);
	assert_int_equal(lfx_stats(&x).files, 0);
	assert_int_equal(lfx_stats(&x).replicas_private, 0);
	assert_int_equal(nr_retired(&x), 0);
	assert_memory_equal(f->data + 8, v, sizeof(v));
	lfx_fini(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_checks_first),
		cmocka_unit_test(test_entries_sparse),
		cmocka_unit_test(test_meta_cap),
		cmocka_unit_test(test_owner_ids_recycled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
