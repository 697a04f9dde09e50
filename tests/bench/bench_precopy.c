// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_precopy [MIB]: a pre-copy migration of a MIB MiB vGPU (default
 * 1024) in the userspace host while its guest rewrites it at 1%, 5% and
 * 20% of its memory per second (a thread on its own channel filling
 * random chunks, paced). Each run: pre-copy passes (each reads until the
 * device has nothing for now), with GAP_MS between them as a VMM spends
 * moving guest RAM, until what the guest dirtied meanwhile falls under 1%
 * of the VM or ten passes ran, then the stop: freeze, the last pass, the channels, END, loaded on a second
 * host that took the earlier passes as they came.
 *
 * Printed per rate: the passes and their bytes, the stop phase's bytes
 * against the vGPU's (goal at 5%/s: under 10%) and against the chunks the
 * guest wrote during the last pass plus the device's records (the goal:
 * never more), the stop phase's time against a stop-only migration of the
 * same VM (save and load of everything, run right after it) and against a
 * plain memcpy of the stop phase's bytes. Every byte on the destination is
 * checked against the source after the stop. Timing never fails the
 * benchmark; a wrong byte does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host-module/user/host.h"
#include "host-module/core/vg.h"
#include "benchlib.h"

#define MiB		(1ull << 20)
#define CHUNK		(2 * MiB)
#define BO		(32 * MiB)
#define MAX_PASSES	10
#define GAP_MS		100
#define WLOG_MAX	(1u << 20)

struct writer {
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
	const uint64_t *va;		/* the BOs */
	u32 nr_bo;
	double rate;			/* fraction of the VM per second */
	atomic_bool stop;
	/* Held between writes for the stop (no launch in flight when frozen). */
	atomic_bool hold, held;
	/* Each write: its chunk (BO * chunks per BO + chunk) and time. */
	u32 *wchunk;
	u64 *wtime;
	atomic_uint nr;
	u64 vm_bytes;
	u32 seed;
};

static void die(const char *what, long err)
{
	fprintf(stderr, "bench_precopy: %s: %ld\n", what, err);
	exit(1);
}

static struct vg_host *host(u64 vram)
{
	struct vg_host_config cfg;
	struct vg_host *h;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = "bench";
	cfg.gpu.chunk_size = CHUNK;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	if (vg_host_create(&cfg, &h))
		die("host", 0);
	return h;
}

static void sleep_ns(u64 ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The guest: one random chunk rewritten at a time, paced to the rate. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	u64 per = (u64)(CHUNK / (w->rate * (double)w->vm_bytes) * 1e9);
	u32 per_bo = BO / CHUNK, c, i;
	u64 next = bench_now_ns(), now;
	int err;

	while (!atomic_load(&w->stop)) {
		if (atomic_load(&w->hold)) {
			atomic_store(&w->held, true);
			sleep_ns(100000);
			continue;
		}
		c = (u32)(rand_r(&w->seed) % (w->nr_bo * per_bo));
		err = vgmem_fill_pattern(w->ch, w->va[c / per_bo] +
					 (u64)(c % per_bo) * CHUNK, CHUNK,
					 rand_r(&w->seed));
		if (err)
			die("the guest's write", err);
		i = atomic_fetch_add(&w->nr, 1);
		if (i < WLOG_MAX) {
			w->wchunk[i] = c;
			w->wtime[i] = bench_now_ns();
		}
		next += per;
		now = bench_now_ns();
		if (next > now)
			sleep_ns(next - now);
	}
	return NULL;
}

/* Distinct chunks the guest wrote since t (its log, racing reads are fine). */
static u64 written_since(struct writer *w, u64 t)
{
	u32 n = atomic_load(&w->nr), i, per_bo = BO / CHUNK;
	u8 *seen = calloc((size_t)w->nr_bo * per_bo, 1);
	u64 chunks = 0;

	if (!seen)
		bench_oom();
	for (i = 0; i < n && i < WLOG_MAX; i++)
		if (w->wtime[i] >= t && !seen[w->wchunk[i]]) {
			seen[w->wchunk[i]] = 1;
			chunks++;
		}
	free(seen);
	return chunks * CHUNK;
}

/* Read a pass (to ENOMSG) and feed it to the destination's load. */
static u64 pass(struct vg_mig_save *s, struct vg_mig_load *l, u8 *buf,
		size_t cap)
{
	u64 total = 0;
	ssize_t n;

	for (;;) {
		n = vg_mig_save_read(s, buf, cap);
		if (n == -ENOMSG)
			return total;
		if (n <= 0)
			die("pre-copy read", (long)n);
		if (vg_mig_load_write(l, buf, (size_t)n) != n)
			die("pre-copy load", 0);
		total += (u64)n;
	}
}

static void check_same(struct vgmem_chan *a, struct vgmem_chan *b,
		       const uint64_t *va, u32 nr_bo)
{
	u8 *x = bench_alloc(BO), *y = bench_alloc(BO);
	u32 i;

	for (i = 0; i < nr_bo; i++) {
		if (vgmem_read(a, va[i], x, BO) || vgmem_read(b, va[i], y, BO))
			die("reading back", i);
		if (memcmp(x, y, BO))
			die("a BO differs on the destination", i);
	}
	free(x);
	free(y);
}

/* Everything of a frozen VM saved and loaded (a stop-only migration). */
static double stop_only_ns(struct vg_host_guest *src, struct vg_host *dh,
			   u8 *buf, size_t cap)
{
	struct vg_host_guest *d;
	struct vg_mig_save *s;
	struct vg_mig_load *l;
	u64 t0;
	ssize_t n;
	double ns;

	if (vg_host_guest_create(dh, "stoponly", 0, 4 * MiB, &d))
		die("stop-only guest", 0);
	t0 = bench_now_ns();
	if (vg_vm_freeze(vg_host_guest_vm(src)) ||
	    vg_mig_save_begin(vg_host_guest_vm(src), NULL, &s) ||
	    vg_mig_load_begin(vg_host_guest_vm(d), NULL, &l))
		die("stop-only begin", 0);
	while ((n = vg_mig_save_read(s, buf, cap)) > 0)
		if (vg_mig_load_write(l, buf, (size_t)n) != n)
			die("stop-only load", 0);
	vg_mig_save_end(s);
	if (n < 0 || vg_mig_load_finish(l))
		die("stop-only", (long)n);
	vg_vm_thaw(vg_host_guest_vm(d));
	ns = (double)(bench_now_ns() - t0);
	vg_vm_thaw(vg_host_guest_vm(src));
	vg_host_guest_destroy(d);
	return ns;
}

static void run(u64 vm_bytes, double rate)
{
	struct vg_host *sh = host(vm_bytes * 3 / 4), *dh = host(vm_bytes);
	struct vg_host_guest *g, *d;
	struct vgmem_chan *sch, *dch;
	struct vg_mig_save *s;
	struct vg_mig_load *l;
	struct vg_mig_save_stats st;
	struct writer w;
	pthread_t th;
	u32 nr_bo = (u32)(vm_bytes / BO), i, passes = 0;
	uint64_t *va = calloc(nr_bo, sizeof(*va));
	size_t cap = 8 * MiB;
	u8 *buf = bench_alloc(cap), *cp;
	u64 ini, dirty, sent, last_start = 0, last_written, stop_bytes;
	u64 t0, t_begin, tail = 0, pre_bytes = 0, overhead;
	double achieved;
	double stop_ns, only_ns, copy_ns;
	char what[128];
	ssize_t n;

	if (!va)
		bench_oom();
	if (vg_host_guest_create(sh, "tenant", 0, 4 * MiB, &g) ||
	    vgmem_chan_create(vg_host_guest_dev(g), 16, 4096, 1 * MiB, &sch))
		die("tenant", 0);
	for (i = 0; i < nr_bo; i++)
		if (vgmem_bo_alloc(vg_host_guest_dev(g), BO, &va[i]) ||
		    vgmem_fill_pattern(sch, va[i], BO, i))
			die("filling the tenant", i);
	memset(&w, 0, sizeof(w));
	w.g = g;
	w.va = va;
	w.nr_bo = nr_bo;
	w.rate = rate;
	w.vm_bytes = vm_bytes;
	w.seed = 7;
	w.wchunk = calloc(WLOG_MAX, sizeof(*w.wchunk));
	w.wtime = calloc(WLOG_MAX, sizeof(*w.wtime));
	if (!w.wchunk || !w.wtime)
		bench_oom();
	if (vgmem_chan_create(vg_host_guest_dev(g), 16, 4096, 64 << 10, &w.ch))
		die("the writer's channel", 0);
	if (vg_host_guest_create(dh, "dest", 0, 4 * MiB, &d))
		die("destination", 0);

	if (pthread_create(&th, NULL, writer_main, &w))
		die("writer thread", 0);
	t_begin = bench_now_ns();
	if (vg_mig_precopy_begin(vg_host_guest_vm(g), &s) ||
	    vg_mig_load_begin(vg_host_guest_vm(d), NULL, &l))
		die("begin", 0);
	printf("  %4.0f%%/s:", rate * 100);
	for (;;) {
		last_start = bench_now_ns();
		sent = pass(s, l, buf, cap);
		pre_bytes += sent;
		passes++;
		vg_mig_precopy_info(s, &ini, &dirty);
		printf(" pass %u %llu MiB;", passes,
		       (unsigned long long)(sent >> 20));
		/* The VMM's other work; the guest writes on meanwhile. */
		sleep_ns(GAP_MS * 1000000ull);
		vg_mig_precopy_info(s, &ini, &dirty);
		if (dirty < vm_bytes / 100 || passes == MAX_PASSES)
			break;
	}

	/* The stop, between two of the guest's writes. */
	atomic_store(&w.hold, true);
	while (!atomic_load(&w.held))
		sleep_ns(100000);
	t0 = bench_now_ns();
	if (vg_vm_freeze(vg_host_guest_vm(g)))
		die("freeze", 0);
	last_written = written_since(&w, last_start);
	achieved = (double)atomic_load(&w.nr) * CHUNK /
		   ((double)(bench_now_ns() - t_begin) / 1e9) / (double)vm_bytes;
	if (vg_mig_save_stop(s, NULL))
		die("stop", 0);
	while ((n = vg_mig_save_read(s, buf, cap)) > 0) {
		if (vg_mig_load_write(l, buf, (size_t)n) != n)
			die("the stop phase's load", 0);
		tail += (size_t)n;
	}
	if (n < 0 || vg_mig_load_finish(l))
		die("the stop phase", (long)n);
	stop_ns = (double)(bench_now_ns() - t0);
	vg_mig_save_stats(s, &st);
	vg_mig_save_end(s);
	stop_bytes = st.stop_bytes;
	/* The same bytes copied once, from a buffer as large (warmed first). */
	cp = bench_alloc(2 * tail + 64);
	memset(cp, 1, 2 * tail + 64);
	t0 = bench_now_ns();
	memcpy(cp + tail + 64, cp, tail);
	__asm__ __volatile__("" : : "r"(cp) : "memory");
	copy_ns = (double)(bench_now_ns() - t0);

	/* Every byte: the source, its guest held, against the destination. */
	atomic_store(&w.stop, true);
	pthread_join(th, NULL);
	vg_vm_thaw(vg_host_guest_vm(d));
	vg_vm_thaw(vg_host_guest_vm(g));
	if (vgmem_chan_create(vg_host_guest_dev(d), 16, 4096, 64 << 10, &dch))
		die("destination channel", 0);
	check_same(sch, dch, va, nr_bo);
	printf(" stop %llu KiB in %.1f ms (%llu KiB written in the last pass);"
	       " every byte checked; the guest wrote %.1f%% of the vGPU per second\n",
	       (unsigned long long)(stop_bytes >> 10), stop_ns / 1e6,
	       (unsigned long long)(last_written >> 10), achieved * 100);

	only_ns = stop_only_ns(g, dh, buf, cap);
	/* Channels' records and the rest that is not chunk data. */
	overhead = stop_bytes - st.stop_data_records * (16 + 16 + CHUNK);
	snprintf(what, sizeof(what),
		 "bench_precopy %.0f%%/s: stop bytes / vGPU bytes", rate * 100);
	bench_ratio(what, (double)stop_bytes / (double)vm_bytes, 0.10, 1);
	snprintf(what, sizeof(what),
		 "bench_precopy %.0f%%/s: stop chunk bytes / chunks written in the last pass",
		 rate * 100);
	bench_ratio(what, last_written ? (double)(stop_bytes - overhead) /
		    (double)last_written : 0.0, 1.0, 1);
	snprintf(what, sizeof(what),
		 "bench_precopy %.0f%%/s: stop phase / stop-only migration",
		 rate * 100);
	bench_ratio(what, stop_ns / only_ns, 0.10, 1);
	printf("  (stop-only: %.1f ms; memcpy of the stop phase's %llu KiB: %.3f ms,"
	       " the stop phase %.0fx that)\n", only_ns / 1e6,
	       (unsigned long long)(tail >> 10), copy_ns / 1e6,
	       copy_ns > 0 ? stop_ns / copy_ns : 0.0);

	(void)pre_bytes;
	vgmem_chan_destroy(dch);
	vgmem_chan_destroy(w.ch);
	vgmem_chan_destroy(sch);
	vg_host_destroy(dh);
	vg_host_destroy(sh);
	free(va);
	free(buf);
	free(cp);
	free(w.wchunk);
	free(w.wtime);
}

int main(int argc, char **argv)
{
	u64 mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 1024;
	static const double rates[] = { 0.01, 0.05, 0.20 };
	unsigned int i;

	if (mib < 64 || mib % 32) {
		fprintf(stderr, "usage: bench_precopy [MIB]: a multiple of 32, at least 64\n");
		return 2;
	}
	printf("bench_precopy: a %llu MiB vGPU (%llu MiB chunks), part of it in host RAM,"
	       " migrated with pre-copy while its guest writes\n",
	       (unsigned long long)mib, (unsigned long long)(CHUNK / MiB));
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		run(mib * MiB, rates[i]);
	return 0;
}
