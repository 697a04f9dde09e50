#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The tree's layering (docs/architecture.md, "Folders and what they may
# include"): every product source's in-tree headers, as the compiler
# resolves them (gcc -MM -MG: kernel headers need not be present), must
# come from its own folder or one its layer may use, and a header named
# *_internal.h or *_priv.h only from its own folder. A tenant's side
# (guest-driver/) never reaches the host's; the portable core never reaches
# a platform (linux/, user/) or the software GPU; the file cache reaches
# the core only through its public headers (exceptions listed below, each a
# known debt).
#
# Prints "[  PASSED  ] N test(s)." like cmocka so `make run-tests` counts it.
set -uo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-gcc}

# layer OF a path: the folder that owns it.
layer() {
	case "$1" in
	include/*) echo include ;;
	host-module/core/lrc/*) echo core/lrc ;;
	host-module/core/*) echo core ;;
	host-module/os/*) echo os ;;
	host-module/sim/*) echo sim ;;
	host-module/linux/*) echo linux ;;
	host-module/user/*) echo user ;;
	guest-driver/include/*) echo guest/include ;;
	guest-driver/lib/*) echo guest/lib ;;
	guest-driver/kernel/*) echo guest/kernel ;;
	guest-driver/tools/*) echo guest/tools ;;
	guest-driver/examples/*) echo guest/examples ;;
	lib/*) echo "lib/$(echo "$1" | cut -d/ -f2)" ;;
	tools/*) echo "tools/$(echo "$1" | cut -d/ -f2)" ;;
	mgmtd/*) echo mgmtd ;;
	policy/*) echo policy ;;
	*) echo "?" ;;
	esac
}

# What each layer may include besides itself (space-separated layers).
allowed() {
	case "$1" in
	include) echo "" ;;
	os) echo "include" ;;
	core) echo "os include" ;;
	core/lrc) echo "core os include" ;;
	sim) echo "core os include" ;;
	linux) echo "core core/lrc sim os include" ;;
	user) echo "core core/lrc sim os include guest/include lib/util" ;;
	guest/include) echo "include" ;;
	guest/lib|guest/tools|guest/examples) echo "guest/include include lib/util" ;;
	guest/kernel) echo "include" ;;
	policy) echo "lib/util" ;;
	lib/*) echo "include" ;;
	tools/vgmem-nl) echo "include lib/vgnl lib/util" ;;
	tools/vgmem-guest-inproc) echo "guest/tools guest/include user core sim os include lib/util" ;;
	tools/vgmem-sim) echo "user core core/lrc sim os include guest/include lib/util" ;;
	tools/vgmemctl) echo "include lib/util" ;;
	mgmtd) echo "policy include lib/vgnl lib/util user core core/lrc sim os guest/include" ;;
	*) echo "" ;;
	esac
}

# Known debts, "FROM-LAYER TO-FILE" (the compiler lists headers included
# through others too, so a debt names the layer that may still reach a
# file): each goes when its fix lands, and a debt no source has any more
# must leave this list too. None today: the file cache reaches the core
# through vg.h alone (core/cachemem.c takes gpu->lock for it).
DEBTS="
"

passed=0 failed=0 debts_seen=""
srcs=$(git ls-files 'include/*.h' 'host-module/*.[ch]' 'guest-driver/*.[ch]' \
	'lib/*.[ch]' 'tools/*.[ch]' 'mgmtd/*.[ch]' 'policy/*.[ch]')
for f in $srcs; do
	from=$(layer "$f")
	[ "$from" = "?" ] && continue
	ok=" $from $(allowed "$from") "
	deps=$($CC -MM -MG -I. -Iinclude -Iguest-driver/include -Ihost-module \
		-Iguest-driver/kernel -D_GNU_SOURCE -x c "$f" 2>/dev/null |
		sed -e 's/^[^:]*://' -e 's/\\$//' | tr ' ' '\n' | grep -v '^$')
	bad=0
	for d in $deps; do
		d=$(realpath -m --relative-to=. "$d")
		case "$d" in /*|../*) continue ;; esac
		[ -e "$d" ] || continue		# a system header (-MG)
		[ "$d" = "$f" ] && continue
		to=$(layer "$d")
		case "$ok" in
		*" $to "*)
			case "$d" in
			*_internal.h|*_priv.h) [ "$to" = "$from" ] && continue ;;
			*) continue ;;
			esac ;;
		esac
		if printf '%s\n' "$DEBTS" | grep -qx "$from $d"; then
			debts_seen="$debts_seen|$from $d"
			continue
		fi
		echo "FAIL: $f ($from) includes $d ($to): $from may include" \
			"$(allowed "$from"), and no other folder's *_internal.h or *_priv.h"
		bad=1
	done
	[ $bad = 0 ] && passed=$((passed + 1)) || failed=$((failed + 1))
done
# A debt that was paid must leave the list (so it cannot come back unseen).
while read -r a b; do
	[ -n "$a" ] || continue
	case "$debts_seen|" in *"|$a $b|"*) ;; *)
		echo "FAIL: the debt '$a includes $b' is gone: remove it from DEBTS"
		failed=$((failed + 1)) ;;
	esac
done <<< "$DEBTS"
# Another folder's header by its path from the root (or host-module/),
# never by ../ (docs/architecture.md): tests and programs included.
rel=$(git grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"\.\./' -- '*.c' '*.h' || true)
if [ -n "$rel" ]; then
	echo "FAIL: includes by a ../ path:"
	echo "$rel"
	failed=$((failed + 1))
fi
echo "layers: $passed sources checked, $failed failing"
[ $failed = 0 ] || { echo "[  FAILED  ] $failed test(s)."; exit 1; }
echo "[  PASSED  ] 1 test(s)."
