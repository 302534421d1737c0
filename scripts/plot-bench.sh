#!/usr/bin/env bash
# The benchmark's cost per program as an SVG bar chart: ns per packet of
# every program on every workload of a scripts/bench.sh run (its
# results.json), drawn by tests/tools/svg_plot (the analysis report's SVG
# code).  scripts/bench.sh writes build/bench/results-cost.svg this way after
# each run; docs/img/bench-cost.svg is the run docs/benchmark.md shows.
#   scripts/plot-bench.sh [RESULTS.json [OUT.svg]]   # build/bench/results.json, docs/img/bench-cost.svg
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PLOT=$BUILD/tests/tools/svg_plot
in=${1:-$BUILD/bench/results.json}
out=${2:-docs/img/bench-cost.svg}
[ -x "$PLOT" ] || { echo "plot-bench: $PLOT is missing: run make all" >&2; exit 1; }
[ -f "$in" ] || { echo "plot-bench: no benchmark results at '$in': run scripts/bench.sh" >&2; exit 1; }
trap 'rm -f "$out.tmp"' EXIT
python3 - "$in" >"$out.tmp.rows" <<'PY' || { rm -f "$out.tmp.rows"; exit 1; }
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    perf = r["perf"]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"plot-bench: '{sys.argv[1]}' is not a benchmark results file: {e}")
if not perf:
    sys.exit(f"plot-bench: '{sys.argv[1]}' has no cost rows (a --placement-only or --no-perf run)")
for row in perf:
    print(f"{row['program']}\t{row['workload']}\t{row['ns_per_packet']:.3f}")
PY
m=$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["machine"]
print("%s, %s CPUs, kernel %s" % (m["cpu"], m["cpus"], m["kernel"]))' "$in")
"$PLOT" bars "Cost per packet ($m)" \
	"ns per packet (run_time_ns / run_cnt, median of the run's rounds)" <"$out.tmp.rows" >"$out.tmp" ||
	{ rm -f "$out.tmp.rows"; exit 1; }
rm -f "$out.tmp.rows"
mv "$out.tmp" "$out"
echo "$out"
