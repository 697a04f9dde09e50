#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The walk of docs/operations.md (tests/walk/) without a machine to walk
# on: every command block of the page names its stage; blocks.sh refuses a
# page with an unmarked or mismarked block; the script it makes runs a
# page's blocks in order in one shell, stops at the first command that
# fails naming the page's line, and compares a console block's output with
# what the page shows (`...` for any text), failing when it differs.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=tests/walk/blocks.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib/report.sh
# walk PAGE STAGE: the stage's script, run as walk.sh runs it.
walk() { { echo '. tests/walk/lib.sh'; "$B" "$1" "$2" && echo 'echo "WALK DONE $walk_blocks"'; } | bash 2>&1; }

if out=$("$B" --check docs/operations.md 2>&1); then
	n=$(grep -cE '^```(sh|console)' docs/operations.md)
	[ "$n" -ge 10 ] && ok "docs/operations.md: all $n command blocks name their stage" ||
		not_ok "docs/operations.md has its command blocks" "only $n"
else
	not_ok "docs/operations.md: every command block names its stage" "$out"
fi

printf '# p\n\n```sh\necho hi\n```\n' > "$T/unmarked.md"
printf '<!-- walk: later -->\n```sh\necho hi\n```\n' > "$T/stage.md"
printf '<!-- walk: boot -->\n```xml\n<a/>\n```\n' > "$T/xml.md"
printf '<!-- walk: boot -->\ntext\n' > "$T/dangling.md"
for c in "unmarked:without a walk line" "stage:unknown walk stage" "xml:only sh and console" "dangling:not followed by a block"; do
	f=${c%%:*} want=${c#*:}
	out=$("$B" --check "$T/$f.md" 2>&1) && { not_ok "--check refuses $f.md" "it passed"; continue; }
	grep -q "$want" <<<"$out" && grep -q "$f.md:[0-9]" <<<"$out" && ok "--check refuses $f.md: $want" ||
		not_ok "--check refuses $f.md with '$want' and the line" "$out"
done

cat > "$T/page.md" <<'EOF'
# A page

<!-- walk: boot -->
```sh
x=41
x=$((x + 1))
```

Not run:

```sh-session
whatever
```

<!-- walk: chroot -->
```sh
echo this is the chroot stage
```

<!-- walk: boot -->
```console
$ echo "x is $x" \
    "and more"
x is 42 and...
$ printf 'a\nb [*]\nc\n'
a
b [*]
$ false; echo status $?
status 1
```
EOF
out=$(walk "$T/page.md" boot)
if grep -q '^WALK DONE 2$' <<<"$out" && grep -q '^x is 42 and more$' <<<"$out" &&
	! grep -q 'chroot stage' <<<"$out" && ! grep -q WALK.FAIL <<<"$out"; then
	ok "a page's boot blocks run in order in one shell (a variable carries over), its chroot block not"
else
	not_ok "the boot blocks of a page" "$out"
fi
out=$(walk "$T/page.md" chroot)
grep -q '^this is the chroot stage$' <<<"$out" && grep -q '^WALK DONE 1$' <<<"$out" &&
	ok "the chroot stage runs only the chroot block" || not_ok "the chroot stage" "$out"

sed 's/^b \[\*\]$/b [x]/' "$T/page.md" > "$T/differs.md"
out=$(walk "$T/differs.md" boot)
if grep -q '^WALK FAIL [a-z.]*:25: .*did not print' <<<"$out" && grep -q '^    b \[x\]$' <<<"$out" &&
	! grep -q '^WALK DONE' <<<"$out"; then
	ok "output other than the page shows fails the walk, naming the command's line and the line missing"
else
	not_ok "a console block whose output differs" "$out"
fi

sed 's/^x=\$((x + 1))$/x=$((x + 1)); false; echo not reached/' "$T/page.md" > "$T/fails.md"
out=$(walk "$T/fails.md" boot)
if grep -q "^WALK FAIL [a-z.]*:4: 'false' exited 1$" <<<"$out" && ! grep -q '^not reached\|^WALK DONE' <<<"$out"; then
	ok "a failing command stops the walk, naming its block's line and the command"
else
	not_ok "a failing command in an sh block" "$out"
fi

printf '<!-- walk: boot -->\n```sh\nsleep 3\necho woke\n```\n' > "$T/slow.md"
out=$(WALK_SLOW=1 walk "$T/slow.md" boot)
if grep -q '^walk: operations.md:2 still running after 1 s' <<<"$out" && grep -q '^woke$' <<<"$out" &&
	grep -q '^WALK DONE 1$' <<<"$out"; then
	ok "a block still running after WALK_SLOW seconds gets the machine's state printed, and goes on"
else
	not_ok "the watchdog of a slow block" "$out"
fi

finish
