// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * VMs' virtio-fs shares (mgmtd.h): the host directories a domain exports
 * to its guest through virtio-fs are also the roots beneath which its GPU
 * may map files (the LRC file cache). libvirt.c reads them from the domain
 * XML (domxml.c), the model keeps the valid ones per VM and hands them to
 * the backend whenever the VM runs: here, and from mg_vm_start() (vms.c).
 * Locking as in model.c: everything under mg->lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "log.h"

/* Error event, log line and the VM's error; lock held. */
static void shares_error_locked(struct mg *mg, struct mg_vm *vm,
				const char *msg)
{
	char emsg[2 * MG_WHY_LEN];

	mg_json_escape(emsg, sizeof(emsg), msg);
	mg_strlcpy(vm->info.error, msg, sizeof(vm->info.error));
	mg_view_changed_locked(mg);
	mg_emit_locked(mg, "error", vm->info.id,
		       "{\"op\":\"shares\",\"reason\":\"%s\"}", emsg);
	mg_err("vm %s (%s): shares: %s", vm->info.id, vm->info.name, msg);
}

int mg_shares_push_locked(struct mg *mg, struct mg_vm *vm)
{
	char why[MG_WHY_LEN];
	int ret;

	if (!vm->info.running || !vm->shares_set)
		return 0;
	ret = mg->be.ops->set_shares(mg->be.priv, vm->info.id, vm->shares,
				     vm->nr_shares);
	if (ret) {
		snprintf(why, sizeof(why),
			 "the backend refused the share table (%zu shares): %s",
			 vm->nr_shares, strerror(-ret));
		shares_error_locked(mg, vm, why);
	}
	return ret;
}

/* Ids ascending and unique, tags unique, every share valid. */
static int shares_validate(const struct mg_share *shares, size_t n,
			   char *why, size_t whylen)
{
	size_t i, j;

	if (n > MG_SHARES_MAX) {
		snprintf(why, whylen, "more than %u shares", MG_SHARES_MAX);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (i && shares[i].id <= shares[i - 1].id) {
			snprintf(why, whylen, "share ids must ascend (share %u)",
				 shares[i].id);
			return -EINVAL;
		}
		if (mg_share_check(&shares[i], why, whylen))
			return -EINVAL;
		for (j = 0; j < i; j++) {
			if (!strcmp(shares[j].tag, shares[i].tag)) {
				snprintf(why, whylen,
					 "shares %u and %u have one tag",
					 shares[j].id, shares[i].id);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int mg_vm_set_shares(struct mg *mg, const char *id,
		     const struct mg_share *shares, size_t n,
		     const char *bad)
{
	struct mg_share *copy = NULL;
	char why[MG_WHY_LEN];
	struct mg_vm *vm;
	int ret;

	if (!id || (n && !shares))
		return -EINVAL;
	ret = shares_validate(shares, n, why, sizeof(why));
	if (ret) {
		mg_err("vm %s: share table refused: %s", id, why);
		return ret;
	}
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, shares, n * sizeof(*copy));
	}
	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id);
	if (!vm) {
		pthread_mutex_unlock(&mg->lock);
		free(copy);
		return -ENOENT;
	}
	free(vm->shares);
	vm->shares = copy;
	vm->nr_shares = n;
	vm->shares_set = true;
	/* GET /v1/vms shows the table: a cached list is stale now */
	mg_view_changed_locked(mg);
	if (bad && *bad)
		shares_error_locked(mg, vm, bad);
	mg_info("vm %s (%s): %zu virtio-fs share%s", vm->info.id,
		vm->info.name, n, n == 1 ? "" : "s");
	ret = mg_shares_push_locked(mg, vm);
	pthread_mutex_unlock(&mg->lock);
	mg_events_flush(mg);
	return ret;
}

int mg_get_vm_shares(struct mg *mg, const char *id_or_name,
		     struct mg_share **out, size_t *n)
{
	struct mg_vm *vm;
	int ret = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&mg->lock);
	vm = mg_find_locked(mg, id_or_name);
	if (!vm) {
		ret = -ENOENT;
	} else if (vm->nr_shares) {
		*out = malloc(vm->nr_shares * sizeof(**out));
		if (*out) {
			memcpy(*out, vm->shares,
			       vm->nr_shares * sizeof(**out));
			*n = vm->nr_shares;
		} else {
			ret = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&mg->lock);
	return ret;
}
