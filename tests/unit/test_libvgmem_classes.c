// SPDX-License-Identifier: MIT
/*
 * The guest ABI speaks NVIDIA's encoding: class ids as libdrm names them,
 * method headers as nouveau's NVC0_FIFO_PKHDR_* build them (the expected
 * words are written out by hand from that encoding), GPFIFO entries as the
 * hardware reads them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <libdrm/nouveau/nvif/class.h>	/* -I/usr/include/libdrm not needed */
#include <libvgmem.h>
#include "host-module/sim/sim.h"

static void test_class_ids(void **state)
{
	(void)state;
	assert_int_equal(VGMEM_CLASS_CHANNEL, MAXWELL_CHANNEL_GPFIFO_A);
	assert_int_equal(VGMEM_CLASS_COPY, MAXWELL_DMA_COPY_A);
	assert_int_equal(VGMEM_CLASS_COMPUTE, MAXWELL_COMPUTE_A);
}

/*
 * NVC0_FIFO_PKHDR_SQ = 0x20000000, _NI = 0x60000000, _IL = 0x80000000,
 * _1I = 0xa0000000, | count << 16 | subc << 13 | mthd >> 2.
 */
static void test_pkhdr_encoding(void **state)
{
	(void)state;
	/* SQ (incrementing): compute KERNEL + 8 args on subchannel 1. */
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, 0x3000, 9), 0x20092c00u);
	/* SET_OBJECT on subchannel 4. */
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_INC, 4, 0x0000, 1), 0x20018000u);
	/* NI (non-incrementing): LAUNCH_DMA on subchannel 4. */
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_NONINC, 4, 0x0300, 1), 0x600180c0u);
	/* IL (immediate): LAUNCH with data 0 and with the largest data. */
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_IMMD, 1, 0x3040, 0), 0x80002c10u);
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_IMMD, 0, 0x0008, 0x1fff), 0x9fff0002u);
	/* 1I (increment once): copy offsets on subchannel 4. */
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_INC_ONCE, 4, 0x0400, 8), 0xa0088100u);
	/* Every field at its maximum. */
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_INC, 7, 0x3ffc, 0x1fff), 0x3fffefffu);
	/* Out-of-range fields are truncated, never spill into neighbours. */
	assert_int_equal(VGMEM_PKHDR(VGMEM_PKHDR_INC, 8, 0x4000, 0x2000), 0x20000000u);
}

static void test_pkhdr_decoding(void **state)
{
	uint32_t h = 0xa0088100u;

	(void)state;
	assert_int_equal(VGMEM_PKHDR_GET_TYPE(h), VGMEM_PKHDR_INC_ONCE);
	assert_int_equal(VGMEM_PKHDR_GET_COUNT(h), 8);
	assert_int_equal(VGMEM_PKHDR_GET_SUBC(h), 4);
	assert_int_equal(VGMEM_PKHDR_GET_MTHD(h), 0x0400);
	h = 0x3fffefffu;
	assert_int_equal(VGMEM_PKHDR_GET_TYPE(h), VGMEM_PKHDR_INC);
	assert_int_equal(VGMEM_PKHDR_GET_COUNT(h), 0x1fff);
	assert_int_equal(VGMEM_PKHDR_GET_SUBC(h), 7);
	assert_int_equal(VGMEM_PKHDR_GET_MTHD(h), 0x3ffc);
}

/*
 * GPFIFO entry: dword0 = address bits 31:2, dword1 = address bits 39:32 in
 * 7:0 and the length in dwords in 30:10.
 */
static void test_gp_entry(void **state)
{
	uint64_t e;

	(void)state;
	e = VGMEM_GP_ENTRY(0x1234567890ull, 5);
	assert_true(e == 0x0000141234567890ull);
	assert_true(VGMEM_GP_ENTRY_ADDR(e) == 0x1234567890ull);
	assert_int_equal(VGMEM_GP_ENTRY_NDW(e), 5);
	assert_true(VGMEM_GP_ENTRY_RSVD(e) == 0);

	e = VGMEM_GP_ENTRY(0xfffffffffcull, 0x1fffff);
	assert_true(e == 0x7ffffcfffffffffcull);
	assert_int_equal(VGMEM_GP_ENTRY_NDW(e), 0x1fffff);
	assert_true(VGMEM_GP_ENTRY_RSVD(e) == 0);

	/* Low address bits, the subroutine bits and bit 63 are reserved. */
	assert_true(VGMEM_GP_ENTRY_RSVD(0x1ull) != 0);
	assert_true(VGMEM_GP_ENTRY_RSVD(1ull << 41) != 0);
	assert_true(VGMEM_GP_ENTRY_RSVD(1ull << 63) != 0);
}

static void test_pattern_checksum(void **state)
{
	uint8_t buf[37];
	uint32_t w;
	unsigned int i;

	(void)state;
	/* FNV-1a of "a" is a published test vector. */
	assert_true(vgmem_fnv1a(VGMEM_FNV_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);
	assert_true(VGMEM_FNV_INIT == VGMEM_FNV1A_OFFSET);
	/* The CPU checksum equals FNV-1a over the pattern laid out in memory. */
	for (i = 0; i < sizeof(buf); i++) {
		w = vgmem_pattern_word(77, i / 4);
		buf[i] = (uint8_t)(w >> (8 * (i % 4)));
	}
	for (i = 0; i <= sizeof(buf); i++)
		assert_true(vgmem_pattern_checksum(i, 77) ==
			    vgmem_fnv1a(VGMEM_FNV_INIT, buf, i));
	/*
	 * The software GPU computes FILL_PATTERN with vgmem_pattern_word
	 * itself (sim/compute.c); pin a few words so a change of the formula,
	 * an ABI break, fails here.
	 */
	assert_int_equal(vgmem_pattern_word(0, 1), 0x34c2cb2c);
	assert_int_equal(vgmem_pattern_word(7, 1ull << 30), 0x1e06b304);
	assert_int_equal(vgmem_pattern_word(0xdeadbeef, 12345), 0x5e6a3e99);
	/* Seeds and positions matter. */
	assert_true(vgmem_pattern_checksum(4096, 1) != vgmem_pattern_checksum(4096, 2));
	assert_true(vgmem_pattern_word(1, 0) != vgmem_pattern_word(1, 1));
	assert_true(vgmem_pattern_word(1, 0) != vgmem_pattern_word(1, 1ull << 32));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_ids),
		cmocka_unit_test(test_pkhdr_encoding),
		cmocka_unit_test(test_pkhdr_decoding),
		cmocka_unit_test(test_gp_entry),
		cmocka_unit_test(test_pattern_checksum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
