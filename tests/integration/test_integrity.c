// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Relocation never loses or mixes a byte, even while the guest submits
 * (design decision 7). Three guests on a small GPU keep filling and
 * checksumming their BOs from their own threads while a fourth guest
 * allocates and frees in a loop and the return worker moves chunks back:
 * hundreds of chunk moves out and in, and every checksum, every staged
 * read and every completion must come out exactly as the CPU predicts.
 *
 * Knobs (environment; `make soak` sets them for a long run):
 *   VG_INTEGRITY_MOVES    chunk moves wanted each way (300)
 *   VG_INTEGRITY_CYCLES   relocation cycles wanted (suspend, copy, resume:
 *                         the GPU's `relocations`, out and back); 0: none
 *   VG_INTEGRITY_SECONDS  bound on the pressure loop (0: 2000 rounds); the
 *                         test fails if a target is not met within it
 *   VG_INTEGRITY_CHUNK    chunk size in bytes (2 MiB), a power of two
 * Both targets must be met; the tenants submit throughout.
 */
#include <stdlib.h>
#include <time.h>
#include "itest.h"

#define NR_GUESTS	3
#define NR_BOS		5
#define BO_SIZE		(4 * MiB)
#define WR_SIZE		(256 << 10)
#define WR_LEN		(100 << 10)	/* more than the 64 KiB staging area */
#define MOVES_WANTED	300
#define PRESSURE_ROUNDS_MAX 2000

struct gctx {
	struct vg_host_guest *g;
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint32_t idx;
	uint64_t va[NR_BOS];
	uint32_t seed[NR_BOS];
	uint64_t wr_va;
	uint64_t scratch;
	struct it_fail *f;
	int *stop;		/* set by the main thread, atomically */
	uint64_t rounds;
};

/* Fill, then release a semaphore with the entry's sequence number. */
static void queue_fill(struct vgmem_chan *ch, uint64_t va, uint64_t bytes, uint32_t seed,
		       uint64_t sem_va, uint32_t payload)
{
	uint32_t k[1 + VGMEM_CP_NARGS] = {
		VGMEM_K_FILL_PATTERN, (uint32_t)va, (uint32_t)(va >> 32), (uint32_t)bytes,
		(uint32_t)(bytes >> 32), seed, 0, 0, 0
	};
	uint32_t sem[4] = {
		(uint32_t)(sem_va >> 32) & 0xff, (uint32_t)sem_va, payload, VGMEM_SEM_OP_RELEASE
	};

	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, k, 1 + VGMEM_CP_NARGS);
	vgmem_pb_immd(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
	vgmem_pb_inc(ch, 0, VGMEM_MTHD_SEMAPHORE_A, sem, 4);
}

static int guest_round(struct gctx *c, uint64_t r, uint8_t *wbuf, uint8_t *rbuf)
{
	uint32_t i = (uint32_t)(r % NR_BOS), j, base, sem;
	uint64_t seq = 0, prev = vgmem_chan_submitted(c->ch), sem_va = c->scratch + 256;
	uint64_t off;

	/*
	 * Three entries refill the same BO with different seeds: only in-order
	 * execution leaves the last seed's pattern, and the semaphore holds the
	 * last entry's sequence.
	 */
	base = (c->idx << 24) ^ (uint32_t)(r * 3 + 1);
	for (j = 0; j < 3; j++) {
		queue_fill(c->ch, c->va[i], BO_SIZE, base + j, sem_va,
			   (uint32_t)(prev + j + 1));
		IT_CHECK(c->f, vgmem_submit(c->ch, &seq) == 0);
		IT_CHECK(c->f, seq == prev + j + 1);
	}
	IT_CHECK(c->f, vgmem_wait(c->ch, seq, 0) == 0);
	c->seed[i] = base + 2;
	IT_CHECK(c->f, vgmem_read(c->ch, sem_va, &sem, 4) == 0);
	IT_CHECK(c->f, sem == (uint32_t)seq);
	/* The read was one more entry; now every entry has completed. */
	IT_CHECK(c->f, vgmem_chan_userd_read(c->ch, VGMEM_USERD_ENTRIES_DONE) ==
		       (uint32_t)vgmem_chan_submitted(c->ch));

	for (j = 0; j < NR_BOS; j++)
		IT_CHECK(c->f, it_verify(c->ch, c->va[j], BO_SIZE, c->seed[j],
					 c->scratch) == 0);

	/* Staged writes and reads, in pieces, at an odd offset. */
	off = (r * 4099) % (WR_SIZE - WR_LEN);
	for (j = 0; j < WR_LEN; j++)
		wbuf[j] = (uint8_t)(vgmem_pattern_word((uint32_t)r, j) ^ c->idx);
	IT_CHECK(c->f, vgmem_write(c->ch, c->wr_va + off, wbuf, WR_LEN) == 0);
	memset(rbuf, 0, WR_LEN);
	IT_CHECK(c->f, vgmem_read(c->ch, c->wr_va + off, rbuf, WR_LEN) == 0);
	IT_CHECK(c->f, memcmp(wbuf, rbuf, WR_LEN) == 0);
	return 0;
}

static void *guest_thread(void *arg)
{
	struct gctx *c = arg;
	uint8_t *wbuf = malloc(WR_LEN), *rbuf = malloc(WR_LEN);
	uint32_t j;

	if (!wbuf || !rbuf) {
		it_fail_set(c->f, __FILE__, __LINE__, "malloc");
		goto out;
	}
	while (!__atomic_load_n(c->stop, __ATOMIC_ACQUIRE)) {
		if (guest_round(c, c->rounds, wbuf, rbuf))
			goto out;
		c->rounds++;
	}
	/* Once more after the last move. */
	for (j = 0; j < NR_BOS; j++) {
		if (it_verify(c->ch, c->va[j], BO_SIZE, c->seed[j], c->scratch)) {
			it_fail_set(c->f, __FILE__, __LINE__, "final verify");
			break;
		}
	}
out:
	free(wbuf);
	free(rbuf);
	return NULL;
}

static uint64_t knob(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return def;
	x = strtoull(v, &end, 0);
	if (*end)
		fail_msg("%s=%s is not a number", name, v);
	return x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_integrity_under_pressure(void **state)
{
	uint64_t moves_wanted = knob("VG_INTEGRITY_MOVES", MOVES_WANTED);
	uint64_t cycles_wanted = knob("VG_INTEGRITY_CYCLES", 0);
	uint64_t seconds = knob("VG_INTEGRITY_SECONDS", 0);
	uint64_t chunk = knob("VG_INTEGRITY_CHUNK", 2 * MiB);
	struct vg_host *h = it_host(64 * MiB, chunk, true, 5);
	double t0 = now_s(), t_last = t0;
	struct gctx c[NR_GUESTS];
	pthread_t th[NR_GUESTS];
	struct vg_host_guest *pg;
	struct vgmem_dev *pdev;
	struct vgmem_chan *pch;
	struct vg_gpu_stats st;
	struct vgmem_vm_stats vst;
	int stop = 0;
	struct it_fail f;
	uint64_t pva[2], pscratch, moved_out = 0, moved_in = 0, tenant_moves = 0;
	char name[16];
	uint64_t cycles = 0;
	uint32_t i, j, round;
	s64 back;

	(void)state;
	it_fail_init(&f);
	for (i = 0; i < NR_GUESTS; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		snprintf(name, sizeof(name), "tenant%u", i);
		c[i].g = it_guest(h, name);
		c[i].dev = vg_host_guest_dev(c[i].g);
		c[i].idx = i + 1;
		c[i].f = &f;
		c[i].stop = &stop;
		assert_int_equal(vgmem_chan_create(c[i].dev, 64, 0, 64 << 10, &c[i].ch), 0);
		assert_int_equal(vgmem_bo_alloc(c[i].dev, 4096, &c[i].scratch), 0);
		assert_int_equal(vgmem_bo_alloc(c[i].dev, WR_SIZE, &c[i].wr_va), 0);
		for (j = 0; j < NR_BOS; j++) {
			assert_int_equal(vgmem_bo_alloc(c[i].dev, BO_SIZE, &c[i].va[j]), 0);
			c[i].seed[j] = (i << 8) | j;
			assert_int_equal(vgmem_fill_pattern(c[i].ch, c[i].va[j], BO_SIZE,
							    c[i].seed[j]), 0);
		}
	}
	pg = it_guest(h, "pressure");
	pdev = vg_host_guest_dev(pg);
	assert_int_equal(vgmem_chan_create(pdev, 16, 0, 0, &pch), 0);
	assert_int_equal(vgmem_bo_alloc(pdev, 4096, &pscratch), 0);

	for (i = 0; i < NR_GUESTS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, guest_thread, &c[i]), 0);

	/*
	 * 61 MiB of tenants on 64 MiB of VRAM: every 24 MiB the pressure guest
	 * allocates pushes tenant chunks out, every free lets the worker (and
	 * our own return passes) bring them back.
	 */
	for (round = 0; !f.failed; round++) {
		if (seconds ? now_s() - t0 >= (double)seconds :
			      round >= PRESSURE_ROUNDS_MAX)
			break;
		for (j = 0; j < 2; j++) {
			assert_int_equal(vgmem_bo_alloc(pdev, 12 * MiB, &pva[j]), 0);
			assert_int_equal(vgmem_fill_pattern(pch, pva[j], 12 * MiB,
							    round + j), 0);
		}
		assert_int_equal(it_verify(pch, pva[0], 12 * MiB, round, pscratch), 0);
		for (j = 0; j < 2; j++)
			assert_int_equal(vgmem_bo_free(pdev, pva[j]), 0);
		back = vg_gpu_return_once(vg_host_gpu(h));
		assert_true(back >= 0);
		it_gpu_stats(h, &st);
		moved_out = st.reloc_out_chunks;
		moved_in = st.reloc_in_chunks;
		cycles = st.relocations;
		if (moved_out >= moves_wanted && moved_in >= moves_wanted &&
		    cycles >= cycles_wanted)
			break;
		if (seconds && now_s() - t_last >= 60) {
			t_last = now_s();
			print_message("%.0f s: %u rounds, %llu relocation cycles, %llu chunks out, %llu in\n",
				      t_last - t0, round, (unsigned long long)cycles,
				      (unsigned long long)moved_out,
				      (unsigned long long)moved_in);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NR_GUESTS; i++)
		pthread_join(th[i], NULL);
	it_fail_assert(&f);
	print_message("%u pressure rounds in %.1f s (chunk %llu KiB): %llu relocation cycles "
		      "(%.0f/s), %llu chunks out, %llu in\n", round, now_s() - t0,
		      (unsigned long long)(chunk >> 10), (unsigned long long)cycles,
		      cycles / (now_s() - t0), (unsigned long long)moved_out,
		      (unsigned long long)moved_in);
	assert_true(moved_out >= moves_wanted);
	assert_true(moved_in >= moves_wanted);
	assert_true(cycles >= cycles_wanted);
	for (i = 0; i < NR_GUESTS; i++) {
		assert_true(c[i].rounds >= 2);
		assert_int_equal(vgmem_chan_error(c[i].ch, NULL), 0);
		vg_vm_get_stats(vg_host_guest_vm(c[i].g), &vst);
		assert_int_equal(vst.faults, 0);
		print_message("tenant%u: %llu rounds, %llu chunks out, %llu in\n", i,
			      (unsigned long long)c[i].rounds,
			      (unsigned long long)vst.reloc_out_chunks,
			      (unsigned long long)vst.reloc_in_chunks);
		tenant_moves += vst.reloc_out_chunks + vst.reloc_in_chunks;
	}
	/* The tenants' own chunks moved while they ran, not just the pressure's. */
	assert_true(tenant_moves >= moves_wanted);
	assert_int_equal(vg_gpu_check(vg_host_gpu(h)), 0);
	assert_int_equal(os_warn_count(), 0);
	vg_host_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integrity_under_pressure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
