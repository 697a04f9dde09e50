/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A small SVG plot writer for vgmem-sim: line and scatter series on linear
 * axes with "nice" ticks, axis labels, a title and a legend; or, with
 * named categories on the x axis, grouped bars per category with
 * reference marks (an optimum to hold the bars against); a log y axis for
 * values that span decades. Enough to look at a run without leaving the
 * terminal for a plotting package; the CSV next to each plot holds the
 * same numbers for anything fancier.
 */
#ifndef VGSIM_SVG_H
#define VGSIM_SVG_H

#include <stddef.h>
#include <stdbool.h>

enum svg_style {
	SVG_LINE,	/* polyline through the points in order */
	SVG_STEP,	/* staircase: value holds until the next x */
	SVG_POINTS,	/* scatter: one marker per point */
	/*
	 * With categories (svg_set_categories): x is a category's index.
	 * SVG_BARS: one bar per point, the bar series of a category side by
	 * side; SVG_MARK: a dashed line across the category's group at y.
	 */
	SVG_BARS,
	SVG_MARK,
};

struct svg_series {
	char name[64];
	enum svg_style style;
	size_t n, cap;
	double *x, *y;
};

#define SVG_MAX_SERIES 16
#define SVG_MAX_CATS	32

struct svg_plot {
	char title[128];
	char xlabel[64];
	char ylabel[64];
	bool y_from_zero;	/* include 0 in the y range */
	bool x_from_zero;
	/* log10 y axis with decade ticks; points with y <= 0 are not drawn. */
	bool y_log;
	unsigned int nr_cats;	/* 0: a numeric x axis */
	char cats[SVG_MAX_CATS][24];
	unsigned int nr_series;
	struct svg_series series[SVG_MAX_SERIES];
};

void svg_init(struct svg_plot *p, const char *title, const char *xlabel,
	      const char *ylabel);
/* Returns the series index, or -1 if the plot has SVG_MAX_SERIES already. */
int svg_add_series(struct svg_plot *p, const char *name, enum svg_style style);
/* Returns 0 or -ENOMEM. */
int svg_add_point(struct svg_plot *p, int series, double x, double y);
/*
 * Name the x axis's categories (x = 0 .. n - 1), for SVG_BARS and SVG_MARK
 * series: -E2BIG beyond SVG_MAX_CATS.
 */
int svg_set_categories(struct svg_plot *p, const char *const *names,
		       unsigned int n);
/* Writes the plot; returns 0 or -errno. */
int svg_write(const struct svg_plot *p, const char *path);
void svg_free(struct svg_plot *p);

/* Ticks at 1, 2 or 5 times a power of ten covering [lo, hi] (exposed for tests). */
double svg_nice_step(double range, int max_ticks);

#endif /* VGSIM_SVG_H */
