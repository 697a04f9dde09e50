// SPDX-License-Identifier: MIT
/*
 * The VM's share table (VGMEM_CTRL_SHARES): paged, VGMEM_CTRL_SHARES_PER_CMD
 * entries per command. The host's answer is checked before it is used: a
 * count beyond the page or the total, or a tag field without its NUL, is
 * -EIO, never trusted.
 */
#include <errno.h>
#include <string.h>
#include "vgmem_priv.h"

/* Starts over this often when the table keeps changing under the pages. */
#define SHARES_TRIES	4

static int shares_page(struct vgmem_dev *dev, uint32_t index,
		       struct vgmem_ctrl *cmd)
{
	uint32_t i;
	int ret;

	memset(cmd, 0, sizeof(*cmd));
	cmd->op = VGMEM_CTRL_SHARES;
	cmd->shares.index = index;
	ret = vgmem_ctrl_op(dev, cmd);
	if (ret)
		return ret;
	if (cmd->shares.count > VGMEM_CTRL_SHARES_PER_CMD ||
	    cmd->shares.total < index ||
	    cmd->shares.count > cmd->shares.total - index)
		return -EIO;
	for (i = 0; i < cmd->shares.count; i++)
		if (!memchr(cmd->shares.e[i].tag, 0,
			    sizeof(cmd->shares.e[i].tag)))
			return -EIO;
	return 0;
}

static int shares_once(struct vgmem_dev *dev, struct vgmem_share_info *out,
		       unsigned int max, unsigned int *total)
{
	struct vgmem_ctrl cmd;
	uint32_t index = 0, want, first = 0, i;
	int ret;

	for (;;) {
		ret = shares_page(dev, index, &cmd);
		if (ret)
			return ret;
		if (!index)
			first = cmd.shares.total;
		else if (cmd.shares.total != first)
			return -EAGAIN;		/* changed between pages */
		want = first < max ? first : max;
		/* An empty page before the end: the host's answer is bad. */
		if (index < want && !cmd.shares.count)
			return -EIO;
		for (i = 0; i < cmd.shares.count && index < want; i++, index++) {
			out[index].id = cmd.shares.e[i].share_id;
			out[index].flags = cmd.shares.e[i].flags;
			memcpy(out[index].tag, cmd.shares.e[i].tag,
			       sizeof(out[index].tag));
		}
		if (index >= want)
			break;
	}
	*total = first;
	return (int)index;
}

int vgmem_shares(struct vgmem_dev *dev, struct vgmem_share_info *out,
		 unsigned int max, unsigned int *total)
{
	unsigned int t = 0, tries;
	int ret = -EAGAIN;

	if (!dev || (max && !out))
		return -EINVAL;
	for (tries = 0; tries < SHARES_TRIES && ret == -EAGAIN; tries++)
		ret = shares_once(dev, out, max, &t);
	if (ret >= 0 && total)
		*total = t;
	return ret;
}

int vgmem_share_find(struct vgmem_dev *dev, const char *tag, uint32_t *id)
{
	struct vgmem_share_info s[VGMEM_SHARES_MAX];
	int n, i;

	if (!dev || !tag || !id || !vgmem_share_tag_ok(tag))
		return -EINVAL;
	n = vgmem_shares(dev, s, VGMEM_SHARES_MAX, NULL);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (!strcmp(s[i].tag, tag)) {
			*id = s[i].id;
			return 0;
		}
	}
	return -ENOENT;
}
