# SPDX-License-Identifier: GPL-2.0 OR MIT
# bench 20-suspend: how long a victim VM stays suspended per relocation,
# against the copy time of the bytes moved. A victim holds 32 MiB of a
# 64 MiB GPU (entitled to nothing); a peer (entitled to all of it) allocates
# 36-64 MiB, which pushes part or all of the victim out, frees, and the
# return worker brings it back. Every relocation event of the netlink
# family (vgmem-nl monitor --json: chunks, bytes, suspend_ns) is compared
# with two copy times of its bytes:
#   model:  bytes / pcie_bw_mbps, the software GPU's cost model (set below);
#   memcpy: the measured wall time of a CPU copy of the same bytes in 4 KiB
#           pieces in this VM (vgmem-guest bench memcpy), right after the
#           round, since under TCG the real copy is what the kernel waits for.
#           One copy (after an untimed one that touches both buffers) per
#           relocation, as a relocation copies once: both sides are single
#           samples of the same noise, compared by their medians per size;
#   own copy: the copy inside the suspension itself, timed in the kernel
#           (function_graph of the copy_submit and copy_wait calls of
#           vg_relocate_vm, whose few microseconds of tracing count in the
#           suspension): suspension - own copy is the suspension's overhead,
#           both measured in the same event.
# Goal: suspension <= copy + 200 us. Prints VMBENCH lines; never fails on timing.
# vmtest-timeout: 900

require_guest
command -v vgmem-nl > /dev/null || skip "vgmem-nl is not built yet"
PCIE_MBPS=${VMBENCH_PCIE_MBPS:-12288}
SIZES=${VMBENCH_PEER_SIZES:-"36M 40M 48M 64M 36M 40M 48M 64M 36M 40M 48M 64M 36M 40M 48M 64M"}
SLACK_NS=200000
MIB=1048576

vg_setup gpus=1 vram_mb=64 pcie_bw_mbps=$PCIE_MBPS
set_oversub 6400
echo 50 > $(gpu_dir)/return_interval_ms || fail "setting return_interval_ms"
v=$(mdev_create 1g) || exit 1
p=$(mdev_create 1g) || exit 1
echo 1 > $MDEV_DEVS/$v/vgmem/entitlement || fail "setting the victim's entitlement"
echo $((64 * MIB)) > $MDEV_DEVS/$p/vgmem/entitlement || fail "setting the peer's entitlement"

vgmem-nl --json monitor > /tmp/bench.ev 2> /tmp/bench.mon.err &
mon=$!
wait_until 10 grep -q monitoring /tmp/bench.mon.err || fail "vgmem-nl monitor did not start"

guest_bg victim --dev $v alloc --size 32M --bo 8M --hold 100000
wait_until 120 grep -q before_hold /tmp/guest.victim.log ||
	fail "the victim never filled its 32 MiB: $(tail -n 2 /tmp/guest.victim.log)"

# The relocation's own copy: function_graph of vg_relocate_vm down to the
# backend calls it makes, only the three functions traced.
TR=/sys/kernel/debug/tracing
tracing=0
if [ -w $TR/set_graph_function ] &&
	echo vg_relocate_vm > $TR/set_ftrace_filter 2>/dev/null &&
	echo sim_op_copy_submit >> $TR/set_ftrace_filter 2>/dev/null &&
	echo sim_op_copy_wait >> $TR/set_ftrace_filter 2>/dev/null &&
	echo vg_relocate_vm > $TR/set_graph_function 2>/dev/null &&
	echo 2 > $TR/max_graph_depth && echo 4096 > $TR/buffer_size_kb &&
	echo function_graph > $TR/current_tracer 2>/dev/null; then
	: > $TR/trace
	echo 1 > $TR/tracing_on
	tracing=1
else
	info "no function_graph tracer: the suspensions are not compared with their own copies"
fi

# ev_field NAME LINE
ev_field() {
	echo "$2" | sed -n "s/.*\"$1\": \"*\([^\",}]*\).*/\1/p"
}

: > /tmp/bench.res
# nrel, not n: wait_until (lib.sh) counts its polls in n.
seen=0 nrel=0 met_model=0 met_copy=0 nown=0 met_own=0
ovm= ovc= rm= rc= ovo=
round=1
for s in $SIZES; do
	out=$(vgmem-guest --dev $p alloc --size $s --bo 4M 2>&1) ||
		fail "peer alloc $s: $(echo "$out" | tail -n 1)"
	wait_until 60 sh -c "[ \$(cat $MDEV_DEVS/$v/vgmem/relocated) -eq 0 ]" ||
		fail "the victim's chunks did not come back after round $round"
	sleep 0.3	# the last event reaches the monitor
	total=$(grep -c '"relocation"' /tmp/bench.ev)
	grep '"relocation"' /tmp/bench.ev | tail -n $((total - seen)) > /tmp/bench.round
	seen=$total
	# One line per relocation that copied (a relocation that failed
	# before its copy has no children and no event): its copy time in us.
	# If the counts differ (one failed after its copy), none is used.
	: > /tmp/bench.kcopy
	if [ $tracing = 1 ]; then
		awk '/vg_relocate_vm/ && index($0, "{") { if (n) print c; n++; c = 0; next }
			/sim_op_copy_(submit|wait)/ && match($0, /[0-9.]+ us/) {
				c += substr($0, RSTART, RLENGTH - 3) }
			END { if (n) print c }' $TR/trace > /tmp/bench.kcopy
		: > $TR/trace
		[ $(wc -l < /tmp/bench.kcopy) -eq $(wc -l < /tmp/bench.round) ] ||
			: > /tmp/bench.kcopy
	fi
	i=0
	while read -r line; do
		i=$((i + 1))
		bytes=$(ev_field bytes "$line"); sus=$(ev_field suspend_ns "$line")
		[ -n "$bytes" ] && [ "$bytes" -gt 0 ] || continue
		cp=$(vgmem-guest-inproc --inproc --vram 4M bench memcpy --size $bytes --count 1 2>&1 | tail -n 1)
		cpus=$(echo "$cp" | sed -n 's/.* p50_us=\([0-9.]*\).*/\1/p')
		[ -n "$cpus" ] || fail "bench memcpy of $bytes bytes: $cp"
		kc=$(sed -n "${i}p" /tmp/bench.kcopy)
		res=$(awk -v b=$bytes -v s=$sus -v bw=$PCIE_MBPS -v c=$cpus -v sl=$SLACK_NS \
			-v k="$kc" 'BEGIN {
			m = b * 1e9 / (bw * 1048576); c = c * 1000
			k = k == "" ? -1 : k * 1000
			printf "%.0f %.0f %d %d %.0f %.0f %.3f %.3f %.0f %d %.0f", m, c,
				s <= m + sl, s <= c + sl, s - m, s - c, s / m, s / c,
				k, (k >= 0 && s <= k + sl), s - k }')
		set -- $res
		nrel=$((nrel + 1)); met_model=$((met_model + $3)); met_copy=$((met_copy + $4))
		ovm="$ovm $5"; ovc="$ovc $6"; rm="$rm $7"; rc="$rc $8"
		if [ $9 -ge 0 ]; then
			nown=$((nown + 1)); met_own=$((met_own + ${10})); ovo="$ovo ${11}"
		fi
		echo "$bytes $sus $1 $2 $9" >> /tmp/bench.res
		echo "reloc round=$round peer=$s vm=$(ev_field vm "$line" | cut -c1-8) dir=$(ev_field direction "$line") chunks=$(ev_field chunks "$line") bytes=$bytes suspend_us=$((sus / 1000)) model_copy_us=$(($1 / 1000)) memcpy_us=$(($2 / 1000)) own_copy_us=$(($9 / 1000)) over_model_us=$(($5 / 1000)) over_memcpy_us=$(($6 / 1000)) over_own_copy_us=$((${11} / 1000))"
	done < /tmp/bench.round
	round=$((round + 1))
done

if [ $tracing = 1 ]; then
	echo 0 > $TR/tracing_on
	echo nop > $TR/current_tracer
	: > $TR/set_graph_function
	: > $TR/set_ftrace_filter
fi
kill $(cat /tmp/guest.victim.pid) 2>/dev/null
guest_reap victim > /dev/null 2>&1
kill $mon 2>/dev/null
wait $mon 2>/dev/null
mdev_remove $v
mdev_remove $p
[ $nrel -gt 0 ] || fail "no relocation event seen (monitor: $(cat /tmp/bench.mon.err))"

median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
max() {
	printf '%s\n' "$@" | sort -n | tail -n 1
}
# Per size: medians of the suspensions and of the copies. A single event
# is compared with a copy timed at another moment, and under TCG on a busy
# host either can take several times its usual time (a 4 MiB memcpy was
# timed at 2.0 and at 6.7 ms in one run), so the goal is judged on these
# medians; the per-event count follows in the summaries.
nsizes=0 sizes_met=0
for b in $(cut -d' ' -f1 /tmp/bench.res | sort -n -u); do
	grep "^$b " /tmp/bench.res > /tmp/bench.size
	k=$(wc -l < /tmp/bench.size)
	ms=$(median $(cut -d' ' -f2 /tmp/bench.size))
	mm=$(median $(cut -d' ' -f3 /tmp/bench.size))
	mc=$(median $(cut -d' ' -f4 /tmp/bench.size))
	# Suspension minus own copy per event, where the copy was timed.
	mo=$(median $(awk '$5 >= 0 { print $2 - $5 }' /tmp/bench.size))
	ok=$(awk -v s=$ms -v c=$mc -v sl=$SLACK_NS 'BEGIN { print s <= c + sl ? 1 : 0 }')
	nsizes=$((nsizes + 1)); sizes_met=$((sizes_met + ok))
	awk -v b=$b -v k=$k -v s=$ms -v m=$mm -v c=$mc -v ok=$ok -v o="$mo" 'BEGIN {
		printf "VMBENCH suspend bytes=%d relocations=%d median suspend_us=%.0f model_copy_us=%.0f memcpy_us=%.0f: suspension - copy %.0f us (model), %.0f us (memcpy): %s%s\n",
			b, k, s / 1000, m / 1000, c / 1000, (s - m) / 1000, (s - c) / 1000,
			ok ? "met (memcpy)" : "NOT met (memcpy)",
			o == "" ? "" : sprintf("; suspension - own copy median %.0f us", o / 1000) }'
done
awk -v n=$nrel -v mm=$met_model -v mc=$met_copy -v om="$(median $ovm)" -v oc="$(median $ovc)" \
	-v xm="$(max $ovm)" -v xc="$(max $ovc)" -v rm="$(median $rm)" -v rc="$(median $rc)" \
	-v bw=$PCIE_MBPS 'BEGIN {
	printf "VMBENCH suspend vs model copy (pcie_bw_mbps=%d): %d relocations, suspension - copy median %.0f us, max %.0f us; RATIO suspension/copy median %.2f; goal suspension <= copy + 200 us for every relocation: %s (%d of %d)\n",
		bw, n, om / 1000, xm / 1000, rm, mm == n ? "met" : "NOT met", mm, n
	printf "VMBENCH suspend vs measured memcpy in the VM: %d relocations, suspension - copy median %.0f us, max %.0f us; RATIO suspension/copy median %.2f; goal suspension <= copy + 200 us for every relocation: %s (%d of %d)\n",
		n, oc / 1000, xc / 1000, rc, mc == n ? "met" : "NOT met", mc, n
}'
[ $nown -gt 0 ] && awk -v n=$nown -v k=$met_own -v o="$(median $ovo)" -v x="$(max $ovo)" 'BEGIN {
	printf "VMBENCH suspend vs its own copy (timed in the kernel): %d relocations, suspension - copy median %.0f us, max %.0f us; goal suspension <= copy + 200 us for every relocation: %s (%d of %d)\n",
		n, o / 1000, x / 1000, k == n ? "met" : "NOT met", k, n
}'
awk -v k=$sizes_met -v n=$nsizes 'BEGIN {
	printf "VMBENCH suspend vs measured memcpy in the VM, median per size: goal suspension <= copy + 200 us: %s (%d of %d sizes)\n",
		k == n ? "met" : "NOT met", k, n
}'
