// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SVG plot writer (see svg.h). The drawing area is fixed (800 x 500 px);
 * the legend sits right of it so it never hides data. A log y axis maps
 * log10(y) linearly, so the ranges and ticks below work on the exponent.
 */
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W		800.0
#define H		500.0
#define ML		90.0	/* left margin: y tick labels and y label */
#define MR		190.0	/* right margin: legend */
#define MT		45.0	/* top: title */
#define MB		60.0	/* bottom: x tick labels and x label */

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

void svg_init(struct svg_plot *p, const char *title, const char *xlabel,
	      const char *ylabel)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->title, sizeof(p->title), "%s", title);
	snprintf(p->xlabel, sizeof(p->xlabel), "%s", xlabel);
	snprintf(p->ylabel, sizeof(p->ylabel), "%s", ylabel);
	p->y_from_zero = true;
}

int svg_add_series(struct svg_plot *p, const char *name, enum svg_style style)
{
	struct svg_series *s;

	if (p->nr_series >= SVG_MAX_SERIES)
		return -1;
	s = &p->series[p->nr_series];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->style = style;
	return (int)p->nr_series++;
}

int svg_add_point(struct svg_plot *p, int series, double x, double y)
{
	struct svg_series *s;

	if (series < 0 || (unsigned int)series >= p->nr_series)
		return -EINVAL;
	s = &p->series[series];
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		double *nx, *ny;

		nx = realloc(s->x, cap * sizeof(*nx));
		if (!nx)
			return -ENOMEM;
		s->x = nx;
		ny = realloc(s->y, cap * sizeof(*ny));
		if (!ny)
			return -ENOMEM;
		s->y = ny;
		s->cap = cap;
	}
	s->x[s->n] = x;
	s->y[s->n] = y;
	s->n++;
	return 0;
}

int svg_set_categories(struct svg_plot *p, const char *const *names,
		       unsigned int n)
{
	unsigned int i;

	if (n > SVG_MAX_CATS)
		return -E2BIG;
	for (i = 0; i < n; i++)
		snprintf(p->cats[i], sizeof(p->cats[i]), "%s", names[i]);
	p->nr_cats = n;
	return 0;
}

void svg_free(struct svg_plot *p)
{
	unsigned int i;

	for (i = 0; i < p->nr_series; i++) {
		free(p->series[i].x);
		free(p->series[i].y);
		p->series[i].x = p->series[i].y = NULL;
		p->series[i].n = p->series[i].cap = 0;
	}
}

double svg_nice_step(double range, int max_ticks)
{
	double raw, mag, norm;

	if (!(range > 0) || max_ticks < 1)
		return 1.0;
	raw = range / max_ticks;
	mag = pow(10.0, floor(log10(raw)));
	norm = raw / mag;
	if (norm <= 1.0)
		return mag;
	if (norm <= 2.0)
		return 2.0 * mag;
	if (norm <= 5.0)
		return 5.0 * mag;
	return 10.0 * mag;
}

/* Text is ours or a scenario's name, but escape it anyway: valid XML always. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

struct range {
	double lo, hi, step;
};

static void nice_range(struct range *r, double lo, double hi, bool from_zero)
{
	if (from_zero) {
		if (lo > 0)
			lo = 0;
		if (hi < 0)
			hi = 0;
	}
	if (!(hi > lo)) {	/* empty or flat: open a unit window around it */
		double pad = fabs(lo) > 0 ? fabs(lo) * 0.5 : 1.0;

		lo -= pad;
		hi += pad;
		if (from_zero && lo < 0 && lo + pad >= 0)
			lo = 0;
	}
	r->step = svg_nice_step(hi - lo, 8);
	r->lo = floor(lo / r->step) * r->step;
	r->hi = ceil(hi / r->step) * r->step;
	if (r->hi <= r->lo)
		r->hi = r->lo + r->step;
}

/* Tick labels: short, no trailing zeros, k/M/G for big values. */
static void fmt_tick(char *buf, size_t len, double v, double step)
{
	double a = fabs(v);

	if (fabs(v) < step * 1e-9)
		v = 0, a = 0;
	if (a >= 1e9 && step >= 1e8)
		snprintf(buf, len, "%gG", v / 1e9);
	else if (a >= 1e6 && step >= 1e5)
		snprintf(buf, len, "%gM", v / 1e6);
	else if (a >= 1e4 && step >= 1e3)
		snprintf(buf, len, "%gk", v / 1e3);
	else
		snprintf(buf, len, "%.6g", v);
}

static double map_x(const struct range *r, double x)
{
	return ML + (x - r->lo) / (r->hi - r->lo) * (W - ML - MR);
}

static double map_y(const struct range *r, double y)
{
	return H - MB - (y - r->lo) / (r->hi - r->lo) * (H - MT - MB);
}

/* A data value's place on the y axis: its exponent on a log axis. */
static double y_val(const struct svg_plot *p, double y)
{
	return p->y_log ? log10(y) : y;
}

static bool y_ok(const struct svg_plot *p, double y)
{
	return isfinite(y) && (!p->y_log || y > 0);
}


static void data_bounds(const struct svg_plot *p, double *xlo, double *xhi,
			double *ylo, double *yhi)
{
	unsigned int i;
	size_t j;

	*xlo = *ylo = INFINITY;
	*xhi = *yhi = -INFINITY;
	for (i = 0; i < p->nr_series; i++) {
		const struct svg_series *s = &p->series[i];

		for (j = 0; j < s->n; j++) {
			if (!isfinite(s->x[j]) || !y_ok(p, s->y[j]))
				continue;
			*xlo = fmin(*xlo, s->x[j]);
			*xhi = fmax(*xhi, s->x[j]);
			*ylo = fmin(*ylo, y_val(p, s->y[j]));
			*yhi = fmax(*yhi, y_val(p, s->y[j]));
		}
	}
	if (*xlo > *xhi)
		*xlo = *xhi = 0;
	if (*ylo > *yhi)
		*ylo = *yhi = 0;
}

static void draw_axes(FILE *f, const struct svg_plot *p,
		      const struct range *rx, const struct range *ry)
{
	char buf[32];
	double v;

	fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
		"fill='none' stroke='#333'/>\n",
		ML, MT, W - ML - MR, H - MT - MB);
	for (v = rx->lo; v <= rx->hi + rx->step * 1e-6; v += rx->step) {
		double x = map_x(rx, v);
		unsigned int c = (unsigned int)(v - rx->lo + 0.5);

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
			"stroke='#ddd'/>\n", x, MT, x, H - MB);
		if (p->nr_cats) {
			/* Names under the groups' middles, not the boundaries. */
			if (c >= p->nr_cats)
				continue;
			fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>",
				(x + map_x(rx, v + 1)) / 2, H - MB + 18);
			put_text(f, p->cats[c]);
			fputs("</text>\n", f);
			continue;
		}
		fmt_tick(buf, sizeof(buf), v, rx->step);
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
			"stroke='#333'/>\n", x, H - MB, x, H - MB + 5);
		fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>%s"
			"</text>\n", x, H - MB + 18, buf);
	}
	for (v = ry->lo; v <= ry->hi + ry->step * 1e-6; v += ry->step) {
		double y = map_y(ry, v);

		if (p->y_log) {
			fmt_tick(buf, sizeof(buf), pow(10.0, v), pow(10.0, v));
			/* 2x and 5x each decade, faint, when decades are few. */
			if (ry->hi - ry->lo <= 4 && v < ry->hi)
				for (int k = 0; k < 2; k++) {
					double ym = map_y(ry, v + log10(k ? 5.0 : 2.0));

					fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' "
						"y2='%.1f' stroke='#eee'/>\n",
						ML, ym, W - MR, ym);
				}
		} else {
			fmt_tick(buf, sizeof(buf), v, ry->step);
		}
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
			"stroke='#ddd'/>\n", ML, y, W - MR, y);
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
			"stroke='#333'/>\n", ML - 5, y, ML, y);
		fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='end'>%s"
			"</text>\n", ML - 8, y + 4, buf);
	}
	fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle' "
		"font-size='16'>", (ML + W - MR) / 2, MT - 18);
	put_text(f, p->title);
	fprintf(f, "</text>\n<text x='%.1f' y='%.1f' text-anchor='middle'>",
		(ML + W - MR) / 2, H - 15);
	put_text(f, p->xlabel);
	fprintf(f, "</text>\n<text transform='translate(%.1f,%.1f) rotate(-90)' "
		"text-anchor='middle'>", 20.0, (MT + H - MB) / 2);
	put_text(f, p->ylabel);
	fputs("</text>\n", f);
}

/*
 * Bars and marks of a category plot: bar series `bar` of `bars` sits in its
 * slot of each group; a mark spans the whole group.
 */
static void draw_cats(FILE *f, const struct svg_plot *p,
		      const struct svg_series *s, const char *color,
		      const struct range *rx, const struct range *ry,
		      unsigned int bar, unsigned int bars)
{
	double base = map_y(ry, p->y_log ? ry->lo : fmax(ry->lo, 0.0));
	size_t j;

	for (j = 0; j < s->n; j++) {
		double left, gw, y;

		if (!isfinite(s->x[j]) || !y_ok(p, s->y[j]))
			continue;
		left = map_x(rx, s->x[j]);
		gw = map_x(rx, s->x[j] + 1) - left;
		y = map_y(ry, y_val(p, s->y[j]));
		if (s->style == SVG_MARK) {
			fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
				"stroke='%s' stroke-width='2.5' "
				"stroke-dasharray='6,3'/>\n",
				left + gw * 0.04, y, left + gw * 0.96, y, color);
		} else {
			double bw = gw * 0.84 / (bars ? bars : 1);
			/* A value at the axis's base still shows: a 2 px stub. */
			double h = fmax(fabs(base - y), 2.0);

			fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' "
				"height='%.1f' fill='%s'/>\n",
				left + gw * 0.08 + bar * bw, fmin(y, base - h),
				bw * 0.92, h, color);
		}
	}
}

static void draw_series(FILE *f, const struct svg_plot *p,
			const struct svg_series *s, const char *color,
			const struct range *rx, const struct range *ry)
{
	size_t j;
	bool open = false;

	if (s->style == SVG_POINTS) {
		for (j = 0; j < s->n; j++) {
			if (!isfinite(s->x[j]) || !y_ok(p, s->y[j]))
				continue;
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.5' "
				"fill='%s' fill-opacity='0.6'/>\n",
				map_x(rx, s->x[j]), map_y(ry, y_val(p, s->y[j])),
				color);
		}
		return;
	}
	for (j = 0; j < s->n; j++) {
		if (!isfinite(s->x[j]) || !y_ok(p, s->y[j]))
			continue;
		if (!open) {
			fprintf(f, "<polyline fill='none' stroke='%s' "
				"stroke-width='2' points='", color);
			open = true;
		} else if (s->style == SVG_STEP) {
			fprintf(f, "%.1f,%.1f ", map_x(rx, s->x[j]),
				map_y(ry, y_val(p, s->y[j - 1])));
		}
		fprintf(f, "%.1f,%.1f ", map_x(rx, s->x[j]),
			map_y(ry, y_val(p, s->y[j])));
	}
	if (open)
		fputs("'/>\n", f);
}

static void draw_legend(FILE *f, const struct svg_plot *p)
{
	unsigned int i;

	for (i = 0; i < p->nr_series; i++) {
		const char *color = palette[i % (sizeof(palette) / sizeof(palette[0]))];
		double y = MT + 12 + 20.0 * i;
		double x = W - MR + 15;

		if (p->series[i].style == SVG_POINTS)
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'/>\n",
				x + 10, y - 4, color);
		else if (p->series[i].style == SVG_BARS)
			fprintf(f, "<rect x='%.1f' y='%.1f' width='20' height='10' "
				"fill='%s'/>\n", x, y - 9, color);
		else if (p->series[i].style == SVG_MARK)
			fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
				"stroke='%s' stroke-width='2.5' "
				"stroke-dasharray='6,3'/>\n",
				x, y - 4, x + 20, y - 4, color);
		else
			fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
				"stroke='%s' stroke-width='3'/>\n",
				x, y - 4, x + 20, y - 4, color);
		fprintf(f, "<text x='%.1f' y='%.1f'>", x + 28, y);
		put_text(f, p->series[i].name);
		fputs("</text>\n", f);
	}
}

int svg_write(const struct svg_plot *p, const char *path)
{
	double xlo, xhi, ylo, yhi;
	struct range rx, ry;
	unsigned int i, bar = 0, nbars = 0;
	FILE *f;
	int err;

	data_bounds(p, &xlo, &xhi, &ylo, &yhi);
	if (p->nr_cats) {
		/* Group c spans [c, c + 1): boundaries are the ticks. */
		rx.lo = 0;
		rx.hi = p->nr_cats;
		rx.step = 1;
	} else {
		nice_range(&rx, xlo, xhi, p->x_from_zero);
	}
	if (p->y_log) {
		/* Whole decades (exponents), at most about eight ticks. */
		ry.lo = floor(ylo);
		ry.hi = ceil(yhi);
		if (ry.hi <= ry.lo)
			ry.hi = ry.lo + 1;
		ry.step = ceil((ry.hi - ry.lo) / 8);
	} else {
		nice_range(&ry, ylo, yhi, p->y_from_zero);
	}

	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "<?xml version='1.0' encoding='UTF-8'?>\n"
		"<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' "
		"height='%.0f' viewBox='0 0 %.0f %.0f' font-family='sans-serif' "
		"font-size='12'>\n<rect width='100%%' height='100%%' "
		"fill='white'/>\n", W, H, W, H);
	draw_axes(f, p, &rx, &ry);
	for (i = 0; i < p->nr_series; i++)
		nbars += p->series[i].style == SVG_BARS;
	for (i = 0; i < p->nr_series; i++) {
		const char *color = palette[i % (sizeof(palette) / sizeof(palette[0]))];
		const struct svg_series *sr = &p->series[i];

		if (sr->style == SVG_BARS || sr->style == SVG_MARK) {
			/* Marks after the bars they stand against: on top. */
			if (sr->style == SVG_BARS)
				draw_cats(f, p, sr, color, &rx, &ry, bar++, nbars);
			continue;
		}
		draw_series(f, p, sr, color, &rx, &ry);
	}
	for (i = 0; i < p->nr_series; i++)
		if (p->series[i].style == SVG_MARK)
			draw_cats(f, p, &p->series[i],
				  palette[i % (sizeof(palette) / sizeof(palette[0]))],
				  &rx, &ry, 0, nbars);
	draw_legend(f, p);
	fputs("</svg>\n", f);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
