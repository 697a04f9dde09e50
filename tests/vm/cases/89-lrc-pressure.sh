# SPDX-License-Identifier: GPL-2.0 OR MIT
# 89-lrc-pressure: the LRC file cache under memory pressure, with real guests
# (vgmem-guest over VFIO) through vgmem.ko:
#   1. the cache yields its VRAM before any VM's chunks are relocated
#      (docs/lrc.md "The cache yields first"): on a 64 MiB GPU with a 48 MiB
#      cache budget, VM A holds a 16 MiB file read-only (16 MiB of shared
#      replicas, the GPU's cache_used); VM B, entitled to all VRAM,
#      allocates BOs that need 8 MiB of the cache's VRAM: the cache gives
#      that much (not all of it), nobody is relocated, B's data checks out,
#      A's file reads back exactly through the GPU while B holds the VRAM
#      (recycling the cache's own pages) and refills once B is gone;
#      then, with C's BOs on the GPU too, B needs more than free VRAM and the
#      whole cache: the cache gives everything and relocation (of C) covers
#      only the rest, to within one chunk; B's and C's data check out;
#   2. the host-RAM budget of the cache's host copies (lrc_host_mb, set at
#      run time to 1 MiB) with a 1 MiB VRAM budget: a 6 MiB file written by a
#      guest, read by a holder, rewritten in parts by the host (dd) and by a
#      second guest; every byte checked against references; vgmem-nl show
#      lrc's host_used stays within the budget plus 64 KiB per replica (host
#      copies a GPU replica is made from are kept, docs/lrc.md "Guarantees and
#      limits"), host_evictions grows, and host_used is 0 once the file is
#      unmapped.
# lrc_budget_mb and lrc_host_mb are restored on exit.
# vmtest-timeout: 240

command -v vgmem-nl > /dev/null || skip "vgmem-nl is not built yet"
vgmem-guest --help 2>&1 | grep -q ' file ' || skip "vgmem-guest has no file command"
LRC_PARAM=/sys/module/vgmem/parameters/lrc_budget_mb
HOST_PARAM=/sys/module/vgmem/parameters/lrc_host_mb
module_loaded vgmem || modprobe vgmem $VG_PARAMS || fail "loading vgmem"
[ -w $LRC_PARAM ] || fail "vgmem has no lrc_budget_mb parameter"
[ -w $HOST_PARAM ] || fail "vgmem has no lrc_host_mb parameter"
LRC_OLD=$(cat $LRC_PARAM)
HOST_OLD=$(cat $HOST_PARAM)
trap 'echo $LRC_OLD > $LRC_PARAM; echo $HOST_OLD > $HOST_PARAM' EXIT

MIB=1048576
VRAM=$((64 * MIB))
SH=/tmp/lrcp
REF=/tmp/lrcpref
mkdir -p $SH $REF

# field NAME LINE: NAME=value out of a vgmem-nl line.
field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# snap: G, GPU 0's line of vgmem-nl show gpu (one read: all its fields are
# of one moment).
snap() {
	G=$(vgmem-nl show gpu 0 2>&1) || fail "vgmem-nl show gpu 0: $G"
	G=$(echo "$G" | head -n 1)
	expect_eq "$(field vram_size "$G")" $VRAM "the GPU's vram_size"
}

# vmf UUID NAME: one field of vgmem-nl show vm.
vmf() {
	v=$(vgmem-nl show vm $1 2>&1) || fail "vgmem-nl show vm $1: $v"
	field $2 "$(echo "$v" | head -n 1)"
}

# snap_lrc reads L, vgmem-nl show lrc (the host's cache); lrcf NAME: a field.
lrcf() {
	field $1 "$L"
}

snap_lrc() {
	L=$(vgmem-nl show lrc 2>&1) || fail "vgmem-nl show lrc: $L"
}

ready() {
	wait_until 90 grep -q "file hold ready" /tmp/guest.$1.log ||
		fail "guest $1 never held its map: $(tail -n 3 /tmp/guest.$1.log)"
}

stop() {
	kill -TERM $(cat /tmp/guest.$1.pid)
	guest_wait $1
}

# filled NAME: waits until fill-check NAME has filled and verified once
# (its BOs all allocated), failing if it ended before.
filled() {
	wait_until 120 grep -q "loop 0 ok" /tmp/guest.$1.log ||
		fail "guest $1 never filled: $(tail -n 3 /tmp/guest.$1.log)"
}

# same FILE REFERENCE WHAT: byte-exact, same size (busybox cmp).
same() {
	[ "$(stat -c %s $1)" = "$(stat -c %s $2)" ] ||
		fail "$3: $1 is $(stat -c %s $1) bytes, expected $(stat -c %s $2)"
	out=$(cmp $1 $2 2>&1) || fail "$3: $1 differs from the reference: $out"
}

# inproc_write FILE ARGS...: `file write ARGS` applied to FILE by the
# userspace host (the reference, one writer after the other).
inproc_write() {
	p=$1
	shift
	out=$(vgmem-guest-inproc --inproc --vram 32M --share 0=$(dirname $p) file write 0 $(basename $p) "$@" 2>&1) ||
		fail "reference $p ($*): $(echo "$out" | tail -n 1)"
}

# fnv_of FILE ARGS...: FNV-1a of the file's bytes as the userspace host
# reads them.
fnv_of() {
	p=$1
	shift
	out=$(vgmem-guest-inproc --inproc --vram 32M --share 0=$(dirname $p) file read 0 $(basename $p) "$@" 2>&1) ||
		fail "fnv of $p: $(echo "$out" | tail -n 1)"
	echo "$out" | sed -n 's/^RESULT ok .* fnv=\([0-9a-f]*\).*/\1/p'
}

# ==== 1. the cache yields its VRAM first ==========================================
echo 0 > $HOST_PARAM || fail "setting lrc_host_mb to 0"
echo 48 > $LRC_PARAM || fail "setting lrc_budget_mb to 48"
vg_setup gpus=1 vram_mb=64
set_oversub 6400
# Under the default policy, cold, the return worker keeps a free-VRAM
# reserve by moving chunks no access has touched of VMs above their
# entitlement on its own; this part counts the relocations an allocation
# causes, so it runs under random, which has no such reserve.
echo random > $VG_CLASS/vgmem0/policy || fail "setting the GPU's policy to random"
dmesg | grep "file cache" | tail -n 1 | grep -q "vgmem[0-9]*: file cache with 48 MiB of VRAM" ||
	fail "no 48 MiB file cache on the GPU: $(dmesg | grep 'file cache' | tail -n 1)"
a=$(mdev_create 1g) || exit 1
b=$(mdev_create 1g) || exit 1
c=$(mdev_create 1g) || exit 1
# A and C are entitled to nothing (their chunks are the reducer's victims),
# B to all of the VRAM.
echo 1 > $MDEV_DEVS/$a/vgmem/entitlement || fail "setting A's entitlement"
echo 1 > $MDEV_DEVS/$c/vgmem/entitlement || fail "setting C's entitlement"
echo $VRAM > $MDEV_DEVS/$b/vgmem/entitlement || fail "setting B's entitlement"
out=$(vgmem-nl set-shares $a --share 0:$SH 2>&1) || fail "set-shares $a: $out"

BIG="--rows 16 --row-bytes 1M"
dd if=/dev/zero of=$SH/big.bin bs=$MIB count=16 2> /dev/null || fail "creating big.bin"
guest aw --dev $a file write 0 big.bin --pattern 300 $BIG
sum0=$(sha256sum < $SH/big.bin | cut -d' ' -f1)
snap
expect_eq "$(field cache_used "$G")" 0 "cache_used once the writer unmapped"
# The holder checks the pattern on the GPU against the CPU's own checksum.
guest_bg ah --dev $a file hold 0 big.bin $BIG --expect-pattern 300 --hold 3600
ready ah
fnv0=$(sed -n 's/.*file hold ready .*fnv=\([0-9a-f]*\).*/\1/p' /tmp/guest.ah.log)
snap
cache0=$(field cache_used "$G")
v0=$(field vram_used "$G")
chunk=$(field chunk_size "$G")
expect_eq $cache0 $((16 * MIB)) "cache_used with A's 16 MiB file read (256 shared replicas)"
free0=$((VRAM - v0 - cache0))
info "A holds big.bin: cache_used $cache0, vram_used $v0, free $free0"

# ---- 1a: B needs 8 MiB of the cache's VRAM ----
# B re-checks its BOs after its first fill until the case ends its hold
# (guest_end), after A's re-read below however long that takes.
guest_bg b1 --dev $b fill-check --size 56M --bo 4M --seed 21 --hold 3600
filled b1
snap
cache1=$(field cache_used "$G")
v1=$(field vram_used "$G")
free1=$((VRAM - v1 - cache1))
bres=$(vmf $b resident) || exit 1
info "B holds 56 MiB: cache_used $cache1, vram_used $v1, free $free1, B resident $bres"
for k in reloc_out_chunks bytes_out relocations; do
	expect_eq "$(field $k "$G")" 0 "the GPU's $k after B's allocations (the cache had room to give)"
done
for u in $a $b; do
	expect_eq "$(vmf $u reloc_out_chunks)" 0 "reloc_out_chunks of $u after B's allocations"
	expect_eq "$(vmf $u bytes_out)" 0 "bytes_out of $u after B's allocations"
	expect_eq "$(vmf $u relocated)" 0 "relocated of $u after B's allocations"
done
short=$((bres - free0))
[ $short -gt 0 ] || fail "B's $bres bytes fit in the $free0 free bytes: nothing asked of the cache"
[ $cache1 -le $((cache0 - short)) ] ||
	fail "cache_used $cache1 after B took $short bytes more than was free (cache had $cache0)"
# It gives what is asked, a 64 KiB page at a time, not everything.
[ $free1 -lt $MIB ] ||
	fail "the cache gave $((cache0 - cache1)) bytes for a shortfall of $short ($free1 left free)"
[ $cache1 -gt 0 ] || fail "the cache gave all its VRAM for a shortfall of $short"

# A's file through the GPU while B holds the VRAM: its evicted pages fault
# back in the little VRAM there is (the cache recycles its own pages), no
# VM is relocated for them.
f=$(guest_sig ah USR1 check 90) || exit 1
expect_eq $f $fnv0 "A's checksum of big.bin while B holds its VRAM"
guest_done b1 && fail "B ended before A's re-read was checked"
snap
cache2=$(field cache_used "$G")
info "A re-read big.bin under B's pressure: cache_used $cache2"
[ $cache2 -le $((cache1 + free1)) ] ||
	fail "cache_used $cache2 after A's re-read with $((cache1 + free1)) bytes not held by B"
expect_eq "$(field bytes_out "$G")" 0 "the GPU's bytes_out after A's re-read under pressure"
guest_end b1
# B is gone: A's pages come back as VRAM allows (all of them now).
f=$(guest_sig ah USR2 acquire-check 90) || exit 1
expect_eq $f $fnv0 "A's checksum of big.bin after B freed (acquired)"
snap
expect_eq "$(field cache_used "$G")" $((16 * MIB)) "cache_used once A re-read big.bin after B freed"
info "1a: the cache gave $((cache0 - cache1)) bytes for B's shortfall of $short, no relocation"

# ---- 1b: B needs more than free VRAM and the whole cache ----
# C holds (and re-checks) 16 MiB while B allocates, until the case ends its
# hold; so does B, until the counters below are read.
guest_bg c1 --dev $c fill-check --size 16M --bo 4M --seed 31 --hold 3600
filled c1
snap
cache0=$(field cache_used "$G")
v0=$(field vram_used "$G")
out0=$(field bytes_out "$G")
free0=$((VRAM - v0 - cache0))
expect_eq $cache0 $((16 * MIB)) "cache_used with C's BOs added (they fitted in free VRAM)"
guest_bg b2 --dev $b fill-check --size 52M --bo 4M --seed 22 --hold 3600
filled b2
guest_done c1 && fail "C ended before B allocated"
snap
cache1=$(field cache_used "$G")
v1=$(field vram_used "$G")
out1=$(($(field bytes_out "$G") - out0))
free1=$((VRAM - v1 - cache1))
bres=$(vmf $b resident) || exit 1
short=$((bres - free0))
info "B holds 52 MiB beside C: cache_used $cache1, vram_used $v1, free $free1, relocated out $out1 bytes, B resident $bres, shortfall $short"
expect_eq "$(vmf $b relocated)" 0 "relocated of B (entitled to all VRAM)"
[ $short -gt $cache0 ] || fail "B's shortfall $short does not exceed the cache's $cache0 bytes"
expect_eq $cache1 0 "cache_used once B needed more than the cache held"
[ $out1 -ge $((short - cache0)) ] ||
	fail "only $out1 bytes relocated for $((short - cache0)) the cache could not give"
[ $out1 -lt $((short - cache0 + chunk)) ] ||
	fail "$out1 bytes relocated where the cache left $((short - cache0)) to find (chunk $chunk)"
expect_eq "$(vmf $c bytes_out)" $out1 "C's bytes_out (the VM furthest above its entitlement)"
guest_end b2
guest_end c1
f=$(guest_sig ah USR2 acquire-check 90) || exit 1
expect_eq $f $fnv0 "A's checksum of big.bin after B and C freed (acquired)"
stop ah
snap
expect_eq "$(field cache_used "$G")" 0 "cache_used after the last map of big.bin"
expect_eq "$(sha256sum < $SH/big.bin | cut -d' ' -f1)" $sum0 "big.bin's SHA-256 after all the evictions"
info "1b: the cache gave its $cache0 bytes, relocation the other $out1 of a $short-byte shortfall"
for u in $a $b $c; do mdev_remove $u; done

# ==== 2. the host-RAM budget of host copies =========================================
echo 1 > $LRC_PARAM || fail "setting lrc_budget_mb to 1"
vg_setup gpus=1 vram_mb=64
set_oversub 6400
dmesg | grep "file cache" | tail -n 1 | grep -q "vgmem[0-9]*: file cache with 1 MiB of VRAM" ||
	fail "no 1 MiB file cache on the GPU: $(dmesg | grep 'file cache' | tail -n 1)"
echo 1 > $HOST_PARAM || fail "setting lrc_host_mb to 1"
expect_eq "$(cat $HOST_PARAM)" 1 "lrc_host_mb read back"
HOSTB=$MIB
w=$(mdev_create 1g) || exit 1
h=$(mdev_create 1g) || exit 1
for u in $w $h; do
	out=$(vgmem-nl set-shares $u --share 0:$SH 2>&1) || fail "set-shares $u: $out"
done

# hbound WHAT: host_used within the budget plus one host copy per replica
# (shared, private, evicted private: each keeps the host copy of its page).
hbound() {
	snap_lrc
	hu=$(lrcf host_used)
	nrep=$(($(lrcf replicas_shared) + $(lrcf replicas_private)))
	info "$1: host_used $hu, replicas $nrep, host_evictions $(lrcf host_evictions), host_evict_writebacks $(lrcf host_evict_writebacks)"
	[ $hu -le $((HOSTB + nrep * 65536)) ] ||
		fail "$1: host_used $hu over the $HOSTB-byte budget plus $nrep replicas' host copies"
}

# 48 KiB rows over 64 KiB GPU pages: 6 MiB, six times each budget.
EV="--rows 128 --row-bytes 48K"
SIZE=6291456
dd if=/dev/zero of=$REF/fin.bin bs=$SIZE count=1 2> /dev/null || fail "creating fin.bin"
inproc_write $REF/fin.bin --pattern 900 $EV
cp $REF/fin.bin $REF/e900.bin
dd if=/dev/zero of=$SH/hb.bin bs=$SIZE count=1 2> /dev/null || fail "creating hb.bin"
dd if=/dev/urandom of=$REF/rnd.bin bs=$SIZE count=1 2> /dev/null || fail "creating rnd.bin"
snap_lrc
ev0=$(lrcf host_evictions)

# A writer that holds 6 MiB of unreleased writes (until guest_end): its
# private replicas are evicted from the 1 MiB of VRAM to host RAM, each with
# its page's host copy.
guest_bg hw --dev $w file write 0 hb.bin --pattern 900 $EV --hold 3600
wait_until 90 grep -q "file hold-before-release" /tmp/guest.hw.log ||
	fail "the writer never filled: $(tail -n 3 /tmp/guest.hw.log)"
hbound "a writer holding 6 MiB unreleased"
guest_end hw
same $SH/hb.bin $REF/e900.bin "hb.bin after the writer's release and sync"
hbound "after the writer unmapped"

guest_bg hh --dev $h file hold 0 hb.bin $EV --expect-pattern 900 --hold 3600
ready hh
hbound "a reader holding the 6 MiB map"
[ $(lrcf host_evictions) -gt $ev0 ] ||
	fail "host_evictions stayed $ev0 while 6 MiB went through a 1 MiB host budget"
[ $hu -lt $SIZE ] || fail "host_used $hu: the whole file in host RAM despite the budget"

# The host writes parts of the file outside the cache; the holder sees them
# at its acquire (pages in the cache compared, dropped ones read again).
for s in "4096 7 3" "65536 20 4" "1000 3001 50" "65536 90 2"; do
	set -- $s
	for t in $SH/hb.bin $REF/fin.bin; do
		dd if=$REF/rnd.bin of=$t bs=$1 skip=$2 seek=$2 count=$3 conv=notrunc 2> /dev/null ||
			fail "dd into $t (bs=$1 seek=$2 count=$3)"
	done
done
want=$(fnv_of $REF/fin.bin $EV) || exit 1
f=$(guest_sig hh USR2 acquire-check 90) || exit 1
expect_eq $f $want "the holder's checksum after the host's dd writes (acquired)"
hbound "after the holder's acquire of the host's writes"

# A second guest writes every row's second half over the host's bytes.
guest hw2 --dev $w file write 0 hb.bin --pattern 950 $EV --half 1
inproc_write $REF/fin.bin --pattern 950 $EV --half 1
same $SH/hb.bin $REF/fin.bin "hb.bin after the host's dd and a second half writer"
want=$(fnv_of $REF/fin.bin $EV) || exit 1
f=$(guest_sig hh USR2 acquire-check 90) || exit 1
expect_eq $f $want "the holder's checksum after the second writer (acquired)"
hbound "after the holder's acquire of the second writer's halves"
stop hh
guest hr --dev $h file read 0 hb.bin $EV --expect-fnv $want
same $SH/hb.bin $REF/fin.bin "hb.bin after every map went"
snap_lrc
expect_eq "$(lrcf host_used)" 0 "host_used once the file left the cache"
info "host budget: ok ($(($(lrcf host_evictions) - ev0)) host copies evicted, $(lrcf host_evict_writebacks) written back first)"
mdev_remove $w
mdev_remove $h
rm -rf $SH $REF
