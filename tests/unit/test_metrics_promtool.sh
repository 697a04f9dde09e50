#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# mgmtd's /metrics and the shipped Prometheus rules, checked by Prometheus'
# own promtool (Debian 12's, fetched by scripts/fetch-promtool.sh):
#  1. a live scrape of mgmtd (embedded backend, two GPUs with a host-RAM
#     budget on neither, VMs with and without a name) passes `promtool
#     check metrics` without a word, and a broken exposition fed to the
#     same check fails (the check can fail);
#  2. the conventions promtool does not check: a family with bytes in its
#     name or its HELP ends in _bytes (or _bytes_total), gauges never end
#     in _total,
#     every vgmem_vm_ series has the labels vm, domain, domain_uuid, gpu
#     and every vgmem_gpu_ series gpu and device; an unlimited budget is
#     +Inf;
#  3. deploy/prometheus/vgmem.rules.yml passes `promtool check rules` and
#     its unit tests (tests/prometheus/vgmem.rules.test.yml) pass `promtool
#     test rules`; deploy/prometheus/prometheus-scrape.yml is a valid
#     configuration (`promtool check config`, with a token file in place).
# Nothing outside the temporary directory is touched.
#
# Prints "[  PASSED  ] N test(s)." like cmocka so `make run-tests` counts it.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/metrics-promtool-XXXXXX)
BIN=$ROOT/build/bin
pid=

cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2> /dev/null
	wait 2> /dev/null
	[ -n "${KEEP_TMP:-}" ] && echo "tmp: $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

. "$ROOT/tests/lib/report.sh"

if ! PROMTOOL=$("$ROOT/scripts/fetch-promtool.sh" 2> "$TMP/fetch.err" | tail -n 1) ||
	[ ! -x "$PROMTOOL" ]; then
	not_ok "promtool fetched (scripts/fetch-promtool.sh)" "$(cat "$TMP/fetch.err")"
	finish
fi
ok "promtool fetched ($("$PROMTOOL" --version 2>&1 | head -n 1))"

# ---- 1. a live scrape -------------------------------------------------------
"$BIN/mgmtd" --backend embedded --libvirt-uri none --state-db "$TMP/state.db" \
	--listen-unix "$TMP/sock" --embedded-gpus 2 --embedded-vram 64M \
	--embedded-vm 'web1:00000000-0000-4000-8000-0000000000e1:96M:0' \
	--embedded-vm 'db1:00000000-0000-4000-8000-0000000000e2:32M:1' \
	> "$TMP/mgmtd.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
	"$BIN/vgmemctl" --socket "$TMP/sock" --timeout 10 health > /dev/null 2>&1 && break
	sleep 0.2
done
if ! "$BIN/vgmemctl" --socket "$TMP/sock" --timeout 30 metrics > "$TMP/metrics" 2> "$TMP/scrape.err" ||
	! grep -q '^vgmem_vm_running' "$TMP/metrics"; then
	not_ok "a live scrape of mgmtd" "$(cat "$TMP/scrape.err" "$TMP/mgmtd.log")"
	finish
fi
ok "a live scrape of mgmtd ($(grep -c '^# TYPE' "$TMP/metrics") families, $(grep -vc '^#' "$TMP/metrics") series)"

if out=$("$PROMTOOL" check metrics < "$TMP/metrics" 2>&1) && [ -z "$out" ]; then
	ok "promtool check metrics: the live scrape is clean"
else
	not_ok "promtool check metrics: the live scrape is clean" "$out"
fi

# The same check on a broken exposition: a counter without _total.
printf '# HELP vgmem_broken Broken.\n# TYPE vgmem_broken counter\nvgmem_broken 1\n' > "$TMP/bad"
if out=$("$PROMTOOL" check metrics < "$TMP/bad" 2>&1) || [ -z "$out" ]; then
	not_ok "promtool check metrics refuses a counter without _total" "exit 0: $out"
else
	ok "promtool check metrics refuses a counter without _total"
fi

# ---- 2. our conventions -----------------------------------------------------
conv=$(awk '
	# A family whose HELP speaks of bytes counts bytes.
	/^# HELP / && /[Bb]ytes/ {
		if ($3 !~ /_bytes$/ && $3 !~ /_bytes_total$/)
			print "family " $3 ": its help speaks of bytes, its name does not end in _bytes: " $0
	}
	/^# TYPE / {
		type[$3] = $4
		if ($3 ~ /bytes/ && $3 !~ /_bytes$/ && $3 !~ /_bytes_total$/)
			print "family " $3 ": bytes not at the end of its name"
		if ($4 != "counter" && $3 ~ /_total$/)
			print "family " $3 ": a " $4 " ending in _total"
		next
	}
	/^#/ { next }
	/^vgmem_vm_/ {
		for (l in need) delete need[l]
		need["vm"]; need["domain"]; need["domain_uuid"]; need["gpu"]
		for (l in need) if ($0 !~ "[{,]" l "=\"") print "series without label " l ": " $0
	}
	/^vgmem_gpu_/ {
		if ($0 !~ /[{,]gpu="/ || $0 !~ /[{,]device="/) print "series without gpu or device: " $0
	}' "$TMP/metrics")
if [ -z "$conv" ]; then
	ok "families name their unit, VM and GPU series carry their labels"
else
	not_ok "families name their unit, VM and GPU series carry their labels" "$conv"
fi
if grep -q '^vgmem_gpu_host_budget_bytes{gpu="0",device="[^"]*"} +Inf$' "$TMP/metrics" &&
	grep -q '^vgmem_vm_quota_bytes{vm="00000000-0000-4000-8000-0000000000e1",domain="web1",domain_uuid="",gpu="0"} 100663296$' "$TMP/metrics" &&
	grep -q '^vgmem_gpu_oversub_ratio{gpu="1",device="[^"]*"} 2$' "$TMP/metrics"; then
	ok "an unlimited budget is +Inf, oversubscription a ratio, VM labels as documented"
else
	not_ok "an unlimited budget is +Inf, oversubscription a ratio, VM labels as documented" \
		"$(grep -E '^vgmem_gpu_host_budget_bytes|^vgmem_vm_quota_bytes|^vgmem_gpu_oversub' "$TMP/metrics")"
fi

# ---- 3. the rules and the sample scrape configuration -----------------------
if out=$("$PROMTOOL" check rules "$ROOT/deploy/prometheus/vgmem.rules.yml" 2>&1); then
	ok "promtool check rules: deploy/prometheus/vgmem.rules.yml"
else
	not_ok "promtool check rules: deploy/prometheus/vgmem.rules.yml" "$out"
fi
if out=$(cd "$ROOT" && "$PROMTOOL" test rules tests/prometheus/vgmem.rules.test.yml 2>&1); then
	ok "promtool test rules: every alert fires when it should and only then"
else
	not_ok "promtool test rules: every alert fires when it should and only then" "$out"
fi
cp "$ROOT/deploy/prometheus/vgmem.rules.yml" "$TMP/"
echo secret > "$TMP/vgmem.token"
sed "s|/etc/prometheus/vgmem.token|$TMP/vgmem.token|" \
	"$ROOT/deploy/prometheus/prometheus-scrape.yml" > "$TMP/prometheus.yml"
if out=$("$PROMTOOL" check config "$TMP/prometheus.yml" 2>&1); then
	ok "promtool check config: deploy/prometheus/prometheus-scrape.yml"
else
	not_ok "promtool check config: deploy/prometheus/prometheus-scrape.yml" "$out"
fi
finish
