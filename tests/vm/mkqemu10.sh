#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Builds the archive that gives the test VM (L1) QEMU 10 next to Debian 12's
# QEMU 7.2, for the cases marked "# vmtest-needs: qemu10": QEMU 10.0 speaks
# VFIO device migration protocol v2 (7.2 only v1, which Linux removed in
# 5.18). The packages come from bookworm-backports (scripts/fetch-backports.sh:
# a private apt configuration, nothing installed on this machine) and go to
# /opt/qemu10 in L1: the binary at /opt/qemu10/usr/bin/qemu-system-x86_64,
# which finds its firmware relative to itself (../share/qemu: SeaBIOS and
# the option ROMs the pc machine loads), and its shared libraries at the
# paths ldd names (Debian 12's own: the backport is built against them).
#
# Usage: mkqemu10.sh [OUTPUT]   (default build/vm/qemu10.cpio.gz)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
OUT=${1:-$VM_BUILD/qemu10.cpio.gz}
HERE=$ROOT/tests/vm
SRC=$ROOT/build/qemu10
PREFIX=/opt/qemu10

die() { echo "mkqemu10: $*" >&2; exit 1; }
# shellcheck source=stage-lib.sh
. "$HERE/stage-lib.sh"

"$ROOT/scripts/fetch-backports.sh" "$SRC" qemu-system-x86 qemu-system-common \
	qemu-system-data seabios
QEMU=$SRC/usr/bin/qemu-system-x86_64
[ -x "$QEMU" ] || die "no $QEMU after the fetch"
missing=$(ldd "$QEMU" | awk '/not found/ { print $1 }')
[ -z "$missing" ] || die "$QEMU needs libraries this machine lacks: $missing (scripts/install-deps.sh)"

STAGE=$VM_BUILD/qemu10-stage
rm -rf "$STAGE"
mkdir -p "$STAGE$PREFIX/usr/bin" "$STAGE$PREFIX/usr/share/qemu"
cp "$QEMU" "$STAGE$PREFIX/usr/bin/"
# What the pc machine loads: SeaBIOS, the direct kernel boot ROMs, kvmvapic.
cp -L "$SRC/usr/share/seabios/bios-256k.bin" "$STAGE$PREFIX/usr/share/qemu/"
for f in linuxboot_dma.bin linuxboot.bin kvmvapic.bin pvh.bin; do
	cp -L "$SRC/usr/share/qemu/$f" "$STAGE$PREFIX/usr/share/qemu/"
done
mapfile -t libs < <(ldd_libs "$QEMU")
for lib in "${libs[@]}"; do
	mkdir -p "$STAGE$(dirname "$lib")"
	cp -L "$lib" "$STAGE$lib"
done
mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "mkqemu10: $OUT ($(du -h "$OUT" | cut -f1)): $("$QEMU" -version | head -n 1), ${#libs[@]} shared libraries"
