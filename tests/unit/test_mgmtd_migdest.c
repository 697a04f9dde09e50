// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Where a migrating domain's vGPUs go (mgmtd/migdest.c): the XML helpers
 * (a domain's mdevs, one renamed, a node device's mdev type), the choice
 * of the destination's mdev, and the whole question asked of two libvirt
 * test-driver connections standing for the source and the destination
 * (node devices with mdev capabilities, a domain there naming one).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>

#include "mg_fixture.h"
#include "mgmtd/migdest.h"

#define U1	"c2177883-f1bb-47f0-914d-32a22e3a8801"
#define U2	"c2177883-f1bb-47f0-914d-32a22e3a8802"
#define U3	"c2177883-f1bb-47f0-914d-32a22e3a8803"
#define U4	"c2177883-f1bb-47f0-914d-32a22e3a8804"
#define U5	"c2177883-f1bb-47f0-914d-32a22e3a8805"
#define META	"<metadata><vgmem:gpu xmlns:vgmem='" MG_XMLNS "' quota='256M' weight='300'/></metadata>"

static const char *mdev_dev(char *buf, size_t len, const char *uuid,
			    const char *type)
{
	char name[64];
	size_t i;

	snprintf(name, sizeof(name), "mdev_%s", uuid);
	for (i = 0; name[i]; i++)
		if (name[i] == '-')
			name[i] = '_';
	snprintf(buf, len,
		 "<device><name>%s</name><parent>computer</parent>"
		 "<capability type='mdev'><type id='%s'/><uuid>%s</uuid>"
		 "<iommuGroup number='1'/></capability></device>",
		 name, type, uuid);
	return buf;
}

static const char *domain(char *buf, size_t len, const char *name, int n,
			  const char *hostdevs)
{
	snprintf(buf, len,
		 "<domain type='test'><name>%s</name>"
		 "<uuid>6695eb01-f6a4-8304-79aa-97f2502e19%02d</uuid>"
		 "<memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os>"
		 META "<devices>%s</devices></domain>", name, n, hostdevs);
	return buf;
}

#define HOSTDEV(u)	"<hostdev mode='subsystem' type='mdev' model='vfio-pci'>" \
			"<source><address uuid='" u "'/></source></hostdev>"
#define PCIDEV		"<hostdev mode='subsystem' type='pci' managed='yes'><source>" \
			"<address domain='0x0000' bus='0x06' slot='0x00' function='0x0'/>" \
			"</source></hostdev>"

static void test_nodedev_mdev(void **state)
{
	char x[1024], uuid[MG_ID_LEN], type[64];

	(void)state;
	mdev_dev(x, sizeof(x), U1, "vgmem-1g");
	assert_int_equal(mg_nodedev_mdev(x, uuid, sizeof(uuid), type, sizeof(type)), 0);
	assert_string_equal(uuid, U1);
	assert_string_equal(type, "vgmem-1g");
	/* Upper case is the same UUID. */
	mdev_dev(x, sizeof(x), "C2177883-F1BB-47F0-914D-32A22E3A8801", "vgmem-1g");
	assert_int_equal(mg_nodedev_mdev(x, uuid, sizeof(uuid), type, sizeof(type)), 0);
	assert_string_equal(uuid, U1);
	/* Another kind of device, something that is not one, half an mdev. */
	assert_int_equal(mg_nodedev_mdev("<device><name>pci_0000_00_02_0</name>"
					 "<capability type='pci'/></device>",
					 uuid, sizeof(uuid), type, sizeof(type)), -ENOENT);
	assert_string_equal(uuid, "");
	assert_int_equal(mg_nodedev_mdev("<domain/>", uuid, sizeof(uuid), type,
					 sizeof(type)), -EINVAL);
	assert_int_equal(mg_nodedev_mdev("<device", uuid, sizeof(uuid), type,
					 sizeof(type)), -EINVAL);
	assert_int_equal(mg_nodedev_mdev("<device><capability type='mdev'><uuid>" U1
					 "</uuid></capability></device>",
					 uuid, sizeof(uuid), type, sizeof(type)), -EINVAL);
	assert_string_equal(uuid, "");
	assert_int_equal(mg_nodedev_mdev("<device><capability type='mdev'><type id='a'/>"
					 "<uuid>not-a-uuid</uuid></capability></device>",
					 uuid, sizeof(uuid), type, sizeof(type)), -EINVAL);
	assert_string_equal(type, "");
}

static void test_domain_mdevs(void **state)
{
	char x[2048], u[4][MG_ID_LEN];
	size_t n = 99;

	(void)state;
	domain(x, sizeof(x), "d", 1, HOSTDEV(U2) PCIDEV HOSTDEV(U1));
	assert_int_equal(mg_domain_mdevs(x, u, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(u[0], U2);
	assert_string_equal(u[1], U1);
	assert_int_equal(mg_domain_mdevs(x, u, 1, &n), -E2BIG);
	domain(x, sizeof(x), "d", 1, PCIDEV);
	assert_int_equal(mg_domain_mdevs(x, u, 4, &n), 0);
	assert_int_equal(n, 0);
	domain(x, sizeof(x), "d", 1, HOSTDEV("c2177883-zzzz-47f0-914d-32a22e3a8801"));
	assert_int_equal(mg_domain_mdevs(x, u, 4, &n), -EINVAL);
	domain(x, sizeof(x), "d", 1, "<hostdev mode='subsystem' type='mdev'><source/></hostdev>");
	assert_int_equal(mg_domain_mdevs(x, u, 4, &n), -EINVAL);
	assert_int_equal(mg_domain_mdevs("<node/>", u, 4, &n), -EINVAL);
	assert_int_equal(mg_domain_mdevs("<domain", u, 4, &n), -EINVAL);
}

static void test_domain_set_mdev(void **state)
{
	char x[2048], u[4][MG_ID_LEN], err[256], mdev[MG_ID_LEN];
	struct mg_vm_policy meta;
	unsigned int mask;
	char *out = (char *)1;
	size_t n;
	int gpu;

	(void)state;
	domain(x, sizeof(x), "d", 1, HOSTDEV(U1) PCIDEV HOSTDEV(U2));
	assert_int_equal(mg_domain_set_mdev(x, U2, U5, &out, err, sizeof(err)), 0);
	assert_non_null(out);
	assert_int_equal(mg_domain_mdevs(out, u, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(u[0], U1);
	assert_string_equal(u[1], U5);
	/* The policy travels with the domain: the destination's mgmtd reads it. */
	assert_int_equal(mg_domain_parse(out, mdev, sizeof(mdev), &meta, &mask, &gpu,
					 err, sizeof(err)), 0);
	assert_int_equal(meta.quota, 256ull << 20);
	assert_int_equal(meta.weight, 300);
	/* Nothing else changed: the PCI hostdev is still there. */
	assert_non_null(strstr(out, "type=\"pci\""));
	free(out);
	/* Not there: an error, no XML. */
	assert_int_equal(mg_domain_set_mdev(x, U3, U5, &out, err, sizeof(err)), -EINVAL);
	assert_null(out);
	assert_non_null(strstr(err, U3));
	assert_int_equal(mg_domain_set_mdev(x, U1, "bad", &out, err, sizeof(err)), -EINVAL);
	assert_null(out);
	assert_int_equal(mg_domain_set_mdev("<domain", U1, U5, &out, err, sizeof(err)), -EINVAL);
	assert_null(out);
}

static void test_pick(void **state)
{
	const struct mg_mdev d[] = {
		{ U3, "vgmem-1g" }, { U1, "vgmem-1g" }, { U2, "vgmem-2g" },
		{ U4, "vgmem-1g" },
	};
	const char used[][MG_ID_LEN] = { U3 };
	char out[MG_ID_LEN], err[256];

	(void)state;
	/* Another host with the source's UUID free: it keeps its name. */
	assert_int_equal(mg_mig_pick_mdev(d, 4, used, 1, U1, "vgmem-1g", false,
					  out, err, sizeof(err)), 0);
	assert_string_equal(out, U1);
	/* One host: the source's own is open by its QEMU; the lowest free other. */
	assert_int_equal(mg_mig_pick_mdev(d, 4, used, 1, U1, "vgmem-1g", true,
					  out, err, sizeof(err)), 0);
	assert_string_equal(out, U4);
	/* Without anything used, the lowest UUID of the type. */
	assert_int_equal(mg_mig_pick_mdev(d, 4, NULL, 0, U5, "vgmem-1g", false,
					  out, err, sizeof(err)), 0);
	assert_string_equal(out, U1);
	/* Only the type counts. */
	assert_int_equal(mg_mig_pick_mdev(d, 4, used, 1, U1, "vgmem-2g", true,
					  out, err, sizeof(err)), 0);
	assert_string_equal(out, U2);
	/* Nothing free: -ENOSPC, saying which type and how many. */
	assert_int_equal(mg_mig_pick_mdev(d, 4, used, 1, U2, "vgmem-4g", false,
					  out, err, sizeof(err)), -ENOSPC);
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "vgmem-4g"));
	assert_non_null(strstr(err, "0 of that type"));
	assert_int_equal(mg_mig_pick_mdev(d, 3, used, 1, U1, "vgmem-1g", true,
					  out, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "2 of that type"));
}

/* ---- both ends through libvirt's test driver ---------------------------- */

static struct mgf_dir tmp;

static char *write_node(const char *name, const char *body, char *uri, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.xml", tmp.path, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "<node>%s</node>\n", body);
	fclose(f);
	snprintf(uri, len, "test://%s", path);
	return uri;
}

static void test_dest_xml(void **state)
{
	char src_uri[300], dst_uri[300], body[8192], x[2048], m[512], err[256];
	char u[4][MG_ID_LEN];
	virConnectPtr src, dst;
	virDomainPtr dom;
	char *dxml;
	size_t n;

	(void)state;
	assert_int_equal(mgf_dir_make(&tmp, "migdest"), 0);
	/* The source: the domain on U1, a domain without vGPU, their mdev. */
	body[0] = 0;
	strcat(body, domain(x, sizeof(x), "vm1", 1, HOSTDEV(U1)));
	strcat(body, domain(x, sizeof(x), "plain", 2, ""));
	strcat(body, mdev_dev(m, sizeof(m), U1, "vgmem-1g"));
	write_node("src", body, src_uri, sizeof(src_uri));
	/*
	 * The destination: every mdev of the source's kernel (test connections
	 * report one hostname: one host), U3 named by a domain there, U2 of
	 * another type; U4 is the one free.
	 */
	body[0] = 0;
	strcat(body, domain(x, sizeof(x), "other", 3, HOSTDEV(U3)));
	strcat(body, mdev_dev(m, sizeof(m), U1, "vgmem-1g"));
	strcat(body, mdev_dev(m, sizeof(m), U2, "vgmem-2g"));
	strcat(body, mdev_dev(m, sizeof(m), U3, "vgmem-1g"));
	strcat(body, mdev_dev(m, sizeof(m), U4, "vgmem-1g"));
	write_node("dst", body, dst_uri, sizeof(dst_uri));

	src = virConnectOpen(src_uri);
	dst = virConnectOpen(dst_uri);
	assert_non_null(src);
	assert_non_null(dst);
	dom = virDomainLookupByName(src, "vm1");
	assert_non_null(dom);
	assert_int_equal(mg_mig_dest_xml(src, dom, dst, &dxml, err, sizeof(err)), 0);
	assert_non_null(dxml);
	assert_int_equal(mg_domain_mdevs(dxml, u, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(u[0], U4);
	assert_non_null(strstr(dxml, "weight=\"300\""));
	free(dxml);
	virDomainFree(dom);

	/* Without a vGPU the domain goes as it is. */
	dom = virDomainLookupByName(src, "plain");
	assert_non_null(dom);
	dxml = (char *)1;
	assert_int_equal(mg_mig_dest_xml(src, dom, dst, &dxml, err, sizeof(err)), 0);
	assert_null(dxml);
	virDomainFree(dom);
	virConnectClose(dst);

	/* A destination whose only free mdev of the type is taken meanwhile. */
	body[0] = 0;
	strcat(body, domain(x, sizeof(x), "other", 3, HOSTDEV(U3)));
	strcat(body, domain(x, sizeof(x), "late", 4, HOSTDEV(U4)));
	strcat(body, mdev_dev(m, sizeof(m), U1, "vgmem-1g"));
	strcat(body, mdev_dev(m, sizeof(m), U3, "vgmem-1g"));
	strcat(body, mdev_dev(m, sizeof(m), U4, "vgmem-1g"));
	write_node("full", body, dst_uri, sizeof(dst_uri));
	dst = virConnectOpen(dst_uri);
	assert_non_null(dst);
	dom = virDomainLookupByName(src, "vm1");
	assert_int_equal(mg_mig_dest_xml(src, dom, dst, &dxml, err, sizeof(err)), -ENOSPC);
	assert_null(dxml);
	assert_non_null(strstr(err, "no free vGPU of type vgmem-1g"));
	virDomainFree(dom);
	virConnectClose(dst);

	/* A source whose libvirt does not list the domain's mdev. */
	body[0] = 0;
	strcat(body, domain(x, sizeof(x), "vm1", 1, HOSTDEV(U5)));
	write_node("nosrc", body, src_uri, sizeof(src_uri));
	virConnectClose(src);
	src = virConnectOpen(src_uri);
	assert_non_null(src);
	dst = virConnectOpen(write_node("dst2", mdev_dev(m, sizeof(m), U4, "vgmem-1g"),
					dst_uri, sizeof(dst_uri)));
	dom = virDomainLookupByName(src, "vm1");
	assert_int_equal(mg_mig_dest_xml(src, dom, dst, &dxml, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, U5));
	virDomainFree(dom);
	virConnectClose(dst);
	virConnectClose(src);
	assert_int_equal(mgf_dir_remove(&tmp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodedev_mdev),
		cmocka_unit_test(test_domain_mdevs),
		cmocka_unit_test(test_domain_set_mdev),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_dest_xml),
	};

	mg_log_set_level(getenv("MG_DEBUG") ? MG_LOG_DEBUG : MG_LOG_ERR - 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
