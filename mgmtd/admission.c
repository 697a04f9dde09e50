// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Dry-run admission (model.h, mg_admission_query): a scheduler (an
 * OpenStack Nova filter, a KubeVirt controller) asks, before it places a
 * VM, whether mgmtd would admit a VM of this policy now and what it would
 * be entitled to. The answer uses the same checks and the same
 * entitlement computation as a real start (policy/: vgp_admit,
 * vgp_compute), on the model's view of the running VMs, under the model's
 * lock, and changes nothing: it is a view of now, not a reservation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"

/*
 * One GPU: admitted or not (st says why), and if so the candidate's
 * entitlement while it demands its quota and the others what they hold.
 * The model's lock held.
 */
static int query_gpu_locked(struct mg *mg, int gpu,
			    const struct mg_vm_policy *p,
			    struct mg_admission *a)
{
	struct vgp_vm *vms;
	struct vgp_ent *ent = NULL;
	struct vgp_status st;
	struct vgp_gpu g;
	void *scratch = NULL;
	size_t i, n = 0, slen;
	uint64_t quotas = 0;
	int ret;

	ret = mg_gpu_params_locked(mg, gpu, &g);
	if (ret)
		return ret;
	vms = calloc(mg->nr_vms + 1, sizeof(*vms));
	if (!vms)
		return -ENOMEM;
	for (i = 0; i < mg->nr_vms; i++) {
		const struct mg_vm *o = mg->vms[i];

		if (!o->info.running || o->info.gpu != gpu)
			continue;
		mg_to_vgp(&o->info.policy, o->info.stats.allocated, &vms[n++]);
		quotas += o->info.policy.quota;
	}
	memset(a, 0, sizeof(*a));
	a->gpu = gpu;
	a->vms = (uint32_t)n;
	a->quotas = quotas + p->quota;
	a->quota_limit = (uint64_t)((unsigned __int128)g.vram * g.oversub_pct / 100);
	mg_to_vgp(p, p->quota, &vms[n]);
	ret = vgp_admit(&g, vms, n, &vms[n], &st);
	snprintf(a->code, sizeof(a->code), "%s", vgp_code_name(st.code));
	if (ret) {
		snprintf(a->reason, sizeof(a->reason), "%s", st.reason);
		ret = ret == -ENOSPC ? 0 : ret;
		goto out;
	}
	n++;
	slen = vgp_scratch_size(n);
	scratch = malloc(slen ? slen : 16);
	ent = calloc(n, sizeof(*ent));
	if (!scratch || !ent) {
		ret = -ENOMEM;
		goto out;
	}
	ret = vgp_compute(&g, vms, n, ent, scratch, slen, &st);
	if (ret) {
		snprintf(a->reason, sizeof(a->reason), "%s", st.reason);
		goto out;
	}
	a->admitted = true;
	a->entitlement = ent[n - 1].bytes;
	a->guaranteed = ent[n - 1].guaranteed;
out:
	free(ent);
	free(scratch);
	free(vms);
	return ret;
}

int mg_admission_query(struct mg *mg, int gpu, const struct mg_vm_policy *p,
		       struct mg_admission *out, char *why, size_t whylen)
{
	/* Every field is the request's (a PUT's defaults filled in). */
	const struct mg_pol_who who = { .name = "the VM asked about",
					.set = MG_POL_ALL };
	struct mg_vm_policy np = *p;
	struct mg_admission a, best;
	size_t i;
	int ret = 0;

	if (!np.max)
		np.max = np.quota;
	pthread_mutex_lock(&mg->lock);
	if (gpu >= 0 && (size_t)gpu >= mg->nr_gpus) {
		mg_why_set(why, whylen, "no GPU %d (this host has %zu)", gpu,
			   mg->nr_gpus);
		ret = -ENOENT;
		goto out_unlock;
	}
	/* A policy no VM may have is an error, not a refusal. */
	ret = mg_validate_policy_locked(mg, gpu, &np, &who, why, whylen);
	if (ret)
		goto out_unlock;
	memset(&best, 0, sizeof(best));
	best.gpu = -1;
	for (i = 0; i < mg->nr_gpus; i++) {
		if (gpu >= 0 && (size_t)gpu != i)
			continue;
		ret = query_gpu_locked(mg, (int)i, &np, &a);
		if (ret)
			goto out_unlock;
		/*
		 * Where a start would place it (vms.c): the admitting GPU
		 * with the fewest quota bytes; refused everywhere, the first
		 * GPU's reason.
		 */
		if (a.admitted ? !best.admitted || a.quotas < best.quotas :
				 !best.admitted && best.gpu < 0)
			best = a;
	}
	if (!mg->nr_gpus)
		snprintf(best.reason, sizeof(best.reason), "this host has no GPU");
	if (!best.admitted && gpu < 0)
		best.gpu = -1;
	*out = best;
out_unlock:
	pthread_mutex_unlock(&mg->lock);
	return ret;
}
