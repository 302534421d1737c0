#!/usr/bin/env bash
# Integration: program variants (docs/design.md, Program variants), on a
# veth pair in namespaces this test creates.  load builds the program for
# the stages its settings use; set (mode, budget, classes), deny/exempt,
# and the sampling readers (events, top, record) swap in a variant with a
# stage before turning it on and one without it after turning it off,
# every map kept (the program id changes, the maps' ids do not); status
# names the stages and why.  A swap the verifier refuses changes nothing.
# Under traffic from 400 sources, swaps back and forth leave no packet
# unjudged and none judged twice: a recording of every packet holds one
# record per frame that reached the interface, the limiter's seen counter
# the same, and the receiving stack got exactly the frames the limiter
# passed; analyze's audit finds no admission over any source's limit.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-variants.XXXXXX)
cleanup() {
	stop_background
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

setup_pair xpv || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
PINS=$(pins_of "$NS_RX" "$IF_RX")
# status --json's FIELD: stages, stages_in_use (a list, comma-joined) or prog_id.
st() {
	rx "$CLI" status "$IF_RX" --json | python3 -c "
import json, sys
v = json.load(sys.stdin)['interfaces'][0][sys.argv[1]]
print(','.join(v) if isinstance(v, list) else v)" "$1"
}
stages_are() { # DESCRIPTION WANT: the running stages are WANT and the settings use them
	local run use
	run=$(st stages) use=$(st stages_in_use)
	check "$1: stages '${run}' (want '$2'), the settings use '${use}'" test "$run" = "$2" -a "$use" = "$2"
}
map_ids() { # the pinned state and data maps' ids: a swap keeps every one
	local f
	for f in sketch stats events config budget budget_config budget_seen classes list4 list6; do
		bpftool map show pinned "$PINS/$f" 2>/dev/null | sed -n '1s/^\([0-9]*\):.*/\1/p'
	done | tr '\n' ' '
}
pinned_prog() { bpftool prog show pinned "$PINS/prog" 2>/dev/null | sed -n '1s/^\([0-9]*\):.*/\1/p'; }

out=$(rx "$CLI" load "$IF_RX" --interval 1s --placement shared 2>&1)
check "load --interval 1s (exit 0)" test $? -eq 0
check "load says the stages: none (what the settings use)" grep -q "stages: none (what the settings use)" <<<"$out"
stages_are "after load" ""
maps0=$(map_ids)
id0=$(st prog_id)

out=$(rx "$CLI" set "$IF_RX" --mode observe 2>&1)
check "set --mode observe (exit 0) swaps the program, saying so" \
	bash -c "test $? -eq 0 && grep -q 'swapped for id .*every map kept; stages: observe' <<<\"\$1\"" _ "$out"
stages_are "mode observe" observe
id1=$(st prog_id)
check "... another program ($id0, now $id1), the pins follow it ($(pinned_prog))" \
	test "$id1" != "$id0" -a "$(pinned_prog)" = "$id1"
check "... every map kept" test "$(map_ids)" = "$maps0"
out=$(rx "$CLI" set "$IF_RX" --mode enforce 2>&1)
check "set --mode enforce (exit 0)" test $? -eq 0
stages_are "mode enforce again" ""

rx "$CLI" deny add "$IF_RX" 10.250.0.0/16 >/dev/null 2>&1
check "deny add (exit 0)" test $? -eq 0
stages_are "deny add" lists
rx "$CLI" set "$IF_RX" --deny-mode observe >/dev/null 2>&1
stages_are "the deny list observed" lists,observe
rx "$CLI" set "$IF_RX" --deny-mode global >/dev/null 2>&1
rx "$CLI" deny flush "$IF_RX" >/dev/null 2>&1
check "deny flush (exit 0)" test $? -eq 0
stages_are "deny flush" ""
out=$(rx "$CLI" set "$IF_RX" --budget 1000/1s 2>&1)
check "set --budget 1000/1s (exit 0)" test $? -eq 0
stages_are "set --budget 1000/1s" budget
out=$(rx "$CLI" set "$IF_RX" --class 'dns: udp dport 53 interval 1s' 2>&1)
check "set --class (exit 0), reporting the class" bash -c "test $? -eq 0 && grep -q 'dns' <<<\"\$1\"" _ "$out"
stages_are "a class beside the budget" classes,budget
out=$(rx "$CLI" set "$IF_RX" --class none --budget off 2>&1)
check "set --class none --budget off (exit 0, a swap and the classes' report after it)" test $? -eq 0
stages_are "no class, no budget" ""
check "every map kept across these swaps" test "$(map_ids)" = "$maps0"

reader_start "$WORK/events.out" events
check "events switched sampling on" test $? -eq 0
stages_are "while events reads" sampling
reader_stop INT
check "events exits 0 on SIGINT" test $? -eq 0
stages_are "events gone" ""

# A swap the verifier refuses: the change is not made, the program stays.
id=$(st prog_id)
out=$(XDP_PACER_FAULT=verifier rx "$CLI" set "$IF_RX" --mode observe 2>&1)
rc=$?
check "a refused swap: set exits 1, saying the limiter is unchanged" \
	bash -c "test $rc -eq 1 && grep -q 'is unchanged (program id' <<<\"\$1\"" _ "$out"
check "... the mode is not changed, the program is the same" \
	test "$(rx "$CLI" status "$IF_RX" | sed -n 's/^  live: mode \([a-z]*\).*/\1/p')" = enforce -a "$(st prog_id)" = "$id"

# XDP_PACER_VARIANT names stages every program carries (all: every one).
out=$(XDP_PACER_VARIANT=all rx "$CLI" load "$IF_RX" --replace 2>&1)
check "XDP_PACER_VARIANT=all load --replace (exit 0)" test $? -eq 0
check "... status says why it carries every stage" \
	bash -c "grep -q 'stages: classes, lists, budget, sampling, observe (XDP_PACER_VARIANT=all; the settings use: none)' <<<\"\$1\"" _ "$(XDP_PACER_VARIANT=all rx "$CLI" status "$IF_RX")"
check "... and without it, that the next change settles it" \
	bash -c "grep -q 'stages: classes, lists, budget, sampling, observe (the settings use: none; the next change settles it)' <<<\"\$1\"" _ "$(rx "$CLI" status "$IF_RX")"
rx "$CLI" set "$IF_RX" --mode enforce >/dev/null 2>&1
stages_are "the next change settles it" ""

# --- swaps under traffic: no packet unjudged, none judged twice ---
ip -n "$NS_RX" addr add 10.213.0.1/24 dev "$IF_RX"
in_receives() { rx cat /proc/net/snmp | awk '$1 == "Ip:" { if (h) { print $4; exit } h = 1 }'; }
passes() { # every XDP_PASS verdict the limiter counted (IPv4 UDP from the generator)
	rx "$CLI" stats "$IF_RX" --json | python3 -c "
import json, sys
s = json.load(sys.stdin)
print(sum(s[k] for k in ('passed', 'exempt_passed', 'would_drop_recent', 'would_drop_budget', 'would_drop_deny')))"
}
seen0=$(stat_of seen) pass0=$(passes) in0=$(in_receives) lost0=$(stat_of record_lost)
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/swaps.xpr" --sample-sources 1/1 \
	--sample-packets 1/1 --duration 60s >"$WORK/rec.out" 2>&1 &
rec_pid=$!
for _ in $(seq 200); do grep -q "^recording " "$WORK/rec.out" && break; sleep 0.05; done
stages_are "while record records" sampling
nsenter --net="/run/netns/$NS_TX" taskset -c 0 "$CLI" gen "$IF_TX" --dist uniform --sources 400 \
	--src-base 10.218.0.0 --dst 10.213.0.1 --dst-mac "$RX_MAC" --pps 20000 --duration 3s --json \
	>"$WORK/gen.json" 2>"$WORK/gen.err" &
gen_pid=$!
swaps=0
for change in "set @ --mode observe" "set @ --mode enforce" "deny add @ 10.250.0.0/16" \
	"set @ --budget 100000/1s" "deny flush @" "set @ --budget off" "exempt add @ 10.251.0.7" \
	"exempt flush @"; do
	sleep 0.25
	# shellcheck disable=SC2086 # the change's words, @ the interface
	rx "$CLI" ${change/@/$IF_RX} >"$WORK/change.out" 2>&1
	if grep -q "swapped for id" "$WORK/change.out"; then
		swaps=$((swaps + 1))
	else
		echo "# $change: $(tr '\n' ' ' <"$WORK/change.out")"
	fi
done
wait "$gen_pid"
check "the generator ran (exit 0)" test $? -eq 0
check "$swaps swaps under traffic (want 8)" test "$swaps" -eq 8
sleep 0.5
kill -INT "$rec_pid"
wait "$rec_pid"
check "record went on across the swaps (exit 0)" test $? -eq 0
stages_are "record gone" ""
read -r sent tx_drop <<<"$(python3 -c "
import json, sys
g = json.load(open(sys.argv[1]))
print(g['sent'], g.get('device_tx_dropped', 0))" "$WORK/gen.json")"
arrived=$((sent - tx_drop))
seen=$(($(stat_of seen) - seen0))
check "the limiter judged each of the $arrived frames that reached it once (seen $seen; sent $sent, $tx_drop dropped by the sender's device)" \
	test "$seen" -eq "$arrived"
passed=$(($(passes) - pass0)) received=$(($(in_receives) - in0))
check "the stack received exactly the $passed frames the limiter passed (received $received)" \
	test "$received" -eq "$passed"
rx "$CLI" analyze "$WORK/swaps.xpr" --json >"$WORK/a.json" 2>"$WORK/a.err"
check "analyze exits 0" test $? -eq 0
read -r pk fp mx <<<"$(python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))['audit']
print(a['packets'], a['false_passes'], a['max_admits_in_one_interval'])" "$WORK/a.json")"
lost=$(($(stat_of record_lost) - lost0))
check "one record per frame judged ($pk records, $lost lost, $arrived frames)" test "$((pk + lost))" -eq "$arrived"
check "... no frame over any source's limit across the swaps (false passes $fp, most admits of one source in an interval $mx)" \
	test "${fp:-1}" = 0 -a "${mx:-9}" -le 1
check "every map kept across the swaps under traffic" test "$(map_ids)" = "$maps0"
rx "$CLI" unload "$IF_RX" >/dev/null
finish
