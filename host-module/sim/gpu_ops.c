// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The software GPU as a GPU driver: its lifetime, the vg_gpu_ops table and
 * fault injection.
 */
#include "sim_internal.h"

#define SIM_POLL_US_DEFAULT	20
#define SIM_SPIN_US_DEFAULT	200

bool sim_inject_hit(struct vg_sim *sim, enum vg_sim_inject what)
{
	bool hit = false;

	spin_lock(&sim->inj_lock);
	if (sim->inject[what] > 0 && --sim->inject[what] == 0) {
		hit = true;
		sim->inject[what] = -1;
	}
	spin_unlock(&sim->inj_lock);
	return hit;
}

u64 vg_sim_turns_split(struct vg_sim *sim)
{
	return (u64)atomic64_read(&sim->turns_split);
}

void vg_sim_engine_hold(struct vg_sim *sim, struct vg_as *as)
{
	WRITE_ONCE(sim->hold_as, as);
}

bool vg_sim_engine_held(struct vg_sim *sim)
{
	return READ_ONCE(sim->holding);
}

void vg_sim_engine_release(struct vg_sim *sim)
{
	WRITE_ONCE(sim->hold_as, NULL);
	wake_up_all(&sim->hold_wq);
}

void vg_sim_inject(struct vg_sim *sim, enum vg_sim_inject what, int nth)
{
	if (WARN_ON((unsigned int)what >= VG_SIM_INJ_NR))
		return;
	spin_lock(&sim->inj_lock);
	sim->inject[what] = nth > 0 ? nth : -1;
	spin_unlock(&sim->inj_lock);
}

int vg_sim_create(const struct vg_sim_config *cfg, struct vg_sim **out)
{
	struct vg_sim *sim;
	int err, i;

	if (!cfg || !out || !cfg->vram_size ||
	    !IS_ALIGNED(cfg->vram_size, SIM_PAGE_SIZE) ||
	    (cfg->vram_size >> SIM_PAGE_SHIFT) > 0xffffffffull)
		return -EINVAL;
	sim = kzalloc(sizeof(*sim), GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	sim->vram_size = cfg->vram_size;
	sim->host_limit = cfg->host_limit;
	/* In frames, at most all of them. */
	sim->retain = (u32)min_t(u64, cfg->vram_retain >> SIM_PAGE_SHIFT,
				 cfg->vram_size >> SIM_PAGE_SHIFT);
	sim->vram_bw = cfg->vram_bw ? cfg->vram_bw : VG_SIM_VRAM_BW_DEFAULT;
	sim->pcie_bw = cfg->pcie_bw ? cfg->pcie_bw : VG_SIM_PCIE_BW_DEFAULT;
	sim->poll_us = cfg->poll_us ? cfg->poll_us : SIM_POLL_US_DEFAULT;
	sim->spin_us = cfg->spin_us ? cfg->spin_us : SIM_SPIN_US_DEFAULT;
	spin_lock_init(&sim->inj_lock);
	for (i = 0; i < VG_SIM_INJ_NR; i++)
		sim->inject[i] = -1;
	atomic_set(&sim->nr_as, 0);
	atomic_set(&sim->nr_tables, 0);
	atomic_set(&sim->idle_waiters, 0);
	atomic64_set(&sim->turns_split, 0);
	mutex_init(&sim->chan_lock);
	INIT_LIST_HEAD(&sim->chans);
	init_waitqueue_head(&sim->idle_wq);
	init_waitqueue_head(&sim->hold_wq);

	err = sim_mem_init(sim);
	if (err)
		goto err_free_sim;
	err = sim_copy_init(sim);
	if (err)
		goto err_fini_mem;
	err = sim_fault_init(sim);
	if (err)
		goto err_fini_copy;
	sim->engine = kthread_run(sim_engine_main, sim, "vgsim-engine");
	if (IS_ERR(sim->engine)) {
		err = (int)PTR_ERR(sim->engine);
		sim->engine = NULL;
		goto err_fini_fault;
	}
	*out = sim;
	return 0;

err_fini_fault:
	sim_fault_fini(sim);
err_fini_copy:
	sim_copy_fini(sim);
err_fini_mem:
	sim_mem_fini(sim);
err_free_sim:
	mutex_destroy(&sim->chan_lock);
	kfree(sim);
	return err;
}

void vg_sim_destroy(struct vg_sim *sim)
{
	if (!sim)
		return;
	if (sim->engine)
		kthread_stop(sim->engine);
	/* A handler call under way still holds its AS: wait for it. */
	sim_fault_fini(sim);
	/* The caller destroyed everything; say so loudly if not. */
	WARN_ON(sim->nr_chans);
	WARN_ON(atomic_read(&sim->nr_as));
	sim_copy_fini(sim);
	sim_mem_fini(sim);
	mutex_destroy(&sim->chan_lock);
	kfree(sim);
}

/* ---- the ops table ------------------------------------------------------- */

static u64 sim_op_vram_size(void *b)
{
	return ((struct vg_sim *)b)->vram_size;
}

static int sim_op_mem_alloc(void *b, enum vg_loc loc, u64 size,
			    struct vg_mem **out)
{
	return sim_mem_alloc(b, loc, size, out);
}

static void sim_op_mem_free(void *b, struct vg_mem *mem)
{
	(void)b;
	if (mem)
		sim_mem_put(mem);
}

static int sim_op_copy_submit(void *b, const struct vg_copy *copies,
			      unsigned int n, u64 *fence)
{
	return sim_copy_submit(b, copies, n, fence);
}

static int sim_op_copy_wait(void *b, u64 fence, u64 *device_ns)
{
	return sim_copy_wait(b, fence, device_ns);
}

static int sim_op_as_create(void *b, struct vg_as **out)
{
	if (!out)
		return -EINVAL;
	return sim_as_create(b, out);
}

static void sim_op_as_destroy(void *b, struct vg_as *as)
{
	(void)b;
	if (!as)
		return;
	sim_fault_as_destroy(as);
	sim_as_put(as);
}

static int sim_op_map(void *b, struct vg_as *as, u64 va, u64 size,
		      struct vg_mem *mem, u64 mem_off)
{
	(void)b;
	if (!as)
		return -EINVAL;
	return sim_as_map(as, va, size, mem, mem_off);
}

static void sim_op_unmap(void *b, struct vg_as *as, u64 va, u64 size)
{
	(void)b;
	if (as)
		sim_as_unmap(as, va, size);
}

static void sim_op_tlb_flush(void *b, struct vg_as *as)
{
	(void)b;
	if (as)
		sim_as_tlb_flush(as);
}

static int sim_op_channel_create(void *b, struct vg_as *as,
				 const struct vg_channel_desc *desc,
				 struct vg_bchan **out, void **userd)
{
	return sim_chan_create(b, as, desc, out, userd);
}

static void sim_op_channel_destroy(void *b, struct vg_bchan *ch)
{
	if (ch)
		sim_chan_destroy(b, ch);
}

static int sim_op_channel_idle_wait(void *b, struct vg_bchan *ch,
				    u64 timeout_ns)
{
	if (!ch)
		return -EINVAL;
	return sim_chan_idle_wait(b, ch, timeout_ns);
}

static int sim_op_channel_stop(void *b, struct vg_bchan *ch, u64 timeout_ns)
{
	if (!ch)
		return -EINVAL;
	return sim_chan_stop(b, ch, timeout_ns);
}

static int sim_op_channel_save(void *b, struct vg_bchan *ch, void *buf,
			       u32 len)
{
	if (!ch || !buf)
		return -EINVAL;
	return sim_chan_save(b, ch, buf, len);
}

static int sim_op_channel_load(void *b, struct vg_bchan *ch, const void *buf,
			       u32 len)
{
	if (!ch || !buf)
		return -EINVAL;
	return sim_chan_load(b, ch, buf, len);
}

static void sim_op_channel_start(void *b, struct vg_bchan *ch)
{
	if (ch)
		sim_chan_start(b, ch);
}

static u64 sim_op_sample_access(void *b, struct vg_mem *mem)
{
	(void)b;
	return mem ? sim_mem_sample(mem) : 0;
}

static void *sim_op_mem_host_addr(void *b, struct vg_mem *mem)
{
	(void)b;
	/* Host mems are one kvzalloc'ed buffer; VRAM frames are scattered. */
	if (!mem || mem->loc != VG_LOC_HOST)
		return NULL;
	return mem->host;
}

static int sim_op_map_prot(void *b, struct vg_as *as, u64 va, u64 size,
			   struct vg_mem *mem, u64 mem_off, u32 prot)
{
	(void)b;
	if (!as)
		return -EINVAL;
	return sim_as_map_prot(as, va, size, mem, mem_off, prot);
}

static int sim_op_protect(void *b, struct vg_as *as, u64 va, u64 size,
			  u32 prot)
{
	(void)b;
	if (!as)
		return -EINVAL;
	return sim_as_protect(as, va, size, prot);
}

static int sim_op_fault_range(void *b, struct vg_as *as, u64 va, u64 size,
			      bool on)
{
	(void)b;
	if (!as)
		return -EINVAL;
	return sim_as_fault_range(as, va, size, on);
}

static void sim_op_set_fault_handler(void *b,
				     int (*handler)(void *priv,
						    const struct vg_gpu_fault *f),
				     void *priv)
{
	sim_fault_set_handler(b, handler, priv);
}

static const struct vg_gpu_ops sim_ops = {
	.name = "sim",
	.vram_size = sim_op_vram_size,
	.mem_alloc = sim_op_mem_alloc,
	.mem_free = sim_op_mem_free,
	.copy_submit = sim_op_copy_submit,
	.copy_wait = sim_op_copy_wait,
	.as_create = sim_op_as_create,
	.as_destroy = sim_op_as_destroy,
	.map = sim_op_map,
	.unmap = sim_op_unmap,
	.tlb_flush = sim_op_tlb_flush,
	.channel_create = sim_op_channel_create,
	.channel_destroy = sim_op_channel_destroy,
	.channel_idle_wait = sim_op_channel_idle_wait,
	.channel_stop = sim_op_channel_stop,
	.channel_start = sim_op_channel_start,
	.channel_save = sim_op_channel_save,
	.channel_load = sim_op_channel_load,
	.sample_access = sim_op_sample_access,
	.mem_host_addr = sim_op_mem_host_addr,
	.map_prot = sim_op_map_prot,
	.protect = sim_op_protect,
	.fault_range = sim_op_fault_range,
	.set_fault_handler = sim_op_set_fault_handler,
};

const struct vg_gpu_ops *vg_sim_gpu_ops(void)
{
	return &sim_ops;
}
