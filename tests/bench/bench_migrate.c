// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_migrate: the stop phase of a migration in the userspace host (the
 * device part: the source's core writes a frozen VM's stream, the
 * destination's reads it into an empty VM) against a plain memcpy of the
 * same number of bytes, run side by side (ABAB..., medians). The VM has
 * 256 MiB of BOs, every byte written, half of it relocated to host RAM on
 * a 128 MiB source GPU; the destination has room for all of it in VRAM.
 * Also: the stream's size against the VM's bytes when only a tenth of them
 * was written (chunks of zeroes are left out). Goals are printed with what
 * was measured; timing never fails the benchmark.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host-module/user/host.h"
#include "host-module/core/vg.h"
#include "benchlib.h"

#define MiB		(1ull << 20)
#define VM_BYTES	(256 * MiB)
#define BO		(32 * MiB)
#define REPS		5

static struct vg_host *host(u64 vram)
{
	struct vg_host_config cfg;
	struct vg_host *h;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = "bench";
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	if (vg_host_create(&cfg, &h)) {
		fprintf(stderr, "bench_migrate: host of %llu MiB\n",
			(unsigned long long)(vram / MiB));
		exit(1);
	}
	return h;
}

/* A tenant with VM_BYTES of BOs, written up to `written` bytes of each. */
static struct vg_host_guest *tenant(struct vg_host *h, u64 written)
{
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
	uint64_t va;
	u64 i;

	if (vg_host_guest_create(h, "tenant", 0, 4 * MiB, &g) ||
	    vgmem_chan_create(vg_host_guest_dev(g), 16, 4096, 1 * MiB, &ch)) {
		fprintf(stderr, "bench_migrate: tenant\n");
		exit(1);
	}
	for (i = 0; i < VM_BYTES / BO; i++) {
		if (vgmem_bo_alloc(vg_host_guest_dev(g), BO, &va) ||
		    (written && vgmem_fill_pattern(ch, va, written, (u32)i))) {
			fprintf(stderr, "bench_migrate: BO %llu\n",
				(unsigned long long)i);
			exit(1);
		}
	}
	vgmem_chan_destroy(ch);
	return g;
}

/* Save src's VM into buf: the stream's length. */
static size_t save(struct vg_host_guest *src, u8 *buf, size_t cap)
{
	struct vg_mig_save *s;
	size_t len = 0;
	ssize_t n;

	if (vg_mig_save_begin(vg_host_guest_vm(src), NULL, &s))
		exit(1);
	while ((n = vg_mig_save_read(s, buf + len, cap - len)) > 0)
		len += (size_t)n;
	vg_mig_save_end(s);
	if (n < 0) {
		fprintf(stderr, "bench_migrate: save: %zd\n", n);
		exit(1);
	}
	return len;
}

static void load(struct vg_host_guest *dst, const u8 *buf, size_t len)
{
	struct vg_mig_load *l;
	int err;

	if (vg_mig_load_begin(vg_host_guest_vm(dst), NULL, &l))
		exit(1);
	(void)vg_mig_load_write(l, buf, len);
	err = vg_mig_load_finish(l);
	if (err) {
		fprintf(stderr, "bench_migrate: load: %d\n", err);
		exit(1);
	}
	vg_vm_thaw(vg_host_guest_vm(dst));
}

int main(void)
{
	struct vg_host *src = host(128 * MiB), *dst = host(512 * MiB);
	struct vg_host_guest *t = tenant(src, BO), *d, *sparse;
	size_t cap = VM_BYTES + 64 * MiB, len = 0, slen;
	u8 *buf = bench_alloc(cap), *copy = bench_alloc(cap);
	double tm[REPS], tc[REPS], stop_ns, copy_ns;
	struct vgmem_vm_stats st;
	u64 t0;
	int r;

	vg_vm_get_stats(vg_host_guest_vm(t), &st);
	printf("bench_migrate: a VM of %llu MiB, %llu MiB of it in host RAM; %d runs (median)\n",
	       (unsigned long long)(st.allocated / MiB),
	       (unsigned long long)(st.relocated / MiB), REPS);
	/* Warm both: the first touches fault pages in. */
	memset(copy, 1, cap);
	for (r = 0; r < REPS; r++) {
		if (vg_host_guest_create(dst, "copy", 0, 4 * MiB, &d))
			return 1;
		t0 = bench_now_ns();
		if (vg_vm_freeze(vg_host_guest_vm(t)))
			return 1;
		len = save(t, buf, cap);
		load(d, buf, len);
		vg_vm_thaw(vg_host_guest_vm(t));
		tm[r] = (double)(bench_now_ns() - t0);
		vg_host_guest_destroy(d);

		t0 = bench_now_ns();
		memcpy(copy, buf, len);
		__asm__ __volatile__("" : : "r"(copy) : "memory");
		tc[r] = (double)(bench_now_ns() - t0);
	}
	stop_ns = bench_median(tm, REPS);
	copy_ns = bench_median(tc, REPS);
	printf("  stop phase (save + load): %8.2f ms  %7.2f GiB/s of stream\n",
	       stop_ns / 1e6, (double)len / stop_ns * 1e9 / (1ull << 30));
	printf("  plain memcpy of %zu MiB:  %8.2f ms\n", len >> 20,
	       copy_ns / 1e6);
	bench_ratio("bench_migrate: stop phase / memcpy of the stream",
		    stop_ns / copy_ns, 6.0, 1);

	/* Mostly unwritten: the stream carries what was written. */
	sparse = tenant(dst, BO / 10 & ~4095ull);
	if (vg_vm_freeze(vg_host_guest_vm(sparse)))
		return 1;
	slen = save(sparse, buf, cap);
	vg_vm_thaw(vg_host_guest_vm(sparse));
	printf("  a VM with a tenth of each BO written: stream %zu MiB for %llu MiB\n",
	       slen >> 20, (unsigned long long)(VM_BYTES / MiB));
	bench_ratio("bench_migrate: sparse stream / VM bytes",
		    (double)slen / (double)VM_BYTES, 0.2, 1);

	vg_host_destroy(dst);
	vg_host_destroy(src);
	free(buf);
	free(copy);
	return 0;
}
