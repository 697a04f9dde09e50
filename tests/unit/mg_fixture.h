/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd's real model (mgmtd/model.h) over the embedded backend, for the
 * test_mgmtd_* programs (unit and integration): a scratch directory with
 * the state database, the configuration every such test starts from, and
 * the ways into the core behind a VM. Include after <cmocka.h>.
 *
 * Static inline, not a .c in tests/unit/: that would be linked into every
 * unit test, and only the mgmtd tests link mgmtd's libraries. The REST
 * tests' model is a test double instead (mg_model_fake.h).
 */
#ifndef VGMEM_TESTS_MG_FIXTURE_H
#define VGMEM_TESTS_MG_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mgmtd/mgmtd.h"
#include "mgmtd/log.h"
#include "host-module/user/host.h"

/* A scratch directory and the state database's path in it. */
struct mgf_dir {
	char path[64];
	char db[128];
};

/* /tmp/mgmtd-NAME-XXXXXX with NAME/state.db: 0, or -1 for cmocka's setup. */
static inline int mgf_dir_make(struct mgf_dir *d, const char *name)
{
	snprintf(d->path, sizeof(d->path), "/tmp/mgmtd-%s-XXXXXX", name);
	if (!mkdtemp(d->path))
		return -1;
	snprintf(d->db, sizeof(d->db), "%s/state.db", d->path);
	return 0;
}

static inline int mgf_dir_remove(struct mgf_dir *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
	return system(cmd) ? -1 : 0;
}

/* Removes the database and SQLite's WAL files: the next model starts empty. */
static inline void mgf_db_fresh(const char *db)
{
	char p[200];

	unlink(db);
	snprintf(p, sizeof(p), "%s-wal", db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", db);
	unlink(p);
}

/* mg_config_set, failing the test (with the reason) if it is refused. */
static inline void mgf_set(struct mg_config *cfg, const char *key,
			   const char *value)
{
	char err[256];

	if (mg_config_set(cfg, key, value, err, sizeof(err)))
		fail_msg("config %s=%s refused: %s", key, value, err);
}

/*
 * The defaults with the state database db, the embedded backend, libvirt
 * at uri ("none": without it) and a recompute timer that never fires in a
 * test (each test drives mg_tick() itself). The test adds the rest
 * (embedded_vram, embedded_vm, ...) with mgf_set before mg_create.
 */
static inline void mgf_config(struct mg_config *cfg, const char *db,
			      const char *libvirt_uri)
{
	assert_int_equal(mg_config_defaults(cfg), 0);
	mgf_set(cfg, "state_db", db);
	mgf_set(cfg, "backend", "embedded");
	mgf_set(cfg, "libvirt_uri", libvirt_uri);
	mgf_set(cfg, "recompute_ms", "3600000");
}

/* The embedded backend's guest behind VM id (it must have one). */
static inline struct vg_host_guest *mgf_guest(struct mg *mg, const char *id)
{
	struct vg_host_guest *g;

	g = mg_backend_embedded_guest(mg_get_backend(mg), id);
	assert_non_null(g);
	return g;
}

static inline struct vg_vm *mgf_core_vm(struct mg *mg, const char *id)
{
	return vg_host_guest_vm(mgf_guest(mg, id));
}

/* The core's own counters of VM id (entitlement, quota, ...). */
static inline struct vgmem_vm_stats mgf_core_stats(struct mg *mg,
						   const char *id)
{
	struct vgmem_vm_stats st;

	vg_vm_get_stats(mgf_core_vm(mg, id), &st);
	return st;
}

/* The model's view of VM id (it must know it). */
static inline struct mg_vm_info mgf_vm_info(struct mg *mg, const char *id)
{
	struct mg_vm_info vi;

	assert_int_equal(mg_get_vm(mg, id, &vi), 0);
	return vi;
}

#endif /* VGMEM_TESTS_MG_FIXTURE_H */
