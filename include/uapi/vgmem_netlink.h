/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vgmem host management ABI: the generic netlink family of vgmem.ko, what
 * mgmtd, vgmem-nl and operators' tools speak to the host. It builds on the
 * device ABI (<uapi/vgmem.h>: a VM's statistics, histogram buckets, share
 * tags) and is not part of what a guest sees. docs/abi.md ("The generic netlink family") explains it.
 */
#ifndef _UAPI_VGMEM_NETLINK_H
#define _UAPI_VGMEM_NETLINK_H

#include <linux/types.h>
#include <uapi/vgmem.h>
#include <uapi/vgmem_stats.h>

/* ---- generic netlink family (host management: mgmtd, vgmem-nl) ---------- */
/*
 * Generic netlink family VGMEM_GENL_NAME, version VGMEM_GENL_VERSION, in the
 * initial network namespace only. No family header: every message is a
 * genlmsghdr followed by attributes of enum vgmem_attr. docs/abi.md explains
 * the protocol; lib/vgnl/vgnl.h is its userspace library.
 *
 * Requests are validated strictly against a per-command policy, and a
 * refused request changes nothing. An attribute the command does not name,
 * an integer of the wrong size or a missing required attribute is refused
 * with -EINVAL; a value outside the range documented here, or a UUID that
 * is not exactly VGMEM_UUID_LEN bytes, with -ERANGE (genetlink's policy
 * check); a value the policy cannot judge (alignment, beyond the GPU's
 * VRAM) with -EINVAL from the command itself. Either way
 * an extended-ack message (NLMSGERR_ATTR_MSG, with NLMSGERR_ATTR_OFFS or
 * NLMSGERR_ATTR_MISS_TYPE) says why. No such object: -ENODEV.
 * SET_* need CAP_NET_ADMIN (-EPERM otherwise). So do GET_VM (request and
 * dump) and joining the events group, unless vgmem.ko is loaded with
 * netlink_open=1: they name every tenant's VMs, pressure, relocations and
 * faults. GET_GPU and GET_LRC are open to everyone.
 *
 * A VM is a vGPU, i.e. a VFIO mediated device, named by its mdev UUID: 16
 * bytes in RFC 4122 order, the order of the UUID's text form (the text
 * "00112233-4455-..." is the bytes 0x00 0x11 0x22 0x33 0x44 0x55 ...). It is
 * listed from its creation until its removal, whether or not a VMM has it
 * open ("active": the core holds a VM for it only while it is open).
 *
 * Every u64 attribute may be preceded by a VGMEM_A_PAD (or the nest's PAD)
 * attribute that aligns it; readers skip PAD.
 */
#define VGMEM_GENL_NAME			"vgmem"
#define VGMEM_GENL_VERSION		1
#define VGMEM_GENL_MCGRP_EVENTS		"events"	/* pressure, relocation, channel fault */

#define VGMEM_UUID_LEN			16
#define VGMEM_GPU_NAME_MAX		32	/* with the NUL */
#define VGMEM_RETURN_MS_MIN		1	/* return worker period, ms */
#define VGMEM_RETURN_MS_MAX		10000
#define VGMEM_OVERSUB_PCT_MAX		100000	/* admission limit, % of VRAM */

enum vgmem_cmd {
	VGMEM_CMD_UNSPEC,
	/*
	 * GPUs. Dump (NLM_F_DUMP): one message per GPU, by index. Do: the
	 * GPU named by VGMEM_A_GPU_INDEX (-ENODEV if there is none).
	 * Reply attributes: INDEX, NAME, VRAM_SIZE, VRAM_USED, HOST_USED,
	 * CHUNK_SIZE, POLICY, RETURN_MS, OVERSUB_PCT, COMMITTED, NR_VGPUS,
	 * NR_VMS, GPU_STATS.
	 */
	VGMEM_CMD_GET_GPU,
	/*
	 * Change a GPU's knobs (CAP_NET_ADMIN). Request: VGMEM_A_GPU_INDEX
	 * (required) and at least one of GPU_POLICY, GPU_RETURN_MS,
	 * GPU_OVERSUB_PCT. All are validated first, then applied in that
	 * order; replies with an ack only.
	 */
	VGMEM_CMD_SET_GPU,
	/*
	 * VMs. Dump: one message per vGPU, GPU by GPU; an optional
	 * VGMEM_A_GPU_INDEX restricts it to that GPU (-ENODEV if there is
	 * none; a UUID is refused). Do: the vGPU named by VGMEM_A_VM_UUID
	 * (-ENODEV if there is none; a GPU index is refused). Reply attributes:
	 * VM_UUID, GPU_INDEX, VM_TYPE, VM_ACTIVE, VM_QUOTA, VM_ENTITLEMENT,
	 * VM_CACHE_PRIVATE, VM_STATS; a do's reply to a sender with
	 * CAP_NET_ADMIN also VM_SHARES (the share table, maybe an empty nest).
	 *
	 * Dumps of GPUs and VMs stay consistent while vGPUs come and go:
	 * every creation and removal bumps a generation that the dump checks
	 * between its parts; a dump that saw a change carries NLM_F_DUMP_INTR
	 * (on some message and on NLMSG_DONE) and should be repeated.
	 */
	VGMEM_CMD_GET_VM,
	/*
	 * Change a vGPU (CAP_NET_ADMIN). Request: VGMEM_A_VM_UUID (required)
	 * and at least one of VM_ENTITLEMENT, VM_QUOTA, VM_SHARES; replies
	 * with an ack. All are validated first, and the shares' paths
	 * resolved; then the quota (the change that can be refused: -EBUSY
	 * below what the VM has allocated, -ENOSPC beyond the GPU's
	 * admission limit), then the entitlement, then the share table is
	 * replaced. The quota change is live: it applies to the next
	 * allocation of a running VM; the shares to the next file map.
	 */
	VGMEM_CMD_SET_VM,
	/*
	 * Events, multicast to VGMEM_GENL_MCGRP_EVENTS only (requests with
	 * these commands are refused).
	 *
	 * PRESSURE: an allocation did not fit in free VRAM and the host is
	 * relocating memory to make room. GPU_INDEX, VM_UUID (the VM that
	 * allocates), EV_NEED (bytes of VRAM to free).
	 */
	VGMEM_CMD_EVENT_PRESSURE,
	/*
	 * RELOCATION: a VM's chunks moved (one suspend-copy-resume cycle).
	 * GPU_INDEX, VM_UUID, EV_DIRECTION, EV_CHUNKS, EV_BYTES,
	 * EV_SUSPEND_NS (how long the VM's channels were suspended).
	 */
	VGMEM_CMD_EVENT_RELOCATION,
	/*
	 * CHAN_FAULT: a channel of a VM entered an error state. GPU_INDEX,
	 * VM_UUID, EV_CHANNEL, EV_ERROR (enum vgmem_chan_error). Queued from
	 * the GPU's engine: under a flood some may be dropped (at most one
	 * per channel and error is ever worth reading anyway: errors stick).
	 */
	VGMEM_CMD_EVENT_CHAN_FAULT,
	/*
	 * The host's LRC file cache (one for all GPUs, so a command of its
	 * own rather than a copy in every GPU message). Do only, no request
	 * attributes (-EINVAL for any). Reply attributes: LRC_NR_GPUS,
	 * LRC_STATS. The counters exist even while no GPU has a cache
	 * (module parameter lrc_budget_mb 0): they then stay 0.
	 */
	VGMEM_CMD_GET_LRC,
	__VGMEM_CMD_MAX
};
#define VGMEM_CMD_MAX			(__VGMEM_CMD_MAX - 1)

/* Chunk choice policy (VGMEM_A_GPU_POLICY). */
enum vgmem_policy {
	VGMEM_POLICY_RANDOM = 0,	/* GPUswap: a random resident chunk */
	VGMEM_POLICY_LRA = 1,		/* least recently allocated first */
	VGMEM_POLICY_COLD = 2,		/* fewest sampled accesses first */
	__VGMEM_POLICY_MAX
};
#define VGMEM_POLICY_MAX		(__VGMEM_POLICY_MAX - 1)

/* VGMEM_A_EV_DIRECTION of a relocation. */
enum vgmem_reloc_dir {
	VGMEM_RELOC_OUT = 0,		/* VRAM to host RAM (eviction) */
	VGMEM_RELOC_IN = 1,		/* host RAM back to VRAM (return) */
};

enum vgmem_attr {
	VGMEM_A_UNSPEC,
	VGMEM_A_PAD,			/* alignment of the next u64 */
	/* GPU */
	VGMEM_A_GPU_INDEX,		/* u32: the N of /sys/class/vgmem/vgmemN */
	VGMEM_A_GPU_NAME,		/* string, < VGMEM_GPU_NAME_MAX bytes */
	VGMEM_A_GPU_VRAM_SIZE,		/* u64 bytes */
	VGMEM_A_GPU_VRAM_USED,		/* u64 bytes of resident chunks */
	VGMEM_A_GPU_HOST_USED,		/* u64 bytes of chunks relocated to host RAM */
	VGMEM_A_GPU_CHUNK_SIZE,		/* u64 bytes, the unit of relocation */
	VGMEM_A_GPU_POLICY,		/* u32 enum vgmem_policy; settable */
	/* u32 ms, VGMEM_RETURN_MS_MIN..MAX: return worker period; settable */
	VGMEM_A_GPU_RETURN_MS,
	/*
	 * u32 percent: vGPU quotas the GPU admits, as a share of its VRAM
	 * (mdev creation and quota raises beyond it fail with -ENOSPC).
	 * Settable, 0..VGMEM_OVERSUB_PCT_MAX: 0 makes the GPU follow the
	 * module parameter oversub_pct again; reads give the value in force.
	 * Lowering it below what is committed refuses only what comes next.
	 */
	VGMEM_A_GPU_OVERSUB_PCT,
	VGMEM_A_GPU_COMMITTED,		/* u64 bytes: sum of its vGPUs' quotas */
	VGMEM_A_GPU_NR_VGPUS,		/* u32: mdevs on it */
	VGMEM_A_GPU_NR_VMS,		/* u32: of those, open (active) */
	VGMEM_A_GPU_STATS,		/* nest: enum vgmem_gpu_stat_attr */
	/* VM (vGPU) */
	VGMEM_A_VM_UUID,		/* binary, VGMEM_UUID_LEN bytes exactly */
	VGMEM_A_VM_TYPE,		/* string: mdev type, e.g. "vgmem-1g" */
	VGMEM_A_VM_ACTIVE,		/* u8: 1 while a VMM has the device open */
	/*
	 * u64 bytes of buffer objects the VM may hold. Settable: a multiple
	 * of VGMEM_PAGE_SIZE, at least VGMEM_PAGE_SIZE.
	 */
	VGMEM_A_VM_QUOTA,
	/*
	 * u64 bytes of VRAM the VM is entitled to under pressure (GPUswap's
	 * reducer takes from those above theirs first). 0: an equal share of
	 * what explicit entitlements leave. Settable, 0..the GPU's VRAM size.
	 */
	VGMEM_A_VM_ENTITLEMENT,
	VGMEM_A_VM_STATS,		/* nest: enum vgmem_vm_stat_attr */
	/* events */
	VGMEM_A_EV_NEED,		/* u64 bytes */
	VGMEM_A_EV_DIRECTION,		/* u32 enum vgmem_reloc_dir */
	VGMEM_A_EV_CHUNKS,		/* u32 */
	VGMEM_A_EV_BYTES,		/* u64 */
	VGMEM_A_EV_SUSPEND_NS,		/* u64 */
	VGMEM_A_EV_CHANNEL,		/* u32 channel id */
	VGMEM_A_EV_ERROR,		/* u32 enum vgmem_chan_error */
	/*
	 * nest: the vGPU's virtio-fs shares, the roots of the files its guest
	 * may map (VGMEM_CTRL_FILE_MAP names a share by id). Each entry is a
	 * nest of enum vgmem_share_attr (the entry's own type is ignored;
	 * senders use its position from 1); at most VGMEM_SHARES_MAX
	 * entries, ids unique, tags (where given) unique. In SET_VM it
	 * replaces the whole table (an empty nest clears it); every path is
	 * resolved before anything changes. GET_VM replies to a request (not dumps: a table can be
	 * large) carry the table in force, entries by id.
	 */
	VGMEM_A_VM_SHARES,
	/* LRC file cache (GET_LRC) */
	VGMEM_A_LRC_NR_GPUS,		/* u32: GPUs with a file cache (0: off) */
	VGMEM_A_LRC_STATS,		/* nest: enum vgmem_lrc_stat_attr */
	/*
	 * GET_GPU: u64 bytes of VRAM the LRC file cache holds now (its
	 * replicas). Apart from VGMEM_A_GPU_VRAM_USED (the BOs' chunks):
	 * free VRAM is VRAM_SIZE - VRAM_USED - CACHE_USED, and the cache
	 * gives it back first when BOs need it.
	 */
	VGMEM_A_GPU_CACHE_USED,
	/*
	 * GET_VM: u64 bytes of that cache's VRAM in the VM's private
	 * replicas (file pages it wrote); part of the GPU's CACHE_USED, not
	 * of the VM's resident bytes. 0 while the vGPU is not open.
	 */
	VGMEM_A_VM_CACHE_PRIVATE,
	__VGMEM_A_MAX
};
#define VGMEM_A_MAX			(__VGMEM_A_MAX - 1)

#define VGMEM_SHARE_PATH_MAX		4096	/* share root path, with the NUL */

/* One entry of VGMEM_A_VM_SHARES. */
enum vgmem_share_attr {
	VGMEM_SHARE_A_UNSPEC,
	VGMEM_SHARE_A_ID,		/* u32, required: the guest's share id */
	/*
	 * NUL-terminated string, required, shorter than
	 * VGMEM_SHARE_PATH_MAX: an absolute host directory without '.' or
	 * '..' components (-EINVAL), that exists (-ENOENT) and is a
	 * directory (-ENOTDIR).
	 */
	VGMEM_SHARE_A_PATH,
	VGMEM_SHARE_A_READONLY,		/* flag: files map read-only only */
	/*
	 * NUL-terminated string, optional: the share's virtio-fs tag
	 * (vgmem_share_tag_ok(), -EINVAL otherwise), unique among the
	 * table's tags (-EINVAL). The guest reads it with VGMEM_CTRL_SHARES.
	 */
	VGMEM_SHARE_A_TAG,
	__VGMEM_SHARE_A_MAX
};
#define VGMEM_SHARE_A_MAX		(__VGMEM_SHARE_A_MAX - 1)

/*
 * VGMEM_A_GPU_STATS: cumulative since the GPU was registered, all u64; a
 * histogram is a nest of enum vgmem_hist_attr. The attributes are the
 * lines of VGMEM_GPU_STATS (<uapi/vgmem_stats.h>) in order: VGMEM_GS_ and
 * the line's ATTR (VGMEM_GS_RELOC_OUT_CHUNKS = 2, ...).
 */
#define VGMEM__GS_ATTR(field, attr, kind, ...)	VGMEM_GS_ ## attr,
enum vgmem_gpu_stat_attr {
	VGMEM_GS_UNSPEC,
	VGMEM_GS_PAD,
	VGMEM_GPU_STATS(VGMEM__GS_ATTR)
	__VGMEM_GS_MAX
};
#undef VGMEM__GS_ATTR
#define VGMEM_GS_MAX			(__VGMEM_GS_MAX - 1)

/*
 * VGMEM_A_VM_STATS: struct vgmem_vm_stats's fields, all u64 (quota and
 * entitlement are top-level attributes), histograms as nests. Cumulative
 * counters restart when the vGPU is opened again (the core's VM is new
 * then). The attributes are the lines of VGMEM_VM_STATS in order:
 * VGMEM_VS_ALLOCATED = 2, ...
 */
#define VGMEM__VS_ATTR(field, attr, kind, ...)	VGMEM_VS_ ## attr,
enum vgmem_vm_stat_attr {
	VGMEM_VS_UNSPEC,
	VGMEM_VS_PAD,
	VGMEM_VM_STATS(VGMEM__VS_ATTR)
	__VGMEM_VS_MAX
};
#undef VGMEM__VS_ATTR
#define VGMEM_VS_MAX			(__VGMEM_VS_MAX - 1)

/*
 * VGMEM_A_LRC_STATS: the host's file cache, struct vg_lrc_stats
 * (host-module/core/lrc/lrc.h, docs/lrc.md "Statistics"), all u64.
 * Counters since vgmem.ko loaded, gauges "now". Sizes in bytes; a page is
 * 4 KiB unless it says GPU page. The attributes are the lines of
 * VGMEM_LRC_STATS in order: VGMEM_LS_FAULTS_MINOR = 2, ...
 */
#define VGMEM__LS_ATTR(field, attr, kind, ...)	VGMEM_LS_ ## attr,
enum vgmem_lrc_stat_attr {
	VGMEM_LS_UNSPEC,
	VGMEM_LS_PAD,
	VGMEM_LRC_STATS(VGMEM__LS_ATTR)
	__VGMEM_LS_MAX
};
#undef VGMEM__LS_ATTR
#define VGMEM_LS_MAX			(__VGMEM_LS_MAX - 1)

/*
 * A histogram: VGMEM_HIST_BUCKETS u64 counts, bucket i (see
 * VGMEM_HIST_BUCKETS) as attribute VGMEM_HIST_A_BUCKET(i); all present.
 */
enum vgmem_hist_attr {
	VGMEM_HIST_A_UNSPEC,
	VGMEM_HIST_A_PAD,
	VGMEM_HIST_A_BUCKET0,
	__VGMEM_HIST_A_MAX = VGMEM_HIST_A_BUCKET0 + VGMEM_HIST_BUCKETS
};
#define VGMEM_HIST_A_BUCKET(i)		(VGMEM_HIST_A_BUCKET0 + (i))
#define VGMEM_HIST_A_MAX		(__VGMEM_HIST_A_MAX - 1)

#endif /* _UAPI_VGMEM_NETLINK_H */
