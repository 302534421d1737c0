#!/usr/bin/env bash
# Integration: the dense table through the CLI on a veth pair in namespaces
# this test creates (load at a line count that is not a power of two,
# status, query, stats, set, IPv4 and IPv6 keys, unload, per placement and
# mode), ten million sources' 30 MB loading, its sweep running on a live
# pacer, and the refusals: a sweep that cannot keep pace, --rate N/T, the
# sketch's options.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xdn || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

# 100 000 entries: 4167 lines of 24 (100 008 entries)
table_rounds dense 100000 "100008 entries in 4167 lines" 215

# The sweep on a live pacer: --tick 1ms is 2^19 ns (524 us), the interval 59
# ticks.  A source back every 0.11 s and the time a send takes (about 130
# ms, 100-165 ms in all) finds its entry 192 to 315 ticks old: 8-bit ticks
# read that as fresh ("future", or under the threshold once wrapped), so it
# is admitted every time only because the sweep cleared the entry (aged 64
# ticks or more) in between.
rx "$CLI" load "$IF_RX" --backend dense --placement shared --width 1000 --interval 30ms --tick 1ms >/dev/null
check "load a 42-line dense table at a tick of 2^19 ns" \
	grep -q "tick 524.288 us" <<<"$(rx "$CLI" status "$IF_RX")"
send 10.215.60.1 1 >/dev/null
for round in 1 2 3; do
	sleep 0.11
	send 10.215.60.1 1 >/dev/null
done
sleep 0.1
check "a source back every ~130 ms (256 ticks) admitted every time: the sweep cleared its entry" \
	test "$(stat_of passed)" = 4
rx "$CLI" unload "$IF_RX" >/dev/null

# Ten million sources' size loads at the default interval, shared.
out=$(rx "$CLI" load "$IF_RX" --backend dense --placement shared --width 11250000 2>&1)
check "load --width 11250000: 468750 lines, 28.6 MiB" grep -q "dense: 11250000 entries in 468750 lines, on full: drop, shared (28.6 MiB)" <<<"$out"
rx "$CLI" unload "$IF_RX" >/dev/null

err=$(rx "$CLI" load "$IF_RX" --backend dense --placement shared --width 11250000 --interval 10ms 2>&1)
check "a size whose sweep cannot keep pace is refused (exit 2)" test $? -eq 2
check "... in one line naming the lines, the pace and the way out" bash -c \
	"[ \$(grep -c . <<<\"\$1\") = 1 ] && grep -q 'a dense table of 468750 lines needs a sweep of 29297 lines a ms to visit all within 64 ticks.*--backend table' <<<\"\$1\"" _ "$err"
# The edge docs/operating.md quotes: the default tick of an interval above
# 47 x 2^18 ns = 12.32 ms is 2^19 ns, whose 64 ticks the sweep keeps pace with.
rx "$CLI" load "$IF_RX" --backend dense --placement shared --width 11250000 --interval 12320us >/dev/null 2>&1
check "ten million sources' size at a 12.320 ms interval is refused (exit 2)" test $? -eq 2
rx "$CLI" load "$IF_RX" --backend dense --placement shared --width 11250000 --interval 12321us >/dev/null 2>&1
check "... and loads at 12.321 ms" test $? -eq 0
rx "$CLI" unload "$IF_RX" >/dev/null 2>&1
rx "$CLI" load "$IF_RX" --backend dense --rate 5/1s >/dev/null 2>&1
check "--rate 5/1s on the dense table is refused (exit 2: 8-bit ages)" test $? -eq 2
rx "$CLI" load "$IF_RX" --backend dense --rows 2 >/dev/null 2>&1
check "--rows with --backend dense is a usage error (exit 2)" test $? -eq 2
for w in 0 47 402653185 abc 1e6; do
	err=$(rx "$CLI" load "$IF_RX" --backend dense --width "$w" 2>&1)
	check "--width $w on the dense table is refused (exit 2)" test $? -eq 2
	check "... in one line naming --width $w" bash -c \
		'[ "$(grep -c . <<<"$1")" = 1 ] && grep -qF -e "'"'"'$2'"'"'" -e "--width $2:" <<<"$1"' _ "$err" "$w"
done
# Per-CPU: every copy's lines count; on two CPUs or more 20 ms is too short
# for ten million sources' size (one copy alone loads above 12.32 ms).
if [ "$(nproc --all)" -ge 2 ]; then
	rx "$CLI" load "$IF_RX" --backend dense --placement percpu --width 11250000 --interval 20ms >/dev/null 2>&1
	check "per-CPU copies count toward the sweep's pace (exit 2)" test $? -eq 2
fi
check "failed loads leave no pins" test ! -e "$(pins_of "$NS_RX" "$IF_RX")"
check "failed loads leave nothing attached" bash -c "! ip -n '$NS_RX' link show '$IF_RX' | grep -q prog/xdp"
finish
