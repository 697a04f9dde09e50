// SPDX-License-Identifier: GPL-2.0
/*
 * vgmem.ko: the init ladder and nothing else. Each rung is set up by the
 * file that owns it; every unwind label is named after what it undoes.
 */
#include <linux/module.h>

#include "vgk_drv.h"

static int __init vgk_init(void)
{
	int ret;

	ret = vgk_ctrlq_dev_init();
	if (ret)
		return ret;

	ret = vgk_lrc_init();
	if (ret)
		goto err_ctrlq;

	ret = vgk_registry_init();
	if (ret)
		goto err_lrc;

	ret = vgk_mdev_init();
	if (ret)
		goto err_registry;

	ret = vgk_netlink_init();
	if (ret)
		goto err_mdev;

	pr_info("vgmem: GPU memory oversubscription for vGPUs, ABI %u\n",
		VGMEM_ABI_VERSION);
	return 0;

err_mdev:
	vgk_mdev_exit();
err_registry:
	vgk_registry_exit();
err_lrc:
	vgk_lrc_exit();
err_ctrlq:
	vgk_ctrlq_dev_exit();
	return ret;
}

static void __exit vgk_exit(void)
{
	vgk_netlink_exit();
	vgk_mdev_exit();
	vgk_registry_exit();
	vgk_lrc_exit();
	vgk_ctrlq_dev_exit();
}

module_init(vgk_init);
module_exit(vgk_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vgmem: GPU memory oversubscription for virtual GPUs");
MODULE_AUTHOR("vgmem developers");
