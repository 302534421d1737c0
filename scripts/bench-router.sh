#!/usr/bin/env bash
# The limiter's cost per packet on a router's ingress, beside the same
# limiter on a host: three namespaces (a client, a router with IPv4
# forwarding and the limiter on its ingress veth, loaded with its
# defaults, and a server), `xdp-pacer gen` flooding the router's ingress
# from the client on one CPU (the CPU that receives: veth delivers on the
# sender's).  Two targets: `router`, frames to the server's address, which
# the router forwards (to a next hop whose MAC no one has, so that the
# server drops them on arrival, as a benchmark's sink would); `host`,
# frames to the router's own address, which its stack delivers locally (a
# closed UDP port).  Two workloads: `spoofed` (a new source per frame: the
# limiter passes nearly every frame on to the stack) and `sources-1000`
# (1000 sources, one frame a second each passes: the limiter drops nearly
# all).  Its ns/packet: the program's run_time_ns over its run_cnt
# (kernel.bpf_stats_enabled=1 for the run, restored after; a run whose
# run_cnt is not the limiter's own `seen` count, as when another program
# switched the statistics off meanwhile, is run again).  Rounds interleave
# the four, each round in another order; the table gives medians, and
# ns/packet compare only within one run.  A new source costs the sketch
# more the fuller it is, and a flood fills it as fast as each target lets
# the sender go: --pps sends both at one rate instead (one both sustain).
#
#   sudo scripts/bench-router.sh [--rounds 5] [--seconds 2] [--engine auto|xsk|packet|live]
#                                [--workloads spoofed,sources-1000] [--pps N] [--out FILE.md]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pair_lib.sh
BUILD=${BUILD:-build}
rounds=5 seconds=2 engine=auto workloads=spoofed,sources-1000 pps= out=
cmdline="sudo scripts/bench-router.sh $*"
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--engine) engine=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--pps) pps=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench-router.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
case "$rounds" in '' | *[!0-9]* | 0) echo "bench-router.sh: invalid value '$rounds' for --rounds: a whole number >= 1" >&2; exit 2 ;; esac
case "$pps" in *[!0-9]* | 0) echo "bench-router.sh: invalid value '$pps' for --pps: a whole number >= 1" >&2; exit 2 ;; esac
case "$seconds" in '' | *[!0-9.]* | *.*.*) echo "bench-router.sh: invalid value '$seconds' for --seconds: seconds" >&2; exit 2 ;; esac
for wl in ${workloads//,/ }; do
	case "$wl" in spoofed | sources-1000) ;; *) echo "bench-router.sh: unknown workload '$wl' (spoofed, sources-1000)" >&2; exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-router.sh: needs root (namespaces, XDP)" >&2; exit 1; }
scripts/deps.sh >&2
make -s BUILD="$BUILD" cli >&2
CLI=$PWD/$BUILD/xdp-pacer

ns_c=xpr-c-$$ ns_r=xpr-r-$$ ns_s=xpr-s-$$
if_c=xprc$$ if_r=xprr$$ if_r1=xpro$$ if_s=xprs$$
work=$(mktemp -d)
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	pacer_ns_remove "$ns_r" "$if_r" "$CLI"
	ip netns del "$ns_c" 2>/dev/null || true
	ip netns del "$ns_s" 2>/dev/null || true
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# client (192.0.2.2) -- (192.0.2.1) router (198.51.100.1) -- server (198.51.100.2)
pair_make "$ns_r" "$if_r" "$ns_c" "$if_c"
ip netns add "$ns_s"
ip link add "$if_r1" netns "$ns_r" type veth peer name "$if_s" netns "$ns_s"
ip -n "$ns_r" link set "$if_r1" up
ip -n "$ns_s" link set "$if_s" up
ip netns exec "$ns_r" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf."$if_r".rp_filter=0
ip -n "$ns_r" addr add 192.0.2.1/24 dev "$if_r"
ip -n "$ns_r" addr add 198.51.100.1/24 dev "$if_r1"
ip -n "$ns_s" addr add 198.51.100.2/24 dev "$if_s"
ip -n "$ns_c" addr add 192.0.2.2/24 dev "$if_c"
# The next hop's MAC is no one's: the server's stack drops the forwarded
# frames on arrival, at the cost of a sink, not of a receiver.
ip -n "$ns_r" neigh add 198.51.100.2 lladdr 02:00:00:00:00:66 dev "$if_r1" nud permanent
mac=$(ip -n "$ns_r" -j link show "$if_r" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
nsenter --net="/run/netns/$ns_r" "$CLI" load "$if_r" >"$work/load.out"
prog=$(ip -n "$ns_r" -j link show "$if_r" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["xdp"]["prog"]["id"])')

gen_args() { # workload target
	case "$1" in
	spoofed) echo "--dist spoofed" ;;
	sources-1000) echo "--dist uniform --sources 1000 --src-base 10.64.0.0" ;;
	esac
	case "$2" in
	router) echo "--dst 198.51.100.2" ;;
	host) echo "--dst 192.0.2.1" ;;
	esac
	[ -z "$pps" ] || echo "--pps $pps"
}
# counters: "run_cnt run_time_ns seen passed stack", stack being what the
# router's stack forwarded (IpForwDatagrams) or delivered (IpInDelivers).
counters() { # target
	local key=IpForwDatagrams p s n
	[ "$1" = host ] && key=IpInDelivers
	p=$(bpftool prog show id "$prog" -j)
	s=$(nsenter --net="/run/netns/$ns_r" "$CLI" stats "$if_r" --json)
	n=$(nsenter --net="/run/netns/$ns_r" nstat -asz "$key" | awk -v k="$key" '$1 == k { print $2 }')
	python3 -c '
import json, sys
p, s = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(p.get("run_cnt", 0), p.get("run_time_ns", 0), s["seen"], s["passed"], int(sys.argv[3]))' "$p" "$s" "${n:-0}"
}
# One run: "workload target ns_per_packet mpps passed_share stack_share" onto $work/runs.
measure() { # workload target round
	local try a b g
	for try in 1 2 3; do
		sysctl -qw kernel.bpf_stats_enabled=1
		a=$(counters "$2")
		# shellcheck disable=SC2046 # the workload's words
		g=$(nsenter --net="/run/netns/$ns_c" taskset -c 0 "$CLI" gen "$if_c" --engine "$engine" \
			$(gen_args "$1" "$2") --dst-mac "$mac" --duration "${seconds}s" --json 2>/dev/null)
		b=$(counters "$2")
		if python3 - "$1" "$2" "$3" "$a" "$b" "$g" >>"$work/runs" <<'PY'; then return 0; fi
import json, sys
wl, target, rnd = sys.argv[1:4]
a, b = [list(map(int, x.split())) for x in sys.argv[4:6]]
g = json.loads(sys.argv[6])
cnt, ns, seen, passed, stack = (y - x for x, y in zip(a, b))
if cnt != seen or cnt <= 0:  # the statistics were off for part of the run
    sys.exit(1)
print(wl, target, rnd, f"{ns / cnt:.2f}", f"{seen / g['seconds'] / 1e6:.3f}",
      f"{passed / seen:.4f}", f"{stack / seen:.4f}", g["engine"], g["engine_mode"])
PY
		echo "bench-router: $1 to the $2, round $3: run_cnt did not match the limiter's seen (statistics switched off meanwhile?); again" >&2
	done
	echo "bench-router: $1 to the $2, round $3: no run with statistics on throughout" >&2
	return 1
}

echo "bench-router: $(uname -r), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of ${seconds} s${pps:+ at $pps frames/s}" >&2
sed 's/^/  /' "$work/load.out" >&2
# Warm: the sketch and the route see traffic first.
nsenter --net="/run/netns/$ns_c" taskset -c 0 "$CLI" gen "$if_c" --engine "$engine" --dist spoofed \
	--dst 198.51.100.2 --dst-mac "$mac" --duration 300ms >/dev/null 2>&1
: >"$work/runs"
configs=()
for wl in ${workloads//,/ }; do configs+=("$wl router" "$wl host"); done
for ((r = 1; r <= rounds; r++)); do
	for ((i = 0; i < ${#configs[@]}; i++)); do
		c=${configs[$(((i + r - 1) % ${#configs[@]}))]}
		# shellcheck disable=SC2086 # "workload target"
		if measure $c "$r"; then echo "  round $r: $(tail -1 "$work/runs")" >&2; fi
	done
done

python3 - "$work/runs" "$cmdline" <<'PY' | tee "$work/table"
import statistics, sys
runs, cmd = sys.argv[1], sys.argv[2]
rows = [l.split() for l in open(runs)]
by, ns_of = {}, {}
for wl, target, rnd, ns, mpps, passed, stack, *_ in rows:
    by.setdefault((wl, target), []).append((float(ns), float(mpps), float(passed), float(stack)))
    ns_of[(wl, target, rnd)] = float(ns)
engines = sorted({f"{r[7]} ({' '.join(r[8:])})" for r in rows})
n = max(len(v) for v in by.values())
print(f"    {cmd}\n")
print(f"Frames: `xdp-pacer gen`, engine {', '.join(engines)}, one CPU; medians of {n} rounds.\n")
print("| workload | frames to | limiter ns/packet, median [min, max] | router / host, median of the rounds' ratios [min, max] "
      "| frames handled, Mpps | passed by the limiter | forwarded / delivered by the stack |")
print("|---|---|---:|---:|---:|---:|---:|")
for (wl, target), v in by.items():
    ns = [x[0] for x in v]
    med = lambda i: statistics.median(x[i] for x in v)
    where = "the server (forwarded)" if target == "router" else "the router itself (delivered)"
    ratios = [ns_of[k] / ns_of[(wl, "host", k[2])] for k in ns_of
              if k[0] == wl and k[1] == "router" and (wl, "host", k[2]) in ns_of]
    ratio = (f"{statistics.median(ratios):.2f} [{min(ratios):.2f}, {max(ratios):.2f}]"
             if target == "router" and ratios else "")
    print(f"| {wl} | {where} | {statistics.median(ns):.1f} [{min(ns):.1f}, {max(ns):.1f}] | {ratio} | {med(1):.2f} | "
          f"{100 * med(2):.1f} % | {100 * med(3):.1f} % |")
PY
[ -n "$out" ] && cp "$work/table" "$out"
exit 0
