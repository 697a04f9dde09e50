#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Builds what the test VM (L1) needs to boot a nested guest (L2) for the
# cases marked "# vmtest-needs: qemu": a cpio archive that run.sh appends
# to L1's initramfs, holding
#   - Debian's qemu-system-x86_64 with its shared libraries, its TCG
#     accelerator module and the firmware the pc, q35 and microvm machines
#     load (SeaBIOS, qboot, linuxboot_dma, kvmvapic, and pvh for an ELF
#     kernel), at the host's paths;
#   - virtiofsd with its shared libraries;
#   - /l2/vmlinux: the kernel L1 runs, uncompressed: L2 runs it too;
#   - /l2/initramfs.cpio.gz: L2's initramfs: busybox-static, tests/vm/l2/
#     (init, lib.sh), the static programs of build/vm/bin/ (stripped) in
#     /l2/bin, the guest driver built for that kernel (guest-driver/kernel/
#     *.ko, or kernel.env's GUEST_MODDIR; if built) in /l2/modules, and the
#     virtio-fs modules (uncompressed) in /l2/share-modules with their load
#     order.
# L1 appends each launch's /l2/run.sh to L2's initramfs (tests/vm/l2.sh).
#
# Usage: mkl2.sh [OUTPUT]   (default build/vm/l2.cpio.gz)
# Needs build/vm/kernel.env from fetch-kernel.sh. Environment: QEMU.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
OUT=${1:-$VM_BUILD/l2.cpio.gz}
HERE=$ROOT/tests/vm
QEMU=$(command -v "${QEMU:-qemu-system-x86_64}" || true)
VIRTIOFSD=/usr/lib/qemu/virtiofsd

die() { echo "mkl2: $*" >&2; exit 1; }

[ -f "$VM_BUILD/kernel.env" ] || die "no $VM_BUILD/kernel.env: run tests/vm/fetch-kernel.sh"
# shellcheck source=/dev/null
. "$VM_BUILD/kernel.env"
# shellcheck source=stage-lib.sh
. "$HERE/stage-lib.sh"
[ -n "$QEMU" ] || die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
QEMU=$(readlink -f "$QEMU")
[ -x "$VIRTIOFSD" ] || die "no $VIRTIOFSD (apt-get install qemu-system-common)"
BUSYBOX=$(readlink -f "$(command -v busybox)")

# QEMU finds its modules and firmware relative to its binary
# (../lib/x86_64-linux-gnu/qemu, ../share/qemu, ../share/seabios).
QDIR=$(dirname "$QEMU")/..
ACCEL=$(ls "$QDIR"/lib/*/qemu/accel-tcg-x86_64.so 2>/dev/null | head -n1 || true)
[ -n "$ACCEL" ] || die "no accel-tcg-x86_64.so next to $QEMU (apt-get install qemu-system-common)"
FIRMWARE=("$QDIR/share/seabios/bios-256k.bin" "$QDIR/share/qemu/bios-microvm.bin"
	"$QDIR/share/qemu/linuxboot_dma.bin" "$QDIR/share/qemu/kvmvapic.bin"
	"$QDIR/share/qemu/pvh.bin")
for f in "${FIRMWARE[@]}"; do
	[ -e "$f" ] || die "no $f (apt-get install seabios qemu-system-data)"
done

STAGE=$VM_BUILD/qemu-stage
L2=$VM_BUILD/l2-stage
rm -rf "$STAGE" "$L2"
mkdir -p "$STAGE/l2" "$L2"/{bin,dev,proc,sys,tmp,mnt,l2/bin,l2/modules,l2/share-modules}

# Copies a file to the same path under $STAGE (firmware symlinks resolved).
put() {
	local dst
	dst=$STAGE$(realpath -s "$1")
	mkdir -p "$(dirname "$dst")"
	cp -L "$1" "$dst"
}

# Programs and their libraries at the paths ldd names, the loader too.
for b in "$QEMU" "$ACCEL" "$VIRTIOFSD"; do put "$b"; done
mapfile -t libs < <(ldd_libs "$QEMU" "$ACCEL" "$VIRTIOFSD")
for lib in "${libs[@]}"; do put "$lib"; done
for f in "${FIRMWARE[@]}"; do put "$f"; done
# L2 boots the kernel uncompressed, through its PVH entry (CONFIG_PVH):
# decompressing the bzImage's payload is most of a nested boot under TCG
# (one level: 48 s against 20 s to init at load 8). The payload is xz
# (Debian's 6.1) or zstd (6.12) and starts at its format's magic; a
# truncated read past its end is expected (the bzImage goes on), so the
# result is judged as an ELF with a PVH entry note, and the next place the
# magic occurs is tried if it is none.
pvh() { readelf -nW "$1" 2>/dev/null | grep -q 'Xen.*0x00000012'; }
for fmt in xz:fd377a585a00 zstd:28b52ffd; do
	tool=${fmt%%:*}
	magic=$(sed 's/../\\x&/g' <<<"${fmt#*:}")
	for off in $(LC_ALL=C grep -aboP "$magic" "$VMLINUZ" | cut -d: -f1 | head -n 4); do
		tail -c +$((off + 1)) "$VMLINUZ" | "$tool" -dc 2>/dev/null > "$STAGE/l2/vmlinux" || true
		pvh "$STAGE/l2/vmlinux" && break 2
	done
done
pvh "$STAGE/l2/vmlinux" ||
	die "no xz or zstd payload in $VMLINUZ that is a kernel with a PVH entry (an ELF note Xen type 0x12)"

# L2's initramfs.
cp "$BUSYBOX" "$L2/bin/busybox"
for applet in $("$BUSYBOX" --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$L2/bin/$applet"
done
cp "$HERE/l2/init" "$L2/init"
cp "$HERE/l2/lib.sh" "$L2/l2/"
for b in "$VM_BUILD"/bin/*; do
	[ -x "$b" ] && strip -o "$L2/l2/bin/${b##*/}" "$b"
done
shopt -s nullglob
for ko in "${GUEST_MODDIR:-$ROOT/guest-driver/kernel}"/*.ko; do
	strip --strip-debug -o "$L2/l2/modules/${ko##*/}" "$ko"
done
# virtio-fs: the modules modprobe would load, in its order (none where
# both are built in, as in Debian's 6.12).
: > "$L2/l2/share-modules/order"
for m in virtio_pci virtiofs; do
	deps=$(modprobe -d "$MODROOT" -S "$KVER" --show-depends "$m" 2>/dev/null) ||
		die "no $m in $MODROOT: neither a module nor built in"
	awk '$1 == "insmod" { print $2 }' <<<"$deps"
done | awk '!seen[$0]++' | while read -r ko; do
	name=${ko##*/}
	case "$name" in
	*.ko.xz) name=${name%.xz}; xz -dc "$ko" > "$L2/l2/share-modules/$name" ;;
	*) cp "$ko" "$L2/l2/share-modules/" ;;
	esac
	echo "$name" >> "$L2/l2/share-modules/order"
done
[ "$(id -u)" = 0 ] && mknod -m 600 "$L2/dev/console" c 5 1
(cd "$L2" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -9 > "$STAGE/l2/initramfs.cpio.gz"

mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "mkl2: $OUT ($(du -h "$OUT" | cut -f1)): $(basename "$QEMU"), virtiofsd," \
	"${#libs[@]} shared libraries; L2 initramfs $(du -h "$STAGE/l2/initramfs.cpio.gz" | cut -f1):" \
	"$(ls "$L2/l2/bin" | tr '\n' ' ')$(ls "$L2/l2/modules" | tr '\n' ' ')"
