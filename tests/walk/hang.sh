# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# What a QEMU machine that hangs (it did not finish in time, or went
# silent) is doing, asked before it is killed; sourced by
# tests/walk/walk.sh. A walk that hung used to leave only "did not finish"
# and the last line its script printed, which cannot tell a guest deadlock
# from a guest that lost its timer or a QEMU that stopped running it.
#
# The machine must run with a human monitor on two FIFOs, DIR/mon.in and
# DIR/mon.out (-chardev pipe,id=mon,path=DIR/mon -mon chardev=mon,mode=readline),
# whose output something copies into DIR/mon.log, and its kernel with
# nokaslr and kernel.sysrq=1. Debian's System.map is a placeholder (the
# real one is in the -dbg package), so the symbols are the machine's own:
# its /proc/kallsyms text lines, saved by tests/walk/lib.sh.
#
# hang_report PID DIR KALLSYMS CONSOLE prints:
#  - QEMU's threads on the host, with their state and CPU time: vCPU
#    threads that spin use a whole core, a stuck QEMU shows where its
#    threads wait in the host kernel;
#  - each vCPU's RIP three times, two seconds apart, the kernel symbol it
#    is in, whether interrupts are enabled and whether the CPU is halted:
#    CPUs all halted in the idle loop with nothing printed mean the guest
#    gets no timer interrupt; a CPU on one RIP with interrupts off spins on
#    a lock;
#  - what the guest kernel prints on its console for SysRq l (backtraces of
#    the CPUs) and w (blocked tasks), pressed as keys, which it does only
#    if it still takes interrupts;
#  - a verdict line, "hang: verdict: ...", and hang_kind set to one of
#    qemu   QEMU's monitor does not answer: QEMU itself is stuck;
#    guest  the guest kernel answered SysRq: what hangs is in the guest;
#    timer  every sample found every CPU halted with interrupts on, and
#           SysRq got no answer: no interrupt reaches the guest, the
#           emulator stopped delivering them;
#    spin   no answer, and a CPU runs: one spins with interrupts off, or
#           the guest takes no interrupt.

# What hang_report found (above), for its caller.
# shellcheck disable=SC2034
hang_kind=

# The pauses it makes (for the machine to answer, between samples); the
# unit test, whose machine is a script, sets HANG_SLEEP=0.1.
hang_sleep() { sleep "${HANG_SLEEP:-$1}"; }

# hang_hmp DIR COMMAND: QEMU's answer (without the line editor's echo), or
# status 1 if the monitor's prompt is not back within 20 s (HANG_HMP_TRIES
# tenths of a second).
hang_hmp()
{
	local d=$1 before i
	before=$(wc -c < "$d/mon.log")
	echo "$2" > "$d/mon.in"
	for ((i = 0; i < ${HANG_HMP_TRIES:-200}; i++)); do
		if [ "$(wc -c < "$d/mon.log")" -gt "$before" ] &&
			tail -c 8 "$d/mon.log" | grep -q '(qemu) $'; then
			tail -c +$((before + 1)) "$d/mon.log" | tr -d '\r' | sed 1d | grep -v '^(qemu)'
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# hang_sym MAP RIP: "symbol+0xoff [module]" of the text symbol RIP is in, or
# why not. MAP is /proc/kallsyms's text lines; its addresses are 16
# lower-case hex digits, as QEMU prints RIP, so sorting them as text sorts
# them as numbers.
hang_sym()
{
	local map=$1 rip=$2 addr name mod off
	case $rip in
	ffff*) ;;
	*) echo "(user space)"; return ;;
	esac
	[ -s "$map" ] || { echo "(no kernel symbols: $map)"; return; }
	read -r addr name mod < <( { awk '{ print $1, $3, $4 }' "$map"; echo "$rip ~"; } |
		LC_ALL=C sort | grep -B1 ' ~ *$' | head -n 1)
	off=$((16#$rip - 16#$addr))
	if [ "$name" = "~" ] || [ $off -lt 0 ] || [ $off -gt 1048576 ]; then
		echo "(in no symbol the machine had when its last block began)"
	else
		printf '%s+0x%x%s\n' "$name" $off "${mod:+ $mod}"
	fi
}

hang_report()
{
	local pid=$1 d=$2 map=$3 console=$4 n regs at st t cpu rip rfl hlt
	local samples=0 halted=0 answered=0
	echo "hang: QEMU (pid $pid) on the host, its threads:"
	ps -L -o tid,stat,pcpu,time,wchan:28,comm -p "$pid" 2>&1 | sed 's/^/  /'
	if ! st=$(hang_hmp "$d" "info status"); then
		echo "hang: QEMU's monitor does not answer. Its threads' host stacks:"
		for t in /proc/"$pid"/task/*; do
			echo "  thread ${t##*/}:"
			sed 's/^/    /' "$t/stack" 2>&1 | head -n 12
		done
		hang_kind=qemu
		echo "hang: verdict: QEMU itself is stuck (its monitor does not answer)"
		return 0
	fi
	echo "hang: QEMU says: $st"
	for n in 1 2 3; do
		regs=$(hang_hmp "$d" "info registers -a") || { echo "hang: no answer to info registers"; break; }
		# "CPU#0", then "RIP=... RFL=... [...] CPL=0 ... HLT=0".
		while read -r cpu rip rfl hlt; do
			samples=$((samples + 1))
			# Halted waiting for an interrupt (HLT with IF=0 is a
			# CPU stopped for good).
			[ "$hlt" = 1 ] && [ $((16#$rfl & 0x200)) != 0 ] && halted=$((halted + 1))
			printf '  sample %d %s RIP %s %s, interrupts %s%s\n' $n "$cpu" "$rip" \
				"$(hang_sym "$map" "$rip")" \
				"$( [ $((16#$rfl & 0x200)) != 0 ] && echo on || echo off)" \
				"$( [ "$hlt" = 1 ] && echo ", halted")"
		done < <(printf '%s\n' "$regs" | awk '/^CPU#/ { cpu = $1 } /^RIP=/ {
			rip = $1; sub(/^RIP=/, "", rip); rfl = $2; sub(/^RFL=/, "", rfl)
			hlt = $NF; sub(/^HLT=/, "", hlt); print cpu, rip, rfl, hlt }')
		[ $n = 3 ] || hang_sleep 2
	done
	at=$(wc -c < "$console")
	hang_hmp "$d" "sendkey alt-sysrq-9" > /dev/null
	hang_sleep 2
	hang_hmp "$d" "sendkey alt-sysrq-l" > /dev/null
	hang_sleep 5
	hang_hmp "$d" "sendkey alt-sysrq-w" > /dev/null
	hang_sleep 10
	if [ "$(wc -c < "$console")" -gt "$at" ]; then
		answered=1
		echo "hang: the guest kernel's answer to SysRq l and w (console):"
		tail -c +$((at + 1)) "$console" | tr -d '\r' | sed 's/^/  /'
	else
		echo "hang: the guest kernel printed nothing for SysRq l and w"
	fi
	if [ $answered = 1 ]; then
		hang_kind=guest
		echo "hang: verdict: the guest kernel runs and answers SysRq: what hangs is in the guest"
	elif [ $samples -gt 0 ] && [ $halted = $samples ]; then
		hang_kind=timer
		echo "hang: verdict: the guest's CPUs sit halted and no interrupt wakes them (no timer, no key): the emulator stopped delivering them"
	else
		hang_kind=spin
		echo "hang: verdict: the guest took no key and a CPU runs: one spins with interrupts off, or takes no interrupt"
	fi
}
