# SPDX-License-Identifier: GPL-2.0 OR MIT
# 99-migrate-libvirt: mgmtd's thrash advisory live-migrates a libvirt
# domain with its vGPU, as between two hosts: two libvirtds (Debian 12's
# libvirt 9.0) with host UUIDs of their own, the destination's in a mount
# namespace of its own (its /etc/libvirt, /run/libvirt, /var/lib/libvirt,
# /var/cache/libvirt and /var/log/libvirt are directories under /tmp/lvb,
# so the two never share state; its socket is /tmp/lvb/run/libvirt-sock
# from here), one mgmtd following each. The domain's emulator is Debian
# 12's QEMU 7.2 with qemu-patches/ ("# vmtest-needs: qemu72"), which
# speaks VFIO migration protocol v2: libvirt 9.0 asks QEMU for migration
# blockers and finds none.
#
# L2 (the hold script of l2_migrate_guest: 8 MiB under checksum checks)
# runs on a 1g mdev on GPU 0, entitled by its metadata to at most 2 MiB;
# two VFIO peers here keep GPU 0 full (one holds 58 MiB, one allocates 6
# MiB and frees it, round after round), so L2's vGPU keeps relocating
# above its entitlement (GPUswap's random policy: no free-VRAM reserve,
# so what comes back and goes out follows the peer's rounds alone):
# mgmtd (thrash_window_s 10) raises its advisory
# and migrates the domain to migrate_uri, the second libvirtd. The two
# libvirtds share this kernel, so the destination has the source's own
# mdev too: mgmtd must pick the free mdev on GPU 1 (another UUID) and
# give it in the destination's XML. The migration's data goes over a unix
# socket (migrate_data_uri): this VM has no network for libvirt's default
# of a TCP connection to the destination's hostname.
#
# Checked: the source's mgmtd reports the migration ("advisory" event,
# state "migrated"); the domain runs under the destination's libvirtd on
# the other mdev, and is gone from the source's; the destination's mgmtd
# applies the domain's quota to that vGPU; L2, told over its second serial
# port, finds every check passed and runs new work; after L2's poweroff
# both vGPUs hold nothing; neither mgmtd logged a warning or error.
# vmtest-timeout: 2400
# vmtest-needs: qemu libvirt qemu72

command -v mgmtd > /dev/null || skip "mgmtd is not built (make build/bin/mgmtd)"
command -v vgmemctl > /dev/null || skip "vgmemctl is not built (make build/bin/vgmemctl)"
command -v libvirtd > /dev/null && command -v virsh > /dev/null ||
	fail "no libvirtd or virsh in the test VM: is '# vmtest-needs: qemu libvirt' in the case?"
require_guest
require_qemu
[ -x "$L2_QEMU72" ] || fail "no $L2_QEMU72: is '# vmtest-needs: qemu72' in the case?"

DOM=l2lvm
MIB=1048576
QUOTA_MIB=512
META="quota=\"${QUOTA_MIB}M\" weight=\"100\" max=\"2M\""
URI_A=qemu:///system
LVB=/tmp/lvb
URI_B="qemu+unix:///system?socket=$LVB/run/libvirt-sock"
SIG=/tmp/lvm-sig
DATA_SOCK=/tmp/lvm-data.sock

lvd_a= lvd_b= mg_a= mg_b= press=
cleanup() {
	[ -n "$press" ] && kill $press 2> /dev/null
	kill -9 $(cat /tmp/guest.p1.pid /tmp/guest.p2.pid 2> /dev/null) 2> /dev/null
	virsh -c "$URI_A" -q destroy $DOM > /dev/null 2>&1
	virsh -c "$URI_B" -q destroy $DOM > /dev/null 2>&1
	for p in $mg_a $mg_b $lvd_a $lvd_b; do kill -9 $p 2> /dev/null; done
	for p in $mg_a $mg_b $lvd_a $lvd_b $press; do wait $p 2> /dev/null; done
}
trap cleanup EXIT

die() {
	local f
	for f in /tmp/lva.log $LVB/libvirtd.log /tmp/mga.log /tmp/mgb.log; do
		info "$f:"
		sed 's/^/  /' $f 2> /dev/null | tail -n 60
	done
	fail "$@"
}

vg_setup gpus=2 vram_mb=64
set_oversub 6400
info "L1 uptime at case start: $(l1_uptime)s"
src=$(mdev_create 1g 0) || exit 1
dst=$(mdev_create 1g 1) || exit 1

# ---- two libvirtds --------------------------------------------------------
# The initramfs as a host (96-libvirt-guest says why each setting).
grep -q '^libvirt-qemu:' /etc/passwd ||
	echo 'libvirt-qemu:x:64055:64055::/var/lib/libvirt:/bin/false' >> /etc/passwd
grep -q '^libvirt-qemu:' /etc/group || echo 'libvirt-qemu:x:64055:' >> /etc/group
lv_conf() {	# lv_conf ETC HOST_UUID
	mkdir -p "$1"
	cat > "$1/libvirtd.conf" <<EOF
auth_unix_ro = "none"
auth_unix_rw = "none"
log_outputs = "3:stderr"
host_uuid = "$2"
EOF
	cat > "$1/qemu.conf" <<'EOF'
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
namespaces = [ ]
cgroup_controllers = [ ]
stdio_handler = "file"
EOF
}
mkdir -p /run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt
lv_conf /etc/libvirt "$(new_uuid)"
libvirtd > /tmp/lva.log 2>&1 < /dev/null &
lvd_a=$!
for d in etc run lib cache log; do mkdir -p $LVB/$d; done
lv_conf $LVB/etc "$(new_uuid)"
unshare -m sh -c "mount --bind $LVB/etc /etc/libvirt && mount --bind $LVB/run /run/libvirt &&
	mount --bind $LVB/lib /var/lib/libvirt && mount --bind $LVB/cache /var/cache/libvirt &&
	mount --bind $LVB/log /var/log/libvirt &&
	exec libvirtd --pid-file $LVB/libvirtd.pid" > $LVB/libvirtd.log 2>&1 < /dev/null &
lvd_b=$!
wait_until 120 sh -c "virsh -c '$URI_A' -q uri > /dev/null 2>&1 && virsh -c '$URI_B' -q uri > /dev/null 2>&1" ||
	die "the two libvirtds did not answer within 120 s"
t=$(l1_uptime)
# The node device driver sees both vGPUs (mgmtd's choice depends on it).
for uri in "$URI_A" "$URI_B"; do
	out=$(virsh -c "$uri" nodedev-list --cap mdev 2>&1) || die "virsh nodedev-list --cap mdev on $uri: $out"
	echo "$out" | grep -q "$(echo $dst | tr - _)" || die "libvirt ($uri) does not list mdev $dst: $out"
done
info "both libvirtds list the vGPUs ($(secs_since "$t")s)"

# ---- a mgmtd for each -----------------------------------------------------
mgmtd --backend netlink --libvirt-uri "$URI_A" --state-db /tmp/mga.db \
	--listen-unix /tmp/mga.sock --oversub-pct 6400 --recompute-ms 2000 --thrash-window-s 10 \
	--policy random --migrate-uri "$URI_B" --migrate-data-uri "unix://$DATA_SOCK" > /tmp/mga.log 2>&1 &
mg_a=$!
mgmtd --backend netlink --libvirt-uri "$URI_B" --state-db /tmp/mgb.db \
	--listen-unix /tmp/mgb.sock --oversub-pct 6400 --policy random > /tmp/mgb.log 2>&1 &
mg_b=$!
for s in /tmp/mga.sock /tmp/mgb.sock; do
	wait_until 60 sh -c "vgmemctl --socket $s --timeout 10 --json health 2>/dev/null |
		grep -q '\"libvirt_connected\":true'" || die "mgmtd on $s did not connect to its libvirtd"
done

# ---- the domain -------------------------------------------------------------
l2_hold_script /tmp/lvm-l2.sh
l2_prepare lvm --script /tmp/lvm-l2.sh
d=$(l2_dir lvm)
rm -f $SIG.in $SIG.out
mkfifo $SIG.in $SIG.out
cat > $d/domain.xml <<EOF
<domain type='qemu'>
  <name>$DOM</name>
  <metadata>
    <vgmem:gpu xmlns:vgmem="https://vgmem.dev/xmlns/vgmem/1" $META/>
  </metadata>
  <memory unit='MiB'>$L2_MEM</memory>
  <vcpu>$L2_SMP</vcpu>
  <os>
    <type arch='x86_64' machine='$L2_MACHINE'>hvm</type>
    <kernel>$L2_DIR/vmlinux</kernel>
    <initrd>$d/initrd</initrd>
    <cmdline>$L2_APPEND</cmdline>
  </os>
  <features>
    <acpi/>
    <apic/>
  </features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>$L2_QEMU72</emulator>
    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source>
        <address uuid='$src'/>
      </source>
    </hostdev>
    <serial type='file'>
      <source path='$d/console' append='on'/>
      <target port='0'/>
    </serial>
    <serial type='pipe'>
      <source path='$SIG'/>
      <target port='1'/>
    </serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
out=$(virsh -c "$URI_A" define $d/domain.xml 2>&1) || die "virsh define: $out"
out=$(virsh -c "$URI_A" start $DOM 2>&1) || die "virsh start: $out"
l2_domain lvm $DOM
info "L2 started ($(l1_uptime)s)"
wait_until 900 sh -c "grep -qs '^L2 MIGRATE-READY' $d/console || ! virsh -c '$URI_A' -q domstate $DOM | grep -q running" ||
	{ l2_print lvm; die "L2 never held its 8 MiB (no 'L2 MIGRATE-READY')"; }
grep -qs '^L2 MIGRATE-READY' $d/console || { l2_print lvm; die "L2 stopped before it held its 8 MiB"; }
ent=$(mdev_attr $src entitlement)
[ "$ent" -le $((2 * MIB)) ] || die "mgmtd entitled L2's vGPU to $ent bytes, above the domain's max of 2 MiB"
info "L2 holds $(mdev_attr $src allocated) bytes on $src (entitled to $ent)"

# ---- pressure on GPU 0 until the domain has gone ----------------------------
p1=$(mdev_create 1g 0) || exit 1
p2=$(mdev_create 1g 0) || exit 1
echo $((58 * MIB)) > $MDEV_DEVS/$p1/vgmem/entitlement || die "setting p1's entitlement"
echo $((6 * MIB)) > $MDEV_DEVS/$p2/vgmem/entitlement || die "setting p2's entitlement"
guest_bg p1 --dev $p1 alloc --size 58M --bo 2M --hold 3000
wait_until 300 grep -qs '^hold' /tmp/guest.p1.log || die "p1 did not allocate its 58 MiB: $(cat /tmp/guest.p1.log)"
info "p1 holds 58 MiB ($(l1_uptime)s); L2's vGPU: resident $(mdev_attr $src resident), relocated $(mdev_attr $src relocated)"
t_press=$(l1_uptime)
{
	rounds=0
	while [ -f /run/libvirt/qemu/$DOM.xml ] && [ $rounds -lt 600 ]; do
		vgmem-guest --dev $p2 alloc --size 6M --bo 2M --hold 1 > /tmp/p2.log 2>&1 ||
			{ echo "p2 round $rounds failed: $(tail -n 1 /tmp/p2.log)"; exit 1; }
		rounds=$((rounds + 1))
		echo "round $rounds at $(l1_uptime)s"
	done
	echo "done: $rounds rounds"
} > /tmp/press.log 2>&1 &
press=$!

# mgmtd raises the advisory after 10 s of thrashing and migrates. The
# wait reports every minute what mgmtd sees of the VM.
vm_a() {
	vgmemctl --socket /tmp/mga.sock --timeout 10 --json vm $DOM 2>&1 |
		grep -o '"\(entitlement\|allocated\|resident\|relocated\|advisory\|running\)":[a-z0-9]*' | tr '\n' ' '
}
k=0
while :; do
	ev=$(vgmemctl --socket /tmp/mga.sock --timeout 10 --json events 2>&1)
	echo "$ev" | grep -q '"state":"migrated"' && break
	echo "$ev" | grep -q '"op":"migrate"' &&
		die "mgmtd's migration failed: $(echo "$ev" | grep -o '{[^{}]*"op":"migrate"[^{}]*}' | head -n 1)"
	[ "$(secs_since $t_press | cut -d. -f1)" -lt 700 ] ||
		{ l2_print lvm; cat /tmp/press.log; die "no migration by mgmtd within 700 s of pressure: $(vm_a)"; }
	k=$((k + 1))
	[ $((k % 12)) = 0 ] && info "waiting for the migration ($(secs_since $t_press)s of pressure): mgmtd: $(vm_a); vGPU: out $(mdev_attr $src relocations_out) in $(mdev_attr $src relocations_in); $(tail -n 1 /tmp/press.log)"
	sleep 5
done
info "mgmtd migrated $DOM $(secs_since "$t_press")s after the pressure began"
wait $press
press=
sed 's/^/[pressure] /' /tmp/press.log
kill $(cat /tmp/guest.p1.pid) 2> /dev/null
wait_until 120 guest_done p1 || die "p1 did not end"

st=$(virsh -c "$URI_B" -q domstate $DOM 2>&1)
[ "$st" = running ] || die "the domain on the destination: '$st'"
virsh -c "$URI_A" -q list --all --name | grep -qx $DOM && die "the source's libvirtd still has $DOM"
xml=$(virsh -c "$URI_B" dumpxml $DOM) || die "virsh dumpxml on the destination"
echo "$xml" | grep -q "uuid='$dst'" || die "the destination's domain does not name mdev $dst: $(echo "$xml" | grep -A2 '<hostdev')"
info "$DOM runs under the destination's libvirtd on mdev $dst (GPU 1)"
# What libvirt measured of the migration (informative: nested TCG times).
info "libvirt's completed job on the destination: $(virsh -c "$URI_B" domjobinfo $DOM --completed 2>&1 |
	grep -E '^(Time elapsed|Total downtime|Data processed|Memory processed)' | tr -s ' ' | tr '\n' ';')"
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$dst/vgmem/quota) = $((QUOTA_MIB * MIB)) ]" ||
	die "the destination's mgmtd did not apply the domain's quota to $dst: $(mdev_attr $dst quota)"
[ "$(mdev_attr $dst allocated)" -ge $((8 * MIB)) ] || die "the destination vGPU holds $(mdev_attr $dst allocated) bytes, not L2's 8 MiB"
expect_eq "$(mdev_attr $src allocated)" 0 "allocated on the source vGPU after the migration"

# L2 now runs under the destination's libvirtd: its status and logs are there.
l2_domain lvm $DOM "$URI_B" $LVB/run $LVB/log
echo migrated > $SIG.in
l2_wait lvm 600
expect_eq "$(mdev_attr $dst allocated)" 0 "allocated on the destination after L2 powered off"

for p in $mg_a $mg_b; do kill $p; wait $p || die "mgmtd $p exited $? on SIGTERM"; done
mg_a= mg_b=
bad=$(grep -hE '^<[0-4]>' /tmp/mga.log /tmp/mgb.log | grep -v 'thrashing for') && die "mgmtd logged: $bad"
virsh -c "$URI_B" -q undefine $DOM > /dev/null 2>&1
for p in $lvd_a $lvd_b; do kill $p; wait $p; done
lvd_a= lvd_b=
for u in $src $dst $p1 $p2; do mdev_remove $u; done
