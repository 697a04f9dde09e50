// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The statistics schema (include/uapi/vgmem_stats.h) generates ABI: the
 * netlink attribute numbers of the GPU, VM and file-cache stats nests and
 * the layout of struct vgmem_vm_stats (the guest's STATS command). This
 * test pins every number and offset as they were when the tables were
 * written, so that moving, removing or inserting a line (instead of
 * appending one) fails here; and checks the tables themselves: unique
 * names, a help sentence for each line, a kind that is one of the three.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <uapi/vgmem_netlink.h>

static const struct {
	const char *name;
	long value, want;
} attrs[] = {
	{ "VGMEM_GS_UNSPEC", VGMEM_GS_UNSPEC, 0 },
	{ "VGMEM_GS_PAD", VGMEM_GS_PAD, 1 },
	{ "VGMEM_GS_RELOC_OUT_CHUNKS", VGMEM_GS_RELOC_OUT_CHUNKS, 2 },
	{ "VGMEM_GS_RELOC_IN_CHUNKS", VGMEM_GS_RELOC_IN_CHUNKS, 3 },
	{ "VGMEM_GS_BYTES_OUT", VGMEM_GS_BYTES_OUT, 4 },
	{ "VGMEM_GS_BYTES_IN", VGMEM_GS_BYTES_IN, 5 },
	{ "VGMEM_GS_RELOCATIONS", VGMEM_GS_RELOCATIONS, 6 },
	{ "VGMEM_GS_RELOC_FAILURES", VGMEM_GS_RELOC_FAILURES, 7 },
	{ "VGMEM_GS_COPY_DEVICE_NS", VGMEM_GS_COPY_DEVICE_NS, 8 },
	{ "VGMEM_GS_FAULTS", VGMEM_GS_FAULTS, 9 },
	{ "VGMEM_GS_SUSPEND_HIST", VGMEM_GS_SUSPEND_HIST, 10 },
	{ "VGMEM_GS_STALL_HIST", VGMEM_GS_STALL_HIST, 11 },
	{ "__VGMEM_GS_MAX", __VGMEM_GS_MAX, 12 },
	{ "VGMEM_VS_UNSPEC", VGMEM_VS_UNSPEC, 0 },
	{ "VGMEM_VS_PAD", VGMEM_VS_PAD, 1 },
	{ "VGMEM_VS_ALLOCATED", VGMEM_VS_ALLOCATED, 2 },
	{ "VGMEM_VS_RESIDENT", VGMEM_VS_RESIDENT, 3 },
	{ "VGMEM_VS_RELOCATED", VGMEM_VS_RELOCATED, 4 },
	{ "VGMEM_VS_RELOC_OUT_CHUNKS", VGMEM_VS_RELOC_OUT_CHUNKS, 5 },
	{ "VGMEM_VS_RELOC_IN_CHUNKS", VGMEM_VS_RELOC_IN_CHUNKS, 6 },
	{ "VGMEM_VS_BYTES_OUT", VGMEM_VS_BYTES_OUT, 7 },
	{ "VGMEM_VS_BYTES_IN", VGMEM_VS_BYTES_IN, 8 },
	{ "VGMEM_VS_SUSPEND_LAST_NS", VGMEM_VS_SUSPEND_LAST_NS, 9 },
	{ "VGMEM_VS_SUSPEND_MAX_NS", VGMEM_VS_SUSPEND_MAX_NS, 10 },
	{ "VGMEM_VS_SUSPEND_TOTAL_NS", VGMEM_VS_SUSPEND_TOTAL_NS, 11 },
	{ "VGMEM_VS_SUSPENDS", VGMEM_VS_SUSPENDS, 12 },
	{ "VGMEM_VS_SUSPEND_HIST", VGMEM_VS_SUSPEND_HIST, 13 },
	{ "VGMEM_VS_STALL_HIST", VGMEM_VS_STALL_HIST, 14 },
	{ "VGMEM_VS_STALL_TOTAL_NS", VGMEM_VS_STALL_TOTAL_NS, 15 },
	{ "VGMEM_VS_FAULTS", VGMEM_VS_FAULTS, 16 },
	{ "__VGMEM_VS_MAX", __VGMEM_VS_MAX, 17 },
	{ "VGMEM_LS_UNSPEC", VGMEM_LS_UNSPEC, 0 },
	{ "VGMEM_LS_PAD", VGMEM_LS_PAD, 1 },
	{ "VGMEM_LS_FAULTS_MINOR", VGMEM_LS_FAULTS_MINOR, 2 },
	{ "VGMEM_LS_FAULTS_MAJOR", VGMEM_LS_FAULTS_MAJOR, 3 },
	{ "VGMEM_LS_FAULTS_WRITE", VGMEM_LS_FAULTS_WRITE, 4 },
	{ "VGMEM_LS_MERGES", VGMEM_LS_MERGES, 5 },
	{ "VGMEM_LS_MERGE_BYTES", VGMEM_LS_MERGE_BYTES, 6 },
	{ "VGMEM_LS_FETCH_STORAGE", VGMEM_LS_FETCH_STORAGE, 7 },
	{ "VGMEM_LS_STORE_READS", VGMEM_LS_STORE_READS, 8 },
	{ "VGMEM_LS_FETCH_HOST", VGMEM_LS_FETCH_HOST, 9 },
	{ "VGMEM_LS_FETCH_PEER", VGMEM_LS_FETCH_PEER, 10 },
	{ "VGMEM_LS_FETCH_GPU", VGMEM_LS_FETCH_GPU, 11 },
	{ "VGMEM_LS_READAHEAD_PAGES", VGMEM_LS_READAHEAD_PAGES, 12 },
	{ "VGMEM_LS_EVICTIONS", VGMEM_LS_EVICTIONS, 13 },
	{ "VGMEM_LS_WRITEBACK_BYTES", VGMEM_LS_WRITEBACK_BYTES, 14 },
	{ "VGMEM_LS_WRITEBACK_BLOCKS", VGMEM_LS_WRITEBACK_BLOCKS, 15 },
	{ "VGMEM_LS_BASE_COPIES", VGMEM_LS_BASE_COPIES, 16 },
	{ "VGMEM_LS_SHARED_MAPS", VGMEM_LS_SHARED_MAPS, 17 },
	{ "VGMEM_LS_REPLICAS_SHARED", VGMEM_LS_REPLICAS_SHARED, 18 },
	{ "VGMEM_LS_REPLICAS_PRIVATE", VGMEM_LS_REPLICAS_PRIVATE, 19 },
	{ "VGMEM_LS_VRAM_USED", VGMEM_LS_VRAM_USED, 20 },
	{ "VGMEM_LS_HOST_READS_PEER", VGMEM_LS_HOST_READS_PEER, 21 },
	{ "VGMEM_LS_HOST_CHANGES", VGMEM_LS_HOST_CHANGES, 22 },
	{ "VGMEM_LS_ACQUIRES", VGMEM_LS_ACQUIRES, 23 },
	{ "VGMEM_LS_RELEASES", VGMEM_LS_RELEASES, 24 },
	{ "VGMEM_LS_RELEASED_PAGES", VGMEM_LS_RELEASED_PAGES, 25 },
	{ "VGMEM_LS_INVALIDATIONS", VGMEM_LS_INVALIDATIONS, 26 },
	{ "VGMEM_LS_CUCKOO_HITS", VGMEM_LS_CUCKOO_HITS, 27 },
	{ "VGMEM_LS_CUCKOO_MISSES", VGMEM_LS_CUCKOO_MISSES, 28 },
	{ "VGMEM_LS_FILES", VGMEM_LS_FILES, 29 },
	{ "VGMEM_LS_PAGES", VGMEM_LS_PAGES, 30 },
	{ "VGMEM_LS_BYTES_PER_PAGE", VGMEM_LS_BYTES_PER_PAGE, 31 },
	{ "VGMEM_LS_HOST_COMPARES", VGMEM_LS_HOST_COMPARES, 32 },
	{ "VGMEM_LS_HOST_USED", VGMEM_LS_HOST_USED, 33 },
	{ "VGMEM_LS_HOST_EVICTIONS", VGMEM_LS_HOST_EVICTIONS, 34 },
	{ "VGMEM_LS_HOST_EVICT_WRITEBACKS", VGMEM_LS_HOST_EVICT_WRITEBACKS, 35 },
	{ "VGMEM_LS_REPLICAS_HOST", VGMEM_LS_REPLICAS_HOST, 36 },
	{ "VGMEM_LS_REPLICAS_HOST_USED", VGMEM_LS_REPLICAS_HOST_USED, 37 },
	{ "VGMEM_LS_PROMOTIONS", VGMEM_LS_PROMOTIONS, 38 },
	{ "VGMEM_LS_META_BYTES", VGMEM_LS_META_BYTES, 39 },
	{ "__VGMEM_LS_MAX", __VGMEM_LS_MAX, 40 },
	{ "VGMEM_HIST_A_UNSPEC", VGMEM_HIST_A_UNSPEC, 0 },
	{ "VGMEM_HIST_A_PAD", VGMEM_HIST_A_PAD, 1 },
	{ "VGMEM_HIST_A_BUCKET0", VGMEM_HIST_A_BUCKET0, 2 },
	{ "__VGMEM_HIST_A_MAX", __VGMEM_HIST_A_MAX, 26 },
};

#define OFF(f)	offsetof(struct vgmem_vm_stats, f)
#define SIZE(f)	sizeof(((struct vgmem_vm_stats *)0)->f)
static const struct {
	const char *name;
	size_t off, size, want_off, want_size;
} layout[] = {
	{ "quota", OFF(quota), SIZE(quota), 0, 8 },
	{ "entitlement", OFF(entitlement), SIZE(entitlement), 8, 8 },
	{ "allocated", OFF(allocated), SIZE(allocated), 16, 8 },
	{ "resident", OFF(resident), SIZE(resident), 24, 8 },
	{ "relocated", OFF(relocated), SIZE(relocated), 32, 8 },
	{ "reloc_out_chunks", OFF(reloc_out_chunks), SIZE(reloc_out_chunks), 40, 8 },
	{ "reloc_in_chunks", OFF(reloc_in_chunks), SIZE(reloc_in_chunks), 48, 8 },
	{ "bytes_out", OFF(bytes_out), SIZE(bytes_out), 56, 8 },
	{ "bytes_in", OFF(bytes_in), SIZE(bytes_in), 64, 8 },
	{ "suspend_last_ns", OFF(suspend_last_ns), SIZE(suspend_last_ns), 72, 8 },
	{ "suspend_max_ns", OFF(suspend_max_ns), SIZE(suspend_max_ns), 80, 8 },
	{ "suspend_total_ns", OFF(suspend_total_ns), SIZE(suspend_total_ns), 88, 8 },
	{ "suspends", OFF(suspends), SIZE(suspends), 96, 8 },
	{ "suspend_hist", OFF(suspend_hist), SIZE(suspend_hist), 104, 192 },
	{ "stall_hist", OFF(stall_hist), SIZE(stall_hist), 296, 192 },
	{ "stall_total_ns", OFF(stall_total_ns), SIZE(stall_total_ns), 488, 8 },
	{ "faults", OFF(faults), SIZE(faults), 496, 8 },
};

static void test_abi_numbers(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].value != attrs[i].want)
			fail_msg("%s is %ld, the ABI says %ld", attrs[i].name,
				 attrs[i].value, attrs[i].want);
	for (i = 0; i < sizeof(layout) / sizeof(layout[0]); i++)
		if (layout[i].off != layout[i].want_off ||
		    layout[i].size != layout[i].want_size)
			fail_msg("vgmem_vm_stats.%s at %zu (%zu bytes), the ABI says %zu (%zu)",
				 layout[i].name, layout[i].off, layout[i].size,
				 layout[i].want_off, layout[i].want_size);
	assert_int_equal(sizeof(struct vgmem_vm_stats), 504);
	assert_int_equal(VGMEM_HIST_BUCKETS, 24);
}

struct line {
	const char *field;
	const char *attr;
	int kind;
	const char *help;
};

#define LINE(f, a, k, h)	{ #f, #a, k, h },
static const struct line gpu[] = { VGMEM_GPU_STATS(LINE) };
static const struct line vm[] = { VGMEM_VM_STATS(LINE) };
static const struct line lrc[] = { VGMEM_LRC_STATS(LINE) };
#undef LINE

static void check_table(const char *what, const struct line *t, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		size_t len = strlen(t[i].help);

		if (t[i].kind != VGMEM_STAT_COUNTER &&
		    t[i].kind != VGMEM_STAT_GAUGE && t[i].kind != VGMEM_STAT_HIST)
			fail_msg("%s.%s: kind %d", what, t[i].field, t[i].kind);
		if (len < 8 || t[i].help[len - 1] != '.')
			fail_msg("%s.%s: help '%s' is not a sentence", what,
				 t[i].field, t[i].help);
		for (j = 0; j < i; j++)
			if (!strcmp(t[i].field, t[j].field) ||
			    !strcmp(t[i].attr, t[j].attr))
				fail_msg("%s: line %zu repeats line %zu (%s)",
					 what, i, j, t[i].field);
	}
}

static void test_tables(void **state)
{
	(void)state;
	check_table("gpu", gpu, sizeof(gpu) / sizeof(gpu[0]));
	check_table("vm", vm, sizeof(vm) / sizeof(vm[0]));
	check_table("lrc", lrc, sizeof(lrc) / sizeof(lrc[0]));
	/* one attribute per line, after UNSPEC and PAD */
	assert_int_equal(sizeof(gpu) / sizeof(gpu[0]), VGMEM_GS_MAX - VGMEM_GS_PAD);
	assert_int_equal(sizeof(vm) / sizeof(vm[0]), VGMEM_VS_MAX - VGMEM_VS_PAD);
	assert_int_equal(sizeof(lrc) / sizeof(lrc[0]), VGMEM_LS_MAX - VGMEM_LS_PAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_numbers),
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
