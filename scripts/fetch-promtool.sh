#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Fetches promtool, Prometheus' checker of exposition text, rule files and
# rule unit tests, from Debian 12's prometheus package without installing
# that package (it is 96 MB installed, adds a user and starts a service):
# a private apt configuration (scripts/private-apt.sh: bookworm,
# bookworm-updates and bookworm-security from the system's mirror) with
# its own lists and cache under build/promtool/apt downloads the package,
# and only usr/bin/promtool is unpacked. promtool is one static program.
#
# Usage: scripts/fetch-promtool.sh [DEST]
#   DEST  directory promtool goes in (default build/promtool); a stamp with
#         the package's version makes a second run a no-op while the
#         package lists are younger than a day
# Prints the path of promtool on its last line.
# Environment: DEBIAN_MIRROR (default: the system's, else deb.debian.org).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${1:-$ROOT/build/promtool}
APTDIR=$DEST/apt

die() { echo "fetch-promtool: $*" >&2; exit 1; }
case "${1:-}" in -h | --help) sed -n 's/^# \{0,1\}//; 4,17p' "$0"; exit 0 ;; esac

# A fresh stamp: no need to read the package lists at all.
if [ -x "$DEST/promtool" ] && [ -f "$DEST/.version" ] &&
	[ -n "$(find "$DEST/.version" -mmin -$((24 * 60)) 2> /dev/null)" ]; then
	echo "$DEST/promtool"
	exit 0
fi

# shellcheck source=private-apt.sh
. "$ROOT/scripts/private-apt.sh"
mkdir -p "$APTDIR/debs"
papt_init "$APTDIR" bookworm bookworm-updates bookworm-security
papt_update $((24 * 60))
APT=("${PAPT[@]}")

v=$(apt-cache "${APT[@]}" policy prometheus 2> /dev/null |
	sed -n 's/^ *Candidate: //p')
[ -n "$v" ] && [ "$v" != "(none)" ] || die "no prometheus package in bookworm at $(papt_mirror)"
if [ -x "$DEST/promtool" ] && [ "$(cat "$DEST/.version" 2> /dev/null)" = "$v" ]; then
	touch "$DEST/.version"
	echo "$DEST/promtool"
	exit 0
fi
deb=$(ls "$APTDIR/debs/prometheus_"*.deb 2> /dev/null | grep -F "_${v//:/%3a}_" | head -n 1 || true)
if [ -z "$deb" ]; then
	(cd "$APTDIR/debs" && apt-get "${APT[@]}" -qq download "prometheus=$v") ||
		die "downloading prometheus=$v"
	deb=$(ls "$APTDIR/debs/prometheus_"*.deb | grep -F "_${v//:/%3a}_" | head -n 1)
fi
tmp=$(mktemp -d "$DEST/unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./usr/bin/promtool ||
	die "extracting promtool from $deb"
"$tmp/usr/bin/promtool" --version > /dev/null 2>&1 || die "the unpacked promtool does not run"
mv -f "$tmp/usr/bin/promtool" "$DEST/promtool"
# Keep one package: older versions go.
find "$APTDIR/debs" -name 'prometheus_*.deb' ! -name "$(basename "$deb")" -delete
echo "$v" > "$DEST/.version"
echo "fetch-promtool: promtool of prometheus $v in $DEST" >&2
echo "$DEST/promtool"
