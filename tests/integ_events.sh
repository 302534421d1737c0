#!/usr/bin/env bash
# Integration: `xdp-pacer events` on a veth.  A source that floods, then
# stops, gives one start line and one stop line (after --hold); 100 sources
# limited at once against --max-rate 5 give at most 5 lines in any second
# and a summary line that counts the rest; exit closes what is open.
. "$(dirname "$0")/lib.sh"
cleanup() {
	stop_background
	rm -rf "$WORK"
	teardown_pair
}
WORK=$(mktemp -d /tmp/xpt-events.XXXXXX)
trap cleanup EXIT

setup_pair xpe || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
rx "$CLI" load "$IF_RX" --placement shared >/dev/null
check "pacer loaded" test $? -eq 0

start_events() { reader_start "$1" events "${@:2}"; } # out-file, options...
stop_events() { reader_stop TERM; }
count() { grep -c "$1" "$2"; }

# --- one source floods for a second, then stops: one start, one stop ---
start_events "$WORK/one.json" --json --sample-packets 1/1 --hold 1s
check "events switched packet sampling on (1/1)" test "$(sampling)" = "sources off, packets 1/1"
tx "$CLI" gen "$IF_TX" --dist uniform --sources 1 --src-base 10.201.0.7 --count 20000 --pps 20000 >/dev/null
sleep 2.5 # the hold, the poll, the clock
cp "$WORK/one.json" "$WORK/one.before-exit"
stop_events
check "events exits 0 on SIGTERM" test $? -eq 0
check "one start line for 10.201.0.7/32" test "$(count '"event":"start".*"source":"10.201.0.7/32"' "$WORK/one.before-exit")" = 1
check "one stop line, after the hold, before exit" test "$(count '"event":"stop".*"source":"10.201.0.7/32".*"reason":"quiet"' "$WORK/one.before-exit")" = 1
check "nothing else" test "$(wc -l <"$WORK/one.json")" = 2
out=$(python3 - "$WORK/one.json" <<'PY'
import json, sys
start, stop = [json.loads(l) for l in open(sys.argv[1])]
assert start["class"] is None and start["family"] == 4 and start["sample_one_in"] == 1, start
assert 0.5 <= stop["limited_s"] <= 1.5, stop
assert 15000 <= stop["sampled_drops"] <= 20000, stop
assert stop["drops_estimate"] == stop["sampled_drops"], stop
assert stop["first_drop"] == start["first_drop"] and stop["time"] > stop["last_drop"], stop
print(f"limited {stop['limited_s']} s, {stop['sampled_drops']} drops")
PY
)
check "the stop line's fields: limited about 1 s, the drops ($out)" test $? -eq 0
check "sampling put back" test "$(sampling)" = off

# --- text form, and exit closes a source still limited ---
start_events "$WORK/open.txt" --sample-packets 1/1 --hold 3600s
tx "$CLI" gen "$IF_TX" --dist uniform --sources 1 --src-base 10.201.0.8 --count 2000 >/dev/null
sleep 0.5
stop_events
check "text: a start line" grep -qE '^[0-9T:.-]+Z start 10.201.0.8/32 class -$' "$WORK/open.txt"
check "text: exit stops it (reason exit)" grep -qE '^[0-9T:.-]+Z stop 10.201.0.8/32 class - after [0-9.]+ s limited: [0-9]+ sampled drops, about [0-9]+ dropped \(exit\)$' "$WORK/open.txt"

# --- the line cap: 100 sources start at once against --max-rate 5 ---
start_events "$WORK/cap.json" --json --sample-packets 1/1 --hold 3600s --max-rate 5
tx "$CLI" gen "$IF_TX" --dist uniform --sources 100 --src-base 10.202.0.0 --count 20000 >/dev/null
sleep 1.5
stop_events
out=$(python3 - "$WORK/cap.json" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
starts = [l for l in lines if l["event"] == "start"]
summ = [l for l in lines if l["event"] == "suppressed"]
assert summ, "no summary line"
assert all(l["max_rate"] == 5 for l in summ)
refused = sum(l["starts"] for l in summ)
assert len(starts) + refused == 100, (len(starts), refused)
assert 5 <= len(starts) <= 15, len(starts)
print(f"{len(starts)} start lines, {refused} counted in {len(summ)} summary lines")
PY
)
check "--max-rate 5: every start said or counted, the rest in summary lines ($out)" test $? -eq 0

# --- --min-drops: a source starts at its N-th sampled drop; fewer say nothing ---
start_events "$WORK/min.json" --json --sample-packets 1/1 --hold 3600s --min-drops 100
tx "$CLI" gen "$IF_TX" --dist uniform --sources 1 --src-base 10.203.0.1 --count 50 >/dev/null
tx "$CLI" gen "$IF_TX" --dist uniform --sources 1 --src-base 10.203.0.2 --count 500 >/dev/null
sleep 0.5
stop_events
check "--min-drops 100: 49 drops start nothing" test "$(count '10.203.0.1/' "$WORK/min.json")" = 0
check "--min-drops 100: 499 drops start once, stop at exit" \
	test "$(count '"event":"start".*"source":"10.203.0.2/32"' "$WORK/min.json")$(count '"event":"stop".*"source":"10.203.0.2/32".*"sampled_drops":499,.*"reason":"exit"' "$WORK/min.json")" = 11

# --- refusals ---
rx "$CLI" events "$IF_RX" --min-drops 0 >/dev/null 2>&1
check "--min-drops 0 is refused (exit 2)" test $? -eq 2
rx "$CLI" events "$IF_RX" --max-rate 0 >/dev/null 2>&1
check "--max-rate 0 is refused (exit 2)" test $? -eq 2
rx "$CLI" events "$IF_RX" --sample-packets off >/dev/null 2>&1
check "--sample-packets off is refused (exit 2)" test $? -eq 2
rx "$CLI" events nosuchif0 --duration 1s >/dev/null 2>&1
check "events on a missing interface: exit 1" test $? -eq 1
check "sampling still off" test "$(sampling)" = off

rx "$CLI" unload "$IF_RX" >/dev/null
finish
