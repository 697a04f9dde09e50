#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# tests/walk/hang.sh without a machine that hangs: a script plays QEMU's
# human monitor on the FIFO the walk gives QEMU (answering `info status`,
# `info registers -a` with a given machine state, and SysRq keys with a
# kernel's answer on the console, or not), and each state must get its
# verdict, the one walk.sh decides on: a second boot only for `qemu` (the
# monitor does not answer) and `timer` (every CPU halted with interrupts
# on, no answer to SysRq). hang_sym names kernel and module symbols from a
# kallsyms text and tells user space and unknown addresses apart.
set -uo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
mon=
trap '[ -n "$mon" ] && kill $mon 2>/dev/null; rm -rf "$T"' EXIT
. tests/lib/report.sh
. tests/walk/hang.sh
export HANG_SLEEP=0.1

cat > "$T/kallsyms" <<'EOF'
ffffffff81000000 T _stext
ffffffff81a59280 T default_idle
ffffffff81a59300 t default_idle_call
ffffffff81c0e500 T _raw_spin_lock
ffffffffc0a01000 t vg_return_thread	[vgmem]
ffffffffc0a01400 t vg_return_pass	[vgmem]
EOF

check_sym() # RIP WANT
{
	local got
	got=$(hang_sym "$T/kallsyms" "$1")
	[ "$got" = "$2" ] && ok "hang_sym $1: $2" || not_ok "hang_sym $1 is '$2'" "got '$got'"
}
check_sym ffffffff81a592eb "default_idle+0x6b"
check_sym ffffffff81a59300 "default_idle_call+0x0"
check_sym ffffffffc0a01268 "vg_return_thread+0x268 [vgmem]"
check_sym ffffffffc0a01410 "vg_return_pass+0x10 [vgmem]"
check_sym 00007f1e941f32c0 "(user space)"
check_sym ffffffff80000000 "(in no symbol the machine had when its last block began)"
check_sym ffffffffc0c00000 "(in no symbol the machine had when its last block began)"
got=$(hang_sym "$T/none" ffffffff81a592eb)
[[ $got == "(no kernel symbols: "* ]] && ok "hang_sym without symbols says so" ||
	not_ok "hang_sym without symbols says so" "got '$got'"

# fake_qemu REGS SYSRQ: plays QEMU's monitor in $T (mon.in read, mon.log
# written as the walk's copy of mon.out would be): `info registers -a`
# prints REGS (lines "CPU RIP RFL HLT"); a SysRq key appends a kernel's
# answer to $T/console if SYSRQ is 1. REGS "-" never answers anything.
fake_qemu()
{
	local regs=$1 sysrq=$2 line cpu rip rfl hlt
	rm -f "$T/mon.in" "$T/mon.log" "$T/console"
	mkfifo "$T/mon.in"
	printf 'QEMU 7.2.0 monitor - type help for more information\r\n(qemu) ' > "$T/mon.log"
	: > "$T/console"
	(
		# Read-write: the FIFO never reaches end-of-file between writers.
		exec 3<>"$T/mon.in"
		while IFS= read -r line <&3; do
			[ "$regs" = - ] && continue
			printf '%s\r\n' "$line" >> "$T/mon.log"
			case $line in
			"info status") printf 'VM status: running\r\n' >> "$T/mon.log" ;;
			"info registers -a")
				while read -r cpu rip rfl hlt; do
					printf '\r\n%s\r\nRAX=0000000000000000 RBX=0000000000000000\r\n' "$cpu"
					printf 'RIP=%s RFL=%s [-------] CPL=0 II=0 A20=1 SMM=0 HLT=%s\r\n' "$rip" "$rfl" "$hlt"
				done <<<"$regs" >> "$T/mon.log" ;;
			"sendkey alt-sysrq-"*)
				[ "$sysrq" = 1 ] && printf '[  152.9] sysrq: %s\r\n' "${line##*-}" >> "$T/console" ;;
			esac
			printf '(qemu) ' >> "$T/mon.log"
		done
	) &
	mon=$!
}

# verdict NAME WANT REGS SYSRQ: hang_report on fake_qemu REGS SYSRQ must
# decide WANT; its report is left in $out.
verdict()
{
	local name=$1 want=$2
	fake_qemu "$3" "$4"
	hang_kind=
	# Into a file: in this shell, which hang_kind is set in.
	HANG_HMP_TRIES=30 hang_report $mon "$T" "$T/kallsyms" "$T/console" > "$T/report" 2>&1
	out=$(cat "$T/report")
	kill $mon 2>/dev/null
	wait $mon 2>/dev/null
	mon=
	if [ "$hang_kind" = "$want" ] && grep -q '^hang: verdict: ' <<<"$out"; then
		ok "hang_report: $name: $want"
	else
		not_ok "hang_report: $name is '$want'" "hang_kind '$hang_kind'" "$(tail -n 12 <<<"$out")"
	fi
}

both_idle="CPU#0 ffffffff81a592eb 00000246 1
CPU#1 ffffffff81a592eb 00000202 1"
verdict "CPUs halted, no answer to SysRq" timer "$both_idle" 0
grep -q 'sample 3 CPU#1 RIP ffffffff81a592eb default_idle+0x6b, interrupts on, halted' <<<"$out" &&
	ok "hang_report names each sample's CPU, RIP, symbol, interrupts and halt" ||
	not_ok "hang_report's samples" "$(grep sample <<<"$out")"

verdict "CPUs halted, SysRq answered" guest "$both_idle" 1
grep -q 'sysrq: l' <<<"$out" && grep -q 'sysrq: w' <<<"$out" &&
	ok "hang_report shows the kernel's answer to SysRq l and w" ||
	not_ok "hang_report shows the console's answer" "$(tail -n 5 <<<"$out")"

verdict "a CPU on a lock with interrupts off" spin "CPU#0 ffffffff81c0e504 00000046 0
CPU#1 ffffffff81a592eb 00000246 1" 0
grep -q 'RIP ffffffff81c0e504 _raw_spin_lock+0x4, interrupts off$' <<<"$out" &&
	ok "hang_report: the spinning CPU, interrupts off" ||
	not_ok "hang_report: the spinning CPU" "$(grep sample <<<"$out")"

verdict "CPUs halted with interrupts off" spin "CPU#0 ffffffff81a592eb 00000046 1
CPU#1 ffffffff81a592eb 00000046 1" 0

verdict "a monitor that does not answer" qemu - 0
grep -q "^hang: QEMU's monitor does not answer" <<<"$out" &&
	ok "hang_report: a silent monitor is reported as such" ||
	not_ok "hang_report: a silent monitor" "$(tail -n 5 <<<"$out")"

finish
