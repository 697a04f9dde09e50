# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Helpers for the in-VM cases (busybox sh). /init sources this file and runs
# each case as ". /vmtest/lib.sh; . case.sh" in its own shell: a case ends with
# exit 0 (pass), `fail "reason"` (exit 1) or `skip "reason"` (exit 77, only for
# a component that is not built yet). fail() inside $(...) ends only that
# subshell, so write `u=$(mdev_create 1g) || exit 1`; /init fails the case
# anyway once any fail() has run.

VMTEST_REASON=/tmp/vmtest.reason
# Stock modules /init loads before any case.
VM_STOCK_MODULES="vfio vfio_iommu_type1 mdev"
# Default software GPUs: small, so TCG stays quick. vgmem admits quotas up
# to oversub_pct percent of VRAM: 1600 lets a 256 MiB GPU take four 1g mdevs.
VG_SIM_PARAMS=${VG_SIM_PARAMS:-"gpus=2 vram_mb=256"}
VG_PARAMS=${VG_PARAMS:-"oversub_pct=1600"}
VG_CLASS=/sys/class/vgmem
MDEV_DEVS=/sys/bus/mdev/devices

fail() {
	echo "FAIL: $*"
	echo "$*" > $VMTEST_REASON
	exit 1
}

skip() {
	echo "SKIP: $*"
	echo "$*" > $VMTEST_REASON
	exit 77
}

info() {
	echo "$*"
}

# Module files the initramfs carries (ours live in extra/).
have_module() {
	[ -f "/lib/modules/$(uname -r)/extra/$1.ko" ]
}

module_loaded() {
	[ -d "/sys/module/$1" ] && [ "$(cat /sys/module/$1/initstate 2>/dev/null)" = live ]
}

require_sim() {
	have_module vgmem_sim || skip "vgmem_sim.ko is not built yet"
}

require_guest() {
	require_sim
	command -v vgmem-guest > /dev/null || skip "vgmem-guest is not built yet"
}

# Loads vgmem ($VG_PARAMS) and the software GPUs (params: $VG_SIM_PARAMS,
# or "$@"). Idempotent: returns at once when both are loaded.
vg_load() {
	if ! module_loaded vgmem; then
		modprobe vgmem $VG_PARAMS || return 1
	fi
	if have_module vgmem_sim && ! module_loaded vgmem_sim; then
		if [ $# -gt 0 ]; then
			modprobe vgmem_sim "$@" || return 1
		else
			modprobe vgmem_sim $VG_SIM_PARAMS || return 1
		fi
	fi
	return 0
}

vg_unload() {
	if module_loaded vgmem_sim; then rmmod vgmem_sim || return 1; fi
	if module_loaded vgmem; then rmmod vgmem || return 1; fi
	return 0
}

# vg_setup [SIM PARAMS...]: a case's starting point: vgmem loaded with
# $VG_PARAMS (oversub_pct reset to it), the software GPUs freshly loaded with
# the given parameters (default $VG_SIM_PARAMS), no mdev. Fails the case
# otherwise.
vg_setup() {
	require_sim
	[ -z "$(ls $MDEV_DEVS 2>/dev/null)" ] || fail "mdevs present at start: $(ls $MDEV_DEVS)"
	if module_loaded vgmem_sim; then
		rmmod vgmem_sim || fail "rmmod vgmem_sim"
	fi
	out=$(vg_load "$@" 2>&1) || fail "loading vgmem ($VG_PARAMS) and vgmem_sim (${*:-$VG_SIM_PARAMS}): $out"
	for p in $VG_PARAMS; do
		echo "${p#*=}" > /sys/module/vgmem/parameters/${p%%=*} ||
			fail "setting vgmem parameter $p"
	done
	[ -d "$(gpu_dir 0)" ] || fail "$(gpu_dir 0) missing after loading"
}

# set_oversub PERCENT: how much quota vgmem admits per GPU, from now on.
set_oversub() {
	echo "$1" > /sys/module/vgmem/parameters/oversub_pct || fail "setting oversub_pct to $1"
}

# gpu_attr NAME [GPU]: an attribute of the GPU's class device.
gpu_attr() {
	v=$(cat "$(gpu_dir "${2:-0}")/$1" 2>/dev/null) || fail "reading $(gpu_dir "${2:-0}")/$1"
	echo "$v"
}

new_uuid() {
	cat /proc/sys/kernel/random/uuid
}

gpu_dir() {
	echo "$VG_CLASS/vgmem${1:-0}"
}

# type_dir TYPE [GPU]: TYPE is the short name (1g) or the full one (vgmem-1g).
type_dir() {
	t=$1
	case "$t" in vgmem-*) ;; *) t=vgmem-$t ;; esac
	echo "$(gpu_dir "${2:-0}")/mdev_supported_types/$t"
}

avail() {
	cat "$(type_dir "$1" "$2")/available_instances"
}

# mdev_create TYPE [GPU]: prints the new mdev's UUID, fails the case if the
# kernel refuses. mdev_try_create: the same but returns the error instead.
mdev_try_create() {
	u=$(new_uuid)
	echo "$u" > "$(type_dir "$1" "$2")/create" 2>/dev/null || return 1
	[ -d "$MDEV_DEVS/$u" ] || return 1
	echo "$u"
}

mdev_create() {
	mdev_try_create "$@" || fail "creating an mdev of type $1 on gpu ${2:-0}"
}

mdev_remove() {
	echo 1 > "$MDEV_DEVS/$1/remove" || fail "removing mdev $1"
	[ ! -e "$MDEV_DEVS/$1" ] || fail "mdev $1 still present after remove"
}

# mdev_attr UUID NAME: one value of the per-mdev "vgmem" sysfs group.
mdev_attr() {
	v=$(cat "$MDEV_DEVS/$1/vgmem/$2" 2>/dev/null) || fail "reading $1/vgmem/$2"
	echo "$v"
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}

# wait_until SECONDS COMMAND...: polls every 0.2 s until COMMAND succeeds.
wait_until() {
	n=$(($1 * 5))
	shift
	while [ $n -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}

# guest NAME ARGS...: runs vgmem-guest ARGS, its output going to
# /tmp/guest.NAME.log and to our output; fails the case unless it exits 0
# with a last line "RESULT ok".
guest() {
	g=$1
	shift
	vgmem-guest "$@" > /tmp/guest.$g.log 2>&1
	rc=$?
	sed "s/^/[$g] /" /tmp/guest.$g.log
	guest_check "$g" "$rc"
}

# guest_bg NAME ARGS...: the same in the background; guest_wait NAME checks.
# /tmp/guest.NAME.pid holds the vgmem-guest process id (for kill -9),
# /tmp/guest.NAME.rc appears with its exit status.
guest_bg() {
	g=$1
	shift
	rm -f /tmp/guest.$g.rc /tmp/guest.$g.pid
	(
		vgmem-guest "$@" > /tmp/guest.$g.log 2>&1 &
		echo $! > /tmp/guest.$g.pid
		wait $!
		echo $? > /tmp/guest.$g.rc
	) &
	while [ ! -s /tmp/guest.$g.pid ]; do sleep 0.1; done
}

# guest_done NAME: has the background guest exited?
guest_done() {
	[ -f /tmp/guest.$1.rc ]
}

# guest_reap NAME: waits for a guest expected to die or fail; prints its rc.
guest_reap() {
	while [ ! -f /tmp/guest.$1.rc ]; do sleep 0.2; done
	sed "s/^/[$1] /" /tmp/guest.$1.log >&2
	cat /tmp/guest.$1.rc
}

# guest_end NAME: ends a background guest's --hold and checks it as
# guest_wait does. A case that needs a guest's memory held while it does
# other things gives it a hold far longer than it needs (--hold 3600) and
# ends it here, rather than guessing how long those things take on a busy
# host. The SIGTERM waits for the guest's ready line (fill-check's and
# alloc's "hold ready", file's "file hold ready", "file hold-before-release"
# and "file hold-after-sync ready"): before it the guest has no handler and
# the signal would kill it.
guest_end() {
	wait_until 600 guest_held_or_done $1 ||
		fail "guest $1 never reached its hold: $(tail -n 3 /tmp/guest.$1.log)"
	guest_done $1 || kill -TERM "$(cat /tmp/guest.$1.pid)" 2> /dev/null
	guest_wait $1
}

# guest_holding NAME: has the background guest printed its ready line?
guest_holding() {
	grep -qE 'hold ready|hold-before-release|hold-after-sync ready' /tmp/guest.$1.log
}

guest_held_or_done() {
	guest_holding $1 || guest_done $1
}

guest_wait() {
	g=$1
	while [ ! -f /tmp/guest.$g.rc ]; do sleep 0.2; done
	sed "s/^/[$g] /" /tmp/guest.$g.log
	guest_check "$g" "$(cat /tmp/guest.$g.rc)"
}

guest_check() {
	last=$(tail -n 1 /tmp/guest.$1.log)
	[ "$2" = 0 ] || fail "guest $1 exited $2: $last"
	case "$last" in
	"RESULT ok"*) ;;
	*) fail "guest $1: last line '$last', expected 'RESULT ok ...'" ;;
	esac
}

# guest_sig NAME SIG LINE [SECONDS]: sends SIG to a holding guest (a
# `file hold`), waits (60 s by default) for one more "file LINE bytes=..."
# line in its log and prints that line's checksum.
guest_sig() {
	n=$(grep -c "file $3 bytes=" /tmp/guest.$1.log)
	kill -$2 $(cat /tmp/guest.$1.pid) || fail "signalling guest $1"
	wait_until ${4:-60} sh -c "[ \$(grep -c 'file $3 bytes=' /tmp/guest.$1.log) -gt $n ]" ||
		fail "guest $1 did not answer SIG$2: $(tail -n 3 /tmp/guest.$1.log)"
	sed -n "s/.*file $3 bytes=[0-9]* fnv=\([0-9a-f]*\).*/\1/p" /tmp/guest.$1.log | tail -n 1
}

# lrc_setup VRAM_MB OVERSUB_PCT: vgmem loaded with a file cache of 8 MiB on
# each GPU registered from now on (lrc_budget_mb, the operator's choice: a
# quarter of VRAM by default; the value before the case is put back on
# exit for the cases after it), one software GPU of VRAM_MB with vGPUs
# admitted up to OVERSUB_PCT % of it, and its cache checked in the log.
lrc_setup() {
	LRC_PARAM=/sys/module/vgmem/parameters/lrc_budget_mb
	module_loaded vgmem || modprobe vgmem $VG_PARAMS || fail "loading vgmem"
	[ -w $LRC_PARAM ] || fail "vgmem has no lrc_budget_mb parameter"
	LRC_OLD=$(cat $LRC_PARAM)
	trap 'echo $LRC_OLD > $LRC_PARAM' EXIT
	echo 8 > $LRC_PARAM
	vg_setup gpus=1 vram_mb=$1
	set_oversub $2
	dmesg | grep -q "vgmem[0-9]*: file cache with 8 MiB of VRAM" ||
		fail "no file cache on the GPU: $(dmesg | grep 'file cache')"
}

# Sum of one per-mdev attribute over the given UUIDs.
attr_sum() {
	a=$1
	shift
	s=0
	for u in "$@"; do s=$((s + $(mdev_attr "$u" "$a"))); done
	echo $s
}

# Nested guests (cases with "# vmtest-needs: qemu").
. /vmtest/l2.sh
