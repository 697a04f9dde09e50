// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libvgnl: requests, dumps and events of the "vgmem" generic netlink
 * family over libnl-genl-3 (nl.h says what each call does).
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

#include "nl.h"

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

static const struct vgnl_field vgnl_gpu_stats[] = {
	{ VGMEM_GS_RELOC_OUT_CHUNKS, offsetof(struct vgnl_gpu, reloc_out_chunks) },
	{ VGMEM_GS_RELOC_IN_CHUNKS, offsetof(struct vgnl_gpu, reloc_in_chunks) },
	{ VGMEM_GS_BYTES_OUT, offsetof(struct vgnl_gpu, bytes_out) },
	{ VGMEM_GS_BYTES_IN, offsetof(struct vgnl_gpu, bytes_in) },
	{ VGMEM_GS_RELOCATIONS, offsetof(struct vgnl_gpu, relocations) },
	{ VGMEM_GS_RELOC_FAILURES, offsetof(struct vgnl_gpu, reloc_failures) },
	{ VGMEM_GS_COPY_DEVICE_NS, offsetof(struct vgnl_gpu, copy_device_ns) },
	{ VGMEM_GS_FAULTS, offsetof(struct vgnl_gpu, faults) },
};

#define VS(f)	offsetof(struct vgmem_vm_stats, f)
static const struct vgnl_field vgnl_vm_stats[] = {
	{ VGMEM_VS_ALLOCATED, VS(allocated) },
	{ VGMEM_VS_RESIDENT, VS(resident) },
	{ VGMEM_VS_RELOCATED, VS(relocated) },
	{ VGMEM_VS_RELOC_OUT_CHUNKS, VS(reloc_out_chunks) },
	{ VGMEM_VS_RELOC_IN_CHUNKS, VS(reloc_in_chunks) },
	{ VGMEM_VS_BYTES_OUT, VS(bytes_out) },
	{ VGMEM_VS_BYTES_IN, VS(bytes_in) },
	{ VGMEM_VS_SUSPEND_LAST_NS, VS(suspend_last_ns) },
	{ VGMEM_VS_SUSPEND_MAX_NS, VS(suspend_max_ns) },
	{ VGMEM_VS_SUSPEND_TOTAL_NS, VS(suspend_total_ns) },
	{ VGMEM_VS_SUSPENDS, VS(suspends) },
	{ VGMEM_VS_STALL_TOTAL_NS, VS(stall_total_ns) },
	{ VGMEM_VS_FAULTS, VS(faults) },
};
#undef VS

/* VGMEM_A_LRC_STATS, in attribute order (vgnl_lrc_field() walks it). */
struct vgnl_lrc_field {
	int type;
	size_t off;
	const char *name;
};

#define LS(f)	offsetof(struct vgnl_lrc, f)
static const struct vgnl_lrc_field vgnl_lrc_stats[] = {
	{ VGMEM_LS_FAULTS_MINOR, LS(faults_minor), "faults_minor" },
	{ VGMEM_LS_FAULTS_MAJOR, LS(faults_major), "faults_major" },
	{ VGMEM_LS_FAULTS_WRITE, LS(faults_write), "faults_write" },
	{ VGMEM_LS_MERGES, LS(merges), "merges" },
	{ VGMEM_LS_MERGE_BYTES, LS(merge_bytes), "merge_bytes" },
	{ VGMEM_LS_FETCH_STORAGE, LS(fetch_storage), "fetch_storage" },
	{ VGMEM_LS_STORE_READS, LS(store_reads), "store_reads" },
	{ VGMEM_LS_FETCH_HOST, LS(fetch_host), "fetch_host" },
	{ VGMEM_LS_FETCH_PEER, LS(fetch_peer), "fetch_peer" },
	{ VGMEM_LS_FETCH_GPU, LS(fetch_gpu), "fetch_gpu" },
	{ VGMEM_LS_READAHEAD_PAGES, LS(readahead_pages), "readahead_pages" },
	{ VGMEM_LS_EVICTIONS, LS(evictions), "evictions" },
	{ VGMEM_LS_WRITEBACK_BYTES, LS(writeback_bytes), "writeback_bytes" },
	{ VGMEM_LS_WRITEBACK_BLOCKS, LS(writeback_blocks), "writeback_blocks" },
	{ VGMEM_LS_BASE_COPIES, LS(base_copies), "base_copies" },
	{ VGMEM_LS_SHARED_MAPS, LS(shared_maps), "shared_maps" },
	{ VGMEM_LS_REPLICAS_SHARED, LS(replicas_shared), "replicas_shared" },
	{ VGMEM_LS_REPLICAS_PRIVATE, LS(replicas_private), "replicas_private" },
	{ VGMEM_LS_VRAM_USED, LS(vram_used), "vram_used" },
	{ VGMEM_LS_HOST_READS_PEER, LS(host_reads_peer), "host_reads_peer" },
	{ VGMEM_LS_HOST_CHANGES, LS(host_changes), "host_changes" },
	{ VGMEM_LS_ACQUIRES, LS(acquires), "acquires" },
	{ VGMEM_LS_RELEASES, LS(releases), "releases" },
	{ VGMEM_LS_RELEASED_PAGES, LS(released_pages), "released_pages" },
	{ VGMEM_LS_INVALIDATIONS, LS(invalidations), "invalidations" },
	{ VGMEM_LS_CUCKOO_HITS, LS(cuckoo_hits), "cuckoo_hits" },
	{ VGMEM_LS_CUCKOO_MISSES, LS(cuckoo_misses), "cuckoo_misses" },
	{ VGMEM_LS_FILES, LS(files), "files" },
	{ VGMEM_LS_PAGES, LS(pages), "pages" },
	{ VGMEM_LS_BYTES_PER_PAGE, LS(bytes_per_page), "bytes_per_page" },
	{ VGMEM_LS_HOST_COMPARES, LS(host_compares), "host_compares" },
	{ VGMEM_LS_HOST_USED, LS(host_used), "host_used" },
	{ VGMEM_LS_HOST_EVICTIONS, LS(host_evictions), "host_evictions" },
	{ VGMEM_LS_HOST_EVICT_WRITEBACKS, LS(host_evict_writebacks),
	  "host_evict_writebacks" },
	{ VGMEM_LS_REPLICAS_HOST, LS(replicas_host), "replicas_host" },
	{ VGMEM_LS_REPLICAS_HOST_USED, LS(replicas_host_used),
	  "replicas_host_used" },
	{ VGMEM_LS_PROMOTIONS, LS(promotions), "promotions" },
};
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
static struct nla_policy vgnl_lrc_policy[VGMEM_LS_MAX + 1] = {
	[VGMEM_LS_FAULTS_MINOR] = { .type = NLA_U64 },
	[VGMEM_LS_FAULTS_MAJOR] = { .type = NLA_U64 },
	[VGMEM_LS_FAULTS_WRITE] = { .type = NLA_U64 },
	[VGMEM_LS_MERGES] = { .type = NLA_U64 },
	[VGMEM_LS_MERGE_BYTES] = { .type = NLA_U64 },
	[VGMEM_LS_FETCH_STORAGE] = { .type = NLA_U64 },
	[VGMEM_LS_STORE_READS] = { .type = NLA_U64 },
	[VGMEM_LS_FETCH_HOST] = { .type = NLA_U64 },
	[VGMEM_LS_FETCH_PEER] = { .type = NLA_U64 },
	[VGMEM_LS_FETCH_GPU] = { .type = NLA_U64 },
	[VGMEM_LS_READAHEAD_PAGES] = { .type = NLA_U64 },
	[VGMEM_LS_EVICTIONS] = { .type = NLA_U64 },
	[VGMEM_LS_WRITEBACK_BYTES] = { .type = NLA_U64 },
	[VGMEM_LS_WRITEBACK_BLOCKS] = { .type = NLA_U64 },
	[VGMEM_LS_BASE_COPIES] = { .type = NLA_U64 },
	[VGMEM_LS_SHARED_MAPS] = { .type = NLA_U64 },
	[VGMEM_LS_REPLICAS_SHARED] = { .type = NLA_U64 },
	[VGMEM_LS_REPLICAS_PRIVATE] = { .type = NLA_U64 },
	[VGMEM_LS_VRAM_USED] = { .type = NLA_U64 },
	[VGMEM_LS_HOST_READS_PEER] = { .type = NLA_U64 },
	[VGMEM_LS_HOST_CHANGES] = { .type = NLA_U64 },
	[VGMEM_LS_ACQUIRES] = { .type = NLA_U64 },
	[VGMEM_LS_RELEASES] = { .type = NLA_U64 },
	[VGMEM_LS_RELEASED_PAGES] = { .type = NLA_U64 },
	[VGMEM_LS_INVALIDATIONS] = { .type = NLA_U64 },
	[VGMEM_LS_CUCKOO_HITS] = { .type = NLA_U64 },
	[VGMEM_LS_CUCKOO_MISSES] = { .type = NLA_U64 },
	[VGMEM_LS_FILES] = { .type = NLA_U64 },
	[VGMEM_LS_PAGES] = { .type = NLA_U64 },
	[VGMEM_LS_BYTES_PER_PAGE] = { .type = NLA_U64 },
	[VGMEM_LS_HOST_COMPARES] = { .type = NLA_U64 },
	[VGMEM_LS_HOST_USED] = { .type = NLA_U64 },
	[VGMEM_LS_HOST_EVICTIONS] = { .type = NLA_U64 },
	[VGMEM_LS_HOST_EVICT_WRITEBACKS] = { .type = NLA_U64 },
	[VGMEM_LS_REPLICAS_HOST] = { .type = NLA_U64 },
	[VGMEM_LS_REPLICAS_HOST_USED] = { .type = NLA_U64 },
	[VGMEM_LS_PROMOTIONS] = { .type = NLA_U64 },
};

/* Room for the attributes of either stats nest. */
#define VGNL_NEST_MAX	31
_Static_assert(VGMEM_GS_MAX <= VGNL_NEST_MAX && VGMEM_VS_MAX <= VGNL_NEST_MAX,
	       "a stats nest outgrew VGNL_NEST_MAX");

/* Every nest's u64 attributes and histograms share these rules. */
static int vgnl_parse_nest(struct nlattr *nest, int maxtype,
			   const struct vgnl_field *f, size_t nf, void *base,
			   int suspend_type, uint64_t *suspend,
			   int stall_type, uint64_t *stall)
{
	struct nlattr *tb[VGNL_NEST_MAX + 1];
	struct nlattr *hb[VGMEM_HIST_A_MAX + 1];
	struct nla_policy pol[VGNL_NEST_MAX + 1];
	struct nla_policy hpol[VGMEM_HIST_A_MAX + 1];
	int hist_type[2] = { suspend_type, stall_type };
	uint64_t *hist[2] = { suspend, stall };
	size_t i;
	int h, b;

	memset(pol, 0, sizeof(pol));
	for (i = 0; i < nf; i++)
		pol[f[i].type].type = NLA_U64;
	pol[suspend_type].type = NLA_NESTED;
	pol[stall_type].type = NLA_NESTED;
	if (nla_parse_nested(tb, maxtype, nest, pol))
		return -EINVAL;
	for (i = 0; i < nf; i++)
		if (tb[f[i].type])
			*(uint64_t *)((char *)base + f[i].off) =
				nla_get_u64(tb[f[i].type]);

	memset(hpol, 0, sizeof(hpol));
	for (b = 0; b < VGMEM_HIST_BUCKETS; b++)
		hpol[VGMEM_HIST_A_BUCKET(b)].type = NLA_U64;
	for (h = 0; h < 2; h++) {
		if (!tb[hist_type[h]])
			continue;
		if (nla_parse_nested(hb, VGMEM_HIST_A_MAX, tb[hist_type[h]],
				     hpol))
			return -EINVAL;
		for (b = 0; b < VGMEM_HIST_BUCKETS; b++)
			if (hb[VGMEM_HIST_A_BUCKET(b)])
				hist[h][b] = nla_get_u64(hb[VGMEM_HIST_A_BUCKET(b)]);
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
				      &g, VGMEM_GS_SUSPEND_HIST, g.suspend_hist,
				      VGMEM_GS_STALL_HIST, g.stall_hist);
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
				      &v.st, VGMEM_VS_SUSPEND_HIST,
				      (uint64_t *)v.st.suspend_hist,
				      VGMEM_VS_STALL_HIST,
				      (uint64_t *)v.st.stall_hist);
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
	nla_for_each_nested(e, tb[VGMEM_A_VM_SHARES], rem) {
		struct vgnl_share *nv;
		const char *path;

		if (nr == VGMEM_SHARES_MAX ||
		    nla_parse_nested(sb, VGMEM_SHARE_A_MAX, e, pol) ||
		    !sb[VGMEM_SHARE_A_ID] || !sb[VGMEM_SHARE_A_PATH])
			goto err_free;
		path = nla_get_string(sb[VGMEM_SHARE_A_PATH]);
		if (strnlen(path, nla_len(sb[VGMEM_SHARE_A_PATH])) >=
		    sizeof(v->path))
			goto err_free;
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
	const char *colon, *path;
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
	/* a trailing ":ro" is the flag; a path never ends with it then */
	colon = strrchr(path, ':');
	if (colon && !strcmp(colon, ":ro")) {
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
		    (sh->readonly && nla_put_flag(msg, VGMEM_SHARE_A_READONLY)))
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
				sizeof(set->shares[i].path)) + 40;
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
	if (nl_socket_add_membership(h->sk, h->mcgrp))
		return -EIO;
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
