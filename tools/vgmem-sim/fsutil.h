/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef VGSIM_FSUTIL_H
#define VGSIM_FSUTIL_H

/* mkdir -p; 0 or -errno (-ENOTDIR if path exists and is not a directory). */
int vs_mkdir_p(const char *path);

#endif /* VGSIM_FSUTIL_H */
