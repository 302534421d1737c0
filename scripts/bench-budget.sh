#!/usr/bin/env bash
# The global budget's benchmark (scripts/bench_budget.py) under bench.sh's
# set-up and clean-up trap.  scripts/bench-budget.sh [--reps N] [--seconds S]
exec env BENCH_PY=scripts/bench_budget.py "$(dirname "$0")/bench.sh" "$@"
