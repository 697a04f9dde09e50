#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# make check: every phase in order, each timed; the times are printed at the
# end, and on a failure the phases run so far (docs/testing.md).
#
# One phase runs beside others: building Debian's QEMU 7.2 with
# qemu-patches/ (scripts/build-qemu72.sh, niced, minutes of compiling) starts
# after the module phase and builds while dkms, deb and walk run, which are
# mostly dpkg, debootstrap and a one-vCPU-busy boot and leave a core idle;
# the qemu72 phase then waits for it, and its line says how long the build
# took in all. The vm phase needs it. Its log is build/qemu72.log.
#
# The vm phase runs every case of tests/vm/cases but those of VM61_SKIP on
# Debian 12's 6.1; vm-6.12 runs make vm-check-6.12's cases on 6.12 of
# bookworm-backports. 98-migrate-guest (a real guest live-migrated by QEMU 10
# of bookworm-backports) runs there only: QEMU 10 goes with the backports'
# kernel, and on 6.1 the scenario adds nothing but the
# avail-switchover-bandwidth an operator has to set on a kernel without the
# data-size query, for a nested guest's boot of about 7 minutes. On 6.1 a
# real guest migrates under QEMU 7.2 with qemu-patches/, directly and under
# libvirt.
#
# Usage: scripts/check.sh [-h|--help]   (make check runs it)
# Environment: MAKE (default make), BUILD (default build), VM61_SKIP (cases
# of tests/vm/cases left out on 6.1, comma-separated; default
# 98-migrate-guest).
set -u

case "${1:-}" in
"") ;;
-h|--help) sed -n 's/^# \{0,1\}//; /^Usage:/,/^[^ ]*98-migrate-guest)/p' "$0"; exit 0 ;;
*) echo "check: unknown argument '$1' (--help)" >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
VM61_SKIP=${VM61_SKIP:-98-migrate-guest}
m=("$MAKE" --no-print-directory)

mkdir -p "$BUILD"
times=$BUILD/check-times
: > "$times"
qlog=$BUILD/qemu72.log
qpid=

# The background build leaves with make check, whichever way it ends.
stop_qemu72() {
	if [ -n "$qpid" ]; then
		kill -- -"$qpid" 2> /dev/null
		wait "$qpid" 2> /dev/null
		qpid=
	fi
}
trap stop_qemu72 EXIT
trap 'exit 130' INT TERM

record() {
	printf '  %-8s %5d s%s\n' "$1" "$2" "$3" >> "$times"
}

fail() {
	echo "check: phase times:"
	cat "$times"
	exit "$1"
}

phase() {
	local name=$1 t rc=0
	shift
	t=$(date +%s)
	"$@" || rc=$?
	record "$name" $(($(date +%s) - t)) "$([ $rc = 0 ] || echo '  FAILED')"
	[ $rc = 0 ] || fail $rc
}

# Its own process group (setsid), so that stop_qemu72 ends the compilers too.
qemu72_start() {
	qstart=$(date +%s)
	# shellcheck disable=SC2016 # $1 is the inner shell's
	setsid bash -c 'scripts/build-qemu72.sh > "$1" 2>&1' _ "$qlog" &
	qpid=$!
	echo "check: building QEMU 7.2 with qemu-patches/ beside the next phases (log: $qlog)"
}

qemu72_wait() {
	local t rc=0
	t=$(date +%s)
	wait "$qpid" || rc=$?
	qpid=
	cat "$qlog"
	record qemu72 $(($(date +%s) - t)) "$([ $rc = 0 ] || echo '  FAILED')  (the build: $(($(date +%s) - qstart)) s, beside dkms, deb and walk)"
	[ $rc = 0 ] || fail $rc
}

vm61_cases() {
	local c out=
	for c in tests/vm/cases/*.sh; do
		c=$(basename "$c" .sh)
		[[ ",$VM61_SKIP," == *",$c,"* ]] || out=${out:+$out,}$c
	done
	echo "$out"
}

phase deps "${m[@]}" deps
phase build "${m[@]}" all asan fuzz-bins
phase tests "${m[@]}" run-tests
phase fuzz "${m[@]}" fuzz-check
phase tsan "${m[@]}" tsan
phase module "${m[@]}" module guest-module
qemu72_start
phase dkms "${m[@]}" dkms-check
phase deb "${m[@]}" deb-check
phase walk tests/walk/walk.sh
qemu72_wait
phase vm env VMSTRICT=1 VMCASE="$(vm61_cases)" "${m[@]}" vm-check
phase vm-6.12 env VMSTRICT=1 "${m[@]}" vm-check-6.12
echo "check: OK: every test passed plain and under ASan/UBSan, the threaded ones under TSan; the fuzzers kept their invariants over their corpora; the modules built at W=1 without warnings for 6.1 and 6.12, and through DKMS for both; the Debian packages installed and built their modules in a Debian 12 root, lintian-clean; docs/operations.md walked on a booted Debian 12; the VM suite passed on 6.1 and its core on 6.12, real guests migrated under QEMU 7.2 with qemu-patches/ and QEMU 10"
cat "$BUILD/test-summary"
echo "check: phase times:"
cat "$times"
echo "  total    $(awk '{s += $2} END {print s}' "$times") s"
