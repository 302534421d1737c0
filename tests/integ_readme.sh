#!/usr/bin/env bash
# Integration: the README's quick start runs as written.  The commands of
# the fenced code blocks under "## Quick start" in README.md are run in
# order on a veth in namespaces this test creates, with `sudo` dropped (the
# suite runs as root), `xdp-pacer` the built CLI and eth0 the veth; each must
# exit 0, and afterwards nothing may be left attached or pinned.  Each
# traffic class the README gives inline (`--class '...'`) loads as written.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
WORK=$(mktemp -d /tmp/xpi-readme.XXXXXX)
cleanup() {
	stop_background
	rx "$CLI" unload "$IF_RX" >/dev/null 2>&1
	teardown_pair
	rm -rf "$WORK"
}
trap cleanup EXIT

# The quick start's command lines: fenced blocks between "## Quick start"
# and the next "## " heading, comments and blank lines left out.
awk '/^## / { in_qs = ($0 == "## Quick start") }
     in_qs && /^```/ { fence = !fence; next }
     in_qs && fence && !/^[[:space:]]*(#|$)/' README.md >"$WORK/commands"
check "the quick start has commands ($(wc -l <"$WORK/commands"))" test "$(wc -l <"$WORK/commands")" -ge 4
check "... from load to unload" \
	bash -c "head -1 '$WORK/commands' | grep -q 'xdp-pacer load eth0' && tail -1 '$WORK/commands' | grep -q 'xdp-pacer unload eth0'"
bad=$(grep -vE '^(sudo )?xdp-pacer ' "$WORK/commands")
check "every command is an xdp-pacer command this test knows how to run (others: ${bad:-none})" test -z "$bad"

setup_pair xpr || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
n=0
while read -r line; do
	n=$((n + 1))
	line=${line#sudo }
	line=${line#xdp-pacer }
	read -r -a args <<<"${line//eth0/$IF_RX}"
	rx "$CLI" "${args[@]}" </dev/null >"$WORK/out.$n" 2>&1
	rc=$?
	check "quick start command $n exits 0: xdp-pacer $line" test $rc -eq 0
	[ $rc -eq 0 ] || cat "$WORK/out.$n"
	if [ $n -eq 1 ]; then
		# traffic between load and the rest, so status, stats and query see some
		send 203.0.113.7 1 >/dev/null
		send 10.214.9.1 50 >/dev/null
	fi
done <"$WORK/commands"
check "stats reported three times (--watch 1 --count 3)" \
	bash -c "cat '$WORK'/out.* | grep -c 'seen' | awk '{ exit !(\$1 >= 3) }'"
check "query answered for 203.0.113.7" bash -c "grep -lq '203.0.113.7' '$WORK'/out.*"
# Every traffic class the README gives on a command line (a code span holding
# --class '...', with or without "xdp-pacer load eth0" before it) loads as written.
python3 - README.md >"$WORK/classes" <<'EOF'
import re, shlex, sys
text = open(sys.argv[1], encoding="utf-8").read()
for span in re.findall(r"`([^`]*--class '[^`]*)`", text):
    words = shlex.split(" ".join(span.split()))
    if words[:1] == ["sudo"]:
        words = words[1:]
    if words[:3] == ["xdp-pacer", "load", "eth0"]:
        words = words[3:]
    print("\t".join(words))
EOF
check "the README gives traffic classes on command lines ($(wc -l <"$WORK/classes"))" test -s "$WORK/classes"
while IFS=$'\t' read -r -a args; do
	rx "$CLI" load "$IF_RX" "${args[@]}" </dev/null >"$WORK/class.out" 2>&1
	rc=$?
	check "the README's 'xdp-pacer load eth0 ${args[*]}' loads (exit $rc)" test $rc -eq 0
	[ $rc -eq 0 ] || cat "$WORK/class.out"
	rx "$CLI" unload "$IF_RX" >/dev/null 2>&1
done <"$WORK/classes"
check "after the quick start no XDP program is attached to the veth" \
	bash -c "! nsenter --net=/run/netns/$NS_RX ip link show $IF_RX | grep -q 'prog/xdp'"
check "... and its pins are gone" test ! -e "$(pins_of "$NS_RX" "$IF_RX")"
finish
