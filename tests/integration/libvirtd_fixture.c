// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Shared fixture of the libvirtd integration tests: see libvirtd_fixture.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "libvirtd_fixture.h"

#define RUN_MAX_MS	60000	/* one virsh call on a slow shared host */
#define LVD_START_MS	60000

/* ---- processes -------------------------------------------------------- */

int64_t fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool fx_find_exe(const char *name, char *out, size_t len)
{
	static const char *const dirs[] = { "/usr/sbin", "/usr/bin", "/sbin",
					    "/bin", "/usr/local/sbin",
					    "/usr/local/bin" };
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(out, len, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return true;
	}
	out[0] = 0;
	return false;
}

int fx_run(char *const argv[], char *out, size_t outlen)
{
	int p[2], st = 0;
	bool timed_out = false;
	size_t len = 0;
	int64_t end = fx_now_ms() + RUN_MAX_MS;
	pid_t pid;

	if (out && outlen)
		out[0] = 0;
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		char buf[4096];
		ssize_t n;

		if (fx_now_ms() > end) {
			kill(pid, SIGKILL);
			timed_out = true;
			break;
		}
		if (poll(&pfd, 1, 500) <= 0)
			continue;
		n = read(p[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		/* keep the head; drain the rest so the child never blocks */
		if (out && len + 1 < outlen) {
			size_t k = (size_t)n < outlen - 1 - len ? (size_t)n :
				   outlen - 1 - len;

			memcpy(out + len, buf, k);
			len += k;
			out[len] = 0;
		}
	}
	close(p[0]);
	if (waitpid(pid, &st, 0) < 0 || timed_out)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int fx_runv(char *out, size_t outlen, char *const pre[], va_list ap)
{
	char *argv[32];
	int n = 0;

	while (pre[n] && n < 31) {
		argv[n] = pre[n];
		n++;
	}
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	argv[n] = NULL;
	return fx_run(argv, out, outlen);
}

/* Child side of fx_spawn(); returns only by _exit(). */
static void child_exec(const char *log, const char *cwd,
		       const struct fx_user *user, char *const argv[],
		       char *const envp[], pid_t parent)
{
	int fd;

	setpgid(0, 0);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, 0);
	if (user && user->uid != getuid() &&
	    (setgroups(0, NULL) || setgid(user->gid) || setuid(user->uid)))
		_exit(126);
	/* after setuid(), which clears it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	if (cwd && chdir(cwd))
		_exit(124);
	if (envp)
		execve(argv[0], argv, envp);
	else
		execv(argv[0], argv);
	_exit(127);
}

pid_t fx_spawn(const char *log, const char *cwd, const struct fx_user *user,
	       char *const argv[], char *const envp[])
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0)
		child_exec(log, cwd, user, argv, envp, parent);
	if (pid > 0)
		setpgid(pid, pid);	/* both sides: no race with kill(-pid) */
	return pid;
}

void fx_kill_group(pid_t *pid)
{
	int i, st;

	if (*pid <= 0)
		return;
	kill(-*pid, SIGTERM);
	for (i = 0; i < 100; i++) {	/* up to 10 s to exit cleanly */
		if (waitpid(*pid, &st, WNOHANG) == *pid)
			break;
		usleep(100000);
	}
	if (i == 100) {
		kill(-*pid, SIGKILL);
		waitpid(*pid, &st, 0);
	}
	kill(-*pid, SIGKILL);		/* helpers left in the group */
	*pid = 0;
}

/* ---- files ------------------------------------------------------------ */

int fx_write_file(const char *path, const char *text,
		  const struct fx_user *owner)
{
	FILE *f = fopen(path, "we");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && owner && chown(path, owner->uid, owner->gid))
		ret = -errno;
	return ret;
}

void fx_print_tail(const char *path)
{
	char buf[5001];
	FILE *f = fopen(path, "re");
	long sz;
	size_t n;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, sz > 5000 ? sz - 5000 : 0, SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	print_message("---- tail of %s ----\n%s\n----\n", path, buf);
}

int fx_tmpdir(char *out, size_t len, const char *prefix)
{
	if ((size_t)snprintf(out, len, "/tmp/%s.XXXXXX", prefix) >= len) {
		out[0] = 0;
		return -ENAMETOOLONG;
	}
	/* 0755: the daemons' user must reach its own directory below it */
	if (!mkdtemp(out) || chmod(out, 0755)) {
		out[0] = 0;
		return -errno;
	}
	return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int type,
			struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;	/* carry on: remove what can be removed */
}

void fx_tmpdir_remove(const char *dir)
{
	if (!dir[0])
		return;
	if (getenv("VGMEM_KEEP_TMP"))
		print_message("kept %s\n", dir);
	else
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- private libvirtds ------------------------------------------------ */

bool lvd_host_probe(struct lvd_host *h, char *why, size_t whylen)
{
	struct passwd *pw;

	if (!fx_find_exe("libvirtd", h->libvirtd, sizeof(h->libvirtd)) ||
	    !fx_find_exe("virsh", h->virsh, sizeof(h->virsh)) ||
	    !fx_find_exe("qemu-system-x86_64", h->qemu, sizeof(h->qemu))) {
		snprintf(why, whylen,
			 "libvirtd, virsh or qemu-system-x86_64 missing: install libvirt-daemon-system libvirt-clients qemu-system-x86 (scripts/install-deps.sh)");
		return false;
	}
	h->user.uid = getuid();
	h->user.gid = getgid();
	if (h->user.uid == 0) {
		/* a session daemon as root would be a privileged one */
		pw = getpwnam("nobody");
		if (!pw) {
			snprintf(why, whylen, "no user 'nobody' to run libvirtd as");
			return false;
		}
		h->user.uid = pw->pw_uid;
		h->user.gid = pw->pw_gid;
	}
	return true;
}

int lvd_virshv(const struct lvd *d, char *out, size_t outlen, va_list ap)
{
	char *const pre[] = { (char *)d->host->virsh, "-q", "-c",
			      (char *)d->uri, NULL };

	return fx_runv(out, outlen, pre, ap);
}

int lvd_virsh(const struct lvd *d, char *out, size_t outlen, ...)
{
	va_list ap;
	int ret;

	va_start(ap, outlen);
	ret = lvd_virshv(d, out, outlen, ap);
	va_end(ap);
	return ret;
}

/* "<dir>/config/libvirt/<name>" with "<key> = \"<val>\"\n", owned by it. */
static int write_conf(const struct lvd *d, const char *name, const char *key,
		      const char *val)
{
	char path[256], text[256];

	snprintf(path, sizeof(path), "%s/config/libvirt/%s", d->dir, name);
	snprintf(text, sizeof(text), "%s = \"%s\"\n", key, val);
	return fx_write_file(path, text, &d->host->user);
}

int lvd_start(struct lvd *d, const struct lvd_host *h, const char *dir,
	      const char *host_uuid, const char *migration_host)
{
	static const char *const sub[] = { "", "/run", "/config",
					   "/config/libvirt", "/cache", "/home" };
	static const char *const xdg[] = { "HOME=%s/home",
					   "XDG_RUNTIME_DIR=%s/run",
					   "XDG_CONFIG_HOME=%s/config",
					   "XDG_CACHE_HOME=%s/cache" };
	char env[5][200], *envp[6], *argv[2] = { (char *)h->libvirtd, NULL };
	char path[200], sock[200], out[512];
	int64_t end;
	size_t i;
	int ret;

	memset(d, 0, sizeof(*d));
	d->host = h;
	if ((size_t)snprintf(d->dir, sizeof(d->dir), "%s", dir) >= sizeof(d->dir))
		return -ENAMETOOLONG;
	snprintf(d->log, sizeof(d->log), "%s.log", d->dir);
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", d->dir, sub[i]);
		if (mkdir(path, 0700) || chown(path, h->user.uid, h->user.gid))
			return -errno;
	}
	if (host_uuid) {
		ret = write_conf(d, "libvirtd.conf", "host_uuid", host_uuid);
		if (ret)
			return ret;
	}
	/*
	 * qemu writes its output to a file of its own, not through virtlogd:
	 * a session daemon starts virtlogd on first use, and on a loaded
	 * machine a guest started at once could find no socket there yet
	 * (a migration failed so: "Failed to connect socket to
	 * .../run/libvirt/virtlogd-sock").
	 */
	{
		char text[384];

		snprintf(path, sizeof(path), "%s/config/libvirt/qemu.conf",
			 d->dir);
		snprintf(text, sizeof(text), "stdio_handler = \"file\"\n");
		if (migration_host && *migration_host)
			snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 "migration_host = \"%s\"\n", migration_host);
		ret = fx_write_file(path, text, &h->user);
		if (ret)
			return ret;
	}
	snprintf(env[0], sizeof(env[0]), "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
	for (i = 0; i < 4; i++)
		snprintf(env[i + 1], sizeof(env[i + 1]), xdg[i], d->dir);
	for (i = 0; i < 5; i++)
		envp[i] = env[i];
	envp[5] = NULL;
	snprintf(sock, sizeof(sock), "%s/run/libvirt/libvirt-sock", d->dir);
	snprintf(d->uri, sizeof(d->uri), "qemu+unix:///session?socket=%s", sock);

	d->pid = fx_spawn(d->log, d->dir, &h->user, argv, envp);
	if (d->pid < 0) {
		d->pid = 0;
		return -errno;
	}
	end = fx_now_ms() + LVD_START_MS;
	while (fx_now_ms() < end) {
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			d->pid = 0;
			fx_print_tail(d->log);
			return -ECHILD;
		}
		if (access(sock, F_OK) == 0 &&
		    lvd_virsh(d, out, sizeof(out), "uri", NULL) == 0)
			return 0;
		usleep(100000);
	}
	fx_print_tail(d->log);
	return -ETIMEDOUT;
}

/*
 * A guest whose daemon died keeps running (libvirt runs qemu outside the
 * daemon's process group): kill it by the pid file the daemon wrote, if
 * that pid is still a qemu (not a pid reused since).
 */
static void kill_left_guests(const struct lvd *d)
{
	char dir[256], path[600], comm[32];
	struct dirent *e;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/run/libvirt/qemu/run", d->dir);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((e = readdir(dp))) {
		size_t n = strlen(e->d_name);
		FILE *f;
		int pid = 0;

		if (n < 5 || strcmp(e->d_name + n - 4, ".pid"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
		if (pid <= 1 || pid == d->pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "qemu", 4))
			kill(pid, SIGKILL);
		fclose(f);
	}
	closedir(dp);
}

void lvd_stop(struct lvd *d)
{
	char out[4096];

	if (d->pid <= 0)
		return;
	if (lvd_virsh(d, out, sizeof(out), "list", "--name", NULL) == 0) {
		char *save = NULL, *name;

		for (name = strtok_r(out, "\n", &save); name;
		     name = strtok_r(NULL, "\n", &save)) {
			char o[512];

			if (*name)
				lvd_virsh(d, o, sizeof(o), "destroy", name, NULL);
		}
	}
	kill_left_guests(d);
	fx_kill_group(&d->pid);
}
