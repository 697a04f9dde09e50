#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Walks docs/operations.md as an operator would, on a Debian 12 machine of
# its own: every command block of the page runs, in the page's order, and
# the walk fails at the first command that fails or does not print what
# the page shows (tests/walk/blocks.sh says how blocks are marked).
#
#  1. A Debian 12 root (debootstrap minbase, Debian's kernel, systemd,
#     libvirt, QEMU, mdevctl, DKMS and the kernel's headers; the package
#     test's common layer plus these, cached as build/walk/base-KEY.tar.zst,
#     tests/deb/root.sh) gets the packages of
#     `make deb` in /root/debs.
#  2. The page's `chroot` blocks run in that root (installing the packages:
#     DKMS builds the modules there, natively, for the root's kernel).
#  3. The root becomes an ext4 image and boots under QEMU (TCG) with its
#     own kernel and systemd; a oneshot unit runs the page's `boot` blocks
#     as root and powers the machine off. Their output goes to a second
#     serial port: build/walk/walk.log; the console is build/walk/console.log.
#
# What differs from an operator's host, and why (set up before the boot,
# never by the page):
#  - `editor` is a script that makes the edit the page asks for in its
#    place (tests/walk/editor), since nobody types;
#  - apt answers yes by itself (APT::Get::Assume-Yes), as the operator would;
#  - the user alice exists (the page adds an operator to group vgmem);
#  - the sample domain's guest (/usr/share/doc/vgmem-mgmtd/examples/
#    vgmem-domain.xml) runs under TCG with 256 MiB and no network: this
#    machine has no KVM in it and no libvirt network, and a 4 GiB guest
#    does not fit; it has no disk (the page's is the operator's image), so
#    it stays in its firmware, which is all a vGPU's host side needs of it.
#
# Usage: tests/walk/walk.sh [--shell]
#   --shell  boot the image with a root shell on the console instead of the
#            walk (after the chroot stage), to look around.
# Environment: WALK_TIMEOUT (seconds for the booted walk, default 1500),
# WALK_SILENCE (seconds the booted machine may print nothing, default 600:
# then it has hung; tests/walk/hang.sh reports what it does and, if the
# emulator stopped running it, a fresh image boots once more), WALK_FREEZE
# (seconds after which the first boot's QEMU is stopped, to try that path),
# WALK_MEM (MiB, default 6144: the software GPU's 4 GiB of VRAM are kernel
# memory), KEEP_ROOT=1 keeps build/walk/root after a pass, QEMU (binary).
# Needs root, debootstrap, zstd, e2fsprogs, QEMU and the Debian mirror.
# Prints "[  PASSED  ] N test(s)." like cmocka; `make walk-check` runs it.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/walk
PAGE=$ROOT/docs/operations.md
DEBS=$ROOT/build/deb
C=$ROOT/build/walk
R=$C/root
SUITE=bookworm
QEMU=${QEMU:-qemu-system-x86_64}
# An operator's host: Debian's kernel and its headers, systemd, libvirt
# with QEMU, mdevctl, Prometheus; curl, jq and uuidgen, which the page uses.
BASE_PKGS="systemd-sysv udev kmod dbus linux-image-amd64 initramfs-tools linux-headers-amd64 dkms
libvirt-daemon-system libvirt-clients qemu-system-x86 mdevctl curl jq uuid-runtime procps prometheus"
BASE_PKGS=$(echo $BASE_PKGS)
# Bump when the recipe of the base root changes (forces a new base root).
RECIPE=1
shell=0
case "${1:-}" in
"") ;;
--shell) shell=1 ;;
*) sed -n 's/^# \{0,1\}//; /^Usage:/,/^Environment/p' "$0" | sed '$d' >&2; exit 2 ;;
esac

. "$ROOT/tests/lib/report.sh"

[ "$(id -u)" = 0 ] || die "runs as root" "debootstrap, chroot and mounts need root"
for c in debootstrap zstd chroot mkfs.ext4 "$QEMU"; do
	command -v "$c" > /dev/null || die "$c is installed" "scripts/install-deps.sh installs it"
done
mapfile -t debs < <(ls "$DEBS"/*.deb 2>/dev/null | grep -v -- '-dbgsym_')
[ ${#debs[@]} -ge 6 ] || die "the packages are built" "only ${#debs[@]} .debs in $DEBS (make deb builds them)"

# The page's blocks: all marked, and each stage's script made, before
# anything slow.
if ! problems=$("$HERE/blocks.sh" --check "$PAGE" 2>&1); then
	die "every command block of docs/operations.md names its stage" "$problems"
fi
mkdir -p "$C"
for s in chroot boot; do
	"$HERE/blocks.sh" "$PAGE" $s > "$C/$s.sh" || die "the $s blocks of docs/operations.md"
done
nblocks=$(grep -c '^walk_block ' "$C/chroot.sh" "$C/boot.sh" | awk -F: '{ n += $2 } END { print n }')

. "$ROOT/tests/deb/root.sh"
. "$HERE/hang.sh"
qpid=
cleanup() {
	[ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null
	root_umount_all
	if [ -d "$R" ] && [ "$failed" = 0 ] && [ -z "${KEEP_ROOT:-}" ] && [ $shell = 0 ]; then
		root_rm
		rm -f "$C/disk.img"
	elif [ -d "$R" ]; then
		echo "walk: kept $R and $C/disk.img"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

root_base "$BASE_PKGS" "$RECIPE"
root_unpack

# ---- what differs from an operator's host (see the top) ----------------------------
mkdir -p "$R/root/debs" "$R/root/walk"
cp "${debs[@]}" "$R/root/debs/"
cp "$HERE/lib.sh" "$C/chroot.sh" "$C/boot.sh" "$R/root/walk/"
install -m 0755 "$HERE/editor" "$R/usr/local/bin/editor"
echo 'APT::Get::Assume-Yes "true";' > "$R/etc/apt/apt.conf.d/90walk"
# No service starts in the chroot (no systemd runs there).
printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"
chmod 0755 "$R/usr/sbin/policy-rc.d"
root_mount_all || die "mounting /proc, /sys, /dev, /run and /tmp in the root"
in_root "useradd -m -s /bin/bash alice" || die "adding the user alice"

# ---- 2. the chroot blocks -------------------------------------------------------------
stamp "the page's chroot blocks (log: ${C#$ROOT/}/chroot.log)"
in_root 'cd /root/debs && WALK_PAGE=operations.md bash -c ". /root/walk/lib.sh; . /root/walk/chroot.sh; echo WALK DONE \$walk_blocks"' \
	> "$C/chroot.log" 2>&1
root_save_archives
n_chroot=$(sed -n 's/^WALK DONE \([0-9]*\)$/\1/p' "$C/chroot.log")
if [ -n "$n_chroot" ] && ! grep -q '^WALK FAIL' "$C/chroot.log"; then
	ok "docs/operations.md's chroot blocks ran in a Debian 12 root ($n_chroot blocks: the packages installed)"
else
	die "docs/operations.md's chroot blocks" "$(grep '^WALK FAIL' "$C/chroot.log" || echo 'no WALK DONE')" \
		"$(tail -n 25 "$C/chroot.log")"
fi

# ---- 3. the booted machine --------------------------------------------------------------
rm -f "$R/usr/sbin/policy-rc.d" "$R/etc/apt/apt.conf.d/90walk"
in_root "apt-get clean"
echo walkhost > "$R/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\twalkhost\n' > "$R/etc/hosts"
echo '/dev/vda / ext4 defaults 0 1' > "$R/etc/fstab"
# A task blocked for 60 s is reported on the console (the VM suite's
# bad patterns then fail the walk); SysRq keys work, for hang.sh.
printf 'kernel.hung_task_timeout_secs = 60\nkernel.sysrq = 1\n' > "$R/etc/sysctl.d/90-walk.conf"
# The sample guest, as this machine can run it (see the top).
dom=$R/usr/share/doc/vgmem-mgmtd/examples/vgmem-domain.xml
[ -f "$dom" ] || die "the packages installed the sample domain" "no ${dom#$R}"
sed -i -e "s/<domain type='kvm'>/<domain type='qemu'>/" \
	-e "/<cpu mode='host-passthrough'/d" \
	-e "s|<memory unit='GiB'>4</memory>|<memory unit='MiB'>256</memory>|" \
	-e "s|<currentMemory unit='GiB'>4</currentMemory>|<currentMemory unit='MiB'>256</currentMemory>|" \
	-e "/<interface type='network'>/,/<\/interface>/d" \
	-e "/<disk type='file' device='disk'>/,/<\/disk>/d" "$dom"
grep -q "<domain type='qemu'>" "$dom" && grep -q "<memory unit='MiB'>256" "$dom" &&
	! grep -q '<interface\|<disk' "$dom" ||
	die "adapting the sample domain to TCG" "its text changed: update walk.sh's sed"
if [ $shell = 1 ]; then
	in_root "passwd -d root" > /dev/null
else
	# The walk: a oneshot unit once the machine is up, its output on the
	# second serial port; the machine powers off after it.
	cat > "$R/etc/systemd/system/vgmem-walk.service" <<-'EOF'
	[Unit]
	Description=walk docs/operations.md
	After=multi-user.target
	[Service]
	Type=oneshot
	Environment=WALK_PAGE=operations.md WALK_SYMS=/root/walk/kallsyms TERM=xterm SYSTEMD_COLORS=0 SYSTEMD_URLIFY=0
	WorkingDirectory=/root
	# Through a pipe, as a script's output: no program takes it for a
	# terminal (no colours, no pager).
	ExecStart=/bin/bash -c '{ . /root/walk/lib.sh; . /root/walk/boot.sh; echo WALK DONE $$walk_blocks; } 2>&1 | cat > /dev/ttyS1'
	ExecStopPost=/bin/systemctl --force poweroff
	[Install]
	WantedBy=default.target
	EOF
	in_root "systemctl enable vgmem-walk.service && systemctl mask serial-getty@ttyS0.service" > /dev/null 2>&1 ||
		die "enabling the walk's unit"
fi
root_umount_all

kver=$(ls "$R"/boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n 1)
[ -n "$kver" ] && [ -f "$R/boot/initrd.img-$kver" ] || die "the root has a kernel and its initramfs" "none in $R/boot"
cp "$R/boot/vmlinuz-$kver" "$R/boot/initrd.img-$kver" "$C/"
size=$(( $(du -sm --one-file-system "$R" | cut -f1) + 2048 ))
# walk_image: the root as a fresh ext4 image, $C/disk.img.
walk_image()
{
	stamp "an ext4 image of the root (${size} MiB)"
	rm -f "$C/disk.img"
	mkfs.ext4 -q -F -L walkroot -d "$R" "$C/disk.img" "${size}M" > "$C/mkfs.log" 2>&1 ||
		die "making the root's image" "$(tail -n 5 "$C/mkfs.log")"
}
walk_image

# nokaslr: the symbols lib.sh saves name the RIPs of a machine that hangs
# (hang.sh).
qemu_args=(-accel tcg -m "${WALK_MEM:-6144}" -smp 2 -no-reboot
	-kernel "$C/vmlinuz-$kver" -initrd "$C/initrd.img-$kver"
	-append "root=/dev/vda rw console=ttyS0 panic=-1 loglevel=4 systemd.show_status=error nokaslr"
	-drive "file=$C/disk.img,if=virtio,format=raw,cache=unsafe" -nic none)
if [ $shell = 1 ]; then
	echo "walk: root shell on the console (no password); Ctrl-A X quits QEMU"
	exec "$QEMU" "${qemu_args[@]}" -nographic
fi

# walk_boot: boots the image and waits for the machine to power off. It
# is stopped if it does not within WALK_TIMEOUT s, or if neither its
# console nor the walk's output grows for WALK_SILENCE s (a running walk
# prints at least every 240 s: lib.sh's WALK_SLOW); then $stuck says why
# and hang.sh's report of what it was doing is in $C/hang.log (and its
# verdict in hang_kind).
walk_boot()
{
	local end now size last=-1 quiet_since=$SECONDS
	stamp "booting $kver under TCG; the page's boot blocks (log: ${C#$ROOT/}/walk.log)"
	rm -f "$C/walk.log" "$C/console.log" "$C/hang.log" "$C/mon.in" "$C/mon.out"
	stuck=
	hang_kind=
	# A human monitor on FIFOs (QEMU opens them read-write: neither
	# blocks it), for hang.sh.
	mkfifo "$C/mon.in" "$C/mon.out" || die "making the monitor's FIFOs in $C"
	"$QEMU" "${qemu_args[@]}" -display none -monitor none \
		-chardev "pipe,id=mon,path=$C/mon" -mon chardev=mon,mode=readline \
		-serial "file:$C/console.log" -serial "file:$C/walk.log" < /dev/null > "$C/qemu.log" 2>&1 &
	qpid=$!
	cat "$C/mon.out" > "$C/mon.log" &
	# WALK_FREEZE=S, to try this path: the first boot's QEMU is stopped
	# (SIGSTOP) after S s, as an emulator that stops running the machine.
	if [ -n "${WALK_FREEZE:-}" ] && [ -z "$first" ]; then
		{ sleep "$WALK_FREEZE"; kill -STOP $qpid; } > /dev/null 2>&1 &
	fi
	end=$((SECONDS + ${WALK_TIMEOUT:-1500}))
	while kill -0 $qpid 2>/dev/null; do
		now=$SECONDS
		if [ $now -ge $end ]; then
			stuck="did not finish within ${WALK_TIMEOUT:-1500} s"
			break
		fi
		size=$(cat "$C/walk.log" "$C/console.log" 2>/dev/null | wc -c)
		if [ "$size" != "$last" ]; then
			last=$size
			quiet_since=$now
		elif [ $((now - quiet_since)) -ge "${WALK_SILENCE:-600}" ]; then
			stuck="printed nothing for ${WALK_SILENCE:-600} s"
			break
		fi
		sleep 1
	done
	if [ -n "$stuck" ]; then
		stamp "the machine $stuck; asking it what it does (log: ${C#$ROOT/}/hang.log)"
		# The symbols lib.sh saved on the machine's disk (synced:
		# readable while it runs).
		rm -f "$C/kallsyms"
		debugfs -R "dump /root/walk/kallsyms $C/kallsyms" "$C/disk.img" > /dev/null 2>&1
		hang_report $qpid "$C" "$C/kallsyms" "$C/console.log" > "$C/hang.log" 2>&1
		kill $qpid
		for _ in $(seq 10); do kill -0 $qpid 2>/dev/null || break; sleep 1; done
		kill -9 $qpid 2>/dev/null
	fi
	wait $qpid 2>/dev/null	# (not bash's "Killed" line)
	qpid=
	tr -d '\r' < "$C/walk.log" > "$C/walk.log.tmp" && mv "$C/walk.log.tmp" "$C/walk.log"
}
first=
walk_boot
# A machine the emulator stopped running (QEMU stuck, or its CPUs halted
# and woken by no interrupt: no timer) says nothing about the page or the
# packages: a fresh image boots once more. One whose kernel still ran, or
# spun with interrupts off, fails the walk as it is.
if [ -n "$stuck" ] && { [ "$hang_kind" = qemu ] || [ "$hang_kind" = timer ]; }; then
	for f in hang walk console; do mv "$C/$f.log" "$C/$f-1.log"; done
	first="the first boot $stuck: $(grep '^hang: verdict' "$C/hang-1.log" | sed 's/^hang: verdict: //')"
	stamp "$first; booting a fresh image once more (the first boot's logs: ${C#$ROOT/}/*-1.log)"
	walk_image
	walk_boot
fi
tr -d '\r' < "$C/walk.log" > "$C/walk.log.tmp" && mv "$C/walk.log.tmp" "$C/walk.log"
n_boot=$(sed -n 's/^WALK DONE \([0-9]*\)$/\1/p' "$C/walk.log")
if [ -n "$n_boot" ] && ! grep -q '^WALK FAIL' "$C/walk.log"; then
	ok "docs/operations.md's boot blocks ran on the booted machine ($n_boot blocks)${first:+ (on a second boot: $first)}"
else
	why="no WALK DONE"
	[ -n "$stuck" ] && why="the machine $stuck"
	[ -n "$first" ] && why="$why (on a second boot: $first)"
	hang=()
	[ -s "$C/hang.log" ] && hang=("what it was doing (${C#$ROOT/}/hang.log, shortened):"
		"$(grep '^hang: verdict' "$C/hang.log"; head -n 50 "$C/hang.log")")
	die "docs/operations.md's boot blocks" "$(grep '^WALK FAIL' "$C/walk.log" || echo "$why")" \
		"last lines of ${C#$ROOT/}/walk.log:" "$(tail -n 20 "$C/walk.log")" \
		"last lines of ${C#$ROOT/}/console.log:" "$(tr -d '\r' < "$C/console.log" | tail -n 10)" \
		"${hang[@]}"
fi
# The kernel's log on the console: no warning, oops or hung task.
bad=$(tr -d '\r' < "$C/console.log" | grep -E '^\[ *[0-9]+\.[0-9]+\]' |
	grep -E -f "$ROOT/tests/vm/bad-patterns.txt" | head -n 20)
[ -z "$bad" ] && ok "the booted machine's kernel log has no warning, oops or hung task" ||
	not_ok "the kernel log (${C#$ROOT/}/console.log) is clean" "$bad"
[ $((n_chroot + n_boot)) = "$nblocks" ] && ok "every one of the page's $nblocks command blocks ran" ||
	not_ok "every command block ran" "$n_chroot + $n_boot of $nblocks"
stamp "done"
finish
