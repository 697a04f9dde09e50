// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Directory creation for --out. Kept apart from the files that include the
 * vgmem headers: <sys/stat.h> pulls in <linux/types.h>, whose __u64 differs
 * from the one include/uapi/vgmem.h defines for userspace.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"

int vs_mkdir_p(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);
	struct stat st;
	size_t i;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return 0;
}
