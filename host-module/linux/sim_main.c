// SPDX-License-Identifier: GPL-2.0
/*
 * vgmem_sim.ko: software GPUs (host-module/sim/) registered with vgmem.ko,
 * the test device on machines without a GPU. Every vGPU created on one of
 * its GPUs holds a reference on this module, so it cannot be unloaded
 * while a vGPU exists.
 */
#include <linux/module.h>

#include "sim/sim.h"
#include "vgk_gpu.h"

#define VGK_SIM_MAX_GPUS	16

static unsigned int gpus = 1;
module_param(gpus, uint, 0444);
MODULE_PARM_DESC(gpus, "number of software GPUs (1-16, default 1)");

static unsigned int vram_mb = 256;
module_param(vram_mb, uint, 0444);
MODULE_PARM_DESC(vram_mb, "VRAM of each GPU in MiB (default 256)");

static unsigned int vram_bw_mbps;
module_param(vram_bw_mbps, uint, 0444);
MODULE_PARM_DESC(vram_bw_mbps, "VRAM bandwidth of the cost model in MiB/s (0: 320 GiB/s)");

static unsigned int pcie_bw_mbps;
module_param(pcie_bw_mbps, uint, 0444);
MODULE_PARM_DESC(pcie_bw_mbps, "PCIe bandwidth of the cost model in MiB/s (0: 12 GiB/s)");

struct vgk_sim_gpu {
	struct vg_sim *sim;
	struct vgk_gpu *gpu;
};

static struct vgk_sim_gpu vgk_sim_gpus[VGK_SIM_MAX_GPUS];
static unsigned int vgk_sim_nr;

static int vgk_sim_add(unsigned int i)
{
	struct vgk_sim_gpu *g = &vgk_sim_gpus[i];
	struct vg_sim_config cfg = {
		.vram_size = (u64)vram_mb << 20,
		.vram_bw = (u64)vram_bw_mbps << 20,
		.pcie_bw = (u64)pcie_bw_mbps << 20,
	};
	char name[16];
	int ret;

	ret = vg_sim_create(&cfg, &g->sim);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "sim%u", i);
	ret = vgk_register_gpu(vg_sim_gpu_ops(), g->sim, name, THIS_MODULE,
			       &g->gpu);
	if (ret)
		goto err_destroy_sim;
	return 0;

err_destroy_sim:
	vg_sim_destroy(g->sim);
	return ret;
}

static void vgk_sim_remove(unsigned int i)
{
	struct vgk_sim_gpu *g = &vgk_sim_gpus[i];

	vgk_unregister_gpu(g->gpu);
	vg_sim_destroy(g->sim);
}

static int __init vgk_sim_init(void)
{
	int ret;

	if (!gpus || gpus > VGK_SIM_MAX_GPUS || !vram_mb)
		return -EINVAL;
	for (vgk_sim_nr = 0; vgk_sim_nr < gpus; vgk_sim_nr++) {
		ret = vgk_sim_add(vgk_sim_nr);
		if (ret)
			goto err_remove_gpus;
	}
	return 0;

err_remove_gpus:
	while (vgk_sim_nr--)
		vgk_sim_remove(vgk_sim_nr);
	return ret;
}

static void __exit vgk_sim_exit(void)
{
	while (vgk_sim_nr--)
		vgk_sim_remove(vgk_sim_nr);
}

module_init(vgk_sim_init);
module_exit(vgk_sim_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vgmem: software GPUs for vgmem.ko");
MODULE_AUTHOR("vgmem developers");
