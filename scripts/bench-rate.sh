#!/usr/bin/env bash
# The per-source rate's benchmark (scripts/bench_rate.py) under bench.sh's
# set-up and clean-up trap.  scripts/bench-rate.sh [--reps N] [--seconds S]
exec env BENCH_PY=scripts/bench_rate.py "$(dirname "$0")/bench.sh" "$@"
