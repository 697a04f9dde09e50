/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The os.h contract in the kernel: every name portable code uses is the
 * kernel's own, so this header only gathers the headers that declare them.
 * The userspace test hooks (os_fail_alloc_after(), os_warn_count(),
 * os_log_level(), os_log_capture()) deliberately do not exist here: core/
 * and sim/ must not call them.
 *
 * Differences portable code must keep in mind (os_user.h hides them):
 *  - HZ is the kernel's (250 on Debian), so always convert with
 *    msecs_to_jiffies()/usecs_to_jiffies(), never assume 1 jiffy = 1 ms;
 *  - lockdep_assert_held() compiles to nothing without CONFIG_LOCKDEP; the
 *    userspace build is where lock rules are enforced.
 */
#ifndef VGMEM_OS_KERNEL_H
#define VGMEM_OS_KERNEL_H

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/align.h>
#include <linux/bits.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/err.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/version.h>
/* The unaligned accessors moved from <asm/unaligned.h> in 6.12. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/prefetch.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <linux/list.h>
#include <linux/list_sort.h>
#include <linux/rbtree.h>
#include <linux/rbtree_augmented.h>

#include <linux/atomic.h>
#include <asm/barrier.h>

#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>

#include <linux/completion.h>
#include <linux/wait.h>

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/time64.h>
#include <linux/timekeeping.h>

#include <linux/kthread.h>

#include <linux/random.h>

#ifdef CONFIG_X86_64
#include <asm/fpu/api.h>
#include <asm/simd.h>
#endif

/*
 * os.h "simd": vector registers for code built with them enabled (Kbuild
 * per-file flags). may_use_simd() refuses where the FPU state cannot be
 * borrowed (e.g. an interrupt that came while it was already borrowed);
 * the caller then takes its portable path.
 */
static inline bool os_simd_begin(void)
{
#ifdef CONFIG_X86_64
	if (!may_use_simd())
		return false;
	kernel_fpu_begin();
	return true;
#else
	return false;
#endif
}

static inline void os_simd_end(void)
{
#ifdef CONFIG_X86_64
	kernel_fpu_end();
#endif
}

/*
 * os.h "memory": arenas. The kernel commits what it allocates, so these
 * are kvmalloc (not zeroed: the software GPU zeroes its frames in the
 * background) and memset.
 */
#define OS_VMEM_ZEROED	0

static inline void *os_vmem_alloc(size_t len)
{
	return kvmalloc(len, GFP_KERNEL);
}

static inline void os_vmem_free(void *p, size_t len)
{
	kvfree(p);
}

static inline void os_vmem_zero(void *p, size_t len)
{
	memset(p, 0, len);
}

#endif /* VGMEM_OS_KERNEL_H */
