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
# someone else's chunks can give. All three hold (and re-check) their data
# until the case ends their holds, once B and C both hold theirs: how long
# that takes on a loaded host is not guessed.
guest_bg a --dev $a fill-check --size 40M --bo 4M --seed 11 --hold 3600
wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$a/vgmem/resident) -ge 41943040 ]" ||
	fail "guest a never became resident with 40 MiB (resident $(mdev_attr $a resident))"
guest_bg b --dev $b fill-check --size 40M --bo 4M --seed 12 --hold 3600
guest_bg c --dev $c fill-check --size 40M --bo 2M --seed 13 --hold 3600

# While all three hold their data, some of it must live in system memory.
# relocated (a gauge of the open device) is read while the guests run; the
# counters outlive the close (34-stats-lifetime) but are sampled here too.
max_reloc=0
max_outs=0
max_vram=0
max_host=0
sample() {
	r=$(attr_sum relocated $a $b $c) || exit 1
	o=$(attr_sum relocations_out $a $b $c) || exit 1
	v=$(gpu_attr vram_used) || exit 1
	h=$(gpu_attr host_used) || exit 1
	[ $r -gt $max_reloc ] && max_reloc=$r
	[ $o -gt $max_outs ] && max_outs=$o
	[ $v -gt $max_vram ] && max_vram=$v
	[ $h -gt $max_host ] && max_host=$h
}
# Until both hold (a guest that ends first is reported by guest_end), then
# once more: 120 MiB are allocated on the 64 MiB GPU at that sample.
until guest_held_or_done b && guest_held_or_done c; do
	sample
	sleep 0.5
done
sample
info "at most: relocated $max_reloc, relocations_out $max_outs, GPU vram_used $max_vram, host_used $max_host"
# Each re-checks all its data in a whole round after every allocation: a
# hold logs "hold round N ok" at most once a second, so two more lines
# than now mean one round started after this point and ended.
rounds() {
	grep -c "hold round [0-9]* ok" /tmp/guest.$1.log
}
na=$(($(rounds a) + 2))
nb=$(($(rounds b) + 2))
nc=$(($(rounds c) + 2))
# rechecked: each did, or one has ended (guest_end reports it).
rechecked() {
	guest_done a || guest_done b || guest_done c ||
		{ [ $(rounds a) -ge $na ] && [ $(rounds b) -ge $nb ] && [ $(rounds c) -ge $nc ]; }
}
wait_until 600 rechecked ||
	fail "the guests did not re-check their data within 600 s: $(tail -qn 1 /tmp/guest.[abc].log)"
guest_end b
guest_end c
guest_end a

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
