#!/usr/bin/env bash
# The dense table's accuracy on the datapath at ten million sources: load
# the limiter on a veth pair between two namespaces made here, send every
# one of SOURCES sources round and round with `xdp-pacer gen --dist
# uniform` (each source once per SOURCES packets, so with the generator
# fast enough every source holds an entry within one interval), record the
# verdicts of a sample of the sources, and audit them with `analyze`:
# false passes (must be 0 in one-sided mode) and false drops.
#
#   scripts/bench-dense10m.sh [--sources N] [--width ENTRIES] [--interval DUR]
#                             [--seconds S] [--on-full drop|evict-oldest]
#                             [--policy pace|quiet] [--sample 1/N] [--backend NAME]
#                             [--pps PPS] [--out DIR]
#
# Defaults: 10 000 000 sources, the dense table of 11 250 000 entries
# (468 750 lines, 30 000 000 bytes: 3.0 B/source), a 30 s interval,
# 75 s of traffic, one-sided, pace, sources sampled 1/64, the generator
# as fast as it goes (--pps: that rate instead).  Prints the
# figures and writes DIR/summary.json (DIR: build/bench/dense10m).
# The trap removes the namespaces, pins and the recording's temporary
# whatever happens to the run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pair_lib.sh
BUILD=${BUILD:-build}
CLI=${CLI:-$BUILD/xdp-pacer}
sources=10000000 width=11250000 interval=30s seconds=75 on_full=drop policy=pace
sample=1/64 backend=dense pps= out=$BUILD/bench/dense10m
usage() {
	sed -n '10,13p' "$0" | sed 's/^# //' >&2
	exit 2
}
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case $1 in
	--sources) sources=$2 ;;
	--width) width=$2 ;;
	--interval) interval=$2 ;;
	--seconds) seconds=$2 ;;
	--on-full) on_full=$2 ;;
	--policy) policy=$2 ;;
	--sample) sample=$2 ;;
	--backend) backend=$2 ;;
	--pps) pps=$2 ;;
	--out) out=$2 ;;
	*) usage ;;
	esac
	shift 2
done
if [ "$(id -u)" -ne 0 ]; then
	echo "bench-dense10m: needs root (namespaces, XDP)" >&2
	exit 1
fi
run=$$
NS_RX=xdm-rx-$run NS_TX=xdm-tx-$run IF_RX=xdmr$run IF_TX=xdmt$run
IF_RX=${IF_RX:0:15} IF_TX=${IF_TX:0:15}
rec_pid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$rec_pid" ]; then
		kill -TERM "$rec_pid" 2>/dev/null || true
		wait "$rec_pid" 2>/dev/null || true
	fi
	pacer_ns_remove "$NS_RX" "$IF_RX" "$CLI"
	ip netns del "$NS_TX" 2>/dev/null || true
	rm -f "$out/rec.xpr.tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
rx() { nsenter --net="/run/netns/$NS_RX" "$@"; }
tx() { nsenter --net="/run/netns/$NS_TX" "$@"; }

mkdir -p "$out"
rm -f "$out/rec.xpr" "$out/rec.xpr.tmp"
ip netns add "$NS_RX"
ip netns add "$NS_TX"
ip link add "$IF_RX" netns "$NS_RX" type veth peer name "$IF_TX" netns "$NS_TX"
for ns in "$NS_RX" "$NS_TX"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$ns" link set lo up
done
ip -n "$NS_RX" link set "$IF_RX" up
ip -n "$NS_TX" link set "$IF_TX" up
rx_mac=$(ip -n "$NS_RX" -o link show "$IF_RX" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')

load_args=(--backend "$backend" --width "$width" --interval "$interval" --policy "$policy"
	--placement shared)
[ "$backend" = sketch ] || load_args+=(--on-full "$on_full")
echo "load $IF_RX ${load_args[*]}"
rx "$CLI" load "$IF_RX" "${load_args[@]}" | sed 's/^/  /'

# The recording starts first and stops a little after the traffic.
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$out/rec.xpr" \
	--sample-sources "$sample" --duration "$((seconds + 2))s" >"$out/record.out" 2>&1 &
rec_pid=$!
sleep 1
echo "gen --dist uniform --sources $sources --duration ${seconds}s${pps:+ --pps $pps}"
gen_args=(--dist uniform --sources "$sources" --duration "${seconds}s" --dst-mac "$rx_mac" --json)
[ -z "$pps" ] || gen_args+=(--pps "$pps")
tx "$CLI" gen "$IF_TX" "${gen_args[@]}" >"$out/gen.json"
wait "$rec_pid" || { cat "$out/record.out" >&2; exit 1; }
rec_pid=
rx "$CLI" stats "$IF_RX" --json >"$out/stats.json"
rx "$CLI" status "$IF_RX" >"$out/status.txt"
"$CLI" analyze "$out/rec.xpr" --json >"$out/analyze.json"

python3 - "$out" "$sources" "$interval" <<'EOF'
import json, sys
out, sources, interval = sys.argv[1], int(sys.argv[2]), sys.argv[3]
g = json.load(open(f"{out}/gen.json"))
st = json.load(open(f"{out}/stats.json"))
a = json.load(open(f"{out}/analyze.json"))
au, lim = a["audit"], a["limiter"]
seen = st["seen"]
pps = seen / g["seconds"]
owed = au["owed_passes"]
s = {
    "sources": sources, "interval": interval, "seconds": g["seconds"],
    "backend": lim["backend"], "width": lim["width_cells"], "on_full": lim["on_full"],
    "policy": lim["policy"], "tick_ns": lim["tick_ns"], "thresh_ticks": lim["thresh_ticks"],
    "state_bytes": lim["sketch_bytes"], "bytes_per_source": lim["sketch_bytes"] / sources,
    "received": seen, "received_pps": pps, "cycle_s": sources / pps if pps else None,
    "passed": st["passed"], "dropped_recent": st["dropped_recent"],
    "table_full": st["table_full"], "table_evict": st["table_evict"],
    "table_race": st["table_race"], "map_error": st["map_error"],
    "sampled_packets": au["packets"], "sampled_sources": au["sources"],
    "owed_passes": owed, "false_drops": au["false_drops"],
    "false_drops_collision": au["false_drops_collision"],
    "false_drops_quantisation": au["false_drops_quantisation"],
    "collision_rate": au["false_drops_collision"] / owed if owed else None,
    "false_passes": au["false_passes"], "records_lost": a["recording"]["records_lost"],
}
json.dump(s, open(f"{out}/summary.json", "w"), indent=1)
print(f"{s['backend']} of {s['width']} entries, {s['state_bytes']} bytes: "
      f"{s['bytes_per_source']:.2f} B/source at {sources} sources; on full: {s['on_full']}, "
      f"policy {s['policy']}, interval {interval} ({s['thresh_ticks']} ticks of {s['tick_ns']} ns)")
if pps:
    print(f"received {seen} packets in {g['seconds']:.1f} s ({pps:.0f} pps): every source once per "
          f"{s['cycle_s']:.2f} s")
print(f"datapath: passed {s['passed']}, dropped_recent {s['dropped_recent']}, table_full "
      f"{s['table_full']}, table_evict {s['table_evict']}, table_race {s['table_race']}, "
      f"map_error {s['map_error']}")
print(f"audit of {s['sampled_sources']} sampled sources, {s['sampled_packets']} packets "
      f"({s['records_lost']} records lost): false passes {s['false_passes']}; of {owed} owed "
      f"passes, false drops {s['false_drops_collision']} by the structure "
      f"({100 * (s['collision_rate'] or 0):.3f} %) and {s['false_drops_quantisation']} by the "
      f"tick's rounding (by design)")
EOF
