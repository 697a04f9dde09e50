// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Hostile input to the policy engine: every bad GPU or VM parameter gets
 * -EINVAL (or the documented code), names the offending VM, explains itself,
 * and leaves the caller's output untouched. Admission sums cannot overflow.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "policy/policy.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

static uint64_t scratch[8192] __attribute__((aligned(16)));

static struct vgp_gpu good_gpu(void)
{
	struct vgp_gpu g = { .vram = 16 * GiB, .host_budget = 16 * GiB,
			     .chunk = 2 * MiB, .oversub_pct = 200 };

	return g;
}

static void test_defaults(void **state)
{
	struct vgp_gpu g = good_gpu();
	struct vgp_status st;
	struct vgp_vm v;

	(void)state;
	vgp_vm_init(&v, 8 * GiB);
	assert_int_equal(v.quota, 8 * GiB);
	assert_int_equal(v.max, 8 * GiB);
	assert_int_equal(v.min, 0);
	assert_int_equal(v.low, 0);
	assert_int_equal(v.weight, VGP_WEIGHT_DEFAULT);
	assert_int_equal(v.prio, 0);
	assert_int_equal(vgp_validate_vm(&g, &v, &st), 0);
	assert_int_equal(st.code, VGP_OK);
	assert_string_equal(vgp_code_name(VGP_OK), "ok");
	assert_string_equal(vgp_code_name(VGP_E_HOST_BUDGET), "host-budget");
	assert_string_equal(vgp_code_name((enum vgp_code)99), "unknown");
	/* A NULL status is allowed everywhere. */
	assert_int_equal(vgp_validate_vm(&g, &v, NULL), 0);
	v.weight = 0;
	assert_int_equal(vgp_validate_vm(&g, &v, NULL), -EINVAL);
}

static void test_bad_gpu(void **state)
{
	static const struct {
		struct vgp_gpu g;
		const char *word;
	} bad[] = {
		{ { .vram = GiB, .chunk = 0, .oversub_pct = 100 }, "power of two" },
		{ { .vram = GiB, .chunk = 3 * MiB, .oversub_pct = 100 }, "power of two" },
		{ { .vram = MiB, .chunk = 2 * MiB, .oversub_pct = 100 }, "smaller than one chunk" },
		{ { .vram = 0, .chunk = 1, .oversub_pct = 100 }, "smaller than one chunk" },
		{ { .vram = GiB, .chunk = MiB, .oversub_pct = 0 }, "oversubscription" },
		{ { .vram = GiB, .chunk = MiB, .oversub_pct = VGP_OVERSUB_MAX + 1 },
		  "oversubscription" },
	};
	struct vgp_status st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(vgp_validate_gpu(&bad[i].g, &st), -EINVAL);
		assert_int_equal(st.code, VGP_E_GPU);
		assert_int_equal(st.vm, -1);
		if (!strstr(st.reason, bad[i].word))
			fail_msg("case %zu: reason '%s' lacks '%s'", i, st.reason,
				 bad[i].word);
	}
	assert_int_equal(vgp_validate_gpu(NULL, &st), -EINVAL);
	assert_int_equal(st.code, VGP_E_GPU);
}

/* Each mutation of a good VM, the reason word it must produce. */
static void test_bad_vm(void **state)
{
	struct vgp_gpu g = good_gpu();
	struct vgp_vm vms[3], save[3];
	struct vgp_ent out[3];
	struct vgp_status st;
	int k, i;

	(void)state;
	for (k = 0; k < 10; k++) {
		const char *word = NULL;
		struct vgp_vm *v = &vms[2];

		for (i = 0; i < 3; i++) {
			vgp_vm_init(&vms[i], 8 * GiB);
			vms[i].demand = 4 * GiB;
			vms[i].min = GiB;
			vms[i].low = 2 * GiB;
			vms[i].max = 6 * GiB;
		}
		switch (k) {
		case 0: v->weight = 0; word = "weight"; break;
		case 1: v->weight = VGP_WEIGHT_MAX + 1; word = "weight"; break;
		case 2: v->prio = VGP_PRIO_MAX + 1; word = "priority"; break;
		case 3: v->quota = 0; v->min = v->low = v->max = 0; word = "quota is 0"; break;
		case 4: v->min = 3 * GiB; word = "min"; break;
		case 5: v->low = 7 * GiB; word = "low"; break;
		case 6: v->max = 9 * GiB; word = "max"; break;
		case 7: v->max = v->low = 2 * GiB + 1; word = "rounded"; break;
		case 8: v->min = UINT64_MAX; word = "min"; break;
		case 9: v->max = UINT64_MAX; word = "quota"; break;
		}
		memcpy(save, vms, sizeof(vms));
		memset(out, 0xa5, sizeof(out));
		assert_int_equal(vgp_compute(&g, vms, 3, out, scratch, sizeof(scratch), &st),
				 -EINVAL);
		assert_int_equal(st.code, VGP_E_VM);
		assert_int_equal(st.vm, 2);
		if (!strstr(st.reason, word) || !strstr(st.reason, "vm 2"))
			fail_msg("case %d: reason '%s' lacks '%s'", k, st.reason, word);
		/* Nothing changed: inputs, and the output still holds the poison. */
		assert_memory_equal(save, vms, sizeof(vms));
		for (i = 0; i < (int)sizeof(out); i++)
			assert_int_equal(((uint8_t *)out)[i], 0xa5);
		/* Admission of the same VM as a candidate blames index n. */
		assert_int_equal(vgp_admit(&g, vms, 2, v, &st), -EINVAL);
		assert_int_equal(st.vm, 2);
		/* And as an existing VM, its own index. */
		assert_int_equal(vgp_admit(&g, vms, 3, NULL, &st), -EINVAL);
		assert_int_equal(st.vm, 2);
	}
}

static void test_bad_buffers(void **state)
{
	struct vgp_gpu g = good_gpu();
	struct vgp_vm v[4];
	struct vgp_ent out[4];
	struct vgp_status st;
	size_t need;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		vgp_vm_init(&v[i], GiB);
	need = vgp_scratch_size(4);
	assert_true(need > 0 && need <= sizeof(scratch));
	assert_int_equal(vgp_scratch_size(VGP_MAX_VMS + 1), 0);

	memset(out, 0x5a, sizeof(out));
	assert_int_equal(vgp_compute(&g, v, 4, out, scratch, need - 1, &st), -ENOBUFS);
	assert_int_equal(st.code, VGP_E_SCRATCH);
	assert_int_equal(vgp_compute(&g, v, 4, out, NULL, need, &st), -ENOBUFS);
	assert_int_equal(vgp_compute(&g, v, 4, out, (char *)scratch + 4, need, &st),
			 -ENOBUFS);
	assert_int_equal(vgp_compute(&g, v, 4, out, (char *)scratch + 8, need, &st),
			 -ENOBUFS);
	assert_int_equal(vgp_compute(&g, v, 4, NULL, scratch, need, &st), -EINVAL);
	assert_int_equal(st.code, VGP_E_COUNT);
	assert_int_equal(vgp_compute(&g, NULL, 4, out, scratch, need, &st), -EINVAL);
	assert_int_equal(vgp_compute(&g, v, (size_t)VGP_MAX_VMS + 1, out, scratch,
				     sizeof(scratch), &st), -EINVAL);
	assert_int_equal(st.code, VGP_E_COUNT);
	for (i = 0; i < (int)sizeof(out); i++)
		assert_int_equal(((uint8_t *)out)[i], 0x5a);

	/* Exactly enough scratch works; zero VMs is a valid, empty GPU. */
	assert_int_equal(vgp_compute(&g, v, 4, out, scratch, need, &st), 0);
	assert_int_equal(vgp_compute(&g, NULL, 0, NULL, scratch, sizeof(scratch), &st), 0);
	assert_int_equal(st.entitled, 0);
	assert_int_equal(st.spare, 16 * GiB);
	assert_int_equal(vgp_admit(&g, NULL, 0, NULL, &st), 0);
}

/* Sums of huge quotas saturate into a refusal, never wrap into a yes. */
static void test_admission_overflow(void **state)
{
	static struct vgp_vm v[64];
	struct vgp_gpu g = { .vram = UINT64_MAX, .chunk = 1,
			     .oversub_pct = VGP_OVERSUB_MAX, .host_budget = UINT64_MAX };
	struct vgp_status st;
	int i;

	(void)state;
	for (i = 0; i < 64; i++) {
		vgp_vm_init(&v[i], UINT64_MAX);
		v[i].max = 0;
	}
	/* 64 * 2^64 quota is within 1000x of VRAM, but the host need is not. */
	assert_int_equal(vgp_admit(&g, v, 63, &v[63], &st), -ENOSPC);
	assert_int_equal(st.code, VGP_E_HOST_BUDGET);
	assert_int_equal(st.vm, 63);
	/* Two near-max mins do not wrap to a small sum. */
	for (i = 0; i < 2; i++) {
		v[i].min = v[i].low = v[i].max = UINT64_MAX - 1;
	}
	assert_int_equal(vgp_admit(&g, v, 1, &v[1], &st), -ENOSPC);
	assert_int_equal(st.code, VGP_E_MIN_VRAM);
	/* Quotas just past the limit at 100 %. */
	g.oversub_pct = 100;
	vgp_vm_init(&v[0], UINT64_MAX);
	vgp_vm_init(&v[1], 1);
	assert_int_equal(vgp_admit(&g, v, 1, &v[1], &st), -ENOSPC);
	assert_int_equal(st.code, VGP_E_QUOTA_LIMIT);
	assert_non_null(strstr(st.reason, "quotas would sum to more than 16EiB, above 100% of VRAM "
				       "18446744073709551615 bytes"));
	assert_int_equal(vgp_admit(&g, v, 1, NULL, &st), 0);

	/* And compute handles the same extremes. */
	for (i = 0; i < 64; i++) {
		vgp_vm_init(&v[i], UINT64_MAX);
		v[i].demand = UINT64_MAX;
		v[i].min = v[i].low = i < 2 ? UINT64_MAX / 2 + 1 : 0;
		v[i].weight = i % 2 ? VGP_WEIGHT_MAX : 1;
	}
	{
		struct vgp_ent out[64];
		uint64_t sum = 0;

		assert_int_equal(vgp_compute(&g, v, 64, out, scratch, sizeof(scratch),
					     &st), 0);
		for (i = 0; i < 64; i++) {
			assert_true(sum + out[i].bytes >= sum);
			sum += out[i].bytes;
		}
		assert_int_equal(sum, UINT64_MAX);
		assert_true(out[0].bytes >= UINT64_MAX / 2);
		assert_true(out[1].bytes >= UINT64_MAX / 2);
		assert_int_equal(st.flags, VGP_F_MIN_OVERCOMMIT | VGP_F_LOW_OVERCOMMIT |
				 VGP_F_CONTENDED);
	}
}

/* A candidate changes nothing it is given, admitted or not. */
static void test_admit_const(void **state)
{
	struct vgp_gpu g = good_gpu();
	struct vgp_vm v[3], save[3];
	struct vgp_status st;
	int i;

	(void)state;
	for (i = 0; i < 3; i++)
		vgp_vm_init(&v[i], 10 * GiB);
	memcpy(save, v, sizeof(v));
	assert_int_equal(vgp_admit(&g, v, 2, &v[2], &st), 0);
	assert_int_equal(st.host_need, 14 * GiB);
	v[2].quota = 13 * GiB;
	v[2].max = 13 * GiB;
	memcpy(save, v, sizeof(v));
	assert_int_equal(vgp_admit(&g, v, 2, &v[2], &st), -ENOSPC);
	assert_int_equal(st.code, VGP_E_QUOTA_LIMIT);
	/* Sizes as operators write them, not bytes. */
	assert_string_equal(st.reason,
			    "quotas would sum to 33GiB, above 200% of VRAM 16GiB (32GiB)");
	assert_memory_equal(save, v, sizeof(v));
	/* A GPU at VGP_MAX_VMS takes no candidate (checked before the VMs). */
	assert_int_equal(vgp_admit(&g, v, VGP_MAX_VMS + 1, &v[0], &st), -EINVAL);
	assert_int_equal(st.code, VGP_E_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_gpu),
		cmocka_unit_test(test_bad_vm),
		cmocka_unit_test(test_bad_buffers),
		cmocka_unit_test(test_admission_overflow),
		cmocka_unit_test(test_admit_const),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
