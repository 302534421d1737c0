#!/usr/bin/env bash
# Integration: `xdp-pacer top` on a veth during a full-speed spoofed flood
# (`gen --dist heavy`): 20 heavy sources, each far above its limit, inside
# a flood of random sources.  The 20 must be the top 20, each count within
# 10 % of the generator's own per-source count.  Also aggregation, the
# text table, --class, the sampling lock and that sampling is put back.
. "$(dirname "$0")/lib.sh"
cleanup() {
	stop_background
	rm -rf "$WORK"
	teardown_pair
}
WORK=$(mktemp -d /tmp/xpt-top.XXXXXX)
trap cleanup EXIT

setup_pair xpt || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
rx "$CLI" load "$IF_RX" --placement shared >/dev/null
check "pacer loaded" test $? -eq 0


# top in the background until SIGINT (--once prints the period so far); waits for its sampling.
start_top() { # out-file, top options...
	reader_start "$1" top --once --interval 120s "${@:2}"
}
stop_top() {
	sleep 0.3 # the last records through the ring
	reader_stop INT
}

# The check: rows vs the generator's counts.  by: seen (truth: sent) or dropped (sent minus
# what passed: at most one per interval per source, a few over the run).
check_rows() { # top-json gen-json by
	python3 - "$1" "$2" "$3" <<'EOF'
import ipaddress, json, sys
top = json.load(open(sys.argv[1]))
gen = json.load(open(sys.argv[2]))
by = sys.argv[3]
base = int(ipaddress.ip_address(gen["heavy_first"]))
truth = {f"{ipaddress.ip_address(base + i)}/32": n for i, n in enumerate(gen["heavy_sent"])}
rows = top["rows"]
assert len(rows) == 20, f"{len(rows)} rows"
flood = gen["flood_sent"]
assert flood >= 2000000, f"flood of {flood} packets only"
worst = 0
for r in rows:
    t = truth.get(r["source"])
    assert t is not None, f"{r['source']} (count {r['count']}) is not a heavy source"
    if by == "dropped":
        t -= 5  # passed: one per 1 s interval, over a run of a few seconds
    rel = abs(float(r["count"]) - t) / t
    worst = max(worst, rel)
    assert rel <= 0.10, f"{r['source']}: {r['count']} +- {r['error']} against {t}: {rel:.1%}"
print(f"20 of 20 heavy; worst {worst:.2%} off; {flood} flood packets at {gen['pps'] / 1e6:.2f} Mpps; "
      f"sampling 1/{top['sample_one_in']}, {top['samples_seen']} samples, {top['samples_lost']} lost")
EOF
}

# --- heavy sources in a spoofed flood: 3.5M frames, 40 % from 20 sources (70 000 each), 2.1M random ---
GEN=(--dist heavy --heavy 20 --heavy-share 40 --count 3500000 --src-base 10.200.0.0 --json)
for by in dropped seen; do
	start_top "$WORK/top-$by.json" --by "$by" --json --sample-packets 1/16
	check "top --by $by switched packet sampling on (1/16)" test "$(sampling)" = "sources off, packets 1/16"
	tx "$CLI" gen "$IF_TX" "${GEN[@]}" >"$WORK/gen-$by.json"
	check "gen --dist heavy ran" test $? -eq 0
	stop_top
	check "top --by $by --once exits 0 on SIGINT" test $? -eq 0
	out=$(check_rows "$WORK/top-$by.json" "$WORK/gen-$by.json" "$by" 2>&1)
	check "top --by $by: the 20 heavy sources are the top 20, each within 10 % ($out)" test $? -eq 0
	check "sampling put back after top --by $by" test "$(sampling)" = off
done

# --- aggregation and the text table ---
start_top "$WORK/top.txt" --prefix4 16 -n 3 --sample-packets 1/1
tx "$CLI" gen "$IF_TX" --dist heavy --heavy 20 --heavy-share 50 --count 100000 --src-base 10.200.0.0 >/dev/null
stop_top
check "text: a header with the sampling" grep -q "top 3 by dropped over .* s; sampling 1/1: " "$WORK/top.txt"
check "text: the column heads" grep -q "^RANK *SOURCE *CLASS *DROPPED *+- *PER SECOND" "$WORK/top.txt"
check "--prefix4 16: the heavy sources as one /16 first" grep -q "^ *1 10.200.0.0/16 " "$WORK/top.txt"
check "text: the bound on unlisted sources" grep -qE "^unlisted sources: (at most [0-9]+ each|none: all [0-9]+ sources? of the [0-9]+ dropped samples)" "$WORK/top.txt"
n=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /\// {n++} END {print n+0}' "$WORK/top.txt")
check "-n 3: at most 3 rows ($n)" test "$n" -le 3 -a "$n" -ge 1

# --- the footer with counters to spare: it counts sources and samples apart, both right ---
# 5 sources x 30 frames, every one sampled: the rows are every source, their counts every sample.
start_top "$WORK/few.txt" --by seen --sample-packets 1/1 -n 50
send 10.201.0.1 5 --per-source 30 >/dev/null
stop_top
out=$(python3 - "$WORK/few.txt" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
head = re.search(r"sampling 1/1: (\d+) samples", text)
rows = re.findall(r"^ *\d+ (\S+/\d+) +\S+ +(\d+) ", text, re.M)
foot = re.search(r"^unlisted sources: none: all (\d+) sources? of the (\d+) seen samples (?:is|are) counted exactly \((\d+) of 4096 counters used\)$", text, re.M)
assert head and foot, text
samples, sources = int(head.group(1)), len(rows)
assert sum(1 for r in rows if r[0].startswith("10.201.0.")) == 5, rows
assert int(foot.group(1)) == sources == int(foot.group(3)), (foot.group(0), sources)
assert int(foot.group(2)) == samples == sum(int(r[1]) for r in rows), (foot.group(0), samples, rows)
print(foot.group(0))
EOF
)
check "text footer: every source and every sample counted, named apart ($out)" test $? -eq 0

# --- periods: --once ends by itself; without it, a line per period until SIGTERM ---
out=$(rx timeout 10 "$CLI" top "$IF_RX" --once --interval 300ms --json)
check "--once --interval 300ms: one JSON line, then exit 0" \
	bash -c "test $? -eq 0 && test \$(wc -l <<<'$out') = 1 && grep -q '\"seconds\":0.3' <<<'$out'"
nsenter --net="/run/netns/$NS_RX" "$CLI" top "$IF_RX" --json --interval 200ms >"$WORK/periods.json" 2>&1 &
READER_PID=$!
sleep 1.1
reader_stop TERM
rc=$?
n=$(grep -c '"rows":' "$WORK/periods.json")
check "a JSON line per 200 ms period until SIGTERM, exit 0 ($n lines)" test "$rc" -eq 0 -a "$n" -ge 3 -a "$n" -le 6
check "sampling put back after SIGTERM" test "$(sampling)" = off

# --- one reader of the samples at a time ---
start_top "$WORK/held.json" --json
out=$(rx "$CLI" events "$IF_RX" --duration 1s 2>&1)
check "events is refused while top reads the samples (exit 1)" test $? -eq 1
check "... and the refusal names top" grep -q "already being read by 'xdp-pacer top' (pid $READER_PID)" <<<"$out"
out=$(rx "$CLI" top "$IF_RX" --once 2>&1)
check "a second top is refused too (exit 1)" test $? -eq 1
stop_top
check "sampling put back after the refusals" test "$(sampling)" = off

# --- options ---
out=$(rx "$CLI" top "$IF_RX" --class nosuch --once 2>&1)
check "--class of a class the pacer lacks: exit 1" test $? -eq 1
check "... naming it" grep -q "no class 'nosuch' on $IF_RX" <<<"$out"
rx "$CLI" top "$IF_RX" --sample-packets off >/dev/null 2>&1
check "--sample-packets off is refused (exit 2)" test $? -eq 2
rx "$CLI" top "$IF_RX" --by bogus >/dev/null 2>&1
check "--by bogus is refused (exit 2)" test $? -eq 2
rx "$CLI" top "$IF_RX" --prefix4 33 >/dev/null 2>&1
check "--prefix4 33 is refused (exit 2)" test $? -eq 2
rx "$CLI" top nosuchif0 --once >/dev/null 2>&1
check "top on a missing interface: exit 1" test $? -eq 1
check "sampling still off" test "$(sampling)" = off

# --- a traffic class: --class keeps its packets, rows name it ---
rx "$CLI" set "$IF_RX" --class 'other: udp dport 53 interval 1s' --class 'flood9: udp dport 9 interval 1s' >/dev/null
check "two classes set live" test $? -eq 0
start_top "$WORK/class.json" --class flood9 --json --sample-packets 1/1 -n 5
tx "$CLI" gen "$IF_TX" --dist heavy --heavy 5 --heavy-share 50 --count 50000 --src-base 10.200.0.0 >/dev/null
stop_top
out=$(python3 - "$WORK/class.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
assert t["class"] == "flood9", t
assert len(t["rows"]) == 5 and all(r["class"] == "flood9" for r in t["rows"]), t["rows"]
assert all(r["source"].startswith("10.200.0.") for r in t["rows"]), t["rows"]
assert t["samples_seen"] >= 49000, t["samples_seen"]
print(f"{t['samples_seen']} samples, top {t['rows'][0]['source']} {t['rows'][0]['count']}")
EOF
)
check "--class flood9: its packets, each row names the class ($out)" test $? -eq 0
start_top "$WORK/other.json" --class other --json --sample-packets 1/1
tx "$CLI" gen "$IF_TX" --dist heavy --heavy 5 --heavy-share 50 --count 20000 --src-base 10.200.0.0 >/dev/null
stop_top
check "--class other: none of flood9's packets" grep -q '"samples_seen":0,.*"rows":\[\]' "$WORK/other.json"

rx "$CLI" unload "$IF_RX" >/dev/null
finish
