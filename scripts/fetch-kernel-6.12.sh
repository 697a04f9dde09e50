#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Fetches Debian's 6.12 kernel from bookworm-backports, the second kernel
# vgmem builds and runs on (docs/testing.md): its headers (with their
# -common package and linux-kbuild) to build the modules against, and its
# unsigned image (vmlinuz and modules) to boot in the test VM. Nothing is
# installed: apt runs with a private configuration (its own sources list,
# package lists and cache in build/kernel-6.12/apt/; the system's sources
# are never changed) and the packages are unpacked with dpkg -x into
# build/kernel-6.12/<kver>/root/.
#
# The version is never written down here: the ABI name (e.g.
# 6.12.95+deb12-amd64) and the package version come from the Depends of
# bookworm-backports' linux-headers-amd64 metapackage. The mirror is the
# one this machine's apt sources use for bookworm (deb.debian.org if none;
# scripts/private-apt.sh).
#
# Debian's header packages point at themselves by absolute paths (the
# amd64 Makefile includes /usr/src/linux-headers-<kver>-common/Makefile,
# lib/modules/<kver>/build and source are links to /usr/src); those are
# rewritten to point inside the unpacked tree, so its
# usr/src/linux-headers-<kver> works as KDIR wherever the checkout is.
#
# Cached and idempotent: once unpacked, later runs only print where it is
# (no network). --refresh reads the index again and fetches a newer kernel
# if backports has one. The .debs stay in build/kernel-6.12/debs/.
#
# Writes build/kernel-6.12/kernel.env: KVER, PKGVER, KDIR (the headers),
# VMLINUZ, MODROOT (boot/ and lib/modules/<kver>/, depmod run), and MODSRC
# (where `make module-6.12` builds the modules: a tree of links to the
# sources, so 6.1's objects in the checkout are left alone).
#
# Usage: scripts/fetch-kernel-6.12.sh [--refresh] [--quiet]
# Environment: K612_MIRROR overrides the mirror (e.g.
# http://deb.debian.org/debian).
set -euo pipefail

SERIES=6.12
SUITE=bookworm-backports
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$ROOT/build/kernel-$SERIES
APTDIR=$DIR/apt
DEBS=$DIR/debs
ENV=$DIR/kernel.env

refresh=0
quiet=0
while [ $# -gt 0 ]; do
	case "$1" in
	--refresh) refresh=1; shift ;;
	--quiet) quiet=1; shift ;;
	*) sed -n 's/^# \{0,1\}//; /^Usage:/,/^Environment/p' "$0" | sed '$d' >&2; exit 2 ;;
	esac
done

# depmod is in sbin, which a non-root PATH may lack.
PATH=$PATH:/usr/sbin:/sbin

die() { echo "fetch-kernel-$SERIES: $*" >&2; exit 1; }
say() { [ $quiet = 1 ] || echo "fetch-kernel-$SERIES: $*"; }

mkdir -p "$DIR"
# One run at a time (make -j may start two).
exec 9> "$DIR/.lock"
flock 9

# The cache: a complete tree named by kernel.env.
cached() {
	[ -f "$ENV" ] || return 1
	# shellcheck source=/dev/null
	(. "$ENV" && [ -f "$KDIR/.config" ] && [ -f "$KDIR/Module.symvers" ] &&
		[ -f "$VMLINUZ" ] && [ -f "$MODROOT/lib/modules/$KVER/modules.dep" ] &&
		[ -f "$(dirname "$MODROOT")/.extracted" ])
}
if [ $refresh = 0 ] && cached; then
	say "$(. "$ENV" && echo "$KVER cached in $(dirname "$MODROOT")")"
	exit 0
fi

# ---- the private apt configuration (scripts/private-apt.sh) --------------------
# shellcheck source=private-apt.sh
. "$ROOT/scripts/private-apt.sh"
[ -z "${K612_MIRROR:-}" ] || DEBIAN_MIRROR=$K612_MIRROR
mkdir -p "$DEBS"
papt_init "$APTDIR" "$SUITE"
say "reading $SUITE"
papt_update
APT=("${PAPT[@]}")

# "linux-headers-6.12.95+deb12-amd64 (= 6.12.95-1~bpo12+1)" -> kver, version.
deps=$(apt-cache "${APT[@]}" show linux-headers-amd64 2>/dev/null |
	sed -n 's/^Depends: //p' | head -n 1)
KVER=$(sed -n 's/^linux-headers-\([^ ,]*\) (= [^)]*).*/\1/p' <<<"$deps")
PKGVER=$(sed -n 's/^linux-headers-[^ ,]* (= \([^)]*\)).*/\1/p' <<<"$deps")
[ -n "$KVER" ] && [ -n "$PKGVER" ] ||
	die "cannot read the kernel from $SUITE's linux-headers-amd64 (Depends: '$deps')"
case "$KVER" in
$SERIES.*-amd64) ;;
*) die "$SUITE's linux-headers-amd64 names $KVER, not a $SERIES kernel" ;;
esac
FLAVOUR=${KVER%-amd64}			# 6.12.95+deb12: the -common and kbuild names

KROOT=$DIR/$KVER/root
if [ -f "$DIR/$KVER/.extracted" ] && [ -f "$ENV" ] && grep -qx "KVER=$KVER" "$ENV" && cached; then
	say "$KVER (the newest in $SUITE) cached in $DIR/$KVER"
	exit 0
fi

PKGS=("linux-headers-$KVER" "linux-headers-$FLAVOUR-common" "linux-kbuild-$FLAVOUR"
	"linux-image-$KVER-unsigned")
debs=()
for p in "${PKGS[@]}"; do
	f=$(ls "$DEBS/${p}_"*"_"*.deb 2>/dev/null | grep -F "_${PKGVER//:/%3a}_" | head -n 1 || true)
	if [ -z "$f" ]; then
		say "downloading $p ($PKGVER)"
		(cd "$DEBS" && apt-get "${APT[@]}" -q download "$p=$PKGVER" > "$APTDIR/download.log" 2>&1) ||
			die "could not download $p=$PKGVER: $(tail -n 3 "$APTDIR/download.log" | tr '\n' ' ')"
		f=$(ls "$DEBS/${p}_"*.deb 2>/dev/null | grep -F "_${PKGVER//:/%3a}_" | head -n 1 || true)
		[ -n "$f" ] || die "apt-get download $p=$PKGVER left no .deb in $DEBS"
	fi
	debs+=("$f")
done

say "unpacking $KVER into $DIR/$KVER"
rm -rf "$DIR/$KVER"
mkdir -p "$KROOT"
for f in "${debs[@]}"; do
	dpkg -x "$f" "$KROOT" || die "dpkg -x $f failed (a broken download? delete it and rerun)"
done

# Absolute links become relative ones inside the tree.
while IFS= read -r -d '' l; do
	t=$(readlink "$l")
	case "$t" in /*) ;; *) continue ;; esac
	ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$KROOT$t")" "$l"
done < <(find "$KROOT" -type l -print0)
KDIR=$KROOT/usr/src/linux-headers-$KVER
[ -f "$KDIR/Makefile" ] || die "linux-headers-$KVER has no Makefile"
# "include /usr/src/linux-headers-<flavour>-common/Makefile": the same
# directory's sibling, found from the Makefile's own place.
sed -i 's|^include /usr/src/\([^/]*\)/|include $(dir $(lastword $(MAKEFILE_LIST)))../\1/|' "$KDIR/Makefile"
if grep -rqs --include=Makefile -e '/usr/src/' -e '/usr/lib/linux-kbuild' "$KDIR" "$KDIR/../linux-headers-$FLAVOUR-common/Makefile"; then
	die "$KDIR still names /usr/src or /usr/lib/linux-kbuild after the rewrite"
fi
[ -d "$KDIR/scripts/" ] || die "$KDIR/scripts does not resolve inside the tree"
[ -f "$KDIR/.config" ] && [ -f "$KDIR/Module.symvers" ] || die "$KDIR lacks .config or Module.symvers"

VMLINUZ=$KROOT/boot/vmlinuz-$KVER
[ -f "$VMLINUZ" ] || die "linux-image-$KVER-unsigned has no boot/vmlinuz-$KVER"
# The package ships no modules.dep (postinst runs depmod).
depmod -b "$KROOT" "$KVER" || die "depmod on the unpacked kernel failed"
for m in vfio vfio_iommu_type1 mdev; do
	grep -q "/$m\.ko[^:]*:" "$KROOT/lib/modules/$KVER/modules.dep" ||
		die "kernel $KVER has no $m module"
done

cat > "$ENV.tmp" <<EOF
KVER=$KVER
PKGVER=$PKGVER
KDIR=$KDIR
VMLINUZ=$VMLINUZ
MODROOT=$KROOT
MODSRC=$DIR/modules
EOF
mv "$ENV.tmp" "$ENV"
touch "$DIR/$KVER/.extracted"
# Older kernels' trees and packages are not needed any more.
for d in "$DIR"/*/.extracted; do
	[ "$d" = "$DIR/$KVER/.extracted" ] || rm -rf "$(dirname "$d")"
done
for f in "$DEBS"/*.deb; do
	case "$f" in *"_${PKGVER//:/%3a}_"*) ;; *) rm -f "$f" ;; esac
done
say "$KVER ready: KDIR=$KDIR"
