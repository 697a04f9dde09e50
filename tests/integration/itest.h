/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers shared by the integration tests (each test is its own program and
 * includes this once). Worker threads must not call cmocka's assertions, so
 * they record their first failure with IT_CHECK and the main thread asserts
 * on it after joining.
 */
#ifndef VGMEM_ITEST_H
#define VGMEM_ITEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>
#include "host-module/user/host.h"

#define MiB	(1ull << 20)

struct it_fail {
	pthread_mutex_t lock;
	int failed;
	char msg[256];
};

static inline void it_fail_init(struct it_fail *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
}

static inline void it_fail_set(struct it_fail *f, const char *file, int line,
			       const char *what)
{
	pthread_mutex_lock(&f->lock);
	if (!f->failed++)
		snprintf(f->msg, sizeof(f->msg), "%s:%d: %s", file, line, what);
	pthread_mutex_unlock(&f->lock);
}

/* In a worker: on failure record it and leave the function with -1. */
#define IT_CHECK(f, cond)						\
	do {								\
		if (!(cond)) {						\
			it_fail_set((f), __FILE__, __LINE__, #cond);	\
			return -1;					\
		}							\
	} while (0)

static inline void it_fail_assert(struct it_fail *f)
{
	if (f->failed)
		fail_msg("%d failure(s), first: %s", f->failed, f->msg);
}

static inline struct vg_host *it_host(uint64_t vram, uint64_t chunk, bool worker,
				      uint32_t return_ms)
{
	struct vg_host_config cfg;
	struct vg_host *h = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = "itest";
	cfg.gpu.chunk_size = chunk;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = !worker;
	cfg.gpu.return_interval_ms = return_ms;
	assert_int_equal(vg_host_create(&cfg, &h), 0);
	return h;
}

static inline struct vg_host_guest *it_guest(struct vg_host *h, const char *name)
{
	struct vg_host_guest *g = NULL;

	assert_int_equal(vg_host_guest_create(h, name, 0, 16 * MiB, &g), 0);
	return g;
}

/* Checksum on the GPU against the CPU's expectation for a pattern. */
static inline int it_verify(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
			    uint32_t seed, uint64_t scratch)
{
	uint64_t sum = 0;
	int ret;

	ret = vgmem_checksum(ch, va, bytes, scratch, &sum);
	if (ret)
		return ret;
	return sum == vgmem_pattern_checksum(bytes, seed) ? 0 : -EILSEQ;
}

static inline void it_gpu_stats(struct vg_host *h, struct vg_gpu_stats *st)
{
	vg_gpu_get_stats(vg_host_gpu(h), st);
}

#endif /* VGMEM_ITEST_H */
