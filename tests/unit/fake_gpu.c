// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Recording fake GPU for the core's unit tests; see fake_gpu.h.
 * Userspace only: plain libc allocation, so os_fail_alloc_after() aimed at
 * the core never hits the fake.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_gpu.h"
#include <uapi/vgmem.h>

#define FAKE_LOG_SIZE	1024u
#define FAKE_PAGE	4096ull

struct fake_mem {
	struct fake_gpu *fb;
	enum vg_loc loc;
	u64 size;
	u8 *data;
	u64 access;
	u32 nmaps;		/* mapped ranges pointing at it */
	struct fake_mem *prev, *next;
};

struct fake_range {
	u64 va;
	u64 size;
	struct fake_mem *mem;
	u64 off;
};

struct fake_as {
	struct fake_gpu *fb;
	struct fake_range *r;	/* sorted by va, disjoint */
	u32 nr, cap;
	bool tlb_dirty;
	u32 nchans;
	struct fake_as *prev, *next;
};

struct fake_chan {
	struct fake_gpu *fb;
	struct fake_as *as;
	struct vg_channel_desc desc;
	u32 *userd;
	/* The tiny engine (fake_gpu.h). */
	fake_work_fn work;
	void *work_priv;
	bool parked;
	bool stopped;
	u64 runs;
	struct fake_chan *prev, *next;
};

struct fake_batch {
	u64 fence;
	unsigned int n;
	struct vg_copy *copies;
	struct fake_batch *next;
};

struct fake_hook {
	fake_hook_fn fn;
	void *priv;
};

struct fake_gpu {
	pthread_mutex_t lock;
	u64 vram_size;
	u64 vram_used;
	u64 host_used;
	u64 host_limit;

	u64 count[FAKE_OP_NR];
	u64 last_seq[FAKE_OP_NR];
	u64 seq;
	u8 log[FAKE_LOG_SIZE];

	u32 fail_nth[FAKE_OP_NR];
	int fail_err[FAKE_OP_NR];
	struct fake_hook hook[FAKE_OP_NR];

	u64 errors;
	u64 bytes_copied;
	u64 copies;
	u64 next_fence;
	struct fake_batch *batches;	/* oldest first */

	struct fake_mem *mems;
	struct fake_as *ases;
	struct fake_chan *chans;
	u64 nr_mems, nr_ases, nr_chans;
};

static const char *const fake_op_names[FAKE_OP_NR] = {
	[FAKE_OP_VRAM_SIZE] = "vram_size",
	[FAKE_OP_MEM_ALLOC_VRAM] = "mem_alloc(vram)",
	[FAKE_OP_MEM_ALLOC_HOST] = "mem_alloc(host)",
	[FAKE_OP_MEM_FREE] = "mem_free",
	[FAKE_OP_COPY_SUBMIT] = "copy_submit",
	[FAKE_OP_COPY_WAIT] = "copy_wait",
	[FAKE_OP_AS_CREATE] = "as_create",
	[FAKE_OP_AS_DESTROY] = "as_destroy",
	[FAKE_OP_MAP] = "map",
	[FAKE_OP_UNMAP] = "unmap",
	[FAKE_OP_TLB_FLUSH] = "tlb_flush",
	[FAKE_OP_CHAN_CREATE] = "channel_create",
	[FAKE_OP_CHAN_DESTROY] = "channel_destroy",
	[FAKE_OP_IDLE_WAIT] = "channel_idle_wait",
	[FAKE_OP_SAMPLE_ACCESS] = "sample_access",
	[FAKE_OP_CHAN_STOP] = "channel_stop",
	[FAKE_OP_CHAN_START] = "channel_start",
	[FAKE_OP_CHAN_RUN] = "(channel ran)",
};

static const int fake_default_err[FAKE_OP_NR] = {
	[FAKE_OP_MEM_ALLOC_VRAM] = -ENOSPC,
	[FAKE_OP_MEM_ALLOC_HOST] = -ENOMEM,
	[FAKE_OP_COPY_SUBMIT] = -EIO,
	[FAKE_OP_COPY_WAIT] = -EIO,
	[FAKE_OP_AS_CREATE] = -ENOMEM,
	[FAKE_OP_MAP] = -ENOMEM,
	[FAKE_OP_CHAN_CREATE] = -ENOMEM,
	[FAKE_OP_IDLE_WAIT] = -ETIMEDOUT,
	[FAKE_OP_CHAN_STOP] = -ETIMEDOUT,
};

const char *fake_op_name(enum fake_op op)
{
	if ((unsigned int)op >= FAKE_OP_NR)
		return "?";
	return fake_op_names[op];
}

static void fake_error(struct fake_gpu *fb, const char *what)
{
	fb->errors++;
	fprintf(stderr, "fake_gpu: contract violation: %s\n", what);
}

/*
 * Start of every op: hook, count, log, then failure injection. Returns 0 or
 * the injected errno. The hook runs without fb->lock so it may use the
 * query functions.
 */
static int fake_enter(struct fake_gpu *fb, enum fake_op op, void *arg)
{
	struct fake_hook h = fb->hook[op];
	int err = 0;

	if (h.fn)
		h.fn(h.priv, fb, arg);
	pthread_mutex_lock(&fb->lock);
	fb->count[op]++;
	fb->last_seq[op] = ++fb->seq;
	fb->log[fb->seq % FAKE_LOG_SIZE] = (u8)op;
	if (fb->fail_nth[op] && --fb->fail_nth[op] == 0)
		err = fb->fail_err[op] ? fb->fail_err[op] : -EIO;
	pthread_mutex_unlock(&fb->lock);
	return err;
}

/* ---- lifetime and queries ------------------------------------------------ */

struct fake_gpu *fake_create(u64 vram_size)
{
	struct fake_gpu *fb = calloc(1, sizeof(*fb));

	if (!fb)
		return NULL;
	pthread_mutex_init(&fb->lock, NULL);
	fb->vram_size = vram_size;
	fb->next_fence = 1;
	return fb;
}

static void fake_mem_release(struct fake_mem *m)
{
	struct fake_gpu *fb = m->fb;

	if (m->prev)
		m->prev->next = m->next;
	else
		fb->mems = m->next;
	if (m->next)
		m->next->prev = m->prev;
	if (m->loc == VG_LOC_VRAM)
		fb->vram_used -= m->size;
	else
		fb->host_used -= m->size;
	fb->nr_mems--;
	free(m->data);
	free(m);
}

static void fake_batch_free(struct fake_batch *b)
{
	free(b->copies);
	free(b);
}

void fake_destroy(struct fake_gpu *fb)
{
	if (!fb)
		return;
	while (fb->batches) {
		struct fake_batch *b = fb->batches;

		fb->batches = b->next;
		fake_batch_free(b);
	}
	while (fb->chans) {
		struct fake_chan *c = fb->chans;

		fb->chans = c->next;
		free(c->userd);
		free(c);
	}
	while (fb->ases) {
		struct fake_as *a = fb->ases;

		fb->ases = a->next;
		free(a->r);
		free(a);
	}
	while (fb->mems)
		fake_mem_release(fb->mems);
	pthread_mutex_destroy(&fb->lock);
	free(fb);
}

u64 fake_leaks(struct fake_gpu *fb)
{
	return fb->nr_mems + fb->nr_ases + fb->nr_chans;
}

u64 fake_errors(struct fake_gpu *fb)
{
	return fb->errors;
}

u64 fake_count(struct fake_gpu *fb, enum fake_op op)
{
	u64 n;

	pthread_mutex_lock(&fb->lock);
	n = fb->count[op];
	pthread_mutex_unlock(&fb->lock);
	return n;
}

void fake_reset_counts(struct fake_gpu *fb)
{
	pthread_mutex_lock(&fb->lock);
	memset(fb->count, 0, sizeof(fb->count));
	pthread_mutex_unlock(&fb->lock);
}

u64 fake_last_seq(struct fake_gpu *fb, enum fake_op op)
{
	return fb->last_seq[op];
}

enum fake_op fake_log_at(struct fake_gpu *fb, u32 i)
{
	if (i >= FAKE_LOG_SIZE || i >= fb->seq)
		return FAKE_OP_NR;
	return (enum fake_op)fb->log[(fb->seq - i) % FAKE_LOG_SIZE];
}

void fake_fail_errno(struct fake_gpu *fb, enum fake_op op, u32 nth,
		     int err)
{
	pthread_mutex_lock(&fb->lock);
	fb->fail_nth[op] = nth;
	fb->fail_err[op] = err;
	pthread_mutex_unlock(&fb->lock);
}

void fake_fail(struct fake_gpu *fb, enum fake_op op, u32 nth)
{
	fake_fail_errno(fb, op, nth, fake_default_err[op]);
}

void fake_fail_clear(struct fake_gpu *fb)
{
	pthread_mutex_lock(&fb->lock);
	memset(fb->fail_nth, 0, sizeof(fb->fail_nth));
	pthread_mutex_unlock(&fb->lock);
}

void fake_set_hook(struct fake_gpu *fb, enum fake_op op, fake_hook_fn fn,
		   void *priv)
{
	fb->hook[op].fn = fn;
	fb->hook[op].priv = priv;
}

void fake_set_host_limit(struct fake_gpu *fb, u64 bytes)
{
	fb->host_limit = bytes;
}

u64 fake_vram_used(struct fake_gpu *fb)
{
	return fb->vram_used;
}

u64 fake_host_used(struct fake_gpu *fb)
{
	return fb->host_used;
}

void fake_set_access(struct vg_mem *mem, u64 n)
{
	((struct fake_mem *)mem)->access = n;
}

u64 fake_mem_size(const struct vg_mem *mem)
{
	return ((const struct fake_mem *)mem)->size;
}

enum vg_loc fake_mem_loc(const struct vg_mem *mem)
{
	return ((const struct fake_mem *)mem)->loc;
}

u8 *fake_mem_data(struct vg_mem *mem)
{
	return ((struct fake_mem *)mem)->data;
}

u64 fake_bytes_copied(struct fake_gpu *fb)
{
	return fb->bytes_copied;
}

u64 fake_copies(struct fake_gpu *fb)
{
	return fb->copies;
}

u32 fake_copies_pending(struct fake_gpu *fb)
{
	struct fake_batch *b;
	u32 n = 0;

	for (b = fb->batches; b; b = b->next)
		n++;
	return n;
}

/* ---- memory ------------------------------------------------------------- */

static u64 fake_op_vram_size(void *b)
{
	struct fake_gpu *fb = b;

	fake_enter(fb, FAKE_OP_VRAM_SIZE, NULL);
	return fb->vram_size;
}

static int fake_op_mem_alloc(void *b, enum vg_loc loc, u64 size,
			     struct vg_mem **out)
{
	struct fake_gpu *fb = b;
	struct fake_mem *m;
	int err;

	err = fake_enter(fb, loc == VG_LOC_VRAM ? FAKE_OP_MEM_ALLOC_VRAM :
			 FAKE_OP_MEM_ALLOC_HOST, NULL);
	if (err)
		return err;
	if (!size || size % FAKE_PAGE) {
		fake_error(fb, "mem_alloc size zero or not page aligned");
		return -EINVAL;
	}
	if (loc == VG_LOC_VRAM && size > fb->vram_size - fb->vram_used)
		return -ENOSPC;
	if (loc == VG_LOC_HOST && fb->host_limit &&
	    size > fb->host_limit - fb->host_used)
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->data = calloc(1, size);
	if (!m->data) {
		free(m);
		return -ENOMEM;
	}
	m->fb = fb;
	m->loc = loc;
	m->size = size;
	m->next = fb->mems;
	if (fb->mems)
		fb->mems->prev = m;
	fb->mems = m;
	fb->nr_mems++;
	if (loc == VG_LOC_VRAM)
		fb->vram_used += size;
	else
		fb->host_used += size;
	*out = (struct vg_mem *)m;
	return 0;
}

static void fake_op_mem_free(void *b, struct vg_mem *mem)
{
	struct fake_gpu *fb = b;
	struct fake_mem *m = (struct fake_mem *)mem;
	struct fake_batch *bt;
	unsigned int i;

	fake_enter(fb, FAKE_OP_MEM_FREE, mem);
	if (!m) {
		fake_error(fb, "mem_free(NULL)");
		return;
	}
	if (m->fb != fb) {
		fake_error(fb, "mem_free of a foreign or freed mem");
		return;
	}
	if (m->nmaps)
		fake_error(fb, "mem_free of a mem that is still mapped");
	for (bt = fb->batches; bt; bt = bt->next)
		for (i = 0; i < bt->n; i++)
			if (bt->copies[i].src == mem || bt->copies[i].dst == mem)
				fake_error(fb, "mem_free of a mem with a copy in flight");
	/* Remove from the address-space ranges so a violation cannot crash. */
	if (m->nmaps) {
		struct fake_as *a;
		u32 j, k;

		for (a = fb->ases; a; a = a->next) {
			for (j = 0, k = 0; j < a->nr; j++)
				if (a->r[j].mem != m)
					a->r[k++] = a->r[j];
			a->nr = k;
		}
	}
	fake_mem_release(m);
}

/* ---- copies ------------------------------------------------------------- */

static bool fake_copy_ok(struct fake_gpu *fb, const struct vg_copy *c)
{
	const struct fake_mem *s = (const struct fake_mem *)c->src;
	const struct fake_mem *d = (const struct fake_mem *)c->dst;

	if (!s || !d || s->fb != fb || d->fb != fb)
		return false;
	if (c->src_off > s->size || c->len > s->size - c->src_off)
		return false;
	if (c->dst_off > d->size || c->len > d->size - c->dst_off)
		return false;
	return true;
}

static int fake_op_copy_submit(void *b, const struct vg_copy *copies,
			       unsigned int n, u64 *fence)
{
	struct fake_gpu *fb = b;
	struct fake_batch *bt, **tail;
	unsigned int i;
	int err;

	err = fake_enter(fb, FAKE_OP_COPY_SUBMIT, NULL);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (!fake_copy_ok(fb, &copies[i])) {
			fake_error(fb, "copy_submit out of bounds or bad mem");
			return -EINVAL;
		}
	}
	bt = calloc(1, sizeof(*bt));
	if (!bt)
		return -ENOMEM;
	bt->copies = calloc(n ? n : 1, sizeof(*copies));
	if (!bt->copies) {
		free(bt);
		return -ENOMEM;
	}
	if (n)
		memcpy(bt->copies, copies, n * sizeof(*copies));
	bt->n = n;
	bt->fence = fb->next_fence++;
	for (tail = &fb->batches; *tail; tail = &(*tail)->next)
		;
	*tail = bt;
	*fence = bt->fence;
	return 0;
}

static int fake_op_copy_wait(void *b, u64 fence, u64 *device_ns)
{
	struct fake_gpu *fb = b;
	u64 bytes = 0;
	int err;

	err = fake_enter(fb, FAKE_OP_COPY_WAIT, NULL);
	if (device_ns)
		*device_ns = 0;
	/* Batches complete in order: everything up to fence is done now. */
	while (fb->batches && fb->batches->fence <= fence) {
		struct fake_batch *bt = fb->batches;
		unsigned int i;

		fb->batches = bt->next;
		for (i = 0; !err && i < bt->n; i++) {
			const struct vg_copy *c = &bt->copies[i];
			struct fake_mem *s = (struct fake_mem *)c->src;
			struct fake_mem *d = (struct fake_mem *)c->dst;

			memmove(d->data + c->dst_off, s->data + c->src_off,
				c->len);
			bytes += c->len;
			fb->copies++;
		}
		fake_batch_free(bt);
	}
	fb->bytes_copied += bytes;
	/* A PCIe-ish 12 bytes/ns plus a fixed 1 us per wait. */
	if (device_ns && !err)
		*device_ns = 1000 + bytes / 12;
	return err;
}

/* ---- address spaces ----------------------------------------------------- */

static int fake_op_as_create(void *b, struct vg_as **out)
{
	struct fake_gpu *fb = b;
	struct fake_as *a;
	int err;

	err = fake_enter(fb, FAKE_OP_AS_CREATE, NULL);
	if (err)
		return err;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fb = fb;
	a->next = fb->ases;
	if (fb->ases)
		fb->ases->prev = a;
	fb->ases = a;
	fb->nr_ases++;
	*out = (struct vg_as *)a;
	return 0;
}

static void fake_op_as_destroy(void *b, struct vg_as *as)
{
	struct fake_gpu *fb = b;
	struct fake_as *a = (struct fake_as *)as;
	u32 i;

	fake_enter(fb, FAKE_OP_AS_DESTROY, as);
	if (a->nchans)
		fake_error(fb, "as_destroy with live channels");
	if (a->nr)
		fake_error(fb, "as_destroy with live mappings");
	for (i = 0; i < a->nr; i++)
		a->r[i].mem->nmaps--;
	if (a->prev)
		a->prev->next = a->next;
	else
		fb->ases = a->next;
	if (a->next)
		a->next->prev = a->prev;
	fb->nr_ases--;
	free(a->r);
	free(a);
}

/* First range whose end is above va. */
static u32 fake_as_lower(const struct fake_as *a, u64 va)
{
	u32 lo = 0, hi = a->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (a->r[mid].va + a->r[mid].size <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int fake_as_reserve(struct fake_as *a, u32 more)
{
	struct fake_range *r;
	u32 cap;

	if (a->nr + more <= a->cap)
		return 0;
	cap = a->cap ? a->cap * 2 : 16;
	while (cap < a->nr + more)
		cap *= 2;
	r = realloc(a->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	a->r = r;
	a->cap = cap;
	return 0;
}

/* Removes [va, va + size) from a, trimming or splitting ranges. */
static int fake_as_clear(struct fake_as *a, u64 va, u64 size)
{
	u64 end = va + size;
	u32 i = fake_as_lower(a, va);

	while (i < a->nr && a->r[i].va < end) {
		struct fake_range *r = &a->r[i];
		u64 rend = r->va + r->size;

		if (r->va < va && rend > end) {
			/* Split: keep [r->va, va) and [end, rend). */
			if (fake_as_reserve(a, 1))
				return -ENOMEM;
			r = &a->r[i];
			memmove(&a->r[i + 2], &a->r[i + 1],
				(a->nr - i - 1) * sizeof(*r));
			a->r[i + 1] = *r;
			a->r[i + 1].off += end - r->va;
			a->r[i + 1].va = end;
			a->r[i + 1].size = rend - end;
			r->size = va - r->va;
			r->mem->nmaps++;
			a->nr++;
			return 0;
		}
		if (r->va < va) {
			r->size = va - r->va;
			i++;
		} else if (rend > end) {
			r->off += end - r->va;
			r->size = rend - end;
			r->va = end;
			i++;
		} else {
			r->mem->nmaps--;
			memmove(r, r + 1, (a->nr - i - 1) * sizeof(*r));
			a->nr--;
		}
	}
	return 0;
}

static int fake_op_map(void *b, struct vg_as *as, u64 va, u64 size,
		       struct vg_mem *mem, u64 mem_off)
{
	struct fake_gpu *fb = b;
	struct fake_as *a = (struct fake_as *)as;
	struct fake_mem *m = (struct fake_mem *)mem;
	u32 i;
	int err;

	err = fake_enter(fb, FAKE_OP_MAP, as);
	if (err)
		return err;
	if (!size || va % FAKE_PAGE || size % FAKE_PAGE || mem_off % FAKE_PAGE ||
	    va + size < va || !m || m->fb != fb || mem_off > m->size ||
	    size > m->size - mem_off) {
		fake_error(fb, "map: unaligned, empty or outside its mem");
		return -EINVAL;
	}
	/* Reserve first so a failure changes nothing. */
	err = fake_as_reserve(a, 2);
	if (err)
		return err;
	err = fake_as_clear(a, va, size);
	if (err)
		return err;
	i = fake_as_lower(a, va);
	memmove(&a->r[i + 1], &a->r[i], (a->nr - i) * sizeof(a->r[0]));
	a->r[i].va = va;
	a->r[i].size = size;
	a->r[i].mem = m;
	a->r[i].off = mem_off;
	a->nr++;
	m->nmaps++;
	a->tlb_dirty = true;
	return 0;
}

static void fake_op_unmap(void *b, struct vg_as *as, u64 va, u64 size)
{
	struct fake_gpu *fb = b;
	struct fake_as *a = (struct fake_as *)as;

	fake_enter(fb, FAKE_OP_UNMAP, as);
	if (va % FAKE_PAGE || size % FAKE_PAGE) {
		fake_error(fb, "unmap unaligned");
		return;
	}
	if (fake_as_clear(a, va, size))
		fake_error(fb, "unmap: out of memory splitting a range");
	a->tlb_dirty = true;
}

static void fake_op_tlb_flush(void *b, struct vg_as *as)
{
	struct fake_gpu *fb = b;

	fake_enter(fb, FAKE_OP_TLB_FLUSH, as);
	((struct fake_as *)as)->tlb_dirty = false;
}

struct vg_mem *fake_va_mem(struct vg_as *as, u64 va, u64 *off)
{
	struct fake_as *a = (struct fake_as *)as;
	u32 i = fake_as_lower(a, va);

	if (i >= a->nr || a->r[i].va > va)
		return NULL;
	if (off)
		*off = a->r[i].off + (va - a->r[i].va);
	return (struct vg_mem *)a->r[i].mem;
}

int fake_va_rw(struct fake_gpu *fb, struct vg_as *as, u64 va, void *buf,
	       u64 len, bool write)
{
	u64 done = 0, off;
	struct fake_mem *m;

	(void)fb;
	if (va + len < va)
		return -EFAULT;
	/* Check every byte is mapped before touching any. */
	while (done < len) {
		struct fake_as *a = (struct fake_as *)as;
		u32 i = fake_as_lower(a, va + done);

		if (i >= a->nr || a->r[i].va > va + done)
			return -EFAULT;
		done += min_t(u64, len - done,
			      a->r[i].va + a->r[i].size - (va + done));
	}
	for (done = 0; done < len;) {
		struct fake_as *a = (struct fake_as *)as;
		u32 i = fake_as_lower(a, va + done);
		u64 n = min_t(u64, len - done,
			      a->r[i].va + a->r[i].size - (va + done));

		m = a->r[i].mem;
		off = a->r[i].off + (va + done - a->r[i].va);
		if (write)
			memcpy(m->data + off, (u8 *)buf + done, n);
		else
			memcpy((u8 *)buf + done, m->data + off, n);
		done += n;
	}
	return 0;
}

u32 fake_as_nr_maps(struct vg_as *as)
{
	return ((struct fake_as *)as)->nr;
}

bool fake_as_tlb_dirty(struct vg_as *as)
{
	return ((struct fake_as *)as)->tlb_dirty;
}

/* ---- channels ----------------------------------------------------------- */

static int fake_op_channel_create(void *b, struct vg_as *as,
				  const struct vg_channel_desc *desc,
				  struct vg_bchan **out, void **userd)
{
	struct fake_gpu *fb = b;
	struct fake_chan *c;
	int err;

	err = fake_enter(fb, FAKE_OP_CHAN_CREATE, NULL);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->userd = calloc(1, VGMEM_USERD_SIZE);
	if (!c->userd) {
		free(c);
		return -ENOMEM;
	}
	c->fb = fb;
	c->as = (struct fake_as *)as;
	c->as->nchans++;
	c->desc = *desc;
	c->next = fb->chans;
	if (fb->chans)
		fb->chans->prev = c;
	fb->chans = c;
	fb->nr_chans++;
	*out = (struct vg_bchan *)c;
	*userd = c->userd;
	return 0;
}

static void fake_op_channel_destroy(void *b, struct vg_bchan *ch)
{
	struct fake_gpu *fb = b;
	struct fake_chan *c = (struct fake_chan *)ch;

	fake_enter(fb, FAKE_OP_CHAN_DESTROY, ch);
	c->as->nchans--;
	if (c->prev)
		c->prev->next = c->next;
	else
		fb->chans = c->next;
	if (c->next)
		c->next->prev = c->prev;
	fb->nr_chans--;
	free(c->userd);
	free(c);
}

static bool fake_chan_runnable(const struct fake_chan *c)
{
	return c->work && !c->parked && !c->stopped;
}

static void fake_chan_run(struct fake_gpu *fb, struct fake_chan *c)
{
	fake_work_fn fn = c->work;

	c->work = NULL;
	c->runs++;
	pthread_mutex_lock(&fb->lock);
	fb->count[FAKE_OP_CHAN_RUN]++;
	fb->last_seq[FAKE_OP_CHAN_RUN] = ++fb->seq;
	fb->log[fb->seq % FAKE_LOG_SIZE] = (u8)FAKE_OP_CHAN_RUN;
	pthread_mutex_unlock(&fb->lock);
	fn(c->work_priv, fb, (struct vg_bchan *)c);
}

/*
 * The ring is "drained" at once, so GP_GET catches up with GP_PUT of the
 * real page, as a real GPU would have done by now; pending work runs
 * unless the channel is parked (idle as far as this op is concerned) or
 * stopped.
 */
static int fake_op_channel_idle_wait(void *b, struct vg_bchan *ch,
				     u64 timeout_ns)
{
	struct fake_gpu *fb = b;
	struct fake_chan *c = (struct fake_chan *)ch;
	int err;

	(void)timeout_ns;
	err = fake_enter(fb, FAKE_OP_IDLE_WAIT, ch);
	if (err)
		return err;
	if (fake_chan_runnable(c))
		fake_chan_run(fb, c);
	if (!c->stopped)
		c->userd[VGMEM_USERD_GP_GET / 4] =
			c->userd[VGMEM_USERD_GP_PUT / 4];
	return 0;
}

static int fake_op_channel_stop(void *b, struct vg_bchan *ch, u64 timeout_ns)
{
	struct fake_gpu *fb = b;
	struct fake_chan *c = (struct fake_chan *)ch;
	int err;

	(void)timeout_ns;
	err = fake_enter(fb, FAKE_OP_CHAN_STOP, ch);
	if (err)
		return err;
	if (c->stopped)
		fake_error(fb, "channel_stop of a stopped channel");
	/*
	 * A preemption. The fake GPU is infinitely fast: by the time the
	 * stop takes the channel off it, it has run what the real page
	 * gave it (GP_GET caught up with GP_PUT) and its pending work, as
	 * the idle wait would have, unless it is parked.
	 */
	if (fake_chan_runnable(c))
		fake_chan_run(fb, c);
	c->userd[VGMEM_USERD_GP_GET / 4] = c->userd[VGMEM_USERD_GP_PUT / 4];
	c->stopped = true;
	return 0;
}

static void fake_op_channel_start(void *b, struct vg_bchan *ch)
{
	struct fake_gpu *fb = b;
	struct fake_chan *c = (struct fake_chan *)ch;

	fake_enter(fb, FAKE_OP_CHAN_START, ch);
	if (!c->stopped)
		fake_error(fb, "channel_start of a running channel");
	c->stopped = false;
}

void fake_bchan_set_work(struct vg_bchan *ch, fake_work_fn fn, void *priv)
{
	struct fake_chan *c = (struct fake_chan *)ch;

	c->work = fn;
	c->work_priv = priv;
}

void fake_bchan_park(struct vg_bchan *ch)
{
	((struct fake_chan *)ch)->parked = true;
}

void fake_bchan_unpark(struct vg_bchan *ch)
{
	((struct fake_chan *)ch)->parked = false;
}

bool fake_bchan_stopped(struct vg_bchan *ch)
{
	return ((struct fake_chan *)ch)->stopped;
}

u64 fake_bchan_runs(struct vg_bchan *ch)
{
	return ((struct fake_chan *)ch)->runs;
}

u32 fake_engine_run(struct fake_gpu *fb)
{
	struct fake_chan *c;
	u32 n = 0;

	for (c = fb->chans; c; c = c->next) {
		if (fake_chan_runnable(c)) {
			fake_chan_run(fb, c);
			n++;
		}
	}
	return n;
}

u32 *fake_bchan_userd(struct vg_bchan *ch)
{
	return ((struct fake_chan *)ch)->userd;
}

struct vg_as *fake_bchan_as(struct vg_bchan *ch)
{
	return (struct vg_as *)((struct fake_chan *)ch)->as;
}

u32 fake_nr_chans(struct fake_gpu *fb)
{
	return (u32)fb->nr_chans;
}

struct vg_bchan *fake_last_chan(struct fake_gpu *fb)
{
	return (struct vg_bchan *)fb->chans;
}

/* ---- access sampling ---------------------------------------------------- */

static u64 fake_op_sample_access(void *b, struct vg_mem *mem)
{
	struct fake_gpu *fb = b;
	struct fake_mem *m = (struct fake_mem *)mem;
	u64 n;

	fake_enter(fb, FAKE_OP_SAMPLE_ACCESS, mem);
	n = m->access;
	m->access = 0;
	return n;
}

/* The only table: tests that need an op missing or replaced copy it. */
const struct vg_gpu_ops fake_ops = {
	.name = "fake",
	.vram_size = fake_op_vram_size,
	.mem_alloc = fake_op_mem_alloc,
	.mem_free = fake_op_mem_free,
	.copy_submit = fake_op_copy_submit,
	.copy_wait = fake_op_copy_wait,
	.as_create = fake_op_as_create,
	.as_destroy = fake_op_as_destroy,
	.map = fake_op_map,
	.unmap = fake_op_unmap,
	.tlb_flush = fake_op_tlb_flush,
	.channel_create = fake_op_channel_create,
	.channel_destroy = fake_op_channel_destroy,
	.channel_idle_wait = fake_op_channel_idle_wait,
	.channel_stop = fake_op_channel_stop,
	.channel_start = fake_op_channel_start,
	.sample_access = fake_op_sample_access,
};

/* ---- faults and descriptors of a channel --------------------------------- */

void fake_bchan_fault(struct vg_bchan *ch, u32 error, u64 addr)
{
	struct fake_chan *c = (struct fake_chan *)ch;

	if (c->desc.fault_cb)
		c->desc.fault_cb(c->desc.fault_priv, error, addr);
}

const struct vg_channel_desc *fake_bchan_desc(struct vg_bchan *ch)
{
	return &((struct fake_chan *)ch)->desc;
}
