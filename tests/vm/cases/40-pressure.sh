# SPDX-License-Identifier: GPL-2.0 OR MIT
# 40-pressure: three guests whose data together is twice the VRAM; the host
# relocates chunks to system memory (relocated > 0 and relocations counted in
# sysfs while they hold their data) and every byte checks out: each guest
# re-checksums all of its buffers for the whole time it holds them.
# vmtest-timeout: 300

require_guest
vg_setup gpus=1 vram_mb=64
set_oversub 6400	# 4 GiB of quota on 64 MiB

a=$(mdev_create 1g) || exit 1
b=$(mdev_create 1g) || exit 1
c=$(mdev_create 1g) || exit 1

# A fills most of VRAM first; B and C then need room that only relocation of
# someone else's chunks can give.
guest_bg a --dev $a fill-check --size 40M --bo 4M --seed 11 --hold 12
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$a/vgmem/resident) -ge 41943040 ]" ||
	fail "guest a never became resident with 40 MiB (resident $(mdev_attr $a resident))"
guest_bg b --dev $b fill-check --size 40M --bo 4M --seed 12 --hold 6
guest_bg c --dev $c fill-check --size 40M --bo 2M --seed 13 --hold 6

# While all three hold their data, some of it must live in system memory.
# relocated (a gauge of the open device) is read while the guests run; the
# counters outlive the close (34-stats-lifetime) but are sampled here too.
max_reloc=0
max_outs=0
max_vram=0
max_host=0
while [ ! -f /tmp/guest.b.rc ] || [ ! -f /tmp/guest.c.rc ]; do
	r=$(attr_sum relocated $a $b $c) || exit 1
	o=$(attr_sum relocations_out $a $b $c) || exit 1
	v=$(gpu_attr vram_used) || exit 1
	h=$(gpu_attr host_used) || exit 1
	[ $r -gt $max_reloc ] && max_reloc=$r
	[ $o -gt $max_outs ] && max_outs=$o
	[ $v -gt $max_vram ] && max_vram=$v
	[ $h -gt $max_host ] && max_host=$h
	sleep 0.5
done
info "at most: relocated $max_reloc, relocations_out $max_outs, GPU vram_used $max_vram, host_used $max_host"
guest_wait b
guest_wait c
guest_wait a

[ $max_reloc -gt 0 ] || fail "120 MiB of data on a 64 MiB GPU, but relocated stayed 0"
[ $max_outs -gt 0 ] || fail "relocations_out stayed 0 for every mdev"
[ $max_vram -gt 0 ] || fail "the GPU's vram_used stayed 0 while guests held 120 MiB"
[ $max_vram -le 67108864 ] || fail "the GPU's vram_used $max_vram exceeds its 64 MiB"
[ $max_host -gt 0 ] || fail "the GPU's host_used stayed 0 while $max_reloc bytes were relocated"

for u in $a $b $c; do
	expect_eq "$(mdev_attr $u resident)" 0 "resident of $u after its guest freed everything"
	expect_eq "$(mdev_attr $u relocated)" 0 "relocated of $u after its guest freed everything"
	mdev_remove $u
done
