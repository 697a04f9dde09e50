/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A small seeded generator (xoshiro256**, seeded by splitmix64) so the
 * reducer's random choices and the workloads repeat exactly for a seed, in
 * the kernel and in userspace alike.
 */
#ifndef VGMEM_CORE_RAND_H
#define VGMEM_CORE_RAND_H

#include "os/os.h"

struct vg_rand {
	u64 s[4];
};

static inline u64 vg_splitmix64(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void vg_rand_seed(struct vg_rand *r, u64 seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = vg_splitmix64(&seed);
}

static inline u64 vg_rotl(u64 x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline u64 vg_rand_next(struct vg_rand *r)
{
	u64 res = vg_rotl(r->s[1] * 5, 7) * 9;
	u64 t = r->s[1] << 17;

	r->s[2] ^= r->s[0];
	r->s[3] ^= r->s[1];
	r->s[1] ^= r->s[2];
	r->s[0] ^= r->s[3];
	r->s[2] ^= t;
	r->s[3] = vg_rotl(r->s[3], 45);
	return res;
}

/* Uniform in [0, n), n > 0 (Lemire's multiply-shift, bias below 2^-32). */
static inline u32 vg_rand_below(struct vg_rand *r, u32 n)
{
	return (u32)(((vg_rand_next(r) >> 32) * (u64)n) >> 32);
}

#endif /* VGMEM_CORE_RAND_H */
