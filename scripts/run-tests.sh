#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Runs test programs a few at a time, each under a time limit, and prints
# each one's output whole, headed "== PROGRAM (SECONDS s)", as it ends
# (its wall time, for finding the programs that bound a run): make check's
# tests and tsan phases (Makefile: run-tests, tsan). Most test programs use
# one core, so on a machine of N cores N of them at once take about 1/N of
# the time; every test must pass on a busy machine anyway (docs/testing.md).
# After a failure no new program starts; those running are waited for and
# printed, and the run fails.
#
# Usage: scripts/run-tests.sh [-j JOBS] [-t SECONDS] [-l LOG] [--tsan]
#                             PROGRAM...
#   -j JOBS     programs at once (default: the CPUs, nproc)
#   -t SECONDS  a program's time limit (default 900): a hang fails it
#   -l LOG      every program's output, in the order they ended
#               (default build/test.log); LOG.d/ holds each one's own
#   --tsan      exit status 66 is ThreadSanitizer's report (TSAN_OPTIONS
#               exitcode=66): say so
# The sanitizers' options come from the environment (ASAN_OPTIONS,
# UBSAN_OPTIONS, TSAN_OPTIONS). Exit status: 0 all passed, 1 a program
# failed, 2 bad usage.
set -u

# usage [STATUS]: the usage above; to stdout for --help, else to stderr.
usage() {
	local st=${1:-2}
	sed -n 's/^# \{0,1\}//; /^Usage:/,/bad usage\.$/p' "$0" >&$((st ? 2 : 1))
	exit "$st"
}

jobs=$(nproc 2> /dev/null || echo 1)
limit=900
log=build/test.log
tsan=0
while [ $# -gt 0 ]; do
	case "$1" in
	-j) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
	-l) [ $# -ge 2 ] || usage; log=$2; shift 2 ;;
	--tsan) tsan=1; shift ;;
	-h|--help) usage 0 ;;
	--) shift; break ;;
	-*) echo "run-tests: unknown option '$1'" >&2; usage ;;
	*) break ;;
	esac
done
case "$jobs" in ''|*[!0-9]*|0) echo "run-tests: -j wants a positive number, not '$jobs'" >&2; exit 2 ;; esac
case "$limit" in ''|*[!0-9]*|0) echo "run-tests: -t wants seconds, not '$limit'" >&2; exit 2 ;; esac
[ $# -gt 0 ] || { echo "run-tests: no test program given" >&2; exit 2; }

mkdir -p "$(dirname "$log")"
outs=$log.d
rm -rf "$outs"
mkdir -p "$outs" || exit 1
: > "$log"

declare -A prog_of out_of t0_of
# Microseconds since the epoch, without a process: $EPOCHREALTIME without
# its radix character (a point or a comma, by locale).
now_us() {
	echo "${EPOCHREALTIME/[.,]/}"
}
running=0
failed=0

start() {
	local t=$1 out
	out=$outs/$(printf '%s' "$t" | tr '/' '_').log
	timeout "$limit" "./$t" > "$out" 2>&1 &
	prog_of[$!]=$t
	out_of[$!]=$out
	t0_of[$!]=$(now_us)
	running=$((running + 1))
}

# Waits for any one program, prints its output and judges it.
finish() {
	local pid rc t out head ds
	wait -n -p pid
	rc=$?
	t=${prog_of[$pid]}
	out=${out_of[$pid]}
	ds=$((($(now_us) - t0_of[$pid]) / 100000))
	head="== $t ($((ds / 10)).$((ds % 10)) s)"
	unset "prog_of[$pid]" "out_of[$pid]" "t0_of[$pid]"
	running=$((running - 1))
	echo "$head"
	cat "$out"
	{ echo "$head"; cat "$out"; } >> "$log"
	[ $rc -eq 0 ] && return 0
	{
		[ $rc -eq 124 ] && echo "TIMEOUT ($limit s): $t"
		[ $tsan = 1 ] && [ $rc -eq 66 ] && echo "ThreadSanitizer reported (above): $t"
		echo "FAILED: $t (exit $rc)"
	} | tee -a "$log"
	failed=$((failed + 1))
}

for t in "$@"; do
	[ $failed = 0 ] || break
	while [ $running -ge "$jobs" ]; do finish; done
	[ $failed = 0 ] || break
	start "$t"
done
while [ $running -gt 0 ]; do finish; done
[ $failed = 0 ]
