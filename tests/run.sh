#!/usr/bin/env bash
# Run the test suites and print one closing line: "N passed, N failed, N skipped".
#   tests/run.sh [unit|prog|integration|all]
#   ONLY=REGEX picks the integration scripts by name (ONLY='integ_(core|rate)').
# Counts are test cases: Check's TAP log per binary and each script's own tally.
set -u
BUILD=${BUILD:-build}
what=${1:-all}
cd "$(dirname "$0")/.." || exit 1

passed=0 failed=0 skipped=0
log=$(mktemp)
tap=$(mktemp)
recap=$(mktemp)

# Counts from the last run: Check's TAP log (one "ok"/"not ok" line per test)
# or, for scripts, their closing "N passed, N failed" line.  Sets p and f.
count_results() {
	if [ -s "$tap" ]; then
		p=$(grep -c '^ok ' "$tap")
		f=$(grep -c '^not ok ' "$tap")
	elif read -r p f < <(awk '/^[0-9]+ passed, [0-9]+ failed/ { p = $1; f = $3 } END { if (p != "") print p, f }' "$log") && [ -n "$p" ]; then
		:
	else
		p=0; f=1
	fi
}

tally() { # name rc seconds
	local name=$1 rc=$2 secs=$3 p f
	if [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "SKIP $name: $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP[^:]*: //')"
		return
	fi
	count_results
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed or exited non-zero without saying why: count it
	fi
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -eq 0 ]; then
		echo "PASS $name ($p) ${secs}s"
		return
	fi
	echo "FAIL $name ($f failed) ${secs}s"
	grep '^not ok ' "$tap" # Check's per-test failures, if it got that far
	cat "$log"
	# Repeated at the end, where a long log's reader (or CI's tail) looks.
	{
		echo "FAIL $name ($f failed)"
		{ grep '^not ok ' "$tap"; grep -E '(^|: )(FAIL|not ok)[ -]' "$log"; } | head -20 | sed 's/^/    /'
	} >>"$recap"
}

run_bin() { # name command...: Check binaries write their TAP log to $tap
	local name=$1 rc start=$SECONDS; shift
	: >"$tap"
	CK_TAP_LOG_FILE_NAME=$tap "$@" >"$log" 2>&1
	rc=$?
	[ -n "${VERBOSE:-}" ] && cat "$log"
	tally "$name" "$rc" $((SECONDS - start))
}

need_root_and_bpf() { # prints why not, returns 1 if the suite cannot run here
	if [ "$(id -u)" -ne 0 ]; then echo "needs root (BPF and network namespaces)"; return 1; fi
	if [ ! -d /sys/fs/bpf ] || ! grep -qw bpf /proc/filesystems; then
		echo "kernel has no BPF filesystem support"; return 1
	fi
	return 0
}

# The background lane: integration scripts whose header has the line
# "# run.sh: background" (qemu guests, installs, servers that mostly wait)
# run one after another in a second lane beside everything else, from the
# start, and are tallied at the end.  The foreground lane keeps the
# timing-sensitive tests one at a time, as before.  RUN_LANES=1 runs them
# all in one lane.
bg_dir=$(mktemp -d)
bg_pid=
trap 'rm -f "$log" "$tap" "$recap"; [ -n "$bg_pid" ] && { pkill -TERM -P "$bg_pid"; kill "$bg_pid"; } 2>/dev/null; rm -rf "$bg_dir"' EXIT
is_background() { [ "${RUN_LANES:-2}" != 1 ] && head -40 "$1" | grep -q "^# run.sh: background"; }
bg_tests=() fg_tests=()
for t in tests/integ_*.sh; do
	[ -f "$t" ] || continue
	[ -n "${ONLY:-}" ] && ! [[ $(basename "$t") =~ $ONLY ]] && continue # ONLY='integ_(core|rate)'
	if is_background "$t"; then bg_tests+=("$t"); else fg_tests+=("$t"); fi
done
if { [ "$what" = integration ] || [ "$what" = all ]; } && [ ${#bg_tests[@]} -gt 0 ] &&
	need_root_and_bpf >/dev/null; then
	(
		for t in "${bg_tests[@]}"; do
			start=$SECONDS
			env -u CK_TAP_LOG_FILE_NAME BUILD="$BUILD" bash "$t" >"$bg_dir/$(basename "$t").log" 2>&1 </dev/null
			echo "$? $((SECONDS - start))" >"$bg_dir/$(basename "$t").rc"
		done
	) &
	bg_pid=$!
fi

if [ "$what" = unit ] || [ "$what" = all ]; then
	for t in "$BUILD"/tests/unit_*; do
		[ -x "$t" ] && run_bin "$(basename "$t")" "$t"
	done
	for t in "$BUILD"/tests/san/unit_*; do # the same tests built with UBSan
		[ -x "$t" ] && run_bin "$(basename "$t") (UBSan)" "$t"
	done
	# The policy parsers under libFuzzer (or a mutation loop), ASan and UBSan:
	# in a build that has the fuzz target's directory (the Makefile's; not a
	# directory of hand-picked binaries, as integ_runner.sh's).
	[ -d "$BUILD/tests/fuzz" ] &&
		run_bin "fuzz_policy (fuzz)" env -u CK_TAP_LOG_FILE_NAME BUILD="$BUILD" bash tests/fuzz.sh
fi
if [ "$what" = prog ] || [ "$what" = all ]; then
	if why=$(need_root_and_bpf); then
		for t in "$BUILD"/tests/prog_*; do
			[ -x "$t" ] && run_bin "$(basename "$t")" "$t"
		done
	else
		echo "SKIP BPF_PROG_TEST_RUN tests: $why"; skipped=$((skipped + 1))
	fi
fi
if [ "$what" = integration ] || [ "$what" = all ]; then
	if why=$(need_root_and_bpf); then
		for t in "${fg_tests[@]}"; do
			run_bin "$(basename "$t")" env -u CK_TAP_LOG_FILE_NAME BUILD="$BUILD" bash "$t"
		done
		if [ -n "$bg_pid" ]; then
			wait "$bg_pid"
			bg_pid=
			for t in "${bg_tests[@]}"; do
				name=$(basename "$t")
				: >"$tap"
				cp "$bg_dir/$name.log" "$log" 2>/dev/null || : >"$log"
				read -r rc secs <"$bg_dir/$name.rc" 2>/dev/null || { rc=1 secs=0; }
				[ -n "${VERBOSE:-}" ] && cat "$log"
				tally "$name (background lane)" "$rc" "$secs"
			done
		fi
	else
		echo "SKIP integration tests: $why"; skipped=$((skipped + 1))
	fi
fi

if [ -s "$recap" ]; then
	echo "--- the failures, repeated ---"
	cat "$recap"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
