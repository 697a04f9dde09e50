#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Turns the command blocks of a Markdown page into a bash script: the
# commands an operator types, in the page's order, for one stage of
# tests/walk/walk.sh.
#
# Usage: tests/walk/blocks.sh [--check] PAGE [STAGE]
#
# A command block is a fence of type `sh` or `console`, and the line right
# before its opening fence names where it runs:
#
#   <!-- walk: STAGE -->
#
# STAGE is `chroot` (in the Debian root before it boots: installing the
# packages) or `boot` (on the booted machine, as root, in the walk's order).
# An `sh` block runs as it is, in one shell for the whole stage (variables
# carry over as in an operator's shell); any command that fails fails the
# walk and names the page's line. In a `console` block, a line starting
# with `$ ` is a command (a trailing backslash continues it on the next
# line) and the lines after it, up to the next command, are what it prints:
# each must appear in its output, in order, `...` matching any text; the
# command's exit status is not judged (a console block shows errors too).
#
# The script calls walk_block, walk_console and walk_end from
# tests/walk/lib.sh, which the caller sources first.
#
# --check: only verify that every `sh` and `console` block has a walk line
# naming a known stage, and that a walk line is followed by such a block;
# print each problem as PAGE:LINE and exit 1 if there is one.
set -euo pipefail

check=0
[ "${1:-}" = --check ] && { check=1; shift; }
[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n 's/^# \{0,1\}//; /^Usage:/p' "$0" >&2; exit 2; }
page=$1
stage=${2:-}
[ -r "$page" ] || { echo "blocks: cannot read $page" >&2; exit 2; }
[ $check = 1 ] || [ -n "$stage" ] || { echo "blocks: a STAGE is needed without --check" >&2; exit 2; }

exec awk -v page="${page##*/}" -v want="$stage" -v check=$check '
function flush_cmd() {
	if (cmd == "")
		return
	printf "WALK_EXPECT=$(cat <<'"'"'WALK_X_EOF'"'"'\n%sWALK_X_EOF\n)\n", expect
	printf "walk_console %d <<'"'"'WALK_C_EOF'"'"'\n%s\nWALK_C_EOF\n", cmdline, cmd
	cmd = ""; expect = ""
}
BEGIN { bad = 0; tag = ""; in_block = 0 }
# A block not emitted: skip to its closing fence.
in_block {
	if ($0 ~ /^```[ \t]*$/)
		in_block = 0
	next
}
/^```/ {
	lang = $0; sub(/^```[ \t]*/, "", lang); sub(/[ \t].*/, "", lang)
	if (lang == "sh" || lang == "console") {
		if (tag == "") {
			printf "%s:%d: a `%s` block without a walk line before it\n", page, NR, lang > "/dev/stderr"
			bad = 1
		} else if (tag != "chroot" && tag != "boot") {
			printf "%s:%d: unknown walk stage \"%s\" (chroot or boot)\n", page, NR - 1, tag > "/dev/stderr"
			bad = 1
		}
		kind = lang; start = NR; cmd = ""; expect = ""; cont = 0
		emit = (!check && tag == want)
		if (emit)
			printf "walk_block %d %s <<'"'"'WALK_B_EOF'"'"'\n", NR, kind
	} else if (tag != "") {
		printf "%s:%d: a walk line before a `%s` block (only sh and console blocks run)\n", page, NR - 1, lang > "/dev/stderr"
		bad = 1
		emit = 0
	} else {
		emit = 0
	}
	in_block = 1; tag = ""
	if (emit) {
		# The block as the page shows it, for the log, then the block.
		while ((getline line) > 0) {
			if (line ~ /^```[ \t]*$/)
				break
			body[++n] = line
		}
		for (i = 1; i <= n; i++)
			print body[i]
		print "WALK_B_EOF"
		# Replay the body through the rules above.
		for (i = 1; i <= n; i++) {
			$0 = body[i]
			if (kind == "sh") {
				print
				continue
			}
			if (cont) {
				cmd = cmd "\n" $0
				cont = ($0 ~ /\\$/)
				continue
			}
			if (substr($0, 1, 2) == "$ ") {
				flush_cmd()
				cmd = substr($0, 3); cmdline = start + i
				cont = ($0 ~ /\\$/)
				continue
			}
			if (cmd != "" && $0 != "")
				expect = expect $0 "\n"
		}
		if (kind == "console")
			flush_cmd()
		printf "walk_end %d\n", start
		delete body; n = 0; in_block = 0
	}
	next
}
/^<!-- walk: [a-z0-9]+ -->[ \t]*$/ {
	tag = $3
	next
}
/<!-- walk:/ {
	printf "%s:%d: a walk line is \"<!-- walk: STAGE -->\" alone on its line\n", page, NR > "/dev/stderr"
	bad = 1
	next
}
{
	if (tag != "") {
		printf "%s:%d: a walk line not followed by a block\n", page, NR - 1 > "/dev/stderr"
		bad = 1
	}
	tag = ""
}
END { exit bad }
' "$page"
