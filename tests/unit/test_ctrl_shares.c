// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * VGMEM_CTRL_SHARES through the userspace host: a guest of vg_host issues
 * the command over its in-process transport (libvgmem's vgmem_ctrl and
 * vgmem_shares) and reads the share table the host set with
 * vg_host_guest_set_share_tag: entries by id, flags, NUL-padded tags,
 * paging, the field checks, and tags refused before anything changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "model_fixture.h"
#include "host-module/core/lrc/lrc.h"

struct t {
	struct vg_host *h;
	struct vg_host_guest *g, *other;
	struct vgmem_dev *dev;
	char dir[64];
};

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->h = mf_host("vgmem", 64 * MiB);
	t->g = mf_vm(t->h, "g", 0);
	t->other = mf_vm(t->h, "other", 0);
	t->dev = vg_host_guest_dev(t->g);
	snprintf(t->dir, sizeof(t->dir), "/tmp/vgmem-shares-XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	vg_host_destroy(t->h);
	rmdir(t->dir);
	free(t);
	return 0;
}

static struct vgmem_ctrl shares_cmd(u32 index)
{
	struct vgmem_ctrl c;

	memset(&c, 0, sizeof(c));
	c.op = VGMEM_CTRL_SHARES;
	c.status = 12345;
	c.shares.index = index;
	return c;
}

/* Runs one SHARES command through the guest's transport: its status. */
static int run(struct t *t, struct vgmem_ctrl *c)
{
	int ret = vgmem_ctrl(t->dev, c);

	assert_int_equal(ret, c->status);
	return ret;
}

static void set(struct t *t, u32 id, bool ro, const char *tag)
{
	assert_int_equal(vg_host_guest_set_share_tag(t->g, id, t->dir, ro, tag),
			 0);
}

static void test_empty(void **state)
{
	struct t *t = *state;
	struct vgmem_ctrl c = shares_cmd(0);
	unsigned int total = 99;

	/* Output fields may hold anything on input. */
	c.shares.total = 7;
	c.shares.count = 3;
	c.shares.e[4].share_id = 9;
	assert_int_equal(run(t, &c), 0);
	assert_int_equal(c.shares.total, 0);
	assert_int_equal(c.shares.count, 0);
	assert_int_equal(c.shares.e[4].share_id, 0);
	c = shares_cmd(1);
	assert_int_equal(run(t, &c), -EINVAL);
	assert_int_equal(vgmem_shares(t->dev, NULL, 0, &total), 0);
	assert_int_equal(total, 0);
}

static void test_entries_by_id(void **state)
{
	struct t *t = *state;
	struct vgmem_ctrl c = shares_cmd(0);
	struct vgmem_share_info s[4];
	char padded[VGMEM_SHARE_TAG_SIZE];
	unsigned int total = 0;
	u32 id = 0;

	set(t, 7, true, "models");
	set(t, 2, false, "data");
	set(t, 40, false, NULL);		/* a share without a tag */
	assert_int_equal(run(t, &c), 0);
	assert_int_equal(c.shares.total, 3);
	assert_int_equal(c.shares.count, 3);
	assert_int_equal(c.shares.e[0].share_id, 2);
	assert_int_equal(c.shares.e[0].flags, 0);
	/* The whole field goes out NUL-padded: nothing else in it. */
	memset(padded, 0, sizeof(padded));
	memcpy(padded, "data", 4);
	assert_memory_equal(c.shares.e[0].tag, padded, sizeof(padded));
	assert_int_equal(c.shares.e[1].share_id, 7);
	assert_int_equal(c.shares.e[1].flags, VGMEM_SHARE_F_RO);
	assert_string_equal(c.shares.e[1].tag, "models");
	assert_int_equal(c.shares.e[2].share_id, 40);
	memset(padded, 0, sizeof(padded));
	assert_memory_equal(c.shares.e[2].tag, padded, sizeof(padded));
	assert_int_equal(c.shares.e[3].share_id, 0);

	/* libvgmem: the same, and a tag to an id. */
	assert_int_equal(vgmem_shares(t->dev, s, 4, &total), 3);
	assert_int_equal(total, 3);
	assert_int_equal(s[1].id, 7);
	assert_string_equal(s[1].tag, "models");
	assert_string_equal(s[2].tag, "");
	assert_int_equal(vgmem_shares(t->dev, s, 1, &total), 1);
	assert_int_equal(s[0].id, 2);
	assert_int_equal(vgmem_share_find(t->dev, "models", &id), 0);
	assert_int_equal(id, 7);
	assert_int_equal(vgmem_share_find(t->dev, "nope", &id), -ENOENT);
	assert_int_equal(vgmem_share_find(t->dev, "", &id), -EINVAL);
	assert_int_equal(vgmem_share_find(t->dev, "a/b", &id), -EINVAL);

	/* A VM sees only its own shares. */
	c = shares_cmd(0);
	assert_int_equal(vgmem_ctrl(vg_host_guest_dev(t->other), &c), 0);
	assert_int_equal(c.shares.total, 0);

	/* A cleared share leaves the list; the rest close up. */
	assert_int_equal(vg_lrc_share_clear(vg_lrc_vm_ctx(vg_host_guest_vm(t->g)),
					    7), 0);
	c = shares_cmd(0);
	assert_int_equal(run(t, &c), 0);
	assert_int_equal(c.shares.total, 2);
	assert_int_equal(c.shares.e[1].share_id, 40);
}

static void test_paging(void **state)
{
	struct t *t = *state;
	struct vgmem_share_info s[VGMEM_SHARES_MAX];
	struct vgmem_ctrl c;
	unsigned int total = 0;
	char tag[16];
	u32 i, seen = 0;

	/* 23 shares, ids descending as set: the answer is by id anyway. */
	for (i = 0; i < 23; i++) {
		snprintf(tag, sizeof(tag), "t%u", 100 - i);
		set(t, 100 - i, i & 1, tag);
	}
	for (i = 0; i <= 23; i += c.shares.count) {
		u32 k;

		c = shares_cmd(i);
		assert_int_equal(run(t, &c), 0);
		assert_int_equal(c.shares.total, 23);
		assert_int_equal(c.shares.count,
				 23 - i < 10 ? 23 - i : 10);
		for (k = 0; k < c.shares.count; k++) {
			assert_int_equal(c.shares.e[k].share_id, 78 + i + k);
			snprintf(tag, sizeof(tag), "t%u", 78 + i + k);
			assert_string_equal(c.shares.e[k].tag, tag);
			seen++;
		}
		for (; k < VGMEM_CTRL_SHARES_PER_CMD; k++)
			assert_int_equal(c.shares.e[k].share_id, 0);
		if (i == 23)
			break;
	}
	assert_int_equal(seen, 23);
	/* index == total: an empty page; beyond: refused. */
	c = shares_cmd(23);
	assert_int_equal(run(t, &c), 0);
	assert_int_equal(c.shares.count, 0);
	c = shares_cmd(24);
	assert_int_equal(run(t, &c), -EINVAL);
	c = shares_cmd(0xffffffffu);
	assert_int_equal(run(t, &c), -EINVAL);

	assert_int_equal(vgmem_shares(t->dev, s, VGMEM_SHARES_MAX, &total), 23);
	assert_int_equal(total, 23);
	for (i = 0; i < 23; i++) {
		assert_int_equal(s[i].id, 78 + i);
		assert_int_equal(s[i].flags, (100 - (78 + i)) & 1 ?
				 VGMEM_SHARE_F_RO : 0);
	}
	assert_int_equal(vgmem_shares(t->dev, s, 12, &total), 12);
	assert_int_equal(s[11].id, 89);
	assert_int_equal(vgmem_shares(NULL, s, 1, &total), -EINVAL);
	assert_int_equal(vgmem_shares(t->dev, NULL, 1, &total), -EINVAL);
}

static void test_field_checks(void **state)
{
	struct t *t = *state;
	struct vgmem_ctrl c, orig;

	set(t, 1, false, "one");
	c = shares_cmd(0);
	c.shares.rsvd = 1;
	orig = c;
	assert_int_equal(run(t, &c), -EINVAL);
	/* A refused command's payload is left alone. */
	assert_memory_equal(&c.shares, &orig.shares, sizeof(c.shares));
	/* A stray byte after the structure, inside the union. */
	c = shares_cmd(0);
	c.raw[sizeof(struct vgmem_ctrl_shares)] = 1;
	assert_int_equal(run(t, &c), -EINVAL);
	c = shares_cmd(0);
	c.raw[sizeof(c.raw) - 1] = 0x80;
	assert_int_equal(run(t, &c), -EINVAL);
}

static void test_bad_tags_change_nothing(void **state)
{
	struct t *t = *state;
	static const char *const bad[] = {
		"", "a/b", "/", "tab\there", "nl\n", "del\x7f",
		"0123456789012345678901234567890123456",	/* 37 bytes */
	};
	char max[VGMEM_SHARE_TAG_MAX + 1];
	struct vgmem_ctrl c, before;
	unsigned int i;

	set(t, 1, false, "data");
	set(t, 2, true, "ro");
	before = shares_cmd(0);
	assert_int_equal(run(t, &before), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		/* "" is "no tag" to the API: only the wire refuses it */
		if (!bad[i][0])
			continue;
		assert_int_equal(vg_host_guest_set_share_tag(t->g, 1, t->dir,
							     true, bad[i]),
				 -EINVAL);
		assert_int_equal(vg_host_guest_set_share_tag(t->g, 3, t->dir,
							     false, bad[i]),
				 -EINVAL);
		assert_false(vgmem_share_tag_ok(bad[i]));
	}
	/* A tag another share has: refused, the id's own tag may stay. */
	assert_int_equal(vg_host_guest_set_share_tag(t->g, 3, t->dir, false,
						     "data"), -EEXIST);
	assert_int_equal(vg_host_guest_set_share_tag(t->g, 2, t->dir, true,
						     "data"), -EEXIST);
	c = shares_cmd(0);
	assert_int_equal(run(t, &c), 0);
	assert_memory_equal(&c.shares, &before.shares, sizeof(c.shares));
	/* Replacing a share keeps or changes its own tag. */
	set(t, 1, false, "data");
	set(t, 2, true, "ro2");
	/* The longest tag, UTF-8 bytes included. */
	memset(max, 'x', VGMEM_SHARE_TAG_MAX);
	max[0] = (char)0xc3;
	max[1] = (char)0xa9;
	max[VGMEM_SHARE_TAG_MAX] = 0;
	assert_true(vgmem_share_tag_ok(max));
	set(t, 3, false, max);
	c = shares_cmd(0);
	assert_int_equal(run(t, &c), 0);
	assert_int_equal(c.shares.total, 3);
	assert_string_equal(c.shares.e[1].tag, "ro2");
	assert_string_equal(c.shares.e[2].tag, max);
	assert_int_equal(c.shares.e[2].tag[VGMEM_SHARE_TAG_MAX], 0);
	/* A missing root changes nothing either. */
	assert_int_equal(vg_host_guest_set_share_tag(t->g, 9, "/nonexistent-vgmem",
						     false, "new"), -ENOENT);
	c = shares_cmd(0);
	assert_int_equal(run(t, &c), 0);
	assert_int_equal(c.shares.total, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entries_by_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_field_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_tags_change_nothing,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
