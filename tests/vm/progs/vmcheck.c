// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The check programs' output (vmcheck.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "vmcheck.h"

void fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

void ok(const char *fmt, ...)
{
	va_list ap;

	printf("ok: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}
