// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Domain XML as libvirt hands it to mgmtd (mgmtd/domxml.c): the input is
 * one XML document, given to each of mg_metadata_parse (the <vgmem:gpu>
 * element alone, as virDomainGetMetadata answers), mg_domain_parse (a
 * whole domain: the mdev hostdev and the metadata) and mg_domain_shares
 * (its virtio-fs filesystems).
 *
 * Invariants: each returns 0 or -EINVAL/-ENOMEM, a refusal with a
 * message. Metadata that parses round-trips: written back as a <gpu>
 * element with the fields it had (sizes in bytes) it parses to the same
 * policy, mask and GPU, and always has a quota. A parsed domain's mdev is
 * "" or a canonical lower-case UUID. Shares come by ascending id, at most
 * MG_SHARES_MAX, each with a valid virtio-fs tag (vgmem_share_tag_ok), no
 * two with the same tag, and each passes mg_share_check as it stands.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mgmtd/mgmtd.h"
#include "mgmtd/config.h"
#include "fuzz_util.h"

static void refusal(const char *what, int ret, const char *err)
{
	if (ret != -EINVAL && ret != -ENOMEM)
		fuzz_die("%s returned %d", what, ret);
	if (ret == -EINVAL && !err[0])
		fuzz_die("%s refused without a message", what);
}

static void metadata(const char *xml)
{
	struct mg_vm_policy m, m2;
	unsigned int mask = 0, mask2 = 0;
	int gpu = -1, gpu2 = -1, ret;
	char err[256] = "", out[512];
	size_t n = 0;

	ret = mg_metadata_parse(xml, &m, &mask, &gpu, err, sizeof(err));
	if (ret) {
		refusal("mg_metadata_parse", ret, err);
		return;
	}
	if (!(mask & MG_POL_QUOTA) || (mask & ~MG_POL_ALL) || gpu < -1 || gpu > 255)
		fuzz_die("metadata parsed with mask %#x gpu %d", mask, gpu);
#define ATTR(bit, name, v) do {						\
		if (mask & (bit))					\
			n += (size_t)snprintf(out + n, sizeof(out) - n,	\
					      " " name "=\"%llu\"",	\
					      (unsigned long long)(v)); \
	} while (0)
	n += (size_t)snprintf(out, sizeof(out), "<vgmem:gpu xmlns:vgmem=\"%s\"", MG_XMLNS);
	ATTR(MG_POL_QUOTA, "quota", m.quota);
	ATTR(MG_POL_MIN, "min", m.min);
	ATTR(MG_POL_LOW, "low", m.low);
	ATTR(MG_POL_MAX, "max", m.max);
	ATTR(MG_POL_WEIGHT, "weight", m.weight);
	ATTR(MG_POL_PRIORITY, "priority", m.priority);
#undef ATTR
	if (gpu >= 0)
		n += (size_t)snprintf(out + n, sizeof(out) - n, " gpu=\"%d\"", gpu);
	snprintf(out + n, sizeof(out) - n, "/>");
	ret = mg_metadata_parse(out, &m2, &mask2, &gpu2, err, sizeof(err));
	if (ret)
		fuzz_die("written back, the metadata is refused: %s: %s", out, err);
	if (mask2 != mask || gpu2 != gpu ||
	    ((mask & MG_POL_QUOTA) && m2.quota != m.quota) ||
	    ((mask & MG_POL_MIN) && m2.min != m.min) ||
	    ((mask & MG_POL_LOW) && m2.low != m.low) ||
	    ((mask & MG_POL_MAX) && m2.max != m.max) ||
	    ((mask & MG_POL_WEIGHT) && m2.weight != m.weight) ||
	    ((mask & MG_POL_PRIORITY) && m2.priority != m.priority))
		fuzz_die("written back, the metadata parses differently: %s", out);
}

static void domain(const char *xml)
{
	struct mg_vm_policy m;
	unsigned int mask = 0;
	char mdev[64], err[256] = "";
	int gpu = -1, ret;

	memset(mdev, 'x', sizeof(mdev));
	ret = mg_domain_parse(xml, mdev, sizeof(mdev), &m, &mask, &gpu, err,
			      sizeof(err));
	if (ret) {
		refusal("mg_domain_parse", ret, err);
		return;
	}
	if (!memchr(mdev, 0, sizeof(mdev)) || (mdev[0] && !mg_uuid_valid(mdev)))
		fuzz_die("mg_domain_parse: mdev '%.64s' is not a UUID", mdev);
	if (mask && !(mask & MG_POL_QUOTA))
		fuzz_die("mg_domain_parse: metadata without a quota");
}

static void shares(const char *xml)
{
	struct mg_share *s = NULL;
	char bad[1024] = "", err[256];
	size_t n = 0, i, j;
	int ret;

	ret = mg_domain_shares(xml, &s, &n, bad, sizeof(bad));
	if (ret) {
		refusal("mg_domain_shares", ret, bad);
		free(s);
		return;
	}
	if (!memchr(bad, 0, sizeof(bad)) || n > MG_SHARES_MAX || (n && !s))
		fuzz_die("mg_domain_shares: %zu shares", n);
	for (i = 0; i < n; i++) {
		if (!memchr(s[i].tag, 0, sizeof(s[i].tag)) ||
		    !vgmem_share_tag_ok(s[i].tag) ||
		    !memchr(s[i].source, 0, sizeof(s[i].source)) ||
		    s[i].source[0] != '/')
			fuzz_die("share %zu has a bad tag or source", i);
		if (i && s[i].id <= s[i - 1].id)
			fuzz_die("share ids not ascending");
		for (j = 0; j < i; j++)
			if (!strcmp(s[i].tag, s[j].tag))
				fuzz_die("two shares with tag '%s'", s[i].tag);
		if (mg_share_check(&s[i], err, sizeof(err)))
			fuzz_die("share %zu given out but mg_share_check refuses it: %s",
				 i, err);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *xml;

	if (size > 65536)
		return -1;
	xml = fuzz_cstr(data, size);
	metadata(xml);
	domain(xml);
	shares(xml);
	free(xml);
	return 0;
}
