/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Sparse version vectors, one per 4 KiB page of a cached file (GAIA's TSVT
 * row): owner id -> version of that owner's replica. Most pages have one
 * or two owners, so up to VG_VV_INLINE entries live inline next to the
 * page entry and only pages shared more widely allocate. The largest
 * version is kept so "is this replica the newest?" costs one lookup, not a
 * scan: the host read path asks it for every page (see bench_lrc_vcheck).
 *
 * Owner ids are small integers: VG_LRC_OWNER_CPU, VG_LRC_OWNER_STORAGE,
 * then one per GPU context, below VG_LRC_OWNERS_MAX. Version 0 means "no
 * replica". Not locked: the file's lock protects its pages' vectors.
 */
#ifndef VGMEM_CORE_LRC_VV_H
#define VGMEM_CORE_LRC_VV_H

#include "os/os.h"

#define VG_LRC_OWNER_CPU	0
#define VG_LRC_OWNER_STORAGE	1
#define VG_LRC_OWNER_GPU0	2	/* first GPU context */
#define VG_LRC_OWNERS_MAX	1024

#define VG_VV_INLINE		2

struct vg_vv_ent {
	u16 owner;
	u32 ver;
} __packed;

struct vg_vv {
	u32 max;		/* largest ver of any entry, 0 if none */
	u16 nr;			/* entries in use */
	u16 cap;		/* capacity of ext; 0: only the inline slots */
	union {
		struct vg_vv_ent in[VG_VV_INLINE];
		struct {
			/*
			 * A copy of ext[0], at the same offset as in[0]: the
			 * first entry (the CPU's whenever it has a replica,
			 * owner 0 sorts first) is read from the vector
			 * itself in both forms, without touching ext. The
			 * vector stays 24 bytes.
			 */
			struct vg_vv_ent first;
			u16 __pad;
			struct vg_vv_ent *ext;	/* cap entries, sorted by owner */
		};
	};
};

/*
 * The first entry, valid if nr > 0: in[0] inline, else first, the same
 * bytes (vv.c asserts the offsets match), so no branch on cap.
 */
static inline const struct vg_vv_ent *vg_vv_first(const struct vg_vv *vv)
{
	return &vv->in[0];
}

void vg_vv_init(struct vg_vv *vv);
void vg_vv_fini(struct vg_vv *vv);	/* frees ext */
/* Version of owner's replica, 0 if it has none. */
u32 vg_vv_get(const struct vg_vv *vv, u16 owner);
/*
 * Set (ver > 0) or drop (ver == 0) owner's entry. -EINVAL for an owner
 * >= VG_LRC_OWNERS_MAX; -ENOMEM when a full vector cannot grow. Either
 * changes nothing. May sleep (GFP_KERNEL). Dropping never fails.
 */
int vg_vv_set(struct vg_vv *vv, u16 owner, u32 ver);
static inline u32 vg_vv_max(const struct vg_vv *vv)
{
	return vv->max;
}
/*
 * True if owner holds a replica at the largest version. Inline and O(1)
 * for the CPU (the host read path asks it for every page: see
 * bench_lrc_vcheck): the first entry is always in the vector itself;
 * other owners of a vector held out of line pay a binary search.
 */
static inline bool vg_vv_is_newest(const struct vg_vv *vv, u16 owner)
{
	const struct vg_vv_ent *e0 = vg_vv_first(vv);

	/*
	 * The first entry first, without looking at nr: versions of entries
	 * are never 0, so max is 0 exactly when the vector is empty, and an
	 * empty vector's stale first slot then fails the max test. One
	 * branch and three loads from the vector's first 14 bytes for the
	 * CPU (bench_lrc_vcheck).
	 */
	if (e0->owner == owner)
		return vv->max && e0->ver == vv->max;
	if (!vv->nr)
		return false;
	if (!vv->cap)
		return vv->nr > 1 && vv->in[1].owner == owner &&
		       vv->in[1].ver == vv->max;
	return vg_vv_get(vv, owner) == vv->max;
}

/*
 * Iterate entries in owner order: i from 0 while vg_vv_at(vv, i, &e) is
 * true.
 */
bool vg_vv_at(const struct vg_vv *vv, u32 i, struct vg_vv_ent *e);
u32 vg_vv_count(const struct vg_vv *vv);
/* Bytes of memory the vector uses outside its inline slots. */
size_t vg_vv_ext_bytes(const struct vg_vv *vv);

#endif /* VGMEM_CORE_LRC_VV_H */
