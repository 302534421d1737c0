#!/usr/bin/env bash
# The benchmark (see scripts/bench.py): build, then run every program on
# every workload in one go, printing a table and writing build/bench/results.json.
#   scripts/bench.sh [--quick] [--seconds S]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (namespaces, XDP, BPF statistics)" >&2
	exit 1
fi
scripts/deps.sh
make -s -j"$(nproc)" all
BUILD=${BUILD:-build} exec python3 scripts/bench.py "$@"
