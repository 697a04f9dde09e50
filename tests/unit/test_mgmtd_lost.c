// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Started VMs whose vGPU (mdev) vanishes from the backend, and live
 * changes of the metadata's gpu attribute:
 *  - a VM of libvirt or the config whose mdev is removed (sysfs, mdevctl,
 *    an unregistered GPU) becomes "lost": not running, no entitlement, an
 *    error and a lifecycle event; the others' entitlements no longer count
 *    it; when the mdev comes back (on any GPU) it runs again, or, if it
 *    cannot be admitted there, says why once per return. Tested on the
 *    embedded backend (mdevs plugged and unplugged as mdevctl would) and
 *    on a fake backend with vgmem.ko's semantics (vGPUs that exist apart
 *    from the model, which only starts managing them).
 *  - a running VM cannot move between GPUs: a metadata change of gpu to
 *    another GPU is refused and changes nothing; a stopped VM takes it.
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

#include "mg_fixture.h"

#define MiB	(1ull << 20)
#define VMA	"00000000-0000-4000-8000-00000000000a"
#define VMB	"00000000-0000-4000-8000-00000000000b"
#define VMC	"00000000-0000-4000-8000-00000000000c"

static struct mgf_dir tmp;

static int setup(void **state)
{
	(void)state;
	mg_log_set_level(MG_LOG_ERR - 1);	/* lost VMs log errors: quiet */
	return mgf_dir_make(&tmp, "lost");
}

static int teardown(void **state)
{
	(void)state;
	return mgf_dir_remove(&tmp);
}

/* gpus embedded GPUs of 64 MiB, the given embedded_vm entries. */
static struct mg *model(struct mg_config *cfg, const char *gpus,
			const char *vm1, const char *vm2)
{
	struct mg *mg;

	mgf_db_fresh(tmp.db);
	mgf_config(cfg, tmp.db, "none");
	mgf_set(cfg, "embedded_vram", "64M");
	mgf_set(cfg, "embedded_gpus", gpus);
	if (vm1)
		mgf_set(cfg, "embedded_vm", vm1);
	if (vm2)
		mgf_set(cfg, "embedded_vm", vm2);
	assert_int_equal(mg_create(cfg, &mg), 0);
	return mg;
}

/* Events of type for vm whose detail contains needle, since after. */
static int count_events(struct mg *mg, uint64_t after, const char *type,
			const char *vm, const char *needle)
{
	struct mg_event *ev;
	size_t n, i;
	int k = 0;

	assert_int_equal(mg_events_since(mg, after, 100000, &ev, &n), 0);
	for (i = 0; i < n; i++)
		if (!strcmp(ev[i].type, type) && !strcmp(ev[i].vm, vm) &&
		    strstr(ev[i].detail, needle))
			k++;
	free(ev);
	return k;
}

static uint64_t last_id(struct mg *mg)
{
	struct mg_status st;

	assert_int_equal(mg_get_status(mg, &st), 0);
	return st.last_event_id;
}

static uint64_t core_ent(struct mg *mg, const char *id)
{
	return mgf_core_stats(mg, id).entitlement;
}

/* ---- embedded backend ------------------------------------------------- */

static void test_embedded_lost_and_back(void **state)
{
	struct mg_backend *be;
	struct mg_config cfg;
	struct mg_vm_info a, b;
	struct mg_gpu_info *gpus;
	uint64_t ev0;
	size_t ng;
	struct mg *mg;
	u64 va;

	(void)state;
	mg = model(&cfg, "1", "a:" VMA ":48M", "b:" VMB ":48M");
	be = mg_get_backend(mg);
	/* demand on both, so that each one's share depends on the other */
	assert_int_equal(vg_bo_alloc(vg_host_guest_vm(mg_backend_embedded_guest(be, VMA)),
				     40 * MiB, 0, &va), 0);
	assert_int_equal(vg_bo_alloc(vg_host_guest_vm(mg_backend_embedded_guest(be, VMB)),
				     40 * MiB, 0, &va), 0);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	b = mgf_vm_info(mg, VMB);
	assert_true(a.running && b.running);
	assert_false(a.lost);
	assert_true(a.entitlement > 0);
	assert_true(b.entitlement < 40 * MiB);	/* contended: less than it holds */

	/* the mdev of a is removed (mdevctl stop): a is lost at the tick */
	ev0 = last_id(mg);
	assert_int_equal(mg_backend_embedded_unplug(be, VMA), 0);
	assert_int_equal(mg_backend_embedded_unplug(be, VMA), -ENOENT);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	b = mgf_vm_info(mg, VMB);
	assert_false(a.running);
	assert_true(a.lost);
	assert_int_equal(a.entitlement, 0);
	assert_int_equal(a.guaranteed, 0);
	assert_non_null(strstr(a.error, "vGPU lost"));
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMA, "\"lost\""), 1);
	/* its share no longer counts: b gets what it holds and the GPU's sum is b's */
	assert_true(b.entitlement >= 40 * MiB);
	assert_int_equal(core_ent(mg, VMB), b.entitlement);
	assert_int_equal(mg_list_gpus(mg, &gpus, &ng), 0);
	assert_int_equal(gpus[0].entitled, b.entitlement);
	free(gpus);
	/* more ticks change nothing and say nothing new */
	mg_tick(mg, mg_mono_ms());
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMA, "\"lost\""), 1);
	assert_true(mgf_vm_info(mg, VMA).lost);

	/* the mdev comes back (mdevctl start): a runs again with its quota */
	ev0 = last_id(mg);
	assert_int_equal(mg_backend_embedded_plug(be, VMA, 0, 8 * MiB), 0);
	assert_int_equal(mg_backend_embedded_plug(be, VMA, 0, 8 * MiB), -EEXIST);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	assert_true(a.running);
	assert_false(a.lost);
	assert_string_equal(a.error, "");
	assert_int_equal(a.gpu, 0);
	assert_int_equal(a.stats.quota, 48 * MiB);	/* the policy's, not the mdev's */
	assert_true(a.entitlement > 0);
	assert_int_equal(core_ent(mg, VMA), a.entitlement);
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMA, "\"running\""), 1);

	/* stopping leaves a plugged mdev there, unmanaged; a lost VM stops too */
	assert_int_equal(mg_vm_stop(mg, VMA), 0);
	assert_non_null(mg_backend_embedded_guest(be, VMA));
	assert_int_equal(mg_backend_embedded_unplug(be, VMB), 0);
	mg_tick(mg, mg_mono_ms());
	assert_true(mgf_vm_info(mg, VMB).lost);
	ev0 = last_id(mg);
	assert_int_equal(mg_vm_stop(mg, VMB), 0);
	b = mgf_vm_info(mg, VMB);
	assert_false(b.lost);
	assert_false(b.running);
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMB, "\"stopped\""), 1);
	/* a stopped VM is not brought back by its mdev */
	assert_int_equal(mg_backend_embedded_plug(be, VMB, 0, 48 * MiB), 0);
	mg_tick(mg, mg_mono_ms());
	assert_false(mgf_vm_info(mg, VMB).running);

	/* hostile hook use */
	assert_int_equal(mg_backend_embedded_plug(NULL, VMC, 0, MiB), -EINVAL);
	assert_int_equal(mg_backend_embedded_plug(be, VMC, 0, 0), -EINVAL);
	assert_int_equal(mg_backend_embedded_plug(be, VMC, 3, MiB), -EINVAL);
	assert_int_equal(mg_backend_embedded_plug(be, "nope", 0, MiB), -EINVAL);
	assert_int_equal(mg_backend_embedded_unplug(NULL, VMC), -EINVAL);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- a fake backend with vgmem.ko's semantics --------------------------- */

#define FB_MAX	8

struct fb_vgpu {
	char id[MG_ID_LEN];
	int gpu;
	uint64_t quota, entitlement;
	bool managed;
};

struct fb {
	struct mg_backend real;		/* embedded, destroyed with the fake */
	struct fb_vgpu v[FB_MAX];
	size_t n;
	unsigned int starts, stops;
};

static struct fb_vgpu *fb_find(struct fb *f, const char *id)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].id, id))
			return &f->v[i];
	return NULL;
}

/* An mdev appears (mdevctl start) or vanishes (remove, GPU unbound). */
static void fb_plug(struct fb *f, const char *id, int gpu, uint64_t quota)
{
	assert_null(fb_find(f, id));
	assert_true(f->n < FB_MAX);
	memset(&f->v[f->n], 0, sizeof(f->v[f->n]));
	snprintf(f->v[f->n].id, MG_ID_LEN, "%s", id);
	f->v[f->n].gpu = gpu;
	f->v[f->n].quota = quota;
	f->n++;
}

static void fb_unplug(struct fb *f, const char *id)
{
	struct fb_vgpu *v = fb_find(f, id);

	assert_non_null(v);
	*v = f->v[--f->n];
}

static int fb_list_gpus(void *b, struct mg_gpu_info **out, size_t *n)
{
	struct mg_gpu_info *v = calloc(2, sizeof(*v));
	int i;

	(void)b;
	if (!v)
		return -ENOMEM;
	for (i = 0; i < 2; i++) {
		v[i].index = i;
		snprintf(v[i].name, sizeof(v[i].name), "fake%d", i);
		v[i].vram_size = 64 * MiB;
		v[i].chunk_size = 2 * MiB;
	}
	*out = v;
	*n = 2;
	return 0;
}

static int fb_vm_start(void *b, const char *id, const char *name,
		       uint64_t quota, int *gpu)
{
	struct fb_vgpu *v = fb_find(b, id);

	(void)name;
	if (!v)
		return -ENOENT;
	if (v->managed)
		return -EEXIST;
	v->managed = true;
	v->quota = quota;
	*gpu = v->gpu;
	((struct fb *)b)->starts++;
	return 0;
}

static void fb_vm_stop(void *b, const char *id)
{
	struct fb_vgpu *v = fb_find(b, id);

	((struct fb *)b)->stops++;
	if (v)
		v->managed = false;
}

static int fb_list_vms(void *b, struct mg_backend_vm **out, size_t *n)
{
	struct fb *f = b;
	struct mg_backend_vm *v = calloc(FB_MAX, sizeof(*v));
	size_t i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < f->n; i++) {
		snprintf(v[i].id, sizeof(v[i].id), "%s", f->v[i].id);
		v[i].gpu = f->v[i].gpu;
		v[i].stats.quota = f->v[i].quota;
		v[i].stats.entitlement = f->v[i].entitlement;
		v[i].stats.allocated = 16 * MiB;	/* steady demand */
	}
	*out = v;
	*n = f->n;
	return 0;
}

static int fb_vm_stats(void *b, const char *id, struct vgmem_vm_stats *st)
{
	struct fb_vgpu *v = fb_find(b, id);

	if (!v)
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	st->quota = v->quota;
	st->entitlement = v->entitlement;
	return 0;
}

static int fb_set_entitlement(void *b, const char *id, uint64_t bytes)
{
	struct fb_vgpu *v = fb_find(b, id);

	if (!v)
		return -ENOENT;
	v->entitlement = bytes;
	return 0;
}

static int fb_set_quota(void *b, const char *id, uint64_t bytes)
{
	struct fb_vgpu *v = fb_find(b, id);

	if (!v)
		return -ENOENT;
	v->quota = bytes;
	return 0;
}

static int fb_set_knobs(void *b, int gpu, const struct mg_knobs *k)
{
	(void)b;
	(void)k;
	return gpu >= 0 && gpu < 2 ? 0 : -EINVAL;
}

static int fb_set_shares(void *b, const char *id, const struct mg_share *s,
			 size_t n)
{
	(void)s;
	(void)n;
	return fb_find(b, id) ? 0 : -ENOENT;
}

static void fb_destroy(void *b)
{
	struct fb *f = b;

	f->real.ops->destroy(f->real.priv);
	free(f);
}

static const struct mg_backend_ops fb_ops = {
	.name = "fake",
	.list_gpus = fb_list_gpus,
	.vm_start = fb_vm_start,
	.vm_stop = fb_vm_stop,
	.list_vms = fb_list_vms,
	.vm_stats = fb_vm_stats,
	.set_entitlement = fb_set_entitlement,
	.set_quota = fb_set_quota,
	.set_knobs = fb_set_knobs,
	.set_shares = fb_set_shares,
	.destroy = fb_destroy,
};

/* A model without VMs whose backend is the fake (the timer is idle). */
static struct mg *fake_model(struct mg_config *cfg, struct fb **out)
{
	struct mg *mg = model(cfg, "1", NULL, NULL);
	struct mg_backend *be = mg_get_backend(mg);
	struct fb *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->real = *be;
	be->ops = &fb_ops;
	be->priv = f;
	assert_int_equal(mg_recompute(mg), 0);
	*out = f;
	return mg;
}

static void test_fake_lost_and_back(void **state)
{
	struct mg_vm_policy p = { .quota = 32 * MiB };
	struct mg_gpu_info *gpus;
	struct mg_vm_info a, b;
	struct mg_config cfg;
	char why[MG_WHY_LEN];
	uint64_t ev0;
	size_t ng;
	struct fb *f;
	struct mg *mg;

	(void)state;
	mg = fake_model(&cfg, &f);
	fb_plug(f, VMA, 0, 8 * MiB);
	fb_plug(f, VMB, 0, 8 * MiB);
	/* libvirt starts both domains; the mdevs live on GPU 0 */
	assert_int_equal(mg_vm_start(mg, VMA, "a", &p, MG_POL_QUOTA, -1,
				     MG_SRC_LIBVIRT, why, sizeof(why)), 0);
	assert_int_equal(mg_vm_start(mg, VMB, "b", &p, MG_POL_QUOTA, -1,
				     MG_SRC_LIBVIRT, why, sizeof(why)), 0);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	assert_true(a.running);
	assert_int_equal(a.gpu, 0);
	assert_int_equal(fb_find(f, VMA)->quota, 32 * MiB);
	assert_int_equal(fb_find(f, VMA)->entitlement, a.entitlement);

	/* a's GPU is unregistered / its mdev removed through sysfs */
	ev0 = last_id(mg);
	fb_unplug(f, VMA);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	b = mgf_vm_info(mg, VMB);
	assert_true(a.lost);
	assert_false(a.running);
	assert_int_equal(a.entitlement, 0);
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMA, "\"lost\""), 1);
	assert_int_equal(mg_list_gpus(mg, &gpus, &ng), 0);
	assert_int_equal(gpus[0].entitled, b.entitlement);
	free(gpus);
	assert_int_equal(f->stops, 1);	/* the backend forgot it too */

	/* it comes back on the other GPU: running there */
	ev0 = last_id(mg);
	fb_plug(f, VMA, 1, 8 * MiB);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	assert_true(a.running);
	assert_false(a.lost);
	assert_int_equal(a.gpu, 1);
	assert_true(fb_find(f, VMA)->managed);
	assert_int_equal(fb_find(f, VMA)->quota, 32 * MiB);
	assert_true(a.entitlement > 0);
	assert_int_equal(fb_find(f, VMA)->entitlement, a.entitlement);
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMA, "\"running\""), 1);

	/*
	 * Gone again, and back on a GPU that cannot admit it (200% of 64 MiB
	 * is taken by c there): refused, reported once with the reason
	 * however many ticks see it; admitted once there is room (c stops)
	 * or it returns where there is room.
	 */
	fb_unplug(f, VMA);
	mg_tick(mg, mg_mono_ms());
	fb_plug(f, VMC, 1, 8 * MiB);
	p.quota = 120 * MiB;
	assert_int_equal(mg_vm_start(mg, VMC, "c", &p, MG_POL_QUOTA, -1,
				     MG_SRC_LIBVIRT, why, sizeof(why)), 0);
	ev0 = last_id(mg);
	fb_plug(f, VMA, 1, 8 * MiB);
	mg_tick(mg, mg_mono_ms());
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	assert_true(a.lost);
	assert_false(a.running);
	assert_non_null(strstr(a.error, "not resumed"));
	assert_int_equal(count_events(mg, ev0, "error", VMA, "\"resume\""), 1);
	assert_false(fb_find(f, VMA)->managed);
	assert_int_equal(mg_vm_stop(mg, VMC), 0);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	assert_true(a.running);
	assert_int_equal(a.gpu, 1);
	assert_string_equal(a.error, "");
	/* re-created on another GPU between two looks: lost and found */
	ev0 = last_id(mg);
	fb_unplug(f, VMA);
	fb_plug(f, VMA, 0, 8 * MiB);
	mg_tick(mg, mg_mono_ms());
	a = mgf_vm_info(mg, VMA);
	assert_true(a.running);
	assert_false(a.lost);
	assert_int_equal(a.gpu, 0);
	assert_true(fb_find(f, VMA)->managed);
	assert_int_equal(fb_find(f, VMA)->entitlement, a.entitlement);
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMA, "\"lost\""), 1);
	assert_int_equal(count_events(mg, ev0, "lifecycle", VMA, "\"running\""), 1);

	/* the domain goes away while lost: forgotten like any stopped VM */
	fb_unplug(f, VMB);
	mg_tick(mg, mg_mono_ms());
	assert_true(mgf_vm_info(mg, VMB).lost);
	assert_int_equal(mg_vm_forget(mg, VMB), 0);
	assert_int_equal(mg_get_vm(mg, VMB, &b), -ENOENT);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* Adopted vGPUs keep their own rule: gone means stopped and forgotten. */
static void test_fake_adopted_not_lost(void **state)
{
	struct mg_config cfg;
	char err[256];
	struct mg_vm_info vi;
	struct fb *f;
	struct mg *mg;

	(void)state;
	mg = fake_model(&cfg, &f);
	assert_int_equal(mg_config_set(&cfg, "adopt_mdevs", "true", err,
				       sizeof(err)), 0);
	fb_plug(f, VMA, 0, 16 * MiB);
	mg_tick(mg, mg_mono_ms());
	vi = mgf_vm_info(mg, VMA);
	assert_true(vi.running);
	assert_int_equal(vi.source, MG_SRC_BACKEND);
	fb_unplug(f, VMA);
	mg_tick(mg, mg_mono_ms());
	assert_int_equal(mg_get_vm(mg, VMA, &vi), -ENOENT);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- the gpu attribute of live metadata -------------------------------- */

static void test_metadata_gpu(void **state)
{
	struct mg_vm_policy p = { .quota = 16 * MiB }, q;
	struct mg_vm_info a, before;
	struct mg_config cfg;
	char why[MG_WHY_LEN];
	uint64_t ev0;
	struct mg *mg;

	(void)state;
	mg = model(&cfg, "2", NULL, NULL);
	assert_int_equal(mg_vm_start(mg, VMA, "a", &p, MG_POL_QUOTA, 0,
				     MG_SRC_LIBVIRT, why, sizeof(why)), 0);
	before = mgf_vm_info(mg, VMA);
	assert_int_equal(before.gpu, 0);

	/* moving a running VM: refused, clearly, and nothing changes */
	ev0 = last_id(mg);
	q = p;
	q.weight = 300;
	assert_int_equal(mg_vm_set_meta(mg, VMA, &q, MG_POL_QUOTA | MG_POL_WEIGHT,
					1, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "cannot move from GPU 0"));
	a = mgf_vm_info(mg, VMA);
	assert_int_equal(a.gpu, 0);
	assert_true(a.running);
	assert_memory_equal(&a.policy, &before.policy, sizeof(a.policy));
	assert_non_null(strstr(a.error, "cannot move"));
	assert_int_equal(count_events(mg, ev0, "error", VMA, "cannot move"), 1);
	assert_non_null(mg_backend_embedded_guest(mg_get_backend(mg), VMA));
	/* a GPU that does not exist */
	assert_int_equal(mg_vm_set_meta(mg, VMA, &q, MG_POL_QUOTA, 2, why,
					sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "no such GPU"));
	assert_int_equal(mgf_vm_info(mg, VMA).policy.weight, 100);

	/* its own GPU, or none named: the rest of the change applies */
	assert_int_equal(mg_vm_set_meta(mg, VMA, &q, MG_POL_QUOTA | MG_POL_WEIGHT,
					0, why, sizeof(why)), 0);
	a = mgf_vm_info(mg, VMA);
	assert_int_equal(a.policy.weight, 300);
	assert_string_equal(a.error, "");
	assert_int_equal(mg_vm_set_meta(mg, VMA, &p, MG_POL_QUOTA, -1, why,
					sizeof(why)), 0);
	assert_int_equal(mgf_vm_info(mg, VMA).policy.weight, 100);

	/* stopped: the new placement is taken for the next start */
	assert_int_equal(mg_vm_stop(mg, VMA), 0);
	assert_int_equal(mg_vm_set_meta(mg, VMA, &p, MG_POL_QUOTA, 1, why,
					sizeof(why)), 0);
	assert_int_equal(mgf_vm_info(mg, VMA).gpu, 1);
	assert_int_equal(mg_vm_start(mg, VMA, "a", &p, MG_POL_QUOTA, 1,
				     MG_SRC_LIBVIRT, why, sizeof(why)), 0);
	a = mgf_vm_info(mg, VMA);
	assert_true(a.running);
	assert_int_equal(a.gpu, 1);
	assert_int_equal(mg_vm_set_meta(mg, VMA, &p, MG_POL_QUOTA, 0, why,
					sizeof(why)), -EBUSY);
	assert_int_equal(mgf_vm_info(mg, VMA).gpu, 1);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_lost_and_back),
		cmocka_unit_test(test_fake_lost_and_back),
		cmocka_unit_test(test_fake_adopted_not_lost),
		cmocka_unit_test(test_metadata_gpu),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
