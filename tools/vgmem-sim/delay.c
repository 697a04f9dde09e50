// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * delay: GPUswap section 6.4, Figure 6. Guests allocate BOs of a few sizes
 * (1, 2, 4, 8, 16 chunks) on a small GPU, freeing older ones when they hit
 * their cap, while each guest's channel keeps checksumming a canary BO (so
 * a victim is busy when it is suspended, and so a lost byte shows). Around
 * every allocation the core's statistics are read before and after, which
 * gives per allocation:
 *   - the allocation stall: wall time of vgmem_bo_alloc (and the core's own
 *     stall_total_ns delta), against the bytes the reducer relocated;
 *   - per victim, its suspension (suspend_last_ns when its suspends count
 *     moved) against the bytes it gave up (its bytes_out delta);
 *   - the raw copy time (copy_device_ns delta, the cost model's DMA time).
 * The return worker is off so every relocation belongs to an allocation.
 */
#include "vgsim.h"
#include "svg.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "host-module/core/vg_rand.h"

#define MAX_GUESTS 8
#define MAX_BOS 512

static struct {
	uint32_t guests;
	uint64_t cap;
	uint32_t allocs;
	uint32_t busy;
	uint64_t canary;
} dp = {
	.guests = 2,
	.cap = 96ull << 20,
	.allocs = 300,
	.busy = 1,
	.canary = 4ull << 20,
};

static struct vs_param delay_params[] = {
	{ "guests", VS_U32, &dp.guests, "allocating guests, 2..8" },
	{ "cap", VS_SIZE, &dp.cap, "bytes each guest holds at most (older BOs freed)" },
	{ "allocs", VS_U32, &dp.allocs, "allocations in all" },
	{ "busy", VS_U32, &dp.busy, "1: guests checksum their canary all the time" },
	{ "canary", VS_SIZE, &dp.canary, "canary BO size per guest" },
	{ NULL, 0, NULL, NULL },
};

struct dguest {
	struct vg_host_guest *g;
	struct vgmem_dev *dev;
	struct vg_vm *vm;
	uint64_t va[MAX_BOS], size[MAX_BOS];
	uint32_t nr;
	uint64_t held;
	/* busy thread */
	pthread_t thread;
	bool started;
	uint64_t canary_va, scratch_va;
	atomic_bool stop;
	atomic_ulong checks, bad;
	int err;
	struct vgmem_vm_stats st;	/* snapshot before an allocation */
};

static void *busy_main(void *p)
{
	struct dguest *d = p;
	uint64_t want = vgmem_pattern_checksum(dp.canary, 7);
	struct vgmem_chan *ch;
	uint64_t sum;
	int err;

	err = vgmem_chan_create(d->dev, 16, 0, 0, &ch);
	if (err) {
		d->err = err;
		return NULL;
	}
	err = vgmem_fill_pattern(ch, d->canary_va, dp.canary, 7);
	while (!err && !atomic_load(&d->stop)) {
		err = vgmem_checksum(ch, d->canary_va, dp.canary, d->scratch_va, &sum);
		if (!err) {
			atomic_fetch_add(&d->checks, 1);
			if (sum != want)
				atomic_fetch_add(&d->bad, 1);
		}
	}
	d->err = err;
	vgmem_chan_destroy(ch);
	return NULL;
}

struct delay_run {
	struct vs_ctx *ctx;
	struct vg_host *h;
	uint64_t chunk, vram;
	struct dguest g[MAX_GUESTS];
	FILE *fa, *fs, *fd;
	struct svg_plot pa, ps, pd;
	int sa, sa_core, ss, sd;
	uint64_t n_alloc_reloc, n_susp;
	double max_stall_ms, max_susp_ms, sum_stall_ms, sum_susp_ms;
};

static int free_oldest(struct dguest *d)
{
	int err = vgmem_bo_free(d->dev, d->va[0]);

	if (err)
		return err;
	d->held -= d->size[0];
	memmove(&d->va[0], &d->va[1], (d->nr - 1) * sizeof(d->va[0]));
	memmove(&d->size[0], &d->size[1], (d->nr - 1) * sizeof(d->size[0]));
	d->nr--;
	return 0;
}

static int one_alloc(struct delay_run *r, uint32_t k, uint32_t gi, uint64_t size)
{
	struct dguest *d = &r->g[gi];
	struct vg_gpu_stats g0, g1;
	struct vgmem_vm_stats me;
	uint64_t t0, t1, moved, dev_ns, relocs, stall_core;
	uint32_t i;
	int err;

	while (d->nr && (d->held + size > dp.cap || d->nr >= MAX_BOS)) {
		err = free_oldest(d);
		if (err)
			return err;
	}
	for (i = 0; i < dp.guests; i++)
		vg_vm_get_stats(r->g[i].vm, &r->g[i].st);
	vg_gpu_get_stats(vg_host_gpu(r->h), &g0);
	t0 = vs_now_ns();
	err = vgmem_bo_alloc(d->dev, size, &d->va[d->nr]);
	t1 = vs_now_ns();
	if (err) {
		fprintf(stderr, "vgmem-sim: delay: allocation %u (%llu bytes) "
			"failed: %s\n", k, (unsigned long long)size,
			strerror(-err));
		return err;
	}
	d->size[d->nr++] = size;
	d->held += size;
	vg_gpu_get_stats(vg_host_gpu(r->h), &g1);
	vg_vm_get_stats(d->vm, &me);

	moved = g1.bytes_out - g0.bytes_out;
	dev_ns = g1.copy_device_ns - g0.copy_device_ns;
	relocs = g1.relocations - g0.relocations;
	stall_core = me.stall_total_ns - d->st.stall_total_ns;
	fprintf(r->fa, "%u,%u,%llu,%llu,%llu,%llu,%llu,%llu\n", k, gi,
		(unsigned long long)size, (unsigned long long)(t1 - t0),
		(unsigned long long)stall_core, (unsigned long long)moved,
		(unsigned long long)(g1.reloc_out_chunks - g0.reloc_out_chunks),
		(unsigned long long)relocs);
	if (relocs) {
		double ms = (t1 - t0) / 1e6;

		svg_add_point(&r->pa, r->sa, vs_mib(moved), ms);
		svg_add_point(&r->pa, r->sa_core, vs_mib(moved), stall_core / 1e6);
		r->n_alloc_reloc++;
		r->sum_stall_ms += ms;
		if (ms > r->max_stall_ms)
			r->max_stall_ms = ms;
		fprintf(r->fd, "%u,%llu,%llu,%llu\n", k, (unsigned long long)moved,
			(unsigned long long)dev_ns, (unsigned long long)relocs);
		if (relocs == 1)
			svg_add_point(&r->pd, r->sd, vs_mib(moved), dev_ns / 1e6);
	}
	for (i = 0; i < dp.guests; i++) {
		struct vgmem_vm_stats now;
		uint64_t out;

		vg_vm_get_stats(r->g[i].vm, &now);
		if (now.suspends == r->g[i].st.suspends)
			continue;
		out = now.bytes_out - r->g[i].st.bytes_out;
		fprintf(r->fs, "%u,%u,%u,%llu,%llu\n", k, i, i == gi,
			(unsigned long long)out,
			(unsigned long long)now.suspend_last_ns);
		if (i != gi) {
			double ms = now.suspend_last_ns / 1e6;

			svg_add_point(&r->ps, r->ss, vs_mib(out), ms);
			r->n_susp++;
			r->sum_susp_ms += ms;
			if (ms > r->max_susp_ms)
				r->max_susp_ms = ms;
		}
	}
	return 0;
}

static int delay_setup(struct delay_run *r)
{
	enum vg_chunk_policy pol = r->ctx->c.policy_set ? r->ctx->c.policy :
				   VG_POLICY_COLD;
	char name[32];
	uint32_t i;
	int err;

	err = vs_host_create(r->ctx, r->vram, r->chunk, pol, false,
			     r->ctx->c.seed, &r->h);
	if (err)
		return err;
	for (i = 0; i < dp.guests; i++) {
		struct dguest *d = &r->g[i];

		snprintf(name, sizeof(name), "vm%u", i + 1);
		err = vg_host_guest_create(r->h, name, 0, 0, &d->g);
		if (err) {
			fprintf(stderr, "vgmem-sim: delay: guest %s: %s\n", name,
				strerror(-err));
			return err;
		}
		d->dev = vg_host_guest_dev(d->g);
		d->vm = vg_host_guest_vm(d->g);
		err = vgmem_bo_alloc(d->dev, dp.canary, &d->canary_va);
		if (!err)
			err = vgmem_bo_alloc(d->dev, VGMEM_PAGE_SIZE, &d->scratch_va);
		if (err) {
			fprintf(stderr, "vgmem-sim: delay: canary of %s: %s\n",
				name, strerror(-err));
			return err;
		}
		if (dp.busy) {
			err = -pthread_create(&d->thread, NULL, busy_main, d);
			if (err)
				return err;
			d->started = true;
		}
	}
	return 0;
}

static int write_plots(struct delay_run *r)
{
	char path[4200];
	int err;

	err = svg_write(&r->pa, vs_path(r->ctx, "delay_alloc.svg", path, sizeof(path)));
	if (!err)
		err = svg_write(&r->ps, vs_path(r->ctx, "delay_suspend.svg", path,
						 sizeof(path)));
	if (!err)
		err = svg_write(&r->pd, vs_path(r->ctx, "delay_dma.svg", path,
						 sizeof(path)));
	if (err)
		fprintf(stderr, "vgmem-sim: cannot write %s: %s\n", path,
			strerror(-err));
	return err;
}

static void stop_busy(struct delay_run *r, int *err)
{
	uint32_t i;

	for (i = 0; i < dp.guests; i++) {
		struct dguest *d = &r->g[i];

		if (!d->started)
			continue;
		atomic_store(&d->stop, true);
		pthread_join(d->thread, NULL);
		d->started = false;
		if (d->err && !*err) {
			fprintf(stderr, "vgmem-sim: delay: vm%u's channel failed: %s\n",
				i + 1, strerror(-d->err));
			*err = d->err;
		}
	}
}

static void summarize(struct delay_run *r)
{
	json_t *res = json_object(), *params = json_object();
	unsigned long checks = 0, bad = 0;
	struct vg_gpu_stats gs;
	uint32_t i;

	for (i = 0; i < dp.guests; i++) {
		checks += atomic_load(&r->g[i].checks);
		bad += atomic_load(&r->g[i].bad);
	}
	vg_gpu_get_stats(vg_host_gpu(r->h), &gs);
	vs_json_common(r->ctx, params, r->chunk, r->vram);
	json_object_set_new(params, "policy", json_string(vg_policy_name(
		r->ctx->c.policy_set ? r->ctx->c.policy : VG_POLICY_COLD)));
	json_object_set_new(params, "guests", json_integer(dp.guests));
	json_object_set_new(params, "cap", json_integer((json_int_t)dp.cap));
	json_object_set_new(params, "allocs", json_integer(dp.allocs));
	json_object_set_new(params, "busy", json_boolean(dp.busy));
	json_object_set_new(r->ctx->summary, "params", params);
	json_object_set_new(res, "allocations_with_relocation",
			    json_integer((json_int_t)r->n_alloc_reloc));
	json_object_set_new(res, "stall_mean_ms", json_real(r->n_alloc_reloc ?
			    r->sum_stall_ms / r->n_alloc_reloc : 0));
	json_object_set_new(res, "stall_max_ms", json_real(r->max_stall_ms));
	json_object_set_new(res, "victim_suspensions", json_integer((json_int_t)r->n_susp));
	json_object_set_new(res, "suspend_mean_ms", json_real(r->n_susp ?
			    r->sum_susp_ms / r->n_susp : 0));
	json_object_set_new(res, "suspend_max_ms", json_real(r->max_susp_ms));
	json_object_set_new(res, "relocations", json_integer((json_int_t)gs.relocations));
	json_object_set_new(res, "bytes_out", json_integer((json_int_t)gs.bytes_out));
	json_object_set_new(res, "copy_device_ns", json_integer((json_int_t)gs.copy_device_ns));
	json_object_set_new(res, "canary_checks", json_integer((json_int_t)checks));
	json_object_set_new(res, "canary_bad", json_integer((json_int_t)bad));
	json_object_set_new(res, "consistent",
			    json_boolean(vg_gpu_check(vg_host_gpu(r->h)) == 0));
	json_object_set_new(r->ctx->summary, "result", res);

	vs_info(r->ctx, "delay: %u allocations, %llu relocated (%llu relocations, %.1f MiB out)\n",
		dp.allocs, (unsigned long long)r->n_alloc_reloc,
		(unsigned long long)gs.relocations, vs_mib(gs.bytes_out));
	vs_info(r->ctx, "  allocation stall: mean %.3f ms, max %.3f ms\n",
		r->n_alloc_reloc ? r->sum_stall_ms / r->n_alloc_reloc : 0, r->max_stall_ms);
	vs_info(r->ctx, "  victim suspension: %llu, mean %.3f ms, max %.3f ms\n",
		(unsigned long long)r->n_susp,
		r->n_susp ? r->sum_susp_ms / r->n_susp : 0, r->max_susp_ms);
	vs_info(r->ctx, "  canary checksums: %lu, bad %lu\n", checks, bad);
}

static int delay_check(struct vs_ctx *ctx)
{
	uint64_t chunk = ctx->c.chunk_size ? ctx->c.chunk_size : VG_CHUNK_DEFAULT;

	if (dp.guests < 2 || dp.guests > MAX_GUESTS || dp.canary % VGMEM_PAGE_SIZE) {
		fprintf(stderr, "vgmem-sim: delay: need 2..8 guests and a canary "
			"size that is a multiple of 4K\n");
		return -EINVAL;
	}
	if (dp.cap < chunk * 16) {
		fprintf(stderr, "vgmem-sim: delay: --cap must hold the largest BO "
			"(16 chunks)\n");
		return -EINVAL;
	}
	return 0;
}

static int delay_run(struct vs_ctx *ctx)
{
	static const uint32_t mult[] = { 1, 2, 4, 8, 16 };
	struct delay_run *r;
	struct vg_rand rnd;
	uint32_t k, i;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ctx = ctx;
	r->chunk = ctx->c.chunk_size ? ctx->c.chunk_size : VG_CHUNK_DEFAULT;
	r->vram = ctx->c.vram ? ctx->c.vram : 128ull << 20;
	svg_init(&r->pa, "Allocation stall", "relocated by the allocation (MiB)",
		 "stall (ms)");
	r->sa = svg_add_series(&r->pa, "wall time", SVG_POINTS);
	r->sa_core = svg_add_series(&r->pa, "core stall", SVG_POINTS);
	svg_init(&r->ps, "Victim suspension", "relocated from the victim (MiB)",
		 "suspended (ms)");
	r->ss = svg_add_series(&r->ps, "suspension", SVG_POINTS);
	svg_init(&r->pd, "Relocation copy time (cost model)",
		 "bytes copied (MiB)", "device time (ms)");
	r->sd = svg_add_series(&r->pd, "copy batch", SVG_POINTS);
	r->fa = vs_open(ctx, "delay_alloc.csv");
	r->fs = vs_open(ctx, "delay_suspend.csv");
	r->fd = vs_open(ctx, "delay_dma.csv");
	if (!r->fa || !r->fs || !r->fd) {
		err = -EIO;
		goto out;
	}
	fprintf(r->fa, "alloc,guest,size,stall_wall_ns,stall_core_ns,bytes_relocated,"
		"chunks_out,relocations\n");
	fprintf(r->fs, "alloc,victim,is_requester,bytes_out,suspend_ns\n");
	fprintf(r->fd, "alloc,bytes,device_ns,relocations\n");
	err = delay_setup(r);
	if (err)
		goto out;

	vg_rand_seed(&rnd, ctx->c.seed);
	for (k = 0; k < dp.allocs; k++) {
		uint32_t gi = vg_rand_below(&rnd, dp.guests);
		uint64_t size = r->chunk * mult[vg_rand_below(&rnd, 5)];

		err = one_alloc(r, k, gi, size);
		if (err)
			break;
		vs_progress(ctx, (double)k / dp.allocs, "allocation %u of %u", k,
			    dp.allocs);
	}
	stop_busy(r, &err);
	if (err)
		goto out;
	vs_progress(ctx, 1.0, "done");
	summarize(r);
	err = write_plots(r);
	if (!err && json_integer_value(json_object_get(json_object_get(ctx->summary,
			"result"), "canary_bad"))) {
		fprintf(stderr, "vgmem-sim: delay: canary checksum mismatch\n");
		err = -EIO;
	}
out:
	stop_busy(r, &err);
	if (r->fa)
		fclose(r->fa);
	if (r->fs)
		fclose(r->fs);
	if (r->fd)
		fclose(r->fd);
	for (i = 0; i < dp.guests; i++)
		if (r->g[i].g)
			vg_host_guest_destroy(r->g[i].g);
	if (r->h)
		vg_host_destroy(r->h);
	svg_free(&r->pa);
	svg_free(&r->ps);
	svg_free(&r->pd);
	free(r);
	return err;
}

const struct vs_scenario vs_delay = {
	.name = "delay",
	.summary = "allocation stall and victim suspension per relocation (GPUswap 6.4, Figure 6)",
	.description =
	"--guests guests allocate BOs of 1, 2, 4, 8 or 16 chunks (seeded choice of\n"
	"guest and size) on a GPU with --vram (default 128M; the paper used 100 MB)\n"
	"and chunk size (default 2M), each freeing its oldest BOs to stay under\n"
	"--cap. With --busy 1 each guest's channel checksums a canary BO in a loop,\n"
	"so victims are running when they are suspended, and a byte lost in a\n"
	"relocation fails the run. For every allocation the core's stats are read\n"
	"before and after: the stall (wall time of the allocation; the core's\n"
	"stall_total_ns delta too) against bytes relocated, each victim's\n"
	"suspension (suspend_last_ns) against the bytes it gave up, and the\n"
	"cost-model time of the copies against their size. The return worker is\n"
	"off so every relocation belongs to an allocation.",
	.outputs =
	"  delay_alloc.csv    per allocation: size, stall (wall, core), bytes relocated\n"
	"  delay_suspend.csv  per suspension: victim, bytes it gave up, suspension ns\n"
	"  delay_dma.csv      per relocating allocation: bytes copied, device ns\n"
	"  delay_alloc.svg, delay_suspend.svg, delay_dma.svg  scatter plots\n"
	"  summary.json       means, maxima, canary checks",
	.uses_policy = true,
	.params = delay_params,
	.check = delay_check,
	.run = delay_run,
};
