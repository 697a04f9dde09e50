// SPDX-License-Identifier: MIT
/*
 * libvgmem devices: opening, control commands, buffer objects, statistics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "vgmem_priv.h"

int vgmem_ctrl_op(struct vgmem_dev *dev, struct vgmem_ctrl *cmd)
{
	int ret;

	cmd->status = 0;
	ret = dev->ops->ctrl(dev->t, cmd);
	if (ret)
		return ret < 0 ? ret : -EIO;
	return cmd->status;
}

int vgmem_ctrl(struct vgmem_dev *dev, struct vgmem_ctrl *cmd)
{
	if (!dev || !cmd)
		return -EINVAL;
	return vgmem_ctrl_op(dev, cmd);
}

int vgmem_open(const struct vgmem_transport_ops *ops, void *t,
	       struct vgmem_dev **out)
{
	struct vgmem_dev *dev;
	struct vgmem_ctrl cmd;
	int ret;

	if (!ops || !out || !ops->ctrl || !ops->userd_read ||
	    !ops->userd_write || !ops->gmem_alloc || !ops->gmem_free)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->ops = ops;
	dev->t = t;
	pthread_mutex_init(&dev->lock, NULL);

	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_QUERY;
	ret = vgmem_ctrl_op(dev, &cmd);
	if (ret)
		goto err_free_dev;
	/* A host speaking another ABI would misread our rings. */
	if (cmd.query.abi_version != VGMEM_ABI_VERSION) {
		ret = -EPROTO;
		goto err_free_dev;
	}
	dev->q = cmd.query;
	*out = dev;
	return 0;

err_free_dev:
	pthread_mutex_destroy(&dev->lock);
	free(dev);
	return ret;
}

void vgmem_close(struct vgmem_dev *dev)
{
	if (!dev)
		return;
	/* vgmem_chan_destroy unlinks each channel from dev->chans. */
	while (dev->chans)
		vgmem_chan_destroy(dev->chans);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

int vgmem_query(struct vgmem_dev *dev, struct vgmem_ctrl_query *q)
{
	struct vgmem_ctrl cmd;
	int ret;

	if (!dev || !q)
		return -EINVAL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_QUERY;
	ret = vgmem_ctrl_op(dev, &cmd);
	if (ret)
		return ret;
	*q = cmd.query;
	return 0;
}

int vgmem_stats(struct vgmem_dev *dev, struct vgmem_vm_stats *st)
{
	struct vgmem_ctrl cmd;
	int ret;

	if (!dev || !st)
		return -EINVAL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_STATS;
	ret = vgmem_ctrl_op(dev, &cmd);
	if (ret)
		return ret;
	*st = cmd.stats;
	return 0;
}

static int bo_alloc(struct vgmem_dev *dev, uint64_t size, uint32_t flags,
		    uint64_t *va)
{
	struct vgmem_ctrl cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_BO_ALLOC;
	cmd.bo.size = size;
	cmd.bo.flags = flags;
	cmd.bo.va = *va;
	ret = vgmem_ctrl_op(dev, &cmd);
	if (ret)
		return ret;
	*va = cmd.bo.va;
	return 0;
}

int vgmem_bo_alloc(struct vgmem_dev *dev, uint64_t size, uint64_t *va)
{
	uint64_t v = 0;
	int ret;

	if (!dev || !va)
		return -EINVAL;
	ret = bo_alloc(dev, size, 0, &v);
	if (!ret)
		*va = v;
	return ret;
}

int vgmem_bo_alloc_at(struct vgmem_dev *dev, uint64_t size, uint64_t va)
{
	if (!dev)
		return -EINVAL;
	return bo_alloc(dev, size, VGMEM_BO_FIXED_VA, &va);
}

int vgmem_bo_free(struct vgmem_dev *dev, uint64_t va)
{
	struct vgmem_ctrl cmd;

	if (!dev)
		return -EINVAL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = VGMEM_CTRL_BO_FREE;
	cmd.bo.va = va;
	return vgmem_ctrl_op(dev, &cmd);
}
