// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Cuckoo filter (lrc_cuckoo.h). A key hashes to a 16-bit nonzero
 * fingerprint f and a bucket i1; its other bucket is i2 = i1 ^ h(f), so
 * either bucket and the fingerprint give the other one (partial-key cuckoo
 * hashing) and a fingerprint can be moved without its key.
 *
 * A bucket is 4 u16 slots, 8 bytes: lookups read it as one u64 and test
 * the four slots at once (SWAR: a slot equal to f is a zero 16-bit lane of
 * bucket ^ f * 0x0001000100010001).
 *
 * Insert tries both buckets, then kicks: a random slot's fingerprint is
 * swapped out and moved to its other bucket, up to max_kicks times. The
 * slot chosen at every kick is recorded (2 bits each), so a failed insert
 * walks the chain back and leaves the table exactly as it was: -ENOSPC
 * never loses a fingerprint already stored.
 */
#include "lrc_cuckoo.h"

typedef u64 __attribute__((__may_alias__)) vg_cword;

#define VG_CUCKOO_SLOTS		4
#define VG_CUCKOO_KICKS		500
#define VG_CUCKOO_KICKS_MAX	512	/* path: 2 bits per kick, 128 bytes */
#define VG_CUCKOO_CAP_MAX	(1u << 30)
#define VG_CF_LANES		0x0001000100010001ull
#define VG_CF_HIGH		0x8000800080008000ull

static inline u64 vg_cf_mix(u64 x)
{
	/* murmur3's 64-bit finaliser: every input bit reaches every output bit */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline u32 vg_cf_mask(const struct vg_cuckoo *cf)
{
	return cf->nr_buckets - 1;
}

/* The fingerprint's contribution to the alternate bucket. */
static inline u32 vg_cf_alt(const struct vg_cuckoo *cf, u32 i, u16 fp)
{
	return (i ^ (u32)(((u64)fp * 0x9e3779b97f4a7c15ull) >> 32)) &
	       vg_cf_mask(cf);
}

static inline void vg_cf_hash(const struct vg_cuckoo *cf, u64 key, u32 *i1,
			      u16 *fp)
{
	u64 h = vg_cf_mix(key);

	*fp = (u16)(h >> 48);
	if (!*fp)
		*fp = 1;	/* 0 marks an empty slot */
	*i1 = (u32)h & vg_cf_mask(cf);
}

static inline u16 *vg_cf_bucket(const struct vg_cuckoo *cf, u32 i)
{
	return cf->slots + (size_t)i * VG_CUCKOO_SLOTS;
}

/* Bit 15 of each 16-bit lane of the result set where the lane equals fp. */
static inline u64 vg_cf_match(const struct vg_cuckoo *cf, u32 i, u16 fp)
{
	u64 v = *(const vg_cword *)vg_cf_bucket(cf, i) ^ ((u64)fp * VG_CF_LANES);

	/* classic "has zero lane", exact per lane (no borrow false hits) */
	return ~(((v & ~VG_CF_HIGH) + ~VG_CF_HIGH) | v) & VG_CF_HIGH;
}

static bool vg_cf_put(struct vg_cuckoo *cf, u32 i, u16 fp)
{
	u16 *b = vg_cf_bucket(cf, i);
	u32 s;

	for (s = 0; s < VG_CUCKOO_SLOTS; s++) {
		if (!b[s]) {
			b[s] = fp;
			return true;
		}
	}
	return false;
}

static u32 vg_cf_rand(struct vg_cuckoo *cf)
{
	/* xorshift64: cheap, and the seed makes victim choice reproducible */
	u64 x = cf->seed;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	cf->seed = x;
	return (u32)(x >> 32);
}

int vg_cuckoo_init(struct vg_cuckoo *cf, u32 capacity, u64 seed)
{
	u64 need;

	memset(cf, 0, sizeof(*cf));
	if (!capacity || capacity > VG_CUCKOO_CAP_MAX)
		return -EINVAL;
	/* buckets for capacity items at 95% load: capacity / (4 * 0.95) */
	need = div64_u64((u64)capacity * 5 + 18, 19);
	cf->nr_buckets = (u32)roundup_pow_of_two((unsigned long)need);
	cf->slots = kvcalloc((size_t)cf->nr_buckets * VG_CUCKOO_SLOTS,
			     sizeof(u16), GFP_KERNEL);
	if (!cf->slots) {
		cf->nr_buckets = 0;
		return -ENOMEM;
	}
	cf->max_kicks = VG_CUCKOO_KICKS;
	cf->seed = seed ? seed : 0x9e3779b97f4a7c15ull;	/* xorshift: not 0 */
	return 0;
}

void vg_cuckoo_fini(struct vg_cuckoo *cf)
{
	kvfree(cf->slots);
	memset(cf, 0, sizeof(*cf));
}

int vg_cuckoo_insert(struct vg_cuckoo *cf, u64 key)
{
	u8 path[VG_CUCKOO_KICKS_MAX / 4];
	u32 i, kicks, n;
	u16 fp;

	if (WARN_ON_ONCE(!cf->slots))
		return -EINVAL;
	vg_cf_hash(cf, key, &i, &fp);
	if (vg_cf_put(cf, i, fp))
		goto inserted;
	i = vg_cf_alt(cf, i, fp);
	if (vg_cf_put(cf, i, fp))
		goto inserted;

	kicks = min_t(u32, cf->max_kicks, VG_CUCKOO_KICKS_MAX);
	/* start kicking from either bucket */
	if (vg_cf_rand(cf) & 1)
		i = vg_cf_alt(cf, i, fp);
	for (n = 0; n < kicks; n++) {
		u32 s = vg_cf_rand(cf) & (VG_CUCKOO_SLOTS - 1);
		u16 *b = vg_cf_bucket(cf, i);
		u16 victim = b[s];

		if (!(n & 3))
			path[n / 4] = 0;
		path[n / 4] |= (u8)(s << (2 * (n & 3)));
		b[s] = fp;
		fp = victim;
		i = vg_cf_alt(cf, i, fp);
		if (vg_cf_put(cf, i, fp))
			goto inserted;
	}

	/*
	 * Too full: undo the chain newest kick first. fp is the last victim
	 * and i its alternate bucket; the bucket it was taken from is
	 * alt(i, fp), its slot is in path.
	 */
	while (n--) {
		u32 s = (path[n / 4] >> (2 * (n & 3))) & 3;
		u16 *b;
		u16 t;

		i = vg_cf_alt(cf, i, fp);
		b = vg_cf_bucket(cf, i);
		t = b[s];
		b[s] = fp;
		fp = t;
	}
	return -ENOSPC;

inserted:
	cf->nr_items++;
	return 0;
}

bool vg_cuckoo_maybe(const struct vg_cuckoo *cf, u64 key)
{
	u32 i;
	u16 fp;

	if (unlikely(!cf->slots))
		return false;
	vg_cf_hash(cf, key, &i, &fp);
	return vg_cf_match(cf, i, fp) || vg_cf_match(cf, vg_cf_alt(cf, i, fp), fp);
}

static bool vg_cf_remove(struct vg_cuckoo *cf, u32 i, u16 fp)
{
	u64 m = vg_cf_match(cf, i, fp);

	if (!m)
		return false;
	/* lowest matching lane: bit 15 of lane s is bit 16 * s + 15 */
	vg_cf_bucket(cf, i)[(fls64(m & -m) - 16) / 16] = 0;
	return true;
}

bool vg_cuckoo_delete(struct vg_cuckoo *cf, u64 key)
{
	u32 i;
	u16 fp;

	if (unlikely(!cf->slots))
		return false;
	vg_cf_hash(cf, key, &i, &fp);
	if (!vg_cf_remove(cf, i, fp) &&
	    !vg_cf_remove(cf, vg_cf_alt(cf, i, fp), fp))
		return false;
	cf->nr_items--;
	return true;
}

size_t vg_cuckoo_bytes(const struct vg_cuckoo *cf)
{
	return (size_t)cf->nr_buckets * VG_CUCKOO_SLOTS * sizeof(u16);
}
