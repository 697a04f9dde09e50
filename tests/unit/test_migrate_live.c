// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A tenant's work moved between two userspace hosts while it runs
 * (core/migrate.c with the GPU driver's channel state): the tenant
 * launches a long checksum through libvgmem, the source VM is frozen
 * mid-launch and saved, the destination loads it; then what a VMM does,
 * by hand: guest RAM copied over (and the tenant's process, which points
 * into it, left as it is), the guest's device now the destination's.
 * Thawed there, the tenant's wait returns, the checksum is the one an
 * unmoved launch computes, and the tenant goes on working on the new host.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "test_sim_util.h"
#include "host-module/user/host.h"
#include "host-module/user/host_priv.h"
#include "host-module/core/vg_internal.h"
#include "host-module/sim/sim_internal.h"
#include "guest-driver/lib/vgmem_priv.h"

#define MiB		(1ull << 20)
#define RAM		(4 * MiB)
#define BIG		(16 * MiB)
#define SEED		0x11feu

struct side {
	struct vg_host *h;
	struct vg_host_guest *g;
};

static void side_init(struct side *s, u64 vram)
{
	struct vg_host_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = "live";
	cfg.gpu.chunk_size = 2 * MiB;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	assert_int_equal(vg_host_create(&cfg, &s->h), 0);
	assert_int_equal(vg_host_guest_create(s->h, "tenant", 0, RAM, &s->g),
			 0);
}

/* The GPU driver's view of the tenant's channel on g's host. */
static struct vg_bchan *bchan_of(struct vg_host_guest *g, u32 id)
{
	struct vg_chan *c = vg_chan_lookup(g->vm, id);

	assert_non_null(c);
	return c->bchan;
}

static bool mid_launch(struct vg_bchan *b)
{
	return READ_ONCE(b->job.kind) == SIM_JOB_CP && READ_ONCE(b->job.off) > 0;
}

/* A checksum launch, submitted and not waited for. */
static uint64_t launch_checksum(struct vgmem_chan *ch, u64 va, u64 bytes, u64 res)
{
	u32 dw[16], n = 0, i;
	uint64_t seq;

	dw[n++] = VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, VGMEM_CP_KERNEL, 1);
	dw[n++] = VGMEM_K_CHECKSUM;
	dw[n++] = VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, VGMEM_CP_ARG(0), 6);
	dw[n++] = (u32)va;
	dw[n++] = (u32)(va >> 32);
	dw[n++] = (u32)bytes;
	dw[n++] = (u32)(bytes >> 32);
	dw[n++] = (u32)res;
	dw[n++] = (u32)(res >> 32);
	dw[n++] = VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, VGMEM_CP_LAUNCH, 1);
	dw[n++] = 0;
	(void)i;
	vgmem_pb_raw(ch, dw, n);
	assert_int_equal(vgmem_submit(ch, &seq), 0);
	return seq;
}

static void test_tenant_work_moves(void **state)
{
	struct side src, dst;
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	struct vg_mig_save *sv;
	struct vg_mig_load *ld;
	uint64_t va, res;
	uint64_t seq = 0, want, got;
	u8 *buf, *tmp;
	size_t len = 0, cap = 64 * MiB;
	ssize_t n;
	int tries;

	(void)state;
	buf = malloc(cap);
	assert_non_null(buf);
	side_init(&src, 32 * MiB);
	side_init(&dst, 16 * MiB);	/* less VRAM: part lands in host RAM */
	dev = vg_host_guest_dev(src.g);
	assert_int_equal(vgmem_chan_create(dev, 16, 4096, 64 << 10, &ch), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BIG, &va), 0);
	assert_int_equal(vgmem_bo_alloc(dev, 4096, &res), 0);
	assert_int_equal(vgmem_fill_pattern(ch, va, BIG, SEED), 0);
	want = vgmem_pattern_checksum(BIG, SEED);

	/* Frozen mid-launch (a starved test may see it done: again). */
	for (tries = 0; tries < 20; tries++) {
		struct vg_bchan *b = bchan_of(src.g, vgmem_chan_id(ch));

		seq = launch_checksum(ch, va, BIG, res);
		T_WAIT(mid_launch(b) || vgmem_chan_poll(ch) ||
		       vgmem_chan_submitted(ch) == ch->done);
		assert_int_equal(vg_vm_freeze(src.g->vm), 0);
		if (mid_launch(b))
			break;
		vg_vm_thaw(src.g->vm);
		assert_int_equal(vgmem_wait(ch, seq, T_TIMEOUT), 0);
	}
	assert_true(tries < 20);

	/* The stop-and-copy. */
	assert_int_equal(vg_mig_save_begin(src.g->vm, NULL, &sv), 0);
	while ((n = vg_mig_save_read(sv, buf + len, cap - len)) > 0)
		len += (size_t)n;
	assert_int_equal(n, 0);
	vg_mig_save_end(sv);
	assert_int_equal(vg_mig_load_begin(dst.g->vm, NULL, &ld), 0);
	assert_int_equal(vg_mig_load_write(ld, buf, len), (ssize_t)len);
	assert_int_equal(vg_mig_load_finish(ld), 0);
	assert_non_null(vg_chan_lookup(dst.g->vm, vgmem_chan_id(ch)));
	assert_int_equal(vg_host_guest_adopt_chans(dst.g), 0);

	/*
	 * The VMM's part: guest RAM moves, and the guest (the tenant's
	 * process with pointers into its RAM) runs on over the new device.
	 */
	memcpy(dst.g->ram, src.g->ram, RAM);
	tmp = src.g->ram;
	src.g->ram = dst.g->ram;
	dst.g->ram = tmp;
	dev->t = dst.g;
	vg_vm_thaw(dst.g->vm);

	{
		uint64_t addr = 0;
		int r = vgmem_wait(ch, seq, T_TIMEOUT);
		uint32_t e = vgmem_chan_error(ch, &addr);

		if (r || e)
			fail_msg("wait %d, channel error %u at %#llx (info %#x)", r, e,
				 (unsigned long long)addr,
				 vgmem_chan_userd_read(ch, VGMEM_USERD_ERROR_INFO));
	}
	assert_int_equal(vgmem_read(ch, res, &got, sizeof(got)), 0);
	assert_true(got == want);
	/* And goes on working there: its BO is whole on the new host. */
	assert_int_equal(vgmem_checksum(ch, va, BIG, res, &got), 0);
	assert_true(got == want);
	assert_int_equal(vg_gpu_check(vg_host_gpu(dst.h)), 0);

	/* Back to how each host made them, for the teardown. */
	vgmem_chan_destroy(ch);
	dev->t = src.g;
	tmp = src.g->ram;
	src.g->ram = dst.g->ram;
	dst.g->ram = tmp;
	vg_vm_thaw(src.g->vm);
	vg_host_destroy(dst.h);
	vg_host_destroy(src.h);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tenant_work_moves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
