#!/usr/bin/env bash
# Integration: `analyze --pcap` on captures made by real tools while the
# generator runs on a veth pair in namespaces this test creates: tcpdump -w
# (classic pcap), dumpcap (pcapng), tcpdump -s 64 and -s 40 (snap length),
# tcpdump -i any (not Ethernet), dumpcap -i IF -i any (two link types in one
# pcapng), copies cut in the middle of a record, and a FIFO.
# The exact limiter's verdicts are checked against an independent Python
# implementation, and the keying against the generator's known sources.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpc-pcap.XXXXXX)
CAP_PIDS=()
cleanup() {
	local p
	stop_background
	for p in "${CAP_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	teardown_pair
	[ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
ORACLE="python3 $(dirname "$0")/tools/pcap_oracle.py"

setup_pair xpc || { echo "cannot create namespaces/veth"; exit 1; }
require_xdp_veth
# Native XDP on the receiver lets the generator's frames in; with a 1 ms
# interval it passes nearly all of them (a generator thread held up by the
# captures sends a burst, whose repeats it drops): the captures hold exactly
# what it passed.
rx "$CLI" load "$IF_RX" --interval 1ms --clock precise >/dev/null
check "pacer loaded (native, 1 ms, precise clock)" test $? -eq 0

capture() { # name command...: start a capture in the receiver's namespace, wait until it listens
	local name=$1; shift
	nsenter --net="/run/netns/$NS_RX" "$@" 2>"$WORK/cap-$name.err" &
	CAP_PIDS+=($!)
	for _ in $(seq 100); do grep -qsi "listening\|capturing" "$WORK/cap-$name.err" && return 0; sleep 0.05; done
	return 1
}
capture full tcpdump -i "$IF_RX" --immediate-mode -U -w "$WORK/full.pcap"
capture snap64 tcpdump -i "$IF_RX" --immediate-mode -U -s 64 -w "$WORK/snap64.pcap"
capture snap40 tcpdump -i "$IF_RX" --immediate-mode -U -s 40 -w "$WORK/snap40.pcap"
capture any tcpdump -i any --immediate-mode -U -c 20 -w "$WORK/any.pcap"
capture ng dumpcap -i "$IF_RX" -w "$WORK/full.pcapng"
# One pcapng with two interfaces of different link types (Ethernet and Linux cooked).
capture mixed dumpcap -i "$IF_RX" -i any -w "$WORK/mixed.pcapng"
capture anyng dumpcap -i any -c 20 -w "$WORK/any.pcapng"
check "captures started (tcpdump x4, dumpcap x3)" test "${#CAP_PIDS[@]}" -eq 7
sleep 0.3

tx "$CLI" gen "$IF_TX" --dist uniform --sources 500 --count 5000 --pps 10000 --dst-mac "$RX_MAC" >/dev/null
tx "$CLI" gen "$IF_TX" --dist uniform --family 6 --sources 50 --count 500 --pps 10000 --dst-mac "$RX_MAC" >/dev/null
sent=$(send 10.201.0.1 100 --payload 200)
check "generator and sender ran (100 frames of 242 bytes)" test "$sent" = 100
sleep 0.5
for p in "${CAP_PIDS[@]}"; do kill -INT "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
CAP_PIDS=()
passed=$(stat_of passed)
check "the pacer passed most of the 5600 frames ($passed)" test "$passed" -ge 5000
# A capture tool may lose frames under load (it says so): then it holds fewer than the pacer passed.
lost() { # tcpdump: "N packets dropped by kernel"; dumpcap: "received/dropped on interface 'X': R/D"
	sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p; s/.*received\/dropped on interface .*: [0-9]*\/\([0-9]*\) .*/\1/p' \
		"$WORK/cap-$1.err" | head -1
}
for c in full snap64 snap40 ng; do echo "    capture $c: $(lost "$c") frames dropped by the kernel"; done
want() { # capture: the frames it must hold
	echo $((passed - ${1:-0}))
}

an() { "$CLI" analyze --pcap "$@"; }
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

# --- classic pcap from tcpdump -w ---
an "$WORK/full.pcap" --interval 120ms --json --report "$WORK/full.html" >"$WORK/full.json" 2>"$WORK/full.err"
check "analyze --pcap (tcpdump -w) exits 0" test $? -eq 0
cat "$WORK/full.err"
F=$WORK/full.json
check "pcap: format pcap, Ethernet" test "$(j "$F" '(d["capture"]["format"], d["capture"]["linktype"])')" = "('pcap', 'EN10MB (1)')"
n_full=$(want "$(lost full)")
check "pcap: every frame the pacer passed and tcpdump kept ($n_full) is keyed, none malformed or non-IP" \
	test "$(j "$F" '(d["capture"]["ipv4"] + d["capture"]["ipv6"], d["capture"]["frames"], d["capture"]["malformed"], d["capture"]["nonip"])')" = "($n_full, $n_full, 0, 0)"
check "pcap: admitted + dropped = keyed frames" test "$(j "$F" 'd["capture"]["admitted"] + d["capture"]["dropped"]')" = "$n_full"
read -r tick thresh < <(j "$F" 'str(d["limiter"]["tick_ns"]) + " " + str(d["limiter"]["thresh_ticks"])')
read -r o_adm o_drop o_src < <($ORACLE "$WORK/full.pcap" "$tick" "$thresh" 32 64)
check "pcap: exact verdicts equal an independent implementation ($o_adm admitted, $o_drop dropped)" \
	test "$(j "$F" '(d["capture"]["admitted"], d["capture"]["dropped"])')" = "($o_adm, $o_drop)"
check "pcap: sources as the independent implementation keys them ($o_src)" \
	test "$(j "$F" 'd["recording"]["sources"]')" = "$o_src"
check "pcap: a 120 ms pace admits every source, and fewer than half the frames (50 ms gaps)" \
	test "$o_adm" -ge 650 -a "$o_adm" -lt $((passed / 2))
check "pcap: sources per interval reported" test "$(j "$F" 'd["capture"]["sources_per_interval"]["peak"] > 0')" = True
check "pcap: smallest geometry per layout (rows and blocked)" \
	test "$(j "$F" 'd["capture"]["recommended_rows_layout"] is not None and d["capture"]["recommended_blocked_layout"] is not None')" = True
check "pcap: Table 1 ran on all $n_full frames" test "$(j "$F" 'd["table1"]["items"]')" = "$n_full"
check "pcap: HTML report with the capture section and SVG plots" \
	bash -c "grep -q 'Capture (pcap' '$WORK/full.html' && test \$(grep -c '<svg' '$WORK/full.html') -ge 2"
an "$WORK/full.pcap" --interval 120ms >"$WORK/full.txt"
check "pcap: text report names the exact limiter and a recommendation" \
	bash -c "grep -q 'exact limiter' '$WORK/full.txt' && grep -q 'recommended: xdp-pacer load' '$WORK/full.txt'"

an "$WORK/full.pcap" --interval 120ms --prefix4 24 --prefix6 48 --json >"$WORK/p24.json"
read -r o_adm o_drop o_src < <($ORACLE "$WORK/full.pcap" "$tick" "$thresh" 24 48)
check "keyed as the datapath: /24 and /48 give $o_src sources (10.200.0-1, 10.201.0, fd00:200::/48)" \
	test "$(j "$WORK/p24.json" 'd["recording"]["sources"]')" = "$o_src" -a "$o_src" = 4
check "keyed /24 and /48: verdicts equal the independent implementation" \
	test "$(j "$WORK/p24.json" '(d["capture"]["admitted"], d["capture"]["dropped"])')" = "($o_adm, $o_drop)"

# --- pcapng from dumpcap ---
an "$WORK/full.pcapng" --interval 120ms --json >"$WORK/ng.json" 2>"$WORK/ng.err"
check "analyze --pcap (dumpcap pcapng) exits 0" test $? -eq 0
n_ng=$(want "$(lost ng)")
check "pcapng: format pcapng, every frame dumpcap kept ($n_ng) keyed, admitted + dropped = keyed" \
	test "$(j "$WORK/ng.json" '(d["capture"]["format"], d["capture"]["ipv4"] + d["capture"]["ipv6"], d["capture"]["admitted"] + d["capture"]["dropped"])')" = "('pcapng', $n_ng, $n_ng)"

if [ "$(lost ng)" = 0 ]; then
	check "pcapng (nothing lost): 650 sources, as sent (500 + 100 IPv4 /32, 50 IPv6 /64)" \
		test "$(j "$WORK/ng.json" 'd["recording"]["sources"]')" = 650
fi

# --- pcapng with an Ethernet and a Linux cooked interface ---
an "$WORK/mixed.pcapng" --interval 120ms --json >"$WORK/mixed.json" 2>"$WORK/mixed.err"
check "pcapng of two link types (dumpcap -i IF -i any): exits 0" test $? -eq 0
cat "$WORK/mixed.err"
check "... the Ethernet interface's frames keyed, the cooked ones skipped and counted" \
	test "$(j "$WORK/mixed.json" '(d["capture"]["linktype"], d["capture"]["ipv4"] + d["capture"]["ipv6"] == d["capture"]["frames"] > 1000, d["capture"]["skipped_linktype"] > 1000, d["capture"]["truncated"], d["capture"]["corruption"])')" = "('EN10MB (1)', True, True, False, None)"
check "... the warning names the link type skipped and how many frames" \
	grep -Eq "warning: .*mixed.pcapng: [0-9]+ frames skipped on interfaces of link type LINUX_SLL" "$WORK/mixed.err"
an "$WORK/any.pcapng" >/dev/null 2>"$WORK/err"
check "pcapng of -i any only: exit 1, no frame could be keyed, naming the link type" \
	bash -c "test $? -eq 1 && grep -q 'no frame could be keyed.*link type LINUX_SLL' '$WORK/err'"

# --- snap length ---
an "$WORK/snap64.pcap" --interval 120ms --json >"$WORK/s64.json"
S=$WORK/s64.json
read -r o_adm o_drop o_src < <($ORACLE "$WORK/snap64.pcap" "$tick" "$thresh" 32 64)
check "-s 64: frames longer than 64 bytes (the 242-byte ones, IPv6) are counted as cut by the snap length" \
	test "$(j "$S" 'd["capture"]["snap_cut"] >= 100 and d["capture"]["snap_cut"] <= 100 + d["capture"]["ipv6"]')" = True
check "-s 64: their headers fit: all keyed, none lost to the cut, verdicts as the independent implementation" \
	test "$(j "$S" '(d["capture"]["snap_unkeyed"], d["capture"]["ipv4"] + d["capture"]["ipv6"], d["capture"]["admitted"], d["capture"]["dropped"])')" = "(0, $(want "$(lost snap64)"), $o_adm, $o_drop)"
an "$WORK/snap40.pcap" --interval 120ms --json >"$WORK/s40.json" 2>"$WORK/s40.err"
check "-s 40: exits 0" test $? -eq 0
check "-s 40: the IPv6 frames, cut inside their header, are counted as not keyed, not as malformed" \
	test "$(j "$WORK/s40.json" '(d["capture"]["snap_unkeyed"] > 0, d["capture"]["ipv6"], d["capture"]["malformed"], d["capture"]["snap_unkeyed"] + d["capture"]["ipv4"])')" = "(True, 0, 0, $(want "$(lost snap40)"))"

# --- files cut mid-record ---
size=$(stat -c %s "$WORK/full.pcap")
head -c $((size - 7)) "$WORK/full.pcap" >"$WORK/cut.pcap"
an "$WORK/cut.pcap" --interval 120ms --json >"$WORK/cut.json" 2>"$WORK/cut.err"
check "pcap cut inside the last frame: exits 0 (the frames before it are analysed)" test $? -eq 0
check "... with a clear warning on stderr" grep -q "cut short (truncated dump file" "$WORK/cut.err"
cat "$WORK/cut.err"
check "... counted in the report: truncated, one frame fewer" \
	test "$(j "$WORK/cut.json" '(d["capture"]["truncated"], d["capture"]["frames"])')" = "(True, $(( $(j "$F" 'd["capture"]["frames"]') - 1 )))"
head -c $((size - 242 - 16 + 5)) "$WORK/full.pcap" >"$WORK/cuthdr.pcap"
an "$WORK/cuthdr.pcap" --interval 120ms >"$WORK/cuthdr.txt" 2>"$WORK/cuthdr.err"
check "pcap cut inside a record header: exits 0, says so" \
	bash -c "test $? -eq 0 && grep -q 'header bytes' '$WORK/cuthdr.err' && grep -q 'the capture is cut short' '$WORK/cuthdr.txt'"
size=$(stat -c %s "$WORK/full.pcapng")
head -c $((size / 2)) "$WORK/full.pcapng" >"$WORK/cut.pcapng"
an "$WORK/cut.pcapng" --interval 120ms --json >"$WORK/cutng.json" 2>"$WORK/cutng.err"
check "pcapng cut in half: exits 0 with a warning, counted as truncated" \
	bash -c "test $? -eq 0 && grep -q 'cut short' '$WORK/cutng.err' && test \"\$(python3 -c 'import json; print(json.load(open(\"$WORK/cutng.json\"))[\"capture\"][\"truncated\"])')\" = True"
head -c 10 "$WORK/full.pcap" >"$WORK/stub.pcap"
an "$WORK/stub.pcap" 2>"$WORK/err" >/dev/null
check "a capture cut inside its file header: exit 1 naming the file" \
	bash -c "test $? -eq 1 && grep -q 'stub.pcap: not a capture libpcap can read' '$WORK/err'"

# --- not Ethernet, not a capture, usage ---
an "$WORK/any.pcap" 2>"$WORK/err" >/dev/null
check "tcpdump -i any (Linux cooked): exit 1, names the link type" \
	bash -c "test $? -eq 1 && grep -q 'link type LINUX_SLL.* is not Ethernet' '$WORK/err'"
mkfifo "$WORK/fifo.pcap"
timeout 10 "$CLI" analyze --pcap "$WORK/fifo.pcap" 2>"$WORK/err" >/dev/null
check "a FIFO: exit 1 at once, not a regular file" \
	bash -c "test $? -eq 1 && grep -q 'fifo.pcap: not a regular file (a FIFO)' '$WORK/err'"
an /etc/hostname 2>"$WORK/err" >/dev/null
check "a text file: exit 1, not a capture" bash -c "test $? -eq 1 && grep -q 'not a capture libpcap can read' '$WORK/err'"
"$CLI" analyze "$WORK/full.pcap" --interval 1s 2>/dev/null >/dev/null
check "--interval without --pcap: usage error (exit 2)" test $? -eq 2
an "$WORK/full.pcap" --interval soon 2>/dev/null >/dev/null
check "--pcap with a bad --interval: usage error (exit 2)" test $? -eq 2
an "$WORK/full.pcap" --interval 100000s 2>"$WORK/err" >/dev/null
check "--pcap with an interval no tick can represent: usage error (exit 2) naming it" bash -c "test $? -eq 2 && grep -q \"100000s\" '$WORK/err'"

rx "$CLI" unload "$IF_RX" >/dev/null
finish
