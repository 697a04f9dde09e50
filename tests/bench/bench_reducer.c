// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_reducer: what the reducer and the relocation bookkeeping cost per
 * chunk they choose, from 1K to 1M chunks and 2 to 1000 VMs. Goal: at most
 * 1 us per chunk chosen at 1M chunks.
 *
 * The core runs on the null GPU driver (no bytes: copies and maps are free),
 * so what is measured is the core alone. Per configuration, in one process:
 *   pressured: VRAM of N chunks, filled by V-L VMs; then L late VMs in
 *              turn allocate M chunks each (their equal share) in BOs of
 *              up to 16 chunks, and every chunk they get must be taken
 *              from the others (reduce + relocate). L is V / 64, at least
 *              1: at 1000 VMs one late VM's share is 1000 chunks, about a
 *              millisecond, too short to time on a shared machine; 15 late
 *              VMs make it 15000.
 *   free:      the same, with VRAM for N + L * M chunks: no reduce at all.
 * Reducer cost per chunk chosen = (pressured - free) / chunks chosen; the
 * RATIO is pressured / free time of the same allocations. Timing never
 * fails the benchmark.
 *
 * "reduce ns/ch" isolates the choice from the relocation bookkeeping: on
 * the pressured GPU after the measured allocations, vg_reduce() alone is
 * timed for LATE_BO_MAX chunks at a time (the marks are then dropped,
 * untimed), so reduce + relocation = the reducer column. (The reducer
 * prefetches what the relocation of each chosen chunk will touch; timed
 * alone it pays for those misses without the relocation that gains.)
 *
 * --only N V runs one configuration, --reps R at most R runs of it; for
 * profilers: valgrind --tool=callgrind --toggle-collect=late_allocs
 * bench_reducer --only N V --reps 1 (see --help).
 *
 * Times drift with the machine's load; instruction counts do not. With
 * valgrind installed, the 1M-chunk, 1000-VM configuration is also counted
 * under callgrind, pressured and free once each (--cg), inside
 * late_allocs only: the same difference per chunk chosen, in
 * instructions, to compare runs on any machine (no goal: the goal is in
 * time). --cg runs one late VM, as this count always did, so that counts
 * from before and after the late VMs became several compare.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host-module/core/vg_internal.h"
#include "benchlib.h"
#include "null_gpu.h"

#define CHUNK		(64ull << 10)	/* VG_CHUNK_MIN: 1M chunks = 64 GiB nominal */
#define FILL_BO_MAX	1024		/* chunks per BO while filling */
#define LATE_BO_MAX	16		/* chunks per BO of the measured allocations */
#define MAX_VMS		1000
#define HEAP_WARM	(768ull << 20)	/* more than 1M chunks' records need */

static int gm_read(void *priv, u64 gpa, void *buf, size_t len)
{
	(void)priv; (void)gpa; (void)buf; (void)len;
	return -EFAULT;
}

static int gm_write(void *priv, u64 gpa, const void *buf, size_t len)
{
	(void)priv; (void)gpa; (void)buf; (void)len;
	return -EFAULT;
}

struct result {
	double ns;		/* measured allocations */
	double cpu_ns;		/* the same, this thread's CPU time */
	double reduce_ns;	/* vg_reduce() alone, per chunk it chose */
	u64 chunks_alloc;	/* chunks the late VMs allocated */
	u64 chunks_chosen;	/* chunks the reducer chose */
};

/*
 * The measured allocations, in a function of their own so that a profiler
 * can be told to look at them alone (callgrind --toggle-collect=late_allocs).
 */
static noinline int late_allocs(struct vg_vm *vm, u64 m)
{
	u64 left, va;
	int err;

	for (left = m; left; ) {
		u64 c = left < LATE_BO_MAX ? left : LATE_BO_MAX;

		err = vg_bo_alloc(vm, c * CHUNK, 0, &va);
		if (err)
			return err;
		left -= c;
	}
	return 0;
}

/*
 * vg_reduce() by itself in the state the allocations left: reps calls for
 * LATE_BO_MAX chunks each, marks dropped after each call outside the
 * timing. Returns ns per chunk chosen, or a negative errno.
 */
static double time_reduce(struct vg_gpu *gpu, struct vg_vm *req, u32 reps)
{
	u64 ns = 0, chunks = 0;
	struct vg_plan plan;
	struct vg_vm *vm;
	u32 i;

	for (i = 0; i < reps; i++) {
		u64 t0, t1;
		int err;

		mutex_lock(&gpu->lock);
		t0 = bench_now_ns();
		err = vg_reduce(gpu, req, NULL, LATE_BO_MAX * CHUNK, &plan);
		t1 = bench_now_ns();
		list_for_each_entry(vm, &gpu->vms, node) {
			chunks += vm->marked_bytes / CHUNK;
			vg_unmark_all(vm);
		}
		mutex_unlock(&gpu->lock);
		if (err)
			return err;
		ns += t1 - t0;
	}
	return chunks ? (double)ns / chunks : 0;
}

/* Late VMs of a configuration of v VMs (see the top). */
static u32 late_vms(u32 v)
{
	return v / 64 ? v / 64 : 1;
}

static int run_once(u64 n, u32 v, u32 late, u64 m, bool pressured, u64 seed,
		    struct result *res)
{
	struct vg_gpu_config gcfg = {
		.name = "bench", .chunk_size = CHUNK, .policy = VG_POLICY_RANDOM,
		.seed = seed, .no_return_worker = true,
	};
	struct vg_vm_config vcfg = {
		.gmem = { .read = gm_read, .write = gm_write },
	};
	struct vg_vm **vms;
	struct vg_gpu_stats s0, s1;
	struct null_gpu *nb;
	struct vg_gpu *gpu;
	u64 per_vm, left, va, t0, t1, c0, c1;
	u32 i, fill = v - late;
	int err;

	/* Pressured: VRAM is exactly what the fill takes, so every chunk counts. */
	per_vm = n / fill;
	nb = null_create((pressured ? per_vm * fill : n + late * m) * CHUNK);
	vms = calloc(v, sizeof(*vms));
	if (!nb || !vms)
		return -ENOMEM;
	err = vg_gpu_create(&gcfg, &null_ops, nb, &gpu);
	if (err)
		goto out_free;
	for (i = 0; i < v; i++) {
		char name[16];

		snprintf(name, sizeof(name), "vm%u", i);
		vcfg.name = name;
		err = vg_vm_create(gpu, &vcfg, &vms[i]);
		if (err)
			goto out_vms;
	}
	/* Fill VRAM with v - late VMs, round robin so all hold the same. */
	for (left = per_vm; left; ) {
		u64 c = left < FILL_BO_MAX ? left : FILL_BO_MAX;

		for (i = 0; i < fill; i++) {
			err = vg_bo_alloc(vms[i], c * CHUNK, 0, &va);
			if (err)
				goto out_vms;
		}
		left -= c;
	}
	vg_gpu_get_stats(gpu, &s0);
	c0 = bench_cpu_ns();
	t0 = bench_now_ns();
	for (i = fill; i < v && !err; i++)
		err = late_allocs(vms[i], m);
	t1 = bench_now_ns();
	c1 = bench_cpu_ns();
	if (err)
		goto out_vms;
	vg_gpu_get_stats(gpu, &s1);
	res->ns = (double)(t1 - t0);
	res->cpu_ns = (double)(c1 - c0);
	res->reduce_ns = pressured ? time_reduce(gpu, vms[v - 1], 64) : 0;
	res->chunks_alloc = (u64)late * m;
	/*
	 * Every chunk that went to host RAM was chosen: a victim's relocated
	 * chunk or a late VM's own placed there (nothing returns: no worker).
	 */
	res->chunks_chosen = (s1.host_used - s0.host_used) / CHUNK;
	if (vg_gpu_check(gpu))
		fprintf(stderr, "bench_reducer: accounting check failed\n");
out_vms:
	for (i = 0; i < v; i++)
		if (vms[i])
			vg_vm_destroy(vms[i]);
	vg_gpu_destroy(gpu);
out_free:
	free(vms);
	null_destroy(nb);
	return err;
}

/* Chunks the late VM allocates: up to its equal share (n / v), 64 at least. */
static u64 late_chunks(u64 n, u32 v)
{
	u64 m = n / v < n / 4 ? n / v : n / 4;

	return m < 64 ? 64 : m;
}

/*
 * The 1M-chunk, 1000-VM configuration under callgrind (see the top): one
 * late VM allocates 1000 chunks, every one of them chosen from the others
 * (counted in an untimed run of the same, outside callgrind).
 */
static void print_instructions(void)
{
	static const char *const fns[] = { "late_allocs", NULL };
	static const char *const press[] = { "--cg", "1000000", "1000", "1", NULL };
	static const char *const nopress[] = { "--cg", "1000000", "1000", "0", NULL };
	unsigned long long ip = bench_callgrind(fns, press);
	unsigned long long ifree = ip ? bench_callgrind(fns, nopress) : 0;
	struct result res;
	u64 chosen = 0;

	if (ip && ifree &&
	    !run_once(1000000, 1000, 1, late_chunks(1000000, 1000), true, 1, &res))
		chosen = res.chunks_chosen;
	if (!ip || !ifree || ip < ifree || !chosen) {
		printf("reducer+relocation instructions per chunk chosen at 1M chunks, 1000 VMs: not measured (needs valgrind)\n");
		return;
	}
	printf("reducer+relocation instructions per chunk chosen at 1M chunks, 1000 VMs (callgrind): %.0f (pressured %llu, free %llu, %llu chosen)\n",
	       (double)(ip - ifree) / (double)chosen, ip, ifree,
	       (unsigned long long)chosen);
}

/*
 * One row of the table: reps runs of n chunks and v VMs of which late
 * arrive last, pressured and free interleaved, medians. *red: the
 * reducer's cost per chunk chosen. Returns 0 or a negative errno.
 */
static int measure(u64 n, u32 v, u32 late, u32 reps, double *red)
{
	double tp[9], tf[9], tr[9], cp[9], cf[9];
	double press, freet, redonly, redcpu;
	u64 m = late_chunks(n, v), chosen = 0, alloc = 0;
	int err = 0;
	u32 r;

	for (r = 0; r < reps && !err; r++) {
		struct result rp, rf;

		err = run_once(n, v, late, m, true, 1 + r, &rp);
		if (!err)
			err = run_once(n, v, late, m, false, 1 + r, &rf);
		if (err)
			break;
		tp[r] = rp.ns / rp.chunks_alloc;
		tf[r] = rf.ns / rf.chunks_alloc;
		cp[r] = rp.cpu_ns / rp.chunks_alloc;
		cf[r] = rf.cpu_ns / rf.chunks_alloc;
		tr[r] = rp.reduce_ns;
		chosen = rp.chunks_chosen;
		alloc = rp.chunks_alloc;
	}
	if (err) {
		printf("%8llu %5u  failed: %s\n", (unsigned long long)n, v,
		       strerror(-err));
		return err;
	}
	press = bench_median(tp, reps);
	freet = bench_median(tf, reps);
	redonly = bench_median(tr, reps);
	/* Every allocated chunk needed one chosen chunk. */
	*red = chosen ? (press - freet) * alloc / chosen : 0;
	redcpu = chosen ? (bench_median(cp, reps) - bench_median(cf, reps)) *
			  alloc / chosen : 0;
	printf("%8llu %5u %7llu %8llu %12.1f %12.1f %14.1f %9.1f %13.1f %7.2f\n",
	       (unsigned long long)n, v, (unsigned long long)alloc,
	       (unsigned long long)chosen, press, freet, *red, redcpu, redonly,
	       freet > 0 ? press / freet : 0);
	fflush(stdout);
	return 0;
}

/*
 * The timed runs' heap is mapped before the first one: glibc keeps what is
 * freed (no trim, no mmap), and 768 MiB are touched once and freed. Else
 * whichever run first grows the heap pays a page fault per new 4 KiB page,
 * dear on a virtual machine with shadowed page tables (530-650 ns per chunk
 * placed by fifteen late VMs, measured), a cost of this process and not of
 * the core: the module's kmalloc() memory is mapped already.
 */
static void heap_warm(void)
{
	char *p;

	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TRIM_THRESHOLD, -1);
	p = malloc(HEAP_WARM);
	if (!p)
		return;
	memset(p, 1, HEAP_WARM);
	free(p);
}

int main(int argc, char **argv)
{
	static const u64 sizes[] = { 1000, 10000, 100000, 1000000 };
	static const u32 vmsn[] = { 2, 10, 100, 1000 };
	double at_1m_worst = 0, at_1m_1k_one = 0;
	bool measure_cg = false;
	size_t a, b;
	bool quick = false;
	u64 only_n = 0;
	u32 only_v = 0, max_reps = 9;
	int i;

	/* --cg N V PRESSURED: one run, for bench_callgrind() (see the top). */
	if (argc == 5 && !strcmp(argv[1], "--cg")) {
		struct result res;

		u64 n = strtoull(argv[2], NULL, 0);
		u32 v = (u32)strtoul(argv[3], NULL, 0);

		if (n < 4 || v < 2 || (u64)v * 4 > n)
			return 2;
		return !!run_once(n, v, 1, late_chunks(n, v), !!atoi(argv[4]),
				  1, &res);
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--only") && i + 2 < argc) {
			only_n = strtoull(argv[++i], NULL, 0);
			only_v = (u32)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			max_reps = (u32)strtoul(argv[++i], NULL, 0);
			if (!max_reps || max_reps > 9)
				max_reps = 9;
		} else {
			printf("usage: %s [--quick] [--only CHUNKS VMS] [--reps 1..9]\n"
			       "  --quick  configurations up to 100K chunks only\n"
			       "  --only   one configuration (for profilers:\n"
			       "           valgrind --tool=callgrind --toggle-collect=late_allocs\n"
			       "           %s --only 1000000 1000 --reps 1;\n"
			       "           inclusive cost of vg_reduce + vg_relocate_marked\n"
			       "           divided by the chunks chosen is the reducer's part)\n"
			       "  --reps   at most this many runs per configuration (median)\n",
			       argv[0], argv[0]);
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}

	heap_warm();
	printf("bench_reducer: core on the null GPU driver, chunk %llu KiB, random policy, heap mapped in advance\n",
	       (unsigned long long)(CHUNK >> 10));
	printf("%8s %5s %7s %8s %12s %12s %14s %9s %13s %7s\n", "chunks", "VMs",
	       "alloc", "chosen", "press ns/ch", "free ns/ch", "reducer ns/ch",
	       "cpu ns/ch", "reduce ns/ch", "RATIO");
	for (a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++) {
		u64 n = sizes[a];

		if (quick && n > 100000)
			break;
		if (only_n && n != only_n)
			continue;
		for (b = 0; b < sizeof(vmsn) / sizeof(vmsn[0]); b++) {
			u32 v = vmsn[b];
			u32 reps = n <= 10000 ? 9 : n <= 100000 ? 5 : 3;
			double red;

			if ((u64)v * 4 > n || (only_v && v != only_v))
				continue;
			if (reps > max_reps)
				reps = max_reps;
			if (measure(n, v, late_vms(v), reps, &red))
				continue;
			if (n == 1000000 && red > at_1m_worst)
				at_1m_worst = red;
			if (n == 1000000 && v == 1000) {
				measure_cg = true;
				if (!measure(n, v, 1, reps, &red))
					at_1m_1k_one = red;
			}
		}
	}
	if (!quick && (!only_n || only_n == 1000000)) {
		printf("reducer+relocation cost per chunk chosen at 1M chunks (worst VM count): "
		       "%.1f ns (goal <= 1000 ns) %s\n", at_1m_worst,
		       at_1m_worst <= 1000 ? "met" : "NOT met");
		bench_ratio("bench_reducer 1M chunks: cost per chunk / 1 us",
			    at_1m_worst / 1000.0, 1.0, 1);
	}
	if (at_1m_1k_one > 0)
		printf("the same at 1M chunks, 1000 VMs with one late VM (each victim touched once, cold since the fill): %.1f ns (information)\n",
		       at_1m_1k_one);
	if (measure_cg)
		print_instructions();
	return 0;
}
