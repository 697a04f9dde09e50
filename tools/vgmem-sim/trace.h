/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Tenant traces for compare and cloud-day: a seeded, flat list of events
 * (VM arrives, allocates, launches built-in kernels, frees, leaves) on a
 * logical clock of steps. The same parameters and seed give the same
 * trace, byte for byte, so every model plays exactly the same tenants.
 *
 * Tenant kinds (what a cloud GPU host sees):
 *  - train: a training-like loop; every iteration reads the whole working
 *    set (weights, optimizer state) in order and updates a quarter of it;
 *    a quarter of what it holds is a checkpoint buffer written at the start
 *    and every 16th iteration;
 *  - infer: an inference server; a hot model read by every request (random
 *    gathers plus a pass over a hot slice), and bursty activations: each
 *    request allocates its activations (usually small, sometimes a large
 *    batch) and frees them when done; requests arrive in bursts;
 *  - leak: a leaky allocator; a small working buffer used every step plus
 *    one BO per step that is written once and never freed, up to its
 *    quota;
 *  - idle: a VM holding memory it filled once and barely touches again
 *    (a 64 KiB heartbeat every 8 steps); it serves no requests, so it has
 *    no iterations to measure.
 * Each VM has an entitlement (the profile it pays for: a static partition,
 * its share under vgmem) and a limit (what it may allocate in all, 2x the
 * entitlement by default: the quota of oversubscribing models).
 */
#ifndef VGSIM_TRACE_H
#define VGSIM_TRACE_H

#include <stdbool.h>
#include <stdint.h>

enum tr_kind {
	TR_TRAIN,
	TR_INFER,
	TR_LEAK,
	TR_IDLE,
	TR_KIND_NR
};

enum tr_op {
	TR_START,	/* the VM arrives (created with its entitlement/limit) */
	TR_STOP,	/* the VM leaves (destroyed with everything it holds) */
	TR_ALLOC,	/* bo slot <- a BO of bytes */
	TR_FREE,	/* bo slot freed */
	TR_KERNEL,	/* a built-in kernel on [off, off + bytes) of bo slot */
	TR_ITER_BEGIN,	/* an iteration (train, leak) or request (infer) starts */
	TR_ITER_END,	/* ... and ends: its device time is one sample */
};

enum tr_kern {
	TR_K_WRITE,	/* MEMSET of the range, arg = value */
	TR_K_READ,	/* CHECKSUM (FNV-1a) of the range: reads every byte */
	TR_K_UPDATE,	/* VECADD in place over the range (read + write) */
	TR_K_GATHER,	/* GATHER of arg u32 elements from the range, seeded */
	TR_K_NR
};

struct tr_event {
	uint32_t step;
	uint16_t vm;
	uint8_t op;		/* enum tr_op */
	uint8_t kern;		/* enum tr_kern (TR_KERNEL) */
	uint32_t bo;		/* BO slot of the VM (ALLOC, FREE, KERNEL) */
	uint32_t arg;		/* kernel argument; ITER_*: the iteration index */
	uint64_t off;		/* KERNEL: offset in the BO */
	uint64_t bytes;		/* ALLOC: size; KERNEL: range length */
};

struct tr_vm {
	char name[24];
	enum tr_kind kind;
	uint64_t entitlement;	/* bytes: profile size */
	uint64_t limit;		/* bytes it may allocate in all */
	uint64_t peak;		/* most bytes it holds at once in this trace */
	uint32_t start, stop;	/* steps it lives [start, stop) */
	uint32_t nr_bos;	/* BO slots used */
	uint32_t nr_iters;	/* iterations/requests */
};

struct trace {
	uint64_t seed;
	uint32_t steps;
	uint32_t nr_vms;
	struct tr_vm *vms;
	uint32_t nr_ev, cap_ev;
	struct tr_event *ev;	/* ordered by step, then by VM, then in order */
	uint64_t peak_total;	/* most bytes all VMs hold at once */
	uint64_t held_now;	/* (generation: what all VMs hold) */
	uint64_t entitled_total;	/* sum of entitlements */
};

/* A fixed mix of tenants that all live the whole trace (compare). */
struct tr_mix {
	uint64_t seed;
	uint32_t steps;
	uint32_t nr[TR_KIND_NR];	/* VMs of each kind */
	uint64_t entitlement;		/* bytes per VM (profile) */
	uint32_t limit_pct;		/* limit = entitlement * pct / 100 */
	uint64_t bo_size;		/* granularity of working sets */
};

/*
 * A day of a host (cloud-day): VMs arrive with exponential gaps (mean
 * 1 / arrival_rate steps) and stay an exponential lifetime (mean
 * mean_life steps, at least 1/4 of it); kinds drawn with the weights;
 * each uses a fraction of its entitlement (uniform in use_lo..use_hi
 * percent) except burst_pct percent of VMs that go past it (up to
 * burst_hi percent of the entitlement, never past the limit).
 */
struct tr_day {
	uint64_t seed;
	uint32_t steps;
	double arrival_rate;		/* VMs per step */
	uint32_t mean_life;		/* steps */
	uint32_t weight[TR_KIND_NR];
	uint64_t entitlement;
	uint32_t limit_pct;
	uint32_t use_lo, use_hi;	/* percent of the entitlement */
	uint32_t burst_pct;		/* percent of VMs that burst */
	uint32_t burst_hi;		/* percent of the entitlement */
	uint64_t bo_size;
};

const char *tr_kind_name(enum tr_kind k);
const char *tr_op_name(enum tr_op op);

/* 0, -EINVAL (bad parameters: nothing allocated) or -ENOMEM. */
int tr_build_mix(const struct tr_mix *p, struct trace *t);
int tr_build_day(const struct tr_day *p, struct trace *t);
void tr_free(struct trace *t);
/* Appends an event (for builders of other loads): 0 or -ENOMEM. */
int tr_push(struct trace *t, const struct tr_event *e);

/* FNV-1a of every event and VM: equal traces, equal hashes. */
uint64_t tr_hash(const struct trace *t);

/* One line per event (step,vm,op,kern,bo,arg,off,bytes) with a header. */
int tr_write_csv(const struct trace *t, const char *path);

#endif /* VGSIM_TRACE_H */
