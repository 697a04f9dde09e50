// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The paging model (UVM oversubscription): a GPU access migrates on its
 * first touch only, and a full VRAM evicts the least recently used 2 MiB
 * chunk of any tenant (order pinned below).
 */
#include <unistd.h>
#include "model_fixture.h"
#include "host-module/sim/sim.h"

#define FILL	0x5a5a5a5au

/* One page of the chunk k of the BO at va: a write that touches it. */
static void touch(struct vgmem_chan *ch, uint64_t va, unsigned int k)
{
	assert_int_equal(vgmem_memset(ch, va + k * 2 * MiB, 4 * KiB, FILL), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
}

/* Every byte of [va, va + bytes) reads back as FILL (through the GPU's CE). */
static void expect_fill(struct vgmem_chan *ch, uint64_t va, uint64_t bytes)
{
	static uint8_t buf[64 * KiB];
	uint64_t off;
	size_t i;

	for (off = 0; off < bytes; off += sizeof(buf)) {
		assert_int_equal(vgmem_read(ch, va + off, buf, sizeof(buf)), 0);
		for (i = 0; i < sizeof(buf); i++)
			if (buf[i] != 0x5a)
				fail_msg("byte %#llx is %#x",
					 (unsigned long long)(off + i), buf[i]);
	}
}

/* The 4 KiB a touch wrote at va read back as FILL. */
static void expect_fill_block(struct vgmem_chan *ch, uint64_t va)
{
	uint8_t buf[4 * KiB];
	size_t i;

	assert_int_equal(vgmem_read(ch, va, buf, sizeof(buf)), 0);
	for (i = 0; i < sizeof(buf); i++)
		if (buf[i] != 0x5a)
			fail_msg("byte %#llx is %#x",
				 (unsigned long long)(va + i), buf[i]);
}

static void first_access_faults(const char *spec, uint64_t gran)
{
	struct vg_host *h = mf_host(spec, 16 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0);
	struct vgmem_chan *ch = mf_chan(a);
	struct vg_model_vm_stats st;
	struct vg_sim_cost c;
	uint64_t va;

	va = mf_bo(a, 4 * MiB);
	st = mf_stats(a);
	assert_int_equal(st.resident, 0);	/* unpopulated */
	assert_int_equal(st.faults, 0);
	assert_int_equal(vgmem_memset(ch, va, 4 * MiB, FILL), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	st = mf_stats(a);
	/* One fault per block, first touch: zeroed VRAM, nothing copied. */
	assert_int_equal(st.faults, 4 * MiB / gran);
	assert_int_equal(st.resident, 4 * MiB);
	assert_int_equal(st.bytes_to_vram + st.bytes_to_host, 0);
	/* The second access finds everything mapped. */
	assert_int_equal(vgmem_memset(ch, va, 4 * MiB, FILL), 0);
	expect_fill(ch, va, 4 * MiB);
	assert_int_equal(mf_stats(a).faults, 4 * MiB / gran);
	vg_host_guest_cost(a, &c);
	assert_int_equal(c.bytes_host, 0);	/* every access went to VRAM */
	vgmem_chan_destroy(ch);
	vg_host_destroy(h);
}

static void test_paging_first_access_faults_64k(void **state)
{
	(void)state;
	first_access_faults("paging:gran=64k", 64 * KiB);
}

static void test_paging_first_access_faults_2m(void **state)
{
	(void)state;
	first_access_faults("paging:gran=2m", 2 * MiB);
}

/*
 * VRAM of 4 chunks. a fills 4 chunks (c0..c3 in fault order), b touches
 * two: c0 then c1 go, a's, no matter whose they are (no fairness). a's
 * touch of c3 raises nothing (resident), so it does not count as a use:
 * its touch of c0 then evicts c2, the next touch of c1 evicts c3, and b's
 * chunks, brought in after c3's last fault, stay.
 */
static void test_paging_lru_eviction_order(void **state)
{
	struct vg_host *h = mf_host("paging:gran=2m", 8 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0), *b = mf_vm(h, "b", 0);
	struct vgmem_chan *cha = mf_chan(a), *chb = mf_chan(b);
	struct vg_model_vm_stats st;
	uint64_t va, vb, f;

	(void)state;
	assert_int_equal(vg_sim_vram_free(vg_host_sim(h)), 8 * MiB);
	va = mf_bo(a, 8 * MiB);
	vb = mf_bo(b, 4 * MiB);
	assert_int_equal(vgmem_memset(cha, va, 8 * MiB, FILL), 0);
	assert_int_equal(mf_stats(a).faults, 4);
	assert_int_equal(mf_stats(a).evictions, 0);

	touch(chb, vb, 0);		/* evicts c0 */
	st = mf_stats(a);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.bytes_to_host, 2 * MiB);
	assert_int_equal(st.resident, 6 * MiB);
	touch(chb, vb, 1);		/* evicts c1 */
	assert_int_equal(mf_stats(a).evictions, 2);
	assert_int_equal(mf_stats(a).resident, 4 * MiB);

	f = mf_stats(a).faults;
	touch(cha, va, 3);		/* resident: no fault, no use */
	assert_int_equal(mf_stats(a).faults, f);
	touch(cha, va, 2);
	assert_int_equal(mf_stats(a).faults, f);

	touch(cha, va, 0);		/* back in (copied), evicts c2 */
	st = mf_stats(a);
	assert_int_equal(st.faults, f + 1);
	assert_int_equal(st.evictions, 3);
	assert_int_equal(st.bytes_to_vram, 2 * MiB);
	assert_int_equal(mf_stats(b).evictions, 0);
	touch(cha, va, 3);		/* still resident */
	assert_int_equal(mf_stats(a).faults, f + 1);
	touch(cha, va, 2);		/* evicted above: faults, evicts c3 */
	st = mf_stats(a);
	assert_int_equal(st.faults, f + 2);
	assert_int_equal(st.evictions, 4);
	assert_int_equal(mf_stats(b).evictions, 0);
	touch(cha, va, 3);		/* now c3 is out: faults, evicts b0 */
	assert_int_equal(mf_stats(a).faults, f + 3);
	assert_int_equal(mf_stats(b).evictions, 1);
	assert_int_equal(mf_stats(b).bytes_to_host, 2 * MiB);

	/* Every byte of both, wherever it went meanwhile. */
	expect_fill(cha, va, 8 * MiB);
	assert_int_equal(vgmem_memset(chb, vb, 4 * MiB, FILL), 0);
	expect_fill(chb, vb, 4 * MiB);
	assert_int_equal(mf_gstats(h).oom_failures, 0);
	assert_true(mf_stats(a).model_ns > 0);
	vgmem_chan_destroy(cha);
	vgmem_chan_destroy(chb);
	vg_host_destroy(h);
}

/*
 * At 64 KiB, VRAM goes by block, not by BO chunk: blocks of any BO and any
 * tenant share a 2 MiB root chunk (UVM's PMM splits root chunks for any VA
 * block). Two tenants each touching one block in each of 32 chunks fill
 * exactly the two root chunks of a 4 MiB GPU, with no eviction; the next
 * block evicts the least recently used root chunk, which holds blocks of
 * both tenants, so both lose 1 MiB.
 */
static void test_paging_64k_blocks_share_root_chunks(void **state)
{
	struct vg_host *h = mf_host("paging:gran=64k", 4 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0), *b = mf_vm(h, "b", 0);
	struct vgmem_chan *cha = mf_chan(a), *chb = mf_chan(b);
	struct vg_model_vm_stats sa, sb;
	uint64_t va, vb;
	unsigned int k;

	(void)state;
	assert_int_equal(vg_sim_vram_free(vg_host_sim(h)), 4 * MiB);
	va = mf_bo(a, 64 * MiB);
	vb = mf_bo(b, 64 * MiB);
	for (k = 0; k < 32; k++) {
		touch(cha, va, k);
		touch(chb, vb, k);
	}
	sa = mf_stats(a);
	sb = mf_stats(b);
	assert_int_equal(sa.resident, 32 * 64 * KiB);
	assert_int_equal(sb.resident, 32 * 64 * KiB);
	assert_int_equal(sa.evictions + sb.evictions, 0);
	assert_int_equal(mf_gstats(h).vram_used, 4 * MiB);

	/* Block 1 of a's chunk 0: the first root chunk (k < 16) goes. */
	assert_int_equal(vgmem_memset(cha, va + 64 * KiB, 4 * KiB, FILL), 0);
	sa = mf_stats(a);
	sb = mf_stats(b);
	assert_int_equal(sa.evictions, 1);
	assert_int_equal(sb.evictions, 1);
	assert_int_equal(sa.bytes_to_host, 16 * 64 * KiB);
	assert_int_equal(sb.bytes_to_host, 16 * 64 * KiB);
	assert_int_equal(sa.resident, 17 * 64 * KiB);
	assert_int_equal(sb.resident, 16 * 64 * KiB);
	/* b's evicted blocks fault back in with their data. */
	for (k = 0; k < 32; k += 5)
		expect_fill_block(chb, vb + k * 2 * MiB);
	assert_int_equal(mf_gstats(h).oom_failures, 0);
	vgmem_chan_destroy(cha);
	vgmem_chan_destroy(chb);
	vg_host_destroy(h);
}

/* A BO freed with chunks in and out leaves nothing behind. */
static void test_paging_free_releases_everything(void **state)
{
	struct vg_host *h = mf_host("paging:gran=64k", 4 * MiB);
	struct vg_host_guest *a = mf_vm(h, "a", 0);
	struct vgmem_chan *ch = mf_chan(a);
	uint64_t va;

	(void)state;
	va = mf_bo(a, 6 * MiB);		/* more than VRAM: allocation succeeds */
	assert_int_equal(vgmem_memset(ch, va, 6 * MiB, FILL), 0);
	assert_int_equal(mf_stats(a).resident, 4 * MiB);
	expect_fill(ch, va, 6 * MiB);
	assert_int_equal(vgmem_bo_free(vg_host_guest_dev(a), va), 0);
	assert_int_equal(mf_stats(a).resident, 0);
	assert_int_equal(mf_gstats(h).vram_used, 0);
	/* An access to the freed range is a plain VA error again. */
	assert_int_not_equal(vgmem_memset(ch, va, 4 * KiB, FILL), 0);
	vgmem_chan_destroy(ch);
	vg_host_destroy(h);
}

/*
 * Faults racing the end of what they fault on: a BO freed, and a whole VM
 * destroyed, while its channel's faults are queued or being serviced and
 * another tenant's faults evict its chunks. Whatever the interleaving, the
 * model gives every byte of VRAM back and the survivor keeps its data.
 */
static void test_paging_faults_race_free_and_destroy(void **state)
{
	struct vg_host *h = mf_host("paging:gran=64k", 8 * MiB);
	struct vg_host_guest *keep = mf_vm(h, "keep", 0), *g;
	struct vgmem_chan *chk = mf_chan(keep), *ch;
	uint64_t vk, va, want;
	int i, spin;

	(void)state;
	vk = mf_bo(keep, 6 * MiB);
	assert_int_equal(vgmem_memset(chk, vk, 6 * MiB, FILL), 0);
	for (i = 0; i < 12; i++) {
		g = mf_vm(h, "victim", 0);
		ch = mf_chan(g);
		va = mf_bo(g, 6 * MiB);
		mf_memset_async(ch, va, 6 * MiB, FILL);
		mf_memset_async(chk, vk, 6 * MiB, FILL);
		/* Let it get some way in: past VRAM's room from i = 6 on. */
		want = 1 + (uint64_t)i * 11 % 90;
		for (spin = 0; mf_stats(g).faults < want && spin < 100000; spin++)
			usleep(50);
		if (i & 1) {
			/* The BO goes first: its faults error the channel. */
			assert_int_equal(vgmem_bo_free(vg_host_guest_dev(g), va),
					 0);
			assert_int_equal(mf_stats(g).resident, 0);
		}
		vg_host_guest_destroy(g);
		assert_int_equal(vgmem_finish(chk), 0);
		assert_int_equal(vgmem_chan_error(chk, NULL), 0);
		/* Only the survivor's chunks are left in VRAM. */
		assert_int_equal(mf_gstats(h).vram_used, mf_stats(keep).resident);
	}
	expect_fill(chk, vk, 6 * MiB);
	assert_int_equal(mf_gstats(h).vms, 1);
	{
		struct vg_sim_fault_stats fs;

		vg_sim_fault_stats(vg_host_sim(h), &fs);
		print_message("faults: raised %llu cancelled %llu failed %llu\n",
			      (unsigned long long)fs.raised,
			      (unsigned long long)fs.cancelled,
			      (unsigned long long)fs.failed);
	}
	vgmem_chan_destroy(chk);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paging_first_access_faults_64k),
		cmocka_unit_test(test_paging_first_access_faults_2m),
		cmocka_unit_test(test_paging_lru_eviction_order),
		cmocka_unit_test(test_paging_64k_blocks_share_root_chunks),
		cmocka_unit_test(test_paging_free_releases_everything),
		cmocka_unit_test(test_paging_faults_race_free_and_destroy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
