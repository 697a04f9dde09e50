// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Domain XML: which mdev a domain uses, its <vgmem:gpu> policy, and its
 * virtio-fs shares (<filesystem> with <driver type='virtiofs'/>, at the
 * end of this file).
 *
 *   <domain ...>
 *     <metadata>
 *       <vgmem:gpu xmlns:vgmem="https://vgmem.dev/xmlns/vgmem/1"
 *                  quota="8G" weight="100" min="1G" low="2G" max="6G"
 *                  priority="1" gpu="0"/>
 *     </metadata>
 *     <devices>
 *       <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
 *         <source><address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source>
 *       </hostdev>
 *
 * Strict: an unknown attribute, a malformed number or a value out of range
 * is an error naming it, so an operator's typo never passes silently.
 * Relations between fields (min <= low <= max <= quota) are checked by the
 * model, which quotes the attributes as written (mg_domain_parse_text()),
 * and then by the policy engine. Input is untrusted: no network access and
 * no entity expansion while parsing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "mgmtd.h"
#include "policy/policy.h"

#define MG_XML_MAX	(4u << 20)	/* larger domain XML is refused */

static int perr(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static xmlDocPtr read_doc(const char *xml)
{
	size_t len;

	if (!xml)
		return NULL;
	len = strlen(xml);
	if (len > MG_XML_MAX)
		return NULL;
	return xmlReadMemory(xml, (int)len, "domain.xml", NULL,
			     XML_PARSE_NONET | XML_PARSE_NOERROR |
			     XML_PARSE_NOWARNING);
}

static bool is_elem(xmlNodePtr n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE &&
	       !xmlStrcmp(n->name, (const xmlChar *)name);
}

static bool in_our_ns(xmlNodePtr n)
{
	return n->ns && n->ns->href &&
	       !xmlStrcmp(n->ns->href, (const xmlChar *)MG_XMLNS);
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * The attributes of one <vgmem:gpu> element; the sizes as written in
 * *txt too (if not NULL), for messages that quote them (model.c).
 */
static int parse_gpu_elem(xmlNodePtr n, struct mg_vm_policy *meta,
			  unsigned int *mask, int *gpu,
			  struct mg_pol_text *txt, char *err, size_t errlen)
{
	struct mg_pol_text t;
	xmlAttrPtr a;
	int ret = 0;

	memset(meta, 0, sizeof(*meta));
	memset(&t, 0, sizeof(t));
	*mask = 0;
	*gpu = -1;
	for (a = n->properties; a && !ret; a = a->next) {
		const char *name = (const char *)a->name;
		xmlChar *vx = xmlNodeListGetString(n->doc, a->children, 1);
		const char *v = vx ? (const char *)vx : "";
		uint64_t *size = NULL;
		unsigned int bit = 0;
		char *text = NULL;
		uint32_t u;

		if (!strcmp(name, "quota")) {
			size = &meta->quota;
			bit = MG_POL_QUOTA;
			text = t.quota;
		} else if (!strcmp(name, "min")) {
			size = &meta->min;
			bit = MG_POL_MIN;
			text = t.min;
		} else if (!strcmp(name, "low")) {
			size = &meta->low;
			bit = MG_POL_LOW;
			text = t.low;
		} else if (!strcmp(name, "max")) {
			size = &meta->max;
			bit = MG_POL_MAX;
			text = t.max;
		}
		if (size) {
			if (mg_parse_size(v, size))
				ret = perr(err, errlen,
					   "vgmem:gpu %s=\"%.40s\" is not a size (e.g. 8G, 512M, bytes)",
					   name, v);
			snprintf(text, MG_SIZE_TEXT, "%s", v);
			t.written |= bit;
			*mask |= bit;
		} else if (!strcmp(name, "weight")) {
			if (parse_u32(v, VGP_WEIGHT_MIN, VGP_WEIGHT_MAX, &u))
				ret = perr(err, errlen,
					   "vgmem:gpu weight=\"%.40s\" is not an integer in %u..%u",
					   v, VGP_WEIGHT_MIN, VGP_WEIGHT_MAX);
			meta->weight = u;
			*mask |= MG_POL_WEIGHT;
		} else if (!strcmp(name, "priority")) {
			if (parse_u32(v, 0, VGP_PRIO_MAX, &u))
				ret = perr(err, errlen,
					   "vgmem:gpu priority=\"%.40s\" is not an integer in 0..%u",
					   v, VGP_PRIO_MAX);
			meta->priority = u;
			*mask |= MG_POL_PRIORITY;
		} else if (!strcmp(name, "gpu")) {
			if (parse_u32(v, 0, 255, &u))
				ret = perr(err, errlen,
					   "vgmem:gpu gpu=\"%.40s\" is not a GPU index", v);
			*gpu = (int)u;
		} else {
			ret = perr(err, errlen,
				   "vgmem:gpu has an unknown attribute '%.40s' (known: quota min low max weight priority gpu)",
				   name);
		}
		xmlFree(vx);
	}
	if (!ret && !(*mask & MG_POL_QUOTA))
		ret = perr(err, errlen, "vgmem:gpu needs a quota attribute");
	if (txt)
		*txt = t;
	return ret;
}

int mg_metadata_parse(const char *xml, struct mg_vm_policy *meta,
		      unsigned int *mask, int *gpu, char *err, size_t errlen)
{
	return mg_metadata_parse_text(xml, meta, mask, gpu, NULL, err, errlen);
}

int mg_metadata_parse_text(const char *xml, struct mg_vm_policy *meta,
			   unsigned int *mask, int *gpu,
			   struct mg_pol_text *txt, char *err, size_t errlen)
{
	xmlDocPtr doc = read_doc(xml);
	xmlNodePtr root;
	int ret;

	if (!doc)
		return perr(err, errlen, "vgmem metadata is not well-formed XML");
	root = xmlDocGetRootElement(doc);
	/*
	 * virDomainGetMetadata() returns the element without its namespace
	 * (it was asked for ours); accept it with ours too, nothing else.
	 */
	if (!is_elem(root, "gpu") || (root->ns && !in_our_ns(root)))
		ret = perr(err, errlen, "vgmem metadata is not a <gpu> element in namespace %s",
			   MG_XMLNS);
	else
		ret = parse_gpu_elem(root, meta, mask, gpu, txt, err, errlen);
	xmlFreeDoc(doc);
	return ret;
}

/*
 * For a <hostdev mode='subsystem' type='mdev'>: its <source><address>
 * (NULL if it has none; *is_mdev says whether h is such a hostdev).
 */
static xmlNodePtr mdev_address(xmlNodePtr h, bool *is_mdev)
{
	xmlChar *mode, *type;
	xmlNodePtr s, a;

	*is_mdev = false;
	if (!is_elem(h, "hostdev"))
		return NULL;
	mode = xmlGetProp(h, (const xmlChar *)"mode");
	type = xmlGetProp(h, (const xmlChar *)"type");
	*is_mdev = mode && type && !xmlStrcmp(mode, (const xmlChar *)"subsystem") &&
		   !xmlStrcmp(type, (const xmlChar *)"mdev");
	xmlFree(mode);
	xmlFree(type);
	if (!*is_mdev)
		return NULL;
	for (s = h->children; s && !is_elem(s, "source"); s = s->next)
		;
	for (a = s ? s->children : NULL; a && !is_elem(a, "address"); a = a->next)
		;
	return a;
}

/* A 36-character UUID attribute or text, lower-cased into out; 0 or -EINVAL. */
static int uuid_lower(const xmlChar *uuid, char *out, size_t len)
{
	size_t i;

	out[0] = 0;
	if (!uuid || xmlStrlen(uuid) != 36 || len < MG_ID_LEN)
		return -EINVAL;
	for (i = 0; i < 36; i++)
		out[i] = (char)tolower(uuid[i]);
	out[36] = 0;
	if (!mg_uuid_valid(out)) {
		out[0] = 0;
		return -EINVAL;
	}
	return 0;
}

/* The first mdev hostdev's UUID, lower-cased; "" if none. */
static int find_mdev(xmlNodePtr devices, char *mdev, size_t len, char *err,
		     size_t errlen)
{
	xmlNodePtr h, a;

	mdev[0] = 0;
	for (h = devices ? devices->children : NULL; h; h = h->next) {
		xmlChar *uuid;
		bool is_mdev;
		int r;

		a = mdev_address(h, &is_mdev);
		if (!is_mdev)
			continue;
		uuid = a ? xmlGetProp(a, (const xmlChar *)"uuid") : NULL;
		if (!uuid)
			return perr(err, errlen, "mdev hostdev without <source><address uuid=...>");
		r = uuid_lower(uuid, mdev, len);
		xmlFree(uuid);
		if (r)
			return perr(err, errlen, "mdev hostdev has a malformed UUID");
		return 0;
	}
	return 0;
}

int mg_domain_parse(const char *xml, char *mdev, size_t mdevlen,
		    struct mg_vm_policy *meta, unsigned int *mask, int *gpu,
		    char *err, size_t errlen)
{
	return mg_domain_parse_text(xml, mdev, mdevlen, meta, mask, gpu, NULL,
				    err, errlen);
}

int mg_domain_parse_text(const char *xml, char *mdev, size_t mdevlen,
			 struct mg_vm_policy *meta, unsigned int *mask,
			 int *gpu, struct mg_pol_text *txt, char *err,
			 size_t errlen)
{
	xmlNodePtr root, n, m, found = NULL;
	xmlDocPtr doc;
	int ret = 0;

	memset(meta, 0, sizeof(*meta));
	*mask = 0;
	*gpu = -1;
	if (mdevlen)
		mdev[0] = 0;
	if (mdevlen < MG_ID_LEN)
		return perr(err, errlen, "internal: mdev buffer too small");
	doc = read_doc(xml);
	if (!doc)
		return perr(err, errlen, "domain XML is not well-formed");
	root = xmlDocGetRootElement(doc);
	if (!is_elem(root, "domain")) {
		ret = perr(err, errlen, "not a <domain>");
		goto out;
	}
	for (n = root->children; n; n = n->next) {
		if (is_elem(n, "devices")) {
			ret = find_mdev(n, mdev, mdevlen, err, errlen);
			if (ret)
				goto out;
		} else if (is_elem(n, "metadata")) {
			for (m = n->children; m; m = m->next) {
				if (m->type != XML_ELEMENT_NODE || !in_our_ns(m))
					continue;
				if (!is_elem(m, "gpu")) {
					ret = perr(err, errlen,
						   "unknown element <%.40s> in the vgmem namespace",
						   (const char *)m->name);
					goto out;
				}
				if (found) {
					ret = perr(err, errlen, "more than one <vgmem:gpu>");
					goto out;
				}
				found = m;
			}
		}
	}
	if (found)
		ret = parse_gpu_elem(found, meta, mask, gpu, txt, err, errlen);
out:
	xmlFreeDoc(doc);
	return ret;
}

int mg_domain_near_ns(const char *xml, char *uri, size_t len)
{
	xmlNodePtr root, n, m;
	xmlDocPtr doc;
	int ret = 0;

	if (len)
		uri[0] = 0;
	doc = read_doc(xml);
	if (!doc)
		return -EINVAL;
	root = xmlDocGetRootElement(doc);
	if (!is_elem(root, "domain")) {
		ret = -EINVAL;
		goto out;
	}
	for (n = root->children; n && !ret; n = n->next) {
		if (!is_elem(n, "metadata"))
			continue;
		for (m = n->children; m && !ret; m = m->next) {
			if (m->type != XML_ELEMENT_NODE || !m->ns ||
			    !m->ns->href || in_our_ns(m) ||
			    !strcasestr((const char *)m->ns->href, "vgmem"))
				continue;
			if (len)
				snprintf(uri, len, "%s",
					 (const char *)m->ns->href);
			ret = 1;
		}
	}
out:
	xmlFreeDoc(doc);
	return ret;
}

/* ---- migration: a domain's vGPUs, renamed; a host's vGPUs ------------ */

static xmlNodePtr devices_of(xmlDocPtr doc)
{
	xmlNodePtr root = xmlDocGetRootElement(doc), n;

	if (!is_elem(root, "domain"))
		return NULL;
	for (n = root->children; n; n = n->next)
		if (is_elem(n, "devices"))
			return n;
	return NULL;
}

int mg_domain_mdevs(const char *xml, char (*uuids)[MG_ID_LEN], size_t max,
		    size_t *n)
{
	xmlNodePtr h, a, devices;
	xmlDocPtr doc;
	int ret = 0;

	*n = 0;
	doc = read_doc(xml);
	if (!doc)
		return -EINVAL;
	if (!is_elem(xmlDocGetRootElement(doc), "domain")) {
		ret = -EINVAL;
		goto out;
	}
	devices = devices_of(doc);
	for (h = devices ? devices->children : NULL; h; h = h->next) {
		xmlChar *uuid;
		bool is_mdev;

		a = mdev_address(h, &is_mdev);
		if (!is_mdev)
			continue;
		uuid = a ? xmlGetProp(a, (const xmlChar *)"uuid") : NULL;
		if (*n >= max) {
			ret = -E2BIG;
		} else if (uuid_lower(uuid, uuids[*n], MG_ID_LEN)) {
			ret = -EINVAL;
		} else {
			(*n)++;
		}
		xmlFree(uuid);
		if (ret)
			break;
	}
out:
	xmlFreeDoc(doc);
	return ret;
}

int mg_domain_set_mdev(const char *xml, const char *from, const char *to,
		       char **out, char *err, size_t errlen)
{
	xmlNodePtr h, a, devices;
	xmlChar *buf = NULL;
	char cur[MG_ID_LEN];
	bool done = false;
	xmlDocPtr doc;
	int len = 0, ret = 0;

	*out = NULL;
	if (!mg_uuid_valid(from) || !mg_uuid_valid(to))
		return perr(err, errlen, "internal: malformed mdev UUID to rename");
	doc = read_doc(xml);
	if (!doc)
		return perr(err, errlen, "domain XML is not well-formed");
	devices = devices_of(doc);
	for (h = devices ? devices->children : NULL; h && !done; h = h->next) {
		xmlChar *uuid;
		bool is_mdev;

		a = mdev_address(h, &is_mdev);
		if (!a)
			continue;
		uuid = xmlGetProp(a, (const xmlChar *)"uuid");
		if (!uuid_lower(uuid, cur, sizeof(cur)) && !strcmp(cur, from)) {
			xmlSetProp(a, (const xmlChar *)"uuid", (const xmlChar *)to);
			done = true;
		}
		xmlFree(uuid);
	}
	if (!done) {
		ret = perr(err, errlen, "the domain has no mdev hostdev %s", from);
		goto out;
	}
	xmlDocDumpMemory(doc, &buf, &len);
	*out = buf && len > 0 ? strndup((const char *)buf, (size_t)len) : NULL;
	if (!*out)
		ret = -ENOMEM;
	xmlFree(buf);
out:
	xmlFreeDoc(doc);
	return ret;
}

int mg_nodedev_mdev(const char *xml, char *uuid, size_t ulen, char *type,
		    size_t tlen)
{
	xmlNodePtr root, n, c;
	xmlChar *v = NULL;
	xmlDocPtr doc;
	int ret = -ENOENT;

	uuid[0] = 0;
	type[0] = 0;
	doc = read_doc(xml);
	if (!doc)
		return -EINVAL;
	root = xmlDocGetRootElement(doc);
	if (!is_elem(root, "device")) {
		ret = -EINVAL;
		goto out;
	}
	for (n = root->children; n; n = n->next) {
		xmlChar *cap;
		bool mdev;

		if (!is_elem(n, "capability"))
			continue;
		cap = xmlGetProp(n, (const xmlChar *)"type");
		mdev = cap && !xmlStrcmp(cap, (const xmlChar *)"mdev");
		xmlFree(cap);
		if (!mdev)
			continue;
		for (c = n->children; c; c = c->next) {
			if (is_elem(c, "type") && !type[0]) {
				v = xmlGetProp(c, (const xmlChar *)"id");
				if (v && xmlStrlen(v) > 0 && (size_t)xmlStrlen(v) < tlen)
					snprintf(type, tlen, "%s", (const char *)v);
				xmlFree(v);
			} else if (is_elem(c, "uuid") && !uuid[0]) {
				v = xmlNodeGetContent(c);
				if (uuid_lower(v, uuid, ulen))
					uuid[0] = 0;
				xmlFree(v);
			}
		}
		/* Both are needed to place a vGPU: anything else is no use. */
		ret = uuid[0] && type[0] ? 0 : -EINVAL;
		break;
	}
out:
	if (ret) {
		uuid[0] = 0;
		type[0] = 0;
	}
	xmlFreeDoc(doc);
	return ret;
}

/* ---- virtio-fs shares --------------------------------------------------- */

static xmlNodePtr child_elem(xmlNodePtr n, const char *name)
{
	xmlNodePtr c;

	for (c = n->children; c; c = c->next)
		if (is_elem(c, name))
			return c;
	return NULL;
}

/* A virtio-fs <filesystem>: type 'mount' (libvirt's default) and driver. */
static bool is_virtiofs(xmlNodePtr fs)
{
	xmlNodePtr drv = child_elem(fs, "driver");
	xmlChar *type = xmlGetProp(fs, (const xmlChar *)"type");
	xmlChar *dtype = drv ? xmlGetProp(drv, (const xmlChar *)"type") : NULL;
	bool ok = (!type || !xmlStrcmp(type, (const xmlChar *)"mount")) &&
		  dtype && !xmlStrcmp(dtype, (const xmlChar *)"virtiofs");

	xmlFree(type);
	xmlFree(dtype);
	return ok;
}

/* Appends one sentence to bad (with a separator), truncating. */
static void bad_add(char *bad, size_t badlen, const char *msg)
{
	size_t used = strnlen(bad, badlen);

	if (!badlen || used + 1 >= badlen)
		return;
	snprintf(bad + used, badlen - used, "%s%s", used ? "; " : "", msg);
}

/*
 * One <filesystem>: fills s from it, or says in err what is missing or
 * too long (a value that does not fit is refused, never truncated).
 */
static int share_from_elem(xmlNodePtr fs, uint32_t id, struct mg_share *s,
			   char *err, size_t errlen)
{
	xmlNodePtr src = child_elem(fs, "source");
	xmlNodePtr tgt = child_elem(fs, "target");
	xmlChar *dir = src ? xmlGetProp(src, (const xmlChar *)"dir") : NULL;
	xmlChar *tag = tgt ? xmlGetProp(tgt, (const xmlChar *)"dir") : NULL;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->id = id;
	s->readonly = child_elem(fs, "readonly") != NULL;
	if (!dir)
		ret = perr(err, errlen, "share %u: no <source dir=...>", id);
	else if (!tag)
		ret = perr(err, errlen, "share %u: no <target dir=...> (the tag)", id);
	else if ((size_t)xmlStrlen(tag) >= sizeof(s->tag) - 3)
		ret = perr(err, errlen, "share %u: tag '%.40s...' is longer than 36 bytes",
			   id, (const char *)tag);
	else if ((size_t)xmlStrlen(dir) >= sizeof(s->source))
		ret = perr(err, errlen, "share %u (tag '%s'): source is longer than %zu bytes",
			   id, (const char *)tag, sizeof(s->source) - 1);
	if (!ret) {
		snprintf(s->tag, sizeof(s->tag), "%s", (const char *)tag);
		snprintf(s->source, sizeof(s->source), "%s", (const char *)dir);
	}
	xmlFree(dir);
	xmlFree(tag);
	return ret;
}

/*
 * A guest finds a share by its tag, so two shares may not have one: the
 * first keeps it (libvirt itself refuses two <target dir> alike, so this
 * is a hand-made definition's mistake), the later one is refused.
 */
static int tag_taken(const struct mg_share *v, size_t nr,
		     const struct mg_share *s, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcmp(v[i].tag, s->tag))
			return perr(err, errlen,
				    "share %u (tag '%s'): share %u has this tag",
				    s->id, s->tag, v[i].id);
	return 0;
}

int mg_domain_shares(const char *xml, struct mg_share **out, size_t *n,
		     char *bad, size_t badlen)
{
	struct mg_share *v = NULL, s;
	xmlNodePtr root, dev, fs;
	char err[MG_WHY_LEN];
	xmlDocPtr doc;
	uint32_t id = 0;
	size_t nr = 0;
	int ret = 0;

	*out = NULL;
	*n = 0;
	if (badlen)
		bad[0] = 0;
	doc = read_doc(xml);
	if (!doc)
		return perr(bad, badlen, "domain XML is not well-formed");
	root = xmlDocGetRootElement(doc);
	if (!is_elem(root, "domain")) {
		ret = perr(bad, badlen, "not a <domain>");
		goto out;
	}
	dev = child_elem(root, "devices");
	for (fs = dev ? dev->children : NULL; fs; fs = fs->next) {
		if (!is_elem(fs, "filesystem") || !is_virtiofs(fs))
			continue;
		if (id == MG_SHARES_MAX) {
			snprintf(err, sizeof(err),
				 "more than %u virtio-fs shares: the rest are ignored",
				 MG_SHARES_MAX);
			bad_add(bad, badlen, err);
			break;
		}
		if (share_from_elem(fs, id, &s, err, sizeof(err)) ||
		    mg_share_check(&s, err, sizeof(err)) ||
		    tag_taken(v, nr, &s, err, sizeof(err))) {
			bad_add(bad, badlen, err);
			id++;
			continue;
		}
		if (!v) {
			/* every share fits: no reallocation, no partial list */
			v = calloc(MG_SHARES_MAX, sizeof(*v));
			if (!v) {
				ret = -ENOMEM;
				goto out;
			}
		}
		v[nr++] = s;
		id++;
	}
	*out = v;
	*n = nr;
	v = NULL;
out:
	free(v);
	xmlFreeDoc(doc);
	return ret;
}

/* Whether path has a component "." or "..", or is empty after the root. */
static bool has_dot_component(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return true;
		p += len;
	}
	return false;
}

int mg_share_check(const struct mg_share *s, char *err, size_t errlen)
{
	size_t tlen = strnlen(s->tag, sizeof(s->tag));
	size_t plen = strnlen(s->source, sizeof(s->source));
	struct stat st;
	size_t i;

	if (!tlen || tlen > VGMEM_SHARE_TAG_MAX || tlen == sizeof(s->tag))
		return perr(err, errlen, "share %u: the tag must have 1 to 36 bytes",
			    s->id);
	/* the tag is not printed: it may hold what a log should not */
	for (i = 0; i < tlen; i++)
		if ((unsigned char)s->tag[i] < 0x20 || s->tag[i] == 0x7f)
			return perr(err, errlen, "share %u: the tag has a control character",
				    s->id);
	if (strchr(s->tag, '/'))
		return perr(err, errlen, "share %u (tag '%s'): a tag has no '/'",
			    s->id, s->tag);
	if (plen == sizeof(s->source))
		return perr(err, errlen, "share %u (tag '%s'): source is too long",
			    s->id, s->tag);
	for (i = 0; i < plen; i++)
		if ((unsigned char)s->source[i] < 0x20)
			return perr(err, errlen,
				    "share %u (tag '%s'): source has a control character",
				    s->id, s->tag);
	if (s->source[0] != '/')
		return perr(err, errlen,
			    "share %u (tag '%s'): source '%.200s' is not an absolute path",
			    s->id, s->tag, s->source);
	if (has_dot_component(s->source))
		return perr(err, errlen,
			    "share %u (tag '%s'): source '%.200s' has a '.' or '..' component",
			    s->id, s->tag, s->source);
	if (stat(s->source, &st)) {
		int e = errno;

		perr(err, errlen, "share %u (tag '%s'): source '%.200s': %s",
		     s->id, s->tag, s->source, strerror(e));
		return e == ENOENT || e == ENOTDIR ? -e : -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		perr(err, errlen,
		     "share %u (tag '%s'): source '%.200s' is not a directory",
		     s->id, s->tag, s->source);
		return -ENOTDIR;
	}
	return 0;
}
