/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Shared between the policy engine's files; not for callers. */
#ifndef VGMEM_POLICY_INTERNAL_H
#define VGMEM_POLICY_INTERNAL_H

#include <stdint.h>

#include "policy.h"

/* Exact sums and products: 10^6 VMs of 2^64 bytes times weights fit. */
typedef unsigned __int128 vgp_u128;

/* log2 of a chunk size (a validated power of two). */
static inline unsigned int vgp_shift(uint64_t chunk)
{
	return (unsigned int)__builtin_ctzll(chunk);
}

/* Whole chunks covering b bytes, without overflow. */
static inline uint64_t vgp_chunks_up(uint64_t b, unsigned int shift)
{
	return (b >> shift) + ((b & ((1ull << shift) - 1)) != 0);
}

void vgp_status_ok(struct vgp_status *st);
int vgp_fail(struct vgp_status *st, enum vgp_code code, int32_t vm,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The GPU and all n VMs. */
int vgp_validate_all(const struct vgp_gpu *gpu, const struct vgp_vm *vms,
		     size_t n, struct vgp_status *st);

#endif /* VGMEM_POLICY_INTERNAL_H */
