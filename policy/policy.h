/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vgmem policy engine: VRAM entitlements and admission, pure C without I/O
 * or allocation (the caller provides every buffer). Used by mgmtd; the
 * kernel module only enforces what it is given (DESIGN.md decision 1).
 *
 * Model (docs/policy.md has the full text and worked examples):
 *   quota   bytes of GPU memory the vGPU offers (VRAM plus host RAM);
 *   min     VRAM never taken away: reserved even while unused;
 *   low     VRAM use protected unless every VM is within its low
 *           (Linux memory/dmem cgroup memory.low, best effort);
 *   max     VRAM cap: the entitlement never exceeds it;
 *   weight  1..10000, share of contended VRAM;
 *   prio    0..VGP_PRIO_MAX, higher classes are served first;
 *   demand  bytes allocated now (a measurement: any value accepted).
 * Invariant: min <= low <= max <= quota, weight and prio in range. min and
 * low round up to whole chunks, max and demand-above-max round down, and
 * ceil(low) must still fit under floor(max).
 *
 * Entitlement, in whole chunks, per GPU:
 *   1. min reserved for everyone (proportional to use below min if the
 *      mins do not fit, as cgroups do);
 *   2. use below low protected (proportional if it does not fit);
 *   3. demand, capped at max, water-filled by weight, class by class from
 *      the highest priority, guarantees being floors, not extras;
 *   4. spare VRAM left after every demand is met goes, again by weight and
 *      class, up to max (headroom), unless gpu->hold_spare is set.
 * Fractions of a chunk go to the largest remainders, ties to the lower VM
 * index, so the sum never exceeds VRAM and equal VMs differ by <= 1 chunk.
 */
#ifndef VGMEM_POLICY_H
#define VGMEM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VGP_WEIGHT_MIN		1u
#define VGP_WEIGHT_MAX		10000u
#define VGP_WEIGHT_DEFAULT	100u
#define VGP_PRIO_MAX		3u		/* classes 0..3, 3 served first */
#define VGP_NR_PRIO		(VGP_PRIO_MAX + 1)
#define VGP_OVERSUB_MIN		1u		/* percent of VRAM */
#define VGP_OVERSUB_MAX		100000u
#define VGP_MAX_VMS		(1u << 20)
#define VGP_REASON_LEN		160
#define VGP_SCRATCH_ALIGN	16		/* malloc() alignment suffices */

/* One GPU. */
struct vgp_gpu {
	uint64_t vram;		/* bytes; only whole chunks are handed out */
	uint64_t host_budget;	/* bytes of host RAM for relocated memory */
	uint64_t chunk;		/* granularity: a power of two, >= 1 byte */
	uint32_t oversub_pct;	/* sum of quotas <= vram * oversub_pct / 100 */
	bool hold_spare;	/* true: skip step 4, never entitle beyond demand
				 * (min aside) */
};

/* One VM's policy and its current demand. */
struct vgp_vm {
	uint64_t quota;
	uint64_t min;
	uint64_t low;
	uint64_t max;
	uint64_t demand;
	uint32_t weight;
	uint32_t prio;
};

/* One VM's result. */
struct vgp_ent {
	uint64_t bytes;		/* entitlement: multiple of gpu->chunk, <= max */
	uint64_t guaranteed;	/* of which steps 1-2 (min, low) gave */
};

enum vgp_code {
	VGP_OK = 0,
	VGP_E_GPU,		/* -EINVAL: bad GPU parameter */
	VGP_E_VM,		/* -EINVAL: bad VM parameter (status.vm says which) */
	VGP_E_COUNT,		/* -EINVAL: too many VMs, or NULL arrays */
	VGP_E_SCRATCH,		/* -ENOBUFS: scratch smaller than vgp_scratch_size() */
	VGP_E_QUOTA_LIMIT,	/* -ENOSPC: quotas above the oversubscription limit */
	VGP_E_MIN_VRAM,		/* -ENOSPC: mins do not fit in VRAM */
	VGP_E_HOST_BUDGET,	/* -ENOSPC: worst-case relocation above host budget */
};

/* Flags of a successful vgp_compute(). */
#define VGP_F_MIN_OVERCOMMIT	(1u << 0)	/* mins did not fit: step 1 scaled */
#define VGP_F_LOW_OVERCOMMIT	(1u << 1)	/* low use did not fit: step 2 scaled */
#define VGP_F_CONTENDED		(1u << 2)	/* some demand could not be met */

/*
 * Outcome of every call. On error, code, vm (the offending VM's index, the
 * candidate being n, or -1) and reason say why; nothing else is written.
 */
struct vgp_status {
	enum vgp_code code;
	int32_t vm;
	uint32_t flags;
	uint64_t entitled;	/* compute: sum of entitlements */
	uint64_t spare;		/* compute: usable VRAM left unentitled */
	uint64_t demand;	/* compute: sum of demands, each capped at max */
	uint64_t host_need;	/* admit: worst-case relocated bytes */
	char reason[VGP_REASON_LEN];
};

/* A VM with quota q and defaults: min = low = 0, max = q, weight 100, prio 0. */
void vgp_vm_init(struct vgp_vm *vm, uint64_t quota);

/* Human-readable name of a code ("ok", "quota-limit", ...). */
const char *vgp_code_name(enum vgp_code code);

/* Each returns 0 or -EINVAL with st filled (st may be NULL). */
int vgp_validate_gpu(const struct vgp_gpu *gpu, struct vgp_status *st);
int vgp_validate_vm(const struct vgp_gpu *gpu, const struct vgp_vm *vm,
		    struct vgp_status *st);

/*
 * Whether cand may join the n VMs already on gpu (to change a VM's policy,
 * pass the others and its new policy). Admitted iff, over all n + 1:
 *   sum quota <= vram * oversub_pct / 100,
 *   sum ceil_chunk(min) <= floor_chunk(vram),
 *   host_need = sum ceil_chunk(quota) - min(floor_chunk(vram),
 *               sum floor_chunk(max)) <= host_budget (0 if negative).
 * cand == NULL checks the n VMs alone. Returns 0, -EINVAL or -ENOSPC.
 * Sums are exact (128-bit), so no input can overflow them.
 */
int vgp_admit(const struct vgp_gpu *gpu, const struct vgp_vm *vms, size_t n,
	      const struct vgp_vm *cand, struct vgp_status *st);

/* Bytes of scratch vgp_compute() needs for n VMs (0 if n is too large). */
size_t vgp_scratch_size(size_t n);

/*
 * Entitlements of n VMs into out[n]. scratch: at least vgp_scratch_size(n)
 * bytes aligned to VGP_SCRATCH_ALIGN. Deterministic: same input, same
 * output, whatever the scratch held.
 * Admission is not re-checked: overcommitted mins are scaled (status flag).
 * Returns 0, -EINVAL or -ENOBUFS; on error out is untouched.
 */
int vgp_compute(const struct vgp_gpu *gpu, const struct vgp_vm *vms, size_t n,
		struct vgp_ent *out, void *scratch, size_t scratch_len,
		struct vgp_status *st);

#endif /* VGMEM_POLICY_H */
