#!/usr/bin/env bash
# Integration: the limiter on a router.  Three namespaces: a client, a
# router (IPv4 and IPv6 forwarding, strict rp_filter, the kernel's ICMP
# rate limits off so that it answers every frame) with the limiter on its
# ingress veth from the client, and a server with two addresses, counting
# what it receives with nftables.  The client's sources (203.0.113.0/24,
# 2001:db8:100::/48) are routed back through it; the neighbours are static.
# First without the limiter, the kernel's answer to each frame (the
# checks below could not tell a drop from the kernel's silence otherwise),
# then:
#  - N sources x M frames, IPv4 and IPv6: the server receives one per
#    source, TTL and hop limit 63, as the limiter's counters say;
#  - TTL 1 and unroutable destinations: the router sends an ICMP error for
#    each frame the limiter admits and none for the frame it drops;
#  - a spoofed source: the limiter judges it before rp_filter drops it;
#  - --malformed pass and drop on frames bound for the server;
#  - docs/operating.md's router configuration loads: a class keyed
#    src+dst paces one source per destination, its deny list drops the
#    spoofed source before pacing, and a TCP transfer (iperf3) through it
#    runs as fast as behind a bare XDP_PASS program, none of it dropped
#    (1 s runs alternated, three more pairs where the machine's noise
#    hides that).
# Each count is bounded by the time measured around its step.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpo-router.XXXXXX)
NS_S="xpo-srv-$$"
IF_R1="xpo1r$$" IF_S="xpo1s$$"
cleanup() {
	teardown_pair
	ip netns del "$NS_S" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

command -v iperf3 >/dev/null && command -v nft >/dev/null ||
	{ echo "FAIL - iperf3 or nft is not installed: run sudo scripts/deps.sh"; exit 1; }

# The pair: NS_TX is the client (IF_TX), NS_RX the router (IF_RX, the
# limiter's ingress); a second veth joins the router (IF_R1) to the server.
setup_pair xpo || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
ip netns add "$NS_S" &&
	ip link add "$IF_R1" netns "$NS_RX" type veth peer name "$IF_S" netns "$NS_S" ||
	{ echo "cannot create the server's namespace"; exit 1; }
srv() { nsenter --net="/run/netns/$NS_S" "$@"; }
mac() { ip -n "$1" -j link show "$2" | grep -o '"address":"[^"]*"' | head -1 | cut -d'"' -f4; }
C_MAC=$(mac "$NS_TX" "$IF_TX") R1_MAC=$(mac "$NS_RX" "$IF_R1") S_MAC=$(mac "$NS_S" "$IF_S")
# IPv6 in the router and the server; the client sends IPv6 only with
# send_frames, so that its kernel adds nothing to the limiter's counters.
rx sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
	net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
	net.ipv4.conf.all.rp_filter=1 net.ipv4.conf."$IF_RX".rp_filter=1 \
	net.ipv4.icmp_ratemask=0 net.ipv6.icmp.ratemask= &&
	ip -n "$NS_TX" addr add 192.0.2.2/24 dev "$IF_TX" &&
	ip -n "$NS_TX" route add default via 192.0.2.1 &&
	ip -n "$NS_TX" route add local 203.0.113.0/24 dev lo &&
	ip -n "$NS_TX" neigh add 192.0.2.1 lladdr "$RX_MAC" dev "$IF_TX" nud permanent &&
	ip -n "$NS_RX" addr add 192.0.2.1/24 dev "$IF_RX" &&
	ip -n "$NS_RX" addr add 2001:db8:1::1/64 dev "$IF_RX" nodad &&
	ip -n "$NS_RX" addr add 198.51.100.1/24 dev "$IF_R1" &&
	ip -n "$NS_RX" addr add 2001:db8:2::1/64 dev "$IF_R1" nodad &&
	ip -n "$NS_RX" link set "$IF_R1" up &&
	ip -n "$NS_RX" route add 203.0.113.0/24 via 192.0.2.2 &&
	ip -n "$NS_RX" route add 2001:db8:100::/48 via 2001:db8:1::2 &&
	ip -n "$NS_RX" neigh add 192.0.2.2 lladdr "$C_MAC" dev "$IF_RX" nud permanent &&
	ip -n "$NS_RX" neigh add 2001:db8:1::2 lladdr "$C_MAC" dev "$IF_RX" nud permanent &&
	for a in 198.51.100.2 198.51.100.3 2001:db8:2::2; do
		ip -n "$NS_RX" neigh add "$a" lladdr "$S_MAC" dev "$IF_R1" nud permanent || exit 1
	done &&
	ip -n "$NS_S" link set lo up && ip -n "$NS_S" link set "$IF_S" up &&
	ip -n "$NS_S" addr add 198.51.100.2/24 dev "$IF_S" &&
	ip -n "$NS_S" addr add 198.51.100.3/24 dev "$IF_S" &&
	ip -n "$NS_S" addr add 2001:db8:2::2/64 dev "$IF_S" nodad &&
	ip -n "$NS_S" route add default via 198.51.100.1 &&
	ip -n "$NS_S" route add ::/0 via 2001:db8:2::1 &&
	ip -n "$NS_S" neigh add 198.51.100.1 lladdr "$R1_MAC" dev "$IF_S" nud permanent &&
	ip -n "$NS_S" neigh add 2001:db8:2::1 lladdr "$R1_MAC" dev "$IF_S" nud permanent ||
	{ echo "cannot set up the router"; exit 1; }
# What the server receives: UDP port 9 by family and with the TTL one hop
# took off, and UDP port 53 by destination.
srv nft -f - <<'EOF' || { echo "cannot set up the server's counters"; exit 1; }
table inet xpo {
	counter v4 {}
	counter v4ttl {}
	counter v6 {}
	counter v6hl {}
	counter dns2 {}
	counter dns3 {}
	chain input {
		type filter hook input priority 0; policy accept;
		meta nfproto ipv4 udp dport 9 counter name v4
		ip ttl 63 udp dport 9 counter name v4ttl
		meta nfproto ipv6 udp dport 9 counter name v6
		ip6 hoplimit 63 udp dport 9 counter name v6hl
		ip daddr 198.51.100.2 udp dport 53 counter name dns2
		ip daddr 198.51.100.3 udp dport 53 counter name dns3
	}
}
EOF
at_srv() { srv nft list counter inet xpo "$1" | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }
at_router() { rx nstat -asz "$1" | awk -v k="$1" '$1 == k { print $2 }'; }
# cstat CLASS COUNTER: one class's counter from stats' text lines.
cstat() {
	rx "$CLI" stats "$IF_RX" | awk -v c="$1" -v k="$2" \
		'$1 == "class" && $2 == c { for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }'
}
# until_at FN NAME VALUE: until FN NAME reaches VALUE, at most 5 s (the
# stack handles a frame after the limiter's verdict, on a loaded machine
# later than any fixed sleep assumes); then FN NAME's value.
until_at() {
	local _ v
	for _ in $(seq 100); do
		v=$("$1" "$2")
		[ "${v:-0}" -ge "$3" ] && break
		sleep 0.05
	done
	echo "$v"
}
# Sending: send (lib.sh) from the client to the router's ingress MAC, to the server.
S4=198.51.100.2 S6=2001:db8:2::2
DST=$S4
send6() { # like send, one /64 per IPv6 source
	local base=$1; shift
	DST=${DST6:-$S6} send "$base" "$@" --stride 18446744073709551616
}
now_ns() { echo $((${EPOCHREALTIME/./} * 1000)); }
# admits N SINCE_NS INTERVAL_NS: at most how many frames N sources may have
# passed since SINCE_NS (once per interval begun).
admits() { echo $(($1 * (1 + ($(now_ns) - $2) / $3))); }
# provoke KIND I N PER: PER frames from each of N sources (the step I's)
# that the router answers with an ICMP error: KIND ttl4|ttl6 (TTL 1),
# unreach4|unreach6 (a destination without a route).
KINDS="ttl4 ttl6 unreach4 unreach6"
provoke() {
	local i=$2 n=$3 per=$4
	case $1 in
	ttl4) send "203.0.113.$i" "$n" --per-source "$per" --ttl 1 ;;
	ttl6) send6 "2001:db8:100:$i::" "$n" --per-source "$per" --ttl 1 ;;
	unreach4) DST=10.255.0.1 send "203.0.113.$i" "$n" --per-source "$per" ;;
	unreach6) DST6=2001:db8:ff::1 send6 "2001:db8:100:$i::" "$n" --per-source "$per" ;;
	esac >/dev/null
}
icmp_counter() { # KIND: the router's counter of the errors it provokes
	case $1 in
	ttl4) echo IcmpOutTimeExcds ;; ttl6) echo Icmp6OutTimeExcds ;;
	unreach4) echo IcmpOutDestUnreachs ;; unreach6) echo Icmp6OutDestUnreachs ;;
	esac
}

# --- without the limiter: the kernel's answer to every frame ---
v4=$(at_srv v4)
send 203.0.113.1 3 --per-source 2 >/dev/null
check "no limiter: all 6 frames of 3 sources are forwarded" \
	test "$(until_at at_srv v4 $((v4 + 6)))" = $((v4 + 6))
i=10
for k in $KINDS; do
	counter=$(icmp_counter "$k")
	before=$(at_router "$counter")
	provoke "$k" $i 2 2
	check "no limiter: the router sends an ICMP error for each of 4 frames ($k: $counter)" \
		test "$(until_at at_router "$counter" $((before + 4)))" = $((before + 4))
	i=$((i + 10))
done

# --- the limiter, one packet per source per 5 s ---
IV=5000000000
out=$(rx "$CLI" load "$IF_RX" --interval 5s 2>&1)
check "load on the router's ingress" test $? -eq 0
echo "$out" | sed 's/^/    /'
v4=$(at_srv v4) t4=$(at_srv v4ttl) v6=$(at_srv v6) h6=$(at_srv v6hl)
t0=$(now_ns)
send 203.0.113.100 10 --per-source 5 >/dev/null
send6 2001:db8:100:100:: 10 --per-source 5 >/dev/null
seen=100
settle $seen
got4=$(($(until_at at_srv v4 $((v4 + 10))) - v4)) got6=$(($(until_at at_srv v6 $((v6 + 10))) - v6))
max=$(admits 10 "$t0" $IV)
passed=$(stat_of passed) dropped=$(stat_of dropped_recent)
check "IPv4: 10 sources x 5 frames, the server receives one per source ($got4, at most $max)" \
	test "$got4" -ge 10 -a "$got4" -le "$max"
check "IPv6: 10 /64s x 5 frames, the server receives one per source ($got6, at most $max)" \
	test "$got6" -ge 10 -a "$got6" -le "$max"
check "... each with TTL 63 ($(($(at_srv v4ttl) - t4))) and hop limit 63 ($(($(at_srv v6hl) - h6)))" \
	test $(($(at_srv v4ttl) - t4)) = "$got4" -a $(($(at_srv v6hl) - h6)) = "$got6"
check "the limiter passed what the server received ($passed) and dropped the rest ($dropped)" \
	test "$passed" = $((got4 + got6)) -a "$dropped" = $((100 - passed))

# ICMP errors: 5 sources x 2 frames each, the second within the interval.
i=110
for k in $KINDS; do
	p0=$(stat_of passed)
	counter=$(icmp_counter "$k")
	before=$(at_router "$counter")
	t0=$(now_ns)
	provoke "$k" $i 5 2
	seen=$((seen + 10))
	settle $seen
	got=$(($(until_at at_router "$counter" $((before + 5))) - before))
	max=$(admits 5 "$t0" $IV)
	passed=$(($(stat_of passed) - p0))
	check "$k: an ICMP error ($counter) for each of the 5 frames admitted, none for the 5 dropped ($got, at most $max)" \
		test "$got" -ge 5 -a "$got" -le "$max" -a "$got" = "$passed"
	i=$((i + 10))
done

# A spoofed source (the server's network, arriving from the client): the
# limiter judges it and keeps its state; rp_filter drops what it passes.
p0=$(stat_of passed) d0=$(stat_of dropped_recent)
rpf=$(at_router TcpExtIPReversePathFilter) v4=$(at_srv v4)
send 198.51.100.77 1 --per-source 2 >/dev/null
seen=$((seen + 2))
settle $seen
check "a spoofed source: the limiter passes its first frame and drops its second" \
	test "$(stat_of passed)" = $((p0 + 1)) -a "$(stat_of dropped_recent)" = $((d0 + 1))
got=$(($(until_at at_router TcpExtIPReversePathFilter $((rpf + 1))) - rpf))
check "... rp_filter drops the one it passed ($got)" test "$got" = 1
check "... the server receives neither" test "$(at_srv v4)" = "$v4"
check "... and the spoofed address holds the limiter's state (query: dropped)" \
	grep -q DROPPED <<<"$(rx "$CLI" query "$IF_RX" 198.51.100.77)"

# --malformed pass, then drop: 3 IPv4 frames with IHL 4 and 3 IPv6 frames
# with version 5, bound for the server.
for verdict in pass:malformed_passed drop:malformed_dropped; do
	counter=${verdict#*:} verdict=${verdict%:*}
	rx "$CLI" set "$IF_RX" --malformed "$verdict" >/dev/null
	e4=$(at_router IpInHdrErrors) e6=$(at_router Ip6InHdrErrors) m0=$(stat_of "$counter")
	send 203.0.113.200 3 --bad-header >/dev/null
	send6 2001:db8:100:200:: 3 --bad-header >/dev/null
	# Then a good frame: once the server has it, the router's stack has
	# handled the six before it (one CPU, in order).
	v4=$(at_srv v4)
	send 203.0.113.210 1 >/dev/null
	seen=$((seen + 7))
	settle $seen
	until_at at_srv v4 $((v4 + 1)) >/dev/null
	m=$(($(stat_of "$counter") - m0))
	if [ "$verdict" = pass ]; then
		check "--malformed pass: 6 frames counted malformed_passed ($m), dropped by the router's stack as header errors" \
			test "$m" = 6 -a "$(at_router IpInHdrErrors)" = $((e4 + 3)) -a "$(at_router Ip6InHdrErrors)" = $((e6 + 3))
	else
		check "--malformed drop: 6 frames counted malformed_dropped ($m), none reaches the router's stack" \
			test "$m" = 6 -a "$(at_router IpInHdrErrors)" = "$e4" -a "$(at_router Ip6InHdrErrors)" = "$e6"
	fi
done
rx "$CLI" unload "$IF_RX" >/dev/null

# --- docs/operating.md's router configuration ---
awk '/tests\/integ_router.sh loads this file/ { on = 1; next }
	on && /^```/ { if (in_block) exit; in_block = 1; next }
	in_block' docs/operating.md >"$WORK/router.conf"
check "docs/operating.md has the router's configuration ($(grep -c . "$WORK/router.conf") lines)" \
	grep -q '^\[class dns\]' "$WORK/router.conf"
load_conf() { rx "$CLI" load "$IF_RX" --config "$WORK/router.conf" 2>&1; }
out=$(load_conf)
check "the router's configuration loads" test $? -eq 0
st=$(rx "$CLI" status "$IF_RX")
check "... its classes: dns and syn keyed src+dst, ping" bash -c \
	'grep -qE "dns +udp dport 53 -> rate 20/1 s, key src\+dst" <<<"$1" &&
	 grep -qE "syn +tcp flags syn -> rate 10/1 s, key src\+dst" <<<"$1" && grep -qE "ping +icmp" <<<"$1"' _ "$st"

# One source, two resolvers, 25 queries each: a burst of 20 to each.
d2=$(at_srv dns2) d3=$(at_srv dns3)
t0=$(now_ns)
send 203.0.113.200 1 --per-source 25 --dport 53 >/dev/null
DST=198.51.100.3 send 203.0.113.200 1 --per-source 25 --dport 53 >/dev/null
settle 50
g2=$(($(until_at at_srv dns2 $((d2 + 20))) - d2)) g3=$(($(until_at at_srv dns3 $((d3 + 20))) - d3))
# GCRA at 20/1s: a burst of 20, then one per 50 ms.
max=$((20 + ($(now_ns) - t0) / 50000000 + 1))
check "class dns keyed src+dst: one source's queries reach each resolver in a burst of 20 ($g2 and $g3, at most $max each)" \
	test "$g2" -ge 20 -a "$g2" -le "$max" -a "$g3" -ge 20 -a "$g3" -le "$max"
check "... as the class counts: $(cstat dns passed) passed, $(cstat dns dropped) dropped of 50" \
	test "$(cstat dns passed)" = $((g2 + g3)) -a "$(cstat dns dropped)" = $((50 - g2 - g3))
rpf=$(at_router TcpExtIPReversePathFilter)
send 198.51.100.77 1 --per-source 2 >/dev/null
settle 52
check "its deny list drops the spoofed source before pacing, and before rp_filter" \
	test "$(stat_of deny_dropped)" = 2 -a "$(at_router TcpExtIPReversePathFilter)" = "$rpf"
rx "$CLI" unload "$IF_RX" >/dev/null

# TCP through the router: a transfer behind a bare XDP_PASS program and
# behind the limiter with this configuration, alternated.  veth's XDP mode
# has a cost of its own (without any program the transfer runs faster:
# printed, not compared), so the bare program is the baseline.
srv iperf3 -s -B "$S4" >"$WORK/iperf_srv" 2>&1 &
for _ in $(seq 50); do [ -n "$(srv ss -Hlnt 'sport = :5201')" ] && break; sleep 0.1; done
tcp_run() { # TAG: one 1 s transfer; its received bits per second onto $WORK/tcp.TAG
	tx timeout 15 iperf3 -c "$S4" -t 1 --connect-timeout 3000 -J >"$WORK/iperf.json" 2>&1
	python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' \
		"$WORK/iperf.json" >>"$WORK/tcp.$1" 2>/dev/null || echo 0 >>"$WORK/tcp.$1"
}
lim_drops=0 lim_unclassified=0 lim_syn=0
tcp_limiter() { # the limiter's drops and unclassified passes summed over the runs
	load_conf >/dev/null
	tcp_run limiter
	lim_drops=$((lim_drops + $(stat_of dropped_recent) + $(stat_of dropped_class) + $(stat_of dropped_budget)))
	lim_unclassified=$((lim_unclassified + $(stat_of unclassified_passed)))
	lim_syn=$((lim_syn + $(cstat syn seen)))
	rx "$CLI" unload "$IF_RX" >/dev/null
}
tcp_bare() {
	rx ip link set dev "$IF_RX" xdpdrv obj "$BUILD/bench_pass.bpf.o" sec xdp
	tcp_run bare
	rx ip link set dev "$IF_RX" xdpdrv off
}
tcp_ratios() { # "medians' ratio, best runs' ratio" of the runs so far, and the figures
	python3 - "$WORK" <<'PY2'
import statistics, sys
w = sys.argv[1]
runs = {k: [int(x) for x in open(f"{w}/tcp.{k}")] for k in ("none", "bare", "limiter")}
med = {k: statistics.median(v) for k, v in runs.items()}
best = {k: max(v) for k, v in runs.items()}
print(f"{med['limiter'] / max(med['bare'], 1):.3f} {best['limiter'] / max(best['bare'], 1):.3f}")
for k, v in runs.items():
    print(f"    {k:8} {', '.join(f'{x / 1e9:.2f}' for x in v)} Gbit/s (median {med[k] / 1e9:.2f})")
PY2
}
fast_enough() { python3 -c "import sys; sys.exit(not ($1 >= 0.6 and $2 >= 0.5))"; }
tcp_run none
for order in "bare limiter" "limiter bare" "bare limiter"; do
	for w in $order; do "tcp_$w"; done
done
figures=$(tcp_ratios)
read -r ratio_med ratio_best <<<"$(head -1 <<<"$figures")"
# Both run the same path, the limiter's class checks adding tens of ns to
# a packet's microseconds, so they differ by the machine's noise: 1 s runs
# on the loaded 2-CPU VM moved by up to 5x beside a flood.  A limiter that
# paced the transfer would leave it a few kbit/s (a ratio of 0.00001),
# and one dropping a little of it fails the check after this one; load
# only slows a run, so the best runs compare, and the medians loosely.
# Where the noise hid that, up to three more pairs of runs.
for order in "limiter bare" "bare limiter" "limiter bare"; do
	fast_enough "$ratio_best" "$ratio_med" && break
	echo "    (medians' ratio $ratio_med, best runs' $ratio_best: one more pair of runs)"
	for w in $order; do "tcp_$w"; done
	figures=$(tcp_ratios)
	read -r ratio_med ratio_best <<<"$(head -1 <<<"$figures")"
done
echo "    TCP through the router, 1 s transfers (none: no XDP program on the ingress):"
tail -n +2 <<<"$figures"
check "TCP behind the limiter runs as fast as behind a bare XDP_PASS program (best runs' ratio $ratio_best >= 0.6, medians' $ratio_med >= 0.5)" \
	fast_enough "$ratio_best" "$ratio_med"
check "... the limiter dropped none of it ($lim_drops), its SYNs met class syn ($lim_syn), the rest passed unclassified ($lim_unclassified)" \
	test "$lim_drops" = 0 -a "$lim_syn" -ge 6 -a "$lim_unclassified" -gt 10000

finish
