// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A channel state from another host (channel_load, host-module/sim/
 * chanstate.c) loaded into a fresh channel of the software GPU and run:
 * the loader must refuse what the engine could not run safely, and what
 * it takes must run like any guest's work, bounded and confined to the
 * channel's own address space.
 *
 * One software GPU for the whole run with two address spaces: "evil"
 * (1 MiB of host memory at VA0, a ring and a pushbuffer in its guest
 * memory that bind both classes and checksum its memory) and "good"
 * (256 KiB holding a pattern). An input is one byte, the GP_PUT the
 * channel is given (its low 4 bits), then the state's fields (the bytes
 * after the 16-byte header, which the harness writes: magic, version and
 * length are checked first and would hide the rest from the fuzzer).
 *
 * Invariants: channel_load returns 0, -EINVAL or -EBUSY (never for a
 * stopped channel); a state it took runs for up to 20 ms and the channel
 * is destroyed in whatever state it is; good's memory never changes.
 * ASan/UBSan and the 10 s timeout catch the rest.
 *
 * With VGFUZZ_WRITE_SEED=PATH, LLVMFuzzerInitialize writes a real state,
 * a checksum launch stopped mid-way, as an input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "host-module/sim/sim.h"
#include "fuzz_util.h"

#define VA0		0x100000000ull
#define EVIL_MEM	(1u << 20)
#define GOOD_MEM	(256u << 10)
#define GRAM		(64u << 10)	/* evil's guest memory */
#define RING_GPA	0x1000u
#define ENTRIES		16u
#define PB_GPA		0x2000u
#define RUN_NS		(20ull * 1000 * 1000)

static struct {
	struct vg_sim *sim;
	const struct vg_gpu_ops *ops;
	struct vg_as *evil, *good;
	struct vg_mem *evil_mem, *good_mem;
	u8 *good_cpu, *good_copy;
	u8 gram[GRAM];
	struct vg_guest_mem gmem;
	u8 blob[VG_CHAN_STATE_MAX];
} w;

static int gram_rw(u64 gpa, u64 len)
{
	return gpa > GRAM || len > GRAM - gpa ? -EFAULT : 0;
}

static int gram_read(void *priv, u64 gpa, void *buf, size_t len)
{
	(void)priv;
	if (gram_rw(gpa, len))
		return -EFAULT;
	memcpy(buf, w.gram + gpa, len);
	return 0;
}

static int gram_write(void *priv, u64 gpa, const void *buf, size_t len)
{
	(void)priv;
	if (gram_rw(gpa, len))
		return -EFAULT;
	memcpy(w.gram + gpa, buf, len);
	return 0;
}

static void put_dw(u32 *n, u32 v)
{
	memcpy(w.gram + PB_GPA + 4 * (*n)++, &v, 4);
}

/* A pushbuffer: bind both classes, checksum evil's memory into it. */
static u64 program(void)
{
	u32 n = 0;
	u64 e;

	put_dw(&n, VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, VGMEM_MTHD_SET_OBJECT, 1));
	put_dw(&n, VGMEM_CLASS_COMPUTE);
	put_dw(&n, VGMEM_PKHDR(VGMEM_PKHDR_INC, 4, VGMEM_MTHD_SET_OBJECT, 1));
	put_dw(&n, VGMEM_CLASS_COPY);
	put_dw(&n, VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, VGMEM_CP_KERNEL, 1));
	put_dw(&n, VGMEM_K_CHECKSUM);
	put_dw(&n, VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, VGMEM_CP_ARG(0), 6));
	put_dw(&n, (u32)VA0);
	put_dw(&n, (u32)(VA0 >> 32));
	put_dw(&n, EVIL_MEM - 4096);
	put_dw(&n, 0);
	put_dw(&n, (u32)(VA0 + EVIL_MEM - 8));
	put_dw(&n, (u32)((VA0 + EVIL_MEM - 8) >> 32));
	put_dw(&n, VGMEM_PKHDR(VGMEM_PKHDR_INC, 1, VGMEM_CP_LAUNCH, 1));
	put_dw(&n, 0);
	e = VGMEM_GP_ENTRY(PB_GPA, n);
	return e;
}

static struct vg_bchan *new_chan(u8 **userd)
{
	struct vg_channel_desc d;
	struct vg_bchan *ch;

	memset(&d, 0, sizeof(d));
	d.gpfifo_gpa = RING_GPA;
	d.gpfifo_entries = ENTRIES;
	d.gmem = &w.gmem;
	if (w.ops->channel_create(w.sim, w.evil, &d, &ch, (void **)userd))
		fuzz_die("channel_create");
	return ch;
}

/* A real state: the program's launch, stopped a moment after its start. */
static void write_seed(const char *path)
{
	struct timespec ts = { 0, 200 * 1000 };
	struct vg_bchan *ch;
	u8 *userd, put = 1;
	FILE *f = fopen(path, "wb");
	int n;

	if (!f)
		fuzz_die("seed: %s", path);
	ch = new_chan(&userd);
	memcpy(userd + VGMEM_USERD_GP_PUT, &(u32){ 1 }, 4);
	nanosleep(&ts, NULL);
	if (w.ops->channel_stop(w.sim, ch, 1000 * RUN_NS))
		fuzz_die("seed: stop");
	n = w.ops->channel_save(w.sim, ch, w.blob, sizeof(w.blob));
	if (n <= 16)
		fuzz_die("seed: save %d", n);
	fwrite(&put, 1, 1, f);
	fwrite(w.blob + 16, 1, (size_t)n - 16, f);
	fclose(f);
	w.ops->channel_destroy(w.sim, ch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct vg_sim_config cfg = { .vram_size = 4u << 20 };
	const char *seed = getenv("VGFUZZ_WRITE_SEED");
	u64 entry, i;

	(void)argc;
	(void)argv;
	w.ops = vg_sim_gpu_ops();
	w.gmem.read = gram_read;
	w.gmem.write = gram_write;
	if (vg_sim_create(&cfg, &w.sim) ||
	    w.ops->as_create(w.sim, &w.evil) || w.ops->as_create(w.sim, &w.good) ||
	    w.ops->mem_alloc(w.sim, VG_LOC_HOST, EVIL_MEM, &w.evil_mem) ||
	    w.ops->mem_alloc(w.sim, VG_LOC_HOST, GOOD_MEM, &w.good_mem) ||
	    w.ops->map(w.sim, w.evil, VA0, EVIL_MEM, w.evil_mem, 0) ||
	    w.ops->map(w.sim, w.good, VA0, GOOD_MEM, w.good_mem, 0))
		fuzz_die("setup: the GPU");
	w.good_cpu = w.ops->mem_host_addr(w.sim, w.good_mem);
	w.good_copy = malloc(GOOD_MEM);
	if (!w.good_cpu || !w.good_copy)
		fuzz_die("setup: memory");
	for (i = 0; i < GOOD_MEM; i++)
		w.good_cpu[i] = (u8)(i * 131 + 7);
	memcpy(w.good_copy, w.good_cpu, GOOD_MEM);
	entry = program();
	for (i = 0; i < ENTRIES; i++)
		memcpy(w.gram + RING_GPA + 8 * i, &entry, 8);
	if (seed)
		write_seed(seed);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_bchan *ch;
	u8 *userd;
	u32 put, len;
	int ret;

	if (size < 1 || size - 1 > sizeof(w.blob) - 16)
		return -1;
	len = (u32)(size - 1 + 16);
	memcpy(w.blob, &(u32){ 0x48435356u }, 4);	/* "VSCH" */
	memcpy(w.blob + 4, &(u32){ 1 }, 4);
	memcpy(w.blob + 8, &len, 4);
	memset(w.blob + 12, 0, 4);
	memcpy(w.blob + 16, data + 1, size - 1);
	put = data[0] & (ENTRIES - 1);

	ch = new_chan(&userd);
	if (w.ops->channel_stop(w.sim, ch, RUN_NS))
		fuzz_die("a new channel did not stop");
	ret = w.ops->channel_load(w.sim, ch, w.blob, len);
	if (ret && ret != -EINVAL)
		fuzz_die("channel_load of a stopped channel: %d", ret);
	if (!ret) {
		memcpy(userd + VGMEM_USERD_GP_PUT, &put, 4);
		w.ops->channel_start(w.sim, ch);
		(void)w.ops->channel_idle_wait(w.sim, ch, RUN_NS);
	}
	w.ops->channel_destroy(w.sim, ch);
	if (memcmp(w.good_cpu, w.good_copy, GOOD_MEM))
		fuzz_die("the other address space's memory changed");
	return 0;
}
