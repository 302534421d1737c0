#!/usr/bin/env bash
# Integration: a long interval soon after boot.  With the largest tick
# (2^40 ns, 18 min) the monotonic clock of any host up less than 19.5 hours
# is fewer than 64 ticks old: the zeroed sketch must still read as "never
# seen", so new sources pass once each and query says an unseen source is
# unseen.  Also the tick and interval bounds at load.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xpb || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
export DST=10.214.0.1

echo "    uptime $(cut -d' ' -f1 /proc/uptime) s: $(awk '{print int($1 * 1e9 / 2^40)}' /proc/uptime) ticks of 2^40 ns"
rx "$CLI" load "$IF_RX" --interval 68400s --tick 1099511627776ns >/dev/null
check "load --interval 68400s --tick 2^40 ns" test $? -eq 0
send 10.214.1.1 5 --per-source 3 >/dev/null
sleep 0.2
check "5 new sources x 3 packets: 5 passed" test "$(stat_of passed)" = 5
check "... and 10 dropped" test "$(stat_of dropped_recent)" = 10
q=$(rx "$CLI" query "$IF_RX" 10.99.99.99)
echo "    $q"
check "query: a never-sent source is not seen" grep -q "not seen.*would pass" <<<"$q"
q=$(rx "$CLI" query "$IF_RX" 10.214.1.3)
check "query: a sender is seen and would be dropped" grep -q "DROPPED" <<<"$q"
# The largest tick and interval load takes, analyze takes too.
REC=$(mktemp -u /tmp/xpb-boot.XXXXXX.xpr)
rx "$CLI" record "$IF_RX" -o "$REC" --sample-sources 1/1 --duration 2s >/dev/null 2>&1 &
rec=$!
sleep 0.5
send 10.214.2.1 20 --per-source 2 >/dev/null
wait $rec
check "record on the 2^40 ns tick (exit 0)" test $? -eq 0
out=$("$CLI" analyze "$REC" 2>&1)
check "analyze accepts the recording (exit 0)" test $? -eq 0
check "... and sees its 40 records" grep -q "records: 40\b\|40 records" <<<"$out"
rm -f "$REC"
st=$(rx "$CLI" status "$IF_RX")
check "status: settable range [4 ticks, 63 ticks] of 2^40 ns" grep -q "settable within \[4398.047 s, 69269.233 s\]" <<<"$st"
out=$(rx "$CLI" set "$IF_RX" --interval 69270s 2>&1)
check "set --interval beyond the bound: exit 2" test $? -eq 2
check "... naming the value and the bound" grep -q "'69270s' for --interval.*at most 69269.233 s" <<<"$out"
rx "$CLI" unload "$IF_RX" >/dev/null
check "unload" test $? -eq 0

# Out-of-bound ticks and intervals are usage errors naming the value, at once.
refused() { # description, expected text, load arguments...
	local d=$1 want=$2 out rc; shift 2
	out=$(timeout 20 nsenter --net="/run/netns/$NS_RX" "$CLI" load "$IF_RX" "$@" 2>&1); rc=$?
	check "$d: exit 2 (got $rc)" test "$rc" -eq 2
	check "$d: the message names it" grep -q -- "$want" <<<"$out"
	check "$d: nothing pinned" test ! -e "$(pins_of "$NS_RX" "$IF_RX")"
	check "$d: nothing attached" bash -c "! ip -n $NS_RX link show $IF_RX | grep -q xdp"
}
refused "--tick 10000000000s" "'10000000000s' for --tick.*at most 1099.512 s" --tick 10000000000s
refused "--tick 2^62 ns" "'4611686018427387904ns' for --tick" --interval 1s --tick 4611686018427387904ns
refused "--tick 2^41 ns" "'2199023255552ns' for --tick" --interval 10800s --tick 2199023255552ns
refused "--interval 70000s" "'70000s' for --interval.*at most 69269.233 s" --interval 70000s
finish
