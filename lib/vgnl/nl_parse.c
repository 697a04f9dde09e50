// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libvgnl's pure half (vgnl.h, "Pure helpers"): the replies and events of
 * the "vgmem" family parsed strictly into the structs of vgnl.h, and the
 * text forms of UUIDs, policies, events and --share arguments. No socket:
 * tests/unit/vgnl feeds it messages built by hand.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "vgnl.h"

struct vgnl_field {
	int type;
	size_t off;
};

static const struct vgnl_field vgnl_gpu_top[] = {
	{ VGMEM_A_GPU_VRAM_SIZE, offsetof(struct vgnl_gpu, vram_size) },
	{ VGMEM_A_GPU_VRAM_USED, offsetof(struct vgnl_gpu, vram_used) },
	{ VGMEM_A_GPU_HOST_USED, offsetof(struct vgnl_gpu, host_used) },
	{ VGMEM_A_GPU_CHUNK_SIZE, offsetof(struct vgnl_gpu, chunk_size) },
	{ VGMEM_A_GPU_COMMITTED, offsetof(struct vgnl_gpu, committed) },
	{ VGMEM_A_GPU_CACHE_USED, offsetof(struct vgnl_gpu, cache_used) },
};

static const struct vgnl_field vgnl_gpu_u32[] = {
	{ VGMEM_A_GPU_POLICY, offsetof(struct vgnl_gpu, policy) },
	{ VGMEM_A_GPU_RETURN_MS, offsetof(struct vgnl_gpu, return_ms) },
	{ VGMEM_A_GPU_OVERSUB_PCT, offsetof(struct vgnl_gpu, oversub_pct) },
	{ VGMEM_A_GPU_NR_VGPUS, offsetof(struct vgnl_gpu, nr_vgpus) },
	{ VGMEM_A_GPU_NR_VMS, offsetof(struct vgnl_gpu, nr_vms) },
};

/*
 * The stats nests' attributes and where they go, generated from the tables
 * of <uapi/vgmem_stats.h>: a counter or gauge is a u64 attribute, a
 * histogram a nest of enum vgmem_hist_attr.
 */
struct vgnl_stat {
	int type;
	int kind;		/* VGMEM_STAT_* */
	size_t off;
	const char *name;
};

#define GS(field, attr, kind, ...)					\
	{ VGMEM_GS_ ## attr, kind, offsetof(struct vgnl_gpu, field), #field },
static const struct vgnl_stat vgnl_gpu_stats[] = { VGMEM_GPU_STATS(GS) };
#undef GS

#define VS(field, attr, kind, ...)					\
	{ VGMEM_VS_ ## attr, kind, offsetof(struct vgmem_vm_stats, field), #field },
static const struct vgnl_stat vgnl_vm_stats[] = { VGMEM_VM_STATS(VS) };
#undef VS

/* In attribute order (vgnl_lrc_field() walks it). */
#define LS(field, attr, kind, ...)					\
	{ VGMEM_LS_ ## attr, kind, offsetof(struct vgnl_lrc, field), #field },
static const struct vgnl_stat vgnl_lrc_stats[] = { VGMEM_LRC_STATS(LS) };
#undef LS
_Static_assert(sizeof(vgnl_lrc_stats) / sizeof(vgnl_lrc_stats[0]) ==
	       VGMEM_LS_MAX - VGMEM_LS_PAD,
	       "every VGMEM_LS_ counter needs a field of struct vgnl_lrc");

static struct nla_policy vgnl_top_policy[VGMEM_A_MAX + 1] = {
	[VGMEM_A_GPU_INDEX] = { .type = NLA_U32 },
	[VGMEM_A_GPU_NAME] = { .type = NLA_STRING,
			       .maxlen = VGMEM_GPU_NAME_MAX },
	[VGMEM_A_GPU_VRAM_SIZE] = { .type = NLA_U64 },
	[VGMEM_A_GPU_VRAM_USED] = { .type = NLA_U64 },
	[VGMEM_A_GPU_HOST_USED] = { .type = NLA_U64 },
	[VGMEM_A_GPU_CHUNK_SIZE] = { .type = NLA_U64 },
	[VGMEM_A_GPU_POLICY] = { .type = NLA_U32 },
	[VGMEM_A_GPU_RETURN_MS] = { .type = NLA_U32 },
	[VGMEM_A_GPU_OVERSUB_PCT] = { .type = NLA_U32 },
	[VGMEM_A_GPU_COMMITTED] = { .type = NLA_U64 },
	[VGMEM_A_GPU_NR_VGPUS] = { .type = NLA_U32 },
	[VGMEM_A_GPU_NR_VMS] = { .type = NLA_U32 },
	[VGMEM_A_GPU_STATS] = { .type = NLA_NESTED },
	[VGMEM_A_GPU_CACHE_USED] = { .type = NLA_U64 },
	[VGMEM_A_VM_CACHE_PRIVATE] = { .type = NLA_U64 },
	[VGMEM_A_VM_UUID] = { .minlen = VGMEM_UUID_LEN,
			      .maxlen = VGMEM_UUID_LEN },
	[VGMEM_A_VM_TYPE] = { .type = NLA_STRING, .maxlen = 48 },
	[VGMEM_A_VM_ACTIVE] = { .type = NLA_U8 },
	[VGMEM_A_VM_QUOTA] = { .type = NLA_U64 },
	[VGMEM_A_VM_ENTITLEMENT] = { .type = NLA_U64 },
	[VGMEM_A_VM_STATS] = { .type = NLA_NESTED },
	[VGMEM_A_EV_NEED] = { .type = NLA_U64 },
	[VGMEM_A_EV_DIRECTION] = { .type = NLA_U32 },
	[VGMEM_A_EV_CHUNKS] = { .type = NLA_U32 },
	[VGMEM_A_EV_BYTES] = { .type = NLA_U64 },
	[VGMEM_A_EV_SUSPEND_NS] = { .type = NLA_U64 },
	[VGMEM_A_EV_CHANNEL] = { .type = NLA_U32 },
	[VGMEM_A_EV_ERROR] = { .type = NLA_U32 },
	[VGMEM_A_VM_SHARES] = { .type = NLA_NESTED },
	[VGMEM_A_LRC_NR_GPUS] = { .type = NLA_U32 },
	[VGMEM_A_LRC_STATS] = { .type = NLA_NESTED },
};

/* The counters of VGMEM_A_LRC_STATS: every one a u64 (PAD is skipped). */
#define LP(field, attr, kind, ...)	[VGMEM_LS_ ## attr] = { .type = NLA_U64 },
static struct nla_policy vgnl_lrc_policy[VGMEM_LS_MAX + 1] = {
	VGMEM_LRC_STATS(LP)
};
#undef LP

/* Room for the attributes of either stats nest. */
#define VGNL_NEST_MAX	31
_Static_assert(VGMEM_GS_MAX <= VGNL_NEST_MAX && VGMEM_VS_MAX <= VGNL_NEST_MAX,
	       "a stats nest outgrew VGNL_NEST_MAX");

/* Every nest's u64 attributes and histograms share these rules. */
static int vgnl_parse_nest(struct nlattr *nest, int maxtype,
			   const struct vgnl_stat *f, size_t nf, void *base)
{
	struct nlattr *tb[VGNL_NEST_MAX + 1];
	struct nlattr *hb[VGMEM_HIST_A_MAX + 1];
	struct nla_policy pol[VGNL_NEST_MAX + 1];
	struct nla_policy hpol[VGMEM_HIST_A_MAX + 1];
	uint64_t *v;
	size_t i;
	int b;

	memset(pol, 0, sizeof(pol));
	for (i = 0; i < nf; i++)
		pol[f[i].type].type = f[i].kind == VGMEM_STAT_HIST ?
				      NLA_NESTED : NLA_U64;
	if (nla_parse_nested(tb, maxtype, nest, pol))
		return -EINVAL;
	memset(hpol, 0, sizeof(hpol));
	for (b = 0; b < VGMEM_HIST_BUCKETS; b++)
		hpol[VGMEM_HIST_A_BUCKET(b)].type = NLA_U64;
	for (i = 0; i < nf; i++) {
		if (!tb[f[i].type])
			continue;
		v = (uint64_t *)((char *)base + f[i].off);
		if (f[i].kind != VGMEM_STAT_HIST) {
			*v = nla_get_u64(tb[f[i].type]);
			continue;
		}
		if (nla_parse_nested(hb, VGMEM_HIST_A_MAX, tb[f[i].type],
				     hpol))
			return -EINVAL;
		for (b = 0; b < VGMEM_HIST_BUCKETS; b++)
			if (hb[VGMEM_HIST_A_BUCKET(b)])
				v[b] = nla_get_u64(hb[VGMEM_HIST_A_BUCKET(b)]);
	}
	return 0;
}

static int vgnl_parse_top(const struct nlmsghdr *nlh, uint8_t *cmd,
			  struct nlattr **tb)
{
	struct genlmsghdr *g;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EINVAL;
	g = nlmsg_data(nlh);
	*cmd = g->cmd;
	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, VGMEM_A_MAX,
			  vgnl_top_policy))
		return -EINVAL;
	return 0;
}

static int vgnl_get_uuid(struct nlattr *a, uint8_t *out)
{
	if (!a || nla_len(a) != VGMEM_UUID_LEN)
		return -EINVAL;
	memcpy(out, nla_data(a), VGMEM_UUID_LEN);
	return 0;
}

int vgnl_parse_gpu(const struct nlmsghdr *nlh, struct vgnl_gpu *out)
{
	struct nlattr *tb[VGMEM_A_MAX + 1];
	struct vgnl_gpu g;
	uint8_t cmd;
	size_t i;
	int err;

	err = vgnl_parse_top(nlh, &cmd, tb);
	if (err)
		return err;
	if (cmd != VGMEM_CMD_GET_GPU || !tb[VGMEM_A_GPU_INDEX])
		return -EINVAL;
	memset(&g, 0, sizeof(g));
	g.index = nla_get_u32(tb[VGMEM_A_GPU_INDEX]);
	if (tb[VGMEM_A_GPU_NAME])
		snprintf(g.name, sizeof(g.name), "%s",
			 nla_get_string(tb[VGMEM_A_GPU_NAME]));
	for (i = 0; i < sizeof(vgnl_gpu_top) / sizeof(vgnl_gpu_top[0]); i++)
		if (tb[vgnl_gpu_top[i].type])
			*(uint64_t *)((char *)&g + vgnl_gpu_top[i].off) =
				nla_get_u64(tb[vgnl_gpu_top[i].type]);
	for (i = 0; i < sizeof(vgnl_gpu_u32) / sizeof(vgnl_gpu_u32[0]); i++)
		if (tb[vgnl_gpu_u32[i].type])
			*(uint32_t *)((char *)&g + vgnl_gpu_u32[i].off) =
				nla_get_u32(tb[vgnl_gpu_u32[i].type]);
	if (tb[VGMEM_A_GPU_STATS]) {
		err = vgnl_parse_nest(tb[VGMEM_A_GPU_STATS], VGMEM_GS_MAX,
				      vgnl_gpu_stats,
				      sizeof(vgnl_gpu_stats) / sizeof(vgnl_gpu_stats[0]),
				      &g);
		if (err)
			return err;
	}
	*out = g;
	return 0;
}

int vgnl_parse_vm(const struct nlmsghdr *nlh, struct vgnl_vm *out)
{
	struct nlattr *tb[VGMEM_A_MAX + 1];
	struct vgnl_vm v;
	uint8_t cmd;
	int err;

	err = vgnl_parse_top(nlh, &cmd, tb);
	if (err)
		return err;
	if (cmd != VGMEM_CMD_GET_VM || !tb[VGMEM_A_GPU_INDEX])
		return -EINVAL;
	memset(&v, 0, sizeof(v));
	if (vgnl_get_uuid(tb[VGMEM_A_VM_UUID], v.uuid))
		return -EINVAL;
	v.gpu = nla_get_u32(tb[VGMEM_A_GPU_INDEX]);
	if (tb[VGMEM_A_VM_TYPE])
		snprintf(v.type, sizeof(v.type), "%s",
			 nla_get_string(tb[VGMEM_A_VM_TYPE]));
	if (tb[VGMEM_A_VM_ACTIVE])
		v.active = nla_get_u8(tb[VGMEM_A_VM_ACTIVE]) != 0;
	if (tb[VGMEM_A_VM_QUOTA])
		v.st.quota = nla_get_u64(tb[VGMEM_A_VM_QUOTA]);
	if (tb[VGMEM_A_VM_ENTITLEMENT])
		v.st.entitlement = nla_get_u64(tb[VGMEM_A_VM_ENTITLEMENT]);
	if (tb[VGMEM_A_VM_CACHE_PRIVATE])
		v.cache_private = nla_get_u64(tb[VGMEM_A_VM_CACHE_PRIVATE]);
	if (tb[VGMEM_A_VM_STATS]) {
		err = vgnl_parse_nest(tb[VGMEM_A_VM_STATS], VGMEM_VS_MAX,
				      vgnl_vm_stats,
				      sizeof(vgnl_vm_stats) / sizeof(vgnl_vm_stats[0]),
				      &v.st);
		if (err)
			return err;
	}
	*out = v;
	return 0;
}

int vgnl_parse_lrc(const struct nlmsghdr *nlh, struct vgnl_lrc *out)
{
	struct nlattr *tb[VGMEM_A_MAX + 1];
	struct nlattr *lb[VGMEM_LS_MAX + 1];
	struct vgnl_lrc l;
	struct nlattr *a;
	uint8_t cmd;
	int err, rem;
	size_t i;

	err = vgnl_parse_top(nlh, &cmd, tb);
	if (err)
		return err;
	if (cmd != VGMEM_CMD_GET_LRC || !tb[VGMEM_A_LRC_STATS])
		return -EINVAL;
	memset(&l, 0, sizeof(l));
	if (tb[VGMEM_A_LRC_NR_GPUS])
		l.nr_gpus = nla_get_u32(tb[VGMEM_A_LRC_NR_GPUS]);
	/*
	 * libnl ignores bytes after the last whole attribute; they mean the
	 * nest is not a nest (e.g. a u64 in its place): refuse it.
	 */
	nla_for_each_nested(a, tb[VGMEM_A_LRC_STATS], rem)
		;
	if (rem)
		return -EINVAL;
	/* Types beyond VGMEM_LS_MAX (a newer kernel's) are skipped. */
	if (nla_parse_nested(lb, VGMEM_LS_MAX, tb[VGMEM_A_LRC_STATS],
			     vgnl_lrc_policy))
		return -EINVAL;
	for (i = 0; i < sizeof(vgnl_lrc_stats) / sizeof(vgnl_lrc_stats[0]);
	     i++)
		if (lb[vgnl_lrc_stats[i].type])
			*(uint64_t *)((char *)&l + vgnl_lrc_stats[i].off) =
				nla_get_u64(lb[vgnl_lrc_stats[i].type]);
	*out = l;
	return 0;
}

const char *vgnl_lrc_field(const struct vgnl_lrc *l, unsigned int i,
			   uint64_t *val)
{
	if (i >= sizeof(vgnl_lrc_stats) / sizeof(vgnl_lrc_stats[0])) {
		*val = 0;
		return NULL;
	}
	*val = *(const uint64_t *)((const char *)l + vgnl_lrc_stats[i].off);
	return vgnl_lrc_stats[i].name;
}

int vgnl_parse_vm_shares(const struct nlmsghdr *nlh, struct vgnl_share **out,
			 size_t *n)
{
	struct nla_policy pol[VGMEM_SHARE_A_MAX + 1];
	struct nlattr *tb[VGMEM_A_MAX + 1];
	struct nlattr *sb[VGMEM_SHARE_A_MAX + 1];
	struct vgnl_share *v = NULL;
	struct nlattr *e;
	size_t nr = 0;
	uint8_t cmd;
	int err, rem;

	*out = NULL;
	*n = 0;
	err = vgnl_parse_top(nlh, &cmd, tb);
	if (err)
		return err;
	if (cmd != VGMEM_CMD_GET_VM)
		return -EINVAL;
	/* The module sends the table (maybe empty) to administrators only. */
	if (!tb[VGMEM_A_VM_SHARES])
		return -EPERM;
	memset(pol, 0, sizeof(pol));
	pol[VGMEM_SHARE_A_ID].type = NLA_U32;
	pol[VGMEM_SHARE_A_PATH].type = NLA_STRING;
	pol[VGMEM_SHARE_A_PATH].maxlen = VGMEM_SHARE_PATH_MAX;
	pol[VGMEM_SHARE_A_READONLY].type = NLA_FLAG;
	pol[VGMEM_SHARE_A_TAG].type = NLA_STRING;
	pol[VGMEM_SHARE_A_TAG].maxlen = VGMEM_SHARE_TAG_SIZE;
	nla_for_each_nested(e, tb[VGMEM_A_VM_SHARES], rem) {
		struct vgnl_share *nv;
		const char *path, *tag = NULL;
		size_t tlen = 0;

		if (nr == VGMEM_SHARES_MAX ||
		    nla_parse_nested(sb, VGMEM_SHARE_A_MAX, e, pol) ||
		    !sb[VGMEM_SHARE_A_ID] || !sb[VGMEM_SHARE_A_PATH])
			goto err_free;
		path = nla_get_string(sb[VGMEM_SHARE_A_PATH]);
		if (strnlen(path, nla_len(sb[VGMEM_SHARE_A_PATH])) >=
		    sizeof(v->path))
			goto err_free;
		if (sb[VGMEM_SHARE_A_TAG]) {
			tag = nla_get_string(sb[VGMEM_SHARE_A_TAG]);
			tlen = strnlen(tag, nla_len(sb[VGMEM_SHARE_A_TAG]));
			/* what the kernel sends passed its own check */
			if (tlen >= sizeof(v->tag))
				goto err_free;
		}
		nv = realloc(v, (nr + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		memset(&v[nr], 0, sizeof(v[nr]));
		v[nr].id = nla_get_u32(sb[VGMEM_SHARE_A_ID]);
		v[nr].readonly = sb[VGMEM_SHARE_A_READONLY] != NULL;
		memcpy(v[nr].path, path,
		       strnlen(path, nla_len(sb[VGMEM_SHARE_A_PATH])));
		if (tag) {
			v[nr].has_tag = true;
			memcpy(v[nr].tag, tag, tlen);
		}
		nr++;
	}
	*out = v;
	*n = nr;
	return 0;

err_free:
	free(v);
	return -EINVAL;
}

int vgnl_share_parse(const char *s, struct vgnl_share *out)
{
	struct vgnl_share sh;
	const char *colon, *path, *tag = NULL, *p;
	unsigned long id;
	size_t len;
	char *end;

	memset(&sh, 0, sizeof(sh));
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	id = strtoul(s, &end, 10);
	if (errno || *end != ':' || id > UINT32_MAX)
		return -EINVAL;
	path = end + 1;
	len = strlen(path);
	/* the last ":tag=" starts the tag: a tag may hold ':' */
	for (p = path; (p = strstr(p, ":tag=")); p++)
		tag = p;
	if (tag) {
		if (strlen(tag + 5) >= sizeof(sh.tag))
			return -EINVAL;
		sh.has_tag = true;
		memcpy(sh.tag, tag + 5, strlen(tag + 5));
		len = (size_t)(tag - path);
	}
	/* a trailing ":ro" is the flag; a path never ends with it then */
	colon = memrchr(path, ':', len);
	if (colon && len - (size_t)(colon - path) == 3 &&
	    !strncmp(colon, ":ro", 3)) {
		sh.readonly = true;
		len = (size_t)(colon - path);
	}
	if (!len || len >= sizeof(sh.path))
		return -EINVAL;
	memcpy(sh.path, path, len);
	sh.id = (uint32_t)id;
	*out = sh;
	return 0;
}

int vgnl_parse_event(const struct nlmsghdr *nlh, struct vgnl_event *out)
{
	struct nlattr *tb[VGMEM_A_MAX + 1];
	struct vgnl_event e;
	int err;

	memset(&e, 0, sizeof(e));
	err = vgnl_parse_top(nlh, &e.cmd, tb);
	if (err)
		return err;
	if (!tb[VGMEM_A_GPU_INDEX] || vgnl_get_uuid(tb[VGMEM_A_VM_UUID], e.uuid))
		return -EINVAL;
	e.gpu = nla_get_u32(tb[VGMEM_A_GPU_INDEX]);
	switch (e.cmd) {
	case VGMEM_CMD_EVENT_PRESSURE:
		if (!tb[VGMEM_A_EV_NEED])
			return -EINVAL;
		e.need = nla_get_u64(tb[VGMEM_A_EV_NEED]);
		break;
	case VGMEM_CMD_EVENT_RELOCATION:
		if (!tb[VGMEM_A_EV_DIRECTION] || !tb[VGMEM_A_EV_CHUNKS] ||
		    !tb[VGMEM_A_EV_BYTES] || !tb[VGMEM_A_EV_SUSPEND_NS])
			return -EINVAL;
		e.direction = nla_get_u32(tb[VGMEM_A_EV_DIRECTION]);
		e.chunks = nla_get_u32(tb[VGMEM_A_EV_CHUNKS]);
		e.bytes = nla_get_u64(tb[VGMEM_A_EV_BYTES]);
		e.suspend_ns = nla_get_u64(tb[VGMEM_A_EV_SUSPEND_NS]);
		break;
	case VGMEM_CMD_EVENT_CHAN_FAULT:
		if (!tb[VGMEM_A_EV_CHANNEL] || !tb[VGMEM_A_EV_ERROR])
			return -EINVAL;
		e.channel = nla_get_u32(tb[VGMEM_A_EV_CHANNEL]);
		e.error = nla_get_u32(tb[VGMEM_A_EV_ERROR]);
		break;
	default:
		return -EINVAL;
	}
	*out = e;
	return 0;
}

static int vgnl_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int vgnl_uuid_parse(const char *s, uint8_t out[VGMEM_UUID_LEN])
{
	uint8_t u[VGMEM_UUID_LEN];
	int i, n = 0, hi, lo;

	if (!s || strlen(s) != VGNL_UUID_STR_LEN - 1)
		return -EINVAL;
	for (i = 0; i < VGNL_UUID_STR_LEN - 1;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -EINVAL;
			continue;
		}
		hi = vgnl_hex(s[i]);
		lo = vgnl_hex(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		u[n++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	memcpy(out, u, sizeof(u));
	return 0;
}

void vgnl_uuid_format(const uint8_t u[VGMEM_UUID_LEN],
		      char out[VGNL_UUID_STR_LEN])
{
	snprintf(out, VGNL_UUID_STR_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

static const char *const vgnl_policies[] = {
	[VGMEM_POLICY_RANDOM] = "random",
	[VGMEM_POLICY_LRA] = "lra",
	[VGMEM_POLICY_COLD] = "cold",
};

const char *vgnl_policy_name(uint32_t policy)
{
	return policy <= VGMEM_POLICY_MAX ? vgnl_policies[policy] : "unknown";
}

int vgnl_policy_parse(const char *name, uint32_t *out)
{
	uint32_t i;

	for (i = 0; i <= VGMEM_POLICY_MAX; i++) {
		if (!strcmp(name, vgnl_policies[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *vgnl_event_name(uint8_t cmd)
{
	switch (cmd) {
	case VGMEM_CMD_EVENT_PRESSURE:
		return "pressure";
	case VGMEM_CMD_EVENT_RELOCATION:
		return "relocation";
	case VGMEM_CMD_EVENT_CHAN_FAULT:
		return "chan_fault";
	default:
		return "unknown";
	}
}

/* ---- the socket ----------------------------------------------------------- */
