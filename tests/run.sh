#!/usr/bin/env bash
# Run the test suites and print one closing line: "N passed, N failed, N skipped".
#   tests/run.sh [unit|prog|integration|all]
# Counts are test cases: Check's per-binary totals and each script's own tally.
set -u
BUILD=${BUILD:-build}
what=${1:-all}
cd "$(dirname "$0")/.." || exit 1

passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

tally() { # name rc: read the last run's output in $log
	local name=$1 rc=$2 checks fails errs p f
	if [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "SKIP $name: $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP[^:]*: //')"
		return
	fi
	if read -r checks fails errs < <(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "$log" | tail -1) && [ -n "$checks" ]; then
		p=$((checks - fails - errs)); f=$((fails + errs))
	elif read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$log" | tail -1) && [ -n "$p" ]; then
		:
	else
		p=0; f=1
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed or exited non-zero without saying why: count it
	fi
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -eq 0 ]; then echo "PASS $name ($p)"; else echo "FAIL $name ($f failed)"; cat "$log"; fi
}

run_bin() {
	local name=$1; shift
	"$@" >"$log" 2>&1
	local rc=$?
	[ -n "${VERBOSE:-}" ] && cat "$log"
	tally "$name" "$rc"
}

need_root_and_bpf() { # prints why not, returns 1 if the suite cannot run here
	if [ "$(id -u)" -ne 0 ]; then echo "needs root (BPF and network namespaces)"; return 1; fi
	if [ ! -d /sys/fs/bpf ] || ! grep -qw bpf /proc/filesystems; then
		echo "kernel has no BPF filesystem support"; return 1
	fi
	return 0
}

if [ "$what" = unit ] || [ "$what" = all ]; then
	for t in "$BUILD"/tests/unit_*; do
		[ -x "$t" ] && run_bin "$(basename "$t")" "$t"
	done
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
		for t in tests/integ_*.sh; do
			[ -f "$t" ] && run_bin "$(basename "$t")" env BUILD="$BUILD" bash "$t"
		done
	else
		echo "SKIP integration tests: $why"; skipped=$((skipped + 1))
	fi
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
