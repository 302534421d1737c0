#!/usr/bin/env bash
# Integration: traffic classes and the exempt/deny lists through the CLI,
# on a veth pair in namespaces this test creates.  Each kind of mistake in
# a config file is refused naming the file and line, with nothing attached
# (load) or changed (set); the issue's example config loads, status, stats
# (text, JSON, Prometheus) and query show its classes and lists, and
# traffic is decided by them (a class's rate, unmatched traffic passes,
# exempt passes, deny drops); set --config reloads live, an unchanged class
# keeping its sources' state and counters, a changed one starting afresh;
# the command-line form works; an `ip link` attach still runs the compiled
# default.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-classes.XXXXXX)
trap 'teardown_pair; rm -rf "$WORK"' EXIT

setup_pair xcl || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

# The first value of a counter in stats --json: the global one (classes come after).
gstat() {
	rx "$CLI" stats "$IF_RX" --json | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2
}
# cstat CLASS COUNTER: one class's counter from stats' text lines.
cstat() {
	rx "$CLI" stats "$IF_RX" | awk -v c="$1" -v k="$2" \
		'$1 == "class" && $2 == c { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }'
}

cat >"$WORK/issue.conf" <<'EOF'
interval = 1s            # global keys as today
backend = table

[class dns]
match = udp dport 53
rate = 20/1s

[class syn]
match = tcp flags syn
interval = 100ms
key = src+dport

[exempt]
src = 192.0.2.0/24, 2001:db8::/32

[deny]
src = 203.0.113.0/24
EOF

# --- each kind of mistake: exit 2, file and line named, nothing attached ---
bad() { # name, expected message (grep -E), file text
	printf '%b' "$3" >"$WORK/$1.conf"
	local err rc
	err=$(rx "$CLI" load "$IF_RX" --config "$WORK/$1.conf" 2>&1)
	rc=$?
	check "load, $1: exit 2 ($err)" test $rc -eq 2
	check "load, $1: the error names the file and line" grep -qE "$WORK/$1.conf:$2" <<<"$err"
	check "load, $1: nothing attached" bash -c "! ip -n $NS_RX link show $IF_RX | grep -q xdp"
}
bad unknown-word "5: unknown match word 'dprot'" \
	'interval = 1s\nbackend = table\n\n[class dns]\nmatch = udp dprot 53\nrate = 20/1s\n'
bad port-without-l4 "2: 'dport' needs 'tcp' or 'udp'" '[class dns]\nmatch = dport 53\nrate = 2/1s\n'
bad syn-without-tcp "2: 'flags syn' needs 'tcp'" '[class syn]\nmatch = udp flags syn\ninterval = 1s\n'
bad icmp-v6-prefix "2: 'icmp' with an IPv6 src prefix" '[class p]\nmatch = icmp src 2001:db8::/32\ninterval = 1s\n'
bad duplicate-name "4: class 'a' is already defined on line 1" \
	'[class a]\nmatch = udp\ninterval = 1s\n[class a]\nmatch = tcp\ninterval = 1s\n'
bad bad-name "1: bad class name 'd.n.s'" '[class d.n.s]\nmatch = udp\ninterval = 1s\n'
bad both-lists "5: 198.51.100.0/24 is on the deny list and on the exempt list \\($WORK/both-lists.conf:2\\)" \
	'[exempt]\nsrc = 198.51.100.0/24\n\n[deny]\nsrc = 198.51.100.0/24\n'
bad sketch-span "3: class 'fast' \\(interval 20.000 ms\\) and $WORK/sketch-span.conf:6: class 'slow' \\(interval 20 s\\) need different ticks.*backend = table" \
	'[class fast]\nmatch = udp\ninterval = 20ms\n[class slow]\nmatch = tcp\ninterval = 20s\n'
bad global-after-section "4: unknown key 'backend' in \\[class a\\]" '[class a]\nmatch = udp\ninterval = 1s\nbackend = table\n'
bad no-limit "1: class 'a' paces but has no limit" '[class a]\nmatch = udp\n'

# The table holds limits 1000x apart at one tick.
printf 'backend = table\n[class fast]\nmatch = udp\ninterval = 20ms\n[class slow]\nmatch = tcp\ninterval = 20s\n' >"$WORK/span.conf"
out=$(rx "$CLI" load "$IF_RX" --config "$WORK/span.conf" 2>&1)
check "the table loads classes of 20 ms and 20 s" test $? -eq 0
check "load says what the tick holds ($(grep limits <<<"$out"))" grep -q "limits this tick holds .*intervals within" <<<"$out"
rx "$CLI" unload "$IF_RX" >/dev/null

# --- the issue's config ---
out=$(rx "$CLI" load "$IF_RX" --config "$WORK/issue.conf" 2>&1)
check "the issue's config loads" test $? -eq 0
echo "$out" | sed 's/^/    /'
st=$(rx "$CLI" status "$IF_RX")
check "status lists class dns" grep -qE "dns +udp dport 53 -> rate 20/1 s, key src" <<<"$st"
check "status lists class syn" grep -qE "syn +tcp flags syn -> interval 100.000 ms, key src\+dport" <<<"$st"
check "status gives the lists' sizes" grep -q "exempt: 2 prefixes, deny: 1 prefix" <<<"$st"

send 10.214.0.1 1 --per-source 30 --dport 53 >/dev/null # dns: a burst of 20 passes
send 10.214.0.2 1 --per-source 30 --dport 9 >/dev/null  # no class: passes
send 192.0.2.9 1 --per-source 30 --dport 53 >/dev/null  # exempt
send 203.0.113.5 1 --per-source 30 --dport 9 >/dev/null # deny
settle 120
# Asked at once: the class's rate (20/1s) forgets the source within a
# second, which the checks below can take on a loaded machine.
q=$(rx "$CLI" query "$IF_RX" 10.214.0.1)
check "class dns: 30 seen ($(cstat dns seen))" test "$(cstat dns seen)" = 30
check "class dns: its burst of 20 passed ($(cstat dns passed))" test "$(cstat dns passed)" = 20
check "class dns: 10 dropped ($(cstat dns dropped))" test "$(cstat dns dropped)" = 10
check "unmatched traffic passes, counted ($(gstat unclassified_passed))" test "$(gstat unclassified_passed)" = 30
check "the exempt source passes, unpaced ($(gstat exempt_passed))" test "$(gstat exempt_passed)" = 30
check "the denied source is dropped ($(gstat deny_dropped))" test "$(gstat deny_dropped)" = 30
check "no packet of exempt or denied sources reached a class" test "$(cstat syn seen)" = 0
js=$(rx "$CLI" stats "$IF_RX" --json)
check "stats --json: the classes array" grep -q '"classes":\[{"class":"dns","seen":30,"passed":20,"dropped":10,"dropped_budget":0,"would_drop":0,"would_drop_budget":0}' <<<"$js"
pr=$(rx "$CLI" stats "$IF_RX" --format prometheus)
check "Prometheus: per-class counters with a class label" \
	grep -q "xdp_pacer_class_packets_total{ifname=\"$IF_RX\",class=\"dns\",verdict=\"passed\"} 20" <<<"$pr"
check "promtool check metrics accepts the classes' families" promtool check metrics <<<"$pr"
check "query answers per class ($(head -1 <<<"$q"))" grep -q "class dns: 10.214.0.1/32: its cell is" <<<"$q"
check "query: a src+dport class asks for --dport" grep -q "class syn: keyed src+dport: give --dport" <<<"$q"
q=$(rx "$CLI" query "$IF_RX" 10.214.0.1 --class syn --dport 22)
check "query --class syn --dport 22" grep -q "class syn: 10.214.0.1/32 dport 22: not seen" <<<"$q"
q=$(rx "$CLI" query "$IF_RX" 203.0.113.5)
check "query names the deny list" grep -q "on the deny list (203.0.113.0/24)" <<<"$q"
rx "$CLI" query "$IF_RX" 10.214.0.1 --class nope >/dev/null 2>&1
check "query --class of no class: exit 2" test $? -eq 2
rx "$CLI" unload "$IF_RX" >/dev/null

# --- live reload ---
cat >"$WORK/live.conf" <<'EOF'
backend = table
[class slow]
match = udp dport 5353
interval = 30s
[class other]
match = udp dport 6000
interval = 1s
[exempt]
src = 192.0.2.0/24
EOF
rx "$CLI" load "$IF_RX" --config "$WORK/live.conf" >/dev/null
check "a config for the reload loads" test $? -eq 0
send 10.214.1.1 1 --dport 5353 >/dev/null
send 10.214.1.1 1 --dport 6000 >/dev/null
sleep 0.1
sed 's/interval = 1s/interval = 2s/; s|192.0.2.0/24|192.0.2.0/24, 198.51.100.0/24|' "$WORK/live.conf" >"$WORK/live2.conf"
out=$(rx "$CLI" set "$IF_RX" --config "$WORK/live2.conf" 2>&1)
check "set --config applies the changes ($(grep -c . <<<"$out") lines)" test $? -eq 0
check "... and reports only what changed ($(grep -m1 'settings\? changed\|no change:' <<<"$out"))" \
	grep -q "^xdp-pacer: $IF_RX: 2 settings changed (classes, exempt list); now interval 1 s" <<<"$out"
out=$(rx "$CLI" set "$IF_RX" --config "$WORK/live2.conf" 2>&1)
check "the same file again: set says no change ($(grep -m1 'settings\? changed\|no change:' <<<"$out"))" \
	bash -c 'grep -q "^xdp-pacer: $1: no change: interval 1 s" <<<"$2" && grep -q "budget off (unchanged)" <<<"$2"' _ "$IF_RX" "$out"
send 10.214.1.1 1 --per-source 3 --dport 5353 >/dev/null
send 10.214.1.1 1 --dport 6000 >/dev/null
send 198.51.100.1 1 --per-source 3 --dport 5353 >/dev/null
sleep 0.1
check "an unchanged class keeps its sources' state: 0 of 3 more passed ($(cstat slow passed) passed)" test "$(cstat slow passed)" = 1
check "... and its counters (seen $(cstat slow seen))" test "$(cstat slow seen)" = 4
check "a changed class starts afresh: its source passes again ($(cstat other passed))" test "$(cstat other passed)" = 2
check "... its counters kept with its name (seen $(cstat other seen))" test "$(cstat other seen)" = 2
check "the new exempt prefix applies live ($(gstat exempt_passed))" test "$(gstat exempt_passed)" = 3
st=$(rx "$CLI" status "$IF_RX")
for m in "[class slow]\nmatch = udp dport 5353 flags syn\ninterval = 30s\n:2: 'flags syn' needs 'tcp'" \
	 "backend = table\n[class slow]\nmatch = udp\ninterval = 100ms\n:4: class 'slow': interval 100.000 ms does not fit tick" \
	 "[class a]\nmatch = udp\ninterval = 1s\n[class a]\nmatch = tcp\ninterval = 1s\n:4: class 'a' is already defined" \
	 "[exempt]\nsrc = 10.0.0.0/8\n[deny]\nsrc = 10.0.0.0/8\n:4: 10.0.0.0/8 is on the deny list"; do
	printf '%b' "${m%%:*}" >"$WORK/badset.conf"
	err=$(rx "$CLI" set "$IF_RX" --config "$WORK/badset.conf" 2>&1)
	rc=$?
	check "set, a mistake: exit 2, file and line ($err)" bash -c '[ "$1" = 2 ] && grep -qF "$2" <<<"$3"' _ "$rc" "$WORK/badset.conf:${m#*:}" "$err"
done
check "... and the running classes and lists are unchanged" test "$st" = "$(rx "$CLI" status "$IF_RX")"
printf 'backend = table\n[class dns]\nmatch = udp dport 53\ninterval = 1s\n' >"$WORK/other.conf"
rx "$CLI" set "$IF_RX" --config "$WORK/other.conf" >/dev/null 2>&1
check "set --config with other classes" grep -qE "^    dns +udp dport 53" <<<"$(rx "$CLI" status "$IF_RX")"
rx "$CLI" set "$IF_RX" --class none --exempt none --deny none >/dev/null
check "set --class none --exempt none --deny none" bash -c '! grep -q "classes\|exempt:" <<<"$1"' _ "$(rx "$CLI" status "$IF_RX")"
rx "$CLI" set "$IF_RX" --config "$WORK/live.conf" >/dev/null 2>&1
printf 'backend = table\ninterval = 1s\n' >"$WORK/plain.conf"
rx "$CLI" set "$IF_RX" --config "$WORK/plain.conf" >/dev/null 2>&1
check "set --config with no sections: no classes, empty lists" \
	bash -c '! grep -q "classes\|exempt:" <<<"$1"' _ "$(rx "$CLI" status "$IF_RX")"
p0=$(gstat passed)
u0=$(gstat unclassified_passed)
send 10.214.1.9 1 --per-source 3 --dport 5353 >/dev/null
sleep 0.1
check "... classless pacing again: 1 of 3 passed, none unclassified" \
	bash -c '[ $(($1 - $2)) = 1 ] && [ "$3" = "$4" ]' _ "$(gstat passed)" "$p0" "$(gstat unclassified_passed)" "$u0"
rx "$CLI" unload "$IF_RX" >/dev/null

# --- 10 000 prefixes a list ---
{
	echo "[exempt]"
	for i in $(seq 0 9999); do echo "src = 10.$((i / 256)).$((i % 256)).0/24"; done
	echo "[deny]"
	for i in $(seq 0 9999); do printf 'src = 2001:db8:%x::/48\n' "$i"; done
} >"$WORK/big.conf"
t0=$(date +%s.%N)
rx "$CLI" load "$IF_RX" --config "$WORK/big.conf" >/dev/null
rc=$?
t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
check "10 000 exempt and 10 000 deny prefixes load in under 10 s (${t} s)" \
	awk -v rc="$rc" -v t="$t" 'BEGIN { exit !(rc == 0 && t < 10) }'
check "... status counts them" grep -q "exempt: 10000 prefixes, deny: 10000 prefixes" <<<"$(rx "$CLI" status "$IF_RX")"
send 10.39.15.7 1 --per-source 5 >/dev/null
sleep 0.1
check "... a source on the list is exempt ($(gstat exempt_passed))" test "$(gstat exempt_passed)" = 5
rx "$CLI" unload "$IF_RX" >/dev/null

# --- the command-line form ---
out=$(rx "$CLI" load "$IF_RX" --backend table --class 'dns: udp dport 53 rate 5/1s' \
	--class 'ping: icmp drop' --exempt 192.0.2.0/24 --deny 203.0.113.0/24,2001:db8::/32 2>&1)
check "load --class ... --exempt ... --deny ..." test $? -eq 0
check "... the classes as given" grep -qE "ping +icmp -> drop" <<<"$out"
check "... the lists" grep -q "exempt: 1 prefix, deny: 2 prefixes" <<<"$out"
send 10.214.2.1 1 --per-source 8 --dport 53 >/dev/null
sleep 0.1
check "--class dns rate 5/1s: 5 of 8 passed ($(cstat dns passed))" test "$(cstat dns passed)" = 5
err=$(rx "$CLI" set "$IF_RX" --class 'x: dport 53 interval 1s' 2>&1)
check "set --class with a mistake: exit 2 naming the word ($err)" grep -q "'dport' needs 'tcp' or 'udp'" <<<"$err"
rx "$CLI" unload "$IF_RX" >/dev/null

# --- ip link: the compiled default, no classes ---
rx ip link set dev "$IF_RX" xdp obj "$OBJ" sec xdp
check "ip link ... xdp obj attaches" test $? -eq 0
send 10.214.3.1 1 --per-source 5 --dport 53 >/dev/null
sleep 0.1
check "... it paces by the compiled default: 1 of 5 passed ($(gstat passed))" test "$(gstat passed)" = 1
check "... no class decided" test "$(gstat unclassified_passed)" = 0
rx "$CLI" set "$IF_RX" --class 'dns: udp dport 53 interval 500ms' >/dev/null
check "set --class on the ip link attach" test $? -eq 0
send 10.214.3.2 1 --per-source 5 --dport 53 >/dev/null
send 10.214.3.2 1 --per-source 5 --dport 80 >/dev/null
sleep 0.1
check "... its class paces: 1 of 5 ($(cstat dns passed)), the rest is unmatched ($(gstat unclassified_passed))" \
	bash -c '[ "$1" = 1 ] && [ "$2" = 5 ]' _ "$(cstat dns passed)" "$(gstat unclassified_passed)"
rx "$CLI" unload "$IF_RX" >/dev/null
finish
