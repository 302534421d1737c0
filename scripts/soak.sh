#!/usr/bin/env bash
# Soak test (not in CI; scripts/soak.py does the work): the limiter under
# changing full-rate traffic, live `set` changes, record/analyze cycles and
# stats polling for --duration seconds (1800), then checks: 0 false passes
# by the referee, map memory and the CLI process's RSS flat, counters
# reconciled.  Exit 0 only if all held.  Does not take the benchmark lock:
# the generator runs under `nice -n 10`.
#   scripts/soak.sh [--duration SECONDS] [--segment S] [--set-every S] [--out FILE]
# This script owns clean-up (namespaces, pins, recordings), whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pair_lib.sh
if [ "$(id -u)" -ne 0 ]; then
	echo "soak: needs root (namespaces, XDP)" >&2
	exit 1
fi
BUILD=${BUILD:-build}
export BUILD
export XPB_RUN=$$
WORK=$(mktemp -d /tmp/xp-soak.XXXXXX)
py_pid=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$py_pid" ]; then
		kill -TERM "$py_pid" 2>/dev/null || true
		wait "$py_pid" 2>/dev/null || true
	fi
	xpb_remove_pair "$XPB_RUN" "$BUILD/xdp-pacer"
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

scripts/deps.sh
make -s -j"$(nproc)" BUILD="$BUILD" bpf cli
python3 scripts/soak.py --workdir "$WORK" "$@" &
py_pid=$!
wait "$py_pid"
rc=$?
py_pid=
exit "$rc"
