/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one header that portable code (core/, sim/) includes. It maps the
 * services the core needs onto the Linux kernel (os_kernel.h) or onto
 * pthreads and libc (os_user.h), keeping the kernel's names, as OpenZFS's
 * zfs_context.h does. Nothing else in core/ or sim/ may include a libc or
 * kernel header, and no file outside os/ may test __KERNEL__.
 *
 * The contract (both sides provide exactly these, with kernel semantics):
 *
 * types     u8 u16 u32 u64 s32 s64 bool size_t uintptr_t, true/false, NULL
 * errors    EINVAL ENOMEM ENOSPC EBUSY EEXIST ENOENT EFAULT EIO ETIMEDOUT
 *           EAGAIN E2BIG ERANGE EPERM EOVERFLOW EINTR ENODEV ESHUTDOWN
 *           EBADMSG EPROTONOSUPPORT EFBIG ESTALE EOPNOTSUPP ENOMSG
 * helpers   min max min_t max_t clamp ARRAY_SIZE ALIGN IS_ALIGNED
 *           is_power_of_2 ilog2 roundup_pow_of_two BIT BIT_ULL DIV_ROUND_UP
 *           container_of likely unlikely prefetch READ_ONCE WRITE_ONCE
 *           check_add_overflow check_mul_overflow div64_u64 fls64
 *           GENMASK hweight16
 *           get_unaligned_le32 get_unaligned_le64 put_unaligned_le32
 *           put_unaligned_le64 (little-endian fields at any alignment)
 *           memcpy memset memcmp strscpy snprintf
 *           WARN_ON WARN_ON_ONCE BUG_ON (user: WARN prints and counts,
 *           os_warn_count() reads the count so tests can fail on it)
 * memory    kmalloc kzalloc kcalloc kmalloc_array kmemdup kfree kvmalloc
 *           kvzalloc
 *           kvcalloc kvfree, GFP_KERNEL GFP_KERNEL_ACCOUNT __GFP_ACCOUNT
 *           __GFP_NOWARN (flags are accepted and ignored in
 *           userspace; os_fail_alloc_after(n) makes the n-th later
 *           allocation fail, for tests; -1 disables)
 *           os_vmem_alloc(len), os_vmem_free(p, len), os_vmem_zero(p, len):
 *           a large arena that costs RAM only as it is touched where the
 *           OS can: userspace maps it anonymously (it reads as zeroes, and
 *           os_vmem_zero gives the pages back, after which they read as
 *           zeroes again); the kernel uses kvmalloc (contents undefined)
 *           and os_vmem_zero is memset. OS_VMEM_ZEROED is 1 where a fresh
 *           arena reads as zeroes. p and len page aligned for zero.
 * lists     struct list_head, LIST_HEAD, INIT_LIST_HEAD, list_add,
 *           list_add_tail, list_del, list_del_init, list_move,
 *           list_move_tail, list_empty, list_first_entry,
 *           list_first_entry_or_null, list_for_each_entry,
 *           list_for_each_entry_safe, list_splice_tail_init;
 *           list_sort(priv, head, cmp) (stable merge sort, cmp > 0 puts
 *           a after b);
 *           struct hlist_head/hlist_node, HLIST_HEAD, INIT_HLIST_HEAD,
 *           INIT_HLIST_NODE, hlist_add_head, hlist_del, hlist_del_init,
 *           hlist_unhashed, hlist_empty, hlist_entry,
 *           hlist_for_each_entry, hlist_for_each_entry_safe
 * sorting   sort(base, num, size, cmp, NULL) (arrays; not stable: give it
 *           a total order when the result must repeat)
 * rbtrees   struct rb_root/rb_node/rb_root_cached, RB_ROOT, rb_entry,
 *           rb_entry_safe, rb_parent, RB_EMPTY_ROOT, RB_EMPTY_NODE,
 *           RB_CLEAR_NODE, rb_link_node, rb_insert_color, rb_erase,
 *           rb_first, rb_last, rb_next, rb_prev, rb_first_postorder,
 *           rb_next_postorder, rbtree_postorder_for_each_entry_safe,
 *           rb_replace_node, rb_insert_color_cached, rb_erase_cached,
 *           rb_first_cached; augmented (<linux/rbtree_augmented.h>):
 *           struct rb_augment_callbacks, rb_insert_augmented,
 *           rb_erase_augmented, RB_DECLARE_CALLBACKS,
 *           RB_DECLARE_CALLBACKS_MAX, rb_is_red, rb_is_black (checkers
 *           only). The caller searches and serialises, as in the kernel
 * atomics   atomic_t atomic64_t atomic_read atomic_read_acquire atomic_set atomic_inc
 *           atomic_dec_and_test atomic_add_return atomic64_read atomic64_set
 *           atomic64_add atomic64_inc atomic64_add_return
 *           smp_mb smp_rmb smp_wmb smp_load_acquire smp_store_release
 * locks     struct mutex: mutex_init mutex_destroy mutex_lock mutex_unlock
 *           mutex_trylock mutex_is_locked; spinlock_t: spin_lock_init
 *           spin_lock spin_unlock; lockdep_assert_held(l) works on both
 *           (userspace tracks the owner thread and aborts if the caller
 *           does not hold it); lockdep_assert_not_held(l);
 *           mutex_lock_nested(mx, sub) spin_lock_nested(sl, sub)
 *           SINGLE_DEPTH_NESTING for two locks of one class taken in a
 *           fixed order (userspace checks lock order as lockdep does:
 *           an inversion or an unannotated same-class nesting aborts)
 * waits     wait_queue_head_t: init_waitqueue_head wake_up wake_up_all
 *           wait_event(wq, cond) wait_event_timeout(wq, cond, jiffies)
 *           returning like the kernel's (0 on timeout, else >= 1);
 *           struct completion: init_completion reinit_completion complete
 *           complete_all wait_for_completion
 *           wait_for_completion_timeout(c, jiffies)
 * time      ktime_get_ns() (monotonic), msecs_to_jiffies usecs_to_jiffies
 *           msleep usleep_range cond_resched, NSEC_PER_SEC NSEC_PER_MSEC
 *           NSEC_PER_USEC
 * threads   struct task_struct, kthread_run(fn, data, namefmt, ...)
 *           returning ERR_PTR on failure, kthread_stop (returns fn's
 *           result), kthread_should_stop, IS_ERR PTR_ERR ERR_PTR
 * logging   pr_err pr_warn pr_info pr_debug, pr_warn_ratelimited
 *           pr_err_ratelimited (10 lines per 5 s per call site, as the
 *           kernel's defaults; for what a guest can cause) (user: to stderr with a level
 *           filter set by os_log_level(); os_log_capture(fn, priv) lets a
 *           test see every line)
 * random    get_random_u32 get_random_u64
 * simd      os_simd_begin() -> bool, os_simd_end(): true means vector
 *           registers may be used until os_simd_end() (kernel:
 *           kernel_fpu_begin/end on x86, so preemption is off in between:
 *           no sleeping, no calls that might; batch a page or more per
 *           pair, never a word); false (kernel: in a context where the
 *           FPU may not be used, or not x86) means use a portable path and
 *           do not call os_simd_end(). Userspace: always true, no-op end.
 *           Code using vector registers lives in its own file, which
 *           Kbuild compiles with them enabled (merge_vec.c)
 *
 * Deterministic randomness for policies and workloads is not an OS service:
 * core/ and sim/ carry their own seeded generator (core/vg_rand.h).
 */
#ifndef VGMEM_OS_H
#define VGMEM_OS_H

#ifdef __KERNEL__
#include "os_kernel.h"
#else
#include "os_user.h"
#endif

#endif /* VGMEM_OS_H */
