#!/usr/bin/env bash
# Integration: `xdp-pacer gen` (XDP live frames) feeding the pacer over a
# veth pair in namespaces this test creates; the pacer's counters are the
# receiver-side truth.  Also the model verb's arithmetic.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xpg || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
rx "$CLI" load "$IF_RX" --placement shared >/dev/null
check "pacer loaded" test $? -eq 0

gen() { tx "$CLI" gen "$IF_TX" --json "$@"; }
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['$2'])" "$1"; }

g=$(gen --dist uniform --sources 100 --count 100000)
check "gen uniform: reports 100000 sent" test "$(field "$g" sent)" = 100000
check "receiver saw exactly what was sent" test "$(stat_of seen)" = 100000
check "each of 100 sources passed once within the interval" test "$(stat_of passed)" = 100

g=$(gen --dist spoofed --count 50000 --family 6)
check "gen spoofed IPv6: 50000 sent" test "$(field "$g" sent)" = 50000
check "receiver saw 50000 IPv6 frames" test "$(stat_of ipv6)" = 50000
p=$(stat_of passed)
check "spoofed sources are new: nearly all passed (>= 99 % of 50000)" test $((p - 100)) -ge 49500

g=$(gen --dist zipf --sources 1000 --zipf 2 --count 20000 --src-base 10.230.0.0)
check "gen zipf: 20000 sent" test "$(field "$g" sent)" = 20000
p2=$(stat_of passed)
check "zipf over 1000 sources passes at most 1000" test $((p2 - p)) -le 1000
check "zipf skew: about 183 distinct expected in 20000 draws of s=2 (120..260)" test $((p2 - p)) -ge 120 -a $((p2 - p)) -le 260

# A second at 50 per 100 ms schedules 500; a generator starved by a busy
# machine still sends a good share of them.
g=$(gen --dist mix --good 50 --good-period 100ms --duration 1s --src-base 10.231.0.0)
good=$(field "$g" good_sent)
check "mix: well-behaved packets were interleaved ($good >= 200 in 1 s at 50 per 100 ms)" test "$good" -ge 200

# A fresh limiter, whose interval outlasts the run (a second at 100 000
# pps, longer where the sender is descheduled): each heavy source passes
# once however long the run takes.
rx "$CLI" unload "$IF_RX" >/dev/null
rx "$CLI" load "$IF_RX" --placement shared --interval 10s >/dev/null
p3=$(stat_of passed) s3=$(stat_of seen)
g=$(gen --dist heavy --heavy 4 --heavy-share 50 --count 100000 --pps 100000 --src-base 10.232.0.0)
out=$(python3 - "$g" <<'EOF'
import json, sys
g = json.loads(sys.argv[1])
h = g["heavy_sent"]
assert g["sent"] == 100000 and len(h) == 4 and sum(h) == g["good_sent"], g
assert g["flood_sent"] == 100000 - sum(h), g
assert 47000 <= sum(h) <= 53000, h                # Binomial(100000, 1/2): sd 158
assert all(11000 <= n <= 14000 for n in h), h    # a quarter each: sd 137
assert (g["heavy_first"], g["heavy_last"]) == ("10.232.0.0", "10.232.0.3"), g
print(f"{h} of {g['sent']}")
EOF
)
check "gen heavy: each heavy source's frames, summing to the heavy share ($out)" test $? -eq 0
p4=$(stat_of passed) s4=$(stat_of seen)
flood=$(field "$g" flood_sent)
# A loaded receiver may lose frames before XDP (veth's ring): the flood's
# share of what it saw is the flood's share of what was sent, and each of
# those passed (its source is new), as each heavy source's first.
# (Unloaded, the receiver saw all 100 000 and passed exactly flood + 4.)
seen=$((s4 - s3)) want=$(( (flood * (s4 - s3) + 50000) / 100000 + 4 ))
check "heavy: the receiver passed the flood and each heavy source once ($((p4 - p3)) passed of $seen seen; want $want +- 2 %)" \
	test $((p4 - p3)) -le $((flood + 4)) -a $((p4 - p3)) -ge $((want - flood / 50)) -a $((p4 - p3)) -le $((want + flood / 50))
tx "$CLI" gen "$IF_TX" --dist heavy --affinity source --count 10 >/dev/null 2>&1
check "gen heavy refuses --affinity source (exit 2)" test $? -eq 2

tx "$CLI" gen "$IF_TX" --dist bogus >/dev/null 2>&1
check "gen rejects an unknown distribution (exit 2)" test $? -eq 2
tx "$CLI" gen nosuchif0 --count 1 >/dev/null 2>&1
check "gen on a missing interface fails (exit 1)" test $? -eq 1

m=$("$CLI" model --sources 100000 --rows 8 --width 131072 --json)
check "model: rows formula (1-e^(-n/w))^d" python3 -c "
import json, math, sys
d = json.loads(sys.argv[1]); w = 131072 * 62 / 64
assert abs(d['false_drop'] - (1 - math.exp(-100000 / w)) ** 8) < 1e-9, d" "$m"
"$CLI" model --sources 100000 --target-false-drop 0.01 | grep -q "rows 8: width 131072"
check "model --target-false-drop finds the smallest width per row count" test $? -eq 0
m=$("$CLI" model --sources 100000 --target-false-drop 0.01 --json)
check "model --target-false-drop --json: one JSON object per row count, each meeting the target" python3 -c "
import json, sys
ds = [json.loads(l) for l in sys.argv[1].splitlines()]
assert len(ds) == 8 and all(d['false_drop'] <= 0.01 for d in ds), ds
assert {'rows': 8, 'width': 131072} == {k: ds[7][k] for k in ('rows', 'width')}, ds[7]" "$m"

rx "$CLI" unload "$IF_RX" >/dev/null
finish
