// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mg_list_view(), mg_view_current() and mg_view_equal() of the real model
 * (the REST cache's key, mgmtd/rest_cache.h) on the embedded backend: a
 * listing stays current while nothing changes and stops being current
 * (and equal) after every kind of change the answers show: an operator's
 * policy, knobs, a VM stopping or being defined, lost or back, metadata,
 * and the stats refresh a read does when the core's counters moved. The
 * generation is checked against the byte comparison after every step of
 * a longer sequence: an unchanged generation must mean an equal view.
 */
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
#include "mgmtd/metrics.h"
#include "mgmtd/rest_buf.h"
#include "mgmtd/rest_json.h"

#define MiB	(1ull << 20)
#define VMA	"00000000-0000-4000-8000-00000000000a"
#define VMB	"00000000-0000-4000-8000-00000000000b"
#define VMC	"00000000-0000-4000-8000-00000000000c"

static struct mgf_dir tmp;

struct view {
	struct mg_gpu_info *gpus;
	size_t ngpus;
	struct mg_vm_info *vms;
	size_t nvms;
	uint64_t gen;
};

static void view_get(struct mg *mg, struct view *v)
{
	assert_int_equal(mg_list_view(mg, &v->gpus, &v->ngpus, &v->vms,
				      &v->nvms, &v->gen), 0);
}

static void view_free(struct view *v)
{
	free(v->gpus);
	free(v->vms);
	memset(v, 0, sizeof(*v));
}

/*
 * Whether the listing v is still the model's view, by the generation;
 * fails the test if the generation says current but the bytes differ (a
 * change that forgot mg_view_changed_locked()). The bytes are compared
 * first, so counters moving in between cannot fake a failure.
 */
static bool current(struct mg *mg, const struct view *v)
{
	bool eq = mg_view_equal(mg, v->gpus, v->ngpus, v->vms, v->nvms);
	bool cur = mg_view_current(mg, v->gen);

	if (cur && !eq)
		fail_msg("generation %llu unchanged but the view changed",
			 (unsigned long long)v->gen);
	return cur;
}

static bool vms_equal(struct mg *mg, const struct view *v)
{
	return mg_view_equal(mg, NULL, 0, v->vms, v->nvms);
}

static bool gpus_equal(struct mg *mg, const struct view *v)
{
	return mg_view_equal(mg, v->gpus, v->ngpus, NULL, 0);
}

static int setup(void **state)
{
	(void)state;
	mg_log_set_level(MG_LOG_ERR - 1);
	return mgf_dir_make(&tmp, "view");
}

static int teardown(void **state)
{
	(void)state;
	return mgf_dir_remove(&tmp);
}

static struct mg *model(struct mg_config *cfg)
{
	struct mg *mg;

	mgf_config(cfg, tmp.db, "none");
	mgf_set(cfg, "embedded_vram", "64M");
	mgf_set(cfg, "embedded_vm", "a:" VMA ":64M");
	mgf_set(cfg, "embedded_vm", "b:" VMB ":64M");
	assert_int_equal(mg_create(cfg, &mg), 0);
	return mg;
}

static void test_listing_matches_lists(void **state)
{
	struct mg_gpu_info *gpus;
	struct mg_vm_info *vms;
	struct mg_config cfg;
	size_t ng, nv, i;
	struct view v;
	struct mg *mg;

	(void)state;
	mg = model(&cfg);
	view_get(mg, &v);
	assert_int_equal(mg_list_gpus(mg, &gpus, &ng), 0);
	assert_int_equal(mg_list_vms(mg, &vms, &nv), 0);
	assert_int_equal(v.ngpus, ng);
	assert_int_equal(v.nvms, 2);
	assert_int_equal(v.nvms, nv);
	assert_memory_equal(v.gpus, gpus, ng * sizeof(*gpus));
	for (i = 0; i < nv; i++) {
		assert_string_equal(v.vms[i].id, vms[i].id);
		assert_memory_equal(&v.vms[i].policy, &vms[i].policy,
				    sizeof(vms[i].policy));
		assert_memory_equal(&v.vms[i].stats, &vms[i].stats,
				    sizeof(vms[i].stats));
	}
	/* unchanged: equal, as often as asked; nothing compared: equal */
	assert_true(mg_view_equal(mg, v.gpus, v.ngpus, v.vms, v.nvms));
	assert_true(mg_view_equal(mg, v.gpus, v.ngpus, v.vms, v.nvms));
	assert_true(mg_view_equal(mg, NULL, 0, NULL, 0));
	/* a different count or byte is not */
	assert_false(mg_view_equal(mg, NULL, 0, v.vms, v.nvms - 1));
	v.vms[1].entitlement ^= 1;
	assert_false(vms_equal(mg, &v));
	v.vms[1].entitlement ^= 1;
	assert_true(vms_equal(mg, &v));
	assert_false(mg_view_equal(NULL, NULL, 0, NULL, 0));
	assert_int_equal(mg_list_view(mg, NULL, &ng, &vms, &nv, NULL), -EINVAL);
	assert_false(mg_view_current(NULL, v.gen));
	/* no change: the generation stays, also across a stats refresh */
	assert_true(current(mg, &v));
	usleep(150 * 1000);	/* stats older than MG_STATS_FRESH_MS */
	assert_true(current(mg, &v));
	assert_false(mg_view_current(mg, v.gen + 1));
	free(gpus);
	free(vms);
	view_free(&v);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

static void test_every_change_breaks_equality(void **state)
{
	struct mg_vm_policy p = { .weight = 300 };
	struct mg_knobs k = { .policy = "lra" };
	struct vg_host_guest *g;
	struct mg_config cfg;
	char why[MG_WHY_LEN];
	struct view v;
	struct mg *mg;
	u64 va;

	(void)state;
	mg = model(&cfg);

	/* an operator's policy */
	view_get(mg, &v);
	assert_int_equal(mg_set_vm_policy(mg, "a", &p, MG_POL_WEIGHT, why,
					  sizeof(why)), 0);
	assert_false(vms_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);

	/* knobs show in the GPU list */
	view_get(mg, &v);
	assert_true(gpus_equal(mg, &v));
	assert_int_equal(mg_set_knobs(mg, &k, MG_KNOB_POLICY, why, sizeof(why)), 0);
	assert_false(gpus_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);

	/* the core's counters move: the next read's refresh sees it */
	view_get(mg, &v);
	g = mgf_guest(mg, VMB);
	assert_int_equal(vg_bo_alloc(vg_host_guest_vm(g), 8 * MiB, 0, &va), 0);
	usleep(150 * 1000);	/* stats older than MG_STATS_FRESH_MS */
	assert_false(vms_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);

	/* a VM stops, a VM is defined */
	view_get(mg, &v);
	assert_int_equal(mg_vm_stop(mg, VMB), 0);
	assert_false(vms_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);
	view_get(mg, &v);
	p.quota = 32 * MiB;
	assert_int_equal(mg_vm_define(mg, VMC, "c", &p, MG_POL_QUOTA,
				      MG_SRC_CONFIG, why, sizeof(why)), 0);
	assert_false(vms_equal(mg, &v));
	assert_false(current(mg, &v));
	view_free(&v);

	/* and after a fresh listing, equal again */
	view_get(mg, &v);
	assert_true(mg_view_equal(mg, v.gpus, v.ngpus, v.vms, v.nvms));
	assert_true(current(mg, &v));
	view_free(&v);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/*
 * Every write path of the model in turn, each followed by the oracle
 * check on a listing taken before it (and a fresh one after it).
 */
static void test_generation_follows_every_write(void **state)
{
	struct mg_vm_policy p = { .quota = 32 * MiB, .weight = 200 };
	struct mg_knobs k = { .oversub_pct = 300 };
	struct mg_backend *be;
	struct mg_config cfg;
	char why[MG_WHY_LEN];
	struct view v;
	struct mg *mg;
	int step;
	u64 va;

	(void)state;
	mg = model(&cfg);
	be = mg_get_backend(mg);
	for (step = 0; step < 15; step++) {
		view_get(mg, &v);
		switch (step) {
		case 0:
			mg_set_vm_policy(mg, VMA, &p, MG_POL_WEIGHT, why, sizeof(why));
			break;
		case 1:
			mg_reset_vm_policy(mg, VMA, why, sizeof(why));
			break;
		case 2:
			mg_set_knobs(mg, &k, MG_KNOB_OVERSUB, why, sizeof(why));
			break;
		case 3:
			mg_vm_set_meta(mg, VMB, &p, MG_POL_QUOTA | MG_POL_WEIGHT,
				       -1, why, sizeof(why));
			break;
		case 4:		/* refused: only the VM's error changes */
			mg_vm_set_meta(mg, VMB, &p, MG_POL_QUOTA, 7, why,
				       sizeof(why));
			break;
		case 5:
			mg_vm_report_error(mg, VMA, "a", "bad metadata");
			break;
		case 6:
			vg_bo_alloc(vg_host_guest_vm(mg_backend_embedded_guest(be, VMA)),
				    4 * MiB, 0, &va);
			mg_tick(mg, mg_mono_ms());
			break;
		case 7:		/* the mdev goes: lost at the next read */
			assert_int_equal(mg_backend_embedded_unplug(be, VMB), 0);
			usleep(150 * 1000);
			break;
		case 8:		/* and comes back */
			assert_int_equal(mg_backend_embedded_plug(be, VMB, 0,
								  32 * MiB), 0);
			mg_recompute(mg);
			break;
		case 9:
			mg_vm_stop(mg, VMB);
			break;
		case 10:
			mg_vm_forget(mg, VMB);
			break;
		case 11:
			mg_vm_define(mg, VMC, "c", &p, MG_POL_QUOTA, MG_SRC_CONFIG,
				     why, sizeof(why));
			break;
		case 12:
			mg_vm_start(mg, VMC, "c", &p, MG_POL_QUOTA, -1,
				    MG_SRC_CONFIG, why, sizeof(why));
			break;
		case 13:	/* refused start: the error is shown */
			mg_vm_start(mg, VMB, "b", &p, MG_POL_QUOTA, 5,
				    MG_SRC_CONFIG, why, sizeof(why));
			break;
		default:
			mg_recompute(mg);
			break;
		}
		/* the oracle: current only if equal (fails the test if not) */
		if (step != 14)
			assert_false(current(mg, &v));
		else
			current(mg, &v);
		view_free(&v);
		view_get(mg, &v);
		assert_true(current(mg, &v));
		view_free(&v);
	}
	mg_destroy(mg);
	mg_config_free(&cfg);
}

/* ---- the LRC file cache's VRAM ------------------------------------------ */

#define KiB	(1ull << 10)
#define FILE_BYTES	(128 * KiB)	/* two 64 KiB GPU pages */

static void put_file(const char *path, size_t len)
{
	FILE *f = fopen(path, "w");
	size_t i;

	assert_non_null(f);
	for (i = 0; i < len; i++)
		fputc((int)(i * 7 % 251), f);
	assert_int_equal(fclose(f), 0);
}

static const struct mg_vm_info *view_vm(const struct view *v, const char *id)
{
	size_t i;

	for (i = 0; i < v->nvms; i++)
		if (!strcmp(v->vms[i].id, id))
			return &v->vms[i];
	fail_msg("vm %s not listed", id);
	return NULL;
}

/* The backend's own answer for a GPU's cache_used (the core's count). */
static uint64_t backend_cache_used(struct mg *mg, int gpu)
{
	struct mg_backend *be = mg_get_backend(mg);
	struct mg_gpu_info *gl;
	uint64_t used;
	size_t n;

	assert_int_equal(be->ops->list_gpus(be->priv, &gl, &n), 0);
	assert_true((size_t)gpu < n);
	used = gl[gpu].cache_used;
	free(gl);
	return used;
}

/* Whether text (rendered JSON or metrics) holds needle. */
static void assert_rendered(const char *text, const char *fmt,
			    unsigned long long val)
{
	char needle[256];

	snprintf(needle, sizeof(needle), fmt, val);
	if (!strstr(text, needle))
		fail_msg("'%s' not in:\n%s", needle, text);
}

/* /v1/gpus, /v1/vms and /metrics as the REST server renders them from v. */
static void assert_views_render(struct mg *mg, const struct view *v,
				int gpu, unsigned long long cache_used,
				unsigned long long cache_private)
{
	const struct mg_vm_info *a = view_vm(v, VMA);
	struct mg_status st;
	struct rbuf b;
	char *text;
	size_t len;

	rbuf_init(&b, 1024);
	rj_gpu(&b, &v->gpus[gpu], false);
	text = rbuf_take(&b, &len);
	assert_non_null(text);
	assert_rendered(text, ",\"cache_used\":%llu,", cache_used);
	free(text);
	rbuf_init(&b, 1024);
	rj_vm(&b, a, false);
	text = rbuf_take(&b, &len);
	assert_non_null(text);
	assert_rendered(text, ",\"cache_private\":%llu}", cache_private);
	free(text);
	assert_int_equal(mg_get_status(mg, &st), 0);
	rbuf_init(&b, 1 << 16);
	mg_metrics_format(&b, &st, v->gpus, v->ngpus, v->vms, v->nvms);
	text = rbuf_take(&b, &len);
	assert_non_null(text);
	assert_rendered(text, "\nvgmem_gpu_cache_used_bytes{gpu=\"0\",device=\"sim0\"} %llu\n",
			cache_used);
	assert_rendered(text, "\nvgmem_vm_cache_private_bytes{vm=\"" VMA
			"\",domain=\"a\",domain_uuid=\"\",gpu=\"0\"} %llu\n", cache_private);
	free(text);
}

/*
 * End to end on the embedded backend: a guest's GPU reads and writes
 * files of its share, the cache's replicas take VRAM, and the model shows
 * exactly the core's bytes: per GPU cache_used (apart from vram_used),
 * per VM cache_private (apart from its stats). A change of them alone is
 * a new generation: GPU reads of a read-only map change only the GPU's
 * cache_used, GPU writes only the file cache's bytes, never the VM's
 * counters, and both make the cached answers stale.
 */
static void test_file_cache_bytes(void **state)
{
	struct mg_share sh = { .id = 0 };
	struct mg_gpu_info want_gpu;
	uint64_t used;
	struct vg_host_guest *g;
	struct vgmem_chan *ch;
	struct vgmem_dev *dev;
	struct mg_config cfg;
	char path[MG_SHARE_PATH_LEN + 16];
	struct view v, w;
	struct mg *mg;
	uint64_t ro, rw, scratch, sum;
	int gpu;

	(void)state;
	unlink(tmp.db);
	mg = model(&cfg);
	snprintf(sh.tag, sizeof(sh.tag), "data");
	snprintf(sh.source, sizeof(sh.source), "%s/share", tmp.path);
	assert_int_equal(mkdir(sh.source, 0755), 0);
	snprintf(path, sizeof(path), "%s/ro.bin", sh.source);
	put_file(path, FILE_BYTES);
	snprintf(path, sizeof(path), "%s/rw.bin", sh.source);
	put_file(path, FILE_BYTES);
	assert_int_equal(mg_vm_set_shares(mg, VMA, &sh, 1, NULL), 0);

	/* the guest's channel and maps first: they may move its counters */
	g = mgf_guest(mg, VMA);
	dev = vg_host_guest_dev(g);
	assert_int_equal(vgmem_chan_create(dev, 16, 4096, 4096, &ch), 0);
	assert_int_equal(vgmem_bo_alloc(dev, VGMEM_PAGE_SIZE, &scratch), 0);
	assert_int_equal(vgmem_map_file(dev, 0, "ro.bin", 0, FILE_BYTES,
					VGMEM_FILE_RO, &ro), 0);
	assert_int_equal(vgmem_map_file(dev, 0, "rw.bin", 0, FILE_BYTES,
					VGMEM_FILE_RW, &rw), 0);
	assert_int_equal(mg_recompute(mg), 0);
	view_get(mg, &v);
	gpu = view_vm(&v, VMA)->gpu;
	assert_true(gpu >= 0 && (size_t)gpu < v.ngpus);
	assert_int_equal(v.gpus[gpu].cache_used, 0);
	assert_int_equal(view_vm(&v, VMA)->cache_private, 0);
	assert_views_render(mg, &v, gpu, 0, 0);

	/* GPU reads of the read-only map: shared replicas, the GPU's alone */
	assert_int_equal(vgmem_checksum(ch, ro, FILE_BYTES, scratch, &sum), 0);
	assert_int_equal(backend_cache_used(mg, gpu), FILE_BYTES);
	assert_int_equal(vg_vm_cache_private(vg_host_guest_vm(g)), 0);
	assert_int_equal(mg_recompute(mg), 0);
	assert_true(vms_equal(mg, &v));
	assert_false(gpus_equal(mg, &v));
	assert_false(current(mg, &v));
	view_get(mg, &w);
	want_gpu = v.gpus[gpu];
	want_gpu.cache_used = FILE_BYTES;
	assert_memory_equal(&w.gpus[gpu], &want_gpu, sizeof(want_gpu));
	assert_int_equal(w.gpus[gpu].vram_used, v.gpus[gpu].vram_used);
	assert_views_render(mg, &w, gpu, FILE_BYTES, 0);
	view_free(&v);
	v = w;

	/* GPU writes of half the read-write map: the VM's private replica */
	assert_int_equal(vgmem_acquire(dev, rw, 0), 0);
	assert_int_equal(vgmem_fill_pattern(ch, rw, 64 * KiB, 5), 0);
	assert_int_equal(vg_vm_cache_private(vg_host_guest_vm(g)), 64 * KiB);
	used = backend_cache_used(mg, gpu);
	assert_true(used >= FILE_BYTES + 64 * KiB);
	assert_int_equal(mg_recompute(mg), 0);
	assert_false(current(mg, &v));
	view_get(mg, &w);
	assert_memory_equal(&view_vm(&w, VMA)->stats, &view_vm(&v, VMA)->stats,
			    sizeof(v.vms[0].stats));
	assert_int_equal(view_vm(&w, VMA)->cache_private, 64 * KiB);
	assert_int_equal(view_vm(&w, VMB)->cache_private, 0);
	assert_int_equal(w.gpus[gpu].cache_used, used);
	assert_views_render(mg, &w, gpu, used, 64 * KiB);
	view_free(&v);
	v = w;

	/* the same listing, unchanged, stays current */
	assert_true(current(mg, &v));

	/* released and unmapped: the private replica is merged and gone */
	assert_int_equal(vgmem_release(dev, rw, 0), 0);
	assert_int_equal(vgmem_unmap_file(dev, rw), 0);
	assert_int_equal(vg_vm_cache_private(vg_host_guest_vm(g)), 0);
	assert_int_equal(mg_recompute(mg), 0);
	assert_false(current(mg, &v));
	view_free(&v);
	view_get(mg, &v);
	assert_int_equal(view_vm(&v, VMA)->cache_private, 0);
	assert_int_equal(v.gpus[gpu].cache_used, backend_cache_used(mg, gpu));
	view_free(&v);

	/* a VM that stops holds no replica: its private bytes show 0 */
	assert_int_equal(vgmem_map_file(dev, 0, "rw.bin", 0, FILE_BYTES,
					VGMEM_FILE_RW, &rw), 0);
	assert_int_equal(vgmem_acquire(dev, rw, 0), 0);
	assert_int_equal(vgmem_fill_pattern(ch, rw + 64 * KiB, 64 * KiB, 6), 0);
	assert_int_equal(mg_recompute(mg), 0);
	view_get(mg, &v);
	assert_int_equal(view_vm(&v, VMA)->cache_private, 64 * KiB);
	view_free(&v);
	vgmem_chan_destroy(ch);
	assert_int_equal(mg_vm_stop(mg, VMA), 0);
	view_get(mg, &v);
	assert_false(view_vm(&v, VMA)->running);
	assert_int_equal(view_vm(&v, VMA)->cache_private, 0);
	assert_int_equal(v.gpus[gpu].cache_used, backend_cache_used(mg, gpu));
	assert_true(v.gpus[gpu].cache_used < used);
	view_free(&v);
	mg_destroy(mg);
	mg_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listing_matches_lists),
		cmocka_unit_test(test_every_change_breaks_equality),
		cmocka_unit_test(test_generation_follows_every_write),
		cmocka_unit_test(test_file_cache_bytes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
