// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd logging (log.h). The whole line is formatted first and written with
 * one write(2), so lines from different threads never interleave.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static atomic_int mg_log_level = MG_LOG_INFO;

void mg_log_set_level(int level)
{
	atomic_store(&mg_log_level, level);
}

int mg_log_get_level(void)
{
	return atomic_load(&mg_log_level);
}

int mg_log_parse_level(const char *s, int *out)
{
	static const struct { const char *name; int level; } names[] = {
		{ "error", MG_LOG_ERR }, { "err", MG_LOG_ERR },
		{ "warn", MG_LOG_WARN }, { "warning", MG_LOG_WARN },
		{ "info", MG_LOG_INFO }, { "debug", MG_LOG_DEBUG },
		{ "3", MG_LOG_ERR }, { "4", MG_LOG_WARN },
		{ "6", MG_LOG_INFO }, { "7", MG_LOG_DEBUG },
	};
	size_t i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(s, names[i].name)) {
			*out = names[i].level;
			return 0;
		}
	}
	return -EINVAL;
}

void mg_log(int level, const char *fmt, ...)
{
	static const char *const tag[8] = {
		"emerg", "alert", "crit", "error", "warn", "notice", "info",
		"debug",
	};
	char line[1024];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n, m;

	if (level > atomic_load(&mg_log_level))
		return;
	if (level < 0 || level > 7)
		level = MG_LOG_ERR;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
		     "<%d>%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ mgmtd %s: ", level,
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, tag[level]);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		return;	/* nowhere left to report it */
}
