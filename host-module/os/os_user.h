/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The os.h contract on pthreads and libc, with the kernel's names and
 * semantics, so core/ and sim/ run unchanged in a test process.
 *
 * Beyond the kernel's behaviour it checks what the kernel only checks with
 * debug options on, and aborts with file:line on a violation, because each
 * one is a bug that would hang or corrupt the real module:
 *  - lockdep_assert_held()/lockdep_assert_not_held() against the owner thread
 *    of a struct mutex or spinlock_t;
 *  - recursive locking, unlocking a lock another thread holds, destroying a
 *    held mutex;
 *  - sleeping (mutex_lock, wait_event, msleep, GFP_KERNEL allocation, ...)
 *    while holding a spinlock, the kernel's "scheduling while atomic";
 *  - list and hash-list corruption (see list.h).
 *
 * Userspace-only test hooks: os_fail_alloc_after(), os_alloc_failures(),
 * os_warn_count(), os_log_level(), os_log_capture(). Portable code must not
 * call them; they do not exist in the kernel build.
 */
#ifndef VGMEM_OS_USER_H
#define VGMEM_OS_USER_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* ---- types ------------------------------------------------------------ */
/*
 * The kernel's exact types (asm-generic/int-ll64.h): u64 is unsigned long
 * long on every architecture, so "%llu" prints a u64 in both builds. u8 to
 * u32 are the same types as include/uapi/vgmem.h's __u8 to __u32; its __u64
 * (uint64_t, unsigned long on x86-64) has u64's width but is another type:
 * assign between them freely, but cast before printing a __u64 with %llu or
 * passing its address as a u64 pointer.
 */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;
typedef u32 gfp_t;

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S32_MAX		((s32)(U32_MAX >> 1))
#define S32_MIN		((s32)(-S32_MAX - 1))
#define S64_MAX		((s64)(U64_MAX >> 1))
#define S64_MIN		((s64)(-S64_MAX - 1))

/* ---- attributes --------------------------------------------------------- */
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#ifndef __maybe_unused
#define __maybe_unused		__attribute__((__unused__))
#endif
#ifndef __always_unused
#define __always_unused		__attribute__((__unused__))
#endif
#ifndef __must_check
#define __must_check		__attribute__((__warn_unused_result__))
#endif
#ifndef __printf
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))
#endif
#ifndef __packed
#define __packed		__attribute__((__packed__))
#endif
#ifndef __aligned
#define __aligned(x)		__attribute__((__aligned__(x)))
#endif
#ifndef __cold
#define __cold			__attribute__((__cold__))
#endif
#ifndef noinline
#define noinline		__attribute__((__noinline__))
#endif
#ifndef fallthrough
#define fallthrough		__attribute__((__fallthrough__))
#endif
#ifndef __user
#define __user
#endif
#ifndef __iomem
#define __iomem
#endif

/* ---- compile-time checks ----------------------------------------------- */
#define __same_type(a, b)	__builtin_types_compatible_p(typeof(a), typeof(b))
#define BUILD_BUG_ON_ZERO(e)	((int)(sizeof(struct { int:(-!!(e)); })))
#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), "BUILD_BUG_ON(" #cond ")")
#ifndef static_assert
#define static_assert(expr, ...) __os_static_assert(expr, ##__VA_ARGS__, #expr)
#define __os_static_assert(expr, msg, ...) _Static_assert(expr, msg)
#endif

#define __OS_PASTE2(a, b)	a##b
#define __OS_PASTE(a, b)	__OS_PASTE2(a, b)
#define __OS_UNIQUE(prefix)	__OS_PASTE(__OS_PASTE(__os_, prefix), __COUNTER__)

/* ---- helpers ------------------------------------------------------------ */
#define likely(x)		__builtin_expect(!!(x), 1)
#define prefetch(x)		__builtin_prefetch(x)
#define unlikely(x)		__builtin_expect(!!(x), 0)

/* Rejects pointers: ARRAY_SIZE() of a pointer is a build error. */
#define ARRAY_SIZE(arr) \
	(sizeof(arr) / sizeof((arr)[0]) + \
	 BUILD_BUG_ON_ZERO(__same_type((arr), &(arr)[0])))

#define container_of(ptr, type, member) ({				\
	void *__os_mptr = (void *)(ptr);				\
	_Static_assert(__same_type(*(ptr), ((type *)0)->member) ||	\
		       __same_type(*(ptr), void),			\
		       "pointer type mismatch in container_of()");	\
	((type *)((char *)__os_mptr - offsetof(type, member))); })

/*
 * C11 atomics, not volatile accesses: the same single load or store on x86,
 * but the compiler's memory model (and ThreadSanitizer) knows a READ_ONCE()
 * racing a WRITE_ONCE() is no data race. The orders are the kernel's:
 * WRITE_ONCE() is relaxed; READ_ONCE() orders what depends on the value it
 * read (a pointer it loaded, then dereferenced), which is C11's consume.
 * Compilers implement consume as acquire (free on x86), but GCC hands
 * ThreadSanitizer a consume load as a relaxed one, so it is spelled
 * acquire. Scalars only, as the kernel's are in practice. The temporary
 * gives @val the conversions (and warnings) of a plain assignment.
 */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define WRITE_ONCE(x, val) do {						\
	typeof(x) __os_wo_val = (val);					\
	__atomic_store_n(&(x), __os_wo_val, __ATOMIC_RELAXED);		\
} while (0)

/*
 * min()/max() check signedness as the kernel's do: the build fails when a
 * signed and an unsigned value are compared, unless the signed one is a
 * non-negative constant or the unsigned one is narrower than int, so code
 * that builds here also builds in the module. Each argument is evaluated
 * once; both are compared in their common type.
 */
extern void __os_minmax_signedness_error(void)
	__attribute__((__error__("min()/max() of signed and unsigned values")));
#define __os_is_signed(ux)	((typeof(ux))-1 < (typeof(ux))1)
/* Sign bit without a comparison, which -Wtype-limits would flag. */
#define __os_nonneg_const(x) \
	(__builtin_constant_p(x) && !((unsigned long long)(long long)(x) >> 63))
#define __os_sign_use(ux, x) \
	(__os_is_signed(ux) ? 2 + __os_nonneg_const(x) : 1 + 2 * (sizeof(ux) < 4))
#define __os_cmp(op, x, y, ux, uy) ({					\
	__auto_type ux = (x);						\
	__auto_type uy = (y);						\
	if (!(__os_sign_use(ux, x) & __os_sign_use(uy, y)))		\
		__os_minmax_signedness_error();				\
	(typeof(ux + uy))ux op (typeof(ux + uy))uy ?			\
		(typeof(ux + uy))ux : (typeof(ux + uy))uy; })
#define min(x, y)	__os_cmp(<, x, y, __OS_UNIQUE(ua), __OS_UNIQUE(ub))
#define max(x, y)	__os_cmp(>, x, y, __OS_UNIQUE(ua), __OS_UNIQUE(ub))
#define min3(x, y, z)	min((typeof(x))min(x, y), z)
#define max3(x, y, z)	max((typeof(x))max(x, y), z)

#define __os_cmp_t(op, type, x, y, ux, uy) \
	({ type ux = (x); type uy = (y); ux op uy ? ux : uy; })
#define min_t(type, x, y) \
	__os_cmp_t(<, type, x, y, __OS_UNIQUE(ua), __OS_UNIQUE(ub))
#define max_t(type, x, y) \
	__os_cmp_t(>, type, x, y, __OS_UNIQUE(ua), __OS_UNIQUE(ub))

#define clamp(val, lo, hi)	min(max(val, lo), hi)
#define clamp_t(type, val, lo, hi) min_t(type, max_t(type, val, lo), hi)
#define clamp_val(val, lo, hi)	clamp_t(typeof(val), val, lo, hi)

#define swap(a, b) \
	do { typeof(a) __os_tmp = (a); (a) = (b); (b) = __os_tmp; } while (0)

#define __ALIGN_MASK(x, mask)	(((x) + (mask)) & ~(mask))
#define ALIGN(x, a)		__ALIGN_MASK(x, (typeof(x))(a) - 1)
#define ALIGN_DOWN(x, a)	ALIGN((x) - ((a) - 1), (a))
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(ll, d)	div64_u64((u64)(ll) + (d) - 1, (d))
#define round_up(x, y)		((((x) - 1) | ((typeof(x))((y) - 1))) + 1)
#define round_down(x, y)	((x) & ~((typeof(x))((y) - 1)))

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define GENMASK(h, l) \
	(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (63 - (h))))
#define GENMASK_ULL(h, l) \
	(((~0ULL) - (1ULL << (l)) + 1) & (~0ULL >> (63 - (h))))

#define lower_32_bits(n)	((u32)((n) & 0xffffffff))
#define upper_32_bits(n)	((u32)(((n) >> 16) >> 16))

/* Overflow checks return true on overflow; the result must be used. */
static inline bool __must_check __os_must_check_overflow(bool overflow)
{
	return overflow;
}

#define check_add_overflow(a, b, d) \
	__os_must_check_overflow(__builtin_add_overflow(a, b, d))
#define check_sub_overflow(a, b, d) \
	__os_must_check_overflow(__builtin_sub_overflow(a, b, d))
#define check_mul_overflow(a, b, d) \
	__os_must_check_overflow(__builtin_mul_overflow(a, b, d))

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline s64 div64_s64(s64 dividend, s64 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = (u32)(dividend % divisor);
	return dividend / divisor;
}

/* Find last set bit, 1-based: fls(0) = 0, fls(1) = 1, fls(0x80000000) = 32. */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline unsigned int hweight16(unsigned int w)
{
	return (unsigned int)__builtin_popcount(w & 0xffff);
}

/* Little-endian fields at any alignment (the kernel's <linux/unaligned.h>). */
static inline u32 get_unaligned_le32(const void *p)
{
	const u8 *b = p;

	return b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
}

static inline u64 get_unaligned_le64(const void *p)
{
	return get_unaligned_le32(p) |
	       (u64)get_unaligned_le32((const u8 *)p + 4) << 32;
}

static inline void put_unaligned_le32(u32 v, void *p)
{
	u8 *b = p;

	b[0] = (u8)v;
	b[1] = (u8)(v >> 8);
	b[2] = (u8)(v >> 16);
	b[3] = (u8)(v >> 24);
}

static inline void put_unaligned_le64(u64 v, void *p)
{
	put_unaligned_le32((u32)v, p);
	put_unaligned_le32((u32)(v >> 32), (u8 *)p + 4);
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* Index of the lowest set bit, 0-based; undefined for 0 as in the kernel. */
static inline unsigned long __ffs(unsigned long x)
{
	return (unsigned long)__builtin_ctzl(x);
}

static inline bool is_power_of_2(unsigned long n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

static inline int __os_ilog2_u32(u32 n)
{
	return fls(n) - 1;
}

static inline int __os_ilog2_u64(u64 n)
{
	return fls64(n) - 1;
}

/*
 * ilog2() folds to a constant for constant arguments, so it can size arrays
 * and appear in static initialisers, as the kernel's can.
 */
#define ilog2(n)							\
	(__builtin_constant_p(n) ?					\
	 ((n) < 2 ? 0 : 63 - __builtin_clzll((unsigned long long)(n))) : \
	 (sizeof(n) <= 4 ? __os_ilog2_u32((u32)(n)) :			\
	  __os_ilog2_u64((u64)(n))))

static inline unsigned long __os_roundup_pow_of_two(unsigned long n)
{
	return 1UL << fls64(n - 1);
}

static inline unsigned long __os_rounddown_pow_of_two(unsigned long n)
{
	return 1UL << (fls64(n) - 1);
}

/* Undefined for 0, as in the kernel. */
#define roundup_pow_of_two(n)						\
	(__builtin_constant_p(n) ?					\
	 ((n) == 1 ? 1UL : 1UL << (ilog2((n) - 1) + 1)) :		\
	 __os_roundup_pow_of_two(n))

#define rounddown_pow_of_two(n)						\
	(__builtin_constant_p(n) ? 1UL << ilog2(n) :			\
	 __os_rounddown_pow_of_two(n))

/*
 * Copy a C string into a sized buffer, always NUL-terminating it; returns
 * the length copied, or -E2BIG if it had to truncate (or size is 0).
 */
ssize_t strscpy(char *dest, const char *src, size_t size);

/* snprintf() that returns what it wrote (never more than size - 1). */
int scnprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

/* ---- error pointers ----------------------------------------------------- */
#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x)	unlikely((unsigned long)(void *)(x) >= \
				 (unsigned long)-MAX_ERRNO)

static inline void *__must_check ERR_PTR(long error)
{
	return (void *)error;
}

static inline long __must_check PTR_ERR(const void *ptr)
{
	return (long)ptr;
}

static inline bool __must_check IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE((unsigned long)ptr);
}

static inline bool __must_check IS_ERR_OR_NULL(const void *ptr)
{
	return unlikely(!ptr) || IS_ERR_VALUE((unsigned long)ptr);
}

static inline int __must_check PTR_ERR_OR_ZERO(const void *ptr)
{
	return IS_ERR(ptr) ? (int)PTR_ERR(ptr) : 0;
}

/* ---- logging and assertions ---------------------------------------------- */
#define LOGLEVEL_EMERG		0
#define LOGLEVEL_ALERT		1
#define LOGLEVEL_CRIT		2
#define LOGLEVEL_ERR		3
#define LOGLEVEL_WARNING	4
#define LOGLEVEL_NOTICE		5
#define LOGLEVEL_INFO		6
#define LOGLEVEL_DEBUG		7

void os_log(int level, const char *fmt, ...) __printf(2, 3);

/*
 * Lines at or below @level go to stderr; the default is LOGLEVEL_WARNING,
 * or $VGMEM_LOG_LEVEL (a number) if set. Returns the previous level.
 */
int os_log_level(int level);

/*
 * @fn sees every line (whatever the level, without the trailing newline)
 * before it is filtered; NULL removes it. Called with an internal lock held:
 * @fn must not log.
 */
typedef void (*os_log_fn)(void *priv, int level, const char *line);
void os_log_capture(os_log_fn fn, void *priv);

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

#define pr_emerg(fmt, ...)	os_log(LOGLEVEL_EMERG, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_alert(fmt, ...)	os_log(LOGLEVEL_ALERT, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_crit(fmt, ...)	os_log(LOGLEVEL_CRIT, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...)	os_log(LOGLEVEL_ERR, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)	os_log(LOGLEVEL_WARNING, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_notice(fmt, ...)	os_log(LOGLEVEL_NOTICE, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)	os_log(LOGLEVEL_INFO, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_debug(fmt, ...)	os_log(LOGLEVEL_DEBUG, pr_fmt(fmt), ##__VA_ARGS__)

#define __os_once(call) ({						\
	static bool __os_done;						\
	bool __os_first = !__atomic_exchange_n(&__os_done, true,	\
					       __ATOMIC_RELAXED);	\
	if (__os_first)							\
		call;							\
	})
#define pr_warn_once(fmt, ...)	__os_once(pr_warn(fmt, ##__VA_ARGS__))
#define pr_err_once(fmt, ...)	__os_once(pr_err(fmt, ##__VA_ARGS__))
#define pr_info_once(fmt, ...)	__os_once(pr_info(fmt, ##__VA_ARGS__))

/*
 * The kernel's per-call-site rate limit (DEFAULT_RATELIMIT_INTERVAL 5 s,
 * DEFAULT_RATELIMIT_BURST 10): at most 10 lines per 5 s from one call
 * site; the first line after a window that dropped some says how many.
 */
struct os_ratelimit {
	u64 begin_ns;
	u32 printed;
	u32 missed;
};
/* True if the caller may log now; *missed gets the lines dropped before. */
bool os_ratelimit_ok(struct os_ratelimit *rl, const char *func, u32 *missed);
#define __os_ratelimited(level, fmt, ...) ({				\
	static struct os_ratelimit __os_rl;				\
	u32 __os_missed;						\
	if (os_ratelimit_ok(&__os_rl, __func__, &__os_missed)) {	\
		if (__os_missed)					\
			os_log(level, "%s: %u callbacks suppressed\n",	\
			       __func__, __os_missed);			\
		os_log(level, pr_fmt(fmt), ##__VA_ARGS__);		\
	}								\
	})
#define pr_warn_ratelimited(fmt, ...)					\
	__os_ratelimited(LOGLEVEL_WARNING, fmt, ##__VA_ARGS__)
#define pr_err_ratelimited(fmt, ...)					\
	__os_ratelimited(LOGLEVEL_ERR, fmt, ##__VA_ARGS__)

/* Prints "WARNING: file:line: what" and counts it. */
void os_warn(const char *file, int line, const char *fmt, ...) __printf(3, 4);
/* How many WARN_ON()s fired since the process started. */
unsigned long os_warn_count(void);
void os_bug(const char *file, int line, const char *what)
	__attribute__((noreturn, cold));

#define WARN(cond, fmt, ...) ({						\
	int __os_c = !!(cond);						\
	if (unlikely(__os_c))						\
		os_warn(__FILE__, __LINE__, fmt, ##__VA_ARGS__);	\
	unlikely(__os_c); })
#define WARN_ON(cond)		WARN(cond, "WARN_ON(%s)", #cond)
#define WARN_ONCE(cond, fmt, ...) ({					\
	static bool __os_warned;					\
	int __os_c = !!(cond);						\
	if (unlikely(__os_c) &&						\
	    !__atomic_exchange_n(&__os_warned, true, __ATOMIC_RELAXED))	\
		os_warn(__FILE__, __LINE__, fmt, ##__VA_ARGS__);	\
	unlikely(__os_c); })
#define WARN_ON_ONCE(cond)	WARN_ONCE(cond, "WARN_ON_ONCE(%s)", #cond)
#define BUG()			os_bug(__FILE__, __LINE__, "BUG()")
#define BUG_ON(cond) \
	do { if (unlikely(cond)) os_bug(__FILE__, __LINE__, "BUG_ON(" #cond ")"); } while (0)

/* ---- memory ---------------------------------------------------------------- */
#define ___GFP_WAIT	0x1u	/* may sleep: not under a spinlock */
#define __GFP_ZERO	0x100u
#define __GFP_NOWARN	0x200u
/*
 * Kernel: charge the memory to the caller's memory cgroup. Userspace has
 * none (the process is the unit), so it is accepted and ignored.
 */
#define __GFP_ACCOUNT	0x400u
#define GFP_KERNEL	(___GFP_WAIT)
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOFS	(___GFP_WAIT)
#define GFP_ATOMIC	0x2u
#define GFP_NOWAIT	0x4u

/*
 * Fault injection for tests: after @n more successful allocations, the next
 * one fails (once). n = 0 fails the very next one; -1 disarms. All threads'
 * allocations count, kthread_run()'s included.
 */
void os_fail_alloc_after(long n);
/* How many allocations fault injection has failed so far. */
unsigned long os_alloc_failures(void);

void *kmalloc(size_t size, gfp_t flags) __attribute__((malloc));
void *kzalloc(size_t size, gfp_t flags) __attribute__((malloc));
void *kmalloc_array(size_t n, size_t size, gfp_t flags) __attribute__((malloc));
void *kcalloc(size_t n, size_t size, gfp_t flags) __attribute__((malloc));
void *krealloc(const void *p, size_t new_size, gfp_t flags);
char *kstrdup(const char *s, gfp_t flags) __attribute__((malloc));
void *kmemdup(const void *src, size_t len, gfp_t flags) __attribute__((malloc));
void kfree(const void *p);

#define kvmalloc(size, flags)		kmalloc(size, flags)

/* Lazily committed arenas (os.h): anonymous mappings. */
#define OS_VMEM_ZEROED	1
void *os_vmem_alloc(size_t len);
void os_vmem_free(void *p, size_t len);
void os_vmem_zero(void *p, size_t len);
#define kvzalloc(size, flags)		kzalloc(size, flags)
#define kvmalloc_array(n, size, flags)	kmalloc_array(n, size, flags)
#define kvcalloc(n, size, flags)	kcalloc(n, size, flags)
#define kvfree(p)			kfree(p)
#define vmalloc(size)			kmalloc(size, GFP_KERNEL)
#define vzalloc(size)			kzalloc(size, GFP_KERNEL)
#define vfree(p)			kfree(p)

/* ---- sorting ---------------------------------------------------------------- */
typedef int (*cmp_func_t)(const void *a, const void *b);
typedef void (*swap_func_t)(void *a, void *b, int size);
/* Not stable, like the kernel's heapsort; @swap_func is not needed here. */
void sort(void *base, size_t num, size_t size, cmp_func_t cmp_func,
	  swap_func_t swap_func);

/* ---- atomics -------------------------------------------------------------- */
/*
 * Kernel ordering: atomic_read/atomic_set and the void read-modify-write
 * operations are relaxed; the ones that return a value are fully ordered.
 */
typedef struct {
	int counter;
} atomic_t;

typedef struct {
	s64 counter;
} atomic64_t;

#define ATOMIC_INIT(i)		{ (i) }
#define ATOMIC64_INIT(i)	{ (i) }

#define __OS_RLX	__ATOMIC_RELAXED
#define __OS_SC		__ATOMIC_SEQ_CST

static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __OS_RLX);
}

/* Orders what follows after the load, as smp_load_acquire does. */
static inline int atomic_read_acquire(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_ACQUIRE);
}

static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __OS_RLX);
}

static inline void atomic_add(int i, atomic_t *v)
{
	__atomic_fetch_add(&v->counter, i, __OS_RLX);
}

static inline void atomic_sub(int i, atomic_t *v)
{
	__atomic_fetch_sub(&v->counter, i, __OS_RLX);
}

static inline void atomic_inc(atomic_t *v)
{
	atomic_add(1, v);
}

static inline void atomic_dec(atomic_t *v)
{
	atomic_sub(1, v);
}

static inline int atomic_add_return(int i, atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __OS_SC);
}

static inline int atomic_sub_return(int i, atomic_t *v)
{
	return __atomic_sub_fetch(&v->counter, i, __OS_SC);
}

static inline int atomic_inc_return(atomic_t *v)
{
	return atomic_add_return(1, v);
}

static inline int atomic_dec_return(atomic_t *v)
{
	return atomic_sub_return(1, v);
}

static inline bool atomic_dec_and_test(atomic_t *v)
{
	return atomic_sub_return(1, v) == 0;
}

static inline bool atomic_inc_and_test(atomic_t *v)
{
	return atomic_add_return(1, v) == 0;
}

static inline int atomic_xchg(atomic_t *v, int i)
{
	return __atomic_exchange_n(&v->counter, i, __OS_SC);
}

/* Returns the old value; stores @new only if it was @old. */
static inline int atomic_cmpxchg(atomic_t *v, int old, int new)
{
	__atomic_compare_exchange_n(&v->counter, &old, new, false, __OS_SC,
				    __OS_SC);
	return old;
}

static inline s64 atomic64_read(const atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __OS_RLX);
}

static inline void atomic64_set(atomic64_t *v, s64 i)
{
	__atomic_store_n(&v->counter, i, __OS_RLX);
}

static inline void atomic64_add(s64 i, atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, i, __OS_RLX);
}

static inline void atomic64_sub(s64 i, atomic64_t *v)
{
	__atomic_fetch_sub(&v->counter, i, __OS_RLX);
}

static inline void atomic64_inc(atomic64_t *v)
{
	atomic64_add(1, v);
}

static inline void atomic64_dec(atomic64_t *v)
{
	atomic64_sub(1, v);
}

static inline s64 atomic64_add_return(s64 i, atomic64_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __OS_SC);
}

static inline s64 atomic64_sub_return(s64 i, atomic64_t *v)
{
	return __atomic_sub_fetch(&v->counter, i, __OS_SC);
}

static inline s64 atomic64_inc_return(atomic64_t *v)
{
	return atomic64_add_return(1, v);
}

static inline s64 atomic64_dec_return(atomic64_t *v)
{
	return atomic64_sub_return(1, v);
}

static inline s64 atomic64_xchg(atomic64_t *v, s64 i)
{
	return __atomic_exchange_n(&v->counter, i, __OS_SC);
}

static inline s64 atomic64_cmpxchg(atomic64_t *v, s64 old, s64 new)
{
	__atomic_compare_exchange_n(&v->counter, &old, new, false, __OS_SC,
				    __OS_SC);
	return old;
}

#ifndef __SANITIZE_THREAD__
#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#else
/*
 * ThreadSanitizer does not model stand-alone fences (GCC refuses them under
 * -fsanitize=thread), so a fence that pairs with another thread's becomes
 * an access to one process-wide word it does see: smp_wmb() a release
 * read-modify-write (TSan merges every releaser's clock into the word),
 * smp_rmb() an acquire load of it, smp_mb() both. A reader after its
 * smp_rmb() thus happens-after every writer's earlier smp_wmb(): stronger
 * than the fences (a race hidden behind an unrelated pair of fences goes
 * unseen) but never a false report. The flag the fences order must still be
 * a READ_ONCE()/WRITE_ONCE() or an atomic, as in the kernel.
 */
extern unsigned long os_fence_word;
#define smp_mb() \
	((void)__atomic_fetch_add(&os_fence_word, 0, __ATOMIC_SEQ_CST))
#define smp_rmb() \
	((void)__atomic_load_n(&os_fence_word, __ATOMIC_ACQUIRE))
#define smp_wmb() \
	((void)__atomic_fetch_add(&os_fence_word, 0, __ATOMIC_RELEASE))
#endif
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define barrier()		__asm__ __volatile__("" ::: "memory")

/* ---- locks ------------------------------------------------------------------ */
/*
 * Both lock types embed the same tracker so lockdep_assert_held() takes
 * either. @owner is the holder's os_thread_id() (0: free), written by the
 * holder and read by anyone, hence atomic.
 *
 * A lock-order checker works as the kernel's lockdep does (os_user_lockdep.c):
 * every lock belongs to a class, the place that initialised it (each
 * mutex_init()/spin_lock_init() call site, or the lock itself for
 * DEFINE_MUTEX()/DEFINE_SPINLOCK()), so all the VMs' locks initialised in
 * one function are one class. Each thread keeps the stack of locks it
 * holds; taking lock B while holding A records "A before B" for their
 * classes in one process-wide graph. A new order that closes a cycle
 * (A before B somewhere, B before A here: two threads could deadlock,
 * whether or not they ever did), or taking a lock of a class this thread
 * already holds, is reported with where each lock was taken, and aborts.
 * Two locks of one class are nested legitimately (say two VMs in order of
 * their ids) with mutex_lock_nested()/spin_lock_nested() and a subclass,
 * as in the kernel: (class, subclass) pairs are the graph's nodes.
 * Trylocks add no order (they cannot wait), but what is taken under them
 * does.
 */
struct os_lock_class {
	const char *name;		/* the expression given to the init */
	const char *file;
	int line;
	int node[8];			/* graph node + 1 per subclass (atomic) */
};

struct os_lock {
	pthread_mutex_t m;
	unsigned long owner;
	bool spin;
	struct os_lock_class *cls;
};

/*
 * At file scope a compound literal is a static object: the lock's own
 * class. (A DEFINE_MUTEX() inside a function fails to build here.)
 */
#define __OS_LOCK_INIT(is_spin, lname)					\
	{ .m = PTHREAD_MUTEX_INITIALIZER, .owner = 0, .spin = (is_spin),	\
	  .cls = &(struct os_lock_class){ .name = #lname, .file = __FILE__,	\
					  .line = __LINE__ } }

struct mutex {
	struct os_lock os;
};

typedef struct spinlock {
	struct os_lock os;
} spinlock_t;

#define DEFINE_MUTEX(name) \
	struct mutex name = { .os = __OS_LOCK_INIT(false, name) }
#define DEFINE_SPINLOCK(name) \
	spinlock_t name = { .os = __OS_LOCK_INIT(true, name) }

/* lockdep's subclasses: at most 8, 0 being a plain lock. */
#define MAX_LOCKDEP_SUBCLASSES	8U
#define SINGLE_DEPTH_NESTING	1

/* A small non-zero id unique to the calling thread. */
unsigned long os_thread_id(void);
/* os_thread_id() once the thread has one (0: not yet; os_user.c). */
extern __thread unsigned long os_self_id;

void os_lock_init(struct os_lock *l, bool spin, struct os_lock_class *cls);
void os_lock_destroy(struct os_lock *l, const char *file, int line);
void os_lock_acquire(struct os_lock *l, unsigned int subclass,
		     const char *file, int line);
bool os_lock_try(struct os_lock *l, const char *file, int line);
void os_lock_release(struct os_lock *l, const char *file, int line);
void os_lock_assert_held_slow(const struct os_lock *l, const char *file,
			      int line, const char *expr);

/*
 * lockdep_assert_held(): inline, as the core asserts it in every step of
 * its per-chunk bookkeeping (about ten calls per chunk relocated, a
 * third of their cost being the call), while the kernel's costs nothing
 * without lockdep. The out-of-line check decides whenever this thread has
 * no id yet, and reports.
 */
static inline void os_lock_assert_held(const struct os_lock *l,
				       const char *file, int line,
				       const char *expr)
{
	unsigned long self = os_self_id;

	if (unlikely(!self ||
		     __atomic_load_n(&l->owner, __ATOMIC_SEQ_CST) != self))
		os_lock_assert_held_slow(l, file, line, expr);
}
void os_lock_assert_not_held(const struct os_lock *l, const char *file,
			     int line, const char *expr);
/* Aborts if the calling thread holds a spinlock: it is about to sleep. */
void os_might_sleep(const char *file, int line);

/*
 * The lock-order checker's side of acquire and release (os_user_lockdep.c),
 * called by the lock functions with the pthread mutex not yet taken (so a
 * report comes before a deadlock) or already released.
 */
void os_lockdep_acquire(struct os_lock *l, unsigned int subclass, bool trylock,
			const char *file, int line);
void os_lockdep_release(struct os_lock *l);
/* How many locks the calling thread holds (kthreads must exit with none). */
int os_lockdep_depth(void);
/*
 * Userspace-only test hooks: @fatal false makes a report print (through
 * os_log(), so os_log_capture() sees it) and count instead of abort;
 * returns the previous setting. os_lockdep_reports() counts the reports
 * so far. os_lockdep_reset() forgets every order and class: for tests that
 * provoke reports on purpose.
 */
bool os_lockdep_set_fatal(bool fatal);
unsigned long os_lockdep_reports(void);
void os_lockdep_reset(void);

/* One class per call site, as the kernel's static lock_class_key. */
#define __os_lock_init_site(l, is_spin, lname) do {			\
	static struct os_lock_class __os_cls = {			\
		.name = lname, .file = __FILE__, .line = __LINE__ };	\
	os_lock_init(l, is_spin, &__os_cls);				\
} while (0)

#define mutex_init(mx)		__os_lock_init_site(&(mx)->os, false, #mx)
#define mutex_destroy(mx)	os_lock_destroy(&(mx)->os, __FILE__, __LINE__)
#define mutex_lock(mx)		os_lock_acquire(&(mx)->os, 0, __FILE__, __LINE__)
#define mutex_lock_nested(mx, sub) \
	os_lock_acquire(&(mx)->os, sub, __FILE__, __LINE__)
#define mutex_trylock(mx)	((int)os_lock_try(&(mx)->os, __FILE__, __LINE__))
#define mutex_unlock(mx)	os_lock_release(&(mx)->os, __FILE__, __LINE__)
#define mutex_is_locked(mx) \
	(__atomic_load_n(&(mx)->os.owner, __ATOMIC_RELAXED) != 0)

#define spin_lock_init(sl)	__os_lock_init_site(&(sl)->os, true, #sl)
#define spin_lock(sl)		os_lock_acquire(&(sl)->os, 0, __FILE__, __LINE__)
#define spin_lock_nested(sl, sub) \
	os_lock_acquire(&(sl)->os, sub, __FILE__, __LINE__)
#define spin_trylock(sl)	((int)os_lock_try(&(sl)->os, __FILE__, __LINE__))
#define spin_unlock(sl)		os_lock_release(&(sl)->os, __FILE__, __LINE__)
#define spin_lock_irqsave(sl, flags) \
	do { (flags) = 0; spin_lock(sl); } while (0)
#define spin_unlock_irqrestore(sl, flags) \
	do { (void)(flags); spin_unlock(sl); } while (0)
#define spin_lock_irq(sl)	spin_lock(sl)
#define spin_unlock_irq(sl)	spin_unlock(sl)
#define spin_lock_bh(sl)	spin_lock(sl)
#define spin_unlock_bh(sl)	spin_unlock(sl)

#define lockdep_assert_held(l) \
	os_lock_assert_held(&(l)->os, __FILE__, __LINE__, #l)
#define lockdep_assert_not_held(l) \
	os_lock_assert_not_held(&(l)->os, __FILE__, __LINE__, #l)
#define might_sleep()		os_might_sleep(__FILE__, __LINE__)

/* ---- time ------------------------------------------------------------------- */
#define HZ			1000
#define MAX_SCHEDULE_TIMEOUT	LONG_MAX
#define NSEC_PER_SEC		1000000000L
#define NSEC_PER_MSEC		1000000L
#define NSEC_PER_USEC		1000L
#define USEC_PER_SEC		1000000L
#define USEC_PER_MSEC		1000L
#define MSEC_PER_SEC		1000L

typedef s64 ktime_t;

/* Nanoseconds of CLOCK_MONOTONIC. */
u64 ktime_get_ns(void);

static inline ktime_t ktime_get(void)
{
	return (ktime_t)ktime_get_ns();
}

static inline s64 ktime_to_ns(ktime_t kt)
{
	return kt;
}

static inline s64 ktime_to_us(ktime_t kt)
{
	return kt / NSEC_PER_USEC;
}

static inline s64 ktime_to_ms(ktime_t kt)
{
	return kt / NSEC_PER_MSEC;
}

#define ktime_sub(a, b)		((a) - (b))
#define ktime_add_ns(kt, ns)	((kt) + (ktime_t)(ns))

/* One jiffy is one millisecond here (HZ = 1000). */
#define jiffies			((unsigned long)(ktime_get_ns() / NSEC_PER_MSEC))
#define time_after(a, b)	((long)((b) - (a)) < 0)
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)	((long)((a) - (b)) >= 0)
#define time_before_eq(a, b)	time_after_eq(b, a)

static inline unsigned long msecs_to_jiffies(unsigned int m)
{
	return m;
}

static inline unsigned long usecs_to_jiffies(unsigned int u)
{
	return DIV_ROUND_UP((unsigned long)u, 1000UL);
}

static inline unsigned int jiffies_to_msecs(unsigned long j)
{
	return (unsigned int)j;
}

void msleep(unsigned int msecs);
void usleep_range(unsigned long min_us, unsigned long max_us);
void udelay(unsigned long usecs);
void ndelay(unsigned long nsecs);
void cond_resched(void);

/* ---- wait queues and completions -------------------------------------------- */
/*
 * A waiter snapshots @seq, evaluates its condition without any lock held
 * (the condition may take the caller's own locks, as in the kernel), then
 * sleeps only while @seq is unchanged. wake_up() bumps @seq, so a wake-up
 * between the check and the sleep is never lost. There are no exclusive
 * waiters here, so wake_up() and wake_up_all() both wake everyone.
 */
typedef struct wait_queue_head {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned long seq;
} wait_queue_head_t;

#define __WAIT_QUEUE_HEAD_INITIALIZER(name) \
	{ .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, \
	  .seq = 0 }
#define DECLARE_WAIT_QUEUE_HEAD(name) \
	wait_queue_head_t name = __WAIT_QUEUE_HEAD_INITIALIZER(name)

void init_waitqueue_head(wait_queue_head_t *wq);
void os_wake_up(wait_queue_head_t *wq);
unsigned long os_wq_seq(wait_queue_head_t *wq, const char *file, int line);
/*
 * Sleeps until @seq changes, the calling kthread is asked to stop, or the
 * monotonic clock passes @deadline_ns (0: no deadline). Returns false if
 * the deadline passed.
 */
bool os_wq_wait(wait_queue_head_t *wq, unsigned long seq, u64 deadline_ns);
/* Deadline @timeout jiffies from now; 0 for MAX_SCHEDULE_TIMEOUT. */
u64 os_deadline(long timeout);
/* Jiffies left until @deadline_ns, at least 1 (a true condition). */
long os_jiffies_left(u64 deadline_ns);

#define wake_up(wq)		os_wake_up(wq)
#define wake_up_all(wq)		os_wake_up(wq)
#define wake_up_interruptible(wq) os_wake_up(wq)

#define wait_event(wq_head, condition) do {				\
	for (;;) {							\
		unsigned long __os_seq =				\
			os_wq_seq(&(wq_head), __FILE__, __LINE__);	\
		if (condition)						\
			break;						\
		os_wq_wait(&(wq_head), __os_seq, 0);			\
	}								\
} while (0)

/*
 * Returns 0 if @condition is still false when @timeout jiffies elapsed,
 * otherwise the jiffies left (at least 1), as the kernel's does.
 */
#define wait_event_timeout(wq_head, condition, timeout) ({		\
	long __os_ret;							\
	u64 __os_dl = os_deadline(timeout);				\
	for (;;) {							\
		unsigned long __os_seq =				\
			os_wq_seq(&(wq_head), __FILE__, __LINE__);	\
		if (condition) {					\
			__os_ret = os_jiffies_left(__os_dl);		\
			break;						\
		}							\
		if (!os_wq_wait(&(wq_head), __os_seq, __os_dl)) {	\
			__os_ret = (condition) ? 1 : 0;			\
			break;						\
		}							\
	}								\
	__os_ret; })

/* No signals reach these waiters: the interruptible forms never fail. */
#define wait_event_interruptible(wq_head, condition) \
	({ wait_event(wq_head, condition); 0; })
#define wait_event_interruptible_timeout(wq_head, condition, timeout) \
	wait_event_timeout(wq_head, condition, timeout)

struct completion {
	unsigned int done;	/* UINT_MAX after complete_all() */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

#define COMPLETION_INITIALIZER(work) \
	{ .done = 0, .lock = PTHREAD_MUTEX_INITIALIZER, \
	  .cond = PTHREAD_COND_INITIALIZER }
#define DECLARE_COMPLETION(work) \
	struct completion work = COMPLETION_INITIALIZER(work)

void init_completion(struct completion *x);
void reinit_completion(struct completion *x);
void complete(struct completion *x);
void complete_all(struct completion *x);
bool completion_done(struct completion *x);
bool try_wait_for_completion(struct completion *x);
#define wait_for_completion(x) \
	os_wait_for_completion(x, MAX_SCHEDULE_TIMEOUT, __FILE__, __LINE__)
/* 0 on timeout, else the jiffies left (at least 1). */
#define wait_for_completion_timeout(x, timeout) \
	((unsigned long)os_wait_for_completion(x, timeout, __FILE__, __LINE__))
long os_wait_for_completion(struct completion *x, long timeout,
			    const char *file, int line);

/* ---- threads ------------------------------------------------------------------ */
#define TASK_COMM_LEN	16

struct task_struct {
	pthread_t thread;
	int (*fn)(void *data);
	void *data;
	int result;
	bool should_stop;		/* atomic */
	bool stop_kick;			/* atomic: wake once for the stop */
	pthread_mutex_t wait_lock;	/* protects waiting_on */
	wait_queue_head_t *waiting_on;	/* where the thread sleeps, or NULL */
	char comm[TASK_COMM_LEN];
};

/*
 * Creates a thread running @threadfn(@data), named from @namefmt. Returns
 * the task or an ERR_PTR(). If kthread_stop() comes before the thread ran,
 * @threadfn never runs and kthread_stop() returns -EINTR, as in the kernel.
 */
struct task_struct *kthread_run(int (*threadfn)(void *data), void *data,
				const char *namefmt, ...) __printf(3, 4);
/*
 * Sets the thread's stop flag, wakes it from any wait_event*() so it
 * re-evaluates its condition, waits for it to exit, frees the task and
 * returns @threadfn's result.
 */
int kthread_stop(struct task_struct *k);
/* True in a kthread_run() thread once kthread_stop() was called on it. */
bool kthread_should_stop(void);

/* ---- vector registers (os.h "simd") ---------------------------------------- */
/* Always usable in a process: nothing to save or restore. */
static inline bool os_simd_begin(void)
{
	return true;
}

static inline void os_simd_end(void)
{
}

/* ---- random -------------------------------------------------------------------- */
u32 get_random_u32(void);
u64 get_random_u64(void);

#include "list.h"
#include "rbtree.h"

#endif /* VGMEM_OS_USER_H */
