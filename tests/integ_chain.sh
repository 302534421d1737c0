#!/usr/bin/env bash
# Integration: the limiter beside other XDP programs on this machine's
# kernel.  A program attached on its own (by `ip link`, or by xdp-filter
# where libxdp cannot build its dispatcher, as on 6.18 with libxdp 1.3.1)
# makes load refuse, naming it and what to do, and leaves it attached with
# nothing pinned; a second limiter is refused; --priority and its config
# key are checked; status says where the limiter runs (text and --json).
# Where libxdp's dispatcher does work here, load joins xdp-filter in it and
# unload leaves xdp-filter attached.  The chain's traffic, in both orders,
# is tested on Debian's kernels under qemu (tests/qemu_guest.sh).
# run.sh: background (no timing of its own; runs beside the rest)
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d)
cleanup() {
	stop_background
	rx xdp-filter unload "$IF_RX" >/dev/null 2>&1
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

setup_pair xch || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
PINS=$(pins_of "$NS_RX" "$IF_RX")
attached() { rx ip link show "$IF_RX" | sed -n 's/.*prog\/xdp id \([0-9]*\) name \([^ ]*\).*/\1 \2/p'; }

# --- a program attached by ip link ---
rx ip link set dev "$IF_RX" xdpgeneric obj "$BUILD/bench_pass.bpf.o" sec xdp
before=$(attached)
out=$(rx "$CLI" load "$IF_RX" --mode skb 2>&1)
rc=$?
check "load beside a program ip link attached: refused (exit 1)" test "$rc" = 1
check "... naming it, why, and what to do" grep -q "has XDP program id ${before% *} 'bench_pass' attached on its own, not through libxdp's dispatcher.*ip link set dev $IF_RX xdp off" <<<"$out"
check "... in one line" test "$(grep -c . <<<"$out")" = 1
check "... leaving it attached" test "$(attached)" = "$before"
check "... and pinning nothing" test ! -e "$PINS"
rx ip link set dev "$IF_RX" xdpgeneric off

# --- xdp-filter (xdp-tools), through libxdp ---
if ! command -v xdp-filter >/dev/null; then
	not_ok "xdp-filter is not installed (scripts/deps.sh installs xdp-tools)"
else
	grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
	rx xdp-filter load "$IF_RX" >"$WORK/filt.out" 2>&1 || not_ok "xdp-filter load: $(tail -1 "$WORK/filt.out")"
	before=$(attached)
	out=$(rx "$CLI" load "$IF_RX" 2>&1)
	rc=$?
	if [ "${before#* }" = xdp_dispatcher ]; then
		check "load joins xdp-filter in libxdp's dispatcher (exit 0)" test "$rc" = 0
		check "... and says where it runs" grep -q "chain: program 2 of 2 in libxdp's dispatcher" <<<"$out"
		out=$(rx "$CLI" unload "$IF_RX" 2>&1)
		check "unload leaves xdp-filter attached" grep -q "still attached to $IF_RX in libxdp's dispatcher: xdpfilt_alw_all" <<<"$out"
	else
		echo "    libxdp attached xdp-filter on its own here (${before#* }): no dispatcher on $(uname -r)"
		check "load beside xdp-filter attached on its own: refused (exit 1)" test "$rc" = 1
		check "... naming it and the cause" grep -q "has XDP program id ${before% *} 'xdpfilt_alw_all' attached on its own, not through libxdp's dispatcher (attached by 'ip link', or by a libxdp loader that fell back to a single program because libxdp cannot build its dispatcher on this kernel)" <<<"$out"
		check "... leaving xdp-filter attached" test "$(attached)" = "$before"
		check "... and pinning nothing" test ! -e "$PINS"
	fi
	rx xdp-filter unload "$IF_RX" >/dev/null 2>&1 || rx ip link set dev "$IF_RX" xdp off
fi

# --- alone: status says so; a second limiter is refused ---
out=$(rx "$CLI" load "$IF_RX" --priority 7 2>&1)
check "load --priority 7 on a free interface (exit 0)" test $? = 0
id=$(rx "$CLI" status "$IF_RX" --json | sed -n 's/.*"prog_id":\([0-9]*\).*/\1/p')
js=$(rx "$CLI" status "$IF_RX" --json)
if grep -q "libxdp dispatcher" <<<"$out"; then
	check "status --json: in a dispatcher, at priority 7" grep -q '"attach":"dispatcher","dispatcher_id":[0-9]*,"priority":7,"chain_actions":\["XDP_PASS"\]' <<<"$js"
else
	check "status --json: attached alone, no chain" grep -q "\"ifname\":\"$IF_RX\",\"ifindex\":[0-9]*,\"prog_id\":$id,.*\"attach\":\"single\",\"chain\":\[\]" <<<"$js"
	check "status: attached on its own" grep -q "chain: attached on its own (no libxdp dispatcher)" <<<"$(rx "$CLI" status "$IF_RX")"
fi
check "status --json without IFNAME lists it" grep -q "\"ifname\":\"$IF_RX\"" <<<"$(rx "$CLI" status --json)"
out=$(rx "$CLI" load "$IF_RX" 2>&1)
rc=$?
check "a second limiter on the interface: refused (exit 1)" test "$rc" = 1
check "... naming the one there" grep -q "$IF_RX already has xdp-pacer attached (program id $id.*); one limiter per interface: 'xdp-pacer load $IF_RX --replace ...' puts a new one in its place, keeping its state, or run 'xdp-pacer unload $IF_RX' first" <<<"$out"
check "... which stays" test "$(attached)" = "$id xdp_pacer"
rx "$CLI" unload "$IF_RX" >/dev/null

# --- the option and its config key ---
out=$(rx "$CLI" load "$IF_RX" --priority high 2>&1)
check "--priority high: usage error (exit 2)" test $? = 2
check "... naming the value" grep -q "'high'.*--priority" <<<"$out"
printf 'interval = 1s\npriority = -3\n' >"$WORK/bad.conf"
out=$(rx "$CLI" load "$IF_RX" --config "$WORK/bad.conf" 2>&1)
check "priority = -3 in a config file: refused (exit 2)" test $? = 2
check "... naming the file and line" grep -q "bad.conf:2" <<<"$out"
check "... and nothing attached" test -z "$(attached)"
finish
