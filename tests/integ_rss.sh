#!/usr/bin/env bash
# Integration: the RSS verdict read through the ethtool ioctl on a veth pair
# (veth has no RSS hash: the error path must give its own accurate message),
# --placement auto's choice, and `gen --affinity source` feeding a per-CPU
# pacer: each source then reaches one CPU, so it passes once per interval
# globally, where spread traffic passes it once per CPU.
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xpq 2 || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth

out=$(rx "$CLI" load "$IF_RX" 2>&1)
check "load with the default placement exits 0" test $? -eq 0
echo "$out" | sed 's/^/    /'
check "auto picks shared on veth and says why" \
	grep -q "placement shared (--placement auto): $IF_RX reports no RSS hash (ETHTOOL_GRXFH: Operation not supported) and 2 RX queues" <<<"$out"
check "... and that shared is exact whichever CPU receives" grep -q "shared placement is exact whichever CPU receives" <<<"$out"
check "... and which placement costs less for its 2 receiving CPUs (one per RX queue)" \
	grep -Eq "(; by cost: shared is cheaper: |and exactness comes before cost: per-CPU would be cheaper here \()the 2 receiving CPUs' copies \(2 x 4.0 MiB" <<<"$out"
check "... never giving per-CPU's lower cost as a reason for shared" \
	bash -c '! grep -q "placement shared .*by cost: per-CPU is cheaper" <<<"$1"' _ "$out"
st=$(rx "$CLI" status "$IF_RX")
check "status shows the shared sketch" grep -q "rows layout, shared" <<<"$st"
check "status shows the RSS verdict" grep -q "rss: per-CPU placement is not exact here: $IF_RX reports no RSS hash" <<<"$st"
rx "$CLI" unload "$IF_RX" >/dev/null

out=$(rx "$CLI" load "$IF_RX" --placement percpu 2>&1)
check "explicit --placement percpu still loads" test $? -eq 0
check "... warns that it may admit a source once per CPU" \
	grep -q "placement percpu (as asked): .*may admit a source up to once per CPU" <<<"$out"
check "... and status shows percpu" grep -q "rows layout, percpu" <<<"$(rx "$CLI" status "$IF_RX")"
out=$(rx "$CLI" set "$IF_RX" --prefix6 48 2>&1)
check "set of a key width on a per-CPU pacer repeats the verdict" \
	grep -q "note: this pacer is per-CPU, and per-CPU placement is not exact here: $IF_RX reports no RSS hash" <<<"$out"
out=$(rx "$CLI" set "$IF_RX" --interval 500ms 2>&1)
check "... other settings do not" bash -c "! grep -q note <<<'$out'"
rx "$CLI" unload "$IF_RX" >/dev/null
rx "$CLI" load "$IF_RX" --placement shared >/dev/null
out=$(rx "$CLI" set "$IF_RX" --prefix6 48 2>&1)
check "... nor on a shared pacer" bash -c "! grep -q note <<<'$out'"
rx "$CLI" unload "$IF_RX" >/dev/null

out=$(rx "$CLI" load "$IF_RX" --mode skb --placement auto 2>&1)
check "skb mode gets its own verdict" grep -q "placement shared (--placement auto): skb mode: generic XDP" <<<"$out"
rx "$CLI" unload "$IF_RX" >/dev/null
err=$(rx "$CLI" load "$IF_RX" --placement sometimes 2>&1)
check "bad --placement: exit 2 naming the value" bash -c "[ $? -eq 2 ] && grep -q \"'sometimes'.*auto, percpu or shared\" <<<\"$err\""
check "... and leaves nothing attached" bash -c "! ip -n $NS_RX link show $IF_RX | grep -q xdp"
err=$(tx "$CLI" gen "$IF_TX" --affinity sideways 2>&1)
check "gen: bad --affinity: exit 2 naming the value" bash -c "[ $? -eq 2 ] && grep -q \"'sideways'\" <<<\"$err\""

if [ "$(nproc)" -lt 2 ]; then
	echo "SKIP: the affinity checks need two CPUs"
	finish
	exit $?
fi

# seen per CPU, from the pinned per-CPU counters
seen_per_cpu() {
	bpftool -j map dump pinned "$(pins_of "$NS_RX" "$IF_RX")/stats" | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]["values"]
def seen(v):
    v = v["value"]
    return v["c"][0] if isinstance(v, dict) else int.from_bytes(bytes(int(b, 16) for b in v[:8]), "little")
print(" ".join(str(seen(v)) for v in sorted(d, key=lambda v: v["cpu"])[:2]))'
}

# Zipf(1) over 1000 sources, 100000 frames per thread, well inside the 10 s interval.
zipf_run() { # extra gen args...
	rx "$CLI" load "$IF_RX" --placement percpu --interval 10s >/dev/null || return 1
	tx "$CLI" gen "$IF_TX" --dist zipf --sources 1000 --zipf 1 --threads 2 --count 200000 \
		--src-base 10.214.0.0 --json "$@" >/dev/null || return 1
	passed=$(stat_of passed)
	split=$(seen_per_cpu)
	rx "$CLI" unload "$IF_RX" >/dev/null
}

zipf_run --affinity source
check "affine: each CPU received exactly its thread's 100000 frames (veth: receive CPU = sending CPU; saw $split)" \
	test "$split" = "100000 100000"
check "affine: per-CPU pacer passes each source at most once (passed $passed <= 1000)" test "$passed" -le 1000
check "affine: ... and most of the 1000 sources did pass (passed $passed >= 900)" test "$passed" -ge 900
zipf_run
check "spread: each CPU received its thread's 100000 frames (saw $split)" test "$split" = "100000 100000"
check "spread: sources reached both CPUs and passed on each (passed $passed > 1500)" test "$passed" -gt 1500
zipf_run --affinity source --family 6 --src-base fd00:214:: --dst fd00:214::1
check "affine IPv6 (one /64 per source): passed $passed <= 1000" test "$passed" -le 1000
zipf_run --family 6 --src-base fd00:214:: --dst fd00:214::1
check "spread IPv6: passed $passed > 1500" test "$passed" -gt 1500

finish
