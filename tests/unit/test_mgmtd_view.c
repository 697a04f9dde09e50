// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mg_list_view() and mg_view_equal() of the real model (the REST cache's
 * key, mgmtd/rest_cache.h) on the embedded backend: a listing stays equal
 * while nothing changes and stops being equal after every kind of change
 * the answers show: an operator's policy, knobs, a VM stopping or being
 * defined, and the stats refresh a read does when the core's counters
 * moved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mgmtd/mgmtd.h"
#include "mgmtd/log.h"
#include "host-module/user/host.h"

#define MiB	(1ull << 20)
#define VMA	"00000000-0000-4000-8000-00000000000a"
#define VMB	"00000000-0000-4000-8000-00000000000b"
#define VMC	"00000000-0000-4000-8000-00000000000c"

static char dir[64];
static char db[128];

struct view {
	struct mg_gpu_info *gpus;
	size_t ngpus;
	struct mg_vm_info *vms;
	size_t nvms;
};

static void view_get(struct mg *mg, struct view *v)
{
	assert_int_equal(mg_list_view(mg, &v->gpus, &v->ngpus, &v->vms,
				      &v->nvms), 0);
}

static void view_free(struct view *v)
{
	free(v->gpus);
	free(v->vms);
	memset(v, 0, sizeof(*v));
}

static bool vms_equal(struct mg *mg, const struct view *v)
{
	return mg_view_equal(mg, NULL, 0, v->vms, v->nvms);
}

static bool gpus_equal(struct mg *mg, const struct view *v)
{
	return mg_view_equal(mg, v->gpus, v->ngpus, NULL, 0);
}

static int setup(void **state)
{
	(void)state;
	mg_log_set_level(MG_LOG_ERR - 1);
	snprintf(dir, sizeof(dir), "/tmp/mgmtd-view-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(db, sizeof(db), "%s/state.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

static struct mg *model(struct mg_config *cfg)
{
	char err[256];
	struct mg *mg;

	assert_int_equal(mg_config_defaults(cfg), 0);
	assert_int_equal(mg_config_set(cfg, "state_db", db, err, sizeof(err)), 0);
	assert_int_equal(mg_config_set(cfg, "backend", "embedded", err, sizeof(err)), 0);
	assert_int_equal(mg_config_set(cfg, "libvirt_uri", "none", err, sizeof(err)), 0);
	assert_int_equal(mg_config_set(cfg, "embedded_vram", "64M", err, sizeof(err)), 0);
	assert_int_equal(mg_config_set(cfg, "recompute_ms", "3600000", err, sizeof(err)), 0);
	assert_int_equal(mg_config_set(cfg, "embedded_vm", "a:" VMA ":64M", err, sizeof(err)), 0);
	assert_int_equal(mg_config_set(cfg, "embedded_vm", "b:" VMB ":64M", err, sizeof(err)), 0);
	assert_int_equal(mg_create(cfg, &mg), 0);
	return mg;
}

static void test_listing_matches_lists(void **state)
{
	struct mg_gpu_info *gpus;
	struct mg_vm_info *vms;
	struct mg_config cfg;
	size_t ng, nv, i;
	struct view v;
	struct mg *mg;

	(void)state;
	mg = model(&cfg);
	view_get(mg, &v);
	assert_int_equal(mg_list_gpus(mg, &gpus, &ng), 0);
	assert_int_equal(mg_list_vms(mg, &vms, &nv), 0);
	assert_int_equal(v.ngpus, ng);
	assert_int_equal(v.nvms, 2);
	assert_int_equal(v.nvms, nv);
	assert_memory_equal(v.gpus, gpus, ng * sizeof(*gpus));
	for (i = 0; i < nv; i++) {
		assert_string_equal(v.vms[i].id, vms[i].id);
		assert_memory_equal(&v.vms[i].policy, &vms[i].policy,
				    sizeof(vms[i].policy));
		assert_memory_equal(&v.vms[i].stats, &vms[i].stats,
				    sizeof(vms[i].stats));
	}
	/* unchanged: equal, as often as asked; nothing compared: equal */
	assert_true(mg_view_equal(mg, v.gpus, v.ngpus, v.vms, v.nvms));
	assert_true(mg_view_equal(mg, v.gpus, v.ngpus, v.vms, v.nvms));
	assert_true(mg_view_equal(mg, NULL, 0, NULL, 0));
	/* a different count or byte is not */
	assert_false(mg_view_equal(mg, NULL, 0, v.vms, v.nvms - 1));
	v.vms[1].entitlement ^= 1;
	assert_false(vms_equal(mg, &v));
	v.vms[1].entitlement ^= 1;
	assert_true(vms_equal(mg, &v));
	assert_false(mg_view_equal(NULL, NULL, 0, NULL, 0));
	assert_int_equal(mg_list_view(mg, NULL, &ng, &vms, &nv), -EINVAL);
	free(gpus);
	free(vms);
	view_free(&v);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

static void test_every_change_breaks_equality(void **state)
{
	struct mg_vm_policy p = { .weight = 300 };
	struct mg_knobs k = { .policy = "lra" };
	struct vg_host_guest *g;
	struct mg_config cfg;
	char why[MG_WHY_LEN];
	struct view v;
	struct mg *mg;
	u64 va;

	(void)state;
	mg = model(&cfg);

	/* an operator's policy */
	view_get(mg, &v);
	assert_int_equal(mg_set_vm_policy(mg, "a", &p, MG_POL_WEIGHT, why,
					  sizeof(why)), 0);
	assert_false(vms_equal(mg, &v));
	view_free(&v);

	/* knobs show in the GPU list */
	view_get(mg, &v);
	assert_true(gpus_equal(mg, &v));
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_POLICY, why, sizeof(why)), 0);
	assert_false(gpus_equal(mg, &v));
	view_free(&v);

	/* the core's counters move: the next read's refresh sees it */
	view_get(mg, &v);
	g = mg_backend_embedded_guest(mg_get_backend(mg), VMB);
	assert_non_null(g);
	assert_int_equal(vg_bo_alloc(vg_host_guest_vm(g), 8 * MiB, 0, &va), 0);
	usleep(150 * 1000);	/* stats older than MG_STATS_FRESH_MS */
	assert_false(vms_equal(mg, &v));
	view_free(&v);

	/* a VM stops, a VM is defined */
	view_get(mg, &v);
	assert_int_equal(mg_vm_stop(mg, VMB), 0);
	assert_false(vms_equal(mg, &v));
	view_free(&v);
	view_get(mg, &v);
	p.quota = 32 * MiB;
	assert_int_equal(mg_vm_define(mg, VMC, "c", &p, MG_POL_QUOTA,
				      MG_SRC_CONFIG, why, sizeof(why)), 0);
	assert_false(vms_equal(mg, &v));
	view_free(&v);

	/* and after a fresh listing, equal again */
	view_get(mg, &v);
	assert_true(mg_view_equal(mg, v.gpus, v.ngpus, v.vms, v.nvms));
	view_free(&v);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listing_matches_lists),
		cmocka_unit_test(test_every_change_breaks_equality),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
