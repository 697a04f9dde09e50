// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GPUswap section 6.2, scaled down: two VMs with equal entitlements leak
 * memory (allocate and never free) well past the GPU's VRAM; the second
 * starts when the first already holds most of the VRAM. The reducer takes
 * from whoever is over its share, so their resident sizes converge: in the
 * end they differ by at most one chunk, and VRAM stays in use.
 */
#include <stdlib.h>
#include "itest.h"

#define VRAM		(64 * MiB)
#define CHUNK		(2 * MiB)
#define LEAK_BO		(2 * MiB)
#define LEAK_TOTAL	(96 * MiB)
#define NR_LEAK		(LEAK_TOTAL / LEAK_BO)
#define HEAD_START	(48 * MiB)

struct leaker {
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
	uint64_t va[NR_LEAK];
	uint32_t nr;
	uint32_t seed;
	struct it_fail *f;
	pthread_mutex_t *lock;
	pthread_cond_t *cond;
	volatile uint64_t *first_allocated;
	bool wait_for_head_start;
};

static int leak(struct leaker *l)
{
	struct vgmem_dev *dev = vg_host_guest_dev(l->g);

	if (l->wait_for_head_start) {
		pthread_mutex_lock(l->lock);
		while (*l->first_allocated < HEAD_START)
			pthread_cond_wait(l->cond, l->lock);
		pthread_mutex_unlock(l->lock);
	}
	for (l->nr = 0; l->nr < NR_LEAK; l->nr++) {
		IT_CHECK(l->f, vgmem_bo_alloc(dev, LEAK_BO, &l->va[l->nr]) == 0);
		IT_CHECK(l->f, vgmem_fill_pattern(l->ch, l->va[l->nr], LEAK_BO,
						  l->seed + l->nr) == 0);
		if (!l->wait_for_head_start) {
			pthread_mutex_lock(l->lock);
			*l->first_allocated += LEAK_BO;
			pthread_cond_broadcast(l->cond);
			pthread_mutex_unlock(l->lock);
		}
	}
	return 0;
}

static void *leak_thread(void *arg)
{
	struct leaker *l = arg;

	if (leak(l) && !l->wait_for_head_start) {
		/* Never leave the second leaker waiting for a head start. */
		pthread_mutex_lock(l->lock);
		*l->first_allocated = HEAD_START;
		pthread_cond_broadcast(l->cond);
		pthread_mutex_unlock(l->lock);
	}
	return NULL;
}

static void run_leakers(bool worker)
{
	struct vg_host *h = it_host(VRAM, CHUNK, worker, 10);
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	volatile uint64_t first_allocated = 0;
	struct vgmem_vm_stats st[2];
	struct leaker l[2];
	pthread_t th[2];
	struct it_fail f;
	uint64_t scratch, diff;
	uint32_t i, k;

	it_fail_init(&f);
	for (i = 0; i < 2; i++) {
		memset(&l[i], 0, sizeof(l[i]));
		l[i].g = it_guest(h, i ? "late" : "early");
		l[i].f = &f;
		l[i].lock = &lock;
		l[i].cond = &cond;
		l[i].first_allocated = &first_allocated;
		l[i].wait_for_head_start = i == 1;
		l[i].seed = 1000 * (i + 1);
		assert_int_equal(vgmem_chan_create(vg_host_guest_dev(l[i].g), 16,
						   0, 0, &l[i].ch), 0);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, leak_thread, &l[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	it_fail_assert(&f);

	/* Let any pending return pass settle; VRAM is full, so nothing moves. */
	assert_true(vg_gpu_return_once(vg_host_gpu(h)) >= 0);
	for (i = 0; i < 2; i++)
		vg_vm_get_stats(vg_host_guest_vm(l[i].g), &st[i]);
	print_message("%s worker: early %llu MiB resident, late %llu MiB\n",
		      worker ? "with" : "without",
		      (unsigned long long)(st[0].resident >> 20),
		      (unsigned long long)(st[1].resident >> 20));
	for (i = 0; i < 2; i++) {
		assert_true(st[i].allocated == LEAK_TOTAL);
		assert_true(st[i].resident + st[i].relocated == LEAK_TOTAL);
	}
	diff = st[0].resident > st[1].resident ? st[0].resident - st[1].resident :
						 st[1].resident - st[0].resident;
	assert_true(diff <= CHUNK);
	/* Fair, and not by leaving VRAM idle. */
	assert_true(st[0].resident + st[1].resident >= VRAM - 2 * CHUNK);

	/* Every leaked byte is still what it was, wherever it lives now. */
	for (i = 0; i < 2; i++) {
		assert_int_equal(vgmem_bo_alloc(vg_host_guest_dev(l[i].g), 4096,
						&scratch), 0);
		for (k = 0; k < NR_LEAK; k++)
			assert_int_equal(it_verify(l[i].ch, l[i].va[k], LEAK_BO,
						   l[i].seed + k, scratch), 0);
	}
	assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
	vg_host_destroy(h);
}

static void test_leakers_converge(void **state)
{
	(void)state;
	run_leakers(false);
}

static void test_leakers_converge_with_worker(void **state)
{
	(void)state;
	run_leakers(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leakers_converge),
		cmocka_unit_test(test_leakers_converge_with_worker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
