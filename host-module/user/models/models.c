// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The model registry, spec parsing, admission and the host's glue: every
 * BO command of a guest and, for models that trap them, its USERD writes
 * pass through here to the host's model.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models_priv.h"
#include "user/host_priv.h"

extern const struct vg_model_ops vg_model_vgmem_ops;
extern const struct vg_model_ops vg_model_static_ops;
extern const struct vg_model_ops vg_model_admission_ops;
extern const struct vg_model_ops vg_model_swsched_ops;
extern const struct vg_model_ops vg_model_paging_ops;

static const struct vg_model_ops *const vg_model_table[VG_MODEL_NR] = {
	[VG_MODEL_VGMEM] = &vg_model_vgmem_ops,
	[VG_MODEL_STATIC] = &vg_model_static_ops,
	[VG_MODEL_ADMISSION] = &vg_model_admission_ops,
	[VG_MODEL_SWSCHED] = &vg_model_swsched_ops,
	[VG_MODEL_PAGING] = &vg_model_paging_ops,
};

const char *const vg_model_runs[] = {
	"vgmem:policy=random",
	"vgmem:policy=lra",
	"vgmem:policy=cold",
	"static",
	"admission",
	"swsched",
	"paging:gran=64k",
	"paging:gran=2m",
	NULL,
};

const struct vg_model_ops *vg_model_ops_of(enum vg_model_kind k)
{
	return (unsigned int)k < VG_MODEL_NR ? vg_model_table[k] : NULL;
}

const char *vg_model_name(enum vg_model_kind k)
{
	const struct vg_model_ops *ops = vg_model_ops_of(k);

	return ops ? ops->name : NULL;
}

/* A decimal number with an optional k/m/g suffix (powers of 1024). */
static int vg_model_parse_size(const char *s, size_t len, u64 *out)
{
	u64 v = 0, mul = 1;
	size_t i;

	if (len && (s[len - 1] == 'k' || s[len - 1] == 'K'))
		mul = 1ull << 10;
	else if (len && (s[len - 1] == 'm' || s[len - 1] == 'M'))
		mul = 1ull << 20;
	else if (len && (s[len - 1] == 'g' || s[len - 1] == 'G'))
		mul = 1ull << 30;
	if (mul != 1)
		len--;
	if (!len || len > 12)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (u64)(s[i] - '0');
	}
	*out = v * mul;
	return 0;
}

static bool vg_model_key(const char *kv, size_t klen, const char *key)
{
	return strlen(key) == klen && !memcmp(kv, key, klen);
}

/* One key=value of kv[0..len) into p. */
static int vg_model_parse_kv(const char *kv, size_t len,
			     struct vg_model_params *p)
{
	const char *eq = memchr(kv, '=', len);
	const char *val;
	size_t klen, vlen;
	char name[16];
	u64 v;
	int err;

	if (!eq)
		return -EINVAL;
	klen = (size_t)(eq - kv);
	val = eq + 1;
	vlen = len - klen - 1;
	if (vg_model_key(kv, klen, "policy") && p->kind == VG_MODEL_VGMEM) {
		enum vg_chunk_policy pol;

		if (vlen >= sizeof(name))
			return -EINVAL;
		memcpy(name, val, vlen);
		name[vlen] = '\0';
		err = vg_policy_parse(name, &pol);
		if (err)
			return -EINVAL;
		p->policy = pol;
		return 0;
	}
	err = vg_model_parse_size(val, vlen, &v);
	if (err)
		return err;
	if (vg_model_key(kv, klen, "gran") && p->kind == VG_MODEL_PAGING) {
		if (v != VG_MODEL_GRAN_SMALL && v != VG_MODEL_CHUNK)
			return -EINVAL;
		p->gran = v;
	} else if (vg_model_key(kv, klen, "mediation_ns") &&
		   p->kind == VG_MODEL_SWSCHED) {
		if (v > NSEC_PER_SEC)
			return -EINVAL;
		p->mediation_ns = v;
	} else if (vg_model_key(kv, klen, "oversub") &&
		   p->kind != VG_MODEL_STATIC) {
		if (v > 100000)
			return -EINVAL;
		p->oversub_pct = (u32)v;
	} else {
		return -EINVAL;
	}
	return 0;
}

int vg_model_parse(const char *spec, struct vg_model_params *p)
{
	struct vg_model_params n;
	const char *colon, *s, *e;
	size_t nlen;
	unsigned int k;
	int err;

	if (!spec || !p)
		return -EINVAL;
	memset(&n, 0, sizeof(n));
	n.kind = VG_MODEL_NR;
	n.policy = VG_POLICY_NR;	/* not given: the GPU config's */
	colon = strchr(spec, ':');
	nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	for (k = 0; k < VG_MODEL_NR; k++)
		if (vg_model_table[k] &&
		    vg_model_key(spec, nlen, vg_model_table[k]->name))
			n.kind = (enum vg_model_kind)k;
	if (n.kind == VG_MODEL_NR)
		return -EINVAL;
	for (s = colon ? colon + 1 : NULL; s; s = *e ? e + 1 : NULL) {
		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		err = vg_model_parse_kv(s, (size_t)(e - s), &n);
		if (err)
			return err;
	}
	if (n.kind == VG_MODEL_PAGING && !n.gran)
		n.gran = VG_MODEL_CHUNK;
	if (n.kind == VG_MODEL_SWSCHED && !n.mediation_ns)
		n.mediation_ns = VG_MODEL_MEDIATION_NS_DEFAULT;
	*p = n;
	return 0;
}

const char *vg_model_spec(const struct vg_model_params *p, char *buf,
			  size_t len)
{
	const char *name = vg_model_name(p->kind);
	int n;

	if (!len)
		return buf;
	n = snprintf(buf, len, "%s", name ? name : "?");
	if (n < 0 || (size_t)n >= len)
		return buf;
	switch (p->kind) {
	case VG_MODEL_VGMEM:
		if (p->policy < VG_POLICY_NR)
			n += snprintf(buf + n, len - (size_t)n, ":policy=%s",
				      vg_policy_name(p->policy));
		break;
	case VG_MODEL_PAGING:
		n += snprintf(buf + n, len - (size_t)n, ":gran=%s",
			      p->gran == VG_MODEL_GRAN_SMALL ? "64k" : "2m");
		break;
	case VG_MODEL_SWSCHED:
		if (p->mediation_ns != VG_MODEL_MEDIATION_NS_DEFAULT)
			n += snprintf(buf + n, len - (size_t)n,
				      ":mediation_ns=%llu",
				      (unsigned long long)p->mediation_ns);
		break;
	default:
		break;
	}
	if (p->oversub_pct && p->kind != VG_MODEL_STATIC && n >= 0 &&
	    (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%soversub=%u",
			 strchr(buf, ':') ? "," : ":", p->oversub_pct);
	return buf;
}

/* ---- instances ------------------------------------------------------- */

int vg_model_create(struct vg_host *h, struct vg_gpu *gpu, struct vg_sim *sim,
		    const struct vg_model_params *p, struct vg_model **out)
{
	const struct vg_model_ops *ops = vg_model_ops_of(p->kind);
	struct vg_model *m;
	int err;

	if (!ops)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ops = ops;
	m->p = *p;
	m->host = h;
	m->gpu = gpu;
	m->sim = sim;
	m->bops = vg_sim_gpu_ops();
	m->b = sim;
	m->vram_size = m->bops->vram_size(sim);
	pthread_mutex_init(&m->lock, NULL);
	INIT_LIST_HEAD(&m->vms);
	if (ops->init) {
		err = ops->init(m);
		if (err) {
			pthread_mutex_destroy(&m->lock);
			free(m);
			return err;
		}
	}
	*out = m;
	return 0;
}

void vg_model_destroy(struct vg_model *m)
{
	if (!m)
		return;
	if (m->ops->fini)
		m->ops->fini(m);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* What a VM's quota takes of the admission budget: unlimited is all of it. */
static u64 vg_model_quota_weight(struct vg_model *m, u64 quota)
{
	return quota ? quota : m->vram_size;
}

/*
 * static: the partitions must fit in VRAM. The others: the sum of quotas
 * within oversub_pct of VRAM when a cap is set (vgmem.ko's admission uses
 * the same rule with its oversub_pct parameter, default 400).
 */
int vg_model_reserve(struct vg_model *m, u64 quota)
{
	u64 w = vg_model_quota_weight(m, quota), cap;
	bool ok = true;

	pthread_mutex_lock(&m->lock);
	if (m->p.kind == VG_MODEL_STATIC) {
		ok = quota && m->quota_sum <= m->vram_size &&
		     quota <= m->vram_size - m->quota_sum;
	} else if (w > U64_MAX - m->quota_sum) {
		ok = false;	/* the sum would wrap: no cap can hold it */
	} else if (m->p.oversub_pct) {
		cap = m->vram_size / 100 * m->p.oversub_pct +
		      m->vram_size % 100 * m->p.oversub_pct / 100;
		ok = m->quota_sum <= cap && w <= cap - m->quota_sum;
	}
	if (ok && m->ops->admit && m->ops->admit(m, quota))
		ok = false;
	if (ok) {
		m->quota_sum += w;
		m->nr_vms++;
		m->admitted++;
	} else {
		m->refused++;
	}
	pthread_mutex_unlock(&m->lock);
	return ok ? 0 : -ENOSPC;
}

void vg_model_unreserve(struct vg_model *m, u64 quota)
{
	pthread_mutex_lock(&m->lock);
	m->quota_sum -= vg_model_quota_weight(m, quota);
	m->nr_vms--;
	pthread_mutex_unlock(&m->lock);
}

int vg_model_attach(struct vg_model *m, struct vg_host_guest *g,
		    struct vg_vm *vm, u64 quota, u64 entitlement,
		    struct vg_model_vm **out)
{
	struct vg_model_vm *v;
	int err = 0;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->m = m;
	v->g = g;
	v->vm = vm;
	v->as = vg_vm_gpu_as(vm);
	v->quota = quota;
	v->entitlement = entitlement;
	v->st.quota = quota;
	v->st.entitlement = entitlement;
	vg_va_init(&v->va, VG_MODEL_VA_START, VGMEM_VA_END, VG_MODEL_CHUNK);
	INIT_LIST_HEAD(&v->bos);
	pthread_mutex_lock(&m->lock);
	if (m->ops->vm_init)
		err = m->ops->vm_init(v);
	if (!err)
		list_add_tail(&v->node, &m->vms);
	pthread_mutex_unlock(&m->lock);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	return 0;
}

static void vg_model_stats_add(struct vg_model_vm_stats *a,
			       const struct vg_model_vm_stats *b)
{
	a->oom_failures += b->oom_failures;
	a->quota_failures += b->quota_failures;
	a->bytes_to_vram += b->bytes_to_vram;
	a->bytes_to_host += b->bytes_to_host;
	a->model_ns += b->model_ns;
	a->submissions += b->submissions;
	a->faults += b->faults;
	a->evictions += b->evictions;
}

/* v's counters, m->lock held. */
static void vg_model_vm_stats_locked(struct vg_model_vm *v,
				     struct vg_model_vm_stats *st)
{
	*st = v->st;
	if (v->m->ops->vm_stats)
		v->m->ops->vm_stats(v, st);
}

void vg_model_detach(struct vg_model_vm *v)
{
	struct vg_model *m;
	struct vg_model_vm_stats st;

	if (!v)
		return;
	m = v->m;
	pthread_mutex_lock(&m->lock);
	vg_model_vm_stats_locked(v, &st);
	vg_model_stats_add(&m->gone, &st);
	if (m->ops->vm_fini)
		m->ops->vm_fini(v);
	list_del(&v->node);
	pthread_mutex_unlock(&m->lock);
	free(v);
}

/*
 * The models that manage BOs themselves run each command under m->lock;
 * vgmem's commands go to the core, which has its own locking, unserialised
 * (its bo_ctrl takes m->lock only to count), so the core's allocation path
 * is exactly what it is without models.
 */
void vg_model_bo_ctrl(struct vg_model_vm *v, struct vgmem_ctrl *cmd)
{
	if (!v->m->ops->bo_place) {
		v->m->ops->bo_ctrl(v, cmd);
		return;
	}
	pthread_mutex_lock(&v->m->lock);
	v->m->ops->bo_ctrl(v, cmd);
	pthread_mutex_unlock(&v->m->lock);
}

bool vg_model_userd_write(struct vg_model_vm *v, struct vg_chan *ch, u32 off,
			  u32 val)
{
	if (!v->m->ops->userd_write)
		return false;
	/* The model serialises itself: it may wait for other VMs' work. */
	v->m->ops->userd_write(v, ch, off, val);
	return true;
}

void vg_model_vm_stats(struct vg_model_vm *v, struct vg_model_vm_stats *st)
{
	pthread_mutex_lock(&v->m->lock);
	vg_model_vm_stats_locked(v, st);
	pthread_mutex_unlock(&v->m->lock);
}

void vg_model_gpu_stats(struct vg_model *m, struct vg_model_gpu_stats *st)
{
	struct vg_model_vm_stats sum, one;
	struct vg_model_vm *v;
	u64 resident = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&m->lock);
	sum = m->gone;
	list_for_each_entry(v, &m->vms, node) {
		vg_model_vm_stats_locked(v, &one);
		vg_model_stats_add(&sum, &one);
		resident += one.resident;
	}
	st->vram_size = m->vram_size;
	st->vram_used = resident;
	st->vms = m->nr_vms;
	st->vms_admitted = m->admitted;
	st->vms_refused = m->refused;
	st->quota_sum = m->quota_sum;
	pthread_mutex_unlock(&m->lock);
	st->oom_failures = sum.oom_failures;
	st->quota_failures = sum.quota_failures;
	st->bytes_to_vram = sum.bytes_to_vram;
	st->bytes_to_host = sum.bytes_to_host;
	st->model_ns = sum.model_ns;
}

/* ---- public wrappers over the host (models.h) ------------------------- */

const struct vg_model_params *vg_host_model(struct vg_host *h)
{
	return &h->model->p;
}

void vg_host_guest_model_stats(struct vg_host_guest *g,
			       struct vg_model_vm_stats *st)
{
	vg_model_vm_stats(g->mvm, st);
}

void vg_host_model_stats(struct vg_host *h, struct vg_model_gpu_stats *st)
{
	vg_model_gpu_stats(h->model, st);
}

/* ---- helpers for the models ----------------------------------------- */

void vg_model_count_failure(struct vg_model_vm *v, int err)
{
	if (err == -ENOMEM)
		v->st.oom_failures++;
	else if (err == -ENOSPC)
		v->st.quota_failures++;
}

u64 vg_model_pcie_ns(struct vg_model *m, u64 bytes)
{
	return vg_sim_cost_ns(m->sim, VG_LOC_HOST, bytes);
}

int vg_model_copy(struct vg_model *m, struct vg_mem *src, u64 src_off,
		  struct vg_mem *dst, u64 dst_off, u64 len, u64 *ns)
{
	struct vg_copy c = {
		.src = src, .src_off = src_off,
		.dst = dst, .dst_off = dst_off, .len = len,
	};
	u64 fence, dns = 0;
	int err;

	err = m->bops->copy_submit(m->b, &c, 1, &fence);
	if (err)
		return err;
	err = m->bops->copy_wait(m->b, fence, &dns);
	if (!err && ns)
		*ns += dns;
	return err;
}
