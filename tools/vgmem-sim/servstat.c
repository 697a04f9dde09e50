// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-request statistics of a replay (servstat.h), from the player's
 * per-iteration device times and the load's map of which iterations belong
 * to which step and request.
 */
#include "servstat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static bool has(const struct pl_result *r, uint16_t vm, uint32_t it)
{
	return r->vm[vm].iter_ns[it] != PL_NO_SAMPLE;
}

/* Step times of every VM and step, in both runs (measured in both only). */
static void step_times(const struct sv_load *l, const struct pl_result *run,
		       const struct pl_result *base, double *a, double *b)
{
	uint32_t s, v, i, n = l->t.nr_vms;

	for (s = 0; s < l->t.steps; s++)
		for (v = 0; v < n; v++) {
			const struct sv_step *st = &l->step[(size_t)s * n + v];
			double x = 0, y = 0;

			for (i = st->it_first; i < st->it_first + st->it_n; i++) {
				if (!has(run, (uint16_t)v, i) ||
				    !has(base, (uint16_t)v, i))
					continue;
				x += (double)run->vm[v].iter_ns[i];
				y += (double)base->vm[v].iter_ns[i];
			}
			a[(size_t)s * n + v] = x;
			b[(size_t)s * n + v] = y;
		}
}

/* Whether every iteration of the request, and its VM's weights pass, ran. */
static bool served(const struct sv_load *l, const struct sv_req *r,
		   const struct pl_result *run)
{
	uint32_t k;

	for (k = 0; k < r->nr_steps; k++) {
		const struct sv_step *st =
			&l->step[(size_t)(r->step + k) * l->t.nr_vms + r->vm];

		if (!has(run, r->vm, l->req_it[r->it + k]) ||
		    !has(run, r->vm, st->it_first))
			return false;
	}
	return true;
}

static double mean_of(const double *v, uint32_t n)
{
	double s = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

int ss_compute(const struct sv_load *l, const struct pl_result *run,
	       const struct pl_result *base, struct ss_run *out)
{
	size_t cells = (size_t)l->t.steps * l->t.nr_vms;
	double *a = malloc(cells * sizeof(*a)), *b = malloc(cells * sizeof(*b));
	double *ttft = malloc((l->nr_req + 1) * sizeof(*ttft));
	double *tok = malloc((l->nr_req + 1) * sizeof(*tok));
	double x[SV_MAX_VMS], w[SV_MAX_VMS];
	uint32_t i, v, nj = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!a || !b || !ttft || !tok)
		goto out;
	step_times(l, run, base, a, b);
	for (i = 0; i < l->nr_req; i++) {
		const struct sv_req *r = &l->req[i];
		size_t c = (size_t)r->step * l->t.nr_vms + r->vm;
		double sa = 0, sb = 0;
		uint32_t k;

		if (!run->vm[r->vm].admitted)
			continue;
		out->placed++;
		if (!served(l, r, run)) {
			out->failed++;
			continue;
		}
		if (b[c] > 0)
			ttft[out->n_ttft++] = a[c] / b[c];
		/* Every step of it generates tokens, its first included. */
		for (k = 0; k < r->nr_steps; k++) {
			sa += a[c + (size_t)k * l->t.nr_vms];
			sb += b[c + (size_t)k * l->t.nr_vms];
		}
		if (sb > 0)
			tok[out->n_tok++] = sa / sb;
	}
	out->ttft_mean = mean_of(ttft, out->n_ttft);
	out->tok_mean = mean_of(tok, out->n_tok);
	out->ttft_p50 = mt_quantile(ttft, out->n_ttft, 0.5);
	out->ttft_p99 = mt_quantile(ttft, out->n_ttft, 0.99);
	out->tok_p50 = mt_quantile(tok, out->n_tok, 0.5);
	out->tok_p99 = mt_quantile(tok, out->n_tok, 0.99);
	out->p99 = out->ttft_p99 > out->tok_p99 ? out->ttft_p99 : out->tok_p99;
	for (v = 0; v < l->t.nr_vms; v++) {
		double sa = 0, sb = 0;
		uint32_t s;

		for (s = 0; s < l->t.steps; s++) {
			sa += a[(size_t)s * l->t.nr_vms + v];
			sb += b[(size_t)s * l->t.nr_vms + v];
		}
		out->vm_mean[v] = sb > 0 ? sa / sb : 0;
		if (run->vm[v].admitted && sb > 0) {
			x[nj] = out->vm_mean[v];
			w[nj++] = (double)l->t.vms[v].entitlement;
		}
	}
	out->jain = mt_jain(x, w, nj);
	err = 0;
out:
	free(a);
	free(b);
	free(ttft);
	free(tok);
	return err;
}
