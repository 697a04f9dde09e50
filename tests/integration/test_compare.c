// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgmem-sim compare and cloud-day on their --tiny presets, and replay on
 * a small request trace written here (this build's
 * binary: build[/asan]/bin/vgmem-sim next to build[/asan]/tests/): the
 * tables must be internally consistent (every slowdown at least 1 up to
 * the CSV's rounding, nothing moved over PCIe without pressure, vgmem
 * never out of memory, OOM and admission counts that add up, the oracle
 * below every model that serves every VM) and two runs with the same seed
 * must write identical tables and traces; replay's table must add up (no
 * request of vgmem fails, a passing K has no failure and p99s within the
 * SLO, static places only what fits) and a malformed row must stop it with
 * FILE:LINE.
 */
#include "itest.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

static char sim_bin[4200];
static char tmp_dir[256];

#define MAX_COLS 32
#define MAX_ROWS 512

struct csv {
	int ncol, nrow;
	char *names[MAX_COLS];
	char *cell[MAX_ROWS][MAX_COLS];
	char *buf;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = 0;
	if (len)
		*len = (size_t)n;
	fclose(f);
	return b;
}

/* Splits in place; empty cells stay "" (no quoting in vgmem-sim's CSV). */
static int csv_load(struct csv *c, const char *path)
{
	char *line, *save = NULL, *p;
	int row = -1;

	memset(c, 0, sizeof(*c));
	c->buf = slurp(path, NULL);
	if (!c->buf)
		return -1;
	for (line = strtok_r(c->buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), row++) {
		char **dst = row < 0 ? c->names : c->cell[row];
		int col = 0;

		if (row >= MAX_ROWS)
			return -1;
		for (p = line; col < MAX_COLS; col++) {
			char *comma = strchr(p, ',');

			dst[col] = p;
			if (!comma) {
				col++;
				break;
			}
			*comma = 0;
			p = comma + 1;
		}
		if (row < 0)
			c->ncol = col;
		else if (col != c->ncol)
			return -1;
	}
	c->nrow = row;
	return 0;
}

static int col(const struct csv *c, const char *name)
{
	int i;

	for (i = 0; i < c->ncol; i++)
		if (!strcmp(c->names[i], name))
			return i;
	fail_msg("no column %s", name);
	return -1;
}

static double num(const struct csv *c, int r, const char *name)
{
	return strtod(c->cell[r][col(c, name)], NULL);
}

static const char *str(const struct csv *c, int r, const char *name)
{
	return c->cell[r][col(c, name)];
}

static int run_sim(const char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawn(&pid, sim_bin, NULL, NULL, (char *const *)argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The same with stderr into a file, for the messages a test checks. */
static int run_sim_err(const char *const argv[], const char *err_path)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, ret;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, 2, err_path,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ret = posix_spawn(&pid, sim_bin, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void out_path(char *buf, size_t len, const char *run, const char *file)
{
	snprintf(buf, len, "%s/%s/%s", tmp_dir, run, file);
}

static void run_compare(const char *run, const char *seed)
{
	char out[512];
	const char *argv[] = { sim_bin, "compare", "--tiny", "1", "--quiet",
			       "--seed", seed, "--out", out, NULL };

	snprintf(out, sizeof(out), "%s/%s", tmp_dir, run);
	assert_int_equal(run_sim(argv), 0);
}

static bool same_file(const char *run_a, const char *run_b, const char *file)
{
	char pa[512], pb[512];
	size_t la, lb;
	char *a, *b;
	bool same;

	out_path(pa, sizeof(pa), run_a, file);
	out_path(pb, sizeof(pb), run_b, file);
	a = slurp(pa, &la);
	b = slurp(pb, &lb);
	assert_non_null(a);
	assert_non_null(b);
	same = la == lb && !memcmp(a, b, la);
	free(a);
	free(b);
	return same;
}

static int setup(void **state)
{
	char exe[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int up;

	(void)state;
	exe[n > 0 ? n : 0] = 0;
	/* build[/asan]/tests/integration/test_compare -> build[/asan]/bin */
	for (up = 0; up < 3 && (slash = strrchr(exe, '/')); up++)
		*slash = 0;
	snprintf(sim_bin, sizeof(sim_bin), "%s/bin/vgmem-sim", exe);
	if (access(sim_bin, X_OK)) {
		fprintf(stderr, "test_compare: %s not built (make it first)\n",
			sim_bin);
		return -1;
	}
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/vgmem-test-compare.XXXXXX");
	if (!mkdtemp(tmp_dir))
		return -1;
	/* Two runs, same seed, and a third with another seed. */
	run_compare("a", "7");
	run_compare("b", "7");
	run_compare("c", "8");
	return 0;
}

static int rm_one(const char *p, const struct stat *sb, int type,
		  struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	remove(p);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (tmp_dir[0])
		nftw(tmp_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* Same seed: identical trace and tables; another seed: another trace. */
static void test_deterministic(void **state)
{
	(void)state;
	assert_true(same_file("a", "b", "trace.csv"));
	assert_true(same_file("a", "b", "compare.csv"));
	assert_true(same_file("a", "b", "compare_vms.csv"));
	assert_true(same_file("a", "b", "compare.md"));
	assert_false(same_file("a", "c", "trace.csv"));
}

static bool is_vgmem(const char *spec)
{
	return !strncmp(spec, "vgmem", 5);
}

static void test_models_table(void **state)
{
	struct csv c;
	char path[512];
	int r, runs = 0, pressure_admission = 0;

	(void)state;
	out_path(path, sizeof(path), "a", "compare.csv");
	assert_int_equal(csv_load(&c, path), 0);
	assert_true(c.nrow >= 2 * 5);	/* two settings, the models there are */
	for (r = 0; r < c.nrow; r++) {
		const char *model = str(&c, r, "model");
		bool roomy = !strcmp(str(&c, r, "setting"), "roomy");
		double vms = num(&c, r, "vms");

		if (!*str(&c, r, "admitted"))
			continue;	/* a model this build does not have */
		runs++;
		/* Slowdowns against unlimited VRAM are at least 1 (4 decimals). */
		assert_true(num(&c, r, "min") >= 0.9999);
		assert_true(num(&c, r, "median") >= 0.9999);
		assert_true(num(&c, r, "p99") >= num(&c, r, "median"));
		assert_true(num(&c, r, "worst_p99") >= num(&c, r, "p99") - 1e-4 ||
			    num(&c, r, "iterations") == 0);
		assert_true(num(&c, r, "jain") > 0 && num(&c, r, "jain") <= 1.0001);
		/* Admission adds up; OOM VMs are admitted VMs. */
		assert_true(num(&c, r, "admitted") + num(&c, r, "refused") == vms);
		assert_true(num(&c, r, "oom_vms") <= num(&c, r, "oom"));
		assert_true(num(&c, r, "oom_vms") <= num(&c, r, "admitted"));
		if (strcmp(model, "static"))
			assert_true(num(&c, r, "refused") == 0);
		/*
		 * Without pressure nothing crosses PCIe, nothing is relocated.
		 * Roomy is sized in bytes held; paging at 2 MiB takes a 2 MiB
		 * chunk for every small BO, so the tiny trace's 512K BOs put it
		 * under pressure even there: not checked.
		 */
		if (roomy && strcmp(model, "paging:gran=2m")) {
			assert_true(num(&c, r, "pcie_copy_bytes") == 0);
			assert_true(num(&c, r, "pcie_access_bytes") == 0);
			assert_true(num(&c, r, "relocations") == 0);
		}
		if (roomy)
			assert_true(num(&c, r, "refused") == 0);
		/* vgmem keeps every VM running: never out of memory. */
		if (is_vgmem(model))
			assert_true(num(&c, r, "oom") == 0);
		if (is_vgmem(model) && roomy)
			assert_true(num(&c, r, "p99") <= 1.0001);
		if (!roomy && !strcmp(model, "admission")) {
			/* VRAM full: admission's allocations fail. */
			assert_true(num(&c, r, "oom") > 0);
			pressure_admission++;
		}
		if (!roomy && !strcmp(model, "static"))
			assert_true(num(&c, r, "refused") > 0);
	}
	assert_true(runs >= 10);
	assert_int_equal(pressure_admission, 1);
	free(c.buf);
}

static double pcie(const struct csv *c, int r)
{
	return num(c, r, "pcie_copy_bytes") + num(c, r, "pcie_access_bytes");
}

/*
 * The oracle (Belady's MIN, computed from the trace) never reads host
 * memory, never fails, and moves no more bytes over PCIe than any model
 * that serves every VM; its ratio to itself is 1.
 */
static void test_oracle_rows(void **state)
{
	const char *runs[] = { "a", "c" };
	struct csv c;
	char path[512];
	int r, k, i, oracles = 0;

	(void)state;
	for (i = 0; i < 2; i++) {
		out_path(path, sizeof(path), runs[i], "compare.csv");
		assert_int_equal(csv_load(&c, path), 0);
		for (r = 0; r < c.nrow; r++) {
			if (strcmp(str(&c, r, "model"), "oracle"))
				continue;
			oracles++;
			assert_true(num(&c, r, "pcie_access_bytes") == 0);
			assert_true(num(&c, r, "oom") == 0);
			assert_true(num(&c, r, "refused") == 0);
			assert_true(num(&c, r, "mean") >= 0.9999);
			if (pcie(&c, r) > 0)
				assert_true(num(&c, r, "pcie_vs_oracle") == 1);
			for (k = 0; k < c.nrow; k++) {
				if (strcmp(str(&c, k, "setting"), str(&c, r, "setting")) ||
				    !*str(&c, k, "admitted") ||
				    num(&c, k, "admitted") != num(&c, k, "vms") ||
				    num(&c, k, "oom") > 0)
					continue;
				if (pcie(&c, r) > pcie(&c, k))
					fail_msg("%s %s: oracle %.0f bytes, %s %.0f",
						 runs[i], str(&c, r, "setting"),
						 pcie(&c, r), str(&c, k, "model"),
						 pcie(&c, k));
			}
		}
		free(c.buf);
	}
	assert_int_equal(oracles, 4);
}

/* The per-VM rows add up to the per-model rows. */
static void test_vm_table(void **state)
{
	struct csv m, v;
	char path[512];
	int r, k;

	(void)state;
	out_path(path, sizeof(path), "a", "compare.csv");
	assert_int_equal(csv_load(&m, path), 0);
	out_path(path, sizeof(path), "a", "compare_vms.csv");
	assert_int_equal(csv_load(&v, path), 0);
	for (r = 0; r < m.nrow; r++) {
		double oom = 0, admitted = 0, iters = 0;

		if (!*str(&m, r, "admitted"))
			continue;
		for (k = 0; k < v.nrow; k++) {
			if (strcmp(str(&v, k, "setting"), str(&m, r, "setting")) ||
			    strcmp(str(&v, k, "model"), str(&m, r, "model")))
				continue;
			oom += num(&v, k, "oom");
			admitted += num(&v, k, "admitted");
			iters += num(&v, k, "iters_ok");
			if (num(&v, k, "admitted") == 0) {
				assert_true(num(&v, k, "iters_ok") == 0);
				assert_true(num(&v, k, "oom") == 0);
			}
			if (num(&v, k, "iters_ok") > 0) {
				assert_true(num(&v, k, "median") >= 0.9999);
				assert_true(num(&v, k, "p99") >= num(&v, k, "median"));
				assert_true(num(&v, k, "mean") >= 0.9999);
				assert_true(num(&v, k, "device_ns") >=
					    num(&v, k, "baseline_ns") * 0.9999 ||
					    num(&v, k, "oom") > 0);
			}
		}
		assert_true(oom == num(&m, r, "oom"));
		assert_true(admitted == num(&m, r, "admitted"));
		assert_true(iters == num(&m, r, "iterations"));
	}
	free(m.buf);
	free(v.buf);
}

/* Bad options: exit status 2 and nothing written. */
static void test_bad_usage(void **state)
{
	char out[512];
	const char *bad_tiny[] = { sim_bin, "compare", "--tiny", "2", "--out",
				   out, NULL };
	const char *bad_models[] = { sim_bin, "compare", "--models", "nosuch",
				     "--out", out, NULL };
	const char *bad_pct[] = { sim_bin, "compare", "--pressure-pct", "0",
				  "--out", out, NULL };
	const char *bad_day[] = { sim_bin, "cloud-day", "--max-k", "0",
				  "--out", out, NULL };
	struct stat sb;

	(void)state;
	snprintf(out, sizeof(out), "%s/bad", tmp_dir);
	assert_int_equal(run_sim(bad_tiny), 2);
	assert_int_equal(run_sim(bad_models), 2);
	assert_int_equal(run_sim(bad_pct), 2);
	assert_int_equal(run_sim(bad_day), 2);
	assert_int_not_equal(stat(out, &sb), 0);
}

/* cloud-day's sweep: pass means the SLO held; static never over-commits. */
static void test_cloudday(void **state)
{
	char out[512], path[600];
	const char *argv[] = { sim_bin, "cloud-day", "--tiny", "1", "--quiet",
			       "--out", out, NULL };
	struct csv c;
	int r;

	(void)state;
	snprintf(out, sizeof(out), "%s/day", tmp_dir);
	assert_int_equal(run_sim(argv), 0);
	snprintf(path, sizeof(path), "%s/cloudday.csv", out);
	assert_int_equal(csv_load(&c, path), 0);
	assert_true(c.nrow >= 5);
	for (r = 0; r < c.nrow; r++) {
		bool pass = num(&c, r, "pass") != 0;

		assert_true(num(&c, r, "vms_max") <= num(&c, r, "k"));
		assert_true(num(&c, r, "vms_avg") <= num(&c, r, "vms_max") + 1e-9);
		assert_true(num(&c, r, "oom_in_profile") <= num(&c, r, "oom"));
		if (pass)
			assert_true(num(&c, r, "p99") <= 1.2 &&
				    num(&c, r, "oom_in_profile") == 0);
		if (num(&c, r, "iterations") > 0)
			assert_true(num(&c, r, "median") >= 0.9999);
		/* Eight profiles of VRAM: static holds at most eight VMs. */
		if (!strcmp(str(&c, r, "model"), "static"))
			assert_true(num(&c, r, "vms_max") <= 8);
		if (is_vgmem(str(&c, r, "model")))
			assert_true(num(&c, r, "refused") == 0);
	}
	free(c.buf);
}

/*
 * A request trace of 60 requests, one every 2 s, in plain seconds, sizes
 * from a fixed formula; rows beyond the header replaced by bad if given.
 */
static void write_trace(const char *path, const char *bad)
{
	FILE *f = fopen(path, "w");
	int i;

	assert_non_null(f);
	fprintf(f, "TIMESTAMP,ContextTokens,GeneratedTokens\n");
	for (i = 0; !bad && i < 60; i++)
		fprintf(f, "%d.5,%d,%d\n", 2 * i, 200 + i * 997 % 3000,
			10 + i * 331 % 900);
	if (bad)
		fputs(bad, f);
	fclose(f);
}

static void run_replay(const char *trace, const char *run)
{
	char out[512];
	const char *argv[] = { sim_bin, "replay", "--quiet", "--trace", trace,
			       "--vms", "4", "--gpu", "48G", "--models",
			       "vgmem:policy=cold,static,oracle", "--out", out,
			       NULL };

	snprintf(out, sizeof(out), "%s/%s", tmp_dir, run);
	assert_int_equal(run_sim(argv), 0);
}

/*
 * 4 VMs of 12.55 GiB weights on 48 GiB: pressure for those that serve
 * every VM; static's 20 GiB profiles (+ scratch) fit twice.
 */
static void test_replay(void **state)
{
	char trace[512], path[600];
	struct csv c;
	int r, cold = 0;

	(void)state;
	snprintf(trace, sizeof(trace), "%s/rq.csv", tmp_dir);
	write_trace(trace, NULL);
	run_replay(trace, "rp");
	run_replay(trace, "rp2");
	assert_true(same_file("rp", "rp2", "replay.md"));
	assert_true(same_file("rp", "rp2", "replay.csv"));
	out_path(path, sizeof(path), "rp", "replay.csv");
	assert_int_equal(csv_load(&c, path), 0);
	for (r = 0; r < c.nrow; r++) {
		const char *m = str(&c, r, "model");

		assert_true(num(&c, r, "requests_failed") <=
			    num(&c, r, "requests_placed"));
		assert_true(num(&c, r, "admitted") <= num(&c, r, "k"));
		if (num(&c, r, "pass") != 0)
			assert_true(num(&c, r, "requests_failed") == 0 &&
				    num(&c, r, "ttft_p99") <= 1.2 &&
				    num(&c, r, "token_p99") <= 1.2);
		if (num(&c, r, "requests_placed") > num(&c, r, "requests_failed"))
			assert_true(num(&c, r, "ttft_p50") >= 0.9999 &&
				    num(&c, r, "token_p50") >= 0.9999);
		if (!strcmp(m, "static"))
			assert_true(num(&c, r, "admitted") <= 2);
		if (is_vgmem(m) && num(&c, r, "k") == 4) {
			cold++;
			assert_true(num(&c, r, "admitted") == 4);
			assert_true(num(&c, r, "requests_failed") == 0);
			assert_true(num(&c, r, "requests_placed") == 60);
			/* 50 GiB of weights read every step on 48 GiB: it moves. */
			assert_true(num(&c, r, "pcie_copy_bytes") +
				    num(&c, r, "pcie_access_bytes") > 0);
		}
	}
	assert_int_equal(cold, 1);
	free(c.buf);
	out_path(path, sizeof(path), "rp", "replay_vm4.svg");
	assert_int_equal(access(path, R_OK), 0);
}

/* A malformed row names FILE:LINE; usage errors exit 2 before any run. */
static void test_replay_errors(void **state)
{
	char trace[512], out[512], err[512];
	const char *bad[] = { sim_bin, "replay", "--trace", trace, "--out", out,
			      NULL };
	const char *no_trace[] = { sim_bin, "replay", "--out", out, NULL };
	const char *vram[] = { sim_bin, "replay", "--trace", trace, "--vram",
			       "64M", "--out", out, NULL };
	char *msg;

	(void)state;
	snprintf(trace, sizeof(trace), "%s/bad.csv", tmp_dir);
	snprintf(out, sizeof(out), "%s/rpbad", tmp_dir);
	snprintf(err, sizeof(err), "%s/rpbad.err", tmp_dir);
	write_trace(trace, "0,100,10\n1,100,-3\n");
	assert_int_equal(run_sim_err(bad, err), 1);
	msg = slurp(err, NULL);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "bad.csv:3: column 3 (GeneratedTokens)"));
	free(msg);
	assert_int_equal(run_sim_err(no_trace, err), 2);
	assert_int_equal(run_sim_err(vram, err), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_replay_errors),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_models_table),
		cmocka_unit_test(test_vm_table),
		cmocka_unit_test(test_oracle_rows),
		cmocka_unit_test(test_bad_usage),
		cmocka_unit_test(test_cloudday),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
