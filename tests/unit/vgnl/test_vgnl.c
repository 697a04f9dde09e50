// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The pure parts of tools/vgmem-nl's library: messages built here the way
 * the kernel's netlink.c builds them are parsed into structs; malformed
 * ones are refused; UUID and policy text round-trips.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "lib/vgnl/vgnl.h"

#define FAMILY	0x20	/* any id: parsing does not look at it */

static struct nl_msg *new_msg(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 1, 2, FAMILY, 0, 0, cmd,
				    VGMEM_GENL_VERSION));
	return msg;
}

static void put_hist(struct nl_msg *msg, int type, uint64_t base)
{
	struct nlattr *n = nla_nest_start(msg, type);
	int i;

	assert_non_null(n);
	for (i = 0; i < VGMEM_HIST_BUCKETS; i++)
		assert_int_equal(nla_put_u64(msg, VGMEM_HIST_A_BUCKET(i),
					     base + i), 0);
	nla_nest_end(msg, n);
}

static const uint8_t uuid1[VGMEM_UUID_LEN] = {
	0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
};

static struct nl_msg *vm_msg(size_t uuid_len)
{
	struct nl_msg *msg = new_msg(VGMEM_CMD_GET_VM);
	struct nlattr *st;
	uint8_t u[VGMEM_UUID_LEN + 1] = { 0 };

	memcpy(u, uuid1, VGMEM_UUID_LEN);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, (int)uuid_len, u), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 1), 0);
	assert_int_equal(nla_put_string(msg, VGMEM_A_VM_TYPE, "vgmem-2g"), 0);
	assert_int_equal(nla_put_u8(msg, VGMEM_A_VM_ACTIVE, 1), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_VM_QUOTA, 2ull << 30), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_VM_ENTITLEMENT, 64 << 20), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_VM_CACHE_PRIVATE, 5 << 16), 0);
	st = nla_nest_start(msg, VGMEM_A_VM_STATS);
	assert_non_null(st);
	assert_int_equal(nla_put_u64(msg, VGMEM_VS_ALLOCATED, 100), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_VS_RESIDENT, 60), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_VS_RELOCATED, 40), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_VS_SUSPENDS, 3), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_VS_FAULTS, 7), 0);
	put_hist(msg, VGMEM_VS_SUSPEND_HIST, 1000);
	put_hist(msg, VGMEM_VS_STALL_HIST, 2000);
	nla_nest_end(msg, st);
	return msg;
}

static void test_parse_vm(void **state)
{
	struct nl_msg *msg = vm_msg(VGMEM_UUID_LEN);
	struct vgnl_vm v;
	int i;

	(void)state;
	assert_int_equal(vgnl_parse_vm(nlmsg_hdr(msg), &v), 0);
	assert_memory_equal(v.uuid, uuid1, VGMEM_UUID_LEN);
	assert_int_equal(v.gpu, 1);
	assert_string_equal(v.type, "vgmem-2g");
	assert_true(v.active);
	assert_int_equal(v.st.quota, 2ull << 30);
	assert_int_equal(v.st.entitlement, 64 << 20);
	assert_int_equal(v.cache_private, 5 << 16);
	assert_int_equal(v.st.allocated, 100);
	assert_int_equal(v.st.resident, 60);
	assert_int_equal(v.st.relocated, 40);
	assert_int_equal(v.st.suspends, 3);
	assert_int_equal(v.st.faults, 7);
	assert_int_equal(v.st.bytes_out, 0);	/* absent: zero */
	for (i = 0; i < VGMEM_HIST_BUCKETS; i++) {
		assert_int_equal(v.st.suspend_hist[i], 1000 + i);
		assert_int_equal(v.st.stall_hist[i], 2000 + i);
	}
	nlmsg_free(msg);
}

static void test_parse_vm_bad(void **state)
{
	struct nl_msg *msg;
	struct vgnl_vm v;

	(void)state;
	memset(&v, 0xa5, sizeof(v));
	/* A UUID of the wrong length, either way. */
	msg = vm_msg(VGMEM_UUID_LEN - 1);
	assert_int_equal(vgnl_parse_vm(nlmsg_hdr(msg), &v), -EINVAL);
	nlmsg_free(msg);
	msg = vm_msg(VGMEM_UUID_LEN + 1);
	assert_int_equal(vgnl_parse_vm(nlmsg_hdr(msg), &v), -EINVAL);
	nlmsg_free(msg);
	/* The output is untouched by a refused message. */
	assert_int_equal(v.gpu, 0xa5a5a5a5);

	/* A GPU message is not a VM. */
	msg = new_msg(VGMEM_CMD_GET_GPU);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(vgnl_parse_vm(nlmsg_hdr(msg), &v), -EINVAL);
	nlmsg_free(msg);

	/* A u64 attribute of 4 bytes. */
	msg = new_msg(VGMEM_CMD_GET_VM);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid1), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_VM_QUOTA, 5), 0);
	assert_int_equal(vgnl_parse_vm(nlmsg_hdr(msg), &v), -EINVAL);
	nlmsg_free(msg);
}

/*
 * A module older than the file cache's attributes sends neither
 * GPU_CACHE_USED nor VM_CACHE_PRIVATE: both parse as 0 (mgmtd shows 0),
 * whatever the output held; a 4-byte one is refused like any bad u64.
 */
static void test_parse_without_cache_attrs(void **state)
{
	struct nl_msg *msg;
	struct vgnl_gpu g;
	struct vgnl_vm v;

	(void)state;
	msg = new_msg(VGMEM_CMD_GET_GPU);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_GPU_VRAM_USED, 10 << 20), 0);
	memset(&g, 0xa5, sizeof(g));
	assert_int_equal(vgnl_parse_gpu(nlmsg_hdr(msg), &g), 0);
	assert_int_equal(g.vram_used, 10 << 20);
	assert_int_equal(g.cache_used, 0);
	nlmsg_free(msg);

	msg = new_msg(VGMEM_CMD_GET_VM);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid1), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	memset(&v, 0xa5, sizeof(v));
	assert_int_equal(vgnl_parse_vm(nlmsg_hdr(msg), &v), 0);
	assert_int_equal(v.cache_private, 0);
	nlmsg_free(msg);

	msg = new_msg(VGMEM_CMD_GET_GPU);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_CACHE_USED, 1), 0);
	assert_int_equal(vgnl_parse_gpu(nlmsg_hdr(msg), &g), -EINVAL);
	nlmsg_free(msg);
	msg = new_msg(VGMEM_CMD_GET_VM);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid1), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_VM_CACHE_PRIVATE, 1), 0);
	assert_int_equal(vgnl_parse_vm(nlmsg_hdr(msg), &v), -EINVAL);
	nlmsg_free(msg);
}

static void test_parse_gpu(void **state)
{
	struct nl_msg *msg = new_msg(VGMEM_CMD_GET_GPU);
	struct nlattr *st;
	struct vgnl_gpu g;

	(void)state;
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 3), 0);
	assert_int_equal(nla_put_string(msg, VGMEM_A_GPU_NAME, "vgmem3"), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_GPU_VRAM_SIZE, 256 << 20), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_GPU_VRAM_USED, 10 << 20), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_GPU_CACHE_USED, 3 << 16), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_GPU_CHUNK_SIZE, 2 << 20), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_POLICY, VGMEM_POLICY_COLD), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_RETURN_MS, 50), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_OVERSUB_PCT, 1600), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_NR_VGPUS, 4), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_NR_VMS, 2), 0);
	st = nla_nest_start(msg, VGMEM_A_GPU_STATS);
	assert_int_equal(nla_put_u64(msg, VGMEM_GS_RELOCATIONS, 9), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_GS_BYTES_OUT, 1 << 20), 0);
	put_hist(msg, VGMEM_GS_STALL_HIST, 5);
	nla_nest_end(msg, st);

	assert_int_equal(vgnl_parse_gpu(nlmsg_hdr(msg), &g), 0);
	assert_int_equal(g.index, 3);
	assert_string_equal(g.name, "vgmem3");
	assert_int_equal(g.vram_size, 256 << 20);
	assert_int_equal(g.vram_used, 10 << 20);
	assert_int_equal(g.cache_used, 3 << 16);
	assert_int_equal(g.chunk_size, 2 << 20);
	assert_int_equal(g.policy, VGMEM_POLICY_COLD);
	assert_int_equal(g.return_ms, 50);
	assert_int_equal(g.oversub_pct, 1600);
	assert_int_equal(g.nr_vgpus, 4);
	assert_int_equal(g.nr_vms, 2);
	assert_int_equal(g.relocations, 9);
	assert_int_equal(g.bytes_out, 1 << 20);
	assert_int_equal(g.stall_hist[0], 5);
	assert_int_equal(g.stall_hist[VGMEM_HIST_BUCKETS - 1],
			 5 + VGMEM_HIST_BUCKETS - 1);
	assert_int_equal(g.suspend_hist[3], 0);
	nlmsg_free(msg);

	/* Without its index a GPU message is refused. */
	msg = new_msg(VGMEM_CMD_GET_GPU);
	assert_int_equal(nla_put_string(msg, VGMEM_A_GPU_NAME, "x"), 0);
	assert_int_equal(vgnl_parse_gpu(nlmsg_hdr(msg), &g), -EINVAL);
	nlmsg_free(msg);
}

static void test_parse_events(void **state)
{
	struct nl_msg *msg;
	struct vgnl_event e;

	(void)state;
	msg = new_msg(VGMEM_CMD_EVENT_RELOCATION);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid1), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_EV_DIRECTION, VGMEM_RELOC_IN), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_EV_CHUNKS, 4), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_EV_BYTES, 8 << 20), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_EV_SUSPEND_NS, 12345), 0);
	assert_int_equal(vgnl_parse_event(nlmsg_hdr(msg), &e), 0);
	assert_int_equal(e.cmd, VGMEM_CMD_EVENT_RELOCATION);
	assert_int_equal(e.direction, VGMEM_RELOC_IN);
	assert_int_equal(e.chunks, 4);
	assert_int_equal(e.bytes, 8 << 20);
	assert_int_equal(e.suspend_ns, 12345);
	assert_memory_equal(e.uuid, uuid1, VGMEM_UUID_LEN);
	assert_string_equal(vgnl_event_name(e.cmd), "relocation");
	nlmsg_free(msg);

	msg = new_msg(VGMEM_CMD_EVENT_CHAN_FAULT);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 2), 0);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid1), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_EV_CHANNEL, 5), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_EV_ERROR, VGMEM_CHAN_ERR_VA), 0);
	assert_int_equal(vgnl_parse_event(nlmsg_hdr(msg), &e), 0);
	assert_int_equal(e.gpu, 2);
	assert_int_equal(e.channel, 5);
	assert_int_equal(e.error, VGMEM_CHAN_ERR_VA);
	nlmsg_free(msg);

	/* A pressure event without the bytes needed is malformed. */
	msg = new_msg(VGMEM_CMD_EVENT_PRESSURE);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid1), 0);
	assert_int_equal(vgnl_parse_event(nlmsg_hdr(msg), &e), -EINVAL);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_EV_NEED, 4096), 0);
	assert_int_equal(vgnl_parse_event(nlmsg_hdr(msg), &e), 0);
	assert_int_equal(e.need, 4096);
	nlmsg_free(msg);

	/* A request command is no event. */
	msg = new_msg(VGMEM_CMD_SET_VM);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_GPU_INDEX, 0), 0);
	assert_int_equal(nla_put(msg, VGMEM_A_VM_UUID, VGMEM_UUID_LEN, uuid1), 0);
	assert_int_equal(vgnl_parse_event(nlmsg_hdr(msg), &e), -EINVAL);
	nlmsg_free(msg);
}

/* A GET_VM reply with a share nest: entries as the kernel puts them. */
static void put_share(struct nl_msg *msg, int pos, int id, const char *path,
		      bool ro)
{
	struct nlattr *e = nla_nest_start(msg, pos);

	assert_non_null(e);
	if (id >= 0)
		assert_int_equal(nla_put_u32(msg, VGMEM_SHARE_A_ID, (uint32_t)id), 0);
	if (path)
		assert_int_equal(nla_put_string(msg, VGMEM_SHARE_A_PATH, path), 0);
	if (ro)
		assert_int_equal(nla_put_flag(msg, VGMEM_SHARE_A_READONLY), 0);
	nla_nest_end(msg, e);
}

static void put_share_tag(struct nl_msg *msg, int pos, int id,
			  const char *path, bool ro, const char *tag)
{
	struct nlattr *e = nla_nest_start(msg, pos);

	assert_non_null(e);
	assert_int_equal(nla_put_u32(msg, VGMEM_SHARE_A_ID, (uint32_t)id), 0);
	assert_int_equal(nla_put_string(msg, VGMEM_SHARE_A_PATH, path), 0);
	if (ro)
		assert_int_equal(nla_put_flag(msg, VGMEM_SHARE_A_READONLY), 0);
	assert_int_equal(nla_put_string(msg, VGMEM_SHARE_A_TAG, tag), 0);
	nla_nest_end(msg, e);
}

static void test_parse_shares(void **state)
{
	struct vgnl_share *sh;
	struct nl_msg *msg;
	struct nlattr *n;
	size_t cnt;

	(void)state;
	/* a reply without the nest (to a caller without CAP_NET_ADMIN) */
	msg = vm_msg(VGMEM_UUID_LEN);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt),
			 -EPERM);
	assert_int_equal(cnt, 0);
	assert_null(sh);
	nlmsg_free(msg);

	/* an empty nest (libnl drops empty nests; the kernel keeps them) */
	msg = vm_msg(VGMEM_UUID_LEN);
	n = nla_nest_start(msg, VGMEM_A_VM_SHARES);
	nla_nest_end_keep_empty(msg, n);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt), 0);
	assert_int_equal(cnt, 0);
	assert_null(sh);
	nlmsg_free(msg);

	msg = vm_msg(VGMEM_UUID_LEN);
	n = nla_nest_start(msg, VGMEM_A_VM_SHARES);
	put_share(msg, 1, 0, "/srv/data", false);
	put_share(msg, 2, 5, "/srv/models", true);
	nla_nest_end(msg, n);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt), 0);
	assert_int_equal(cnt, 2);
	assert_int_equal(sh[0].id, 0);
	assert_string_equal(sh[0].path, "/srv/data");
	assert_false(sh[0].readonly);
	assert_int_equal(sh[1].id, 5);
	assert_string_equal(sh[1].path, "/srv/models");
	assert_true(sh[1].readonly);
	free(sh);
	nlmsg_free(msg);

	/* tags: given, absent, the longest the kernel sends */
	msg = vm_msg(VGMEM_UUID_LEN);
	n = nla_nest_start(msg, VGMEM_A_VM_SHARES);
	put_share_tag(msg, 1, 0, "/srv/data", false, "data");
	put_share(msg, 2, 5, "/srv/models", true);
	put_share_tag(msg, 3, 7, "/srv/x", false,
		      "012345678901234567890123456789012345");
	nla_nest_end(msg, n);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt), 0);
	assert_int_equal(cnt, 3);
	assert_true(sh[0].has_tag);
	assert_string_equal(sh[0].tag, "data");
	assert_false(sh[1].has_tag);
	assert_string_equal(sh[1].tag, "");
	assert_true(sh[2].has_tag);
	assert_string_equal(sh[2].tag, "012345678901234567890123456789012345");
	free(sh);
	nlmsg_free(msg);
	/* a tag longer than the field: malformed, never truncated */
	msg = vm_msg(VGMEM_UUID_LEN);
	n = nla_nest_start(msg, VGMEM_A_VM_SHARES);
	put_share_tag(msg, 1, 0, "/srv/data", false,
		      "0123456789012345678901234567890123456789");
	nla_nest_end(msg, n);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt), -EINVAL);
	assert_null(sh);
	nlmsg_free(msg);

	/* an entry without a path, or without an id: malformed */
	msg = vm_msg(VGMEM_UUID_LEN);
	n = nla_nest_start(msg, VGMEM_A_VM_SHARES);
	put_share(msg, 1, 0, "/srv/data", false);
	put_share(msg, 2, 1, NULL, false);
	nla_nest_end(msg, n);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt), -EINVAL);
	assert_null(sh);
	nlmsg_free(msg);
	msg = vm_msg(VGMEM_UUID_LEN);
	n = nla_nest_start(msg, VGMEM_A_VM_SHARES);
	put_share(msg, 1, -1, "/srv/data", false);
	nla_nest_end(msg, n);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt), -EINVAL);
	nlmsg_free(msg);
	/* not a VM message */
	msg = new_msg(VGMEM_CMD_GET_GPU);
	assert_int_equal(vgnl_parse_vm_shares(nlmsg_hdr(msg), &sh, &cnt), -EINVAL);
	nlmsg_free(msg);
}

/*
 * A GET_LRC reply as netlink.c builds it: the GPU count, then one u64 per
 * counter of the nest, counter t holding 1000 + t; a PAD before the first
 * (what nla_put_u64_64bit adds where alignment needs it). extra: also an
 * attribute of a type beyond VGMEM_LS_MAX, as a newer kernel might send.
 */
static struct nl_msg *lrc_msg(uint8_t cmd, bool nest, bool extra)
{
	struct nl_msg *msg = new_msg(cmd);
	struct nlattr *st;
	int t;

	assert_int_equal(nla_put_u32(msg, VGMEM_A_LRC_NR_GPUS, 2), 0);
	if (!nest)
		return msg;
	st = nla_nest_start(msg, VGMEM_A_LRC_STATS);
	assert_non_null(st);
	assert_int_equal(nla_put(msg, VGMEM_LS_PAD, 0, NULL), 0);
	for (t = VGMEM_LS_PAD + 1; t <= VGMEM_LS_MAX; t++)
		assert_int_equal(nla_put_u64(msg, t, 1000 + t), 0);
	if (extra)
		assert_int_equal(nla_put_u32(msg, VGMEM_LS_MAX + 1, 7), 0);
	nla_nest_end(msg, st);
	return msg;
}

static void test_parse_lrc(void **state)
{
	struct nl_msg *msg = lrc_msg(VGMEM_CMD_GET_LRC, true, true);
	struct vgnl_lrc l;
	const char *name;
	unsigned int i;
	uint64_t val;

	(void)state;
	assert_int_equal(vgnl_parse_lrc(nlmsg_hdr(msg), &l), 0);
	assert_int_equal(l.nr_gpus, 2);
	/* Named fields land where the attribute enum says. */
	assert_int_equal(l.faults_minor, 1000 + VGMEM_LS_FAULTS_MINOR);
	assert_int_equal(l.faults_major, 1000 + VGMEM_LS_FAULTS_MAJOR);
	assert_int_equal(l.writeback_blocks, 1000 + VGMEM_LS_WRITEBACK_BLOCKS);
	assert_int_equal(l.shared_maps, 1000 + VGMEM_LS_SHARED_MAPS);
	assert_int_equal(l.vram_used, 1000 + VGMEM_LS_VRAM_USED);
	assert_int_equal(l.cuckoo_misses, 1000 + VGMEM_LS_CUCKOO_MISSES);
	assert_int_equal(l.bytes_per_page, 1000 + VGMEM_LS_BYTES_PER_PAGE);
	/* The printing walk covers every counter once, in attribute order. */
	for (i = 0; (name = vgnl_lrc_field(&l, i, &val)); i++)
		assert_int_equal(val, 1000 + VGMEM_LS_PAD + 1 + i);
	assert_int_equal(i, VGMEM_LS_MAX - VGMEM_LS_PAD);
	assert_string_equal(vgnl_lrc_field(&l, 0, &val), "faults_minor");
	assert_string_equal(vgnl_lrc_field(&l, i - 2, &val), "promotions");
	assert_string_equal(vgnl_lrc_field(&l, i - 1, &val), "meta_bytes");
	assert_int_equal(l.replicas_host, 1000 + VGMEM_LS_REPLICAS_HOST);
	assert_int_equal(l.host_used, 1000 + VGMEM_LS_HOST_USED);
	assert_null(vgnl_lrc_field(&l, i, &val));
	assert_int_equal(val, 0);
	nlmsg_free(msg);

	/* A counter the kernel left out reads 0. */
	msg = new_msg(VGMEM_CMD_GET_LRC);
	{
		struct nlattr *st = nla_nest_start(msg, VGMEM_A_LRC_STATS);

		assert_non_null(st);
		assert_int_equal(nla_put_u64(msg, VGMEM_LS_EVICTIONS, 5), 0);
		nla_nest_end(msg, st);
	}
	assert_int_equal(vgnl_parse_lrc(nlmsg_hdr(msg), &l), 0);
	assert_int_equal(l.evictions, 5);
	assert_int_equal(l.nr_gpus, 0);
	assert_int_equal(l.faults_major, 0);
	nlmsg_free(msg);
}

static void test_parse_lrc_bad(void **state)
{
	struct nl_msg *msg;
	struct nlattr *st;
	struct vgnl_lrc l;

	(void)state;
	memset(&l, 0xa5, sizeof(l));
	/* Another command's message, even with the right attributes. */
	msg = lrc_msg(VGMEM_CMD_GET_GPU, true, false);
	assert_int_equal(vgnl_parse_lrc(nlmsg_hdr(msg), &l), -EINVAL);
	nlmsg_free(msg);
	/* No stats nest. */
	msg = lrc_msg(VGMEM_CMD_GET_LRC, false, false);
	assert_int_equal(vgnl_parse_lrc(nlmsg_hdr(msg), &l), -EINVAL);
	nlmsg_free(msg);
	/* A counter that is not a u64. */
	msg = new_msg(VGMEM_CMD_GET_LRC);
	st = nla_nest_start(msg, VGMEM_A_LRC_STATS);
	assert_non_null(st);
	assert_int_equal(nla_put_u64(msg, VGMEM_LS_FAULTS_MINOR, 1), 0);
	assert_int_equal(nla_put_u32(msg, VGMEM_LS_FAULTS_MAJOR, 1), 0);
	nla_nest_end(msg, st);
	assert_int_equal(vgnl_parse_lrc(nlmsg_hdr(msg), &l), -EINVAL);
	nlmsg_free(msg);
	/* The stats "nest" as a plain u64. */
	msg = new_msg(VGMEM_CMD_GET_LRC);
	assert_int_equal(nla_put_u32(msg, VGMEM_A_LRC_NR_GPUS, 1), 0);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_LRC_STATS, 1), 0);
	assert_int_equal(vgnl_parse_lrc(nlmsg_hdr(msg), &l), -EINVAL);
	nlmsg_free(msg);
	/* A GPU count of the wrong size. */
	msg = new_msg(VGMEM_CMD_GET_LRC);
	assert_int_equal(nla_put_u64(msg, VGMEM_A_LRC_NR_GPUS, 1), 0);
	st = nla_nest_start(msg, VGMEM_A_LRC_STATS);
	assert_non_null(st);
	nla_nest_end(msg, st);
	assert_int_equal(vgnl_parse_lrc(nlmsg_hdr(msg), &l), -EINVAL);
	nlmsg_free(msg);
	/* Nothing of a refused message reached the output. */
	assert_int_equal(l.nr_gpus, 0xa5a5a5a5);
	assert_int_equal(l.faults_minor, 0xa5a5a5a5a5a5a5a5ull);
}

static void test_share_text(void **state)
{
	struct vgnl_share s;
	char longp[VGMEM_SHARE_PATH_MAX + 8];

	(void)state;
	assert_int_equal(vgnl_share_parse("0:/srv/data", &s), 0);
	assert_int_equal(s.id, 0);
	assert_string_equal(s.path, "/srv/data");
	assert_false(s.readonly);
	assert_int_equal(vgnl_share_parse("4294967295:/a:b:ro", &s), 0);
	assert_int_equal(s.id, 4294967295u);
	assert_string_equal(s.path, "/a:b");
	assert_true(s.readonly);
	/* the kernel judges paths: a relative one passes the syntax */
	assert_int_equal(vgnl_share_parse("1:rel", &s), 0);
	assert_int_equal(vgnl_share_parse("4294967296:/a", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse("-1:/a", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse("x:/a", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse("1/a", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse("1:", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse("1::ro", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse(NULL, &s), -EINVAL);
	longp[0] = '1';
	longp[1] = ':';
	memset(longp + 2, 'a', VGMEM_SHARE_PATH_MAX);
	longp[VGMEM_SHARE_PATH_MAX + 2] = 0;
	assert_int_equal(vgnl_share_parse(longp, &s), -EINVAL);
	longp[VGMEM_SHARE_PATH_MAX + 1] = 0;	/* 4095 bytes: fits */
	assert_int_equal(vgnl_share_parse(longp, &s), 0);

	/* tags: after the flag; the last ":tag=" starts it */
	assert_int_equal(vgnl_share_parse("0:/srv/data", &s), 0);
	assert_false(s.has_tag);
	assert_int_equal(vgnl_share_parse("2:/srv/data:tag=data", &s), 0);
	assert_int_equal(s.id, 2);
	assert_string_equal(s.path, "/srv/data");
	assert_false(s.readonly);
	assert_true(s.has_tag);
	assert_string_equal(s.tag, "data");
	assert_int_equal(vgnl_share_parse("3:/a:b:ro:tag=x:y", &s), 0);
	assert_string_equal(s.path, "/a:b");
	assert_true(s.readonly);
	assert_string_equal(s.tag, "x:y");
	assert_int_equal(vgnl_share_parse("3:/a:tag=b:tag=c", &s), 0);
	assert_string_equal(s.path, "/a:tag=b");
	assert_string_equal(s.tag, "c");
	/* ":ro" after the tag belongs to the tag */
	assert_int_equal(vgnl_share_parse("3:/a:tag=t:ro", &s), 0);
	assert_false(s.readonly);
	assert_string_equal(s.tag, "t:ro");
	/* the kernel judges tags: empty, '/' and 39 bytes pass the syntax */
	assert_int_equal(vgnl_share_parse("4:/a:tag=", &s), 0);
	assert_true(s.has_tag);
	assert_string_equal(s.tag, "");
	assert_int_equal(vgnl_share_parse("4:/a:tag=x/y", &s), 0);
	assert_int_equal(vgnl_share_parse(
		"4:/a:tag=012345678901234567890123456789012345678", &s), 0);
	assert_int_equal(vgnl_share_parse(
		"4:/a:tag=0123456789012345678901234567890123456789", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse("4::tag=x", &s), -EINVAL);
	assert_int_equal(vgnl_share_parse("4::ro:tag=x", &s), -EINVAL);
}

static void test_uuid_text(void **state)
{
	char s[VGNL_UUID_STR_LEN];
	uint8_t u[VGMEM_UUID_LEN];

	(void)state;
	vgnl_uuid_format(uuid1, s);
	assert_string_equal(s, "12345678-9abc-def0-0123-456789abcdef");
	assert_int_equal(vgnl_uuid_parse("12345678-9ABC-def0-0123-456789abcdef", u), 0);
	assert_memory_equal(u, uuid1, VGMEM_UUID_LEN);

	memset(u, 0x5a, sizeof(u));
	assert_int_equal(vgnl_uuid_parse("12345678-9abc-def0-0123-456789abcde", u), -EINVAL);
	assert_int_equal(vgnl_uuid_parse("12345678-9abc-def0-0123-456789abcdef0", u), -EINVAL);
	assert_int_equal(vgnl_uuid_parse("12345678x9abc-def0-0123-456789abcdef", u), -EINVAL);
	assert_int_equal(vgnl_uuid_parse("12345678-9abc-def0-0123-456789abcdeg", u), -EINVAL);
	assert_int_equal(vgnl_uuid_parse("", u), -EINVAL);
	assert_int_equal(u[0], 0x5a);	/* untouched */
}

static void test_policy_text(void **state)
{
	uint32_t p;

	(void)state;
	assert_int_equal(vgnl_policy_parse("lra", &p), 0);
	assert_int_equal(p, VGMEM_POLICY_LRA);
	assert_int_equal(vgnl_policy_parse("cold", &p), 0);
	assert_int_equal(p, VGMEM_POLICY_COLD);
	assert_int_equal(vgnl_policy_parse("random", &p), 0);
	assert_int_equal(p, VGMEM_POLICY_RANDOM);
	assert_int_equal(vgnl_policy_parse("LRA", &p), -EINVAL);
	assert_int_equal(vgnl_policy_parse("", &p), -EINVAL);
	assert_string_equal(vgnl_policy_name(VGMEM_POLICY_COLD), "cold");
	assert_string_equal(vgnl_policy_name(VGMEM_POLICY_MAX + 1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_vm),
		cmocka_unit_test(test_parse_vm_bad),
		cmocka_unit_test(test_parse_gpu),
		cmocka_unit_test(test_parse_without_cache_attrs),
		cmocka_unit_test(test_parse_events),
		cmocka_unit_test(test_parse_shares),
		cmocka_unit_test(test_parse_lrc),
		cmocka_unit_test(test_parse_lrc_bad),
		cmocka_unit_test(test_share_text),
		cmocka_unit_test(test_uuid_text),
		cmocka_unit_test(test_policy_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
