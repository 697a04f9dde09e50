# SPDX-License-Identifier: GPL-2.0 OR MIT
# 85-netlink: the generic netlink family "vgmem" through vgmem-nl and
# vgnl-check. Dumps list the GPUs and vGPUs with the values sysfs shows;
# entitlement, quota and GPU knob changes take effect (in the dump, in sysfs
# and in admission) and a quota below the allocation is refused; malformed
# and out-of-range attributes are refused with an errno and a reason and
# change nothing; writes without CAP_NET_ADMIN are refused, and so are
# GET_VM (request and dump) and the events group unless vgmem is loaded with
# netlink_open=1, where an unprivileged reader lists the vGPUs and receives
# events; events arrive for pressure, relocation and channel faults; dumps
# stay consistent (or are flagged) while mdevs are created and removed in a
# loop.
# vmtest-timeout: 300

command -v vgmem-nl > /dev/null || skip "vgmem-nl is not built yet"
command -v vgnl-check > /dev/null || skip "vgnl-check is not built yet"
vg_setup gpus=2 vram_mb=64
set_oversub 6400	# 4 GiB of quota on each 64 MiB GPU

MIB=1048576
GIB=1073741824

# field "LINE" KEY: the value of KEY=... in a vgmem-nl output line.
field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

nl() {
	out=$(vgmem-nl "$@" 2>&1) || fail "vgmem-nl $*: $out"
	echo "$out"
}

gpu_line() {	# gpu_line INDEX
	l=$(nl list gpus) || exit 1
	echo "$l" | grep "^gpu index=$1 "
}

vm_line() {	# vm_line UUID
	l=$(nl list vms) || exit 1
	echo "$l" | grep "^vm $1 "
}

# ---- GPUs: the dump against sysfs -----------------------------------------
out=$(nl list gpus) || exit 1
info "$out"
expect_eq "$(echo "$out" | grep -c '^gpu ')" 2 "GPUs in the dump"
for g in 0 1; do
	l=$(echo "$out" | grep "^gpu index=$g ")
	[ -n "$l" ] || fail "gpu $g missing from the dump"
	expect_eq "$(field "$l" name)" "vgmem$g" "name of gpu $g"
	expect_eq "$(field "$l" vram_size)" "$(gpu_attr vram_size $g)" "vram_size of gpu $g"
	expect_eq "$(field "$l" vram_used)" "$(gpu_attr vram_used $g)" "vram_used of gpu $g"
	expect_eq "$(field "$l" chunk_size)" "$(gpu_attr chunk_size $g)" "chunk_size of gpu $g"
	expect_eq "$(field "$l" policy)" "$(gpu_attr policy $g)" "policy of gpu $g"
	expect_eq "$(field "$l" return_ms)" "$(gpu_attr return_interval_ms $g)" "return_ms of gpu $g"
	expect_eq "$(field "$l" oversub_pct)" 6400 "oversub_pct of gpu $g"
	expect_eq "$(field "$l" vgpus)" 0 "vgpus of gpu $g"
	expect_eq "$(field "$l" committed)" 0 "committed of gpu $g"
done
l=$(nl show gpu 1) || exit 1
echo "$l" | grep -q "suspend_hist:" || fail "show gpu has no histograms: $l"

# ---- vGPUs: the dump against sysfs ------------------------------------------
a=$(mdev_create 1g) || exit 1
b=$(mdev_create 2g) || exit 1
c=$(mdev_create 1g 1) || exit 1
out=$(nl list vms) || exit 1
info "$out"
expect_eq "$(echo "$out" | grep -c '^vm ')" 3 "vGPUs in the dump"
for u in $a $b $c; do
	l=$(echo "$out" | grep "^vm $u ")
	[ -n "$l" ] || fail "vGPU $u missing from the dump"
	expect_eq "$(field "$l" quota)" "$(mdev_attr $u quota)" "quota of $u"
	expect_eq "$(field "$l" entitlement)" "$(mdev_attr $u entitlement)" "entitlement of $u"
	expect_eq "$(field "$l" type)" "$(basename $(readlink $MDEV_DEVS/$u/mdev_type))" "type of $u"
	expect_eq "$(field "$l" active)" 0 "active of unopened $u"
done
expect_eq "$(field "$(echo "$out" | grep "^vm $c ")" gpu)" 1 "gpu of $c"
expect_eq "$(field "$(echo "$out" | grep "^vm $a ")" gpu)" 0 "gpu of $a"
# A dump of one GPU's vGPUs only.
out=$(nl list vms 1) || exit 1
expect_eq "$(echo "$out" | grep -c '^vm ')" 1 "vGPUs of gpu 1"
echo "$out" | grep -q "^vm $c " || fail "list vms 1 does not show $c: $out"
l=$(gpu_line 0) || exit 1
expect_eq "$(field "$l" vgpus)" 2 "vgpus of gpu 0"
expect_eq "$(field "$l" committed)" $((3 * GIB)) "committed of gpu 0"
# One vGPU, and JSON.
l=$(nl show vm $a) || exit 1
echo "$l" | grep -q "^vm $a .*quota=$GIB " || fail "show vm $a: $l"
l=$(nl --json list vms) || exit 1
echo "$l" | grep -q "\"uuid\": \"$b\", \"gpu\": 0, \"type\": \"vgmem-2g\"" ||
	fail "JSON list of vms lacks $b: $l"
l=$(nl --json show gpu 0) || exit 1
echo "$l" | grep -q '"index": 0, "name": "vgmem0"' || fail "JSON of gpu 0: $l"

# ---- changes take effect ----------------------------------------------------
nl set-entitlement $a 16M > /dev/null || exit 1
expect_eq "$(mdev_attr $a entitlement)" $((16 * MIB)) "sysfs entitlement after set-entitlement"
expect_eq "$(field "$(vm_line $a)" entitlement)" $((16 * MIB)) "dumped entitlement after set-entitlement"
nl set-quota $a 512M > /dev/null || exit 1
expect_eq "$(mdev_attr $a quota)" $((512 * MIB)) "sysfs quota after set-quota"
expect_eq "$(field "$(vm_line $a)" quota)" $((512 * MIB)) "dumped quota after set-quota"
expect_eq "$(field "$(gpu_line 0)" committed)" $((2 * GIB + 512 * MIB)) "committed after set-quota"
# Beyond the admission limit (4 GiB on gpu 0): refused, nothing changes.
out=$(vgmem-nl set-quota $b 4G 2>&1) && fail "a 4 GiB quota next to 512 MiB was admitted on a 4 GiB GPU"
info "refused as expected: $out"
echo "$out" | grep -q "oversubscription limit" || fail "no reason for the refused quota: $out"
expect_eq "$(mdev_attr $b quota)" $((2 * GIB)) "quota of $b after a refused raise"
out=$(vgmem-nl set-entitlement $a 65M 2>&1) && fail "an entitlement beyond VRAM was accepted"
echo "$out" | grep -q "VRAM" || fail "no reason for the refused entitlement: $out"
expect_eq "$(mdev_attr $a entitlement)" $((16 * MIB)) "entitlement after a refused change"
# Usage errors stay in the tool (exit status 2).
vgmem-nl set-quota not-a-uuid 1M > /dev/null 2>&1
expect_eq $? 2 "exit status of a malformed UUID"
vgmem-nl set-quota $a 12Q > /dev/null 2>&1
expect_eq $? 2 "exit status of a malformed size"
vgmem-nl show vm $(new_uuid) > /dev/null 2>&1
expect_eq $? 1 "exit status for an unknown vGPU"

# GPU knobs, visible in sysfs and in admission.
nl set-policy 0 lra > /dev/null || exit 1
expect_eq "$(gpu_attr policy 0)" lra "sysfs policy after set-policy"
expect_eq "$(field "$(gpu_line 0)" policy)" lra "dumped policy after set-policy"
expect_eq "$(gpu_attr policy 1)" "$(field "$(gpu_line 1)" policy)" "policy of the other GPU"
nl set-return-interval 0 20 > /dev/null || exit 1
expect_eq "$(gpu_attr return_interval_ms 0)" 20 "sysfs return interval after set-return-interval"
expect_eq "$(field "$(gpu_line 0)" return_ms)" 20 "dumped return interval"
# 64 MiB at 4800%: 3 GiB admitted; 2.5 GiB committed leave no 1g.
nl set-oversub 0 4800 > /dev/null || exit 1
expect_eq "$(field "$(gpu_line 0)" oversub_pct)" 4800 "dumped oversub_pct"
expect_eq "$(avail 1g 0)" 0 "1g instances on gpu 0 at 4800%"
expect_eq "$(avail 1g 1)" 3 "1g instances on gpu 1 (still 6400%)"
mdev_try_create 1g 0 > /dev/null && fail "a 1g mdev was admitted beyond the lowered limit"
nl set-oversub 0 9600 > /dev/null || exit 1
expect_eq "$(avail 1g 0)" 3 "1g instances on gpu 0 at 9600%"
# 0: follow the module parameter again.
nl set-oversub 0 0 > /dev/null || exit 1
expect_eq "$(field "$(gpu_line 0)" oversub_pct)" 6400 "oversub_pct after returning to the default"
expect_eq "$(avail 1g 0)" 1 "1g instances on gpu 0 back at 6400%"

# ---- malformed requests, and requests without CAP_NET_ADMIN ------------------
vgnl-check malformed $a 0 || fail "malformed requests (see above)"
vgnl-check noadmin $a 0 || fail "requests without CAP_NET_ADMIN (see above)"
out=$(vgnl-check as-nobody vgmem-nl set-entitlement $a 1M 2>&1) &&
	fail "vgmem-nl set-entitlement as uid 65534 succeeded"
echo "$out" | grep -q "Operation not permitted" || fail "vgmem-nl set-entitlement as uid 65534: $out"
out=$(vgnl-check as-nobody vgmem-nl set-policy 0 cold 2>&1) &&
	fail "vgmem-nl set-policy as uid 65534 succeeded"
info "as uid 65534: set refused: $out"
# Other tenants' VMs and events are the operator's (netlink_open=0, the
# default): uid 65534 reads the GPUs, but not the vGPUs nor the events.
l=$(vgnl-check as-nobody vgmem-nl list gpus 2>&1) || fail "vgmem-nl list gpus as uid 65534: $l"
echo "$l" | grep -q "^gpu index=0 " || fail "vgmem-nl list gpus as uid 65534: $l"
l=$(vgnl-check as-nobody vgmem-nl list vms 2>&1) &&
	fail "vgmem-nl list vms as uid 65534 succeeded: $l"
echo "$l" | grep -q "Operation not permitted" || fail "vgmem-nl list vms as uid 65534: $l"
echo "$l" | grep -q "$a" && fail "vgmem-nl list vms as uid 65534 leaked $a: $l"
l=$(vgnl-check as-nobody vgmem-nl show vm $a 2>&1) &&
	fail "vgmem-nl show vm as uid 65534 succeeded: $l"
echo "$l" | grep -q "Operation not permitted" || fail "vgmem-nl show vm as uid 65534: $l"
l=$(vgnl-check as-nobody vgmem-nl monitor --timeout 5 2>&1) &&
	fail "vgmem-nl monitor as uid 65534 succeeded: $l"
echo "$l" | grep -q "joining the events group: Operation not permitted" ||
	fail "vgmem-nl monitor as uid 65534: $l"
info "as uid 65534: list vms, show vm and monitor refused: $l"
expect_eq "$(gpu_attr policy 0)" lra "policy after a refused set-policy"
expect_eq "$(mdev_attr $a entitlement)" $((16 * MIB)) "entitlement after refused writes"

# ---- a live quota change under a guest, and events ----------------------------
if command -v vgmem-guest > /dev/null; then
	d=$(mdev_create 1g 1) || exit 1
	vgmem-nl monitor --timeout 3600 > /tmp/nl.events 2> /tmp/nl.monitor.err &
	mon=$!
	wait_until 60 grep -q monitoring /tmp/nl.monitor.err || fail "vgmem-nl monitor did not start"

	# c fills most of gpu 1 and holds it until d is done; d's allocation
	# needs room: pressure, relocation.
	guest_bg c --dev $c alloc --size 40M --bo 4M --hold 3600
	wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$c/vgmem/allocated) -ge $((40 * MIB)) ]" ||
		fail "guest c never allocated 40 MiB"
	l=$(vm_line $c) || exit 1
	expect_eq "$(field "$l" active)" 1 "active of an open vGPU"
	expect_eq "$(field "$l" allocated)" "$(mdev_attr $c allocated)" "dumped allocated of $c"
	out=$(vgmem-nl set-quota $c 8M 2>&1) && fail "a quota below the allocation was accepted"
	echo "$out" | grep -q "allocated" || fail "no reason for the refused quota below allocation: $out"
	expect_eq "$(mdev_attr $c quota)" $GIB "quota of $c after a refused shrink"
	nl set-quota $c 512M > /dev/null || exit 1
	expect_eq "$(mdev_attr $c quota)" $((512 * MIB)) "quota of $c after a live change"

	guest d --dev $d alloc --size 40M --bo 4M
	guest_end c
	guest e --dev $d hostile wild-va
	wait_until 60 grep -q "^chan_fault gpu=1 vm=$d " /tmp/nl.events ||
		fail "no chan_fault event for $d: $(cat /tmp/nl.events)"
	kill $mon
	wait $mon 2> /dev/null
	info "events: $(cat /tmp/nl.events)"
	grep -q "^pressure gpu=1 vm=$d need=[1-9]" /tmp/nl.events ||
		fail "no pressure event for $d"
	grep -qE "^relocation gpu=1 vm=($c|$d) direction=out chunks=[1-9][0-9]* bytes=[1-9][0-9]* suspend_ns=[0-9]+" /tmp/nl.events ||
		fail "no relocation event out of VRAM on gpu 1"
	mdev_remove $d
else
	info "vgmem-guest is not built: no live quota change and no events checked"
fi

# ---- dumps while mdevs come and go ---------------------------------------------
# Many vGPUs make a dump of several parts, so a change between parts is seen.
nl set-oversub 0 100000 > /dev/null || exit 1
nl set-oversub 1 100000 > /dev/null || exit 1
static="$a $b"
for i in 1 2 3 4 5 6 7 8 9 10; do
	u=$(mdev_create 1g 0) || exit 1
	static="$static $u"
done
(
	end=$(($(cut -d. -f1 /proc/uptime) + 10))
	n=0
	while [ $(cut -d. -f1 /proc/uptime) -lt $end ]; do
		u=$(mdev_try_create 1g 1) && echo 1 > $MDEV_DEVS/$u/remove
		u=$(mdev_try_create 1g 0) && echo 1 > $MDEV_DEVS/$u/remove
		n=$((n + 1))
	done
	echo $n > /tmp/nl.loops
) &
loop=$!
vgnl-check dump-loop 8 $static || fail "dumps while mdevs come and go (see above)"
wait $loop
info "create/remove rounds meanwhile: $(cat /tmp/nl.loops)"
out=$(nl list vms) || exit 1
expect_eq "$(echo "$out" | grep -c '^vm ')" 13 "vGPUs after the loop"

for u in $(ls $MDEV_DEVS); do mdev_remove $u; done
out=$(nl list vms) || exit 1
expect_eq "$(echo "$out" | grep -c '^vm ')" 0 "vGPUs after removing all"

# ---- netlink_open=1: vGPU dumps and events open to every local user -------------
# An operator who wants them open loads vgmem with netlink_open=1 (read-only
# at run time). The default is put back for the cases after this one, also
# when this part fails.
vg_unload || fail "unloading vgmem for netlink_open=1"
trap 'vg_unload > /dev/null 2>&1; vg_load > /dev/null 2>&1' EXIT
modprobe vgmem $VG_PARAMS netlink_open=1 || fail "loading vgmem with netlink_open=1"
expect_eq "$(cat /sys/module/vgmem/parameters/netlink_open)" Y "netlink_open after loading with 1"
echo 0 > /sys/module/vgmem/parameters/netlink_open 2> /dev/null &&
	fail "netlink_open was changed at run time"
vg_setup gpus=1 vram_mb=64
set_oversub 6400
a=$(mdev_create 1g) || exit 1
vgnl-check noadmin $a 0 open || fail "reads without CAP_NET_ADMIN under netlink_open=1 (see above)"
l=$(vgnl-check as-nobody vgmem-nl list vms 2>&1) ||
	fail "vgmem-nl list vms as uid 65534 under netlink_open=1: $l"
echo "$l" | grep -q "^vm $a " || fail "vgmem-nl list vms as uid 65534 lacks $a: $l"
out=$(vgnl-check as-nobody vgmem-nl set-entitlement $a 1M 2>&1) &&
	fail "vgmem-nl set-entitlement as uid 65534 succeeded under netlink_open=1"
echo "$out" | grep -q "Operation not permitted" || fail "set-entitlement as uid 65534: $out"
if command -v vgmem-guest > /dev/null; then
	# An unprivileged listener gets the events.
	vgnl-check as-nobody vgmem-nl monitor --count 1 --timeout 600 \
		> /tmp/nl.open.events 2> /tmp/nl.open.err &
	mon=$!
	wait_until 30 grep -q monitoring /tmp/nl.open.err ||
		fail "vgmem-nl monitor as uid 65534 did not start: $(cat /tmp/nl.open.err)"
	guest e --dev $a hostile wild-va
	wait $mon
	rc=$?
	info "events as uid 65534: $(cat /tmp/nl.open.events)"
	expect_eq $rc 0 "exit status of vgmem-nl monitor --count 1 as uid 65534"
	grep -q "^chan_fault gpu=0 vm=$a " /tmp/nl.open.events ||
		fail "no chan_fault event for $a as uid 65534: $(cat /tmp/nl.open.events)"
fi
mdev_remove $a
vg_unload || fail "unloading vgmem after netlink_open=1"
trap - EXIT
vg_load || fail "loading vgmem with the default parameters again"
expect_eq "$(cat /sys/module/vgmem/parameters/netlink_open)" N "netlink_open by default"
