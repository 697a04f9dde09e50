// SPDX-License-Identifier: GPL-2.0
/*
 * The LRC file cache's store in the kernel (struct vg_lrc_store_ops of
 * core/lrc/lrc.h); the vGPUs' share tables (shares.c) reach the VMs'
 * contexts here.
 *
 * Containment is the VFS's: a share root is a struct path held from
 * root_open, and every file is looked up beneath it with
 * vfs_path_lookup(root, LOOKUP_BENEATH | LOOKUP_NO_SYMLINKS |
 * LOOKUP_NO_MAGICLINKS | LOOKUP_FOLLOW). With the root preset, 6.1's
 * path_init() starts the walk at the share root and keeps it as nd->root,
 * so a ".." at the root fails with -EXDEV (follow_dotdot), any symlink,
 * the last component included (LOOKUP_FOLLOW makes it one to follow), with
 * -ELOOP (pick_link), and a rename or mount racing with a ".." with -EAGAIN
 * (handle_dots checks the mount and rename seqcounts for scoped lookups).
 * Absolute paths and ".." escapes are refused before the walk too (a
 * preset root would otherwise take "/x" as "x" beneath it). Every such
 * refusal is -EACCES to the cache.
 *
 * Roots and files are looked up and opened with the kernel's credentials
 * (init's), whichever process triggers it (mgmtd's SET_VM, the VMM opening
 * the device, the control queue's worker): a root is the operator's choice
 * (CAP_NET_ADMIN), and what a guest reaches beneath it is decided by the
 * containment above, as with a virtiofsd running as root, not by who
 * happened to call. Like the userspace store, a file
 * whose mode has no write bit, an append-only or immutable file, or one
 * on a read-only mount cannot be opened writable (-EACCES); only regular
 * files are served (-EINVAL).
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/file.h>
#include <linux/iversion.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/stat.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "vgk_drv.h"

#define VGK_LOOKUP_BENEATH	(LOOKUP_FOLLOW | LOOKUP_BENEATH | \
				 LOOKUP_NO_SYMLINKS | LOOKUP_NO_MAGICLINKS)
#define VGK_LOOKUP_RETRIES	4	/* -EAGAIN: a racing rename or mount */

/* init's credentials, for every lookup and open (set by vgk_lrc_init). */
static const struct cred *vgk_store_cred;
/*
 * The root directory share roots are resolved from: that of the process
 * that loaded the module (the host's), so a root names the same directory
 * whichever process's mount namespace a lookup happens to run in (mgmtd's
 * sandbox, a VMM's, a worker's).
 */
static struct path vgk_host_root;

/* ---- paths --------------------------------------------------------------- */

/* Whether path has a "." or ".." component. */
static bool vgk_path_has_dots(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return true;
		p += len;
	}
	return false;
}

/*
 * Whether relpath climbs above its start by ".." components (lexically:
 * with no symlink allowed on the way, that is where the walk would go).
 * "a/../b" stays inside; "a/../../b" does not.
 */
static bool vgk_path_escapes(const char *relpath)
{
	const char *p = relpath;
	long depth = 0;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return true;
		} else if (len && !(len == 1 && p[0] == '.')) {
			depth++;
		}
		p += len;
	}
	return false;
}

int vgk_share_path_check(const char *path)
{
	size_t len = strnlen(path, VGMEM_SHARE_PATH_MAX);
	size_t i;

	if (!len || len == VGMEM_SHARE_PATH_MAX || path[0] != '/')
		return -EINVAL;
	for (i = 0; i < len; i++)
		if ((unsigned char)path[i] < 0x20)
			return -EINVAL;
	return vgk_path_has_dots(path) ? -EINVAL : 0;
}

/* An operator's root path as a held directory. */
static int vgk_root_lookup(const char *path, struct path *out)
{
	const struct cred *old_cred;
	int ret;

	ret = vgk_share_path_check(path);
	if (ret)
		return ret;
	/* The operator's path: symlinks in it are the operator's choice. */
	old_cred = override_creds(vgk_store_cred);
	ret = vfs_path_lookup(vgk_host_root.dentry, vgk_host_root.mnt, path,
			      LOOKUP_FOLLOW | LOOKUP_DIRECTORY, out);
	revert_creds(old_cred);
	return ret;
}

/* ---- the store ------------------------------------------------------------- */

static int vgk_store_root_open(void *priv, const char *path, void **root)
{
	struct path *p;
	int ret;

	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	ret = vgk_root_lookup(path, p);
	if (ret) {
		kfree(p);
		return ret;
	}
	*root = p;
	return 0;
}

static void vgk_store_root_close(void *priv, void *root)
{
	struct path *p = root;

	path_put(p);
	kfree(p);
}

/* The lookup beneath root, retried while a rename or mount races it. */
static int vgk_store_lookup(struct path *root, const char *relpath,
			    struct path *out)
{
	unsigned int i;
	int ret = -EAGAIN;

	for (i = 0; i < VGK_LOOKUP_RETRIES && ret == -EAGAIN; i++)
		ret = vfs_path_lookup(root->dentry, root->mnt, relpath,
				      VGK_LOOKUP_BENEATH, out);
	switch (ret) {
	case -EXDEV:		/* ".." out of the root */
	case -ELOOP:		/* a symlink */
	case -EAGAIN:		/* still racing: refuse rather than guess */
		return -EACCES;
	default:
		return ret;
	}
}

static int vgk_store_open_beneath(void *priv, void *root,
				  const char *relpath, bool writable,
				  void **fh, struct vg_lrc_file_id *id)
{
	const struct cred *old_cred;
	struct inode *inode;
	struct kstat st;
	struct file *f;
	struct path p;
	int ret;

	if (!relpath[0] || relpath[0] == '/' || vgk_path_escapes(relpath))
		return -EACCES;
	old_cred = override_creds(vgk_store_cred);
	ret = vgk_store_lookup(root, relpath, &p);
	revert_creds(old_cred);
	if (ret)
		return ret;
	inode = d_backing_inode(p.dentry);
	if (!inode || !S_ISREG(inode->i_mode)) {
		ret = -EINVAL;
		goto out_put;
	}
	/* dentry_open() checks no permission: refuse what may_open() would. */
	if (writable && (!(inode->i_mode & 0222) || IS_APPEND(inode) ||
			 IS_IMMUTABLE(inode) || __mnt_is_readonly(p.mnt))) {
		ret = -EACCES;
		goto out_put;
	}
	f = dentry_open(&p, (writable ? O_RDWR : O_RDONLY) | O_LARGEFILE,
			vgk_store_cred);
	if (IS_ERR(f)) {
		ret = PTR_ERR(f);
		if (ret == -EROFS || ret == -EPERM || ret == -ETXTBSY)
			ret = -EACCES;
		goto out_put;
	}
	/*
	 * The identity as stat(2) gives it: btrfs subvolumes share a
	 * superblock but not a st_dev, and inode numbers repeat across them.
	 */
	ret = vfs_getattr(&f->f_path, &st, STATX_INO, AT_STATX_SYNC_AS_STAT);
	if (ret) {
		fput(f);
		goto out_put;
	}
	id->dev = st.dev;
	id->ino = st.ino;
	*fh = f;
out_put:
	path_put(&p);
	return ret;
}

static int vgk_store_read(void *priv, void *fh, u64 off, void *buf, u64 len)
{
	struct file *f = fh;
	loff_t pos = off;
	u64 done = 0;

	if (off > (u64)MAX_LFS_FILESIZE || len > (u64)MAX_LFS_FILESIZE - off)
		return -EINVAL;
	while (done < len) {
		size_t chunk = min_t(u64, len - done, MAX_RW_COUNT);
		ssize_t n = kernel_read(f, (u8 *)buf + done, chunk, &pos);

		if (n < 0)
			return n;
		if (!n)
			break;	/* end of file */
		done += n;
	}
	/* The cache works in whole pages: past the end reads as zero. */
	memset((u8 *)buf + done, 0, len - done);
	return 0;
}

static int vgk_store_write(void *priv, void *fh, u64 off, const void *buf,
			   u64 len)
{
	struct file *f = fh;
	loff_t pos = off;
	u64 done = 0;

	if (off > (u64)MAX_LFS_FILESIZE || len > (u64)MAX_LFS_FILESIZE - off)
		return -EFBIG;
	while (done < len) {
		size_t chunk = min_t(u64, len - done, MAX_RW_COUNT);
		ssize_t n = kernel_write(f, (const u8 *)buf + done, chunk, &pos);

		if (n < 0)
			return n;
		if (!n)
			return -EIO;
		done += n;
	}
	return 0;
}

static int vgk_store_fsync(void *priv, void *fh)
{
	return vfs_fsync(fh, 0);
}

/*
 * The change counter: ns of mtime plus ctime, plus i_version where the
 * filesystem keeps one (two writes within one coarse timestamp tick move
 * it even when the times do not). Each part only grows, so the sum moves
 * whenever one does.
 */
static int vgk_store_getattr(void *priv, void *fh, struct vg_lrc_attr *attr)
{
	struct file *f = fh;
	struct inode *inode = file_inode(f);
	struct kstat st;
	int ret;

	ret = vfs_getattr(&f->f_path, &st, STATX_SIZE | STATX_MTIME |
			  STATX_CTIME, AT_STATX_SYNC_AS_STAT);
	if (ret)
		return ret;
	attr->size = st.size;
	attr->change = (u64)timespec64_to_ns(&st.mtime) +
		       (u64)timespec64_to_ns(&st.ctime);
	if (IS_I_VERSION(inode))
		attr->change += inode_query_iversion(inode);
	return 0;
}

static void vgk_store_close(void *priv, void *fh)
{
	fput(fh);
}

const struct vg_lrc_store_ops vgk_lrc_store_ops = {
	.root_open = vgk_store_root_open,
	.root_close = vgk_store_root_close,
	.open_beneath = vgk_store_open_beneath,
	.read = vgk_store_read,
	.write = vgk_store_write,
	.fsync = vgk_store_fsync,
	.getattr = vgk_store_getattr,
	.close = vgk_store_close,
};

/* ---- share roots ------------------------------------------------------------ */

int vgk_share_root_check(const char *path)
{
	struct path p;
	int ret;

	/* as root_open will resolve it */
	ret = vgk_root_lookup(path, &p);
	if (ret)
		return ret;
	path_put(&p);
	return 0;
}

/* ---- the kernel's cache ------------------------------------------------------ */

/*
 * One cache for the whole host (core/lrc/lrc.h), over the store above:
 * every registered GPU whose GPU driver can fault and protect is added to it,
 * every VM on such a GPU gets a context when its device opens, and the
 * context's shares follow the vGPU's table.
 */
static struct vg_lrc *vgk_lrc;

/*
 * On by default with a quarter of each GPU's VRAM (-1): the cache takes
 * only free VRAM, is counted apart from the BOs (the GPU's cache_used;
 * vram_size, equal shares and entitlements never move with it) and gives
 * its VRAM back before any VM's chunks are relocated (the core's reclaim
 * hook, core/lrc/evict.c), so it costs no VM its BO memory. A GPU takes
 * a staging buffer of the readahead size (16 MiB) in host RAM once one of
 * its VMs maps a file, until the GPU goes. 0 keeps
 * it off on GPUs registered meanwhile (their VMs' file maps fail with
 * -ENOENT); N gives each GPU registered from then on N MiB.
 */
static int lrc_budget_mb = -1;
module_param(lrc_budget_mb, int, 0644);
MODULE_PARM_DESC(lrc_budget_mb,
		 "VRAM budget in MiB of the LRC file cache on each GPU registered from now on (-1: a quarter of VRAM, the default; 0: no file cache)");

/*
 * Host RAM of the cache's host copies (64 KiB per cached GPU page of a
 * file), in MiB; 0 (the default): no limit, host copies stay while their
 * file is mapped or open. Least recently used host copies no GPU replica
 * is made from are dropped (dirty ones written back first) and read from
 * the file again when needed. Takes effect at once when changed: the
 * setter hands it to the cache (vg_lrc_set_host_budget), under a lock the
 * cache's creation and destruction take too.
 */
static unsigned int lrc_host_mb;
static DEFINE_MUTEX(vgk_lrc_host_lock);

static int lrc_host_mb_set(const char *val, const struct kernel_param *kp)
{
	unsigned int mb;
	int ret;

	ret = kstrtouint(val, 0, &mb);
	if (ret)
		return ret;
	mutex_lock(&vgk_lrc_host_lock);
	if (vgk_lrc)
		ret = vg_lrc_set_host_budget(vgk_lrc, (u64)mb << 20);
	if (!ret)
		*(unsigned int *)kp->arg = mb;
	mutex_unlock(&vgk_lrc_host_lock);
	return ret;
}

static const struct kernel_param_ops lrc_host_mb_ops = {
	.set = lrc_host_mb_set,
	.get = param_get_uint,
};
module_param_cb(lrc_host_mb, &lrc_host_mb_ops, &lrc_host_mb, 0644);
MODULE_PARM_DESC(lrc_host_mb,
		 "Host RAM budget in MiB of the LRC file cache's host copies (0: no limit, the default)");

/*
 * Host memory of file-map metadata each VM may hold, in MiB: its maps'
 * replica tables (8 bytes per 64 KiB mapped) and the page entries of the
 * file pages its GPU faults brought into the cache (about 500 bytes per
 * 64 KiB). A map or fault beyond it fails -ENOMEM. Takes effect at once
 * (under the same lock as lrc_host_mb); a VM above a lowered cap keeps
 * what it holds.
 */
static unsigned int lrc_meta_mb = VG_LRC_META_MAX_DEFAULT >> 20;

static int lrc_meta_mb_set(const char *val, const struct kernel_param *kp)
{
	unsigned int mb;
	int ret;

	ret = kstrtouint(val, 0, &mb);
	if (ret)
		return ret;
	if (!mb)
		return -EINVAL;
	mutex_lock(&vgk_lrc_host_lock);
	if (vgk_lrc)
		ret = vg_lrc_set_meta_max(vgk_lrc, (u64)mb << 20);
	if (!ret)
		*(unsigned int *)kp->arg = mb;
	mutex_unlock(&vgk_lrc_host_lock);
	return ret;
}

static const struct kernel_param_ops lrc_meta_mb_ops = {
	.set = lrc_meta_mb_set,
	.get = param_get_uint,
};
module_param_cb(lrc_meta_mb, &lrc_meta_mb_ops, &lrc_meta_mb, 0644);
MODULE_PARM_DESC(lrc_meta_mb,
		 "Host memory in MiB of file-map metadata each VM may hold in the LRC file cache (default 256)");

int vgk_lrc_init(void)
{
	struct vg_lrc_config cfg = {
		.store = &vgk_lrc_store_ops,
		.seed = get_random_u64(),
	};
	int ret;

	/* init's credentials (NULL meant those only until 6.2, which warns). */
	vgk_store_cred = prepare_kernel_cred(&init_task);
	if (!vgk_store_cred)
		return -ENOMEM;
	get_fs_root(current->fs, &vgk_host_root);
	mutex_lock(&vgk_lrc_host_lock);
	cfg.host_budget = (u64)lrc_host_mb << 20;
	cfg.meta_max = (u64)lrc_meta_mb << 20;
	ret = vg_lrc_create(&cfg, &vgk_lrc);
	mutex_unlock(&vgk_lrc_host_lock);
	if (ret)
		goto err_put_root;
	return 0;

err_put_root:
	path_put(&vgk_host_root);
	put_cred(vgk_store_cred);
	vgk_store_cred = NULL;
	return ret;
}

void vgk_lrc_exit(void)
{
	mutex_lock(&vgk_lrc_host_lock);
	if (vgk_lrc)
		vg_lrc_destroy(vgk_lrc);
	vgk_lrc = NULL;
	mutex_unlock(&vgk_lrc_host_lock);
	path_put(&vgk_host_root);
	put_cred(vgk_store_cred);
	vgk_store_cred = NULL;
}

void vgk_lrc_get_stats(struct vg_lrc_stats *st)
{
	/* Created before netlink registers, destroyed after it is gone. */
	vg_lrc_get_stats(vgk_lrc, st);
}

void vgk_lrc_gpu_add(struct vgk_gpu *gpu)
{
	int mb = READ_ONCE(lrc_budget_mb);
	u64 budget = mb > 0 ? (u64)mb << 20 : 0;	/* 0: the core's default */
	int ret;

	gpu->lrc = false;
	if (mb == 0 || mb < -1)
		return;
	ret = vg_lrc_gpu_add(vgk_lrc, gpu->core, budget);
	/* A GPU driver without faults, or too little VRAM: BOs alone. */
	gpu->lrc = !ret;
	if (ret)
		pr_info("vgmem%d: no file cache on this GPU (%d)\n", gpu->id,
			ret);
	else if (budget)
		pr_info("vgmem%d: file cache with %llu MiB of VRAM\n",
			gpu->id, budget >> 20);
	else
		pr_info("vgmem%d: file cache with a quarter of VRAM\n",
			gpu->id);
}

void vgk_lrc_gpu_remove(struct vgk_gpu *gpu)
{
	if (gpu->lrc)
		vg_lrc_gpu_remove(vgk_lrc, gpu->core);
	gpu->lrc = false;
}

/*
 * The vGPU's table into its VM's context: every entry of old is cleared
 * first, then every entry of the new one set, so tags may move between
 * ids (the context refuses a tag another share holds). Open maps keep
 * their files, and no control command (FILE_MAP, SHARES) runs meanwhile:
 * the control queue runs them under v->lock too. An entry whose root
 * cannot be opened now (e.g. removed since SET_VM checked it) is left out
 * with a warning: the guest does not list it and its maps fail -ENOENT.
 */
static void vgk_vgpu_apply_shares(struct vgk_vgpu *v,
				  const struct vgk_shares *old)
{
	const struct vgk_shares *s = v->shares;
	struct vg_lrc_ctx *ctx;
	unsigned int i;
	int ret;

	lockdep_assert_held(&v->lock);
	ctx = v->vm ? vg_lrc_vm_ctx(v->vm) : NULL;
	if (!ctx)
		return;
	for (i = 0; old && i < old->nr; i++)
		vg_lrc_share_clear(ctx, old->e[i].id);
	for (i = 0; s && i < s->nr; i++) {
		ret = vg_lrc_share_set_tag(ctx, s->e[i].id, s->e[i].path,
					   s->e[i].readonly, s->e[i].tag);
		if (ret)
			dev_warn(&v->mdev->dev, "share %u (%s): %d\n",
				 s->e[i].id, s->e[i].path, ret);
	}
}

void vgk_lrc_vm_open(struct vgk_vgpu *v)
{
	struct vg_lrc_ctx *ctx;
	int ret;

	lockdep_assert_held(&v->lock);
	if (!v->gpu->lrc || !v->vm)
		return;
	ret = vg_lrc_ctx_create(vgk_lrc, v->vm, &ctx);
	if (ret) {
		dev_warn(&v->mdev->dev, "no file cache context (%d)\n", ret);
		return;
	}
	vgk_vgpu_apply_shares(v, NULL);
}

void vgk_vgpu_set_shares(struct vgk_vgpu *v, struct vgk_shares *s)
{
	struct vgk_shares *old;

	mutex_lock(&v->lock);
	old = v->shares;
	v->shares = s;
	vgk_vgpu_apply_shares(v, old);
	mutex_unlock(&v->lock);
	vgk_shares_free(old);
}
