// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Live migration of a thrashing domain (mgmtd.h, mg_libvirt_migrate): on
 * a thread of its own, mgmtd looks at the destination's free vGPUs
 * (migdest.c), then asks libvirt for a live peer-to-peer migration that
 * persists the domain there and undefines it here, and tells the model
 * the outcome. Migrations are counted under lv->lock, so that
 * mg_libvirt_stop waits for them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvirt_priv.h"
#include "migdest.h"
#include "log.h"

struct lv_mig {
	struct mg_libvirt *lv;
	virDomainPtr dom;
	char name[MG_NAME_LEN];
	char id[MG_ID_LEN];		/* the VM's (its mdev UUID) */
	char *dest;			/* the destination's libvirt URI */
	char *data_uri;			/* where QEMU's stream goes; NULL: libvirt picks */
};

/*
 * The migration's parameters: the destination's domain XML when the
 * domain has vGPUs (each renamed to a free mdev there, migdest.c), and
 * the data URI if the operator set one. 0, or -errno with why.
 */
static int lv_mig_params(struct lv_mig *m, virConnectPtr dconn,
			 virTypedParameterPtr *params, int *nparams,
			 char *why, size_t whylen)
{
	int maxp = 0, ret;
	char *dxml;

	ret = mg_mig_dest_xml(m->lv->conn, m->dom, dconn, &dxml, why, whylen);
	if (ret)
		return ret;
	if ((dxml && virTypedParamsAddString(params, nparams, &maxp,
					     VIR_MIGRATE_PARAM_DEST_XML, dxml) < 0) ||
	    (m->data_uri && virTypedParamsAddString(params, nparams, &maxp,
						    VIR_MIGRATE_PARAM_URI,
						    m->data_uri) < 0)) {
		snprintf(why, whylen, "migration parameters: %s", lv_errmsg());
		ret = -ENOMEM;
	}
	free(dxml);
	return ret;
}

static void *lv_migrate_thread(void *arg)
{
	struct lv_mig *m = arg;
	struct mg_libvirt *lv = m->lv;
	virTypedParameterPtr params = NULL;
	virConnectPtr dconn;
	char why[512] = "";
	int nparams = 0, r;

	mg_info("libvirt: live-migrating %s to %s", m->name, m->dest);
	/* mgmtd's own look at the destination: which vGPUs it has free. */
	dconn = virConnectOpen(m->dest);
	if (!dconn) {
		/* the event names the URI already (migrate_to) */
		snprintf(why, sizeof(why), "cannot connect to the destination: %s",
			 lv_errmsg());
		r = -EIO;
	} else {
		r = lv_mig_params(m, dconn, &params, &nparams, why, sizeof(why));
	}
	if (!r) {
		r = virDomainMigrateToURI3(m->dom, m->dest, params,
					   (unsigned int)nparams,
					   VIR_MIGRATE_LIVE | VIR_MIGRATE_PEER2PEER |
					   VIR_MIGRATE_PERSIST_DEST |
					   VIR_MIGRATE_UNDEFINE_SOURCE);
		/* libvirt's error is this thread's: read it before anything else */
		if (r < 0) {
			snprintf(why, sizeof(why), "%s", lv_errmsg());
			r = -EIO;
		}
	}
	mg_migration_result(lv->mg, m->id, m->name, m->dest, r, r ? why : NULL);
	virTypedParamsFree(params, nparams);
	if (dconn)
		virConnectClose(dconn);
	virDomainFree(m->dom);
	free(m->dest);
	free(m->data_uri);
	free(m);
	pthread_mutex_lock(&lv->lock);
	lv->migrations--;
	pthread_cond_broadcast(&lv->mig_done);
	pthread_mutex_unlock(&lv->lock);
	return NULL;
}

int mg_libvirt_migrate(struct mg_libvirt *lv, const char *id,
		       const char *domain, const char *dest_uri,
		       const char *data_uri)
{
	struct lv_mig *m;
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	if (!lv || !id || !domain || !dest_uri || !*dest_uri)
		return -EINVAL;
	if (!lv->conn)
		return -ENOTCONN;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->lv = lv;
	snprintf(m->name, sizeof(m->name), "%s", domain);
	snprintf(m->id, sizeof(m->id), "%s", id);
	m->dest = strdup(dest_uri);
	m->data_uri = data_uri && *data_uri ? strdup(data_uri) : NULL;
	m->dom = virDomainLookupByName(lv->conn, domain);
	if (!m->dest || !m->dom || (data_uri && *data_uri && !m->data_uri)) {
		ret = m->dom ? -ENOMEM : -ENOENT;
		goto err_free;
	}
	pthread_mutex_lock(&lv->lock);
	lv->migrations++;
	pthread_mutex_unlock(&lv->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &attr, lv_migrate_thread, m);
	pthread_attr_destroy(&attr);
	if (ret) {
		pthread_mutex_lock(&lv->lock);
		lv->migrations--;
		pthread_mutex_unlock(&lv->lock);
		ret = -ret;
		goto err_free;
	}
	return 0;

err_free:
	if (m->dom)
		virDomainFree(m->dom);
	free(m->dest);
	free(m->data_uri);
	free(m);
	return ret;
}
