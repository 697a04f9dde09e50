// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The source's half of a migration (mig_stream.h has the format).
 *
 * A stop-only save (vg_mig_save_begin) walks a frozen VM once: its BOs,
 * their chunks, its channels, and writes a version 1 stream.
 *
 * A pre-copy (vg_mig_precopy_begin) walks a running VM again and again:
 * each walk sends every BO the destination does not have yet and every
 * chunk that is not clean, making each clean (read-only, mig_track.c)
 * before copying it out, so that a chunk the GPU writes afterwards is
 * dirty again and goes in a later walk. The first walk sends the chunks
 * in host RAM before the others: relocated chunks are the coldest and the
 * least likely to be written again. A BO freed after the destination got
 * it becomes a BO_FREE record, before any BO record, so a BO made again
 * at the same VA follows the free. vg_mig_save_stop (with the VM frozen)
 * starts the last walk, which sends only what is still dirty, then the
 * channels, the platform's state and END with the final BO count.
 */
#include "mig_stream.h"

/*
 * A chunk's bytes to or from the staging buffer, [off, off + len) of the
 * chunk. VRAM goes through the copy engine, host RAM is copied by the CPU
 * when the GPU driver gives its address. gpu->lock held.
 */
int vg_mig_chunk_io(struct vg_gpu *gpu, struct vg_chunk *c, u64 off,
		    u64 len, struct vg_mem *stage, bool to_stage)
{
	struct vg_copy cp = {
		.src = to_stage ? c->mem : stage,
		.src_off = to_stage ? off : 0,
		.dst = to_stage ? stage : c->mem,
		.dst_off = to_stage ? 0 : off,
		.len = len,
	};
	u64 fence;
	int err;

	lockdep_assert_held(&gpu->lock);
	if (WARN_ON(!c->mem || off > c->size || len > c->size - off))
		return -EINVAL;
	err = gpu->ops->copy_submit(gpu->drv, &cp, 1, &fence);
	if (!err)
		err = gpu->ops->copy_wait(gpu->drv, fence, NULL);
	return err;
}

struct vg_mig_save {
	struct vg_vm *vm;
	struct vg_gpu *gpu;
	struct vg_mem *stage;
	u8 *stage_va;
	u64 chunk;			/* the source GPU's chunk size */
	/* What read() hands out next: out[pos..len) then, if data, data. */
	u8 out[VG_MIG_HDR_LEN + VG_MIG_REC_LEN + VG_MIG_SMALL_MAX];
	u32 out_len, out_pos;
	u64 data_len, data_pos;		/* stage_va bytes after out */
	/*
	 * Where the save is. A stop-only save: DEV, BOS, DATA, CHANS, END.
	 * A pre-copy: WALK again and again, after the stop once more, then
	 * CHANS, DEV, END. The walks' cursor: the BO at or after va, its
	 * chunk index.
	 */
	enum { VG_MIG_S_DEV, VG_MIG_S_BOS, VG_MIG_S_DATA, VG_MIG_S_WALK,
	       VG_MIG_S_FMAPS, VG_MIG_S_CHANS, VG_MIG_S_END,
	       VG_MIG_S_DONE } step;
	void *dev;			/* the DEV record's bytes, or NULL */
	u32 dev_len;
	u64 va;
	u32 idx;
	u32 next_chan;			/* the lowest channel id not yet sent */
	u64 records;
	int err;			/* sticky */

	/* The file maps' walk (FMAPS): the next at or after fva; sent. */
	u64 fva;
	u32 fmaps;
	struct vg_file_map_desc fmap;
	/* A pre-copy's: NULL for a stop-only save. */
	struct vg_mig_track *track;
	bool stopped;			/* vg_mig_save_stop: the last walk */
	bool host_first;		/* the first walk's pass over host RAM */
	bool first_done;		/* the first walk has ended */
	bool walk_sent;			/* the walk under way emitted a record */
	struct vg_mig_save_stats st;
};

static void vg_mig_emit(struct vg_mig_save *s, u32 type, u32 flags,
			const u8 *payload, u32 len)
{
	u8 *p = s->out + s->out_len;

	put_unaligned_le32(type, p);
	put_unaligned_le32(flags, p + 4);
	put_unaligned_le64(len, p + 8);
	if (len)
		memcpy(p + VG_MIG_REC_LEN, payload, len);
	s->out_len += VG_MIG_REC_LEN + len;
	s->records++;
}

/* Can vm be saved now: a frozen VM's channels, or none; no file maps. */
static int vg_mig_save_check(struct vg_vm *vm, bool running)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_va_node *n;
	int err;

	/*
	 * Channels are saved stopped: a frozen VM's, or none (a pre-copy
	 * begins with the VM running and stops it later). File maps go as
	 * FMAP records through the VM's file service; a map without one
	 * that can (no vg_file_ops.mig_next) is refused rather than lost.
	 */
	mutex_lock(&gpu->lock);
	err = vm->nr_chans && !vm->frozen && !running ? -EBUSY : 0;
	for (n = vg_va_first(&vm->va); n && !err; n = vg_va_next(n))
		if (n->file && (!vm->files_ops || !vm->files_ops->mig_next))
			err = -EOPNOTSUPP;
	mutex_unlock(&gpu->lock);
	if (err == -EOPNOTSUPP)
		pr_warn_ratelimited("vgmem: %s: cannot migrate a VM with file maps of a service that cannot save them\n",
				    vm->name);
	return err;
}

/* The device state's snapshot: the platform's may move on after. */
static int vg_mig_save_dev(struct vg_mig_save *s, const struct vg_mig_dev *dev)
{
	if (!dev)
		return 0;
	if (!dev->len || dev->len > VG_MIG_DEV_MAX)
		return -EINVAL;
	s->dev = kmemdup(dev->state, dev->len, GFP_KERNEL);
	if (!s->dev)
		return -ENOMEM;
	s->dev_len = dev->len;
	return 0;
}

/* A save with its staging, header and VM record; version 1 or 2. */
static int vg_mig_save_open(struct vg_vm *vm, u32 version,
			    struct vg_mig_save **out)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_mig_save *s;
	struct vg_bo *bo;
	u8 pl[24];
	u64 nr = 0;
	int err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->vm = vm;
	s->gpu = gpu;
	/* A staging chunk holds a channel's pages and state too. */
	s->chunk = max_t(u64, gpu->chunk_size,
			 VG_MIG_CHAN_PAGES + VG_CHAN_STATE_MAX);
	err = vg_gpu_host_mem_alloc(gpu, s->chunk, &s->stage,
				    (void **)&s->stage_va);
	if (err) {
		kfree(s);
		return err;
	}
	memcpy(s->out, VG_MIG_MAGIC, 8);
	put_unaligned_le32(version, s->out + 8);
	put_unaligned_le32(VG_MIG_HDR_LEN, s->out + 12);
	put_unaligned_le64(s->chunk, s->out + 16);
	put_unaligned_le64(0, s->out + 24);
	s->out_len = VG_MIG_HDR_LEN;
	mutex_lock(&gpu->lock);
	list_for_each_entry(bo, &vm->bos, node)
		nr++;
	put_unaligned_le64(vm->quota, pl);
	put_unaligned_le64(vm->allocated, pl + 8);
	put_unaligned_le64(nr, pl + 16);
	mutex_unlock(&gpu->lock);
	vg_mig_emit(s, VG_MIG_REC_VM, 0, pl, sizeof(pl));
	*out = s;
	return 0;
}

int vg_mig_save_begin(struct vg_vm *vm, const struct vg_mig_dev *dev,
		      struct vg_mig_save **out)
{
	struct vg_mig_save *s;
	int err;

	err = vg_mig_save_check(vm, false);
	if (err)
		return err;
	if (dev && (!dev->len || dev->len > VG_MIG_DEV_MAX))
		return -EINVAL;
	err = vg_mig_save_open(vm, VG_MIG_VERSION, &s);
	if (err)
		return err;
	err = vg_mig_save_dev(s, dev);
	if (err) {
		vg_mig_save_end(s);
		return err;
	}
	s->step = s->dev ? VG_MIG_S_DEV : VG_MIG_S_BOS;
	*out = s;
	return 0;
}

int vg_mig_precopy_begin(struct vg_vm *vm, struct vg_mig_save **out)
{
	struct vg_mig_save *s;
	int err;

	err = vg_mig_save_check(vm, true);
	if (err)
		return err;
	err = vg_mig_save_open(vm, VG_MIG_VERSION_PRE, &s);
	if (err)
		return err;
	err = vg_mig_track_start(vm, &s->track);
	if (err) {
		vg_mig_save_end(s);
		return err;
	}
	s->step = VG_MIG_S_WALK;
	s->host_first = true;
	*out = s;
	return 0;
}

int vg_mig_save_stop(struct vg_mig_save *s, const struct vg_mig_dev *dev)
{
	int err;

	if (!s->track || s->stopped)
		return -EINVAL;
	if (s->err)
		return s->err;
	/* Frozen now, and no file map made meanwhile (it would be lost). */
	err = vg_mig_save_check(s->vm, false);
	if (err)
		return err;
	err = vg_mig_save_dev(s, dev);
	if (err)
		return err;
	/* The last walk, from the start: whatever is not clean goes now. */
	s->stopped = true;
	s->host_first = false;
	s->va = 0;
	s->idx = 0;
	return 0;
}

void vg_mig_save_stats(const struct vg_mig_save *s,
		       struct vg_mig_save_stats *st)
{
	*st = s->st;
	if (s->track) {
		mutex_lock(&s->gpu->lock);
		st->dirtied = vg_mig_track_dirtied(s->track);
		mutex_unlock(&s->gpu->lock);
	}
}

/* The FMAP records' most bytes: a whole path each. gpu->lock held. */
static u64 vg_mig_fmaps_max(struct vg_vm *vm)
{
	struct vg_va_node *n;
	u64 b = 0;

	lockdep_assert_held(&vm->gpu->lock);
	for (n = vg_va_first(&vm->va); n; n = vg_va_next(n))
		if (n->file)
			b += VG_MIG_REC_LEN + VG_MIG_FMAP_HEAD + VGMEM_FILE_PATH_MAX - 1;
	return b;
}

bool vg_mig_precopy_possible(struct vg_gpu *gpu)
{
	return gpu->ops->map_prot && gpu->ops->protect && gpu->fault.installed;
}

u64 vg_mig_save_left(struct vg_mig_save *s, u32 dev_len)
{
	u64 initial, dirty, n;

	if (!s->track)
		return vg_mig_save_max(s->vm, dev_len);
	vg_mig_precopy_info(s, &initial, &dirty);
	/* What is not clean, the channels at their most, DEV and END. */
	n = initial + dirty + VG_MIG_REC_LEN + VG_MIG_END_LEN_PRE;
	if (dev_len)
		n += VG_MIG_REC_LEN + dev_len;
	mutex_lock(&s->gpu->lock);
	n += (u64)s->vm->nr_chans * (VG_MIG_REC_LEN + VG_MIG_CHAN_HEAD +
				     VG_MIG_CHAN_PAGES + VG_CHAN_STATE_MAX);
	n += vg_mig_fmaps_max(s->vm);
	mutex_unlock(&s->gpu->lock);
	return n;
}

void vg_mig_precopy_info(struct vg_mig_save *s, u64 *initial, u64 *dirty)
{
	struct vg_gpu *gpu = s->gpu;
	struct vg_bo *bo;
	u32 i;

	*initial = 0;
	*dirty = 0;
	if (!s->track)
		return;
	mutex_lock(&gpu->lock);
	list_for_each_entry(bo, &s->vm->bos, node) {
		if (!bo->mig_announced)
			*dirty += VG_MIG_REC_LEN + 16;
		for (i = 0; i < bo->nr_chunks; i++) {
			const struct vg_chunk *c = &bo->chunks[i];

			if (c->mig_clean)
				continue;
			/* Never sent during the first walk: that walk's. */
			if (!s->first_done && !c->mig_sent)
				*initial += VG_MIG_REC_LEN + 16 + c->size;
			else
				*dirty += VG_MIG_REC_LEN + 16 + c->size;
		}
	}
	mutex_unlock(&gpu->lock);
}

u64 vg_mig_save_max(struct vg_vm *vm, u32 dev_len)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_bo *bo;
	u64 n;

	/* The header, VM, DEV and END records. */
	n = VG_MIG_HDR_LEN + VG_MIG_REC_LEN + 24 + VG_MIG_REC_LEN + 8;
	if (dev_len)
		n += VG_MIG_REC_LEN + dev_len;
	mutex_lock(&gpu->lock);
	list_for_each_entry(bo, &vm->bos, node) {
		/* Its BO record, and a DATA record for each chunk. */
		n += VG_MIG_REC_LEN + 16;
		n += (u64)bo->nr_chunks * (VG_MIG_REC_LEN + 16) + bo->size;
	}
	n += (u64)vm->nr_chans * (VG_MIG_REC_LEN + VG_MIG_CHAN_HEAD +
				  VG_MIG_CHAN_PAGES + VG_CHAN_STATE_MAX);
	n += vg_mig_fmaps_max(vm);
	mutex_unlock(&gpu->lock);
	return n;
}

/* Staging is page aligned and chunks are whole pages: a word at a time. */
static bool vg_mig_all_zero(const u8 *p, u64 len)
{
	const u64 *w = (const u64 *)p;
	u64 i, acc = 0;

	for (i = 0; i < len / 8; i++) {
		acc |= w[i];
		/* Most chunks that are not zero say so in their first line. */
		if ((i & 511) == 7 && acc)
			return false;
	}
	for (i = len & ~7ull; i < len; i++)
		acc |= p[i];
	return !acc;
}

/*
 * The next channel's record, the one with the lowest id not sent yet:
 * -ENOENT when there is none left. Its head goes in s->out, its pages and
 * the GPU driver's state in staging.
 */
static int vg_mig_save_chan(struct vg_mig_save *s)
{
	struct vg_gpu *gpu = s->vm->gpu;
	struct vg_chan *ch, *c;
	u8 head[VG_MIG_CHAN_HEAD];
	int n;

	if (!gpu->ops->channel_save)
		return -EOPNOTSUPP;
	mutex_lock(&gpu->lock);
	ch = NULL;
	list_for_each_entry(c, &s->vm->chans, node)
		if (c->id >= s->next_chan && (!ch || c->id < ch->id))
			ch = c;
	if (!ch) {
		mutex_unlock(&gpu->lock);
		return -ENOENT;
	}
	if (!s->vm->frozen || !ch->stopped) {
		mutex_unlock(&gpu->lock);
		return -EBUSY;
	}
	memcpy(s->stage_va, ch->real, VGMEM_USERD_SIZE);
	memcpy(s->stage_va + VGMEM_USERD_SIZE, ch->shadow, VGMEM_USERD_SIZE);
	n = gpu->ops->channel_save(gpu->drv, ch->bchan,
				   s->stage_va + VG_MIG_CHAN_PAGES,
				   VG_CHAN_STATE_MAX);
	memset(head, 0, sizeof(head));
	put_unaligned_le32(ch->id, head);
	put_unaligned_le32(ch->entries, head + 4);
	put_unaligned_le64(ch->gpfifo_gpa, head + 8);
	strscpy((char *)head + 16, gpu->ops->name, VG_MIG_DRV_NAME);
	put_unaligned_le32(n > 0 ? (u32)n : 0, head + 32);
	s->next_chan = ch->id + 1;
	mutex_unlock(&gpu->lock);
	if (n < 0)
		return n;
	vg_mig_emit(s, VG_MIG_REC_CHAN, 0, head, sizeof(head));
	s->data_len = VG_MIG_CHAN_PAGES + (u32)n;
	put_unaligned_le64(sizeof(head) + s->data_len, s->out + 8);
	return 0;
}

/*
 * END. A pre-copy's carries the BOs the destination must hold now: every
 * one was announced by the last walk and the VM is frozen, so no BO came
 * or went since (if one did, the destination refuses the count).
 */
static int vg_mig_save_tail(struct vg_mig_save *s)
{
	struct vg_bo *bo;
	u8 pl[VG_MIG_END_LEN_PRE];
	u64 nr = 0, bytes;

	put_unaligned_le64(s->records, pl);
	if (!s->track) {
		vg_mig_emit(s, VG_MIG_REC_END, 0, pl, VG_MIG_END_LEN);
		s->step = VG_MIG_S_DONE;
		return 0;
	}
	mutex_lock(&s->gpu->lock);
	list_for_each_entry(bo, &s->vm->bos, node)
		nr++;
	bytes = s->vm->allocated;
	mutex_unlock(&s->gpu->lock);
	put_unaligned_le64(nr, pl + 8);
	put_unaligned_le64(bytes, pl + 16);
	vg_mig_emit(s, VG_MIG_REC_END, 0, pl, VG_MIG_END_LEN_PRE);
	s->step = VG_MIG_S_DONE;
	return 0;
}

/* vg_mig_walk()'s outcomes besides 0 (a record made) and -errno. */
#define VG_MIG_SKIPPED		1	/* a chunk of zeroes left out */
#define VG_MIG_WALK_END		2	/* past the last BO */

/*
 * A pre-copy walk's next record: a BO_FREE, a BO the destination lacks, or
 * a chunk that is not clean (made clean before its bytes are copied out,
 * unless the VM is stopped for good). The first walk's host_first pass
 * takes only chunks in host RAM.
 */
static int vg_mig_walk(struct vg_mig_save *s)
{
	struct vg_gpu *gpu = s->gpu;
	struct vg_chunk *c = NULL;
	struct vg_bo *bo;
	bool fresh;
	u8 pl[16];
	u64 va;
	int err;

	mutex_lock(&gpu->lock);
	err = vg_mig_track_error(s->track);
	if (err)
		goto out_unlock;
	if (vg_mig_track_take_freed(s->track, &va)) {
		mutex_unlock(&gpu->lock);
		put_unaligned_le64(va, pl);
		vg_mig_emit(s, VG_MIG_REC_BO_FREE, 0, pl, 8);
		return 0;
	}
	for (;;) {
		bo = vg_bo_from(s->vm, s->va);
		if (!bo) {
			mutex_unlock(&gpu->lock);
			return VG_MIG_WALK_END;
		}
		if (bo->va != s->va) {
			s->va = bo->va;
			s->idx = 0;
		}
		if (!bo->mig_announced) {
			/* A BO made since the last walk passed: from its start. */
			bo->mig_announced = true;
			s->idx = 0;
			put_unaligned_le64(bo->va, pl);
			put_unaligned_le64(bo->size, pl + 8);
			mutex_unlock(&gpu->lock);
			vg_mig_emit(s, VG_MIG_REC_BO, 0, pl, 16);
			return 0;
		}
		for (; s->idx < bo->nr_chunks; s->idx++) {
			c = &bo->chunks[s->idx];
			if (!c->mig_clean &&
			    (!s->host_first || c->loc == VG_LOC_HOST))
				break;
		}
		if (s->idx < bo->nr_chunks)
			break;
		s->va = bo->va + 1;
		s->idx = 0;
	}
	/* Clean first: a write from now on faults and makes it dirty again. */
	if (!s->stopped) {
		err = vg_mig_track_clean(s->track, c);
		if (err)
			goto out_unlock;
	}
	fresh = !c->mig_sent;
	c->mig_sent = true;
	err = vg_mig_chunk_io(gpu, c, 0, c->size, s->stage, true);
	put_unaligned_le64(bo->va, pl);
	put_unaligned_le64((u64)s->idx * gpu->chunk_size, pl + 8);
	s->data_len = c->size;
	s->idx++;
	mutex_unlock(&gpu->lock);
	if (err)
		return err;
	/* The destination's new BO reads as zeroes until a DATA says else. */
	if (fresh && vg_mig_all_zero(s->stage_va, s->data_len)) {
		s->data_len = 0;
		return VG_MIG_SKIPPED;
	}
	vg_mig_emit(s, VG_MIG_REC_DATA, 0, pl, 16);
	put_unaligned_le64(16 + s->data_len, s->out + 8);
	s->st.data_records++;
	if (s->stopped)
		s->st.stop_data_records++;
	return 0;

out_unlock:
	mutex_unlock(&gpu->lock);
	return err;
}

/*
 * The next file map's record, its writes in the file first (the VM is
 * frozen): -ENOENT when none is left. Head and path in s->out.
 */
static int vg_mig_save_fmap(struct vg_mig_save *s)
{
	struct vg_file_map_desc *d = &s->fmap;
	const struct vg_file_ops *ops;
	u8 pl[VG_MIG_FMAP_HEAD + VGMEM_FILE_PATH_MAX];
	void *ctx;
	u32 plen;
	int err;

	ops = vg_vm_file_service(s->vm, &ctx);
	if (!ops || !ops->mig_next)
		return -ENOENT;	/* vg_mig_save_check: then there is none */
	err = ops->mig_next(ctx, s->fva, d);
	if (err)
		return err;
	plen = strnlen(d->path, sizeof(d->path));
	if (WARN_ON(!plen || plen == sizeof(d->path)))
		return -EINVAL;
	put_unaligned_le64(d->va, pl);
	put_unaligned_le64(d->offset, pl + 8);
	put_unaligned_le64(d->length, pl + 16);
	put_unaligned_le64(d->ino, pl + 24);
	put_unaligned_le32(d->share_id, pl + 32);
	put_unaligned_le32(d->flags, pl + 36);
	memcpy(pl + VG_MIG_FMAP_HEAD, d->path, plen);
	vg_mig_emit(s, VG_MIG_REC_FMAP, 0, pl, VG_MIG_FMAP_HEAD + plen);
	s->fva = d->va + 1;
	s->fmaps++;
	return 0;
}

/*
 * Every file range of the VM's VA went as an FMAP: one the file service
 * does not know (made around it) would be lost. The VM is frozen.
 */
static int vg_mig_fmaps_all_sent(struct vg_mig_save *s)
{
	struct vg_va_node *n;
	u32 nr = 0;

	mutex_lock(&s->gpu->lock);
	for (n = vg_va_first(&s->vm->va); n; n = vg_va_next(n))
		nr += n->file;
	mutex_unlock(&s->gpu->lock);
	if (nr == s->fmaps)
		return 0;
	pr_warn_ratelimited("vgmem: %s: %u file maps, %u of them known to its file service: cannot migrate the others\n",
			    s->vm->name, nr, s->fmaps);
	return -EOPNOTSUPP;
}

/* Make the next record (or run out of them): s->out is empty. */
static int vg_mig_save_next(struct vg_mig_save *s)
{
	struct vg_gpu *gpu = s->gpu;
	struct vg_chunk *c;
	struct vg_bo *bo;
	u8 pl[16];
	int err = 0;

	s->out_len = 0;
	s->out_pos = 0;
	s->data_len = 0;
	s->data_pos = 0;
	for (;;) {
		switch (s->step) {
		case VG_MIG_S_DEV:
			/* Head in out, the bytes through staging like data. */
			memcpy(s->stage_va, s->dev, s->dev_len);
			vg_mig_emit(s, VG_MIG_REC_DEV, 0, NULL, 0);
			put_unaligned_le64(s->dev_len, s->out + 8);
			s->data_len = s->dev_len;
			/* A pre-copy sends it last, a stop-only save first. */
			s->step = s->track ? VG_MIG_S_END : VG_MIG_S_BOS;
			return 0;
		case VG_MIG_S_BOS:
			mutex_lock(&gpu->lock);
			bo = vg_bo_from(s->vm, s->va);
			if (bo) {
				put_unaligned_le64(bo->va, pl);
				put_unaligned_le64(bo->size, pl + 8);
				s->va = bo->va + 1;
			}
			mutex_unlock(&gpu->lock);
			if (bo) {
				vg_mig_emit(s, VG_MIG_REC_BO, 0, pl, 16);
				return 0;
			}
			s->step = VG_MIG_S_DATA;
			s->va = 0;
			s->idx = 0;
			continue;
		case VG_MIG_S_DATA:
			mutex_lock(&gpu->lock);
			bo = vg_bo_from(s->vm, s->va);
			if (bo && bo->va != s->va)
				s->idx = 0;
			if (!bo) {
				mutex_unlock(&gpu->lock);
				s->step = VG_MIG_S_FMAPS;
				continue;
			}
			s->va = bo->va;
			if (s->idx >= bo->nr_chunks) {
				/* The VM was not kept stopped: its BOs changed. */
				mutex_unlock(&gpu->lock);
				return -ESTALE;
			}
			c = &bo->chunks[s->idx];
			err = vg_mig_chunk_io(gpu, c, 0, c->size, s->stage, true);
			put_unaligned_le64(bo->va, pl);
			put_unaligned_le64((u64)s->idx * gpu->chunk_size, pl + 8);
			s->data_len = c->size;
			if (++s->idx == bo->nr_chunks) {
				s->va = bo->va + 1;
				s->idx = 0;
			}
			mutex_unlock(&gpu->lock);
			if (err)
				return err;
			if (vg_mig_all_zero(s->stage_va, s->data_len)) {
				s->data_len = 0;
				continue;
			}
			/* The header says how long the record is; data follows. */
			vg_mig_emit(s, VG_MIG_REC_DATA, 0, pl, 16);
			put_unaligned_le64(16 + s->data_len, s->out + 8);
			s->st.data_records++;
			return 0;
		case VG_MIG_S_WALK:
			err = vg_mig_walk(s);
			if (err == VG_MIG_SKIPPED)
				continue;
			if (err != VG_MIG_WALK_END) {
				s->walk_sent |= !err;
				return err;
			}
			s->va = 0;
			s->idx = 0;
			if (s->stopped) {
				s->step = VG_MIG_S_FMAPS;
				continue;
			}
			if (s->host_first) {
				/* The same walk goes on with everything else. */
				s->host_first = false;
				continue;
			}
			s->first_done = true;
			s->st.walks++;
			return VG_MIG_WALK_END;
		case VG_MIG_S_FMAPS:
			err = vg_mig_save_fmap(s);
			if (err == -ENOENT) {
				err = vg_mig_fmaps_all_sent(s);
				if (err)
					return err;
				s->step = VG_MIG_S_CHANS;
				continue;
			}
			return err;
		case VG_MIG_S_CHANS:
			err = vg_mig_save_chan(s);
			if (err == -ENOENT) {
				s->step = s->track && s->dev ? VG_MIG_S_DEV :
					  VG_MIG_S_END;
				continue;
			}
			return err;
		case VG_MIG_S_END:
			return vg_mig_save_tail(s);
		case VG_MIG_S_DONE:
			return 0;
		}
	}
}

ssize_t vg_mig_save_read(struct vg_mig_save *s, void *buf, size_t len)
{
	u8 *dst = buf;
	size_t done = 0, n;
	bool sent;
	int err;

	if (s->err)
		return s->err;
	while (done < len) {
		if (s->out_pos == s->out_len && s->data_pos == s->data_len) {
			if (s->step == VG_MIG_S_DONE)
				break;
			err = vg_mig_save_next(s);
			if (err == VG_MIG_WALK_END) {
				/*
				 * A pre-copy's walk ended. What it found goes out
				 * first; a walk that found nothing is the
				 * temporary end of the stream (VFIO's ENOMSG).
				 * A read never starts more than one walk after
				 * another found nothing, so it ends however
				 * fast the guest writes.
				 */
				sent = s->walk_sent;
				s->walk_sent = false;
				if (done)
					break;
				if (!sent)
					return -ENOMSG;
				continue;
			}
			if (err) {
				s->err = err;
				return done ? (ssize_t)done : err;
			}
			continue;
		}
		if (s->out_pos < s->out_len) {
			n = min_t(size_t, len - done, s->out_len - s->out_pos);
			memcpy(dst + done, s->out + s->out_pos, n);
			s->out_pos += n;
		} else {
			n = min_t(u64, len - done, s->data_len - s->data_pos);
			memcpy(dst + done, s->stage_va + s->data_pos, n);
			s->data_pos += n;
		}
		done += n;
	}
	s->st.bytes += done;
	if (s->stopped)
		s->st.stop_bytes += done;
	return done;
}

void vg_mig_save_end(struct vg_mig_save *s)
{
	if (!s)
		return;
	if (s->track)
		vg_mig_track_stop(s->track);
	vg_gpu_host_mem_free(s->gpu, s->stage);
	kfree(s->dev);
	kfree(s);
}

