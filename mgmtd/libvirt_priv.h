/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The libvirt integration's state, shared by libvirt.c (connection,
 * domains, claims) and lvmigrate.c (live migrations). Locking as said at
 * the top of libvirt.c.
 */
#ifndef VGMEM_MGMTD_LIBVIRT_PRIV_H
#define VGMEM_MGMTD_LIBVIRT_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "mgmtd.h"

struct lv_dom {
	char uuid[VIR_UUID_STRING_BUFLEN];	/* the domain's own UUID */
	char name[MG_NAME_LEN];
	char mdev[MG_ID_LEN];
	/*
	 * The VM of mdev is this domain's. At most one entry per mdev has
	 * it; the others are refused claimants.
	 */
	bool owner;
};

struct mg_libvirt {
	struct mg *mg;
	char *uri;
	virConnectPtr conn;		/* NULL while disconnected */
	int cb_life, cb_meta;		/* callback ids, -1: none */
	int reconnect_timer;
	pthread_t thread;
	volatile int stop;
	int wake_timer;

	pthread_mutex_t lock;		/* doms, connected, migrations */
	pthread_cond_t mig_done;
	struct lv_dom *doms;
	size_t nr_doms, cap_doms;
	bool connected;
	unsigned int migrations;
	/*
	 * In lv_sync_all (start, reconnection): refusals already reported
	 * for a domain are not reported again. Only the thread syncing.
	 */
	bool full_sync;
};

/* libvirt's last error of this thread, or a placeholder. */
static inline const char *lv_errmsg(void)
{
	virErrorPtr e = virGetLastError();

	return e && e->message ? e->message : "unknown libvirt error";
}

#endif /* VGMEM_MGMTD_LIBVIRT_PRIV_H */
