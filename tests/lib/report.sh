# SPDX-License-Identifier: GPL-2.0 OR MIT
# report.sh: the result lines of the shell tests, sourced by each of them
# (tests/unit/*.sh, tests/deb, tests/dkms, tests/walk). They print what
# cmocka prints, so `make run-tests` and `make check` count shell tests and C
# tests alike (run-tests sums the "[  PASSED  ] N test(s)." lines).
#
#   ok NAME                     one case passed
#   not_ok NAME [DETAIL...]     one case failed; each DETAIL on its own line
#   stamp MESSAGE               progress of a long test: "PROG: [S s] MESSAGE",
#                               PROG being REPORT_NAME or the script's name
#   finish                      the totals; exits 1 if any case failed, else 0
#   die NAME [DETAIL...]        not_ok, then finish: for a failure after
#                               which nothing else can be tested
#
# Sourcing it sets passed=0, failed=0 and the clock stamp counts from.

passed=0
failed=0
report_t0=$(date +%s)

ok() { echo "[       OK ] $1"; passed=$((passed + 1)); }

not_ok()
{
	echo "[  FAILED  ] $1"
	shift
	[ $# = 0 ] || printf '    %s\n' "$@"
	failed=$((failed + 1))
}

stamp() { echo "${REPORT_NAME:-$(basename "$0" .sh)}: [$(( $(date +%s) - report_t0 )) s] $*"; }

finish()
{
	echo "[==========] $((passed + failed)) test(s) run."
	echo "[  PASSED  ] $passed test(s)."
	[ "$failed" = 0 ] || { echo "[  FAILED  ] $failed test(s)."; exit 1; }
	exit 0
}

die() { not_ok "$@"; finish; }
