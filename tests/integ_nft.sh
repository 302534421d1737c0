#!/usr/bin/env bash
# scripts/nft-from-config.py, the policy of a configuration file as an
# nftables ruleset (scripts/bench-nft.sh compares the two on it): the
# rulesets of configurations with lists, every match word, keys and
# actions load into nft and, on a veth, enforce the limit (8 frames from
# one source in a second: 1 passes); what nftables has no equivalent for
# is refused, naming the file and line.  Skipped where nft is missing.
. "$(dirname "$0")/lib.sh"
command -v nft >/dev/null || { echo "SKIP: nft is not installed (scripts/deps.sh installs nftables)"; exit 77; }
WORK=$(mktemp -d /tmp/xpt-nft.XXXXXX)
cleanup() {
	stop_background
	rx nft delete table netdev xdp_pacer_cmp 2>/dev/null
	rm -rf "$WORK"
	teardown_pair
}
trap cleanup EXIT
setup_pair xpn || { echo "cannot create namespaces/veth"; exit 1; }
CONV=scripts/nft-from-config.py

cat >"$WORK/all.conf" <<'CONF'
interval = 1s
prefix4 = 24
[class dns]
match = udp dport 53
rate = 20/1s
[class syn]
match = tcp flags syn
interval = 100ms
key = src+dport
[class web6]
match = tcp dport 443-444 src 2001:db8::/32
interval = 1s
key = src+dst
[class vl]
match = vlan 7 udp sport 5000
interval = 2s
[class icmp]
match = icmp
action = drop
[class lan]
match = src 10.0.0.0/8
action = pass
[exempt]
src = 192.0.2.0/24, 2001:db8:1::/48
[deny]
src = 203.0.113.0/24
CONF
"$CONV" "$WORK/all.conf" --iface "$IF_RX" >"$WORK/all.nft"
check "every match word, key and action converts" test $? -eq 0
rx nft -f "$WORK/all.nft"
check "... and nft loads the ruleset" test $? -eq 0
rx nft list chain netdev xdp_pacer_cmp ingress >"$WORK/list" 2>&1
check "... the lists first, then a jump per class in order" \
	test "$(grep -cE 'saddr @(exempt|deny)[46]|jump c[0-9]' "$WORK/list")" = 9
rx nft delete table netdev xdp_pacer_cmp

# Traffic: one class `udp`, one packet per second per source, on the veth
# (a bare XDP_PASS program delivers the frames, as in the benchmark).
printf 'interval = 1s\n[class last]\nmatch = udp\ninterval = 1s\n' >"$WORK/one.conf"
"$CONV" "$WORK/one.conf" --iface "$IF_RX" --counters >"$WORK/one.nft" && rx nft -f "$WORK/one.nft"
check "a one-class ruleset loads" test $? -eq 0
rx ip link set dev "$IF_RX" xdp obj "$BUILD/bench_pass.bpf.o" sec xdp
# --counters: the class's drops and accepts.
mac=$(rx ip -o link show "$IF_RX" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
tx "$BUILD/tests/tools/send_frames" --iface "$IF_TX" --dst-mac "$mac" --src-base 10.9.0.1 --dst 10.9.9.9 --per-source 8 >/dev/null
sleep 0.3
counts=$(rx nft list chain netdev xdp_pacer_cmp c0_last | grep -o 'counter packets [0-9]*' | awk '{ printf "%s ", $3 }')
check "nftables on the same policy: 8 frames from one source: IPv4 7 dropped, IPv6 0, 1 accepted (counters: $counts)" \
	test "$counts" = "7 0 1 "
rx ip link set dev "$IF_RX" xdp off

refused() { # description, config text, expected words in the error
	printf '%b' "$2" >"$WORK/bad.conf"
	"$CONV" "$WORK/bad.conf" --iface "$IF_RX" >/dev/null 2>"$WORK/err"
	local rc=$?
	check "$1 (exit $rc: $(cat "$WORK/err"))" test "$rc" = 1 -a -n "$(grep -F "$3" "$WORK/err")"
}
refused "policy quiet is refused, naming the line" 'interval = 1s\npolicy = quiet\n' "bad.conf:2: policy quiet"
refused "observe mode is refused" '[class a]\nmatch = udp\ninterval = 1s\nmode = observe\n' "bad.conf:4: observe mode"
refused "a rate with no whole nftables unit is refused" '[class a]\nmatch = udp\nrate = 3/1300ms\n' "bad.conf:3:"
refused "an unknown match word is refused" '[class a]\nmatch = udp dport 53 bogus\ninterval = 1s\n' "unknown match word 'bogus'"
refused "overlapping exempt and deny prefixes are refused" '[exempt]\nsrc = 10.0.0.0/8\n[deny]\nsrc = 10.1.0.0/16\n' "overlap"
finish
