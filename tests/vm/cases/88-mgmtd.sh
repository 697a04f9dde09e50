# SPDX-License-Identifier: GPL-2.0 OR MIT
# 88-mgmtd: mgmtd with the netlink backend drives vgmem.ko end to end,
# without libvirt: it adopts the mdevs it finds (--adopt-mdevs) and is
# operated through vgmemctl over its unix socket. The VMs show with their
# usage; an operator policy (weight/min/max) becomes the entitlement sysfs
# and vgmem-nl show; the cold knob reaches the GPU; /metrics lists the VMs;
# the event stream carries pressure and relocations caused by a second
# guest; an mdev created or removed later is adopted or forgotten; a
# VM of the configuration (--embedded-vm on its mdev) whose mdev is removed
# is lost (REST, vgmem_vm_lost, its error, entitlement 0) and runs again
# when the mdev is re-created with the same UUID; SIGTERM stops mgmtd
# cleanly, with nothing above "info" in its log but that loss.
# vmtest-timeout: 150

command -v mgmtd > /dev/null || skip "mgmtd is not built (make build/bin/mgmtd)"
command -v vgmemctl > /dev/null || skip "vgmemctl is not built (make build/bin/vgmemctl)"
command -v vgmem-nl > /dev/null || skip "vgmem-nl is not built yet"
require_guest
vg_setup gpus=1 vram_mb=64
set_oversub 6400	# 4 GiB of quota on 64 MiB

MIB=1048576
GIB=1073741824
SOCK=/tmp/mgmtd.sock
LOG=/tmp/mgmtd.log

ctl() {
	vgmemctl --socket $SOCK --timeout 10 "$@"
}

# jnum JSON KEY: the first integer value of "KEY" in compact JSON.
jnum() {
	echo "$1" | grep -o "\"$2\":[0-9]*" | head -n 1 | cut -d: -f2
}

# field "LINE" KEY: KEY=... of a vgmem-nl line.
field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

mgmtd_pid=
ev_pid=
cleanup() {
	[ -n "$ev_pid" ] && kill $ev_pid 2> /dev/null
	[ -n "$mgmtd_pid" ] && kill -9 $mgmtd_pid 2> /dev/null
	wait $mgmtd_pid $ev_pid 2> /dev/null
}

# die REASON: stops mgmtd, shows its log and the events seen, fails.
die() {
	cleanup
	info "mgmtd log:"
	sed 's/^/  /' $LOG
	[ -f /tmp/mgmtd.events ] && info "events: $(cat /tmp/mgmtd.events /tmp/mgmtd.events.err)"
	fail "$@"
}

a=$(mdev_create 1g) || exit 1
b=$(mdev_create 1g) || exit 1
# d: a VM mgmtd is told about (source config), not adopted: lost if it goes.
d=$(mdev_create 1g) || exit 1

# A holds 24 MiB before mgmtd starts: adopted with its usage. Its hold
# lasts until the case ends it (guest_end), past B's pressure below.
guest_bg a --dev $a fill-check --size 24M --bo 4M --seed 21 --hold 3600
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$a/vgmem/resident) -ge $((24 * MIB)) ]" ||
	fail "guest a never became resident with 24 MiB (resident $(mdev_attr $a resident))"

mgmtd --backend netlink --adopt-mdevs --libvirt-uri none \
	--embedded-vm "lostvm:$d:1G" --state-db /tmp/mgmtd.db --listen-unix $SOCK --oversub-pct 6400 \
	--recompute-ms 250 > $LOG 2>&1 &
mgmtd_pid=$!
if ! wait_until 60 ctl health > /dev/null 2>&1; then
	die "mgmtd did not answer on $SOCK"
fi
out=$(ctl --json health) || { die "health: $out"; }
echo "$out" | grep -q '"backend":"netlink"' || { die "health is not on the netlink backend: $out"; }
# lostvm holds nothing: capped, it leaves the VRAM to a and b below.
out=$(ctl policy lostvm --patch --max 2M) || { die "policy lostvm: $out"; }

# ---- the mdevs are VMs, with their usage ------------------------------------
out=$(ctl vms) || { die "vgmemctl vms: $out"; }
info "$out"
for u in $a $b; do
	echo "$out" | grep -q " $u " || { die "vms does not list $u"; }
done
va=$(ctl --json vm $a) || { die "vm $a: $va"; }
echo "$va" | grep -q '"source":"backend","operator_policy":false' ||
	{ die "vm $a is not an adopted VM: $va"; }
echo "$va" | grep -q '"running":true' || { die "vm $a is not running: $va"; }
expect_eq "$(jnum "$va" quota)" $GIB "quota of adopted $a"
[ "$(jnum "$va" allocated)" -ge $((24 * MIB)) ] ||
	{ die "allocated of $a in mgmtd: $(jnum "$va" allocated), guest holds 24 MiB"; }
expect_eq "$(jnum "$va" allocated)" "$(mdev_attr $a allocated)" "mgmtd's allocated of $a against sysfs"

# ---- an operator policy becomes the module's entitlement --------------------
out=$(ctl policy $a --quota 1G --min 8M --max 20M --weight 300) ||
	{ die "policy $a: $out"; }
info "$out"
pol=$(ctl --json policy $a) || { die "policy $a: $pol"; }
expect_eq "$(jnum "$pol" weight)" 300 "weight of $a"
expect_eq "$(jnum "$pol" max)" $((20 * MIB)) "max of $a"
ent=$(jnum "$pol" entitlement)
expect_eq "$ent" $((20 * MIB)) "entitlement of $a capped by max 20M (24 MiB in use)"
expect_eq "$(mdev_attr $a entitlement)" "$ent" "sysfs entitlement of $a"
l=$(vgmem-nl show vm $a) || { die "vgmem-nl show vm $a: $l"; }
expect_eq "$(field "$l" entitlement)" "$ent" "vgmem-nl entitlement of $a"
# The policy stays applied across recomputes.
sleep 1
expect_eq "$(mdev_attr $a entitlement)" "$ent" "sysfs entitlement of $a a second later"
# A refused policy changes nothing.
out=$(ctl policy $a --patch --min 30M 2>&1) && { die "min above max accepted: $out"; }
expect_eq "$(mdev_attr $a entitlement)" "$ent" "sysfs entitlement after a refused policy"

# ---- knobs reach the GPU (lra: not the default, cold) ---------------------------
out=$(ctl knobs --policy lra) || { die "knobs --policy lra: $out"; }
expect_eq "$(gpu_attr policy 0)" lra "sysfs policy after knobs --policy lra"
l=$(vgmem-nl list gpus) || { die "vgmem-nl list gpus: $l"; }
expect_eq "$(field "$l" policy)" lra "vgmem-nl policy of gpu 0"

# ---- /metrics --------------------------------------------------------------------
m=$(ctl metrics) || { die "metrics: $m"; }
for u in $a $b; do
	echo "$m" | grep -q "^vgmem_vm_running{vm=\"$u\",domain=\"\",domain_uuid=\"\",gpu=\"0\"} 1$" ||
		{ die "metrics lack vgmem_vm_running of $u"; }
done
echo "$m" | grep -q "^vgmem_vm_entitlement_bytes{vm=\"$a\",domain=\"\",domain_uuid=\"\",gpu=\"0\"} $ent$" ||
	{ die "metrics lack the entitlement $ent of $a: $(echo "$m" | grep entitlement_bytes)"; }
echo "$m" | grep -q '^vgmem_mgmtd_info{.*backend="netlink".*} 1$' ||
	{ die "metrics: no vgmem_mgmtd_info on netlink"; }

# ---- pressure from a second guest: events ---------------------------------------
# From the last event on, so nothing is missed while vgmemctl connects
# (directly, not through ctl(), so that $! is vgmemctl itself).
h=$(ctl --json health) || die "health: $h"
since=$(jnum "$h" last_event_id)
vgmemctl --socket $SOCK --json events --follow --since "$since" \
	> /tmp/mgmtd.events 2> /tmp/mgmtd.events.err &
ev_pid=$!
# B needs 44 MiB of the 64: A (above its 20 MiB entitlement) is relocated.
guest b --dev $b fill-check --size 44M --bo 4M --seed 22 --hold 2
wait_until 60 grep -q "\"type\":\"relocation\",\"vm\":\"$a\"" /tmp/mgmtd.events ||
	{ die "no relocation event for $a ($(vgmem-nl show vm $a))"; }
grep -q "\"type\":\"pressure\",\"vm\":\"$b\"" /tmp/mgmtd.events ||
	{ die "no pressure event for $b from the kernel"; }
info "events: $(grep -c . /tmp/mgmtd.events) lines, e.g. $(grep -m 1 '"type":"relocation"' /tmp/mgmtd.events)"
va=$(ctl --json vm $a) || { die "vm $a: $va"; }
[ "$(jnum "$va" out_chunks)" -gt 0 ] || { die "mgmtd shows no relocation out of $a: $va"; }

# ---- mdevs that come and go ---------------------------------------------------------
c=$(mdev_create 1g) || { cleanup; exit 1; }
wait_until 60 sh -c "vgmemctl --socket $SOCK vms | grep -q ' $c '" ||
	{ die "a new mdev $c was not adopted"; }
mdev_remove $c
wait_until 60 sh -c "! vgmemctl --socket $SOCK vms | grep -q ' $c '" ||
	{ die "removed mdev $c is still listed"; }

# ---- a configured VM whose mdev goes is lost, and back with it -------------
# jbool JSON KEY: true/false of "KEY" in compact JSON.
jbool() {
	echo "$1" | grep -o "\"$2\":[a-z]*" | head -n 1 | cut -d: -f2
}
vd=$(ctl --json vm lostvm) || { die "vm lostvm: $vd"; }
echo "$vd" | grep -q '"source":"config"' || { die "lostvm is not the configured VM: $vd"; }
expect_eq "$(jbool "$vd" running)" true "lostvm running before its mdev goes"
expect_eq "$(jbool "$vd" lost)" false "lostvm lost before its mdev goes"
h=$(ctl --json health) || die "health: $h"
since=$(jnum "$h" last_event_id)
mdev_remove $d
wait_until 60 sh -c "vgmemctl --socket $SOCK --json vm lostvm | grep -q '\"lost\":true'" ||
	{ die "lostvm not lost after its mdev $d was removed: $(ctl --json vm lostvm)"; }
vd=$(ctl --json vm lostvm) || { die "vm lostvm: $vd"; }
expect_eq "$(jbool "$vd" running)" false "lostvm running once lost"
expect_eq "$(jnum "$vd" entitlement)" 0 "entitlement of lost lostvm"
echo "$vd" | grep -q "vGPU lost: mdev $d is gone" || { die "lostvm's error does not say it is lost: $vd"; }
m=$(ctl metrics) || { die "metrics: $m"; }
echo "$m" | grep -q "^vgmem_vm_lost{vm=\"$d\",domain=\"lostvm\",domain_uuid=\"\",gpu=\"0\"} 1$" ||
	{ die "metrics: vgmem_vm_lost of lostvm is not 1: $(echo "$m" | grep "^vgmem_vm_lost")"; }
echo "$m" | grep -q "^vgmem_vm_running{vm=\"$d\",domain=\"lostvm\",domain_uuid=\"\",gpu=\"0\"} 0$" ||
	{ die "metrics: vgmem_vm_running of lost lostvm is not 0"; }
ev=$(ctl --json events --since "$since") || { die "events: $ev"; }
echo "$ev" | grep -q "\"type\":\"lifecycle\",\"vm\":\"$d\",\"detail\":{\"state\":\"lost\"" ||
	{ die "no lifecycle lost event for $d: $ev"; }
# The mdev back with the same UUID: lostvm runs again, with its policy.
echo "$d" > "$(type_dir 1g 0)/create" || die "re-creating mdev $d"
wait_until 60 sh -c "vgmemctl --socket $SOCK --json vm lostvm | grep -q '\"running\":true'" ||
	{ die "lostvm does not run again after mdev $d came back: $(ctl --json vm lostvm)"; }
vd=$(ctl --json vm lostvm) || { die "vm lostvm: $vd"; }
expect_eq "$(jbool "$vd" lost)" false "lostvm lost after its mdev came back"
expect_eq "$(jnum "$vd" quota)" $GIB "quota of lostvm after its return"
expect_eq "$(mdev_attr $d quota)" $GIB "sysfs quota of the re-created $d"
m=$(ctl metrics) || { die "metrics: $m"; }
echo "$m" | grep -q "^vgmem_vm_lost{vm=\"$d\",domain=\"lostvm\",domain_uuid=\"\",gpu=\"0\"} 0$" ||
	{ die "metrics: vgmem_vm_lost of lostvm is not 0 after its return"; }
ev=$(ctl --json events --since "$since") || { die "events: $ev"; }
echo "$ev" | grep -q "\"type\":\"lifecycle\",\"vm\":\"$d\",\"detail\":{\"state\":\"running\"" ||
	{ die "no lifecycle running event for $d after its return: $ev"; }
info "lostvm: lost and back ($(echo "$ev" | grep -o '"state":"[a-z]*"' | tr '\n' ' '))"

guest_end a

# ---- SIGTERM ------------------------------------------------------------------------
kill -TERM $mgmtd_pid
n=50
while [ $n -gt 0 ] && kill -0 $mgmtd_pid 2> /dev/null; do
	sleep 0.2
	n=$((n - 1))
done
kill -0 $mgmtd_pid 2> /dev/null && { die "mgmtd still runs 10 s after SIGTERM"; }
wait $mgmtd_pid
rc=$?
mgmtd_pid=
kill $ev_pid 2> /dev/null
wait $ev_pid 2> /dev/null
ev_pid=
info "mgmtd log:"
sed 's/^/  /' $LOG
expect_eq $rc 0 "mgmtd's exit status after SIGTERM"
grep -q "SIGTERM: shutting down" $LOG || fail "mgmtd did not log its shutdown"
# the loss of lostvm's vGPU is the one error expected
bad=$(grep -E '^<[0-4]>' $LOG | grep -v "vm $d (lostvm): its vGPU is gone")
[ -z "$bad" ] || fail "mgmtd logged warnings or errors: $bad"
[ ! -e $SOCK ] || info "note: $SOCK left behind"

# The vGPUs outlive mgmtd with the entitlement it gave them.
expect_eq "$(gpu_attr policy 0)" lra "sysfs policy after mgmtd stopped"
mdev_remove $a
mdev_remove $b
mdev_remove $d
