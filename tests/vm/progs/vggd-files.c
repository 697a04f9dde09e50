// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vggd-check files MOUNT TAG SEED: share files mapped from inside the guest
 * (SHARE_BIND, MAP_FD, the file-range commands on a file's own maps) and
 * the guest page cache kept coherent with the GPU around acquire/release.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vggd.h"

static int share_bind(int fd, unsigned long req, int dirfd, const char *tag, uint32_t flags)
{
	struct vgmem_guest_share_bind b;

	memset(&b, 0, sizeof(b));
	b.fd = dirfd;
	b.flags = flags;
	strncpy(b.tag, tag, sizeof(b.tag) - 1);
	return xioctl(fd, req, &b);
}

static int map_fd(int fd, int file, uint32_t flags, uint64_t off, uint64_t len,
		  uint64_t rsvd, uint64_t *va)
{
	struct vgmem_guest_map_fd m = {
		.fd = file, .flags = flags, .offset = off, .length = len, .rsvd = rsvd,
	};
	int ret = xioctl(fd, VGMEM_GIOC_MAP_FD, &m);

	if (!ret && va)
		*va = m.va;
	return ret;
}

static int file_range(int fd, uint32_t op, uint64_t va, uint64_t len)
{
	struct vgmem_ctrl c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.file.va = va;
	c.file.length = len;
	return ctrl_status(fd, &c);
}

static int open_or_fail(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		FAIL("open %s: %s", path, strerror(errno));
	return fd;
}

#define FILE_BYTES	(256u << 10)

/* SHARE_BIND's refusals; the mount itself was bound by the script. */
static void check_bind(int fd, const char *mnt, const char *tag)
{
	char sub[512];
	int d, st;
	pid_t pid;

	d = open_or_fail(mnt, O_RDONLY | O_DIRECTORY);
	expect("SHARE_BIND of the bound mount again", share_bind(fd, VGMEM_GIOC_SHARE_BIND, d, tag, 0), -EEXIST);
	expect("SHARE_BIND with flags", share_bind(fd, VGMEM_GIOC_SHARE_BIND, d, tag, 1), -EINVAL);
	expect("SHARE_BIND with tag 'a/b'", share_bind(fd, VGMEM_GIOC_SHARE_BIND, d, "a/b", 0), -EINVAL);
	expect("SHARE_BIND of fd -1", share_bind(fd, VGMEM_GIOC_SHARE_BIND, -1, "t", 0), -EBADF);
	expect("SHARE_UNBIND of a tag not bound", share_bind(fd, VGMEM_GIOC_SHARE_UNBIND, -1, "nope", 0), -ENOENT);
	pid = fork();
	if (!pid) {
		/* The device stays open; only the privilege goes. */
		if (setgid(65534) || setuid(65534))
			_exit(3);
		_exit(share_bind(fd, VGMEM_GIOC_SHARE_BIND, d, tag, 0) == -EPERM ? 0 :
		      share_bind(fd, VGMEM_GIOC_SHARE_UNBIND, -1, tag, 0) == -EPERM ? 1 : 2);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st))
		PASS("SHARE_BIND as uid 65534: -EPERM");
	else
		FAIL("SHARE_BIND as uid 65534 not refused with -EPERM");
	close(d);

	d = open_or_fail("/tmp", O_RDONLY | O_DIRECTORY);
	expect("SHARE_BIND of /tmp (not virtio-fs)", share_bind(fd, VGMEM_GIOC_SHARE_BIND, d, "other", 0), -EINVAL);
	close(d);
	snprintf(sub, sizeof(sub), "%s/vggd-sub", mnt);
	mkdir(sub, 0755);
	d = open_or_fail(sub, O_RDONLY | O_DIRECTORY);
	expect("SHARE_BIND of a directory below the mount's root", share_bind(fd, VGMEM_GIOC_SHARE_BIND, d, "other", 0), -EINVAL);
	close(d);
	rmdir(sub);
	if (umount2(mnt, 0) < 0 && errno == EBUSY)
		PASS("umount of a bound mount: EBUSY");
	else
		FAIL("umount of a bound mount: %s", strerror(errno));
}

/* MAP_FD's refusals, and file ranges only on this file's own maps. */
static void check_map_fd(int fd, const char *mnt)
{
	char path[512];
	struct vgmem_ctrl c;
	uint64_t va = 0;
	int f, other;

	snprintf(path, sizeof(path), "%s/vggd-map.bin", mnt);
	f = open_or_fail(path, O_RDWR | O_CREAT | O_TRUNC);
	if (f < 0 || ftruncate(f, FILE_BYTES)) {
		FAIL("creating %s", path);
		return;
	}
	close(f);

	f = open_or_fail("/tmp/vggd-local", O_RDWR | O_CREAT);
	expect("MAP_FD of a file not on a bound mount", map_fd(fd, f, VGMEM_FILE_RO, 0, 65536, 0, NULL), -EXDEV);
	close(f);
	f = open_or_fail(mnt, O_RDONLY | O_DIRECTORY);
	expect("MAP_FD of a directory", map_fd(fd, f, VGMEM_FILE_RO, 0, 65536, 0, NULL), -EINVAL);
	close(f);
	expect("MAP_FD of fd 9999", map_fd(fd, 9999, VGMEM_FILE_RO, 0, 65536, 0, NULL), -EBADF);
	f = open_or_fail(path, O_RDONLY);
	expect("MAP_FD read-write of a read-only fd", map_fd(fd, f, VGMEM_FILE_RW, 0, 65536, 0, NULL), -EACCES);
	expect("MAP_FD with rsvd", map_fd(fd, f, VGMEM_FILE_RO, 0, 65536, 1, NULL), -EINVAL);
	expect("MAP_FD with flags RO|RW", map_fd(fd, f, VGMEM_FILE_RO | VGMEM_FILE_RW, 0, 65536, 0, NULL), -EINVAL);
	expect("MAP_FD past the file (device)", map_fd(fd, f, VGMEM_FILE_RO, 0, 4 * FILE_BYTES, 0, NULL), -EFBIG);
	close(f);

	snprintf(path, sizeof(path), "%s/vggd-gone.bin", mnt);
	f = open_or_fail(path, O_RDWR | O_CREAT | O_TRUNC);
	if (f >= 0 && !ftruncate(f, 65536) && !unlink(path))
		expect("MAP_FD of an unlinked file", map_fd(fd, f, VGMEM_FILE_RO, 0, 65536, 0, NULL), -ENOENT);
	if (f >= 0)
		close(f);

	snprintf(path, sizeof(path), "%s/vggd-map.bin", mnt);
	f = open_or_fail(path, O_RDONLY);
	expect("MAP_FD of a file on the bound mount", map_fd(fd, f, VGMEM_FILE_RO, 0, FILE_BYTES, 0, &va), 0);
	close(f);	/* the map holds the file */
	expect("FILE_ACQUIRE of the map (fd closed)", file_range(fd, VGMEM_CTRL_FILE_ACQUIRE, va, 0), 0);
	expect("FILE_RELEASE of the map", file_range(fd, VGMEM_CTRL_FILE_RELEASE, va, 65536), 0);
	expect("FILE_ACQUIRE past the map", file_range(fd, VGMEM_CTRL_FILE_ACQUIRE, va + FILE_BYTES, 0), -EBADF);
	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_FILE_MAP;
	c.file_map.share_id = 1;
	c.file_map.flags = VGMEM_FILE_RO;
	c.file_map.length = 65536;
	strcpy(c.file_map.path, "vggd-map.bin");
	expect("FILE_MAP through CTRL", ctrl(fd, &c), -EPERM);
	other = dev_open();
	expect("FILE_ACQUIRE of another file's map", file_range(other, VGMEM_CTRL_FILE_ACQUIRE, va, 0), -EBADF);
	expect("FILE_UNMAP of another file's map", file_range(other, VGMEM_CTRL_FILE_UNMAP, va, 0), -EBADF);
	close(other);
	expect("FILE_UNMAP with a length", file_range(fd, VGMEM_CTRL_FILE_UNMAP, va, 65536), -EINVAL);
	expect("FILE_UNMAP", file_range(fd, VGMEM_CTRL_FILE_UNMAP, va, 0), 0);
	expect("FILE_ACQUIRE after FILE_UNMAP", file_range(fd, VGMEM_CTRL_FILE_ACQUIRE, va, 0), -EBADF);

	/* A map left to close: the file's release unmaps it. */
	other = dev_open();
	f = open_or_fail(path, O_RDWR);
	expect("MAP_FD read-write, left open at close", map_fd(other, f, VGMEM_FILE_RW, 0, FILE_BYTES, 0, &va), 0);
	close(f);
	close(other);
	PASS("close with a read-write file map open");
	unlink(path);
}

/*
 * PATH gets SIZE bytes of pattern SEED written through a shared mmap and is
 * closed without msync: the pages stay dirty in the guest's page cache
 * (the script turned periodic write-back off) until something writes them
 * back; FILE_ACQUIRE must, or the GPU would read zeros.
 */
static void dirty_pattern(const char *path, uint32_t seed)
{
	uint32_t *p;
	uint64_t i;
	int f = open_or_fail(path, O_RDWR | O_CREAT | O_TRUNC);

	if (f < 0 || ftruncate(f, FILE_BYTES)) {
		FAIL("creating %s", path);
		return;
	}
	p = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (p == MAP_FAILED) {
		FAIL("mmap %s: %s", path, strerror(errno));
		close(f);
		return;
	}
	for (i = 0; i < FILE_BYTES / 4; i++)
		p[i] = vgmem_pattern_word(seed, i);
	munmap(p, FILE_BYTES);
	close(f);
	PASS("%s: %u bytes of pattern %u written through mmap, not synced", path,
	     FILE_BYTES, seed);
}

static uint32_t meminfo_dirty_kb(void)
{
	char line[128];
	unsigned int kb = 0;
	FILE *m = fopen("/proc/meminfo", "re");

	while (m && fgets(line, sizeof(line), m))
		if (sscanf(line, "Dirty: %u kB", &kb) == 1)
			break;
	if (m)
		fclose(m);
	return kb;
}

/* One GPFIFO entry of copy-engine work: FILE_BYTES from va to dst_gpa. */
static uint32_t build_copy_out(uint32_t *pbp, uint64_t va, uint64_t dst_gpa)
{
	struct pb pb = { .p = pbp, .n = 0 };

	pb_copy_out(&pb, va, dst_gpa, FILE_BYTES);
	return pb.n;
}

/* One GPFIFO entry: the compute engine sets FILE_BYTES at va to value. */
static uint32_t build_memset(uint32_t *pbp, uint64_t va, uint32_t value)
{
	struct pb pb = { .p = pbp, .n = 0 };

	pb_memset(&pb, va, FILE_BYTES, value);
	return pb.n;
}

/*
 * The guest's page cache and the GPU, with a file kept open and mapped by
 * the CPU the whole time (no close, whose flush would write pages back by
 * itself): what the CPU left dirty reaches the GPU at FILE_ACQUIRE (the
 * driver writes it back), and what the GPU wrote reaches the CPU's own
 * mapping after FILE_RELEASE and FILE_SYNC (the driver drops the cached
 * pages, the next access reads the host file).
 */
static void check_coherent(int fd, const char *mnt, uint32_t seed)
{
	const uint32_t words = FILE_BYTES / 4, value = 0x5eed0000u | (seed & 0xffff);
	uint32_t chan = 0, ndw, i, bad = 0, dirty;
	volatile uint32_t *u = NULL;
	struct dmabuf b;
	uint32_t *p, *dst;
	char path[512];
	uint64_t va = 0;
	int f, ret;

	snprintf(path, sizeof(path), "%s/coh.bin", mnt);
	f = open_or_fail(path, O_RDWR | O_CREAT | O_TRUNC);
	if (f < 0 || ftruncate(f, FILE_BYTES)) {
		FAIL("creating %s", path);
		return;
	}
	ret = map_fd(fd, f, VGMEM_FILE_RW, 0, FILE_BYTES, 0, &va);
	expect("MAP_FD read-write of coh.bin (kept open)", ret, 0);
	p = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (ret || p == MAP_FAILED) {
		FAIL("mmap %s: %s", path, strerror(errno));
		close(f);
		return;
	}
	for (i = 0; i < words; i++)
		p[i] = vgmem_pattern_word(seed, i);
	/*
	 * The kernel may write some of them back by itself (FUSE's small
	 * dirty limit); what is still dirty reaches the host only through
	 * the acquire's write-back. Printed, not judged: the GPU's copy is.
	 */
	dirty = meminfo_dirty_kb();
	printf("INFO Dirty: %u kB after the CPU wrote %u KiB through mmap\n", dirty,
	       FILE_BYTES >> 10);
	expect("FILE_ACQUIRE with the CPU's pages dirty", file_range(fd, VGMEM_CTRL_FILE_ACQUIRE, va, 0), 0);

	if (dma_alloc(fd, 8192 + FILE_BYTES, &b) || chan_create(fd, b.d.gpa, 16, &chan) ||
	    !(u = userd_map(fd, chan))) {
		FAIL("a channel and a DMA buffer for the GPU's side");
		goto out;
	}
	dst = (uint32_t *)(b.p + 8192);
	ndw = build_copy_out((uint32_t *)(b.p + 4096), va, b.d.gpa + 8192);
	submit((uint64_t *)b.p, u, 0, b.d.gpa + 4096, ndw);
	ret = wait_done(u, 1);
	for (i = 0; i < words; i++)
		bad += dst[i] != vgmem_pattern_word(seed, i);
	if (!ret && !bad)
		PASS("the GPU read what the CPU left dirty (FILE_ACQUIRE wrote it back)");
	else
		FAIL("GPU copy of the map: %d, %u of %u words not the CPU's", ret, bad, words);

	ndw = build_memset((uint32_t *)(b.p + 4096), va, value);
	submit((uint64_t *)b.p, u, 1, b.d.gpa + 4096, ndw);
	ret = wait_done(u, 2);
	expect("GPU memset of the map", ret, 0);
	expect("FILE_RELEASE", file_range(fd, VGMEM_CTRL_FILE_RELEASE, va, 0), 0);
	expect("FILE_SYNC", file_range(fd, VGMEM_CTRL_FILE_SYNC, va, 0), 0);
	for (bad = 0, i = 0; i < words; i++)
		bad += p[i] != value;
	if (!bad)
		PASS("the CPU's own mapping shows the GPU's bytes after release and sync");
	else
		FAIL("%u of %u words in the CPU's mapping are not the GPU's (stale page cache)", bad, words);
out:
	if (u)
		munmap((void *)u, 4096);
	if (chan)
		chan_destroy(fd, chan);
	file_range(fd, VGMEM_CTRL_FILE_UNMAP, va, 0);
	munmap(p, FILE_BYTES);
	close(f);
}

int cmd_files(const char *mnt, const char *tag, uint32_t seed)
{
	char path[512];
	int fd = dev_open();

	check_bind(fd, mnt, tag);
	check_map_fd(fd, mnt);
	check_coherent(fd, mnt, seed + 1);
	close(fd);
	snprintf(path, sizeof(path), "%s/cpu.bin", mnt);
	dirty_pattern(path, seed);
	return vggd_failures ? 1 : 0;
}
