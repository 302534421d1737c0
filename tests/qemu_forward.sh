# The router test's guest side (busybox sh, run by scripts/qemu-boot.sh with
# QEMU_XDP_FORWARD=1 for tests/integ_forward.sh): the limiter before
# Debian 13's xdp-forward in one libxdp dispatcher on a router's ingress.
#
#   client netns "cli"          router (the guest's own netns)           server netns "srv"
#   eth0 10.1.0.2  --qemu hub-->  eth1 10.1.0.1        vr 10.2.0.1  --veth-->  vs 10.2.0.2
#                                 limiter (20), xdp-forward (50)               bench_pass (XDP), udp_sink :9
#
# Frames are crafted on the client (send_frames on eth0, from 10.1.0.100 and
# up, to 10.2.0.2); eth1 runs libxdp's dispatcher in native mode (virtio-net)
# with the limiter (priority 20, libxdp 1.3.1 of Debian 12) and xdp-forward
# (its default priority 50, libxdp 1.5.x linked into Debian 13's binary).
# xdp-forward also runs on vr, which puts vr in its devmap; the server's vs
# runs an XDP program so that its veth accepts the redirected frames.  The
# neighbours are static (bpf_fib_lookup needs them; nothing resolves ARP
# meanwhile) and the server has no route back (its kernel sends nothing).
# Checks: what the limiter admits is forwarded in XDP (the router's
# ForwDatagrams does not move; the server gets it with TTL 63), what it
# drops never reaches the server (N sources x M frames: exactly N, one per
# source); a TTL 1 frame it admits goes to the router's stack, whose ICMP
# time exceeded reaches the client, and one it drops does not; each program
# unloads alone, leaving the other working; both orders of loading (either
# libxdp building the dispatcher the other joins).  Prints ok/FAIL lines,
# "fwd ..." lines for integ_forward.sh's summary and "N passed, N failed".
. /pacer/lib.sh
IP=/sbin/ip # busybox's sh would run its own ip applet for a bare "ip"
tmp=$(mktemp -d)
N=16 # sources
M=4  # frames each
SRV=10.2.0.2

mac_of() { # iface [netns]
	if [ -n "${2:-}" ]; then $IP -n "$2" -o link show "$1"; else $IP -o link show "$1"; fi |
		sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'
}
attached_name() { $IP link show "$1" | sed -n 's/.*prog\/xdp id [0-9]* name \([^ ]*\).*/\1/p'; }
snmp() { # PROTO FIELD [NETNS]: a counter of /proc/net/snmp
	if [ -n "${3:-}" ]; then $IP netns exec "$3" cat /proc/net/snmp; else cat /proc/net/snmp; fi |
		awk -v p="$1:" -v f="$2" '$1 == p { if (!h) { for (i = 2; i <= NF; i++) if ($i == f) c = i; h = 1 } else { print $c; exit } }'
}
fwd_count() { snmp Ip ForwDatagrams; }
stat_of() { grep -o "\"$1\":[0-9]*" "$tmp/stats.json" | cut -d: -f2; }
snap_stats() { xdp-pacer stats eth1 --json >"$tmp/stats.json" 2>&1; }
# SOURCE SOURCES PER-SOURCE [TTL]: frames from the client, from one CPU.
send() {
	$IP netns exec cli taskset -c 0 send_frames --iface eth0 --dst-mac "$rmac" --src-base "$1" \
		--dst "$SRV" --sources "$2" --per-source "$3" ${4:+--ttl "$4"} >/dev/null ||
		not_ok "send_frames from $1 failed"
}
# The server's receiver, until a datagram from MARKER (a fresh source, which
# the limiter admits): sent last, from the same CPU, it arrives after
# whatever of the frames before it arrives at all.
sink_start() { # MARKER
	noports0=$(snmp Udp NoPorts srv)
	$IP netns exec srv udp_sink --port 9 --until "$1" --timeout 60 >"$tmp/sink.out" 2>&1 &
	sink=$!
	for _ in $(seq 100); do
		grep -q listening "$tmp/sink.out" && return 0
		sleep 0.2
	done
	not_ok "udp_sink did not start: $(tr '\n' ' ' <"$tmp/sink.out")"
}
sink_end() { # MARKER
	send "$1" 1 1
	wait "$sink" || not_ok "the marker from $1 never reached the server: $(tr '\n' ' ' <"$tmp/sink.out")"
}
sink_val() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/sink.out"; }
sink_ttls() { grep '^ttl ' "$tmp/sink.out" | tr '\n' ' ' | sed 's/ $//'; }
# LABEL FRAMES SOURCES: what the server received (all with TTL 63: 64, less the router's hop).
sink_check() {
	local got
	got=$(sink_val datagrams)
	if [ "$got" = "$2" ]; then
		ok "$1: the server received: $got"
	else
		sleep 1
		not_ok "$1: the server received: expected $2, got '$got' (its kernel: $(snmp Udp RcvbufErrors srv) UDP receive buffer errors, $(snmp Ip InReceives srv) IP datagrams received in all, $(($(snmp Udp NoPorts srv) - noports0)) to the closed port after the marker; vs: $($IP -n srv -s -o link show vs | tr -s ' ' | cut -c1-400); neigh: $($IP neigh show dev vr))"
	fi
	expect_eq "$1: from distinct sources" "$(sink_val sources)" "$3"
	expect_eq "$1: all with TTL 63 (sent with 64)" "$(sink_ttls)" "ttl 63 $2"
}
# LABEL: N sources x M frames through eth1, as the limiter (if LIMITED) paces them.
traffic() { # label first-source marker limited|unlimited
	local f0 p0 d0 want
	f0=$(fwd_count)
	[ "$4" = limited ] && { snap_stats; p0=$(stat_of passed); d0=$(stat_of dropped_recent); }
	sink_start "$3"
	send "$2" "$N" "$M"
	sink_end "$3"
	want=$((N * M))
	[ "$4" = limited ] && want=$N
	sink_check "$1" "$want" "$N"
	if [ "$4" = limited ]; then
		snap_stats
		expect_eq "$1: the limiter passed one of each source and the marker" "$(($(stat_of passed) - p0))" $((N + 1))
		expect_eq "$1: the limiter dropped the rest" "$(($(stat_of dropped_recent) - d0))" $((N * (M - 1)))
	fi
	fwd_delta=$(($(fwd_count) - f0))
}
# LABEL: the chain on eth1 as status --json lists it must match PATTERN.
chain_is() { # label pattern
	xdp-pacer status eth1 --json >"$tmp/st.json" 2>&1
	if grep -q "\"mode\":\"native\".*\"chain\":\[$2\]" "$tmp/st.json"; then
		ok "$1"
	else
		not_ok "$1: $(cat "$tmp/st.json")"
	fi
}
LIM='{"name":"xdp_pacer","id":[0-9]*,"priority":20,"chain_actions":\["XDP_PASS"\],"self":true}'
# (the kernel keeps 15 characters of a program's name: xdp_fwd_fib_full reads xdp_fwd_fib_ful)
FWD='{"name":"xdp_fwd_fib_ful","id":[0-9]*,"priority":50,"chain_actions":\["XDP_PASS"\],"self":false}'
pacer_load() { # label
	if xdp-pacer load eth1 --placement shared --interval 60s >"$tmp/load.out" 2>&1; then
		ok "$1: $(grep -m1 'chain:' "$tmp/load.out" | sed 's/^ *//')"
	else
		not_ok "$1: $(grep -m1 '^xdp-pacer' "$tmp/load.out")"
	fi
}
fwd_load() { # label
	if xdp-forward load eth1 vr >"$tmp/fwd.out" 2>&1; then
		ok "$1"
	else
		not_ok "$1: $(tr '\n' ' ' <"$tmp/fwd.out")"
	fi
}

# --- The topology.
for ns in cli srv; do
	$IP netns add "$ns" || { not_ok "cannot create netns $ns"; done_; }
	# No IPv6: the kernel's own solicitations would reach the limiter and the server.
	$IP netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6'
	$IP -n "$ns" link set lo up
done
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
[ -e /sys/class/net/eth1 ] || { not_ok "the guest has no virtio-net eth1"; done_; }
$IP link set eth0 netns cli
$IP -n cli addr add 10.1.0.2/24 dev eth0 && $IP -n cli link set eth0 up
$IP addr add 10.1.0.1/24 dev eth1 && $IP link set eth1 up
$IP link add vr type veth peer name vs && $IP link set vs netns srv
$IP addr add 10.2.0.1/24 dev vr && $IP link set vr up
$IP -n srv addr add "$SRV/24" dev vs && $IP -n srv link set vs up
echo 1 >/proc/sys/net/ipv4/ip_forward
rmac=$(mac_of eth1); cmac=$(mac_of eth0 cli); smac=$(mac_of vs srv)
$IP neigh replace "$SRV" lladdr "$smac" dev vr nud permanent
$IP neigh replace 10.1.0.2 lladdr "$cmac" dev eth1 nud permanent
$IP -n cli neigh replace 10.1.0.1 lladdr "$rmac" dev eth0 nud permanent
# veth accepts redirected frames when its peer runs XDP.
$IP netns exec srv $IP link set dev vs xdp obj /pacer/bench_pass.bpf.o sec xdp ||
	not_ok "cannot attach bench_pass to the server's veth"
echo "fwd $(xdp-forward load --version 2>&1 | head -1)"

# --- The limiter first (libxdp 1.3.1 builds the dispatcher), xdp-forward joins it (1.5.x).
pacer_load "limiter loaded on eth1 first"
fwd_load "xdp-forward (Debian 13) joins the limiter's dispatcher on eth1 and attaches to vr"
chain_is "native dispatcher on eth1: the limiter (20) runs before xdp-forward (50)" "$LIM,$FWD"
xdp-pacer status eth1 | grep -A2 'chain:' | sed 's/^ */fwd chain: /'
traffic "forwarded in XDP" 10.1.0.100 10.1.0.250 limited
expect_eq "forwarded in XDP: the router's kernel forwarded none (ForwDatagrams)" "$fwd_delta" 0
echo "fwd limiter before xdp-forward: $N sources x $M frames, the server received $(sink_val datagrams) with $(sink_ttls), ForwDatagrams +$fwd_delta"

# TTL 1, from the client's own address, twice: the limiter admits the first,
# xdp-forward passes it to the stack (its TTL rule), which answers with a
# time exceeded; the second the limiter drops.
ie0=$(snmp Icmp InTimeExcds cli); oe0=$(snmp Icmp OutTimeExcds); f0=$(fwd_count)
snap_stats; d0=$(stat_of dropped_recent)
sink_start 10.1.0.252
send 10.1.0.2 1 2 1
sink_end 10.1.0.252
for _ in $(seq 50); do
	[ "$(snmp Icmp InTimeExcds cli)" -gt "$ie0" ] && break
	sleep 0.2
done
sleep 0.5
snap_stats
expect_eq "TTL 1: the limiter dropped the second frame" "$(($(stat_of dropped_recent) - d0))" 1
expect_eq "TTL 1: the router sent one time exceeded (OutTimeExcds)" "$(($(snmp Icmp OutTimeExcds) - oe0))" 1
expect_eq "TTL 1: the client received one time exceeded (InTimeExcds)" "$(($(snmp Icmp InTimeExcds cli) - ie0))" 1
expect_eq "TTL 1: nothing reached the server" "$(sink_val datagrams)" 0
expect_eq "TTL 1: nothing forwarded by the kernel" "$(($(fwd_count) - f0))" 0

# --- xdp-forward unloads alone: the limiter stays and paces, and the kernel forwards.
if xdp-forward unload eth1 vr >"$tmp/fwd.out" 2>&1; then
	ok "xdp-forward unload eth1 vr"
else
	not_ok "xdp-forward unload eth1 vr: $(tr '\n' ' ' <"$tmp/fwd.out")"
fi
chain_is "after xdp-forward's unload the limiter is alone in eth1's dispatcher" "$LIM"
expect_eq "after xdp-forward's unload vr runs no XDP program" "$(attached_name vr)" ""
traffic "xdp-forward gone" 10.1.0.130 10.1.0.251 limited
expect_eq "xdp-forward gone: the kernel forwards what the limiter passes (ForwDatagrams)" "$fwd_delta" $((N + 1))

# --- xdp-forward again (joining a dispatcher its own libxdp rebuilt), then the limiter unloads alone.
fwd_load "xdp-forward loads again beside the limiter"
chain_is "again: the limiter (20) before xdp-forward (50)" "$LIM,$FWD"
xdp-pacer unload eth1 >"$tmp/unload.out" 2>&1 || not_ok "xdp-pacer unload eth1: $(tr '\n' ' ' <"$tmp/unload.out")"
if grep -q "still attached to eth1 in libxdp's dispatcher: xdp_fwd_fib_ful" "$tmp/unload.out" &&
	[ "$(attached_name eth1)" = xdp_dispatcher ]; then
	ok "xdp-pacer unload leaves xdp-forward attached to eth1"
else
	not_ok "after xdp-pacer unload: $(tr '\n' ' ' <"$tmp/unload.out"); attached: $(attached_name eth1)"
fi
traffic "limiter gone" 10.1.0.160 10.1.0.253 unlimited
expect_eq "limiter gone: xdp-forward forwards every frame in XDP (ForwDatagrams)" "$fwd_delta" 0

# --- xdp-forward first on a bare eth1 (libxdp 1.5.x builds the dispatcher), the limiter joins.
xdp-forward unload eth1 vr >"$tmp/fwd.out" 2>&1 || not_ok "xdp-forward unload: $(tr '\n' ' ' <"$tmp/fwd.out")"
expect_eq "nothing left attached to eth1" "$(attached_name eth1)" ""
fwd_load "xdp-forward loaded first on a bare eth1"
pacer_load "the limiter joins xdp-forward's dispatcher"
chain_is "loaded second, the limiter (20) still runs before xdp-forward (50)" "$LIM,$FWD"
traffic "xdp-forward first" 10.1.0.190 10.1.0.254 limited
expect_eq "xdp-forward first: the router's kernel forwarded none" "$fwd_delta" 0
echo "fwd xdp-forward loaded first: the server received $(sink_val datagrams) with $(sink_ttls), ForwDatagrams +$fwd_delta"

xdp-pacer unload eth1 >/dev/null 2>&1 || not_ok "last xdp-pacer unload failed"
xdp-forward unload eth1 vr >/dev/null 2>&1 || not_ok "last xdp-forward unload failed"
expect_eq "nothing left attached to eth1 or vr" "$(attached_name eth1)$(attached_name vr)" ""
expect_eq "no libxdp pins left" "$(ls /sys/fs/bpf/xdp 2>/dev/null | grep -c dispatch-)" 0
rm -rf "$tmp"
done_
