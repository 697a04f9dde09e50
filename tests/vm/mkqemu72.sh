#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Builds the archive that gives the test VM (L1) Debian 12's QEMU 7.2 with
# our VFIO migration protocol v2 patches (qemu-patches/), for the cases
# marked "# vmtest-needs: qemu72". scripts/build-qemu72.sh makes the binary
# (cached under build/qemu72); it goes to /opt/qemu72/usr/bin in L1 with
# the shared libraries ldd names, at their paths. QEMU 7.2 looks for its
# firmware relative to its binary: /opt/qemu72/usr/share/{qemu,seabios}
# are symbolic links to where the "qemu" archive (mkl2.sh) puts Debian's
# own 7.2 firmware, the version this QEMU is.
#
# Usage: mkqemu72.sh [OUTPUT]   (default build/vm/qemu72.cpio.gz)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
OUT=${1:-$VM_BUILD/qemu72.cpio.gz}
HERE=$ROOT/tests/vm
QDIR=${QEMU72_DIR:-$ROOT/build/qemu72}
PREFIX=/opt/qemu72

die() { echo "mkqemu72: $*" >&2; exit 1; }
[ $# -le 1 ] && [ "${1:-}" != --help ] || { sed -n 's/^# \{0,1\}//; /^Usage:/p' "$0" >&2; exit 2; }
# shellcheck source=stage-lib.sh
. "$HERE/stage-lib.sh"

QEMU72_DIR=$QDIR "$ROOT/scripts/build-qemu72.sh"
QEMU=$QDIR/usr/bin/qemu-system-x86_64
[ -x "$QEMU" ] || die "no $QEMU after scripts/build-qemu72.sh"
missing=$(ldd "$QEMU" | awk '/not found/ { print $1 }')
[ -z "$missing" ] || die "$QEMU needs libraries this machine lacks: $missing (scripts/install-deps.sh)"

STAGE=$VM_BUILD/qemu72-stage
rm -rf "$STAGE"
mkdir -p "$STAGE$PREFIX/usr/bin" "$STAGE$PREFIX/usr/share"
ln -s /usr/share/qemu "$STAGE$PREFIX/usr/share/qemu"
ln -s /usr/share/seabios "$STAGE$PREFIX/usr/share/seabios"
# Without its debug information: a third of the size L1's initramfs carries.
strip -o "$STAGE$PREFIX/usr/bin/qemu-system-x86_64" "$QEMU"
mapfile -t libs < <(ldd_libs "$QEMU")
for lib in "${libs[@]}"; do
	mkdir -p "$STAGE$(dirname "$lib")"
	cp -L "$lib" "$STAGE$lib"
done
mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "mkqemu72: $OUT ($(du -h "$OUT" | cut -f1)): $("$QEMU" -version | head -n 1) ($(cat "$QDIR/stamp")), ${#libs[@]} shared libraries"
