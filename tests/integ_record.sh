#!/usr/bin/env bash
# Integration: record real traffic from a veth pair in namespaces this test
# creates, then analyse the recording.  Checks that recording restores the
# sampling setting (after --duration and after SIGTERM), that every packet
# of a 1/1 source sample is recorded and none lost, that the audit finds no
# false passes in shared placement and agrees with the datapath's counters,
# that truncated and foreign files are reported with their offset, and that
# a recording whose pacer is unloaded or whose interface is deleted stops,
# says so and keeps its records.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpr-record.XXXXXX)
REC_PID=
cleanup() {
	stop_background
	[ -n "$REC_PID" ] && kill "$REC_PID" 2>/dev/null
	mountpoint -q "$WORK/full" && umount "$WORK/full"
	teardown_pair
	[ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

setup_pair xpr || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
export DST=10.212.0.1

# A deliberately small shared sketch (2 rows x 1024 cells) so that collisions happen.
rx "$CLI" load "$IF_RX" --placement shared --interval 300ms --rows 2 --width 1024 >/dev/null
check "load (shared, 300 ms, 2 x 1024)" test $? -eq 0

rx "$CLI" set "$IF_RX" --sample-sources 1/4 >/dev/null
check "sampling set to 1/4 before recording" test "$(sampling)" = "sources 1/4, packets off"

# --- record with --duration while 400 sources send 8 rounds ---
REC=$WORK/rec.xpr
# Background recorders run under nsenter directly (not the rx function, a
# subshell when backgrounded) so that $! is the recorder itself.
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$REC" --sample-sources 1/1 --duration 4s >"$WORK/rec.out" 2>"$WORK/rec.err" &
REC_PID=$!
sleep 0.5
check "sampling is 1/1 while recording" test "$(sampling)" = "sources 1/1, packets off"
before=$(stat_of recorded)
sent=$(send 10.212.1.1 400 --rounds 8 --round-gap 0.12)
check "sender sent 3200 frames" test "$sent" = 3200
wait "$REC_PID"
rc=$?
REC_PID=
check "record --duration exits 0" test "$rc" -eq 0
sed 's/^/    /' "$WORK/rec.out" "$WORK/rec.err"
check "the recording is in place, no .tmp left" test -s "$REC" -a ! -e "$REC.tmp"
check "sampling restored to 1/4 afterwards" test "$(sampling)" = "sources 1/4, packets off"
recorded=$(( $(stat_of recorded) - before ))
check "record reports 3200 records written" grep -q ": 3200 records written" "$WORK/rec.out"
check "record reports 0 records lost" grep -q "; 0 records lost" "$WORK/rec.out"
check "datapath recorded 3200 records during the run" test "$recorded" = 3200

# --- analyze ---
rx "$CLI" analyze "$REC" --json --report "$WORK/report.html" >"$WORK/a.json" 2>"$WORK/a.err"
check "analyze --json exits 0" test $? -eq 0
cat "$WORK/a.err"
j() { python3 -c "import json,sys; d=json.load(open('$WORK/a.json')); print(eval(sys.argv[1]))" "$1"; }
check "analyze output is valid JSON" j 'd["audit"] is not None'
check "audit judged all 3200 packets" test "$(j 'd["audit"]["packets"]')" = 3200
check "audit: 400 sources" test "$(j 'd["audit"]["sources"]')" = 400
check "audit: 0 false passes in shared placement" test "$(j 'd["audit"]["false_passes"]')" = 0
check "audit: no estimate older than the truth" test "$(j 'd["audit"]["estimates_older_than_truth"]')" = 0
check "audit: passes + drops match the datapath's verdicts" \
	test "$(j 'd["audit"]["passes"] + d["audit"]["drops"]')" = 3200
check "audit: false drops = quantisation + collisions" \
	test "$(j 'd["audit"]["false_drops"] == d["audit"]["false_drops_quantisation"] + d["audit"]["false_drops_collision"]')" = True
check "header carries the geometry (2 rows, 1024 cells, shared, 300 ms)" \
	test "$(j '(d["limiter"]["rows"], d["limiter"]["width_cells"], d["limiter"]["placement"], d["limiter"]["interval_ns"])')" = "(2, 1024, 'shared', 300000000)"
check "recording complete, 0 records lost" test "$(j '(d["recording"]["complete"], d["recording"]["records_lost"])')" = "(True, 0)"
check "Table 1 ran on the 3200 items" test "$(j 'd["table1"]["items"]')" = 3200
check "sizing recommends a geometry" test "$(j 'd["sizing"]["recommended"] is not None')" = True
check "HTML report has inline SVG plots" test "$(grep -c '<svg' "$WORK/report.html")" -ge 3
rx "$CLI" analyze "$REC" >"$WORK/a.txt" 2>&1
check "text summary names the audit and the recommendation" \
	bash -c "grep -q 'false passes: 0' '$WORK/a.txt' && grep -q 'recommended: xdp-pacer load' '$WORK/a.txt'"
sed -n '/^Audit/,/^Recency/p' "$WORK/a.txt" | head -20 | sed 's/^/    /'

# --- a truncated copy is analysed up to its last whole record ---
size=$(stat -c %s "$REC")
head -c $((size - 7)) "$REC" >"$WORK/cut.xpr"
rx "$CLI" analyze "$WORK/cut.xpr" --json >"$WORK/cut.json" 2>"$WORK/cut.err"
check "truncated file: analyze still exits 0" test $? -eq 0
check "truncated file: the cut record and its offset are named" \
	grep -q "truncated last record at offset $((size - 40))" "$WORK/cut.err"
check "truncated file: the 3199 whole records are analysed" \
	test "$(python3 -c "import json; print(json.load(open('$WORK/cut.json'))['recording']['records'])")" = 3199

# --- foreign and empty files fail with a clear error ---
echo "not a recording" >"$WORK/foreign"
out=$(rx "$CLI" analyze "$WORK/foreign" 2>&1)
check "foreign file: exit 1" test $? -eq 1
check "foreign file: says what is wrong and where" grep -q "not an xdp-pacer recording at offset 0" <<<"$out"
head -c 100 "$REC" >"$WORK/short"
out=$(rx "$CLI" analyze "$WORK/short" 2>&1)
rc=$?
check "header cut short: exit 1" test "$rc" -eq 1
check "header cut short: the offset is named" grep -q "truncated header at offset 100" <<<"$out"

# --- SIGTERM ends a recording cleanly and restores sampling ---
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/term.xpr" --sample-sources 1/2 >"$WORK/term.out" 2>&1 &
REC_PID=$!
sleep 0.5
send 10.212.2.1 100 --rounds 2 --round-gap 0.35 >/dev/null
kill -TERM "$REC_PID"
wait "$REC_PID"
rc=$?
REC_PID=
check "record stopped by SIGTERM exits 0" test "$rc" -eq 0
check "SIGTERM: file complete and in place" test -s "$WORK/term.xpr" -a ! -e "$WORK/term.xpr.tmp"
check "SIGTERM: sampling restored to 1/4" test "$(sampling)" = "sources 1/4, packets off"
rx "$CLI" analyze "$WORK/term.xpr" --json >"$WORK/term.json"
check "1/2 source sample: about half of 100 sources recorded" \
	python3 -c "import json; d=json.load(open('$WORK/term.json')); n=d['audit']['sources']; assert 25 <= n <= 75, n"

# --- SIGKILL: the .tmp left behind is readable up to its last whole record ---
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/killed.xpr" --sample-sources 1/1 >/dev/null 2>&1 &
REC_PID=$!
sleep 0.5
send 10.212.4.1 100 --rounds 3 --round-gap 0.1 >/dev/null
sleep 1.5 # the recorder flushes to the file once a second
kill -KILL "$REC_PID"
wait "$REC_PID" 2>/dev/null
REC_PID=
check "SIGKILL: nothing under the final name" test ! -e "$WORK/killed.xpr"
check "SIGKILL: the .tmp file holds the data" test -s "$WORK/killed.xpr.tmp"
rx "$CLI" analyze "$WORK/killed.xpr.tmp" --json >"$WORK/killed.json" 2>"$WORK/killed.err"
check "SIGKILL: analyze reads the .tmp (exit 0)" test $? -eq 0
check "SIGKILL: analyze warns the recording is incomplete" grep -q "incomplete recording" "$WORK/killed.err"
check "SIGKILL: all 300 packets flushed before the kill are there" \
	test "$(python3 -c "import json; print(json.load(open('$WORK/killed.json'))['audit']['packets'])")" = 300
check "SIGKILL leaves sampling on, as documented" test "$(sampling)" = "sources 1/1, packets off"

# --- CSV with --count ---
rx "$CLI" set "$IF_RX" --sample-sources off >/dev/null
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/r.csv" --sample-sources 1/1 --csv --count 50 --duration 5s >/dev/null 2>&1 &
REC_PID=$!
sleep 0.5
send 10.212.3.1 200 >/dev/null
wait "$REC_PID"
rc=$?
REC_PID=
check "record --csv --count 50 exits 0" test "$rc" -eq 0
check "CSV has 50 data rows after its header" test "$(grep -vc '^#\|^index,' "$WORK/r.csv")" = 50
check "CSV header names the columns" grep -q '^index,ts_ns,t_rel_s,source,' "$WORK/r.csv"
check "sampling back off after the CSV recording" test "$(sampling)" = "off"

# --- a second recorder on the same interface is refused ---
nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/a1.xpr" --duration 2s >/dev/null 2>&1 &
REC_PID=$!
sleep 0.4
out=$(rx "$CLI" record "$IF_RX" -o "$WORK/a2.xpr" --duration 1s 2>&1)
rc=$?
check "a second recorder is refused while one runs (exit 1)" test "$rc" -eq 1
check "the refusal says why and who holds it" grep -q "already being read by .xdp-pacer record. (pid" <<<"$out"
wait "$REC_PID"
REC_PID=

# --- a full disk is named as such, in CSV as in the binary format ---
mkdir "$WORK/full"
if mount -t tmpfs -o size=16k tmpfs "$WORK/full"; then
	for fmt in csv binary; do
		extra=; [ $fmt = csv ] && extra=--csv
		rm -f "$WORK/full/"*
		nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/full/r.$fmt" --sample-sources 1/1 $extra --duration 3s >/dev/null 2>"$WORK/full-$fmt.err" &
		REC_PID=$!
		sleep 0.5
		send 10.212.6.1 400 --rounds 4 --round-gap 0.05 >/dev/null
		wait "$REC_PID"
		rc=$?
		REC_PID=
		check "full disk ($fmt): exit 1, 'No space left on device'" \
			bash -c "test $rc -eq 1 && grep -q 'No space left on device' '$WORK/full-$fmt.err'"
	done
	umount "$WORK/full"
else
	not_ok "cannot mount a small tmpfs for the full-disk check"
fi

# --- the pacer going away mid-recording: noticed, said, exit 1, the records kept ---
gone_recording() { # name: record for up to 5 s; the caller takes the pacer away
	nsenter --net="/run/netns/$NS_RX" "$CLI" record "$IF_RX" -o "$WORK/$1.xpr" --sample-sources 1/1 --duration 5s >"$WORK/$1.out" 2>"$WORK/$1.err" &
	REC_PID=$!
	sleep 0.5
	send 10.212.5.1 50 --rounds 2 --round-gap 0.2 >/dev/null
	sleep 1
}
gone_checks() { # name rc started what
	local name=$1 rc=$2 t0=$3 what=$4
	check "$what mid-recording: exit 1 within a second" test "$rc" -eq 1 -a $(($(date +%s%N) - t0)) -lt 1500000000
	check "$what: the recorder says the pacer went away" grep -q "the pacer on $IF_RX went away" "$WORK/$name.err"
	check "$what: the records made until then are kept in place" test -s "$WORK/$name.xpr" -a ! -e "$WORK/$name.xpr.tmp"
	check "$what: they cover the 100 packets sent, over less than the 5 s asked" \
		python3 -c "import json,subprocess,sys; d=json.loads(subprocess.run(['$CLI','analyze','$WORK/$name.xpr','--json'],capture_output=True,check=True).stdout); assert d['audit']['packets']==100 and d['recording']['duration_s'] < 3, (d['audit']['packets'], d['recording']['duration_s'])"
}
gone_recording unloaded
rx "$CLI" unload "$IF_RX" >/dev/null
check "unload" test $? -eq 0
t0=$(date +%s%N)
wait "$REC_PID"
rc=$?
REC_PID=
gone_checks unloaded "$rc" "$t0" "unload"

rx "$CLI" load "$IF_RX" --placement shared --interval 300ms >/dev/null
check "load again" test $? -eq 0
gone_recording deleted
rx ip link del "$IF_RX"
t0=$(date +%s%N)
wait "$REC_PID"
rc=$?
REC_PID=
gone_checks deleted "$rc" "$t0" "ip link del"
finish
