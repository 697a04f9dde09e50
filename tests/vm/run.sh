#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Runs the in-VM tests: builds the modules (the host's two and, for nested
# guests, the guest driver) and the static guest programs,
# fetches Debian's kernel matching the installed headers (or, with
# VM_KERNEL=6.12, the 6.12 kernel of bookworm-backports with its headers, and
# builds the modules for it), makes the initramfs, boots it under QEMU TCG
# and judges the console log. Fails on any failed case,
# a missing "VMTEST DONE" (crash, hang, panic) and on any line of
# tests/vm/bad-patterns.txt in the kernel log. See docs/testing.md.
#
# Usage: tests/vm/run.sh [--case NAME[,NAME...]]... [--shell] [--no-build]
#                        [--timeout SECONDS] [--case-timeout SECONDS]
#                        [--append "KERNEL ARGS"] [--bench]
# --bench boots the same VM but runs tests/vm/bench/*.sh (or the --case names
# among them) instead of the cases and prints their "VMBENCH ..." lines.
# Environment: VMCASE (same as --case), VMSTRICT=1 (a skipped case fails),
# VM_KERNEL (6.1, the default: the installed headers' kernel; 6.12: the one
# of bookworm-backports, console log console-6.12.log),
# VM_TIMEOUT (hard limit for the whole VM, default 900 s, plus the limits of
# the cases that boot a nested guest), VM_MEM (MiB),
# VM_SMP, VM_APPEND (extra kernel arguments), QEMU (binary).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
export VM_BUILD
HERE=$ROOT/tests/vm
QEMU=${QEMU:-qemu-system-x86_64}
# Which kernel: its modules' make targets and its console log's name
# (module-6.12 builds the guest driver for 6.12 too).
case "${VM_KERNEL:-}" in
""|6.1) module_targets=(module guest-module); suffix= ;;
6.12) module_targets=(module-6.12); suffix=-6.12 ;;
*) echo "vm: VM_KERNEL=$VM_KERNEL: known kernels are 6.1 (the default) and 6.12" >&2; exit 2 ;;
esac
CONSOLE=$VM_BUILD/console$suffix.log

cases=${VMCASE:-}
shell=0
build=1
timeout=${VM_TIMEOUT:-900}
case_timeout=
append=${VM_APPEND:-}
bench=0

usage() {
	sed -n 's/^# \{0,1\}//; /^Usage:/,/^Environment/p' "$0" | sed '$d' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--case) [ $# -ge 2 ] || usage; cases=${cases:+$cases,}$2; shift 2 ;;
	--case=*) cases=${cases:+$cases,}${1#--case=}; shift ;;
	--shell) shell=1; shift ;;
	--no-build) build=0; shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
	--case-timeout) [ $# -ge 2 ] || usage; case_timeout=$2; shift 2 ;;
	--append) [ $# -ge 2 ] || usage; append="$append $2"; shift 2 ;;
	--bench) bench=1; shift ;;
	-h|--help) usage ;;
	*) echo "run.sh: unknown argument '$1'" >&2; usage ;;
	esac
done

die() { echo "vm: $*" >&2; exit 1; }
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

command -v "$QEMU" > /dev/null || die "$QEMU not found (apt-get install qemu-system-x86)"
mkdir -p "$VM_BUILD"

# Benchmarks are cases from tests/vm/bench/, installed as bench-NAME.
cdir=cases
if [ $bench = 1 ]; then
	cdir=bench
	CONSOLE=$VM_BUILD/bench-console$suffix.log
	[ -n "$cases" ] || cases=$(cd "$HERE/bench" && ls *.sh | sed 's/\.sh$//' | tr '\n' ',')
	cases=${cases%,}
fi

# Each case name must exist, so a typo fails instead of running nothing.
for c in ${cases//,/ }; do
	[ -f "$HERE/$cdir/$c.sh" ] || die "no case '$c' (tests/vm/cases/$c.sh); have: $(cd "$HERE/cases" && ls *.sh | sed 's/\.sh$//' | tr '\n' ' ')"
done

if [ $build = 1 ]; then
	log=$VM_BUILD/build.log
	echo "vm: building the module and the VM programs (log: $log)"
	if ! make -C "$ROOT" --no-print-directory "${module_targets[@]}" vm-bins > "$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "build failed (full log: $log)"
	fi
	# mgmtd and vgmemctl (dynamic; 88-mgmtd): optional, the case skips
	# without them.
	make -C "$ROOT" --no-print-directory build/bin/mgmtd build/bin/vgmemctl \
		>> "$log" 2>&1 || echo "vm: note: mgmtd/vgmemctl did not build (log: $log)"
fi
"$HERE/fetch-kernel.sh"
# shellcheck source=/dev/null
. "$VM_BUILD/kernel.env"
"$HERE/mkinitramfs.sh" "$VM_BUILD/initramfs.cpio.gz"

initrd=$VM_BUILD/initramfs.cpio.gz
if [ $bench = 1 ]; then
	# A second cpio archive appended to the first adds the benchmarks to
	# /vmtest/cases (the kernel unpacks concatenated archives in order).
	bstage=$VM_BUILD/bench-stage
	rm -rf "$bstage"; mkdir -p "$bstage/vmtest/cases"
	for c in ${cases//,/ }; do cp "$HERE/bench/$c.sh" "$bstage/vmtest/cases/bench-$c.sh"; done
	cp "$initrd" "$VM_BUILD/initramfs-bench.cpio.gz"
	(cd "$bstage" && find . | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet) |
		gzip -1 >> "$VM_BUILD/initramfs-bench.cpio.gz"
	initrd=$VM_BUILD/initramfs-bench.cpio.gz
	cases=$(for c in ${cases//,/ }; do printf 'bench-%s,' "$c"; done)
	cases=${cases%,}
fi

# Cases that boot a nested guest ("# vmtest-needs: qemu", see
# tests/vm/l2.sh) get QEMU, virtiofsd and L2's kernel and initramfs in a
# further archive (60 MB unpacked, so only then), and their time limits on
# top of the VM's: a nested guest boots in minutes, not seconds. Those that
# also say "libvirt" get libvirtd, virsh and its QEMU driver in one more
# (tests/vm/mklibvirt.sh), those that say "qemu10" QEMU 10 from
# bookworm-backports at /opt/qemu10 (tests/vm/mkqemu10.sh), those that say
# "qemu72" Debian's QEMU 7.2 with qemu-patches/ at /opt/qemu72
# (tests/vm/mkqemu72.sh; built once, minutes, then cached).
needs_qemu=
needs_libvirt=
needs_qemu10=
needs_qemu72=
selected=${cases//,/ }
[ -n "$selected" ] || selected=$(cd "$HERE/$cdir" && ls *.sh | sed 's/\.sh$//')
for c in $selected; do
	c=${c#bench-}
	f=$HERE/$cdir/$c.sh
	grep -q '^# vmtest-needs:.*\bqemu\b' "$f" || continue
	needs_qemu="$needs_qemu $c"
	grep -q '^# vmtest-needs:.*\blibvirt\b' "$f" && needs_libvirt="$needs_libvirt $c"
	grep -q '^# vmtest-needs:.*\bqemu10\b' "$f" && needs_qemu10="$needs_qemu10 $c"
	grep -q '^# vmtest-needs:.*\bqemu72\b' "$f" && needs_qemu72="$needs_qemu72 $c"
	t=$(sed -n 's/^# vmtest-timeout: *\([0-9][0-9]*\).*/\1/p' "$f" | head -n 1)
	timeout=$((timeout + ${t:-120}))
done
if [ -n "$needs_qemu" ]; then
	"$HERE/mkl2.sh" "$VM_BUILD/l2.cpio.gz"
	cp "$initrd" "$VM_BUILD/initramfs-nested.cpio.gz"
	cat "$VM_BUILD/l2.cpio.gz" >> "$VM_BUILD/initramfs-nested.cpio.gz"
	if [ -n "$needs_libvirt" ]; then
		"$HERE/mklibvirt.sh" "$VM_BUILD/libvirt.cpio.gz"
		cat "$VM_BUILD/libvirt.cpio.gz" >> "$VM_BUILD/initramfs-nested.cpio.gz"
	fi
	if [ -n "$needs_qemu10" ]; then
		"$HERE/mkqemu10.sh" "$VM_BUILD/qemu10.cpio.gz"
		cat "$VM_BUILD/qemu10.cpio.gz" >> "$VM_BUILD/initramfs-nested.cpio.gz"
	fi
	if [ -n "$needs_qemu72" ]; then
		"$HERE/mkqemu72.sh" "$VM_BUILD/qemu72.cpio.gz"
		cat "$VM_BUILD/qemu72.cpio.gz" >> "$VM_BUILD/initramfs-nested.cpio.gz"
	fi
	initrd=$VM_BUILD/initramfs-nested.cpio.gz
fi

cmdline="console=ttyS0 panic=-1 quiet loglevel=5 log_buf_len=4M slub_debug=FZP"
[ -n "$cases" ] && cmdline="$cmdline vmtest.cases=$cases"
[ -n "$case_timeout" ] && cmdline="$cmdline vmtest.timeout=$case_timeout"
[ $shell = 1 ] && cmdline="$cmdline vmtest.shell=1"
cmdline="$cmdline $append"

qemu_args=(-accel tcg -m "${VM_MEM:-2048}" -smp "${VM_SMP:-2}" -nographic -no-reboot
	-kernel "$VMLINUZ" -initrd "$initrd" -append "$cmdline")

if [ $shell = 1 ]; then
	echo "vm: shell in the VM; Ctrl-A X quits QEMU, 'poweroff -f' ends the VM"
	exec "$QEMU" "${qemu_args[@]}"
fi

echo "vm: booting $KVER under TCG (limit ${timeout}s, console: $CONSOLE)"
rc=0
# Live: the result lines; everything goes to the console log, \r stripped
# (line by line, so the log shows a long case's progress as it happens).
timeout -k 10 "$timeout" "$QEMU" "${qemu_args[@]}" < /dev/null 2>&1 |
	stdbuf -oL tr -d '\r' | tee "$CONSOLE" | grep --line-buffered -E '^VMTEST (PASS|FAIL|SKIP|DONE)' ||
	true
rc=${PIPESTATUS[0]}

fails=$(grep -cE '^VMTEST FAIL ' "$CONSOLE" || true)
passes=$(grep -cE '^VMTEST PASS ' "$CONSOLE" || true)
skips=$(grep -cE '^VMTEST SKIP ' "$CONSOLE" || true)
problems=()

[ "$rc" = 124 ] || [ "$rc" = 137 ] && problems+=("the VM did not finish within ${timeout}s")
grep -q '^VMTEST DONE' "$CONSOLE" ||
	problems+=("no 'VMTEST DONE': the VM crashed, hung or panicked (last lines below)")
[ "$fails" -gt 0 ] && problems+=("$fails case(s) failed")
[ "$passes" -gt 0 ] || problems+=("no case passed")
[ "${VMSTRICT:-0}" = 1 ] && [ "$skips" -gt 0 ] && problems+=("$skips case(s) skipped (VMSTRICT=1)")

# Kernel lines (timestamped, from the live console or the final dmesg dump):
# case output is prefixed with "name| " and never matches.
bad=$(grep -E '^\[ *[0-9]+\.[0-9]+\]' "$CONSOLE" | grep -E -f "$HERE/bad-patterns.txt" | head -n 20 || true)
[ -n "$bad" ] && problems+=("kernel log has warnings/bugs:
$bad")

[ $bench = 1 ] && sed -n 's/^[^|]*| \(VMBENCH .*\)/\1/p' "$CONSOLE"
echo "vm: $passes passed, $fails failed, $skips skipped in $(elapsed)s (console: $CONSOLE)"
if [ ${#problems[@]} -gt 0 ]; then
	for p in "${problems[@]}"; do echo "vm: FAIL: $p"; done
	if ! grep -q '^VMTEST DONE' "$CONSOLE"; then
		echo "vm: last console lines:"
		tail -n 40 "$CONSOLE" | sed 's/^/  /'
	fi
	exit 1
fi
[ "$skips" -gt 0 ] && echo "vm: note: skipped cases wait for components not built yet"
echo "vm: OK"
