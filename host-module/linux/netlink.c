// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "vgmem": GPUs and vGPUs with their statistics,
 * the knobs mgmtd turns (entitlement, quota, chunk policy, return interval,
 * oversubscription limit) and a multicast group of events (its messages are
 * built in events.c). The protocol is specified in
 * include/uapi/vgmem_netlink.h and explained in docs/abi.md.
 *
 * Who may ask: writes (SET_*) need CAP_NET_ADMIN, and so do GET_VM and the
 * events group unless the module is loaded with netlink_open=1 (below);
 * GET_GPU and GET_LRC are open.
 *
 * Locking: requests hold vgk_gpus_lock while they use a GPU (so it stays
 * registered) and a GPU's lock while they walk its vGPUs; a request that
 * must call code taking the GPU's lock itself keeps its vGPU alive with a
 * reference on the VFIO device instead.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/uuid.h>
#include <net/genetlink.h>

#include "vgk_drv.h"

/*
 * GET_VM and the events group tell whoever asks every tenant's VM UUIDs,
 * usage, pressure, relocation sizes and suspension times, and channel
 * faults: on a shared host that is the operator's business, so both need
 * CAP_NET_ADMIN (in the initial user namespace) unless the operator opens
 * them here. Read-only once loaded: the group's permission is checked when
 * a socket joins, so closing it later would leave the members that joined
 * while it was open listening.
 */
static bool netlink_open;
module_param(netlink_open, bool, 0444);
MODULE_PARM_DESC(netlink_open,
		 "let users without CAP_NET_ADMIN read vGPUs (GET_VM) and join the events group (default: no)");

/* Flags set at init from netlink_open, before the family registers. */
static struct genl_multicast_group vgk_nl_mcgrps[] __ro_after_init = {
	[VGK_NL_MCGRP_EVENTS] = { .name = VGMEM_GENL_MCGRP_EVENTS },
};

/* ---- policies ---------------------------------------------------------- */

/* Not const: 6.1's NLA_POLICY_FULL_RANGE() takes a non-const pointer. */
static struct netlink_range_validation vgk_nl_oversub_range = {
	.min = 0,
	.max = VGMEM_OVERSUB_PCT_MAX,
};

static struct netlink_range_validation vgk_nl_quota_range = {
	.min = VGMEM_PAGE_SIZE,
	.max = U64_MAX,
};

/*
 * Each command names exactly the attributes it accepts: strict parsing
 * refuses every other one with "Unsupported attribute".
 */
static const struct nla_policy vgk_nl_get_gpu_policy[VGMEM_A_MAX + 1] = {
	[VGMEM_A_GPU_INDEX] = { .type = NLA_U32 },
};

static const struct nla_policy vgk_nl_set_gpu_policy[VGMEM_A_MAX + 1] = {
	[VGMEM_A_GPU_INDEX] = { .type = NLA_U32 },
	[VGMEM_A_GPU_POLICY] = NLA_POLICY_MAX(NLA_U32, VGMEM_POLICY_MAX),
	[VGMEM_A_GPU_RETURN_MS] = NLA_POLICY_RANGE(NLA_U32, VGMEM_RETURN_MS_MIN,
						   VGMEM_RETURN_MS_MAX),
	[VGMEM_A_GPU_OVERSUB_PCT] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &vgk_nl_oversub_range),
};

static const struct nla_policy vgk_nl_get_vm_policy[VGMEM_A_MAX + 1] = {
	[VGMEM_A_GPU_INDEX] = { .type = NLA_U32 },
	[VGMEM_A_VM_UUID] = NLA_POLICY_EXACT_LEN(VGMEM_UUID_LEN),
};

/* GET_LRC names no attribute: strict parsing refuses every one. */
static const struct nla_policy vgk_nl_get_lrc_policy[VGMEM_A_MAX + 1] = {
};

static const struct nla_policy vgk_nl_set_vm_policy[VGMEM_A_MAX + 1] = {
	[VGMEM_A_VM_UUID] = NLA_POLICY_EXACT_LEN(VGMEM_UUID_LEN),
	[VGMEM_A_VM_QUOTA] = NLA_POLICY_FULL_RANGE(NLA_U64,
						   &vgk_nl_quota_range),
	[VGMEM_A_VM_ENTITLEMENT] = { .type = NLA_U64 },
	[VGMEM_A_VM_SHARES] = NLA_POLICY_NESTED_ARRAY(vgk_nl_share_policy),
};

/* ---- UUIDs ------------------------------------------------------------- */

/*
 * The wire carries a UUID in the order of its text (RFC 4122); the mdev
 * core keeps a guid_t, whose first three fields are little endian (that is
 * how it prints the name with %pUl). The swap is its own inverse.
 */
void vgk_nl_swap_uuid(u8 *dst, const u8 *src)
{
	static const u8 order[VGMEM_UUID_LEN] = {
		3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15
	};
	unsigned int i;

	for (i = 0; i < VGMEM_UUID_LEN; i++)
		dst[i] = src[order[i]];
}

int vgk_nl_put_uuid(struct sk_buff *skb, struct vgk_vgpu *v)
{
	u8 u[VGMEM_UUID_LEN];

	vgk_nl_swap_uuid(u, v->mdev->uuid.b);
	return nla_put(skb, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, u);
}

/*
 * A required attribute: names the missing type (NLMSGERR_ATTR_MISS_TYPE)
 * and says so in words, for tools that only print the message.
 */
#define vgk_nl_missing(info, attr, msg) ({				\
	bool __missing = !(info)->attrs[attr];				\
									\
	if (__missing) {						\
		NL_SET_ERR_ATTR_MISS((info)->extack, NULL, (attr));	\
		/* A macro: NL_SET_ERR_MSG() wants a string literal. */	\
		NL_SET_ERR_MSG((info)->extack, msg);			\
	}								\
	__missing;							\
})

/* ---- lookups ------------------------------------------------------------ */

/* The registered GPU with the lowest index at or above min; gpus lock held. */
static struct vgk_gpu *vgk_nl_gpu_from(int min)
{
	struct vgk_gpu *gpu, *best = NULL;

	lockdep_assert_held(&vgk_gpus_lock);
	list_for_each_entry(gpu, &vgk_gpus, node)
		if (gpu->id >= min && (!best || gpu->id < best->id))
			best = gpu;
	return best;
}

static struct vgk_gpu *vgk_nl_gpu_find(u32 index)
{
	struct vgk_gpu *gpu;

	if (index > INT_MAX)
		return NULL;
	gpu = vgk_nl_gpu_from(index);
	return gpu && gpu->id == index ? gpu : NULL;
}

/*
 * The vGPU with this UUID (wire order), returned with its GPU's lock held
 * (which keeps it on the GPU's list and so alive), or NULL.
 */
static struct vgk_vgpu *vgk_nl_vgpu_find_locked(const u8 *uuid)
{
	struct vgk_gpu *gpu;
	struct vgk_vgpu *v;
	guid_t g;

	lockdep_assert_held(&vgk_gpus_lock);
	vgk_nl_swap_uuid(g.b, uuid);
	list_for_each_entry(gpu, &vgk_gpus, node) {
		mutex_lock(&gpu->lock);
		list_for_each_entry(v, &gpu->vgpus, node)
			if (guid_equal(&v->mdev->uuid, &g))
				return v;
		mutex_unlock(&gpu->lock);
	}
	return NULL;
}

/* ---- messages ------------------------------------------------------------ */

static int vgk_nl_put_hist(struct sk_buff *skb, int type, const u64 *hist)
{
	struct nlattr *nest;
	unsigned int i;

	nest = nla_nest_start(skb, type);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < VGMEM_HIST_BUCKETS; i++) {
		if (nla_put_u64_64bit(skb, VGMEM_HIST_A_BUCKET(i), hist[i],
				      VGMEM_HIST_A_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Where each attribute of a stats nest is in its struct, generated from the
 * tables of <uapi/vgmem_stats.h> (one line per counter): a table rather
 * than a copy on the stack (the file cache's struct is 300 bytes).
 */
struct vgk_nl_field {
	int type;
	int kind;		/* VGMEM_STAT_* */
	size_t off;
};

#define GS(field, attr, kind, ...)					\
	{ VGMEM_GS_ ## attr, kind, offsetof(struct vg_gpu_stats, field) },
static const struct vgk_nl_field vgk_nl_gpu_fields[] = {
	VGMEM_GPU_STATS(GS)
};
#undef GS

#define VS(field, attr, kind, ...)					\
	{ VGMEM_VS_ ## attr, kind, offsetof(struct vgmem_vm_stats, field) },
static const struct vgk_nl_field vgk_nl_vm_fields[] = {
	VGMEM_VM_STATS(VS)
};
#undef VS

#define LS(field, attr, kind, ...)					\
	{ VGMEM_LS_ ## attr, kind, offsetof(struct vg_lrc_stats, field) },
static const struct vgk_nl_field vgk_nl_lrc_fields[] = {
	VGMEM_LRC_STATS(LS)
};
#undef LS

/* A stats nest: every attribute of its table, from the struct at st. */
static int vgk_nl_put_stats(struct sk_buff *skb, int nest_type, int pad,
			    const struct vgk_nl_field *fields,
			    unsigned int n, const void *st)
{
	struct nlattr *nest;
	unsigned int i;

	nest = nla_nest_start(skb, nest_type);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		const u64 *v = (const u64 *)((const char *)st + fields[i].off);
		int ret;

		if (fields[i].kind == VGMEM_STAT_HIST)
			ret = vgk_nl_put_hist(skb, fields[i].type, v);
		else
			ret = nla_put_u64_64bit(skb, fields[i].type, *v, pad);
		if (ret)
			goto err_cancel;
	}
	nla_nest_end(skb, nest);
	return 0;

err_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int vgk_nl_put_gpu_stats(struct sk_buff *skb,
				const struct vg_gpu_stats *st)
{
	BUILD_BUG_ON(ARRAY_SIZE(vgk_nl_gpu_fields) != VGMEM_GS_MAX - VGMEM_GS_PAD);
	return vgk_nl_put_stats(skb, VGMEM_A_GPU_STATS, VGMEM_GS_PAD,
				vgk_nl_gpu_fields,
				ARRAY_SIZE(vgk_nl_gpu_fields), st);
}

/* One GET_GPU message; cb is set in dumps. vgk_gpus_lock held. */
static int vgk_nl_fill_gpu(struct sk_buff *skb, struct vgk_gpu *gpu,
			   u32 portid, u32 seq, int flags,
			   struct netlink_callback *cb)
{
	struct vg_gpu_stats st;
	struct vgk_vgpu *v;
	u32 nr_vgpus = 0, return_ms;
	u64 committed;
	void *hdr;

	vg_gpu_get_stats(gpu->core, &st);
	mutex_lock(&gpu->lock);
	list_for_each_entry(v, &gpu->vgpus, node)
		nr_vgpus++;
	committed = gpu->committed;
	return_ms = gpu->return_ms;
	mutex_unlock(&gpu->lock);

	hdr = genlmsg_put(skb, portid, seq, &vgk_genl_family, flags,
			  VGMEM_CMD_GET_GPU);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_u32(skb, VGMEM_A_GPU_INDEX, gpu->id) ||
	    nla_put_string(skb, VGMEM_A_GPU_NAME, dev_name(gpu->dev)) ||
	    nla_put_u64_64bit(skb, VGMEM_A_GPU_VRAM_SIZE, st.vram_size,
			      VGMEM_A_PAD) ||
	    nla_put_u64_64bit(skb, VGMEM_A_GPU_VRAM_USED, st.vram_used,
			      VGMEM_A_PAD) ||
	    nla_put_u64_64bit(skb, VGMEM_A_GPU_HOST_USED, st.host_used,
			      VGMEM_A_PAD) ||
	    nla_put_u64_64bit(skb, VGMEM_A_GPU_CHUNK_SIZE, st.chunk_size,
			      VGMEM_A_PAD) ||
	    nla_put_u32(skb, VGMEM_A_GPU_POLICY, st.policy) ||
	    nla_put_u32(skb, VGMEM_A_GPU_RETURN_MS, return_ms) ||
	    nla_put_u32(skb, VGMEM_A_GPU_OVERSUB_PCT, vgk_gpu_oversub(gpu)) ||
	    nla_put_u64_64bit(skb, VGMEM_A_GPU_COMMITTED, committed,
			      VGMEM_A_PAD) ||
	    nla_put_u32(skb, VGMEM_A_GPU_NR_VGPUS, nr_vgpus) ||
	    nla_put_u32(skb, VGMEM_A_GPU_NR_VMS, st.nr_vms) ||
	    nla_put_u64_64bit(skb, VGMEM_A_GPU_CACHE_USED, st.cache_used,
			      VGMEM_A_PAD) ||
	    vgk_nl_put_gpu_stats(skb, &st))
		goto err_cancel;
	genlmsg_end(skb, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int vgk_nl_put_vm_stats(struct sk_buff *skb,
			       const struct vgmem_vm_stats *st)
{
	BUILD_BUG_ON(ARRAY_SIZE(vgk_nl_vm_fields) != VGMEM_VS_MAX - VGMEM_VS_PAD);
	return vgk_nl_put_stats(skb, VGMEM_A_VM_STATS, VGMEM_VS_PAD,
				vgk_nl_vm_fields,
				ARRAY_SIZE(vgk_nl_vm_fields), st);
}

/*
 * One GET_VM message; the vGPU's GPU lock held (v stays on its list). With
 * shares (a reply to an administrator's request, never a dump) it carries
 * the share table too: host paths are the operator's business, not every
 * local user's.
 */
static int vgk_nl_fill_vm(struct sk_buff *skb, struct vgk_vgpu *v,
			  u32 portid, u32 seq, int flags,
			  struct netlink_callback *cb, bool shares)
{
	char type[48];
	void *hdr;
	struct vgmem_vm_stats *st;
	u64 cache;
	int ret = -EMSGSIZE;

	lockdep_assert_held(&v->gpu->lock);
	/* Two histograms: too big for the stack of a netlink handler. */
	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	vgk_vgpu_stats(v, st);
	/* Order v->lock, then the core's: as vgk_vgpu_stats(). */
	mutex_lock(&v->lock);
	cache = v->vm ? vg_vm_cache_private(v->vm) : 0;
	mutex_unlock(&v->lock);
	snprintf(type, sizeof(type), "%s-%s", vgk_mdev_driver.driver.name,
		 v->type->type.sysfs_name);

	hdr = genlmsg_put(skb, portid, seq, &vgk_genl_family, flags,
			  VGMEM_CMD_GET_VM);
	if (!hdr)
		goto out_free;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (vgk_nl_put_uuid(skb, v) ||
	    nla_put_u32(skb, VGMEM_A_GPU_INDEX, v->gpu->id) ||
	    nla_put_string(skb, VGMEM_A_VM_TYPE, type) ||
	    nla_put_u8(skb, VGMEM_A_VM_ACTIVE, READ_ONCE(v->vm) ? 1 : 0) ||
	    nla_put_u64_64bit(skb, VGMEM_A_VM_QUOTA, st->quota, VGMEM_A_PAD) ||
	    nla_put_u64_64bit(skb, VGMEM_A_VM_ENTITLEMENT, st->entitlement,
			      VGMEM_A_PAD) ||
	    nla_put_u64_64bit(skb, VGMEM_A_VM_CACHE_PRIVATE, cache,
			      VGMEM_A_PAD) ||
	    vgk_nl_put_vm_stats(skb, st)) {
		genlmsg_cancel(skb, hdr);
		goto out_free;
	}
	if (shares) {
		mutex_lock(&v->lock);
		ret = vgk_nl_put_shares(skb, v);
		mutex_unlock(&v->lock);
		if (ret) {
			genlmsg_cancel(skb, hdr);
			goto out_free;
		}
	}
	genlmsg_end(skb, hdr);
	ret = 0;
out_free:
	kfree(st);
	return ret;
}

/* ---- GET_GPU ------------------------------------------------------------- */

static int vgk_nl_get_gpu_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct vgk_gpu *gpu;
	struct sk_buff *msg;
	int ret;

	if (vgk_nl_missing(info, VGMEM_A_GPU_INDEX,
			   "VGMEM_A_GPU_INDEX is required"))
		return -EINVAL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&vgk_gpus_lock);
	gpu = vgk_nl_gpu_find(nla_get_u32(info->attrs[VGMEM_A_GPU_INDEX]));
	if (!gpu) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[VGMEM_A_GPU_INDEX],
				    "no GPU with this index");
		ret = -ENODEV;
	} else {
		ret = vgk_nl_fill_gpu(msg, gpu, info->snd_portid,
				      info->snd_seq, 0, NULL);
	}
	mutex_unlock(&vgk_gpus_lock);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/* Dump state: the next GPU index, and the next vGPU's position on it. */
struct vgk_nl_dump {
	int gpu;
	int pos;
};
static_assert(sizeof(struct vgk_nl_dump) <=
	      sizeof_field(struct netlink_callback, ctx));

static int vgk_nl_get_gpu_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct vgk_nl_dump *d = (struct vgk_nl_dump *)cb->ctx;
	struct vgk_gpu *gpu;
	int ret = 0;

	mutex_lock(&vgk_gpus_lock);
	/* Compared between the parts of the dump: see the UAPI header. */
	cb->seq = vgk_registry_gen();
	while ((gpu = vgk_nl_gpu_from(d->gpu))) {
		ret = vgk_nl_fill_gpu(skb, gpu, NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI, cb);
		if (ret)
			break;
		d->gpu = gpu->id + 1;
	}
	mutex_unlock(&vgk_gpus_lock);
	/* A full buffer ends this part; the next call resumes at d->gpu. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ? ret : skb->len;
}

/* ---- GET_VM ---------------------------------------------------------------- */

static int vgk_nl_get_vm_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct vgk_vgpu *v;
	struct sk_buff *msg;
	size_t size;
	int ret;

	if (vgk_nl_missing(info, VGMEM_A_VM_UUID,
			   "VGMEM_A_VM_UUID is required"))
		return -EINVAL;
	if (info->attrs[VGMEM_A_GPU_INDEX]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[VGMEM_A_GPU_INDEX],
				    "a GPU index only filters dumps");
		return -EINVAL;
	}
	mutex_lock(&vgk_gpus_lock);
	v = vgk_nl_vgpu_find_locked(nla_data(info->attrs[VGMEM_A_VM_UUID]));
	if (!v) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[VGMEM_A_VM_UUID],
				    "no vGPU with this UUID");
		mutex_unlock(&vgk_gpus_lock);
		return -ENODEV;
	}
	/*
	 * The share table may outgrow a page. It cannot change before the
	 * reply is filled: SET_VM holds vgk_gpus_lock too.
	 */
	mutex_lock(&v->lock);
	size = NLMSG_GOODSIZE + vgk_shares_nla_size(v->shares);
	mutex_unlock(&v->lock);
	msg = genlmsg_new(size, GFP_KERNEL);
	ret = msg ? vgk_nl_fill_vm(msg, v, info->snd_portid, info->snd_seq,
				   0, NULL,
				   netlink_capable(skb, CAP_NET_ADMIN)) :
		    -ENOMEM;
	mutex_unlock(&v->gpu->lock);
	mutex_unlock(&vgk_gpus_lock);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/* The vGPUs of one GPU from position d->pos on; gpu->lock held. */
static int vgk_nl_dump_vms_of(struct sk_buff *skb,
			      struct netlink_callback *cb,
			      struct vgk_gpu *gpu, struct vgk_nl_dump *d)
{
	struct vgk_vgpu *v;
	int pos = 0, ret;

	lockdep_assert_held(&gpu->lock);
	list_for_each_entry(v, &gpu->vgpus, node) {
		if (pos++ < d->pos)
			continue;
		ret = vgk_nl_fill_vm(skb, v, NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, NLM_F_MULTI, cb,
				     false);
		if (ret)
			return ret;
		d->pos = pos;
	}
	return 0;
}

static int vgk_nl_get_vm_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct nlattr **attrs = vgk_genl_dump_attrs(cb);
	struct vgk_nl_dump *d = (struct vgk_nl_dump *)cb->ctx;
	struct nlattr *only = attrs[VGMEM_A_GPU_INDEX];
	struct vgk_gpu *gpu;
	int ret = 0;

	if (attrs[VGMEM_A_VM_UUID]) {
		NL_SET_ERR_MSG_ATTR(cb->extack, attrs[VGMEM_A_VM_UUID],
				    "a dump takes no UUID: ask for one vGPU without NLM_F_DUMP");
		return -EINVAL;
	}
	mutex_lock(&vgk_gpus_lock);
	cb->seq = vgk_registry_gen();
	if (only && !d->gpu && !d->pos) {
		gpu = vgk_nl_gpu_find(nla_get_u32(only));
		if (!gpu) {
			NL_SET_ERR_MSG_ATTR(cb->extack, only,
					    "no GPU with this index");
			ret = -ENODEV;
			goto out_unlock;
		}
		d->gpu = gpu->id;
	}
	while ((gpu = vgk_nl_gpu_from(d->gpu))) {
		if (only && gpu->id != nla_get_u32(only))
			break;
		mutex_lock(&gpu->lock);
		ret = vgk_nl_dump_vms_of(skb, cb, gpu, d);
		mutex_unlock(&gpu->lock);
		if (ret)
			break;
		d->gpu = gpu->id + 1;
		d->pos = 0;
	}
out_unlock:
	mutex_unlock(&vgk_gpus_lock);
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ? ret : skb->len;
}

/* ---- GET_LRC ------------------------------------------------------------- */

static int vgk_nl_put_lrc_stats(struct sk_buff *skb,
				const struct vg_lrc_stats *st)
{
	/* Every counter of the struct goes out: both come from one table. */
	BUILD_BUG_ON(ARRAY_SIZE(vgk_nl_lrc_fields) * sizeof(u64) !=
		     sizeof(*st));
	BUILD_BUG_ON(ARRAY_SIZE(vgk_nl_lrc_fields) != VGMEM_LS_MAX - VGMEM_LS_PAD);
	return vgk_nl_put_stats(skb, VGMEM_A_LRC_STATS, VGMEM_LS_PAD,
				vgk_nl_lrc_fields,
				ARRAY_SIZE(vgk_nl_lrc_fields), st);
}

static int vgk_nl_get_lrc_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct vg_lrc_stats st;
	struct vgk_gpu *gpu;
	struct sk_buff *msg;
	u32 nr_gpus = 0;
	void *hdr;

	vgk_lrc_get_stats(&st);
	mutex_lock(&vgk_gpus_lock);
	list_for_each_entry(gpu, &vgk_gpus, node)
		if (gpu->lrc)
			nr_gpus++;
	mutex_unlock(&vgk_gpus_lock);

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq,
			  &vgk_genl_family, 0, VGMEM_CMD_GET_LRC);
	if (!hdr || nla_put_u32(msg, VGMEM_A_LRC_NR_GPUS, nr_gpus) ||
	    vgk_nl_put_lrc_stats(msg, &st)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* ---- SET_GPU ------------------------------------------------------------- */

static int vgk_nl_set_gpu_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *policy = info->attrs[VGMEM_A_GPU_POLICY];
	struct nlattr *ret_ms = info->attrs[VGMEM_A_GPU_RETURN_MS];
	struct nlattr *oversub = info->attrs[VGMEM_A_GPU_OVERSUB_PCT];
	struct vgk_gpu *gpu;
	int ret = 0;

	if (vgk_nl_missing(info, VGMEM_A_GPU_INDEX,
			   "VGMEM_A_GPU_INDEX is required"))
		return -EINVAL;
	if (!policy && !ret_ms && !oversub) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to set: give a policy, a return interval or an oversubscription limit");
		return -EINVAL;
	}
	mutex_lock(&vgk_gpus_lock);
	gpu = vgk_nl_gpu_find(nla_get_u32(info->attrs[VGMEM_A_GPU_INDEX]));
	if (!gpu) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[VGMEM_A_GPU_INDEX],
				    "no GPU with this index");
		ret = -ENODEV;
		goto out_unlock;
	}
	/* The policies validated every value: none of these can fail now. */
	if (policy) {
		ret = vg_gpu_set_policy(gpu->core, nla_get_u32(policy));
		if (ret) {
			NL_SET_ERR_MSG_ATTR(info->extack, policy,
					    "the core refused the policy");
			goto out_unlock;
		}
	}
	if (ret_ms) {
		mutex_lock(&gpu->lock);
		ret = vg_gpu_set_return_interval(gpu->core,
						 nla_get_u32(ret_ms));
		if (!ret)
			gpu->return_ms = nla_get_u32(ret_ms);
		mutex_unlock(&gpu->lock);
		if (ret) {
			NL_SET_ERR_MSG_ATTR(info->extack, ret_ms,
					    "the core refused the return interval");
			goto out_unlock;
		}
	}
	if (oversub)
		vgk_gpu_set_oversub(gpu, nla_get_u32(oversub));
out_unlock:
	mutex_unlock(&vgk_gpus_lock);
	return ret;
}

/* ---- SET_VM ------------------------------------------------------------- */

static int vgk_nl_set_vm_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *ent = info->attrs[VGMEM_A_VM_ENTITLEMENT];
	struct nlattr *quota = info->attrs[VGMEM_A_VM_QUOTA];
	struct nlattr *shares = info->attrs[VGMEM_A_VM_SHARES];
	struct netlink_ext_ack *extack = info->extack;
	struct vgk_shares *table = NULL;
	struct vgk_vgpu *v;
	int ret;

	if (vgk_nl_missing(info, VGMEM_A_VM_UUID,
			   "VGMEM_A_VM_UUID is required"))
		return -EINVAL;
	if (!ent && !quota && !shares) {
		NL_SET_ERR_MSG(extack,
			       "nothing to set: give an entitlement, a quota or shares");
		return -EINVAL;
	}
	if (quota && !IS_ALIGNED(nla_get_u64(quota), VGMEM_PAGE_SIZE)) {
		NL_SET_ERR_MSG_ATTR(extack, quota,
				    "a quota must be a multiple of 4096 bytes");
		return -EINVAL;
	}
	if (shares) {
		ret = vgk_nl_parse_shares(shares, extack, &table);
		if (ret)
			return ret;
	}

	mutex_lock(&vgk_gpus_lock);
	v = vgk_nl_vgpu_find_locked(nla_data(info->attrs[VGMEM_A_VM_UUID]));
	if (!v) {
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[VGMEM_A_VM_UUID],
				    "no vGPU with this UUID");
		ret = -ENODEV;
		goto out_unlock;
	}
	if (ent && nla_get_u64(ent) > v->gpu->vram_size) {
		mutex_unlock(&v->gpu->lock);
		NL_SET_ERR_MSG_ATTR(extack, ent,
				    "an entitlement cannot exceed the GPU's VRAM");
		ret = -EINVAL;
		goto out_unlock;
	}
	/*
	 * The setters take the GPU's lock themselves; the device reference
	 * keeps v allocated and vgk_gpus_lock keeps its GPU, and a vGPU
	 * removed meanwhile makes the quota change fail with -ENODEV.
	 */
	get_device(&v->vdev.device);
	mutex_unlock(&v->gpu->lock);

	/* The quota first: it is the change that can be refused. */
	ret = 0;
	if (quota) {
		ret = vgk_gpu_set_quota(v->gpu, v, nla_get_u64(quota));
		if (ret == -EBUSY)
			NL_SET_ERR_MSG_ATTR(extack, quota,
					    "the VM has more allocated than this quota");
		else if (ret == -ENOSPC)
			NL_SET_ERR_MSG_ATTR(extack, quota,
					    "the GPU's oversubscription limit does not admit this quota");
		else if (ret == -ENODEV)
			NL_SET_ERR_MSG(extack, "the vGPU is being removed");
		else if (ret)
			NL_SET_ERR_MSG_ATTR(extack, quota,
					    "the quota was refused");
	}
	if (!ret && ent) {
		ret = vgk_vgpu_set_entitlement(v, nla_get_u64(ent));
		if (ret)
			NL_SET_ERR_MSG_ATTR(extack, ent,
					    "the core refused the entitlement");
	}
	/* The shares last: replacing the table cannot fail. */
	if (!ret && shares) {
		vgk_vgpu_set_shares(v, table);
		table = NULL;
	}
	put_device(&v->vdev.device);
out_unlock:
	mutex_unlock(&vgk_gpus_lock);
	vgk_shares_free(table);
	return ret;
}

/* ---- the family ------------------------------------------------------------- */

/* GET_VM's flags are set at init from netlink_open. */
static struct genl_ops vgk_nl_ops[] __ro_after_init = {
	{
		.cmd = VGMEM_CMD_GET_GPU,
		.doit = vgk_nl_get_gpu_doit,
		.dumpit = vgk_nl_get_gpu_dumpit,
		.policy = vgk_nl_get_gpu_policy,
		.maxattr = VGMEM_A_MAX,
	},
	{
		.cmd = VGMEM_CMD_SET_GPU,
		.doit = vgk_nl_set_gpu_doit,
		.policy = vgk_nl_set_gpu_policy,
		.maxattr = VGMEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = VGMEM_CMD_GET_VM,
		.doit = vgk_nl_get_vm_doit,
		.dumpit = vgk_nl_get_vm_dumpit,
		.policy = vgk_nl_get_vm_policy,
		.maxattr = VGMEM_A_MAX,
	},
	{
		.cmd = VGMEM_CMD_SET_VM,
		.doit = vgk_nl_set_vm_doit,
		.policy = vgk_nl_set_vm_policy,
		.maxattr = VGMEM_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = VGMEM_CMD_GET_LRC,
		.doit = vgk_nl_get_lrc_doit,
		.policy = vgk_nl_get_lrc_policy,
		.maxattr = VGMEM_A_MAX,
	},
};

struct genl_family vgk_genl_family __ro_after_init = {
	.name = VGMEM_GENL_NAME,
	.version = VGMEM_GENL_VERSION,
	.maxattr = VGMEM_A_MAX,
	.module = THIS_MODULE,
	/* Our own locks serialise what needs it; dumps need not wait. */
	.parallel_ops = true,
	.ops = vgk_nl_ops,
	.n_ops = ARRAY_SIZE(vgk_nl_ops),
	.mcgrps = vgk_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(vgk_nl_mcgrps),
};

int vgk_netlink_init(void)
{
	int ret;

	/* The wire names the core's enums by value. */
	BUILD_BUG_ON((int)VGMEM_POLICY_RANDOM != (int)VG_POLICY_RANDOM ||
		     (int)VGMEM_POLICY_LRA != (int)VG_POLICY_LRA ||
		     (int)VGMEM_POLICY_COLD != (int)VG_POLICY_COLD ||
		     (int)__VGMEM_POLICY_MAX != (int)VG_POLICY_NR);
	BUILD_BUG_ON(sizeof(guid_t) != VGMEM_UUID_LEN);

	if (!netlink_open) {
		unsigned int i;

		/*
		 * genetlink checks both before our code runs: GENL_ADMIN_PERM
		 * for the request and the dump (netlink_capable(), so the
		 * socket's opener needs it too), the group's flag when a
		 * socket joins (a stable backport Debian 12's 6.1 carries;
		 * a kernel without it would not build this).
		 */
		for (i = 0; i < ARRAY_SIZE(vgk_nl_ops); i++)
			if (vgk_nl_ops[i].cmd == VGMEM_CMD_GET_VM)
				vgk_nl_ops[i].flags |= GENL_ADMIN_PERM;
		vgk_nl_mcgrps[VGK_NL_MCGRP_EVENTS].flags |=
			GENL_MCAST_CAP_NET_ADMIN;
	}
	ret = genl_register_family(&vgk_genl_family);
	if (ret)
		return ret;
	vgk_nl_events_start();
	return 0;
}

void vgk_netlink_exit(void)
{
	vgk_nl_events_stop();
	genl_unregister_family(&vgk_genl_family);
}
