// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace OS layer (os_user.h): the checks it adds (lock assertions,
 * sleeping under a spinlock) must fire on violations and stay quiet
 * otherwise, and waits, completions, kthreads, fault injection, lists and
 * the arithmetic helpers must behave as their kernel namesakes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host-module/os/os.h"

/* ---- running a violation in a child ------------------------------------- */

/*
 * Runs @fn(@arg) in a forked child with stderr silenced and returns true if
 * the child died of SIGABRT (the OS layer's verdict on a violation). A child
 * that returns exits 0, so a check that does not fire fails the test.
 */
static bool aborts(void (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 2);
		fn(arg);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

struct locks {
	struct mutex mx;
	spinlock_t sl;
};

static void assert_mutex_unheld(void *arg)
{
	struct locks *l = arg;

	lockdep_assert_held(&l->mx);
}

static void assert_spin_unheld(void *arg)
{
	struct locks *l = arg;

	lockdep_assert_held(&l->sl);
}

static void assert_mutex_held_then_not(void *arg)
{
	struct locks *l = arg;

	mutex_lock(&l->mx);
	lockdep_assert_held(&l->mx);
	lockdep_assert_not_held(&l->mx);	/* fires */
}

static void sleep_under_spinlock(void *arg)
{
	struct locks *l = arg;

	spin_lock(&l->sl);
	mutex_lock(&l->mx);			/* fires: might sleep */
}

static void kmalloc_under_spinlock(void *arg)
{
	struct locks *l = arg;
	void *p;

	spin_lock(&l->sl);
	p = kmalloc(8, GFP_ATOMIC);		/* allowed */
	kfree(p);
	p = kmalloc(8, GFP_KERNEL);		/* fires */
	kfree(p);
}

static void relock_mutex(void *arg)
{
	struct locks *l = arg;

	mutex_lock(&l->mx);
	mutex_lock(&l->mx);			/* fires instead of hanging */
}

static void destroy_held_mutex(void *arg)
{
	struct locks *l = arg;

	mutex_lock(&l->mx);
	mutex_destroy(&l->mx);			/* fires */
}

static void *hold_then_return(void *arg)
{
	struct locks *l = arg;

	mutex_lock(&l->mx);
	return NULL;
}

static void unlock_foreign_mutex(void *arg)
{
	struct locks *l = arg;
	pthread_t t;

	pthread_create(&t, NULL, hold_then_return, l);
	pthread_join(t, NULL);
	lockdep_assert_not_held(&l->mx);	/* held, but not by us: fine */
	mutex_unlock(&l->mx);			/* fires */
}

static void init_locks(struct locks *l)
{
	mutex_init(&l->mx);
	spin_lock_init(&l->sl);
}

static void test_lock_assertions_fire(void **state)
{
	struct locks l;

	(void)state;
	init_locks(&l);
	assert_true(aborts(assert_mutex_unheld, &l));
	assert_true(aborts(assert_spin_unheld, &l));
	assert_true(aborts(assert_mutex_held_then_not, &l));
	assert_true(aborts(sleep_under_spinlock, &l));
	assert_true(aborts(kmalloc_under_spinlock, &l));
	assert_true(aborts(relock_mutex, &l));
	assert_true(aborts(destroy_held_mutex, &l));
	assert_true(aborts(unlock_foreign_mutex, &l));
	mutex_destroy(&l.mx);
}

static void test_lock_assertions_pass_when_held(void **state)
{
	struct locks l;

	(void)state;
	init_locks(&l);
	lockdep_assert_not_held(&l.mx);
	lockdep_assert_not_held(&l.sl);
	assert_false(mutex_is_locked(&l.mx));

	mutex_lock(&l.mx);
	lockdep_assert_held(&l.mx);
	assert_true(mutex_is_locked(&l.mx));
	assert_int_equal(mutex_trylock(&l.mx), 0);
	spin_lock(&l.sl);
	lockdep_assert_held(&l.sl);
	lockdep_assert_held(&l.mx);
	spin_unlock(&l.sl);
	mutex_unlock(&l.mx);

	assert_false(mutex_is_locked(&l.mx));
	assert_int_equal(mutex_trylock(&l.mx), 1);
	lockdep_assert_held(&l.mx);
	mutex_unlock(&l.mx);
	mutex_destroy(&l.mx);
}

/* ---- wait queues ------------------------------------------------------------ */

struct waiter {
	wait_queue_head_t wq;
	int flag;
	long ret;
	unsigned long timeout;
	struct completion started;
};

static int waiter_fn(void *data)
{
	struct waiter *w = data;

	complete(&w->started);
	w->ret = wait_event_timeout(w->wq, READ_ONCE(w->flag) != 0,
				    w->timeout);
	return 0;
}

static void test_wait_event_timeout_expires(void **state)
{
	struct waiter w = { .timeout = msecs_to_jiffies(20) };

	(void)state;
	init_waitqueue_head(&w.wq);
	/* The condition never becomes true: 0, even after spurious wake-ups. */
	wake_up(&w.wq);
	assert_int_equal(wait_event_timeout(w.wq, READ_ONCE(w.flag) != 0,
					    msecs_to_jiffies(20)), 0);
	/* A zero timeout still reports a true condition as 1. */
	w.flag = 1;
	assert_int_equal(wait_event_timeout(w.wq, READ_ONCE(w.flag) != 0, 0), 1);
}

static void test_wait_event_timeout_woken(void **state)
{
	struct waiter w = { .timeout = msecs_to_jiffies(60 * 1000) };
	struct task_struct *t;

	(void)state;
	init_waitqueue_head(&w.wq);
	init_completion(&w.started);
	w.ret = -1;
	t = kthread_run(waiter_fn, &w, "test-waiter");
	assert_false(IS_ERR(t));
	wait_for_completion(&w.started);
	WRITE_ONCE(w.flag, 1);
	wake_up_all(&w.wq);
	assert_int_equal(kthread_stop(t), 0);
	assert_true(w.ret >= 1);
	assert_true(w.ret <= (long)w.timeout);
}

/* ---- completions ------------------------------------------------------------ */

static int completer_fn(void *data)
{
	complete(data);
	return 0;
}

static void test_completion(void **state)
{
	struct completion c;
	struct task_struct *t;

	(void)state;
	init_completion(&c);
	assert_false(completion_done(&c));
	assert_int_equal(wait_for_completion_timeout(&c, msecs_to_jiffies(10)), 0);

	t = kthread_run(completer_fn, &c, "test-completer");
	assert_false(IS_ERR(t));
	assert_true(wait_for_completion_timeout(&c, msecs_to_jiffies(60000)) >= 1);
	assert_int_equal(kthread_stop(t), 0);
	/* One complete() is consumed by one wait. */
	assert_false(try_wait_for_completion(&c));

	complete(&c);
	complete(&c);
	wait_for_completion(&c);
	assert_true(try_wait_for_completion(&c));
	assert_false(try_wait_for_completion(&c));

	/* complete_all() releases every later waiter until reinit. */
	complete_all(&c);
	wait_for_completion(&c);
	wait_for_completion(&c);
	assert_true(completion_done(&c));
	reinit_completion(&c);
	assert_false(completion_done(&c));
}

/* ---- kthreads ------------------------------------------------------------------ */

struct stopper {
	wait_queue_head_t wq;
	atomic_t loops;
	struct completion started;
};

static int stop_fn(void *data)
{
	struct stopper *s = data;

	/*
	 * Count the pass before telling the test we run: the test's
	 * kthread_stop() may come right after complete(), before a loop
	 * condition would be checked again.
	 */
	do {
		if (atomic_inc_return(&s->loops) == 1)
			complete(&s->started);
		/* No timeout: only kthread_stop()'s wake-up ends this wait. */
		wait_event(s->wq, kthread_should_stop());
	} while (!kthread_should_stop());
	return 42;
}

static int never_runs_fn(void *data)
{
	atomic_inc(data);
	return 1;
}

static void test_kthread(void **state)
{
	struct stopper s;
	struct task_struct *t;
	atomic_t ran = ATOMIC_INIT(0);

	(void)state;
	init_waitqueue_head(&s.wq);
	init_completion(&s.started);
	atomic_set(&s.loops, 0);
	assert_false(kthread_should_stop());	/* not a kthread: false, warns */

	t = kthread_run(stop_fn, &s, "test-stop-%d", 7);
	assert_false(IS_ERR(t));
	assert_string_equal(t->comm, "test-stop-7");
	wait_for_completion(&s.started);
	assert_int_equal(kthread_stop(t), 42);
	assert_int_equal(atomic_read(&s.loops), 1);

	/*
	 * The thread may or may not have started when the stop comes; if it
	 * had not, the kernel never runs threadfn and returns -EINTR.
	 */
	t = kthread_run(never_runs_fn, &ran, "test-early");
	assert_false(IS_ERR(t));
	if (kthread_stop(t) == -EINTR)
		assert_int_equal(atomic_read(&ran), 0);
	else
		assert_int_equal(atomic_read(&ran), 1);
}

/* ---- allocation fault injection ---------------------------------------------- */

static void test_fail_alloc_after(void **state)
{
	unsigned long failed = os_alloc_failures();
	void *a, *b, *c, *d;
	struct task_struct *t;

	(void)state;
	os_fail_alloc_after(2);
	a = kmalloc(16, GFP_KERNEL);
	b = kzalloc(16, GFP_KERNEL);
	c = kcalloc(4, 4, GFP_KERNEL);		/* the third one fails */
	d = kvmalloc(16, GFP_KERNEL);		/* and only that one */
	assert_non_null(a);
	assert_non_null(b);
	assert_null(c);
	assert_non_null(d);
	assert_int_equal(os_alloc_failures(), failed + 1);
	kfree(a);
	kfree(b);
	kvfree(d);

	os_fail_alloc_after(0);
	t = kthread_run(completer_fn, NULL, "never");
	assert_true(IS_ERR(t));
	assert_int_equal(PTR_ERR(t), -ENOMEM);

	os_fail_alloc_after(0);
	os_fail_alloc_after(-1);		/* disarmed */
	a = kmalloc(1, GFP_KERNEL);
	assert_non_null(a);
	kfree(a);
	assert_int_equal(os_alloc_failures(), failed + 2);

	/* Overflowing array sizes fail without injection. */
	assert_null(kmalloc_array(SIZE_MAX / 2, 4, GFP_KERNEL));
	assert_null(kcalloc(SIZE_MAX / 8, 16, GFP_KERNEL));
}

/* ---- lists ---------------------------------------------------------------------- */

struct node {
	int v;
	struct list_head link;
};

static int list_values(struct list_head *head, int *out, int max_n)
{
	struct node *n;
	int i = 0;

	list_for_each_entry(n, head, link) {
		if (i < max_n)
			out[i] = n->v;
		i++;
	}
	return i;
}

static void corrupt_double_del(void *arg)
{
	struct list_head *e = arg;

	list_del(e);
	list_del(e);		/* fires */
}

static void test_lists(void **state)
{
	LIST_HEAD(a);
	LIST_HEAD(b);
	struct node n[5], *pos, *tmp;
	int vals[8], i;

	(void)state;
	assert_true(list_empty(&a));
	assert_null(list_first_entry_or_null(&a, struct node, link));
	for (i = 0; i < 5; i++) {
		n[i].v = i;
		if (i < 3)
			list_add_tail(&n[i].link, &a);	/* a: 0 1 2 */
		else
			list_add(&n[i].link, &b);	/* b: 4 3 */
	}
	assert_int_equal(list_values(&a, vals, 8), 3);
	assert_int_equal(vals[0], 0);
	assert_int_equal(vals[2], 2);
	assert_int_equal(list_first_entry(&b, struct node, link)->v, 4);
	assert_int_equal(list_last_entry(&a, struct node, link)->v, 2);

	list_move_tail(&n[0].link, &a);			/* a: 1 2 0 */
	list_move(&n[2].link, &a);			/* a: 2 1 0 */
	assert_int_equal(list_values(&a, vals, 8), 3);
	assert_int_equal(vals[0], 2);
	assert_int_equal(vals[1], 1);
	assert_int_equal(vals[2], 0);

	list_splice_tail_init(&b, &a);			/* a: 2 1 0 4 3 */
	assert_true(list_empty(&b));
	assert_int_equal(list_values(&a, vals, 8), 5);
	assert_int_equal(vals[3], 4);
	assert_int_equal(vals[4], 3);

	list_del_init(&n[1].link);
	assert_true(list_empty(&n[1].link));
	list_for_each_entry_safe(pos, tmp, &a, link)
		if (pos->v % 2 == 0)
			list_del(&pos->link);		/* a: 3 */
	assert_true(list_is_singular(&a));
	assert_int_equal(list_first_entry_or_null(&a, struct node, link)->v, 3);
	assert_true(aborts(corrupt_double_del, &n[3].link));
}

/* ---- arithmetic helpers ----------------------------------------------------------- */

static const int ilog2_table[ilog2(1024) + 1];	/* constant-folded */

static void test_arith(void **state)
{
	volatile u64 big = 1ULL << 40;
	volatile u32 v = 1000;
	u32 r32;
	u64 r64;
	size_t sz;

	(void)state;
	assert_int_equal(ARRAY_SIZE(ilog2_table), 11);
	assert_false(check_add_overflow(U32_MAX - 1, 1u, &r32));
	assert_int_equal(r32, U32_MAX);
	assert_true(check_add_overflow(U32_MAX, 1u, &r32));
	assert_true(check_add_overflow(U64_MAX, (u64)1, &r64));
	assert_false(check_mul_overflow((size_t)1 << 20, (size_t)1 << 20, &sz));
	assert_true(check_mul_overflow(SIZE_MAX / 2, (size_t)3, &sz));

	assert_int_equal(ilog2(1), 0);
	assert_int_equal(ilog2(4096), 12);
	assert_int_equal(ilog2(v), 9);
	assert_int_equal(ilog2(big), 40);
	assert_int_equal(ilog2(big + 1), 40);
	assert_int_equal(roundup_pow_of_two(1), 1);
	assert_int_equal(roundup_pow_of_two(1000), 1024);
	assert_int_equal(roundup_pow_of_two(v), 1024);
	assert_int_equal(roundup_pow_of_two(big), big);
	assert_int_equal(roundup_pow_of_two(big + 1), big * 2);
	assert_int_equal(rounddown_pow_of_two(v), 512);
	assert_true(is_power_of_2(4096));
	assert_false(is_power_of_2(0));
	assert_false(is_power_of_2(v));

	assert_int_equal(fls64(0), 0);
	assert_int_equal(fls64(big), 41);
	assert_int_equal(div64_u64(big, 3), (1ULL << 40) / 3);
	assert_int_equal(DIV_ROUND_UP(v, 7), 143);
	assert_int_equal(ALIGN(v, 64), 1024);
	assert_true(IS_ALIGNED(big, 4096));
	assert_int_equal(min(v, 7u), 7);
	assert_int_equal(max(v, big), big);
	assert_int_equal(min_t(int, -1, 5), -1);
	assert_int_equal(clamp(v, 1u, 100u), 100);
	assert_int_equal(BIT(3) | BIT_ULL(40), 8 | (1ULL << 40));
	assert_int_equal(lower_32_bits(big | 5), 5);
	assert_int_equal(upper_32_bits(big), 256);
}

static void test_strings_and_errptr(void **state)
{
	char buf[6];
	void *p = ERR_PTR(-EBUSY);

	(void)state;
	assert_int_equal(strscpy(buf, "abc", sizeof(buf)), 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(strscpy(buf, "abcdefgh", sizeof(buf)), -E2BIG);
	assert_string_equal(buf, "abcde");
	assert_int_equal(strscpy(buf, "x", 0), -E2BIG);
	assert_int_equal(scnprintf(buf, sizeof(buf), "%d", 1234567), 5);

	assert_true(IS_ERR(p));
	assert_int_equal(PTR_ERR(p), -EBUSY);
	assert_false(IS_ERR(buf));
	assert_true(IS_ERR_OR_NULL(NULL));
}

/* ---- WARN and logging -------------------------------------------------------------- */

struct captured {
	int lines;
	int level;
	char last[128];
};

static void capture(void *priv, int level, const char *line)
{
	struct captured *c = priv;

	c->lines++;
	c->level = level;
	strscpy(c->last, line, sizeof(c->last));
}

static void test_warn_and_log(void **state)
{
	unsigned long warns = os_warn_count();
	struct captured c = { 0 };
	int old, i;

	(void)state;
	old = os_log_level(LOGLEVEL_EMERG);	/* keep stderr quiet */
	os_log_capture(capture, &c);

	assert_false(WARN_ON(1 + 1 == 3));
	assert_int_equal(os_warn_count(), warns);
	assert_true(WARN_ON(1 + 1 == 2));
	assert_int_equal(os_warn_count(), warns + 1);
	assert_int_equal(c.level, LOGLEVEL_WARNING);
	assert_non_null(strstr(c.last, "WARN_ON(1 + 1 == 2)"));
	for (i = 0; i < 3; i++)
		WARN_ON_ONCE(i >= 0);
	assert_int_equal(os_warn_count(), warns + 2);

	pr_debug("debug %d", 7);			/* captured though filtered */
	assert_int_equal(c.level, LOGLEVEL_DEBUG);
	assert_string_equal(c.last, "debug 7");
	pr_err("error line\n");				/* newline stripped */
	assert_string_equal(c.last, "error line");
	assert_int_equal(c.level, LOGLEVEL_ERR);

	os_log_capture(NULL, NULL);
	os_log_level(old);
}

/* ---- atomics and time --------------------------------------------------------------- */

static void test_atomics_and_time(void **state)
{
	atomic_t a = ATOMIC_INIT(1);
	atomic64_t b = ATOMIC64_INIT(0);
	u64 t0, t1;

	(void)state;
	assert_true(atomic_dec_and_test(&a));
	assert_int_equal(atomic_add_return(5, &a), 5);
	atomic_inc(&a);
	assert_int_equal(atomic_read(&a), 6);
	assert_int_equal(atomic_cmpxchg(&a, 6, 9), 6);
	assert_int_equal(atomic_cmpxchg(&a, 6, 1), 9);
	atomic64_add(1LL << 40, &b);
	atomic64_inc(&b);
	assert_int_equal(atomic64_add_return(1, &b), (1LL << 40) + 2);
	assert_int_equal(atomic64_read(&b), (1LL << 40) + 2);

	assert_int_equal(msecs_to_jiffies(1234), 1234);
	assert_int_equal(usecs_to_jiffies(1001), 2);
	t0 = ktime_get_ns();
	msleep(2);
	t1 = ktime_get_ns();
	assert_true(t1 - t0 >= 2 * NSEC_PER_MSEC);	/* a floor, not a speed */
	assert_true(get_random_u64() != get_random_u64() ||
		    get_random_u32() != get_random_u32());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_assertions_fire),
		cmocka_unit_test(test_lock_assertions_pass_when_held),
		cmocka_unit_test(test_wait_event_timeout_expires),
		cmocka_unit_test(test_wait_event_timeout_woken),
		cmocka_unit_test(test_completion),
		cmocka_unit_test(test_kthread),
		cmocka_unit_test(test_fail_alloc_after),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_arith),
		cmocka_unit_test(test_strings_and_errptr),
		cmocka_unit_test(test_warn_and_log),
		cmocka_unit_test(test_atomics_and_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
