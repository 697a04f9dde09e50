// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Netlink reply parsing of libvgnl (lib/vgnl/nl_parse.c), what
 * vgmem-nl and mgmtd's netlink backend run on every message the kernel
 * sends: byte 0 picks the parser (GPU, VM, event, LRC, a VM's shares), the
 * rest is the message, its nlmsg_len set to its size as the socket layer
 * guarantees, in a buffer of exactly that size.
 *
 * Invariants: 0 or -EINVAL (for shares also -ENOMEM, and -EPERM when the
 * reply has no table); on success every string
 * is NUL-terminated within its field, an event is one of the three event
 * commands, the shares are at most VGMEM_SHARES_MAX with a path, and a
 * second parse of the same bytes gives the same result, byte for byte.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/msg.h>
#include "lib/vgnl/vgnl.h"
#include "fuzz_util.h"

/* shares: also -ENOMEM, and -EPERM for a reply without the table (the
 * module sends it to administrators only). */
static void check_ret(const char *what, int ret, bool shares)
{
	if (ret && ret != -EINVAL && !(shares && (ret == -ENOMEM || ret == -EPERM)))
		fuzz_die("%s returned %d", what, ret);
}

#define TWICE(type, fn, check) do {					\
		type a, b;						\
		int r1, r2;						\
		memset(&a, 0x11, sizeof(a));				\
		memset(&b, 0x11, sizeof(b));				\
		r1 = fn(nlh, &a);					\
		r2 = fn(nlh, &b);					\
		check_ret(#fn, r1, false);				\
		if (r1 != r2 || (!r1 && memcmp(&a, &b, sizeof(a))))	\
			fuzz_die(#fn ": two parses differ");		\
		if (!r1) { check; }					\
	} while (0)

static void shares(const struct nlmsghdr *nlh)
{
	struct vgnl_share *s = NULL, *t = NULL;
	size_t n = 0, m = 0, i;
	int r1, r2;

	r1 = vgnl_parse_vm_shares(nlh, &s, &n);
	r2 = vgnl_parse_vm_shares(nlh, &t, &m);
	check_ret("vgnl_parse_vm_shares", r1, true);
	if (r1 != r2)
		fuzz_die("vgnl_parse_vm_shares: %d then %d", r1, r2);
	if (!r1) {
		if (n != m || n > VGMEM_SHARES_MAX || (n && (!s || !t)) ||
		    (n && memcmp(s, t, n * sizeof(*s))))
			fuzz_die("vgnl_parse_vm_shares: %zu and %zu shares", n, m);
		for (i = 0; i < n; i++)
			if (!memchr(s[i].path, 0, sizeof(s[i].path)) ||
			    !memchr(s[i].tag, 0, sizeof(s[i].tag)) ||
			    (!s[i].has_tag && s[i].tag[0]))
				fuzz_die("share %zu: path or tag not terminated", i);
	}
	free(s);
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nlmsghdr *nlh;
	size_t len;

	if (size < 1 + NLMSG_HDRLEN || size > 65536)
		return -1;
	len = size - 1;
	nlh = malloc(len);
	if (!nlh)
		fuzz_die("malloc");
	memcpy(nlh, data + 1, len);
	nlh->nlmsg_len = (uint32_t)len;
	switch (data[0] % 5) {
	case 0:
		TWICE(struct vgnl_gpu, vgnl_parse_gpu,
		      if (!memchr(a.name, 0, sizeof(a.name)))
			      fuzz_die("GPU name not terminated"));
		break;
	case 1:
		TWICE(struct vgnl_vm, vgnl_parse_vm,
		      if (!memchr(a.type, 0, sizeof(a.type)))
			      fuzz_die("VM type not terminated"));
		break;
	case 2:
		TWICE(struct vgnl_event, vgnl_parse_event,
		      if (a.cmd != VGMEM_CMD_EVENT_PRESSURE &&
			  a.cmd != VGMEM_CMD_EVENT_RELOCATION &&
			  a.cmd != VGMEM_CMD_EVENT_CHAN_FAULT)
			      fuzz_die("event with command %u", a.cmd));
		break;
	case 3:
		TWICE(struct vgnl_lrc, vgnl_parse_lrc, (void)a);
		break;
	default:
		shares(nlh);
		break;
	}
	free(nlh);
	return 0;
}
