// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmig-check SRC DST: VFIO migration (protocol v2) of a vGPU from mdev SRC
 * to mdev DST, this process being both the guest (libvgmem's VFIO
 * transport) and its VMM (the migration ioctls, the data fds). The two
 * devices share one container, so the guest's RAM is the same memory on
 * both: what a VMM moves itself is already in place.
 *
 * The guest has buffer objects in VRAM and in host RAM (the source GPU is
 * short of VRAM), a busy channel and one parked on a semaphore acquire.
 * Checked, in order:
 *  - the device offers STOP_COPY;
 *  - a migration cancelled in STOP and in STOP_COPY leaves the source
 *    running, its data fd dead;
 *  - the data fd is a stream (lseek fails with ESPIPE), and on kernels
 *    that ask (6.2 and later: VFIO_DEVICE_FEATURE_MIG_DATA_SIZE) the size
 *    the device announces, the same running and stopped, is at least the
 *    stream and at most the BOs' bytes and the records' overhead;
 *  - streams that are garbage, cut short or carry another device's config
 *    space are refused on DST, and so is the real stream while DST's quota
 *    is cut below the guest's vGPU (EFBIG, the refusal a VMM reports when
 *    the destination is too small); DST is then in ERROR with nothing of
 *    them in it, and a reset makes it RUNNING and empty again;
 *  - the real stream taken by DST: the guest switches to it, the parked
 *    channel goes on once the semaphore is released, every byte checks
 *    out and new work runs.
 * Prints "ok: ..." per check, "FAIL: ..." and exits 1 at the first failure.
 *
 * vgmig-check --precopy SRC DST (kernels 6.2 and later): the same
 * migration with pre-copy. The device offers PRE_COPY; in it the guest
 * runs on, allocates, frees and writes while the stream is read: a read
 * with nothing new fails with ENOMSG, VFIO_MIG_GET_PRECOPY_INFO counts the
 * first pass down to 0 and the guest's writes up as dirty bytes, the
 * announced stop-copy size is what is left; cancelled in PRE_COPY the
 * source runs on with a dead data fd; the real one's stop phase carries
 * only the one BO written last (plus the channels and the device's
 * state), and on DST every BO holds what the guest last wrote.
 *
 * vgmig-check --bench MIB ROUNDS A B: the stop phase's cost. A guest with
 * MIB MiB of written BOs migrates A -> B -> A ... ROUNDS times; each round
 * times STOP -> STOP_COPY and reading the whole stream (the source's part),
 * writing it and RESUMING -> RUNNING (the destination's), and, side by side,
 * a plain memcpy of the same bytes; the data is checked after the last
 * round. Prints a VMBENCH line with the medians (tests/vm/bench/40-migrate).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/vfio.h>

#include "guest-driver/include/libvgmem.h"
#include "vmcheck.h"

#define MiB		(1ull << 20)
#define RAM		(64 * MiB)
#define BO_A		(12 * MiB)
#define BO_B		(4 * MiB)
#define SEED_A		0xa11ce
#define SEED_B		0xb0b
#define MARK		0x600du
#define PARK_LOOK_NS	(300ull * 1000000)	/* a wait that must not end: how long we look */
/* The DEV record's config space in a stream: header, VM record, DEV head, state head. */
#define DEV_CFG_AT	(32 + 16 + 24 + 16 + 16)

/* Linux 6.2's; Debian 12's <linux/vfio.h> is 6.1's. */
#ifndef VFIO_DEVICE_FEATURE_MIG_DATA_SIZE
#define VFIO_DEVICE_FEATURE_MIG_DATA_SIZE 9
struct vfio_device_feature_mig_data_size {
	__aligned_u64 stop_copy_length;
};
#endif
/*
 * What the announced size may hold beyond the BOs' bytes: the records'
 * heads (32 bytes a BO and a chunk), two channels with their pages and
 * the most state (12 KiB each), the device's state: far less than this.
 */
#define SIZE_SLACK	(1 * MiB)

/* Linux 6.2's pre-copy; Debian 12's <linux/vfio.h> is 6.1's. */
#ifndef VFIO_MIGRATION_PRE_COPY
#define VFIO_MIGRATION_PRE_COPY		(1 << 2)
#define VFIO_DEVICE_STATE_PRE_COPY	6
struct vfio_precopy_info {
	__u32 argsz;
	__u32 flags;
	__aligned_u64 initial_bytes;
	__aligned_u64 dirty_bytes;
};
#define VFIO_MIG_GET_PRECOPY_INFO	_IO(VFIO_TYPE, VFIO_BASE + 21)
#endif

static const char *src_uuid, *dst_uuid;
/* With a share (share 1 of both vGPUs, this directory): a file map too. */
static const char *share_dir;
#define SHARE_ID	1
#define FILE_NAME	"f.bin"
#define FILE_MAP	(128 << 10)
#define FILE_WRITTEN	(64 << 10)
#define SEED_F		0xf11e
static int no_size_err;		/* MIG_DATA_SIZE's errno before 6.2 */

static const char *state_name(uint32_t s)
{
	switch (s) {
	case VFIO_DEVICE_STATE_ERROR: return "ERROR";
	case VFIO_DEVICE_STATE_STOP: return "STOP";
	case VFIO_DEVICE_STATE_RUNNING: return "RUNNING";
	case VFIO_DEVICE_STATE_STOP_COPY: return "STOP_COPY";
	case VFIO_DEVICE_STATE_RESUMING: return "RESUMING";
	case VFIO_DEVICE_STATE_PRE_COPY: return "PRE_COPY";
	}
	return "?";
}

/* VFIO_DEVICE_FEATURE with a payload of len bytes, in and out: 0 or -errno. */
static int feature(int dev, uint32_t flags, void *data, size_t len)
{
	uint64_t buf[(sizeof(struct vfio_device_feature) + 64) / 8];
	struct vfio_device_feature *f = (void *)buf;

	memset(buf, 0, sizeof(buf));
	f->argsz = sizeof(*f) + len;
	f->flags = flags;
	memcpy(f->data, data, len);
	if (ioctl(dev, VFIO_DEVICE_FEATURE, f))
		return -errno;
	memcpy(data, f->data, len);
	return 0;
}

/* MIG_DEVICE_STATE, SET: 0 or -errno; *data_fd if one (else closed). */
static int mig_set(int dev, uint32_t state, int *data_fd)
{
	struct vfio_device_feature_mig_state m = { .device_state = state,
						   .data_fd = -1 };
	int ret = feature(dev, VFIO_DEVICE_FEATURE_SET |
			  VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE, &m, sizeof(m));

	if (ret)
		return ret;
	if (data_fd)
		*data_fd = m.data_fd;
	else if (m.data_fd >= 0)
		close(m.data_fd);
	return 0;
}

static uint32_t mig_get(int dev)
{
	struct vfio_device_feature_mig_state m = { .data_fd = -1 };
	int ret = feature(dev, VFIO_DEVICE_FEATURE_GET |
			  VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE, &m, sizeof(m));

	if (ret)
		fail("getting the migration state: %s", strerror(-ret));
	return m.device_state;
}

/* Running 6.2 or later, whose VFIO core asks the device for the data size. */
static int kernel_has_data_size(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		fail("uname: cannot read the kernel's version");
	return major > 6 || (major == 6 && minor >= 2);
}

/* MIG_DATA_SIZE, GET: the size, or 0 on a kernel without it (checked). */
static uint64_t data_size(int dev, const char *when)
{
	struct vfio_device_feature_mig_data_size sz = { 0 };
	int ret = feature(dev, VFIO_DEVICE_FEATURE_GET |
			  VFIO_DEVICE_FEATURE_MIG_DATA_SIZE, &sz, sizeof(sz));

	if (!kernel_has_data_size()) {
		/* Before 6.2 the VFIO core knows no such feature. */
		if (ret != -EINVAL && ret != -ENOTTY)
			fail("MIG_DATA_SIZE %s on a kernel without it: %s", when,
			     ret ? strerror(-ret) : "answered");
		no_size_err = -ret;
		return 0;
	}
	if (ret)
		fail("MIG_DATA_SIZE %s: %s", when, strerror(-ret));
	if (!sz.stop_copy_length)
		fail("MIG_DATA_SIZE %s: 0 bytes", when);
	return sz.stop_copy_length;
}

static void expect_state(int dev, uint32_t want, const char *what)
{
	uint32_t s = mig_get(dev);

	if (s != want)
		fail("%s: device state %s, expected %s", what, state_name(s),
		     state_name(want));
}

static void set_or_die(int dev, uint32_t state, int *data_fd, const char *what)
{
	int ret = mig_set(dev, state, data_fd);

	if (ret)
		fail("%s: to %s: %s", what, state_name(state), strerror(-ret));
	if (data_fd && *data_fd < 0)
		fail("%s: to %s gave no data fd", what, state_name(state));
}

/* The whole stream of a data fd, to its end (read returns 0). */
static uint8_t *read_stream(int fd, size_t *lenp)
{
	size_t cap = 64 * MiB, len = 0;
	uint8_t *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		fail("no memory for the stream");
	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				fail("no memory for the stream");
		}
		/* Odd sizes: the device serves any. */
		n = read(fd, buf + len, (cap - len) < 1000003 ? cap - len : 1000003);
		if (n < 0)
			fail("reading the source's stream at %zu: %s", len, strerror(errno));
		if (!n)
			break;
		len += (size_t)n;
	}
	*lenp = len;
	return buf;
}

/* Write buf into a RESUMING data fd: 0 or the first -errno. */
static int write_stream(int fd, const uint8_t *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		n = write(fd, buf + off, (len - off) < 777777 ? len - off : 777777);
		if (n < 0)
			return -errno;
		if (!n)
			return -EIO;
		off += (size_t)n;
	}
	return 0;
}

static uint64_t mdev_attr(const char *uuid, const char *name)
{
	char path[256], buf[64];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/vgmem/%s", uuid, name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		fail("reading %s", path);
	fclose(f);
	return strtoull(buf, NULL, 0);
}

static void mdev_set_attr(const char *uuid, const char *name, uint64_t val)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/vgmem/%s", uuid, name);
	f = fopen(path, "w");
	if (!f)
		fail("opening %s: %s", path, strerror(errno));
	if (fprintf(f, "%" PRIu64 "\n", val) < 0 || fclose(f))
		fail("writing %" PRIu64 " to %s: %s", val, path, strerror(errno));
}

static void check_sum(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
		      uint32_t seed, uint64_t scratch, const char *what)
{
	uint64_t sum;
	int ret = vgmem_checksum(ch, va, bytes, scratch, &sum);

	if (ret)
		fail("%s: checksum: %s", what, strerror(-ret));
	if (sum != vgmem_pattern_checksum(bytes, seed))
		fail("%s: checksum %#" PRIx64 ", expected %#" PRIx64, what, sum,
		     vgmem_pattern_checksum(bytes, seed));
}

/*
 * A stream DST must refuse with err: written (the write may fail first),
 * then RESUMING -> STOP fails and leaves ERROR; a reset makes it RUNNING,
 * and nothing of the stream is in it.
 */
static void refused(int dst, const uint8_t *buf, size_t len, int err,
		    const char *what)
{
	int fd, ret;

	set_or_die(dst, VFIO_DEVICE_STATE_RESUMING, &fd, what);
	ret = write_stream(fd, buf, len);
	if (ret && ret != err)
		fail("%s: write failed with %s, expected %s", what, strerror(-ret),
		     strerror(-err));
	ret = mig_set(dst, VFIO_DEVICE_STATE_STOP, NULL);
	if (ret != err)
		fail("%s: RESUMING -> STOP: %s, expected %s", what,
		     ret ? strerror(-ret) : "success", strerror(-err));
	expect_state(dst, VFIO_DEVICE_STATE_ERROR, what);
	/* The data fd died with the arc. */
	if (write(fd, buf, 16) >= 0 || errno != ENODEV)
		fail("%s: the data fd still takes writes", what);
	close(fd);
	if (mdev_attr(dst_uuid, "allocated"))
		fail("%s: %" PRIu64 " bytes left on the destination", what,
		     mdev_attr(dst_uuid, "allocated"));
	if (ioctl(dst, VFIO_DEVICE_RESET))
		fail("%s: reset: %s", what, strerror(errno));
	expect_state(dst, VFIO_DEVICE_STATE_RUNNING, what);
	ok("%s: refused (%s), destination empty, RUNNING after a reset", what,
	   strerror(-err));
}

/* ---- pre-copy (--precopy) ------------------------------------------------ */

struct sbuf {
	uint8_t *b;
	size_t len, cap;
};

static void sbuf_room(struct sbuf *sb, size_t more)
{
	while (sb->cap - sb->len < more) {
		sb->cap = sb->cap ? sb->cap * 2 : 64 * MiB;
		sb->b = realloc(sb->b, sb->cap);
		if (!sb->b)
			fail("no memory for the stream");
	}
}

/* Read a PRE_COPY data fd until it has nothing for now (ENOMSG). */
static size_t drain(int fd, struct sbuf *sb, const char *what)
{
	size_t before = sb->len;
	ssize_t n;

	for (;;) {
		sbuf_room(sb, 1000003);
		n = read(fd, sb->b + sb->len, 1000003);
		if (n < 0 && errno == ENOMSG)
			break;
		if (n < 0)
			fail("%s: reading the pre-copy at %zu: %s", what, sb->len,
			     strerror(errno));
		if (!n)
			fail("%s: the pre-copy's stream ended in PRE_COPY", what);
		sb->len += (size_t)n;
	}
	return sb->len - before;
}

static void precopy_info(int fd, uint64_t *initial, uint64_t *dirty)
{
	struct vfio_precopy_info info = { .argsz = sizeof(info) };

	if (ioctl(fd, VFIO_MIG_GET_PRECOPY_INFO, &info))
		fail("VFIO_MIG_GET_PRECOPY_INFO: %s", strerror(errno));
	*initial = info.initial_bytes;
	*dirty = info.dirty_bytes;
}

static uint64_t vm_allocated(struct vgmem_dev *dev)
{
	struct vgmem_vm_stats st;

	if (vgmem_stats(dev, &st))
		fail("stats");
	return st.allocated;
}

static int precopy(void)
{
	struct vfio_device_feature_migration m = { 0 };
	struct vgmem_dev *dev;
	struct vgmem_chan *w;
	struct vgmem_vm_stats st;
	uint64_t va_a, va_b, va_c, va_d, va_x, va_s, ini, dirty, size;
	uint64_t allocated, first, again;
	struct sbuf sb = { 0 };
	size_t stop_at;
	uint8_t *tail;
	size_t tail_len;
	int src, dst, fd, ret;

	if (vgmem_open_vfio(src_uuid, RAM, &dev))
		fail("opening %s: %s", src_uuid, vgmem_vfio_error());
	src = vgmem_vfio_device_fd(dev, NULL, NULL);
	ret = feature(src, VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_MIGRATION,
		      &m, sizeof(m));
	if (ret)
		fail("VFIO_DEVICE_FEATURE_MIGRATION: %s", strerror(-ret));
	if (!kernel_has_data_size()) {
		/* Before 6.2 there is no pre-copy to offer. */
		if (m.flags & VFIO_MIGRATION_PRE_COPY)
			fail("PRE_COPY offered on a kernel without it");
		ok("no pre-copy before 6.2 (flags %#llx)", (unsigned long long)m.flags);
		vgmem_close_vfio(dev);
		printf("vgmig-check: all passed\n");
		return 0;
	}
	if (!(m.flags & VFIO_MIGRATION_PRE_COPY))
		fail("migration flags %#llx lack PRE_COPY", (unsigned long long)m.flags);
	ok("the vGPU offers pre-copy (flags %#llx)", (unsigned long long)m.flags);

	/* The guest: BOs in VRAM and host RAM; X goes, D is written last. */
	if (vgmem_chan_create(dev, 64, 0, 0, &w))
		fail("channel: %s", vgmem_vfio_error());
	if (vgmem_bo_alloc(dev, BO_A, &va_a) || vgmem_bo_alloc(dev, BO_B, &va_b) ||
	    vgmem_bo_alloc(dev, 64 << 10, &va_x) ||
	    vgmem_bo_alloc(dev, 64 << 10, &va_d) ||
	    vgmem_bo_alloc(dev, 64 << 10, &va_s))
		fail("BOs: %s", vgmem_vfio_error());
	if (vgmem_fill_pattern(w, va_a, BO_A, SEED_A) ||
	    vgmem_fill_pattern(w, va_b, BO_B, SEED_B) ||
	    vgmem_fill_pattern(w, va_x, 64 << 10, 0x11) ||
	    vgmem_fill_pattern(w, va_d, 64 << 10, 0xd1))
		fail("filling the BOs");
	if (vgmem_stats(dev, &st) || !st.relocated)
		fail("nothing in host RAM: the test needs both");
	ok("guest: %" PRIu64 " bytes of BOs, %" PRIu64 " of them in host RAM",
	   (uint64_t)st.allocated, (uint64_t)st.relocated);

	/* Cancelled in PRE_COPY: the source runs on, writable. */
	set_or_die(src, VFIO_DEVICE_STATE_PRE_COPY, &fd, "cancel in PRE_COPY");
	first = drain(fd, &sb, "cancel in PRE_COPY");
	set_or_die(src, VFIO_DEVICE_STATE_RUNNING, NULL, "cancel in PRE_COPY");
	if (read(fd, sb.b, 16) >= 0 || errno != ENODEV)
		fail("cancel in PRE_COPY: the data fd still reads");
	close(fd);
	if (vgmem_fill_pattern(w, va_x, 64 << 10, 0x12))
		fail("writing after a cancel in PRE_COPY");
	check_sum(w, va_x, 64 << 10, 0x12, va_s, "after a cancel in PRE_COPY");
	ok("cancelled in PRE_COPY after %" PRIu64 " bytes: the source runs on, its"
	   " data fd is dead", first);
	sb.len = 0;

	/* The first pass, with the guest running. */
	set_or_die(src, VFIO_DEVICE_STATE_PRE_COPY, &fd, "pre-copy");
	expect_state(src, VFIO_DEVICE_STATE_PRE_COPY, "pre-copy");
	precopy_info(fd, &ini, &dirty);
	allocated = vm_allocated(dev);
	if (ini < BO_A + BO_B)
		fail("PRECOPY_INFO: %" PRIu64 " initial bytes for %" PRIu64
		     " bytes of BOs", ini, allocated);
	first = drain(fd, &sb, "the first pass");
	precopy_info(fd, &ini, &dirty);
	if (ini || dirty)
		fail("after the first pass: %" PRIu64 " initial, %" PRIu64 " dirty bytes",
		     ini, dirty);
	size = data_size(src, "after the first pass");
	if (size >= BO_B)
		fail("MIG_DATA_SIZE after the first pass: %" PRIu64 " bytes", size);
	if (read(fd, sb.b + sb.len, 4096) >= 0 || errno != ENOMSG)
		fail("a read with nothing new did not fail with ENOMSG");
	ok("first pass: %" PRIu64 " bytes, then ENOMSG; PRECOPY_INFO 0/0; the stop"
	   " would take %" PRIu64 " bytes", first, size);

	/* The guest works meanwhile: rewrites B, frees X, makes C. */
	if (vgmem_fill_pattern(w, va_b, BO_B, SEED_B + 1) ||
	    vgmem_bo_free(dev, va_x) || vgmem_bo_alloc(dev, 2 * MiB, &va_c) ||
	    vgmem_fill_pattern(w, va_c, 2 * MiB, 0xc))
		fail("the guest's work in PRE_COPY: %s", vgmem_vfio_error());
	precopy_info(fd, &ini, &dirty);
	size = data_size(src, "with B dirty");
	if (ini || dirty < BO_B || size < BO_B)
		fail("with B written: %" PRIu64 " initial, %" PRIu64 " dirty bytes, the"
		     " stop %" PRIu64, ini, dirty, size);
	again = drain(fd, &sb, "the second pass");
	if (again < BO_B + 2 * MiB)
		fail("the second pass sent %" PRIu64 " bytes", again);
	precopy_info(fd, &ini, &dirty);
	if (dirty)
		fail("after the second pass: %" PRIu64 " dirty bytes", dirty);
	ok("the guest wrote B, freed X and made C: %" PRIu64 " dirty bytes sent", again);

	/* The last write, then the stop: only D is left to send. */
	if (vgmem_fill_pattern(w, va_d, 64 << 10, 0xd2))
		fail("writing D");
	allocated = vm_allocated(dev);
	set_or_die(src, VFIO_DEVICE_STATE_STOP_COPY, NULL, "source");
	{
		struct vfio_precopy_info info = { .argsz = sizeof(info) };

		if (!ioctl(fd, VFIO_MIG_GET_PRECOPY_INFO, &info) || errno != EINVAL)
			fail("PRECOPY_INFO in STOP_COPY did not fail with EINVAL");
	}
	stop_at = sb.len;
	tail = read_stream(fd, &tail_len);
	sbuf_room(&sb, tail_len);
	memcpy(sb.b + sb.len, tail, tail_len);
	sb.len += tail_len;
	free(tail);
	close(fd);
	set_or_die(src, VFIO_DEVICE_STATE_STOP, NULL, "source");
	if (tail_len < (64 << 10) || tail_len > (128 << 10))
		fail("the stop phase sent %zu bytes for one dirty 64 KiB BO", tail_len);
	ok("stop phase: %zu bytes of a %zu-byte stream (the 64 KiB written last,"
	   " the channel, the device)", sb.len - stop_at, sb.len);

	dst = vgmem_vfio_open_peer(dev, dst_uuid);
	if (dst < 0)
		fail("opening %s: %s", dst_uuid, vgmem_vfio_error());
	set_or_die(dst, VFIO_DEVICE_STATE_RESUMING, &fd, "destination");
	ret = write_stream(fd, sb.b, sb.len);
	if (ret)
		fail("destination: writing the stream: %s (see dmesg)", strerror(-ret));
	set_or_die(dst, VFIO_DEVICE_STATE_RUNNING, NULL, "destination");
	close(fd);
	free(sb.b);
	if (mdev_attr(dst_uuid, "allocated") != allocated)
		fail("destination holds %" PRIu64 " bytes, the source had %" PRIu64,
		     mdev_attr(dst_uuid, "allocated"), allocated);
	if (vgmem_vfio_switch_device(dev, dst))
		fail("switching the guest to the destination: %s", vgmem_vfio_error());
	check_sum(w, va_a, BO_A, SEED_A, va_s, "A on the destination");
	check_sum(w, va_b, BO_B, SEED_B + 1, va_s, "B on the destination");
	check_sum(w, va_c, 2 * MiB, 0xc, va_s, "C on the destination");
	check_sum(w, va_d, 64 << 10, 0xd2, va_s, "D on the destination");
	if (vgmem_fill_pattern(w, va_a, BO_A, 0x77))
		fail("new work on the destination");
	check_sum(w, va_a, BO_A, 0x77, va_s, "new work on the destination");
	ok("destination: the guest's %" PRIu64 " bytes as it last wrote them, and"
	   " it works on", allocated);
	vgmem_chan_destroy(w);
	vgmem_close_vfio(dev);
	printf("vgmig-check: all passed\n");
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_ms(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return (n % 2 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0) / 1e6;
}

static int bench(uint64_t mib, int rounds, const char *a, const char *b)
{
	uint64_t *t_save = calloc((size_t)rounds, sizeof(uint64_t));
	uint64_t *t_load = calloc((size_t)rounds, sizeof(uint64_t));
	uint64_t *t_copy = calloc((size_t)rounds, sizeof(uint64_t));
	uint64_t bytes = mib * MiB, va, va_x, t0;
	const char *uuid[2] = { a, b };
	struct vgmem_dev *dev;
	struct vgmem_chan *w;
	uint8_t *stream = NULL, *copy;
	size_t len = 0;
	int r, src, dst, fd, ret;

	if (!t_save || !t_load || !t_copy || !mib || rounds < 1)
		fail("bench: bad arguments or no memory");
	if (vgmem_open_vfio(a, RAM, &dev))
		fail("opening %s: %s", a, vgmem_vfio_error());
	if (vgmem_chan_create(dev, 64, 0, 0, &w) ||
	    vgmem_bo_alloc(dev, bytes, &va) || vgmem_bo_alloc(dev, 64 << 10, &va_x) ||
	    vgmem_fill_pattern(w, va, bytes, SEED_A))
		fail("bench: the guest's %" PRIu64 " MiB: %s", mib, vgmem_vfio_error());
	for (r = 0; r < rounds; r++) {
		src = vgmem_vfio_device_fd(dev, NULL, NULL);
		dst = vgmem_vfio_open_peer(dev, uuid[(r + 1) % 2]);
		if (dst < 0)
			fail("bench: opening %s: %s", uuid[(r + 1) % 2], vgmem_vfio_error());
		t0 = now_ns();
		set_or_die(src, VFIO_DEVICE_STATE_STOP_COPY, &fd, "bench source");
		free(stream);
		stream = read_stream(fd, &len);
		close(fd);
		t_save[r] = now_ns() - t0;
		t0 = now_ns();
		set_or_die(dst, VFIO_DEVICE_STATE_RESUMING, &fd, "bench destination");
		ret = write_stream(fd, stream, len);
		if (ret)
			fail("bench: writing the stream: %s", strerror(-ret));
		set_or_die(dst, VFIO_DEVICE_STATE_RUNNING, NULL, "bench destination");
		close(fd);
		t_load[r] = now_ns() - t0;
		/* The baseline, now, beside it: the same bytes copied once. */
		copy = malloc(len);
		if (!copy)
			fail("no memory");
		t0 = now_ns();
		memcpy(copy, stream, len);
		t_copy[r] = now_ns() - t0;
		if (copy[len / 2] != stream[len / 2])
			fail("memcpy");
		free(copy);
		set_or_die(src, VFIO_DEVICE_STATE_STOP, NULL, "bench source");
		if (vgmem_vfio_switch_device(dev, dst))
			fail("bench: switching: %s", vgmem_vfio_error());
	}
	check_sum(w, va, bytes, SEED_A, va_x, "bench: the guest's data after the last round");
	printf("VMBENCH migrate stop phase (median of %d rounds) for %" PRIu64 " MiB of BOs, a %zu-byte stream: source %.1f ms, destination %.1f ms, memcpy of the stream %.1f ms; RATIO (source + destination) / memcpy %.1f\n",
	       rounds, mib, len, median_ms(t_save, rounds), median_ms(t_load, rounds),
	       median_ms(t_copy, rounds),
	       (median_ms(t_save, rounds) + median_ms(t_load, rounds)) /
	       median_ms(t_copy, rounds));
	free(stream);
	vgmem_chan_destroy(w);
	vgmem_close_vfio(dev);
	free(t_save);
	free(t_load);
	free(t_copy);
	return 0;
}

/*
 * The stream has one FMAP record (type 7) naming the file, and the file
 * holds what the guest wrote: the source synced it before the record.
 */
static void check_file_synced(const uint8_t *b, size_t len)
{
	char path[512];
	uint8_t *f = malloc(FILE_WRITTEN);
	size_t off = 32;
	int fd, n = 0;
	uint32_t i;

	while (off + 16 <= len) {
		uint32_t type;
		uint64_t l;

		memcpy(&type, b + off, 4);
		memcpy(&l, b + off + 8, 8);
		if (type == 7) {
			if (l != 40 + strlen(FILE_NAME) ||
			    memcmp(b + off + 16 + 40, FILE_NAME, strlen(FILE_NAME)))
				fail("the FMAP record does not name %s", FILE_NAME);
			n++;
		}
		off += 16 + l;
	}
	if (n != 1)
		fail("%d FMAP records in the stream, not 1", n);
	snprintf(path, sizeof(path), "%s/%s", share_dir, FILE_NAME);
	fd = open(path, O_RDONLY);
	if (!f || fd < 0 || read(fd, f, FILE_WRITTEN) != FILE_WRITTEN)
		fail("reading %s: %s", path, strerror(errno));
	close(fd);
	for (i = 0; i < FILE_WRITTEN / 4; i++) {
		uint32_t v;

		memcpy(&v, f + 4 * i, 4);
		if (v != vgmem_pattern_word(SEED_F, i))
			fail("%s: word %u is %#x, the guest wrote %#x (not synced)",
			     path, i, v, vgmem_pattern_word(SEED_F, i));
	}
	free(f);
	ok("the stream carries the file map; %s holds the guest's unreleased writes", path);
}

int main(int argc, char **argv)
{
	struct vgmem_dev *dev;
	struct vgmem_chan *w, *p;
	struct vgmem_vm_stats st;
	uint64_t va_a, va_b, va_s, va_x, seq_p, allocated, size_run, size_stop;
	uint64_t va_f = 0;
	uint32_t d[4], one = 1, mark;
	uint8_t *stream, *bad;
	size_t len;
	int src, dst, fd, ret;

	if (argc == 6 && !strcmp(argv[1], "--bench"))
		return bench(strtoull(argv[2], NULL, 10), atoi(argv[3]), argv[4], argv[5]);
	if (argc == 4 && !strcmp(argv[1], "--precopy")) {
		src_uuid = argv[2];
		dst_uuid = argv[3];
		setvbuf(stdout, NULL, _IOLBF, 0);
		return precopy();
	}
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: vgmig-check SRC-UUID DST-UUID [SHARE-DIR]\n"
			"       vgmig-check --precopy SRC-UUID DST-UUID\n"
			"       vgmig-check --bench MIB ROUNDS A-UUID B-UUID\n");
		return 2;
	}
	share_dir = argc == 4 ? argv[3] : NULL;
	src_uuid = argv[1];
	dst_uuid = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (vgmem_open_vfio(src_uuid, RAM, &dev))
		fail("opening %s: %s", src_uuid, vgmem_vfio_error());
	src = vgmem_vfio_device_fd(dev, NULL, NULL);
	{
		struct vfio_device_feature_migration m = { 0 };

		ret = feature(src, VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_MIGRATION,
			      &m, sizeof(m));
		if (ret)
			fail("VFIO_DEVICE_FEATURE_MIGRATION: %s", strerror(-ret));
		if (!(m.flags & VFIO_MIGRATION_STOP_COPY))
			fail("migration flags %#llx lack STOP_COPY",
			     (unsigned long long)m.flags);
		ok("the vGPU offers migration (flags %#llx)", (unsigned long long)m.flags);
	}
	expect_state(src, VFIO_DEVICE_STATE_RUNNING, "after open");

	/* The guest: BOs in VRAM and host RAM, one channel parked. */
	if (vgmem_chan_create(dev, 64, 0, 0, &w) ||
	    vgmem_chan_create(dev, 16, 0, 64 << 10, &p))
		fail("channels: %s", vgmem_vfio_error());
	if (vgmem_bo_alloc(dev, BO_A, &va_a) || vgmem_bo_alloc(dev, BO_B, &va_b) ||
	    vgmem_bo_alloc(dev, 64 << 10, &va_s) || vgmem_bo_alloc(dev, 64 << 10, &va_x))
		fail("BOs: %s", vgmem_vfio_error());
	if (vgmem_fill_pattern(w, va_a, BO_A, SEED_A) ||
	    vgmem_fill_pattern(w, va_b, BO_B, SEED_B))
		fail("filling the BOs");
	if (vgmem_stats(dev, &st))
		fail("stats");
	if (!st.relocated)
		fail("nothing of %" PRIu64 " bytes is in host RAM: the test needs both",
		     (uint64_t)st.allocated);
	allocated = st.allocated;
	if (share_dir) {
		if (vgmem_map_file(dev, SHARE_ID, FILE_NAME, 0, FILE_MAP,
				   VGMEM_FILE_RW, &va_f))
			fail("mapping %s of share %u: %s", FILE_NAME, SHARE_ID,
			     vgmem_vfio_error());
		/* Written and not released: the migration syncs it itself. */
		if (vgmem_fill_pattern(w, va_f, FILE_WRITTEN, SEED_F))
			fail("writing the file map");
		ok("guest: %s of share %u mapped at %#" PRIx64 ", %u KiB of it written",
		   FILE_NAME, SHARE_ID, va_f, FILE_WRITTEN >> 10);
	}
	ok("guest: %" PRIu64 " bytes of BOs, %" PRIu64 " of them in host RAM",
	   (uint64_t)st.allocated, (uint64_t)st.relocated);
	/* Parked: acquire *S == 1, then release S+4 = MARK. */
	d[0] = (uint32_t)(va_s >> 32);
	d[1] = (uint32_t)va_s;
	d[2] = 1;
	d[3] = VGMEM_SEM_OP_ACQUIRE;
	vgmem_pb_inc(p, 0, VGMEM_MTHD_SEMAPHORE_A, d, 4);
	d[0] = (uint32_t)((va_s + 4) >> 32);
	d[1] = (uint32_t)(va_s + 4);
	d[2] = MARK;
	d[3] = VGMEM_SEM_OP_RELEASE;
	vgmem_pb_inc(p, 0, VGMEM_MTHD_SEMAPHORE_A, d, 4);
	if (vgmem_submit(p, &seq_p))
		fail("submitting the parked channel's work");
	if (vgmem_wait(p, seq_p, PARK_LOOK_NS) != -ETIMEDOUT)
		fail("the acquire of a semaphore nobody released went through");
	ok("one channel parked on a semaphore acquire");

	/* Cancelled in STOP and in STOP_COPY: the source runs on. */
	set_or_die(src, VFIO_DEVICE_STATE_STOP, NULL, "cancel in STOP");
	set_or_die(src, VFIO_DEVICE_STATE_RUNNING, NULL, "cancel in STOP");
	check_sum(w, va_b, BO_B, SEED_B, va_x, "after a cancel in STOP");
	set_or_die(src, VFIO_DEVICE_STATE_STOP_COPY, &fd, "cancel in STOP_COPY");
	{
		static uint8_t part[65536];

		if (read(fd, part, sizeof(part)) != (ssize_t)sizeof(part))
			fail("cancel in STOP_COPY: reading the stream: %s", strerror(errno));
		set_or_die(src, VFIO_DEVICE_STATE_RUNNING, NULL, "cancel in STOP_COPY");
		if (read(fd, part, sizeof(part)) >= 0 || errno != ENODEV)
			fail("cancel in STOP_COPY: the data fd still reads");
		close(fd);
	}
	check_sum(w, va_a, BO_A, SEED_A, va_x, "after a cancel in STOP_COPY");
	ok("cancelled in STOP and in STOP_COPY: the source runs on, its data fd is dead");

	/* The stop-and-copy. */
	dst = vgmem_vfio_open_peer(dev, dst_uuid);
	if (dst < 0)
		fail("opening %s: %s", dst_uuid, vgmem_vfio_error());
	size_run = data_size(src, "running");
	set_or_die(src, VFIO_DEVICE_STATE_STOP, NULL, "source");
	size_stop = data_size(src, "stopped");
	set_or_die(src, VFIO_DEVICE_STATE_STOP_COPY, &fd, "source");
	if (lseek(fd, 0, SEEK_SET) != -1)
		fail("lseek on the data fd worked: it is no stream");
	if (errno != ESPIPE)
		fail("lseek on the data fd: %s, not ESPIPE", strerror(errno));
	stream = read_stream(fd, &len);
	close(fd);
	set_or_die(src, VFIO_DEVICE_STATE_STOP, NULL, "source");
	ok("source: a stream of %zu bytes for %" PRIu64 " bytes of BOs", len, allocated);
	if (share_dir)
		check_file_synced(stream, len);
	if (!kernel_has_data_size()) {
		ok("no MIG_DATA_SIZE on this kernel (before 6.2): %s", strerror(no_size_err));
	} else if (size_run != size_stop || size_stop < len || size_stop < allocated ||
		   size_stop - allocated > SIZE_SLACK) {
		fail("MIG_DATA_SIZE: %" PRIu64 " bytes running, %" PRIu64 " stopped, for a"
		     " stream of %zu and %" PRIu64 " bytes of BOs", size_run, size_stop,
		     len, allocated);
	} else {
		ok("MIG_DATA_SIZE: %" PRIu64 " bytes, running and stopped (the stream"
		   " took %zu)", size_stop, len);
	}

	/* Hostile streams first: each refused, the destination untouched. */
	bad = malloc(len);
	if (!bad)
		fail("no memory");
	memset(bad, 0x5a, 4096);
	refused(dst, bad, 4096, -EBADMSG, "garbage");
	refused(dst, stream, len / 2, -EBADMSG, "a stream cut in half");
	memcpy(bad, stream, len);
	bad[DEV_CFG_AT] ^= 0xff;	/* the vendor id */
	refused(dst, bad, len, -EBADMSG, "another device's config space");
	free(bad);
	/*
	 * A destination whose quota is below the guest's vGPU (and below what
	 * it holds) would fail allocations the guest was promised: refused
	 * with EFBIG, as a VMM reports it, and nothing of it loaded.
	 */
	{
		uint64_t quota = mdev_attr(dst_uuid, "quota");

		mdev_set_attr(dst_uuid, "quota", 2 * MiB);
		refused(dst, stream, len, -EFBIG, "a vGPU over this vGPU's quota");
		mdev_set_attr(dst_uuid, "quota", quota);
		if (mdev_attr(dst_uuid, "quota") != quota)
			fail("restoring %s's quota of %" PRIu64 " bytes", dst_uuid, quota);
	}

	/* The real one. */
	set_or_die(dst, VFIO_DEVICE_STATE_RESUMING, &fd, "destination");
	ret = write_stream(fd, stream, len);
	if (ret)
		fail("destination: writing the stream: %s (see dmesg)", strerror(-ret));
	set_or_die(dst, VFIO_DEVICE_STATE_RUNNING, NULL, "destination");
	close(fd);
	free(stream);
	if (mdev_attr(dst_uuid, "allocated") != allocated)
		fail("destination holds %" PRIu64 " bytes, the source had %" PRIu64,
		     mdev_attr(dst_uuid, "allocated"), allocated);
	ok("destination: loaded and RUNNING with the source's %" PRIu64 " bytes", allocated);
	ret = vgmem_vfio_switch_device(dev, dst);
	if (ret)
		fail("switching the guest to the destination: %s", vgmem_vfio_error());
	ok("the guest runs on %s", dst_uuid);

	/* Everything goes on there. */
	if (vgmem_write(w, va_s, &one, sizeof(one)))
		fail("releasing the semaphore on the destination");
	ret = vgmem_wait(p, seq_p, 0);
	if (ret)
		fail("the parked channel: %s (error %u)", strerror(-ret),
		     vgmem_chan_error(p, NULL));
	if (vgmem_read(w, va_s + 4, &mark, sizeof(mark)) || mark != MARK)
		fail("the parked channel's release wrote %#x, not %#x", mark, MARK);
	ok("the parked channel went on once its semaphore was released");
	check_sum(w, va_a, BO_A, SEED_A, va_x, "BO A on the destination");
	check_sum(w, va_b, BO_B, SEED_B, va_x, "BO B on the destination");
	ok("every byte of %" PRIu64 " checks out", (uint64_t)(BO_A + BO_B));
	if (share_dir) {
		check_sum(w, va_f, FILE_WRITTEN, SEED_F, va_x, "the file map on the destination");
		ok("the file map is at %#" PRIx64 " on the destination with the guest's bytes",
		   va_f);
	}
	{
		uint64_t va_c;

		if (vgmem_bo_alloc(dev, 2 * MiB, &va_c) ||
		    vgmem_fill_pattern(w, va_c, 2 * MiB, 7))
			fail("new work on the destination: %s", vgmem_vfio_error());
		check_sum(w, va_c, 2 * MiB, 7, va_x, "a new BO on the destination");
	}
	ok("new work runs on the destination");
	vgmem_chan_destroy(p);
	vgmem_chan_destroy(w);
	vgmem_close_vfio(dev);
	printf("vgmig-check: all passed\n");
	return 0;
}
