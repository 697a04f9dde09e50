// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A guest's bad GPU access faults that guest's channel, never the host or
 * another VM (design decision 7). Every hostile submission below runs on
 * a fresh channel of guest "evil"; after each one that channel reports the
 * expected error through USERD, while evil's second channel and the other
 * guest keep working and their data checks out.
 */
#include <stdlib.h>
#include "itest.h"

#define GUEST_RAM	(16 * MiB)
#define DATA_SIZE	(4 * MiB)

struct world {
	struct vg_host *h;
	struct vg_host_guest *evil, *good;
	struct vgmem_dev *edev, *gdev;
	struct vgmem_chan *ech_ok, *gch;
	uint64_t eva, escratch, gva, gscratch;
	uint32_t round;
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->h = it_host(64 * MiB, 2 * MiB, false, 0);
	w->evil = it_guest(w->h, "evil");
	w->good = it_guest(w->h, "good");
	w->edev = vg_host_guest_dev(w->evil);
	w->gdev = vg_host_guest_dev(w->good);
	assert_int_equal(vgmem_chan_create(w->edev, 16, 0, 0, &w->ech_ok), 0);
	assert_int_equal(vgmem_chan_create(w->gdev, 16, 0, 0, &w->gch), 0);
	assert_int_equal(vgmem_bo_alloc(w->edev, DATA_SIZE, &w->eva), 0);
	assert_int_equal(vgmem_bo_alloc(w->edev, 4096, &w->escratch), 0);
	assert_int_equal(vgmem_bo_alloc(w->gdev, DATA_SIZE, &w->gva), 0);
	assert_int_equal(vgmem_bo_alloc(w->gdev, 4096, &w->gscratch), 0);
	assert_int_equal(vgmem_fill_pattern(w->ech_ok, w->eva, DATA_SIZE, 11), 0);
	assert_int_equal(vgmem_fill_pattern(w->gch, w->gva, DATA_SIZE, 22), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	assert_int_equal(vg_gpu_check(vg_host_gpu(w->h)), 0);
	vg_host_destroy(w->h);
	free(w);
	return 0;
}

/* Everyone but the faulted channel still works, and old data is intact. */
static void others_fine(struct world *w)
{
	uint8_t buf[512], back[512];
	unsigned int i;

	w->round++;
	assert_int_equal(vgmem_chan_error(w->ech_ok, NULL), 0);
	assert_int_equal(vgmem_chan_error(w->gch, NULL), 0);
	assert_int_equal(it_verify(w->ech_ok, w->eva, DATA_SIZE, 11, w->escratch), 0);
	assert_int_equal(it_verify(w->gch, w->gva, DATA_SIZE, 22, w->gscratch), 0);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * w->round);
	assert_int_equal(vgmem_write(w->gch, w->gscratch + 1024, buf, sizeof(buf)), 0);
	assert_int_equal(vgmem_read(w->gch, w->gscratch + 1024, back, sizeof(back)), 0);
	assert_memory_equal(buf, back, sizeof(buf));
	assert_int_equal(vgmem_memset(w->ech_ok, w->escratch, 4096, w->round), 0);
}

/* Submit what is open on a fresh channel, wait for the fault, return it. */
static uint32_t expect_fault(struct world *w, struct vgmem_chan *ch, uint64_t *addr)
{
	uint64_t seq;
	int ret;
	uint32_t err;

	ret = vgmem_submit(ch, &seq);
	if (!ret)
		ret = vgmem_wait(ch, seq, 20ull * 1000000000ull);
	assert_int_equal(ret, -EIO);
	err = vgmem_chan_error(ch, addr);
	assert_int_not_equal(err, 0);
	/* Sticky: the library refuses further work on it. */
	assert_int_equal(vgmem_memset(ch, w->eva, 4096, 0), -EIO);
	return err;
}

static struct vgmem_chan *fresh(struct world *w)
{
	struct vgmem_chan *ch = NULL;

	assert_int_equal(vgmem_chan_create(w->edev, 16, 0, 0, &ch), 0);
	return ch;
}

static void launch_args(struct vgmem_chan *ch, enum vgmem_kernel k,
			const uint32_t a[VGMEM_CP_NARGS])
{
	uint32_t v[1 + VGMEM_CP_NARGS];

	v[0] = k;
	memcpy(v + 1, a, sizeof(uint32_t) * VGMEM_CP_NARGS);
	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, v, 1 + VGMEM_CP_NARGS);
	vgmem_pb_immd(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
}

static void test_wild_va(void **state)
{
	struct world *w = *state;
	struct vgmem_chan *ch = fresh(w);
	const uint64_t wild = 0xdead000000ull, other = 0x5000000000ull;
	uint32_t a[VGMEM_CP_NARGS] = { (uint32_t)wild, (uint32_t)(wild >> 32), 4096, 0, 7, 0, 0, 0 };
	struct vgmem_vm_stats st;
	uint64_t addr = 0;

	launch_args(ch, VGMEM_K_MEMSET, a);
	assert_int_equal(expect_fault(w, ch, &addr), VGMEM_CHAN_ERR_VA);
	assert_true(addr >= wild && addr < wild + 4096);
	vg_vm_get_stats(vg_host_guest_vm(w->evil), &st);
	assert_true(st.faults >= 1);
	vg_vm_get_stats(vg_host_guest_vm(w->good), &st);
	assert_int_equal(st.faults, 0);
	/* A VA mapped only in the other guest's address space. */
	vgmem_chan_destroy(ch);
	ch = fresh(w);
	assert_int_equal(vgmem_bo_alloc_at(w->gdev, 64 << 10, other), 0);
	assert_int_equal(vgmem_fill_pattern(w->gch, other, 64 << 10, 33), 0);
	launch_args(ch, VGMEM_K_MEMSET, (uint32_t[VGMEM_CP_NARGS]){
		(uint32_t)other, (uint32_t)(other >> 32), 64 << 10, 0, 0, 0, 0, 0 });
	assert_int_equal(expect_fault(w, ch, &addr), VGMEM_CHAN_ERR_VA);
	assert_true(addr == other);
	assert_int_equal(it_verify(w->gch, other, 64 << 10, 33, w->gscratch), 0);
	assert_int_equal(vgmem_bo_free(w->gdev, other), 0);
	/* A copy engine write straddling the end of a BO. */
	vgmem_chan_destroy(ch);
	ch = fresh(w);
	launch_args(ch, VGMEM_K_MEMSET, (uint32_t[VGMEM_CP_NARGS]){
		(uint32_t)(w->escratch + 2048), (uint32_t)((w->escratch + 2048) >> 32),
		4096 * 64, 0, 1, 0, 0, 0 });
	assert_int_equal(expect_fault(w, ch, NULL), VGMEM_CHAN_ERR_VA);
	vgmem_chan_destroy(ch);
	others_fine(w);
}

static void test_garbage_methods(void **state)
{
	struct world *w = *state;
	struct vgmem_chan *ch = fresh(w);
	uint32_t d = 0x1234;
	uint32_t err;

	/* An unknown compute method. */
	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, 0x2000, &d, 1);
	err = expect_fault(w, ch, NULL);
	assert_true(err == VGMEM_CHAN_ERR_METHOD || err == VGMEM_CHAN_ERR_CLASS);
	vgmem_chan_destroy(ch);

	/* A method on a subchannel with no object bound. */
	ch = fresh(w);
	vgmem_pb_inc(ch, 2, VGMEM_CE_LAUNCH_DMA, &d, 1);
	assert_int_equal(expect_fault(w, ch, NULL), VGMEM_CHAN_ERR_CLASS);
	vgmem_chan_destroy(ch);

	/* Binding a class the GPU does not have. */
	ch = fresh(w);
	d = 0xdead;
	vgmem_pb_inc(ch, 3, VGMEM_MTHD_SET_OBJECT, &d, 1);
	assert_int_equal(expect_fault(w, ch, NULL), VGMEM_CHAN_ERR_CLASS);
	vgmem_chan_destroy(ch);

	/* An unknown kernel. */
	ch = fresh(w);
	launch_args(ch, VGMEM_K_MAX + 5, (uint32_t[VGMEM_CP_NARGS]){ 0 });
	err = expect_fault(w, ch, NULL);
	assert_true(err == VGMEM_CHAN_ERR_ARG || err == VGMEM_CHAN_ERR_METHOD);
	vgmem_chan_destroy(ch);

	/* A header whose count runs past the end of its segment. */
	ch = fresh(w);
	d = VGMEM_PKHDR(VGMEM_PKHDR_INC, 0, VGMEM_MTHD_NOP, 100);
	vgmem_pb_raw(ch, &d, 1);
	err = expect_fault(w, ch, NULL);
	assert_true(err == VGMEM_CHAN_ERR_METHOD || err == VGMEM_CHAN_ERR_PUSHBUF);
	vgmem_chan_destroy(ch);
	others_fine(w);
}

/* Seeded garbage dwords: whatever they decode to, only evil's channel pays. */
static void test_random_garbage(void **state)
{
	struct world *w = *state;
	struct vgmem_chan *ch;
	uint32_t dw[64];
	uint64_t x = 12345, seq;
	unsigned int round, i;
	int ret;

	for (round = 0; round < 20; round++) {
		ch = fresh(w);
		for (i = 0; i < 64; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			dw[i] = (uint32_t)(x >> 32);
		}
		vgmem_pb_raw(ch, dw, 64);
		ret = vgmem_submit(ch, &seq);
		if (!ret)
			ret = vgmem_wait(ch, seq, 20ull * 1000000000ull);
		/* Garbage may happen to be harmless; it must never hang. */
		assert_true(ret == 0 || ret == -EIO);
		vgmem_chan_destroy(ch);
	}
	others_fine(w);
}

static void test_malformed_gp_entries(void **state)
{
	struct world *w = *state;
	struct vgmem_chan *ch;
	uint64_t seq, addr = 0;
	uint64_t good = VGMEM_GP_ENTRY(4096, 1);

	/* Reserved bits: low address bits, subroutine bit, bit 63. */
	const uint64_t bad[] = { good | 1, good | (1ull << 41), good | (1ull << 63),
			    VGMEM_GP_ENTRY(4096, 0) };
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ch = fresh(w);
		assert_int_equal(vgmem_submit_entry(ch, bad[i], &seq), 0);
		assert_int_equal(vgmem_wait(ch, seq, 20ull * 1000000000ull), -EIO);
		assert_int_equal(vgmem_chan_error(ch, NULL), VGMEM_CHAN_ERR_GPFIFO);
		vgmem_chan_destroy(ch);
	}

	/* A pushbuffer beyond the end of guest RAM. */
	ch = fresh(w);
	assert_int_equal(vgmem_submit_entry(ch, VGMEM_GP_ENTRY(GUEST_RAM + 8192, 4),
					    &seq), 0);
	assert_int_equal(vgmem_wait(ch, seq, 20ull * 1000000000ull), -EIO);
	assert_int_equal(vgmem_chan_error(ch, &addr), VGMEM_CHAN_ERR_PUSHBUF);
	vgmem_chan_destroy(ch);

	/* One that starts inside and runs past the end. */
	ch = fresh(w);
	assert_int_equal(vgmem_submit_entry(ch, VGMEM_GP_ENTRY(GUEST_RAM - 8, 64),
					    &seq), 0);
	assert_int_equal(vgmem_wait(ch, seq, 20ull * 1000000000ull), -EIO);
	assert_int_equal(vgmem_chan_error(ch, NULL), VGMEM_CHAN_ERR_PUSHBUF);
	vgmem_chan_destroy(ch);

	/* GP_PUT beyond the ring. */
	ch = fresh(w);
	vgmem_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 16 + 5);
	/*
	 * Nothing was submitted through the library, so the wait returns at
	 * once: 0, or -EIO if the engine already saw the bad GP_PUT (it may
	 * run before or after this thread does).
	 */
	ret = vgmem_wait(ch, vgmem_chan_submitted(ch), 0);
	assert_true(ret == 0 || ret == -EIO);
	for (i = 0; i < 200000 && !vgmem_chan_userd_read(ch, VGMEM_USERD_ERROR); i++)
		usleep(50);
	assert_int_equal(vgmem_chan_error(ch, NULL), VGMEM_CHAN_ERR_GPFIFO);
	vgmem_chan_destroy(ch);
	others_fine(w);
}

static void test_guest_physical_out_of_range(void **state)
{
	struct world *w = *state;
	struct vgmem_chan *ch = fresh(w);
	uint32_t v[8], flags;
	uint64_t addr = 0;

	/* Copy from a BO to guest-physical memory past the end of guest RAM. */
	v[0] = (uint32_t)(w->eva >> 32);
	v[1] = (uint32_t)w->eva;
	v[2] = 0;
	v[3] = (uint32_t)(GUEST_RAM + 4096);
	v[4] = v[5] = v[6] = 4096;
	v[7] = 1;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_OFFSET_IN_UPPER, v, 8);
	flags = VGMEM_CE_LAUNCH_SRC_PITCH | VGMEM_CE_LAUNCH_DST_PITCH |
		VGMEM_CE_LAUNCH_DST_PHYS;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_LAUNCH_DMA, &flags, 1);
	assert_int_equal(expect_fault(w, ch, &addr), VGMEM_CHAN_ERR_GUEST_MEM);
	vgmem_chan_destroy(ch);

	/* And reading from past the end into a BO. */
	ch = fresh(w);
	v[0] = 0xff;
	v[1] = 0;
	v[2] = (uint32_t)(w->eva >> 32);
	v[3] = (uint32_t)w->eva;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_OFFSET_IN_UPPER, v, 8);
	flags = VGMEM_CE_LAUNCH_SRC_PITCH | VGMEM_CE_LAUNCH_DST_PITCH |
		VGMEM_CE_LAUNCH_SRC_PHYS;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_LAUNCH_DMA, &flags, 1);
	assert_int_equal(expect_fault(w, ch, NULL), VGMEM_CHAN_ERR_GUEST_MEM);
	vgmem_chan_destroy(ch);
	/* The faulted copy wrote nothing into the BO. */
	others_fine(w);
}

/* Faults on one channel while the other guest is under relocation. */
static void test_fault_during_pressure(void **state)
{
	struct world *w = *state;
	struct vgmem_chan *ch;
	uint64_t big[3];
	unsigned int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(vgmem_bo_alloc(w->gdev, 24 * MiB, &big[i]), 0);
	ch = fresh(w);
	launch_args(ch, VGMEM_K_MEMSET, (uint32_t[VGMEM_CP_NARGS]){
		0, 0x80, 4096, 0, 1, 0, 0, 0 });
	assert_int_equal(expect_fault(w, ch, NULL), VGMEM_CHAN_ERR_VA);
	vgmem_chan_destroy(ch);
	for (i = 0; i < 3; i++)
		assert_int_equal(vgmem_bo_free(w->gdev, big[i]), 0);
	assert_true(vg_gpu_return_once(vg_host_gpu(w->h)) >= 0);
	others_fine(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wild_va, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_methods, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_gp_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_physical_out_of_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_during_pressure, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
