/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vgmem device ABI: what a guest's driver (vgmem_guest.ko, libvgmem) and the
 * host (vgmem.ko, the userspace host) agree on: the vGPU's registers, USERD,
 * GPFIFO, methods, control commands and PCI identity. This header is the
 * specification; docs/abi.md explains it. It compiles in the kernel, in
 * userspace and in the guest, so it uses only fixed-width types. Included
 * as <uapi/vgmem.h> (the tree's include/ is on every include path).
 *
 * Two more ABIs build on it: <uapi/vgmem_guest.h>, the guest kernel
 * driver's character device (what tenants' programs use), and
 * <uapi/vgmem_netlink.h>, the host's generic netlink family (what mgmtd and
 * operators' tools use). A guest never sees the netlink one.
 *
 * The vGPU speaks NVIDIA's channel model:
 *  - a USERD page per channel holding GP_GET (written by the GPU) and GP_PUT
 *    (written by the guest) at NVIDIA's offsets;
 *  - a GPFIFO ring of 64-bit entries in guest memory, each pointing at a
 *    pushbuffer, also in guest memory (guest-physical addresses);
 *  - pushbuffers made of method headers encoded as Fermi+ GPUs (and nouveau's
 *    NVC0_FIFO_PKHDR_* macros) encode them;
 *  - objects bound to subchannels by class id, ids from libdrm's
 *    nouveau/nvif/class.h.
 */
#ifndef _UAPI_VGMEM_H
#define _UAPI_VGMEM_H

/*
 * <linux/types.h> in both worlds, as every UAPI header: __u64 is unsigned
 * long long there, the type the kernel and os_user.h give u64, so host code
 * can take a __u64's address as a u64 * and print it with %llu. Guests and
 * tools cast when they pass its address as a uint64_t *.
 */
#include <linux/types.h>
#include <uapi/vgmem_stats.h>

#define VGMEM_ABI_VERSION		1

/* ---- USERD page (4 KiB per channel) ---------------------------------- */
#define VGMEM_USERD_SIZE		4096
#define VGMEM_USERD_GP_GET		0x88	/* u32, GPU writes: next entry to fetch */
#define VGMEM_USERD_GP_PUT		0x8c	/* u32, guest writes: one past last entry */
/* vgmem extension, in the range NVIDIA's USERD leaves unused. */
#define VGMEM_USERD_ERROR		0x100	/* u32, enum vgmem_chan_error, sticky */
#define VGMEM_USERD_ERROR_INFO		0x104	/* u32, method or entry index */
#define VGMEM_USERD_ERROR_ADDR_LO	0x108	/* u32, faulting address, low */
#define VGMEM_USERD_ERROR_ADDR_HI	0x10c	/* u32, faulting address, high */
#define VGMEM_USERD_ENTRIES_DONE	0x110	/* u32, entries completed (wraps) */

enum vgmem_chan_error {
	VGMEM_CHAN_OK = 0,
	VGMEM_CHAN_ERR_GPFIFO = 1,	/* malformed GPFIFO entry or GP_PUT out of range */
	VGMEM_CHAN_ERR_PUSHBUF = 2,	/* pushbuffer not in guest memory */
	VGMEM_CHAN_ERR_METHOD = 3,	/* unknown method or bad header */
	VGMEM_CHAN_ERR_CLASS = 4,	/* unknown class or no object bound */
	VGMEM_CHAN_ERR_VA = 5,		/* GPU VA not mapped (MMU fault) */
	VGMEM_CHAN_ERR_GUEST_MEM = 6,	/* guest-physical address out of range */
	VGMEM_CHAN_ERR_ARG = 7,		/* bad kernel or copy arguments */
	VGMEM_CHAN_ERR_KILLED = 8,	/* channel destroyed or VM torn down */
};

/* ---- GPFIFO entries (64 bits, little endian, NVIDIA layout) ------------ */
/*
 * dword0: bits 31:2 pushbuffer address bits 31:2 (bits 1:0 must be 0)
 * dword1: bits 7:0 address bits 39:32, bit 9 "subroutine" (unsupported, 0),
 *         bits 30:10 length in dwords (1 ... 2^21-1), bit 31 unused (0)
 */
#define VGMEM_GP_ENTRY(addr, ndw) \
	(((__u64)(addr) & 0xfffffffcull) | \
	 (((((__u64)(addr) >> 32) & 0xffull) | ((__u64)(ndw) << 10)) << 32))
#define VGMEM_GP_ENTRY_ADDR(e) \
	(((e) & 0xfffffffcull) | ((((e) >> 32) & 0xffull) << 32))
#define VGMEM_GP_ENTRY_NDW(e)		(((e) >> 42) & 0x1fffffull)
#define VGMEM_GP_ENTRY_RSVD(e)		((e) & (0x3ull | (0x300ull << 32) | (1ull << 63)))
#define VGMEM_GP_ENTRIES_MIN		4
#define VGMEM_GP_ENTRIES_MAX		65536	/* power of two */

/* ---- method headers (Fermi+, as nouveau's NVC0_FIFO_PKHDR_*) ------------ */
#define VGMEM_PKHDR_TYPE_SHIFT		29
#define VGMEM_PKHDR_INC			1u	/* incrementing: count dwords, mthd += 4 each */
#define VGMEM_PKHDR_NONINC		3u	/* non-incrementing: count dwords to one method */
#define VGMEM_PKHDR_IMMD		4u	/* immediate: 13-bit data in the count field */
#define VGMEM_PKHDR_INC_ONCE		5u	/* first dword to mthd, the rest to mthd + 4 */
#define VGMEM_PKHDR(type, subc, mthd, count) \
	(((__u32)(type) << 29) | (((__u32)(count) & 0x1fff) << 16) | \
	 (((__u32)(subc) & 7) << 13) | (((__u32)(mthd) >> 2) & 0xfff))
#define VGMEM_PKHDR_GET_TYPE(h)		((h) >> 29)
#define VGMEM_PKHDR_GET_COUNT(h)	(((h) >> 16) & 0x1fff)
#define VGMEM_PKHDR_GET_SUBC(h)		(((h) >> 13) & 7)
#define VGMEM_PKHDR_GET_MTHD(h)		(((h) & 0xfff) << 2)

/* Classes, as libdrm's nouveau/nvif/class.h names them (a test checks). */
#define VGMEM_CLASS_CHANNEL		0x0000b06fu	/* MAXWELL_CHANNEL_GPFIFO_A */
#define VGMEM_CLASS_COPY		0x0000b0b5u	/* MAXWELL_DMA_COPY_A */
#define VGMEM_CLASS_COMPUTE		0x0000b0c0u	/* MAXWELL_COMPUTE_A */

/* Host (channel) methods, any subchannel, below 0x100 (cl906f.h). */
#define VGMEM_MTHD_SET_OBJECT		0x0000	/* data: class id */
#define VGMEM_MTHD_NOP			0x0008
#define VGMEM_MTHD_SEMAPHORE_A		0x0010	/* GPU VA bits 39:32 */
#define VGMEM_MTHD_SEMAPHORE_B		0x0014	/* GPU VA bits 31:2 << 2 */
#define VGMEM_MTHD_SEMAPHORE_C		0x0018	/* payload */
#define VGMEM_MTHD_SEMAPHORE_D		0x001c	/* operation, below */
#define   VGMEM_SEM_OP_ACQUIRE		0x1	/* wait until *va == payload */
#define   VGMEM_SEM_OP_RELEASE		0x2	/* *va = payload (32-bit) */
#define   VGMEM_SEM_OP_ACQ_GEQ		0x4	/* wait until *va >= payload */

/* Copy engine methods (clb0b5.h). */
#define VGMEM_CE_LAUNCH_DMA		0x0300
#define   VGMEM_CE_LAUNCH_SRC_PITCH	(1u << 7)	/* must be set: pitch layout */
#define   VGMEM_CE_LAUNCH_DST_PITCH	(1u << 8)
#define   VGMEM_CE_LAUNCH_MULTI_LINE	(1u << 9)
#define   VGMEM_CE_LAUNCH_SRC_PHYS	(1u << 12)	/* source is guest-physical */
#define   VGMEM_CE_LAUNCH_DST_PHYS	(1u << 13)	/* destination is guest-physical */
#define   VGMEM_CE_LAUNCH_SEM_RELEASE	(1u << 3)	/* semaphore_type ONE_WORD */
#define VGMEM_CE_OFFSET_IN_UPPER	0x0400
#define VGMEM_CE_OFFSET_IN_LOWER	0x0404
#define VGMEM_CE_OFFSET_OUT_UPPER	0x0408
#define VGMEM_CE_OFFSET_OUT_LOWER	0x040c
#define VGMEM_CE_PITCH_IN		0x0410
#define VGMEM_CE_PITCH_OUT		0x0414
#define VGMEM_CE_LINE_LENGTH_IN		0x0418
#define VGMEM_CE_LINE_COUNT		0x041c
#define VGMEM_CE_SET_SEMAPHORE_A	0x0240
#define VGMEM_CE_SET_SEMAPHORE_B	0x0244
#define VGMEM_CE_SET_SEMAPHORE_PAYLOAD	0x0248

/*
 * Compute class: instead of a QMD, the software GPU runs built-in kernels.
 * These are vgmem-defined methods in the class's software-method range.
 */
#define VGMEM_CP_KERNEL			0x3000	/* enum vgmem_kernel */
#define VGMEM_CP_ARG(i)			(0x3004 + 4 * (i))	/* 8 x u32 */
#define VGMEM_CP_NARGS			8
#define VGMEM_CP_LAUNCH			0x3040	/* data ignored: run it */

/* Built-in kernels; 64-bit args are (lo, hi) pairs of u32 args. */
enum vgmem_kernel {
	VGMEM_K_MEMSET = 1,	/* dst(0,1), bytes(2,3), u32 value(4) */
	VGMEM_K_VECADD = 2,	/* a(0,1), b(2,3), c(4,5), n u32 elems(6); c = a + b */
	VGMEM_K_CHECKSUM = 3,	/* src(0,1), bytes(2,3), result va(4,5): u64 FNV-1a */
	VGMEM_K_STRIDED = 4,	/* src(0,1), bytes(2,3), stride(4), result va(5,6): u64 sum */
	VGMEM_K_GATHER = 5,	/* src(0,1), bytes(2,3), dst(4,5), n u32 elems(6), seed(7) */
	VGMEM_K_FILL_PATTERN = 6, /* dst(0,1), bytes(2,3), seed(4): u32 i -> hash(seed, i) */
	VGMEM_K_MAX
};

/*
 * The pattern VGMEM_K_FILL_PATTERN writes (and libvgmem's
 * vgmem_pattern_checksum recomputes on the CPU): byte k of the range is byte
 * (k & 3) of vgmem_pattern_word(seed, k >> 2), little endian. The software
 * GPU calls this very function: MurmurHash3's 64-bit finaliser of
 * (seed << 32) + i.
 */
static inline __u32 vgmem_pattern_word(__u32 seed, __u64 i)
{
	__u64 x = ((__u64)seed << 32) + i;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (__u32)x;
}

/* VGMEM_K_CHECKSUM: 64-bit FNV-1a over the bytes in address order. */
#define VGMEM_FNV1A_OFFSET		0xcbf29ce484222325ull
#define VGMEM_FNV1A_PRIME		0x00000100000001b3ull

/* ---- control commands ---------------------------------------------------- */
/*
 * One command is one struct vgmem_ctrl. The host validates every field, sets
 * status to 0 or to a negative errno and fills the out fields. Reserved
 * fields must be zero.
 */
enum vgmem_ctrl_op {
	VGMEM_CTRL_QUERY = 1,		/* out: limits */
	VGMEM_CTRL_CHAN_CREATE = 2,	/* in: gpfifo_gpa, gpfifo_entries; out: chan_id */
	VGMEM_CTRL_CHAN_DESTROY = 3,	/* in: chan_id */
	VGMEM_CTRL_BO_ALLOC = 4,	/* in: size, flags, (va if FIXED_VA); out: va */
	VGMEM_CTRL_BO_FREE = 5,		/* in: va */
	VGMEM_CTRL_STATS = 6,		/* out: stats */
	/* Share files mapped into the GPU VA space (LRC file cache, below). */
	VGMEM_CTRL_FILE_MAP = 7,	/* in: share_id, path, offset, length, flags; out: va */
	VGMEM_CTRL_FILE_UNMAP = 8,	/* in: va (start of a file map) */
	VGMEM_CTRL_FILE_ACQUIRE = 9,	/* in: va, length */
	VGMEM_CTRL_FILE_RELEASE = 10,	/* in: va, length */
	VGMEM_CTRL_FILE_SYNC = 11,	/* in: va, length: msync */
	/* The VM's shares, so the guest can name them by virtio-fs tag. */
	VGMEM_CTRL_SHARES = 12,		/* in: index; out: total, count, e[] */
	VGMEM_CTRL_OP_MAX
};

#define VGMEM_BO_FIXED_VA		(1u << 0)	/* place at bo.va */
#define VGMEM_BO_FLAGS_ALL		VGMEM_BO_FIXED_VA
/* Largest BO: bounds the host's per-BO bookkeeping (BO_ALLOC: -E2BIG). */
#define VGMEM_BO_MAX_SIZE		(64ull << 30)

#define VGMEM_PAGE_SIZE			4096ull
#define VGMEM_VA_START			0x0000000100000000ull	/* 4 GiB */
#define VGMEM_VA_END			0x0000010000000000ull	/* 1 TiB, exclusive */

struct vgmem_ctrl_query {
	__u32 abi_version;
	__u32 max_channels;
	__u64 quota;		/* bytes this vGPU may allocate in all */
	__u64 chunk_size;
	__u64 va_start;
	__u64 va_end;
};

struct vgmem_ctrl_chan {
	__u64 gpfifo_gpa;	/* 8-byte aligned, whole ring in guest memory */
	__u32 gpfifo_entries;	/* power of two, MIN..MAX */
	__u32 chan_id;		/* out on create, in on destroy */
};

struct vgmem_ctrl_bo {
	__u64 size;		/* multiple of VGMEM_PAGE_SIZE, not zero */
	__u64 va;		/* out, or in with VGMEM_BO_FIXED_VA / on free */
	__u32 flags;
	__u32 rsvd;
};

/*
 * Files of the VM's shares (virtio-fs directories the operator gave the VM,
 * each named by a share id) mapped into the GPU's address space, cached by
 * the host's LRC file cache (GAIA: lazy release consistency). A GPU's writes
 * to a file map become visible to others after FILE_RELEASE; others' writes
 * become visible to the GPU after FILE_ACQUIRE; FILE_SYNC writes the newest
 * version of the range to the file (msync). Host processes need no calls.
 *
 * FILE_MAP: path is relative to the share's root, NUL-terminated inside the
 * field, every byte after the NUL zero; it may not be absolute, leave the
 * root by "..", or pass through any symlink. offset and length are multiples
 * of VGMEM_FILE_ALIGN (the GPU page), length not zero and at most
 * VGMEM_BO_MAX_SIZE; offset + length may reach at most the file's size
 * rounded up to VGMEM_FILE_ALIGN (bytes past the end of the file read as
 * zero). flags: exactly one of VGMEM_FILE_RO, VGMEM_FILE_RW, and
 * optionally VGMEM_FILE_INO (with ino: -ESTALE if the path names a file
 * with another inode number). The VA comes
 * from the same VA space as BOs (never overlapping one) and is aligned to
 * VGMEM_FILE_ALIGN.
 *
 * Errors (docs/abi.md): -EINVAL a bad field (reserved not zero, no NUL in
 * path, empty path, misaligned or zero offset/length, unknown flags, a
 * range outside its file map, a path naming no regular file, ino without
 * VGMEM_FILE_INO); -ESTALE the file's inode number is not ino; -ENOENT no
 * such share (of this VM) or no such file; -EACCES the path escapes its
 * share or meets a symlink, or RW on a file or share the host may only
 * read; -EFBIG beyond the file or VGMEM_BO_MAX_SIZE; -ENOSPC no free VA
 * range; -ENOMEM; -EBADF the va is not the start of (UNMAP) or inside
 * (ACQUIRE, RELEASE, SYNC) a file map. A failed command changes nothing.
 *
 * FILE_UNMAP releases the VM's unreleased writes implicitly and writes
 * released data back before the mapping goes: no released byte is lost.
 */
#define VGMEM_FILE_PATH_MAX		384	/* bytes of the path field, with the NUL */
#define VGMEM_FILE_ALIGN		(64ull << 10)	/* GPU page */
#define VGMEM_FILE_RO			(1u << 0)
#define VGMEM_FILE_RW			(1u << 1)
/*
 * With VGMEM_FILE_INO, ino is the inode number the file must have on the
 * host (what the guest's virtio-fs mount shows as st_ino): a path that
 * names another file by now gets -ESTALE. The guest driver sets it from
 * the file it was handed, so a rename racing with the map cannot swap
 * the file. Without it, ino must be zero.
 */
#define VGMEM_FILE_INO			(1u << 2)
#define VGMEM_FILE_FLAGS_ALL		(VGMEM_FILE_RO | VGMEM_FILE_RW | VGMEM_FILE_INO)

struct vgmem_ctrl_file_map {
	__u32 share_id;
	__u32 flags;		/* VGMEM_FILE_RO or VGMEM_FILE_RW, | VGMEM_FILE_INO */
	__u64 offset;		/* bytes into the file, VGMEM_FILE_ALIGN multiple */
	__u64 length;		/* VGMEM_FILE_ALIGN multiple, not zero */
	__u64 va;		/* out */
	__u64 ino;		/* with VGMEM_FILE_INO; zero otherwise */
	char path[VGMEM_FILE_PATH_MAX];
};

/*
 * UNMAP: va is the start of a file map, length, flags and rsvd zero.
 * ACQUIRE, RELEASE, SYNC: [va, va + length) inside one file map, both
 * VGMEM_FILE_ALIGN multiples; length 0 means "to the end of the map".
 * flags and rsvd zero.
 */
struct vgmem_ctrl_file_range {
	__u64 va;
	__u64 length;
	__u32 flags;
	__u32 rsvd;
};

/*
 * A share's virtio-fs tag: the <target dir> of its libvirt <filesystem>,
 * what the guest mounts ("mount -t virtiofs TAG /mnt"). The virtio spec
 * bounds it to VGMEM_SHARE_TAG_MAX bytes; vgmem also refuses '/' and
 * control characters (below 0x20 and 0x7f), so a tag prints safely and
 * can never look like a path. Bytes from 0x80 up pass (UTF-8).
 */
#define VGMEM_SHARE_TAG_MAX		36	/* bytes, without the NUL */
#define VGMEM_SHARE_TAG_SIZE		40	/* the SHARES entry's field, NUL-padded */

/*
 * Whether tag (NUL-terminated) is a valid tag: 1..VGMEM_SHARE_TAG_MAX
 * bytes, none of them '/' or a control character. Reads at most
 * VGMEM_SHARE_TAG_MAX + 1 bytes. Host, guest and tools share this rule.
 */
static inline int vgmem_share_tag_ok(const char *tag)
{
	unsigned int i;

	for (i = 0; tag[i]; i++) {
		unsigned char c = (unsigned char)tag[i];

		if (i == VGMEM_SHARE_TAG_MAX || c < 0x20 || c == 0x7f ||
		    c == '/')
			return 0;
	}
	return i > 0;
}

/*
 * SHARES: the VM's share table as the guest's file maps see it now: the
 * shares FILE_MAP can name, by share_id ascending, VGMEM_CTRL_SHARES_PER_CMD
 * at a time from entry index (paging). A guest's driver finds the share
 * id of a file on a virtio-fs mount by the mount's tag.
 *
 * In: index (0 for the first page), rsvd zero; total, count and e[] are
 * output (ignored on input). Out: total, the number of shares; count, the
 * entries filled from index (at most VGMEM_CTRL_SHARES_PER_CMD; 0 when
 * index == total); e[0..count); the entries after count zeroed. index >
 * total is -EINVAL. A VM without file cache (no share given, or the
 * host's cache off) has total 0. The operator may replace the table at
 * any time: a guest paging through it that sees total change starts over.
 */
#define VGMEM_CTRL_SHARES_PER_CMD	10
#define VGMEM_SHARES_MAX		64	/* shares per vGPU */
#define VGMEM_SHARE_F_RO		(1u << 0)	/* files map read-only only */

struct vgmem_ctrl_share {
	__u32 share_id;			/* what FILE_MAP names */
	__u32 flags;			/* VGMEM_SHARE_F_* */
	char tag[VGMEM_SHARE_TAG_SIZE];	/* NUL-padded; "" if the share has none */
};

struct vgmem_ctrl_shares {
	__u32 index;			/* in: first entry wanted */
	__u32 total;			/* out */
	__u32 count;			/* out: entries in e[] */
	__u32 rsvd;
	struct vgmem_ctrl_share e[VGMEM_CTRL_SHARES_PER_CMD];
};

/* Statistics of one VM, also used by netlink and mgmtd. */

struct vgmem_vm_stats {
	__u64 quota;
	__u64 entitlement;
	/* allocated ... faults: <uapi/vgmem_stats.h>, VGMEM_VM_STATS */
	VGMEM_VM_STATS(VGMEM_STAT_MEMBER)
};

struct vgmem_ctrl {
	__u32 op;		/* enum vgmem_ctrl_op */
	__s32 status;		/* out: 0 or -errno */
	union {
		struct vgmem_ctrl_query query;
		struct vgmem_ctrl_chan chan;
		struct vgmem_ctrl_bo bo;
		struct vgmem_vm_stats stats;
		struct vgmem_ctrl_file_map file_map;
		struct vgmem_ctrl_file_range file;
		struct vgmem_ctrl_shares shares;
		__u8 raw[504];
	};
};

/* One command fills one 512-byte slot of the control queue (core/ctrl.c checks). */
#define VGMEM_CTRL_SLOT_SIZE		512

/*
 * The bytes of the union op uses (its struct); 0 for an unknown op. Every
 * byte of the union after them must be zero in a command (reserved), which
 * the device checks and the guest driver checks before passing one on. One
 * table for both ends, so an op added here is known to both.
 */
static inline unsigned int vgmem_ctrl_used(__u32 op)
{
	switch (op) {
	case VGMEM_CTRL_QUERY:
		return sizeof(struct vgmem_ctrl_query);
	case VGMEM_CTRL_CHAN_CREATE:
	case VGMEM_CTRL_CHAN_DESTROY:
		return sizeof(struct vgmem_ctrl_chan);
	case VGMEM_CTRL_BO_ALLOC:
	case VGMEM_CTRL_BO_FREE:
		return sizeof(struct vgmem_ctrl_bo);
	case VGMEM_CTRL_STATS:
		return sizeof(struct vgmem_vm_stats);
	case VGMEM_CTRL_FILE_MAP:
		return sizeof(struct vgmem_ctrl_file_map);
	case VGMEM_CTRL_FILE_UNMAP:
	case VGMEM_CTRL_FILE_ACQUIRE:
	case VGMEM_CTRL_FILE_RELEASE:
	case VGMEM_CTRL_FILE_SYNC:
		return sizeof(struct vgmem_ctrl_file_range);
	case VGMEM_CTRL_SHARES:
		return sizeof(struct vgmem_ctrl_shares);
	default:
		return 0;
	}
}

/*
 * A command's op and reserved bytes as both ends check them: the bytes of
 * its struct when op is known and every byte after them is zero, else 0
 * (the device answers -EINVAL; the guest driver refuses it first).
 */
static inline unsigned int vgmem_ctrl_well_formed(const struct vgmem_ctrl *cmd)
{
	unsigned int used = vgmem_ctrl_used(cmd->op), i;

	for (i = used; used && i < sizeof(cmd->raw); i++)
		if (cmd->raw[i])
			return 0;
	return used;
}

/* ---- the vGPU as a PCI device (VFIO mediated device) ------------------ */
/*
 * vendor:device 1b36:10f0 (the id range QEMU uses for its own emulated
 * devices; a product needs an assigned id), class 0x030200 (3D controller).
 *
 * BAR0  4 KiB of registers, every access trapped (below).
 * BAR2  VGMEM_USERD_BAR_SIZE: the USERD page of channel n at n * 4 KiB.
 *       Mapped into the guest (mmap of the region), never trapped on the
 *       submit path. While the host relocates this VM's memory, the pages
 *       are swapped for shadow copies behind the guest's back.
 * IRQ   one MSI vector (VFIO_PCI_MSI_IRQ_INDEX), or INTx: raised when
 *       IRQ_CAUSE & IRQ_MASK becomes non-zero.
 */
#define VGMEM_PCI_VENDOR		0x1b36
#define VGMEM_PCI_DEVICE		0x10f0
#define VGMEM_PCI_CLASS			0x030200
#define VGMEM_BAR0_SIZE			4096
#define VGMEM_MAX_CHANNELS		64
#define VGMEM_USERD_BAR_SIZE		(VGMEM_MAX_CHANNELS * VGMEM_USERD_SIZE)

/* BAR0 registers: 32-bit, naturally aligned accesses only. */
#define VGMEM_REG_ID			0x000	/* RO: VGMEM_ID_MAGIC */
#define   VGMEM_ID_MAGIC		0x56474d4du	/* "VGMM" */
#define VGMEM_REG_ABI_VERSION		0x004	/* RO: VGMEM_ABI_VERSION */
#define VGMEM_REG_MAX_CHANNELS		0x008	/* RO */
#define VGMEM_REG_CTRLQ_BASE_LO		0x010	/* RW: ring GPA, 4 KiB aligned */
#define VGMEM_REG_CTRLQ_BASE_HI		0x014	/* RW */
#define VGMEM_REG_CTRLQ_ENTRIES		0x018	/* RW: power of two, 1..256; 0 = off */
#define VGMEM_REG_CTRLQ_PRODUCER	0x01c	/* WO: doorbell, free-running index */
#define VGMEM_REG_CTRLQ_CONSUMER	0x020	/* RO: commands completed, free-running */
#define VGMEM_REG_STATUS		0x024	/* RO: VGMEM_STATUS_* */
#define   VGMEM_STATUS_READY		(1u << 0)
#define   VGMEM_STATUS_CTRLQ_BUSY	(1u << 1)
#define   VGMEM_STATUS_CTRLQ_ERROR	(1u << 2)	/* ring unreadable: see CTRLQ_ERROR */
#define VGMEM_REG_CTRLQ_ERROR		0x028	/* RO: -errno of the queue itself */
#define VGMEM_REG_IRQ_CAUSE		0x02c	/* RW1C: VGMEM_IRQ_* */
#define   VGMEM_IRQ_CTRLQ		(1u << 0)	/* commands completed */
#define   VGMEM_IRQ_CHAN_FAULT		(1u << 1)	/* see FAULTED_LO/HI */
#define VGMEM_REG_IRQ_MASK		0x030	/* RW: 1 = enabled */
#define VGMEM_REG_FAULTED_LO		0x034	/* RW1C: channels 0-31 faulted */
#define VGMEM_REG_FAULTED_HI		0x038	/* RW1C: channels 32-63 */

/*
 * Control queue: CTRLQ_ENTRIES slots of struct vgmem_ctrl in guest memory at
 * CTRLQ_BASE. The guest fills slots [consumer, producer) (index & (entries -
 * 1)) and writes PRODUCER; the host runs them in order, writes each slot's
 * status and outputs back, advances CONSUMER and raises VGMEM_IRQ_CTRLQ.
 * A PRODUCER more than ENTRIES ahead of CONSUMER, or base/entries changed
 * while commands are pending, sets CTRLQ_ERROR (-EINVAL) and stops the
 * queue until the guest writes CTRLQ_ENTRIES again.
 *
 * The ring arithmetic both ends use (the host's device side in
 * host-module/linux/ctrlq.c, the driver side in libvgmem's VFIO transport
 * and in the guest kernel driver): indices are free-running u32 counters,
 * so distances are taken modulo 2^32, never values compared.
 */
#define VGMEM_CTRLQ_ENTRIES_MAX		256

/* A CTRLQ_ENTRIES value that turns the queue on: a power of two, 1 ... MAX. */
static inline int vgmem_ctrlq_entries_ok(__u32 entries)
{
	return entries && entries <= VGMEM_CTRLQ_ENTRIES_MAX &&
	       !(entries & (entries - 1));
}

/* Where the slot of free-running index idx lies. */
static inline __u64 vgmem_ctrlq_slot_gpa(__u64 base, __u32 entries, __u32 idx)
{
	return base + (__u64)(idx & (entries - 1)) * VGMEM_CTRL_SLOT_SIZE;
}

/*
 * Whether a doorbell may move PRODUCER from prod to new_prod while the
 * device has completed up to cons: never more than a ring ahead of CONSUMER
 * and never back over commands already queued.
 */
static inline int vgmem_ctrlq_producer_ok(__u32 new_prod, __u32 prod,
					  __u32 cons, __u32 entries)
{
	__u32 ahead = new_prod - cons, queued = prod - cons;

	return ahead <= entries && ahead >= queued;
}

#endif /* _UAPI_VGMEM_H */
