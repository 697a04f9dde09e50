// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgpci-touch [SYSFS-DIR]: the vGPU as a guest kernel's PCI layer sees it,
 * run inside a real (nested) guest. Finds the device (vendor 0x1b36, device
 * 0x10f0) in /sys/bus/pci/devices unless given its directory, enables it,
 * maps resource0 and checks VGMEM_REG_ID and VGMEM_REG_ABI_VERSION, then
 * maps resource2 (the USERD BAR) and touches every 4 KiB page of it: reads
 * GP_GET, GP_PUT and ERROR (0x88, 0x8c, 0x100) and writes a junk word at
 * 0x200. A vGPU without channels has no USERD page behind any of them, and
 * each must read 0 rather than fault.
 *
 * A fault (SIGBUS, SIGSEGV) is caught and reported with the page and offset,
 * and the walk goes on, so one run lists every bad page. Prints "ok: ..." per
 * check and timings, "FAIL: ..." per failure; exits 0 only if all passed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uapi/vgmem.h>

#define PCI_DEVICES	"/sys/bus/pci/devices"
#define JUNK		0xdeadbeefu

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;
static int failures;

static void on_fault(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

static void failf(const char *what, const char *detail)
{
	printf("FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	fflush(stdout);
	failures++;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The hex number in a sysfs file such as "vendor", or -1. */
static long read_hex(const char *dir, const char *name)
{
	char path[512], buf[32];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 16);
	fclose(f);
	return v;
}

static int find_device(char *out, size_t len)
{
	struct dirent *de;
	int found = 0;
	DIR *d;

	d = opendir(PCI_DEVICES);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(out, len, "%s/%s", PCI_DEVICES, de->d_name);
		found = read_hex(out, "vendor") == VGMEM_PCI_VENDOR &&
			read_hex(out, "device") == VGMEM_PCI_DEVICE;
	}
	closedir(d);
	return found;
}

static void *map_resource(const char *dir, int n, size_t *size)
{
	char path[512];
	struct stat st;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/resource%d", dir, n);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		failf(path, strerror(errno));
		return NULL;
	}
	*size = st.st_size;
	p = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		failf(path, strerror(errno));
		return NULL;
	}
	return p;
}

/*
 * One 32-bit access that may fault: returns 0 and the value read, or -1
 * after reporting the signal. volatile: the compiler must neither merge
 * nor drop device accesses.
 */
static int access32(volatile uint32_t *p, int write, uint32_t *val,
		    const char *bar, size_t off)
{
	char msg[128];

	fault_sig = 0;
	if (sigsetjmp(fault_jmp, 1) == 0) {
		if (write)
			*p = *val;
		else
			*val = *p;
		return 0;
	}
	snprintf(msg, sizeof(msg), "%s %s at offset 0x%zx (page %zu, +0x%zx)",
		 fault_sig == SIGBUS ? "SIGBUS" : "SIGSEGV",
		 write ? "writing" : "reading", off, off / 4096, off % 4096);
	failf(bar, msg);
	return -1;
}

int main(int argc, char **argv)
{
	static const size_t reads[] = { VGMEM_USERD_GP_GET, VGMEM_USERD_GP_PUT,
					VGMEM_USERD_ERROR };
	size_t size0, size2, pg, i, nonzero = 0, faults = 0;
	char dir[512], msg[600];
	struct sigaction sa;
	uint8_t *bar0, *bar2;
	uint32_t v;
	double t;
	int fd;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [/sys/bus/pci/devices/DDDD:BB:DD.F]\n", argv[0]);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc == 2)
		snprintf(dir, sizeof(dir), "%s", argv[1]);
	else if (!find_device(dir, sizeof(dir))) {
		failf("no PCI device 1b36:10f0 in " PCI_DEVICES, NULL);
		return 1;
	}
	printf("ok: vGPU at %s, class 0x%06lx\n", dir, read_hex(dir, "class"));

	/* Without a driver, "enable" is what turns memory decoding on. */
	snprintf(msg, sizeof(msg), "%s/enable", dir);
	fd = open(msg, O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		failf(msg, strerror(errno));
		return 1;
	}
	close(fd);

	bar0 = map_resource(dir, 0, &size0);
	if (!bar0)
		return 1;
	if (size0 != VGMEM_BAR0_SIZE) {
		snprintf(msg, sizeof(msg), "%zu bytes, expected %d", size0, VGMEM_BAR0_SIZE);
		failf("resource0", msg);
	}
	t = now_us();
	if (access32((volatile uint32_t *)(bar0 + VGMEM_REG_ID), 0, &v, "BAR0", VGMEM_REG_ID) == 0) {
		if (v == VGMEM_ID_MAGIC)
			printf("ok: REG_ID 0x%08x\n", v);
		else {
			snprintf(msg, sizeof(msg), "0x%08x, expected 0x%08x", v, VGMEM_ID_MAGIC);
			failf("REG_ID", msg);
		}
	}
	if (access32((volatile uint32_t *)(bar0 + VGMEM_REG_ABI_VERSION), 0, &v, "BAR0",
		     VGMEM_REG_ABI_VERSION) == 0) {
		if (v == VGMEM_ABI_VERSION)
			printf("ok: REG_ABI_VERSION %u\n", v);
		else {
			snprintf(msg, sizeof(msg), "%u, expected %u", v, VGMEM_ABI_VERSION);
			failf("REG_ABI_VERSION", msg);
		}
	}
	printf("time: 2 trapped BAR0 reads %.0f us\n", now_us() - t);

	bar2 = map_resource(dir, 2, &size2);
	if (!bar2)
		return 1;
	if (size2 != VGMEM_USERD_BAR_SIZE) {
		snprintf(msg, sizeof(msg), "%zu bytes, expected %d", size2, VGMEM_USERD_BAR_SIZE);
		failf("resource2", msg);
	}
	t = now_us();
	for (pg = 0; pg < size2 / VGMEM_USERD_SIZE; pg++) {
		size_t base = pg * VGMEM_USERD_SIZE;

		for (i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
			if (access32((volatile uint32_t *)(bar2 + base + reads[i]), 0, &v,
				     "BAR2", base + reads[i]) < 0)
				faults++;
			else if (v != 0) {
				snprintf(msg, sizeof(msg), "0x%08x at offset 0x%zx (page %zu)",
					 v, base + reads[i], pg);
				failf("BAR2 read not zero", msg);
				nonzero++;
			}
		}
		v = JUNK;
		if (access32((volatile uint32_t *)(bar2 + base + 0x200), 1, &v, "BAR2",
			     base + 0x200) < 0)
			faults++;
	}
	printf("time: %zu BAR2 pages touched (3 reads, 1 write each) %.0f us\n",
	       pg, now_us() - t);
	if (!faults && !nonzero)
		printf("ok: every BAR2 page read 0 and took a write\n");
	else
		printf("BAR2: %zu faults, %zu non-zero reads\n", faults, nonzero);
	return failures ? 1 : 0;
}
