#!/usr/bin/env bash
# The benchmark (scripts/bench.py does the measuring): every program on every
# workload in one run, on a veth pair between two namespaces made here, then
# a table on stdout, build/bench/results.json and, from it, SVG charts beside
# it: the cost per program and the cost against sketch size (scripts/plot-bench.sh).
#   scripts/bench.sh [--quick] [--seconds S] [--reps N] [--threads N] [--no-sweep]
#                    [--no-placement | --placement-only]
#                    [--programs A,B] [--workloads X,Y] [--perf-only] [--paced]
#                    [--compare-cli PATH] [--out FILE]
#   scripts/bench.sh --cpus LIST [...]   # the multi-core rows: scripts/bench-multicore.sh
# This script owns clean-up: whatever happens to the run (error, Ctrl-C,
# kill), the trap deletes the namespaces and pins it made and puts
# kernel.bpf_stats_enabled back if the run had to change it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pair_lib.sh
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (namespaces, XDP, BPF statistics)" >&2
	exit 1
fi
BUILD=${BUILD:-build}
export BUILD
export XPB_RUN=$$
XPB_STATE=$(mktemp -d /tmp/xpb-bench.XXXXXX)
export XPB_STATE
py_pid=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$py_pid" ]; then
		kill -TERM "$py_pid" 2>/dev/null || true
		wait "$py_pid" 2>/dev/null || true
	fi
	# bench.py records the old value here only if it had to use the sysctl
	if [ -s "$XPB_STATE/sysctl" ]; then
		sysctl -qw kernel.bpf_stats_enabled="$(cat "$XPB_STATE/sysctl")" || true
	fi
	xpb_remove_pair "$XPB_RUN" "$BUILD/xdp-pacer"
	rm -rf "/sys/fs/bpf/xpb-floor-$XPB_RUN" "/sys/fs/bpf/xpb-lists-$XPB_RUN" "$XPB_STATE"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

scripts/deps.sh
make -s -j"$(nproc)" BUILD="$BUILD" bpf cli "$BUILD/tests/tools/svg_plot" "$BUILD/tests/tools/classes_fill"
for arg in "$@"; do
	case $arg in --cpus | --cpus=*)
		scripts/bench-multicore.sh "$@"
		exit $? ;;
	esac
done
out=$BUILD/bench/results.json
prev=
for arg in "$@"; do
	[ "$prev" = --out ] && out=$arg
	case $arg in --out=*) out=${arg#--out=} ;; esac
	prev=$arg
done
python3 "${BENCH_PY:-scripts/bench.py}" "$@" &
py_pid=$!
wait "$py_pid"
rc=$?
py_pid=
# The cost chart is the main benchmark's (bench-rate.sh and bench-budget.sh
# run other measurements through this script).
if [ "$rc" -eq 0 ] && [ -z "${BENCH_PY:-}" ] && python3 -c 'import json, sys; sys.exit(not json.load(open(sys.argv[1]))["perf"])' "$out" 2>/dev/null; then
	scripts/plot-bench.sh "$out" "${out%.json}-cost.svg" "${out%.json}-sweep.svg" | sed 's/^/SVG: /' ||
		echo "bench: the results are in $out, but the charts were not drawn (see above)" >&2
fi
exit "$rc"
