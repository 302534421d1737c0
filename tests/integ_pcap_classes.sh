#!/usr/bin/env bash
# Integration: `analyze --pcap` with traffic classes, on a capture this test
# writes (Ethernet frames of known sources, ports and times): every frame
# classified as the datapath classifies it (exempt and deny lists first,
# then the first class that fits), each pacing class's keys under its own
# limit, against an independent count of what each limit admits; the
# config file's classes and the command line's; mistakes named with their
# file and line, nothing analysed.
. "$(dirname "$0")/lib.sh"
WORK=$(mktemp -d /tmp/xpc-pclass.XXXXXX)
cleanup() { stop_background; [ -n "${KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

# The capture: 2 s of traffic.  Frames of a source are 100 ms apart; the
# limits (120 ms and 1 s, ticks of 2^25 ns) count as many admissions in
# whole ticks as in nanoseconds.
#   10.1.0.1-20   udp dport 53, every 100 ms         (class dns: 120 ms: 1 in 2)
#   10.2.0.1-10   udp dport 1000 and 1001, every 100 ms (class ports: 1 s, key src+dport)
#   10.3.0.1-5    tcp SYN to port 80, every 100 ms    (class syn: action drop)
#   10.4.0.1-5    udp dport 9, every 100 ms           (no class: passed)
#   192.0.2.1-3   udp dport 53                        (exempt)
#   203.0.113.1-2 udp dport 53                        (denied)
#   2001:db8::1-4 udp dport 53, every 100 ms          (class dns)
python3 - "$WORK/cap.pcap" <<'EOF'
import ipaddress, struct, sys
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def frame(src, dst, proto, sport, dport, flags=0):
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    l4 = (struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, flags, 1024, 0, 0) if proto == 6
          else struct.pack("!HHHH", sport, dport, 8 + 6, 0) + b"hello!")
    if s.version == 4:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0, 64, proto, 0, s.packed, d.packed)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        et = 0x0800
    else:
        ip = struct.pack("!IHBB16s16s", 6 << 28, len(l4), proto, 64, s.packed, d.packed)
        et = 0x86dd
    return b"\x02\0\0\0\0\x01" + b"\x02\0\0\0\0\x02" + struct.pack("!H", et) + ip + l4
pkts = []
def every(srcs, dst, proto, dport, flags=0, step=0.1, until=2.0):
    t = 0.0
    while t < until - 1e-9:
        for i, s in enumerate(srcs):
            pkts.append((1000.0 + t + i * 1e-4, frame(s, dst, proto, 40000, dport, flags)))
        t += step
every(["10.1.0.%d" % i for i in range(1, 21)], "10.9.0.1", 17, 53)
every(["10.2.0.%d" % i for i in range(1, 11)], "10.9.0.1", 17, 1000)
every(["10.2.0.%d" % i for i in range(1, 11)], "10.9.0.1", 17, 1001)
every(["10.3.0.%d" % i for i in range(1, 6)], "10.9.0.1", 6, 80, flags=0x02)
every(["10.4.0.%d" % i for i in range(1, 6)], "10.9.0.1", 17, 9)
every(["192.0.2.%d" % i for i in range(1, 4)], "10.9.0.1", 17, 53, step=0.5)
every(["203.0.113.%d" % i for i in range(1, 3)], "10.9.0.1", 17, 53, step=0.5)
every(["2001:db8::%d" % i for i in range(1, 5)], "2001:db8:ffff::1", 17, 53)
pkts.sort(key=lambda p: p[0])
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for t, fr in pkts:
        sec, usec = int(t), int(round((t - int(t)) * 1e6))
        f.write(struct.pack("<IIII", sec, usec, len(fr), len(fr)) + fr)
EOF
check "capture written" test -s "$WORK/cap.pcap"

cat >"$WORK/pacer.conf" <<'EOF'
interval = 1s
backend = table

[class dns]
match = udp dport 53
interval = 120ms

[class ports]
match = udp dport 1000-1010
interval = 1s
key = src+dport

[class syn]
match = tcp flags syn
action = drop

[exempt]
src = 192.0.2.0/24

[deny]
src = 203.0.113.0/24
EOF

"$CLI" analyze --pcap "$WORK/cap.pcap" --config "$WORK/pacer.conf" --json --report "$WORK/a.html" >"$WORK/a.json" 2>"$WORK/a.err"
check "analyze --pcap --config exits 0" test $? -eq 0
check "HTML: the capture per class" \
	bash -c "grep -q '<h2>Capture per class</h2>' '$WORK/a.html' && grep -q '<td>ports</td>' '$WORK/a.html'"
cat "$WORK/a.err"
j() { python3 -c "
import json, sys
d = json.load(open('$WORK/a.json'))
c = {x['name']: x for x in d.get('classes', [])}
print(eval(sys.argv[1]))" "$1"; }
check "the three classes in order" test "$(j '[x["name"] for x in d["classes"]]')" = "['dns', 'ports', 'syn']"
# 20 IPv4 sources x 20 frames, admitted at 0, 200, 400... ms: 10 of 20; the
# 4 IPv6 sources are one key (/64), admitted 10 times of its 80 frames.
check "dns: 480 frames of 21 keys, 210 admitted" \
	test "$(j '(c["dns"]["frames"], c["dns"]["audit"]["sources"], c["dns"]["admitted"], c["dns"]["dropped"])')" = "(480, 21, 210, 270)"
# 10 sources x 2 ports, 20 frames each: one per second per key: 2 of 20.
check "ports: 400 frames of 20 keys (source and port), 2 of each key's 20 admitted" \
	test "$(j '(c["ports"]["frames"], c["ports"]["audit"]["sources"], c["ports"]["admitted"], c["ports"]["dropped"])')" = "(400, 20, 40, 360)"
check "syn: action drop, 100 frames dropped" \
	test "$(j '(c["syn"]["action"], c["syn"]["frames"], c["syn"]["dropped"])')" = "('drop', 100, 100)"
check "exempt 12, denied 8, unclassified 100" \
	test "$(j '(d["capture"]["exempt"], d["capture"]["denied"], d["capture"]["unclassified"])')" = "(12, 8, 100)"
check "per class: keys per interval (dns peak 21, ports peak 20)" \
	test "$(j '(c["dns"]["sources_per_interval_peak"], c["ports"]["sources_per_interval_peak"])')" = "(21, 20)"
check "ports: keys told apart by port (the capture has them)" test "$(j 'c["ports"]["false_passes_checked"]')" = True

# The command line's classes over the file's, the text report.
"$CLI" analyze --pcap "$WORK/cap.pcap" --config "$WORK/pacer.conf" --class 'dns: udp dport 53 rate 4/1s' >"$WORK/b.txt" 2>&1
check "--class replaces the file's classes" \
	bash -c "grep -q '^  class dns: rate 4 per 1 s, key src, policy pace' '$WORK/b.txt' && ! grep -q '^  class ports' '$WORK/b.txt'"
check "text: the lists and the unmatched frames" \
	grep -q "exempt list: 12 frames passed; deny list: 8 frames dropped; no class matched: 600 frames passed" "$WORK/b.txt"
sed -n '/^Capture per class/,/^$/p' "$WORK/b.txt" | sed 's/^/    /'

# Only the command line; then mistakes, named, and nothing analysed.
"$CLI" analyze --pcap "$WORK/cap.pcap" --class 'web: udp dport 9 interval 250ms' --exempt 10.4.0.1 --json >"$WORK/c.json" 2>&1
check "--class and --exempt alone: 4 of 5 sources paced, 20 frames exempt" \
	python3 -c "import json; d=json.load(open('$WORK/c.json')); c=d['classes'][0]; assert (c['frames'], d['capture']['exempt']) == (80, 20), (c['frames'], d['capture']['exempt'])"
printf '[class dns]\nmatch = udp dport 53 bogus\ninterval = 1s\n' >"$WORK/bad.conf"
"$CLI" analyze --pcap "$WORK/cap.pcap" --config "$WORK/bad.conf" >"$WORK/bad.out" 2>&1
check "a bad match word: exit 2" test $? -eq 2
check "a bad match word: file, line and word named" \
	bash -c "grep -q '$WORK/bad.conf:2:.*bogus' '$WORK/bad.out'"
check "a bad match word: nothing analysed" bash -c "! grep -q '^Capture' '$WORK/bad.out'"
"$CLI" analyze "$WORK/cap.pcap" --class 'dns: udp dport 53 interval 1s' >"$WORK/nopcap.out" 2>&1
check "--class without --pcap: a usage error" test $? -eq 2
check "--class without --pcap: says why" grep -q "describe the pacer for --pcap" "$WORK/nopcap.out"

finish
