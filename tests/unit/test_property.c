// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Property test of the core on the fake GPU: long random sequences of
 * allocations (good and hostile), frees, returns, entitlement, quota and
 * policy changes and injected GPU driver failures over several VMs, checked
 * after every operation against a model: vg_gpu_check() passes, every
 * VM's allocation equals the model's, the GPU driver's memory equals the
 * core's totals, and every BO still holds the bytes written into it.
 *
 * The seed is printed; VGMEM_TEST_SEED=<n> reruns one sequence.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core_fixture.h"

#define CH		(64 * KiB)
#define NVMS		4
#define MAXBOS		128
#define QUOTA		(64 * CH)

struct mbo {
	u64 va, size, tag;
};

struct mvm {
	struct mbo bo[MAXBOS];
	u32 n;
	u64 allocated;
	u64 quota;
};

struct prop {
	struct cfx f;
	struct mvm m[NVMS];
	struct vg_rand r;
	u64 seed;
	u32 op;
	u64 next_tag;
	bool budget;		/* allocations may fail for lack of host RAM */
	bool trace;		/* VGMEM_TEST_TRACE: print every operation */
};

#define CHECK(p, cond)							\
	do {								\
		if (!(cond)) {						\
			print_error("property failed at op %u (seed %llu, "	\
				    "VGMEM_TEST_SEED=%llu reruns): %s\n",	\
				    (p)->op,				\
				    (unsigned long long)(p)->seed,	\
				    (unsigned long long)(p)->seed, #cond);	\
			fail();						\
		}							\
	} while (0)

static u32 rnd(struct prop *p, u32 n)
{
	return vg_rand_below(&p->r, n);
}

/* Tag the first page of every chunk and the last page of the BO. */
static void bo_tag(struct prop *p, struct vg_vm *vm, const struct mbo *b,
		   bool check)
{
	u64 off;

	for (off = 0;; off += CH) {
		u64 at = off < b->size ? off : b->size - 4096;
		u64 w[2] = { b->va + at, b->tag }, r[2];

		if (check) {
			CHECK(p, !fake_va_rw(p->f.fb, vm->as, b->va + at, r,
					     sizeof(r), false));
			CHECK(p, r[0] == w[0] && r[1] == w[1]);
		} else {
			CHECK(p, !fake_va_rw(p->f.fb, vm->as, b->va + at, w,
					     sizeof(w), true));
		}
		if (off >= b->size)
			break;
	}
}

static bool model_overlaps(const struct mvm *m, u64 va, u64 size)
{
	u32 i;

	for (i = 0; i < m->n; i++)
		if (va < m->bo[i].va + m->bo[i].size && m->bo[i].va < va + size)
			return true;
	return false;
}

static void check_all(struct prop *p, bool data)
{
	struct vg_gpu_stats gs;
	u32 v, i;

	CHECK(p, vg_gpu_check(p->f.gpu) == 0);
	vg_gpu_get_stats(p->f.gpu, &gs);
	CHECK(p, gs.vram_used <= gs.vram_size);
	CHECK(p, fake_vram_used(p->f.fb) == gs.vram_used);
	CHECK(p, fake_host_used(p->f.fb) == gs.host_used);
	CHECK(p, fake_errors(p->f.fb) == 0);
	CHECK(p, fake_copies_pending(p->f.fb) == 0);
	CHECK(p, os_warn_count() == p->f.warns);
	for (v = 0; v < NVMS; v++) {
		struct vgmem_vm_stats st = cfx_stats(p->f.vm[v]);

		CHECK(p, st.allocated == p->m[v].allocated);
		CHECK(p, st.resident + st.relocated == st.allocated);
		if (data)
			for (i = 0; i < p->m[v].n; i++)
				bo_tag(p, p->f.vm[v], &p->m[v].bo[i], true);
	}
}

static u64 rand_size(struct prop *p)
{
	/* Mostly small, sometimes several chunks, page granular. */
	if (rnd(p, 4))
		return (1 + rnd(p, 32)) * 4096;
	return (1 + rnd(p, 12 * 16)) * 4096;
}

static void op_alloc(struct prop *p, bool inject)
{
	u32 v = rnd(p, NVMS);
	struct vg_vm *vm = p->f.vm[v];
	struct mvm *m = &p->m[v];
	u64 size = rand_size(p), va = 0, fixed_va;
	u32 flags = 0, cap = vm->res_cap;
	int want = 0, err;

	if (m->n == MAXBOS)
		return;
	if (!rnd(p, 8)) {
		flags = VGMEM_BO_FIXED_VA;
		va = VGMEM_VA_START + (u64)rnd(p, 128) * CH +
		     (u64)rnd(p, 16) * 4096;
		if (model_overlaps(m, va, size))
			want = -EINVAL;
	}
	if (!want && m->quota && m->allocated + size > m->quota)
		want = -ENOSPC;
	if (inject) {
		static const enum fake_op fops[] = {
			FAKE_OP_MEM_ALLOC_VRAM, FAKE_OP_MEM_ALLOC_HOST,
			FAKE_OP_MAP, FAKE_OP_COPY_SUBMIT, FAKE_OP_COPY_WAIT,
		};

		fake_fail(p->f.fb, fops[rnd(p, ARRAY_SIZE(fops))],
			  1 + rnd(p, 4));
	}
	fixed_va = va;
	err = vg_bo_alloc(vm, size, flags, &va);
	fake_fail_clear(p->f.fb);
	if (p->trace)
		print_message("%u: alloc vm%u size %llu flags %u inject %d -> %d va 0x%llx (want %d)\n",
			      p->op, v, (unsigned long long)size, flags, inject,
			      err, (unsigned long long)va, want);
	/* A failed allocation does not grow the VM's resident index. */
	CHECK(p, !err || vm->res_cap == cap);
	if (want) {
		CHECK(p, err == want);
		return;
	}
	if ((inject || p->budget) && err == -ENOMEM)
		return;
	CHECK(p, err == 0);
	CHECK(p, !flags || va == fixed_va);
	CHECK(p, IS_ALIGNED(va, 4096) && va >= VGMEM_VA_START &&
		 va + size <= VGMEM_VA_END);
	CHECK(p, !model_overlaps(m, va, size));
	CHECK(p, flags || IS_ALIGNED(va, CH));
	m->bo[m->n].va = va;
	m->bo[m->n].size = size;
	m->bo[m->n].tag = ++p->next_tag;
	bo_tag(p, vm, &m->bo[m->n], false);
	m->n++;
	m->allocated += size;
}

static void op_bad_alloc(struct prop *p)
{
	struct vg_vm *vm = p->f.vm[rnd(p, NVMS)];
	u64 va = 0;
	u64 size = 4096;
	u32 flags = 0;
	int want = -EINVAL;

	switch (rnd(p, 6)) {
	case 0:
		size = rnd(p, 2) ? 0 : 4096 * (1 + rnd(p, 8)) + 1 + rnd(p, 4095);
		break;
	case 1:
		flags = 1u << (1 + rnd(p, 31));
		break;
	case 2:
		flags = VGMEM_BO_FIXED_VA;
		va = VGMEM_VA_START + 1 + rnd(p, 4095);
		break;
	case 3:
		flags = VGMEM_BO_FIXED_VA;
		va = rnd(p, 2) ? VGMEM_VA_START - 4096 : VGMEM_VA_END;
		break;
	case 4:
		flags = VGMEM_BO_FIXED_VA;
		va = ~0ull & ~4095ull;
		size = 8192;
		break;
	default:
		/* Above the largest BO (docs/abi.md), in the VA range. */
		size = (64ull << 30) + 4096 * (1 + (u64)rnd(p, 1024));
		want = -E2BIG;
		break;
	}
	CHECK(p, vg_bo_alloc(vm, size, flags, &va) == want);
}

static void op_free(struct prop *p)
{
	u32 v = rnd(p, NVMS), i;
	struct mvm *m = &p->m[v];
	struct vg_vm *vm = p->f.vm[v];

	if (!m->n || !rnd(p, 16)) {
		/* An address where no BO starts (maybe inside one). */
		u64 va = VGMEM_VA_START + 4096 * (u64)rnd(p, 256);

		for (i = 0; i < m->n; i++)
			if (m->bo[i].va == va)
				return;
		CHECK(p, vg_bo_free(vm, va) == -ENOENT);
		return;
	}
	i = rnd(p, m->n);
	if (p->trace)
		print_message("%u: free vm%u va 0x%llx\n", p->op, v,
			      (unsigned long long)m->bo[i].va);
	bo_tag(p, vm, &m->bo[i], true);
	CHECK(p, vg_bo_free(vm, m->bo[i].va) == 0);
	m->allocated -= m->bo[i].size;
	m->bo[i] = m->bo[--m->n];
}

static void op_heat(struct prop *p)
{
	struct vg_vm *vm = p->f.vm[rnd(p, NVMS)];
	struct vg_chunk *c;

	/* Touch a random subset of the VM's resident chunks. */
	list_for_each_entry(c, &vm->resident_list, node)
		if (!rnd(p, 3))
			fake_set_access(c->mem, rnd(p, 100));
}

static void op_settings(struct prop *p)
{
	u32 v = rnd(p, NVMS);
	struct vg_vm *vm = p->f.vm[v];
	struct mvm *m = &p->m[v];
	u64 q;
	int err;

	switch (rnd(p, 3)) {
	case 0:
		CHECK(p, vg_vm_set_entitlement(vm, rnd(p, 2) ? 0 :
					       (u64)rnd(p, 24) * CH) == 0);
		break;
	case 1:
		q = rnd(p, 4) ? QUOTA : (u64)rnd(p, 80) * CH;
		err = vg_vm_set_quota(vm, q);
		if (q && q < m->allocated) {
			CHECK(p, err == -EBUSY);
		} else {
			CHECK(p, err == 0);
			m->quota = q;
		}
		break;
	default:
		CHECK(p, vg_gpu_set_policy(p->f.gpu, rnd(p, VG_POLICY_NR)) == 0);
		break;
	}
}

static void run(u64 seed, u32 ops, u64 budget)
{
	struct cfx_opts o = { .vram = 48 * CH, .chunk = CH,
			      .policy = VG_POLICY_RANDOM, .seed = seed,
			      .host_budget = budget };
	struct prop *p = calloc(1, sizeof(*p));
	char name[8];
	int level;
	u32 v;

	assert_non_null(p);
	print_message("seed %llu, %u ops, host budget %llu\n",
		      (unsigned long long)seed, ops,
		      (unsigned long long)budget);
	p->seed = seed;
	p->budget = budget != 0;
	p->trace = getenv("VGMEM_TEST_TRACE") != NULL;
	vg_rand_seed(&p->r, seed ^ 0x70726f70ull);
	cfx_init_opts(&p->f, &o);
	/* Injected failures log warnings by design; keep errors only. */
	level = os_log_level(LOGLEVEL_ERR);
	for (v = 0; v < NVMS; v++) {
		snprintf(name, sizeof(name), "p%u", v);
		cfx_vm(&p->f, name);
		assert_int_equal(vg_vm_set_quota(p->f.vm[v], QUOTA), 0);
		p->m[v].quota = QUOTA;
	}
	for (p->op = 0; p->op < ops; p->op++) {
		u32 k = rnd(p, 100);

		if (p->trace)
			print_message("%u: op class %u\n", p->op, k);

		if (k < 42)
			op_alloc(p, false);
		else if (k < 46)
			op_alloc(p, true);
		else if (k < 50)
			op_bad_alloc(p);
		else if (k < 85)
			op_free(p);
		else if (k < 91)
			CHECK(p, vg_gpu_return_once(p->f.gpu) >= 0 ||
				 p->budget);
		else if (k < 95)
			op_heat(p);
		else
			op_settings(p);
		check_all(p, p->op % 500 == 0);
	}
	check_all(p, true);
	{
		struct vg_gpu_stats gs;

		/* Show that the run exercised pressure and returns. */
		vg_gpu_get_stats(p->f.gpu, &gs);
		print_message("relocations %llu (failed %llu), chunks out %llu, in %llu\n",
			      (unsigned long long)gs.relocations,
			      (unsigned long long)gs.reloc_failures,
			      (unsigned long long)gs.reloc_out_chunks,
			      (unsigned long long)gs.reloc_in_chunks);
		CHECK(p, gs.reloc_out_chunks > 0 && gs.reloc_in_chunks > 0);
	}
	os_log_level(level);
	cfx_fini(&p->f);
	free(p);
}

static u64 test_seed(void)
{
	const char *s = getenv("VGMEM_TEST_SEED");

	return s && *s ? strtoull(s, NULL, 0) : 20240611ull;
}

static void test_property(void **state)
{
	(void)state;
	run(test_seed(), 20000, 0);
}

static void test_property_host_budget(void **state)
{
	(void)state;
	run(test_seed() + 1, 5000, 24 * CH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_property),
		cmocka_unit_test(test_property_host_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
