#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Builds Debian 12's QEMU 7.2 with the series in qemu-patches/ (VFIO device
# migration protocol v2), for the test VM's migration case and for anyone
# who wants to try a patched 7.2 without rebuilding the package. Nothing is
# installed and the system's apt is left alone: the source comes through a
# private apt configuration under build/qemu72/apt (scripts/private-apt.sh:
# deb-src for bookworm and bookworm-security from the system's Debian
# mirror), `apt-get source` unpacks it with Debian's own patches applied,
# then qemu-patches/series is applied with patch -p1, and only
# qemu-system-x86_64 is configured and built (x86_64-softmmu, TCG, no
# default features).
#
# The result is build/qemu72/usr/bin/qemu-system-x86_64 with a stamp naming
# the source version and the patches' checksum: a rerun with the same source
# and series does not rebuild (about 4 minutes on two idle cores otherwise).
# QEMU 7.2 looks for its firmware relative to its binary (../share/qemu,
# ../share/seabios); build/qemu72/usr/share/{qemu,seabios} are symbolic links
# to Debian's (qemu-system-data, seabios), so the binary runs from there.
#
# Usage: scripts/build-qemu72.sh [--force]
# Environment: QEMU72_DIR (default build/qemu72), DEBIAN_MIRROR (default:
# the system's, else http://deb.debian.org/debian), JOBS (default 2).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${QEMU72_DIR:-$ROOT/build/qemu72}
PATCHES=$ROOT/qemu-patches
BIN=$DIR/usr/bin/qemu-system-x86_64
JOBS=${JOBS:-2}

die() { echo "build-qemu72: $*" >&2; exit 1; }
force=0
case "${1:-}" in
--force) force=1 ;;
"") ;;
*) sed -n 's/^# \{0,1\}//; /^Usage:/,/^Environment/p' "$0" >&2; exit 2 ;;
esac
for c in apt-get dpkg-source patch meson ninja pkg-config; do
	command -v $c > /dev/null || die "no $c (scripts/install-deps.sh)"
done
[ -f "$PATCHES/series" ] || die "no $PATCHES/series"

# A private apt configuration (scripts/private-apt.sh) with deb-src lines
# for bookworm and bookworm-security only: the system's apt is not touched.
. "$ROOT/scripts/private-apt.sh"
APTDIR=$DIR/apt
mkdir -p "$DIR/dl"
papt_init "$APTDIR" src:bookworm src:bookworm-security
# Source lists younger than a day are used as they are; offline, a build
# already made is kept (papt_update dies in the subshell only).
if ! (papt_update 1440); then
	[ -x "$BIN" ] && [ $force = 0 ] || die "cannot read the source lists (private apt in $APTDIR)"
	echo "build-qemu72: no source lists; keeping $BIN ($(cat "$DIR/stamp"))"
	exit 0
fi
APT=("${PAPT[@]}")
# The newest qemu 7.2 source of bookworm and bookworm-security.
version=$(apt-cache "${APT[@]}" showsrc qemu 2>/dev/null | sed -n 's/^Version: //p' |
	grep '^1:7\.2+' | sort -V | tail -n 1)
[ -n "$version" ] || die "no qemu 7.2 source package in bookworm or bookworm-security"

configure=(--prefix=/usr --firmwarepath=/usr/share/qemu:/usr/share/seabios
	--target-list=x86_64-softmmu --without-default-features --enable-tcg
	--enable-vhost-user --enable-fdt=system --disable-docs --disable-tools --disable-werror)
mapfile -t series < <(sed 's/#.*//; /^[[:space:]]*$/d' "$PATCHES/series")
[ ${#series[@]} -gt 0 ] || die "$PATCHES/series names no patch"
sum=$(cd "$PATCHES" && cat series "${series[@]}" | sha256sum | cut -c1-16)
stamp="qemu $version, qemu-patches $sum, ${configure[*]}"
if [ $force = 0 ] && [ -x "$BIN" ] && [ "$(cat "$DIR/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "build-qemu72: cached $BIN ($stamp)"
	exit 0
fi

upstream=${version#*:}
upstream=${upstream%-*}
dsc=$DIR/dl/qemu_${version#*:}.dsc
if [ ! -f "$dsc" ]; then
	echo "build-qemu72: downloading the source of qemu $version"
	(cd "$DIR/dl" && apt-get "${APT[@]}" -qq --download-only source "qemu=$version") ||
		die "apt-get source qemu=$version failed"
fi
SRC=$DIR/src
rm -rf "$SRC"
dpkg-source -q -x "$dsc" "$SRC" > "$DIR/unpack.log" 2>&1 ||
	{ cat "$DIR/unpack.log" >&2; die "dpkg-source -x $dsc failed"; }
for p in "${series[@]}"; do
	patch -d "$SRC" -p1 --forward --batch --quiet < "$PATCHES/$p" ||
		die "$p does not apply to qemu $version (upstream $upstream)"
done
echo "build-qemu72: qemu $version unpacked, ${#series[@]} patches applied; building qemu-system-x86_64 (-j$JOBS)"

t0=$(date +%s)
mkdir -p "$SRC/build"
(cd "$SRC/build" && nice -n 10 ../configure "${configure[@]}") > "$DIR/configure.log" 2>&1 ||
	{ tail -n 30 "$DIR/configure.log" >&2; die "configure failed (log: $DIR/configure.log)"; }
nice -n 10 ninja -C "$SRC/build" -j "$JOBS" qemu-system-x86_64 > "$DIR/build.log" 2>&1 ||
	{ grep -B2 -A8 'error' "$DIR/build.log" | tail -n 40 >&2; die "the build failed (log: $DIR/build.log)"; }
mkdir -p "$DIR/usr/bin" "$DIR/usr/share"
ln -sfn /usr/share/qemu "$DIR/usr/share/qemu"
ln -sfn /usr/share/seabios "$DIR/usr/share/seabios"
cp "$SRC/build/qemu-system-x86_64" "$BIN.new"
mv "$BIN.new" "$BIN"
echo "$stamp" > "$DIR/stamp"
echo "build-qemu72: $BIN built in $(( $(date +%s) - t0 ))s ($stamp)"
