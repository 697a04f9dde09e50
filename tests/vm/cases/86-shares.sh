# SPDX-License-Identifier: GPL-2.0 OR MIT
# 86-shares: a vGPU's virtio-fs share table (the LRC file cache's roots)
# through netlink: SET_VM with VGMEM_A_VM_SHARES via vgmem-nl set-shares,
# read back by GET_VM (vgmem-nl show shares, text and JSON); refused
# without CAP_NET_ADMIN; relative paths, '.' and '..' components, missing
# roots, files, duplicate ids and a table mixing good and bad entries
# refused with a reason, changing nothing; the table survives the device
# being opened and closed, and a guest maps files of its shares through
# the kernel's store (write, sync, read back; a read-only share; '..'
# escapes, absolute paths, symlinks, another VM's share refused); mgmtd
# passes a libvirt domain's virtio-fs shares and tags down to the guest;
# an empty table clears.
# vmtest-timeout: 240

command -v vgmem-nl > /dev/null || skip "vgmem-nl is not built yet"
command -v vgnl-check > /dev/null || skip "vgnl-check is not built yet"
# A file cache of 8 MiB on a 64 MiB GPU (lib.sh: lrc_setup).
lrc_setup 64 6400

nl() {
	out=$(vgmem-nl "$@" 2>&1) || fail "vgmem-nl $*: $out"
	echo "$out"
}

# refused "WHAT" "REASON" ARGS...: vgmem-nl ARGS must fail with REASON in
# its message.
refused() {
	what=$1
	why=$2
	shift 2
	out=$(vgmem-nl "$@" 2>&1) && fail "$what was accepted"
	echo "$out" | grep -q "$why" || fail "$what: no '$why' in: $out"
	info "refused as expected ($what): $out"
}

mkdir -p /tmp/sh/data/sub /tmp/sh2 /tmp/sh3
echo hello > /tmp/sh/data/file
ln -s /tmp/sh /tmp/sh-link
a=$(mdev_create 1g) || exit 1
b=$(mdev_create 1g) || exit 1

# ---- none at first; a table is set and read back -------------------------------
out=$(nl show shares $a) || exit 1
expect_eq "$out" "" "shares of a new vGPU"
nl set-shares $a --share 3:/tmp/sh2:ro --share 0:/tmp/sh > /dev/null || exit 1
out=$(nl show shares $a) || exit 1
info "$out"
expect_eq "$(echo "$out" | sed -n 1p)" "id=0 readonly=0 path=/tmp/sh" "first share (by id)"
expect_eq "$(echo "$out" | sed -n 2p)" "id=3 readonly=1 path=/tmp/sh2" "second share"
expect_eq "$(echo "$out" | wc -l)" 2 "shares of $a"
out=$(nl --json show shares $a) || exit 1
expect_eq "$out" '[{"id":0,"readonly":false,"path":"/tmp/sh"},{"id":3,"readonly":true,"path":"/tmp/sh2"}]' "JSON shares"
# Host paths are shown to administrators only: uid 65534 reads neither
# the vGPU (GET_VM needs CAP_NET_ADMIN, see 85-netlink) nor its share table.
out=$(vgnl-check as-nobody vgmem-nl show shares $a 2>&1) &&
	fail "vgmem-nl show shares as uid 65534 succeeded: $out"
echo "$out" | grep -q "CAP_NET_ADMIN" || fail "show shares as uid 65534: $out"
echo "$out" | grep -q "/tmp/sh" && fail "show shares as uid 65534 leaked a path: $out"
out=$(vgnl-check as-nobody vgmem-nl show vm $a 2>&1) &&
	fail "vgmem-nl show vm as uid 65534 succeeded: $out"
echo "$out" | grep -q "/tmp/sh" && fail "show vm as uid 65534 leaked a path: $out"
# A VM names only its own shares: the other vGPU has none.
out=$(nl show shares $b) || exit 1
expect_eq "$out" "" "shares of $b"
# The operator may name a root through a symlink (resolved when set).
nl set-shares $b --share 1:/tmp/sh-link > /dev/null || exit 1
expect_eq "$(nl show shares $b)" "id=1 readonly=0 path=/tmp/sh-link" "share through a symlink"
# Other changes leave the table alone.
nl set-quota $a 512M > /dev/null || exit 1
expect_eq "$(nl show shares $a | wc -l)" 2 "shares after a quota change"

# ---- hostile tables: refused with a reason, nothing changes ----------------------
before=$(nl show shares $a) || exit 1
refused "a relative path" "absolute" set-shares $a --share 0:tmp/sh
refused "a '..' component" "absolute" set-shares $a --share 0:/tmp/sh/../sh2
refused "a '.' component" "absolute" set-shares $a --share 0:/tmp/./sh
refused "a missing root" "does not exist" set-shares $a --share 0:/tmp/nonexistent
refused "a file as root" "not a directory" set-shares $a --share 0:/tmp/sh/data/file
refused "a path through a file" "not a directory" set-shares $a --share 0:/tmp/sh/data/file/x
refused "duplicate ids" "same id" set-shares $a --share 1:/tmp/sh --share 1:/tmp/sh2
refused "a good and a bad share" "does not exist" \
	set-shares $a --share 0:/tmp/sh --share 1:/tmp/gone
refused "an unknown vGPU" "no vGPU" set-shares $(new_uuid) --share 0:/tmp/sh
long=/tmp/$(head -c 4000 /dev/zero | tr '\0' a)
refused "a path longer than a name may be" "cannot be resolved" set-shares $a --share "0:$long"
expect_eq "$(nl show shares $a)" "$before" "shares after refused tables"

# Without CAP_NET_ADMIN: refused (reading too: see above).
out=$(vgnl-check as-nobody vgmem-nl set-shares $a --share 0:/tmp 2>&1) &&
	fail "vgmem-nl set-shares as uid 65534 succeeded"
echo "$out" | grep -q "Operation not permitted" || fail "set-shares as uid 65534: $out"
expect_eq "$(nl show shares $a)" "$before" "shares after a refused non-admin change"

# ---- virtio-fs tags: set, read back; bad or duplicate tags change nothing --------
nl set-shares $a --share 3:/tmp/sh2:ro:tag=models --share 0:/tmp/sh:tag=data > /dev/null || exit 1
out=$(nl show shares $a) || exit 1
info "$out"
expect_eq "$(echo "$out" | sed -n 1p)" "id=0 readonly=0 tag=data path=/tmp/sh" "first tagged share"
expect_eq "$(echo "$out" | sed -n 2p)" "id=3 readonly=1 tag=models path=/tmp/sh2" "second tagged share"
out=$(nl --json show shares $a) || exit 1
expect_eq "$out" '[{"id":0,"readonly":false,"path":"/tmp/sh","tag":"data"},{"id":3,"readonly":true,"path":"/tmp/sh2","tag":"models"}]' "JSON tagged shares"
before=$(nl show shares $a) || exit 1
refused "duplicate tags" "same tag" \
	set-shares $a --share 0:/tmp/sh:tag=x --share 1:/tmp/sh2:tag=x
refused "an empty tag" "1 to 36 bytes" set-shares $a --share 0:/tmp/sh:tag=
refused "a tag with '/'" "no '/'" set-shares $a --share 0:/tmp/sh:tag=a/b
refused "a tag with a control character" "control character" \
	set-shares $a --share 0:/tmp/sh:tag="$(printf 'a\001b')"
refused "a tag with DEL" "control character" \
	set-shares $a --share 0:/tmp/sh:tag="$(printf 'a\177b')"
refused "a 37-byte tag" "policy" \
	set-shares $a --share 0:/tmp/sh:tag=0123456789012345678901234567890123456
refused "a good tag next to a bad root" "does not exist" \
	set-shares $a --share 0:/tmp/sh:tag=new --share 1:/tmp/gone:tag=other
expect_eq "$(nl show shares $a)" "$before" "shares after refused tags"
# The longest tag passes; a table may move tags between ids.
nl set-shares $b --share 1:/tmp/sh-link:tag=012345678901234567890123456789012345 > /dev/null || exit 1
expect_eq "$(nl show shares $b)" "id=1 readonly=0 tag=012345678901234567890123456789012345 path=/tmp/sh-link" "a 36-byte tag"
nl set-shares $b --share 1:/tmp/sh-link > /dev/null || exit 1

# ---- the table stays across opens; a guest's VM gets it ---------------------------
if command -v vgmem-guest > /dev/null; then
	guest g1 --dev $a alloc --size 4M --bo 1M
	expect_eq "$(nl show shares $a)" "$before" "shares after a guest opened and closed $a"
	# Its VM got a file cache context and both roots opened in it.
	out=$(dmesg | grep -E "no file cache|share [0-9]+ \(/tmp/sh") &&
		fail "the VM's file cache context or shares failed: $out"
	# The guest reads its shares and their tags (VGMEM_CTRL_SHARES).
	guest gi --dev $a info
	expect_eq "$(grep '^shares ' /tmp/guest.gi.log)" "shares 2" "shares the guest sees"
	expect_eq "$(grep '^share ' /tmp/guest.gi.log)" "share id=0 ro=0 tag=data
share id=3 ro=1 tag=models" "the guest's view of its shares"
	# b's guest sees b's share only, without a tag.
	guest gbi --dev $b info
	expect_eq "$(grep '^share' /tmp/guest.gbi.log)" "shares 1
share id=1 ro=0 tag=" "b's guest's view"
	# ---- files of the shares, mapped by a guest through the kernel's store ----
	if vgmem-guest --help 2>&1 | grep -q ' file '; then
		head -c 262144 /dev/zero > /tmp/sh/data.bin
		head -c 65536 /dev/zero > /tmp/sh2/ro.bin
		mkdir -p /tmp/sh/dir
		ln -s data.bin /tmp/sh/inner-link
		ln -s /etc/passwd /tmp/sh/outer-link
		ln -s /tmp/sh /tmp/sh/dir/loop
		G="--dev $a file"
		# The GPU writes a pattern (RW map, release, sync) ...
		guest fw $G write 0 data.bin --pattern 7 --rows 4 --row-bytes 64K
		[ "$(tr -d '\0' < /tmp/sh/data.bin | wc -c)" -gt 0 ] ||
			fail "the GPU's synced writes did not reach /tmp/sh/data.bin"
		# ... a new map of the file reads it back (from the cache or the file),
		guest fr $G read 0 data.bin --rows 4 --row-bytes 64K --expect-pattern 7
		# a path with a '..' that stays inside is the same file,
		guest fd $G read 0 dir/../data.bin --rows 4 --row-bytes 64K --expect-pattern 7
		# and the read-only share maps read-only only.
		guest fo $G read 3 ro.bin
		guest fx $G write 3 ro.bin --pattern 1 --expect-error EACCES
		# Beneath the root and nowhere else (the kernel store's lookup).
		guest h1 $G read 0 ../sh2/ro.bin --expect-error EACCES
		guest h2 $G read 0 dir/../../sh2/ro.bin --expect-error EACCES
		guest h3 $G read 0 /etc/passwd --expect-error EACCES
		guest h4 $G read 0 inner-link --expect-error EACCES
		guest h5 $G read 0 outer-link --expect-error EACCES
		guest h6 $G read 0 dir/loop/data.bin --expect-error EACCES
		guest h7 $G read 0 missing.bin --expect-error ENOENT
		guest h8 $G read 0 dir --expect-error EINVAL
		guest h9 $G read 7 data.bin --expect-error ENOENT
		# b's only share is 1: a's share 0 is not b's to name.
		guest hb --dev $b file read 0 data.bin --expect-error ENOENT
		# A table changed while the VM is open reaches its context at once;
		# a map of a share dropped meanwhile stays usable until unmapped.
		guest_bg fh $G hold 0 data.bin --rows 4 --row-bytes 64K --expect-pattern 7 --hold 3600
		wait_until 30 grep -q "file hold ready" /tmp/guest.fh.log ||
			fail "the holding guest never mapped: $(cat /tmp/guest.fh.log)"
		# Tags move between ids too (0's "data" goes to 3 while the VM is
		# open: the old table is cleared before the new one is set).
		nl set-shares $a --share 3:/tmp/sh2:ro:tag=data --share 4:/tmp/sh3:tag=models > /dev/null || exit 1
		kill -USR2 $(cat /tmp/guest.fh.pid)
		wait_until 30 grep -q "file acquire-check" /tmp/guest.fh.log ||
			fail "the holding guest did not acquire again: $(cat /tmp/guest.fh.log)"
		kill -TERM $(cat /tmp/guest.fh.pid)
		guest_wait fh
		f1=$(sed -n 's/.*file hold ready .*fnv=\([0-9a-f]*\).*/\1/p' /tmp/guest.fh.log)
		f2=$(sed -n 's/.*file acquire-check .*fnv=\([0-9a-f]*\).*/\1/p' /tmp/guest.fh.log)
		[ -n "$f1" ] || fail "no checksum in: $(cat /tmp/guest.fh.log)"
		expect_eq "$f2" "$f1" "checksum after the share table changed under the map"
		out=$(dmesg | grep -E "share [0-9]+ \(/tmp/sh") &&
			fail "a live share change failed: $out"
		guest gt --dev $a info
		expect_eq "$(grep '^share ' /tmp/guest.gt.log)" "share id=3 ro=1 tag=data
share id=4 ro=0 tag=models" "tags moved between ids"
		nl set-shares $a --share 0:/tmp/sh --share 3:/tmp/sh2:ro > /dev/null || exit 1
		info "file maps through the kernel store: ok"
	else
		info "vgmem-guest has no file command: no file maps checked"
	fi
else
	info "vgmem-guest is not built: the table was not checked across an open"
fi

# ---- mgmtd: a libvirt domain's virtio-fs shares reach the vGPU --------------------
# libvirt's test driver (in-process, no daemon) holds one running domain
# on a third vGPU: two good shares and a missing one between them.
if command -v mgmtd > /dev/null && command -v vgmemctl > /dev/null; then
	c=$(mdev_create 1g) || exit 1
	mkdir -p /tmp/sh3
	cat > /tmp/node.xml <<EOF
<node><domain type='test'><name>fsvm</name>
<uuid>6695eb01-f6a4-8304-79aa-97f2502e1986</uuid>
<memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os>
<metadata><vgmem:gpu xmlns:vgmem='https://vgmem.dev/xmlns/vgmem/1' quota='1G'/></metadata>
<devices>
<filesystem type='mount'><driver type='virtiofs'/><source dir='/tmp/sh3'/><target dir='data'/></filesystem>
<filesystem type='mount'><driver type='virtiofs'/><source dir='/tmp/nonexistent'/><target dir='gone'/></filesystem>
<filesystem type='mount'><driver type='virtiofs'/><source dir='/tmp/sh2'/><target dir='ro'/><readonly/></filesystem>
<filesystem type='mount'><driver type='virtiofs'/><source dir='/tmp/sh'/><target dir='a/b'/></filesystem>
<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='$c'/></source></hostdev>
</devices></domain></node>
EOF
	mgmtd --backend netlink --libvirt-uri test:///tmp/node.xml \
		--state-db /tmp/mgmtd-sh.db --listen-unix /tmp/mgmtd-sh.sock \
		--oversub-pct 6400 --recompute-ms 250 > /tmp/mgmtd-sh.log 2>&1 &
	mpid=$!
	if ! wait_until 30 sh -c "vgmem-nl show shares $c | grep -q id=2"; then
		kill -9 $mpid
		fail "mgmtd did not set the domain's shares: $(cat /tmp/mgmtd-sh.log)"
	fi
	out=$(nl show shares $c) || exit 1
	expect_eq "$out" "id=0 readonly=0 tag=data path=/tmp/sh3
id=2 readonly=1 tag=ro path=/tmp/sh2" "shares mgmtd set from the domain"
	v=$(vgmemctl --socket /tmp/mgmtd-sh.sock --timeout 10 --json vm fsvm 2>&1)
	l=$(vgmemctl --socket /tmp/mgmtd-sh.sock --timeout 10 --json vms 2>&1)
	# Domain XML to the guest: the guest of $c reads the tags mgmtd set.
	if command -v vgmem-guest > /dev/null; then
		guest gc --dev $c info
		expect_eq "$(grep '^share' /tmp/guest.gc.log)" "shares 2
share id=0 ro=0 tag=data
share id=2 ro=1 tag=ro" "the guest's view of the domain's shares"
	fi
	kill $mpid
	wait $mpid
	info "mgmtd's view: $v"
	shares='"shares":\[{"id":0,"tag":"data","source":"/tmp/sh3","readonly":false},{"id":2,"tag":"ro","source":"/tmp/sh2","readonly":true}\]'
	echo "$v" | grep -q "$shares" || fail "GET /v1/vms/fsvm lacks the shares: $v"
	echo "$l" | grep -q "$shares" || fail "GET /v1/vms lacks the shares: $l"
	echo "$v" | grep -q "share 1 (tag 'gone')" ||
		fail "the refused share is not in the VM's error: $v"
	grep -q "share 1 (tag 'gone')" /tmp/mgmtd-sh.log ||
		fail "the refused share is not in mgmtd's log: $(cat /tmp/mgmtd-sh.log)"
	# A tag with a '/' (libvirt takes it) is refused alone. (libvirt
	# itself refuses two filesystems with one target: the unit tests
	# cover mgmtd's own duplicate check.)
	grep -q "share 3 (tag 'a/b'): a tag has no '/'" /tmp/mgmtd-sh.log ||
		fail "the tag with '/' is not in mgmtd's log: $(cat /tmp/mgmtd-sh.log)"
	mdev_remove $c
else
	info "mgmtd or vgmemctl is not built: shares from a domain not checked"
fi

# ---- clearing ----------------------------------------------------------------
nl set-shares $a > /dev/null || exit 1
expect_eq "$(nl show shares $a)" "" "shares after an empty table"
expect_eq "$(nl show shares $b | wc -l)" 1 "shares of $b after clearing $a's"
mdev_remove $a
mdev_remove $b

# ---- the file cache's counters (GET_LRC: vgmem-nl show lrc) ---------------------
# One cache for the host: open to everyone; after the file maps above, the
# GPU's faults fetched data and the synced writes reached the files.
out=$(vgnl-check as-nobody vgmem-nl show lrc 2>&1) || fail "vgmem-nl show lrc as uid 65534: $out"
info "$out"
lrc() { echo "$out" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
expect_eq "$(lrc gpus)" 1 "GPUs with a file cache"
if command -v vgmem-guest > /dev/null && vgmem-guest --help 2>&1 | grep -q ' file '; then
	for c in faults_major fetch_storage store_reads writeback_blocks writeback_bytes acquires releases; do
		[ "$(lrc $c)" -gt 0 ] 2> /dev/null || fail "LRC counter $c did not move: $out"
	done
	[ "$(lrc writeback_bytes)" -le $(($(lrc writeback_blocks) * 4096)) ] ||
		fail "more bytes written back than in the blocks: $out"
	nl --json show lrc | grep -q '"faults_major": [1-9]' || fail "JSON LRC counters: $(nl --json show lrc)"
fi
