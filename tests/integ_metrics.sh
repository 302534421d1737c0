#!/usr/bin/env bash
# Integration: Prometheus metrics from a pacer on a veth pair in namespaces
# this test creates.  `stats --format prometheus` (stdout and -o FILE) and the
# exporter scraped with curl are validated by promtool, and their counters
# must equal `stats --json` taken with the traffic stopped; the verdicts sum
# to the frames, for the sketch and for the table with a global budget.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpm-metrics.XXXXXX)
trap exporter_cleanup EXIT

setup_pair xpm || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
rx "$CLI" load "$IF_RX" --interval 250ms --prefix6 48 >/dev/null
check "pacer loaded" test $? -eq 0
tx "$CLI" gen "$IF_TX" --dist uniform --sources 300 --count 20000 >/dev/null
check "traffic sent" test $? -eq 0

# metric NAME LABELS FILE: the value of one sample (labels exactly as written).
metric() { grep -F "$1{$2} " "$3" | awk '{print $2}'; }
rx "$CLI" stats "$IF_RX" --json >"$WORK/stats.json"
sj() { grep -o "\"$1\":[0-9]*" "$WORK/stats.json" | cut -d: -f2; }
same_as_json() { # FILE: every counter equals stats --json
	local f=$1 l="ifname=\"$IF_RX\""
	[ "$(metric xdp_pacer_frames_total "$l" "$f")" = "$(sj seen)" ] &&
	[ "$(metric xdp_pacer_packets_total "$l,verdict=\"passed\"" "$f")" = "$(sj passed)" ] &&
	[ "$(metric xdp_pacer_packets_total "$l,verdict=\"dropped_recent\"" "$f")" = "$(sj dropped_recent)" ] &&
	[ "$(metric xdp_pacer_packets_total "$l,verdict=\"nonip_passed\"" "$f")" = "$(sj nonip_passed)" ] &&
	[ "$(metric xdp_pacer_packets_total "$l,verdict=\"malformed_passed\"" "$f")" = "$(sj malformed_passed)" ] &&
	[ "$(metric xdp_pacer_packets_total "$l,verdict=\"malformed_dropped\"" "$f")" = "$(sj malformed_dropped)" ] &&
	[ "$(metric xdp_pacer_ip_packets_total "$l,family=\"ipv4\"" "$f")" = "$(sj ipv4)" ] &&
	[ "$(metric xdp_pacer_ip_packets_total "$l,family=\"ipv6\"" "$f")" = "$(sj ipv6)" ] &&
	[ "$(metric xdp_pacer_line_rebases_total "$l" "$f")" = "$(sj line_rebased)" ] &&
	[ "$(metric xdp_pacer_records_total "$l" "$f")" = "$(sj recorded)" ] &&
	[ "$(metric xdp_pacer_records_lost_total "$l" "$f")" = "$(sj record_lost)" ] &&
	[ "$(metric xdp_pacer_hash_key_inits_total "$l" "$f")" = "$(sj key_init)" ] &&
	[ "$(metric xdp_pacer_packets_total "$l,verdict=\"map_error\"" "$f")" = "$(sj map_error)" ] &&
	[ "$(metric xdp_pacer_packets_total "$l,verdict=\"dropped_budget\"" "$f")" = "$(sj dropped_budget)" ] &&
	[ "$(metric xdp_pacer_budget_no_bucket_total "$l" "$f")" = "$(sj budget_no_bucket)" ] &&
	[ "$(metric xdp_pacer_budget_returning_total "$l" "$f")" = "$(sj budget_returning)" ] &&
	[ "$(metric xdp_pacer_table_events_total "$l,event=\"table_full\"" "$f")" = "$(sj table_full)" ] &&
	[ "$(metric xdp_pacer_table_events_total "$l,event=\"table_evict\"" "$f")" = "$(sj table_evict)" ] &&
	[ "$(metric xdp_pacer_table_events_total "$l,event=\"table_race\"" "$f")" = "$(sj table_race)" ] &&
	[ "$(metric xdp_pacer_sweep_rounds_total "$l" "$f")" = "$(sj sweep_rounds)" ] &&
	[ "$(metric xdp_pacer_sweep_lines_total "$l" "$f")" = "$(sj sweep_lines)" ] &&
	[ "$(metric xdp_pacer_sweep_cleared_total "$l" "$f")" = "$(sj sweep_cleared)" ]
}
# verdicts_sum FILE: the verdicts of xdp_pacer_packets_total add up to xdp_pacer_frames_total.
verdicts_sum() {
	local sum frames
	sum=$(grep "^xdp_pacer_packets_total{ifname=\"$IF_RX\"," "$1" | awk '{ s += $2 } END { print s }')
	frames=$(metric xdp_pacer_frames_total "ifname=\"$IF_RX\"" "$1")
	echo "verdicts $sum, frames $frames"
	[ -n "$frames" ] && [ "$sum" = "$frames" ]
}
check "the generator's 20000 frames were seen" test "$(sj seen)" = 20000
check "stats --json names the release" \
	grep -q "\"version\":\"$("$CLI" --version | awk '{print $2}')\"" "$WORK/stats.json"

rx "$CLI" stats "$IF_RX" --format prometheus >"$WORK/stdout.prom"
check "stats --format prometheus exits 0" test $? -eq 0
check "promtool check metrics accepts stats' output" promtool check metrics <"$WORK/stdout.prom"
check "stats' counters equal stats --json" same_as_json "$WORK/stdout.prom"
check "the verdicts sum to frames_total" verdicts_sum "$WORK/stdout.prom"
check "build info names this release" \
	grep -qx "xdp_pacer_build_info{version=\"$("$CLI" --version | awk '{print $2}')\",abi=\"[0-9]*\"} 1" "$WORK/stdout.prom"
check "counters are typed counter" grep -qx "# TYPE xdp_pacer_packets_total counter" "$WORK/stdout.prom"
check "live interval is a gauge: 0.25 s" test "$(metric xdp_pacer_interval_seconds "ifname=\"$IF_RX\"" "$WORK/stdout.prom")" = 0.25
check "live prefix6 gauge: 48" test "$(metric xdp_pacer_prefix_length "ifname=\"$IF_RX\",family=\"ipv6\"" "$WORK/stdout.prom")" = 48

mkdir "$WORK/textfile"
rx "$CLI" stats "$IF_RX" --format prometheus -o "$WORK/textfile/pacer.prom"
check "stats -o FILE exits 0" test $? -eq 0
check "-o FILE holds the same text as stdout" cmp -s "$WORK/stdout.prom" "$WORK/textfile/pacer.prom"
check "-o FILE leaves no temporary file behind" test "$(ls -A "$WORK/textfile")" = pacer.prom
check "-o FILE is world-readable (0644) for node_exporter" test "$(stat -c %a "$WORK/textfile/pacer.prom")" = 644
rx "$CLI" stats "$IF_RX" --format prometheus -o "$WORK/nodir/pacer.prom" 2>"$WORK/err"
check "-o into a missing directory fails (exit 1) naming the file" \
	bash -c "test $? -eq 1 && grep -q 'nodir/pacer.prom' '$WORK/err'"
rx "$CLI" stats "$IF_RX" --format yaml 2>/dev/null
check "--format yaml is a usage error (exit 2)" test $? -eq 2
rx "$CLI" stats "$IF_RX" --format prometheus --watch 1 2>/dev/null
check "--format prometheus with --watch is a usage error (exit 2)" test $? -eq 2

# --- the exporter, in the receiver's namespace (its own port space) ---
PORT=9477
nsenter --net="/run/netns/$NS_RX" "$CLI" exporter --listen "127.0.0.1:$PORT" >"$WORK/exp.out" 2>&1 &
EXP_PID=$!
for _ in $(seq 50); do rx curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" && break; sleep 0.1; done
rx curl -sS -D "$WORK/headers" "http://127.0.0.1:$PORT/metrics" >"$WORK/scrape.prom"
check "curl scrapes /metrics" test $? -eq 0 -a -s "$WORK/scrape.prom"
check "Content-Type is the exposition format 0.0.4" grep -qi '^Content-Type: text/plain; version=0.0.4' "$WORK/headers"
check "promtool check metrics accepts the scrape" promtool check metrics <"$WORK/scrape.prom"
check "scraped counters equal stats --json" same_as_json "$WORK/scrape.prom"
code=$(rx curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/other")
check "other paths get 404" test "$code" = 404
code=$(rx curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/metrics")
check "POST gets 405" test "$code" = 405
tx "$CLI" gen "$IF_TX" --dist uniform --sources 10 --count 1000 --src-base 10.99.0.0 >/dev/null
rx "$CLI" stats "$IF_RX" --json >"$WORK/stats.json"
rx curl -sS "http://127.0.0.1:$PORT/metrics" >"$WORK/scrape2.prom"
check "a later scrape follows the counters (21000 frames)" same_as_json "$WORK/scrape2.prom"
rx "$CLI" unload "$IF_RX" >/dev/null
rx curl -sS "http://127.0.0.1:$PORT/metrics" >"$WORK/scrape3.prom"
check "after unload the scrape is valid and names no interface" \
	bash -c "promtool check metrics <'$WORK/scrape3.prom' && ! grep -q 'ifname=' '$WORK/scrape3.prom'"

# --- the table with a global budget: every verdict exported, the table's gauges ---
rx "$CLI" load "$IF_RX" --backend table --width 4096 --interval 10s --budget 1000/60s >/dev/null
check "table with a budget loaded" test $? -eq 0
tx "$CLI" gen "$IF_TX" --dist uniform --sources 3000 --count 20000 >/dev/null
rx "$CLI" stats "$IF_RX" --json >"$WORK/stats.json"
rx curl -sS "http://127.0.0.1:$PORT/metrics" >"$WORK/table.prom"
check "promtool accepts the table's scrape" promtool check metrics <"$WORK/table.prom"
check "table + budget: scraped counters equal stats --json" same_as_json "$WORK/table.prom"
check "table + budget: budget drops are counted ($(sj dropped_budget))" test "$(sj dropped_budget)" -gt 0
check "table + budget: the verdicts sum to frames_total" verdicts_sum "$WORK/table.prom"
check "the table's entries gauge: 4096" \
	test "$(metric xdp_pacer_table_entries "ifname=\"$IF_RX\"" "$WORK/table.prom")" = 4096
check "no sketch width or rows for a table" \
	bash -c "! grep -q '^xdp_pacer_sketch_\(width_cells\|rows\){ifname=\"$IF_RX\"}' '$WORK/table.prom'"
check "the info metric names the backend and on-full, no layout" \
	bash -c "grep -q '^xdp_pacer_info{ifname=\"$IF_RX\",.*backend=\"table\",.*on_full=\"drop\"' '$WORK/table.prom' &&
		 ! grep -q '^xdp_pacer_info{ifname=\"$IF_RX\",.*layout=' '$WORK/table.prom'"
check "the budget's limit and window gauges: 1000 per 60 s" \
	bash -c "grep -qx 'xdp_pacer_budget_limit_packets{ifname=\"$IF_RX\"} 1000' '$WORK/table.prom' &&
		 grep -qx 'xdp_pacer_budget_window_seconds{ifname=\"$IF_RX\"} 60' '$WORK/table.prom'"
rx "$CLI" unload "$IF_RX" >/dev/null

stop_exporter TERM
rc=$?
check "exporter exits 0 on SIGTERM" test "$rc" -eq 0
check "exporter says it stopped" grep -q "stopped by SIGTERM" "$WORK/exp.out"
"$CLI" exporter --listen nonsense 2>/dev/null
check "--listen without a port is a usage error (exit 2)" test $? -eq 2
finish
