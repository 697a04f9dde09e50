# SPDX-License-Identifier: GPL-2.0 OR MIT
# 87-lrc: the LRC file cache's scenarios (issue 5, GAIA) with real guests
# (vgmem-guest over VFIO) mapping one file of a shared directory through
# vgmem.ko, each judged by the exact bytes of the file on the host:
#   1. read-only sharing: ten VMs hold one file read-only in one VRAM
#      replica; one writes and only it gets a private copy; the others keep
#      the old version until they acquire;
#   2. false sharing: two VMs write disjoint halves of every row of one file
#      at the same time; the file ends with both halves exactly;
#   3. producer-consumer: the host rewrites parts of a file with dd; a
#      holder sees them after its next acquire, not before; fresh readers too;
#   4. durability: write, release, sync, kill -9; a writer killed before
#      its release; the host file and a reopen;
#   5. eviction under a 1 MiB cache budget: a 6 MiB file written and read
#      back byte for byte.
# Replicas are counted exactly through the GPU's cache_used over netlink
# (vgmem-nl show gpu): 64 KiB per replica, apart from the BOs' VRAM; the
# GPU's vram_size never moves. (The cache's own counters, vgmem-nl show
# lrc, are host-wide; 86-shares checks them.)
# Expected contents come from `vgmem-guest-inproc --inproc` (the userspace host,
# one writer at a time) and, for the false-sharing file, from a SHA-256
# computed off-line from vgmem_pattern_word (include/uapi/vgmem.h).
# vmtest-timeout: 240

command -v vgmem-nl > /dev/null || skip "vgmem-nl is not built yet"
vgmem-guest --help 2>&1 | grep -q ' file ' || skip "vgmem-guest has no file command"
# A file cache of 8 MiB on a 64 MiB GPU; ten 1g vGPUs on it.
lrc_setup 64 20000

SH=/tmp/lrc
REF=/tmp/lrcref
mkdir -p $SH $REF
GPAGE=65536

# The file cache's VRAM on the GPU (GPU_CACHE_USED), checking on the way
# that the GPU's vram_size stays its whole VRAM (64 MiB).
cache_used() {
	v=$(vgmem-nl show gpu 0 2>&1) || fail "vgmem-nl show gpu 0: $v"
	echo "$v" | grep -q "^gpu .* vram_size=67108864 " ||
		fail "vram_size is not 64 MiB: $v"
	v=$(echo "$v" | sed -n 's/^gpu .* cache_used=\([0-9]*\) .*/\1/p')
	[ -n "$v" ] || fail "no cache_used in vgmem-nl show gpu 0"
	echo $v
}

# ref NAME SIZE ARGS...: $REF/NAME, SIZE zero bytes with `file write ARGS`
# applied by the userspace host, one writer after the other.
ref() {
	n=$1
	head -c $2 /dev/zero > $REF/$n
	shift 2
	while [ $# -gt 0 ]; do
		out=$(vgmem-guest-inproc --inproc --vram 32M --share 0=$REF file write 0 $n $1 2>&1) ||
			fail "reference $n ($1): $(echo "$out" | tail -n 1)"
		shift
	done
}

# fnv_of FILE ARGS...: FNV-1a of the file's bytes as the userspace host
# reads them (ARGS: --length or --rows/--row-bytes).
fnv_of() {
	p=$1
	shift
	out=$(vgmem-guest-inproc --inproc --vram 32M --share 0=$(dirname $p) file read 0 $(basename $p) "$@" 2>&1) ||
		fail "fnv of $p: $(echo "$out" | tail -n 1)"
	echo "$out" | sed -n 's/^RESULT ok .* fnv=\([0-9a-f]*\).*/\1/p'
}

# same FILE REFERENCE WHAT: byte-exact, same size (busybox cmp).
same() {
	[ "$(stat -c %s $1)" = "$(stat -c %s $2)" ] ||
		fail "$3: $1 is $(stat -c %s $1) bytes, expected $(stat -c %s $2)"
	out=$(cmp $1 $2 2>&1) || fail "$3: $1 differs from the reference: $out"
}

ready() {
	wait_until 60 grep -q "file hold ready" /tmp/guest.$1.log ||
		fail "guest $1 never held its map: $(tail -n 3 /tmp/guest.$1.log)"
}

stop() {
	kill -TERM $(cat /tmp/guest.$1.pid)
	guest_wait $1
}

N=10
U=
i=1
while [ $i -le $N ]; do
	u=$(mdev_create 1g) || exit 1
	out=$(vgmem-nl set-shares $u --share 0:$SH 2>&1) || fail "set-shares $u: $out"
	U="$U $u"
	i=$((i + 1))
done
set -- $U
u1=$1 u2=$2 u3=$3 u4=$4

# ---- 1. read-only sharing: ten VMs, one replica -----------------------------------
ref r300.bin 524288 "--pattern 300 --rows 8 --row-bytes 64K"
ref r400.bin 524288 "--pattern 400 --rows 8 --row-bytes 64K"
cp $REF/r300.bin $SH/ro.bin
new=$(fnv_of $REF/r400.bin --length 512K) || exit 1
v0=$(cache_used) || exit 1
i=1
for u in $U; do
	guest_bg ro$i --dev $u file hold 0 ro.bin --rows 8 --row-bytes 64K \
		--expect-pattern 300 --hold 3600
	i=$((i + 1))
done
i=1
while [ $i -le $N ]; do ready ro$i; i=$((i + 1)); done
old=$(sed -n 's/.*file hold ready .*fnv=\([0-9a-f]*\).*/\1/p' /tmp/guest.ro1.log)
v1=$(cache_used) || exit 1
info "$N read-only holders: the cache's VRAM is $((v1 - v0)) bytes"
expect_eq $((v1 - v0)) 524288 "cache VRAM with $N read-only maps of a 512 KiB file (one replica)"
# The tenth VM turns writer: its hold ends, a RW map of the same file fills
# it with a new pattern and waits before releasing until guest_end.
stop ro$N
set -- $U
shift $((N - 1))
guest_bg rw --dev $1 file write 0 ro.bin --pattern 400 --rows 8 --row-bytes 64K --hold 3600
wait_until 60 grep -q "file hold-before-release" /tmp/guest.rw.log ||
	fail "the writer never filled: $(tail -n 3 /tmp/guest.rw.log)"
v2=$(cache_used) || exit 1
info "one writer filled: the cache's VRAM is $((v2 - v0)) bytes"
expect_eq $((v2 - v0)) 1048576 "cache VRAM with a writer (shared + its private replica only)"
f=$(guest_sig ro1 USR1 check) || exit 1
expect_eq $f $old "a reader's checksum while the writer has not released"
guest_end rw
same $SH/ro.bin $REF/r400.bin "ro.bin after the writer's release and sync"
# Its private copy went with its map; the readers' old replica stays.
v2=$(cache_used) || exit 1
expect_eq $((v2 - v0)) 524288 "cache VRAM after the writer unmapped, before any reader acquired"
# Released and in the file, but the readers have not acquired: old bytes.
i=1
while [ $i -lt $N ]; do
	f=$(guest_sig ro$i USR1 check) || exit 1
	expect_eq $f $old "reader $i's checksum before its acquire"
	i=$((i + 1))
done
i=1
while [ $i -lt $N ]; do
	f=$(guest_sig ro$i USR2 acquire-check) || exit 1
	expect_eq $f $new "reader $i's checksum after its acquire"
	i=$((i + 1))
done
v3=$(cache_used) || exit 1
info "all readers acquired: the cache's VRAM is $((v3 - v0)) bytes"
expect_eq $((v3 - v0)) 524288 "cache VRAM once every reader acquired (one new replica)"
i=1
while [ $i -lt $N ]; do stop ro$i; i=$((i + 1)); done
expect_eq $(cache_used) $v0 "VRAM after the last map of ro.bin"
same $SH/ro.bin $REF/r400.bin "ro.bin after every map went"
info "read-only sharing: ok"

# ---- 2. false sharing: two VMs, disjoint halves of every 3000-byte row --------------
# 1500-byte halves: most 4 KiB pages hold both writers' bytes.
FS="--rows 128 --row-bytes 3000"
head -c 384000 /dev/zero > $SH/fs.bin
# Each waits before its release until both have filled (guest_end).
guest_bg fa --dev $u1 file write 0 fs.bin --pattern 100 $FS --half 0 --hold 3600
guest_bg fb --dev $u2 file write 0 fs.bin --pattern 200 $FS --half 1 --hold 3600
wait_until 60 sh -c "grep -q hold-before-release /tmp/guest.fa.log && grep -q hold-before-release /tmp/guest.fb.log" ||
	fail "the writers never both filled: $(tail -n 2 /tmp/guest.fa.log /tmp/guest.fb.log)"
grep -q "file release" /tmp/guest.fa.log /tmp/guest.fb.log &&
	fail "a writer released before the other filled: the writes did not overlap"
guest_end fa
guest_end fb
guest fr --dev $u3 file read 0 fs.bin $FS --expect-pattern 100,200
ref fs.bin 384000 "--pattern 100 $FS --half 0" "--pattern 200 $FS --half 1"
expect_eq "$(sha256sum < $REF/fs.bin | cut -d' ' -f1)" \
	ebadd50182a51af108b7dacd361484306c507289949afdebe08fb50b54dffe57 "the reference's SHA-256"
same $SH/fs.bin $REF/fs.bin "fs.bin after two concurrent half writers"
info "false sharing: ok ($(od -A d -t x1 -j 1496 -N 8 $SH/fs.bin | head -n 1))"

# ---- 3. producer-consumer: the host writes, the GPU acquires -------------------------
ref p10.bin 1048576 "--pattern 10 --rows 16 --row-bytes 64K"
ref p50.bin 1048576 "--pattern 50 --rows 16 --row-bytes 64K"
cp $REF/p10.bin $SH/pc.bin
guest_bg pc --dev $u1 file hold 0 pc.bin --rows 16 --row-bytes 64K --expect-pattern 10 --hold 3600
ready pc
prev=$(sed -n 's/.*file hold ready .*fnv=\([0-9a-f]*\).*/\1/p' /tmp/guest.pc.log)
# Rounds: one 4 KiB page; two whole GPU pages; 15000 unaligned bytes;
# the whole file. Odd rounds the holder acquires before a fresh reader,
# even rounds after (so each sees the change first in one of them).
round=1
for w in "4096 3 1" "65536 5 2" "500 2001 30" "65536 0 16"; do
	set -- $w
	dd if=$REF/p50.bin of=$SH/pc.bin bs=$1 skip=$2 seek=$2 count=$3 conv=notrunc 2> /dev/null ||
		fail "dd into pc.bin (round $round)"
	want=$(fnv_of $SH/pc.bin --length 1M) || exit 1
	[ "$want" != "$prev" ] || fail "round $round changed nothing"
	f=$(guest_sig pc USR1 check) || exit 1
	expect_eq $f $prev "the holder before its acquire (round $round)"
	if [ $((round % 2)) = 1 ]; then
		f=$(guest_sig pc USR2 acquire-check) || exit 1
		guest pr$round --dev $u2 file read 0 pc.bin --length 1M --expect-fnv $want
	else
		guest pr$round --dev $u2 file read 0 pc.bin --length 1M --expect-fnv $want
		f=$(guest_sig pc USR2 acquire-check) || exit 1
	fi
	expect_eq $f $want "the holder after its acquire (round $round: dd bs=$1 seek=$2 count=$3)"
	prev=$want
	round=$((round + 1))
done
stop pc
same $SH/pc.bin $REF/p50.bin "pc.bin after the producer's last round"
info "producer-consumer: ok"

# ---- 4. durability --------------------------------------------------------------------
ref d700.bin 524288 "--pattern 700 --rows 8 --row-bytes 64K"
ref d800.bin 524288 "--pattern 800 --rows 8 --row-bytes 64K"
DUR="--rows 8 --row-bytes 64K"
head -c 524288 /dev/zero > $SH/dur.bin
# Write, release, sync, and keep the map (--hold-after): the synced bytes
# are in the host file while the VM still maps it; kill -9 it mapped; its
# teardown loses nothing and adds nothing.
guest_bg dw --dev $u1 file write 0 dur.bin --pattern 700 $DUR --hold-after 200
wait_until 60 grep -q "file hold-after-sync ready" /tmp/guest.dw.log ||
	fail "the writer never synced: $(tail -n 2 /tmp/guest.dw.log)"
same $SH/dur.bin $REF/d700.bin "dur.bin after write, release, sync (the writer still maps it)"
kill -9 $(cat /tmp/guest.dw.pid)
rc=$(guest_reap dw)
expect_eq "$rc" 137 "exit status of the writer killed while mapped after its sync"
grep -q "file unmap" /tmp/guest.dw.log && fail "the writer unmapped before the kill"
same $SH/dur.bin $REF/d700.bin "dur.bin after write, release, sync, kill -9 while mapped (teardown)"
guest dr1 --dev $u3 file read 0 dur.bin $DUR --expect-pattern 700
# A writer killed between its fill and its release: nobody saw its bytes
# before; its VM's teardown releases them and writes them back.
guest_bg dk --dev $u2 file write 0 dur.bin --pattern 800 $DUR --hold 3600
wait_until 60 grep -q "file hold-before-release" /tmp/guest.dk.log ||
	fail "the writer never filled: $(tail -n 3 /tmp/guest.dk.log)"
guest dr2 --dev $u3 file read 0 dur.bin $DUR --expect-pattern 700
# Another VM's msync writes what is released, not the writer's bytes.
guest ds --dev $u3 file sync 0 dur.bin --length 512K
same $SH/dur.bin $REF/d700.bin "dur.bin while a writer holds unreleased bytes (after a sync)"
kill -9 $(cat /tmp/guest.dk.pid)
rc=$(guest_reap dk)
expect_eq "$rc" 137 "exit status of the writer killed before its release"
same $SH/dur.bin $REF/d800.bin "dur.bin after its unreleased writer was killed (teardown releases)"
guest dr3 --dev $u4 file read 0 dur.bin $DUR --expect-pattern 800
info "durability: ok"

for u in $U; do mdev_remove $u; done

# ---- 5. eviction under a 1 MiB budget --------------------------------------------------
echo 1 > $LRC_PARAM
vg_setup gpus=1 vram_mb=64
set_oversub 6400
dmesg | grep -q "vgmem[0-9]*: file cache with 1 MiB of VRAM" ||
	fail "no 1 MiB file cache on the GPU: $(dmesg | grep 'file cache' | tail -n 1)"
a=$(mdev_create 1g) || exit 1
b=$(mdev_create 1g) || exit 1
for u in $a $b; do
	out=$(vgmem-nl set-shares $u --share 0:$SH 2>&1) || fail "set-shares $u: $out"
done
# 48 KiB rows over 64 KiB GPU pages: 6 MiB, six times the budget.
EV="--rows 128 --row-bytes 48K"
ref e900.bin 6291456 "--pattern 900 $EV" "--pattern 950 $EV --half 1"
head -c 6291456 /dev/zero > $SH/ev.bin
v0=$(cache_used) || exit 1
guest ew --dev $a file write 0 ev.bin --pattern 900 $EV
guest_bg eh --dev $b file hold 0 ev.bin $EV --expect-pattern 900 --hold 3600
ready eh
v1=$(cache_used) || exit 1
info "a 6 MiB map held under a 1 MiB budget: the cache's VRAM is $((v1 - v0)) bytes"
[ $((v1 - v0)) -gt 0 ] && [ $((v1 - v0)) -le 1048576 ] ||
	fail "cache VRAM $((v1 - v0)) bytes with a 1 MiB budget"
# A second writer rewrites every row's second half while the reader holds.
guest ew2 --dev $a file write 0 ev.bin --pattern 950 $EV --half 1
f=$(guest_sig eh USR2 acquire-check) || exit 1
stop eh
want=$(fnv_of $REF/e900.bin $EV) || exit 1
expect_eq $f $want "the reader's checksum after the second writer (acquired)"
same $SH/ev.bin $REF/e900.bin "ev.bin written through a 1 MiB cache"
guest er --dev $b file read 0 ev.bin $EV --expect-pattern 900,950
expect_eq $(cache_used) $v0 "VRAM after the last map of ev.bin"
info "eviction: ok"
mdev_remove $a
mdev_remove $b
rm -rf $SH $REF
