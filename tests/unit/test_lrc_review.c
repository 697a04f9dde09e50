// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Findings of the LRC cache's review, one test each: a host write near
 * 2^64 (a wrapped page count), unreleased GPU bytes reaching another VM
 * through a merge, the faulting page's replica evicted by its own
 * readahead window, a destroyed VM's owner id reused while its replica is
 * still cached, a VM pinning host memory with unbounded file maps.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define MiB	(1024ull * KiB)
#define GP	(64 * KiB)

/* Offsets near 2^64 and past the page-index limit: -EFBIG, no change. */
static void test_host_write_huge_offset(void **state)
{
	struct lfx x;
	struct ms_file *f;
	struct vg_lrc_file *hf;
	u8 buf[64] = { 1 };
	u64 size;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "big.bin", 2 * GP);
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "big.bin", true,
					  &hf), 0);
	size = vg_lrc_host_size(hf);
	assert_int_equal(vg_lrc_host_write(hf, ~0ull - 100, buf, 50), -EFBIG);
	assert_int_equal(vg_lrc_host_write(hf, ~0ull - 10, buf, 50), -EFBIG);
	assert_int_equal(vg_lrc_host_write(hf, 1ull << 46, buf, 50), -EFBIG);
	assert_int_equal(vg_lrc_host_size(hf), size);
	assert_int_equal(vg_lrc_host_read(hf, ~0ull - 100, buf, 50), 0);
	/* Still a working file. */
	assert_int_equal(vg_lrc_host_write(hf, 10, buf, 50), 50);
	assert_int_equal(vg_lrc_host_fsync(hf), 0);
	assert_int_equal(f->data[10], 1);
	assert_int_equal(f->size, 2 * GP);
	vg_lrc_host_close(hf);
	lfx_fini(&x);
}

/*
 * A writes and releases, then writes the same page again without a
 * release: the host and another VM see the released bytes only.
 */
static void test_unreleased_never_shared(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct vg_lrc_file *hf;
	u8 v1[64], v2[64], buf[64];
	u64 va, vb;

	(void)state;
	lfx_init(&x, 2, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "s.bin", 2 * GP);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 1);
	va = lfx_map(a, "s.bin", 0, 2 * GP, VGMEM_FILE_RW);
	vb = lfx_map(b, "s.bin", 0, 2 * GP, VGMEM_FILE_RO);
	memset(v1, 0x11, sizeof(v1));
	memset(v2, 0x22, sizeof(v2));
	lfx_gpu_write(&x, a, va + 100, v1, 64);
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	lfx_gpu_write(&x, a, va + 100, v2, 64);	/* not released */
	lfx_gpu_write(&x, a, va + 5000, v2, 64);	/* another page, same */

	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "s.bin", false,
					  &hf), 0);
	assert_int_equal(vg_lrc_host_read(hf, 100, buf, 64), 64);
	assert_memory_equal(buf, v1, 64);
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	lfx_gpu_read(&x, b, vb + 100, buf, 64);
	assert_memory_equal(buf, v1, 64);
	lfx_gpu_read(&x, b, vb + 5000, buf, 64);
	assert_memory_not_equal(buf, v2, 64);
	/* A sees its own writes; after its release everyone does. */
	lfx_gpu_read(&x, a, va + 100, buf, 64);
	assert_memory_equal(buf, v2, 64);
	assert_int_equal(vg_lrc_release(a->ctx, va, 0), 0);
	assert_int_equal(vg_lrc_host_read(hf, 100, buf, 64), 64);
	assert_memory_equal(buf, v2, 64);
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	lfx_gpu_read(&x, b, vb + 5000, buf, 64);
	assert_memory_equal(buf, v2, 64);
	vg_lrc_host_close(hf);
	lfx_fini(&x);
}

/*
 * Budget of two GPU pages: B's sequential fault on a page A already
 * holds maps the shared replica, then allocates its readahead window.
 * The faulting page must still be mapped when the fault returns.
 */
static void test_fault_page_survives_window(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b;
	struct vg_lrc_map *m;
	u8 buf[64];
	u64 va, vb;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 2 * GP);
	ms_add(&x.ms, "/srv/share0", "r.bin", 32 * GP);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	va = lfx_map(a, "r.bin", 0, 32 * GP, VGMEM_FILE_RO);
	vb = lfx_map(b, "r.bin", 0, 32 * GP, VGMEM_FILE_RO);
	lfx_gpu_read(&x, a, va + GP, buf, 64);		/* shared R1 */
	assert_int_equal(vg_lrc_fault(b->ctx, vb, false), 0);	/* R0 */
	/* Sequential: a window, whose allocations must not evict R1. */
	assert_int_equal(vg_lrc_fault(b->ctx, vb + GP, false), 0);
	mutex_lock(&x.lrc->lock);
	m = vg_lrc_map_find(b->ctx, vb);
	assert_non_null(m);
	assert_non_null(m->reps[1]);
	assert_non_null(m->reps[1]->vram);
	mutex_unlock(&x.lrc->lock);
	lfx_fini(&x);
}

/*
 * A VM goes away while the merge of its private replica fails (a copy
 * error): the replica stays cached for the file's other users, and its
 * owner id is not handed to the next VM, which would take the replica
 * for its own. No byte is lost.
 */
static void test_stranded_replica_owner(void **state)
{
	struct lfx x;
	struct lfx_vm *a, *b, *c;
	struct ms_file *f;
	u8 v[64], buf[64];
	u32 owner_a;
	u64 va, vb, vc;

	(void)state;
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	f = ms_add(&x.ms, "/srv/share0", "o.bin", 2 * GP);
	a = lfx_vm(&x, 0);
	b = lfx_vm(&x, 0);
	va = lfx_map(a, "o.bin", 0, 2 * GP, VGMEM_FILE_RW);
	vb = lfx_map(b, "o.bin", 0, 2 * GP, VGMEM_FILE_RO);
	memset(v, 0x5e, sizeof(v));
	lfx_gpu_write(&x, a, va + GP + 8, v, 64);
	owner_a = vg_lrc_ctx_owner(a->ctx);
	vg_sim_inject(x.gpu[0].sim, VG_SIM_INJ_COPY, 1);
	lfx_vm_destroy(a);		/* the unmap's merge fails once */
	/* The write-back after it merged the bytes all the same. */
	assert_memory_equal(f->data + GP + 8, v, 64);

	c = lfx_vm(&x, 0);
	assert_true(vg_lrc_ctx_owner(c->ctx) != owner_a);
	vc = lfx_map(c, "o.bin", 0, 2 * GP, VGMEM_FILE_RW);
	lfx_gpu_read(&x, c, vc + GP + 8, buf, 64);
	assert_memory_equal(buf, v, 64);
	assert_int_equal(vg_lrc_acquire(b->ctx, vb, 0), 0);
	lfx_gpu_read(&x, b, vb + GP + 8, buf, 64);
	assert_memory_equal(buf, v, 64);
	lfx_fini(&x);
}

/* A VM's maps are bounded: the next one is -ENOMEM, unmapping frees one. */
static void test_map_count_bounded(void **state)
{
	struct lfx x;
	struct lfx_vm *a;
	u64 *va, extra;
	u32 i;

	(void)state;
	va = calloc(VG_LRC_MAPS_MAX, sizeof(*va));
	assert_non_null(va);
	lfx_init(&x, 1, 64 * MiB, 8 * MiB);
	ms_add(&x.ms, "/srv/share0", "m.bin", GP);
	a = lfx_vm(&x, 0);
	for (i = 0; i < VG_LRC_MAPS_MAX; i++)
		va[i] = lfx_map(a, "m.bin", 0, GP, VGMEM_FILE_RO);
	assert_int_equal(vg_lrc_map(a->ctx, 1, "m.bin", 0, GP, VGMEM_FILE_RO,
				    &extra), -ENOMEM);
	assert_int_equal(vg_lrc_unmap(a->ctx, va[7]), 0);
	va[7] = lfx_map(a, "m.bin", 0, GP, VGMEM_FILE_RO);
	for (i = 0; i < VG_LRC_MAPS_MAX; i++)
		assert_int_equal(vg_lrc_unmap(a->ctx, va[i]), 0);
	assert_int_equal(x.ms.open_handles, 0);
	lfx_fini(&x);
	free(va);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_write_huge_offset),
		cmocka_unit_test(test_unreleased_never_shared),
		cmocka_unit_test(test_fault_page_survives_window),
		cmocka_unit_test(test_stranded_replica_owner),
		cmocka_unit_test(test_map_count_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
