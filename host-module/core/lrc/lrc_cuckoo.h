/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A cuckoo filter (Fan et al., CoNEXT 2014) over 64-bit keys: which pages
 * homed on a GPU the host CPU holds a replica of (selective caching's
 * remote directory, in software). Lookup says "maybe" or "certainly not":
 * false positives at about 2 * bucket size / 2^fp_bits, never false
 * negatives for keys inserted and not deleted. A "certainly not" lets a
 * CPU read skip the search of the GPU replicas.
 *
 * 4 fingerprints of 16 bits per bucket, partial-key cuckoo hashing with
 * a bounded number of kicks; insert returns -ENOSPC when the table is too
 * full (the caller then resizes or falls back to "maybe"). Deleting a key
 * that was never inserted may remove another key's fingerprint: callers
 * delete only what they inserted. Not locked: the owner's lock protects it.
 */
#ifndef VGMEM_CORE_LRC_CUCKOO_H
#define VGMEM_CORE_LRC_CUCKOO_H

#include "os/os.h"

struct vg_cuckoo {
	u16 *slots;		/* nr_buckets * 4 fingerprints, 0 = empty */
	u32 nr_buckets;		/* power of two */
	u32 nr_items;
	u32 max_kicks;		/* 500 from init; at most 512 are used */
	u64 seed;		/* xorshift state of the victim choice */
};

/*
 * capacity: items the table should hold at ~95% load (1 .. 2^30, else
 * -EINVAL); buckets are rounded up to a power of two. -ENOMEM leaves cf
 * zeroed.
 */
int vg_cuckoo_init(struct vg_cuckoo *cf, u32 capacity, u64 seed);
void vg_cuckoo_fini(struct vg_cuckoo *cf);
/*
 * 0, or -ENOSPC: no room within max_kicks; the table is then exactly as
 * before the call (the kicks are undone). A key inserted twice is held
 * twice (delete once per insert).
 */
int vg_cuckoo_insert(struct vg_cuckoo *cf, u64 key);
bool vg_cuckoo_maybe(const struct vg_cuckoo *cf, u64 key);
/* Returns true if a fingerprint of key was found and removed. */
bool vg_cuckoo_delete(struct vg_cuckoo *cf, u64 key);
size_t vg_cuckoo_bytes(const struct vg_cuckoo *cf);

#endif /* VGMEM_CORE_LRC_CUCKOO_H */
