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
cd "$(dirname "$0")/../.." || exit 1
CC=${CC:-gcc}

# Known debts, "FROM-LAYER TO-FILE" (the compiler lists headers included
# through others too, so a debt names the layer that may still reach a
# file): each goes when its fix lands, and a debt no source has any more
# must leave this list too. None today: the file cache reaches the core
# through vg.h alone (core/cachemem.c takes gpu->lock for it).
DEBTS="
"

# One compiler run for every source (a rule each, the source first) and one
# awk for the judgement: a process per header took a minute and a half.
srcs=$(git ls-files 'include/*.h' 'host-module/*.[ch]' 'guest-driver/*.[ch]' \
	'lib/*.[ch]' 'tools/*.[ch]' 'mgmtd/*.[ch]' 'policy/*.[ch]')
nsrcs=$(wc -w <<<"$srcs")
# shellcheck disable=SC2086 # one word per source
rules=$($CC -MM -MG -I. -Iinclude -Iguest-driver/include -Ihost-module \
	-Iguest-driver/kernel -D_GNU_SOURCE -x c $srcs 2>/dev/null |
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
nrules=$(grep -c : <<<"$rules")
[ "$nrules" = "$nsrcs" ] || {
	echo "FAIL: the compiler gave $nrules dependency rules for $nsrcs sources"
	echo "[  FAILED  ] 1 test(s)."
	exit 1
}

# The tracked files (a header missing here is a system one, -MG), then the
# rules; the debts as a variable.
result=$(awk -v debts="$DEBTS" '
# The folder that owns a path.
function layer(p,   a) {
	if (p ~ /^include\//) return "include"
	if (p ~ /^host-module\/core\/lrc\//) return "core/lrc"
	if (p ~ /^host-module\/core\//) return "core"
	if (p ~ /^host-module\/os\//) return "os"
	if (p ~ /^host-module\/sim\//) return "sim"
	if (p ~ /^host-module\/linux\//) return "linux"
	if (p ~ /^host-module\/user\//) return "user"
	if (p ~ /^guest-driver\/include\//) return "guest/include"
	if (p ~ /^guest-driver\/lib\//) return "guest/lib"
	if (p ~ /^guest-driver\/kernel\//) return "guest/kernel"
	if (p ~ /^guest-driver\/tools\//) return "guest/tools"
	if (p ~ /^guest-driver\/examples\//) return "guest/examples"
	if (p ~ /^(lib|tools)\/[^\/]+\//) { split(p, a, "/"); return a[1] "/" a[2] }
	if (p ~ /^mgmtd\//) return "mgmtd"
	if (p ~ /^policy\//) return "policy"
	return "?"
}
# "a/./b/../c" as "a/c"; a path that leaves the tree keeps its "../".
function norm(p,   a, n, i, out, k) {
	n = split(p, a, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (a[i] == "." || a[i] == "") continue
		if (a[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
		out[++k] = a[i]
	}
	p = ""
	for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
	return p
}
BEGIN {
	# What each layer may include besides itself.
	may["include"] = ""
	may["os"] = "include"
	may["core"] = "os include"
	may["core/lrc"] = "core os include"
	may["sim"] = "core os include"
	may["linux"] = "core core/lrc sim os include"
	may["user"] = "core core/lrc sim os include guest/include lib/util"
	may["guest/include"] = "include"
	may["guest/lib"] = may["guest/tools"] = may["guest/examples"] = "guest/include include lib/util"
	may["guest/kernel"] = "include"
	may["policy"] = "lib/util"
	may["tools/vgmem-nl"] = "include lib/vgnl lib/util"
	may["tools/vgmem-guest-inproc"] = "guest/tools guest/include user core sim os include lib/util"
	may["tools/vgmem-sim"] = "user core core/lrc sim os include guest/include lib/util"
	may["tools/vgmemctl"] = "include lib/util"
	may["mgmtd"] = "policy include lib/vgnl lib/util user core core/lrc sim os guest/include"
	n = split(debts, d, "\n")
	for (i = 1; i <= n; i++) if (d[i] != "") debt[d[i]] = 1
}
NR == FNR { tracked[$0] = 1; next }
{
	sub(/^[^:]*:/, "")
	n = split($0, dep, " ")
	f = dep[1]
	from = layer(f)
	if (from == "?") next
	if (!(from in may)) may[from] = (from ~ /^lib\//) ? "include" : ""
	ok = " " from " " may[from] " "
	bad = 0
	for (i = 2; i <= n; i++) {
		h = norm(dep[i])
		if (h ~ /^(\/|\.\.\/)/ || !(h in tracked) || h == f) continue
		to = layer(h)
		if (index(ok, " " to " ") && (h !~ /_(internal|priv)\.h$/ || to == from)) continue
		if ((from " " h) in debt) { seen[from " " h] = 1; continue }
		printf "FAIL: %s (%s) includes %s (%s): %s may include %s, and no other folder'"'"'s *_internal.h or *_priv.h\n", f, from, h, to, from, may[from]
		bad = 1
	}
	if (bad) failed++; else passed++
}
END {
	# A debt that was paid must leave the list (so it cannot come back unseen).
	for (k in debt) if (!(k in seen)) {
		print "FAIL: the debt \"" k "\" is gone: remove it from DEBTS"
		failed++
	}
	print "COUNT", passed + 0, failed + 0
}' <(git ls-files) - <<<"$rules")
grep -v '^COUNT ' <<<"$result"
read -r _ passed failed < <(grep '^COUNT ' <<<"$result")
# Another folder's header by its path from the root (or host-module/),
# never by ../ (docs/architecture.md): tests and programs included.
rel=$(git grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"\.\./' -- '*.c' '*.h' || true)
if [ -n "$rel" ]; then
	echo "FAIL: includes by a ../ path:"
	echo "$rel"
	failed=$((failed + 1))
fi
echo "layers: $passed sources checked, $failed failing"
[ "$failed" = 0 ] || { echo "[  FAILED  ] $failed test(s)."; exit 1; }
echo "[  PASSED  ] 1 test(s)."
