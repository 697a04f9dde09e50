#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Runs the fuzzers of build/fuzz/bin (tests/fuzz/fuzz.mk, docs/testing.md).
#   run.sh --check --seconds S NAME...   each over its seed corpus
#       (tests/fuzz/corpus/NAME: every input once), then S seconds of
#       exploration shared among them, in a scratch corpus that is thrown away
#   run.sh --seconds S [--keep] NAME...  each for S seconds, its corpus in
#       build/fuzz/corpus/NAME (seeded from the tree's, kept between runs)
#   run.sh --runs N ...                  also stop each after N executions
#       (whichever comes first: N inputs or its share of the seconds)
# Crashes, leaks, timeouts and out-of-memory (2 GB) fail the run; the input
# is left in build/fuzz/crash/. An input's time limit is FUZZ_TIMEOUT
# seconds, by default 10 for a run and 60 for --check: every input here
# takes milliseconds alone, but a job starved on a shared machine once went
# a minute between inputs, and make check must not fail for slowness (a
# hang is caught either way). Prints one line per fuzzer:
# executions, rate, coverage (edges and features) and corpus size.
set -uo pipefail
cd "$(dirname "$0")/../.."

check=0 seconds=300 runs=0 names=()
while [ $# -gt 0 ]; do
	case "$1" in
	--check) check=1; shift ;;
	--seconds) seconds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) names+=("$1"); shift ;;
	esac
done
[ ${#names[@]} -gt 0 ] || { echo "run.sh: no fuzzers named" >&2; exit 2; }

B=build/fuzz
mkdir -p "$B/crash" "$B/logs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
timeout=${FUZZ_TIMEOUT:-$([ $check = 1 ] && echo 60 || echo 10)}
opts=(-timeout="$timeout" -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1
      -artifact_prefix="$B/crash/")
[ "$runs" -gt 0 ] && opts+=(-runs="$runs")
per=$(( seconds / ${#names[@]} ))
[ "$per" -ge 1 ] || per=1
failed=0

stats() {	# $1 log: "execs N, X/s, cov E, ft F, corpus C"
	local e r c f n
	e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -n1)
	r=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$1" | tail -n1)
	c=$(grep -oE 'cov: [0-9]+' "$1" | tail -n1 | cut -d' ' -f2)
	f=$(grep -oE 'ft: [0-9]+' "$1" | tail -n1 | cut -d' ' -f2)
	n=$(grep -oE 'corp: [0-9]+' "$1" | tail -n1 | cut -d' ' -f2)
	echo "execs ${e:-?}, ${r:-?}/s, cov ${c:-?} edges, ft ${f:-?}, corpus ${n:-?}"
}

# A harness whose inputs are longer than 4 KiB says so in a file beside
# it: tests/fuzz/NAME.options, libFuzzer flags that follow the defaults.
for n in "${names[@]}"; do
	bin=$B/bin/$n seeds=tests/fuzz/corpus/$n log=$B/logs/$n.log
	own=()
	[ -f "tests/fuzz/$n.options" ] && read -r -a own < "tests/fuzz/$n.options"
	[ -x "$bin" ] || { echo "fuzz: $bin not built" >&2; exit 2; }
	[ -d "$seeds" ] || { echo "fuzz: no seed corpus $seeds" >&2; exit 2; }
	t0=$(date +%s)
	if [ $check = 1 ]; then
		# Every seed once: each must pass its invariants as it stands.
		if ! "$bin" "${opts[@]}" "${own[@]}" -runs=0 "$seeds" > "$log" 2>&1; then
			echo "fuzz: $n FAILED on its seed corpus (log: $log)"; tail -n 30 "$log"
			failed=1; continue
		fi
		work=$(mktemp -d)
		"$bin" "${opts[@]}" "${own[@]}" -max_total_time="$per" "$work" "$seeds" >> "$log" 2>&1
		rc=$?
		rm -rf "$work"
	else
		corpus=$B/corpus/$n
		mkdir -p "$corpus"
		"$bin" "${opts[@]}" "${own[@]}" -max_total_time="$per" "$corpus" "$seeds" > "$log" 2>&1
		rc=$?
	fi
	if [ $rc != 0 ]; then
		echo "fuzz: $n FAILED after $(( $(date +%s) - t0 )) s (exit $rc, log: $log, input in $B/crash/)"
		grep -E 'ERROR|invariant|SUMMARY' "$log" | head -n 5
		failed=1
	else
		echo "fuzz: $n ok in $(( $(date +%s) - t0 )) s: $(stats "$log")"
	fi
done
exit $failed
