// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Slowdown statistics (metrics.h). An iteration counts only if it ran to
 * the end in both runs (an iteration that met an out-of-memory failure is
 * counted as a failure, not as a slowdown).
 */
#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double mt_quantile(double *v, uint32_t n, double q)
{
	uint32_t k;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	/* Nearest rank: the smallest value with at least q of them at or below. */
	k = (uint32_t)(q * n + 0.999999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

double mt_jain(const double *x, const double *w, uint32_t n)
{
	double swx = 0, sw = 0, swx2 = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		swx += w[i] * x[i];
		sw += w[i];
		swx2 += w[i] * x[i] * x[i];
	}
	if (!n || sw <= 0 || swx2 <= 0)
		return 1;
	return swx * swx / (sw * swx2);
}

const char *mt_ratio_str(double a, double b, char *buf, size_t len)
{
	if (b > 0)
		snprintf(buf, len, "%.2f", a / b);
	else
		snprintf(buf, len, "%s", a > 0 ? "inf" : "-");
	return buf;
}

int mt_compute(const struct trace *t, const struct pl_result *run,
	       const struct pl_result *base, struct mt_run *out)
{
	double *all = NULL, *one = NULL, *x = NULL, *w = NULL, *in = NULL;
	double sum_all = 0;
	uint32_t total = 0, i, k, nj = 0, nin = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->worst_vm = -1;
	out->min = 0;
	for (i = 0; i < t->nr_vms; i++)
		total += t->vms[i].nr_iters;
	out->vm = calloc(t->nr_vms ? t->nr_vms : 1, sizeof(*out->vm));
	all = malloc((total ? total : 1) * sizeof(*all));
	one = malloc((total ? total : 1) * sizeof(*one));
	in = malloc((total ? total : 1) * sizeof(*in));
	x = calloc(t->nr_vms ? t->nr_vms : 1, sizeof(*x));
	w = calloc(t->nr_vms ? t->nr_vms : 1, sizeof(*w));
	if (!out->vm || !all || !one || !x || !w || !in)
		goto out;
	for (i = 0; i < t->nr_vms; i++) {
		struct mt_vm *m = &out->vm[i];
		double sum = 0, sum_base = 0;
		uint32_t n = 0;

		for (k = 0; k < t->vms[i].nr_iters; k++) {
			uint64_t a = run->vm[i].iter_ns[k];
			uint64_t b = base->vm[i].iter_ns[k];
			double s;

			if (a == PL_NO_SAMPLE || b == PL_NO_SAMPLE || !b)
				continue;
			s = (double)a / (double)b;
			one[n++] = s;
			all[out->n++] = s;
			sum_all += s;
			if (t->vms[i].peak <= t->vms[i].entitlement)
				in[nin++] = s;
			sum += (double)a;
			sum_base += (double)b;
			if (out->min == 0 || s < out->min)
				out->min = s;
		}
		m->n = n;
		if (!n)
			continue;
		m->mean = sum / sum_base;
		m->p99 = mt_quantile(one, n, 0.99);
		m->median = mt_quantile(one, n, 0.5);
		x[nj] = m->mean;
		w[nj++] = (double)t->vms[i].entitlement;
		if (out->worst_vm < 0 || m->p99 > out->worst_p99) {
			out->worst_p99 = m->p99;
			out->worst_vm = (int)i;
		}
	}
	out->jain = mt_jain(x, w, nj);
	out->mean = out->n ? sum_all / out->n : 0;
	out->p99 = mt_quantile(all, out->n, 0.99);
	out->median = mt_quantile(all, out->n, 0.5);
	out->p99_in_profile = mt_quantile(in, nin, 0.99);
	err = 0;
out:
	free(all);
	free(one);
	free(x);
	free(w);
	free(in);
	if (err)
		mt_free(out);
	return err;
}

void mt_free(struct mt_run *m)
{
	free(m->vm);
	memset(m, 0, sizeof(*m));
}
