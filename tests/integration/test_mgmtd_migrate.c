// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Live migration on a thrash advisory, for real: mgmtd's model (embedded
 * backend, in this process) follows a private source libvirtd, a VM
 * thrashes, the advisory asks libvirt to live-migrate its domain to the
 * configured migrate_uri, and the domain ends up running on a second
 * private libvirtd, the destination. A migration to a URI where no
 * libvirtd listens gives an error event and changes nothing else.
 *
 * Two daemons on one host: libvirt refuses a migration between daemons
 * with the same host UUID ("Attempt to migrate guest to the same host"),
 * and two privileged daemons would share /run/libvirt/qemu. So both run
 * in session mode (as nobody when the test runs as root), each with HOME
 * and XDG_* in a directory of its own (sockets, qemu state, domains) and
 * a libvirtd.conf with a host_uuid of its own. They are reached through
 * qemu+unix:///session?socket=...; the source connects to the destination
 * itself (peer to peer). qemu's migration stream goes over TCP, as
 * between two hosts, to the destination's migration_host: a non-loopback
 * IPv4 address of this machine (libvirt refuses a loopback one), else its
 * hostname (unless that is localhost..., which libvirt refuses too: then
 * the cases are skipped, saying so).
 *
 * The domain is a 32 MiB TCG guest with no disk, no network and no mdev:
 * a domain with a vgmem <hostdev type='mdev'> cannot start without a
 * vGPU of vgmem.ko (libvirt opens the mdev's sysfs node and VFIO group),
 * and the embedded backend has none. So the VM is started in the model
 * as libvirt's sync starts a managed domain (mg_vm_start, source libvirt,
 * named after the domain, which is what a migration looks up) and thrashes
 * on the embedded backend; libvirt does everything else for real. The
 * test drives mg_tick() with its own clock (recompute_ms is an hour), so a
 * 5 s thrash window costs no real time; migrations themselves take 2-4 s.
 *
 * Without libvirtd, virsh or qemu-system-x86_64 the cases are skipped
 * with the reason (scripts/install-deps.sh installs them).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "tests/unit/mg_fixture.h"
#include "mgmtd/metrics.h"
#include "libvirtd_fixture.h"

#define MiB		(1ull << 20)
#define WAIT_MS		40000	/* a slow shared host, not a timing test */
#define VMA		"00000000-0000-4000-8000-0000000000a1"
#define VMM		"00000000-0000-4000-8000-0000000000f1"
#define VMN		"00000000-0000-4000-8000-0000000000f2"
/* the one setting that lets two daemons on one host migrate */
#define SRC_HOST_UUID	"6f1c2a3b-0000-4000-8000-00000000051c"
#define DST_HOST_UUID	"6f1c2a3b-0000-4000-8000-00000000d571"

static struct {
	struct lvd_host host;
	char skip[300];
	char tmp[64];
	char db[160];
	struct lvd src, dst;
} T;

/* ---- processes -------------------------------------------------------- */

static void on_signal(int sig)
{
	/* async-signal-safe only; guests are reaped by their daemon's death */
	if (T.src.pid > 0)
		kill(-T.src.pid, SIGKILL);
	if (T.dst.pid > 0)
		kill(-T.dst.pid, SIGKILL);
	_exit(128 + sig);
}

static void fail_with_logs(const char *what)
{
	fx_print_tail(T.src.log);
	fx_print_tail(T.dst.log);
	fail_msg("%s", what);
}

/*
 * Where the destination's qemu is reached for the migration stream: a
 * non-loopback IPv4 address of this machine, else "" (its hostname).
 * False if neither can work.
 */
static bool migration_host(char *out, size_t len)
{
	struct ifaddrs *ifa, *i;
	char host[256] = "";

	out[0] = 0;
	if (getifaddrs(&ifa) == 0) {
		for (i = ifa; i && !out[0]; i = i->ifa_next) {
			const struct sockaddr_in *sin =
				(const struct sockaddr_in *)(const void *)i->ifa_addr;

			if (!sin || sin->sin_family != AF_INET ||
			    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP) ||
			    (ntohl(sin->sin_addr.s_addr) >> 24) == 127)
				continue;
			inet_ntop(AF_INET, &sin->sin_addr, out, (socklen_t)len);
		}
		freeifaddrs(ifa);
	}
	if (out[0])
		return true;
	return gethostname(host, sizeof(host) - 1) == 0 &&
	       strncmp(host, "localhost", 9) != 0;
}

/* A persistent, running 32 MiB TCG guest without disk, net or mdev. */
static void define_and_start(const char *name, const char *uuid)
{
	char xml[1024], path[200], out[2048];

	snprintf(xml, sizeof(xml),
		 "<domain type='qemu'><name>%s</name><uuid>%s</uuid>"
		 "<memory unit='MiB'>32</memory><vcpu>1</vcpu>"
		 "<os><type arch='x86_64' machine='pc'>hvm</type></os>"
		 "<devices><emulator>%s</emulator><video><model type='none'/></video>"
		 "<memballoon model='none'/></devices></domain>",
		 name, uuid, T.host.qemu);
	snprintf(path, sizeof(path), "%s/%s.xml", T.tmp, name);
	assert_int_equal(fx_write_file(path, xml, &T.host.user), 0);
	if (lvd_virsh(&T.src, out, sizeof(out), "define", path, NULL) ||
	    lvd_virsh(&T.src, out, sizeof(out), "start", name, NULL)) {
		print_message("virsh: %s\n", out);
		fail_with_logs("cannot define and start a guest on the source libvirtd");
	}
}

/* "running", "shut off", ... or "" if the daemon does not know it. */
static void domstate(const struct lvd *d, const char *name, char *out,
		     size_t len)
{
	char *nl;

	if (lvd_virsh(d, out, len, "domstate", name, NULL) != 0) {
		out[0] = 0;
		return;
	}
	nl = strchr(out, '\n');
	if (nl)
		*nl = 0;
}

static bool persistent(const struct lvd *d, const char *name)
{
	char out[2048];

	return lvd_virsh(d, out, sizeof(out), "dominfo", name, NULL) == 0 &&
	       strstr(out, "Persistent:") &&
	       strstr(strstr(out, "Persistent:"), "yes");
}

/* ---- fixture ---------------------------------------------------------- */

/*
 * Both daemons in session mode, each in a directory of its own with a
 * host UUID of its own; the destination's qemu listens on migration_host.
 */
static int group_setup(void **state)
{
	char mhost[64], dir[128];
	int ret;

	(void)state;
	mg_log_set_level(getenv("MG_DEBUG") ? MG_LOG_DEBUG : MG_LOG_ERR - 1);	/* failures are expected: quiet */
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (!lvd_host_probe(&T.host, T.skip, sizeof(T.skip)))
		return 0;
	if (fx_tmpdir(T.tmp, sizeof(T.tmp), "vgmem-mig"))
		return -1;
	snprintf(T.db, sizeof(T.db), "%s/mgmtd.db", T.tmp);
	if (!migration_host(mhost, sizeof(mhost))) {
		snprintf(T.skip, sizeof(T.skip),
			 "no non-loopback IPv4 address and a hostname of localhost: libvirt has no migration_host to use");
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/src", T.tmp);
	ret = lvd_start(&T.src, &T.host, dir, SRC_HOST_UUID, NULL);
	if (!ret) {
		snprintf(dir, sizeof(dir), "%s/dst", T.tmp);
		ret = lvd_start(&T.dst, &T.host, dir, DST_HOST_UUID, mhost);
	}
	if (ret) {
		print_message("cannot start the private libvirtds: %s\n",
			      strerror(-ret));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	lvd_stop(&T.src);
	lvd_stop(&T.dst);
	fx_tmpdir_remove(T.tmp);
	return 0;
}

#define NEED_LIBVIRTD()	FX_SKIP_IF(T.skip)

/* ---- the model -------------------------------------------------------- */

/*
 * mgmtd on the embedded backend (one 64 MiB GPU) following the source
 * libvirtd, migrating to dest; VM a of the configuration holds a 48 MiB
 * guarantee, and the domain's VM (source libvirt) is capped at 16 MiB.
 */
static struct mg *model_start(struct mg_config *cfg, const char *dest,
			      const char *vm, const char *domain,
			      struct mg_libvirt **lv)
{
	struct mg_vm_policy p = { 0 };
	char why[MG_WHY_LEN];
	struct mg_knobs k;
	struct mg *mg;

	mgf_db_fresh(T.db);
	/* the test drives mg_tick() with its own clock */
	mgf_config(cfg, T.db, T.src.uri);
	mgf_set(cfg, "migrate_uri", dest);
	mgf_set(cfg, "embedded_vram", "64M");
	mgf_set(cfg, "embedded_vm", "a:" VMA ":64M");
	assert_int_equal(mg_create(cfg, &mg), 0);
	assert_int_equal(mg_libvirt_start(mg, T.src.uri, lv), 0);
	assert_true(mg_libvirt_connected(*lv));
	assert_int_equal(mg_get_knobs(mg, &k), 0);
	k.thrash_window_s = 5;
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_THRASH_WINDOW, why, sizeof(why)), 0);
	/* as libvirt's sync starts a managed domain (see the top comment) */
	p.quota = 64 * MiB;
	p.max = 16 * MiB;
	assert_int_equal(mg_vm_start(mg, vm, domain, &p, MG_POL_QUOTA | MG_POL_MAX,
				     0, MG_SRC_LIBVIRT, why, sizeof(why)), 0);
	p.min = p.low = 48 * MiB;
	assert_int_equal(mg_set_vm_policy(mg, VMA, &p, MG_POL_MIN | MG_POL_LOW,
					  why, sizeof(why)), 0);
	return mg;
}

static void model_stop(struct mg *mg, struct mg_libvirt *lv,
		       struct mg_config *cfg)
{
	mg_libvirt_stop(lv);	/* waits for migrations in flight */
	mg_destroy(mg);
	mg_config_free(cfg);
}

/*
 * The VM churns above its 16 MiB entitlement, tick after tick of the
 * test's clock, until past the 5 s window. Returns the id of the last
 * event before the churn.
 */
static uint64_t thrash(struct mg *mg, const char *vm)
{
	struct mg_status st;
	u64 va[5];
	int64_t now;
	int i;

	assert_int_equal(mg_get_status(mg, &st), 0);
	assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, VMA), 48 * MiB, 0, &va[0]), 0);
	for (now = 0; now < 9000; now += 1000) {
		for (i = 1; i <= 4; i++)
			assert_int_equal(vg_bo_alloc(mgf_core_vm(mg, vm), 8 * MiB, 0,
						     &va[i]), 0);
		mg_tick(mg, now);
		for (i = 1; i <= 4; i++)
			assert_int_equal(vg_bo_free(mgf_core_vm(mg, vm), va[i]), 0);
	}
	return st.last_event_id;
}

/* The detail of the first event of type for vm after id whose detail
 * has key == val (NULL: any); waits for it. NULL if none came. */
static json_t *await_event(struct mg *mg, uint64_t after, const char *type,
			  const char *vm, const char *key, const char *val)
{
	int64_t end = fx_now_ms() + WAIT_MS;

	for (;;) {
		struct mg_event *ev;
		size_t n, i;

		assert_int_equal(mg_events_since(mg, after, 10000, &ev, &n), 0);
		for (i = 0; i < n; i++) {
			json_t *d;
			const char *v;

			if (strcmp(ev[i].type, type) || strcmp(ev[i].vm, vm))
				continue;
			d = json_loads(ev[i].detail, 0, NULL);
			assert_non_null(d);
			v = json_string_value(json_object_get(d, key));
			if (!val || (v && !strcmp(v, val))) {
				free(ev);
				return d;
			}
			json_decref(d);
		}
		free(ev);
		if (fx_now_ms() > end)
			return NULL;
		usleep(100000);
	}
}

static size_t count_events(struct mg *mg, uint64_t after, const char *type)
{
	struct mg_event *ev;
	size_t n, i, c = 0;

	assert_int_equal(mg_events_since(mg, after, 10000, &ev, &n), 0);
	for (i = 0; i < n; i++)
		c += !strcmp(ev[i].type, type);
	free(ev);
	return c;
}

static bool metric_has(struct mg *mg, const char *line)
{
	struct rbuf b;
	bool has;

	rbuf_init(&b, 65536);
	assert_int_equal(mg_metrics_render(mg, &b), 0);
	assert_false(b.oom);
	has = strstr(b.p, line) != NULL;
	if (!has)
		print_message("metrics lack '%s'\n", line);
	rbuf_free(&b);
	return has;
}

/* ---- cases ------------------------------------------------------------ */

/*
 * A thrashing VM's domain is live-migrated to migrate_uri: the advisory
 * names it, the domain runs (and is persistent) at the destination and is
 * gone from the source, and mgmtd records the success (event, counter,
 * metric).
 */
static void test_thrash_migrates_domain(void **state)
{
	struct mg_config cfg;
	struct mg_libvirt *lv;
	struct mg_status st;
	char s[256];
	uint64_t since;
	json_t *d;
	struct mg *mg;

	(void)state;
	NEED_LIBVIRTD();
	define_and_start("mig1", "5a1e0000-0000-4000-8000-00000000f001");
	domstate(&T.src, "mig1", s, sizeof(s));
	assert_string_equal(s, "running");
	mg = model_start(&cfg, T.dst.uri, VMM, "mig1", &lv);
	assert_true(metric_has(mg, "vgmem_migrations_total{result=\"ok\"} 0\n"));

	since = thrash(mg, VMM);
	d = await_event(mg, since, "advisory", VMM, "state", "raised");
	if (!d)
		fail_with_logs("no advisory raised for the thrashing VM");
	assert_string_equal(json_string_value(json_object_get(d, "migrate_to")),
			    T.dst.uri);
	json_decref(d);
	assert_true(mgf_vm_info(mg, VMM).advisory);
	assert_false(mgf_vm_info(mg, VMA).advisory);

	d = await_event(mg, since, "advisory", VMM, "state", "migrated");
	if (!d) {
		d = await_event(mg, since, "error", VMM, NULL, NULL);
		print_message("migration error: %s\n",
			      d ? json_string_value(json_object_get(d, "reason")) : "none");
		json_decref(d);
		fail_with_logs("the domain was not migrated");
	}
	assert_string_equal(json_string_value(json_object_get(d, "migrate_to")),
			    T.dst.uri);
	assert_string_equal(json_string_value(json_object_get(d, "name")), "mig1");
	json_decref(d);
	assert_int_equal(count_events(mg, since, "error"), 0);

	/* libvirt agrees: running and persistent there, undefined here */
	domstate(&T.dst, "mig1", s, sizeof(s));
	assert_string_equal(s, "running");
	assert_true(persistent(&T.dst, "mig1"));
	domstate(&T.src, "mig1", s, sizeof(s));
	assert_string_equal(s, "");

	assert_int_equal(mg_get_status(mg, &st), 0);
	assert_int_equal(st.migrations_ok, 1);
	assert_int_equal(st.migrations_failed, 0);
	assert_int_equal(st.advisories, 1);
	assert_true(metric_has(mg, "vgmem_migrations_total{result=\"ok\"} 1\n"));
	assert_true(metric_has(mg, "vgmem_migrations_total{result=\"failed\"} 0\n"));
	model_stop(mg, lv, &cfg);
}

/* Every VM's policy, entitlement, running and advisory flags, as text. */
static char *vms_snapshot(struct mg *mg)
{
	struct mg_vm_info *vms;
	size_t n, i, len = 0;
	char *s;

	assert_int_equal(mg_list_vms(mg, &vms, &n), 0);
	s = calloc(n + 1, 256);
	assert_non_null(s);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, 256, "%s %s q%llu m%llu x%llu w%u e%llu r%d a%d l%d|",
			vms[i].id, vms[i].name,
			(unsigned long long)vms[i].policy.quota,
			(unsigned long long)vms[i].policy.min,
			(unsigned long long)vms[i].policy.max,
			vms[i].policy.weight,
			(unsigned long long)vms[i].entitlement,
			vms[i].running, vms[i].advisory, vms[i].lost);
	free(vms);
	return s;
}

/*
 * A destination where no libvirtd listens: an error event that names the
 * domain, the URI and libvirt's reason; the VM keeps running here with its
 * advisory and entitlement, the domain keeps running at the source, the
 * destination has nothing; counted as failed.
 */
static void test_bad_uri_fails_cleanly(void **state)
{
	struct mg_config cfg;
	struct mg_libvirt *lv;
	struct mg_status st;
	char bad[300], s[256], out[2048], *before, *after;
	uint64_t since;
	json_t *d;
	struct mg *mg;

	(void)state;
	NEED_LIBVIRTD();
	snprintf(bad, sizeof(bad),
		 "qemu+unix:///session?socket=%s/nowhere/libvirt-sock", T.tmp);
	define_and_start("mig2", "5a1e0000-0000-4000-8000-00000000f002");
	mg = model_start(&cfg, bad, VMN, "mig2", &lv);
	since = thrash(mg, VMN);
	before = vms_snapshot(mg);
	d = await_event(mg, since, "error", VMN, "op", "migrate");
	if (!d)
		fail_with_logs("no error event for a migration to a dead URI");
	assert_string_equal(json_string_value(json_object_get(d, "name")), "mig2");
	assert_string_equal(json_string_value(json_object_get(d, "migrate_to")), bad);
	print_message("reason: %s\n", json_string_value(json_object_get(d, "reason")));
	assert_non_null(strstr(json_string_value(json_object_get(d, "reason")),
				"nowhere/libvirt-sock"));
	json_decref(d);
	/* the thread is done once the counter moved: nothing else follows */
	assert_int_equal(mg_get_status(mg, &st), 0);
	assert_int_equal(st.migrations_failed, 1);
	assert_int_equal(st.migrations_ok, 0);
	/* one advisory (raised), no "migrated"; one error */
	assert_int_equal(count_events(mg, since, "advisory"), 1);
	assert_int_equal(count_events(mg, since, "error"), 1);
	after = vms_snapshot(mg);
	assert_string_equal(before, after);
	free(before);
	free(after);
	assert_true(mgf_vm_info(mg, VMN).running);
	assert_true(mgf_vm_info(mg, VMN).advisory);
	assert_true(metric_has(mg, "vgmem_migrations_total{result=\"failed\"} 1\n"));
	assert_true(metric_has(mg, "vgmem_migrations_total{result=\"ok\"} 0\n"));

	domstate(&T.src, "mig2", s, sizeof(s));
	assert_string_equal(s, "running");
	assert_true(persistent(&T.src, "mig2"));
	domstate(&T.dst, "mig2", s, sizeof(s));
	assert_string_equal(s, "");
	/* and the destination still has only what the first case sent */
	assert_int_equal(lvd_virsh(&T.dst, out, sizeof(out), "list", "--all", "--name", NULL), 0);
	assert_null(strstr(out, "mig2"));
	model_stop(mg, lv, &cfg);
}

/*
 * A VM whose domain the source libvirtd does not have: the migration
 * cannot start; an error event says so, counted as failed, nothing else.
 */
static void test_no_such_domain(void **state)
{
	struct mg_config cfg;
	struct mg_libvirt *lv;
	struct mg_status st;
	uint64_t since;
	json_t *d;
	struct mg *mg;

	(void)state;
	NEED_LIBVIRTD();
	mg = model_start(&cfg, T.dst.uri, VMN, "ghost", &lv);
	since = thrash(mg, VMN);
	d = await_event(mg, since, "error", VMN, "op", "migrate");
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d, "name")), "ghost");
	assert_string_equal(json_string_value(json_object_get(d, "reason")),
			    "no such domain");
	json_decref(d);
	assert_int_equal(mg_get_status(mg, &st), 0);
	assert_int_equal(st.migrations_failed, 1);
	assert_int_equal(st.migrations_ok, 0);
	assert_true(mgf_vm_info(mg, VMN).running);
	assert_true(mgf_vm_info(mg, VMN).advisory);
	model_stop(mg, lv, &cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thrash_migrates_domain),
		cmocka_unit_test(test_bad_uri_fails_cleanly),
		cmocka_unit_test(test_no_such_domain),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
