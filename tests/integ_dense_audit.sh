#!/usr/bin/env bash
# Integration: the dense table (`--backend dense`) on a veth pair in
# namespaces this test creates.  The small-scale run of
# scripts/bench-dense10m.sh (the ten-million-source proof's script):
# uniform sources round and round at about 0.9 sources per entry, recorded
# with every source sampled and audited by analyze: no false passes, few
# false drops by the structure, nothing lost.  Then what users see of a
# dense table: status names its geometry, query reads a source's age from
# the live map, analyze names the recording's geometry and sizes it in line
# counts that are not powers of two, and the recommendation loads.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-dense.XXXXXX)
cleanup() {
	teardown_pair
	[ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# --- the audit at small scale: 20 000 sources in 22 488 entries (937 lines, 0.89 sources an
# entry, as 10M in 30 MB), 2 s interval, each source every 0.5 s, every packet recorded ---
CLI="$CLI" BUILD="$BUILD" scripts/bench-dense10m.sh --sources 20000 --width 22488 --interval 2s \
	--seconds 7 --pps 40000 --sample 1/1 --out "$WORK/run" >"$WORK/run.out" 2>&1
rc=$?
sed 's/^/    /' "$WORK/run.out"
check "bench-dense10m.sh at 20 000 sources exits 0" test "$rc" -eq 0
S=$WORK/run/summary.json
if [ -s "$S" ]; then
	check "the run recorded dense-table verdicts" test "$(j "$S" "d['backend']")" = dense
	check "every source sent within one interval (cycle $(j "$S" "round(d['cycle_s'], 2)") s < 2 s)" \
		test "$(j "$S" "int(d['cycle_s'] < 2)")" = 1
	check "the audit judged at least 20 000 owed passes ($(j "$S" "d['owed_passes']"))" \
		test "$(j "$S" "int(d['owed_passes'] >= 20000)")" = 1
	check "no false passes (one-sided)" test "$(j "$S" "d['false_passes']")" = 0
	check "false drops by the structure <= 2 % ($(j "$S" "round(100 * d['collision_rate'], 3)") %)" \
		test "$(j "$S" "int(d['collision_rate'] <= 0.02)")" = 1
	check "no records lost, no map errors" test "$(j "$S" "d['records_lost'] + d['map_error']")" = 0
	A=$WORK/run/analyze.json
	check "analyze --json: the limiter's line count (937) and entries (22488)" \
		test "$(j "$A" "(d['limiter']['lines'], d['limiter']['width_cells'])")" = "(937, 22488)"
	check "sizing steps through line counts that are not powers of two" \
		test "$(j "$A" "int(any(p['lines'] & (p['lines'] - 1) for p in d['sizing']['points']))")" = 1
	check "sizing recommends --backend dense --width N" \
		bash -c "'$CLI' analyze '$WORK/run/rec.xpr' | grep -q 'recommended: xdp-pacer load IFNAME --backend dense --width [0-9]* --on-full drop'"
fi

# --- what status and query show of a live dense table ---
setup_pair xpd || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
export DST=10.214.0.1
rx "$CLI" load "$IF_RX" --backend dense --width 1000 --interval 2s >"$WORK/load.out" 2>&1
check "load --backend dense --width 1000 (42 lines of 24)" test $? -eq 0
check "load names the geometry" grep -q "1008 entries" "$WORK/load.out"
rx "$CLI" status "$IF_RX" >"$WORK/status.out"
check "status names the dense table and its entries" grep -q "dense (fixed at load): 1008 entries" "$WORK/status.out"
sent=$(send 10.214.1.1 10)
check "sent 10 frames from 10 sources" test "$sent" = 10
q=$(rx "$CLI" query "$IF_RX" 10.214.1.3 --json)
# Fresh: a tick is 67 ms here; a loaded machine may take a tick or two
# between the send and the query, far from the 2 s interval's 31.
check "query: a source that sent is fresh (age 0 to 3 ticks)" \
	python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert 0 <= d['age_ticks'] <= 3 and d['would_drop'], d" "$q"
q=$(rx "$CLI" query "$IF_RX" 10.214.9.9 --json)
check "query: a source never seen has no age" \
	python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert d['age_ticks'] == -1 and not d['would_drop'], d" "$q"
rx "$CLI" stats "$IF_RX" --format prometheus >"$WORK/metrics.prom"
check "exporter text: the dense table's entries and backend" \
	bash -c "grep -qx 'xdp_pacer_table_entries{[^}]*} 1008' '$WORK/metrics.prom' && grep -q 'backend=\"dense\"' '$WORK/metrics.prom'"
rx "$CLI" unload "$IF_RX" >/dev/null
out=$(rx "$CLI" load "$IF_RX" --backend table --width 1000 2>&1)
check "load --backend table --width 1000: refused naming the width (exit 2)" \
	bash -c "test $? -eq 2 && grep -q -- '--width 1000: a table takes a power of two' <<<'$out'"
out=$(rx "$CLI" load "$IF_RX" --backend dense --width 11250000 --interval 10ms 2>&1)
check "load: a dense table whose sweep cannot keep pace is refused in one line (exit 2)" \
	bash -c "test $? -eq 2 && test $(wc -l <<<"$out") -eq 1 && grep -q 'dense table of 468750 lines needs .*sweep' <<<'$out'"
check "nothing was attached" bash -c "! ip -n '$NS_RX' link show '$IF_RX' | grep -q xdp"

# --- the model ---
m=$("$CLI" model --backend dense --sources 10000000 --width 11250000 --json)
check "model --backend dense: 10M sources in 30 MB, one-sided rate under 1 %" python3 -c "
import json, sys
d = json.loads(sys.argv[1])
assert d['lines'] == 468750 and d['bytes'] == 30000000 and 0.003 < d['false_drop'] < 0.01, d" "$m"
m=$("$CLI" model --backend dense --sources 10000000 --target-false-drop 0.01 --json)
check "model --backend dense --target-false-drop: a line count that is not a power of two, <= 30 MB" python3 -c "
import json, sys
d = json.loads(sys.argv[1])
assert d['lines'] & (d['lines'] - 1) and d['bytes'] <= 30000000 and d['false_drop'] <= 0.01, d" "$m"
"$CLI" model --sources 1000 --width 1000 >/dev/null 2>&1
check "model: the sketch still takes only a power-of-two width (exit 2)" test $? -eq 2
finish
