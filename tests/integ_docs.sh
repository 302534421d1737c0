#!/usr/bin/env bash
# Integration: the docs cannot drift from the code.  Every `xdp-pacer VERB
# --option` that README.md and docs/*.md name is in that verb's --help (the
# help is printed from the option table that parses it); the docs, the man
# page and --help give the pins' path with its netns-INODE; the README keeps
# its shape (short, install, quick start and operating on its first screen,
# no dates); and the scripts that draw the docs' SVG plots still produce
# valid SVG from the current code: scripts/plot-sizing.sh from `xdp-pacer
# model`, scripts/plot-bench.sh from a short real run of scripts/bench.sh
# with its sweep, and scripts/hm_recordings.sh --live (root: veth pairs in
# namespaces the scripts make and remove).
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
WORK=$(mktemp -d /tmp/xpi-docs.XXXXXX)
trap 'stop_background; rm -rf "$WORK"' EXIT
DOCS=(README.md docs/*.md)

# --- every option the docs give a verb is one the verb takes ---
verbs=$("$CLI" --help | sed -n 's/^  \([a-z]*\) .*/\1/p')
# path TAB verb TAB option, for each option after "xdp-pacer [-v] VERB" within
# one command: a code span, or a line of a code block (continued by a backslash).
doc_options() { # files...
	python3 - "$verbs" "$@" <<'PY'
import re, sys
verbs = set(sys.argv[1].split())
for path in sys.argv[2:]:
    text = re.sub(r"\\\n\s*", " ", open(path, encoding="utf-8").read())
    for m in re.finditer(r"xdp-pacer(?:\s+-v+)?\s+([a-z]+)\b([^`\n|#]*)", text):
        if m.group(1) not in verbs:
            continue
        for opt in re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", m.group(2)):
            print(f"{path}\t{m.group(1)}\t{opt}")
PY
}
doc_options "${DOCS[@]}" >"$WORK/uses"
check "the docs name options of the CLI's verbs (found $(wc -l <"$WORK/uses"))" \
	test "$(wc -l <"$WORK/uses")" -ge 20
unknown=
while IFS=$'\t' read -r path verb opt; do
	[ "$opt" = --help ] && continue
	[ -f "$WORK/help.$verb" ] || "$CLI" "$verb" --help >"$WORK/help.$verb" 2>&1
	grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|\$)" "$WORK/help.$verb" || unknown="$unknown $path:$verb:$opt"
done <"$WORK/uses"
check "every 'xdp-pacer VERB --option' in the docs is in that verb's --help (unknown:${unknown:- none})" \
	test -z "$unknown"
printf 'see `xdp-pacer load eth0 --no-such-option` and `xdp-pacer stats eth0 --watch 1`\n' >"$WORK/bad.md"
doc_options "$WORK/bad.md" >"$WORK/bad.uses"
check "the extraction finds an option that does not exist (the check is real)" \
	bash -c "grep -q \$'load\t--no-such-option' '$WORK/bad.uses' && ! \"$CLI\" load --help | grep -q -- --no-such-option"

# --- the pins' path: /sys/fs/bpf/xdp-pacer/netns-INODE/IFNAME/ wherever it is named ---
for v in $verbs; do "$CLI" "$v" --help; done >"$WORK/helps" 2>&1
bad=$(python3 - "${DOCS[@]}" dist/xdp-pacer.8 "$WORK/helps" <<'PY'
import re, sys
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    # paragraph by paragraph: the one on earlier versions' pins names their old place
    for para in re.split(r"\n\s*\n", text):
        if "earlier versions" in para:
            continue
        for m in re.finditer(r"/sys/fs/bpf/xdp-pacer/(?!netns-(?:INODE|\d+)/)[^\s`'\"),]+", para.replace("\\-", "-")):
            print(f"{path.replace(sys.argv[-1], '--help')}: {m.group(0)}")
PY
)
check "the docs, the man page and --help name the pins /sys/fs/bpf/xdp-pacer/netns-INODE/... (others: ${bad:-none})" \
	test -z "$bad"
check "the man page gives load's pins as /sys/fs/bpf/xdp-pacer/netns-INODE/IFNAME/" \
	bash -c "grep -c '/sys/fs/bpf/xdp-pacer/netns-INODE/IFNAME/' dist/xdp-pacer.8 | awk '{ exit !(\$1 >= 2) }'"

# --- the README's shape ---
check "README.md is at most 300 lines ($(wc -l <README.md))" test "$(wc -l <README.md)" -le 300
for h in Install 'Quick start' Operating; do
	n=$(grep -n -m1 "^## $h\$" README.md | cut -d: -f1)
	check "README: '## $h' within the first 60 lines (line ${n:-none})" test "${n:-999}" -le 60
done
check "README keeps the demo and test commands" \
	bash -c "grep -qx '    sudo scripts/demo.sh' README.md && grep -qx '    sudo scripts/test.sh' README.md"
dated=$(grep -nE '\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b|\b[Ii]ssue [0-9]+' "${DOCS[@]}")
check "no dates or issue numbers in README.md and docs/ (${dated:-none})" test -z "$dated"
missing=
for f in $(grep -ohE '\]\((docs/)?[a-z0-9_/.-]+\.(md|svg)' "${DOCS[@]}" | sed 's/^](//' | sort -u); do
	[ -e "$f" ] || [ -e "docs/$f" ] || missing="$missing $f"
done
check "every relative link to a .md or .svg file resolves (missing:${missing:- none})" test -z "$missing"

# --- the plots: valid SVG from the current code ---
valid_svg() { # file: parses as XML with an <svg> root in the SVG namespace
	python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
sys.exit(r.tag != "{http://www.w3.org/2000/svg}svg")' "$1" 2>/dev/null
}
count_tag() { grep -o "<$2[ >]" "$1" | wc -l; }
BUILD=$BUILD scripts/plot-sizing.sh "$WORK/sizing.svg" >/dev/null
check "scripts/plot-sizing.sh exits 0" test $? -eq 0
check "... and writes valid SVG" valid_svg "$WORK/sizing.svg"
check "... with its six curves" test "$(count_tag "$WORK/sizing.svg" polyline)" -eq 6
for f in docs/img/*.svg; do
	check "committed $f is valid SVG" valid_svg "$f"
done
check "svg_plot refuses a malformed row, naming the line" \
	bash -c "printf 'a\t1\t2\nb\tx\t3\n' | '$BUILD/tests/tools/svg_plot' line T x y 2>&1 >/dev/null | grep -q 'stdin:2: not a number'"

bad=$(cd scripts && PYTHONDONTWRITEBYTECODE=1 python3 -c 'import bench; print(" ".join(bench.placement_mismatches()))')
check "every benchmark program named percpu or shared loads with that --placement (not: ${bad:-none})" \
	test -z "$bad"
BUILD=$BUILD scripts/bench.sh --perf-only --no-placement --workloads spoofed \
	--programs bare-drop --reps 1 --seconds 0.3 --out "$WORK/bench.json" >"$WORK/bench.out" 2>&1
rc=$?
check "a short scripts/bench.sh run (with its sweep) exits 0" test $rc -eq 0
[ $rc -eq 0 ] || tail -20 "$WORK/bench.out"
check "... and draws its cost chart beside its results" valid_svg "$WORK/bench-cost.svg"
check "... and its sweep chart" valid_svg "$WORK/bench-sweep.svg"
BUILD=$BUILD scripts/plot-bench.sh "$WORK/bench.json" "$WORK/cost.svg" "$WORK/sweep.svg" >/dev/null
check "scripts/plot-bench.sh draws valid SVG from the run's results.json: the cost" valid_svg "$WORK/cost.svg"
check "... and the sweep" valid_svg "$WORK/sweep.svg"
# bare-drop and lru-exact on one workload: two bars; the sweep: one curve, a point per size
check "... one bar per program and workload" test "$(grep -c "height='12.0' fill=" "$WORK/cost.svg")" -eq 2
sizes=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["sweep"]))' "$WORK/bench.json")
check "... one sweep curve with a point per sketch size ($sizes)" \
	test "$(count_tag "$WORK/sweep.svg" polyline)" -eq 1 -a "$(count_tag "$WORK/sweep.svg" circle)" -eq "$sizes" -a "$sizes" -ge 3
# docs/analysis.md's live recordings: generator traffic recorded through the pacer, then analyzed
scripts/hm_recordings.sh --live --reps 1 --dir "$WORK/hm" >"$WORK/hm.out" 2>&1
rc=$?
check "scripts/hm_recordings.sh --live runs as docs/analysis.md gives it" test $rc -eq 0
[ $rc -eq 0 ] || tail -5 "$WORK/hm.out"
check "... and reports HistoricalMembership on its three recordings" \
	test "$(grep -cE ' (spoofed|zipf11|zipf13) +[0-9.]+ ' "$WORK/hm.out")" -eq 3

echo '{"perf": []}' >"$WORK/empty.json"
BUILD=$BUILD scripts/plot-bench.sh "$WORK/empty.json" "$WORK/empty.svg" "$WORK/empty-sweep.svg" 2>"$WORK/err"
check "plot-bench refuses results without cost rows, naming the file, and writes nothing" \
	bash -c "test $? -ne 0 && grep -q 'empty.json' '$WORK/err' && test ! -e '$WORK/empty.svg' && test ! -e '$WORK/empty-sweep.svg'"
finish
