#!/usr/bin/env bash
# The benchmark's plots, from the results.json of a scripts/bench.sh run,
# drawn by tests/tools/svg_plot (the analysis report's SVG code):
#   COST.svg   ns per packet of every program on every workload (bars);
#   SWEEP.svg  ns per packet against the sketch's size, per workload (the
#              sweep; only when the run has one, i.e. not --no-sweep/--quick).
# scripts/bench.sh draws both beside its results after each run;
# docs/img/bench-*.svg are the runs docs/benchmark.md shows.
#   scripts/plot-bench.sh [RESULTS.json [COST.svg [SWEEP.svg]]]
#       defaults: build/bench/results.json docs/img/bench-cost.svg docs/img/bench-sweep.svg
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PLOT=$BUILD/tests/tools/svg_plot
in=${1:-$BUILD/bench/results.json}
cost=${2:-docs/img/bench-cost.svg}
sweep=${3:-docs/img/bench-sweep.svg}
[ -x "$PLOT" ] || { echo "plot-bench: $PLOT is missing: run make all" >&2; exit 1; }
[ -f "$in" ] || { echo "plot-bench: no benchmark results at '$in': run scripts/bench.sh" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# cost.rows, sweep.rows (tab-separated) and machine (one line) into $tmp.
python3 - "$in" "$tmp" <<'PY'
import json, os, sys
path, tmp = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(path))
    perf, sweep, m = r["perf"], r.get("sweep") or [], r["machine"]
    cost_rows = [f"{x['program']}\t{x['workload']}\t{x['ns_per_packet']:.3f}" for x in perf]
    sweep_rows = [f"{x['workload']}\t{x['sketch_bytes']}\t{x['ns_per_packet']:.3f}" for x in sweep]
    machine = "%s, %s CPUs, kernel %s" % (m["cpu"], m["cpus"], m["kernel"])
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"plot-bench: '{path}' is not a benchmark results file: {e!r}")
if not cost_rows:
    sys.exit(f"plot-bench: '{path}' has no cost rows (a --placement-only or --no-perf run)")
for name, rows in (("cost.rows", cost_rows), ("sweep.rows", sweep_rows)):
    with open(os.path.join(tmp, name), "w") as f:
        f.write("".join(row + "\n" for row in rows))
with open(os.path.join(tmp, "machine"), "w") as f:
    f.write(machine + "\n")
PY
m=$(cat "$tmp/machine")
"$PLOT" bars "Cost per packet ($m)" \
	"ns per packet (run_time_ns / run_cnt, median of the run's rounds)" <"$tmp/cost.rows" >"$tmp/cost.svg"
mv "$tmp/cost.svg" "$cost"
echo "$cost"
if [ -s "$tmp/sweep.rows" ]; then
	"$PLOT" line "Cost against the shared sketch's size, 4 rows ($m)" \
		"sketch size in bytes (one copy)" "ns per packet" --logx <"$tmp/sweep.rows" >"$tmp/sweep.svg"
	mv "$tmp/sweep.svg" "$sweep"
	echo "$sweep"
fi
