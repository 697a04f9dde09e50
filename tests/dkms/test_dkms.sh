#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The modules build through DKMS, as an operator builds them, for both
# kernels vgmem runs on: Debian 12's 6.1 (linux-headers-amd64, at
# /lib/modules/KVER/build) and 6.12 from bookworm-backports (headers
# unpacked under build/kernel-6.12/ by scripts/fetch-kernel-6.12.sh, so
# given with --kernel-source). Everything goes through
# deploy/dkms/dkms-install.sh --tree: a private DKMS tree in
# build/dkms-test/, never the system's /usr/src or /var/lib/dkms (checked).
# It checks:
#  - a missing or mismatched kernel source is refused before DKMS runs,
#    with a message naming it, exit 1, and nothing added to the tree;
#  - dkms add + build for 6.1, then for 6.12 into the same tree (the 6.1
#    build stays), each giving vgmem.ko and vgmem_sim.ko whose vermagic is
#    that kernel's, signed by DKMS's key, with no warning in DKMS's make.log;
#  - the sources DKMS got are exactly the module's files in git (no build
#    products of a `make module`, no folder Kbuild compiles left out);
#  - --remove empties the tree.
# `make dkms-check` runs it (make check's dkms phase): 1.5 minutes on 2
# cores, as DKMS builds both modules from scratch for each kernel.
#
# Environment: KVER and KDIR name the 6.1 headers (the Makefile passes its
# own; default: linux-headers-amd64's). build/dkms-test/ is removed after a
# pass, kept after a failure (DKMS's logs) or with KEEP_TREE=1.
# Prints "[  PASSED  ] N test(s)." like cmocka.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
INSTALL=$ROOT/deploy/dkms/dkms-install.sh
T=$ROOT/build/dkms-test
NAME=vgmem
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$ROOT/deploy/dkms/dkms.conf")
ARCH=$(uname -m)
PATH=$PATH:/usr/sbin:/sbin	# dkms and modinfo live in sbin
# DKMS runs its own make -jN: make check's jobserver must not reach it.
unset MAKEFLAGS MAKELEVEL MFLAGS

. "$ROOT/tests/lib/report.sh"
dkms_status() { dkms status -m "$NAME" -v "$VERSION" --dkmstree "$T/dkms" --sourcetree "$T/src" 2>&1; }
# What the system's DKMS and source trees hold: must not change.
system_trees() { ls -A /var/lib/dkms /usr/src 2>/dev/null; }

# ---- the two kernels -------------------------------------------------------------
KVER=${KVER:-$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')}
KDIR=${KDIR:-/lib/modules/$KVER/build}
if ! command -v dkms > /dev/null; then
	not_ok "dkms is installed" "no dkms in PATH (scripts/install-deps.sh installs it)"
	finish
fi
if [ -z "$KVER" ] || [ ! -f "$KDIR/Makefile" ]; then
	not_ok "the 6.1 headers are there" "none for '$KVER' at '$KDIR' (scripts/install-deps.sh installs linux-headers-amd64)"
	finish
fi
if ! "$ROOT/scripts/fetch-kernel-6.12.sh" --quiet; then
	not_ok "the 6.12 headers are there" "scripts/fetch-kernel-6.12.sh failed"
	finish
fi
# Read, not sourced: kernel.env's KVER and KDIR would replace 6.1's.
K612_VER=$(sed -n 's/^KVER=//p' "$ROOT/build/kernel-6.12/kernel.env")
K612_DIR=$(sed -n 's/^KDIR=//p' "$ROOT/build/kernel-6.12/kernel.env")

rm -rf "$T"
mkdir -p "$T/logs"
trap 'if [ "$failed" = 0 ] && [ -z "${KEEP_TREE:-}" ]; then rm -rf "$T"; else echo "test_dkms: kept $T"; fi' EXIT
before=$(system_trees)

# ---- refused before DKMS runs ----------------------------------------------------
out=$("$INSTALL" --tree "$T" --build-only --kernel-source "$T/no-such-headers" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q "no-such-headers" <<<"$out" && [ -z "$(dkms_status)" ]; then
	ok "a missing --kernel-source fails with exit 1 naming it, nothing added: $out"
else
	not_ok "a missing --kernel-source" "exit $rc, want 1 and a message naming the directory" \
		"output: $out" "dkms status: $(dkms_status)"
fi
out=$("$INSTALL" --tree "$T" --build-only --kernel "$KVER" --kernel-source "$K612_DIR" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q "headers of $K612_VER, not of $KVER" <<<"$out" && [ -z "$(dkms_status)" ]; then
	ok "--kernel $KVER with 6.12's headers is refused: modules with another vermagic would be filed under $KVER"
else
	not_ok "a --kernel that is not the headers' kernel" "exit $rc, want 1 naming both kernels" \
		"output: $out" "dkms status: $(dkms_status)"
fi

# ---- builds ------------------------------------------------------------------------
# build KVER LABEL ARGS...: dkms-install.sh into the tree, then the modules.
build() {
	local kver=$1 label=$2 t0 rc m f vm signer ko errs=()
	shift 2
	t0=$(date +%s)
	"$INSTALL" --tree "$T" --build-only "$@" > "$T/logs/$label.log" 2>&1; rc=$?
	local secs=$(( $(date +%s) - t0 ))
	local base=$T/dkms/$NAME/$VERSION/$kver/$ARCH
	if [ $rc != 0 ]; then
		not_ok "DKMS build for $label ($kver)" "dkms-install.sh $* exit $rc:" \
			"$(tail -n 15 "$T/logs/$label.log")" \
			"$(tail -n 30 "$T/dkms/$NAME/$VERSION/build/make.log" 2>/dev/null)"
		return
	fi
	for m in vgmem vgmem_sim; do
		# DKMS compresses the modules as the kernel's own are, if they are.
		ko=("$base/module/$m.ko"*)
		f=${ko[0]}
		if [ ! -f "$f" ]; then
			errs+=("no $m.ko in $base/module/ (has: $(ls "$base/module" 2>&1 | tr '\n' ' '))")
			continue
		fi
		vm=$(modinfo -F vermagic "$f" 2>&1 | cut -d' ' -f1)
		[ "$vm" = "$kver" ] || errs+=("$m: vermagic '$vm', want '$kver'")
		signer=$(modinfo -F signer "$f" 2>&1)
		[ "$signer" = "DKMS module signing key" ] ||
			errs+=("$m: signer '$signer', want DKMS's key (its sign-file for this kernel not found?)")
	done
	grep -qi warning "$base/log/make.log" 2>/dev/null &&
		errs+=("DKMS's make.log has warnings:" "$(grep -i warning "$base/log/make.log")")
	if [ ${#errs[@]} = 0 ]; then
		ok "DKMS built vgmem.ko and vgmem_sim.ko for $label: vermagic $kver, signed, no warning ($secs s)"
	else
		not_ok "DKMS build for $label ($kver)" "${errs[@]}"
	fi
}

# 6.1 where an operator's headers are, 6.12 from headers elsewhere (its
# kernel taken from them).
if [ "$KDIR" -ef "/lib/modules/$KVER/build" ]; then
	build "$KVER" 6.1 --kernel "$KVER"
else
	build "$KVER" 6.1 --kernel "$KVER" --kernel-source "$KDIR"
fi
build "$K612_VER" 6.12 --kernel-source "$K612_DIR"

st=$(dkms_status)
if grep -q "^$NAME/$VERSION, $KVER, $ARCH: built" <<<"$st" &&
	grep -q "^$NAME/$VERSION, $K612_VER, $ARCH: built" <<<"$st"; then
	ok "one tree holds the builds for both kernels (the second run kept the first)"
else
	not_ok "dkms status lists both kernels built" "dkms status: $st"
fi

# ---- the sources DKMS got ----------------------------------------------------------
# The module's files in git: host-module/ but its userspace half (user/),
# include/uapi/, and dkms.conf.
want=$(cd "$ROOT" && { git ls-files host-module include/uapi | grep -v '^host-module/user/'
	echo dkms.conf; } | sort)
got=$(cd "$T/src/$NAME-$VERSION" 2>/dev/null && find . -type f | sed 's|^\./||' | sort)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
	ok "the DKMS source tree is exactly the $(wc -l <<<"$want") files of the module in git"
else
	not_ok "the DKMS source tree is the module's files in git" \
		"$(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -n 20)"
fi

# ---- nothing outside the private tree, and its removal ---------------------------
after=$(system_trees)
if [ "$before" = "$after" ]; then
	ok "/usr/src and /var/lib/dkms are as they were"
else
	not_ok "nothing written outside the private tree" \
		"$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')"
fi

out=$("$INSTALL" --tree "$T" --remove 2>&1); rc=$?
if [ $rc = 0 ] && [ -z "$(dkms_status)" ] && [ ! -e "$T/src/$NAME-$VERSION" ]; then
	ok "--remove takes both builds and the sources out of the tree"
else
	not_ok "--remove" "exit $rc" "output: $out" "dkms status: $(dkms_status)"
fi

finish
