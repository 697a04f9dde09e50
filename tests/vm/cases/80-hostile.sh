# SPDX-License-Identifier: GPL-2.0 OR MIT
# 80-hostile: a guest does forbidden things (wild GPU VAs, malformed GPFIFO
# entries and pushbuffers, bad control commands, rings outside its DMA map, a
# flood of commands, stray BAR2 accesses and the VFIO IRQ indexes a VMM
# probes). vgmem-guest checks that each gets exactly the documented
# error and that the same guest's fresh channel still works; here a peer on
# the same GPU re-checks its data the whole time and must be unaffected, and
# the kernel log must stay clean (/init checks it).
# vmtest-timeout: 300

require_guest
vg_setup gpus=1 vram_mb=64
set_oversub 6400

h=$(mdev_create 1g) || exit 1
p=$(mdev_create 1g) || exit 1

guest_bg peer --dev $p fill-check --size 16M --bo 2M --seed 51 --hold 3600
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$p/vgmem/resident) -ge 16777216 ]" ||
	fail "the peer never had its 16 MiB resident"

for mode in wild-va bad-entry bad-method bad-ctrl ring-outside flood bar; do
	case $mode in
	flood) guest hostile-$mode --dev $h hostile $mode --count 1024 ;;
	*) guest hostile-$mode --dev $h hostile $mode ;;
	esac
	guest_done peer && fail "the peer stopped during hostile $mode: $(tail -n 1 /tmp/guest.peer.log)"
	expect_eq "$(mdev_attr $p faults)" 0 "the peer's channel faults after hostile $mode"
done
# The peer's hold outlasts the hostile runs; it has re-checked all its data
# throughout. Stop it and check once more from a fresh open.
kill -9 $(cat /tmp/guest.peer.pid)
guest_reap peer > /dev/null
guest peer-final --dev $p fill-check --size 16M --bo 2M --seed 52
mdev_remove $h
mdev_remove $p
