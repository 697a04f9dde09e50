/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The userspace host's file store for the LRC file cache: share roots and
 * the files beneath them, on the host's own filesystem through openat2(2).
 *
 * Containment is the kernel's: a root is an O_PATH directory descriptor and
 * every file is opened relative to it with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, so neither "..", nor an
 * absolute path, nor any symlink (inside the share or pointing out of it),
 * nor a /proc magic link can leave the share, and a rename racing with the
 * lookup cannot either. Every such refusal is -EACCES. Only regular files
 * are served: a directory, FIFO or device under the share is -EINVAL (and
 * is opened O_NONBLOCK, so a FIFO cannot hang the lookup). A file whose mode has no
 * write bit at all is read-only for guests even though the host (root)
 * could write it: a writable open of it is -EACCES.
 *
 * All functions return 0 or a negative errno.
 */
#ifndef VGMEM_USER_LRC_STORE_H
#define VGMEM_USER_LRC_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vg_ustore_file {
	int fd;
	bool writable;
	uint64_t dev, ino;	/* the file's identity (one cache entry per file) */
};

/* An O_PATH|O_DIRECTORY descriptor of dir (absolute or relative to cwd). */
int vg_ustore_root_open(const char *dir, int *root_fd);
void vg_ustore_root_close(int root_fd);
/* Open relpath beneath root_fd (see above for what is refused). */
int vg_ustore_open(int root_fd, const char *relpath, bool writable,
		   struct vg_ustore_file *out);
void vg_ustore_close(struct vg_ustore_file *f);
/* len bytes at off; what lies past the end of the file reads as zero. */
int vg_ustore_read(struct vg_ustore_file *f, uint64_t off, void *buf,
		   size_t len);
int vg_ustore_write(struct vg_ustore_file *f, uint64_t off, const void *buf,
		    size_t len);
int vg_ustore_fsync(struct vg_ustore_file *f);
/*
 * Size, and a change counter that moves whenever the file's data or
 * metadata changes: the sum of mtime and ctime in nanoseconds (statx).
 */
int vg_ustore_getattr(struct vg_ustore_file *f, uint64_t *size,
		      uint64_t *change);

/*
 * The same as the LRC cache's store (core/lrc/lrc.h, struct
 * vg_lrc_store_ops): roots are int descriptors, files struct
 * vg_ustore_file, both behind the opaque handles; priv is unused.
 */
struct vg_lrc_store_ops;
extern const struct vg_lrc_store_ops vg_ustore_ops;

#endif /* VGMEM_USER_LRC_STORE_H */
