#!/usr/bin/env bash
# Integration: the multi-core rows (scripts/bench-multicore.sh): bad
# arguments are refused naming the value; the table and its ratios rendered
# from canned runs (per-CPU over shared and each build over the compared one,
# paired by round; auto's pick against the better placement); one short live
# run at K = 1 that measures, says what auto picks, and leaves no namespace.
. "$(dirname "$0")/lib.sh"
MC=scripts/bench-multicore.sh
work=$(mktemp -d /tmp/integ_multicore.XXXXXX)
trap 'stop_background; rm -rf "$work"' EXIT

refused() { # pattern args...: exit 2 and the pattern on stderr, nothing measured
	local pat=$1 err rc
	shift
	err=$("$MC" --out "$work/refused" "$@" 2>&1)
	rc=$?
	[ "$rc" -eq 2 ] && grep -q -- "$pat" <<<"$err" && [ ! -e "$work/refused/multicore-runs.tsv" ]
}
check "--cpus 0 is refused naming it" refused "invalid value '0' in --cpus" --cpus 0
check "--cpus beyond this machine's CPUs is refused" refused "invalid value '4096' in --cpus" --cpus 1,4096
check "--programs with an unknown name is refused naming it" refused "unknown name 'nope'" --programs bare-drop,nope
check "--workloads with an unknown name is refused naming it" refused "unknown name 'flat'" --workloads flat
check "--seconds that is not a number is refused" refused "invalid value 'soon' for --seconds" --seconds soon
check "--compare-cli that is not a program is refused" refused "'/nonexistent' is not an executable" --compare-cli /nonexistent
check "an unknown option is refused" refused "unknown argument '--bogus'" --bogus

# Canned runs: K = 4, three rounds.  Sketch: per-CPU/shared 1.2, 0.9, 1.3 (median 1.2),
# auto picked shared: 1.00x.  Table: 0.9, 0.95, 0.85 (median 0.9), auto picked shared: 1/0.9.
canned=$work/canned
mkdir -p "$canned"
{
	printf 'cpus\tworkload\tprogram\tround\tns_per_packet\treceived_mpps\treceived\tseconds\tsent\n'
	r=0
	for ns in "100 120 200 180 110" "100 90 200 190 90" "100 130 200 170 100"; do
		r=$((r + 1))
		set -- $ns
		printf '4\tspoofed\tpacer-shared\t%s\t%s\t10.0\t10000000\t1.0\t10000000\n' $r "$1"
		printf '4\tspoofed\tpacer-percpu\t%s\t%s\t9.0\t9000000\t1.0\t9000000\n' $r "$2"
		printf '4\tspoofed\ttable-shared\t%s\t%s\t5.0\t5000000\t1.0\t5000000\n' $r "$3"
		printf '4\tspoofed\ttable-percpu\t%s\t%s\t6.0\t6000000\t1.0\t6000000\n' $r "$4"
		printf '4\tspoofed\tpacer-shared@base\t%s\t%s\t10.0\t10000000\t1.0\t10000000\n' $r "$5"
	done
} >"$canned/multicore-runs.tsv"
printf '4\tsketch\tshared\tby cost: shared is cheaper: x\n4\ttable\tshared\tby cost: shared is cheaper: y\n' \
	>"$canned/multicore-auto.tsv"
echo "canned machine" >"$canned/machine.txt"
md=$("$MC" --render "$canned" 2>&1)
check "render exits 0" test $? -eq 0
row=$(grep '^| 4 | spoofed |' <<<"$md")
echo "    $row"
check "medians of each program's runs" grep -q '| 100 (10.0) | 120 (9.0) |' <<<"$row"
check "sketch auto: shared, 1.00x the better, per-CPU/shared 1.20 paired" \
	grep -q '| shared (1.00x; per-CPU/shared 1.20) |' <<<"$row"
check "table auto: shared, 1.11x the better (per-CPU/shared 0.90 paired)" \
	grep -q '| shared (1.11x; per-CPU/shared 0.90) |' <<<"$row"
check "the target line counts the table cell as missed" \
	grep -q 'auto within 10 % of the better placement: 1 of 2 cells' <<<"$md"
check "against the compared build: 1.000 [0.91, 1.11] paired" \
	grep -q '| 4 | spoofed | pacer-shared | 100.0 | 100.0 | 1.000 \[0.91, 1.11\] |' <<<"$md"
check "the JSON parses, with every run" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["runs"]) == 15 and d["machine"] == "canned machine", d
cells = {c["structure"]: c for c in d["auto_against_best"]}
assert abs(cells["table"]["auto_over_best"] - 1 / 0.9) < 1e-3, cells
assert abs(d["against_compared_build"][0]["over_base_paired"] - 1.0) < 1e-9
' "$canned/multicore.json"
printf '4\tsketch\tunknown\tload did not say\n' >"$canned/multicore-auto.tsv"
check "a pick load did not state gives no auto cell" \
	bash -c "'$MC' --render '$canned' | grep '^| 4 | spoofed |' | grep -vq 'shared ('"

live=$work/live
"$MC" --cpus 1 --reps 1 --seconds 0.2 --programs bare-drop,pacer-shared,pacer-percpu \
	--workloads spoofed --out "$live" >"$work/live.log" 2>&1 &
pid=$!
wait "$pid"
rc=$?
sed 's/^/    /' "$work/live.log" | tail -12
check "a live run at K = 1 exits 0" test "$rc" -eq 0
check "... with one run per program" test "$(($(wc -l <"$live/multicore-runs.tsv") - 1))" -eq 3
check "... each with a cost and packets received" \
	awk -F'\t' 'NR > 1 && !($5 > 0 && $7 > 0) { bad = 1 } END { exit bad }' "$live/multicore-runs.tsv"
check "... what auto picks at one receiving CPU, and why" \
	grep -q "^1	sketch	percpu	by cost: per-CPU is cheaper: one receiving CPU" "$live/multicore-auto.tsv"
check "... the table with the sketch's auto cell" grep -q '^| 1 | spoofed | .* | per-CPU (' "$live/multicore.md"
check "... and no namespace left behind" bash -c "! ip netns list | grep -q 'xpm-..-$pid'"
finish
