#!/usr/bin/env bash
# Integration: tests/run.sh's counts come from Check's TAP log, and a test
# binary that dies without one, or a script's own tally, still counts; a
# test that leaves a process or a namespace behind fails, named, and what it
# left is removed, blaming no test for what another made meanwhile.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpi-runner.XXXXXX)
ns_other="xpr-other-$$"
trap 'stop_background; ip netns del "$ns_other" 2>/dev/null; rm -rf "$WORK"' EXIT
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

# --- What a test leaves behind ---
# Foreground: a and d leave nothing (d waits for its process, in a session
# of its own, and removes the namespace it made), b leaves a background job
# and a daemon (setsid -f), c a namespace.  Background lane: e leaves a job and a namespace, made while a
# runs beside it.  Meanwhile this script, as another run on the machine
# would, makes a namespace and starts a process; none of them is blamed.
# gone PID...: none runs (a zombie that init has yet to reap is gone).
gone() {
	local p
	for p; do [ -n "$p" ] && [[ "$(ps -o stat= -p "$p")" =~ ^(Z|$) ]] || return 1; done
}
L=$WORK/left
mkdir -p "$L/tests"
cp "$(dirname "$0")/run.sh" "$L/tests/run.sh"
ns_fg="xpr-fg-$$" ns_bg="xpr-bg-$$"
cat >"$L/tests/integ_a_clean.sh" <<EOF
#!/usr/bin/env bash
sleep 1 & wait \$! # beside e, which makes what it leaves meanwhile
echo "1 passed, 0 failed"
EOF
cat >"$L/tests/integ_b_proc.sh" <<EOF
#!/usr/bin/env bash
sleep 300 &
echo \$! >$L/b.pid
setsid -f sh -c 'echo \$\$ >$L/daemon.pid; exec sleep 301'
for _ in \$(seq 50); do [ -s $L/daemon.pid ] && break; sleep 0.1; done
echo "1 passed, 0 failed"
EOF
cat >"$L/tests/integ_c_ns.sh" <<EOF
#!/usr/bin/env bash
ip netns add $ns_fg
echo "1 passed, 0 failed"
EOF
cat >"$L/tests/integ_d_tidy.sh" <<EOF
#!/usr/bin/env bash
setsid sleep 0.2 & wait \$!
ip netns add xpr-tidy-\$\$ && ip netns del xpr-tidy-\$\$
echo "1 passed, 0 failed"
EOF
cat >"$L/tests/integ_e_bg.sh" <<EOF
#!/usr/bin/env bash
# run.sh: background
ip netns add $ns_bg
sleep 302 &
echo \$! >$L/e.pid
sleep 2 # while the foreground lane runs
echo "1 passed, 0 failed"
EOF
( sleep 0.3; ip netns add "$ns_other"; exec sleep 303 ) &
other=$!
BUILD=$WORK env -u ONLY "$L/tests/run.sh" integration >"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
sed -n '/^--- the failures, repeated ---$/,$p' "$WORK/out" >"$WORK/recap"
check "leftovers fail the run" test "$rc" -ne 0
check "... each one failed check: 5 passed, 3 failed" grep -qx "5 passed, 3 failed, 0 skipped" "$WORK/out"
check "a test that leaves nothing passes beside one that does" grep -q "^PASS integ_a_clean.sh (1)" "$WORK/out"
check "... and one that cleans up after a process group and a namespace" grep -q "^PASS integ_d_tidy.sh (1)" "$WORK/out"
check "a background job left: the test fails, the process named" \
	bash -c "grep -q '^FAIL integ_b_proc.sh (1 failed)' '$WORK/out' &&
		grep -qx 'FAIL - left behind: process $(cat "$L/b.pid"): sleep 300' '$WORK/out'"
check "a daemon that left the process tree (setsid -f) is named too" \
	grep -qx "FAIL - left behind: process $(cat "$L/daemon.pid"): sleep 301" "$WORK/out"
check "a namespace left: the test fails, the namespace named" \
	bash -c "grep -q '^FAIL integ_c_ns.sh (1 failed)' '$WORK/out' &&
		grep -qx 'FAIL - left behind: network namespace $ns_fg' '$WORK/out'"
check "the background lane's leftovers are its test's" \
	bash -c "grep -q '^FAIL integ_e_bg.sh (background lane) (1 failed)' '$WORK/out' &&
		grep -qx 'FAIL - left behind: process $(cat "$L/e.pid"): sleep 302' '$WORK/out' &&
		grep -qx 'FAIL - left behind: network namespace $ns_bg' '$WORK/out'"
check "the recap at the end repeats them" \
	bash -c "grep -q 'left behind: process .*: sleep 300' '$WORK/recap' && grep -q 'left behind: network namespace $ns_fg' '$WORK/recap' &&
		grep -q 'left behind: process .*: sleep 302' '$WORK/recap' && grep -q 'left behind: network namespace $ns_bg' '$WORK/recap'"
check "what was left is gone: the processes" \
	gone "$(cat "$L/b.pid")" "$(cat "$L/daemon.pid")" "$(cat "$L/e.pid")"
check "... and the namespaces" bash -c "! ip netns list | grep -qE '^($ns_fg|$ns_bg)( |\$)'"
check "what another run made meanwhile is nobody's: not named" \
	bash -c "! grep -qE 'sleep 303|$ns_other' '$WORK/out'"
check "... and still there" bash -c "kill -0 $other && test -e /run/netns/$ns_other"
kill "$other"
ip netns del "$ns_other"

# Interrupted (TERM), run.sh stops what its tests still run and removes the
# namespaces they made.
H=$WORK/hang
mkdir -p "$H/tests"
cp "$(dirname "$0")/run.sh" "$H/tests/run.sh"
cat >"$H/tests/integ_hang.sh" <<EOF
#!/usr/bin/env bash
ip netns add xpr-hang-$$
sleep 300 &
echo \$! >$H/job.pid
echo \$\$ >$H/test.pid
sleep 300
EOF
BUILD=$WORK env -u ONLY "$H/tests/run.sh" integration >"$WORK/out" 2>&1 &
runner=$!
for _ in $(seq 100); do [ -s "$H/test.pid" ] && break; sleep 0.1; done
kill -TERM "$runner"
wait "$runner"
check "an interrupted run stops its test and what the test started" \
	gone "$(cat "$H/test.pid")" "$(cat "$H/job.pid")"
check "... and removes the namespace the test made" test ! -e "/run/netns/xpr-hang-$$"

# A unit binary's leftovers count too (the unit lane, one lane).
mkdir -p "$WORK/unit/tests"
printf '#!/bin/sh\nsleep 305 &\necho $! >%s/unit.pid\necho "1 passed, 0 failed"\n' "$WORK" >"$WORK/unit/tests/unit_leaves"
chmod +x "$WORK/unit/tests/unit_leaves"
BUILD=$WORK/unit "$RUN" unit >"$WORK/out" 2>&1
cat "$WORK/out"
check "a unit binary that leaves a process fails, the process named" \
	bash -c "grep -qx '1 passed, 1 failed, 0 skipped' '$WORK/out' &&
		grep -qx 'FAIL - left behind: process $(cat "$WORK/unit.pid"): sleep 305' '$WORK/out'"
check "... and stopped" gone "$(cat "$WORK/unit.pid")"
finish
