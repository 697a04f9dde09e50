// SPDX-License-Identifier: GPL-2.0
/*
 * vgmem.ko module metadata. The module's init/exit ladder (backend, sysfs,
 * mdev parent, netlink) lands with the kernel-integration work; until then
 * this file gives modpost the license and description the module needs.
 */
#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vgmem: GPU memory oversubscription for virtual GPUs");
MODULE_AUTHOR("vgmem developers");
