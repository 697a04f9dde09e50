/* SPDX-License-Identifier: MIT */
/*
 * vgmem-guest: the guest-side test tool (docs/vgmem-guest.md). vgg_main is
 * the whole tool minus main(), so tests run its commands in-process against
 * the userspace host (--inproc) and read what it prints.
 *
 * The tool a tenant installs (vgmem-guest.c) links libvgmem alone: it opens
 * a vGPU over VFIO (--dev) or the guest kernel driver (--pci). The
 * in-process host (--inproc: the core and the software GPU in this process)
 * is the host's side of the line: tools/vgmem-guest-inproc/ provides it as
 * a struct vgg_inproc to its own build of the tool and to the tests.
 */
#ifndef VGMEM_GUEST_VGG_H
#define VGMEM_GUEST_VGG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <libvgmem.h>

/* Exit codes. */
#define VGG_OK		0
#define VGG_FAIL	1
#define VGG_USAGE	2

enum vgg_cmd {
	VGG_INFO,
	VGG_WORKLOAD,
	VGG_FILL_CHECK,
	VGG_SUBMIT_LOOP,
	VGG_ALLOC,
	VGG_HOSTILE,
	VGG_BENCH,
	VGG_FILE,
	VGG_SHARE,
	VGG_CMD_NR
};

/* Kinds of the file command (vgg_file.c). */
enum vgg_file_kind {
	VGG_F_READ,
	VGG_F_WRITE,
	VGG_F_HOLD,
	VGG_F_SYNC,
	VGG_F_NR
};

/* Kinds of the bench command (vgg_bench.c). */
enum vgg_bench_kind {
	VGG_B_SUBMIT,
	VGG_B_MEMCPY,
	VGG_B_NR
};

enum vgg_hostile {
	VGG_H_WILD_VA,
	VGG_H_BAD_ENTRY,
	VGG_H_BAD_METHOD,
	VGG_H_BAD_CTRL,
	VGG_H_RING_OUTSIDE,
	VGG_H_FLOOD,
	VGG_H_BAR,
	VGG_H_NR
};

struct vgg_opts {
	const char *uuid;
	bool pci;			/* --pci: the guest driver */
	const char *pci_path;		/* its /dev/vgmemN, NULL: the first */
	bool inproc;
	uint64_t ram;			/* guest RAM; 0: the transport's default */
	uint64_t vram;			/* --inproc: software GPU VRAM */
	uint64_t quota;			/* --inproc: the guest's quota, 0: none */

	enum vgg_cmd cmd;
	int kind;			/* workload or hostile kind */
	uint64_t ws, size, bo, seed;
	uint32_t iters, loops, count;
	double hold;			/* seconds */

	/* --inproc: the guest's share (--share/--share-ro ID=DIR) */
	const char *share_dir;		/* NULL: no share */
	uint32_t share_dir_id;
	bool share_dir_ro;

	/* file: positional SHARE PATH and the options of vgg_file.c */
	uint32_t share;
	const char *path;
	uint64_t offset, length;	/* length 0: not given */
	bool have_fnv;
	uint64_t expect_fnv;		/* --expect-fnv */
	int nexpect;			/* seeds in --expect-pattern (0-2) */
	uint32_t expect_seed[2];
	bool have_pattern;
	uint32_t pattern;		/* --pattern */
	uint32_t rows;			/* 0: not given */
	uint64_t row_bytes;		/* 0: not given */
	int half;			/* -1: whole rows */
	bool rw;			/* hold --rw */
	double hold_after;		/* write --hold-after: seconds, 0: no */
	const char *expect_error;	/* --expect-error ENAME */

	/* share {bind|unbind} TAG [DIR] */
	bool share_bind;
	const char *tag, *dir;
};

/*
 * An in-process device for --inproc. open() makes a host with one guest
 * from the options (--vram, --quota, --ram, --share/--share-ro), sets *dev
 * to the guest's device and *priv to what close() frees (the host, its
 * guest and the device); on failure it returns a negative errno and says
 * why in why[0..len).
 */
struct vgg_inproc {
	int (*open)(const struct vgg_opts *o, struct vgmem_dev **dev,
		    void **priv, char *why, size_t len);
	void (*close)(void *priv);
};

struct vgg_ctx {
	FILE *out;			/* progress lines and the RESULT line */
	FILE *err;			/* diagnostics */
	const struct vgg_opts *o;
	struct vgmem_dev *dev;
	bool vfio;
	bool pci;
	const struct vgg_inproc *inproc;	/* NULL: no --inproc here */
	void *inproc_priv;		/* an open in-process device */
	char detail[768];		/* the RESULT line's details */
};

/*
 * The whole tool: parses argv, runs one command, prints RESULT, exits code.
 * inproc: the in-process host --inproc runs on, NULL where there is none
 * (a tenant's build: --inproc is then a usage error that says where it is).
 */
int vgg_main(int argc, char **argv, FILE *out, FILE *err,
	     const struct vgg_inproc *inproc);

/* Parsing helpers (vgg_main.c), exposed for the tests. */
int vgg_parse_size(const char *s, uint64_t *out);
int vgg_parse_u64(const char *s, uint64_t *out);

/* Commands (vgg_cmds.c, vgg_hostile.c): VGG_OK or VGG_FAIL, detail filled. */
int vgg_cmd_info(struct vgg_ctx *c);
int vgg_cmd_workload(struct vgg_ctx *c);
int vgg_cmd_fill_check(struct vgg_ctx *c);
int vgg_cmd_submit_loop(struct vgg_ctx *c);
int vgg_cmd_alloc(struct vgg_ctx *c);
int vgg_cmd_hostile(struct vgg_ctx *c);
int vgg_hostile_bar(struct vgg_ctx *c);	/* vgg_bar.c */
const char *vgg_hostile_name(int kind);
int vgg_cmd_bench(struct vgg_ctx *c);
/* The enum vgg_bench_kind of a name, or -1. */
int vgg_bench_kind(const char *name);
int vgg_cmd_file(struct vgg_ctx *c);
int vgg_cmd_share(struct vgg_ctx *c);
/* The enum vgg_file_kind of a name, or -1; and back. */
int vgg_file_kind(const char *name);
const char *vgg_file_kind_name(int kind);
/*
 * The errno name of a FILE_* error (-EACCES -> "EACCES") and what it means
 * for a file map (docs/abi.md "Share files"); "?" and strerror otherwise.
 */
const char *vgg_file_errname(int err);
const char *vgg_file_errmeaning(int err);
/* The positive errno of a name vgg_file_errname knows, or 0. */
int vgg_file_errno(const char *name);

/* Shared by the commands. */
int vgg_detail(struct vgg_ctx *c, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void vgg_log(struct vgg_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A new channel with a 64-entry ring; logs why not. */
int vgg_chan(struct vgg_ctx *c, struct vgmem_chan **ch);
/* The GPU's checksum of a filled pattern against the CPU's expectation. */
int vgg_verify(struct vgmem_chan *ch, uint64_t va, uint64_t bytes, uint32_t seed,
	       uint64_t scratch, uint64_t want, uint64_t *got);
/* Fresh channel + BO, fill, checksum, free: does the device still work? */
int vgg_sanity(struct vgg_ctx *c, const char **why);
uint64_t vgg_now_ns(void);
void vgg_sleep_ns(uint64_t ns);
const char *vgg_chan_error_name(uint32_t e);

#endif /* VGMEM_GUEST_VGG_H */
