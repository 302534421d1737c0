#!/usr/bin/env bash
# Integration: one XDP program swapped for another in place, atomically
# (user/cli/xdp_replace.c, the mechanism of a replacing load), on this
# machine's kernel: the program attached on its own, through libxdp (which
# has no dispatcher here) or by a bpf_link, in native and skb mode, on a
# veth pair in namespaces this test creates.  tests/tools/xdp_replace_check
# does it and prints ok/FAIL lines, counted here: replacements that must
# fail leave the interface as it was (the verifier's refusal, a program id
# not attached, another loader's swap just before ours); the replacement,
# with a thread reading the interface in a loop (never without a program)
# and frames sent from the peer meanwhile (the old and the new program
# judged each exactly once between them); the new program where the old
# was, in its mode; then detached.  The same in libxdp's dispatcher is
# tested on Debian's kernels under qemu (tests/qemu_guest.sh, replace_tests).
. "$(dirname "$0")/lib.sh"
trap teardown_pair EXIT

setup_pair xrp || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
attached() { rx ip link show "$IF_RX" | sed -n 's/.*prog\/xdp\(generic\)\{0,1\} id \([0-9]*\).*/\2/p'; }

# 3000 frames over about a second from one CPU, printing how many it sent.
frames="nsenter --net=/run/netns/$NS_TX taskset -c 0 $PWD/$BUILD/tests/tools/send_frames --iface $IF_TX --dst-mac $RX_MAC --src-base 10.214.0.1 --dst 10.214.9.9 --sources 10 --rounds 300 --round-gap 0.003"

replace_check() { # label args...: xdp_replace_check's lines, counted here
	local label=$1 out rc line
	shift
	out=$(rx "$BUILD/tests/tools/xdp_replace_check" --iface "$IF_RX" \
		--old "$BUILD/replace_count.bpf.o" --new "$BUILD/replace_count.bpf.o" \
		--refused "$BUILD/replace_refused.bpf.o" --expect single --traffic "$frames" "$@" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok   - "*) ok "$label: ${line#ok   - }" ;;
		"FAIL - "*) not_ok "$label: ${line#FAIL - }" ;;
		*) echo "    $line" ;; # what xdp_replace_program said when it refused
		esac
	done <<<"$out"
	[ "$rc" = 0 ] || grep -q '^FAIL ' <<<"$out" || not_ok "$label: xdp_replace_check exited $rc"
	check "$label: nothing left attached" test -z "$(attached)"
}

replace_check "native, through libxdp"
replace_check "skb, through libxdp" --skb
replace_check "native, by a bpf_link" --link
replace_check "skb, by a bpf_link" --link --skb
finish
