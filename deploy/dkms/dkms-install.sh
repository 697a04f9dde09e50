#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Puts vgmem's module sources under /usr/src/vgmem-<version>/ and has DKMS
# build and install them for a kernel (default: the running one), so they
# are rebuilt for every kernel installed later (AUTOINSTALL).
#
#   deploy/dkms/dkms-install.sh [--kernel KVER] [--build-only] [--remove]
#
# Run from anywhere inside a vgmem checkout, as root. Needs dkms and the
# kernel's headers (Debian: apt-get install dkms linux-headers-amd64).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
name=vgmem
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$here/dkms.conf")
kver=$(uname -r)
mode=install

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kver=${2:?--kernel needs a version}; shift 2 ;;
	--build-only) mode=build; shift ;;
	--remove) mode=remove; shift ;;
	-h|--help) sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "dkms-install: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

[ "$(id -u)" -eq 0 ] || { echo "dkms-install: run as root" >&2; exit 1; }
command -v dkms > /dev/null || { echo "dkms-install: dkms is not installed" >&2; exit 1; }

if [ "$mode" = remove ]; then
	dkms remove -m "$name" -v "$version" --all || true
	rm -rf "/usr/src/$name-$version"
	exit 0
fi

# The source tree: exactly what host-module/Kbuild compiles (the .c and .h
# files under os/, core/ with its subfolder lrc/, sim/, linux/), no build
# products from a `make module` in the checkout.
src=/usr/src/$name-$version
if dkms status -m "$name" -v "$version" | grep -q .; then
	dkms remove -m "$name" -v "$version" --all
fi
rm -rf "$src"
mkdir -p "$src/host-module" "$src/include/uapi"
cp "$here/dkms.conf" "$src/"
cp "$top/host-module/Kbuild" "$src/host-module/"
(cd "$top/host-module" && find os core sim linux -name '*.[ch]' ! -name '*.mod.c' ! -name '.*' -print0 |
	xargs -0 cp --parents -t "$src/host-module")
cp "$top/include/uapi/"*.h "$src/include/uapi/"

dkms add -m "$name" -v "$version"
dkms build -m "$name" -v "$version" -k "$kver"
if [ "$mode" = install ]; then
	dkms install -m "$name" -v "$version" -k "$kver"
	echo "dkms-install: vgmem $version installed for $kver; load with: modprobe vgmem_sim"
else
	echo "dkms-install: vgmem $version built for $kver (not installed)"
fi
