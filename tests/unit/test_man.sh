#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The man pages (docs/man/*.scd, built by `make man`) render, and say what
# the programs say they take: every long option and every command word in
# each tool's --help is in its page, every setting of mgmtd in
# mgmtd.conf(5), every module parameter of vgmem.ko and vgmem_sim.ko in
# vgmem(4). A new option without its page fails here.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}

fail() { echo "test_man: FAIL: $*" >&2; exit 1; }
command -v scdoc > /dev/null || fail "no scdoc (scripts/install-deps.sh installs it)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in docs/man/*.scd; do
	scdoc < "$f" > "$tmp/$(basename "$f" .scd)" 2> "$tmp/err" ||
		fail "$f does not render: $(cat "$tmp/err")"
done

n=0
# check PAGE WORD...: each WORD appears in the page's source.
check() {
	local page=$1 w
	shift
	for w in "$@"; do
		grep -qF -- "$w" "docs/man/$page.scd" || fail "$page: '$w' is what the program takes (--help, settings, module parameters) but not in docs/man/$page.scd"
		n=$((n + 1))
	done
}
# The long options of a tool's --help, and the first word of its command
# lines (two spaces, a lowercase word: "  set-quota UUID BYTES ...").
words() {
	local help=$1
	grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u
	sed -n 's/^  \([a-z][a-z0-9-]*\)\( .*\)\{0,1\}$/\1/p' <<<"$help" | sort -u
}

for t in mgmtd:mgmtd.8 vgmemctl:vgmemctl.8 vgmem-nl:vgmem-nl.8 \
	 vgmem-guest-inproc:vgmem-guest.1 vgmem-sim:vgmem-sim.1; do
	bin=$B/bin/${t%%:*}
	[ -x "$bin" ] || fail "$bin is not built (make all)"
	help=$("$bin" --help 2>&1) || true
	[ -n "$help" ] || fail "$bin --help printed nothing"
	mapfile -t ws < <(words "$help")
	check "${t#*:}" "${ws[@]}"
done

# mgmtd.conf(5): every key, as the file spells it.
mapfile -t keys < <("$B/bin/mgmtd" --help | sed -n 's/^      --\([a-z][a-z0-9-]*\)  .*/\1/p' |
	grep -vx -e config -e verbose -e help -e version | tr - _)
[ ${#keys[@]} -ge 20 ] || fail "read only ${#keys[@]} settings from mgmtd --help"
check mgmtd.conf.5 "${keys[@]/#/*}"

# vgmem(4): every module parameter of both modules.
mapfile -t params < <(sed -n 's/^module_param\(_cb\)\{0,1\}(\([a-z_]*\),.*/\2/p' host-module/linux/*.c | sort -u)
[ ${#params[@]} -ge 8 ] || fail "read only ${#params[@]} module parameters"
check vgmem.4 "${params[@]/#/*}"

echo "test_man: OK: $(ls docs/man/*.scd | wc -l) pages render; $n options, commands, settings and parameters documented"
