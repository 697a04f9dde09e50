/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vgmem guest ABI: what a guest's driver (libvgmem) and the host (vgmem.ko,
 * the userspace host) agree on. This header is the specification; docs/abi.md
 * explains it. It compiles in the kernel, in userspace and in the guest, so it
 * uses only fixed-width types.
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
 * (k & 3) of vgmem_pattern_word(seed, k >> 2), little endian. The same
 * function as the software GPU's vg_sim_pattern_word (sim/sim.h; a unit test
 * checks they agree): MurmurHash3's 64-bit finaliser of (seed << 32) + i.
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
	VGMEM_CTRL_OP_MAX
};

#define VGMEM_BO_FIXED_VA		(1u << 0)	/* place at bo.va */
#define VGMEM_BO_FLAGS_ALL		VGMEM_BO_FIXED_VA

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

/* Statistics of one VM, also used by netlink and mgmtd. */
#define VGMEM_HIST_BUCKETS		24	/* bucket i: [2^i, 2^(i+1)) us; 0 also < 1 us */

struct vgmem_vm_stats {
	__u64 quota;
	__u64 entitlement;
	__u64 allocated;	/* bytes in live BOs */
	__u64 resident;		/* bytes in VRAM */
	__u64 relocated;	/* bytes in host RAM */
	__u64 reloc_out_chunks;
	__u64 reloc_in_chunks;
	__u64 bytes_out;
	__u64 bytes_in;
	__u64 suspend_last_ns;
	__u64 suspend_max_ns;
	__u64 suspend_total_ns;
	__u64 suspends;
	__u64 suspend_hist[VGMEM_HIST_BUCKETS];
	__u64 stall_hist[VGMEM_HIST_BUCKETS];	/* allocation stall */
	__u64 stall_total_ns;
	__u64 faults;		/* channel errors */
};

struct vgmem_ctrl {
	__u32 op;		/* enum vgmem_ctrl_op */
	__s32 status;		/* out: 0 or -errno */
	union {
		struct vgmem_ctrl_query query;
		struct vgmem_ctrl_chan chan;
		struct vgmem_ctrl_bo bo;
		struct vgmem_vm_stats stats;
		__u8 raw[512];
	};
};

#endif /* _UAPI_VGMEM_H */
