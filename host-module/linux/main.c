// SPDX-License-Identifier: GPL-2.0
/*
 * vgmem.ko: the init ladder and nothing else. Each rung is set up by the
 * file that owns it; every unwind label is named after what it undoes.
 */
#include <linux/module.h>

#include "vgmem_drv.h"

static int __init vgmem_init(void)
{
	int ret;

	ret = vgmem_ctrlq_dev_init();
	if (ret)
		return ret;

	ret = vgmem_lrc_init();
	if (ret)
		goto err_ctrlq;

	ret = vgmem_registry_init();
	if (ret)
		goto err_lrc;

	ret = vgmem_mdev_init();
	if (ret)
		goto err_registry;

	ret = vgmem_netlink_init();
	if (ret)
		goto err_mdev;

	pr_info("vgmem: GPU memory oversubscription for vGPUs, ABI %u\n",
		VGMEM_ABI_VERSION);
	return 0;

err_mdev:
	vgmem_mdev_exit();
err_registry:
	vgmem_registry_exit();
err_lrc:
	vgmem_lrc_exit();
err_ctrlq:
	vgmem_ctrlq_dev_exit();
	return ret;
}

static void __exit vgmem_exit(void)
{
	vgmem_netlink_exit();
	vgmem_mdev_exit();
	vgmem_registry_exit();
	vgmem_lrc_exit();
	vgmem_ctrlq_dev_exit();
}

module_init(vgmem_init);
module_exit(vgmem_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vgmem: GPU memory oversubscription for virtual GPUs");
MODULE_AUTHOR("vgmem developers");
