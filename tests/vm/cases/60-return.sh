# SPDX-License-Identifier: GPL-2.0 OR MIT
# 60-return: a guest's chunks pushed out by a peer come back to VRAM once the
# peer frees its memory: its relocated bytes fall to 0 and its resident bytes
# rise to everything it holds, and its data still checks out.
# vmtest-timeout: 180

require_guest
vg_setup gpus=1 vram_mb=32
set_oversub 12800
echo 100 > $(gpu_dir)/return_interval_ms || fail "setting return_interval_ms"

v=$(mdev_create 1g) || exit 1
p=$(mdev_create 1g) || exit 1
# The victim is entitled to nothing, the peer to the whole VRAM: the room
# the peer needs comes from the victim.
echo 1 > $MDEV_DEVS/$v/vgmem/entitlement || fail "setting the victim's entitlement"
echo 33554432 > $MDEV_DEVS/$p/vgmem/entitlement || fail "setting the peer's entitlement"

# Both hold until the case ends their holds (guest_end): the steps between
# take what they take on a loaded host.
guest_bg victim --dev $v fill-check --size 16M --bo 2M --seed 31 --hold 3600
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$v/vgmem/resident) -ge 16777216 ]" ||
	fail "the victim never had its 16 MiB resident"
guest_bg peer --dev $p alloc --size 24M --bo 2M --hold 3600

# While the peer holds its 24 MiB, part of the victim's 16 MiB is out.
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$v/vgmem/relocated) -gt 0 ]" ||
	fail "the victim was never relocated (relocated $(mdev_attr $v relocated))"
low=$(mdev_attr $v resident) || exit 1
out=$(mdev_attr $v relocated) || exit 1
info "victim with the peer holding: resident $low relocated $out"
guest_end peer

# The peer has freed: everything returns.
wait_until 30 sh -c "[ \$(cat $MDEV_DEVS/$v/vgmem/relocated) -eq 0 ]" ||
	fail "the victim's chunks did not come back (relocated $(mdev_attr $v relocated))"
high=$(mdev_attr $v resident) || exit 1
ins=$(mdev_attr $v relocations_in) || exit 1
info "victim after the peer freed: resident $high, relocations_in $ins"
[ $high -gt $low ] || fail "resident did not rise after the peer freed ($low -> $high)"
[ $ins -gt 0 ] || fail "relocations_in is 0 after a return"
guest_end victim

mdev_remove $v
mdev_remove $p
