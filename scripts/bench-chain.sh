#!/usr/bin/env bash
# The limiter's cost per packet inside libxdp's dispatcher beside its cost
# alone: BPF_PROG_TEST_RUN (bpftool prog run ... repeat) on Debian's own
# kernel booted under qemu (scripts/qemu-boot.sh; this machine's kernel
# cannot build libxdp's dispatcher), the two loaded by the CLI side by side
# on two veth pairs and run alternately, round by round
# (scripts/chain-cost-guest.sh).  Under TCG (no usable KVM)
# the nanoseconds are emulated, not native: the ratio is what carries over.
#   scripts/bench-chain.sh [--kernel 6.1|6.12] [--rounds N] [--repeat N]
# Prints each round, then a docs/benchmark.md row: the medians and their
# ratio, the median of the rounds' paired ratios with its quartiles, and the
# minima (alone / dispatcher).
set -euo pipefail
cd "$(dirname "$0")/.."
series=6.1 rounds=31 repeat=200000
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) series=${2:?--kernel needs 6.1 or 6.12}; shift 2 ;;
	--rounds) rounds=${2:?}; shift 2 ;;
	--repeat) repeat=${2:?}; shift 2 ;;
	*) echo "bench-chain: unknown option '$1'" >&2; exit 2 ;;
	esac
done
for v in "$rounds" "$repeat"; do
	case $v in '' | *[!0-9]* | 0*) echo "bench-chain: '$v' is not a positive count" >&2; exit 2 ;; esac
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
QEMU_TIMEOUT=${QEMU_TIMEOUT:-900} scripts/qemu-boot.sh "$series" scripts/chain-cost-guest.sh "$rounds" "$repeat" >"$log" 2>&1 || rc=$?
if [ "$rc" -eq 77 ]; then grep -m1 '^SKIP' "$log"; exit 77; fi
grep -q '^chain-cost-done' "$log" || { echo "bench-chain: the guest did not finish:" >&2; grep -v '^\[' "$log" | tail -5 >&2; exit 1; }
accel=$(grep -q 'booting under TCG' "$log" && echo "TCG (emulated: not native ns)" || echo KVM)
kernel=$(sed -n 's/.*guest: Linux \([^,]*\),.*/\1/p' "$log" | head -1)
grep -E '^(cost|xlated) ' "$log"
# Medians of each, the median of the rounds' paired ratios (the host's load
# falls on both runs of a round alike) with its quartiles, and the minima.
awk -v k="$kernel" -v a="$accel" -v rep="$repeat" '
	function sort(x, m,   i, j, t) {
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
	}
	function q(x, m, f,   i) { i = int(f * (m - 1) + 1.5); return x[i < 1 ? 1 : i > m ? m : i] }
	$1 == "cost" && $2 == "alone" { al[++na] = $4; pa[$3] = $4 }
	$1 == "cost" && $2 == "dispatcher" { di[++nd] = $4; pd[$3] = $4 }
	END {
		for (r in pa) if (r in pd) rt[++nr] = pd[r] / pa[r]
		sort(al, na); sort(di, nd); sort(rt, nr)
		printf "| Linux %s, %s | %d rounds x %d runs | %d ns | %d ns | %.3f | %.3f (%.3f-%.3f) | %d / %d ns |\n",
			k, a, nr, rep, q(al, na, 0.5), q(di, nd, 0.5), q(di, nd, 0.5) / q(al, na, 0.5),
			q(rt, nr, 0.5), q(rt, nr, 0.25), q(rt, nr, 0.75), al[1], di[1]
	}' "$log"
