// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The oracle as a model of compare and cloud-day (tools/vgmem-sim/
 * oracle_play.c), on tenant traces played by the real models:
 *  - with room for everything it moves nothing and every iteration costs
 *    exactly the baseline's;
 *  - over random tenant mixes and VRAM sizes it never moves more bytes
 *    over PCIe than any model that serves every VM (vgmem with each
 *    policy, swsched, paging at both granularities; static and admission
 *    refuse VMs or allocations instead of moving anything);
 *  - what it charges the VMs is what its copies cost, and no iteration is
 *    faster than the baseline's;
 *  - a cap on the VMs placed turns away the same VMs the player does;
 *  - the specs parse, and "all" has both oracles.
 * Simulated device time only: nothing here is timed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "tools/vgmem-sim/play.h"

#define CHUNK	(2ull << 20)

static struct vs_ctx ctx = { .sc = &vs_compare, .c = { .quiet = true } };

static uint64_t up_to(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint64_t pcie(const struct pl_result *r)
{
	return r->st.pcie_copy_bytes + r->st.pcie_access_bytes;
}

/* A tenant mix like compare --tiny's; counts drawn from the seed. */
static void mix(struct trace *t, uint64_t seed)
{
	struct tr_mix m = {
		.seed = seed, .steps = 12, .entitlement = 4ull << 20,
		.limit_pct = 200, .bo_size = 512ull << 10,
	};

	m.nr[TR_TRAIN] = 1 + seed % 2;
	m.nr[TR_INFER] = 1 + (seed / 2) % 2;
	m.nr[TR_LEAK] = (seed / 4) % 3;
	m.nr[TR_IDLE] = seed % 3 != 0;
	assert_int_equal(tr_build_mix(&m, t), 0);
}

static void play(const struct trace *t, const char *model, uint64_t vram,
		 uint32_t max_vms, const struct pl_result *base,
		 struct pl_result *r)
{
	struct pl_cfg cfg = { .model = model, .vram = vram, .chunk_size = CHUNK,
			      .seed = 1, .bw_scale = 64, .max_vms = max_vms,
			      .base = base };

	assert_int_equal(pl_run(&ctx, t, &cfg, r, NULL, NULL), 0);
}

/* The baseline as compare plays it: twice the roomy VRAM. */
static void baseline(const struct trace *t, struct pl_result *base)
{
	uint64_t roomy = up_to(t->peak_total + t->nr_vms * (CHUNK + PL_SCRATCH),
				  CHUNK);

	play(t, "vgmem:policy=random", 2 * roomy, 0, NULL, base);
}

static void test_roomy_is_baseline(void **state)
{
	struct pl_result base, r;
	struct trace t;
	uint32_t v, k;

	(void)state;
	mix(&t, 3);
	baseline(&t, &base);
	play(&t, "oracle", up_to(t.peak_total + t.nr_vms * (CHUNK + PL_SCRATCH),
				    CHUNK), 0, &base, &r);
	assert_int_equal(pcie(&r), 0);
	assert_int_equal(r.st.model_ns + r.st.stall_ns, 0);
	assert_int_equal(r.admitted, t.nr_vms);
	assert_int_equal(r.oom, 0);
	for (v = 0; v < t.nr_vms; v++) {
		assert_int_equal(r.vm[v].total_ns, base.vm[v].total_ns);
		assert_int_equal(r.vm[v].iters_ok, t.vms[v].nr_iters);
		for (k = 0; k < t.vms[v].nr_iters; k++)
			assert_int_equal(r.vm[v].iter_ns[k], base.vm[v].iter_ns[k]);
	}
	pl_result_free(&r);
	pl_result_free(&base);
	tr_free(&t);
}

/*
 * Under pressure the oracle is charged exactly its copies, VM by VM, on
 * top of the baseline, and never reads host memory.
 */
static void check_charges(const struct trace *t, const struct pl_result *base,
			  const struct pl_result *r)
{
	uint64_t extra = 0;
	uint32_t v, k;

	assert_int_equal(r->st.pcie_access_bytes, 0);
	assert_int_equal(r->oom, 0);
	assert_int_equal(r->admitted, t->nr_vms);
	for (v = 0; v < t->nr_vms; v++) {
		assert_true(r->vm[v].total_ns >= base->vm[v].total_ns);
		extra += r->vm[v].total_ns - base->vm[v].total_ns;
		for (k = 0; k < t->vms[v].nr_iters; k++)
			assert_true(r->vm[v].iter_ns[k] >= base->vm[v].iter_ns[k]);
	}
	assert_int_equal(extra, r->st.model_ns + r->st.stall_ns);
	/* Every copy moves at least a page. */
	assert_true(r->st.pcie_copy_bytes >= r->st.relocations * 4096);
}

static void test_never_more_than_models(void **state)
{
	static const char *const models[] = {
		"vgmem:policy=random", "vgmem:policy=lra", "vgmem:policy=cold",
		"swsched", "paging:gran=64k", "paging:gran=2m",
	};
	struct pl_result base, orc, w, r;
	uint64_t seed;
	uint32_t i, compared = 0;

	(void)state;
	for (seed = 1; seed <= 6; seed++) {
		struct trace t;
		uint64_t vram;

		mix(&t, seed);
		baseline(&t, &base);
		vram = up_to(t.peak_total * (40 + seed * 7 % 40) / 100, CHUNK);
		play(&t, "oracle", vram, 0, &base, &orc);
		play(&t, "oracle:evict=weighted", vram, 0, &base, &w);
		check_charges(&t, &base, &orc);
		check_charges(&t, &base, &w);
		assert_true(pcie(&orc) > 0);
		for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
			play(&t, models[i], vram, 0, NULL, &r);
			if (r.admitted == t.nr_vms && !r.oom) {
				compared++;
				if (pcie(&orc) > pcie(&r))
					fail_msg("seed %llu, %llu bytes of VRAM: "
						 "oracle %llu bytes over PCIe, %s %llu",
						 (unsigned long long)seed,
						 (unsigned long long)vram,
						 (unsigned long long)pcie(&orc),
						 models[i],
						 (unsigned long long)pcie(&r));
			}
			pl_result_free(&r);
		}
		pl_result_free(&orc);
		pl_result_free(&w);
		pl_result_free(&base);
		tr_free(&t);
	}
	/* Every one of them served everyone. */
	assert_int_equal(compared, 6 * 6);
}

/* cloud-day's cap: the oracle turns away the VMs the player does. */
static void test_cap(void **state)
{
	struct tr_day d = {
		.seed = 5, .steps = 40, .arrival_rate = 0.5, .mean_life = 12,
		.weight = { 2, 4, 1, 3 }, .entitlement = 2ull << 20,
		.limit_pct = 200, .use_lo = 20, .use_hi = 60, .burst_pct = 15,
		.burst_hi = 180, .bo_size = 256ull << 10,
	};
	struct pl_result base, o, v;
	struct trace t;
	uint32_t k, i;

	(void)state;
	assert_int_equal(tr_build_day(&d, &t), 0);
	baseline(&t, &base);
	for (k = 2; k <= 8; k += 3) {
		play(&t, "oracle", 16ull << 20, k, &base, &o);
		play(&t, "vgmem:policy=cold", 16ull << 20, k, NULL, &v);
		assert_int_equal(o.admitted, v.admitted);
		assert_int_equal(o.capped, v.capped);
		assert_int_equal(o.vms_max, v.vms_max);
		assert_true(o.vms_avg == v.vms_avg);
		for (i = 0; i < t.nr_vms; i++)
			assert_int_equal(o.vm[i].admitted, v.vm[i].admitted);
		pl_result_free(&o);
		pl_result_free(&v);
	}
	pl_result_free(&base);
	tr_free(&t);
}

static void test_specs(void **state)
{
	char specs[16][PL_SPEC_LEN];
	struct pl_result r;
	enum or_evict ev;
	struct trace t;
	uint32_t n, i, oracles = 0;

	(void)state;
	assert_int_equal(or_spec_parse("oracle", &ev), 0);
	assert_int_equal(ev, OR_EVICT_MIN);
	assert_int_equal(or_spec_parse("oracle:evict=min", &ev), 0);
	assert_int_equal(ev, OR_EVICT_MIN);
	assert_int_equal(or_spec_parse("oracle:evict=weighted", &ev), 0);
	assert_int_equal(ev, OR_EVICT_WEIGHTED);
	assert_int_equal(or_spec_parse("oracle:evict=lru", &ev), -EINVAL);
	assert_int_equal(or_spec_parse("oracles", &ev), -ENOENT);
	assert_int_equal(or_spec_parse("vgmem:policy=cold", &ev), -ENOENT);
	assert_int_equal(pl_model_check("oracle:evict=weighted"), 0);
	assert_int_equal(pl_model_check("paging:gran=64k"), 0);
	assert_int_equal(pl_model_check("oracles"), -EINVAL);
	assert_int_equal(pl_parse_models("all", specs, 16, &n), 0);
	for (i = 0; i < n; i++)
		oracles += !strncmp(specs[i], "oracle", 6);
	assert_int_equal(oracles, 2);
	assert_int_equal(pl_parse_models("oracle,oracle:evict=weighted,static",
					 specs, 16, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pl_parse_models("oracle:evict=x", specs, 16, &n), -EINVAL);
	/* Computed from the baseline: without one it cannot run. */
	mix(&t, 1);
	{
		struct pl_cfg cfg = { .model = "oracle", .vram = 64ull << 20 };

		assert_int_equal(pl_run(&ctx, &t, &cfg, &r, NULL, NULL), -EINVAL);
	}
	tr_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roomy_is_baseline),
		cmocka_unit_test(test_never_more_than_models),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_specs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
