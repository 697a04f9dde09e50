// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgnl-check: in-VM checks of the "vgmem" netlink family that the vgmem-nl
 * tool cannot make (tests/vm/cases/85-netlink.sh runs it):
 *
 *   vgnl-check malformed UUID GPU
 *       hand-made requests with malformed or out-of-range attributes, each
 *       refused with the documented errno and an extended-ack message, and
 *       the vGPU and GPU unchanged afterwards;
 *   vgnl-check noadmin UUID GPU [open]
 *       drops CAP_NET_ADMIN, then: GET_GPU works, SET_VM and SET_GPU get
 *       -EPERM, and GET_VM (request and dump) and joining the events group
 *       get -EPERM too, or work with "open" (vgmem.ko's netlink_open=1);
 *   vgnl-check as-nobody PROGRAM ARGS...
 *       runs PROGRAM as uid/gid 65534 with no capabilities (busybox has no
 *       setpriv --reuid), to show that vgmem-nl itself is refused;
 *   vgnl-check dump-loop SECONDS UUID...
 *       dumps the vGPUs for SECONDS while a script creates and removes
 *       others: every dump must succeed, and every dump the kernel did not
 *       flag must hold each UUID given (they exist throughout) exactly once
 *       and no UUID twice.
 *
 * Prints "ok ..." lines and exits 0, or "FAIL ..." and exits 1.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/netlink.h>

#include "lib/vgnl/vgnl.h"

static int failures;

#define FAIL(...) do { printf("FAIL "); printf(__VA_ARGS__); printf("\n"); \
		       failures++; } while (0)

/* ---- raw attributes ------------------------------------------------------ */

struct buf {
	uint8_t b[512];
	size_t len;
};

static void put_attr(struct buf *m, uint16_t type, const void *data,
		     uint16_t len)
{
	struct nlattr a = { .nla_len = NLA_HDRLEN + len, .nla_type = type };

	memcpy(m->b + m->len, &a, sizeof(a));
	memcpy(m->b + m->len + NLA_HDRLEN, data, len);
	m->len += NLA_ALIGN(NLA_HDRLEN + len);
}

static void put_u32(struct buf *m, uint16_t type, uint32_t v)
{
	put_attr(m, type, &v, sizeof(v));
}

static void put_u64(struct buf *m, uint16_t type, uint64_t v)
{
	put_attr(m, type, &v, sizeof(v));
}

static void expect_refused(struct vgnl *h, const char *what, uint8_t cmd,
			   int flags, const struct buf *m, int want)
{
	int err = vgnl_raw_request(h, cmd, flags, m->b, m->len);
	const char *ext = vgnl_ext_msg(h);

	if (err != want) {
		FAIL("%s: got %d (%s), expected %d", what, err, ext, want);
		return;
	}
	/* Every refusal but the generic ones of genetlink says why. */
	if (want != -EOPNOTSUPP && !*ext) {
		FAIL("%s: refused with %d but without an extack message", what,
		     err);
		return;
	}
	printf("ok %s: %d: %s\n", what, err, ext);
}

static int cmd_malformed(const char *uuid_s, const char *gpu_s)
{
	struct vgnl_vm before, after;
	struct vgnl_gpu gb, ga;
	uint8_t uuid[VGMEM_UUID_LEN], other[VGMEM_UUID_LEN];
	uint8_t longer[VGMEM_UUID_LEN + 1];
	struct vgnl *h;
	struct buf m;
	uint32_t gpu = (uint32_t)strtoul(gpu_s, NULL, 0);
	int ret;

	if (vgnl_uuid_parse(uuid_s, uuid))
		return 2;
	ret = vgnl_open(&h);
	if (ret) {
		FAIL("vgnl_open: %d", ret);
		return 1;
	}
	if (vgnl_get_vm(h, uuid, &before) || vgnl_get_gpu(h, gpu, &gb)) {
		FAIL("reading the vGPU or GPU before: %s", vgnl_ext_msg(h));
		return 1;
	}

	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN - 1);
	expect_refused(h, "GET_VM with a 15-byte UUID", VGMEM_CMD_GET_VM, 0, &m,
		       -ERANGE);
	m.len = 0;
	memcpy(longer, uuid, VGMEM_UUID_LEN);
	longer[VGMEM_UUID_LEN] = 0;
	put_attr(&m, VGMEM_A_VM_UUID, longer, sizeof(longer));
	put_u64(&m, VGMEM_A_VM_ENTITLEMENT, 1 << 20);
	expect_refused(h, "SET_VM with a 17-byte UUID", VGMEM_CMD_SET_VM, 0, &m,
		       -ERANGE);
	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN);
	put_u32(&m, VGMEM_A_VM_QUOTA, 1 << 30);
	expect_refused(h, "SET_VM with a 4-byte quota", VGMEM_CMD_SET_VM, 0, &m,
		       -EINVAL);
	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN);
	put_u64(&m, VGMEM_A_VM_QUOTA, 0);
	expect_refused(h, "SET_VM with quota 0", VGMEM_CMD_SET_VM, 0, &m,
		       -ERANGE);
	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN);
	put_u64(&m, VGMEM_A_VM_QUOTA, (1ull << 30) + 1);
	expect_refused(h, "SET_VM with an unaligned quota", VGMEM_CMD_SET_VM, 0,
		       &m, -EINVAL);
	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN);
	put_u64(&m, VGMEM_A_VM_ENTITLEMENT, gb.vram_size + 4096);
	put_u64(&m, VGMEM_A_VM_QUOTA, 2ull << 30);
	expect_refused(h, "SET_VM with an entitlement beyond VRAM (and a quota)",
		       VGMEM_CMD_SET_VM, 0, &m, -EINVAL);
	m.len = 0;
	put_u64(&m, VGMEM_A_VM_ENTITLEMENT, 1 << 20);
	expect_refused(h, "SET_VM without a UUID", VGMEM_CMD_SET_VM, 0, &m,
		       -EINVAL);
	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN);
	expect_refused(h, "SET_VM with nothing to set", VGMEM_CMD_SET_VM, 0, &m,
		       -EINVAL);
	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN);
	put_u32(&m, VGMEM_A_GPU_POLICY, VGMEM_POLICY_LRA);
	expect_refused(h, "SET_VM with a GPU attribute", VGMEM_CMD_SET_VM, 0,
		       &m, -EINVAL);
	m.len = 0;
	memcpy(other, uuid, sizeof(other));
	other[15] ^= 0xff;
	put_attr(&m, VGMEM_A_VM_UUID, other, VGMEM_UUID_LEN);
	expect_refused(h, "GET_VM of an unknown UUID", VGMEM_CMD_GET_VM, 0, &m,
		       -ENODEV);

	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	put_u32(&m, VGMEM_A_GPU_RETURN_MS, 0);
	expect_refused(h, "SET_GPU with return interval 0", VGMEM_CMD_SET_GPU,
		       0, &m, -ERANGE);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	put_u32(&m, VGMEM_A_GPU_RETURN_MS, VGMEM_RETURN_MS_MAX + 1);
	expect_refused(h, "SET_GPU with return interval above the maximum",
		       VGMEM_CMD_SET_GPU, 0, &m, -ERANGE);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	put_u32(&m, VGMEM_A_GPU_POLICY, VGMEM_POLICY_MAX + 1);
	put_u32(&m, VGMEM_A_GPU_RETURN_MS, 20);
	expect_refused(h, "SET_GPU with an unknown policy (and a good interval)",
		       VGMEM_CMD_SET_GPU, 0, &m, -ERANGE);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	put_u32(&m, VGMEM_A_GPU_OVERSUB_PCT, VGMEM_OVERSUB_PCT_MAX + 1);
	expect_refused(h, "SET_GPU with oversubscription above the maximum",
		       VGMEM_CMD_SET_GPU, 0, &m, -ERANGE);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	put_u32(&m, VGMEM_A_MAX + 5, 1);
	expect_refused(h, "SET_GPU with an unknown attribute", VGMEM_CMD_SET_GPU,
		       0, &m, -EINVAL);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	put_u64(&m, VGMEM_A_VM_QUOTA, 1 << 30);
	expect_refused(h, "SET_GPU with a VM attribute", VGMEM_CMD_SET_GPU, 0,
		       &m, -EINVAL);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, 999);
	put_u32(&m, VGMEM_A_GPU_RETURN_MS, 20);
	expect_refused(h, "SET_GPU of an unknown GPU", VGMEM_CMD_SET_GPU, 0, &m,
		       -ENODEV);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	m.b[0] = 200;	/* nla_len beyond the message */
	expect_refused(h, "SET_GPU with a truncated attribute",
		       VGMEM_CMD_SET_GPU, 0, &m, -EINVAL);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, 999);
	expect_refused(h, "GET_VM dump of an unknown GPU", VGMEM_CMD_GET_VM,
		       NLM_F_DUMP, &m, -ENODEV);
	m.len = 0;
	put_attr(&m, VGMEM_A_VM_UUID, uuid, VGMEM_UUID_LEN - 2);
	expect_refused(h, "GET_VM dump with a 14-byte UUID", VGMEM_CMD_GET_VM,
		       NLM_F_DUMP, &m, -ERANGE);
	m.len = 0;
	put_u32(&m, VGMEM_A_GPU_INDEX, gpu);
	expect_refused(h, "an event command as a request",
		       VGMEM_CMD_EVENT_PRESSURE, 0, &m, -EOPNOTSUPP);

	/* Refused requests change nothing. */
	if (vgnl_get_vm(h, uuid, &after) || vgnl_get_gpu(h, gpu, &ga)) {
		FAIL("reading the vGPU or GPU after: %s", vgnl_ext_msg(h));
	} else {
		if (after.st.quota != before.st.quota ||
		    after.st.entitlement != before.st.entitlement)
			FAIL("vGPU changed: quota %llu -> %llu, entitlement %llu -> %llu",
			     before.st.quota, after.st.quota,
			     before.st.entitlement, after.st.entitlement);
		if (ga.policy != gb.policy || ga.return_ms != gb.return_ms ||
		    ga.oversub_pct != gb.oversub_pct)
			FAIL("GPU changed: policy %u -> %u, return_ms %u -> %u, oversub %u -> %u",
			     gb.policy, ga.policy, gb.return_ms, ga.return_ms,
			     gb.oversub_pct, ga.oversub_pct);
	}
	vgnl_close(h);
	return failures ? 1 : 0;
}

/* ---- without CAP_NET_ADMIN ------------------------------------------------- */

static int drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	unsigned int i = CAP_TO_INDEX(CAP_NET_ADMIN);
	uint32_t bit = CAP_TO_MASK(CAP_NET_ADMIN);

	if (syscall(SYS_capget, &hdr, d))
		return -errno;
	d[i].effective &= ~bit;
	d[i].permitted &= ~bit;
	d[i].inheritable &= ~bit;
	if (syscall(SYS_capset, &hdr, d))
		return -errno;
	return 0;
}

/*
 * What a reader without CAP_NET_ADMIN gets: with vgmem.ko's default
 * (netlink_open=0) GET_GPU only, GET_VM (request and dump) and the events
 * group are refused with -EPERM, since they name other tenants' VMs and
 * their pressure, relocations and faults; with open (netlink_open=1) those
 * work too. Writes are refused either way.
 */
static int cmd_noadmin(const char *uuid_s, const char *gpu_s, bool open)
{
	struct vgnl_vm_set vs = { .has_entitlement = true,
				  .entitlement = 1 << 20 };
	struct vgnl_gpu_set gs = { .has_return_ms = true, .return_ms = 20 };
	uint32_t gpu = (uint32_t)strtoul(gpu_s, NULL, 0);
	int want = open ? 0 : -EPERM;
	uint8_t uuid[VGMEM_UUID_LEN];
	struct vgnl_vm vm, after, *vms;
	struct vgnl *h, *ev;
	struct vgnl_gpu g;
	bool have_vm;
	size_t n = 0;
	int ret;

	if (vgnl_uuid_parse(uuid_s, uuid))
		return 2;
	/* Read as administrator first: the refused write must not change it. */
	ret = vgnl_open(&h);
	if (ret) {
		FAIL("vgnl_open: %d", ret);
		return 1;
	}
	have_vm = !vgnl_get_vm(h, uuid, &vm);
	vgnl_close(h);
	if (!have_vm) {
		FAIL("GET_VM with CAP_NET_ADMIN failed");
		return 1;
	}
	ret = drop_net_admin();
	if (ret) {
		FAIL("dropping CAP_NET_ADMIN: %d", ret);
		return 1;
	}
	/* After the drop: the socket's opener is checked as well. */
	ret = vgnl_open(&h);
	if (ret) {
		FAIL("vgnl_open without CAP_NET_ADMIN: %d", ret);
		return 1;
	}
	ret = vgnl_get_gpu(h, gpu, &g);
	if (ret)
		FAIL("GET_GPU without CAP_NET_ADMIN: %d", ret);
	else
		printf("ok GET_GPU works without CAP_NET_ADMIN\n");
	ret = vgnl_get_vm(h, uuid, &after);
	if (ret != want)
		FAIL("GET_VM without CAP_NET_ADMIN: got %d, expected %d", ret,
		     want);
	else
		printf("ok GET_VM without CAP_NET_ADMIN: %d\n", ret);
	ret = vgnl_list_vms(h, -1, &vms, &n);
	if (ret != want)
		FAIL("GET_VM dump without CAP_NET_ADMIN: got %d, expected %d",
		     ret, want);
	else
		printf("ok GET_VM dump without CAP_NET_ADMIN: %d (%zu vGPUs)\n",
		       ret, ret ? 0 : n);
	if (!ret)
		free(vms);
	ret = vgnl_open(&ev);
	if (ret) {
		FAIL("vgnl_open for events without CAP_NET_ADMIN: %d", ret);
	} else {
		ret = vgnl_subscribe(ev);
		if (ret != want)
			FAIL("joining the events group without CAP_NET_ADMIN: got %d, expected %d",
			     ret, want);
		else
			printf("ok joining the events group without CAP_NET_ADMIN: %d\n",
			       ret);
		vgnl_close(ev);
	}
	ret = vgnl_set_vm(h, uuid, &vs);
	if (ret != -EPERM)
		FAIL("SET_VM without CAP_NET_ADMIN: got %d, expected %d", ret,
		     -EPERM);
	else
		printf("ok SET_VM without CAP_NET_ADMIN: %d\n", ret);
	ret = vgnl_set_gpu(h, gpu, &gs);
	if (ret != -EPERM)
		FAIL("SET_GPU without CAP_NET_ADMIN: got %d, expected %d", ret,
		     -EPERM);
	else
		printf("ok SET_GPU without CAP_NET_ADMIN: %d\n", ret);
	vgnl_close(h);
	return failures ? 1 : 0;
}

/* ---- dumps while vGPUs come and go --------------------------------------- */

static int cmd_dump_loop(int secs, int n, char **uuids_s)
{
	uint8_t (*want)[VGMEM_UUID_LEN] = calloc(n ? n : 1, VGMEM_UUID_LEN);
	unsigned long dumps = 0, flagged = 0, retried_ok = 0;
	time_t end = time(NULL) + secs;
	size_t max_seen = 0;
	struct vgnl *h;
	int i, ret;

	if (!want)
		return 1;
	for (i = 0; i < n; i++)
		if (vgnl_uuid_parse(uuids_s[i], want[i]))
			return 2;
	ret = vgnl_open(&h);
	if (ret) {
		FAIL("vgnl_open: %d", ret);
		return 1;
	}
	while (time(NULL) < end && !failures) {
		struct vgnl_vm *v;
		size_t nv, a, b;

		ret = vgnl_dump_vms_once(h, -1, &v, &nv);
		if (ret < 0) {
			FAIL("dump %lu: %d %s", dumps, ret, vgnl_ext_msg(h));
			break;
		}
		dumps++;
		if (nv > max_seen)
			max_seen = nv;
		if (ret == 1) {
			flagged++;
			free(v);
			/* The library's retrying dump must then succeed. */
			ret = vgnl_list_vms(h, -1, &v, &nv);
			if (ret && ret != -EAGAIN) {
				FAIL("retried dump: %d", ret);
				break;
			}
			if (ret == 0)
				retried_ok++;
			else
				continue;
		}
		for (a = 0; a < nv; a++)
			for (b = a + 1; b < nv; b++)
				if (!memcmp(v[a].uuid, v[b].uuid, VGMEM_UUID_LEN))
					FAIL("an unflagged dump lists a vGPU twice");
		for (i = 0; i < n; i++) {
			for (a = 0; a < nv; a++)
				if (!memcmp(v[a].uuid, want[i], VGMEM_UUID_LEN))
					break;
			if (a == nv)
				FAIL("an unflagged dump of %zu misses %s", nv,
				     uuids_s[i]);
		}
		free(v);
	}
	printf("%s dump-loop: %lu dumps, %lu flagged as interrupted "
	       "(%lu retried to a consistent one), up to %zu vGPUs\n",
	       failures ? "FAIL" : "ok", dumps, flagged, retried_ok, max_seen);
	vgnl_close(h);
	free(want);
	return failures ? 1 : 0;
}

/* Leaving uid 0 clears the permitted and effective capability sets. */
static int cmd_as_nobody(char **argv)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
		FAIL("dropping to uid 65534: %s", strerror(errno));
		return 1;
	}
	execvp(argv[0], argv);
	FAIL("exec %s: %s", argv[0], strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "as-nobody"))
		return cmd_as_nobody(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "malformed"))
		return cmd_malformed(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "noadmin"))
		return cmd_noadmin(argv[2], argv[3], false);
	if (argc == 5 && !strcmp(argv[1], "noadmin") &&
	    !strcmp(argv[4], "open"))
		return cmd_noadmin(argv[2], argv[3], true);
	if (argc >= 3 && !strcmp(argv[1], "dump-loop"))
		return cmd_dump_loop(atoi(argv[2]), argc - 3, argv + 3);
	fprintf(stderr,
		"usage: vgnl-check malformed UUID GPU | noadmin UUID GPU [open] |\n"
		"       as-nobody PROGRAM ARGS... | dump-loop SECONDS UUID...\n");
	return 2;
}
