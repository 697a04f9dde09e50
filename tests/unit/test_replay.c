// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The replay's load and statistics (tools/vgmem-sim/serving.c,
 * servstat.c) on a two-request trace whose outcome is worked out by hand:
 *  - the KV demand curve and vLLM-style block rounding step by step;
 *  - a request that must fail under static (its partition is full) and
 *    does not under vgmem, and slowdowns of exactly 1 with room for all;
 *  - parameters the load cannot be built with, and a malformed row, are
 *    errors that say what and where (NAME:LINE for the row).
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

#include "tools/vgmem-sim/servstat.h"

static struct vs_ctx ctx = { .sc = &vs_replay, .c = { .quiet = true } };

/*
 * Request 0 arrives at 0 s: 500 prompt tokens, 150 generated; request 1 at
 * 1.5 s: 600 tokens, none generated. One VM; a step is 100 tokens x 10 ms
 * = 1 s; 8 bytes per token at scale 1, so a block of 512 tokens is 4 KiB.
 */
static const char tiny[] =
	"TIMESTAMP,ContextTokens,GeneratedTokens\n"
	"0,500,150\n"
	"1.5,600,0\n";

static const struct sv_params params = {
	.nr_vms = 1, .weights = 8192, .kv_token = 8, .block_tokens = 512,
	.step_tokens = 100, .token_us = 10000, .scale = 1,
	.profile = 16384, .limit_pct = 200, .bo_size = 8192,
};

static void load(struct sv_load *l, const struct sv_params *p)
{
	struct rq_trace rq;
	char err[256];

	assert_int_equal(rq_parse(tiny, sizeof(tiny) - 1, "tiny.csv", &rq, err,
				  sizeof(err)), 0);
	assert_int_equal(sv_build(&rq, p, l, err, sizeof(err)), 0);
	rq_free(&rq);
}

static void test_demand_and_blocks(void **state)
{
	struct sv_load l;

	(void)state;
	load(&l, &params);
	assert_int_equal(l.sim_block, 4096);
	assert_int_equal(l.sim_weights, 8192);
	/* Request 0: 150 tokens at 100 a step, 2 steps; request 1: 1 step. */
	assert_int_equal(l.req[0].step, 0);
	assert_int_equal(l.req[0].nr_steps, 2);
	assert_int_equal(l.req[1].step, 1);
	assert_int_equal(l.req[1].nr_steps, 1);
	/* Its last request ends in step 1: frees and stop in step 2. */
	assert_int_equal(l.t.steps, 3);
	/* Step 0: 500 + 100 tokens, 2 blocks (600 rounds up to 1024). */
	assert_int_equal(l.kv_tokens[0], 600);
	assert_int_equal(l.kv_bytes[0], 8192);
	/* Step 1: 650 (no new block) + 600 (2 blocks): 4 blocks. */
	assert_int_equal(l.kv_tokens[1], 1250);
	assert_int_equal(l.kv_bytes[1], 16384);
	assert_int_equal(l.kv_tokens[2], 0);
	assert_int_equal(l.kv_bytes[2], 0);
	/* The VM holds at most weights + 4 blocks. */
	assert_int_equal(l.t.vms[0].peak, 8192 + 16384);
	assert_int_equal(l.t.peak_total, 8192 + 16384);
	/* Iterations: step 0 weights + req 0; step 1 weights + req 0 + req 1. */
	assert_int_equal(l.t.vms[0].nr_iters, 5);
	assert_int_equal(l.step[0].it_first, 0);
	assert_int_equal(l.step[0].it_n, 2);
	assert_int_equal(l.step[1].it_first, 2);
	assert_int_equal(l.step[1].it_n, 3);
	assert_int_equal(l.req_it[l.req[0].it], 1);
	assert_int_equal(l.req_it[l.req[0].it + 1], 3);
	assert_int_equal(l.req_it[l.req[1].it], 4);
	sv_free(&l);
}

static void run(const struct sv_load *l, const char *model, uint64_t vram,
		const struct pl_result *base, struct pl_result *r)
{
	struct pl_cfg cfg = { .model = model, .vram = vram, .seed = 1,
			      .chunk_size = 64 << 10, .base = base };

	assert_int_equal(pl_run(&ctx, &l->t, &cfg, r, NULL, NULL), 0);
	assert_int_equal(r->check, 0);
}

static void test_static_fails_vgmem_serves(void **state)
{
	struct pl_result base, st, vg;
	struct ss_run ms, mv;
	struct sv_load l;

	(void)state;
	load(&l, &params);
	run(&l, "vgmem:policy=random", 4 << 20, NULL, &base);
	/*
	 * Static's partition is the 16 KiB profile: the weights (8 KiB) and
	 * request 0's 2 blocks fill it, so request 1's 2 blocks are refused.
	 */
	run(&l, "static", 4 << 20, NULL, &st);
	assert_int_equal(ss_compute(&l, &st, &base, &ms), 0);
	assert_int_equal(ms.placed, 2);
	assert_int_equal(ms.failed, 1);
	assert_int_equal(st.oom, 1);
	/* Request 0 is served alone, as fast as in the baseline. */
	assert_int_equal(ms.n_ttft, 1);
	assert_true(ms.ttft_p99 == 1.0);
	/* vgmem's quota is the limit (32 KiB): both served, nothing moves. */
	run(&l, "vgmem:policy=cold", 4 << 20, NULL, &vg);
	assert_int_equal(ss_compute(&l, &vg, &base, &mv), 0);
	assert_int_equal(mv.failed, 0);
	assert_int_equal(mv.n_ttft, 2);
	assert_int_equal(mv.n_tok, 2);
	assert_true(mv.ttft_p99 == 1.0 && mv.tok_p99 == 1.0 && mv.tok_mean == 1.0);
	assert_true(mv.jain == 1.0);
	pl_result_free(&vg);
	pl_result_free(&st);
	pl_result_free(&base);
	sv_free(&l);
}

static void test_bad_params(void **state)
{
	struct sv_params p = params;
	struct rq_trace rq;
	struct sv_load l;
	char err[256];

	(void)state;
	assert_int_equal(rq_parse(tiny, sizeof(tiny) - 1, "tiny.csv", &rq, err,
				  sizeof(err)), 0);
	/* 500 tokens x 8 bytes is not whole pages. */
	p.block_tokens = 500;
	assert_int_equal(sv_build(&rq, &p, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not whole 4 KiB pages"));
	p = params;
	p.profile = 8192;	/* no room past the weights */
	assert_int_equal(sv_build(&rq, &p, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "profile must hold the weights"));
	p = params;
	p.nr_vms = 0;
	assert_int_equal(sv_build(&rq, &p, &l, err, sizeof(err)), -EINVAL);
	rq_free(&rq);
	/* A header and no rows: valid CSV, nothing to replay. */
	assert_int_equal(rq_parse(tiny, 40, "empty.csv", &rq, err, sizeof(err)), 0);
	assert_int_equal(sv_build(&rq, &params, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no requests"));
	rq_free(&rq);
}

static void test_malformed_row(void **state)
{
	static const char bad[] =
		"TIMESTAMP,ContextTokens,GeneratedTokens\n"
		"0,500,150\n"
		"1.5,600\n";
	struct rq_trace rq;
	char err[256];

	(void)state;
	assert_int_equal(rq_parse(bad, sizeof(bad) - 1, "bad.csv", &rq, err,
				  sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad.csv:3: "));
	assert_null(rq.req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demand_and_blocks),
		cmocka_unit_test(test_static_fails_vgmem_serves),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_malformed_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
