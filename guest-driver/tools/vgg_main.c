// SPDX-License-Identifier: MIT
/*
 * vgmem-guest: command line, device opening and the RESULT line. The VM
 * tests parse the last line, so every path out of vgg_main that ran a
 * command, or failed to, ends with exactly one "RESULT ok|fail ..." line.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "vgg.h"
#include "lib/util/size.h"

#define INPROC_VRAM_DEFAULT	(256ull << 20)

static const char *const cmd_names[VGG_CMD_NR] = {
	[VGG_INFO] = "info",
	[VGG_WORKLOAD] = "workload",
	[VGG_FILL_CHECK] = "fill-check",
	[VGG_SUBMIT_LOOP] = "submit-loop",
	[VGG_ALLOC] = "alloc",
	[VGG_HOSTILE] = "hostile",
	[VGG_BENCH] = "bench",
	[VGG_FILE] = "file",
	[VGG_SHARE] = "share",
};

static const char *const hostile_names[VGG_H_NR] = {
	[VGG_H_WILD_VA] = "wild-va",
	[VGG_H_BAD_ENTRY] = "bad-entry",
	[VGG_H_BAD_METHOD] = "bad-method",
	[VGG_H_BAD_CTRL] = "bad-ctrl",
	[VGG_H_RING_OUTSIDE] = "ring-outside",
	[VGG_H_FLOOD] = "flood",
	[VGG_H_BAR] = "bar",
};

const char *vgg_hostile_name(int kind)
{
	return kind >= 0 && kind < VGG_H_NR ? hostile_names[kind] : "unknown";
}

enum opt_id {
	O_DEV, O_PCI, O_RAM, O_INPROC, O_VRAM, O_QUOTA,
	O_WS, O_ITERS, O_SEED, O_SIZE, O_BO, O_LOOPS, O_HOLD, O_COUNT,
	O_SHARE, O_SHARE_RO, O_OFFSET, O_LENGTH, O_EXPECT_FNV, O_EXPECT_PATTERN,
	O_PATTERN, O_ROWS, O_ROW_BYTES, O_HALF, O_RW, O_EXPECT_ERROR,
	O_HOLD_AFTER,
	O_NR
};

#define CMD(c)		(1u << (c))
#define ALL_CMDS	((1u << VGG_CMD_NR) - 1)

static const struct {
	const char *name;
	bool arg;
	unsigned int cmds;	/* commands that accept it */
} opts[O_NR] = {
	[O_DEV] = { "dev", true, ALL_CMDS },
	[O_PCI] = { "pci", true, ALL_CMDS },
	[O_RAM] = { "ram", true, ALL_CMDS },
	[O_INPROC] = { "inproc", false, ALL_CMDS },
	[O_VRAM] = { "vram", true, ALL_CMDS },
	[O_QUOTA] = { "quota", true, ALL_CMDS },
	[O_WS] = { "ws", true, CMD(VGG_WORKLOAD) },
	[O_ITERS] = { "iters", true, CMD(VGG_WORKLOAD) },
	[O_SEED] = { "seed", true, CMD(VGG_WORKLOAD) | CMD(VGG_FILL_CHECK) },
	[O_SIZE] = { "size", true, CMD(VGG_FILL_CHECK) | CMD(VGG_ALLOC) | CMD(VGG_BENCH) },
	[O_BO] = { "bo", true, CMD(VGG_WORKLOAD) | CMD(VGG_FILL_CHECK) | CMD(VGG_ALLOC) },
	[O_LOOPS] = { "loops", true, CMD(VGG_FILL_CHECK) },
	[O_HOLD] = { "hold", true, CMD(VGG_FILL_CHECK) | CMD(VGG_ALLOC) | CMD(VGG_FILE) },
	[O_COUNT] = { "count", true, CMD(VGG_SUBMIT_LOOP) | CMD(VGG_HOSTILE) | CMD(VGG_BENCH) },
	[O_SHARE] = { "share", true, ALL_CMDS },
	[O_SHARE_RO] = { "share-ro", true, ALL_CMDS },
	[O_OFFSET] = { "offset", true, CMD(VGG_FILE) },
	[O_LENGTH] = { "length", true, CMD(VGG_FILE) },
	[O_EXPECT_FNV] = { "expect-fnv", true, CMD(VGG_FILE) },
	[O_EXPECT_PATTERN] = { "expect-pattern", true, CMD(VGG_FILE) },
	[O_PATTERN] = { "pattern", true, CMD(VGG_FILE) },
	[O_ROWS] = { "rows", true, CMD(VGG_FILE) },
	[O_ROW_BYTES] = { "row-bytes", true, CMD(VGG_FILE) },
	[O_HALF] = { "half", true, CMD(VGG_FILE) },
	[O_RW] = { "rw", false, CMD(VGG_FILE) },
	[O_EXPECT_ERROR] = { "expect-error", true, CMD(VGG_FILE) },
	[O_HOLD_AFTER] = { "hold-after", true, CMD(VGG_FILE) },
};

static const char usage_all[] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) [--ram SIZE] COMMAND [options]\n"
	"\n"
	"  info                          query limits, statistics and shares\n"
	"  workload KIND --ws SIZE [--iters N] [--seed S] [--bo SIZE]\n"
	"                                KIND: stream, strided, gather, hotcold\n"
	"  fill-check --size SIZE [--bo SIZE] [--loops N] [--seed S] [--hold SECONDS]\n"
	"  submit-loop --count N\n"
	"  alloc --size SIZE [--hold SECONDS] [--bo SIZE]\n"
	"  hostile KIND [--count N]      KIND: wild-va, bad-entry, bad-method,\n"
	"                                bad-ctrl, ring-outside, flood, bar\n"
	"  bench {submit|memcpy} [--count N] [--size SIZE]\n"
	"                                timings (docs/vgmem-guest.md)\n"
	"  file {read|write|hold|sync} SHARE PATH [options]\n"
	"                                share files through the LRC file cache\n"
	"  share {bind TAG DIR | unbind TAG}\n"
	"                                (--pci, root) bind a virtio-fs mount to its tag\n"
	"\n"
	"  --dev UUID     the vGPU mdev, opened through VFIO\n"
	"  --pci DEV      inside a VM: the vGPU through the guest driver,\n"
	"                 /dev/vgmemN, or 'auto' for the first one\n"
	"  --ram SIZE     guest RAM to DMA-map (default 16M)\n"
	"  --inproc       run against an in-process host instead (software GPU;\n"
	"                 vgmem-guest-inproc only: a tenant's vgmem-guest has none)\n"
	"  --vram SIZE    with --inproc: the GPU's VRAM (default 256M)\n"
	"  --quota SIZE   with --inproc: the guest's quota (default none)\n"
	"  --share ID=DIR, --share-ro ID=DIR\n"
	"                 with --inproc: give the guest DIR as share ID\n"
	"\n"
	"SIZE takes K, M, G, T suffixes (powers of 1024). `vgmem-guest COMMAND --help`\n"
	"explains a command. Exit 0: ok, 1: a check failed, 2: usage. The last line\n"
	"is \"RESULT ok <details>\" or \"RESULT fail <details>\".\n";

static const char *const usage_cmd[VGG_CMD_NR] = {
	[VGG_INFO] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) info\n"
	"Queries the device (ABI version, channels, quota, chunk size, VA range)\n"
	"and its statistics and prints them as \"name value\" lines, then the VM's\n"
	"shares (\"shares N\", then \"share id=ID ro=0|1 tag=TAG\" each; tag= is\n"
	"empty for a share without a virtio-fs tag). Checks the ABI version and\n"
	"the limits are sane.\n",
	[VGG_WORKLOAD] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) workload {stream|strided|gather|hotcold}\n"
	"         --ws SIZE [--iters N] [--seed S] [--bo SIZE]\n"
	"Allocates a working set of --ws bytes in BOs of --bo (default: 4M or less)\n"
	"and runs --iters (default 10) steps of the built-in workload, seeded by\n"
	"--seed (default 1). Fails on any error or channel fault.\n",
	[VGG_FILL_CHECK] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) fill-check --size SIZE [--bo SIZE]\n"
	"         [--loops N] [--seed S] [--hold SECONDS]\n"
	"Allocates --size bytes in BOs of --bo (default: 4M or less); each loop\n"
	"(default 1) fills every BO with FILL_PATTERN under a new seed and checks\n"
	"the GPU's checksum of each against the CPU's. With --hold, keeps checking\n"
	"the last patterns for that many seconds (SIGTERM or SIGINT ends the hold\n"
	"early; the round under way finishes). Frees everything at the end.\n",
	[VGG_SUBMIT_LOOP] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) submit-loop --count N\n"
	"Submits N GPFIFO entries as fast as the ring allows. Entry i waits for a\n"
	"semaphore to hold i - 1 and then releases i, so entries that ran out of\n"
	"order would never finish; ENTRIES_DONE must only grow and end at the\n"
	"number submitted, the semaphore at N.\n",
	[VGG_ALLOC] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) alloc --size SIZE [--hold SECONDS]\n"
	"         [--bo SIZE]\n"
	"Allocates --size bytes in BOs of --bo (default: all in one up to 64M),\n"
	"fills them, holds them for --hold seconds (default 0; SIGTERM or SIGINT\n"
	"ends the hold early), checks a sample page of every chunk, and frees them.\n",
	[VGG_HOSTILE] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) hostile KIND [--count N]\n"
	"Does one bad thing and checks it got exactly the documented error, then\n"
	"that a fresh channel still works:\n"
	"  wild-va       kernel on an unmapped GPU VA: channel error VA (5)\n"
	"  bad-entry     reserved bits, zero length, GP_PUT out of range: GPFIFO\n"
	"                (1); pushbuffer outside guest memory: PUSHBUF (2)\n"
	"  bad-method    unknown method, bad header type, data past the end:\n"
	"                METHOD (3); unbound subchannel, unknown class: CLASS (4)\n"
	"  bad-ctrl      malformed control commands: -EINVAL, -ENOENT, -ENOSPC;\n"
	"                with --dev also a doorbell too far ahead: CTRLQ_ERROR\n"
	"  ring-outside  GPFIFO rings outside guest memory: -EINVAL; with --dev\n"
	"                also the control ring outside the DMA map: CTRLQ_ERROR\n"
	"  flood         --count (default 4096) control commands in full-ring\n"
	"                batches and as many GPFIFO entries: none lost or failed\n"
	"  bar           (--dev only) every BAR2 page without a channel reads 0\n"
	"                and takes writes harmlessly; a new channel's page shows\n"
	"                up in an older mapping; ERR IRQ index refused, REQ works\n",
	[VGG_BENCH] =
	"usage: vgmem-guest (--dev UUID | --pci DEV | --inproc) bench {submit|memcpy} [--count N]\n"
	"         [--size SIZE]\n"
	"  submit  --count (default 2000) single-entry round trips (submit, wait for\n"
	"          GP_GET), each a semaphore release after a MEMSET of --size bytes\n"
	"          if given; prints latency percentiles in microseconds\n"
	"  memcpy  --count (default 9) CPU copies of --size bytes in 4 KiB pieces;\n"
	"          prints their times in microseconds\n"
	"Never fails on timing; fails on any device error.\n",
	[VGG_FILE] =
	"usage: vgmem-guest (--dev UUID | --inproc --share ID=DIR) file KIND SHARE PATH\n"
	"         [--offset SIZE] [--length SIZE] [--expect-error ENAME] ...\n"
	"Maps [--offset, --offset + --length) (64 KiB multiples; default 0 and 64K,\n"
	"or --rows x --row-bytes rounded up) of PATH (relative to the root of the\n"
	"VM's share SHARE) into the GPU's address space and:\n"
	"  read  [--expect-fnv HEX | --expect-pattern SEED[,SEED2]]\n"
	"         [--rows N --row-bytes SIZE]\n"
	"        acquire, GPU FNV-1a checksum of the range (or of the rows), release;\n"
	"        prints it and compares it with the expectation if one is given\n"
	"  write --pattern SEED [--rows N --row-bytes SIZE] [--half 0|1]\n"
	"         [--hold SECONDS] [--hold-after SECONDS]\n"
	"        map read-write, acquire, fill each row (or its first or second\n"
	"        half) with FILL_PATTERN, check it, (with --hold: print \"file\n"
	"        hold-before-release\" and wait that long or until SIGTERM or\n"
	"        SIGINT), release, sync;\n"
	"        with --hold-after: print \"file hold-after-sync ready\" and keep\n"
	"        the map until SIGTERM or SIGINT (or that many seconds), then unmap\n"
	"  hold  [--rw] [--expect-fnv HEX | --expect-pattern ...] [--hold SECONDS]\n"
	"        acquire, checksum, print \"file hold ready\", then until SIGTERM or\n"
	"        SIGINT (or --hold seconds): SIGUSR1 checksums without acquiring,\n"
	"        SIGUSR2 acquires and checksums\n"
	"  sync  FILE_SYNC the range (write the newest released version to the file)\n"
	"Row r of a pattern is FILL_PATTERN with seed SEED + r from the start of the\n"
	"row (or half); --expect-pattern SEED,SEED2 means first halves SEED + r,\n"
	"second halves SEED2 + r. --expect-error ENAME (EACCES, ENOENT, EINVAL,\n"
	"EFBIG, ENAMETOOLONG, ...) succeeds only if the map fails with exactly that.\n"
	"Errors are reported with their errno name and meaning (docs/abi.md).\n"
	"With --pci, PATH is opened on the virtio-fs mount bound to SHARE's tag\n"
	"(vgmem-guest share bind) and mapped from the open file.\n",
	[VGG_SHARE] =
	"usage: vgmem-guest --pci DEV share bind TAG DIR\n"
	"       vgmem-guest --pci DEV share unbind TAG\n"
	"Inside a VM, as root: tells the guest driver that the virtio-fs mount\n"
	"whose root is DIR was mounted with tag TAG (mount -t virtiofs TAG DIR),\n"
	"which must be one of the vGPU's shares (see info). Files on it can then\n"
	"be mapped onto the GPU by any process that can open them and the\n"
	"device. The binding holds the mount: unbind it before umount (umount\n"
	"fails with EBUSY otherwise). docs/guest.md explains it.\n",
};

static int find_name(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

int vgg_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		v = strtoull(s + 2, &end, 16);
	else
		v = strtoull(s, &end, 10);
	if (errno || *end || end == s || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && !s[2]))
		return -EINVAL;
	*out = v;
	return 0;
}

/* vgmem-guest's size syntax: size.h, VG_SIZE_GUEST. */
int vgg_parse_size(const char *s, uint64_t *out)
{
	return vg_parse_size(s, VG_SIZE_GUEST, out);
}

static int usage(struct vgg_ctx *c, int cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int usage(struct vgg_ctx *c, int cmd, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(c->err, "vgmem-guest: %s\n", msg);
	fputs(cmd >= 0 ? usage_cmd[cmd] : usage_all, c->err);
	fprintf(c->out, "RESULT fail usage: %s\n", msg);
	fflush(c->out);
	return VGG_USAGE;
}

static int to_u32(const char *v, uint32_t *out, uint32_t min)
{
	uint64_t x;

	if (vgg_parse_u64(v, &x) || x < min || x > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

static int parse_file(struct vgg_ctx *c, struct vgg_opts *o, const char *val[O_NR],
		      const char *share_arg);

/* Convert and check what was given; everything else gets its default. */
static int parse_values(struct vgg_ctx *c, struct vgg_opts *o, const char *val[O_NR],
			const char *share_arg)
{
	int cmd = (int)o->cmd;
	char *end;

	if (!!val[O_DEV] + !!val[O_PCI] + o->inproc != 1)
		return usage(c, cmd, "give exactly one of --dev UUID, --pci DEV and --inproc");
	o->uuid = val[O_DEV];
	o->pci = val[O_PCI] != NULL;
	o->pci_path = val[O_PCI] && strcmp(val[O_PCI], "auto") ? val[O_PCI] : NULL;
	if (val[O_RAM] && o->pci)
		return usage(c, cmd, "--ram does not go with --pci (the driver gives DMA buffers)");
	if ((val[O_VRAM] || val[O_QUOTA]) && !o->inproc)
		return usage(c, cmd, "--vram and --quota only go with --inproc");
	if (val[O_RAM] && (vgg_parse_size(val[O_RAM], &o->ram) || !o->ram))
		return usage(c, cmd, "--ram: '%s' is not a size", val[O_RAM]);
	o->vram = INPROC_VRAM_DEFAULT;
	if (val[O_VRAM] && (vgg_parse_size(val[O_VRAM], &o->vram) || !o->vram))
		return usage(c, cmd, "--vram: '%s' is not a size", val[O_VRAM]);
	if (val[O_QUOTA] && vgg_parse_size(val[O_QUOTA], &o->quota))
		return usage(c, cmd, "--quota: '%s' is not a size", val[O_QUOTA]);
	if (val[O_WS] && (vgg_parse_size(val[O_WS], &o->ws) || !o->ws))
		return usage(c, cmd, "--ws: '%s' is not a size", val[O_WS]);
	if (val[O_SIZE] && (vgg_parse_size(val[O_SIZE], &o->size) || !o->size))
		return usage(c, cmd, "--size: '%s' is not a size", val[O_SIZE]);
	if (val[O_BO] && (vgg_parse_size(val[O_BO], &o->bo) || !o->bo))
		return usage(c, cmd, "--bo: '%s' is not a size", val[O_BO]);
	o->seed = 1;
	if (val[O_SEED] && vgg_parse_u64(val[O_SEED], &o->seed))
		return usage(c, cmd, "--seed: '%s' is not a number", val[O_SEED]);
	o->iters = 10;
	if (val[O_ITERS] && to_u32(val[O_ITERS], &o->iters, 1))
		return usage(c, cmd, "--iters: '%s' is not a number from 1", val[O_ITERS]);
	o->loops = 1;
	if (val[O_LOOPS] && to_u32(val[O_LOOPS], &o->loops, 1))
		return usage(c, cmd, "--loops: '%s' is not a number from 1", val[O_LOOPS]);
	o->count = o->cmd == VGG_HOSTILE ? 4096 : 0;
	if (val[O_COUNT] && to_u32(val[O_COUNT], &o->count, 1))
		return usage(c, cmd, "--count: '%s' is not a number from 1", val[O_COUNT]);
	if (val[O_SHARE] && val[O_SHARE_RO])
		return usage(c, cmd, "give one of --share and --share-ro");
	if (val[O_SHARE] || val[O_SHARE_RO]) {
		const char *s = val[O_SHARE] ? val[O_SHARE] : val[O_SHARE_RO];
		const char *eqs = strchr(s, '=');
		char id[24];

		if (!o->inproc)
			return usage(c, cmd, "--share and --share-ro only go with --inproc");
		if (!eqs || eqs == s || (size_t)(eqs - s) >= sizeof(id) || !eqs[1])
			return usage(c, cmd, "--share: '%s' is not ID=DIR", s);
		memcpy(id, s, (size_t)(eqs - s));
		id[eqs - s] = 0;
		if (to_u32(id, &o->share_dir_id, 0))
			return usage(c, cmd, "--share: '%s' is not ID=DIR", s);
		o->share_dir = eqs + 1;
		o->share_dir_ro = !!val[O_SHARE_RO];
	}
	if (val[O_HOLD]) {
		errno = 0;
		o->hold = strtod(val[O_HOLD], &end);
		if (errno || *end || end == val[O_HOLD] || !isfinite(o->hold) ||
		    o->hold < 0 || o->hold > 1e7)
			return usage(c, cmd, "--hold: '%s' is not a number of seconds",
				     val[O_HOLD]);
	}

	switch (o->cmd) {
	case VGG_WORKLOAD:
		if (o->kind < 0)
			return usage(c, cmd, "workload needs a kind");
		if (!o->ws)
			return usage(c, cmd, "workload needs --ws SIZE");
		if (o->bo > o->ws)
			return usage(c, cmd, "--bo is larger than --ws");
		break;
	case VGG_FILL_CHECK:
	case VGG_ALLOC:
		if (!o->size)
			return usage(c, cmd, "%s needs --size SIZE", cmd_names[cmd]);
		if (o->bo > o->size)
			return usage(c, cmd, "--bo is larger than --size");
		break;
	case VGG_SUBMIT_LOOP:
		if (!o->count)
			return usage(c, cmd, "submit-loop needs --count N");
		break;
	case VGG_HOSTILE:
		if (o->kind < 0)
			return usage(c, cmd, "hostile needs a kind");
		break;
	case VGG_FILE:
		return parse_file(c, o, val, share_arg);
	case VGG_SHARE:
		if (!o->pci)
			return usage(c, cmd, "share goes with --pci (a vGPU inside a VM)");
		if (!o->tag)
			return usage(c, cmd, "share needs bind TAG DIR or unbind TAG");
		if (o->share_bind != !!o->dir)
			return usage(c, cmd, o->share_bind ? "share bind needs TAG and DIR" :
				     "share unbind takes only TAG");
		if (!vgmem_share_tag_ok(o->tag))
			return usage(c, cmd, "'%s' is not a virtio-fs tag (1-%d bytes, no '/' or control characters)",
				     o->tag, VGMEM_SHARE_TAG_MAX);
		break;
	case VGG_BENCH:
		if (o->kind < 0)
			return usage(c, cmd, "bench needs a kind");
		if (o->kind == VGG_B_MEMCPY && !o->size)
			return usage(c, cmd, "bench memcpy needs --size SIZE");
		break;
	default:
		break;
	}
	return VGG_OK;
}

/* The file command's positional arguments and options (vgg_file.c). */
static int parse_file(struct vgg_ctx *c, struct vgg_opts *o, const char *val[O_NR],
		      const char *share_arg)
{
	const int cmd = VGG_FILE;
	uint64_t rows = 0, half, need, x;
	const char *comma;
	char *end;

	o->half = -1;
	if (o->kind < 0)
		return usage(c, cmd, "file needs a kind: read, write, hold or sync");
	if (!share_arg || !o->path)
		return usage(c, cmd, "file %s needs SHARE and PATH", vgg_file_kind_name(o->kind));
	if (to_u32(share_arg, &o->share, 0))
		return usage(c, cmd, "SHARE: '%s' is not a share id", share_arg);
	if (val[O_OFFSET] && vgg_parse_size(val[O_OFFSET], &o->offset))
		return usage(c, cmd, "--offset: '%s' is not a size", val[O_OFFSET]);
	if (val[O_LENGTH] && (vgg_parse_size(val[O_LENGTH], &o->length) || !o->length))
		return usage(c, cmd, "--length: '%s' is not a size", val[O_LENGTH]);
	if (val[O_ROWS] && (vgg_parse_u64(val[O_ROWS], &rows) || !rows || rows > UINT32_MAX))
		return usage(c, cmd, "--rows: '%s' is not a number from 1", val[O_ROWS]);
	o->rows = (uint32_t)rows;
	if (val[O_ROW_BYTES] && (vgg_parse_size(val[O_ROW_BYTES], &o->row_bytes) ||
				 !o->row_bytes || o->row_bytes % 8))
		return usage(c, cmd, "--row-bytes: '%s' is not a multiple of 8 bytes",
			     val[O_ROW_BYTES]);
	if (o->row_bytes && !o->rows)
		o->rows = 1;
	if (o->rows && !o->row_bytes)
		return usage(c, cmd, "--rows needs --row-bytes");
	if (o->rows && o->row_bytes > (64ull << 30) / o->rows)
		return usage(c, cmd, "--rows x --row-bytes is above 64 GiB");
	need = o->rows ? (uint64_t)o->rows * o->row_bytes : 0;
	if (!o->length)
		o->length = need ? (need + VGMEM_FILE_ALIGN - 1) & ~(VGMEM_FILE_ALIGN - 1) :
			    VGMEM_FILE_ALIGN;
	if (need > o->length)
		return usage(c, cmd, "--rows x --row-bytes is more than --length");
	if (val[O_HALF]) {
		if (o->kind != VGG_F_WRITE)
			return usage(c, cmd, "--half goes with file write");
		if (vgg_parse_u64(val[O_HALF], &half) || half > 1)
			return usage(c, cmd, "--half: '%s' is not 0 or 1", val[O_HALF]);
		o->half = (int)half;
	}
	if (val[O_PATTERN]) {
		if (o->kind != VGG_F_WRITE)
			return usage(c, cmd, "--pattern goes with file write");
		if (vgg_parse_u64(val[O_PATTERN], &x) || x > UINT32_MAX)
			return usage(c, cmd, "--pattern: '%s' is not a 32-bit seed",
				     val[O_PATTERN]);
		o->pattern = (uint32_t)x;
		o->have_pattern = true;
	}
	if (o->kind == VGG_F_WRITE && !o->have_pattern && !val[O_EXPECT_ERROR])
		return usage(c, cmd, "file write needs --pattern SEED");
	if ((val[O_EXPECT_FNV] || val[O_EXPECT_PATTERN]) &&
	    o->kind != VGG_F_READ && o->kind != VGG_F_HOLD)
		return usage(c, cmd, "--expect-fnv and --expect-pattern go with read and hold");
	if (val[O_EXPECT_FNV] && val[O_EXPECT_PATTERN])
		return usage(c, cmd, "give one of --expect-fnv and --expect-pattern");
	if (val[O_EXPECT_FNV]) {
		errno = 0;
		x = strtoull(val[O_EXPECT_FNV], &end, 16);
		if (errno || *end || end == val[O_EXPECT_FNV] || val[O_EXPECT_FNV][0] == '-' ||
		    val[O_EXPECT_FNV][0] == '+' || val[O_EXPECT_FNV][0] == ' ')
			return usage(c, cmd, "--expect-fnv: '%s' is not a hexadecimal number",
				     val[O_EXPECT_FNV]);
		o->expect_fnv = x;
		o->have_fnv = true;
	}
	if (val[O_EXPECT_PATTERN]) {
		const char *s = val[O_EXPECT_PATTERN];
		char first[24];

		comma = strchr(s, ',');
		if (comma && ((size_t)(comma - s) >= sizeof(first) || comma == s))
			return usage(c, cmd, "--expect-pattern: '%s' is not SEED[,SEED2]", s);
		if (comma) {
			memcpy(first, s, (size_t)(comma - s));
			first[comma - s] = 0;
		}
		if (to_u32(comma ? first : s, &o->expect_seed[0], 0) ||
		    (comma && to_u32(comma + 1, &o->expect_seed[1], 0)))
			return usage(c, cmd, "--expect-pattern: '%s' is not SEED[,SEED2]", s);
		o->nexpect = comma ? 2 : 1;
	}
	if (val[O_RW] && o->kind != VGG_F_HOLD)
		return usage(c, cmd, "--rw goes with file hold");
	if (val[O_HOLD] && o->kind != VGG_F_HOLD && o->kind != VGG_F_WRITE)
		return usage(c, cmd, "--hold goes with file hold and file write");
	if (val[O_HOLD_AFTER]) {
		if (o->kind != VGG_F_WRITE)
			return usage(c, cmd, "--hold-after goes with file write");
		errno = 0;
		o->hold_after = strtod(val[O_HOLD_AFTER], &end);
		if (errno || *end || end == val[O_HOLD_AFTER] ||
		    !isfinite(o->hold_after) || o->hold_after <= 0 ||
		    o->hold_after > 1e7)
			return usage(c, cmd, "--hold-after: '%s' is not a number of seconds",
				     val[O_HOLD_AFTER]);
	}
	if (val[O_EXPECT_ERROR]) {
		if (!vgg_file_errno(val[O_EXPECT_ERROR]))
			return usage(c, cmd, "--expect-error: '%s' is not an error name (EACCES, ENOENT, ...)",
				     val[O_EXPECT_ERROR]);
		o->expect_error = val[O_EXPECT_ERROR];
	}
	return VGG_OK;
}

/* argv -> opts; VGG_OK, VGG_USAGE (printed), or -1 after printing help. */
static int parse(struct vgg_ctx *c, int argc, char **argv, struct vgg_opts *o)
{
	const char *val[O_NR] = { 0 };
	bool help = false, have_cmd = false;
	const char *a, *eq, *v, *share_arg = NULL;
	size_t len;
	int i, id, k;

	memset(o, 0, sizeof(*o));
	o->kind = -1;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help = true;
			continue;
		}
		if (a[0] == '-' && a[1] == '-' && a[2]) {
			eq = strchr(a + 2, '=');
			len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			for (id = 0; id < O_NR; id++)
				if (strlen(opts[id].name) == len &&
				    !strncmp(opts[id].name, a + 2, len))
					break;
			if (id == O_NR)
				return usage(c, have_cmd ? (int)o->cmd : -1,
					     "unknown option %s", a);
			if (!opts[id].arg) {
				if (eq)
					return usage(c, -1, "--%s takes no value", opts[id].name);
				val[id] = "";
				if (id == O_INPROC)
					o->inproc = true;
				if (id == O_RW)
					o->rw = true;
				continue;
			}
			if (eq) {
				v = eq + 1;
			} else {
				if (i + 1 >= argc)
					return usage(c, have_cmd ? (int)o->cmd : -1,
						     "--%s needs a value", opts[id].name);
				v = argv[++i];
			}
			val[id] = v;
			continue;
		}
		if (a[0] == '-' && !help)
			return usage(c, have_cmd ? (int)o->cmd : -1, "unknown option %s", a);
		if (!have_cmd) {
			k = find_name(cmd_names, VGG_CMD_NR, a);
			if (k < 0)
				return usage(c, -1, "unknown command '%s'", a);
			o->cmd = (enum vgg_cmd)k;
			have_cmd = true;
		} else if (o->cmd == VGG_WORKLOAD && o->kind < 0) {
			k = 0;
			while (k < VGMEM_WL_NR && strcmp(vgmem_workload_name(k), a))
				k++;
			if (k == VGMEM_WL_NR)
				return usage(c, (int)o->cmd, "unknown workload '%s'", a);
			o->kind = k;
		} else if (o->cmd == VGG_HOSTILE && o->kind < 0) {
			k = find_name(hostile_names, VGG_H_NR, a);
			if (k < 0)
				return usage(c, (int)o->cmd, "unknown hostile kind '%s'", a);
			o->kind = k;
		} else if (o->cmd == VGG_FILE && o->kind < 0) {
			k = vgg_file_kind(a);
			if (k < 0)
				return usage(c, (int)o->cmd, "unknown file kind '%s'", a);
			o->kind = k;
		} else if (o->cmd == VGG_FILE && !share_arg) {
			share_arg = a;
		} else if (o->cmd == VGG_FILE && !o->path) {
			o->path = a;
		} else if (o->cmd == VGG_SHARE && o->kind < 0) {
			if (strcmp(a, "bind") && strcmp(a, "unbind"))
				return usage(c, (int)o->cmd, "unknown share action '%s'", a);
			o->kind = 0;
			o->share_bind = !strcmp(a, "bind");
		} else if (o->cmd == VGG_SHARE && !o->tag) {
			o->tag = a;
		} else if (o->cmd == VGG_SHARE && o->share_bind && !o->dir) {
			o->dir = a;
		} else if (o->cmd == VGG_BENCH && o->kind < 0) {
			k = vgg_bench_kind(a);
			if (k < 0)
				return usage(c, (int)o->cmd, "unknown bench kind '%s'", a);
			o->kind = k;
		} else {
			return usage(c, (int)o->cmd, "unexpected argument '%s'", a);
		}
	}
	if (help) {
		fputs(have_cmd ? usage_cmd[o->cmd] : usage_all, c->out);
		fflush(c->out);
		return -1;
	}
	if (!have_cmd)
		return usage(c, -1, "no command given");
	for (id = 0; id < O_NR; id++)
		if (val[id] && !(opts[id].cmds & CMD(o->cmd)))
			return usage(c, (int)o->cmd, "--%s does not go with %s",
				     opts[id].name, cmd_names[o->cmd]);
	return parse_values(c, o, val, share_arg);
}

static int open_dev(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	char why[256];
	int ret;

	if (o->pci) {
		const char *what = o->pci_path ? o->pci_path : "the first vGPU";

		ret = vgmem_open_pci(o->pci_path, &c->dev);
		if (ret) {
			fprintf(c->err, "vgmem-guest: opening %s: %s\n", what,
				vgmem_pci_error());
			return vgg_detail(c, VGG_FAIL, "open %s: %s", what,
					  vgmem_pci_error());
		}
		c->pci = true;
		return VGG_OK;
	}
	if (!o->inproc) {
		ret = vgmem_open_vfio(o->uuid, o->ram, &c->dev);
		if (ret) {
			fprintf(c->err, "vgmem-guest: opening %s: %s\n", o->uuid,
				vgmem_vfio_error());
			return vgg_detail(c, VGG_FAIL, "open %s: %s", o->uuid,
					  vgmem_vfio_error());
		}
		c->vfio = true;
		return VGG_OK;
	}
	ret = c->inproc->open(o, &c->dev, &c->inproc_priv, why, sizeof(why));
	if (ret)
		return vgg_detail(c, VGG_FAIL, "%s", why);
	return VGG_OK;
}

static void close_dev(struct vgg_ctx *c)
{
	if (c->vfio)
		vgmem_close_vfio(c->dev);
	else if (c->pci)
		vgmem_close_pci(c->dev);
	else if (c->inproc_priv)
		c->inproc->close(c->inproc_priv);	/* the device too */
	c->dev = NULL;
	c->inproc_priv = NULL;
}

int vgg_main(int argc, char **argv, FILE *out, FILE *err,
	     const struct vgg_inproc *inproc)
{
	static int (*const run[VGG_CMD_NR])(struct vgg_ctx *) = {
		[VGG_INFO] = vgg_cmd_info,
		[VGG_WORKLOAD] = vgg_cmd_workload,
		[VGG_FILL_CHECK] = vgg_cmd_fill_check,
		[VGG_SUBMIT_LOOP] = vgg_cmd_submit_loop,
		[VGG_ALLOC] = vgg_cmd_alloc,
		[VGG_HOSTILE] = vgg_cmd_hostile,
		[VGG_BENCH] = vgg_cmd_bench,
		[VGG_FILE] = vgg_cmd_file,
		[VGG_SHARE] = vgg_cmd_share,
	};
	struct vgg_opts o;
	struct vgg_ctx c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.out = out;
	c.err = err;
	c.o = &o;
	c.inproc = inproc;
	ret = parse(&c, argc, argv, &o);
	if (ret < 0)
		return VGG_OK;		/* --help */
	if (ret)
		return ret;
	if (o.inproc && !inproc)
		return usage(&c, (int)o.cmd, "--inproc runs the software GPU in "
			     "this process: that is the host's side, in "
			     "vgmem-guest-inproc; this vgmem-guest opens a vGPU "
			     "(--dev, --pci)");
	ret = open_dev(&c);
	if (!ret) {
		ret = run[o.cmd](&c);
		close_dev(&c);
	}
	fprintf(out, "RESULT %s %s\n", ret ? "fail" : "ok", c.detail);
	fflush(out);
	return ret ? VGG_FAIL : VGG_OK;
}
