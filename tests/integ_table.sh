#!/usr/bin/env bash
# Integration: the table backend through the CLI on a veth pair in
# namespaces this test creates (load, status, query, stats, set, IPv4 and
# IPv6 keys, unload, per placement and mode), record and analyze on a
# table, the options that do not apply to it, and its model.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xtb || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

table_rounds table 65536 "65536 entries" 214

# record and analyze know the backend and its mode: a small shared table
# in evict-oldest mode (256 entries for 600 sources: evictions happen).
WORK=$(mktemp -d /tmp/xtb-record.XXXXXX)
trap 'teardown_pair; rm -rf "$WORK"' EXIT
rx "$CLI" load "$IF_RX" --backend table --on-full evict-oldest --placement shared --width 256 --interval 300ms >/dev/null
check "load a 256-entry evict-oldest table" test $? -eq 0
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/t.xpr" --sample-sources 1/1 --duration 3s >"$WORK/rec.out" 2>&1 &
rec=$!
sleep 0.5
send 10.214.50.1 600 --rounds 6 --round-gap 0.15 >/dev/null
wait "$rec"
check "record on the table exits 0" test $? -eq 0
check "record: no note that analyze cannot size the table" test -z "$(grep -i 'models the sketch' "$WORK/rec.out")"
rx "$CLI" analyze "$WORK/t.xpr" --json >"$WORK/a.json" 2>"$WORK/a.err"
check "analyze the table's recording" test $? -eq 0
check "analyze: the limiter is the evict-oldest table, its width in entries" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
l = d['limiter']
assert l['backend'] == 'table' and l['on_full'] == 'evict-oldest', l
assert l['width_cells'] == 256, l
assert d['audit']['packets'] > 0, d['audit']" "$WORK/a.json"
rx "$CLI" analyze "$WORK/t.xpr" >"$WORK/a.txt" 2>&1
check "analyze text: the table and its mode" grep -q "table of 256 entries, on full: evict-oldest" "$WORK/a.txt"
check "analyze text: false passes expected in evict-oldest" grep -q "evict-oldest: expected" "$WORK/a.txt"
check "analyze text: sizing counts evictions" grep -q "collision drops plus evictions" "$WORK/a.txt"
check "analyze: the recommendation loads a table in the same mode" \
	grep -q "recommended: xdp-pacer load IFNAME --backend table --width [0-9]* --on-full evict-oldest" "$WORK/a.txt"
# The sweep's counters: its timer, armed by the first frame, has run rounds
# over the table's 16 lines (one a round at this size and tick).  Clearing
# waits for an entry to age 16384 ticks (minutes at this interval's tick):
# tests/prog_xdp.c counts the cleared entries, on the probe and the timer.
check "stats --json: the sweep ran rounds ($(stat_of sweep_rounds)) over lines ($(stat_of sweep_lines))" \
	test "$(stat_of sweep_rounds)" -gt 0 -a "$(stat_of sweep_lines)" -ge "$(stat_of sweep_rounds)"
check "stats --json: sweep_cleared is there ($(stat_of sweep_cleared))" test -n "$(stat_of sweep_cleared)"
rx "$CLI" stats "$IF_RX" --format prometheus >"$WORK/t.prom"
check "Prometheus: xdp_pacer_sweep_{rounds,lines,cleared}_total" \
	bash -c "grep -q '^xdp_pacer_sweep_rounds_total{ifname=\"$IF_RX\"} [1-9]' '$WORK/t.prom' &&
		 grep -q '^xdp_pacer_sweep_lines_total{ifname=\"$IF_RX\"} [1-9]' '$WORK/t.prom' &&
		 grep -q '^xdp_pacer_sweep_cleared_total{ifname=\"$IF_RX\"} [0-9]' '$WORK/t.prom'"
rx "$CLI" stats "$IF_RX" >"$WORK/t.stats"
check "stats text: sweep_rounds, sweep_lines, sweep_cleared" \
	bash -c "grep -q '^sweep_rounds  *[1-9]' '$WORK/t.stats' && grep -q '^sweep_lines  *[1-9]' '$WORK/t.stats' &&
		 grep -q '^sweep_cleared  *[0-9]' '$WORK/t.stats'"
rx "$CLI" unload "$IF_RX" >/dev/null

rx "$CLI" load "$IF_RX" --on-full evict-oldest >/dev/null 2>&1
check "--on-full without --backend table is a usage error (exit 2)" test $? -eq 2
rx "$CLI" load "$IF_RX" --backend table --rows 2 >/dev/null 2>&1
check "--rows with --backend table is a usage error (exit 2)" test $? -eq 2
rx "$CLI" load "$IF_RX" --backend tree >/dev/null 2>&1
check "an unknown backend is a usage error (exit 2)" test $? -eq 2
check "failed loads leave no pins" test ! -e "$(pins_of "$NS_RX" "$IF_RX")"

m=$("$CLI" model --backend table --sources 800000 --width 1048576 --json)
check "model --backend table: 4 MiB at 0.76 fresh per entry, one-sided rate between the collisions and 1 %" python3 -c "
import json, sys
d = json.loads(sys.argv[1])
assert d['bytes'] == 4 << 20, d
assert d['opposite_false_drop'] < d['false_drop'] < 0.01, d
assert 0.0003 < d['opposite_false_drop'] < 0.001, d" "$m"
"$CLI" model --backend table --sources 1000000 --target-false-drop 0.01 | grep -q "table of 2097152 entries"
check "model --backend table --target-false-drop: 1M sources need 2^21 entries (2^20 overflow)" test $? -eq 0
m=$("$CLI" model --backend table --sources 1048576 --width 1048576 --arrivals paced --json)
check "model --arrivals paced: strictly paced sources fill the table, below the steady state" python3 -c "
import json, subprocess, sys
d = json.loads(sys.argv[1])
r = json.loads(subprocess.check_output([sys.argv[2], 'model', '--backend', 'table', '--sources', '1048576', '--width', '1048576', '--json']))
assert 0.01 < d['false_drop'] < r['false_drop'], (d, r)" "$m" "$CLI"
"$CLI" model --sources 10 --arrivals paced >/dev/null 2>&1
check "model: --arrivals without --backend table is a usage error (exit 2)" test $? -eq 2
"$CLI" model --backend table --sources 10 --width 16 >/dev/null 2>&1
check "model: a table below 32 entries is refused (exit 2)" test $? -eq 2
finish
