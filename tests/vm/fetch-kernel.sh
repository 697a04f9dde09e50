#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Fetches the Debian kernel image that matches the installed linux-headers-amd64
# (the headers `make module` builds against), so the VM runs exactly the kernel
# our modules were built for. Never hard-codes a version: it reads the ABI name
# (e.g. 6.1.0-56-amd64) and package version from linux-headers-amd64's Depends.
#
# Cached: the .deb stays in build/vm/cache/, the extracted tree in
# build/vm/kernel/<kver>/; both are skipped when present. Writes
# build/vm/kernel.env (KVER, VMLINUZ, MODROOT, and MODDIR and GUEST_MODDIR:
# where our modules built for it are) for mkinitramfs.sh, mkl2.sh and run.sh.
#
# VM_KERNEL=6.12 takes the 6.12 kernel of bookworm-backports instead, which
# scripts/fetch-kernel-6.12.sh fetches with its headers (`make module-6.12`
# builds our modules for it, in a tree of its own).
#
# Environment: VM_KERNEL (empty or 6.1: the installed headers' kernel; 6.12),
# VM_KVER overrides the ABI name (e.g. 6.1.0-56-amd64);
# VM_BUILD overrides build/vm.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
CACHE=$VM_BUILD/cache

die() { echo "fetch-kernel: $*" >&2; exit 1; }

case "${VM_KERNEL:-}" in
""|6.1) ;;
6.12)
	"$ROOT/scripts/fetch-kernel-6.12.sh"
	# shellcheck source=/dev/null
	. "$ROOT/build/kernel-6.12/kernel.env"
	mkdir -p "$VM_BUILD"
	cat > "$VM_BUILD/kernel.env" <<-EOF
	KVER=$KVER
	VMLINUZ=$VMLINUZ
	MODROOT=$MODROOT
	MODDIR=$MODSRC/host-module
	GUEST_MODDIR=$MODSRC/guest-driver/kernel
	EOF
	exit 0 ;;
*) die "VM_KERNEL=$VM_KERNEL: known kernels are 6.1 (the default) and 6.12" ;;
esac

# "linux-headers-6.1.0-56-amd64 (= 6.1.192-2)" -> kver + package version.
deps=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null) ||
	die "linux-headers-amd64 is not installed (run scripts/install-deps.sh as root)"
KVER=${VM_KVER:-$(sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p' <<<"$deps")}
PKGVER=$(sed -n 's/^linux-headers-[^ ,]* (= \([^)]*\)).*/\1/p' <<<"$deps")
[ -n "$KVER" ] || die "cannot read the kernel version from linux-headers-amd64 ('$deps')"
[ -n "${VM_KVER:-}" ] && PKGVER=	# an override names its own kernel

KDIR=$VM_BUILD/kernel/$KVER
MODROOT=$KDIR/root		# dpkg -x target: boot/, lib/modules/$KVER/
VMLINUZ=$MODROOT/boot/vmlinuz-$KVER
STAMP=$KDIR/.extracted

write_env() {
	cat > "$VM_BUILD/kernel.env" <<-EOF
	KVER=$KVER
	VMLINUZ=$VMLINUZ
	MODROOT=$MODROOT
	MODDIR=$ROOT/host-module
	GUEST_MODDIR=$ROOT/guest-driver/kernel
	EOF
}

if [ -f "$STAMP" ] && [ -f "$VMLINUZ" ]; then
	write_env
	echo "fetch-kernel: $KVER cached in $KDIR"
	exit 0
fi

mkdir -p "$CACHE"

# Debian ships the kernel as linux-image-<kver>-unsigned (the plain build) and
# linux-image-<kver> (signed for Secure Boot); either holds what we need.
find_deb() {
	ls "$CACHE"/linux-image-"$KVER"{-unsigned,}_*_amd64.deb 2>/dev/null | head -n1 || true
}

download() {
	local pkg spec
	for pkg in "linux-image-$KVER-unsigned" "linux-image-$KVER"; do
		for spec in ${PKGVER:+"$pkg=$PKGVER"} "$pkg"; do
			# apt-get download writes into the current directory. As root
			# it warns that _apt cannot write there; harmless.
			(cd "$CACHE" && apt-get download -q "$spec" 2>&1 |
				grep -v 'unsandboxed' >&2) || true
			[ -n "$(find_deb)" ] && return 0
		done
	done
	return 1
}

deb=$(find_deb)
if [ -z "$deb" ]; then
	echo "fetch-kernel: downloading linux-image-$KVER${PKGVER:+ ($PKGVER)} into $CACHE"
	if ! download; then
		# A fresh machine may have stale or no package lists.
		if [ "$(id -u)" = 0 ]; then
			echo "fetch-kernel: retrying after apt-get update"
			apt-get update -qq || true
			download || true
		fi
	fi
	deb=$(find_deb)
	[ -n "$deb" ] || die "could not download linux-image-$KVER(-unsigned)${PKGVER:+ version $PKGVER}
  from the configured Debian mirrors. Check network access to deb.debian.org /
  security.debian.org and 'apt-cache policy linux-image-$KVER-unsigned', or put
  the .deb into $CACHE by hand."
fi

echo "fetch-kernel: extracting $(basename "$deb")"
rm -rf "$KDIR"
mkdir -p "$MODROOT"
dpkg -x "$deb" "$MODROOT" || die "dpkg -x $deb failed (corrupt download? delete it and rerun)"
[ -f "$VMLINUZ" ] || die "$deb has no boot/vmlinuz-$KVER"
[ -d "$MODROOT/lib/modules/$KVER" ] || die "$deb has no lib/modules/$KVER"

# The package ships no modules.dep (postinst runs depmod); make one so the
# initramfs can take each module with exactly its dependencies.
depmod -b "$MODROOT" "$KVER" || die "depmod on the extracted kernel failed"

for m in vfio vfio_iommu_type1 mdev; do
	grep -q "/$m\.ko:" "$MODROOT/lib/modules/$KVER/modules.dep" ||
		die "kernel $KVER has no $m module"
done

touch "$STAMP"
write_env
echo "fetch-kernel: $KVER ready in $KDIR"
