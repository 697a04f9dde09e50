// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd: the vgmem management daemon.
 *
 * Init ladder: configuration -> model (state database, backend, config
 * VMs, timer) -> libvirt -> REST -> READY=1 to systemd. Teardown runs the
 * ladder backwards on SIGTERM or SIGINT: the REST server stops taking
 * requests first, then libvirt events stop, then the model (which flushes
 * its events) and the backend. Signals are blocked in every thread and
 * taken synchronously by the main thread with sigwait(), so no handler
 * runs in the middle of a lock.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "mgmtd.h"
#include "log.h"

/* The systemd notification protocol, without linking libsystemd. */
static void sd_notify_msg(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;	/* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   len) < 0)
		mg_dbg("sd_notify: %s", strerror(errno));
	close(fd);
}

/* The state database's directory, if missing (systemd's StateDirectory
 * normally makes it). */
static void make_state_dir(const char *db)
{
	char dir[4096], *slash;

	if (!db || strlen(db) >= sizeof(dir) || !strcmp(db, ":memory:"))
		return;
	strcpy(dir, db);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = 0;
	if (mkdir(dir, 0750) && errno != EEXIST)
		mg_warn("cannot create %s: %s", dir, strerror(errno));
}

int main(int argc, char **argv)
{
	struct mg_libvirt *lv = NULL;
	struct mg_rest *rest = NULL;
	struct mg_config cfg;
	char err[512] = "", why[512] = "";
	struct mg *mg = NULL;
	sigset_t sigs;
	int ret, sig, exit_code = 1;

	if (mg_config_defaults(&cfg)) {
		fprintf(stderr, "mgmtd: out of memory\n");
		return 1;
	}
	ret = mg_config_parse_args(&cfg, argc, argv, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "mgmtd: %s\n", err[0] ? err : strerror(-ret));
		mg_config_free(&cfg);
		return 2;
	}
	if (cfg.help) {
		mg_config_usage(stdout, argv[0]);
		mg_config_free(&cfg);
		return 0;
	}
	if (cfg.version) {
		printf("mgmtd %s\n", MG_VERSION);
		mg_config_free(&cfg);
		return 0;
	}
	mg_log_set_level(cfg.log_level);

	/* Before any thread exists, so every thread inherits the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	make_state_dir(cfg.state_db);
	ret = mg_create(&cfg, &mg);
	if (ret) {
		/* -EBUSY: the state database is another mgmtd's (logged) */
		mg_err("cannot start the model: %s", ret == -EBUSY ?
		       "the state database is in use by another mgmtd" :
		       strerror(-ret));
		goto out_free_config;
	}
	if (cfg.libvirt_uri && *cfg.libvirt_uri &&
	    strcmp(cfg.libvirt_uri, "none")) {
		ret = mg_libvirt_start(mg, cfg.libvirt_uri, &lv);
		if (ret) {
			/* VMs from the config and the API still work. */
			mg_warn("libvirt %s unavailable (%s): running without it",
				cfg.libvirt_uri, strerror(-ret));
			mg_emit(mg, "error", "",
				"{\"op\":\"libvirt\",\"reason\":\"cannot connect\"}");
			lv = NULL;
		}
	}
	ret = mg_rest_start(mg, &cfg, &rest, why, sizeof(why));
	if (ret) {
		mg_err("cannot start the REST server: %s",
		       why[0] ? why : strerror(-ret));
		/* A setting that cannot work exits 2, as a bad option does. */
		if (ret == -EINVAL)
			exit_code = 2;
		goto out_stop_libvirt;
	}
	mg_rest_where(rest, &cfg, why, sizeof(why));
	mg_info("mgmtd %s ready, serving REST on %s", MG_VERSION, why);
	sd_notify_msg("READY=1\nSTATUS=serving");

	for (;;) {
		if (sigwait(&sigs, &sig))
			continue;
		if (sig == SIGHUP) {
			mg_info("SIGHUP: settings change through the API; restart to re-read the config file");
			continue;
		}
		mg_info("%s: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	}
	sd_notify_msg("STOPPING=1");
	mg_rest_stop(rest);
	ret = 0;
out_stop_libvirt:
	mg_libvirt_stop(lv);
	mg_destroy(mg);
out_free_config:
	mg_config_free(&cfg);
	return ret ? exit_code : 0;
}
