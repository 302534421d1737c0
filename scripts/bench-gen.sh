#!/usr/bin/env bash
# The generator's engines beside netsniff-ng's trafgen: each sends COUNT
# spoofed IPv4 frames (64 bytes, a random source each, the header checksum
# per frame) from one CPU into a veth pair whose peer runs the limiter
# (`xdp-pacer load`, its defaults); the same CPU receives (veth delivers on
# the sender's).  Rounds interleave the senders; the table gives each one's
# median rate, its median per-round ratio to trafgen, and whether the
# limiter's ipv4 counter grew by exactly what the sender said it sent.
#
# Frames go to a MAC that is not the receiver's (02:00:00:00:00:02): what
# the limiter passes, the receiving stack drops on arrival (PACKET_OTHERHOST),
# so the rate is the sender's, the veth's and the limiter's work.  With
# --to-stack they go to the broadcast MAC instead and every passed frame
# is routed by the receiving namespace too (gen's default), which then
# takes most of the CPU.
#
#   sudo scripts/bench-gen.sh [--rounds 3] [--count 1000000]
#                             [--engines auto|LIST] [--to-stack] [--json FILE]
# LIST: of live, xsk, packet; auto (default): those that work here (live
# is left out, saying why, where the kernel refuses live frames).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pair_lib.sh
BUILD=${BUILD:-build}
rounds=3 count=1000000 engines=auto to_stack=0 json=
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--engines) engines=$2; shift 2 ;;
	--to-stack) to_stack=1; shift ;;
	--json) json=$2; shift 2 ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench-gen.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
case "$rounds$count" in *[!0-9]*) echo "bench-gen.sh: --rounds and --count take whole numbers" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "bench-gen.sh: needs root (namespaces, XDP)" >&2; exit 1; }
scripts/deps.sh >&2
command -v trafgen >/dev/null || { echo "bench-gen.sh: trafgen not found (scripts/deps.sh installs netsniff-ng)" >&2; exit 1; }
make -s BUILD="$BUILD" cli >&2
CLI=$PWD/$BUILD/xdp-pacer

ns_rx=xpg-rx-$$ ns_tx=xpg-tx-$$ if_rx=xpgr$$ if_tx=xpgt$$
work=$(mktemp -d)
cleanup() {
	pacer_ns_remove "$ns_rx" "$if_rx" "$CLI"
	ip netns del "$ns_tx" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
pair_make "$ns_rx" "$if_rx" "$ns_tx" "$if_tx"
rx() { nsenter --net="/run/netns/$ns_rx" "$@"; }
tx() { nsenter --net="/run/netns/$ns_tx" "$@"; }
rx "$CLI" load "$if_rx" >"$work/load.out"
dmac=02:00:00:00:00:02
[ "$to_stack" = 1 ] && dmac=ff:ff:ff:ff:ff:ff
smac=$(ip -n "$ns_tx" -j link show "$if_tx" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')

# trafgen's frame: gen's (Ethernet, IPv4 with DF and TTL 64, UDP 40000 -> 9,
# 22 zero bytes), the source random in 128.0.0.0/8..191.0.0.0/8 as gen's
# spoofed ones are in 128.0.0.0/2, the IPv4 header checksum per frame.
hexmac() { echo "0x${1//:/, 0x}"; }
cat >"$work/trafgen.cfg" <<EOF
{
  $(hexmac "$dmac"), $(hexmac "$smac"), 0x08, 0x00,
  0x45, 0x00, 0x00, 0x32, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, csumip(14, 33),
  dinc(128, 191), drnd(3), 10, 255, 0, 1,
  0x9c, 0x40, 0x00, 0x09, 0x00, 0x1e, 0x00, 0x00,
  fill(0x00, 22)
}
EOF

ipv4() { rx "$CLI" stats "$if_rx" --json | grep -o '"ipv4":[0-9]*' | head -1 | cut -d: -f2; }

# Which engines: those asked for; with auto, every one gen can open here.
if [ "$engines" = auto ]; then
	engines=
	for e in live xsk packet; do
		if tx taskset -c 0 "$CLI" gen "$if_tx" --engine "$e" --count 1 --dst-mac "$dmac" >/dev/null 2>"$work/probe.err"; then
			engines="$engines${engines:+,}$e"
		else
			echo "bench-gen: engine $e left out: $(head -1 "$work/probe.err")" >&2
		fi
	done
fi
IFS=, read -r -a engine_list <<<"$engines"

echo "bench-gen: $(uname -r), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)); $count frames a run, $rounds rounds, frames to $dmac" >&2
# One run: "sender round pps sent delivered" on $work/runs.
run_gen() { # engine round
	local before after out
	before=$(ipv4)
	out=$(tx taskset -c 0 "$CLI" gen "$if_tx" --engine "$1" --dist spoofed --count "$count" \
		--dst-mac "$dmac" --json 2>/dev/null)
	after=$(ipv4)
	python3 -c 'import json, sys; g = json.loads(sys.argv[1]); print(sys.argv[2], sys.argv[3], round(g["pps"]), g["sent"], sys.argv[4])' \
		"$out" "$1" "$2" "$((after - before))" >>"$work/runs"
}
run_trafgen() { # round
	local before after out secs
	before=$(ipv4)
	out=$(tx timeout 120 taskset -c 0 trafgen --dev "$if_tx" --conf "$work/trafgen.cfg" --cpus 1 -n "$count" 2>&1)
	after=$(ipv4)
	# "    1 sec, 338961 usec on CPU0 (1000000 packets)": its time sending.
	secs=$(tr '\r' '\n' <<<"$out" | sed -n 's/^ *\([0-9]*\) sec, \([0-9]*\) usec on CPU0.*/\1 \2/p' | awk '{ printf "%.6f", $1 + $2 / 1e6 }')
	[ -n "$secs" ] || { echo "bench-gen: trafgen said: $out" >&2; return 1; }
	echo "trafgen $1 $(awk -v n="$count" -v s="$secs" 'BEGIN { printf "%d", n / s }') $count $((after - before))" >>"$work/runs"
}
: >"$work/runs"
for r in $(seq "$rounds"); do
	# Interleaved, each round in another order: no sender always goes first.
	senders=("${engine_list[@]}" trafgen)
	shift_by=$(((r - 1) % ${#senders[@]}))
	for i in $(seq 0 $((${#senders[@]} - 1))); do
		s=${senders[$(((i + shift_by) % ${#senders[@]}))]}
		if [ "$s" = trafgen ]; then run_trafgen "$r"; else run_gen "$s" "$r"; fi
	done
done

python3 - "$work/runs" "$json" "$count" "$dmac" <<'EOF'
import json, statistics, sys
runs, out, count, dmac = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = [l.split() for l in open(runs)]
by = {}
for s, r, pps, sent, got in rows:
    by.setdefault(s, {})[int(r)] = (int(pps), int(sent), int(got))
tg = by.get("trafgen", {})
print(f"| sender | Mpps, median of {len(tg)} | runs (Mpps) | x trafgen, median | limiter's ipv4 = sent |")
print("|---|---:|---|---:|---|")
result = {}
for s, rr in by.items():
    pps = [v[0] for v in rr.values()]
    ratios = [rr[r][0] / tg[r][0] for r in rr if r in tg and tg[r][0]]
    exact = all(v[1] == v[2] for v in rr.values())
    med = statistics.median(pps)
    ratio = statistics.median(ratios) if s != "trafgen" else 1.0
    result[s] = {"mpps": med / 1e6, "runs": [p / 1e6 for p in pps], "x_trafgen": ratio,
                 "delivered_equals_sent": exact,
                 "sent": [v[1] for v in rr.values()], "delivered": [v[2] for v in rr.values()]}
    name = f"`gen --engine {s}`" if s != "trafgen" else "trafgen --cpus 1"
    print(f"| {name} | {med / 1e6:.2f} | {', '.join(f'{p / 1e6:.2f}' for p in pps)} | "
          f"{ratio:.2f} | {'yes' if exact else 'NO: ' + str([v[1:] for v in rr.values()])} |")
if out:
    json.dump({"count": count, "dst_mac": dmac, "senders": result}, open(out, "w"), indent=1)
EOF
