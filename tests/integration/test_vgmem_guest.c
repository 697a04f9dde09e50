// SPDX-License-Identifier: MIT
/*
 * vgmem-guest's commands, run in-process (--inproc: the userspace host and
 * its software GPU) through vgg_main exactly as the VM tests run the
 * binary: exit codes, the closing RESULT line, usage errors, and checks
 * that must fail when the device misbehaves or the guest asks too much.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "vgg_run.h"

static void test_parse_helpers(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(vgg_parse_size("4096", &v), 0);
	assert_true(v == 4096);
	assert_int_equal(vgg_parse_size("3K", &v), 0);
	assert_true(v == 3072);
	assert_int_equal(vgg_parse_size("16m", &v), 0);
	assert_true(v == 16ull << 20);
	assert_int_equal(vgg_parse_size("2G", &v), 0);
	assert_true(v == 2ull << 30);
	assert_int_equal(vgg_parse_size("1T", &v), 0);
	assert_true(v == 1ull << 40);
	assert_int_equal(vgg_parse_size("", &v), -EINVAL);
	assert_int_equal(vgg_parse_size("M", &v), -EINVAL);
	assert_int_equal(vgg_parse_size("-1M", &v), -EINVAL);
	assert_int_equal(vgg_parse_size("4MB", &v), -EINVAL);
	assert_int_equal(vgg_parse_size("4X", &v), -EINVAL);
	assert_int_equal(vgg_parse_size("1 M", &v), -EINVAL);
	assert_int_equal(vgg_parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(vgg_parse_size("20000000T", &v), -EINVAL);
	assert_int_equal(vgg_parse_u64("0x10", &v), 0);
	assert_true(v == 16);
	assert_int_equal(vgg_parse_u64("010", &v), 0);
	assert_true(v == 10);
	assert_int_equal(vgg_parse_u64("0x", &v), -EINVAL);
	assert_int_equal(vgg_parse_u64("-3", &v), -EINVAL);
	assert_int_equal(vgg_parse_u64("3a", &v), -EINVAL);
}

static void test_usage(void **state)
{
	static const char *const bad[][8] = {
		{ "info", NULL },					/* no device */
		{ "--inproc", "--dev", "x", "info", NULL },		/* both */
		{ "--inproc", NULL },					/* no command */
		{ "--inproc", "frobnicate", NULL },
		{ "--inproc", "workload", "--ws", "1M", NULL },		/* no kind */
		{ "--inproc", "workload", "sideways", "--ws", "1M", NULL },
		{ "--inproc", "workload", "stream", NULL },		/* no --ws */
		{ "--inproc", "workload", "stream", "--ws", "1Q", NULL },
		{ "--inproc", "workload", "stream", "--ws", "1M", "--iters", "0", NULL },
		{ "--inproc", "fill-check", NULL },
		{ "--inproc", "fill-check", "--size", "1M", "--ws", "1M", NULL },
		{ "--inproc", "fill-check", "--size", "1M", "--bo", "2M", NULL },
		{ "--inproc", "fill-check", "--size", "1M", "--hold", "-1", NULL },
		{ "--inproc", "fill-check", "--size", "1M", "--hold", "x", NULL },
		{ "--inproc", "submit-loop", NULL },
		{ "--inproc", "submit-loop", "--count", "99999999999", NULL },
		{ "--inproc", "alloc", "--hold", "1", NULL },
		{ "--inproc", "hostile", NULL },
		{ "--inproc", "hostile", "nice", NULL },
		{ "--inproc", "info", "extra", NULL },
		{ "--inproc", "info", "--bogus", NULL },
		{ "--inproc", "info", "--ram", NULL },
		{ "--inproc=1", "info", NULL },
		{ "--dev", "u", "--vram", "1G", "info", NULL },
		{ "--pci", "auto", "--inproc", "info", NULL },		/* both */
		{ "--pci", "auto", "--dev", "u", "info", NULL },
		{ "--pci", "auto", "--ram", "4M", "info", NULL },	/* driver's DMA */
		{ "--pci", "auto", "--vram", "1G", "info", NULL },
		{ "--pci", NULL },					/* no value */
		{ "--inproc", "share", "bind", "t", "/mnt", NULL },	/* PCI only */
		{ "--pci", "auto", "share", NULL },
		{ "--pci", "auto", "share", "mount", "t", NULL },
		{ "--pci", "auto", "share", "bind", "t", NULL },	/* no DIR */
		{ "--pci", "auto", "share", "unbind", "t", "/mnt", NULL },
		{ "--pci", "auto", "share", "bind", "a/b", "/mnt", NULL },
		{ "--pci", "auto", "share", "bind", "", "/mnt", NULL },
	};
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const *a = bad[i];

		run(&r, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
		if (r.rc != 2 || !starts(r.last, "RESULT fail usage: "))
			fail_msg("case %zu (%s %s ...): rc %d, last line '%s'", i, a[0],
				 a[1] ? a[1] : "", r.rc, r.last);
		assert_non_null(strstr(r.err, "usage:"));
		run_free(&r);
	}
}

/*
 * The vgmem-guest a tenant installs has no in-process host: --inproc is a
 * usage error that names where it is, and nothing is opened; the rest of
 * the command line is still checked as before.
 */
static void test_inproc_not_in_tenant_build(void **state)
{
	struct run r;

	(void)state;
	vgg_run_inproc = NULL;
	run(&r, "--inproc", "info", NULL);
	assert_int_equal(r.rc, 2);
	assert_true(starts(r.last, "RESULT fail usage: --inproc runs the software GPU"));
	assert_non_null(strstr(r.last, "vgmem-guest-inproc"));
	run_free(&r);
	run(&r, "--inproc", "frobnicate", NULL);	/* parse errors first */
	assert_int_equal(r.rc, 2);
	assert_null(strstr(r.last, "vgmem-guest-inproc"));
	run_free(&r);
	run(&r, "--pci", "/dev/null", "info", NULL);	/* other transports stay */
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.last, "QUERY"));
	run_free(&r);
	vgg_run_inproc = &vgg_inproc_host;
}

/* No guest driver on this machine: --pci fails to open, saying why. */
static void test_pci_absent(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--pci", "auto", "info", NULL);
	assert_int_equal(r.rc, 1);
	assert_true(starts(r.last, "RESULT fail open the first vGPU: "));
	assert_non_null(strstr(r.err, "vgmem_guest"));
	run_free(&r);
	run(&r, "--pci", "/dev/null", "info", NULL);
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.last, "QUERY"));
	run_free(&r);
}

static void test_help(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--help", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "submit-loop --count N"));
	run_free(&r);
	run(&r, "hostile", "--help", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "ring-outside"));
	run_free(&r);
	/* --help wins over everything else, even a broken command line. */
	run(&r, "--inproc", "fill-check", "--size", "zz", "--help", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "FILL_PATTERN"));
	run_free(&r);
}

static void test_info(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--inproc", "--quota", "64M", "info", NULL);
	assert_ok(&r);
	assert_non_null(strstr(r.out, "\nabi_version 1\n"));
	assert_non_null(strstr(r.out, "\nquota 67108864\n"));
	assert_non_null(strstr(r.last, "abi=1"));
	run_free(&r);
}

static void test_workloads(void **state)
{
	static const char *const kinds[] = { "stream", "strided", "gather", "hotcold" };
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		run(&r, "--inproc", "workload", kinds[i], "--ws", "6M", "--iters", "3",
		    "--seed", "7", NULL);
		assert_ok(&r);
		assert_non_null(strstr(r.last, kinds[i]));
		run_free(&r);
	}
}

static void test_fill_check(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--inproc", "fill-check", "--size", "9M", "--bo", "4M", "--loops", "2",
	    "--seed", "3", "--hold", "0.2", NULL);
	assert_ok(&r);
	assert_non_null(strstr(r.last, "bos=3 loops=2"));
	run_free(&r);
}

/* Under pressure: a small GPU, so the BOs get relocated while checked. */
static void test_fill_check_oversubscribed(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--inproc", "--vram", "8M", "fill-check", "--size", "12M", "--bo", "2M",
	    "--loops", "2", NULL);
	assert_ok(&r);
	run_free(&r);
}

static void test_fill_check_fails_over_quota(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--inproc", "--quota", "4M", "fill-check", "--size", "8M", NULL);
	assert_int_equal(r.rc, 1);
	assert_true(starts(r.last, "RESULT fail "));
	assert_non_null(strstr(r.last, "BO_ALLOC"));
	assert_non_null(strstr(r.last, "-28"));
	run_free(&r);
}

static void test_submit_loop(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--inproc", "submit-loop", "--count", "700", NULL);
	assert_ok(&r);
	assert_non_null(strstr(r.last, "count=700"));
	run_free(&r);
}

static void test_alloc(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--inproc", "alloc", "--size", "9M", "--bo", "4M", "--hold", "0.1", NULL);
	assert_ok(&r);
	/* 4M + 4M + 1M in 2 MiB chunks: 2 + 2 + 1 samples. */
	assert_non_null(strstr(r.last, "bos=3"));
	assert_non_null(strstr(r.last, "samples=5"));
	run_free(&r);
	run(&r, "--inproc", "--quota", "1M", "alloc", "--size", "2M", NULL);
	assert_int_equal(r.rc, 1);
	run_free(&r);
}

static volatile int term_done;

static void term_ignore(int sig)
{
	(void)sig;
}

/* SIGTERM to this process every 20 ms until the run under test returns. */
static void *term_sender(void *arg)
{
	const struct timespec ts = { 0, 20000000 };

	(void)arg;
	while (!__atomic_load_n(&term_done, __ATOMIC_ACQUIRE)) {
		kill(getpid(), SIGTERM);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * alloc --hold ends early on SIGTERM and still checks its BOs: a harness
 * keeps such a bystander for as long as another VM runs. Outside the hold a
 * no-op handler takes the signals; were they ignored by alloc, the hold
 * would last its 600 s and the suite's time limit would fail the test.
 */
static void test_alloc_hold_ends_on_sigterm(void **state)
{
	struct sigaction sa, old;
	pthread_t t;
	struct run r;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = term_ignore;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGTERM, &sa, &old), 0);
	term_done = 0;
	assert_int_equal(pthread_create(&t, NULL, term_sender, NULL), 0);
	run(&r, "--inproc", "alloc", "--size", "4M", "--hold", "600", NULL);
	__atomic_store_n(&term_done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	sigaction(SIGTERM, &old, NULL);
	assert_ok(&r);
	assert_non_null(strstr(r.out, "hold ready 600.0 s"));
	assert_non_null(strstr(r.out, "hold ended early by a signal"));
	assert_non_null(strstr(r.last, "samples=2"));
	run_free(&r);
}

static void test_hostile(void **state)
{
	static const char *const kinds[] = {
		"wild-va", "bad-entry", "bad-method", "bad-ctrl", "ring-outside",
	};
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		run(&r, "--inproc", "hostile", kinds[i], NULL);
		assert_ok(&r);
		assert_non_null(strstr(r.last, "fresh channel ok"));
		run_free(&r);
	}
	run(&r, "--inproc", "--quota", "32M", "hostile", "bad-ctrl", NULL);
	assert_ok(&r);
	assert_non_null(strstr(r.out, "case bo-over-quota: -28"));
	run_free(&r);
	run(&r, "--inproc", "--ram", "4M", "hostile", "ring-outside", NULL);
	assert_ok(&r);
	run_free(&r);
	run(&r, "--inproc", "hostile", "flood", "--count", "600", NULL);
	assert_ok(&r);
	assert_non_null(strstr(r.last, "600 GPFIFO entries"));
	run_free(&r);
}

/* No mdev here: the VFIO path must fail cleanly, naming the step. */
static void test_vfio_open_fails_cleanly(void **state)
{
	struct run r;

	(void)state;
	run(&r, "--dev", "00000000-0000-0000-0000-00000000dead", "info", NULL);
	assert_int_equal(r.rc, 1);
	assert_true(starts(r.last, "RESULT fail open "));
	assert_non_null(strstr(r.last, "IOMMU group"));
	run_free(&r);
	run(&r, "--dev", "../../../etc/passwd", "info", NULL);
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.last, "8-4-4-4-12"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_helpers),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_inproc_not_in_tenant_build),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_workloads),
		cmocka_unit_test(test_fill_check),
		cmocka_unit_test(test_fill_check_oversubscribed),
		cmocka_unit_test(test_fill_check_fails_over_quota),
		cmocka_unit_test(test_submit_loop),
		cmocka_unit_test(test_alloc),
		cmocka_unit_test(test_alloc_hold_ends_on_sigterm),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_pci_absent),
		cmocka_unit_test(test_vfio_open_fails_cleanly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
