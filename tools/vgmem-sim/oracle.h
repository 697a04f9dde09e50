/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The offline optimum compare and cloud-day measure every model against
 * (docs/performance.md, "oracle"): Belady's MIN at chunk granularity. The
 * whole sequence of chunk operations is known in advance; every access is
 * served from VRAM (demand fetching: host memory is never read), and when
 * VRAM is short the resident chunk whose next access is furthest in the
 * future leaves (copied to host RAM), chunks never accessed again first.
 *
 * This file is the engine, on an abstract sequence of operations on chunks
 * (oracle_play.c turns a trace into one and its costs into a player's
 * result). It counts bytes only; what they cost in time is the caller's.
 *
 * Next uses come from one backward pass over the operations (O(n)); the
 * resident chunks sit in binary max-heaps keyed by next use, so a hit, a
 * fetch or an eviction is O(log n). The weighted variant keeps one heap per
 * VM and also looks at the VMs above their share: O(log n + VMs alive).
 */
#ifndef VGSIM_ORACLE_H
#define VGSIM_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

enum or_evict {
	/* MIN over every resident chunk: the fewest fetches. */
	OR_EVICT_MIN,
	/*
	 * MIN over the chunks of the VMs whose VRAM is above their share
	 * (VRAM split in proportion to the weights of the VMs alive), over
	 * every chunk when no VM is above: a VM at or below its share never
	 * loses a chunk while another VM is above its own.
	 */
	OR_EVICT_WEIGHTED,
};

enum or_op_kind {
	OR_VM_START,	/* vm arrives: it counts for the shares from now */
	OR_VM_STOP,	/* vm leaves (its chunks must have been freed) */
	OR_ALLOC,	/* chunk comes into being: VRAM, or host RAM, no copy */
	OR_ACCESS,	/* a kernel reads or writes chunk: it must be in VRAM */
	OR_FREE,	/* chunk is gone, wherever it is: no copy */
};

struct or_op {
	uint8_t kind;		/* enum or_op_kind */
	uint32_t id;		/* VM_*: the VM; otherwise the chunk */
};

struct or_chunk {
	uint64_t size;		/* bytes; need not be uniform */
	uint32_t vm;		/* owner */
};

struct or_cfg {
	uint64_t vram;			/* bytes */
	enum or_evict evict;
	uint32_t nr_vms;
	const uint64_t *weight;		/* [nr_vms] for the shares; NULL: equal */
};

/* Per VM, cumulative. */
struct or_vm {
	uint64_t resident;	/* bytes of its chunks in VRAM now */
	uint64_t held;		/* bytes of its chunks that exist now */
	uint64_t bytes_in;	/* its chunks copied host RAM -> VRAM */
	uint64_t bytes_out;	/* its chunks copied VRAM -> host RAM */
	/*
	 * Chunks of other VMs copied out to make room for this VM's
	 * operations: what it waited for (vgmem's allocation stall).
	 */
	uint64_t stall_bytes;
	/*
	 * Bytes of it evicted while it was at or below its share and another
	 * VM was above its own: what the weighted variant never does.
	 */
	uint64_t taken_within_share;
	bool live;
	bool above;		/* resident > its share now */
};

struct or_totals {
	uint64_t bytes_in, bytes_out;
	uint64_t fetches, evictions;	/* chunk copies in, out */
	uint64_t allocs_host;		/* allocations placed in host RAM */
};

struct or_heap {
	uint32_t *a;		/* chunk ids; a[0] the furthest next use */
	uint32_t n, cap;
};

struct or_sim {
	struct or_cfg cfg;
	const struct or_chunk *chunk;
	uint32_t nr_chunks;
	const struct or_op *op;
	uint32_t nr_ops;
	uint32_t at;			/* the next operation to apply */
	uint64_t *next;			/* [nr_ops]: key a chunk gets there */
	uint64_t *key;			/* [nr_chunks]: its current next use */
	uint32_t *pos;			/* [nr_chunks]: index in its heap */
	uint8_t *state;			/* [nr_chunks]: enum in oracle.c */
	struct or_heap *heap;		/* 1 (MIN) or nr_vms (weighted) */
	struct or_vm *vm;		/* [nr_vms] */
	uint32_t *alive;		/* VMs started and not stopped */
	uint32_t nr_alive;
	uint32_t *alive_at;		/* [nr_vms]: index in alive */
	uint64_t weight_alive;		/* sum of their weights */
	uint32_t nr_above;		/* live VMs above their share */
	uint64_t used;			/* bytes in VRAM */
	struct or_totals tot;
};

/*
 * Checks the sequence (every chunk allocated once before it is accessed
 * or freed, and not used after it is freed; VM and chunk ids in range) and
 * computes every operation's next use. The arrays must outlive the sim.
 * 0, -EINVAL (a malformed sequence) or -ENOMEM.
 */
int or_init(struct or_sim *s, const struct or_cfg *cfg,
	    const struct or_chunk *chunk, uint32_t nr_chunks,
	    const struct or_op *op, uint32_t nr_ops);
/*
 * Applies the next operation: 0, 1 when there is none left, or -E2BIG
 * when a chunk alone is larger than VRAM (it could never be read).
 */
int or_step(struct or_sim *s);
/* Every operation left; 0 or or_step's error. */
int or_run(struct or_sim *s);
void or_fini(struct or_sim *s);

/* The byte share of VRAM a live VM is entitled to now. */
uint64_t or_share(const struct or_sim *s, uint32_t vm);

#endif /* VGSIM_ORACLE_H */
