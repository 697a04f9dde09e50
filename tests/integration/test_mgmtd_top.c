// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmemctl top (the binary of this build variant) as an operator sees it:
 * in a detached tmux session of a fixed size, against mgmtd's real model
 * and REST server on the embedded backend, in this process, under real
 * pressure: VM b is held to 16 MiB of a 64 MiB GPU whose rest VM a's min
 * pins, and keeps 24 MiB allocated while it replaces one buffer after
 * another, so its chunks are relocated again and again and the thrash
 * detector raises its advisory. The test reads the screen with tmux's
 * capture-pane, waiting (bounded, generously) for each thing to appear:
 * the GPU's bar, both VMs' rows, b's relocated bytes above 0 and its
 * THRASH note; then types keys (s: the next sort key, which reorders the
 * rows; ?: the help, any key closes it), resizes the window (the bars
 * follow), takes mgmtd's REST server away (top says it is unreachable)
 * and brings it back (top reconnects), and quits with q: exit status 0.
 */
#include <limits.h>
#include <libgen.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/mg_fixture.h"
#include "mgmtd/model.h"

#define MiB	(1ull << 20)
#define VMA	"00000000-0000-4000-8000-00000000000a"
#define VMB	"00000000-0000-4000-8000-00000000000b"
/* Generous: a loaded 2-core host under ASan, not a timing test. */
#define WAIT_MS	90000

static struct {
	struct mgf_dir dir;
	char ctl[PATH_MAX], sock[128], tmux[128];
	struct mg_config cfg;
	struct mg *mg;
	struct mg_rest *rest;
	struct vg_vm *vmb;
	pthread_t load;
	volatile int stop;
	int load_errors;
} T;

/* ---- the pressure ------------------------------------------------------- */

/*
 * b keeps three 8 MiB buffers (24 MiB, above its 16 MiB) and replaces the
 * oldest every 150 ms: each new one needs VRAM that only b's own chunks
 * can give, so b relocates all the time.
 */
static void *load_main(void *arg)
{
	u64 va[3] = { 0 };
	unsigned int i = 0;

	(void)arg;
	while (!T.stop) {
		if (va[i % 3] && vg_bo_free(T.vmb, va[i % 3]))
			T.load_errors++;
		va[i % 3] = 0;
		if (vg_bo_alloc(T.vmb, 8 * MiB, 0, &va[i % 3]))
			T.load_errors++;
		i++;
		usleep(150000);
	}
	for (i = 0; i < 3; i++)
		if (va[i])
			vg_bo_free(T.vmb, va[i]);
	return NULL;
}

/* ---- tmux -------------------------------------------------------------- */

static int tmux(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int tmux(const char *fmt, ...)
{
	char args[1024], cmd[1400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "tmux -S %s %s", T.tmux, args);
	return system(cmd);
}

/* The pane's text now, a line per row. */
static void screen(char *out, size_t len)
{
	char cmd[256];
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "tmux -S %s capture-pane -p -t top", T.tmux);
	out[0] = '\0';
	f = popen(cmd, "r");
	if (!f)
		return;
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	pclose(f);
}

typedef bool (*screen_pred)(const char *scr, const void *arg);

/* Polls the screen until pred holds (true), or WAIT_MS passed. */
static bool wait_screen(screen_pred pred, const void *arg, char *scr, size_t len)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		screen(scr, len);
		if (pred(scr, arg))
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
			return false;
		usleep(200000);
	}
}

static bool has(const char *scr, const void *arg)
{
	return strstr(scr, arg) != NULL;
}

static bool lacks(const char *scr, const void *arg)
{
	return !strstr(scr, arg);
}

static void expect(const char *what, char *scr, size_t len)
{
	if (!wait_screen(has, what, scr, len))
		fail_msg("'%s' never appeared; the screen:\n%s", what, scr);
}

/* The row of VM name: the line that starts with it and a space. */
static const char *vm_row(const char *scr, const char *name)
{
	size_t n = strlen(name);
	const char *l = scr;

	for (; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return l;
	return NULL;
}

/* The row's RELOC column (the fifth) is more than 0B. */
static bool relocated_above_0(const char *scr, const void *arg)
{
	const char *row = vm_row(scr, arg);
	char name[32], gpu[8], state[16], res[16], reloc[16];

	return row && sscanf(row, "%31s %7s %15s %15s %15s", name, gpu, state, res,
			     reloc) == 5 && strcmp(reloc, "0B");
}

/* a's row comes before b's. */
static bool a_first(const char *scr, const void *arg)
{
	const char *a = vm_row(scr, "a"), *b = vm_row(scr, "b");

	(void)arg;
	return a && b && a < b;
}

static bool b_first(const char *scr, const void *arg)
{
	const char *a = vm_row(scr, "a"), *b = vm_row(scr, "b");

	(void)arg;
	return a && b && b < a;
}

/* The GPU's bar " [#..." is exactly as wide as a terminal of *arg columns gives. */
static bool bar_fits(const char *scr, const void *arg)
{
	int cols = *(const int *)arg;
	const char *l = strstr(scr, "\n [");
	const char *e;

	if (!l)
		return false;
	l++;
	e = strchr(l, '\n');
	return e && e - l == cols - 1 && e[-1] == ']';
}

/* ---- setup ------------------------------------------------------------- */

static int rest_start(void)
{
	char why[256] = "";
	int ret = mg_rest_start(T.mg, &T.cfg, &T.rest, why, sizeof(why));

	if (ret)
		fprintf(stderr, "mg_rest_start: %s (%d)\n", why, ret);
	return ret;
}

static int setup(void **state)
{
	struct mg_vm_policy p = { 0 };
	char self[PATH_MAX], why[MG_WHY_LEN];
	struct mg_knobs k;
	ssize_t n;
	u64 va;

	(void)state;
	mg_log_set_level(MG_LOG_ERR - 1);
	/* build[/asan]/tests/integration/test_mgmtd_top -> build[/asan]/bin/vgmemctl */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(T.ctl, sizeof(T.ctl), "%s/../../bin/vgmemctl", dirname(self));
	if (access(T.ctl, X_OK) || system("tmux -V > /dev/null"))
		return -1;
	if (mgf_dir_make(&T.dir, "top"))
		return -1;
	snprintf(T.sock, sizeof(T.sock), "%s/mgmtd.sock", T.dir.path);
	snprintf(T.tmux, sizeof(T.tmux), "%s/tmux.sock", T.dir.path);
	mgf_config(&T.cfg, T.dir.db, "none");
	mgf_set(&T.cfg, "embedded_vram", "64M");
	mgf_set(&T.cfg, "embedded_vm", "a:" VMA ":64M");
	mgf_set(&T.cfg, "embedded_vm", "b:" VMB ":64M");
	mgf_set(&T.cfg, "recompute_ms", "100");	/* the daemon's timer ticks */
	mgf_set(&T.cfg, "listen_unix", T.sock);
	if (mg_create(&T.cfg, &T.mg))
		return -1;
	assert_int_equal(mg_get_knobs(T.mg, &k), 0);
	k.thrash_window_s = 1;
	assert_int_equal(mg_set_knobs(T.mg, &k, MG_KNOB_THRASH_WINDOW, why, sizeof(why)), 0);
	/* b is held to 16 MiB; a's min takes the rest of VRAM, and a fills it */
	p.max = 16 * MiB;
	assert_int_equal(mg_set_vm_policy(T.mg, VMB, &p, MG_POL_MAX, why, sizeof(why)), 0);
	p.min = p.low = 48 * MiB;
	assert_int_equal(mg_set_vm_policy(T.mg, VMA, &p, MG_POL_MIN | MG_POL_LOW, why,
					  sizeof(why)), 0);
	assert_int_equal(vg_bo_alloc(mgf_core_vm(T.mg, VMA), 48 * MiB, 0, &va), 0);
	T.vmb = mgf_core_vm(T.mg, VMB);
	if (rest_start())
		return -1;
	if (pthread_create(&T.load, NULL, load_main, NULL))
		return -1;
	/* top in a terminal of 140 x 45; the shell says how it ended */
	if (tmux("-f /dev/null new-session -d -s top -x 140 -y 45 "
		 "\"%s --socket %s top --interval 1; echo top exited \\$?; sleep 3600\"",
		 T.ctl, T.sock))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tmux("kill-server 2> /dev/null");
	T.stop = 1;
	pthread_join(T.load, NULL);
	if (T.rest)
		mg_rest_stop(T.rest);
	mg_destroy(T.mg);
	mg_config_free(&T.cfg);
	return mgf_dir_remove(&T.dir);
}

/* ---- the tests, in order on one session -------------------------------- */

static char scr[64 * 1024];

static void test_shows_gpu_and_vms_under_pressure(void **state)
{
	(void)state;
	expect("GPU 0 sim0  VRAM 64M", scr, sizeof(scr));
	expect(" [#", scr, sizeof(scr));	/* the bar: a's BOs at least */
	expect("events: live", scr, sizeof(scr));
	assert_non_null(vm_row(scr, "a"));
	if (!wait_screen(relocated_above_0, "b", scr, sizeof(scr)))
		fail_msg("b never showed relocated bytes; the screen:\n%s", scr);
	expect("THRASH", scr, sizeof(scr));
	/* the advisory's row is b's, not a's */
	assert_non_null(vm_row(scr, "b"));
	assert_non_null(vm_row(scr, "a"));
	assert_non_null(strstr(vm_row(scr, "b"), "THRASH"));
	assert_true(strstr(vm_row(scr, "a"), "THRASH") == NULL ||
		    strstr(vm_row(scr, "a"), "THRASH") > strchr(vm_row(scr, "a"), '\n'));
	expect("advisory", scr, sizeof(scr));	/* the event, in the recent events */
	assert_int_equal(T.load_errors, 0);
}

static void test_sort_keys(void **state)
{
	(void)state;
	/* gpu, then name: a before b */
	expect("sort: gpu  (", scr, sizeof(scr));
	assert_true(a_first(scr, NULL));
	tmux("send-keys -t top s");
	expect("sort: name  (", scr, sizeof(scr));
	tmux("send-keys -t top s");
	expect("sort: resident  (", scr, sizeof(scr));
	/* most resident first: a's 48 MiB before b's 16 */
	if (!wait_screen(a_first, NULL, scr, sizeof(scr)))
		fail_msg("a not first by resident:\n%s", scr);
	tmux("send-keys -t top r");
	expect("sort: resident reversed", scr, sizeof(scr));
	if (!wait_screen(b_first, NULL, scr, sizeof(scr)))
		fail_msg("b not first by resident reversed:\n%s", scr);
	tmux("send-keys -t top s");
	expect("sort: relocated reversed", scr, sizeof(scr));
	tmux("send-keys -t top r");
	/* most relocated first: b (a has nothing relocated) */
	expect("sort: relocated  (", scr, sizeof(scr));
	if (!wait_screen(b_first, NULL, scr, sizeof(scr)))
		fail_msg("b not first by relocated:\n%s", scr);
}

static void test_help(void **state)
{
	(void)state;
	tmux("send-keys -t top ?");
	expect("vgmemctl top: keys", scr, sizeof(scr));
	assert_non_null(strstr(scr, "s      sort by the next column"));
	tmux("send-keys -t top x");
	if (!wait_screen(lacks, "vgmemctl top: keys", scr, sizeof(scr)))
		fail_msg("the help stayed:\n%s", scr);
	/* x only closed the help: still sorted as before */
	assert_non_null(strstr(scr, "sort: relocated  ("));
}

static void test_resize(void **state)
{
	int cols = 140;

	(void)state;
	if (!wait_screen(bar_fits, &cols, scr, sizeof(scr)))
		fail_msg("no bar of 140 columns:\n%s", scr);
	assert_int_equal(tmux("resize-window -t top -x 100 -y 30"), 0);
	cols = 100;
	if (!wait_screen(bar_fits, &cols, scr, sizeof(scr)))
		fail_msg("no bar of 100 columns after the resize:\n%s", scr);
}

static void test_mgmtd_away_and_back(void **state)
{
	(void)state;
	mg_rest_stop(T.rest);
	T.rest = NULL;
	expect("UNREACHABLE", scr, sizeof(scr));
	expect("mgmtd unreachable: cannot reach mgmtd at", scr, sizeof(scr));
	expect("events: reconnecting", scr, sizeof(scr));
	assert_int_equal(rest_start(), 0);
	expect(": connected", scr, sizeof(scr));
	expect("events: live", scr, sizeof(scr));
	if (!wait_screen(lacks, "mgmtd unreachable", scr, sizeof(scr)))
		fail_msg("still unreachable:\n%s", scr);
	assert_non_null(vm_row(scr, "b"));
}

static void test_quit(void **state)
{
	(void)state;
	tmux("send-keys -t top q");
	expect("top exited ", scr, sizeof(scr));
	assert_non_null(strstr(scr, "top exited 0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shows_gpu_and_vms_under_pressure),
		cmocka_unit_test(test_sort_keys),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_mgmtd_away_and_back),
		cmocka_unit_test(test_quit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
