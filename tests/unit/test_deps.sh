#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# scripts/deps.list must name a Debian package for everything the build uses,
# checked against the build itself rather than against what this machine has:
#  1. every pkg-config module the Makefile asks for (recorded through a
#     PKG_CONFIG wrapper while make prints every userspace recipe) has a
#     'pkgconfig' line, and that line names the package that owns the .pc file;
#  2. every system header a userspace source includes (gcc -M with each
#     source's real flags) and every library a userspace program links
#     belongs to a listed package (dpkg -S), or to the compiler itself;
#  3. removing the package line of any of those owners makes check 2 fail,
#     and scripts/check-deps.sh fails naming the package of a missing module,
#     header, static library or command, and refuses a malformed list.
# A library added to the build without its package therefore fails here even
# on a machine where someone installed the package by hand.
#
# Prints "[  PASSED  ] N test(s)." like cmocka so `make run-tests` counts it.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIST=$ROOT/scripts/deps.list
CHECK=$ROOT/scripts/check-deps.sh
TMP=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] && echo "tmp: $TMP" || trap 'rm -rf "$TMP"' EXIT
CC=${CC:-gcc}
FUZZ_CC=clang	# the fuzzers' compiler (tests/fuzz/fuzz.mk)

. "$ROOT/tests/lib/report.sh"

listed_pkgs() { sed 's/#.*//' "$1" | awk '$1 == "package" { print $2 }' | sort -u; }
entries() { sed 's/#.*//' "$LIST" | awk -v k="$1" '$1 == k { print $2, $3 }'; }

# ---- what the build uses: make prints every userspace recipe --------------------
# The wrapper logs each pkg-config call and forwards it. -B prints recipes of
# targets that are up to date too; -n runs none of them.
cat > "$TMP/pkg-config" <<EOF
#!/bin/sh
echo "\$*" >> "$TMP/pkg-config.log"
exec pkg-config "\$@"
EOF
chmod +x "$TMP/pkg-config"
: > "$TMP/pkg-config.log"
if ! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$ROOT" -n -B --no-print-directory \
	PKG_CONFIG="$TMP/pkg-config" all asan vm-bins fuzz-bins > "$TMP/recipes.raw" 2> "$TMP/make.err"; then
	not_ok "make -n prints the build's recipes" "$(tail -n 5 "$TMP/make.err")"
	echo "[  PASSED  ] $passed test(s)."
	exit 1
fi

# One command per line: join the recipes' backslash continuations.
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$TMP/recipes.raw" > "$TMP/recipes"

# ---- 1. pkg-config modules ---------------------------------------------------------
modules=$(tr ' ' '\n' < "$TMP/pkg-config.log" | grep -v '^-' | grep -v '^$' | sort -u)
if [ -z "$modules" ]; then
	not_ok "the Makefile's pkg-config calls were recorded" "no call reached the wrapper"
else
	errs=()
	for m in $modules; do
		pkg=$(entries pkgconfig | awk -v m="$m" '$1 == m { print $2 }')
		if [ -z "$pkg" ]; then
			errs+=("the Makefile asks pkg-config for '$m', which has no 'pkgconfig $m <package>' line in scripts/deps.list")
			continue
		fi
		pc=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null)/$m.pc
		owner=$(dpkg -S "$pc" 2>/dev/null | head -n1 | cut -d: -f1)
		[ -z "$owner" ] || [ "$owner" = "$pkg" ] ||
			errs+=("deps.list says $m comes from $pkg, but dpkg says $pc belongs to $owner")
	done
	if [ ${#errs[@]} -eq 0 ]; then
		ok "each of the Makefile's $(wc -w <<<"$modules") pkg-config modules is in deps.list with its package"
	else
		not_ok "pkg-config modules in deps.list" "${errs[@]}"
	fi
fi

# ---- 2. headers and libraries of every userspace program --------------------------
# Compile lines: "-c SRC -o OBJ" becomes "-M SRC" (every header, system ones
# included). One per source and compiler: gcc's ASan variant includes the
# same headers; clang (the fuzzers) has headers of its own.
{ grep -E "^$CC .* -c [^ ]+\.c -o " "$TMP/recipes" | grep -v -- '-fsanitize'
  grep -E "^$FUZZ_CC .* -c [^ ]+\.c -o " "$TMP/recipes"; } |
	sed -E 's/ -MMD| -MP//g; s/ -c ([^ ]+\.c) -o [^ ]+/ -M \1/' | sort -u > "$TMP/compiles"
ncomp=$(wc -l < "$TMP/compiles")
# One output file per process: parallel writers to one pipe interleave.
mkdir -p "$TMP/d"
(cd "$ROOT" && xargs -a "$TMP/compiles" -d '\n' -P "$(nproc)" -I{} \
	sh -c '{} > "$0/$$.d"' "$TMP/d") 2> "$TMP/deps.err"
cat "$TMP"/d/*.d > "$TMP/deps.mk" 2>/dev/null
# Library files: each -lNAME of a link line, static where the line says -static.
: > "$TMP/libs"
grep -E "^($CC|$FUZZ_CC) .* -o [^ ]+ " "$TMP/recipes" | grep -vE ' -c | -M' | while read -r line; do
	# libFuzzer and clang's sanitizers: runtimes clang links in by itself.
	if [[ " $line " == *" -fsanitize=fuzzer "* ]]; then
		for r in fuzzer asan ubsan_standalone; do
			f=$("$FUZZ_CC" -print-file-name="libclang_rt.$r-x86_64.a")
			[[ "$f" == /* ]] || f="(not found by $FUZZ_CC) $f"
			echo "$f" >> "$TMP/libs"
		done
	fi
	suffix=so
	[[ " $line " == *" -static "* ]] && suffix=a
	for l in $(grep -oE ' -l[^ ]+' <<<"$line"); do
		echo "lib${l#-l}.$suffix"
	done
done | sort -u > "$TMP/libnames"
# Each library once: a compiler process per link line and library took
# 15 s. glibc 2.34+ keeps libpthread and friends as .a stubs only; a
# library not found comes back as its bare name.
while read -r name; do
	f=$("$CC" -print-file-name="$name")
	[[ "$f" == /* ]] || [[ "$name" != *.so ]] || f=$("$CC" -print-file-name="${name%.so}.a")
	[[ "$f" == /* ]] || f="(not found by $CC) $f"
	echo "$f" >> "$TMP/libs"
done < "$TMP/libnames"
gccinc=$(dirname "$("$CC" -print-libgcc-file-name)")
files=$( (tr ' \\' '\n\n' < "$TMP/deps.mk" | grep '^/'; grep '^/' "$TMP/libs" | sort -u) |
	xargs -r realpath -s 2>/dev/null | grep -v "^$gccinc/" | sort -u)
: > "$TMP/owners"
mapfile -t unowned < <(grep -v '^/' "$TMP/libs" | sort -u)
# One dpkg -S for all (it is slow per call). Merged /usr: dpkg may know a
# file under /lib rather than /usr/lib, so both spellings are asked.
owner_of() { dpkg -S "$@" 2>/dev/null | sed -n 's/^\([^:, ]*\).*: \(\/.*\)$/\1 \2/p'; }
{ owner_of $files; owner_of $(sed -n 's#^/usr/#/#p' <<<"$files"); } > "$TMP/dpkg-S"
# Each file's owner, under either spelling; files without one are printed
# as "- FILE".
awk 'NR == FNR { if (!($2 in own)) own[$2] = $1; next }
     $0 == "" { next }
     { g = $0; sub(/^\/usr/, "", g)
       o = ($0 in own) ? own[$0] : (g in own) ? own[g] : "-"; print o, $0 }' \
	"$TMP/dpkg-S" - <<<"$files" > "$TMP/owned"
grep -v '^- ' "$TMP/owned" > "$TMP/owners"
mapfile -t -O ${#unowned[@]} unowned < <(sed -n 's/^- //p' "$TMP/owned")
# What a list installs: its packages and everything they depend on (apt
# installs those too; libxml2-dev brings libicu-dev's headers, for one).
# One apt-cache run gives the graph under the whole list: each installed
# package it reaches, unindented, then its dependencies (and, indented
# further, the other packages that provide one). The closure of any part of
# the list is the walk of that graph from its packages, through the
# packages that have a line of their own (the installed ones), as apt-cache
# walks it: an apt-cache run per package left out took 2 s each.
apt-cache depends --recurse --installed --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances \
	$(listed_pkgs "$LIST") > "$TMP/graph" 2>/dev/null
closure() {	# $1: a deps.list
	listed_pkgs "$1" | awk '
		NR == FNR {
			if ($0 !~ /^ /) { cur = $1; sub(/:.*/, "", cur); real[cur] = 1; next }
			t = $NF; sub(/:.*/, "", t); gsub(/[<>]/, "", t)
			dep[cur] = dep[cur] " " t
			next
		}
		{ q[++n] = $1 }
		END {
			for (i = 1; i <= n; i++) {
				p = q[i]
				if (!(p in real) || (p in seen)) continue
				seen[p] = 1
				m = split(dep[p], d, " ")
				for (j = 1; j <= m; j++) q[++n] = d[j]
			}
			for (p in seen) print p
		}' "$TMP/graph" - | sort -u
}
# The walk from the whole list must reach what apt-cache reached.
if [ ! -s "$TMP/graph" ]; then
	not_ok "apt-cache depends gives the graph under scripts/deps.list" "no output"
elif closure "$LIST" > "$TMP/walk" &&
	diff=$(diff <(grep -v '^[ <]' "$TMP/graph" | sed 's/:.*//' | sort -u) "$TMP/walk"); then
	ok "the walk of apt-cache's graph from scripts/deps.list reaches the $(wc -l < "$TMP/walk") packages apt-cache reached"
else
	not_ok "the walk of apt-cache's graph gives apt-cache's closure" "$diff"
fi
check_owners() {	# $1: a deps.list; prints what it would not install
	closure "$1" > "$TMP/closure"
	owners_outside "$TMP/closure"
}
owners_outside() {	# $1: a closure (one package a line)
	awk 'NR == FNR { have[$1] = 1; next }
	     !($1 in have) { n[$1]++; if (!($1 in eg)) eg[$1] = $2 }
	     END { for (p in n) printf "  %s (%d files, e.g. %s) belongs to %s, which scripts/deps.list does not install\n", p, n[p], eg[p], p }' \
		"$1" "$TMP/owners"
}
if [ "$ncomp" -lt 50 ] || [ -s "$TMP/deps.err" ]; then
	not_ok "gcc -M over the build's compile lines" "$ncomp compile lines" "$(head -n 5 "$TMP/deps.err")"
elif [ ${#unowned[@]} -gt 0 ]; then
	not_ok "every header and library the build uses belongs to a package" "${unowned[@]}"
else
	bad=$(check_owners "$LIST")
	if [ -z "$bad" ]; then
		ok "the $(wc -l < "$TMP/owners") system headers and libraries of $ncomp sources and the links come from $(cut -d' ' -f1 "$TMP/owners" | sort -u | wc -l) listed packages"
	else
		not_ok "system headers and libraries come from listed packages" "$bad"
	fi
fi

# ---- 3. the checks fail when they should -------------------------------------------
# Dropping the package line of any package the build takes files from must
# be caught (the mistake that let a missing libnl through CI), unless another
# listed package depends on it and so installs it anyway.
errs=()
caught=()
for p in $(cut -d' ' -f1 "$TMP/owners" | sort -u); do
	listed_pkgs "$LIST" | grep -qx "$p" || continue
	grep -vE "^package[[:space:]]+$p([[:space:]]|$)" "$LIST" > "$TMP/without.list"
	# One closure for both questions: two apt-cache runs could differ.
	closure "$TMP/without.list" > "$TMP/without.closure"
	grep -qx "$p" "$TMP/without.closure" && continue
	if grep -q "belongs to $p, which" <<<"$(owners_outside "$TMP/without.closure")"; then
		caught+=("$p")
	else
		errs+=("without 'package $p' the owner check still passes")
	fi
done
[[ " ${caught[*]} " == *" libnl-genl-3-dev "* ]] ||
	errs+=("removing libnl-genl-3-dev was not caught (caught: ${caught[*]})")
if [ ${#errs[@]} -eq 0 ]; then
	ok "removing any of ${#caught[@]} packages (${caught[*]}) from the list fails the owner check"
else
	not_ok "removing a package from the list is caught" "${errs[@]}"
fi

# check-deps.sh itself: one missing item of each kind, each named with its package.
cat > "$TMP/missing.list" <<'EOF'
package vgmem-test-pc-dev
package vgmem-test-h-dev
package vgmem-test-a-dev
package vgmem-test-bin
pkgconfig vgmem-no-such-module vgmem-test-pc-dev
header vgmem/no-such-header.h vgmem-test-h-dev
staticlib libvgmem-no-such.a vgmem-test-a-dev
command vgmem-no-such-command vgmem-test-bin
command sh vgmem-test-bin
EOF
out=$("$CHECK" --list "$TMP/missing.list" 2>&1); rc=$?
errs=()
[ $rc = 1 ] || errs+=("exit $rc, want 1")
for p in vgmem-test-pc-dev vgmem-test-h-dev vgmem-test-a-dev vgmem-test-bin; do
	grep -q "apt-get install .*$p" <<<"$out" || errs+=("the install hint lacks $p")
done
grep -q '4 of 5' <<<"$out" || errs+=("does not count 4 of 5 missing")
if [ ${#errs[@]} -eq 0 ]; then
	ok "check-deps names the package of each missing module, header, library and command"
else
	not_ok "check-deps on missing items" "${errs[@]}" "output: $out"
fi

printf 'package sh-pkg\ncommand sh not-listed-pkg\n' > "$TMP/malformed.list"
out=$("$CHECK" --list "$TMP/malformed.list" 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "not-listed-pkg, which has no 'package not-listed-pkg' line" <<<"$out"; then
	ok "check-deps refuses a line whose package the list does not install"
else
	not_ok "check-deps on a malformed list" "exit $rc, want 2" "output: $out"
fi

out=$("$CHECK" 2>&1); rc=$?
if [ $rc = 0 ]; then
	ok "check-deps passes on this machine with scripts/deps.list"
else
	not_ok "check-deps on this machine" "$out"
fi

finish
