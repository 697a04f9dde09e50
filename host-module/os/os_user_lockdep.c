// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The lock-order checker of the userspace OS layer, after the kernel's
 * lockdep (the rules are in os_user.h, above struct os_lock_class).
 *
 * Nodes are (class, subclass) pairs, numbered on first use; the order graph
 * is a bit matrix, adj[a] bit b meaning "a was held while b was taken". A
 * lock taken while holding others tests each held node's bit with a
 * relaxed load: once every order a program uses is known, taking a lock
 * costs a few loads and no shared lock. ThreadSanitizer sees no
 * synchronisation there either, so the checker hides no data race; only
 * the first time an order is seen does it take os_ld_lock (a plain pthread
 * mutex, invisible to the checker itself), to search the graph for a path
 * back and to record where the order was first seen, for reports.
 *
 * Lock rules: os_ld_lock protects os_ld_nodes, os_ld_nr, os_ld_sites and the
 * search's scratch arrays; adj bits and classes' node numbers are set under
 * it with atomic stores and read without it. The held stack is per thread.
 */
#include "os.h"

#define OS_LD_NODES	1024
#define OS_LD_WORDS	(OS_LD_NODES / 64)
#define OS_LD_HELD	48

struct os_ld_node {
	const struct os_lock_class *cls;
	unsigned int sub;
};

/* Where an order was first seen: @to taken at to_file:to_line holding @from. */
struct os_ld_site {
	int from, to;
	const char *from_file, *to_file;
	int from_line, to_line;
	unsigned long thread;
};

struct os_ld_held {
	const struct os_lock *l;
	int node;
	bool trylock;
	const char *file;
	int line;
};

static pthread_mutex_t os_ld_lock = PTHREAD_MUTEX_INITIALIZER;
static struct os_ld_node os_ld_nodes[OS_LD_NODES];
static int os_ld_nr;
static u64 os_ld_adj[OS_LD_NODES][OS_LD_WORDS];
static struct os_ld_site *os_ld_sites;
static size_t os_ld_nr_sites, os_ld_cap_sites;
/* Breadth-first search: the node each one was reached from, and a queue. */
static int os_ld_parent[OS_LD_NODES];
static int os_ld_queue[OS_LD_NODES];

static bool os_ld_fatal = true;			/* atomic */
static unsigned long os_ld_reports;		/* atomic */

static __thread struct os_ld_held os_ld_held[OS_LD_HELD];
static __thread int os_ld_depth;

bool os_lockdep_set_fatal(bool fatal)
{
	return __atomic_exchange_n(&os_ld_fatal, fatal, __ATOMIC_RELAXED);
}

unsigned long os_lockdep_reports(void)
{
	return __atomic_load_n(&os_ld_reports, __ATOMIC_RELAXED);
}

int os_lockdep_depth(void)
{
	return os_ld_depth;
}

static bool os_ld_edge(int a, int b)
{
	return __atomic_load_n(&os_ld_adj[a][b / 64], __ATOMIC_RELAXED) &
	       (1ULL << (b % 64));
}

static int os_ld_node(const struct os_lock *l, unsigned int sub,
		      const char *file, int line)
{
	struct os_lock_class *cls = l->cls;
	int n;

	/* The kernel's lockdep refuses such a lock too ("non-static key"). */
	if (!cls)
		os_bug(file, line, "lock taken that mutex_init()/spin_lock_init() never initialised");
	if (sub >= MAX_LOCKDEP_SUBCLASSES)
		os_bug(file, line, "lock subclass out of range");
	n = __atomic_load_n(&cls->node[sub], __ATOMIC_RELAXED);
	if (likely(n))
		return n - 1;
	pthread_mutex_lock(&os_ld_lock);
	n = cls->node[sub];
	if (!n) {
		if (os_ld_nr == OS_LD_NODES) {
			pthread_mutex_unlock(&os_ld_lock);
			os_bug(file, line, "lock-order checker: too many lock classes");
		}
		os_ld_nodes[os_ld_nr].cls = cls;
		os_ld_nodes[os_ld_nr].sub = sub;
		n = ++os_ld_nr;
		__atomic_store_n(&cls->node[sub], n, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&os_ld_lock);
	return n - 1;
}

/* Appends to @buf (size @size, used *@len) what follows the format. */
static void __printf(4, 5) os_ld_put(char *buf, size_t size, size_t *len,
				     const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = min_t(size_t, size - 1, *len + (size_t)n);
}

/* "name" (class file:line[, subclass n]), with os_ld_lock held. */
static void os_ld_put_node(char *buf, size_t size, size_t *len, int n)
{
	const struct os_ld_node *nd = &os_ld_nodes[n];

	os_ld_put(buf, size, len, "%s (class of %s:%d", nd->cls->name,
		  nd->cls->file, nd->cls->line);
	if (nd->sub)
		os_ld_put(buf, size, len, ", subclass %u", nd->sub);
	os_ld_put(buf, size, len, ")");
}

static const struct os_ld_site *os_ld_site(int a, int b)
{
	size_t i;

	for (i = 0; i < os_ld_nr_sites; i++)
		if (os_ld_sites[i].from == a && os_ld_sites[i].to == b)
			return &os_ld_sites[i];
	return NULL;
}

/* Is there a path @from ->* @to? Leaves os_ld_parent for the report. */
static bool os_ld_reaches(int from, int to)
{
	int head = 0, tail = 0, i, w;

	for (i = 0; i < os_ld_nr; i++)
		os_ld_parent[i] = -1;
	os_ld_parent[from] = from;
	os_ld_queue[tail++] = from;
	while (head < tail) {
		int a = os_ld_queue[head++];

		for (w = 0; w < OS_LD_WORDS; w++) {
			u64 bits = __atomic_load_n(&os_ld_adj[a][w],
						   __ATOMIC_RELAXED);

			while (bits) {
				int b = w * 64 + (int)__ffs((unsigned long)bits);

				bits &= bits - 1;
				if (os_ld_parent[b] >= 0)
					continue;
				os_ld_parent[b] = a;
				if (b == to)
					return true;
				os_ld_queue[tail++] = b;
			}
		}
	}
	return false;
}

/* Prints the report in @buf line by line, counts it, aborts if fatal. */
static void os_ld_report(char *buf, const char *file, int line)
{
	char *s = buf, *nl;

	__atomic_fetch_add(&os_ld_reports, 1, __ATOMIC_RELAXED);
	for (; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl)
			nl = s + strlen(s);
		os_log(LOGLEVEL_ERR, "%.*s", (int)(nl - s), s);
		if (!*nl)
			break;
	}
	if (__atomic_load_n(&os_ld_fatal, __ATOMIC_RELAXED))
		os_bug(file, line, "lock-order checker: possible deadlock (report above)");
}

static void os_ld_head(char *buf, size_t size, size_t *len, const char *what,
		       int node, const char *file, int line)
{
	os_ld_put(buf, size, len, "LOCKDEP: %s\n  thread %lu takes ", what,
		  os_thread_id());
	os_ld_put_node(buf, size, len, node);
	os_ld_put(buf, size, len, " at %s:%d\n", file, line);
}

/* Taking a lock of a class the thread holds, without a new subclass. */
static void os_ld_nesting(const struct os_ld_held *h, int node,
			  const char *file, int line)
{
	char buf[2048];
	size_t len = 0;

	pthread_mutex_lock(&os_ld_lock);
	os_ld_head(buf, sizeof(buf), &len,
		   "possible recursive locking: two locks of one class nested",
		   node, file, line);
	os_ld_put(buf, sizeof(buf), &len,
		  "  while holding another lock of that class, taken at %s:%d\n"
		  "  (nest them in a fixed order with mutex_lock_nested()/spin_lock_nested(), or init them at different places)",
		  h->file, h->line);
	pthread_mutex_unlock(&os_ld_lock);
	os_ld_report(buf, file, line);
}

/*
 * First time @a is held while @b is taken: unless @b already leads to @a
 * (a cycle: report it, and keep the graph acyclic), record the order.
 */
static void os_ld_add(const struct os_ld_held *h, int b, const char *file,
		      int line)
{
	char buf[4096];
	size_t len = 0;
	int a = h->node, n, k;

	pthread_mutex_lock(&os_ld_lock);
	if (os_ld_edge(a, b)) {
		pthread_mutex_unlock(&os_ld_lock);
		return;
	}
	if (!os_ld_reaches(b, a)) {
		if (os_ld_nr_sites == os_ld_cap_sites) {
			size_t cap = os_ld_cap_sites ? 2 * os_ld_cap_sites : 256;
			/* libc, not kmalloc: no fault injection, no might_sleep. */
			void *p = realloc(os_ld_sites, cap * sizeof(*os_ld_sites));

			if (!p) {
				pthread_mutex_unlock(&os_ld_lock);
				os_bug(file, line, "lock-order checker: out of memory");
			}
			os_ld_sites = p;
			os_ld_cap_sites = cap;
		}
		os_ld_sites[os_ld_nr_sites++] = (struct os_ld_site){
			.from = a, .to = b, .from_file = h->file,
			.from_line = h->line, .to_file = file, .to_line = line,
			.thread = os_thread_id() };
		__atomic_fetch_or(&os_ld_adj[a][b / 64], 1ULL << (b % 64),
				  __ATOMIC_RELAXED);
		pthread_mutex_unlock(&os_ld_lock);
		return;
	}
	os_ld_head(buf, sizeof(buf), &len,
		   "possible circular locking dependency (lock order inversion)",
		   b, file, line);
	os_ld_put(buf, sizeof(buf), &len, "  while holding ");
	os_ld_put_node(buf, sizeof(buf), &len, a);
	os_ld_put(buf, sizeof(buf), &len, " taken at %s:%d\n", h->file, h->line);
	os_ld_put(buf, sizeof(buf), &len,
		  "  but the opposite order was seen before:\n");
	/* The path b -> ... -> a, in the order it was seen. */
	for (k = 0, n = a; n != b && k < OS_LD_NODES; n = os_ld_parent[n])
		os_ld_queue[k++] = n;
	while (k--) {
		int to = os_ld_queue[k], from = os_ld_parent[to];
		const struct os_ld_site *s = os_ld_site(from, to);

		os_ld_put(buf, sizeof(buf), &len, "    ");
		os_ld_put_node(buf, sizeof(buf), &len, to);
		os_ld_put(buf, sizeof(buf), &len, " taken");
		if (s)
			os_ld_put(buf, sizeof(buf), &len,
				  " at %s:%d by thread %lu", s->to_file,
				  s->to_line, s->thread);
		os_ld_put(buf, sizeof(buf), &len, " while holding ");
		os_ld_put_node(buf, sizeof(buf), &len, from);
		if (s)
			os_ld_put(buf, sizeof(buf), &len, " taken at %s:%d",
				  s->from_file, s->from_line);
		os_ld_put(buf, sizeof(buf), &len, "\n");
	}
	os_ld_put(buf, sizeof(buf), &len,
		  "  two threads taking these in the two orders can deadlock");
	pthread_mutex_unlock(&os_ld_lock);
	os_ld_report(buf, file, line);
}

void os_lockdep_acquire(struct os_lock *l, unsigned int subclass, bool trylock,
			const char *file, int line)
{
	int b = os_ld_node(l, subclass, file, line);
	struct os_ld_held *h;
	int i;

	/* A trylock cannot wait, so it adds no order and cannot nest badly. */
	for (i = 0; !trylock && i < os_ld_depth; i++) {
		h = &os_ld_held[i];
		if (h->node == b)
			os_ld_nesting(h, b, file, line);
		else if (!os_ld_edge(h->node, b))
			os_ld_add(h, b, file, line);
	}
	if (os_ld_depth == OS_LD_HELD)
		os_bug(file, line, "lock-order checker: too many locks held");
	os_ld_held[os_ld_depth++] = (struct os_ld_held){
		.l = l, .node = b, .trylock = trylock, .file = file,
		.line = line };
}

void os_lockdep_release(struct os_lock *l)
{
	int i;

	/* Usually the last one taken, but any order of release is fine. */
	for (i = os_ld_depth - 1; i >= 0; i--) {
		if (os_ld_held[i].l != l)
			continue;
		memmove(&os_ld_held[i], &os_ld_held[i + 1],
			(size_t)(os_ld_depth - i - 1) * sizeof(os_ld_held[0]));
		os_ld_depth--;
		return;
	}
}
