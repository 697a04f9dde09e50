// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Where a domain's vGPUs go when mgmtd live-migrates it: for each mdev
 * hostdev of the domain, a vGPU (mdev) of the same type on the
 * destination host that no domain there names, written into the domain
 * XML the destination defines (VIR_MIGRATE_PARAM_DEST_XML).
 *
 * An mdev is a host's device, named by a UUID the host's operator chose:
 * the destination has the source's UUID only if someone defined it there
 * (mdevctl definitions copied between hosts). So, per source vGPU:
 *   1. the source's own UUID, if the destination has an mdev of that UUID
 *      and type that none of its domains names, and it is another host;
 *   2. else the first (by UUID) mdev of the same type the destination has
 *      that none of its domains names and no earlier vGPU of this domain
 *      took;
 *   3. else the migration fails, saying which type had no free mdev.
 * "Another host" is decided by the hostnames the two libvirtds report:
 * two libvirtds on one kernel (a test bed, or a host that runs two) see
 * the same mdevs, and the source's own mdev is then open by the source's
 * QEMU however free the destination's libvirt thinks it is.
 *
 * Both libvirtds must have the node device driver (Debian:
 * libvirt-daemon-driver-nodedev, or libvirt-daemon on Debian 12) so that
 * their mdevs and the mdevs' types can be listed. mgmtd opens its own
 * connection to the destination (migrate_uri) for that, with its own
 * credentials, before the peer-to-peer migration opens libvirtd's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "mgmtd.h"
#include "migdest.h"
#include "log.h"

#define MIG_MAX_MDEVS	16	/* vGPUs per domain mgmtd migrates */

static const char *virt_err(void)
{
	virErrorPtr e = virGetLastError();

	return e && e->message ? e->message : "unknown libvirt error";
}

int mg_mig_pick_mdev(const struct mg_mdev *dst, size_t nr_dst,
		     const char (*used)[MG_ID_LEN], size_t nr_used,
		     const char *src_uuid, const char *type, bool same_host,
		     char *out, char *err, size_t errlen)
{
	const struct mg_mdev *best = NULL;
	size_t i, j, of_type = 0;

	out[0] = 0;
	for (i = 0; i < nr_dst; i++) {
		bool taken = false;

		if (strcmp(dst[i].type, type))
			continue;
		of_type++;
		for (j = 0; j < nr_used && !taken; j++)
			taken = !strcmp(used[j], dst[i].uuid);
		if (taken)
			continue;
		if (!strcmp(dst[i].uuid, src_uuid)) {
			if (same_host)
				continue;	/* the source's QEMU has it open */
			best = &dst[i];
			break;
		}
		if (!best || strcmp(dst[i].uuid, best->uuid) < 0)
			best = &dst[i];
	}
	if (!best) {
		snprintf(err, errlen,
			 "the destination has no free vGPU of type %s for mdev %s (%zu of that type, all named by its domains%s)",
			 type, src_uuid, of_type,
			 same_host ? " or the source's own" : "");
		return -ENOSPC;
	}
	snprintf(out, MG_ID_LEN, "%s", best->uuid);
	return 0;
}

int mg_list_mdevs(virConnectPtr c, const char *which, struct mg_mdev **out,
		  size_t *n, char *err, size_t errlen)
{
	virNodeDevicePtr *devs = NULL;
	struct mg_mdev *v;
	int nr, i;

	*out = NULL;
	*n = 0;
	nr = virConnectListAllNodeDevices(c, &devs,
					  VIR_CONNECT_LIST_NODE_DEVICES_CAP_MDEV);
	if (nr < 0) {
		snprintf(err, errlen, "cannot list the mdevs of %s (is libvirt's node device driver there?): %s",
			 which, virt_err());
		return -EIO;
	}
	v = calloc((size_t)nr + 1, sizeof(*v));
	for (i = 0; i < nr; i++) {
		char *xml = v ? virNodeDeviceGetXMLDesc(devs[i], 0) : NULL;

		if (xml && !mg_nodedev_mdev(xml, v[*n].uuid, sizeof(v[*n].uuid),
					    v[*n].type, sizeof(v[*n].type)))
			(*n)++;
		free(xml);
		virNodeDeviceFree(devs[i]);
	}
	free(devs);
	if (!v)
		return -ENOMEM;
	*out = v;
	return 0;
}

/* The mdevs every domain the destination has names (running or not). */
static int list_used(virConnectPtr c, char (**out)[MG_ID_LEN], size_t *n,
		     char *err, size_t errlen)
{
	virDomainPtr *doms = NULL;
	char (*v)[MG_ID_LEN];
	size_t cap = 0;
	int nr, i, ret = 0;

	*out = NULL;
	*n = 0;
	nr = virConnectListAllDomains(c, &doms, 0);
	if (nr < 0) {
		snprintf(err, errlen, "cannot list the destination's domains: %s",
			 virt_err());
		return -EIO;
	}
	cap = (size_t)nr * MIG_MAX_MDEVS + 1;
	v = calloc(cap, sizeof(*v));
	for (i = 0; i < nr; i++) {
		char *xml = v && !ret ? virDomainGetXMLDesc(doms[i], 0) : NULL;
		size_t got = 0;

		/* A domain whose XML cannot be read names nothing mgmtd knows. */
		if (xml && !mg_domain_mdevs(xml, v + *n, cap - *n, &got))
			*n += got;
		free(xml);
		virDomainFree(doms[i]);
	}
	free(doms);
	if (!v)
		return -ENOMEM;
	*out = v;
	return ret;
}

static bool same_host(virConnectPtr a, virConnectPtr b)
{
	char *ha = virConnectGetHostname(a), *hb = virConnectGetHostname(b);
	/* Unknown: assume one host, which only rules out the source's UUID. */
	bool same = !ha || !hb || !strcmp(ha, hb);

	free(ha);
	free(hb);
	return same;
}

int mg_mig_dest_xml(virConnectPtr src, virDomainPtr dom, virConnectPtr dst,
		    char **dxml, char *err, size_t errlen)
{
	char uuids[MIG_MAX_MDEVS][MG_ID_LEN], to[MG_ID_LEN];
	struct mg_mdev *smdevs = NULL, *dmdevs = NULL;
	char (*used)[MG_ID_LEN] = NULL;
	size_t nr_mdevs, nr_s = 0, nr_d = 0, nr_used = 0, i, j;
	char *xml, *next;
	bool one_host;
	int ret;

	*dxml = NULL;
	xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_MIGRATABLE |
				       VIR_DOMAIN_XML_SECURE);
	if (!xml) {
		snprintf(err, errlen, "cannot read the domain's XML: %s", virt_err());
		return -EIO;
	}
	ret = mg_domain_mdevs(xml, uuids, MIG_MAX_MDEVS, &nr_mdevs);
	if (ret) {
		snprintf(err, errlen, ret == -E2BIG ?
			 "the domain has more than %d mdev hostdevs" :
			 "the domain's mdev hostdevs cannot be read (%d)",
			 ret == -E2BIG ? MIG_MAX_MDEVS : ret);
		goto out;
	}
	if (!nr_mdevs)
		goto out;	/* no vGPU: the XML migrates as it is */
	ret = mg_list_mdevs(src, "this host", &smdevs, &nr_s, err, errlen);
	if (!ret)
		ret = mg_list_mdevs(dst, "the destination", &dmdevs, &nr_d, err, errlen);
	if (!ret)
		ret = list_used(dst, &used, &nr_used, err, errlen);
	if (ret)
		goto out;
	one_host = same_host(src, dst);
	for (i = 0; i < nr_mdevs; i++) {
		const char *type = NULL;
		char (*more)[MG_ID_LEN];

		for (j = 0; j < nr_s && !type; j++)
			if (!strcmp(smdevs[j].uuid, uuids[i]))
				type = smdevs[j].type;
		if (!type) {
			snprintf(err, errlen, "this host's libvirt does not list mdev %s",
				 uuids[i]);
			ret = -ENOENT;
			goto out;
		}
		ret = mg_mig_pick_mdev(dmdevs, nr_d, (const char (*)[MG_ID_LEN])used,
				       nr_used, uuids[i], type, one_host, to, err,
				       errlen);
		if (ret)
			goto out;
		/* What this domain took is not free for its next vGPU. */
		more = realloc(used, (nr_used + 1) * sizeof(*used));
		if (!more) {
			ret = -ENOMEM;
			goto out;
		}
		used = more;
		snprintf(used[nr_used++], MG_ID_LEN, "%s", to);
		if (!strcmp(to, uuids[i]))
			continue;
		ret = mg_domain_set_mdev(xml, uuids[i], to, &next, err, errlen);
		if (ret)
			goto out;
		mg_info("migration: vGPU %s becomes %s (type %s) on the destination",
			uuids[i], to, type);
		free(xml);
		xml = next;
	}
	*dxml = xml;
	xml = NULL;
out:
	free(xml);
	free(smdevs);
	free(dmdevs);
	free(used);
	return ret;
}
