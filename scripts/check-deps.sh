#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Checks that everything scripts/deps.list names is present: each pkg-config
# module, header, static library, command and clang runtime. For each one missing it prints
# the Debian package that provides it and exits 1, so a build never gets as
# far as a compiler error about a missing header. Runs no compiler but the
# preprocessor, installs nothing, needs no root.
#
# Usage: scripts/check-deps.sh [--list FILE] [--quiet]
#   --list FILE  check FILE instead of scripts/deps.list (tests use this)
#   --quiet      print nothing when everything is present
# Exit: 0 all present, 1 something missing, 2 the list itself is malformed.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
LIST=$HERE/deps.list
QUIET=0
CC=${CC:-gcc}

usage() { sed -n 's/^# \{0,1\}//; /^Usage:/,/^Exit:/p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--list) [ $# -ge 2 ] || usage; LIST=$2; shift 2 ;;
	--quiet) QUIET=1; shift ;;
	-h|--help) usage ;;
	*) echo "check-deps: unknown argument '$1'" >&2; usage ;;
	esac
done
[ -r "$LIST" ] || { echo "check-deps: cannot read $LIST" >&2; exit 2; }

# Debian keeps daemons in sbin, which a non-root PATH may lack.
PATH=$PATH:/usr/sbin:/sbin

declare -A listed=()
missing=()
bad=0
n=0

present() {	# $1 kind, $2 name
	case "$1" in
	pkgconfig) pkg-config --exists "$2" 2>/dev/null ;;
	header) printf '#include <%s>\n' "$2" |
		"$CC" -E -x c - $(pkg-config --cflags-only-I libdrm 2>/dev/null) \
			> /dev/null 2>&1 ;;
	staticlib) [ "$("$CC" -print-file-name="$2")" != "$2" ] ;;
	clanglib) command -v clang > /dev/null 2>&1 &&
		[ "$(clang -print-file-name="$2")" != "$2" ] ;;
	command) command -v "$2" > /dev/null 2>&1 ;;
	esac
}

# First pass: the packages, so a later line may name any of them.
while read -r kind name _; do
	[ "$kind" = package ] && listed[$name]=1
done < <(sed 's/#.*//' "$LIST")

while read -r kind name pkg extra; do
	[ -n "$kind" ] || continue
	case "$kind" in
	package) continue ;;
	pkgconfig|header|staticlib|command|clanglib) ;;
	*) echo "check-deps: $LIST: unknown kind '$kind'" >&2; bad=1; continue ;;
	esac
	if [ -z "$name" ] || [ -z "$pkg" ] || [ -n "$extra" ]; then
		echo "check-deps: $LIST: '$kind $name $pkg $extra' needs exactly a name and a package" >&2
		bad=1; continue
	fi
	if [ -z "${listed[$pkg]:-}" ]; then
		echo "check-deps: $LIST: $kind $name names package $pkg, which has no 'package $pkg' line" >&2
		bad=1
	fi
	n=$((n + 1))
	present "$kind" "$name" || missing+=("$kind $name (Debian package $pkg)")
done < <(sed 's/#.*//' "$LIST")

[ $bad = 0 ] || exit 2

if [ ${#missing[@]} -gt 0 ]; then
	echo "check-deps: ${#missing[@]} of $n build and test dependencies missing:" >&2
	pkgs=()
	for m in "${missing[@]}"; do
		echo "  $m" >&2
		pkgs+=("$(sed 's/.*(Debian package \(.*\))/\1/' <<<"$m")")
	done
	echo "check-deps: install them with: apt-get install $(printf '%s\n' "${pkgs[@]}" | sort -u | tr '\n' ' ')" >&2
	echo "check-deps: (as root, scripts/install-deps.sh installs everything in $(basename "$LIST"))" >&2
	exit 1
fi
[ $QUIET = 1 ] || echo "check-deps: all $n build and test dependencies present"
