#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Builds the test VM's initramfs (cpio newc, gzip): busybox-static, the stock
# vfio/vfio_iommu_type1/mdev modules with their dependencies (uncompressed:
# busybox's modprobe reads plain .ko files only), our modules (host-module/*.ko,
# or those built for the kernel kernel.env names, in
# /lib/modules/<kver>/extra so modprobe finds them), the
# static test programs in build/vm/bin/, build/bin/{mgmtd,vgmemctl} with their
# shared libraries, tests/vm/{init,lib.sh,cases/}.
#
# Usage: mkinitramfs.sh [OUTPUT]   (default build/vm/initramfs.cpio.gz)
# Needs build/vm/kernel.env from fetch-kernel.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
OUT=${1:-$VM_BUILD/initramfs.cpio.gz}
HERE=$ROOT/tests/vm

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[ -f "$VM_BUILD/kernel.env" ] || die "no $VM_BUILD/kernel.env: run tests/vm/fetch-kernel.sh"
# shellcheck source=/dev/null
. "$VM_BUILD/kernel.env"
# shellcheck source=stage-lib.sh
. "$HERE/stage-lib.sh"
KMODS=$MODROOT/lib/modules/$KVER
[ -f "$KMODS/modules.dep" ] || die "no modules.dep in $KMODS: rerun fetch-kernel.sh"

BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] || die "busybox not found (apt-get install busybox-static)"
# A dynamic executable names its loader in a PT_INTERP header.
is_static() { ! readelf -lW "$1" 2>/dev/null | grep -q 'program interpreter'; }
BUSYBOX=$(readlink -f "$BUSYBOX")
is_static "$BUSYBOX" || die "$BUSYBOX is not static (apt-get install busybox-static)"

shopt -s nullglob
MODDIR=${MODDIR:-$ROOT/host-module}
OUR_MODS=("$MODDIR"/*.ko)
[ ${#OUR_MODS[@]} -gt 0 ] || die "no $MODDIR/*.ko: run 'make module' (or 'make module-6.12')"

STAGE=$VM_BUILD/initramfs
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc}
mkdir -p "$STAGE/vmtest/bin" "$STAGE/vmtest/cases"

# busybox and one symlink per applet.
cp "$BUSYBOX" "$STAGE/bin/busybox"
for applet in $("$BUSYBOX" --list); do
	[ "$applet" = busybox ] && continue
	ln -sf busybox "$STAGE/bin/$applet"
done

# Stock modules: the closure, over the kernel's modules.dep, of what the tests
# load and what our modules depend on (modinfo depends).
wanted=(vfio vfio_iommu_type1 mdev)
for ko in "${OUR_MODS[@]}"; do
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	for d in $deps; do wanted+=("$d"); done
done
ours=" $(for ko in "${OUR_MODS[@]}"; do basename "$ko" .ko; done | tr '\n' ' ') "

declare -A seen=()
add_stock() {	# $1: path relative to $KMODS, e.g. kernel/drivers/vfio/vfio.ko(.xz)
	local rel=$1 dep
	[ -n "${seen[$rel]:-}" ] && return 0
	seen[$rel]=1
	mkdir -p "$STAGE/lib/modules/$KVER/$(dirname "$rel")"
	case "$rel" in
	*.ko.xz) xz -dc "$KMODS/$rel" > "$STAGE/lib/modules/$KVER/${rel%.xz}" ;;
	*) cp "$KMODS/$rel" "$STAGE/lib/modules/$KVER/$rel" ;;
	esac
	for dep in $(grep "^$rel:" "$KMODS/modules.dep" | cut -d: -f2); do
		add_stock "$dep"
	done
}
for m in "${wanted[@]}"; do
	# modules.dep names files with '-' or '_' as built; modinfo uses '_'.
	[[ "$ours" == *" $m "* ]] && continue
	pat=$(sed 's/[-_]/[-_]/g' <<<"$m")
	rel=$(grep -oE "^[^:]*/$pat\.ko(\.xz)?:" "$KMODS/modules.dep" | head -n1 || true)
	rel=${rel%:}
	if [ -z "$rel" ]; then
		grep -qE "/$pat\.ko$" "$KMODS/modules.builtin" 2>/dev/null && continue
		die "module $m is neither in $KVER's modules.dep nor built in"
	fi
	add_stock "$rel"
done
cp "$KMODS"/modules.{builtin,builtin.modinfo,order} "$STAGE/lib/modules/$KVER/"

# Our modules, without debug info (symbols stay for stack traces).
mkdir -p "$STAGE/lib/modules/$KVER/extra"
for ko in "${OUR_MODS[@]}"; do
	vermagic=$(modinfo -F vermagic "$ko")
	[[ "$vermagic" == "$KVER "* ]] ||
		die "$(basename "$ko") is built for '$vermagic', the VM runs $KVER"
	strip --strip-debug -o "$STAGE/lib/modules/$KVER/extra/$(basename "$ko")" "$ko"
done
depmod -b "$STAGE" "$KVER" || die "depmod on the initramfs failed"

# Test programs: static, since the initramfs has no libc.
for b in "$VM_BUILD"/bin/*; do
	[ -x "$b" ] || continue
	if ! is_static "$b"; then
		die "$b is dynamically linked; build it with -static (make vm-bins)"
	fi
	cp "$b" "$STAGE/vmtest/bin/"
done

# mgmtd and vgmemctl (88-mgmtd): the only dynamic programs in the VM, so
# with them go the shared libraries ldd names (at the paths it names) and
# the dynamic loader. Absent binaries are left out (the case skips).
dyn=()
for b in "$ROOT/build/bin/mgmtd" "$ROOT/build/bin/vgmemctl"; do
	[ -x "$b" ] || continue
	cp "$b" "$STAGE/vmtest/bin/"
	dyn+=("$b")
done
mapfile -t dyn_libs < <(ldd_libs ${dyn[@]+"${dyn[@]}"})
for lib in ${dyn_libs[@]+"${dyn_libs[@]}"}; do
	mkdir -p "$STAGE$(dirname "$lib")"
	cp -L "$lib" "$STAGE$lib"
done

cp "$HERE/init" "$STAGE/init"
chmod 755 "$STAGE/init"
cp "$HERE/lib.sh" "$HERE/l2.sh" "$HERE/bad-patterns.txt" "$STAGE/vmtest/"
cp "$HERE"/cases/*.sh "$STAGE/vmtest/cases/" 2>/dev/null || true
echo "root:x:0:0:root:/root:/bin/sh" > "$STAGE/etc/passwd"
echo "root:x:0:" > "$STAGE/etc/group"

# The kernel opens /dev/console before /init mounts devtmpfs; without the node
# early messages from init are lost. Only root can make it; /init reopens the
# console after mounting devtmpfs anyway.
if [ "$(id -u)" = 0 ]; then
	mknod -m 600 "$STAGE/dev/console" c 5 1
fi

mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "mkinitramfs: $OUT ($(du -h "$OUT" | cut -f1)): ${#seen[@]} stock modules," \
	"$(basename -a "${OUR_MODS[@]}" | tr '\n' ' ')$(ls "$STAGE/vmtest/bin" | tr '\n' ' ')" \
	"(${#dyn_libs[@]} shared libraries for the dynamic ones)"
