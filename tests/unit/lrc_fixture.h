/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The LRC file cache's unit-test fixture (test_lrc_cache.c,
 * test_lrc_props.c): an in-memory store with hostile-path rules like the
 * real one, software GPUs driven through the real core (vg_gpu, vg_vm),
 * one LRC context per VM, and GPU reads and writes done by the copy
 * engine of a channel on the VM's address space, so every access goes
 * through the sim's replayable faults into the cache's fault handler.
 * Header only: each test program includes it after <cmocka.h>.
 */
#ifndef VGMEM_TESTS_LRC_FIXTURE_H
#define VGMEM_TESTS_LRC_FIXTURE_H

#include <time.h>

#include "test_sim_util.h"
#include "host-module/core/lrc/lrc_internal.h"
#include "host-module/core/vg_internal.h"	/* the tests look into the core too */

/* ---- the in-memory store ------------------------------------------------- */

#define MS_FILES	16
#define MS_ROOTS	4

struct ms_file {
	char root[32];
	char name[64];
	u8 *data;
	u64 size;
	u64 change;
	u64 ino;
	bool symlink;		/* opening it, or through it, is refused */
	bool ro;		/* may not be opened writable */
};

struct mstore {
	char roots[MS_ROOTS][32];
	struct ms_file files[MS_FILES];
	u32 nfiles;
	u64 writes, write_bytes, fsyncs, reads;
	int open_handles;	/* leak check */
	int open_roots;
};

struct ms_handle {
	struct mstore *ms;
	struct ms_file *f;
	bool writable;
};

static inline struct ms_file *ms_add(struct mstore *ms, const char *root,
				     const char *name, u64 size)
{
	struct ms_file *f = &ms->files[ms->nfiles];

	assert_true(ms->nfiles < MS_FILES);
	memset(f, 0, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "%s", root);
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->size = size;
	f->data = calloc(1, size ? size : 1);
	assert_non_null(f->data);
	f->ino = 100 + ms->nfiles;
	f->change = 1;
	ms->nfiles++;
	return f;
}

/* A host writer the cache does not see (moves the change counter). */
static inline void ms_ext_write(struct ms_file *f, u64 off, const void *buf,
				u64 len)
{
	assert_true(off + len <= f->size);
	memcpy(f->data + off, buf, len);
	f->change++;
}

static inline int ms_root_open(void *priv, const char *path, void **root)
{
	struct mstore *ms = priv;
	u32 i;

	for (i = 0; i < MS_ROOTS; i++) {
		if (ms->roots[i][0] && !strcmp(ms->roots[i], path)) {
			*root = ms->roots[i];
			ms->open_roots++;
			return 0;
		}
	}
	return -ENOENT;
}

static inline void ms_root_close(void *priv, void *root)
{
	struct mstore *ms = priv;

	(void)root;
	ms->open_roots--;
}

/* Beneath the root: no absolute path, no "..", no symlink. */
static inline int ms_open_beneath(void *priv, void *root, const char *rel,
				  bool writable, void **fh,
				  struct vg_lrc_file_id *id)
{
	struct mstore *ms = priv;
	struct ms_handle *h;
	const char *p;
	u32 i;

	if (rel[0] == '/')
		return -EACCES;
	for (p = rel; *p; ) {
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))
			return -EACCES;
		p = strchr(p, '/');
		if (!p)
			break;
		p++;
	}
	for (i = 0; i < ms->nfiles; i++) {
		struct ms_file *f = &ms->files[i];

		if (strcmp(f->root, root) || strcmp(f->name, rel))
			continue;
		if (f->symlink || (writable && f->ro))
			return -EACCES;
		h = calloc(1, sizeof(*h));
		h->ms = ms;
		h->f = f;
		h->writable = writable;
		id->dev = 7;
		id->ino = f->ino;
		*fh = h;
		ms->open_handles++;
		return 0;
	}
	return -ENOENT;
}

static inline int ms_read(void *priv, void *fh, u64 off, void *buf, u64 len)
{
	struct ms_handle *h = fh;
	u64 n = 0;

	(void)priv;
	h->ms->reads++;
	if (off < h->f->size)
		n = len < h->f->size - off ? len : h->f->size - off;
	memcpy(buf, h->f->data + off, n);
	memset((u8 *)buf + n, 0, len - n);
	return 0;
}

static inline int ms_write(void *priv, void *fh, u64 off, const void *buf,
			   u64 len)
{
	struct ms_handle *h = fh;
	struct ms_file *f = h->f;

	(void)priv;
	if (!h->writable)
		return -EBADF;
	if (off + len > f->size) {
		f->data = realloc(f->data, off + len);
		memset(f->data + f->size, 0, off + len - f->size);
		f->size = off + len;
	}
	memcpy(f->data + off, buf, len);
	f->change++;
	h->ms->writes++;
	h->ms->write_bytes += len;
	return 0;
}

static inline int ms_fsync(void *priv, void *fh)
{
	struct ms_handle *h = fh;

	(void)priv;
	h->ms->fsyncs++;
	return 0;
}

static inline int ms_getattr(void *priv, void *fh, struct vg_lrc_attr *a)
{
	struct ms_handle *h = fh;

	(void)priv;
	a->size = h->f->size;
	a->change = h->f->change;
	return 0;
}

static inline void ms_close(void *priv, void *fh)
{
	struct ms_handle *h = fh;

	(void)priv;
	h->ms->open_handles--;
	free(h);
}

static const struct vg_lrc_store_ops ms_ops = {
	.root_open = ms_root_open,
	.root_close = ms_root_close,
	.open_beneath = ms_open_beneath,
	.read = ms_read,
	.write = ms_write,
	.fsync = ms_fsync,
	.getattr = ms_getattr,
	.close = ms_close,
};

/* ---- GPUs, VMs, contexts ------------------------------------------------- */

#define LFX_GPUS	2
#define LFX_VMS		12
#define LFX_XFER	(512ull << 10)	/* guest staging per VM for CE copies */

struct lfx_gpu {
	struct vg_sim *sim;
	struct vg_gpu *gpu;
	struct tg *g;
};

struct lfx_vm {
	struct vg_vm *vm;
	struct vg_lrc_ctx *ctx;
	struct tchan *t;
	u64 xfer;		/* guest-physical staging */
	int gpu;
};

struct lfx {
	struct mstore ms;
	struct vg_lrc *lrc;
	struct lfx_gpu gpu[LFX_GPUS];
	u32 ngpu;
	struct lfx_vm vm[LFX_VMS];
	u32 nvm;
	unsigned long warns;
};

static inline void lfx_init(struct lfx *x, u32 ngpu, u64 vram, u64 budget)
{
	struct vg_lrc_config cfg = { 0 };
	u32 i;

	memset(x, 0, sizeof(*x));
	x->warns = os_warn_count();
	snprintf(x->ms.roots[0], 32, "/srv/share0");
	snprintf(x->ms.roots[1], 32, "/srv/share1");
	cfg.store = &ms_ops;
	cfg.store_priv = &x->ms;
	cfg.vram_budget = budget;
	cfg.readahead_max = 1ull << 20;
	cfg.seed = 42;
	assert_int_equal(vg_lrc_create(&cfg, &x->lrc), 0);
	x->ngpu = ngpu;
	for (i = 0; i < ngpu; i++) {
		struct vg_gpu_config gc = { .name = "lrcgpu",
					    .no_return_worker = true,
					    .seed = 1 };

		x->gpu[i].sim = t_sim(vram, 0);
		assert_int_equal(vg_gpu_create(&gc, vg_sim_gpu_ops(),
					       x->gpu[i].sim, &x->gpu[i].gpu),
				 0);
		assert_int_equal(vg_lrc_gpu_add(x->lrc, x->gpu[i].gpu, 0), 0);
		x->gpu[i].g = tg_new();
	}
}

/* A VM on GPU gi with a context, share 1 = /srv/share0, share 2 RO. */
static inline struct lfx_vm *lfx_vm(struct lfx *x, u32 gi)
{
	struct lfx_vm *v = &x->vm[x->nvm];
	struct vg_vm_config vc = { 0 };

	assert_true(x->nvm < LFX_VMS && gi < x->ngpu);
	assert_int_equal(vg_vm_create(x->gpu[gi].gpu, &vc, &v->vm), 0);
	assert_int_equal(vg_lrc_ctx_create(x->lrc, v->vm, &v->ctx), 0);
	assert_int_equal(vg_lrc_share_set(v->ctx, 1, "/srv/share0", false), 0);
	assert_int_equal(vg_lrc_share_set(v->ctx, 2, "/srv/share1", true), 0);
	v->t = t_chan(x->gpu[gi].sim, vg_vm_gpu_as(v->vm), x->gpu[gi].g,
		      64);
	t_bind(v->t);
	t_run(v->t);
	v->t->pb_pos = v->t->seg_start = 0;
	v->xfer = tg_alloc(x->gpu[gi].g, LFX_XFER);
	v->gpu = gi;
	x->nvm++;
	return v;
}

/* Map [off, off + len) of share 1's file name into v; its GPU VA. */
static inline u64 lfx_map(struct lfx_vm *v, const char *name, u64 off,
			  u64 len, u32 flags)
{
	u64 va = 0;

	assert_int_equal(vg_lrc_map(v->ctx, 1, name, off, len, flags, &va), 0);
	return va;
}

/* The core's statistics of GPU gi. */
static inline struct vg_gpu_stats lfx_gpu_stats(struct lfx *x, u32 gi)
{
	struct vg_gpu_stats gs;

	vg_gpu_get_stats(x->gpu[gi].gpu, &gs);
	return gs;
}

/* Destroy a VM early (its slot stays, marked gone). */
static inline void lfx_vm_destroy(struct lfx_vm *v)
{
	t_chan_free(v->t);
	v->t = NULL;
	vg_vm_destroy(v->vm);	/* tears the context down with write-back */
	v->vm = NULL;
	v->ctx = NULL;
}

static inline void lfx_fini(struct lfx *x)
{
	u32 i;

	for (i = 0; i < x->nvm; i++) {
		if (!x->vm[i].vm)
			continue;
		assert_int_equal(vg_gpu_check(x->vm[i].vm->gpu), 0);
		lfx_vm_destroy(&x->vm[i]);
	}
	for (i = 0; i < x->ngpu; i++)
		vg_lrc_gpu_remove(x->lrc, x->gpu[i].gpu);
	vg_lrc_destroy(x->lrc);
	for (i = 0; i < x->ngpu; i++) {
		vg_gpu_destroy(x->gpu[i].gpu);
		vg_sim_destroy(x->gpu[i].sim);
		tg_free(x->gpu[i].g);
	}
	assert_int_equal(x->ms.open_handles, 0);
	assert_int_equal(x->ms.open_roots, 0);
	for (i = 0; i < x->ms.nfiles; i++)
		free(x->ms.files[i].data);
	assert_int_equal(os_warn_count(), x->warns);
}

static inline u64 lfx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + (u64)ts.tv_nsec;
}

/* Run the open segment; the ring drains through any number of faults. */
static inline int lfx_run(struct tchan *t)
{
	u64 end = lfx_now() + T_TIMEOUT;
	u32 err;

	t_submit(t);
	while (t_userd(t, VGMEM_USERD_GP_GET) != t->put &&
	       !t_userd(t, VGMEM_USERD_ERROR)) {
		assert_true(lfx_now() < end);
		usleep(50);
	}
	err = t_userd(t, VGMEM_USERD_ERROR);
	t->pb_pos = t->seg_start = 0;
	return err ? -EFAULT : 0;
}

/* The GPU of v writes buf at va (a CE copy from guest memory). */
static inline void lfx_gpu_write(struct lfx *x, struct lfx_vm *v, u64 va,
				 const void *buf, u32 len)
{
	assert_true(len && len <= LFX_XFER);
	memcpy(tg_ptr(x->gpu[v->gpu].g, v->xfer), buf, len);
	t_ce(v->t, v->xfer, va, len, len, len, 1, VGMEM_CE_LAUNCH_SRC_PHYS);
	assert_int_equal(lfx_run(v->t), 0);
}

/* The GPU of v reads len bytes at va into buf. */
static inline void lfx_gpu_read(struct lfx *x, struct lfx_vm *v, u64 va,
				void *buf, u32 len)
{
	assert_true(len && len <= LFX_XFER);
	t_ce(v->t, va, v->xfer, len, len, len, 1, VGMEM_CE_LAUNCH_DST_PHYS);
	assert_int_equal(lfx_run(v->t), 0);
	memcpy(buf, tg_ptr(x->gpu[v->gpu].g, v->xfer), len);
}

static inline struct vg_lrc_stats lfx_stats(struct lfx *x)
{
	struct vg_lrc_stats st;

	vg_lrc_get_stats(x->lrc, &st);
	return st;
}

/*
 * Host writers of len (at most 256) bytes of v at off, in the file the
 * readers must end up seeing (want follows): through the cache with hf
 * (not written back yet), or outside vgmem, straight into the store's
 * file f.
 */
static inline void lfx_fill_cache(struct vg_lrc_file *hf, u8 *want, u64 off,
				  u8 v, u32 len)
{
	u8 buf[256];

	assert_true(len <= sizeof(buf));
	memset(buf, v, len);
	assert_int_equal(vg_lrc_host_write(hf, off, buf, len), (s64)len);
	memset(want + off, v, len);
}

static inline void lfx_fill_ext(struct ms_file *f, u8 *want, u64 off, u8 v,
				u32 len)
{
	u8 buf[256];

	assert_true(len <= sizeof(buf));
	memset(buf, v, len);
	ms_ext_write(f, off, buf, len);
	memset(want + off, v, len);
}

/* Fill with a recognisable pattern. */
static inline void lfx_pattern(u8 *p, u64 n, u32 seed)
{
	u64 i;

	for (i = 0; i < n; i++)
		p[i] = (u8)((i * 131 + seed * 7 + (i >> 12)) ^ seed);
}

#endif /* VGMEM_TESTS_LRC_FIXTURE_H */
