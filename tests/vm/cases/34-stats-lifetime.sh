# SPDX-License-Identifier: GPL-2.0 OR MIT
# 34-stats-lifetime: a vGPU's counters are the mdev's, like a NIC's: the
# core VM behind it lives from open to close, but at close (and reset) its
# counters are folded into the vGPU's, so sysfs and netlink GET_VM keep
# counting across closes and reopens; the gauges (allocated, resident,
# relocated) are the open VM's only and 0 while closed.
# vmtest-timeout: 300

require_guest
vg_setup gpus=1 vram_mb=64
set_oversub 6400

h=$(mdev_create 1g) || exit 1
a=$(mdev_create 1g) || exit 1
b=$(mdev_create 1g) || exit 1

# vgmem-nl show vm UUID: KEY=VALUE of its line (empty if no vgmem-nl).
nl_stat() {
	command -v vgmem-nl > /dev/null || return 0
	l=$(vgmem-nl show vm $1 2>&1) || fail "vgmem-nl show vm $1: $l"
	echo "$l" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# expect_both UUID ATTR NLKEY VALUE: sysfs and netlink agree on VALUE.
expect_both() {
	expect_eq "$(mdev_attr $1 $2)" "$4" "sysfs $2 of $1"
	command -v vgmem-nl > /dev/null || return 0
	expect_eq "$(nl_stat $1 $3)" "$4" "netlink $3 of $1"
}

# ---- channel faults: one hostile run per open -------------------------------
expect_both $h faults faults 0
guest wild-1 --dev $h hostile wild-va
f1=$(mdev_attr $h faults)
[ "$f1" -gt 0 ] || fail "no channel faults counted after hostile wild-va"
# Closed now: the counter is still there, in sysfs and in netlink.
expect_both $h faults faults $f1
guest wild-2 --dev $h hostile wild-va
expect_both $h faults faults $((2 * f1))
guest wild-3 --dev $h hostile wild-va
expect_both $h faults faults $((3 * f1))
info "faults: $f1 per run, $((3 * f1)) after three opens"

# ---- relocations: pressure in two rounds -------------------------------------
# round N: a holds 40 MiB, then b needs 40 MiB more of 64: a's chunks go out.
# a's hold lasts until b is done (guest_end), however long b takes.
round() {
	guest_bg a$1 --dev $a fill-check --size 40M --bo 4M --seed $((60 + $1)) --hold 3600
	wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$a/vgmem/resident) -ge 41943040 ]" ||
		fail "round $1: a never had 40 MiB resident"
	guest b$1 --dev $b fill-check --size 40M --bo 4M --seed $((70 + $1))
	guest_end a$1
}

round 1
o1=$(mdev_attr $a relocations_out)
[ "$o1" -gt 0 ] || fail "round 1: no relocation out of a counted"
expect_both $a relocations_out reloc_out_chunks $o1
expect_both $a resident resident 0
expect_both $a allocated allocated 0
expect_both $a relocated relocated 0
s1=$(nl_stat $a suspends)
round 2
o2=$(mdev_attr $a relocations_out)
[ "$o2" -gt "$o1" ] || fail "round 2: relocations_out of a went from $o1 to $o2"
expect_both $a relocations_out reloc_out_chunks $o2
if [ -n "$s1" ]; then
	s2=$(nl_stat $a suspends)
	[ "$s2" -gt "$s1" ] || fail "round 2: suspends of a went from $s1 to $s2"
fi
info "relocations_out of a: $o1 after round 1, $o2 after round 2"

# The counters belong to the mdev: a new mdev starts at zero.
for u in $h $a $b; do mdev_remove $u; done
n=$(mdev_create 1g) || exit 1
expect_both $n faults faults 0
expect_both $n relocations_out reloc_out_chunks 0
mdev_remove $n
