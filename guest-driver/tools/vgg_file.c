// SPDX-License-Identifier: MIT
/*
 * vgmem-guest file: share files through the LRC file cache
 * (docs/vgmem-guest.md, docs/files.md), so the VM tests can drive the cache
 * end to end from inside a guest:
 *
 *   read   map RO, acquire, GPU checksum (FNV-1a) of the range, compare
 *   write  map RW, acquire, FILL_PATTERN over all or one half of each row,
 *          check it on the GPU, release, sync (--hold-after: then keep
 *          the map until SIGTERM/SIGINT, for kill -9 while mapped)
 *   hold   map and wait for signals: SIGUSR1 checks without acquiring,
 *          SIGUSR2 acquires and checks, SIGTERM/SIGINT (or --hold) ends
 *   sync   map RO and FILE_SYNC the range (msync from a bystander)
 *
 * Row r of a pattern is VGMEM_K_FILL_PATTERN with seed SEED + r, written
 * from the start of the row (or of its half): the same rule computes the
 * expected checksum on the CPU, so a test knows the exact final file.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "vgg.h"

#define CHAN_ENTRIES	64
#define SCRATCH		4096ull
#define POLL_NS		10000000ull	/* signal flags are polled every 10 ms */

static const char *const kind_names[VGG_F_NR] = {
	[VGG_F_READ] = "read",
	[VGG_F_WRITE] = "write",
	[VGG_F_HOLD] = "hold",
	[VGG_F_SYNC] = "sync",
};

int vgg_file_kind(const char *name)
{
	int i;

	for (i = 0; i < VGG_F_NR; i++)
		if (!strcmp(kind_names[i], name))
			return i;
	return -1;
}

const char *vgg_file_kind_name(int kind)
{
	return kind >= 0 && kind < VGG_F_NR ? kind_names[kind] : "unknown";
}

/* The FILE_* errors of docs/abi.md, named and explained for a tester. */
static const struct {
	int err;
	const char *name;
	const char *meaning;
} file_errs[] = {
	{ EINVAL, "EINVAL", "bad argument: offset/length not a multiple of 64 KiB, zero length, range past the map's end, bad flags, or the path is not a regular file" },
	{ ENAMETOOLONG, "ENAMETOOLONG", "path of 384 bytes or more" },
	{ ENOENT, "ENOENT", "no such share of this VM, or no such file in it" },
	{ EACCES, "EACCES", "the path is absolute, leaves the share by '..' or meets a symlink, or RW on a read-only file or share" },
	{ EFBIG, "EFBIG", "offset + length beyond the file's size rounded up to 64 KiB, or length above 64 GiB" },
	{ ENOSPC, "ENOSPC", "no free GPU VA range for the map" },
	{ ENOMEM, "ENOMEM", "out of memory, or 4096 file maps already" },
	{ EBADF, "EBADF", "the VA is in no file map" },
	{ EIO, "EIO", "writing the file failed, or a channel error" },
	{ ETIMEDOUT, "ETIMEDOUT", "the control command did not complete" },
	{ EOPNOTSUPP, "EOPNOTSUPP", "the host has no file cache for this VM (paging model)" },
	{ EILSEQ, "EILSEQ", "the checksum differs from the expected one" },
};

const char *vgg_file_errname(int err)
{
	size_t i;

	for (i = 0; i < sizeof(file_errs) / sizeof(file_errs[0]); i++)
		if (file_errs[i].err == -err)
			return file_errs[i].name;
	return "?";
}

const char *vgg_file_errmeaning(int err)
{
	size_t i;

	for (i = 0; i < sizeof(file_errs) / sizeof(file_errs[0]); i++)
		if (file_errs[i].err == -err)
			return file_errs[i].meaning;
	return strerror(-err);
}

int vgg_file_errno(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(file_errs) / sizeof(file_errs[0]); i++)
		if (!strcmp(file_errs[i].name, name))
			return file_errs[i].err;
	return 0;
}

/* One open file map and what goes with it. */
struct fmap {
	struct vgg_ctx *c;
	struct vgmem_chan *ch;
	uint64_t scratch;	/* checksum results */
	uint64_t va;
	bool mapped;
	uint64_t got, want;	/* the last compared checksum */
};

/* The RESULT details for a failed step: step, errno name, meaning. */
static int fail(struct vgg_ctx *c, struct fmap *m, const char *step, int ret)
{
	uint64_t addr = 0;
	uint32_t e = m && m->ch ? vgmem_chan_error(m->ch, &addr) : 0;

	vgg_log(c, "error file-%s %d %s", step, ret, vgg_file_errname(ret));
	if (c->pci)
		vgg_log(c, "error pci %s", vgmem_pci_error());
	if (ret == -EILSEQ && m)
		return vgg_detail(c, VGG_FAIL, "file %s %s: %s: %d EILSEQ fnv=%016llx expected=%016llx",
				  vgg_file_kind_name(c->o->kind), c->o->path, step, ret,
				  (unsigned long long)m->got, (unsigned long long)m->want);
	if (e)
		return vgg_detail(c, VGG_FAIL,
				  "file %s %s: %s: %d %s, channel error %u %s at 0x%llx",
				  vgg_file_kind_name(c->o->kind), c->o->path, step,
				  ret, vgg_file_errname(ret), e,
				  vgg_chan_error_name(e), (unsigned long long)addr);
	return vgg_detail(c, VGG_FAIL, "file %s %s: %s: %d %s (%s)%s%s",
			  vgg_file_kind_name(c->o->kind), c->o->path, step, ret,
			  vgg_file_errname(ret), vgg_file_errmeaning(ret),
			  c->vfio && (ret == -ETIMEDOUT || ret == -EIO) ? ": " : "",
			  c->vfio && (ret == -ETIMEDOUT || ret == -EIO) ?
			  vgmem_vfio_error() : "");
}

static uint64_t pattern_fnv(uint64_t h, uint64_t bytes, uint32_t seed)
{
	uint64_t i;
	uint32_t w = 0;

	for (i = 0; i < bytes; i++) {
		if (!(i & 3))
			w = vgmem_pattern_word(seed, i >> 2);
		h ^= (w >> (8 * (i & 3))) & 0xff;
		h *= VGMEM_FNV1A_PRIME;
	}
	return h;
}

/* Bytes a pattern covers: --rows x --row-bytes, or the whole map. */
static uint64_t checked_bytes(const struct vgg_opts *o)
{
	return o->rows ? (uint64_t)o->rows * o->row_bytes : o->length;
}

static uint64_t row_bytes(const struct vgg_opts *o)
{
	return o->rows ? o->row_bytes : o->length;
}

/* The FNV-1a --expect-pattern describes (see the file comment). */
static uint64_t expected_fnv(const struct vgg_opts *o)
{
	uint32_t r, rows = o->rows ? o->rows : 1;
	uint64_t h = VGMEM_FNV1A_OFFSET, rb = row_bytes(o);

	if (o->have_fnv)
		return o->expect_fnv;
	for (r = 0; r < rows; r++) {
		if (o->nexpect == 1) {
			h = pattern_fnv(h, rb, o->expect_seed[0] + r);
		} else {
			h = pattern_fnv(h, rb / 2, o->expect_seed[0] + r);
			h = pattern_fnv(h, rb / 2, o->expect_seed[1] + r);
		}
	}
	return h;
}

static int map_open(struct vgg_ctx *c, struct fmap *m, uint32_t flags)
{
	const struct vgg_opts *o = c->o;
	int ret;

	memset(m, 0, sizeof(*m));
	m->c = c;
	ret = vgmem_map_file(c->dev, o->share, o->path, o->offset, o->length,
			     flags, &m->va);
	if (ret)
		return ret;
	m->mapped = true;
	vgg_log(c, "file map share=%u path=%s offset=%llu length=%llu %s va=0x%llx",
		o->share, o->path, (unsigned long long)o->offset,
		(unsigned long long)o->length, flags == VGMEM_FILE_RW ? "rw" : "ro",
		(unsigned long long)m->va);
	ret = vgmem_chan_create(c->dev, CHAN_ENTRIES, 0, 0, &m->ch);
	if (ret) {
		m->ch = NULL;
		return ret;
	}
	return vgmem_bo_alloc(c->dev, SCRATCH, &m->scratch);
}

/* Unmap (releases what is unreleased) and free; the first error wins. */
static int map_close(struct fmap *m, int ret)
{
	int r = 0;

	if (m->mapped) {
		r = vgmem_unmap_file(m->c->dev, m->va);
		if (r)
			vgg_log(m->c, "error file-unmap %d %s", r, vgg_file_errname(r));
		else
			vgg_log(m->c, "file unmap");
	}
	if (m->scratch)
		vgmem_bo_free(m->c->dev, m->scratch);
	if (m->ch)
		vgmem_chan_destroy(m->ch);
	memset(m, 0, sizeof(*m));
	return ret ? ret : r;
}

/* GPU checksum of the checked range; logs it; -EILSEQ if not as expected. */
static int check(struct vgg_ctx *c, struct fmap *m, const char *what,
		 bool expect, uint64_t *sum)
{
	uint64_t bytes = checked_bytes(c->o), want;
	int ret;

	ret = vgmem_checksum(m->ch, m->va, bytes, m->scratch, sum);
	if (ret)
		return ret;
	if (!expect) {
		vgg_log(c, "file %s bytes=%llu fnv=%016llx", what,
			(unsigned long long)bytes, (unsigned long long)*sum);
		return 0;
	}
	want = expected_fnv(c->o);
	m->got = *sum;
	m->want = want;
	vgg_log(c, "file %s bytes=%llu fnv=%016llx expect=%016llx %s", what,
		(unsigned long long)bytes, (unsigned long long)*sum,
		(unsigned long long)want, *sum == want ? "match" : "MISMATCH");
	return *sum == want ? 0 : -EILSEQ;
}

static bool has_expect(const struct vgg_opts *o)
{
	return o->have_fnv || o->nexpect;
}

static volatile sig_atomic_t sig_check, sig_acquire, sig_stop;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		sig_check = 1;
	else if (sig == SIGUSR2)
		sig_acquire = 1;
	else
		sig_stop = 1;
}

/*
 * write's two waits: --hold before the release (so other writers fill
 * their halves first) and --hold-after once synced (so a harness can
 * kill -9 the VM while the released, synced file is still mapped). Each
 * prints LINE and SECONDS, then lasts SECONDS or until SIGTERM or SIGINT:
 * a harness that needs the wait to cover steps of its own, whose length on
 * a loaded host it cannot know, gives a long one and ends it. It signals
 * only after the line: before it, the signal's default action applies.
 */
static void wait_stop(struct vgg_ctx *c, double seconds, const char *line)
{
	static const int stop_sigs[] = { SIGTERM, SIGINT };
	uint64_t end = vgg_now_ns() + (uint64_t)(seconds * 1e9);
	struct sigaction sa, old[2];
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sig_stop = 0;
	for (i = 0; i < 2; i++)
		sigaction(stop_sigs[i], &sa, &old[i]);
	vgg_log(c, "%s %.3f", line, seconds);
	while (!sig_stop && vgg_now_ns() < end)
		vgg_sleep_ns(POLL_NS);
	for (i = 0; i < 2; i++)
		sigaction(stop_sigs[i], &old[i], NULL);
	if (sig_stop)
		vgg_log(c, "file wait ended early by a signal");
}

static int file_read(struct vgg_ctx *c, struct fmap *m, const char **step)
{
	uint64_t sum = 0;
	int ret;

	*step = "acquire";
	ret = vgmem_acquire(c->dev, m->va, 0);
	if (ret)
		return ret;
	*step = "checksum";
	ret = check(c, m, "read", has_expect(c->o), &sum);
	if (ret && ret != -EILSEQ)
		return ret;
	*step = "release";
	if (!ret)
		ret = vgmem_release(c->dev, m->va, 0);
	else
		vgmem_release(c->dev, m->va, 0);
	if (!ret)
		vgg_detail(c, VGG_OK, "file read share=%u path=%s offset=%llu bytes=%llu fnv=%016llx",
			   c->o->share, c->o->path, (unsigned long long)c->o->offset,
			   (unsigned long long)checked_bytes(c->o),
			   (unsigned long long)sum);
	else if (ret == -EILSEQ)
		*step = "compare";
	return ret;
}

static int file_write(struct vgg_ctx *c, struct fmap *m, const char **step)
{
	const struct vgg_opts *o = c->o;
	uint32_t r, rows = o->rows ? o->rows : 1;
	uint64_t rb = row_bytes(o), part = o->half < 0 ? rb : rb / 2;
	uint64_t off, got;
	int ret;

	*step = "acquire";
	ret = vgmem_acquire(c->dev, m->va, 0);
	if (ret)
		return ret;
	*step = "fill";
	for (r = 0; r < rows; r++) {
		off = (uint64_t)r * rb + (o->half > 0 ? part : 0);
		ret = vgmem_fill_pattern(m->ch, m->va + off, part, o->pattern + r);
		if (ret)
			return ret;
	}
	/* What the GPU reads back through the map is what it wrote. */
	*step = "verify";
	for (r = 0; r < rows; r++) {
		off = (uint64_t)r * rb + (o->half > 0 ? part : 0);
		ret = vgg_verify(m->ch, m->va + off, part, o->pattern + r,
				 m->scratch,
				 pattern_fnv(VGMEM_FNV1A_OFFSET, part, o->pattern + r),
				 &got);
		if (ret)
			return ret;
	}
	vgg_log(c, "file fill rows=%u row_bytes=%llu half=%s seed=%u", rows,
		(unsigned long long)rb, o->half < 0 ? "all" : o->half ? "1" : "0",
		o->pattern);
	if (o->hold > 0)
		wait_stop(c, o->hold, "file hold-before-release");
	*step = "release";
	ret = vgmem_release(c->dev, m->va, 0);
	if (ret)
		return ret;
	vgg_log(c, "file release");
	*step = "sync";
	ret = vgmem_file_sync(c->dev, m->va, 0);
	if (ret)
		return ret;
	vgg_log(c, "file sync");
	vgg_detail(c, VGG_OK, "file write share=%u path=%s offset=%llu rows=%u row_bytes=%llu half=%s seed=%u",
		   o->share, o->path, (unsigned long long)o->offset, rows,
		   (unsigned long long)rb, o->half < 0 ? "all" : o->half ? "1" : "0",
		   o->pattern);
	return 0;
}

static const int hold_sigs[] = { SIGUSR1, SIGUSR2, SIGTERM, SIGINT };
#define NSIGS	(sizeof(hold_sigs) / sizeof(hold_sigs[0]))

static int file_hold(struct vgg_ctx *c, struct fmap *m, const char **step)
{
	const struct vgg_opts *o = c->o;
	struct sigaction sa, old[NSIGS];
	uint64_t sum = 0, end = 0, checks = 0, acquires = 0;
	size_t i;
	int ret;

	*step = "acquire";
	ret = vgmem_acquire(c->dev, m->va, 0);
	if (ret)
		return ret;
	*step = "checksum";
	ret = check(c, m, "hold-check", has_expect(o), &sum);
	if (ret)
		return ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sig_check = sig_acquire = sig_stop = 0;
	for (i = 0; i < NSIGS; i++)
		sigaction(hold_sigs[i], &sa, &old[i]);
	if (o->hold > 0)
		end = vgg_now_ns() + (uint64_t)(o->hold * 1e9);
	/* The harness waits for this line before it signals. */
	vgg_log(c, "file hold ready va=0x%llx fnv=%016llx", (unsigned long long)m->va,
		(unsigned long long)sum);
	while (!sig_stop && (!end || vgg_now_ns() < end)) {
		/*
		 * A check before an acquire when both are pending; a harness
		 * that needs an order waits for each line before signalling.
		 */
		if (sig_check) {
			sig_check = 0;
			*step = "checksum";
			ret = check(c, m, "check", false, &sum);
			if (ret)
				break;
			checks++;
		}
		if (sig_acquire) {
			sig_acquire = 0;
			*step = "acquire";
			ret = vgmem_acquire(c->dev, m->va, 0);
			if (!ret) {
				*step = "checksum";
				ret = check(c, m, "acquire-check", false, &sum);
			}
			if (ret)
				break;
			acquires++;
		}
		vgg_sleep_ns(POLL_NS);
	}
	for (i = 0; i < NSIGS; i++)
		sigaction(hold_sigs[i], &old[i], NULL);
	if (ret)
		return ret;
	vgg_detail(c, VGG_OK, "file hold share=%u path=%s %s checks=%llu acquires=%llu fnv=%016llx",
		   o->share, o->path, o->rw ? "rw" : "ro",
		   (unsigned long long)checks, (unsigned long long)acquires,
		   (unsigned long long)sum);
	return 0;
}

static int file_sync(struct vgg_ctx *c, struct fmap *m, const char **step)
{
	int ret;

	*step = "sync";
	ret = vgmem_file_sync(c->dev, m->va, 0);
	if (ret)
		return ret;
	vgg_log(c, "file sync");
	vgg_detail(c, VGG_OK, "file sync share=%u path=%s offset=%llu length=%llu",
		   c->o->share, c->o->path, (unsigned long long)c->o->offset,
		   (unsigned long long)c->o->length);
	return 0;
}

int vgg_cmd_file(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	uint32_t flags = o->kind == VGG_F_WRITE || o->rw ? VGMEM_FILE_RW : VGMEM_FILE_RO;
	const char *step = "map";
	struct fmap m;
	int ret;

	ret = map_open(c, &m, flags);
	if (o->expect_error) {
		/* A hostile map: exactly this error, and nothing mapped. */
		map_close(&m, 0);
		if (!ret)
			return vgg_detail(c, VGG_FAIL, "file %s %s: mapped, expected %s",
					  vgg_file_kind_name(o->kind), o->path,
					  o->expect_error);
		vgg_log(c, "file map error %d %s", ret, vgg_file_errname(ret));
		if (strcmp(vgg_file_errname(ret), o->expect_error))
			return vgg_detail(c, VGG_FAIL, "file %s %s: map: %d %s (%s), expected %s",
					  vgg_file_kind_name(o->kind), o->path, ret,
					  vgg_file_errname(ret), vgg_file_errmeaning(ret),
					  o->expect_error);
		return vgg_detail(c, VGG_OK, "file %s %s: map refused with %s as expected",
				  vgg_file_kind_name(o->kind), o->path,
				  o->expect_error);
	}
	if (ret) {
		if (m.mapped)
			step = m.ch ? "scratch" : "channel";
		ret = fail(c, &m, step, ret);
		map_close(&m, 0);
		return ret;
	}
	switch (o->kind) {
	case VGG_F_READ:
		ret = file_read(c, &m, &step);
		break;
	case VGG_F_WRITE:
		ret = file_write(c, &m, &step);
		if (!ret && o->hold_after > 0)
			wait_stop(c, o->hold_after, "file hold-after-sync ready");
		break;
	case VGG_F_HOLD:
		ret = file_hold(c, &m, &step);
		break;
	default:
		ret = file_sync(c, &m, &step);
		break;
	}
	if (ret) {
		fail(c, &m, step, ret);
		map_close(&m, 0);
		return VGG_FAIL;
	}
	ret = map_close(&m, 0);
	if (ret)
		return fail(c, NULL, "unmap", ret);
	return VGG_OK;
}
