#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Proves the README's two commands on a fresh Debian 12: debootstraps bookworm
# (the base system, nothing else) into build/fresh/, clones the committed
# HEAD of this repository into it, and runs `make run` and then `bash .ci/run`
# (`make check`) inside it as root, with the same apt sources as this machine.
# Nothing is installed in the fresh root by hand but make, which the README
# asks for first (the base system lacks it): whatever the build needs must
# come from scripts/install-deps.sh. Not part of `make check` (it takes
# 20-40 minutes and downloads ~1 GB); run it when the dependency list changes.
#
# The debootstrapped base is kept as build/fresh/base.tar.gz and unpacked
# afresh for every run, so one run never sees another's packages.
#
# Usage: tests/fresh-install.sh [--steps "run check"] [--shell]
#   --steps  which of the README's commands to run, in order (default both)
#   --shell  after the steps, a shell in the fresh root
# Needs root, debootstrap (scripts/install-deps.sh installs it) and network
# access to the Debian mirror. Log: build/fresh/log.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FRESH=$ROOT/build/fresh
R=$FRESH/root
BASE=$FRESH/base.tar.gz
MIRROR=${MIRROR:-http://deb.debian.org/debian}
steps="run check"
shell=0

usage() { sed -n 's/^# \{0,1\}//; /^Usage:/,/^Needs/p' "$0" | sed '$d' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--steps) [ $# -ge 2 ] || usage; steps=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	-h|--help) usage ;;
	*) echo "fresh-install: unknown argument '$1'" >&2; usage ;;
	esac
done
die() { echo "fresh-install: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
command -v debootstrap > /dev/null || die "debootstrap not found (scripts/install-deps.sh installs it)"
for s in $steps; do
	case "$s" in run|check) ;; *) die "unknown step '$s' (run, check)" ;; esac
done

mkdir -p "$FRESH"
t0=$(date +%s)
stamp() { echo "fresh-install: [$(( $(date +%s) - t0 )) s] $*"; }

umount_all() {
	local m
	# Deepest first; the rbind mounts bring submounts of their own.
	for m in $(awk -v r="$R" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
}
trap umount_all EXIT
umount_all

if [ ! -f "$BASE" ]; then
	stamp "debootstrap bookworm from $MIRROR (once; kept in $BASE)"
	rm -rf "$R.new"
	debootstrap bookworm "$R.new" "$MIRROR" > "$FRESH/debootstrap.log" 2>&1 ||
		die "debootstrap failed (log: $FRESH/debootstrap.log)"
	tar -C "$R.new" -czf "$BASE.tmp" . && mv "$BASE.tmp" "$BASE"
	rm -rf "$R.new"
fi

stamp "unpacking a fresh base system into $R"
rm -rf "$R"
mkdir -p "$R"
tar -C "$R" -xzf "$BASE"

# The apt sources of a freshly installed Debian 12: the release, its updates
# and security, from the same mirrors this machine uses.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	cp /etc/apt/sources.list.d/debian.sources "$R/etc/apt/sources.list.d/"
	: > "$R/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$R/etc/resolv.conf"

# The committed HEAD, as CI clones it: no build products, no local changes.
stamp "cloning $(git -C "$ROOT" rev-parse --short HEAD) into /root/vgmem"
git clone -q --no-local "$ROOT" "$R/root/vgmem"

mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"

in_root() {
	env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		chroot "$R" /bin/bash -c "cd /root/vgmem && $1"
}

stamp "packages in the fresh root before: $(chroot "$R" dpkg-query -W | wc -l)"
# The one step the README asks for before its commands: the base system has
# no make (git is not needed inside: the clone was made from outside).
stamp "the README's prerequisite: apt-get install make"
in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make" \
	> "$FRESH/prereq.log" 2>&1 || die "installing make failed (log: $FRESH/prereq.log)"
for s in $steps; do
	case "$s" in
	run) cmd="make run" ;;
	check) cmd="bash .ci/run" ;;
	esac
	stamp "running '$cmd' (log: $FRESH/$s.log)"
	if ! in_root "$cmd" > "$FRESH/$s.log" 2>&1; then
		tail -n 30 "$FRESH/$s.log" >&2
		die "'$cmd' failed in the fresh root after $(( $(date +%s) - t0 )) s (log: $FRESH/$s.log)"
	fi
	tail -n 12 "$FRESH/$s.log"
	stamp "'$cmd' passed"
done
stamp "packages in the fresh root after: $(chroot "$R" dpkg-query -W | wc -l)"
[ $shell = 0 ] || in_root "exec bash -i" || true
stamp "done: a fresh Debian 12 passes: $steps"
