// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Sparse version vectors (see lrc_vv.h): a sorted array of (owner, ver)
 * entries, inline while it fits VG_VV_INLINE entries, else in a kmalloc'ed
 * array that doubles when full and halves when a quarter full, returning
 * inline when the entries fit again.
 *
 * Lookups exploit that owner ids are unique and sorted: the entry of owner
 * o can only sit at an index <= o. So the CPU (owner 0) and the storage
 * (owner 1), the owners the host read path asks about, are found with one
 * compare, and any other owner by binary search below index o.
 *
 * The largest version is cached in vv->max. Raising a version keeps it in
 * O(1); lowering or dropping the entry that held the maximum rescans, which
 * only set/drop pay, never a reader. Out of line, ext[0] is also copied
 * into the vector (vv->first, where in[0] is inline), so vg_vv_is_newest()
 * for the lowest owner (the CPU) never touches ext: on the host read path
 * that saves a cache miss per page (bench_lrc_vcheck: 5-7% down to ~1%).
 */
#include "lrc_vv.h"

/* vg_vv_first() reads in[0] for both forms of the vector */
_Static_assert(__builtin_offsetof(struct vg_vv, first) ==
	       __builtin_offsetof(struct vg_vv, in), "vg_vv: first must alias in[0]");
/* vg_vv_is_newest() looks at in[0] and in[1] of an inline vector */
_Static_assert(VG_VV_INLINE == 2, "vg_vv_is_newest: two inline slots");

static struct vg_vv_ent *vv_ents(struct vg_vv *vv)
{
	return vv->cap ? vv->ext : vv->in;
}

static const struct vg_vv_ent *vv_ents_c(const struct vg_vv *vv)
{
	return vv->cap ? vv->ext : vv->in;
}

/*
 * Index of owner's entry (*found true) or where it would be inserted to
 * keep the array sorted (*found false).
 */
static u32 vv_find(const struct vg_vv_ent *e, u32 nr, u16 owner, bool *found)
{
	u32 lo = 0, hi = nr;

	if (owner < nr) {
		if (e[owner].owner == owner) {
			*found = true;
			return owner;
		}
		/* e[k].owner >= k for all k, so owner sits below index owner */
		hi = owner;
	}
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (e[mid].owner == owner) {
			*found = true;
			return mid;
		}
		if (e[mid].owner < owner)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static u32 vv_scan_max(const struct vg_vv *vv)
{
	const struct vg_vv_ent *e = vv_ents_c(vv);
	u32 i, m = 0;

	for (i = 0; i < vv->nr; i++)
		m = max_t(u32, m, e[i].ver);
	return m;
}

void vg_vv_init(struct vg_vv *vv)
{
	memset(vv, 0, sizeof(*vv));
}

void vg_vv_fini(struct vg_vv *vv)
{
	if (vv->cap)
		kfree(vv->ext);
	vg_vv_init(vv);
}

u32 vg_vv_get(const struct vg_vv *vv, u16 owner)
{
	const struct vg_vv_ent *e = vv_ents_c(vv);
	bool found;
	u32 i;

	if (vv->nr && vg_vv_first(vv)->owner == owner)
		return vg_vv_first(vv)->ver;
	i = vv_find(e, vv->nr, owner, &found);

	return found ? e[i].ver : 0;
}

bool vg_vv_at(const struct vg_vv *vv, u32 i, struct vg_vv_ent *e)
{
	if (i >= vv->nr)
		return false;
	*e = vv_ents_c(vv)[i];
	return true;
}

u32 vg_vv_count(const struct vg_vv *vv)
{
	return vv->nr;
}

size_t vg_vv_ext_bytes(const struct vg_vv *vv)
{
	return (size_t)vv->cap * sizeof(struct vg_vv_ent);
}

/*
 * Insert (owner, ver) at index i into a full vector: allocate the next
 * capacity and copy around the gap. Nothing changes if allocation fails.
 */
static int vv_grow_insert(struct vg_vv *vv, u32 i, u16 owner, u32 ver)
{
	u32 ncap = vv->cap ? 2u * vv->cap : 2u * VG_VV_INLINE;
	struct vg_vv_ent *old = vv_ents(vv), *n;

	ncap = min_t(u32, ncap, VG_LRC_OWNERS_MAX);
	if (WARN_ON_ONCE(ncap <= vv->nr))
		return -EOVERFLOW;
	n = kmalloc_array(ncap, sizeof(*n), GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	memcpy(n, old, i * sizeof(*n));
	n[i].owner = owner;
	n[i].ver = ver;
	memcpy(n + i + 1, old + i, (vv->nr - i) * sizeof(*n));
	if (vv->cap)
		kfree(vv->ext);
	vv->ext = n;
	vv->cap = ncap;
	vv->nr++;
	return 0;
}

/*
 * After a drop: go back inline when the entries fit, or halve the array
 * when it is a quarter full. Shrinking is an optimisation: if the smaller
 * array cannot be allocated the vector keeps the larger one, so dropping
 * never fails.
 */
static void vv_shrink(struct vg_vv *vv)
{
	struct vg_vv_ent *old = vv->ext, *n;
	u32 ncap;

	if (!vv->cap)
		return;
	if (vv->nr <= VG_VV_INLINE) {
		struct vg_vv_ent tmp[VG_VV_INLINE];

		memcpy(tmp, old, vv->nr * sizeof(*old));
		kfree(old);
		vv->cap = 0;
		memcpy(vv->in, tmp, vv->nr * sizeof(*old));
		return;
	}
	if (vv->nr > vv->cap / 4)
		return;
	ncap = vv->cap / 2;
	n = kmalloc_array(ncap, sizeof(*n), GFP_KERNEL);
	if (!n)
		return;
	memcpy(n, old, vv->nr * sizeof(*n));
	kfree(old);
	vv->ext = n;
	vv->cap = ncap;
}

static int vv_set(struct vg_vv *vv, u16 owner, u32 ver)
{
	struct vg_vv_ent *e = vv_ents(vv);
	u32 cap = vv->cap ? vv->cap : VG_VV_INLINE;
	bool found;
	u32 i, old;
	int ret;

	if (owner >= VG_LRC_OWNERS_MAX)
		return -EINVAL;
	i = vv_find(e, vv->nr, owner, &found);
	if (!found) {
		if (!ver)
			return 0;
		if (vv->nr < cap) {
			memmove(e + i + 1, e + i, (vv->nr - i) * sizeof(*e));
			e[i].owner = owner;
			e[i].ver = ver;
			vv->nr++;
		} else {
			ret = vv_grow_insert(vv, i, owner, ver);
			if (ret)
				return ret;
		}
		vv->max = max(vv->max, ver);
		return 0;
	}

	old = e[i].ver;
	if (ver) {
		e[i].ver = ver;
		if (ver >= vv->max)
			vv->max = ver;
		else if (old == vv->max)
			vv->max = vv_scan_max(vv);
		return 0;
	}

	memmove(e + i, e + i + 1, (vv->nr - i - 1) * sizeof(*e));
	vv->nr--;
	vv_shrink(vv);
	if (old == vv->max)
		vv->max = vv_scan_max(vv);
	return 0;
}

int vg_vv_set(struct vg_vv *vv, u16 owner, u32 ver)
{
	int ret = vv_set(vv, owner, ver);

	/* keep the inline copy of ext[0] (nr > VG_VV_INLINE whenever cap) */
	if (vv->cap)
		vv->first = vv->ext[0];
	return ret;
}
