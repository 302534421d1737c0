#!/usr/bin/env bash
# Fuzz the policy parsers (tests/fuzz/fuzz_policy.c: the --config file, its
# class and list sections, --class/--exempt/--deny, the option values) from
# a corpus of dist/example.conf, the class and list examples of the README
# and docs/operating.md, and tests/fuzz/seeds/.
#   tests/fuzz.sh               the tests' run: FUZZ_RUNS executions (default
#                               60000; 5000 under make check), at most
#                               FUZZ_MAX_TIME s (default 20), seed 1
#   tests/fuzz.sh --time SECS   a developer's run (make fuzz FUZZ_TIME=SECS),
#                               its corpus kept in $BUILD/fuzz/corpus
# A crash, a sanitizer's report, an input over 10 s (a hang) or over 2 GiB
# (an OOM) fails it; the input is kept in $BUILD/fuzz/crashes.  Prints the
# executions and executions per second, then "N passed, N failed".
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
bin=$BUILD/tests/fuzz/fuzz_policy
time_s=
if [ "${1:-}" = --time ]; then
	time_s=${2:?--time needs seconds}
fi
if [ ! -x "$bin" ]; then
	echo "FAIL: $bin is not built (make $bin)"
	echo "0 passed, 1 failed"
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seeds=$work/seeds
mkdir -p "$seeds" "$BUILD/fuzz/crashes"
cp tests/fuzz/seeds/* "$seeds/"
cp dist/example.conf "$seeds/example.conf"
# example.conf's commented-out classes and lists, as an operator uncomments them
# (a valid file); then every commented-out key too (conflicting keys).
awk '/^# \[class/ { s = 1 } s && /^# ?(\[|[a-z0-9-]+ += )/ { sub(/^# ?/, "") } { print }' \
	dist/example.conf >"$seeds/example-sections.conf"
sed -E 's/^# ?(\[(class|exempt|deny)|[a-z0-9-]+ += )/\1/' dist/example.conf >"$seeds/example-all.conf"
# The docs' fenced blocks that hold a section, one seed each.
awk -v dir="$seeds" '
	/^ *```/ { if (inb) { if (buf ~ /\[(class|exempt|deny)/) print buf > (dir "/doc-" ++n ".conf"); inb = 0; buf = "" } else inb = 1; next }
	inb { sub(/^  /, ""); buf = buf $0 "\n" }' README.md docs/operating.md
# The --class, --exempt and --deny texts of the docs and the integration tests, one seed each.
grep -ohE -- "--(class|exempt|deny) '[^']*'" README.md docs/*.md tests/integ_*.sh |
	sed -E "s/^--[a-z]+ '(.*)'$/\\1/" | sort -u | awk -v dir="$seeds" '{ print > (dir "/doc-cli-" NR ".txt") }'
nseeds=$(ls "$seeds" | wc -l)

if [ -n "$time_s" ]; then
	corpus=$BUILD/fuzz/corpus
	mkdir -p "$corpus"
	limits=(-max_total_time="$time_s")
else
	corpus=$work/corpus
	mkdir -p "$corpus"
	runs=60000
	# make check's inner loop (CK_EXCLUDE_TAGS=slow): a short run.
	[[ ",${CK_EXCLUDE_TAGS:-}," == *,slow,* ]] && runs=5000
	limits=(-runs="${FUZZ_RUNS:-$runs}" -max_total_time="${FUZZ_MAX_TIME:-20}" -seed=1)
fi
log=$work/log
"$bin" "${limits[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -dict=tests/fuzz/policy.dict \
	-print_final_stats=1 -artifact_prefix="$BUILD/fuzz/crashes/" "$corpus" "$seeds" >"$log" 2>&1
rc=$?
runs=$(awk '/^stat::number_of_executed_units:/ { print $2 }' "$log")
rate=$(awk '/^stat::average_exec_per_sec:/ { print $2 }' "$log")
secs=$(awk '/^Done [0-9]+ runs in/ { print $5 }' "$log")
if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
	echo "fuzz_policy: $runs executions from $nseeds seeds in about $secs s ($rate/s), no crash, hang or leak"
	echo "1 passed, 0 failed"
	exit 0
fi
tail -n 60 "$log"
for f in $(grep -oE "Test unit written to [^ ]+" "$log" | awk '{ print $5 }'); do
	echo "input that failed ($f; rerun: $bin $f):"
	od -c "$f" | head -n 20
done
echo "FAIL: fuzz_policy exited $rc after ${runs:-?} executions"
echo "0 passed, 1 failed"
exit 1
