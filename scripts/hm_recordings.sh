#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The HistoricalMembership recordings of the Table 1 figures in docs/analysis.md, and
# `analyze --json` over them with one or more xdp-pacer builds, interleaved.
#
#   scripts/hm_recordings.sh [--dir DIR] [--reps N] [--eps E] [--live] [XDP_PACER ...]
#
# Writes DIR/spoofed.xpr (every source new, 100 000 items a second),
# DIR/zipf11.xpr and DIR/zipf13.xpr (Zipf 1.1 and 1.3 over 100 000 sources,
# 40 000 items a second), 300 000 items each (tests/tools/synth_record,
# deterministic), unless they are there already.  --live (root) records
# them instead as a user would: the generator's traffic (3 s at 100 000
# frames a second; Zipf over 40 000 sources) through the pacer (shared,
# 300 ms) on a veth pair in namespaces of its own, `record --sample-sources
# 1/1`; the pair is removed after.  Then runs each binary
# (default: build/xdp-pacer) REPS times
# per recording, binaries interleaved within each rep, and prints per binary
# and recording the median ns/item of HistoricalMembership and of the exact
# oracle, HM's memory and its ratio to the paper's bound for the stream's own
# distinct count.  Timings are only comparable within one run; take the
# machine's lock (flock /tmp/xdp-pacer-bench.lock) around it on a shared host.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$here/build}
dir=/tmp/hm-recordings
reps=5
eps=0.125
live=
bins=()

usage() { sed -n '4,22p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case $1 in
	--dir) dir=${2:?--dir needs a directory}; shift 2 ;;
	--reps) reps=${2:?--reps needs a count}; shift 2 ;;
	--eps) eps=${2:?--eps needs a value}; shift 2 ;;
	--live) live=1; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "hm_recordings.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) bins+=("$1"); shift ;;
	esac
done
case $reps in
''|*[!0-9]*|0) echo "hm_recordings.sh: --reps '$reps' is not a positive count" >&2; exit 2 ;;
esac
[ ${#bins[@]} -gt 0 ] || bins=("$build/xdp-pacer")
for b in "${bins[@]}"; do
	[ -x "$b" ] || { echo "hm_recordings.sh: '$b' is not an executable" >&2; exit 2; }
done
synth=$build/tests/tools/synth_record
cli=$build/xdp-pacer

mkdir -p "$dir"
make_rec() {
	[ -s "$dir/$1.xpr" ] || "$synth" "$dir/$1.xpr" "${@:2}"
}

ns_rx=hmr-rx-$$
ns_tx=hmr-tx-$$
if_rx=hmrr$$
if_tx=hmrt$$
remove_pair() {
	nsenter --net="/run/netns/$ns_rx" "$cli" unload "$if_rx" >/dev/null 2>&1 || true
	ip netns del "$ns_rx" 2>/dev/null || true
	ip netns del "$ns_tx" 2>/dev/null || true
}

# live_rec NAME GEN_ARGS...: record 3 s of the generator's traffic through the pacer.
live_rec() {
	local name=$1 rec_pid
	shift
	[ -s "$dir/$name.xpr" ] && return 0
	nsenter --net="/run/netns/$ns_rx" "$cli" record "$if_rx" -o "$dir/$name.xpr" \
		--sample-sources 1/1 --duration 4s >/dev/null &
	rec_pid=$!
	sleep 0.5
	nsenter --net="/run/netns/$ns_tx" "$cli" gen "$if_tx" --pps 100000 --duration 3s "$@" >/dev/null
	wait "$rec_pid"
	# A recording is a 256-byte header and then the records.
	if [ "$(stat -c %s "$dir/$name.xpr")" -le 256 ]; then
		echo "hm_recordings.sh: $dir/$name.xpr holds no records (the generator's frames did not reach the pacer)" >&2
		rm -f "$dir/$name.xpr"
		exit 1
	fi
}
# wait_up IFNAME NS: wait (up to 5 s) until the veth end has its carrier, so the
# first recording does not start before frames can cross.
wait_up() {
	local i
	for ((i = 0; i < 50; i++)); do
		ip -n "$2" -o link show "$1" | grep -q 'state UP' && return 0
		sleep 0.1
	done
	echo "hm_recordings.sh: $1 did not come up" >&2
	exit 1
}

if [ -n "$live" ]; then
	[ "$(id -u)" = 0 ] || { echo "hm_recordings.sh: --live needs root (namespaces, XDP)" >&2; exit 2; }
	[ -x "$cli" ] || { echo "hm_recordings.sh: $cli missing (make)" >&2; exit 2; }
	trap remove_pair EXIT
	ip netns add "$ns_rx" && ip netns add "$ns_tx" &&
		ip link add "$if_rx" netns "$ns_rx" type veth peer name "$if_tx" netns "$ns_tx" &&
		for ns in "$ns_rx" "$ns_tx"; do
			# No IPv6 chatter (router solicitations) in a recording of IPv4 sources.
			ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 &&
				ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 || exit 1
		done &&
		ip -n "$ns_rx" link set "$if_rx" up && ip -n "$ns_tx" link set "$if_tx" up ||
		{ echo "hm_recordings.sh: cannot create the veth pair" >&2; exit 1; }
	wait_up "$if_rx" "$ns_rx"
	wait_up "$if_tx" "$ns_tx"
	nsenter --net="/run/netns/$ns_rx" "$cli" load "$if_rx" --placement shared --interval 300ms >/dev/null
	live_rec spoofed --dist spoofed
	live_rec zipf11 --dist zipf --sources 40000 --zipf 1.1
	live_rec zipf13 --dist zipf --sources 40000 --zipf 1.3
	remove_pair
	trap - EXIT
else
	[ -x "$synth" ] || { echo "hm_recordings.sh: $synth missing (make unit-test builds it)" >&2; exit 2; }
	make_rec spoofed spoofed 300000 100000
	make_rec zipf11 zipf 300000 40000 100000 1.1
	make_rec zipf13 zipf 300000 40000 100000 1.3
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 0; r < reps; r++)); do
	for rec in spoofed zipf11 zipf13; do
		for i in "${!bins[@]}"; do
			"${bins[$i]}" analyze "$dir/$rec.xpr" --eps "$eps" --json >"$out/$i.$rec.$r.json"
		done
	done
done

python3 - "$out" "$reps" "${bins[@]}" <<'EOF'
import json, statistics, sys
out, reps, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("%-34s %-8s %10s %10s %7s %10s %10s %6s" %
      ("binary", "stream", "HM ns", "oracle ns", "ratio", "HM bytes", "bound B", "x bnd"))
for i, b in enumerate(bins):
    for rec in ("spoofed", "zipf11", "zipf13"):
        hm, ex, by, bound = [], [], 0, None
        for r in range(reps):
            t = json.load(open("%s/%d.%s.%d.json" % (out, i, rec, r)))["table1"]
            s = {x["name"]: x for x in t["structures"]}
            hm.append(s["HistoricalMembership"]["ns_per_item"])
            ex.append(s["exact oracle"]["ns_per_item"])
            by = s["HistoricalMembership"]["bytes"]
            bound = t["bound_bits"].get("historical_membership_distinct")
        h, e = statistics.median(hm), statistics.median(ex)
        print("%-34s %-8s %10.1f %10.1f %7.1f %10d %10s %6s" %
              (b[-34:], rec, h, e, h / e, by,
               "%.0f" % (bound / 8) if bound else "-",
               "%.2f" % (by * 8 / bound) if bound else "-"))
EOF
