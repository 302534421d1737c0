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

tally() { # name rc seconds [leftovers]: LEFTOVERS holds leftovers()'s lines
	local name=$1 rc=$2 secs=$3 left=${4:-/dev/null} p f
	if [ "$rc" -eq 77 ] && [ ! -s "$left" ]; then
		skipped=$((skipped + 1))
		echo "SKIP $name: $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP[^:]*: //')"
		return
	fi
	if [ "$rc" -eq 77 ]; then
		p=0 f=0 # skipped, but it left something behind: that alone fails it
	else
		count_results
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1 # crashed or exited non-zero without saying why: count it
		fi
	fi
	[ -s "$left" ] && f=$((f + 1)) # what it left behind: one failed check
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -eq 0 ]; then
		echo "PASS $name ($p) ${secs}s"
		return
	fi
	echo "FAIL $name ($f failed) ${secs}s"
	cat "$left"
	grep '^not ok ' "$tap" # Check's per-test failures, if it got that far
	cat "$log"
	# Repeated at the end, where a long log's reader (or CI's tail) looks.
	{
		echo "FAIL $name ($f failed)"
		sed 's/^/    /' "$left"
		{ grep '^not ok ' "$tap"; grep -E '(^|: )(FAIL|not ok)[ -]' "$log"; } | head -20 | sed 's/^/    /'
	} >>"$recap"
}

# --- What a test leaves behind ---
# After each test (binary or script, either lane) the processes and network
# namespaces it left are named ("FAIL - left behind: ..."), stopped or
# removed, so that the next test starts clean, and count as one failed
# check of that test.
#
# Processes.  Each test runs with XDP_PACER_TEST_ID=$run_id/<lane><n> in
# its environment.  $run_id is this run's own, "r<pid>-<start time>" (no
# other run has it, nor a later one that gets this PID), under the token of
# the test this run.sh runs in, if any (integ_runner.sh's).  A process is
# the test's when the XDP_PACER_TEST_ID in its /proc/PID/environ is the
# token or begins with "token/" (tests/lib.sh extends it for the script's
# own processes, a run.sh inside a test for its tests): children, daemons
# that setsid or double-fork, captures all keep the environment they were
# started with.  The runner itself carries no token of its own tests.
#
# Namespaces.  A name says nothing reliable about who made it (most carry
# the PID of the script that did, which may be a helper the test ran and
# is gone), and comparing `ip netns list` before and after a test would
# blame it for what the other lane, or another run on this machine, made
# meanwhile.  So the test's `ip` says what it made: the tests run with
# $run_dir/bin first in PATH, where `ip` is the real one
# ($XDP_PACER_REAL_IP), except that a successful `ip netns add|attach NAME`
# also writes "NAME INODE" (the new namespace's nsfs inode) to the file in
# XDP_PACER_NETNS_LOG, which is the test's own.  A namespace the test left
# is a line of its file still in /run/netns with that inode: whatever the
# other lane or other runs made is in no line of it, and a name that
# another test makes again later has another inode.  The suite makes every
# namespace with `ip netns add` through PATH (lib.sh, the scripts,
# bench.py); one made another way (an absolute path to ip, `unshare
# --net=FILE`) would not be seen.
run_id="${XDP_PACER_TEST_ID:+$XDP_PACER_TEST_ID/}r$$-${EPOCHREALTIME//[!0-9]/}"
run_dir=$(mktemp -d)
ntest=0
# Inside a test of another run.sh: the real ip, not that runner's wrapper.
: "${XDP_PACER_REAL_IP:=$(command -v ip)}"
export XDP_PACER_REAL_IP
if [ -n "$XDP_PACER_REAL_IP" ]; then
	mkdir "$run_dir/bin"
	cat >"$run_dir/bin/ip" <<'WRAPPER'
#!/bin/sh
# tests/run.sh's ip: the real one; `ip [OPTIONS] netns add|attach NAME ...`
# that succeeds also writes "NAME INODE" to $XDP_PACER_NETNS_LOG.
[ -n "$XDP_PACER_NETNS_LOG" ] || exec "$XDP_PACER_REAL_IP" "$@"
case " $* " in *" net "* | *" netn "* | *" netns "*) ;; *) exec "$XDP_PACER_REAL_IP" "$@" ;; esac
state=opt name=
for a; do
	case $state in
	opt) case $a in
		-n | -netns | -b | -batch | -rc | -rcvbuf | -l | -loops | -f | -family) state=arg ;;
		-*) ;;
		net | netn | netns) state=cmd ;;
		*) break ;;
		esac ;;
	arg) state=opt ;;
	cmd) case $a in a | ad | add | at | att | atta | attac | attach) state=name ;; *) break ;; esac ;;
	name) name=$a; break ;;
	esac
done
[ -n "$name" ] || exec "$XDP_PACER_REAL_IP" "$@"
"$XDP_PACER_REAL_IP" "$@"
rc=$?
[ "$rc" -eq 0 ] && echo "$name $(stat -L -c %i "/run/netns/$name" 2>/dev/null)" >>"$XDP_PACER_NETNS_LOG"
exit "$rc"
WRAPPER
	chmod +x "$run_dir/bin/ip"
	export PATH="$run_dir/bin:$PATH"
fi

procs_of() { # token: the PIDs of the processes that carry it (or one under it)
	local f pid
	for f in $(grep -lszE "^XDP_PACER_TEST_ID=${1//./\\.}(/.*)?\$" /proc/[0-9]*/environ); do
		pid=${f#/proc/}; pid=${pid%/environ}
		[ "$pid" != $$ ] && [ "$pid" != "$BASHPID" ] && echo "$pid"
	done
}
stop_procs() { # token [rounds]: TERM what carries it, ROUNDS x 50 ms (1 s) to go, then KILL
	local pids i
	pids=$(procs_of "$1")
	[ -n "$pids" ] || return 0
	kill -TERM $pids 2>/dev/null; kill -CONT $pids 2>/dev/null
	for i in $(seq "${2:-20}"); do
		sleep 0.05
		pids=$(procs_of "$1")
		[ -n "$pids" ] || return 0
	done
	kill -KILL $pids 2>/dev/null
	for i in $(seq 20); do [ -n "$(procs_of "$1")" ] || break; sleep 0.05; done
}
remove_netns() { # name inode: the namespace, its pins and writer locks (as teardown_pair)
	"$XDP_PACER_REAL_IP" netns del "$1" 2>/dev/null
	rm -rf "/sys/fs/bpf/xdp-pacer/netns-$2" "/run/xdp-pacer/netns-$2."*.lock 2>/dev/null
}
# leftovers TOKEN NSLOG: names, stops and removes what the test of TOKEN
# left, a "FAIL - left behind: ..." line each; prints nothing when it left
# nothing (a few ms: one pass over /proc/*/environ).
leftovers() {
	local tok=$1 nslog=$2 pids pid cmd i name ino
	pids=$(procs_of "$tok")
	# One that the test signalled as it exited may still be on its way out:
	# a moment's grace, taken only when there is one.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$pids" ] || break
		sleep 0.05
		pids=$(procs_of "$tok")
	done
	for pid in $pids; do
		cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
		echo "FAIL - left behind: process $pid: ${cmd% }"
	done
	[ -n "$pids" ] && stop_procs "$tok"
	[ -s "$nslog" ] || return 0
	while read -r name ino; do
		[ -n "$ino" ] && [ "$(stat -L -c %i "/run/netns/$name" 2>/dev/null)" = "$ino" ] || continue
		echo "FAIL - left behind: network namespace $name"
		remove_netns "$name" "$ino"
	done < <(sort -u "$nslog")
}
next_test() { # lane letter: sets tok and nslog, the next test's token and namespace log
	ntest=$((ntest + 1))
	tok=$run_id/$1$ntest
	nslog=$run_dir/netns.$1$ntest
	: >"$nslog"
}

run_bin() { # name command...: Check binaries write their TAP log to $tap
	local name=$1 rc start=$SECONDS tok nslog; shift
	: >"$tap"
	next_test f
	XDP_PACER_TEST_ID=$tok XDP_PACER_NETNS_LOG=$nslog CK_TAP_LOG_FILE_NAME=$tap "$@" >"$log" 2>&1
	rc=$?
	leftovers "$tok" "$nslog" >"$run_dir/left"
	[ -n "${VERBOSE:-}" ] && cat "$log"
	tally "$name" "$rc" $((SECONDS - start)) "$run_dir/left"
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
# On the way out, interrupted too: the lane stops, what any test of this run
# still runs (the one in each lane, what one left) gets TERM and 3 s to
# clean up, then KILL, and the namespaces the tests made and left go.
on_exit() {
	local f name ino
	[ -n "$bg_pid" ] && kill "$bg_pid" 2>/dev/null
	stop_procs "$run_id" 60
	for f in "$run_dir"/netns.*; do
		[ -s "$f" ] || continue
		while read -r name ino; do
			[ -n "$ino" ] && [ "$(stat -L -c %i "/run/netns/$name" 2>/dev/null)" = "$ino" ] &&
				remove_netns "$name" "$ino"
		done <"$f"
	done
	rm -rf "$log" "$tap" "$recap" "$bg_dir" "$run_dir"
}
trap on_exit EXIT
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
			name=$(basename "$t")
			next_test b
			env -u CK_TAP_LOG_FILE_NAME XDP_PACER_TEST_ID="$tok" XDP_PACER_NETNS_LOG="$nslog" BUILD="$BUILD" \
				bash "$t" >"$bg_dir/$name.log" 2>&1 </dev/null
			rc=$?
			leftovers "$tok" "$nslog" >"$bg_dir/$name.left"
			echo "$rc $((SECONDS - start))" >"$bg_dir/$name.rc"
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
				tally "$name (background lane)" "$rc" "$secs" "$bg_dir/$name.left"
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
