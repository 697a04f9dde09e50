// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The GPFIFO and pushbuffer decoder (host-module/sim/pushbuf.c and the
 * classes behind it) fed by a hostile guest on the userspace host, with a
 * second VM on the same GPU whose memory must never change.
 *
 * One host for the whole run: VM "evil" runs every input on a fresh
 * channel, VM "good" holds a BO filled with a pattern at the same GPU VA
 * as evil's first BO (VAs are per address space) and a small guest RAM.
 * An input is:
 *   byte 0   bits 0-1: segments - 1; bit 2: one raw GPFIFO entry follows
 *            (8 bytes, published after the segments); bit 3: a raw GP_PUT
 *            follows (4 bytes, written last);
 *   the rest pushbuffer dwords (little endian), cut into the segments,
 *            each one GPFIFO entry.
 * Evil's channel binds compute to subchannel 1 and copy to 4 at creation,
 * as libvgmem does. Then it is given up to EVIL_WAIT_NS to go idle (its
 * ring drained, parked on an acquire, or in error) and destroyed, whatever
 * state it is in.
 *
 * Invariants after every input: good's BO holds exactly its pattern (read
 * back with the CPU's view of the pattern, through good's own channel), no
 * byte of good's guest RAM changed, good's channel has no error and no
 * fault was counted against good, and the core's accounting checks out
 * (vg_gpu_check). Evil may fault, its channel error is sticky and
 * readable; what it does to its own memory is its business.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "host-module/user/host.h"
#include "host-module/user/host_priv.h"
#include "host-module/core/vg_internal.h"
#include "fuzz_util.h"

#define MiB		(1ull << 20)
#define GOOD_RAM	(1 * MiB)
#define EVIL_RAM	(2 * MiB)
#define GOOD_BO		(256 << 10)
#define EVIL_BO		(1 * MiB)
#define EVIL_WAIT_NS	(20ull * 1000 * 1000)
#define GOOD_SEED	0x600d5eed

static struct {
	struct vg_host *h;
	struct vg_host_guest *evil, *good;
	struct vgmem_dev *edev, *gdev;
	struct vgmem_chan *gch;
	uint64_t gva, gscratch, eva, eva2;
	uint8_t *good_ram;	/* good's guest RAM after setup */
	uint8_t *good_bo;	/* the pattern, as the CPU computes it */
	uint8_t *readback;
} w;

static void must(int ret, const char *what)
{
	if (ret)
		fuzz_die("setup: %s: %d", what, ret);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct vg_host_config cfg;
	uint32_t i;

	(void)argc;
	(void)argv;
	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 64 * MiB;
	cfg.gpu.name = "fuzz";
	cfg.gpu.chunk_size = 2 * MiB;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	must(vg_host_create(&cfg, &w.h), "host");
	must(vg_host_guest_create(w.h, "good", 0, GOOD_RAM, &w.good), "good");
	must(vg_host_guest_create(w.h, "evil", 0, EVIL_RAM, &w.evil), "evil");
	w.gdev = vg_host_guest_dev(w.good);
	w.edev = vg_host_guest_dev(w.evil);
	/* Good: one small channel, staging big enough to read its BO back. */
	must(vgmem_chan_create(w.gdev, 16, 4096, GOOD_BO, &w.gch), "good chan");
	must(vgmem_bo_alloc(w.gdev, GOOD_BO, &w.gva), "good bo");
	must(vgmem_bo_alloc(w.gdev, 4096, &w.gscratch), "good scratch");
	must(vgmem_bo_alloc(w.edev, EVIL_BO, &w.eva), "evil bo");
	must(vgmem_bo_alloc(w.edev, 64 << 10, &w.eva2), "evil bo 2");
	if (w.eva != w.gva)
		fuzz_die("setup: evil's first BO at %#llx, good's at %#llx",
			 (unsigned long long)w.eva, (unsigned long long)w.gva);
	must(vgmem_fill_pattern(w.gch, w.gva, GOOD_BO, GOOD_SEED), "fill");
	w.good_bo = malloc(GOOD_BO);
	w.readback = malloc(GOOD_BO);
	w.good_ram = malloc(GOOD_RAM);
	if (!w.good_bo || !w.readback || !w.good_ram)
		fuzz_die("setup: malloc");
	for (i = 0; i < GOOD_BO / 4; i++) {
		uint32_t v = vgmem_pattern_word(GOOD_SEED, i);

		memcpy(w.good_bo + 4 * i, &v, 4);
	}
	must(vgmem_read(w.gch, w.gva, w.readback, GOOD_BO), "read back");
	if (memcmp(w.readback, w.good_bo, GOOD_BO))
		fuzz_die("setup: good's pattern does not read back");
	memcpy(w.good_ram, w.good->ram, GOOD_RAM);
	return 0;
}

static void check_good(void)
{
	struct vgmem_vm_stats st;
	uint64_t addr = 0;
	uint32_t err;
	int ret;

	if (memcmp(w.good->ram, w.good_ram, GOOD_RAM))
		fuzz_die("good's guest RAM changed");
	err = vgmem_chan_error(w.gch, &addr);
	if (err)
		fuzz_die("good's channel has error %u at %#llx", err,
			 (unsigned long long)addr);
	ret = vgmem_read(w.gch, w.gva, w.readback, GOOD_BO);
	if (ret)
		fuzz_die("reading good's BO: %d", ret);
	if (memcmp(w.readback, w.good_bo, GOOD_BO))
		fuzz_die("good's BO changed");
	/* The read went through good's RAM: take the new picture. */
	memcpy(w.good_ram, w.good->ram, GOOD_RAM);
	vg_vm_get_stats(vg_host_guest_vm(w.good), &st);
	if (st.faults)
		fuzz_die("%llu fault(s) counted against good",
			 (unsigned long long)st.faults);
	ret = vg_gpu_check(vg_host_gpu(w.h));
	if (ret)
		fuzz_die("vg_gpu_check: %d", ret);
}

/*
 * Give evil's channel up to EVIL_WAIT_NS to run what it was given. Waiting
 * through libvgmem (vgmem_wait) would also wait out a channel parked on an
 * acquire that nothing will ever release, and 3% of the inputs doing that
 * took well over half of the run's time; the GPU driver's channel_idle_wait
 * returns as soon as the ring is drained, the channel parks on an acquire
 * or it errors. Either way the channel is destroyed next, in whatever state.
 */
static void evil_settle(struct vgmem_chan *ch)
{
	struct vg_gpu *gpu = vg_host_gpu(w.h);
	struct vg_chan *c;

	c = vg_chan_lookup(vg_host_guest_vm(w.evil), vgmem_chan_id(ch));
	if (!c)
		fuzz_die("evil's channel %u is not in its VM", vgmem_chan_id(ch));
	(void)gpu->ops->channel_idle_wait(gpu->drv, c->bchan, EVIL_WAIT_NS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vgmem_chan *ch = NULL;
	uint64_t seq = 0, entry = 0;
	uint32_t put = 0, *dw;
	unsigned int segs, flags, s, ndw, from, to;
	size_t off = 1;

	if (size < 1 || size > 65536)
		return -1;
	flags = data[0];
	segs = (flags & 3) + 1;
	if (flags & 4) {
		if (size < off + 8)
			return -1;
		memcpy(&entry, data + off, 8);
		off += 8;
	}
	if (flags & 8) {
		if (size < off + 4)
			return -1;
		memcpy(&put, data + off, 4);
		off += 4;
	}
	ndw = (unsigned int)((size - off) / 4);
	dw = malloc(ndw * 4 + 4);
	if (!dw)
		fuzz_die("malloc");
	memcpy(dw, data + off, ndw * 4);

	if (vgmem_chan_create(w.edev, 16, 64 << 10, 4096, &ch))
		fuzz_die("evil's channel");
	for (s = 0; s < segs; s++) {
		from = ndw * s / segs;
		to = ndw * (s + 1) / segs;
		if (to == from)
			continue;
		vgmem_pb_raw(ch, dw + from, to - from);
		/* A faulted channel refuses: the rest is moot. */
		if (vgmem_submit(ch, &seq))
			break;
	}
	if (flags & 4)
		(void)vgmem_submit_entry(ch, entry, &seq);
	if (flags & 8)
		vgmem_chan_userd_write(ch, VGMEM_USERD_GP_PUT, put);
	if (seq)
		evil_settle(ch);
	vgmem_chan_destroy(ch);
	free(dw);
	check_good();
	return 0;
}
