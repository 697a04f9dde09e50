// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A VM's GPU memory migrated between two userspace hosts (core/migrate.c):
 * the source with chunks in VRAM and in host RAM, the destination with
 * less VRAM, so that restored chunks land in host RAM. Every byte is read
 * back through a channel on the destination. Then the stream is attacked:
 * cut short anywhere, fields broken one by one, bytes flipped at random;
 * each is refused with nothing left behind, or (a flipped data byte) taken
 * with the accounting whole.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "host-module/user/host.h"
#include "host-module/core/vg.h"
#include "host-module/core/vg_va.h"

#define MiB		(1ull << 20)
#define CHUNK		(256ull << 10)
#define SEED_A		0x5eed0001u
#define SEED_B		0x5eed0002u
#define BO_A		(3 * MiB)	/* written, some of it relocated */
#define BO_B		(2 * MiB)	/* written */
#define BO_Z		(1 * MiB)	/* never written: no data in the stream */

struct side {
	struct vg_host *h;
	struct vg_host_guest *g, *hog;
};

struct world {
	struct side src, dst;
	uint64_t va_a, va_b, va_z;
	u8 *stream;
	size_t len;
	u64 max;		/* vg_mig_save_max() just before the save */
};

static void side_init(struct side *s, u64 vram, u64 quota)
{
	struct vg_host_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = "mig";
	cfg.gpu.chunk_size = CHUNK;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	assert_int_equal(vg_host_create(&cfg, &s->h), 0);
	assert_int_equal(vg_host_guest_create(s->h, "tenant", quota, 4 * MiB,
					      &s->g), 0);
}

static u64 vm_stat(struct vg_host_guest *g, int which)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(vg_host_guest_vm(g), &st);
	return which == 0 ? st.allocated : which == 1 ? st.relocated :
	       st.resident;
}

/* The whole stream of a VM, read in pieces of odd sizes. */
static u8 *save_vm(struct vg_vm *vm, const struct vg_mig_dev *dev,
		   size_t *lenp)
{
	struct vg_mig_save *s;
	size_t cap = 16 * MiB, piece = 1, len = 0;
	u8 *buf = malloc(cap);
	ssize_t n;

	assert_non_null(buf);
	assert_int_equal(vg_mig_save_begin(vm, dev, &s), 0);
	for (;;) {
		piece = piece * 7 % 70001 + 1;
		if (piece > cap - len)
			piece = cap - len;
		n = vg_mig_save_read(s, buf + len, piece);
		assert_true(n >= 0);
		len += (size_t)n;
		if ((size_t)n < piece)
			break;
	}
	assert_int_equal(vg_mig_save_read(s, buf, 16), 0);
	vg_mig_save_end(s);
	*lenp = len;
	return buf;
}

static void save_all(struct world *w)
{
	w->stream = save_vm(vg_host_guest_vm(w->src.g), NULL, &w->len);
}

static void check_pattern(struct vgmem_chan *ch, u64 va, u64 bytes, u32 seed);

static int world_setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;

	assert_non_null(w);
	/* The source: 4 MiB of VRAM, a hog holding 2 of it. */
	side_init(&w->src, 4 * MiB, 0);
	assert_int_equal(vg_host_guest_create(w->src.h, "hog", 0, 1 * MiB,
					      &w->src.hog), 0);
	dev = vg_host_guest_dev(w->src.g);
	assert_int_equal(vgmem_chan_create(dev, 16, 4096, 1 * MiB, &ch), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BO_A, &w->va_a), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BO_B, &w->va_b), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BO_Z, &w->va_z), 0);
	assert_int_equal(vgmem_fill_pattern(ch, w->va_a, BO_A, SEED_A), 0);
	assert_int_equal(vgmem_fill_pattern(ch, w->va_b, BO_B, SEED_B), 0);
	/* Part of the tenant is in host RAM: the stream must carry it too. */
	assert_true(vm_stat(w->src.g, 1) > 0);
	/* Saved frozen, as a stop-and-copy does it, then running again. */
	assert_int_equal(vg_vm_freeze(vg_host_guest_vm(w->src.g)), 0);
	w->max = vg_mig_save_max(vg_host_guest_vm(w->src.g), 0);
	save_all(w);
	vg_vm_thaw(vg_host_guest_vm(w->src.g));
	/* The source is unchanged by being read, and works on. */
	assert_int_equal(vg_gpu_check(vg_host_gpu(w->src.h)), 0);
	check_pattern(ch, w->va_b, BO_B, SEED_B);
	vgmem_chan_destroy(ch);
	*state = w;
	return 0;
}

static int world_teardown(void **state)
{
	struct world *w = *state;

	vg_host_destroy(w->src.h);
	free(w->stream);
	free(w);
	return 0;
}

/* Load buf into dst's (empty) VM, the platform's state by dev: finish's result. */
static int load_dev(struct side *d, const struct vg_mig_dev *dev, const u8 *buf,
		    size_t len, size_t piece, char *why, size_t whylen)
{
	struct vg_mig_load *l;
	size_t off = 0, n;
	ssize_t r;
	int err;

	err = vg_mig_load_begin(vg_host_guest_vm(d->g), dev, &l);
	if (err)
		return err;
	while (off < len) {
		n = piece < len - off ? piece : len - off;
		r = vg_mig_load_write(l, buf + off, n);
		if (r < 0)
			break;
		assert_int_equal(r, n);
		off += n;
	}
	if (why)
		snprintf(why, whylen, "%s", vg_mig_load_error(l));
	err = vg_mig_load_finish(l);
	/* Loaded, the VM waits frozen for the go (its channels stopped). */
	if (!err)
		vg_vm_thaw(vg_host_guest_vm(d->g));
	return err;
}

static int load(struct side *d, const u8 *buf, size_t len, size_t piece,
		char *why, size_t whylen)
{
	return load_dev(d, NULL, buf, len, piece, why, whylen);
}

static void check_pattern(struct vgmem_chan *ch, u64 va, u64 bytes, u32 seed)
{
	u8 *buf = malloc(bytes);
	u64 i;

	assert_non_null(buf);
	assert_int_equal(vgmem_read(ch, va, buf, bytes), 0);
	for (i = 0; i < bytes / 4; i++) {
		u32 v;

		memcpy(&v, buf + 4 * i, 4);
		if (v != vgmem_pattern_word(seed, (u32)i))
			fail_msg("word %llu of the BO at %#llx: %#x, not %#x",
				 (unsigned long long)i, (unsigned long long)va,
				 v, vgmem_pattern_word(seed, (u32)i));
	}
	free(buf);
}

/* Nothing of a refused stream stays on the destination. */
static void assert_empty(struct side *d)
{
	assert_int_equal(vm_stat(d->g, 0), 0);
	assert_int_equal(vg_gpu_check(vg_host_gpu(d->h)), 0);
}

static void test_round_trip(void **state)
{
	struct world *w = *state;
	struct side *d = &w->dst;
	struct vgmem_chan *ch;
	u8 zero[4096], buf[4096];
	char why[128];

	/* Only 2 MiB of VRAM, half of it someone else's. */
	side_init(d, 2 * MiB, 0);
	assert_int_equal(vg_host_guest_create(d->h, "hog", 0, 1 * MiB,
					      &d->hog), 0);
	{
		uint64_t va;

		assert_int_equal(vgmem_bo_alloc(vg_host_guest_dev(d->hog),
						1 * MiB, &va), 0);
	}
	assert_int_equal(load(d, w->stream, w->len, 4093, why, sizeof(why)), 0);
	/* The source's BOs, the channel's staging one included. */
	assert_int_equal(vm_stat(d->g, 0), vm_stat(w->src.g, 0));
	assert_true(vm_stat(d->g, 1) > 0);	/* VRAM was short: host RAM */
	assert_int_equal(vg_gpu_check(vg_host_gpu(d->h)), 0);

	assert_int_equal(vgmem_chan_create(vg_host_guest_dev(d->g), 16, 4096,
					   1 * MiB, &ch), 0);
	check_pattern(ch, w->va_a, BO_A, SEED_A);
	check_pattern(ch, w->va_b, BO_B, SEED_B);
	memset(zero, 0, sizeof(zero));
	assert_int_equal(vgmem_read(ch, w->va_z + BO_Z - 4096, buf, 4096), 0);
	assert_memory_equal(buf, zero, 4096);
	vgmem_chan_destroy(ch);
	vg_host_destroy(d->h);
}

/*
 * Chunks of zeroes are left out: the stream is smaller than the BOs less
 * the one never written, plus the channel's record (two USERD pages and
 * the GPU driver's state) and the records' heads.
 */
static void test_zero_chunks_left_out(void **state)
{
	struct world *w = *state;

	assert_true(w->len < vm_stat(w->src.g, 0) - BO_Z + 2 * 4096 +
			     VG_CHAN_STATE_MAX + 4096);
}

static u64 get64(const u8 *p);

/*
 * What vg_mig_save_max() should have said of a stream b: its length, plus
 * the DATA records of the chunks it left out (their head, va and offset,
 * and the chunk's bytes) and what each channel's state fell short of
 * VG_CHAN_STATE_MAX.
 */
static u64 stream_max(const u8 *b, size_t len)
{
	u64 bo_va[64], bo_size[64], data[256][2];
	u64 max = len, plen, i, j, off, chunk, have;
	unsigned int nbo = 0, ndata = 0;
	u32 type;

	for (off = 32; off + 16 <= len; off += 16 + plen) {
		type = (u32)(get64(b + off) & 0xffffffffu);
		plen = get64(b + off + 8);
		if (type == 2) {		/* BO: va, size */
			assert_true(nbo < 64);
			bo_va[nbo] = get64(b + off + 16);
			bo_size[nbo++] = get64(b + off + 24);
		} else if (type == 3) {		/* DATA: va, offset */
			assert_true(ndata < 256);
			data[ndata][0] = get64(b + off + 16);
			data[ndata++][1] = get64(b + off + 24);
		} else if (type == 4) {		/* CHAN: state length at 32 */
			max += VG_CHAN_STATE_MAX -
			       (get64(b + off + 16 + 32) & 0xffffffffu);
		}
	}
	assert_int_equal(off, len);
	for (i = 0; i < nbo; i++) {
		for (off = 0; off < bo_size[i]; off += CHUNK) {
			chunk = bo_size[i] - off < CHUNK ? bo_size[i] - off : CHUNK;
			for (j = 0, have = 0; j < ndata && !have; j++)
				have = data[j][0] == bo_va[i] && data[j][1] == off;
			if (!have)
				max += 16 + 16 + chunk;
		}
	}
	return max;
}

/*
 * The size a VMM is told before the stop-and-copy: the stream's bound,
 * exactly the stream plus what it left out (a never-written BO, a
 * channel's state shorter than the most), with a device state too.
 */
static void test_save_max(void **state)
{
	struct world *w = *state;
	struct vg_vm *src = vg_host_guest_vm(w->src.g);
	struct vg_mig_dev sdev = { .len = 320 };
	u8 blob[320];
	size_t len;
	u8 *b;

	assert_int_equal(w->max, stream_max(w->stream, w->len));
	assert_true(w->max >= w->len + 4 * (16 + 16) + BO_Z);

	memset(blob, 0x5a, sizeof(blob));
	sdev.state = blob;
	b = save_vm(src, &sdev, &len);
	assert_int_equal(vg_mig_save_max(src, sizeof(blob)), stream_max(b, len));
	assert_int_equal(vg_mig_save_max(src, sizeof(blob)),
			 vg_mig_save_max(src, 0) + 16 + sizeof(blob));
	free(b);
}

/* Cut short anywhere: refused, and the destination is empty again. */
static void test_truncated(void **state)
{
	struct world *w = *state;
	struct side *d = &w->dst;
	size_t cut;
	int n = 0;

	side_init(d, 8 * MiB, 0);
	for (cut = 0; cut < w->len; cut += cut < 256 ? 1 : w->len / 97 + 1) {
		assert_int_equal(load(d, w->stream, cut, 1000, NULL, 0),
				 -EBADMSG);
		assert_empty(d);
		n++;
	}
	assert_true(n > 300);
	vg_host_destroy(d->h);
}

static u8 *copy_of(struct world *w)
{
	u8 *b = malloc(w->len + 64);

	assert_non_null(b);
	memcpy(b, w->stream, w->len);
	return b;
}

static void put64(u8 *p, u64 v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (u8)(v >> (8 * i));
}

static u64 get64(const u8 *p)
{
	u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Offset of the k-th record of type t (0-based), from the header on. */
static size_t rec_at(const u8 *b, size_t len, u32 t, int k)
{
	size_t off = 32;

	while (off + 16 <= len) {
		u32 type = (u32)(get64(b + off) & 0xffffffffu);
		u64 plen = get64(b + off + 8);

		if (type == t && !k--)
			return off;
		off += 16 + plen;
	}
	fail_msg("no record %u number %d", t, k);
	return 0;
}

static void expect_refused(struct world *w, const u8 *b, size_t len, int err,
			   const char *says)
{
	char why[128];

	assert_int_equal(load(&w->dst, b, len, 777, why, sizeof(why)), err);
	if (!strstr(why, says))
		fail_msg("refusal says '%s', not '%s'", why, says);
	assert_empty(&w->dst);
}

/* Each field broken on its own: a clear refusal, nothing changed. */
static void test_hostile_fields(void **state)
{
	struct world *w = *state;
	size_t vm, bo, data, end, len = w->len;
	u8 *b;

	side_init(&w->dst, 8 * MiB, 0);
	b = copy_of(w);
	vm = rec_at(b, len, 1, 0);
	bo = rec_at(b, len, 2, 1);
	data = rec_at(b, len, 3, 0);
	end = rec_at(b, len, 0xffff, 0);

	b[0] ^= 1;
	expect_refused(w, b, len, -EBADMSG, "not a vgmem migration stream");
	memcpy(b, w->stream, len);
	b[8] = 3;
	expect_refused(w, b, len, -EPROTONOSUPPORT, "stream version 3");
	memcpy(b, w->stream, len);
	b[8] = 2;	/* a pre-copy's: its END is longer */
	expect_refused(w, b, len, -EBADMSG, "END after");
	memcpy(b, w->stream, len);
	b[vm] = 9;		/* an unknown record the reader must not skip */
	expect_refused(w, b, len, -EBADMSG, "unknown type 9");
	memcpy(b, w->stream, len);
	put64(b + bo + 16, get64(b + rec_at(b, len, 2, 0) + 16));
	expect_refused(w, b, len, -EBADMSG, "not after the one before");
	memcpy(b, w->stream, len);
	put64(b + bo + 16, 1ull << 62);		/* outside the VA space */
	expect_refused(w, b, len, -EINVAL, "BO of");
	memcpy(b, w->stream, len);
	put64(b + data + 24, get64(b + data + 24) + 64 * MiB);
	expect_refused(w, b, len, -EBADMSG, "is not inside its BO");
	memcpy(b, w->stream, len);
	put64(b + data + 16, 0x1234000);
	expect_refused(w, b, len, -EBADMSG, "names no BO");
	memcpy(b, w->stream, len);
	put64(b + data + 8, 1ull << 50);	/* a data record of a petabyte */
	expect_refused(w, b, len, -EBADMSG, "data of");
	memcpy(b, w->stream, len);
	put64(b + end + 16, 3);
	expect_refused(w, b, len, -EBADMSG, "END after");
	memcpy(b, w->stream, len);
	put64(b + vm + 16 + 16, get64(b + vm + 16 + 16) + 1);	/* one BO more */
	expect_refused(w, b, len, -EBADMSG, "END with");
	memcpy(b, w->stream, len);
	b[len] = 0;
	expect_refused(w, b, len + 1, -EBADMSG, "after END");
	/* The channel's record: its id, its ring, its driver, its state. */
	{
		size_t ch = rec_at(b, len, 4, 0) + 16;

		put64(b + ch, 9999 | (get64(b + ch) & ~0xffffffffull));
		expect_refused(w, b, len, -EBADMSG, "a channel id taken or out of range");
		memcpy(b, w->stream, len);
		put64(b + ch + 8, 1ull << 40);
		expect_refused(w, b, len, -EBADMSG, "not a ring in this VM's memory");
		memcpy(b, w->stream, len);
		memcpy(b + ch + 16, "nvkm", 5);
		expect_refused(w, b, len, -EPROTONOSUPPORT, "state of GPU driver 'nvkm'");
		memcpy(b, w->stream, len);
		b[ch + 32] ^= 1;
		expect_refused(w, b, len, -EBADMSG, "state of");
		memcpy(b, w->stream, len);
		b[ch + 40 + 2 * 4096] ^= 1;	/* the state's magic */
		expect_refused(w, b, len, -EBADMSG, "refused its state");
	}
	free(b);
	vg_host_destroy(w->dst.h);
}

/* A quota smaller than the VM's memory: refused before any BO is made. */
static void test_quota(void **state)
{
	struct world *w = *state;

	side_init(&w->dst, 8 * MiB, 2 * MiB);
	expect_refused(w, w->stream, w->len, -EFBIG, "quota is");
	vg_host_destroy(w->dst.h);
}

/* What the platform's load() saw, and what it answers. */
struct dev_sink {
	u8 got[VG_MIG_DEV_MAX];
	u32 len;
	int calls;
	int answer;
};

static int dev_load(void *priv, const void *buf, u32 len, char *why,
		    size_t why_len)
{
	struct dev_sink *k = priv;

	k->calls++;
	if (k->answer) {
		snprintf(why, why_len, "config space of another device");
		return k->answer;
	}
	memcpy(k->got, buf, len);
	k->len = len;
	return 0;
}

/*
 * The platform's device state rides in the stream: handed whole to the
 * destination's load(), refused by a host that cannot restore it, missed
 * when absent, and a refusal by load() refuses the stream.
 */
static void test_device_state(void **state)
{
	struct world *w = *state;
	struct vg_vm *src = vg_host_guest_vm(w->src.g);
	struct dev_sink k = { .answer = 0 };
	struct vg_mig_dev sdev = { .len = 300 }, ddev = { .load = dev_load,
							  .priv = &k };
	u8 blob[300], big[VG_MIG_DEV_MAX + 1];
	struct vg_mig_save *s;
	char why[128];
	size_t len;
	u8 *b;
	u32 i;

	for (i = 0; i < sizeof(blob); i++)
		blob[i] = (u8)(i * 13 + 1);
	sdev.state = blob;
	/* Sizes the stream cannot carry are the caller's mistake. */
	memset(big, 1, sizeof(big));
	sdev.state = big;
	sdev.len = sizeof(big);
	assert_int_equal(vg_mig_save_begin(src, &sdev, &s), -EINVAL);
	sdev.len = 0;
	assert_int_equal(vg_mig_save_begin(src, &sdev, &s), -EINVAL);
	sdev.state = blob;
	sdev.len = sizeof(blob);
	b = save_vm(src, &sdev, &len);
	side_init(&w->dst, 8 * MiB, 0);
	assert_int_equal(load_dev(&w->dst, &ddev, b, len, 777, why,
				  sizeof(why)), 0);
	assert_int_equal(k.calls, 1);
	assert_int_equal(k.len, sizeof(blob));
	assert_memory_equal(k.got, blob, sizeof(blob));
	assert_int_equal(vm_stat(w->dst.g, 0), vm_stat(w->src.g, 0));
	vg_host_destroy(w->dst.h);

	/* A host without a device to restore it into refuses it. */
	side_init(&w->dst, 8 * MiB, 0);
	assert_int_equal(load(&w->dst, b, len, 4096, why, sizeof(why)),
			 -EPROTONOSUPPORT);
	assert_non_null(strstr(why, "cannot restore"));
	assert_empty(&w->dst);
	/* A stream without one, where one is needed. */
	k.calls = 0;
	assert_int_equal(load_dev(&w->dst, &ddev, w->stream, w->len, 4096, why,
				  sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "without the device"));
	assert_int_equal(k.calls, 0);
	assert_empty(&w->dst);
	/* The platform refuses it: so is the stream, with its reason. */
	k.answer = -EINVAL;
	assert_int_equal(load_dev(&w->dst, &ddev, b, len, 100, why,
				  sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "another device"));
	assert_empty(&w->dst);
	vg_host_destroy(w->dst.h);
	free(b);
}

/* The guest was promised its vGPU's size: a smaller one is refused. */
static void test_smaller_quota(void **state)
{
	struct world *w = *state;
	struct side src2;
	char why[128];
	size_t len;
	u8 *b;

	side_init(&src2, 8 * MiB, 6 * MiB);
	{
		uint64_t va;

		assert_int_equal(vgmem_bo_alloc(vg_host_guest_dev(src2.g),
						1 * MiB, &va), 0);
	}
	b = save_vm(vg_host_guest_vm(src2.g), NULL, &len);
	/* 1 MiB fits in 4, but the guest was told 6. */
	side_init(&w->dst, 8 * MiB, 4 * MiB);
	assert_int_equal(load(&w->dst, b, len, 4096, why, sizeof(why)),
			 -EFBIG);
	assert_non_null(strstr(why, "quota of 6291456"));
	assert_empty(&w->dst);
	vg_host_destroy(w->dst.h);
	/* The same or a larger one takes it. */
	side_init(&w->dst, 8 * MiB, 6 * MiB);
	assert_int_equal(load(&w->dst, b, len, 4096, NULL, 0), 0);
	vg_host_destroy(w->dst.h);
	vg_host_destroy(src2.h);
	free(b);
}

static int no_fault(void *priv, const struct vg_gpu_fault *f)
{
	(void)priv;
	(void)f;
	return -EFAULT;
}

/*
 * A file range the VM's file service does not know (made around it) cannot
 * go as an FMAP record: the save fails rather than lose it.
 */
static void test_file_map_refused(void **state)
{
	struct world *w = *state;
	struct vg_vm *vm = vg_host_guest_vm(w->src.g);
	struct vg_fault_reg *reg;
	struct vg_va_node node;
	struct vg_mig_save *s;
	u8 *buf = malloc(16 << 20);
	ssize_t n;

	assert_non_null(buf);
	memset(&node, 0, sizeof(node));
	assert_int_equal(vg_vm_file_va_get(vm, 64 << 10, &node, no_fault, NULL,
					   &reg), 0);
	assert_int_equal(vg_mig_save_begin(vm, NULL, &s), 0);
	while ((n = vg_mig_save_read(s, buf, 16 << 20)) > 0)
		;
	assert_int_equal(n, -EOPNOTSUPP);
	vg_mig_save_end(s);
	vg_vm_file_va_put(vm, &node, reg);
	assert_int_equal(vg_mig_save_begin(vm, NULL, &s), 0);
	while ((n = vg_mig_save_read(s, buf, 16 << 20)) > 0)
		;
	assert_int_equal(n, 0);
	vg_mig_save_end(s);
	free(buf);
}

/* A VM that has memory already is no destination. */
static void test_busy_destination(void **state)
{
	struct world *w = *state;
	struct vg_mig_load *l;
	uint64_t va;

	side_init(&w->dst, 8 * MiB, 0);
	assert_int_equal(vgmem_bo_alloc(vg_host_guest_dev(w->dst.g), MiB, &va),
			 0);
	assert_int_equal(vg_mig_load_begin(vg_host_guest_vm(w->dst.g), NULL, &l),
			 -EBUSY);
	vg_host_destroy(w->dst.h);
}

/*
 * An optional record the reader does not know is skipped: a newer source
 * may add what an older destination can ignore.
 */
static void test_optional_record_skipped(void **state)
{
	struct world *w = *state;
	size_t end = rec_at(w->stream, w->len, 0xffff, 0), len = w->len + 24;
	u8 *b = malloc(len);

	assert_non_null(b);
	memcpy(b, w->stream, end);
	put64(b + end, 77 | (1ull << 32));	/* type 77, flags OPTIONAL */
	put64(b + end + 8, 8);
	put64(b + end + 16, 0xdeadbeef);
	memcpy(b + end + 24, w->stream + end, w->len - end);
	/* END counts it among the records before END. */
	put64(b + end + 24 + 16, get64(b + end + 24 + 16) + 1);
	side_init(&w->dst, 8 * MiB, 0);
	assert_int_equal(load(&w->dst, b, len, 4096, NULL, 0), 0);
	assert_int_equal(vm_stat(w->dst.g, 0), vm_stat(w->src.g, 0));
	free(b);
	vg_host_destroy(w->dst.h);
}

/* Random flips: refused and empty, or taken with the books whole. */
static void test_random_flips(void **state)
{
	struct world *w = *state;
	u8 *b = copy_of(w);
	u32 rnd = 12345;
	int i, taken = 0, refused = 0, err;
	size_t at;

	side_init(&w->dst, 8 * MiB, 0);
	for (i = 0; i < 200; i++) {
		rnd = rnd * 1103515245u + 12345u;
		/* Mostly the headers: the data bytes are many but simple. */
		at = i % 2 ? (rnd >> 8) % 200 : (rnd >> 8) % w->len;
		memcpy(b, w->stream, w->len);
		b[at] ^= (u8)(1u << (rnd % 8));
		err = load(&w->dst, b, w->len, 65536, NULL, 0);
		if (err) {
			refused++;
			assert_empty(&w->dst);
			continue;
		}
		taken++;
		assert_int_equal(vg_gpu_check(vg_host_gpu(w->dst.h)), 0);
		/* Leave it empty for the next round: the host frees it. */
		vg_host_guest_destroy(w->dst.g);
		assert_int_equal(vg_host_guest_create(w->dst.h, "tenant", 0,
						      4 * MiB, &w->dst.g), 0);
	}
	assert_true(refused > 50);
	assert_true(taken > 0);
	free(b);
	vg_host_destroy(w->dst.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_zero_chunks_left_out),
		cmocka_unit_test(test_save_max),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_hostile_fields),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_device_state),
		cmocka_unit_test(test_smaller_quota),
		cmocka_unit_test(test_file_map_refused),
		cmocka_unit_test(test_busy_destination),
		cmocka_unit_test(test_optional_record_skipped),
		cmocka_unit_test(test_random_flips),
	};

	return cmocka_run_group_tests(tests, world_setup, world_teardown);
}
