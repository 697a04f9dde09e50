/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The REST path of a line of <uapi/vgmem_stats.h> ("faults" at the top of
 * the object, "relocations.out_chunks" in its object "relocations"), for
 * the programs that write the members and those that read them.
 */
#ifndef VGMEM_LIB_UTIL_STAT_PATH_H
#define VGMEM_LIB_UTIL_STAT_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The length of the group ("relocations"); 0 at the top of the object. */
static inline size_t vg_stat_group_len(const char *path)
{
	const char *dot = strchr(path, '.');

	return dot ? (size_t)(dot - path) : 0;
}

/* The member's key in its group ("out_chunks"). */
static inline const char *vg_stat_key(const char *path)
{
	size_t g = vg_stat_group_len(path);

	return g ? path + g + 1 : path;
}

/* Whether two paths are in one group (or both at the top). */
static inline bool vg_stat_same_group(const char *a, const char *b)
{
	size_t g = vg_stat_group_len(a);

	return g == vg_stat_group_len(b) && !memcmp(a, b, g);
}

/* Whether a path is in the group named group ("relocations"). */
static inline bool vg_stat_in_group(const char *path, const char *group)
{
	size_t g = vg_stat_group_len(path);

	return g && g == strlen(group) && !memcmp(path, group, g);
}

#endif /* VGMEM_LIB_UTIL_STAT_PATH_H */
