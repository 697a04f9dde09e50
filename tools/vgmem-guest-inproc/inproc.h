/* SPDX-License-Identifier: MIT */
/*
 * The in-process host of vgmem-guest's --inproc (guest-driver/tools/vgg.h,
 * struct vgg_inproc): the userspace host (host-module/user/host.h) with one
 * software GPU and one guest, on the host's side of the line so that the
 * vgmem-guest a tenant installs links libvgmem alone.
 */
#ifndef VGMEM_GUEST_INPROC_H
#define VGMEM_GUEST_INPROC_H

#include "guest-driver/tools/vgg.h"

extern const struct vgg_inproc vgg_inproc_host;

#endif
