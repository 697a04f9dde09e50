// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Belady's MIN over chunks (oracle.h).
 *
 * Placement rules, each the one that moves the fewest bytes given the
 * future, as far as MIN can see it:
 *  - an access to a chunk in host RAM fetches it (demand fetching: a
 *    kernel never reads host memory), first copying out chunks by MIN
 *    until it fits;
 *  - an allocation goes to VRAM when there is room; when there is none,
 *    the new chunk competes with the resident ones: if it would be the
 *    first to leave (its first access is the furthest), it starts in host
 *    RAM, which copies nothing, and is fetched when it is accessed;
 *  - a free copies nothing, wherever the chunk is.
 * Every chunk that leaves VRAM is copied (its contents are the tenant's,
 * whether or not anyone reads them again), as vgmem's relocations are.
 */
#include "oracle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OR_NONE		UINT32_MAX
/*
 * A chunk accessed again is keyed by the index of that access. One never
 * accessed again gets OR_DEAD plus the index of the operation that frees
 * it (nr_ops if nothing does), so dead chunks leave before any live one,
 * and among them the one freed last leaves first: a chunk kept until it
 * is freed gives its room back without a copy.
 */
#define OR_DEAD		(1ull << 32)

enum { CH_NONE, CH_VRAM, CH_HOST, CH_GONE };

/* ---- the heaps: resident chunks, furthest next use on top -------------- */

/* a leaves before b: the later next use, ties to the younger chunk. */
static bool before(const struct or_sim *s, uint32_t a, uint32_t b)
{
	if (s->key[a] != s->key[b])
		return s->key[a] > s->key[b];
	return a > b;
}

static void heap_set(struct or_sim *s, struct or_heap *h, uint32_t i,
		     uint32_t c)
{
	h->a[i] = c;
	s->pos[c] = i;
}

static void sift_up(struct or_sim *s, struct or_heap *h, uint32_t i)
{
	uint32_t c = h->a[i], p;

	while (i) {
		p = (i - 1) / 2;
		if (!before(s, c, h->a[p]))
			break;
		heap_set(s, h, i, h->a[p]);
		i = p;
	}
	heap_set(s, h, i, c);
}

static void sift_down(struct or_sim *s, struct or_heap *h, uint32_t i)
{
	uint32_t c = h->a[i], l, m;

	for (;;) {
		l = 2 * i + 1;
		if (l >= h->n)
			break;
		m = l + 1 < h->n && before(s, h->a[l + 1], h->a[l]) ? l + 1 : l;
		if (!before(s, h->a[m], c))
			break;
		heap_set(s, h, i, h->a[m]);
		i = m;
	}
	heap_set(s, h, i, c);
}

/* The heaps are sized in or_init for every chunk they may hold. */
static void heap_push(struct or_sim *s, struct or_heap *h, uint32_t c)
{
	h->a[h->n++] = c;
	sift_up(s, h, h->n - 1);
}

static void heap_remove(struct or_sim *s, struct or_heap *h, uint32_t c)
{
	uint32_t i = s->pos[c], last = h->a[--h->n];

	s->pos[c] = OR_NONE;
	if (i == h->n)
		return;
	heap_set(s, h, i, last);
	sift_up(s, h, i);
	sift_down(s, h, s->pos[last]);
}

static void heap_rekey(struct or_sim *s, struct or_heap *h, uint32_t c,
		       uint64_t key)
{
	s->key[c] = key;
	sift_up(s, h, s->pos[c]);
	sift_down(s, h, s->pos[c]);
}

static struct or_heap *heap_of(struct or_sim *s, uint32_t c)
{
	return s->cfg.evict == OR_EVICT_MIN ? &s->heap[0] :
	       &s->heap[s->chunk[c].vm];
}

/* ---- shares ------------------------------------------------------------- */

static uint64_t weight(const struct or_sim *s, uint32_t vm)
{
	return s->cfg.weight ? s->cfg.weight[vm] : 1;
}

uint64_t or_share(const struct or_sim *s, uint32_t vm)
{
	if (!s->vm[vm].live || !s->weight_alive)
		return 0;
	return (uint64_t)((unsigned __int128)s->cfg.vram * weight(s, vm) /
			  s->weight_alive);
}

static void update_above(struct or_sim *s, uint32_t vm)
{
	struct or_vm *v = &s->vm[vm];
	bool a = v->live && v->resident > or_share(s, vm);

	if (a != v->above) {
		v->above = a;
		if (a)
			s->nr_above++;
		else
			s->nr_above--;
	}
}

/* Shares change with the VMs alive: every VM's side of its share too. */
static void update_all_above(struct or_sim *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_alive; i++)
		update_above(s, s->alive[i]);
}

/* ---- placement ---------------------------------------------------------- */

/*
 * The chunk that leaves next: MIN's over every resident chunk, or, for
 * the weighted variant, over the chunks of the VMs above their share
 * (all VMs when none is). OR_NONE when VRAM holds nothing.
 */
static uint32_t victim(const struct or_sim *s)
{
	uint32_t i, pass, best = OR_NONE;

	if (s->cfg.evict == OR_EVICT_MIN)
		return s->heap[0].n ? s->heap[0].a[0] : OR_NONE;
	for (pass = s->nr_above ? 0 : 1; pass < 2 && best == OR_NONE; pass++) {
		for (i = 0; i < s->nr_alive; i++) {
			uint32_t vm = s->alive[i];
			const struct or_heap *h = &s->heap[vm];

			if (!h->n || (!pass && !s->vm[vm].above))
				continue;
			if (best == OR_NONE || before(s, h->a[0], best))
				best = h->a[0];
		}
	}
	return best;
}

static void evict(struct or_sim *s, uint32_t c, uint32_t requester)
{
	const struct or_chunk *ch = &s->chunk[c];
	struct or_vm *v = &s->vm[ch->vm];

	/* nr_above counts other VMs only, as this one is not above. */
	if (!v->above && s->nr_above)
		v->taken_within_share += ch->size;
	heap_remove(s, heap_of(s, c), c);
	s->state[c] = CH_HOST;
	s->used -= ch->size;
	v->resident -= ch->size;
	v->bytes_out += ch->size;
	if (ch->vm != requester)
		s->vm[requester].stall_bytes += ch->size;
	s->tot.bytes_out += ch->size;
	s->tot.evictions++;
	update_above(s, ch->vm);
}

/* size <= VRAM, so the resident chunks can always make the room. */
static void make_room(struct or_sim *s, uint64_t size, uint32_t requester)
{
	while (s->cfg.vram - s->used < size)
		evict(s, victim(s), requester);
}

static void put_vram(struct or_sim *s, uint32_t c)
{
	const struct or_chunk *ch = &s->chunk[c];

	s->state[c] = CH_VRAM;
	s->used += ch->size;
	s->vm[ch->vm].resident += ch->size;
	heap_push(s, heap_of(s, c), c);
	update_above(s, ch->vm);
}

static int do_alloc(struct or_sim *s, uint32_t c, uint64_t key)
{
	const struct or_chunk *ch = &s->chunk[c];
	uint32_t x;

	if (ch->size > s->cfg.vram)
		return -E2BIG;
	s->vm[ch->vm].held += ch->size;
	s->key[c] = key;
	if (s->cfg.vram - s->used < ch->size) {
		x = victim(s);
		/* It would be the first to leave: it starts where it would go. */
		if (x == OR_NONE || !before(s, x, c)) {
			s->state[c] = CH_HOST;
			s->tot.allocs_host++;
			return 0;
		}
		make_room(s, ch->size, ch->vm);
	}
	put_vram(s, c);
	return 0;
}

static void do_access(struct or_sim *s, uint32_t c, uint64_t key)
{
	const struct or_chunk *ch = &s->chunk[c];
	struct or_vm *v = &s->vm[ch->vm];

	if (s->state[c] == CH_VRAM) {
		heap_rekey(s, heap_of(s, c), c, key);
		return;
	}
	make_room(s, ch->size, ch->vm);
	s->key[c] = key;
	put_vram(s, c);
	v->bytes_in += ch->size;
	s->tot.bytes_in += ch->size;
	s->tot.fetches++;
}

static void do_free(struct or_sim *s, uint32_t c)
{
	const struct or_chunk *ch = &s->chunk[c];
	struct or_vm *v = &s->vm[ch->vm];

	if (s->state[c] == CH_VRAM) {
		heap_remove(s, heap_of(s, c), c);
		s->used -= ch->size;
		v->resident -= ch->size;
		update_above(s, ch->vm);
	}
	s->state[c] = CH_GONE;
	v->held -= ch->size;
}

static void vm_start(struct or_sim *s, uint32_t vm)
{
	s->vm[vm].live = true;
	s->alive_at[vm] = s->nr_alive;
	s->alive[s->nr_alive++] = vm;
	s->weight_alive += weight(s, vm);
	update_all_above(s);
}

static void vm_stop(struct or_sim *s, uint32_t vm)
{
	uint32_t i = s->alive_at[vm], last = s->alive[--s->nr_alive];

	s->alive[i] = last;
	s->alive_at[last] = i;
	s->vm[vm].live = false;
	update_above(s, vm);
	s->weight_alive -= weight(s, vm);
	update_all_above(s);
}

int or_step(struct or_sim *s)
{
	const struct or_op *o;
	uint32_t i;

	if (s->at == s->nr_ops)
		return 1;
	i = s->at++;
	o = &s->op[i];
	switch (o->kind) {
	case OR_VM_START:
		vm_start(s, o->id);
		return 0;
	case OR_VM_STOP:
		vm_stop(s, o->id);
		return 0;
	case OR_ALLOC:
		return do_alloc(s, o->id, s->next[i]);
	case OR_ACCESS:
		do_access(s, o->id, s->next[i]);
		return 0;
	default:
		do_free(s, o->id);
		return 0;
	}
}

int or_run(struct or_sim *s)
{
	int err;

	while (!(err = or_step(s)))
		;
	return err > 0 ? 0 : err;
}

/* ---- setup -------------------------------------------------------------- */

/*
 * One forward pass: ids in range, VMs started once and stopped once with
 * nothing left, chunks allocated once by a live owner, accessed and freed
 * only while they exist. state[] and pos[] are scratch here.
 */
static int check_ops(struct or_sim *s)
{
	uint32_t i, *left = calloc(s->cfg.nr_vms ? s->cfg.nr_vms : 1,
				   sizeof(*left));
	uint8_t *vs = calloc(s->cfg.nr_vms ? s->cfg.nr_vms : 1, 1);
	int err = 0;

	if (!left || !vs) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < s->nr_ops && !err; i++) {
		const struct or_op *o = &s->op[i];
		uint32_t c = o->id, vm;

		if (o->kind == OR_VM_START || o->kind == OR_VM_STOP) {
			if (c >= s->cfg.nr_vms ||
			    vs[c] != (o->kind == OR_VM_START ? 0 : 1) ||
			    (o->kind == OR_VM_STOP && left[c]))
				err = -EINVAL;
			else
				vs[c]++;
			continue;
		}
		if (c >= s->nr_chunks || o->kind > OR_FREE) {
			err = -EINVAL;
			break;
		}
		vm = s->chunk[c].vm;
		switch (o->kind) {
		case OR_ALLOC:
			if (s->state[c] != CH_NONE || vm >= s->cfg.nr_vms ||
			    vs[vm] != 1 || !s->chunk[c].size)
				err = -EINVAL;
			s->state[c] = CH_VRAM;
			left[vm]++;
			break;
		case OR_ACCESS:
			if (s->state[c] != CH_VRAM)
				err = -EINVAL;
			break;
		default:
			if (s->state[c] != CH_VRAM)
				err = -EINVAL;
			s->state[c] = CH_GONE;
			left[vm]--;
			break;
		}
	}
	memset(s->state, CH_NONE, s->nr_chunks);
out:
	free(left);
	free(vs);
	return err;
}

/*
 * One backward pass: the key each ALLOC and ACCESS leaves its chunk with
 * (the index of its next access, or OR_DEAD plus where it is freed). key[]
 * holds where each chunk is freed, pos[] its next access, meanwhile.
 */
static void next_uses(struct or_sim *s)
{
	uint32_t i, c;

	for (c = 0; c < s->nr_chunks; c++) {
		s->key[c] = s->nr_ops;
		s->pos[c] = OR_NONE;
	}
	for (i = s->nr_ops; i-- > 0;) {
		const struct or_op *o = &s->op[i];

		if (o->kind == OR_VM_START || o->kind == OR_VM_STOP)
			continue;
		c = o->id;
		if (o->kind == OR_FREE) {
			s->key[c] = i;
			s->pos[c] = OR_NONE;
			continue;
		}
		s->next[i] = s->pos[c] != OR_NONE ? s->pos[c] : OR_DEAD + s->key[c];
		if (o->kind == OR_ACCESS)
			s->pos[c] = i;
	}
	for (c = 0; c < s->nr_chunks; c++)
		s->pos[c] = OR_NONE;
}

static int alloc_heaps(struct or_sim *s)
{
	uint32_t nh = s->cfg.evict == OR_EVICT_MIN ? 1 : s->cfg.nr_vms, c, h;

	s->heap = calloc(nh ? nh : 1, sizeof(*s->heap));
	if (!s->heap)
		return -ENOMEM;
	for (c = 0; c < s->nr_chunks; c++)
		s->heap[nh == 1 ? 0 : s->chunk[c].vm].cap++;
	for (h = 0; h < nh; h++) {
		s->heap[h].a = malloc((s->heap[h].cap ? s->heap[h].cap : 1) *
				      sizeof(uint32_t));
		if (!s->heap[h].a)
			return -ENOMEM;
	}
	return 0;
}

int or_init(struct or_sim *s, const struct or_cfg *cfg,
	    const struct or_chunk *chunk, uint32_t nr_chunks,
	    const struct or_op *op, uint32_t nr_ops)
{
	uint32_t nv = cfg->nr_vms ? cfg->nr_vms : 1, c;
	int err;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->chunk = chunk;
	s->nr_chunks = nr_chunks;
	s->op = op;
	s->nr_ops = nr_ops;
	if (cfg->evict != OR_EVICT_MIN && cfg->evict != OR_EVICT_WEIGHTED)
		return -EINVAL;
	/* Every op index is below OR_DEAD, so live keys stay below dead ones. */
	if (nr_ops >= OR_NONE || nr_chunks >= OR_NONE)
		return -EINVAL;
	s->next = malloc((nr_ops ? nr_ops : 1) * sizeof(*s->next));
	s->key = malloc((nr_chunks ? nr_chunks : 1) * sizeof(*s->key));
	s->pos = malloc((nr_chunks ? nr_chunks : 1) * sizeof(*s->pos));
	s->state = calloc(nr_chunks ? nr_chunks : 1, 1);
	s->vm = calloc(nv, sizeof(*s->vm));
	s->alive = malloc(nv * sizeof(*s->alive));
	s->alive_at = malloc(nv * sizeof(*s->alive_at));
	err = -ENOMEM;
	if (!s->next || !s->key || !s->pos || !s->state || !s->vm ||
	    !s->alive || !s->alive_at)
		goto fail;
	for (c = 0; c < nr_chunks; c++)
		if (chunk[c].vm >= cfg->nr_vms) {
			err = -EINVAL;
			goto fail;
		}
	err = check_ops(s);
	if (!err)
		err = alloc_heaps(s);
	if (err)
		goto fail;
	next_uses(s);
	return 0;
fail:
	or_fini(s);
	return err;
}

void or_fini(struct or_sim *s)
{
	uint32_t h, nh = s->cfg.evict == OR_EVICT_MIN ? 1 : s->cfg.nr_vms;

	if (s->heap)
		for (h = 0; h < nh; h++)
			free(s->heap[h].a);
	free(s->heap);
	free(s->next);
	free(s->key);
	free(s->pos);
	free(s->state);
	free(s->vm);
	free(s->alive);
	free(s->alive_at);
	memset(s, 0, sizeof(*s));
}
