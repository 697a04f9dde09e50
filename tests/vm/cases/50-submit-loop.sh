# SPDX-License-Identifier: GPL-2.0 OR MIT
# 50-submit-loop: a guest submits GPFIFO entries in a loop (each entry waits
# for its predecessor's semaphore, so any reordering or loss hangs or fails
# it) while two other guests keep a 32 MiB GPU over-full; with a tiny
# entitlement its chunks are the victims, so its channel is suspended and its
# USERD shadowed again and again. It must complete every
# entry in order without seeing an error.
# vmtest-timeout: 300

require_guest
vg_setup gpus=1 vram_mb=32
set_oversub 12800	# 4 GiB of quota on 32 MiB

s=$(mdev_create 1g) || exit 1
p=$(mdev_create 1g) || exit 1

# The reducer picks the VM furthest above its entitlement (usage counts the
# new BO). The submitter (entitlement 1 byte) uses 4 KiB; the peer, entitled
# to the whole 32 MiB, asks for 32 MiB - 4 KiB on top of its own 4 KiB
# page: it ends exactly at its entitlement, key 0 < 4095, so the room comes
# from the submitter's chunk.
echo 1 > $MDEV_DEVS/$s/vgmem/entitlement || fail "setting the submitter's entitlement"
echo 33554432 > $MDEV_DEVS/$p/vgmem/entitlement || fail "setting the peer's entitlement"
PEER_BO=$((33554432 - 4096))

# Enough entries to outlast several peer allocations: an entry takes
# 10-25 us under TCG, a 32 MiB allocation with its relocation about 100 ms.
guest_bg submit --dev $s submit-loop --count 400000
wait_until 30 sh -c "[ \$(cat $MDEV_DEVS/$s/vgmem/resident) -gt 0 ]" ||
	fail "the submitter never had memory in VRAM"

# The peer fills the whole VRAM and frees it, again and again: each
# allocation pushes the submitter's chunk out, each free lets it return.
rounds=0
max_susp=0
while [ ! -f /tmp/guest.submit.rc ]; do
	guest peer --dev $p alloc --size $PEER_BO --bo $PEER_BO | tail -n 3
	rounds=$((rounds + 1))
	info "submitter: resident $(mdev_attr $s resident) relocated $(mdev_attr $s relocated) out $(mdev_attr $s relocations_out) in $(mdev_attr $s relocations_in) susp $(mdev_attr $s suspend_max_ns)"
	v=$(mdev_attr $s suspend_max_ns) || exit 1
	[ $v -gt $max_susp ] && max_susp=$v
done
guest_wait submit
info "$rounds peer allocations; the submitter's longest suspension ${max_susp} ns"
[ $rounds -gt 1 ] || fail "the submitter finished before the peer allocated twice"
[ $max_susp -gt 0 ] || fail "the submitter was never suspended for a relocation"

mdev_remove $s
mdev_remove $p
