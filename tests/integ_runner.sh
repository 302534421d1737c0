#!/usr/bin/env bash
# Integration: tests/run.sh's counts come from Check's TAP log, and a test
# binary that dies without one, or a script's own tally, still counts.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpi-runner.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
RUN="$(dirname "$0")/run.sh"

mkdir -p "$WORK/tests"
ln -s "$(realpath "$BUILD/tests/tools/check_fixture")" "$WORK/tests/unit_fixture"
printf '#!/bin/sh\necho partial output\nexit 3\n' >"$WORK/tests/unit_dies"
chmod +x "$WORK/tests/unit_dies"
BUILD=$WORK "$RUN" unit >"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
check "failures make run.sh exit non-zero" test "$rc" -ne 0
check "summary: 2 passed (TAP ok lines), 2 + 1 failed (TAP not ok lines, a binary with no log)" \
	grep -qx "2 passed, 3 failed, 0 skipped" "$WORK/out"
check "the failed test and its message are shown" \
	grep -q "^not ok .*test_fails: fixture failure 42" "$WORK/out"
check "a test killed by a signal is a failure" grep -q "^not ok .*test_aborts:.*signal 6" "$WORK/out"
check "a binary with no TAP log is one failure, its output shown" \
	bash -c "grep -q '^FAIL unit_dies (1 failed)' '$WORK/out' && grep -q '^partial output' '$WORK/out'"

rm "$WORK/tests/unit_dies"
rm "$WORK/tests/unit_fixture"
ln -s "$(realpath "$BUILD/tests/unit_parse")" "$WORK/tests/unit_parse"
BUILD=$WORK "$RUN" unit >"$WORK/out" 2>&1
rc=$?
check "a passing suite exits 0" test "$rc" -eq 0
check "... and counts every test" grep -qE '^[1-9][0-9]* passed, 0 failed, 0 skipped$' "$WORK/out"

# The background lane: a marked script runs beside the others, and its
# failure counts like any other's; RUN_LANES=1 runs it in the one lane.
mkdir -p "$WORK/lanes/tests"
cp "$(dirname "$0")/run.sh" "$WORK/lanes/tests/run.sh"
printf '#!/usr/bin/env bash\n# run.sh: background\necho "bg started" >%s/bg.mark\necho "1 passed, 1 failed"\nexit 1\n' \
	"$WORK" >"$WORK/lanes/tests/integ_bg.sh"
printf '#!/usr/bin/env bash\nsleep 1; test -e %s/bg.mark && echo "beside: yes"\necho "2 passed, 0 failed"\n' \
	"$WORK" >"$WORK/lanes/tests/integ_fg.sh"
VERBOSE=1 BUILD=$WORK env -u ONLY "$WORK/lanes/tests/run.sh" integration >"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
check "a background script's failure fails the run" test "$rc" -ne 0
check "... counted with the foreground's: 3 passed, 1 failed" grep -qx "3 passed, 1 failed, 0 skipped" "$WORK/out"
check "... reported as the background lane's" grep -q "^FAIL integ_bg.sh (background lane) (1 failed)" "$WORK/out"
check "... and it ran beside the foreground script" grep -qx "beside: yes" "$WORK/out"
rm -f "$WORK/bg.mark"
RUN_LANES=1 BUILD=$WORK env -u ONLY "$WORK/lanes/tests/run.sh" integration >"$WORK/out" 2>&1
check "RUN_LANES=1: one lane, the same counts" grep -qx "3 passed, 1 failed, 0 skipped" "$WORK/out"
finish
