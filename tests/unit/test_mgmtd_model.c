// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's model on the embedded backend with a real state database:
 * policies become entitlements in the core, admission refusals change
 * nothing, operator changes survive a restart and kill -9, events are
 * numbered, persisted and delivered; plus thrash detection, config and
 * domain XML parsing on their own.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "mg_fixture.h"
#include "mgmtd/model_priv.h"
#include "mgmtd/rest_json.h"
#include "mgmtd/state.h"

#define MiB	(1ull << 20)
#define VMA	"00000000-0000-4000-8000-00000000000a"
#define VMB	"00000000-0000-4000-8000-00000000000b"

static struct mgf_dir tmp;

/* Two VMs of 64 MiB on one 64 MiB GPU, no libvirt. */
static void cfg_init(struct mg_config *cfg)
{
	mgf_config(cfg, tmp.db, "none");
	mgf_set(cfg, "embedded_vram", "64M");
	mgf_set(cfg, "embedded_vm", "a:" VMA ":64M");
	mgf_set(cfg, "embedded_vm", "b:" VMB ":64M");
}

static int setup(void **state)
{
	(void)state;
	mg_log_set_level(MG_LOG_ERR - 1);	/* refusals are expected: quiet */
	return mgf_dir_make(&tmp, "test");
}

static int teardown(void **state)
{
	(void)state;
	return mgf_dir_remove(&tmp);
}

static uint64_t core_ent(struct mg *mg, const char *id)
{
	return mgf_core_stats(mg, id).entitlement;
}

/* ---- entitlements reach the core ------------------------------------ */

static void test_policy_applied_to_core(void **state)
{
	struct mg_vm_policy p = { 0 };
	struct mg_config cfg;
	struct mg *mg;
	char why[MG_WHY_LEN];
	u64 va;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);

	/* both demand 48 MiB of 64: equal weights split VRAM evenly */
	assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMA), 48 * MiB, 0, &va), 0);
	assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMB), 48 * MiB, 0, &va), 0);
	mg_tick(mg, 1000);
	assert_int_equal(mgf_vm_info(mg, VMA).entitlement, 32 * MiB);
	assert_int_equal(mgf_vm_info(mg, VMB).entitlement, 32 * MiB);
	assert_int_equal(core_ent(mg, VMA), 32 * MiB);
	assert_int_equal(core_ent(mg, VMB), 32 * MiB);

	/* weight 300 vs 100: 48 and 16, applied before the call returns */
	p.weight = 300;
	assert_int_equal(mg_set_vm_policy(mg, "a", &p, MG_POL_WEIGHT, why,
					  sizeof(why)), 0);
	assert_int_equal(mgf_vm_info(mg, VMA).policy.weight, 300);
	assert_true(mgf_vm_info(mg, VMA).operator_policy);
	assert_int_equal(core_ent(mg, VMA), 48 * MiB);
	assert_int_equal(core_ent(mg, VMB), 16 * MiB);

	/* a min for B is a floor: 24 MiB */
	p.min = p.low = 24 * MiB;	/* policy/: min <= low */
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_MIN | MG_POL_LOW, why,
					  sizeof(why)), 0);
	assert_int_equal(core_ent(mg, VMB), 24 * MiB);
	assert_int_equal(core_ent(mg, VMA), 40 * MiB);
	assert_int_equal(mgf_vm_info(mg, VMB).guaranteed, 24 * MiB);

	/* a quota change reaches the core VM */
	p.quota = 56 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_QUOTA, why,
					  sizeof(why)), 0);
	{
		struct vgmem_vm_stats st;

		vg_vm_get_stats(mgf_core_vm(mg, VMB), &st);
		assert_int_equal(st.quota, 56 * MiB);
	}
	/* max follows quota unless set */
	assert_int_equal(mgf_vm_info(mg, VMB).policy.max, 56 * MiB);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- the LRC file cache counters --------------------------------------- */

/*
 * The embedded backend's GPUs each have a host with a cache: mg_get_lrc
 * counts them, and nothing has been mapped yet, so the cache is empty.
 */
static void test_lrc_counters(void **state)
{
	struct mg_config cfg;
	struct mg_status st;
	struct mg_lrc l;
	struct mg *mg;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mg_get_status(mg, &st), 0);
	memset(&l, 0xa5, sizeof(l));
	assert_int_equal(mg_get_lrc(mg, &l), 0);
	assert_true(st.nr_gpus > 0);
	assert_int_equal(l.gpus, st.nr_gpus);
	assert_int_equal(l.files, 0);
	assert_int_equal(l.pages, 0);
	assert_int_equal(l.vram_used, 0);
	assert_int_equal(l.bytes_per_page, 0);
	assert_int_equal(l.faults_major, 0);
	assert_int_equal(mg_get_lrc(mg, NULL), -EINVAL);
	assert_int_equal(mg_get_lrc(NULL, &l), -EINVAL);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/*
 * The table of domains not managed: noted (and updated in place, keeping
 * since_ms while the state holds), forgotten, swept after a full sync of
 * the domains not seen in it, listed by name; every change is a new view
 * generation. The last reported refusal survives a restart.
 */
static void test_domains_not_managed(void **state)
{
	struct mg_dom_info a = { .uuid = "aaaaaaaa-0000-4000-8000-000000000001",
				 .name = "zeta", .state = MG_DOM_UNMANAGED,
				 .reason = "r1" };
	struct mg_dom_info b = { .uuid = "aaaaaaaa-0000-4000-8000-000000000002",
				 .name = "alpha", .state = MG_DOM_REJECTED,
				 .mdev = VMA, .reason = "r2" };
	struct mg_dom_info bad = a, *d;
	struct mg_gpu_info *g;
	struct mg_vm_info *v;
	struct mg_config cfg;
	size_t n, ng, nv;
	uint64_t gen;
	int64_t since;
	struct mg *mg;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mg_list_doms(mg, &d, &n), 0);
	assert_int_equal(n, 0);
	assert_null(d);
	bad.state = 0;
	assert_int_equal(mg_dom_note(mg, &bad), -EINVAL);
	bad = a;
	bad.uuid[0] = 0;
	assert_int_equal(mg_dom_note(mg, &bad), -EINVAL);

	assert_int_equal(mg_list_view(mg, &g, &ng, &v, &nv, &gen), 0);
	free(g);
	free(v);
	assert_int_equal(mg_dom_note(mg, &a), 0);
	assert_false(mg_view_current(mg, gen));
	assert_int_equal(mg_dom_note(mg, &b), 0);
	assert_int_equal(mg_list_doms(mg, &d, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(d[0].name, "alpha");	/* by name */
	assert_string_equal(d[0].mdev, VMA);
	assert_string_equal(d[1].reason, "r1");
	assert_true(d[1].since_ms > 0);
	since = d[1].since_ms;
	free(d);
	/* the same again: nothing changes, not even the view */
	assert_int_equal(mg_list_view(mg, &g, &ng, &v, &nv, &gen), 0);
	free(g);
	free(v);
	assert_int_equal(mg_dom_note(mg, &a), 0);
	assert_true(mg_view_current(mg, gen));
	/* a new reason in the same state keeps since_ms */
	snprintf(a.reason, sizeof(a.reason), "r1 again");
	usleep(2000);
	assert_int_equal(mg_dom_note(mg, &a), 0);
	assert_int_equal(mg_list_doms(mg, &d, &n), 0);
	assert_string_equal(d[1].reason, "r1 again");
	assert_int_equal(d[1].since_ms, since);
	free(d);
	/* a full sync that sees only b: a leaves */
	mg_dom_sync_begin(mg);
	assert_int_equal(mg_dom_note(mg, &b), 0);
	mg_dom_sync_end(mg);
	assert_int_equal(mg_list_doms(mg, &d, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(d[0].name, "alpha");
	free(d);
	mg_dom_forget(mg, b.uuid);
	mg_dom_forget(mg, b.uuid);
	assert_int_equal(mg_list_doms(mg, &d, &n), 0);
	assert_int_equal(n, 0);

	/* reported refusals: recorded, compared, kept across a restart */
	assert_false(mg_dom_reported(mg, a.uuid, "r1"));
	mg_dom_set_reported(mg, a.uuid, "r1");
	assert_true(mg_dom_reported(mg, a.uuid, "r1"));
	assert_false(mg_dom_reported(mg, a.uuid, "r2"));
	mg_destroy(mg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_true(mg_dom_reported(mg, a.uuid, "r1"));
	mg_dom_set_reported(mg, a.uuid, NULL);
	assert_false(mg_dom_reported(mg, a.uuid, "r1"));
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- refusals change nothing ----------------------------------------- */

static void assert_same_policy(const struct mg_vm_policy *a,
			       const struct mg_vm_policy *b)
{
	assert_memory_equal(a, b, sizeof(*a));
}

static void test_refusals(void **state)
{
	struct mg_vm_policy p = { 0 }, before_a, before_b;
	struct mg_state_policy *sp;
	struct mg_knobs k, kb;
	struct mg_config cfg;
	struct mg *mg;
	char why[MG_WHY_LEN];
	size_t n;
	u64 va;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMB), 16 * MiB, 0, &va), 0);
	mg_tick(mg, 1000);
	before_a = mgf_vm_info(mg, VMA).policy;
	before_b = mgf_vm_info(mg, VMB).policy;

	/* quotas above 200% of 64 MiB */
	p.quota = 65 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_QUOTA, why,
					  sizeof(why)), -ENOSPC);
	assert_non_null(strstr(why, "quota"));
	/* mins above VRAM */
	p.min = p.low = 40 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_MIN | MG_POL_LOW, why, sizeof(why)), 0);
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_MIN | MG_POL_LOW, why,
					  sizeof(why)), -ENOSPC);
	before_a = mgf_vm_info(mg, VMA).policy;
	/* min above max */
	p.min = 8 * MiB;
	p.max = 4 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_MIN | MG_POL_MAX,
					  why, sizeof(why)), -EINVAL);
	assert_true(why[0] != 0);
	/* weight and priority out of range, empty and unknown masks */
	p.weight = 0;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_WEIGHT, why, sizeof(why)), -EINVAL);
	p.weight = 10001;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_WEIGHT, why, sizeof(why)), -EINVAL);
	p.priority = 4;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_PRIORITY, why, sizeof(why)), -EINVAL);
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, 0, why, sizeof(why)), -EINVAL);
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, 64, why, sizeof(why)), -EINVAL);
	p.quota = 0;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_QUOTA, why, sizeof(why)), -EINVAL);
	/* a quota below what B holds */
	p.quota = 8 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_QUOTA, why,
					  sizeof(why)), -EBUSY);
	/* unknown VM */
	assert_int_equal(mg_set_vm_policy(mg, "nope", &p, MG_POL_WEIGHT, why,
					  sizeof(why)), -ENOENT);
	assert_int_equal(mg_get_vm(mg, "nope", &(struct mg_vm_info){ 0 }), -ENOENT);

	{
		struct mg_vm_info ia = mgf_vm_info(mg, VMA), ib = mgf_vm_info(mg, VMB);

		assert_same_policy(&ia.policy, &before_a);
		assert_same_policy(&ib.policy, &before_b);
	}
	{
		struct vgmem_vm_stats st;

		vg_vm_get_stats(mgf_core_vm(mg, VMB), &st);
		assert_int_equal(st.quota, 64 * MiB);
	}

	/* knobs: bad values and a limit the running VMs would break */
	assert_int_equal(mg_get_knobs(mg, &kb), 0);
	k = kb;
	snprintf(k.policy, sizeof(k.policy), "lifo");
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_POLICY, why, sizeof(why)), -EINVAL);
	k.return_interval_ms = 0;
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_RETURN_INTERVAL, why, sizeof(why)), -EINVAL);
	k.thrash_window_s = 0;
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_THRASH_WINDOW, why, sizeof(why)), -EINVAL);
	k.oversub_pct = 150;	/* 128 MiB of quotas > 96 MiB */
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_OVERSUB, why, sizeof(why)), -ENOSPC);
	assert_int_equal(mg_set_knobs(mg, &k, 0, why, sizeof(why)), -EINVAL);
	assert_int_equal(mg_get_knobs(mg, &k), 0);
	assert_memory_equal(&k, &kb, sizeof(k));
	mg_destroy(mg);

	/* the database holds only A's accepted min */
	{
		struct mg_state *st;

		assert_int_equal(mg_state_open(tmp.db, &st), 0);
		assert_int_equal(mg_state_load_policies(st, &sp, &n), 0);
		assert_int_equal(n, 1);
		assert_string_equal(sp[0].id, VMA);
		assert_int_equal(sp[0].mask, MG_POL_MIN | MG_POL_LOW);
		assert_int_equal(sp[0].p.min, 40 * MiB);
		free(sp);
		mg_state_close(st);
	}
	mg_config_free(&cfg);
}

/* ---- restart -------------------------------------------------------- */

static void test_persistence_across_restart(void **state)
{
	struct mg_vm_policy p = { 0 };
	struct mg_event *ev;
	struct mg_config cfg;
	struct mg_knobs k;
	struct mg *mg;
	char why[MG_WHY_LEN];
	uint64_t last;
	size_t n, i;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	p.weight = 777;
	p.low = 8 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_WEIGHT | MG_POL_LOW,
					  why, sizeof(why)), 0);
	assert_int_equal(mg_get_knobs(mg, &k), 0);
	snprintf(k.policy, sizeof(k.policy), "cold");
	k.thrash_window_s = 17;
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_POLICY | MG_KNOB_THRASH_WINDOW,
				      why, sizeof(why)), 0);
	last = 0;
	assert_int_equal(mg_events_since(mg, 0, 1000, &ev, &n), 0);
	assert_true(n >= 4);	/* 2 starts, policy, knobs */
	for (i = 0; i < n; i++) {
		assert_true(ev[i].id > last);
		last = ev[i].id;
	}
	free(ev);
	mg_destroy(mg);

	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mgf_vm_info(mg, VMA).policy.weight, 777);
	assert_int_equal(mgf_vm_info(mg, VMA).policy.low, 8 * MiB);
	assert_true(mgf_vm_info(mg, VMA).operator_policy);
	assert_false(mgf_vm_info(mg, VMB).operator_policy);
	assert_int_equal(mg_get_knobs(mg, &k), 0);
	assert_string_equal(k.policy, "cold");
	assert_int_equal(k.thrash_window_s, 17);
	assert_int_equal(k.oversub_pct, cfg.knobs.oversub_pct);
	{
		struct mg_gpu_info *g;

		assert_int_equal(mg_list_gpus(mg, &g, &n), 0);
		assert_int_equal(n, 1);
		assert_string_equal(g[0].policy, "cold");
		free(g);
	}
	/* history survived; new ids continue after the old ones */
	assert_int_equal(mg_events_since(mg, 0, 1000, &ev, &n), 0);
	assert_true(n >= 6);
	assert_int_equal(ev[0].id, 1);
	for (i = 1; i < n; i++)
		assert_true(ev[i].id > ev[i - 1].id);
	assert_true(ev[n - 1].id > last);
	free(ev);

	/* reset: metadata/defaults again, and that is durable too */
	assert_int_equal(mg_reset_vm_policy(mg, VMA, why, sizeof(why)), 0);
	assert_int_equal(mgf_vm_info(mg, VMA).policy.weight, 100);
	mg_destroy(mg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mgf_vm_info(mg, VMA).policy.weight, 100);
	assert_false(mgf_vm_info(mg, VMA).operator_policy);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- kill -9 during a stream of writes ------------------------------- */

/* The child: a daemon that acknowledges each durable write on the pipe. */
static void writer_child(int fd)
{
	struct mg_vm_policy p = { 0 };
	struct mg_config cfg;
	struct mg_vm_info vi;
	struct mg *mg;
	char why[MG_WHY_LEN];
	uint32_t w;

	cfg_init(&cfg);
	if (mg_create(&cfg, &mg) || mg_get_vm(mg, VMA, &vi))
		_exit(3);
	for (w = vi.policy.weight + 1; w <= 10000; w++) {
		p.weight = w;
		if (mg_set_vm_policy(mg, VMA, &p, MG_POL_WEIGHT, why, sizeof(why)))
			_exit(4);
		if (write(fd, &w, sizeof(w)) != sizeof(w))
			_exit(5);
	}
	_exit(6);
}

static void test_kill9_keeps_acknowledged(void **state)
{
	struct mg_state_policy *sp;
	struct mg_state *st;
	uint32_t last_ack = 100, w;
	int round;
	size_t n;

	(void)state;
	mgf_db_fresh(tmp.db);
	for (round = 0; round < 4; round++) {
		unsigned int want = 5 + 23 * (unsigned int)round, got = 0;
		int pfd[2], status;
		pid_t pid;

		assert_int_equal(pipe(pfd), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(pfd[0]);
			writer_child(pfd[1]);
		}
		close(pfd[1]);
		while (got < want && read(pfd[0], &w, sizeof(w)) == sizeof(w)) {
			last_ack = w;
			got++;
		}
		assert_int_equal(got, want);
		kill(pid, SIGKILL);
		/* acknowledgements already written before the kill count too */
		while (read(pfd[0], &w, sizeof(w)) == sizeof(w))
			last_ack = w;
		close(pfd[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));

		assert_int_equal(mg_state_open(tmp.db, &st), 0);
		assert_int_equal(mg_state_load_policies(st, &sp, &n), 0);
		assert_int_equal(n, 1);
		/* every acknowledged write is there; at most one more */
		assert_true(sp[0].p.weight >= last_ack);
		assert_true(sp[0].p.weight <= last_ack + 1);
		last_ack = sp[0].p.weight;
		free(sp);
		mg_state_close(st);
	}
}

/* ---- events ------------------------------------------------------------ */

struct sub_rec {
	uint64_t ids[64];
	char types[64][16];
	unsigned int n;
};

static void sub_cb(void *priv, const struct mg_event *ev)
{
	struct sub_rec *r = priv;

	if (r->n < 64) {
		r->ids[r->n] = ev->id;
		snprintf(r->types[r->n], sizeof(r->types[0]), "%s", ev->type);
		r->n++;
	}
}

static void test_events_and_subscribers(void **state)
{
	struct mg_vm_policy p = { 0 };
	struct sub_rec rec = { 0 };
	struct mg_config cfg;
	struct mg_event *ev;
	struct mg *mg;
	char why[MG_WHY_LEN];
	unsigned int i;
	size_t n;
	int h;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	h = mg_subscribe(mg, sub_cb, &rec);
	assert_true(h >= 0);
	p.weight = 5;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_WEIGHT, why, sizeof(why)), 0);
	p.weight = 0;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_WEIGHT, why, sizeof(why)), -EINVAL);
	assert_int_equal(mg_vm_stop(mg, VMB), 0);
	assert_false(mgf_vm_info(mg, VMB).running);
	assert_int_equal(mgf_vm_info(mg, VMB).entitlement, 0);
	assert_int_equal(rec.n, 2);
	assert_string_equal(rec.types[0], "policy");
	assert_string_equal(rec.types[1], "lifecycle");
	assert_true(rec.ids[1] > rec.ids[0]);
	mg_unsubscribe(mg, h);
	assert_int_equal(mg_vm_start(mg, VMB, "b", &(struct mg_vm_policy){ .quota = 64 * MiB },
				     MG_POL_QUOTA, -1, MG_SRC_CONFIG, why, sizeof(why)), 0);
	assert_int_equal(rec.n, 2);

	/* events after the policy event, from the ring */
	assert_int_equal(mg_events_since(mg, rec.ids[0], 10, &ev, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ev[0].id, rec.ids[1]);
	assert_string_equal(ev[1].type, "lifecycle");
	assert_non_null(strstr(ev[1].detail, "\"started\""));
	free(ev);
	assert_int_equal(mg_events_since(mg, 0, 0, &ev, &n), -EINVAL);
	for (i = 0; i < 3; i++) {
		assert_int_equal(mg_events_since(mg, UINT64_MAX - i, 10, &ev, &n), 0);
		assert_int_equal(n, 0);
		free(ev);
	}
	/* a VM refused at start: error event, not running, not kept */
	assert_int_equal(mg_vm_start(mg, "00000000-0000-4000-8000-0000000000cc", "c",
				     &(struct mg_vm_policy){ .quota = 64 * MiB },
				     MG_POL_QUOTA, -1, MG_SRC_CONFIG, why,
				     sizeof(why)), -ENOSPC);
	assert_int_equal(mg_get_vm(mg, "c", &(struct mg_vm_info){ 0 }), -ENOENT);
	assert_int_equal(mg_events_since(mg, 0, 1000, &ev, &n), 0);
	assert_string_equal(ev[n - 1].type, "error");
	assert_non_null(strstr(ev[n - 1].detail, "quota"));
	free(ev);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- the audit trail ---------------------------------------------------- */

/* The newest event's detail, parsed; it must be a policy event. */
static json_t *last_policy(struct mg *mg, const char *vm)
{
	struct mg_event *ev;
	json_t *d;
	size_t n;

	assert_int_equal(mg_events_since(mg, 0, 1000, &ev, &n), 0);
	assert_true(n > 0);
	assert_string_equal(ev[n - 1].type, "policy");
	assert_string_equal(ev[n - 1].vm, vm);
	d = json_loads(ev[n - 1].detail, 0, NULL);
	if (!d)
		fail_msg("not JSON: %s", ev[n - 1].detail);
	/* the internal mask is gone: field names say what changed */
	assert_null(json_object_get(d, "mask"));
	free(ev);
	return d;
}

static void assert_changed(json_t *d, const char *const *names, size_t nn)
{
	json_t *c = json_object_get(d, "changed");
	size_t i;

	assert_true(json_is_array(c));
	assert_int_equal(json_array_size(c), nn);
	for (i = 0; i < nn; i++)
		assert_string_equal(json_string_value(json_array_get(c, i)),
				    names[i]);
}

static json_int_t side(json_t *d, const char *which, const char *field)
{
	json_t *v = json_object_get(json_object_get(d, which), field);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void test_policy_audit(void **state)
{
	static const char *const weight[] = { "weight" };
	static const char *const minlow[] = { "min", "low" };
	static const char *const reset[] = { "min", "low", "weight" };
	static const char *const oversub[] = { "oversub_pct" };
	struct mg_vm_policy p = { 0 };
	struct mg_vm_info vi;
	struct mg_config cfg;
	struct mg_knobs k;
	struct mg *mg;
	char why[MG_WHY_LEN];
	json_int_t w0;
	json_t *d;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mg_get_vm(mg, VMA, &vi), 0);
	w0 = vi.policy.weight;

	/* mgmtd's own thread, nobody set: mgmtd */
	p.weight = 5;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_WEIGHT, why,
					  sizeof(why)), 0);
	d = last_policy(mg, VMA);
	assert_string_equal(json_string_value(json_object_get(d, "source")),
			    "operator");
	assert_string_equal(json_string_value(json_object_get(d, "name")), "a");
	assert_string_equal(json_string_value(json_object_get(d, "by")), "mgmtd");
	assert_null(json_object_get(d, "reset"));
	assert_changed(d, weight, 1);
	assert_int_equal(side(d, "old", "weight"), w0);
	assert_int_equal(side(d, "new", "weight"), 5);
	assert_null(json_object_get(json_object_get(d, "new"), "quota"));
	json_decref(d);

	/* as a REST request sets it; quotes in a user name stay JSON */
	mg_actor_set("uid 4242 (a \"b\")");
	p.min = p.low = 8 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_MIN | MG_POL_LOW,
					  why, sizeof(why)), 0);
	d = last_policy(mg, VMA);
	assert_string_equal(json_string_value(json_object_get(d, "by")),
			    "uid 4242 (a \"b\")");
	assert_changed(d, minlow, 2);
	assert_int_equal(side(d, "old", "min"), 0);
	assert_int_equal(side(d, "old", "low"), 0);
	assert_int_equal(side(d, "new", "min"), 8 * MiB);
	assert_int_equal(side(d, "new", "low"), 8 * MiB);
	json_decref(d);

	/* a reset names every field that moved back */
	mg_actor_set("token");
	assert_int_equal(mg_reset_vm_policy(mg, VMA, why, sizeof(why)), 0);
	d = last_policy(mg, VMA);
	assert_true(json_is_true(json_object_get(d, "reset")));
	assert_string_equal(json_string_value(json_object_get(d, "by")), "token");
	assert_changed(d, reset, 3);
	assert_int_equal(side(d, "old", "weight"), 5);
	assert_int_equal(side(d, "new", "weight"), w0);
	assert_int_equal(side(d, "new", "min"), 0);
	json_decref(d);

	/* knobs: the same shape, by name */
	assert_int_equal(mg_get_knobs(mg, &k), 0);
	k.oversub_pct += 10;
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_OVERSUB, why,
				      sizeof(why)), 0);
	d = last_policy(mg, "");
	assert_string_equal(json_string_value(json_object_get(d, "by")), "token");
	assert_changed(d, oversub, 1);
	assert_int_equal(side(d, "old", "oversub_pct"), k.oversub_pct - 10);
	assert_int_equal(side(d, "new", "oversub_pct"), k.oversub_pct);
	json_decref(d);
	mg_actor_set(NULL);
	assert_string_equal(mg_actor(), "mgmtd");
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- thrash detection -------------------------------------------------- */

static void test_thrash_step(void **state)
{
	struct vgmem_vm_stats st = { 0 };
	struct mg_thrash t;
	int64_t now;

	(void)state;
	mg_thrash_reset(&t);
	st.allocated = 64 * MiB;
	st.relocated = 16 * MiB;
	/* relocating every second above a 32 MiB entitlement */
	for (now = 0; now < 10000; now += 1000) {
		st.reloc_out_chunks += 2;
		assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, now, 10000, 3000),
				 MG_THRASH_NONE);
	}
	st.reloc_in_chunks++;
	/* first active tick was t=1000 (t=0 primed): 11000 reaches 10 s */
	assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, 10000, 10000, 3000),
			 MG_THRASH_NONE);
	st.reloc_in_chunks++;
	assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, 11000, 10000, 3000),
			 MG_THRASH_RAISE);
	st.reloc_in_chunks++;
	assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, 12000, 10000, 3000),
			 MG_THRASH_NONE);	/* raised once */
	/* quiet within grace keeps it, beyond grace clears it */
	assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, 14000, 10000, 3000),
			 MG_THRASH_NONE);
	assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, 15500, 10000, 3000),
			 MG_THRASH_CLEAR);

	/* a gap longer than grace restarts the clock */
	mg_thrash_reset(&t);
	for (now = 0; now <= 6000; now += 1000) {
		st.reloc_out_chunks++;
		mg_thrash_step(&t, &st, 32 * MiB, now, 10000, 3000);
	}
	mg_thrash_step(&t, &st, 32 * MiB, 10000, 10000, 3000);	/* quiet 4 s */
	for (now = 11000; now < 20000; now += 1000) {
		st.reloc_out_chunks++;
		assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, now, 10000, 3000),
				 MG_THRASH_NONE);
	}

	/* within its entitlement, or nothing relocated: never */
	mg_thrash_reset(&t);
	for (now = 0; now < 30000; now += 1000) {
		st.reloc_out_chunks++;
		assert_int_equal(mg_thrash_step(&t, &st, 64 * MiB, now, 10000, 3000),
				 MG_THRASH_NONE);
	}
	st.relocated = 0;
	for (now = 30000; now < 60000; now += 1000) {
		st.reloc_out_chunks++;
		assert_int_equal(mg_thrash_step(&t, &st, 32 * MiB, now, 10000, 3000),
				 MG_THRASH_NONE);
	}
}

/* The whole path: a thrashing VM in the model raises one advisory. */
static void test_thrash_advisory_in_model(void **state)
{
	struct mg_vm_policy p = { 0 };
	struct mg_config cfg;
	struct mg_event *ev;
	struct mg_knobs k;
	struct mg *mg;
	char why[MG_WHY_LEN];
	unsigned int advisories = 0, i;
	u64 va[64];
	int64_t now;
	size_t n;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mg_get_knobs(mg, &k), 0);
	k.thrash_window_s = 5;
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_THRASH_WINDOW, why, sizeof(why)), 0);
	/* B is held to 16 MiB and has a min on A that fills the rest */
	p.max = 16 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMB, &p, MG_POL_MAX, why, sizeof(why)), 0);
	p.min = p.low = 48 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_MIN | MG_POL_LOW, why,
					  sizeof(why)), 0);
	assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMA), 48 * MiB, 0, &va[0]), 0);
	for (now = 0; now < 12000; now += 1000) {
		/* B churns: allocate beyond its entitlement, free, again */
		for (i = 0; i < 4; i++)
			assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMB), 8 * MiB, 0,
						     &va[1 + i]), 0);
		mg_tick(mg, now);
		for (i = 0; i < 2; i++)
			assert_int_equal(vg_bo_free(mgf_core_vm(mg, VMB), va[1 + i]), 0);
		for (i = 2; i < 4; i++)
			assert_int_equal(vg_bo_free(mgf_core_vm(mg, VMB), va[1 + i]), 0);
	}
	assert_int_equal(mg_events_since(mg, 0, 10000, &ev, &n), 0);
	for (i = 0; i < n; i++)
		if (!strcmp(ev[i].type, "advisory") && !strcmp(ev[i].vm, VMB))
			advisories++;
	free(ev);
	assert_int_equal(advisories, 1);
	assert_true(mgf_vm_info(mg, VMB).advisory);
	assert_false(mgf_vm_info(mg, VMA).advisory);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- config ---------------------------------------------------------- */

static void test_config(void **state)
{
	struct mg_embedded_vm vm;
	struct mg_config cfg;
	char err[256], path[160];
	uint64_t v;
	FILE *f;
	char *argv[] = { "mgmtd", "--config", path, "--oversub-pct=300",
			 "--hold-spare", "--log-level", "debug", NULL };

	(void)state;
	assert_int_equal(mg_parse_size("8G", &v), 0);
	assert_int_equal(v, 8ull << 30);
	assert_int_equal(mg_parse_size("1.5G", &v), 0);
	assert_int_equal(v, 3ull << 29);
	assert_int_equal(mg_parse_size("512MiB", &v), 0);
	assert_int_equal(v, 512 * MiB);
	assert_int_equal(mg_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(mg_parse_size("2GB", &v), 0);
	assert_int_equal(v, 2000000000);
	assert_int_equal(mg_parse_size("", &v), -EINVAL);
	assert_int_equal(mg_parse_size("-1", &v), -EINVAL);
	assert_int_equal(mg_parse_size("1X", &v), -EINVAL);
	assert_int_equal(mg_parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(mg_parse_size("17179869184G", &v), -EINVAL);
	assert_int_equal(mg_parse_size("0.3", &v), -EINVAL);	/* not whole bytes */

	assert_int_equal(mg_parse_embedded_vm("x:" VMA ":1G:1", &vm), 0);
	assert_string_equal(vm.name, "x");
	assert_int_equal(vm.gpu, 1);
	assert_int_equal(vm.quota, 1ull << 30);
	assert_int_equal(mg_parse_embedded_vm("x:" VMA, &vm), -EINVAL);
	assert_int_equal(mg_parse_embedded_vm("x:not-a-uuid:1G", &vm), -EINVAL);
	assert_int_equal(mg_parse_embedded_vm(":" VMA ":1G", &vm), -EINVAL);
	assert_int_equal(mg_parse_embedded_vm("x:" VMA ":0", &vm), -EINVAL);
	assert_false(mg_uuid_valid("00000000-0000-4000-8000-00000000000A"));

	snprintf(path, sizeof(path), "%s/mgmtd.conf", tmp.path);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# comment\n[daemon]\nstate_db = \"/x/y.db\"\noversub_pct = 250\n"
		"[embedded]\nembedded_vm = a:" VMA ":1G\n");
	fclose(f);
	assert_int_equal(mg_config_defaults(&cfg), 0);
	assert_int_equal(mg_config_parse_args(&cfg, 7, argv, err, sizeof(err)), 0);
	assert_string_equal(cfg.state_db, "/x/y.db");
	assert_int_equal(cfg.knobs.oversub_pct, 300);	/* the flag wins */
	assert_true(cfg.hold_spare);
	assert_int_equal(cfg.log_level, MG_LOG_DEBUG);
	assert_int_equal(cfg.nr_embedded_vms, 1);
	/* the same VM twice is refused */
	assert_int_equal(mg_config_set(&cfg, "embedded_vm", "b:" VMA ":1G", err,
				       sizeof(err)), -EINVAL);
	assert_int_equal(mg_config_set(&cfg, "no_such_key", "1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no_such_key"));
	assert_int_equal(mg_config_set(&cfg, "oversub_pct", "0", err, sizeof(err)), -EINVAL);
	assert_int_equal(mg_config_set(&cfg, "return_interval_ms", "abc", err, sizeof(err)), -EINVAL);
	assert_int_equal(mg_config_set(&cfg, "policy", "fifo", err, sizeof(err)), -EINVAL);
	assert_int_equal(mg_config_set(&cfg, "unix_mode", "999", err, sizeof(err)), -EINVAL);
	assert_int_equal(cfg.knobs.oversub_pct, 300);
	mg_config_free(&cfg);

	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "oversub_pct = 250\nthis line is wrong\n");
	fclose(f);
	assert_int_equal(mg_config_defaults(&cfg), 0);
	assert_int_equal(mg_config_load_file(&cfg, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2:"));
	mg_config_free(&cfg);
}

/* ---- domain XML -------------------------------------------------------- */

#define DOM_HEAD "<domain type='kvm'><name>d</name><metadata>"
#define DOM_DEV  "</metadata><devices><hostdev mode='subsystem' type='mdev' model='vfio-pci'>" \
		 "<source><address uuid='C2177883-F1BB-47F0-914D-32A22E3A8804'/></source>" \
		 "</hostdev></devices></domain>"
#define NS "xmlns:vgmem='https://vgmem.dev/xmlns/vgmem/1'"

static int parse(const char *xml, char *mdev, struct mg_vm_policy *m,
		 unsigned int *mask, int *gpu, char *err)
{
	return mg_domain_parse(xml, mdev, MG_ID_LEN, m, mask, gpu, err, 256);
}

static void test_domain_xml(void **state)
{
	char mdev[MG_ID_LEN], err[256];
	struct mg_vm_policy m;
	unsigned int mask;
	int gpu;

	(void)state;
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpu " NS " quota='8G' weight='100' min='1G'"
			       " low='2G' max='6G' priority='1' gpu='1'/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), 0);
	assert_string_equal(mdev, "c2177883-f1bb-47f0-914d-32a22e3a8804");
	assert_int_equal(mask, MG_POL_ALL);
	assert_int_equal(m.quota, 8ull << 30);
	assert_int_equal(m.min, 1ull << 30);
	assert_int_equal(m.low, 2ull << 30);
	assert_int_equal(m.max, 6ull << 30);
	assert_int_equal(m.weight, 100);
	assert_int_equal(m.priority, 1);
	assert_int_equal(gpu, 1);

	/* no vgmem element: not ours, not an error */
	assert_int_equal(parse(DOM_HEAD DOM_DEV, mdev, &m, &mask, &gpu, err), 0);
	assert_int_equal(mask, 0);
	/* another namespace's gpu element is not ours either */
	assert_int_equal(parse(DOM_HEAD "<o:gpu xmlns:o='urn:other' quota='x'/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), 0);
	assert_int_equal(mask, 0);

	/* errors name what is wrong */
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpu " NS " quota='8Q'/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_non_null(strstr(err, "quota"));
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpu " NS " quota='8G' weight='0'/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_non_null(strstr(err, "weight"));
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpu " NS " quota='8G' priority='9'/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpu " NS " quota='8G' colour='red'/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_non_null(strstr(err, "colour"));
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpu " NS " weight='5'/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_non_null(strstr(err, "quota"));
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpu " NS " quota='1G'/><vgmem:gpu " NS
			       " quota='1G'/>" DOM_DEV, mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_int_equal(parse(DOM_HEAD "<vgmem:gpus " NS "/>" DOM_DEV,
			       mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_int_equal(parse("<domain><metadata><vgmem:gpu " NS " quota='1G'/>"
			       "</metadata><devices><hostdev mode='subsystem' type='mdev'>"
			       "<source><address uuid='zz'/></source></hostdev></devices></domain>",
			       mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_int_equal(parse("<domain><name>", mdev, &m, &mask, &gpu, err), -EINVAL);
	assert_int_equal(parse("<notadomain/>", mdev, &m, &mask, &gpu, err), -EINVAL);
	/* entity tricks are not expanded into anything */
	assert_int_equal(parse("<!DOCTYPE d [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
			       "<domain><metadata><vgmem:gpu " NS " quota='&x;'/></metadata></domain>",
			       mdev, &m, &mask, &gpu, err), -EINVAL);

	/* the metadata element alone, as virDomainGetMetadata gives it */
	assert_int_equal(mg_metadata_parse("<vgmem:gpu " NS " quota='2G' max='1G'/>",
					   &m, &mask, &gpu, err, sizeof(err)), 0);
	assert_int_equal(mask, MG_POL_QUOTA | MG_POL_MAX);
	assert_int_equal(mg_metadata_parse("<gpu quota='2G'/>", &m, &mask, &gpu, err,
					   sizeof(err)), 0);
	assert_int_equal(m.quota, 2ull << 30);
	assert_int_equal(mg_metadata_parse("<gpus quota='2G'/>", &m, &mask, &gpu, err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mg_metadata_parse("<o:gpu xmlns:o='urn:other' quota='2G'/>",
					   &m, &mask, &gpu, err, sizeof(err)), -EINVAL);
	assert_int_equal(mg_metadata_parse("garbage", &m, &mask, &gpu, err,
					   sizeof(err)), -EINVAL);
}

/*
 * A refused policy names the VM, the field as the user wrote it and its
 * size as written (issue 17 item 4): REST bodies through the same parser
 * as the server, domains through the same parser as libvirt.c; fields not
 * written in the refused input show their value in binary units.
 */
static void policy_rest(struct mg *mg, const char *id, bool put,
			const char *body, int want, const char *msg)
{
	struct mg_vm_policy p;
	struct mg_pol_text txt;
	struct rj_error e;
	unsigned int mask;
	char why[MG_WHY_LEN] = "";

	assert_int_equal(rj_parse_policy(body, strlen(body), put, &p, &mask,
					 &txt, &e), 0);
	assert_int_equal(mg_set_vm_policy_text(mg, id, &p, mask, &txt, why,
					       sizeof(why)), want);
	if (msg)
		assert_string_equal(why, msg);
}

static void test_policy_messages(void **state)
{
	char mdev[MG_ID_LEN], err[256], why[MG_WHY_LEN];
	struct mg_pol_text txt;
	struct mg_vm_policy m;
	struct mg_config cfg;
	unsigned int mask;
	struct mg *mg;
	int gpu;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);

	/* PATCH: min against the low set before (vgmemctl --patch --min) */
	policy_rest(mg, "a", false, "{\"low\":\"32M\",\"max\":\"48MiB\"}", 0, NULL);
	policy_rest(mg, "a", false, "{\"min\":\"40M\"}", -EINVAL,
		    "a: min 40M is above low 32MiB");
	/* an integer is bytes, as written */
	policy_rest(mg, "a", false, "{\"max\":100663296}", -EINVAL,
		    "a: max 100663296 is above quota 64MiB");
	/* PUT without low: low is min, so the conflict is min's with max */
	policy_rest(mg, "b", true,
		    "{\"quota\":\"64M\",\"min\":\"48m\",\"max\":\"16MiB\"}",
		    -EINVAL, "b: min 48m is above max 16MiB");
	/* nor max: it is quota */
	policy_rest(mg, "b", true, "{\"quota\":\"32M\",\"min\":\"0.5G\"}",
		    -EINVAL, "b: min 0.5G is above quota 32M");
	/* the policy engine's own refusals name the VM too (the last guard) */
	policy_rest(mg, "b", false, "{\"weight\":0}", -EINVAL,
		    "b: weight 0 is outside 1..10000");
	assert_int_equal(mgf_vm_info(mg, VMB).policy.weight, 100);

	/* a domain: min='..' max='..' without low is min above max */
	assert_int_equal(mg_domain_parse_text(DOM_HEAD "<vgmem:gpu " NS
					      " quota='64M' min='48MiB' max='16M'/>" DOM_DEV,
					      mdev, MG_ID_LEN, &m, &mask, &gpu,
					      &txt, err, sizeof(err)), 0);
	assert_int_equal(mg_vm_define_text(mg, mdev, "web1", &m, mask, &txt,
					   MG_SRC_LIBVIRT, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "domain web1: min='48MiB' is above max='16M'");
	/* the same domain without the strings still names the field set */
	assert_int_equal(mg_vm_define(mg, mdev, "web1", &m, mask, MG_SRC_LIBVIRT,
				      why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "web1: min 48MiB is above max 16MiB");
	/* neither low nor max: min against quota */
	assert_int_equal(mg_domain_parse_text(DOM_HEAD "<vgmem:gpu " NS
					      " quota='64M' min='80M'/>" DOM_DEV,
					      mdev, MG_ID_LEN, &m, &mask, &gpu,
					      &txt, err, sizeof(err)), 0);
	assert_int_equal(mg_vm_start_text(mg, mdev, "web1", &m, mask, &txt, -1,
					  MG_SRC_LIBVIRT, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "domain web1: min='80M' is above quota='64M'");
	/* a live metadata change of a running VM */
	assert_int_equal(mg_metadata_parse_text("<gpu quota='64M' low='40M' max='20M'/>",
						&m, &mask, &gpu, &txt, err,
						sizeof(err)), 0);
	assert_int_equal(mg_vm_set_meta_text(mg, VMB, &m, mask, &txt, -1, why,
					     sizeof(why)), -EINVAL);
	assert_string_equal(why, "domain b: low='40M' is above max='20M'");
	/* a field the operator set overrides the domain's: not quoted */
	assert_int_equal(mg_metadata_parse_text("<gpu quota='64M' min='56M'/>",
						&m, &mask, &gpu, &txt, err,
						sizeof(err)), 0);
	assert_int_equal(mg_vm_set_meta_text(mg, VMA, &m, mask, &txt, -1, why,
					     sizeof(why)), -EINVAL);
	assert_string_equal(why, "domain a: min='56M' is above low 32MiB");
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/*
 * A min without a low is accepted: where no layer sets low, it is min
 * (docs/mgmtd.md, LIBVIRT DOMAINS); a low set by either layer stays.
 */
static void test_min_alone(void **state)
{
	struct mg_vm_policy meta = { .quota = 8ull << 30, .min = 1ull << 30 };
	struct mg_vm_policy op = { .min = 2ull << 30, .low = 512 * MiB };
	struct mg_vm_policy out;

	(void)state;
	mg_effective(&meta, MG_POL_QUOTA | MG_POL_MIN, &op, 0, &out);
	assert_true(out.min == 1ull << 30 && out.low == 1ull << 30);
	assert_true(out.max == 8ull << 30);
	mg_effective(&meta, MG_POL_QUOTA | MG_POL_MIN, &op, MG_POL_MIN, &out);
	assert_true(out.min == 2ull << 30 && out.low == 2ull << 30);
	mg_effective(&meta, MG_POL_QUOTA | MG_POL_MIN, &op,
		     MG_POL_MIN | MG_POL_LOW, &out);
	assert_true(out.min == 2ull << 30 && out.low == 512 * MiB);
}

static void test_json_escape(void **state)
{
	char out[16];

	(void)state;
	mg_json_escape(out, sizeof(out), "a\"b\\c\n\x01");
	assert_string_equal(out, "a\\\"b\\\\c\\n\\u0001");
	mg_json_escape(out, 6, "abcdefgh");
	assert_string_equal(out, "abcde");
	mg_json_escape(out, 5, "ab\xc3\xa9z");	/* é would be cut: dropped */
	assert_string_equal(out, "ab\xc3\xa9");
	mg_json_escape(out, 4, "ab\xc3\xa9z");
	assert_string_equal(out, "ab");
}

/*
 * The dry-run admission on the real model: the same checks and entitlement
 * computation as a start, and nothing changes.
 */
static void test_admission_dry_run(void **state)
{
	struct mg_vm_policy p = { .weight = 100 };
	struct mg_admission a, b;
	struct mg_knobs k = { .oversub_pct = 400 };
	struct mg_config cfg;
	struct mg_status st0, st1;
	struct mg *mg;
	char why[MG_WHY_LEN];
	u64 va;

	(void)state;
	mgf_db_fresh(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mg_get_status(mg, &st0), 0);

	/* Two 64 MiB VMs on 64 MiB at 200 %: no room for a third. */
	p.quota = p.max = 32 * MiB;
	assert_int_equal(mg_admission_query(mg, -1, &p, &a, why, sizeof(why)), 0);
	assert_false(a.admitted);
	assert_int_equal(a.gpu, -1);
	assert_string_equal(a.code, "quota-limit");
	assert_true(strlen(a.reason) > 0);
	assert_int_equal(mg_admission_query(mg, 0, &p, &a, why, sizeof(why)), 0);
	assert_false(a.admitted);
	assert_int_equal(a.gpu, 0);
	assert_int_equal(a.vms, 2);
	assert_int_equal(a.quotas, 160 * MiB);
	assert_int_equal(a.quota_limit, 128 * MiB);

	/* At 400 % it fits, and takes what the idle VMs leave. */
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_OVERSUB, why, sizeof(why)), 0);
	assert_int_equal(mg_admission_query(mg, -1, &p, &a, why, sizeof(why)), 0);
	assert_true(a.admitted);
	assert_int_equal(a.gpu, 0);
	assert_string_equal(a.code, "ok");
	assert_int_equal(a.entitlement, 32 * MiB);
	/* With the others busy, its fair share (a third) is less. */
	assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMA), 48 * MiB, 0, &va), 0);
	assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMB), 48 * MiB, 0, &va), 0);
	mg_tick(mg, 1000);
	assert_int_equal(mg_admission_query(mg, 0, &p, &b, why, sizeof(why)), 0);
	assert_true(b.admitted);
	assert_true(b.entitlement > 0 && b.entitlement < a.entitlement);
	/* A min giving it a guarantee shows as such. */
	p.min = p.low = 8 * MiB;
	assert_int_equal(mg_admission_query(mg, 0, &p, &b, why, sizeof(why)), 0);
	assert_true(b.admitted);
	assert_true(b.guaranteed >= 8 * MiB);

	/* Errors: no such GPU, a policy no VM may have. */
	assert_int_equal(mg_admission_query(mg, 7, &p, &a, why, sizeof(why)), -ENOENT);
	p.min = 40 * MiB;
	assert_int_equal(mg_admission_query(mg, 0, &p, &a, why, sizeof(why)), -EINVAL);
	assert_true(strlen(why) > 0);

	/* Nothing changed: the same VMs, the same answer. */
	assert_int_equal(mg_get_status(mg, &st1), 0);
	assert_int_equal(st1.nr_vms, st0.nr_vms);
	assert_int_equal(mg_admission_query(mg, 0, &p, &a, why, sizeof(why)), -EINVAL);
	p.min = p.low = 8 * MiB;
	assert_int_equal(mg_admission_query(mg, 0, &p, &a, why, sizeof(why)), 0);
	assert_memory_equal(&a, &b, sizeof(a));	/* asked again: the same */
	mg_destroy(mg);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_applied_to_core),
		cmocka_unit_test(test_lrc_counters),
		cmocka_unit_test(test_domains_not_managed),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_persistence_across_restart),
		cmocka_unit_test(test_kill9_keeps_acknowledged),
		cmocka_unit_test(test_events_and_subscribers),
		cmocka_unit_test(test_policy_audit),
		cmocka_unit_test(test_thrash_step),
		cmocka_unit_test(test_thrash_advisory_in_model),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_domain_xml),
		cmocka_unit_test(test_min_alone),
		cmocka_unit_test(test_policy_messages),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_admission_dry_run),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
