#!/usr/bin/env bash
# Integration: the table backend through the CLI on a veth pair in
# namespaces this test creates (load, status, query, stats, unload, per
# placement and mode), the options that do not apply to it, and its model.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xtb || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

base=0
for placement in percpu shared; do
	for mode in drop evict-oldest; do
		base=$((base + 1))
		out=$(rx "$CLI" load "$IF_RX" --backend table --on-full "$mode" --placement "$placement" --width 65536 2>&1)
		check "load --backend table --on-full $mode --placement $placement" test $? -eq 0
		check "load reports the table" grep -q "table: 65536 entries.*on full: $mode" <<<"$out"
		check "status shows the table ($placement, $mode)" \
			grep -q "table (fixed at load): 65536 entries, on full: $mode, $placement" \
			<<<"$(rx "$CLI" status "$IF_RX")"
		sent=$(send "10.214.$base.1" 100 --per-source 3)
		check "sender sent 300 frames" test "$sent" = 300
		sleep 0.2
		check "passed == 100 (one per source)" test "$(stat_of passed)" = 100
		check "dropped_recent == 200" test "$(stat_of dropped_recent)" = 200
		check "table_full == 0 in a roomy table" test "$(stat_of table_full)" = 0
		check "query: a just-seen source would be dropped" \
			grep -q DROPPED <<<"$(rx "$CLI" query "$IF_RX" "10.214.$base.7")"
		check "query: an unseen source would pass" \
			grep -q "would pass" <<<"$(rx "$CLI" query "$IF_RX" 10.214.99.99)"
		rx "$CLI" unload "$IF_RX" >/dev/null
		check "unload" test $? -eq 0
	done
done

rx "$CLI" load "$IF_RX" --on-full evict-oldest >/dev/null 2>&1
check "--on-full without --backend table is a usage error (exit 2)" test $? -eq 2
rx "$CLI" load "$IF_RX" --backend table --rows 2 >/dev/null 2>&1
check "--rows with --backend table is a usage error (exit 2)" test $? -eq 2
rx "$CLI" load "$IF_RX" --backend tree >/dev/null 2>&1
check "an unknown backend is a usage error (exit 2)" test $? -eq 2
check "failed loads leave no pins" test ! -e "/sys/fs/bpf/xdp-pacer/$IF_RX"

m=$("$CLI" model --backend table --sources 1000000 --width 1048576 --json)
check "model --backend table: 4 MiB, one-sided rate between the collisions and 1 %" python3 -c "
import json, sys
d = json.loads(sys.argv[1])
assert d['bytes'] == 4 << 20, d
assert d['opposite_false_drop'] < d['false_drop'] < 0.01, d
assert 0.0003 < d['opposite_false_drop'] < 0.001, d" "$m"
"$CLI" model --backend table --sources 1000000 --target-false-drop 0.01 | grep -q "table of 1048576 entries"
check "model --backend table --target-false-drop finds the smallest table" test $? -eq 0
"$CLI" model --backend table --sources 10 --width 16 >/dev/null 2>&1
check "model: a table below 32 entries is refused (exit 2)" test $? -eq 2
finish
