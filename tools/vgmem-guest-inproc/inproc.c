// SPDX-License-Identifier: MIT
/*
 * vgmem-guest --inproc's device (inproc.h): a userspace host with one
 * software GPU of --vram bytes in 2 MiB chunks and one guest with --quota
 * and --ram, optionally given --share/--share-ro ID=DIR.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "host-module/user/host.h"
#include "inproc.h"

#define INPROC_CHUNK	(2ull << 20)

static int inproc_open(const struct vgg_opts *o, struct vgmem_dev **dev,
		       void **priv, char *why, size_t len)
{
	struct vg_host_config cfg;
	struct vg_host_guest *guest;
	struct vg_host *host;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sim.vram_size = o->vram;
	cfg.gpu.name = "inproc";
	cfg.gpu.chunk_size = INPROC_CHUNK;
	cfg.gpu.seed = 1;
	ret = vg_host_create(&cfg, &host);
	if (ret) {
		snprintf(why, len, "in-process host (vram %llu): %s",
			 (unsigned long long)o->vram, strerror(-ret));
		return ret;
	}
	ret = vg_host_guest_create(host, "vgmem-guest", o->quota, o->ram,
				   &guest);
	if (ret) {
		snprintf(why, len, "in-process guest: %s", strerror(-ret));
		goto out_host;
	}
	if (o->share_dir) {
		ret = o->share_dir_ro ?
		      vg_host_guest_set_share_ro(guest, o->share_dir_id,
						 o->share_dir) :
		      vg_host_guest_set_share(guest, o->share_dir_id,
					      o->share_dir);
		if (ret) {
			snprintf(why, len, "in-process share %u=%s: %s",
				 o->share_dir_id, o->share_dir, strerror(-ret));
			goto out_host;
		}
	}
	*dev = vg_host_guest_dev(guest);
	*priv = host;
	return 0;

out_host:
	vg_host_destroy(host);
	return ret;
}

/* The host takes its guests and their devices with it. */
static void inproc_close(void *priv)
{
	vg_host_destroy(priv);
}

const struct vgg_inproc vgg_inproc_host = {
	.open = inproc_open,
	.close = inproc_close,
};
