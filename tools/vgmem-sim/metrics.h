/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What compare and cloud-day compute from a run and its baseline (the same
 * trace with unlimited VRAM): per-iteration slowdowns, their median and
 * p99 per VM and pooled over all VMs, and Jain's fairness index over the
 * VMs' slowdowns weighted by entitlement.
 */
#ifndef VGSIM_METRICS_H
#define VGSIM_METRICS_H

#include "play.h"

struct mt_vm {
	uint32_t n;		/* iterations measured in both runs */
	double median, p99;	/* of the per-iteration slowdowns */
	double mean;		/* sum of device time / sum of the baseline's */
};

struct mt_run {
	struct mt_vm *vm;	/* [trace nr_vms] */
	uint32_t n;		/* iterations of all VMs */
	double median, p99;	/* pooled over every VM's iterations */
	double mean;		/* of the same per-iteration slowdowns */
	/*
	 * p99 pooled over the VMs that never hold more than their profile
	 * (entitlement) in the trace: what a profile promises. A VM that
	 * bursts past it is best effort (cloud-day's SLO).
	 */
	double p99_in_profile;
	double min;		/* smallest slowdown seen (>= 1 up to rounding) */
	double jain;		/* weighted by entitlement, over VMs with n > 0 */
	double worst_p99;	/* the worst-off VM (the "victim") */
	int worst_vm;		/* its index, -1 if no VM has samples */
};

/* Nearest-rank quantile of v[0..n) (sorts v); 0 for n == 0. */
double mt_quantile(double *v, uint32_t n, double q);
/* (sum w x)^2 / (sum w * sum w x^2); 1 for n == 0. */
double mt_jain(const double *x, const double *w, uint32_t n);
/*
 * a / b for a table, into buf: "-" when both are 0 (nothing to compare),
 * "inf" when only b is, else two decimals. Returns buf.
 */
const char *mt_ratio_str(double a, double b, char *buf, size_t len);
/* 0 or -ENOMEM. */
int mt_compute(const struct trace *t, const struct pl_result *run,
	       const struct pl_result *base, struct mt_run *out);
void mt_free(struct mt_run *m);

#endif /* VGSIM_METRICS_H */
