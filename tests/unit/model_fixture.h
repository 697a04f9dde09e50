/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers of the peer-model tests (tests/unit/test_model_*.c): a userspace
 * host under a model (the LRC integration tests' hosts too, lrc_itest.h),
 * guests admitted into it, and fill/checksum checks of BO contents through
 * the GPU. Each test program includes this once.
 */
#ifndef VGMEM_TEST_MODEL_FIXTURE_H
#define VGMEM_TEST_MODEL_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "host-module/user/models/models.h"

#define MiB	(1ull << 20)
#define KiB	(1ull << 10)

/*
 * A userspace host with one software GPU of vram bytes named name, the
 * peer model spec (NULL: vgmem's own) and lrc_budget bytes of VRAM for the
 * file cache (0: none); the tests drive the return worker themselves.
 */
static inline struct vg_host *mf_host_cfg(const char *name, const char *spec,
					  uint64_t vram, uint64_t lrc_budget)
{
	struct vg_host_config cfg;
	struct vg_host *h = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = name;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	cfg.model = spec;
	cfg.lrc_vram_budget = lrc_budget;
	assert_int_equal(vg_host_create(&cfg, &h), 0);
	return h;
}

static inline struct vg_host *mf_host(const char *spec, uint64_t vram)
{
	return mf_host_cfg("mtest", spec, vram, 0);
}

static inline int mf_admit(struct vg_host *h, const char *name, uint64_t quota,
			   struct vg_host_guest **g)
{
	struct vg_host_vm_config c = { .name = name, .quota = quota };

	*g = NULL;
	return vg_host_vm_admit(h, &c, g);
}

static inline struct vg_host_guest *mf_vm(struct vg_host *h, const char *name,
					  uint64_t quota)
{
	struct vg_host_guest *g;

	assert_int_equal(mf_admit(h, name, quota, &g), 0);
	return g;
}

static inline struct vgmem_chan *mf_chan(struct vg_host_guest *g)
{
	struct vgmem_chan *ch = NULL;

	assert_int_equal(vgmem_chan_create(vg_host_guest_dev(g), 64, 0, 0, &ch), 0);
	return ch;
}

static inline int mf_alloc(struct vg_host_guest *g, uint64_t size, uint64_t *va)
{
	return vgmem_bo_alloc(vg_host_guest_dev(g), size, va);
}

static inline uint64_t mf_bo(struct vg_host_guest *g, uint64_t size)
{
	uint64_t va = 0;

	assert_int_equal(mf_alloc(g, size, &va), 0);
	return va;
}

/* Fill [va, va + bytes) with the pattern of seed. */
static inline void mf_fill(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
			   uint32_t seed)
{
	assert_int_equal(vgmem_fill_pattern(ch, va, bytes, seed), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
}

/* The GPU's checksum of the range equals the pattern's (every byte kept). */
static inline void mf_check(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
			    uint32_t seed, uint64_t scratch)
{
	uint64_t sum = 0;

	assert_int_equal(vgmem_checksum(ch, va, bytes, scratch, &sum), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	assert_true(sum == vgmem_pattern_checksum(bytes, seed));
}

/* Queue a MEMSET of [va, va + bytes) on ch and return without waiting. */
static inline uint64_t mf_memset_async(struct vgmem_chan *ch, uint64_t va,
				       uint64_t bytes, uint32_t value)
{
	uint32_t v[1 + VGMEM_CP_NARGS] = {
		VGMEM_K_MEMSET, (uint32_t)va, (uint32_t)(va >> 32),
		(uint32_t)bytes, (uint32_t)(bytes >> 32), value, 0, 0, 0,
	};
	uint64_t seq = 0;

	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, v,
		     1 + VGMEM_CP_NARGS);
	vgmem_pb_immd(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
	assert_int_equal(vgmem_submit(ch, &seq), 0);
	return seq;
}

static inline struct vg_model_vm_stats mf_stats(struct vg_host_guest *g)
{
	struct vg_model_vm_stats st;

	vg_host_guest_model_stats(g, &st);
	return st;
}

static inline struct vg_model_gpu_stats mf_gstats(struct vg_host *h)
{
	struct vg_model_gpu_stats st;

	vg_host_model_stats(h, &st);
	return st;
}

#endif /* VGMEM_TEST_MODEL_FIXTURE_H */
