// SPDX-License-Identifier: MIT
/*
 * Share files over the PCI transport. The guest driver maps a file only
 * from a descriptor the process opened (VGMEM_GIOC_MAP_FD), so that a
 * process maps nothing it could not open; vgmem_map_file's (share id,
 * path) is turned into one here: the share's tag (VGMEM_CTRL_SHARES), the
 * virtio-fs mount of that tag (/proc/self/mountinfo: type virtiofs,
 * source the tag, root "/"), the file below it opened with openat2's
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (the host's own rule: no "..",
 * no symlink on the way), then MAP_FD.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "vgmem_priv.h"
#include "pci_priv.h"

#define MOUNTINFO	"/proc/self/mountinfo"

int vgmem_pci_map_fd(int devfd, int fd, uint64_t offset, uint64_t length,
		     uint32_t flags, uint64_t *va)
{
	struct vgmem_guest_map_fd m = {
		.fd = fd, .flags = flags, .offset = offset, .length = length,
	};
	int ret;

	ret = vgmem_pci_ioctl(devfd, VGMEM_GIOC_MAP_FD, &m);
	if (ret) {
		vgmem_pci_set_error("mapping file descriptor %d: %s%s", fd, strerror(-ret),
				    ret == -EXDEV ? " (not on a virtio-fs mount bound to this vGPU's share: vgmem-guest share bind)" :
				    ret == -EACCES ? " (the file's open mode or the share does not allow it)" : "");
		return ret;
	}
	*va = m.va;
	return 0;
}

/* The tag of share id, from the host's table; -ENOENT if none. */
static int share_tag(int devfd, uint32_t id, char tag[VGMEM_SHARE_TAG_SIZE])
{
	struct vgmem_ctrl c;
	uint32_t idx = 0, i;
	int ret;

	for (;;) {
		memset(&c, 0, sizeof(c));
		c.op = VGMEM_CTRL_SHARES;
		c.shares.index = idx;
		ret = vgmem_pci_ioctl(devfd, VGMEM_GIOC_CTRL, &c);
		if (!ret)
			ret = c.status;
		if (ret)
			return ret;
		if (c.shares.count > VGMEM_CTRL_SHARES_PER_CMD)
			return -EIO;
		for (i = 0; i < c.shares.count; i++) {
			if (c.shares.e[i].share_id != id)
				continue;
			memcpy(tag, c.shares.e[i].tag, VGMEM_SHARE_TAG_SIZE);
			tag[VGMEM_SHARE_TAG_SIZE - 1] = 0;
			return tag[0] ? 0 : -ENOENT;
		}
		if (!c.shares.count || idx + c.shares.count >= c.shares.total)
			return -ENOENT;
		idx += c.shares.count;
	}
}

/* mountinfo's octal escapes (\040 for ' ', ...) undone in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

/*
 * The mount point of a whole-share virtio-fs mount with source tag, into
 * dir (malloc'd); -ENOENT if there is none.
 */
static int tag_mount(const char *tag, char **dir)
{
	char *line = NULL, *f[5], *sep, *save, *fstype, *source;
	size_t cap = 0;
	int i, ret = -ENOENT;
	FILE *mi;

	mi = fopen(MOUNTINFO, "re");
	if (!mi)
		return -errno;
	while (ret == -ENOENT && getline(&line, &cap, mi) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SOURCE SUPER */
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = 0;
		f[0] = strtok_r(line, " ", &save);
		for (i = 1; i < 5 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &save);
		fstype = strtok_r(sep + 3, " ", &save);
		source = strtok_r(NULL, " \n", &save);
		if (!f[0] || !f[4] || !fstype || !source || strcmp(fstype, "virtiofs"))
			continue;
		unescape(source);
		unescape(f[3]);
		if (strcmp(source, tag) || strcmp(f[3], "/"))
			continue;
		unescape(f[4]);
		*dir = strdup(f[4]);
		ret = *dir ? 0 : -ENOMEM;
	}
	free(line);
	fclose(mi);
	return ret;
}

/* path below dir, opened as the host would walk it. */
static int open_beneath(const char *dir, const char *path, uint32_t flags)
{
	struct open_how how = {
		.flags = (flags == VGMEM_FILE_RW ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	int dfd, fd, err;

	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	err = errno;
	close(dfd);
	if (fd >= 0)
		return fd;
	/* Leaving the share or meeting a symlink: the host's -EACCES. */
	return err == ELOOP || err == EXDEV ? -EACCES : err == EISDIR ? -EINVAL : -err;
}

void vgmem_pci_map_path(int devfd, struct vgmem_ctrl *cmd)
{
	struct vgmem_ctrl_file_map *fm = &cmd->file_map;
	char tag[VGMEM_SHARE_TAG_SIZE], *dir = NULL;
	uint64_t va = 0;
	int fd, ret;

	if (fm->flags != VGMEM_FILE_RO && fm->flags != VGMEM_FILE_RW) {
		cmd->status = -EINVAL;
		return;
	}
	ret = share_tag(devfd, fm->share_id, tag);
	if (ret) {
		vgmem_pci_set_error("share %u: %s%s", fm->share_id, strerror(-ret),
				    ret == -ENOENT ? " (no share with that id, or it has no virtio-fs tag)" : "");
		cmd->status = ret;
		return;
	}
	ret = tag_mount(tag, &dir);
	if (ret) {
		vgmem_pci_set_error("share %u: no virtio-fs mount of tag %s in %s (%s)",
				    fm->share_id, tag, MOUNTINFO, strerror(-ret));
		cmd->status = ret;
		return;
	}
	fd = open_beneath(dir, fm->path, fm->flags);
	if (fd < 0) {
		vgmem_pci_set_error("%s/%s: %s", dir, fm->path, strerror(-fd));
		free(dir);
		cmd->status = fd;
		return;
	}
	free(dir);
	cmd->status = vgmem_pci_map_fd(devfd, fd, fm->offset, fm->length,
				       fm->flags, &va);
	if (!cmd->status)
		fm->va = va;
	close(fd);
}
