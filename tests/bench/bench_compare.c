// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bench_compare: a short `vgmem-sim compare` and `vgmem-sim cloud-day`
 * (this build's binary, build/bin/vgmem-sim) and the headline ratios of
 * issue 6, and issue 16's against the oracle, from their summary.json, in
 * the benchmarks' RATIO format; then `vgmem-sim replay` of the Azure LLM
 * trace (tests/data/traces/, read from the working directory, which `make
 * bench` sets to the repository) on vgmem cold, static and the oracle, and
 * issue 16's goals on it. The numbers are simulated device time (the
 * cost model), so they repeat for a seed and do not depend on the host's
 * load; the wall time is printed for information only. The outputs stay
 * in build/bench/compare, build/bench/cloud-day and build/bench/replay.
 */
#include <jansson.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"

extern char **environ;

static int run(const char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawn(&pid, argv[0], NULL, NULL, (char *const *)argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v ? json_number_value(v) : -1;
}

static json_t *load(const char *dir, const char *what)
{
	char path[PATH_MAX + 32];
	json_error_t e;
	json_t *j;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	j = json_load_file(path, 0, &e);
	if (!j)
		fprintf(stderr, "bench_compare: %s: cannot read %s: %s\n", what,
			path, e.text);
	return j;
}

#define REPLAY_TRACE	"tests/data/traces/azure-llm-2023-conv.csv"

/* The replay's goals (issue 16, item 3) from its summary.json. */
static int replay(const char *bin, const char *out)
{
	const char *argv[] = { bin, "replay", "--quiet", "--trace", REPLAY_TRACE,
			       "--models", "vgmem:policy=cold,static,oracle",
			       "--out", out, NULL };
	uint64_t t0 = bench_now_ns(), t1;
	json_t *j, *g;

	if (access(REPLAY_TRACE, R_OK)) {
		fprintf(stderr, "bench_compare: %s not found: run from the "
			"repository (make bench)\n", REPLAY_TRACE);
		return 1;
	}
	if (run(argv)) {
		fprintf(stderr, "bench_compare: vgmem-sim replay failed\n");
		return 1;
	}
	t1 = bench_now_ns();
	printf("replay (Azure LLM conversation trace, 16 VMs; cold, static, "
	       "oracle and the sweep): %.1f s wall; table in %s/replay.md\n",
	       (t1 - t0) / 1e9, out);
	j = load(out, "replay");
	if (!j)
		return 1;
	g = json_object_get(json_object_get(j, "result"), "goals");
	bench_ratio("replay: PCIe bytes vgmem cold / oracle",
		    jnum(g, "cold_vs_oracle_pcie"), 1.5, 1);
	bench_ratio("replay: mean per-token slowdown vgmem cold / oracle",
		    jnum(g, "cold_vs_oracle_mean"), 1.3, 1);
	bench_ratio("replay: failed requests vgmem cold", jnum(g, "cold_failed"),
		    0, 1);
	bench_ratio("replay: Jain's index vgmem cold", jnum(g, "cold_jain"),
		    0.95, 0);
	bench_ratio("replay: VMs per GPU vgmem cold / oracle at p99 1.2",
		    jnum(g, "cold_vs_oracle_density"), 0.85, 0);
	if (json_object_get(g, "cold_vs_static_density"))
		bench_ratio("replay: VMs per GPU vgmem cold / static at p99 1.2",
			    jnum(g, "cold_vs_static_density"), 2.5, 0);
	else
		printf("replay: static serves no VMs-per-GPU cap without a "
		       "failed request: no ratio (replay.md)\n");
	json_decref(j);
	return 0;
}

int main(void)
{
	char exe[PATH_MAX], bin[PATH_MAX + 32], cmp[PATH_MAX + 32],
	     day[PATH_MAX + 32], rpl[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	json_t *jc, *jd, *g, *dens, *m;
	uint64_t t0, t1;
	int up;

	exe[n > 0 ? n : 0] = 0;
	/* build/bench/bench_compare -> build */
	for (up = 0; up < 2 && (slash = strrchr(exe, '/')); up++)
		*slash = 0;
	snprintf(bin, sizeof(bin), "%s/bin/vgmem-sim", exe);
	snprintf(cmp, sizeof(cmp), "%s/bench/compare", exe);
	snprintf(day, sizeof(day), "%s/bench/cloud-day", exe);
	snprintf(rpl, sizeof(rpl), "%s/bench/replay", exe);
	if (access(bin, X_OK)) {
		fprintf(stderr, "bench_compare: %s is not built\n", bin);
		return 1;
	}

	{
		const char *argv[] = { bin, "compare", "--quiet", "--steps", "32",
				       "--out", cmp, NULL };

		t0 = bench_now_ns();
		if (run(argv)) {
			fprintf(stderr, "bench_compare: vgmem-sim compare failed\n");
			return 1;
		}
		t1 = bench_now_ns();
	}
	printf("compare (6 VMs, 32 steps, 8 models x 2 VRAM sizes + baseline, "
	       "and the oracles computed from them): %.1f s wall; tables in "
	       "%s/compare.md\n", (t1 - t0) / 1e9, cmp);
	jc = load(cmp, "compare");
	if (!jc)
		return 1;
	g = json_object_get(json_object_get(jc, "result"), "goals");
	printf("no pressure: vgmem worst p99 slowdown %.4f; swsched median %.3f "
	       "p99 %.3f (mediation)\n", jnum(g, "vgmem_roomy_worst_p99"),
	       jnum(g, "swsched_roomy_median"), jnum(g, "swsched_roomy_p99"));
	bench_ratio("vgmem slowdown without pressure (worst VM p99)",
		    jnum(g, "vgmem_roomy_worst_p99"), 1.01, 1);
	printf("under pressure: out-of-memory failures vgmem %.0f, admission %.0f\n",
	       jnum(g, "vgmem_pressure_oom"), jnum(g, "admission_pressure_oom"));
	bench_ratio("vgmem out-of-memory failures under pressure",
		    jnum(g, "vgmem_pressure_oom"), 0, 1);
	printf("Jain's index under pressure: cold %.3f, lowest vgmem policy "
	       "%.3f (random/lra keep GPUswap's victim rule)\n",
	       jnum(g, "vgmem_pressure_jain_cold"),
	       jnum(g, "vgmem_pressure_jain_min"));
	bench_ratio("Jain's index under pressure (vgmem cold)",
		    jnum(g, "vgmem_pressure_jain_cold"), 0.95, 0);
	printf("p99 slowdown under pressure: cold %.3f, random %.3f\n",
	       jnum(g, "cold_p99"), jnum(g, "random_p99"));
	bench_ratio("cold vs random p99 cut", jnum(g, "cold_vs_random_p99_cut"),
		    0.30, 0);
	printf("worst-case victim p99: vgmem cold %.3f, paging %.3f\n",
	       jnum(g, "vgmem_cold_worst_p99"), jnum(g, "paging_worst_p99"));
	bench_ratio("worst victim vgmem cold / paging",
		    jnum(g, "paging_worst_p99") > 0 ?
		    jnum(g, "vgmem_cold_worst_p99") / jnum(g, "paging_worst_p99") : -1,
		    1.0, 1);
	printf("against the oracle (Belady's MIN) under pressure: PCIe bytes "
	       "vgmem cold %.1f MiB, oracle %.1f MiB; mean slowdown %.3f vs %.3f\n",
	       jnum(g, "cold_pcie_bytes") / 1048576.0,
	       jnum(g, "oracle_pcie_bytes") / 1048576.0, jnum(g, "cold_mean"),
	       jnum(g, "oracle_mean"));
	bench_ratio("PCIe bytes under pressure, vgmem cold / oracle",
		    jnum(g, "cold_vs_oracle_pcie"), 1.5, 1);
	bench_ratio("mean slowdown under pressure, vgmem cold / oracle",
		    jnum(g, "cold_vs_oracle_mean"), 1.3, 1);
	json_decref(jc);

	{
		/* The models the density goals compare; the full sweep is
		 * `vgmem-sim cloud-day` (several minutes). */
		const char *argv[] = { bin, "cloud-day", "--quiet", "--models",
				       "vgmem:policy=cold,static,oracle", "--out",
				       day, NULL };

		t0 = bench_now_ns();
		if (run(argv)) {
			fprintf(stderr, "bench_compare: vgmem-sim cloud-day failed\n");
			return 1;
		}
		t1 = bench_now_ns();
	}
	printf("cloud-day: %.1f s wall; table in %s/cloudday.md\n",
	       (t1 - t0) / 1e9, day);
	jd = load(day, "cloud-day");
	if (!jd)
		return 1;
	dens = json_object_get(json_object_get(jd, "result"), "density");
	{
		const char *key;

		json_object_foreach(dens, key, m)
			printf("  density %-20s %.2f VMs/GPU at p99 <= 1.2\n", key,
			       jnum(m, "density"));
	}
	bench_ratio("density vgmem (cold) / static at p99 1.2",
		    jnum(json_object_get(jd, "result"), "vgmem_cold_vs_static"),
		    2.5, 0);
	bench_ratio("density vgmem (cold) / oracle at p99 1.2",
		    jnum(json_object_get(jd, "result"), "vgmem_cold_vs_oracle"),
		    0.85, 0);
	json_decref(jd);
	return replay(bin, rpl);
}
