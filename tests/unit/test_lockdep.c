// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace OS layer's lock-order checker (os_user_lockdep.c): an AB/BA
 * inversion (in one thread or two, directly or through a third lock) and
 * two locks of one class nested are reported, with where each lock was
 * taken, and abort the program; subclasses (mutex_lock_nested), trylocks
 * and consistent orders are not reported.
 *
 * Each test initialises its locks at its own lines, so its classes are its
 * own: the order graph of one test cannot leak into another.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host-module/os/os.h"

/* ---- what the checker prints ------------------------------------------------- */

static char seen[16384];
static size_t seen_len;

static void capture(void *priv, int level, const char *line)
{
	(void)priv;
	(void)level;
	if (seen_len + strlen(line) + 2 < sizeof(seen)) {
		memcpy(seen + seen_len, line, strlen(line));
		seen_len += strlen(line);
		seen[seen_len++] = '\n';
		seen[seen_len] = '\0';
	}
}

/* Reports count and print instead of aborting; quiet on stderr. */
static int setup(void **state)
{
	(void)state;
	seen_len = 0;
	seen[0] = '\0';
	os_lockdep_set_fatal(false);
	os_log_capture(capture, NULL);
	os_log_level(LOGLEVEL_EMERG);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	os_log_capture(NULL, NULL);
	os_log_level(LOGLEVEL_WARNING);
	os_lockdep_set_fatal(true);
	assert_int_equal(os_lockdep_depth(), 0);
	return 0;
}

static void assert_seen(const char *what)
{
	if (!strstr(seen, what))
		fail_msg("the report lacks \"%s\"; it was:\n%s", what, seen);
}

/* The report names this file at @line. */
static void assert_seen_line(int line)
{
	char at[64];

	snprintf(at, sizeof(at), "%s:%d", __FILE__, line);
	assert_seen(at);
}

/* ---- inversions ---------------------------------------------------------------- */

static void test_ab_ba_one_thread(void **state)
{
	struct mutex a, b;
	unsigned long before = os_lockdep_reports();
	int la, lb;

	(void)state;
	mutex_init(&a); la = __LINE__;
	mutex_init(&b); lb = __LINE__;
	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);
	assert_int_equal(os_lockdep_reports(), before);

	/* Never deadlocks in one thread, but two threads doing these would. */
	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
	assert_int_equal(os_lockdep_reports(), before + 1);
	assert_seen("circular locking dependency");
	/* Both classes, by where they were initialised. */
	assert_seen_line(la);
	assert_seen_line(lb);
	/* Reported once: the inverted order is not recorded. */
	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);
	assert_int_equal(os_lockdep_reports(), before + 1);
	mutex_destroy(&a);
	mutex_destroy(&b);
}

struct pair {
	spinlock_t *first, *second;
};

static void *take_pair(void *arg)
{
	struct pair *p = arg;

	spin_lock(p->first);
	spin_lock(p->second);
	spin_unlock(p->second);
	spin_unlock(p->first);
	return NULL;
}

/* The two orders in two threads that never overlap: still reported. */
static void test_ab_ba_two_threads(void **state)
{
	spinlock_t a, b;
	struct pair ab = { &a, &b }, ba = { &b, &a };
	unsigned long before = os_lockdep_reports();
	pthread_t t;

	(void)state;
	spin_lock_init(&a);
	spin_lock_init(&b);
	assert_int_equal(pthread_create(&t, NULL, take_pair, &ab), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(os_lockdep_reports(), before);
	assert_int_equal(pthread_create(&t, NULL, take_pair, &ba), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(os_lockdep_reports(), before + 1);
	assert_seen("circular locking dependency");
	assert_seen("&a");
	assert_seen("&b");
}

/* A before B, B before C, then C before A: the report walks the path. */
static void test_cycle_through_third_lock(void **state)
{
	struct mutex a, b, c;
	unsigned long before = os_lockdep_reports();
	int lab, lbc;

	(void)state;
	mutex_init(&a);
	mutex_init(&b);
	mutex_init(&c);
	mutex_lock(&a);
	mutex_lock(&b); lab = __LINE__;
	mutex_unlock(&b);
	mutex_unlock(&a);
	mutex_lock(&b);
	mutex_lock(&c); lbc = __LINE__;
	mutex_unlock(&c);
	mutex_unlock(&b);
	assert_int_equal(os_lockdep_reports(), before);
	mutex_lock(&c);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&c);
	assert_int_equal(os_lockdep_reports(), before + 1);
	/* Where B was taken under A and C under B. */
	assert_seen_line(lab);
	assert_seen_line(lbc);
	mutex_destroy(&a);
	mutex_destroy(&b);
	mutex_destroy(&c);
}

/* ---- one class ------------------------------------------------------------------- */

struct vmish {
	int id;
	struct mutex lock;
};

/* Every vmish's lock is initialised here: one class, as in the kernel. */
static void vmish_init(struct vmish *v, int id)
{
	v->id = id;
	mutex_init(&v->lock);
}

static void test_same_class_nesting(void **state)
{
	struct vmish x, y;
	unsigned long before = os_lockdep_reports();

	(void)state;
	vmish_init(&x, 1);
	vmish_init(&y, 2);
	mutex_lock(&x.lock);
	mutex_lock(&y.lock);
	mutex_unlock(&y.lock);
	mutex_unlock(&x.lock);
	assert_int_equal(os_lockdep_reports(), before + 1);
	assert_seen("recursive locking");
	assert_seen("mutex_lock_nested");
	mutex_destroy(&x.lock);
	mutex_destroy(&y.lock);
}

/* Two of one class in a fixed order (by id), annotated: no report. */
static void test_nested_subclass_ok(void **state)
{
	struct vmish x, y;
	struct vmish *lo, *hi;
	unsigned long before = os_lockdep_reports();
	int i;

	(void)state;
	vmish_init(&x, 1);
	vmish_init(&y, 2);
	for (i = 0; i < 2; i++) {
		lo = i ? &y : &x;
		hi = i ? &x : &y;
		if (lo->id > hi->id) {
			struct vmish *t = lo;

			lo = hi;
			hi = t;
		}
		mutex_lock(&lo->lock);
		mutex_lock_nested(&hi->lock, SINGLE_DEPTH_NESTING);
		mutex_unlock(&hi->lock);
		mutex_unlock(&lo->lock);
	}
	assert_int_equal(os_lockdep_reports(), before);
	assert_int_equal(seen_len, 0);
	mutex_destroy(&x.lock);
	mutex_destroy(&y.lock);
}

/* ---- what is not reported -------------------------------------------------------- */

/* A trylock cannot wait: holding A, a trylock of B orders nothing. */
static void test_trylock_adds_no_order(void **state)
{
	struct mutex a, b;
	unsigned long before = os_lockdep_reports();

	(void)state;
	mutex_init(&a);
	mutex_init(&b);
	mutex_lock(&a);
	assert_true(mutex_trylock(&b));
	mutex_unlock(&b);
	mutex_unlock(&a);
	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
	assert_int_equal(os_lockdep_reports(), before);
	assert_int_equal(seen_len, 0);
	mutex_destroy(&a);
	mutex_destroy(&b);
}

/* Released out of order, taken again in one order: consistent. */
static void test_consistent_orders_quiet(void **state)
{
	struct mutex a, b;
	spinlock_t s;
	unsigned long before = os_lockdep_reports();
	int i;

	(void)state;
	mutex_init(&a);
	mutex_init(&b);
	spin_lock_init(&s);
	for (i = 0; i < 3; i++) {
		mutex_lock(&a);
		mutex_lock(&b);
		spin_lock(&s);
		mutex_unlock(&a);	/* not the last taken */
		spin_unlock(&s);
		mutex_unlock(&b);
		mutex_lock(&b);
		spin_lock(&s);
		spin_unlock(&s);
		mutex_unlock(&b);
	}
	assert_int_equal(os_lockdep_depth(), 0);
	assert_int_equal(os_lockdep_reports(), before);
	assert_int_equal(seen_len, 0);
	mutex_destroy(&a);
	mutex_destroy(&b);
}

/* ---- by default a report fails the program ------------------------------------------ */

static void invert(void)
{
	struct mutex a, b;

	mutex_init(&a);
	mutex_init(&b);
	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);
	mutex_lock(&b);
	mutex_lock(&a);			/* aborts */
	_exit(0);
}

static void nest(void)
{
	struct vmish x, y;

	vmish_init(&x, 1);
	vmish_init(&y, 2);
	mutex_lock(&x.lock);
	mutex_lock(&y.lock);		/* aborts */
	_exit(0);
}

/* Runs @fn in a child with stderr to a pipe: true if it died of SIGABRT. */
static bool aborts_saying(void (*fn)(void), const char *what)
{
	char out[8192];
	size_t len = 0;
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		os_log_capture(NULL, NULL);
		os_log_level(LOGLEVEL_ERR);
		os_lockdep_set_fatal(true);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 &&
	       (n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!strstr(out, what))
		print_error("the child's stderr lacks \"%s\":\n%s", what, out);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
	       strstr(out, what);
}

static void test_report_aborts(void **state)
{
	(void)state;
	assert_true(aborts_saying(invert, "circular locking dependency"));
	assert_true(aborts_saying(nest, "recursive locking"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ab_ba_one_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ab_ba_two_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_through_third_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_class_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_subclass_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trylock_adds_no_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_consistent_orders_quiet, setup, teardown),
		cmocka_unit_test(test_report_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
