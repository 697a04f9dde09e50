// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libvgnl: requests, dumps and events of the "vgmem" generic netlink
 * family over libnl-genl-3 (vgnl.h says what each call does). The parsing
 * of replies and events and the text helpers, which need no socket, are
 * in nl_parse.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "vgnl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct vgnl {
	struct nl_sock *sk;
	int family;
	int mcgrp;
	/* State of the request in flight (one at a time per handle). */
	int err;
	bool done;
	bool intr;
	unsigned int retries;
	char ext[256];
};

/* ---- pure parsing -------------------------------------------------------- */

/* Where a u64 attribute of a nest lands in the output struct. */
int vgnl_open(struct vgnl **out)
{
	struct vgnl *h;
	int one = 1, ret;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->sk = nl_socket_alloc();
	if (!h->sk) {
		ret = -ENOMEM;
		goto err_free;
	}
	if (genl_connect(h->sk)) {
		ret = -ECONNREFUSED;
		goto err_sock;
	}
	/* Replies with a share table may be larger than a page. */
	nl_socket_enable_msg_peek(h->sk);
	/* Ask for the kernel's reasons: vgnl_ext_msg(). */
	setsockopt(nl_socket_get_fd(h->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	h->family = genl_ctrl_resolve(h->sk, VGMEM_GENL_NAME);
	if (h->family < 0) {
		ret = -ENOENT;
		goto err_sock;
	}
	h->mcgrp = genl_ctrl_resolve_grp(h->sk, VGMEM_GENL_NAME,
					 VGMEM_GENL_MCGRP_EVENTS);
	if (h->mcgrp < 0) {
		ret = -ENOENT;
		goto err_sock;
	}
	*out = h;
	return 0;

err_sock:
	nl_socket_free(h->sk);
err_free:
	free(h);
	return ret;
}

void vgnl_close(struct vgnl *h)
{
	if (!h)
		return;
	nl_socket_free(h->sk);
	free(h);
}

const char *vgnl_ext_msg(const struct vgnl *h)
{
	return h->ext;
}

unsigned int vgnl_dump_retries(const struct vgnl *h)
{
	return h->retries;
}

int vgnl_event_fd(const struct vgnl *h)
{
	return nl_socket_get_fd(h->sk);
}

/* The extended-ack message among the TLVs at p (len bytes), if any. */
static void vgnl_take_ext(struct vgnl *h, void *p, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, p, len, NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(h->ext, sizeof(h->ext), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
}

static int vgnl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct vgnl *h = arg;
	size_t off;

	(void)nla;
	h->err = e->error;
	h->done = true;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		/* The request comes back whole unless the kernel capped it. */
		off = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - NLMSG_HDRLEN;
		off = NLMSG_ALIGN(off);
		vgnl_take_ext(h, (char *)e + off,
			      (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)off);
	}
	return NL_STOP;
}

static int vgnl_ack_cb(struct nl_msg *msg, void *arg)
{
	struct vgnl *h = arg;

	(void)msg;
	h->done = true;
	return NL_STOP;
}

/* NLMSG_DONE ends a dump; a dump that failed carries its errno in it. */
static int vgnl_finish_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct vgnl *h = arg;
	int err;

	h->done = true;
	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
		if (err < 0) {
			h->err = err;
			if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
				vgnl_take_ext(h, (char *)nlmsg_data(nlh) +
					      NLMSG_ALIGN(sizeof(int)),
					      (int)nlh->nlmsg_len - NLMSG_HDRLEN -
					      NLMSG_ALIGN(sizeof(int)));
		}
	}
	return NL_STOP;
}

/* Every message: note the kernel's "this dump saw a change" flag. */
static int vgnl_msg_in_cb(struct nl_msg *msg, void *arg)
{
	struct vgnl *h = arg;

	if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
		h->intr = true;
	return NL_OK;
}

static int vgnl_intr_cb(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct vgnl *)arg)->intr = true;
	return NL_OK;
}

/* Replies of a request: parsed into a growing array. */
struct vgnl_collect {
	int (*parse)(const struct nlmsghdr *nlh, void *item);
	size_t size;
	void *items;
	size_t n, cap;
	int err;
};

static int vgnl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct vgnl_collect *c = arg;
	void *p;
	int err;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;

		p = realloc(c->items, cap * c->size);
		if (!p) {
			c->err = -ENOMEM;
			return NL_SKIP;
		}
		c->items = p;
		c->cap = cap;
	}
	err = c->parse(nlmsg_hdr(msg), (char *)c->items + c->n * c->size);
	if (err) {
		if (!c->err)
			c->err = err;
		return NL_SKIP;
	}
	c->n++;
	return NL_OK;
}

/* Send msg (freed here), read until the ack, error or end of the dump. */
static int vgnl_run(struct vgnl *h, struct nl_msg *msg, struct vgnl_collect *c)
{
	struct nl_cb *cb;
	int ret;

	h->err = 0;
	h->done = false;
	h->intr = false;
	h->ext[0] = '\0';
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	if (c)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, vgnl_valid_cb, c);
	nl_cb_set(cb, NL_CB_MSG_IN, NL_CB_CUSTOM, vgnl_msg_in_cb, h);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, vgnl_intr_cb, h);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, vgnl_finish_cb, h);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, vgnl_ack_cb, h);
	nl_cb_err(cb, NL_CB_CUSTOM, vgnl_err_cb, h);

	ret = nl_send_auto(h->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		nl_cb_put(cb);
		return -EIO;
	}
	while (!h->done) {
		ret = nl_recvmsgs(h->sk, cb);
		if (ret < 0 && ret != -NLE_DUMP_INTR && !h->done) {
			h->err = -EIO;
			break;
		}
	}
	nl_cb_put(cb);
	if (h->err)
		return h->err;
	return c && c->err ? c->err : 0;
}

/*
 * A SET_VM's share table. Each entry is a nest whose type is its position
 * from 1 (the kernel ignores it).
 */
static int vgnl_put_shares(struct nl_msg *msg, const struct vgnl_vm_set *set)
{
	struct nlattr *nest, *e;
	size_t i;

	if (set->nr_shares > VGMEM_SHARES_MAX ||
	    (set->nr_shares && !set->shares))
		return -EINVAL;
	/*
	 * An empty table (clear) is an empty nest, which libnl's
	 * nla_nest_end() would drop: put the bare header instead.
	 */
	if (!set->nr_shares)
		return nla_put(msg, VGMEM_A_VM_SHARES | NLA_F_NESTED, 0, NULL) ?
			-EMSGSIZE : 0;
	/* the kernel's strict parsing wants NLA_F_NESTED on nests */
	nest = nla_nest_start(msg, VGMEM_A_VM_SHARES | NLA_F_NESTED);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < set->nr_shares; i++) {
		const struct vgnl_share *sh = &set->shares[i];

		e = nla_nest_start(msg, (int)(i + 1) | NLA_F_NESTED);
		if (!e || nla_put_u32(msg, VGMEM_SHARE_A_ID, sh->id) ||
		    nla_put_string(msg, VGMEM_SHARE_A_PATH, sh->path) ||
		    (sh->readonly && nla_put_flag(msg, VGMEM_SHARE_A_READONLY)) ||
		    (sh->has_tag &&
		     nla_put_string(msg, VGMEM_SHARE_A_TAG, sh->tag)))
			return -EMSGSIZE;
		nla_nest_end(msg, e);
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* A request of size bytes at least (0: libnl's default, a page). */
static struct nl_msg *vgnl_msg_sized(struct vgnl *h, uint8_t cmd, int flags,
				     size_t size)
{
	struct nl_msg *msg = size ? nlmsg_alloc_size(size) : nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, h->family, 0, flags,
			 cmd, VGMEM_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static struct nl_msg *vgnl_msg(struct vgnl *h, uint8_t cmd, int flags)
{
	return vgnl_msg_sized(h, cmd, flags, 0);
}

/* A dump into *out; 1 if the kernel flagged it interrupted. */
static int vgnl_dump_once(struct vgnl *h, uint8_t cmd, int64_t gpu,
			  struct vgnl_collect *c)
{
	struct nl_msg *msg = vgnl_msg(h, cmd, NLM_F_DUMP);
	int ret;

	if (!msg)
		return -ENOMEM;
	if (gpu >= 0 && nla_put_u32(msg, VGMEM_A_GPU_INDEX, (uint32_t)gpu)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = vgnl_run(h, msg, c);
	if (ret)
		return ret;
	return h->intr ? 1 : 0;
}

static int vgnl_dump(struct vgnl *h, uint8_t cmd, int64_t gpu,
		     struct vgnl_collect *c, void **out, size_t *n)
{
	unsigned int i;
	int ret = -EAGAIN;

	for (i = 0; i < VGNL_DUMP_RETRIES; i++) {
		c->n = 0;
		c->err = 0;
		ret = vgnl_dump_once(h, cmd, gpu, c);
		if (ret != 1)
			break;
		h->retries++;
		ret = -EAGAIN;
	}
	if (ret) {
		free(c->items);
		return ret;
	}
	*out = c->items;
	*n = c->n;
	return 0;
}

static int vgnl_parse_gpu_item(const struct nlmsghdr *nlh, void *item)
{
	return vgnl_parse_gpu(nlh, item);
}

static int vgnl_parse_vm_item(const struct nlmsghdr *nlh, void *item)
{
	return vgnl_parse_vm(nlh, item);
}

int vgnl_list_gpus(struct vgnl *h, struct vgnl_gpu **out, size_t *n)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_gpu_item,
		.size = sizeof(struct vgnl_gpu),
	};

	return vgnl_dump(h, VGMEM_CMD_GET_GPU, -1, &c, (void **)out, n);
}

int vgnl_list_vms(struct vgnl *h, int64_t gpu, struct vgnl_vm **out,
		  size_t *n)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_vm_item,
		.size = sizeof(struct vgnl_vm),
	};

	return vgnl_dump(h, VGMEM_CMD_GET_VM, gpu, &c, (void **)out, n);
}

int vgnl_dump_vms_once(struct vgnl *h, int64_t gpu, struct vgnl_vm **out,
		       size_t *n)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_vm_item,
		.size = sizeof(struct vgnl_vm),
	};
	int ret = vgnl_dump_once(h, VGMEM_CMD_GET_VM, gpu, &c);

	if (ret < 0) {
		free(c.items);
		return ret;
	}
	*out = c.items;
	*n = c.n;
	return ret;
}

/* A request answered by one message of cmd, parsed into out. */
static int vgnl_get_one(struct vgnl *h, struct nl_msg *msg,
			struct vgnl_collect *c, void *out)
{
	int ret = vgnl_run(h, msg, c);

	if (!ret && c->n != 1)
		ret = -EPROTO;
	if (!ret)
		memcpy(out, c->items, c->size);
	free(c->items);
	return ret;
}

int vgnl_get_gpu(struct vgnl *h, uint32_t index, struct vgnl_gpu *out)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_gpu_item,
		.size = sizeof(struct vgnl_gpu),
	};
	struct nl_msg *msg = vgnl_msg(h, VGMEM_CMD_GET_GPU, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, VGMEM_A_GPU_INDEX, index)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return vgnl_get_one(h, msg, &c, out);
}

static int vgnl_parse_lrc_item(const struct nlmsghdr *nlh, void *item)
{
	return vgnl_parse_lrc(nlh, item);
}

int vgnl_get_lrc(struct vgnl *h, struct vgnl_lrc *out)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_lrc_item,
		.size = sizeof(struct vgnl_lrc),
	};
	struct nl_msg *msg = vgnl_msg(h, VGMEM_CMD_GET_LRC, 0);

	if (!msg)
		return -ENOMEM;
	return vgnl_get_one(h, msg, &c, out);
}

int vgnl_get_vm(struct vgnl *h, const uint8_t uuid[VGMEM_UUID_LEN],
		struct vgnl_vm *out)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_vm_item,
		.size = sizeof(struct vgnl_vm),
	};
	struct nl_msg *msg = vgnl_msg(h, VGMEM_CMD_GET_VM, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return vgnl_get_one(h, msg, &c, out);
}

int vgnl_set_vm(struct vgnl *h, const uint8_t uuid[VGMEM_UUID_LEN],
		const struct vgnl_vm_set *set)
{
	size_t size = 4096, i;
	struct nl_msg *msg;

	/* a share table may need more than a page: each path plus headers */
	for (i = 0; set->has_shares && set->shares && i < set->nr_shares &&
	     i < VGMEM_SHARES_MAX; i++)
		size += strnlen(set->shares[i].path,
				sizeof(set->shares[i].path)) +
			sizeof(set->shares[i].tag) + 48;
	msg = vgnl_msg_sized(h, VGMEM_CMD_SET_VM, 0, size);

	if (!msg)
		return -ENOMEM;
	if (nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid) ||
	    (set->has_quota &&
	     nla_put_u64(msg, VGMEM_A_VM_QUOTA, set->quota)) ||
	    (set->has_entitlement &&
	     nla_put_u64(msg, VGMEM_A_VM_ENTITLEMENT, set->entitlement)) ||
	    (set->has_shares && vgnl_put_shares(msg, set))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return vgnl_run(h, msg, NULL);
}

/* The GET_VM reply's share table, kept by the collector. */
struct vgnl_shares_reply {
	struct vgnl_share *shares;
	size_t n;
};

static int vgnl_parse_shares_item(const struct nlmsghdr *nlh, void *item)
{
	struct vgnl_shares_reply *r = item;

	return vgnl_parse_vm_shares(nlh, &r->shares, &r->n);
}

int vgnl_get_vm_shares(struct vgnl *h, const uint8_t uuid[VGMEM_UUID_LEN],
		       struct vgnl_share **out, size_t *n)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_shares_item,
		.size = sizeof(struct vgnl_shares_reply),
	};
	struct nl_msg *msg = vgnl_msg(h, VGMEM_CMD_GET_VM, 0);
	struct vgnl_shares_reply *r;
	size_t i;
	int ret;

	*out = NULL;
	*n = 0;
	if (!msg)
		return -ENOMEM;
	if (nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = vgnl_run(h, msg, &c);
	r = c.items;
	if (!ret && c.n != 1)
		ret = -EPROTO;
	if (!ret) {
		*out = r[0].shares;
		*n = r[0].n;
		r[0].shares = NULL;
	}
	for (i = 0; i < c.n; i++)
		free(r[i].shares);
	free(c.items);
	return ret;
}

int vgnl_set_gpu(struct vgnl *h, uint32_t index,
		 const struct vgnl_gpu_set *set)
{
	struct nl_msg *msg = vgnl_msg(h, VGMEM_CMD_SET_GPU, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, VGMEM_A_GPU_INDEX, index) ||
	    (set->has_policy &&
	     nla_put_u32(msg, VGMEM_A_GPU_POLICY, set->policy)) ||
	    (set->has_return_ms &&
	     nla_put_u32(msg, VGMEM_A_GPU_RETURN_MS, set->return_ms)) ||
	    (set->has_oversub &&
	     nla_put_u32(msg, VGMEM_A_GPU_OVERSUB_PCT, set->oversub_pct))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return vgnl_run(h, msg, NULL);
}

int vgnl_raw_request(struct vgnl *h, uint8_t cmd, int flags,
		     const void *attrs, size_t len)
{
	struct vgnl_collect c = {
		.parse = vgnl_parse_vm_item,	/* replies are only counted */
		.size = sizeof(struct vgnl_vm),
	};
	struct nl_msg *msg = vgnl_msg(h, cmd, flags);

	if (!msg)
		return -ENOMEM;
	if (len && nlmsg_append(msg, (void *)attrs, len, 0)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	/* A reply that is not a VM is fine here: only the error counts. */
	vgnl_run(h, msg, &c);
	free(c.items);
	return h->err;
}

/* ---- events ------------------------------------------------------------ */

int vgnl_subscribe(struct vgnl *h)
{
	/* Events carry no request's sequence number. */
	nl_socket_disable_seq_check(h->sk);
	/*
	 * Room for a burst (a relocation storm sends one event per batch)
	 * between two reads; the kernel caps it at net.core.rmem_max.
	 */
	nl_socket_set_buffer_size(h->sk, VGNL_EVENT_RCVBUF, 0);
	/*
	 * setsockopt() itself rather than nl_socket_add_membership(), whose
	 * libnl error code would hide the kernel's errno: the group needs
	 * CAP_NET_ADMIN unless vgmem.ko is loaded with netlink_open=1, and
	 * -EPERM must reach the caller as such.
	 */
	if (setsockopt(nl_socket_get_fd(h->sk), SOL_NETLINK,
		       NETLINK_ADD_MEMBERSHIP, &h->mcgrp, sizeof(h->mcgrp)))
		return -errno;
	return 0;
}

struct vgnl_ev_ctx {
	vgnl_event_fn fn;
	void *priv;
	int ret;
};

static int vgnl_event_cb(struct nl_msg *msg, void *arg)
{
	struct vgnl_ev_ctx *x = arg;
	struct vgnl_event ev;

	if (vgnl_parse_event(nlmsg_hdr(msg), &ev))
		return NL_SKIP;		/* not ours to judge: skip it */
	x->ret = x->fn(&ev, x->priv);
	return x->ret ? NL_STOP : NL_OK;
}

int vgnl_read_events(struct vgnl *h, vgnl_event_fn fn, void *priv)
{
	struct vgnl_ev_ctx x = { .fn = fn, .priv = priv };
	/* The socket's: it has the sequence check off (vgnl_subscribe). */
	struct nl_cb *s_cb = nl_socket_get_cb(h->sk);	/* a reference */
	struct nl_cb *cb = nl_cb_clone(s_cb);
	int ret;

	nl_cb_put(s_cb);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, vgnl_event_cb, &x);
	ret = nl_recvmsgs(h->sk, cb);
	nl_cb_put(cb);
	if (x.ret)
		return x.ret;
	/* libnl reports the queue overrun (ENOBUFS) as NLE_NOMEM. */
	if (ret == -NLE_NOMEM)
		return -ENOBUFS;
	return ret < 0 ? -EIO : 0;
}
