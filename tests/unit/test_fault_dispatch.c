// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The core's replayable-fault dispatch (core/fault.c): the GPU's one
 * GPU driver fault handler belongs to the core, and each fault goes to the
 * registrant of its (address space, address) range. On the software GPU
 * with real kernels that fault: registrants on two ASes and on disjoint
 * ranges of one AS each get only their faults; an overlap is refused and
 * changes nothing; unregister waits for a call under way (its priv is
 * freed right after: ASan sees a use after free if it did not wait); a
 * fault in no registered range errors only its channel. Then the
 * userspace host with the paging model and the LRC file cache on one GPU,
 * even in one VM.
 */
#include <pthread.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "test_sim_util.h"
#include "fake_gpu.h"
#include "model_fixture.h"
#include "host-module/core/vg.h"
/* lrc->lock: the test holds it to line up a fault call and an unmap. */
#include "host-module/core/lrc/lrc_internal.h"

#define VA0	0x300000000ull
#define MSZ	(4ull << 20)		/* backing of each AS */
#define SEQ	__ATOMIC_SEQ_CST

struct fx;

/* A registrant: maps the faulting page of its AS's backing. */
struct rg {
	struct fx *f;
	int ai;				/* its AS: f->as[ai] */
	u64 lo, hi;			/* its range */
	int calls;			/* atomic */
	int bad;			/* faults not its own (atomic) */
	int gate;			/* atomic: the handler waits while set */
	int in;				/* atomic: a call has started */
	struct vg_fault_reg *h;
};

struct fx {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct vg_gpu *gpu;
	struct tg *g;
	struct vg_as *as[2];
	struct vg_mem *back[2];
	int unreg_done;			/* atomic: an unregister returned */
	int unreg_seen;			/* atomic: a handler ran past it */
	int released;			/* async releases (atomic) */
	int warns;
};

static int rg_handler(void *priv, const struct vg_gpu_fault *fl)
{
	struct rg *r = priv;
	struct fx *f = r->f;
	int err = 0;

	if (fl->as != f->as[r->ai] || fl->va < r->lo || fl->va >= r->hi) {
		__atomic_add_fetch(&r->bad, 1, SEQ);
		return -EFAULT;
	}
	__atomic_store_n(&r->in, 1, SEQ);
	while (__atomic_load_n(&r->gate, SEQ))
		usleep(100);
	if (f->ops->map(f->sim, fl->as, fl->va, 4096, f->back[r->ai],
			fl->va - VA0))
		err = -ENOMEM;
	else
		f->ops->tlb_flush(f->sim, fl->as);
	if (__atomic_load_n(&f->unreg_done, SEQ))
		__atomic_store_n(&f->unreg_seen, 1, SEQ);
	/* Touches priv last: freed early, ASan reports it here. */
	__atomic_add_fetch(&r->calls, 1, SEQ);
	return err;
}

static void rg_init(struct fx *f, struct rg *r, int ai, u64 lo, u64 size)
{
	memset(r, 0, sizeof(*r));
	r->f = f;
	r->ai = ai;
	r->lo = lo;
	r->hi = lo + size;
}

static int rg_reg(struct fx *f, struct rg *r)
{
	return vg_fault_register(f->gpu, f->as[r->ai], r->lo, r->hi - r->lo,
				 rg_handler, r, &r->h);
}

static int rg_calls(struct rg *r)
{
	return __atomic_load_n(&r->calls, SEQ);
}

static struct vg_fault_stats fstats(struct fx *f)
{
	struct vg_fault_stats st;

	vg_fault_get_stats(f->gpu, &st);
	return st;
}

static int fx_setup(void **state)
{
	struct vg_gpu_config cfg = { .name = "fd", .no_return_worker = true };
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sim = t_sim(64ull << 20, 0);
	f->ops = vg_sim_gpu_ops();
	assert_int_equal(vg_gpu_create(&cfg, f->ops, f->sim, &f->gpu), 0);
	f->g = tg_new();
	t_new_ases(f->sim, f->as, f->back, 2, MSZ);
	f->warns = os_warn_count();
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	/* Every test unregistered its ranges. */
	assert_int_equal(fstats(f).ranges, 0);
	assert_int_equal(fstats(f).ases, 0);
	vg_gpu_destroy(f->gpu);
	t_free_ases(f->sim, f->as, f->back, 2);
	t_sim_free_nowarn(f->sim, f->warns, f->g);
	free(f);
	return 0;
}

static void wait_done(struct tchan *t)
{
	T_WAIT(t_userd(t, VGMEM_USERD_GP_GET) == t->put ||
	       t_userd(t, VGMEM_USERD_ERROR));
}

static void check_pattern(struct fx *f, int i, u64 va, u64 n, u32 seed)
{
	u8 *got = malloc(n);
	u64 k;

	assert_non_null(got);
	assert_int_equal(vg_sim_read_va(f->sim, f->as[i], va, got, n), 0);
	for (k = 0; k < n; k++)
		if (got[k] != (u8)(vgmem_pattern_word(seed, k >> 2) >>
				   (8 * (k & 3))))
			fail_msg("as %d byte %#llx", i, (unsigned long long)k);
	free(got);
}

/* A channel of as[i] with the compute class bound. */
static struct tchan *chan(struct fx *f, int i)
{
	struct tchan *t = t_chan(f->sim, f->as[i], f->g, 8);

	t_bind(t);
	return t;
}

/* ---- routing ------------------------------------------------------------ */

static void test_two_ases_and_disjoint_ranges(void **state)
{
	struct fx *f = *state;
	struct rg a, b, c;
	struct tchan *t0, *t1;
	struct vg_fault_stats st;

	rg_init(f, &a, 0, VA0, 1 << 20);
	rg_init(f, &b, 0, VA0 + (1 << 20), 1 << 20);	/* adjacent */
	rg_init(f, &c, 1, VA0, 1 << 20);		/* same VA, other AS */
	assert_int_equal(rg_reg(f, &a), 0);
	assert_int_equal(rg_reg(f, &b), 0);
	assert_int_equal(rg_reg(f, &c), 0);
	st = fstats(f);
	assert_int_equal(st.ranges, 3);
	assert_int_equal(st.ases, 2);

	t0 = chan(f, 0);
	t1 = chan(f, 1);
	k_range(t0, VGMEM_K_FILL_PATTERN, VA0, 2 << 20, 5);
	k_range(t1, VGMEM_K_FILL_PATTERN, VA0, 1 << 20, 9);
	t_submit(t0);
	t_submit(t1);
	wait_done(t0);
	wait_done(t1);
	assert_int_equal(t_userd(t0, VGMEM_USERD_ERROR), 0);
	assert_int_equal(t_userd(t1, VGMEM_USERD_ERROR), 0);
	/* One fault per page, each to the range's registrant only. */
	assert_int_equal(rg_calls(&a), 256);
	assert_int_equal(rg_calls(&b), 256);
	assert_int_equal(rg_calls(&c), 256);
	assert_int_equal(a.bad + b.bad + c.bad, 0);
	check_pattern(f, 0, VA0, 2 << 20, 5);
	check_pattern(f, 1, VA0, 1 << 20, 9);
	st = fstats(f);
	assert_int_equal(st.dispatched, 768);
	assert_int_equal(st.unclaimed, 0);

	vg_fault_unregister(b.h);
	assert_int_equal(fstats(f).ranges, 2);
	vg_fault_unregister(a.h);
	assert_int_equal(fstats(f).ases, 1);
	vg_fault_unregister(c.h);
	assert_int_equal(fstats(f).ases, 0);
	t_chan_free(t0);
	t_chan_free(t1);
}

/* ---- overlaps and bad arguments ------------------------------------------ */

static void test_overlap_refused_changes_nothing(void **state)
{
	static const u64 bad[][2] = {
		{ VA0 + 0x10000, 0x20000 },	/* the same */
		{ VA0 + 0x20000, 0x1000 },	/* inside */
		{ VA0, 0x11000 },		/* over its start */
		{ VA0 + 0x2f000, 0x11000 },	/* over its end */
		{ VA0, 0x100000 },		/* around it */
	};
	struct fx *f = *state;
	struct vg_fault_reg *h = NULL;
	struct rg a, l, r, x;
	struct tchan *t;
	unsigned int i;

	rg_init(f, &a, 0, VA0 + 0x10000, 0x20000);
	assert_int_equal(rg_reg(f, &a), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(vg_fault_register(f->gpu, f->as[0], bad[i][0],
						   bad[i][1], rg_handler, &x,
						   &h), -EEXIST);
		assert_null(h);
		assert_int_equal(fstats(f).ranges, 1);
	}
	/* Bad arguments: -EINVAL, nothing registered. */
	assert_int_equal(vg_fault_register(NULL, f->as[0], VA0, 4096,
					   rg_handler, &x, &h), -EINVAL);
	assert_int_equal(vg_fault_register(f->gpu, NULL, VA0, 4096,
					   rg_handler, &x, &h), -EINVAL);
	assert_int_equal(vg_fault_register(f->gpu, f->as[0], VA0, 4096,
					   NULL, &x, &h), -EINVAL);
	assert_int_equal(vg_fault_register(f->gpu, f->as[0], VA0, 4096,
					   rg_handler, &x, NULL), -EINVAL);
	assert_int_equal(vg_fault_register(f->gpu, f->as[0], VA0, 0,
					   rg_handler, &x, &h), -EINVAL);
	assert_int_equal(vg_fault_register(f->gpu, f->as[0], VA0 + 8, 4096,
					   rg_handler, &x, &h), -EINVAL);
	assert_int_equal(vg_fault_register(f->gpu, f->as[0], VA0, 4097,
					   rg_handler, &x, &h), -EINVAL);
	assert_int_equal(vg_fault_register(f->gpu, f->as[0], ~0ull - 4095,
					   8192, rg_handler, &x, &h), -EINVAL);
	assert_null(h);
	assert_int_equal(fstats(f).ranges, 1);
	assert_int_equal(fstats(f).ases, 1);

	/* Adjacent on both sides, and the same range in another AS: fine. */
	rg_init(f, &l, 0, VA0, 0x10000);
	rg_init(f, &r, 0, VA0 + 0x30000, 0x10000);
	rg_init(f, &x, 1, VA0 + 0x10000, 0x20000);
	assert_int_equal(rg_reg(f, &l), 0);
	assert_int_equal(rg_reg(f, &r), 0);
	assert_int_equal(rg_reg(f, &x), 0);

	/* a still gets exactly its faults. */
	t = chan(f, 0);
	k_range(t, VGMEM_K_FILL_PATTERN, VA0 + 0x10000, 0x20000, 3);
	t_submit(t);
	wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	assert_int_equal(rg_calls(&a), 32);
	assert_int_equal(rg_calls(&l) + rg_calls(&r) + rg_calls(&x), 0);
	check_pattern(f, 0, VA0 + 0x10000, 0x20000, 3);

	/*
	 * The refused ranges never reached the GPU driver: with l gone, an
	 * access at VA0 is outside every fault range, a plain VA error that
	 * reaches no handler (not even the dispatcher).
	 */
	vg_fault_unregister(l.h);
	k_range(t, VGMEM_K_MEMSET, VA0, 8, 0x55);
	t_submit(t);
	assert_int_equal(t_idle(t), 0);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), VGMEM_CHAN_ERR_VA);
	assert_int_equal(fstats(f).dispatched, 32);
	assert_int_equal(fstats(f).unclaimed, 0);
	vg_fault_unregister(a.h);
	vg_fault_unregister(r.h);
	vg_fault_unregister(x.h);
	/* Gone: the range can be registered again. */
	rg_init(f, &a, 0, VA0, 0x100000);
	assert_int_equal(rg_reg(f, &a), 0);
	vg_fault_unregister(a.h);
	t_chan_free(t);
}

/* A GPU without replayable faults: nothing to register with. */
static void test_no_fault_gpu(void **state)
{
	struct vg_gpu_config cfg = { .name = "nf", .no_return_worker = true };
	struct fake_gpu *fb = fake_create(64ull << 20);
	struct vg_fault_reg *h = NULL;
	struct vg_gpu *gpu;
	struct vg_as *as;

	(void)state;
	assert_int_equal(vg_gpu_create(&cfg, &fake_ops, fb, &gpu), 0);
	assert_int_equal(fake_ops.as_create(fb, &as), 0);
	assert_int_equal(vg_fault_register(gpu, as, VA0, 4096, rg_handler,
					   NULL, &h), -ENODEV);
	assert_null(h);
	fake_ops.as_destroy(fb, as);
	vg_gpu_destroy(gpu);
	assert_int_equal(fake_leaks(fb), 0);
	fake_destroy(fb);
}

/* ---- unregister and calls under way -------------------------------------- */

struct unreg_arg {
	struct fx *f;
	struct rg *r;
};

static void *unreg_thread(void *p)
{
	struct unreg_arg *u = p;

	vg_fault_unregister(u->r->h);
	__atomic_store_n(&u->f->unreg_done, 1, SEQ);
	/* The registrant frees its priv as soon as unregister returns. */
	free(u->r);
	return NULL;
}

static void test_unregister_waits_for_running_call(void **state)
{
	struct fx *f = *state;
	struct rg *r = malloc(sizeof(*r));
	struct unreg_arg u = { .f = f, .r = r };
	struct tchan *t = chan(f, 0);
	bool out_of_dispatch;
	int done_early;
	pthread_t th;

	assert_non_null(r);
	rg_init(f, r, 0, VA0, 0x10000);
	__atomic_store_n(&r->gate, 1, SEQ);
	assert_int_equal(rg_reg(f, r), 0);
	k_range(t, VGMEM_K_MEMSET, VA0, 8, 0x77);
	t_submit(t);
	T_WAIT(__atomic_load_n(&r->in, SEQ));
	assert_int_equal(pthread_create(&th, NULL, unreg_thread, &u), 0);
	/*
	 * The range leaves dispatch as soon as the thread unregisters (waited
	 * for: a busy host may start the thread late); then a correct
	 * unregister cannot return while the call is held, however long the
	 * 50 ms take. The thread is joined before anything is asserted.
	 */
	out_of_dispatch = T_WAIT_FOR(fstats(f).ranges == 0);
	usleep(50000);
	done_early = __atomic_load_n(&f->unreg_done, SEQ);
	__atomic_store_n(&r->gate, 0, SEQ);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(out_of_dispatch);
	assert_int_equal(done_early, 0);
	assert_int_equal(__atomic_load_n(&f->unreg_done, SEQ), 1);
	assert_int_equal(__atomic_load_n(&f->unreg_seen, SEQ), 0);
	/* The call mapped the page: the replay completed the kernel. */
	wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	t_chan_free(t);
}

static void rg_release(void *priv)
{
	struct rg *r = priv;

	__atomic_add_fetch(&r->f->released, 1, SEQ);
	free(r);
}

/* Async: returns at once; priv is released when the call ends. */
static void test_unregister_async_releases_after_call(void **state)
{
	struct fx *f = *state;
	struct rg *r = malloc(sizeof(*r)), *idle = malloc(sizeof(*idle));
	struct tchan *t = chan(f, 0);

	assert_non_null(r);
	assert_non_null(idle);
	/* With no call under way the release is immediate. */
	rg_init(f, idle, 1, VA0, 0x10000);
	assert_int_equal(rg_reg(f, idle), 0);
	vg_fault_unregister_async(idle->h, rg_release);
	assert_int_equal(__atomic_load_n(&f->released, SEQ), 1);

	rg_init(f, r, 0, VA0, 0x10000);
	__atomic_store_n(&r->gate, 1, SEQ);
	assert_int_equal(rg_reg(f, r), 0);
	k_range(t, VGMEM_K_MEMSET, VA0, 8, 0x77);
	t_submit(t);
	T_WAIT(__atomic_load_n(&r->in, SEQ));
	vg_fault_unregister_async(r->h, rg_release);
	assert_int_equal(fstats(f).ranges, 0);
	/* The call is still in the handler: r must live. */
	assert_int_equal(__atomic_load_n(&f->released, SEQ), 1);
	/* The same range can be registered again meanwhile. */
	{
		struct rg n;

		rg_init(f, &n, 0, VA0, 0x10000);
		assert_int_equal(rg_reg(f, &n), 0);
		vg_fault_unregister(n.h);
	}
	__atomic_store_n(&r->gate, 0, SEQ);
	T_WAIT(__atomic_load_n(&f->released, SEQ) == 2);
	wait_done(t);
	assert_int_equal(t_userd(t, VGMEM_USERD_ERROR), 0);
	t_chan_free(t);
}

/* ---- faults nobody registered -------------------------------------------- */

static void test_unclaimed_fault_errors_only_its_channel(void **state)
{
	struct fx *f = *state;
	struct tchan *ok = chan(f, 0), *other_as = chan(f, 1),
		     *other_va = chan(f, 0);
	struct rg a;

	rg_init(f, &a, 0, VA0, 1 << 20);
	assert_int_equal(rg_reg(f, &a), 0);
	/*
	 * Fault ranges on in the GPU driver that nobody registered with the
	 * core (as a range torn down while its fault was queued looks): one
	 * in an AS the dispatch does not know, one past a's range.
	 */
	assert_int_equal(f->ops->fault_range(f->sim, f->as[1], VA0, 0x10000,
					     true), 0);
	assert_int_equal(f->ops->fault_range(f->sim, f->as[0],
					     VA0 + (1 << 20), 0x10000, true),
			 0);
	k_range(ok, VGMEM_K_FILL_PATTERN, VA0, 0x40000, 11);
	k_range(other_as, VGMEM_K_MEMSET, VA0 + 0x100, 8, 1);
	k_range(other_va, VGMEM_K_MEMSET, VA0 + (1 << 20) + 0x200, 8, 1);
	t_submit(other_as);
	t_submit(ok);
	t_submit(other_va);
	wait_done(ok);
	wait_done(other_as);
	wait_done(other_va);
	assert_int_equal(t_userd(ok, VGMEM_USERD_ERROR), 0);
	check_pattern(f, 0, VA0, 0x40000, 11);
	assert_int_equal(rg_calls(&a), 64);
	assert_int_equal(a.bad, 0);
	assert_int_equal(t_userd(other_as, VGMEM_USERD_ERROR),
			 VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(other_as, VGMEM_USERD_ERROR_ADDR_LO),
			 (u32)(VA0 + 0x100));
	assert_int_equal(t_userd(other_va, VGMEM_USERD_ERROR),
			 VGMEM_CHAN_ERR_VA);
	assert_int_equal(t_userd(other_va, VGMEM_USERD_ERROR_ADDR_LO),
			 (u32)(VA0 + (1 << 20) + 0x200));
	assert_int_equal(fstats(f).unclaimed, 2);
	assert_int_equal(fstats(f).dispatched, 64);
	/* The good channel keeps working. */
	k_range(ok, VGMEM_K_FILL_PATTERN, VA0 + 0x40000, 0x1000, 12);
	t_submit(ok);
	wait_done(ok);
	assert_int_equal(t_userd(ok, VGMEM_USERD_ERROR), 0);
	assert_int_equal(rg_calls(&a), 65);

	assert_int_equal(f->ops->fault_range(f->sim, f->as[1], VA0, 0x10000,
					     false), 0);
	assert_int_equal(f->ops->fault_range(f->sim, f->as[0],
					     VA0 + (1 << 20), 0x10000, false),
			 0);
	vg_fault_unregister(a.h);
	t_chan_free(ok);
	t_chan_free(other_as);
	t_chan_free(other_va);
}

/* ---- the paging model and the file cache on one GPU ---------------------- */

#define FSZ	(256ull << 10)

static void put_file(const char *path, const u8 *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void get_file(const char *path, u8 *buf, size_t len)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	close(fd);
}

static void pattern(u8 *buf, u64 len, u32 seed)
{
	u64 k;

	for (k = 0; k < len; k++)
		buf[k] = (u8)(vgmem_pattern_word(seed, k >> 2) >> (8 * (k & 3)));
}

static u64 gpu_sum(struct vgmem_chan *ch, u64 va, u64 len, u64 scratch)
{
	uint64_t sum = 0;

	assert_int_equal(vgmem_checksum(ch, va, len, scratch, &sum), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	return sum;
}

static void test_paging_and_file_maps_one_gpu(void **state)
{
	struct vg_host *h = mf_host("paging:gran=64k", 64ull << 20);
	struct vg_host_guest *a, *b;
	struct vgmem_chan *ca, *cb;
	struct vgmem_dev *da, *db;
	struct vg_fault_stats st;
	uint64_t abo, bbo, ascr, bscr, fa, fb;
	char dir[64], path[128];
	u8 *file, *want;
	u32 faults;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vg_fd_XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	file = malloc(FSZ);
	want = malloc(FSZ);
	assert_non_null(file);
	assert_non_null(want);
	pattern(file, FSZ, 21);
	put_file(path, file, FSZ);

	a = mf_vm(h, "a", 0);
	b = mf_vm(h, "b", 0);
	da = vg_host_guest_dev(a);
	db = vg_host_guest_dev(b);
	ca = mf_chan(a);
	cb = mf_chan(b);
	ascr = mf_bo(a, 4096);
	bscr = mf_bo(b, 4096);

	/* a: a paging BO, populated by faults. */
	abo = mf_bo(a, 4ull << 20);
	assert_int_equal(vgmem_memset(ca, abo, 4ull << 20, 0x5a5a5a5a), 0);
	assert_int_equal(vgmem_chan_error(ca, NULL), 0);
	gpu_sum(ca, ascr, 4096, ascr + 2048);	/* first touch of the scratch */
	faults = mf_stats(a).faults;
	assert_true(faults >= 65);

	/* b: a file of its share, mapped RW, on the same GPU (was refused). */
	assert_int_equal(vg_host_guest_set_share(b, 0, dir), 0);
	assert_int_equal(vgmem_map_file(db, 0, "f", 0, FSZ, VGMEM_FILE_RW,
					&fb), 0);
	assert_int_equal(vgmem_acquire(db, fb, 0), 0);
	assert_int_equal(gpu_sum(cb, fb, FSZ, bscr),
			 vgmem_fnv1a(VGMEM_FNV_INIT, file, FSZ));
	assert_int_equal(vgmem_fill_pattern(cb, fb, 64 << 10, 33), 0);
	assert_int_equal(vgmem_chan_error(cb, NULL), 0);
	assert_int_equal(vgmem_release(db, fb, 0), 0);
	assert_int_equal(vgmem_file_sync(db, fb, 0), 0);
	memcpy(want, file, FSZ);
	pattern(want, 64 << 10, 33);
	get_file(path, file, FSZ);
	assert_memory_equal(file, want, FSZ);

	/* b also has a paging BO; a maps the file too: both kinds per AS. */
	bbo = mf_bo(b, 2ull << 20);
	assert_int_equal(vgmem_memset(cb, bbo, 2ull << 20, 0x5a5a5a5a), 0);
	assert_int_equal(vgmem_chan_error(cb, NULL), 0);
	assert_true(mf_stats(b).faults >= 32);
	assert_int_equal(vg_host_guest_set_share_ro(a, 0, dir), 0);
	assert_int_equal(vgmem_map_file(da, 0, "f", 0, FSZ, VGMEM_FILE_RO,
					&fa), 0);
	assert_int_equal(vgmem_acquire(da, fa, 0), 0);
	assert_int_equal(gpu_sum(ca, fa, FSZ, ascr),
			 vgmem_fnv1a(VGMEM_FNV_INIT, want, FSZ));
	/* a's BO kept its bytes, and reading them faults no more. */
	{
		u8 *fill = malloc(4ull << 20);

		assert_non_null(fill);
		memset(fill, 0x5a, 4ull << 20);
		assert_int_equal(gpu_sum(ca, abo, 4ull << 20, ascr),
				 vgmem_fnv1a(VGMEM_FNV_INIT, fill, 4ull << 20));
		free(fill);
	}
	assert_int_equal(mf_stats(a).faults, faults);

	vg_fault_get_stats(vg_host_gpu(h), &st);
	/* 2 scratch BOs, 2 BOs, 2 file maps, in two address spaces. */
	assert_int_equal(st.ranges, 6);
	assert_int_equal(st.ases, 2);
	assert_int_equal(st.unclaimed, 0);

	assert_int_equal(vgmem_unmap_file(da, fa), 0);
	assert_int_equal(vgmem_unmap_file(db, fb), 0);
	assert_int_equal(vgmem_bo_free(da, abo), 0);
	vg_fault_get_stats(vg_host_gpu(h), &st);
	assert_int_equal(st.ranges, 3);
	vgmem_chan_destroy(ca);
	vgmem_chan_destroy(cb);
	vg_host_destroy(h);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	free(file);
	free(want);
}

/*
 * An unmap racing a fault on the map: the fault's call waits for
 * lrc->lock (held here), the unmap too; whichever gets it first, the
 * unmap returns, the map is freed only after the call (ASan), and the
 * access either completed (the fault first) or got VGMEM_CHAN_ERR_VA at
 * its address (the unmap first: the call found its map dead).
 */
struct unmap_arg {
	struct vgmem_dev *dev;
	uint64_t va;
	int rc;
};

static void *unmap_thread(void *p)
{
	struct unmap_arg *u = p;

	u->rc = vgmem_unmap_file(u->dev, u->va);
	return NULL;
}

static void test_lrc_unmap_races_fault(void **state)
{
	struct vg_host *h = mf_host("vgmem", 64ull << 20);
	struct vg_host_guest *g = mf_vm(h, "g", 0);
	struct vgmem_dev *dev = vg_host_guest_dev(g);
	struct vgmem_chan *ch = mf_chan(g);
	struct vg_lrc *lrc = vg_host_lrc(h);
	struct vg_gpu *gpu = vg_host_gpu(h);
	struct vg_fault_stats st;
	char dir[64], path[128];
	u64 before, served = 0, dead = 0;
	uint64_t scr = mf_bo(g, 4096), va, seq, addr;
	u8 *file = calloc(1, 64 << 10);
	struct unmap_arg u;
	pthread_t th;
	u32 e;
	int i;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vg_fd_XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_non_null(file);
	put_file(path, file, 64 << 10);
	assert_int_equal(vg_host_guest_set_share(g, 0, dir), 0);
	assert_int_equal(vgmem_memset(ch, scr, 4096, 0), 0);	/* binds compute */
	for (i = 0; i < 12; i++) {
		assert_int_equal(vgmem_map_file(dev, 0, "f", 0, 64 << 10,
						VGMEM_FILE_RW, &va), 0);
		vg_fault_get_stats(gpu, &st);
		before = st.dispatched;
		mutex_lock(&lrc->lock);
		seq = mf_memset_async(ch, va + 0x100, 8, 0x11);
		/* The call is under way, waiting for lrc->lock. */
		T_WAIT((vg_fault_get_stats(gpu, &st), st.dispatched > before));
		u.dev = dev;
		u.va = va;
		u.rc = 1;
		assert_int_equal(pthread_create(&th, NULL, unmap_thread, &u), 0);
		usleep(i & 1 ? 20000 : 0);	/* both orders, most likely */
		mutex_unlock(&lrc->lock);
		assert_int_equal(pthread_join(th, NULL), 0);
		assert_int_equal(u.rc, 0);
		vgmem_wait(ch, seq, 10ull * NSEC_PER_SEC);
		e = vgmem_chan_error(ch, &addr);
		if (e) {
			assert_int_equal(e, VGMEM_CHAN_ERR_VA);
			assert_int_equal(addr, va + 0x100);
			dead++;
			vgmem_chan_destroy(ch);
			ch = mf_chan(g);
			assert_int_equal(vgmem_memset(ch, scr, 4096, 0), 0);
		} else {
			served++;
		}
		vg_fault_get_stats(gpu, &st);
		assert_int_equal(st.ranges, 0);
	}
	print_message("fault first %llu, unmap first %llu\n",
		      (unsigned long long)served, (unsigned long long)dead);
	vgmem_chan_destroy(ch);
	vg_host_destroy(h);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	free(file);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_two_ases_and_disjoint_ranges),
		T(test_overlap_refused_changes_nothing),
		cmocka_unit_test(test_no_fault_gpu),
		T(test_unregister_waits_for_running_call),
		T(test_unregister_async_releases_after_call),
		T(test_unclaimed_fault_errors_only_its_channel),
		cmocka_unit_test(test_paging_and_file_maps_one_gpu),
		cmocka_unit_test(test_lrc_unmap_races_fault),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
