// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Buffer objects: hostile arguments rejected with nothing changed, the VA
 * allocator, queries, the host budget, GPU driver failures at every step of
 * an allocation undone completely, and data surviving relocation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CH	(64 * KiB)
#define VRAM	(16 * CH)

/* Everything an operation could change, to compare before and after. */
struct snap {
	struct vgmem_vm_stats vm[CFX_MAX_VMS];
	struct vg_gpu_stats gpu;
	u64 ops[FAKE_OP_NR];
	u64 fake_vram, fake_host, leaks;
	u32 nbos[CFX_MAX_VMS];
};

static void take(struct cfx *f, struct snap *s)
{
	struct vg_bo *bo;
	u32 i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < f->nvm; i++) {
		s->vm[i] = cfx_stats(f->vm[i]);
		list_for_each_entry(bo, &f->vm[i]->bos, node)
			s->nbos[i]++;
	}
	vg_gpu_get_stats(f->gpu, &s->gpu);
	for (i = 0; i < FAKE_OP_NR; i++)
		s->ops[i] = fake_count(f->fb, i);
	s->fake_vram = fake_vram_used(f->fb);
	s->fake_host = fake_host_used(f->fb);
	s->leaks = fake_leaks(f->fb);
}

/* Nothing but failed calls happened between a and b. */
static void same(const struct snap *a, const struct snap *b, bool ops)
{
	assert_memory_equal(a->vm, b->vm, sizeof(a->vm));
	assert_memory_equal(&a->gpu, &b->gpu, sizeof(a->gpu));
	assert_memory_equal(a->nbos, b->nbos, sizeof(a->nbos));
	assert_int_equal(a->fake_vram, b->fake_vram);
	assert_int_equal(a->fake_host, b->fake_host);
	assert_int_equal(a->leaks, b->leaks);
	if (ops)
		assert_memory_equal(a->ops, b->ops, sizeof(a->ops));
}

struct bad_case {
	const char *what;
	u64 size;
	u32 flags;
	u64 va;
};

static void test_bad_input(void **state)
{
	const u64 S = VGMEM_VA_START, E = VGMEM_VA_END;
	const u64 used = S + 4 * CH;	/* an existing BO: [used, used + 2 CH) */
	const struct bad_case cases[] = {
		{ "zero size", 0, 0, 0 },
		{ "size not page multiple", 4095, 0, 0 },
		{ "size page + 1", 4097, 0, 0 },
		{ "size beyond the VA range", E - S + 4096, 0, 0 },
		{ "size huge", ~0ull & ~4095ull, 0, 0 },
		{ "unknown flag", 4096, 2, 0 },
		{ "unknown high flag", 4096, 0x80000000u, 0 },
		{ "fixed unaligned", 4096, VGMEM_BO_FIXED_VA, S + 1 },
		{ "fixed unaligned 2k", 4096, VGMEM_BO_FIXED_VA, S + 2048 },
		{ "fixed below start", 4096, VGMEM_BO_FIXED_VA, S - 4096 },
		{ "fixed zero", 4096, VGMEM_BO_FIXED_VA, 0 },
		{ "fixed at end", 4096, VGMEM_BO_FIXED_VA, E },
		{ "fixed past end", 8192, VGMEM_BO_FIXED_VA, E - 4096 },
		{ "fixed overflow", 8192, VGMEM_BO_FIXED_VA, ~0ull & ~4095ull },
		{ "fixed overlap same", 2 * CH, VGMEM_BO_FIXED_VA, used },
		{ "fixed overlap head", 2 * CH, VGMEM_BO_FIXED_VA, used - CH },
		{ "fixed overlap tail", 4096, VGMEM_BO_FIXED_VA,
		  used + 2 * CH - 4096 },
		{ "fixed overlap inside", 4096, VGMEM_BO_FIXED_VA, used + 4096 },
		{ "fixed overlap around", 8 * CH, VGMEM_BO_FIXED_VA, S },
	};
	struct snap before, after;
	struct cfx f;
	struct vg_vm *a, *b;
	u64 va;
	unsigned int i;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	b = cfx_vm(&f, "b");
	va = used;
	assert_int_equal(vg_bo_alloc(a, 2 * CH, VGMEM_BO_FIXED_VA, &va), 0);
	assert_int_equal(va, used);
	cfx_alloc(b, 4 * CH);

	take(&f, &before);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u64 v = cases[i].va;

		print_message("case: %s\n", cases[i].what);
		assert_int_equal(vg_bo_alloc(a, cases[i].size, cases[i].flags,
					     &v), -EINVAL);
		assert_int_equal(v, cases[i].va);
		take(&f, &after);
		same(&before, &after, true);
		assert_int_equal(vg_gpu_check(f.gpu), 0);
	}
	assert_int_equal(vg_bo_alloc(a, 4096, 0, NULL), -EINVAL);
	assert_int_equal(vg_bo_alloc(NULL, 4096, 0, &va), -EINVAL);
	/* Frees and queries of what is not a BO start. */
	assert_int_equal(vg_bo_free(a, used + 4096), -ENOENT);
	assert_int_equal(vg_bo_free(a, 0), -ENOENT);
	assert_int_equal(vg_bo_free(b, used), -ENOENT);
	take(&f, &after);
	same(&before, &after, true);

	/* The same range in another VM is fine: VA spaces are per VM. */
	va = used;
	assert_int_equal(vg_bo_alloc(b, 2 * CH, VGMEM_BO_FIXED_VA, &va), 0);
	/* Adjacent on both sides is fine too. */
	va = used - CH;
	assert_int_equal(vg_bo_alloc(a, CH, VGMEM_BO_FIXED_VA, &va), 0);
	va = used + 2 * CH;
	assert_int_equal(vg_bo_alloc(a, 4096, VGMEM_BO_FIXED_VA, &va), 0);
	/* A fixed BO at the very end of the range. */
	va = E - 4096;
	assert_int_equal(vg_bo_alloc(a, 4096, VGMEM_BO_FIXED_VA, &va), 0);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

static void test_va_allocator(void **state)
{
	const u64 S = VGMEM_VA_START;
	struct cfx f;
	struct vg_vm *a;
	u64 va1, va2, va3, va4, va5, fixed;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	va1 = cfx_alloc(a, 4096);
	va2 = cfx_alloc(a, CH + 4096);
	va3 = cfx_alloc(a, 4096);
	assert_int_equal(va1, S);
	assert_int_equal(va2, S + CH);
	assert_int_equal(va3, S + 3 * CH);
	/* First fit reuses the freed hole... */
	assert_int_equal(vg_bo_free(a, va2), 0);
	va4 = cfx_alloc(a, CH);
	assert_int_equal(va4, S + CH);
	/* ...and skips holes too small. */
	va5 = cfx_alloc(a, 2 * CH);
	assert_int_equal(va5, S + 4 * CH);
	/* Non-fixed BOs fill in before a fixed one. */
	fixed = S + 32 * CH + 4096;
	assert_int_equal(vg_bo_alloc(a, 4096, VGMEM_BO_FIXED_VA, &fixed), 0);
	assert_int_equal(fixed, S + 32 * CH + 4096);
	assert_int_equal(cfx_alloc(a, 4096), S + 2 * CH);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	/* The list stays sorted: check walks it. */
	assert_int_equal(cfx_alloc(a, CH), S + 6 * CH);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

static void test_query(void **state)
{
	struct cfx f;
	struct vg_vm *a;
	enum vg_loc locs[8];
	u32 n = 99;
	u64 va;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	va = cfx_alloc(a, 5 * CH + 4096);
	memset(locs, 0xff, sizeof(locs));
	/* Fewer slots than chunks: fills those, tells the count. */
	assert_int_equal(vg_bo_query(a, va, locs, 2, &n), 0);
	assert_int_equal(n, 6);
	assert_int_equal(locs[0], VG_LOC_VRAM);
	assert_int_equal(locs[1], VG_LOC_VRAM);
	assert_int_equal((int)locs[2], -1);
	assert_int_equal(vg_bo_query(a, va, NULL, 0, &n), 0);
	assert_int_equal(n, 6);
	assert_int_equal(vg_bo_query(a, va, NULL, 1, &n), -EINVAL);
	assert_int_equal(vg_bo_query(a, va, locs, 8, NULL), -EINVAL);
	assert_int_equal(vg_bo_query(a, va + CH, locs, 8, &n), -ENOENT);
	cfx_fini(&f);
}

/* Fill VRAM with a's data, tagged per page, then check it. */
static void fill(struct cfx *f, struct vg_vm *vm, u64 va, u64 size, u32 tag,
		 bool check)
{
	u64 off;

	for (off = 0; off < size; off += 4096) {
		u64 w[2] = { va + off, tag }, r[2];

		if (check) {
			assert_int_equal(fake_va_rw(f->fb, vm->as, va + off, r,
						    sizeof(r), false), 0);
			assert_memory_equal(w, r, sizeof(w));
		} else {
			assert_int_equal(fake_va_rw(f->fb, vm->as, va + off, w,
						    sizeof(w), true), 0);
		}
	}
}

static void test_pressure_keeps_data(void **state)
{
	struct cfx f;
	struct vg_vm *a, *b;
	struct vg_gpu_stats gs;
	u64 va, vb;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	b = cfx_vm(&f, "b");
	va = cfx_alloc(a, VRAM);
	fill(&f, a, va, VRAM, 0xa, false);
	vb = cfx_alloc(b, 6 * CH);
	/* b is below its half, so a gave 6 chunks, copied. */
	assert_int_equal(cfx_stats(a).resident, 10 * CH);
	assert_int_equal(cfx_stats(a).relocated, 6 * CH);
	assert_int_equal(cfx_stats(b).resident, 6 * CH);
	assert_int_equal(cfx_nloc(a, va, VG_LOC_HOST), 6);
	assert_int_equal(fake_bytes_copied(f.fb), 6 * CH);
	fill(&f, a, va, VRAM, 0xa, true);
	fill(&f, b, vb, 6 * CH, 0xb, false);
	vg_gpu_get_stats(f.gpu, &gs);
	assert_int_equal(gs.vram_used, VRAM);
	assert_int_equal(gs.host_used, 6 * CH);
	assert_int_equal(gs.reloc_out_chunks, 6);
	assert_int_equal(fake_vram_used(f.fb), VRAM);
	assert_int_equal(fake_host_used(f.fb), 6 * CH);
	assert_int_equal(cfx_hist_sum(cfx_stats(b).stall_hist), 1);
	assert_int_equal(vg_gpu_check(f.gpu), 0);

	/* Once b is gone, a's chunks come back intact. */
	assert_int_equal(vg_bo_free(b, vb), 0);
	assert_int_equal(vg_gpu_return_once(f.gpu), 6 * CH);
	assert_int_equal(cfx_stats(a).resident, VRAM);
	fill(&f, a, va, VRAM, 0xa, true);
	cfx_fini(&f);
}

static void test_host_budget(void **state)
{
	struct cfx_opts o = { .vram = VRAM, .chunk = CH,
			      .policy = VG_POLICY_LRA, .seed = 3,
			      .host_budget = 2 * CH };
	struct snap before, after;
	struct cfx f;
	struct vg_vm *a, *b;
	u64 va, vb;

	(void)state;
	cfx_init_opts(&f, &o);
	a = cfx_vm(&f, "a");
	b = cfx_vm(&f, "b");
	va = cfx_alloc(a, VRAM);
	fill(&f, a, va, VRAM, 1, false);
	take(&f, &before);
	/* 3 chunks would have to go to host RAM; the budget holds 2. */
	assert_int_equal(vg_bo_alloc(b, 3 * CH, 0, &vb), -ENOMEM);
	take(&f, &after);
	same(&before, &after, false);
	assert_int_equal(fake_count(f.fb, FAKE_OP_COPY_SUBMIT), 0);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	/* A BO bigger than the budget the requester alone... */
	assert_int_equal(vg_bo_alloc(a, 4 * CH, 0, &vb), -ENOMEM);
	take(&f, &after);
	same(&before, &after, false);
	/* 2 chunks fit. */
	vb = cfx_alloc(b, 2 * CH);
	assert_int_equal(cfx_stats(a).relocated, 2 * CH);
	fill(&f, a, va, VRAM, 1, true);
	/* Now the budget is used up: even one more chunk fails. */
	assert_int_equal(vg_bo_alloc(b, 4096, 0, &vb), -ENOMEM);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);
}

/* A GPU driver failure at the k-th call of op during an allocation. */
static void fail_case(enum fake_op op, u32 nth, bool pressure)
{
	struct snap before, after;
	struct cfx f;
	struct vg_vm *a, *b;
	u64 va, vb = 0;

	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	b = cfx_vm(&f, "b");
	va = cfx_alloc(a, pressure ? VRAM : 4 * CH);
	fill(&f, a, va, pressure ? VRAM : 4 * CH, 7, false);
	take(&f, &before);
	fake_fail(f.fb, op, nth);
	assert_int_equal(vg_bo_alloc(b, 4 * CH + 4096, 0, &vb), -ENOMEM);
	fake_fail_clear(f.fb);
	take(&f, &after);
	/*
	 * Under pressure a relocation that succeeded before the failing
	 * step may leave a's chunks in host RAM; without pressure nothing
	 * at all may differ.
	 */
	if (!pressure) {
		same(&before, &after, false);
	} else {
		assert_memory_equal(&before.vm[1], &after.vm[1],
				    sizeof(before.vm[1]));
		assert_int_equal(after.vm[0].allocated, VRAM);
	}
	assert_int_equal(cfx_stats(b).allocated, 0);
	assert_true(list_empty(&b->bos));
	assert_int_equal(fake_as_nr_maps(b->as), 0);
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	fill(&f, a, va, pressure ? VRAM : 4 * CH, 7, true);
	/* And the next attempt works. */
	vb = cfx_alloc(b, 4 * CH + 4096);
	fill(&f, a, va, pressure ? VRAM : 4 * CH, 7, true);
	cfx_fini(&f);
}

static void test_gpu_failures(void **state)
{
	u32 k;

	(void)state;
	for (k = 1; k <= 5; k++) {
		print_message("vram alloc %u, map %u\n", k, k);
		fail_case(FAKE_OP_MEM_ALLOC_VRAM, k, false);
		fail_case(FAKE_OP_MAP, k, false);
	}
	/* Under pressure: the relocation's copy or its allocations fail. */
	fail_case(FAKE_OP_COPY_SUBMIT, 1, true);
	fail_case(FAKE_OP_COPY_WAIT, 1, true);
	fail_case(FAKE_OP_MEM_ALLOC_HOST, 1, true);
	fail_case(FAKE_OP_MEM_ALLOC_HOST, 3, true);
	/* Or placing the new BO after the relocation worked. */
	fail_case(FAKE_OP_MEM_ALLOC_VRAM, 1, true);
	fail_case(FAKE_OP_MAP, 5, true);
}

static void test_host_alloc_of_new_chunks_fails(void **state)
{
	struct snap before, after;
	struct cfx f;
	struct vg_vm *a, *b;
	u64 va, vb;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	b = cfx_vm(&f, "b");
	a = cfx_vm(&f, "a");
	/*
	 * b fills VRAM and is exactly at its entitlement, so it is no
	 * victim; a's share is 0 and it has nothing resident: its new chunks
	 * go to host RAM directly, no relocation. (This test once had a
	 * lone VM with hot resident chunks, whose new chunks COLD sent to
	 * host RAM first; COLD now takes a requester's resident chunks
	 * before the new ones it is about to use.)
	 */
	assert_int_equal(vg_vm_set_entitlement(b, VRAM), 0);
	va = cfx_alloc(b, VRAM);
	take(&f, &before);
	fake_fail(f.fb, FAKE_OP_MEM_ALLOC_HOST, 2);
	assert_int_equal(vg_bo_alloc(a, 4 * CH, 0, &vb), -ENOMEM);
	take(&f, &after);
	assert_int_equal(fake_count(f.fb, FAKE_OP_COPY_SUBMIT), 0);
	/* Only the sampling and the failed placement touched the GPU driver. */
	after.ops[FAKE_OP_SAMPLE_ACCESS] = before.ops[FAKE_OP_SAMPLE_ACCESS];
	after.ops[FAKE_OP_MEM_ALLOC_HOST] = before.ops[FAKE_OP_MEM_ALLOC_HOST];
	after.ops[FAKE_OP_MEM_FREE] = before.ops[FAKE_OP_MEM_FREE];
	same(&before, &after, true);
	assert_int_equal(vg_gpu_check(f.gpu), 0);

	/* Without the failure: all four in host RAM, none copied. */
	vb = cfx_alloc(a, 4 * CH);
	assert_int_equal(cfx_nloc(a, vb, VG_LOC_HOST), 4);
	assert_int_equal(cfx_nloc(b, va, VG_LOC_VRAM), 16);
	assert_int_equal(fake_count(f.fb, FAKE_OP_COPY_SUBMIT), 0);
	assert_int_equal(fake_bytes_copied(f.fb), 0);
	cfx_fini(&f);
}

static void test_core_alloc_failure(void **state)
{
	struct snap before, after;
	struct cfx f;
	struct vg_vm *a;
	u64 va;
	long n;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_COLD);
	a = cfx_vm(&f, "a");
	cfx_alloc(a, 12 * CH);
	/* Each of the core's own allocations failing in turn. */
	for (n = 0; n < 8; n++) {
		int err;

		take(&f, &before);
		os_fail_alloc_after(n);
		err = vg_bo_alloc(a, 8 * CH, 0, &va);
		os_fail_alloc_after(-1);
		take(&f, &after);
		if (!err) {
			assert_int_equal(vg_bo_free(a, va), 0);
			continue;
		}
		assert_int_equal(err, -ENOMEM);
		assert_int_equal(after.vm[0].allocated, 12 * CH);
		assert_int_equal(vg_gpu_check(f.gpu), 0);
	}
	cfx_fini(&f);
}

static void test_free_wakes_and_unmaps(void **state)
{
	struct cfx f;
	struct vg_vm *a;
	u64 va, tlb;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	va = cfx_alloc(a, 3 * CH);
	tlb = fake_count(f.fb, FAKE_OP_TLB_FLUSH);
	/* One flush per allocation, not per chunk. */
	assert_int_equal(tlb, 1);
	assert_int_equal(vg_bo_free(a, va), 0);
	assert_int_equal(fake_count(f.fb, FAKE_OP_TLB_FLUSH), 2);
	/* Unmap and flush came before the memory was freed. */
	assert_true(fake_last_seq(f.fb, FAKE_OP_TLB_FLUSH) <
		    fake_last_seq(f.fb, FAKE_OP_MEM_FREE));
	assert_int_equal(fake_as_nr_maps(a->as), 0);
	assert_int_equal(fake_count(f.fb, FAKE_OP_MEM_FREE), 3);
	cfx_fini(&f);
}

#define BO_MAX	(64ull << 30)	/* VGMEM_BO_MAX_SIZE, docs/abi.md */

/*
 * Requests that cannot succeed are refused before the host allocates
 * anything: with the next allocation armed to fail, they must still get
 * their own error, and the armed failure must not have fired.
 */
static void refused(struct cfx *f, struct vg_vm *vm, u64 size, u32 flags,
		    u64 va, int want)
{
	struct snap before, after;
	unsigned long fails = os_alloc_failures();
	u64 v = va;

	take(f, &before);
	os_fail_alloc_after(0);
	assert_int_equal(vg_bo_alloc(vm, size, flags, &v), want);
	os_fail_alloc_after(-1);
	assert_int_equal(os_alloc_failures(), fails);
	assert_int_equal(v, va);
	take(f, &after);
	same(&before, &after, true);
}

static void test_refused_before_allocating(void **state)
{
	const u64 S = VGMEM_VA_START, E = VGMEM_VA_END;
	struct cfx_opts o = { .vram = VRAM, .chunk = CH,
			      .policy = VG_POLICY_LRA, .seed = 5,
			      .host_budget = 2 * CH };
	struct vg_va_node all = { .start = S, .end = E };
	struct cfx f;
	struct vg_vm *a, *b;
	u64 used;

	(void)state;
	cfx_init(&f, VRAM, CH, VG_POLICY_LRA);
	a = cfx_vm(&f, "a");
	used = cfx_alloc(a, 2 * CH);
	assert_int_equal(vg_vm_set_quota(a, 8 * CH), 0);
	/* The whole VA range: a ~1 TiB chunk array before, now nothing. */
	refused(&f, a, E - S, 0, 0, -E2BIG);
	refused(&f, a, BO_MAX + 4096, 0, 0, -E2BIG);
	refused(&f, a, BO_MAX + 4096, VGMEM_BO_FIXED_VA, S + BO_MAX, -E2BIG);
	/* Over the quota. */
	refused(&f, a, BO_MAX, 0, 0, -ENOSPC);
	refused(&f, a, 6 * CH + 4096, 0, 0, -ENOSPC);
	refused(&f, a, 7 * CH, VGMEM_BO_FIXED_VA, S + 64 * CH, -ENOSPC);
	/* Overlapping a BO. */
	refused(&f, a, CH, VGMEM_BO_FIXED_VA, used + 4096, -EINVAL);
	/* No hole: a node over the whole range stands for a full VA space. */
	assert_int_equal(vg_vm_set_quota(a, 0), 0);
	vg_va_remove(&a->va, &cfx_bo(a, used)->va_node);
	vg_va_insert(&a->va, &all);
	refused(&f, a, 4096, 0, 0, -ENOSPC);
	vg_va_remove(&a->va, &all);
	vg_va_insert(&a->va, &cfx_bo(a, used)->va_node);
	/* The largest BO itself is not refused for its size. */
	assert_int_equal(vg_gpu_check(f.gpu), 0);
	cfx_fini(&f);

	/* With a host budget: more than free VRAM plus the budget left. */
	cfx_init_opts(&f, &o);
	b = cfx_vm(&f, "b");
	cfx_alloc(b, 12 * CH);
	refused(&f, b, 6 * CH + 4096, 0, 0, -ENOMEM);
	refused(&f, b, BO_MAX, 0, 0, -ENOMEM);
	assert_int_equal(fake_count(f.fb, FAKE_OP_COPY_SUBMIT), 0);
	/* Exactly that much may be tried (and here fits: b is alone). */
	cfx_alloc(b, 6 * CH);
	assert_int_equal(cfx_stats(b).relocated, 2 * CH);
	cfx_fini(&f);
}

/* A failed allocation leaves the VM's resident index as it was. */
static void test_failure_keeps_res_vec(void **state)
{
	struct cfx_opts o = { .vram = 256 * CH, .chunk = CH,
			      .policy = VG_POLICY_LRA, .seed = 6,
			      .host_budget = 8 * CH };
	/* Placing fails, or relocating the 4 chunks to make room does. */
	const struct { enum fake_op op; u32 nth; u64 size; } cases[] = {
		{ FAKE_OP_MEM_ALLOC_VRAM, 30, 50 * CH },
		{ FAKE_OP_MAP, 30, 50 * CH },
		{ FAKE_OP_COPY_SUBMIT, 1, 60 * CH },
		{ FAKE_OP_MEM_ALLOC_HOST, 3, 60 * CH },
	};
	struct cfx f;
	struct vg_vm *a;
	struct vg_chunk **vec;
	u32 cap, k;
	u64 va;

	(void)state;
	cfx_init_opts(&f, &o);
	a = cfx_vm(&f, "a");
	cfx_alloc(a, 200 * CH);
	vec = a->res_vec;
	cap = a->res_cap;
	assert_true(cap < 250);
	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		print_message("%s %u fails\n", fake_op_name(cases[k].op),
			      cases[k].nth);
		fake_fail(f.fb, cases[k].op, cases[k].nth);
		assert_int_equal(vg_bo_alloc(a, cases[k].size, 0, &va),
				 -ENOMEM);
		fake_fail_clear(f.fb);
		assert_ptr_equal(a->res_vec, vec);
		assert_int_equal(a->res_cap, cap);
		assert_int_equal(cfx_stats(a).allocated, 200 * CH);
		assert_int_equal(vg_gpu_check(f.gpu), 0);
	}
	/* The index grows for a BO that is placed. */
	cfx_alloc(a, 50 * CH);
	assert_true(a->res_cap >= 250);
	cfx_fini(&f);
}

/*
 * A GPU driver whose map is not all or nothing: the failing call maps the
 * first page of its range, then fails.
 */
static struct vg_gpu_ops partial_ops;
static u32 partial_calls, partial_fail_at;

static int partial_map(void *b, struct vg_as *as, u64 va, u64 size,
		       struct vg_mem *mem, u64 mem_off)
{
	if (++partial_calls == partial_fail_at) {
		assert_int_equal(fake_ops.map(b, as, va, 4096, mem, mem_off), 0);
		return -EIO;
	}
	return fake_ops.map(b, as, va, size, mem, mem_off);
}

static void test_partial_map_failure(void **state)
{
	struct cfx_opts o = { .vram = VRAM, .chunk = CH,
			      .policy = VG_POLICY_LRA, .seed = 7,
			      .ops = &partial_ops };
	struct cfx f;
	struct vg_vm *a;
	u64 va, keep;
	u32 k;

	(void)state;
	partial_ops = fake_ops;
	partial_ops.map = partial_map;
	cfx_init_opts(&f, &o);
	a = cfx_vm(&f, "a");
	keep = cfx_alloc(a, CH);
	/* The first chunk, a middle one, the short tail. */
	for (k = 1; k <= 4; k += (k == 1 ? 1 : 2)) {
		print_message("map %u fails half done\n", k);
		partial_calls = 0;
		partial_fail_at = k;
		assert_int_equal(vg_bo_alloc(a, 3 * CH + 4096, 0, &va),
				 -ENOMEM);
		/* Only the BO that was there is still mapped. */
		assert_int_equal(fake_as_nr_maps(a->as), 1);
		assert_non_null(fake_va_mem(a->as, keep, &va));
		assert_null(fake_va_mem(a->as, keep + CH, &va));
		assert_int_equal(fake_errors(f.fb), 0);
		assert_int_equal(vg_gpu_check(f.gpu), 0);
	}
	partial_fail_at = 0;
	cfx_alloc(a, 3 * CH + 4096);
	cfx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_va_allocator),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_pressure_keeps_data),
		cmocka_unit_test(test_host_budget),
		cmocka_unit_test(test_gpu_failures),
		cmocka_unit_test(test_host_alloc_of_new_chunks_fails),
		cmocka_unit_test(test_core_alloc_failure),
		cmocka_unit_test(test_free_wakes_and_unmaps),
		cmocka_unit_test(test_refused_before_allocating),
		cmocka_unit_test(test_failure_keeps_res_vec),
		cmocka_unit_test(test_partial_map_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
