#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Builds vgmem's Debian packages (debian/) into build/deb/ without touching
# the checkout: the tracked files, as they are in the work tree (local
# changes included, untracked files not, as `git archive` but uncommitted
# edits too), are copied to build/deb/src/vgmem-VERSION/, and
# `dpkg-buildpackage -b -us -uc` runs there; debian/'s build products stay
# in that copy. `make deb` runs it.
#
# Usage: scripts/build-deb.sh
# Needs dpkg-dev, debhelper, dh-dkms and the Build-Depends of debian/control
# (scripts/deps.list has them all). Output: build/deb/*.deb, the build's log
# in build/deb/build.log, and build/deb/deb.list (the .debs, one a line).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/deb
die() { echo "build-deb: $*" >&2; exit 1; }
[ $# = 0 ] || { sed -n 's/^# \{0,1\}//; /^Usage:/p' "$0" >&2; exit 2; }
command -v dpkg-buildpackage > /dev/null || die "no dpkg-buildpackage (apt-get install dpkg-dev)"
# dpkg-checkbuilddeps names every missing Build-Depends at once.
(cd "$ROOT" && dpkg-checkbuilddeps) || die "install the build dependencies above (scripts/install-deps.sh)"

version=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
src=$OUT/src/vgmem-$version
t0=$(date +%s)
rm -rf "$OUT"
mkdir -p "$src"
# Tracked files that exist (a file deleted in the work tree stays out).
(cd "$ROOT" && git ls-files -z | xargs -0 -r sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$src" -xf -

# A make check's jobserver must not reach the package build (its own -j).
unset MAKEFLAGS MAKELEVEL MFLAGS
jobs=$(nproc)
echo "build-deb: dpkg-buildpackage -b in ${src#$ROOT/} (log: ${OUT#$ROOT/}/build.log)"
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs" dpkg-buildpackage -b -us -uc) > "$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log" >&2
	die "dpkg-buildpackage failed (log: $OUT/build.log)"
fi
# dpkg-buildpackage writes the .debs next to the source directory.
mv "$OUT"/src/*.deb "$OUT"/src/*.buildinfo "$OUT"/src/*.changes "$OUT"/
ls "$OUT"/*.deb > "$OUT/deb.list"
echo "build-deb: $(wc -l < "$OUT/deb.list") packages in ${OUT#$ROOT/}/ ($(( $(date +%s) - t0 )) s):"
sed "s|^$OUT/|  |" "$OUT/deb.list"
