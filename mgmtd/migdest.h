/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The destination's vGPUs for a domain mgmtd live-migrates (migdest.c):
 * what libvirt.c's migration asks before virDomainMigrateToURI3.
 */
#ifndef VGMEM_MGMTD_MIGDEST_H
#define VGMEM_MGMTD_MIGDEST_H

#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>

#include "model.h"

/* An mdev a libvirtd lists: its UUID (lower case) and type id. */
struct mg_mdev {
	char uuid[MG_ID_LEN];
	char type[64];		/* e.g. vgmem-1g */
};

/*
 * Every mdev a libvirtd knows (its node device driver), with its type;
 * *out malloc()ed (NULL if none). -EIO with err naming `which` if libvirt
 * cannot list them.
 */
int mg_list_mdevs(virConnectPtr c, const char *which, struct mg_mdev **out,
		  size_t *n, char *err, size_t errlen);
/*
 * The destination's mdev for the source's src_uuid of `type` (pure; the
 * rules are at the top of migdest.c): one of dst[] of that type that is
 * not in used[], the source's own UUID first unless same_host, else the
 * lowest UUID. 0 with out (MG_ID_LEN), or -ENOSPC with err saying how
 * many of that type the destination has.
 */
int mg_mig_pick_mdev(const struct mg_mdev *dst, size_t nr_dst,
		     const char (*used)[MG_ID_LEN], size_t nr_used,
		     const char *src_uuid, const char *type, bool same_host,
		     char *out, char *err, size_t errlen);
/*
 * The domain XML the destination should define: the domain's migratable
 * XML with each mdev hostdev naming the destination's vGPU. *dxml is NULL
 * (and 0 returned) if the domain has no mdev hostdev: it migrates as it
 * is. Errors (negative errno) leave a sentence in err for the operator.
 */
int mg_mig_dest_xml(virConnectPtr src, virDomainPtr dom, virConnectPtr dst,
		    char **dxml, char *err, size_t errlen);

#endif /* VGMEM_MGMTD_MIGDEST_H */
