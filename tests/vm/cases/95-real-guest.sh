# SPDX-License-Identifier: GPL-2.0 OR MIT
# 95-real-guest: a real nested guest (L2: Debian's kernel under Debian's
# QEMU inside this VM) gets a vgmem mdev as a PCI device (vfio-pci) and a
# virtio-fs share. In L2: the share mounts and a file written there arrives
# here byte for byte; the guest driver, if built, probed the device and
# is unbound again; vgpci-touch finds 1b36:10f0, enables it, reads REG_ID
# and REG_ABI_VERSION through the trapped BAR0, and touches every 4 KiB page
# of BAR2 (the USERD pages): with no channel open, every page reads 0 and
# takes a write, nothing faults, and L2's QEMU survives to power off
# normally. QEMU must not warn that it cannot enable error recovery (vgmem
# refuses the ERR IRQ index, as QEMU expects of a device without one). L1's
# kernel log stays clean (/init checks). L2 runs ~24x slower than L1, so
# the bounds are generous; every phase's time is printed.
# Files of the share mapped from L2 (vgmem-guest share bind, then file
# read/write over the guest driver's MAP_FD): the GPU reads what L2's CPU
# left dirty in its page cache (FILE_ACQUIRE writes it back), L2's read()
# sees what the GPU wrote after release and sync, the host file holds it
# byte for byte; vggd-check files tries the binding's and MAP_FD's
# refusals.
# vmtest-timeout: 3300
# vmtest-needs: qemu

# The file cache (8 MiB of VRAM) holds the vGPU's share table.
LRC_PARAM=/sys/module/vgmem/parameters/lrc_budget_mb
module_loaded vgmem || modprobe vgmem $VG_PARAMS || fail "loading vgmem"
LRC_OLD=$(cat $LRC_PARAM) || fail "vgmem has no lrc_budget_mb parameter"
trap 'echo $LRC_OLD > $LRC_PARAM' EXIT
echo 8 > $LRC_PARAM
vg_setup gpus=1 vram_mb=64
info "L1 uptime at case start: $(l1_uptime)s"
u=$(mdev_create 1g) || exit 1

share=/tmp/rg-share
mkdir -p $share
# The share L2 mounts is id 1, tag vgshare; eleven more (tags s2..s12)
# make the table two SHARES pages long, so the guest driver's paging runs.
shares="--share 1:$share:tag=vgshare"
for i in $(seq 2 12); do
	mkdir -p /tmp/rg-s$i
	shares="$shares --share $i:/tmp/rg-s$i:ro:tag=s$i"
done
out=$(vgmem-nl set-shares $u $shares 2>&1) || fail "vgmem-nl set-shares: $out"
token=$(new_uuid)
# What L2 writes into the share, made here by the same busybox.
{ echo "$token"; seq 1 10000; } > /tmp/rg-expected

{
	echo "TOKEN=$token"
	cat <<'L2'
t0=$(l2_uptime)
if l2_mount_share vgshare /mnt; then
	{ echo "$TOKEN"; seq 1 10000; } > /mnt/from-l2 && sync &&
		l2_pass "virtio-fs: wrote /mnt/from-l2 (L2 uptime $t0..$(l2_uptime) s)"
fi
t1=$(l2_uptime)
# The guest driver through libvgmem's PCI transport, as a tenant uses it:
# a query and a fill-check whose every byte the GPU checksums; then the
# driver's own checks (malformed calls, DMA buffers, a channel's work seen
# in its mmapped USERD page, faults, a killed process leaving nothing).
if [ -c /dev/vgmem0 ]; then
	t2=$(l2_uptime)
	if vgmem-guest --pci auto info > /tmp/info.out 2>&1; then
		l2_pass "vgmem-guest --pci auto info: $(grep -E '^(abi_version|quota) ' /tmp/info.out | tr '\n' ' ')"
		if grep -q '^shares 12' /tmp/info.out &&
			grep -q 'id=1 ro=0 tag=vgshare' /tmp/info.out &&
			grep -q 'id=12 ro=1 tag=s12' /tmp/info.out; then
			l2_pass "the vGPU's 12 shares with their tags, over two SHARES pages"
		else
			cat /tmp/info.out
			l2_fail "shares in vgmem-guest --pci auto info"
		fi
	else
		cat /tmp/info.out
		l2_fail "vgmem-guest --pci auto info"
	fi
	out=$(vgmem-guest --pci /dev/vgmem0 fill-check --size 4M --bo 2M --seed 95 2>&1)
	case "$out" in
	*"RESULT ok"*) l2_pass "vgmem-guest --pci fill-check: $(echo "$out" | grep RESULT)" ;;
	*) echo "$out"; l2_fail "vgmem-guest --pci fill-check" ;;
	esac
	for c in "basic msi" kill; do
		{ vggd-check $c; echo "rc=$?" > /tmp/gd.rc; } |
			sed 's/^PASS /L2 PASS /; s/^FAIL /L2 FAIL /'
		[ "$(cat /tmp/gd.rc)" = rc=0 ] || l2_fail "vggd-check $c: $(cat /tmp/gd.rc)"
	done
	echo "L2 TIME guest driver checks $t2..$(l2_uptime) s (L2 uptime)"

	# Files of the share, mapped from inside the guest. Periodic
	# write-back off: pages a process dirtied stay dirty until someone
	# writes them back, which FILE_ACQUIRE must do.
	t3=$(l2_uptime)
	echo 0 > /proc/sys/vm/dirty_writeback_centisecs
	out=$(vgmem-guest --pci auto share bind vgshare /mnt 2>&1)
	case "$out" in
	*"RESULT ok"*) l2_pass "vgmem-guest share bind vgshare /mnt" ;;
	*) echo "$out"; l2_fail "vgmem-guest share bind vgshare /mnt" ;;
	esac
	{ vggd-check files /mnt vgshare 41; echo "rc=$?" > /tmp/gd.rc; } |
		sed 's/^PASS /L2 PASS /; s/^FAIL /L2 FAIL /'
	[ "$(cat /tmp/gd.rc)" = rc=0 ] || l2_fail "vggd-check files: $(cat /tmp/gd.rc)"
	echo "L2 INFO dirty after the mmap write: $(grep '^Dirty:' /proc/meminfo)"
	# The GPU sees what the CPU left dirty: the acquire wrote it back.
	out=$(vgmem-guest --pci auto file read 1 cpu.bin --length 256K --expect-pattern 41 2>&1)
	case "$out" in
	*"RESULT ok"*) l2_pass "GPU read cpu.bin after the CPU's mmap writes: $(echo "$out" | grep RESULT)" ;;
	*) echo "$out"; l2_fail "GPU read of cpu.bin" ;;
	esac
	# The CPU sees what the GPU wrote: read() after release and sync,
	# with the old (zero) pages cached before.
	before=$(md5sum < /mnt/gpu.bin)
	out=$(vgmem-guest --pci auto file write 1 gpu.bin --length 256K --pattern 7 2>&1)
	case "$out" in
	*"RESULT ok"*) l2_pass "GPU wrote gpu.bin: $(echo "$out" | grep RESULT)" ;;
	*) echo "$out"; l2_fail "GPU write of gpu.bin" ;;
	esac
	after=$(md5sum < /mnt/gpu.bin)
	echo "L2 MD5 gpu.bin ${after%% *}"
	[ "$before" != "$after" ] && l2_pass "read() sees the GPU's bytes in gpu.bin" ||
		l2_fail "read() of gpu.bin still shows the old bytes after the GPU's release and sync"
	out=$(vgmem-guest --pci auto share unbind vgshare 2>&1)
	case "$out" in
	*"RESULT ok"*) umount /mnt && l2_pass "share unbind, then umount" ||
		l2_fail "umount after share unbind" ;;
	*) echo "$out"; l2_fail "vgmem-guest share unbind vgshare" ;;
	esac
	echo "L2 TIME file maps $t3..$(l2_uptime) s (L2 uptime)"
else
	l2_fail "no /dev/vgmem0: the guest driver did not probe the vGPU"
fi
# The guest driver (loaded by L2's /init when it is built) claims the
# device at probe; the raw PCI checks need it unbound, which also unbinds
# it with no file open.
drv=/sys/bus/pci/drivers/vgmem_guest
# An unbind while a process holds a mapped channel, a BO and a DMA buffer:
# its calls fail ENODEV, the USERD page goes, a rebind finds nothing left.
for d in $drv/0000:*; do
	[ -e "$d" ] || continue
	{ vggd-check unbind "${d##*/}"; echo "rc=$?" > /tmp/gd.rc; } |
		sed 's/^PASS /L2 PASS /; s/^FAIL /L2 FAIL /'
	[ "$(cat /tmp/gd.rc)" = rc=0 ] || l2_fail "vggd-check unbind: $(cat /tmp/gd.rc)"
done
for d in $drv/0000:*; do
	[ -e "$d" ] || continue
	if echo "${d##*/}" > $drv/unbind; then
		l2_pass "vgmem_guest bound ${d##*/} at probe and unbinds"
	else
		l2_fail "unbinding vgmem_guest from ${d##*/}"
	fi
done
vgpci-touch
rc=$?
[ $rc = 0 ] && l2_pass "vgpci-touch" || l2_fail "vgpci-touch exited $rc"
echo "L2 TIME virtio-fs $t0..$t1 s, vgpci-touch $t1..$(l2_uptime) s (L2 uptime)"
L2
} > /tmp/rg-run.sh

# L2 maps these from its mount: gpu.bin the GPU writes, cpu.bin L2's CPU.
dd if=/dev/zero of=$share/gpu.bin bs=64k count=4 2> /dev/null

# cache=always: L2 keeps the share's pages cached across opens, so read()
# sees the GPU's bytes only if the driver drops them, and a shared mmap
# leaves dirty pages that only FILE_ACQUIRE's write-back brings out.
L2_VIRTIOFS_CACHE=always l2_start rg --mdev $u --share vgshare $share --script /tmp/rg-run.sh
l2_wait rg 3000

# What the GPU in L2 wrote is in the host file, byte for byte, and is
# what L2's read() saw; what L2's CPU wrote through mmap reached it too.
for f in "gpu.bin 7" "cpu.bin 41"; do
	set -- $f
	out=$(vgmem-guest --inproc --share 1=$share file read 1 $1 --length 256K --expect-pattern $2 2>&1)
	case "$out" in
	*"RESULT ok"*) info "host file $1 holds pattern $2" ;;
	*) echo "$out"; fail "host file $1 does not hold pattern $2" ;;
	esac
done
l2md5=$(l2_console rg | sed -n 's/^L2 MD5 gpu.bin //p')
expect_eq "$l2md5" "$(md5sum < $share/gpu.bin | cut -d' ' -f1)" "L2's read() of gpu.bin against the host file"

if grep -q 'Could not enable error recovery' "$(l2_dir rg)/qemu.err"; then
	fail "L2's QEMU could not enable error recovery: vgmem must refuse the ERR IRQ index"
fi
cmp -s $share/from-l2 /tmp/rg-expected ||
	fail "the file L2 wrote into the share differs: $(wc -c < $share/from-l2 2>/dev/null || echo missing) bytes, expected $(wc -c < /tmp/rg-expected)"
info "virtio-fs: L2's $(wc -c < /tmp/rg-expected) bytes arrived intact"
mdev_remove $u
