# SPDX-License-Identifier: GPL-2.0 OR MIT
# 70-teardown: an mdev removed while its guest runs, and a guest killed with
# SIGKILL while its memory is being relocated, leave the host clean: the
# remove completes once the guest is gone, the GPU's memory is all free again,
# a new mdev works, the kernel log stays clean (checked by /init).
# vmtest-timeout: 240

require_guest
vg_setup gpus=1 vram_mb=32
set_oversub 12800
echo 100 > $(gpu_dir)/return_interval_ms || fail "setting return_interval_ms"

# 1. Remove under a running guest. VFIO's remove waits until the device is
# closed (asking the user to release it); the guest is killed if it has not
# gone within 5 s, and the remove must then finish.
u=$(mdev_create 1g) || exit 1
guest_bg busy --dev $u fill-check --size 8M --bo 2M --seed 41 --hold 3600
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$u/vgmem/resident) -gt 0 ]" ||
	fail "the guest never had memory resident"
( echo 1 > $MDEV_DEVS/$u/remove; echo $? > /tmp/remove.rc ) &
if ! wait_until 5 guest_done busy; then
	info "guest still running 5 s after remove started: SIGKILL"
	kill -9 $(cat /tmp/guest.busy.pid)
fi
info "guest exit status $(guest_reap busy)"
wait_until 30 test -f /tmp/remove.rc || fail "mdev remove still blocked 30 s after its guest died"
expect_eq "$(cat /tmp/remove.rc)" 0 "exit status of the remove"
[ ! -e $MDEV_DEVS/$u ] || fail "mdev $u still present after remove"

# 2. SIGKILL mid-relocation: the victim (no entitlement) holds 16 MiB, the
# peer allocates and frees 24 MiB again and again so the victim's chunks move
# out and back; the victim is killed while that goes on.
v=$(mdev_create 1g) || exit 1
p=$(mdev_create 1g) || exit 1
echo 1 > $MDEV_DEVS/$v/vgmem/entitlement || fail "setting the victim's entitlement"
echo 33554432 > $MDEV_DEVS/$p/vgmem/entitlement || fail "setting the peer's entitlement"
guest_bg victim --dev $v fill-check --size 16M --bo 2M --seed 42 --hold 3600
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$v/vgmem/resident) -ge 16777216 ]" ||
	fail "the victim never had its 16 MiB resident"
(
	while [ ! -f /tmp/stop-peer ]; do
		vgmem-guest --dev $p alloc --size 24M --bo 2M > /tmp/peer.last 2>&1 ||
			{ cp /tmp/peer.last /tmp/peer.failed; break; }
	done
) &
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$v/vgmem/relocations_out) -gt 0 ]" ||
	fail "the victim was never relocated"
sleep 1
info "victim: relocations_out $(mdev_attr $v relocations_out) in $(mdev_attr $v relocations_in): SIGKILL"
kill -9 $(cat /tmp/guest.victim.pid)
info "victim exit status $(guest_reap victim)"
sleep 2
touch /tmp/stop-peer
wait
[ ! -f /tmp/peer.failed ] || fail "the peer failed after the victim was killed: $(tail -n 1 /tmp/peer.failed)"

# The killed guest's memory is all gone; the peer still works on a clean GPU.
expect_eq "$(mdev_attr $v resident)" 0 "resident of the killed guest's mdev"
expect_eq "$(mdev_attr $v relocated)" 0 "relocated of the killed guest's mdev"
guest peer-after --dev $p fill-check --size 24M --bo 2M --seed 43
guest reuse --dev $v fill-check --size 8M --bo 2M --seed 44
mdev_remove $v
mdev_remove $p
expect_eq "$(gpu_attr vram_used)" 0 "the GPU's vram_used with no mdev"
expect_eq "$(gpu_attr host_used)" 0 "the GPU's host_used with no mdev"
