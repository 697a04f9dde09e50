// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A migration stream from another host (core/mig_load.c, docs/migration.md)
 * loaded into an empty VM on a live userspace host, beside a peer VM whose
 * memory must never change.
 *
 * One host for the whole run: 4 MiB of VRAM in 64 KiB chunks (so streams
 * of a few kilobytes fill it and push chunks to host RAM), the peer with a
 * BO of its pattern, and the VM "target" each input is loaded into, fed in
 * pieces whose sizes the input's first byte picks.
 *
 * Invariants: vg_mig_load_write returns all of its piece or a negative
 * errno; vg_mig_load_finish returns 0 or a negative errno, and on an error
 * the target holds no byte and says why in a sentence; on success it holds
 * exactly the BOs' bytes the stream announced (version 1: its VM record;
 * version 2, a pre-copy's: its END record). Either way the
 * core's books check out (vg_gpu_check), the peer's BO reads back its
 * pattern, and once the target is gone (a new, empty one takes its place)
 * the GPU holds only the peer's bytes again.
 *
 * LLVMFuzzerInitialize can save real streams of a small VM, as seeds:
 * VGFUZZ_WRITE_SEED=PATH without channels, VGFUZZ_WRITE_SEED_CHAN=PATH with
 * the channel that wrote its memory (how the seed corpus began),
 * VGFUZZ_WRITE_SEED_PRE=PATH a pre-copy's (version 2: BO_FREE, a BO made
 * and a chunk sent again after the first pass). Streams
 * with channels are over 8 KiB: fuzz_migstream.options raises max_len.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host-module/user/host.h"
#include "host-module/core/vg.h"
#include "fuzz_util.h"

#define MiB		(1ull << 20)
#define PEER_BO		(64 << 10)
#define PEER_SEED	0x9e11

static struct {
	struct vg_host *h;
	struct vg_host_guest *peer, *target;
	struct vgmem_chan *pch;
	uint64_t pva, baseline;
	uint8_t *pattern, *readback;
} w;

static uint64_t gpu_bytes(void)
{
	struct vg_gpu_stats st;

	vg_gpu_get_stats(vg_host_gpu(w.h), &st);
	return st.vram_used + st.host_used;
}

static uint64_t target_bytes(void)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(vg_host_guest_vm(w.target), &st);
	return st.allocated;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * A small VM's stream, as a real source makes it (two BOs, one written;
 * with_chan: and the channel that wrote it, saved frozen), with each DATA
 * record cut to its first 256 bytes so that the seed stays small (the
 * reader takes partial data), after a first byte that makes the reader
 * take it in pieces of 38 bytes.
 */
/* Read a pre-copy until it has nothing for now. */
static size_t seed_drain(struct vg_mig_save *s, uint8_t *buf, size_t len)
{
	ssize_t n;

	while ((n = vg_mig_save_read(s, buf + len, (1 << 20) - len)) > 0)
		len += (size_t)n;
	if (n != -ENOMSG)
		fuzz_die("seed: pre-copy read %zd", n);
	return len;
}

enum seed_kind { SEED_PLAIN, SEED_CHAN, SEED_PRECOPY };

static void write_seed(const char *path, enum seed_kind kind)
{
	bool with_chan = kind == SEED_CHAN;
	uint64_t va1, va2;
	struct vg_host_guest *src;
	struct vgmem_chan *ch;
	struct vg_mig_save *s;
	uint8_t *buf = malloc(1 << 20), piece = 1;
	size_t len = 0, off;
	uint64_t va, plen;
	FILE *f = fopen(path, "wb");
	ssize_t n;

	if (!f || !buf)
		fuzz_die("seed: %s", path);
	if (vg_host_guest_create(w.h, "source", 0, 1 * MiB, &src) ||
	    vgmem_chan_create(vg_host_guest_dev(src), 16, 4096, 64 << 10, &ch) ||
	    vgmem_bo_alloc(vg_host_guest_dev(src), 128 << 10, &va1) ||
	    vgmem_fill_pattern(ch, va1, 8192, 7) ||
	    vgmem_bo_alloc(vg_host_guest_dev(src), 64 << 10, &va))
		fuzz_die("seed: the source VM");
	if (kind == SEED_PRECOPY) {
		/*
		 * A version 2 stream: a pass, then the guest rewrites part of
		 * a BO, frees one and makes another; a second pass; the stop.
		 */
		if (vg_mig_precopy_begin(vg_host_guest_vm(src), &s))
			fuzz_die("seed: pre-copy");
		len = seed_drain(s, buf, len);
		if (vgmem_fill_pattern(ch, va1, 4096, 9) ||
		    vgmem_bo_free(vg_host_guest_dev(src), va) ||
		    vgmem_bo_alloc(vg_host_guest_dev(src), 64 << 10, &va2) ||
		    vgmem_fill_pattern(ch, va2, 4096, 3))
			fuzz_die("seed: the guest's work in pre-copy");
		len = seed_drain(s, buf, len);
		vgmem_chan_destroy(ch);
		if (vg_mig_save_stop(s, NULL))
			fuzz_die("seed: stop");
	} else if (!with_chan) {
		vgmem_chan_destroy(ch);
	} else if (vg_vm_freeze(vg_host_guest_vm(src))) {
		fuzz_die("seed: freeze");
	}
	if (kind != SEED_PRECOPY && vg_mig_save_begin(vg_host_guest_vm(src), NULL, &s))
		fuzz_die("seed: save");
	while ((n = vg_mig_save_read(s, buf + len, (1 << 20) - len)) > 0)
		len += (size_t)n;
	if (n < 0)
		fuzz_die("seed: read %zd", n);
	vg_mig_save_end(s);
	if (with_chan) {
		vg_vm_thaw(vg_host_guest_vm(src));
		vgmem_chan_destroy(ch);
	}
	vg_host_guest_destroy(src);

	fwrite(&piece, 1, 1, f);
	fwrite(buf, 1, 32, f);
	for (off = 32; off + 16 <= len; off += 16 + plen) {
		uint64_t cut;
		uint8_t head[16];

		plen = get64(buf + off + 8);
		cut = buf[off] == 3 && plen > 16 + 256 ? 16 + 256 : plen;
		memcpy(head, buf + off, 16);
		for (int i = 0; i < 8; i++)
			head[8 + i] = (uint8_t)(cut >> (8 * i));
		fwrite(head, 1, 16, f);
		fwrite(buf + off + 16, 1, cut, f);
	}
	fclose(f);
	free(buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct vg_host_config cfg;
	const char *seed = getenv("VGFUZZ_WRITE_SEED");
	const char *seed_chan = getenv("VGFUZZ_WRITE_SEED_CHAN");
	const char *seed_pre = getenv("VGFUZZ_WRITE_SEED_PRE");
	uint32_t i;

	(void)argc;
	(void)argv;
	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 4 * MiB;
	cfg.sim.host_limit = 32 * MiB;
	cfg.gpu.name = "fuzz";
	cfg.gpu.chunk_size = 64 << 10;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	if (vg_host_create(&cfg, &w.h) ||
	    vg_host_guest_create(w.h, "peer", 0, 1 * MiB, &w.peer) ||
	    vgmem_chan_create(vg_host_guest_dev(w.peer), 16, 4096, PEER_BO, &w.pch) ||
	    vgmem_bo_alloc(vg_host_guest_dev(w.peer), PEER_BO, &w.pva) ||
	    vgmem_fill_pattern(w.pch, w.pva, PEER_BO, PEER_SEED) ||
	    vg_host_guest_create(w.h, "target", 0, 1 * MiB, &w.target))
		fuzz_die("setup: host, peer and target");
	if (seed)
		write_seed(seed, SEED_PLAIN);
	if (seed_chan)
		write_seed(seed_chan, SEED_CHAN);
	if (seed_pre)
		write_seed(seed_pre, SEED_PRECOPY);
	w.pattern = malloc(PEER_BO);
	w.readback = malloc(PEER_BO);
	if (!w.pattern || !w.readback)
		fuzz_die("setup: malloc");
	for (i = 0; i < PEER_BO / 4; i++) {
		uint32_t v = vgmem_pattern_word(PEER_SEED, i);

		memcpy(w.pattern + 4 * i, &v, 4);
	}
	w.baseline = gpu_bytes();
	return 0;
}

/*
 * The bytes a taken stream leaves in its VM: version 1, the VM record's
 * count; version 2 (a pre-copy's, whose BOs come and go), the count its
 * END record gives. -1 if the stream does not have it where a good one
 * does (then nothing is checked).
 */
static int announced(const uint8_t *d, size_t n, uint64_t *bytes)
{
	size_t off = 32;
	uint64_t len;

	if (n < 32 + 16 + 24 || d[32] != 1)
		return -1;
	if (d[8] == 1) {
		*bytes = get64(d + 32 + 16 + 8);
		return 0;
	}
	while (off + 16 <= n) {
		len = get64(d + off + 8);
		if (d[off] == 0xff && d[off + 1] == 0xff && len == 24 &&
		    off + 16 + 24 <= n) {
			*bytes = get64(d + off + 16 + 16);
			return 0;
		}
		if (len > n - off - 16)
			break;
		off += 16 + len;
	}
	return -1;
}

/* A target that took a stream goes, and an empty one takes its place. */
static void renew_target(void)
{
	vg_host_guest_destroy(w.target);
	if (vg_host_guest_create(w.h, "target", 0, 1 * MiB, &w.target))
		fuzz_die("a new target");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_vm *vm = vg_host_guest_vm(w.target);
	struct vg_mig_load *l;
	size_t off = 1, piece, n;
	uint64_t bytes;
	ssize_t r = 0;
	int ret;

	if (size < 1 || size > 65536)
		return -1;
	piece = (size_t)data[0] * 37 + 1;
	if (vg_mig_load_begin(vm, NULL, &l))
		fuzz_die("load_begin on an empty VM");
	while (off < size) {
		n = piece < size - off ? piece : size - off;
		r = vg_mig_load_write(l, data + off, n);
		if (r < 0) {
			if (r < -4095)
				fuzz_die("write returned %zd", r);
			break;
		}
		if ((size_t)r != n)
			fuzz_die("write took %zd of %zu bytes", r, n);
		off += n;
	}
	if (r < 0 && !vg_mig_load_error(l)[0])
		fuzz_die("refused (%zd) without saying why", r);
	ret = vg_mig_load_finish(l);
	if (ret > 0 || ret < -4095)
		fuzz_die("finish returned %d", ret);
	if (ret) {
		if (target_bytes())
			fuzz_die("a refused stream (%d) left %llu bytes", ret,
				 (unsigned long long)target_bytes());
	} else if (!announced(data + 1, size - 1, &bytes) &&
		   target_bytes() != bytes) {
		fuzz_die("the stream announced %llu bytes, the VM holds %llu",
			 (unsigned long long)bytes,
			 (unsigned long long)target_bytes());
	}
	ret = vg_gpu_check(vg_host_gpu(w.h));
	if (ret)
		fuzz_die("vg_gpu_check: %d", ret);
	if (vgmem_read(w.pch, w.pva, w.readback, PEER_BO) ||
	    memcmp(w.readback, w.pattern, PEER_BO))
		fuzz_die("the peer's BO does not read back");
	if (target_bytes())
		renew_target();
	if (gpu_bytes() != w.baseline)
		fuzz_die("the target is empty but the GPU holds %llu bytes, not %llu",
			 (unsigned long long)gpu_bytes(),
			 (unsigned long long)w.baseline);
	return 0;
}
