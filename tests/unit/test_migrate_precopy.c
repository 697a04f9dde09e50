// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Pre-copy (core/mig_save.c, core/mig_track.c): a VM's GPU memory streamed
 * while its guest runs, writes, frees and allocates, then stopped; the
 * stop sends only what the GPU wrote since it was sent. The destination
 * (with less VRAM) must then hold exactly what the source held when it
 * stopped, every byte. Also: a pre-copy ended without a stop leaves the
 * source as it was, writable and without fault ranges; hostile version 2
 * records (BO_FREE) are refused.
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
#include "host-module/core/vg_internal.h"
#include "host-module/core/vg_va.h"

#define MiB		(1ull << 20)
#define CHUNK		(256ull << 10)
#define BO_A		(3 * MiB)	/* written, part of it relocated */
#define BO_B		(2 * MiB)	/* written, then freed during the pre-copy */
#define BO_Z		(1 * MiB)	/* never written */
#define BO_E		(2 * MiB)	/* made during the pre-copy */
#define CAP		(64 * MiB)

struct side {
	struct vg_host *h;
	struct vg_host_guest *g;
};

static void side_init(struct side *s, u64 vram)
{
	struct vg_host_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = vram;
	cfg.gpu.name = "pre";
	cfg.gpu.chunk_size = CHUNK;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	assert_int_equal(vg_host_create(&cfg, &s->h), 0);
	assert_int_equal(vg_host_guest_create(s->h, "tenant", 0, 4 * MiB,
					      &s->g), 0);
}

static struct vg_vm *vm_of(struct side *s)
{
	return vg_host_guest_vm(s->g);
}

static u64 vm_stat(struct side *s, int which)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(vm_of(s), &st);
	return which == 0 ? st.allocated : st.relocated;
}

/* Read a pre-copy until its temporary end (-ENOMSG): the bytes read. */
static size_t drain(struct vg_mig_save *s, u8 *buf, size_t *len)
{
	size_t piece = 3, before = *len;
	ssize_t n;

	for (;;) {
		piece = piece * 7 % 90001 + 1;
		assert_true(*len + piece <= CAP);
		n = vg_mig_save_read(s, buf + *len, piece);
		if (n == -ENOMSG)
			break;
		assert_true(n > 0);
		*len += (size_t)n;
	}
	return *len - before;
}

/* Every chunk of vm in VRAM to host RAM, as the reducer would move them. */
static u32 relocate_resident(struct vg_vm *vm)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_bo *bo;
	u32 i, n = 0;

	mutex_lock(&gpu->lock);
	list_for_each_entry(bo, &vm->bos, node)
		for (i = 0; i < bo->nr_chunks; i++)
			if (bo->chunks[i].loc == VG_LOC_VRAM) {
				vg_chunk_mark(&bo->chunks[i]);
				n++;
			}
	assert_int_equal(vg_relocate_vm(vm, VG_LOC_HOST), 0);
	mutex_unlock(&gpu->lock);
	return n;
}

static u8 *bo_bytes(struct vgmem_chan *ch, u64 va, u64 bytes)
{
	u8 *b = malloc(bytes);

	assert_non_null(b);
	assert_int_equal(vgmem_read(ch, va, b, bytes), 0);
	return b;
}

static int load_all(struct side *d, const u8 *buf, size_t len, char *why,
		    size_t whylen)
{
	struct vg_mig_load *l;
	size_t off = 0, n, piece = 5;
	ssize_t r;
	int err;

	err = vg_mig_load_begin(vm_of(d), NULL, &l);
	if (err)
		return err;
	while (off < len) {
		piece = piece * 13 % 70001 + 1;
		n = piece < len - off ? piece : len - off;
		r = vg_mig_load_write(l, buf + off, n);
		if (r < 0)
			break;
		assert_int_equal(r, n);
		off += n;
	}
	snprintf(why, whylen, "%s", vg_mig_load_error(l));
	err = vg_mig_load_finish(l);
	if (!err)
		vg_vm_thaw(vm_of(d));
	return err;
}

struct run {
	struct side src;
	struct vg_host_guest *hog;
	struct vgmem_chan *ch;
	uint64_t va_a, va_b, va_z, va_e;
	u8 *stream;
	size_t len;
	u8 *want_a, *want_e, *want_z;
	struct vg_mig_save_stats st;
};

/*
 * The source with chunks in VRAM and host RAM; a pre-copy with writes
 * between its passes; the stop. r->stream is the whole stream.
 */
static void precopy_run(struct run *r)
{
	struct vgmem_dev *dev, *hdev;
	struct vg_mig_save *s;
	uint64_t hva;
	u64 ini, dirty, dirtied;
	u8 *up;
	size_t first;

	memset(r, 0, sizeof(*r));
	r->stream = malloc(CAP);
	assert_non_null(r->stream);
	side_init(&r->src, 4 * MiB);
	assert_int_equal(vg_host_guest_create(r->src.h, "hog", 0, 1 * MiB,
					      &r->hog), 0);
	hdev = vg_host_guest_dev(r->hog);
	assert_int_equal(vgmem_bo_alloc(hdev, 2 * MiB, &hva), 0);
	dev = vg_host_guest_dev(r->src.g);
	assert_int_equal(vgmem_chan_create(dev, 16, 4096, 1 * MiB, &r->ch), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BO_A, &r->va_a), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BO_B, &r->va_b), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BO_Z, &r->va_z), 0);
	assert_int_equal(vgmem_fill_pattern(r->ch, r->va_a, BO_A, 0xa), 0);
	assert_int_equal(vgmem_fill_pattern(r->ch, r->va_b, BO_B, 0xb), 0);
	assert_true(vm_stat(&r->src, 1) > 0);	/* some of it in host RAM */

	/* The first pass, with the guest running but idle. */
	assert_int_equal(vg_mig_precopy_begin(vm_of(&r->src), &s), 0);
	assert_int_equal(vg_mig_precopy_begin(vm_of(&r->src), &s), -EBUSY);
	vg_mig_precopy_info(s, &ini, &dirty);
	assert_true(ini >= BO_A + BO_B + BO_Z);
	first = drain(s, r->stream, &r->len);
	/* Chunks of zeroes are left out; the written ones are all there. */
	assert_true(first >= BO_A + BO_B);
	assert_true(first < BO_A + BO_B + BO_Z);
	vg_mig_precopy_info(s, &ini, &dirty);
	assert_int_equal(ini, 0);
	assert_int_equal(dirty, 0);
	assert_int_equal(drain(s, r->stream, &r->len), 0);

	/*
	 * Clean chunks moved by a relocation stay read-only. Then the guest
	 * writes all of A with a kernel and half a chunk of Z with the copy
	 * engine (each chunk faults once and replays), frees B and makes E.
	 */
	assert_true(relocate_resident(vm_of(&r->src)) > 0);
	assert_int_equal(vgmem_fill_pattern(r->ch, r->va_a, BO_A, 0xc), 0);
	up = malloc(CHUNK / 2);
	assert_non_null(up);
	memset(up, 0x5a, CHUNK / 2);
	assert_int_equal(vgmem_write(r->ch, r->va_z + CHUNK, up, CHUNK / 2), 0);
	free(up);
	vg_mig_save_stats(s, &r->st);
	assert_int_equal(r->st.dirtied, BO_A + CHUNK);
	vg_mig_precopy_info(s, &ini, &dirty);
	assert_int_equal(ini, 0);
	assert_true(dirty >= BO_A + CHUNK);
	assert_int_equal(vgmem_bo_free(dev, r->va_b), 0);
	assert_int_equal(vgmem_bo_alloc(dev, BO_E, &r->va_e), 0);
	assert_int_equal(vgmem_fill_pattern(r->ch, r->va_e, BO_E, 0xe), 0);
	assert_true(drain(s, r->stream, &r->len) >= BO_E + BO_A + CHUNK);
	vg_mig_precopy_info(s, &ini, &dirty);
	assert_int_equal(dirty, 0);

	/* The last writes before the stop: one chunk of A. */
	assert_int_equal(vgmem_fill_pattern(r->ch, r->va_a, CHUNK, 0xd), 0);
	r->want_a = bo_bytes(r->ch, r->va_a, BO_A);
	r->want_e = bo_bytes(r->ch, r->va_e, BO_E);
	r->want_z = bo_bytes(r->ch, r->va_z, BO_Z);
	vg_mig_save_stats(s, &r->st);
	dirtied = r->st.dirtied;

	/* The stop sends the one dirty chunk, the channel and END. */
	assert_int_equal(vg_vm_freeze(vm_of(&r->src)), 0);
	assert_int_equal(vg_mig_save_stop(s, NULL), 0);
	assert_int_equal(vg_mig_save_stop(s, NULL), -EINVAL);
	for (;;) {
		ssize_t n = vg_mig_save_read(s, r->stream + r->len, 4096);

		assert_true(n >= 0);
		if (!n)
			break;
		r->len += (size_t)n;
	}
	vg_mig_save_stats(s, &r->st);
	assert_int_equal(r->st.stop_data_records, 1);
	assert_true(r->st.stop_bytes < CHUNK + 3 * 4096 + 4096);
	assert_int_equal(r->st.dirtied, dirtied);
	assert_true(r->st.walks >= 3);
	vg_mig_save_end(s);
}

static void run_free(struct run *r)
{
	vg_vm_thaw(vm_of(&r->src));
	vgmem_chan_destroy(r->ch);
	vg_host_destroy(r->src.h);
	free(r->want_a);
	free(r->want_e);
	free(r->want_z);
	free(r->stream);
}

static void expect_bo(struct vgmem_chan *ch, u64 va, const u8 *want, u64 bytes)
{
	u8 *got = bo_bytes(ch, va, bytes);
	u64 i;

	for (i = 0; i < bytes; i++)
		if (got[i] != want[i])
			fail_msg("byte %llu of the BO at %#llx: %#x, not %#x",
				 (unsigned long long)i, (unsigned long long)va,
				 got[i], want[i]);
	free(got);
}

static void test_precopy_moves_every_byte(void **state)
{
	struct run r;
	struct side dst;
	struct vgmem_chan *dch;
	struct vg_fault_stats fs;
	char why[160];
	uint64_t va;

	(void)state;
	precopy_run(&r);
	/* Tracking is over: no range left, the source's BOs writable. */
	vg_fault_get_stats(vg_host_gpu(r.src.h), &fs);
	assert_int_equal(fs.ranges, 0);

	side_init(&dst, 2 * MiB);	/* less VRAM: part lands in host RAM */
	assert_int_equal(load_all(&dst, r.stream, r.len, why, sizeof(why)), 0);
	assert_int_equal(vm_stat(&dst, 0), BO_A + BO_Z + BO_E);
	assert_true(vm_stat(&dst, 1) > 0);
	assert_int_equal(vgmem_chan_create(vg_host_guest_dev(dst.g), 16, 4096,
					   64 << 10, &dch), 0);
	expect_bo(dch, r.va_a, r.want_a, BO_A);
	expect_bo(dch, r.va_e, r.want_e, BO_E);
	expect_bo(dch, r.va_z, r.want_z, BO_Z);
	/* B is gone, unless E took its place. */
	if (r.va_e != r.va_b)
		assert_int_equal(vgmem_bo_free(vg_host_guest_dev(dst.g), r.va_b),
				 -ENOENT);
	assert_int_equal(vg_gpu_check(vg_host_gpu(dst.h)), 0);
	/* The destination's tenant works on its memory. */
	assert_int_equal(vgmem_bo_alloc(vg_host_guest_dev(dst.g), CHUNK, &va), 0);
	assert_int_equal(vgmem_fill_pattern(dch, r.va_a, BO_A, 0x77), 0);
	vgmem_chan_destroy(dch);
	vg_host_destroy(dst.h);

	/* The source too, once thawed: its chunks are writable again. */
	vg_vm_thaw(vm_of(&r.src));
	assert_int_equal(vgmem_fill_pattern(r.ch, r.va_a, BO_A, 0x78), 0);
	assert_int_equal(vgmem_chan_error(r.ch, NULL), 0);
	vg_vm_freeze(vm_of(&r.src));	/* run_free thaws it */
	assert_int_equal(vg_gpu_check(vg_host_gpu(r.src.h)), 0);
	run_free(&r);
}

static int no_fault(void *priv, const struct vg_gpu_fault *f)
{
	(void)priv;
	(void)f;
	return -EFAULT;
}

/* Cancelled in pre-copy: the guest runs on as if nothing had begun. */
static void test_precopy_cancelled(void **state)
{
	struct side src;
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	struct vg_mig_save *s;
	struct vg_fault_stats fs;
	u8 *buf = malloc(CAP);
	size_t len = 0;
	ssize_t n;
	uint64_t va;

	(void)state;
	assert_non_null(buf);
	side_init(&src, 4 * MiB);
	dev = vg_host_guest_dev(src.g);
	assert_int_equal(vgmem_chan_create(dev, 16, 4096, 64 << 10, &ch), 0);
	assert_int_equal(vgmem_bo_alloc(dev, 2 * MiB, &va), 0);
	assert_int_equal(vgmem_fill_pattern(ch, va, 2 * MiB, 1), 0);
	assert_int_equal(vg_mig_precopy_begin(vm_of(&src), &s), 0);
	drain(s, buf, &len);
	vg_fault_get_stats(vg_host_gpu(src.h), &fs);
	assert_int_equal(fs.ranges, 1);	/* its one BO's */
	/* A stop needs the VM frozen. */
	assert_int_equal(vg_mig_save_stop(s, NULL), -EBUSY);
	/* A file range its file service does not know fails the stream. */
	{
		struct vg_fault_reg *reg;
		struct vg_va_node node;

		memset(&node, 0, sizeof(node));
		assert_int_equal(vg_vm_file_va_get(vm_of(&src), 64 << 10, &node,
						   no_fault, NULL, &reg), 0);
		assert_int_equal(vg_vm_freeze(vm_of(&src)), 0);
		assert_int_equal(vg_mig_save_stop(s, NULL), 0);
		len = 0;
		while ((n = vg_mig_save_read(s, buf, CAP)) > 0)
			;
		assert_int_equal(n, -EOPNOTSUPP);
		vg_vm_thaw(vm_of(&src));
		vg_vm_file_va_put(vm_of(&src), &node, reg);
	}
	vg_mig_save_end(s);
	vg_fault_get_stats(vg_host_gpu(src.h), &fs);
	assert_int_equal(fs.ranges, 0);
	/* Writes land without a fault, and a new pre-copy may begin. */
	assert_int_equal(vgmem_fill_pattern(ch, va, 2 * MiB, 2), 0);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	assert_int_equal(vg_mig_precopy_begin(vm_of(&src), &s), 0);
	vg_mig_save_end(s);
	assert_int_equal(vg_gpu_check(vg_host_gpu(src.h)), 0);
	vgmem_chan_destroy(ch);
	vg_host_destroy(src.h);
	free(buf);
}

static size_t rec_at(const u8 *b, size_t len, u32 type, int k)
{
	size_t off = 32;

	while (off + 16 <= len) {
		u32 t = (u32)b[off] | (u32)b[off + 1] << 8;
		u64 l;

		memcpy(&l, b + off + 8, 8);
		if (t == type && k-- == 0)
			return off;
		off += 16 + l;
	}
	fail_msg("no record of type %u", type);
	return 0;
}

/* Hostile version 2 records, each refused with the destination empty. */
static void test_precopy_hostile(void **state)
{
	struct run r;
	struct side dst;
	char why[160];
	size_t fr, end;
	u8 *b;
	u64 v;

	(void)state;
	precopy_run(&r);
	side_init(&dst, 8 * MiB);
	b = malloc(r.len + 16);
	assert_non_null(b);
	fr = rec_at(r.stream, r.len, 6, 0);
	end = rec_at(r.stream, r.len, 0xffff, 0);

	memcpy(b, r.stream, r.len);
	v = 0x7777000;
	memcpy(b + fr + 16, &v, 8);
	assert_int_equal(load_all(&dst, b, r.len, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "names no BO"));
	assert_int_equal(vm_stat(&dst, 0), 0);

	memcpy(b, r.stream, r.len);
	b[8] = 1;	/* the same records in a version 1 stream */
	assert_int_equal(load_all(&dst, b, r.len, why, sizeof(why)), -EBADMSG);
	assert_int_equal(vm_stat(&dst, 0), 0);

	memcpy(b, r.stream, r.len);
	memcpy(&v, b + end + 24, 8);
	v++;		/* one BO more at the end than the stream made */
	memcpy(b + end + 24, &v, 8);
	assert_int_equal(load_all(&dst, b, r.len, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "END with"));
	assert_int_equal(vm_stat(&dst, 0), 0);

	memcpy(b, r.stream, r.len);
	memcpy(&v, b + end + 32, 8);
	v += 4096;	/* bytes the BOs do not add up to */
	memcpy(b + end + 32, &v, 8);
	assert_int_equal(load_all(&dst, b, r.len, why, sizeof(why)), -EBADMSG);
	assert_int_equal(vm_stat(&dst, 0), 0);

	/* And the stream as it is still loads. */
	assert_int_equal(load_all(&dst, r.stream, r.len, why, sizeof(why)), 0);
	assert_int_equal(vm_stat(&dst, 0), BO_A + BO_Z + BO_E);
	assert_int_equal(vg_gpu_check(vg_host_gpu(dst.h)), 0);
	vg_host_destroy(dst.h);
	free(b);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precopy_moves_every_byte),
		cmocka_unit_test(test_precopy_cancelled),
		cmocka_unit_test(test_precopy_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
