#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Builds what the test VM (L1) needs to run libvirtd with its QEMU driver,
# for the cases marked "# vmtest-needs: ... libvirt" (which also say qemu:
# this archive adds libvirt to tests/vm/mkl2.sh's QEMU): a cpio archive
# that run.sh appends to L1's initramfs, holding, at the host's paths,
#   - libvirtd, virsh and the QEMU connection driver
#     (libvirt_driver_qemu.so; libvirtd skips the drivers it does not
#     find, so the network, storage, nodedev, ... drivers stay out);
#   - their shared libraries (ldd), but those the other archives already
#     hold (the same file in mkinitramfs.sh's or mkl2.sh's stage);
#   - libvirt's CPU model map (/usr/share/libvirt/cpu_map), which the
#     host capabilities need;
#   - /var/run as a link to /run, as on Debian.
# The configuration (qemu.conf, libvirtd.conf) is the case's: it writes it
# for the initramfs it runs in.
#
# Usage: mklibvirt.sh [OUTPUT]   (default build/vm/libvirt.cpio.gz)
# Run after mkinitramfs.sh and mkl2.sh (run.sh does).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
OUT=${1:-$VM_BUILD/libvirt.cpio.gz}
# shellcheck source=stage-lib.sh
. "$ROOT/tests/vm/stage-lib.sh"

die() { echo "mklibvirt: $*" >&2; exit 1; }

LIBVIRTD=$(command -v libvirtd || true)
[ -n "$LIBVIRTD" ] || LIBVIRTD=/usr/sbin/libvirtd
[ -x "$LIBVIRTD" ] || die "no libvirtd (apt-get install libvirt-daemon)"
VIRSH=$(command -v virsh || true)
[ -n "$VIRSH" ] || die "no virsh (apt-get install libvirt-clients)"
QEMU_DRV=$(ls /usr/lib/*/libvirt/connection-driver/libvirt_driver_qemu.so 2>/dev/null |
	head -n 1 || true)
[ -n "$QEMU_DRV" ] || die "no libvirt_driver_qemu.so (apt-get install libvirt-daemon-driver-qemu)"
# The node device driver lists mdevs and their types (mgmtd's migration
# picks the destination's vGPU with it); in Debian 12's libvirt-daemon.
NODEDEV_DRV=${QEMU_DRV%/*}/libvirt_driver_nodedev.so
[ -f "$NODEDEV_DRV" ] || die "no $NODEDEV_DRV (apt-get install libvirt-daemon)"
CPU_MAP=/usr/share/libvirt/cpu_map
[ -f $CPU_MAP/index.xml ] || die "no $CPU_MAP/index.xml (apt-get install libvirt-daemon)"

STAGE=$VM_BUILD/libvirt-stage
rm -rf "$STAGE"
mkdir -p "$STAGE"

# Copies a file to the same path under $STAGE.
put() {
	local dst
	dst=$STAGE$(realpath -s "$1")
	mkdir -p "$(dirname "$dst")"
	cp -L "$1" "$dst"
}

# True when an earlier archive of L1's initramfs has this very file.
held() {
	local s
	for s in "$VM_BUILD/initramfs" "$VM_BUILD/qemu-stage"; do
		[ -f "$s$1" ] && cmp -s "$1" "$s$1" && return 0
	done
	return 1
}

for b in "$LIBVIRTD" "$VIRSH" "$QEMU_DRV" "$NODEDEV_DRV"; do put "$b"; done
mapfile -t libs < <(ldd_libs "$LIBVIRTD" "$VIRSH" "$QEMU_DRV" "$NODEDEV_DRV")
added=0
for lib in "${libs[@]}"; do
	held "$lib" && continue
	put "$lib"
	added=$((added + 1))
done
mkdir -p "$STAGE$CPU_MAP"
cp "$CPU_MAP"/*.xml "$STAGE$CPU_MAP/"
# libvirtd makes its sockets in /run/libvirt, while clients (virsh, mgmtd)
# look in /var/run/libvirt: one place on Debian, where /var/run is /run.
mkdir -p "$STAGE/var"
ln -s /run "$STAGE/var/run"

mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "mklibvirt: $OUT ($(du -h "$OUT" | cut -f1)): libvirtd, virsh," \
	"$(basename "$QEMU_DRV"), $(basename "$NODEDEV_DRV"), $added shared libraries (${#libs[@]} needed)"
