// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Every model keeps every byte of every VM: three VMs on a GPU too small
 * for all of them (static: partitions that fit) fill their BOs with the GPU
 * in turns and check each other's contents after every turn, under every
 * spec of vg_model_runs. The only failure allowed is admission's
 * out-of-memory (that BO then does not exist).
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include "model_fixture.h"

/*
 * A model that loses a mapping leaves a guest refaulting forever: a hang,
 * not a pass. The watchdog turns it into a failure naming the model.
 */
#define WATCHDOG_S	300
static const char *volatile wd_spec;

static void wd_fire(int sig)
{
	static const char msg[] = "watchdog: no progress under model ";
	const char *s = wd_spec ? wd_spec : "?";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, s, strlen(s));
	(void)!write(2, "\n", 1);
	_exit(1);
}

static void wd_arm(const char *spec)
{
	wd_spec = spec;
	signal(SIGALRM, wd_fire);
	alarm(spec ? WATCHDOG_S : 0);
}

#define NR_VMS		3
#define ROUNDS		3

struct vmctx {
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
	uint64_t scratch, va[2], size[2];
	uint32_t seed[2];
	int nr;
};

static uint32_t seed_of(int round, int vm, int bo)
{
	return (uint32_t)(round * 131 + vm * 17 + bo * 5 + 1);
}

static void run_spec(const char *spec)
{
	const struct vg_model_params *p;
	struct vg_model_gpu_stats gs;
	struct vg_host *h = mf_host(spec, 16 * MiB);
	struct vmctx c[NR_VMS];
	uint64_t bo_sizes[2];
	bool is_static, oom_ok;
	int i, j, r, k, err;
	char name[16];

	p = vg_host_model(h);
	is_static = p->kind == VG_MODEL_STATIC;
	oom_ok = p->kind == VG_MODEL_ADMISSION;
	/* static: 3 x 5 MiB partitions fit in 16; the rest: 3 x 6.1 MiB do not. */
	bo_sizes[0] = is_static ? 3 * MiB : 4 * MiB;
	bo_sizes[1] = is_static ? 1 * MiB + 256 * KiB : 2 * MiB + 64 * KiB;
	memset(c, 0, sizeof(c));
	for (i = 0; i < NR_VMS; i++) {
		snprintf(name, sizeof(name), "vm%d", i);
		c[i].g = mf_vm(h, name, is_static ? 5 * MiB : 12 * MiB);
		c[i].ch = mf_chan(c[i].g);
		c[i].scratch = mf_bo(c[i].g, 4 * KiB);
	}
	for (j = 0; j < 2; j++) {
		for (i = 0; i < NR_VMS; i++) {
			k = c[i].nr;
			err = mf_alloc(c[i].g, bo_sizes[j], &c[i].va[k]);
			if (err == -ENOMEM && oom_ok)
				continue;
			assert_int_equal(err, 0);
			c[i].size[k] = bo_sizes[j];
			c[i].nr++;
		}
	}
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NR_VMS; i++) {
			for (k = 0; k < c[i].nr; k++) {
				c[i].seed[k] = seed_of(r, i, k);
				mf_fill(c[i].ch, c[i].va[k], c[i].size[k], c[i].seed[k]);
			}
			for (j = 0; j <= i; j++)
				for (k = 0; k < c[j].nr; k++)
					mf_check(c[j].ch, c[j].va[k], c[j].size[k],
						 c[j].seed[k], c[j].scratch);
		}
	}
	gs = mf_gstats(h);
	if (oom_ok)
		assert_true(gs.oom_failures > 0);
	else
		assert_int_equal(gs.oom_failures, 0);
	/* The models that move memory did move it (this was pressure). */
	if (!is_static && !oom_ok)
		assert_true(gs.bytes_to_host > 0);
	else
		assert_int_equal(gs.bytes_to_host + gs.bytes_to_vram, 0);
	for (i = 0; i < NR_VMS; i++)
		vgmem_chan_destroy(c[i].ch);
	vg_host_destroy(h);
}

static void test_every_model_keeps_every_byte(void **state)
{
	const char *const *s;

	(void)state;
	for (s = vg_model_runs; *s; s++) {
		print_message("model %s\n", *s);
		wd_arm(*s);
		run_spec(*s);
	}
	wd_arm(NULL);
}

/*
 * The same under concurrency: each VM fills and checks its own BOs from its
 * own thread, so submissions, evictions and faults of different VMs race.
 * Workers record failures instead of asserting (cmocka is not thread-safe).
 */
struct worker {
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
	uint64_t va, scratch;
	int idx;
	int failed;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t sum;
	uint32_t seed;
	int r;

	for (r = 0; r < 6 && !w->failed; r++) {
		seed = (uint32_t)(w->idx * 1000 + r);
		if (vgmem_fill_pattern(w->ch, w->va, 5 * MiB, seed) ||
		    vgmem_checksum(w->ch, w->va, 5 * MiB, w->scratch, &sum) ||
		    sum != vgmem_pattern_checksum(5 * MiB, seed) ||
		    vgmem_chan_error(w->ch, NULL))
			w->failed = r + 1;
	}
	return NULL;
}

static void run_threaded(const char *spec)
{
	struct vg_host *h = mf_host(spec, 12 * MiB);
	struct worker w[NR_VMS];
	pthread_t t[NR_VMS];
	char name[16];
	int i;

	memset(w, 0, sizeof(w));
	for (i = 0; i < NR_VMS; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		w[i].g = mf_vm(h, name, 8 * MiB);
		w[i].ch = mf_chan(w[i].g);
		w[i].scratch = mf_bo(w[i].g, 4 * KiB);
		w[i].va = mf_bo(w[i].g, 5 * MiB);
		w[i].idx = i;
	}
	for (i = 0; i < NR_VMS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	for (i = 0; i < NR_VMS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (i = 0; i < NR_VMS; i++) {
		if (w[i].failed)
			fail_msg("%s: vm %d failed in round %d", spec, i, w[i].failed);
		vgmem_chan_destroy(w[i].ch);
	}
	assert_true(mf_gstats(h).bytes_to_host > 0);
	assert_int_equal(mf_gstats(h).oom_failures, 0);
	vg_host_destroy(h);
}

static void test_concurrent_tenants(void **state)
{
	static const char *const specs[] = {
		"vgmem:policy=cold", "swsched", "paging:gran=64k", "paging:gran=2m",
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		print_message("model %s\n", specs[i]);
		wd_arm(specs[i]);
		run_threaded(specs[i]);
	}
	wd_arm(NULL);
}

/* Specs: every run parses, prints back as itself; junk is refused. */
static void test_specs(void **state)
{
	struct vg_model_params p;
	const char *const *s;
	char buf[64];

	(void)state;
	for (s = vg_model_runs; *s; s++) {
		assert_int_equal(vg_model_parse(*s, &p), 0);
		assert_string_equal(vg_model_spec(&p, buf, sizeof(buf)), *s);
	}
	assert_int_equal(vg_model_parse("paging", &p), 0);
	assert_int_equal(p.gran, 2 * MiB);
	assert_int_equal(vg_model_parse("swsched", &p), 0);
	assert_int_equal(p.mediation_ns, VG_MODEL_MEDIATION_NS_DEFAULT);
	assert_int_equal(vg_model_parse("vgmem", &p), 0);
	assert_int_equal(p.policy, VG_POLICY_NR);
	assert_int_equal(vg_model_parse("paging:gran=128k", &p), -EINVAL);
	assert_int_equal(vg_model_parse("vgmem:policy=hot", &p), -EINVAL);
	assert_int_equal(vg_model_parse("vgmem:gran=64k", &p), -EINVAL);
	assert_int_equal(vg_model_parse("nope", &p), -EINVAL);
	assert_int_equal(vg_model_parse("", &p), -EINVAL);
	assert_int_equal(vg_model_parse("paging:", &p), -EINVAL);
	assert_int_equal(vg_model_parse("paging:gran", &p), -EINVAL);
	assert_int_equal(vg_model_parse("swsched:mediation_ns=99999999999", &p),
			 -EINVAL);
	assert_string_equal(vg_model_name(VG_MODEL_PAGING), "paging");
	assert_null(vg_model_name(VG_MODEL_NR));
}

/* A host without a model spec is the core with the GPU config's policy. */
static void test_default_is_vgmem(void **state)
{
	struct vg_host_config cfg;
	struct vg_host *h = NULL;
	char buf[64];

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 16 * MiB;
	cfg.gpu.policy = VG_POLICY_COLD;
	cfg.gpu.no_return_worker = true;
	assert_int_equal(vg_host_create(&cfg, &h), 0);
	assert_string_equal(vg_model_spec(vg_host_model(h), buf, sizeof(buf)),
			    "vgmem:policy=cold");
	vg_host_destroy(h);
	cfg.model = "bogus";
	assert_int_equal(vg_host_create(&cfg, &h), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specs),
		cmocka_unit_test(test_default_is_vgmem),
		cmocka_unit_test(test_every_model_keeps_every_byte),
		cmocka_unit_test(test_concurrent_tenants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
