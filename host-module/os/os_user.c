// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * os.h on pthreads and libc: the out-of-line half of os_user.h (locks with
 * owner tracking, wait queues, completions, kthreads, allocation with fault
 * injection, logging, time and randomness).
 */
#include "os.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#ifdef __SANITIZE_THREAD__
/* The word smp_*mb() touch under ThreadSanitizer (os_user.h). */
unsigned long os_fence_word;
#endif

/* ---- threads' identity ---------------------------------------------------- */
static unsigned long os_next_thread_id = 1;
/* os_user.h reads it for lockdep_assert_held()'s inline check. */
__thread unsigned long os_self_id;
/* Spinlocks the calling thread holds: it must not sleep while > 0. */
static __thread int os_atomic_depth;
/* The kthread_run() task of the calling thread, or NULL. */
static __thread struct task_struct *os_current;

unsigned long os_thread_id(void)
{
	if (unlikely(!os_self_id))
		os_self_id = __atomic_fetch_add(&os_next_thread_id, 1,
						__ATOMIC_RELAXED);
	return os_self_id;
}

/* ---- failures: BUG, WARN, violations ------------------------------------- */
static unsigned long os_warnings;

static void __attribute__((noreturn, format(printf, 3, 4)))
os_die(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vgmem: FATAL: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}

void os_bug(const char *file, int line, const char *what)
{
	os_die(file, line, "%s", what);
}

void os_warn(const char *file, int line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__atomic_fetch_add(&os_warnings, 1, __ATOMIC_RELAXED);
	os_log(LOGLEVEL_WARNING, "WARNING: %s:%d: %s\n", file, line, msg);
}

unsigned long os_warn_count(void)
{
	return __atomic_load_n(&os_warnings, __ATOMIC_RELAXED);
}

void os_list_corrupt(const char *what, const struct list_head *entry,
		     const struct list_head *a, const struct list_head *b)
{
	fprintf(stderr, "vgmem: FATAL: list corruption: %s (entry %p, %p, %p)\n",
		what, (const void *)entry, (const void *)a, (const void *)b);
	fflush(stderr);
	abort();
}

/* ---- logging --------------------------------------------------------------- */
static pthread_mutex_t os_log_lock = PTHREAD_MUTEX_INITIALIZER;
static int os_log_max = -1;		/* -1: not read from the environment yet */
static os_log_fn os_log_cb;
static void *os_log_cb_priv;

/* Called with os_log_lock held. */
static int os_log_threshold(void)
{
	if (os_log_max < 0) {
		const char *env = getenv("VGMEM_LOG_LEVEL");

		os_log_max = LOGLEVEL_WARNING;
		if (env && *env) {
			char *end;
			long v = strtol(env, &end, 10);

			if (!*end && v >= 0 && v <= LOGLEVEL_DEBUG)
				os_log_max = (int)v;
		}
	}
	return os_log_max;
}

int os_log_level(int level)
{
	int old;

	pthread_mutex_lock(&os_log_lock);
	old = os_log_threshold();
	os_log_max = level;
	pthread_mutex_unlock(&os_log_lock);
	return old;
}

void os_log_capture(os_log_fn fn, void *priv)
{
	pthread_mutex_lock(&os_log_lock);
	os_log_cb = fn;
	os_log_cb_priv = priv;
	pthread_mutex_unlock(&os_log_lock);
}

void os_log(int level, const char *fmt, ...)
{
	static const char *const names[] = {
		"emerg", "alert", "crit", "err", "warn", "notice", "info",
		"debug",
	};
	char line[1024];
	size_t len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (level < 0 || level > LOGLEVEL_DEBUG)
		level = LOGLEVEL_DEBUG;

	/* One lock keeps lines from different threads whole. */
	pthread_mutex_lock(&os_log_lock);
	if (os_log_cb)
		os_log_cb(os_log_cb_priv, level, line);
	if (level <= os_log_threshold())
		fprintf(stderr, "vgmem %s: %s\n", names[level], line);
	pthread_mutex_unlock(&os_log_lock);
}

#define OS_RATELIMIT_NS		(5ull * 1000000000ull)
#define OS_RATELIMIT_BURST	10u

bool os_ratelimit_ok(struct os_ratelimit *rl, const char *func, u32 *missed)
{
	static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;
	u64 now = ktime_get_ns();
	bool ok;

	(void)func;
	*missed = 0;
	pthread_mutex_lock(&rl_lock);
	if (!rl->begin_ns || now - rl->begin_ns >= OS_RATELIMIT_NS) {
		*missed = rl->missed;
		rl->begin_ns = now;
		rl->printed = 0;
		rl->missed = 0;
	}
	ok = rl->printed < OS_RATELIMIT_BURST;
	if (ok)
		rl->printed++;
	else
		rl->missed++;
	pthread_mutex_unlock(&rl_lock);
	return ok;
}

/* ---- strings ------------------------------------------------------------------ */
ssize_t strscpy(char *dest, const char *src, size_t size)
{
	size_t len;

	if (size == 0)
		return -E2BIG;
	len = strnlen(src, size);
	if (len == size) {
		memcpy(dest, src, size - 1);
		dest[size - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dest, src, len + 1);
	return (ssize_t)len;
}

int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (size == 0)
		return 0;
	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	return (size_t)n < size ? n : (int)(size - 1);
}

/* ---- memory ---------------------------------------------------------------------- */
/* Allocations left before the injected failure; negative: disarmed. */
static long os_alloc_budget = -1;
static unsigned long os_alloc_failed;

void os_fail_alloc_after(long n)
{
	__atomic_store_n(&os_alloc_budget, n < 0 ? -1 : n, __ATOMIC_SEQ_CST);
}

unsigned long os_alloc_failures(void)
{
	return __atomic_load_n(&os_alloc_failed, __ATOMIC_SEQ_CST);
}

/*
 * Decides for one allocation. The budget counts down to 0; the allocation
 * that finds it at 0 fails and disarms it, so exactly one fails.
 */
static bool os_alloc_should_fail(void)
{
	long b = __atomic_load_n(&os_alloc_budget, __ATOMIC_SEQ_CST);

	while (b >= 0) {
		long next = b > 0 ? b - 1 : -1;

		if (__atomic_compare_exchange_n(&os_alloc_budget, &b, next,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			if (b == 0) {
				__atomic_fetch_add(&os_alloc_failed, 1,
						   __ATOMIC_SEQ_CST);
				return true;
			}
			return false;
		}
	}
	return false;
}

static bool os_alloc_begin(gfp_t flags)
{
	if (flags & ___GFP_WAIT)
		os_might_sleep("kmalloc", 0);
	return !os_alloc_should_fail();
}

void *kmalloc(size_t size, gfp_t flags)
{
	if (!os_alloc_begin(flags))
		return NULL;
	if (flags & __GFP_ZERO)
		return calloc(1, size ? size : 1);
	/* The kernel's kmalloc(0) returns a unique non-NULL pointer too. */
	return malloc(size ? size : 1);
}

/*
 * An arena that costs RAM only as it is touched: a private anonymous
 * mapping (zero pages until written, not counted against overcommit), so
 * a large simulated VRAM costs what its guests use, not its size.
 */
void *os_vmem_alloc(size_t len)
{
	void *p;

	if (!os_alloc_begin(GFP_KERNEL))
		return NULL;
	p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void os_vmem_free(void *p, size_t len)
{
	if (p)
		munmap(p, len ? len : 1);
}

/*
 * The pages go back to the kernel and read as zeroes when next touched.
 * Should the kernel refuse (it does not for a private anonymous mapping),
 * zero them by hand: the contract is the zeroes.
 */
void os_vmem_zero(void *p, size_t len)
{
	if (madvise(p, len, MADV_DONTNEED))
		memset(p, 0, len);
}

void *kzalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags | __GFP_ZERO);
}

void *kmemdup(const void *src, size_t len, gfp_t flags)
{
	void *p = kmalloc(len, flags);

	if (p)
		memcpy(p, src, len);
	return p;
}

void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	size_t bytes;

	if (check_mul_overflow(n, size, &bytes))
		return NULL;
	return kmalloc(bytes, flags);
}

void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array(n, size, flags | __GFP_ZERO);
}

void *krealloc(const void *p, size_t new_size, gfp_t flags)
{
	if (!os_alloc_begin(flags))
		return NULL;
	if (!new_size) {
		free((void *)p);
		return NULL;
	}
	return realloc((void *)p, new_size);
}

char *kstrdup(const char *s, gfp_t flags)
{
	size_t len;
	char *d;

	if (!s)
		return NULL;
	len = strlen(s) + 1;
	d = kmalloc(len, flags);
	if (d)
		memcpy(d, s, len);
	return d;
}

void kfree(const void *p)
{
	free((void *)p);
}

void sort(void *base, size_t num, size_t size, cmp_func_t cmp_func,
	  swap_func_t swap_func)
{
	(void)swap_func;
	if (num > 1)
		qsort(base, num, size, cmp_func);
}

/* ---- locks -------------------------------------------------------------------------- */
void os_lock_init(struct os_lock *l, bool spin, struct os_lock_class *cls)
{
	pthread_mutex_init(&l->m, NULL);
	l->owner = 0;
	l->spin = spin;
	l->cls = cls;
}

void os_lock_destroy(struct os_lock *l, const char *file, int line)
{
	unsigned long owner = __atomic_load_n(&l->owner, __ATOMIC_SEQ_CST);

	if (owner)
		os_die(file, line, "mutex_destroy() of a mutex held by thread %lu",
		       owner);
	pthread_mutex_destroy(&l->m);
}

void os_might_sleep(const char *file, int line)
{
	if (unlikely(os_atomic_depth > 0))
		os_die(file, line,
		       "sleeping function called while holding %d spinlock(s)",
		       os_atomic_depth);
}

static void os_lock_took(struct os_lock *l)
{
	__atomic_store_n(&l->owner, os_thread_id(), __ATOMIC_SEQ_CST);
	if (l->spin)
		os_atomic_depth++;
}

void os_lock_acquire(struct os_lock *l, unsigned int subclass,
		     const char *file, int line)
{
	unsigned long self = os_thread_id();

	if (!l->spin)
		os_might_sleep(file, line);
	if (__atomic_load_n(&l->owner, __ATOMIC_SEQ_CST) == self)
		os_die(file, line, "recursive locking: this thread holds the lock");
	/* Before waiting: an order that can deadlock is reported, not hung. */
	os_lockdep_acquire(l, subclass, false, file, line);
	pthread_mutex_lock(&l->m);
	os_lock_took(l);
}

bool os_lock_try(struct os_lock *l, const char *file, int line)
{
	if (pthread_mutex_trylock(&l->m))
		return false;
	os_lock_took(l);
	os_lockdep_acquire(l, 0, true, file, line);
	return true;
}

void os_lock_release(struct os_lock *l, const char *file, int line)
{
	unsigned long owner = __atomic_load_n(&l->owner, __ATOMIC_SEQ_CST);

	if (owner != os_thread_id())
		os_die(file, line,
		       "unlock of a lock %s (owner thread %lu, this thread %lu)",
		       owner ? "another thread holds" : "nobody holds", owner,
		       os_thread_id());
	if (l->spin)
		os_atomic_depth--;
	os_lockdep_release(l);
	__atomic_store_n(&l->owner, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&l->m);
}

void os_lock_assert_held_slow(const struct os_lock *l, const char *file,
			      int line, const char *expr)
{
	if (__atomic_load_n(&l->owner, __ATOMIC_SEQ_CST) != os_thread_id())
		os_die(file, line, "lockdep_assert_held(%s): not held by this thread",
		       expr);
}

void os_lock_assert_not_held(const struct os_lock *l, const char *file,
			     int line, const char *expr)
{
	if (__atomic_load_n(&l->owner, __ATOMIC_SEQ_CST) == os_thread_id())
		os_die(file, line, "lockdep_assert_not_held(%s): held by this thread",
		       expr);
}

/* ---- time ------------------------------------------------------------------------------ */
u64 ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + (u64)ts.tv_nsec;
}

static void os_sleep_ns(u64 ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void msleep(unsigned int msecs)
{
	os_might_sleep("msleep", 0);
	os_sleep_ns((u64)msecs * NSEC_PER_MSEC);
}

void usleep_range(unsigned long min_us, unsigned long max_us)
{
	(void)max_us;
	os_might_sleep("usleep_range", 0);
	os_sleep_ns((u64)min_us * NSEC_PER_USEC);
}

/* Busy-waits, as the kernel's does: allowed under a spinlock. */
void udelay(unsigned long usecs)
{
	ndelay(usecs * 1000);
}

void ndelay(unsigned long nsecs)
{
	u64 end = ktime_get_ns() + nsecs;

	while (ktime_get_ns() < end)
		;
}

void cond_resched(void)
{
	os_might_sleep("cond_resched", 0);
	sched_yield();
}

/* Absolute CLOCK_MONOTONIC time for pthread_cond_clockwait(). */
static struct timespec os_ts(u64 ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	return ts;
}

u64 os_deadline(long timeout)
{
	u64 now = ktime_get_ns();
	u64 span;

	if (timeout == MAX_SCHEDULE_TIMEOUT)
		return 0;
	if (timeout < 0)
		timeout = 0;
	if (check_mul_overflow((u64)timeout, (u64)(NSEC_PER_SEC / HZ), &span) ||
	    check_add_overflow(now, span, &span))
		return 0;
	/* 0 means "no deadline", so a real one is never 0. */
	return span ? span : 1;
}

long os_jiffies_left(u64 deadline_ns)
{
	u64 now;
	u64 per_jiffy = NSEC_PER_SEC / HZ;

	if (!deadline_ns)
		return MAX_SCHEDULE_TIMEOUT;
	now = ktime_get_ns();
	if (now >= deadline_ns)
		return 1;
	return max_t(long, 1, (long)DIV_ROUND_UP(deadline_ns - now, per_jiffy));
}

/* ---- wait queues ------------------------------------------------------------------------- */
void init_waitqueue_head(wait_queue_head_t *wq)
{
	pthread_mutex_init(&wq->lock, NULL);
	pthread_cond_init(&wq->cond, NULL);
	wq->seq = 0;
}

void os_wake_up(wait_queue_head_t *wq)
{
	pthread_mutex_lock(&wq->lock);
	wq->seq++;
	pthread_cond_broadcast(&wq->cond);
	pthread_mutex_unlock(&wq->lock);
}

unsigned long os_wq_seq(wait_queue_head_t *wq, const char *file, int line)
{
	unsigned long seq;

	os_might_sleep(file, line);
	pthread_mutex_lock(&wq->lock);
	seq = wq->seq;
	pthread_mutex_unlock(&wq->lock);
	return seq;
}

static void os_set_waiting(wait_queue_head_t *wq)
{
	struct task_struct *t = os_current;

	if (!t)
		return;
	pthread_mutex_lock(&t->wait_lock);
	t->waiting_on = wq;
	pthread_mutex_unlock(&t->wait_lock);
}

/*
 * kthread_stop() wakes its thread once, as the kernel's wake_up_process()
 * does: the waiter re-evaluates its condition and sleeps again if the
 * condition ignores kthread_should_stop().
 */
static bool os_take_stop_kick(void)
{
	return os_current &&
	       __atomic_load_n(&os_current->stop_kick, __ATOMIC_SEQ_CST) &&
	       __atomic_exchange_n(&os_current->stop_kick, false,
				   __ATOMIC_SEQ_CST);
}

bool os_wq_wait(wait_queue_head_t *wq, unsigned long seq, u64 deadline_ns)
{
	bool in_time = true;

	/*
	 * Publish where we sleep before checking the stop kick: kthread_stop()
	 * sets the kick before reading waiting_on, so one of us sees the other.
	 */
	os_set_waiting(wq);
	pthread_mutex_lock(&wq->lock);
	while (wq->seq == seq && !os_take_stop_kick()) {
		if (deadline_ns) {
			struct timespec ts = os_ts(deadline_ns);

			if (pthread_cond_clockwait(&wq->cond, &wq->lock,
						   CLOCK_MONOTONIC, &ts) == ETIMEDOUT) {
				in_time = wq->seq != seq;
				break;
			}
		} else {
			pthread_cond_wait(&wq->cond, &wq->lock);
		}
	}
	pthread_mutex_unlock(&wq->lock);
	os_set_waiting(NULL);
	return in_time;
}

/* ---- completions ------------------------------------------------------------------------- */
void init_completion(struct completion *x)
{
	x->done = 0;
	pthread_mutex_init(&x->lock, NULL);
	pthread_cond_init(&x->cond, NULL);
}

void reinit_completion(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	x->done = 0;
	pthread_mutex_unlock(&x->lock);
}

void complete(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	if (x->done != UINT_MAX)
		x->done++;
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->lock);
}

void complete_all(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	x->done = UINT_MAX;
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->lock);
}

bool completion_done(struct completion *x)
{
	bool done;

	pthread_mutex_lock(&x->lock);
	done = x->done != 0;
	pthread_mutex_unlock(&x->lock);
	return done;
}

/* Called with x->lock held and x->done > 0. */
static void os_completion_take(struct completion *x)
{
	if (x->done != UINT_MAX)
		x->done--;
}

bool try_wait_for_completion(struct completion *x)
{
	bool got = false;

	pthread_mutex_lock(&x->lock);
	if (x->done) {
		os_completion_take(x);
		got = true;
	}
	pthread_mutex_unlock(&x->lock);
	return got;
}

long os_wait_for_completion(struct completion *x, long timeout,
			    const char *file, int line)
{
	u64 deadline;
	long ret;

	os_might_sleep(file, line);
	deadline = os_deadline(timeout);
	pthread_mutex_lock(&x->lock);
	while (!x->done) {
		if (deadline) {
			struct timespec ts = os_ts(deadline);

			if (pthread_cond_clockwait(&x->cond, &x->lock,
						   CLOCK_MONOTONIC, &ts) == ETIMEDOUT &&
			    !x->done) {
				pthread_mutex_unlock(&x->lock);
				return 0;
			}
		} else {
			pthread_cond_wait(&x->cond, &x->lock);
		}
	}
	os_completion_take(x);
	pthread_mutex_unlock(&x->lock);
	ret = os_jiffies_left(deadline);
	return ret;
}

/* ---- kthreads ---------------------------------------------------------------------------- */
static void *os_kthread_main(void *arg)
{
	struct task_struct *t = arg;

	os_current = t;
	/* As in the kernel, a thread stopped before it ran never runs fn. */
	if (__atomic_load_n(&t->should_stop, __ATOMIC_SEQ_CST))
		t->result = -EINTR;
	else
		t->result = t->fn(t->data);
	if (os_atomic_depth)
		os_die(t->comm, 0, "kthread exited holding %d spinlock(s)",
		       os_atomic_depth);
	if (os_lockdep_depth())
		os_die(t->comm, 0, "kthread exited holding %d lock(s)",
		       os_lockdep_depth());
	os_current = NULL;
	return NULL;
}

struct task_struct *kthread_run(int (*threadfn)(void *data), void *data,
				const char *namefmt, ...)
{
	struct task_struct *t;
	va_list ap;
	int err;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->fn = threadfn;
	t->data = data;
	pthread_mutex_init(&t->wait_lock, NULL);
	va_start(ap, namefmt);
	vsnprintf(t->comm, sizeof(t->comm), namefmt, ap);
	va_end(ap);

	err = pthread_create(&t->thread, NULL, os_kthread_main, t);
	if (err) {
		pthread_mutex_destroy(&t->wait_lock);
		kfree(t);
		return ERR_PTR(err == EAGAIN ? -EAGAIN : -ENOMEM);
	}
	/* Only a debugging aid (top -H, gdb): failure does not matter. */
	pthread_setname_np(t->thread, t->comm);
	return t;
}

int kthread_stop(struct task_struct *k)
{
	int ret;

	os_might_sleep("kthread_stop", 0);
	if (k == os_current)
		os_die(k->comm, 0, "kthread_stop() of the calling thread");
	__atomic_store_n(&k->should_stop, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&k->stop_kick, true, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&k->wait_lock);
	if (k->waiting_on) {
		wait_queue_head_t *wq = k->waiting_on;

		pthread_mutex_lock(&wq->lock);
		pthread_cond_broadcast(&wq->cond);
		pthread_mutex_unlock(&wq->lock);
	}
	pthread_mutex_unlock(&k->wait_lock);

	pthread_join(k->thread, NULL);
	ret = k->result;
	pthread_mutex_destroy(&k->wait_lock);
	kfree(k);
	return ret;
}

bool kthread_should_stop(void)
{
	if (WARN_ON_ONCE(!os_current))
		return false;
	return __atomic_load_n(&os_current->should_stop, __ATOMIC_SEQ_CST);
}

/* ---- random ----------------------------------------------------------------------------- */
static void os_random_bytes(void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			os_die(__FILE__, __LINE__, "getrandom: %s", strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
}

u32 get_random_u32(void)
{
	u32 v;

	os_random_bytes(&v, sizeof(v));
	return v;
}

u64 get_random_u64(void)
{
	u64 v;

	os_random_bytes(&v, sizeof(v));
	return v;
}
