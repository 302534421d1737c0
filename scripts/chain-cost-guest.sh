# The chain-cost benchmark's guest side (busybox sh; scripts/bench-chain.sh
# boots it under qemu through scripts/qemu-boot.sh): the limiter's cost per
# packet by BPF_PROG_TEST_RUN (`bpftool prog run ... repeat`), loaded by
# the CLI alone (LIBXDP_SKIP_DISPATCHER=1: a plain XDP program, run
# itself) and inside libxdp's dispatcher (the dispatcher run, which calls
# the limiter), alternately, round by round.  One IPv4 frame of one
# source: after the first run every run is the drop path.  Prints
# "cost alone|dispatcher ROUND NS" lines, then "chain-cost-done".
#   chain-cost-guest.sh ROUNDS REPEAT
IP=${IP:-/sbin/ip}
rounds=${1:-5}
repeat=${2:-200000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$IP link add v0 type veth peer name v1 || { echo "chain-cost: cannot create veth"; exit 1; }
$IP link set v0 up && $IP link set v1 up
command -v bpftool >/dev/null || { echo "chain-cost: no bpftool in the guest"; exit 1; }
# 02:02:.. <- 04:04:.., IPv4 UDP 10.1.2.3:1000 -> 10.9.9.9:2000, 6 bytes (as scripts/bench-testrun.sh).
printf '\002\002\002\002\002\002\004\004\004\004\004\004\010\000\105\000\000\042\000\000\000\000\100\021\000\000\012\001\002\003\012\011\011\011\003\350\007\320\000\016\000\000xxxxxx' >"$tmp/frame"
json_id() { # key: its first number in status --json
	xdp-pacer status v1 --json | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
}
run_ns() { # program id
	bpftool prog run id "$1" data_in "$tmp/frame" repeat "$repeat" |
		sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p'
}
r=1
while [ "$r" -le "$rounds" ]; do
	for how in alone dispatcher; do
		if [ "$how" = alone ]; then
			LIBXDP_SKIP_DISPATCHER=1 xdp-pacer load v1 >"$tmp/load.out" 2>&1
			key=prog_id
		else
			xdp-pacer load v1 >"$tmp/load.out" 2>&1
			key=dispatcher_id
		fi || { echo "chain-cost: load ($how) failed: $(cat "$tmp/load.out")"; exit 1; }
		id=$(json_id "$key")
		[ -n "$id" ] || { echo "chain-cost: no $key for $how: $(xdp-pacer status v1 --json)"; exit 1; }
		echo "cost $how $r $(run_ns "$id")"
		xdp-pacer unload v1 >/dev/null 2>&1 || { echo "chain-cost: unload failed"; exit 1; }
	done
	r=$((r + 1))
done
echo chain-cost-done
