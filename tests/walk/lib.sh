# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The walk's runtime, sourced by the script tests/walk/blocks.sh makes of a
# page's blocks (bash). Each block is printed as the page shows it, then
# run; the first command that fails ends the walk with
#   WALK FAIL PAGE:LINE: 'COMMAND' exited N
# and a block that ran through prints WALK OK PAGE:LINE. WALK_PAGE names
# the page in these lines.
#
# An sh block runs with errexit, as one would want an
# operator's copy-and-paste to stop at the first error; a console block's
# commands run in a subshell each, their output compared with what the
# page shows (see blocks.sh).

WALK_PAGE=${WALK_PAGE:-operations.md}
# A block still running after WALK_SLOW seconds gets the machine's state
# printed (every WALK_SLOW seconds), so a walk that hangs says where.
WALK_SLOW=${WALK_SLOW:-240}
walk_at=0
walk_blocks=0
walk_dog=

# What a slow block waits on: processes, domains, mgmtd's view, the logs.
walk_diag()
{
	echo "walk: operations.md:$walk_at still running after $1 s; the machine's state:"
	ps -eo pid,ppid,stat,etime,time,args --forest | grep -v '\[.*\]$' | cut -c1-200
	timeout 20 virsh list --all 2>&1
	timeout 20 vgmemctl vms 2>&1
	cat /proc/pressure/cpu 2>/dev/null
	journalctl -b --no-pager -n 60 2>&1 | cut -c1-300
	dmesg | tail -n 30
}

# (Its sleep is killed with it, and holds no output open if it outlives
# it: it would keep the walk's output open.)
walk_watch()
{
	local t=0 sp=
	trap '[ -n "$sp" ] && kill $sp 2>/dev/null; exit 0' TERM
	while :; do
		sleep "$WALK_SLOW" < /dev/null > /dev/null 2>&1 &
		sp=$!
		wait $sp
		t=$((t + WALK_SLOW))
		walk_diag $t
	done
}

walk_err()
{
	local rc=$1 cmd=$2
	trap - ERR
	[ -n "$walk_dog" ] && kill "$walk_dog" 2>/dev/null
	echo "WALK FAIL $WALK_PAGE:$walk_at: '$cmd' exited $rc"
	exit 1
}

# With WALK_SYMS set (the booted machine), the running kernel's text
# symbols, its modules' included, go to the file WALK_SYMS, synced, before
# each block that follows a change of the loaded modules: if the machine
# hangs, tests/walk/hang.sh names its CPUs' RIPs with them (the kernel runs
# with nokaslr, so the addresses stay valid while the modules stay loaded).
walk_mods=
walk_syms()
{
	local m
	[ -n "${WALK_SYMS:-}" ] || return 0
	m=$(cksum < /proc/modules)
	[ "$m" = "$walk_mods" ] && return 0
	walk_mods=$m
	grep ' [tTwW] ' /proc/kallsyms > "$WALK_SYMS.new" && mv "$WALK_SYMS.new" "$WALK_SYMS" && sync
}

# walk_block LINE KIND < TEXT: the block starting at LINE is next.
walk_block()
{
	walk_syms
	walk_at=$1
	echo
	echo "---- $WALK_PAGE:$1 ($2) ----"
	sed 's/^/| /'
	echo "----"
	walk_watch &
	walk_dog=$!
	set -eE
	trap 'walk_err $? "$BASH_COMMAND"' ERR
}

walk_end()
{
	trap - ERR
	kill "$walk_dog" 2>/dev/null
	walk_dog=
	set +eE
	walk_blocks=$((walk_blocks + 1))
	echo "WALK OK $WALK_PAGE:$1"
}

# A line the page shows as output, as a bash pattern: glob characters
# stand for themselves, `...` for any text.
walk_pattern()
{
	local p=$1
	p=${p//\\/\\\\}
	p=${p//\*/\\*}
	p=${p//\?/\\?}
	p=${p//\[/\\[}
	printf '%s' "${p//.../*}"
}

# walk_console LINE < COMMAND, with WALK_EXPECT set: runs COMMAND and
# requires each line of WALK_EXPECT in its output, in order.
walk_console()
{
	local cmd out rc want line pat
	local -a lines

	trap - ERR
	set +eE
	cmd=$(cat)
	echo "\$ $cmd"
	out=$(eval "$cmd" 2>&1 < /dev/null)
	rc=$?
	printf '%s\n' "$out"
	echo "(exit $rc)"
	mapfile -t lines <<<"$out"
	local i=0
	while IFS= read -r want; do
		[ -n "$want" ] || continue
		pat=$(walk_pattern "$want")
		while [ $i -lt ${#lines[@]} ]; do
			line=${lines[$i]}
			i=$((i + 1))
			# shellcheck disable=SC2053
			[[ $line == $pat ]] && continue 2
		done
		echo "WALK FAIL $WALK_PAGE:$1: '$cmd' did not print, in this order after what came before:"
		echo "    $want"
		[ -n "$walk_dog" ] && kill "$walk_dog" 2>/dev/null
		exit 1
	done <<<"$WALK_EXPECT"
	set -eE
	trap 'walk_err $? "$BASH_COMMAND"' ERR
}

# The page's commands that go on until interrupted (`vgmemctl top`, `vms
# --watch`, `events --follow`) run in a terminal of their own (script(1)):
# top until it reads the `q` it is sent after a few seconds, the others
# until SIGINT after a few seconds, as an operator's ^C. top and --watch
# must have printed something, and top must end by its `q` (status 0).
vgmemctl()
{
	local a forever= once= out rc cmd
	for a in "$@"; do
		case $a in
		top|--watch|--watch=*|--follow) forever=$a ;;
		--once) once=1 ;;
		esac
	done
	if [ -z "$forever" ] || [ -n "$once" ]; then
		command vgmemctl "$@"
		return
	fi
	cmd=$(printf '%q ' vgmemctl "$@")
	# "|| rc=$?": errexit would end the walk before the status is judged.
	if [ "$forever" = top ]; then
		rc=0
		out=$( { sleep 5; printf q; } | TERM=${TERM:-xterm} timeout 60 script -qec "$cmd" /dev/null) ||
			rc=$?
	else
		rc=0
		out=$(timeout -s INT 6 script -qec "$cmd" /dev/null < /dev/null) || rc=$?
		[ $rc = 124 ] && rc=0	# ended by the walk's ^C
	fi
	printf '%s\n' "$out" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | tail -n 30
	# (--follow prints only what happens meanwhile, which may be nothing.)
	[ -n "$out" ] || [ "$forever" = --follow ] || { echo "walk: '$cmd' printed nothing"; return 1; }
	return $rc
}
