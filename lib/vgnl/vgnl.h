/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libvgnl: the userspace side of the generic netlink family "vgmem"
 * (include/uapi/vgmem_netlink.h is the protocol), on libnl-genl-3. Used by the
 * vgmem-nl tool and by mgmtd's netlink backend.
 *
 * Every function returns 0 (or a count) or a negative errno: the kernel's
 * own error for a refused request, whose extended-ack message
 * vgnl_ext_msg() then gives. Dumps that the kernel flags as interrupted by
 * vGPUs coming or going (NLM_F_DUMP_INTR) are repeated, up to
 * VGNL_DUMP_RETRIES times, then fail with -EAGAIN.
 *
 * The vgnl_parse_* functions are pure: they turn one received message into
 * a struct and touch no socket (the unit tests feed them built messages).
 */
#ifndef VGMEM_LIB_VGNL_H
#define VGMEM_LIB_VGNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uapi/vgmem_netlink.h>

struct nlmsghdr;
struct vgnl;

#define VGNL_DUMP_RETRIES	16
#define VGNL_UUID_STR_LEN	37	/* 36 characters and the NUL */
/* A member for a line of a <uapi/vgmem_stats.h> table. */
#define VGNL_STAT_MEMBER(field, attr, kind, ...)			\
	uint64_t field VGMEM_STAT_DIM_OF(kind);

#define VGNL_EVENT_RCVBUF	(1 << 20)	/* bytes, for a subscribed socket */

struct vgnl_gpu {
	uint32_t index;
	char name[VGMEM_GPU_NAME_MAX];
	uint64_t vram_size;
	uint64_t vram_used;
	uint64_t host_used;
	uint64_t chunk_size;
	uint32_t policy;		/* enum vgmem_policy */
	uint32_t return_ms;
	uint32_t oversub_pct;
	uint64_t committed;
	uint32_t nr_vgpus;
	uint32_t nr_vms;
	uint64_t cache_used;		/* VGMEM_A_GPU_CACHE_USED (0 if not sent) */
	/* VGMEM_A_GPU_STATS: the lines of VGMEM_GPU_STATS */
	VGMEM_GPU_STATS(VGNL_STAT_MEMBER)
};

struct vgnl_vm {
	uint8_t uuid[VGMEM_UUID_LEN];
	uint32_t gpu;
	char type[48];
	bool active;
	/* quota and entitlement from the top level, the rest from VM_STATS */
	struct vgmem_vm_stats st;
	uint64_t cache_private;		/* VGMEM_A_VM_CACHE_PRIVATE (0 if not sent) */
};

/*
 * The host's LRC file cache (GET_LRC): nr_gpus GPUs have one (0: off),
 * and the counters of VGMEM_A_LRC_STATS, named as enum vgmem_lrc_stat_attr
 * (an attribute the kernel did not send reads 0).
 */
struct vgnl_lrc {
	uint32_t nr_gpus;
	VGMEM_LRC_STATS(VGNL_STAT_MEMBER)
};

struct vgnl_event {
	uint8_t cmd;			/* VGMEM_CMD_EVENT_* */
	uint32_t gpu;
	uint8_t uuid[VGMEM_UUID_LEN];
	uint64_t need;			/* PRESSURE */
	uint32_t direction;		/* RELOCATION: enum vgmem_reloc_dir */
	uint32_t chunks;
	uint64_t bytes;
	uint64_t suspend_ns;
	uint32_t channel;		/* CHAN_FAULT */
	uint32_t error;			/* enum vgmem_chan_error */
};

/* One virtio-fs share of a vGPU (VGMEM_A_VM_SHARES). */
struct vgnl_share {
	uint32_t id;
	bool readonly;
	char path[VGMEM_SHARE_PATH_MAX];
	/*
	 * has_tag: VGMEM_SHARE_A_TAG is sent (even "", which the kernel
	 * refuses: tests need that) or was received. The library checks only
	 * that it fits; the kernel judges it (vgmem_share_tag_ok).
	 */
	bool has_tag;
	char tag[VGMEM_SHARE_TAG_SIZE];
};

/*
 * What a SET_VM / SET_GPU request changes: only the fields marked has_.
 * has_shares: replace the vGPU's share table with shares[0..nr_shares)
 * (nr_shares 0 clears it).
 */
struct vgnl_vm_set {
	bool has_quota, has_entitlement, has_shares;
	uint64_t quota, entitlement;
	const struct vgnl_share *shares;
	size_t nr_shares;
};

struct vgnl_gpu_set {
	bool has_policy, has_return_ms, has_oversub;
	uint32_t policy, return_ms, oversub_pct;
};

/* Connect and resolve the family; -ENOENT if vgmem.ko is not loaded. */
int vgnl_open(struct vgnl **out);
void vgnl_close(struct vgnl *h);
/* The kernel's extended-ack message of the last failed request, or "". */
const char *vgnl_ext_msg(const struct vgnl *h);
/* How many dumps were repeated because the kernel flagged them. */
unsigned int vgnl_dump_retries(const struct vgnl *h);

/* Dumps: *out is malloc'ed (free() it), *n entries, by GPU index. */
int vgnl_list_gpus(struct vgnl *h, struct vgnl_gpu **out, size_t *n);
/* gpu < 0: every GPU's vGPUs. */
int vgnl_list_vms(struct vgnl *h, int64_t gpu, struct vgnl_vm **out,
		  size_t *n);
/*
 * One dump attempt, not repeated: 1 if the kernel flagged it as
 * interrupted (the entries are then not to be trusted), 0 if consistent.
 */
int vgnl_dump_vms_once(struct vgnl *h, int64_t gpu, struct vgnl_vm **out,
		       size_t *n);
int vgnl_get_gpu(struct vgnl *h, uint32_t index, struct vgnl_gpu *out);
int vgnl_get_vm(struct vgnl *h, const uint8_t uuid[VGMEM_UUID_LEN],
		struct vgnl_vm *out);
int vgnl_set_vm(struct vgnl *h, const uint8_t uuid[VGMEM_UUID_LEN],
		const struct vgnl_vm_set *set);
/*
 * The vGPU's share table (a GET_VM request): *out malloc()ed (NULL when
 * empty), *n entries by id.
 */
int vgnl_get_vm_shares(struct vgnl *h, const uint8_t uuid[VGMEM_UUID_LEN],
		       struct vgnl_share **out, size_t *n);
int vgnl_set_gpu(struct vgnl *h, uint32_t index,
		 const struct vgnl_gpu_set *set);
/* The file cache's counters (one cache for the whole host). */
int vgnl_get_lrc(struct vgnl *h, struct vgnl_lrc *out);

/*
 * Events: vgnl_subscribe() joins the "events" group (the socket then only
 * serves events: use a second handle for requests); vgnl_event_fd() can be
 * polled; vgnl_read_events() reads what is queued (blocking if nothing is)
 * and calls fn for each event until fn returns non-zero, which it returns.
 * -ENOBUFS: the socket's queue overran and the kernel dropped events;
 * reading can go on. vgnl_subscribe() gives -EPERM without CAP_NET_ADMIN
 * (unless vgmem.ko's netlink_open=1), as GET_VM does.
 */
typedef int (*vgnl_event_fn)(const struct vgnl_event *ev, void *priv);
int vgnl_subscribe(struct vgnl *h);
int vgnl_event_fd(const struct vgnl *h);
int vgnl_read_events(struct vgnl *h, vgnl_event_fn fn, void *priv);

/*
 * Raw request for tests of the kernel's validation: cmd with the given
 * attribute bytes (already laid out as netlink attributes) after the genl
 * header; flags as nlmsg_flags (NLM_F_DUMP ...). Returns the kernel's
 * error (0 on an ack or a reply).
 */
int vgnl_raw_request(struct vgnl *h, uint8_t cmd, int flags,
		     const void *attrs, size_t len);

/* Pure helpers. */
int vgnl_parse_gpu(const struct nlmsghdr *nlh, struct vgnl_gpu *out);
int vgnl_parse_vm(const struct nlmsghdr *nlh, struct vgnl_vm *out);
int vgnl_parse_event(const struct nlmsghdr *nlh, struct vgnl_event *out);
/* A GET_LRC reply: -EINVAL if it is another command or malformed. */
int vgnl_parse_lrc(const struct nlmsghdr *nlh, struct vgnl_lrc *out);
/*
 * The counters of struct vgnl_lrc in attribute order, for printing:
 * name i (the attribute's name in lower case, without VGMEM_LS_) and its
 * value. NULL/0 past the last.
 */
const char *vgnl_lrc_field(const struct vgnl_lrc *l, unsigned int i,
			   uint64_t *val);
/*
 * The VGMEM_A_VM_SHARES nest of a GET_VM reply: *out malloc()ed (NULL if
 * the reply has none or it is empty). -EINVAL for a malformed entry.
 */
int vgnl_parse_vm_shares(const struct nlmsghdr *nlh, struct vgnl_share **out,
			 size_t *n);
/*
 * "ID:PATH[:ro][:tag=TAG]" (the vgmem-nl flag --share): 0 or -EINVAL.
 * The last ":tag=" starts the tag (which may be empty, or hold ':'; it
 * must fit struct vgnl_share's field), then a trailing ":ro" is the flag.
 * Only the syntax is checked; the kernel judges the path and the tag.
 */
int vgnl_share_parse(const char *s, struct vgnl_share *out);
/* Text "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" <-> wire bytes. */
int vgnl_uuid_parse(const char *s, uint8_t out[VGMEM_UUID_LEN]);
void vgnl_uuid_format(const uint8_t u[VGMEM_UUID_LEN],
		      char out[VGNL_UUID_STR_LEN]);
const char *vgnl_policy_name(uint32_t policy);
int vgnl_policy_parse(const char *name, uint32_t *out);
const char *vgnl_event_name(uint8_t cmd);

#endif /* VGMEM_LIB_VGNL_H */
