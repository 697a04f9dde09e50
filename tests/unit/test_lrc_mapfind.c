// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Finding a context's file map by VA (vg_lrc_map_find, ctx.c): the
 * context's own AVL index of its live maps. Every FILE_* command and
 * vg_lrc_fault go through it, so each probe here is checked twice: the
 * map the index returns, and the error code the public call gives,
 * against a plain array of the maps the test made (the oracle).
 *  - 4096 maps (VG_LRC_MAPS_MAX) of 1-3 GPU pages in one VM: each found
 *    by its start, its last byte and each GPU page inside; the VAs
 *    between maps, just past each end and just before each start refused
 *    (-EBADF, fault -EFAULT), ranges past a map's end -EINVAL, unmap of a
 *    VA inside but not at the start -EBADF, a BO's VA -EBADF.
 *  - after an unmap, nothing of the map is found or accepted.
 *  - seeded map/unmap churn keeps the index, the count and the oracle in
 *    step (vg_va_check on the index), VAs reused included.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)
#define FILE_GP	4

struct omap {
	u64 va, len;
	struct vg_lrc_map *m;	/* what the index returned at map time */
	bool live;
};

static struct lfx x;

/* The live map of the oracle holding va, or NULL (linear: the reference). */
static struct omap *oracle(struct omap *o, u32 n, u64 va)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (o[i].live && va >= o[i].va && va - o[i].va < o[i].len)
			return &o[i];
	return NULL;
}

static struct vg_lrc_map *find(struct lfx_vm *v, u64 va)
{
	struct vg_lrc_map *m;

	mutex_lock(&x.lrc->lock);
	m = vg_lrc_map_find(v->ctx, va);
	mutex_unlock(&x.lrc->lock);
	return m;
}

/* The index's consistency, and its count against the context's. */
static void check_index(struct lfx_vm *v, u32 live)
{
	mutex_lock(&x.lrc->lock);
	assert_int_equal(vg_va_check(&v->ctx->map_va), 0);
	assert_int_equal(v->ctx->map_va.count, v->ctx->nr_maps);
	assert_int_equal(v->ctx->nr_maps, live);
	mutex_unlock(&x.lrc->lock);
}

static void map_one(struct lfx_vm *v, struct omap *o, u64 len)
{
	u64 off = (FILE_GP * GP - len) & ~(GP - 1);

	assert_int_equal(vg_lrc_map(v->ctx, 1, "m.bin", off, len,
				    VGMEM_FILE_RW, &o->va), 0);
	o->len = len;
	o->live = true;
	o->m = find(v, o->va);
	assert_non_null(o->m);
	assert_int_equal(o->m->va, o->va);
	assert_int_equal(o->m->len, len);
	assert_false(o->m->dead);
}

/*
 * Probe one VA: the index agrees with the oracle, and so does every
 * command that names it. Returns whether va was in a map.
 */
static bool probe(struct lfx_vm *v, struct omap *o, u32 n, u64 va)
{
	struct omap *want = oracle(o, n, va);
	struct vg_lrc_map *m = find(v, va);

	if (!want) {
		assert_null(m);
		if (IS_ALIGNED(va, GP)) {
			assert_int_equal(vg_lrc_release(v->ctx, va, 0), -EBADF);
			assert_int_equal(vg_lrc_release(v->ctx, va, GP), -EBADF);
		}
		/* The map is looked up before the alignment is checked. */
		assert_int_equal(vg_lrc_release(v->ctx, va | 1, 0), -EBADF);
		assert_int_equal(vg_lrc_fault(v->ctx, va, false), -EFAULT);
		assert_int_equal(vg_lrc_unmap(v->ctx, va), -EBADF);
		return false;
	}
	assert_ptr_equal(m, want->m);
	assert_false(m->dead);
	if (IS_ALIGNED(va, GP)) {
		u64 rest = want->len - (va - want->va);

		assert_int_equal(vg_lrc_release(v->ctx, va, 0), 0);
		assert_int_equal(vg_lrc_release(v->ctx, va, rest), 0);
		assert_int_equal(vg_lrc_release(v->ctx, va, rest + GP),
				 -EINVAL);
	} else {
		assert_int_equal(vg_lrc_release(v->ctx, va, 0), -EINVAL);
	}
	if (va != want->va)
		assert_int_equal(vg_lrc_unmap(v->ctx, va), -EBADF);
	return true;
}

/* Every live map by its start, each GPU page, its ends and around them. */
static void probe_all(struct lfx_vm *v, struct omap *o, u32 n, u32 *gaps)
{
	u32 i;
	u64 p;

	for (i = 0; i < n; i++) {
		if (!o[i].live)
			continue;
		for (p = 0; p < o[i].len; p += GP)
			assert_true(probe(v, o, n, o[i].va + p));
		assert_true(probe(v, o, n, o[i].va + o[i].len - 1));
		assert_true(probe(v, o, n, o[i].va + 4097));
		if (!probe(v, o, n, o[i].va + o[i].len))
			(*gaps)++;
		if (!probe(v, o, n, o[i].va - 1))
			(*gaps)++;
		if (!probe(v, o, n, o[i].va - GP))
			(*gaps)++;
	}
}

static void test_4096_maps(void **state)
{
	struct lfx_vm *a;
	struct omap *o;
	u64 bo, extra;
	u32 i, gaps = 0;

	(void)state;
	o = calloc(VG_LRC_MAPS_MAX, sizeof(*o));
	assert_non_null(o);
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "m.bin", FILE_GP * GP);
	a = lfx_vm(&x, 0);
	/* Nothing mapped: nothing found. */
	assert_false(probe(a, o, 0, VGMEM_VA_START));
	assert_int_equal(vg_bo_alloc(a->vm, GP, 0, &bo), 0);
	for (i = 0; i < VG_LRC_MAPS_MAX; i++)
		map_one(a, &o[i], (1 + i % 3) * GP);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "m.bin", 0, GP, VGMEM_FILE_RO,
				    &extra), -ENOMEM);
	check_index(a, VG_LRC_MAPS_MAX);
	probe_all(a, o, VG_LRC_MAPS_MAX, &gaps);
	/* The VM's VA is chunk-aligned: most maps have a hole after them. */
	assert_true(gaps >= VG_LRC_MAPS_MAX);
	/* A BO's VA is no file map; the BO is still there after. */
	assert_false(probe(a, o, VG_LRC_MAPS_MAX, bo));
	assert_false(probe(a, o, VG_LRC_MAPS_MAX, bo + GP - 1));
	assert_int_equal(vg_bo_free(a->vm, bo), 0);
	/* Below and above everything. */
	assert_false(probe(a, o, VG_LRC_MAPS_MAX, VGMEM_VA_START - GP));
	assert_false(probe(a, o, VG_LRC_MAPS_MAX, 0));
	assert_false(probe(a, o, VG_LRC_MAPS_MAX, VGMEM_VA_END - GP));
	assert_null(find(a, ~0ull));
	/* The other commands and the fault find the same maps. */
	for (i = 0; i < VG_LRC_MAPS_MAX; i += 97) {
		assert_int_equal(vg_lrc_acquire(a->ctx, o[i].va, 0), 0);
		assert_int_equal(vg_lrc_sync(a->ctx, o[i].va, GP), 0);
		assert_int_equal(vg_lrc_fault(a->ctx, o[i].va + o[i].len - 1,
					      false), 0);
		assert_int_equal(vg_lrc_acquire(a->ctx, o[i].va + o[i].len,
						GP), -EBADF);
		assert_int_equal(vg_lrc_sync(a->ctx, o[i].va + o[i].len, 0),
				 -EBADF);
	}
	check_index(a, VG_LRC_MAPS_MAX);
	for (i = 0; i < VG_LRC_MAPS_MAX; i++)
		assert_int_equal(vg_lrc_unmap(a->ctx, o[i].va), 0);
	check_index(a, 0);
	lfx_fini(&x);
	free(o);
}

/* An unmapped map is gone for every command, and its VA can be reused. */
static void test_unmap_refused(void **state)
{
	struct lfx_vm *a;
	struct omap o[3];
	u32 i, gaps = 0;
	u64 p;

	(void)state;
	memset(o, 0, sizeof(o));
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "m.bin", FILE_GP * GP);
	a = lfx_vm(&x, 0);
	for (i = 0; i < 3; i++)
		map_one(a, &o[i], 3 * GP);
	/* A page of the middle one was written: unmap merges it. */
	assert_int_equal(vg_lrc_fault(a->ctx, o[1].va + GP, true), 0);
	assert_int_equal(vg_lrc_unmap(a->ctx, o[1].va), 0);
	o[1].live = false;
	check_index(a, 2);
	for (p = 0; p < o[1].len; p += 4096)
		assert_false(probe(a, o, 3, o[1].va + p));
	assert_int_equal(vg_lrc_acquire(a->ctx, o[1].va, 0), -EBADF);
	assert_int_equal(vg_lrc_sync(a->ctx, o[1].va, 0), -EBADF);
	assert_int_equal(vg_lrc_fault(a->ctx, o[1].va, true), -EFAULT);
	assert_int_equal(vg_lrc_unmap(a->ctx, o[1].va), -EBADF);
	probe_all(a, o, 3, &gaps);
	/* First fit gives the hole back; the new map is found, not the old. */
	map_one(a, &o[1], 2 * GP);
	check_index(a, 3);
	probe_all(a, o, 3, &gaps);
	lfx_fini(&x);	/* destroys the context with its maps */
}

#define CHURN_SLOTS	256
#define CHURN_OPS	3000

/* Random maps and unmaps; after each, the index and the oracle agree. */
static void test_churn(void **state)
{
	struct lfx_vm *a;
	struct omap *o;
	u64 rs = 2026, r;
	u32 op, i, live = 0, gaps = 0, reused = 0, maps = 0;

	(void)state;
	o = calloc(CHURN_SLOTS, sizeof(*o));
	assert_non_null(o);
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "m.bin", FILE_GP * GP);
	a = lfx_vm(&x, 0);
	for (op = 0; op < CHURN_OPS; op++) {
		r = vg_splitmix64(&rs);
		i = r % CHURN_SLOTS;
		if (o[i].live) {
			struct omap old = o[i];

			assert_int_equal(vg_lrc_unmap(a->ctx, old.va), 0);
			o[i].live = false;
			live--;
			assert_false(probe(a, o, CHURN_SLOTS, old.va));
			assert_false(probe(a, o, CHURN_SLOTS,
					   old.va + old.len - 1));
		} else {
			u64 prev = o[i].va;

			map_one(a, &o[i], (1 + (r >> 32) % 3) * GP);
			live++;
			maps++;
			if (oracle(o, CHURN_SLOTS, o[i].va) != &o[i])
				fail();
			if (prev && prev == o[i].va)
				reused++;
			assert_true(probe(a, o, CHURN_SLOTS, o[i].va));
		}
		/* A random VA near the maps. */
		probe(a, o, CHURN_SLOTS, VGMEM_VA_START +
		      ((r >> 8) % (2ull * CHURN_SLOTS * 2 * MiB) & ~4095ull));
		if (op % 500 == 499) {
			check_index(a, live);
			probe_all(a, o, CHURN_SLOTS, &gaps);
		}
	}
	check_index(a, live);
	probe_all(a, o, CHURN_SLOTS, &gaps);
	print_message("churn: %u maps made, %u live at the end, %u VAs reused\n",
		      maps, live, reused);
	assert_true(maps > CHURN_SLOTS && live > 0);
	lfx_fini(&x);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_4096_maps),
		cmocka_unit_test(test_unmap_refused),
		cmocka_unit_test(test_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
