#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# libvgmem.so.0 (deploy/install.mk) is the library libvgmem.h promises and
# no more: its SONAME is libvgmem.so.0; it exports exactly the functions the
# header declares, each under the version node LIBVGMEM_0 of
# guest-driver/lib/libvgmem.map, and nothing of lib/util or the transports'
# internals; it needs nothing but libc. A program built from the header
# alone links against it and computes what the same program linked
# statically with libvgmem.a computes. A function added to the header
# without the map (or the reverse) fails here, before a package ships it.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
SO=$B/lib/libvgmem.so.0

fail() { echo "test_libvgmem_so: FAIL: $*" >&2; exit 1; }
[ -e "$SO" ] || fail "no $SO (make builds it)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

soname=$(readelf -d "$SO" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libvgmem.so.0 ] || fail "SONAME '$soname', want libvgmem.so.0"

needed=$(readelf -d "$SO" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for n in $needed; do
	case "$n" in libc.so.6|ld-linux-*.so.2) ;; *) fail "needs $n: only libc is expected ($needed)" ;; esac
done

# The functions the header declares: its prototypes once the preprocessor
# has dropped the comments (which name functions too), from its own lines
# only (the line markers say whose): the uapi headers' inline helpers are
# compiled into the caller, not exported.
declared=$(gcc -E -Iinclude guest-driver/include/libvgmem.h |
	awk '/^# [0-9]+ "/ { mine = ($3 ~ /libvgmem\.h"$/); next } mine' |
	grep -oE '\bvgmem_[a-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u)
[ "$(wc -l <<<"$declared")" -ge 40 ] || fail "read only $(wc -l <<<"$declared") functions from libvgmem.h"
# nm -D: "ADDR T name@@NODE" for a definition, "A NODE" for the node itself.
exported=$(nm -D --defined-only "$SO" | awk '$2 != "A" { print $3 }' | sort -u)
bad_node=$(grep -v '@@LIBVGMEM_0$' <<<"$exported" || true)
[ -z "$bad_node" ] || fail "exported outside the version node LIBVGMEM_0: $bad_node"
exported=$(sed 's/@@.*//' <<<"$exported")
if [ "$declared" != "$exported" ]; then
	fail "libvgmem.so exports what libvgmem.h does not declare, or the reverse (fix guest-driver/lib/libvgmem.map):
$(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | sed 's/^</  declared, not exported:/; s/^>/  exported, not declared:/')"
fi

# A tenant's program: the header, -lvgmem, nothing else of the tree. It
# prints a checksum and a name computed by the library; the same program
# linked statically gives the reference.
cat > "$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <libvgmem.h>

int main(void)
{
	const char *s = "vgmem shared library";
	unsigned long long h = vgmem_fnv1a(0xcbf29ce484222325ULL, s, strlen(s));

	printf("%llx %s\n", h, vgmem_workload_name(VGMEM_WL_GATHER));
	return 0;
}
EOF
grep -q 'VGMEM_WL_GATHER' guest-driver/include/libvgmem.h || fail "libvgmem.h has no VGMEM_WL_GATHER (update this test)"
gcc -Wall -Werror -Iguest-driver/include -Iinclude "$tmp/prog.c" -L"$B/lib" -lvgmem -o "$tmp/shared" 2> "$tmp/err" ||
	fail "a program of libvgmem.h alone does not link with -lvgmem: $(cat "$tmp/err")"
gcc -Wall -Werror -Iguest-driver/include -Iinclude "$tmp/prog.c" "$B/lib/libvgmem.a" "$B/lib/libvgutil.a" \
	-o "$tmp/static" -lpthread 2> "$tmp/err" || fail "the static reference does not link: $(cat "$tmp/err")"
readelf -d "$tmp/shared" | grep -q 'NEEDED.*\[libvgmem.so.0\]' || fail "the program does not need libvgmem.so.0"
got=$(LD_LIBRARY_PATH=$B/lib "$tmp/shared") || fail "the program linked against libvgmem.so failed"
want=$("$tmp/static")
[ -n "$want" ] && [ "$got" = "$want" ] || fail "through libvgmem.so: '$got', statically: '$want'"

echo "test_libvgmem_so: OK: libvgmem.so.0 exports the $(wc -l <<<"$declared") functions of libvgmem.h under LIBVGMEM_0 and nothing else; a program of the header alone gets the static library's answer ($got)"
