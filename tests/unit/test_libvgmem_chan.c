// SPDX-License-Identifier: MIT
/*
 * libvgmem's channel machinery against a fake device: a transport whose
 * "GPU" decodes the GPFIFO and pushbuffers exactly as the ABI says and
 * advances GP_GET one entry per USERD read, so ring-space waits, GP_PUT
 * wrap-around and pushbuffer reuse all happen while entries are still
 * outstanding. Whatever the library overwrote too early shows up as a
 * wrong method stream.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>
#include <libvgmem.h>

#define GMEM_BASE	0x100000ull
#define GMEM_SIZE	(4u << 20)
#define VRAM_BASE	0x200000000ull
#define VRAM_SIZE	(1u << 20)
#define CHAN_ID		7

struct fake {
	uint8_t gmem[GMEM_SIZE];
	uint64_t gmem_used;
	uint8_t vram[VRAM_SIZE];
	uint32_t userd[VGMEM_USERD_SIZE / 4];
	uint64_t gpfifo_gpa;
	uint32_t entries;
	bool chan_live;
	uint32_t subc_class[8];
	/* Method log: NOP payloads in execution order. */
	uint32_t nops[8192];
	unsigned int nr_nops;
	unsigned int max_outstanding;
	unsigned int copies;
	uint32_t ce[8];		/* OFFSET_IN_UPPER .. LINE_COUNT */
	bool bad;		/* the fake saw something the ABI forbids */
	bool auto_run;		/* run one entry per run_every GP_GET reads */
	unsigned int run_every, reads;
	/* A host that stalls: nothing runs before this CLOCK_MONOTONIC time. */
	uint64_t stall_until_ns;
	/* A channel that faults at this GP_GET read (0: never). */
	unsigned int fault_at_read;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct fake *F;

static uint32_t *ud(uint32_t off)
{
	return &F->userd[off / 4];
}

static void *gpa_ptr(uint64_t gpa, uint64_t len)
{
	if (gpa < GMEM_BASE || gpa + len > GMEM_BASE + GMEM_SIZE) {
		F->bad = true;
		return NULL;
	}
	return F->gmem + (gpa - GMEM_BASE);
}

static void *va_ptr(uint64_t va, uint64_t len)
{
	if (va < VRAM_BASE || va + len > VRAM_BASE + VRAM_SIZE) {
		F->bad = true;
		return NULL;
	}
	return F->vram + (va - VRAM_BASE);
}

static void method(unsigned int subc, uint32_t mthd, uint32_t data)
{
	void *src, *dst;
	uint64_t in, out;

	if (mthd == VGMEM_MTHD_SET_OBJECT) {
		F->subc_class[subc] = data;
		return;
	}
	if (mthd == VGMEM_MTHD_NOP) {
		if (F->nr_nops < 8192)
			F->nops[F->nr_nops++] = data;
		return;
	}
	if (F->subc_class[subc] == VGMEM_CLASS_COPY &&
	    mthd >= VGMEM_CE_OFFSET_IN_UPPER && mthd <= VGMEM_CE_LINE_COUNT) {
		F->ce[(mthd - VGMEM_CE_OFFSET_IN_UPPER) / 4] = data;
		return;
	}
	if (F->subc_class[subc] == VGMEM_CLASS_COPY && mthd == VGMEM_CE_LAUNCH_DMA) {
		in = ((uint64_t)F->ce[0] << 32) | F->ce[1];
		out = ((uint64_t)F->ce[2] << 32) | F->ce[3];
		if (F->ce[7] != 1 || F->ce[4] != F->ce[6] || F->ce[5] != F->ce[6] ||
		    !(data & VGMEM_CE_LAUNCH_SRC_PITCH) ||
		    !(data & VGMEM_CE_LAUNCH_DST_PITCH)) {
			F->bad = true;
			return;
		}
		src = data & VGMEM_CE_LAUNCH_SRC_PHYS ? gpa_ptr(in, F->ce[6]) :
							 va_ptr(in, F->ce[6]);
		dst = data & VGMEM_CE_LAUNCH_DST_PHYS ? gpa_ptr(out, F->ce[6]) :
							 va_ptr(out, F->ce[6]);
		if (src && dst)
			memcpy(dst, src, F->ce[6]);
		F->copies++;
		return;
	}
	F->bad = true;
}

/* Decode one pushbuffer segment as a Fermi+ GPU would. */
static void run_segment(const uint32_t *pb, uint32_t ndw)
{
	uint32_t i = 0, h, type, cnt, subc, mthd, k;

	while (i < ndw) {
		h = pb[i++];
		type = VGMEM_PKHDR_GET_TYPE(h);
		cnt = VGMEM_PKHDR_GET_COUNT(h);
		subc = VGMEM_PKHDR_GET_SUBC(h);
		mthd = VGMEM_PKHDR_GET_MTHD(h);
		if (type == VGMEM_PKHDR_IMMD) {
			method(subc, mthd, cnt);
			continue;
		}
		if (i + cnt > ndw) {
			F->bad = true;
			return;
		}
		for (k = 0; k < cnt; k++) {
			uint32_t m = mthd;

			if (type == VGMEM_PKHDR_INC)
				m = mthd + 4 * k;
			else if (type == VGMEM_PKHDR_INC_ONCE)
				m = k ? mthd + 4 : mthd;
			else if (type != VGMEM_PKHDR_NONINC)
				F->bad = true;
			method(subc, m, pb[i + k]);
		}
		i += cnt;
	}
}

static void run_one(void)
{
	uint32_t get = *ud(VGMEM_USERD_GP_GET), put = *ud(VGMEM_USERD_GP_PUT);
	uint64_t *ring, e;
	uint32_t *pb;

	if (get == put)
		return;
	ring = gpa_ptr(F->gpfifo_gpa, (uint64_t)F->entries * 8);
	e = ring[get];
	if (VGMEM_GP_ENTRY_RSVD(e) || !VGMEM_GP_ENTRY_NDW(e)) {
		F->bad = true;
		return;
	}
	pb = gpa_ptr(VGMEM_GP_ENTRY_ADDR(e), VGMEM_GP_ENTRY_NDW(e) * 4);
	if (pb)
		run_segment(pb, (uint32_t)VGMEM_GP_ENTRY_NDW(e));
	*ud(VGMEM_USERD_GP_GET) = (get + 1) & (F->entries - 1);
	(*ud(VGMEM_USERD_ENTRIES_DONE))++;
}

static int f_ctrl(void *t, struct vgmem_ctrl *cmd)
{
	(void)t;
	cmd->status = 0;
	switch (cmd->op) {
	case VGMEM_CTRL_QUERY:
		cmd->query.abi_version = VGMEM_ABI_VERSION;
		cmd->query.chunk_size = 2u << 20;
		break;
	case VGMEM_CTRL_CHAN_CREATE:
		if (F->chan_live) {
			cmd->status = -ENOSPC;
			break;
		}
		F->gpfifo_gpa = cmd->chan.gpfifo_gpa;
		F->entries = cmd->chan.gpfifo_entries;
		F->chan_live = true;
		cmd->chan.chan_id = CHAN_ID;
		break;
	case VGMEM_CTRL_CHAN_DESTROY:
		if (cmd->chan.chan_id != CHAN_ID || !F->chan_live)
			cmd->status = -ENOENT;
		F->chan_live = false;
		break;
	default:
		cmd->status = -EINVAL;
	}
	return 0;
}

static uint32_t f_userd_read(void *t, uint32_t chan, uint32_t off)
{
	unsigned int out;

	(void)t;
	if (chan != CHAN_ID)
		F->bad = true;
	out = (*ud(VGMEM_USERD_GP_PUT) - *ud(VGMEM_USERD_GP_GET)) & (F->entries - 1);
	if (out > F->max_outstanding)
		F->max_outstanding = out;
	if (off == VGMEM_USERD_GP_GET && F->fault_at_read &&
	    F->reads + 1 >= F->fault_at_read)
		*ud(VGMEM_USERD_ERROR) = VGMEM_CHAN_ERR_VA;
	if (F->auto_run && off == VGMEM_USERD_GP_GET &&
	    ++F->reads % F->run_every == 0 &&
	    (!F->stall_until_ns || mono_ns() >= F->stall_until_ns))
		run_one();
	return *ud(off);
}

static void f_userd_write(void *t, uint32_t chan, uint32_t off, uint32_t val)
{
	(void)t;
	if (chan != CHAN_ID || off != VGMEM_USERD_GP_PUT || val >= F->entries)
		F->bad = true;
	*ud(off) = val;
}

static int f_gmem_alloc(void *t, size_t size, void **cpu, uint64_t *gpa)
{
	(void)t;
	size = (size + 4095) & ~(size_t)4095;
	if (F->gmem_used + size > GMEM_SIZE)
		return -ENOMEM;
	*cpu = F->gmem + F->gmem_used;
	*gpa = GMEM_BASE + F->gmem_used;
	F->gmem_used += size;
	return 0;
}

static void f_gmem_free(void *t, void *cpu, size_t size)
{
	(void)t;
	(void)cpu;
	(void)size;
}

static const struct vgmem_transport_ops fops = {
	.ctrl = f_ctrl,
	.userd_read = f_userd_read,
	.userd_write = f_userd_write,
	.gmem_alloc = f_gmem_alloc,
	.gmem_free = f_gmem_free,
};

static int setup(void **state)
{
	F = calloc(1, sizeof(*F));
	assert_non_null(F);
	F->auto_run = true;
	F->run_every = 1;
	*state = F;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	F = NULL;
	return 0;
}

static void test_create_binds_classes(void **state)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;

	(void)state;
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_chan_create(dev, 16, 0, 0, &ch), 0);
	assert_int_equal(vgmem_chan_id(ch), CHAN_ID);
	assert_int_equal(F->subc_class[VGMEM_SUBC_COMPUTE], VGMEM_CLASS_COMPUTE);
	assert_int_equal(F->subc_class[VGMEM_SUBC_COPY], VGMEM_CLASS_COPY);
	assert_int_equal(vgmem_chan_submitted(ch), 1);
	assert_int_equal(vgmem_chan_error(ch, NULL), 0);
	assert_false(F->bad);
	vgmem_close(dev);
	assert_false(F->chan_live);
}

static void test_bad_create_args(void **state)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;

	(void)state;
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_chan_create(dev, 12, 0, 0, &ch), -EINVAL);
	assert_int_equal(vgmem_chan_create(dev, 2, 0, 0, &ch), -EINVAL);
	assert_int_equal(vgmem_chan_create(dev, 1u << 17, 0, 0, &ch), -EINVAL);
	assert_int_equal(vgmem_chan_create(dev, 16, 16, 0, &ch), -EINVAL);
	assert_false(F->chan_live);
	vgmem_close(dev);
}

/*
 * Many segments of varying length through a 4-entry ring and a 256-byte
 * pushbuffer: every NOP arrives once, in order, and never more than three
 * entries are outstanding.
 */
static void ring_and_pushbuffer_wrap(uint32_t entries)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	static uint32_t expect[8192];
	uint32_t next = 0, data[13];
	uint64_t seq, last;
	unsigned int i, k, n;

	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	/* 16 entries of up to 15 dwords do not fit 64 dwords: both limits bite. */
	assert_int_equal(vgmem_chan_create(dev, entries, 256, 4096, &ch), 0);
	last = vgmem_chan_submitted(ch);
	F->nr_nops = 0;
	/* A slow GPU: the library has to wait for ring and pushbuffer space. */
	F->run_every = 5;
	for (i = 0; i < 500; i++) {
		n = 1 + i % 13;
		for (k = 0; k < n; k++) {
			data[k] = next * 3 + 1;
			expect[next++] = data[k];
		}
		/* NONINC sends every dword to NOP in order. */
		vgmem_pb_noninc(ch, 0, VGMEM_MTHD_NOP, data, n);
		if (i % 3 == 0) {
			expect[next] = next & 0x1fff;
			vgmem_pb_immd(ch, 0, VGMEM_MTHD_NOP, (uint16_t)(next & 0x1fff));
			next++;
		}
		assert_int_equal(vgmem_submit(ch, &seq), 0);
		assert_true(seq == last + 1);
		last = seq;
	}
	assert_int_equal(vgmem_finish(ch), 0);
	assert_false(F->bad);
	assert_int_equal(F->nr_nops, next);
	assert_memory_equal(F->nops, expect, next * sizeof(uint32_t));
	assert_true(F->max_outstanding <= entries - 1);
	assert_true(F->max_outstanding >= 3);
	assert_int_equal(*ud(VGMEM_USERD_ENTRIES_DONE), vgmem_chan_submitted(ch));
	vgmem_close(dev);
}

static void test_ring_and_pushbuffer_wrap(void **state)
{
	(void)state;
	ring_and_pushbuffer_wrap(4);
	teardown(state);
	setup(state);
	ring_and_pushbuffer_wrap(16);
}

/* A segment larger than the pushbuffer cannot be built: -ENOSPC, then fine. */
static void test_segment_too_big(void **state)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint32_t data[100] = { 0 };

	(void)state;
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_chan_create(dev, 4, 256, 4096, &ch), 0);
	vgmem_pb_noninc(ch, 0, VGMEM_MTHD_NOP, data, 100);
	assert_int_equal(vgmem_submit(ch, NULL), -ENOSPC);
	F->nr_nops = 0;
	vgmem_pb_noninc(ch, 0, VGMEM_MTHD_NOP, data, 10);
	assert_int_equal(vgmem_finish(ch), 0);
	assert_int_equal(F->nr_nops, 10);
	assert_false(F->bad);
	vgmem_close(dev);
}

/* Writes and reads larger than staging go in pieces and round-trip. */
static void test_write_read_staged(void **state)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	static uint8_t in[10000], out[10000];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_chan_create(dev, 8, 0, 4096, &ch), 0);
	assert_int_equal(vgmem_write(ch, VRAM_BASE + 100, in, sizeof(in)), 0);
	assert_int_equal(F->copies, 3);
	assert_memory_equal(F->vram + 100, in, sizeof(in));
	assert_int_equal(vgmem_read(ch, VRAM_BASE + 100, out, sizeof(out)), 0);
	assert_int_equal(F->copies, 6);
	assert_memory_equal(out, in, sizeof(in));
	assert_false(F->bad);
	vgmem_close(dev);
}

/* A channel error is sticky: every later call fails with -EIO. */
static void test_error_is_sticky(void **state)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint64_t addr, seq;
	uint32_t d = 1;
	uint8_t b;

	(void)state;
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_chan_create(dev, 8, 0, 0, &ch), 0);
	*ud(VGMEM_USERD_ERROR) = VGMEM_CHAN_ERR_VA;
	*ud(VGMEM_USERD_ERROR_ADDR_LO) = 0x1000;
	*ud(VGMEM_USERD_ERROR_ADDR_HI) = 0x2;
	assert_int_equal(vgmem_chan_error(ch, &addr), VGMEM_CHAN_ERR_VA);
	assert_true(addr == 0x200001000ull);
	vgmem_pb_inc(ch, 0, VGMEM_MTHD_NOP, &d, 1);
	assert_int_equal(vgmem_submit(ch, &seq), -EIO);
	assert_int_equal(vgmem_finish(ch), -EIO);
	assert_int_equal(vgmem_read(ch, VRAM_BASE, &b, 1), -EIO);
	assert_int_equal(vgmem_memset(ch, VRAM_BASE, 4096, 0), -EIO);
	/* Even if the page later read clean, the library remembers. */
	*ud(VGMEM_USERD_ERROR) = 0;
	assert_int_equal(vgmem_finish(ch), -EIO);
	vgmem_close(dev);
}

/* With a stalled GPU, waits time out instead of hanging. */
static void test_wait_timeout(void **state)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint64_t seq;
	uint32_t d = 5;

	(void)state;
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_chan_create(dev, 8, 0, 0, &ch), 0);
	F->auto_run = false;
	vgmem_pb_inc(ch, 0, VGMEM_MTHD_NOP, &d, 1);
	assert_int_equal(vgmem_submit(ch, &seq), 0);
	assert_int_equal(vgmem_wait(ch, seq, 1000000), -ETIMEDOUT);
	assert_int_equal(vgmem_wait(ch, seq + 1, 0), -EINVAL);
	F->auto_run = true;
	assert_int_equal(vgmem_wait(ch, seq, 0), 0);
	vgmem_close(dev);
}

/*
 * A slow host is not an error: the GPU makes no progress at all for a
 * stretch (a relocation, a CPU-starved engine), then goes on. Every wait
 * libvgmem does by itself waits it out and succeeds; only a deadline the
 * caller set ends a wait early, and a fault ends one at once (-EIO).
 */
static void test_stall_is_not_an_error(void **state)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *ch;
	uint64_t seq, t0;
	uint8_t buf[256], back[256];
	uint32_t d = 9;
	unsigned int i;

	(void)state;
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_chan_create(dev, 8, 0, 0, &ch), 0);

	/* A convenience operation over a stall. */
	t0 = mono_ns();
	F->stall_until_ns = t0 + 300000000ull;
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(vgmem_write(ch, VRAM_BASE, buf, sizeof(buf)), 0);
	assert_true(mono_ns() >= F->stall_until_ns);
	assert_int_equal(F->vram[100], 0x5a);
	F->stall_until_ns = mono_ns() + 100000000ull;
	memset(back, 0, sizeof(back));
	assert_int_equal(vgmem_read(ch, VRAM_BASE, back, sizeof(back)), 0);
	assert_memory_equal(buf, back, sizeof(buf));

	/* Ring space: more entries than the ring holds, across a stall. */
	F->stall_until_ns = mono_ns() + 200000000ull;
	for (i = 0; i < 20; i++) {
		vgmem_pb_inc(ch, 0, VGMEM_MTHD_NOP, &d, 1);
		assert_int_equal(vgmem_submit(ch, NULL), 0);
	}
	assert_int_equal(vgmem_finish(ch), 0);
	assert_true(mono_ns() >= F->stall_until_ns);

	/* The caller's own deadline is the only timeout ... */
	F->stall_until_ns = mono_ns() + 200000000ull;
	vgmem_pb_inc(ch, 0, VGMEM_MTHD_NOP, &d, 1);
	assert_int_equal(vgmem_submit(ch, &seq), 0);
	assert_int_equal(vgmem_wait(ch, seq, 1000000), -ETIMEDOUT);
	/* ... and the work goes on: waiting again sees it finish. */
	assert_int_equal(vgmem_wait(ch, seq, 0), 0);

	/* A fault during an endless stall ends the wait: -EIO, no hang. */
	F->stall_until_ns = UINT64_MAX;
	F->fault_at_read = F->reads + 50;
	vgmem_pb_inc(ch, 0, VGMEM_MTHD_NOP, &d, 1);
	assert_int_equal(vgmem_finish(ch), -EIO);
	assert_int_equal(vgmem_chan_error(ch, NULL), VGMEM_CHAN_ERR_VA);
	F->stall_until_ns = 0;
	vgmem_close(dev);
}

static int f_map_fd(void *t, int fd, uint64_t offset, uint64_t length,
		    uint32_t flags, uint64_t *va)
{
	(void)t;
	if (fd != 7 || offset != 65536 || length != 131072 || flags != VGMEM_FILE_RW)
		return -EINVAL;
	*va = 0x123450000ull;
	return 0;
}

/* vgmem_map_fd: the transport's map_fd, or -EOPNOTSUPP without one. */
static void test_map_fd(void **state)
{
	struct vgmem_transport_ops ops = fops;
	struct vgmem_dev *dev;
	uint64_t va = 0;

	(void)state;
	assert_int_equal(vgmem_open(&fops, NULL, &dev), 0);
	assert_int_equal(vgmem_map_fd(dev, 7, 65536, 131072, VGMEM_FILE_RW, &va), -EOPNOTSUPP);
	assert_int_equal(vgmem_map_fd(dev, -1, 0, 65536, VGMEM_FILE_RO, &va), -EBADF);
	assert_int_equal(vgmem_map_fd(NULL, 7, 0, 65536, VGMEM_FILE_RO, &va), -EINVAL);
	assert_int_equal(vgmem_map_fd(dev, 7, 0, 65536, VGMEM_FILE_RO, NULL), -EINVAL);
	vgmem_close(dev);
	ops.map_fd = f_map_fd;
	assert_int_equal(vgmem_open(&ops, NULL, &dev), 0);
	assert_int_equal(vgmem_map_fd(dev, 7, 65536, 131072, VGMEM_FILE_RW, &va), 0);
	assert_int_equal(va, 0x123450000ull);
	assert_int_equal(vgmem_map_fd(dev, 7, 0, 131072, VGMEM_FILE_RW, &va), -EINVAL);
	vgmem_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_binds_classes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_create_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_and_pushbuffer_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segment_too_big, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_read_staged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_is_sticky, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stall_is_not_an_error, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
