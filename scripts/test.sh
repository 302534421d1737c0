#!/usr/bin/env bash
# Run every test on this machine: install what is missing (as root), build,
# then unit, BPF_PROG_TEST_RUN and veth/namespace integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
make -j"$(nproc)" all
BUILD=${BUILD:-build} tests/run.sh "${1:-all}"
