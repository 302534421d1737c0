#!/usr/bin/env bash
# Integration: the CLI against real traffic on a veth pair in namespaces
# this test creates: load, stats, query, set under traffic, unload; then the
# same program attached by iproute2 and driven by the CLI; then failures
# that must leave nothing behind.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xpt || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
PINS=$(pins_of "$NS_RX" "$IF_RX")

# --- loaded by the CLI ---
out=$(rx "$CLI" load "$IF_RX" 2>&1)
check "load attaches (exit 0)" test $? -eq 0
echo "$out" | sed 's/^/    /'
check "load reports the attach path libxdp took" grep -q "single program\|libxdp dispatcher" <<<"$out"
check "pins created under $PINS" test -e "$PINS/prog" -a -e "$PINS/sketch" -a -e "$PINS/config"
check "status names the interface and policy" grep -q 'policy pace' <<<"$(rx "$CLI" status "$IF_RX")"

sent=$(send 10.213.1.1 200 --per-source 3)
check "sender sent 600 frames" test "$sent" = 600
sleep 0.2
# Queries first: "just seen" must be well inside the 1 s interval.
q=$(rx "$CLI" query "$IF_RX" 10.213.1.5)
check "query: a just-seen source would be dropped" grep -q DROPPED <<<"$q"
check "seen == 600" test "$(stat_of seen)" = 600
check "passed == 200 (one per source)" test "$(stat_of passed)" = 200
check "dropped_recent == 400" test "$(stat_of dropped_recent)" = 400
check "ipv4 == 600" test "$(stat_of ipv4)" = 600

q=$(rx "$CLI" query "$IF_RX" 10.213.99.99)
check "query: an unseen source would pass" grep -q "would pass" <<<"$q"

# IPv6: 50 sources inside one /64 are one key (default prefix6 64); 20 /64s are 20.
DST=fd00:213::1 send fd00:213:0:1::1 50 >/dev/null
sleep 0.2
# Queried before the next sender starts: under load its start-up could age the key past 1 s.
check "query masks IPv6 to the /64" grep -q "fd00:213:0:1::/64.*DROPPED" <<<"$(rx "$CLI" query "$IF_RX" fd00:213:0:1::abcd)"
DST=fd00:213::1 send fd00:213:0:100:: 20 --stride 18446744073709551616 >/dev/null
sleep 0.2
check "ipv6 == 70" test "$(stat_of ipv6)" = 70
check "ipv6: one /64 with 50 sources + 20 other /64s pass 21" test "$(stat_of passed)" = 221

# After the interval every source passes once more.
sleep 1.5
send 10.213.1.1 200 --per-source 2 >/dev/null
sleep 0.2
check "after the interval: passed == 421" test "$(stat_of passed)" = 421

# --- set under traffic ---
send 10.213.2.1 50 --rounds 40 --round-gap 0.05 >/dev/null &
bg=$!
sleep 0.5
rx "$CLI" set "$IF_RX" --interval 500ms >/dev/null
check "set --interval under traffic" test $? -eq 0
out=$(rx "$CLI" set "$IF_RX" --policy quiet)
check "set --policy under traffic" test $? -eq 0
check "... reports the one setting it changed ($out)" grep -q "^xdp-pacer: $IF_RX: 1 setting changed (policy); now interval 500.000 ms" <<<"$out"
out=$(rx "$CLI" set "$IF_RX" --policy quiet --interval 500ms)
check "set of what runs already: exit 0, no change ($out)" \
	bash -c '[ "$1" = 0 ] && grep -q "^xdp-pacer: $2: no change: interval 500.000 ms" <<<"$3"' _ $? "$IF_RX" "$out"
w=$(rx "$CLI" stats "$IF_RX" --watch 1 --count 1 --json)
check "stats --watch reports rates under traffic" python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert d['seen_per_s'] > 0, d" "$w"
wait $bg
st=$(rx "$CLI" status "$IF_RX")
check "status shows the new interval and policy" bash -c "grep -q 'interval 500.000 ms' <<<'$st' && grep -q 'policy quiet' <<<'$st'"
check "all 2000 frames of the run were seen" test "$(stat_of seen)" = $((600 + 70 + 400 + 2000))
rx "$CLI" set "$IF_RX" --interval 10s >/dev/null 2>&1
check "set outside the tick's range is refused (exit 2)" test $? -eq 2
rx "$CLI" set "$IF_RX" --rows 2 >/dev/null 2>&1
check "set of a load-time option is refused" test $? -eq 2

# --- unload ---
rx "$CLI" unload "$IF_RX" >/dev/null
check "unload exits 0" test $? -eq 0
check "no XDP program left" bash -c "! ip -n $NS_RX link show $IF_RX | grep -q xdp"
check "no pins left" test ! -e "$PINS"
rx "$CLI" unload "$IF_RX" >/dev/null 2>&1
check "unload of nothing fails" test $? -eq 1

# --- an interval finer than the clock's steps is loaded, with a warning ---
out=$(rx "$CLI" load "$IF_RX" --interval 50ns --tick 1ns 2>&1)
check "load --interval 50ns on the cached clock warns of its steps" grep -q "finer than the cached clock's steps" <<<"$out"
out=$(rx "$CLI" set "$IF_RX" --interval 60ns 2>&1)
check "... and so does set" grep -q "finer than the cached clock's steps" <<<"$out"
rx "$CLI" unload "$IF_RX" >/dev/null
out=$(rx "$CLI" load "$IF_RX" --interval 50ns --tick 1ns --clock precise 2>&1)
check "--clock precise: no warning" bash -c '! grep -q warning <<<"$1"' _ "$out"
rx "$CLI" unload "$IF_RX" >/dev/null

# --- attached by iproute2, driven by the CLI ---
rx ip link set dev "$IF_RX" xdp obj "$OBJ" sec xdp
check "ip link ... xdp obj attaches the object" test $? -eq 0
st=$(rx "$CLI" status "$IF_RX")
check "status finds it from the interface (no pins)" grep -q "another loader" <<<"$st"
check "status shows the compiled defaults" bash -c "grep -q '4 rows x 1048576 cells' <<<'$st' && grep -q 'interval 1 s' <<<'$st'"
send 10.213.3.1 100 --per-source 2 >/dev/null
sleep 0.2
check "query works without pins" grep -q DROPPED <<<"$(rx "$CLI" query "$IF_RX" 10.213.3.7)"
check "iproute2 load: seen == 200" test "$(stat_of seen)" = 200
check "iproute2 load: passed == 100" test "$(stat_of passed)" = 100
check "iproute2 load: the datapath drew its own key" test "$(stat_of key_init)" = 2
rx "$CLI" set "$IF_RX" --interval 250ms --prefix4 24 >/dev/null
check "set works without pins" grep -q "interval 250.000 ms" <<<"$(rx "$CLI" status "$IF_RX")"
send 10.213.4.1 10 >/dev/null
sleep 0.1
check "prefix /24 set live: 10 sources in one /24 share fate (1 passed)" test "$(stat_of passed)" = 101
rx "$CLI" unload "$IF_RX" >/dev/null
check "unload detaches an iproute2-attached pacer" bash -c "! ip -n $NS_RX link show $IF_RX | grep -q xdp"

# --- failures leave nothing behind ---
rx "$CLI" load "$IF_RX" --interval 5 >/dev/null 2>&1
check "bad --interval: exit 2" test $? -eq 2
err=$(rx "$CLI" load "$IF_RX" --rows 9 2>&1)
check "bad --rows: exit 2 naming the value" bash -c "[ $? -eq 2 ] && grep -q \"'9'\" <<<\"$err\""
rx "$CLI" load "$IF_RX" --width 1000 >/dev/null 2>&1
check "non power-of-two --width: exit 2" test $? -eq 2
rx "$CLI" load nosuchif0 >/dev/null 2>&1
check "unknown interface: exit 1" test $? -eq 1
err=$(rx "$CLI" load "$IF_RX" --width 1073741824 --rows 8 --placement percpu 2>&1)
check "a sketch larger than half the memory is refused up front" bash -c "[ $? -eq 2 ] && grep -q 'memory available' <<<\"$err\""
rx "$CLI" load lo --mode native >/dev/null 2>&1
check "a load that fails at attach (native XDP on lo) exits 1" test $? -eq 1
check "... and leaves no program" bash -c "! ip -n $NS_RX link show lo | grep -q xdp"
check "... and no pins" test ! -e "$(pins_of "$NS_RX" lo)"
rx "$CLI" load "$IF_RX" --placement shared --layout blocked >/dev/null
rx "$CLI" load "$IF_RX" >/dev/null 2>&1
check "a second load on a busy interface fails" test $? -eq 1
check "... and the first stays attached" grep -q "shared" <<<"$(rx "$CLI" status "$IF_RX")"
rx "$CLI" unload "$IF_RX" >/dev/null
"$CLI" frobnicate >/dev/null 2>&1
check "unknown verb: exit 2" test $? -eq 2
"$CLI" load --help | grep -q -- "--interval DUR"
check "load --help documents options" test $? -eq 0
bad=
for v in load unload status set stats query model gen record analyze exporter; do
	for h in -h --help; do
		out=$("$CLI" "$v" "$h" 2>&1) && grep -q "^Usage: xdp-pacer $v " <<<"$out" && grep -q -- "-h, --help" <<<"$out" || bad="$bad $v$h"
	done
done
check "every verb prints its usage for -h and --help, exit 0 (failed:${bad:- none})" test -z "$bad"
usage_error_says() { # text, command...: exit 2 with text in the message
	local want=$1 out
	shift
	out=$("$@" 2>&1)
	[ $? -eq 2 ] && grep -qF -- "$want" <<<"$out"
}
check "record's sampling is --sample-sources, as in set: the old name is an unknown option (exit 2)" \
	usage_error_says "unknown option '--sources'" "$CLI" record lo -o /tmp/never.xpr --sources 1/2
check "model --target-false-drop out of range: exit 2 naming the value" \
	usage_error_says "invalid value '2' for --target-false-drop" "$CLI" model --sources 10 --target-false-drop 2
for b in table dense; do
	for o in "--rows 2" "--layout blocked"; do
		check "model --backend $b $o: exit 2, the tables take --width only" \
			usage_error_says "the tables take --width (entries) only" "$CLI" model --backend "$b" --sources 10 $o
	done
done
check "an option without its value: exit 2 saying so" \
	usage_error_says "option '--watch' needs a value" "$CLI" stats lo --watch
check "set refuses a fixed-at-load option, naming it (exit 2)" \
	usage_error_says "for --rows: fixed at load" "$CLI" set lo --rows 2

finish
