#!/usr/bin/env bash
# Integration: restart and upgrade lose nothing (docs/operating.md, Restart,
# upgrade and purge), on a veth pair in namespaces this test creates.
# `load --replace` puts a new limiter in the running one's place with its
# maps: a source admitted once keeps sending through it and exactly one of
# its frames passes (tcpdump behind the limiter); a denied source stays
# denied and its entry keeps its deadline; the counters go on; a poller
# never sees the interface without a program; readers (events) go on.
# A replace that fails (a bad option, the verifier's refusal, a geometry
# that cannot keep the state) leaves everything as it was.  --reset-state
# starts the state afresh and keeps the lists.  unload --keep-maps and a
# later load resume; a plain unload says what it discards.  Under a flood
# of 1000 sources, a replace admits no frame over any source's limit
# (record, then analyze's audit).
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-restart.XXXXXX)
cleanup() {
	stop_background
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT
WATCH=$BUILD/tests/tools/xdp_watch
# The generator from the sender's namespace, one CPU (a function: not for the background).
gen() { nsenter --net="/run/netns/$NS_TX" taskset -c 0 "$CLI" gen "$IF_TX" "$@"; }

setup_pair xpz || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
PINS=$(pins_of "$NS_RX" "$IF_RX")
prog_id() { rx "$CLI" status "$IF_RX" --json | grep -o '"prog_id":[0-9]*' | head -1 | cut -d: -f2; }
map_ids() { # the pinned maps' ids, one line: what a failed replace must leave as it was
	local f
	for f in "$PINS"/*; do bpftool map show pinned "$f" 2>/dev/null | sed -n '1s/^\([0-9]*\):.*/\1/p'; done | tr '\n' ' '
}
deny_line() { # the deny list, its entries' time left out (it moves by the second)
	rx "$CLI" deny list "$IF_RX" --json | sed 's/"expires_s":[0-9]*//g'
}
expires_of() { # the deny entry PREFIX's deadline: now + its time left, in whole seconds
	rx "$CLI" deny list "$IF_RX" --json | python3 -c "
import json, sys, time
d = json.load(sys.stdin)
print([round(time.time()) + e['expires_s'] for e in d['entries'] if e['prefix'] == sys.argv[1]][0])" "$1"
}
near() { [ $(($1 - $2)) -ge -2 ] && [ $(($1 - $2)) -le 2 ]; } # two deadlines, read at two moments

out=$(rx "$CLI" load "$IF_RX" --interval 60s --placement shared 2>&1)
check "load --interval 60s" test $? -eq 0
rx "$CLI" deny add "$IF_RX" 10.216.9.0/24 --timeout 10m >/dev/null 2>&1
rx "$CLI" deny add "$IF_RX" 10.216.8.1 >/dev/null
id1=$(prog_id) # after the first entry: the program with the lists' stage (variant_swap.h)
exp1=$(expires_of 10.216.9.0/24)
check "the timed deny entry has a deadline ($exp1)" test -n "$exp1"
out=$(rx "$CLI" load "$IF_RX" 2>&1)
rc=$?
check "load over a running limiter without --replace: refused (exit 1), naming --replace" \
	bash -c "test $rc -eq 1 && grep -q -- '--replace' <<<\"\$1\"" _ "$out"

# --- one source through a replace: exactly one frame passes ---
nsenter --net="/run/netns/$NS_RX" tcpdump -i "$IF_RX" -n -U -w "$WORK/behind.pcap" \
	'udp and src host 10.216.0.1' 2>"$WORK/tcpdump.err" &
tcpdump_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/tcpdump.err" && break; sleep 0.05; done
nsenter --net="/run/netns/$NS_RX" "$WATCH" "$IF_RX" 3 >"$WORK/watch" 2>&1 &
watch_pid=$!
nsenter --net="/run/netns/$NS_TX" taskset -c 0 "$CLI" gen "$IF_TX" --dist uniform --sources 1 \
	--src-base 10.216.0.1 --dst 10.216.255.254 --dst-mac "$RX_MAC" --pps 1000 --duration 2500ms \
	--json >"$WORK/gen1" 2>/dev/null &
gen_pid=$!
sleep 1
rx "$CLI" load "$IF_RX" --replace --interval 60s --placement shared >"$WORK/replace.out" 2>&1
check "load --replace under traffic (exit 0)" test $? -eq 0
check "... says it replaced the limiter" grep -q "replaced the limiter on $IF_RX" "$WORK/replace.out"
check "... and what it kept" grep -q "kept from the running limiter (program id $id1): the sources' state" "$WORK/replace.out"
wait "$gen_pid"
wait "$watch_pid"
id2=$(prog_id)
check "a new program runs ($id1 -> $id2)" test -n "$id2" -a "$id2" != "$id1"
read -r _ samples _ none _ ids <"$WORK/watch"
check "the poller never saw $IF_RX without a program ($samples answers, $none without; ids: $ids)" \
	test "${samples:-0}" -gt 100 -a "${none:-1}" = 0
check "... and saw the old program, then the new one, nothing between" test "$ids" = "$id1 $id2"
sleep 0.3
kill -TERM "$tcpdump_pid"; wait "$tcpdump_pid"
sent=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['sent'])" "$WORK/gen1")
behind=$(tcpdump -r "$WORK/behind.pcap" -n 2>/dev/null | grep -c .)
check "the source sent $sent frames across the replace; exactly 1 passed (tcpdump behind the limiter: $behind)" \
	test "$sent" -ge 2000 -a "$behind" = 1
check "the counters went on: seen >= sent ($(stat_of seen) >= $sent)" test "$(stat_of seen)" -ge "$sent"
exp2=$(expires_of 10.216.9.0/24)
check "the timed deny entry kept its deadline ($exp1, now $exp2)" near "$exp2" "$exp1"
check "... and the permanent one is there" grep -q '"prefix":"10.216.8.1/32"' <<<"$(deny_line)"
d0=$(stat_of deny_dropped)
gen --dist uniform --sources 1 --src-base 10.216.9.7 --count 5 >/dev/null 2>&1
settle "$(($(stat_of seen) + 0))"
sleep 0.2
check "the denied source stays denied (deny_dropped +5)" test $(($(stat_of deny_dropped) - d0)) = 5
check "the pins hold the stamp" test -e "$PINS/meta"

# --- a replace that fails changes nothing ---
before_maps=$(map_ids) before_deny=$(deny_line) before_q=$(rx "$CLI" query "$IF_RX" 10.216.0.1 --json)
out=$(rx "$CLI" load "$IF_RX" --replace --width 100 2>&1)
check "a bad option: refused (exit 2)" test $? -eq 2
out=$(rx env XDP_PACER_FAULT=verifier "$CLI" load "$IF_RX" --replace --interval 60s --placement shared 2>&1)
rc=$?
check "the verifier's refusal: exit 1, saying why and that the limiter is unchanged" \
	bash -c "test $rc -eq 1 && grep -q 'rejected the program' <<<\"\$1\" && grep -q 'unchanged (program id $id2)' <<<\"\$1\"" _ "$out"
out=$(rx "$CLI" load "$IF_RX" --replace --width 65536 --interval 60s --placement shared 2>&1)
rc=$?
check "a new geometry without --reset-state: refused (exit 2), naming it and --reset-state" \
	bash -c "test $rc -eq 2 && grep -q 'width 65536 lines\|width' <<<\"\$1\" && grep -q -- '--reset-state' <<<\"\$1\"" _ "$out"
check "... after all three, the same program runs" test "$(prog_id)" = "$id2"
check "... with the same pinned maps" test "$(map_ids)" = "$before_maps"
check "... the same lists" test "$(deny_line)" = "$before_deny"
check "... and the same state" test "$(rx "$CLI" query "$IF_RX" 10.216.0.1 --json | sed 's/"age_ticks":[0-9]*//')" = \
	"$(sed 's/"age_ticks":[0-9]*//' <<<"$before_q")"

# --- readers go on through a replace ---
nsenter --net="/run/netns/$NS_RX" "$CLI" events "$IF_RX" --hold 500ms --sample-packets 1/1 \
	>"$WORK/events" 2>"$WORK/events.err" &
ev_pid=$!
for _ in $(seq 50); do [ "$(sampling)" != off ] && break; sleep 0.1; done
gen --dist uniform --sources 1 --src-base 10.216.1.1 --count 20 >/dev/null 2>&1
rx "$CLI" load "$IF_RX" --replace --interval 60s --placement shared >/dev/null 2>&1
gen --dist uniform --sources 1 --src-base 10.216.2.1 --count 20 >/dev/null 2>&1
sleep 1.5
kill -INT "$ev_pid"; wait "$ev_pid"
check "events went on across the replace (a start for a source before it and one after)" \
	bash -c "grep -q 'start 10.216.1.1/32' '$WORK/events' && grep -q 'start 10.216.2.1/32' '$WORK/events'"
check "... and said it follows the new program" grep -q "replaced in place .* going on with it" "$WORK/events.err"

# --- the stamp: a map of another meaning is never read as this release's ---
meta_set() { # slot version: that map's version in the pins' stamp (enum pacer_map_id's slot)
	local v
	v=$(bpftool -j map lookup pinned "$PINS/meta" key 0 0 0 0 | python3 -c "
import json, sys
b = [int(x, 16) for x in json.load(sys.stdin)['value']]
slot, ver = int(sys.argv[1]), int(sys.argv[2])
b[32 + 4 * slot:36 + 4 * slot] = list(ver.to_bytes(4, 'little'))
print(' '.join(str(x) for x in b))" "$1" "$2")
	bpftool map update pinned "$PINS/meta" key 0 0 0 0 value $v
}
id3=$(prog_id)
meta_set 11 7 # the IPv4 list, as a release with another definition of it would stamp it
out=$(rx "$CLI" load "$IF_RX" --replace --interval 60s --placement shared 2>&1)
rc=$?
check "lists of a definition this release does not know: the replace is refused (exit 1), naming them" \
	bash -c "test $rc -eq 1 && grep -q \"list4 map was written by release .* at version 7\" <<<\"\$1\"" _ "$out"
check "... the same program runs, with its lists" \
	bash -c "test '$(prog_id)' = '$id3' && grep -q '10.216.9.0/24' <<<\"\$1\"" _ "$(deny_line)"
meta_set 11 1
meta_set 0 7 # the sketch, likewise
out=$(rx "$CLI" load "$IF_RX" --replace --interval 60s --placement shared 2>&1)
check "a sketch of another meaning: the replace makes the state afresh, saying why" \
	bash -c "test $? -eq 0 && grep -q 'made afresh: the sources. state (its meaning changed (version 7, now 1))' <<<\"\$1\"" _ "$out"
check "... and keeps the lists" grep -q '"prefix":"10.216.9.0/24"' <<<"$(deny_line)"
check "... a source seen before is unseen now" \
	grep -q '"age_ticks":-1' <<<"$(rx "$CLI" query "$IF_RX" 10.216.0.1 --json)"

# --- a new geometry with --reset-state: the state afresh, the lists kept ---
gen --dist uniform --sources 1 --src-base 10.216.0.1 --count 3 >/dev/null 2>&1
sleep 0.2
check "the source is seen again" grep -q '"would_drop":true' <<<"$(rx "$CLI" query "$IF_RX" 10.216.0.1 --json)"
out=$(rx "$CLI" load "$IF_RX" --replace --width 65536 --reset-state --interval 60s --placement shared 2>&1)
check "--reset-state with a new width (exit 0)" test $? -eq 0
check "... says the state is made afresh" grep -q "made afresh: the sources' state" <<<"$out"
check "... the lists are kept" grep -q '"prefix":"10.216.9.0/24"' <<<"$(deny_line)"
check "... and a source seen before is unseen now" \
	grep -q '"age_ticks":-1' <<<"$(rx "$CLI" query "$IF_RX" 10.216.0.1 --json)"

# --- stop and start: unload --keep-maps, then load, resumes ---
seen0=$(stat_of seen)
out=$(rx "$CLI" unload "$IF_RX" --keep-maps 2>&1)
check "unload --keep-maps (exit 0) says what it keeps" \
	bash -c "test $? -eq 0 && grep -q 'kept in $PINS: 2 added list entries' <<<\"\$1\"" _ "$out"
check "... the interface runs nothing" test -z "$(prog_id)"
out=$(rx "$CLI" load "$IF_RX" --width 65536 --interval 60s --placement shared 2>&1)
check "a load resumes the stopped limiter's pins (exit 0)" \
	bash -c "test $? -eq 0 && grep -q \"kept from the stopped limiter's pins\" <<<\"\$1\"" _ "$out"
exp3=$(expires_of 10.216.9.0/24)
check "... the deny entries are back, with their deadline ($exp1, now $exp3)" near "$exp3" "$exp1"
check "... the counters went on ($seen0)" test "$(stat_of seen)" = "$seen0"
gen --dist uniform --sources 50 --src-base 10.216.50.0 --count 50 >/dev/null 2>&1
sleep 0.2
out=$(rx "$CLI" unload "$IF_RX" 2>&1)
check "a plain unload says what it discards" grep -q "discarding 2 added list entries" <<<"$out"
held=$(sed -n 's/.*the state of about \([0-9]*\) sources seen within the interval.*/\1/p' <<<"$out")
check "... and the state of the 50 sources just seen (about ${held:-none})" \
	test "${held:-0}" -ge 50 -a "${held:-0}" -le 52
check "... and leaves no pins" test ! -e "$PINS"

# --- under a flood: a replace admits no frame over any source's limit ---
rx "$CLI" load "$IF_RX" --interval 1s --placement shared >/dev/null
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/flood.xpr" --sample-sources 1/1 \
	--duration 60s >"$WORK/rec.out" 2>&1 &
rec_pid=$!
for _ in $(seq 200); do grep -q "^recording " "$WORK/rec.out" && break; sleep 0.05; done
nsenter --net="/run/netns/$NS_TX" taskset -c 0 "$CLI" gen "$IF_TX" --dist uniform --sources 1000 \
	--src-base 10.217.0.0 --pps 100000 --duration 3s >/dev/null 2>&1 &
gen_pid=$!
sleep 0.7
rx "$CLI" load "$IF_RX" --replace --interval 1s --placement shared >/dev/null 2>&1
check "load --replace under a flood of 1000 sources (exit 0)" test $? -eq 0
sleep 0.7
rx "$CLI" load "$IF_RX" --replace --interval 1s --placement shared >/dev/null 2>&1
check "... and again" test $? -eq 0
wait "$gen_pid"
sleep 0.3
kill -INT "$rec_pid"; wait "$rec_pid"
check "record went on across both replaces (exit 0)" test $? -eq 0
rx "$CLI" analyze "$WORK/flood.xpr" --json >"$WORK/a.json" 2>"$WORK/a.err"
check "analyze exits 0" test $? -eq 0
audit=$(python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['audit']; print(a['packets'], a['false_passes'], a['max_admits_in_one_interval'])" "$WORK/a.json")
read -r pk fp mx <<<"$audit"
check "the audit judged the flood ($pk packets, >= 200000)" test "${pk:-0}" -ge 200000
check "... no frame over any source's limit across the replaces (false passes $fp, most admits of one source in an interval $mx)" \
	test "${fp:-1}" = 0 -a "${mx:-9}" -le 1
rx "$CLI" unload "$IF_RX" >/dev/null
finish
