// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace host's file store (lrc_store.h): share roots and files
 * beneath them through openat2(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include "core/lrc/lrc.h"
#include "lrc_store.h"

int vg_ustore_root_open(const char *dir, int *root_fd)
{
	int fd;

	if (!dir || !*dir || !root_fd)
		return -EINVAL;
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*root_fd = fd;
	return 0;
}

void vg_ustore_root_close(int root_fd)
{
	if (root_fd >= 0)
		close(root_fd);
}

/*
 * What openat2 says when a lookup would leave the root (EXDEV), meets a
 * symlink (ELOOP) or a magic link (ELOOP, EXDEV): the guest reaching for
 * what is not its share, -EACCES. What names no regular file (EISDIR for a
 * writable directory, ENXIO for a FIFO or a device) is -EINVAL, as a
 * directory opened read-only is after the fstat.
 */
static int vg_ustore_open_err(int err)
{
	switch (err) {
	case EXDEV:
	case ELOOP:
	case EPERM:
	case EACCES:
	case EROFS:
	case ETXTBSY:
		return -EACCES;
	case EISDIR:
	case ENXIO:
		return -EINVAL;
	default:
		return -err;
	}
}

int vg_ustore_open(int root_fd, const char *relpath, bool writable,
		   struct vg_ustore_file *out)
{
	struct open_how how;
	struct stat st;
	long fd;
	int ret;

	if (root_fd < 0 || !relpath || !out)
		return -EINVAL;
	if (!*relpath)
		return -ENOENT;
	/* RESOLVE_BENEATH refuses it too; say so without a syscall. */
	if (relpath[0] == '/')
		return -EACCES;
	memset(&how, 0, sizeof(how));
	how.flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY |
		    O_NONBLOCK;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		      RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, root_fd, relpath, &how, sizeof(how));
	if (fd < 0)
		return vg_ustore_open_err(errno);
	if (fstat((int)fd, &st)) {
		ret = -errno;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto err_close;
	}
	if (writable && !(st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH))) {
		ret = -EACCES;
		goto err_close;
	}
	/* Back to blocking I/O: O_NONBLOCK only guarded the open itself. */
	if (fcntl((int)fd, F_SETFL, 0)) {
		ret = -errno;
		goto err_close;
	}
	out->fd = (int)fd;
	out->writable = writable;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return 0;

err_close:
	close((int)fd);
	return ret;
}

void vg_ustore_close(struct vg_ustore_file *f)
{
	if (f && f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
	}
}

int vg_ustore_read(struct vg_ustore_file *f, uint64_t off, void *buf,
		   size_t len)
{
	char *p = buf;
	ssize_t n;

	if (!f || f->fd < 0 || (!buf && len) || off + len < off)
		return -EINVAL;
	while (len) {
		n = pread(f->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n) {		/* end of file: the rest reads as zero */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int vg_ustore_write(struct vg_ustore_file *f, uint64_t off, const void *buf,
		    size_t len)
{
	const char *p = buf;
	ssize_t n;

	if (!f || f->fd < 0 || (!buf && len) || off + len < off)
		return -EINVAL;
	if (!f->writable)
		return -EBADF;
	while (len) {
		n = pwrite(f->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int vg_ustore_fsync(struct vg_ustore_file *f)
{
	if (!f || f->fd < 0)
		return -EINVAL;
	return fsync(f->fd) ? -errno : 0;
}

static uint64_t vg_ustore_racy_seq;

/*
 * Racily clean (git's term): the file changed within two ticks of the
 * clock the kernel stamps files with. Without multigrain timestamps
 * (Linux < 6.13, or a filesystem without them) a write in the same tick
 * after this statx would leave mtime and ctime as they are, and the cache
 * would never see it. Such a counter is reported as a value that never
 * repeats, so the cache compares the pages at its next look; once the
 * file is two ticks old the real counter is stable again. With multigrain
 * timestamps (ext4, xfs, btrfs, tmpfs on 6.13+) this only costs a compare
 * right after a write.
 */
static bool vg_ustore_racy(const struct statx_timestamp *m,
			   const struct statx_timestamp *c)
{
	struct timespec now, res;
	int64_t nm, nc, nn, tick;

	if (clock_gettime(CLOCK_REALTIME_COARSE, &now) ||
	    clock_getres(CLOCK_REALTIME_COARSE, &res))
		return true;
	nm = m->tv_sec * 1000000000ll + m->tv_nsec;
	nc = c->tv_sec * 1000000000ll + c->tv_nsec;
	nn = now.tv_sec * 1000000000ll + now.tv_nsec;
	tick = res.tv_sec * 1000000000ll + res.tv_nsec;
	return nn - (nm > nc ? nm : nc) < 2 * tick;
}

int vg_ustore_getattr(struct vg_ustore_file *f, uint64_t *size,
		      uint64_t *change)
{
	struct statx stx;

	if (!f || f->fd < 0 || !size || !change)
		return -EINVAL;
	if (statx(f->fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT,
		  STATX_SIZE | STATX_MTIME | STATX_CTIME, &stx))
		return -errno;
	*size = stx.stx_size;
	*change = (uint64_t)stx.stx_mtime.tv_sec * 1000000000ull +
		  stx.stx_mtime.tv_nsec +
		  (uint64_t)stx.stx_ctime.tv_sec * 1000000000ull +
		  stx.stx_ctime.tv_nsec;
	if (vg_ustore_racy(&stx.stx_mtime, &stx.stx_ctime))
		*change = (1ull << 63) |
			  __atomic_add_fetch(&vg_ustore_racy_seq, 1,
					     __ATOMIC_RELAXED);
	return 0;
}

/* ---- as the LRC cache's store (core/lrc/lrc.h) --------------------------- */

static int ops_root_open(void *priv, const char *path, void **root)
{
	int fd = -1, ret;

	(void)priv;
	ret = vg_ustore_root_open(path, &fd);
	if (ret)
		return ret;
	*root = (void *)(intptr_t)fd;
	return 0;
}

static void ops_root_close(void *priv, void *root)
{
	(void)priv;
	vg_ustore_root_close((int)(intptr_t)root);
}

static int ops_open_beneath(void *priv, void *root, const char *relpath,
			    bool writable, void **fh, struct vg_lrc_file_id *id)
{
	struct vg_ustore_file *f;
	int ret;

	(void)priv;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = vg_ustore_open((int)(intptr_t)root, relpath, writable, f);
	if (ret) {
		free(f);
		return ret;
	}
	id->dev = f->dev;
	id->ino = f->ino;
	*fh = f;
	return 0;
}

static int ops_read(void *priv, void *fh, u64 off, void *buf, u64 len)
{
	(void)priv;
	return vg_ustore_read(fh, off, buf, len);
}

static int ops_write(void *priv, void *fh, u64 off, const void *buf, u64 len)
{
	(void)priv;
	return vg_ustore_write(fh, off, buf, len);
}

static int ops_fsync(void *priv, void *fh)
{
	(void)priv;
	return vg_ustore_fsync(fh);
}

static int ops_getattr(void *priv, void *fh, struct vg_lrc_attr *attr)
{
	uint64_t size, change;
	int ret;

	(void)priv;
	ret = vg_ustore_getattr(fh, &size, &change);
	if (ret)
		return ret;
	attr->size = size;
	attr->change = change;
	return 0;
}

static void ops_close(void *priv, void *fh)
{
	(void)priv;
	vg_ustore_close(fh);
	free(fh);
}

const struct vg_lrc_store_ops vg_ustore_ops = {
	.root_open = ops_root_open,
	.root_close = ops_root_close,
	.open_beneath = ops_open_beneath,
	.read = ops_read,
	.write = ops_write,
	.fsync = ops_fsync,
	.getattr = ops_getattr,
	.close = ops_close,
};
