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
finish
