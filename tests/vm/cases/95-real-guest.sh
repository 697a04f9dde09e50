# SPDX-License-Identifier: GPL-2.0 OR MIT
# 95-real-guest: a real nested guest (L2: Debian's kernel under Debian's
# QEMU inside this VM) gets a vgmem mdev as a PCI device (vfio-pci) and a
# virtio-fs share. In L2: the share mounts and a file written there arrives
# here byte for byte; the guest driver, if built, probed the device.
# Through it (vgmem-guest --pci, libvgmem's PCI transport) L2 runs the four
# built-in workloads, a submit loop and a 4 MiB fill-check while L1 pushes
# its vGPU's chunks out to host RAM and back (a VFIO peer here, entitled to
# all of the VRAM, allocates 64 MiB - 4 KiB round after round; L2 marks the
# phase's start and end with files in the share): L2 sees no error, every
# check passes, and L2's mdev counts relocations out and in during the
# phase. A vgmem-guest killed with SIGKILL amid its work (a channel, BOs,
# GPU work) leaves nothing: a fresh open sees allocated, resident and
# relocated 0. A bystander VFIO guest here keeps 8 MiB of filled BOs
# through everything that follows, intact.
# Files of the share mapped from L2 (vgmem-guest share bind, then file
# read/write over the guest driver's MAP_FD): the GPU reads what L2's CPU
# left dirty in its page cache (FILE_ACQUIRE writes it back), L2's read()
# sees what the GPU wrote after release and sync, the host file holds it
# byte for byte; vggd-check files tries the binding's and MAP_FD's
# refusals.
# Then vggd-check unbinds the driver, and removes the device from L2's PCI
# bus (a hot unplug, as the driver sees it) and rescans, each while a
# process holds a channel; reloaded with irq=intx, the driver passes the
# basic checks on INTx; then the driver is unbound; vgpci-touch finds
# 1b36:10f0, enables it, reads REG_ID and REG_ABI_VERSION through the
# trapped BAR0, and touches every 4 KiB page of BAR2 (the USERD pages):
# with no channel open, every page reads 0 and takes a write, nothing
# faults, and L2's QEMU survives to power off normally. QEMU must not warn
# that it cannot enable error recovery (vgmem refuses the ERR IRQ index, as
# QEMU expects of a device without one). L1's kernel log stays clean (/init checks). L2
# runs ~24x slower than L1, so the bounds are generous; every phase's time
# is printed.
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
	# Under relocation: from wl-start to wl-done (files in the share, L1
	# polls for them) L1 keeps pushing this vGPU's chunks out to host RAM
	# and letting them back. Meanwhile a fill-check re-checks its 4 MiB,
	# a submit loop's entries must complete in order, the four built-in
	# workloads run; none may see an error. Then a process killed amid its
	# work (a channel, BOs, GPU work in flight) leaves nothing behind.
	# L2's one vCPU is the bottleneck (each program started costs seconds
	# here), so the sizes are small and the shell starts few programs.
	t3=$(l2_uptime)
	# wl_judge WHAT EXIT-STATUS OUTPUT-FILE START-UPTIME
	wl_judge() {
		last=$(tail -n 1 "$3")
		case "$2 $last" in
		"0 RESULT ok"*)
			l2_pass "under relocation: $last ($1, L2 uptime $4..$(l2_uptime) s)" ;;
		*)
			cat "$3"
			l2_fail "under relocation: $1 exited $2: $last" ;;
		esac
	}
	# Running, not a zombie waiting for our wait (kill -0 takes those).
	wl_alive() {
		grep -q '^State:[^(]*([^z]' /proc/$1/status 2> /dev/null
	}
	# /mnt stays mounted from the virtio-fs check above, unless that failed.
	if ! grep -q ' /mnt virtiofs ' /proc/mounts && ! l2_mount_share vgshare /mnt; then
		: # l2_mount_share said why
	elif ! : > /mnt/wl-start; then
		l2_fail "under relocation: cannot create /mnt/wl-start"
	else
		ts=$(l2_uptime)
		vgmem-guest --pci /dev/vgmem0 fill-check --size 4M --bo 1M \
			--seed 951 --hold 15 > /tmp/wl-hold.out 2>&1 &
		hold_pid=$!
		vgmem-guest --pci /dev/vgmem0 submit-loop --count 2000 > /tmp/wl-submit.out 2>&1 &
		submit_pid=$!
		seed=952
		for k in stream strided gather hotcold; do
			tk=$(l2_uptime)
			vgmem-guest --pci /dev/vgmem0 workload $k --ws 4M --bo 1M --iters 10 \
				--seed $seed > /tmp/wl-$k.out 2>&1
			wl_judge "workload $k" $? /tmp/wl-$k.out $tk
			seed=$((seed + 1))
		done
		wait $submit_pid
		wl_judge submit-loop $? /tmp/wl-submit.out $ts
		wait $hold_pid
		wl_judge fill-check $? /tmp/wl-hold.out $ts
		echo "the fill-check's last STATS: $(grep -h '^allocated .* reloc_out_chunks' /tmp/wl-hold.out)"

		t4=$(l2_uptime)
		vgmem-guest --pci /dev/vgmem0 fill-check --size 2M --bo 512K --seed 960 \
			--hold 3600 > /tmp/wl-victim.out 2>&1 &
		victim=$!
		# "hold round" comes once it has filled, checked and re-checked
		# its BOs for a second: its channel and BOs are in use.
		w=0
		while ! grep -q '^hold round' /tmp/wl-victim.out &&
			wl_alive $victim && [ $w -lt 600 ]; do
			sleep 1
			w=$((w + 1))
		done
		if grep -q '^hold round' /tmp/wl-victim.out && wl_alive $victim; then
			vgmem-guest --pci /dev/vgmem0 info > /tmp/wl-info1.out 2>&1
			a1=$(sed -n 's/^allocated //p' /tmp/wl-info1.out)
			kill -9 $victim
			wait $victim
			rc=$?
			vgmem-guest --pci /dev/vgmem0 info > /tmp/wl-info2.out 2>&1
			got=$(grep -E '^(allocated|resident|relocated) ' /tmp/wl-info2.out | tr '\n' ' ')
			if [ "$rc" = 137 ] && [ "${a1:-0}" -ge 2097152 ] &&
				[ "$got" = "allocated 0 resident 0 relocated 0 " ]; then
				l2_pass "vgmem-guest --pci killed amid a hold (allocated $a1 then): a fresh open sees $got(L2 uptime $t4..$(l2_uptime) s)"
			else
				cat /tmp/wl-victim.out /tmp/wl-info1.out /tmp/wl-info2.out
				l2_fail "kill -9 amid work: exit $rc, allocated ${a1:-?} before; after: $got"
			fi
		else
			kill -9 $victim 2> /dev/null
			wait $victim
			cat /tmp/wl-victim.out
			l2_fail "the fill-check to kill never reached its hold (waited $w s)"
		fi
		: > /mnt/wl-done
	fi
	t5=$(l2_uptime)
	echo "L2 TIME under relocation $t3..$t5 s: workloads ${ts:-?}..${t4:-?}, kill ${t4:-?}..$t5 (L2 uptime)"
	for c in "basic msi" kill; do
		l2_vggd $c
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
	l2_vggd files /mnt vgshare 41
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
	l2_vggd unbind "${d##*/}"
done
# The same with the device taken off the bus, which is what a hot unplug
# does to the driver, and found again by a rescan.
for d in $drv/0000:*; do
	[ -e "$d" ] || continue
	l2_vggd remove "${d##*/}"
done
# INTx, the fallback when MSI cannot be had: the driver again with
# irq=intx (L2 routes INTx through the BIOS's PIRQ table, acpi=noirq), and
# the basic checks (interrupts included) on it.
t6=$(l2_uptime)
if [ -c /dev/vgmem0 ] && rmmod vgmem_guest &&
	insmod /l2/modules/vgmem_guest.ko irq=intx; then
	w=0
	while [ ! -c /dev/vgmem0 ] && [ $w -lt 300 ]; do
		sleep 1
		w=$((w + 1))
	done
	l2_vggd basic intx
else
	l2_fail "reloading vgmem_guest with irq=intx"
fi
echo "L2 TIME INTx $t6..$(l2_uptime) s (L2 uptime)"
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

# Pressure on L2's workload phase, which L2 brackets with the files
# wl-start and wl-done in the share: a peer guest here (VFIO) entitled to
# the whole VRAM allocates and fills 64 MiB - 4 KiB, holds it a second and
# frees it, round after round; L2's vGPU, entitled to nothing, is the
# victim, so each round pushes its resident chunks out to host RAM and the
# return worker brings them back after the free. The loop ends with
# wl-done, with L2's QEMU, with this shell or after 1200 s of rounds.
# Every round must succeed: a victim that does not stop in time (this
# host starving L1 of CPU) is skipped for a while, never the reason for
# an allocation to fail. L2's counters must rise.
set_oversub 6400	# room for the peer's 1g beside L2's
echo 1 > $MDEV_DEVS/$u/vgmem/entitlement || fail "setting L2's entitlement"
peer=$(mdev_create 1g) || exit 1
echo 67108864 > $MDEV_DEVS/$peer/vgmem/entitlement || fail "setting the peer's entitlement"
by=$(mdev_create 1g) || exit 1
echo 8388608 > $MDEV_DEVS/$by/vgmem/entitlement || fail "setting the bystander's entitlement"
rm -f $share/wl-start $share/wl-done /tmp/rg-press.*
rg_counters() {
	echo "out $(cat $MDEV_DEVS/$u/vgmem/relocations_out) in $(cat $MDEV_DEVS/$u/vgmem/relocations_in)"
}
rg_pressure() {
	local waited=0 rounds=0 t_start rc rel max_rel=0 qrc last
	qrc=$(l2_dir rg)/qemu.rc
	while [ ! -f $share/wl-start ]; do
		if [ -f $qrc ] || ! kill -0 $$ 2> /dev/null; then
			echo "end: L2 ended before its workload phase"
			return 1
		fi
		if [ $waited -ge 2400 ]; then
			echo "end: no wl-start from L2 within 2400 s"
			return 1
		fi
		sleep 1
		waited=$((waited + 1))
	done
	echo "start: L1 uptime $(l1_uptime), L2's vGPU $(rg_counters)"
	t_start=$(l1_uptime)
	while [ ! -f $share/wl-done ]; do
		if [ -f $qrc ] || ! kill -0 $$ 2> /dev/null; then
			echo "end: L2 ended without wl-done"
			return 1
		fi
		if [ "$(secs_since $t_start | cut -d. -f1)" -ge 1200 ]; then
			echo "end: no wl-done from L2 after 1200 s of rounds"
			return 1
		fi
		guest_bg peer --dev $peer alloc --size 67104768 --bo 67104768 --hold 1
		while ! guest_done peer; do
			rel=$(cat $MDEV_DEVS/$u/vgmem/relocated)
			[ "$rel" -gt $max_rel ] && max_rel=$rel
			sleep 0.2
		done
		wait
		rc=$(cat /tmp/guest.peer.rc)
		last=$(tail -n 1 /tmp/guest.peer.log)
		case "$rc $last" in
		"0 RESULT ok"*)
			rounds=$((rounds + 1))
			echo "round $rounds: L2's vGPU $(rg_counters), relocated at most $max_rel"
			;;
		*)
			sed 's/^/[peer] /' /tmp/guest.peer.log
			echo "end: peer round $((rounds + 1)) exited $rc: $last"
			return 1
			;;
		esac
		sleep 1
	done
	echo "done: L1 uptime $(l1_uptime), L2's vGPU $(rg_counters) max $max_rel rounds $rounds"
	# L2's hostile checks follow wl-done: a bystander VM here keeps 8 MiB
	# of filled BOs through them, checked once L2 has gone.
	guest_bg by --dev $by alloc --size 8M --bo 4M --hold 3000
}

# cache=always: L2 keeps the share's pages cached across opens, so read()
# sees the GPU's bytes only if the driver drops them, and a shared mmap
# leaves dirty pages that only FILE_ACQUIRE's write-back brings out.
L2_VIRTIOFS_CACHE=always l2_start rg --mdev $u --share vgshare $share --script /tmp/rg-run.sh
{
	rg_pressure > /tmp/rg-press.log 2>&1
	echo $? > /tmp/rg-press.rc
} &
rg_press=$!
l2_wait rg 3000

# The pressure loop sees L2's QEMU gone at its next round at the latest.
if ! wait_until 600 test -f /tmp/rg-press.rc; then
	kill -9 $rg_press $(cat /tmp/guest.peer.pid 2> /dev/null) 2> /dev/null
	fail "the pressure loop did not end within 600 s of L2's exit: $(tail -n 1 /tmp/rg-press.log)"
fi
wait $rg_press
sed 's/^/[pressure] /' /tmp/rg-press.log
grep -q '^done:' /tmp/rg-press.log || fail "pressure on L2: $(tail -n 1 /tmp/rg-press.log)"
set -- $(sed -n 's/^start: .* out \([0-9]*\) in \([0-9]*\)$/\1 \2/p' /tmp/rg-press.log) \
	$(sed -n 's/^done: .* out \([0-9]*\) in \([0-9]*\) max \([0-9]*\) rounds \([0-9]*\)$/\1 \2 \3 \4/p' /tmp/rg-press.log)
[ $# = 6 ] || fail "pressure on L2: cannot read the counters from its log"
info "pressure: $6 rounds during L2's workload phase; L2's vGPU: relocations_out $1 -> $3, relocations_in $2 -> $4, at most $5 bytes in host RAM"
[ $3 -gt $1 ] || fail "no chunk of L2's vGPU was relocated out during its workload phase"
[ $4 -gt $2 ] || fail "no chunk of L2's vGPU came back to VRAM during its workload phase"
[ $5 -gt 0 ] || fail "L2's vGPU never had bytes relocated while the peer held its VRAM"
mdev_remove $peer

# The bystander's bytes and its device outlived L2's hostile phase: ended
# now, it checks every chunk of its BOs and must end "RESULT ok".
wait_until 600 grep -q '^hold ready' /tmp/guest.by.log ||
	fail "the bystander never reached its hold: $(tail -n 1 /tmp/guest.by.log 2> /dev/null)"
kill -TERM "$(cat /tmp/guest.by.pid)"
wait_until 600 guest_done by || fail "the bystander did not end within 600 s of SIGTERM"
guest_wait by
grep -q 'hold ended early by a signal' /tmp/guest.by.log ||
	fail "the bystander's hold ended by itself, not when L2 had gone"
info "a bystander VM's 8 MiB outlived L2's hostile checks intact"
mdev_remove $by

# What the GPU in L2 wrote is in the host file, byte for byte, and is
# what L2's read() saw; what L2's CPU wrote through mmap reached it too.
for f in "gpu.bin 7" "cpu.bin 41"; do
	set -- $f
	out=$(vgmem-guest-inproc --inproc --share 1=$share file read 1 $1 --length 256K --expect-pattern $2 2>&1)
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
