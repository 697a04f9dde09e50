// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Guest RAM of an in-process guest: one zeroed region, guest-physical
 * address = offset. The GPU reaches it through bounds-checked accessors (as
 * the kernel's vfio_dma_rw would); the guest library allocates its rings,
 * pushbuffers and staging areas from it with the shared first-fit
 * allocator (lib/util/range_alloc.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "host_priv.h"

static int ram_check(struct vg_host_guest *g, u64 gpa, size_t len)
{
	if (len > g->ram_size || gpa > g->ram_size - len)
		return -EFAULT;
	return 0;
}

static int ram_read(void *priv, u64 gpa, void *buf, size_t len)
{
	struct vg_host_guest *g = priv;

	if (ram_check(g, gpa, len))
		return -EFAULT;
	memcpy(buf, g->ram + gpa, len);
	return 0;
}

static int ram_write(void *priv, u64 gpa, const void *buf, size_t len)
{
	struct vg_host_guest *g = priv;

	if (ram_check(g, gpa, len))
		return -EFAULT;
	memcpy(g->ram + gpa, buf, len);
	return 0;
}

const struct vg_guest_mem vg_guest_ram_ops = {
	.read = ram_read,
	.write = ram_write,
};

int vg_guest_ram_init(struct vg_host_guest *g, u64 size)
{
	int ret;

	if (!size)
		size = VG_HOST_GUEST_RAM_DEFAULT;
	if (size < 2 * VG_HOST_PAGE || size > (1ull << 40))
		return -EINVAL;
	size = ALIGN(size, VG_HOST_PAGE);
	g->ram = calloc(1, size);
	if (!g->ram)
		return -ENOMEM;
	/* Page 0 is never handed out, so guest-physical 0 is never valid data. */
	ret = vg_range_init(&g->ram_free, VG_HOST_PAGE, size - VG_HOST_PAGE,
			    VG_HOST_PAGE);
	if (ret) {
		free(g->ram);
		g->ram = NULL;
		return ret;
	}
	g->ram_size = size;
	pthread_mutex_init(&g->ram_lock, NULL);
	return 0;
}

void vg_guest_ram_fini(struct vg_host_guest *g)
{
	vg_range_fini(&g->ram_free);
	pthread_mutex_destroy(&g->ram_lock);
	free(g->ram);
	g->ram = NULL;
}

int vg_guest_ram_alloc(struct vg_host_guest *g, u64 size, u64 *gpa)
{
	uint64_t a;
	int ret;

	if (!size || size > g->ram_size)
		return -EINVAL;
	pthread_mutex_lock(&g->ram_lock);
	ret = vg_range_alloc(&g->ram_free, size, &a);
	pthread_mutex_unlock(&g->ram_lock);
	/*
	 * The allocator does not hold page 0, so it refuses a request for all
	 * of the RAM as too large: there is simply no room for it.
	 */
	if (ret == -EINVAL)
		return -ENOMEM;
	if (ret)
		return ret;
	memset(g->ram + a, 0, ALIGN(size, VG_HOST_PAGE));
	*gpa = a;
	return 0;
}

void vg_guest_ram_free(struct vg_host_guest *g, u64 gpa, u64 size)
{
	int ret;

	size = ALIGN(size, VG_HOST_PAGE);
	if (WARN_ON(ram_check(g, gpa, size) || !IS_ALIGNED(gpa, VG_HOST_PAGE)))
		return;
	pthread_mutex_lock(&g->ram_lock);
	ret = vg_range_free(&g->ram_free, gpa, size);
	pthread_mutex_unlock(&g->ram_lock);
	/*
	 * Losing a free range (-ENOMEM) only leaks guest RAM until the guest
	 * goes; anything else is a double or bogus free, refused whole.
	 */
	WARN_ON(ret && ret != -ENOMEM);
}
