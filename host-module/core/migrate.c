// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A VM's GPU memory as a migration stream (docs/migration.md): its BOs and
 * every byte of them, wherever each chunk is (VRAM or host RAM), written
 * by one host and read back into an empty VM by another.
 *
 * Both ends are incremental, as VFIO's migration data fd wants them: the
 * source hands out the stream in pieces of any size (vg_mig_save_read),
 * one chunk at a time through a staging buffer, and the destination takes
 * it in pieces of any size (vg_mig_load_write), so neither side ever holds
 * the whole image. Neither holds gpu->lock between calls: each step finds
 * its BO again by VA, so a relocation that moves a chunk in between costs
 * nothing (the bytes are the same wherever they are).
 *
 * The stream (little endian):
 *   header  magic "VGMEMMIG", u32 version (1), u32 header length (32),
 *           u64 the source's chunk size, u64 0;
 *   records u32 type, u32 flags, u64 payload length, the payload:
 *     VM    u64 quota, u64 allocated bytes, u64 number of BOs;
 *     DEV   the platform's device state (struct vg_mig_dev), opaque here;
 *     BO    u64 va, u64 size (in increasing VA order);
 *     DATA  u64 va of a BO, u64 offset in it, then bytes up to the BO's
 *           end (one source chunk; chunks of zeroes are left out, as a new
 *           BO reads as zeroes);
 *     CHAN  u32 id, u32 ring entries, u64 ring's guest-physical address,
 *           char[16] the GPU driver's name, u32 state length, u32 0, the
 *           USERD page the GPU writes, the shadow page the guest wrote
 *           while frozen, and the driver's state (channel_save);
 *     END   u64 number of records before it.
 *   A record the reader does not know is refused unless its flags have
 *   VG_MIG_F_OPTIONAL (then skipped), so a newer writer can add records
 *   an older reader may ignore.
 *
 * The reader trusts nothing: every length, VA, size and offset is checked
 * before anything is allocated or written; a BO goes through vg_bo_alloc
 * at its fixed VA, so the destination's quota, VA rules and memory
 * pressure apply (where VRAM is short the reducer moves chunks to host
 * RAM, the new VM's or others'); and a stream that ends early or breaks a
 * rule leaves the VM as it was, empty.
 */
#include "vg_internal.h"

#define VG_MIG_MAGIC		"VGMEMMIG"
#define VG_MIG_VERSION		1u
#define VG_MIG_HDR_LEN		32u
#define VG_MIG_REC_LEN		16u

enum vg_mig_rec {
	VG_MIG_REC_VM = 1,
	VG_MIG_REC_BO = 2,
	VG_MIG_REC_DATA = 3,
	VG_MIG_REC_CHAN = 4,
	VG_MIG_REC_DEV = 5,
	VG_MIG_REC_END = 0xffff,
};

#define VG_MIG_F_OPTIONAL	(1u << 0)
/* Longest payload of a record the reader buffers whole (all but DATA). */
#define VG_MIG_SMALL_MAX	64u
/* A CHAN record's head: id, entries, ring, driver, state length, 0. */
#define VG_MIG_CHAN_HEAD	40u
#define VG_MIG_DRV_NAME		16u
#define VG_MIG_CHAN_PAGES	(2u * VGMEM_USERD_SIZE)
/* An optional record the reader skips may be longer, up to this. */
#define VG_MIG_SKIP_MAX		(1ull << 30)

static void vg_mig_put32(u8 *p, u32 v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (u8)(v >> (8 * i));
}

static void vg_mig_put64(u8 *p, u64 v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (u8)(v >> (8 * i));
}

static u32 vg_mig_get32(const u8 *p)
{
	return p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u64 vg_mig_get64(const u8 *p)
{
	return vg_mig_get32(p) | (u64)vg_mig_get32(p + 4) << 32;
}

/*
 * A chunk's bytes to or from the staging buffer, [off, off + len) of the
 * chunk. VRAM goes through the copy engine, host RAM is copied by the CPU
 * when the GPU driver gives its address. gpu->lock held.
 */
static int vg_mig_chunk_io(struct vg_gpu *gpu, struct vg_chunk *c, u64 off,
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

/* ---- the source -------------------------------------------------------- */

struct vg_mig_save {
	struct vg_vm *vm;
	struct vg_mem *stage;
	u8 *stage_va;
	u64 chunk;			/* the source GPU's chunk size */
	/* What read() hands out next: out[pos..len) then, if data, data. */
	u8 out[VG_MIG_HDR_LEN + VG_MIG_REC_LEN + VG_MIG_SMALL_MAX];
	u32 out_len, out_pos;
	u64 data_len, data_pos;		/* stage_va bytes after out */
	/* Where the walk is: the BO at or after va, its chunk index. */
	enum { VG_MIG_S_DEV, VG_MIG_S_BOS, VG_MIG_S_DATA, VG_MIG_S_CHANS,
	       VG_MIG_S_END, VG_MIG_S_DONE } step;
	void *dev;			/* the DEV record's bytes, or NULL */
	u32 dev_len;
	u64 va;
	u32 idx;
	u32 next_chan;			/* the lowest channel id not yet sent */
	u64 records;
	int err;			/* sticky */
};

static void vg_mig_emit(struct vg_mig_save *s, u32 type, u32 flags,
			const u8 *payload, u32 len)
{
	u8 *p = s->out + s->out_len;

	vg_mig_put32(p, type);
	vg_mig_put32(p + 4, flags);
	vg_mig_put64(p + 8, len);
	if (len)
		memcpy(p + VG_MIG_REC_LEN, payload, len);
	s->out_len += VG_MIG_REC_LEN + len;
	s->records++;
}

int vg_mig_save_begin(struct vg_vm *vm, const struct vg_mig_dev *dev,
		      struct vg_mig_save **out)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_mig_save *s;
	struct vg_va_node *n;
	struct vg_bo *bo;
	u8 pl[24];
	u64 nr = 0;
	int err;

	/*
	 * Channels are saved stopped: a frozen VM's, or none. File maps are
	 * not in the stream yet: refused rather than lost on the way.
	 */
	mutex_lock(&gpu->lock);
	err = vm->nr_chans && !vm->frozen ? -EBUSY : 0;
	for (n = vg_va_first(&vm->va); n && !err; n = vg_va_next(n))
		if (n->file)
			err = -EOPNOTSUPP;
	mutex_unlock(&gpu->lock);
	if (err == -EOPNOTSUPP)
		pr_warn_ratelimited("vgmem: %s: cannot migrate a VM with file maps (not supported yet)\n",
				    vm->name);
	if (err)
		return err;
	if (dev && (!dev->len || dev->len > VG_MIG_DEV_MAX))
		return -EINVAL;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->vm = vm;
	if (dev) {
		/* A snapshot: the platform's state may move on after begin. */
		s->dev = kmemdup(dev->state, dev->len, GFP_KERNEL);
		if (!s->dev) {
			err = -ENOMEM;
			goto err_free;
		}
		s->dev_len = dev->len;
	}
	/* A staging chunk holds a channel's pages and state too. */
	s->chunk = max_t(u64, gpu->chunk_size,
			 VG_MIG_CHAN_PAGES + VG_CHAN_STATE_MAX);
	err = vg_gpu_host_mem_alloc(gpu, s->chunk, &s->stage,
				    (void **)&s->stage_va);
	if (err)
		goto err_free;

	memcpy(s->out, VG_MIG_MAGIC, 8);
	vg_mig_put32(s->out + 8, VG_MIG_VERSION);
	vg_mig_put32(s->out + 12, VG_MIG_HDR_LEN);
	vg_mig_put64(s->out + 16, s->chunk);
	vg_mig_put64(s->out + 24, 0);
	s->out_len = VG_MIG_HDR_LEN;
	mutex_lock(&gpu->lock);
	list_for_each_entry(bo, &vm->bos, node)
		nr++;
	vg_mig_put64(pl, vm->quota);
	vg_mig_put64(pl + 8, vm->allocated);
	vg_mig_put64(pl + 16, nr);
	mutex_unlock(&gpu->lock);
	vg_mig_emit(s, VG_MIG_REC_VM, 0, pl, sizeof(pl));
	s->step = s->dev ? VG_MIG_S_DEV : VG_MIG_S_BOS;
	s->va = 0;
	*out = s;
	return 0;

err_free:
	kfree(s->dev);
	kfree(s);
	return err;
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
	vg_mig_put32(head, ch->id);
	vg_mig_put32(head + 4, ch->entries);
	vg_mig_put64(head + 8, ch->gpfifo_gpa);
	strscpy((char *)head + 16, gpu->ops->name, VG_MIG_DRV_NAME);
	vg_mig_put32(head + 32, n > 0 ? (u32)n : 0);
	s->next_chan = ch->id + 1;
	mutex_unlock(&gpu->lock);
	if (n < 0)
		return n;
	vg_mig_emit(s, VG_MIG_REC_CHAN, 0, head, sizeof(head));
	s->data_len = VG_MIG_CHAN_PAGES + (u32)n;
	vg_mig_put64(s->out + 8, sizeof(head) + s->data_len);
	return 0;
}

/* Make the next record (or run out of them): s->out is empty. */
static int vg_mig_save_next(struct vg_mig_save *s)
{
	struct vg_gpu *gpu = s->vm->gpu;
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
			vg_mig_put64(s->out + 8, s->dev_len);
			s->data_len = s->dev_len;
			s->step = VG_MIG_S_BOS;
			return 0;
		case VG_MIG_S_BOS:
			mutex_lock(&gpu->lock);
			bo = vg_bo_from(s->vm, s->va);
			if (bo) {
				vg_mig_put64(pl, bo->va);
				vg_mig_put64(pl + 8, bo->size);
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
				s->step = VG_MIG_S_CHANS;
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
			vg_mig_put64(pl, bo->va);
			vg_mig_put64(pl + 8, (u64)s->idx * gpu->chunk_size);
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
			vg_mig_put64(s->out + 8, 16 + s->data_len);
			return 0;
		case VG_MIG_S_CHANS:
			err = vg_mig_save_chan(s);
			if (err == -ENOENT) {
				s->step = VG_MIG_S_END;
				continue;
			}
			return err;
		case VG_MIG_S_END:
			vg_mig_put64(pl, s->records);
			vg_mig_emit(s, VG_MIG_REC_END, 0, pl, 8);
			s->step = VG_MIG_S_DONE;
			return 0;
		case VG_MIG_S_DONE:
			return 0;
		}
	}
}

ssize_t vg_mig_save_read(struct vg_mig_save *s, void *buf, size_t len)
{
	u8 *dst = buf;
	size_t done = 0, n;
	int err;

	if (s->err)
		return s->err;
	while (done < len) {
		if (s->out_pos == s->out_len && s->data_pos == s->data_len) {
			if (s->step == VG_MIG_S_DONE)
				break;
			err = vg_mig_save_next(s);
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
	return done;
}

void vg_mig_save_end(struct vg_mig_save *s)
{
	if (!s)
		return;
	vg_gpu_host_mem_free(s->vm->gpu, s->stage);
	kfree(s->dev);
	kfree(s);
}

/* ---- the destination --------------------------------------------------- */

struct vg_mig_load {
	struct vg_vm *vm;
	struct vg_mem *stage;
	u8 *stage_va;
	u64 chunk;			/* the destination GPU's chunk size */
	u8 hdr[VG_MIG_HDR_LEN];
	u8 rec[VG_MIG_REC_LEN + VG_MIG_SMALL_MAX];
	u32 have;			/* bytes of hdr, or of rec, so far */
	bool in_header, in_payload, done;
	bool froze;			/* load_begin froze the VM */
	const struct vg_mig_dev *dev;	/* NULL: a DEV record is refused */
	bool dev_seen;
	u32 type, flags;
	u64 len;			/* the record's payload length */
	u64 got;			/* payload bytes consumed */
	/* A DATA record being written: the range, and staging's fill. */
	u64 data_va, data_off;
	u64 fill;			/* bytes in staging, from data_off + flushed */
	u64 flushed;
	/* What the VM record announced, and what has come. */
	bool vm_seen;
	u64 nr_bos, bos, bytes, last_end;
	u64 vm_bytes;			/* the BOs' total the VM record gave */
	u64 records;
	int err;			/* sticky */
	char why[128];
};

static __printf(3, 4) int vg_mig_fail(struct vg_mig_load *l, int err,
				      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->why, sizeof(l->why), fmt, ap);
	va_end(ap);
	l->err = err;
	pr_warn_ratelimited("vgmem: %s: migration stream refused: %s\n",
			    l->vm->name, l->why);
	return err;
}

int vg_mig_load_begin(struct vg_vm *vm, const struct vg_mig_dev *dev,
		      struct vg_mig_load **out)
{
	struct vg_gpu *gpu = vm->gpu;
	struct vg_mig_load *l;
	bool empty;
	int err;

	mutex_lock(&gpu->lock);
	empty = list_empty(&vm->bos) && !vm->nr_chans;
	mutex_unlock(&gpu->lock);
	if (!empty)
		return -EBUSY;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->vm = vm;
	l->dev = dev;
	l->chunk = gpu->chunk_size;
	/* A CHAN record's pages and state pass through staging too. */
	err = vg_gpu_host_mem_alloc(gpu, max_t(u64, l->chunk,
					       VG_MIG_CHAN_PAGES + VG_CHAN_STATE_MAX),
				    &l->stage, (void **)&l->stage_va);
	if (err) {
		kfree(l);
		return err;
	}
	/* Restored channels wait, stopped, for the caller's thaw. */
	err = vg_vm_freeze(vm);
	l->froze = !err;
	if (err && err != -EALREADY) {
		vg_gpu_host_mem_free(gpu, l->stage);
		kfree(l);
		return err;
	}
	l->in_header = true;
	*out = l;
	return 0;
}

/*
 * Write staging's bytes into the BO being filled (gpu->lock taken). They
 * never cross a destination chunk (vg_mig_data fills up to its end).
 */
static int vg_mig_flush(struct vg_mig_load *l)
{
	struct vg_gpu *gpu = l->vm->gpu;
	u64 off = l->data_off + l->flushed;
	struct vg_chunk *c;
	struct vg_bo *bo;
	int err;

	if (!l->fill)
		return 0;
	mutex_lock(&gpu->lock);
	bo = vg_bo_find(l->vm, l->data_va);
	if (!bo || off + l->fill > bo->size) {
		mutex_unlock(&gpu->lock);
		return vg_mig_fail(l, -ESTALE, "BO at %#llx changed while it was restored",
				   (unsigned long long)l->data_va);
	}
	c = &bo->chunks[div64_u64(off, l->chunk)];
	err = vg_mig_chunk_io(gpu, c, off & (l->chunk - 1), l->fill, l->stage,
			      false);
	mutex_unlock(&gpu->lock);
	if (err)
		return vg_mig_fail(l, err, "writing BO %#llx at %#llx: %d",
				   (unsigned long long)l->data_va,
				   (unsigned long long)off, err);
	l->flushed += l->fill;
	l->fill = 0;
	return 0;
}

/* A whole small record is in l->rec: check it and act on it. */
static int vg_mig_record(struct vg_mig_load *l)
{
	const u8 *p = l->rec + VG_MIG_REC_LEN;
	struct vg_vm *vm = l->vm;
	u64 va, size, off, bytes;
	struct vg_bo *bo;
	int err;

	switch (l->type) {
	case VG_MIG_REC_VM:
		if (l->vm_seen || l->len != 24)
			return vg_mig_fail(l, -EBADMSG, "record %llu: VM record %s",
					   (unsigned long long)l->records,
					   l->vm_seen ? "again" : "of a wrong length");
		/*
		 * The guest was told its vGPU's size: a smaller one here would
		 * fail allocations it was promised (0: the source had none).
		 */
		size = vg_mig_get64(p);
		bytes = vg_mig_get64(p + 8);
		l->nr_bos = vg_mig_get64(p + 16);
		if (vm->quota && (!size || size > vm->quota))
			return vg_mig_fail(l, -EFBIG,
					   "the VM's vGPU had a quota of %llu bytes%s, this vGPU's quota is %llu",
					   (unsigned long long)size,
					   size ? "" : " (none)",
					   (unsigned long long)vm->quota);
		if (vm->quota && bytes > vm->quota)
			return vg_mig_fail(l, -EFBIG,
					   "the VM holds %llu bytes, this vGPU's quota is %llu",
					   (unsigned long long)bytes,
					   (unsigned long long)vm->quota);
		l->vm_bytes = bytes;
		l->vm_seen = true;
		return 0;
	case VG_MIG_REC_BO:
		if (!l->vm_seen || l->len != 16)
			return vg_mig_fail(l, -EBADMSG, "record %llu: BO record %s",
					   (unsigned long long)l->records,
					   l->vm_seen ? "of a wrong length" : "before the VM record");
		va = vg_mig_get64(p);
		size = vg_mig_get64(p + 8);
		if (l->bos == l->nr_bos)
			return vg_mig_fail(l, -EBADMSG, "more BOs than the %llu announced",
					   (unsigned long long)l->nr_bos);
		if (l->bos && va < l->last_end)
			return vg_mig_fail(l, -EBADMSG, "BO at %#llx is not after the one before",
					   (unsigned long long)va);
		err = vg_bo_alloc(vm, size, VGMEM_BO_FIXED_VA, &va);
		if (err)
			return vg_mig_fail(l, err,
					   "BO of %llu bytes at %#llx: %d",
					   (unsigned long long)size,
					   (unsigned long long)vg_mig_get64(p), err);
		l->bos++;
		l->bytes += size;
		l->last_end = va + size;
		return 0;
	case VG_MIG_REC_END:
		if (l->len != 8 || vg_mig_get64(p) != l->records)
			return vg_mig_fail(l, -EBADMSG,
					   "END after %llu records says %llu",
					   (unsigned long long)l->records,
					   (unsigned long long)(l->len == 8 ? vg_mig_get64(p) : 0));
		if (l->dev && !l->dev_seen)
			return vg_mig_fail(l, -EBADMSG,
					   "END without the device's state");
		if (!l->vm_seen || l->bos != l->nr_bos ||
		    l->bytes != l->vm_bytes)
			return vg_mig_fail(l, -EBADMSG,
					   "END with %llu of %llu BOs, %llu of %llu bytes",
					   (unsigned long long)l->bos,
					   (unsigned long long)l->nr_bos,
					   (unsigned long long)l->bytes,
					   (unsigned long long)l->vm_bytes);
		l->done = true;
		return 0;
	case VG_MIG_REC_DATA:
		/* Its 16-byte head: the range must lie in one BO. */
		va = vg_mig_get64(p);
		off = vg_mig_get64(p + 8);
		size = l->len - 16;
		mutex_lock(&vm->gpu->lock);
		bo = vg_bo_find(vm, va);
		err = !bo ? -ENOENT : off > bo->size || size > bo->size - off ||
			!IS_ALIGNED(off, VGMEM_PAGE_SIZE) ? -ERANGE : 0;
		mutex_unlock(&vm->gpu->lock);
		if (err)
			return vg_mig_fail(l, -EBADMSG,
					   "data for %#llx+%#llx (%llu bytes) %s",
					   (unsigned long long)va,
					   (unsigned long long)off,
					   (unsigned long long)size,
					   err == -ENOENT ? "names no BO" :
					   "is not inside its BO");
		l->data_va = va;
		l->data_off = off;
		l->fill = 0;
		l->flushed = 0;
		return 0;
	}
	return 0;
}

/*
 * A whole CHAN record (head in l->rec, pages and state in staging): the
 * channel at its id on its ring, stopped, with the USERD pages and the GPU
 * driver's state as they were. Refused with nothing made unless all of it
 * is good.
 */
static int vg_mig_chan(struct vg_mig_load *l)
{
	const u8 *p = l->rec + VG_MIG_REC_LEN;
	struct vg_vm *vm = l->vm;
	struct vg_gpu *gpu = vm->gpu;
	char drv[VG_MIG_DRV_NAME + 1];
	u32 id = vg_mig_get32(p), entries = vg_mig_get32(p + 4);
	u64 gpa = vg_mig_get64(p + 8);
	u32 slen = vg_mig_get32(p + 32);
	struct vg_chan *ch;
	int err;

	memcpy(drv, p + 16, VG_MIG_DRV_NAME);
	drv[VG_MIG_DRV_NAME] = 0;
	if (slen != l->len - VG_MIG_CHAN_HEAD - VG_MIG_CHAN_PAGES ||
	    vg_mig_get32(p + 36))
		return vg_mig_fail(l, -EBADMSG, "channel %u: state of %u bytes in a record of %llu",
				   id, slen, (unsigned long long)l->len);
	if (strncmp(drv, gpu->ops->name, VG_MIG_DRV_NAME) ||
	    !gpu->ops->channel_load)
		return vg_mig_fail(l, -EPROTONOSUPPORT,
				   "channel %u: state of GPU driver '%s', this GPU's is '%s'%s",
				   id, drv, gpu->ops->name,
				   gpu->ops->channel_load ? "" : " (it cannot load one)");
	mutex_lock(&gpu->lock);
	err = vg_chan_create_locked(vm, gpa, entries, id, &ch);
	if (err) {
		mutex_unlock(&gpu->lock);
		return vg_mig_fail(l, -EBADMSG,
				   "channel %u on a ring of %u entries at %#llx: %s (%d)",
				   id, entries, (unsigned long long)gpa,
				   err == -EEXIST ? "a channel id taken or out of range" :
				   err == -ENOSPC ? "too many channels" :
				   "not a ring in this VM's memory", err);
	}
	err = gpu->ops->channel_load(gpu->drv, ch->bchan,
				     l->stage_va + VG_MIG_CHAN_PAGES, slen);
	if (err) {
		vg_chan_destroy_locked(ch);
		mutex_unlock(&gpu->lock);
		return vg_mig_fail(l, err == -EINVAL ? -EBADMSG : err,
				   "channel %u: the GPU driver refused its state (%d)",
				   id, err);
	}
	/* The pages as they were: stopped, nothing reads them meanwhile. */
	memcpy(ch->real, l->stage_va, VGMEM_USERD_SIZE);
	spin_lock(&ch->map_lock);
	memcpy(ch->shadow, l->stage_va + VGMEM_USERD_SIZE, VGMEM_USERD_SIZE);
	ch->swap_put = vg_mig_get32((u8 *)ch->real + VGMEM_USERD_GP_PUT);
	spin_unlock(&ch->map_lock);
	atomic_set(&ch->error,
		   (int)vg_mig_get32((u8 *)ch->real + VGMEM_USERD_ERROR));
	mutex_unlock(&gpu->lock);
	return 0;
}

/* A whole DEV record in staging: the platform checks and keeps it. */
static int vg_mig_dev(struct vg_mig_load *l)
{
	char why[sizeof(l->why) - 32];
	int err;

	why[0] = 0;
	err = l->dev->load(l->dev->priv, l->stage_va, (u32)l->len, why,
			   sizeof(why));
	if (err)
		return vg_mig_fail(l, err, "device state refused: %s",
				   why[0] ? why : "(no reason given)");
	l->dev_seen = true;
	return 0;
}

/* Bytes of DATA payload: into staging, flushed at each chunk's end. */
static size_t vg_mig_data(struct vg_mig_load *l, const u8 *buf, size_t len)
{
	u64 pos = l->data_off + l->flushed + l->fill;
	u64 room = l->chunk - (pos & (l->chunk - 1));
	u64 n = min3((u64)len, room, l->len - l->got);

	memcpy(l->stage_va + l->fill, buf, n);
	l->fill += n;
	l->got += n;
	if (n == room || l->got == l->len)
		vg_mig_flush(l);
	return n;
}

ssize_t vg_mig_load_write(struct vg_mig_load *l, const void *buf, size_t len)
{
	const u8 *src = buf;
	size_t done = 0, n;
	u32 want;

	if (l->err)
		return l->err;
	while (done < len) {
		if (l->done)
			return vg_mig_fail(l, -EBADMSG, "%zu bytes after END",
					   len - done);
		if (l->in_header) {
			n = min_t(size_t, len - done, VG_MIG_HDR_LEN - l->have);
			memcpy(l->hdr + l->have, src + done, n);
			l->have += n;
			done += n;
			if (l->have < VG_MIG_HDR_LEN)
				continue;
			if (memcmp(l->hdr, VG_MIG_MAGIC, 8))
				return vg_mig_fail(l, -EBADMSG, "not a vgmem migration stream");
			if (vg_mig_get32(l->hdr + 8) != VG_MIG_VERSION)
				return vg_mig_fail(l, -EPROTONOSUPPORT,
						   "stream version %u, this host reads %u",
						   vg_mig_get32(l->hdr + 8), VG_MIG_VERSION);
			if (vg_mig_get32(l->hdr + 12) != VG_MIG_HDR_LEN)
				return vg_mig_fail(l, -EBADMSG, "header of %u bytes",
						   vg_mig_get32(l->hdr + 12));
			l->in_header = false;
			l->have = 0;
			continue;
		}
		if (!l->in_payload) {
			n = min_t(size_t, len - done, VG_MIG_REC_LEN - l->have);
			memcpy(l->rec + l->have, src + done, n);
			l->have += n;
			done += n;
			if (l->have < VG_MIG_REC_LEN)
				continue;
			l->type = vg_mig_get32(l->rec);
			l->flags = vg_mig_get32(l->rec + 4);
			l->len = vg_mig_get64(l->rec + 8);
			l->got = 0;
			if (l->flags & ~VG_MIG_F_OPTIONAL)
				return vg_mig_fail(l, -EBADMSG, "record %llu: flags %#x",
						   (unsigned long long)l->records, l->flags);
			switch (l->type) {
			case VG_MIG_REC_VM:
			case VG_MIG_REC_BO:
			case VG_MIG_REC_END:
				if (l->len > VG_MIG_SMALL_MAX)
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: type %u of %llu bytes",
							   (unsigned long long)l->records,
							   l->type, (unsigned long long)l->len);
				break;
			case VG_MIG_REC_CHAN:
				if (l->len < VG_MIG_CHAN_HEAD + VG_MIG_CHAN_PAGES ||
				    l->len > VG_MIG_CHAN_HEAD + VG_MIG_CHAN_PAGES +
					     VG_CHAN_STATE_MAX)
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: channel of %llu bytes",
							   (unsigned long long)l->records,
							   (unsigned long long)l->len);
				break;
			case VG_MIG_REC_DEV:
				if (!l->dev)
					return vg_mig_fail(l, -EPROTONOSUPPORT,
							   "record %llu: a device state this host cannot restore",
							   (unsigned long long)l->records);
				if (!l->vm_seen || l->dev_seen || !l->len ||
				    l->len > VG_MIG_DEV_MAX)
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: device state of %llu bytes%s",
							   (unsigned long long)l->records,
							   (unsigned long long)l->len,
							   !l->vm_seen ? " before the VM record" :
							   l->dev_seen ? ", again" : "");
				break;
			case VG_MIG_REC_DATA:
				if (l->len <= 16 || l->len - 16 > VGMEM_BO_MAX_SIZE)
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: data of %llu bytes",
							   (unsigned long long)l->records,
							   (unsigned long long)l->len);
				break;
			default:
				if (!(l->flags & VG_MIG_F_OPTIONAL))
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: unknown type %u",
							   (unsigned long long)l->records,
							   l->type);
				if (l->len > VG_MIG_SKIP_MAX)
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: %llu bytes to skip",
							   (unsigned long long)l->records,
							   (unsigned long long)l->len);
			}
			l->in_payload = true;
			l->have = 0;
			if (l->len)
				continue;
		}
		/* The payload. */
		if (l->type == VG_MIG_REC_DATA && l->have == 16) {
			n = vg_mig_data(l, src + done, len - done);
			done += n;
		} else if (l->type == VG_MIG_REC_CHAN &&
			   l->have == VG_MIG_CHAN_HEAD) {
			/* Its pages and state, into staging. */
			n = min_t(u64, len - done, l->len - l->got);
			memcpy(l->stage_va + (l->got - VG_MIG_CHAN_HEAD),
			       src + done, n);
			l->got += n;
			done += n;
			if (l->got == l->len)
				vg_mig_chan(l);
		} else if (l->type == VG_MIG_REC_DEV) {
			/* Into staging; the platform checks it whole. */
			n = min_t(u64, len - done, l->len - l->got);
			memcpy(l->stage_va + l->got, src + done, n);
			l->got += n;
			done += n;
			if (l->got == l->len)
				vg_mig_dev(l);
		} else if (l->type == VG_MIG_REC_DATA || l->type == VG_MIG_REC_VM ||
			   l->type == VG_MIG_REC_BO || l->type == VG_MIG_REC_END ||
			   l->type == VG_MIG_REC_CHAN) {
			want = l->type == VG_MIG_REC_DATA ? 16 :
			       l->type == VG_MIG_REC_CHAN ? VG_MIG_CHAN_HEAD :
			       (u32)l->len;
			n = min_t(size_t, len - done, want - l->have);
			memcpy(l->rec + VG_MIG_REC_LEN + l->have, src + done, n);
			l->have += n;
			l->got += n;
			done += n;
			if (l->have == want && vg_mig_record(l))
				return l->err;
		} else {
			n = min_t(u64, len - done, l->len - l->got);
			l->got += n;
			done += n;
		}
		if (l->err)
			return l->err;
		if (l->got == l->len) {
			l->in_payload = false;
			l->have = 0;
			l->records++;
		}
	}
	return done;
}

/* Undo what a failed or abandoned stream made: the VM is empty again. */
static void vg_mig_unload(struct vg_mig_load *l)
{
	struct vg_gpu *gpu = l->vm->gpu;
	struct vg_chan *ch, *tch;
	struct vg_bo *bo;
	u64 va;

	mutex_lock(&gpu->lock);
	list_for_each_entry_safe(ch, tch, &l->vm->chans, node)
		vg_chan_destroy_locked(ch);
	mutex_unlock(&gpu->lock);
	for (;;) {
		mutex_lock(&gpu->lock);
		bo = list_first_entry_or_null(&l->vm->bos, struct vg_bo, node);
		va = bo ? bo->va : 0;
		mutex_unlock(&gpu->lock);
		if (!bo)
			break;
		if (WARN_ON(vg_bo_free(l->vm, va)))
			break;
	}
}

int vg_mig_load_finish(struct vg_mig_load *l)
{
	int err = l->err;

	if (!err && !l->done)
		err = vg_mig_fail(l, -EBADMSG, "the stream ended after %llu records, before END",
				  (unsigned long long)l->records);
	if (err) {
		vg_mig_unload(l);
		if (l->froze)
			vg_vm_thaw(l->vm);
	}
	vg_gpu_host_mem_free(l->vm->gpu, l->stage);
	kfree(l);
	return err;
}

const char *vg_mig_load_error(const struct vg_mig_load *l)
{
	return l->err ? l->why : "";
}
