// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The null GPU driver (see null_gpu.h). Ops are called under the core's
 * gpu->lock, except that channel USERD pages are read by the core on its
 * own; a mutex keeps the counters right regardless.
 */
#include "null_gpu.h"

#include <pthread.h>
#include <stdlib.h>

#include <uapi/vgmem.h>

struct null_gpu {
	pthread_mutex_t lock;
	u64 vram_size;
	struct null_counts c;
	u64 next_fence;
};

struct vg_mem {
	enum vg_loc loc;
	u64 size;
};

struct vg_as {
	u64 mapped;	/* bytes mapped now */
};

struct vg_bchan {
	void *userd;
};

struct null_gpu *null_create(u64 vram_size)
{
	struct null_gpu *nb = calloc(1, sizeof(*nb));

	if (!nb)
		return NULL;
	pthread_mutex_init(&nb->lock, NULL);
	nb->vram_size = vram_size;
	return nb;
}

void null_destroy(struct null_gpu *nb)
{
	if (!nb)
		return;
	pthread_mutex_destroy(&nb->lock);
	free(nb);
}

void null_get_counts(struct null_gpu *nb, struct null_counts *out)
{
	pthread_mutex_lock(&nb->lock);
	*out = nb->c;
	pthread_mutex_unlock(&nb->lock);
}

static u64 n_vram_size(void *b)
{
	return ((struct null_gpu *)b)->vram_size;
}

static int n_mem_alloc(void *b, enum vg_loc loc, u64 size, struct vg_mem **out)
{
	struct null_gpu *nb = b;
	struct vg_mem *m;

	if (!size || (loc != VG_LOC_VRAM && loc != VG_LOC_HOST))
		return -EINVAL;
	pthread_mutex_lock(&nb->lock);
	if (loc == VG_LOC_VRAM && nb->c.vram_used + size > nb->vram_size) {
		pthread_mutex_unlock(&nb->lock);
		return -ENOSPC;
	}
	m = malloc(sizeof(*m));
	if (!m) {
		pthread_mutex_unlock(&nb->lock);
		return -ENOMEM;
	}
	m->loc = loc;
	m->size = size;
	if (loc == VG_LOC_VRAM)
		nb->c.vram_used += size;
	else
		nb->c.host_used += size;
	nb->c.mems++;
	pthread_mutex_unlock(&nb->lock);
	*out = m;
	return 0;
}

static void n_mem_free(void *b, struct vg_mem *m)
{
	struct null_gpu *nb = b;

	if (!m)
		return;
	pthread_mutex_lock(&nb->lock);
	if (m->loc == VG_LOC_VRAM)
		nb->c.vram_used -= m->size;
	else
		nb->c.host_used -= m->size;
	nb->c.mems--;
	pthread_mutex_unlock(&nb->lock);
	free(m);
}

static int n_copy_submit(void *b, const struct vg_copy *copies, unsigned int n,
			 u64 *fence)
{
	struct null_gpu *nb = b;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!copies[i].src || !copies[i].dst ||
		    copies[i].src_off + copies[i].len > copies[i].src->size ||
		    copies[i].dst_off + copies[i].len > copies[i].dst->size)
			return -EINVAL;
	pthread_mutex_lock(&nb->lock);
	nb->c.copies += n;
	*fence = ++nb->next_fence;
	pthread_mutex_unlock(&nb->lock);
	return 0;
}

static int n_copy_wait(void *b, u64 fence, u64 *device_ns)
{
	(void)b;
	(void)fence;
	if (device_ns)
		*device_ns = 0;
	return 0;
}

static int n_as_create(void *b, struct vg_as **out)
{
	struct vg_as *as = calloc(1, sizeof(*as));

	(void)b;
	if (!as)
		return -ENOMEM;
	*out = as;
	return 0;
}

static void n_as_destroy(void *b, struct vg_as *as)
{
	(void)b;
	free(as);
}

static int n_map(void *b, struct vg_as *as, u64 va, u64 size,
		 struct vg_mem *mem, u64 mem_off)
{
	struct null_gpu *nb = b;

	if ((va | size | mem_off) & 4095 || !size || mem_off + size > mem->size)
		return -EINVAL;
	as->mapped += size;
	pthread_mutex_lock(&nb->lock);
	nb->c.maps++;
	pthread_mutex_unlock(&nb->lock);
	return 0;
}

static void n_unmap(void *b, struct vg_as *as, u64 va, u64 size)
{
	struct null_gpu *nb = b;

	(void)va;
	as->mapped -= size <= as->mapped ? size : as->mapped;
	pthread_mutex_lock(&nb->lock);
	nb->c.unmaps++;
	pthread_mutex_unlock(&nb->lock);
}

static void n_tlb_flush(void *b, struct vg_as *as)
{
	struct null_gpu *nb = b;

	(void)as;
	pthread_mutex_lock(&nb->lock);
	nb->c.flushes++;
	pthread_mutex_unlock(&nb->lock);
}

static int n_channel_create(void *b, struct vg_as *as,
			    const struct vg_channel_desc *desc,
			    struct vg_bchan **out, void **userd)
{
	struct vg_bchan *ch;

	(void)b;
	(void)as;
	(void)desc;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->userd = calloc(1, VGMEM_USERD_SIZE);
	if (!ch->userd) {
		free(ch);
		return -ENOMEM;
	}
	*out = ch;
	*userd = ch->userd;
	return 0;
}

static void n_channel_destroy(void *b, struct vg_bchan *ch)
{
	(void)b;
	free(ch->userd);
	free(ch);
}

static int n_channel_idle_wait(void *b, struct vg_bchan *ch, u64 timeout_ns)
{
	(void)b;
	(void)ch;
	(void)timeout_ns;
	return 0;	/* no engine: nothing is ever in flight */
}

/* No engine runs anything, so stopping and starting a channel is immediate. */
static int n_channel_stop(void *b, struct vg_bchan *ch, u64 timeout_ns)
{
	(void)b;
	(void)ch;
	(void)timeout_ns;
	return 0;
}

static void n_channel_start(void *b, struct vg_bchan *ch)
{
	(void)b;
	(void)ch;
}

const struct vg_gpu_ops null_ops = {
	.name = "null",
	.vram_size = n_vram_size,
	.mem_alloc = n_mem_alloc,
	.mem_free = n_mem_free,
	.copy_submit = n_copy_submit,
	.copy_wait = n_copy_wait,
	.as_create = n_as_create,
	.as_destroy = n_as_destroy,
	.map = n_map,
	.unmap = n_unmap,
	.tlb_flush = n_tlb_flush,
	.channel_create = n_channel_create,
	.channel_destroy = n_channel_destroy,
	.channel_idle_wait = n_channel_idle_wait,
	.channel_stop = n_channel_stop,
	.channel_start = n_channel_start,
	.sample_access = NULL,
};
