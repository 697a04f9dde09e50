// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Workload instances in threads (see runner.h). Each instance opens a
 * channel on its guest, optionally writes a canary BO with a pattern, runs
 * its workload, then checks the canary with a GPU checksum against the CPU
 * one: relocation must never lose or mix a byte.
 */
#include "runner.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

struct start_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go;
};

struct inst_arg {
	struct vs_instance *in;
	struct start_gate *gate;
	atomic_uint *done;
};

static int canary_setup(struct vs_instance *in, struct vgmem_dev *dev,
			struct vgmem_chan *ch, uint64_t *va, uint64_t *scratch)
{
	int err;

	err = vgmem_bo_alloc(dev, in->canary, va);
	if (err)
		return err;
	err = vgmem_bo_alloc(dev, VGMEM_PAGE_SIZE, scratch);
	if (err)
		return err;
	return vgmem_fill_pattern(ch, *va, in->canary, (uint32_t)in->seed);
}

static void *inst_main(void *p)
{
	struct inst_arg *a = p;
	struct vs_instance *in = a->in;
	struct vgmem_dev *dev = vg_host_guest_dev(in->g);
	struct vgmem_chan *ch = NULL;
	struct vg_sim_cost c0, c1;
	uint64_t cva = 0, sva = 0, sum = 0;
	double t0;

	pthread_mutex_lock(&a->gate->lock);
	while (!a->gate->go)
		pthread_cond_wait(&a->gate->cond, &a->gate->lock);
	pthread_mutex_unlock(&a->gate->lock);

	t0 = vs_now();
	vg_host_guest_cost(in->g, &c0);
	/*
	 * A short ring, as a CUDA-style tenant that waits on its work keeps:
	 * a relocation drains the victim's ring, and a deep ring would let a
	 * victim finish its whole run inside another instance's allocation.
	 */
	in->err = vgmem_chan_create(dev, 4, 0, 0, &ch);
	if (in->err) {
		in->failed = "channel";
		atomic_fetch_add(a->done, 1);
		return NULL;
	}
	if (in->canary) {
		in->err = canary_setup(in, dev, ch, &cva, &sva);
		if (in->err) {
			in->failed = "canary setup";
			goto out;
		}
	}
	in->err = vgmem_workload_run(dev, ch, in->wl, in->ws, in->bo_size,
				     in->iters, in->seed);
	if (in->err) {
		in->failed = "workload";
		goto out;
	}
	if (in->canary) {
		in->err = vgmem_checksum(ch, cva, in->canary, sva, &sum);
		if (in->err) {
			in->failed = "canary checksum";
			goto out;
		}
		in->canary_ok = sum == vgmem_pattern_checksum(in->canary,
							      (uint32_t)in->seed);
		vgmem_bo_free(dev, sva);
		vgmem_bo_free(dev, cva);
	}
out:
	vg_host_guest_cost(in->g, &c1);
	in->cost.bytes_vram = c1.bytes_vram - c0.bytes_vram;
	in->cost.bytes_host = c1.bytes_host - c0.bytes_host;
	in->cost.bytes_guest = c1.bytes_guest - c0.bytes_guest;
	in->cost.device_ns = c1.device_ns - c0.device_ns;
	in->cost.entries = c1.entries - c0.entries;
	in->cost.launches = c1.launches - c0.launches;
	in->wall_s = vs_now() - t0;
	vgmem_chan_destroy(ch);
	atomic_fetch_add(a->done, 1);
	return NULL;
}

int vs_run_instances(struct vs_instance *in, unsigned int n)
{
	return vs_run_instances_sampled(in, n, NULL, NULL, 0);
}

int vs_run_instances_sampled(struct vs_instance *in, unsigned int n,
			     void (*tick)(void *arg), void *arg,
			     unsigned int period_ms)
{
	atomic_uint done = 0;
	struct start_gate gate = { PTHREAD_MUTEX_INITIALIZER,
				   PTHREAD_COND_INITIALIZER, false };
	struct inst_arg args[64];
	unsigned int i, started = 0;
	int err = 0;

	if (n > 64)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		args[i].in = &in[i];
		args[i].gate = &gate;
		args[i].done = &done;
		in[i].err = 0;
		in[i].failed = NULL;
		in[i].canary_ok = false;
		err = -pthread_create(&in[i].thread, NULL, inst_main, &args[i]);
		if (err)
			break;
		started++;
	}
	pthread_mutex_lock(&gate.lock);
	gate.go = true;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	while (tick && atomic_load(&done) < started) {
		struct timespec ts = { period_ms / 1000,
				       (long)(period_ms % 1000) * 1000000 };

		tick(arg);
		nanosleep(&ts, NULL);
	}
	if (tick)
		tick(arg);
	for (i = 0; i < started; i++)
		pthread_join(in[i].thread, NULL);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (in[i].err)
			return in[i].err;
	return 0;
}

int vs_parse_workloads(const char *s, unsigned int *mask)
{
	char buf[256], *tok, *save = NULL;
	unsigned int m = 0;
	int w;

	if (!s || !strcmp(s, "all")) {
		*mask = (1u << VGMEM_WL_NR) - 1;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (w = 0; w < VGMEM_WL_NR; w++)
			if (!strcmp(tok, vgmem_workload_name((enum vgmem_workload)w)))
				break;
		if (w == VGMEM_WL_NR)
			return -EINVAL;
		m |= 1u << w;
	}
	if (!m)
		return -EINVAL;
	*mask = m;
	return 0;
}
