// SPDX-License-Identifier: MIT
/*
 * Convenience operations: kernel launches on the compute subchannel and
 * copies between GPU VAs and guest memory on the copy subchannel. Each one
 * submits and waits for completion.
 */
#include <errno.h>
#include <string.h>
#include "vgmem_priv.h"

static inline uint32_t lo32(uint64_t v)
{
	return (uint32_t)v;
}

static inline uint32_t hi32(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

void vgmem_pb_launch(struct vgmem_chan *ch, enum vgmem_kernel k,
		     const uint32_t args[VGMEM_CP_NARGS])
{
	uint32_t v[1 + VGMEM_CP_NARGS];

	/* KERNEL and ARG(0..7) are consecutive methods: one header. */
	v[0] = (uint32_t)k;
	memcpy(v + 1, args, sizeof(uint32_t) * VGMEM_CP_NARGS);
	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL, v, 1 + VGMEM_CP_NARGS);
	vgmem_pb_immd(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
}

int vgmem_ce_copy(struct vgmem_chan *ch, uint64_t src, bool src_phys,
		  uint64_t dst, bool dst_phys, uint32_t len)
{
	uint32_t v[8], flags;

	if (!len)
		return -EINVAL;
	v[0] = hi32(src);
	v[1] = lo32(src);
	v[2] = hi32(dst);
	v[3] = lo32(dst);
	v[4] = len;		/* PITCH_IN */
	v[5] = len;		/* PITCH_OUT */
	v[6] = len;		/* LINE_LENGTH_IN */
	v[7] = 1;		/* LINE_COUNT */
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_OFFSET_IN_UPPER, v, 8);
	flags = VGMEM_CE_LAUNCH_SRC_PITCH | VGMEM_CE_LAUNCH_DST_PITCH;
	if (src_phys)
		flags |= VGMEM_CE_LAUNCH_SRC_PHYS;
	if (dst_phys)
		flags |= VGMEM_CE_LAUNCH_DST_PHYS;
	vgmem_pb_inc(ch, VGMEM_SUBC_COPY, VGMEM_CE_LAUNCH_DMA, &flags, 1);
	return 0;
}

int vgmem_launch(struct vgmem_chan *ch, enum vgmem_kernel k,
		 const uint32_t args[VGMEM_CP_NARGS])
{
	int ret;

	if (!ch || !args)
		return -EINVAL;
	ret = vgmem_chan_poll(ch);
	if (ret)
		return ret;
	vgmem_pb_launch(ch, k, args);
	return vgmem_finish(ch);
}

int vgmem_memset(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
		 uint32_t value)
{
	uint32_t a[VGMEM_CP_NARGS] = {
		lo32(va), hi32(va), lo32(bytes), hi32(bytes), value, 0, 0, 0
	};

	return vgmem_launch(ch, VGMEM_K_MEMSET, a);
}

int vgmem_fill_pattern(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
		       uint32_t seed)
{
	uint32_t a[VGMEM_CP_NARGS] = {
		lo32(va), hi32(va), lo32(bytes), hi32(bytes), seed, 0, 0, 0
	};

	return vgmem_launch(ch, VGMEM_K_FILL_PATTERN, a);
}

int vgmem_checksum(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
		   uint64_t scratch_va, uint64_t *sum)
{
	uint32_t a[VGMEM_CP_NARGS] = {
		lo32(va), hi32(va), lo32(bytes), hi32(bytes),
		lo32(scratch_va), hi32(scratch_va), 0, 0
	};
	uint64_t v;
	int ret;

	if (!sum)
		return -EINVAL;
	ret = vgmem_launch(ch, VGMEM_K_CHECKSUM, a);
	if (ret)
		return ret;
	ret = vgmem_read(ch, scratch_va, &v, sizeof(v));
	if (ret)
		return ret;
	*sum = v;
	return 0;
}

/* Copy between buf and GPU VA in pieces of the staging buffer. */
static int stage(struct vgmem_chan *ch, uint64_t va, void *rbuf,
		 const void *wbuf, size_t len)
{
	size_t piece;
	int ret;

	if (!ch || (!rbuf && !wbuf) || va + len < va)
		return -EINVAL;
	ret = vgmem_chan_poll(ch);
	if (ret)
		return ret;
	while (len) {
		piece = len < ch->staging_bytes ? len : ch->staging_bytes;
		if (wbuf) {
			memcpy(ch->staging, wbuf, piece);
			vgmem_ce_copy(ch, ch->staging_gpa, true, va, false,
				      (uint32_t)piece);
		} else {
			vgmem_ce_copy(ch, va, false, ch->staging_gpa, true,
				      (uint32_t)piece);
		}
		/* The staging area is reused next round: wait for the copy. */
		ret = vgmem_finish(ch);
		if (ret)
			return ret;
		if (rbuf) {
			memcpy(rbuf, ch->staging, piece);
			rbuf = (char *)rbuf + piece;
		} else {
			wbuf = (const char *)wbuf + piece;
		}
		va += piece;
		len -= piece;
	}
	return 0;
}

int vgmem_write(struct vgmem_chan *ch, uint64_t va, const void *buf, size_t len)
{
	if (!buf)
		return -EINVAL;
	return stage(ch, va, NULL, buf, len);
}

int vgmem_read(struct vgmem_chan *ch, uint64_t va, void *buf, size_t len)
{
	if (!buf)
		return -EINVAL;
	return stage(ch, va, buf, NULL, len);
}
