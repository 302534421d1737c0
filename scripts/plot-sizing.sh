#!/usr/bin/env bash
# The sizing curves of docs/design.md: modelled false drops against bytes of
# state per source, for each backend and a few sketch geometries, all at
# 1 MiB per copy, from `xdp-pacer model --json` (the CLI's own models), drawn
# by tests/tools/svg_plot (the analysis report's SVG code).
#   scripts/plot-sizing.sh [OUT.svg]        # default docs/img/sizing.svg
# Needs the CLI and the tool built (make all); no privileges.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CLI=$BUILD/xdp-pacer
PLOT=$BUILD/tests/tools/svg_plot
out=${1:-docs/img/sizing.svg}
for f in "$CLI" "$PLOT"; do
	[ -x "$f" ] || { echo "plot-sizing: $f is missing: run make all" >&2; exit 1; }
done
rows=$(mktemp)
trap 'rm -f "$rows" "$out.tmp"' EXIT

# Sources per interval from 10^4 to 10^6, 41 steps evenly spaced on a log scale.
sources=$(awk 'BEGIN { for (i = 0; i <= 40; i++) printf "%d\n", 10000 * 10 ^ (i / 20) }')
# series name | model arguments (every geometry 1 MiB per copy)
curves=(
	"sketch, 2 rows|--rows 2 --width 524288"
	"sketch, 4 rows|--rows 4 --width 262144"
	"sketch, 8 rows|--rows 8 --width 131072"
	"sketch, 4 rows, blocked|--rows 4 --width 262144 --layout blocked"
	"table (random arrivals)|--backend table --width 262144"
	"table (paced sources)|--backend table --arrivals paced --width 262144"
)
for c in "${curves[@]}"; do
	name=${c%%|*}
	read -r -a args <<<"${c#*|}"
	for n in $sources; do
		"$CLI" model --sources "$n" "${args[@]}" --json
	done | awk -v name="$name" '{
		if (!match($0, /"false_drop":[^,}]*/)) { print "plot-sizing: no false_drop in: " $0 > "/dev/stderr"; exit 1 }
		fd = substr($0, RSTART + 13, RLENGTH - 13) + 0
		match($0, /"bytes_per_source":[^,}]*/); bps = substr($0, RSTART + 19, RLENGTH - 19) + 0
		if (fd >= 1e-5) printf "%s\t%g\t%g\n", name, bps, fd   # below 10^-5: off the plot
	}'
done >"$rows"
"$PLOT" line "Modelled false drops at 1 MiB per copy (xdp-pacer model)" \
	"bytes of state per source active in an interval" "false-drop rate" \
	--logx --logy --hline 0.01 "1 %" <"$rows" >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
