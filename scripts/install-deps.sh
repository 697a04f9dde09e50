#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Installs the Debian packages vgmem needs to build and test (the 'package'
# lines of scripts/deps.list), then runs scripts/check-deps.sh, which fails
# naming the package of any pkg-config module, header, static library or
# command still missing. Idempotent and quick when everything is present: it
# asks dpkg first and only runs apt-get (update + install) for what is
# missing. Needs root for that; as another user it only checks.
#
# Usage: scripts/install-deps.sh [--list FILE]
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
LIST=$HERE/deps.list
if [ "${1:-}" = --list ] && [ $# -ge 2 ]; then LIST=$2; shift 2; fi
if [ $# -gt 0 ]; then
	sed -n 's/^# \{0,1\}//; /^Usage:/p' "$0" >&2
	exit 2
fi

mapfile -t PKGS < <(sed 's/#.*//' "$LIST" | awk '$1 == "package" { print $2 }')
[ ${#PKGS[@]} -gt 0 ] || { echo "install-deps: no 'package' line in $LIST" >&2; exit 2; }

missing=()
for p in "${PKGS[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
elif [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing ${missing[*]} and not root; install them with:" >&2
	echo "  apt-get install ${missing[*]}" >&2
	exit 1
else
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

exec "$HERE/check-deps.sh" --list "$LIST"
