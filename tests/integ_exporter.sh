#!/usr/bin/env bash
# Integration: the exporter against hostile and careless use, in namespaces
# this test creates: 1 100 slow clients (a partial request, one header line
# every 2 s) while /metrics must still answer within 1 s; for 30 s, crowds
# over many loopback addresses (127.2.0.0/16 and up) far beyond the 256
# connection slots while every scrape from 127.0.0.1 answers within 1 s and
# the exporter's memory and descriptors stay bounded; an oversized
# header; a burst of malformed requests (a few log lines, not one each);
# --listen's port parsed strictly and port 0 reported; SIGHUP and SIGUSR1
# harmless, SIGINT/SIGTERM a clean stop; a non-root user told that it lacks
# the permission, not that nothing is attached.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpe-exporter.XXXXXX)
SLOW="$BUILD/tests/tools/slow_clients"
trap exporter_cleanup EXIT

setup_pair xpe || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
rx "$CLI" load "$IF_RX" --interval 250ms >/dev/null
check "pacer loaded" test $? -eq 0

# start_exporter ADDR:PORT [runner]: in the receiver's namespace; waits until it says where it serves.
start_exporter() {
	: >"$WORK/exp.out"
	: >"$WORK/exp.err"
	nsenter --net="/run/netns/$NS_RX" ${2:-} "$CLI" exporter --listen "$1" >"$WORK/exp.out" 2>"$WORK/exp.err" &
	EXP_PID=$!
	for _ in $(seq 50); do grep -q serving "$WORK/exp.out" && return 0; sleep 0.1; done
	return 1
}
# scrape_within SECONDS URL: a 200 with samples inside the time limit.
scrape_within() {
	local code
	code=$(rx curl -s -m "$1" -o "$WORK/scrape" -w '%{http_code}' "$2")
	[ "$code" = 200 ] && grep -q "^xdp_pacer_frames_total{ifname=\"$IF_RX\"}" "$WORK/scrape"
}

# --- --listen: the port asked for, or a usage error naming it ---
for bad in 127.0.0.1:70000 127.0.0.1:65536 127.0.0.1:-1 "127.0.0.1: 80" 127.0.0.1:+80 127.0.0.1: 127.0.0.1:80x; do
	rx timeout 5 "$CLI" exporter --listen "$bad" >/dev/null 2>"$WORK/err"
	rc=$?
	check "--listen '$bad' is a usage error (exit 2) naming the port" \
		bash -c "test $rc -eq 2 && grep -qF -- \"port '${bad#127.0.0.1:}'\" '$WORK/err'"
done
rx timeout 5 "$CLI" exporter --listen 300.0.0.1:9477 >/dev/null 2>"$WORK/err"
check "--listen with a bad address is a usage error naming it" \
	bash -c "test $? -eq 2 && grep -q \"address '300.0.0.1'\" '$WORK/err'"
start_exporter 127.0.0.1:0
check "--listen 127.0.0.1:0 starts" test $? -eq 0
port=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics|\1|p' "$WORK/exp.out")
check "... and says which port it took (${port:-none}), not 0" test -n "$port" -a "${port:-0}" != 0
check "... where /metrics answers" scrape_within 2 "http://127.0.0.1:$port/metrics"
stop_exporter TERM

PORT=9479
start_exporter "127.0.0.1:$PORT"
check "exporter on 127.0.0.1:$PORT" test $? -eq 0
grep -q "serving http://127.0.0.1:$PORT/metrics" "$WORK/exp.out"
check "... says the port it was given" test $? -eq 0
URL="http://127.0.0.1:$PORT/metrics"

# --- signals: SIGHUP and SIGUSR1 leave it serving ---
for s in HUP USR1; do
	kill -"$s" "$EXP_PID"
	sleep 0.3
	check "SIG$s: still running" kill -0 "$EXP_PID"
	check "SIG$s: still answering" scrape_within 2 "$URL"
	check "SIG$s: says it has nothing to reload" grep -q "SIG$s: nothing to reload" "$WORK/exp.out"
done

stop_exporter TERM
check "SIGTERM: exit 0" test $? -eq 0
check "SIGTERM: says it stopped" grep -q "stopped by SIGTERM" "$WORK/exp.out"

# --- an oversized request header is refused, and the server goes on ---
start_exporter "127.0.0.1:$PORT"
big=$(head -c 40000 /dev/zero | tr '\0' a)
code=$(rx curl -s -m 3 -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$URL")
check "a 40 KB request header is refused with 431 or 413 (got $code)" \
	bash -c "test '$code' = 431 -o '$code' = 413"
check "... and /metrics still answers" scrape_within 2 "$URL"

# --- malformed requests: answered, a few log lines, not one per request ---
answered=$(rx "$SLOW" garbage 127.0.0.1 "$PORT" 54)
check "54 malformed requests are all answered ($answered)" test "$answered" = "answered 54"
lines=$(wc -l <"$WORK/exp.err")
check "... with at most 2 lines on stderr, not one each (got $lines)" test "$lines" -le 2

# --- 1 100 slow clients from 127.0.0.2: /metrics from 127.0.0.1 answers within 1 s ---
rx "$SLOW" slow 127.0.0.1 "$PORT" 127.0.0.2 1100 2 9 >"$WORK/slow.out" &
SLOW_PID=$!
for _ in $(seq 100); do grep -q "opened after" "$WORK/slow.out" && break; sleep 0.1; done
fast=0
for i in 1 2 3 4 5; do
	scrape_within 1 "$URL" && fast=$((fast + 1))
	sleep 0.8
done
check "under 1100 slow clients /metrics answered within 1 s $fast times of 5" test "$fast" -eq 5
wait "$SLOW_PID"
read -r _ opened _ refused _ closed _ still <<<"$(tail -1 "$WORK/slow.out")"
check "the slow clients got connections (opened $opened, refused $refused)" test "${opened:-0}" -gt 0
check "... and none was still open after 9 s (deadline 5 s; still open: ${still:-?})" test "${still:-1}" -eq 0
check "the exporter is still running" kill -0 "$EXP_PID"

# --- for 30 s, crowds over many addresses: the scraper from its own is always served ---
# Three crowds at once, each alone beyond the 256 slots: 1 100 slow clients
# over 200 addresses (5-6 each, under the per-address cap of 8), 1 100 over
# 1 100 addresses (one each), both reconnecting the moment they are cut, and
# 20 000 idle connection attempts per second over 1 000 addresses.  At once
# rather than one after another: eviction looks at a connection's age and
# state, never its address, so each crowd alone is a lighter case of the
# mix, and the test takes 30 s, not 90.  Each crowd's own count shows it was
# at the door throughout (cut by the server again and again).  The crowds
# run at nice 10: real attackers are other machines and do not take the
# exporter's CPU; on this shared test machine they would, and a starved
# exporter falls behind in accepting whoever it is (the kernel's accept
# queue is first come, first served), which is not what is tested here.
exp_fds() { find "/proc/$EXP_PID/fd" -mindepth 1 2>/dev/null | wc -l; }
exp_rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$EXP_PID/status"; }
rx "$CLI" stats "$IF_RX" --json >"$WORK/limiter.before"
rx "$CLI" status "$IF_RX" >"$WORK/status.before"
rss_start=$(exp_rss_kb)
CROWD_S=32
rx nice -n 10 "$SLOW" slow 127.0.0.1 "$PORT" 127.2.0.1+200 1100 2 "$CROWD_S" reconnect >"$WORK/crowd200.out" &
CROWD_PIDS=$!
rx nice -n 10 "$SLOW" slow 127.0.0.1 "$PORT" 127.3.0.1+1100 1100 2 "$CROWD_S" reconnect >"$WORK/crowd1100.out" &
CROWD_PIDS="$CROWD_PIDS $!"
rx nice -n 10 "$SLOW" flood 127.0.0.1 "$PORT" 127.4.0.1+1000 20000 "$CROWD_S" >"$WORK/flood.out" &
CROWD_PIDS="$CROWD_PIDS $!"
for _ in $(seq 100); do
	grep -q "opened after" "$WORK/crowd200.out" && grep -q "opened after" "$WORK/crowd1100.out" && break
	sleep 0.1
done
tries=0 fast=0 slowest=0 fds_max=0 rss_max=0 late=
end=$((SECONDS + 30))
while [ "$SECONDS" -lt "$end" ]; do
	tries=$((tries + 1))
	got=$(rx curl -s -m 1 -o "$WORK/scrape" -w '%{http_code} %{time_total}' "$URL")
	if [ "${got%% *}" = 200 ] && grep -q "^xdp_pacer_frames_total{ifname=\"$IF_RX\"}" "$WORK/scrape"; then
		fast=$((fast + 1))
	else
		late="$late [try $tries: $got]"
	fi
	slowest=$(awk -v a="${got##* }" -v m="$slowest" 'BEGIN { print (a > m) ? a : m }')
	n=$(exp_fds); [ "$n" -gt "$fds_max" ] && fds_max=$n
	n=$(exp_rss_kb); [ "${n:-0}" -gt "$rss_max" ] && rss_max=$n
	sleep 0.2
done
check "for 30 s under the crowds, /metrics answered within 1 s $fast times of $tries (slowest ${slowest} s)${late}" \
	test "$fast" -eq "$tries" -a "$tries" -ge 20
wait $CROWD_PIDS
for crowd in crowd200 crowd1100; do
	read -r _ opened _ _ _ closed _ _ <<<"$(tail -1 "$WORK/$crowd.out")"
	check "$crowd: the slow clients were at the door throughout (opened ${opened:-?}, cut by the server ${closed:-?})" \
		test "${closed:-0}" -gt 1100
done
read -r _ attempts _ _ _ rate <<<"$(tail -1 "$WORK/flood.out")"
check "the flood made its attempts (${attempts:-?} in ${CROWD_S} s, ${rate:-?})" test "${attempts:-0}" -gt 0
# 256 slots, 64 more for evicted connections not yet closed, and the process' own.
check "the exporter's descriptors stayed bounded (at most $fds_max, limit 340)" test "$fds_max" -le 340
# A leak of 20 bytes per connection over the crowds' million-odd connections would show.
check "the exporter's memory stayed bounded (RSS ${rss_start} KiB at the start, at most ${rss_max} KiB)" \
	test "$rss_max" -le $((rss_start + 16384))
kill -USR1 "$EXP_PID"
for _ in $(seq 20); do grep -q "evicted" "$WORK/exp.out" && break; sleep 0.1; done
evicted=$(sed -n 's/.*, \([0-9]*\) evicted at 256 open.*/\1/p' "$WORK/exp.out" | tail -1)
check "SIGUSR1 says how many connections were evicted (${evicted:-none})" test "${evicted:-0}" -gt 0
rx "$CLI" stats "$IF_RX" --json >"$WORK/limiter.after"
rx "$CLI" status "$IF_RX" >"$WORK/status.after"
check "the limiter was not touched: its counters and status are as before" \
	bash -c "cmp -s '$WORK/limiter.before' '$WORK/limiter.after' && cmp -s '$WORK/status.before' '$WORK/status.after'"
check "the exporter is still running" kill -0 "$EXP_PID"
stop_exporter INT
check "SIGINT: exit 0" test $? -eq 0
check "SIGINT: says it stopped" grep -q "stopped by SIGINT" "$WORK/exp.out"

# --- a user without BPF permissions is told so ---
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
rx $NOBODY "$CLI" status >"$WORK/st.out" 2>"$WORK/st.err"
rc=$?
check "status as nobody fails (exit 1, got $rc)" test "$rc" -eq 1
check "... naming the permission problem" grep -q "needs root" "$WORK/st.err"
check "... and not saying that nothing is attached" bash -c "! grep -q 'not attached' '$WORK/st.out'"
rx $NOBODY "$CLI" status "$IF_RX" >/dev/null 2>"$WORK/st.err"
check "status IFNAME as nobody fails (exit 1) naming the permission problem" \
	bash -c "test $? -eq 1 && grep -q 'not permitted' '$WORK/st.err'"
start_exporter "127.0.0.1:$PORT" "$NOBODY"
check "the exporter starts as nobody" test $? -eq 0
code=$(rx curl -s -m 2 -o "$WORK/body" -w '%{http_code}' "$URL")
check "... and answers 500, not 200 without samples (got $code)" test "$code" = 500
check "... saying it lacks the permission" grep -q "needs root" "$WORK/body"
stop_exporter TERM
check "... and stops on SIGTERM with exit 0" test $? -eq 0
rx "$CLI" unload "$IF_RX" >/dev/null
finish
