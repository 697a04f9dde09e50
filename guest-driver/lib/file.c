// SPDX-License-Identifier: MIT
/*
 * Share files: the control commands of the LRC file cache (FILE_MAP,
 * FILE_UNMAP, FILE_ACQUIRE, FILE_RELEASE, FILE_SYNC). The host validates
 * every field again; the checks here only turn what can never succeed
 * into an error without a round trip, and a path that does not fit the
 * command into -ENAMETOOLONG rather than a silently truncated name.
 */
#include <errno.h>
#include <string.h>
#include "vgmem_priv.h"

int vgmem_map_file(struct vgmem_dev *dev, uint32_t share_id, const char *path,
		   uint64_t offset, uint64_t length, uint32_t flags,
		   uint64_t *va)
{
	struct vgmem_ctrl cmd;
	size_t len;
	int ret;

	if (!dev || !path || !va)
		return -EINVAL;
	len = strnlen(path, VGMEM_FILE_PATH_MAX);
	if (len >= VGMEM_FILE_PATH_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -EINVAL;
	memset(&cmd, 0, sizeof(cmd));	/* the path's tail must be zero */
	cmd.op = VGMEM_CTRL_FILE_MAP;
	cmd.file_map.share_id = share_id;
	cmd.file_map.flags = flags;
	cmd.file_map.offset = offset;
	cmd.file_map.length = length;
	memcpy(cmd.file_map.path, path, len);
	ret = vgmem_ctrl_op(dev, &cmd);
	if (ret)
		return ret;
	*va = cmd.file_map.va;
	return 0;
}

int vgmem_map_fd(struct vgmem_dev *dev, int fd, uint64_t offset,
		 uint64_t length, uint32_t flags, uint64_t *va)
{
	if (!dev || !va || fd < 0)
		return fd < 0 && dev && va ? -EBADF : -EINVAL;
	if (!dev->ops->map_fd)
		return -EOPNOTSUPP;
	return dev->ops->map_fd(dev->t, fd, offset, length, flags, va);
}

static int file_range_op(struct vgmem_dev *dev, uint32_t op, uint64_t va,
			 uint64_t length)
{
	struct vgmem_ctrl cmd;

	if (!dev)
		return -EINVAL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = op;
	cmd.file.va = va;
	cmd.file.length = length;
	return vgmem_ctrl_op(dev, &cmd);
}

int vgmem_unmap_file(struct vgmem_dev *dev, uint64_t va)
{
	return file_range_op(dev, VGMEM_CTRL_FILE_UNMAP, va, 0);
}

int vgmem_acquire(struct vgmem_dev *dev, uint64_t va, uint64_t length)
{
	return file_range_op(dev, VGMEM_CTRL_FILE_ACQUIRE, va, length);
}

int vgmem_release(struct vgmem_dev *dev, uint64_t va, uint64_t length)
{
	return file_range_op(dev, VGMEM_CTRL_FILE_RELEASE, va, length);
}

int vgmem_file_sync(struct vgmem_dev *dev, uint64_t va, uint64_t length)
{
	return file_range_op(dev, VGMEM_CTRL_FILE_SYNC, va, length);
}
