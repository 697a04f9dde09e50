// SPDX-License-Identifier: MIT
/*
 * libvgmem's PCI transport: a vGPU inside a real VM, through the guest
 * kernel driver's character device /dev/vgmemN (include/uapi/vgmem_guest.h).
 * The driver runs the control queue, owns the interrupt and gives us DMA
 * buffers; we map each channel's USERD page once the channel exists, so a
 * submission is a store into that page, as with VFIO.
 *
 *  - ctrl: VGMEM_GIOC_CTRL. After a CHAN_CREATE the device accepted, the
 *    channel's USERD page is mapped; before a CHAN_DESTROY is sent, it is
 *    unmapped (the driver refuses the mapping of a channel it no longer
 *    has).
 *  - gmem_alloc/free: VGMEM_GIOC_DMA_ALLOC + mmap, munmap + DMA_FREE. The
 *    driver zeroes new buffers, so the GPU never reads old guest data.
 *
 * Errors of the transport itself (the driver refusing an argument, the
 * device unplugged) come back as the command's status, with a message in
 * vgmem_pci_error(): to the library a refused command is a failed command.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "vgmem_priv.h"
#include "pci_priv.h"

#define PCI_SYSFS_CLASS		"/sys/class/" VGMEM_GUEST_CLASS

/* One DMA buffer: what gmem_free needs to find its handle again. */
struct pci_dma {
	struct pci_dma *next;
	void *cpu;
	size_t size;
	uint32_t handle;
};

struct pci_dev {
	int fd;
	struct vgmem_guest_query q;
	pthread_mutex_t lock;		/* userd[], dma list */
	volatile uint8_t *userd[VGMEM_MAX_CHANNELS];	/* NULL: not ours */
	struct pci_dma *dma;
};

static const struct vgmem_transport_ops pci_ops;
static __thread char pci_err[256];

void vgmem_pci_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pci_err, sizeof(pci_err), fmt, ap);
	va_end(ap);
}

const char *vgmem_pci_error(void)
{
	return pci_err[0] ? pci_err : "no error";
}

int vgmem_pci_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

static void userd_unmap(struct pci_dev *p, uint32_t id)
{
	if (id < VGMEM_MAX_CHANNELS && p->userd[id]) {
		munmap((void *)p->userd[id], VGMEM_USERD_SIZE);
		p->userd[id] = NULL;
	}
}

static int p_ctrl(void *t, struct vgmem_ctrl *cmd)
{
	struct pci_dev *p = t;
	uint32_t op = cmd->op, id;
	void *m;
	int ret;

	/* The driver maps files from descriptors only: open it, then map. */
	if (op == VGMEM_CTRL_FILE_MAP) {
		vgmem_pci_map_path(p->fd, cmd);
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	if (op == VGMEM_CTRL_CHAN_DESTROY)
		userd_unmap(p, cmd->chan.chan_id);
	ret = vgmem_pci_ioctl(p->fd, VGMEM_GIOC_CTRL, cmd);
	if (ret) {
		vgmem_pci_set_error("%s: control command %u: %s", VGMEM_GUEST_DEV_PREFIX,
			  op, strerror(-ret));
		cmd->status = ret;
		ret = 0;
		goto out_unlock;
	}
	if (op != VGMEM_CTRL_CHAN_CREATE || cmd->status)
		goto out_unlock;
	id = cmd->chan.chan_id;
	m = id < VGMEM_MAX_CHANNELS ?
	    mmap(NULL, VGMEM_USERD_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 p->fd, (off_t)VGMEM_GUEST_MMAP_USERD(id)) : MAP_FAILED;
	if (m == MAP_FAILED) {
		struct vgmem_ctrl undo;

		/* A channel we cannot submit to is of no use: give it back. */
		ret = id < VGMEM_MAX_CHANNELS ? -errno : -ERANGE;
		vgmem_pci_set_error("mapping the USERD page of channel %u: %s", id, strerror(-ret));
		memset(&undo, 0, sizeof(undo));
		undo.op = VGMEM_CTRL_CHAN_DESTROY;
		undo.chan.chan_id = id;
		vgmem_pci_ioctl(p->fd, VGMEM_GIOC_CTRL, &undo);
		cmd->status = ret;
		cmd->chan.chan_id = 0;
		ret = 0;
		goto out_unlock;
	}
	p->userd[id] = m;
out_unlock:
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/*
 * A channel we have no page of reads as zeroes with a KILLED error, as in
 * the other transports, so a waiting caller gives up.
 */
static uint32_t p_userd_read(void *t, uint32_t chan, uint32_t off)
{
	struct pci_dev *p = t;
	volatile uint8_t *page;

	if (chan >= VGMEM_MAX_CHANNELS || off > VGMEM_USERD_SIZE - 4 || (off & 3))
		return off == VGMEM_USERD_ERROR ? VGMEM_CHAN_ERR_KILLED : 0;
	page = __atomic_load_n(&p->userd[chan], __ATOMIC_ACQUIRE);
	if (!page)
		return off == VGMEM_USERD_ERROR ? VGMEM_CHAN_ERR_KILLED : 0;
	return *(volatile uint32_t *)(page + off);
}

static void p_userd_write(void *t, uint32_t chan, uint32_t off, uint32_t val)
{
	struct pci_dev *p = t;
	volatile uint8_t *page;

	if (chan >= VGMEM_MAX_CHANNELS || off > VGMEM_USERD_SIZE - 4 || (off & 3))
		return;
	page = __atomic_load_n(&p->userd[chan], __ATOMIC_ACQUIRE);
	if (page)
		*(volatile uint32_t *)(page + off) = val;
}

static int p_gmem_alloc(void *t, size_t size, void **cpu, uint64_t *gpa)
{
	struct pci_dev *p = t;
	struct vgmem_guest_dma_free fr = { 0 };
	struct vgmem_guest_dma d = { 0 };
	struct pci_dma *e;
	void *m;
	int ret;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	d.size = (size + VGMEM_PAGE_SIZE - 1) & ~(VGMEM_PAGE_SIZE - 1);
	ret = vgmem_pci_ioctl(p->fd, VGMEM_GIOC_DMA_ALLOC, &d);
	if (ret) {
		vgmem_pci_set_error("DMA buffer of %llu bytes: %s", (unsigned long long)d.size,
			  strerror(-ret));
		free(e);
		return ret;
	}
	m = mmap(NULL, d.size, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd,
		 (off_t)d.mmap_offset);
	if (m == MAP_FAILED) {
		ret = -errno;
		vgmem_pci_set_error("mapping a DMA buffer of %llu bytes: %s",
			  (unsigned long long)d.size, strerror(-ret));
		fr.handle = d.handle;
		vgmem_pci_ioctl(p->fd, VGMEM_GIOC_DMA_FREE, &fr);
		free(e);
		return ret;
	}
	e->cpu = m;
	e->size = d.size;
	e->handle = d.handle;
	pthread_mutex_lock(&p->lock);
	e->next = p->dma;
	p->dma = e;
	pthread_mutex_unlock(&p->lock);
	*cpu = m;
	*gpa = d.gpa;
	return 0;
}

static void p_gmem_free(void *t, void *cpu, size_t size)
{
	struct pci_dev *p = t;
	struct vgmem_guest_dma_free fr = { 0 };
	struct pci_dma **pp, *e = NULL;

	(void)size;
	pthread_mutex_lock(&p->lock);
	for (pp = &p->dma; *pp; pp = &(*pp)->next) {
		if ((*pp)->cpu == cpu) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (!e)
		return;
	munmap(e->cpu, e->size);
	fr.handle = e->handle;
	/* The driver keeps the memory until the GPU can no longer read it. */
	vgmem_pci_ioctl(p->fd, VGMEM_GIOC_DMA_FREE, &fr);
	free(e);
}

static int p_map_fd(void *t, int fd, uint64_t offset, uint64_t length,
		    uint32_t flags, uint64_t *va)
{
	struct pci_dev *p = t;

	return vgmem_pci_map_fd(p->fd, fd, offset, length, flags, va);
}

static const struct vgmem_transport_ops pci_ops = {
	.ctrl = p_ctrl,
	.userd_read = p_userd_read,
	.userd_write = p_userd_write,
	.gmem_alloc = p_gmem_alloc,
	.gmem_free = p_gmem_free,
	.map_fd = p_map_fd,
};

static struct pci_dev *to_pci(struct vgmem_dev *dev)
{
	return dev && dev->ops == &pci_ops ? dev->t : NULL;
}

/* Everything of p; the driver frees what the file owns at close anyway. */
static void pci_release(struct pci_dev *p)
{
	struct pci_dma *e;
	uint32_t i;

	for (i = 0; i < VGMEM_MAX_CHANNELS; i++)
		userd_unmap(p, i);
	while ((e = p->dma)) {
		p->dma = e->next;
		munmap(e->cpu, e->size);
		free(e);
	}
	if (p->fd >= 0)
		close(p->fd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int vgmem_pci_find(unsigned int index, char *path, size_t len)
{
	struct dirent **names;
	unsigned int found = 0;
	int n, i, ret = -ENODEV;

	if (!path || !len)
		return -EINVAL;
	/* /sys/class/vgmem_guest/vgmemN, in N order (versionsort: 2 < 10). */
	n = scandir(PCI_SYSFS_CLASS, &names, NULL, versionsort);
	if (n < 0) {
		vgmem_pci_set_error("%s: %s (is the guest driver vgmem_guest loaded?)",
			  PCI_SYSFS_CLASS, strerror(errno));
		return -ENODEV;
	}
	for (i = 0; i < n; i++) {
		const char *d = names[i]->d_name;

		if (ret == -ENODEV &&
		    !strncmp(d, VGMEM_GUEST_DEV_PREFIX, strlen(VGMEM_GUEST_DEV_PREFIX)) &&
		    found++ == index) {
			ret = snprintf(path, len, "/dev/%s", d) < (int)len ? 0 : -ENAMETOOLONG;
		}
		free(names[i]);
	}
	free(names);
	if (ret == -ENODEV)
		vgmem_pci_set_error("no vGPU number %u in %s (%u found)", index, PCI_SYSFS_CLASS, found);
	return ret;
}

int vgmem_open_pci(const char *path, struct vgmem_dev **out)
{
	char first[64];
	struct pci_dev *p;
	int ret;

	if (!out)
		return -EINVAL;
	if (!path) {
		ret = vgmem_pci_find(0, first, sizeof(first));
		if (ret)
			return ret;
		path = first;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->fd = open(path, O_RDWR | O_CLOEXEC);
	if (p->fd < 0) {
		ret = -errno;
		vgmem_pci_set_error("%s: %s", path, strerror(-ret));
		goto err_release;
	}
	ret = vgmem_pci_ioctl(p->fd, VGMEM_GIOC_QUERY, &p->q);
	if (ret) {
		vgmem_pci_set_error("%s: QUERY: %s (not a vgmem guest device?)", path, strerror(-ret));
		goto err_release;
	}
	if (p->q.driver_version != VGMEM_GUEST_DRIVER_VERSION ||
	    p->q.abi_version != VGMEM_ABI_VERSION) {
		vgmem_pci_set_error("%s: driver interface %u and device ABI %u; this library speaks %u and %u",
			  path, p->q.driver_version, p->q.abi_version,
			  VGMEM_GUEST_DRIVER_VERSION, VGMEM_ABI_VERSION);
		ret = -EPROTO;
		goto err_release;
	}
	vgmem_pci_set_error("%s", "");
	ret = vgmem_open(&pci_ops, p, out);
	if (ret) {
		if (!pci_err[0])
			vgmem_pci_set_error("%s: QUERY through the driver: %s", path, strerror(-ret));
		goto err_release;
	}
	return 0;

err_release:
	pci_release(p);
	return ret;
}

void vgmem_close_pci(struct vgmem_dev *dev)
{
	struct pci_dev *p = to_pci(dev);

	if (!dev)
		return;
	/* Channels first, through the driver, while the file is open. */
	vgmem_close(dev);
	if (p)
		pci_release(p);
}

int vgmem_pci_get_query(struct vgmem_dev *dev, struct vgmem_guest_query *q)
{
	struct pci_dev *p = to_pci(dev);

	if (!dev || !q)
		return -EINVAL;
	if (!p)
		return -ENODEV;
	*q = p->q;
	return 0;
}

int vgmem_pci_fd(struct vgmem_dev *dev)
{
	struct pci_dev *p = to_pci(dev);

	if (!dev)
		return -EINVAL;
	return p ? p->fd : -ENODEV;
}

/* The device and a bind request for TAG, checked as the driver would. */
static int share_req(struct vgmem_dev *dev, const char *tag, struct pci_dev **p,
		     struct vgmem_guest_share_bind *b)
{
	if (!dev || !tag)
		return -EINVAL;
	*p = to_pci(dev);
	if (!*p)
		return -ENODEV;
	if (!vgmem_share_tag_ok(tag)) {
		vgmem_pci_set_error("'%s' is not a virtio-fs tag a share can have", tag);
		return -EINVAL;
	}
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	strncpy(b->tag, tag, sizeof(b->tag) - 1);
	return 0;
}

int vgmem_pci_share_bind(struct vgmem_dev *dev, const char *tag, const char *dir)
{
	struct vgmem_guest_share_bind b;
	struct pci_dev *p;
	int ret;

	ret = dir ? share_req(dev, tag, &p, &b) : -EINVAL;
	if (ret)
		return ret;
	b.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b.fd < 0) {
		ret = -errno;
		vgmem_pci_set_error("%s: %s", dir, strerror(-ret));
		return ret;
	}
	ret = vgmem_pci_ioctl(p->fd, VGMEM_GIOC_SHARE_BIND, &b);
	close(b.fd);
	if (ret)
		vgmem_pci_set_error("binding %s to tag %s: %s%s", dir, tag, strerror(-ret),
				    ret == -EINVAL ? " (not the root of a virtio-fs mount?)" :
				    ret == -ENOENT ? " (no share of this vGPU has the tag)" :
				    ret == -EEXIST ? " (the tag or the mount is bound already)" :
				    ret == -EPERM ? " (root only)" : "");
	return ret;
}

int vgmem_pci_share_unbind(struct vgmem_dev *dev, const char *tag)
{
	struct vgmem_guest_share_bind b;
	struct pci_dev *p;
	int ret;

	ret = share_req(dev, tag, &p, &b);
	if (ret)
		return ret;
	ret = vgmem_pci_ioctl(p->fd, VGMEM_GIOC_SHARE_UNBIND, &b);
	if (ret)
		vgmem_pci_set_error("unbinding tag %s: %s", tag, strerror(-ret));
	return ret;
}
