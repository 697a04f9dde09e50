// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The software GPU's 2 MiB big pages (sim/mmu.c): when a map installs one,
 * what reads and writes through it hit, how a change to part of one splits
 * it, and that every mem reference a big page or a split leaf holds is
 * dropped exactly (white box: the tests read mem->refs and count tables).
 */
#include "test_sim_util.h"
#include "host-module/sim/sim_internal.h"

#define VA0	0x100000000ull		/* 4 GiB: 2 MiB aligned */
#define VA1	0x200000000ull		/* a second, aliasing, view */
#define BIG	(2ull << 20)
#define PG	4096ull
#define VRAM	(32ull << 20)

static const struct vg_gpu_ops *ops;

static int refs(struct vg_mem *m)
{
	return atomic_read(&m->refs);
}

static u64 tables(struct vg_sim *sim)
{
	return vg_sim_pt_tables(sim);
}

/* A channel running one FILL_PATTERN kernel over [va, va + bytes). */
static void fill(struct vg_sim *sim, struct vg_as *as, struct tg *g, u64 va,
		 u64 bytes, u32 seed)
{
	struct tchan *t = t_chan(sim, as, g, 8);
	u32 a[VGMEM_CP_NARGS] = { 0 };

	t_bind(t);
	t_args64(a, 0, va);
	t_args64(a, 2, bytes);
	a[4] = seed;
	t_kernel(t, VGMEM_K_FILL_PATTERN, a);
	t_run(t);
	t_chan_free(t);
}

/* Byte off of a FILL_PATTERN over a range that started at offset 0. */
static u8 pat(u32 seed, u64 off)
{
	return (u8)(vgmem_pattern_word(seed, off >> 2) >> (8 * (off & 3)));
}

/* Page pg of [va, ...) holds the pattern of seed at its offset base + pg*4K. */
static void check_page(struct vg_sim *sim, struct vg_as *as, u64 va,
		       u64 off, u32 seed)
{
	u8 buf[PG];
	u64 k;

	assert_int_equal(vg_sim_read_va(sim, as, va, buf, PG), 0);
	for (k = 0; k < PG; k += 61)
		assert_int_equal(buf[k], pat(seed, off + k));
	assert_int_equal(buf[PG - 1], pat(seed, off + PG - 1));
}

/* Only a whole, aligned 2 MiB of one mem at a 2 MiB mem offset is big. */
static void test_big_only_when_eligible(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 64ull << 20);
	struct vg_as *as;
	struct vg_mem *m, *h;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, 3 * BIG, &m), 0);
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_HOST, BIG, &h), 0);
	assert_int_equal(refs(m), 1);

	/* Two big pages: the L1 table only, one reference each. */
	assert_int_equal(ops->map(sim, as, VA0, 2 * BIG, m, 0), 0);
	assert_int_equal(tables(sim), 1);
	assert_int_equal(refs(m), 3);
	ops->unmap(sim, as, VA0, 2 * BIG);
	assert_int_equal(tables(sim), 0);
	assert_int_equal(refs(m), 1);

	/* VA not 2 MiB aligned: two leaves, one reference per PTE. */
	assert_int_equal(ops->map(sim, as, VA0 + PG, BIG, m, 0), 0);
	assert_int_equal(tables(sim), 3);
	assert_int_equal(refs(m), 1 + 512);
	ops->unmap(sim, as, VA0, 2 * BIG);
	assert_int_equal(tables(sim), 0);

	/* Mem offset not on a 512-page boundary. */
	assert_int_equal(ops->map(sim, as, VA0, BIG, m, PG), 0);
	assert_int_equal(tables(sim), 2);
	ops->unmap(sim, as, VA0, BIG);

	/* Short of 2 MiB by a page. */
	assert_int_equal(ops->map(sim, as, VA0, BIG - PG, m, 0), 0);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(refs(m), 512);
	ops->unmap(sim, as, VA0, BIG);
	assert_int_equal(refs(m), 1);

	/* 2 MiB + 4 KiB: a big page and a leaf with one PTE. */
	assert_int_equal(ops->map(sim, as, VA0, BIG + PG, m, 0), 0);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(refs(m), 3);
	ops->unmap(sim, as, VA0, BIG + PG);
	assert_int_equal(tables(sim), 0);

	/* A 2 MiB mem offset of a bigger mem, read-only, host memory. */
	assert_int_equal(ops->map_prot(sim, as, VA0, BIG, m, BIG, VG_PROT_RO),
			 0);
	assert_int_equal(ops->map(sim, as, VA0 + BIG, BIG, h, 0), 0);
	assert_int_equal(tables(sim), 1);
	assert_int_equal(refs(m), 2);
	assert_int_equal(refs(h), 2);

	/* A big page over leaves: the leaf goes, its references too. */
	ops->unmap(sim, as, VA0, 2 * BIG);
	assert_int_equal(ops->map(sim, as, VA0, 8 * PG, h, 0), 0);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(ops->map(sim, as, VA0, BIG, m, 0), 0);
	assert_int_equal(tables(sim), 1);
	assert_int_equal(refs(h), 1);
	assert_int_equal(refs(m), 2);
	/* A big page over a big page. */
	assert_int_equal(ops->map(sim, as, VA0, BIG, h, 0), 0);
	assert_int_equal(refs(m), 1);
	assert_int_equal(refs(h), 2);
	assert_int_equal(tables(sim), 1);

	/* Hostile input changes nothing, big pages included. */
	assert_int_equal(ops->map(sim, as, VA0, 2 * BIG, h, 0), -EINVAL);
	assert_int_equal(ops->map_prot(sim, as, VA0, BIG, m, 0, 9), -EINVAL);
	assert_int_equal(ops->protect(sim, as, VA0 + 1, PG, VG_PROT_RO),
			 -EINVAL);
	assert_int_equal(refs(h), 2);
	assert_int_equal(tables(sim), 1);

	ops->unmap(sim, as, 0, 1ull << 40);
	assert_int_equal(tables(sim), 0);
	assert_int_equal(refs(m), 1);
	assert_int_equal(refs(h), 1);
	ops->mem_free(sim, m);
	ops->mem_free(sim, h);
	ops->as_destroy(sim, as);
	vg_sim_destroy(sim);
}

/*
 * A kernel writes through big pages; every byte lands at its mem offset,
 * as seen through a second view of the same mem made of 4 KiB PTEs.
 */
static void test_big_reads_writes(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 0);
	struct tg *g = tg_new();
	struct vg_mem *frag, *m;
	struct vg_as *as;
	u64 off;

	(void)state;
	/* Scatter the frames: a big page's pages are not contiguous here. */
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, 3 * BIG + 12 * PG,
					&frag), 0);
	ops->mem_free(sim, frag);
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, 5 * PG, &frag), 0);
	assert_int_equal(ops->as_create(sim, &as), 0);
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, 3 * BIG, &m), 0);
	assert_int_equal(ops->map(sim, as, VA0, 3 * BIG, m, 0), 0);
	/* The alias: from a page past a 2 MiB boundary, all leaves. */
	assert_int_equal(ops->map(sim, as, VA1 + PG, 3 * BIG, m, 0), 0);
	assert_int_equal(tables(sim), 1 + 1 + 4);
	fill(sim, as, g, VA0, 3 * BIG, 0x5eed);
	for (off = 0; off < 3 * BIG; off += PG) {
		check_page(sim, as, VA0 + off, off, 0x5eed);
		check_page(sim, as, VA1 + PG + off, off, 0x5eed);
	}
	/* And the other way: written through leaves, read through bigs. */
	fill(sim, as, g, VA1 + PG + BIG, BIG, 77);
	for (off = 0; off < BIG; off += PG)
		check_page(sim, as, VA0 + BIG + off, off, 77);
	check_page(sim, as, VA0 + BIG - PG, BIG - PG, 0x5eed);
	check_page(sim, as, VA0 + 2 * BIG, 2 * BIG, 0x5eed);
	ops->mem_free(sim, m);
	ops->mem_free(sim, frag);
	ops->as_destroy(sim, as);
	assert_int_equal(tables(sim), 0);
	assert_int_equal(vg_sim_vram_free(sim), VRAM);
	vg_sim_destroy(sim);
	tg_free(g);
}

/* Unmap, protect and map of part of a big page split it; nothing else moves. */
static void test_big_split(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 0);
	struct tg *g = tg_new();
	struct vg_mem *m, *o;
	struct tchan *t;
	struct vg_as *as;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u64 off;
	u32 v;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 2 * BIG, VG_LOC_VRAM);
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, PG, &o), 0);
	fill(sim, as, g, VA0, 2 * BIG, 9);
	assert_int_equal(tables(sim), 1);
	assert_int_equal(refs(m), 3);

	/* Unmap one page of the first: a leaf of 511 PTEs. */
	ops->unmap(sim, as, VA0 + 2 * PG, PG);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(refs(m), 1 + 511 + 1);
	assert_int_equal(vg_sim_read_va(sim, as, VA0 + 2 * PG, &v, 4), -EFAULT);

	/* Protect one page of the second: a leaf of 512, one read-only. */
	assert_int_equal(ops->protect(sim, as, VA0 + BIG + 5 * PG, PG,
				      VG_PROT_RO), 0);
	assert_int_equal(tables(sim), 3);
	assert_int_equal(refs(m), 1 + 511 + 512);

	/* Map another mem over one page of a third big page. */
	assert_int_equal(ops->map(sim, as, VA1, BIG, m, 0), 0);
	assert_int_equal(refs(m), 1 + 511 + 512 + 1);
	assert_int_equal(ops->map(sim, as, VA1 + BIG - PG, PG, o, 0), 0);
	assert_int_equal(tables(sim), 5);
	assert_int_equal(refs(m), 1 + 511 + 512 + 511);
	assert_int_equal(refs(o), 2);

	/* Every other page translates as before. */
	for (off = 0; off < 2 * BIG; off += PG)
		if (off != 2 * PG)
			check_page(sim, as, VA0 + off, off, 9);
	for (off = 0; off < BIG - PG; off += PG)
		check_page(sim, as, VA1 + off, off, 9);

	/* Writes: the read-only page faults, its neighbours do not. */
	t = t_chan(sim, as, g, 8);
	t_bind(t);
	t_args64(a, 0, VA0 + BIG + 4 * PG);
	t_args64(a, 2, PG);
	a[4] = 0x11111111;
	t_kernel(t, VGMEM_K_MEMSET, a);
	t_run(t);
	t_args64(a, 0, VA0 + BIG + 5 * PG + 8);
	t_args64(a, 2, 4);
	t_kernel(t, VGMEM_K_MEMSET, a);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO),
			 (u32)(VA0 + BIG + 5 * PG + 8));
	t_chan_free(t);
	check_page(sim, as, VA0 + BIG + 5 * PG, BIG + 5 * PG, 9);
	assert_int_equal(vg_sim_read_va(sim, as, VA0 + BIG + 4 * PG, &v, 4), 0);
	assert_int_equal(v, 0x11111111);

	/* A map over the whole split range makes it big again. */
	assert_int_equal(ops->map(sim, as, VA0, 2 * BIG, m, 0), 0);
	assert_int_equal(tables(sim), 1 + 2);
	assert_int_equal(refs(m), 1 + 2 + 511);
	ops->unmap(sim, as, VA1, BIG);
	assert_int_equal(refs(o), 1);
	assert_int_equal(tables(sim), 1);
	ops->unmap(sim, as, VA0, 2 * BIG);
	assert_int_equal(tables(sim), 0);
	assert_int_equal(refs(m), 1);
	ops->mem_free(sim, m);
	ops->mem_free(sim, o);
	ops->as_destroy(sim, as);
	vg_sim_destroy(sim);
	tg_free(g);
}

/*
 * A range covering big pages whole and others partly, unaligned both ends:
 * protect and unmap change exactly the pages of the range.
 */
static void test_big_partial_ends(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 0);
	struct vg_mem *m;
	struct vg_as *as;
	u64 off, lo = BIG - 3 * PG, hi = 3 * BIG + 7 * PG;
	u32 v;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 4 * BIG, VG_LOC_VRAM);
	assert_int_equal(tables(sim), 1);
	/* Splits the first and the last, sets the middle two whole. */
	assert_int_equal(ops->protect(sim, as, VA0 + lo, hi - lo, VG_PROT_RO),
			 0);
	assert_int_equal(tables(sim), 3);
	assert_int_equal(refs(m), 1 + 512 + 1 + 1 + 512);
	ops->unmap(sim, as, VA0 + lo, hi - lo);
	assert_int_equal(tables(sim), 3);
	assert_int_equal(refs(m), 1 + (u32)(lo / PG) + (u32)((4 * BIG - hi) / PG));
	for (off = 0; off < 4 * BIG; off += PG)
		assert_int_equal(vg_sim_read_va(sim, as, VA0 + off, &v, 4),
				 off >= lo && off < hi ? -EFAULT : 0);
	ops->as_destroy(sim, as);
	assert_int_equal(refs(m), 1);
	assert_int_equal(tables(sim), 0);
	ops->mem_free(sim, m);
	vg_sim_destroy(sim);
}

/*
 * Relocation: copy the chunks, map the copy over them, flush, free the
 * original. The old mem goes at once, whether its big pages were whole
 * or split.
 */
static void test_big_relocate(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 64ull << 20);
	struct tg *g = tg_new();
	struct vg_mem *a, *b;
	struct vg_copy c;
	struct vg_as *as;
	u64 fence, off;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	a = t_map_new(sim, as, VA0, 2 * BIG, VG_LOC_VRAM);
	fill(sim, as, g, VA0, 2 * BIG, 0xabc);
	/* Split the second: relocation must replace a leaf too. */
	assert_int_equal(ops->protect(sim, as, VA0 + BIG + PG, PG, VG_PROT_RO),
			 0);
	assert_int_equal(ops->protect(sim, as, VA0 + BIG + PG, PG, VG_PROT_RW),
			 0);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_HOST, 2 * BIG, &b), 0);
	c = (struct vg_copy){ a, 0, b, 0, 2 * BIG };
	assert_int_equal(ops->copy_submit(sim, &c, 1, &fence), 0);
	assert_int_equal(ops->copy_wait(sim, fence, NULL), 0);
	assert_int_equal(ops->map(sim, as, VA0, 2 * BIG, b, 0), 0);
	ops->tlb_flush(sim, as);
	assert_int_equal(tables(sim), 1);
	assert_int_equal(refs(a), 1);
	assert_int_equal(refs(b), 3);
	ops->mem_free(sim, a);
	assert_int_equal(vg_sim_vram_free(sim), VRAM);
	for (off = 0; off < 2 * BIG; off += PG)
		check_page(sim, as, VA0 + off, off, 0xabc);

	/* And back into VRAM, over whole big pages. */
	assert_int_equal(ops->mem_alloc(sim, VG_LOC_VRAM, 2 * BIG, &a), 0);
	c = (struct vg_copy){ b, 0, a, 0, 2 * BIG };
	assert_int_equal(ops->copy_submit(sim, &c, 1, &fence), 0);
	assert_int_equal(ops->copy_wait(sim, fence, NULL), 0);
	assert_int_equal(ops->map(sim, as, VA0, BIG, a, 0), 0);
	assert_int_equal(ops->map(sim, as, VA0 + BIG, BIG, a, BIG), 0);
	ops->tlb_flush(sim, as);
	assert_int_equal(refs(b), 1);
	ops->mem_free(sim, b);
	assert_int_equal(refs(a), 3);
	for (off = 0; off < 2 * BIG; off += PG)
		check_page(sim, as, VA0 + off, off, 0xabc);
	ops->mem_free(sim, a);
	assert_int_equal(vg_sim_vram_free(sim), VRAM - 2 * BIG);
	/* The address space's teardown drops the big pages' references. */
	ops->as_destroy(sim, as);
	assert_int_equal(vg_sim_vram_free(sim), VRAM);
	assert_int_equal(tables(sim), 0);
	vg_sim_destroy(sim);
	tg_free(g);
}

/* A read-only big page faults writes exactly as read-only PTEs do. */
static void test_big_ro(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 0);
	struct tg *g = tg_new();
	struct vg_mem *m;
	struct tchan *t;
	struct vg_as *as;
	u32 a[VGMEM_CP_NARGS] = { 0 };
	u64 sum;
	int round;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 2 * BIG, VG_LOC_VRAM);
	fill(sim, as, g, VA0, BIG, 5);
	for (round = 0; round < 2; round++) {
		if (round == 0)
			/* map_prot over the big page: read-only at once. */
			assert_int_equal(ops->map_prot(sim, as, VA0, BIG, m, 0,
						       VG_PROT_RO), 0);
		else
			/* protect of the whole big page: no split. */
			assert_int_equal(ops->protect(sim, as, VA0, BIG,
						      VG_PROT_RO), 0);
		assert_int_equal(tables(sim), 1);
		t = t_chan(sim, as, g, 8);
		t_bind(t);
		/* A read of the whole RO page, its result into the RW one. */
		t_args64(a, 0, VA0);
		t_args64(a, 2, BIG);
		t_args64(a, 4, VA0 + BIG);
		t_kernel(t, VGMEM_K_CHECKSUM, a);
		t_run(t);
		assert_int_equal(vg_sim_read_va(sim, as, VA0 + BIG, &sum, 8),
				 0);
		{
			u8 *want = malloc(BIG);
			u64 k;

			for (k = 0; k < BIG; k++)
				want[k] = pat(5, k);
			assert_int_equal(sum, t_fnv(want, BIG));
			free(want);
		}
		/* A write: the VA error at the address, nothing written. */
		t_args64(a, 0, VA0 + BIG - 8);
		t_args64(a, 2, 4);
		a[4] = 0x77;
		a[5] = 0;
		t_kernel(t, VGMEM_K_MEMSET, a);
		t_submit(t);
		assert_int_equal(t_idle(t), 0);
		assert_int_equal(t_userd(t, VGMEM_USERD_ERROR),
				 VGMEM_CHAN_ERR_VA);
		assert_int_equal(t_userd(t, VGMEM_USERD_ERROR_ADDR_LO),
				 (u32)(VA0 + BIG - 8));
		assert_int_equal(t->faults, 1);
		t_chan_free(t);
		check_page(sim, as, VA0 + BIG - PG, BIG - PG, 5);
		/* Writable again, whole. */
		assert_int_equal(ops->protect(sim, as, VA0, BIG, VG_PROT_RW), 0);
		assert_int_equal(tables(sim), 1);
		t = t_chan(sim, as, g, 8);
		t_bind(t);
		a[4] = 0x77;
		t_args64(a, 0, VA0 + BIG - 8);
		t_args64(a, 2, 4);
		t_kernel(t, VGMEM_K_MEMSET, a);
		t_run(t);
		t_chan_free(t);
		fill(sim, as, g, VA0, BIG, 5);
	}
	assert_int_equal(refs(m), 3);
	ops->mem_free(sim, m);
	ops->as_destroy(sim, as);
	vg_sim_destroy(sim);
	tg_free(g);
}

/*
 * No memory to split: protect fails and changes nothing; unmap, which
 * cannot fail, takes the big page whole (and no reference is lost).
 */
static void test_big_split_no_memory(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 0);
	struct vg_mem *m;
	struct vg_as *as;
	u64 off;
	u32 v;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 2 * BIG, VG_LOC_VRAM);
	os_fail_alloc_after(0);
	assert_int_equal(ops->protect(sim, as, VA0 + PG, PG, VG_PROT_RO),
			 -ENOMEM);
	os_fail_alloc_after(-1);
	assert_int_equal(tables(sim), 1);
	assert_int_equal(refs(m), 3);
	/* The second split of a protect fails: the first one stays, unseen. */
	os_fail_alloc_after(1);
	assert_int_equal(ops->protect(sim, as, VA0 + PG, BIG, VG_PROT_RO),
			 -ENOMEM);
	os_fail_alloc_after(-1);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(refs(m), 1 + 512 + 1);
	assert_int_equal(ops->protect(sim, as, VA0, 2 * BIG, VG_PROT_RW), 0);
	for (off = 0; off < 2 * BIG; off += PG)
		assert_int_equal(vg_sim_read_va(sim, as, VA0 + off, &v, 4), 0);

	/* A map whose split fails changes nothing. */
	os_fail_alloc_after(0);
	assert_int_equal(ops->map(sim, as, VA0 + BIG + PG, PG, m, 0), -ENOMEM);
	os_fail_alloc_after(-1);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(refs(m), 1 + 512 + 1);

	os_fail_alloc_after(0);
	ops->unmap(sim, as, VA0 + BIG + PG, PG);
	os_fail_alloc_after(-1);
	assert_int_equal(tables(sim), 2);
	assert_int_equal(refs(m), 1 + 512);
	for (off = 0; off < 2 * BIG; off += PG)
		assert_int_equal(vg_sim_read_va(sim, as, VA0 + off, &v, 4),
				 off < BIG ? 0 : -EFAULT);
	ops->mem_free(sim, m);
	ops->as_destroy(sim, as);
	assert_int_equal(vg_sim_vram_free(sim), VRAM);
	vg_sim_destroy(sim);
}

/* as_destroy with big pages, split leaves and plain leaves frees it all. */
static void test_big_as_destroy(void **state)
{
	struct vg_sim *sim = t_sim(VRAM, 64ull << 20);
	struct vg_mem *m, *h;
	struct vg_as *as;

	(void)state;
	assert_int_equal(ops->as_create(sim, &as), 0);
	m = t_map_new(sim, as, VA0, 4 * BIG, VG_LOC_VRAM);
	h = t_map_new(sim, as, VA0 + (1ull << 30) - BIG, 2 * BIG, VG_LOC_HOST);
	ops->unmap(sim, as, VA0 + 3 * PG, PG);
	assert_int_equal(ops->map(sim, as, VA1 + 5 * PG, BIG, m, 0), 0);
	assert_int_equal(tables(sim), 2 + 1 + 3);
	ops->mem_free(sim, m);
	ops->mem_free(sim, h);
	assert_int_equal(vg_sim_vram_free(sim), VRAM - 4 * BIG);
	ops->as_destroy(sim, as);
	assert_int_equal(tables(sim), 0);
	assert_int_equal(vg_sim_vram_free(sim), VRAM);
	vg_sim_destroy(sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_only_when_eligible),
		cmocka_unit_test(test_big_reads_writes),
		cmocka_unit_test(test_big_split),
		cmocka_unit_test(test_big_partial_ends),
		cmocka_unit_test(test_big_relocate),
		cmocka_unit_test(test_big_ro),
		cmocka_unit_test(test_big_split_no_memory),
		cmocka_unit_test(test_big_as_destroy),
	};

	ops = vg_sim_gpu_ops();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
