/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd logging: one line per message on stderr, with a syslog-style
 * "<N>" priority prefix that journald understands when stderr is the
 * journal (systemd's StandardError=journal), so levels survive there.
 */
#ifndef VGMEM_MGMTD_LOG_H
#define VGMEM_MGMTD_LOG_H

enum mg_log_level {
	MG_LOG_ERR = 3,
	MG_LOG_WARN = 4,
	MG_LOG_INFO = 6,
	MG_LOG_DEBUG = 7,
};

void mg_log_set_level(int level);
int mg_log_get_level(void);
/* "error", "warn", "info", "debug" (or 3, 4, 6, 7); -EINVAL. */
int mg_log_parse_level(const char *s, int *out);
void mg_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define mg_err(...)	mg_log(MG_LOG_ERR, __VA_ARGS__)
#define mg_warn(...)	mg_log(MG_LOG_WARN, __VA_ARGS__)
#define mg_info(...)	mg_log(MG_LOG_INFO, __VA_ARGS__)
#define mg_dbg(...)	mg_log(MG_LOG_DEBUG, __VA_ARGS__)

#endif /* VGMEM_MGMTD_LOG_H */
