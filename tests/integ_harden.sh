#!/usr/bin/env bash
# Integration: the CLI's hardening, in namespaces this test creates.
#  - pins are per network namespace: two namespaces with an interface of the
#    same name load, show and unload independently; status lists the other
#    namespace's pins, labelled;
#  - concurrent loads of one interface: one wins, its pins and program stay;
#  - orphans: pins of a deleted interface, and of a deleted namespace, are
#    listed by status and removed by unload;
#  - stats --watch notices an unload; query takes ::ffff:a.b.c.d as IPv4;
#  - output files never follow planted links; record removes its lock file;
#  - usage errors exit 2, model says when nothing meets the target, analyze
#    refuses a FIFO without hanging, load prints the true interval range.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xp-harden.XXXXXX)
NS_A="xph-a-$$" NS_B="xph-b-$$" NS_C="xph-c-$$"
SAME="xphs$$"; SAME=${SAME:0:15}   # the same interface name in A and B
BG=
cleanup() {
	stop_background
	[ -n "$BG" ] && kill $BG 2>/dev/null
	for ns in "$NS_A" "$NS_B" "$NS_C"; do
		[ -e "/run/netns/$ns" ] || continue
		local p; p=$(pins_of "$ns" "$SAME")
		rm -rf "$p" 2>/dev/null; rmdir "$(dirname "$p")" 2>/dev/null
		rm -f "/run/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$ns").$SAME.lock" # the CLI's writer lock
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "${NS_C_PINS:-}" ] && { rm -rf "$NS_C_PINS"; rmdir "$(dirname "$NS_C_PINS")" 2>/dev/null; }
	[ -n "${INO_C:-}" ] && rm -f "/run/xdp-pacer/netns-$INO_C.$SAME.lock"
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

setup_pair xph || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
for ns in "$NS_A" "$NS_B" "$NS_C"; do
	ip netns add "$ns" && ip netns exec "$ns" ip link add "$SAME" type veth peer name "${SAME:0:13}p" &&
		ip -n "$ns" link set "$SAME" up || { echo "cannot create $ns"; exit 1; }
done
in_ns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }
PINS_A=$(pins_of "$NS_A" "$SAME")
PINS_B=$(pins_of "$NS_B" "$SAME")
INO_B=$(stat -L -c %i "/run/netns/$NS_B")

# --- two namespaces, one interface name ---
in_ns "$NS_A" "$CLI" load "$SAME" --interval 200ms >/dev/null
check "load in namespace A" test $? -eq 0
in_ns "$NS_B" "$CLI" load "$SAME" --interval 300ms >"$WORK/loadb" 2>&1
check "load of the same name in namespace B" test $? -eq 0
check "B's load removed nothing as stale" bash -c "! grep -q stale '$WORK/loadb'"
check "A's pins survive B's load" test -e "$PINS_A/prog" -a -e "$PINS_A/config"
check "B's pins are its own" test -e "$PINS_B/prog" -a "$PINS_A" != "$PINS_B"
st=$(in_ns "$NS_A" "$CLI" status "$SAME")
check "status in A: A's program with its pins and interval" \
	bash -c "grep -q 'loaded by xdp-pacer, pins in $PINS_A' <<<'$st' && grep -q 'interval 200.000 ms' <<<'$st'"
st=$(in_ns "$NS_A" "$CLI" status)
check "status in A lists B's pins, labelled as another namespace" \
	grep -q "$SAME in network namespace $INO_B (not this one): pins in $PINS_B.*that namespace exists" <<<"$st"
in_ns "$NS_B" "$CLI" unload "$SAME" >/dev/null
check "unload in B" test $? -eq 0
check "... removes B's pins" test ! -e "$PINS_B"
check "... and leaves A's pins" test -e "$PINS_A/prog"
check "... and A's program attached" grep -q "interval 200.000 ms" <<<"$(in_ns "$NS_A" "$CLI" status "$SAME")"
in_ns "$NS_A" "$CLI" unload --netns "$INO_B" "$SAME" >/dev/null 2>&1
check "unload --netns of a namespace that exists is refused" test $? -eq 1
LEGACY=/sys/fs/bpf/xdp-pacer/xphl$$
mkdir "$LEGACY" && bpftool prog pin pinned "$PINS_A/prog" "$LEGACY/prog"
check "status lists pins in the older, name-only layout" \
	grep -q "xphl$$: pins of an older xdp-pacer in $LEGACY" <<<"$("$CLI" status)"
rm -r "$LEGACY"
in_ns "$NS_A" "$CLI" unload "$SAME" >/dev/null
check "unload in A" test $? -eq 0 -a ! -e "$PINS_A"

# --- concurrent loads of one interface ---
for i in 1 2 3; do
	in_ns "$NS_A" "$CLI" load "$SAME" >"$WORK/c1" 2>&1 & p1=$!
	in_ns "$NS_A" "$CLI" load "$SAME" >"$WORK/c2" 2>&1 & p2=$!
	wait $p1; r1=$?; wait $p2; r2=$?
	check "concurrent loads, try $i: exactly one wins ($r1, $r2)" test $((r1 + r2)) -eq 1
	check "... the winner's pins survive" test -e "$PINS_A/prog" -a -e "$PINS_A/stats"
	check "... status shows the winner, loaded with pins" \
		grep -q "loaded by xdp-pacer, pins in $PINS_A" <<<"$(in_ns "$NS_A" "$CLI" status "$SAME")"
	in_ns "$NS_A" "$CLI" unload "$SAME" >/dev/null
done

# --- orphans: the interface deleted under the program ---
in_ns "$NS_A" "$CLI" load "$SAME" >/dev/null
ip -n "$NS_A" link del "$SAME"
st=$(in_ns "$NS_A" "$CLI" status)
check "status lists the orphaned pins and says why" \
	grep -q "$SAME: ORPHANED pins in $PINS_A .*the interface no longer exists" <<<"$st"
out=$(in_ns "$NS_A" "$CLI" status "$SAME" 2>&1)
check "status of the deleted interface exits 1" test $? -eq 1
check "... and points at unload" grep -q "orphaned.*xdp-pacer unload $SAME" <<<"$out"
out=$(in_ns "$NS_A" "$CLI" unload "$SAME" 2>&1)
check "unload by the old name removes the orphan (exit 0)" test $? -eq 0
check "... and says so" grep -q "orphaned" <<<"$out"
check "... no pins left" test ! -e "$PINS_A"
in_ns "$NS_A" "$CLI" unload "$SAME" >/dev/null 2>&1
check "a second unload finds nothing (exit 1)" test $? -eq 1

# --- orphans: the whole namespace deleted ---
in_ns "$NS_C" "$CLI" load "$SAME" >/dev/null
NS_C_PINS=$(pins_of "$NS_C" "$SAME")
INO_C=$(stat -L -c %i "/run/netns/$NS_C")
ip netns del "$NS_C"
for _ in $(seq 50); do grep -q "net:\[$INO_C\]" /proc/self/mountinfo || break; sleep 0.1; done
st=$("$CLI" status)
check "status lists a dead namespace's pins as orphaned, with the command" \
	grep -q "$SAME in network namespace $INO_C .*ORPHANED.*unload --netns $INO_C $SAME" <<<"$st"
"$CLI" unload --netns "$INO_C" "$SAME" >/dev/null
check "unload --netns removes them" test $? -eq 0 -a ! -e "$NS_C_PINS"

# --- stats --watch notices an unload ---
rx "$CLI" load "$IF_RX" >/dev/null
nsenter --net="/run/netns/$NS_RX" timeout 10 "$CLI" stats "$IF_RX" --watch 1 >"$WORK/w.out" 2>"$WORK/w.err" &
BG=$!
sleep 1.5
rx "$CLI" unload "$IF_RX" >/dev/null
wait $BG; rc=$?; BG=
check "stats --watch stops after the unload (exit 1, not killed by timeout)" test "$rc" -eq 1
check "... saying the program was unloaded" grep -q "was unloaded" "$WORK/w.err"

# --- query of an IPv4-mapped address ---
rx "$CLI" load "$IF_RX" >/dev/null
send 10.211.1.1 5 >/dev/null
sleep 0.2
q=$(rx "$CLI" query "$IF_RX" ::ffff:10.211.1.3)
check "query ::ffff:10.211.1.3 is the IPv4 source 10.211.1.3/32, just seen" \
	grep -q "10.211.1.3/32: last seen.*DROPPED" <<<"$q"
check "query --json of it keys the IPv4 source" \
	grep -q '"key":"10.211.1.3/32"' <<<"$(rx "$CLI" query "$IF_RX" ::ffff:10.211.1.3 --json)"

# --- sampling text and the record lock ---
check "status says sampling off" grep -q "sampling: off" <<<"$(rx "$CLI" status "$IF_RX")"
rx "$CLI" set "$IF_RX" --sample-sources 1/4 >/dev/null
check "status says packet sampling off" grep -q "sampling: sources 1/4, packets off" <<<"$(rx "$CLI" status "$IF_RX")"
rx "$CLI" set "$IF_RX" --sample-sources off >/dev/null
# The sampling lock is named after the ring (which a replace keeps), by its map id.
RING_ID=$(bpftool map show pinned "$(pins_of "$NS_RX" "$IF_RX")/events" | sed -n '1s/^\([0-9]*\):.*/\1/p')
LOCK=/run/xdp-pacer-sample.ring$RING_ID.lock
rx "$CLI" record "$IF_RX" -o "$WORK/r.xpr" --duration 1s >/dev/null 2>&1 &
rec=$!
for _ in $(seq 50); do [ -e "$LOCK" ] && break; sleep 0.02; done
check "record holds its lock file $LOCK while it runs" test -e "$LOCK"
wait "$rec"
check "record exits 0" test $? -eq 0
check "... and removes its lock file $LOCK" test ! -e "$LOCK" -a ! -e "/tmp/xdp-pacer-sample.ring$RING_ID.lock"
check "... the recording is 0600" test "$(stat -c %a "$WORK/r.xpr")" = 600
rx "$CLI" record "$IF_RX" -o "$WORK/no/such/dir/r.xpr" --duration 300ms >/dev/null 2>&1
check "record into a missing directory fails (exit 1)" test $? -eq 1
check "... and leaves no lock file" test ! -e "$LOCK"

# --- planted links ---
echo precious >"$WORK/victim"
ln -s "$WORK/victim" "$WORK/t.xpr.tmp"
out=$(rx "$CLI" record "$IF_RX" -o "$WORK/t.xpr" --duration 300ms 2>&1)
check "record with a link planted at FILE.tmp fails (exit 1)" test $? -eq 1
check "... names the temporary" grep -q "t.xpr.tmp" <<<"$out"
check "... and the link's target is untouched" test "$(cat "$WORK/victim")" = precious
rm -f "$WORK/t.xpr.tmp"
ln -s "$WORK/victim" "$WORK/t.xpr"
rx "$CLI" record "$IF_RX" -o "$WORK/t.xpr" --duration 300ms >/dev/null 2>&1
check "record over a link at FILE succeeds" test $? -eq 0
check "... replacing the link with the recording" test -f "$WORK/t.xpr" -a ! -L "$WORK/t.xpr"
check "... the link's target untouched" test "$(cat "$WORK/victim")" = precious
ln -s "$WORK/victim" "$WORK/rep.html"
"$CLI" analyze "$WORK/r.xpr" --report "$WORK/rep.html" >/dev/null 2>&1
check "analyze --report over a link succeeds" test $? -eq 0
check "... the report replaces the link, 0600" test ! -L "$WORK/rep.html" -a "$(stat -c %a "$WORK/rep.html")" = 600
check "... the link's target untouched" test "$(cat "$WORK/victim")" = precious
check "... no temporary left" test "$(ls "$WORK" | grep -c 'rep.html.')" = 0
rx "$CLI" unload "$IF_RX" >/dev/null

# --- usage and input errors ---
long=$(printf 'i%.0s' $(seq 100))
for cmd in "load $long" "unload $long" "status $long" "stats $long" "set $long --interval 1s" \
	"record $long -o $WORK/x.xpr" "query $long 10.0.0.1" "gen $long --count 1"; do
	out=$("$CLI" $cmd 2>&1)
	check "${cmd%% *} with a 100-character interface name: exit 2 naming it" \
		bash -c "[ $? -eq 2 ] && grep -q 'invalid value .iiii.*for IFNAME' <<<'$out'"
done
"$CLI" unload ../../etc >/dev/null 2>&1
check "unload ../../etc: exit 2 (never a path)" test $? -eq 2
out=$("$CLI" model --sources 1099511627776 --target-false-drop 0.000001 2>&1)
check "model with an unreachable target exits 1" test $? -eq 1
check "... saying no geometry meets it" grep -q "no geometry meets" <<<"$out"
mkfifo "$WORK/fifo"
out=$(timeout 10 "$CLI" analyze "$WORK/fifo" 2>&1)
rc=$?
check "analyze of a FIFO exits 1 at once (not 124, a hang)" test "$rc" -eq 1
check "... saying it is not a regular file" grep -q "not a regular file" <<<"$out"
out=$(rx "$CLI" load "$IF_RX" --interval 1ms --tick 16ms 2>&1)
check "load --interval 1ms --tick 16ms: exit 2" test $? -eq 2
check "... with the true range [4, 63] ticks" grep -q "within \[33.554 ms, 528.482 ms\]" <<<"$out"

finish
