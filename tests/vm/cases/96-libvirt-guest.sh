# SPDX-License-Identifier: GPL-2.0 OR MIT
# 96-libvirt-guest: the nested guest (L2) of 95-real-guest, but run the way
# a cloud host runs it: libvirtd with its QEMU driver (qemu:///system) in
# this VM defines and starts L2 from domain XML - the vgmem mdev as a
# <hostdev type='mdev'>, a virtio-fs <filesystem> whose virtiofsd libvirt
# starts, direct kernel boot, the serial console to a file, the vgmem
# policy in <metadata> - and mgmtd (netlink backend) follows libvirt: the
# defined domain is a stopped VM; when it starts, mgmtd applies its quota,
# entitlement and share table to the vGPU and lists it in GET /v1/vms with
# the share's tag; in L2 the guest driver probes the vGPU and
# `vgmem-guest --pci auto info` shows that quota and tag, and the share
# mounts and takes a file. L2 powers off; libvirt reports the domain shut
# off by the guest (reason shutdown), mgmtd the VM stopped. Each phase's
# time is printed (libvirtd up, capability probe, define, start, mgmtd
# applying the policy, L2's boot, its work, its poweroff).
# vmtest-timeout: 1800
# vmtest-needs: qemu libvirt

command -v mgmtd > /dev/null || skip "mgmtd is not built (make build/bin/mgmtd)"
command -v vgmemctl > /dev/null || skip "vgmemctl is not built (make build/bin/vgmemctl)"
command -v libvirtd > /dev/null && command -v virsh > /dev/null ||
	fail "no libvirtd or virsh in the test VM: is '# vmtest-needs: qemu libvirt' in the case?"
require_guest
require_qemu

export LIBVIRT_DEFAULT_URI=qemu:///system
DOM=l2lv
MIB=1048576
# The policy in the domain's metadata. The quota differs from the mdev
# type's (1 GiB), so the guest's quota shows that mgmtd applied it.
QUOTA_MIB=512
META="quota=\"${QUOTA_MIB}M\" weight=\"300\" min=\"8M\" low=\"16M\" max=\"48M\""
TAG=vgdata
SOCK=/tmp/lv-mgmtd.sock
MLOG=/tmp/lv-mgmtd.log
LVLOG=/tmp/libvirtd.log
share=/tmp/lv-share

ctl() {
	vgmemctl --socket $SOCK --timeout 30 "$@"
}

# jnum JSON KEY: the first integer value of "KEY" in compact JSON.
jnum() {
	echo "$1" | grep -o "\"$2\":[0-9]*" | head -n 1 | cut -d: -f2
}

# The file cache (8 MiB of VRAM) holds the vGPU's share table.
LRC_PARAM=/sys/module/vgmem/parameters/lrc_budget_mb
module_loaded vgmem || modprobe vgmem $VG_PARAMS || fail "loading vgmem"
LRC_OLD=$(cat $LRC_PARAM) || fail "vgmem has no lrc_budget_mb parameter"

lvd_pid=
mgmtd_pid=
cleanup() {
	virsh -q destroy $DOM > /dev/null 2>&1
	virsh -q undefine $DOM > /dev/null 2>&1
	[ -n "$mgmtd_pid" ] && kill -9 $mgmtd_pid 2> /dev/null
	[ -n "$lvd_pid" ] && kill -9 $lvd_pid 2> /dev/null
	for p in $mgmtd_pid $lvd_pid; do wait $p 2> /dev/null; done
	echo $LRC_OLD > $LRC_PARAM
}
trap cleanup EXIT

# die REASON: the daemons' logs, then fail.
die() {
	info "libvirtd log:"
	sed 's/^/  /' $LVLOG
	info "mgmtd log:"
	sed 's/^/  /' $MLOG 2> /dev/null
	fail "$@"
}

echo 8 > $LRC_PARAM
vg_setup gpus=1 vram_mb=64
set_oversub 6400	# the kernel admits the 1g mdev on 64 MiB
info "L1 uptime at case start: $(l1_uptime)s"
u=$(mdev_create 1g) || exit 1
mkdir -p $share

# ---- libvirtd -----------------------------------------------------------------
# An initramfs is no host libvirt expects: no cgroups mounted, no systemd
# or D-Bus, no virtlogd, no users but root, a root file system that
# cannot be pivoted away from (so no mount namespace per domain). QEMU
# runs as root with no security driver and no relabelling of files. The
# user and group Debian's libvirt was built for (libvirt-qemu) must exist
# all the same: the QEMU driver looks them up before it reads qemu.conf.
mkdir -p /etc/libvirt /run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt
grep -q '^libvirt-qemu:' /etc/passwd ||
	echo 'libvirt-qemu:x:64055:64055::/var/lib/libvirt:/bin/false' >> /etc/passwd
grep -q '^libvirt-qemu:' /etc/group || echo 'libvirt-qemu:x:64055:' >> /etc/group
cat > /etc/libvirt/libvirtd.conf <<'EOF'
auth_unix_ro = "none"
auth_unix_rw = "none"
log_outputs = "3:stderr"
EOF
cat > /etc/libvirt/qemu.conf <<'EOF'
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
namespaces = [ ]
cgroup_controllers = [ ]
stdio_handler = "file"
EOF
t=$(l1_uptime)
libvirtd > $LVLOG 2>&1 < /dev/null &
lvd_pid=$!
wait_until 120 sh -c "kill -0 $lvd_pid || exit 0
	test -S /run/libvirt/libvirt-sock && virsh -q uri > /dev/null 2>&1" ||
	die "libvirtd did not answer on /run/libvirt/libvirt-sock within 120 s"
kill -0 $lvd_pid 2> /dev/null || die "libvirtd exited"
t_lvd=$(secs_since "$t")

# QEMU's capabilities: libvirt runs the emulator once and keeps the result
# in /var/cache/libvirt/qemu/capabilities.
t=$(l1_uptime)
caps=$(virsh capabilities 2>&1) || die "virsh capabilities: $caps"
t_caps=$(secs_since "$t")
echo "$caps" | grep -q "<domain type='qemu'" ||
	die "libvirt's capabilities have no TCG (type qemu) guest: $caps"
ls /var/cache/libvirt/qemu/capabilities/*.xml > /dev/null 2>&1 ||
	die "no capability cache in /var/cache/libvirt/qemu/capabilities"

# ---- mgmtd on libvirt ------------------------------------------------------------
mgmtd --backend netlink --libvirt-uri qemu:///system --state-db /tmp/lv-mgmtd.db \
	--listen-unix $SOCK --oversub-pct 6400 > $MLOG 2>&1 &
mgmtd_pid=$!
wait_until 60 sh -c "vgmemctl --socket $SOCK --timeout 10 --json health 2>/dev/null |
	grep -q '\"libvirt_connected\":true'" ||
	die "mgmtd did not connect to qemu:///system: $(ctl --json health 2>&1)"

# ---- the domain -----------------------------------------------------------------
cat > /tmp/lv-run.sh <<L2
TOKEN=$(new_uuid)
QUOTA=$((QUOTA_MIB * MIB))
TAG=$TAG
L2
cat >> /tmp/lv-run.sh <<'L2'
t0=$(l2_uptime)
# The guest driver probed the vGPU at insmod (L2's /init).
if [ -c /dev/vgmem0 ]; then
	if vgmem-guest --pci auto info > /tmp/info.out 2>&1; then
		cat /tmp/info.out
		grep -qx "quota $QUOTA" /tmp/info.out &&
			l2_pass "the vGPU's quota is the domain's: $QUOTA" ||
			l2_fail "quota: $(grep '^quota' /tmp/info.out), the domain's is $QUOTA"
		grep -qx "share id=0 ro=0 tag=$TAG" /tmp/info.out &&
			l2_pass "the vGPU's share 0 has the filesystem's tag $TAG" ||
			l2_fail "no 'share id=0 ro=0 tag=$TAG' in vgmem-guest info"
	else
		cat /tmp/info.out
		l2_fail "vgmem-guest --pci auto info"
	fi
else
	l2_fail "no /dev/vgmem0: the guest driver did not probe the vGPU"
fi
t1=$(l2_uptime)
# The share libvirt's virtiofsd serves, under the tag the vGPU reported.
if l2_mount_share $TAG /mnt; then
	if echo "$TOKEN" > /mnt/from-l2 && sync && umount /mnt; then
		l2_pass "virtio-fs: mounted $TAG and wrote /mnt/from-l2"
	else
		l2_fail "writing /mnt/from-l2 into the share"
	fi
fi
echo "L2 TIME guest driver $t0..$t1 s, virtio-fs $t1..$(l2_uptime) s (L2 uptime)"
L2
l2_prepare lv --script /tmp/lv-run.sh
d=$(l2_dir lv)

# What an operator writes for a vgmem vGPU with a virtio-fs share
# (docs/operations.md), plus direct kernel boot and a console file. The
# devices libvirt adds by default (USB controller, balloon) are off: L2
# has no use for them and each costs boot time under nested TCG.
cat > $d/domain.xml <<EOF
<domain type='qemu'>
  <name>$DOM</name>
  <metadata>
    <vgmem:gpu xmlns:vgmem="https://vgmem.dev/xmlns/vgmem/1" $META/>
  </metadata>
  <memory unit='MiB'>$L2_MEM</memory>
  <vcpu>$L2_SMP</vcpu>
  <memoryBacking>
    <source type='memfd'/>
    <access mode='shared'/>
  </memoryBacking>
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
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source>
        <address uuid='$u'/>
      </source>
    </hostdev>
    <filesystem type='mount' accessmode='passthrough'>
      <driver type='virtiofs'/>
      <binary path='/usr/lib/qemu/virtiofsd'>
        <cache mode='none'/>
        <sandbox mode='chroot'/>
      </binary>
      <source dir='$share'/>
      <target dir='$TAG'/>
    </filesystem>
    <serial type='file'>
      <source path='$d/console'/>
      <target port='0'/>
    </serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
</domain>
EOF

t=$(l1_uptime)
out=$(virsh define $d/domain.xml 2>&1) || die "virsh define: $out"
t_def=$(secs_since "$t")
# Defined: a stopped VM in mgmtd, nothing applied to the vGPU yet.
wait_until 60 sh -c "vgmemctl --socket $SOCK --timeout 10 --json vm $DOM 2>/dev/null |
	grep -q '\"running\":false'" ||
	die "mgmtd does not show the defined domain as a stopped VM: $(ctl --json vm $DOM 2>&1)"
expect_eq "$(mdev_attr $u quota)" $((1024 * MIB)) "the vGPU's quota before the start (its type's)"

# Started paused: libvirt reports the start once QEMU is up, and mgmtd
# applies the policy then; L2's vCPUs run only once it has, so what the
# guest reads does not depend on who is faster.
t=$(l1_uptime)
out=$(virsh start --paused $DOM 2>&1) || die "virsh start: $out"
t_start=$(secs_since "$t")
t=$(l1_uptime)
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$u/vgmem/quota) = $((QUOTA_MIB * MIB)) ] &&
	vgmem-nl show shares $u | grep -q 'id=0 readonly=0 tag=$TAG path=$share'" ||
	die "mgmtd did not apply the domain's quota and share: quota $(mdev_attr $u quota), shares: $(vgmem-nl show shares $u 2>&1)"
t_apply=$(secs_since "$t")
out=$(virsh resume $DOM 2>&1) || die "virsh resume: $out"
l2_domain lv $DOM

# mgmtd's view (GET /v1/vms) against the kernel's.
vms=$(ctl --json vms) || die "GET /v1/vms: $vms"
info "GET /v1/vms: $vms"
v=$(ctl --json vm $DOM) || die "GET /v1/vms/$DOM: $v"
echo "$v" | grep -q '"source":"libvirt"' || die "$DOM is not a VM of libvirt: $v"
echo "$v" | grep -q '"running":true' || die "$DOM is not running in mgmtd: $v"
echo "$vms" | grep -q "\"name\":\"$DOM\"" || die "GET /v1/vms does not list $DOM: $vms"
echo "$vms" | grep -q "\"shares\":\[{\"id\":0,\"tag\":\"$TAG\",\"source\":\"$share\",\"readonly\":false}\]" ||
	die "GET /v1/vms lacks the share $TAG: $vms"
expect_eq "$(jnum "$v" quota)" $((QUOTA_MIB * MIB)) "mgmtd's quota of $DOM"
ent=$(jnum "$v" entitlement)
[ -n "$ent" ] && [ "$ent" -gt 0 ] && [ "$ent" -le $((48 * MIB)) ] ||
	die "mgmtd's entitlement of $DOM: '$ent', expected 1 byte..max 48 MiB"
wait_until 10 sh -c "[ \$(cat $MDEV_DEVS/$u/vgmem/entitlement) = $ent ]" ||
	die "the vGPU's entitlement $(mdev_attr $u entitlement) is not mgmtd's $ent"
info "mgmtd applied quota $((QUOTA_MIB * MIB)) and entitlement $ent to $u"

l2_wait lv 1500
# What L2 read (its vgmem-guest info is on its console) against mgmtd.
expect_eq "$(l2_console lv | sed -n 's/^entitlement //p' | head -n 1)" "$ent" \
	"the entitlement L2 read against mgmtd's"

# Shut off: mgmtd stops the VM (its entitlement released).
wait_until 60 sh -c "vgmemctl --socket $SOCK --timeout 10 --json vm $DOM 2>/dev/null |
	grep -q '\"running\":false'" ||
	die "mgmtd still shows $DOM running after it shut off: $(ctl --json vm $DOM 2>&1)"
[ "$(cat $share/from-l2 2>/dev/null)" = "$(sed -n 's/^TOKEN=//p' /tmp/lv-run.sh)" ] ||
	die "the file L2 wrote into the share is not there or differs"
out=$(virsh undefine $DOM 2>&1) || die "virsh undefine: $out"
wait_until 60 sh -c "! vgmemctl --socket $SOCK --timeout 10 vm $DOM > /dev/null 2>&1" ||
	die "mgmtd still knows $DOM after its undefine"

# mgmtd first (libvirtd going first would be a dropped connection).
kill $mgmtd_pid
wait $mgmtd_pid
rc=$?
mgmtd_pid=
[ $rc = 0 ] || die "mgmtd exited $rc on SIGTERM"
bad=$(grep -E '^<[0-4]>' $MLOG) && die "mgmtd logged warnings or errors: $bad"
kill $lvd_pid
wait $lvd_pid
rc=$?
lvd_pid=
[ $rc = 0 ] || die "libvirtd exited $rc on SIGTERM"
# What libvirtd says of this VM and nothing else: no dmidecode, no KVM,
# no host name, QEMU as root without a security driver.
bad=$(grep -E ': (error|warning) : ' $LVLOG |
	grep -vE 'cannot execute binary /usr/sbin/dmidecode|Unable to open /dev/kvm|security driver "none" disables|getaddrinfo failed for|is tainted: high-privileges') &&
	die "libvirtd logged: $bad"
mdev_remove $u

awk -v a="$t_lvd" -v c="$t_caps" -v d="$t_def" -v s="$t_start" -v p="$t_apply" \
	-v l="$(cat $d/times)" 'BEGIN {
	printf "times: libvirtd up %.1fs, capability probe %.1fs, define %.1fs, " \
		"start (paused) %.1fs, mgmtd applied the policy %.1fs later; L2 %s\n",
		a, c, d, s, p, l }'
