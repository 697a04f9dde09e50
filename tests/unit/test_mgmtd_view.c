// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mg_list_view(), mg_view_current() and mg_view_equal() of the real model
 * (the REST cache's key, mgmtd/rest_cache.h) on the embedded backend: a
 * listing stays current while nothing changes and stops being current
 * (and equal) after every kind of change the answers show: an operator's
 * policy, knobs, a VM stopping or being defined, lost or back, metadata,
 * and the stats refresh a read does when the core's counters moved. The
 * generation is checked against the byte comparison after every step of
 * a longer sequence: an unchanged generation must mean an equal view.
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
	uint64_t gen;
};

static void view_get(struct mg *mg, struct view *v)
{
	assert_int_equal(mg_list_view(mg, &v->gpus, &v->ngpus, &v->vms,
				      &v->nvms, &v->gen), 0);
}

static void view_free(struct view *v)
{
	free(v->gpus);
	free(v->vms);
	memset(v, 0, sizeof(*v));
}

/*
 * Whether the listing v is still the model's view, by the generation;
 * fails the test if the generation says current but the bytes differ (a
 * change that forgot mg_view_changed_locked()). The bytes are compared
 * first, so counters moving in between cannot fake a failure.
 */
static bool current(struct mg *mg, const struct view *v)
{
	bool eq = mg_view_equal(mg, v->gpus, v->ngpus, v->vms, v->nvms);
	bool cur = mg_view_current(mg, v->gen);

	if (cur && !eq)
		fail_msg("generation %llu unchanged but the view changed",
			 (unsigned long long)v->gen);
	return cur;
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
	assert_int_equal(mg_list_view(mg, NULL, &ng, &vms, &nv, NULL), -EINVAL);
	assert_false(mg_view_current(NULL, v.gen));
	/* no change: the generation stays, also across a stats refresh */
	assert_true(current(mg, &v));
	usleep(150 * 1000);	/* stats older than MG_STATS_FRESH_MS */
	assert_true(current(mg, &v));
	assert_false(mg_view_current(mg, v.gen + 1));
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
	assert_false(current(mg, &v));
	view_free(&v);

	/* knobs show in the GPU list */
	view_get(mg, &v);
	assert_true(gpus_equal(mg, &v));
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_POLICY, why, sizeof(why)), 0);
	assert_false(gpus_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);

	/* the core's counters move: the next read's refresh sees it */
	view_get(mg, &v);
	g = mg_backend_embedded_guest(mg_get_backend(mg), VMB);
	assert_non_null(g);
	assert_int_equal(vg_bo_alloc(vg_host_guest_vm(g), 8 * MiB, 0, &va), 0);
	usleep(150 * 1000);	/* stats older than MG_STATS_FRESH_MS */
	assert_false(vms_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);

	/* a VM stops, a VM is defined */
	view_get(mg, &v);
	assert_int_equal(mg_vm_stop(mg, VMB), 0);
	assert_false(vms_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);
	view_get(mg, &v);
	p.quota = 32 * MiB;
	assert_int_equal(mg_vm_define(mg, VMC, "c", &p, MG_POL_QUOTA,
				      MG_SRC_CONFIG, why, sizeof(why)), 0);
	assert_false(vms_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);

	/* and after a fresh listing, equal again */
	view_get(mg, &v);
	assert_true(mg_view_equal(mg, v.gpus, v.ngpus, v.vms, v.nvms));
	assert_true(current(mg, &v));
	view_free(&v);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/*
 * Every write path of the model in turn, each followed by the oracle
 * check on a listing taken before it (and a fresh one after it).
 */
static void test_generation_follows_every_write(void **state)
{
	struct mg_vm_policy p = { .quota = 32 * MiB, .weight = 200 };
	struct mg_knobs k = { .oversub_pct = 300 };
	struct mg_backend *be;
	struct mg_config cfg;
	char why[MG_WHY_LEN];
	struct view v;
	struct mg *mg;
	int step;
	u64 va;

	(void)state;
	mg = model(&cfg);
	be = mg_get_backend(mg);
	for (step = 0; step < 15; step++) {
		view_get(mg, &v);
		switch (step) {
		case 0:
			mg_set_vm_policy(mg, VMA, &p, MG_POL_WEIGHT, why, sizeof(why));
			break;
		case 1:
			mg_reset_vm_policy(mg, VMA, why, sizeof(why));
			break;
		case 2:
			mg_set_knobs(mg, &k, MG_KNOB_OVERSUB, why, sizeof(why));
			break;
		case 3:
			mg_vm_set_meta(mg, VMB, &p, MG_POL_QUOTA | MG_POL_WEIGHT,
				       -1, why, sizeof(why));
			break;
		case 4:		/* refused: only the VM's error changes */
			mg_vm_set_meta(mg, VMB, &p, MG_POL_QUOTA, 7, why,
				       sizeof(why));
			break;
		case 5:
			mg_vm_report_error(mg, VMA, "a", "bad metadata");
			break;
		case 6:
			vg_bo_alloc(vg_host_guest_vm(mg_backend_embedded_guest(be, VMA)),
				    4 * MiB, 0, &va);
			mg_tick(mg, mg_mono_ms());
			break;
		case 7:		/* the mdev goes: lost at the next read */
			assert_int_equal(mg_backend_embedded_unplug(be, VMB), 0);
			usleep(150 * 1000);
			break;
		case 8:		/* and comes back */
			assert_int_equal(mg_backend_embedded_plug(be, VMB, 0,
								  32 * MiB), 0);
			mg_recompute(mg);
			break;
		case 9:
			mg_vm_stop(mg, VMB);
			break;
		case 10:
			mg_vm_forget(mg, VMB);
			break;
		case 11:
			mg_vm_define(mg, VMC, "c", &p, MG_POL_QUOTA, MG_SRC_CONFIG,
				     why, sizeof(why));
			break;
		case 12:
			mg_vm_start(mg, VMC, "c", &p, MG_POL_QUOTA, -1,
				    MG_SRC_CONFIG, why, sizeof(why));
			break;
		case 13:	/* refused start: the error is shown */
			mg_vm_start(mg, VMB, "b", &p, MG_POL_QUOTA, 5,
				    MG_SRC_CONFIG, why, sizeof(why));
			break;
		default:
			mg_recompute(mg);
			break;
		}
		/* the oracle: current only if equal (fails the test if not) */
		if (step != 14)
			assert_false(current(mg, &v));
		else
			current(mg, &v);
		view_free(&v);
		view_get(mg, &v);
		assert_true(current(mg, &v));
		view_free(&v);
	}
	mg_destroy(mg);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listing_matches_lists),
		cmocka_unit_test(test_every_change_breaks_equality),
		cmocka_unit_test(test_generation_follows_every_write),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
