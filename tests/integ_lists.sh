#!/usr/bin/env bash
# Integration: `xdp-pacer deny|exempt add/del/list/flush` on a veth pair in
# namespaces this test creates.  Added prefixes decide traffic at once; a
# timed entry expires on its own (no reload, no daemon) and the prefix
# below it decides again; query says until when it decides, and what
# then; added again without --timeout it becomes permanent, and add says
# so; a reload (set --config) replaces the configuration's entries and
# keeps the added ones; del and flush touch
# only added entries; every refusal exits 1 or 2 and changes nothing;
# 100 000 prefixes from standard input go in within a second of CPU; a
# writer holding the pacer's lock makes another wait, then give up naming
# its pid; status, stats and the exporter's text count both kinds.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-lists.XXXXXX)
trap 'teardown_pair; rm -rf "$WORK"' EXIT # the lock's holder too (stop_background)
HOLDER=

setup_pair xls || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

gstat() {
	rx "$CLI" stats "$IF_RX" --json | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2
}
# run CMD...: its exit status into $RC, its output into $OUT
run() { OUT=$("$@" 2>&1); RC=$?; }
# refused RC GREP CMD...: CMD exits RC and says GREP (-E)
refused() {
	local want=$1 say=$2; shift 2
	run "$@"
	check "$* -> exit $RC (want $want): $OUT" bash -c '[ "$1" = "$2" ] && grep -qE -- "$3" <<<"$4"' _ "$RC" "$want" "$say" "$OUT"
}

cat >"$WORK/a.conf" <<'EOF'
interval = 1s
[exempt]
src = 10.60.0.0/16
[deny]
src = 192.0.2.0/24
EOF
check "load with the configuration's lists" rx "$CLI" load "$IF_RX" --mode skb --config "$WORK/a.conf"

# --- add: decides at once, longest prefix wins over the configured exempt ---
check "deny add two prefixes" rx "$CLI" deny add "$IF_RX" 10.60.1.1 10.60.2.0/24
d0=$(gstat deny_dropped)
send 10.60.1.1 1 --per-source 3 >/dev/null
send 10.60.2.9 1 --per-source 3 >/dev/null
sleep 0.2
check "the added /32 and /24 drop their sources ($d0 -> $(gstat deny_dropped))" test "$(gstat deny_dropped)" -eq $((d0 + 6))
e0=$(gstat exempt_passed)
send 10.60.3.1 1 --per-source 3 >/dev/null
sleep 0.2
check "the rest of the configured exempt /16 passes" test "$(gstat exempt_passed)" -eq $((e0 + 3))

# --- a timeout: expires on its own, the exempt /16 below decides again ---
check "deny add --timeout 2s" rx "$CLI" deny add "$IF_RX" 10.60.4.4 --timeout 2s
out=$(rx "$CLI" deny list "$IF_RX")
check "list shows the timeout and what is left ($(grep 10.60.4.4 <<<"$out"))" \
	grep -qE '10\.60\.4\.4/32 +added +timeout 2s expires [12]s' <<<"$out"
d0=$(gstat deny_dropped)
send 10.60.4.4 1 --per-source 2 >/dev/null
sleep 0.2
check "before its timeout the entry drops" test "$(gstat deny_dropped)" -eq $((d0 + 2))
sleep 2.2
e0=$(gstat exempt_passed); d0=$(gstat deny_dropped)
send 10.60.4.4 1 --per-source 2 >/dev/null
sleep 0.2
check "after it, with no reload nor daemon, the exempt /16 decides ($(gstat exempt_passed))" \
	bash -c "[ $(gstat exempt_passed) -eq $((e0 + 2)) ] && [ $(gstat deny_dropped) -eq $d0 ]"
check "list no longer shows the expired entry" bash -c "! nsenter --net=/run/netns/$NS_RX $CLI deny list $IF_RX | grep -q 10.60.4.4"
json=$(rx "$CLI" deny list "$IF_RX" --json)
check "list --json: counts and entries by address ($json)" \
	grep -q '"configured":1,"added":2,"timed":0,"entries":\[{"prefix":"10.60.1.1/32","origin":"added"},{"prefix":"10.60.2.0/24","origin":"added"},{"prefix":"192.0.2.0/24","origin":"configured"}\]' <<<"$json"

# --- add again: the last add decides (without --timeout the entry is permanent, and add says
# so, as `nft add element` on Linux 6.12+); query gives a timed entry's deadline ---
check "deny add 10.60.5.5 --timeout 1h" rx "$CLI" deny add "$IF_RX" 10.60.5.5 --timeout 1h
q=$(rx "$CLI" query "$IF_RX" 10.60.5.5 | head -1)
check "query of a timed deny entry: denied until its deadline, then the exempt /16 decides ($q)" \
	grep -qE "^10\.60\.5\.5: denied \(dropped\) for another 35[0-9]{2}\.[0-9] s \(59m[0-9]+s\), until its deny list entry 10\.60\.5\.5/32 \(timeout 1h\) expires, whatever the classes say; then the exempt list's 10\.60\.0\.0/16 decides$" <<<"$q"
js=$(rx "$CLI" query "$IF_RX" 10.60.5.5 --json)
check "query --json: the entry's time left and timeout ($js)" \
	grep -qE '"deny":"10\.60\.5\.5/32","list_expires_s":35[0-9]{2}\.[0-9]+,"list_timeout_s":3600' <<<"$js"
run rx "$CLI" deny add "$IF_RX" 10.60.5.5
check "add again without --timeout: exit 0, saying the entry is now permanent ($OUT)" \
	bash -c '[ "$1" = 0 ] && grep -q "0 added, 1 refreshed; 1 had a timeout and is now permanent: add without --timeout removes the timeout" <<<"$2"' _ "$RC" "$OUT"
check "... list shows it without a timeout" grep -qE '^  10\.60\.5\.5/32 +added$' <<<"$(rx "$CLI" deny list "$IF_RX")"
q=$(rx "$CLI" query "$IF_RX" 10.60.5.5 | head -1)
check "... query: always dropped now ($q)" grep -q "^10.60.5.5: on the deny list (10.60.5.5/32): always dropped" <<<"$q"
run rx "$CLI" deny add "$IF_RX" 10.60.5.5 --timeout 30s
check "add again with --timeout 30s: timed again, no word of permanence ($OUT)" grep -q "0 added, 1 refreshed, timeout 30s$" <<<"$OUT"
q=$(rx "$CLI" query "$IF_RX" 10.60.5.5 | head -1)
check "... query: denied for the 30 s left ($q)" grep -qE "^10\.60\.5\.5: denied \(dropped\) for another (2[0-9]|30)\.[0-9] s, until its deny list entry" <<<"$q"
check "deny del 10.60.5.5" rx "$CLI" deny del "$IF_RX" 10.60.5.5

# --- refusals: exit codes, nothing changed ---
before=$(rx "$CLI" deny list "$IF_RX" --json; rx "$CLI" exempt list "$IF_RX" --json)
refused 1 '10.60.2.0/24 is on the deny list: delete it there first; nothing changed' rx "$CLI" exempt add "$IF_RX" 10.70.0.1 10.60.2.0/24
refused 1 '192.0.2.0/24 is on the deny list by the configuration' rx "$CLI" deny del "$IF_RX" 192.0.2.0/24
refused 1 '10.99.0.1/32 is not on the deny list' rx "$CLI" deny del "$IF_RX" 10.60.1.1 10.99.0.1
refused 2 'did you mean 10.0.0.0/8' rx "$CLI" deny add "$IF_RX" 10.0.0.1/8
for t in 0 1x 30m1h 1.5h 49711d; do
	refused 2 "invalid value '$t' for --timeout" rx "$CLI" deny add "$IF_RX" 10.99.0.1 --timeout $t
done
printf '10.99.0.1\n# a comment\n\n10.99.0.300\n' >"$WORK/bad.txt"
refused 2 "standard input, line 4: '10.99.0.300'" bash -c "nsenter --net=/run/netns/$NS_RX $CLI deny add $IF_RX - <$WORK/bad.txt"
refused 2 "unknown action 'remove'" rx "$CLI" deny remove "$IF_RX" 10.99.0.1
refused 2 'add needs at least one PREFIX' rx "$CLI" deny add "$IF_RX"
refused 2 '--timeout is an option of add only' rx "$CLI" deny del "$IF_RX" 10.60.1.1 --timeout 1h
refused 1 'nosuchif0' rx "$CLI" deny add nosuchif0 10.99.0.1
refused 1 'nosuchif0' rx "$CLI" set nosuchif0 --interval 1s
check "a command on an interface that does not exist leaves no writer lock behind" \
	bash -c "! ls /run/xdp-pacer/netns-$(stat -L -c %i "/run/netns/$NS_RX").nosuchif0.lock 2>/dev/null"
after=$(rx "$CLI" deny list "$IF_RX" --json; rx "$CLI" exempt list "$IF_RX" --json)
check "after the refusals the lists are as before" test "$before" = "$after"
refused 0 '0 removed, 1 not on the list' rx "$CLI" deny del "$IF_RX" 10.99.0.1 --missing-ok

# --- a reload replaces the configuration's entries and keeps the added ones ---
sed 's|192.0.2.0/24|198.51.100.0/24|' "$WORK/a.conf" >"$WORK/b.conf"
check "set --config with another [deny]" rx "$CLI" set "$IF_RX" --config "$WORK/b.conf"
out=$(rx "$CLI" deny list "$IF_RX")
check "after the reload: the new configured prefix, not the old, and both added kept" \
	bash -c "grep -q '198.51.100.0/24 *configured' <<<'$out' && ! grep -q 192.0.2.0 <<<'$out' && grep -q '10.60.1.1/32 *added' <<<'$out' && grep -q '10.60.2.0/24 *added' <<<'$out'"
d0=$(gstat deny_dropped)
send 10.60.1.1 1 --per-source 2 >/dev/null
sleep 0.2
check "an added prefix still drops after the reload" test "$(gstat deny_dropped)" -eq $((d0 + 2))

# --- status, stats, the exporter's text count both kinds ---
check "status counts both kinds" bash -c "nsenter --net=/run/netns/$NS_RX $CLI status $IF_RX | grep -q 'exempt: 1 prefix, deny: 3 prefixes (1 configured, 2 added, 0 with a timeout)'"
check "stats --json counts both kinds" \
	bash -c "nsenter --net=/run/netns/$NS_RX $CLI stats $IF_RX --json | grep -q '\"deny\":{\"configured\":1,\"added\":2,\"timed\":0}'"
prom=$(rx "$CLI" stats "$IF_RX" --format prometheus)
check "the exporter's metrics count both kinds" \
	bash -c 'grep -qxF "xdp_pacer_list_entries{ifname=\"$1\",list=\"deny\",origin=\"added\"} 2" <<<"$2" && grep -qxF "xdp_pacer_list_entries{ifname=\"$1\",list=\"exempt\",origin=\"configured\"} 1" <<<"$2" && grep -qxF "xdp_pacer_list_timed_entries{ifname=\"$1\",list=\"deny\"} 0" <<<"$2"' _ "$IF_RX" "$prom"

# --- del and flush: only the added entries ---
check "deny del" rx "$CLI" deny del "$IF_RX" 10.60.1.1
e0=$(gstat exempt_passed)
send 10.60.1.1 1 --per-source 2 >/dev/null
sleep 0.2
check "a deleted /32: the exempt /16 decides again" test "$(gstat exempt_passed)" -eq $((e0 + 2))
check "deny flush" rx "$CLI" deny flush "$IF_RX"
check "after flush only the configured prefix is left" \
	bash -c "nsenter --net=/run/netns/$NS_RX $CLI deny list $IF_RX --json | grep -q '\"configured\":1,\"added\":0,'"

# --- 100 000 prefixes from standard input ---
python3 -c '
for i in range(100000):
    print("10.%d.%d.%d" % (100 + i // 65536, (i // 256) % 256, i % 256))' >"$WORK/100k.txt"
TIMEFORMAT='%R %U %S'
t=$( { time rx "$CLI" deny add "$IF_RX" - --timeout 1h <"$WORK/100k.txt" >/dev/null; } 2>&1 )
cpu=$(awk '{ printf "%.3f", $2 + $3 }' <<<"$t")
echo "     100 000 prefixes from stdin: wall ${t%% *} s, CPU (user+sys) $cpu s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
check "100 000 prefixes from standard input in under 1 s of CPU ($cpu s)" awk -v c="$cpu" 'BEGIN { exit !(c < 1.0) }'
check "... all of them listed, timed" \
	bash -c "nsenter --net=/run/netns/$NS_RX $CLI deny list $IF_RX --json | grep -q '\"configured\":1,\"added\":100000,\"timed\":100000'"
d0=$(gstat deny_dropped)
send 10.101.134.159 1 --per-source 2 >/dev/null
sleep 0.2
check "... and deciding (the 99 999th)" test "$(gstat deny_dropped)" -eq $((d0 + 2))
check "deny flush of 100 000" rx "$CLI" deny flush "$IF_RX"

# --- the writer lock: a holder makes writers wait, then they give up naming it ---
ino=$(stat -L -c %i "/run/netns/$NS_RX")
lock=/run/xdp-pacer/netns-$ino.$IF_RX.lock
check "the lock file is where writer_lock.h says" test -f "$lock"
flock -x -o "$lock" sleep 30 &
HOLDER=$!
sleep 0.3
t0=$(date +%s%N)
run rx "$CLI" deny add "$IF_RX" 10.99.0.1 --wait 1
t1=$(date +%s%N)
check "a writer gives up after --wait 1 ($(( (t1 - t0) / 1000000 )) ms), exit $RC: $OUT" \
	bash -c '[ "$1" = 1 ] && [ "$2" -ge 900 ] && grep -q "pid $3 (flock -x" <<<"$4"' _ "$RC" $(( (t1 - t0) / 1000000 )) "$HOLDER" "$OUT"
refused 1 'is changing this pacer' rx "$CLI" set "$IF_RX" --interval 2s --wait 0
check "list is a reader: it does not wait" rx "$CLI" deny list "$IF_RX"
# The holder's sleep ends in a second: flock then exits, letting the lock go
# (killing flock would leave its sleep running on).
( sleep 1; pkill -P "$HOLDER" ) &
t0=$(date +%s%N)
check "a writer waits for the holder, then writes" rx "$CLI" deny add "$IF_RX" 10.99.0.1 --wait 10
t1=$(date +%s%N)
check "... after about a second ($(( (t1 - t0) / 1000000 )) ms)" test $(( (t1 - t0) / 1000000 )) -ge 500
HOLDER=

check "unload" rx "$CLI" unload "$IF_RX"
finish
