#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The Debian packages of `make deb` (build/deb/*.deb), installed as an
# operator installs them: into a debootstrapped Debian 12 (minbase) root,
# with apt, so their Depends are resolved from the Debian mirror this
# machine's apt uses. It checks:
#  - DKMS built and installed vgmem.ko, vgmem_sim.ko and vgmem_guest.ko for
#    the kernel of the root's linux-headers-amd64 (Debian 12's, named by the
#    headers package, not the machine's running kernel), vermagic that one;
#  - the DKMS source trees are the modules' files in git;
#  - every file in its place: programs in /usr/bin and /usr/sbin, the unit
#    in /lib/systemd/system (not enabled), sysusers and tmpfiles entries,
#    /etc/vgmem/mgmtd.conf a conffile readable by group vgmem only, the
#    man pages, libvgmem's library, headers and pkg-config file;
#  - the user vgmem exists; vgmemctl, vgmem-nl and mgmtd answer --help; a
#    program built from the installed headers with pkg-config runs against
#    the installed libvgmem.so.0;
#  - lintian finds no error in the packages (its warnings are printed);
#  - purging the packages takes the modules out of DKMS and /lib/modules,
#    the sources out of /usr/src and the configuration out of /etc.
# `make deb-check` runs `make deb`, then this (make check's deb phase).
#
# The root: debootstrap --variant=minbase bookworm plus dkms, the headers,
# libc6-dev and pkg-config, the common layer of tests/deb/root.sh, made once
# and kept as build/debroot/common-KEY.tar.zst, KEY a hash of its inputs
# (suite, mirror, apt sources, packages, the recipe's version); each run
# unpacks it afresh, so no run sees another's packages. The .debs apt
# downloads are kept in build/debroot/archives/ for the next run and the
# walk. The root is removed after a pass and kept after a failure (or with
# KEEP_ROOT=1), in build/deb-root/root/.
#
# Needs root (debootstrap, chroot, mounts), debootstrap, lintian, zstd and
# the Debian mirror. Environment: MIRROR overrides the mirror read from
# /etc/apt/sources.list*. Prints "[  PASSED  ] N test(s)." like cmocka.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEBS=$ROOT/build/deb
C=$ROOT/build/deb-root
R=$C/root
SUITE=bookworm
# Nothing beyond the common layer (tests/deb/root.sh: dkms and the headers
# as an operator installs them; libc6-dev and pkg-config as a tenant's
# build image has them, for the libvgmem-dev check).
BASE_PKGS=
RECIPE=1
PATH=$PATH:/usr/sbin:/sbin
. "$ROOT/tests/lib/report.sh"

[ "$(id -u)" = 0 ] || die "runs as root" "debootstrap, chroot and mounts need root"
for c in debootstrap lintian zstd chroot; do
	command -v $c > /dev/null || die "$c is installed" "scripts/install-deps.sh installs it"
done
mapfile -t debs < <(ls "$DEBS"/*.deb 2>/dev/null | grep -v -- '-dbgsym_')
[ ${#debs[@]} -ge 6 ] || die "the packages are built" "only ${#debs[@]} .debs in $DEBS (make deb builds them)"
pkgs=$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done | sort | tr '\n' ' ')

cleanup() {
	root_umount_all
	if [ -d "$R" ] && [ "$failed" = 0 ] && [ -z "${KEEP_ROOT:-}" ]; then
		root_rm
	elif [ -d "$R" ]; then
		echo "test_deb: kept $R"
	fi
}
. "$ROOT/tests/deb/root.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM
root_base "$BASE_PKGS" "$RECIPE"
root_unpack
mkdir -p "$R/root/debs"
cp "${debs[@]}" "$R/root/debs/"
# No service is started in a chroot (there is no systemd running either).
printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"
chmod 0755 "$R/usr/sbin/policy-rc.d"
root_mount_all || die "mounting /proc, /sys, /dev, /run and /tmp in the root"

KVER=$(in_root "dpkg-query -W -f='\${Depends}' linux-headers-amd64" | sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')
# (Inside the root: the headers' build link is absolute.)
[ -n "$KVER" ] && in_root "test -f /lib/modules/$KVER/build/Makefile" ||
	die "the root has Debian 12's kernel headers" "linux-headers-amd64 names '$KVER', no /lib/modules/$KVER/build"

# ---- install ----------------------------------------------------------------------------
stamp "apt-get install $pkgs(log: ${C#$ROOT/}/install.log)"
ti=$(date +%s)
debs_in_root=$(for d in "${debs[@]}"; do printf '/root/debs/%s ' "${d##*/}"; done)
if in_root "apt-get update -qq && apt-get install -y --no-install-recommends $debs_in_root" > "$C/install.log" 2>&1; then
	ok "apt installed $pkgs with their Depends ($(( $(date +%s) - ti )) s)"
else
	root_save_archives
	die "apt-get install of the packages" "$(tail -n 25 "$C/install.log")"
fi
root_save_archives

# ---- DKMS ---------------------------------------------------------------------------------
st=$(in_root "dkms status" 2>&1)
errs=()
for m in vgmem:vgmem vgmem:vgmem_sim vgmem-guest:vgmem_guest; do
	name=${m%%:*} mod=${m#*:}
	grep -q "^$name/[^,]*, $KVER, x86_64: installed" <<<"$st" || errs+=("dkms status has no '$name ... $KVER: installed'")
	ko=$(ls "$R/lib/modules/$KVER/updates/dkms/$mod.ko"* 2>/dev/null | head -n 1)
	if [ -z "$ko" ]; then
		errs+=("no $mod.ko in /lib/modules/$KVER/updates/dkms/")
		continue
	fi
	vm=$(modinfo -F vermagic "$ko" 2>&1 | cut -d' ' -f1)
	[ "$vm" = "$KVER" ] || errs+=("$mod: vermagic '$vm', want '$KVER'")
done
if [ ${#errs[@]} = 0 ]; then
	ok "DKMS built and installed vgmem.ko, vgmem_sim.ko and vgmem_guest.ko for $KVER (linux-headers-amd64's), vermagic $KVER"
else
	not_ok "DKMS builds for $KVER" "${errs[@]}" "dkms status: $st" \
		"$(tail -n 20 "$R"/var/lib/dkms/vgmem*/*/build/make.log 2>/dev/null)"
fi

# ---- the files' places ------------------------------------------------------------------
LIB=/usr/lib/x86_64-linux-gnu
want=(/usr/sbin/mgmtd /usr/bin/vgmemctl /usr/sbin/vgmem-nl
	/lib/systemd/system/vgmem-mgmtd.service /usr/lib/sysusers.d/vgmem.conf
	/usr/lib/tmpfiles.d/vgmem.conf /etc/vgmem/mgmtd.conf /etc/modprobe.d/vgmem.conf
	/lib/udev/rules.d/61-vgmem-mdevctl.rules
	/usr/share/man/man8/mgmtd.8.gz /usr/share/man/man5/mgmtd.conf.5.gz
	/usr/share/man/man8/vgmemctl.8.gz /usr/share/man/man8/vgmem-nl.8.gz /usr/share/man/man4/vgmem.4.gz
	$LIB/libvgmem.so.0 $LIB/libvgmem.so /usr/include/vgmem/libvgmem.h
	/usr/include/vgmem/uapi/vgmem.h /usr/include/vgmem/uapi/vgmem_guest.h
	$LIB/pkgconfig/libvgmem.pc
	/usr/src/vgmem-0.1.0/dkms.conf /usr/src/vgmem-guest-0.1.0/dkms.conf
	/usr/share/doc/vgmem-mgmtd/examples/vgmem-domain.xml)
missing=()
for f in "${want[@]}"; do [ -e "$R$f" ] || missing+=("$f"); done
[ -x "$R/usr/sbin/mgmtd" ] && [ -x "$R/usr/bin/vgmemctl" ] && [ -x "$R/usr/sbin/vgmem-nl" ] ||
	missing+=("a program is not executable")
if [ ${#missing[@]} = 0 ]; then
	ok "the ${#want[@]} files are in their places (programs, unit, sysusers, tmpfiles, config, man pages, library, headers, pkg-config, DKMS sources)"
else
	not_ok "the files' places" "missing: ${missing[*]}"
fi

# The DKMS source trees are exactly the modules' files in git, as
# tests/dkms/test_dkms.sh requires of deploy/dkms/dkms-install.sh's.
errs=()
for t in "vgmem:host-module:^host-module/user/" "vgmem-guest:guest-driver/kernel:^$"; do
	IFS=: read -r name dir skip <<<"$t"
	want_src=$(cd "$ROOT" && { git ls-files "$dir" include/uapi | grep -v "$skip"; echo dkms.conf; } | sort)
	got_src=$(cd "$R/usr/src/$name-0.1.0" 2>/dev/null && find . -type f | sed 's|^\./||' | sort)
	[ -n "$want_src" ] && [ "$want_src" = "$got_src" ] ||
		errs+=("/usr/src/$name-0.1.0 is not $dir's files in git:" \
			"$(diff <(echo "$want_src") <(echo "$got_src") | grep '^[<>]' | head -n 10)")
done
if [ ${#errs[@]} = 0 ]; then
	ok "/usr/src/vgmem-0.1.0 and /usr/src/vgmem-guest-0.1.0 hold exactly the modules' files in git and dkms.conf"
else
	not_ok "the DKMS source trees" "${errs[@]}"
fi

errs=()
conf=$(in_root "dpkg-query -W -f='\${Conffiles}\n' vgmem-mgmtd vgmem-dkms")
grep -q '^ /etc/vgmem/mgmtd.conf ' <<<"$conf" || errs+=("/etc/vgmem/mgmtd.conf is not a conffile: $conf")
grep -q '^ /etc/modprobe.d/vgmem.conf ' <<<"$conf" || errs+=("/etc/modprobe.d/vgmem.conf is not a conffile: $conf")
in_root "getent passwd vgmem" | grep -q '^vgmem:.*:/var/lib/vgmem:/usr/sbin/nologin$' || errs+=("no system user vgmem (sysusers)")
perm=$(in_root "stat -c '%a %U %G' /etc/vgmem /etc/vgmem/mgmtd.conf" | tr '\n' ' ')
[ "$perm" = "750 root vgmem 640 root vgmem " ] || errs+=("/etc/vgmem, mgmtd.conf: '$perm', want 750 and 640, root:vgmem (tmpfiles)")
exec_line=$(grep '^ExecStart=' "$R/lib/systemd/system/vgmem-mgmtd.service")
[ "$exec_line" = "ExecStart=/usr/sbin/mgmtd --config /etc/vgmem/mgmtd.conf" ] || errs+=("unit: '$exec_line'")
ls "$R"/etc/systemd/system/*.wants/vgmem-mgmtd.service > /dev/null 2>&1 && errs+=("the unit was enabled on install")
if [ ${#errs[@]} = 0 ]; then
	ok "mgmtd.conf and modprobe.d/vgmem.conf are conffiles; user vgmem exists; /etc/vgmem is root:vgmem 0750, mgmtd.conf 0640; the unit runs /usr/sbin/mgmtd and is not enabled"
else
	not_ok "mgmtd's configuration, user and unit" "${errs[@]}"
fi

# ---- the programs run ---------------------------------------------------------------------
errs=()
for p in vgmemctl vgmem-nl mgmtd; do
	out=$(in_root "$p --help" 2>&1) || errs+=("$p --help: exit $?: $(head -n 3 <<<"$out")")
	grep -qi 'usage' <<<"$out" || errs+=("$p --help printed no usage: $(head -n 3 <<<"$out")")
done
if [ ${#errs[@]} = 0 ]; then
	ok "vgmemctl, vgmem-nl and mgmtd --help run in the root (their shared libraries resolved)"
else
	not_ok "the programs run" "${errs[@]}"
fi

# A tenant's program from the installed headers, through pkg-config (ldd
# may name the library by /lib, merged with /usr/lib on Debian 12).
cat > "$R/root/prog.c" <<'EOF'
#include <stdio.h>
#include <libvgmem.h>

int main(void)
{
	printf("%s\n", vgmem_workload_name(VGMEM_WL_STREAM));
	return 0;
}
EOF
out=$(in_root 'cd /root && gcc -Wall -Werror $(pkg-config --cflags libvgmem) prog.c $(pkg-config --libs libvgmem) -o prog && ./prog && ldd ./prog' 2>&1)
rc=$?
if [ $rc = 0 ] && grep -Eq "libvgmem.so.0 => (/usr)?/lib/x86_64-linux-gnu/libvgmem.so.0 " <<<"$out" && [ -n "$(head -n 1 <<<"$out")" ]; then
	ok "a program of <libvgmem.h> builds with pkg-config libvgmem and runs against $LIB/libvgmem.so.0 ($(head -n 1 <<<"$out"))"
else
	not_ok "a program against libvgmem-dev" "exit $rc" "$out"
fi

# ---- lintian --------------------------------------------------------------------------
changes=$(ls "$DEBS"/*.changes 2>/dev/null | head -n 1)
# Exit 0: no error (lintian's --fail-on default); 1: errors; 2: it failed.
lint=$(lintian --tag-display-limit 0 --display-info ${changes:+"$changes"} 2>&1)
lrc=$?
lerr=$(grep '^E: ' <<<"$lint")
lwarn=$(grep '^W: ' <<<"$lint")
if [ $lrc = 0 ] && [ -z "$lerr" ] && [ -n "$changes" ]; then
	linfo=$(grep '^I: ' <<<"$lint")
	below=${lwarn}${linfo}
	ok "lintian: no error in the packages ($(grep -c . <<<"$lwarn") warnings, $(grep -c . <<<"$linfo") notes${below:+, below})"
	[ -z "$lwarn$linfo" ] || grep -E '^(W|I): ' <<<"$lint" | sed 's/^/    /'
else
	not_ok "lintian finds no error" "exit $lrc" "${lerr:-${changes:-no .changes in $DEBS}}" "$lwarn" \
		"$(grep -v '^[EWI]: ' <<<"$lint" | head -n 10)"
fi

# ---- purge --------------------------------------------------------------------------------
if in_root "apt-get purge -y $pkgs" > "$C/purge.log" 2>&1; then
	errs=()
	st=$(in_root "dkms status" 2>&1)
	grep -q '^vgmem' <<<"$st" && errs+=("dkms status still lists: $st")
	left=$(ls -d "$R"/lib/modules/*/updates/dkms/vgmem*.ko* "$R"/usr/src/vgmem-* "$R"/var/lib/dkms/vgmem* \
		"$R"/etc/vgmem "$R"/etc/modprobe.d/vgmem.conf "$R"/usr/sbin/mgmtd 2>/dev/null)
	[ -z "$left" ] || errs+=("left behind: $(tr '\n' ' ' <<<"$left")")
	if [ ${#errs[@]} = 0 ]; then
		ok "apt-get purge removed the modules from DKMS and /lib/modules/$KVER, the sources, /etc/vgmem and the programs"
	else
		not_ok "purging the packages" "${errs[@]}"
	fi
else
	not_ok "apt-get purge $pkgs" "$(tail -n 15 "$C/purge.log")"
fi

stamp "done"
finish
