# SPDX-License-Identifier: GPL-2.0 OR MIT
# 98-migrate-guest: a real nested guest (L2) with a vgmem vGPU live-migrated
# between two QEMU 10 processes in this VM (VFIO migration protocol v2;
# QEMU 10.0 from bookworm-backports, "# vmtest-needs: qemu10"), from an
# mdev on one GPU to an mdev on another, while a tenant in L2 keeps 8 MiB
# of GPU memory under continuous checksum checks (vgmem-guest --pci
# fill-check --hold: GPU work in flight when the source stops). After the
# switch-over the source's QEMU quits and its mdev is empty; L2, told over
# its second serial port, ends the hold: every check passed on both sides
# of the migration, and new work runs on the destination's vGPU. The
# migration's total time and downtime (QEMU's) are printed.
# vmtest-timeout: 2400
# vmtest-needs: qemu qemu10

vg_setup gpus=2 vram_mb=64
set_oversub 6400
info "L1 uptime at case start: $(l1_uptime)s"
src=$(mdev_create 1g 0) || exit 1
dst=$(mdev_create 1g 1) || exit 1

cat > /tmp/mig-l2.sh <<'L2'
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

opts="--script /tmp/mig-l2.sh --qemu $L2_QEMU10 --vfio-opts ,enable-migration=on --monitor --signal"
l2_start mig --mdev $src $opts
t_start=$(l1_uptime)
if ! wait_until 1500 grep -qs '^L2 MIGRATE-READY' "$(l2_dir mig)/console"; then
	l2_kill mig
	l2_print mig
	fail "L2 never got its data written and held (no 'L2 MIGRATE-READY' in 1500 s)"
fi
info "L2 ready to migrate after $(secs_since "$t_start")s; vGPU on the source: allocated $(mdev_attr $src allocated), resident $(mdev_attr $src resident)"
[ "$(mdev_attr $src allocated)" -ge 8388608 ] || fail "the source vGPU holds $(mdev_attr $src allocated) bytes, not L2's 8 MiB"

l2_start mig-dst --mdev $dst $opts --incoming unix:/tmp/mig.sock
wait_until 300 sh -c "ls /tmp/mig.sock > /dev/null 2>&1" || {
	l2_kill mig; l2_kill mig-dst; l2_print mig-dst
	fail "the destination QEMU never listened on /tmp/mig.sock"
}
# QEMU switches over once what is left fits its downtime limit at the
# switch-over bandwidth. What a VFIO device has left it asks the kernel
# (VFIO_DEVICE_FEATURE_MIG_DATA_SIZE, 6.2 and later: vgmem.ko answers with
# its stream's size); without the answer (6.1) QEMU 10 assumes 100 GiB
# and would never switch over, so there, as an operator on such a kernel
# must, we tell it the switch-over bandwidth (avail-switchover-bandwidth)
# so that 100 GiB "fit" 2 s. The downtime QEMU reports is what the stop
# really took.
mig_params() {
	for p in "$@"; do
		out=$(l2_hmp mig "migrate_set_parameter $p")
		case "$out" in
		*rror* | *nvalid*) fail "migrate_set_parameter $p: $out" ;;
		esac
		info "migration parameter: $p"
	done
}
case "$(uname -r)" in
[0-5].* | 6.[01].*)
	mig_params "downtime-limit 2000" "max-bandwidth 4G" "avail-switchover-bandwidth 1000G" ;;
*)
	mig_params "downtime-limit 2000" "max-bandwidth 4G" ;;
esac
t_mig=$(l1_uptime)
l2_hmp mig "migrate -d unix:/tmp/mig.sock"
n=0
while :; do
	st=$(l2_hmp mig "info migrate" 120)
	case "$st" in
	*"Migration status: completed"*) break ;;
	*"Migration status: failed"* | *"Migration status: cancelled"*)
		echo "$st"
		l2_kill mig; l2_kill mig-dst; l2_print mig; l2_print mig-dst
		fail "the migration did not complete" ;;
	esac
	n=$((n + 1))
	[ $n -lt 600 ] || { echo "$st"; l2_kill mig; l2_kill mig-dst; fail "migration still running after 600 polls"; }
	sleep 1
done
echo "$st" | grep -E '^(total time|downtime|transferred ram|setup):' | sed 's/^/migration: /'
info "migrated in $(secs_since "$t_mig")s (L1 time)"
st=$(l2_hmp mig-dst "info status")
case "$st" in
*"VM status: running"*) ;;
*) l2_kill mig; l2_kill mig-dst; fail "destination after the migration: $st" ;;
esac

# The source is done: its QEMU quits, its vGPU is closed and empty.
echo quit > "$(l2_dir mig)/mon.in"
wait_until 120 test -f "$(l2_dir mig)/qemu.rc" || { l2_kill mig; fail "the source QEMU did not quit"; }
l2_print mig
expect_eq "$(cat "$(l2_dir mig)/qemu.rc")" 0 "the source QEMU's exit status"
expect_eq "$(mdev_attr $src allocated)" 0 "allocated on the source after its QEMU quit"
[ "$(mdev_attr $dst allocated)" -ge 8388608 ] || fail "the destination vGPU holds $(mdev_attr $dst allocated) bytes, not L2's 8 MiB"

l2_signal mig-dst "migrated"
l2_wait mig-dst 1500
expect_eq "$(mdev_attr $dst allocated)" 0 "allocated on the destination after L2 powered off"
mdev_remove $src
mdev_remove $dst
