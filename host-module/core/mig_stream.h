/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A VM's GPU memory as a migration stream (docs/migration.md): its BOs and
 * every byte of them, wherever each chunk is (VRAM or host RAM), written
 * by one host (mig_save.c) and read back into an empty VM by another
 * (mig_load.c). Only those two files include this.
 *
 * Both ends are incremental, as VFIO's migration data fd wants them: the
 * source hands out the stream in pieces of any size, one chunk at a time
 * through a staging buffer, and the destination takes it in pieces of any
 * size, so neither side ever holds the whole image. Neither holds
 * gpu->lock between calls: each step finds its BO again by VA, so a
 * relocation that moves a chunk in between costs nothing (the bytes are
 * the same wherever they are).
 *
 * The stream (little endian):
 *   header  magic "VGMEMMIG", u32 version (1 or 2), u32 header length
 *           (32), u64 the source's chunk size, u64 0;
 *   records u32 type, u32 flags, u64 payload length, the payload:
 *     VM    u64 quota, u64 allocated bytes, u64 number of BOs (version 2:
 *           when the stream began; END has the final ones);
 *     DEV   the platform's device state (struct vg_mig_dev), opaque here;
 *     BO    u64 va, u64 size (version 1: in increasing VA order);
 *     DATA  u64 va of a BO, u64 offset in it, then bytes up to the BO's
 *           end (one source chunk; version 1 leaves chunks of zeroes
 *           out, as a new BO reads as zeroes; version 2 may send a chunk
 *           again, and the last DATA for a range is what it holds);
 *     CHAN  u32 id, u32 ring entries, u64 ring's guest-physical address,
 *           char[16] the GPU driver's name, u32 state length, u32 0, the
 *           USERD page the GPU writes, the shadow page the guest wrote
 *           while frozen, and the driver's state (channel_save);
 *     BO_FREE (version 2) u64 va: the BO there is gone;
 *     FMAP  u64 va, u64 offset, u64 length, u64 inode number, u32 share
 *           id, u32 flags (VGMEM_FILE_RO or _RW), then the path as the
 *           guest mapped it (1 to VGMEM_FILE_PATH_MAX - 1 bytes, no NUL):
 *           a file map, whose writes the source wrote to the file first
 *           (a destination maps the same file of the same share there);
 *     END   u64 number of records before it; version 2 adds u64 number
 *           of BOs and u64 their bytes at the end, which the destination
 *           must then hold.
 *   A record the reader does not know is refused unless its flags have
 *   VG_MIG_F_OPTIONAL (then skipped), so a newer writer can add records
 *   an older reader may ignore.
 *
 * Version 2 is a pre-copy's stream: written while the VM runs, so BOs come
 * and go and chunks are sent again after the GPU wrote them. A stop-only
 * save writes version 1, which every destination that reads 2 reads too.
 *
 * The reader trusts nothing: every length, VA, size and offset is checked
 * before anything is allocated or written; a BO goes through vg_bo_alloc
 * at its fixed VA, so the destination's quota, VA rules and memory
 * pressure apply (where VRAM is short the reducer moves chunks to host
 * RAM, the new VM's or others'); and a stream that ends early or breaks a
 * rule leaves the VM as it was, empty.
 */
#ifndef VGMEM_CORE_MIG_STREAM_H
#define VGMEM_CORE_MIG_STREAM_H

#include "vg_internal.h"

#define VG_MIG_MAGIC		"VGMEMMIG"
#define VG_MIG_VERSION		1u	/* a stop-only save */
#define VG_MIG_VERSION_PRE	2u	/* a pre-copy save */
#define VG_MIG_HDR_LEN		32u
#define VG_MIG_REC_LEN		16u

enum vg_mig_rec {
	VG_MIG_REC_VM = 1,
	VG_MIG_REC_BO = 2,
	VG_MIG_REC_DATA = 3,
	VG_MIG_REC_CHAN = 4,
	VG_MIG_REC_DEV = 5,
	VG_MIG_REC_BO_FREE = 6,
	VG_MIG_REC_FMAP = 7,
	VG_MIG_REC_END = 0xffff,
};

#define VG_MIG_F_OPTIONAL	(1u << 0)
/* Longest payload of a record the reader buffers whole (all but DATA). */
#define VG_MIG_SMALL_MAX	512u
/* An FMAP record's head before its path. */
#define VG_MIG_FMAP_HEAD	40u
/* END's payload: version 1, version 2. */
#define VG_MIG_END_LEN		8u
#define VG_MIG_END_LEN_PRE	24u
/* A CHAN record's head: id, entries, ring, driver, state length, 0. */
#define VG_MIG_CHAN_HEAD	40u
#define VG_MIG_DRV_NAME		16u
#define VG_MIG_CHAN_PAGES	(2u * VGMEM_USERD_SIZE)
/* An optional record the reader skips may be longer, up to this. */
#define VG_MIG_SKIP_MAX		(1ull << 30)

/*
 * A chunk's bytes to or from a staging buffer, [off, off + len) of the
 * chunk (mig_save.c). gpu->lock held.
 */
int vg_mig_chunk_io(struct vg_gpu *gpu, struct vg_chunk *c, u64 off,
		    u64 len, struct vg_mem *stage, bool to_stage);

#endif /* VGMEM_CORE_MIG_STREAM_H */
