// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Hostile control commands (design decision 7): every bad field gets the
 * documented -errno (core/ctrl.c's table: -EINVAL for malformed commands,
 * -ENOENT for unknown objects, -ENOSPC over quota) and changes nothing.
 * And a relocation that runs out of host RAM half way fails with -ENOMEM,
 * leaving every chunk where it was and every byte intact.
 */
#include <stdlib.h>
#include "itest.h"

#define GUEST_RAM	(16 * MiB)

struct snap {
	struct vgmem_vm_stats vm;
	struct vg_gpu_stats gpu;
};

static void take(struct vg_host *h, struct vgmem_dev *dev, struct snap *s)
{
	assert_int_equal(vgmem_stats(dev, &s->vm), 0);
	it_gpu_stats(h, &s->gpu);
}

static void same(const struct snap *a, const struct snap *b)
{
	assert_true(a->vm.allocated == b->vm.allocated);
	assert_true(a->vm.resident == b->vm.resident);
	assert_true(a->vm.relocated == b->vm.relocated);
	assert_true(a->vm.reloc_out_chunks == b->vm.reloc_out_chunks);
	assert_true(a->gpu.vram_used == b->gpu.vram_used);
	assert_true(a->gpu.host_used == b->gpu.host_used);
	assert_true(a->gpu.relocations == b->gpu.relocations);
}

static int bad(struct vgmem_dev *dev, const struct vgmem_ctrl *in)
{
	struct vgmem_ctrl cmd = *in;

	return vgmem_ctrl(dev, &cmd);
}

static void test_bad_ctrl(void **state)
{
	struct vg_host *h = it_host(64 * MiB, 2 * MiB, false, 0);
	struct vg_host_guest *g = it_guest(h, "hostile");
	struct vgmem_dev *dev = vg_host_guest_dev(g);
	struct vgmem_chan *ch;
	struct vgmem_ctrl c;
	struct snap before, after;
	uint64_t va, fixed = VGMEM_VA_START + 64 * MiB;
	uint32_t id;

	(void)state;
	assert_int_equal(vgmem_chan_create(dev, 16, 0, 0, &ch), 0);
	id = vgmem_chan_id(ch);
	assert_int_equal(vgmem_bo_alloc(dev, 4 * MiB, &va), 0);
	assert_int_equal(vgmem_bo_alloc_at(dev, 4 * MiB, fixed), 0);
	take(h, dev, &before);

	/* Unknown ops. */
	memset(&c, 0, sizeof(c));
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.op = VGMEM_CTRL_OP_MAX;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.op = 0xffffffffu;
	assert_int_equal(bad(dev, &c), -EINVAL);

	/* Bytes past the op's structure must be zero. */
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_QUERY;
	c.raw[sizeof(struct vgmem_ctrl_query)] = 1;
	assert_int_equal(bad(dev, &c), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_BO_ALLOC;
	c.bo.size = 4096;
	c.raw[sizeof(c.raw) - 1] = 0x80;
	assert_int_equal(bad(dev, &c), -EINVAL);

	/* BO_ALLOC: sizes, flags, reserved, VA rules. */
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_BO_ALLOC;
	c.bo.size = 0;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.size = 4095;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.size = 4097;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.size = VGMEM_VA_END;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.size = ~0ull & ~4095ull;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.size = 4096;
	c.bo.flags = 2;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.flags = 0;
	c.bo.rsvd = 1;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.rsvd = 0;
	c.bo.va = VGMEM_VA_START;	/* a VA without FIXED_VA */
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.flags = VGMEM_BO_FIXED_VA;
	c.bo.va = VGMEM_VA_START + 100;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = VGMEM_VA_START - 4096;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = 0;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = VGMEM_VA_END - 4096;
	c.bo.size = 8192;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = ~0ull & ~4095ull;
	c.bo.size = 8192;
	assert_int_equal(bad(dev, &c), -EINVAL);
	/* Overlapping a BO: same start, inside, straddling either end. */
	c.bo.va = fixed;
	c.bo.size = 4096;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = fixed + MiB;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = fixed - 4096;
	c.bo.size = 8192;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = fixed + 4 * MiB - 4096;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.va = va;
	c.bo.size = 64 * MiB;
	assert_int_equal(bad(dev, &c), -EINVAL);

	/* BO_FREE: unknown VA, a VA inside a BO, stray fields. */
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_BO_FREE;
	c.bo.va = fixed + 4096;
	assert_int_equal(bad(dev, &c), -ENOENT);
	c.bo.va = 0x7000000000ull;
	assert_int_equal(bad(dev, &c), -ENOENT);
	c.bo.va = fixed;
	c.bo.size = 4096;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.size = 0;
	c.bo.flags = 1;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.bo.flags = 0;
	c.bo.rsvd = 1;
	assert_int_equal(bad(dev, &c), -EINVAL);

	/* CHAN_CREATE: ring sizes and placement. */
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_CHAN_CREATE;
	c.chan.gpfifo_gpa = 64 * 4096;
	c.chan.gpfifo_entries = 0;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_entries = 2;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_entries = 24;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_entries = VGMEM_GP_ENTRIES_MAX * 2;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_entries = 16;
	c.chan.gpfifo_gpa = 64 * 4096 + 4;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_gpa = GUEST_RAM;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_gpa = GUEST_RAM - 64;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_gpa = ~0ull & ~7ull;
	assert_int_equal(bad(dev, &c), -EINVAL);
	c.chan.gpfifo_gpa = 64 * 4096;
	c.raw[sizeof(struct vgmem_ctrl_chan)] = 1;
	assert_int_equal(bad(dev, &c), -EINVAL);

	/* CHAN_DESTROY: unknown ids, stray fields. */
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_CHAN_DESTROY;
	c.chan.chan_id = id + 1000;
	assert_int_equal(bad(dev, &c), -ENOENT);
	c.chan.chan_id = VGMEM_MAX_CHANNELS;	/* never handed out */
	assert_int_equal(bad(dev, &c), -ENOENT);
	c.chan.chan_id = id;
	c.chan.gpfifo_entries = 16;
	assert_int_equal(bad(dev, &c), -EINVAL);

	take(h, dev, &after);
	same(&before, &after);
	/* The channel that was named survived all of it. */
	assert_int_equal(vgmem_memset(ch, va, 4 * MiB, 5), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
	vg_host_destroy(h);
}

static void test_quota(void **state)
{
	struct vg_host *h = it_host(64 * MiB, 2 * MiB, false, 0);
	struct vg_host_guest *g = NULL;
	struct vgmem_dev *dev;
	struct snap before, after;
	uint64_t va;

	(void)state;
	assert_int_equal(vg_host_guest_create(h, "small", 8 * MiB, GUEST_RAM, &g), 0);
	dev = vg_host_guest_dev(g);
	assert_int_equal(vgmem_bo_alloc(dev, 6 * MiB, &va), 0);
	take(h, dev, &before);
	assert_int_equal(vgmem_bo_alloc(dev, 4 * MiB, &va), -ENOSPC);
	assert_int_equal(vgmem_bo_alloc(dev, 12 * MiB, &va), -ENOSPC);
	take(h, dev, &after);
	same(&before, &after);
	assert_int_equal(vgmem_bo_alloc(dev, 2 * MiB, &va), 0);
	assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
	vg_host_destroy(h);
}

#define A_BOS	10
#define A_BO	(4 * MiB)

/*
 * Host RAM runs out in the middle of a relocation batch: the allocation
 * that needed the room fails with -ENOMEM, the victim's chunks all stay
 * where they were, every byte checks out, and a retry works.
 */
static void test_host_ram_exhausted(void **state)
{
	struct vg_host *h = it_host(64 * MiB, 2 * MiB, false, 0);
	struct vg_host_guest *ga = it_guest(h, "victim"), *gb = it_guest(h, "bystander");
	struct vg_host_guest *gc = it_guest(h, "grower");
	struct vgmem_dev *da = vg_host_guest_dev(ga), *db = vg_host_guest_dev(gb);
	struct vgmem_dev *dc = vg_host_guest_dev(gc);
	struct vgmem_chan *cha, *chb;
	enum vg_loc locs0[A_BOS][2], locs1[2];
	struct snap sa0, sa1, sc0, sc1;
	uint64_t ava[A_BOS], bva, asc, bsc, cva;
	uint32_t i, n, j;
	int nth;

	(void)state;
	assert_int_equal(vgmem_chan_create(da, 16, 0, 0, &cha), 0);
	assert_int_equal(vgmem_chan_create(db, 16, 0, 0, &chb), 0);
	assert_int_equal(vgmem_bo_alloc(da, 4096, &asc), 0);
	assert_int_equal(vgmem_bo_alloc(db, 4096, &bsc), 0);
	for (i = 0; i < A_BOS; i++) {
		assert_int_equal(vgmem_bo_alloc(da, A_BO, &ava[i]), 0);
		assert_int_equal(vgmem_fill_pattern(cha, ava[i], A_BO, 100 + i), 0);
	}
	assert_int_equal(vgmem_bo_alloc(db, 16 * MiB, &bva), 0);
	assert_int_equal(vgmem_fill_pattern(chb, bva, 16 * MiB, 7), 0);

	for (nth = 1; nth <= 3; nth++) {
		for (i = 0; i < A_BOS; i++) {
			assert_int_equal(vg_bo_query(vg_host_guest_vm(ga), ava[i],
						     locs0[i], 2, &n), 0);
			assert_int_equal(n, 2);
		}
		take(h, da, &sa0);
		take(h, dc, &sc0);
		vg_sim_inject(vg_host_sim(h), VG_SIM_INJ_HOST_ALLOC, nth);
		/* 24 MiB on a GPU with 6 MiB free: the victim must give 18. */
		assert_int_equal(vgmem_bo_alloc(dc, 24 * MiB, &cva), -ENOMEM);
		vg_sim_inject(vg_host_sim(h), VG_SIM_INJ_HOST_ALLOC, -1);
		take(h, da, &sa1);
		take(h, dc, &sc1);
		same(&sa0, &sa1);
		same(&sc0, &sc1);
		assert_int_equal(sc1.vm.allocated, 0);
		for (i = 0; i < A_BOS; i++) {
			assert_int_equal(vg_bo_query(vg_host_guest_vm(ga), ava[i],
						     locs1, 2, &n), 0);
			for (j = 0; j < 2; j++)
				assert_int_equal(locs1[j], locs0[i][j]);
		}
		assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
		for (i = 0; i < A_BOS; i++)
			assert_int_equal(it_verify(cha, ava[i], A_BO, 100 + i, asc), 0);
		assert_int_equal(it_verify(chb, bva, 16 * MiB, 7, bsc), 0);
	}

	/* With host RAM back the same allocation works and moves the victim. */
	assert_int_equal(vgmem_bo_alloc(dc, 24 * MiB, &cva), 0);
	take(h, da, &sa1);
	assert_true(sa1.vm.relocated > 0);
	for (i = 0; i < A_BOS; i++)
		assert_int_equal(it_verify(cha, ava[i], A_BO, 100 + i, asc), 0);
	assert_int_equal(it_verify(chb, bva, 16 * MiB, 7, bsc), 0);
	assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
	assert_int_equal(vgmem_chan_error(cha, NULL), 0);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_ctrl),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_host_ram_exhausted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
