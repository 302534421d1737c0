#!/usr/bin/env bash
# The limiter beside nftables on the same policy: for 0 (the global limit
# alone), 1, 8, 32 and 256 classes, a configuration file whose traffic
# (UDP to port 9) fits only the last class (N - 1 classes `udp dport
# 1000+i`, then `udp`, each one packet per second per source), loaded by
# `xdp-pacer load --config` and, converted by scripts/nft-from-config.py,
# by nft as a netdev ingress chain (a jump per class, a dynamic set with a
# per-element limit in the class's chain).  A spoofed flood (a random
# source per packet) or 1M Zipf sources from `xdp-pacer gen` on a veth
# pair; the packets the receiver handled per second, counted by the XDP
# program's run count (the limiter's; for nftables, a bare XDP_PASS
# program's, build/bench_pass.bpf.o, so that the veth delivers by the same
# path and the count is the same). Rounds interleave the two, alternating
# which goes first; the table gives medians and the median of the
# per-round ratios.
#
#   sudo scripts/bench-nft.sh [--classes "0 1 8 32 256"] [--rounds 5] [--seconds 1]
#                             [--workloads spoofed,zipf-1m] [--out FILE.md]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pair_lib.sh
BUILD=${BUILD:-build}
classes="0 1 8 32 256" rounds=5 seconds=1 workloads=spoofed,zipf-1m out=
while [ $# -gt 0 ]; do
	case "$1" in
	--classes) classes=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench-nft.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-nft.sh: needs root" >&2; exit 1; }
scripts/deps.sh >&2
command -v nft >/dev/null || { echo "bench-nft.sh: nft not found (scripts/deps.sh installs nftables)" >&2; exit 1; }
make -s >&2
CLI=$PWD/$BUILD/xdp-pacer

ns_rx=xpn-rx-$$ ns_tx=xpn-tx-$$ if_rx=xpnr$$ if_tx=xpnt$$
work=$(mktemp -d)
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() { # the nft table goes with its namespace
	pacer_ns_remove "$ns_rx" "$if_rx" "$CLI"
	ip netns del "$ns_tx" 2>/dev/null || true
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	rm -rf "$work"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1
pair_make "$ns_rx" "$if_rx" "$ns_tx" "$if_tx"
mac=$(ip -n "$ns_rx" -j link show "$if_rx" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')

config() { # N: the configuration file with N classes, the traffic fitting the last
	local n=$1 i f=$work/classes$1.conf
	echo "interval = 1s" >"$f"
	for ((i = 0; i < n - 1; i++)); do
		printf '[class p%d]\nmatch = udp dport %d\ninterval = 1s\n' "$i" $((1000 + i)) >>"$f"
	done
	[ "$n" -gt 0 ] && printf '[class last]\nmatch = udp\ninterval = 1s\n' >>"$f"
	echo "$f"
}
prog_id() { ip -n "$ns_rx" -j link show "$if_rx" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["xdp"]["prog"]["id"])'; }
run_cnt() { bpftool prog show id "$1" -j | python3 -c 'import json,sys; print(json.load(sys.stdin).get("run_cnt", 0))'; }
attach() { # pacer|nft config
	if [ "$1" = pacer ]; then
		nsenter --net="/run/netns/$ns_rx" "$CLI" load "$if_rx" --config "$2" --placement shared >/dev/null
	else
		ip -n "$ns_rx" link set dev "$if_rx" xdp obj "$BUILD/bench_pass.bpf.o" sec xdp
		scripts/nft-from-config.py "$2" --iface "$if_rx" >"$work/rules.nft"
		ip netns exec "$ns_rx" nft -f "$work/rules.nft"
	fi
}
detach() {
	if [ "$1" = pacer ]; then
		nsenter --net="/run/netns/$ns_rx" "$CLI" unload "$if_rx" >/dev/null
	else
		ip netns exec "$ns_rx" nft delete table netdev xdp_pacer_cmp
		ip -n "$ns_rx" link set dev "$if_rx" xdp off
	fi
}
gen_args() { # workload
	case "$1" in
	spoofed) echo "--dist spoofed" ;;
	zipf-1m) echo "--dist zipf --sources 1000000 --zipf 1.0 --src-base 10.64.0.0" ;;
	*) echo "bench-nft.sh: unknown workload '$1' (spoofed, zipf-1m)" >&2; exit 2 ;;
	esac
}
measure() { # system config workload: packets per second the receiver handled
	local id c0 c1 t0 t1
	attach "$1" "$2"
	id=$(prog_id)
	# shellcheck disable=SC2046 # the workload's words
	nsenter --net="/run/netns/$ns_tx" "$CLI" gen "$if_tx" $(gen_args "$3") --dst-mac "$mac" \
		--duration 200ms >/dev/null # warm: the sets and the sketch see traffic first
	c0=$(run_cnt "$id"); t0=$(date +%s%N)
	# shellcheck disable=SC2046
	nsenter --net="/run/netns/$ns_tx" "$CLI" gen "$if_tx" $(gen_args "$3") --dst-mac "$mac" \
		--duration "${seconds}s" >/dev/null
	c1=$(run_cnt "$id"); t1=$(date +%s%N)
	detach "$1"
	echo $(((c1 - c0) * 1000000000 / (t1 - t0)))
}

echo "# $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of ${seconds} s" >&2
printf '| workload | classes | xdp-pacer Mpps | nftables Mpps | xdp-pacer / nftables |\n|---|---:|---:|---:|---:|\n' >"$work/table"
for wl in ${workloads//,/ }; do
	for n in $classes; do
		f=$(config "$n")
		: >"$work/p" && : >"$work/n" && : >"$work/r"
		for ((r = 0; r < rounds; r++)); do
			if ((r % 2)); then order="nft pacer"; else order="pacer nft"; fi
			for sys in $order; do
				v=$(measure "$sys" "$f" "$wl")
				if [ "$sys" = pacer ]; then p=$v; else q=$v; fi
			done
			echo "$p" >>"$work/p"; echo "$q" >>"$work/n"
			python3 -c "print($p / max($q, 1))" >>"$work/r"
			echo "  $wl, $n classes, round $((r + 1)): xdp-pacer $p/s, nftables $q/s" >&2
		done
		python3 - "$wl" "$n" "$work/p" "$work/n" "$work/r" >>"$work/table" <<'PY'
import statistics, sys
wl, n, p, q, r = sys.argv[1:6]
vals = [[float(x) for x in open(f)] for f in (p, q, r)]
mp, mq, mr = (statistics.median(v) for v in vals)
print(f"| {wl} | {n if n != '0' else 'none (global limit)'} | {mp / 1e6:.2f} | {mq / 1e6:.2f} | "
      f"{mr:.2f}x [{min(vals[2]):.2f}, {max(vals[2]):.2f}] |")
PY
	done
done
cat "$work/table"
[ -n "$out" ] && cp "$work/table" "$out"
exit 0
