/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared fixture of the integration tests that need a real libvirtd
 * (test_mgmtd_libvirtd, test_mgmtd_migrate): child processes, temporary
 * directories, and private session-mode libvirtds.
 *
 * A private libvirtd runs in session mode as an unprivileged user (nobody
 * when the test runs as root) with HOME and XDG_* in a directory of its
 * own, so its sockets, configuration, qemu state and domains are all
 * there and the host's libvirt is never touched. It is reached through
 * qemu+unix:///session?socket=<dir>/run/libvirt/libvirt-sock.
 *
 * Every daemon runs in its own process group with a parent-death signal,
 * so a test's teardown (and its signal handler, with kill(-pid)) can end
 * it and all it started; guests are run by libvirt outside that group and
 * are stopped by lvd_stop().
 *
 * Plain libc and cmocka's print_message() only: this file is linked into
 * every integration program (the Makefile's INTEG_SUPPORT).
 */
#ifndef VGMEM_TESTS_LIBVIRTD_FIXTURE_H
#define VGMEM_TESTS_LIBVIRTD_FIXTURE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Who a child process runs as. */
struct fx_user {
	uid_t uid;
	gid_t gid;
};

/* CLOCK_MONOTONIC in milliseconds. */
int64_t fx_now_ms(void);

/* name in the usual bin/sbin directories; its path in out. */
bool fx_find_exe(const char *name, char *out, size_t len);

/*
 * Runs argv (argv[0] a path) to completion with stdout and stderr in out
 * (may be NULL); its exit status, or -1 if it could not run or took over
 * 60 s. fx_runv: the fixed leading arguments pre (NULL-ended), then the
 * NULL-ended rest from ap.
 */
int fx_run(char *const argv[], char *out, size_t outlen);
int fx_runv(char *out, size_t outlen, char *const pre[], va_list ap);

/*
 * Starts argv in a process group of its own with stdout and stderr
 * appended to log, stdin from /dev/null, in cwd (NULL: ours), as user (NULL:
 * as we are), killed with its parent; envp NULL keeps our environment.
 * Its pid, or -1 with errno set.
 */
pid_t fx_spawn(const char *log, const char *cwd, const struct fx_user *user,
	       char *const argv[], char *const envp[]);

/*
 * SIGTERMs the process group *pid, waits up to 10 s for its leader, then
 * SIGKILLs what is left of the group; *pid becomes 0. No-op if *pid <= 0.
 */
void fx_kill_group(pid_t *pid);

/* Writes text to path, owned by owner (NULL: us); 0 or -errno. */
int fx_write_file(const char *path, const char *text,
		  const struct fx_user *owner);

/* Prints the last few KiB of a log file through cmocka. */
void fx_print_tail(const char *path);

/*
 * A fresh world-readable directory /tmp/<prefix>.XXXXXX in out; 0 or -errno.
 * fx_tmpdir_remove removes it with everything below, unless VGMEM_KEEP_TMP
 * is set (then it says where it is kept); no-op on "".
 */
int fx_tmpdir(char *out, size_t len, const char *prefix);
void fx_tmpdir_remove(const char *dir);

/*
 * In a case that needs what the group setup could not provide: skip it,
 * saying why, if why (the setup's reason) is set. For cmocka tests.
 */
#define FX_SKIP_IF(why)						\
	do {							\
		if ((why)[0]) {					\
			print_message("skipped: %s\n", (why));	\
			skip();					\
		}						\
	} while (0)

/* ---- private libvirtds ------------------------------------------------ */

/* The programs a private libvirtd needs, and who runs it. */
struct lvd_host {
	char libvirtd[256], virsh[256], qemu[256];
	struct fx_user user;
};

/*
 * Finds libvirtd, virsh and qemu-system-x86_64, and the user the daemons
 * run as (nobody when we are root, else ourselves). False with the reason
 * the libvirtd cases must be skipped in why.
 */
bool lvd_host_probe(struct lvd_host *h, char *why, size_t whylen);

struct lvd {
	const struct lvd_host *host;
	char dir[160];		/* HOME, XDG_* below it */
	char log[176];		/* <dir>.log: stdout and stderr */
	char uri[256];		/* qemu+unix:///session?socket=... */
	pid_t pid;		/* its process group; 0 when not running */
};

/*
 * Creates dir (it must not exist) with the daemon's directories, writes
 * libvirtd.conf with host_uuid (NULL: libvirt's own, from the host) and
 * qemu.conf with migration_host (NULL or "": none), starts libvirtd and
 * waits (up to 60 s) until virsh reaches it. 0, or -errno with the tail
 * of its log printed.
 */
int lvd_start(struct lvd *d, const struct lvd_host *h, const char *dir,
	      const char *host_uuid, const char *migration_host);

/*
 * Destroys its running guests, kills a guest a dead daemon left behind
 * (by the pid files in its qemu run directory), then stops the daemon.
 * No-op if it is not running.
 */
void lvd_stop(struct lvd *d);

/* virsh -q -c <its uri> args... (NULL-ended); exit status, output in out. */
int lvd_virsh(const struct lvd *d, char *out, size_t outlen, ...);
int lvd_virshv(const struct lvd *d, char *out, size_t outlen, va_list ap);

#endif
