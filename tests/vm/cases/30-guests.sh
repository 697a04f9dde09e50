# SPDX-License-Identifier: GPL-2.0 OR MIT
# 30-guests: several vgmem-guest processes, each on its own mdev (two GPUs),
# run the built-in workloads and fill-checks in parallel; every result is
# checked by the guests (checksums of the data the GPU computed).
# vmtest-timeout: 240

require_guest
vg_setup gpus=2 vram_mb=256

a=$(mdev_create 1g 0) || exit 1
b=$(mdev_create 1g 0) || exit 1
c=$(mdev_create 1g 1) || exit 1
d=$(mdev_create 2g 1) || exit 1

guest info-a --dev $a info
grep -q . /tmp/guest.info-a.log || fail "info printed nothing"

guest_bg stream --dev $a workload stream --ws 8M --iters 4 --seed 1
guest_bg gather --dev $b workload gather --ws 8M --iters 4 --seed 2
guest_bg strided --dev $c workload strided --ws 8M --iters 4 --seed 3
guest_bg fill --dev $d fill-check --size 16M --bo 2M --loops 2 --seed 4
for g in stream gather strided fill; do guest_wait $g; done

# Second round on the same mdevs: reopening works, other workloads.
guest_bg hotcold --dev $a workload hotcold --ws 8M --iters 4 --seed 5
guest_bg fill-b --dev $b fill-check --size 8M --bo 1M --seed 6
guest_bg submit --dev $c submit-loop --count 200
for g in hotcold fill-b submit; do guest_wait $g; done

for u in $a $b $c $d; do
	expect_eq "$(mdev_attr $u resident)" 0 "resident of $u after its guest freed everything"
	mdev_remove $u
done
