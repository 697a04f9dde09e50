// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The in-process transport between a guest's libvgmem and the core: control
 * commands go to the core's dispatcher (what the kernel's control queue
 * calls), USERD accesses go through the core's shadow logic (what the
 * kernel's page mappings reach), guest memory comes from the guest's RAM.
 */
#include <errno.h>
#include <stdlib.h>
#include "host_priv.h"
#include "models/models_priv.h"

static struct vg_chan *ref_find(struct vg_host_guest *g, u32 id)
{
	u32 i;

	for (i = 0; i < g->nr_chans; i++)
		if (g->chans[i].id == id)
			return g->chans[i].ch;
	return NULL;
}

static void ref_drop(struct vg_host_guest *g, u32 id)
{
	u32 i;

	for (i = 0; i < g->nr_chans; i++) {
		if (g->chans[i].id == id) {
			g->chans[i] = g->chans[--g->nr_chans];
			return;
		}
	}
}

static int ref_add(struct vg_host_guest *g, u32 id, struct vg_chan *ch)
{
	struct vg_host_chan_ref *n;
	u32 cap;

	if (g->nr_chans == g->cap_chans) {
		cap = g->cap_chans ? 2 * g->cap_chans : 8;
		n = realloc(g->chans, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		g->chans = n;
		g->cap_chans = cap;
	}
	g->chans[g->nr_chans].id = id;
	g->chans[g->nr_chans].ch = ch;
	g->nr_chans++;
	return 0;
}

/*
 * Every channel create and destroy of this guest passes here under the
 * exclusive lock, so the VM's channel list only changes while we hold it
 * and looking a new channel up is safe.
 */
static int tp_ctrl(void *t, struct vgmem_ctrl *cmd)
{
	struct vg_host_guest *g = t;
	struct vg_chan *ch;

	/* BOs belong to the host's memory manager (models/). */
	if (cmd->op == VGMEM_CTRL_BO_ALLOC || cmd->op == VGMEM_CTRL_BO_FREE) {
		vg_model_bo_ctrl(g->mvm, cmd);
		return 0;
	}
	if (cmd->op != VGMEM_CTRL_CHAN_CREATE &&
	    cmd->op != VGMEM_CTRL_CHAN_DESTROY) {
		vg_ctrl_exec(g->vm, cmd);
		return 0;
	}
	pthread_rwlock_wrlock(&g->chan_lock);
	vg_ctrl_exec(g->vm, cmd);
	if (cmd->status == 0) {
		if (cmd->op == VGMEM_CTRL_CHAN_DESTROY) {
			ref_drop(g, cmd->chan.chan_id);
		} else {
			/*
			 * The pointer is cached: only this function destroys
			 * the guest's channels, under the same write lock.
			 */
			ch = vg_chan_lookup(g->vm, cmd->chan.chan_id);
			/* Without the reference the guest could not reach it. */
			if (!ch || ref_add(g, cmd->chan.chan_id, ch)) {
				struct vgmem_ctrl d = { .op = VGMEM_CTRL_CHAN_DESTROY };

				d.chan.chan_id = cmd->chan.chan_id;
				vg_ctrl_exec(g->vm, &d);
				cmd->status = -ENOMEM;
			}
		}
	}
	pthread_rwlock_unlock(&g->chan_lock);
	return 0;
}

int vg_host_guest_adopt_chans(struct vg_host_guest *g)
{
	struct vg_chan *ch;
	int err = 0;
	u32 id;

	pthread_rwlock_wrlock(&g->chan_lock);
	for (id = 0; id < VGMEM_MAX_CHANNELS && !err; id++) {
		ch = vg_chan_lookup(g->vm, id);
		if (ch && !ref_find(g, id))
			err = ref_add(g, id, ch);
	}
	pthread_rwlock_unlock(&g->chan_lock);
	return err;
}

/*
 * A destroyed or unknown channel reads as zeroes with a KILLED error, as
 * the kernel's mapping of a dead channel's page would, so a waiting guest
 * gives up instead of spinning.
 */
static u32 tp_userd_read(void *t, u32 chan, u32 off)
{
	struct vg_host_guest *g = t;
	struct vg_chan *ch;
	u32 val;

	pthread_rwlock_rdlock(&g->chan_lock);
	ch = ref_find(g, chan);
	if (ch)
		val = vg_chan_userd_read(ch, off);
	else
		val = off == VGMEM_USERD_ERROR ? VGMEM_CHAN_ERR_KILLED : 0;
	pthread_rwlock_unlock(&g->chan_lock);
	return val;
}

static void tp_userd_write(void *t, u32 chan, u32 off, u32 val)
{
	struct vg_host_guest *g = t;
	struct vg_chan *ch;

	pthread_rwlock_rdlock(&g->chan_lock);
	ch = ref_find(g, chan);
	/* A model may trap the write (swsched mediates every GP_PUT). */
	if (ch && !vg_model_userd_write(g->mvm, ch, off, val))
		vg_chan_userd_write(ch, off, val);
	pthread_rwlock_unlock(&g->chan_lock);
}

static int tp_gmem_alloc(void *t, size_t size, void **cpu, uint64_t *gpa)
{
	struct vg_host_guest *g = t;
	u64 a;
	int ret;

	ret = vg_guest_ram_alloc(g, size, &a);
	if (ret)
		return ret;
	*cpu = g->ram + a;
	*gpa = a;
	return 0;
}

static void tp_gmem_free(void *t, void *cpu, size_t size)
{
	struct vg_host_guest *g = t;

	vg_guest_ram_free(g, (u64)((u8 *)cpu - g->ram), size);
}

const struct vgmem_transport_ops vg_host_transport_ops = {
	.ctrl = tp_ctrl,
	.userd_read = tp_userd_read,
	.userd_write = tp_userd_write,
	.gmem_alloc = tp_gmem_alloc,
	.gmem_free = tp_gmem_free,
};

void vg_host_transport_fini(struct vg_host_guest *g)
{
	free(g->chans);
	g->chans = NULL;
	g->nr_chans = 0;
	g->cap_chans = 0;
}
