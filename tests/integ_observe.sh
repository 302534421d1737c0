#!/usr/bin/env bash
# Integration: observe mode through the CLI, on a veth pair in namespaces
# this test creates.  Observing, a source's packets beyond its interval
# pass, counted as would-drop in stats (text, JSON) and Prometheus
# (mode="observe", accepted by promtool); status shows the mode; `set
# --mode enforce` switches live and keeps every source's state (a source
# admitted while observing is refused at once); a class's own mode and the
# deny list's override the global one; the attach mode's old spelling
# (--mode skb) still loads, and set refuses it.
. "$(dirname "$0")/lib.sh"

WORK=$(mktemp -d /tmp/xpr-observe.XXXXXX)
trap 'teardown_pair; rm -rf "$WORK"' EXIT
setup_pair xob || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

# cstat CLASS COUNTER: one class's counter from stats' text lines.
cstat() {
	rx "$CLI" stats "$IF_RX" | awk -v c="$1" -v k="$2" \
		'$1 == "class" && $2 == c { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }'
}

# --- global observe, then enforce live ---
rx "$CLI" load "$IF_RX" --interval 30s --mode observe --deny 203.0.113.0/24 >/dev/null
check "load --mode observe" test $? -eq 0
st=$(rx "$CLI" status "$IF_RX")
check "status shows the mode ($(grep 'mode' <<<"$st" | grep -v program | head -1 | sed 's/^ *//'))" \
	grep -q "live: mode observe (drop verdicts pass, counted as would-drop), deny list as mode" <<<"$st"
send 10.215.0.1 1 --per-source 10 >/dev/null
send 10.215.0.2 1 --per-source 4 >/dev/null
send 203.0.113.7 1 --per-source 3 >/dev/null
sleep 0.2
check "observing: one packet per source admitted ($(stat_of passed))" test "$(stat_of passed)" = 2
check "... the rest counted would-drop, recent ($(stat_of would_drop_recent))" test "$(stat_of would_drop_recent)" = 12
check "... the denied source would-drop, deny ($(stat_of would_drop_deny))" test "$(stat_of would_drop_deny)" = 3
check "... nothing dropped ($(stat_of dropped_recent) $(stat_of deny_dropped))" \
	test "$(stat_of dropped_recent)$(stat_of deny_dropped)" = 00
q=$(rx "$CLI" query "$IF_RX" 10.215.0.1)
check "query: the judgement, and what observe mode does with it" \
	bash -c 'grep -q "a packet now would be DROPPED" <<<"$1" && grep -q "^note: observe mode (global observe" <<<"$1"' _ "$q"
check "query --json names the mode" grep -q '"mode":"observe"' <<<"$(rx "$CLI" query "$IF_RX" 10.215.0.1 --json)"
txt=$(rx "$CLI" stats "$IF_RX")
check "stats (text) shows would_drop_recent" grep -qE '^would_drop_recent +12$' <<<"$txt"
pr=$(rx "$CLI" stats "$IF_RX" --format prometheus)
check "Prometheus: the observed verdict under its enforced name, mode=\"observe\"" \
	grep -q "xdp_pacer_packets_total{ifname=\"$IF_RX\",verdict=\"dropped_recent\",mode=\"observe\"} 12" <<<"$pr"
check "Prometheus: the enforced sample beside it" \
	grep -q "xdp_pacer_packets_total{ifname=\"$IF_RX\",verdict=\"dropped_recent\"} 0" <<<"$pr"
check "Prometheus: xdp_pacer_info carries the mode" grep -q 'mode="observe",deny_mode="global"' <<<"$pr"
if command -v promtool >/dev/null; then
	check "promtool check metrics accepts it" promtool check metrics <<<"$pr"
fi
out=$(rx "$CLI" set "$IF_RX" --mode enforce 2>&1)
check "set --mode enforce ($out)" grep -q "mode enforce" <<<"$out"
send 10.215.0.1 1 --per-source 5 >/dev/null
send 10.215.0.3 1 --per-source 5 >/dev/null
sleep 0.2
check "enforcing: a source admitted while observing is refused at once (state kept): passed $(stat_of passed)" \
	test "$(stat_of passed)" = 3
check "... dropped_recent counts 5 + 4 ($(stat_of dropped_recent))" test "$(stat_of dropped_recent)" = 9
check "... the would-drop count of the observing run is kept ($(stat_of would_drop_recent))" \
	test "$(stat_of would_drop_recent)" = 12
rx "$CLI" set "$IF_RX" --mode observe --deny-mode enforce >/dev/null
send 10.215.0.1 1 --per-source 2 >/dev/null
send 203.0.113.7 1 --per-source 2 >/dev/null
sleep 0.2
check "--deny-mode enforce under a global observe: the denied source drops ($(stat_of deny_dropped))" \
	test "$(stat_of deny_dropped)" = 2
check "... while pacing observes ($(stat_of would_drop_recent))" test "$(stat_of would_drop_recent)" = 14
check "status: the deny list's own mode" grep -q "deny list enforce" <<<"$(rx "$CLI" status "$IF_RX")"
err=$(rx "$CLI" set "$IF_RX" --mode skb 2>&1)
check "set --mode skb: exit 2, the attach mode is fixed at load ($err)" \
	bash -c '[ "$1" = 2 ] && grep -q "fixed at load" <<<"$2"' _ $? "$err"
err=$(rx "$CLI" set "$IF_RX" --mode loud 2>&1)
check "set --mode loud: exit 2 naming the value ($err)" \
	bash -c '[ "$1" = 2 ] && grep -q "invalid value .loud. for --mode: expected enforce or observe" <<<"$2"' _ $? "$err"
rx "$CLI" unload "$IF_RX" >/dev/null

# --- a class's own mode ---
out=$(rx "$CLI" load "$IF_RX" --xdp-mode native --interval 30s \
	--class 'dns: udp dport 53 interval 30s observe' --class 'junk: udp dport 9 drop' 2>&1)
check "load with a class in observe mode" test $? -eq 0
check "... load lists it (mode observe)" grep -qE "dns +udp dport 53 -> interval 30 s.*mode observe" <<<"$out"
send 10.215.1.1 1 --per-source 4 --dport 53 >/dev/null
send 10.215.1.2 1 --per-source 3 --dport 9 >/dev/null
sleep 0.2
check "class dns observes: passed 1, would_drop 3, dropped 0" \
	test "$(cstat dns passed) $(cstat dns would_drop) $(cstat dns dropped)" = "1 3 0"
check "class junk enforces (global): dropped 3" test "$(cstat junk dropped) $(cstat junk would_drop)" = "3 0"
js=$(rx "$CLI" stats "$IF_RX" --json)
check "stats --json: a class's would_drop" grep -q '"class":"dns","seen":4,"passed":1,"dropped":0,"dropped_budget":0,"would_drop":3,"would_drop_budget":0' <<<"$js"
check "stats --json: would_drop_class 0, dropped_class 3" \
	bash -c 'grep -q "\"dropped_class\":3" <<<"$1" && grep -q "\"would_drop_class\":0" <<<"$1"' _ "$js"
rx "$CLI" set "$IF_RX" --class 'dns: udp dport 53 interval 30s' --class 'junk: udp dport 9 drop observe' >/dev/null
send 10.215.1.1 1 --per-source 2 --dport 53 >/dev/null
send 10.215.1.2 1 --per-source 2 --dport 9 >/dev/null
sleep 0.2
check "set --class, the mode changed: dns keeps its sources' state, now enforced (dropped $(cstat dns dropped))" \
	test "$(cstat dns dropped) $(cstat dns passed)" = "2 1"
check "... junk observes its drop action (would_drop $(cstat junk would_drop))" test "$(cstat junk would_drop)" = 2
rx "$CLI" unload "$IF_RX" >/dev/null

# --- record marks observed verdicts; analyze audits them as drops ---
rx "$CLI" load "$IF_RX" --interval 30s --mode observe >/dev/null
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/obs.xpr" --sample-sources 1/1 \
	--duration 1.5s >/dev/null 2>"$WORK/rec.err" &
REC_PID=$!
sleep 0.5
send 10.215.2.1 4 --per-source 5 >/dev/null
wait "$REC_PID"
check "record in observe mode exits 0 ($(head -1 "$WORK/rec.err"))" test $? -eq 0
an=$(rx "$CLI" analyze "$WORK/obs.xpr" 2>&1)
check "analyze: 20 packets, 4 admitted, 16 dropped" grep -q "20 packets of 4 source-sampled sources: 4 admitted, 16 dropped" <<<"$an"
check "analyze: the 16 drops were observed" grep -q "of the drops, 16 were observed" <<<"$an"
check "analyze: no false pass, no false drop" \
	bash -c 'grep -q "false drops: 0 " <<<"$1" && grep -q "false passes: 0" <<<"$1"' _ "$an"
rx "$CLI" unload "$IF_RX" >/dev/null

# --- the attach mode ---
rx "$CLI" load "$IF_RX" --mode skb >/dev/null 2>&1
check "load --mode skb (the attach mode's old spelling) still loads" \
	grep -q "skb mode" <<<"$(rx "$CLI" status "$IF_RX")"
rx "$CLI" unload "$IF_RX" >/dev/null
err=$(rx "$CLI" load "$IF_RX" --mode skb --xdp-mode native 2>&1)
check "load --mode skb --xdp-mode native: exit 2 ($err)" test $? -eq 2
printf 'mode = native\ninterval = 1s\n' >"$WORK/old.conf"
rx "$CLI" load "$IF_RX" --config "$WORK/old.conf" --mode skb >/dev/null 2>&1
check "a file's 'mode = native' (read as xdp-mode), the command line's --mode skb: it wins" \
	grep -q "skb mode" <<<"$(rx "$CLI" status "$IF_RX")"
rx "$CLI" unload "$IF_RX" >/dev/null
printf 'mode = observe\nxdp-mode = skb\n' >"$WORK/new.conf"
rx "$CLI" load "$IF_RX" --config "$WORK/new.conf" >/dev/null 2>&1
check "a file's 'mode = observe' and 'xdp-mode = skb'" \
	bash -c 'grep -q "skb mode" <<<"$1" && grep -q "live: mode observe" <<<"$1"' _ "$(rx "$CLI" status "$IF_RX")"
rx "$CLI" unload "$IF_RX" >/dev/null
finish
