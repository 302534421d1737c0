#!/usr/bin/env bash
# Integration: record a limiter running traffic classes on a veth pair in
# namespaces this test creates, and audit each class against its own limit.
# Checks that the recording is format 3 with the class table, that every
# record names its class, that each class's audit agrees with the
# datapath's per-class counters with no false pass, that a class keyed
# src+dport is audited key by key (the records carry the port), that CSV
# carries the class and the key, that records of classes configured after a
# classless start are skipped and counted, and that records made after the
# class list changed are not judged.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-rclass.XXXXXX)
REC_PID=
cleanup() {
	stop_background
	[ -n "$REC_PID" ] && kill "$REC_PID" 2>/dev/null
	teardown_pair
	[ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

setup_pair xrc || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
export DST=10.212.0.1

# Limits 300 ms, 4 per second and 1 s on one table; the tick serves all three.
rx "$CLI" load "$IF_RX" --placement shared --backend table \
	--class 'dns: udp dport 53 interval 300ms' \
	--class 'web: udp dport 9 rate 4/1s' \
	--class 'ports: udp dport 1000-1010 interval 1s key src+dport' >/dev/null
check "load with three classes" test $? -eq 0

REC=$WORK/rec.xpr
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$REC" --sample-sources 1/1 --duration 4s >"$WORK/rec.out" 2>"$WORK/rec.err" &
REC_PID=$!
sleep 0.5
# 50 sources in each of dns and web, 8 rounds 120 ms apart: dns admits
# about one packet in 3, web a burst of 4 then about one per 250 ms; 50
# sources to two ports of the ports class, 4 rounds: one per port; 20
# sources no class matches.
sent=$(send 10.212.1.1 50 --rounds 8 --round-gap 0.12 --dport 53)
sent=$((sent + $(send 10.212.1.1 50 --rounds 8 --round-gap 0.12 --dport 9)))
sent=$((sent + $(send 10.212.2.1 50 --rounds 4 --round-gap 0.12 --dport 1000)))
sent=$((sent + $(send 10.212.2.1 50 --rounds 4 --round-gap 0.12 --dport 1001)))
sent=$((sent + $(send 10.212.3.1 20 --dport 80)))
check "sender sent 1220 frames" test "$sent" = 1220
wait "$REC_PID"
rc=$?
REC_PID=
check "record exits 0" test "$rc" -eq 0
sed 's/^/    /' "$WORK/rec.out" "$WORK/rec.err"
check "record: 1200 records (unclassified traffic is not paced, so not recorded), 0 lost" \
	grep -q ": 1200 records written to .*; 0 records lost" "$WORK/rec.out"
check "the file is format 3.3" test "$(od -An -tu2 -j8 -N4 "$REC" | tr -s ' ')" = " 3 3"

rx "$CLI" stats "$IF_RX" --json >"$WORK/stats.json"
rx "$CLI" analyze "$REC" --json --report "$WORK/report.html" >"$WORK/a.json" 2>"$WORK/a.err"
check "analyze --json exits 0" test $? -eq 0
cat "$WORK/a.err"
j() { python3 -c "
import json, sys
d = json.load(open('$WORK/a.json'))
st = json.load(open('$WORK/stats.json'))
c = {x['name']: x for x in d['classes']}
s = {x['class']: x for x in st['classes']}
print(eval(sys.argv[1]))" "$1"; }
check "analyze names the three classes in order" test "$(j '[x["name"] for x in d["classes"]]')" = "['dns', 'web', 'ports']"
check "each class's limit is in the report" \
	test "$(j '[(x["rate_n"], x["interval_ns"], x["key"]) for x in d["classes"]]')" = \
	"[(1, 300000000, 'src'), (4, 1000000000, 'src'), (1, 1000000000, 'src+dport')]"
for cl in dns web ports; do
	check "$cl: every packet the class saw is audited" \
		test "$(j "c['$cl']['audit']['packets'] == s['$cl']['seen']")" = True
	check "$cl: admitted and dropped as the datapath counted them" \
		test "$(j "(c['$cl']['audit']['passes'], c['$cl']['audit']['drops']) == (s['$cl']['passed'], s['$cl']['dropped'])")" = True
done
check "dns and web: 50 sources each" \
	test "$(j '(c["dns"]["audit"]["sources"], c["web"]["audit"]["sources"])')" = "(50, 50)"
check "dns and web: 0 false passes, each against its own limit" \
	test "$(j '(c["dns"]["audit"]["false_passes"], c["web"]["audit"]["false_passes"])')" = "(0, 0)"
check "web: more admitted than dns's, as 4 per second against one per 300 ms allows" \
	test "$(j 'c["web"]["audit"]["passes"] > c["dns"]["audit"]["passes"]')" = True
check "dns and web: no false drop beyond quantisation" \
	test "$(j 'c["dns"]["audit"]["false_drops_collision"] + c["web"]["audit"]["false_drops_collision"]')" = 0
check "ports (src+dport): the records carry their port, each key audited on its own" \
	test "$(j '(c["ports"]["false_passes_checked"], c["ports"]["key_note"])')" = "(True, '')"
check "ports: 100 keys (50 sources x 2 ports), each admitted once: 100 passes" \
	test "$(j '(c["ports"]["audit"]["sources"], c["ports"]["audit"]["passes"])')" = "(100, 100)"
check "ports: 0 false passes, no false drop" \
	test "$(j '(c["ports"]["audit"]["false_passes"], c["ports"]["audit"]["false_drops"])')" = "(0, 0)"
check "all classes: 0 false passes where checked" test "$(j 'd["audit"]["false_passes"]')" = 0
check "HTML report has the per-class table" grep -q "<h2>Audit per class</h2>" "$WORK/report.html"
rx "$CLI" analyze "$REC" >"$WORK/a.txt" 2>&1
check "text: a section per class" \
	bash -c "grep -q '^  class dns: interval 300.000 ms, key src, policy pace' '$WORK/a.txt' && grep -q '^  class ports: interval 1 s, key src+dport' '$WORK/a.txt'"
sed -n '/^Audit per class/,/^Recency/p' "$WORK/a.txt" | sed 's/^/    /'

# --- CSV carries the class of each record ---
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/rec.csv" --csv --sample-sources 1/1 --duration 1s >/dev/null 2>&1 &
REC_PID=$!
sleep 0.4
send 10.212.4.1 5 --dport 53 >/dev/null
send 10.212.4.1 5 --dport 1003 >/dev/null
wait "$REC_PID"
REC_PID=
check "CSV: the class table in comments" grep -q "^# class 0: dns, slot 1, action pace, key src" "$WORK/rec.csv"
check "CSV: five records of class dns" test "$(grep -c ',dns,$' "$WORK/rec.csv")" = 5
check "CSV: five of class ports with their key's port" test "$(grep -c ',ports,dport 1003$' "$WORK/rec.csv")" = 5

# --- the class list set again unchanged, then changed, while recording ---
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/chg.xpr" --sample-sources 1/1 --duration 3s >"$WORK/chg.out" 2>"$WORK/chg.err" &
REC_PID=$!
sleep 0.4
send 10.212.7.1 10 --dport 53 >/dev/null
rx "$CLI" set "$IF_RX" --class 'dns: udp dport 53 interval 300ms' --class 'web: udp dport 9 rate 4/1s' \
	--class 'ports: udp dport 1000-1010 interval 1s key src+dport' >/dev/null
sleep 0.6
send 10.212.7.1 10 --dport 53 >/dev/null
# The recorder looks every 250 ms: what it saw before the change is judged.
sleep 0.6
check "unchanged list set again: no warning" bash -c "! grep -q 'class list' '$WORK/chg.err'"
rx "$CLI" set "$IF_RX" --class 'dns: udp dport 53 interval 200ms' >/dev/null
sleep 0.6
send 10.212.7.1 10 --dport 53 >/dev/null
wait "$REC_PID"
REC_PID=
check "changed list: record warns" grep -q "the class list of $IF_RX changed during the recording" "$WORK/chg.err"
rx "$CLI" analyze "$WORK/chg.xpr" --json >"$WORK/chg.json"
check "changed list: the 10 packets after it are not judged, the 20 before are" \
	python3 -c "import json; a=json.load(open('$WORK/chg.json'))['audit']; assert (a['packets'], a['after_class_change_not_judged']) == (20, 10), a"

# --- classes configured after a classless start: skipped, counted, said ---
rx "$CLI" set "$IF_RX" --class none >/dev/null
check "set --class none" test $? -eq 0
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/late.xpr" --sample-sources 1/1 --duration 2s >"$WORK/late.out" 2>"$WORK/late.err" &
REC_PID=$!
sleep 0.4
send 10.212.5.1 10 --dport 53 >/dev/null
rx "$CLI" set "$IF_RX" --class 'dns: udp dport 53 interval 300ms' >/dev/null
send 10.212.6.1 10 --dport 53 >/dev/null
wait "$REC_PID"
REC_PID=
check "late classes: the classless records kept (format 1)" \
	bash -c "grep -q ': 10 records written' '$WORK/late.out' && test \"\$(od -An -tu2 -j8 -N2 '$WORK/late.xpr' | tr -d ' ')\" = 1"
check "late classes: 10 records skipped, said so" grep -q "warning: 10 records of traffic classes configured after the recording started were skipped" "$WORK/late.err"

finish
