// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * VMs' virtio-fs shares in mgmtd: read from domain XML (ids by position,
 * tags, read-only), checked (absolute, no '.'/'..' components, an existing
 * directory: hostile ones refused with a reason and left out, the others
 * kept), held by the model, handed to the embedded backend when the VM
 * runs, shown in the REST VM view. A refused table changes nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mg_fixture.h"
#include "mgmtd/rest_buf.h"
#include "mgmtd/rest_json.h"
#include "mgmtd/backend.h"
#include <libvgmem.h>

#define VMA	"00000000-0000-4000-8000-00000000000a"
#define VMB	"00000000-0000-4000-8000-00000000000b"

static struct mgf_dir tmp;
static char d1[128], d2[128], file[128];

static int setup(void **state)
{
	FILE *f;

	(void)state;
	mg_log_set_level(MG_LOG_ERR - 1);	/* refusals are expected: quiet */
	if (mgf_dir_make(&tmp, "shares"))
		return -1;
	snprintf(d1, sizeof(d1), "%s/data", tmp.path);
	snprintf(d2, sizeof(d2), "%s/models", tmp.path);
	snprintf(file, sizeof(file), "%s/plain", tmp.path);
	if (mkdir(d1, 0755) || mkdir(d2, 0755))
		return -1;
	f = fopen(file, "w");
	if (!f)
		return -1;
	fputs("x", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return mgf_dir_remove(&tmp);
}

static char *domain(const char *devices)
{
	static char buf[16384];

	assert_true(strlen(devices) < 8192);
	snprintf(buf, sizeof(buf),
		 "<domain type='kvm'><name>d</name><devices>%s"
		 "<hostdev mode='subsystem' type='mdev' model='vfio-pci'>"
		 "<source><address uuid='" VMA "'/></source></hostdev>"
		 "</devices></domain>", devices);
	return buf;
}

static char *fs(const char *src, const char *tag, const char *extra)
{
	static char buf[4][1024];
	static int i;
	char *b = buf[i++ % 4];

	snprintf(b, sizeof(buf[0]),
		 "<filesystem type='mount' accessmode='passthrough'>"
		 "<driver type='virtiofs'/><source dir='%s'/>"
		 "<target dir='%s'/>%s</filesystem>", src, tag, extra);
	return b;
}

/* ---- domain XML --------------------------------------------------------- */

static void test_parse_good(void **state)
{
	char devs[4096], bad[MG_WHY_LEN];
	struct mg_share *s;
	size_t n;

	(void)state;
	/* a 9p filesystem and a non-mount one are not virtio-fs shares */
	snprintf(devs, sizeof(devs),
		 "<filesystem type='mount'><source dir='%s'/><target dir='p9'/></filesystem>"
		 "%s"
		 "<filesystem type='block'><driver type='virtiofs'/><source dir='%s'/><target dir='b'/></filesystem>"
		 "%s", d2, fs(d1, "data", ""), d2, fs(d2, "models", "<readonly/>"));
	assert_int_equal(mg_domain_shares(domain(devs), &s, &n, bad, sizeof(bad)), 0);
	assert_string_equal(bad, "");
	assert_int_equal(n, 2);
	assert_int_equal(s[0].id, 0);
	assert_string_equal(s[0].tag, "data");
	assert_string_equal(s[0].source, d1);
	assert_false(s[0].readonly);
	assert_int_equal(s[1].id, 1);
	assert_string_equal(s[1].tag, "models");
	assert_string_equal(s[1].source, d2);
	assert_true(s[1].readonly);
	free(s);

	/* no filesystems: nothing, no error */
	assert_int_equal(mg_domain_shares(domain(""), &s, &n, bad, sizeof(bad)), 0);
	assert_int_equal(n, 0);
	assert_null(s);
	assert_string_equal(bad, "");
}

static void test_parse_hostile(void **state)
{
	char devs[8192], bad[2048], rel[160], dots[160], dot[160], longtag[64];
	struct mg_share *s;
	size_t n;

	(void)state;
	snprintf(rel, sizeof(rel), "%s", d1 + 1);		/* relative */
	snprintf(dots, sizeof(dots), "%s/../data", d1);	/* escapes up */
	snprintf(dot, sizeof(dot), "%s/./", d1);
	memset(longtag, 't', 37);
	longtag[37] = 0;
	devs[0] = 0;
	strcat(devs, fs(rel, "a", ""));				/* id 0 */
	strcat(devs, fs(dots, "b", ""));			/* id 1 */
	strcat(devs, fs(dot, "c", ""));				/* id 2 */
	strcat(devs, fs("/nonexistent-vgmem-share", "d", ""));	/* id 3 */
	strcat(devs, fs(file, "e", ""));			/* id 4: a file */
	strcat(devs, fs(d1, longtag, ""));			/* id 5 */
	strcat(devs, "<filesystem type='mount'><driver type='virtiofs'/>"
		     "<target dir='nosrc'/></filesystem>");	/* id 6 */
	strcat(devs, "<filesystem type='mount'><driver type='virtiofs'/>"
		     "<source dir='/tmp'/></filesystem>");	/* id 7: no tag */
	strcat(devs, fs(d2, "good", ""));			/* id 8 */
	strcat(devs, fs(d1, "a/b", ""));			/* id 9 */
	strcat(devs, fs(d1, "tab&#9;", ""));			/* id 10 */
	strcat(devs, fs(d1, "del&#127;", ""));			/* id 11 */
	strcat(devs, fs(d1, "good", ""));			/* id 12: taken */
	strcat(devs, fs(d1, "", ""));				/* id 13 */
	assert_int_equal(mg_domain_shares(domain(devs), &s, &n, bad, sizeof(bad)), 0);
	/* only the good one survives, with its own position as id */
	assert_int_equal(n, 1);
	assert_int_equal(s[0].id, 8);
	assert_string_equal(s[0].tag, "good");
	free(s);
	assert_non_null(strstr(bad, "share 9 (tag 'a/b'): a tag has no '/'"));
	assert_non_null(strstr(bad, "share 10: the tag has a control character"));
	assert_non_null(strstr(bad, "share 11: the tag has a control character"));
	assert_non_null(strstr(bad, "share 12 (tag 'good'): share 8 has this tag"));
	assert_non_null(strstr(bad, "share 13: the tag must have 1 to 36 bytes"));
	assert_non_null(strstr(bad, "share 0 (tag 'a')"));
	assert_non_null(strstr(bad, "not an absolute path"));
	assert_non_null(strstr(bad, "share 1 (tag 'b')"));
	assert_non_null(strstr(bad, "'..' component"));
	assert_non_null(strstr(bad, "share 2 (tag 'c')"));
	assert_non_null(strstr(bad, "share 3 (tag 'd')"));
	assert_non_null(strstr(bad, "No such file"));
	assert_non_null(strstr(bad, "share 4 (tag 'e')"));
	assert_non_null(strstr(bad, "not a directory"));
	assert_non_null(strstr(bad, "share 5: tag"));
	assert_non_null(strstr(bad, "share 6: no <source"));
	assert_non_null(strstr(bad, "share 7: no <target"));

	/* not XML, not a domain */
	assert_int_equal(mg_domain_shares("<domain", &s, &n, bad, sizeof(bad)),
			 -EINVAL);
	assert_null(s);
	assert_int_equal(mg_domain_shares("<x/>", &s, &n, bad, sizeof(bad)),
			 -EINVAL);
}

static void test_share_check(void **state)
{
	struct mg_share s;
	char err[MG_WHY_LEN];

	(void)state;
	memset(&s, 0, sizeof(s));
	snprintf(s.tag, sizeof(s.tag), "t");
	snprintf(s.source, sizeof(s.source), "%s", d1);
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), 0);
	snprintf(s.source, sizeof(s.source), "%s/", d1);	/* trailing slash */
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), 0);
	snprintf(s.source, sizeof(s.source), "/");
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), 0);
	snprintf(s.source, sizeof(s.source), "%s/..", d1);
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
	snprintf(s.source, sizeof(s.source), "%s/..x", d1);	/* a name, not '..' */
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -ENOENT);
	snprintf(s.source, sizeof(s.source), "%s", file);
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -ENOTDIR);
	snprintf(s.source, sizeof(s.source), "%s/x", file);
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -ENOTDIR);
	snprintf(s.source, sizeof(s.source), "%s\n", d1);
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
	snprintf(s.source, sizeof(s.source), "%s", d1);
	s.tag[0] = 0;
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
	/* tags: vgmem_share_tag_ok()'s rule, UTF-8 bytes allowed */
	snprintf(s.tag, sizeof(s.tag), "a/b");
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
	snprintf(s.tag, sizeof(s.tag), "x\x7f");
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
	snprintf(s.tag, sizeof(s.tag), "x\x1b[2J");
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
	assert_null(strstr(err, "\x1b"));	/* not echoed into logs */
	snprintf(s.tag, sizeof(s.tag), "%s", "0123456789012345678901234567890123456");
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
	snprintf(s.tag, sizeof(s.tag), "%s", "\xc3\xa9t\xc3\xa9 de donn\xc3\xa9" "es 0123456789");
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), 0);
	snprintf(s.tag, sizeof(s.tag), "%s", "012345678901234567890123456789012345");
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), 0);
	/* a source filling the field without a NUL */
	snprintf(s.tag, sizeof(s.tag), "t");
	memset(s.source, 'a', sizeof(s.source));
	s.source[0] = '/';
	assert_int_equal(mg_share_check(&s, err, sizeof(err)), -EINVAL);
}

/* ---- model and embedded backend ---------------------------------------- */

static void cfg_init(struct mg_config *cfg)
{
	mgf_config(cfg, tmp.db, "none");
	mgf_set(cfg, "embedded_vram", "64M");
	mgf_set(cfg, "embedded_vm", "a:" VMA ":32M");
}

static void two_shares(struct mg_share s[2])
{
	memset(s, 0, 2 * sizeof(*s));
	s[0].id = 0;
	snprintf(s[0].tag, sizeof(s[0].tag), "data");
	snprintf(s[0].source, sizeof(s[0].source), "%s", d1);
	s[1].id = 3;
	s[1].readonly = true;
	snprintf(s[1].tag, sizeof(s[1].tag), "models");
	snprintf(s[1].source, sizeof(s[1].source), "%s", d2);
}

static void assert_backend_has(struct mg *mg, const char *id, size_t want,
			       const struct mg_share *s)
{
	struct mg_share *got;
	size_t n, i;

	assert_int_equal(mg_backend_embedded_shares(mg_get_backend(mg), id,
						    &got, &n), 0);
	assert_int_equal(n, want);
	for (i = 0; i < n; i++) {
		assert_int_equal(got[i].id, s[i].id);
		assert_int_equal(got[i].readonly, s[i].readonly);
		assert_string_equal(got[i].source, s[i].source);
	}
	free(got);
}

/*
 * What the embedded backend's guest reads with VGMEM_CTRL_SHARES: the
 * ids, read-only flags and tags the model holds.
 */
static void assert_guest_sees(struct mg *mg, const char *id, size_t want,
			      const struct mg_share *s)
{
	struct vgmem_share_info got[MG_SHARES_MAX];
	struct vg_host_guest *g;
	unsigned int total = 0;
	size_t i;

	g = mgf_guest(mg, id);
	assert_int_equal(vgmem_shares(vg_host_guest_dev(g), got, MG_SHARES_MAX,
				      &total), (int)want);
	assert_int_equal(total, want);
	for (i = 0; i < want; i++) {
		assert_int_equal(got[i].id, s[i].id);
		assert_int_equal(got[i].flags,
				 s[i].readonly ? VGMEM_SHARE_F_RO : 0);
		assert_string_equal(got[i].tag, s[i].tag);
	}
}

static uint64_t view_gen(struct mg *mg)
{
	struct mg_gpu_info *gpus;
	struct mg_vm_info *vms;
	size_t ng, nv;
	uint64_t gen = 0;

	assert_int_equal(mg_list_view(mg, &gpus, &ng, &vms, &nv, &gen), 0);
	free(gpus);
	free(vms);
	return gen;
}

/* The last event's type and detail. */
static void last_event(struct mg *mg, char type[16], char *detail, size_t len)
{
	struct mg_event *ev;
	size_t n;

	assert_int_equal(mg_events_since(mg, 0, 1000, &ev, &n), 0);
	assert_true(n > 0);
	snprintf(type, 16, "%s", ev[n - 1].type);
	snprintf(detail, len, "%s", ev[n - 1].detail);
	free(ev);
}

static void test_model_and_backend(void **state)
{
	struct mg_share s[2], bad[2], *got;
	struct mg_config cfg;
	struct mg_vm_info vi;
	char type[16], detail[MG_EVENT_DETAIL_LEN];
	size_t n;
	struct mg *mg;

	(void)state;
	unlink(tmp.db);
	cfg_init(&cfg);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mg_get_vm(mg, VMA, &vi), 0);
	assert_true(vi.running);

	/* none at first */
	assert_int_equal(mg_get_vm_shares(mg, VMA, &got, &n), 0);
	assert_int_equal(n, 0);
	assert_null(got);
	assert_backend_has(mg, VMA, 0, NULL);

	two_shares(s);
	assert_int_equal(mg_vm_set_shares(mg, VMA, s, 2, ""), 0);
	assert_int_equal(mg_get_vm_shares(mg, "a", &got, &n), 0);	/* by name */
	assert_int_equal(n, 2);
	assert_string_equal(got[1].tag, "models");
	free(got);
	assert_backend_has(mg, VMA, 2, s);

	/* hostile tables change nothing: relative, '..', not a dir, ids */
	memcpy(bad, s, sizeof(bad));
	snprintf(bad[1].source, sizeof(bad[1].source), "relative/dir");
	assert_int_equal(mg_vm_set_shares(mg, VMA, bad, 2, ""), -EINVAL);
	memcpy(bad, s, sizeof(bad));
	snprintf(bad[0].source, sizeof(bad[0].source), "%s/../models", d1);
	assert_int_equal(mg_vm_set_shares(mg, VMA, bad, 2, ""), -EINVAL);
	memcpy(bad, s, sizeof(bad));
	snprintf(bad[0].source, sizeof(bad[0].source), "%s", file);
	assert_int_equal(mg_vm_set_shares(mg, VMA, bad, 2, ""), -EINVAL);
	memcpy(bad, s, sizeof(bad));
	bad[1].id = 0;					/* duplicate id */
	assert_int_equal(mg_vm_set_shares(mg, VMA, bad, 2, ""), -EINVAL);
	memcpy(bad, s, sizeof(bad));
	snprintf(bad[1].tag, sizeof(bad[1].tag), "data");	/* one tag twice */
	assert_int_equal(mg_vm_set_shares(mg, VMA, bad, 2, ""), -EINVAL);
	memcpy(bad, s, sizeof(bad));
	snprintf(bad[1].tag, sizeof(bad[1].tag), "a/b");
	assert_int_equal(mg_vm_set_shares(mg, VMA, bad, 2, ""), -EINVAL);
	assert_int_equal(mg_vm_set_shares(mg, VMA, NULL, 2, ""), -EINVAL);
	assert_int_equal(mg_vm_set_shares(mg, VMA, s, MG_SHARES_MAX + 1, ""),
			 -EINVAL);
	assert_int_equal(mg_vm_set_shares(mg, VMB, s, 2, ""), -ENOENT);
	assert_int_equal(mg_get_vm_shares(mg, VMA, &got, &n), 0);
	assert_int_equal(n, 2);
	free(got);
	assert_backend_has(mg, VMA, 2, s);
	assert_guest_sees(mg, VMA, 2, s);

	/* tags may move between ids: the backend clears before it sets */
	{
		struct mg_share w[2];
		uint64_t gen0, gen1;

		memcpy(w, s, sizeof(w));
		snprintf(w[0].tag, sizeof(w[0].tag), "models");
		snprintf(w[1].tag, sizeof(w[1].tag), "data");
		gen0 = view_gen(mg);
		assert_int_equal(mg_vm_set_shares(mg, VMA, w, 2, ""), 0);
		/* a new table is a new view: GET /v1/vms lists shares */
		gen1 = view_gen(mg);
		assert_true(gen1 != gen0);
		assert_guest_sees(mg, VMA, 2, w);
		assert_int_equal(mg_vm_set_shares(mg, VMA, s, 2, ""), 0);
		assert_guest_sees(mg, VMA, 2, s);
	}

	/* refused definition shares: the reason in the VM, an event, the log */
	assert_int_equal(mg_vm_set_shares(mg, VMA, s, 1,
					  "share 1 (tag 'x'): source 'y' is not an absolute path"), 0);
	assert_int_equal(mg_get_vm(mg, VMA, &vi), 0);
	assert_non_null(strstr(vi.error, "not an absolute path"));
	last_event(mg, type, detail, sizeof(detail));
	assert_string_equal(type, "error");
	assert_non_null(strstr(detail, "\"op\":\"shares\""));
	assert_backend_has(mg, VMA, 1, s);

	/* a stopped VM keeps its table; starting it again hands it over */
	assert_int_equal(mg_vm_stop(mg, VMA), 0);
	assert_int_equal(mg_backend_embedded_shares(mg_get_backend(mg), VMA,
						    &got, &n), -ENOENT);
	assert_int_equal(mg_vm_set_shares(mg, VMA, s, 2, NULL), 0);
	assert_int_equal(mg_vm_start(mg, VMA, "a", &vi.policy, MG_POL_QUOTA, -1,
				     MG_SRC_CONFIG, NULL, 0), 0);
	assert_backend_has(mg, VMA, 2, s);

	/*
	 * A root the backend cannot open (gone since the check) refuses the
	 * whole table there and leaves the old one in force.
	 */
	{
		struct mg_backend *be = mg_get_backend(mg);
		struct mg_share t[3];

		memcpy(t, s, sizeof(s));
		t[2] = s[1];
		t[2].id = 7;
		snprintf(t[2].source, sizeof(t[2].source), "%s/gone", tmp.path);
		assert_int_not_equal(be->ops->set_shares(be->priv, VMA, t, 3), 0);
		assert_backend_has(mg, VMA, 2, s);
		assert_int_equal(be->ops->set_shares(be->priv, VMB, t, 2), -ENOENT);
	}

	/* an empty table clears */
	assert_int_equal(mg_vm_set_shares(mg, VMA, NULL, 0, NULL), 0);
	assert_backend_has(mg, VMA, 0, NULL);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

static void test_rest_view(void **state)
{
	struct mg_vm_info vi;
	struct mg_share s[2];
	struct rbuf b;
	char *text;
	size_t len;

	(void)state;
	memset(&vi, 0, sizeof(vi));
	snprintf(vi.id, sizeof(vi.id), VMA);
	two_shares(s);
	snprintf(s[0].source, sizeof(s[0].source), "/srv/\"q\"");
	rbuf_init(&b, 256);
	rj_vm_detail(&b, &vi, s, 2);
	text = rbuf_take(&b, &len);
	assert_non_null(text);
	assert_non_null(strstr(text,
		",\"shares\":[{\"id\":0,\"tag\":\"data\",\"source\":\"/srv/\\\"q\\\"\",\"readonly\":false},"
		"{\"id\":3,\"tag\":\"models\",\"source\":\""));
	assert_non_null(strstr(text, "\",\"readonly\":true}]}"));
	assert_int_equal(text[len - 1], '}');
	free(text);

	rbuf_init(&b, 256);
	rj_vm_detail(&b, &vi, NULL, 0);
	text = rbuf_take(&b, &len);
	assert_non_null(strstr(text, ",\"shares\":[]}"));
	free(text);

	/* the list's form: the same shares, no histograms */
	rbuf_init(&b, 256);
	rj_vm_shares(&b, &vi, false, s, 2);
	text = rbuf_take(&b, &len);
	assert_null(strstr(text, "histogram"));
	assert_non_null(strstr(text, ",\"shares\":[{\"id\":0,\"tag\":\"data\","));
	assert_non_null(strstr(text, "{\"id\":3,\"tag\":\"models\","));
	free(text);
}

/* ---- from libvirt: the test driver's domains --------------------------- */

static bool has_shares(struct mg *mg, const char *id, size_t want)
{
	struct mg_share *got;
	size_t n = 0;
	int i;

	for (i = 0; i < 3000; i++) {
		if (!mg_get_vm_shares(mg, id, &got, &n)) {
			free(got);
			if (n == want)
				return true;
		}
		usleep(10000);
	}
	return false;
}

static void test_libvirt_domain(void **state)
{
	char node[160], uri[200], devs[4096];
	struct mg_share *got;
	struct mg_libvirt *lv;
	struct mg_config cfg;
	struct mg_vm_info vi;
	struct mg *mg;
	size_t n;
	FILE *f;

	(void)state;
	unlink(tmp.db);
	snprintf(node, sizeof(node), "%s/node.xml", tmp.path);
	snprintf(uri, sizeof(uri), "test://%s", node);
	snprintf(devs, sizeof(devs), "%s%s%s",
		 fs(d1, "data", ""), fs("/nonexistent-vgmem-share", "gone", ""),
		 fs(d2, "models", "<readonly/>"));
	f = fopen(node, "w");
	assert_non_null(f);
	fprintf(f, "<node><domain type='test'><name>vs</name>"
		"<uuid>6695eb01-f6a4-8304-79aa-97f2502e1901</uuid>"
		"<memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os>"
		"<metadata><vgmem:gpu xmlns:vgmem='" MG_XMLNS "' quota='64M'/></metadata>"
		"<devices>%s<hostdev mode='subsystem' type='mdev' model='vfio-pci'>"
		"<source><address uuid='" VMA "'/></source></hostdev>"
		"</devices></domain></node>\n", devs);
	fclose(f);

	mgf_config(&cfg, tmp.db, uri);
	assert_int_equal(mg_create(&cfg, &mg), 0);
	assert_int_equal(mg_libvirt_start(mg, uri, &lv), 0);

	/* the good shares, by their position; the bad one named in error */
	assert_true(has_shares(mg, VMA, 2));
	assert_int_equal(mg_get_vm_shares(mg, "vs", &got, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].id, 0);
	assert_string_equal(got[0].tag, "data");
	assert_string_equal(got[0].source, d1);
	assert_false(got[0].readonly);
	assert_int_equal(got[1].id, 2);
	assert_string_equal(got[1].tag, "models");
	assert_true(got[1].readonly);
	assert_backend_has(mg, VMA, 2, got);
	free(got);
	assert_int_equal(mg_get_vm(mg, VMA, &vi), 0);
	assert_true(vi.running);
	assert_non_null(strstr(vi.error, "share 1 (tag 'gone')"));

	mg_libvirt_stop(lv);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_share_check),
		cmocka_unit_test(test_model_and_backend),
		cmocka_unit_test(test_rest_view),
		cmocka_unit_test(test_libvirt_domain),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
