// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The control-command dispatcher (host-module/core/ctrl.c, vg_ctrl_exec:
 * what the kernel's control queue runs for every slot a guest writes) on
 * a live userspace host: a 4 MiB GPU with a peer VM holding a BO, and for
 * each input a fresh VM "evil" (a quota of 16 MiB) with two shares (one
 * read-write, one read-only, each with a file, a directory and a symlink)
 * that runs the input's commands in order.
 *
 * An input is a list of records: op (1 byte: bits 0-3 the op, bit 4: put
 * the last VA a command returned into the va field, bit 5: put the last
 * channel id into chan_id), n (1 byte), then n bytes copied into the
 * command's union from its start; the rest of the slot is zero.
 *
 * Invariants, after each command: status is 0 or a negative errno; a
 * failed command changed nothing (evil's allocated bytes and the GPU's
 * VRAM plus host bytes; a relocation may move chunks between the two);
 * QUERY returns the ABI's constants; BO_ALLOC returns a page-aligned VA
 * inside the VA space and raises evil's allocated bytes by exactly the
 * size; BO_FREE lowers them; STATS agrees with the core's own count.
 * After the input: the VM's destruction gives every byte back (the GPU's
 * VRAM plus host bytes are the peer's again), vg_gpu_check passes, and the
 * peer's BO reads back its pattern through its own channel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "host-module/user/host.h"
#include "fuzz_util.h"

#define MiB		(1ull << 20)
#define PEER_BO		(64 << 10)
/*
 * A small GPU keeps the pressure paths busy: 64 chunks of VRAM and 8 MiB of
 * host RAM beside the file cache's 16 MiB staging buffer. Chunks are the
 * smallest the core takes (VG_CHUNK_MIN): every byte of a BO is zeroed and
 * every relocation copies whole chunks, and with 2 MiB chunks on a 32 MiB
 * GPU that work (with ASan's fresh mapping for each large allocation), not
 * the dispatcher, took most of each input's time. The core's paths are the
 * same at any chunk size.
 */
#define CHUNK		(64 << 10)
#define PEER_SEED	0x9ee7
/*
 * evil's quota: four times the VRAM and above what the GPU can hold for it
 * (4 MiB of VRAM and about 8 MiB of host RAM beside the staging buffer), so
 * an allocation can still pass admission, send chunks of both VMs to host
 * RAM and fail placing its own, the rollback the invariants watch. Without
 * a quota (which mgmtd never leaves a VM) a BO may be up to
 * VGMEM_BO_MAX_SIZE: such an allocation chose and rolled back up to a
 * million chunks, one at a time, and the corpus had filled with inputs
 * repeating it, 1.5 to 280 ms each, nine tenths of all the time spent.
 */
#define EVIL_QUOTA	(16 * MiB)

static struct {
	struct vg_host *h;
	struct vg_host_guest *peer;
	struct vgmem_chan *pch;
	uint64_t pva, baseline;
	uint8_t *pattern, *readback;
	char dir[2][64];
} w;

static void mkfile(const char *dir, const char *name, size_t bytes)
{
	char path[128], buf[4096];
	size_t done;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		fuzz_die("setup: %s", path);
	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < bytes; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			fuzz_die("setup: write %s", path);
	close(fd);
}

static void cleanup(void)
{
	char cmd[200];
	int i;

	for (i = 0; i < 2; i++) {
		if (!w.dir[i][0])
			continue;
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", w.dir[i]);
		if (system(cmd))
			fprintf(stderr, "fuzz_ctrl: could not remove %s\n", w.dir[i]);
	}
}

static uint64_t gpu_bytes(void)
{
	struct vg_gpu_stats st;

	vg_gpu_get_stats(vg_host_gpu(w.h), &st);
	return st.vram_used + st.host_used;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct vg_host_config cfg;
	const char *tmp = getenv("TMPDIR");
	char path[128];
	uint32_t i;
	int j;

	(void)argc;
	(void)argv;
	for (j = 0; j < 2; j++) {
		snprintf(w.dir[j], sizeof(w.dir[j]), "%s/vgfuzz-ctrl.XXXXXX",
			 tmp ? tmp : "/tmp");
		if (!mkdtemp(w.dir[j]))
			fuzz_die("setup: mkdtemp");
		mkfile(w.dir[j], "f", 192 << 10);
		snprintf(path, sizeof(path), "%s/d", w.dir[j]);
		mkdir(path, 0755);
		mkfile(path, "g", 64 << 10);
		snprintf(path, sizeof(path), "%s/l", w.dir[j]);
		if (symlink("f", path))
			fuzz_die("setup: symlink");
	}
	atexit(cleanup);

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = 4 * MiB;
	cfg.sim.host_limit = 24 * MiB;
	/*
	 * Freed VRAM stays resident, zeroed in place: every input allocates
	 * and frees the whole GPU, and giving it back to the kernel and
	 * faulting it in again (with a TLB shootdown in each of this
	 * process's threads) was a quarter of an input's time.
	 */
	cfg.sim.vram_retain = 4 * MiB;
	cfg.gpu.name = "fuzz";
	cfg.gpu.chunk_size = CHUNK;
	cfg.gpu.seed = 1;
	cfg.gpu.no_return_worker = true;
	cfg.lrc_vram_budget = 1 * MiB;
	cfg.lrc_host_budget = 1 * MiB;
	if (vg_host_create(&cfg, &w.h) ||
	    vg_host_guest_create(w.h, "peer", 0, 1 * MiB, &w.peer) ||
	    vgmem_chan_create(vg_host_guest_dev(w.peer), 16, 4096, PEER_BO, &w.pch) ||
	    vgmem_bo_alloc(vg_host_guest_dev(w.peer), PEER_BO, &w.pva) ||
	    vgmem_fill_pattern(w.pch, w.pva, PEER_BO, PEER_SEED))
		fuzz_die("setup: host and peer");
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

static uint64_t allocated(struct vg_vm *vm)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(vm, &st);
	return st.allocated;
}

/* alloc0, gpu0: evil's allocated bytes and the GPU's bytes before; 1: after. */
static void check_one(const struct vgmem_ctrl *in, const struct vgmem_ctrl *c,
		      uint64_t alloc0, uint64_t alloc1, uint64_t gpu0,
		      uint64_t gpu1)
{

	if (c->status > 0 || c->status < -4095)
		fuzz_die("op %u: status %d is not 0 or a negative errno",
			 in->op, c->status);
	if (c->status) {
		if (alloc1 != alloc0 || gpu1 != gpu0)
			fuzz_die("op %u failed with %d but changed the accounting: "
				 "allocated %llu -> %llu, GPU bytes %llu -> %llu",
				 in->op, c->status, (unsigned long long)alloc0,
				 (unsigned long long)alloc1,
				 (unsigned long long)gpu0,
				 (unsigned long long)gpu1);
		return;
	}
	switch (in->op) {
	case VGMEM_CTRL_QUERY:
		if (c->query.abi_version != VGMEM_ABI_VERSION ||
		    c->query.va_start != VGMEM_VA_START ||
		    c->query.va_end != VGMEM_VA_END ||
		    c->query.chunk_size != CHUNK)
			fuzz_die("QUERY: not the ABI's constants");
		break;
	case VGMEM_CTRL_BO_ALLOC:
		if (c->bo.va < VGMEM_VA_START || c->bo.va >= VGMEM_VA_END ||
		    c->bo.va % VGMEM_PAGE_SIZE ||
		    c->bo.size > VGMEM_VA_END - c->bo.va)
			fuzz_die("BO_ALLOC: va %#llx size %#llx outside the VA space",
				 (unsigned long long)c->bo.va,
				 (unsigned long long)c->bo.size);
		if ((in->bo.flags & VGMEM_BO_FIXED_VA) && c->bo.va != in->bo.va)
			fuzz_die("BO_ALLOC: fixed VA %#llx placed at %#llx",
				 (unsigned long long)in->bo.va,
				 (unsigned long long)c->bo.va);
		if (alloc1 != alloc0 + in->bo.size)
			fuzz_die("BO_ALLOC of %llu: allocated %llu -> %llu",
				 (unsigned long long)in->bo.size,
				 (unsigned long long)alloc0,
				 (unsigned long long)alloc1);
		break;
	case VGMEM_CTRL_BO_FREE:
		if (alloc1 >= alloc0)
			fuzz_die("BO_FREE: allocated %llu -> %llu",
				 (unsigned long long)alloc0,
				 (unsigned long long)alloc1);
		break;
	case VGMEM_CTRL_STATS:
		if (c->stats.allocated != alloc1)
			fuzz_die("STATS: allocated %llu, the core counts %llu",
				 (unsigned long long)c->stats.allocated,
				 (unsigned long long)alloc1);
		break;
	case VGMEM_CTRL_FILE_MAP:
		if (c->file_map.va < VGMEM_VA_START || c->file_map.va >= VGMEM_VA_END ||
		    c->file_map.va % VGMEM_FILE_ALIGN)
			fuzz_die("FILE_MAP: va %#llx",
				 (unsigned long long)c->file_map.va);
		break;
	case VGMEM_CTRL_SHARES:
		if (c->shares.count > VGMEM_CTRL_SHARES_PER_CMD ||
		    c->shares.total != 2 ||
		    c->shares.index + c->shares.count > c->shares.total)
			fuzz_die("SHARES: index %u count %u total %u",
				 c->shares.index, c->shares.count, c->shares.total);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_host_guest *g;
	struct vg_vm *vm;
	struct vgmem_ctrl in, c;
	uint64_t va_last = 0, alloc0, alloc1, gpu0, gpu1;
	uint32_t chan_last = 0;
	size_t off = 0, n;
	uint8_t op;
	int ret;

	if (size > 4096)
		return -1;
	if (vg_host_guest_create(w.h, "evil", EVIL_QUOTA, 1 * MiB, &g))
		fuzz_die("evil's VM");
	if (vg_host_guest_set_share_tag(g, 1, w.dir[0], false, "rw") ||
	    vg_host_guest_set_share_tag(g, 7, w.dir[1], true, "ro"))
		fuzz_die("evil's shares");
	vm = vg_host_guest_vm(g);
	/*
	 * Nothing but the commands changes these (no return worker, the peer
	 * is idle): what one command left is what the next one starts from.
	 */
	alloc0 = allocated(vm);
	gpu0 = gpu_bytes();
	while (off + 2 <= size) {
		op = data[off];
		n = data[off + 1];
		off += 2;
		if (n > sizeof(in.raw))
			n = sizeof(in.raw);
		if (n > size - off)
			n = size - off;
		memset(&in, 0, sizeof(in));
		in.op = op & 15;
		memcpy(in.raw, data + off, n);
		off += n;
		if (op & 16) {
			if (in.op == VGMEM_CTRL_BO_ALLOC || in.op == VGMEM_CTRL_BO_FREE)
				in.bo.va = va_last;
			else
				in.file.va = va_last;
		}
		if (op & 32)
			in.chan.chan_id = chan_last;
		c = in;
		vg_ctrl_exec(vm, &c);
		alloc1 = allocated(vm);
		gpu1 = gpu_bytes();
		check_one(&in, &c, alloc0, alloc1, gpu0, gpu1);
		alloc0 = alloc1;
		gpu0 = gpu1;
		if (c.status)
			continue;
		if (in.op == VGMEM_CTRL_BO_ALLOC || in.op == VGMEM_CTRL_FILE_MAP) {
			va_last = in.op == VGMEM_CTRL_BO_ALLOC ? c.bo.va : c.file_map.va;
		} else if (in.op == VGMEM_CTRL_CHAN_CREATE) {
			chan_last = c.chan.chan_id;
		}
	}
	vg_host_guest_destroy(g);

	if (gpu_bytes() != w.baseline)
		fuzz_die("evil's VM is gone but the GPU holds %llu bytes, not %llu",
			 (unsigned long long)gpu_bytes(),
			 (unsigned long long)w.baseline);
	ret = vg_gpu_check(vg_host_gpu(w.h));
	if (ret)
		fuzz_die("vg_gpu_check: %d", ret);
	ret = vgmem_read(w.pch, w.pva, w.readback, PEER_BO);
	if (ret || memcmp(w.readback, w.pattern, PEER_BO))
		fuzz_die("the peer's BO does not read back (%d)", ret);
	return 0;
}
