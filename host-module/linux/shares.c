// SPDX-License-Identifier: GPL-2.0
/*
 * A vGPU's share table as netlink carries it (VGMEM_A_VM_SHARES): the
 * entries' policy, SET_VM's parsing, where every entry is checked and
 * every root resolved before the table may replace the old one, and
 * GET_VM's reply. The table reaches the VM's file cache context in
 * lrc_store.c (vgk_vgpu_set_shares), and the guest reads it back with
 * VGMEM_CTRL_SHARES from there.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "vgk_drv.h"

/*
 * One entry of VGMEM_A_VM_SHARES; the lengths of the path and the tag are
 * bounded here, the tag's characters by vgk_nl_parse_shares.
 */
const struct nla_policy vgk_nl_share_policy[VGMEM_SHARE_A_MAX + 1] = {
	[VGMEM_SHARE_A_ID] = { .type = NLA_U32 },
	[VGMEM_SHARE_A_PATH] = { .type = NLA_NUL_STRING,
				 .len = VGMEM_SHARE_PATH_MAX - 1 },
	[VGMEM_SHARE_A_READONLY] = { .type = NLA_FLAG },
	[VGMEM_SHARE_A_TAG] = { .type = NLA_NUL_STRING,
				.len = VGMEM_SHARE_TAG_MAX },
};

struct vgk_shares *vgk_shares_alloc(unsigned int nr)
{
	struct vgk_shares *s;

	if (nr > VGMEM_SHARES_MAX)
		return NULL;
	s = kzalloc(struct_size(s, e, nr), GFP_KERNEL);
	if (s)
		s->nr = nr;
	return s;
}

void vgk_shares_free(struct vgk_shares *s)
{
	unsigned int i;

	if (!s)
		return;
	for (i = 0; i < s->nr; i++)
		kfree(s->e[i].path);
	kfree(s);
}

size_t vgk_shares_nla_size(const struct vgk_shares *s)
{
	size_t size = nla_total_size(0);
	unsigned int i;

	for (i = 0; s && i < s->nr; i++)
		size += nla_total_size(0) + nla_total_size(sizeof(u32)) +
			nla_total_size(strlen(s->e[i].path) + 1) +
			nla_total_size(0) +
			nla_total_size(strlen(s->e[i].tag) + 1);
	return size;
}

int vgk_nl_put_shares(struct sk_buff *skb, struct vgk_vgpu *v)
{
	const struct vgk_shares *s = v->shares;
	struct nlattr *nest, *e;
	unsigned int i;

	lockdep_assert_held(&v->lock);
	nest = nla_nest_start(skb, VGMEM_A_VM_SHARES);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; s && i < s->nr; i++) {
		e = nla_nest_start(skb, i + 1);
		if (!e || nla_put_u32(skb, VGMEM_SHARE_A_ID, s->e[i].id) ||
		    nla_put_string(skb, VGMEM_SHARE_A_PATH, s->e[i].path) ||
		    (s->e[i].readonly &&
		     nla_put_flag(skb, VGMEM_SHARE_A_READONLY)) ||
		    (s->e[i].tag[0] &&
		     nla_put_string(skb, VGMEM_SHARE_A_TAG, s->e[i].tag)))
			return -EMSGSIZE;
		nla_nest_end(skb, e);
	}
	nla_nest_end(skb, nest);
	return 0;
}

int vgk_nl_parse_shares(struct nlattr *nest,
				 struct netlink_ext_ack *extack,
				 struct vgk_shares **out)
{
	struct nlattr *tb[VGMEM_SHARE_A_MAX + 1];
	struct vgk_shares *s;
	unsigned int n = 0, i, j;
	struct nlattr *e;
	int rem, ret;

	nla_for_each_nested(e, nest, rem)
		n++;
	if (n > VGMEM_SHARES_MAX) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "more than 64 shares");
		return -EINVAL;
	}
	s = vgk_shares_alloc(n);
	if (!s)
		return -ENOMEM;
	i = 0;
	nla_for_each_nested(e, nest, rem) {
		struct vgk_share *sh;
		const char *path, *tag;
		u32 id;

		ret = nla_parse_nested(tb, VGMEM_SHARE_A_MAX, e,
				       vgk_nl_share_policy, extack);
		if (ret)
			goto err_free;
		ret = -EINVAL;
		if (!tb[VGMEM_SHARE_A_ID] || !tb[VGMEM_SHARE_A_PATH]) {
			NL_SET_ERR_ATTR_MISS(extack, e, tb[VGMEM_SHARE_A_ID] ?
					     VGMEM_SHARE_A_PATH :
					     VGMEM_SHARE_A_ID);
			NL_SET_ERR_MSG(extack, "a share needs an id and a path");
			goto err_free;
		}
		path = nla_data(tb[VGMEM_SHARE_A_PATH]);
		if (vgk_share_path_check(path)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[VGMEM_SHARE_A_PATH],
					    "a share path must be absolute, without '.' or '..' components");
			goto err_free;
		}
		tag = tb[VGMEM_SHARE_A_TAG] ?
		      nla_data(tb[VGMEM_SHARE_A_TAG]) : "";
		if (tb[VGMEM_SHARE_A_TAG] && !vgmem_share_tag_ok(tag)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[VGMEM_SHARE_A_TAG],
					    "a share tag must have 1 to 36 bytes, no '/' and no control character");
			goto err_free;
		}
		id = nla_get_u32(tb[VGMEM_SHARE_A_ID]);
		for (j = 0; j < i; j++) {
			if (s->e[j].id == id) {
				NL_SET_ERR_MSG_ATTR(extack, tb[VGMEM_SHARE_A_ID],
						    "two shares have the same id");
				goto err_free;
			}
			/* the guest finds a share by its tag: one each */
			if (tag[0] && !strcmp(s->e[j].tag, tag)) {
				NL_SET_ERR_MSG_ATTR(extack, tb[VGMEM_SHARE_A_TAG],
						    "two shares have the same tag");
				goto err_free;
			}
		}
		/* insertion by id: the table stays sorted */
		for (j = i; j > 0 && s->e[j - 1].id > id; j--)
			s->e[j] = s->e[j - 1];
		sh = &s->e[j];
		sh->id = id;
		sh->readonly = nla_get_flag(tb[VGMEM_SHARE_A_READONLY]);
		/* the policy bounds it: it fits with its NUL */
		strscpy_pad(sh->tag, tag, sizeof(sh->tag));
		sh->path = kstrdup(path, GFP_KERNEL);
		i++;
		if (!sh->path) {
			ret = -ENOMEM;
			goto err_free;
		}
		ret = vgk_share_root_check(path);
		if (ret == -ENOENT)
			NL_SET_ERR_MSG_ATTR(extack, tb[VGMEM_SHARE_A_PATH],
					    "a share path does not exist");
		else if (ret == -ENOTDIR)
			NL_SET_ERR_MSG_ATTR(extack, tb[VGMEM_SHARE_A_PATH],
					    "a share path is not a directory");
		else if (ret)
			NL_SET_ERR_MSG_ATTR(extack, tb[VGMEM_SHARE_A_PATH],
					    "a share path cannot be resolved");
		if (ret)
			goto err_free;
	}
	*out = s;
	return 0;

err_free:
	s->nr = i;
	vgk_shares_free(s);
	return ret;
}
