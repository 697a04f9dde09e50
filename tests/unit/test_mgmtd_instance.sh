#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# One mgmtd per state database and per REST socket. With a first mgmtd (A)
# serving, for the plain and the ASan/UBSan build of mgmtd alike:
#  1. a second one on the same state_db and socket exits non-zero before
#     serving, saying that the database is in use by A's pid, and A's socket
#     is still there and answers after the second one has exited;
#  2. a second one on another state_db but the same socket exits non-zero,
#     saying that another mgmtd serves on the socket; A still answers;
#  3. A killed with SIGKILL leaves its socket file behind (stale) and its
#     lock released: a new mgmtd on the same database and socket starts,
#     replaces the stale socket and answers; SIGTERM removes its socket.
#  4. the first one's log says where it serves REST; listen_tcp without
#     token_file, and a token_file that cannot be read, each exit 2 naming
#     the setting (issue 17 item 4); and, with an embedded VM web1, a
#     policy refused through vgmemctl names the VM, the field and the
#     size as written ("web1: min 40M is above low 32MiB").
# mgmtd runs with the embedded backend and without libvirt: nothing outside
# the temporary directory is touched.
#
# Prints "[  PASSED  ] N test(s)." like cmocka so `make run-tests` counts it.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/mgmtd-inst-XXXXXX)
pids=()
VM1=00000000-0000-4000-8000-0000000000e1

cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done
	wait 2> /dev/null
	[ -n "${KEEP_TMP:-}" ] && echo "tmp: $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

. "$ROOT/tests/lib/report.sh"

# start_mgmtd BIN DB SOCK LOG [ARGS...]: in the background; its pid in $started.
start_mgmtd() {
	local bin=$1 db=$2 sock=$3 log=$4
	shift 4
	"$bin" --backend embedded --libvirt-uri none --state-db "$db" \
		--listen-unix "$sock" --recompute-ms 3600000 "$@" > "$log" 2>&1 &
	started=$!
	pids+=("$started")
}

# refused_saying NAME PATTERN CTL ARGS...: vgmemctl fails and says PATTERN.
refused_saying() {
	local name=$1 pat=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		not_ok "$name" "accepted: $out"
	elif grep -qF -- "$pat" <<< "$out"; then
		ok "$name"
	else
		not_ok "$name" "expected: $pat" "$out"
	fi
}

# answers CTL SOCK: the daemon on SOCK answers GET /healthz.
answers() {
	"$1" --socket "$2" --timeout 10 health > /dev/null 2>&1
}

# wait_answers CTL SOCK: bounded generously (a loaded host, ASan), for
# liveness only.
wait_answers() {
	local i
	for i in $(seq 1 600); do
		answers "$1" "$2" && return 0
		sleep 0.2
	done
	return 1
}

# wait_exit PID: its exit status once it ended (bounded), 255 if it did not.
wait_exit() {
	local i
	for i in $(seq 1 600); do
		if ! kill -0 "$1" 2> /dev/null; then
			wait "$1"
			return $?
		fi
		sleep 0.2
	done
	return 255
}

# exits_2_saying NAME LOG PATTERN BIN ARGS...: mgmtd without a unix socket,
# run to its end, exits 2 and its output has PATTERN.
exits_2_saying() {
	local name=$1 log=$2 pat=$3 bin=$4 rc
	shift 4
	"$bin" --backend embedded --libvirt-uri none --state-db "${log%.log}.db" \
		--listen-unix "" "$@" > "$log" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q "$pat" "$log"; then
		ok "$name"
	else
		not_ok "$name" "exit status $rc" "$(cat "$log")"
	fi
}

run_variant() {
	local v=$1 bin=$2 ctl=$3 d=$TMP/$1 a b rc
	mkdir -p "$d"
	start_mgmtd "$bin" "$d/state.db" "$d/sock" "$d/a.log" \
		--embedded-vram 64M --embedded-vm web1:$VM1:64M
	a=$started
	if ! wait_answers "$ctl" "$d/sock"; then
		not_ok "$v: the first mgmtd answers" "$(cat "$d/a.log")"
		return
	fi
	ok "$v: the first mgmtd answers"
	if grep -q "ready, serving REST on unix socket $d/sock" "$d/a.log"; then
		ok "$v: the log says where mgmtd serves"
	else
		not_ok "$v: the log says where mgmtd serves" "$(cat "$d/a.log")"
	fi
	# A refused policy names the VM, the field and the size as written.
	if "$ctl" --socket "$d/sock" policy web1 --patch --low 32M > "$d/pol.out" 2>&1; then
		refused_saying "$v: vgmemctl policy --patch --min names VM, fields and sizes" \
			"web1: min 40M is above low 32MiB" \
			"$ctl" --socket "$d/sock" policy web1 --patch --min 40M
	else
		not_ok "$v: vgmemctl policy web1 --patch --low 32M" "$(cat "$d/pol.out")"
	fi
	# TCP without a usable token: a bad setting, named, exit 2 (as a bad option).
	exits_2_saying "$v: listen_tcp without token_file exits 2 naming both" \
		"$d/tcp.log" "listen_tcp 127.0.0.1:1 needs token_file" \
		"$bin" --listen-tcp 127.0.0.1:1
	exits_2_saying "$v: an unreadable token_file exits 2 naming it" \
		"$d/tok.log" "token_file $d/no-such-token: No such file" \
		"$bin" --listen-tcp 127.0.0.1:1 --token-file "$d/no-such-token"

	# 1. the same database and socket
	start_mgmtd "$bin" "$d/state.db" "$d/sock" "$d/b.log"
	b=$started
	wait_exit "$b"
	rc=$?
	if [ "$rc" = 0 ] || [ "$rc" = 255 ]; then
		not_ok "$v: a second mgmtd on the same state_db is refused" \
			"exit status $rc (255: still running)" "$(cat "$d/b.log")"
		kill -9 "$b" 2> /dev/null
	elif ! grep -q "state: $d/state.db is in use by another mgmtd (pid $a, " "$d/b.log"; then
		not_ok "$v: a second mgmtd on the same state_db says why" "$(cat "$d/b.log")"
	else
		ok "$v: a second mgmtd on the same state_db is refused (exit $rc)"
	fi
	if [ -S "$d/sock" ] && answers "$ctl" "$d/sock"; then
		ok "$v: the first mgmtd still answers on its socket"
	else
		not_ok "$v: the first mgmtd still answers on its socket" \
			"$(ls -l "$d")" "$(cat "$d/a.log")"
	fi

	# 2. another database, the same socket
	start_mgmtd "$bin" "$d/other.db" "$d/sock" "$d/c.log"
	b=$started
	wait_exit "$b"
	rc=$?
	if [ "$rc" = 0 ] || [ "$rc" = 255 ]; then
		not_ok "$v: a second mgmtd on a live socket is refused" \
			"exit status $rc (255: still running)" "$(cat "$d/c.log")"
		kill -9 "$b" 2> /dev/null
	elif ! grep -q "another mgmtd is serving on $d/sock" "$d/c.log"; then
		not_ok "$v: a second mgmtd on a live socket says why" "$(cat "$d/c.log")"
	else
		ok "$v: a second mgmtd on a live socket is refused (exit $rc)"
	fi
	if [ -S "$d/sock" ] && answers "$ctl" "$d/sock"; then
		ok "$v: the first mgmtd still answers after the second exited"
	else
		not_ok "$v: the first mgmtd still answers after the second exited" \
			"$(ls -l "$d")" "$(cat "$d/a.log")"
	fi

	# 3. a crashed first one: its stale socket is replaced
	kill -9 "$a"
	wait "$a" 2> /dev/null
	if [ ! -S "$d/sock" ]; then
		not_ok "$v: SIGKILL leaves a stale socket" "$(ls -l "$d")"
		return
	fi
	start_mgmtd "$bin" "$d/state.db" "$d/sock" "$d/d.log"
	b=$started
	if wait_answers "$ctl" "$d/sock"; then
		ok "$v: after a crash a new mgmtd replaces the stale socket"
	else
		not_ok "$v: after a crash a new mgmtd replaces the stale socket" "$(cat "$d/d.log")"
	fi
	kill -TERM "$b"
	wait_exit "$b"
	rc=$?
	if [ "$rc" = 0 ] && [ ! -e "$d/sock" ]; then
		ok "$v: SIGTERM ends it and removes its socket"
	else
		not_ok "$v: SIGTERM ends it and removes its socket" "exit status $rc" \
			"$(ls -l "$d")" "$(cat "$d/d.log")"
	fi
	if grep -l "Sanitizer\|runtime error" "$d"/*.log > /dev/null; then
		not_ok "$v: no sanitizer report" "$(grep -A5 "Sanitizer\|runtime error" "$d"/*.log)"
	else
		ok "$v: no sanitizer report"
	fi
}

for v in plain asan; do
	case $v in
	plain) bin=$ROOT/build/bin/mgmtd ctl=$ROOT/build/bin/vgmemctl ;;
	asan) bin=$ROOT/build/asan/bin/mgmtd ctl=$ROOT/build/asan/bin/vgmemctl ;;
	esac
	if [ ! -x "$bin" ] || [ ! -x "$ctl" ]; then
		not_ok "$v: $bin and $ctl are built"
		continue
	fi
	run_variant "$v" "$bin" "$ctl"
done

finish
