#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Puts vgmem's module sources under /usr/src/vgmem-<version>/ and has DKMS
# build and install them for a kernel (default: the running one), so they
# are rebuilt for every kernel installed later (AUTOINSTALL).
#
# Usage: deploy/dkms/dkms-install.sh [--kernel KVER] [--kernel-source DIR]
#                                    [--tree DIR] [--build-only] [--remove]
#   --kernel KVER        the kernel to build for (default: the running one,
#                        or the one whose headers --kernel-source names)
#   --kernel-source DIR  that kernel's headers (a tree with its Makefile and
#                        .config) when they are not at /lib/modules/KVER/build,
#                        e.g. a second kernel's headers unpacked elsewhere;
#                        passed to DKMS as --kernelsourcedir
#   --tree DIR           a private DKMS tree: sources in DIR/src, DKMS's state
#                        and builds in DIR/dkms, its signing key in DIR/mok.*;
#                        /usr/src, /var/lib/dkms and /lib/modules are left
#                        alone and root is not needed. Only with --build-only
#                        or --remove
#   --build-only         build, do not install (the modules stay in DKMS's
#                        tree: DIR/dkms/vgmem/<version>/KVER/<arch>/module/)
#   --remove             dkms remove --all, then delete the sources
#
# Run from anywhere inside a vgmem checkout, as root unless --tree. Needs
# dkms and the kernel's headers (Debian: apt-get install dkms
# linux-headers-amd64). Running it again for another kernel keeps the builds
# for the kernels done before, unless the sources changed.
# Exit: 0 done, 1 failed, 2 bad arguments.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
name=vgmem
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$here/dkms.conf")
kver=
ksrc=
tree=
mode=install

usage() { sed -n 's/^# \{0,1\}//; /^Usage:/,/^Exit:/p' "$0"; }
die() { echo "dkms-install: $*" >&2; exit 1; }
bad_arg() { echo "dkms-install: $* (--help lists the options)" >&2; exit 2; }
# An option's value: present, and not the next option.
optval() {
	[ $# -ge 2 ] && [ -n "$2" ] && [ "${2#--}" = "$2" ] || bad_arg "$1 needs a value"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) optval "$@"; kver=$2; shift 2 ;;
	--kernel-source) optval "$@"; ksrc=$2; shift 2 ;;
	--tree) optval "$@"; tree=$2; shift 2 ;;
	--build-only) mode=build; shift ;;
	--remove) mode=remove; shift ;;
	-h|--help) usage; exit 0 ;;
	*) bad_arg "unknown argument '$1'" ;;
	esac
done
# A private tree is for building (a test, a second kernel's modules to
# inspect): an install would write /lib/modules after all.
[ -z "$tree" ] || [ "$mode" != install ] ||
	bad_arg "--tree needs --build-only or --remove (an install writes /lib/modules)"

PATH=$PATH:/usr/sbin:/sbin	# dkms lives in sbin, which a user's PATH may lack
command -v dkms > /dev/null || die "dkms is not installed (apt-get install dkms)"

# DKMS's trees: the system's, or the private one. dkms 3.0.10 takes the
# signing key's place only from /etc/dkms/framework.conf or, as those two
# variables are never set otherwise, from the environment; without them it
# would make /var/lib/dkms/mok.key for a private build too.
dkms_opts=()
if [ -n "$tree" ]; then
	mkdir -p "$tree/src" "$tree/dkms"
	tree=$(cd "$tree" && pwd)
	dkms_opts=(--dkmstree "$tree/dkms" --sourcetree "$tree/src")
	export mok_signing_key=$tree/mok.key mok_certificate=$tree/mok.pub
	srcroot=$tree/src
else
	[ "$(id -u)" -eq 0 ] || die "run as root (or build in a private tree: --tree DIR --build-only)"
	srcroot=/usr/src
fi
src=$srcroot/$name-$version

if [ "$mode" = remove ]; then
	dkms remove -m "$name" -v "$version" --all "${dkms_opts[@]}" || true
	rm -rf "$src"
	exit 0
fi

# The kernel and its headers. The headers' UTS_RELEASE is what the modules'
# vermagic will say, so a --kernel that names another kernel than the
# headers are for is refused: DKMS would file modules that kernel refuses
# under its name.
ksrc_given=$ksrc
if [ -z "$ksrc" ]; then
	kver=${kver:-$(uname -r)}
	ksrc=/lib/modules/$kver/build
	[ -f "$ksrc/Makefile" ] ||
		die "no headers for $kver at $ksrc: install linux-headers-$kver, or name them with --kernel-source DIR"
else
	[ -d "$ksrc" ] || die "--kernel-source $ksrc: no such directory"
	ksrc=$(cd "$ksrc" && pwd)
	[ -f "$ksrc/Makefile" ] && [ -f "$ksrc/.config" ] ||
		die "--kernel-source $ksrc: not a kernel build tree (no Makefile or .config)"
fi
uts=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$ksrc/include/generated/utsrelease.h" 2>/dev/null || true)
[ -n "$uts" ] || die "$ksrc has no include/generated/utsrelease.h: not a prepared kernel tree"
kver=${kver:-$uts}
[ "$kver" = "$uts" ] || die "$ksrc holds the headers of $uts, not of $kver"

# DKMS signs with the sign-file of the kernel's linux-kbuild package
# (/usr/lib/linux-kbuild-X.Y), else /lib/modules/KVER/build's: for headers
# elsewhere neither exists and the modules would go unsigned, so point it at
# theirs (the environment again; framework.conf still wins).
if [ -n "$ksrc_given" ] && [ -z "${sign_file:-}" ] && [ -x "$ksrc/scripts/sign-file" ]; then
	export sign_file=$ksrc/scripts/sign-file
fi
dkms_k=(-k "$kver" --kernelsourcedir "$ksrc")

# The source tree: what host-module/Kbuild compiles (Kbuild and the .c/.h
# under os/, core/ with core/lrc/, sim/, linux/) and include/uapi, no build
# products from a `make module` in the checkout. Staged first: if the tree
# DKMS has is the same, it stays, and so do its builds for other kernels.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/host-module" "$stage/include/uapi"
cp "$here/dkms.conf" "$stage/"
cp "$top/host-module/Kbuild" "$stage/host-module/"
(cd "$top/host-module" && find os core sim linux -name '*.[ch]' ! -name '*.mod.c' ! -name '.*' -print0 |
	xargs -0 cp --parents -t "$stage/host-module")
cp "$top/include/uapi/"*.h "$stage/include/uapi/"

# (Asked into a variable: grep -q in a pipe may end dkms with SIGPIPE, which
# pipefail would take for "not added".)
added=$(dkms status -m "$name" -v "$version" "${dkms_opts[@]}")
if [ -n "$added" ] && diff -r -q "$stage" "$src" > /dev/null 2>&1; then
	echo "dkms-install: $name $version already added with these sources"
else
	if [ -n "$added" ]; then
		echo "dkms-install: the sources changed: removing $name $version for every kernel"
		dkms remove -m "$name" -v "$version" --all "${dkms_opts[@]}"
	fi
	rm -rf "$src"
	mkdir -p "$srcroot"
	cp -a "$stage" "$src"
	chmod 755 "$src"	# mktemp's 0700: the sources are readable to all, as DKMS's are
	dkms add -m "$name" -v "$version" "${dkms_opts[@]}"
fi

# --force: a kernel built for before is built again, from these sources.
dkms build -m "$name" -v "$version" "${dkms_k[@]}" --force "${dkms_opts[@]}"
if [ "$mode" = install ]; then
	dkms install -m "$name" -v "$version" "${dkms_k[@]}" --force "${dkms_opts[@]}"
	echo "dkms-install: vgmem $version installed for $kver; load with: modprobe vgmem_sim"
else
	echo "dkms-install: vgmem $version built for $kver (not installed): $(dkms status -m "$name" -v "$version" -k "$kver" "${dkms_opts[@]}")"
fi
