// SPDX-License-Identifier: GPL-2.0
/*
 * Files of the VM's shares, mapped onto the GPU from a file descriptor.
 *
 * The device maps a file by (share id, path below the share's root). A
 * process must not be able to name a file it could not open itself, so
 * the driver takes both from an open file: the path from the file's
 * dentry (dentry_path_raw: below the root of its superblock, which for
 * virtio-fs is the share's root), the share from the tag the mount was
 * bound to. A module cannot read a virtio-fs mount's tag (it lives in
 * fuse's private structures), so root binds each mount to its tag once
 * (SHARE_BIND); the binding holds the mount, which keeps the superblock
 * it names alive, so comparing superblock pointers is sound.
 *
 * The guest's page cache of a mapped file is kept coherent with the GPU:
 * dirty guest pages of a range go back through virtio-fs before an
 * acquire (the host compares the file against its copy there), and the
 * cached guest pages of a range are dropped after a release, sync or
 * unmap, so the next read() asks the host file again.
 *
 * The device opens the file by name, so a rename racing with MAP_FD could
 * put another file of the share at that path (one the process may not be
 * able to open): FILE_MAP carries the file's inode number too
 * (VGMEM_FILE_INO; virtio-fs shows the host's), and the device refuses a
 * path that names another file by then (-ESTALE).
 *
 * Locking: binds under vgg_dev.binds_lock (a leaf: nothing else is taken
 * under it but path_get/path_put); fmaps under vgg_file.lock. The page
 * cache work runs under vgg_file.lock and takes only the file's own page
 * and mapping locks.
 */
#include <linux/capability.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/path.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vgmem_guest_drv.h"

/* The filesystem type name of virtio-fs mounts (fs/fuse/virtio_fs.c). */
#define VGG_VIRTIOFS	"virtiofs"

/* ---- tag -> share ------------------------------------------------------------ */

/*
 * The share of this vGPU whose tag is tag: pages through SHARES (the
 * operator may replace the table meanwhile: start over, a few times).
 * 0 and *id, -ENOENT, -EAGAIN, or the queue's error.
 */
static int vgg_share_find(struct vgg_file *gf, const char *tag, u32 *id)
{
	struct vgmem_ctrl *cmd;
	u32 idx, total = 0, i;
	int tries, ret = -EAGAIN;

	lockdep_assert_held(&gf->lock);
	cmd = kmalloc(sizeof(*cmd), GFP_KERNEL);
	if (!cmd)
		return -ENOMEM;
	for (tries = 0; tries < 4 && ret == -EAGAIN; tries++) {
		ret = -ENOENT;
		for (idx = 0;; idx += cmd->shares.count) {
			memset(cmd, 0, sizeof(*cmd));
			cmd->op = VGMEM_CTRL_SHARES;
			cmd->shares.index = idx;
			ret = vgg_run(gf, cmd, true, NULL);
			if (!ret && cmd->status)
				ret = cmd->status == -EINVAL ? -EAGAIN : -EIO;
			if (ret)
				break;
			if (!idx)
				total = cmd->shares.total;
			if (cmd->shares.total != total) {
				ret = -EAGAIN;
				break;
			}
			ret = -ENOENT;
			for (i = 0; i < min_t(u32, cmd->shares.count,
					      VGMEM_CTRL_SHARES_PER_CMD); i++) {
				if (!strncmp(cmd->shares.e[i].tag, tag,
					     VGMEM_SHARE_TAG_SIZE)) {
					*id = cmd->shares.e[i].share_id;
					ret = 0;
					break;
				}
			}
			if (!ret || !cmd->shares.count ||
			    cmd->shares.count > VGMEM_CTRL_SHARES_PER_CMD ||
			    idx + cmd->shares.count >= total)
				break;
		}
	}
	kfree(cmd);
	return ret;
}

/* A tag as the ioctl passes it: valid, NUL-terminated and NUL-padded. */
static bool vgg_tag_ok(const char *tag)
{
	const char *nul = memchr(tag, 0, VGMEM_SHARE_TAG_SIZE);

	return nul && vgmem_share_tag_ok(tag) &&
		!memchr_inv(nul, 0, tag + VGMEM_SHARE_TAG_SIZE - nul);
}

/* ---- bindings ------------------------------------------------------------------ */

int vgg_share_bind(struct vgg_file *gf, const struct vgmem_guest_share_bind *arg)
{
	struct vgg_dev *gdev = gf->gdev;
	struct vgg_bind *b, *other;
	struct vfsmount *mnt;
	struct file *f;
	u32 id;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (arg->flags || !vgg_tag_ok(arg->tag))
		return -EINVAL;
	f = fget(arg->fd);
	if (!f)
		return -EBADF;
	mnt = f->f_path.mnt;
	/* The root of a mount of the whole share: paths below it are the share's. */
	if (strcmp(mnt->mnt_sb->s_type->name, VGG_VIRTIOFS) ||
	    f->f_path.dentry != mnt->mnt_root ||
	    mnt->mnt_root != mnt->mnt_sb->s_root) {
		ret = -EINVAL;
		goto out_fput;
	}

	if (mutex_lock_interruptible(&gf->lock)) {
		ret = -EINTR;
		goto out_fput;
	}
	ret = gf->dropped ? -ENODEV : vgg_file_settle(gf, true);
	if (!ret)
		ret = vgg_share_find(gf, arg->tag, &id);
	mutex_unlock(&gf->lock);
	if (ret)
		goto out_fput;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b) {
		ret = -ENOMEM;
		goto out_fput;
	}
	memcpy(b->tag, arg->tag, VGMEM_SHARE_TAG_SIZE);
	mutex_lock(&gdev->binds_lock);
	if (gdev->binds_closed) {
		ret = -ENODEV;
		goto err_unlock;
	}
	if (gdev->nr_binds >= VGMEM_GUEST_BINDS_MAX) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	list_for_each_entry(other, &gdev->binds, node) {
		if (!strncmp(other->tag, b->tag, VGMEM_SHARE_TAG_SIZE) ||
		    other->root.mnt->mnt_sb == mnt->mnt_sb) {
			ret = -EEXIST;
			goto err_unlock;
		}
	}
	b->root = f->f_path;
	path_get(&b->root);
	list_add_tail(&b->node, &gdev->binds);
	gdev->nr_binds++;
	mutex_unlock(&gdev->binds_lock);
	dev_info(&gdev->pdev->dev, "vgmem%d: virtio-fs tag '%s' bound (share %u)\n",
		 gdev->minor, b->tag, id);
	ret = 0;
	goto out_fput;

err_unlock:
	mutex_unlock(&gdev->binds_lock);
	kfree(b);
out_fput:
	fput(f);
	return ret;
}

int vgg_share_unbind(struct vgg_dev *gdev, const struct vgmem_guest_share_bind *arg)
{
	struct vgg_bind *b;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (arg->fd != -1 || arg->flags || !vgg_tag_ok(arg->tag))
		return -EINVAL;
	mutex_lock(&gdev->binds_lock);
	list_for_each_entry(b, &gdev->binds, node) {
		if (!strncmp(b->tag, arg->tag, VGMEM_SHARE_TAG_SIZE)) {
			list_del(&b->node);
			gdev->nr_binds--;
			mutex_unlock(&gdev->binds_lock);
			path_put(&b->root);
			kfree(b);
			return 0;
		}
	}
	mutex_unlock(&gdev->binds_lock);
	return -ENOENT;
}

/* The driver lets the device go: every mount is free to unmount again. */
void vgg_binds_release(struct vgg_dev *gdev)
{
	struct vgg_bind *b, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&gdev->binds_lock);
	gdev->binds_closed = true;
	list_splice_init(&gdev->binds, &gone);
	gdev->nr_binds = 0;
	mutex_unlock(&gdev->binds_lock);
	list_for_each_entry_safe(b, tmp, &gone, node) {
		path_put(&b->root);
		kfree(b);
	}
}

/* The tag sb's mount is bound to, into tag; -EXDEV if none. */
static int vgg_bind_tag(struct vgg_dev *gdev, struct super_block *sb, char *tag)
{
	struct vgg_bind *b;
	int ret = -EXDEV;

	mutex_lock(&gdev->binds_lock);
	list_for_each_entry(b, &gdev->binds, node) {
		if (b->root.mnt->mnt_sb == sb) {
			memcpy(tag, b->tag, VGMEM_SHARE_TAG_SIZE);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&gdev->binds_lock);
	return ret;
}

/* ---- page cache ------------------------------------------------------------------ */

/* [off, off + len) of the file's guest page cache goes back to the host. */
static int vgg_fmap_writeback(struct vgg_fmap *m, u64 off, u64 len)
{
	return filemap_write_and_wait_range(m->file->f_mapping, off,
					    off + len - 1);
}

/* The guest's cached pages of [off, off + len) go: read() asks the host. */
static void vgg_fmap_invalidate(struct vgg_fmap *m, u64 off, u64 len)
{
	int ret = invalidate_inode_pages2_range(m->file->f_mapping,
						off >> PAGE_SHIFT,
						(off + len - 1) >> PAGE_SHIFT);

	/* A page busy under writeback or pinned stays; the next drop gets it. */
	if (ret)
		pr_debug("vgmem_guest: %d invalidating a mapped file's pages\n", ret);
}

/* ---- maps of an open file ----------------------------------------------------------- */

static void vgg_fmap_free(struct vgg_fmap *m)
{
	fput(m->file);
	kfree(m);
}

/* The map of this file that va lies in, or NULL. */
static struct vgg_fmap *vgg_fmap_find(struct vgg_file *gf, u64 va)
{
	struct vgg_fmap *m;

	lockdep_assert_held(&gf->lock);
	list_for_each_entry(m, &gf->fmaps, node)
		if (va >= m->va && va - m->va < m->length)
			return m;
	return NULL;
}

static bool vgg_fmap_overlaps(struct vgg_file *gf, u64 va, u64 len)
{
	struct vgg_fmap *m;

	lockdep_assert_held(&gf->lock);
	list_for_each_entry(m, &gf->fmaps, node)
		if (va < m->va + m->length && m->va < va + len)
			return true;
	return false;
}

/*
 * FILE_MAP succeeded (ret 0, status 0): the map m stands for is this
 * file's, if the answer is one a map can have. Otherwise m goes. Returns
 * what the ioctl returns.
 */
int vgg_fmap_apply_map(struct vgg_file *gf, const struct vgmem_ctrl *cmd,
		       int ret, struct vgg_fmap *m)
{
	u64 va = cmd->file_map.va;

	lockdep_assert_held(&gf->lock);
	if (ret || cmd->status) {
		vgg_fmap_free(m);
		return ret;
	}
	if (!IS_ALIGNED(va, VGMEM_FILE_ALIGN) || va < VGMEM_VA_START ||
	    va > VGMEM_VA_END - m->length || vgg_fmap_overlaps(gf, va, m->length)) {
		struct vgmem_ctrl *undo = kzalloc(sizeof(*undo), GFP_KERNEL);

		dev_err_ratelimited(&gf->gdev->pdev->dev, "FILE_MAP returned VA 0x%llx, which is misaligned, out of range or taken\n",
				    (unsigned long long)va);
		/* A VA this file already maps stays its owner's. */
		if (undo && !vgg_fmap_overlaps(gf, va, m->length)) {
			undo->op = VGMEM_CTRL_FILE_UNMAP;
			undo->file.va = va;
			vgg_run(gf, undo, false, NULL);
		}
		kfree(undo);
		vgg_fmap_free(m);
		return -EIO;
	}
	m->va = va;
	list_add_tail(&m->node, &gf->fmaps);
	gf->nr_fmaps++;
	return 0;
}

/* FILE_UNMAP of va is done (or the device is gone): forget the map. */
void vgg_fmap_forget(struct vgg_file *gf, u64 va)
{
	struct vgg_fmap *m = vgg_fmap_find(gf, va);

	lockdep_assert_held(&gf->lock);
	if (!m || m->va != va)
		return;
	list_del(&m->node);
	gf->nr_fmaps--;
	vgg_fmap_invalidate(m, m->offset, m->length);
	vgg_fmap_free(m);
}

int vgg_file_map_fd(struct vgg_file *gf, struct vgmem_guest_map_fd *arg)
{
	char tag[VGMEM_SHARE_TAG_SIZE];
	struct vgmem_ctrl *cmd;
	struct vgg_fmap *m;
	char *buf, *path;
	struct file *f;
	u32 share_id;
	int ret;

	if (arg->rsvd || (arg->flags != VGMEM_FILE_RO && arg->flags != VGMEM_FILE_RW))
		return -EINVAL;
	f = fget(arg->fd);
	if (!f)
		return -EBADF;
	if (!S_ISREG(file_inode(f)->i_mode)) {
		ret = -EINVAL;
		goto err_fput;
	}
	if (!(f->f_mode & FMODE_READ) ||
	    (arg->flags == VGMEM_FILE_RW && !(f->f_mode & FMODE_WRITE))) {
		ret = -EACCES;
		goto err_fput;
	}
	ret = vgg_bind_tag(gf->gdev, file_inode(f)->i_sb, tag);
	if (ret)
		goto err_fput;

	cmd = kzalloc(sizeof(*cmd), GFP_KERNEL);
	buf = kmalloc(VGMEM_FILE_PATH_MAX + 1, GFP_KERNEL);
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!cmd || !buf || !m) {
		ret = -ENOMEM;
		goto err_free;
	}
	/* "/a/b" below the superblock's root: the share's root for virtio-fs. */
	path = dentry_path_raw(f->f_path.dentry, buf, VGMEM_FILE_PATH_MAX + 1);
	if (IS_ERR(path)) {
		ret = PTR_ERR(path);
		goto err_free;
	}
	if (d_unlinked(f->f_path.dentry)) {
		ret = -ENOENT;
		goto err_free;
	}
	while (*path == '/')
		path++;
	if (!*path) {
		ret = -EINVAL;
		goto err_free;
	}
	/* At most VGMEM_FILE_PATH_MAX - 1 bytes once the '/' is gone. */
	strscpy(cmd->file_map.path, path, VGMEM_FILE_PATH_MAX);
	cmd->op = VGMEM_CTRL_FILE_MAP;
	/*
	 * virtio-fs passes the host's inode numbers through: the host maps
	 * the path only if it still names this very file.
	 */
	cmd->file_map.flags = arg->flags | VGMEM_FILE_INO;
	cmd->file_map.ino = file_inode(f)->i_ino;
	cmd->file_map.offset = arg->offset;
	cmd->file_map.length = arg->length;
	m->file = f;
	m->offset = arg->offset;
	m->length = arg->length;

	if (mutex_lock_interruptible(&gf->lock)) {
		ret = -EINTR;
		goto err_free;
	}
	ret = gf->dropped ? -ENODEV : vgg_file_settle(gf, true);
	if (!ret && gf->nr_fmaps >= VGMEM_GUEST_FMAPS_MAX)
		ret = -ENOSPC;
	if (!ret)
		ret = vgg_share_find(gf, tag, &share_id);
	if (ret) {
		mutex_unlock(&gf->lock);
		goto err_free;
	}
	cmd->file_map.share_id = share_id;
	/* From here m is the command's: adopted or freed with its answer. */
	ret = vgg_run(gf, cmd, true, m);
	mutex_unlock(&gf->lock);
	if (!ret)
		ret = cmd->status;
	if (!ret)
		arg->va = cmd->file_map.va;
	kfree(buf);
	kfree(cmd);
	return ret;

err_free:
	kfree(m);
	kfree(buf);
	kfree(cmd);
err_fput:
	fput(f);
	return ret;
}

/*
 * FILE_UNMAP, FILE_ACQUIRE, FILE_RELEASE, FILE_SYNC of a map of this
 * file, with the guest's page cache brought along. The device checks
 * alignment and the range against the map again.
 */
int vgg_fmap_ctrl(struct vgg_file *gf, struct vgmem_ctrl *cmd)
{
	struct vgmem_ctrl_file_range *r = &cmd->file;
	struct vgg_fmap *m;
	u64 rel, len, off;
	int ret;

	lockdep_assert_held(&gf->lock);
	if (r->flags || r->rsvd)
		return -EINVAL;
	m = vgg_fmap_find(gf, r->va);
	if (!m || (cmd->op == VGMEM_CTRL_FILE_UNMAP && (m->va != r->va || r->length)))
		return m ? -EINVAL : -EBADF;
	rel = r->va - m->va;
	len = r->length ? min(r->length, m->length - rel) : m->length - rel;
	off = m->offset + rel;

	if (cmd->op == VGMEM_CTRL_FILE_ACQUIRE) {
		ret = vgg_fmap_writeback(m, off, len);
		if (ret)
			return ret;
	}
	/* FILE_UNMAP's answer forgets the map (vgg_ctrl_apply). */
	ret = vgg_run(gf, cmd, true, NULL);
	if (!ret && !cmd->status &&
	    (cmd->op == VGMEM_CTRL_FILE_RELEASE || cmd->op == VGMEM_CTRL_FILE_SYNC))
		vgg_fmap_invalidate(m, off, len);
	return ret;
}

/* The file lets the device go: every map is unmapped there and forgotten. */
void vgg_fmaps_drop(struct vgg_file *gf, struct vgmem_ctrl *cmd)
{
	struct vgg_fmap *m, *tmp;

	lockdep_assert_held(&gf->lock);
	list_for_each_entry_safe(m, tmp, &gf->fmaps, node) {
		u64 va = m->va;

		memset(cmd, 0, sizeof(*cmd));
		cmd->op = VGMEM_CTRL_FILE_UNMAP;
		cmd->file.va = va;
		/*
		 * The answer forgets the map (m may be gone now); one the
		 * device did not take is forgotten here all the same.
		 */
		if (vgg_run(gf, cmd, false, NULL) || cmd->status)
			vgg_fmap_forget(gf, va);
	}
}
