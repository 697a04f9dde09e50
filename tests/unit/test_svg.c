// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmem-sim's SVG writer (tools/vgmem-sim/svg.c): what a plot file holds.
 * Category plots draw one bar per bar series and VM, side by side in the
 * VM's group, a dashed mark per reference point and the categories' names
 * under their groups; a log axis has decade ticks and leaves out values it
 * cannot place (y <= 0); a value at the axis's base still shows as a stub.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>
#include "tools/vgmem-sim/svg.h"

static char *write_read(const struct svg_plot *p)
{
	char path[] = "/tmp/test_svg.XXXXXX";
	char *buf;
	long n;
	FILE *f;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(svg_write(p, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(path);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

static void test_grouped_bars_and_marks(void **state)
{
	static const char *const vms[] = { "train1", "infer1", "idle1" };
	struct svg_plot p;
	int a, b, o;
	char *svg;

	(void)state;
	svg_init(&p, "p99", "VM", "slowdown");
	assert_int_equal(svg_set_categories(&p, vms, 3), 0);
	a = svg_add_series(&p, "vgmem:policy=random", SVG_BARS);
	b = svg_add_series(&p, "vgmem:policy=cold", SVG_BARS);
	o = svg_add_series(&p, "oracle", SVG_MARK);
	assert_int_equal(svg_add_point(&p, a, 0, 12.0), 0);
	assert_int_equal(svg_add_point(&p, a, 1, 4.0), 0);
	assert_int_equal(svg_add_point(&p, b, 0, 6.0), 0);
	assert_int_equal(svg_add_point(&p, b, 1, 1.0), 0);	/* at the base */
	assert_int_equal(svg_add_point(&p, o, 0, 2.0), 0);
	assert_int_equal(svg_add_point(&p, o, 1, 1.5), 0);
	p.y_log = true;
	svg = write_read(&p);
	/* 4 bars, 2 marks (+1 legend swatch of each kind), the VMs' names. */
	assert_int_equal(count(svg, "<rect x="), 4 + 2 + 1);
	assert_int_equal(count(svg, "stroke-dasharray"), 2 + 1);
	assert_non_null(strstr(svg, ">train1</text>"));
	assert_non_null(strstr(svg, ">idle1</text>"));
	/* Decades 1, 10, 100 on the log axis; no linear ticks like 2.5. */
	assert_non_null(strstr(svg, ">1</text>"));
	assert_non_null(strstr(svg, ">10</text>"));
	assert_non_null(strstr(svg, ">100</text>"));
	assert_null(strstr(svg, ">2.5</text>"));
	/* The bar at the base is a 2 px stub, not nothing. */
	assert_non_null(strstr(svg, "height='2.0'"));
	free(svg);
	svg_free(&p);
	assert_int_equal(svg_set_categories(&p, vms, SVG_MAX_CATS + 1), -E2BIG);
}

static void test_log_axis_skips_nonpositive(void **state)
{
	struct svg_plot p;
	char *svg;
	int s;

	(void)state;
	svg_init(&p, "t", "x", "y");
	p.y_log = true;
	s = svg_add_series(&p, "s", SVG_POINTS);
	assert_int_equal(svg_add_point(&p, s, 1, 0.0), 0);
	assert_int_equal(svg_add_point(&p, s, 2, -3.0), 0);
	assert_int_equal(svg_add_point(&p, s, 3, 50.0), 0);
	svg = write_read(&p);
	assert_int_equal(count(svg, "<circle cx="), 1 + 1);	/* + legend */
	assert_null(strstr(svg, "nan"));
	assert_null(strstr(svg, "inf"));
	free(svg);
	svg_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grouped_bars_and_marks),
		cmocka_unit_test(test_log_axis_skips_nonpositive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
