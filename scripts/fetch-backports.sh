#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Fetches Debian packages from bookworm-backports and unpacks them into a
# directory, without touching the system's apt or dpkg: a private apt
# configuration (scripts/private-apt.sh: sources bookworm, bookworm-updates,
# bookworm-backports and bookworm-security from the system's Debian mirror)
# with its own lists and cache under build/bpo. Nothing is
# installed: the packages are extracted with dpkg -x, for the test suite to
# stage (e.g. QEMU 10 into the test VM).
#
# Usage: scripts/fetch-backports.sh DEST PKG...
#   DEST  directory the packages are unpacked into (created; a stamp
#         naming the packages and versions makes a second run a no-op)
#   PKG   package names; each is taken from bookworm-backports
# Environment: BPO_DIR (default build/bpo), DEBIAN_MIRROR (default: the
# system's, else http://deb.debian.org/debian).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BPO=${BPO_DIR:-$ROOT/build/bpo}

die() { echo "fetch-backports: $*" >&2; exit 1; }
[ $# -ge 2 ] || { sed -n 's/^# \{0,1\}//; /^Usage:/,/^Environment/p' "$0" >&2; exit 2; }
DEST=$1
shift

# shellcheck source=private-apt.sh
. "$ROOT/scripts/private-apt.sh"
mkdir -p "$BPO/debs"
papt_init "$BPO" bookworm bookworm-updates bookworm-backports bookworm-security
# Lists older than a day (or none) are read again.
papt_update $((24 * 60))
APT=("${PAPT[@]}")

want=
for p in "$@"; do
	v=$(apt-cache "${APT[@]}" show "$p/bookworm-backports" 2>/dev/null |
		sed -n 's/^Version: //p' | head -n 1)
	[ -n "$v" ] || die "no package $p in bookworm-backports"
	want="$want$p=$v "
done
if [ -f "$DEST/.fetch-backports" ] && [ "$(cat "$DEST/.fetch-backports")" = "$want" ]; then
	echo "fetch-backports: $want cached in $DEST"
	exit 0
fi

debs=()
for p in "$@"; do
	v=$(sed -n "s/.*\\b$p=\\([^ ]*\\).*/\\1/p" <<<"$want")
	f=$(ls "$BPO/debs/${p}_"*"_"*.deb 2>/dev/null | grep -F "_${v//:/%3a}_" | head -n 1 || true)
	if [ -z "$f" ]; then
		(cd "$BPO/debs" && apt-get "${APT[@]}" -qq download "$p/bookworm-backports") ||
			die "downloading $p=$v"
		f=$(ls "$BPO/debs/${p}_"*"_"*.deb | grep -F "_${v//:/%3a}_" | head -n 1)
	fi
	debs+=("$f")
done
rm -rf "$DEST"
mkdir -p "$DEST"
for f in "${debs[@]}"; do
	dpkg -x "$f" "$DEST" || die "extracting $f"
done
echo "$want" > "$DEST/.fetch-backports"
echo "fetch-backports: $want unpacked in $DEST"
