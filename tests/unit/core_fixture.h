/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A GPU on the fake GPU with a few VMs, for the core's unit tests
 * (accounting, reducer, BOs, control, channels, relocation, return), and
 * a guest's memory for the VMs whose channels read rings from it. Include
 * after <cmocka.h>. Teardown asserts no GPU driver object leaked, no GPU driver
 * contract was violated and no WARN fired.
 */
#ifndef VGMEM_TESTS_CORE_FIXTURE_H
#define VGMEM_TESTS_CORE_FIXTURE_H

#include "host-module/core/vg_internal.h"
#include "fake_gpu.h"

#define CFX_MAX_VMS	8
#define KiB		1024ull
#define MiB		(1024ull * KiB)

struct cfx {
	struct fake_gpu *fb;
	struct vg_gpu *gpu;
	struct vg_vm *vm[CFX_MAX_VMS];
	u32 nvm;
	unsigned long warns;
};

struct cfx_opts {
	u64 vram;
	u64 chunk;
	enum vg_chunk_policy policy;
	u64 seed;
	u64 host_budget;
	const struct vg_gpu_ops *ops;	/* NULL: fake_ops */
	const char *name;			/* NULL: "test" */
	bool return_worker;			/* else tests call vg_gpu_return_once() */
	u32 return_interval_ms;			/* of the worker; 0: the default */
	const struct vg_gpu_events *events;
	void *events_priv;
};

static inline void cfx_init_opts(struct cfx *f, const struct cfx_opts *o)
{
	struct vg_gpu_config cfg = {
		.name = o->name ? o->name : "test",
		.chunk_size = o->chunk,
		.policy = o->policy,
		.host_budget = o->host_budget,
		.seed = o->seed,
		.no_return_worker = !o->return_worker,
		.return_interval_ms = o->return_interval_ms,
		.events = o->events,
		.events_priv = o->events_priv,
	};

	memset(f, 0, sizeof(*f));
	f->warns = os_warn_count();
	f->fb = fake_create(o->vram);
	assert_non_null(f->fb);
	assert_int_equal(vg_gpu_create(&cfg, o->ops ? o->ops : &fake_ops, f->fb,
				       &f->gpu), 0);
}

static inline void cfx_init(struct cfx *f, u64 vram, u64 chunk,
			    enum vg_chunk_policy p)
{
	struct cfx_opts o = { .vram = vram, .chunk = chunk, .policy = p,
			      .seed = 1 };

	cfx_init_opts(f, &o);
}

/* A VM of cfg's own (guest memory, platform hooks), destroyed by cfx_fini. */
static inline struct vg_vm *cfx_vm_cfg(struct cfx *f,
				       const struct vg_vm_config *cfg)
{
	struct vg_vm *vm;

	assert_true(f->nvm < CFX_MAX_VMS);
	assert_int_equal(vg_vm_create(f->gpu, cfg, &vm), 0);
	f->vm[f->nvm++] = vm;
	return vm;
}

static inline struct vg_vm *cfx_vm(struct cfx *f, const char *name)
{
	struct vg_vm_config cfg = { .name = name };

	return cfx_vm_cfg(f, &cfg);
}

static inline void cfx_fini(struct cfx *f)
{
	u32 i;

	assert_int_equal(vg_gpu_check(f->gpu), 0);
	for (i = 0; i < f->nvm; i++)
		vg_vm_destroy(f->vm[i]);
	vg_gpu_destroy(f->gpu);
	assert_int_equal(fake_leaks(f->fb), 0);
	assert_int_equal(fake_errors(f->fb), 0);
	fake_destroy(f->fb);
	assert_int_equal(os_warn_count(), f->warns);
}

/*
 * A guest's memory, guest-physical [0, size), as a VM's vg_guest_mem: what
 * the core reads channel rings from. Without a buffer (cfx_gmem_zero) it
 * reads as zeroes and drops writes, for tests whose rings stay empty.
 * Out of range is -EFAULT, as a real guest's memory would answer.
 */
struct cfx_gmem {
	u8 *buf;
	u64 size;
};

static inline int cfx_gmem_read(void *priv, u64 gpa, void *buf, size_t len)
{
	struct cfx_gmem *g = priv;

	if (gpa > g->size || len > g->size - gpa)
		return -EFAULT;
	if (g->buf)
		memcpy(buf, g->buf + gpa, len);
	else
		memset(buf, 0, len);
	return 0;
}

static inline int cfx_gmem_write(void *priv, u64 gpa, const void *buf,
				 size_t len)
{
	struct cfx_gmem *g = priv;

	if (gpa > g->size || len > g->size - gpa)
		return -EFAULT;
	if (g->buf)
		memcpy(g->buf + gpa, buf, len);
	return 0;
}

static inline void cfx_gmem_init(struct cfx_gmem *g, u64 size)
{
	g->size = size;
	g->buf = calloc(1, size);
	assert_non_null(g->buf);
}

static inline void cfx_gmem_zero(struct cfx_gmem *g, u64 size)
{
	g->size = size;
	g->buf = NULL;
}

static inline void cfx_gmem_fini(struct cfx_gmem *g)
{
	free(g->buf);
	g->buf = NULL;
}

/* g as a VM's guest memory (vg_vm_config.gmem). */
static inline struct vg_guest_mem cfx_gmem_of(struct cfx_gmem *g)
{
	struct vg_guest_mem m = {
		.read = cfx_gmem_read, .write = cfx_gmem_write, .priv = g,
	};

	return m;
}

/* Tests are single threaded: read core structures without the lock. */
static inline struct vg_bo *cfx_bo(struct vg_vm *vm, u64 va)
{
	struct vg_bo *bo;

	list_for_each_entry(bo, &vm->bos, node)
		if (bo->va == va)
			return bo;
	return NULL;
}

static inline struct vgmem_vm_stats cfx_stats(struct vg_vm *vm)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(vm, &st);
	return st;
}

static inline u64 cfx_alloc(struct vg_vm *vm, u64 size)
{
	u64 va = 0;

	assert_int_equal(vg_bo_alloc(vm, size, 0, &va), 0);
	return va;
}

/* Chunks of the BO at va in loc. */
static inline u32 cfx_nloc(struct vg_vm *vm, u64 va, enum vg_loc loc)
{
	enum vg_loc locs[256];
	u32 n = 0, i, k = 0;

	assert_int_equal(vg_bo_query(vm, va, locs, 256, &n), 0);
	assert_true(n <= 256);
	for (i = 0; i < n; i++)
		k += locs[i] == loc;
	return k;
}

static inline u64 cfx_hist_sum(const u64 *h)
{
	u64 s = 0;
	int i;

	for (i = 0; i < VGMEM_HIST_BUCKETS; i++)
		s += h[i];
	return s;
}

#endif /* VGMEM_TESTS_CORE_FIXTURE_H */
