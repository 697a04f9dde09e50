# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Helpers for cases that boot a real nested guest (L2) with a vgmem mdev
# (busybox sh, sourced by lib.sh). Such a case says "# vmtest-needs: qemu":
# run.sh then appends tests/vm/mkl2.sh's archive (QEMU, virtiofsd, L2's
# kernel and initramfs) to the test VM's initramfs.
#
#   l2_start NAME --mdev UUID --script FILE [--share TAG DIR] [--machine M]
#            [--smp N] [--mem MIB] [--append "KERNEL ARGS"]
#            [--qemu BINARY] [--vfio-opts ",OPT=V..."] [--monitor] [--signal]
#            [--incoming URI]
#   l2_wait NAME [SECONDS]
#   l2_hmp NAME COMMAND [SECONDS]     (with --monitor)
#   l2_signal NAME LINE               (with --signal)
#   l2_migrate_guest NAME QEMU PARAM...   (the live migration of cases 98, 99)
#   l2_hold_script FILE               (L2's side of a live migration)
#
# l2_start boots L2 in the background: FILE becomes /l2/run.sh in L2 (a
# cpio archive appended to L2's initramfs) and runs there with the helpers
# of tests/vm/l2/lib.sh; with --share, a virtiofsd of ours serves DIR under
# TAG (L2: l2_mount_share TAG /mnt). l2_wait waits for L2 to power off,
# prints its console prefixed with "[NAME] " and QEMU's stderr with
# "[NAME qemu] ", the time of each phase, and fails the case unless QEMU
# exited by itself with status 0, L2 said "L2 END rc=0", at least one
# "L2 PASS" and no "L2 FAIL". Everything of NAME is in $(l2_dir NAME), the
# phase times in its file "times".
#
# For live migration: --qemu picks another QEMU (L2_QEMU10, QEMU 10 from
# "# vmtest-needs: qemu10", or L2_QEMU72, Debian's 7.2 with qemu-patches/
# from "# vmtest-needs: qemu72": both speak VFIO migration v2; Debian's own
# 7.2 only v1), --vfio-opts adds to
# the vfio-pci device (e.g. ",enable-migration=on"), --monitor gives QEMU a
# human monitor on FIFOs that l2_hmp talks to (prints what QEMU answered),
# --signal gives L2 a second serial port, /dev/ttyS1, that l2_signal writes
# a line into, and --incoming starts QEMU waiting for a migration (a
# destination: the same arguments as the source's but --mdev and the
# paths, which are NAME's own).
#
# An L2 that libvirt runs ("# vmtest-needs: qemu libvirt"):
#
#   l2_prepare NAME --script FILE      L2's initrd: $(l2_dir NAME)/initrd
#   (the case defines a domain booting $L2_DIR/vmlinux with that initrd,
#    the kernel arguments $L2_APPEND and its serial console in the file
#    $(l2_dir NAME)/console, and starts it)
#   l2_domain NAME DOMAIN [URI RUN LOG]  L2 NAME is DOMAIN, running from now
#   l2_wait NAME [SECONDS]
#
# l2_wait judges it as above, "QEMU exited by itself with status 0" being
# "the domain is shut off with the reason shutdown" (L2 powered off), and
# prints libvirt's log of the domain and of its virtiofsd.

L2_DIR=/l2
# pc: q35 is no faster (docs/testing.md), and microvm's Debian kernel
# hangs calibrating its TSC under TCG (no PIT, HPET or PM timer reference).
# One vCPU, since each L2 vCPU is an L1 thread on 2 L1 vCPUs.
L2_MACHINE=${L2_MACHINE:-pc}
L2_SMP=${L2_SMP:-1}
L2_MEM=${L2_MEM:-256}
# acpi=noirq: L2's devices use MSI, and the INTx routing SeaBIOS's DSDT
# describes (_PRT) is AML too slow to run under nested TCG: it hit ACPICA's
# 30 s loop timeout at each PCI device enable.
# nowatchdog: a nested vCPU stalls for tens of seconds when the host is
# busy, and L2's soft lockup detector reported it as a BUG.
L2_APPEND=${L2_APPEND:-"console=ttyS0 panic=-1 quiet loglevel=4 acpi=noirq nowatchdog"}
L2_POLL=0.5
L2_QEMU10=/opt/qemu10/usr/bin/qemu-system-x86_64
L2_QEMU72=/opt/qemu72/usr/bin/qemu-system-x86_64

l2_dir() {
	echo "/tmp/l2.$1"
}

require_qemu() {
	command -v qemu-system-x86_64 > /dev/null && [ -f $L2_DIR/initramfs.cpio.gz ] ||
		fail "no QEMU or L2 initramfs in the test VM: is '# vmtest-needs: qemu' in the case?"
}

l1_uptime() {
	cut -d' ' -f1 /proc/uptime
}

# secs_since T: seconds from L1 uptime T to now, one decimal.
secs_since() {
	awk -v a="$1" -v b="$(l1_uptime)" 'BEGIN { printf "%.1f", b - a }'
}

l2_start() {
	local name=$1 d mdev= script= tag= share= machine=$L2_MACHINE smp=$L2_SMP mem=$L2_MEM append=
	local qemu=qemu-system-x86_64 vfio_opts= monitor=0 signal=0 incoming=
	shift
	d=$(l2_dir "$name")
	while [ $# -gt 0 ]; do
		case "$1" in
		--mdev) mdev=$2; shift 2 ;;
		--script) script=$2; shift 2 ;;
		--share) tag=$2; share=$3; shift 3 ;;
		--machine) machine=$2; shift 2 ;;
		--smp) smp=$2; shift 2 ;;
		--mem) mem=$2; shift 2 ;;
		--append) append=$2; shift 2 ;;
		--qemu) qemu=$2; shift 2 ;;
		--vfio-opts) vfio_opts=$2; shift 2 ;;
		--monitor) monitor=1; shift ;;
		--signal) signal=1; shift ;;
		--incoming) incoming=$2; shift 2 ;;
		*) fail "l2_start: unknown argument '$1'" ;;
		esac
	done
	[ -n "$mdev" ] && [ -d "$MDEV_DEVS/$mdev" ] || fail "l2_start $name: no mdev '$mdev'"
	l2_prepare "$name" --script "$script"

	set -- -accel tcg -M "$machine" -smp "$smp" -m "$mem" \
		-nodefaults -no-user-config -display none -no-reboot \
		-serial "file:$d/console" \
		-kernel $L2_DIR/vmlinux -initrd "$d/initrd" -append "$L2_APPEND $append" \
		-device "vfio-pci,sysfsdev=$MDEV_DEVS/$mdev$vfio_opts"
	command -v "$qemu" > /dev/null || fail "l2_start $name: no QEMU '$qemu'"
	if [ $monitor = 1 ]; then
		mkfifo "$d/mon.in" "$d/mon.out"
		set -- "$@" -chardev "pipe,id=mon,path=$d/mon" -mon chardev=mon,mode=readline
	fi
	if [ $signal = 1 ]; then
		mkfifo "$d/sig.in" "$d/sig.out"
		set -- "$@" -chardev "pipe,id=sig,path=$d/sig" -serial chardev:sig
	fi
	[ -n "$incoming" ] && set -- "$@" -incoming "$incoming"
	if [ -n "$tag" ]; then
		l2_virtiofsd "$name" "$share" || exit 1
		# vhost-user needs L2's RAM in a shared mapping virtiofsd can map.
		set -- "$@" -chardev "socket,id=vfs,path=$d/virtiofsd.sock" \
			-device "vhost-user-fs-pci,chardev=vfs,tag=$tag" \
			-object "memory-backend-memfd,id=mem,size=${mem}M,share=on" \
			-numa node,memdev=mem
	fi
	echo "$qemu $*" > "$d/cmdline"
	l1_uptime > "$d/t.launch"
	(
		"$qemu" "$@" > "$d/qemu.out" 2> "$d/qemu.err" < /dev/null &
		echo $! > "$d/qemu.pid"
		wait $!
		echo $? > "$d/qemu.rc"
	) &
	while [ ! -s "$d/qemu.pid" ]; do sleep 0.1; done
	# QEMU opens the FIFOs read-write: these readers never block it.
	[ $monitor = 1 ] && { cat "$d/mon.out" > "$d/mon.log" & }
	[ $signal = 1 ] && { cat "$d/sig.out" > "$d/sig.log" & }
	return 0
}

# l2_hmp NAME COMMAND [SECONDS]: one monitor command; prints QEMU's answer
# (without the line editor's echo) once the prompt is back, or fails.
l2_hmp() {
	local d before bound=${3:-60}
	d=$(l2_dir "$1")
	[ -p "$d/mon.in" ] || fail "l2_hmp $1: no monitor (l2_start --monitor)"
	before=$(wc -c < "$d/mon.log")
	echo "$2" > "$d/mon.in"
	wait_until "$bound" sh -c "[ \$(wc -c < $d/mon.log) -gt $before ] &&
		tail -c 8 $d/mon.log | grep -q '(qemu) \$'" ||
		fail "l2_hmp $1: no prompt within ${bound}s after '$2'"
	# The first line is the line editor's echo of the command.
	tail -c +$((before + 1)) "$d/mon.log" | tr -d '\r' | sed 1d | grep -v '^(qemu)'
}

# l2_signal NAME LINE: LINE into L2's /dev/ttyS1 (l2_start --signal).
l2_signal() {
	local d
	d=$(l2_dir "$1")
	[ -p "$d/sig.in" ] || fail "l2_signal $1: no signal port (l2_start --signal)"
	echo "$2" > "$d/sig.in"
}

# l2_prepare NAME --script FILE: a fresh $(l2_dir NAME) with L2's initrd,
# FILE appended as /l2/run.sh (the kernel unpacks concatenated archives).
l2_prepare() {
	local name=$1 d
	d=$(l2_dir "$name")
	[ "$2" = --script ] && [ -f "$3" ] || fail "l2_prepare $name: no script '$3'"
	require_qemu
	rm -rf "$d"
	mkdir -p "$d/add/l2"
	cp "$3" "$d/add/l2/run.sh"
	cp $L2_DIR/initramfs.cpio.gz "$d/initrd"
	(cd "$d/add" && find . | cpio -o -H newc 2>/dev/null) | gzip >> "$d/initrd"
}

# l2_domain NAME DOMAIN [URI RUN LOG]: L2 NAME runs as libvirt's DOMAIN
# from now on; libvirt's logs of its QEMU and virtiofsd stand for ours. A
# libvirtd other than qemu:///system's (another mount namespace) is named
# by its URI and the directories that are its /run/libvirt and
# /var/log/libvirt here.
l2_domain() {
	local d run=${4:-/run/libvirt} log=${5:-/var/log/libvirt}
	d=$(l2_dir "$1")
	echo "$2" > "$d/domain"
	echo "${3:-qemu:///system}" > "$d/lv.uri"
	echo "$run" > "$d/lv.run"
	l1_uptime > "$d/t.launch"
	ln -sf "$log/qemu/$2.log" "$d/qemu.err"
	ln -sf "$log/qemu/$2-fs0-virtiofsd.log" "$d/virtiofsd.log"
}

# l2_exited NAME: true once L2's QEMU is gone, its status in qemu.rc. A
# domain is polled through libvirt's status file (removed when it stops,
# cheaper than a virsh call), then its state read once: 0 for "shut off
# (shutdown)", which only the guest's own poweroff gives; 1 for any other
# reason, kept in the file domstate.
l2_exited() {
	local d dom st
	d=$(l2_dir "$1")
	[ -f "$d/qemu.rc" ] && return 0
	[ -f "$d/domain" ] || return 1
	dom=$(cat "$d/domain")
	[ -f "$(cat "$d/lv.run")/qemu/$dom.xml" ] && return 1
	st=$(virsh -c "$(cat "$d/lv.uri")" -q domstate --reason "$dom" 2>&1) || return 1
	case "$st" in
	"shut off"*) ;;
	*) return 1 ;;
	esac
	echo "$st" > "$d/domstate"
	[ "$st" = "shut off (shutdown)" ] && echo 0 > "$d/qemu.rc" || echo 1 > "$d/qemu.rc"
}

# l2_kill NAME: ends L2's QEMU at once.
l2_kill() {
	local d
	d=$(l2_dir "$1")
	if [ -f "$d/domain" ]; then
		virsh -c "$(cat "$d/lv.uri")" -q destroy "$(cat "$d/domain")" > /dev/null 2>&1
	else
		kill -9 "$(cat "$d/qemu.pid")" 2>/dev/null
	fi
}

# l2_virtiofsd NAME DIR: starts virtiofsd on DIR for L2 NAME and waits for
# its socket. sandbox=chroot: the default (namespaces, pivot_root) cannot
# leave an initramfs root. L2_VIRTIOFS_CACHE (default auto) is virtiofsd's
# cache mode: "always" keeps L2's page cache across opens (and allows
# shared writable mmap, which "none"'s direct I/O refuses).
l2_virtiofsd() {
	local d
	d=$(l2_dir "$1")
	[ -d "$2" ] || fail "l2_start $1: no share directory '$2'"
	(
		/usr/lib/qemu/virtiofsd --socket-path="$d/virtiofsd.sock" \
			-o source="$2" -o cache="${L2_VIRTIOFS_CACHE:-auto}" \
			-o sandbox=chroot -o log_level=warn \
			> "$d/virtiofsd.log" 2>&1 < /dev/null &
		echo $! > "$d/virtiofsd.pid"
		wait $!
		echo $? > "$d/virtiofsd.rc"
	) &
	wait_until 60 test -S "$d/virtiofsd.sock" ||
		fail "l2_start $1: virtiofsd made no socket within 60 s: $(tail -n 3 "$d/virtiofsd.log")"
}

# l2_console NAME: L2's console so far, without the serial line's CRs.
l2_console() {
	tr -d '\r' < "$(l2_dir "$1")/console" 2>/dev/null
}

l2_print() {
	local d
	d=$(l2_dir "$1")
	l2_console "$1" | sed "s/^/[$1] /"
	[ -f "$d/qemu.err" ] && sed "s/^/[$1 qemu] /" "$d/qemu.err"
	[ -f "$d/virtiofsd.log" ] && sed "s/^/[$1 virtiofsd] /" "$d/virtiofsd.log"
	return 0
}

l2_wait() {
	local name=$1 bound=${2:-1800} d t_launch t_init= t_end= t_exit what rc k_init k_end f
	# Not "n": ash's locals are dynamic, and wait_until counts in n.
	d=$(l2_dir "$name")
	t_launch=$(cat "$d/t.launch")
	# Polled, so each phase's time is good to about $L2_POLL s.
	while ! l2_exited "$name"; do
		if [ -z "$t_init" ] && grep -q '^L2 INIT' "$d/console" 2>/dev/null; then
			t_init=$(l1_uptime)
		fi
		if [ -z "$t_end" ] && grep -q '^L2 END' "$d/console" 2>/dev/null; then
			t_end=$(l1_uptime)
		fi
		if [ "$(secs_since "$t_launch" | cut -d. -f1)" -ge "$bound" ]; then
			if [ -z "$t_init" ]; then
				what="'L2 INIT' (L2's kernel to start its init)"
			elif [ -z "$t_end" ]; then
				what="'L2 END' (L2's script to finish)"
			else
				what="QEMU to exit after L2's poweroff"
			fi
			l2_kill "$name"
			l2_print "$name"
			fail "L2 $name: waited ${bound}s for $what"
		fi
		sleep $L2_POLL
	done
	t_exit=$(l1_uptime)
	rc=$(cat "$d/qemu.rc")
	l2_print "$name"
	[ -n "$t_init" ] || t_init=$t_exit
	[ -n "$t_end" ] || t_end=$t_exit
	k_init=$(l2_console "$name" | sed -n 's/^L2 INIT uptime=\([0-9.]*\).*/\1/p')
	k_end=$(l2_console "$name" | sed -n 's/^L2 END .*uptime=\([0-9.]*\).*/\1/p')
	if [ -n "$k_init" ]; then
		awk -v l="$t_launch" -v i="$t_init" -v e="$t_end" -v x="$t_exit" \
			-v ki="$k_init" -v ke="${k_end:-?}" 'BEGIN {
			printf "launch to init %.1fs (L2 kernel up %ss at init), work %.1fs " \
				"(L2 uptime %ss at end), poweroff %.1fs, total %.1fs\n",
				i - l, ki, e - i, ke, x - e, x - l }' > "$d/times"
	else
		# A migration's destination: L2 started on the source.
		awk -v l="$t_launch" -v e="$t_end" -v x="$t_exit" -v ke="${k_end:-?}" 'BEGIN {
			printf "launch to END %.1fs (an incoming L2, L2 uptime %ss at end), " \
				"poweroff %.1fs, total %.1fs\n", e - l, ke, x - e, x - l }' > "$d/times"
	fi
	echo "l2 $name: $(cat "$d/times")"
	l2_virtiofsd_reap "$name"

	[ -f "$d/domstate" ] && [ "$rc" != 0 ] &&
		fail "L2 $name: domain $(cat "$d/domain") $(cat "$d/domstate"), not by L2's poweroff"
	[ "$rc" -lt 128 ] || fail "L2 $name: QEMU killed by signal $((rc - 128))"
	[ "$rc" = 0 ] || fail "L2 $name: QEMU exited $rc: $(tail -n 1 "$d/qemu.err")"
	f=$(l2_console "$name" | grep -m 1 '^L2 FAIL') && fail "$name: $f"
	l2_console "$name" | grep -q '^L2 END rc=0' ||
		fail "L2 $name: no 'L2 END rc=0' on its console: $(l2_console "$name" | grep '^L2 END' || echo 'L2 never finished its script')"
	l2_console "$name" | grep -q '^L2 PASS' || fail "L2 $name: no 'L2 PASS' on its console"
}

# virtiofsd ends by itself when its vhost-user peer (QEMU) is gone.
l2_virtiofsd_reap() {
	local d
	d=$(l2_dir "$1")
	[ -f "$d/virtiofsd.pid" ] || return 0
	if ! wait_until 60 test -f "$d/virtiofsd.rc"; then
		kill -9 "$(cat "$d/virtiofsd.pid")" 2>/dev/null
		fail "L2 $1: virtiofsd still running 60 s after QEMU exited"
	fi
}

# l2_hold_script FILE: L2's side of a live migration (l2_migrate_guest,
# 99-migrate-libvirt) as FILE: 8 MiB written through the guest driver and
# checksummed round after round (vgmem-guest --pci fill-check --hold),
# "L2 MIGRATE-READY" on the console once it holds, then a line read from
# /dev/ttyS1 (L1 writes it once L2 runs on the destination); then every
# check must have passed and new work runs (workload stream).
l2_hold_script() {
	cat > "$1" <<'L2'
t0=$(l2_uptime)
if [ ! -c /dev/vgmem0 ]; then
	l2_fail "no /dev/vgmem0: the guest driver did not bind the vGPU"
else
	stty -F /dev/ttyS1 -echo 2>/dev/null
	vgmem-guest --pci auto fill-check --size 8M --bo 2M --seed 98 --hold 100000 \
		> /tmp/fc.out 2>&1 &
	fc=$!
	n=0
	while ! grep -q '^hold ready' /tmp/fc.out && [ $n -lt 6000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	if grep -q '^hold ready' /tmp/fc.out; then
		# L1 migrates us now, and says so on ttyS1 from the destination.
		echo "L2 MIGRATE-READY uptime=$(l2_uptime)"
		read -r line < /dev/ttyS1
		echo "L2 told: $line (uptime $(l2_uptime))"
	fi
	kill -TERM $fc 2>/dev/null
	wait $fc
	rc=$?
	last=$(tail -n 1 /tmp/fc.out)
	case "$rc $last" in
	"0 RESULT ok"*) l2_pass "fill-check held 8 MiB through the migration: $last" ;;
	*) cat /tmp/fc.out; l2_fail "fill-check across the migration exited $rc: $last" ;;
	esac
	out=$(vgmem-guest --pci auto workload stream --ws 4M --iters 2 --seed 5 2>&1)
	case "$out" in
	*"RESULT ok"*) l2_pass "new work on the destination: $(echo "$out" | grep RESULT)" ;;
	*) echo "$out"; l2_fail "workload stream on the destination" ;;
	esac
fi
echo "L2 work took $(awk -v a="$t0" -v b="$(l2_uptime)" 'BEGIN { printf "%.1f", b - a }')s"
L2
}

# l2_migrate_guest NAME QEMU PARAM...: the live migration of a real L2
# between two QEMU processes in this VM (cases 98 and 99; the case did
# vg_setup with two GPUs). L2 runs under QEMU (a path: $L2_QEMU10,
# $L2_QEMU72) with a 1g mdev on GPU 0 (enable-migration=on) and keeps 8 MiB
# of GPU memory under continuous checksum checks (vgmem-guest --pci
# fill-check --hold: GPU work in flight when the source stops); a second
# QEMU with an mdev on GPU 1 waits with -incoming on /tmp/NAME.sock; each
# PARAM ("downtime-limit 2000") goes to migrate_set_parameter on the
# source, then "migrate -d". The migration must complete and the
# destination run; the source QEMU quits and its mdev holds nothing; L2,
# told over its second serial port, ends the hold: every check passed on
# both sides, and new work runs on the destination's vGPU; after L2's
# poweroff the destination's mdev holds nothing. Prints QEMU's total time,
# downtime and what it sent. L2s NAME and NAME-dst.
#
# --refused-first: before that, a migration the destination must refuse:
# its mdev's quota cut to 4 MiB, under the 8 MiB L2 holds, so the vGPU's
# data fails on the destination (QEMU there exits non-zero, reporting
# vgmem.ko's EFBIG); the source, "completed" (it has no return path) or
# "failed" (its socket closed under it), runs on with its vGPU (`cont` if
# it stayed paused), and the real migration follows. L2 NAME-bad.
l2_migrate_guest() {
	# Not "n": ash's locals are dynamic, and wait_until counts in n.
	local name qemu src dst opts sock p out st polls t_start t_mig refused=0
	[ "$1" = --refused-first ] && { refused=1; shift; }
	name=$1 qemu=$2
	shift 2
	sock=/tmp/$name.sock
	src=$(mdev_create 1g 0) || exit 1
	dst=$(mdev_create 1g 1) || exit 1

	l2_hold_script /tmp/$name-l2.sh

	opts="--script /tmp/$name-l2.sh --qemu $qemu --vfio-opts ,enable-migration=on --monitor --signal"
	l2_start $name --mdev $src $opts
	t_start=$(l1_uptime)
	# A QEMU that exits (e.g. refusing its arguments) ends the wait.
	wait_until 1500 sh -c "grep -qs '^L2 MIGRATE-READY' $(l2_dir $name)/console ||
		test -f $(l2_dir $name)/qemu.rc"
	if ! grep -qs '^L2 MIGRATE-READY' "$(l2_dir $name)/console"; then
		l2_kill $name
		l2_print $name
		fail "L2 never got its data written and held (no 'L2 MIGRATE-READY'; QEMU's exit status: $(cat "$(l2_dir $name)/qemu.rc" 2>/dev/null || echo 'running after 1500 s'))"
	fi
	info "L2 ready to migrate after $(secs_since "$t_start")s; vGPU on the source: allocated $(mdev_attr $src allocated), resident $(mdev_attr $src resident)"
	[ "$(mdev_attr $src allocated)" -ge 8388608 ] || fail "the source vGPU holds $(mdev_attr $src allocated) bytes, not L2's 8 MiB"

	for p in "$@"; do
		out=$(l2_hmp $name "migrate_set_parameter $p")
		case "$out" in
		*rror* | *nvalid*) fail "migrate_set_parameter $p: $out" ;;
		esac
		info "migration parameter: $p"
	done
	[ $refused = 1 ] && l2_migrate_refused $name $src $dst "$opts"

	rm -f "$sock"
	l2_start $name-dst --mdev $dst $opts --incoming unix:$sock
	wait_until 300 sh -c "ls $sock > /dev/null 2>&1" || {
		l2_kill $name; l2_kill $name-dst; l2_print $name-dst
		fail "the destination QEMU never listened on $sock"
	}
	t_mig=$(l1_uptime)
	l2_hmp $name "migrate -d unix:$sock"
	polls=0
	while :; do
		st=$(l2_hmp $name "info migrate" 120)
		case "$st" in
		*"Migration status: completed"*) break ;;
		*"Migration status: failed"* | *"Migration status: cancelled"*)
			echo "$st"
			l2_kill $name; l2_kill $name-dst; l2_print $name; l2_print $name-dst
			fail "the migration did not complete" ;;
		esac
		polls=$((polls + 1))
		[ $polls -lt 600 ] || { echo "$st"; l2_kill $name; l2_kill $name-dst; fail "migration still running after 600 polls"; }
		sleep 1
	done
	echo "$st" | grep -E '^(total time|downtime|transferred ram|setup|vfio device transferred):' |
		sed 's/^/migration: /'
	info "migrated in $(secs_since "$t_mig")s (L1 time)"
	st=$(l2_hmp $name-dst "info status")
	case "$st" in
	*"VM status: running"*) ;;
	*) l2_kill $name; l2_kill $name-dst; fail "destination after the migration: $st" ;;
	esac

	# The source is done: its QEMU quits, its vGPU is closed and empty.
	echo quit > "$(l2_dir $name)/mon.in"
	wait_until 120 test -f "$(l2_dir $name)/qemu.rc" || { l2_kill $name; fail "the source QEMU did not quit"; }
	l2_print $name
	expect_eq "$(cat "$(l2_dir $name)/qemu.rc")" 0 "the source QEMU's exit status"
	expect_eq "$(mdev_attr $src allocated)" 0 "allocated on the source after its QEMU quit"
	[ "$(mdev_attr $dst allocated)" -ge 8388608 ] || fail "the destination vGPU holds $(mdev_attr $dst allocated) bytes, not L2's 8 MiB"

	l2_signal $name-dst "migrated"
	l2_wait $name-dst 1500
	expect_eq "$(mdev_attr $dst allocated)" 0 "allocated on the destination after L2 powered off"
	mdev_remove $src
	mdev_remove $dst
}

# l2_migrate_refused NAME SRC DST OPTS: l2_migrate_guest --refused-first's
# migration of L2 NAME (on mdev SRC) into mdev DST with its quota cut to
# 4 MiB.
l2_migrate_refused() {
	local name=$1 src=$2 dst=$3 opts=$4 sock=/tmp/$1-bad.sock q st polls d
	d=$(l2_dir $name-bad)
	q=$(mdev_attr $dst quota)
	echo 4194304 > "$MDEV_DEVS/$dst/vgmem/quota" || fail "cutting mdev $dst's quota to 4 MiB"
	rm -f "$sock"
	l2_start $name-bad --mdev $dst $opts --incoming unix:$sock
	wait_until 300 sh -c "ls $sock > /dev/null 2>&1" || {
		l2_kill $name; l2_kill $name-bad; l2_print $name-bad
		fail "the refusing destination QEMU never listened on $sock"
	}
	l2_hmp $name "migrate -d unix:$sock"
	polls=0
	while :; do
		st=$(l2_hmp $name "info migrate" 120)
		case "$st" in
		*"Migration status: completed"* | *"Migration status: failed"*) break ;;
		esac
		polls=$((polls + 1))
		[ $polls -lt 600 ] || { echo "$st"; l2_kill $name; l2_kill $name-bad; fail "the refused migration still running after 600 polls"; }
		sleep 1
	done
	info "source after the refused migration: $(echo "$st" | grep '^Migration status')"
	wait_until 120 test -f "$d/qemu.rc" || { l2_kill $name; l2_kill $name-bad; fail "the refusing destination QEMU did not exit"; }
	[ "$(cat "$d/qemu.rc")" != 0 ] || { l2_print $name-bad; fail "the destination QEMU exited 0 after a vGPU state over its quota"; }
	# EFBIG, vgmem.ko's answer to state over the quota, in QEMU's words:
	# qemu-patches/ name the device ("the device refused its migration
	# data: File too large"), QEMU 10 the failed load.
	grep -q 'File too large' "$d/qemu.err" ||
		{ l2_print $name-bad; fail "the destination QEMU did not report the device's EFBIG (File too large)"; }
	info "the destination refused it: $(grep -m 1 'File too large' "$d/qemu.err")"
	case "$st" in
	*"Migration status: completed"*) l2_hmp $name cont > /dev/null ;;
	esac
	st=$(l2_hmp $name "info status")
	case "$st" in
	*"VM status: running"*) ;;
	*) l2_kill $name; fail "the source after the refused migration: $st" ;;
	esac
	echo "$q" > "$MDEV_DEVS/$dst/vgmem/quota" || fail "restoring mdev $dst's quota"
	expect_eq "$(mdev_attr $dst allocated)" 0 "allocated on the refusing destination after its QEMU exited"
	[ "$(mdev_attr $src allocated)" -ge 8388608 ] ||
		fail "the source vGPU holds $(mdev_attr $src allocated) bytes after the refused migration, not L2's 8 MiB"
}
