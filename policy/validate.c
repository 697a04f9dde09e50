// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Input validation and admission control of the policy engine. No I/O:
 * reasons are formatted into the caller's vgp_status.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/size.h"
#include "policy.h"
#include "policy_internal.h"

static const char *const code_names[] = {
	[VGP_OK]		= "ok",
	[VGP_E_GPU]		= "invalid-gpu",
	[VGP_E_VM]		= "invalid-vm",
	[VGP_E_COUNT]		= "invalid-count",
	[VGP_E_SCRATCH]		= "scratch-too-small",
	[VGP_E_QUOTA_LIMIT]	= "quota-limit",
	[VGP_E_MIN_VRAM]	= "min-exceeds-vram",
	[VGP_E_HOST_BUDGET]	= "host-budget",
};

const char *vgp_code_name(enum vgp_code code)
{
	if ((unsigned int)code >= sizeof(code_names) / sizeof(code_names[0]))
		return "unknown";
	return code_names[code];
}

void vgp_vm_init(struct vgp_vm *vm, uint64_t quota)
{
	memset(vm, 0, sizeof(*vm));
	vm->quota = quota;
	vm->max = quota;
	vm->weight = VGP_WEIGHT_DEFAULT;
}

void vgp_status_ok(struct vgp_status *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	st->vm = -1;
	snprintf(st->reason, sizeof(st->reason), "ok");
}

int vgp_fail(struct vgp_status *st, enum vgp_code code, int32_t vm,
	     const char *fmt, ...)
{
	int err = code == VGP_E_SCRATCH ? -ENOBUFS :
		  code >= VGP_E_QUOTA_LIMIT ? -ENOSPC : -EINVAL;
	va_list ap;

	if (!st)
		return err;
	memset(st, 0, sizeof(*st));
	st->code = code;
	st->vm = vm;
	va_start(ap, fmt);
	vsnprintf(st->reason, sizeof(st->reason), fmt, ap);
	va_end(ap);
	return err;
}

int vgp_validate_gpu(const struct vgp_gpu *gpu, struct vgp_status *st)
{
	if (!gpu)
		return vgp_fail(st, VGP_E_GPU, -1, "no GPU parameters");
	if (!gpu->chunk || (gpu->chunk & (gpu->chunk - 1)))
		return vgp_fail(st, VGP_E_GPU, -1,
				"chunk %llu is not a power of two",
				(unsigned long long)gpu->chunk);
	if (gpu->vram < gpu->chunk)
		return vgp_fail(st, VGP_E_GPU, -1,
				"VRAM %llu is smaller than one chunk (%llu)",
				(unsigned long long)gpu->vram,
				(unsigned long long)gpu->chunk);
	if (gpu->oversub_pct < VGP_OVERSUB_MIN || gpu->oversub_pct > VGP_OVERSUB_MAX)
		return vgp_fail(st, VGP_E_GPU, -1,
				"oversubscription %u%% is outside %u..%u%%",
				gpu->oversub_pct, VGP_OVERSUB_MIN, VGP_OVERSUB_MAX);
	vgp_status_ok(st);
	return 0;
}

/* The VM checks alone; the GPU has been validated. */
static int check_vm(const struct vgp_gpu *gpu, const struct vgp_vm *vm,
		    int32_t idx, struct vgp_status *st)
{
	unsigned int sh = vgp_shift(gpu->chunk);

	if (!vm)
		return vgp_fail(st, VGP_E_VM, idx, "vm %d: no parameters", idx);
	if (vm->weight < VGP_WEIGHT_MIN || vm->weight > VGP_WEIGHT_MAX)
		return vgp_fail(st, VGP_E_VM, idx,
				"vm %d: weight %u is outside %u..%u", idx,
				vm->weight, VGP_WEIGHT_MIN, VGP_WEIGHT_MAX);
	if (vm->prio > VGP_PRIO_MAX)
		return vgp_fail(st, VGP_E_VM, idx,
				"vm %d: priority %u is outside 0..%u", idx,
				vm->prio, VGP_PRIO_MAX);
	if (!vm->quota)
		return vgp_fail(st, VGP_E_VM, idx, "vm %d: quota is 0", idx);
	if (vm->min > vm->low)
		return vgp_fail(st, VGP_E_VM, idx,
				"vm %d: min %llu is above low %llu", idx,
				(unsigned long long)vm->min,
				(unsigned long long)vm->low);
	if (vm->low > vm->max)
		return vgp_fail(st, VGP_E_VM, idx,
				"vm %d: low %llu is above max %llu", idx,
				(unsigned long long)vm->low,
				(unsigned long long)vm->max);
	if (vm->max > vm->quota)
		return vgp_fail(st, VGP_E_VM, idx,
				"vm %d: max %llu is above quota %llu", idx,
				(unsigned long long)vm->max,
				(unsigned long long)vm->quota);
	if (vgp_chunks_up(vm->low, sh) > vm->max >> sh)
		return vgp_fail(st, VGP_E_VM, idx,
				"vm %d: low %llu rounded up to a %llu-byte chunk is above max %llu rounded down",
				idx, (unsigned long long)vm->low,
				(unsigned long long)gpu->chunk,
				(unsigned long long)vm->max);
	return 0;
}

int vgp_validate_vm(const struct vgp_gpu *gpu, const struct vgp_vm *vm,
		    struct vgp_status *st)
{
	int err = vgp_validate_gpu(gpu, st);

	if (err)
		return err;
	err = check_vm(gpu, vm, 0, st);
	if (err)
		return err;
	vgp_status_ok(st);
	return 0;
}

int vgp_validate_all(const struct vgp_gpu *gpu, const struct vgp_vm *vms,
		     size_t n, struct vgp_status *st)
{
	size_t i;
	int err;

	err = vgp_validate_gpu(gpu, st);
	if (err)
		return err;
	if (n > VGP_MAX_VMS)
		return vgp_fail(st, VGP_E_COUNT, -1, "%zu VMs: at most %u per GPU",
				n, VGP_MAX_VMS);
	if (n && !vms)
		return vgp_fail(st, VGP_E_COUNT, -1, "%zu VMs but no array", n);
	for (i = 0; i < n; i++) {
		const struct vgp_vm *vm = &vms[i];
		unsigned int sh = vgp_shift(gpu->chunk);
		/* check_vm()'s tests as one expression: it speaks on failure. */
		int bad = (vm->weight - VGP_WEIGHT_MIN >
			   VGP_WEIGHT_MAX - VGP_WEIGHT_MIN) |
			  (vm->prio > VGP_PRIO_MAX) | !vm->quota |
			  (vm->min > vm->low) | (vm->low > vm->max) |
			  (vm->max > vm->quota) |
			  (vgp_chunks_up(vm->low, sh) > vm->max >> sh);

		if (bad) {
			err = check_vm(gpu, vm, (int32_t)i, st);
			if (err)
				return err;
		}
	}
	vgp_status_ok(st);
	return 0;
}

/*
 * A size for reasons, in the units operators write (libvirt's and mgmtd's:
 * KiB = 1024; vg_format_size()); a u128 above 2^64 - 1 cannot come from one
 * VM's sizes and is said as such.
 */
struct vgp_size_text {
	char s[VG_SIZE_TEXT];
};

static struct vgp_size_text size_text(vgp_u128 v)
{
	struct vgp_size_text t;

	if (v > UINT64_MAX)
		snprintf(t.s, sizeof(t.s), "more than 16EiB");
	else
		vg_format_size((uint64_t)v, VG_FMT_BYTES_WORD, t.s,
			       sizeof(t.s));
	return t;
}

int vgp_admit(const struct vgp_gpu *gpu, const struct vgp_vm *vms, size_t n,
	      const struct vgp_vm *cand, struct vgp_status *st)
{
	vgp_u128 quota = 0, quota_c = 0, min_c = 0, max_c = 0, limit, vram_c;
	vgp_u128 in_vram, need;
	unsigned int sh;
	uint64_t c;
	size_t i, total;
	int err;

	err = vgp_validate_all(gpu, vms, n, st);
	if (err)
		return err;
	if (cand) {
		if (n >= VGP_MAX_VMS)
			return vgp_fail(st, VGP_E_COUNT, (int32_t)n,
					"GPU already has %u VMs", VGP_MAX_VMS);
		err = check_vm(gpu, cand, (int32_t)n, st);
		if (err)
			return err;
	}
	c = gpu->chunk;
	sh = vgp_shift(c);
	total = n + (cand ? 1 : 0);
	for (i = 0; i < total; i++) {
		const struct vgp_vm *vm = i < n ? &vms[i] : cand;

		quota += vm->quota;
		quota_c += (vgp_u128)vgp_chunks_up(vm->quota, sh) << sh;
		min_c += (vgp_u128)vgp_chunks_up(vm->min, sh) << sh;
		max_c += (vgp_u128)(vm->max >> sh) << sh;
	}

	limit = (vgp_u128)gpu->vram * gpu->oversub_pct / 100;
	if (quota > limit)
		return vgp_fail(st, VGP_E_QUOTA_LIMIT, cand ? (int32_t)n : -1,
				"quotas would sum to %s, above %u%% of VRAM %s (%s)",
				size_text(quota).s, gpu->oversub_pct,
				size_text(gpu->vram).s, size_text(limit).s);

	vram_c = (vgp_u128)(gpu->vram / c) * c;
	if (min_c > vram_c)
		return vgp_fail(st, VGP_E_MIN_VRAM, cand ? (int32_t)n : -1,
				"mins would sum to %s, above usable VRAM %s",
				size_text(min_c).s, size_text(vram_c).s);

	in_vram = max_c < vram_c ? max_c : vram_c;
	need = quota_c > in_vram ? quota_c - in_vram : 0;
	if (need > gpu->host_budget)
		return vgp_fail(st, VGP_E_HOST_BUDGET, cand ? (int32_t)n : -1,
				"worst case puts %s in host RAM, above the budget %s",
				size_text(need).s, size_text(gpu->host_budget).s);

	vgp_status_ok(st);
	if (st)
		st->host_need = (uint64_t)need;
	return 0;
}
