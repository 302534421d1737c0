# The chain-cost benchmark's guest side (busybox sh; scripts/bench-chain.sh
# boots it under qemu through scripts/qemu-boot.sh): the limiter's cost per
# packet by BPF_PROG_TEST_RUN (`bpftool prog run ... repeat`), loaded by
# the CLI twice with the same options, on two veth pairs: alone on v1
# (LIBXDP_SKIP_DISPATCHER=1: a plain XDP program, run itself) and inside
# libxdp's dispatcher on v3 (the dispatcher run, which calls the limiter).
# The two are run alternately, round by round, so the host's load falls on
# both alike.  One IPv4 frame of one source: after the first run every run
# is the drop path; the limiter's counter of frames seen checks that every
# run reached it.  Prints the two programs' sizes ("xlated ..."), then
# "cost alone|dispatcher ROUND NS" lines, then "chain-cost-done".
#   chain-cost-guest.sh ROUNDS REPEAT
IP=${IP:-/sbin/ip}
rounds=${1:-5}
repeat=${2:-200000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "chain-cost: $*"; exit 1; }
# No IPv6 on the pairs: the kernel's own router solicitations would reach the limiters.
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
command -v bpftool >/dev/null || fail "no bpftool in the guest"
for p in "v0 v1" "v2 v3"; do
	# shellcheck disable=SC2086 # two words: the pair
	set -- $p
	$IP link add "$1" type veth peer name "$2" && $IP link set "$1" up && $IP link set "$2" up ||
		fail "cannot create veth $1/$2"
done
# 02:02:.. <- 04:04:.., IPv4 UDP 10.1.2.3:1000 -> 10.9.9.9:2000, 6 bytes (as scripts/bench-testrun.sh).
printf '\002\002\002\002\002\002\004\004\004\004\004\004\010\000\105\000\000\042\000\000\000\000\100\021\000\000\012\001\002\003\012\011\011\011\003\350\007\320\000\016\000\000xxxxxx' >"$tmp/frame"
json_num() { # ifname key: the key's first number in status --json
	xdp-pacer status "$1" --json | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}
seen_of() { xdp-pacer stats "$1" --json | sed -n 's/.*"seen":\([0-9]*\).*/\1/p'; }
LIBXDP_SKIP_DISPATCHER=1 xdp-pacer load v1 >"$tmp/load1.out" 2>&1 || fail "load alone: $(cat "$tmp/load1.out")"
xdp-pacer load v3 >"$tmp/load3.out" 2>&1 || fail "load in the dispatcher: $(cat "$tmp/load3.out")"
alone=$(json_num v1 prog_id)
disp=$(json_num v3 dispatcher_id)
[ -n "$alone" ] && [ -z "$(json_num v1 dispatcher_id)" ] || fail "v1 is not a lone program: $(xdp-pacer status v1 --json)"
[ -n "$disp" ] || fail "v3 is not in a dispatcher: $(xdp-pacer status v3 --json)"
# The dispatcher's own size: with one program in it, what each packet
# runs of it is at most these instructions and the call into the limiter.
echo "xlated dispatcher $(bpftool prog dump xlated id "$disp" | grep -c '^ *[0-9]*:') insns, limiter $(bpftool prog dump xlated id "$alone" | grep -c '^ *[0-9]*:') insns"
r=1
while [ "$r" -le "$rounds" ]; do
	for how in alone dispatcher; do
		if [ "$how" = alone ]; then id=$alone if=v1; else id=$disp if=v3; fi
		before=$(seen_of $if)
		ns=$(bpftool prog run id "$id" data_in "$tmp/frame" repeat "$repeat" |
			sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p')
		[ "$(($(seen_of $if) - before))" -ge "$repeat" ] ||
			fail "$how: the limiter saw $(($(seen_of $if) - before)) of $repeat runs"
		echo "cost $how $r $ns"
	done
	r=$((r + 1))
done
xdp-pacer unload v1 >/dev/null && xdp-pacer unload v3 >/dev/null || fail "unload failed"
echo chain-cost-done
