// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd with libvirt's test driver (test:///<dir>/node.xml): domains with
 * <vgmem:gpu> metadata and mdev hostdevs start, get their policy and
 * entitlement, change live through metadata, stop, are defined and
 * undefined; bad metadata gives an error event and touches nothing; a
 * second domain naming a managed mdev is refused and changes nothing, and
 * which domain owns an mdev never depends on libvirt's listing order. The
 * test driver keeps its state per connection, so the test drives the
 * domains through mgmtd's own connection (events fire within it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>

#include "mg_fixture.h"

#define MiB	(1ull << 20)
#define U1	"c2177883-f1bb-47f0-914d-32a22e3a8801"
#define U2	"c2177883-f1bb-47f0-914d-32a22e3a8802"
#define U3	"c2177883-f1bb-47f0-914d-32a22e3a8803"
#define U4	"c2177883-f1bb-47f0-914d-32a22e3a8804"
#define U5	"c2177883-f1bb-47f0-914d-32a22e3a8805"
#define U6	"c2177883-f1bb-47f0-914d-32a22e3a8806"
#define U8	"c2177883-f1bb-47f0-914d-32a22e3a8808"
#define U9	"c2177883-f1bb-47f0-914d-32a22e3a8809"
#define NSA	"xmlns:vgmem='" MG_XMLNS "'"
/* A namespace nearly vgmem's: another version. */
#define NEAR_NS	"https://vgmem.dev/xmlns/vgmem/2"

static struct mgf_dir tmp;
static char uri[256];

static const char *domain_xml(char *buf, size_t len, const char *name,
			      int n, const char *meta, const char *mdev)
{
	snprintf(buf, len,
		 "<domain type='test'><name>%s</name>"
		 "<uuid>6695eb01-f6a4-8304-79aa-97f2502e19%02d</uuid>"
		 "<memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os>"
		 "<metadata>%s</metadata><devices>"
		 "<hostdev mode='subsystem' type='mdev' model='vfio-pci'>"
		 "<source><address uuid='%s'/></source></hostdev>"
		 "</devices></domain>", name, n, meta, mdev);
	return buf;
}

static int setup(void **state)
{
	char path[128], x[1024];
	FILE *f;

	(void)state;
	mg_log_set_level(getenv("MG_DEBUG") ? MG_LOG_DEBUG : MG_LOG_ERR - 1);
	if (mgf_dir_make(&tmp, "lv"))
		return -1;
	snprintf(path, sizeof(path), "%s/node.xml", tmp.path);
	snprintf(uri, sizeof(uri), "test://%s", path);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "<node>\n");
	fprintf(f, "%s\n", domain_xml(x, sizeof(x), "vm1", 1,
		"<vgmem:gpu " NSA " quota='256M' weight='100' min='32M' low='32M'/>", U1));
	fprintf(f, "%s\n", domain_xml(x, sizeof(x), "vm2", 2,
		"<vgmem:gpu " NSA " quota='256M' weight='abc'/>", U2));
	fprintf(f, "%s\n", domain_xml(x, sizeof(x), "vm3", 3, "", U3));
	fprintf(f, "%s\n", domain_xml(x, sizeof(x), "vm4", 4,
		"<vgmem:gpu " NSA " quota='128M'/>", U4));
	/* metadata in a namespace nearly ours; an mdev of another vendor */
	fprintf(f, "%s\n", domain_xml(x, sizeof(x), "near", 8,
		"<v:gpu xmlns:v='" NEAR_NS "' quota='64M'/>", U8));
	fprintf(f, "%s\n", domain_xml(x, sizeof(x), "foreign", 9, "", U9));
	/* vm3's mdev is a vgmem vGPU; foreign's is not */
	fprintf(f, "<device><name>mdev_vm3</name><parent>computer</parent>"
		"<capability type='mdev'><type id='vgmem-1g'/><uuid>" U3
		"</uuid><iommuGroup number='1'/></capability></device>\n");
	fprintf(f, "<device><name>mdev_foreign</name><parent>computer</parent>"
		"<capability type='mdev'><type id='nvidia-63'/><uuid>" U9
		"</uuid><iommuGroup number='2'/></capability></device>\n");
	fprintf(f, "</node>\n");
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return mgf_dir_remove(&tmp);
}

struct fix {
	struct mg_config cfg;
	struct mg *mg;
	struct mg_libvirt *lv;
	virConnectPtr conn;
};

static void fix_start_uri(struct fix *f, const char *u)
{
	mgf_config(&f->cfg, tmp.db, u);
	assert_int_equal(mg_create(&f->cfg, &f->mg), 0);
	assert_int_equal(mg_libvirt_start(f->mg, u, &f->lv), 0);
	f->conn = mg_libvirt_conn(f->lv);
	assert_non_null(f->conn);
}

static void fix_start(struct fix *f)
{
	fix_start_uri(f, uri);
}

static void fix_stop(struct fix *f)
{
	mg_libvirt_stop(f->lv);
	mg_destroy(f->mg);
	mg_config_free(&f->cfg);
}

/*
 * Events arrive on mgmtd's libvirt thread: wait (bounded, generously, for
 * liveness only) until pred holds.
 */
static bool wait_for(struct fix *f, const char *id,
		     bool (*pred)(const struct mg_vm_info *vi, int ret, const void *arg),
		     const void *arg)
{
	struct mg_vm_info vi;
	int i, ret;

	for (i = 0; i < 3000; i++) {
		memset(&vi, 0, sizeof(vi));
		ret = mg_get_vm(f->mg, id, &vi);
		if (pred(&vi, ret, arg))
			return true;
		usleep(10000);
	}
	return false;
}

static bool is_running(const struct mg_vm_info *vi, int ret, const void *arg)
{
	return !ret && vi->running == *(const bool *)arg;
}

static bool has_weight(const struct mg_vm_info *vi, int ret, const void *arg)
{
	return !ret && vi->policy.weight == *(const uint32_t *)arg;
}

static bool has_error(const struct mg_vm_info *vi, int ret, const void *arg)
{
	return !ret && strstr(vi->error, (const char *)arg);
}

static bool is_gone(const struct mg_vm_info *vi, int ret, const void *arg)
{
	(void)vi;
	(void)arg;
	return ret == -ENOENT;
}

static bool is_known(const struct mg_vm_info *vi, int ret, const void *arg)
{
	(void)vi;
	(void)arg;
	return ret == 0;
}

/*
 * The last event of a type for a VM ("" vm: any) whose detail contains
 * want, or -ENOENT. Events are delivered after the change they describe
 * is visible in the model, so this waits (bounded) for one to arrive.
 */
static int last_event(struct fix *f, const char *type, const char *vm,
		      const char *want, struct mg_event *out)
{
	struct mg_event *ev;
	size_t n, i;
	int ret = -ENOENT, tries;

	for (tries = 0; tries < 3000 && ret; tries++) {
		if (tries)
			usleep(10000);
		assert_int_equal(mg_events_since(f->mg, 0, 100000, &ev, &n), 0);
		for (i = 0; i < n; i++)
			if (!strcmp(ev[i].type, type) &&
			    (!*vm || !strcmp(ev[i].vm, vm)) &&
			    strstr(ev[i].detail, want)) {
				*out = ev[i];
				ret = 0;
			}
		free(ev);
	}
	return ret;
}

/* How many events of a type for vm have want in their detail. */
static size_t count_events(struct fix *f, const char *type, const char *vm,
			   const char *want)
{
	struct mg_event *ev;
	size_t n, i, c = 0;

	assert_int_equal(mg_events_since(f->mg, 0, 100000, &ev, &n), 0);
	for (i = 0; i < n; i++)
		if (!strcmp(ev[i].type, type) && !strcmp(ev[i].vm, vm) &&
		    strstr(ev[i].detail, want))
			c++;
	free(ev);
	return c;
}

/* Waits (bounded, for liveness only) until there are at least min. */
static bool wait_events(struct fix *f, const char *type, const char *vm,
			const char *want, size_t min)
{
	int i;

	for (i = 0; i < 3000; i++) {
		if (count_events(f, type, vm, want) >= min)
			return true;
		usleep(10000);
	}
	return false;
}

static uint64_t core_quota(struct fix *f, const char *id)
{
	return mgf_core_stats(f->mg, id).quota;
}

static void test_startup_sync(void **state)
{
	struct mg_vm_info vi;
	struct mg_event ev;
	struct fix f;

	(void)state;
	mgf_db_fresh(tmp.db);
	fix_start(&f);
	assert_true(mg_libvirt_connected(f.lv));
	/* vm1 runs with its metadata policy and an entitlement */
	assert_int_equal(mg_get_vm(f.mg, "vm1", &vi), 0);
	assert_string_equal(vi.id, U1);
	assert_true(vi.running);
	assert_int_equal(vi.source, MG_SRC_LIBVIRT);
	assert_int_equal(vi.policy.quota, 256 * MiB);
	assert_int_equal(vi.policy.min, 32 * MiB);
	assert_int_equal(vi.policy.max, 256 * MiB);
	assert_true(vi.entitlement >= 32 * MiB);
	assert_int_equal(core_quota(&f, U1), 256 * MiB);
	assert_int_equal(mg_get_vm(f.mg, "vm4", &vi), 0);
	assert_true(vi.running);
	/* bad metadata: an error naming the attribute, no VM, no vGPU */
	assert_int_equal(mg_get_vm(f.mg, U2, &vi), -ENOENT);
	assert_null(mg_backend_embedded_guest(mg_get_backend(f.mg), U2));
	assert_int_equal(last_event(&f, "error", U2, "weight", &ev), 0);
	assert_non_null(strstr(ev.detail, "vm2"));
	/* no metadata: not ours */
	assert_int_equal(mg_get_vm(f.mg, U3, &vi), -ENOENT);
	fix_stop(&f);
}

/*
 * libvirt not reachable when mgmtd starts (libvirtd after mgmtd at boot):
 * the start succeeds, and the reconnect timer picks the domains up once
 * the URI works. The test driver's node file appears only after the start.
 */
static void test_connect_retried(void **state)
{
	char late[192], late_uri[200], cmd[448];
	struct mg_vm_info vi;
	struct fix f;
	bool yes = true;

	(void)state;
	mgf_db_fresh(tmp.db);
	snprintf(late, sizeof(late), "%s/late.xml", tmp.path);
	snprintf(late_uri, sizeof(late_uri), "test://%s", late);
	unlink(late);
	mgf_config(&f.cfg, tmp.db, late_uri);
	assert_int_equal(mg_create(&f.cfg, &f.mg), 0);
	assert_int_equal(mg_libvirt_start(f.mg, late_uri, &f.lv), 0);
	assert_false(mg_libvirt_connected(f.lv));
	assert_int_equal(mg_get_vm(f.mg, "vm1", &vi), -ENOENT);
	snprintf(cmd, sizeof(cmd), "cp %s %s", uri + strlen("test://"), late);
	assert_int_equal(system(cmd), 0);
	/* the retry comes within RECONNECT_MS (5 s); wait_for allows 30 s */
	assert_true(wait_for(&f, "vm1", is_running, &yes));
	assert_true(mg_libvirt_connected(f.lv));
	fix_stop(&f);
}

static void test_lifecycle_and_metadata(void **state)
{
	struct mg_vm_info vi, before;
	virDomainPtr d1, d4;
	struct mg_event ev;
	bool running;
	uint32_t w;
	struct fix f;

	(void)state;
	mgf_db_fresh(tmp.db);
	fix_start(&f);
	d1 = virDomainLookupByName(f.conn, "vm1");
	d4 = virDomainLookupByName(f.conn, "vm4");
	assert_non_null(d1);
	assert_non_null(d4);

	/* stop releases the vGPU, start brings it back */
	assert_int_equal(virDomainDestroy(d4), 0);
	running = false;
	assert_true(wait_for(&f, U4, is_running, &running));
	assert_null(mg_backend_embedded_guest(mg_get_backend(f.mg), U4));
	assert_int_equal(mg_get_vm(f.mg, U4, &vi), 0);
	assert_int_equal(vi.entitlement, 0);
	assert_int_equal(virDomainCreate(d4), 0);
	running = true;
	assert_true(wait_for(&f, U4, is_running, &running));
	assert_non_null(mg_backend_embedded_guest(mg_get_backend(f.mg), U4));
	assert_int_equal(core_quota(&f, U4), 128 * MiB);

	/* a live metadata change: new weight and quota */
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='512M' weight='300' min='32M' low='32M'/>", "vgmem",
		MG_XMLNS, VIR_DOMAIN_AFFECT_LIVE), 0);
	w = 300;
	assert_true(wait_for(&f, U1, has_weight, &w));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_int_equal(vi.policy.quota, 512 * MiB);
	assert_int_equal(core_quota(&f, U1), 512 * MiB);
	assert_int_equal(last_event(&f, "policy", U1, "\"metadata\"", &ev), 0);
	/* the audit trail: the domain did it, and what moved from what */
	assert_non_null(strstr(ev.detail, "\"by\":\"libvirt domain vm1\""));
	assert_non_null(strstr(ev.detail, "\"name\":\"vm1\""));
	assert_non_null(strstr(ev.detail, "\"changed\":[\"quota\","));
	assert_non_null(strstr(ev.detail, "\"weight\":300}"));
	assert_null(strstr(ev.detail, "\"mask\""));

	/* bad metadata: error event and VM error, policy untouched */
	before = vi;
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='512M' weight='0'/>", "vgmem", MG_XMLNS,
		VIR_DOMAIN_AFFECT_LIVE), 0);
	assert_true(wait_for(&f, U1, has_error, "weight"));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_memory_equal(&vi.policy, &before.policy, sizeof(vi.policy));
	assert_int_equal(core_quota(&f, U1), 512 * MiB);
	/* well-formed but impossible (min above max): refused by the model */
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='512M' min='300M' low='300M' max='200M'/>", "vgmem",
		MG_XMLNS, VIR_DOMAIN_AFFECT_LIVE), 0);
	assert_true(wait_for(&f, U1, has_error, "max"));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_memory_equal(&vi.policy, &before.policy, sizeof(vi.policy));
	/* beyond the oversubscription limit of the 1 GiB GPU (200%) */
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='2000M'/>", "vgmem", MG_XMLNS,
		VIR_DOMAIN_AFFECT_LIVE), 0);
	assert_true(wait_for(&f, U1, has_error, "quota"));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_memory_equal(&vi.policy, &before.policy, sizeof(vi.policy));
	/* and a good one clears the error */
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='512M' weight='50'/>", "vgmem", MG_XMLNS,
		VIR_DOMAIN_AFFECT_LIVE), 0);
	w = 50;
	assert_true(wait_for(&f, U1, has_weight, &w));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_string_equal(vi.error, "");
	assert_int_equal(vi.policy.min, 0);

	/*
	 * The gpu attribute goes live too: a GPU other than the VM's is
	 * refused whole (here GPU 3 does not exist; moving a running VM is
	 * refused the same way, test_mgmtd_lost.c), its own GPU is fine.
	 */
	before = vi;
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='512M' weight='70' gpu='3'/>", "vgmem", MG_XMLNS,
		VIR_DOMAIN_AFFECT_LIVE), 0);
	assert_true(wait_for(&f, U1, has_error, "gpu 3"));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_memory_equal(&vi.policy, &before.policy, sizeof(vi.policy));
	assert_int_equal(vi.gpu, 0);
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='512M' weight='70' gpu='0'/>", "vgmem", MG_XMLNS,
		VIR_DOMAIN_AFFECT_LIVE), 0);
	w = 70;
	assert_true(wait_for(&f, U1, has_weight, &w));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_string_equal(vi.error, "");

	virDomainFree(d1);
	virDomainFree(d4);
	fix_stop(&f);
}

static void test_define_start_undefine(void **state)
{
	char xml[1024];
	struct mg_vm_policy p = { 0 };
	struct mg_vm_info vi;
	virDomainPtr d;
	char why[MG_WHY_LEN];
	bool running;
	struct fix f;

	(void)state;
	mgf_db_fresh(tmp.db);
	fix_start(&f);
	d = virDomainDefineXML(f.conn, domain_xml(xml, sizeof(xml), "vm5", 5,
		"<vgmem:gpu " NSA " quota='64M' priority='2'/>", U5));
	assert_non_null(d);
	assert_true(wait_for(&f, U5, is_known, NULL));
	assert_int_equal(mg_get_vm(f.mg, "vm5", &vi), 0);
	assert_false(vi.running);
	assert_int_equal(vi.policy.priority, 2);
	/* an operator policy on a defined domain applies when it starts */
	p.weight = 42;
	assert_int_equal(mg_set_vm_policy(f.mg, "vm5", &p, MG_POL_WEIGHT, why,
					  sizeof(why)), 0);
	assert_int_equal(virDomainCreate(d), 0);
	running = true;
	assert_true(wait_for(&f, U5, is_running, &running));
	assert_int_equal(mg_get_vm(f.mg, U5, &vi), 0);
	assert_int_equal(vi.policy.weight, 42);
	assert_int_equal(vi.policy.priority, 2);
	assert_int_equal(virDomainDestroy(d), 0);
	running = false;
	assert_true(wait_for(&f, U5, is_running, &running));
	assert_int_equal(virDomainUndefine(d), 0);
	assert_true(wait_for(&f, U5, is_gone, NULL));
	virDomainFree(d);
	fix_stop(&f);
}

static void vm1_weight(struct fix *f, virDomainPtr d1, uint32_t w);

/* The domains not managed, once there are n of them (bounded wait). */
static struct mg_dom_info *wait_doms(struct fix *f, size_t n)
{
	struct mg_dom_info *d = NULL;
	size_t got = 0;
	int i;

	for (i = 0; i < 3000; i++) {
		free(d);
		assert_int_equal(mg_list_doms(f->mg, &d, &got), 0);
		if (got == n)
			return d;
		usleep(10000);
	}
	fail_msg("%zu domains not managed, not %zu", got, n);
	return NULL;
}

static void dom_is(const struct mg_dom_info *d, const char *name,
		   enum mg_dom_state st, const char *mdev, const char *why)
{
	if (strcmp(d->name, name) || d->state != st || strcmp(d->mdev, mdev) ||
	    !strstr(d->reason, why) || !d->uuid[0] || !d->since_ms)
		fail_msg("domain %s %s mdev '%s': %s; want %s %s mdev '%s': ...%s...",
			 d->name, mg_dom_state_name(d->state), d->mdev,
			 d->reason, name, mg_dom_state_name(st), mdev, why);
}

/*
 * Domains not managed are listed with why: a vgmem vGPU without metadata
 * and metadata in a namespace nearly ours as unmanaged, refused metadata
 * and a second claimant as rejected; an mdev of another vendor without
 * metadata is none of ours. A restart lists them again without reporting
 * the same refusal again; a fixed, a managed or an undefined domain
 * leaves the list.
 */
static void test_not_managed_listed(void **state)
{
	char xml[1024], m[128];
	struct mg_dom_info *d;
	struct mg_vm_info vi;
	virDomainPtr d1, d2, d6, dn;
	size_t errs;
	struct fix f;

	(void)state;
	mgf_db_fresh(tmp.db);
	fix_start(&f);
	d = wait_doms(&f, 3);
	dom_is(&d[0], "near", MG_DOM_UNMANAGED, U8, "namespace " NEAR_NS ", not vgmem's " MG_XMLNS);
	dom_is(&d[1], "vm2", MG_DOM_REJECTED, U2, "weight");
	dom_is(&d[2], "vm3", MG_DOM_UNMANAGED, U3, "names vgmem vGPU " U3 " but has no <vgmem:gpu> metadata");
	free(d);
	assert_true(wait_events(&f, "error", U2, "weight", 1));
	errs = count_events(&f, "error", U2, "weight");
	fix_stop(&f);

	/* restarted: listed again, vm2's refusal not reported again */
	fix_start(&f);
	d = wait_doms(&f, 3);
	dom_is(&d[1], "vm2", MG_DOM_REJECTED, U2, "weight");
	free(d);
	d1 = virDomainLookupByName(f.conn, "vm1");
	assert_non_null(d1);
	vm1_weight(&f, d1, 150);	/* everything before it handled */
	assert_int_equal(count_events(&f, "error", U2, "weight"), errs);

	/* a second claimant of vm1's mdev: rejected, listed */
	d6 = virDomainDefineXML(f.conn, domain_xml(xml, sizeof(xml), "vm6", 6,
		"<vgmem:gpu " NSA " quota='64M'/>", U1));
	assert_non_null(d6);
	d = wait_doms(&f, 4);
	dom_is(&d[3], "vm6", MG_DOM_REJECTED, U1, "mdev " U1 " is the vGPU of domain vm1");
	free(d);

	/* vm2's metadata fixed: a VM, off the list; the others go too */
	d2 = virDomainLookupByName(f.conn, "vm2");
	assert_non_null(d2);
	snprintf(m, sizeof(m), "<gpu quota='128M'/>");
	assert_int_equal(virDomainSetMetadata(d2, VIR_DOMAIN_METADATA_ELEMENT,
		m, "vgmem", MG_XMLNS, VIR_DOMAIN_AFFECT_LIVE), 0);
	assert_true(wait_for(&f, U2, is_known, NULL));
	d = wait_doms(&f, 3);
	assert_string_equal(d[1].name, "vm3");
	free(d);
	assert_int_equal(virDomainUndefine(d6), 0);
	free(wait_doms(&f, 2));
	dn = virDomainLookupByName(f.conn, "near");
	assert_non_null(dn);
	assert_int_equal(virDomainUndefine(dn), 0);
	d = wait_doms(&f, 1);
	assert_string_equal(d[0].name, "vm3");
	free(d);
	/* foreign was never listed, and is no VM */
	assert_int_equal(mg_get_vm(f.mg, U9, &vi), -ENOENT);
	virDomainFree(d1);
	virDomainFree(d2);
	virDomainFree(d6);
	virDomainFree(dn);
	fix_stop(&f);
}

static bool has_name(const struct mg_vm_info *vi, int ret, const void *arg)
{
	return !ret && !strcmp(vi->name, (const char *)arg);
}

/*
 * vm1's metadata set to weight w, and waited for: the libvirt thread
 * handles events in order, so whatever was asked before has been handled
 * too once this shows.
 */
static void vm1_weight(struct fix *f, virDomainPtr d1, uint32_t w)
{
	char m[128];

	snprintf(m, sizeof(m),
		 "<gpu quota='256M' weight='%u' min='32M' low='32M'/>", w);
	assert_int_equal(virDomainSetMetadata(d1, VIR_DOMAIN_METADATA_ELEMENT,
		m, "vgmem", MG_XMLNS, VIR_DOMAIN_AFFECT_LIVE), 0);
	assert_true(wait_for(f, U1, has_weight, &w));
}

/*
 * A second domain naming a managed domain's mdev is refused with an error
 * event naming both: its definition, start, stop, metadata changes and
 * undefinition leave the first domain's VM as it is, and the first's
 * metadata keeps applying. Once the first is undefined, the remaining
 * claimant gets the vGPU.
 */
static void test_second_claimant_refused(void **state)
{
	char xml[1024], uuid[VIR_UUID_STRING_BUFLEN];
	struct mg_vm_info vi;
	virDomainPtr d1, d6, d7;
	struct mg_event ev;
	bool running;
	struct fix f;

	(void)state;
	mgf_db_fresh(tmp.db);
	fix_start(&f);
	d1 = virDomainLookupByName(f.conn, "vm1");
	assert_non_null(d1);
	d6 = virDomainDefineXML(f.conn, domain_xml(xml, sizeof(xml), "vm6", 6,
		"<vgmem:gpu " NSA " quota='64M' weight='7'/>", U1));
	assert_non_null(d6);
	assert_true(wait_events(&f, "error", U1, "\"claim\"", 1));
	assert_int_equal(last_event(&f, "error", U1, "\"claim\"", &ev), 0);
	assert_non_null(strstr(ev.detail, "\"name\":\"vm6\""));
	assert_non_null(strstr(ev.detail, "\"owner\":\"vm1\""));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_string_equal(vi.name, "vm1");
	/* the owner's UUID, not the claimant's (metrics label it) */
	assert_int_equal(virDomainGetUUIDString(d1, uuid), 0);
	assert_string_equal(vi.domain_uuid, uuid);
	assert_true(vi.running);
	assert_int_equal(vi.policy.quota, 256 * MiB);
	assert_int_equal(vi.policy.weight, 100);
	assert_int_equal(core_quota(&f, U1), 256 * MiB);

	/* started and stopped: refused again, vm1's VM keeps running */
	assert_int_equal(virDomainCreate(d6), 0);
	assert_true(wait_events(&f, "error", U1, "\"claim\"", 2));
	assert_int_equal(virDomainDestroy(d6), 0);
	vm1_weight(&f, d1, 120);
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_string_equal(vi.name, "vm1");
	assert_true(vi.running);
	assert_int_equal(vi.policy.quota, 256 * MiB);
	assert_non_null(mg_backend_embedded_guest(mg_get_backend(f.mg), U1));

	/* its metadata changes are refused and change nothing */
	assert_int_equal(virDomainSetMetadata(d6, VIR_DOMAIN_METADATA_ELEMENT,
		"<gpu quota='64M' weight='9'/>", "vgmem", MG_XMLNS,
		VIR_DOMAIN_AFFECT_CONFIG), 0);
	assert_true(wait_events(&f, "error", U1, "\"claim\"", 3));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_int_equal(vi.policy.weight, 120);
	assert_string_equal(vi.name, "vm1");

	/* undefining it leaves vm1's VM; vm1's metadata still applies */
	assert_int_equal(virDomainUndefine(d6), 0);
	vm1_weight(&f, d1, 130);
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_string_equal(vi.name, "vm1");
	assert_true(vi.running);

	/* vm1 goes: the domain still naming the mdev takes it over */
	d7 = virDomainDefineXML(f.conn, domain_xml(xml, sizeof(xml), "vm7", 7,
		"<vgmem:gpu " NSA " quota='96M'/>", U1));
	assert_non_null(d7);
	assert_true(wait_events(&f, "error", U1, "\"name\":\"vm7\"", 1));
	assert_int_equal(virDomainDestroy(d1), 0);
	running = false;
	assert_true(wait_for(&f, U1, is_running, &running));
	assert_int_equal(virDomainUndefine(d1), 0);
	assert_true(wait_for(&f, U1, has_name, "vm7"));
	assert_int_equal(mg_get_vm(f.mg, U1, &vi), 0);
	assert_int_equal(vi.policy.quota, 96 * MiB);
	assert_false(vi.running);
	assert_int_equal(virDomainGetUUIDString(d7, uuid), 0);
	assert_string_equal(vi.domain_uuid, uuid);
	assert_int_equal(virDomainCreate(d7), 0);
	running = true;
	assert_true(wait_for(&f, U1, is_running, &running));
	assert_int_equal(core_quota(&f, U1), 96 * MiB);

	virDomainFree(d1);
	virDomainFree(d6);
	virDomainFree(d7);
	fix_stop(&f);
}

/* A node file of the test driver with the given domains, in this order. */
struct nd {
	const char *name;
	int n;
	const char *quota;
	bool shutoff;
};

static void write_node(char *u, size_t ulen, const char *file,
		       const struct nd *d, size_t nd)
{
	char path[160], x[1024], meta[160];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp.path, file);
	snprintf(u, ulen, "test://%s", path);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "<node>\n");
	for (i = 0; i < nd; i++) {
		snprintf(meta, sizeof(meta), "<vgmem:gpu " NSA " quota='%s'/>",
			 d[i].quota);
		domain_xml(x, sizeof(x), d[i].name, d[i].n, meta, U6);
		if (d[i].shutoff) {
			/* the test driver's own namespace: defined, not running */
			char *end = strstr(x, "</domain>");

			assert_non_null(end);
			snprintf(end, sizeof(x) - (size_t)(end - x),
				 "<test:runstate xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>5</test:runstate></domain>");
		}
		fprintf(f, "%s\n", x);
	}
	fprintf(f, "</node>\n");
	fclose(f);
}

/* The domain that owns U6 after mgmtd starts on the node file at u. */
static void owner_after_start(const char *u, const char *want, uint64_t quota)
{
	struct mg_vm_info vi;
	struct fix f;

	fix_start_uri(&f, u);
	assert_int_equal(mg_get_vm(f.mg, U6, &vi), 0);
	assert_string_equal(vi.name, want);
	assert_int_equal(vi.policy.quota, quota);
	fix_stop(&f);
}

/*
 * At start (and at every reconnection) the owner of an mdev that several
 * domains name does not depend on libvirt's listing order: the owner
 * recorded in the state database if it still names it, else a running
 * domain before a stopped one, else the smallest domain UUID.
 */
static void test_claim_order_independent(void **state)
{
	const struct nd a = { "own-a", 21, "64M", false };
	const struct nd b = { "own-b", 22, "96M", false };
	const struct nd a_off = { "own-a", 21, "64M", true };
	char u[256];
	struct fix f;

	(void)state;
	/* no recorded owner: the smaller domain UUID, in either order */
	mgf_db_fresh(tmp.db);
	write_node(u, sizeof(u), "ab.xml", (struct nd[]){ a, b }, 2);
	owner_after_start(u, "own-a", 64 * MiB);
	mgf_db_fresh(tmp.db);
	write_node(u, sizeof(u), "ba.xml", (struct nd[]){ b, a }, 2);
	owner_after_start(u, "own-a", 64 * MiB);
	fix_start_uri(&f, u);
	assert_true(wait_events(&f, "error", U6, "\"name\":\"own-b\"", 1));
	fix_stop(&f);

	/* a running domain before a stopped one */
	mgf_db_fresh(tmp.db);
	write_node(u, sizeof(u), "aoffb.xml", (struct nd[]){ a_off, b }, 2);
	owner_after_start(u, "own-b", 96 * MiB);
	mgf_db_fresh(tmp.db);
	write_node(u, sizeof(u), "baoff.xml", (struct nd[]){ b, a_off }, 2);
	owner_after_start(u, "own-b", 96 * MiB);

	/* the recorded owner, whatever the rule would say, in either order */
	mgf_db_fresh(tmp.db);
	write_node(u, sizeof(u), "b.xml", (struct nd[]){ b }, 1);
	owner_after_start(u, "own-b", 96 * MiB);
	write_node(u, sizeof(u), "ab.xml", (struct nd[]){ a, b }, 2);
	owner_after_start(u, "own-b", 96 * MiB);
	write_node(u, sizeof(u), "ba.xml", (struct nd[]){ b, a }, 2);
	owner_after_start(u, "own-b", 96 * MiB);
	/*
	 * The recorded owner gone from libvirt: the rule decides again and
	 * the new owner is recorded, so a stopped a keeps it from a running
	 * b afterwards.
	 */
	write_node(u, sizeof(u), "a.xml", (struct nd[]){ a }, 1);
	owner_after_start(u, "own-a", 64 * MiB);
	write_node(u, sizeof(u), "aoffb.xml", (struct nd[]){ a_off, b }, 2);
	owner_after_start(u, "own-a", 64 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_startup_sync),
		cmocka_unit_test(test_connect_retried),
		cmocka_unit_test(test_lifecycle_and_metadata),
		cmocka_unit_test(test_define_start_undefine),
		cmocka_unit_test(test_second_claimant_refused),
		cmocka_unit_test(test_claim_order_independent),
		cmocka_unit_test(test_not_managed_listed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
