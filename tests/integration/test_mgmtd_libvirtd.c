// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd against a real, private libvirtd, and the deploy/ samples.
 *
 * libvirt's test driver keeps its state per connection, so a change made
 * by another process (an operator's `virsh metadata`) can only be seen
 * through a real daemon. This test starts its own libvirtd from Debian's
 * libvirt-daemon-system in session mode: as an unprivileged user (nobody,
 * when the test runs as root) with HOME and XDG_* in a temporary
 * directory, so its sockets, configuration and domains are all there and
 * the host's libvirt is never touched. Everyone reaches it through
 * qemu+unix:///session?socket=<tmp>/libvirtd/run/libvirt/libvirt-sock
 * (tests/integration/libvirtd_fixture.c starts and stops it).
 *
 * Domains are defined through its qemu driver with virsh (they are never
 * started: they carry an mdev hostdev of a vGPU that does not exist here);
 * the real mgmtd binary of this build variant follows them (embedded
 * backend, REST on a temporary unix socket); the test changes metadata
 * with virsh and checks through REST (libcurl) and vgmemctl that mgmtd
 * picked the change up, and that bad metadata yields an error event and
 * changes nothing else.
 *
 * Daemons: each runs in its own process group with a parent-death signal,
 * the group teardown and a SIGTERM/SIGINT handler kill those groups, so
 * nothing outlives the test even when it fails or is killed by timeout(1).
 * Without libvirtd, virsh or qemu-system-x86_64 the libvirtd cases are
 * skipped with the reason; the deploy/ checks still run.
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
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "mgmtd/mgmtd.h"
#include "tests/unit/rest_client.h"
#include "libvirtd_fixture.h"

#define MiB		(1ull << 20)
#define WAIT_MS		30000	/* generous: a slow CI host, not a timing test */
#define SAMPLE_MDEV	"4b9e5c4e-6d3a-4a53-9f2c-0d1e2f3a4b01"
#define UA		"7d1e0000-0000-4000-8000-0000000000a1"
#define UB		"7d1e0000-0000-4000-8000-0000000000b2"
#define UC		"7d1e0000-0000-4000-8000-0000000000c3"

static struct {
	char root[4096];		/* the repository */
	char bin[4096];			/* this variant's build/.../bin */
	struct lvd_host host;
	struct lvd lv;			/* the private libvirtd */
	char skip[256];			/* why the libvirtd cases are skipped */
	char tmp[64];
	char sock[128];			/* mgmtd's REST socket */
	char log_mg[128];
	pid_t mg_pid;
} T;

/* ---- processes -------------------------------------------------------- */

static void on_signal(int sig)
{
	/* async-signal-safe: kill() and _exit() only */
	if (T.mg_pid > 0)
		kill(-T.mg_pid, SIGKILL);
	if (T.lv.pid > 0)
		kill(-T.lv.pid, SIGKILL);
	_exit(128 + sig);
}

static void fail_with_logs(const char *what)
{
	fx_print_tail(T.log_mg);
	fx_print_tail(T.lv.log);
	fail_msg("%s", what);
}

/* ---- files ------------------------------------------------------------ */

static char *slurp(const char *rel)
{
	char path[4200];
	FILE *f;
	char *s;
	long n;

	snprintf(path, sizeof(path), "%s/%s", T.root, rel);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = calloc(1, (size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The repository and this variant's bin/ from our own path. */
static void locate(void)
{
	char exe[4096], probe[4200], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = 0;
	/* build[/asan]/tests/integration/test_x -> build[/asan]/bin */
	snprintf(T.bin, sizeof(T.bin), "%s", exe);
	for (int up = 0; up < 3 && (slash = strrchr(T.bin, '/')); up++)
		*slash = 0;
	strncat(T.bin, "/bin", sizeof(T.bin) - strlen(T.bin) - 1);
	snprintf(T.root, sizeof(T.root), "%s", exe);
	while ((slash = strrchr(T.root, '/'))) {
		*slash = 0;
		snprintf(probe, sizeof(probe), "%s/mgmtd/domxml.c", T.root);
		if (exists(probe))
			return;
	}
	if (!getcwd(T.root, sizeof(T.root)))
		snprintf(T.root, sizeof(T.root), ".");
}

/* ---- REST and virsh --------------------------------------------------- */

/* GET path as JSON (NULL unless 200). */
static json_t *get_json(const char *path, long *status)
{
	struct http_req q = { .unix_path = T.sock, .path = path };
	struct http_resp r;
	json_t *j = NULL;

	if (status)
		*status = 0;
	if (http_do(&q, &r) == 0) {
		if (status)
			*status = r.status;
		if (r.status == 200)
			j = http_json(&r);
	}
	http_free(&r);
	return j;
}

/* virsh on the private libvirtd; its exit status. */
static int virsh(char *out, size_t outlen, ...)
{
	va_list ap;
	int ret;

	va_start(ap, outlen);
	ret = lvd_virshv(&T.lv, out, outlen, ap);
	va_end(ap);
	return ret;
}

static void virsh_ok(const char *what, ...)
{
	char out[4096];
	va_list ap;
	int ret;

	va_start(ap, what);
	ret = lvd_virshv(&T.lv, out, sizeof(out), ap);
	va_end(ap);
	if (ret != 0) {
		print_message("virsh %s: %s\n", what, out);
		fail_with_logs("virsh failed");
	}
}

static void set_meta(const char *dom, const char *xml)
{
	virsh_ok("metadata", "metadata", dom, MG_XMLNS, "--key", "vgmem",
		 "--set", xml, "--config", NULL);
}

static void define_xml(const char *xml)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/def.xml", T.tmp);
	assert_int_equal(fx_write_file(path, xml, NULL), 0);
	virsh_ok("define", "define", path, NULL);
}

static void define_domain(const char *name, const char *dom_uuid,
			  const char *mdev, const char *gpu_attrs)
{
	char xml[2048];

	snprintf(xml, sizeof(xml),
		 "<domain type='qemu'><name>%s</name><uuid>%s</uuid>"
		 "<metadata><vgmem:gpu xmlns:vgmem='%s' %s/></metadata>"
		 "<memory unit='MiB'>128</memory><vcpu>1</vcpu>"
		 "<os><type arch='x86_64'>hvm</type></os><devices>"
		 "<hostdev mode='subsystem' type='mdev' model='vfio-pci'>"
		 "<source><address uuid='%s'/></source></hostdev>"
		 "</devices></domain>",
		 name, dom_uuid, MG_XMLNS, gpu_attrs, mdev);
	define_xml(xml);
}

/* A VM's "policy" object field, or -1 (VM unknown, field missing). */
static long long vm_field(const char *vm, const char *obj, const char *field)
{
	char path[160];
	json_t *j, *o;
	long long v = -1;

	snprintf(path, sizeof(path), "/v1/vms/%s", vm);
	j = get_json(path, NULL);
	o = j && obj ? json_object_get(j, obj) : j;
	if (o && json_is_integer(json_object_get(o, field)))
		v = json_integer_value(json_object_get(o, field));
	json_decref(j);
	return v;
}

static void wait_field(const char *vm, const char *obj, const char *field,
		       long long want)
{
	int64_t end = fx_now_ms() + WAIT_MS;
	long long v;
	char msg[256];

	while ((v = vm_field(vm, obj, field)) != want && fx_now_ms() < end)
		usleep(50000);
	if (v != want) {
		snprintf(msg, sizeof(msg), "vm %s %s.%s: %lld, expected %lld",
			 vm, obj ? obj : "", field, v, want);
		fail_with_logs(msg);
	}
}

static void wait_status(const char *path, long want)
{
	int64_t end = fx_now_ms() + WAIT_MS;
	long st = 0;
	char msg[256];

	for (;;) {
		json_decref(get_json(path, &st));
		if (st == want || fx_now_ms() > end)
			break;
		usleep(50000);
	}
	if (st != want) {
		snprintf(msg, sizeof(msg), "GET %s: %ld, expected %ld", path,
			 st, want);
		fail_with_logs(msg);
	}
}

static uint64_t last_event_id(void)
{
	json_t *j = get_json("/healthz", NULL);
	uint64_t id;

	assert_non_null(j);
	id = (uint64_t)json_integer_value(json_object_get(j, "last_event_id"));
	json_decref(j);
	return id;
}

/*
 * The last event id once events have settled: a change becomes visible in
 * the model before its event is stored, so a test that counts the events
 * a change causes starts from a quiet point.
 */
static uint64_t settled_event_id(void)
{
	uint64_t a = last_event_id(), b;

	for (;;) {
		usleep(300000);
		b = last_event_id();
		if (a == b)
			return b;
		a = b;
	}
}

/* Events after id (at most 1000), as a JSON array the caller decrefs. */
static json_t *events_after(uint64_t id)
{
	char path[96];
	json_t *j, *a;

	snprintf(path, sizeof(path), "/v1/events?since=%llu&limit=1000",
		 (unsigned long long)id);
	j = get_json(path, NULL);
	assert_non_null(j);
	a = json_incref(json_object_get(j, "events"));
	json_decref(j);
	assert_true(json_is_array(a));
	return a;
}

/*
 * Waits for an event of type for vm after id and returns the whole list
 * of events after id at that moment.
 */
static json_t *wait_event(uint64_t after, const char *type, const char *vm)
{
	int64_t end = fx_now_ms() + WAIT_MS;
	char msg[200];

	for (;;) {
		json_t *a = events_after(after), *e;
		size_t i;

		json_array_foreach(a, i, e) {
			if (!strcmp(json_string_value(json_object_get(e, "type")), type) &&
			    !strcmp(json_string_value(json_object_get(e, "vm")), vm))
				return a;
		}
		json_decref(a);
		if (fx_now_ms() > end)
			break;
		usleep(50000);
	}
	snprintf(msg, sizeof(msg), "no '%s' event for '%s' after %llu", type,
		 vm, (unsigned long long)after);
	fail_with_logs(msg);
	return NULL;
}

/* Every VM's id, policy, entitlement and running flag, as text. */
static char *vms_snapshot(void)
{
	json_t *j = get_json("/v1/vms", NULL), *vms, *vm, *s;
	char *out;
	size_t i;

	assert_non_null(j);
	vms = json_object_get(j, "vms");
	s = json_array();
	json_array_foreach(vms, i, vm) {
		json_array_append_new(s, json_pack("{sOsOsOsOsOsO}",
			"id", json_object_get(vm, "id"),
			"name", json_object_get(vm, "name"),
			"policy", json_object_get(vm, "policy"),
			"entitlement", json_object_get(vm, "entitlement"),
			"running", json_object_get(vm, "running"),
			"operator_policy", json_object_get(vm, "operator_policy")));
	}
	out = json_dumps(s, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(s);
	json_decref(j);
	return out;
}

/* vgmemctl of this variant; its output in out. */
static int vgmemctl(char *out, size_t outlen, ...)
{
	char path[4200];
	char *const pre[] = { path, "--socket", T.sock, NULL };
	va_list ap;
	int ret;

	snprintf(path, sizeof(path), "%s/vgmemctl", T.bin);
	va_start(ap, outlen);
	ret = fx_runv(out, outlen, pre, ap);
	va_end(ap);
	return ret;
}

/* ---- fixture ---------------------------------------------------------- */

/* The sample as the private daemon can take it (caller frees). */
static char *sample_for_session(const char *xml)
{
	/* the private daemon is unprivileged: TCG, not KVM */
	static const char kvm[] = "<domain type='kvm'>";
	static const char tcg[] = "<domain type='qemu'>";
	const char *k = strstr(xml, kvm);
	char *out;

	if (!k)
		return strdup(xml);
	if (asprintf(&out, "%.*s%s%s", (int)(k - xml), xml, tcg,
		     k + strlen(kvm)) < 0)
		return NULL;
	return out;
}

static int start_mgmtd(void)
{
	char mg[4200], db[128];
	char *argv[] = { mg, "--backend", "embedded", "--embedded-vram", "2G",
			 "--state-db", db, "--listen-unix", T.sock,
			 "--libvirt-uri", T.lv.uri, "--log-level", "debug", NULL };
	int64_t end;

	snprintf(mg, sizeof(mg), "%s/mgmtd", T.bin);
	snprintf(db, sizeof(db), "%s/mgmtd.db", T.tmp);
	snprintf(T.sock, sizeof(T.sock), "%s/mgmtd.sock", T.tmp);
	if (access(mg, X_OK)) {
		print_message("%s missing: run make first\n", mg);
		return -ENOENT;
	}
	T.mg_pid = fx_spawn(T.log_mg, NULL, NULL, argv, NULL);
	if (T.mg_pid < 0)
		return -errno;
	end = fx_now_ms() + WAIT_MS;
	while (fx_now_ms() < end) {
		json_t *h = get_json("/healthz", NULL);
		bool ok = h && json_is_true(json_object_get(h, "libvirt_connected"));

		json_decref(h);
		if (ok)
			return 0;
		if (waitpid(T.mg_pid, NULL, WNOHANG) == T.mg_pid) {
			T.mg_pid = 0;
			break;
		}
		usleep(50000);
	}
	fx_print_tail(T.log_mg);
	return -ETIMEDOUT;
}

static int group_setup(void **state)
{
	char *raw, *xml, path[128], out[4096];
	int ret;

	(void)state;
	locate();
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_ALL);
	if (!lvd_host_probe(&T.host, T.skip, sizeof(T.skip)))
		return 0;
	if (fx_tmpdir(T.tmp, sizeof(T.tmp), "vgmem-lvd"))
		return -1;
	snprintf(T.log_mg, sizeof(T.log_mg), "%s/mgmtd.log", T.tmp);
	snprintf(path, sizeof(path), "%s/libvirtd", T.tmp);
	ret = lvd_start(&T.lv, &T.host, path, NULL, NULL);
	if (ret) {
		print_message("cannot start a private libvirtd: %s\n", strerror(-ret));
		return -1;
	}
	/* The sample domain exists before mgmtd connects (initial sync). */
	raw = slurp("deploy/libvirt/vgmem-domain.xml");
	xml = raw ? sample_for_session(raw) : NULL;
	free(raw);
	if (!xml)
		return -1;
	snprintf(path, sizeof(path), "%s/web1.xml", T.tmp);
	ret = fx_write_file(path, xml, NULL);
	free(xml);
	if (ret)
		return -1;
	if (virsh(out, sizeof(out), "define", path, NULL) != 0) {
		print_message("virsh define of the sample domain failed: %s\n", out);
		fx_print_tail(T.lv.log);
		return -1;
	}
	ret = start_mgmtd();
	if (ret) {
		print_message("cannot start mgmtd: %s\n", strerror(-ret));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	fx_kill_group(&T.mg_pid);
	lvd_stop(&T.lv);
	fx_tmpdir_remove(T.tmp);
	curl_global_cleanup();
	return 0;
}

#define NEED_LIBVIRTD()	FX_SKIP_IF(T.skip)

/* ---- deploy/ samples -------------------------------------------------- */

/* The sample domain parses with mgmtd's own parser, to what it says. */
static void test_sample_domain_parses(void **state)
{
	struct mg_vm_policy p;
	char mdev[MG_ID_LEN], err[MG_WHY_LEN] = "", *xml, *g, *e;
	unsigned int mask;
	int gpu;

	(void)state;
	xml = slurp("deploy/libvirt/vgmem-domain.xml");
	assert_non_null(xml);
	if (mg_domain_parse(xml, mdev, sizeof(mdev), &p, &mask, &gpu, err,
			    sizeof(err)))
		fail_msg("deploy/libvirt/vgmem-domain.xml: %s", err);
	assert_string_equal(mdev, SAMPLE_MDEV);
	assert_int_equal(mask, MG_POL_QUOTA | MG_POL_WEIGHT | MG_POL_MIN |
			 MG_POL_LOW | MG_POL_MAX | MG_POL_PRIORITY);
	assert_int_equal(p.quota, 2048 * MiB);
	assert_int_equal(p.weight, 200);
	assert_int_equal(p.min, 256 * MiB);
	assert_int_equal(p.low, 512 * MiB);
	assert_int_equal(p.max, 2048 * MiB);
	assert_int_equal(p.priority, 1);
	assert_int_equal(gpu, -1);
	assert_true(p.min <= p.low && p.low <= p.max && p.max <= p.quota);
	assert_non_null(strstr(xml, "model='vfio-pci'"));

	/* the <vgmem:gpu> element alone, as virDomainGetMetadata gives it */
	g = strstr(xml, "<vgmem:gpu xmlns");	/* not the comment's */
	assert_non_null(g);
	e = strstr(g, "/>");
	assert_non_null(e);
	e[2] = 0;
	if (mg_metadata_parse(g, &p, &mask, &gpu, err, sizeof(err)))
		fail_msg("<vgmem:gpu> of the sample: %s", err);
	assert_int_equal(p.weight, 200);

	/* and the parser is not a rubber stamp: a typo in it is refused */
	g = strstr(g, "weight=");
	g[1] = 'a';			/* "waight" */
	assert_int_equal(mg_metadata_parse(strstr(xml, "<vgmem:gpu xmlns"), &p,
					   &mask, &gpu, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "waight"));
	free(xml);
}

/* mdevctl definitions, the config sample and the domain agree. */
static void test_sample_mdevctl_and_config(void **state)
{
	static const char *const ids[] = {
		"4b9e5c4e-6d3a-4a53-9f2c-0d1e2f3a4b01",
		"4b9e5c4e-6d3a-4a53-9f2c-0d1e2f3a4b02",
		"4b9e5c4e-6d3a-4a53-9f2c-0d1e2f3a4b03",
	};
	struct mg_config cfg;
	char rel[128], path[4300], err[512] = "", *s;
	uint64_t sum = 0;
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		json_error_t je;
		json_t *j;
		const char *type;

		snprintf(rel, sizeof(rel), "deploy/mdevctl/vgmem0/%s", ids[i]);
		s = slurp(rel);
		assert_non_null(s);
		j = json_loads(s, JSON_REJECT_DUPLICATES, &je);
		free(s);
		assert_non_null(j);
		assert_true(mg_uuid_valid(ids[i]));
		type = json_string_value(json_object_get(j, "mdev_type"));
		assert_non_null(type);
		assert_true(!strcmp(type, "vgmem-1g") || !strcmp(type, "vgmem-2g") ||
			    !strcmp(type, "vgmem-4g") || !strcmp(type, "vgmem-8g"));
		sum += (uint64_t)atoi(type + 6) << 30;
		assert_string_equal(json_string_value(json_object_get(j, "start")), "auto");
		assert_true(json_is_array(json_object_get(j, "attrs")));
		assert_int_equal(json_object_size(j), 3);
		json_decref(j);
	}
	/* the domain's vGPU is the first definition */
	assert_string_equal(ids[0], SAMPLE_MDEV);
	/* oversubscribed but admitted: 8 GiB of quotas on the 4 GiB GPU of
	 * modprobe.d (vram_mb=4096), within oversub_pct=400 */
	s = slurp("deploy/modprobe.d/vgmem.conf");
	assert_non_null(s);
	assert_non_null(strstr(s, "vram_mb=4096"));
	assert_non_null(strstr(s, "oversub_pct=400"));
	assert_true(sum > 4096 * MiB && sum <= 4 * 4096 * MiB);
	free(s);

	/* mgmtd.conf: every key known, every value valid */
	assert_int_equal(mg_config_defaults(&cfg), 0);
	snprintf(path, sizeof(path), "%s/deploy/mgmtd.conf", T.root);
	if (mg_config_load_file(&cfg, path, err, sizeof(err)))
		fail_msg("deploy/mgmtd.conf: %s", err);
	assert_string_equal(cfg.listen_unix, "/run/vgmem/mgmtd.sock");
	assert_string_equal(cfg.state_db, "/var/lib/vgmem/mgmtd.db");
	assert_null(cfg.listen_tcp);
	mg_config_free(&cfg);
}

/* The unit passes systemd-analyze verify and a security threshold. */
static void test_systemd_unit(void **state)
{
	char sa[256], tmpd[] = "/tmp/vgmem-unit.XXXXXX";
	char copy[128], out[16384], *s, *line;
	char *verify[] = { sa, "verify", "--man=no", copy, NULL };
	char *sec[] = { sa, "security", "--offline=true", "--threshold=20",
			copy, NULL };
	FILE *f;
	int rc;

	(void)state;
	if (!fx_find_exe("systemd-analyze", sa, sizeof(sa))) {
		print_message("skipped: systemd-analyze not installed\n");
		skip();
	}
	s = slurp("deploy/systemd/vgmem-mgmtd.service");
	assert_non_null(s);
	/*
	 * verify insists that ExecStart's binary exists: point it at this
	 * build's mgmtd (the only change), in a copy with the same name.
	 */
	line = strstr(s, "\nExecStart=/usr/local/sbin/mgmtd ");
	assert_non_null(line);
	assert_non_null(mkdtemp(tmpd));
	snprintf(copy, sizeof(copy), "%s/vgmem-mgmtd.service", tmpd);
	f = fopen(copy, "we");
	assert_non_null(f);
	fwrite(s, 1, (size_t)(line - s), f);
	fprintf(f, "\nExecStart=%s/mgmtd %s", T.bin,
		line + strlen("\nExecStart=/usr/local/sbin/mgmtd "));
	fclose(f);
	free(s);
	rc = fx_run(verify, out, sizeof(out));
	if (rc != 0 || out[0])
		print_message("systemd-analyze verify (rc %d): %s\n", rc, out);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");	/* no warnings either */
	/* exposure at most 2.0 ("OK"); the unit scores 1.1 with systemd 252 */
	rc = fx_run(sec, out, sizeof(out));
	s = strstr(out, "Overall exposure level");
	print_message("%s", s ? s : out);
	assert_int_equal(rc, 0);
	unlink(copy);
	rmdir(tmpd);
}

/* ---- libvirtd --------------------------------------------------------- */

/* A domain defined before mgmtd started is found by the initial sync. */
static void test_predefined_domain(void **state)
{
	json_t *j;

	(void)state;
	NEED_LIBVIRTD();
	j = get_json("/v1/vms/web1", NULL);
	if (!j)
		fail_with_logs("web1 (defined before mgmtd started) is unknown to mgmtd");
	assert_string_equal(json_string_value(json_object_get(j, "id")), SAMPLE_MDEV);
	assert_string_equal(json_string_value(json_object_get(j, "source")), "libvirt");
	assert_true(json_is_false(json_object_get(j, "running")));
	assert_string_equal(json_string_value(json_object_get(j, "error")), "");
	json_decref(j);
	assert_int_equal(vm_field("web1", "policy", "quota"), 2048 * MiB);
	assert_int_equal(vm_field("web1", "policy", "weight"), 200);
	assert_int_equal(vm_field("web1", "policy", "min"), 256 * MiB);
	assert_int_equal(vm_field("web1", "policy", "low"), 512 * MiB);
	assert_int_equal(vm_field("web1", "policy", "priority"), 1);
	/* and by its mdev UUID */
	wait_field(SAMPLE_MDEV, "policy", "weight", 200);
}

/* Domains defined while mgmtd runs appear (DEFINED events), via vgmemctl. */
static void test_defined_after_start(void **state)
{
	char out[8192];
	json_t *j;

	(void)state;
	NEED_LIBVIRTD();
	define_domain("vm-a", "5a1e0000-0000-4000-8000-0000000000a1", UA,
		      "quota='512M' weight='100'");
	define_domain("vm-b", "5a1e0000-0000-4000-8000-0000000000b2", UB,
		      "quota='256M' weight='50' min='64M' low='64M'");
	wait_field("vm-a", "policy", "quota", 512 * MiB);
	wait_field("vm-b", "policy", "min", 64 * MiB);

	assert_int_equal(vgmemctl(out, sizeof(out), "--json", "vm", "vm-a", NULL), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "id")), UA);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "policy"), "max")),
			 512 * MiB);
	json_decref(j);
	/* the table lists all three domains */
	assert_int_equal(vgmemctl(out, sizeof(out), "vms", NULL), 0);
	assert_non_null(strstr(out, "web1"));
	assert_non_null(strstr(out, "vm-a"));
	assert_non_null(strstr(out, "vm-b"));
}

/* virsh metadata from another process changes mgmtd's policy. */
static void test_virsh_metadata_live(void **state)
{
	uint64_t id;
	json_t *ev, *e;
	size_t i;
	bool seen = false;

	(void)state;
	NEED_LIBVIRTD();
	id = last_event_id();
	set_meta("vm-a", "<gpu quota='768M' weight='300' min='64M' low='128M' max='512M' priority='2'/>");
	wait_field("vm-a", "policy", "weight", 300);
	assert_int_equal(vm_field("vm-a", "policy", "quota"), 768 * MiB);
	assert_int_equal(vm_field("vm-a", "policy", "min"), 64 * MiB);
	assert_int_equal(vm_field("vm-a", "policy", "low"), 128 * MiB);
	assert_int_equal(vm_field("vm-a", "policy", "max"), 512 * MiB);
	assert_int_equal(vm_field("vm-a", "policy", "priority"), 2);
	ev = wait_event(id, "policy", UA);
	json_array_foreach(ev, i, e) {
		json_t *d = json_object_get(e, "detail");

		if (!strcmp(json_string_value(json_object_get(e, "type")), "policy") &&
		    !strcmp(json_string_value(json_object_get(d, "source")), "metadata") &&
		    json_integer_value(json_object_get(json_object_get(d, "new"),
						       "weight")) == 300) {
			/* the audit trail: the domain did it */
			assert_string_equal(json_string_value(json_object_get(d, "by")),
					    "libvirt domain vm-a");
			assert_string_equal(json_string_value(json_object_get(d, "name")),
					    "vm-a");
			assert_null(json_object_get(d, "mask"));
			seen = true;
		}
	}
	json_decref(ev);
	assert_true(seen);
	/* a second change, fewer fields: the others go back to defaults */
	set_meta("vm-a", "<gpu quota='1G' weight='400'/>");
	wait_field("vm-a", "policy", "weight", 400);
	assert_int_equal(vm_field("vm-a", "policy", "quota"), 1024 * MiB);
	assert_int_equal(vm_field("vm-a", "policy", "max"), 1024 * MiB);
	assert_int_equal(vm_field("vm-a", "policy", "min"), 0);
	assert_int_equal(vm_field("vm-a", "policy", "priority"), 0);
}

/*
 * Each bad metadata: an "error" event for that VM, the VM's error text,
 * and nothing else: every VM's policy and entitlement as before, no other
 * event.
 */
static void bad_meta_case(const char *xml, const char *remove,
			  const char *expect)
{
	char *before, *after, msg[300];
	uint64_t id = settled_event_id();
	json_t *ev, *e, *vm;
	size_t i;

	before = vms_snapshot();
	if (remove)
		virsh_ok("metadata --remove", "metadata", "vm-b", MG_XMLNS,
			 "--remove", "--config", NULL);
	else
		set_meta("vm-b", xml);
	ev = wait_event(id, "error", UB);
	/* a moment for anything else the change might (wrongly) cause */
	usleep(300000);
	json_decref(ev);
	ev = events_after(id);
	json_array_foreach(ev, i, e) {
		const char *t = json_string_value(json_object_get(e, "type"));

		if (strcmp(t, "error")) {
			snprintf(msg, sizeof(msg), "bad metadata %s caused a '%s' event",
				 xml ? xml : "(removed)", t);
			fail_with_logs(msg);
		}
	}
	json_decref(ev);
	after = vms_snapshot();
	assert_string_equal(before, after);
	free(before);
	free(after);
	vm = get_json("/v1/vms/vm-b", NULL);
	assert_non_null(vm);
	if (!strstr(json_string_value(json_object_get(vm, "error")), expect)) {
		snprintf(msg, sizeof(msg), "vm-b error '%s' does not mention '%s'",
			 json_string_value(json_object_get(vm, "error")), expect);
		fail_msg("%s", msg);
	}
	json_decref(vm);
}

static void test_bad_metadata_changes_nothing(void **state)
{
	(void)state;
	NEED_LIBVIRTD();
	bad_meta_case("<gpu quota='256M' weight='heavy'/>", NULL, "weight");
	bad_meta_case("<gpu quota='256M' colour='red'/>", NULL, "colour");
	bad_meta_case("<gpu quota='lots'/>", NULL, "quota");
	bad_meta_case("<gpu weight='100'/>", NULL, "quota");
	bad_meta_case("<gpu quota='256M' min='512M' low='512M'/>", NULL, "");
	bad_meta_case("<gpu quota='256M' priority='9'/>", NULL, "priority");
	bad_meta_case("<gpu quota='256M' max='1G'/>", NULL, "");
	bad_meta_case("<policy quota='256M'/>", NULL, "gpu");
	bad_meta_case(NULL, "remove", "removed");
	/* a good change afterwards is applied and clears the error */
	set_meta("vm-b", "<gpu quota='384M' weight='60'/>");
	wait_field("vm-b", "policy", "weight", 60);
	assert_int_equal(vm_field("vm-b", "policy", "quota"), 384 * MiB);
	{
		json_t *vm = get_json("/v1/vms/vm-b", NULL);

		assert_non_null(vm);
		assert_string_equal(json_string_value(json_object_get(vm, "error")), "");
		json_decref(vm);
	}
}

/* A domain defined with bad metadata is reported and not managed. */
static void test_bad_domain_defined(void **state)
{
	uint64_t id;
	char *before, *after;
	json_t *ev, *e;
	size_t i;
	bool named = false;

	(void)state;
	NEED_LIBVIRTD();
	id = settled_event_id();
	before = vms_snapshot();
	define_domain("vm-c", "5a1e0000-0000-4000-8000-0000000000c3", UC,
		      "quota='1G' weight='0'");
	ev = wait_event(id, "error", UC);
	json_array_foreach(ev, i, e) {
		json_t *d = json_object_get(e, "detail");
		const char *n = json_string_value(json_object_get(d, "name"));
		assert_string_equal(json_string_value(json_object_get(e, "type")), "error");
		if (n && !strcmp(n, "vm-c"))
			named = true;
	}
	json_decref(ev);
	assert_true(named);
	wait_status("/v1/vms/vm-c", 404);
	after = vms_snapshot();
	assert_string_equal(before, after);
	free(before);
	free(after);
	/* fixed with virsh metadata, it becomes managed */
	set_meta("vm-c", "<gpu quota='1G' weight='10'/>");
	wait_field("vm-c", "policy", "weight", 10);
}

/* The operator's policy (REST, vgmemctl) wins over metadata until reset. */
static void test_operator_policy_wins(void **state)
{
	char out[4096], uid[32];
	const char *by;
	bool seen = false;
	json_t *ev, *e;
	uint64_t id;
	size_t i;

	(void)state;
	NEED_LIBVIRTD();
	id = settled_event_id();
	assert_int_equal(vgmemctl(out, sizeof(out), "policy", "vm-a", "--patch",
				  "--weight", "700", NULL), 0);
	wait_field("vm-a", "policy", "weight", 700);
	/* who: this process, as SO_PEERCRED tells mgmtd; what: the weight */
	ev = wait_event(id, "policy", UA);
	json_array_foreach(ev, i, e) {
		json_t *d = json_object_get(e, "detail"), *c;

		if (strcmp(json_string_value(json_object_get(e, "type")), "policy"))
			continue;
		snprintf(uid, sizeof(uid), "uid %u", (unsigned int)getuid());
		by = json_string_value(json_object_get(d, "by"));
		assert_non_null(by);
		assert_memory_equal(by, uid, strlen(uid));
		assert_true(by[strlen(uid)] == 0 || by[strlen(uid)] == ' ');
		c = json_object_get(d, "changed");
		assert_int_equal(json_array_size(c), 1);
		assert_string_equal(json_string_value(json_array_get(c, 0)), "weight");
		assert_int_equal(json_integer_value(json_object_get(
			json_object_get(d, "new"), "weight")), 700);
		seen = true;
	}
	json_decref(ev);
	assert_true(seen);
	set_meta("vm-a", "<gpu quota='640M' weight='20'/>");
	wait_field("vm-a", "policy", "quota", 640 * MiB);
	assert_int_equal(vm_field("vm-a", "policy", "weight"), 700);
	assert_int_equal(vgmemctl(out, sizeof(out), "policy", "vm-a", "--reset",
				  NULL), 0);
	wait_field("vm-a", "policy", "weight", 20);
	assert_int_equal(vm_field("vm-a", "policy", "quota"), 640 * MiB);
}

/* Undefining a domain makes mgmtd forget it. */
static void test_undefine_forgets(void **state)
{
	(void)state;
	NEED_LIBVIRTD();
	virsh_ok("undefine", "undefine", "vm-b", NULL);
	wait_status("/v1/vms/vm-b", 404);
	wait_status("/v1/vms/vm-a", 200);
}

/* SIGTERM: mgmtd shuts down cleanly (exit 0). */
static void test_mgmtd_sigterm(void **state)
{
	int st = 0, i;

	(void)state;
	NEED_LIBVIRTD();
	assert_true(T.mg_pid > 0);
	kill(T.mg_pid, SIGTERM);
	for (i = 0; i < 200 && waitpid(T.mg_pid, &st, WNOHANG) != T.mg_pid; i++)
		usleep(100000);
	if (i == 200)
		fail_with_logs("mgmtd did not exit within 20 s of SIGTERM");
	T.mg_pid = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fx_print_tail(T.log_mg);
		fail_msg("mgmtd exit status %d", st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_domain_parses),
		cmocka_unit_test(test_sample_mdevctl_and_config),
		cmocka_unit_test(test_systemd_unit),
		cmocka_unit_test(test_predefined_domain),
		cmocka_unit_test(test_defined_after_start),
		cmocka_unit_test(test_virsh_metadata_live),
		cmocka_unit_test(test_bad_metadata_changes_nothing),
		cmocka_unit_test(test_bad_domain_defined),
		cmocka_unit_test(test_operator_policy_wins),
		cmocka_unit_test(test_undefine_forgets),
		cmocka_unit_test(test_mgmtd_sigterm),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
