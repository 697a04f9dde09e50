// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmemctl (the binary of this build variant) against a REST server over
 * the fake model: every command, tables and --json, writes reaching the
 * model, problem details printed readably with exit code 1, usage errors
 * with 2, an unreachable daemon with 3, TCP with a token file,
 * events --follow receiving a live event, every counter of the
 * schema in `gpu N` and `vm ID` in its words with its own value, their
 * histograms, vms by GPU and state as a table, JSON, CSV and --watch,
 * events newest first, top --once, and every bad value of those options
 * (exit 2, saying what the option takes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "rest_fixture.h"

#define VM2	"00000000-0000-4000-8000-000000000002"

static struct fix F;
static char ctl_path[PATH_MAX];

struct run {
	int code;
	char out[65536];
	char err[4096];
};

static void read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
}

/* Runs vgmemctl with args (NULL-terminated); stderr goes to a file. */
static void run_ctl(struct run *r, const char *const *args)
{
	const char *argv[32];
	char errpath[160];
	int out[2], errfd, st, i = 0, j;
	pid_t pid;

	argv[i++] = ctl_path;
	for (j = 0; args[j]; j++)
		argv[i++] = args[j];
	argv[i] = NULL;
	snprintf(errpath, sizeof(errpath), "%s/stderr", F.dir);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(out[1], 1);
		dup2(errfd, 2);
		close(out[0]);
		execv(ctl_path, (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	read_all(out[0], r->out, sizeof(r->out));
	close(out[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	errfd = open(errpath, O_RDONLY);
	read_all(errfd, r->err, sizeof(r->err));
	close(errfd);
	unlink(errpath);
}

#define CTL(r, ...) run_ctl((r), (const char *const[]){ "--socket", F.sock, __VA_ARGS__, NULL })

static int setup(void **state)
{
	char self[PATH_MAX];
	ssize_t n;

	(void)state;
	/* build[/asan]/tests/unit/test_rest_vgmemctl -> build[/asan]/bin/vgmemctl */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(ctl_path, sizeof(ctl_path), "%s/../../bin/vgmemctl",
		 dirname(self));
	if (access(ctl_path, X_OK))
		return -1;
	return fix_group_start(&F, 3, 4096);
}

static int teardown(void **state)
{
	(void)state;
	return fix_group_stop(&F);
}

static void test_read_commands(void **state)
{
	static struct run r;
	json_t *j;

	(void)state;
	CTL(&r, "health");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "status     ok"));
	assert_non_null(strstr(r.out, "backend    embedded"));

	CTL(&r, "vms");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "NAME"));
	assert_non_null(strstr(r.out, VM2));
	assert_non_null(strstr(r.out, "4.0G"));
	/* the file cache's private replicas: vm2's 128 KiB in its column */
	assert_non_null(strstr(r.out, " FCACHE "));
	assert_non_null(strstr(r.out, " 1.0G    1.0G    128K "));

	CTL(&r, "--json", "vms");
	assert_int_equal(r.code, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "vms")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
		json_array_get(json_object_get(j, "vms"), 1), "usage"),
		"cache_private")), 2 << 16);
	json_decref(j);

	CTL(&r, "vm", "vm2");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "vm " VM2 " (vm2) on gpu 1, running"));
	assert_non_null(strstr(r.out, "suspended 4 times"));
	assert_non_null(strstr(r.out, "; file cache private 128K\n"));

	CTL(&r, "gpus");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "sim1"));
	assert_non_null(strstr(r.out, " FCACHE "));
	assert_non_null(strstr(r.out, "    4.0M "));	/* sim1's cache_used */
	CTL(&r, "gpu", "0");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "gpu 0 (sim0)"));
	assert_non_null(strstr(r.out, ", file cache 3.0M;"));

	CTL(&r, "metrics");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "# TYPE vgmem_vm_running gauge\n"));

	CTL(&r, "openapi");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\"openapi\""));

	CTL(&r, "knobs");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "policy             cold"));
}

static void test_write_commands(void **state)
{
	static struct run r;
	struct mg_vm_info v;
	struct mg_knobs k;

	(void)state;
	CTL(&r, "policy", "vm2", "--quota", "8G", "--min", "512M", "--weight", "300");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "operator policy"));
	mg_get_vm(F.mg, VM2, &v);
	assert_int_equal(v.policy.quota, 8 * FAKE_GIB);
	assert_int_equal(v.policy.min, 512u << 20);
	assert_int_equal(v.policy.weight, 300);

	CTL(&r, "policy", VM2, "--patch", "--priority", "2");
	assert_int_equal(r.code, 0);
	mg_get_vm(F.mg, VM2, &v);
	assert_int_equal(v.policy.priority, 2);
	assert_int_equal(v.policy.weight, 300);

	CTL(&r, "policy", "vm2");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "quota 8.0G"));

	/* impossible quota: problem details readably, exit 1, unchanged */
	CTL(&r, "policy", "vm2", "--quota", "100G");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.err, "error 409 Admission refused"));
	assert_non_null(strstr(r.err, "urn:vgmem:problem:admission-refused"));
	mg_get_vm(F.mg, VM2, &v);
	assert_int_equal(v.policy.quota, 8 * FAKE_GIB);

	CTL(&r, "policy", "vm2", "--quota", "lots");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.err, "error 400"));

	CTL(&r, "policy", "nosuch", "--quota", "1G");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.err, "error 404"));

	CTL(&r, "policy", "vm2", "--reset");
	assert_int_equal(r.code, 0);
	mg_get_vm(F.mg, VM2, &v);
	assert_false(v.operator_policy);

	CTL(&r, "knobs", "--policy", "lra", "--oversub-pct", "300");
	assert_int_equal(r.code, 0);
	mg_get_knobs(F.mg, &k);
	assert_string_equal(k.policy, "lra");
	assert_int_equal(k.oversub_pct, 300);
	CTL(&r, "knobs", "--policy", "fifo");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.err, "error 422"));
}

static void test_usage_and_failures(void **state)
{
	static struct run r;

	(void)state;
	CTL(&r, "--help");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "Exit codes"));
	CTL(&r, "policy", "--help");
	assert_int_equal(r.code, 0);
	CTL(&r, "events", "--help");
	assert_int_equal(r.code, 0);
	CTL(&r, "frobnicate");
	assert_int_equal(r.code, 2);
	CTL(&r, "gpu", "abc");
	assert_int_equal(r.code, 2);
	CTL(&r, "policy", "vm2", "--weight", "x");
	assert_int_equal(r.code, 2);
	CTL(&r, "policy", "vm2", "--reset", "--weight", "3");
	assert_int_equal(r.code, 2);
	CTL(&r, "vm", "nosuch");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.err, "error 404 Not Found"));

	run_ctl(&r, (const char *const[]){ "--socket", "/nonexistent/sock", "vms", NULL });
	assert_int_equal(r.code, 3);
	assert_non_null(strstr(r.err, "cannot reach mgmtd"));
}

/* admit --dry-run: exit 0 admitted, 1 not, 2 for a question not asked right. */
static void test_admit(void **state)
{
	static struct run r;

	(void)state;
	CTL(&r, "admit", "--dry-run", "--quota", "1G");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "admitted on GPU 0: entitlement"));
	CTL(&r, "admit", "--dry-run", "--quota", "1P", "--gpu", "1");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.out, "not admitted on that GPU: quota-limit"));
	CTL(&r, "--json", "admit", "--dry-run", "--quota", "1P");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.out, "\"admitted\":false"));
	CTL(&r, "admit", "--quota", "1G");
	assert_int_equal(r.code, 2);
	CTL(&r, "admit", "--dry-run");
	assert_int_equal(r.code, 2);
	CTL(&r, "admit", "--dry-run", "--quota", "1G", "--gpu", "x");
	assert_int_equal(r.code, 2);
	CTL(&r, "admit", "--dry-run", "--quota", "1G", "--gpu", "9");
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.err, "404"));
	CTL(&r, "admit", "--help");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "--dry-run"));
}

static void test_tcp_with_token_file(void **state)
{
	static struct run r;
	char url[64];

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", F.port);
	run_ctl(&r, (const char *const[]){ "--url", url, "--token-file", F.tokfile,
					    "vms", NULL });
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, VM2));
	run_ctl(&r, (const char *const[]){ "--url", url, "vms", NULL });
	assert_int_equal(r.code, 1);
	assert_non_null(strstr(r.err, "error 401"));
}

static void test_events(void **state)
{
	static struct run r;
	char since[32], line[4096];
	uint64_t id;
	size_t n = 0;
	int out[2];
	pid_t pid;
	json_t *j;

	(void)state;
	id = fake_publish(F.mg, "pressure", VM2, "{\"gpu\":1}");
	snprintf(since, sizeof(since), "%llu", (unsigned long long)id - 1);
	CTL(&r, "events", "--since", since);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "pressure"));
	assert_non_null(strstr(r.out, "{\"gpu\":1}"));

	/* --follow --json: one JSON object per line as events arrive */
	snprintf(since, sizeof(since), "%llu", (unsigned long long)id);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl(ctl_path, ctl_path, "--socket", F.sock, "--json", "events",
		      "--follow", "--since", since, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	id = fake_publish(F.mg, "advisory", VM2, "{\"reason\":\"thrash\"}");
	while (n < sizeof(line) - 1 && read(out[0], line + n, 1) == 1 &&
	       line[n] != '\n')
		n++;
	line[n] = '\0';
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close(out[0]);
	j = json_loads(line, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), id);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "advisory");
	json_decref(j);
}

/* A line of <uapi/vgmem_stats.h>: vgmemctl's words for it. */
struct ctl_line {
	const char *field, *show;
	int kind, unit;
	size_t off;		/* in the record */
};

#define GPU_LINE(f, a, k, h, unit, rest, show, ...)			\
	{ #f, show, k, unit, offsetof(struct mg_gpu_info, f) },
static const struct ctl_line gpu_lines[] = { VGMEM_GPU_STATS(GPU_LINE) };
#undef GPU_LINE
#define VM_LINE(f, a, k, h, unit, rest, show, ...)			\
	{ #f, show, k, unit, offsetof(struct mg_vm_info, stats.f) },
static const struct ctl_line vm_lines[] = { VGMEM_VM_STATS(VM_LINE) };
#undef VM_LINE

/*
 * Line i's value of its own, small enough that vgmemctl prints it as it
 * is: a count, "NB" or "Nns".
 */
static uint64_t line_value(const struct ctl_line *t, size_t i)
{
	return 100 + 50 * (uint64_t)t[i].unit + i;
}

static void set_values(void *rec, const struct ctl_line *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].kind != VGMEM_STAT_HIST)
			*(uint64_t *)((char *)rec + t[i].off) = line_value(t, i);
}

/* out has each shown line's words with its value. */
static void expect_words(const char *out, const struct ctl_line *t, size_t n)
{
	char want[160], val[32];
	size_t i;

	for (i = 0; i < n; i++) {
		const char *at;

		if (!t[i].show)
			continue;
		snprintf(val, sizeof(val), "%llu%s",
			 (unsigned long long)line_value(t, i),
			 t[i].unit == VGMEM_UNIT_BYTES ? "B" :
			 t[i].unit == VGMEM_UNIT_NS ? "ns" : "");
		at = strstr(t[i].show, "%s");
		assert_non_null(at);
		snprintf(want, sizeof(want), "%.*s%s%s", (int)(at - t[i].show),
			 t[i].show, val, at + 2);
		if (!strstr(out, want))
			fail_msg("%s: no '%s' in\n%s", t[i].field, want, out);
	}
}

static void test_every_counter(void **state)
{
	static struct run r;
	struct mg_gpu_info g;
	struct mg_vm_info v;

	(void)state;
	pthread_mutex_lock(&F.mg->lock);
	g = F.mg->gpus[0];
	v = F.mg->vms[1];
	set_values(&F.mg->gpus[0], gpu_lines,
		   sizeof(gpu_lines) / sizeof(gpu_lines[0]));
	set_values(&F.mg->vms[1], vm_lines,
		   sizeof(vm_lines) / sizeof(vm_lines[0]));
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);

	CTL(&r, "gpu", "0");
	assert_int_equal(r.code, 0);
	expect_words(r.out, gpu_lines, sizeof(gpu_lines) / sizeof(gpu_lines[0]));
	CTL(&r, "vm", "vm2");
	assert_int_equal(r.code, 0);
	expect_words(r.out, vm_lines, sizeof(vm_lines) / sizeof(vm_lines[0]));
	/* the model's own member ends the line of its group */
	assert_non_null(strstr(r.out, "; file cache private 128K\n"));

	pthread_mutex_lock(&F.mg->lock);
	F.mg->gpus[0] = g;
	F.mg->vms[1] = v;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
}

/* Every bad value of the daily-work options: exit 2, saying what it takes. */
static void test_bad_values(void **state)
{
	static const struct {
		const char *args[8];
		const char *says;
	} bad[] = {
		{ { "events", "--since", "", NULL }, "--since needs an event id or a time span" },
		{ { "events", "--since", "5x", NULL }, "not '5x'" },
		{ { "events", "--since", "-1", NULL }, "not '-1'" },
		{ { "events", "--since", "0m", NULL }, "not '0m'" },
		{ { "events", "--since", "1h30m", NULL }, "not '1h30m'" },
		{ { "events", "--since", "yesterday", NULL }, "not 'yesterday'" },
		{ { "events", "--since", "99999d", NULL }, "not '99999d'" },
		{ { "events", "--limit", "0", NULL }, "--limit needs a number of events from 1 to 1000, not '0'" },
		{ { "events", "--limit", "-5", NULL }, "not '-5'" },
		{ { "events", "--limit", "1001", NULL }, "not '1001'" },
		{ { "events", "--limit", "ten", NULL }, "not 'ten'" },
		{ { "events", "--follow", "--limit", "5", NULL }, "--follow: takes only --since ID" },
		{ { "events", "--follow", "--since", "1h", NULL }, "--follow: takes only --since ID" },
		{ { "vms", "--output", "xml", NULL }, "--output takes table, json or csv, not 'xml'" },
		{ { "vms", "--output", "", NULL }, "--output takes table, json or csv, not ''" },
		{ { "vms", "--state", "sleeping", NULL }, "unknown state 'sleeping' (mgmtd's states: running, stopped, lost, unmanaged, rejected)" },
		{ { "vms", "--state", "Running!", NULL }, "--state needs a state such as running, not 'Running!'" },
		{ { "vms", "--state", "", NULL }, "not ''" },
		{ { "vms", "--gpu", "x", NULL }, "--gpu takes a GPU index, not 'x'" },
		{ { "vms", "--gpu", "-1", NULL }, "not '-1'" },
		{ { "vms", "--watch=0", NULL }, "--watch=SEC takes 1 to 86400 seconds, not '0'" },
		{ { "vms", "--watch=soon", NULL }, "not 'soon'" },
		{ { "vms", "extra", NULL }, "unexpected argument 'extra'" },
		{ { "top", "--sort", "size", NULL }, "--sort takes gpu, name, resident" },
		{ { "top", "--interval", "0", NULL }, "--interval takes 1 to 3600 seconds, not '0'" },
		{ { "top", "--interval", "-2", NULL }, "not '-2'" },
		{ { "top", "--interval", "3601", NULL }, "not '3601'" },
		{ { "top", "extra", NULL }, "unexpected argument 'extra'" },
		/* stdout is a pipe here */
		{ { "top", NULL }, "top: needs a terminal on stdin and stdout; for scripts: vgmemctl top --once" },
	};
	static struct run r;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[12] = { "--socket", F.sock };

		for (j = 0; bad[i].args[j]; j++)
			argv[2 + j] = bad[i].args[j];
		argv[2 + j] = NULL;
		run_ctl(&r, argv);
		if (r.code != 2 || !strstr(r.err, bad[i].says))
			fail_msg("%s %s: exit %d, stderr '%s' (want 2, '%s')", bad[i].args[0],
				 bad[i].args[1] ? bad[i].args[1] : "", r.code, r.err, bad[i].says);
	}
}

static void set_running(const char *id, bool running)
{
	pthread_mutex_lock(&F.mg->lock);
	fake_find(F.mg, id)->running = running;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
}

/* vms: by GPU and state, as a table, JSON and CSV, and --watch. */
static void test_vms_filters_and_outputs(void **state)
{
	static struct run r;
	char line[256];
	json_t *j;

	(void)state;
	CTL(&r, "vms", "--gpu", "1");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, " STATE "));
	assert_non_null(strstr(r.out, VM2 "   1 running "));
	assert_null(strstr(r.out, "00000000-0000-4000-8000-000000000001"));
	assert_null(strstr(r.out, "00000000-0000-4000-8000-000000000003"));
	CTL(&r, "vms", "--gpu", "0");
	assert_int_equal(r.code, 0);
	assert_null(strstr(r.out, VM2));
	assert_non_null(strstr(r.out, "00000000-0000-4000-8000-000000000003"));
	CTL(&r, "vms", "--gpu", "7");	/* no such GPU: no VMs, not an error */
	assert_int_equal(r.code, 0);
	assert_null(strstr(r.out, "00000000-0000-4000-8000"));

	set_running("vm3", false);
	CTL(&r, "vms", "--state", "stopped");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "vm3 "));
	assert_non_null(strstr(r.out, " stopped "));
	assert_null(strstr(r.out, VM2));
	CTL(&r, "vms", "--state", "running", "--gpu", "0");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "00000000-0000-4000-8000-000000000001"));
	assert_null(strstr(r.out, "vm3 "));
	CTL(&r, "vms", "--state", "lost");
	assert_int_equal(r.code, 0);
	assert_null(strstr(r.out, "00000000-0000-4000-8000"));

	/* JSON: the API's object with the VMs asked for; --json is the same */
	CTL(&r, "vms", "--state", "stopped", "--output", "json");
	assert_int_equal(r.code, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "vms")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(j, "vms"), 0), "name")), "vm3");
	json_decref(j);
	CTL(&r, "--json", "vms", "--gpu", "1");
	assert_int_equal(r.code, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "vms")), 1);
	json_decref(j);
	set_running("vm3", true);

	/* CSV: bytes, and RFC 4180 quoting of vm1's name (web "prod"\1) */
	CTL(&r, "vms", "--output", "csv");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "name,id,gpu,state,quota,entitlement,allocated,"
				      "resident,relocated,cache_private,weight,priority,"
				      "advisory,error\n"));
	/* quota, then entitlement, allocated, resident, relocated, cache_private... */
	snprintf(line, sizeof(line), ",%llu,%llu,%llu,%llu,%u,100,0,0,\n",
		 2ull << 30, (2ull << 30) + 1, 1ull << 30, 1ull << 30, 2u << 16);
	assert_non_null(strstr(r.out, "\nvm2," VM2 ",1,running,"));
	if (!strstr(strstr(r.out, "\nvm2,"), line))
		fail_msg("no '%s' in\n%s", line, r.out);
	assert_non_null(strstr(r.out, "\n\"web \"\"prod\"\"\\1\",00000000-0000-4000-8000-000000000001,0,running,"));

	CTL(&r, "vms", "--help");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "--watch[=SEC]"));
}

/*
 * The libvirt domains mgmtd lists without managing them: rows of their
 * own, selected by their states like a VM's, left out by --gpu.
 */
static void test_vms_unmanaged_domains(void **state)
{
	static struct run r;
	struct mg_dom_info *d;
	json_t *j;

	(void)state;
	pthread_mutex_lock(&F.mg->lock);
	d = &F.mg->doms[0];
	memset(d, 0, sizeof(*d));
	snprintf(d->uuid, sizeof(d->uuid), "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
	snprintf(d->name, sizeof(d->name), "web2");
	snprintf(d->mdev, sizeof(d->mdev), "c2177883-f1bb-47f0-914d-32a22e3a8801");
	d->state = MG_DOM_UNMANAGED;
	snprintf(d->reason, sizeof(d->reason), "no <vgmem:gpu> metadata, \"not\" managed");
	F.mg->doms[1] = *d;
	snprintf(F.mg->doms[1].name, sizeof(F.mg->doms[1].name), "bad1");
	F.mg->doms[1].mdev[0] = '\0';
	F.mg->doms[1].state = MG_DOM_REJECTED;
	snprintf(F.mg->doms[1].reason, sizeof(F.mg->doms[1].reason), "no mdev hostdev");
	F.mg->ndoms = 2;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);

	CTL(&r, "vms");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, VM2));
	assert_non_null(strstr(r.out, "\nweb2                 c2177883-f1bb-47f0-914d-32a22e3a8801   - unmanaged       -"));
	assert_non_null(strstr(r.out, "  - no <vgmem:gpu> metadata, \"not\" managed\n"));
	assert_non_null(strstr(r.out, "\nbad1                 -                                      - rejected "));
	CTL(&r, "vms", "--state", "rejected");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\nbad1 "));
	assert_null(strstr(r.out, "web2"));
	assert_null(strstr(r.out, VM2));
	CTL(&r, "vms", "--gpu", "1");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, VM2));
	assert_null(strstr(r.out, "web2"));
	assert_null(strstr(r.out, "bad1"));
	CTL(&r, "vms", "--state", "unmanaged", "--output", "json");
	assert_int_equal(r.code, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "vms")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "unmanaged")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(j, "unmanaged"), 0), "name")), "web2");
	json_decref(j);
	CTL(&r, "vms", "--state", "unmanaged", "--output", "csv");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\nweb2,c2177883-f1bb-47f0-914d-32a22e3a8801,,unmanaged,"
				      ",,,,,,,,,\"no <vgmem:gpu> metadata, \"\"not\"\" managed\"\n"));

	/* top names them under the VMs */
	CTL(&r, "top", "--once", "--interval", "1");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\n2 libvirt domains not managed: web2 (unmanaged), bad1 (rejected) (vgmemctl vms)\n"));

	pthread_mutex_lock(&F.mg->lock);
	F.mg->ndoms = 0;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	CTL(&r, "top", "--once", "--interval", "1");
	assert_int_equal(r.code, 0);
	assert_null(strstr(r.out, "not managed"));
}

/* vms --watch=1: a listing, then another a second later, until killed. */
static void test_vms_watch(void **state)
{
	char buf[16384], *second;
	size_t n = 0;
	ssize_t got;
	int out[2];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl(ctl_path, ctl_path, "--socket", F.sock, "vms", "--watch=1",
		      "--gpu", "1", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	buf[0] = '\0';
	/* bounded by the child: it prints until killed; two headers suffice */
	while (n < sizeof(buf) - 1 && (got = read(out[0], buf + n, sizeof(buf) - 1 - n)) > 0) {
		n += (size_t)got;
		buf[n] = '\0';
		second = strstr(buf, "NAME ");
		if (second && strstr(second + 1, "NAME ") &&
		    strstr(strstr(second + 1, "NAME "), VM2))
			break;
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close(out[0]);
	second = strstr(buf, "NAME ");
	assert_non_null(second);
	assert_non_null(strstr(buf, "(every 1s)\n"));
	second = strstr(second + 1, "NAME ");
	if (!second)
		fail_msg("one listing only:\n%s", buf);
	assert_non_null(strstr(second, VM2));
	assert_null(strstr(buf, "00000000-0000-4000-8000-000000000001"));
}

/* vm and gpu print their histograms; a budget of 0 is unlimited. */
static void test_histograms_and_budget(void **state)
{
	static struct run r;

	(void)state;
	CTL(&r, "vm", "vm2");
	assert_int_equal(r.code, 0);
	/* suspensions of < 1 us, 1-2 us... in buckets 0, 1, 9 and the last */
	assert_non_null(strstr(r.out, "  Suspensions, by length (4 in all):\n"));
	assert_non_null(strstr(r.out, "\n              < 2.0us        1 ########################################\n"));
	assert_non_null(strstr(r.out, "\n        2.0us - 4.0us        1 #"));
	assert_non_null(strstr(r.out, "\n      512.0us - 1.0ms        1 #"));
	assert_non_null(strstr(r.out, "\n             >= 8.39s        1 #"));
	/* the empty buckets between the first and last: shown, no bar */
	assert_non_null(strstr(r.out, "\n        4.0us - 8.0us        0 \n"));
	/* vm2's stalls: bucket b (every third) holds b + 1; 92 in all */
	assert_non_null(strstr(r.out, "  Allocations that waited for relocation, by wait (92 in all):\n"));
	assert_non_null(strstr(r.out, " 2.10s - 4.19s       22 ########################################\n"));

	CTL(&r, "gpu", "0");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "of budget 64G\n"));
	assert_non_null(strstr(r.out, "(5 in all):\n"));
	assert_non_null(strstr(r.out, "\n        4.0us - 8.0us        5 #"));

	pthread_mutex_lock(&F.mg->lock);
	F.mg->gpus[1].host_budget = 0;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	CTL(&r, "gpu", "1");
	pthread_mutex_lock(&F.mg->lock);
	F.mg->gpus[1].host_budget = 64 * FAKE_GIB;
	fake_changed_locked(F.mg);
	pthread_mutex_unlock(&F.mg->lock);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "of budget unlimited\n"));
	assert_null(strstr(r.out, "budget 0B"));
}

/* events: newest first, by --limit, after an id, within a span; --json. */
static void test_events_newest_first(void **state)
{
	static struct run r;
	uint64_t e1, e2, e3;
	char since[32];
	const char *p1, *p2, *p3;
	size_t i;
	json_t *j;

	(void)state;
	e1 = fake_publish(F.mg, "pressure", VM2, "{\"n\":1}");
	e2 = fake_publish(F.mg, "pressure", VM2, "{\"n\":2}");
	e3 = fake_publish(F.mg, "pressure", VM2, "{\"n\":3}");
	/* e1 happened two hours ago */
	pthread_mutex_lock(&F.mg->lock);
	for (i = 0; i < F.mg->nevents; i++)
		if (F.mg->events[i].id == e1)
			F.mg->events[i].ts_ms -= 2 * 3600 * 1000;
	pthread_mutex_unlock(&F.mg->lock);

	CTL(&r, "events", "--limit", "3");
	assert_int_equal(r.code, 0);
	p1 = strstr(r.out, "{\"n\":1}");
	p2 = strstr(r.out, "{\"n\":2}");
	p3 = strstr(r.out, "{\"n\":3}");
	assert_true(p1 && p2 && p3 && p3 < p2 && p2 < p1);

	CTL(&r, "events", "--limit", "2");
	assert_int_equal(r.code, 0);
	assert_null(strstr(r.out, "{\"n\":1}"));
	assert_true(strstr(r.out, "{\"n\":3}") < strstr(r.out, "{\"n\":2}"));
	assert_non_null(strstr(r.out, "(older events left out"));

	snprintf(since, sizeof(since), "%llu", (unsigned long long)e1);
	CTL(&r, "events", "--since", since);
	assert_int_equal(r.code, 0);
	assert_null(strstr(r.out, "{\"n\":1}"));
	assert_true(strstr(r.out, "{\"n\":3}") < strstr(r.out, "{\"n\":2}"));
	assert_null(strstr(r.out, "older events"));

	CTL(&r, "events", "--since", "1h");
	assert_int_equal(r.code, 0);
	assert_null(strstr(r.out, "{\"n\":1}"));
	assert_non_null(strstr(r.out, "{\"n\":2}"));
	assert_null(strstr(r.out, "older events"));
	CTL(&r, "events", "--since", "180m");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "{\"n\":1}"));
	CTL(&r, "events", "--since", "1d", "--limit", "1");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "{\"n\":3}"));
	assert_null(strstr(r.out, "{\"n\":2}"));
	assert_non_null(strstr(r.out, "(older events left out"));

	CTL(&r, "--json", "events", "--limit", "2");
	assert_int_equal(r.code, 0);
	j = json_loads(r.out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "events")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(
		json_object_get(j, "events"), 0), "id")), e3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(
		json_object_get(j, "events"), 1), "id")), e2);
	assert_int_equal(json_integer_value(json_object_get(j, "last_id")), e3);
	assert_true(json_is_true(json_object_get(j, "more")));
	json_decref(j);
}

/* top --once: one frame for a script, without a terminal. */
static void test_top_once(void **state)
{
	static struct run r;

	(void)state;
	CTL(&r, "top", "--once", "--interval", "1");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "sort: gpu"));
	/* sim1: 16G of VRAM, 2 VMs at 1.0G resident (vm2) */
	assert_non_null(strstr(r.out, "GPU 1 sim1  VRAM 16G: BOs 0B, file cache 4.0M, free 16G"));
	/* VRAM's bar: 4M of 16G is no cell, all free */
	assert_non_null(strstr(r.out, "\n [......"));
	assert_non_null(strstr(r.out, "\nvm2                1 running       1.0G     1.0G     2.0G      4     0.0 "));
	assert_non_null(strstr(r.out, "# resident ~ relocated | entitlement"));
	assert_null(strstr(r.out, "recent events"));	/* a live view's only */
	CTL(&r, "top", "--once", "--interval", "1", "--sort", "name");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "sort: name"));
	/* by name: vm2, vm3, then "web ..." */
	assert_true(strstr(r.out, "\nvm2 ") < strstr(r.out, "\nvm3 "));
	assert_true(strstr(r.out, "\nvm3 ") < strstr(r.out, "\nweb "));
	CTL(&r, "top", "--help");
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "--once"));
	run_ctl(&r, (const char *const[]){ "--socket", "/nonexistent/sock", "top", "--once",
					    NULL });
	assert_int_equal(r.code, 3);
	assert_non_null(strstr(r.err, "cannot reach mgmtd"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_commands),
		cmocka_unit_test(test_write_commands),
		cmocka_unit_test(test_usage_and_failures),
		cmocka_unit_test(test_admit),
		cmocka_unit_test(test_tcp_with_token_file),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_every_counter),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_vms_filters_and_outputs),
		cmocka_unit_test(test_vms_unmanaged_domains),
		cmocka_unit_test(test_vms_watch),
		cmocka_unit_test(test_histograms_and_budget),
		cmocka_unit_test(test_events_newest_first),
		cmocka_unit_test(test_top_once),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
