// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The destination's half of a migration (mig_stream.h has the format): a
 * stream from another host, taken in pieces of any size into an empty VM.
 * Version 1 (a stop-only save) and version 2 (a pre-copy's: BOs freed on
 * the way, chunks sent again) are both read; everything is checked as
 * hostile input, and a stream refused at any point leaves the VM empty.
 */
#include "mig_stream.h"

struct vg_mig_load {
	struct vg_vm *vm;
	struct vg_mem *stage;
	u8 *stage_va;
	u64 chunk;			/* the destination GPU's chunk size */
	u8 hdr[VG_MIG_HDR_LEN];
	u32 version;			/* the stream's, once its header came */
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
	/*
	 * What the VM record announced, and the BOs made so far (version 2:
	 * less the ones freed again).
	 */
	bool vm_seen;
	u64 nr_bos, bos, bytes, last_end;
	u64 vm_bytes;			/* the BOs' total the VM record gave */
	u64 records;
	/* The file maps made, by VA, to undo a stream refused later. */
	u64 *fmaps;
	u32 nr_fmaps, cap_fmaps;
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

/*
 * A whole FMAP record: the same file of the same share mapped at the same
 * VA through this VM's file service, with its checks (the share must be
 * there, the path inside it, the file the one the source mapped).
 */
static int vg_mig_fmap(struct vg_mig_load *l)
{
	const u8 *p = l->rec + VG_MIG_REC_LEN;
	struct vg_file_map_desc *d;
	const struct vg_file_ops *ops;
	u32 plen = (u32)l->len - VG_MIG_FMAP_HEAD, i;
	void *ctx;
	u64 *v;
	int err;

	if (!l->vm_seen)
		return vg_mig_fail(l, -EBADMSG, "record %llu: a file map before the VM record",
				   (unsigned long long)l->records);
	for (i = 0; i < plen; i++)
		if (!p[VG_MIG_FMAP_HEAD + i])
			return vg_mig_fail(l, -EBADMSG, "record %llu: a file map's path with a NUL",
					   (unsigned long long)l->records);
	ops = vg_vm_file_service(l->vm, &ctx);
	if (!ops || !ops->map_at)
		return vg_mig_fail(l, -ENOENT, "the VM maps a file of share %u, this vGPU has no shares",
				   get_unaligned_le32(p + 32));
	if (l->nr_fmaps == l->cap_fmaps) {
		u32 cap = l->cap_fmaps ? 2 * l->cap_fmaps : 16;

		v = kmalloc_array(cap, sizeof(*v), GFP_KERNEL);
		if (!v)
			return vg_mig_fail(l, -ENOMEM, "no memory for a file map");
		if (l->nr_fmaps)
			memcpy(v, l->fmaps, l->nr_fmaps * sizeof(*v));
		kfree(l->fmaps);
		l->fmaps = v;
		l->cap_fmaps = cap;
	}
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return vg_mig_fail(l, -ENOMEM, "no memory for a file map");
	d->va = get_unaligned_le64(p);
	d->offset = get_unaligned_le64(p + 8);
	d->length = get_unaligned_le64(p + 16);
	d->ino = get_unaligned_le64(p + 24);
	d->share_id = get_unaligned_le32(p + 32);
	d->flags = get_unaligned_le32(p + 36);
	memcpy(d->path, p + VG_MIG_FMAP_HEAD, plen);
	/* The same checks a guest's FILE_MAP gets, and the VA it had. */
	err = d->flags != VGMEM_FILE_RO && d->flags != VGMEM_FILE_RW ? -EINVAL :
	      ops->map_at(ctx, d);
	if (!err)
		l->fmaps[l->nr_fmaps++] = d->va;
	else
		vg_mig_fail(l, err == -EINVAL ? -EBADMSG : err,
			    "file map of %.64s (share %u) at %#llx: %s (%d)", d->path,
			    d->share_id, (unsigned long long)d->va,
			    err == -ENOENT ? "no such share or file here" :
			    err == -ESTALE ? "the file here is another file" :
			    err == -EACCES ? "not allowed here" :
			    err == -EFBIG ? "beyond the file here" :
			    "refused", err);
	kfree(d);
	return l->err;
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
		size = get_unaligned_le64(p);
		bytes = get_unaligned_le64(p + 8);
		l->nr_bos = get_unaligned_le64(p + 16);
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
		va = get_unaligned_le64(p);
		size = get_unaligned_le64(p + 8);
		/*
		 * Version 1 gives every BO once, in VA order. A pre-copy's come
		 * and go: vg_bo_alloc refuses one over another at its fixed VA.
		 */
		if (l->version == VG_MIG_VERSION && l->bos == l->nr_bos)
			return vg_mig_fail(l, -EBADMSG, "more BOs than the %llu announced",
					   (unsigned long long)l->nr_bos);
		if (l->version == VG_MIG_VERSION && l->bos && va < l->last_end)
			return vg_mig_fail(l, -EBADMSG, "BO at %#llx is not after the one before",
					   (unsigned long long)va);
		err = vg_bo_alloc(vm, size, VGMEM_BO_FIXED_VA, &va);
		if (err)
			return vg_mig_fail(l, err,
					   "BO of %llu bytes at %#llx: %d",
					   (unsigned long long)size,
					   (unsigned long long)get_unaligned_le64(p), err);
		l->bos++;
		l->bytes += size;
		l->last_end = va + size;
		return 0;
	case VG_MIG_REC_END:
		if (l->len != (l->version == VG_MIG_VERSION ? VG_MIG_END_LEN :
			       VG_MIG_END_LEN_PRE) ||
		    get_unaligned_le64(p) != l->records)
			return vg_mig_fail(l, -EBADMSG,
					   "END after %llu records says %llu",
					   (unsigned long long)l->records,
					   (unsigned long long)(l->len >= 8 ? get_unaligned_le64(p) : 0));
		if (l->dev && !l->dev_seen)
			return vg_mig_fail(l, -EBADMSG,
					   "END without the device's state");
		/* Version 2: the VM as the source left it, not as it began. */
		if (l->version != VG_MIG_VERSION) {
			l->nr_bos = get_unaligned_le64(p + 8);
			l->vm_bytes = get_unaligned_le64(p + 16);
		}
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
	case VG_MIG_REC_FMAP:
		return vg_mig_fmap(l);
	case VG_MIG_REC_BO_FREE:
		if (!l->vm_seen || l->len != 8)
			return vg_mig_fail(l, -EBADMSG, "record %llu: BO_FREE record %s",
					   (unsigned long long)l->records,
					   l->vm_seen ? "of a wrong length" : "before the VM record");
		va = get_unaligned_le64(p);
		mutex_lock(&vm->gpu->lock);
		bo = vg_bo_find(vm, va);
		size = bo ? bo->size : 0;
		mutex_unlock(&vm->gpu->lock);
		if (!bo || vg_bo_free(vm, va))
			return vg_mig_fail(l, -EBADMSG, "BO_FREE at %#llx names no BO",
					   (unsigned long long)va);
		l->bos--;
		l->bytes -= size;
		return 0;
	case VG_MIG_REC_DATA:
		/* Its 16-byte head: the range must lie in one BO. */
		va = get_unaligned_le64(p);
		off = get_unaligned_le64(p + 8);
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
	u32 id = get_unaligned_le32(p), entries = get_unaligned_le32(p + 4);
	u64 gpa = get_unaligned_le64(p + 8);
	u32 slen = get_unaligned_le32(p + 32);
	struct vg_chan *ch;
	int err;

	memcpy(drv, p + 16, VG_MIG_DRV_NAME);
	drv[VG_MIG_DRV_NAME] = 0;
	if (slen != l->len - VG_MIG_CHAN_HEAD - VG_MIG_CHAN_PAGES ||
	    get_unaligned_le32(p + 36))
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
	ch->swap_put = get_unaligned_le32((u8 *)ch->real + VGMEM_USERD_GP_PUT);
	spin_unlock(&ch->map_lock);
	atomic_set(&ch->error,
		   (int)get_unaligned_le32((u8 *)ch->real + VGMEM_USERD_ERROR));
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
			l->version = get_unaligned_le32(l->hdr + 8);
			if (l->version != VG_MIG_VERSION &&
			    l->version != VG_MIG_VERSION_PRE)
				return vg_mig_fail(l, -EPROTONOSUPPORT,
						   "stream version %u, this host reads %u and %u",
						   l->version, VG_MIG_VERSION,
						   VG_MIG_VERSION_PRE);
			if (get_unaligned_le32(l->hdr + 12) != VG_MIG_HDR_LEN)
				return vg_mig_fail(l, -EBADMSG, "header of %u bytes",
						   get_unaligned_le32(l->hdr + 12));
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
			l->type = get_unaligned_le32(l->rec);
			l->flags = get_unaligned_le32(l->rec + 4);
			l->len = get_unaligned_le64(l->rec + 8);
			l->got = 0;
			if (l->flags & ~VG_MIG_F_OPTIONAL)
				return vg_mig_fail(l, -EBADMSG, "record %llu: flags %#x",
						   (unsigned long long)l->records, l->flags);
			switch (l->type) {
			case VG_MIG_REC_FMAP:
				if (l->len <= VG_MIG_FMAP_HEAD ||
				    l->len >= VG_MIG_FMAP_HEAD + VGMEM_FILE_PATH_MAX)
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: file map of %llu bytes",
							   (unsigned long long)l->records,
							   (unsigned long long)l->len);
				break;
			case VG_MIG_REC_BO_FREE:
				if (l->version == VG_MIG_VERSION)
					return vg_mig_fail(l, -EBADMSG,
							   "record %llu: BO_FREE in a version 1 stream",
							   (unsigned long long)l->records);
				fallthrough;
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
			   l->type == VG_MIG_REC_BO_FREE ||
			   l->type == VG_MIG_REC_FMAP ||
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
	const struct vg_file_ops *ops;
	struct vg_chan *ch, *tch;
	struct vg_bo *bo;
	void *ctx;
	u64 va;
	u32 i;

	ops = vg_vm_file_service(l->vm, &ctx);
	for (i = 0; ops && i < l->nr_fmaps; i++)
		WARN_ON(ops->unmap(ctx, l->fmaps[i]));

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
	kfree(l->fmaps);
	kfree(l);
	return err;
}

const char *vg_mig_load_error(const struct vg_mig_load *l)
{
	return l->err ? l->why : "";
}
