#!/usr/bin/env bash
# Integration: the global budget through the CLI on a veth pair in
# namespaces this test creates: load with --budget, traffic from many new
# sources, budget drops counted apart, status shows the ring, set changes
# and removes the budget live, bad values exit 2 and change nothing; a K
# large enough for the CPUs' batches admits at most K plus their slack.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

budget_cpus() { # the possible CPUs, as the batch counts them: "0-3,8-11" is 8
	tr ',' '\n' </sys/devices/system/cpu/possible |
		awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }'
}

setup_pair xpb || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

# bad values: exit 2, nothing attached or pinned
for bad in "--budget 100" "--budget 0/1s" "--budget 10/1s --slack-time off --slack-count off" \
	   "--budget 1000/1s --slack-time 1ms" "--slack-count 5" "--budget 10/1s --reserve 95" \
	   "--budget 10/1s --horizon 2h" "--budget 10/1s --reserve-cells 1000"; do
	# shellcheck disable=SC2086
	err=$(rx "$CLI" load "$IF_RX" $bad 2>&1)
	rc=$?
	check "load $bad: exit 2 ($err)" test $rc -eq 2
done
check "nothing left attached after bad loads" test ! -e "$(pins_of "$NS_RX" "$IF_RX")"

out=$(rx "$CLI" load "$IF_RX" --budget 100/60s --reserve 20 2>&1)
check "load --budget 100/60s --reserve 20 (exit 0)" test $? -eq 0
check "load reports the budget" grep -q "budget: 100 per 60 s" <<<"$out"
check "load reports the batch: 1 per CPU for K this small, exact" grep -q "batches of 1 per CPU (at most 0 above K" <<<"$out"
echo "$out" | sed 's/^/    /'

send 10.214.1.1 150 >/dev/null
sleep 0.2
# 150 new sources: the reserve keeps 20 of 100 for returning sources, so 80 pass
check "passed == 80 (K minus the reserve)" test "$(stat_of passed)" = 80
check "dropped_budget == 70" test "$(stat_of dropped_budget)" = 70
check "dropped_recent == 0 (budget drops are apart)" test "$(stat_of dropped_recent)" = 0
st=$(rx "$CLI" status "$IF_RX")
echo "$st" | sed 's/^/    /'
check "status shows the ring: 80 in flight, 20 free" grep -q "80 in flight, 20 free" <<<"$st"
check "status shows buckets" grep -q "bucket 0: " <<<"$st"
check "status shows the draws: one per admission with batches of 1" grep -q "budget batches: 80 drawn" <<<"$st"

# after the per-source interval, the admitted sources return into the reserve
sleep 1.1
send 10.214.1.1 30 >/dev/null
sleep 0.2
check "returning sources pass into the reserve: passed == 100" test "$(stat_of passed)" = 100
check "budget_returning == 20" test "$(stat_of budget_returning)" = 20

# live: raise K (in-flight kept), remove, bad value changes nothing
rx "$CLI" set "$IF_RX" --budget 110/60s >/dev/null
check "set --budget 110/60s" test $? -eq 0
check "status: in flight kept, 10 free" grep -q "100 in flight, 10 free" <<<"$(rx "$CLI" status "$IF_RX")"
err=$(rx "$CLI" set "$IF_RX" --interval 2s --budget 5 2>&1)
check "set with a bad --budget: exit 2 ($err)" test $? -eq 2
err=$(rx "$CLI" set "$IF_RX" --interval 2s --budget 1000/1s --slack-time 1ms 2>&1)
check "set with a budget needing too many buckets: exit 2 ($err)" test $? -eq 2
st=$(rx "$CLI" status "$IF_RX")
check "... and neither the interval nor the budget changed" grep -q "interval 1 s.*110 per 60 s" <<<"$(echo $st)"
rx "$CLI" set "$IF_RX" --budget off >/dev/null
check "set --budget off" test $? -eq 0
st=$(rx "$CLI" status "$IF_RX")
check "status: budget off" grep -q "budget: off" <<<"$st"
check "... and no ring shown while off" bash -c '! grep -q "budget ring" <<<"$1"' _ "$st"
send 10.214.9.1 50 >/dev/null
sleep 0.2
check "budget off: 50 new sources pass" test "$(stat_of passed)" = 150

rx "$CLI" unload "$IF_RX" >/dev/null
check "unload removes the budget pins too" test ! -e "$(pins_of "$NS_RX" "$IF_RX")"

# A K large enough for batches: at most K plus the slack load prints.
out=$(rx "$CLI" load "$IF_RX" --budget 100000/60s 2>&1)
check "load --budget 100000/60s (exit 0)" test $? -eq 0
slack=$(sed -n 's/.*batches of [0-9]* per CPU (at most \([0-9]*\) above K.*/\1/p' <<<"$out")
check "load reports batches of 64 per CPU and their slack ($slack)" \
	grep -q "batches of 64 per CPU (at most $((63 * $(budget_cpus))) above K" <<<"$out"
send 10.215.0.1 101000 >/dev/null
sleep 0.2
p=$(stat_of passed)
# fewer than K only by what CPUs drew and hold unspent: the same slack
check "101000 new sources: K pass, within the slack ($p)" test "$p" -ge $((100000 - slack)) -a "$p" -le $((100000 + slack))
seen=$(stat_of seen) db=$(stat_of dropped_budget) dr=$(stat_of dropped_recent)
check "... the rest of what arrived ($seen) are budget drops ($db; $dr false drops by pacing)" \
	test $((p + db + dr)) = "$seen" -a "$db" -ge 800
st=$(rx "$CLI" status "$IF_RX")
d=$(sed -n 's/.*budget batches: \([0-9]*\) drawn.*/\1/p' <<<"$st")
check "... drawn in batches: $d draws for $p admissions" test "$d" -le $((p / 32))
rx "$CLI" unload "$IF_RX" >/dev/null
finish
